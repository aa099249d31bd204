/*-------------------------------------------------------------------------
 *
 * test_fuzz_regressions.c
 *	  Unit tests: every failure the libFuzzer targets (test/fuzz/) found,
 *	  reduced to a readable input, so that it stays fixed.
 *
 * docs/fuzzing.md lists each finding with its fix.  The tests build the
 * input by hand instead of reading the crash file, and check the fixed
 * behaviour.
 *
 * IDENTIFICATION
 *	  test/unit/test_fuzz_regressions.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_keras.h"
#include "madlib_dl/dl_params.h"

/* Whether s is valid UTF-8 (no overlongs, no surrogates, <= U+10FFFF). */
static bool
utf8_valid(const char *str)
{
	const unsigned char *s = (const unsigned char *) str;

	while (*s != '\0')
	{
		unsigned int n,
					cp;

		if (*s < 0x80)
		{
			s++;
			continue;
		}
		if (*s >= 0xC2 && *s <= 0xDF)
			n = 1, cp = *s & 0x1F;
		else if (*s >= 0xE0 && *s <= 0xEF)
			n = 2, cp = *s & 0x0F;
		else if (*s >= 0xF0 && *s <= 0xF4)
			n = 3, cp = *s & 0x07;
		else
			return false;
		for (unsigned int j = 1; j <= n; j++)
		{
			if ((s[j] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (s[j] & 0x3F);
		}
		if ((n == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
			(n == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
			return false;
		s += n + 1;
	}
	return true;
}

/*
 * Finding 1 (fuzz_params): a piece of the parameter string quoted in an
 * error message was cut at 120 bytes, which could split a multi-byte
 * UTF-8 character and put invalid UTF-8 into the message sent to the
 * client.  Fixed in params.c (show_len backs off to a character start).
 */
static void
test_params_message_utf8(void **state)
{
	char		s[512];
	DlCompileParams cp;
	DlFitParams fp;
	DlError		err;

	/* every cut position near the cap, with 2-, 3- and 4-byte characters */
	static const char *const chars[] = {"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"};

	for (int c = 0; c < 3; c++)
	{
		for (int pad = 110; pad <= 122; pad++)
		{
			size_t		n = 0;

			/* an invalid name (it has a space) long enough to be cut */
			memset(s, 'x', (size_t) pad);
			n = (size_t) pad;
			for (int k = 0; k < 10; k++)
			{
				strcpy(s + n, chars[c]);
				n += strlen(chars[c]);
			}
			strcpy(s + n, " y");

			assert_int_not_equal(dl_compile_params_parse(s, &cp, &err), DL_OK);
			if (!utf8_valid(err.msg))
				fail_msg("compile_params message is not UTF-8 (pad %d, char %d): %s", pad, c,
						 err.msg);
			assert_int_not_equal(dl_fit_params_parse(s, &fp, &err), DL_OK);
			if (!utf8_valid(err.msg))
				fail_msg("fit_params message is not UTF-8 (pad %d, char %d): %s", pad, c,
						 err.msg);
			/* the same text as a value */
			memmove(s + 10, s, strlen(s) + 1);
			memcpy(s, "optimizer=", 10);
			assert_int_not_equal(dl_compile_params_parse(s, &cp, &err), DL_OK);
			if (!utf8_valid(err.msg))
				fail_msg("optimizer message is not UTF-8 (pad %d, char %d): %s", pad, c,
						 err.msg);
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_params_message_utf8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
