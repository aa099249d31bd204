/*-------------------------------------------------------------------------
 *
 * automl.c
 *	  The searches of madlib_keras_automl (dl_automl.h): automl_params,
 *	  Hyperband's schedule, and the Hyperband, ASHA and Hyperopt
 *	  schedulers.
 *
 * automl_params is read with the engine's Python-literal lexer (pylit.c):
 * key=value pairs separated by commas, values integers (algorithm: a name
 * or a string).  Names are matched without regard to case; a key given
 * twice or unknown to the method is an error.
 *
 * Hyperband's arithmetic is exact: s_max is the largest s with eta^s <=
 * R (MADlib's floor(log(R, eta)) is one short for R = 243, eta = 3 and
 * R = 1000, eta = 10), n_i divides exactly, and r_i = R * eta^(i - s)
 * rounds halves up, as Python 2's round (MADlib 1.x) does.
 *
 * The scheduler keeps every configuration's state (new, running, waiting
 * at a rung, done) and the record of every finished job; each method
 * decides in next and report only, from the records, so the order of the
 * calls fixes the search (see dl_automl.h).
 *
 * IDENTIFICATION
 *	  src/engine/automl.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "madlib_dl/dl_automl.h"
#include "madlib_dl/dl_caps.h"
#include "madlib_dl/dl_pylit.h"

/* Longest key or value quoted in a message. */
#define AM_SHOW 40

#define HB_HINT "Write automl_params as 'R=6, eta=3, skip_last=0' (integers)."
#define HO_HINT "Write automl_params as 'num_configs=20, num_iterations=5, algorithm=tpe'."
#define ASHA_HINT "Write automl_params as 'R=6, eta=3, num_configs=20' (integers)."

/* ---------------------------------------------------------------------
 * Methods and parameters
 * --------------------------------------------------------------------- */

static const char *const method_names[] = {"hyperband", "hyperopt", "asha"};
static const char *const method_defaults[] = {
	"R=6, eta=3, skip_last=0",
	"num_configs=20, num_iterations=5, algorithm=tpe",
	"R=6, eta=3, num_configs=20"
};
static const char *const method_hints[] = {HB_HINT, HO_HINT, ASHA_HINT};

static char
lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
}

/* s[0, n) equals word, ignoring ASCII case. */
static bool
word_equal(const char *s, size_t n, const char *word)
{
	if (strlen(word) != n)
		return false;
	for (size_t k = 0; k < n; k++)
		if (lower(s[k]) != lower(word[k]))
			return false;
	return true;
}

/* Bytes of s[0, n) to show in a message: at most AM_SHOW, whole characters. */
static int
show(const char *s, size_t n)
{
	return (int) dl_text_clip(s, n, AM_SHOW);
}

DlStatus
dl_automl_method_from_name(const char *name, DlAutomlMethod *out, DlError *err)
{
	for (int m = 0; m < 3; m++)
		if (word_equal(name, strlen(name), method_names[m]))
		{
			*out = (DlAutomlMethod) m;
			return DL_OK;
		}
	dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
				 "automl_method must be 'hyperband', 'hyperopt' or 'asha', got '%.*s'",
				 show(name, strlen(name)), name);
	return dl_error_hint(err, "Use 'hyperband' (MADlib's default), 'hyperopt' (TPE or random) "
						 "or 'asha' (asynchronous successive halving).");
}

const char *
dl_automl_method_name(DlAutomlMethod m)
{
	return method_names[m];
}

const char *
dl_automl_default_params(DlAutomlMethod m)
{
	return method_defaults[m];
}

/* The keys of each method, in the order of the defaults. */
typedef struct ParamKey
{
	const char *name;
	int			offset;			/* of the int in DlAutomlParams; -1: algorithm */
} ParamKey;

static const ParamKey hb_keys[] = {
	{"R", offsetof(DlAutomlParams, R)},
	{"eta", offsetof(DlAutomlParams, eta)},
	{"skip_last", offsetof(DlAutomlParams, skip_last)},
	{NULL, 0}
};
static const ParamKey ho_keys[] = {
	{"num_configs", offsetof(DlAutomlParams, num_configs)},
	{"num_iterations", offsetof(DlAutomlParams, num_iterations)},
	{"algorithm", -1},
	{NULL, 0}
};
static const ParamKey asha_keys[] = {
	{"R", offsetof(DlAutomlParams, R)},
	{"eta", offsetof(DlAutomlParams, eta)},
	{"num_configs", offsetof(DlAutomlParams, num_configs)},
	{NULL, 0}
};

