/*-------------------------------------------------------------------------
 *
 * compat_predict.c
 *	  madlib_dl 0.1.0's _predict_rows, served by this library: between a
 *	  package upgrade and ALTER EXTENSION madlib_dl UPDATE, 0.1.0's
 *	  madlib_keras_predict and predict_byom call it, and trained models
 *	  must keep predicting (docs/releasing.md, "The new library serves the
 *	  old SQL").  0.2.0's SQL predicts through _predict_batch (predict.c);
 *	  this file is only 0.1.0's row reader on the same engine calls, the
 *	  same memory check and the same token-id check, so its predictions
 *	  are the bytes 0.2.0 gives.  Removed with the release that stops
 *	  supporting upgrades from 0.1.0.
 *
 * IDENTIFICATION
 *	  src/pg/api/compat_predict.c
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
#include "utils/tuplestore.h"

#include "madlib_dl/dl_model.h"

#include "pg_limits.h"
#include "pg_model.h"
#include "pg_util.h"
#include "predict.h"

/* 0.1.0's bounds: rows per forward pass, and one batch's input in bytes */
#define OLD_PREDICT_BATCH_DEFAULT 1024
#define OLD_PREDICT_BATCH_MAX 65536
#define OLD_PREDICT_BATCH_BYTES ((int64) 64 * 1024 * 1024)

/*
 * Copy one row's feature array (float8[], any dimensions, storage order)
 * into x, divided by nc.  x (in_size).  As 0.1.0 did, only the element
 * count must be the model's input size (0.2.0's predict wants the shape).
 */
static void
copy_features(float *x, Datum arr_datum, bool arr_null, int64 in_size, double nc,
			  Datum id, bool id_null, const char *col)
{
	ArrayType  *arr;
	int64		n;

	arr = dl_pg_predict_feature_array(arr_datum, arr_null, col, id, id_null);
	n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	if (n != in_size)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("%s of the row with id %s has " INT64_FORMAT " values but the model takes " INT64_FORMAT,
						col, dl_pg_predict_id_label(id, id_null), n, in_size),
				 errhint("Every row's array must hold exactly the model's input size "
						 "(the product of its input shape), in row-major order.")));
	dl_pg_predict_copy_values(x, arr, n, nc, col, id, id_null);
}

/*
 * Build the model of arch for inference over batches of at most
 * *rows_per_fetch rows (lowered to keep a batch's input near 64 MB),
 * after the memory check; a model of several inputs or outputs is 0.2.0's
 * to predict (0.1.0 could not load one).
 */
static DlPgModel *
old_predict_model(text *arch, bytea *weights, int64 *rows_per_fetch, MemoryContext cxt)
{
	char	   *arch_s = text_to_cstring(arch);
	DlPgJobModel jm = {arch_s, NULL, NULL, "the model"};
	DlPgJob		job = {DL_PG_JOB_PREDICT, 1, &jm, 0, 0, 0, 0};
	DlPgModel  *m;
	int64		in_size;
	int64		K;

	m = dl_pg_model_parse(VARDATA_ANY(arch), VARSIZE_ANY_EXHDR(arch), NULL, NULL, cxt);
	if (m->spec->n_inputs != 1 || m->spec->n_outputs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the model has %d inputs and %d outputs, which madlib_dl 0.1.0's predict cannot give",
						m->spec->n_inputs, m->spec->n_outputs),
				 errhint("Run ALTER EXTENSION madlib_dl UPDATE, then predict with one variable per input.")));
	in_size = dl_pg_model_input_size(m);
	K = dl_pg_model_output_width(m);
	if (in_size < 1 || K < 1 || K > (int64) (MaxAllocSize / sizeof(Datum)))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("model has input size " INT64_FORMAT " and output width " INT64_FORMAT, in_size, K),
				 errhint("Predict with a model that reads its input and has at most %d outputs.",
						 (int) (MaxAllocSize / sizeof(Datum)))));
	/* in_size * 4 fits easily: the engine bounds shapes far below 2^62 */
	*rows_per_fetch = Min(*rows_per_fetch, Max((int64) 1, OLD_PREDICT_BATCH_BYTES / (in_size * 4)));
	job.batch_size = *rows_per_fetch;
	(void) dl_limits_check_job(&job);
	pfree(arch_s);
	dl_pg_model_create(m, DL_PG_MODEL_INFER, *rows_per_fetch);
	dl_pg_model_set_weights(m, weights);
	return m;
}

