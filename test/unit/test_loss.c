/*-------------------------------------------------------------------------
 *
 * test_loss.c
 *	  Unit tests: loss values, loss gradients (central finite differences),
 *	  clipping, label checks, metrics and name lookup.
 *
 * Loss values are compared with numbers worked out by hand (written as
 * the log/arithmetic expression they come from).  Gradients are compared
 * with central differences of dl_loss_compute, which returns a double:
 * each y_pred float is moved by +-h, and the difference is divided by the
 * actual distance between the two perturbed floats.
 *
 * IDENTIFICATION
 *	  test/unit/test_loss.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_loss.h"

#define EPS 1e-7

/* Deterministic pseudo-random floats in [lo, hi). */
static float
lcg_uniform(uint32_t *s, float lo, float hi)
{
	*s = *s * 1664525u + 1013904223u;
	return lo + (hi - lo) * (float) ((*s >> 8) / 16777216.0);
}

/*
 * Compare grad (computed with grad_scale) against central differences of
 * the loss sum, element by element.
 *	 y_pred (B, K), y_true (B, width)
 */
static void
check_gradient(DlLossKind kind, const float *y_pred, const float *y_true, int64_t B, int64_t K,
			   double h, double rtol, const char *what)
{
	float		p[64],
				g[64];
	double		scale = 0.5;

	assert_true(B * K <= 64);
	memcpy(p, y_pred, sizeof(float) * (size_t) (B * K));
	dl_loss_compute(kind, g, p, y_true, B, K, scale);
	for (int64_t i = 0; i < B * K; i++)
	{
		float		orig = p[i];
		float		up = (float) (orig + h),
					down = (float) (orig - h);
		double		lu,
					ld,
					fd;

		p[i] = up;
		lu = dl_loss_compute(kind, NULL, p, y_true, B, K, 1.0);
		p[i] = down;
		ld = dl_loss_compute(kind, NULL, p, y_true, B, K, 1.0);
		p[i] = orig;
		fd = scale * (lu - ld) / ((double) up - (double) down);
		if (!(fabs(g[i] - fd) <= rtol * fabs(fd) + 1e-6))
			fail_msg("%s: grad[%lld] = %.9g, finite difference %.9g", what, (long long) i,
					 (double) g[i], fd);
	}
}

static void
test_categorical_crossentropy(void **state)
{
	/* rows 0 and 1 sum to 1; row 2 sums to 4 and is normalised first */
	const float p[3 * 3] = {0.7f, 0.2f, 0.1f, 0.1f, 0.1f, 0.8f, 2.0f, 1.0f, 1.0f};
	const float y[3 * 3] = {1, 0, 0, 0, 0, 1, 0, 1, 0};
	float		g[9];
	double		expect = -log(0.7) - log(0.8) - log(0.25);
	uint32_t	seed = 1;
	float		rp[4 * 5],
				ry[4 * 5];

	assert_close(dl_loss_compute(DL_LOSS_CATEGORICAL_CROSSENTROPY, NULL, p, y, 3, 3, 1.0),
				 expect, 1e-6, 0);
	/* the gradient call returns the same value */
	assert_close(dl_loss_compute(DL_LOSS_CATEGORICAL_CROSSENTROPY, g, p, y, 3, 3, 1.0),
				 expect, 1e-6, 0);
	/* normalised row: dL/dp = -y/p + sum(y); unnormalised row 2: (-y/q + 1)/4 */
	assert_close(g[0], -1 / 0.7 + 1, 1e-6, 0);
	assert_close(g[1], 1.0, 1e-6, 0);
	assert_close(g[7], (-1 / 0.25 + 1) / 4.0, 1e-6, 0);
	assert_close(g[6], 0.25, 1e-6, 0);
	check_gradient(DL_LOSS_CATEGORICAL_CROSSENTROPY, p, y, 3, 3, 1e-3, 1e-4, "cce fixed");

	/* random rows that do not sum to 1, soft labels */
	for (int i = 0; i < 20; i++)
	{
		rp[i] = lcg_uniform(&seed, 0.05f, 1.0f);
		ry[i] = lcg_uniform(&seed, 0.0f, 1.0f);
	}
	check_gradient(DL_LOSS_CATEGORICAL_CROSSENTROPY, rp, ry, 4, 5, 1e-3, 1e-4, "cce random");
}

