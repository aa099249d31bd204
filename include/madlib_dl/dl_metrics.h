/*-------------------------------------------------------------------------
 *
 * dl_metrics.h
 *	  Several metrics at once, as Keras computes them, from sums that add
 *	  up across mini-batches and segments.
 *
 * Each metric keeps a small vector of double sums (dl_metric_acc_len):
 * the per-sample metrics of dl_loss.h (the accuracies, top-k, mae, mse)
 * one sum over samples; precision and recall their true and false
 * positives or negatives; AUC the confusion counts at its 200
 * thresholds.  Sums of two batches (or two segments) are their
 * elementwise sums, so a value is the same whatever the split, up to the
 * order of the additions (the drivers add in segment order).
 *
 * Keras semantics, for y_pred (B, K) after the final activation and
 * one-hot y_true (B, K):
 *	 precision, recall  tf.keras.metrics.Precision / Recall with their
 *	     default threshold 0.5: every one of the B x K entries is a binary
 *	     decision, positive when y_pred > 0.5 (strictly) and true when
 *	     y_true > 0.5; precision = tp / (tp + fp), recall = tp / (tp + fn),
 *	     0 when the denominator is 0 (Keras' divide_no_nan).
 *	 auc  tf.keras.metrics.AUC() defaults: curve ROC, 200 thresholds
 *	     {-1e-7, 1/199, 2/199, ..., 198/199, 1 + 1e-7}, multi_label False
 *	     (the B x K entries flattened, as above), summation 'interpolation'
 *	     (for ROC: the trapezoidal rule over the points (fpr_t, tpr_t),
 *	     positive when y_pred > t).  It differs from the exact ROC AUC
 *	     (sklearn's roc_auc_score) by the discretisation of the thresholds.
 * The others are dl_metric_sum's (dl_loss.h), divided by the samples.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_metrics.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_METRICS_H
#define DL_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "madlib_dl/dl_loss.h"
#include "madlib_dl/dl_status.h"

#define DL_AUC_THRESHOLDS 200
#define DL_AUC_EPSILON 1e-7

/* The most sums one metric keeps (AUC: tp, fp, tn, fn per threshold). */
#define DL_METRIC_ACC_MAX (4 * DL_AUC_THRESHOLDS)

/*
 * A metric by its Keras name, the names of dl_metric_from_name and:
 * auc, AUC; precision, Precision; recall, Recall.  top_k is 5 for
 * top_k_categorical_accuracy.  DL_ERR_INVALID_ARGUMENT otherwise.
 */
DlStatus	dl_metrics_from_name(const char *name, DlMetricKind *out, DlError *err);

/* Sums metric kind keeps (1 .. DL_METRIC_ACC_MAX); 0 for NONE. */
int			dl_metric_acc_len(DlMetricKind kind);

/*
 * Add the B samples of y_pred (B, K) and y_true (B, K; (B, 1) class
 * indices for the sparse accuracy) to acc (dl_metric_acc_len(kind)
 * doubles).  kind resolved (not ACCURACY).  Non-finite predictions count
 * as negatives at every threshold (never above one).
 */
void		dl_metric_acc_add(DlMetricKind kind, int top_k, const float *y_pred,
							  const float *y_true, int64_t B, int64_t K, double *acc);

/* The metric's value from acc and the n samples added (NaN for n 0 where it divides by n). */
double		dl_metric_acc_value(DlMetricKind kind, const double *acc, int64_t n);

/*
 * A metrics list: kinds[0..n) (as compile_params lists them; ACCURACY
 * resolved against the loss when sums are added) with top_k[i] for a
 * top-k accuracy.  Its sums are each metric's, one after the other.
 */
typedef struct DlMetricList
{
	int			n;
	const DlMetricKind *kinds;
	const int  *top_k;
} DlMetricList;

/* The sums a list keeps: the sum of its metrics' dl_metric_acc_len. */
int			dl_metric_list_acc_len(const DlMetricList *l);

/*
 * Add B samples to the sums acc (dl_metric_list_acc_len doubles) of every
 * metric of l, as dl_metric_acc_add; loss resolves ACCURACY (K classes).
 */
void		dl_metric_list_acc_add(const DlMetricList *l, DlLossKind loss, const float *y_pred,
								   const float *y_true, int64_t B, int64_t K, double *acc);

/* Each metric's value from the sums acc over n samples into out[0..l->n). */
void		dl_metric_list_values(const DlMetricList *l, const double *acc, int64_t n, double *out);

/* The threshold t of AUC (0 <= t < DL_AUC_THRESHOLDS), as Keras places them. */
double		dl_auc_threshold(int t);

#endif							/* DL_METRICS_H */
