/*-------------------------------------------------------------------------
 *
 * recurrent.c
 *	  LSTM, GRU and SimpleRNN layers (Keras' formulas), forward and
 *	  backward through time, and the Bidirectional wrapper's merges.
 *
 * A direction of a layer reads x (B, T, I) one step at a time, from the
 * first step or (go_backwards) from the last, with a state h (B, U) that
 * starts at zero; an LSTM also carries a cell state c.  Keras' cells,
 * with sigma the recurrent activation and act the activation:
 *	 LSTM       i, f, g, o = sigma(z_i), sigma(z_f), act(z_c), sigma(z_o),
 *	            z = x W + h_prev Uk + b, gate blocks in the order i, f, c, o;
 *	            c = f * c_prev + i * g;  h = o * act(c)
 *	 GRU        z = sigma(x W_z + h_prev U_z + b_z), r likewise,
 *	            reset_after false:  hh = act(x W_h + (r * h_prev) U_h + b_h)
 *	            reset_after true:   hh = act(x W_h + b_h + r * (h_prev U_h + b'_h))
 *	            (b' the recurrent bias: the bias is (2, 3U); PyTorch's GRU);
 *	            h = z * h_prev + (1 - z) * hh
 *	 SimpleRNN  h = act(x W + h_prev Uk + b)
 * The kernel W (I, G*U) and the recurrent kernel Uk (U, G*U) follow each
 * other in the parameter block, so together they are one (I+U, G*U)
 * matrix: each step's input and previous state are kept side by side in
 * xh (B, T, I+U), one product gives an LSTM's four gates, and after the
 * backward pass through time one product XH^T dG gives the gradients of
 * both kernels for every step at once.  Every tensor of a direction is
 * kept for every step, batch-major like x, (B, T, ...), and indexed by
 * the step's time t (not the order of processing), so the products over
 * all steps are plain matrices; a step's rows are T rows apart.
 *
 * The backward pass (full backpropagation through time over the T steps
 * of the input) visits the steps in reverse order of processing; dH
 * (B, T, U) holds dL/dh of each step from the layer's outputs, and each
 * step adds its state gradient to the previous step's row.  The gates'
 * slots of the forward pass are overwritten by their gradients (dG).
 *
 * sigmoid and tanh, the usual activations of the gates and states, use
 * a polynomial exp that vectorizes (compiled as DL_VEC_CLONES_NO_FMA: the
 * same bits on every CPU); within 2 ulp of expf.
 *
 * IDENTIFICATION
 *	  src/engine/recurrent.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "dl_kernels.h"

/* ---------------------------------------------------------------------
 * Activations
 * --------------------------------------------------------------------- */

/*
 * e^x for x in [-87, 88] (clamped outside): x = n ln 2 + r, |r| <= ln2/2,
 * e^r by its degree-6 Taylor polynomial (Horner), times 2^n from the
 * exponent bits.  Only exactly rounded operations: vectorizes, and gives
 * the same bits wherever it runs without contraction.
 */
static inline float
rnn_exp(float x)
{
	const float magic = 12582912.0f;	/* 1.5 * 2^23: rounds to an integer */
	float		n,
				r,
				p,
				s;
	int32_t		e;

	x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
	n = (x * 1.44269504088896341f + magic) - magic;
	r = x - n * 0.693359375f;	/* ln 2 in two parts: exact product */
	r = r - n * -2.12194440e-4f;
	p = 1.0f / 720.0f;
	p = p * r + 1.0f / 120.0f;
	p = p * r + 1.0f / 24.0f;
	p = p * r + 1.0f / 6.0f;
	p = p * r + 0.5f;
	p = p * r + 1.0f;
	p = p * r + 1.0f;
	e = ((int32_t) n + 127) << 23;
	memcpy(&s, &e, sizeof(s));
	return p * s;
}

/* y (n) = sigmoid(x) */
DL_VEC_CLONES_NO_FMA
static void
rnn_sigmoid(float *restrict y, const float *restrict x, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = 1.0f / (1.0f + rnn_exp(-x[i]));
}