static const ParamKey *
method_keys(DlAutomlMethod m)
{
	return m == DL_AUTOML_HYPERBAND ? hb_keys : (m == DL_AUTOML_HYPEROPT ? ho_keys : asha_keys);
}

/* The syntax error "<problem> in automl_params at position P". */
static DlStatus
params_syntax(DlAutomlMethod m, const char *text, size_t at, const char *problem, DlError *err)
{
	if (text[at] == '\0')
		dl_error_set(err, DL_ERR_PARSE, "%s at the end of automl_params", problem);
	else
		dl_error_set(err, DL_ERR_PARSE, "%s at position %zu of automl_params, near \"%.*s\"",
					 problem, at + 1, show(text + at, strlen(text + at)), text + at);
	return dl_error_hint(err, "%s", method_hints[m]);
}

/* The value token tok of key k into p. */
static DlStatus
set_param(DlAutomlMethod m, const char *text, const ParamKey *k, const DlPylitToken *tok,
		  DlAutomlParams *p, DlError *err)
{
	const char *v = text + tok->begin;
	size_t		n = tok->end - tok->begin;

	if (k->offset < 0)
	{
		/* algorithm=tpe, or 'tpe' */
		if (tok->kind == DL_PYLIT_STRING && n >= 2)
		{
			v++;
			n -= 2;
		}
		if ((tok->kind == DL_PYLIT_NAME || tok->kind == DL_PYLIT_STRING) && word_equal(v, n, "tpe"))
			p->algorithm = DL_AUTOML_TPE;
		else if ((tok->kind == DL_PYLIT_NAME || tok->kind == DL_PYLIT_STRING) &&
				 word_equal(v, n, "rand"))
			p->algorithm = DL_AUTOML_RAND;
		else
		{
			dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
						 "algorithm in automl_params must be tpe or rand, got %.*s", show(v, n), v);
			return dl_error_hint(err, "Use algorithm=tpe (Tree-structured Parzen Estimator) or "
								 "algorithm=rand (random search).");
		}
		return DL_OK;
	}
	if (tok->kind != DL_PYLIT_INT || tok->i < INT32_MIN || tok->i > INT32_MAX)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "parameter %s of automl_params must be an integer, got %.*s",
					 k->name, show(v, n), v);
		return dl_error_hint(err, "%s", method_hints[m]);
	}
	*(int *) ((char *) p + k->offset) = (int) tok->i;
	return DL_OK;
}

/* Read text ("key=value, ...") into p, over the defaults already there. */
static DlStatus
read_params(DlAutomlMethod m, const char *text, DlAutomlParams *p, DlError *err)
{
	const ParamKey *keys = method_keys(m);
	bool		seen[3] = {false, false, false};
	DlPylitLexer lx;
	DlPylitToken tok;
	DlStatus	rc;

	dl_pylit_init(&lx, text, 0, strlen(text), DL_PYLIT_STRICT);
	dl_pylit_next(&lx, &tok);
	while (tok.kind != DL_PYLIT_END)
	{
		size_t		kb = tok.begin;
		size_t		kn = tok.end - tok.begin;
		int			k;

		if (tok.kind != DL_PYLIT_NAME)
			return params_syntax(m, text, tok.begin, "expected a parameter name", err);
		for (k = 0; keys[k].name != NULL && !word_equal(text + kb, kn, keys[k].name); k++)
			;
		if (keys[k].name == NULL)
		{
			dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "unknown parameter \"%.*s\" of %s in automl_params",
						 show(text + kb, kn), text + kb, method_names[m]);
			return dl_error_hint(err, "%s takes %s, %s and %s, for example '%s'.", method_names[m],
								 keys[0].name, keys[1].name, keys[2].name, method_defaults[m]);
		}
		if (seen[k])
		{
			dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "parameter %s is given twice in automl_params", keys[k].name);
			return dl_error_hint(err, "Give each parameter once.");
		}
		seen[k] = true;
		dl_pylit_next(&lx, &tok);
		if (tok.kind != DL_PYLIT_PUNCT || tok.ch != '=')
			return params_syntax(m, text, tok.begin, "expected \"=\" after the parameter name", err);
		dl_pylit_next(&lx, &tok);
		if (tok.kind == DL_PYLIT_END || tok.kind == DL_PYLIT_PUNCT)
			return params_syntax(m, text, tok.begin, "expected a value", err);
		if ((rc = set_param(m, text, &keys[k], &tok, p, err)) != DL_OK)
			return rc;
		dl_pylit_next(&lx, &tok);
		if (tok.kind == DL_PYLIT_PUNCT && tok.ch == ',')
			dl_pylit_next(&lx, &tok);
		else if (tok.kind != DL_PYLIT_END)
			return params_syntax(m, text, tok.begin, "expected \",\"", err);
	}
	return DL_OK;
}

