/*-------------------------------------------------------------------------
 *
 * conv2d.c
 *	  2-D convolution (Keras Conv2D, NHWC): blocked im2col + sgemm.
 *
 * The batch is unrolled a block of samples at a time into a column matrix
 *	 col (nb*OH*OW, KH*KW*C), row = output pixel, columns in (kh, kw, c)
 * order, which is exactly the row order of the kernel K (KH,KW,C,OC)
 * read as a (KH*KW*C, OC) matrix.  Then, per block,
 *	 forward:  y (nb*OH*OW, OC) = col @ K, then + b and the activation in
 *	           one pass while the block of y is still in cache
 *	 backward: dK += col^T @ dy;  dcol = dy @ K^T;  dx = col2im(dcol)
 * The block size nb keeps col near CONV_BLOCK_FLOATS (about half of a
 * core's L2), so the unrolled patches are written and read by sgemm
 * without going out to memory; unrolling the whole batch at once made
 * the column matrix of the bench CNN's second convolution 18 MB.
 * Backward recomputes col (other layers may have reused the workspace
 * since the forward pass) and then reuses the same buffer for dcol, so
 * one col-sized workspace serves both directions.  In NHWC the kw-run of
 * a kernel row is contiguous in memory, so im2col and col2im move whole
 * (kw range)*C blocks; when such a run is short (a 1-channel input) the
 * unrolling goes column by column instead, with no per-run memcpy call.
 * A 1x1, stride-1, unpadded convolution needs no unrolling: x itself is
 * the column matrix.  A dilated convolution (Keras dilation_rate) unrolls
 * tap by tap: its kernel taps are DH rows and DW columns apart.
 *
 * Determinism: blocks are visited in order and dK accumulates block by
 * block, so the result depends only on the inputs and the geometry.
 *
 * IDENTIFICATION
 *	  src/engine/conv2d.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "madlib_dl/dl_alloc.h"
#include "dl_kernels.h"

/*
 * Output size and leading padding of one spatial axis, Keras/TF rule.
 * n = input size, k = kernel (window) size, s = stride (all >= 1).
 */
static void
conv_axis(int64_t *out, int64_t *pad_before, int64_t n, int64_t k, int64_t s,
		  DlPadding padding)
{
	if (padding == DL_PADDING_SAME)
	{
		int64_t		o = (n + s - 1) / s;
		int64_t		pad_total = (o - 1) * s + k - n;

		if (pad_total < 0)
			pad_total = 0;
		*out = o;
		*pad_before = pad_total / 2;
	}
	else
	{
		*out = n >= k ? (n - k) / s + 1 : 0;
		*pad_before = 0;
	}
}

/*
 * Fill *g for a batch of B inputs (H,W,C) and OC filters of KH x KW with
 * strides SH, SW and dilation DH, DW.  Kernel sizes, strides and
 * dilations must be >= 1 (the spec checks); a valid convolution with a
 * kernel larger than the input gets OH or OW = 0.
 */
void
dl_conv_geom_init_dilated(DlConvGeom *g, int64_t B, int64_t H, int64_t W, int64_t C,
						  int64_t OC, int KH, int KW, int SH, int SW, int DH, int DW,
						  DlPadding padding)
{
	g->B = B;
	g->H = H;
	g->W = W;
	g->C = C;
	g->OC = OC;
	g->KH = KH;
	g->KW = KW;
	g->SH = SH;
	g->SW = SW;
	g->DH = DH;
	g->DW = DW;
	conv_axis(&g->OH, &g->pad_top, H, (int64_t) (KH - 1) * DH + 1, SH, padding);
	conv_axis(&g->OW, &g->pad_left, W, (int64_t) (KW - 1) * DW + 1, SW, padding);
}

void
dl_conv_geom_init(DlConvGeom *g, int64_t B, int64_t H, int64_t W, int64_t C,
				  int64_t OC, int KH, int KW, int SH, int SW, DlPadding padding)
{
	dl_conv_geom_init_dilated(g, B, H, W, C, OC, KH, KW, SH, SW, 1, 1, padding);
}

static inline bool
conv_is_dilated(const DlConvGeom *g)
{
	return g->DH != 1 || g->DW != 1;
}

#define COLSUM_BLOCK 256		/* columns per pass of conv_colsum_add */

