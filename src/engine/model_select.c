/*-------------------------------------------------------------------------
 *
 * model_select.c
 *	  The configurations of generate_model_configs (dl_model_select.h):
 *	  MADlib's grid syntax, grid search and random search.
 *
 * GRIDS (parsed by model_grid.c) map parameter names to lists of
 * choices; the compile grid may hold optimizer_params_list, a list of
 * dicts that are alternatives, each mapping 'optimizer' and the
 * optimizer's arguments to lists.  This file checks them.
 *
 * GRID SEARCH follows madlib_keras_model_selection.py_in: for each entry
 * of optimizer_params_list (or once without one), the Cartesian product
 * over the compile keys (the entry's own product standing for the
 * optimizer), then the fit keys, then the model ids, the last varying
 * fastest.  A list [lo, hi, 'linear'|'log'|'log_near_one'] is a
 * distribution and is refused.
 *
 * RANDOM SEARCH draws num_configs configurations, each in MADlib's draw
 * order: the model id, then each compile key (for optimizer_params_list
 * the entry, then each of its arguments), then each fit key.  The
 * generator is the engine's DlRng, not numpy's, so the values differ from
 * MADlib's.  Configuration k is drawn from a generator seeded with
 * base + k, where base is the first output of a generator seeded with
 * random_state: the same random_state gives the same rows, and the first
 * rows do not depend on num_configs.  (MADlib reseeds numpy with
 * random_state + d before every draw d; its seed sequences for nearby
 * random_states fall into step after a configuration of another size, so
 * random_state 7 and 8 give mostly the same rows.  Scrambling the
 * random_state first avoids that.)  Without random_state the generator
 * is seeded once from the caller's entropy.
 *
 * SEARCH SPACES (dl_search_space_*) are the grids as random search reads
 * them, one dimension per draw; random search draws its configurations
 * through them, and the AutoML searches (automl.c, tpe.c) choose their
 * points in them.
 *
 * ROW STRINGS are built as MADlib's generate_row_string does: the
 * optimizer first, optimizer='Name(arg=value,...)', then the other keys
 * in the order of the grid, key=value joined by ",", strings quoted,
 * metrics wrapped in a list, numbers as Python's repr writes them.
 *
 * Everything (the parsed grids, the rows) is allocated in model_grid.c's
 * arena of blocks from the caller's allocator, freed at once.
 *
 * IDENTIFICATION
 *	  src/engine/model_select.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "madlib_dl/dl_caps.h"
#include "madlib_dl/dl_model_select.h"
#include "madlib_dl/dl_pylit.h"
#include "madlib_dl/dl_rng.h"
#include "madlib_dl/dl_strbuf.h"
#include "model_grid.h"

#define OPL_KEY "optimizer_params_list"

/* ---------------------------------------------------------------------
 * Grid validation
 * ---------------------------------------------------------------------
 */

static const char *const distributions[] = {"linear", "log", "log_near_one"};

/* [x, ..., 'name'] with only the last item a string, as MADlib tests it. */
static bool
is_distribution(const PyVal *list)
{
	if (list->n < 2 || list->items[list->n - 1]->kind != PY_STR)
		return false;
	for (int k = 0; k < list->n - 1; k++)
		if (list->items[k]->kind == PY_STR)
			return false;
	return true;
}

static bool
is_known_distribution(const char *name)
{
	for (size_t k = 0; k < sizeof(distributions) / sizeof(distributions[0]); k++)
		if (strcmp(name, distributions[k]) == 0)
			return true;
	return false;
}

static double
num_value(const PyVal *v)
{
	return v->kind == PY_INT ? (double) v->i : v->f;
}

/* A distribution in random search: 3 items, known, numeric low < high, in its domain. */
static DlStatus
check_distribution(const PyVal *list, const char *key, const char *what, DlError *err)
{
	const char *dist = list->items[list->n - 1]->s;
	const PyVal *lo,
			   *hi;
	char		shown[MS_SHOW_BUF];

	if (list->n != 3)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "distribution of \"%s\" in %s must have 3 items, got %d: %s",
					 key, what, list->n, dl_grid_show_val(list, shown));
		return dl_error_hint(err, "Write a distribution as [low, high, 'linear'], [low, high, 'log'] or "
							 "[low, high, 'log_near_one'].");
	}
	if (!is_known_distribution(dist))
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "unknown distribution '%.*s' for \"%s\" in %s",
					 dl_grid_show_text(dist), dist, key, what);
		return dl_error_hint(err, "The distributions are 'linear', 'log' and 'log_near_one'.");
	}
	lo = list->items[0];
	hi = list->items[1];
	if ((lo->kind != PY_INT && lo->kind != PY_FLOAT) || (hi->kind != PY_INT && hi->kind != PY_FLOAT))
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "bounds of the distribution of \"%s\" in %s must be numbers: %s",
					 key, what, dl_grid_show_val(list, shown));
		return dl_error_hint(err, "Write a distribution as [low, high, '%s'].", dist);
	}
	if (!(num_value(hi) > num_value(lo)))
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "distribution of \"%s\" in %s must have low < high: %s",
					 key, what, dl_grid_show_val(list, shown));
		return dl_error_hint(err, "Write a distribution as [low, high, '%s'].", dist);
	}
	if (strcmp(dist, "log") == 0 && !(num_value(lo) > 0))
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "'log' distribution of \"%s\" in %s needs 0 < low: %s",
					 key, what, dl_grid_show_val(list, shown));
		return dl_error_hint(err, "Give positive bounds, or use 'linear'.");
	}
	if (strcmp(dist, "log_near_one") == 0 && !(num_value(hi) < 1))
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "'log_near_one' distribution of \"%s\" in %s needs high < 1: %s",
					 key, what, dl_grid_show_val(list, shown));
		return dl_error_hint(err, "Give bounds below 1, for example [0.9, 0.999, 'log_near_one'].");
	}
	return DL_OK;
}