/* s_max: the largest s with eta^s <= R (R >= eta >= 2), exactly. */
static int
hb_s_max(int R, int eta)
{
	int			s = 0;

	for (int64_t p = eta; p <= R; p *= eta)
		s++;
	return s;
}

/* eta^e (small: e <= s_max <= 30 and the result <= R). */
static int64_t
ipow(int eta, int e)
{
	int64_t		p = 1;

	while (e-- > 0)
		p *= eta;
	return p;
}

/* Configurations of bracket s: floor((s_max + 1) / (s + 1)) * eta^s. */
static int64_t
hb_n(int s_max, int eta, int s)
{
	return (int64_t) ((s_max + 1) / (s + 1)) * ipow(eta, s);
}

/* Iterations of round i of bracket s: round(R * eta^(i - s)), halves up. */
static int
hb_r(int R, int eta, int s, int i)
{
	int64_t		den = ipow(eta, s - i);

	return (int) ((2 * (int64_t) R + den) / (2 * den));
}

/* R and eta as Hyperband and ASHA need them. */
static DlStatus
check_r_eta(DlAutomlMethod m, int R, int eta, DlError *err)
{
	if (eta <= 1)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "eta must be greater than 1, got %d", eta);
		return dl_error_hint(err, "eta is the factor by which each round cuts the configurations, "
							 "for example eta=3.");
	}
	if (R < eta)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "eta must not be greater than R, got R=%d and eta=%d", R, eta);
		return dl_error_hint(err, "R is the most iterations one configuration trains; give R >= eta, "
							 "for example %s.", method_defaults[m]);
	}
	if (R > DL_AUTOML_MAX_ITERATIONS)
	{
		dl_error_set(err, DL_ERR_LIMIT, "most iterations R must be at most %d, got %d", DL_AUTOML_MAX_ITERATIONS, R);
		return dl_error_hint(err, "Give fewer iterations; with more epochs in fit_params_grid each "
							 "iteration does more.");
	}
	return DL_OK;
}

/* num_configs in 1..DL_AUTOML_MAX_CONFIGS. */
static DlStatus
check_num_configs(int n, DlError *err)
{
	if (n < 1)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "num_configs in automl_params must be > 0, got %d", n);
		return dl_error_hint(err, "Give the number of configurations to try, for example num_configs=20.");
	}
	if (n > DL_AUTOML_MAX_CONFIGS)
	{
		dl_error_set(err, DL_ERR_LIMIT, "num_configs in automl_params must be at most %d, got %d",
					 DL_AUTOML_MAX_CONFIGS, n);
		return dl_error_hint(err, "Try at most %d configurations in one call.", DL_AUTOML_MAX_CONFIGS);
	}
	return DL_OK;
}

/* The checks of p after reading. */
static DlStatus
check_params(const DlAutomlParams *p, DlError *err)
{
	DlHyperbandRound rows[DL_HYPERBAND_MAX_ROUNDS];
	int			n;
	DlStatus	rc;

	switch (p->method)
	{
		case DL_AUTOML_HYPERBAND:
			return dl_hyperband_schedule(p->R, p->eta, p->skip_last, rows, &n, NULL, err);
		case DL_AUTOML_ASHA:
			if ((rc = check_r_eta(p->method, p->R, p->eta, err)) != DL_OK)
				return rc;
			return check_num_configs(p->num_configs, err);
		case DL_AUTOML_HYPEROPT:
			if ((rc = check_num_configs(p->num_configs, err)) != DL_OK)
				return rc;
			if (p->num_iterations < 1 || p->num_iterations > DL_AUTOML_MAX_ITERATIONS)
			{
				dl_error_set(err, p->num_iterations < 1 ? DL_ERR_INVALID_ARGUMENT : DL_ERR_LIMIT,
							 "num_iterations in automl_params must be between 1 and %d, got %d",
							 DL_AUTOML_MAX_ITERATIONS, p->num_iterations);
				return dl_error_hint(err, "Give the iterations each configuration trains, for example "
									 "num_iterations=5.");
			}
			return DL_OK;
	}
	return DL_OK;
}