/* db (N) += column sums of dy (M,N), accumulated in local registers. */
static void
conv_colsum_add(float *db, const float *dy, int64_t M, int64_t N)
{
	float		acc[COLSUM_BLOCK];

	for (int64_t n0 = 0; n0 < N; n0 += COLSUM_BLOCK)
	{
		int64_t		nn = N - n0 < COLSUM_BLOCK ? N - n0 : COLSUM_BLOCK;

		for (int64_t j = 0; j < nn; j++)
			acc[j] = 0.0f;
		for (int64_t r = 0; r < M; r++)
		{
			const float *row = dy + r * N + n0;

			for (int64_t j = 0; j < nn; j++)
				acc[j] += row[j];
		}
		for (int64_t j = 0; j < nn; j++)
			db[n0 + j] += acc[j];
	}
}

/* True when x (B,H,W,C) already is the column matrix. */
static inline int
conv_is_pointwise(const DlConvGeom *g)
{
	return g->KH == 1 && g->KW == 1 && g->SH == 1 && g->SW == 1 &&
		g->pad_top == 0 && g->pad_left == 0 && g->OH == g->H && g->OW == g->W;
}

/*
 * Target size, in floats, of one block of the column matrix (512 KiB).
 * Overridable at build time (tests: -DCONV_BLOCK_FLOATS=1 gives one
 * sample per block).
 */
#ifndef CONV_BLOCK_FLOATS
#define CONV_BLOCK_FLOATS ((int64_t) 1 << 17)
#endif

/* Floats of col per sample, OH*OW*KH*KW*C, saturating at INT64_MAX. */
static int64_t
conv_col_per_sample(const DlConvGeom *g)
{
	int64_t		dims[5] = {g->OH, g->OW, g->KH, g->KW, g->C};
	int64_t		n = 1;

	for (int i = 0; i < 5; i++)
	{
		int64_t		d = dims[i] > 0 ? dims[i] : 0;

		if (d != 0 && n > INT64_MAX / d)
			return INT64_MAX;
		n *= d;
	}
	return n;
}

/* Samples per im2col block: at least 1, at most B. */
static int64_t
conv_block_samples(const DlConvGeom *g)
{
	int64_t		per = conv_col_per_sample(g);
	int64_t		nb = per > 0 ? CONV_BLOCK_FLOATS / per : g->B;

	if (nb > g->B)
		nb = g->B;
	return nb < 1 ? 1 : nb;
}

/*
 * Floats of workspace for dl_conv2d_forward and dl_conv2d_backward: one
 * block of the col matrix, nb*OH*OW*KH*KW*C, computed in double so that
 * no geometry wraps (exact below 2^53).  conv_block_samples gives the
 * same nb: with more than CONV_BLOCK_FLOATS per sample both give 1.
 */
double
dl_conv2d_workspace_floats_d(const DlConvGeom *g)
{
	double		dims[5] = {(double) g->OH, (double) g->OW, (double) g->KH, (double) g->KW,
	(double) g->C};
	double		per = 1.0;
	double		nb;

	for (int i = 0; i < 5; i++)
		per *= dims[i] > 0 ? dims[i] : 0.0;
	nb = per > 0 ? floor((double) CONV_BLOCK_FLOATS / per) : (double) g->B;
	if (nb > (double) g->B)
		nb = (double) g->B;
	if (nb < 1.0)
		nb = 1.0;
	return per * nb;
}

/* The same as a size_t, saturating to SIZE_MAX so that a checked allocation fails cleanly. */
size_t
dl_conv2d_workspace_floats(const DlConvGeom *g)
{
	double		n = dl_conv2d_workspace_floats_d(g);

	return n >= (double) SIZE_MAX ? SIZE_MAX : (size_t) n;
}

/*
 * col (B*OH*OW, KH*KW*C) = unrolled patches of x (B,H,W,C), for short
 * kw-runs (KW*C < 16): one (kh, kw, c) column at a time, every output
 * pixel of a row in one strided loop; padded cells are zero.
 */
