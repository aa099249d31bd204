/*-------------------------------------------------------------------------
 *
 * segments.h
 *	  Virtual segments on PostgreSQL: persistent parallel workers that each
 *	  own one partition of a packed table and run commands on model states.
 *
 * A job has nseg segments.  Segment k is the set of buffers of the packed
 * table with __dist_key__ = k (or buffer_id % nseg = k when the table has
 * no __dist_key__ column), in buffer_id order, and its share of the
 * validation table (buffer_id % nseg = k).  Parallel worker k owns segment
 * k: it reads its partition once into process memory, then runs one
 * command per round until told to exit.  The leader launches nseg workers;
 * PostgreSQL may launch fewer (even none), and the leader itself runs every
 * segment no worker took, with the same code, so results do not depend on
 * how many workers were launched.
 *
 * Model states travel only through shared memory: n_slots fixed-size state
 * slots (dl_blob format).  Each round the leader writes a command per
 * segment (kind, model, slot, iteration), bumps a generation counter and
 * broadcasts; each segment reads the state in its command's slot, works
 * on its partition, writes the state back (TRAIN) and its statistics, and
 * reports done.  The leader waits with CHECK_FOR_INTERRUPTS, so worker
 * ERRORs are re-thrown in the leader, and a worker that died without an
 * ERROR is reported.  fit uses one model and one slot per segment;
 * fit_multiple can move models between segments by choosing the slots.
 *
 * Everything here is PostgreSQL-only (ParallelContext); Greenplum runs the
 * same per-segment step as an aggregate.
 *
 * IDENTIFICATION
 *	  src/pg/segments.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SEGMENTS_H
#define SEGMENTS_H

#include "postgres.h"

#include "storage/dsm.h"
#include "storage/shm_toc.h"

#include "madlib_dl/dl_model.h"

/* Most virtual segments (distribution_rules accepts 1..DL_SEG_MAX). */
#define DL_SEG_MAX 64

/* Most distinct model configurations in one job. */
#define DL_SEG_MAX_MODELS 1024

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
} DlSegStats;

/* One model configuration of a job. */
typedef struct DlSegModelDef
{
	const char *arch_json;		/* NUL-terminated Keras JSON */
	const char *compile_params; /* MADlib compile_params */
	const char *fit_params;		/* MADlib fit_params, may be NULL */
} DlSegModelDef;

typedef struct DlSegSetup
{
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
} DlSegSetup;

typedef struct DlSegments DlSegments;

/*
 * Enter parallel mode, launch up to nseg workers and load the leader's
 * partitions.  The caller must be a PARALLEL UNSAFE function, must not
 * write to the database until dl_seg_finish, and must call dl_seg_finish
 * on success (an ERROR cleans up by itself with the transaction).
 * Allocations live under cxt.
 */
DlSegments *dl_seg_start(const DlSegSetup *setup, MemoryContext cxt);

/* Number of workers PostgreSQL actually launched (0..nseg). */
int			dl_seg_workers_launched(const DlSegments *s);

/* Slot i's bytes (slot_size of them) and its current length. */
uint8	   *dl_seg_slot(DlSegments *s, int slot);
Size		dl_seg_slot_len(const DlSegments *s, int slot);
void		dl_seg_set_slot_len(DlSegments *s, int slot, Size len);

/*
 * Run one round: cmds[k] is segment k's command (nseg of them).  The
 * leader runs its own segments while the workers run theirs, then waits
 * for all of them.  Two segments must not write the same slot.
 */
void		dl_seg_run(DlSegments *s, const DlSegCommand *cmds);

/* Statistics segment k reported in the last round. */
const DlSegStats *dl_seg_stats(const DlSegments *s, int seg);

/* Rows in segment k's training partition (known after dl_seg_run). */
int64		dl_seg_partition_rows(const DlSegments *s, int seg);

/* Tell the workers to exit, wait for them and leave parallel mode. */
void		dl_seg_finish(DlSegments *s);

/*
 * Seed of the shuffle and dropout generator of one segment in one
 * iteration: a hash of the job seed, the iteration and the segment, so
 * it does not depend on which process runs the segment.
 */
uint64		dl_seg_shuffle_seed(uint64 seed, int64 iteration, int segment);

/* The default number of virtual segments: max(1, min(online CPUs, max_parallel_workers)). */
int			dl_seg_default_count(void);

/* Worker entry point, found by name by the parallel machinery. */
extern PGDLLEXPORT void dl_segment_worker_main(dsm_segment *seg, shm_toc *toc);

#endif							/* SEGMENTS_H */