static void
test_sparse_matches_categorical(void **state)
{
	const float p[3 * 4] = {0.1f, 0.6f, 0.2f, 0.1f,
		0.25f, 0.25f, 0.25f, 0.25f,
	0.05f, 0.05f, 0.1f, 0.8f};
	const float onehot[3 * 4] = {0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1};
	const float idx[3] = {1, 0, 3};
	float		gc[12],
				gs[12];
	double		lc,
				ls;

	lc = dl_loss_compute(DL_LOSS_CATEGORICAL_CROSSENTROPY, gc, p, onehot, 3, 4, 0.25);
	ls = dl_loss_compute(DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, gs, p, idx, 3, 4, 0.25);
	assert_close(ls, -log(0.6) - log(0.25) - log(0.8), 1e-6, 0);
	assert_close(lc, ls, 1e-7, 0);
	/*
	 * On normalised rows the two gradients differ by the constant
	 * grad_scale * sum(y) = 0.25 in every entry (the normalisation term,
	 * which a softmax Jacobian cancels).
	 */
	for (int i = 0; i < 12; i++)
		assert_close(gc[i] - gs[i], 0.25, 1e-5, 0);
	assert_close(gs[1], 0.25 * -1 / 0.6, 1e-6, 0);
	assert_true(gs[0] == 0.0f && gs[2] == 0.0f);
	check_gradient(DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, p, idx, 3, 4, 1e-3, 1e-4, "sparse");
}

static void
test_sparse_labels_checked(void **state)
{
	const float p[2 * 3] = {0.2f, 0.3f, 0.5f, 0.3f, 0.3f, 0.4f};
	const float bad[2] = {2, 3};
	const float frac[2] = {0, 1.5f};
	const float ok[2] = {2, 0};
	const float nan_y[2 * 3] = {0, 1, 0, 0, NAN, 0};
	float		g[6];
	DlError		err;

	assert_true(isnan(dl_loss_compute(DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, g, p, bad, 2, 3, 1)));
	assert_true(g[3] == 0.0f && g[4] == 0.0f && g[5] == 0.0f);
	assert_int_equal(dl_loss_check_labels(DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, ok, 2, 3, &err),
					 DL_OK);
	assert_int_equal(dl_loss_check_labels(DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, bad, 2, 3, &err),
					 DL_ERR_DATA);
	assert_non_null(strstr(err.msg, "label 3 in sample 1"));
	assert_non_null(strstr(err.msg, "[0, 3)"));
	assert_true(err.hint[0] != '\0');
	assert_int_equal(dl_loss_check_labels(DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, frac, 2, 3, &err),
					 DL_ERR_DATA);
	assert_non_null(strstr(err.msg, "1.5"));
	assert_int_equal(dl_loss_check_labels(DL_LOSS_CATEGORICAL_CROSSENTROPY, nan_y, 2, 3, &err),
					 DL_ERR_DATA);
	assert_non_null(strstr(err.msg, "sample 1"));
	assert_non_null(strstr(err.msg, "nan"));
	/* a one-hot label is not checked against K */
	assert_int_equal(dl_loss_check_labels(DL_LOSS_CATEGORICAL_CROSSENTROPY, p, 2, 3, &err), DL_OK);
	assert_int_equal(dl_loss_check_labels(DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, bad, 2, 3, NULL),
					 DL_ERR_DATA);
}

static void
test_clipping(void **state)
{
	/* probability 0 for the true class: loss -log(1e-7), gradient zero */
	const float p[3] = {1.0f, 0.0f, 0.0f};
	const float y[3] = {0, 1, 0};
	const float idx[1] = {1};
	const float bp[3] = {0.0f, 1.0f, 1.0f};
	const float by[3] = {1, 1, 0};
	float		g[3];

	assert_close(dl_loss_compute(DL_LOSS_CATEGORICAL_CROSSENTROPY, g, p, y, 1, 3, 1.0),
				 -log(EPS), 1e-6, 0);
	for (int k = 0; k < 3; k++)
		assert_close(g[k], 0.0, 0, 1e-6);
	assert_close(dl_loss_compute(DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, g, p, idx, 1, 3, 1.0),
				 -log(EPS), 1e-6, 0);
	assert_true(g[1] == 0.0f);
	/* bce: p=0,y=1 -> -log(eps); p=1,y=1 -> -log(1-eps); p=1,y=0 -> -log(eps) */
	assert_close(dl_loss_compute(DL_LOSS_BINARY_CROSSENTROPY, g, bp, by, 1, 3, 1.0),
				 (-log(EPS) - log(1 - EPS) - log(EPS)) / 3, 1e-6, 0);
	for (int k = 0; k < 3; k++)
		assert_true(g[k] == 0.0f);
}

