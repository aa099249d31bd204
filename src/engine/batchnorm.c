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
 * IDENTIFICATION
 *	  src/engine/batchnorm.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "dl_kernels.h"

#define BN_BLOCK 64				/* channels per pass of the reductions */

/*
 * Training mode.  From x (R,C): mean (C) and invstd (C) =
 * 1/sqrt(biased var + epsilon); xhat (R,C) = (x - mean) * invstd; y (R,C)
 * = gamma * xhat + beta (gamma, beta (C) may be NULL: 1 and 0).
 * moving_mean, moving_var (C) become moving * momentum + batch * (1 -
 * momentum), the batch variance being the biased one, or, when
 * unbiased_moving_var (TensorFlow's fused batch norm, used after rank-3
 * inputs), the unbiased one var * R / (R - 1) (var itself when R = 1).
 * The normalisation always uses the biased variance.  R >= 1.  y may
 * equal x.
 */
void
dl_batchnorm_forward_train(float *y, float *xhat, float *mean, float *invstd,
						   float *moving_mean, float *moving_var, const float *x,
						   const float *gamma, const float *beta, int64_t R,
						   int64_t C, double momentum, double epsilon,
						   bool unbiased_moving_var)
{
	double		acc[BN_BLOCK];
	double		mv_scale = (unbiased_moving_var && R > 1) ?
		(double) R / (double) (R - 1) : 1.0;
	double		mu[BN_BLOCK];

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

			mean[c] = (float) mu[j];
			invstd[c] = (float) (1.0 / sqrt(var + epsilon));
			moving_mean[c] = (float) (moving_mean[c] * momentum + mu[j] * (1.0 - momentum));
			moving_var[c] = (float) (moving_var[c] * momentum +
									var * mv_scale * (1.0 - momentum));
		}
	}
	for (int64_t r = 0; r < R; r++)
	{
		const float *xr = x + r * C;
		float	   *hr = xhat + r * C;
		float	   *yr = y + r * C;

		for (int64_t c = 0; c < C; c++)
		{
			float		h = (xr[c] - mean[c]) * invstd[c];
			float		v = h;

			if (gamma != NULL)
				v *= gamma[c];
			if (beta != NULL)
				v += beta[c];
			hr[c] = h;
			yr[c] = v;
		}
	}
}

/*
 * Inference: y (R,C) = gamma * (x - moving_mean) / sqrt(moving_var +
 * epsilon) + beta, all per channel (C); gamma, beta may be NULL.  y may
 * equal x.
 */
void
dl_batchnorm_forward_infer(float *y, const float *x, const float *gamma,
						   const float *beta, const float *moving_mean,
						   const float *moving_var, int64_t R, int64_t C,
						   double epsilon)
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

			for (int64_t j = 0; j < nc; j++)
				yr[j] = xr[j] * scale[j] + shift[j];
		}
	}
}

/*
 * From dy (R,C) and the training-mode forward's xhat (R,C) and invstd
 * (C): dgamma (C) += sum(dy * xhat), dbeta (C) += sum(dy) (each skipped
 * when NULL), dx (R,C) overwritten (skipped when NULL) with
 *	 gamma * invstd / R * (R * dy - sum(dy) - xhat * sum(dy * xhat)).
 * gamma may be NULL (scale=false: 1).  dx may equal dy.
 */
void
dl_batchnorm_backward(float *dx, float *dgamma, float *dbeta, const float *dy,
					  const float *xhat, const float *invstd, const float *gamma,
					  int64_t R, int64_t C)
{
	double		sdy[BN_BLOCK];
	double		sdyh[BN_BLOCK];
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
		}
		for (int64_t r = 0; r < R; r++)
		{
			const float *dyr = dy + r * C + c0;
			const float *hr = xhat + r * C + c0;

			for (int64_t j = 0; j < nc; j++)
			{
				sdy[j] += dyr[j];
				sdyh[j] += (double) dyr[j] * hr[j];
			}
		}
		for (int64_t j = 0; j < nc; j++)
		{
			int64_t		c = c0 + j;

			if (dgamma != NULL)
				dgamma[c] += (float) sdyh[j];
			if (dbeta != NULL)
				dbeta[c] += (float) sdy[j];
			k1[j] = (gamma != NULL ? gamma[c] : 1.0f) * invstd[c];
			mdy[j] = (float) (sdy[j] / (double) R);
			mdyh[j] = (float) (sdyh[j] / (double) R);
		}
		if (dx == NULL)
			continue;
		for (int64_t r = 0; r < R; r++)
		{
			const float *dyr = dy + r * C + c0;
			const float *hr = xhat + r * C + c0;
			float	   *dxr = dx + r * C + c0;

			for (int64_t j = 0; j < nc; j++)
				dxr[j] = k1[j] * (dyr[j] - mdy[j] - hr[j] * mdyh[j]);
		}
	}
}