DlStatus
dl_automl_params_parse(DlAutomlMethod method, const char *text, DlAutomlParams *out,
					   DlError *err)
{
	DlStatus	rc;
	bool		blank = true;

	memset(out, 0, sizeof(*out));
	out->method = method;
	if (text != NULL &&
		dl_text_check_cap("automl_params", strlen(text), DL_PARAMS_MAX_BYTES, err) != DL_OK)
		return DL_ERR_LIMIT;
	rc = read_params(method, method_defaults[method], out, err);
	if (rc != DL_OK)
		return rc;
	for (const char *c = text; c != NULL && *c != '\0'; c++)
		blank = blank && dl_pylit_is_space(*c);
	if (!blank && (rc = read_params(method, text, out, err)) != DL_OK)
		return rc;
	return check_params(out, err);
}

int
dl_automl_max_iterations(const DlAutomlParams *p)
{
	if (p->method == DL_AUTOML_HYPEROPT)
		return p->num_iterations;
	if (p->method == DL_AUTOML_ASHA)
		return p->R;
	/* Hyperband: the last round of bracket s_max */
	return hb_r(p->R, p->eta, hb_s_max(p->R, p->eta), hb_s_max(p->R, p->eta) - p->skip_last);
}

int
dl_automl_max_configs(const DlAutomlParams *p)
{
	int64_t		n = 0;
	int			s_max;

	if (p->method != DL_AUTOML_HYPERBAND)
		return p->num_configs;
	s_max = hb_s_max(p->R, p->eta);
	for (int s = s_max; s >= p->skip_last; s--)
		n += hb_n(s_max, p->eta, s);
	return (int) n;
}

DlStatus
dl_hyperband_schedule(int R, int eta, int skip_last, DlHyperbandRound *rows, int *n, int *s_max_out,
					  DlError *err)
{
	DlStatus	rc = check_r_eta(DL_AUTOML_HYPERBAND, R, eta, err);
	int			s_max;
	int64_t		total = 0;

	*n = 0;
	if (rc != DL_OK)
		return rc;
	s_max = hb_s_max(R, eta);
	if (skip_last < 0 || skip_last > s_max)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
					 "skip_last must be non-negative and less than %d, got %d", s_max + 1, skip_last);
		return dl_error_hint(err, "With R=%d and eta=%d each bracket has at most %d rounds; skip_last "
							 "leaves out the last ones, 0 to %d of them.", R, eta, s_max + 1, s_max);
	}
	for (int s = s_max; s >= skip_last; s--)
		total += hb_n(s_max, eta, s);
	if (total > DL_AUTOML_MAX_CONFIGS)
	{
		dl_error_set(err, DL_ERR_LIMIT, "hyperband with R=%d and eta=%d tries %lld configurations, more than %d",
					 R, eta, (long long) total, DL_AUTOML_MAX_CONFIGS);
		return dl_error_hint(err, "Give a smaller R, a larger eta or a larger skip_last.");
	}
	for (int s = s_max; s >= 0; s--)
		for (int i = 0; i <= s - skip_last; i++)
		{
			DlHyperbandRound *row = &rows[(*n)++];

			row->s = s;
			row->i = i;
			row->n_i = (int) (hb_n(s_max, eta, s) / ipow(eta, i));
			row->r_i = hb_r(R, eta, s, i);
		}
	if (s_max_out != NULL)
		*s_max_out = s_max;
	return DL_OK;
}

/* ---------------------------------------------------------------------
 * The scheduler
 * --------------------------------------------------------------------- */

typedef enum CfgState
{
	CFG_NEW,					/* not started */
	CFG_RUNNING,				/* a job of it runs */
	CFG_WAITING,				/* finished a rung, may be promoted */
	CFG_DONE					/* will not train again */
} CfgState;

