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
 * The transports reach them only through a segment executor
 * (DlSegExecutor, runtime/seg_exec.c) that the driver hands them in
 * DlSegSetup: transport code calls no runtime function.
 *
 * IDENTIFICATION
 *	  src/pg/runtime/segments.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGMENTS_H
#define SEGMENTS_H

#include "postgres.h"

#include "access/htup.h"
#include "access/tupdesc.h"
#include "fmgr.h"
#include "storage/dsm.h"
#include "storage/shm_toc.h"
#include "utils/array.h"

#include "madlib_dl/dl_epoch.h"
#include "madlib_dl/dl_model.h"
#include "madlib_dl/dl_params.h"

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

	/*
	 * EVAL of a model of several outputs: each output's loss and metric
	 * sums (train_loss_sum is their weighted total, train_metric_sum
	 * output 0's metric); n_out 0 for a model of one output.
	 */
	int			n_out;
	double		train_out_loss[DL_MAX_IO];
	double		train_out_metric[DL_MAX_IO];
	double		val_out_loss[DL_MAX_IO];
	double		val_out_metric[DL_MAX_IO];

	/*
	 * EVAL of a model whose compile_params keep metric sums
	 * (dl_compile_params_metric_sums_len: several metrics, or auc,
	 * precision or recall): n_msum sums per partition, msum[0 .. n_msum)
	 * the training partition's, msum[n_msum .. 2 n_msum) the
	 * validation's.  Only the first dl_seg_stats_size(n_msum) bytes of a
	 * DlSegStats are meaningful: transports move those, serialized by
	 * dl_seg_msum_datum / dl_seg_msum_read where they leave memory.  Last.
	 */
	int			n_msum;
	double		msum[2 * DL_METRIC_SUMS_MAX];
} DlSegStats;

/* The bytes of a DlSegStats whose metric sums block holds n_msum per partition. */
#define dl_seg_stats_size(n_msum) \
	(offsetof(DlSegStats, msum) + 2 * (Size) (n_msum) * sizeof(double))

/* A palloc'd copy of st's dl_seg_stats_size bytes (fit_multiple keeps them per model and segment; transport/seg_stats.c). */
DlSegStats *dl_seg_stats_copy(const DlSegStats *st);

/*
 * The metric sums of st as a float8[] (training's, then validation's;
 * 2 n_msum values), or NULL (*isnull) when it has none: the
 * metric_sums column of a madlib_dl._step_result.
 */
Datum		dl_seg_msum_datum(const DlSegStats *st, bool *isnull);

/*
 * Read d, a float8[] of metric sums (isnull: none), into st: its
 * training sums, or when val its validation sums added to st's (a part
 * of the validation share).  ERROR 22000 for a malformed array.
 */
void		dl_seg_msum_read(Datum d, bool isnull, bool val, DlSegStats *st);

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

/* Most variables of a packed table a job reads: every input and output. */
#define DL_SEG_MAX_VARS (2 * DL_MAX_IO)

/*
 * The variables of a packed table: the independent ones (x, one per
 * model input, in the model's order) and the dependent ones (y, one per
 * output).  Each is a bytea column <name> with its shapes in <name>_shape
 * (MADlib's multi-io layout); most models have one of each.
 */
typedef struct DlSegVars
{
	int			n_x;			/* 1 .. DL_MAX_IO */
	int			n_y;			/* 1 .. DL_MAX_IO */
	const char *x[DL_MAX_IO];
	const char *y[DL_MAX_IO];
} DlSegVars;

/*
 * The job as a segment executor reads it (runtime/seg_exec.c): the
 * tables, the model definitions and the partition budget.  The strings
 * stay the caller's.
 */
typedef struct DlSegJob
{
	Oid			source;			/* packed training table */
	DlSegVars	vars;
	bool		by_dist_key;	/* training partition by __dist_key__ */
	Oid			validation;		/* or InvalidOid */
	DlSegVars	val_vars;
	DlCaching	caching;
	int			nseg;			/* 1..DL_SEG_MAX */
	int			n_models;		/* 1..DL_SEG_MAX_MODELS */
	const DlSegModelDef *models;	/* (n_models) */
	double		partition_budget;	/* bytes of partitions one process holds */
	int			model_cache;	/* most models kept built; 0: DL_SEG_MODEL_CACHE */
} DlSegJob;

/*
 * A segment executor: what one process does with the segments a transport
 * gives it (runtime/seg_exec.c).  The transports move commands and states
 * and call these; they never run a step themselves.
 *	 create  an executor for job in this process, memory in cxt
 *	 load    read segs[0..n)'s partitions: training when train (rows_out[i]
 *	         its rows, when not NULL), else empty ones; validation when the
 *	         job has one; all of them placed under the job's budget
 *	 run     run cmd for segment seg on the state in slot (*len of cap
 *	         bytes): TRAIN writes the state back and *len; stats into *out
 */
