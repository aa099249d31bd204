/*-------------------------------------------------------------------------
 *
 * model_impl.h
 *	  Internal: the DlModel struct, its workspace and forward/backward.
 *
 * Shared by model.c (create, workspace, forward, backward), init.c
 * (initializers), train.c (the training loop) and blob.c (state blob),
 * and by the unit tests, which use dl_model_compute_gradients to compare
 * the analytic gradients with finite differences.
 *
 * Workspace, for batches of up to ws_cap samples (grown, never shrunk,
 * when a larger batch arrives; nothing is allocated per batch otherwise):
 *	 the arena of the layers' outputs (Flatten is a reshape and aliases its
 *	 input; Dropout aliases its input in inference mode; buffers are reused
 *	 as the spec's plan says), the saved data of the backward pass
 *	 (max-pooling argmax, Dropout masks, BatchNormalization mean and
 *	 invstd, LayerNormalization's per row, the pre-activation of swish
 *	 and gelu), the recurrent layers' per-step tensors and a separable
 *	 convolution's depthwise output (in inference too: the passes need
 *	 them), the arena of the gradients, the im2col buffer of
 *	 the convolutions and the gathered mini-batch of train_epoch.  Models
 *	 built without an optimizer get only what inference needs.
 *
 * IDENTIFICATION
 *	  src/engine/model_impl.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MODEL_IMPL_H
#define MODEL_IMPL_H

#include "madlib_dl/dl_model.h"
#include "dl_kernels.h"

/* Per-layer pointers into the workspace. */
typedef struct DlLayerWork
{
	float	   *buf;			/* (ws_cap, out size), NULL when the layer
								 * always aliases its input (Flatten,
								 * linear Activation) */
	const float *out;			/* (B, out size): output of the last forward,
								 * buf or the layer's input */
	int64_t    *argmax;			/* (ws_cap, out size), MaxPooling2D and
								 * GlobalMaxPooling2D */
	float	   *mask;			/* (ws_cap, size), Dropout (training models) */
	float	   *mean;			/* (C), BatchNormalization (training) */
	float	   *invstd;			/* (C), BatchNormalization (training) */
	float	   *grad;			/* (ws_cap, out size), the output's gradient
								 * (training); NULL when the backward pass
								 * does not run the layer */
	float	   *grad_tmp;		/* (ws_cap, in size), where an input gradient
								 * that is added is computed; NULL if none */
	float	   *pre;			/* (ws_cap, out size), the pre-activation of a
								 * layer whose activation's derivative needs
								 * it (swish, gelu), training */
	float	   *mid;			/* SeparableConv2D: the depthwise output
								 * (ws_cap, OH*OW*C*M) */
	float	   *dmid;			/* ... and its gradient (training) */
	DlRnnState	rnn[2];			/* recurrent layers: each direction's tensors */
	float	   *rnn_dh;			/* (ws_cap, T, U): dL/dh of a direction (training) */
	float	   *rnn_work;		/* (ws_cap, U): the backward pass's scratch */
} DlLayerWork;

struct DlModel
{
	const DlModelSpec *spec;	/* borrowed */
	DlAllocator alloc;
	size_t		n_params;		/* P */
	float	   *params;			/* (P); params and grads share one allocation */
	float	   *grads;			/* (P), NULL for inference-only models */
	bool		has_optim;
	DlOptimState optim;			/* valid when has_optim */
	DlRng		rng;			/* shuffling and dropout */
	DlParamRange *ranges;		/* (n_ranges), one per trainable layer */
	int			n_ranges;

	/* workspace */
	DlLayerWork *lw;			/* (n_layers) */
	int64_t		ws_cap;			/* batch capacity, 0 before the first batch */
	float	   *ws;				/* one block for every float buffer */
	int64_t    *ws_i64;			/* one block for the argmax buffers */
	float	   *conv_work;		/* im2col, max over Conv2D layers */
	float	   *batch_x;		/* (ws_cap, input size) for each input,
								 * one after the other: a pass's batch
								 * (dl_epoch.h), training models */
	float	   *batch_y;		/* (ws_cap, K) for each output, likewise */
	int64_t    *perm;			/* (perm_cap) row order of a window (dl_epoch.h) */
	int64_t		perm_cap;
	int64_t    *order;			/* (order_cap) block order of
								 * dl_model_train_epoch */
	int64_t		order_cap;

	DlScratch	conv_scratch;	/* oneDNN convolutions' scratch: grows up to its
								 * limit, the budget the memory estimate counts */

	/* the caller's cancel check (dl_model_set_cancel), NULL if none */
	DlCancelFn	cancel;
	void	   *cancel_arg;

	/* the first failure of a kernel that can fail (oneDNN), DL_OK if none */
	DlStatus	kernel_status;
	DlError		kernel_err;
};

/* model.c ------------------------------------------------------------- */

/*
 * Make the workspace hold batches of B samples (B >= 1).  Reallocates
 * only when B exceeds the current capacity.
 */
DlStatus	dl_model_workspace_reserve(DlModel *m, int64_t B, DlError *err);

/* Make m->perm hold N indices. */
DlStatus	dl_model_perm_reserve(DlModel *m, int64_t N, DlError *err);

/* Make m->order hold N indices. */
DlStatus	dl_model_order_reserve(DlModel *m, int64_t N, DlError *err);

