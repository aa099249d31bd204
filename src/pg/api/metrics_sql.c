/*-------------------------------------------------------------------------
 *
 * metrics_sql.c
 *	  Several metrics for evaluate: the SQL-callable pieces the driver
 *	  (src/sql/evaluate_predict.sql) uses around the aggregate
 *	  _evaluate_segment, whose groups return the metric sums of every
 *	  metric of compile_params (dl_metrics.h) as float8s in a bytea:
 *
 *	  _compile_params_with_metrics(compile_params, metrics)  the model's
 *	      compile_params with its metrics list replaced (evaluate's
 *	      metrics argument), canonical;
 *	  _metric_sums(bytea) (aggregate over _metric_sums_add)  the groups'
 *	      sums added elementwise, in the aggregate's order;
 *	  _metrics_names(compile_params)  the metrics' names, as written;
 *	  _metrics_values(compile_params, sums, n)  their values.
 *
 * Each checks its input: sums must have exactly the length the metrics
 * of compile_params keep.
 *
 * IDENTIFICATION
 *	  src/pg/api/metrics_sql.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "madlib_dl/dl_metrics.h"
#include "madlib_dl/dl_params.h"

#include "pg_glue.h"
#include "pg_util.h"

/* The most bytes of sums: every metric an AUC. */
#define METRIC_SUMS_MAX ((Size) DL_MAX_METRICS * DL_METRIC_ACC_MAX * sizeof(double))

/* Room for a canonical compile_params (as model_selection.c sizes it). */
#define CANON_LEN (4096 + 2 * DL_MAX_IO * (DL_NAME_MAX + 64))

static void
parse_compile(FunctionCallInfo fcinfo, int arg, DlCompileParams *cp)
{
	DlError		err;

	if (PG_ARGISNULL(arg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("compile_params must not be NULL"),
				 errhint("Pass the model's compile_params.")));
	dl_error_clear(&err);
	dl_pg_check(dl_compile_params_parse(text_to_cstring(PG_GETARG_TEXT_PP(arg)), cp, &err), &err);
}

/* The doubles of sums (a bytea), checked: a whole number of them, at most METRIC_SUMS_MAX bytes. */
static const double *
sums_data(bytea *b, int *n)
{
	Size		len = VARSIZE_ANY_EXHDR(b);

	if (len % sizeof(double) != 0 || len > METRIC_SUMS_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("metric sums of %zu bytes are not a list of at most %zu float8 values",
						len, METRIC_SUMS_MAX / sizeof(double)),
				 errhint("Pass the state column of _evaluate_segment.")));
	*n = (int) (len / sizeof(double));
	return (const double *) VARDATA_ANY(b);
}

PG_FUNCTION_INFO_V1(madlib_dl__metric_sums_add);

/*
 * madlib_dl._metric_sums_add(a bytea, b bytea) RETURNS bytea
 *
 * a + b elementwise (the transition of _metric_sums); NULL a gives b,
 * NULL b gives a.  Both the same length, else ERROR 22023.  Not STRICT.
 */
Datum
madlib_dl__metric_sums_add(PG_FUNCTION_ARGS)
{
	bytea	   *a;
	bytea	   *b;
	const double *da;
	const double *db;
	int			na,
				nb;
	bytea	   *out;
	double		v;

	if (PG_ARGISNULL(0) && PG_ARGISNULL(1))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
	{
		b = PG_GETARG_BYTEA_PP(PG_ARGISNULL(0) ? 1 : 0);
		(void) sums_data(b, &nb);
		PG_RETURN_BYTEA_P(PG_DETOAST_DATUM_COPY(PointerGetDatum(b)));
	}
	a = PG_GETARG_BYTEA_PP(0);
	b = PG_GETARG_BYTEA_PP(1);
	da = sums_data(a, &na);
	db = sums_data(b, &nb);
	if (na != nb)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("metric sums of %d and %d values cannot be added", na, nb),
				 errhint("Add the sums of one evaluation only.")));
	out = palloc(VARHDRSZ + sizeof(double) * (Size) na);
	SET_VARSIZE(out, VARHDRSZ + sizeof(double) * (Size) na);
	for (int i = 0; i < na; i++)
	{
		double		x,
					y;

		/* the data may be unaligned (short varlena header) */
		memcpy(&x, da + i, sizeof(double));
		memcpy(&y, db + i, sizeof(double));
		v = x + y;
		memcpy((char *) VARDATA(out) + i * sizeof(double), &v, sizeof(double));
	}
	PG_RETURN_BYTEA_P(out);
}

PG_FUNCTION_INFO_V1(madlib_dl__metrics_names);