typedef struct DlSegExec DlSegExec;

typedef struct DlSegExecutor
{
	DlSegExec  *(*create) (const DlSegJob *job, MemoryContext cxt);
	void		(*load) (DlSegExec *ex, const int *segs, int n, bool train, int64 *rows_out);
	void		(*run) (DlSegExec *ex, int seg, const DlSegCommand *cmd, uint8 *slot, Size *len,
						Size cap, DlSegStats *out);
} DlSegExecutor;

typedef struct DlSegSetup
{
	DlTransportKind transport;
	DlCaching	caching;		/* the job's use_caching */
	const char *cluster;		/* PLPROXY: the cluster's name */
	Oid			source;			/* packed training table */
	DlSegVars	vars;			/* its variables */
	Oid			validation;		/* packed validation table, or InvalidOid */
	DlSegVars	val_vars;		/* its variables (when validation is valid) */
	int			nseg;			/* 1..DL_SEG_MAX */
	int			n_models;		/* 1..DL_SEG_MAX_MODELS */
	const DlSegModelDef *models;	/* (n_models) */
	int			n_slots;		/* state slots, >= 1 */
	Size		slot_size;		/* bytes per slot: the largest dl_blob_size */
	const Size *slot_sizes;		/* (n_slots) bytes of each slot, or NULL:
								 * every slot has slot_size bytes */
	/* set by dl_seg_setup_prepare: */
	const DlSegExecutor *executor;	/* the work of the segments */
	double		partition_budget;	/* madlib_dl.partition_memory for nseg */
} DlSegSetup;

/*
 * One buffer of a partition: its rows, its first row in the partition,
 * and the values of its variables as stored (a TOAST pointer, or a copy
 * of a value stored in the row): v[0 .. n_x) the independent ones, then
 * v[n_x .. n_x + n_y) the dependent ones (an array in the partition's
 * memory, or the caller's for dl_seg_partition_from_buffers).
 */
typedef struct DlSegBuffer
{
	int32		buffer_id;
	int64		n;
	int64		start;
	Datum	   *v;				/* (n_x + n_y) */
} DlSegBuffer;

/*
 * One segment's partition (runtime/partition.c): its buffers in
 * buffer_id order (the directory), and either every row in memory
 * (cached) or nothing more: the steps read the rows of each block of the
 * one shuffle (dl_epoch.h) when its window comes (streamed).  A sample is
 * one row of every variable: all of them travel together.
 */
typedef struct DlSegPartition
{
	bool		loaded;
	bool		cached;
	int64		n;				/* N, samples */
	int			n_x;			/* independent variables (the model's inputs) */
	int			n_y;			/* dependent ones (its outputs) */
	int64		widths[DL_SEG_MAX_VARS];	/* floats per sample of each
											 * variable: x's, then y's
											 * (classes) */
	int64		x_width;		/* the x widths together: the one shuffle's
								 * row width */
	int64		y_width;		/* the y widths together */
	int			nbuf;
	int			cap;
	DlSegBuffer *bufs;			/* (nbuf) */
	Size		dir_bytes;		/* what the directory holds */
	DlBlock    *blocks;			/* (n_blocks) the shuffle's blocks */
	int64		n_blocks;
	float	   *data[DL_SEG_MAX_VARS];	/* cached: (N, widths[i]) each */
	MemoryContext cxt;			/* all of the above */
	const char *relname;		/* for messages */
	int			seg;
} DlSegPartition;

/*
 * Variables from the text arrays x and y (one-dimensional, 1 ..
 * DL_MAX_IO names each, none NULL or empty: 22023 naming x_what or
 * y_what), the names palloc'd.
 */
void		dl_seg_vars_from_arrays(ArrayType *x, ArrayType *y, DlSegVars *out,
									const char *x_what, const char *y_what);

/* Are vars 1 .. DL_MAX_IO names of each kind, none NULL? (transport/setup.c) */
bool		dl_seg_vars_valid(const DlSegVars *vars);

/* Copy src's names into dst, palloc'd in the current context (transport/setup.c). */
void		dl_seg_vars_copy(DlSegVars *dst, const DlSegVars *src);

/*
 * ERROR unless rel has the columns of vars (bytea, and int[] shapes) and
 * buffer_id, as a packed table (dl_pg_require_packed_table); 22023 for
 * vars out of range.
 */
void		dl_seg_require_vars(Oid rel, const DlSegVars *vars);

