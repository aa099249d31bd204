/*-------------------------------------------------------------------------
 *
 * test_model_select.c
 *	  Unit tests: the grids of generate_model_configs, grid search and
 *	  random search (model_select.c).
 *
 * A grid gives its configurations in MADlib's order and spelling (the rows
 * the regression test 40_model_selection pins); random search is the same
 * for the same random_state, and its distributions stay in range with the
 * right shape; every kind of bad grid gives its status and message; an
 * allocation failure anywhere gives DL_ERR_NO_MEMORY and leaks nothing.
 *
 * IDENTIFICATION
 *	  test/unit/test_model_select.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_model_select.h"
#include "madlib_dl/dl_params.h"

/* The grids of sql/40_model_selection.sql. */
#define CGRID "{'loss': ['categorical_crossentropy'], 'optimizer_params_list': [ " \
	"{'optimizer': ['SGD'], 'lr': [0.0001, 0.001], 'momentum': [0.95, 0.99]}, " \
	"{'optimizer': ['Adam'], 'lr': [0.01, 0.1]} ], 'metrics': ['accuracy']}"
#define FGRID "{'batch_size': [64, 128], 'epochs': [10]}"
#define RGRID "{'loss': ['categorical_crossentropy'], 'optimizer_params_list': [ " \
	"{'optimizer': ['SGD'], 'lr': [0.0001, 0.001, 'log'], 'momentum': [0.95, 0.99, 'log_near_one']}, " \
	"{'optimizer': ['Adam'], 'lr': [0.01, 0.1, 'linear']} ], 'metrics': ['accuracy']}"
#define RFGRID "{'batch_size': [16, 32, 64, 128], 'epochs': [1, 2, 3]}"

static const int32_t ids12[] = {1, 2};

static DlModelSelectArgs
grid_args(const int32_t *ids, int n, const char *cgrid, const char *fgrid)
{
	DlModelSelectArgs a;

	memset(&a, 0, sizeof(a));
	a.model_ids = ids;
	a.n_model_ids = n;
	a.compile_grid = cgrid;
	a.fit_grid = fgrid;
	a.search = DL_SEARCH_GRID;
	return a;
}

static DlModelSelectArgs
random_args(const char *cgrid, const char *fgrid, int num, bool seeded, int64_t rs)
{
	DlModelSelectArgs a = grid_args(ids12, 2, cgrid, fgrid);

	a.search = DL_SEARCH_RANDOM;
	a.has_num_configs = true;
	a.num_configs = num;
	a.has_random_state = seeded;
	a.random_state = rs;
	return a;
}

/* Generate, failing the test on an error. */
static DlModelConfigs *
gen_ok(const DlModelSelectArgs *a, const DlAllocator *alloc)
{
	DlModelConfigs *c = NULL;
	DlError		err;
	DlStatus	rc;

	dl_error_clear(&err);
	rc = dl_model_configs_generate(a, alloc, &c, &err);
	if (rc != DL_OK)
		fail_msg("generate failed: %s (%s)", err.msg, dl_status_name(rc));
	assert_non_null(c);
	return c;
}

static void
expect_row(const DlModelConfigs *c, int r, int32_t id, const char *compile, const char *fit)
{
	assert_true(r < c->n);
	if (c->model_id[r] != id || strcmp(c->compile_params[r], compile) != 0 ||
		strcmp(c->fit_params[r], fit) != 0)
		fail_msg("row %d: %d | %s | %s\nexpected %d | %s | %s", r, c->model_id[r],
				 c->compile_params[r], c->fit_params[r], id, compile, fit);
}

