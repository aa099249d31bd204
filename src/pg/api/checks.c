/*-------------------------------------------------------------------------
 *
 * checks.c
 *	  SQL-callable checks the drivers make before any work:
 *	  madlib_dl._check_params (compile_params and fit_params, parsed by the
 *	  engine), madlib_dl._check_early_stopping (early_stopping, against
 *	  the model's metric) and madlib_dl._check_input_shape (data shapes against an
 *	  architecture, from its spec: no model is built).
 *
 * IDENTIFICATION
 *	  src/pg/api/checks.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "madlib_dl/dl_early_stop.h"
#include "madlib_dl/dl_params.h"

#include "pg_glue.h"
#include "pg_model.h"
#include "pg_util.h"

PG_FUNCTION_INFO_V1(madlib_dl__check_params);

/*
 * madlib_dl._check_params(compile_params text, fit_params text,
 *     OUT loss_type text, OUT metrics_type text[], OUT seed bigint,
 *     OUT epochs int, OUT batch_size bigint)
 *
 * Parse both strings with the engine (ERROR with its message otherwise)
 * and return what the summary tables record.  metrics_type is NULL when
 * compile_params has no metric; MADlib's top_<k>_accuracy keeps its name.
 */
Datum
madlib_dl__check_params(PG_FUNCTION_ARGS)
{
	DlCompileParams cp;
	DlFitParams fp;
	DlError		err;
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5] = {false, false, false, false, false};
	char	   *compile;
	char	   *fitp;
	char		loss_name[DL_MAX_IO * (DL_NAME_MAX + 48)];

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("compile_params must not be NULL"),
				 errhint("Give at least loss and optimizer, e.g. 'loss=''categorical_crossentropy'', optimizer=''Adam(lr=0.001)''.")));
	compile = text_to_cstring(PG_GETARG_TEXT_PP(0));
	fitp = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	dl_error_clear(&err);
	dl_pg_check(dl_compile_params_parse(compile, &cp, &err), &err);
	dl_pg_check(dl_fit_params_parse(fitp, &fp, &err), &err);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "madlib_dl: _check_params must return a composite type");

	values[0] = CStringGetTextDatum(dl_compile_params_loss_name(&cp, loss_name, sizeof(loss_name)));
	if (cp.metric != DL_METRIC_NONE)
	{
		char		name[32];
		Datum		m = CStringGetTextDatum(dl_compile_params_metric_name(&cp, name, sizeof(name)));

		values[1] = PointerGetDatum(construct_array(&m, 1, TEXTOID, -1, false, TYPALIGN_INT));
	}
	else
		nulls[1] = true;
	values[2] = Int64GetDatum((int64) fp.seed);
	values[3] = Int32GetDatum(fp.epochs);
	values[4] = Int64GetDatum(fp.batch_size);
	tupdesc = BlessTupleDesc(tupdesc);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

PG_FUNCTION_INFO_V1(madlib_dl__check_early_stopping);

/*
 * madlib_dl._check_early_stopping(early_stopping text, compile_params
 *     text, has_validation boolean) RETURNS text
 *
 * Parse early_stopping with the engine and check the monitored series
 * exists for a model compiled with compile_params (NULL: no metric) and
 * with or without a validation table; returns the canonical string,
 * NULL when early_stopping is NULL or blank.  Not STRICT.
 */
Datum
madlib_dl__check_early_stopping(PG_FUNCTION_ARGS)
{
	DlEarlyStopConfig es;
	DlEarlyStopState st;
	DlError		err;
	char		names_buf[DL_MAX_METRICS][32];
	const char *names[DL_MAX_METRICS];
	int			n_names = 0;
	char		buf[DL_EARLY_STOP_MAX_LEN + 256];
	text	   *t;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	t = PG_GETARG_TEXT_PP(0);
	dl_error_clear(&err);
	if (VARSIZE_ANY_EXHDR(t) > DL_EARLY_STOP_MAX_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("early_stopping is longer than %d characters", DL_EARLY_STOP_MAX_LEN),
				 errhint("Give the options only, e.g. 'monitor=validation_loss, patience=3'.")));
	dl_pg_check(dl_early_stop_parse(text_to_cstring(t), &es, &err), &err);
	if (!es.enabled)
		PG_RETURN_NULL();
	if (!PG_ARGISNULL(1))
	{
		DlCompileParams cp;

		dl_pg_check(dl_compile_params_parse(text_to_cstring(PG_GETARG_TEXT_PP(1)), &cp, &err), &err);
		for (n_names = 0; n_names < cp.n_metrics; n_names++)
			names[n_names] = dl_compile_params_metric_name_i(&cp, n_names, names_buf[n_names],
															 sizeof(names_buf[n_names]));
	}
	dl_pg_check(dl_early_stop_begin_list(&es, names, n_names, !PG_ARGISNULL(2) && PG_GETARG_BOOL(2),
										 &st, &err), &err);
	dl_pg_check(dl_early_stop_format(&es, buf, sizeof(buf), &err), &err);
	PG_RETURN_TEXT_P(cstring_to_text(buf));
}

