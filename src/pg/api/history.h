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
} DlPgEvalSums;

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
} DlPgHistory;

/*
 * Room for n_points entries (dl_limits_metric_points; the job's memory
 * check bounded it) in the current memory context.
 */
void		dl_pg_history_init(DlPgHistory *h, int64 n_points);

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

#endif							/* DL_PG_HISTORY_H */
