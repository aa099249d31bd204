/*-------------------------------------------------------------------------
 *
 * dl_model.h
 *	  A trainable model: its spec plus one contiguous float32 block.
 *
 * A DlModel owns:
 *	 params (P)  the weights, in Keras get_weights() order
 *	 grads  (P)  gradients, same layout
 *	 optim       optimizer state, n_slots arrays of the same layout
 *	 rng         the generator for shuffling and dropout
 * plus a workspace for activations that grows with the largest batch seen.
 * The spec is borrowed: it must outlive the model.
 *
 * A model runs its spec's graph (dl_spec.h): one input buffer per model
 * input, one output per model output (the _io functions); most models
 * have one of each.
 *
 * Training is a loop that reads top to bottom (src/engine/train.c):
 *	 for each mini-batch: forward (training mode) -> loss -> backward ->
 *	 regularization -> optimizer step.
 * With one BLAS thread, the same seed and data order give byte-identical
 * weights.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_model.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_MODEL_H
#define DL_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_loss.h"
#include "madlib_dl/dl_metrics.h"
#include "madlib_dl/dl_optim.h"
#include "madlib_dl/dl_rng.h"
#include "madlib_dl/dl_spec.h"
#include "madlib_dl/dl_status.h"

typedef struct DlModel DlModel;

/*
 * One output's share of a model with several outputs: Keras' loss list
 * (or dict), loss_weights and per-output metrics.
 */
typedef struct DlOutputConfig
{
	DlLossKind	loss;
	double		loss_weight;	/* the total loss is sum_k weight_k loss_k */
	DlMetricKind metric;		/* DL_METRIC_NONE for none; ACCURACY is resolved */
	int			top_k;			/* for TOP_K_CATEGORICAL_ACCURACY */
} DlOutputConfig;

/* What a training or evaluation pass needs besides the data. */
typedef struct DlTrainConfig
{
	DlLossKind	loss;
	DlMetricKind metric;		/* DL_METRIC_NONE for none; ACCURACY is resolved */
	int			top_k;			/* for TOP_K_CATEGORICAL_ACCURACY */
	int64_t		batch_size;		/* >= 1 */
	bool		shuffle;		/* shuffle sample order each epoch (model rng) */

	/*
	 * Keras' class_weight, for training only (evaluation is unweighted, as
	 * Keras' evaluate): class_weight[c] scales the loss and gradient of the
	 * samples of class c (dl_loss_sample_class), c < n_class_weight.  NULL:
	 * none.  Training stops with DL_ERR_DATA at a sample whose class has no
	 * weight (NaN or beyond n_class_weight).
	 */
	const float *class_weight;
	int64_t		n_class_weight;

	/*
	 * Several outputs: outputs[k] for output k (the spec's n_outputs
	 * entries); loss, metric and top_k above are then unused.  NULL: every
	 * output has loss, metric and top_k, with weight 1 (what Keras does
	 * with one loss for a model of several outputs).  class_weight is for
	 * models of one output only.
	 */
	const DlOutputConfig *outputs;

	/*
	 * Called between mini-batches when not NULL.  Inside PostgreSQL it runs
	 * CHECK_FOR_INTERRUPTS() and may not return (longjmp); the engine holds
	 * nothing but allocator memory across this call.
	 */
	void		(*between_batches) (void *arg);
	void	   *between_batches_arg;

	/*
	 * Evaluation of a model of one input and one output: the metric sums
	 * (dl_metrics.h) of this list, added to DlBatchStats' metric_sums when
	 * it is not NULL (n 0: none).
	 */
	DlMetricList sum_metrics;
} DlTrainConfig;

/* Sums over the samples seen; divide by n for means. */
typedef struct DlBatchStats
{
	double		loss_sum;		/* data loss only, without regularization;
								 * several outputs: sum_k weight_k loss_k */
	double		metric_sum;		/* output 0's metric */
	int64_t		n;
	double		output_loss_sum[DL_MAX_IO]; /* each output's own loss */
	double		output_metric_sum[DL_MAX_IO];	/* each output's metric */
	double	   *metric_sums;	/* evaluation: the caller's sums of
								 * cfg->sum_metrics (dl_metric_list_acc_len
								 * doubles), added to; NULL: none */
} DlBatchStats;

/*
 * Build a model for spec.  optim may be NULL (inference only: no grads or
 * optimizer state).  Parameters are zero until dl_model_init_weights or
 * dl_model_set_params.  The allocator is copied; spec is borrowed.
 */
DlStatus	dl_model_create(const DlModelSpec *spec, const DlOptimConfig *optim,
							const DlAllocator *alloc, DlModel **out, DlError *err);

