/*-------------------------------------------------------------------------
 *
 * tpe.c
 *	  The Tree-structured Parzen Estimator (dl_automl.h): hyperopt 0.2's
 *	  tpe.suggest over a search space of the grids (dl_model_select.h).
 *
 * Bergstra, Bardenet, Bengio, Kegl: "Algorithms for Hyper-Parameter
 * Optimization", NIPS 2011.  The observations are split by loss: the
 * best n_below = min(ceil(gamma * sqrt(n)), 25) are "below", the others
 * "above".  Each dimension is estimated on its own, from the observations
 * in which it was active (the arguments of an optimizer entry only where
 * that entry was chosen: the "tree"):
 *
 *	 a choice of m values: the weights of the observations of each value
 *	     (hyperopt's linear forgetting: past the newest 25, older ones
 *	     count less), plus prior_weight for each value, normalized;
 *	 a range: in the coordinate where it is uniform (dl_space_coord), a
 *	     mixture of normals, one at each observation and the prior at the
 *	     middle with sigma = the width; each observation's sigma is the
 *	     larger gap to its neighbours (the prior included), clipped to
 *	     [width / min(100, 1 + m), width]; the mixture is truncated to the
 *	     range (hyperopt's adaptive_parzen_normal and GMM1; as its LGMM1,
 *	     a log range's densities are not renormalized to the range).
 *
 * n_ei_candidates values are drawn from the "below" density l and the
 * one with the largest log l(x) - log g(x) is taken, the first of equal
 * ones.  The dimensions are taken in the space's order, so an optimizer
 * argument is proposed only when its entry was.
 *
 * IDENTIFICATION
 *	  src/engine/tpe.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "madlib_dl/dl_automl.h"

/* Draws of a truncated normal mixture before giving up on the bounds. */
#define TPE_MAX_DRAWS 10000

void
dl_tpe_default_options(DlTpeOptions *o)
{
	o->gamma = 0.25;
	o->n_ei_candidates = 24;
	o->prior_weight = 1.0;
	o->linear_forgetting = 25;
}

/* Scratch of one suggestion, sized for n observations. */
typedef struct TpeWork
{
	const DlTpeOptions *o;
	DlRng	   *rng;
	int			n;
	bool	   *below;			/* (n) in the "below" group */
	double	   *obs_b;			/* (n) one dimension's below observations */
	double	   *obs_a;			/* (n) its above observations */
	double	   *w;				/* (n + 1) mixture weights, or choice weights */
	double	   *mu;				/* (n + 1) */
	double	   *sig;			/* (n + 1) */
	double	   *w2;				/* (n + 1) the second mixture */
	double	   *mu2;
	double	   *sig2;
	double	   *lw;				/* (n) linear forgetting weights */
} TpeWork;

/*
 * hyperopt's linear_forgetting_weights(N, LF): ones when N < LF, else a
 * ramp from 1/N to 1 over the oldest N - LF, then LF ones.
 */
static void
forgetting_weights(double *w, int N, int LF)
{
	int			m = N - LF;

	for (int i = 0; i < N; i++)
		w[i] = 1.0;
	if (N < LF || m <= 0)
		return;
	for (int i = 0; i < m; i++)
		w[i] = m == 1 ? 1.0 / N : 1.0 / N + (1.0 - 1.0 / N) * i / (m - 1);
}

/* The smoothed, normalized weights of each of n_choices values in obs (m of them). */
static void
choice_probs(TpeWork *t, const double *obs, int m, int n_choices, double *p)
{
	double		sum = 0;

	forgetting_weights(t->lw, m, t->o->linear_forgetting);
	for (int k = 0; k < n_choices; k++)
		p[k] = t->o->prior_weight;
	for (int i = 0; i < m; i++)
		p[(int) obs[i]] += t->lw[i];
	for (int k = 0; k < n_choices; k++)
		sum += p[k];
	for (int k = 0; k < n_choices; k++)
		p[k] /= sum;
}

/* A choice: candidates from the below counts, scored against the above ones. */
static double
tpe_choice(TpeWork *t, int n_choices, int nb, int na)
{
	double	   *pb = t->w;
	double	   *pa = t->w2;
	int			best = 0;
	double		best_score = -INFINITY;

	if (n_choices == 1)
		return 0.0;
	choice_probs(t, t->obs_b, nb, n_choices, pb);
	choice_probs(t, t->obs_a, na, n_choices, pa);
	for (int c = 0; c < t->o->n_ei_candidates; c++)
	{
		double		u = dl_rng_uniform(t->rng);
		int			x = 0;
		double		score;

		for (double acc = pb[0]; acc <= u && x < n_choices - 1; acc += pb[++x])
			;
		score = log(pb[x]) - log(pa[x]);
		if (score > best_score)
		{
			best_score = score;
			best = x;
		}
	}
	return (double) best;
}

