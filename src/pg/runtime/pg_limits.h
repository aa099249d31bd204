/*-------------------------------------------------------------------------
 *
 * pg_limits.h
 *	  The madlib_dl.max_model_memory limit: a check, made from the
 *	  architectures before any model is built, that fails early with
 *	  54000 instead of through the OOM killer.
 *
 * IDENTIFICATION
 *	  src/pg/runtime/pg_limits.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_PG_LIMITS_H
#define DL_PG_LIMITS_H

#include "postgres.h"

#include "lib/stringinfo.h"
#include "madlib_dl/dl_model.h"

/* madlib_dl.max_model_memory, in kB (GUC_UNIT_KB). */
extern int	dl_pg_max_model_memory_kb;

/* madlib_dl.partition_memory, in kB (GUC_UNIT_KB); -1: the default rule. */
extern int	dl_pg_partition_memory_kb;

/*
 * Define the GUCs madlib_dl.max_model_memory and madlib_dl.partition_memory.
 * Call once, from _PG_init, before MarkGUCPrefixReserved("madlib_dl").
 */
void		dl_limits_init(void);

/*
 * The per-segment partition budget in bytes (docs/fit.md, "Memory"):
 * madlib_dl.partition_memory when set, else the default rule
 * max(64 MB, (physical memory - shared_buffers) / (2 * nseg)), nseg the
 * segments this server runs at once (the job's virtual segments; on a
 * Greenplum segment or a PL/Proxy node, dl_seg_default_count()).
 */
double		dl_limits_partition_budget(int nseg);

/* What a job is: it decides what one of its processes holds. */
typedef enum DlPgJobKind
{
	DL_PG_JOB_FIT,				/* _fit_run: virtual segments on this server */
	DL_PG_JOB_FIT_MULTIPLE,		/* _fit_multiple_run: the same, many models */
	DL_PG_JOB_DISTRIBUTED,		/* fit or fit_multiple over Greenplum segments
								 * or a PL/Proxy cluster: states travel as
								 * bytea values */
	DL_PG_JOB_EVALUATE,			/* _evaluate_segment */
	DL_PG_JOB_PREDICT			/* _predict_batch */
} DlPgJobKind;

/* One model configuration of a job. */
typedef struct DlPgJobModel
{
	const char *arch;			/* Keras JSON, NUL-terminated */
	const char *compile_params; /* NULL: none (predict) */
	const char *fit_params;		/* NULL: defaults */
	const char *what;			/* names it in messages: "model_id 3" */
} DlPgJobModel;

typedef struct DlPgJob
{
	DlPgJobKind kind;
	int			n_models;		/* >= 1 */
	const DlPgJobModel *models; /* (n_models) */
	int			num_iterations; /* the fit kinds: >= 1 */
	int			metrics_frequency;	/* the fit kinds: 1..num_iterations */
	int			nseg;			/* FIT, FIT_MULTIPLE: virtual segments, >= 1 */
	int64		batch_size;		/* EVALUATE, PREDICT: rows per forward pass */
	bool		keep_best;		/* the fit kinds: early stopping keeps a copy of
								 * each model's best state (restore_best) */
} DlPgJob;

/*
 * Check what one process of job holds besides the data it reads (the
 * partitions are the subject of madlib_dl.partition_memory, the rows of
 * a batch of predict of their own limits), before anything is allocated: every model is parsed but
 * none is built, its use estimated with dl_model_memory_estimate, and the
 * job's own buffers added (see docs/errors.md, "Memory limit"):
 *	 FIT           the leader, which may run every segment: the master
 *	               model, the double-precision averaging buffer and the
 *	               state an iteration began from, one training model and
 *	               its shuffle order (8 bytes per row of a window of the
 *	               one shuffle, dl_epoch.h), nseg states (and their round
 *	               records) in shared memory, the metric history, the
 *	               returned weights;
 *	 FIT_MULTIPLE  the leader: the DL_SEG_MODEL_CACHE largest training
 *	               models and their shuffle orders, one state model,
 *	               every model's state in shared memory, histories and
 *	               schedule arrays, returned weights;
 *	 DISTRIBUTED   a training model and its shuffle order, the averaging buffer, the states in
 *	               the coordinator's slots (one per model; fit: one per
 *	               segment) and a round's states as bytea values, the
 *	               histories;
 *	 EVALUATE      an inference model for batch_size rows;
 *	 PREDICT       the same, and the batch's inputs and outputs.
 * With keep_best (early stopping's restore_best) each kind adds one more
 * state per model: the copy of its best state.
 * ERROR 54000 naming the model, the total and its parts when a model
 * alone or the whole is over madlib_dl.max_model_memory, when a model's
 * weights (DISTRIBUTED: its state) cannot fit in one bytea value, or
 * when the metric history would not fit in an array.  Returns the
 * estimate, in bytes.
 */
double		dl_limits_check_job(const DlPgJob *job);

/*
 * The batch that an EVALUATE or PREDICT job (one model; its batch_size is
 * not read) runs: want rows per forward pass when that fits
 * madlib_dl.max_model_memory, else the largest smaller batch that fits
 * (by the same estimate as dl_limits_check_job), else 1, which
 * dl_limits_check_job then refuses with the estimate and the limit.
 * want < 1 is taken as 1.  Parses the model, builds nothing.
 */
int64		dl_limits_fit_batch(const DlPgJob *job, int64 want);

/*
 * ERROR 54000 when est, one model's estimate for a batch of batch rows,
 * is over madlib_dl.max_model_memory: the check of every model
 * dl_pg_model_create builds.
 */
void		dl_limits_check_model(const DlMemoryEstimate *est, int64 batch);

/*
 * ERROR 54000 when an architecture of n_params parameters cannot have
 * its weights in one model_weights value (a bytea of at most 1 GB: about
 * 268 million float32 values).  what names it.
 */
void		dl_limits_check_weights(size_t n_params, const char *what);

/* Metric points of a fit: every freq-th iteration and the last. */
static inline int64
dl_limits_metric_points(int num_iterations, int freq)
{
	return num_iterations / freq + (num_iterations % freq != 0 ? 1 : 0);
}

/* Largest bytea payload: the weights or a state moved as one value. */
#define MAX_BYTEA_PAYLOAD ((double) (MaxAllocSize - VARHDRSZ))

/* Helpers of limits.c that job_limits.c shares. */
double		dl_limits_bytes(void);
char	   *dl_limits_size_text(double bytes);
char	   *dl_limits_raise_hint(const char *first, double bytes);
void		dl_limits_append_estimate(StringInfo buf, const DlMemoryEstimate *est, const char *before,
									  const char *after);
const char *dl_limits_model_advice(const DlMemoryEstimate *est);

#endif							/* DL_PG_LIMITS_H */
