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
 *	 selu     y > 0 ? scale : y + scale * alpha
 *	 softsign (1 - |y|)^2
 *	 hard_sigmoid  0 < y < 1 ? 0.2 : 0   (Keras 3's: 1/6)
 *	 exponential   y
 * but those of swish (x sigmoid(x)) and gelu (x Phi(x)), which need x:
 * dl_activation_backward_x.  Also the parametric ReLUs (ReLU with
 * arguments, LeakyReLU, PReLU), whose backward passes read x too.
 *
 * IDENTIFICATION
 *	  src/engine/activation.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "dl_kernels.h"

/* SELU's constants (Klambauer et al.), as Keras and TF.js */
#define SELU_SCALE 1.0507009873554804934
#define SELU_SCALE_ALPHA 1.7580993408473768599	/* scale * alpha */

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
		case DL_ACT_SELU:
			for (int64_t i = 0; i < n; i++)
				y[i] = x[i] > 0.0f ? (float) SELU_SCALE * x[i] :
					(float) SELU_SCALE_ALPHA * expm1f(x[i]);
			break;
		case DL_ACT_SWISH:
			for (int64_t i = 0; i < n; i++)
				y[i] = x[i] * (1.0f / (1.0f + expf(-x[i])));
			break;
		case DL_ACT_GELU:
			for (int64_t i = 0; i < n; i++)
				y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * (float) M_SQRT1_2));
			break;
		case DL_ACT_SOFTSIGN:
			for (int64_t i = 0; i < n; i++)
				y[i] = x[i] / (1.0f + fabsf(x[i]));
			break;
		case DL_ACT_HARD_SIGMOID:
			for (int64_t i = 0; i < n; i++)
			{
				float		v = 0.2f * x[i] + 0.5f;

				y[i] = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
			}
			break;
		case DL_ACT_HARD_SIGMOID_K3:
			/* relu6(x + 3) / 6 */
			for (int64_t i = 0; i < n; i++)
			{
				float		v = x[i] + 3.0f;

				y[i] = (v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v)) / 6.0f;
			}
			break;
		case DL_ACT_EXPONENTIAL:
			for (int64_t i = 0; i < n; i++)
				y[i] = expf(x[i]);
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
		case DL_ACT_SELU:
			for (int64_t i = 0; i < n; i++)
				dx[i] = dy[i] * (y[i] > 0.0f ? (float) SELU_SCALE :
								 y[i] + (float) SELU_SCALE_ALPHA);
			break;
		case DL_ACT_SOFTSIGN:
			for (int64_t i = 0; i < n; i++)
			{
				float		a = 1.0f - fabsf(y[i]);

				dx[i] = dy[i] * a * a;
			}
			break;
		case DL_ACT_HARD_SIGMOID:
		case DL_ACT_HARD_SIGMOID_K3:
			{
				float		slope = act == DL_ACT_HARD_SIGMOID ? 0.2f : 1.0f / 6.0f;

				for (int64_t i = 0; i < n; i++)
					dx[i] = y[i] > 0.0f && y[i] < 1.0f ? dy[i] * slope : 0.0f;
			}
			break;
		case DL_ACT_EXPONENTIAL:
			for (int64_t i = 0; i < n; i++)
				dx[i] = dy[i] * y[i];
			break;
		case DL_ACT_SWISH:
		case DL_ACT_GELU:
			/* not from y: the layers call dl_activation_backward_x (plan.c keeps x) */
			break;
	}
}

void
dl_activation_backward_x(DlActivation act, float *dx, const float *dy, const float *x,
						 int64_t n)
{
	switch (act)
	{
		case DL_ACT_SWISH:
			/* s (1 + x (1 - s)), s = sigmoid(x) */
			for (int64_t i = 0; i < n; i++)
			{
				float		sg = 1.0f / (1.0f + expf(-x[i]));

				dx[i] = dy[i] * sg * (1.0f + x[i] * (1.0f - sg));
			}
			break;
		case DL_ACT_GELU:
			/* Phi(x) + x phi(x) */
			for (int64_t i = 0; i < n; i++)
			{
				float		cdf = 0.5f * (1.0f + erff(x[i] * (float) M_SQRT1_2));
				float		pdf = expf(-0.5f * x[i] * x[i]) * (float) (M_2_SQRTPI * M_SQRT1_2 * 0.5);

				dx[i] = dy[i] * (cdf + x[i] * pdf);
			}
			break;
		default:
			break;
	}
}

