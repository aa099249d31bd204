/*-------------------------------------------------------------------------
 *
 * ref_chain.c
 *	  Test-only: the double-precision forward pass of a chain of layers,
 *	  for the layers of text and sequences (ref_chain_forward).
 *
 * Each layer is computed from Keras' formulas, one output element at a
 * time, without the engine's kernels or layouts: the recurrent layers
 * step by step with their own state vectors, the convolutions and
 * poolings by explicit windows, Permute by index arithmetic.  The
 * gradient checks of test_seq_layers.c differentiate it numerically.
 *
 * IDENTIFICATION
 *	  test/unit/ref_chain.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "ref_kernels.h"
#include "madlib_dl/dl_spec.h"

/*
 * Zeroed scratch of n doubles, freed by the caller: the numeric gradients
 * call the chain thousands of times, more than ref_calloc keeps.
 */
static double *
dalloc(int64_t n)
{
	double	   *p = calloc((size_t) (n > 0 ? n : 1), sizeof(double));

	if (p == NULL)
		fail_msg("ref_chain: out of memory");
	return p;
}

/* y = act(x) for one value, as ref_activation_forward (not softmax). */
static double
act1(DlActivation act, double v)
{
	double		y;

	ref_activation_forward(act, &y, &v, 1, 1);
	return y;
}

/* Conv1D: x (B, T, C), kernel (K, C, F) then bias; Keras' three paddings. */
static void
ref_conv1d(double *y, const DlLayer *l, const double *p, const double *x, int64_t B)
{
	int64_t		T = l->in_shape.dims[0],
				C = l->in_shape.dims[1];
	int64_t		K = l->kernel_size[1],
				S = l->strides[1],
				D = l->dilation[1],
				F = l->filters;
	int64_t		span = (K - 1) * D + 1;
	int64_t		OT = l->out_shape.dims[0];
	int64_t		pad = 0;

	if (l->padding == DL_PADDING_CAUSAL)
		pad = span - 1;
	else if (l->padding == DL_PADDING_SAME)
	{
		int64_t		total = (OT - 1) * S + span - T;

		pad = total > 0 ? total / 2 : 0;
	}
	for (int64_t b = 0; b < B; b++)
		for (int64_t o = 0; o < OT; o++)
			for (int64_t f = 0; f < F; f++)
			{
				double		s = l->use_bias ? p[K * C * F + f] : 0.0;

				for (int64_t k = 0; k < K; k++)
				{
					int64_t		t = o * S - pad + k * D;

					if (t < 0 || t >= T)
						continue;
					for (int64_t c = 0; c < C; c++)
						s += x[(b * T + t) * C + c] * p[(k * C + c) * F + f];
				}
				y[(b * OT + o) * F + f] = act1(l->activation, s);
			}
}

/*
 * One direction of a recurrent layer over x (B, T, I) with its weights w
 * (kernel, recurrent kernel, bias): the state after each step, by time,
 * into H (B, T, U).
 */
