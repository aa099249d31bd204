/*-------------------------------------------------------------------------
 *
 * test_pylit.c
 *	  Unit tests: the Python-literal lexer (pylit.c) shared by the
 *	  compile/fit parameter parser and the model selection grids.
 *
 * Every token kind with its offsets and value, both modes, each lexical
 * problem with the offset it is reported at, and hostile inputs: NUL
 * bytes, unterminated strings, huge numbers, long runs of brackets, and
 * the invariants any input must keep (tokens in order, inside the range,
 * only whitespace between them, the lexer always advancing).
 *
 * IDENTIFICATION
 *	  test/unit/test_pylit.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_pylit.h"

#define MAX_TOKENS 64

/* Lex all of s[0, len) in mode into toks (END included); returns the count. */
static int
lex_all(const char *s, size_t len, DlPylitMode mode, DlPylitToken *toks)
{
	DlPylitLexer lx;
	int			n = 0;

	dl_pylit_init(&lx, s, 0, len, mode);
	do
	{
		if (n == MAX_TOKENS)
			fail_msg("more than %d tokens in \"%s\"", MAX_TOKENS, s);
		dl_pylit_next(&lx, &toks[n]);
	} while (toks[n++].kind != DL_PYLIT_END);
	return n;
}

/* The only token of s (then END), in mode. */
static DlPylitToken
one_token(const char *s, DlPylitMode mode)
{
	DlPylitToken toks[MAX_TOKENS];
	int			n = lex_all(s, strlen(s), mode, toks);

	if (n != 2)
		fail_msg("\"%s\" gave %d tokens, expected one", s, n - 1);
	return toks[0];
}

static void
expect_kind(const char *s, DlPylitMode mode, DlPylitKind kind)
{
	DlPylitToken t = one_token(s, mode);

	if (t.kind != kind)
		fail_msg("\"%s\": kind %d, expected %d", s, (int) t.kind, (int) kind);
	if (t.begin != 0 || t.end != strlen(s))
		fail_msg("\"%s\": token [%zu, %zu), expected the whole text", s, t.begin, t.end);
}

/* The first token of s is an ERROR with problem at offset at. */
static void
expect_problem(const char *s, DlPylitMode mode, DlPylitProblem problem, size_t at)
{
	DlPylitToken toks[MAX_TOKENS];

	(void) lex_all(s, strlen(s), mode, toks);
	for (int i = 0; toks[i].kind != DL_PYLIT_END; i++)
		if (toks[i].kind == DL_PYLIT_ERROR)
		{
			if (toks[i].problem != problem || toks[i].problem_at != at)
				fail_msg("\"%s\": problem %d at %zu, expected %d at %zu", s, (int) toks[i].problem,
						 toks[i].problem_at, (int) problem, at);
			return;
		}
	fail_msg("\"%s\": no error token, expected problem %d", s, (int) problem);
}

