/*-------------------------------------------------------------------------
 *
 * test_metrics.c
 *	  Unit tests: several metrics at once (dl_metrics.h) against
 *	  scikit-learn, and AUC against a transcription of Keras' method.
 *
 * fixtures/metrics_sklearn.txt is written by
 * fixtures/gen_metrics_sklearn.py (sklearn and numpy from Debian): seeded
 * predictions and one-hot labels, and sklearn's accuracy,
 * top_k_accuracy_score, precision_score, recall_score, roc_auc_score,
 * mean_absolute_error and mean_squared_error.  Every value must agree
 * within 1e-6 (the counts are exact; mae and mse differ by rounding
 * only), AUC within 1e-9 of Keras' 200-threshold method and within 1e-3
 * of sklearn's exact AUC, except where the predictions crowd near 0 and
 * 1 (case peaked3), where Keras' thresholds cannot resolve them: there
 * the distance to the exact value is printed and must be Keras' own.
 * The sums are also split across two "segments" and added, which must
 * give the same values.
 *
 * IDENTIFICATION
 *	  test/unit/test_metrics.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_metrics.h"

#define N_REF 8

static const char *const ref_names[N_REF] = {
	"accuracy", "top_k_categorical_accuracy", "precision", "recall", "auc_exact",
	"auc_keras", "mae", "mse"
};

typedef struct MCase
{
	char		name[32];
	int64_t		B;
	int64_t		K;
	int			top_k;
	float	   *y;
	float	   *p;
	double		ref[N_REF];
} MCase;

/* Read the next case from *s (advanced); false at the end. */
static bool
read_case(char **s, MCase *c)
{
	char	   *line;
	char	   *end;

	memset(c, 0, sizeof(*c));
	while (**s == '\n')
		(*s)++;
	if (**s == '\0')
		return false;
	if (sscanf(*s, "case %31s %lld %lld %d", c->name, (long long *) &c->B, (long long *) &c->K,
			   &c->top_k) != 4)
		fail_msg("bad case line");
	*s = strchr(*s, '\n') + 1;
	c->y = malloc(sizeof(float) * c->B * c->K);
	c->p = malloc(sizeof(float) * c->B * c->K);
	for (int v = 0; v < 2; v++)
	{
		float	   *dst = v == 0 ? c->y : c->p;

		line = *s + 2;
		for (int64_t i = 0; i < c->B * c->K; i++)
		{
			dst[i] = strtof(line, &end);
			assert_true(end != line);
			line = end;
		}
		*s = strchr(line, '\n') + 1;
	}
	for (;;)
	{
		char		key[64];
		char		val[64];

		if (strncmp(*s, "end", 3) == 0)
		{
			*s = strchr(*s, '\n') + 1;
			return true;
		}
		assert_int_equal(sscanf(*s, "%63s %63s", key, val), 2);
		for (int r = 0; r < N_REF; r++)
			if (strcmp(key, ref_names[r]) == 0)
				c->ref[r] = strtod(val, NULL);
		*s = strchr(*s, '\n') + 1;
	}
}

/* The value of kind over the case, the sums split at row `split` and added. */
static double
value_of(const MCase *c, DlMetricKind kind, int64_t split)
{
	double	   *a = calloc(DL_METRIC_ACC_MAX, sizeof(double));
	double	   *b = calloc(DL_METRIC_ACC_MAX, sizeof(double));
	int			len = dl_metric_acc_len(kind);
	double		v;

	assert_true(len >= 1 && len <= DL_METRIC_ACC_MAX);
	dl_metric_acc_add(kind, c->top_k, c->p, c->y, split, c->K, a);
	dl_metric_acc_add(kind, c->top_k, c->p + split * c->K, c->y + split * c->K, c->B - split,
					  c->K, b);
	for (int i = 0; i < len; i++)
		a[i] += b[i];
	v = dl_metric_acc_value(kind, a, c->B);
	free(a);
	free(b);
	return v;
}