/* One call of 0.1.0's _predict_rows: its arguments, model and state. */
typedef struct OldPredict
{
	ReturnSetInfo *rsinfo;
	Oid			relid;			/* the table to predict from */
	char	   *id_col;
	char	   *indep_col;
	double		nc;				/* normalizing_const */
	int64		batch_size;
	DlPgModel  *m;
	int64		in_size;
	int64		K;
	char	   *query;			/* the rows' (id, features) */
	MemoryContext batch_cxt;	/* one batch's buffers, reset after each */
} OldPredict;

/*
 * Check the call's declared signature (0.1.0's) and its arguments, into
 * p.  ERROR when an argument is NULL or out of range.
 */
static void
old_predict_args(FunctionCallInfo fcinfo, OldPredict *p)
{
	static const Oid old_types[] = {JSONOID, BYTEAOID, REGCLASSOID, TEXTOID, TEXTOID, FLOAT8OID, INT4OID};

	if (PG_NARGS() != (int) lengthof(old_types))
		dl_pg_old_sql_error(fcinfo, "0.1.0");
	for (int i = 0; i < (int) lengthof(old_types); i++)
		if (dl_pg_declared_argtype(fcinfo, i) != old_types[i])
			dl_pg_old_sql_error(fcinfo, "0.1.0");
	for (int i = 0; i < 6; i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("argument %d of _predict_rows must not be NULL", i + 1),
					 errhint("Call madlib_keras_predict, which fills every argument.")));
	p->relid = PG_GETARG_OID(2);
	p->id_col = text_to_cstring(PG_GETARG_TEXT_PP(3));
	p->indep_col = text_to_cstring(PG_GETARG_TEXT_PP(4));
	p->nc = PG_GETARG_FLOAT8(5);
	if (!PG_ARGISNULL(6))
		p->batch_size = PG_GETARG_INT32(6);
	if (!(p->nc > 0.0) || !isfinite(p->nc))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("normalizing_const %g must be a positive number", p->nc),
				 errhint("Give the constant the training data was divided by, e.g. 255.0.")));
	if (p->batch_size < 1 || p->batch_size > OLD_PREDICT_BATCH_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("batch_size " INT64_FORMAT " is out of range", p->batch_size),
				 errhint("Give a batch_size from 1 to %d.", OLD_PREDICT_BATCH_MAX)));
}

/* The query of the rows to predict, into p->query, once the table is trusted. */
static void
old_predict_query(OldPredict *p)
{
	StringInfoData query;

	/* no cast, domain or policy of another role runs (docs/security.md) */
	dl_pg_require_trusted_table(p->relid, "a table to predict from");
	initStringInfo(&query);
	appendStringInfo(&query, "SELECT (%s)::pg_catalog.text, (%s)::pg_catalog.float8[] FROM %s",
					 quote_identifier(p->id_col), quote_identifier(p->indep_col),
					 dl_pg_relation_sql_name(p->relid));
	p->query = query.data;
}