static void
test_grid_search(void **state)
{
	TestAllocCounter counter;
	DlAllocator alloc = test_allocator(&counter);
	static const int32_t ids[] = {2, 1, 1};
	DlModelSelectArgs a = grid_args(ids, 3, CGRID, FGRID);
	DlModelConfigs *c = gen_ok(&a, &alloc);

	/* 2 ids x (SGD: 2 lr x 2 momentum + Adam: 2 lr) x (2 batch sizes x 1 epochs) */
	assert_int_equal(c->n, 24);
	expect_row(c, 0, 1, "optimizer='SGD(lr=0.0001,momentum=0.95)',loss='categorical_crossentropy',"
			   "metrics=['accuracy']", "batch_size=64,epochs=10");
	expect_row(c, 1, 2, "optimizer='SGD(lr=0.0001,momentum=0.95)',loss='categorical_crossentropy',"
			   "metrics=['accuracy']", "batch_size=64,epochs=10");
	expect_row(c, 2, 1, "optimizer='SGD(lr=0.0001,momentum=0.95)',loss='categorical_crossentropy',"
			   "metrics=['accuracy']", "batch_size=128,epochs=10");
	expect_row(c, 4, 1, "optimizer='SGD(lr=0.0001,momentum=0.99)',loss='categorical_crossentropy',"
			   "metrics=['accuracy']", "batch_size=64,epochs=10");
	expect_row(c, 8, 1, "optimizer='SGD(lr=0.001,momentum=0.95)',loss='categorical_crossentropy',"
			   "metrics=['accuracy']", "batch_size=64,epochs=10");
	expect_row(c, 16, 1, "optimizer='Adam(lr=0.01)',loss='categorical_crossentropy',metrics=['accuracy']",
			   "batch_size=64,epochs=10");
	expect_row(c, 23, 2, "optimizer='Adam(lr=0.1)',loss='categorical_crossentropy',metrics=['accuracy']",
			   "batch_size=128,epochs=10");
	/* every row parses */
	for (int r = 0; r < c->n; r++)
	{
		DlCompileParams cp;
		DlFitParams fp;
		DlError		err;

		assert_int_equal(dl_compile_params_parse(c->compile_params[r], &cp, &err), DL_OK);
		assert_int_equal(dl_fit_params_parse(c->fit_params[r], &fp, &err), DL_OK);
	}
	dl_model_configs_free(c);
	assert_no_leaks(&counter);

	/* no optimizer_params_list, every kind of literal, Python's repr */
	a = grid_args(ids12, 1, "{\"loss\": [\"mse\"], 'optimizer': [u'SGD(lr=0.1)', \"Adam\"],\n"
				  "  'loss_weights': [[1e-3, 1.5E-7, 100.0, 1e16, 2, -0.0, 0.30000000000000004],\n"
				  "                   ((1,), (), {1: 'a\\'b', \"c\": None}, True, False)],}",
				  " {'batch_size': [32], 'shuffle': [True, False]} ");
	c = gen_ok(&a, &alloc);
	assert_int_equal(c->n, 8);
	expect_row(c, 0, 1, "loss='mse',optimizer='SGD(lr=0.1)',loss_weights=[0.001, 1.5e-07, 100.0, 1e+16, "
			   "2, -0.0, 0.30000000000000004]", "batch_size=32,shuffle=True");
	expect_row(c, 3, 1, "loss='mse',optimizer='SGD(lr=0.1)',loss_weights=((1,), (), {1: \"a'b\", 'c': None}, "
			   "True, False)", "batch_size=32,shuffle=False");
	expect_row(c, 5, 1, "loss='mse',optimizer='Adam',loss_weights=[0.001, 1.5e-07, 100.0, 1e+16, 2, -0.0, "
			   "0.30000000000000004]", "batch_size=32,shuffle=False");
	dl_model_configs_free(c);

	/* an entry without optimizer is RMSprop; names as MADlib spells them; {} fits */
	a = grid_args(ids12, 1, "{'loss': ['mse'], 'optimizer_params_list': [{'lr': [0.5]}, "
				  "{'optimizer': ['adamax', 'sgd', 'RMSPROP', 'nADAM']}]}", "{}");
	c = gen_ok(&a, &alloc);
	assert_int_equal(c->n, 5);
	expect_row(c, 0, 1, "optimizer='RMSprop(lr=0.5)',loss='mse'", "");
	expect_row(c, 1, 1, "optimizer='Adamax()',loss='mse'", "");
	expect_row(c, 2, 1, "optimizer='SGD()',loss='mse'", "");
	expect_row(c, 3, 1, "optimizer='RMSprop()',loss='mse'", "");
	expect_row(c, 4, 1, "optimizer='Nadam()',loss='mse'", "");
	dl_model_configs_free(c);
	assert_no_leaks(&counter);
}