/* y (n) = tanh(x) = 1 - 2 / (e^(2x) + 1) */
DL_VEC_CLONES_NO_FMA
static void
rnn_tanh(float *restrict y, const float *restrict x, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = 1.0f - 2.0f / (rnn_exp(2.0f * x[i]) + 1.0f);
}

/* v (n) = act(v) in place: the fast forms of sigmoid and tanh, else activation.c's. */
static void
rnn_act(DlActivation act, float *v, int64_t n)
{
	float		tmp[256];

	if (act != DL_ACT_SIGMOID && act != DL_ACT_TANH)
	{
		dl_activation_forward(act, v, v, 1, n);
		return;
	}
	/* restrict: through a small copy */
	for (int64_t i0 = 0; i0 < n; i0 += 256)
	{
		int64_t		m = n - i0 < 256 ? n - i0 : 256;

		memcpy(tmp, v + i0, (size_t) m * sizeof(float));
		if (act == DL_ACT_SIGMOID)
			rnn_sigmoid(v + i0, tmp, m);
		else
			rnn_tanh(v + i0, tmp, m);
	}
}

/* d (n) *= act'(x) where y = act(x) (n): from the output, as activation.c. */
static void
rnn_dact(DlActivation act, float *d, const float *y, int64_t n)
{
	dl_activation_backward(act, d, d, y, 1, n);
}

/* ---------------------------------------------------------------------
 * Geometry
 * --------------------------------------------------------------------- */

int
dl_rnn_slots(const DlRnnGeom *g)
{
	/* GRU: z, r, hh and, with reset_after, the recurrent part of hh */
	if (g->cell == DL_LAYER_GRU)
		return g->reset_after ? 4 : 3;
	return dl_rnn_gates(g->cell);
}

bool
dl_rnn_has_aux(const DlRnnGeom *g)
{
	return g->cell == DL_LAYER_LSTM || (g->cell == DL_LAYER_GRU && !g->reset_after);
}

/* Time of processing step s; -1 for the step before the first. */
static inline int64_t
step_time(const DlRnnGeom *g, int64_t s)
{
	if (s < 0)
		return -1;
	return g->backwards ? g->T - 1 - s : s;
}

/* ---------------------------------------------------------------------
 * Forward
 * --------------------------------------------------------------------- */

/* v (n) += b (n); b may be NULL. */
static inline void
add_bias(float *v, const float *b, int64_t n)
{
	if (b != NULL)
		for (int64_t j = 0; j < n; j++)
			v[j] += b[j];
}

/*
 * The elementwise part of one step for one batch row: gr (S*U) holds the
 * step's products (the biases not yet added), hp (U) the previous state
 * (zeros at the first step), cp (U) the previous cell state (NULL at the
 * first step); writes the gates back into gr, the state into ht (U) and
 * an LSTM's cell state into at (U).  A GRU without reset_after has had
 * z and r done (forward_gru_reset_before).
 */
static void
step_forward_row(const DlRnnGeom *g, float *gr, float *ht, float *at, const float *hp,
				 const float *cp, const float *b)
{
	int64_t		U = g->U;

	switch (g->cell)
	{
		case DL_LAYER_LSTM:
			add_bias(gr, b, 4 * U);
			rnn_act(g->rec_act, gr, 2 * U); /* i, f */
			rnn_act(g->act, gr + 2 * U, U); /* g */
			rnn_act(g->rec_act, gr + 3 * U, U); /* o */
			for (int64_t u = 0; u < U; u++)
				at[u] = (cp != NULL ? gr[U + u] * cp[u] : 0.0f) + gr[u] * gr[2 * U + u];
			memcpy(ht, at, (size_t) U * sizeof(float));
			rnn_act(g->act, ht, U);
			for (int64_t u = 0; u < U; u++)
				ht[u] *= gr[3 * U + u];
			break;
		case DL_LAYER_GRU:
			if (g->reset_after)
			{
				/* z, r: the product summed x's and h's parts; both biases */
				add_bias(gr, b, 2 * U);
				add_bias(gr, b != NULL ? b + 3 * U : NULL, 2 * U);
				rnn_act(g->rec_act, gr, 2 * U);
				/* gr[3U..]: h_prev U_h + b'_h; hh = act(x W_h + b_h + r * that) */
				add_bias(gr + 3 * U, b != NULL ? b + 5 * U : NULL, U);
				add_bias(gr + 2 * U, b != NULL ? b + 2 * U : NULL, U);
				for (int64_t u = 0; u < U; u++)
					gr[2 * U + u] += gr[U + u] * gr[3 * U + u];
			}
			else
				add_bias(gr + 2 * U, b != NULL ? b + 2 * U : NULL, U);
			rnn_act(g->act, gr + 2 * U, U);
			for (int64_t u = 0; u < U; u++)
				ht[u] = gr[u] * hp[u] + (1.0f - gr[u]) * gr[2 * U + u];
			break;
		default:				/* SimpleRNN */
			memcpy(ht, gr, (size_t) U * sizeof(float));
			add_bias(ht, b, U);
			rnn_act(g->act, ht, U);
			break;
	}
}

