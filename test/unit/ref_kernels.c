/*-------------------------------------------------------------------------
 *
 * ref_kernels.c
 *	  Test-only: naive double-precision forward references of every layer.
 *
 * Written for obviousness, not speed: one output element at a time, the
 * window walked with explicit bounds checks.  See ref_kernels.h.
 *
 * IDENTIFICATION
 *	  test/unit/ref_kernels.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>

#include "unit_util.h"
#include "ref_kernels.h"

static void *ref_allocs[REF_MAX_ALLOCS];
static int	ref_n_allocs = 0;

void *
ref_calloc(size_t n, size_t size)
{
	void	   *p;

	if (ref_n_allocs >= REF_MAX_ALLOCS)
		fail_msg("ref_calloc: more than %d live test allocations", REF_MAX_ALLOCS);
	/* never zero bytes, so every buffer is a distinct valid pointer */
	p = calloc(n > 0 ? n : 1, size > 0 ? size : 1);
	if (p == NULL)
		fail_msg("ref_calloc: out of memory for %zu x %zu bytes", n, size);
	ref_allocs[ref_n_allocs++] = p;
	return p;
}

void
ref_free_all(void)
{
	while (ref_n_allocs > 0)
		free(ref_allocs[--ref_n_allocs]);
}

/* One axis of the TensorFlow output-size rule. */
static void
ref_axis(int64_t *out, int64_t *pad_before, int64_t n, int64_t k, int64_t s, DlPadding p)
{
	if (p == DL_PADDING_VALID)
	{
		/* TF: ceil((n - k + 1) / s) */
		int64_t		span = n - k + 1;

		*out = span > 0 ? (span + s - 1) / s : 0;
		*pad_before = 0;
	}
	else
	{
		int64_t		o = (n + s - 1) / s;
		int64_t		total = (o - 1) * s + k - n;

		*out = o;
		*pad_before = total > 0 ? total / 2 : 0;
	}
}

void
ref_geom_init(RefGeom *g)
{
	if (g->DH < 1)
		g->DH = 1;
	if (g->DW < 1)
		g->DW = 1;
	/* a dilated kernel spans (K - 1) * D + 1 cells */
	ref_axis(&g->OH, &g->pad_top, g->H, (g->KH - 1) * g->DH + 1, g->SH, g->padding);
	ref_axis(&g->OW, &g->pad_left, g->W, (g->KW - 1) * g->DW + 1, g->SW, g->padding);
}

void
ref_dense_forward(double *y, const double *x, const double *W, const double *b,
				  int64_t B, int64_t I, int64_t O)
{
	for (int64_t n = 0; n < B; n++)
		for (int64_t o = 0; o < O; o++)
		{
			double		s = b != NULL ? b[o] : 0.0;

			for (int64_t i = 0; i < I; i++)
				s += x[n * I + i] * W[i * O + o];
			y[n * O + o] = s;
		}
}

void
ref_conv2d_forward(double *y, const double *x, const double *K, const double *b,
				   const RefGeom *g)
{
	for (int64_t n = 0; n < g->B; n++)
		for (int64_t oh = 0; oh < g->OH; oh++)
			for (int64_t ow = 0; ow < g->OW; ow++)
				for (int64_t oc = 0; oc < g->OC; oc++)
				{
					double		s = b != NULL ? b[oc] : 0.0;

					for (int64_t kh = 0; kh < g->KH; kh++)
						for (int64_t kw = 0; kw < g->KW; kw++)
						{
							int64_t		ih = oh * g->SH + kh * g->DH - g->pad_top;
							int64_t		iw = ow * g->SW + kw * g->DW - g->pad_left;

							if (ih < 0 || ih >= g->H || iw < 0 || iw >= g->W)
								continue;
							for (int64_t c = 0; c < g->C; c++)
								s += x[((n * g->H + ih) * g->W + iw) * g->C + c] *
									K[((kh * g->KW + kw) * g->C + c) * g->OC + oc];
						}
					y[((n * g->OH + oh) * g->OW + ow) * g->OC + oc] = s;
				}
}

/* Shared walk of the pools: mode 0 = max, 1 = mean. */
static void
ref_pool(double *y, const double *x, const RefGeom *g, int mode)
{
	for (int64_t n = 0; n < g->B; n++)
		for (int64_t oh = 0; oh < g->OH; oh++)
			for (int64_t ow = 0; ow < g->OW; ow++)
				for (int64_t c = 0; c < g->C; c++)
				{
					double		acc = mode == 0 ? -INFINITY : 0.0;
					int64_t		count = 0;

					for (int64_t kh = 0; kh < g->KH; kh++)
						for (int64_t kw = 0; kw < g->KW; kw++)
						{
							int64_t		ih = oh * g->SH + kh - g->pad_top;
							int64_t		iw = ow * g->SW + kw - g->pad_left;
							double		v;

							if (ih < 0 || ih >= g->H || iw < 0 || iw >= g->W)
								continue;
							v = x[((n * g->H + ih) * g->W + iw) * g->C + c];
							if (mode == 0)
								acc = v > acc ? v : acc;
							else
								acc += v;
							count++;
						}
					if (mode == 1)
						acc /= (double) count;
					y[((n * g->OH + oh) * g->OW + ow) * g->C + c] = acc;
				}
}