/*
 * Read the directory of segment seg of packed table rel (the columns of
 * vars and their _shape columns), in buffer_id order, into p (memory in
 * cxt): the rows with __dist_key__ = seg when by_dist_key, else
 * buffer_id % nseg = seg.  Shapes and value sizes are checked (22000,
 * 22004); nothing is decoded.  The caller has checked the column types
 * (dl_seg_require_vars) and holds a lock on rel.
 */
void		dl_seg_partition_read(DlSegPartition *p, Oid rel, const DlSegVars *vars,
								  bool by_dist_key, int seg, int nseg, MemoryContext cxt);

/*
 * The same from buffers given in buffer_id order (their values stay the
 * caller's), of n_x and n_y variables of widths[0 .. n_x + n_y).
 */
void		dl_seg_partition_from_buffers(DlSegPartition *p, const DlSegBuffer *bufs, int nbuf,
										  int n_x, int n_y, const int64 *widths,
										  const char *relname, int seg, MemoryContext cxt);

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
 * Decode rows [offset, offset + n) of buffer buf of p into out[i] (n,
 * widths[i]) for each variable i: a slice of the values when they are
 * stored out of line without compression, else from the whole value.
 * 22000 for a bad value, naming the buffer and rows.
 */
void		dl_seg_partition_read_rows(const DlSegPartition *p, int buf, int64 offset, int64 n,
									   float *const *out);

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

/* A training step of a state held as a bytea (a PL/Proxy node, a Greenplum segment). */
typedef struct DlSegStepRun
{
	DlPgModel  *m;				/* built for training */
	DlSegPartition *part;		/* not empty */
	MemoryContext cxt;			/* the step's memory */
	MemoryContext out_cxt;		/* the new state's */
	int64		iteration;
	int			segment;
} DlSegStepRun;

/*
 * dl_seg_train_step of run on the state state (a copy of it, in run's
 * cxt, sized for the model's blob): the new state in out_cxt, or NULL
 * when training diverged (st->diverged); ERROR 54000 when the new state
 * does not fit a bytea.
 */
bytea	   *dl_seg_train_state(const DlSegStepRun *run, const bytea *state, DlSegStats *st);

/*
 * Field name of the madlib_dl._step value step; ERROR 22004 when it is
 * NULL, unless null_ok.
 */
Datum		dl_seg_step_field(HeapTupleHeader step, const char *name, bool null_ok, bool *isnull);

/*
 * The madlib_dl._step_result (tupdesc, checked by the caller: 8 columns)
 * of a step: state (NULL: none), the training sums of st, seconds,
 * diverged (st's message; NULL when it did not), and each output's sums.
 */
Datum		dl_seg_step_result(TupleDesc tupdesc, bytea *state, const DlSegStats *st, double seconds);

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

/*
 * The per-output columns of a madlib_dl._step_result (output_loss_sums,
 * output_metric_sums) for n_out outputs' sums loss and metric: float8
 * arrays, or NULLs when n_out is 0 (a model of one output).
 */
void		dl_seg_output_sums(int n_out, const double *loss, const double *metric,
							   Datum *values, bool *nulls);

/*
 * The variables of one buffer of several, as the _io aggregates take them
 * (runtime/gp_agg.c): argument first is n_x (an integer), then for each
 * variable a bytea value and its int[] shape, the n_x independent ones
 * first, the dependent ones after (VARIADIC "any": the values stay TOAST
 * pointers).  Their count (2 to 2 DL_MAX_IO variables, 1 .. DL_MAX_IO of
 * each kind) and types are checked (22023, 42804), NULLs refused (22004);
 * vals[i] and shapes[i] get variable i, *n_y the dependent ones' count.
 */
void		dl_gp_row_vars(FunctionCallInfo fcinfo, int first, int *n_x, int *n_y, Datum *vals,
						   ArrayType **shapes);

/* ERROR 22000 when partition p's sample sizes do not fit model m; what names p. */
void		dl_seg_check_partition(const DlPgModel *m, const DlSegPartition *p, const char *what);


/* The default number of virtual segments: max(1, min(online CPUs, max_parallel_workers)). */
int			dl_seg_default_count(void);

/* ---------------------------------------------------------------------
 * The segment executor (runtime/seg_exec.c)
 * --------------------------------------------------------------------- */

/* The executor every transport runs the segments' commands with. */
extern const DlSegExecutor dl_seg_executor;

/*
 * Before dl_transport_start: check the job's tables as packed ones
 * (dl_seg_require_vars), and set setup->executor and
 * setup->partition_budget.
 */
void		dl_seg_setup_prepare(DlSegSetup *setup);

/*
 * The parallel workers' entry point, found by name by the parallel
 * machinery: the workers transport serving dl_seg_executor.
 */
extern PGDLLEXPORT void dl_segment_worker_main(dsm_segment *seg, shm_toc *toc);

#endif							/* SEGMENTS_H */