/* Python's repr of numbers and strings in the row strings. */
static void
test_repr(void **state)
{
	TestAllocCounter counter;
	DlAllocator alloc = test_allocator(&counter);
	DlModelSelectArgs a;
	DlModelConfigs *c;

	a = grid_args(ids12, 1, "{'w': [[1e-05, 0.0001, 1e15, 1e16, 1234.5, -1.5e-7, 5e-324, "
				  "1.7976931348623157e308, 0.1, 2.5e-5, 123456789.125, 0.0, 9007199254740993.0]]}", "{}");
	c = gen_ok(&a, &alloc);
	expect_row(c, 0, 1, "w=[1e-05, 0.0001, 1000000000000000.0, 1e+16, 1234.5, -1.5e-07, 5e-324, "
			   "1.7976931348623157e+308, 0.1, 2.5e-05, 123456789.125, 0.0, 9007199254740992.0]", "");
	dl_model_configs_free(c);

	a = grid_args(ids12, 1, "{'s': ['a\\x01b\\tc\\nd\\re\\x7f', \"it's\", 'both \\' \"', 'back\\\\slash', "
				  "'\\q', '\xc3\xa9'], 'metrics': ['acc', ['mae']], 'n': [-9223372036854775808]}", "{}");
	c = gen_ok(&a, &alloc);
	assert_int_equal(c->n, 12);
	expect_row(c, 0, 1, "s='a\\x01b\\tc\\nd\\re\\x7f',metrics=['acc'],n=-9223372036854775808", "");
	expect_row(c, 2, 1, "s=\"it's\",metrics=['acc'],n=-9223372036854775808", "");
	expect_row(c, 4, 1, "s='both \\' \"',metrics=['acc'],n=-9223372036854775808", "");
	expect_row(c, 7, 1, "s='back\\\\slash',metrics=['mae'],n=-9223372036854775808", "");
	expect_row(c, 8, 1, "s='\\\\q',metrics=['acc'],n=-9223372036854775808", "");
	expect_row(c, 10, 1, "s='\xc3\xa9',metrics=['acc'],n=-9223372036854775808", "");
	dl_model_configs_free(c);
	assert_no_leaks(&counter);
}

static bool
same_configs(const DlModelConfigs *x, const DlModelConfigs *y, int n)
{
	if (x->n < n || y->n < n)
		return false;
	for (int r = 0; r < n; r++)
		if (x->model_id[r] != y->model_id[r] || strcmp(x->compile_params[r], y->compile_params[r]) != 0 ||
			strcmp(x->fit_params[r], y->fit_params[r]) != 0)
			return false;
	return true;
}

static void
test_random_search(void **state)
{
	TestAllocCounter counter;
	DlAllocator alloc = test_allocator(&counter);
	DlModelSelectArgs a = random_args(RGRID, RFGRID, 20, true, 7);
	DlModelConfigs *c1 = gen_ok(&a, &alloc),
			   *c2,
			   *c3,
			   *c4;
	int			equal = 0;

	/* the rows the regression test pins */
	assert_int_equal(c1->n, 20);
	expect_row(c1, 0, 2, "optimizer='SGD(lr=0.0008485936212792261,momentum=0.9898990190100702)',"
			   "loss='categorical_crossentropy',metrics=['accuracy']", "batch_size=64,epochs=1");
	expect_row(c1, 1, 2, "optimizer='Adam(lr=0.06188517486694155)',loss='categorical_crossentropy',"
			   "metrics=['accuracy']", "batch_size=16,epochs=2");
	expect_row(c1, 2, 2, "optimizer='SGD(lr=0.0008815780743329169,momentum=0.9873714230911279)',"
			   "loss='categorical_crossentropy',metrics=['accuracy']", "batch_size=64,epochs=3");
	expect_row(c1, 3, 2, "optimizer='Adam(lr=0.04412745221627363)',loss='categorical_crossentropy',"
			   "metrics=['accuracy']", "batch_size=128,epochs=3");

	/* the same random_state: the same rows, also when the ids repeat */
	{
		static const int32_t ids[] = {2, 1, 2, 1};

		a.model_ids = ids;
		a.n_model_ids = 4;
		c2 = gen_ok(&a, &alloc);
		assert_true(same_configs(c1, c2, 20));
		a.model_ids = ids12;
		a.n_model_ids = 2;
	}
	/* another: other rows */
	a.random_state = 8;
	c3 = gen_ok(&a, &alloc);
	for (int r = 0; r < 20; r++)
		equal += strcmp(c1->compile_params[r], c3->compile_params[r]) == 0;
	assert_int_equal(equal, 0);
	/* configuration k depends on random_state and k only */
	a.random_state = 7;
	a.num_configs = 5;
	c4 = gen_ok(&a, &alloc);
	assert_int_equal(c4->n, 5);
	assert_true(same_configs(c1, c4, 5));
	dl_model_configs_free(c1);
	dl_model_configs_free(c2);
	dl_model_configs_free(c3);
	dl_model_configs_free(c4);

	/* without random_state the caller's entropy seeds the draw */
	a = random_args(RGRID, RFGRID, 10, false, 0);
	a.entropy = 99;
	c1 = gen_ok(&a, &alloc);
	c2 = gen_ok(&a, &alloc);
	a.entropy = 100;
	c3 = gen_ok(&a, &alloc);
	assert_true(same_configs(c1, c2, 10));
	assert_false(same_configs(c1, c3, 10));
	/* random_state 0 is a seed like any other, not "no seed" */
	a = random_args(RGRID, RFGRID, 10, true, 0);
	a.entropy = 99;
	c4 = gen_ok(&a, &alloc);
	assert_false(same_configs(c1, c4, 10));
	dl_model_configs_free(c1);
	dl_model_configs_free(c2);
	dl_model_configs_free(c3);
	dl_model_configs_free(c4);
	assert_no_leaks(&counter);
}

