/*-------------------------------------------------------------------------
 *
 * metrics.c
 *	  Several metrics at once from additive sums (dl_metrics.h): the
 *	  per-sample metrics of loss.c, and Keras' Precision, Recall and AUC
 *	  from confusion counts.
 *
 * IDENTIFICATION
 *	  src/engine/metrics.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "madlib_dl/dl_metrics.h"

/* The sums of AUC: tp, fp, tn, fn, each (DL_AUC_THRESHOLDS). */
#define AUC_TP(acc) ((acc))
#define AUC_FP(acc) ((acc) + DL_AUC_THRESHOLDS)
#define AUC_TN(acc) ((acc) + 2 * DL_AUC_THRESHOLDS)
#define AUC_FN(acc) ((acc) + 3 * DL_AUC_THRESHOLDS)

DlStatus
dl_metrics_from_name(const char *name, DlMetricKind *out, DlError *err)
{
	static const struct
	{
		const char *name;
		DlMetricKind kind;
	}			extra[] = {
		{"auc", DL_METRIC_AUC}, {"AUC", DL_METRIC_AUC},
		{"precision", DL_METRIC_PRECISION}, {"Precision", DL_METRIC_PRECISION},
		{"recall", DL_METRIC_RECALL}, {"Recall", DL_METRIC_RECALL},
	};

	if (name != NULL)
		for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
			if (strcmp(name, extra[i].name) == 0)
			{
				*out = extra[i].kind;
				return DL_OK;
			}
	return dl_metric_from_name(name, out, err);
}

int
dl_metric_acc_len(DlMetricKind kind)
{
	switch (kind)
	{
		case DL_METRIC_NONE:
			return 0;
		case DL_METRIC_AUC:
			return 4 * DL_AUC_THRESHOLDS;
		case DL_METRIC_PRECISION:
		case DL_METRIC_RECALL:
			return 3;			/* tp, fp, fn */
		default:
			return 1;
	}
}

double
dl_auc_threshold(int t)
{
	/* Keras: [0 - eps] + [(i + 1) / (n - 1) for i in range(n - 2)] + [1 + eps] */
	if (t <= 0)
		return -DL_AUC_EPSILON;
	if (t >= DL_AUC_THRESHOLDS - 1)
		return 1.0 + DL_AUC_EPSILON;
	return (double) t / (double) (DL_AUC_THRESHOLDS - 1);
}

/* tp, fp, fn at threshold 0.5 over every entry (Keras' Precision and Recall). */
static void
add_confusion(const float *y_pred, const float *y_true, int64_t n, double *acc)
{
	for (int64_t i = 0; i < n; i++)
	{
		bool		pos = y_pred[i] > 0.5f;	/* NaN: negative */
		bool		truth = y_true[i] > 0.5f;

		if (pos && truth)
			acc[0] += 1.0;
		else if (pos)
			acc[1] += 1.0;
		else if (truth)
			acc[2] += 1.0;
	}
}

/*
 * The confusion counts at every threshold: an entry p is positive at the
 * thresholds below it, i.e. t < first(p), the first threshold not below
 * p; counted once per entry at that index, then summed from the top.
 */
static void
add_auc(const float *y_pred, const float *y_true, int64_t n, double *acc)
{
	double		pos_at[DL_AUC_THRESHOLDS + 1];
	double		neg_at[DL_AUC_THRESHOLDS + 1];
	double		pos_above = 0;
	double		neg_above = 0;
	double		pos_all = 0;
	double		neg_all = 0;

	memset(pos_at, 0, sizeof(pos_at));
	memset(neg_at, 0, sizeof(neg_at));
	for (int64_t i = 0; i < n; i++)
	{
		double		p = (double) y_pred[i];
		bool		truth = y_true[i] > 0.5f;
		int			first = 0;	/* positive at thresholds 0 .. first - 1 */

		if (isnan(p))
			first = 0;
		else
		{
			/* the thresholds t with p > threshold(t); increasing in t */
			int			lo = 0;
			int			hi = DL_AUC_THRESHOLDS;

			while (lo < hi)
			{
				int			mid = (lo + hi) / 2;

				if (p > dl_auc_threshold(mid))
					lo = mid + 1;
				else
					hi = mid;
			}
			first = lo;
		}
		if (truth)
		{
			pos_at[first] += 1.0;
			pos_all += 1.0;
		}
		else
		{
			neg_at[first] += 1.0;
			neg_all += 1.0;
		}
	}
	/* tp(t) = positives with first > t */
	for (int t = DL_AUC_THRESHOLDS - 1; t >= 0; t--)
	{
		pos_above += pos_at[t + 1];
		neg_above += neg_at[t + 1];
		AUC_TP(acc)[t] += pos_above;
		AUC_FP(acc)[t] += neg_above;
		AUC_FN(acc)[t] += pos_all - pos_above;
		AUC_TN(acc)[t] += neg_all - neg_above;
	}
}

