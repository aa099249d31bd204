/*-------------------------------------------------------------------------
 *
 * fuzz_buffer.c
 *	  libFuzzer target: decoding packed preprocessor buffers
 *	  (dl_buffer_decode_x, float32 little-endian; dl_buffer_decode_y,
 *	  int16 little-endian).
 *
 * Input: byte 0 = n, byte 1 = row, byte 2 = k, byte 3 = mode, then the
 * data.  Mode bit 0 set: the x buffer is the next 4*n*row bytes and the y
 * buffer what follows (lengths usually right); clear: byte 4 splits the
 * rest (lengths usually wrong).  Mode bit 1 replaces n by a negative or
 * huge value to test the shape checks.  Every decoded value is compared
 * with a byte-wise reference; a refusal must be well formed and must be
 * the right one (length, NaN/infinity, shape).
 *
 * IDENTIFICATION
 *	  test/fuzz/fuzz_buffer.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "fuzz_util.h"
#include "madlib_dl/dl_buffer.h"

static int64_t
odd_n(uint8_t b)
{
	switch (b % 4)
	{
		case 0:
			return -1 - (int64_t) b;
		case 1:
			return INT64_MAX - b;
		case 2:
			return ((int64_t) 1 << 62) + b;
		default:
			return (int64_t) 1 << 40;
	}
}

/*
 * What a decoder must answer before looking at the values: DL_ERR_SHAPE
 * for a negative dimension, DL_ERR_LIMIT when n * width floats exceed
 * DL_ALLOC_MAX bytes, DL_ERR_SHAPE when len is not elem * n * width, else
 * DL_OK with *count values.
 */
static DlStatus
expected_shape(int64_t n, int64_t width, size_t len, size_t elem, size_t *count)
{
	unsigned __int128 c;

	*count = 0;
	if (n < 0 || width < 0)
		return DL_ERR_SHAPE;
	c = (unsigned __int128) n * (unsigned __int128) width;
	if (c * sizeof(float) > (unsigned __int128) DL_ALLOC_MAX)
		return DL_ERR_LIMIT;
	if ((unsigned __int128) len != c * elem)
		return DL_ERR_SHAPE;
	*count = (size_t) c;
	return DL_OK;
}

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) |
		((uint32_t) p[3] << 24);
}

static void
check_x(const uint8_t *buf, size_t len, int64_t n, int64_t row)
{
	size_t		count;
	DlStatus	want = expected_shape(n, row, len, 4, &count);
	float	   *out = malloc(count * sizeof(float) + 1);
	DlError		err;
	DlStatus	st;
	int64_t		bad = -1;

	FUZZ_CHECK(out != NULL, "out of memory");
	/* the length check before allocation agrees with the decoder, without reading buf */
	{
		size_t		c = 0;

		dl_error_clear(&err);
		st = dl_buffer_check_x(len, n, row, &c, &err);
		FUZZ_CHECK(st == (want == DL_OK ? DL_OK : want), "x check of {%lld,%lld} with %zu bytes gave %d, want %d",
				   (long long) n, (long long) row, len, (int) st, (int) want);
		FUZZ_CHECK(st != DL_OK || c == count, "x check counted %zu values, want %zu", c, count);
		if (st != DL_OK)
			fuzz_check_error(st, &err);
	}
	dl_error_clear(&err);
	st = dl_buffer_decode_x(out, buf, len, n, row, &err);
	if (want != DL_OK)
	{
		FUZZ_CHECK(st == want, "x shape {%lld,%lld} with %zu bytes gave %d, want %d",
				   (long long) n, (long long) row, len, (int) st, (int) want);
		fuzz_check_error(st, &err);
		free(out);
		return;
	}
	for (size_t i = 0; i < count && bad < 0; i++)
	{
		if ((le32(buf + 4 * i) & 0x7f800000u) == 0x7f800000u)
			bad = (int64_t) i;
	}
	if (bad >= 0)
	{
		char		where[64];

		FUZZ_CHECK(st == DL_ERR_DATA, "NaN at %lld gave %d", (long long) bad, (int) st);
		fuzz_check_error(st, &err);
		snprintf(where, sizeof(where), "row %lld, column %lld", (long long) (bad / row) + 1,
				 (long long) (bad % row) + 1);
		FUZZ_CHECK(strstr(err.msg, where) != NULL, "message \"%s\" lacks \"%s\"", err.msg, where);
	}
	else
	{
		FUZZ_CHECK(st == DL_OK, "valid x buffer refused: %s", err.msg);
		for (size_t i = 0; i < count; i++)
		{
			uint32_t	u = le32(buf + 4 * i);
			uint32_t	v;

			memcpy(&v, &out[i], 4);
			FUZZ_CHECK(u == v, "x value %zu decoded as %08x, want %08x", i, v, u);
		}
	}
	free(out);
}