/* The value after "key=" in s. */
static double
value_of(const char *s, const char *key)
{
	const char *p = strstr(s, key);

	if (p == NULL)
		fail_msg("no %s in %s", key, s);
	return strtod(p + strlen(key), NULL);
}

/*
 * Draw 4000 values of [lo, hi, dist] and check the range and the mean of
 * the transformed values, which are uniform: x (linear), log10(x) (log),
 * log10(1 - x) (log_near_one).
 */
static void
check_distribution(const char *list, double lo, double hi, int dist)
{
	TestAllocCounter counter;
	DlAllocator alloc = test_allocator(&counter);
	char		grid[256];
	DlModelSelectArgs a;
	DlModelConfigs *c;
	double		sum = 0,
				want,
				width;
	int			n = 4000;

	snprintf(grid, sizeof(grid), "{'loss': ['mse'], 'optimizer_params_list': [{'x': %s}]}", list);
	a = random_args(grid, "{}", n, true, 12345);
	c = gen_ok(&a, &alloc);
	assert_int_equal(c->n, n);
	for (int r = 0; r < n; r++)
	{
		double		x = value_of(c->compile_params[r], "x=");

		if (!(x >= lo && x <= hi))
			fail_msg("%s drew %.17g", list, x);
		sum += dist == 0 ? x : (dist == 1 ? log10(x) : log10(1 - x));
	}
	if (dist == 0)
		want = (lo + hi) / 2, width = hi - lo;
	else if (dist == 1)
		want = (log10(lo) + log10(hi)) / 2, width = log10(hi) - log10(lo);
	else
		want = (log10(1 - lo) + log10(1 - hi)) / 2, width = log10(1 - lo) - log10(1 - hi);
	/* the mean of n uniforms: standard deviation width / sqrt(12 n), allow 5 of them */
	if (fabs(sum / n - want) > 5 * width / sqrt(12.0 * n))
		fail_msg("%s: mean %g, expected %g", list, sum / n, want);
	dl_model_configs_free(c);
	assert_no_leaks(&counter);
}

static void
test_distributions(void **state)
{
	check_distribution("[0.01, 0.1, 'linear']", 0.01, 0.1, 0);
	check_distribution("[-5, 5, 'linear']", -5, 5, 0);
	check_distribution("[0.0001, 0.1, 'log']", 0.0001, 0.1, 1);
	check_distribution("[1, 1000, 'log']", 1, 1000, 1);
	check_distribution("[0.9, 0.999, 'log_near_one']", 0.9, 0.999, 2);
	check_distribution("[0, 0.99, 'log_near_one']", 0, 0.99, 2);
}

/* Generate must fail with code and exactly message, and a hint. */
static void
expect_error(const DlModelSelectArgs *a, DlStatus code, const char *message)
{
	TestAllocCounter counter;
	DlAllocator alloc = test_allocator(&counter);
	DlModelConfigs *c = (DlModelConfigs *) &counter;	/* must become NULL */
	DlError		err;
	DlStatus	rc;

	dl_error_clear(&err);
	rc = dl_model_configs_generate(a, &alloc, &c, &err);
	if (rc != code || strcmp(err.msg, message) != 0)
		fail_msg("grids %s / %s: %s \"%s\"\nexpected %s \"%s\"", a->compile_grid, a->fit_grid,
				 dl_status_name(rc), err.msg, dl_status_name(code), message);
	assert_int_equal(err.code, code);
	assert_null(c);
	if (err.hint[0] == '\0')
		fail_msg("no hint for \"%s\"", err.msg);
	assert_no_leaks(&counter);
}

static void
bad_fit(const char *fgrid, const char *message)
{
	DlModelSelectArgs a = grid_args(ids12, 2, CGRID, fgrid);

	expect_error(&a, DL_ERR_PARSE, message);
}

static void
bad_grid(const char *cgrid, const char *fgrid, bool random, DlStatus code, const char *message)
{
	DlModelSelectArgs a = random ? random_args(cgrid, fgrid, 3, true, 1) : grid_args(ids12, 2, cgrid, fgrid);

	expect_error(&a, code, message);
}