static void
conv_im2col_narrow(float *col, const float *x, const DlConvGeom *g)
{
	const int64_t C = g->C;
	const int64_t rowlen = g->KH * g->KW * C;
	const int64_t OW = g->OW;

	for (int64_t b = 0; b < g->B; b++)
	{
		const float *xb = x + b * g->H * g->W * C;

		for (int64_t oh = 0; oh < g->OH; oh++)
		{
			float	   *rowbase = col + (b * g->OH + oh) * OW * rowlen;

			for (int64_t kh = 0; kh < g->KH; kh++)
			{
				int64_t		ih = oh * g->SH - g->pad_top + kh;

				for (int64_t kw = 0; kw < g->KW; kw++)
				{
					/* output columns whose input column is in bounds */
					int64_t		off = kw - g->pad_left;
					int64_t		ow_lo = off >= 0 ? 0 : (-off + g->SW - 1) / g->SW;
					int64_t		ow_hi = g->W - off > 0 ? (g->W - off + g->SW - 1) / g->SW : 0;

					if (ow_hi > OW)
						ow_hi = OW;
					if (ow_lo > ow_hi || ih < 0 || ih >= g->H)
						ow_lo = ow_hi = OW;
					for (int64_t c = 0; c < C; c++)
					{
						float	   *d = rowbase + (kh * g->KW + kw) * C + c;
						int64_t		ow;

						for (ow = 0; ow < ow_lo; ow++)
							d[ow * rowlen] = 0.0f;
						if (ow < ow_hi)
						{
							/* input column of ow_lo, in bounds */
							const float *s = xb + (ih * g->W + off + ow_lo * g->SW) * C + c;

							for (; ow < ow_hi; ow++)
								d[ow * rowlen] = s[(ow - ow_lo) * g->SW * C];
						}
						for (; ow < OW; ow++)
							d[ow * rowlen] = 0.0f;
					}
				}
			}
		}
	}
}

/*
 * col (B*OH*OW, KH*KW*C) = unrolled patches of x (B,H,W,C) of a dilated
 * convolution: the taps of a kernel row are DW columns apart, so each
 * moves its own run of C channels; padded cells are zero.
 */
static void
conv_im2col_dilated(float *col, const float *x, const DlConvGeom *g)
{
	const int64_t C = g->C;
	const int64_t rowlen = g->KH * g->KW * C;

	for (int64_t b = 0; b < g->B; b++)
	{
		const float *xb = x + b * g->H * g->W * C;

		for (int64_t oh = 0; oh < g->OH; oh++)
			for (int64_t ow = 0; ow < g->OW; ow++)
			{
				float	   *dst = col + ((b * g->OH + oh) * g->OW + ow) * rowlen;

				for (int64_t kh = 0; kh < g->KH; kh++)
				{
					int64_t		ih = oh * g->SH - g->pad_top + kh * g->DH;

					for (int64_t kw = 0; kw < g->KW; kw++, dst += C)
					{
						int64_t		iw = ow * g->SW - g->pad_left + kw * g->DW;

						if (ih < 0 || ih >= g->H || iw < 0 || iw >= g->W)
							memset(dst, 0, (size_t) C * sizeof(float));
						else
							memcpy(dst, xb + (ih * g->W + iw) * C, (size_t) C * sizeof(float));
					}
				}
			}
	}
}

/*
 * col (B*OH*OW, KH*KW*C) = unrolled patches of x (B,H,W,C); padded cells
 * are zero.
 */
static void
conv_im2col(float *col, const float *x, const DlConvGeom *g)
{
	const int64_t C = g->C;
	const int64_t KW = g->KW;
	const int64_t rowlen = g->KH * KW * C;

	if (conv_is_dilated(g))
	{
		conv_im2col_dilated(col, x, g);
		return;
	}
	if (KW * C < 16)
	{
		conv_im2col_narrow(col, x, g);
		return;
	}
	for (int64_t b = 0; b < g->B; b++)
	{
		const float *xb = x + b * g->H * g->W * C;

		for (int64_t oh = 0; oh < g->OH; oh++)
		{
			for (int64_t ow = 0; ow < g->OW; ow++)
			{
				float	   *dst = col + ((b * g->OH + oh) * g->OW + ow) * rowlen;
				int64_t		iw0 = ow * g->SW - g->pad_left;
				int64_t		kw_lo = iw0 < 0 ? -iw0 : 0;
				int64_t		kw_hi = g->W - iw0 < KW ? g->W - iw0 : KW;

				if (kw_hi < kw_lo)
					kw_hi = kw_lo;
				for (int64_t kh = 0; kh < g->KH; kh++, dst += KW * C)
				{
					int64_t		ih = oh * g->SH - g->pad_top + kh;

					if (ih < 0 || ih >= g->H)
					{
						memset(dst, 0, (size_t) (KW * C) * sizeof(float));
						continue;
					}
					if (kw_lo > 0)
						memset(dst, 0, (size_t) (kw_lo * C) * sizeof(float));
					if (kw_hi > kw_lo)
						memcpy(dst + kw_lo * C, xb + (ih * g->W + iw0 + kw_lo) * C,
							   (size_t) ((kw_hi - kw_lo) * C) * sizeof(float));
					if (kw_hi < KW)
						memset(dst + kw_hi * C, 0, (size_t) ((KW - kw_hi) * C) * sizeof(float));
				}
			}
		}
	}
}

