/*-------------------------------------------------------------------------
 *
 * dropout.c
 *	  Inverted dropout (Keras Dropout in training mode).
 *
 * One dl_rng_uniform draw per element, in element order, so a seed and a
 * batch shape fully determine the mask.  Kept units are scaled by
 * 1/(1-rate) at training time; inference is the identity and never calls
 * these kernels.
 *
 * IDENTIFICATION
 *	  src/engine/dropout.c
 *
 *-------------------------------------------------------------------------
 */
#include "dl_kernels.h"

/*
 * mask (n) = 0 with probability rate, else 1/(1-rate); y (n) = x (n) *
 * mask.  y may equal x.  rate is in [0, 1) (Keras checks); rate >= 1
 * drops everything.  Draws exactly n values from rng.
 */
void
dl_dropout_forward(float *y, float *mask, const float *x, int64_t n, double rate,
				   DlRng *rng)
{
	float		keep = rate < 1.0 ? (float) (1.0 / (1.0 - rate)) : 0.0f;

	for (int64_t i = 0; i < n; i++)
	{
		float		m = dl_rng_uniform(rng) < rate ? 0.0f : keep;

		mask[i] = m;
		y[i] = x[i] * m;
	}
}

/* dx (n) = dy (n) * mask (n); dx may equal dy. */
void
dl_dropout_backward(float *dx, const float *dy, const float *mask, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		dx[i] = dy[i] * mask[i];
}