static void
test_syntax_errors(void **state)
{
	char		deep[128];

	/* the grids and messages of sql/40_model_selection.sql */
	bad_fit(" {'batch_size': [64, 128}, 'epochs': [10]} ",
			"expected \",\" or \"]\" at position 25 in fit_params_grid, near \"}, 'epochs': [10]} \"");
	bad_fit(" {'batch_size': [64, 128], 'epochs': [10] ", "expected \",\" or \"}\" at the end of fit_params_grid");
	bad_fit(" {'batch_size': [64, 128]]} ", "expected \",\" or \"}\" at position 26 in fit_params_grid, near \"]} \"");
	bad_fit(" {'batch_size': [64 @ 2]} ", "expected \",\" or \"]\" at position 21 in fit_params_grid, near \"@ 2]} \"");
	bad_fit(" {'batch_size': [64, 1x]} ", "invalid number at position 22 in fit_params_grid, near \"1x]} \"");
	bad_fit(" {'batch_size': [064]} ",
			"invalid number (an integer may not start with 0) at position 18 in fit_params_grid, near \"064]} \"");
	bad_fit(" {'batch_size': [1e999]} ", "number out of range at position 18 in fit_params_grid, near \"1e999]} \"");
	bad_fit(" {'batch_size': [99999999999999999999]} ",
			"integer out of range at position 18 in fit_params_grid, near \"99999999999999999999]} \"");
	bad_fit(" {'batch_size': ['64]} ", "unterminated string at position 18 in fit_params_grid, near \"'64]} \"");
	bad_fit(" {'batch_size': [64]} {} ",
			"unexpected text after the end of the grid at position 23 in fit_params_grid, near \"{} \"");
	bad_fit(" {'batch_size', 'epochs'} ",
			"sets are not supported (expected a dict) at position 2 in fit_params_grid, near \"{'batch_size', 'epochs'}\"");
	bad_fit(" {'batch_size' [64]} ", "expected \":\" after the dict key at position 16 in fit_params_grid, near \"[64]} \"");
	bad_fit(" {'batch_size': [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[64]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]} ",
			"brackets nested too deep at position 49 in fit_params_grid, near \"[[[[64]]]]]]]]]]]]]]]]]]\"");
	/* the rest of the parser's messages */
	bad_fit("{'a': [1, ]]}", "expected \",\" or \"}\" at position 12 in fit_params_grid, near \"]}\"");
	bad_fit("{'a': [,]}", "unexpected \",\", expected a value at position 8 in fit_params_grid, near \",]}\"");
	bad_fit("{'a': [=]}", "unexpected character at position 8 in fit_params_grid, near \"=]}\"");
	bad_fit("{'a': [\xc3\xa9]}", "unexpected character at position 8 in fit_params_grid, near \"\xc3\xa9]}\"");
	bad_fit("{'a': ", "expected a value at the end of fit_params_grid");
	bad_fit("{'a': (1 2)}", "expected \",\" or \")\" at position 10 in fit_params_grid, near \"2)}\"");
	bad_fit("{'a': [(1, 2 3)]}", "expected \",\" or \")\" at position 14 in fit_params_grid, near \"3)]}\"");
	bad_fit("{[1]: [1]}", "a list or dict cannot be a dict key at position 2 in fit_params_grid, near \"[1]: [1]}\"");
	bad_fit("{'a': ['\\xZZ']}", "invalid \\x escape (give two hex digits, 01 to 7f) at position 9 in "
			"fit_params_grid, near \"\\xZZ']}\"");
	bad_fit("{'a': ['\\0']}", "a string may not hold a NUL character at position 9 in fit_params_grid, "
			"near \"\\0']}\"");
	bad_fit("{'a': ['x\ny']}", "unterminated string at position 8 in fit_params_grid, near \"'x\"");
	bad_fit("{'a': [u\"x]}", "unterminated string at position 9 in fit_params_grid, near \"\"x]}\"");
	bad_fit("{'a': ['\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9]}",
			"unterminated string at position 8 in fit_params_grid, near \"'\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
			"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"");
	/* 33 brackets deep, in a dict and around one */
	snprintf(deep, sizeof(deep), "{'a': %.*s1%.*s}", 32, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
			 32, "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]");
	bad_fit(deep, "brackets nested too deep at position 39 in fit_params_grid, near \"1]]]]]]]]]]]]]]]]]]]]]]]\"");
	bad_fit("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[{'a': 1}]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
			"brackets nested too deep at position 34 in fit_params_grid, near \"'a': 1}]]]]]]]]]]]]]]]]]\"");
	/* names, empty texts */
	bad_grid(CGRID, " {'batch_size': [sixty_four]} ", false, DL_ERR_PARSE,
			 "unknown name \"sixty_four\" at position 18 in fit_params_grid");
	bad_grid(CGRID, "{'a': [uu'x']}", false, DL_ERR_PARSE, "unknown name \"uu\" at position 8 in fit_params_grid");
	bad_grid(CGRID, "   ", false, DL_ERR_INVALID_ARGUMENT, "fit_params_grid is empty");
	bad_grid("", FGRID, false, DL_ERR_INVALID_ARGUMENT, "compile_params_grid is empty");
}

static void
test_grid_errors(void **state)
{
	/* the messages of sql/40_model_selection.sql */
	bad_grid(CGRID, "{'epochs': [1, 'linear']}", true, DL_ERR_INVALID_ARGUMENT,
			 "distribution of \"epochs\" in fit_params_grid must have 3 items, got 2: [1, 'linear']");
	bad_grid(CGRID, "{'epochs': [1, 5, 'cubic']}", true, DL_ERR_INVALID_ARGUMENT,
			 "unknown distribution 'cubic' for \"epochs\" in fit_params_grid");
	bad_grid(CGRID, "{'epochs': [5, 1, 'linear']}", true, DL_ERR_INVALID_ARGUMENT,
			 "distribution of \"epochs\" in fit_params_grid must have low < high: [5, 1, 'linear']");
	bad_grid(CGRID, "{'epochs': [None, 5, 'linear']}", true, DL_ERR_INVALID_ARGUMENT,
			 "bounds of the distribution of \"epochs\" in fit_params_grid must be numbers: [None, 5, 'linear']");
	bad_grid("{'loss': ['mse'], 'optimizer_params_list': [{'optimizer': ['SGD'], 'lr': [0, 0.1, 'log']}]}",
			 "{}", true, DL_ERR_INVALID_ARGUMENT,
			 "'log' distribution of \"lr\" in optimizer_params_list entry 1 of compile_params_grid needs 0 < low: [0, 0.1, 'log']");
	bad_grid("{'loss': ['mse'], 'optimizer_params_list': [{'optimizer': ['SGD'], 'momentum': [0.9, 1, 'log_near_one']}]}",
			 "{}", true, DL_ERR_INVALID_ARGUMENT,
			 "'log_near_one' distribution of \"momentum\" in optimizer_params_list entry 1 of compile_params_grid "
			 "needs high < 1: [0.9, 1, 'log_near_one']");
	bad_grid(RGRID, FGRID, false, DL_ERR_INVALID_ARGUMENT,
			 "cannot search from a distribution with grid search: \"lr\" in optimizer_params_list entry 1 of "
			 "compile_params_grid is [0.0001, 0.001, 'log']");
	bad_grid(CGRID, "{'epochs': [10, 'log']}", false, DL_ERR_INVALID_ARGUMENT,
			 "cannot search from a distribution with grid search: \"epochs\" in fit_params_grid is [10, 'log']");
	bad_grid(CGRID, " [{'batch_size': [64]}] ", false, DL_ERR_INVALID_ARGUMENT,
			 "fit_params_grid must be a dict, got a list");
	bad_grid(CGRID, " {'batch_size': 64} ", false, DL_ERR_INVALID_ARGUMENT,
			 "value of \"batch_size\" in fit_params_grid must be a list, got an integer 64");
	bad_grid(CGRID, " {'batch_size': []} ", false, DL_ERR_INVALID_ARGUMENT,
			 "list of \"batch_size\" in fit_params_grid is empty");
	bad_grid(CGRID, " {'batch_size': [64], 'batch_size': [32]} ", false, DL_ERR_INVALID_ARGUMENT,
			 "duplicate key 'batch_size' at position 23 in fit_params_grid");
	bad_grid(CGRID, " {'batch size': [64]} ", false, DL_ERR_INVALID_ARGUMENT,
			 "key 'batch size' at position 3 in fit_params_grid is not a parameter name");
	bad_grid(CGRID, " {1: [64]} ", false, DL_ERR_INVALID_ARGUMENT,
			 "key 1 at position 3 in fit_params_grid is not a parameter name");
	bad_grid(CGRID, " {(1, 'a'): [64]} ", false, DL_ERR_INVALID_ARGUMENT,
			 "key (1, 'a') at position 3 in fit_params_grid is not a parameter name");
	bad_grid("{'loss': ['mse'], 'optimizer_params_list': []}", "{}", false, DL_ERR_INVALID_ARGUMENT,
			 "optimizer_params_list in compile_params_grid must be a non-empty list of dicts");
	bad_grid("{'loss': ['mse'], 'optimizer_params_list': [{}]}", "{}", false, DL_ERR_INVALID_ARGUMENT,
			 "entry 1 of optimizer_params_list in compile_params_grid must be a non-empty dict, got {}");
	bad_grid("{'optimizer': ['SGD'], 'optimizer_params_list': [{'optimizer': ['Adam']}]}", "{}", false,
			 DL_ERR_INVALID_ARGUMENT,
			 "\"optimizer\" is both in optimizer_params_list and at the top of compile_params_grid");
	bad_grid("{'loss': ['mse'], 'optimizer_params_list': [{'optimizer': [1]}]}", "{}", false,
			 DL_ERR_INVALID_ARGUMENT,
			 "optimizer 1 in optimizer_params_list entry 1 of compile_params_grid is not a name");
	/* a value shown in a message is cut past 80 bytes, on a character */
	bad_grid(CGRID, "{'batch_size': '\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
			 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
			 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
			 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9'}", false, DL_ERR_INVALID_ARGUMENT,
			 "value of \"batch_size\" in fit_params_grid must be a list, got a string '\xc3\xa9\xc3\xa9\xc3\xa9"
			 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
			 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
			 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 ...");
	/* more than 100000 configurations */
	bad_grid(CGRID, "{'a': [1,2,3,4,5,6,7,8,9,10], 'b': [1,2,3,4,5,6,7,8,9,10], 'c': [1,2,3,4,5,6,7,8,9,10], "
			 "'d': [1,2,3,4,5,6,7,8,9,10]}", false, DL_ERR_LIMIT,
			 "grid search gives more than 100000 configurations");
}

/* Is s valid UTF-8 (no overlongs or surrogates checked: enough here)? */
static bool
utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *) s;

	while (*p != '\0')
	{
		int			n = *p < 0x80 ? 0 : *p >= 0xF0 ? 3 : *p >= 0xE0 ? 2 : *p >= 0xC0 ? 1 : -1;

		if (n < 0)
			return false;
		for (p++; n > 0; n--, p++)
			if ((*p & 0xC0) != 0x80)
				return false;
	}
	return true;
}

