/*-------------------------------------------------------------------------
 *
 * pg_gpu.h
 *	  The GPU side of a segment's training visit (src/pg/gpu.c), called
 *	  by dl_seg_train_step when fit or fit_multiple run with use_gpus.
 *
 * IDENTIFICATION
 *	  src/pg/pg_gpu.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_GPU_H
#define PG_GPU_H

#include "pg_glue.h"

#include "madlib_dl/dl_model.h"

/*
 * Run epochs passes of cfg over x (n, input size), y (n, y width) on GPU
 * (segment mod the number of GPUs), starting from the state held by
 * model (weights, optimizer state, rng: as dl_blob_read left them) and
 * storing the result back into model.  Adds to bs.  Returns the engine's
 * status: DL_OK, or DL_ERR_DIVERGED with err filled (the caller decides
 * whether that is an ERROR); every other failure is an ERROR here.  All
 * GPU memory is released before returning, and by a memory context
 * callback on CurrentMemoryContext when an ERROR (or a cancel between
 * mini-batches) unwinds through it.
 */
DlStatus	dl_pg_gpu_train(DlModel *model, const DlTrainConfig *cfg, const float *x,
							const float *y, int64 n, int epochs, int segment,
							DlBatchStats *bs, DlError *err);

#endif							/* PG_GPU_H */