/*
 * A GRU without reset_after, before its candidate's product: z and r of
 * every row (gates (B, .) at gt, rows ldg apart), and r * h_prev into
 * rh (B, U), rows T*U apart.
 */
static void
forward_gru_reset_before(const DlRnnGeom *g, float *gt, int64_t ldg, float *rh,
						 const float *xh, int64_t ldxh, const float *b)
{
	int64_t		U = g->U;

	for (int64_t bi = 0; bi < g->B; bi++)
	{
		float	   *gr = gt + bi * ldg;
		float	   *rr = rh + bi * g->T * U;
		const float *hp = xh + bi * ldxh + g->I;

		add_bias(gr, b, 2 * U);
		rnn_act(g->rec_act, gr, 2 * U);
		for (int64_t u = 0; u < U; u++)
			rr[u] = gr[U + u] * hp[u];
	}
}

void
dl_rnn_forward(DlRnnState *st, const float *x, const float *w, const DlRnnGeom *g)
{
	int64_t		B = g->B,
				T = g->T,
				I = g->I,
				U = g->U;
	int64_t		S = dl_rnn_slots(g);
	int64_t		GU = dl_rnn_gates(g->cell) * U;
	int64_t		ldxh = T * (I + U); /* a step's rows are T rows apart */
	int64_t		ldg = T * S * U;
	const float *W = w;			/* (I, GU); with Uk below it, (I+U, GU) */
	const float *Uk = w + I * GU;	/* (U, GU) */
	const float *b = g->use_bias ? Uk + U * GU : NULL;	/* (GU), or (2, GU) */

	/* each step's input, beside its state */
	for (int64_t r = 0; r < B * T; r++)
		memcpy(st->xh + r * (I + U), x + r * I, (size_t) I * sizeof(float));

	for (int64_t s = 0; s < T; s++)
	{
		int64_t		t = step_time(g, s);
		int64_t		tp = step_time(g, s - 1);
		float	   *xh = st->xh + t * (I + U);	/* (B, I+U) */
		float	   *gt = st->gates + t * S * U; /* (B, S*U) */

		/* the previous state */
		for (int64_t bi = 0; bi < B; bi++)
		{
			float	   *hp = xh + bi * ldxh + I;

			if (tp < 0)
				memset(hp, 0, (size_t) U * sizeof(float));
			else
				memcpy(hp, st->h + (bi * T + tp) * U, (size_t) U * sizeof(float));
		}

		/* the products */
		if (g->cell != DL_LAYER_GRU)
			dl_sgemm(false, false, B, GU, I + U, 1.0f, xh, ldxh, W, GU, 0.0f, gt, ldg);
		else
		{
			/* z, r from [x, h_prev]; x W_h; then h_prev U_h, or (r * h_prev) U_h */
			dl_sgemm(false, false, B, 2 * U, I + U, 1.0f, xh, ldxh, W, GU, 0.0f, gt, ldg);
			dl_sgemm(false, false, B, U, I, 1.0f, xh, ldxh, W + 2 * U, GU, 0.0f, gt + 2 * U, ldg);
			if (g->reset_after)
				dl_sgemm(false, false, B, U, U, 1.0f, xh + I, ldxh, Uk + 2 * U, GU, 0.0f,
						 gt + 3 * U, ldg);
			else
			{
				forward_gru_reset_before(g, gt, ldg, st->aux + t * U, xh, ldxh, b);
				dl_sgemm(false, false, B, U, U, 1.0f, st->aux + t * U, T * U, Uk + 2 * U, GU,
						 1.0f, gt + 2 * U, ldg);
			}
		}

		/* the elementwise part, row by row */
		for (int64_t bi = 0; bi < B; bi++)
		{
			const float *cp = tp >= 0 && g->cell == DL_LAYER_LSTM ?
				st->aux + (bi * T + tp) * U : NULL;

			step_forward_row(g, gt + bi * ldg, st->h + (bi * T + t) * U,
							 g->cell == DL_LAYER_LSTM ? st->aux + (bi * T + t) * U : NULL,
							 xh + bi * ldxh + I, cp, b);
		}
	}
}

