/*-------------------------------------------------------------------------
 *
 * test_transform.c
 *	  Unit tests: the column transforms saved with a model (transform.c):
 *	  the spec parser, the stored plan's JSON round trip, the application
 *	  of each op, and hostile specs and plans.
 *
 * IDENTIFICATION
 *	  test/unit/test_transform.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_transform.h"

static TestAllocCounter counter;
static DlAllocator alloc;

static DlTransform *
parse_ok(const char *spec)
{
	DlTransform *t = NULL;
	DlError		err;

	dl_error_clear(&err);
	if (dl_transform_parse(spec, strlen(spec), &alloc, &t, &err) != DL_OK)
		fail_msg("\"%s\": %s", spec, err.msg);
	return t;
}

static DlStatus
parse_err(const char *spec, DlError *err)
{
	DlTransform *t = NULL;
	DlStatus	st;

	dl_error_clear(err);
	st = dl_transform_parse(spec, strlen(spec), &alloc, &t, err);
	assert_null(t);
	assert_int_not_equal(st, DL_OK);
	return st;
}

/* t as JSON, then read back. */
static DlTransform *
round_trip(const DlTransform *t)
{
	DlStrBuf	sb;
	DlTransform *back = NULL;
	DlError		err;

	dl_strbuf_init(&sb, &alloc);
	dl_transform_to_json(t, &sb);
	assert_false(sb.failed);
	if (dl_transform_from_json(sb.data, sb.len, &alloc, &back, &err) != DL_OK)
		fail_msg("%s: %s", sb.data, err.msg);
	dl_strbuf_free(&sb);
	return back;
}

static void
test_parse_items(void **state)
{
	DlTransform *t;

	alloc = test_allocator(&counter);
	t = parse_ok("standardize(age), standardize(log(income)), minmax(score), impute(median, tenure), "
				 "onehot(city, max_categories => 50), ordinal(size), scale(pixels, 1.0/255), clip(x, -5, 5), "
				 "\"Odd Name\", standardize(impute(mean, log(Inc2)))");
	assert_int_equal(t->n_items, 10);
	assert_string_equal(t->items[0].column, "age");
	assert_int_equal(t->items[0].op, DL_TF_STANDARDIZE);
	assert_true(t->items[1].log);
	assert_string_equal(t->items[1].column, "income");
	assert_int_equal(t->items[2].op, DL_TF_MINMAX);
	assert_int_equal(t->items[3].op, DL_TF_IDENTITY);
	assert_int_equal(t->items[3].impute, DL_TF_IMPUTE_MEDIAN);
	assert_int_equal(t->items[4].op, DL_TF_ONEHOT);
	assert_int_equal(t->items[4].max_categories, 50);
	assert_int_equal(t->items[5].op, DL_TF_ORDINAL);
	assert_int_equal(t->items[5].max_categories, DL_TF_DEFAULT_MAX_CATEGORIES);
	assert_int_equal(t->items[6].op, DL_TF_SCALE);
	assert_true(t->items[6].a == 1.0 / 255);
	assert_int_equal(t->items[7].op, DL_TF_CLIP);
	assert_true(t->items[7].a == -5 && t->items[7].b == 5);
	assert_string_equal(t->items[8].column, "Odd Name");
	assert_int_equal(t->items[9].impute, DL_TF_IMPUTE_MEAN);
	assert_true(t->items[9].log);
	assert_string_equal(t->items[9].column, "inc2");
	assert_true(dl_transform_needs_stats(t, 9, 0));
	assert_true(dl_transform_needs_stats(t, 9, 1));
	assert_false(dl_transform_needs_stats(t, 6, 0));
	assert_false(dl_transform_needs_stats(t, 6, 1));
	dl_transform_free(t);

	/* found by fuzz_transform: -0 is stored and read back as 0 */
	t = parse_ok("clip(x, -0, 5)");
	{
		DlTransform *b = round_trip(t);

		assert_true(b->items[0].a == 0.0 && !signbit(b->items[0].a));
		dl_transform_free(b);
	}
	dl_transform_free(t);

	/* columns named like the functions */
	t = parse_ok("log, scale, impute(0, log)");
	assert_int_equal(t->n_items, 3);
	assert_string_equal(t->items[0].column, "log");
	assert_string_equal(t->items[1].column, "scale");
	assert_int_equal(t->items[2].impute, DL_TF_IMPUTE_CONSTANT);
	assert_true(t->items[2].impute_value == 0);
	assert_false(t->items[2].log);
	dl_transform_free(t);
	assert_no_leaks(&counter);
}