/* conv_col2im of a dilated convolution: tap by tap, as conv_im2col_dilated. */
static void
conv_col2im_dilated(float *dx, const float *dcol, const DlConvGeom *g)
{
	const int64_t C = g->C;
	const int64_t rowlen = g->KH * g->KW * C;

	for (int64_t b = 0; b < g->B; b++)
	{
		float	   *dxb = dx + b * g->H * g->W * C;

		for (int64_t oh = 0; oh < g->OH; oh++)
			for (int64_t ow = 0; ow < g->OW; ow++)
			{
				const float *src = dcol + ((b * g->OH + oh) * g->OW + ow) * rowlen;

				for (int64_t kh = 0; kh < g->KH; kh++)
				{
					int64_t		ih = oh * g->SH - g->pad_top + kh * g->DH;

					for (int64_t kw = 0; kw < g->KW; kw++, src += C)
					{
						int64_t		iw = ow * g->SW - g->pad_left + kw * g->DW;
						float	   *d;

						if (ih < 0 || ih >= g->H || iw < 0 || iw >= g->W)
							continue;
						d = dxb + (ih * g->W + iw) * C;
						for (int64_t c = 0; c < C; c++)
							d[c] += src[c];
					}
				}
			}
	}
}

/* dx (B,H,W,C) = sum of the patches in dcol (B*OH*OW, KH*KW*C); overwrites. */
static void
conv_col2im(float *dx, const float *dcol, const DlConvGeom *g)
{
	const int64_t C = g->C;
	const int64_t KW = g->KW;
	const int64_t rowlen = g->KH * KW * C;

	memset(dx, 0, (size_t) (g->B * g->H * g->W * C) * sizeof(float));
	if (conv_is_dilated(g))
	{
		conv_col2im_dilated(dx, dcol, g);
		return;
	}
	for (int64_t b = 0; b < g->B; b++)
	{
		float	   *dxb = dx + b * g->H * g->W * C;

		for (int64_t oh = 0; oh < g->OH; oh++)
		{
			for (int64_t ow = 0; ow < g->OW; ow++)
			{
				const float *src = dcol + ((b * g->OH + oh) * g->OW + ow) * rowlen;
				int64_t		iw0 = ow * g->SW - g->pad_left;
				int64_t		kw_lo = iw0 < 0 ? -iw0 : 0;
				int64_t		kw_hi = g->W - iw0 < KW ? g->W - iw0 : KW;
				int64_t		len;

				if (kw_hi <= kw_lo)
					continue;
				len = (kw_hi - kw_lo) * C;
				for (int64_t kh = 0; kh < g->KH; kh++, src += KW * C)
				{
					int64_t		ih = oh * g->SH - g->pad_top + kh;
					float	   *d;
					const float *s;

					if (ih < 0 || ih >= g->H)
						continue;
					d = dxb + (ih * g->W + iw0 + kw_lo) * C;
					s = src + kw_lo * C;
					for (int64_t i = 0; i < len; i++)
						d[i] += s[i];
				}
			}
		}
	}
}

/* The geometry of samples [b0, b0 + nb) of g, as a batch of its own. */
static inline DlConvGeom
conv_block_geom(const DlConvGeom *g, int64_t nb)
{
	DlConvGeom	gb = *g;

	gb.B = nb;
	return gb;
}