void
ref_maxpool2d_forward(double *y, const double *x, const RefGeom *g)
{
	ref_pool(y, x, g, 0);
}

void
ref_avgpool2d_forward(double *y, const double *x, const RefGeom *g)
{
	ref_pool(y, x, g, 1);
}

void
ref_global_avgpool2d_forward(double *y, const double *x, int64_t B, int64_t S, int64_t C)
{
	for (int64_t n = 0; n < B; n++)
		for (int64_t c = 0; c < C; c++)
		{
			double		s = 0.0;

			for (int64_t i = 0; i < S; i++)
				s += x[(n * S + i) * C + c];
			y[n * C + c] = s / (double) S;
		}
}

void
ref_activation_forward(DlActivation act, double *y, const double *x, int64_t rows,
					   int64_t cols)
{
	int64_t		n = rows * cols;

	if (act == DL_ACT_SOFTMAX)
	{
		for (int64_t r = 0; r < rows; r++)
		{
			double		m = -INFINITY,
						s = 0.0;

			for (int64_t j = 0; j < cols; j++)
				m = fmax(m, x[r * cols + j]);
			for (int64_t j = 0; j < cols; j++)
				s += exp(x[r * cols + j] - m);
			for (int64_t j = 0; j < cols; j++)
				y[r * cols + j] = exp(x[r * cols + j] - m) / s;
		}
		return;
	}
	for (int64_t i = 0; i < n; i++)
	{
		double		v = x[i];

		switch (act)
		{
			case DL_ACT_LINEAR:
				y[i] = v;
				break;
			case DL_ACT_RELU:
				y[i] = v > 0 ? v : 0;
				break;
			case DL_ACT_SIGMOID:
				y[i] = 1.0 / (1.0 + exp(-v));
				break;
			case DL_ACT_TANH:
				y[i] = tanh(v);
				break;
			case DL_ACT_ELU:
				y[i] = v > 0 ? v : exp(v) - 1.0;
				break;
			case DL_ACT_SOFTPLUS:
				y[i] = log(1.0 + exp(v));
				break;
			case DL_ACT_SOFTMAX:
				break;
			case DL_ACT_SELU:
				y[i] = 1.0507009873554804934 * (v > 0 ? v : 1.6732632423543772848 * (exp(v) - 1.0));
				break;
			case DL_ACT_SWISH:
				y[i] = v / (1.0 + exp(-v));
				break;
			case DL_ACT_GELU:
				y[i] = 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
				break;
			case DL_ACT_SOFTSIGN:
				y[i] = v / (1.0 + fabs(v));
				break;
			case DL_ACT_HARD_SIGMOID:
				y[i] = fmin(fmax(0.2 * v + 0.5, 0.0), 1.0);
				break;
			case DL_ACT_HARD_SIGMOID_K3:
				y[i] = fmin(fmax(v + 3.0, 0.0), 6.0) / 6.0;
				break;
			case DL_ACT_EXPONENTIAL:
				y[i] = exp(v);
				break;
		}
	}
}

void
ref_dropout_forward(double *y, const double *x, const double *mask, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = x[i] * mask[i];
}

void
ref_batchnorm_forward_train(double *y, double *mean, double *var, const double *x,
							const double *gamma, const double *beta, int64_t R,
							int64_t C, double epsilon)
{
	for (int64_t c = 0; c < C; c++)
	{
		double		m = 0.0,
					v = 0.0;

		for (int64_t r = 0; r < R; r++)
			m += x[r * C + c];
		m /= (double) R;
		for (int64_t r = 0; r < R; r++)
			v += (x[r * C + c] - m) * (x[r * C + c] - m);
		v /= (double) R;
		if (mean != NULL)
			mean[c] = m;
		if (var != NULL)
			var[c] = v;
		for (int64_t r = 0; r < R; r++)
			y[r * C + c] = (gamma != NULL ? gamma[c] : 1.0) * (x[r * C + c] - m) /
				sqrt(v + epsilon) + (beta != NULL ? beta[c] : 0.0);
	}
}

void
ref_batchnorm_forward_infer(double *y, const double *x, const double *gamma,
							const double *beta, const double *moving_mean,
							const double *moving_var, int64_t R, int64_t C,
							double epsilon)
{
	for (int64_t r = 0; r < R; r++)
		for (int64_t c = 0; c < C; c++)
			y[r * C + c] = (gamma != NULL ? gamma[c] : 1.0) *
				(x[r * C + c] - moving_mean[c]) / sqrt(moving_var[c] + epsilon) +
				(beta != NULL ? beta[c] : 0.0);
}