static void
ref_rnn_direction(double *H, const DlLayer *l, const double *w, const double *x, int64_t B,
				  bool backwards)
{
	int64_t		T = l->in_shape.dims[0],
				I = l->in_shape.dims[1],
				U = l->units;
	int64_t		G = dl_rnn_gates(l->kind);
	const double *W = w;
	const double *R = w + I * G * U;
	const double *bias = l->use_bias ? R + U * G * U : NULL;
	bool		ra = l->kind == DL_LAYER_GRU && l->reset_after;
	double	   *h = dalloc(U);
	double	   *c = dalloc(U);
	double	   *xz = dalloc(G * U);	/* x W + b */
	double	   *hz = dalloc(G * U);	/* h R (+ b' with reset_after) */
	double	   *hn = dalloc(U);

	for (int64_t b = 0; b < B; b++)
	{
		memset(h, 0, sizeof(double) * (size_t) U);
		memset(c, 0, sizeof(double) * (size_t) U);
		for (int64_t s = 0; s < T; s++)
		{
			int64_t		t = backwards ? T - 1 - s : s;

			for (int64_t j = 0; j < G * U; j++)
			{
				xz[j] = bias != NULL ? bias[j] : 0.0;
				hz[j] = bias != NULL && ra ? bias[G * U + j] : 0.0;
				for (int64_t i = 0; i < I; i++)
					xz[j] += x[(b * T + t) * I + i] * W[i * G * U + j];
				for (int64_t k = 0; k < U; k++)
					hz[j] += h[k] * R[k * G * U + j];
			}
			for (int64_t u = 0; u < U; u++)
			{
				if (l->kind == DL_LAYER_LSTM)
				{
					double		ig = act1(l->recurrent_activation, xz[u] + hz[u]);
					double		fg = act1(l->recurrent_activation, xz[U + u] + hz[U + u]);
					double		gg = act1(l->activation, xz[2 * U + u] + hz[2 * U + u]);
					double		og = act1(l->recurrent_activation, xz[3 * U + u] + hz[3 * U + u]);

					c[u] = fg * c[u] + ig * gg;
					hn[u] = og * act1(l->activation, c[u]);
				}
				else if (l->kind == DL_LAYER_GRU)
				{
					double		z = act1(l->recurrent_activation, xz[u] + hz[u]);
					double		r = act1(l->recurrent_activation, xz[U + u] + hz[U + u]);
					double		cand;

					if (ra)
						cand = xz[2 * U + u] + r * hz[2 * U + u];
					else
					{
						/* (r * h) R_h: over every unit k of h, with each k's own r */
						cand = xz[2 * U + u];
						for (int64_t k = 0; k < U; k++)
						{
							double		rk = act1(l->recurrent_activation, xz[U + k] + hz[U + k]);

							cand += rk * h[k] * R[k * G * U + 2 * U + u];
						}
					}
					hn[u] = z * h[u] + (1.0 - z) * act1(l->activation, cand);
				}
				else
					hn[u] = act1(l->activation, xz[u] + hz[u]);
			}
			memcpy(h, hn, sizeof(double) * (size_t) U);
			memcpy(H + (b * T + t) * U, h, sizeof(double) * (size_t) U);
		}
	}
	free(h);
	free(c);
	free(xz);
	free(hz);
	free(hn);
}

/* LSTM, GRU, SimpleRNN and Bidirectional: their outputs from the directions' states. */
static void
ref_recurrent(double *y, const DlLayer *l, const double *p, const double *x, int64_t B)
{
	int64_t		T = l->in_shape.dims[0],
				U = l->units;
	bool		bi = l->bidir != DL_BIDIR_NONE;
	int64_t		steps = l->return_sequences ? T : 1;
	int64_t		width = l->bidir == DL_BIDIR_CONCAT ? 2 * U : U;
	double	   *Hf = dalloc(B * T * U);
	double	   *Hb = dalloc(B * T * U);

	ref_rnn_direction(Hf, l, p, x, B, bi ? false : l->go_backwards);
	if (bi)
		ref_rnn_direction(Hb, l, p + l->n_params / 2, x, B, true);
	for (int64_t b = 0; b < B; b++)
		for (int64_t s = 0; s < steps; s++)
		{
			/* Keras: a sequence in the order it was made; the last step made */
			int64_t		tf,
						tb = l->return_sequences ? s : 0;

			if (l->return_sequences)
				tf = !bi && l->go_backwards ? T - 1 - s : s;
			else
				tf = !bi && l->go_backwards ? 0 : T - 1;
			for (int64_t u = 0; u < U; u++)
			{
				double		f = Hf[(b * T + tf) * U + u];
				double		r = Hb[(b * T + tb) * U + u];
				double	   *o = y + (b * steps + s) * width;

				switch (l->bidir)
				{
					case DL_BIDIR_NONE:
						o[u] = f;
						break;
					case DL_BIDIR_CONCAT:
						o[u] = f;
						o[U + u] = r;
						break;
					case DL_BIDIR_SUM:
						o[u] = f + r;
						break;
					case DL_BIDIR_AVE:
						o[u] = (f + r) / 2.0;
						break;
					case DL_BIDIR_MUL:
						o[u] = f * r;
						break;
				}
			}
		}
	free(Hf);
	free(Hb);
}