/*
 * Check one list of choices for key in what.  In grid search a
 * distribution is refused; in random search it must be well formed.
 */
static DlStatus
check_choices(const PyVal *list, const char *key, const char *what, bool random, DlError *err)
{
	char		shown[MS_SHOW_BUF];

	if (list->kind != PY_LIST)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "value of \"%s\" in %s must be a list, got %s %s",
					 key, what, dl_grid_kind_name(list->kind), dl_grid_show_val(list, shown));
		return dl_error_hint(err, "Write every value as a list of choices, for example 'epochs': [10] "
							 "or 'lr': [0.01, 0.1].");
	}
	if (list->n == 0)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "list of \"%s\" in %s is empty", key, what);
		return dl_error_hint(err, "Give at least one value to try, or remove the key.");
	}
	if (!is_distribution(list))
		return DL_OK;
	if (random)
		return check_distribution(list, key, what, err);
	if (is_known_distribution(list->items[list->n - 1]->s))
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "cannot search from a distribution with grid search: \"%s\" in %s is %s",
					 key, what, dl_grid_show_val(list, shown));
		return dl_error_hint(err, "Use search_type => 'random' with num_configs to sample from a "
							 "distribution, or list the values to try.");
	}
	return DL_OK;
}

/* Key k of dict must be a parameter name given once. */
static DlStatus
check_param_key(const PyVal *dict, int k, const char *what, DlError *err)
{
	const PyVal *key = dict->keys[k];
	char		shown[MS_SHOW_BUF];

	if (key->kind != PY_STR || !dl_pylit_is_name(key->s, strlen(key->s)))
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "key %s at position %zu in %s is not a parameter name",
					 dl_grid_show_val(key, shown), key->pos, what);
		return dl_error_hint(err, "Keys are parameter names in quotes, for example 'batch_size'.");
	}
	for (int j = 0; j < k; j++)
		if (strcmp(dict->keys[j]->s, key->s) == 0)
		{
			dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "duplicate key '%s' at position %zu in %s",
						 key->s, key->pos, what);
			return dl_error_hint(err, "Give each parameter once, with all its values in one list.");
		}
	return DL_OK;
}

static int
find_key(const PyVal *dict, const char *name)
{
	for (int k = 0; k < dict->n; k++)
		if (strcmp(dict->keys[k]->s, name) == 0)
			return k;
	return -1;
}

/* Entry e of optimizer_params_list of grid g (what). */
static DlStatus
check_optimizer_entry(const PyVal *g, const PyVal *entry, int e, const char *what, bool random,
					  DlError *err)
{
	char		ctx[96];
	char		shown[MS_SHOW_BUF];
	DlStatus	rc;

	if (entry->kind != PY_DICT || entry->n == 0)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
					 "entry %d of optimizer_params_list in %s must be a non-empty dict, got %s",
					 e + 1, what, dl_grid_show_val(entry, shown));
		return dl_error_hint(err, "Each entry maps 'optimizer' and its arguments to lists, for example "
							 "{'optimizer': ['Adam'], 'lr': [0.001, 0.01]}.");
	}
	snprintf(ctx, sizeof(ctx), "optimizer_params_list entry %d of %s", e + 1, what);
	for (int j = 0; j < entry->n; j++)
	{
		const PyVal *list = entry->items[j];
		const char *okey;

		rc = check_param_key(entry, j, ctx, err);
		if (rc != DL_OK)
			return rc;
		okey = entry->keys[j]->s;
		if (find_key(g, okey) >= 0)
		{
			dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
						 "\"%s\" is both in optimizer_params_list and at the top of %s", okey, what);
			return dl_error_hint(err, "Put the optimizer and its arguments only inside "
								 "optimizer_params_list.");
		}
		rc = check_choices(list, okey, ctx, random, err);
		if (rc != DL_OK)
			return rc;
		if (strcmp(okey, "optimizer") != 0)
			continue;
		for (int c = 0; c < list->n; c++)
			if (list->items[c]->kind != PY_STR)
			{
				dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "optimizer %s in %s is not a name",
							 dl_grid_show_val(list->items[c], shown), ctx);
				return dl_error_hint(err, "Give optimizer names as strings, for example "
									 "'optimizer': ['SGD', 'Adam'].");
			}
	}
	return DL_OK;
}

/*
 * Check a whole grid (a dict of lists).  In the compile grid,
 * optimizer_params_list is a non-empty list of non-empty dicts of lists
 * whose keys do not appear at the top level.  *opl is the index of
 * optimizer_params_list, or -1.
 */
