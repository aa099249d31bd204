/*-------------------------------------------------------------------------
 *
 * segments.h
 *	  What a segment is and does, for every transport: the commands and
 *	  statistics of the transport interface (transport.h), the job's
 *	  description, the partition in memory, and the per-segment steps.
 *
 * A job has nseg segments.  Segment k is the set of buffers of the packed
 * table with __dist_key__ = k (or buffer_id % nseg = k when the table has
 * no __dist_key__ column), in buffer_id order, and its share of the
 * validation table (buffer_id % nseg = k).  On PostgreSQL a segment is a
 * parallel worker (transport/workers.c), on Greenplum a real segment
 * (transport/greenplum.c), with PL/Proxy a partition of a cluster
 * (transport/plproxy.c).
 *
 * Model states are dl_blob values in n_slots state slots.  The driver
 * gives a segment a command (kind, model, slot, iteration); the segment
 * reads the state in its command's slot, works on its partition, writes
 * the state back (TRAIN) and reports its statistics.  fit uses one model
 * and one slot per segment; fit_multiple gives each model its own slot
 * and moves models between segments by naming their slots.
 *
 * The per-segment steps (dl_seg_train_step, dl_seg_eval_step, defined in
 * runtime/step.c) use no ParallelContext and no shared memory: they work
 * on a state buffer and a partition in process memory, so a worker, the
 * leader, a Greenplum segment and a PL/Proxy node run the very same code.
 *
 * IDENTIFICATION
 *	  src/pg/runtime/segments.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGMENTS_H
#define SEGMENTS_H

#include "postgres.h"

#include "storage/dsm.h"
#include "storage/shm_toc.h"

#include "madlib_dl/dl_model.h"

#include "pg_model.h"

/* Most virtual segments (distribution_rules accepts 1..DL_SEG_MAX). */
#define DL_SEG_MAX 64

/* Most distinct model configurations in one job. */
#define DL_SEG_MAX_MODELS 1024

/*
 * Most places of a Greenplum model hopper (max(models, segments)): a
 * sanity bound far above any cluster's segment count.
 */
#define DL_SEG_MAX_PLACES 65536

/*
 * Most models one process keeps built at a time (a cache keyed by model
 * definition; the least recently used is freed first).  A built model
 * holds its weights, gradients, optimizer state and workspace.
 */
#define DL_SEG_MODEL_CACHE 8

/* Room for an engine message in DlSegStats. */
#define DL_SEG_MESSAGE_LEN 256

typedef enum DlSegCommandKind
{
	DL_SEG_CMD_NONE = 0,		/* idle this round */
	DL_SEG_CMD_TRAIN,			/* slot -> epochs over the partition -> slot */
	DL_SEG_CMD_EVAL,			/* slot -> loss and metric on both partitions */
	DL_SEG_CMD_EXIT				/* leave the loop (workers only) */
} DlSegCommandKind;

typedef struct DlSegCommand
{
	DlSegCommandKind kind;
	int			model;			/* index into the job's model definitions */
	int			slot;			/* state slot read, and written by TRAIN */
	int64		iteration;		/* 1-based; feeds the shuffle seed */
	bool		catch_divergence;	/* TRAIN: report DL_ERR_DIVERGED in the
									 * stats instead of raising an ERROR */
} DlSegCommand;

/* What a segment reports after a command.  Sums; divide by the counts. */
typedef struct DlSegStats
{
	double		train_loss_sum; /* TRAIN: over all epochs; EVAL: training partition */
	double		train_metric_sum;
	int64		train_n;
	double		val_loss_sum;	/* EVAL with a validation table */
	double		val_metric_sum;
	int64		val_n;
	int64		samples_seen;	/* TRAIN: epochs * partition rows; the averaging weight */
	double		seconds;		/* time the command took on this segment */
	bool		diverged;		/* TRAIN with catch_divergence: the loss or a
								 * weight became NaN/inf; the slot is left
								 * as it was (the last finite state) */
	char		message[DL_SEG_MESSAGE_LEN];	/* the engine's message then */
} DlSegStats;

/* One model configuration of a job. */
typedef struct DlSegModelDef
{
	const char *arch_json;		/* NUL-terminated Keras JSON */
	const char *compile_params; /* MADlib compile_params */
	const char *fit_params;		/* MADlib fit_params, may be NULL */
} DlSegModelDef;

/* The transports (transport.h). */
typedef enum DlTransportKind
{
	DL_TRANSPORT_WORKERS = 0,	/* parallel workers on this server */
	DL_TRANSPORT_GREENPLUM,		/* aggregates over Greenplum's segments */
	DL_TRANSPORT_PLPROXY		/* a PL/Proxy cluster */
} DlTransportKind;