static void
test_parse_errors(void **state)
{
	DlError		err;
	char	   *big;

	alloc = test_allocator(&counter);
	assert_int_equal(parse_err("", &err), DL_ERR_PARSE);
	assert_int_equal(parse_err("standardize(age", &err), DL_ERR_PARSE);
	assert_non_null(strstr(err.msg, "at the end"));
	assert_int_equal(parse_err("drop_table(age)", &err), DL_ERR_PARSE);
	assert_int_equal(parse_err("age; DROP TABLE x", &err), DL_ERR_PARSE);
	assert_non_null(strstr(err.msg, "offset 3"));
	assert_int_equal(parse_err("standardize(age), ", &err), DL_ERR_PARSE);
	assert_int_equal(parse_err("scale(x, 1/0)", &err), DL_ERR_PARSE);
	assert_int_equal(parse_err("clip(x, 5, -5)", &err), DL_ERR_PARSE);
	assert_int_equal(parse_err("impute(mode, x)", &err), DL_ERR_PARSE);
	assert_int_equal(parse_err("onehot(log(x))", &err), DL_ERR_PARSE);
	assert_int_equal(parse_err("onehot(x, max_categories => 0)", &err), DL_ERR_LIMIT);
	assert_int_equal(parse_err("onehot(x, max_categories => 10001)", &err), DL_ERR_LIMIT);
	assert_int_equal(parse_err("\"a\\\"b\"", &err), DL_ERR_PARSE);
	assert_int_equal(parse_err("'age'", &err), DL_ERR_PARSE);
	assert_int_equal(parse_err("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", &err),
					 DL_ERR_LIMIT);
	assert_int_equal(parse_err("scale(x, 1e999)", &err), DL_ERR_PARSE);
	big = malloc(DL_TF_MAX_SPEC + 2);
	memset(big, 'a', DL_TF_MAX_SPEC + 1);
	big[DL_TF_MAX_SPEC + 1] = '\0';
	assert_int_equal(parse_err(big, &err), DL_ERR_LIMIT);
	/* too many items */
	for (int i = 0; i < 3000; i++)
	{
		big[2 * i] = 'a';
		big[2 * i + 1] = ',';
	}
	big[5999] = '\0';
	assert_int_equal(parse_err(big, &err), DL_ERR_LIMIT);
	/* deep parentheses */
	memset(big, '(', 5000);
	big[5000] = '\0';
	assert_int_equal(parse_err(big, &err), DL_ERR_PARSE);
	free(big);
	/* found by fuzz_transform: a byte of a UTF-8 character is quoted whole */
	assert_int_equal(parse_err("scale\xd9\x9e, 1e-3)", &err), DL_ERR_PARSE);
	assert_non_null(strstr(err.msg, "\"\xd9\x9e\""));
	assert_no_leaks(&counter);
}

static void
test_kinds(void **state)
{
	DlTransform *t;
	DlError		err;

	alloc = test_allocator(&counter);
	t = parse_ok("standardize(a), onehot(b), scale(c, 2), impute(mean, d)");
	assert_int_equal(dl_transform_check_kind(t, 0, DL_TF_KIND_TEXT, "text", &err), DL_ERR_UNSUPPORTED);
	assert_non_null(strstr(err.msg, "\"a\""));
	assert_int_equal(dl_transform_check_kind(t, 0, DL_TF_KIND_NUMBER, "integer", &err), DL_OK);
	assert_int_equal(dl_transform_check_kind(t, 0, DL_TF_KIND_ARRAY, "real[]", &err), DL_ERR_UNSUPPORTED);
	assert_int_equal(dl_transform_check_kind(t, 1, DL_TF_KIND_TEXT, "text", &err), DL_OK);
	assert_int_equal(dl_transform_check_kind(t, 1, DL_TF_KIND_ARRAY, "text[]", &err), DL_ERR_UNSUPPORTED);
	assert_int_equal(dl_transform_check_kind(t, 2, DL_TF_KIND_ARRAY, "integer[]", &err), DL_OK);
	assert_int_equal(dl_transform_check_kind(t, 3, DL_TF_KIND_ARRAY, "integer[]", &err), DL_ERR_UNSUPPORTED);
	assert_int_equal(dl_transform_check_kind(t, 9, DL_TF_KIND_NUMBER, "integer", &err),
					 DL_ERR_INVALID_ARGUMENT);
	dl_transform_free(t);
	assert_no_leaks(&counter);
}