static DlStatus
check_grid(const PyVal *g, const char *what, bool compile, bool random, int *opl, DlError *err)
{
	DlStatus	rc;

	*opl = -1;
	if (g->kind != PY_DICT)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "%s must be a dict, got %s", what, dl_grid_kind_name(g->kind));
		return dl_error_hint(err, GRID_HINT);
	}
	for (int k = 0; k < g->n; k++)
	{
		rc = check_param_key(g, k, what, err);
		if (rc != DL_OK)
			return rc;
		if (compile && strcmp(g->keys[k]->s, OPL_KEY) == 0)
			*opl = k;
	}
	for (int k = 0; k < g->n; k++)
	{
		const PyVal *list = g->items[k];

		if (k != *opl)
		{
			rc = check_choices(list, g->keys[k]->s, what, random, err);
			if (rc != DL_OK)
				return rc;
			continue;
		}
		if (list->kind != PY_LIST || list->n == 0)
		{
			dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
						 "optimizer_params_list in %s must be a non-empty list of dicts", what);
			return dl_error_hint(err, "Write for example 'optimizer_params_list': [{'optimizer': ['SGD'], "
								 "'lr': [0.01, 0.1]}, {'optimizer': ['Adam'], 'lr': [0.001]}].");
		}
		for (int e = 0; e < list->n; e++)
		{
			rc = check_optimizer_entry(g, list->items[e], e, what, random, err);
			if (rc != DL_OK)
				return rc;
		}
	}
	return DL_OK;
}

/* ---------------------------------------------------------------------
 * Row strings
 * ---------------------------------------------------------------------
 */

static char
ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
}

static char
ascii_upper(char c)
{
	return c >= 'a' && c <= 'z' ? (char) (c - 'a' + 'A') : c;
}

/* Are a and b equal, ignoring ASCII case? */
static bool
ascii_case_equal(const char *a, const char *b)
{
	for (; *a != '\0' && *b != '\0'; a++, b++)
		if (ascii_lower(*a) != ascii_lower(*b))
			return false;
	return *a == *b;
}

/*
 * MADlib's spelling of an optimizer name: SGD, RMSprop, else the name
 * capitalized (adam -> Adam).
 */
static void
append_optimizer_name(DlStrBuf *buf, const char *name)
{
	if (ascii_case_equal(name, "sgd"))
		dl_strbuf_puts(buf, "SGD");
	else if (ascii_case_equal(name, "rmsprop"))
		dl_strbuf_puts(buf, "RMSprop");
	else
		for (const char *c = name; *c != '\0'; c++)
			dl_strbuf_putc(buf, c == name ? ascii_upper(*c) : ascii_lower(*c));
}

/* One grid's choices for one configuration. */
typedef struct GridChoice
{
	PyVal	   *g;				/* the grid dict */
	int			opl;			/* index of optimizer_params_list, or -1 */
	const PyVal **vals;			/* (g->n) the value of each key but opl */
	const PyVal *entry;			/* opl >= 0: the optimizer entry */
	const PyVal **ovals;		/* opl >= 0: the value of each of its keys */
	int			maxopt;			/* most keys of an optimizer entry (1 without) */
} GridChoice;

/*
 * The row string of one configuration into buf (reset first): the
 * optimizer call, then the other keys in the order of the grid.
 */
static void
row_string(DlStrBuf *buf, const GridChoice *ch)
{
	bool		first = true;

	dl_strbuf_reset(buf);
	if (ch->opl >= 0)
	{
		int			oname = find_key(ch->entry, "optimizer");
		bool		any = false;

		dl_strbuf_puts(buf, "optimizer='");
		/* MADlib's default when the entry names no optimizer */
		append_optimizer_name(buf, oname >= 0 ? ch->ovals[oname]->s : "RMSprop");
		dl_strbuf_putc(buf, '(');
		for (int j = 0; j < ch->entry->n; j++)
		{
			if (j == oname)
				continue;
			if (any)
				dl_strbuf_putc(buf, ',');
			dl_strbuf_printf(buf, "%s=", ch->entry->keys[j]->s);
			dl_grid_append_str(buf, ch->ovals[j]);
			any = true;
		}
		dl_strbuf_puts(buf, ")'");
		first = false;
	}
	for (int k = 0; k < ch->g->n; k++)
	{
		const char *key = ch->g->keys[k]->s;

		if (k == ch->opl)
			continue;
		if (!first)
			dl_strbuf_putc(buf, ',');
		first = false;
		dl_strbuf_printf(buf, "%s=", key);
		if (strcmp(key, "metrics") == 0 && ch->vals[k]->kind == PY_STR)
		{
			dl_strbuf_putc(buf, '[');
			dl_grid_append_repr(buf, ch->vals[k]);
			dl_strbuf_putc(buf, ']');
		}
		else
			dl_grid_append_repr(buf, ch->vals[k]);
	}
}

/* ---------------------------------------------------------------------
 * Configurations
 * ---------------------------------------------------------------------
 */

/* One dimension of a search space (dl_model_select.h). */
typedef struct SpaceDim
{
	DlSpaceDim	pub;
	const PyVal *list;			/* its choices, or its distribution */
	bool		compile;		/* of the compile grid (else the fit grid) */
	int			key;			/* its key in the grid; -1: the model id */
	int			okey;			/* its key in an optimizer entry, or -1 */
} SpaceDim;