/*
 * Forward pass over B samples (workspace reserved for B).  training:
 * Dropout active (model rng), BatchNormalization on batch statistics with
 * the moving statistics updated (a frozen BatchNormalization layer runs in
 * inference mode, as in tf.keras 2).  Returns output 0 (B, K); every
 * output k is dl_model_output(m, k) until the next forward.  Outputs live
 * in the workspace (or are an input itself for a model without
 * computing layers).
 *	 xs[k] (B, input k size), one per input
 */
const float *dl_model_forward_io(DlModel *m, const float *const *xs, int64_t B, bool training);

/* The same for a model with one input: x (B, input size). */
const float *dl_model_forward(DlModel *m, const float *x, int64_t B, bool training);

/* Output k (B, output k size) of the last forward. */
const float *dl_model_output(const DlModel *m, int k);

/*
 * Where the loss writes dL/d(output k) (B, output k size) before
 * dl_model_backward_io; NULL when the backward pass does not reach that
 * output (no trainable layer behind it).  Training models only.
 */
float	   *dl_model_output_grad(DlModel *m, int k);

/*
 * Backward pass after a training-mode forward over the same xs and B.
 * The caller has written dL/d(output k) into dl_model_output_grad(m, k),
 * or, when fused[k], dL/d(pre-activation) of that output's layer (its
 * activation backward is skipped; only for an output no layer reads).
 * ADDS the parameter gradients into m->grads; runs the layers of the
 * spec's plan (those after a trainable one, on a path to an output).
 */
void		dl_model_backward_io(DlModel *m, const float *const *xs, int64_t B,
								 const bool *fused);

/* The same for a model with one input and one output. */
void		dl_model_backward(DlModel *m, const float *x, int64_t B, bool fused_last);

/*
 * After dl_model_forward or dl_model_backward: DL_OK, or the first
 * failure of a kernel that can fail (a oneDNN convolution out of
 * memory), copied into err.  The pass then completed with im2col, but
 * the caller must fail the call: a step of mixed kernels would not be
 * reproducible.  Resets the recorded failure.
 */
DlStatus	dl_model_kernel_status(DlModel *m, DlError *err);

/*
 * Ask the caller's cancel check; true (and the model's kernel failure set
 * to DL_ERR_CANCELLED, naming what) when it says stop.
 */
bool		dl_model_cancelled(DlModel *m, const char *what);

/* Reset the optimizer state as dl_optim_state_init leaves it. */
void		dl_model_reset_optim(DlModel *m);

/* The gradient block (P), NULL for inference-only models. */
float	   *dl_model_grads(DlModel *m);

/* model_seq.c --------------------------------------------------------- */

/* Conv1D and DepthwiseConv2D / SeparableConv2D geometry for B samples. */
void		dl_seq_conv_geom(DlConvGeom *g, const DlLayer *l, int64_t B);

/* MaxPooling1D, AveragePooling1D geometry: a height of 1. */
void		dl_seq_pool_geom(DlPoolGeom *g, const DlLayer *l, int64_t B);

/* Direction dir (0, or 1: Bidirectional's backward one) of a recurrent layer. */
void		dl_seq_rnn_geom(DlRnnGeom *g, const DlLayer *l, int dir, int64_t B);

/* Does l's activation need its pre-activation kept for the backward pass? */
bool		dl_seq_keeps_pre(const DlLayer *l);

/*
 * The forward pass of the layers of text and sequences (model.c's switch
 * sends every kind from DL_LAYER_EMBEDDING on here): in (B, in size) to
 * w->buf; w->out set as model.c does.  A bad Embedding id is recorded as
 * the model's kernel failure (dl_model_kernel_status).
 */
void		dl_seq_layer_forward(DlModel *m, const DlLayer *l, DlLayerWork *w, const float *in,
								 int64_t B, bool training);

/*
 * Their backward pass: dy (B, out size) the output's gradient (may be
 * used up), dx (B, in size) where in[0]'s share goes, overwritten (NULL:
 * none), g the layer's slice of the gradients.
 */
void		dl_seq_layer_backward(DlModel *m, const DlLayer *l, DlLayerWork *w, float *dy,
								  float *dx, const float *in, int64_t B);

/* The backward of l's own activation on dy (B rows of cout), in place. */
void		dl_seq_activation_backward(const DlLayer *l, const DlLayerWork *w, float *dy,
									   int64_t rows, int64_t cout);

/* train.c ------------------------------------------------------------- */

/*
 * Test hook and first half of dl_model_train_batch: zero the gradients,
 * forward in training mode, loss and backward, regularization; no
 * optimizer step.  On return m->grads holds d(loss_sum / B + reg)/dw and
 * *loss_sum the data loss summed over the B samples.
 *	 x (B, input size)  y (B, y width)
 */
DlStatus	dl_model_compute_gradients(DlModel *m, const DlTrainConfig *cfg, const float *x,
									   const float *y, int64_t B, double *loss_sum,
									   DlError *err);

/*
 * The same for any model: xs[k] (B, input k size), ys[k] (B, y width of
 * output k); *loss_sum is sum_k weight_k (loss of output k summed over
 * the B samples).
 */
DlStatus	dl_model_compute_gradients_io(DlModel *m, const DlTrainConfig *cfg,
										  const float *const *xs, const float *const *ys,
										  int64_t B, double *loss_sum, DlError *err);

#endif							/* MODEL_IMPL_H */
