/*-------------------------------------------------------------------------
 *
 * dl_loss.h
 *	  Losses and metrics, with Keras semantics.
 *
 * y_pred is the model output (B, K) after its final activation.  y_true is
 * (B, K), except for sparse_categorical_crossentropy where it is (B, 1)
 * holding class indices as floats.  Probabilities are clipped to
 * [1e-7, 1 - 1e-7] as Keras does.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_loss.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_LOSS_H
#define DL_LOSS_H

#include <stdbool.h>
#include <stdint.h>

#include "madlib_dl/dl_status.h"

#define DL_PROB_EPSILON 1e-7

typedef enum DlLossKind
{
	DL_LOSS_CATEGORICAL_CROSSENTROPY = 0,
	DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY,
	DL_LOSS_BINARY_CROSSENTROPY,
	DL_LOSS_MEAN_SQUARED_ERROR,
	DL_LOSS_MEAN_ABSOLUTE_ERROR
} DlLossKind;

typedef enum DlMetricKind
{
	DL_METRIC_NONE = 0,
	DL_METRIC_ACCURACY,			/* resolved by loss, see dl_metric_resolve */
	DL_METRIC_CATEGORICAL_ACCURACY,
	DL_METRIC_SPARSE_CATEGORICAL_ACCURACY,
	DL_METRIC_BINARY_ACCURACY,	/* threshold 0.5 */
	DL_METRIC_TOP_K_CATEGORICAL_ACCURACY,	/* k, default 5 */
	DL_METRIC_MAE,
	DL_METRIC_MSE,
	/* not per-sample: only through dl_metrics.h's sums (dl_metric_sum adds 0) */
	DL_METRIC_AUC,				/* ROC, 200 thresholds */
	DL_METRIC_PRECISION,		/* threshold 0.5 */
	DL_METRIC_RECALL			/* threshold 0.5 */
} DlMetricKind;

/* Keras spellings: "categorical_crossentropy", "mse" -> MSE, ... */
DlStatus	dl_loss_from_name(const char *name, DlLossKind *out, DlError *err);
const char *dl_loss_name(DlLossKind kind);	/* canonical Keras name */
DlStatus	dl_metric_from_name(const char *name, DlMetricKind *out, DlError *err);
const char *dl_metric_name(DlMetricKind kind);

/* Width of y_true per sample for a loss given model output width K. */
static inline int64_t
dl_loss_y_width(DlLossKind kind, int64_t K)
{
	return kind == DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY ? 1 : K;
}

/*
 * Sum over the B samples of the per-sample loss (Keras reduces each
 * sample over its K outputs: sum for crossentropy, mean for mse/mae/bce).
 * If grad is not NULL, writes grad[b,k] = grad_scale * d(sum)/d(y_pred[b,k]),
 * overwriting it; training passes grad_scale = 1/B.
 *
 *	 grad    (B, K) or NULL
 *	 y_pred  (B, K)
 *	 y_true  (B, K), or (B, 1) for the sparse loss
 */
double		dl_loss_compute(DlLossKind kind, float *grad, const float *y_pred,
							const float *y_true, int64_t B, int64_t K, double grad_scale);

/*
 * The class of one sample for Keras' class_weight: the label for the
 * sparse loss (y_true (1)); for one output, 1 when y >= 0.5 else 0 (Keras
 * rounds the label); else the index of the largest of the K values of
 * y_true (the first of equal ones, as argmax).  -1 when the label is not a
 * class: NaN, or a sparse label that is not an integer in [0, K).
 */
int64_t		dl_loss_sample_class(DlLossKind kind, const float *y_true_row, int64_t K);

/*
 * dl_loss_compute with Keras' class_weight: sample b's loss and gradient
 * are scaled by w_b = class_weight[dl_loss_sample_class(b)], so the sum is
 * sum_b w_b L_b (Keras' weighted loss is that sum divided by B).
 * class_weight (n_class_weight) may be NULL: dl_loss_compute.  The caller
 * has checked every sample's class has a weight
 * (dl_loss_check_class_weights); a sample without one adds NaN.
 */
double		dl_loss_compute_weighted(DlLossKind kind, float *grad, const float *y_pred,
									 const float *y_true, int64_t B, int64_t K, double grad_scale,
									 const float *class_weight, int64_t n_class_weight);

/*
 * The weight of sample y_true_row (of width dl_loss_y_width) under
 * class_weight: 1 when class_weight is NULL, NaN when its class has none.
 */
double		dl_loss_sample_weight(DlLossKind kind, const float *y_true_row, int64_t K,
								  const float *class_weight, int64_t n_class_weight);

/*
 * Check that class_weight gives every sample of y_true (B, y width) a
 * weight, as Keras and TensorFlow.js do: DL_ERR_DATA naming the first
 * sample whose class it does not name.  DL_OK when class_weight is NULL.
 */
DlStatus	dl_loss_check_class_weights(DlLossKind kind, const float *y_true, int64_t B,
										int64_t K, const float *class_weight,
										int64_t n_class_weight, DlError *err);

/*
 * Check y_true before training or evaluation: every value must be finite,
 * and for the sparse loss each label must be an integer in [0, K).
 * DL_ERR_DATA names the first bad value and its sample (0-based).
 * dl_loss_compute itself does not check: a label out of range makes that
 * sample's loss NaN (and its gradient row zero).
 *
 *	 y_true  (B, dl_loss_y_width(kind, K))
 */
DlStatus	dl_loss_check_labels(DlLossKind kind, const float *y_true, int64_t B, int64_t K,
								 DlError *err);

/*
 * Map "accuracy" to the accuracy that Keras picks for the loss:
 * categorical for categorical_crossentropy (and mse/mae with K > 1),
 * sparse_categorical for the sparse loss, binary for binary_crossentropy
 * and for K == 1.
 */
DlMetricKind dl_metric_resolve(DlMetricKind metric, DlLossKind loss, int64_t K);

/*
 * Sum over the B samples of the per-sample metric (each in [0,1] for the
 * accuracies).  top_k is used only by TOP_K_CATEGORICAL_ACCURACY.
 * y_true is (B, K), except (B, 1) class indices for
 * SPARSE_CATEGORICAL_ACCURACY; pass a resolved kind, not ACCURACY (which
 * is treated as categorical).
 * Ties in top-k count as hits when the true class is among the k largest
 * values (Keras in_top_k semantics).
 */
double		dl_metric_sum(DlMetricKind kind, int top_k, const float *y_pred,
						  const float *y_true, int64_t B, int64_t K);

#endif							/* DL_LOSS_H */
