/*-------------------------------------------------------------------------
 *
 * cuda_kernels.cu
 *	  The CUDA backend's device kernels: gather, bias + activation,
 *	  im2col/col2im, pooling, dropout, losses, reductions, optimizers.
 *
 * Contracts are in cuda_kernels.h.  Dense layers and convolutions are
 * cuBLAS sgemm calls made from cuda_model.c; everything else is here.
 * Every kernel writes each output element from exactly one thread and
 * every reduction runs in a fixed order (gathers instead of atomics), so a
 * run is bit-reproducible on the same device.  Arithmetic follows the
 * CPU kernels (double where they use double) so GPU and CPU agree to
 * rounding; libm functions (expf, tanhf, ...) are CUDA's, within 2 ulp.
 *
 * IDENTIFICATION
 *	  src/engine/cuda/cuda_kernels.cu
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdint.h>

#include "cuda_kernels.h"

#define THREADS 256

/* Blocks for n elements, capped (kernels use grid-stride loops). */
static unsigned int
blocks_for(int64_t n)
{
	int64_t		b = (n + THREADS - 1) / THREADS;

	if (b < 1)
		b = 1;
	if (b > 65535LL * 8)
		b = 65535LL * 8;
	return (unsigned int) b;
}

#define GRID_LOOP(i, n) \
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
		 i += (int64_t) gridDim.x * blockDim.x)

/* ------------------------------------------------------------------ */

__global__ static void
k_gather_rows(float *dst, const float *src, const int64_t *perm, int64_t start, int64_t B,
			  int64_t width)
{
	GRID_LOOP(i, B * width)
	{
		int64_t		b = i / width,
					j = i % width;

		dst[i] = src[perm[start + b] * width + j];
	}
}

extern "C" void
dl_cu_gather_rows(float *dst, const float *src, const int64_t *perm, int64_t start, int64_t B,
				  int64_t width, cudaStream_t s)
{
	k_gather_rows<<<blocks_for(B * width), THREADS, 0, s>>>(dst, src, perm, start, B, width);
}

/* ------------------------------------------------------------------ */

__device__ static inline float
act_fwd(DlActivation act, float v)
{
	switch (act)
	{
		case DL_ACT_RELU:
			return v > 0.0f ? v : 0.0f;
		case DL_ACT_SIGMOID:
			return 1.0f / (1.0f + expf(-v));
		case DL_ACT_TANH:
			return tanhf(v);
		case DL_ACT_ELU:
			return v > 0.0f ? v : expm1f(v);
		case DL_ACT_SOFTPLUS:
			return (v > 0.0f ? v : 0.0f) + log1pf(expf(-fabsf(v)));
		default:
			return v;
	}
}

__global__ static void
k_bias_act(float *y, const float *b, DlActivation act, int64_t rows, int64_t cols)
{
	GRID_LOOP(i, rows * cols)
	{
		float		v = y[i];

		if (b != NULL)
			v += b[i % cols];
		y[i] = act_fwd(act, v);
	}
}

/* One thread per row, as the CPU: max, exp and a double sum, divide. */
__global__ static void
k_softmax_rows(float *y, int64_t rows, int64_t cols)
{
	GRID_LOOP(r, rows)
	{
		float	   *yr = y + r * cols;
		float		maxv = -INFINITY;
		double		sum = 0.0;
		float		sf;

		for (int64_t j = 0; j < cols; j++)
			if (yr[j] > maxv)
				maxv = yr[j];
		for (int64_t j = 0; j < cols; j++)
		{
			yr[j] = expf(yr[j] - maxv);
			sum += yr[j];
		}
		sf = (float) sum;
		for (int64_t j = 0; j < cols; j++)
			yr[j] /= sf;
	}
}

extern "C" void
dl_cu_bias_act(float *y, const float *b, DlActivation act, int64_t rows, int64_t cols,
			   cudaStream_t s)
{
	if (b != NULL || (act != DL_ACT_LINEAR && act != DL_ACT_SOFTMAX))
		k_bias_act<<<blocks_for(rows * cols), THREADS, 0, s>>>(y, b, act == DL_ACT_SOFTMAX ? DL_ACT_LINEAR : act,
															   rows, cols);
	if (act == DL_ACT_SOFTMAX)
		k_softmax_rows<<<blocks_for(rows), THREADS, 0, s>>>(y, rows, cols);
}

