/*-------------------------------------------------------------------------
 *
 * pool.c
 *	  MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D and
 *	  GlobalMaxPooling2D (NHWC).
 *
 * Windows follow the Keras/TF geometry of dl_conv_geom_init.  For each
 * output pixel the window's in-bounds cells are visited in row-major
 * order with the channel loop innermost, so every inner loop runs over C
 * contiguous floats.  Max pooling keeps the first maximum in that order
 * (strict >) and never lets a padded cell win; average pooling divides
 * by the number of in-bounds cells, as Keras does for padding='same'.
 * Global max pooling also keeps the first maximum of each channel.
 *
 * IDENTIFICATION
 *	  src/engine/pool.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "dl_kernels.h"

/*
 * Fill *g for a batch of B inputs (H,W,C), window PH x PW, strides SH, SW
 * (all >= 1).  Same output-size and padding rules as a convolution whose
 * kernel is the window.
 */
void
dl_pool_geom_init(DlPoolGeom *g, int64_t B, int64_t H, int64_t W, int64_t C,
				  int PH, int PW, int SH, int SW, DlPadding padding)
{
	DlConvGeom	cg;

	dl_conv_geom_init(&cg, B, H, W, C, C, PH, PW, SH, SW, padding);
	g->B = B;
	g->H = H;
	g->W = W;
	g->C = C;
	g->OH = cg.OH;
	g->OW = cg.OW;
	g->PH = PH;
	g->PW = PW;
	g->SH = SH;
	g->SW = SW;
	g->pad_top = cg.pad_top;
	g->pad_left = cg.pad_left;
}

/* In-bounds window rows [*lo, *hi) for output index o along one axis. */
static inline void
pool_range(int64_t *lo, int64_t *hi, int64_t o, int64_t s, int64_t pad, int64_t k,
		   int64_t n)
{
	int64_t		start = o * s - pad;
	int64_t		end = start + k;

	*lo = start < 0 ? 0 : start;
	*hi = end > n ? n : end;
}

/*
 * y (B,OH,OW,C) = window maxima of x (B,H,W,C); argmax (B,OH,OW,C) gets
 * the flat index into x of each maximum (first one in row-major window
 * order on ties).
 */
/* 2x2 windows, stride 2, no padding: the common case, with fast paths. */
static inline int
pool_is_2x2(const DlPoolGeom *g)
{
	return g->PH == 2 && g->PW == 2 && g->SH == 2 && g->SW == 2 &&
		g->pad_top == 0 && g->pad_left == 0 && 2 * g->OH <= g->H && 2 * g->OW <= g->W;
}

/*
 * dl_maxpool2d_forward for pool_is_2x2: the four cells are compared in
 * the same row-major order with the same strict >, as selects over one
 * contiguous channel run, so the loop vectorizes.
 */
DL_VEC_CLONES
static void
maxpool2x2_forward(float *restrict y, int64_t *restrict argmax, const float *restrict x,
				   const DlPoolGeom *g)
{
	const int64_t C = g->C;
	const int64_t W = g->W;

	for (int64_t b = 0; b < g->B; b++)
	{
		for (int64_t oh = 0; oh < g->OH; oh++)
		{
			for (int64_t ow = 0; ow < g->OW; ow++)
			{
				int64_t		o = ((b * g->OH + oh) * g->OW + ow) * C;
				int64_t		i00 = ((b * g->H + 2 * oh) * W + 2 * ow) * C;
				const float *x00 = x + i00;
				const float *x01 = x00 + C;
				const float *x10 = x00 + W * C;
				const float *x11 = x10 + C;
				float	   *yo = y + o;
				int64_t    *ao = argmax + o;

				for (int64_t c = 0; c < C; c++)
				{
					float		m = x00[c];
					int64_t		a = i00 + c;
					int			gt;

					gt = x01[c] > m;
					m = gt ? x01[c] : m;
					a = gt ? i00 + C + c : a;
					gt = x10[c] > m;
					m = gt ? x10[c] : m;
					a = gt ? i00 + W * C + c : a;
					gt = x11[c] > m;
					m = gt ? x11[c] : m;
					a = gt ? i00 + W * C + C + c : a;
					yo[c] = m;
					ao[c] = a;
				}
			}
		}
	}
}

