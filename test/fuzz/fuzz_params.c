/*-------------------------------------------------------------------------
 *
 * fuzz_params.c
 *	  libFuzzer target: MADlib compile_params and fit_params strings.
 *
 * The input, cut at its first NUL, is parsed by dl_compile_params_parse
 * and dl_fit_params_parse.  A refused string must give a well-formed
 * error.  An accepted one is written back with the canonical writers,
 * which must succeed; the text must parse again to the same values and
 * format to the same text.
 *
 * IDENTIFICATION
 *	  test/fuzz/fuzz_params.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz_util.h"
#include "madlib_dl/dl_early_stop.h"
#include "madlib_dl/dl_params.h"

#define FMT_MAX 32768		/* a class_weight of 1024 classes needs about 23 kB */

/* a and b equal, NaN equal to NaN (the parser should refuse NaN anyway) */
static bool
same_double(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

static void
check_compile_equal(const DlCompileParams *a, const DlCompileParams *b, const char *text)
{
	const DlOptimConfig *x = &a->optim,
			   *y = &b->optim;

	FUZZ_CHECK(a->loss == b->loss && a->metric == b->metric, "loss/metric differ after %s", text);
	FUZZ_CHECK(a->metric != DL_METRIC_TOP_K_CATEGORICAL_ACCURACY ||
			   (a->top_k == b->top_k && a->top_k_named == b->top_k_named),
			   "top_k differs after %s", text);
	FUZZ_CHECK(x->kind == y->kind && x->nesterov == y->nesterov && x->amsgrad == y->amsgrad &&
			   x->centered == y->centered, "optimizer flags differ after %s", text);
	FUZZ_CHECK(same_double(x->lr, y->lr) && same_double(x->momentum, y->momentum) &&
			   same_double(x->decay, y->decay) && same_double(x->beta_1, y->beta_1) &&
			   same_double(x->beta_2, y->beta_2) && same_double(x->epsilon, y->epsilon) &&
			   same_double(x->rho, y->rho) &&
			   same_double(x->initial_accumulator_value, y->initial_accumulator_value) &&
			   same_double(x->schedule_decay, y->schedule_decay) &&
			   same_double(x->clipnorm, y->clipnorm) && same_double(x->clipvalue, y->clipvalue),
			   "optimizer values differ after %s", text);
}

static void
fuzz_compile(const char *s)
{
	size_t		slen = strlen(s);

	DlCompileParams p,
				q;
	DlError		err;
	DlStatus	st;
	char		buf[FMT_MAX],
				buf2[FMT_MAX];

	dl_error_clear(&err);
	st = dl_compile_params_parse(s, &p, &err);
	if (st != DL_OK)
	{
		fuzz_check_error_in(st, &err, (const uint8_t *) s, slen);
		return;
	}
	st = dl_compile_params_format(&p, buf, sizeof(buf), &err);
	FUZZ_CHECK(st == DL_OK, "format failed: %s", err.msg);
	FUZZ_CHECK(strlen(buf) < sizeof(buf), "format not terminated");
	st = dl_compile_params_parse(buf, &q, &err);
	FUZZ_CHECK(st == DL_OK, "canonical string \"%s\" does not parse: %s", buf, err.msg);
	check_compile_equal(&p, &q, buf);
	st = dl_compile_params_format(&q, buf2, sizeof(buf2), &err);
	FUZZ_CHECK(st == DL_OK && strcmp(buf, buf2) == 0, "format not stable: \"%s\" vs \"%s\"",
			   buf, buf2);
	/* a too-small buffer gives DL_ERR_LIMIT and stays terminated */
	{
		size_t		small = strlen(buf) / 2;
		char		tiny[FMT_MAX];

		st = dl_compile_params_format(&p, tiny, small, &err);
		FUZZ_CHECK(st == DL_ERR_LIMIT, "format into %zu bytes gave %d", small, (int) st);
		FUZZ_CHECK(small == 0 || strlen(tiny) < small, "short buffer not terminated");
	}
}

static void
fuzz_fit(const char *s)
{
	size_t		slen = strlen(s);

	DlFitParams p,
				q;
	DlError		err;
	DlStatus	st;
	char		buf[FMT_MAX],
				buf2[FMT_MAX];

	dl_error_clear(&err);
	st = dl_fit_params_parse(s, &p, &err);
	if (st != DL_OK)
	{
		fuzz_check_error_in(st, &err, (const uint8_t *) s, slen);
		return;
	}
	FUZZ_CHECK(p.batch_size >= 1 && p.epochs >= 1, "accepted batch_size %lld epochs %d",
			   (long long) p.batch_size, p.epochs);
	st = dl_fit_params_format(&p, buf, sizeof(buf), &err);
	FUZZ_CHECK(st == DL_OK, "format failed: %s", err.msg);
	st = dl_fit_params_parse(buf, &q, &err);
	FUZZ_CHECK(st == DL_OK, "canonical string \"%s\" does not parse: %s", buf, err.msg);
	FUZZ_CHECK(p.batch_size == q.batch_size && p.epochs == q.epochs && p.shuffle == q.shuffle &&
			   p.has_seed == q.has_seed && (!p.has_seed || p.seed == q.seed) &&
			   p.initial_epoch == q.initial_epoch && p.n_class_weight == q.n_class_weight,
			   "fit values differ after \"%s\"", buf);
	for (int c = 0; c < p.n_class_weight; c++)
		FUZZ_CHECK(p.class_weight[c] == q.class_weight[c] ||
				   (isnan(p.class_weight[c]) && isnan(q.class_weight[c])),
				   "class_weight of class %d differs after \"%s\"", c, buf);
	st = dl_fit_params_format(&q, buf2, sizeof(buf2), &err);
	FUZZ_CHECK(st == DL_OK && strcmp(buf, buf2) == 0, "format not stable: \"%s\" vs \"%s\"",
			   buf, buf2);
}

/* early_stopping: refused cleanly, or canonical and stable (dl_early_stop.h) */
static void
fuzz_early_stop(const char *s)
{
	size_t		slen = strlen(s);
	DlEarlyStopConfig p,
				q;
	DlError		err;
	DlStatus	st;
	char		buf[FMT_MAX],
				buf2[FMT_MAX];

	dl_error_clear(&err);
	st = dl_early_stop_parse(s, &p, &err);
	if (st != DL_OK)
	{
		fuzz_check_error_in(st, &err, (const uint8_t *) s, slen);
		return;
	}
	FUZZ_CHECK(p.patience >= 0 && p.start_from >= 0 && p.min_delta >= 0 && isfinite(p.min_delta),
			   "accepted patience %d start %d min_delta %g", p.patience, p.start_from, p.min_delta);
	st = dl_early_stop_format(&p, buf, sizeof(buf), &err);
	FUZZ_CHECK(st == DL_OK, "format failed: %s", err.msg);
	if (!p.enabled)
		return;
	st = dl_early_stop_parse(buf, &q, &err);
	FUZZ_CHECK(st == DL_OK, "canonical string \"%s\" does not parse: %s", buf, err.msg);
	st = dl_early_stop_format(&q, buf2, sizeof(buf2), &err);
	FUZZ_CHECK(st == DL_OK && strcmp(buf, buf2) == 0, "format not stable: \"%s\" vs \"%s\"",
			   buf, buf2);
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	   *s = malloc(size + 1);

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	fuzz_compile(s);
	fuzz_fit(s);
	fuzz_early_stop(s);
	free(s);
	return 0;
}
