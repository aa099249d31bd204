/*-------------------------------------------------------------------------
 *
 * cuda_ops.c
 *	  Dense and Conv2D on the GPU: cuBLAS sgemm (row-major trick) plus the
 *	  bias/activation, im2col and col2im kernels.
 *
 * The convolution is the CPU engine's: im2col into (B*OH*OW, KH*KW*C),
 * whose product with the kernel block (KH*KW*C, OC), stored as Keras
 * stores it, is the output; so no weight is ever re-laid out and the
 * blob format is that of the CPU.  col2im is a gather (each input pixel
 * sums its own entries), deterministic without atomics.
 *
 * IDENTIFICATION
 *	  src/engine/cuda/cuda_ops.c
 *
 *-------------------------------------------------------------------------
 */
#include "cuda_ops.h"

static const float one = 1.0f;
static const float zero = 0.0f;

cublasStatus_t
dl_cu_dense_forward(cublasHandle_t h, float *y, const float *x, const float *W, const float *b,
					DlActivation act, int64_t rows, int64_t I, int64_t O, cudaStream_t s)
{
	/* column-major: y^T (O, rows) = W^T (O, I) @ x^T (I, rows) */
	cublasStatus_t st = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int) O, (int) rows, (int) I,
									&one, W, (int) O, x, (int) I, &zero, y, (int) O);

	if (st == CUBLAS_STATUS_SUCCESS)
		dl_cu_bias_act(y, b, act, rows, O, s);
	return st;
}

cublasStatus_t
dl_cu_dense_backward(cublasHandle_t h, float *dx, float *dW, float *db, const float *dy,
					 const float *x, const float *W, const float *ones, int64_t rows,
					 int64_t I, int64_t O)
{
	cublasStatus_t st = CUBLAS_STATUS_SUCCESS;

	/* dx^T (I, rows) = W (I, O) [column-major (O, I) transposed] @ dy^T (O, rows) */
	if (dx != NULL)
		st = cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, (int) I, (int) rows, (int) O,
						 &one, W, (int) O, dy, (int) O, &zero, dx, (int) I);
	/* dW^T (O, I) += dy^T (O, rows) @ x (rows, I) */
	if (st == CUBLAS_STATUS_SUCCESS)
		st = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, (int) O, (int) I, (int) rows,
						 &one, dy, (int) O, x, (int) I, &one, dW, (int) O);
	/* db (O) += dy^T (O, rows) @ ones (rows) */
	if (st == CUBLAS_STATUS_SUCCESS && db != NULL)
		st = cublasSgemv(h, CUBLAS_OP_N, (int) O, (int) rows, &one, dy, (int) O, ones, 1,
						 &one, db, 1);
	return st;
}

int64_t
dl_cu_conv_col_floats(const DlCuGeom *g)
{
	return g->B * g->OH * g->OW * g->KH * g->KW * g->C;
}

cublasStatus_t
dl_cu_conv2d_forward(cublasHandle_t h, float *y, float *col, const float *x, const float *K,
					 const float *b, DlActivation act, const DlCuGeom *g, cudaStream_t s)
{
	dl_cu_im2col(col, x, g, s);
	return dl_cu_dense_forward(h, y, col, K, b, act, g->B * g->OH * g->OW,
							   g->KH * g->KW * g->C, g->OC, s);
}

cublasStatus_t
dl_cu_conv2d_backward(cublasHandle_t h, float *dx, float *dK, float *db, float *col,
					  float *dcol, const float *dy, const float *x, const float *K,
					  const float *ones, const DlCuGeom *g, cudaStream_t s)
{
	cublasStatus_t st;

	/* the col buffer is shared by all convolutions: rebuild this one's */
	dl_cu_im2col(col, x, g, s);
	st = dl_cu_dense_backward(h, dx != NULL ? dcol : NULL, dK, db, dy, col, K, ones,
							  g->B * g->OH * g->OW, g->KH * g->KW * g->C, g->OC);
	if (st == CUBLAS_STATUS_SUCCESS && dx != NULL)
		dl_cu_col2im(dx, dcol, g, s);
	return st;
}
