/*-------------------------------------------------------------------------
 *
 * dl_epoch.h
 *	  One sample order for every way a partition is read: the shuffle of
 *	  an epoch over a partition of buffers, and the mini-batches of a pass
 *	  over it, whether the partition is held in memory (cached) or read a
 *	  window at a time from its table (streamed).
 *
 * A partition is a sequence of buffers (a segment's buffers in buffer_id
 * order).  Each buffer is cut into *blocks* of at most
 * dl_epoch_block_rows(x_width) rows (DL_EPOCH_BLOCK_BYTES of features,
 * one row at least); a block never spans two buffers.  One epoch:
 *
 *	 1. the blocks are put in a seeded order: a Fisher-Yates permutation
 *	    drawn from the model's generator (identity without shuffle);
 *	 2. consecutive runs of DL_EPOCH_WINDOW_BLOCKS blocks of that order
 *	    are the *windows*;
 *	 3. the rows of each window (its blocks' rows, in block order) are
 *	    permuted, drawn from the same generator when the window starts;
 *	 4. mini-batches of batch_size rows take the rows in that order,
 *	    across window boundaries: only the epoch's last batch is short.
 *
 * Both constants are fixed, and the blocks depend only on the buffers'
 * row counts and the sample width, so the order of an epoch depends on
 * the data and the generator alone: a cached partition (all rows in
 * memory) and a streamed one (a window in memory at a time) give the
 * same batches, the same draws of the generator (dropout draws from it
 * between windows), and so byte-identical weights.  Without shuffling
 * the rows keep their order and batches are those of the plain sequence.
 *
 * A pass (DlPass) runs the mini-batches of one epoch (train) or one
 * evaluation (rows in order, no shuffle): it gathers each batch's rows
 * from the windows it is given into the model's batch buffers, so a
 * batch may take rows from two windows, and converts one-hot labels to
 * class indices when the loss wants them.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_epoch.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_EPOCH_H
#define DL_EPOCH_H

#include <stdbool.h>
#include <stdint.h>

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_model.h"
#include "madlib_dl/dl_rng.h"
#include "madlib_dl/dl_status.h"

/* Most bytes of features in one block (a block has one row at least). */
#define DL_EPOCH_BLOCK_BYTES (256 * 1024)

/* Blocks in one window. */
#define DL_EPOCH_WINDOW_BLOCKS 16

/* Most runs one dl_pass_window call takes. */
#define DL_PASS_MAX_RUNS 64

/*
 * Rows of one block for samples of x_width floats: >= 1.  A sample of a
 * model of several inputs has the floats of all its inputs.
 */
int64_t		dl_epoch_block_rows(int64_t x_width);

/* Rows of the largest window: DL_EPOCH_WINDOW_BLOCKS blocks. */
int64_t		dl_epoch_window_rows(int64_t x_width);

/* Rows [offset, offset + n) of buffer `buffer`; start is their first row in the partition. */
typedef struct DlBlock
{
	int64_t		buffer;
	int64_t		offset;
	int64_t		n;
	int64_t		start;
} DlBlock;

/*
 * The number of blocks of a partition whose buffers have rows[0..n_buffers)
 * rows (each >= 0), with samples of x_width floats.  DL_ERR_SHAPE for a
 * negative count.
 */
DlStatus	dl_epoch_count_blocks(const int64_t *rows, int64_t n_buffers, int64_t x_width,
								  int64_t *n_blocks, DlError *err);

/*
 * The blocks (*n_blocks of them, from dl_epoch_count_blocks) into *out,
 * allocated with alloc (free with dl_free).  Empty buffers have none.
 */
DlStatus	dl_epoch_blocks(const int64_t *rows, int64_t n_buffers, int64_t x_width,
							const DlAllocator *alloc, DlBlock **out, int64_t *n_blocks,
							DlError *err);

/*
 * The block order of one epoch into order[0..n_blocks): 0..n_blocks-1,
 * permuted with rng when shuffle (n_blocks - 1 draws), else as is.
 */
void		dl_epoch_order(DlRng *rng, bool shuffle, int64_t *order, int64_t n_blocks);

/*
 * Consecutive rows in memory.  A model of one input and one output reads
 * x (n, input size) and y (n, y_width).  A model of several inputs or
 * outputs reads xs instead: xs[k] (n, input k size) for each input, and
 * ys[k] (n, y_widths[k]) for each output; all rows of a run, one sample
 * each, travel together.  When xs is not NULL it is used for any model.
 */
typedef struct DlRows
{
	const float *x;
	const float *y;
	int64_t		n;
	int64_t		y_width;		/* the loss's width (dl_loss_y_width), or the
								 * model's output size (one-hot rows,
								 * turned into class indices when the loss
								 * wants them) */
	const float *const *xs;		/* NULL: x and y */
	const float *const *ys;
	const int64_t *y_widths;	/* each output's, as y_width */
} DlRows;

/* One pass of mini-batches: an epoch of training, or an evaluation. */
typedef struct DlPass
{
	DlModel    *m;
	const DlTrainConfig *cfg;
	bool		train;
	DlBatchStats *stats;		/* may be NULL */
	int64_t		pending;		/* rows gathered into the batch, not yet run */
	int64_t		batches;		/* batches run */
	int64_t		left;			/* rows the pass may still be given */
	int64_t		stop_after;		/* > 0: stop once this many batches have run */
	bool		stopped;		/* it did: the rest of the window waits */
	int64_t		stop_row;		/* rows of the window taken when it stopped */
} DlPass;

/*
 * Begin a pass over total rows.  train: one epoch (the model must have an
 * optimizer; rows of each window shuffled when cfg->shuffle); else an
 * evaluation in inference mode, rows in order.  Reserves the workspace
 * for batches of min(batch_size, total) rows.  The model must have been
 * built with an optimizer either way (the batch buffers are training
 * workspace).
 */
DlStatus	dl_pass_begin(DlPass *p, DlModel *m, const DlTrainConfig *cfg, bool train,
						  int64_t total, DlBatchStats *stats, DlError *err);

/*
 * One window: the rows of runs[0..n_runs), in order (n_runs <=
 * DL_PASS_MAX_RUNS), permuted first when training with cfg->shuffle
 * (sum of n - 1 draws of the model's generator).  Runs every full batch;
 * the rows of a last, partial batch wait for the next window.  The runs'
 * memory may be reused once this returns.  DL_ERR_INVALID_ARGUMENT when
 * the windows hold more rows than the pass was begun for.  Adds to stats as
 * dl_model_train_batch and dl_model_evaluate do.  cfg->between_batches
 * runs before every batch but the pass's first.
 */
DlStatus	dl_pass_window(DlPass *p, const DlRows *runs, int n_runs, DlError *err);

/*
 * The same for a window resumed after a stop (dl_visit.h): the rows are
 * permuted as dl_pass_window permutes them (the model's generator must
 * be the one the window began with), then the generator becomes *rng
 * (the one at the stop) and the rows are taken from place `from` of the
 * permutation on.  from = 0 and rng = NULL is dl_pass_window.  A pass
 * with stop_after > 0 stops right after its stop_after-th batch, with
 * stopped set and stop_row the window's rows taken (from included):
 * nothing of the window after that is read.
 */
DlStatus	dl_pass_window_from(DlPass *p, const DlRows *runs, int n_runs, int64_t from,
								const DlRng *rng, DlError *err);

/* End the pass: run the last, partial batch. */
DlStatus	dl_pass_end(DlPass *p, DlError *err);

#endif							/* DL_EPOCH_H */