/* A mixed text: every kind, offsets and values. */
static void
test_token_kinds(void **state)
{
	const char *s = " {'a': [1, -2.5e3, None]} = x_1 @\t\"q\" ";
	DlPylitToken t[MAX_TOKENS];
	int			n = lex_all(s, strlen(s), DL_PYLIT_STRICT, t);
	static const struct
	{
		DlPylitKind kind;
		size_t		begin,
					end;
		char		ch;
	}			want[] = {
		{DL_PYLIT_PUNCT, 1, 2, '{'}, {DL_PYLIT_STRING, 2, 5, 0}, {DL_PYLIT_PUNCT, 5, 6, ':'},
		{DL_PYLIT_PUNCT, 7, 8, '['}, {DL_PYLIT_INT, 8, 9, 0}, {DL_PYLIT_PUNCT, 9, 10, ','},
		{DL_PYLIT_FLOAT, 11, 17, 0}, {DL_PYLIT_PUNCT, 17, 18, ','}, {DL_PYLIT_NAME, 19, 23, 0},
		{DL_PYLIT_PUNCT, 23, 24, ']'}, {DL_PYLIT_PUNCT, 24, 25, '}'}, {DL_PYLIT_PUNCT, 26, 27, '='},
		{DL_PYLIT_NAME, 28, 31, 0}, {DL_PYLIT_OTHER, 32, 33, '@'}, {DL_PYLIT_STRING, 34, 37, 0},
		{DL_PYLIT_END, 38, 38, 0},
	};

	assert_int_equal(n, (int) (sizeof(want) / sizeof(want[0])));
	for (int i = 0; i < n; i++)
	{
		if (t[i].kind != want[i].kind || t[i].begin != want[i].begin || t[i].end != want[i].end)
			fail_msg("token %d: kind %d [%zu, %zu), expected kind %d [%zu, %zu)", i, (int) t[i].kind,
					 t[i].begin, t[i].end, (int) want[i].kind, want[i].begin, want[i].end);
		if (want[i].ch != 0)
			assert_int_equal(t[i].ch, want[i].ch);
	}
	assert_int_equal(t[4].i, 1);
	assert_true(t[4].f == 1.0);
	assert_true(t[6].f == -2500.0);

	/* every punctuation byte, and END again and again */
	{
		const char *p = "[]{}(),:=";
		DlPylitLexer lx;
		DlPylitToken tok;

		dl_pylit_init(&lx, p, 0, strlen(p), DL_PYLIT_LENIENT);
		for (size_t i = 0; i < strlen(p); i++)
		{
			dl_pylit_next(&lx, &tok);
			assert_int_equal(tok.kind, DL_PYLIT_PUNCT);
			assert_int_equal(tok.ch, p[i]);
			assert_int_equal(tok.begin, i);
		}
		for (int k = 0; k < 3; k++)
		{
			dl_pylit_next(&lx, &tok);
			assert_int_equal(tok.kind, DL_PYLIT_END);
			assert_int_equal(tok.begin, strlen(p));
		}
	}
	/* a sub-range: only its bytes */
	{
		const char *p = "abc [1] def";
		DlPylitLexer lx;
		DlPylitToken tok;

		dl_pylit_init(&lx, p, 4, 7, DL_PYLIT_STRICT);
		dl_pylit_next(&lx, &tok);
		assert_true(tok.kind == DL_PYLIT_PUNCT && tok.begin == 4);
		dl_pylit_next(&lx, &tok);
		assert_true(tok.kind == DL_PYLIT_INT && tok.i == 1);
		dl_pylit_next(&lx, &tok);
		assert_true(tok.kind == DL_PYLIT_PUNCT && tok.ch == ']' && tok.end == 7);
		dl_pylit_next(&lx, &tok);
		assert_true(tok.kind == DL_PYLIT_END && tok.begin == 7);
	}
}

static void
test_names_and_other(void **state)
{
	expect_kind("True", DL_PYLIT_STRICT, DL_PYLIT_NAME);
	expect_kind("False", DL_PYLIT_STRICT, DL_PYLIT_NAME);
	expect_kind("None", DL_PYLIT_STRICT, DL_PYLIT_NAME);
	expect_kind("_x9", DL_PYLIT_STRICT, DL_PYLIT_NAME);
	/* inf and nan are names, not numbers, as Python's literals */
	expect_kind("inf", DL_PYLIT_STRICT, DL_PYLIT_NAME);
	expect_kind("nan", DL_PYLIT_LENIENT, DL_PYLIT_NAME);
	expect_kind("#", DL_PYLIT_STRICT, DL_PYLIT_OTHER);
	expect_kind("\\", DL_PYLIT_STRICT, DL_PYLIT_OTHER);
	/* a non-ASCII byte is OTHER, one byte at a time */
	{
		DlPylitToken t[MAX_TOKENS];

		assert_int_equal(lex_all("\xc3\xa9", 2, DL_PYLIT_STRICT, t), 3);
		assert_true(t[0].kind == DL_PYLIT_OTHER && t[0].ch == '\xc3' && t[0].end == 1);
		assert_true(t[1].kind == DL_PYLIT_OTHER && t[1].begin == 1);
	}
	/* u'x' is a name then a string, next to each other (the parser's prefix) */
	{
		DlPylitToken t[MAX_TOKENS];

		assert_int_equal(lex_all("u'x'", 4, DL_PYLIT_STRICT, t), 3);
		assert_true(t[0].kind == DL_PYLIT_NAME && t[0].end == 1);
		assert_true(t[1].kind == DL_PYLIT_STRING && t[1].begin == 1);
	}
	assert_true(dl_pylit_is_name("batch_size", 10));
	assert_true(dl_pylit_is_name("_", 1));
	assert_false(dl_pylit_is_name("", 0));
	assert_false(dl_pylit_is_name("2x", 2));
	assert_false(dl_pylit_is_name("a b", 3));
	assert_false(dl_pylit_is_name("a\xc3\xa9", 3));
	assert_true(dl_pylit_is_name("ab!", 2));	/* only the n bytes count */
}