__global__ static void
k_act_backward(DlActivation act, float *dx, const float *dy, const float *y, int64_t n)
{
	GRID_LOOP(i, n)
	{
		float		d = dy[i],
					o = y[i];

		switch (act)
		{
			case DL_ACT_RELU:
				d = o > 0.0f ? d : 0.0f;
				break;
			case DL_ACT_SIGMOID:
				d = d * o * (1.0f - o);
				break;
			case DL_ACT_TANH:
				d = d * (1.0f - o * o);
				break;
			case DL_ACT_ELU:
				d = o > 0.0f ? d : d * (o + 1.0f);
				break;
			case DL_ACT_SOFTPLUS:
				d = d * -expm1f(-o);
				break;
			default:
				break;
		}
		dx[i] = d;
	}
}

__global__ static void
k_softmax_backward(float *dx, const float *dy, const float *y, int64_t rows, int64_t cols)
{
	GRID_LOOP(r, rows)
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
}

extern "C" void
dl_cu_act_backward(DlActivation act, float *dx, const float *dy, const float *y, int64_t rows,
				   int64_t cols, cudaStream_t s)
{
	if (act == DL_ACT_SOFTMAX)
		k_softmax_backward<<<blocks_for(rows), THREADS, 0, s>>>(dx, dy, y, rows, cols);
	else if (act != DL_ACT_LINEAR || dx != dy)
		k_act_backward<<<blocks_for(rows * cols), THREADS, 0, s>>>(act, dx, dy, y, rows * cols);
}

/* ------------------------------------------------------------------ */

__global__ static void
k_im2col(float *col, const float *x, DlCuGeom g)
{
	int64_t		kk = g.KH * g.KW * g.C;

	GRID_LOOP(i, g.B * g.OH * g.OW * kk)
	{
		int64_t		row = i / kk,
					q = i % kk;
		int64_t		c = q % g.C,
					kw = (q / g.C) % g.KW,
					kh = q / (g.C * g.KW);
		int64_t		ow = row % g.OW,
					oh = (row / g.OW) % g.OH,
					b = row / (g.OW * g.OH);
		int64_t		h = oh * g.SH - g.pad_top + kh,
					w = ow * g.SW - g.pad_left + kw;

		col[i] = (h >= 0 && h < g.H && w >= 0 && w < g.W) ?
			x[((b * g.H + h) * g.W + w) * g.C + c] : 0.0f;
	}
}

extern "C" void
dl_cu_im2col(float *col, const float *x, const DlCuGeom *g, cudaStream_t s)
{
	k_im2col<<<blocks_for(g->B * g->OH * g->OW * g->KH * g->KW * g->C), THREADS, 0, s>>>(col, x, *g);
}

/* First output index o with o * S - pad + k_max >= p, i.e. windows covering p. */
__device__ static inline void
covering(int64_t p, int64_t S, int64_t pad, int64_t K, int64_t O, int64_t *lo, int64_t *hi)
{
	int64_t		t = p + pad - K + 1;	/* o * S >= t */

	*lo = t <= 0 ? 0 : (t + S - 1) / S;
	*hi = (p + pad) / S;		/* o * S <= p + pad */
	if (*hi > O - 1)
		*hi = O - 1;
}

__global__ static void
k_col2im(float *dx, const float *col, DlCuGeom g)
{
	int64_t		kk = g.KH * g.KW * g.C;

	GRID_LOOP(i, g.B * g.H * g.W * g.C)
	{
		int64_t		c = i % g.C,
					w = (i / g.C) % g.W,
					h = (i / (g.C * g.W)) % g.H,
					b = i / (g.C * g.W * g.H);
		int64_t		oh0, oh1, ow0, ow1;
		float		sum = 0.0f;

		covering(h, g.SH, g.pad_top, g.KH, g.OH, &oh0, &oh1);
		covering(w, g.SW, g.pad_left, g.KW, g.OW, &ow0, &ow1);
		for (int64_t oh = oh0; oh <= oh1; oh++)
		{
			int64_t		kh = h + g.pad_top - oh * g.SH;

			for (int64_t ow = ow0; ow <= ow1; ow++)
			{
				int64_t		kw = w + g.pad_left - ow * g.SW;

				sum += col[((b * g.OH + oh) * g.OW + ow) * kk + (kh * g.KW + kw) * g.C + c];
			}
		}
		dx[i] = sum;
	}
}