typedef struct AmConfig
{
	CfgState	state;
	int			bracket;		/* HYPERBAND: s; -1 otherwise */
	int			rung;			/* the rung it trains, or finished last */
	int			total;			/* iterations at the end of that rung */
	double		score;			/* at the end of that rung */
} AmConfig;

/* A Hyperband bracket: successive halving of n configurations. */
typedef struct HbBracket
{
	int			s;
	int			first;			/* its first configuration */
	int			n;				/* configurations */
	int			round;			/* the round under way */
	int			last_round;		/* s - skip_last */
	int		   *members;		/* (n) the configurations in the round */
	int			n_members;
	int			started;		/* members started in the round */
	int			reported;		/* members reported in the round */
} HbBracket;

struct DlAutoml
{
	DlAutomlParams p;
	const DlSearchSpace *space;
	int			n_dims;
	int			n_workers;
	DlAllocator alloc;
	int64_t		seed;			/* random_state, or the entropy */
	int			capacity;		/* configurations at most */
	int			n_configs;		/* created */
	double	   *points;			/* (capacity, n_dims) */
	AmConfig   *cfg;			/* (capacity) */
	DlAutomlRecord *rec;		/* (cap_rec) */
	int			n_rec;
	int			cap_rec;
	int			running;
	int			s_max;			/* HYPERBAND, ASHA */
	int			n_brackets;		/* HYPERBAND */
	HbBracket  *br;				/* (n_brackets), s_max first */
	int			batch_left;		/* HYPEROPT: to start in this batch */
	int			n_startup;		/* HYPEROPT tpe: random ones first */
	DlTpeOptions tpe;
	double	   *obs_points;		/* HYPEROPT tpe: (capacity, n_dims) */
	double	   *obs_losses;		/* (capacity) */
	int		   *keys;			/* (cap_rec) scratch of the rankings */
	double	   *scores;			/* (cap_rec) */
};

static double *
point_of(DlAutoml *a, int c)
{
	return a->points + (size_t) c * a->n_dims;
}

/* Draw configuration c at random, as random search would. */
static void
draw_config(DlAutoml *a, int c)
{
	DlRng		rng;

	dl_search_space_seed(&rng, a->seed, c);
	dl_search_space_sample(a->space, &rng, point_of(a, c));
}

/* Rounds of bracket s (and its members) made; every configuration drawn. */
static DlStatus
hb_setup(DlAutoml *a, DlError *err)
{
	int			first = 0;

	a->s_max = hb_s_max(a->p.R, a->p.eta);
	a->n_brackets = a->s_max - a->p.skip_last + 1;
	a->br = dl_alloc_array(&a->alloc, (size_t) a->n_brackets, sizeof(HbBracket), err);
	if (a->br == NULL)
		return err->code;
	memset(a->br, 0, sizeof(HbBracket) * (size_t) a->n_brackets);
	for (int b = 0; b < a->n_brackets; b++)
	{
		HbBracket  *br = &a->br[b];

		br->s = a->s_max - b;
		br->first = first;
		br->n = (int) hb_n(a->s_max, a->p.eta, br->s);
		br->last_round = br->s - a->p.skip_last;
		br->members = dl_alloc_array(&a->alloc, (size_t) br->n, sizeof(int), err);
		if (br->members == NULL)
			return err->code;
		for (int k = 0; k < br->n; k++)
		{
			br->members[k] = first + k;
			a->cfg[first + k].bracket = br->s;
		}
		br->n_members = br->n;
		first += br->n;
	}
	a->n_configs = first;
	return DL_OK;
}

