/*-------------------------------------------------------------------------
 *
 * test_caps.c
 *	  Unit tests: the size caps on parsed text (dl_caps.h).
 *
 * An architecture longer than DL_ARCH_JSON_MAX_BYTES, or one whose json-c
 * tree the pre-scan puts above DL_ARCH_JSON_MAX_HEAP (a 600 KB array of
 * empty objects: about 170 MB of json-c memory), is refused with
 * DL_ERR_LIMIT before json-c sees it, with the cap in the hint; the
 * estimate is an upper bound of what json-c allocates (checked with
 * mallinfo2 on fixtures and on lists of each kind of value) and stays
 * within 2x of it for real Keras architectures; every published fixture
 * is far below the caps.  compile_params, fit_params, AutoML parameters
 * and model selection grids are refused past their caps.
 *
 * IDENTIFICATION
 *	  test/unit/test_caps.c
 *
 *-------------------------------------------------------------------------
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "unit_util.h"
#include "madlib_dl/dl_automl.h"
#include "madlib_dl/dl_caps.h"
#include "madlib_dl/dl_keras.h"
#include "madlib_dl/dl_model_select.h"
#include "madlib_dl/dl_params.h"

/* "pre" item,item,...,item "post": k items; length in *n. */
static char *
repeat(const char *pre, const char *item, const char *post, size_t k, size_t *n)
{
	size_t		li = strlen(item);
	char	   *s = malloc(strlen(pre) + k * (li + 1) + strlen(post) + 1);
	char	   *p = s;

	assert_non_null(s);
	p += sprintf(p, "%s", pre);
	for (size_t i = 0; i < k; i++)
	{
		if (i > 0)
			*p++ = ',';
		memcpy(p, item, li);
		p += li;
	}
	p += sprintf(p, "%s", post);
	*n = (size_t) (p - s);
	return s;
}

static size_t
heap_in_use(void)
{
	struct mallinfo2 m = mallinfo2();

	return m.uordblks + m.hblkhd;
}

/* What json-c allocates for text (n bytes), measured. */
static size_t
json_c_heap(const char *text, size_t n)
{
	size_t		before = heap_in_use();
	json_tokener *tok = json_tokener_new_ex(64);
	json_object *obj = json_tokener_parse_ex(tok, text, (int) n);
	size_t		after = heap_in_use();

	assert_non_null(obj);
	json_object_put(obj);
	json_tokener_free(tok);
	return after > before ? after - before : 0;
}

static void
test_estimate_bounds_json_c(void **state)
{
	if (json_c_heap("[{}]", 4) == 0)
	{
		/* AddressSanitizer's allocator: mallinfo2 does not see json-c's memory */
		print_message("json-c's memory cannot be measured under this allocator: not compared\n");
		return;
	}
	static const char *const items[] = {
		"{}", "[]", "1", "1.5", "\"\"", "\"abcdefghijklmnop\"", "true", "null",
		"[[[[]]]]", "{\"a\":{}}", "{\"a\":1,\"b\":[2,3]}",
		"[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33]",
	};
	static const char *const fixtures[] = {
		"tfjs_graphs.json", "tfjs_sequences.json", "tf2_all_layers.json", "k3_all_layers.json",
	};

	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++)
	{
		size_t		n;
		char	   *s = repeat("[", items[i], "]", 20000, &n);
		size_t		real = json_c_heap(s, n);
		size_t		est = dl_json_heap_estimate(s, n, (size_t) -1);

		if (est < real)
			fail_msg("list of %s: estimate %zu below json-c's %zu bytes", items[i], est, real);
		free(s);
	}
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++)
	{
		size_t		n;
		char	   *s = read_fixture(fixtures[i], &n);
		size_t		real = json_c_heap(s, n);
		size_t		est = dl_json_heap_estimate(s, n, (size_t) -1);

		if (est < real || est > 2 * real)
			fail_msg("%s: estimate %zu, json-c %zu bytes", fixtures[i], est, real);
		if (est > DL_ARCH_JSON_MAX_HEAP / 10)
			fail_msg("%s: estimate %zu near the cap", fixtures[i], est);
		free(s);
	}
}

static void
test_estimate_stops_early(void **state)
{
	size_t		n;
	char	   *s = repeat("[", "{}", "]", 100000, &n);

	/* past the limit it returns at once, a value above the limit */
	assert_true(dl_json_heap_estimate(s, n, 1000) > 1000);
	assert_true(dl_json_heap_estimate(s, n, 1000) < 10000);
	free(s);
}

static DlStatus
parse(const char *s, size_t n, DlError *err)
{
	TestAllocCounter counter;
	DlAllocator alloc = test_allocator(&counter);
	DlModelSpec *spec = NULL;
	DlStatus	st;

	dl_error_clear(err);
	st = dl_keras_parse(s, n, &alloc, &spec, err);
	dl_model_spec_free(spec, &alloc);
	assert_no_leaks(&counter);
	return st;
}