extern "C" void
dl_cu_col2im(float *dx, const float *col, const DlCuGeom *g, cudaStream_t s)
{
	k_col2im<<<blocks_for(g->B * g->H * g->W * g->C), THREADS, 0, s>>>(dx, col, *g);
}

/* ------------------------------------------------------------------ */

__global__ static void
k_maxpool_fwd(float *y, int32_t *argmax, const float *x, DlCuGeom g)
{
	GRID_LOOP(i, g.B * g.OH * g.OW * g.C)
	{
		int64_t		c = i % g.C,
					ow = (i / g.C) % g.OW,
					oh = (i / (g.C * g.OW)) % g.OH,
					b = i / (g.C * g.OW * g.OH);
		float		best = -INFINITY;
		int64_t		bi = -1;

		for (int64_t kh = 0; kh < g.KH; kh++)
		{
			int64_t		h = oh * g.SH - g.pad_top + kh;

			if (h < 0 || h >= g.H)
				continue;
			for (int64_t kw = 0; kw < g.KW; kw++)
			{
				int64_t		w = ow * g.SW - g.pad_left + kw;
				int64_t		xi = ((b * g.H + h) * g.W + w) * g.C + c;

				if (w < 0 || w >= g.W)
					continue;
				if (bi < 0 || x[xi] > best)
				{
					best = x[xi];
					bi = xi;
				}
			}
		}
		y[i] = best;
		argmax[i] = (int32_t) bi;
	}
}

extern "C" void
dl_cu_maxpool_forward(float *y, int32_t *argmax, const float *x, const DlCuGeom *g, cudaStream_t s)
{
	k_maxpool_fwd<<<blocks_for(g->B * g->OH * g->OW * g->C), THREADS, 0, s>>>(y, argmax, x, *g);
}

__global__ static void
k_maxpool_bwd(float *dx, const float *dy, const int32_t *argmax, DlCuGeom g)
{
	GRID_LOOP(i, g.B * g.H * g.W * g.C)
	{
		int64_t		c = i % g.C,
					w = (i / g.C) % g.W,
					h = (i / (g.C * g.W)) % g.H,
					b = i / (g.C * g.W * g.H);
		int64_t		oh0, oh1, ow0, ow1;
		float		sum = 0.0f;

		covering(h, g.SH, g.pad_top, g.KH, g.OH, &oh0, &oh1);
		covering(w, g.SW, g.pad_left, g.KW, g.OW, &ow0, &ow1);
		for (int64_t oh = oh0; oh <= oh1; oh++)
			for (int64_t ow = ow0; ow <= ow1; ow++)
			{
				int64_t		o = ((b * g.OH + oh) * g.OW + ow) * g.C + c;

				if (argmax[o] == (int32_t) i)
					sum += dy[o];
			}
		dx[i] = sum;
	}
}

extern "C" void
dl_cu_maxpool_backward(float *dx, const float *dy, const int32_t *argmax, const DlCuGeom *g,
					   cudaStream_t s)
{
	k_maxpool_bwd<<<blocks_for(g->B * g->H * g->W * g->C), THREADS, 0, s>>>(dx, dy, argmax, *g);
}

/* In-bounds cells of an output's window. */
__device__ static inline int64_t
window_count(const DlCuGeom *g, int64_t oh, int64_t ow)
{
	int64_t		h0 = oh * g->SH - g->pad_top,
				w0 = ow * g->SW - g->pad_left;
	int64_t		h1 = h0 + g->KH,
				w1 = w0 + g->KW;

	h0 = h0 < 0 ? 0 : h0;
	w0 = w0 < 0 ? 0 : w0;
	h1 = h1 > g->H ? g->H : h1;
	w1 = w1 > g->W ? g->W : w1;
	return (h1 - h0) * (w1 - w0);
}