DlStatus
dl_automl_create(const DlAutomlParams *p, const DlSearchSpace *s, int n_workers,
				 bool has_random_state, int64_t random_state, uint64_t entropy,
				 const DlAllocator *alloc, DlAutoml **out, DlError *err)
{
	DlAutoml   *a;
	DlStatus	rc = DL_OK;
	int			rungs;

	*out = NULL;
	if (n_workers < 1)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "a search needs at least one worker");
	a = dl_alloc(alloc, sizeof(DlAutoml), err);
	if (a == NULL)
		return err->code;
	memset(a, 0, sizeof(*a));
	a->p = *p;
	a->space = s;
	a->n_dims = dl_search_space_n_dims(s);
	a->n_workers = n_workers;
	a->alloc = *alloc;
	a->seed = has_random_state ? random_state : (int64_t) entropy;
	a->capacity = dl_automl_max_configs(p);
	a->s_max = p->method == DL_AUTOML_HYPEROPT ? 0 : hb_s_max(p->R, p->eta);
	rungs = p->method == DL_AUTOML_HYPEROPT ? 1 : a->s_max + 1;
	a->cap_rec = a->capacity * rungs;
	a->points = dl_alloc_array(alloc, (size_t) a->capacity * (size_t) a->n_dims, sizeof(double), err);
	a->cfg = a->points ? dl_alloc_array(alloc, (size_t) a->capacity, sizeof(AmConfig), err) : NULL;
	a->rec = a->cfg ? dl_alloc_array(alloc, (size_t) a->cap_rec, sizeof(DlAutomlRecord), err) : NULL;
	a->keys = a->rec ? dl_alloc_array(alloc, (size_t) a->cap_rec, sizeof(int), err) : NULL;
	a->scores = a->keys ? dl_alloc_array(alloc, (size_t) a->cap_rec, sizeof(double), err) : NULL;
	if (a->scores == NULL)
	{
		dl_automl_free(a);
		return err->code;
	}
	memset(a->cfg, 0, sizeof(AmConfig) * (size_t) a->capacity);
	for (int c = 0; c < a->capacity; c++)
		a->cfg[c].bracket = -1;
	if (p->method == DL_AUTOML_HYPERBAND)
		rc = hb_setup(a, err);
	else if (p->method == DL_AUTOML_HYPEROPT && p->algorithm == DL_AUTOML_TPE)
	{
		dl_tpe_default_options(&a->tpe);
		a->n_startup = p->num_configs / 4 < 20 ? p->num_configs / 4 : 20;
		if (a->n_startup < 1)
			a->n_startup = 1;
		a->obs_points = dl_alloc_array(alloc, (size_t) a->capacity * (size_t) a->n_dims,
									   sizeof(double), err);
		a->obs_losses = a->obs_points ? dl_alloc_array(alloc, (size_t) a->capacity, sizeof(double), err)
			: NULL;
		if (a->obs_losses == NULL)
			rc = err->code;
	}
	if (rc != DL_OK)
	{
		dl_automl_free(a);
		return rc;
	}
	if (dl_automl_configs_known(a))
		for (int c = 0; c < a->capacity; c++)
			draw_config(a, c);
	*out = a;
	return DL_OK;
}

void
dl_automl_free(DlAutoml *a)
{
	DlAllocator alloc;

	if (a == NULL)
		return;
	alloc = a->alloc;
	for (int b = 0; a->br != NULL && b < a->n_brackets; b++)
		dl_free(&alloc, a->br[b].members);
	dl_free(&alloc, a->br);
	dl_free(&alloc, a->obs_points);
	dl_free(&alloc, a->obs_losses);
	dl_free(&alloc, a->scores);
	dl_free(&alloc, a->keys);
	dl_free(&alloc, a->rec);
	dl_free(&alloc, a->cfg);
	dl_free(&alloc, a->points);
	dl_free(&alloc, a);
}

/* Start configuration c's job at rung (the iterations from its total so far to total). */
static void
start_job(DlAutoml *a, int c, int rung, int total, DlAutomlJob *job)
{
	AmConfig   *cf = &a->cfg[c];

	job->config = c;
	job->bracket = cf->bracket;
	job->rung = rung;
	job->iterations = total - (cf->state == CFG_NEW ? 0 : cf->total);
	job->total = total;
	cf->state = CFG_RUNNING;
	cf->rung = rung;
	cf->total = total;
	a->running++;
}

/* Does key x rank before key y by score[] (NaN last), then by key? */
static bool
better(int x, int y, const double *score)
{
	if (isnan(score[x]) != isnan(score[y]))
		return !isnan(score[x]);
	if (!isnan(score[x]) && score[x] != score[y])
		return score[x] < score[y];
	return x < y;
}

/* Sort keys[0..n) best first by score[key] (insertion sort: n is small). */
static void
rank_keys(int *keys, const double *score, int n)
{
	for (int i = 1; i < n; i++)
	{
		int			v = keys[i];
		int			j = i - 1;

		while (j >= 0 && better(v, keys[j], score))
		{
			keys[j + 1] = keys[j];
			j--;
		}
		keys[j + 1] = v;
	}
}