static void
test_against_sklearn(void **state)
{
	size_t		len;
	char	   *text = read_fixture("metrics_sklearn.txt", &len);
	char	   *s = text;
	MCase		c;
	int			n_cases = 0;
	double		worst = 0;
	double		worst_auc_keras = 0;
	double		worst_auc_exact = 0;

	(void) state;
	assert_non_null(text);
	while (read_case(&s, &c))
	{
		DlMetricKind acc = c.K == 1 ? DL_METRIC_BINARY_ACCURACY : DL_METRIC_CATEGORICAL_ACCURACY;
		double		got[N_REF];
		double		exact_gap;

		/* dl_metric_resolve gives the accuracy Keras picks for crossentropy */
		assert_int_equal(dl_metric_resolve(DL_METRIC_ACCURACY,
										   c.K == 1 ? DL_LOSS_BINARY_CROSSENTROPY :
										   DL_LOSS_CATEGORICAL_CROSSENTROPY, c.K), acc);
		for (int64_t split = 0; split <= c.B; split += c.B / 3 + 1)
		{
			got[0] = value_of(&c, acc, split);
			got[1] = c.K > 1 ? value_of(&c, DL_METRIC_TOP_K_CATEGORICAL_ACCURACY, split) : NAN;
			got[2] = value_of(&c, DL_METRIC_PRECISION, split);
			got[3] = value_of(&c, DL_METRIC_RECALL, split);
			got[4] = got[5] = value_of(&c, DL_METRIC_AUC, split);
			got[6] = value_of(&c, DL_METRIC_MAE, split);
			got[7] = value_of(&c, DL_METRIC_MSE, split);
			for (int r = 0; r < N_REF; r++)
			{
				if (r == 4 || r == 5 || (r == 1 && c.K == 1))
					continue;
				if (!(fabs(got[r] - c.ref[r]) <= 1e-6))
					fail_msg("%s %s: %.12g, sklearn %.12g", c.name, ref_names[r], got[r], c.ref[r]);
				worst = fmax(worst, fabs(got[r] - c.ref[r]));
			}
			if (!(fabs(got[5] - c.ref[5]) <= 1e-9))
				fail_msg("%s auc: %.12g, Keras' method %.12g", c.name, got[5], c.ref[5]);
			worst_auc_keras = fmax(worst_auc_keras, fabs(got[5] - c.ref[5]));
			exact_gap = fabs(got[4] - c.ref[4]);
			if (strcmp(c.name, "peaked3") != 0 && !(exact_gap <= 1e-3))
				fail_msg("%s auc: %.12g, sklearn's exact %.12g", c.name, got[4], c.ref[4]);
			if (strcmp(c.name, "peaked3") != 0)
				worst_auc_exact = fmax(worst_auc_exact, exact_gap);
			if (split == 0)
				printf("metrics %s: auc %.6f, exact %.6f (gap %.2e)\n", c.name, got[4], c.ref[4],
					   exact_gap);
		}
		free(c.y);
		free(c.p);
		n_cases++;
	}
	assert_true(n_cases >= 4);
	printf("metrics vs sklearn: max |difference| %.3g (accuracy, top-k, precision, recall, mae, mse); "
		   "auc vs Keras' method %.3g; auc vs exact %.3g (peaked3 excluded)\n",
		   worst, worst_auc_keras, worst_auc_exact);
	free(text);
}