/*
 * What the searches share: the parsed grids and ids.  As a DlSearchSpace
 * (random search's rules) it also has its dimensions.
 */
struct DlSearchSpace
{
	const DlModelSelectArgs *args;	/* dl_model_configs_generate only */
	MsArena    *arena;
	DlModelConfigs *out;		/* dl_model_configs_generate only */
	const int32_t *ids;			/* sorted, unique */
	int			nids;
	GridChoice	compile;
	GridChoice	fit;
	DlStrBuf	buf;			/* row strings are built here */
	DlError    *err;
	int			n_dims;
	SpaceDim   *dims;			/* (n_dims) */
	PyVal	   *slots;			/* (n_dims) values drawn from ranges */
};

typedef struct DlSearchSpace Search;

/* Room for n configurations in s->out. */
static DlStatus
configs_alloc(Search *s, int n)
{
	DlModelConfigs *c = s->out;

	c->model_id = dl_grid_arena_alloc(s->arena, sizeof(int32_t) * (size_t) n, s->err);
	c->compile_params = c->model_id ? dl_grid_arena_alloc(s->arena, sizeof(char *) * (size_t) n, s->err) : NULL;
	c->fit_params = c->compile_params ? dl_grid_arena_alloc(s->arena, sizeof(char *) * (size_t) n, s->err) : NULL;
	return c->fit_params != NULL ? DL_OK : s->err->code;
}

/* Append the configuration of s->compile and s->fit for model id. */
static DlStatus
config_add(Search *s, int32_t model_id)
{
	DlModelConfigs *c = s->out;
	char	   *strs[2];

	for (int k = 0; k < 2; k++)
	{
		row_string(&s->buf, k == 0 ? &s->compile : &s->fit);
		if (s->buf.failed)
		{
			dl_error_set(s->err, DL_ERR_NO_MEMORY, "out of memory building a configuration string");
			return DL_ERR_NO_MEMORY;
		}
		strs[k] = dl_grid_arena_strndup(s->arena, s->buf.data != NULL ? s->buf.data : "", s->buf.len, s->err);
		if (strs[k] == NULL)
			return s->err->code;
	}
	c->model_id[c->n] = model_id;
	c->compile_params[c->n] = strs[0];
	c->fit_params[c->n] = strs[1];
	c->n++;
	return DL_OK;
}

static void
between_configs(const Search *s)
{
	if (s->args->between_configs != NULL)
		s->args->between_configs(s->args->between_configs_arg);
}

/* *total *= n, refusing more than DL_MS_MAX_CONFIGS. */
static DlStatus
product_mul(int64_t *total, int64_t n, DlError *err)
{
	if (n > 0 && *total > DL_MS_MAX_CONFIGS / n)
	{
		dl_error_set(err, DL_ERR_LIMIT, "grid search gives more than %d configurations",
					 DL_MS_MAX_CONFIGS);
		return dl_error_hint(err, TOO_MANY_HINT);
	}
	*total *= n;
	return DL_OK;
}

/*
 * The sizes of the odometer of optimizer entry `entry` (NULL without
 * optimizer_params_list): each compile key, each fit key, the model ids.
 * *count is their product.
 */
static DlStatus
grid_sizes(const Search *s, const PyVal *entry, int64_t *size, int64_t *count)
{
	const PyVal *cg = s->compile.g,
			   *fg = s->fit.g;
	int			ndims = cg->n + fg->n + 1;
	DlStatus	rc;

	for (int k = 0; k < cg->n; k++)
	{
		if (k == s->compile.opl)
		{
			int64_t		m = 1;

			for (int j = 0; j < entry->n; j++)
				if ((rc = product_mul(&m, entry->items[j]->n, s->err)) != DL_OK)
					return rc;
			size[k] = m;
		}
		else
			size[k] = cg->items[k]->n;
	}
	for (int k = 0; k < fg->n; k++)
		size[cg->n + k] = fg->items[k]->n;
	size[ndims - 1] = s->nids;
	*count = 1;
	for (int d = 0; d < ndims; d++)
		if ((rc = product_mul(count, size[d], s->err)) != DL_OK)
			return rc;
	return DL_OK;
}

/*
 * Grid search.  For each optimizer entry (or once): odometer over the
 * compile keys (the entry's product for optimizer_params_list), the fit
 * keys and the model ids, the last fastest.
 */