/* What dl_model_memory_estimate counts a model for. */
typedef struct DlMemoryUse
{
	const DlOptimConfig *optim; /* as for dl_model_create: NULL for an
								 * inference-only model */
	int64_t		batch_size;		/* the largest batch it trains, evaluates or
								 * predicts; 0: it runs no batch (a model
								 * that only holds, reads or writes states) */
} DlMemoryUse;

/*
 * Bytes a model allocates through its allocator, by part.  Doubles: exact
 * below 2^53, and a hostile spec (huge units, a huge batch) gives a huge
 * value, never a wrapped small one.
 */
typedef struct DlMemoryEstimate
{
	double		weights;		/* the parameter block, 4 P */
	double		gradients;		/* 4 P for a training model, else 0 */
	double		optimizer;		/* optimizer state, 4 P n_slots */
	double		activations;	/* workspace but im2col: layer outputs, the
								 * backward pass's saved data (argmax,
								 * masks, BatchNormalization statistics),
								 * the two gradient buffers, the gathered
								 * mini-batch */
	double		im2col;			/* the Conv2D column buffer (model.c allocates
								 * it whatever the backend: it is oneDNN's
								 * fallback) */
	double		onednn_scratch; /* the oneDNN convolutions' scratch budget;
								 * 0 when they do not go to oneDNN */
	double		bookkeeping;	/* the model struct and per-layer records */
	double		total;			/* the sum of the above: the most the model
								 * holds at once */
	double		state_blob;		/* dl_blob_size of the model: one serialized
								 * state (weights and optimizer state), not
								 * part of total */
} DlMemoryEstimate;

/*
 * Estimate, from a finalized spec and without allocating anything, every
 * byte dl_model_create and then training (use->optim not NULL) or
 * inference on batches of up to use->batch_size samples allocate: the
 * peak of the model's allocations, workspace included, for the current
 * backend and thread count (dl_backend.h).  The oneDNN scratch counts
 * its budget (dl_conv2d_dnnl_scratch_budget): the model never lets it
 * grow beyond, a convolution that would need more runs as im2col.  Not
 * counted: the row order of a window of the one shuffle (dl_epoch.h: 8
 * bytes per row of a window, dl_epoch_window_rows; callers count it),
 * dl_model_train_epoch's block order (8 bytes per block of the data),
 * the data itself, and the BLAS libraries' own per-thread buffers.  DL_ERR_INVALID_ARGUMENT for a spec that is not finalized, a
 * negative batch size or an invalid optimizer configuration.
 */
DlStatus	dl_model_memory_estimate(const DlModelSpec *spec, const DlMemoryUse *use,
									 DlMemoryEstimate *out, DlError *err);

/*
 * The caller's cancel check: cancel(arg) returns true when the work must
 * stop.  The engine calls it between the layers of every forward and
 * backward pass (outside any oneDNN call, so never with signals blocked)
 * and between mini-batches; when it returns true the call under way
 * returns DL_ERR_CANCELLED ("cancelled in layer ..."), leaving the model
 * usable (weights as before the step that was stopped, or partly
 * updated by an optimizer step already done: the caller discards them).
 * dl_model_predict and dl_model_evaluate cut a batch into sub-batches
 * of dl_model_cancel_rows samples so that no layer runs for long between
 * two checks.  The check must not longjmp.  NULL: never cancelled.
 */
typedef bool (*DlCancelFn) (void *arg);
void		dl_model_set_cancel(DlModel *m, DlCancelFn cancel, void *arg);

/*
 * Most work, in multiply-adds, one layer may do between two cancel
 * checks (about 30 to 100 ms on one core).
 */
#define DL_CANCEL_WORK_MACS ((double) (1 << 28))

/*
 * Samples of one inference sub-batch of spec: the most for which the
 * costliest layer's forward pass stays under DL_CANCEL_WORK_MACS
 * (at least 1).  From the spec only, so the same on every server.
 */
int64_t		dl_model_cancel_rows(const DlModelSpec *spec);

/* Free everything the model allocated.  m may be NULL. */
void		dl_model_free(DlModel *m);

/*
 * Initialise weights from the layers' initializers.  A layer whose
 * initializer gives a seed draws from a generator seeded by it; the others
 * draw, in layer order, from one generator seeded by seed.  Also seeds the
 * model rng (shuffle, dropout) from seed and resets the optimizer state.
 */
DlStatus	dl_model_init_weights(DlModel *m, uint64_t seed, DlError *err);

/* Reseed the generator used for shuffling and dropout. */
void		dl_model_seed_rng(DlModel *m, uint64_t seed);