/*
 * dl_maxpool2d_backward(_relu) for pool_is_2x2: every input cell is
 * written once (dy where it is the window's argmax, else 0), the cells no
 * window covers (a last odd row or column) are zeroed; no memset and
 * scatter.  y (B,OH,OW,C) NULL: no ReLU mask.  "0.0f + d" keeps the bits
 * of the scatter into zeros (-0 becomes +0).
 */
DL_VEC_CLONES
static void
maxpool2x2_backward(float *restrict dx, const float *restrict dy,
					const int64_t *restrict argmax, const float *restrict y,
					const DlPoolGeom *g)
{
	const int64_t C = g->C;
	const int64_t W = g->W;

	for (int64_t b = 0; b < g->B; b++)
	{
		float	   *dxb = dx + b * g->H * W * C;

		for (int64_t oh = 0; oh < g->OH; oh++)
		{
			for (int64_t ow = 0; ow < g->OW; ow++)
			{
				int64_t		o = ((b * g->OH + oh) * g->OW + ow) * C;
				int64_t		i00 = ((b * g->H + 2 * oh) * W + 2 * ow) * C;
				int64_t		i10 = i00 + W * C;
				float	   *d00 = dx + i00;
				float	   *d01 = d00 + C;
				float	   *d10 = dx + i10;
				float	   *d11 = d10 + C;
				const float *dyo = dy + o;
				const int64_t *ao = argmax + o;

				if (y != NULL)
				{
					const float *yo = y + o;

					for (int64_t c = 0; c < C; c++)
					{
						float		d = yo[c] > 0.0f ? 0.0f + dyo[c] : 0.0f;
						int64_t		a = ao[c];

						d00[c] = a == i00 + c ? d : 0.0f;
						d01[c] = a == i00 + C + c ? d : 0.0f;
						d10[c] = a == i10 + c ? d : 0.0f;
						d11[c] = a == i10 + C + c ? d : 0.0f;
					}
				}
				else
				{
					for (int64_t c = 0; c < C; c++)
					{
						float		d = 0.0f + dyo[c];
						int64_t		a = ao[c];

						d00[c] = a == i00 + c ? d : 0.0f;
						d01[c] = a == i00 + C + c ? d : 0.0f;
						d10[c] = a == i10 + c ? d : 0.0f;
						d11[c] = a == i10 + C + c ? d : 0.0f;
					}
				}
			}
			if (2 * g->OW < W)
			{
				/* the last column(s) of the two rows: no window */
				for (int64_t r = 2 * oh; r < 2 * oh + 2; r++)
					memset(dxb + (r * W + 2 * g->OW) * C, 0,
						   (size_t) ((W - 2 * g->OW) * C) * sizeof(float));
			}
		}
		if (2 * g->OH < g->H)
			memset(dxb + 2 * g->OH * W * C, 0,
				   (size_t) ((g->H - 2 * g->OH) * W * C) * sizeof(float));
	}
}

void
dl_maxpool2d_forward(float *y, int64_t *argmax, const float *x, const DlPoolGeom *g)
{
	const int64_t C = g->C;

	if (pool_is_2x2(g))
	{
		maxpool2x2_forward(y, argmax, x, g);
		return;
	}
	for (int64_t b = 0; b < g->B; b++)
	{
		for (int64_t oh = 0; oh < g->OH; oh++)
		{
			int64_t		h_lo,
						h_hi;

			pool_range(&h_lo, &h_hi, oh, g->SH, g->pad_top, g->PH, g->H);
			for (int64_t ow = 0; ow < g->OW; ow++)
			{
				int64_t		o = ((b * g->OH + oh) * g->OW + ow) * C;
				float	   *yo = y + o;
				int64_t    *ao = argmax + o;
				int64_t		w_lo,
							w_hi;
				int			first = 1;

				pool_range(&w_lo, &w_hi, ow, g->SW, g->pad_left, g->PW, g->W);
				for (int64_t ih = h_lo; ih < h_hi; ih++)
				{
					for (int64_t iw = w_lo; iw < w_hi; iw++)
					{
						int64_t		base = ((b * g->H + ih) * g->W + iw) * C;
						const float *xi = x + base;

						if (first)
						{
							for (int64_t c = 0; c < C; c++)
							{
								yo[c] = xi[c];
								ao[c] = base + c;
							}
							first = 0;
							continue;
						}
						/* branch-free select, so the loop vectorizes */
						for (int64_t c = 0; c < C; c++)
						{
							int			gt = xi[c] > yo[c];

							yo[c] = gt ? xi[c] : yo[c];
							ao[c] = gt ? base + c : ao[c];
						}
					}
				}
				if (first)
				{
					/* empty window: cannot happen with Keras geometry */
					for (int64_t c = 0; c < C; c++)
					{
						yo[c] = 0.0f;
						ao[c] = -1;
					}
				}
			}
		}
	}
}