/*
 * y (B,OH,OW,OC) = act(conv(x (B,H,W,C), K (KH,KW,C,OC)) + b (OC)); b may
 * be NULL.  Bias and activation are applied block by block right after
 * the block's sgemm, while it is in cache.  work holds
 * dl_conv2d_workspace_floats(g) floats.  B*OH*OW, KH*KW*C and OC must
 * fit in an int (BLAS dimensions).
 */
void
dl_conv2d_forward_act(float *y, float *work, const float *x, const float *K,
					  const float *b, DlActivation act, const DlConvGeom *g)
{
	const int64_t N = g->OC;
	const int64_t KK = g->KH * g->KW * g->C;
	const int64_t in_per = g->H * g->W * g->C;
	const int64_t pix = g->OH * g->OW;
	const int64_t nb = conv_block_samples(g);
	const int	pointwise = conv_is_pointwise(g);

	if (g->B <= 0 || pix <= 0 || N <= 0)
		return;
	for (int64_t b0 = 0; b0 < g->B; b0 += nb)
	{
		int64_t		n = g->B - b0 < nb ? g->B - b0 : nb;
		int64_t		rows = n * pix;
		float	   *yb = y + b0 * pix * N;
		const float *col = x + b0 * in_per;

		if (KK <= 0)
			memset(yb, 0, (size_t) (rows * N) * sizeof(float));
		else
		{
			if (!pointwise)
			{
				DlConvGeom	gb = conv_block_geom(g, n);

				conv_im2col(work, col, &gb);
				col = work;
			}
			dl_sgemm_openblas(false, false, rows, N, KK, 1.0f, col, KK, K, N,
							  0.0f, yb, N);
		}
		dl_bias_act_forward(yb, b, act, rows, N);
	}
}

/* dl_conv2d_forward_act without activation. */
void
dl_conv2d_forward(float *y, float *work, const float *x, const float *K,
				  const float *b, const DlConvGeom *g)
{
	dl_conv2d_forward_act(y, work, x, K, b, DL_ACT_LINEAR, g);
}

/*
 * From dy (B,OH,OW,OC): dK (KH,KW,C,OC) +=, db (OC) +=, dx (B,H,W,C)
 * overwritten; each is skipped when NULL.  x and K are the
 * forward inputs; work as for the forward pass (its contents on entry do
 * not matter).
 */
void
dl_conv2d_backward(float *dx, float *dK, float *db, float *work, const float *dy,
				   const float *x, const float *K, const DlConvGeom *g)
{
	const int64_t M = g->B * g->OH * g->OW;
	const int64_t N = g->OC;
	const int64_t KK = g->KH * g->KW * g->C;
	const int64_t in_per = g->H * g->W * g->C;
	const int64_t pix = g->OH * g->OW;
	const int64_t nb = conv_block_samples(g);
	const int	pointwise = conv_is_pointwise(g);

	if (db != NULL)
		conv_colsum_add(db, dy, M, N);
	if (M <= 0 || N <= 0 || KK <= 0)
	{
		if (dx != NULL)
			memset(dx, 0, (size_t) (g->B * in_per) * sizeof(float));
		return;
	}
	for (int64_t b0 = 0; b0 < g->B; b0 += nb)
	{
		int64_t		n = g->B - b0 < nb ? g->B - b0 : nb;
		int64_t		rows = n * pix;
		DlConvGeom	gb = conv_block_geom(g, n);
		const float *dyb = dy + b0 * pix * N;
		const float *xb = x + b0 * in_per;

		if (dK != NULL)
		{
			const float *col = xb;

			if (!pointwise)
			{
				conv_im2col(work, xb, &gb);
				col = work;
			}
			dl_sgemm_openblas(true, false, KK, N, rows, 1.0f, col, KK, dyb, N,
							  1.0f, dK, N);
		}
		if (dx != NULL)
		{
			/* dcol = dy @ K^T, written straight into dx when pointwise */
			float	   *dxb = dx + b0 * in_per;
			float	   *dcol = pointwise ? dxb : work;

			dl_sgemm_openblas(false, true, rows, KK, N, 1.0f, dyb, N, K, N,
							  0.0f, dcol, KK);
			if (!pointwise)
				conv_col2im(dxb, dcol, &gb);
		}
	}
}
