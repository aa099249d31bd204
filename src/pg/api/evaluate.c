/*-------------------------------------------------------------------------
 *
 * evaluate.c
 *	  Loss and metric of a trained model over a preprocessed (packed) table.
 *
 * _evaluate_run() is the numeric half of madlib_keras_evaluate; the
 * PL/pgSQL driver (src/sql/40_evaluate_predict.sql) checks the tables and
 * writes the output table.  It reads the packed table one buffer at a time
 * through an SPI cursor, in buffer_id order, decodes each buffer, and adds
 * its loss and metric sums with dl_model_evaluate (inference mode).  Only
 * one buffer is decoded at a time, so memory stays at one buffer plus the
 * model whatever the table's size.  The result is the mean over every
 * example: the same numbers fit reports as validation loss and metric.
 *
 * IDENTIFICATION
 *	  src/pg/api/evaluate.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "madlib_dl/dl_loss.h"
#include "madlib_dl/dl_model.h"

#include "pg_buffer.h"
#include "pg_limits.h"
#include "pg_model.h"
#include "pg_util.h"

/* Mini-batch size of the forward passes; any value gives the same sums. */
#define EVAL_BATCH_SIZE 1024

/*
 * Turn one-hot rows into class indexes for sparse_categorical_crossentropy:
 * the argmax of each row, the first one on ties, as fit does
 * (src/pg/transport/workers.c), so evaluate and fit agree on every table.
 *	 out (n)  y (n, K)
 */
static void
one_hot_to_index(float *out, const float *y, int64 n, int64 K)
{
	for (int64 i = 0; i < n; i++)
	{
		const float *row = y + i * K;
		int64		best = 0;

		for (int64 j = 1; j < K; j++)
			if (row[j] > row[best])
				best = j;
		out[i] = (float) best;
	}
}

/*
 * _evaluate_run(test regclass, dep_col text, indep_col text, model_arch json,
 *               model_weights bytea, compile_params text) RETURNS float8[]
 *
 * {loss, metric}: the means over every example of the packed table test
 * (columns dep_col, indep_col, <dep_col>_shape, <indep_col>_shape,
 * buffer_id) of the loss and metric that compile_params names.  metric is
 * NULL when compile_params has no metric.  Every buffer's shapes are
 * checked against the architecture (ERROR 22000 naming both).  An empty
 * table is an ERROR.  Not STRICT: NULL arguments raise 22004.
 */