static DlStatus
grid_search(Search *s)
{
	const PyVal *cg = s->compile.g,
			   *fg = s->fit.g;
	int			opl = s->compile.opl;
	int			nentries = opl >= 0 ? cg->items[opl]->n : 1;
	int			ndims = cg->n + fg->n + 1;
	int64_t    *size = dl_grid_arena_alloc(s->arena, sizeof(int64_t) * (size_t) ndims, s->err);
	int64_t    *idx = dl_grid_arena_alloc(s->arena, sizeof(int64_t) * (size_t) ndims, s->err);
	int64_t		total = 0,
				count;
	DlStatus	rc;

	if (size == NULL || idx == NULL)
		return s->err->code;
	/* the number of configurations first */
	for (int e = 0; e < nentries; e++)
	{
		rc = grid_sizes(s, opl >= 0 ? cg->items[opl]->items[e] : NULL, size, &count);
		if (rc != DL_OK)
			return rc;
		total += count;
		if (total > DL_MS_MAX_CONFIGS)
			return product_mul(&total, DL_MS_MAX_CONFIGS + 1, s->err);	/* refuses */
	}
	if ((rc = configs_alloc(s, (int) total)) != DL_OK)
		return rc;

	for (int e = 0; e < nentries; e++)
	{
		const PyVal *entry = opl >= 0 ? cg->items[opl]->items[e] : NULL;

		s->compile.entry = entry;
		(void) grid_sizes(s, entry, size, &count);	/* checked above */
		memset(idx, 0, sizeof(int64_t) * (size_t) ndims);
		for (int64_t r = 0; r < count; r++)
		{
			between_configs(s);
			for (int k = 0; k < cg->n; k++)
			{
				if (k == opl)
				{
					int64_t		rest = idx[k];

					/* the entry's own product, its last key fastest */
					for (int j = entry->n - 1; j >= 0; j--)
					{
						s->compile.ovals[j] = entry->items[j]->items[rest % entry->items[j]->n];
						rest /= entry->items[j]->n;
					}
				}
				else
					s->compile.vals[k] = cg->items[k]->items[idx[k]];
			}
			for (int k = 0; k < fg->n; k++)
				s->fit.vals[k] = fg->items[k]->items[idx[cg->n + k]];
			if ((rc = config_add(s, s->ids[idx[ndims - 1]])) != DL_OK)
				return rc;
			/* advance the odometer */
			for (int d = ndims - 1; d >= 0; d--)
			{
				if (++idx[d] < size[d])
					break;
				idx[d] = 0;
			}
		}
	}
	return DL_OK;
}

/* ---------------------------------------------------------------------
 * Search spaces: the dimensions, their draws and their points
 * ---------------------------------------------------------------------
 */

/* Dimension d describes list: a CHOICE among its items, or its distribution. */
static void
dim_set(SpaceDim *d, const PyVal *list, bool compile, int key, int okey, const char *name)
{
	memset(d, 0, sizeof(*d));
	d->list = list;
	d->compile = compile;
	d->key = key;
	d->okey = okey;
	d->pub.name = name;
	d->pub.parent = -1;
	if (list == NULL || !is_distribution(list))
	{
		d->pub.kind = DL_SPACE_CHOICE;
		d->pub.n_choices = list != NULL ? list->n : 0;
		return;
	}
	d->pub.low = num_value(list->items[0]);
	d->pub.high = num_value(list->items[1]);
	if (strcmp(list->items[2]->s, "linear") == 0)
		d->pub.kind = DL_SPACE_LINEAR;
	else if (strcmp(list->items[2]->s, "log") == 0)
		d->pub.kind = DL_SPACE_LOG;
	else
		d->pub.kind = DL_SPACE_LOG_NEAR_ONE;
}

/* The dimensions of one grid from *d on: each key, an optimizer entry's arguments after it. */
static void
grid_dims(Search *s, const GridChoice *ch, bool compile, int *d)
{
	for (int k = 0; k < ch->g->n; k++)
	{
		const PyVal *list = ch->g->items[k];
		int			parent = *d;

		dim_set(&s->dims[(*d)++], list, compile, k, -1, ch->g->keys[k]->s);
		if (k != ch->opl)
			continue;
		for (int e = 0; e < list->n; e++)
		{
			const PyVal *entry = list->items[e];

			for (int j = 0; j < entry->n; j++)
			{
				SpaceDim   *sd = &s->dims[(*d)++];

				dim_set(sd, entry->items[j], compile, k, j, entry->keys[j]->s);
				sd->pub.parent = parent;
				sd->pub.parent_choice = e;
			}
		}
	}
}

/* Dimensions of one grid: one per key, plus an optimizer entry's arguments. */
static int
grid_n_dims(const GridChoice *ch)
{
	int			n = ch->g->n;

	if (ch->opl >= 0)
		for (int e = 0; e < ch->g->items[ch->opl]->n; e++)
			n += ch->g->items[ch->opl]->items[e]->n;
	return n;
}

/* The dimensions of the checked grids of s (random search's rules). */
static DlStatus
space_dims(Search *s)
{
	int			d = 0;

	s->n_dims = 1 + grid_n_dims(&s->compile) + grid_n_dims(&s->fit);
	s->dims = dl_grid_arena_alloc(s->arena, sizeof(SpaceDim) * (size_t) s->n_dims, s->err);
	s->slots = s->dims ? dl_grid_arena_alloc(s->arena, sizeof(PyVal) * (size_t) s->n_dims, s->err) : NULL;
	if (s->slots == NULL)
		return s->err->code;
	dim_set(&s->dims[d++], NULL, false, -1, -1, "model_id");
	s->dims[0].pub.n_choices = s->nids;
	grid_dims(s, &s->compile, true, &d);
	grid_dims(s, &s->fit, false, &d);
	return DL_OK;
}

int
dl_search_space_n_dims(const DlSearchSpace *s)
{
	return s->n_dims;
}

const DlSpaceDim *
dl_search_space_dim(const DlSearchSpace *s, int d)
{
	return &s->dims[d].pub;
}

bool
dl_search_space_active(const DlSearchSpace *s, const double *point, int d)
{
	const DlSpaceDim *dim = &s->dims[d].pub;

	return dim->parent < 0 || point[dim->parent] == (double) dim->parent_choice;
}