/*
 * hyperopt's adaptive_parzen_normal: the mixture of the m observations
 * obs (coordinates, in observation order) and the prior into w, mu, sig
 * (m + 1 components, sorted by mu).
 */
static void
parzen(TpeWork *t, const double *obs, int m, double prior_mu, double prior_sigma,
	   double *w, double *mu, double *sig)
{
	int			M = m + 1;
	int			prior_pos = 0;
	int			LF = t->o->linear_forgetting;
	double		minsig = prior_sigma / (M + 1.0 < 100.0 ? M + 1.0 : 100.0);
	double		sum = 0;

	forgetting_weights(t->lw, m, LF);
	/* insertion sort of the observations with their weights (m is small) */
	for (int i = 0; i < m; i++)
	{
		int			j = i;

		while (j > 0 && mu[j - 1] > obs[i])
		{
			mu[j] = mu[j - 1];
			w[j] = w[j - 1];
			j--;
		}
		mu[j] = obs[i];
		w[j] = (LF > 0 && LF < m) ? t->lw[i] : 1.0;
	}
	/* the prior goes before the first observation >= prior_mu (searchsorted) */
	while (prior_pos < m && mu[prior_pos] < prior_mu)
		prior_pos++;
	for (int j = m; j > prior_pos; j--)
	{
		mu[j] = mu[j - 1];
		w[j] = w[j - 1];
	}
	mu[prior_pos] = prior_mu;
	w[prior_pos] = t->o->prior_weight;

	if (m == 0)
		sig[0] = prior_sigma;
	else if (m == 1)
		sig[1 - prior_pos] = prior_sigma * 0.5;
	else
	{
		for (int j = 1; j < M - 1; j++)
			sig[j] = fmax(mu[j] - mu[j - 1], mu[j + 1] - mu[j]);
		sig[0] = mu[1] - mu[0];
		sig[M - 1] = mu[M - 1] - mu[M - 2];
	}
	for (int j = 0; j < M; j++)
	{
		sig[j] = fmin(fmax(sig[j], minsig), prior_sigma);
		sum += w[j];
	}
	sig[prior_pos] = prior_sigma;
	for (int j = 0; j < M; j++)
		w[j] /= sum;
}

static double
normal_cdf(double x, double mu, double sig)
{
	return 0.5 * erfc(-(x - mu) / (sig * M_SQRT2));
}

/*
 * log of the mixture (M components) at x, truncated to [lo, hi]:
 * renormalized by the mass inside when renorm (hyperopt's GMM1_lpdf; its
 * LGMM1_lpdf of log ranges is not).
 */
static double
mixture_lpdf(const double *w, const double *mu, const double *sig, int M, double lo, double hi,
			 bool renorm, double x)
{
	double		p_accept = 0;
	double		mx = -INFINITY;
	double		sum = 0;

	for (int j = 0; j < M; j++)
	{
		double		z = (x - mu[j]) / sig[j];
		double		l = log(w[j]) - 0.5 * z * z - log(sqrt(2.0 * M_PI) * sig[j]);

		p_accept += w[j] * (normal_cdf(hi, mu[j], sig[j]) - normal_cdf(lo, mu[j], sig[j]));
		mx = fmax(mx, l);
	}
	for (int j = 0; j < M; j++)
	{
		double		z = (x - mu[j]) / sig[j];

		sum += exp(log(w[j]) - 0.5 * z * z - log(sqrt(2.0 * M_PI) * sig[j]) - mx);
	}
	return mx + log(sum) - (renorm ? log(p_accept) : 0.0);
}

/* One draw of the mixture in [lo, hi): a component by weight, then its normal. */
static double
mixture_draw(TpeWork *t, const double *w, const double *mu, const double *sig, int M, double lo,
			 double hi)
{
	for (int tries = 0; tries < TPE_MAX_DRAWS; tries++)
	{
		double		u = dl_rng_uniform(t->rng);
		int			j = 0;
		double		x;

		for (double acc = w[0]; acc <= u && j < M - 1; acc += w[++j])
			;
		x = mu[j] + sig[j] * dl_rng_normal(t->rng);
		if (x >= lo && x < hi)
			return x;
	}
	return lo + (hi - lo) * dl_rng_uniform(t->rng);	/* never in practice */
}

