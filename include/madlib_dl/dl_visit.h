/*-------------------------------------------------------------------------
 *
 * dl_visit.h
 *	  A visit in rounds: the `epochs` passes a segment trains over its
 *	  partition in one iteration of fit, stopped after a number of
 *	  mini-batches and resumed later, possibly in another process, with
 *	  the same batches and the same draws of the generator as if it had
 *	  not stopped.  fit's averaging every few mini-batches
 *	  (averaging_period, src/pg/api/fit.c) is made of these rounds.
 *
 * A visit is the passes of the one shuffle (dl_epoch.h): for each pass,
 * a block order drawn from the model's generator, then windows of
 * DL_EPOCH_WINDOW_BLOCKS blocks whose rows are permuted with draws from
 * the same generator when the window begins, and mini-batches that take
 * the rows in that order (Dropout draws from it too).  Where a visit
 * stands is therefore, besides the model state, a few integers and three
 * states of the generator (DlVisitPos): the one the pass began with (to
 * draw its block order again), the one the current window began with
 * (to draw its permutation again), and the one now.  A round stops right
 * after a mini-batch, so no half-gathered batch is ever left behind.
 *
 * The round record (DlVisitRound) says what a round does (how many
 * batches, which learning-rate factor, from where) and, once it has run,
 * where the visit stands and whether it has ended.  It travels with the
 * model state as DL_VISIT_ROUND_BYTES little-endian bytes after the
 * state blob (src/pg/runtime/step.c), so every transport moves it as it
 * moves states:
 *	 offset  size  field
 *	      0     4  magic "MDLR"
 *	      4     4  format version (DL_VISIT_VERSION)
 *	      8     8  max_batches
 *	     16     8  lr_factor (float64)
 *	     24     4  resume (0 or 1)
 *	     28     4  done (0 or 1)
 *	     32     8  total
 *	     40     8  pos.batches
 *	     48     8  pos.epoch
 *	     56     8  pos.window
 *	     64     8  pos.row
 *	     72    32  pos.rng_pass  (4 x uint64)
 *	    104    32  pos.rng_window
 *	    136    32  pos.rng
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_visit.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_VISIT_H
#define DL_VISIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "madlib_dl/dl_epoch.h"
#include "madlib_dl/dl_model.h"
#include "madlib_dl/dl_rng.h"
#include "madlib_dl/dl_status.h"

#define DL_VISIT_MAGIC "MDLR"
#define DL_VISIT_VERSION 1
#define DL_VISIT_ROUND_BYTES 168

/* Where a visit stands, between two rounds. */
typedef struct DlVisitPos
{
	int64_t		batches;		/* mini-batches run since the visit began */
	int64_t		epoch;			/* passes finished */
	int64_t		window;			/* place in the pass's block order of the
								 * current window's first block (a multiple
								 * of DL_EPOCH_WINDOW_BLOCKS) */
	int64_t		row;			/* rows of that window taken (0: the window
								 * has not begun) */
	DlRng		rng_pass;		/* the generator as the pass began */
	DlRng		rng_window;		/* as the current window began (row > 0) */
	DlRng		rng;			/* the generator now */
} DlVisitPos;

/* One round of a visit: what it runs, and where the visit stands after it. */
typedef struct DlVisitRound
{
	int64_t		max_batches;	/* most mini-batches the round runs; 0: to
								 * the visit's end */
	double		lr_factor;		/* the optimizer's learning rate times this
								 * during the round, finite and > 0 */
	bool		resume;			/* continue at pos; false: begin the visit
								 * with the model's generator as it is */
	bool		done;			/* out: the visit has ended */
	int64_t		total;			/* out: mini-batches of the whole visit */
	DlVisitPos	pos;			/* in when resume, and out */
} DlVisitRound;

/* A round record that begins a visit: everything, at a factor of 1. */
void		dl_visit_round_init(DlVisitRound *r);

/* Write r as DL_VISIT_ROUND_BYTES bytes (the layout above) into buf. */
void		dl_visit_round_write(const DlVisitRound *r, uint8_t *buf);

/*
 * Read a round record from buf[0..len): DL_ERR_CORRUPT unless len is
 * DL_VISIT_ROUND_BYTES and the record is well-formed (magic, version,
 * flags, counts >= 0, a finite positive lr_factor).
 */
DlStatus	dl_visit_round_read(const uint8_t *buf, size_t len, DlVisitRound *r, DlError *err);

/*
 * The rows of the blocks order[0..k) (their places in the pass's block
 * order) of the partition, in that order, as k runs: pointers into
 * memory that stays valid until the next call.  May fail with a status.
 */
typedef DlStatus (*DlVisitWindowFn) (void *arg, const int64_t *order, int k, DlRows *runs,
									 DlError *err);

/* The partition a visit trains on. */
typedef struct DlVisitData
{
	const DlBlock *blocks;		/* (n_blocks) dl_epoch_blocks */
	int64_t		n_blocks;
	int64_t		rows;			/* the partition's rows: sum of blocks[].n */
	int64_t    *order;			/* (n_blocks) scratch for a pass's block order */
	DlVisitWindowFn window;		/* gives a window's rows */
	void	   *arg;
} DlVisitData;

/* Mini-batches of a visit of epochs passes over rows rows (INT64_MAX if more). */
int64_t		dl_visit_batches(int64_t epochs, int64_t rows, int64_t batch_size);

/*
 * Run round r of a visit of epochs passes of model m over d, in
 * mini-batches of cfg->batch_size, adding to bs (may be NULL): from the
 * visit's beginning (r->resume false: the model's generator as the
 * caller seeded it) or from r->pos (r->resume: the generator is r->pos's
 * and the model state the one to go on from), at most r->max_batches
 * mini-batches, with the optimizer's learning rate times r->lr_factor.
 * Then r->pos is where the visit stands, r->resume is true, r->done says
 * whether the visit has ended and r->total is its number of batches; the
 * model's generator is r->pos.rng.  Rounds of any sizes give the
 * mini-batches, draws and so weights of one uninterrupted visit when the
 * model state between them is the one the previous round left.
 * DL_ERR_CORRUPT when r->pos does not fit d and epochs; any error of a
 * pass (DL_ERR_DIVERGED, ...) as it comes, r->pos then undefined.
 */
DlStatus	dl_visit_run(DlModel *m, const DlTrainConfig *cfg, int64_t epochs,
						 const DlVisitData *d, DlVisitRound *r, DlBatchStats *bs,
						 DlError *err);

#endif							/* DL_VISIT_H */
