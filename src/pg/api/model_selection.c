/*-------------------------------------------------------------------------
 *
 * model_selection.c
 *	  Model selection tables: the engine checks of compile_params and
 *	  fit_params strings, and the configurations of generate_model_configs.
 *
 * The SQL drivers in src/sql/model_selection.sql own the tables; this
 * file only turns arguments into rows:
 *
 *	 madlib_dl._check_compile_params(text, context)  -> canonical text
 *	 madlib_dl._check_fit_params(text, context)      -> canonical text
 *	 madlib_dl._model_configs(ids, compile_grid, fit_grid, search_type,
 *	                          num_configs, random_state)
 *	     -> SETOF (model_id, compile_params, fit_params), in MADlib's order
 *
 * The grids, grid search and random search are the engine's
 * (src/engine/model_grid.c and model_select.c, dl_model_select.h); here are the SQL NULL
 * checks, the conversion of the arguments, the check of every generated
 * string by the engine's parameter parsers, and the rows.
 *
 * IDENTIFICATION
 *	  src/pg/api/model_selection.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "madlib_dl/dl_model_select.h"
#include "madlib_dl/dl_params.h"

/* Buffer for the engine's canonical parameter strings. */
#define MS_CANON_LEN 4096

/* ---------------------------------------------------------------------
 * Engine checks
 * ---------------------------------------------------------------------
 */

/*
 * Parse s with the engine (compile or fit params); ERROR with the
 * engine's message, prefixed by context and the string when context is
 * not NULL.  Returns the canonical string when canon is true.
 */
static char *
engine_check(const char *s, bool compile, const char *context, bool canon)
{
	DlError		err;
	DlStatus	st;
	DlCompileParams cp;
	DlFitParams fp;
	char	   *buf = NULL;

	dl_error_clear(&err);
	st = compile ? dl_compile_params_parse(s, &cp, &err) : dl_fit_params_parse(s, &fp, &err);
	if (st != DL_OK)
	{
		if (context != NULL)
			dl_error_prefix(&err, "%s \"%.*s%s\"", context,
							pg_mbcliplen(s, (int) strlen(s), 120), s, strlen(s) > 120 ? "..." : "");
		dl_pg_report(&err);
	}
	if (canon)
	{
		/* a class_weight entry takes at most "1023: 3.40282347e+38, " */
		size_t		len = MS_CANON_LEN + (compile ? (size_t) 2 * DL_MAX_IO * (DL_NAME_MAX + 64) :
									 (size_t) fp.n_class_weight * 24);

		buf = palloc(len);
		st = compile ? dl_compile_params_format(&cp, buf, len, &err)
			: dl_fit_params_format(&fp, buf, len, &err);
		dl_pg_check(st, &err);
	}
	return buf;
}

static Datum
check_params_sql(FunctionCallInfo fcinfo, bool compile)
{
	const char *param = compile ? "compile_params" : "fit_params";
	char	   *context = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", context ? context : param),
				 compile ? errhint("Give at least loss and optimizer, for example "
								   "loss='categorical_crossentropy', optimizer='Adam(lr=0.001)'.")
				 : errhint("Give '' for Keras' defaults (batch_size=32, epochs=1).")));
	PG_RETURN_TEXT_P(cstring_to_text(engine_check(text_to_cstring(PG_GETARG_TEXT_PP(0)),
												  compile, context, true)));
}

PG_FUNCTION_INFO_V1(madlib_dl__check_compile_params);

/*
 * madlib_dl._check_compile_params(compile_params text, context text)
 * RETURNS text: parse with the engine (ERROR otherwise, the message
 * prefixed by context and the string when context is given) and return
 * the engine's canonical spelling, equal for strings that mean the same.
 */
Datum
madlib_dl__check_compile_params(PG_FUNCTION_ARGS)
{
	return check_params_sql(fcinfo, true);
}

PG_FUNCTION_INFO_V1(madlib_dl__check_fit_params);

/* madlib_dl._check_fit_params(fit_params text, context text): the same. */
Datum
madlib_dl__check_fit_params(PG_FUNCTION_ARGS)
{
	return check_params_sql(fcinfo, false);
}

/* ---------------------------------------------------------------------
 * _model_configs
 * ---------------------------------------------------------------------
 */