double
dl_space_coord(const DlSpaceDim *dim, double x)
{
	switch (dim->kind)
	{
		case DL_SPACE_LOG:
			return log10(x);
		case DL_SPACE_LOG_NEAR_ONE:
			return log10(1.0 - x);
		default:
			return x;
	}
}

double
dl_space_value(const DlSpaceDim *dim, double t)
{
	switch (dim->kind)
	{
		case DL_SPACE_LOG:
			return pow(10.0, t);
		case DL_SPACE_LOG_NEAR_ONE:
			return 1.0 - pow(10.0, t);
		default:
			return t;
	}
}

void
dl_space_coord_bounds(const DlSpaceDim *dim, double *lo, double *hi)
{
	if (dim->kind == DL_SPACE_LOG_NEAR_ONE)
	{
		/* decreasing: the high bound is the low coordinate */
		*lo = log10(1.0 - dim->high);
		*hi = log10(1.0 - dim->low);
	}
	else
	{
		*lo = dl_space_coord(dim, dim->low);
		*hi = dl_space_coord(dim, dim->high);
	}
}

void
dl_search_space_seed(DlRng *rng, int64_t random_state, int k)
{
	uint64_t	base;

	dl_rng_seed(rng, (uint64_t) random_state);
	base = dl_rng_next(rng);
	dl_rng_seed(rng, base + (uint64_t) k);
}

void
dl_search_space_sample(const DlSearchSpace *s, DlRng *rng, double *point)
{
	for (int d = 0; d < s->n_dims; d++)
	{
		const DlSpaceDim *dim = &s->dims[d].pub;
		double		lo,
					hi;

		if (!dl_search_space_active(s, point, d))
			point[d] = NAN;
		else if (dim->kind == DL_SPACE_CHOICE)
			point[d] = (double) dl_rng_below(rng, (uint64_t) dim->n_choices);
		else
		{
			dl_space_coord_bounds(dim, &lo, &hi);
			point[d] = dl_space_value(dim, lo + (hi - lo) * dl_rng_uniform(rng));
		}
	}
}

/* The number of probes dimension d adds: its other choices, or its high bound. */
static int
probes_of(const DlSpaceDim *dim)
{
	return dim->kind == DL_SPACE_CHOICE ? dim->n_choices - 1 : 1;
}

int
dl_search_space_n_probes(const DlSearchSpace *s)
{
	int			n = 1;

	for (int d = 0; d < s->n_dims; d++)
		n += probes_of(&s->dims[d].pub);
	return n;
}

void
dl_search_space_probe(const DlSearchSpace *s, int i, double *point)
{
	int			target = -1;
	int			alt = 0;

	/* probe i > 0 is alternative `alt` of dimension `target` */
	for (int d = 0, left = i - 1; i > 0 && d < s->n_dims; d++)
	{
		if (left < probes_of(&s->dims[d].pub))
		{
			target = d;
			alt = left;
			break;
		}
		left -= probes_of(&s->dims[d].pub);
	}
	for (int d = 0; d < s->n_dims; d++)
	{
		const DlSpaceDim *dim = &s->dims[d].pub;

		if (!dl_search_space_active(s, point, d))
			point[d] = NAN;
		else if (d == target)
			point[d] = dim->kind == DL_SPACE_CHOICE ? (double) (alt + 1) : dim->high;
		else if (target >= 0 && d == s->dims[target].pub.parent)
			point[d] = (double) s->dims[target].pub.parent_choice;
		else
			point[d] = dim->kind == DL_SPACE_CHOICE ? 0.0 : dim->low;
	}
}

/* Is point in the space: choices in range, ranges finite, inactive ones NaN? */
static bool
point_valid(const Search *s, const double *point)
{
	for (int d = 0; d < s->n_dims; d++)
	{
		const DlSpaceDim *dim = &s->dims[d].pub;
		double		v = point[d];

		if (!dl_search_space_active(s, point, d))
			continue;
		if (dim->kind == DL_SPACE_CHOICE ? !(v >= 0 && v < dim->n_choices && v == floor(v))
			: !isfinite(v))
			return false;
	}
	return true;
}

/* Set the grids' choices (s->compile, s->fit) to those of a valid point. */
static void
space_choose(Search *s, const double *point)
{
	for (int d = 1; d < s->n_dims; d++)
	{
		SpaceDim   *sd = &s->dims[d];
		GridChoice *ch = sd->compile ? &s->compile : &s->fit;
		const PyVal *v;

		if (!dl_search_space_active(s, point, d))
			continue;
		if (sd->pub.kind == DL_SPACE_CHOICE)
			v = sd->list->items[(int) point[d]];
		else
		{
			PyVal	   *slot = &s->slots[d];

			memset(slot, 0, sizeof(*slot));
			slot->kind = PY_FLOAT;
			slot->pos = sd->list->pos;
			slot->f = point[d];
			v = slot;
		}
		if (sd->okey >= 0)
			ch->ovals[sd->okey] = v;
		else if (sd->key == ch->opl)
			ch->entry = v;
		else
			ch->vals[sd->key] = v;
	}
}