const DlModelSpec *dl_model_spec(const DlModel *m);
size_t		dl_model_n_params(const DlModel *m);
float	   *dl_model_params(DlModel *m);	/* (P) */
DlOptimState *dl_model_optim(DlModel *m);	/* NULL for inference-only models */
DlRng	   *dl_model_rng(DlModel *m);

/* Copy n floats into the parameter block; n must equal P (DL_ERR_SHAPE naming both counts). */
DlStatus	dl_model_set_params(DlModel *m, const float *w, size_t n, DlError *err);

/*
 * One optimizer step on a mini-batch of B samples.
 *	 x (B, input size)  y (B, y width, see dl_loss_y_width)
 * Adds the batch's loss (weighted by cfg's class_weight, the loss the step
 * minimizes) and metric to stats when stats is not NULL.
 * DL_ERR_DIVERGED if the loss or any weight becomes NaN or infinite.
 * The functions taking one x and one y are for models of one input and
 * one output (DL_ERR_INVALID_ARGUMENT otherwise); the _io forms take one
 * buffer per input and one per output:
 *	 xs[k] (B, input k size)  ys[k] (B, y width of output k)
 */
DlStatus	dl_model_train_batch(DlModel *m, const DlTrainConfig *cfg, const float *x,
								 const float *y, int64_t B, DlBatchStats *stats, DlError *err);
DlStatus	dl_model_train_batch_io(DlModel *m, const DlTrainConfig *cfg,
									const float *const *xs, const float *const *ys, int64_t B,
									DlBatchStats *stats, DlError *err);

/*
 * One pass over N samples in mini-batches of cfg->batch_size (the last one
 * may be smaller), in the order of the one shuffle (dl_epoch.h) when
 * cfg->shuffle: the N samples are one buffer, cut into blocks that are
 * permuted, then the rows of each window of blocks are.
 *	 x (N, input size)  y (N, y width)
 */
DlStatus	dl_model_train_epoch(DlModel *m, const DlTrainConfig *cfg, const float *x,
								 const float *y, int64_t N, DlBatchStats *stats, DlError *err);

/*
 * The same for any model: xs[k] (N, input k size), ys[k] (N, y width of
 * output k).  A sample's inputs and outputs travel together: the blocks
 * of the one shuffle are blocks of rows, cut by the floats of all the
 * inputs of a row (dl_epoch_block_rows), and a window's rows are
 * permuted once for every array.
 */
DlStatus	dl_model_train_epoch_io(DlModel *m, const DlTrainConfig *cfg, const float *const *xs,
									const float *const *ys, int64_t N, DlBatchStats *stats,
									DlError *err);

/*
 * Loss and metric of N samples in inference mode (dropout off,
 * BatchNormalization uses moving statistics), added to stats.
 */
DlStatus	dl_model_evaluate(DlModel *m, const DlTrainConfig *cfg, const float *x,
							  const float *y, int64_t N, DlBatchStats *stats, DlError *err);
DlStatus	dl_model_evaluate_io(DlModel *m, const DlTrainConfig *cfg, const float *const *xs,
								 const float *const *ys, int64_t N, DlBatchStats *stats,
								 DlError *err);

/*
 * Model outputs for N samples in inference mode, in batches of at most
 * batch_size.
 *	 out (N, K)  x (N, input size)
 */
DlStatus	dl_model_predict(DlModel *m, float *out, const float *x, int64_t N,
							 int64_t batch_size, DlError *err);

/*	 outs[k] (N, output k size)  xs[k] (N, input k size) */
DlStatus	dl_model_predict_io(DlModel *m, float *const *outs, const float *const *xs, int64_t N,
								int64_t batch_size, DlError *err);

/*
 * Token ids: whether input k of spec is read by an Embedding layer (its
 * values are then ids), and a check of n rows x of that input: each
 * value an Embedding reads must be an integer in [0, its input_dim).
 * DL_OK, or DL_ERR_DATA naming the layer, the position and the value,
 * with the row's 0-based index in *bad_row (-1 when all are good), for
 * the caller to name (the row of a packed buffer, a row's id).  The
 * Embedding's forward pass checks the same (and any id reaching it
 * otherwise), naming the sample of the batch.
 */
bool		dl_model_spec_reads_ids(const DlModelSpec *spec, int k);
DlStatus	dl_model_check_ids(const DlModelSpec *spec, int k, const float *x, int64_t n,
							   int64_t *bad_row, DlError *err);

/* Ranges of the block the optimizer updates (trainable layers' trainable floats). */
const DlParamRange *dl_model_trainable_ranges(const DlModel *m, int *n_ranges);

#endif							/* DL_MODEL_H */
