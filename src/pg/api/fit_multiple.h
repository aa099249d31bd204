/*-------------------------------------------------------------------------
 *
 * fit_multiple.h
 *	  The model hopping run of fit_multiple (fit_multiple.c), shared with
 *	  madlib_keras_automl (automl.c).
 *
 * A run has K models (a DlPgTrainJob's configurations), one state slot
 * each on a transport, and a model hopper (dl_hopper.h) whose models
 * train on the segments.  In fit_multiple hopper model k is model k for
 * the whole run.  AutoML adds a hopper model for each job (a model's
 * next rung) between rounds and drops it when the job ends: hop_model
 * maps hopper models to models, and hop_offset turns the round's
 * iteration into the model's own (its shuffle seed and its history).
 *
 *	 dl_fm_describe       the models' state sizes, costs and metrics
 *	 dl_fm_start          the transport, one slot per model
 *	 dl_fm_init_state     a model's initial state into its slot
 *	 dl_fm_train_round    iterations first..last of every live hopper model
 *	 dl_fm_evaluate       a metrics point of some models
 *	 dl_fm_final_weights  a model's weights, from its slot
 *
 * IDENTIFICATION
 *	  src/pg/api/fit_multiple.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_PG_FIT_MULTIPLE_H
#define DL_PG_FIT_MULTIPLE_H

#include "postgres.h"

#include "portability/instr_time.h"
#include "utils/array.h"

#include "madlib_dl/dl_hopper.h"
#include "madlib_dl/dl_params.h"

#include "history.h"
#include "job.h"
#include "transport.h"

/* What the leader knows about one model configuration. */
typedef struct FmModel
{
	int32		mst_key;
	Size		state_size;		/* dl_blob_size */
	double		cost;			/* parameters x epochs: the hopper's estimate */
	DlMetricKind metric;
	char		metric_name[64];	/* as compile_params wrote it, e.g. top_3_accuracy */
	bool		has_metric;
	bool		higher_is_better;	/* its metric is an accuracy */
	bool		diverged;
	bool		stopped;		/* early stopping ended it (dropped from the hopper) */
	DlEarlyStopState es;		/* early stopping's rule (job.early_stop) */
	uint8	   *best;			/* (best_len) its best state, restore_best; NULL: none */
	size_t		best_len;
	DlPgHistory history;
	double		train_seconds;	/* its steps' own time, on whichever segment */
	double		finished_at;	/* seconds from the start to its last step */
} FmModel;

/* One model hopping run in progress. */
typedef struct FmRun
{
	DlPgTrainJob job;
	int			K;
	FmModel    *models;			/* (K) */
	DlHopper   *hopper;
	int		   *hop_model;		/* (hopper models) their models; NULL: the same numbers */
	int64	   *hop_offset;		/* (hopper models) iteration - offset = the model's own */
	int			hop_cap;		/* room in hop_model and hop_offset */
	DlTransport *segs;
	int			launched;		/* segments that run without the leader */
	bool		has_val;
	int		   *seg_model;		/* (nseg) model on each segment, -1 idle */
	int		   *seg_hop;		/* (nseg) its hopper model (TRAIN) */
	double	   *win_loss;		/* (K, W) training loss sums per iteration of a
								 * round, for fit_multiple's NOTICEs; NULL: none */
	int64	   *win_n;			/* (K, W) */
	ArrayType  *schedule;		/* mst_key at each place, NULL for an empty one */
	instr_time	start;
} FmRun;

/* Every model's description from r->job, histories of n_points entries. */
void		dl_fm_describe(FmRun *r, MemoryContext cxt, int64 n_points);

/*
 * The hopper with hopper models 0..n-1 for models[0..n-1] (NULL: model k
 * for each k < K), their iterations offset by offsets[] (NULL: 0).
 */
void		dl_fm_make_hopper(FmRun *r, const int *models, const int64 *offsets, int n,
							  MemoryContext cxt);

/* Between rounds: a new hopper model for model k; returns its number. */
int			dl_fm_hop_add(FmRun *r, int k, int64 offset);

/* The model of hopper model h. */
static inline int
dl_fm_hop_model(const FmRun *r, int h)
{
	return r->hop_model != NULL ? r->hop_model[h] : h;
}

/* The segments of r->job's transport, one slot per model (no state written yet). */
void		dl_fm_start(FmRun *r, MemoryContext cxt);

/* Model k's initial state (given weights, or random from its seed) into its slot. */
void		dl_fm_init_state(FmRun *r, int k, MemoryContext cxt);

/*
 * Iterations first..target of every live hopper model, in the hopper's
 * order, without a barrier; with win_loss, fit_multiple's NOTICEs for the
 * iterations before target.
 */
void		dl_fm_train_round(FmRun *r, int first, int target);

/*
 * A metrics point: models[0..n-1] (not diverged) on every segment; model
 * models[i]'s history gets its entry at iteration iters[i] (NULL: it).
 */
void		dl_fm_evaluate(FmRun *r, int it, const int *models, const int *iters, int n);

/*
 * Model k's final weights, in the current memory context: from its
 * slot, or from the copy of its best state when early stopping kept one.
 */
bytea	   *dl_fm_final_weights(FmRun *r, int k);

#endif							/* DL_PG_FIT_MULTIPLE_H */