/* DepthwiseConv2D (and SeparableConv2D's first half, without bias into mid). */
static void
ref_depthwise(double *y, const DlLayer *l, const double *K, const double *bias,
			  const double *x, int64_t B)
{
	int64_t		H = l->in_shape.dims[0],
				W = l->in_shape.dims[1],
				C = l->in_shape.dims[2];
	int64_t		M = l->depth_multiplier;
	int64_t		OH = l->out_shape.dims[0],
				OW = l->out_shape.dims[1];
	RefGeom		g;

	/* the padding of the dilated kernel, as ref_geom_init computes it */
	memset(&g, 0, sizeof(g));
	g.B = B;
	g.H = H;
	g.W = W;
	g.C = C;
	g.OC = C * M;
	g.KH = l->kernel_size[0];
	g.KW = l->kernel_size[1];
	g.SH = l->strides[0];
	g.SW = l->strides[1];
	g.DH = l->dilation[0];
	g.DW = l->dilation[1];
	g.padding = l->padding;
	ref_geom_init(&g);
	for (int64_t b = 0; b < B; b++)
		for (int64_t oh = 0; oh < OH; oh++)
			for (int64_t ow = 0; ow < OW; ow++)
				for (int64_t c = 0; c < C; c++)
					for (int64_t m = 0; m < M; m++)
					{
						double		s = bias != NULL ? bias[c * M + m] : 0.0;

						for (int64_t kh = 0; kh < g.KH; kh++)
							for (int64_t kw = 0; kw < g.KW; kw++)
							{
								int64_t		ih = oh * g.SH - g.pad_top + kh * g.DH;
								int64_t		iw = ow * g.SW - g.pad_left + kw * g.DW;

								if (ih < 0 || ih >= H || iw < 0 || iw >= W)
									continue;
								s += x[((b * H + ih) * W + iw) * C + c] *
									K[((kh * g.KW + kw) * C + c) * M + m];
							}
						y[((b * OH + oh) * OW + ow) * C * M + c * M + m] = s;
					}
}

/* The offset in the input (B-less) of output element o of a Permute. */
static int64_t
permute_source(const DlLayer *l, int64_t o)
{
	const DlShape *in = &l->in_shape;
	int64_t		idx[DL_MAX_RANK];
	int64_t		off = 0;

	/* the output's multi-index, last axis fastest */
	for (int d = in->rank - 1; d >= 0; d--)
	{
		idx[d] = o % in->dims[l->perm[d]];
		o /= in->dims[l->perm[d]];
	}
	/* input axis perm[d] takes output index d */
	for (int a = 0; a < in->rank; a++)
	{
		int64_t		ia = 0;

		for (int d = 0; d < in->rank; d++)
			if (l->perm[d] == a)
				ia = idx[d];
		off = off * in->dims[a] + ia;
	}
	return off;
}

