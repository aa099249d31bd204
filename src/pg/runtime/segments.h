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

#include "madlib_dl/dl_epoch.h"
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
	double		read_seconds;	/* of which reading a streamed partition */
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

/* use_caching: NULL (the budget decides), true or false. */
typedef enum DlCaching
{
	DL_CACHING_AUTO = 0,		/* cached when it fits madlib_dl.partition_memory */
	DL_CACHING_ON,				/* cached; 54000 when it does not fit */
	DL_CACHING_OFF				/* streamed */
} DlCaching;

typedef struct DlSegSetup
{
	DlTransportKind transport;
	DlCaching	caching;		/* the job's use_caching */
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
 * One buffer of a partition: its rows, its first row in the partition,
 * and its x and y values as stored (a TOAST pointer, or a copy of a value
 * stored in the row).
 */
typedef struct DlSegBuffer
{
	int32		buffer_id;
	int64		n;
	int64		start;
	Datum		x;
	Datum		y;
} DlSegBuffer;

/*
 * One segment's partition (runtime/partition.c): its buffers in
 * buffer_id order (the directory), and either every row in memory
 * (cached) or nothing more: the steps read the rows of each block of the
 * one shuffle (dl_epoch.h) when its window comes (streamed).
 */
typedef struct DlSegPartition
{
	bool		loaded;
	bool		cached;
	int64		n;				/* N, samples */
	int64		x_width;		/* floats per sample */
	int64		y_width;		/* classes */
	int			nbuf;
	int			cap;
	DlSegBuffer *bufs;			/* (nbuf) */
	Size		dir_bytes;		/* what the directory holds */
	DlBlock    *blocks;			/* (n_blocks) the shuffle's blocks */
	int64		n_blocks;
	float	   *x;				/* cached: (N, x_width) */
	float	   *y;				/* cached: (N, y_width), one-hot */
	MemoryContext cxt;			/* all of the above */
	const char *relname;		/* for messages */
	int			seg;
} DlSegPartition;

/*
 * Read the directory of segment seg of packed table rel (columns x_col,
 * y_col and their _shape columns), in buffer_id order, into p (memory in
 * cxt): the rows with __dist_key__ = seg when by_dist_key, else
 * buffer_id % nseg = seg.  Shapes and value sizes are checked (22000,
 * 22004); nothing is decoded.  The caller has checked the column types
 * (dl_pg_require_packed_table) and holds a lock on rel.
 */
void		dl_seg_partition_read(DlSegPartition *p, Oid rel, const char *x_col, const char *y_col,
								  bool by_dist_key, int seg, int nseg, MemoryContext cxt);

/* The same from buffers given in buffer_id order (their values stay the caller's). */
void		dl_seg_partition_from_buffers(DlSegPartition *p, const DlSegBuffer *bufs, int nbuf,
										  int64 x_width, int64 y_width, const char *relname,
										  int seg, MemoryContext cxt);

/* Bytes p holds cached (decoded rows, directory, blocks), and streamed at most. */
double		dl_seg_partition_cache_bytes(const DlSegPartition *p);
double		dl_seg_partition_stream_bytes(const DlSegPartition *p);

/*
 * Place the partitions one process holds under budget bytes: caching ON
 * caches each (54000 when one alone is over budget), OFF streams each,
 * AUTO caches them all when they fit together, else caches them in order
 * while the cached ones and the largest streaming need fit (and any that
 * streaming would hold more of than caching), and streams the others.
 * 54000 when a partition to be streamed needs more than budget.
 */
void		dl_seg_partitions_place(DlSegPartition **ps, int np, DlCaching caching,
									double budget);

/*
 * Decode rows [offset, offset + n) of buffer buf of p into x (n, x_width)
 * and y (n, y_width): a slice of the values when they are stored out of
 * line without compression, else from the whole value.  22000 for a bad
 * value, naming the buffer and rows.
 */
void		dl_seg_partition_read_rows(const DlSegPartition *p, int buf, int64 offset, int64 n,
									   float *x, float *y);

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
 *	 3. run m->fit.epochs passes over p in the order of the one shuffle
 *	    (dl_epoch.h: its blocks permuted, then the rows of each window of
 *	    blocks when m->fit.shuffle), mini-batches of m->fit.batch_size; a
 *	    streamed partition reads each window's blocks when it comes, a
 *	    cached one points into its rows: the same batches either way;
 *	 4. write the new state back into state (capacity state_cap bytes) with
 *	    the number of samples trained on, and set *state_len_out.
 * When a round record (dl_visit.h) follows the blob in state (state_len
 * is the blob's size plus DL_VISIT_ROUND_BYTES: fit with an
 * averaging_period or lr_scaling), the step is one round of the visit:
 * step 2 only when the record begins the visit, step 3 from the
 * record's position for at most its max_batches mini-batches at its
 * learning-rate factor, and step 4 writes the record back after the
 * state: where the visit stands, and whether it is done (an empty
 * partition's visit is done at once).
 * st gets the training loss/metric sums over the round and samples_seen.
 * An empty partition leaves state untouched (samples_seen 0).
 * Divergence (DL_ERR_DIVERGED: NaN/inf loss or weight): with
 * catch_divergence, st->diverged is set, st->message holds the engine's
 * message, state is left untouched (it still holds the last finite
 * state) and false is returned; without it, an ERROR (22000).  Every
 * other problem is an ERROR.  The result depends only on the state bytes,
 * m's definition, p, iteration and segment: never on the process, nor on
 * what m held before, nor on whether p is cached or streamed.  The
 * step's own memory (the window, the block order) is in a child of cxt,
 * deleted when it returns.  Runs CHECK_FOR_INTERRUPTS between
 * mini-batches and between the blocks it reads.  st->read_seconds is the
 * time spent reading a streamed partition.
 */
bool		dl_seg_train_step(DlPgModel *m, uint8 *state, Size state_len, Size state_cap,
							  Size *state_len_out, DlSegPartition *p, MemoryContext cxt,
							  int64 iteration, int segment, bool catch_divergence,
							  DlSegStats *st);

/*
 * Evaluate the state in state[0..state_len) on the training partition
 * tp and, when vp is not NULL, the validation partition vp: loss and
 * metric sums into st->train_* and st->val_*, the rows in order in
 * batches of batch_size (the same batches whether a partition is cached
 * or streamed).  state is not written.
 */
void		dl_seg_eval_step(DlPgModel *m, const uint8 *state, Size state_len,
							 DlSegPartition *tp, DlSegPartition *vp, MemoryContext cxt,
							 DlSegStats *st);

/* ERROR 22000 when partition p's sample sizes do not fit model m; what names p. */
void		dl_seg_check_partition(const DlPgModel *m, const DlSegPartition *p, const char *what);


/* The default number of virtual segments: max(1, min(online CPUs, max_parallel_workers)). */
int			dl_seg_default_count(void);

/* Worker entry point, found by name by the parallel machinery. */
extern PGDLLEXPORT void dl_segment_worker_main(dsm_segment *seg, shm_toc *toc);

#endif							/* SEGMENTS_H */