/* A fitted plan: set what the SQL side learns, round-trip it, apply it. */
static void
test_apply(void **state)
{
	DlTransform *t,
			   *b;
	DlError		err;
	float		out[8];
	double		v,
				arr[3] = {0, 127.5, 255};
	bool		isnull;
	char	   *cats[2];
	int			sorted[2] = {1, 0};

	alloc = test_allocator(&counter);
	t = parse_ok("standardize(impute(median, log(inc))), minmax(s), onehot(city), ordinal(size), "
				 "scale(px, 1.0/255), clip(z, -1, 1), minmax(flat)");
	t->items[0].kind = DL_TF_KIND_NUMBER;
	t->items[0].impute_value = 1.0;
	t->items[0].impute_known = true;
	t->items[0].a = 2.0;
	t->items[0].b = 4.0;
	t->items[0].fitted = true;
	t->items[1].kind = DL_TF_KIND_NUMBER;
	t->items[1].a = 10;
	t->items[1].b = 20;
	t->items[1].fitted = true;
	cats[0] = "paris";
	cats[1] = "berlin";
	for (int i = 2; i <= 3; i++)
	{
		t->items[i].kind = DL_TF_KIND_TEXT;
		t->items[i].categories = dl_alloc_array(&alloc, 2, sizeof(char *), &err);
		for (int c = 0; c < 2; c++)
		{
			t->items[i].categories[c] = dl_alloc(&alloc, strlen(cats[c]) + 1, &err);
			strcpy(t->items[i].categories[c], cats[c]);
		}
		t->items[i].sorted = dl_alloc_array(&alloc, 2, sizeof(int), &err);
		memcpy(t->items[i].sorted, sorted, sizeof(sorted));
		t->items[i].n_categories = 2;
		t->items[i].fitted = true;
	}
	t->items[2].width = 3;
	t->items[4].kind = DL_TF_KIND_ARRAY;
	t->items[4].width = 3;
	t->items[5].kind = DL_TF_KIND_NUMBER;
	t->items[6].kind = DL_TF_KIND_NUMBER;
	t->items[6].a = 3;
	t->items[6].b = 3;
	t->items[6].fitted = true;

	b = round_trip(t);
	dl_transform_free(t);
	{
		int			w;

		assert_int_equal(dl_transform_width(b, &w, &err), DL_OK);
		assert_int_equal(w, 1 + 1 + 3 + 1 + 3 + 1 + 1);
		assert_int_equal(dl_transform_offset(b, 4), 6);
	}
	/* stage values: ln, then the imputation */
	assert_int_equal(dl_transform_stage_value(b, 0, 0, false, exp(3.0), &v, &isnull, &err), DL_OK);
	assert_close(v, 3.0, 1e-15, 0);
	assert_int_equal(dl_transform_stage_value(b, 0, 1, true, 0, &v, &isnull, &err), DL_OK);
	assert_false(isnull);
	assert_true(v == 1.0);
	assert_int_equal(dl_transform_stage_value(b, 0, 0, false, -1, &v, &isnull, &err), DL_ERR_DATA);
	assert_non_null(strstr(err.msg, "log(inc)"));

	assert_int_equal(dl_transform_apply_number(b, 0, false, exp(6.0), out, &err), DL_OK);
	assert_close(out[0], 1.0, 1e-6, 0);
	assert_int_equal(dl_transform_apply_number(b, 0, true, 0, out, &err), DL_OK);
	assert_close(out[0], -0.25, 1e-7, 0);
	assert_int_equal(dl_transform_apply_number(b, 1, false, 15, out, &err), DL_OK);
	assert_true(out[0] == 0.5f);
	assert_int_equal(dl_transform_apply_number(b, 1, true, 0, out, &err), DL_ERR_DATA);
	assert_non_null(strstr(err.hint, "impute"));
	assert_int_equal(dl_transform_apply_number(b, 1, false, NAN, out, &err), DL_ERR_DATA);

	assert_int_equal(dl_transform_apply_category(b, 2, "berlin", 6, out, &err), DL_OK);
	assert_true(out[0] == 0 && out[1] == 1 && out[2] == 0);
	assert_int_equal(dl_transform_apply_category(b, 2, "rome", 4, out, &err), DL_OK);
	assert_true(out[0] == 0 && out[1] == 0 && out[2] == 1);
	assert_int_equal(dl_transform_apply_category(b, 2, NULL, 0, out, &err), DL_OK);
	assert_true(out[2] == 1);
	assert_int_equal(dl_transform_apply_category(b, 2, "ber", 3, out, &err), DL_OK);
	assert_true(out[2] == 1);
	assert_int_equal(dl_transform_apply_category(b, 3, "paris", 5, out, &err), DL_OK);
	assert_true(out[0] == 0);
	assert_int_equal(dl_transform_apply_category(b, 3, "x", 1, out, &err), DL_OK);
	assert_true(out[0] == -1);

	assert_int_equal(dl_transform_apply_array(b, 4, arr, 3, out, &err), DL_OK);
	assert_true(out[0] == 0 && out[1] == (float) (127.5 / 255) && out[2] == 1);
	assert_int_equal(dl_transform_apply_array(b, 4, arr, 2, out, &err), DL_ERR_SHAPE);
	assert_int_equal(dl_transform_apply_number(b, 5, false, -7, out, &err), DL_OK);
	assert_true(out[0] == -1);
	assert_int_equal(dl_transform_apply_number(b, 6, false, 3, out, &err), DL_OK);
	assert_true(out[0] == 0);
	/* wrong kinds and indexes are errors, not crashes */
	assert_int_equal(dl_transform_apply_number(b, 2, false, 1, out, &err), DL_ERR_INVALID_ARGUMENT);
	assert_int_equal(dl_transform_apply_number(b, 99, false, 1, out, &err), DL_ERR_INVALID_ARGUMENT);
	assert_int_equal(dl_transform_apply_category(b, 0, "a", 1, out, &err), DL_ERR_INVALID_ARGUMENT);
	assert_int_equal(dl_transform_apply_array(b, -1, arr, 3, out, &err), DL_ERR_INVALID_ARGUMENT);
	dl_transform_free(b);
	assert_no_leaks(&counter);
}