double
ref_dot(const double *r, const double *y, int64_t n)
{
	double		s = 0.0;

	for (int64_t i = 0; i < n; i++)
		s += r[i] * y[i];
	return s;
}

void
ref_numeric_grad(double *grad, double *param, int64_t n,
				 double (*loss) (void *ctx), void *ctx, double eps)
{
	for (int64_t i = 0; i < n; i++)
	{
		double		saved = param[i];
		double		lp,
					lm;

		param[i] = saved + eps;
		lp = loss(ctx);
		param[i] = saved - eps;
		lm = loss(ctx);
		param[i] = saved;
		grad[i] = (lp - lm) / (2.0 * eps);
	}
}

void
ref_fill_uniform(float *xf, double *xd, int64_t n, double lo, double hi, DlRng *rng)
{
	for (int64_t i = 0; i < n; i++)
	{
		xf[i] = (float) (lo + (hi - lo) * dl_rng_uniform(rng));
		if (xd != NULL)
			xd[i] = xf[i];
	}
}

void
ref_to_double(double *xd, const float *xf, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		xd[i] = xf[i];
}

void
ref_global_maxpool2d_forward(double *y, const double *x, int64_t B, int64_t S, int64_t C)
{
	for (int64_t n = 0; n < B; n++)
		for (int64_t c = 0; c < C; c++)
		{
			double		m = -INFINITY;

			for (int64_t s = 0; s < S; s++)
				m = fmax(m, x[(n * S + s) * C + c]);
			y[n * C + c] = m;
		}
}

void
ref_zeropad2d_forward(double *y, const double *x, int64_t B, int64_t H, int64_t W, int64_t C,
					  const int m[4])
{
	int64_t		OH = H + m[0] + m[1];
	int64_t		OW = W + m[2] + m[3];

	for (int64_t n = 0; n < B; n++)
		for (int64_t h = 0; h < OH; h++)
			for (int64_t w = 0; w < OW; w++)
				for (int64_t c = 0; c < C; c++)
				{
					int64_t		ih = h - m[0];
					int64_t		iw = w - m[2];

					y[((n * OH + h) * OW + w) * C + c] = ih < 0 || ih >= H || iw < 0 || iw >= W ?
						0.0 : x[((n * H + ih) * W + iw) * C + c];
				}
}

void
ref_crop2d_forward(double *y, const double *x, int64_t B, int64_t H, int64_t W, int64_t C,
				   const int m[4])
{
	int64_t		OH = H - m[0] - m[1];
	int64_t		OW = W - m[2] - m[3];

	for (int64_t n = 0; n < B; n++)
		for (int64_t h = 0; h < OH; h++)
			for (int64_t w = 0; w < OW; w++)
				for (int64_t c = 0; c < C; c++)
					y[((n * OH + h) * OW + w) * C + c] = x[((n * H + h + m[0]) * W + w + m[2]) * C + c];
}

void
ref_upsample2d_forward(double *y, const double *x, int64_t B, int64_t H, int64_t W, int64_t C,
					   int SH, int SW)
{
	int64_t		OH = H * SH;
	int64_t		OW = W * SW;

	for (int64_t n = 0; n < B; n++)
		for (int64_t h = 0; h < OH; h++)
			for (int64_t w = 0; w < OW; w++)
				for (int64_t c = 0; c < C; c++)
					y[((n * OH + h) * OW + w) * C + c] = x[((n * H + h / SH) * W + w / SW) * C + c];
}

void
ref_merge_forward(DlLayerKind kind, double *y, double *const *x, int k, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
	{
		double		v = x[0][i];

		for (int j = 1; j < k; j++)
		{
			double		u = x[j][i];

			switch (kind)
			{
				case DL_LAYER_SUBTRACT:
					v -= u;
					break;
				case DL_LAYER_MULTIPLY:
					v *= u;
					break;
				case DL_LAYER_MAXIMUM:
					v = fmax(v, u);
					break;
				case DL_LAYER_MINIMUM:
					v = fmin(v, u);
					break;
				default:		/* Add, Average */
					v += u;
					break;
			}
		}
		y[i] = kind == DL_LAYER_AVERAGE ? v / k : v;
	}
}

void
ref_concat_forward(double *y, double *const *x, const int64_t *width, int k, int64_t outer)
{
	int64_t		total = 0;

	for (int j = 0; j < k; j++)
		total += width[j];
	for (int64_t r = 0; r < outer; r++)
	{
		int64_t		col = 0;

		for (int j = 0; j < k; j++)
			for (int64_t i = 0; i < width[j]; i++)
				y[r * total + col++] = x[j][r * width[j] + i];
	}
}