typedef struct DlSegSetup
{
	DlTransportKind transport;
	const char *cluster;		/* PLPROXY: the cluster's name */
	Oid			source;			/* packed training table */
	const char *x_col;			/* independent column; <x_col>_shape holds shapes */
	const char *y_col;			/* dependent column; <y_col>_shape */
	Oid			validation;		/* packed validation table, or InvalidOid */
	const char *val_x_col;
	const char *val_y_col;
	int			nseg;			/* 1..DL_SEG_MAX */
	int			n_models;		/* 1..DL_SEG_MAX_MODELS */
	const DlSegModelDef *models;	/* (n_models) */
	int			n_slots;		/* state slots, >= 1 */
	Size		slot_size;		/* bytes per slot: the largest dl_blob_size */
	const Size *slot_sizes;		/* (n_slots) bytes of each slot, or NULL:
								 * every slot has slot_size bytes */
} DlSegSetup;

/*
 * One partition in process memory: a segment's buffers, concatenated in
 * buffer_id order.
 */
typedef struct DlSegPartition
{
	bool		loaded;
	int64		n;				/* N, samples */
	int64		x_width;		/* floats per sample */
	int64		y_width;		/* classes */
	float	   *x;				/* (N, x_width) */
	float	   *y;				/* (N, y_width), one-hot */
	float	   *y_index;		/* (N, 1) class index, made on first use
								 * for sparse losses */
} DlSegPartition;

/* ---------------------------------------------------------------------
 * The per-segment steps (runtime/step.c): no shared memory, no parallel
 * machinery; the same code in the PostgreSQL workers, the leader and a
 * Greenplum aggregate.
 * --------------------------------------------------------------------- */

/*
 * Train model m (built with compile params) on one segment's partition p
 * for one visit:
 *	 1. load the state in state[0..state_len) (a dl_blob: weights,
 *	    optimizer state, rng) into m;
 *	 2. reseed m's shuffle/dropout generator with
 *	    dl_rng_hash_seed(m->fit.seed, iteration, segment);
 *	 3. run m->fit.epochs passes over p (mini-batches of m->fit.batch_size,
 *	    shuffled when m->fit.shuffle);
 *	 4. write the new state back into state (capacity state_cap bytes) with
 *	    the number of samples trained on, and set *state_len_out.
 * st gets the training loss/metric sums over all epochs and samples_seen.
 * An empty partition leaves state untouched (samples_seen 0).
 * Divergence (DL_ERR_DIVERGED: NaN/inf loss or weight): with
 * catch_divergence, st->diverged is set, st->message holds the engine's
 * message, state is left untouched (it still holds the last finite
 * state) and false is returned; without it, an ERROR (22000).  Every
 * other problem is an ERROR.  The result depends only on the state bytes,
 * m's definition, p, iteration and segment: never on the process, nor on
 * what m held before.  cxt holds the lazily made class-index array of p.
 * Runs CHECK_FOR_INTERRUPTS between mini-batches.
 */
bool		dl_seg_train_step(DlPgModel *m, uint8 *state, Size state_len, Size state_cap,
							  Size *state_len_out, DlSegPartition *p, MemoryContext cxt,
							  int64 iteration, int segment, bool catch_divergence,
							  DlSegStats *st);

/*
 * Evaluate the state in state[0..state_len) on the training partition
 * tp and, when vp is not NULL, the validation partition vp: loss and
 * metric sums into st->train_* and st->val_*.  state is not written.
 */
void		dl_seg_eval_step(DlPgModel *m, const uint8 *state, Size state_len,
							 DlSegPartition *tp, DlSegPartition *vp, MemoryContext cxt,
							 DlSegStats *st);

/* ERROR 22000 when partition p's sample sizes do not fit model m; what names p. */
void		dl_seg_check_partition(const DlPgModel *m, const DlSegPartition *p, const char *what);


/*
 * Read segment seg's buffers of packed table rel (columns x_col, y_col and
 * their _shape columns), in buffer_id order, into p (memory in cxt): the
 * rows with __dist_key__ = seg when by_dist_key, else buffer_id % nseg =
 * seg.  PostgreSQL only (transport/workers.c); the plproxy transport reads the
 * validation shares with it.
 */
void		dl_seg_load_partition(DlSegPartition *p, Oid rel, const char *x_col, const char *y_col,
								  bool by_dist_key, int seg, int nseg, MemoryContext cxt);

/* The default number of virtual segments: max(1, min(online CPUs, max_parallel_workers)). */
int			dl_seg_default_count(void);

/* Worker entry point, found by name by the parallel machinery. */
extern PGDLLEXPORT void dl_segment_worker_main(dsm_segment *seg, shm_toc *toc);

#endif							/* SEGMENTS_H */