static void
check_y(const uint8_t *buf, size_t len, int64_t n, int64_t k)
{
	size_t		count;
	DlStatus	want = expected_shape(n, k, len, 2, &count);
	float	   *out = malloc(count * sizeof(float) + 1);
	DlError		err;
	DlStatus	st;

	FUZZ_CHECK(out != NULL, "out of memory");
	/* a target of int16 values: the check agrees with decode_y (float32 targets aside) */
	{
		size_t		c = 0;
		size_t		c4;
		DlStatus	want4 = expected_shape(n, k, len, 4, &c4);

		dl_error_clear(&err);
		st = dl_buffer_check_target(len, n, k, &c, &err);
		if (want4 == DL_OK && c4 > 0)
			FUZZ_CHECK(st == DL_OK && c == c4, "float32 target {%lld,%lld} check gave %d",
					   (long long) n, (long long) k, (int) st);
		else
			FUZZ_CHECK(st == want && (st != DL_OK || c == count),
					   "y check of {%lld,%lld} with %zu bytes gave %d, want %d",
					   (long long) n, (long long) k, len, (int) st, (int) want);
		if (st != DL_OK)
			fuzz_check_error(st, &err);
	}
	dl_error_clear(&err);
	st = dl_buffer_decode_y(out, buf, len, n, k, &err);
	if (want != DL_OK)
	{
		FUZZ_CHECK(st == want, "y shape {%lld,%lld} with %zu bytes gave %d, want %d",
				   (long long) n, (long long) k, len, (int) st, (int) want);
		fuzz_check_error(st, &err);
		free(out);
		return;
	}
	FUZZ_CHECK(st == DL_OK, "valid y buffer refused: %s", err.msg);
	for (size_t i = 0; i < count; i++)
	{
		int16_t		v;
		uint16_t	u = (uint16_t) (buf[2 * i] | (buf[2 * i + 1] << 8));

		memcpy(&v, &u, 2);
		FUZZ_CHECK(out[i] == (float) v, "y value %zu decoded as %g, want %d", i, out[i], v);
	}
	free(out);
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t		n,
				row,
				k;
	uint8_t		mode;
	const uint8_t *rest;
	size_t		rlen,
				xlen;
	uint8_t    *xb,
			   *yb;

	if (size < 5)
		return 0;
	n = data[0] % 64;
	row = data[1] % 64;
	k = data[2] % 16;
	mode = data[3];
	rest = data + 5;
	rlen = size - 5;
	if (mode & 1)
		xlen = (size_t) (4 * n * row) < rlen ? (size_t) (4 * n * row) : rlen;
	else
		xlen = rlen == 0 ? 0 : data[4] % (rlen + 1);
	if (mode & 2)
		n = odd_n(data[4]);
	/* exact-size copies, so that any overread is caught by ASan */
	xb = malloc(xlen + 1);
	yb = malloc(rlen - xlen + 1);
	FUZZ_CHECK(xb != NULL && yb != NULL, "out of memory");
	memcpy(xb, rest, xlen);
	memcpy(yb, rest + xlen, rlen - xlen);
	check_x(xlen > 0 ? xb : NULL, xlen, n, row);
	check_y(rlen - xlen > 0 ? yb : NULL, rlen - xlen, n, k);
	free(xb);
	free(yb);
	return 0;
}