/* A copy of the row string in s->buf, through alloc. */
static char *
buf_copy(Search *s, const DlAllocator *alloc)
{
	char	   *p;

	if (s->buf.failed)
	{
		dl_error_set(s->err, DL_ERR_NO_MEMORY, "out of memory building a configuration string");
		return NULL;
	}
	p = dl_alloc(alloc, s->buf.len + 1, s->err);
	if (p != NULL)
	{
		if (s->buf.len > 0)
			memcpy(p, s->buf.data, s->buf.len);
		p[s->buf.len] = '\0';
	}
	return p;
}

DlStatus
dl_search_space_config(DlSearchSpace *s, const double *point, int32_t *model_id,
					   char **compile_params, char **fit_params, const DlAllocator *alloc,
					   DlError *err)
{
	*compile_params = *fit_params = NULL;
	s->err = err;
	if (!point_valid(s, point))
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "a point outside the search space");
	space_choose(s, point);
	*model_id = s->ids[(int) point[0]];
	row_string(&s->buf, &s->compile);
	*compile_params = buf_copy(s, alloc);
	if (*compile_params == NULL)
		return err->code;
	row_string(&s->buf, &s->fit);
	*fit_params = buf_copy(s, alloc);
	if (*fit_params == NULL)
	{
		dl_free(alloc, *compile_params);
		*compile_params = NULL;
		return err->code;
	}
	return DL_OK;
}

static DlStatus
random_search(Search *s)
{
	const DlModelSelectArgs *args = s->args;
	DlRng		rng;
	double	   *point = dl_grid_arena_alloc(s->arena, sizeof(double) * (size_t) s->n_dims, s->err);
	DlStatus	rc;

	if (point == NULL)
		return s->err->code;
	if ((rc = configs_alloc(s, args->num_configs)) != DL_OK)
		return rc;
	if (!args->has_random_state)
		dl_rng_seed(&rng, args->entropy);
	for (int c = 0; c < args->num_configs; c++)
	{
		between_configs(s);
		/* configuration c: reseed when random_state was given */
		if (args->has_random_state)
			dl_search_space_seed(&rng, args->random_state, c);
		dl_search_space_sample(s, &rng, point);
		space_choose(s, point);
		if ((rc = config_add(s, s->ids[(int) point[0]])) != DL_OK)
			return rc;
	}
	return DL_OK;
}

/* ---------------------------------------------------------------------
 * Entry points
 * ---------------------------------------------------------------------
 */

/* Is s a non-empty prefix of word, ignoring ASCII case? */
static bool
is_prefix_of(const char *s, const char *word)
{
	size_t		n = strlen(s);

	if (n == 0 || n > strlen(word))
		return false;
	for (size_t k = 0; k < n; k++)
		if (ascii_lower(s[k]) != ascii_lower(word[k]))
			return false;
	return true;
}

DlStatus
dl_search_type_from_name(const char *name, DlSearchType *out, DlError *err)
{
	if (is_prefix_of(name, "grid"))
		*out = DL_SEARCH_GRID;
	else if (is_prefix_of(name, "random"))
		*out = DL_SEARCH_RANDOM;
	else
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "search_type must be 'grid' or 'random', got '%.*s'",
					 dl_grid_show_text(name), name);
		return dl_error_hint(err, "Use 'grid' for every combination, or 'random' with num_configs "
							 "for a sample.");
	}
	return DL_OK;
}

/* num_configs and random_state against the search type. */
static DlStatus
check_search_args(const DlModelSelectArgs *args, DlError *err)
{
	if (args->n_model_ids < 1)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "model_id_list is empty");
		return dl_error_hint(err, "Give at least one model id of the model architecture table.");
	}
	if (args->search == DL_SEARCH_GRID)
	{
		if (args->has_num_configs)
		{
			dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "num_configs must be NULL for grid search, got %d",
						 args->num_configs);
			return dl_error_hint(err, "Grid search generates every combination; use search_type => "
								 "'random' to draw num_configs of them.");
		}
		if (args->has_random_state)
		{
			dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "random_state must be NULL for grid search, got %lld",
						 (long long) args->random_state);
			return dl_error_hint(err, "Grid search draws nothing; use search_type => 'random' to "
								 "draw configurations.");
		}
		return DL_OK;
	}
	if (!args->has_num_configs)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "num_configs must not be NULL for random search");
		return dl_error_hint(err, "Give the number of configurations to draw, for example num_configs => 20.");
	}
	if (args->num_configs < 1)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "num_configs must be at least 1, got %d",
					 args->num_configs);
		return dl_error_hint(err, "Give the number of configurations to draw, for example num_configs => 20.");
	}
	if (args->num_configs > DL_MS_MAX_CONFIGS)
	{
		dl_error_set(err, DL_ERR_LIMIT, "num_configs must be at most %d, got %d", DL_MS_MAX_CONFIGS,
					 args->num_configs);
		return dl_error_hint(err, "Draw fewer configurations.");
	}
	return DL_OK;
}