/*
 * A message longer than DlError's buffer is cut on a character: a long key
 * (any length is a name) pushes a value of two-byte characters past the
 * cut, at every byte offset.
 */
static void
test_long_message(void **state)
{
	char		grid[1024];

	for (int keylen = 400; keylen < 440; keylen++)
	{
		TestAllocCounter counter;
		DlAllocator alloc = test_allocator(&counter);
		DlModelSelectArgs a = grid_args(ids12, 1, CGRID, grid);
		DlModelConfigs *c = NULL;
		DlError		err;
		size_t		n = 0;

		n += (size_t) snprintf(grid + n, sizeof(grid) - n, "{'");
		memset(grid + n, 'k', (size_t) keylen);
		n += (size_t) keylen;
		n += (size_t) snprintf(grid + n, sizeof(grid) - n, "': '");
		for (int i = 0; i < 60; i++)
			n += (size_t) snprintf(grid + n, sizeof(grid) - n, "\xc3\xa9");
		snprintf(grid + n, sizeof(grid) - n, "'}");
		assert_int_equal(dl_model_configs_generate(&a, &alloc, &c, &err), DL_ERR_INVALID_ARGUMENT);
		if (strncmp(err.msg, "value of \"kkk", 13) != 0)
			fail_msg("%s", err.msg);
		assert_true(strlen(err.msg) >= DL_ERROR_MSG_MAX - 4);
		if (!utf8_valid(err.msg))
			fail_msg("key of %d bytes: the message is not valid UTF-8", keylen);
		assert_no_leaks(&counter);
	}
}