/* Decode the single STRING token of s (strict) and compare. */
static void
expect_decoded(const char *s, const char *want, size_t want_len)
{
	DlPylitToken t = one_token(s, DL_PYLIT_STRICT);
	char		out[256];
	size_t		n;

	if (t.kind != DL_PYLIT_STRING)
		fail_msg("\"%s\": kind %d, expected a string", s, (int) t.kind);
	n = dl_pylit_string_decode(s, &t, out);
	assert_int_equal(n, want_len);
	assert_memory_equal(out, want, want_len);
	assert_int_equal(out[n], '\0');
	assert_true(n + 2 <= t.end - t.begin);
}

static void
test_strings(void **state)
{
	expect_decoded("'abc'", "abc", 3);
	expect_decoded("\"abc\"", "abc", 3);
	expect_decoded("''", "", 0);
	expect_decoded("\"it's\"", "it's", 4);
	expect_decoded("'say \"hi\"'", "say \"hi\"", 8);
	expect_decoded("'a\\'b\\\"c\\\\d'", "a'b\"c\\d", 7);
	expect_decoded("'\\n\\t\\r'", "\n\t\r", 3);
	expect_decoded("'\\x41\\x7f\\x01'", "A\x7f\x01", 3);
	expect_decoded("'a\\\nb'", "ab", 2);	/* backslash-newline continues the line */
	expect_decoded("'\\q\\d'", "\\q\\d", 4);	/* unknown escapes keep the backslash */
	expect_decoded("'\xc3\xa9\xf0\x9f\x98\x80'", "\xc3\xa9\xf0\x9f\x98\x80", 6);

	/* unterminated: at the opening quote, in both modes */
	expect_problem("'abc", DL_PYLIT_STRICT, DL_PYLIT_UNTERMINATED_STRING, 0);
	expect_problem("[1, \"abc]", DL_PYLIT_STRICT, DL_PYLIT_UNTERMINATED_STRING, 4);
	expect_problem("x='abc\\'", DL_PYLIT_LENIENT, DL_PYLIT_UNTERMINATED_STRING, 2);
	expect_problem("'abc\\", DL_PYLIT_STRICT, DL_PYLIT_UNTERMINATED_STRING, 0);
	expect_problem("'mixed\"", DL_PYLIT_STRICT, DL_PYLIT_UNTERMINATED_STRING, 0);
	/* strict strings end on their line; lenient ones may span lines */
	expect_problem("'a\nb'", DL_PYLIT_STRICT, DL_PYLIT_UNTERMINATED_STRING, 0);
	expect_problem("'a\rb'", DL_PYLIT_STRICT, DL_PYLIT_UNTERMINATED_STRING, 0);
	expect_kind("'a\nb'", DL_PYLIT_LENIENT, DL_PYLIT_STRING);
	/* lenient: a backslash keeps any byte, no escape is checked */
	expect_kind("'\\x\\0\\''", DL_PYLIT_LENIENT, DL_PYLIT_STRING);

	/* strict escapes: at the backslash */
	expect_problem("'ab\\xZZ'", DL_PYLIT_STRICT, DL_PYLIT_BAD_HEX_ESCAPE, 3);
	expect_problem("'\\x0'", DL_PYLIT_STRICT, DL_PYLIT_BAD_HEX_ESCAPE, 1);
	expect_problem("'\\x00'", DL_PYLIT_STRICT, DL_PYLIT_BAD_HEX_ESCAPE, 1);
	expect_problem("'\\x80'", DL_PYLIT_STRICT, DL_PYLIT_BAD_HEX_ESCAPE, 1);
	expect_problem("'\\x4", DL_PYLIT_STRICT, DL_PYLIT_BAD_HEX_ESCAPE, 1);
	expect_problem("'a\\0'", DL_PYLIT_STRICT, DL_PYLIT_NUL_IN_STRING, 2);

	/* a raw NUL (possible with an explicit length) */
	{
		const char	s1[] = "'a\0b'";
		const char	s2[] = "'a\\\0b'";
		DlPylitToken t[MAX_TOKENS];

		(void) lex_all(s1, sizeof(s1) - 1, DL_PYLIT_STRICT, t);
		assert_true(t[0].kind == DL_PYLIT_ERROR && t[0].problem == DL_PYLIT_NUL_IN_STRING &&
					t[0].problem_at == 2);
		(void) lex_all(s2, sizeof(s2) - 1, DL_PYLIT_STRICT, t);
		assert_true(t[0].kind == DL_PYLIT_ERROR && t[0].problem == DL_PYLIT_NUL_IN_STRING &&
					t[0].problem_at == 2);
		(void) lex_all(s1, sizeof(s1) - 1, DL_PYLIT_LENIENT, t);
		assert_true(t[0].kind == DL_PYLIT_STRING && t[0].end == 5);
	}
}

