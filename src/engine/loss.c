/*-------------------------------------------------------------------------
 *
 * loss.c
 *	  Losses, their gradients, and metrics, with Keras semantics.
 *
 * Every loss reduces one sample over its K outputs the way tf.keras 2.x
 * does (sum for the crossentropies, mean for the others) and returns the
 * SUM over the B samples; the caller divides by the sample count.  All
 * arithmetic is done in double; the gradient is stored as float.
 *
 * Probabilities are clipped to [DL_PROB_EPSILON, 1 - DL_PROB_EPSILON] as
 * Keras does, and the gradient of the clip is zero outside that interval
 * (TensorFlow's clip_by_value gradient).  The clip is written with
 * comparisons so that NaN propagates instead of being clipped away.
 *
 *	 B = samples, K = model outputs per sample
 *
 * IDENTIFICATION
 *	  src/engine/loss.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "madlib_dl/dl_loss.h"

typedef struct NameMap
{
	const char *name;
	int			kind;
} NameMap;

static const NameMap loss_names[] = {
	{"categorical_crossentropy", DL_LOSS_CATEGORICAL_CROSSENTROPY},
	{"CategoricalCrossentropy", DL_LOSS_CATEGORICAL_CROSSENTROPY},
	{"sparse_categorical_crossentropy", DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY},
	{"SparseCategoricalCrossentropy", DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY},
	{"binary_crossentropy", DL_LOSS_BINARY_CROSSENTROPY},
	{"BinaryCrossentropy", DL_LOSS_BINARY_CROSSENTROPY},
	{"mean_squared_error", DL_LOSS_MEAN_SQUARED_ERROR},
	{"mse", DL_LOSS_MEAN_SQUARED_ERROR},
	{"MSE", DL_LOSS_MEAN_SQUARED_ERROR},
	{"MeanSquaredError", DL_LOSS_MEAN_SQUARED_ERROR},
	{"mean_absolute_error", DL_LOSS_MEAN_ABSOLUTE_ERROR},
	{"mae", DL_LOSS_MEAN_ABSOLUTE_ERROR},
	{"MAE", DL_LOSS_MEAN_ABSOLUTE_ERROR},
	{"MeanAbsoluteError", DL_LOSS_MEAN_ABSOLUTE_ERROR},
};

static const NameMap metric_names[] = {
	{"accuracy", DL_METRIC_ACCURACY},
	{"acc", DL_METRIC_ACCURACY},
	{"categorical_accuracy", DL_METRIC_CATEGORICAL_ACCURACY},
	{"CategoricalAccuracy", DL_METRIC_CATEGORICAL_ACCURACY},
	{"sparse_categorical_accuracy", DL_METRIC_SPARSE_CATEGORICAL_ACCURACY},
	{"SparseCategoricalAccuracy", DL_METRIC_SPARSE_CATEGORICAL_ACCURACY},
	{"binary_accuracy", DL_METRIC_BINARY_ACCURACY},
	{"BinaryAccuracy", DL_METRIC_BINARY_ACCURACY},
	{"top_k_categorical_accuracy", DL_METRIC_TOP_K_CATEGORICAL_ACCURACY},
	{"TopKCategoricalAccuracy", DL_METRIC_TOP_K_CATEGORICAL_ACCURACY},
	{"mean_absolute_error", DL_METRIC_MAE},
	{"mae", DL_METRIC_MAE},
	{"MAE", DL_METRIC_MAE},
	{"MeanAbsoluteError", DL_METRIC_MAE},
	{"mean_squared_error", DL_METRIC_MSE},
	{"mse", DL_METRIC_MSE},
	{"MSE", DL_METRIC_MSE},
	{"MeanSquaredError", DL_METRIC_MSE},
};

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Map a loss name to its kind.  Names are case-sensitive, as in Keras:
 * the function spellings and the CamelCase class names are accepted.
 */
DlStatus
dl_loss_from_name(const char *name, DlLossKind *out, DlError *err)
{
	DlError		scratch;

	if (err == NULL)
		err = &scratch;		/* so dl_error_hint returns the code */
	if (name != NULL)
	{
		for (size_t i = 0; i < LEN(loss_names); i++)
		{
			if (strcmp(name, loss_names[i].name) == 0)
			{
				*out = (DlLossKind) loss_names[i].kind;
				return DL_OK;
			}
		}
	}
	dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "loss function \"%.200s\" is not supported",
				 name != NULL ? name : "(null)");
	return dl_error_hint(err, "Supported losses are categorical_crossentropy, "
						 "sparse_categorical_crossentropy, binary_crossentropy, "
						 "mean_squared_error (mse) and mean_absolute_error (mae).");
}