PG_FUNCTION_INFO_V1(madlib_dl__evaluate_run);
Datum
madlib_dl__evaluate_run(PG_FUNCTION_ARGS)
{
	MemoryContext caller_cxt = CurrentMemoryContext;
	MemoryContext buf_cxt;
	Oid			relid;
	char	   *dep;
	char	   *indep;
	text	   *arch;
	char	   *compile;
	DlPgModel  *m;
	DlTrainConfig cfg;
	DlBatchStats stats = {0};
	DlError		err;
	int64		K;
	int64		in_size;
	StringInfoData query;
	Portal		portal;
	Datum		result[2];
	bool		result_null[2] = {false, false};
	int			dims[1] = {2};
	int			lbs[1] = {1};

	for (int i = 0; i < 6; i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("argument %d of _evaluate_run must not be NULL", i + 1),
					 errhint("Call madlib_keras_evaluate, which fills every argument.")));
	relid = PG_GETARG_OID(0);
	dep = text_to_cstring(PG_GETARG_TEXT_PP(1));
	indep = text_to_cstring(PG_GETARG_TEXT_PP(2));
	arch = PG_GETARG_TEXT_PP(3);
	compile = text_to_cstring(PG_GETARG_TEXT_PP(5));
	dl_pg_require_packed_table(relid, indep, dep);

	/* the memory check, before the model is built: no optimizer state */
	{
		char	   *arch_s = text_to_cstring(arch);
		DlPgJobModel jm = {arch_s, compile, NULL, "the model"};
		DlPgJob		job = {DL_PG_JOB_EVALUATE, 1, &jm, 0, 0, 0, EVAL_BATCH_SIZE};

		(void) dl_limits_check_job(&job);
		pfree(arch_s);
	}
	m = dl_pg_model_build(VARDATA_ANY(arch), VARSIZE_ANY_EXHDR(arch), compile, NULL,
						  DL_PG_MODEL_INFER, EVAL_BATCH_SIZE, caller_cxt);
	dl_pg_model_set_weights(m, PG_GETARG_BYTEA_PP(4));
	dl_pg_model_train_config(m, &cfg);
	cfg.batch_size = EVAL_BATCH_SIZE;
	cfg.shuffle = false;
	K = dl_pg_model_output_width(m);
	in_size = dl_pg_model_input_size(m);

	/* The column names come from the summaries; quote them, never splice. */
	initStringInfo(&query);
	appendStringInfo(&query, "SELECT %s, %s, %s, %s, buffer_id FROM %s ORDER BY buffer_id",
					 quote_identifier(dep), quote_identifier(indep),
					 quote_identifier(psprintf("%s_shape", dep)),
					 quote_identifier(psprintf("%s_shape", indep)),
					 dl_pg_relation_sql_name(relid));

	buf_cxt = AllocSetContextCreate(caller_cxt, "madlib_dl evaluate buffer",
									ALLOCSET_DEFAULT_SIZES);
	portal = dl_pg_spi_open_cursor(query.data);

	for (;;)
	{
		HeapTuple	tup;
		TupleDesc	desc;
		Datum		d[5];
		bool		isnull[5];
		MemoryContext old;
		int64		xd[DL_MAX_RANK + 1];
		int64		yd[2];
		int64		n;
		int32		buffer_id;
		float	   *x;			/* (n, in_size) */
		float	   *y;			/* (n, K), or (n, 1) for the sparse loss */

		CHECK_FOR_INTERRUPTS();
		SPI_cursor_fetch(portal, true, 1);
		if (SPI_processed == 0)
			break;
		tup = SPI_tuptable->vals[0];
		desc = SPI_tuptable->tupdesc;
		for (int i = 0; i < 5; i++)
			d[i] = SPI_getbinval(tup, desc, i + 1, &isnull[i]);
		buffer_id = isnull[4] ? -1 : DatumGetInt32(d[4]);
		for (int i = 0; i < 4; i++)
			if (isnull[i])
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("buffer %d of the test table has a NULL %s", buffer_id,
								SPI_fname(desc, i + 1)),
						 errhint("Preprocess the test table again with validation_preprocessor_dl.")));

		old = MemoryContextSwitchTo(buf_cxt);
		dl_pg_model_check_input(m, DatumGetArrayTypeP(d[3]), DatumGetArrayTypeP(d[2]));
		(void) dl_pg_read_shape(DatumGetArrayTypeP(d[3]), xd, DL_MAX_RANK + 1,
								"independent variable shape");
		(void) dl_pg_read_shape(DatumGetArrayTypeP(d[2]), yd, 2, "dependent variable shape");
		n = xd[0];
		if (yd[0] != n)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("buffer %d has " INT64_FORMAT " examples of the independent variable "
							"but " INT64_FORMAT " of the dependent variable",
							buffer_id, n, yd[0]),
					 errhint("Preprocess the test table again with validation_preprocessor_dl.")));
		x = dl_pg_decode_x(DatumGetByteaPP(d[1]), n, in_size, buf_cxt);
		y = dl_pg_decode_y(DatumGetByteaPP(d[0]), n, K, buf_cxt);
		if (dl_loss_y_width(cfg.loss, K) != K)
		{
			/* n * 4 bytes is below the y buffer's n * K * 2 bytes + 2 */
			float	   *idx = palloc(sizeof(float) * (n > 0 ? n : 1));

			one_hot_to_index(idx, y, n, K);
			y = idx;
		}
		MemoryContextSwitchTo(old);

		if (n > 0)
		{
			dl_error_clear(&err);
			dl_pg_check(dl_model_evaluate(m->model, &cfg, x, y, n, &stats, &err), &err);
		}
		SPI_freetuptable(SPI_tuptable);
		MemoryContextReset(buf_cxt);
	}
	SPI_cursor_close(portal);
	SPI_finish();
	MemoryContextDelete(buf_cxt);
	dl_pg_model_free(m);

	if (stats.n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("test table %s has no examples", dl_pg_relation_sql_name(relid)),
				 errhint("Evaluate on a preprocessed table with at least one row.")));
	result[0] = Float8GetDatum(stats.loss_sum / (double) stats.n);
	if (cfg.metric == DL_METRIC_NONE)
		result_null[1] = true;
	else
		result[1] = Float8GetDatum(stats.metric_sum / (double) stats.n);
	PG_RETURN_ARRAYTYPE_P(construct_md_array(result, result_null, 1, dims, lbs, FLOAT8OID,
											 sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}