static void
test_numbers(void **state)
{
	DlPylitToken t;

	t = one_token("42", DL_PYLIT_STRICT);
	assert_true(t.kind == DL_PYLIT_INT && t.i == 42 && t.f == 42.0);
	t = one_token("-7", DL_PYLIT_STRICT);
	assert_true(t.kind == DL_PYLIT_INT && t.i == -7);
	t = one_token("+7", DL_PYLIT_STRICT);
	assert_true(t.kind == DL_PYLIT_INT && t.i == 7);
	t = one_token("0", DL_PYLIT_STRICT);
	assert_true(t.kind == DL_PYLIT_INT && t.i == 0);
	t = one_token("9223372036854775807", DL_PYLIT_STRICT);
	assert_true(t.kind == DL_PYLIT_INT && t.i == INT64_MAX);
	t = one_token("-9223372036854775808", DL_PYLIT_STRICT);
	assert_true(t.kind == DL_PYLIT_INT && t.i == INT64_MIN);
	t = one_token("1.", DL_PYLIT_STRICT);
	assert_true(t.kind == DL_PYLIT_FLOAT && t.f == 1.0);
	t = one_token(".5", DL_PYLIT_STRICT);
	assert_true(t.kind == DL_PYLIT_FLOAT && t.f == 0.5);
	t = one_token("-.5e-1", DL_PYLIT_STRICT);
	assert_true(t.kind == DL_PYLIT_FLOAT && t.f == -0.05);
	t = one_token("1e5", DL_PYLIT_STRICT);
	assert_true(t.kind == DL_PYLIT_FLOAT && t.f == 1e5);
	t = one_token("1.5E+2", DL_PYLIT_STRICT);
	assert_true(t.kind == DL_PYLIT_FLOAT && t.f == 150.0);
	t = one_token("-0.0", DL_PYLIT_STRICT);
	assert_true(t.kind == DL_PYLIT_FLOAT && t.f == 0.0 && signbit(t.f));
	t = one_token("00.5", DL_PYLIT_STRICT);	/* a float may start with zeros */
	assert_true(t.kind == DL_PYLIT_FLOAT && t.f == 0.5);
	t = one_token("1e-400", DL_PYLIT_STRICT);	/* underflow is zero, as Python */
	assert_true(t.kind == DL_PYLIT_FLOAT && t.f == 0.0);

	/* leading zeros: refused by Python (strict), 7 for MADlib's parameters */
	expect_problem("007", DL_PYLIT_STRICT, DL_PYLIT_LEADING_ZERO, 0);
	expect_problem("[-01]", DL_PYLIT_STRICT, DL_PYLIT_LEADING_ZERO, 1);
	t = one_token("007", DL_PYLIT_LENIENT);
	assert_true(t.kind == DL_PYLIT_INT && t.i == 7);

	/* malformed: at the number's first byte, one token for the whole run */
	expect_problem("1x", DL_PYLIT_STRICT, DL_PYLIT_INVALID_NUMBER, 0);
	expect_problem("[0x10]", DL_PYLIT_STRICT, DL_PYLIT_INVALID_NUMBER, 1);
	expect_problem("1.2.3", DL_PYLIT_LENIENT, DL_PYLIT_INVALID_NUMBER, 0);
	expect_problem("1_000", DL_PYLIT_STRICT, DL_PYLIT_INVALID_NUMBER, 0);
	expect_problem("1e", DL_PYLIT_STRICT, DL_PYLIT_INVALID_NUMBER, 0);
	expect_problem("1e+", DL_PYLIT_STRICT, DL_PYLIT_INVALID_NUMBER, 0);
	expect_problem(" -", DL_PYLIT_STRICT, DL_PYLIT_INVALID_NUMBER, 1);
	expect_problem("+", DL_PYLIT_STRICT, DL_PYLIT_INVALID_NUMBER, 0);
	expect_problem(".", DL_PYLIT_STRICT, DL_PYLIT_INVALID_NUMBER, 0);
	expect_problem("- 1", DL_PYLIT_STRICT, DL_PYLIT_INVALID_NUMBER, 0);
	expect_problem("1e-3x", DL_PYLIT_LENIENT, DL_PYLIT_INVALID_NUMBER, 0);
	t = one_token("1.2.3abc", DL_PYLIT_STRICT);
	assert_true(t.kind == DL_PYLIT_ERROR && t.end == 8);

	/* range */
	expect_problem("1e999", DL_PYLIT_STRICT, DL_PYLIT_FLOAT_RANGE, 0);
	expect_problem("-1e999", DL_PYLIT_LENIENT, DL_PYLIT_FLOAT_RANGE, 0);
	expect_problem("9223372036854775808", DL_PYLIT_STRICT, DL_PYLIT_INT_RANGE, 0);
	expect_problem("-9223372036854775809", DL_PYLIT_STRICT, DL_PYLIT_INT_RANGE, 0);
	expect_problem("99999999999999999999", DL_PYLIT_STRICT, DL_PYLIT_INT_RANGE, 0);
	t = one_token("100000000000000000000", DL_PYLIT_LENIENT);
	assert_true(t.kind == DL_PYLIT_ERROR && t.problem == DL_PYLIT_INT_RANGE && t.f == 1e20);

	/* a number next to punctuation or a string ends there */
	{
		DlPylitToken toks[MAX_TOKENS];

		assert_int_equal(lex_all("1,'a'", 5, DL_PYLIT_STRICT, toks), 4);
		assert_true(toks[0].kind == DL_PYLIT_INT && toks[0].end == 1);
		assert_int_equal(lex_all("1'a'", 4, DL_PYLIT_STRICT, toks), 3);
		assert_true(toks[0].kind == DL_PYLIT_INT && toks[1].kind == DL_PYLIT_STRING);
	}
}