/* The arguments SQL may not pass as NULL (num_configs is checked later). */
static void
check_not_null(FunctionCallInfo fcinfo)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model_id_list must not be NULL"),
				 errhint("Give the model ids to try, for example ARRAY[1, 2].")));
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("compile_params_grid must not be NULL"),
				 errhint("Give a dict of lists, for example {'loss': ['categorical_crossentropy'], "
						 "'optimizer_params_list': [{'optimizer': ['Adam'], 'lr': [0.001]}], "
						 "'metrics': ['accuracy']}.")));
	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("fit_params_grid must not be NULL"),
				 errhint("Give a dict of lists, for example {'batch_size': [64, 128], 'epochs': [10]}, "
						 "or {} for Keras' defaults.")));
	if (PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("search_type must not be NULL"),
				 errhint("Give 'grid' or 'random'.")));
}

/* model_id_list as int32s: one dimension, at least one id, no NULL. */
static int32 *
model_ids(ArrayType *arr, int *n)
{
	Datum	   *datums;
	bool	   *nulls;
	int32	   *ids;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model_id_list must be a one-dimensional array")));
	deconstruct_array(arr, INT4OID, 4, true, TYPALIGN_INT, &datums, &nulls, n);
	if (*n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model_id_list is empty"),
				 errhint("Give at least one model id of the model architecture table.")));
	ids = palloc(sizeof(int32) * *n);
	for (int k = 0; k < *n; k++)
	{
		if (nulls[k])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("model_id_list must not hold NULL")));
		ids[k] = DatumGetInt32(datums[k]);
	}
	return ids;
}

/* The engine's between_configs: a cancel stops the search. */
static void
configs_interrupt(void *arg)
{
	CHECK_FOR_INTERRUPTS();
}

PG_FUNCTION_INFO_V1(madlib_dl__model_configs);

/*
 * madlib_dl._model_configs(model_id_list int[], compile_params_grid text,
 *     fit_params_grid text, search_type text, num_configs int,
 *     random_state int)
 * RETURNS TABLE (model_id int, compile_params text, fit_params text)
 *
 * Checks every argument but the table names, generates the
 * configurations (dl_model_configs_generate) and parses every string with
 * the engine before returning any row.  model_id_list must hold no NULL.
 * Rows come in generation order; they may repeat (the driver removes
 * duplicates).
 */
Datum
madlib_dl__model_configs(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	DlModelSelectArgs args;
	DlModelConfigs *cl;
	DlAllocator alloc;
	DlError		err;
	MemoryContext work,
				old;

	check_not_null(fcinfo);
	InitMaterializedSRF(fcinfo, 0);
	work = AllocSetContextCreate(CurrentMemoryContext, "madlib_dl model configs",
								 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);

	memset(&args, 0, sizeof(args));
	dl_error_clear(&err);
	args.model_ids = model_ids(PG_GETARG_ARRAYTYPE_P(0), &args.n_model_ids);
	dl_pg_check(dl_search_type_from_name(text_to_cstring(PG_GETARG_TEXT_PP(3)), &args.search, &err),
				&err);
	if (args.search == DL_SEARCH_RANDOM && PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("num_configs must not be NULL for random search"),
				 errhint("Give the number of configurations to draw, for example num_configs => 20.")));
	args.has_num_configs = !PG_ARGISNULL(4);
	args.num_configs = PG_ARGISNULL(4) ? 0 : PG_GETARG_INT32(4);
	args.has_random_state = !PG_ARGISNULL(5);
	args.random_state = PG_ARGISNULL(5) ? 0 : (int64) PG_GETARG_INT32(5);
	args.entropy = (uint64) GetCurrentTimestamp() ^ ((uint64) MyProcPid << 40);
	args.compile_grid = text_to_cstring(PG_GETARG_TEXT_PP(1));
	args.fit_grid = text_to_cstring(PG_GETARG_TEXT_PP(2));
	args.between_configs = configs_interrupt;
	alloc = dl_pg_allocator(work);
	dl_pg_check(dl_model_configs_generate(&args, &alloc, &cl, &err), &err);

	/* every string through the engine before any row is returned */
	for (int r = 0; r < cl->n; r++)
	{
		CHECK_FOR_INTERRUPTS();
		engine_check(cl->compile_params[r], true, "generated compile_params", false);
		engine_check(cl->fit_params[r], false, "generated fit_params", false);
	}

	MemoryContextSwitchTo(old);
	for (int r = 0; r < cl->n; r++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = Int32GetDatum(cl->model_id[r]);
		values[1] = CStringGetTextDatum(cl->compile_params[r]);
		values[2] = CStringGetTextDatum(cl->fit_params[r]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		pfree(DatumGetPointer(values[1]));
		pfree(DatumGetPointer(values[2]));
	}
	MemoryContextDelete(work);
	return (Datum) 0;
}