/* One layer of a chain: in (B, in size) to out (B, out size). */
static void
ref_layer(double *y, const DlLayer *l, const double *p, const double *x, int64_t B)
{
	int64_t		in_size = dl_shape_size(&l->in_shape);
	int64_t		out_size = dl_shape_size(&l->out_shape);
	int64_t		cin = dl_shape_last(&l->in_shape);
	int64_t		cout = dl_shape_last(&l->out_shape);

	switch (l->kind)
	{
		case DL_LAYER_DENSE:
			ref_dense_forward(y, x, p, l->use_bias ? p + cin * l->units : NULL,
							  B * in_size / cin, cin, l->units);
			ref_activation_forward(l->activation, y, y, B * out_size / cout, cout);
			break;
		case DL_LAYER_ACTIVATION:
			ref_activation_forward(l->activation, y, x, B * out_size / cout, cout);
			break;
		case DL_LAYER_FLATTEN:
		case DL_LAYER_RESHAPE:
			memcpy(y, x, sizeof(double) * (size_t) (B * in_size));
			break;
		case DL_LAYER_EMBEDDING:
			for (int64_t i = 0; i < B * in_size; i++)
				memcpy(y + i * l->units, p + (int64_t) x[i] * l->units,
					   sizeof(double) * (size_t) l->units);
			break;
		case DL_LAYER_CONV1D:
			ref_conv1d(y, l, p, x, B);
			break;
		case DL_LAYER_MAXPOOL1D:
		case DL_LAYER_AVGPOOL1D:
			{
				RefGeom		g;

				memset(&g, 0, sizeof(g));
				g.B = B;
				g.H = 1;
				g.W = l->in_shape.dims[0];
				g.C = cin;
				g.OC = cin;
				g.KH = g.SH = 1;
				g.KW = l->pool_size[1];
				g.SW = l->strides[1];
				g.padding = l->padding;
				ref_geom_init(&g);
				if (l->kind == DL_LAYER_MAXPOOL1D)
					ref_maxpool2d_forward(y, x, &g);
				else
					ref_avgpool2d_forward(y, x, &g);
			}
			break;
		case DL_LAYER_GLOBALMAXPOOL1D:
			ref_global_maxpool2d_forward(y, x, B, in_size / cin, cin);
			break;
		case DL_LAYER_GLOBALAVGPOOL1D:
			ref_global_avgpool2d_forward(y, x, B, in_size / cin, cin);
			break;
		case DL_LAYER_LSTM:
		case DL_LAYER_GRU:
		case DL_LAYER_SIMPLERNN:
			ref_recurrent(y, l, p, x, B);
			break;
		case DL_LAYER_DEPTHWISECONV2D:
			{
				int64_t		nd = (int64_t) l->kernel_size[0] * l->kernel_size[1] * cin *
					l->depth_multiplier;

				ref_depthwise(y, l, p, l->use_bias ? p + nd : NULL, x, B);
				ref_activation_forward(l->activation, y, y, B * out_size / cout, cout);
			}
			break;
		case DL_LAYER_SEPARABLECONV2D:
			{
				int64_t		cm = cin * l->depth_multiplier;
				int64_t		nd = (int64_t) l->kernel_size[0] * l->kernel_size[1] * cm;
				int64_t		pix = B * out_size / cout;
				double	   *mid = dalloc(pix * cm);

				ref_depthwise(mid, l, p, NULL, x, B);
				ref_dense_forward(y, mid, p + nd, l->use_bias ? p + nd + cm * cout : NULL, pix,
								  cm, cout);
				ref_activation_forward(l->activation, y, y, pix, cout);
				free(mid);
			}
			break;
		case DL_LAYER_LAYERNORM:
			for (int64_t r = 0; r < B * in_size / cin; r++)
			{
				const double *xr = x + r * cin;
				double		m = 0.0,
							v = 0.0;

				for (int64_t c = 0; c < cin; c++)
					m += xr[c] / (double) cin;
				for (int64_t c = 0; c < cin; c++)
					v += (xr[c] - m) * (xr[c] - m) / (double) cin;
				for (int64_t c = 0; c < cin; c++)
				{
					double		o = (xr[c] - m) / sqrt(v + l->epsilon);

					if (l->scale)
						o *= p[c];
					if (l->center)
						o += p[(l->scale ? cin : 0) + c];
					y[r * cin + c] = o;
				}
			}
			break;
		case DL_LAYER_RELU:
			for (int64_t i = 0; i < B * in_size; i++)
			{
				/* Keras' backend relu */
				double		v = x[i];
				double		pos = l->threshold != 0.0 ? (v > l->threshold ? v : 0.0) : fmax(v, 0.0);

				if (l->has_max_value)
					pos = fmin(fmax(pos, 0.0), l->max_value);
				y[i] = pos - l->negative_slope * fmax(l->threshold - v, 0.0);
			}
			break;
		case DL_LAYER_PRELU:
			for (int64_t b = 0; b < B; b++)
				for (int64_t i = 0; i < in_size; i++)
				{
					/* alpha's index: the input's, each shared axis at 0 */
					int64_t		rem = i,
								ai = 0,
								stride = 1;

					for (int d = l->in_shape.rank - 1; d >= 0; d--)
					{
						int64_t		id = rem % l->in_shape.dims[d];

						rem /= l->in_shape.dims[d];
						if ((l->shared_axes & (1u << d)) != 0)
							continue;
						ai += id * stride;
						stride *= l->in_shape.dims[d];
					}
					y[b * in_size + i] = x[b * in_size + i] > 0.0 ? x[b * in_size + i] :
						p[ai] * x[b * in_size + i];
				}
			break;
		case DL_LAYER_PERMUTE:
			for (int64_t b = 0; b < B; b++)
				for (int64_t o = 0; o < out_size; o++)
					y[b * out_size + o] = x[b * in_size + permute_source(l, o)];
			break;
		case DL_LAYER_REPEATVECTOR:
			for (int64_t b = 0; b < B; b++)
				for (int64_t k = 0; k < l->repeat_n; k++)
					memcpy(y + (b * l->repeat_n + k) * cin, x + b * cin,
						   sizeof(double) * (size_t) cin);
			break;
		default:
			fail_msg("ref_chain_forward: no reference for layer \"%s\" (%s)", l->name,
					 dl_layer_kind_name(l->kind));
	}
}

void
ref_chain_forward(double *y, const DlModelSpec *spec, const double *p, const double *x,
				  int64_t B)
{
	double	   *prev = NULL;		/* the layer before's output, owned */
	const double *in = x;

	for (int i = 0; i < spec->n_layers; i++)
	{
		const DlLayer *l = &spec->layers[i];
		double	   *out = i == spec->n_layers - 1 ? y : dalloc(B * dl_shape_size(&l->out_shape));

		if (!(l->n_in == 1 && l->in[0] == i - 1))
			fail_msg("ref_chain_forward: layer \"%s\" does not read the layer before", l->name);
		ref_layer(out, l, p + l->param_offset, in, B);
		free(prev);
		prev = out != y ? out : NULL;
		in = out;
	}
	free(prev);
}