__global__ static void
k_avgpool_fwd(float *y, const float *x, DlCuGeom g)
{
	GRID_LOOP(i, g.B * g.OH * g.OW * g.C)
	{
		int64_t		c = i % g.C,
					ow = (i / g.C) % g.OW,
					oh = (i / (g.C * g.OW)) % g.OH,
					b = i / (g.C * g.OW * g.OH);
		double		sum = 0.0;

		for (int64_t kh = 0; kh < g.KH; kh++)
		{
			int64_t		h = oh * g.SH - g.pad_top + kh;

			if (h < 0 || h >= g.H)
				continue;
			for (int64_t kw = 0; kw < g.KW; kw++)
			{
				int64_t		w = ow * g.SW - g.pad_left + kw;

				if (w >= 0 && w < g.W)
					sum += x[((b * g.H + h) * g.W + w) * g.C + c];
			}
		}
		y[i] = (float) (sum / (double) window_count(&g, oh, ow));
	}
}

extern "C" void
dl_cu_avgpool_forward(float *y, const float *x, const DlCuGeom *g, cudaStream_t s)
{
	k_avgpool_fwd<<<blocks_for(g->B * g->OH * g->OW * g->C), THREADS, 0, s>>>(y, x, *g);
}

__global__ static void
k_avgpool_bwd(float *dx, const float *dy, DlCuGeom g)
{
	GRID_LOOP(i, g.B * g.H * g.W * g.C)
	{
		int64_t		c = i % g.C,
					w = (i / g.C) % g.W,
					h = (i / (g.C * g.W)) % g.H,
					b = i / (g.C * g.W * g.H);
		int64_t		oh0, oh1, ow0, ow1;
		float		sum = 0.0f;

		covering(h, g.SH, g.pad_top, g.KH, g.OH, &oh0, &oh1);
		covering(w, g.SW, g.pad_left, g.KW, g.OW, &ow0, &ow1);
		for (int64_t oh = oh0; oh <= oh1; oh++)
			for (int64_t ow = ow0; ow <= ow1; ow++)
				sum += dy[((b * g.OH + oh) * g.OW + ow) * g.C + c] /
					(float) window_count(&g, oh, ow);
		dx[i] = sum;
	}
}

extern "C" void
dl_cu_avgpool_backward(float *dx, const float *dy, const DlCuGeom *g, cudaStream_t s)
{
	k_avgpool_bwd<<<blocks_for(g->B * g->H * g->W * g->C), THREADS, 0, s>>>(dx, dy, *g);
}

__global__ static void
k_gap_fwd(float *y, const float *x, int64_t B, int64_t S, int64_t C)
{
	GRID_LOOP(i, B * C)
	{
		int64_t		b = i / C,
					c = i % C;
		double		sum = 0.0;

		for (int64_t p = 0; p < S; p++)
			sum += x[(b * S + p) * C + c];
		y[i] = (float) (sum / (double) S);
	}
}

__global__ static void
k_gap_bwd(float *dx, const float *dy, int64_t B, int64_t S, int64_t C)
{
	GRID_LOOP(i, B * S * C)
	{
		int64_t		c = i % C,
					b = i / (S * C);

		dx[i] = dy[b * C + c] / (float) S;
	}
}

extern "C" void
dl_cu_global_avgpool_forward(float *y, const float *x, int64_t B, int64_t S, int64_t C,
							 cudaStream_t s)
{
	k_gap_fwd<<<blocks_for(B * C), THREADS, 0, s>>>(y, x, B, S, C);
}

extern "C" void
dl_cu_global_avgpool_backward(float *dx, const float *dy, int64_t B, int64_t S, int64_t C,
							  cudaStream_t s)
{
	k_gap_bwd<<<blocks_for(B * S * C), THREADS, 0, s>>>(dx, dy, B, S, C);
}

/* ------------------------------------------------------------------ */

