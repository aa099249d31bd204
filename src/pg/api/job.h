/*-------------------------------------------------------------------------
 *
 * job.h
 *	  One training job: what _fit_run and _fit_multiple_run are asked to
 *	  do, read from one madlib_dl._train_job value and checked once.
 *
 * The SQL drivers (_fit, _fit_multiple) validate the user's tables and
 * parameters, then pass a madlib_dl._train_job composite (src/sql/
 * fit.sql has its fields).  The internal entry points are SQL-callable
 * by anyone, so dl_pg_job_read checks every field again: whatever a
 * caller passes, a job that reaches a driver is well-formed.
 *
 * IDENTIFICATION
 *	  src/pg/api/job.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_PG_JOB_H
#define DL_PG_JOB_H

#include "postgres.h"

#include "fmgr.h"

#include "madlib_dl/dl_early_stop.h"

#include "pg_limits.h"
#include "segments.h"

/* fit's lr_scaling: the learning rate times 1, N or sqrt(N) (fit.c). */
typedef enum DlPgLrScaling
{
	DL_PG_LR_SCALING_NONE = 0,
	DL_PG_LR_SCALING_LINEAR,
	DL_PG_LR_SCALING_SQRT
} DlPgLrScaling;

typedef struct DlPgTrainJob
{
	Oid			source;			/* packed training table */
	DlSegVars	vars;			/* its variables: x_cols, y_cols */
	Oid			validation;		/* packed validation table, or InvalidOid */
	DlSegVars	val_vars;		/* its variables: val_x_cols, val_y_cols */
	int			n_models;		/* K: 1 for fit */
	int32	   *mst_keys;		/* (K) distinct */
	char	  **archs;			/* (K) Keras JSON */
	bytea	  **inits;			/* (K) initial weights, NULL: random */
	char	  **compiles;		/* (K) compile_params */
	char	  **fits;			/* (K) fit_params, NULL: defaults */
	int			num_iterations; /* >= 1 */
	int			freq;			/* metrics_compute_frequency, 1..num_iterations */
	int			nseg;			/* segments, 1..DL_SEG_MAX */
	uint64		schedule_seed;	/* fit_multiple's visit order */
	DlTransportKind transport;
	char	   *cluster;		/* PLPROXY: its cluster */
	DlCaching	caching;		/* use_caching: NULL (AUTO), true, false */
	int			averaging_period;	/* fit: mini-batches between averages; 0
									 * (NULL): once per iteration */
	DlPgLrScaling lr_scaling;	/* fit: NULL is NONE */
	DlEarlyStopConfig early_stop;	/* early_stopping, parsed once; NULL:
									 * disabled */
} DlPgTrainJob;

/*
 * Begin model k's early-stopping state (dl_early_stop_begin_list) for a
 * model whose history h records its compiled metrics (h->names; none:
 * only the loss): ERROR 22023 naming the model (what, NULL for fit's one
 * model) when the monitored series does not exist.
 */
struct DlPgHistory;
void		dl_pg_job_early_stop_begin(const DlPgTrainJob *job, const struct DlPgHistory *h,
									   const char *what, DlEarlyStopState *st);

/*
 * Read and check the _train_job value job (its memory in the current
 * context).  max_models: 1 for fit, DL_SEG_MAX_MODELS for fit_multiple.
 * ERROR 22004 for a missing field, 22023 (or 54000 for a limit) for a
 * bad one, naming it.
 */
void		dl_pg_job_read(HeapTupleHeader job, int max_models, DlPgTrainJob *out);

/*
 * dl_pg_job_read of the job argument (0) of _fit_run or _fit_multiple_run,
 * the only one: a call with other arguments is the 0.1.0 SQL's
 * (dl_pg_old_sql_error; compat.c); a NULL job is 22004, whose hint names
 * driver, the function that fills the job.
 */
void		dl_pg_job_read_arg(FunctionCallInfo fcinfo, const char *driver, int max_models,
							   DlPgTrainJob *out);

/*
 * The rule for num_iterations and metrics_compute_frequency (NULL, i.e.
 * freq_null, means num_iterations): ERROR 22023 unless num_iterations
 * >= 1 and 1 <= freq <= num_iterations.  Returns freq.
 */
int			dl_pg_check_iterations(int num_iterations, bool freq_null, int freq);

/*
 * The rule for fit's averaging_period and lr_scaling (NULL: period_null,
 * scaling NULL): ERROR 22023 unless the period is NULL or at least 1 and
 * lr_scaling is NULL, 'linear' or 'sqrt'.  Sets *period (0 for NULL)
 * and *scaling.
 */
void		dl_pg_check_averaging(bool period_null, int period, const char *scaling,
								  int *period_out, DlPgLrScaling *scaling_out);

/*
 * The segments' description of job: its tables, models and transport,
 * prepared for dl_transport_start (dl_seg_setup_prepare: the tables checked
 * as packed ones, the executor and the partition budget set).
 */
void		dl_pg_job_setup(const DlPgTrainJob *job, DlSegModelDef *defs, DlSegSetup *setup);

/*
 * The memory check of job (pg_limits.h) before anything is built: kind
 * FIT or FIT_MULTIPLE, or DISTRIBUTED for the other transports.
 */
void		dl_pg_job_check_memory(const DlPgTrainJob *job, DlPgJobKind kind);

#endif							/* DL_PG_JOB_H */