static void
test_binary_crossentropy(void **state)
{
	const float p[2 * 2] = {0.9f, 0.2f, 0.4f, 0.6f};
	const float y[2 * 2] = {1, 0, 1, 0.5f};
	double		expect = (-log(0.9) - log(0.8)) / 2 +
		(-log(0.4) - (0.5 * log(0.6) + 0.5 * log(0.4))) / 2;
	float		g[4];

	assert_close(dl_loss_compute(DL_LOSS_BINARY_CROSSENTROPY, g, p, y, 2, 2, 1.0), expect, 1e-6, 0);
	/* d/dp of -(y log p + (1-y) log(1-p)) / K */
	assert_close(g[0], -1 / 0.9 / 2, 1e-6, 0);
	assert_close(g[1], 1 / 0.8 / 2, 1e-6, 0);
	check_gradient(DL_LOSS_BINARY_CROSSENTROPY, p, y, 2, 2, 1e-3, 1e-4, "bce");
}

static void
test_mse_mae(void **state)
{
	const float p[2 * 3] = {1, 2, 3, 0.5f, -1, 0};
	const float y[2 * 3] = {0, 2, 5, 0, 0, 0.25f};
	const float pk[2 * 3] = {1.1f, 2.2f, 3, 0.5f, -1, 0};	/* no zero differences */
	float		g[6];

	assert_close(dl_loss_compute(DL_LOSS_MEAN_SQUARED_ERROR, g, p, y, 2, 3, 1.0),
				 (1.0 + 0 + 4) / 3 + (0.25 + 1 + 0.0625) / 3, 1e-6, 0);
	assert_close(g[0], 2 * 1.0 / 3, 1e-6, 0);
	assert_close(g[2], 2 * -2.0 / 3, 1e-6, 0);
	check_gradient(DL_LOSS_MEAN_SQUARED_ERROR, p, y, 2, 3, 1e-3, 1e-4, "mse");

	assert_close(dl_loss_compute(DL_LOSS_MEAN_ABSOLUTE_ERROR, g, p, y, 2, 3, 0.5),
				 (1.0 + 0 + 2) / 3 + (0.5 + 1 + 0.25) / 3, 1e-6, 0);
	/* sign / K * grad_scale, 0 where p == y */
	assert_close(g[0], 0.5 / 3, 1e-6, 0);
	assert_true(g[1] == 0.0f);
	assert_close(g[2], -0.5 / 3, 1e-6, 0);
	assert_close(g[4], -0.5 / 3, 1e-6, 0);
	check_gradient(DL_LOSS_MEAN_ABSOLUTE_ERROR, pk, y, 2, 3, 1e-3, 1e-4, "mae");
}