/* The record of configuration c at rung (the latest), or NULL. */
static DlAutomlRecord *
record_of(DlAutoml *a, int c, int rung)
{
	for (int i = a->n_rec - 1; i >= 0; i--)
		if (a->rec[i].config == c && a->rec[i].rung == rung)
			return &a->rec[i];
	return NULL;
}

/* Hyperband: the next member of a bracket's round not started yet. */
static bool
hb_next(DlAutoml *a, DlAutomlJob *job)
{
	for (int b = 0; b < a->n_brackets; b++)
	{
		HbBracket  *br = &a->br[b];

		if (br->started < br->n_members)
		{
			start_job(a, br->members[br->started++], br->round,
					  hb_r(a->p.R, a->p.eta, br->s, br->round), job);
			return true;
		}
	}
	return false;
}

/*
 * Hyperband: the round of br is over; its best n_{i+1} with a finite
 * score go on to the next round, the others are done.
 */
static void
hb_round_end(DlAutoml *a, HbBracket *br)
{
	int			keep = 0;

	if (br->round < br->last_round)
	{
		int			want = (int) (hb_n(a->s_max, a->p.eta, br->s) / ipow(a->p.eta, br->round + 1));

		for (int k = 0; k < br->n_members; k++)
			a->scores[br->members[k]] = a->cfg[br->members[k]].score;
		rank_keys(br->members, a->scores, br->n_members);
		for (int k = 0; k < br->n_members && keep < want; k++)
			if (!isnan(a->cfg[br->members[k]].score))
				br->members[keep++] = br->members[k];
	}
	for (int k = 0; k < keep; k++)
		record_of(a, br->members[k], br->round)->promoted = true;
	for (int c = br->first; c < br->first + br->n; c++)
		if (a->cfg[c].state == CFG_WAITING && record_of(a, c, br->round) != NULL &&
			!record_of(a, c, br->round)->promoted)
			a->cfg[c].state = CFG_DONE;
	br->n_members = keep;
	br->round++;
	br->started = br->reported = 0;
}

/*
 * ASHA: the record to promote from rung k, or -1: the best one in the top
 * floor(n_k / eta) of the n_k records of rung k that is not promoted yet
 * and has a finite score.
 */
static int
asha_promotable(DlAutoml *a, int k)
{
	int			n = 0;

	for (int i = 0; i < a->n_rec; i++)
		if (a->rec[i].rung == k)
		{
			a->keys[n++] = i;
			a->scores[i] = a->rec[i].score;
		}
	rank_keys(a->keys, a->scores, n);
	for (int j = 0; j < n / a->p.eta; j++)
	{
		const DlAutomlRecord *r = &a->rec[a->keys[j]];

		if (!r->promoted && !isnan(r->score) && a->cfg[r->config].state == CFG_WAITING)
			return a->keys[j];
	}
	return -1;
}

/* ASHA: promote the best waiting one of the highest rung, else start a new one. */
static bool
asha_next(DlAutoml *a, DlAutomlJob *job)
{
	if (a->running >= a->n_workers)
		return false;
	for (int k = a->s_max - 1; k >= 0; k--)
	{
		int			r = asha_promotable(a, k);

		if (r >= 0)
		{
			a->rec[r].promoted = true;
			start_job(a, a->rec[r].config, k + 1, hb_r(a->p.R, a->p.eta, a->s_max, k + 1), job);
			return true;
		}
	}
	if (a->n_configs >= a->capacity)
		return false;
	start_job(a, a->n_configs++, 0, hb_r(a->p.R, a->p.eta, a->s_max, 0), job);
	return true;
}

/* Hyperopt: the next configuration of the batch, drawn or proposed by TPE. */
static bool
ho_next(DlAutoml *a, DlAutomlJob *job, DlError *err)
{
	int			c = a->n_configs;

	if (a->batch_left == 0)
	{
		if (a->running > 0 || c >= a->capacity)
			return false;
		a->batch_left = a->capacity - c < a->n_workers ? a->capacity - c : a->n_workers;
	}
	if (a->p.algorithm == DL_AUTOML_TPE && c >= a->n_startup)
	{
		DlRng		rng;

		/*
		 * Every configuration so far, in order: a running one (of this
		 * batch) with an infinite loss, as hyperopt counts trials still
		 * running, so that a batch spreads out.
		 */
		for (int k = 0; k < c; k++)
		{
			memcpy(a->obs_points + (size_t) k * a->n_dims, point_of(a, k),
				   sizeof(double) * (size_t) a->n_dims);
			a->obs_losses[k] = a->cfg[k].state == CFG_DONE ? a->cfg[k].score : INFINITY;
		}
		dl_search_space_seed(&rng, a->seed, c);
		if (dl_tpe_suggest(a->space, a->obs_points, a->obs_losses, c, &a->tpe, &rng,
						   point_of(a, c), &a->alloc, err) != DL_OK)
			return false;
	}
	else if (a->p.algorithm == DL_AUTOML_TPE)
		draw_config(a, c);
	a->n_configs++;
	a->batch_left--;
	start_job(a, c, 0, a->p.num_iterations, job);
	return true;
}