/*
 * The max-pool backward: dx = 0, then dy added at the argmax positions
 * (where y, when not NULL, is > 0).  Inlined into its two callers, each
 * with its own loop (y NULL is a constant there).
 */
static inline void
maxpool_backward(float *dx, const float *dy, const int64_t *argmax, const float *y,
				 const DlPoolGeom *g)
{
	int64_t		n_out = g->B * g->OH * g->OW * g->C;

	if (pool_is_2x2(g))
	{
		maxpool2x2_backward(dx, dy, argmax, y, g);
		return;
	}
	memset(dx, 0, (size_t) (g->B * g->H * g->W * g->C) * sizeof(float));
	if (y == NULL)
	{
		for (int64_t i = 0; i < n_out; i++)
		{
			if (argmax[i] >= 0)
				dx[argmax[i]] += dy[i];
		}
	}
	else
	{
		for (int64_t i = 0; i < n_out; i++)
		{
			if (argmax[i] >= 0 && y[i] > 0.0f)
				dx[argmax[i]] += dy[i];
		}
	}
}

/*
 * dx (B,H,W,C) = 0, then dy (B,OH,OW,C) added at the argmax positions
 * saved by the forward pass.
 */
void
dl_maxpool2d_backward(float *dx, const float *dy, const int64_t *argmax,
					  const DlPoolGeom *g)
{
	maxpool_backward(dx, dy, argmax, NULL, g);
}

/*
 * dx (B,H,W,C) = 0, then dy (B,OH,OW,C) added at the argmax positions
 * where y (B,OH,OW,C), the forward output, is > 0: the max-pool backward
 * fused with the ReLU backward of the layer that produced the pool's
 * input (y[i] is that input at argmax[i]).  Masking each addend by the
 * sign of its target equals masking the sum.
 */
void
dl_maxpool2d_backward_relu(float *dx, const float *dy, const int64_t *argmax,
						   const float *y, const DlPoolGeom *g)
{
	maxpool_backward(dx, dy, argmax, y, g);
}

/* y (B,OH,OW,C) = mean of x (B,H,W,C) over each window's in-bounds cells. */
void
dl_avgpool2d_forward(float *y, const float *x, const DlPoolGeom *g)
{
	const int64_t C = g->C;

	for (int64_t b = 0; b < g->B; b++)
	{
		for (int64_t oh = 0; oh < g->OH; oh++)
		{
			int64_t		h_lo,
						h_hi;

			pool_range(&h_lo, &h_hi, oh, g->SH, g->pad_top, g->PH, g->H);
			for (int64_t ow = 0; ow < g->OW; ow++)
			{
				float	   *yo = y + ((b * g->OH + oh) * g->OW + ow) * C;
				int64_t		w_lo,
							w_hi,
							count;
				float		div;

				pool_range(&w_lo, &w_hi, ow, g->SW, g->pad_left, g->PW, g->W);
				count = (h_hi - h_lo) * (w_hi - w_lo);
				memset(yo, 0, (size_t) C * sizeof(float));
				for (int64_t ih = h_lo; ih < h_hi; ih++)
				{
					for (int64_t iw = w_lo; iw < w_hi; iw++)
					{
						const float *xi = x + ((b * g->H + ih) * g->W + iw) * C;

						for (int64_t c = 0; c < C; c++)
							yo[c] += xi[c];
					}
				}
				div = count > 0 ? (float) count : 1.0f;
				for (int64_t c = 0; c < C; c++)
					yo[c] /= div;
			}
		}
	}
}

