/*-------------------------------------------------------------------------
 *
 * cuda_ops.h
 *	  Internal: the CUDA backend's layer operations built on cuBLAS
 *	  (Dense and Conv2D forward and backward), shared by cuda_model.c and
 *	  the GPU unit tests.
 *
 * All tensor pointers are device pointers.  Row-major matrices are passed
 * to column-major cuBLAS as their transposes (y^T = W^T x^T), so no data is
 * ever transposed.  Semantics are those of dl_dense_* and dl_conv2d_* in
 * dl_kernels.h (backward ADDS into dW/db and OVERWRITES dx; dx may be NULL).
 *
 * IDENTIFICATION
 *	  src/engine/cuda/cuda_ops.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_CUDA_OPS_H
#define DL_CUDA_OPS_H

#include <cublas_v2.h>

#include "cuda_kernels.h"

/* y (rows,O) = act(x (rows,I) @ W (I,O) + b (O)); b may be NULL. */
cublasStatus_t dl_cu_dense_forward(cublasHandle_t h, float *y, const float *x, const float *W,
								   const float *b, DlActivation act, int64_t rows, int64_t I,
								   int64_t O, cudaStream_t s);

/*
 * dx (rows,I) = dy @ W^T (skipped when NULL); dW (I,O) += x^T @ dy;
 * db (O) += column sums of dy (skipped when NULL), via gemv with
 * ones (>= rows floats of 1).
 */
cublasStatus_t dl_cu_dense_backward(cublasHandle_t h, float *dx, float *dW, float *db,
									const float *dy, const float *x, const float *W,
									const float *ones, int64_t rows, int64_t I, int64_t O);

/* Floats of the im2col buffer of one convolution: B*OH*OW*KH*KW*C. */
int64_t		dl_cu_conv_col_floats(const DlCuGeom *g);

/* y (B,OH,OW,OC) = act(conv(x, K (KH,KW,C,OC)) + b); col: dl_cu_conv_col_floats. */
cublasStatus_t dl_cu_conv2d_forward(cublasHandle_t h, float *y, float *col, const float *x,
									const float *K, const float *b, DlActivation act,
									const DlCuGeom *g, cudaStream_t s);

/*
 * dx (B,H,W,C) overwritten (skipped when NULL), dK +=, db += (skipped
 * when NULL) from dy (B,OH,OW,OC); col and dcol are two im2col buffers,
 * ones >= B*OH*OW floats of 1.
 */
cublasStatus_t dl_cu_conv2d_backward(cublasHandle_t h, float *dx, float *dK, float *db,
									 float *col, float *dcol, const float *dy, const float *x,
									 const float *K, const float *ones, const DlCuGeom *g,
									 cudaStream_t s);

#endif							/* DL_CUDA_OPS_H */