static void
test_arch_caps(void **state)
{
	DlError		err;
	size_t		n;
	char	   *s;
	char	   *big;

	/* 600 KB of empty objects: about 170 MB for json-c, refused before parsing */
	s = repeat("{\"class_name\":\"Sequential\",\"config\":{\"layers\":[", "{}", "]}}", 210000, &n);
	assert_int_equal(parse(s, n, &err), DL_ERR_LIMIT);
	assert_non_null(strstr(err.msg, "needs more than 160 MiB to parse"));
	assert_non_null(strstr(err.hint, "160 MiB"));
	free(s);

	/* longer than 16 MiB: refused on its length (the text need not even be json) */
	big = malloc(DL_ARCH_JSON_MAX_BYTES + 1);
	assert_non_null(big);
	memset(big, ' ', DL_ARCH_JSON_MAX_BYTES + 1);
	assert_int_equal(parse(big, DL_ARCH_JSON_MAX_BYTES + 1, &err), DL_ERR_LIMIT);
	assert_non_null(strstr(err.msg, "longer than the limit of 16777216 bytes"));
	assert_non_null(strstr(err.hint, "16777216"));
	/* 16 MiB of white space is within the cap: a parse error, not a limit */
	assert_int_equal(parse(big, DL_ARCH_JSON_MAX_BYTES, &err), DL_ERR_PARSE);
	free(big);
}

/* A NUL-terminated string of n bytes: prefix then spaces. */
static char *
padded(const char *prefix, size_t n)
{
	char	   *s = malloc(n + 1);

	assert_non_null(s);
	memset(s, ' ', n);
	memcpy(s, prefix, strlen(prefix));
	s[n] = '\0';
	return s;
}

static void
test_param_caps(void **state)
{
	DlError		err;
	DlCompileParams cp;
	DlFitParams fp;
	DlAutomlParams ap;
	char	   *s;

	s = padded("loss='mse', optimizer='sgd'", DL_PARAMS_MAX_BYTES);
	dl_error_clear(&err);
	assert_int_equal(dl_compile_params_parse(s, &cp, &err), DL_OK);
	free(s);
	s = padded("loss='mse', optimizer='sgd'", DL_PARAMS_MAX_BYTES + 1);
	assert_int_equal(dl_compile_params_parse(s, &cp, &err), DL_ERR_LIMIT);
	assert_non_null(strstr(err.msg, "compile_params of 65537 bytes"));
	free(s);

	s = padded("batch_size=4", DL_PARAMS_MAX_BYTES);
	dl_error_clear(&err);
	assert_int_equal(dl_fit_params_parse(s, &fp, &err), DL_OK);
	free(s);
	s = padded("batch_size=4", DL_PARAMS_MAX_BYTES + 1);
	assert_int_equal(dl_fit_params_parse(s, &fp, &err), DL_ERR_LIMIT);
	assert_non_null(strstr(err.msg, "fit_params of 65537 bytes"));
	free(s);

	s = padded("R=6", DL_PARAMS_MAX_BYTES + 1);
	dl_error_clear(&err);
	assert_int_equal(dl_automl_params_parse(DL_AUTOML_HYPERBAND, s, &ap, &err), DL_ERR_LIMIT);
	assert_non_null(strstr(err.msg, "automl_params of 65537 bytes"));
	free(s);
}

static void
test_grid_cap(void **state)
{
	TestAllocCounter counter;
	DlAllocator alloc = test_allocator(&counter);
	DlModelSelectArgs args;
	DlModelConfigs *out = NULL;
	DlError		err;
	int32_t		ids[1] = {1};
	char	   *grid = padded("{'loss': ['mse'], 'optimizer': ['sgd']}", DL_GRID_MAX_BYTES + 1);

	memset(&args, 0, sizeof(args));
	args.model_ids = ids;
	args.n_model_ids = 1;
	args.compile_grid = grid;
	args.fit_grid = "{'batch_size': [4]}";
	args.search = DL_SEARCH_GRID;
	dl_error_clear(&err);
	assert_int_equal(dl_model_configs_generate(&args, &alloc, &out, &err), DL_ERR_LIMIT);
	assert_non_null(strstr(err.msg, "compile_params_grid of 1048577 bytes"));
	assert_null(out);
	assert_no_leaks(&counter);
	free(grid);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_estimate_bounds_json_c),
		cmocka_unit_test(test_estimate_stops_early),
		cmocka_unit_test(test_arch_caps),
		cmocka_unit_test(test_param_caps),
		cmocka_unit_test(test_grid_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