const char *
dl_loss_name(DlLossKind kind)
{
	switch (kind)
	{
		case DL_LOSS_CATEGORICAL_CROSSENTROPY:
			return "categorical_crossentropy";
		case DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY:
			return "sparse_categorical_crossentropy";
		case DL_LOSS_BINARY_CROSSENTROPY:
			return "binary_crossentropy";
		case DL_LOSS_MEAN_SQUARED_ERROR:
			return "mean_squared_error";
		case DL_LOSS_MEAN_ABSOLUTE_ERROR:
			return "mean_absolute_error";
	}
	return "unknown";
}

/* Map a metric name ("accuracy", "acc", "mae", class names, ...) to its kind. */
DlStatus
dl_metric_from_name(const char *name, DlMetricKind *out, DlError *err)
{
	DlError		scratch;

	if (err == NULL)
		err = &scratch;		/* so dl_error_hint returns the code */
	if (name != NULL)
	{
		for (size_t i = 0; i < LEN(metric_names); i++)
		{
			if (strcmp(name, metric_names[i].name) == 0)
			{
				*out = (DlMetricKind) metric_names[i].kind;
				return DL_OK;
			}
		}
	}
	dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "metric \"%.200s\" is not supported",
				 name != NULL ? name : "(null)");
	return dl_error_hint(err, "Supported metrics are accuracy (acc), categorical_accuracy, "
						 "sparse_categorical_accuracy, binary_accuracy, "
						 "top_k_categorical_accuracy, mae and mse.");
}

const char *
dl_metric_name(DlMetricKind kind)
{
	switch (kind)
	{
		case DL_METRIC_NONE:
			return "none";
		case DL_METRIC_ACCURACY:
			return "accuracy";
		case DL_METRIC_CATEGORICAL_ACCURACY:
			return "categorical_accuracy";
		case DL_METRIC_SPARSE_CATEGORICAL_ACCURACY:
			return "sparse_categorical_accuracy";
		case DL_METRIC_BINARY_ACCURACY:
			return "binary_accuracy";
		case DL_METRIC_TOP_K_CATEGORICAL_ACCURACY:
			return "top_k_categorical_accuracy";
		case DL_METRIC_MAE:
			return "mae";
		case DL_METRIC_MSE:
			return "mse";
		case DL_METRIC_AUC:
			return "auc";
		case DL_METRIC_PRECISION:
			return "precision";
		case DL_METRIC_RECALL:
			return "recall";
	}
	return "unknown";
}

/* Keras clip to [eps, 1 - eps]; NaN stays NaN. */
static inline double
prob_clip(double p)
{
	if (p < DL_PROB_EPSILON)
		return DL_PROB_EPSILON;
	if (p > 1.0 - DL_PROB_EPSILON)
		return 1.0 - DL_PROB_EPSILON;
	return p;
}

/* 1 where the clip passes the gradient (inside the interval, inclusive). */
static inline double
prob_clip_pass(double p)
{
	return (p >= DL_PROB_EPSILON && p <= 1.0 - DL_PROB_EPSILON) ? 1.0 : 0.0;
}

/*
 * A sparse label as a class index, or -1 when it is not an integer in
 * [0, K).
 */
static inline int64_t
sparse_label(float y, int64_t K)
{
	double		d = (double) y;

	if (!(d >= 0.0 && d < (double) K) || d != floor(d))
		return -1;
	return (int64_t) d;
}

/*
 * categorical_crossentropy for one sample, as tf.keras 2.x computes it
 * from probabilities: q = p / sum(p), c = clip(q), L = -sum_k y_k log c_k.
 * The gradient goes through the normalisation: with a_k = dL/dq_k =
 * -y_k / c_k (0 where the clip is active),
 *	 dL/dp_j = (a_j - sum_k a_k q_k) / sum(p).
 *	 g (K) or NULL, p (K), y (K)
 */
static double
cce_sample(float *g, const float *p, const float *y, int64_t K, double scale)
{
	double		s = 0,
				loss = 0,
				dot = 0;

	for (int64_t k = 0; k < K; k++)
		s += (double) p[k];
	for (int64_t k = 0; k < K; k++)
	{
		double		q = (double) p[k] / s;
		double		c = prob_clip(q);

		loss -= (double) y[k] * log(c);
		if (g != NULL)
			dot += -(double) y[k] / c * prob_clip_pass(q) * q;
	}
	if (g != NULL)
	{
		for (int64_t k = 0; k < K; k++)
		{
			double		q = (double) p[k] / s;
			double		a = -(double) y[k] / prob_clip(q) * prob_clip_pass(q);

			g[k] = (float) (scale * (a - dot) / s);
		}
	}
	return loss;
}

/*
 * The loss of one sample; writes its gradient row g (K) times scale when
 * g is not NULL.  p (K), y (K), or (1) for the sparse loss.
 */