/* Huge and hostile inputs keep the invariants and stay linear. */
static void
check_invariants(const char *s, size_t len, DlPylitMode mode)
{
	DlPylitLexer lx;
	DlPylitToken tok;
	size_t		prev_end = 0;
	size_t		count = 0;

	dl_pylit_init(&lx, s, 0, len, mode);
	for (;;)
	{
		dl_pylit_next(&lx, &tok);
		if (tok.begin < prev_end || tok.end > len || tok.end < tok.begin)
			fail_msg("token [%zu, %zu) after %zu in a text of %zu bytes", tok.begin, tok.end,
					 prev_end, len);
		for (size_t i = prev_end; i < tok.begin; i++)
			if (!dl_pylit_is_space(s[i]))
				fail_msg("byte %zu (0x%02x) skipped", i, (unsigned char) s[i]);
		if (tok.kind == DL_PYLIT_END)
			break;
		if (tok.end == tok.begin)
			fail_msg("empty token of kind %d at %zu", (int) tok.kind, tok.begin);
		if (tok.kind == DL_PYLIT_ERROR && (tok.problem_at < tok.begin || tok.problem_at > tok.end))
			fail_msg("problem at %zu outside its token [%zu, %zu)", tok.problem_at, tok.begin, tok.end);
		if (tok.kind == DL_PYLIT_FLOAT && !isfinite(tok.f))
			fail_msg("a FLOAT token that is not finite");
		prev_end = tok.end;
		count++;
	}
	assert_true(count <= len);
}

