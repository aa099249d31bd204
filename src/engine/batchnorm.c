/*-------------------------------------------------------------------------
 *
 * batchnorm.c
 *	  BatchNormalization over the last axis: training, inference, backward.
 *
 * The data are R rows of C channels (R = B*H*W for images, B for
 * vectors).  Per-channel sums are accumulated in double, a block of
 * BN_BLOCK channels at a time in fixed-size local arrays, so the kernels
 * need no workspace and every inner loop runs over contiguous channels.
 * Variance is computed with a second pass over (x - mean), not as
 * E[x^2] - mean^2, to avoid cancellation.
 *
 * The normalised xhat = (x - mean) * invstd is not stored: the backward
 * pass recomputes it from the input, the same float operations giving the
 * same values, which saves a write of the whole tensor (stores cost more
 * than loads here).  A ReLU layer reading the output can be fused into
 * the pass that writes it (act), and its backward into the passes that
 * read dy (y_relu).  Each lane of the vectorized loops is
 * one channel, its sums in row order: every kernel version
 * (DL_VEC_CLONES_NO_FMA) gives the same bits.
 *
 * IDENTIFICATION
 *	  src/engine/batchnorm.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "dl_kernels.h"

#define BN_BLOCK 64				/* channels per pass of the reductions */

/*
 * y (R,C) = act(((x - m) * s) * g [+ b]) for the channels [c0, c0 + nc)
 * of every row; m, s, g, b (nc) are the block's.  with_beta and relu are
 * constants where it is called, so each call is a loop of its own.
 */
static inline __attribute__((always_inline)) void
bn_apply(float *y, const float *x, const float *m, const float *s, const float *g,
		 const float *b, int64_t R, int64_t C, int64_t c0, int64_t nc, bool with_beta,
		 bool relu)
{
	for (int64_t r = 0; r < R; r++)
	{
		const float *xr = x + r * C + c0;
		float	   *yr = y + r * C + c0;

		for (int64_t j = 0; j < nc; j++)
		{
			float		v = (xr[j] - m[j]) * s[j] * g[j];

			if (with_beta)
				v += b[j];
			yr[j] = relu ? (v > 0.0f ? v : 0.0f) : v;
		}
	}
}

/*
 * Training mode.  From x (R,C): mean (C) and invstd (C) =
 * 1/sqrt(biased var + epsilon); y (R,C) = act(gamma * xhat + beta) with
 * xhat = (x - mean) * invstd (gamma, beta (C) may be NULL: 1 and 0).
 * moving_mean, moving_var (C) become moving * momentum + batch * (1 -
 * momentum), the batch variance being the biased one, or, when
 * unbiased_moving_var (TensorFlow's fused batch norm, used after rank-3
 * inputs), the unbiased one var * R / (R - 1) (var itself when R = 1).
 * The normalisation always uses the biased variance.  R >= 1.  y may
 * equal x.
 */
DL_VEC_CLONES_NO_FMA void
dl_batchnorm_forward_train(float *y, float *mean, float *invstd, float *moving_mean,
						   float *moving_var, const float *x, const float *gamma,
						   const float *beta, int64_t R, int64_t C, double momentum,
						   double epsilon, bool unbiased_moving_var, DlActivation act)
{
	double		acc[BN_BLOCK];
	double		mv_scale = (unbiased_moving_var && R > 1) ?
		(double) R / (double) (R - 1) : 1.0;
	double		mu[BN_BLOCK];
	float		m[BN_BLOCK],
				s[BN_BLOCK],
				g[BN_BLOCK],
				b[BN_BLOCK];
	bool		relu = act == DL_ACT_RELU;

	if (R <= 0)
		return;
	for (int64_t c0 = 0; c0 < C; c0 += BN_BLOCK)
	{
		int64_t		nc = C - c0 < BN_BLOCK ? C - c0 : BN_BLOCK;

		for (int64_t j = 0; j < nc; j++)
			acc[j] = 0.0;
		for (int64_t r = 0; r < R; r++)
		{
			const float *xr = x + r * C + c0;

			for (int64_t j = 0; j < nc; j++)
				acc[j] += xr[j];
		}
		for (int64_t j = 0; j < nc; j++)
		{
			mu[j] = acc[j] / (double) R;
			acc[j] = 0.0;
		}
		for (int64_t r = 0; r < R; r++)
		{
			const float *xr = x + r * C + c0;

			for (int64_t j = 0; j < nc; j++)
			{
				double		d = xr[j] - mu[j];

				acc[j] += d * d;
			}
		}
		for (int64_t j = 0; j < nc; j++)
		{
			int64_t		c = c0 + j;
			double		var = acc[j] / (double) R;

			mean[c] = m[j] = (float) mu[j];
			invstd[c] = s[j] = (float) (1.0 / sqrt(var + epsilon));
			moving_mean[c] = (float) (moving_mean[c] * momentum + mu[j] * (1.0 - momentum));
			moving_var[c] = (float) (moving_var[c] * momentum +
									var * mv_scale * (1.0 - momentum));
			/* times 1 and no add are exact: gamma 1, beta 0 */
			g[j] = gamma != NULL ? gamma[c] : 1.0f;
			b[j] = beta != NULL ? beta[c] : 0.0f;
		}
		if (beta != NULL && relu)
			bn_apply(y, x, m, s, g, b, R, C, c0, nc, true, true);
		else if (beta != NULL)
			bn_apply(y, x, m, s, g, b, R, C, c0, nc, true, false);
		else if (relu)
			bn_apply(y, x, m, s, g, b, R, C, c0, nc, false, true);
		else
			bn_apply(y, x, m, s, g, b, R, C, c0, nc, false, false);
	}
}

