/*-------------------------------------------------------------------------
 *
 * depthwise.c
 *	  Keras DepthwiseConv2D (NHWC), forward and backward, direct loops.
 *
 * Each input channel c is convolved with its own M filters (the depth
 * multiplier): output channel c*M + m of pixel (oh, ow) is
 *	 sum over (kh, kw) of x[oh*SH - pad_top + kh*DH, ow*SW - pad_left + kw*DW, c]
 *	                      * K[kh, kw, c, m]   (+ b[c*M + m])
 * with the padding and output size of Conv2D (dl_conv_geom_init_dilated).
 * The loops run over output pixels, then kernel taps inside the input,
 * then the C*M channels, contiguous in x's pixel, K's tap and y's pixel,
 * so the innermost loop vectorizes.  A SeparableConv2D is this followed
 * by a pointwise (1x1) convolution, a matrix product (model.c).
 *
 * IDENTIFICATION
 *	  src/engine/depthwise.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "dl_kernels.h"

/* The kernel taps of output row oh (or column) inside the input: [lo, hi). */
static void
tap_range(int64_t *lo, int64_t *hi, int64_t o, int64_t S, int64_t pad, int64_t D, int64_t K,
		  int64_t n)
{
	int64_t		start = o * S - pad;

	*lo = 0;
	while (*lo < K && start + *lo * D < 0)
		(*lo)++;
	*hi = K;
	while (*hi > *lo && start + (*hi - 1) * D >= n)
		(*hi)--;
}

void
dl_depthwise_forward(float *y, const float *x, const float *K, const float *b, int64_t M,
					 const DlConvGeom *g)
{
	int64_t		C = g->C;
	int64_t		CM = C * M;

	for (int64_t n = 0; n < g->B; n++)
		for (int64_t oh = 0; oh < g->OH; oh++)
		{
			int64_t		kh0,
						kh1;

			tap_range(&kh0, &kh1, oh, g->SH, g->pad_top, g->DH, g->KH, g->H);
			for (int64_t ow = 0; ow < g->OW; ow++)
			{
				float	   *yp = y + ((n * g->OH + oh) * g->OW + ow) * CM;
				int64_t		kw0,
							kw1;

				tap_range(&kw0, &kw1, ow, g->SW, g->pad_left, g->DW, g->KW, g->W);
				if (b != NULL)
					memcpy(yp, b, (size_t) CM * sizeof(float));
				else
					memset(yp, 0, (size_t) CM * sizeof(float));
				for (int64_t kh = kh0; kh < kh1; kh++)
					for (int64_t kw = kw0; kw < kw1; kw++)
					{
						int64_t		ih = oh * g->SH - g->pad_top + kh * g->DH;
						int64_t		iw = ow * g->SW - g->pad_left + kw * g->DW;
						const float *xp = x + ((n * g->H + ih) * g->W + iw) * C;
						const float *kp = K + (kh * g->KW + kw) * CM;

						for (int64_t c = 0; c < C; c++)
							for (int64_t m = 0; m < M; m++)
								yp[c * M + m] += xp[c] * kp[c * M + m];
					}
			}
		}
}

void
dl_depthwise_backward(float *dx, float *dK, float *db, const float *dy, const float *x,
					  const float *K, int64_t M, const DlConvGeom *g)
{
	int64_t		C = g->C;
	int64_t		CM = C * M;

	if (dx != NULL)
		memset(dx, 0, (size_t) (g->B * g->H * g->W * C) * sizeof(float));
	for (int64_t n = 0; n < g->B; n++)
		for (int64_t oh = 0; oh < g->OH; oh++)
		{
			int64_t		kh0,
						kh1;

			tap_range(&kh0, &kh1, oh, g->SH, g->pad_top, g->DH, g->KH, g->H);
			for (int64_t ow = 0; ow < g->OW; ow++)
			{
				const float *dp = dy + ((n * g->OH + oh) * g->OW + ow) * CM;
				int64_t		kw0,
							kw1;

				tap_range(&kw0, &kw1, ow, g->SW, g->pad_left, g->DW, g->KW, g->W);
				if (db != NULL)
					for (int64_t j = 0; j < CM; j++)
						db[j] += dp[j];
				for (int64_t kh = kh0; kh < kh1; kh++)
					for (int64_t kw = kw0; kw < kw1; kw++)
					{
						int64_t		ih = oh * g->SH - g->pad_top + kh * g->DH;
						int64_t		iw = ow * g->SW - g->pad_left + kw * g->DW;
						int64_t		xo = ((n * g->H + ih) * g->W + iw) * C;
						float	   *dkp = dK + (kh * g->KW + kw) * CM;
						const float *kp = K + (kh * g->KW + kw) * CM;

						for (int64_t c = 0; c < C; c++)
							for (int64_t m = 0; m < M; m++)
								dkp[c * M + m] += x[xo + c] * dp[c * M + m];
						if (dx == NULL)
							continue;
						for (int64_t c = 0; c < C; c++)
							for (int64_t m = 0; m < M; m++)
								dx[xo + c] += kp[c * M + m] * dp[c * M + m];
					}
			}
		}
}