static int
cmp_int32(const void *a, const void *b)
{
	int32_t		x = *(const int32_t *) a,
				y = *(const int32_t *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/* The model ids sorted and unique, in the arena. */
static DlStatus
unique_ids(Search *s, const int32_t *model_ids, int n_model_ids)
{
	int32_t    *ids = dl_grid_arena_alloc(s->arena, sizeof(int32_t) * (size_t) n_model_ids, s->err);
	int			n = 0;

	if (ids == NULL)
		return s->err->code;
	memcpy(ids, model_ids, sizeof(int32_t) * (size_t) n_model_ids);
	qsort(ids, (size_t) n_model_ids, sizeof(int32_t), cmp_int32);
	for (int k = 0; k < n_model_ids; k++)
		if (n == 0 || ids[n - 1] != ids[k])
			ids[n++] = ids[k];
	s->ids = ids;
	s->nids = n;
	return DL_OK;
}

/* Room for one configuration's choices of the checked grid ch->g. */
static DlStatus
choice_arrays(Search *s, GridChoice *ch)
{
	ch->maxopt = 1;
	if (ch->opl >= 0)
	{
		const PyVal *entries = ch->g->items[ch->opl];

		for (int e = 0; e < entries->n; e++)
			if (entries->items[e]->n > ch->maxopt)
				ch->maxopt = entries->items[e]->n;
	}
	ch->vals = dl_grid_arena_alloc(s->arena, sizeof(PyVal *) * (size_t) (ch->g->n + 1), s->err);
	ch->ovals = ch->vals ? dl_grid_arena_alloc(s->arena, sizeof(PyVal *) * (size_t) ch->maxopt, s->err) : NULL;
	return ch->ovals != NULL ? DL_OK : s->err->code;
}

/*
 * The ids and both grids of s (its arena and err set), parsed and checked
 * by the rules of random or grid search; a random search's dimensions.
 */
static DlStatus
read_grids(Search *s, const int32_t *model_ids, int n_model_ids, const char *compile_grid,
		   const char *fit_grid, bool random)
{
	DlStatus	rc = unique_ids(s, model_ids, n_model_ids);

	if (rc == DL_OK)
		rc = dl_grid_parse(compile_grid, "compile_params_grid", s->arena, &s->compile.g, s->err);
	if (rc == DL_OK)
		rc = dl_grid_parse(fit_grid, "fit_params_grid", s->arena, &s->fit.g, s->err);
	if (rc == DL_OK)
		rc = check_grid(s->compile.g, "compile_params_grid", true, random, &s->compile.opl, s->err);
	if (rc == DL_OK)
		rc = check_grid(s->fit.g, "fit_params_grid", false, random, &s->fit.opl, s->err);
	if (rc == DL_OK)
		rc = choice_arrays(s, &s->compile);
	if (rc == DL_OK)
		rc = choice_arrays(s, &s->fit);
	if (rc == DL_OK && random)
		rc = space_dims(s);
	return rc;
}

DlStatus
dl_model_configs_generate(const DlModelSelectArgs *args, const DlAllocator *alloc,
						  DlModelConfigs **out, DlError *err)
{
	DlError		scratch;
	Search		s;
	DlStatus	rc;
	bool		random = args->search == DL_SEARCH_RANDOM;

	if (err == NULL)
		err = &scratch;
	*out = NULL;
	rc = check_search_args(args, err);
	if (rc != DL_OK)
		return rc;
	memset(&s, 0, sizeof(s));
	s.args = args;
	s.err = err;
	s.arena = dl_grid_arena_create(alloc, err);
	if (s.arena == NULL)
		return err->code;
	dl_strbuf_init(&s.buf, alloc);
	s.out = dl_grid_arena_alloc(s.arena, sizeof(DlModelConfigs), err);
	rc = s.out != NULL ? read_grids(&s, args->model_ids, args->n_model_ids, args->compile_grid,
									args->fit_grid, random) : err->code;
	if (rc == DL_OK)
		rc = random ? random_search(&s) : grid_search(&s);
	dl_strbuf_free(&s.buf);
	if (rc != DL_OK)
	{
		dl_grid_arena_free(s.arena);
		return rc;
	}
	s.out->arena = s.arena;
	*out = s.out;
	return DL_OK;
}

void
dl_model_configs_free(DlModelConfigs *c)
{
	if (c != NULL)
		dl_grid_arena_free(c->arena);
}

DlStatus
dl_search_space_create(const int32_t *model_ids, int n_model_ids, const char *compile_grid,
					   const char *fit_grid, const DlAllocator *alloc, DlSearchSpace **out,
					   DlError *err)
{
	MsArena    *arena;
	Search	   *s;
	DlStatus	rc;

	*out = NULL;
	if (n_model_ids < 1 || model_ids == NULL)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "model_id_list is empty");
		return dl_error_hint(err, "Give at least one model id of the model architecture table.");
	}
	arena = dl_grid_arena_create(alloc, err);
	if (arena == NULL)
		return err->code;
	s = dl_grid_arena_alloc(arena, sizeof(Search), err);
	if (s == NULL)
	{
		dl_grid_arena_free(arena);
		return err->code;
	}
	s->arena = arena;
	s->err = err;
	dl_strbuf_init(&s->buf, dl_grid_arena_allocator(arena));	/* the arena's copy lives as long as s */
	rc = read_grids(s, model_ids, n_model_ids, compile_grid, fit_grid, true);
	if (rc != DL_OK)
	{
		dl_search_space_free(s);
		return rc;
	}
	*out = s;
	return DL_OK;
}

void
dl_search_space_free(DlSearchSpace *s)
{
	if (s == NULL)
		return;
	dl_strbuf_free(&s->buf);
	dl_grid_arena_free(s->arena);		/* s lives in it */
}