bool
dl_automl_next(DlAutoml *a, DlAutomlJob *job, DlError *err)
{
	switch (a->p.method)
	{
		case DL_AUTOML_HYPERBAND:
			return hb_next(a, job);
		case DL_AUTOML_ASHA:
			return asha_next(a, job);
		case DL_AUTOML_HYPEROPT:
			return ho_next(a, job, err);
	}
	return false;
}

void
dl_automl_report(DlAutoml *a, int c, double score)
{
	AmConfig   *cf;
	DlAutomlRecord *r;

	if (c < 0 || c >= a->n_configs || a->cfg[c].state != CFG_RUNNING || a->n_rec >= a->cap_rec)
		return;
	cf = &a->cfg[c];
	cf->score = score;
	a->running--;
	r = &a->rec[a->n_rec++];
	r->config = c;
	r->bracket = cf->bracket;
	r->rung = cf->rung;
	r->total = cf->total;
	r->score = score;
	r->promoted = false;
	switch (a->p.method)
	{
		case DL_AUTOML_HYPERBAND:
			{
				HbBracket  *br = &a->br[a->s_max - cf->bracket];

				cf->state = CFG_WAITING;
				if (++br->reported == br->n_members)
					hb_round_end(a, br);
				break;
			}
		case DL_AUTOML_ASHA:
			cf->state = cf->rung < a->s_max && !isnan(score) ? CFG_WAITING : CFG_DONE;
			break;
		case DL_AUTOML_HYPEROPT:
			cf->state = CFG_DONE;
			break;
	}
}

int
dl_automl_running(const DlAutoml *a)
{
	return a->running;
}

int
dl_automl_n_configs(const DlAutoml *a)
{
	return a->n_configs;
}

int
dl_automl_capacity(const DlAutoml *a)
{
	return a->capacity;
}

bool
dl_automl_configs_known(const DlAutoml *a)
{
	return a->p.method != DL_AUTOML_HYPEROPT || a->p.algorithm == DL_AUTOML_RAND;
}

const double *
dl_automl_point(const DlAutoml *a, int c)
{
	return a->points + (size_t) c * a->n_dims;
}

int
dl_automl_bracket(const DlAutoml *a, int c)
{
	return c >= 0 && c < a->capacity ? a->cfg[c].bracket : -1;
}

int
dl_automl_n_records(const DlAutoml *a)
{
	return a->n_rec;
}

const DlAutomlRecord *
dl_automl_record(const DlAutoml *a, int i)
{
	return &a->rec[i];
}

int64_t
dl_automl_planned_work(const DlAutoml *a)
{
	const DlAutomlParams *p = &a->p;
	int64_t		work = 0;

	if (p->method == DL_AUTOML_HYPEROPT)
		return (int64_t) p->num_configs * p->num_iterations;
	if (p->method == DL_AUTOML_HYPERBAND)
	{
		for (int s = a->s_max; s >= p->skip_last; s--)
			for (int i = 0; i <= s - p->skip_last; i++)
				work += hb_n(a->s_max, p->eta, s) / ipow(p->eta, i) *
					(hb_r(p->R, p->eta, s, i) - (i > 0 ? hb_r(p->R, p->eta, s, i - 1) : 0));
		return work;
	}
	/* ASHA: num_configs at rung 0, a 1/eta share of them at each next rung */
	for (int k = 0; k <= a->s_max; k++)
		work += (int64_t) p->num_configs / ipow(p->eta, k) *
			(hb_r(p->R, p->eta, a->s_max, k) - (k > 0 ? hb_r(p->R, p->eta, a->s_max, k - 1) : 0));
	return work;
}