/* dx (B,H,W,C) overwritten: each window spreads dy / count over its cells. */
void
dl_avgpool2d_backward(float *dx, const float *dy, const DlPoolGeom *g)
{
	const int64_t C = g->C;

	memset(dx, 0, (size_t) (g->B * g->H * g->W * C) * sizeof(float));
	for (int64_t b = 0; b < g->B; b++)
	{
		for (int64_t oh = 0; oh < g->OH; oh++)
		{
			int64_t		h_lo,
						h_hi;

			pool_range(&h_lo, &h_hi, oh, g->SH, g->pad_top, g->PH, g->H);
			for (int64_t ow = 0; ow < g->OW; ow++)
			{
				const float *dyo = dy + ((b * g->OH + oh) * g->OW + ow) * C;
				int64_t		w_lo,
							w_hi,
							count;
				float		div;

				pool_range(&w_lo, &w_hi, ow, g->SW, g->pad_left, g->PW, g->W);
				count = (h_hi - h_lo) * (w_hi - w_lo);
				if (count <= 0)
					continue;
				div = (float) count;
				for (int64_t ih = h_lo; ih < h_hi; ih++)
				{
					for (int64_t iw = w_lo; iw < w_hi; iw++)
					{
						float	   *dxi = dx + ((b * g->H + ih) * g->W + iw) * C;

						for (int64_t c = 0; c < C; c++)
							dxi[c] += dyo[c] / div;
					}
				}
			}
		}
	}
}

/* y (B,C) = mean over the S = H*W positions of x (B,S,C). */
void
dl_global_avgpool2d_forward(float *y, const float *x, int64_t B, int64_t S, int64_t C)
{
	float		div = S > 0 ? (float) S : 1.0f;

	for (int64_t b = 0; b < B; b++)
	{
		float	   *yb = y + b * C;
		const float *xb = x + b * S * C;

		memset(yb, 0, (size_t) C * sizeof(float));
		for (int64_t s = 0; s < S; s++)
			for (int64_t c = 0; c < C; c++)
				yb[c] += xb[s * C + c];
		for (int64_t c = 0; c < C; c++)
			yb[c] /= div;
	}
}

/* dx (B,S,C) = dy (B,C) / S at every position; overwrites. */
void
dl_global_avgpool2d_backward(float *dx, const float *dy, int64_t B, int64_t S, int64_t C)
{
	float		div = S > 0 ? (float) S : 1.0f;

	for (int64_t b = 0; b < B; b++)
	{
		const float *dyb = dy + b * C;
		float	   *dxb = dx + b * S * C;

		for (int64_t s = 0; s < S; s++)
			for (int64_t c = 0; c < C; c++)
				dxb[s * C + c] = dyb[c] / div;
	}
}

void
dl_global_maxpool2d_forward(float *y, int64_t *argmax, const float *x, int64_t B, int64_t S,
							int64_t C)
{
	for (int64_t b = 0; b < B; b++)
	{
		float	   *yb = y + b * C;
		int64_t    *ab = argmax + b * C;
		const float *xb = x + b * S * C;

		for (int64_t c = 0; c < C; c++)
		{
			yb[c] = xb[c];
			ab[c] = 0;
		}
		for (int64_t s = 1; s < S; s++)
			for (int64_t c = 0; c < C; c++)
				if (xb[s * C + c] > yb[c])
				{
					yb[c] = xb[s * C + c];
					ab[c] = s;
				}
	}
}

void
dl_global_maxpool2d_backward(float *dx, const float *dy, const int64_t *argmax, int64_t B,
							 int64_t S, int64_t C)
{
	memset(dx, 0, (size_t) (B * S * C) * sizeof(float));
	for (int64_t b = 0; b < B; b++)
		for (int64_t c = 0; c < C; c++)
			dx[(b * S + argmax[b * C + c]) * C + c] = dy[b * C + c];
}
