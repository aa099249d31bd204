/*-------------------------------------------------------------------------
 *
 * predict.c
 *	  Model outputs for raw rows, a batch of rows per forward pass.
 *
 * _predict_rows() is the numeric half of madlib_keras_predict and
 * madlib_keras_predict_byom; the PL/pgSQL drivers
 * (src/sql/40_evaluate_predict.sql) check the arguments, then turn its
 * rows into MADlib's output table (class_name, class_value, prob, rank).
 *
 * The model is built and its weights loaded once per call.  Rows are read
 * through a read-only SPI cursor, up to batch_size at a time (fewer when
 * the examples are large, so a batch's input stays near
 * PREDICT_BATCH_BYTES), and each batch is one dl_model_predict call.
 * Results go to a tuplestore (materialize mode), which spills to disk
 * beyond work_mem; memory therefore stays at one batch plus the model.
 *
 * IDENTIFICATION
 *	  src/pg/api/predict.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

#include "madlib_dl/dl_model.h"

#include "pg_limits.h"
#include "pg_model.h"
#include "pg_util.h"

/* Default and upper bound of rows per forward pass. */
#define PREDICT_BATCH_DEFAULT 1024
#define PREDICT_BATCH_MAX 65536
/* Soft cap on one batch's input, in bytes (64 MB). */
#define PREDICT_BATCH_BYTES ((int64) 64 * 1024 * 1024)

/* The id of a fetched row for messages: its text, or NULL. */
static const char *
id_label(Datum id, bool isnull)
{
	return isnull ? "NULL" : TextDatumGetCString(id);
}

/* Append "[a,b,c]" of n dims to buf. */
static void
append_shape(StringInfo buf, const int *dims, int n)
{
	appendStringInfoChar(buf, '[');
	for (int i = 0; i < n; i++)
		appendStringInfo(buf, "%s%d", i > 0 ? "," : "", dims[i]);
	appendStringInfoChar(buf, ']');
}

/*
 * Copy one row's feature array into x, dividing by nc.
 *	 x (in_size)
 * arr is the row's float8[], read in storage order; its shape must be the
 * model's input shape (in): the same element count in another shape, the
 * usual mistake being channels first against channels last, is refused,
 * never predicted.  ERROR naming the row's id and column when the array
 * is NULL, has another shape, or holds a NULL, NaN or infinite value, or
 * a value that is out of float32 range after division.
 */
static void
copy_features(float *x, Datum arr_datum, bool arr_null, const DlShape *in, int64 in_size,
			  double nc, Datum id, bool id_null, const char *col)
{
	ArrayType  *arr;
	int64		n;
	const float8 *v;
	bool		same;

	if (arr_null)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s of the row with id %s is NULL", col, id_label(id, id_null)),
				 errhint("Every row needs its features; delete or fix the row.")));
	arr = DatumGetArrayTypeP(arr_datum);
	n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	same = ARR_NDIM(arr) == in->rank;
	for (int i = 0; same && i < in->rank; i++)
		same = ARR_DIMS(arr)[i] == in->dims[i];
	if (!same)
	{
		StringInfoData have;
		StringInfoData want;
		int			want_dims[DL_MAX_RANK] = {0};

		for (int i = 0; i < in->rank && i < DL_MAX_RANK; i++)
			want_dims[i] = (int) in->dims[i];
		initStringInfo(&have);
		initStringInfo(&want);
		append_shape(&have, ARR_DIMS(arr), ARR_NDIM(arr));
		append_shape(&want, want_dims, in->rank);
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("%s of the row with id %s has shape %s but the model's input shape is %s",
						col, id_label(id, id_null), have.data, want.data),
				 n == in_size ?
				 errhint("The array has the right number of values in another layout (channels "
						 "first against channels last?): give every row an array of exactly the "
						 "model's input shape, in row-major order.") :
				 errhint("Give every row an array of exactly the model's input shape %s "
						 "(%lld values), in row-major order.", want.data, (long long) in_size)));
	}
	if (ARR_HASNULL(arr))
	{
		bits8	   *bitmap = ARR_NULLBITMAP(arr);

		for (int64 j = 0; j < n; j++)
			if (!(bitmap[j / 8] & (1 << (j % 8))))
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("%s of the row with id %s has a NULL at position " INT64_FORMAT,
								col, id_label(id, id_null), j + 1),
						 errhint("Every feature must be a number; delete or fix the row.")));
	}
	/* no NULLs (checked above), so the data follows the fixed overhead */
	v = (const float8 *) ((const char *) arr + ARR_OVERHEAD_NONULLS(ARR_NDIM(arr)));
	for (int64 j = 0; j < n; j++)
	{
		double		t = v[j] / nc;

		if (!isfinite(v[j]) || !isfinite((float) t))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("%s of the row with id %s has %s at position " INT64_FORMAT,
							col, id_label(id, id_null),
							isnan(v[j]) ? "NaN" : isinf(v[j]) ? "an infinite value" :
							"a value out of float32 range", j + 1),
					 errhint("Every feature must be a finite number; delete or fix the row.")));
		x[j] = (float) t;
	}
}