/* A range: candidates from the below mixture, scored against the above one. */
static double
tpe_range(TpeWork *t, const DlSpaceDim *dim, int nb, int na)
{
	double		lo,
				hi,
				best = 0,
				best_score = -INFINITY;
	bool		renorm = dim->kind == DL_SPACE_LINEAR;

	dl_space_coord_bounds(dim, &lo, &hi);
	for (int i = 0; i < nb; i++)
		t->obs_b[i] = dl_space_coord(dim, t->obs_b[i]);
	for (int i = 0; i < na; i++)
		t->obs_a[i] = dl_space_coord(dim, t->obs_a[i]);
	parzen(t, t->obs_b, nb, 0.5 * (lo + hi), hi - lo, t->w, t->mu, t->sig);
	parzen(t, t->obs_a, na, 0.5 * (lo + hi), hi - lo, t->w2, t->mu2, t->sig2);
	for (int c = 0; c < t->o->n_ei_candidates; c++)
	{
		double		x = mixture_draw(t, t->w, t->mu, t->sig, nb + 1, lo, hi);
		double		score = mixture_lpdf(t->w, t->mu, t->sig, nb + 1, lo, hi, renorm, x) -
			mixture_lpdf(t->w2, t->mu2, t->sig2, na + 1, lo, hi, renorm, x);

		if (score > best_score)
		{
			best_score = score;
			best = x;
		}
	}
	return fmin(fmax(dl_space_value(dim, best), dim->low), dim->high);
}

/* Does observation a rank before b (loss, NaN last, then order)? */
static bool
ranks_before(const double *losses, int a, int b)
{
	if (isnan(losses[a]) != isnan(losses[b]))
		return !isnan(losses[a]);
	if (!isnan(losses[a]) && losses[a] != losses[b])
		return losses[a] < losses[b];
	return a < b;
}

/* Mark the best n_below observations of t->n as below. */
static void
split(TpeWork *t, const double *losses)
{
	int			n = t->n;
	int			n_below = (int) ceil(t->o->gamma * sqrt((double) n));

	if (n_below > t->o->linear_forgetting)
		n_below = t->o->linear_forgetting;
	for (int i = 0; i < n; i++)
	{
		int			rank = 0;

		for (int j = 0; j < n; j++)
			rank += ranks_before(losses, j, i) ? 1 : 0;
		t->below[i] = rank < n_below;
	}
}

DlStatus
dl_tpe_suggest(const DlSearchSpace *s, const double *points, const double *losses, int n,
			   const DlTpeOptions *o, DlRng *rng, double *out, const DlAllocator *alloc,
			   DlError *err)
{
	int			D = dl_search_space_n_dims(s);
	int			maxc = 1;
	size_t		nd;
	double	   *mem;
	bool	   *below;
	TpeWork		t;

	if (n < 0 || o->n_ei_candidates < 1 || !(o->gamma > 0) || !(o->prior_weight > 0) ||
		o->linear_forgetting < 1)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "bad TPE options or observations");
	for (int d = 0; d < D; d++)
		if (dl_search_space_dim(s, d)->n_choices > maxc)
			maxc = dl_search_space_dim(s, d)->n_choices;
	/* obs_b, obs_a, lw: n each; the two mixtures: 3 x max(n + 1, maxc) each */
	nd = (size_t) (maxc > n + 1 ? maxc : n + 1);
	mem = dl_alloc_array(alloc, 3 * (size_t) n + 6 * nd, sizeof(double), err);
	below = mem != NULL ? dl_alloc_array(alloc, (size_t) n + 1, sizeof(bool), err) : NULL;
	if (below == NULL)
	{
		dl_free(alloc, mem);
		return err->code;
	}
	memset(&t, 0, sizeof(t));
	t.o = o;
	t.rng = rng;
	t.n = n;
	t.below = below;
	t.obs_b = mem;
	t.obs_a = t.obs_b + n;
	t.lw = t.obs_a + n;
	t.w = t.lw + n;
	t.mu = t.w + nd;
	t.sig = t.mu + nd;
	t.w2 = t.sig + nd;
	t.mu2 = t.w2 + nd;
	t.sig2 = t.mu2 + nd;
	split(&t, losses);

	for (int d = 0; d < D; d++)
	{
		const DlSpaceDim *dim = dl_search_space_dim(s, d);
		int			nb = 0,
					na = 0;

		if (!dl_search_space_active(s, out, d))
		{
			out[d] = NAN;
			continue;
		}
		for (int i = 0; i < n; i++)
		{
			double		v = points[(size_t) i * D + d];

			if (isnan(v))
				continue;
			if (t.below[i])
				t.obs_b[nb++] = v;
			else
				t.obs_a[na++] = v;
		}
		out[d] = dim->kind == DL_SPACE_CHOICE ? tpe_choice(&t, dim->n_choices, nb, na)
			: tpe_range(&t, dim, nb, na);
	}
	dl_free(alloc, below);
	dl_free(alloc, mem);
	return DL_OK;
}
