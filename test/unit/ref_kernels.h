/*-------------------------------------------------------------------------
 *
 * ref_kernels.h
 *	  Test-only: naive double-precision forward references of every layer.
 *
 * These are the algorithmic references the float kernels of
 * src/engine/dl_kernels.h are checked against: direct loops, no im2col,
 * no BLAS, geometry recomputed here from the Keras rules rather than
 * taken from dl_conv_geom_init.  Finite-difference gradient checks
 * differentiate these functions numerically.  Shapes use the legend of
 * dl_tensor.h; all tensors are double, NHWC, C order.
 *
 * IDENTIFICATION
 *	  test/unit/ref_kernels.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef REF_KERNELS_H
#define REF_KERNELS_H

#include <stdint.h>

#include "madlib_dl/dl_layer.h"
#include "madlib_dl/dl_rng.h"

/* Geometry of a convolution or pooling window (pools: OC = C). */
typedef struct RefGeom
{
	int64_t		B, H, W, C;		/* input (B,H,W,C) */
	int64_t		OC;				/* output channels */
	int64_t		KH, KW;			/* kernel or window */
	int64_t		SH, SW;			/* strides */
	DlPadding	padding;
	/* filled by ref_geom_init */
	int64_t		OH, OW;
	int64_t		pad_top, pad_left;
	/* convolutions: dilation, 0 read as 1 (no dilation) */
	int64_t		DH, DW;
} RefGeom;

/* Compute OH, OW, pad_top, pad_left from the other fields (TF rules). */
void		ref_geom_init(RefGeom *g);

/* y (B,O) = x (B,I) @ W (I,O) + b (O); b may be NULL. */
void		ref_dense_forward(double *y, const double *x, const double *W, const double *b,
							  int64_t B, int64_t I, int64_t O);

/* y (B,OH,OW,OC) = conv(x (B,H,W,C), K (KH,KW,C,OC)) + b (OC); b may be NULL. */
void		ref_conv2d_forward(double *y, const double *x, const double *K, const double *b,
							   const RefGeom *g);

/* y (B,OH,OW,C): max / mean over the in-bounds cells of each window of x (B,H,W,C). */
void		ref_maxpool2d_forward(double *y, const double *x, const RefGeom *g);
void		ref_avgpool2d_forward(double *y, const double *x, const RefGeom *g);

/* y (B,C) = mean of x (B,S,C) over S. */
void		ref_global_avgpool2d_forward(double *y, const double *x, int64_t B, int64_t S,
										 int64_t C);

/* y (rows, cols) = act(x (rows, cols)); softmax over cols. */
void		ref_activation_forward(DlActivation act, double *y, const double *x, int64_t rows,
								   int64_t cols);

/* y (n) = x (n) * mask (n). */
void		ref_dropout_forward(double *y, const double *x, const double *mask, int64_t n);

/*
 * Training-mode batch normalization of x (R,C): y (R,C); batch mean (C)
 * and biased variance var (C) (either may be NULL).  gamma, beta (C) may
 * be NULL.
 */
void		ref_batchnorm_forward_train(double *y, double *mean, double *var, const double *x,
										const double *gamma, const double *beta, int64_t R,
										int64_t C, double epsilon);

/* Inference with moving statistics. */
void		ref_batchnorm_forward_infer(double *y, const double *x, const double *gamma,
										const double *beta, const double *moving_mean,
										const double *moving_var, int64_t R, int64_t C,
										double epsilon);

/* y (B,C) = max of x (B,S,C) over S. */
void		ref_global_maxpool2d_forward(double *y, const double *x, int64_t B, int64_t S,
										 int64_t C);

/*
 * ZeroPadding2D: y (B, H+m0+m1, W+m2+m3, C) = x (B,H,W,C) framed by
 * zeros; Cropping2D: y (B, H-m0-m1, W-m2-m3, C) = the inner window of x.
 */
void		ref_zeropad2d_forward(double *y, const double *x, int64_t B, int64_t H, int64_t W,
								  int64_t C, const int m[4]);
void		ref_crop2d_forward(double *y, const double *x, int64_t B, int64_t H, int64_t W,
							   int64_t C, const int m[4]);

/* UpSampling2D, nearest: y (B, H*SH, W*SW, C), y[h][w] = x[h / SH][w / SW]. */
void		ref_upsample2d_forward(double *y, const double *x, int64_t B, int64_t H, int64_t W,
								   int64_t C, int SH, int SW);

/* The element-wise merge kind of the k inputs x[j] (n each) into y (n). */
void		ref_merge_forward(DlLayerKind kind, double *y, double *const *x, int k, int64_t n);

/* Concatenate rows: x[j] (outer, width[j]) side by side into y. */
void		ref_concat_forward(double *y, double *const *x, const int64_t *width, int k,
							   int64_t outer);

/*
 * The forward pass of a chain of layers in double, directly from Keras'
 * formulas (issue 18): spec (a chain, finalized) with its parameters p
 * (P, in the layout of the spec), x (B, input size); y (B, output size).
 * Takes Dense, Activation, Flatten and every kind from DL_LAYER_EMBEDDING
 * on; fails the test for any other.
 */
struct DlModelSpec;
void		ref_chain_forward(double *y, const struct DlModelSpec *spec, const double *p,
							  const double *x, int64_t B);

/* sum over n of r[i] * y[i]: the scalar loss of the gradient checks. */
double		ref_dot(const double *r, const double *y, int64_t n);

/*
 * Central-difference gradient grad (n) of loss(ctx) with respect to
 * param (n): param[i] is perturbed by +-eps in place and restored.
 */
void		ref_numeric_grad(double *grad, double *param, int64_t n,
							 double (*loss) (void *ctx), void *ctx, double eps);

/* x (n) = uniform in [lo, hi) drawn from rng; float and its double copy. */
void		ref_fill_uniform(float *xf, double *xd, int64_t n, double lo, double hi, DlRng *rng);

/* xd (n) = (double) xf (n). */
void		ref_to_double(double *xd, const float *xf, int64_t n);

/*
 * Zeroed test scratch memory, freed all at once by ref_free_all(); fails
 * the test when out of memory or when more than REF_MAX_ALLOCS are live.
 */
#define REF_MAX_ALLOCS 512
void	   *ref_calloc(size_t n, size_t size);
void		ref_free_all(void);

#define REF_NEW(type, n) ((type *) ref_calloc((size_t) (n), sizeof(type)))

#endif							/* REF_KERNELS_H */