void
dl_relu_args_forward(float *y, const float *x, int64_t n, bool has_max, double max_value,
					 double slope, double threshold)
{
	float		mx = (float) max_value,
				sl = (float) slope,
				th = (float) threshold;

	for (int64_t i = 0; i < n; i++)
	{
		float		p = x[i] > th ? x[i] : 0.0f;
		float		neg = th - x[i] > 0.0f ? th - x[i] : 0.0f;

		if (has_max)
			p = p < 0.0f ? 0.0f : (p > mx ? mx : p);
		y[i] = sl != 0.0f ? p - sl * neg : p;
	}
}

void
dl_relu_args_backward(float *dx, const float *dy, const float *x, int64_t n, bool has_max,
					  double max_value, double slope, double threshold)
{
	float		mx = (float) max_value,
				sl = (float) slope,
				th = (float) threshold;

	for (int64_t i = 0; i < n; i++)
	{
		float		d = 0.0f;

		if (x[i] > th && (!has_max || (x[i] >= 0.0f && x[i] <= mx)))
			d = 1.0f;
		else if (x[i] < th)
			d = sl;
		dx[i] = dy[i] * d;
	}
}

/*
 * alpha's offset for each element of a sample of shape dims (rank axes),
 * by an odometer: the strides of alpha's shape, 0 along the shared axes.
 */
typedef struct AlphaWalk
{
	int64_t		dims[DL_MAX_RANK];
	int64_t		step[DL_MAX_RANK];
	int64_t		idx[DL_MAX_RANK];
	int64_t		off;
	int			rank;
} AlphaWalk;

/*
 * Start *w at a sample's first element; returns the size of a sample.
 * After a sample's last element the walk is back at offset 0, so one walk
 * serves a whole batch of samples.
 */
static int64_t
alpha_walk_init(AlphaWalk *w, const int64_t *dims, int rank, unsigned shared)
{
	int64_t		s = 1,
				n = 1;

	w->rank = rank;
	w->off = 0;
	for (int d = rank - 1; d >= 0; d--)
	{
		bool		sh = (shared & (1u << d)) != 0;

		w->dims[d] = dims[d];
		w->idx[d] = 0;
		w->step[d] = sh ? 0 : s;
		s *= sh ? 1 : dims[d];
		n *= dims[d];
	}
	return n;
}

static inline void
alpha_walk_next(AlphaWalk *w)
{
	for (int d = w->rank - 1; d >= 0; d--)
	{
		w->off += w->step[d];
		if (++w->idx[d] < w->dims[d])
			return;
		w->off -= w->step[d] * w->dims[d];
		w->idx[d] = 0;
	}
}

void
dl_prelu_forward(float *y, const float *x, const float *alpha, int64_t B, const int64_t *dims,
				 int rank, unsigned shared)
{
	AlphaWalk	w;
	int64_t		n = B * alpha_walk_init(&w, dims, rank, shared);

	for (int64_t i = 0; i < n; i++)
	{
		y[i] = x[i] > 0.0f ? x[i] : alpha[w.off] * x[i];
		alpha_walk_next(&w);
	}
}

void
dl_prelu_backward(float *dx, float *dalpha, const float *dy, const float *x,
				  const float *alpha, int64_t B, const int64_t *dims, int rank, unsigned shared)
{
	AlphaWalk	w;
	int64_t		n = B * alpha_walk_init(&w, dims, rank, shared);

	for (int64_t i = 0; i < n; i++)
	{
		if (x[i] < 0.0f)
			dalpha[w.off] += dy[i] * x[i];
		if (dx != NULL)
			dx[i] = x[i] > 0.0f ? dy[i] : alpha[w.off] * dy[i];
		alpha_walk_next(&w);
	}
}
