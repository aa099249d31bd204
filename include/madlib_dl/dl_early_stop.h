/*-------------------------------------------------------------------------
 *
 * dl_early_stop.h
 *	  Early stopping with Keras' EarlyStopping semantics: the option
 *	  string of fit, fit_multiple and automl, and the rule applied at each
 *	  metrics point.
 *
 *	 early_stopping => 'monitor=validation_loss, patience=3, min_delta=0.001,
 *	                    restore_best=true'
 *
 * Keys (Keras' names; the value of monitor and mode may be quoted or bare):
 *	 monitor       loss | training_loss | val_loss | validation_loss, or a
 *	               compiled metric: <metric>, training_<metric>,
 *	               val_<metric>, validation_<metric> (default
 *	               validation_loss, Keras' val_loss)
 *	 patience      metrics points without improvement before stopping,
 *	               >= 0 (default 0)
 *	 min_delta     the least change that counts as an improvement, finite;
 *	               its sign is ignored, as Keras does (default 0)
 *	 mode          auto | min | max (default auto: max for accuracies,
 *	               min for losses and errors)
 *	 baseline      None or a finite number (default None)
 *	 restore_best  (also restore_best_weights) True | False (default False)
 *	 start_from_epoch  (also start_from_iteration) iterations before which
 *	               nothing is monitored, >= 0 (default 0)
 *	 verbose       accepted and ignored
 *
 * The rule (dl_early_stop_update) is Keras' on_epoch_end with an epoch
 * being a metrics point (Keras skips epochs whose monitored value is
 * absent, so patience counts metrics points there too, e.g. with
 * validation_freq): with delta = +min_delta in max mode, -min_delta in
 * min mode, a value v improves on r when v - delta > r (max) or
 * v - delta < r (min).  best starts at -inf (max) or +inf (min).  At
 * every point from iteration start_from_epoch + 1 on, wait += 1; if v
 * improves on best: best = v, best_iteration = it, and wait = 0 unless
 * a baseline is given that v does not improve on; otherwise, when
 * wait >= patience and this is not the first iteration, training stops
 * at it.  A NaN never improves.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_early_stop.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_EARLY_STOP_H
#define DL_EARLY_STOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "madlib_dl/dl_status.h"

/* The longest early_stopping string accepted (characters). */
#define DL_EARLY_STOP_MAX_LEN 1024
#define DL_EARLY_STOP_NAME_MAX 64

typedef enum DlEarlyStopMode
{
	DL_EARLY_STOP_AUTO = 0,
	DL_EARLY_STOP_MIN,
	DL_EARLY_STOP_MAX
} DlEarlyStopMode;

typedef struct DlEarlyStopConfig
{
	bool		enabled;		/* false: no early stopping (NULL or '') */
	bool		validation;		/* monitors the validation series */
	bool		monitor_loss;	/* the loss; else the metric `metric` */
	char		metric[DL_EARLY_STOP_NAME_MAX];	/* as written, without prefix */
	int			patience;		/* >= 0 */
	double		min_delta;		/* >= 0 (the absolute value given) */
	DlEarlyStopMode mode;
	bool		has_baseline;
	double		baseline;
	bool		restore_best;
	int			start_from;		/* Keras' start_from_epoch, >= 0 */
} DlEarlyStopConfig;

/* The rule's state for one model. */
typedef struct DlEarlyStopState
{
	bool		greater;		/* the resolved mode: higher is better */
	double		delta;			/* signed min_delta */
	double		best;
	int			best_iteration; /* 0: no point yet */
	int			wait;
	int			stopped_iteration;	/* 0: not stopped */
	int			points;			/* points monitored */
	int			metric_index;	/* the monitored metric's place in the
								 * metrics list (dl_early_stop_begin_list) */
} DlEarlyStopState;

/* What dl_early_stop_update asks of the driver. */
typedef struct DlEarlyStopAction
{
	bool		save_best;		/* this point is the best so far: keep the state */
	bool		stop;			/* stop training this model now */
} DlEarlyStopAction;

/*
 * Parse s (NULL or blank: disabled).  DL_ERR_PARSE or
 * DL_ERR_INVALID_ARGUMENT naming the piece; DL_ERR_LIMIT for a string
 * longer than DL_EARLY_STOP_MAX_LEN.  params.c.
 */
DlStatus	dl_early_stop_parse(const char *s, DlEarlyStopConfig *out, DlError *err);

/*
 * A canonical string that parses back to cfg ("" when disabled), for the
 * summary tables: "monitor=validation_loss, patience=3, min_delta=0.001,
 * mode=auto, baseline=None, restore_best=True, start_from_epoch=0".
 * DL_ERR_LIMIT when buf (len bytes) is too small.
 */
DlStatus	dl_early_stop_format(const DlEarlyStopConfig *cfg, char *buf, size_t len,
								 DlError *err);

/*
 * Check cfg against a model and begin its state: metric_name is the
 * model's compiled metric as compile_params names it (NULL: none),
 * has_validation whether a validation table is given.
 * DL_ERR_INVALID_ARGUMENT when the monitored series does not exist.
 * A disabled cfg gives DL_OK and a state that never stops.
 */
DlStatus	dl_early_stop_begin(const DlEarlyStopConfig *cfg, const char *metric_name,
								bool has_validation, DlEarlyStopState *st, DlError *err);

/*
 * The same for a model compiled with the metrics names[0..n) (n 0: none):
 * the monitored metric may be any of them; st->metric_index is its place
 * in the list (0 when the loss is monitored).
 */
DlStatus	dl_early_stop_begin_list(const DlEarlyStopConfig *cfg, const char *const *names, int n,
									 bool has_validation, DlEarlyStopState *st, DlError *err);

/*
 * The rule at the metrics point of iteration it (>= 1, increasing),
 * whose monitored value is value (the file's header).
 */
DlEarlyStopAction dl_early_stop_update(const DlEarlyStopConfig *cfg, DlEarlyStopState *st,
									   int it, double value);

/* Whether a metric name is one whose value is better higher (accuracies). */
bool		dl_early_stop_higher_is_better(const char *metric);

#endif							/* DL_EARLY_STOP_H */