/* ---------------------------------------------------------------------
 * Backward
 * --------------------------------------------------------------------- */

#define CHUNK 256				/* elementwise work in stack blocks of this */

/* dst (m) = src (m), m <= CHUNK */
static inline void
copy_chunk(float *dst, const float *src, int64_t m)
{
	for (int64_t u = 0; u < m; u++)
		dst[u] = src[u];
}

/*
 * An LSTM step's elementwise backward for one batch row, in blocks of
 * CHUNK units (all of it is elementwise): gr (4U) the gates i, f, g, o,
 * overwritten by the gradients of their pre-activations; dh (U) dL/dh;
 * dc (U) dL/dc from the next step, replaced by dL/dc_prev; at (U) the
 * cell state, cp (U) the previous one (NULL: zeros).
 */
static void
lstm_backward_row(const DlRnnGeom *g, float *gr, const float *dh, float *dc, const float *at,
				  const float *cp)
{
	int64_t		U = g->U;

	for (int64_t u0 = 0; u0 < U; u0 += CHUNK)
	{
		int64_t		m = U - u0 < CHUNK ? U - u0 : CHUNK;
		float	   *gi = gr + u0,
				   *gf = gr + U + u0,
				   *gg = gr + 2 * U + u0,
				   *go = gr + 3 * U + u0;
		float		ac[CHUNK],	/* act(c) */
					dcv[CHUNK], /* dL/dc */
					di[CHUNK],
					df[CHUNK],
					dg[CHUNK],
					dov[CHUNK];

		copy_chunk(ac, at + u0, m);
		rnn_act(g->act, ac, m);
		for (int64_t u = 0; u < m; u++)
			dcv[u] = dh[u0 + u] * go[u];
		rnn_dact(g->act, dcv, ac, m);
		for (int64_t u = 0; u < m; u++)
		{
			dcv[u] += dc[u0 + u];
			dov[u] = dh[u0 + u] * ac[u];
			di[u] = dcv[u] * gg[u];
			dg[u] = dcv[u] * gi[u];
			df[u] = cp != NULL ? dcv[u] * cp[u0 + u] : 0.0f;
			dc[u0 + u] = dcv[u] * gf[u];
		}
		rnn_dact(g->rec_act, di, gi, m);
		rnn_dact(g->rec_act, df, gf, m);
		rnn_dact(g->act, dg, gg, m);
		rnn_dact(g->rec_act, dov, go, m);
		copy_chunk(gi, di, m);
		copy_chunk(gf, df, m);
		copy_chunk(gg, dg, m);
		copy_chunk(go, dov, m);
	}
}

/*
 * A GRU step's elementwise backward for one batch row, first part: gr
 * (S*U) z, r, hh (and rech), dh (U) dL/dh, hp (U) the previous state;
 * writes dz and d(hh's pre-activation) into gr's z and hh slots, and, with
 * reset_after, dr and d(rech); dhp (U, NULL at the first step) += dL/dh_prev
 * through h = z h_prev + ... (and nothing else yet).
 */