void
dl_metric_acc_add(DlMetricKind kind, int top_k, const float *y_pred, const float *y_true,
				  int64_t B, int64_t K, double *acc)
{
	switch (kind)
	{
		case DL_METRIC_NONE:
			return;
		case DL_METRIC_AUC:
			add_auc(y_pred, y_true, B * K, acc);
			return;
		case DL_METRIC_PRECISION:
		case DL_METRIC_RECALL:
			add_confusion(y_pred, y_true, B * K, acc);
			return;
		default:
			acc[0] += dl_metric_sum(kind, top_k, y_pred, y_true, B, K);
			return;
	}
}

static double
no_nan_ratio(double a, double b)
{
	return b == 0 ? 0.0 : a / b;
}

double
dl_metric_acc_value(DlMetricKind kind, const double *acc, int64_t n)
{
	switch (kind)
	{
		case DL_METRIC_NONE:
			return NAN;
		case DL_METRIC_PRECISION:
			return no_nan_ratio(acc[0], acc[0] + acc[1]);
		case DL_METRIC_RECALL:
			return no_nan_ratio(acc[0], acc[0] + acc[2]);
		case DL_METRIC_AUC:
			{
				/* Keras' AUC.result(), ROC with summation 'interpolation' */
				double		auc = 0;

				for (int t = 0; t < DL_AUC_THRESHOLDS - 1; t++)
				{
					double		tpr0 = no_nan_ratio(AUC_TP(acc)[t], AUC_TP(acc)[t] + AUC_FN(acc)[t]);
					double		tpr1 = no_nan_ratio(AUC_TP(acc)[t + 1],
													AUC_TP(acc)[t + 1] + AUC_FN(acc)[t + 1]);
					double		fpr0 = no_nan_ratio(AUC_FP(acc)[t], AUC_FP(acc)[t] + AUC_TN(acc)[t]);
					double		fpr1 = no_nan_ratio(AUC_FP(acc)[t + 1],
													AUC_FP(acc)[t + 1] + AUC_TN(acc)[t + 1]);

					auc += (fpr0 - fpr1) * (tpr0 + tpr1) / 2.0;
				}
				return auc;
			}
		default:
			return n > 0 ? acc[0] / (double) n : NAN;
	}
}

int
dl_metric_list_acc_len(const DlMetricList *l)
{
	int			len = 0;

	for (int i = 0; i < l->n; i++)
		len += dl_metric_acc_len(l->kinds[i]);
	return len;
}

void
dl_metric_list_acc_add(const DlMetricList *l, DlLossKind loss, const float *y_pred,
					   const float *y_true, int64_t B, int64_t K, double *acc)
{
	for (int i = 0; i < l->n; i++)
	{
		DlMetricKind kind = l->kinds[i];

		if (kind == DL_METRIC_ACCURACY)
			kind = dl_metric_resolve(kind, loss, K);
		dl_metric_acc_add(kind, l->top_k[i], y_pred, y_true, B, K, acc);
		acc += dl_metric_acc_len(l->kinds[i]);
	}
}

void
dl_metric_list_values(const DlMetricList *l, const double *acc, int64_t n, double *out)
{
	for (int i = 0; i < l->n; i++)
	{
		out[i] = dl_metric_acc_value(l->kinds[i], acc, n);
		acc += dl_metric_acc_len(l->kinds[i]);
	}
}
