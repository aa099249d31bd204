/*-------------------------------------------------------------------------
 *
 * test_buffer.c
 *	  Unit tests: decoding packed preprocessor buffers (dl_buffer.h).
 *
 * x buffers are little-endian float32 (n, row), y buffers little-endian
 * int16 (n, k).  The bytes are written here by hand, so the tests hold on
 * hosts of either byte order.
 *
 * IDENTIFICATION
 *	  test/unit/test_buffer.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_buffer.h"

/* Write v as little-endian float32 at p. */
static void
put_f32(uint8_t *p, float v)
{
	uint32_t	u;

	memcpy(&u, &v, 4);
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t) (u >> (8 * i));
}

static void
put_bits(uint8_t *p, uint32_t u)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t) (u >> (8 * i));
}

static void
assert_msg_contains(const DlError *err, const char *s)
{
	if (strstr(err->msg, s) == NULL)
		fail_msg("message \"%s\" does not contain \"%s\"", err->msg, s);
	assert_true(err->hint[0] != '\0');
}

static void
test_decode_x(void **state)
{
	uint8_t		buf[4 * 6];
	float		out[6];
	float		want[6] = {0.5f, -1.25f, 3e-39f, -0.0f, 1e30f, 7.0f};
	DlError		err;

	for (int i = 0; i < 6; i++)
		put_f32(buf + 4 * i, want[i]);
	assert_int_equal(dl_buffer_decode_x(out, buf, sizeof(buf), 2, 3, &err), DL_OK);
	assert_memory_equal(out, want, sizeof(want));	/* bit for bit, -0 and denormals included */
	/* empty buffer of shape {0, 3} */
	assert_int_equal(dl_buffer_decode_x(out, NULL, 0, 0, 3, &err), DL_OK);
}

static void
test_decode_x_errors(void **state)
{
	uint8_t		buf[4 * 6] = {0};
	float		out[6];
	DlError		err;

	/* length mismatch names both sizes */
	assert_int_equal(dl_buffer_decode_x(out, buf, 20, 2, 3, &err), DL_ERR_SHAPE);
	assert_msg_contains(&err, "holds 20 bytes");
	assert_msg_contains(&err, "{2,3} needs 24");
	assert_int_equal(dl_buffer_decode_x(out, buf, 24, 3, 3, &err), DL_ERR_SHAPE);
	assert_msg_contains(&err, "needs 36");
	/* negative and overflowing shapes */
	assert_int_equal(dl_buffer_decode_x(out, buf, 24, -2, 3, &err), DL_ERR_SHAPE);
	assert_msg_contains(&err, "{-2,3} is negative");
	assert_int_equal(dl_buffer_decode_x(out, buf, 24, INT64_MAX, 3, &err), DL_ERR_LIMIT);
	assert_msg_contains(&err, "too large");
	assert_int_equal(dl_buffer_decode_x(out, buf, 0, (int64_t) 1 << 62, 4, &err),
					 DL_ERR_LIMIT);
	/* NaN and infinity name the row and column, 1-based */
	put_bits(buf + 4 * 4, 0x7fc00000u);	/* NaN at row 2, column 2 */
	assert_int_equal(dl_buffer_decode_x(out, buf, 24, 2, 3, &err), DL_ERR_DATA);
	assert_msg_contains(&err, "NaN at row 2, column 2");
	put_bits(buf + 4 * 4, 0);
	put_bits(buf + 4 * 2, 0xff800000u);	/* -inf at row 1, column 3 */
	assert_int_equal(dl_buffer_decode_x(out, buf, 24, 2, 3, &err), DL_ERR_DATA);
	assert_msg_contains(&err, "infinite value at row 1, column 3");
	put_bits(buf + 4 * 2, 0x7f800001u);	/* a signalling NaN */
	assert_int_equal(dl_buffer_decode_x(out, buf, 24, 2, 3, &err), DL_ERR_DATA);
	assert_msg_contains(&err, "NaN at row 1, column 3");
	/* the largest finite float is accepted */
	put_bits(buf + 4 * 2, 0x7f7fffffu);
	assert_int_equal(dl_buffer_decode_x(out, buf, 24, 2, 3, &err), DL_OK);
}

static void
test_decode_y(void **state)
{
	/* 3 samples, 2 classes: one-hot, then any int16 including negatives */
	uint8_t		buf[12] = {1, 0, 0, 0, 0, 0, 1, 0, 0xff, 0xff, 0x00, 0x80};
	float		out[6];
	DlError		err;

	assert_int_equal(dl_buffer_decode_y(out, buf, 12, 3, 2, &err), DL_OK);
	assert_true(out[0] == 1.0f && out[1] == 0.0f && out[2] == 0.0f && out[3] == 1.0f);
	assert_true(out[4] == -1.0f);
	assert_true(out[5] == -32768.0f);
	buf[1] = 0x7f;
	buf[0] = 0xff;
	assert_int_equal(dl_buffer_decode_y(out, buf, 12, 3, 2, &err), DL_OK);
	assert_true(out[0] == 32767.0f);
	assert_int_equal(dl_buffer_decode_y(out, buf, 11, 3, 2, &err), DL_ERR_SHAPE);
	assert_msg_contains(&err, "dependent variable buffer holds 11 bytes");
	assert_msg_contains(&err, "{3,2} needs 12");
	assert_int_equal(dl_buffer_decode_y(out, buf, 12, 3, -2, &err), DL_ERR_SHAPE);
	assert_int_equal(dl_buffer_decode_y(out, buf, 12, INT64_MAX / 2, 2, &err), DL_ERR_LIMIT);
}

static void
test_buffer_count(void **state)
{
	size_t		count = 99;
	DlError		err;

	assert_int_equal(dl_buffer_count(7, 11, 4, &count, &err), DL_OK);
	assert_int_equal(count, 77);
	assert_int_equal(dl_buffer_count(0, 0, 4, &count, &err), DL_OK);
	assert_int_equal(count, 0);
	assert_int_equal(dl_buffer_count(-1, 0, 4, &count, &err), DL_ERR_SHAPE);
	assert_int_equal(dl_buffer_count(1, -1, 4, &count, &err), DL_ERR_SHAPE);
	/* 2^38 floats = 2^40 bytes is the limit */
	assert_int_equal(dl_buffer_count((int64_t) 1 << 19, (int64_t) 1 << 19, 4, &count, &err),
					 DL_OK);
	assert_int_equal(dl_buffer_count(((int64_t) 1 << 19) + 1, (int64_t) 1 << 19, 4, &count,
									 &err), DL_ERR_LIMIT);
	assert_int_equal(dl_buffer_count(INT64_MAX, INT64_MAX, 4, &count, &err), DL_ERR_LIMIT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_x),
		cmocka_unit_test(test_decode_x_errors),
		cmocka_unit_test(test_decode_y),
		cmocka_unit_test(test_buffer_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