static void
test_hostile_plans(void **state)
{
	static const char *const bad[] = {
		"", "null", "[]", "{}", "{\"version\": 0, \"items\": []}",
		"{\"version\": 1, \"items\": []}",
		"{\"version\": 1, \"items\": [1]}",
		"{\"version\": 1, \"items\": [{\"column\": \"a\"}]}",
		"{\"version\": 1, \"items\": [{\"column\": \"a\", \"op\": \"drop\", \"log\": false, \"impute\": \"none\", "
		"\"kind\": \"number\", \"width\": 1, \"fitted\": false}]}",
		"{\"version\": 1, \"items\": [{\"column\": \"a\", \"op\": \"onehot\", \"log\": false, \"impute\": \"none\", "
		"\"kind\": \"text\", \"width\": 9, \"fitted\": true, \"max_categories\": 5, \"categories\": [\"x\"]}]}",
		"{\"version\": 1, \"items\": [{\"column\": \"a\", \"op\": \"onehot\", \"log\": false, \"impute\": \"none\", "
		"\"kind\": \"text\", \"width\": 3, \"fitted\": true, \"max_categories\": 5, \"categories\": [\"x\", \"x\"]}]}",
		"{\"version\": 1, \"items\": [{\"column\": \"a\", \"op\": \"onehot\", \"log\": false, \"impute\": \"none\", "
		"\"kind\": \"text\", \"width\": 3, \"fitted\": true, \"max_categories\": 1, \"categories\": [\"x\", \"y\"]}]}",
		"{\"version\": 1, \"items\": [{\"column\": \"a\", \"op\": \"standardize\", \"log\": false, \"impute\": \"none\", "
		"\"kind\": \"number\", \"width\": 1, \"fitted\": true, \"mean\": 0, \"std\": -1}]}",
		"{\"version\": 1, \"items\": [{\"column\": \"a\", \"op\": \"scale\", \"log\": false, \"impute\": \"none\", "
		"\"kind\": \"number\", \"width\": 2, \"fitted\": false, \"factor\": 1}]}",
		"{\"version\": 1, \"items\": [{\"column\": \"a\", \"op\": \"scale\", \"log\": false, \"impute\": \"none\", "
		"\"kind\": \"array\", \"width\": 1e12, \"fitted\": false, \"factor\": 1}]}",
		"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
	};

	alloc = test_allocator(&counter);
	{
		DlTransform *t = NULL;
		DlError		err;
		const char *newer = "{\"version\": 2, \"items\": []}";

		assert_int_equal(dl_transform_from_json(newer, strlen(newer), &alloc, &t, &err), DL_ERR_UNSUPPORTED);
		assert_non_null(strstr(err.msg, "newer"));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		DlTransform *t = NULL;
		DlError		err;

		if (dl_transform_from_json(bad[i], strlen(bad[i]), &alloc, &t, &err) == DL_OK)
			fail_msg("accepted: %s", bad[i]);
		assert_null(t);
		assert_int_equal(err.code, DL_ERR_CORRUPT);
	}
	assert_no_leaks(&counter);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_items),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_hostile_plans),
	};

	return cmocka_run_group_tests_name("transform", tests, NULL, NULL);
}