static void
test_names(void **state)
{
	static const struct
	{
		const char *name;
		DlLossKind	kind;
	}			good[] = {
		{"categorical_crossentropy", DL_LOSS_CATEGORICAL_CROSSENTROPY},
		{"CategoricalCrossentropy", DL_LOSS_CATEGORICAL_CROSSENTROPY},
		{"sparse_categorical_crossentropy", DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY},
		{"binary_crossentropy", DL_LOSS_BINARY_CROSSENTROPY},
		{"mse", DL_LOSS_MEAN_SQUARED_ERROR},
		{"MSE", DL_LOSS_MEAN_SQUARED_ERROR},
		{"MeanSquaredError", DL_LOSS_MEAN_SQUARED_ERROR},
		{"mean_squared_error", DL_LOSS_MEAN_SQUARED_ERROR},
		{"mae", DL_LOSS_MEAN_ABSOLUTE_ERROR},
		{"mean_absolute_error", DL_LOSS_MEAN_ABSOLUTE_ERROR},
	};
	DlLossKind	k;
	DlMetricKind m;
	DlError		err;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
	{
		assert_int_equal(dl_loss_from_name(good[i].name, &k, &err), DL_OK);
		assert_int_equal(k, good[i].kind);
		/* the canonical name maps back */
		assert_int_equal(dl_loss_from_name(dl_loss_name(k), &k, &err), DL_OK);
		assert_int_equal(k, good[i].kind);
	}
	assert_int_equal(dl_loss_from_name("hinge", &k, &err), DL_ERR_INVALID_ARGUMENT);
	assert_string_equal(err.msg, "loss function \"hinge\" is not supported");
	assert_non_null(strstr(err.hint, "categorical_crossentropy"));
	assert_int_equal(dl_loss_from_name("hinge", &k, NULL), DL_ERR_INVALID_ARGUMENT);
	assert_int_equal(dl_metric_from_name("auc", &m, NULL), DL_ERR_INVALID_ARGUMENT);
	/* function names are case-sensitive, as in Keras */
	assert_int_equal(dl_loss_from_name("Categorical_Crossentropy", &k, &err), DL_ERR_INVALID_ARGUMENT);

	assert_int_equal(dl_metric_from_name("acc", &m, &err), DL_OK);
	assert_int_equal(m, DL_METRIC_ACCURACY);
	assert_int_equal(dl_metric_from_name("accuracy", &m, &err), DL_OK);
	assert_int_equal(m, DL_METRIC_ACCURACY);
	assert_int_equal(dl_metric_from_name("top_k_categorical_accuracy", &m, &err), DL_OK);
	assert_int_equal(m, DL_METRIC_TOP_K_CATEGORICAL_ACCURACY);
	assert_int_equal(dl_metric_from_name("mae", &m, &err), DL_OK);
	assert_int_equal(m, DL_METRIC_MAE);
	assert_int_equal(dl_metric_from_name("mean_squared_error", &m, &err), DL_OK);
	assert_int_equal(m, DL_METRIC_MSE);
	assert_int_equal(dl_metric_from_name("binary_accuracy", &m, &err), DL_OK);
	assert_int_equal(m, DL_METRIC_BINARY_ACCURACY);
	assert_int_equal(dl_metric_from_name("auc", &m, &err), DL_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err.msg, "\"auc\""));
	for (int i = DL_METRIC_ACCURACY; i <= DL_METRIC_MSE; i++)
	{
		assert_int_equal(dl_metric_from_name(dl_metric_name((DlMetricKind) i), &m, &err), DL_OK);
		assert_int_equal(m, i);
	}
}

static void
test_metric_resolve(void **state)
{
	assert_int_equal(dl_metric_resolve(DL_METRIC_ACCURACY, DL_LOSS_CATEGORICAL_CROSSENTROPY, 10),
					 DL_METRIC_CATEGORICAL_ACCURACY);
	assert_int_equal(dl_metric_resolve(DL_METRIC_ACCURACY, DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, 10),
					 DL_METRIC_SPARSE_CATEGORICAL_ACCURACY);
	assert_int_equal(dl_metric_resolve(DL_METRIC_ACCURACY, DL_LOSS_BINARY_CROSSENTROPY, 3),
					 DL_METRIC_BINARY_ACCURACY);
	assert_int_equal(dl_metric_resolve(DL_METRIC_ACCURACY, DL_LOSS_MEAN_SQUARED_ERROR, 3),
					 DL_METRIC_CATEGORICAL_ACCURACY);
	assert_int_equal(dl_metric_resolve(DL_METRIC_ACCURACY, DL_LOSS_MEAN_SQUARED_ERROR, 1),
					 DL_METRIC_BINARY_ACCURACY);
	assert_int_equal(dl_metric_resolve(DL_METRIC_ACCURACY, DL_LOSS_CATEGORICAL_CROSSENTROPY, 1),
					 DL_METRIC_BINARY_ACCURACY);
	assert_int_equal(dl_metric_resolve(DL_METRIC_MAE, DL_LOSS_CATEGORICAL_CROSSENTROPY, 3),
					 DL_METRIC_MAE);
	assert_int_equal(dl_metric_resolve(DL_METRIC_NONE, DL_LOSS_CATEGORICAL_CROSSENTROPY, 3),
					 DL_METRIC_NONE);
}

