/*-------------------------------------------------------------------------
 *
 * fuzz_grid.c
 *	  libFuzzer target: the model selection grids (dl_model_configs_generate)
 *	  and the Python-literal lexer under them (dl_pylit_next).
 *
 * Byte 0 picks the use of the rest of the input: bit 0 random search (3
 * configurations, random_state from byte 0) or grid search; bit 1 the rest
 * is the fit grid (with a fixed compile grid) or the compile grid (with
 * the fit grid {}).  The seeds start with '0' to '3'.
 *
 * The rest is first lexed whole, NUL bytes included, in both modes: the
 * tokens must come in order, inside the input, with only whitespace
 * between them, and a STRING decodes to at most its length.  Then, cut at
 * its first NUL, it is the grid.  A refused grid must give a well-formed
 * error, no configurations and no leak.  An accepted one gives at most
 * 100000 configurations whose strings are valid UTF-8 when the input is;
 * random search must give the same rows again for the same random_state;
 * and with one allocation failing the call must give DL_ERR_NO_MEMORY
 * and leak nothing.  A grid random search accepts is also a search space:
 * a TPE search over it (scores from the configurations' strings) must
 * propose only points whose strings can be written, and leak nothing.
 * The text is also read as automl_params for each method: accepted, or
 * refused with a well-formed error.
 *
 * IDENTIFICATION
 *	  test/fuzz/fuzz_grid.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz_util.h"
#include "madlib_dl/dl_automl.h"
#include "madlib_dl/dl_model_select.h"
#include "madlib_dl/dl_pylit.h"

#define FIXED_COMPILE "{'loss': ['mse'], 'optimizer_params_list': [{'optimizer': ['SGD'], 'lr': [0.01]}]}"

static void
fuzz_lexer(const char *s, size_t len, DlPylitMode mode)
{
	DlPylitLexer lx;
	DlPylitToken tok;
	size_t		prev = 0;
	char	   *buf = malloc(len + 1);

	FUZZ_CHECK(buf != NULL, "out of memory");
	dl_pylit_init(&lx, s, 0, len, mode);
	for (;;)
	{
		dl_pylit_next(&lx, &tok);
		FUZZ_CHECK(tok.begin >= prev && tok.end <= len && tok.end >= tok.begin,
				   "token [%zu, %zu) after %zu of %zu", tok.begin, tok.end, prev, len);
		for (size_t i = prev; i < tok.begin; i++)
			FUZZ_CHECK(dl_pylit_is_space(s[i]), "byte %zu skipped", i);
		if (tok.kind == DL_PYLIT_END)
			break;
		FUZZ_CHECK(tok.end > tok.begin, "empty token at %zu", tok.begin);
		if (tok.kind == DL_PYLIT_ERROR)
			FUZZ_CHECK(tok.problem != DL_PYLIT_NO_PROBLEM && tok.problem_at >= tok.begin &&
					   tok.problem_at <= tok.end, "error token without a problem inside it");
		if (tok.kind == DL_PYLIT_FLOAT)
			FUZZ_CHECK(isfinite(tok.f), "FLOAT not finite");
		if (tok.kind == DL_PYLIT_STRING && mode == DL_PYLIT_STRICT)
		{
			size_t		n = dl_pylit_string_decode(s, &tok, buf);

			FUZZ_CHECK(n + 2 <= tok.end - tok.begin && strlen(buf) == n,
					   "string [%zu, %zu) decoded to %zu bytes", tok.begin, tok.end, n);
		}
		prev = tok.end;
	}
	/* END stays END */
	dl_pylit_next(&lx, &tok);
	FUZZ_CHECK(tok.kind == DL_PYLIT_END, "a token after END");
	free(buf);
}

static bool
same_configs(const DlModelConfigs *a, const DlModelConfigs *b)
{
	if (a->n != b->n)
		return false;
	for (int r = 0; r < a->n; r++)
		if (a->model_id[r] != b->model_id[r] || strcmp(a->compile_params[r], b->compile_params[r]) != 0 ||
			strcmp(a->fit_params[r], b->fit_params[r]) != 0)
			return false;
	return true;
}