/*
 * _predict_rows(model_arch json, model_weights bytea, sql_table regclass,
 *               id_col text, indep_col text, normalizing_const float8,
 *               batch_size int DEFAULT 1024)
 *	 RETURNS TABLE (id text, probs float8[])
 *
 * One row per row of sql_table: id_col cast to text, and the model output
 * (K values, e.g. class probabilities) for indep_col (a numeric array of
 * exactly the model's input shape) divided by normalizing_const.
 * Rows come in the table's scan order.  id_col and indep_col are column
 * names (quoted here, never spliced as SQL).  The caller needs SELECT on
 * the table.  Not STRICT: NULL arguments raise 22004.
 */
PG_FUNCTION_INFO_V1(madlib_dl__predict_rows);
Datum
madlib_dl__predict_rows(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext caller_cxt = CurrentMemoryContext;
	MemoryContext batch_cxt;
	text	   *arch;
	Oid			relid;
	char	   *id_col;
	char	   *indep_col;
	double		nc;
	int64		batch_size = PREDICT_BATCH_DEFAULT;
	DlPgModel  *m;
	int64		in_size;
	int64		K;
	int64		rows_per_fetch;
	StringInfoData query;
	Portal		portal;

	for (int i = 0; i < 6; i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("argument %d of _predict_rows must not be NULL", i + 1),
					 errhint("Call madlib_keras_predict, which fills every argument.")));
	arch = PG_GETARG_TEXT_PP(0);
	relid = PG_GETARG_OID(2);
	id_col = text_to_cstring(PG_GETARG_TEXT_PP(3));
	indep_col = text_to_cstring(PG_GETARG_TEXT_PP(4));
	nc = PG_GETARG_FLOAT8(5);
	if (!PG_ARGISNULL(6))
		batch_size = PG_GETARG_INT32(6);
	if (!(nc > 0.0) || !isfinite(nc))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("normalizing_const %g must be a positive number", nc),
				 errhint("Give the constant the training data was divided by, e.g. 255.0.")));
	if (batch_size < 1 || batch_size > PREDICT_BATCH_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("batch_size " INT64_FORMAT " is out of range", batch_size),
				 errhint("Give a batch_size from 1 to %d.", PREDICT_BATCH_MAX)));

	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != 2)
		elog(ERROR, "_predict_rows must return 2 columns, is declared with %d",
			 rsinfo->setDesc->natts);

	m = dl_pg_model_parse(VARDATA_ANY(arch), VARSIZE_ANY_EXHDR(arch), NULL, NULL, caller_cxt);
	in_size = dl_pg_model_input_size(m);
	K = dl_pg_model_output_width(m);
	if (in_size < 1 || K < 1 || K > (int64) (MaxAllocSize / sizeof(Datum)))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("model has input size " INT64_FORMAT " and output width " INT64_FORMAT,
						in_size, K),
				 errhint("Predict with a model of at most %d outputs.",
						 (int) (MaxAllocSize / sizeof(Datum)))));
	/* in_size * 4 bytes fits easily: the engine bounds shapes far below 2^62 */
	rows_per_fetch = Min(batch_size, Max((int64) 1, PREDICT_BATCH_BYTES / (in_size * 4)));

	/* the memory check, before the model is built */
	{
		char	   *arch_s = text_to_cstring(arch);
		DlPgJobModel jm = {arch_s, NULL, NULL, "the model"};
		DlPgJob		job = {DL_PG_JOB_PREDICT, 1, &jm, 0, 0, 0, rows_per_fetch};

		(void) dl_limits_check_job(&job);
		pfree(arch_s);
	}
	dl_pg_model_create(m, DL_PG_MODEL_INFER, rows_per_fetch);
	dl_pg_model_set_weights(m, PG_GETARG_BYTEA_PP(1));

	initStringInfo(&query);
	appendStringInfo(&query, "SELECT (%s)::pg_catalog.text, (%s)::pg_catalog.float8[] FROM %s",
					 quote_identifier(id_col), quote_identifier(indep_col),
					 dl_pg_relation_sql_name(relid));

	batch_cxt = AllocSetContextCreate(caller_cxt, "madlib_dl predict batch",
									  ALLOCSET_DEFAULT_SIZES);
	portal = dl_pg_spi_open_cursor(query.data);

	for (;;)
	{
		SPITupleTable *tt;
		int64		n;
		float	   *x;			/* (n, in_size) */
		float	   *out;		/* (n, K) */
		Datum	   *probs;		/* (K) */
		MemoryContext old;
		DlError		err;

		CHECK_FOR_INTERRUPTS();
		SPI_cursor_fetch(portal, true, (long) rows_per_fetch);
		n = (int64) SPI_processed;
		if (n == 0)
			break;
		tt = SPI_tuptable;

		old = MemoryContextSwitchTo(batch_cxt);
		/* n * in_size * 4 <= about PREDICT_BATCH_BYTES, or one row's array */
		x = MemoryContextAllocHuge(batch_cxt, (Size) n * (Size) in_size * sizeof(float));
		out = MemoryContextAllocHuge(batch_cxt, (Size) n * (Size) K * sizeof(float));
		probs = palloc(sizeof(Datum) * K);
		for (int64 i = 0; i < n; i++)
		{
			bool		id_null;
			bool		arr_null;
			Datum		id = SPI_getbinval(tt->vals[i], tt->tupdesc, 1, &id_null);
			Datum		arr = SPI_getbinval(tt->vals[i], tt->tupdesc, 2, &arr_null);

			copy_features(x + i * in_size, arr, arr_null, &m->spec->input_shape, in_size, nc,
						  id, id_null, indep_col);
		}

		dl_error_clear(&err);
		dl_pg_check(dl_model_predict(m->model, out, x, n, rows_per_fetch, &err), &err);

		for (int64 i = 0; i < n; i++)
		{
			Datum		values[2];
			bool		nulls[2] = {false, false};

			values[0] = SPI_getbinval(tt->vals[i], tt->tupdesc, 1, &nulls[0]);
			for (int64 k = 0; k < K; k++)
				probs[k] = Float8GetDatum((double) out[i * K + k]);
			values[1] = PointerGetDatum(construct_array(probs, (int) K, FLOAT8OID,
														sizeof(float8), FLOAT8PASSBYVAL,
														TYPALIGN_DOUBLE));
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
		MemoryContextSwitchTo(old);
		SPI_freetuptable(tt);
		MemoryContextReset(batch_cxt);
	}
	SPI_cursor_close(portal);
	SPI_finish();
	MemoryContextDelete(batch_cxt);
	dl_pg_model_free(m);
	return (Datum) 0;
}