PG_FUNCTION_INFO_V1(madlib_dl__check_input_shape);

/*
 * madlib_dl._check_input_shape(model_arch json, x_shape int[], y_shape int[])
 * RETURNS void: dl_pg_model_check_input for the SQL drivers, on the
 * parsed architecture (no model is built).  y_shape may be NULL.
 */
Datum
madlib_dl__check_input_shape(PG_FUNCTION_ARGS)
{
	char	   *arch;
	DlPgModel  *m;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model_arch and the input shape must not be NULL")));
	arch = text_to_cstring(PG_GETARG_TEXT_PP(0));
	/* the shapes come from the spec: no model is built */
	m = dl_pg_model_parse(arch, strlen(arch), NULL, NULL, CurrentMemoryContext);
	dl_pg_model_check_input(m, PG_GETARG_ARRAYTYPE_P(1),
							PG_ARGISNULL(2) ? NULL : PG_GETARG_ARRAYTYPE_P(2));
	dl_pg_model_free(m);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(madlib_dl__check_var_shape);

/*
 * madlib_dl._check_var_shape(model_arch json, output boolean, k integer,
 *     shape integer[], what text) RETURNS void: the shape {n, dims...} of
 * variable what (a column of a packed table) against input k (output
 * false) or output k of the architecture, as dl_pg_model_check_io; no
 * model is built.  22023 for k out of range.
 */
Datum
madlib_dl__check_var_shape(PG_FUNCTION_ARGS)
{
	char	   *arch;
	char	   *what;
	DlPgModel  *m;
	bool		output;
	int32		k;

	for (int i = 0; i < 5; i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("the arguments of _check_var_shape must not be NULL")));
	arch = text_to_cstring(PG_GETARG_TEXT_PP(0));
	output = PG_GETARG_BOOL(1);
	k = PG_GETARG_INT32(2);
	what = text_to_cstring(PG_GETARG_TEXT_PP(4));
	m = dl_pg_model_parse(arch, strlen(arch), NULL, NULL, CurrentMemoryContext);
	if (k < 0 || k >= (output ? m->spec->n_outputs : m->spec->n_inputs))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the model has no %s %d", output ? "output" : "input", k),
				 errhint("The model has %d inputs and %d outputs.", m->spec->n_inputs,
						 m->spec->n_outputs)));
	dl_pg_model_check_io(m, output ? -1 : k, PG_GETARG_ARRAYTYPE_P(3), psprintf("\"%s\"", what),
						 output ? k : -1, PG_GETARG_ARRAYTYPE_P(3), psprintf("\"%s\"", what));
	dl_pg_model_free(m);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(madlib_dl__assert_trusted_table);
PG_FUNCTION_INFO_V1(madlib_dl__assert_writable_table);

/*
 * madlib_dl._assert_trusted_table(rel regclass, what text DEFAULT NULL)
 *   RETURNS regclass
 *
 * The rule of docs/security.md before reading rel: every column of a type
 * owned by the bootstrap superuser, a superuser or the caller, no
 * row-security policy calling another role's code; ERROR 42501 otherwise
 * (pg_trust.c).  Returns rel.  NULL rel: NULL.
 */
Datum
madlib_dl__assert_trusted_table(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	dl_pg_require_trusted_table(PG_GETARG_OID(0), dl_pg_text_arg(fcinfo, 1));
	PG_RETURN_OID(PG_GETARG_OID(0));
}

/*
 * madlib_dl._assert_writable_table(rel regclass, what text DEFAULT NULL)
 *   RETURNS regclass
 *
 * Before writing into rel, a table madlib_dl did not create in this call:
 * _assert_trusted_table, and ERROR 42501 unless the caller owns rel and no
 * trigger, rule, default, constraint or index of it calls another role's
 * code (pg_trust.c).  Returns rel.  NULL rel: NULL.
 */
Datum
madlib_dl__assert_writable_table(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	dl_pg_require_writable_table(PG_GETARG_OID(0), dl_pg_text_arg(fcinfo, 1));
	PG_RETURN_OID(PG_GETARG_OID(0));
}