static void
fuzz_generate(const char *grid, uint8_t mode)
{
	static const int32_t ids[] = {3, 1, 3};
	FuzzAllocCounter counter;
	DlAllocator alloc = fuzz_allocator(&counter);
	DlModelSelectArgs a;
	DlModelConfigs *c = NULL,
			   *c2 = NULL;
	DlError		err;
	DlStatus	st;
	size_t		len = strlen(grid);
	bool		utf8 = fuzz_utf8_valid((const uint8_t *) grid, len);
	int64_t		total;

	memset(&a, 0, sizeof(a));
	a.model_ids = ids;
	a.n_model_ids = 3;
	a.compile_grid = (mode & 2) ? FIXED_COMPILE : grid;
	a.fit_grid = (mode & 2) ? grid : "{}";
	if (mode & 1)
	{
		a.search = DL_SEARCH_RANDOM;
		a.has_num_configs = true;
		a.num_configs = 3;
		a.has_random_state = true;
		a.random_state = mode >> 2;
	}
	dl_error_clear(&err);
	st = dl_model_configs_generate(&a, &alloc, &c, &err);
	if (st != DL_OK)
	{
		fuzz_check_error_in(st, &err, (const uint8_t *) grid, len);
		FUZZ_CHECK(c == NULL, "configurations after an error");
		FUZZ_NO_LEAKS(&counter);
		return;
	}
	FUZZ_CHECK(c != NULL && c->n >= 1 && c->n <= DL_MS_MAX_CONFIGS, "bad configuration count");
	for (int r = 0; r < c->n; r++)
	{
		FUZZ_CHECK(c->model_id[r] == 1 || c->model_id[r] == 3, "model id %d", c->model_id[r]);
		if (utf8)
			FUZZ_CHECK(fuzz_utf8_valid((const uint8_t *) c->compile_params[r], strlen(c->compile_params[r])) &&
					   fuzz_utf8_valid((const uint8_t *) c->fit_params[r], strlen(c->fit_params[r])),
					   "row %d is not valid UTF-8", r);
	}
	total = counter.total;
	if (mode & 1)
	{
		st = dl_model_configs_generate(&a, &alloc, &c2, &err);
		FUZZ_CHECK(st == DL_OK && same_configs(c, c2), "random search not repeatable");
		dl_model_configs_free(c2);
	}
	dl_model_configs_free(c);
	FUZZ_NO_LEAKS(&counter);

	/* one allocation failing, picked from the input */
	alloc = fuzz_allocator(&counter);
	counter.fail_after = (int64_t) (len * 7 % (size_t) total);
	c = NULL;
	st = dl_model_configs_generate(&a, &alloc, &c, &err);
	FUZZ_CHECK(st == DL_ERR_NO_MEMORY && c == NULL, "allocation %lld of %lld failing gave %d",
			   (long long) counter.fail_after, (long long) total, (int) st);
	FUZZ_NO_LEAKS(&counter);
}

/* A score from a configuration's strings (FNV-1a), so that TPE has something to learn. */
static double
string_score(const char *a, const char *b)
{
	uint64_t	h = 1469598103934665603ULL;

	for (const char *p = a; *p; p++)
		h = (h ^ (uint8_t) *p) * 1099511628211ULL;
	for (const char *p = b; *p; p++)
		h = (h ^ (uint8_t) *p) * 1099511628211ULL;
	return (double) (h % 1000) / 1000.0;
}

/* A random-search grid as a search space: a TPE search over it. */
static void
fuzz_search(const char *grid, uint8_t mode)
{
	static const int32_t ids[] = {3, 1, 3};
	FuzzAllocCounter counter;
	DlAllocator alloc = fuzz_allocator(&counter);
	DlSearchSpace *s = NULL;
	DlAutoml   *am = NULL;
	DlAutomlParams p;
	DlAutomlJob job;
	DlError		err;
	int			n = 0;

	dl_error_clear(&err);
	if (dl_search_space_create(ids, 3, (mode & 2) ? FIXED_COMPILE : grid, (mode & 2) ? grid : "{}",
							   &alloc, &s, &err) != DL_OK)
	{
		FUZZ_CHECK(s == NULL, "a space after an error");
		FUZZ_NO_LEAKS(&counter);
		return;
	}
	FUZZ_CHECK(dl_automl_params_parse(DL_AUTOML_HYPEROPT, "num_configs=6, num_iterations=1", &p, &err) == DL_OK,
			   "hyperopt params");
	FUZZ_CHECK(dl_automl_create(&p, s, 2, true, mode, 0, &alloc, &am, &err) == DL_OK, "create: %s", err.msg);
	for (;;)
	{
		int			started[2];
		int			k = 0;

		while (k < 2 && dl_automl_next(am, &job, &err))
			started[k++] = job.config;
		FUZZ_CHECK(err.code == DL_OK, "a proposal failed: %s", err.msg);
		if (k == 0)
			break;
		for (int i = 0; i < k; i++)
		{
			int32_t		id;
			char	   *cp,
					   *fp;

			FUZZ_CHECK(dl_search_space_config(s, dl_automl_point(am, started[i]), &id, &cp, &fp, &alloc,
											  &err) == DL_OK, "a proposal outside the space: %s", err.msg);
			FUZZ_CHECK(id == 1 || id == 3, "model id %d", id);
			dl_automl_report(am, started[i], string_score(cp, fp));
			dl_free(&alloc, cp);
			dl_free(&alloc, fp);
			n++;
		}
	}
	FUZZ_CHECK(n == 6, "%d configurations of 6", n);
	dl_automl_free(am);
	dl_search_space_free(s);
	FUZZ_NO_LEAKS(&counter);
}

/* The text as automl_params of each method. */
static void
fuzz_automl_params(const char *text)
{
	size_t		len = strlen(text);

	for (int m = 0; m < 3; m++)
	{
		DlAutomlParams p;
		DlError		err;
		DlStatus	st;

		dl_error_clear(&err);
		st = dl_automl_params_parse((DlAutomlMethod) m, text, &p, &err);
		if (st != DL_OK)
		{
			fuzz_check_error_in(st, &err, (const uint8_t *) text, len);
			continue;
		}
		FUZZ_CHECK(dl_automl_max_configs(&p) >= 1 && dl_automl_max_configs(&p) <= DL_AUTOML_MAX_CONFIGS &&
				   dl_automl_max_iterations(&p) >= 1 &&
				   dl_automl_max_iterations(&p) <= DL_AUTOML_MAX_ITERATIONS, "params out of range");
	}
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	   *s;

	if (size < 1)
		return 0;
	s = malloc(size);
	if (s == NULL)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	fuzz_lexer(s, size - 1, DL_PYLIT_STRICT);
	fuzz_lexer(s, size - 1, DL_PYLIT_LENIENT);
	fuzz_generate(s, data[0]);
	if (data[0] & 1)
		fuzz_search(s, data[0]);
	fuzz_automl_params(s);
	free(s);
	return 0;
}
