/*-------------------------------------------------------------------------
 *
 * dl_params.h
 *	  Parse MADlib's compile_params and fit_params strings.
 *
 * compile_params: "loss='categorical_crossentropy', optimizer='Adam(lr=0.001)',
 *                  metrics=['accuracy']"
 * fit_params:     "batch_size=128, epochs=2, shuffle=True"
 *
 * The string is a list of key=value pairs split on top-level commas, with
 * brackets and quotes matched.  The last duplicate key wins.  Booleans are
 * True/False (False means false, unlike MADlib).  A bad string gives
 * DL_ERR_PARSE or DL_ERR_INVALID_ARGUMENT with a message naming the
 * offending piece and a hint listing what is accepted.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_params.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_PARAMS_H
#define DL_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "madlib_dl/dl_loss.h"
#include "madlib_dl/dl_model.h"
#include "madlib_dl/dl_optim.h"
#include "madlib_dl/dl_spec.h"
#include "madlib_dl/dl_status.h"

/*
 * A value given per output, as Keras takes loss and loss_weights for a
 * model of several outputs: a list, one entry per output in the model's
 * order, or a dict {'output name': value}, keyed by the names of the
 * output layers.  n 0: not given (one value for every output).
 */
typedef struct DlOutputValues
{
	int			n;				/* entries, 0 .. DL_MAX_IO */
	bool		by_name;		/* a dict: names[i] is entry i's output */
	char		names[DL_MAX_IO][DL_NAME_MAX];
	DlLossKind	loss[DL_MAX_IO];	/* loss=: each entry's loss */
	double		weight[DL_MAX_IO];	/* loss_weights=: each entry's weight,
									 * finite and >= 0 */
} DlOutputValues;

/* The most names metrics=[...] may list. */
#define DL_MAX_METRICS 8

typedef struct DlCompileParams
{
	DlLossKind	loss;			/* the loss; a list or dict: its first entry */
	DlMetricKind metric;		/* DL_METRIC_NONE when metrics absent or [];
								 * else metrics[0] */
	int			top_k;			/* for top_k_categorical_accuracy, default 5 */
	bool		top_k_named;	/* the metric was written top_<k>_accuracy, as
								 * MADlib's load_top_k_accuracy_function names
								 * it (metric is then TOP_K_CATEGORICAL) */

	/*
	 * The whole metrics list, in order (Keras' names, dl_metrics_from_name:
	 * auc, precision and recall too), no name twice; metric, top_k and
	 * top_k_named above are entry 0's.  n_metrics 0 for none.
	 */
	int			n_metrics;
	DlMetricKind metrics[DL_MAX_METRICS];
	int			metric_top_k[DL_MAX_METRICS];
	bool		metric_top_k_named[DL_MAX_METRICS];
	DlOptimConfig optim;
	DlOutputValues losses;		/* loss=[...] or {...}; n 0 for one loss */
	DlOutputValues loss_weights;	/* loss_weights=[...] or {...}; n 0: all 1 */
} DlCompileParams;

/* Keras fit() defaults: batch_size 32, epochs 1, shuffle true. */
#define DL_DEFAULT_BATCH_SIZE 32
#define DL_DEFAULT_SEED 42

/* class_weight may name the classes 0 .. DL_CLASS_WEIGHT_MAX - 1. */
#define DL_CLASS_WEIGHT_MAX 1024

typedef struct DlFitParams
{
	int64_t		batch_size;		/* >= 1 */
	int			epochs;			/* passes over the data per call, >= 1: Keras'
								 * epochs minus initial_epoch */
	int			initial_epoch;	/* as given (default 0); epochs + initial_epoch
								 * is the epochs= of the string */
	bool		shuffle;
	bool		has_seed;		/* seed= was given */
	uint64_t	seed;			/* DL_DEFAULT_SEED when not given */
	int			verbose;		/* accepted and ignored */

	/*
	 * Keras' class_weight: class_weight[c] scales the loss of the samples
	 * of class c (dl_loss_sample_class), for c < n_class_weight; NaN for a
	 * class the dict does not name.  n_class_weight 0: no class_weight
	 * (None or {}).
	 */
	int			n_class_weight;
	float		class_weight[DL_CLASS_WEIGHT_MAX];
} DlFitParams;

/*
 * Parse compile_params.  optimizer and loss are required; metrics is
 * optional and may hold at most one entry (applied to every output, as
 * Keras applies a metrics list).  loss is one name, or, for a model of
 * several outputs, a list or dict of names (DlOutputValues);
 * loss_weights a list or dict of finite numbers >= 0 (None: not given).
 * Which entry goes to which output is decided against the model
 * (dl_compile_params_outputs).  Accepted and ignored for MADlib
 * compatibility: weighted_metrics, sample_weight_mode=None.
 */
DlStatus	dl_compile_params_parse(const char *s, DlCompileParams *out, DlError *err);

