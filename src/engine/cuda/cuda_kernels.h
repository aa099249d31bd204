/*-------------------------------------------------------------------------
 *
 * cuda_kernels.h
 *	  Internal: launchers of the CUDA backend's device kernels (C linkage).
 *
 * Every pointer is a DEVICE pointer; every launcher enqueues on the given
 * stream and returns at once (no synchronisation, no allocation).  Argument
 * order is outputs, then inputs, then dimensions, as in dl_kernels.h; the
 * semantics are those of the CPU kernel of the same name (dl_kernels.h),
 * except where a comment says otherwise.  Reductions run in a fixed order,
 * so two runs on the same device give the same bits.
 *
 * IDENTIFICATION
 *	  src/engine/cuda/cuda_kernels.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_CUDA_KERNELS_H
#define DL_CUDA_KERNELS_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "madlib_dl/dl_layer.h"

#ifdef __cplusplus
extern "C"
{
#endif

/* Convolution / pooling geometry, a copy of DlConvGeom / DlPoolGeom. */
typedef struct DlCuGeom
{
	int64_t		B, H, W, C;		/* input (B,H,W,C) */
	int64_t		OH, OW, OC;		/* output (B,OH,OW,OC); pooling: OC = C */
	int64_t		KH, KW;			/* kernel or pooling window */
	int64_t		SH, SW;
	int64_t		pad_top, pad_left;
} DlCuGeom;

/* dst (B, width) = src rows perm[start .. start+B) of src (N, width). */
void		dl_cu_gather_rows(float *dst, const float *src, const int64_t *perm, int64_t start,
							  int64_t B, int64_t width, cudaStream_t s);

/* y (rows, cols) = act(y + b (cols)) in place; b may be NULL; softmax over cols. */
void		dl_cu_bias_act(float *y, const float *b, DlActivation act, int64_t rows,
						   int64_t cols, cudaStream_t s);

/* dx (rows, cols) from dy and the forward output y; dx may equal dy. */
void		dl_cu_act_backward(DlActivation act, float *dx, const float *dy, const float *y,
							   int64_t rows, int64_t cols, cudaStream_t s);

/* col (B*OH*OW, KH*KW*C): the im2col matrix of x (B,H,W,C), zero padding. */
void		dl_cu_im2col(float *col, const float *x, const DlCuGeom *g, cudaStream_t s);

/* dx (B,H,W,C) overwritten with the sum of the col entries of each pixel (a gather). */
void		dl_cu_col2im(float *dx, const float *col, const DlCuGeom *g, cudaStream_t s);

/* y, argmax (B,OH,OW,C); argmax holds the flat index into x (first max wins). */
void		dl_cu_maxpool_forward(float *y, int32_t *argmax, const float *x, const DlCuGeom *g,
								  cudaStream_t s);

/* dx (B,H,W,C) overwritten: sum of dy over the outputs whose argmax is the pixel. */
void		dl_cu_maxpool_backward(float *dx, const float *dy, const int32_t *argmax,
								   const DlCuGeom *g, cudaStream_t s);

void		dl_cu_avgpool_forward(float *y, const float *x, const DlCuGeom *g, cudaStream_t s);
void		dl_cu_avgpool_backward(float *dx, const float *dy, const DlCuGeom *g, cudaStream_t s);

/* y (B,C) = mean over S of x (B,S,C), and its backward. */
void		dl_cu_global_avgpool_forward(float *y, const float *x, int64_t B, int64_t S,
										 int64_t C, cudaStream_t s);
void		dl_cu_global_avgpool_backward(float *dx, const float *dy, int64_t B, int64_t S,
										  int64_t C, cudaStream_t s);

/*
 * Inverted dropout with a counter-based generator: element i is dropped
 * when hash(key, i) / 2^64 < rate.  mask, y (n); y may equal x.
 */
void		dl_cu_dropout_forward(float *y, float *mask, const float *x, int64_t n, double rate,
								  uint64_t key, cudaStream_t s);

/* dx (n) = dy (n) * mask (n); dx may equal dy. */
void		dl_cu_mul(float *dx, const float *dy, const float *mask, int64_t n, cudaStream_t s);

/* Loss kinds computed on the device (others are host-only). */
typedef enum DlCuLoss
{
	DL_CU_LOSS_CCE = 0,			/* softmax output, one-hot y (B, K), fused gradient */
	DL_CU_LOSS_SPARSE_CCE,		/* softmax output, class index y (B, 1), fused gradient */
	DL_CU_LOSS_MSE				/* any output, y (B, K), gradient wrt the output */
} DlCuLoss;

/*
 * Per-sample loss (B) and, when correct is not NULL, per-sample accuracy
 * (1 when the argmax of p equals the true class, first max wins) (B);
 * grad (B, K) = scale * dL/dz for the fused losses (z the pre-softmax
 * input) or scale * dL/dp for MSE.  grad may be NULL.
 *	 p (B, K)  y (B, K) or (B, 1)
 */
void		dl_cu_loss(float *grad, double *loss, double *correct, const float *p, const float *y,
					   DlCuLoss kind, int64_t B, int64_t K, double scale, cudaStream_t s);

/*
 * acc[0] += sum of v (n) in a fixed order (one block); when flag is not
 * NULL and the sum is not finite, *flag is set to 1.  With v2 not NULL
 * also acc[1] += sum of v2 (n).
 */
void		dl_cu_sum_into(double *acc, int *flag, const double *v, const double *v2, int64_t n,
						   cudaStream_t s);

/* g (n) += l1 * sign(w) + 2 * l2 * w. */
void		dl_cu_regularize(float *g, const float *w, int64_t n, double l1, double l2,
							 cudaStream_t s);

/* Step-wide scalars of one optimizer update (optim.c's StepScalars). */
typedef struct DlCuOptimStep
{
	int			kind;			/* DlOptimKind: SGD or ADAM */
	double		lr_t;
	double		adam_lr;
	double		momentum;
	int			nesterov;
	double		beta_1, beta_2, epsilon;
	int			amsgrad;
	double		clipvalue;		/* > 0: clip each gradient element */
} DlCuOptimStep;

/*
 * One update of p over [b, e) with gradients g and slots s0, s1, s2 (each
 * laid out like p; NULL when the optimizer has fewer slots), computed in
 * double as optim.c does.  Nothing happens when *flag is set (an earlier
 * step diverged); a non-finite updated weight sets *flag.
 */
void		dl_cu_optim_step(float *p, float *g, float *s0, float *s1, float *s2, int *flag,
							 const DlCuOptimStep *k, int64_t b, int64_t e, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif							/* DL_CUDA_KERNELS_H */