static void
gru_backward_row(const DlRnnGeom *g, float *gr, const float *dh, const float *hp, float *dhp)
{
	int64_t		U = g->U;

	for (int64_t u0 = 0; u0 < U; u0 += CHUNK)
	{
		int64_t		m = U - u0 < CHUNK ? U - u0 : CHUNK;
		float	   *gz = gr + u0,
				   *grr = gr + U + u0,
				   *gh = gr + 2 * U + u0;
		float		dz[CHUNK],
					dhh[CHUNK];

		for (int64_t u = 0; u < m; u++)
		{
			dz[u] = dh[u0 + u] * (hp[u0 + u] - gh[u]);
			dhh[u] = dh[u0 + u] * (1.0f - gz[u]);
			if (dhp != NULL)
				dhp[u0 + u] += dh[u0 + u] * gz[u];
		}
		rnn_dact(g->rec_act, dz, gz, m);
		rnn_dact(g->act, dhh, gh, m);
		copy_chunk(gz, dz, m);
		copy_chunk(gh, dhh, m);
		if (g->reset_after)
		{
			float	   *grec = gr + 3 * U + u0;
			float		dr[CHUNK];

			/* hh_pre = ... + r * rech */
			for (int64_t u = 0; u < m; u++)
			{
				dr[u] = dhh[u] * grec[u];
				grec[u] = dhh[u] * grr[u];
			}
			rnn_dact(g->rec_act, dr, grr, m);
			copy_chunk(grr, dr, m);
		}
	}
}

/*
 * A GRU without reset_after, second part: drh (U) = d(hh_pre) U_h^T, the
 * gradient of r * h_prev; dr into gr's r slot (holding r), dhp += drh * r.
 */
static void
gru_reset_before_row(const DlRnnGeom *g, float *gr, const float *drh, const float *hp,
					 float *dhp)
{
	int64_t		U = g->U;

	for (int64_t u0 = 0; u0 < U; u0 += CHUNK)
	{
		int64_t		m = U - u0 < CHUNK ? U - u0 : CHUNK;
		float	   *grr = gr + U + u0;
		float		dr[CHUNK];

		for (int64_t u = 0; u < m; u++)
		{
			dr[u] = drh[u0 + u] * hp[u0 + u];
			if (dhp != NULL)
				dhp[u0 + u] += drh[u0 + u] * grr[u];
		}
		rnn_dact(g->rec_act, dr, grr, m);
		copy_chunk(grr, dr, m);
	}
}

/* Rows of the products over every step, at most, per call (an int for BLAS). */
#define GEMM_ROWS ((int64_t) 1 << 30)

/*
 * C (M, N) += A^T B over rows of A (rows, M; rows lda apart) and B
 * (rows, N; ldb apart): the kernels' gradients of every step at once, in
 * calls of at most GEMM_ROWS rows.
 */
static void
gemm_over_steps(int64_t M, int64_t N, int64_t rows, const float *A, int64_t lda,
				const float *B, int64_t ldb, float *C, int64_t ldc)
{
	for (int64_t r0 = 0; r0 < rows; r0 += GEMM_ROWS)
	{
		int64_t		k = rows - r0 < GEMM_ROWS ? rows - r0 : GEMM_ROWS;

		dl_sgemm(true, false, M, N, k, 1.0f, A + r0 * lda, lda, B + r0 * ldb, ldb, 1.0f, C, ldc);
	}
}

/* db (n) += column sums of the rows (n floats, ld apart) of m (rows). */
static void
colsum_add(float *db, const float *m, int64_t rows, int64_t n, int64_t ld)
{
	for (int64_t r = 0; r < rows; r++)
		for (int64_t j = 0; j < n; j++)
			db[j] += m[r * ld + j];
}