static void
test_hostile(void **state)
{
	size_t		n = 200000;
	char	   *s = malloc(n + 1);
	uint32_t	x = 12345;
	static const char alphabet[] = "[]{}(),:='\"\\ \n0123456789.+-eExabTFN_@\0\xc3\xa9";

	assert_non_null(s);
	/* brackets nested 100000 deep: the lexer keeps no nesting */
	memset(s, '[', n / 2);
	memset(s + n / 2, ']', n / 2);
	s[n] = '\0';
	check_invariants(s, n, DL_PYLIT_STRICT);
	/* a 200000-digit integer and float; a 200000-digit exponent */
	memset(s, '7', n);
	expect_problem(s, DL_PYLIT_STRICT, DL_PYLIT_INT_RANGE, 0);
	s[n / 2] = '.';
	expect_problem(s, DL_PYLIT_STRICT, DL_PYLIT_FLOAT_RANGE, 0);
	memcpy(s, "0.e-", 4);
	s[n / 2] = '7';
	{
		DlPylitToken t = one_token(s, DL_PYLIT_STRICT);

		assert_true(t.kind == DL_PYLIT_FLOAT && t.f == 0.0 && t.end == n);
	}
	s[n / 2] = '.';
	expect_problem(s, DL_PYLIT_STRICT, DL_PYLIT_INVALID_NUMBER, 0);	/* 0.e-77.77 */
	/* an unterminated string of 200000 bytes */
	memset(s, 'a', n);
	s[0] = '"';
	expect_problem(s, DL_PYLIT_LENIENT, DL_PYLIT_UNTERMINATED_STRING, 0);
	/* random bytes, NULs included, in both modes */
	for (int round = 0; round < 200; round++)
	{
		size_t		len = 1 + round * 37 % 1000;

		for (size_t i = 0; i < len; i++)
		{
			x = x * 1103515245u + 12345u;
			s[i] = alphabet[(x >> 16) % (sizeof(alphabet) - 1)];
		}
		s[len] = '\0';
		check_invariants(s, len, DL_PYLIT_STRICT);
		check_invariants(s, len, DL_PYLIT_LENIENT);
	}
	free(s);
}

static void
test_problem_texts(void **state)
{
	const char *e3 = "ab\xe2\x82\xac";	/* "ab€" */

	assert_int_equal(dl_text_clip("abcdef", 6, 10), 6);
	assert_int_equal(dl_text_clip("abcdef", 6, 3), 3);
	assert_int_equal(dl_text_clip(e3, 5, 5), 5);
	assert_int_equal(dl_text_clip(e3, 5, 4), 2);	/* not into the euro sign */
	assert_int_equal(dl_text_clip(e3, 5, 3), 2);
	assert_int_equal(dl_text_clip(e3, 5, 2), 2);
	assert_string_equal(dl_pylit_problem_text(DL_PYLIT_UNTERMINATED_STRING), "unterminated string");
	assert_string_equal(dl_pylit_problem_text(DL_PYLIT_LEADING_ZERO),
						"invalid number (an integer may not start with 0)");
	assert_string_equal(dl_pylit_problem_text(DL_PYLIT_INT_RANGE), "integer out of range");
	for (int p = DL_PYLIT_NO_PROBLEM; p <= DL_PYLIT_INT_RANGE; p++)
		assert_true(strlen(dl_pylit_problem_text((DlPylitProblem) p)) > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token_kinds),
		cmocka_unit_test(test_names_and_other),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_problem_texts),
	};

	return cmocka_run_group_tests_name("pylit", tests, NULL, NULL);
}
