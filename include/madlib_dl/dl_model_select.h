/*-------------------------------------------------------------------------
 *
 * dl_model_select.h
 *	  The configurations of generate_model_configs: MADlib's grids of
 *	  compile and fit parameters, grid search and random search.
 *
 * A grid is a Python dict literal mapping each parameter name to a list
 * of choices, for example
 *
 *	 {'loss': ['categorical_crossentropy'], 'metrics': ['accuracy'],
 *	  'optimizer_params_list': [{'optimizer': ['SGD'], 'lr': [0.01, 0.1]},
 *	                            {'optimizer': ['Adam'], 'lr': [0.001]}]}
 *	 {'batch_size': [64, 128], 'epochs': [10]}
 *
 * read by a strict parser over the engine's Python-literal lexer
 * (dl_pylit.h, strict mode): dicts, lists, tuples, strings, ints, floats,
 * True, False, None; nothing else.  An error names the position (a byte
 * offset, 1-based) and the text there.  In random search a list
 * [low, high, 'linear' | 'log' | 'log_near_one'] is a distribution.
 *
 * The configurations are strings as MADlib's generate_row_string writes
 * them ("optimizer='SGD(lr=0.01)',loss='mse'" and "batch_size=64,epochs=10");
 * the caller checks them with dl_compile_params_parse and
 * dl_fit_params_parse.  docs/model-selection.md describes the order of
 * grid search and the draws of random search, which are byte-identical
 * for the same random_state on every machine.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_model_select.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_MODEL_SELECT_H
#define DL_MODEL_SELECT_H

#include <stdbool.h>
#include <stdint.h>

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_rng.h"
#include "madlib_dl/dl_status.h"

/* Most configurations one call generates (grid product or num_configs). */
#define DL_MS_MAX_CONFIGS 100000

typedef enum DlSearchType
{
	DL_SEARCH_GRID,
	DL_SEARCH_RANDOM
} DlSearchType;

typedef struct DlModelSelectArgs
{
	const int32_t *model_ids;	/* at least one; any order, repeats allowed */
	int			n_model_ids;
	const char *compile_grid;	/* compile_params_grid text */
	const char *fit_grid;		/* fit_params_grid text */
	DlSearchType search;
	bool		has_num_configs;	/* random search needs it, grid refuses it */
	int			num_configs;	/* 1 .. DL_MS_MAX_CONFIGS */
	bool		has_random_state;	/* grid search refuses it */
	int64_t		random_state;	/* seed of random search */
	uint64_t	entropy;		/* seed of random search without random_state */

	/*
	 * Called before each configuration when not NULL.  Inside PostgreSQL
	 * it runs CHECK_FOR_INTERRUPTS() and may not return (longjmp); the
	 * engine holds nothing but allocator memory across the call.
	 */
	void		(*between_configs) (void *arg);
	void	   *between_configs_arg;
} DlModelSelectArgs;

struct DlMsArena;

/* The generated configurations, in generation order (they may repeat). */
typedef struct DlModelConfigs
{
	int			n;
	int32_t    *model_id;		/* (n) */
	char	  **compile_params;	/* (n) */
	char	  **fit_params;		/* (n) */
	struct DlMsArena *arena;	/* private: everything above lives in it */
} DlModelConfigs;

/*
 * 'grid' or 'random', or a non-empty prefix of either, in any case.
 * DL_ERR_INVALID_ARGUMENT otherwise.
 */
DlStatus	dl_search_type_from_name(const char *name, DlSearchType *out, DlError *err);

/*
 * Check args (num_configs and random_state against the search type, the
 * grids' syntax and meaning) and generate the configurations into *out
 * (NULL on error), allocated through alloc (copied).  The model ids are
 * sorted and de-duplicated first.
 */
DlStatus	dl_model_configs_generate(const DlModelSelectArgs *args, const DlAllocator *alloc,
									  DlModelConfigs **out, DlError *err);

/* Free what dl_model_configs_generate returned.  c may be NULL. */
void		dl_model_configs_free(DlModelConfigs *c);