void
dl_rnn_backward(float *dx, bool add_dx, float *dw, float *dH, float *work,
				const DlRnnState *st, const float *w, const DlRnnGeom *g)
{
	int64_t		B = g->B,
				T = g->T,
				I = g->I,
				U = g->U;
	int64_t		S = dl_rnn_slots(g);
	int64_t		GU = dl_rnn_gates(g->cell) * U;
	int64_t		ldxh = T * (I + U);
	int64_t		ldg = T * S * U;
	const float *W = w;			/* (I, GU) */
	const float *Uk = w + I * GU;	/* (U, GU) */
	float	   *dUk = dw + I * GU;
	float	   *db = g->use_bias ? dUk + U * GU : NULL;
	float	   *dc = work;		/* (B, U): LSTM's dL/dc, a GRU's d(r h_prev) */

	if (g->cell == DL_LAYER_LSTM)
		memset(dc, 0, (size_t) (B * U) * sizeof(float));
	for (int64_t s = T - 1; s >= 0; s--)
	{
		int64_t		t = step_time(g, s);
		int64_t		tp = step_time(g, s - 1);
		float	   *gt = st->gates + t * S * U; /* (B, S*U), rows ldg apart */
		const float *xh = st->xh + t * (I + U);
		float	   *dht = dH + t * U;	/* (B, U), rows T*U apart */
		float	   *dhp = tp >= 0 ? dH + tp * U : NULL;

		/* the elementwise part: dG_t into gt, and what reaches h_prev directly */
		for (int64_t bi = 0; bi < B; bi++)
		{
			float	   *gr = gt + bi * ldg;
			const float *dh = dht + bi * T * U;
			const float *hp = xh + bi * ldxh + I;

			switch (g->cell)
			{
				case DL_LAYER_LSTM:
					lstm_backward_row(g, gr, dh, dc + bi * U, st->aux + (bi * T + t) * U,
									  tp >= 0 ? st->aux + (bi * T + tp) * U : NULL);
					break;
				case DL_LAYER_GRU:
					gru_backward_row(g, gr, dh, hp, dhp != NULL ? dhp + bi * T * U : NULL);
					break;
				default:
					memcpy(gr, dh, (size_t) U * sizeof(float));
					rnn_dact(g->act, gr, st->h + (bi * T + t) * U, U);
					break;
			}
		}
		if (g->cell == DL_LAYER_GRU && !g->reset_after)
		{
			/* d(r h_prev) = d(hh_pre) U_h^T, then dr and its share of dL/dh_prev */
			dl_sgemm(false, true, B, U, U, 1.0f, gt + 2 * U, ldg, Uk + 2 * U, GU, 0.0f, dc, U);
			for (int64_t bi = 0; bi < B; bi++)
				gru_reset_before_row(g, gt + bi * ldg, dc + bi * U, xh + bi * ldxh + I,
									 dhp != NULL ? dhp + bi * T * U : NULL);
		}

		/* dx_t = dG_t W^T (all G gates' columns) */
		if (dx != NULL)
			dl_sgemm(false, true, B, I, GU, 1.0f, gt, ldg, W, GU, add_dx ? 1.0f : 0.0f,
					 dx + t * I, T * I);
		/* dL/dh_prev += dG_t Uk^T (a GRU: z's and r's; with reset_after, rech's) */
		if (dhp == NULL)
			continue;
		if (g->cell != DL_LAYER_GRU)
			dl_sgemm(false, true, B, U, GU, 1.0f, gt, ldg, Uk, GU, 1.0f, dhp, T * U);
		else
		{
			dl_sgemm(false, true, B, U, 2 * U, 1.0f, gt, ldg, Uk, GU, 1.0f, dhp, T * U);
			if (g->reset_after)
				dl_sgemm(false, true, B, U, U, 1.0f, gt + 3 * U, ldg, Uk + 2 * U, GU, 1.0f, dhp,
						 T * U);
		}
	}

	/* every step's kernel gradients at once: [x, h_prev]^T dG */
	if (g->cell != DL_LAYER_GRU)
	{
		gemm_over_steps(I + U, GU, B * T, st->xh, I + U, st->gates, S * U, dw, GU);
		if (db != NULL)
			colsum_add(db, st->gates, B * T, GU, S * U);
		return;
	}
	gemm_over_steps(I + U, 2 * U, B * T, st->xh, I + U, st->gates, S * U, dw, GU);
	gemm_over_steps(I, U, B * T, st->xh, I + U, st->gates + 2 * U, S * U, dw + 2 * U, GU);
	if (g->reset_after)
		gemm_over_steps(U, U, B * T, st->xh + I, I + U, st->gates + 3 * U, S * U, dUk + 2 * U, GU);
	else
		gemm_over_steps(U, U, B * T, st->aux, U, st->gates + 2 * U, S * U, dUk + 2 * U, GU);
	if (db == NULL)
		return;
	colsum_add(db, st->gates, B * T, 3 * U, S * U);
	if (g->reset_after)
	{
		colsum_add(db + 3 * U, st->gates, B * T, 2 * U, S * U);
		colsum_add(db + 5 * U, st->gates + 3 * U, B * T, U, S * U);
	}
}