static double
loss_sample(DlLossKind kind, float *g, const float *p, const float *y, int64_t K, double scale)
{
	switch (kind)
	{
		case DL_LOSS_CATEGORICAL_CROSSENTROPY:
			return cce_sample(g, p, y, K, scale);

		case DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY:
			{
				/* tf.keras clips but does not renormalise here */
				int64_t		t = sparse_label(y[0], K);

				if (g != NULL)
					memset(g, 0, sizeof(float) * (size_t) K);
				if (t < 0)
					return NAN;
				if (g != NULL)
					g[t] = (float) (scale * prob_clip_pass((double) p[t]) *
									-1.0 / prob_clip((double) p[t]));
				return -log(prob_clip((double) p[t]));
			}

		case DL_LOSS_BINARY_CROSSENTROPY:
			{
				double		s = 0;

				for (int64_t k = 0; k < K; k++)
				{
					double		c = prob_clip((double) p[k]);
					double		yk = (double) y[k];

					s -= yk * log(c) + (1.0 - yk) * log(1.0 - c);
					if (g != NULL)
						g[k] = (float) (scale * prob_clip_pass((double) p[k]) *
										-(yk / c - (1.0 - yk) / (1.0 - c)) / (double) K);
				}
				return s / (double) K;
			}

		case DL_LOSS_MEAN_SQUARED_ERROR:
			{
				double		s = 0;

				for (int64_t k = 0; k < K; k++)
				{
					double		d = (double) p[k] - (double) y[k];

					s += d * d;
					if (g != NULL)
						g[k] = (float) (scale * 2.0 * d / (double) K);
				}
				return s / (double) K;
			}

		case DL_LOSS_MEAN_ABSOLUTE_ERROR:
			{
				double		s = 0;

				for (int64_t k = 0; k < K; k++)
				{
					double		d = (double) p[k] - (double) y[k];
					double		sign = d > 0 ? 1.0 : (d < 0 ? -1.0 : 0.0);

					s += fabs(d);
					if (g != NULL)
						g[k] = (float) (scale * sign / (double) K);
				}
				return s / (double) K;
			}
	}
	return NAN;
}

double
dl_loss_compute(DlLossKind kind, float *grad, const float *y_pred,
				const float *y_true, int64_t B, int64_t K, double grad_scale)
{
	return dl_loss_compute_weighted(kind, grad, y_pred, y_true, B, K, grad_scale, NULL, 0);
}

/* numpy argmax: index of the first largest value.  v (K) */
static int64_t
argmax_first(const float *v, int64_t K)
{
	int64_t		best = 0;

	for (int64_t k = 1; k < K; k++)
		if (v[k] > v[best])
			best = k;
	return best;
}

int64_t
dl_loss_sample_class(DlLossKind kind, const float *y_true_row, int64_t K)
{
	if (kind == DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY)
		return sparse_label(y_true_row[0], K);
	for (int64_t k = 0; k < K; k++)
		if (isnan(y_true_row[k]))
			return -1;
	if (K == 1)
		return y_true_row[0] >= 0.5f ? 1 : 0;
	return argmax_first(y_true_row, K);
}

double
dl_loss_sample_weight(DlLossKind kind, const float *y_true_row, int64_t K,
					  const float *class_weight, int64_t n_class_weight)
{
	int64_t		c;

	if (class_weight == NULL)
		return 1.0;
	c = dl_loss_sample_class(kind, y_true_row, K);
	if (c < 0 || c >= n_class_weight)
		return NAN;
	return (double) class_weight[c];
}

double
dl_loss_compute_weighted(DlLossKind kind, float *grad, const float *y_pred,
						 const float *y_true, int64_t B, int64_t K, double grad_scale,
						 const float *class_weight, int64_t n_class_weight)
{
	int64_t		yw = dl_loss_y_width(kind, K);
	double		total = 0;

	for (int64_t b = 0; b < B; b++)
	{
		const float *y = y_true + b * yw;
		double		w = dl_loss_sample_weight(kind, y, K, class_weight, n_class_weight);

		total += w * loss_sample(kind, grad != NULL ? grad + b * K : NULL, y_pred + b * K, y, K,
								 grad_scale * w);
	}
	return total;
}

DlStatus
dl_loss_check_class_weights(DlLossKind kind, const float *y_true, int64_t B, int64_t K,
							const float *class_weight, int64_t n_class_weight, DlError *err)
{
	int64_t		yw = dl_loss_y_width(kind, K);
	DlError		scratch;

	if (err == NULL)
		err = &scratch;		/* so dl_error_hint returns the code */
	if (class_weight == NULL)
		return DL_OK;
	for (int64_t b = 0; b < B; b++)
	{
		int64_t		c = dl_loss_sample_class(kind, y_true + b * yw, K);

		if (c >= 0 && c < n_class_weight && !isnan(class_weight[c]))
			continue;
		if (c < 0)
			dl_error_set(err, DL_ERR_DATA, "sample %lld has no class for class_weight", (long long) b);
		else
			dl_error_set(err, DL_ERR_DATA,
						 "sample %lld is of class %lld, which class_weight gives no weight",
						 (long long) b, (long long) c);
		return dl_error_hint(err, "class_weight must give a weight to every class in the "
							 "training data, for example class_weight={0: 1.0, 1: 5.0}.");
	}
	return DL_OK;
}

