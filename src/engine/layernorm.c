/*-------------------------------------------------------------------------
 *
 * layernorm.c
 *	  Keras LayerNormalization over the last axis, forward and backward.
 *
 * Each row of C values (every position of every sample) is normalised
 * by its own mean and biased variance, in training and inference alike:
 *	 xhat = (x - mean) / sqrt(var + epsilon),  y = gamma * xhat + beta
 * (TF.js and Keras agree here, epsilon 1e-3 by default; PyTorch's
 * LayerNorm defaults to 1e-5).  Sums are in double.  The backward pass
 * recomputes xhat from x and the saved mean and invstd:
 *	 dxhat = dy * gamma
 *	 dx    = invstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
 *	 dgamma += sum over rows of dy * xhat,  dbeta += sum of dy
 *
 * IDENTIFICATION
 *	  src/engine/layernorm.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "dl_kernels.h"

void
dl_layernorm_forward(float *y, float *mean, float *invstd, const float *x,
					 const float *gamma, const float *beta, int64_t R, int64_t C,
					 double epsilon)
{
	for (int64_t r = 0; r < R; r++)
	{
		const float *xr = x + r * C;
		float	   *yr = y + r * C;
		double		sum = 0.0,
					sq = 0.0,
					mu,
					is;

		for (int64_t c = 0; c < C; c++)
			sum += xr[c];
		mu = sum / (double) C;
		for (int64_t c = 0; c < C; c++)
			sq += ((double) xr[c] - mu) * ((double) xr[c] - mu);
		is = 1.0 / sqrt(sq / (double) C + epsilon);
		for (int64_t c = 0; c < C; c++)
		{
			double		v = ((double) xr[c] - mu) * is;

			if (gamma != NULL)
				v *= gamma[c];
			if (beta != NULL)
				v += beta[c];
			yr[c] = (float) v;
		}
		if (mean != NULL)
		{
			mean[r] = (float) mu;
			invstd[r] = (float) is;
		}
	}
}

void
dl_layernorm_backward(float *dx, float *dgamma, float *dbeta, const float *dy,
					  const float *x, const float *mean, const float *invstd,
					  const float *gamma, int64_t R, int64_t C)
{
	for (int64_t r = 0; r < R; r++)
	{
		const float *xr = x + r * C;
		const float *dr = dy + r * C;
		double		mu = mean[r],
					is = invstd[r];
		double		m1 = 0.0,	/* mean of dxhat */
					m2 = 0.0;	/* mean of dxhat * xhat */

		for (int64_t c = 0; c < C; c++)
		{
			double		xh = ((double) xr[c] - mu) * is;
			double		d = gamma != NULL ? (double) dr[c] * gamma[c] : dr[c];

			m1 += d;
			m2 += d * xh;
			if (dgamma != NULL)
				dgamma[c] += (float) (dr[c] * xh);
			if (dbeta != NULL)
				dbeta[c] += dr[c];
		}
		if (dx == NULL)
			continue;
		m1 /= (double) C;
		m2 /= (double) C;
		for (int64_t c = 0; c < C; c++)
		{
			double		xh = ((double) xr[c] - mu) * is;
			double		d = gamma != NULL ? (double) dr[c] * gamma[c] : dr[c];

			dx[r * C + c] = (float) (is * (d - m1 - xh * m2));
		}
	}
}