static void
test_arguments(void **state)
{
	DlModelSelectArgs a = grid_args(ids12, 2, CGRID, FGRID);
	DlSearchType t;
	DlError		err;

	assert_int_equal(dl_search_type_from_name("grid", &t, &err), DL_OK);
	assert_int_equal(t, DL_SEARCH_GRID);
	assert_int_equal(dl_search_type_from_name("G", &t, &err), DL_OK);
	assert_int_equal(t, DL_SEARCH_GRID);
	assert_int_equal(dl_search_type_from_name("RaNd", &t, &err), DL_OK);
	assert_int_equal(t, DL_SEARCH_RANDOM);
	assert_int_equal(dl_search_type_from_name("bayes", &t, &err), DL_ERR_INVALID_ARGUMENT);
	assert_string_equal(err.msg, "search_type must be 'grid' or 'random', got 'bayes'");
	assert_int_equal(dl_search_type_from_name("", &t, &err), DL_ERR_INVALID_ARGUMENT);
	assert_int_equal(dl_search_type_from_name("gridx", &t, &err), DL_ERR_INVALID_ARGUMENT);

	a.has_num_configs = true;
	a.num_configs = 10;
	expect_error(&a, DL_ERR_INVALID_ARGUMENT, "num_configs must be NULL for grid search, got 10");
	a.has_num_configs = false;
	a.has_random_state = true;
	a.random_state = 1;
	expect_error(&a, DL_ERR_INVALID_ARGUMENT, "random_state must be NULL for grid search, got 1");
	a = random_args(RGRID, RFGRID, 0, true, 1);
	expect_error(&a, DL_ERR_INVALID_ARGUMENT, "num_configs must be at least 1, got 0");
	a.num_configs = DL_MS_MAX_CONFIGS + 1;
	expect_error(&a, DL_ERR_LIMIT, "num_configs must be at most 100000, got 100001");
	a.has_num_configs = false;
	expect_error(&a, DL_ERR_INVALID_ARGUMENT, "num_configs must not be NULL for random search");
	a = grid_args(ids12, 0, CGRID, FGRID);
	expect_error(&a, DL_ERR_INVALID_ARGUMENT, "model_id_list is empty");
	/* the arguments are checked before the grids */
	a = grid_args(ids12, 2, "{", "{");
	a.has_num_configs = true;
	expect_error(&a, DL_ERR_INVALID_ARGUMENT, "num_configs must be NULL for grid search, got 0");
}

