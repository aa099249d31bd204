/*-------------------------------------------------------------------------
 *
 * dense.c
 *	  Dense (fully connected) layer: y = x W + b, forward and backward.
 *
 * Both directions are single sgemm calls (dl_sgemm: oneDNN's or
 * OpenBLAS's, dl_backend.h) on the row-major buffers; transposes are
 * expressed through the trans flags, never copied.
 * Forward writes the sgemm result (beta = 0) and adds the bias and the
 * activation in one pass over the output.
 * The caller pins the BLAS thread count (one thread per segment).
 *
 * IDENTIFICATION
 *	  src/engine/dense.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "dl_kernels.h"

/*
 * y (B,O) = act(x (B,I) @ W (I,O) + b (O)).  b may be NULL
 * (use_bias=false).  The sgemm overwrites y (beta = 0); bias and
 * activation follow in one pass while y is in cache.  B, I and O must
 * each fit in an int (BLAS dimensions).
 */
void
dl_dense_forward_act(float *y, const float *x, const float *W, const float *b,
					 DlActivation act, int64_t B, int64_t I, int64_t O)
{
	if (B <= 0 || O <= 0)
		return;
	if (I <= 0)
		memset(y, 0, (size_t) (B * O) * sizeof(float));
	else
		dl_sgemm(false, false, B, O, I, 1.0f, x, I, W, O, 0.0f, y, O);
	dl_bias_act_forward(y, b, act, B, O);
}

/* y (B,O) = x (B,I) @ W (I,O) + b (O); b may be NULL. */
void
dl_dense_forward(float *y, const float *x, const float *W, const float *b,
				 int64_t B, int64_t I, int64_t O)
{
	dl_dense_forward_act(y, x, W, b, DL_ACT_LINEAR, B, I, O);
}

/*
 * dx (B,I) = dy (B,O) @ W^T, overwritten; skipped when dx is NULL.
 * dW (I,O) += x^T @ dy; skipped when dW is NULL (frozen layer).
 * db (O) += column sums of dy; skipped when db is NULL.
 */
void
dl_dense_backward(float *dx, float *dW, float *db, const float *dy,
				  const float *x, const float *W, int64_t B, int64_t I, int64_t O)
{
	if (B <= 0)
		return;
	if (dx != NULL && I > 0)
	{
		if (O > 0)
			dl_sgemm(false, true, B, I, O, 1.0f, dy, O, W, O, 0.0f, dx, I);
		else
			memset(dx, 0, (size_t) (B * I) * sizeof(float));
	}
	if (dW != NULL && I > 0 && O > 0)
		dl_sgemm(true, false, I, O, B, 1.0f, x, I, dy, O, 1.0f, dW, O);
	if (db != NULL)
	{
		for (int64_t r = 0; r < B; r++)
		{
			const float *row = dy + r * O;

			for (int64_t o = 0; o < O; o++)
				db[o] += row[o];
		}
	}
}
