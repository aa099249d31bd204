/*-------------------------------------------------------------------------
 *
 * buffer.c
 *	  Decode packed preprocessor buffers (float32 / int16, little-endian).
 *
 * The packed format is fixed little-endian so that a table dumped on one
 * host loads on another.  Values are assembled byte by byte, which
 * compilers turn into plain loads on little-endian hosts.  x values are
 * checked for NaN and infinity on their bit pattern (exponent all ones),
 * so no floating-point operation touches a bad value.
 *
 * IDENTIFICATION
 *	  src/engine/buffer.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_buffer.h"

#define F32_EXP_MASK 0x7f800000u
#define F32_MANT_MASK 0x007fffffu

/* Count of values n * width; see dl_buffer.h. */
DlStatus
dl_buffer_count(int64_t n, int64_t width, size_t elem_size, size_t *count, DlError *err)
{
	size_t		c,
				bytes;

	if (n < 0 || width < 0)
	{
		dl_error_set(err, DL_ERR_SHAPE, "buffer shape {%lld,%lld} is negative",
					 (long long) n, (long long) width);
		return dl_error_hint(err, "Preprocess the data again with training_preprocessor_dl.");
	}
	if ((uint64_t) n > SIZE_MAX || (uint64_t) width > SIZE_MAX ||
		!dl_size_mul((size_t) n, (size_t) width, &c) ||
		!dl_size_mul(c, elem_size, &bytes) || bytes > DL_ALLOC_MAX)
	{
		dl_error_set(err, DL_ERR_LIMIT, "buffer shape {%lld,%lld} is too large",
					 (long long) n, (long long) width);
		return dl_error_hint(err, "Preprocess the data with a smaller buffer_size.");
	}
	*count = c;
	return DL_OK;
}

/* DL_ERR_SHAPE unless len == want bytes; what names the variable. */
static DlStatus
check_length(size_t len, size_t want, int64_t n, int64_t width, const char *what, DlError *err)
{
	if (len == want)
		return DL_OK;
	dl_error_set(err, DL_ERR_SHAPE,
				 "%s buffer holds %zu bytes, but its shape {%lld,%lld} needs %zu",
				 what, len, (long long) n, (long long) width, want);
	return dl_error_hint(err, "The packed table is damaged or was not made by training_preprocessor_dl; preprocess the data again.");
}

/*
 * Decode count little-endian float32 values of rows of row values into
 * out; DL_ERR_DATA naming what, the row and the column of the first NaN
 * or infinite value.
 */
static DlStatus
decode_f32(float *out, const uint8_t *buf, size_t count, int64_t row, const char *what,
		   DlError *err)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	{
		/*
		 * The bytes are the floats: copy them, then test every exponent with
		 * integer operations and no early exit (the loop vectorizes); the
		 * loop below runs only to name a NaN or an infinity.
		 */
		uint32_t	bad = 0;

		if (count > 0)
			memcpy(out, buf, count * sizeof(float));
		for (size_t i = 0; i < count; i++)
		{
			uint32_t	u;

			memcpy(&u, buf + 4 * i, sizeof(u));
			bad |= (u & F32_EXP_MASK) == F32_EXP_MASK;
		}
		if (bad == 0)
			return DL_OK;
	}
#endif
	for (size_t i = 0; i < count; i++)
	{
		const uint8_t *p = buf + 4 * i;
		uint32_t	u = (uint32_t) p[0] | ((uint32_t) p[1] << 8) |
			((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24);

		if ((u & F32_EXP_MASK) == F32_EXP_MASK)
		{
			/* count > 0 here, so row >= 1 */
			dl_error_set(err, DL_ERR_DATA,
						 "%s buffer holds %s at row %lld, column %lld", what,
						 (u & F32_MANT_MASK) != 0 ? "NaN" : "an infinite value",
						 (long long) (i / (size_t) row) + 1, (long long) (i % (size_t) row) + 1);
			return dl_error_hint(err, "Remove or replace NaN and infinite values in the source table, then preprocess the data again.");
		}
		memcpy(&out[i], &u, sizeof(float));
	}
	return DL_OK;
}

/* Check x's length; see dl_buffer.h. */
DlStatus
dl_buffer_check_x(size_t len, int64_t n, int64_t row, size_t *count, DlError *err)
{
	DlStatus	st;

	if ((st = dl_buffer_count(n, row, sizeof(float), count, err)) != DL_OK)
		return st;
	return check_length(len, *count * sizeof(float), n, row, "independent variable", err);
}

/* Check a dependent variable's length; see dl_buffer.h. */
DlStatus
dl_buffer_check_target(size_t len, int64_t n, int64_t k, size_t *count, DlError *err)
{
	DlStatus	st;

	/* the output holds floats: check that size too, it is the larger one */
	if ((st = dl_buffer_count(n, k, sizeof(float), count, err)) != DL_OK)
		return st;
	if (*count > 0 && len == *count * sizeof(float))
		return DL_OK;
	return check_length(len, *count * sizeof(int16_t), n, k, "dependent variable", err);
}

/* Decode x; see dl_buffer.h. */
DlStatus
dl_buffer_decode_x(float *out, const uint8_t *buf, size_t len, int64_t n, int64_t row,
				   DlError *err)
{
	size_t		count;
	DlStatus	st;

	if ((st = dl_buffer_check_x(len, n, row, &count, err)) != DL_OK)
		return st;
	return decode_f32(out, buf, count, row, "independent variable", err);
}

/* Decode a dependent variable of either encoding; see dl_buffer.h. */
DlStatus
dl_buffer_decode_target(float *out, const uint8_t *buf, size_t len, int64_t n, int64_t k,
						DlError *err)
{
	size_t		count;
	DlStatus	st;

	if ((st = dl_buffer_check_target(len, n, k, &count, err)) != DL_OK)
		return st;
	if (count > 0 && len == count * sizeof(float))
		return decode_f32(out, buf, count, k, "dependent variable", err);
	return dl_buffer_decode_y(out, buf, len, n, k, err);
}

/* Decode y; see dl_buffer.h. */
DlStatus
dl_buffer_decode_y(float *out, const uint8_t *buf, size_t len, int64_t n, int64_t k,
				   DlError *err)
{
	size_t		count;
	DlStatus	st;

	/* the output holds floats: check that size too, it is the larger one */
	if ((st = dl_buffer_count(n, k, sizeof(float), &count, err)) != DL_OK)
		return st;
	if ((st = check_length(len, count * sizeof(int16_t), n, k, "dependent variable",
						   err)) != DL_OK)
		return st;
	for (size_t i = 0; i < count; i++)
	{
		int32_t		u = (int32_t) buf[2 * i] | ((int32_t) buf[2 * i + 1] << 8);

		/* two's complement without an implementation-defined conversion */
		out[i] = (float) (u >= 32768 ? u - 65536 : u);
	}
	return DL_OK;
}