/* ---------------------------------------------------------------------
 * The layer's output, and its gradient for each direction
 * --------------------------------------------------------------------- */

void
dl_rnn_output(float *y, const float *hf, const float *hb, DlBidirMerge merge,
			  bool return_sequences, bool backwards, int64_t B, int64_t T, int64_t U)
{
	int64_t		steps = return_sequences ? T : 1;
	int64_t		width = merge == DL_BIDIR_CONCAT ? 2 * U : U;

	for (int64_t bi = 0; bi < B; bi++)
		for (int64_t s = 0; s < steps; s++)
		{
			/* output step s: time s; without the sequence the last step processed */
			int64_t		tf = return_sequences ? s : (backwards ? 0 : T - 1);
			int64_t		tb = return_sequences ? s : 0;
			const float *f;
			const float *r;
			float	   *yo = y + (bi * steps + s) * width;

			/* one direction going backwards: its outputs in the order it made them */
			if (hb == NULL && backwards && return_sequences)
				tf = T - 1 - s;
			f = hf + (bi * T + tf) * U;
			if (hb == NULL)
			{
				memcpy(yo, f, (size_t) U * sizeof(float));
				continue;
			}
			r = hb + (bi * T + tb) * U;
			for (int64_t u = 0; u < U; u++)
			{
				switch (merge)
				{
					case DL_BIDIR_CONCAT:
						yo[u] = f[u];
						yo[U + u] = r[u];
						break;
					case DL_BIDIR_SUM:
						yo[u] = f[u] + r[u];
						break;
					case DL_BIDIR_AVE:
						yo[u] = (f[u] + r[u]) * 0.5f;
						break;
					case DL_BIDIR_MUL:
						yo[u] = f[u] * r[u];
						break;
					case DL_BIDIR_NONE:
						break;
				}
			}
		}
}

void
dl_rnn_output_grad(float *dH, const float *dy, const float *other, int dir, DlBidirMerge merge,
				   bool return_sequences, bool backwards, int64_t B, int64_t T, int64_t U)
{
	int64_t		steps = return_sequences ? T : 1;
	int64_t		width = merge == DL_BIDIR_CONCAT ? 2 * U : U;
	bool		dir_backwards = merge != DL_BIDIR_NONE ? dir == 1 : backwards;

	memset(dH, 0, (size_t) (B * T * U) * sizeof(float));
	for (int64_t bi = 0; bi < B; bi++)
		for (int64_t s = 0; s < steps; s++)
		{
			int64_t		t = return_sequences ? s : (dir_backwards ? 0 : T - 1);
			const float *d = dy + (bi * steps + s) * width;
			float	   *dh = dH + (bi * T + t) * U;
			/* Multiply: the other direction's state of the same output */
			int64_t		to = return_sequences ? s : (dir_backwards ? T - 1 : 0);
			const float *o = other != NULL ? other + (bi * T + to) * U : NULL;

			if (merge == DL_BIDIR_NONE && backwards && return_sequences)
				dh = dH + (bi * T + T - 1 - s) * U;
			for (int64_t u = 0; u < U; u++)
			{
				switch (merge)
				{
					case DL_BIDIR_NONE:
					case DL_BIDIR_SUM:
						dh[u] = d[u];
						break;
					case DL_BIDIR_CONCAT:
						dh[u] = d[dir * U + u];
						break;
					case DL_BIDIR_AVE:
						dh[u] = d[u] * 0.5f;
						break;
					case DL_BIDIR_MUL:
						dh[u] = d[u] * o[u];
						break;
				}
			}
		}
}