static void
test_metrics(void **state)
{
	/* row 0: tie 0.4/0.4, true class 2: miss */
	/* row 1: same tie -> argmax 0 (the first), true class 0: hit */
	/* row 2: clear hit; row 3: miss */
	const float p[4 * 3] = {0.4f, 0.4f, 0.2f,
		0.4f, 0.4f, 0.2f,
		0.1f, 0.2f, 0.7f,
	0.5f, 0.3f, 0.2f};
	const float y[4 * 3] = {0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 1};
	const float idx[4] = {2, 0, 2, 2};
	/* top-k on 4 classes */
	const float tp[3 * 4] = {0.1f, 0.5f, 0.3f, 0.1f,	/* class 2: 1 larger */
		0.5f, 0.3f, 0.3f, 0.1f,	/* class 2: tied with class 1 for 2nd */
	0.1f, 0.5f, 0.3f, 0.1f};	/* class 0: 2 larger (tie at 0.1 with 3) */
	const float ty[3 * 4] = {0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0};
	const float bp[2 * 3] = {0.6f, 0.5f, 0.2f, 0.9f, 0.1f, 0.51f};
	const float by[2 * 3] = {1, 1, 0, 1, 0, 1};

	assert_close(dl_metric_sum(DL_METRIC_CATEGORICAL_ACCURACY, 5, p, y, 4, 3), 2.0, 0, 0);
	assert_close(dl_metric_sum(DL_METRIC_SPARSE_CATEGORICAL_ACCURACY, 5, p, idx, 4, 3), 2.0, 0, 0);

	assert_close(dl_metric_sum(DL_METRIC_TOP_K_CATEGORICAL_ACCURACY, 1, tp, ty, 3, 4), 0.0, 0, 0);
	assert_close(dl_metric_sum(DL_METRIC_TOP_K_CATEGORICAL_ACCURACY, 2, tp, ty, 3, 4), 2.0, 0, 0);
	assert_close(dl_metric_sum(DL_METRIC_TOP_K_CATEGORICAL_ACCURACY, 3, tp, ty, 3, 4), 3.0, 0, 0);
	/* default k = 5 > K: always a hit */
	assert_close(dl_metric_sum(DL_METRIC_TOP_K_CATEGORICAL_ACCURACY, 5, tp, ty, 3, 4), 3.0, 0, 0);

	/* 0.5 is not above the threshold: row 0 gets 2/3, row 1 gets 3/3 */
	assert_close(dl_metric_sum(DL_METRIC_BINARY_ACCURACY, 5, bp, by, 2, 3), 2.0 / 3 + 1, 1e-12, 0);

	assert_close(dl_metric_sum(DL_METRIC_MAE, 5, bp, by, 2, 3),
				 (0.4 + 0.5 + 0.2) / 3 + (0.1 + 0.1 + 0.49) / 3, 1e-6, 0);
	assert_close(dl_metric_sum(DL_METRIC_MSE, 5, bp, by, 2, 3),
				 (0.16 + 0.25 + 0.04) / 3 + (0.01 + 0.01 + 0.2401) / 3, 1e-6, 0);
	assert_close(dl_metric_sum(DL_METRIC_NONE, 5, bp, by, 2, 3), 0.0, 0, 0);
}

/*
 * Keras' class_weight: sample b's loss and gradient are scaled by the
 * weight of its class; the class is the argmax of a one-hot row, the
 * sparse label, or the rounded value of a one-column label.
 */