static void
test_edges(void **state)
{
	/* no positive prediction: precision 0 (Keras' divide_no_nan); a NaN is negative */
	const float y[4] = {1, 0, 0, 1};
	const float p[4] = {0.2f, 0.4f, NAN, 0.5f};
	double		acc[DL_METRIC_ACC_MAX];
	DlMetricKind k;
	DlError		err;

	(void) state;
	memset(acc, 0, sizeof(acc));
	dl_metric_acc_add(DL_METRIC_PRECISION, 0, p, y, 4, 1, acc);
	assert_true(dl_metric_acc_value(DL_METRIC_PRECISION, acc, 4) == 0.0);
	assert_true(dl_metric_acc_value(DL_METRIC_RECALL, acc, 4) == 0.0);
	/* thresholds as Keras places them */
	assert_true(dl_auc_threshold(0) == -1e-7);
	assert_true(dl_auc_threshold(199) == 1.0 + 1e-7);
	assert_true(fabs(dl_auc_threshold(1) - 1.0 / 199) < 1e-15);
	/* a perfect ranking gives 1, a reversed one 0 */
	{
		const float yy[4] = {0, 0, 1, 1};
		const float pp[4] = {0.1f, 0.2f, 0.8f, 0.9f};
		const float rr[4] = {0.9f, 0.8f, 0.2f, 0.1f};

		memset(acc, 0, sizeof(acc));
		dl_metric_acc_add(DL_METRIC_AUC, 0, pp, yy, 4, 1, acc);
		assert_true(fabs(dl_metric_acc_value(DL_METRIC_AUC, acc, 4) - 1.0) < 1e-12);
		memset(acc, 0, sizeof(acc));
		dl_metric_acc_add(DL_METRIC_AUC, 0, rr, yy, 4, 1, acc);
		assert_true(fabs(dl_metric_acc_value(DL_METRIC_AUC, acc, 4)) < 1e-12);
	}
	/* names */
	dl_error_clear(&err);
	assert_int_equal(dl_metrics_from_name("auc", &k, &err), DL_OK);
	assert_int_equal(k, DL_METRIC_AUC);
	assert_int_equal(dl_metrics_from_name("Recall", &k, &err), DL_OK);
	assert_int_equal(k, DL_METRIC_RECALL);
	assert_int_equal(dl_metrics_from_name("mse", &k, &err), DL_OK);
	assert_int_equal(k, DL_METRIC_MSE);
	assert_int_equal(dl_metrics_from_name("f1", &k, &err), DL_ERR_INVALID_ARGUMENT);
	assert_int_equal(dl_metric_acc_len(DL_METRIC_AUC), 4 * DL_AUC_THRESHOLDS);
	assert_int_equal(dl_metric_acc_len(DL_METRIC_NONE), 0);
}

/* A list's sums are its metrics' one after the other, split as the batches come. */
static void
test_list(void **state)
{
	static const DlMetricKind kinds[3] = {DL_METRIC_ACCURACY, DL_METRIC_AUC, DL_METRIC_MSE};
	static const int top_k[3] = {5, 5, 5};
	const DlMetricList l = {3, kinds, top_k};
	/* 4 samples of 2 classes, one-hot */
	const float y[8] = {1, 0, 0, 1, 1, 0, 0, 1};
	const float p[8] = {0.7f, 0.3f, 0.4f, 0.6f, 0.2f, 0.8f, 0.1f, 0.9f};
	double		whole[1 + 4 * DL_AUC_THRESHOLDS + 1];
	double		split[1 + 4 * DL_AUC_THRESHOLDS + 1];
	double		one[1 + 4 * DL_AUC_THRESHOLDS + 1];
	double		v[3];
	double		w[3];

	(void) state;
	assert_int_equal(dl_metric_list_acc_len(&l), 1 + 4 * DL_AUC_THRESHOLDS + 1);
	memset(whole, 0, sizeof(whole));
	memset(split, 0, sizeof(split));
	dl_metric_list_acc_add(&l, DL_LOSS_CATEGORICAL_CROSSENTROPY, p, y, 4, 2, whole);
	dl_metric_list_acc_add(&l, DL_LOSS_CATEGORICAL_CROSSENTROPY, p, y, 1, 2, split);
	dl_metric_list_acc_add(&l, DL_LOSS_CATEGORICAL_CROSSENTROPY, p + 2, y + 2, 3, 2, split);
	dl_metric_list_values(&l, whole, 4, v);
	dl_metric_list_values(&l, split, 4, w);
	assert_true(fabs(v[0] - 0.75) < 1e-12);	/* accuracy: 3 of 4 */
	for (int i = 0; i < 3; i++)
		assert_true(v[i] == w[i]);
	/* each metric's slice is its own sums */
	memset(one, 0, sizeof(one));
	dl_metric_acc_add(DL_METRIC_AUC, 5, p, y, 4, 2, one);
	assert_true(dl_metric_acc_value(DL_METRIC_AUC, one, 4) == v[1]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_sklearn),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_list),
	};

	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