/* Each of the n rows of tt: its id and its K probabilities out, as a result row. */
static void
old_predict_emit(OldPredict *p, SPITupleTable *tt, const float *out, int64 n)
{
	int64		K = p->K;
	Datum	   *probs = palloc(sizeof(Datum) * K);	/* (K) */

	for (int64 i = 0; i < n; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		values[0] = SPI_getbinval(tt->vals[i], tt->tupdesc, 1, &nulls[0]);
		for (int64 k = 0; k < K; k++)
			probs[k] = Float8GetDatum((double) out[i * K + k]);
		values[1] = PointerGetDatum(construct_array(probs, (int) K, FLOAT8OID, sizeof(float8),
													FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		tuplestore_putvalues(p->rsinfo->setResult, p->rsinfo->setDesc, values, nulls);
	}
}

/* Predict the n fetched rows of tt and emit their result rows, in p->batch_cxt. */
static void
old_predict_batch(OldPredict *p, SPITupleTable *tt, int64 n)
{
	MemoryContext old = MemoryContextSwitchTo(p->batch_cxt);
	float	   *x;				/* (n, in_size) */
	float	   *out;			/* (n, K) */
	DlError		err;
	int64_t		bad_row;

	/* n * in_size * 4 <= about 64 MB, or one row's array */
	x = MemoryContextAllocHuge(p->batch_cxt, (Size) n * (Size) p->in_size * sizeof(float));
	out = MemoryContextAllocHuge(p->batch_cxt, (Size) n * (Size) p->K * sizeof(float));
	for (int64 i = 0; i < n; i++)
	{
		bool		id_null;
		bool		arr_null;
		Datum		id = SPI_getbinval(tt->vals[i], tt->tupdesc, 1, &id_null);
		Datum		arr = SPI_getbinval(tt->vals[i], tt->tupdesc, 2, &arr_null);

		copy_features(x + i * p->in_size, arr, arr_null, p->in_size, p->nc, id, id_null, p->indep_col);
	}

	dl_error_clear(&err);
	/* token ids an Embedding cannot look up: name the row by its id */
	if (dl_model_check_ids(dl_model_spec(p->m->model), 0, x, n, &bad_row, &err) != DL_OK)
	{
		bool		id_null;
		Datum		id = SPI_getbinval(tt->vals[bad_row], tt->tupdesc, 1, &id_null);

		dl_error_prefix(&err, "the row with id %s", dl_pg_predict_id_label(id, id_null));
		dl_pg_report(&err);
	}
	dl_pg_check(dl_model_predict(p->m->model, out, x, n, p->batch_size, &err), &err);
	old_predict_emit(p, tt, out, n);
	MemoryContextSwitchTo(old);
}

/*
 * _predict_rows(model_arch json, model_weights bytea, sql_table regclass,
 *               id_col text, indep_col text, normalizing_const float8,
 *               batch_size int DEFAULT 1024)
 *	 RETURNS TABLE (id text, probs float8[])
 *
 * As in 0.1.0: one row per row of sql_table, id_col as text and the
 * model's output for indep_col divided by normalizing_const, in the
 * table's scan order.  id_col and indep_col are quoted column names; the
 * caller needs SELECT on the table.  Any other declaration of the symbol
 * (a later release's SQL) is refused before an argument is read.
 */
PG_FUNCTION_INFO_V1(madlib_dl__predict_rows);
Datum
madlib_dl__predict_rows(PG_FUNCTION_ARGS)
{
	OldPredict	p = {0};
	Portal		portal;
	MemoryContext caller_cxt = CurrentMemoryContext;

	p.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	p.batch_size = OLD_PREDICT_BATCH_DEFAULT;
	old_predict_args(fcinfo, &p);

	InitMaterializedSRF(fcinfo, 0);
	if (p.rsinfo->setDesc->natts != 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("_predict_rows returns 2 columns, is declared with %d", p.rsinfo->setDesc->natts),
				 errhint("Run ALTER EXTENSION madlib_dl UPDATE.")));

	p.m = old_predict_model(PG_GETARG_TEXT_PP(0), PG_GETARG_BYTEA_PP(1), &p.batch_size, caller_cxt);
	p.in_size = dl_pg_model_input_size(p.m);
	p.K = dl_pg_model_output_width(p.m);

	old_predict_query(&p);
	p.batch_cxt = AllocSetContextCreate(caller_cxt, "madlib_dl 0.1.0 predict batch", ALLOCSET_DEFAULT_SIZES);
	portal = dl_pg_spi_open_cursor(p.query);
	for (;;)
	{
		SPITupleTable *tt;
		int64		n;

		CHECK_FOR_INTERRUPTS();
		SPI_cursor_fetch(portal, true, (long) p.batch_size);
		n = (int64) SPI_processed;
		if (n == 0)
			break;
		tt = SPI_tuptable;
		old_predict_batch(&p, tt, n);
		SPI_freetuptable(tt);
		MemoryContextReset(p.batch_cxt);
	}
	SPI_cursor_close(portal);
	SPI_finish();
	MemoryContextDelete(p.batch_cxt);
	dl_pg_model_free(p.m);
	return (Datum) 0;
}