static void
test_class_weight(void **state)
{
	const float p[3 * 3] = {0.7f, 0.2f, 0.1f, 0.1f, 0.1f, 0.8f, 0.3f, 0.4f, 0.3f};
	const float y[3 * 3] = {1, 0, 0, 0, 0, 1, 0, 1, 0};
	const float idx[3] = {0, 2, 1};
	const float cw[3] = {0.5f, 4.0f, 2.0f};
	const float bp[3] = {0.8f, 0.3f, 0.6f};
	const float by[3] = {1, 0, 1};
	const float bw[2] = {3.0f, 0.5f};
	float		g[9],
				gw[9];
	double		l[3];
	DlError		err;

	/* the classes */
	assert_int_equal(dl_loss_sample_class(DL_LOSS_CATEGORICAL_CROSSENTROPY, y + 3, 3), 2);
	assert_int_equal(dl_loss_sample_class(DL_LOSS_MEAN_SQUARED_ERROR, p + 6, 3), 1);
	assert_int_equal(dl_loss_sample_class(DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, idx + 1, 3), 2);
	assert_int_equal(dl_loss_sample_class(DL_LOSS_BINARY_CROSSENTROPY, by, 1), 1);
	assert_int_equal(dl_loss_sample_class(DL_LOSS_BINARY_CROSSENTROPY, by + 1, 1), 0);
	{
		const float half[1] = {0.5f},
					nan_row[2] = {NAN, 1},
					bad[1] = {3};

		assert_int_equal(dl_loss_sample_class(DL_LOSS_MEAN_SQUARED_ERROR, half, 1), 1);
		assert_int_equal(dl_loss_sample_class(DL_LOSS_CATEGORICAL_CROSSENTROPY, nan_row, 2), -1);
		assert_int_equal(dl_loss_sample_class(DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, bad, 3), -1);
	}

	/* the sum is sum_b w_b L_b, each sample's loss as the unweighted one */
	for (int b = 0; b < 3; b++)
		l[b] = dl_loss_compute(DL_LOSS_CATEGORICAL_CROSSENTROPY, NULL, p + 3 * b, y + 3 * b, 1, 3, 1.0);
	assert_close(dl_loss_compute_weighted(DL_LOSS_CATEGORICAL_CROSSENTROPY, gw, p, y, 3, 3, 0.5, cw, 3),
				 0.5 * l[0] + 2.0 * l[1] + 4.0 * l[2], 1e-12, 0);
	assert_close(dl_loss_compute_weighted(DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, NULL, p, idx, 3, 3,
										  1.0, cw, 3),
				 0.5 * -log(0.7) + 2.0 * -log(0.8) + 4.0 * -log(0.4), 1e-6, 0);
	/* each gradient row is the unweighted row times the weight */
	dl_loss_compute(DL_LOSS_CATEGORICAL_CROSSENTROPY, g, p, y, 3, 3, 0.5);
	for (int k = 0; k < 3; k++)
	{
		assert_close(gw[k], 0.5 * g[k], 1e-6, 0);
		assert_close(gw[3 + k], 2.0 * g[3 + k], 1e-6, 0);
		assert_close(gw[6 + k], 4.0 * g[6 + k], 1e-6, 0);
	}
	/* no class_weight: dl_loss_compute, bit for bit */
	assert_true(dl_loss_compute_weighted(DL_LOSS_MEAN_SQUARED_ERROR, NULL, p, y, 3, 3, 1.0, NULL, 0) ==
				dl_loss_compute(DL_LOSS_MEAN_SQUARED_ERROR, NULL, p, y, 3, 3, 1.0));
	/* one sigmoid output: classes 0 and 1 */
	assert_close(dl_loss_compute_weighted(DL_LOSS_BINARY_CROSSENTROPY, NULL, bp, by, 3, 1, 1.0, bw, 2),
				 0.5 * -log(0.8) + 3.0 * -log(0.7) + 0.5 * -log(0.6), 1e-6, 0);
	/* a class without a weight: NaN here, a clear error from the check */
	{
		const float cw2[2] = {1.0f, 1.0f};
		const float cwnan[3] = {1.0f, NAN, 1.0f};

		assert_true(isnan(dl_loss_compute_weighted(DL_LOSS_CATEGORICAL_CROSSENTROPY, NULL, p, y, 3, 3,
												   1.0, cw2, 2)));
		assert_int_equal(dl_loss_check_class_weights(DL_LOSS_CATEGORICAL_CROSSENTROPY, y, 3, 3, cw, 3,
													  &err), DL_OK);
		assert_int_equal(dl_loss_check_class_weights(DL_LOSS_CATEGORICAL_CROSSENTROPY, y, 3, 3, cw2, 2,
													  &err), DL_ERR_DATA);
		assert_non_null(strstr(err.msg, "sample 1 is of class 2, which class_weight gives no weight"));
		assert_true(err.hint[0] != '\0');
		assert_int_equal(dl_loss_check_class_weights(DL_LOSS_CATEGORICAL_CROSSENTROPY, y, 3, 3, cwnan, 3,
													  &err), DL_ERR_DATA);
		assert_non_null(strstr(err.msg, "sample 2 is of class 1"));
		assert_int_equal(dl_loss_check_class_weights(DL_LOSS_CATEGORICAL_CROSSENTROPY, y, 3, 3, NULL, 0,
													  &err), DL_OK);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_categorical_crossentropy),
		cmocka_unit_test(test_sparse_matches_categorical),
		cmocka_unit_test(test_sparse_labels_checked),
		cmocka_unit_test(test_clipping),
		cmocka_unit_test(test_binary_crossentropy),
		cmocka_unit_test(test_mse_mae),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_metric_resolve),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_class_weight),
	};

	return cmocka_run_group_tests_name("loss", tests, NULL, NULL);
}
