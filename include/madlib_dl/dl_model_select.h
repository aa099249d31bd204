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

#endif							/* DL_MODEL_SELECT_H */