/* ---------------------------------------------------------------------
 * Search spaces: the grids as random search reads them, for the AutoML
 * searches (dl_automl.h).
 *
 * A space has dimensions in MADlib's draw order: the model id, then each
 * compile key (for optimizer_params_list: the entry, then each argument
 * of every entry), then each fit key.  A dimension is a CHOICE among the
 * items of its list, or a range [low, high, 'linear' | 'log' |
 * 'log_near_one'].  The arguments of an optimizer entry are active only
 * when the entry is chosen (parent, parent_choice).
 *
 * A point holds one double per dimension: the index of the choice, the
 * value drawn from a range (in the parameter's own units), NaN for an
 * inactive dimension.  dl_search_space_sample draws a point exactly as
 * random search draws a configuration, so configuration k of random
 * search with random_state r is dl_search_space_sample with the
 * generator dl_search_space_seed(r, k) gives.
 * ---------------------------------------------------------------------
 */

typedef enum DlSpaceKind
{
	DL_SPACE_CHOICE,
	DL_SPACE_LINEAR,
	DL_SPACE_LOG,
	DL_SPACE_LOG_NEAR_ONE
} DlSpaceKind;

typedef struct DlSpaceDim
{
	DlSpaceKind kind;
	int			n_choices;		/* CHOICE: how many */
	double		low;			/* ranges: the bounds as written, low < high */
	double		high;
	int			parent;			/* -1: always active; else the dimension ... */
	int			parent_choice;	/* ... whose choice makes this one active */
	const char *name;			/* "model_id", "optimizer_params_list" or the key */
} DlSpaceDim;

typedef struct DlSearchSpace DlSearchSpace;

/*
 * Parse and check the grids (random search's rules: distributions are
 * allowed) and the model ids (at least one; sorted and de-duplicated
 * here) into *out, allocated through alloc.  The errors are
 * dl_model_configs_generate's.  The space keeps a copy of *alloc.
 */
DlStatus	dl_search_space_create(const int32_t *model_ids, int n_model_ids,
								   const char *compile_grid, const char *fit_grid,
								   const DlAllocator *alloc, DlSearchSpace **out, DlError *err);

/* Free a space (may be NULL). */
void		dl_search_space_free(DlSearchSpace *s);

int			dl_search_space_n_dims(const DlSearchSpace *s);
const DlSpaceDim *dl_search_space_dim(const DlSearchSpace *s, int d);

/* Is dimension d active in point (its parent, earlier, has its choice)? */
bool		dl_search_space_active(const DlSearchSpace *s, const double *point, int d);

/*
 * The coordinate of a range dimension in which it is uniform: x (linear),
 * log10(x) (log), log10(1 - x) (log_near_one); its bounds *lo < *hi; and
 * the value back from a coordinate.
 */
double		dl_space_coord(const DlSpaceDim *dim, double x);
double		dl_space_value(const DlSpaceDim *dim, double t);
void		dl_space_coord_bounds(const DlSpaceDim *dim, double *lo, double *hi);

/*
 * The generator of configuration k for random_state: seeded with the
 * first output of a generator seeded with random_state, plus k.
 */
void		dl_search_space_seed(DlRng *rng, int64_t random_state, int k);

/* Draw point (n_dims) in MADlib's draw order. */
void		dl_search_space_sample(const DlSearchSpace *s, DlRng *rng, double *point);

/*
 * The probes: points that together use every choice and both bounds of
 * every range at least once (probe 0 takes the first choice and the low
 * bound everywhere), for checking the strings of a space before a search
 * uses it.
 */
int			dl_search_space_n_probes(const DlSearchSpace *s);
void		dl_search_space_probe(const DlSearchSpace *s, int i, double *point);

/*
 * The configuration at point: its model id, and its compile and fit
 * strings (written as random search writes them), allocated through
 * alloc (the caller frees them with dl_free).  DL_ERR_INVALID_ARGUMENT
 * for a point that is not in the space.
 */
DlStatus	dl_search_space_config(DlSearchSpace *s, const double *point, int32_t *model_id,
								   char **compile_params, char **fit_params,
								   const DlAllocator *alloc, DlError *err);

#endif							/* DL_MODEL_SELECT_H */