/*
 * Check y_true: finite everywhere, integer class indices in [0, K) for
 * the sparse loss.
 */
DlStatus
dl_loss_check_labels(DlLossKind kind, const float *y_true, int64_t B, int64_t K,
					 DlError *err)
{
	int64_t		w = dl_loss_y_width(kind, K);
	DlError		scratch;

	if (err == NULL)
		err = &scratch;		/* so dl_error_hint returns the code */

	for (int64_t b = 0; b < B; b++)
	{
		for (int64_t k = 0; k < w; k++)
		{
			float		v = y_true[b * w + k];

			if (!isfinite(v))
			{
				dl_error_set(err, DL_ERR_DATA, "label value %g in sample %lld is not finite",
							 (double) v, (long long) b);
				return dl_error_hint(err, "Remove or fix rows whose dependent variable is NaN or infinite.");
			}
			if (kind == DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY && sparse_label(v, K) < 0)
			{
				dl_error_set(err, DL_ERR_DATA,
							 "label %g in sample %lld is not a class index in [0, %lld)",
							 (double) v, (long long) b, (long long) K);
				return dl_error_hint(err, "With sparse_categorical_crossentropy the dependent "
									 "variable must hold integer class indices smaller than "
									 "the number of model outputs.");
			}
		}
	}
	return DL_OK;
}

/*
 * "accuracy" becomes the accuracy Keras would pick: binary for one output
 * or binary_crossentropy, sparse for the sparse loss, else categorical.
 * Other metrics are returned unchanged.
 */
DlMetricKind
dl_metric_resolve(DlMetricKind metric, DlLossKind loss, int64_t K)
{
	if (metric != DL_METRIC_ACCURACY)
		return metric;
	if (K == 1 || loss == DL_LOSS_BINARY_CROSSENTROPY)
		return DL_METRIC_BINARY_ACCURACY;
	if (loss == DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY)
		return DL_METRIC_SPARSE_CATEGORICAL_ACCURACY;
	return DL_METRIC_CATEGORICAL_ACCURACY;
}


double
dl_metric_sum(DlMetricKind kind, int top_k, const float *y_pred,
			  const float *y_true, int64_t B, int64_t K)
{
	double		total = 0;

	for (int64_t b = 0; b < B; b++)
	{
		const float *p = y_pred + b * K;
		const float *y = kind == DL_METRIC_SPARSE_CATEGORICAL_ACCURACY ?
			y_true + b : y_true + b * K;

		switch (kind)
		{
			case DL_METRIC_NONE:
			case DL_METRIC_AUC:	/* dl_metrics.h */
			case DL_METRIC_PRECISION:
			case DL_METRIC_RECALL:
				break;

			case DL_METRIC_ACCURACY:
			case DL_METRIC_CATEGORICAL_ACCURACY:
				if (argmax_first(p, K) == argmax_first(y, K))
					total += 1.0;
				break;

			case DL_METRIC_SPARSE_CATEGORICAL_ACCURACY:
				/* Keras compares the label with the float argmax */
				if ((double) y[0] == (double) argmax_first(p, K))
					total += 1.0;
				break;

			case DL_METRIC_BINARY_ACCURACY:
				{
					int64_t		hits = 0;

					for (int64_t k = 0; k < K; k++)
						if ((p[k] > 0.5f ? 1.0f : 0.0f) == y[k])
							hits++;
					total += (double) hits / (double) K;
				}
				break;

			case DL_METRIC_TOP_K_CATEGORICAL_ACCURACY:
				{
					/*
					 * tf.nn.in_top_k: the true class is a hit when fewer
					 * than k outputs are strictly larger than its own;
					 * a non-finite prediction is never a hit.
					 */
					int64_t		t = argmax_first(y, K);
					int64_t		larger = 0;
					bool		finite = true;

					for (int64_t k = 0; k < K; k++)
					{
						if (!isfinite(p[k]))
							finite = false;
						else if (p[k] > p[t])
							larger++;
					}
					if (finite && larger < (int64_t) top_k)
						total += 1.0;
				}
				break;

			case DL_METRIC_MAE:
			case DL_METRIC_MSE:
				{
					double		s = 0;

					for (int64_t k = 0; k < K; k++)
					{
						double		d = (double) p[k] - (double) y[k];

						s += kind == DL_METRIC_MAE ? fabs(d) : d * d;
					}
					total += s / (double) K;
				}
				break;
		}
	}
	return total;
}