/*
 * Inference: y (R,C) = act(gamma * (x - moving_mean) / sqrt(moving_var +
 * epsilon) + beta), all per channel (C); gamma, beta may be NULL.  y may
 * equal x.
 */
DL_VEC_CLONES_NO_FMA void
dl_batchnorm_forward_infer(float *y, const float *x, const float *gamma,
						   const float *beta, const float *moving_mean,
						   const float *moving_var, int64_t R, int64_t C,
						   double epsilon, DlActivation act)
{
	float		scale[BN_BLOCK];
	float		shift[BN_BLOCK];

	for (int64_t c0 = 0; c0 < C; c0 += BN_BLOCK)
	{
		int64_t		nc = C - c0 < BN_BLOCK ? C - c0 : BN_BLOCK;

		/* y = x * scale + shift, scale = gamma * invstd */
		for (int64_t j = 0; j < nc; j++)
		{
			int64_t		c = c0 + j;
			double		s = 1.0 / sqrt((double) moving_var[c] + epsilon);

			if (gamma != NULL)
				s *= gamma[c];
			scale[j] = (float) s;
			shift[j] = (float) ((beta != NULL ? (double) beta[c] : 0.0) -
								(double) moving_mean[c] * s);
		}
		for (int64_t r = 0; r < R; r++)
		{
			const float *xr = x + r * C + c0;
			float	   *yr = y + r * C + c0;

			if (act == DL_ACT_RELU)
				for (int64_t j = 0; j < nc; j++)
				{
					float		v = xr[j] * scale[j] + shift[j];

					yr[j] = v > 0.0f ? v : 0.0f;
				}
			else
				for (int64_t j = 0; j < nc; j++)
					yr[j] = xr[j] * scale[j] + shift[j];
		}
	}
}

/*
 * dy of row r, channels [c0, c0 + nc), into d (nc): as is, or through the
 * fused ReLU's backward (y_relu, the ReLU's output: y > 0 ? dy : 0).
 */
static inline __attribute__((always_inline)) void
bn_row_dy(float *d, const float *dy, const float *y_relu, int64_t r, int64_t C, int64_t c0,
		  int64_t nc)
{
	const float *dyr = dy + r * C + c0;

	if (y_relu == NULL)
		for (int64_t j = 0; j < nc; j++)
			d[j] = dyr[j];
	else
	{
		const float *yr = y_relu + r * C + c0;

		for (int64_t j = 0; j < nc; j++)
			d[j] = yr[j] > 0.0f ? dyr[j] : 0.0f;
	}
}

/*
 * From dy (R,C), the training forward's input x (R,C), mean and invstd
 * (C): xhat = (x - mean) * invstd as the forward pass computed it;
 * dgamma (C) += sum(dy * xhat), dbeta (C) += sum(dy) (each skipped when
 * NULL), dx (R,C) overwritten (skipped when NULL) with
 *	 gamma * invstd / R * (R * dy - sum(dy) - xhat * sum(dy * xhat)).
 * gamma may be NULL (scale=false: 1).  y_relu not NULL: the forward had a
 * fused ReLU, whose output it is, and dy is the gradient of that output
 * (the ReLU's backward is applied first).  dx may equal dy.
 */
DL_VEC_CLONES_NO_FMA void
dl_batchnorm_backward(float *dx, float *dgamma, float *dbeta, const float *dy,
					  const float *y_relu, const float *x, const float *mean,
					  const float *invstd, const float *gamma, int64_t R, int64_t C)
{
	double		sdy[BN_BLOCK];
	double		sdyh[BN_BLOCK];
	float		d[BN_BLOCK];	/* one row of dy */
	float		m[BN_BLOCK];	/* mean */
	float		s[BN_BLOCK];	/* invstd */
	float		k1[BN_BLOCK];	/* gamma * invstd */
	float		mdy[BN_BLOCK];	/* mean of dy */
	float		mdyh[BN_BLOCK]; /* mean of dy * xhat */

	if (R <= 0)
		return;
	for (int64_t c0 = 0; c0 < C; c0 += BN_BLOCK)
	{
		int64_t		nc = C - c0 < BN_BLOCK ? C - c0 : BN_BLOCK;

		for (int64_t j = 0; j < nc; j++)
		{
			sdy[j] = 0.0;
			sdyh[j] = 0.0;
			m[j] = mean[c0 + j];
			s[j] = invstd[c0 + j];
		}
		for (int64_t r = 0; r < R; r++)
		{
			const float *xr = x + r * C + c0;

			bn_row_dy(d, dy, y_relu, r, C, c0, nc);
			for (int64_t j = 0; j < nc; j++)
			{
				float		h = (xr[j] - m[j]) * s[j];

				sdy[j] += d[j];
				sdyh[j] += (double) d[j] * h;
			}
		}
		for (int64_t j = 0; j < nc; j++)
		{
			int64_t		c = c0 + j;

			if (dgamma != NULL)
				dgamma[c] += (float) sdyh[j];
			if (dbeta != NULL)
				dbeta[c] += (float) sdy[j];
			k1[j] = (gamma != NULL ? gamma[c] : 1.0f) * s[j];
			mdy[j] = (float) (sdy[j] / (double) R);
			mdyh[j] = (float) (sdyh[j] / (double) R);
		}
		if (dx == NULL)
			continue;
		for (int64_t r = 0; r < R; r++)
		{
			const float *xr = x + r * C + c0;
			float	   *dxr = dx + r * C + c0;

			bn_row_dy(d, dy, y_relu, r, C, c0, nc);
			for (int64_t j = 0; j < nc; j++)
			{
				float		h = (xr[j] - m[j]) * s[j];

				dxr[j] = k1[j] * (d[j] - mdy[j] - h * mdyh[j]);
			}
		}
	}
}