/* splitmix64 finaliser of key + i * golden: a counter-based generator. */
__device__ static inline uint64_t
hash64(uint64_t key, uint64_t i)
{
	uint64_t	z = key + (i + 1) * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

__global__ static void
k_dropout_fwd(float *y, float *mask, const float *x, int64_t n, double rate, float keep,
			  uint64_t key)
{
	GRID_LOOP(i, n)
	{
		double		u = (double) (hash64(key, (uint64_t) i) >> 11) * 0x1.0p-53;
		float		m = u < rate ? 0.0f : keep;

		mask[i] = m;
		y[i] = x[i] * m;
	}
}

extern "C" void
dl_cu_dropout_forward(float *y, float *mask, const float *x, int64_t n, double rate,
					  uint64_t key, cudaStream_t s)
{
	float		keep = rate < 1.0 ? (float) (1.0 / (1.0 - rate)) : 0.0f;

	k_dropout_fwd<<<blocks_for(n), THREADS, 0, s>>>(y, mask, x, n, rate, keep, key);
}

__global__ static void
k_mul(float *dx, const float *dy, const float *mask, int64_t n)
{
	GRID_LOOP(i, n)
		dx[i] = dy[i] * mask[i];
}

extern "C" void
dl_cu_mul(float *dx, const float *dy, const float *mask, int64_t n, cudaStream_t s)
{
	k_mul<<<blocks_for(n), THREADS, 0, s>>>(dx, dy, mask, n);
}

/* ------------------------------------------------------------------ */

#define PROB_EPS 1e-7

__device__ static inline double
prob_clip(double p)
{
	if (p < PROB_EPS)
		return PROB_EPS;
	if (p > 1.0 - PROB_EPS)
		return 1.0 - PROB_EPS;
	return p;
}

__global__ static void
k_loss(float *grad, double *loss, double *correct, const float *p, const float *y,
	   DlCuLoss kind, int64_t B, int64_t K, double scale)
{
	GRID_LOOP(b, B)
	{
		const float *pb = p + b * K;
		int64_t		arg = 0,
					t = 0;
		double		L = 0.0;

		for (int64_t k = 1; k < K; k++)
			if (pb[k] > pb[arg])
				arg = k;
		if (kind == DL_CU_LOSS_SPARSE_CCE)
		{
			t = (int64_t) y[b];
			L = (t >= 0 && t < K) ? -log(prob_clip((double) pb[t])) : NAN;
			if (grad != NULL)
			{
				for (int64_t k = 0; k < K; k++)
					grad[b * K + k] = (float) (scale * pb[k]);
				if (t >= 0 && t < K)
					grad[b * K + t] -= (float) scale;
			}
		}
		else
		{
			const float *yb = y + b * K;
			double		ysum = 0.0,
						psum = 0.0;

			for (int64_t k = 0; k < K; k++)
			{
				ysum += yb[k];
				psum += pb[k];
				if (yb[k] > yb[t])
					t = k;
			}
			for (int64_t k = 0; k < K; k++)
			{
				if (kind == DL_CU_LOSS_CCE)
				{
					L -= (double) yb[k] * log(prob_clip((double) pb[k] / psum));
					if (grad != NULL)
						grad[b * K + k] = (float) (scale * (pb[k] * ysum - yb[k]));
				}
				else
				{
					double		d = (double) pb[k] - (double) yb[k];

					L += d * d / (double) K;
					if (grad != NULL)
						grad[b * K + k] = (float) (scale * 2.0 * d / (double) K);
				}
			}
		}
		loss[b] = L;
		if (correct != NULL)
			correct[b] = arg == t ? 1.0 : 0.0;
	}
}

extern "C" void
dl_cu_loss(float *grad, double *loss, double *correct, const float *p, const float *y,
		   DlCuLoss kind, int64_t B, int64_t K, double scale, cudaStream_t s)
{
	k_loss<<<blocks_for(B), THREADS, 0, s>>>(grad, loss, correct, p, y, kind, B, K, scale);
}

/* One block: thread t sums t, t+256, ...; then a fixed tree. */
__global__ static void
k_sum_into(double *acc, int *flag, const double *v, const double *v2, int64_t n)
{
	__shared__ double s1[THREADS];
	__shared__ double s2[THREADS];
	double		a = 0.0,
				c = 0.0;

	for (int64_t i = threadIdx.x; i < n; i += THREADS)
	{
		a += v[i];
		if (v2 != NULL)
			c += v2[i];
	}
	s1[threadIdx.x] = a;
	s2[threadIdx.x] = c;
	__syncthreads();
	for (int w = THREADS / 2; w > 0; w /= 2)
	{
		if ((int) threadIdx.x < w)
		{
			s1[threadIdx.x] += s1[threadIdx.x + w];
			s2[threadIdx.x] += s2[threadIdx.x + w];
		}
		__syncthreads();
	}
	if (threadIdx.x == 0)
	{
		if (flag != NULL && !isfinite(s1[0]) && *flag == 0)
			*flag = 1;			/* loss not finite */
		acc[0] += s1[0];
		if (v2 != NULL)
			acc[1] += s2[0];
	}
}

extern "C" void
dl_cu_sum_into(double *acc, int *flag, const double *v, const double *v2, int64_t n,
			   cudaStream_t s)
{
	k_sum_into<<<1, THREADS, 0, s>>>(acc, flag, v, v2, n);
}

__global__ static void
k_regularize(float *g, const float *w, int64_t n, double l1, double l2)
{
	GRID_LOOP(i, n)
	{
		double		sg = w[i] > 0.0f ? 1.0 : (w[i] < 0.0f ? -1.0 : 0.0);

		g[i] += (float) (l1 * sg + 2.0 * l2 * w[i]);
	}
}

extern "C" void
dl_cu_regularize(float *g, const float *w, int64_t n, double l1, double l2, cudaStream_t s)
{
	if (n > 0 && (l1 != 0.0 || l2 != 0.0))
		k_regularize<<<blocks_for(n), THREADS, 0, s>>>(g, w, n, l1, l2);
}

/* ------------------------------------------------------------------ */

__global__ static void
k_optim(float *p, float *g, float *s0, float *s1, float *s2, int *flag, DlCuOptimStep k,
		int64_t b, int64_t e)
{
	if (*flag != 0)
		return;
	GRID_LOOP(j, e - b)
	{
		int64_t		i = b + j;
		double		gi = (double) g[i];
		double		np;

		if (k.clipvalue > 0.0)
		{
			float		cv = (float) k.clipvalue;
			float		gf = g[i] > cv ? cv : (g[i] < -cv ? -cv : g[i]);

			gi = (double) gf;
		}
		if (k.kind == 0)		/* DL_OPTIM_SGD */
		{
			if (k.momentum <= 0.0)
				np = (double) p[i] - k.lr_t * gi;
			else
			{
				double		v = k.momentum * (double) s0[i] - k.lr_t * gi;

				s0[i] = (float) v;
				np = k.nesterov ? (double) p[i] + k.momentum * v - k.lr_t * gi
					: (double) p[i] + v;
			}
		}
		else					/* DL_OPTIM_ADAM */
		{
			double		m = k.beta_1 * (double) s0[i] + (1.0 - k.beta_1) * gi;
			double		v = k.beta_2 * (double) s1[i] + (1.0 - k.beta_2) * gi * gi;
			double		vu = v;

			s0[i] = (float) m;
			s1[i] = (float) v;
			if (k.amsgrad)
			{
				vu = fmax((double) s2[i], v);
				s2[i] = (float) vu;
			}
			np = (double) p[i] - k.adam_lr * m / (sqrt(vu) + k.epsilon);
		}
		p[i] = (float) np;
		if (!isfinite(p[i]))
			*flag = 2;			/* a weight is not finite; benign race: any writer sets 2 */
	}
}

extern "C" void
dl_cu_optim_step(float *p, float *g, float *s0, float *s1, float *s2, int *flag,
				 const DlCuOptimStep *k, int64_t b, int64_t e, cudaStream_t s)
{
	if (e > b)
		k_optim<<<blocks_for(e - b), THREADS, 0, s>>>(p, g, s0, s1, s2, flag, *k, b, e);
}
