/*-------------------------------------------------------------------------
 *
 * spatial.c
 *	  ZeroPadding2D, Cropping2D and UpSampling2D (NHWC).
 *
 * Padding and cropping move whole rows of W*C contiguous floats (a
 * pixel's C channels are adjacent, so a row of pixels is one run): the
 * forward pass of one is the backward pass of the other.  Up-sampling
 * (nearest neighbour, Keras' default and TensorFlow.js' only one)
 * repeats each pixel over an SH x SW block; its backward pass sums dy
 * over the block in row-major order.
 *
 * IDENTIFICATION
 *	  src/engine/spatial.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "dl_kernels.h"

/* big (B, H + m0 + m1, W + m2 + m3, C) = zeros framing small (B,H,W,C). */
static void
window_insert(float *big, const float *small, int64_t B, int64_t H, int64_t W, int64_t C,
			  const int m[4])
{
	int64_t		BH = H + m[0] + m[1];
	int64_t		BW = W + m[2] + m[3];

	memset(big, 0, (size_t) (B * BH * BW * C) * sizeof(float));
	for (int64_t b = 0; b < B; b++)
		for (int64_t h = 0; h < H; h++)
			memcpy(big + ((b * BH + h + m[0]) * BW + m[2]) * C, small + (b * H + h) * W * C,
				   (size_t) (W * C) * sizeof(float));
}

/* small (B,H,W,C) = the inner window of big (B, H + m0 + m1, W + m2 + m3, C). */
static void
window_extract(float *small, const float *big, int64_t B, int64_t H, int64_t W, int64_t C,
			   const int m[4])
{
	int64_t		BH = H + m[0] + m[1];
	int64_t		BW = W + m[2] + m[3];

	for (int64_t b = 0; b < B; b++)
		for (int64_t h = 0; h < H; h++)
			memcpy(small + (b * H + h) * W * C, big + ((b * BH + h + m[0]) * BW + m[2]) * C,
				   (size_t) (W * C) * sizeof(float));
}

void
dl_zeropad2d_forward(float *y, const float *x, int64_t B, int64_t H, int64_t W, int64_t C,
					 const int m[4])
{
	window_insert(y, x, B, H, W, C, m);
}

void
dl_zeropad2d_backward(float *dx, const float *dy, int64_t B, int64_t H, int64_t W, int64_t C,
					  const int m[4])
{
	window_extract(dx, dy, B, H, W, C, m);
}

/* Cropping2D: H, W are the input's; the output is H - m0 - m1 by W - m2 - m3. */
void
dl_crop2d_forward(float *y, const float *x, int64_t B, int64_t H, int64_t W, int64_t C,
				  const int m[4])
{
	window_extract(y, x, B, H - m[0] - m[1], W - m[2] - m[3], C, m);
}

void
dl_crop2d_backward(float *dx, const float *dy, int64_t B, int64_t H, int64_t W, int64_t C,
				   const int m[4])
{
	window_insert(dx, dy, B, H - m[0] - m[1], W - m[2] - m[3], C, m);
}

void
dl_upsample2d_forward(float *y, const float *x, int64_t B, int64_t H, int64_t W, int64_t C,
					  int SH, int SW)
{
	int64_t		OW = W * SW;

	for (int64_t b = 0; b < B; b++)
		for (int64_t h = 0; h < H; h++)
		{
			/* one output row, then its copies below */
			float	   *row = y + (b * H * SH + h * SH) * OW * C;
			const float *xr = x + (b * H + h) * W * C;

			for (int64_t w = 0; w < W; w++)
				for (int j = 0; j < SW; j++)
					memcpy(row + (w * SW + j) * C, xr + w * C, (size_t) C * sizeof(float));
			for (int i = 1; i < SH; i++)
				memcpy(row + i * OW * C, row, (size_t) (OW * C) * sizeof(float));
		}
}

void
dl_upsample2d_backward(float *dx, const float *dy, int64_t B, int64_t H, int64_t W, int64_t C,
					   int SH, int SW)
{
	int64_t		OW = W * SW;

	memset(dx, 0, (size_t) (B * H * W * C) * sizeof(float));
	for (int64_t b = 0; b < B; b++)
		for (int64_t h = 0; h < H; h++)
		{
			float	   *dr = dx + (b * H + h) * W * C;

			for (int i = 0; i < SH; i++)
			{
				const float *row = dy + ((b * H + h) * SH + i) * OW * C;

				for (int64_t w = 0; w < W; w++)
					for (int j = 0; j < SW; j++)
					{
						const float *s = row + (w * SW + j) * C;

						for (int64_t c = 0; c < C; c++)
							dr[w * C + c] += s[c];
					}
			}
		}
}