/*
 * madlib_dl._metrics_names(compile_params text) RETURNS text[]
 *
 * The names of compile_params' metrics, in order, as written (MADlib's
 * top_<k>_accuracy keeps its name); NULL when it names none.
 */
Datum
madlib_dl__metrics_names(PG_FUNCTION_ARGS)
{
	DlCompileParams cp;
	Datum		names[DL_MAX_METRICS];

	parse_compile(fcinfo, 0, &cp);
	if (cp.n_metrics == 0)
		PG_RETURN_NULL();
	for (int i = 0; i < cp.n_metrics; i++)
	{
		char		buf[32];

		names[i] = CStringGetTextDatum(dl_compile_params_metric_name_i(&cp, i, buf, sizeof(buf)));
	}
	PG_RETURN_ARRAYTYPE_P(construct_array(names, cp.n_metrics, TEXTOID, -1, false, TYPALIGN_INT));
}

PG_FUNCTION_INFO_V1(madlib_dl__metrics_values);

/*
 * madlib_dl._metrics_values(compile_params text, sums bytea, n bigint)
 * RETURNS float8[]
 *
 * The value of each metric of compile_params from its sums over n
 * examples (dl_metric_acc_value; NaN where a division by n or by an
 * empty class has no value).  sums must have the length those metrics
 * keep (ERROR 22023); n >= 0.  NULL when compile_params name no metric.
 */
Datum
madlib_dl__metrics_values(PG_FUNCTION_ARGS)
{
	DlCompileParams cp;
	Datum		vals[DL_MAX_METRICS];
	const double *d;
	double	   *acc;
	int			nd,
				want = 0,
				off = 0;
	int64		n;

	parse_compile(fcinfo, 0, &cp);
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("sums and n must not be NULL"),
				 errhint("Pass the sums of _metric_sums and the number of examples.")));
	n = PG_GETARG_INT64(2);
	if (n < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the number of examples must not be negative, got " INT64_FORMAT, n),
				 errhint("Pass the number of examples the sums were added over.")));
	if (cp.n_metrics == 0)
		PG_RETURN_NULL();
	d = sums_data(PG_GETARG_BYTEA_PP(1), &nd);
	for (int i = 0; i < cp.n_metrics; i++)
		want += dl_metric_acc_len(cp.metrics[i]);
	if (nd != want)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("metric sums of %d values do not fit the %d metrics of compile_params, which keep %d",
						nd, cp.n_metrics, want),
				 errhint("Pass the sums of an evaluation with the same compile_params.")));
	acc = palloc(sizeof(double) * (Size) (want > 0 ? want : 1));
	memcpy(acc, d, sizeof(double) * (Size) want);
	for (int i = 0; i < cp.n_metrics; i++)
	{
		vals[i] = Float8GetDatum(dl_metric_acc_value(cp.metrics[i], acc + off, n));
		off += dl_metric_acc_len(cp.metrics[i]);
	}
	PG_RETURN_ARRAYTYPE_P(construct_array(vals, cp.n_metrics, FLOAT8OID, sizeof(float8),
										  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

PG_FUNCTION_INFO_V1(madlib_dl__compile_params_with_metrics);

/*
 * madlib_dl._compile_params_with_metrics(compile_params text, metrics
 * text) RETURNS text
 *
 * compile_params, canonical, with its metrics list replaced by metrics
 * (what metrics= takes: '[''accuracy'', ''auc'']'), checked against its
 * loss; compile_params as given when metrics is NULL.
 */
Datum
madlib_dl__compile_params_with_metrics(PG_FUNCTION_ARGS)
{
	DlCompileParams cp;
	DlError		err;
	char	   *buf;
	text	   *m;

	parse_compile(fcinfo, 0, &cp);
	if (PG_ARGISNULL(1))
		PG_RETURN_TEXT_P(PG_GETARG_TEXT_PP(0));
	m = PG_GETARG_TEXT_PP(1);
	if (VARSIZE_ANY_EXHDR(m) > 4096)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("metrics is longer than 4096 characters"),
				 errhint("List at most 8 metric names, e.g. '[''accuracy'', ''auc'']'.")));
	dl_error_clear(&err);
	if (dl_compile_params_set_metrics(&cp, text_to_cstring(m), &err) != DL_OK)
	{
		dl_error_prefix(&err, "metrics");
		dl_pg_report(&err);
	}
	buf = palloc(CANON_LEN);
	dl_pg_check(dl_compile_params_format(&cp, buf, CANON_LEN, &err), &err);
	PG_RETURN_TEXT_P(cstring_to_text(buf));
}