/*
 * Each output's loss, loss weight and metric for the model of spec (out
 * has spec->n_outputs entries), as Keras' compile gives them: the loss
 * list (one entry per output, in order) or dict (keyed by the output
 * layers' names; every output needs one), or the one loss for every
 * output; loss_weights likewise (a dict's missing outputs, and every
 * output without loss_weights, weigh 1); the metric (ACCURACY left
 * unresolved) for every output.  DL_ERR_INVALID_ARGUMENT naming the
 * entry or the output for a list of the wrong length, a dict key that is
 * no output, or a metric that does not fit an output's loss.
 */
DlStatus	dl_compile_params_outputs(const DlCompileParams *p, const DlModelSpec *spec,
									  DlOutputConfig *out, DlError *err);

/*
 * Parse fit_params.  Accepted: batch_size, epochs, shuffle, seed, verbose
 * (ignored), initial_epoch (less than epochs: each call trains epochs -
 * initial_epoch passes, as Keras' fit does), steps_per_epoch=None,
 * class_weight (None, {} or a dict {class: weight}, classes 0 ..
 * DL_CLASS_WEIGHT_MAX - 1 at most once, weights finite and >= 0).
 * Rejected with a clear error: validation_split, validation_data,
 * sample_weight, callbacks, ...  NULL or empty string gives the defaults.
 */
DlStatus	dl_fit_params_parse(const char *s, DlFitParams *out, DlError *err);

/*
 * Check class_weight against a model of K outputs trained with loss,
 * before any data is read: it may name only the model's classes (0 ..
 * K-1; 0 and 1 for one output, whose class is its rounded value, unless
 * the loss is sparse) and must give every one of them a weight (Keras
 * needs one for each class present in the data).  DL_ERR_INVALID_ARGUMENT
 * naming the class otherwise.  DL_OK when there is no class_weight.
 */
DlStatus	dl_fit_params_check_classes(const DlFitParams *p, DlLossKind loss, int64_t K,
										DlError *err);

/*
 * The metric's name for the summary tables, as compile_params spells it:
 * "top_<k>_accuracy" (written into buf, len bytes) when the metric was
 * written so, else dl_metric_name(p->metric).
 */
const char *dl_compile_params_metric_name(const DlCompileParams *p, char *buf, size_t len);

/*
 * Replace p's metrics with the list metrics (what metrics= takes:
 * "['accuracy', 'auc']", "[]", "None"), checked against p's loss; p is
 * unchanged on error.
 */
DlStatus	dl_compile_params_set_metrics(DlCompileParams *p, const char *metrics, DlError *err);

/* The same for entry i (0 .. n_metrics - 1) of the metrics list. */
const char *dl_compile_params_metric_name_i(const DlCompileParams *p, int i, char *buf, size_t len);

/* p's metrics list (dl_metrics.h), its arrays p's. */
DlMetricList dl_compile_params_metric_list(const DlCompileParams *p);

/*
 * The sums an evaluation keeps of p's metrics beyond what the loss pass
 * computes itself (DlBatchStats' metric_sum): 0 for none or one
 * per-sample metric (accuracy, top-k, mae, mse), else the whole list's
 * (dl_metric_list_acc_len), at most DL_METRIC_SUMS_MAX.
 */
int			dl_compile_params_metric_sums_len(const DlCompileParams *p);

/*
 * The most sums of one metrics list: its names are distinct, so one AUC
 * (4 * DL_AUC_THRESHOLDS), precision and recall (3 each) and the other
 * DL_MAX_METRICS - 3 one each.
 */
#define DL_METRIC_SUMS_MAX (DL_METRIC_ACC_MAX + 2 * 3 + (DL_MAX_METRICS - 3))

/*
 * The loss for the summary tables (loss_type): its canonical Keras name,
 * or for a list or dict of losses their names as Python writes the list
 * or dict ("['categorical_crossentropy', 'mean_squared_error']"), written
 * into buf (len bytes; the first loss's name when it does not fit).
 */
const char *dl_compile_params_loss_name(const DlCompileParams *p, char *buf, size_t len);

/*
 * Write a canonical string that parses back to the same values, for
 * summary tables and de-duplication:
 *	 loss='mean_squared_error', optimizer='SGD(lr=0.01, momentum=0.9, nesterov=True, ...)',
 *	 metrics=['mae']
 * The optimizer lists every argument its kind accepts; numbers use the
 * shortest of %.15g/%.17g that reads back exactly.  fit params give
 * "batch_size=32, epochs=1, shuffle=True[, seed=N][, initial_epoch=N]
 * [, class_weight={0: 1, 1: 5.5}]" (each only when given; epochs as
 * written, initial_epoch included; weights in the shortest form that
 * reads back as the same float).
 * DL_ERR_LIMIT when buf (len bytes) is too small; buf is always
 * NUL-terminated when len > 0.
 */
DlStatus	dl_compile_params_format(const DlCompileParams *p, char *buf, size_t len, DlError *err);
DlStatus	dl_fit_params_format(const DlFitParams *p, char *buf, size_t len, DlError *err);

#endif							/* DL_PARAMS_H */
