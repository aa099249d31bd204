/*-------------------------------------------------------------------------
 *
 * history.h
 *	  The metric history of a model during fit or fit_multiple: one entry
 *	  per metrics point, and the result columns made from it.
 *
 * IDENTIFICATION
 *	  src/pg/api/history.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_PG_HISTORY_H
#define DL_PG_HISTORY_H

#include "postgres.h"

#include "madlib_dl/dl_early_stop.h"

#include "segments.h"

/* Sums of an evaluation over segments: divide by the counts. */
typedef struct DlPgEvalSums
{
	double		train_loss;
	double		train_metric;
	int64		train_n;
	double		val_loss;
	double		val_metric;
	int64		val_n;
	int			n_out;			/* a model of several outputs: each one's sums */
	double		train_out_loss[DL_MAX_IO];
	double		train_out_metric[DL_MAX_IO];
	double		val_out_loss[DL_MAX_IO];
	double		val_out_metric[DL_MAX_IO];
	int			n_msum;			/* the metric sums block (DlSegStats'): n_msum
								 * per partition, training's then validation's */
	double		msum[2 * DL_METRIC_SUMS_MAX];
} DlPgEvalSums;

/* Per-output series of a model of several outputs: (cap, n_out) means. */
typedef struct DlPgOutputHistory
{
	double	   *train_loss;
	double	   *train_metric;
	double	   *val_loss;
	double	   *val_metric;
} DlPgOutputHistory;

typedef struct DlPgHistory
{
	int			n;				/* entries so far */
	int64		cap;			/* metrics points planned */
	double	   *train_loss;		/* (cap) means */
	double	   *train_metric;
	double	   *val_loss;
	double	   *val_metric;
	int32	   *iters;			/* (cap) the iteration of each entry */
	double	   *elapsed;		/* (cap) seconds since the start */
	int			n_out;			/* outputs of a model of several; else 0 */
	DlPgOutputHistory out;		/* when n_out > 0 */

	/*
	 * Every metric of compile_params (dl_pg_history_set_metrics): their
	 * names as written, and with metric sums (several metrics, or auc,
	 * precision or recall) each one's series, (cap, n_metrics) values;
	 * train_metric and val_metric above are then metric 0's.  Without
	 * sums the one metric's series are train_metric and val_metric.
	 */
	int			n_metrics;
	char	  **names;
	bool		sums;
	DlMetricKind kinds[DL_MAX_METRICS];
	int			top_k[DL_MAX_METRICS];
	double	   *m_train;
	double	   *m_val;
} DlPgHistory;

/*
 * Room for n_points entries (dl_limits_metric_points; the job's memory
 * check bounded it) in the current memory context, for a model of n_out
 * outputs (each one's series too when n_out > 1).
 */
void		dl_pg_history_init(DlPgHistory *h, int64 n_points, int n_out);

/*
 * Record every metric of cp (after dl_pg_history_init, in the same
 * memory context): names, and room for their series when the
 * evaluations keep metric sums.
 */
void		dl_pg_history_set_metrics(DlPgHistory *h, const DlCompileParams *cp);

/* The series of metric i (0 .. n_metrics - 1) at entry j: training, or validation when val. */
double		dl_pg_history_metric(const DlPgHistory *h, int j, int i, bool val);

/* The value early stopping (cfg, es: its monitored metric) reads at entry j. */
double		dl_pg_history_monitored(const DlPgHistory *h, int j, const DlEarlyStopConfig *cfg,
									const DlEarlyStopState *es);

/*
 * The metrics column: {"training": {"<name>": [v, ...], ...},
 * "validation": {...}} (validation only when has_val), one value per
 * metrics point, NaN and infinities as null; NULL (*isnull) without a
 * metric.
 */
Datum		dl_pg_history_metrics_json(const DlPgHistory *h, bool has_val, bool *isnull);

/* Add a segment's EVAL statistics to sums. */
void		dl_pg_eval_sums_add(DlPgEvalSums *sums, const DlSegStats *st);

/* Record iteration it's means from sums; returns the entry's index. */
int			dl_pg_history_add(DlPgHistory *h, int it, const DlPgEvalSums *sums, double elapsed);

/*
 * The six result columns training_loss, training_metrics,
 * validation_loss, validation_metrics, metrics_iters and
 * metrics_elapsed_time (arrays; the metric ones NULL without a metric,
 * the validation ones NULL without a validation table) into values[0..5]
 * and nulls[0..5].
 */
void		dl_pg_history_columns(const DlPgHistory *h, bool has_metric, bool has_val,
								  Datum *values, bool *nulls);

/*
 * The four per-output result columns output_training_loss,
 * output_training_metrics, output_validation_loss and
 * output_validation_metrics: two-dimensional arrays, one row per metrics
 * point and one column per output; NULL for a model of one output, the
 * metric ones without a metric, the validation ones without a validation
 * table.
 */
void		dl_pg_history_output_columns(const DlPgHistory *h, bool has_metric, bool has_val,
										 Datum *values, bool *nulls);

#endif							/* DL_PG_HISTORY_H */