/* between_configs runs before every configuration. */
static void
count_call(void *arg)
{
	(*(int *) arg)++;
}

static void
test_between_configs(void **state)
{
	TestAllocCounter counter;
	DlAllocator alloc = test_allocator(&counter);
	DlModelSelectArgs a = grid_args(ids12, 2, CGRID, FGRID);
	DlModelConfigs *c;
	int			calls = 0;

	a.between_configs = count_call;
	a.between_configs_arg = &calls;
	c = gen_ok(&a, &alloc);
	assert_int_equal(calls, c->n);
	dl_model_configs_free(c);
	a = random_args(RGRID, RFGRID, 7, true, 3);
	a.between_configs = count_call;
	a.between_configs_arg = &calls;
	calls = 0;
	c = gen_ok(&a, &alloc);
	assert_int_equal(calls, 7);
	dl_model_configs_free(c);
	assert_no_leaks(&counter);
}

/* Every allocation failing in turn: DL_ERR_NO_MEMORY, nothing leaked. */
static void
check_alloc_failures(const DlModelSelectArgs *a)
{
	TestAllocCounter counter;
	DlAllocator alloc = test_allocator(&counter);
	DlModelConfigs *c = gen_ok(a, &alloc);
	int64_t		total = counter.total;

	dl_model_configs_free(c);
	for (int64_t k = 0; k < total; k++)
	{
		DlError		err;
		DlStatus	rc;

		alloc = test_allocator(&counter);
		counter.fail_after = k;
		c = NULL;
		rc = dl_model_configs_generate(a, &alloc, &c, &err);
		if (rc != DL_ERR_NO_MEMORY)
			fail_msg("allocation %lld failing gave %s (%s)", (long long) k, dl_status_name(rc), err.msg);
		assert_null(c);
		assert_no_leaks(&counter);
	}
	assert_true(total > 2);
}

static void
test_alloc_failures(void **state)
{
	DlModelSelectArgs a = grid_args(ids12, 2, CGRID, FGRID);
	char		big[8192];
	size_t		n = 0;

	check_alloc_failures(&a);
	a = random_args(RGRID, RFGRID, 30, true, 5);
	check_alloc_failures(&a);
	/* a grid whose arrays grow past the arena's small-request size */
	n += (size_t) snprintf(big, sizeof(big), "{'a': [");
	for (int i = 0; i < 2000 && n < sizeof(big) - 16; i++)
		n += (size_t) snprintf(big + n, sizeof(big) - n, "%d,", i % 10);
	snprintf(big + n, sizeof(big) - n, "]}");
	a = grid_args(ids12, 1, "{'loss': ['mse'], 'optimizer': ['SGD']}", big);
	check_alloc_failures(&a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grid_search),
		cmocka_unit_test(test_repr),
		cmocka_unit_test(test_random_search),
		cmocka_unit_test(test_distributions),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_grid_errors),
		cmocka_unit_test(test_long_message),
		cmocka_unit_test(test_arguments),
		cmocka_unit_test(test_between_configs),
		cmocka_unit_test(test_alloc_failures),
	};

	return cmocka_run_group_tests_name("model_select", tests, NULL, NULL);
}
