/*-------------------------------------------------------------------------
 *
 * activation.c
 *	  Element-wise activations and softmax, forward and backward.
 *
 * Every supported activation's derivative is a function of its output y,
 * so backward needs only y (no copy of the pre-activation is kept):
 *	 relu     y > 0 ? 1 : 0         (0 at the kink, as TensorFlow)
 *	 sigmoid  y (1 - y)
 *	 tanh     1 - y^2
 *	 elu      y > 0 ? 1 : y + 1     (alpha = 1)
 *	 softplus 1 - exp(-y)           (= sigmoid(x))
 *	 softmax  dx = y * (dy - sum(dy * y)) per row
 *
 * IDENTIFICATION
 *	  src/engine/activation.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "dl_kernels.h"

/* Row-wise numerically stable softmax; y may equal x. */
static void
softmax_forward(float *y, const float *x, int64_t rows, int64_t cols)
{
	for (int64_t r = 0; r < rows; r++)
	{
		const float *xr = x + r * cols;
		float	   *yr = y + r * cols;
		float		maxv = -INFINITY;
		double		sum = 0.0;
		float		s;

		for (int64_t j = 0; j < cols; j++)
			if (xr[j] > maxv)
				maxv = xr[j];
		for (int64_t j = 0; j < cols; j++)
		{
			yr[j] = expf(xr[j] - maxv);
			sum += yr[j];
		}
		s = (float) sum;
		for (int64_t j = 0; j < cols; j++)
			yr[j] /= s;
	}
}

/*
 * y (rows, cols) = act(x (rows, cols)); softmax normalizes each row.  y
 * may equal x.
 */
void
dl_activation_forward(DlActivation act, float *y, const float *x,
					  int64_t rows, int64_t cols)
{
	int64_t		n = rows * cols;

	switch (act)
	{
		case DL_ACT_LINEAR:
			if (y != x)
				memmove(y, x, (size_t) n * sizeof(float));
			break;
		case DL_ACT_RELU:
			for (int64_t i = 0; i < n; i++)
				y[i] = x[i] > 0.0f ? x[i] : 0.0f;
			break;
		case DL_ACT_SIGMOID:
			for (int64_t i = 0; i < n; i++)
				y[i] = 1.0f / (1.0f + expf(-x[i]));
			break;
		case DL_ACT_TANH:
			for (int64_t i = 0; i < n; i++)
				y[i] = tanhf(x[i]);
			break;
		case DL_ACT_SOFTMAX:
			softmax_forward(y, x, rows, cols);
			break;
		case DL_ACT_ELU:
			for (int64_t i = 0; i < n; i++)
				y[i] = x[i] > 0.0f ? x[i] : expm1f(x[i]);
			break;
		case DL_ACT_SOFTPLUS:
			/* log(1 + e^x) = max(x, 0) + log1p(e^-|x|), no overflow */
			for (int64_t i = 0; i < n; i++)
			{
				float		v = x[i];

				y[i] = (v > 0.0f ? v : 0.0f) + log1pf(expf(-fabsf(v)));
			}
			break;
	}
}

/*
 * y (rows, cols) = act(y + b) in place, b (cols) added to every row; b
 * may be NULL.  The layers call it right after their sgemm (beta = 0),
 * so the bias, the activation and the sgemm output share one pass over
 * y instead of a bias copy before the sgemm and an activation pass after
 * it.  ReLU, the common case, is one loop.
 */
/* y (rows, cols) = y + b, or max(y + b, 0) when relu; b may be NULL. */
DL_VEC_CLONES
static void
bias_relu(float *restrict y, const float *restrict b, int relu, int64_t rows, int64_t cols)
{
	for (int64_t r = 0; r < rows; r++)
	{
		float	   *yr = y + r * cols;

		if (b != NULL && relu)
			for (int64_t j = 0; j < cols; j++)
			{
				float		v = yr[j] + b[j];

				yr[j] = v > 0.0f ? v : 0.0f;
			}
		else if (b != NULL)
			for (int64_t j = 0; j < cols; j++)
				yr[j] += b[j];
		else if (relu)
			for (int64_t j = 0; j < cols; j++)
				yr[j] = yr[j] > 0.0f ? yr[j] : 0.0f;
	}
}

/* dx (n) = y > 0 ? dy : 0; dx may equal dy (restrict is not used). */
DL_VEC_CLONES
static void
relu_backward(float *dx, const float *dy, const float *y, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

void
dl_bias_act_forward(float *y, const float *b, DlActivation act, int64_t rows, int64_t cols)
{
	if (act == DL_ACT_RELU || b != NULL)
		bias_relu(y, b, act == DL_ACT_RELU, rows, cols);
	if (act != DL_ACT_LINEAR && act != DL_ACT_RELU)
		dl_activation_forward(act, y, y, rows, cols);
}

/*
 * dx (rows, cols) from dy (rows, cols) and the forward output y (rows,
 * cols).  dx may equal dy.
 */
void
dl_activation_backward(DlActivation act, float *dx, const float *dy,
					   const float *y, int64_t rows, int64_t cols)
{
	int64_t		n = rows * cols;

	switch (act)
	{
		case DL_ACT_LINEAR:
			if (dx != dy)
				memmove(dx, dy, (size_t) n * sizeof(float));
			break;
		case DL_ACT_RELU:
			relu_backward(dx, dy, y, n);
			break;
		case DL_ACT_SIGMOID:
			for (int64_t i = 0; i < n; i++)
				dx[i] = dy[i] * y[i] * (1.0f - y[i]);
			break;
		case DL_ACT_TANH:
			for (int64_t i = 0; i < n; i++)
				dx[i] = dy[i] * (1.0f - y[i] * y[i]);
			break;
		case DL_ACT_SOFTMAX:
			for (int64_t r = 0; r < rows; r++)
			{
				const float *yr = y + r * cols;
				const float *dyr = dy + r * cols;
				float	   *dxr = dx + r * cols;
				float		dot = 0.0f;

				for (int64_t j = 0; j < cols; j++)
					dot += dyr[j] * yr[j];
				for (int64_t j = 0; j < cols; j++)
					dxr[j] = yr[j] * (dyr[j] - dot);
			}
			break;
		case DL_ACT_ELU:
			for (int64_t i = 0; i < n; i++)
				dx[i] = y[i] > 0.0f ? dy[i] : dy[i] * (y[i] + 1.0f);
			break;
		case DL_ACT_SOFTPLUS:
			/* 1 - exp(-y), via expm1 to keep precision for small y */
			for (int64_t i = 0; i < n; i++)
				dx[i] = dy[i] * -expm1f(-y[i]);
			break;
	}
}
