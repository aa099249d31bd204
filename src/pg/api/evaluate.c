/*-------------------------------------------------------------------------
 *
 * evaluate.c
 *	  Loss and metric of a trained model over a preprocessed (packed)
 *	  table: the aggregate madlib_keras_evaluate runs on every segment.
 *
 *	  _evaluate_segment(model_arch, model_weights, compile_params,
 *	                    buffer_id, dep, indep, dep_shape, indep_shape)
 *
 * is a plain aggregate over buffers, as MADlib's internal_keras_evaluate:
 * the model arrives as arguments (query parameters: the same datum in
 * every row), the buffers as the rows of the group.  It reads no table
 * itself (Greenplum refuses that on a segment), so the PL/pgSQL driver
 * (src/sql/evaluate_predict.sql) runs it grouped by __dist_key__, on
 * the segment that holds each group, and adds the groups' sums in key
 * order.
 *
 *	 transition, one buffer: the first row of the process builds the
 *	     model (after the memory check) and loads the weights, kept in the
 *	     function's per-query cache for every group; each buffer's shapes
 *	     are checked against the model, the buffer is decoded and its loss
 *	     and metric added with dl_model_evaluate (inference mode, mini-
 *	     batches of EVAL_BATCH_SIZE).  Only one buffer is decoded at a
 *	     time, so memory stays at one buffer plus the model whatever the
 *	     table's size;
 *	 final: the group's sums as a madlib_dl._step_result (state NULL,
 *	     metric_sum NULL when compile_params has no metric).
 *
 * IDENTIFICATION
 *	  src/pg/api/evaluate.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "madlib_dl/dl_loss.h"
#include "madlib_dl/dl_metrics.h"
#include "madlib_dl/dl_model.h"

#include "pg_buffer.h"
#include "pg_limits.h"
#include "pg_model.h"
#include "pg_util.h"
#include "segments.h"

/*
 * Mini-batch size of the forward passes, fewer rows when the model's
 * activations for that many would be over madlib_dl.max_model_memory;
 * any value gives the same sums.
 */
#define EVAL_BATCH_SIZE 1024

/* The model, built once per process and query (the transition's fn_extra). */
typedef struct EvalModel
{
	DlPgModel  *m;
	DlTrainConfig cfg;
	int64		K;
	int64		in_size;
	Size		sizes[3];		/* of the model arguments as the first row gave
								 * them: every row must give the same */
	int			n_acc;			/* doubles of the metric sums (dl_metrics.h)
								 * of every metric of compile_params; 0 for
								 * none or a model of several inputs or
								 * outputs */
} EvalModel;

/* The transition state: one group's sums. */
typedef struct EvalState
{
	DlBatchStats stats;
	double		seconds;
	bool		has_metric;		/* compile_params name a metric */
	int			n_out;			/* outputs of a model of several; else 0 */
	int			n_acc;			/* EvalModel's */
	double	   *acc;			/* (n_acc) the metric sums, in the order of
								 * compile_params' metrics */
} EvalState;

/*
 * Turn one-hot rows into class indexes for sparse_categorical_crossentropy:
 * the argmax of each row, the first one on ties, as fit does
 * (src/pg/runtime/step.c), so evaluate and fit agree on every table.
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
 * Add the metric sums of compile_params' metrics over n samples of
 * buffer x to acc: the model's outputs for x (inference mode, the
 * forward pass dl_model_evaluate makes, made again), against y as
 * dl_model_evaluate reads it.
 *	 x (n, in_size)  y (n, K), or (n, 1) for the sparse loss
 */
static void
eval_acc_add(EvalModel *em, const float *x, const float *y, int64 n, double *acc)
{
	const DlCompileParams *cp = &em->m->compile;
	DlMetricList l;
	float	   *out;			/* (n, K) */
	DlError		err;

	if (em->n_acc == 0 || n <= 0)
		return;
	if ((Size) n > MaxAllocHugeSize / sizeof(float) / (Size) em->K)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a buffer of " INT64_FORMAT " examples is too large for the metrics", n),
				 errhint("Preprocess the test table with a smaller buffer_size.")));
	/* n * K floats: the size of the decoded labels y of the same buffer */
	out = palloc_extended(sizeof(float) * (Size) n * (Size) em->K, MCXT_ALLOC_HUGE);
	dl_error_clear(&err);
	dl_pg_check(dl_model_predict(em->m->model, out, x, n, EVAL_BATCH_SIZE, &err), &err);
	l = dl_compile_params_metric_list(cp);
	dl_metric_list_acc_add(&l, em->cfg.loss, out, y, n, em->K, acc);
	pfree(out);
}

/*
 * The model of the model arguments 1..3 (arch, weights, compile_params):
 * built on the first call of the query in this process, after the memory
 * check, in the function's per-query memory; later rows must pass the
 * same (their sizes are compared).
 */
static EvalModel *
eval_model(FunctionCallInfo fcinfo)
{
	EvalModel  *em = (EvalModel *) fcinfo->flinfo->fn_extra;
	static const char *const names[3] = {"model_arch", "model_weights", "compile_params"};
	Size		sizes[3];

	for (int i = 0; i < 3; i++)
	{
		if (PG_ARGISNULL(i + 1))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not be NULL", names[i]),
					 errhint("Call madlib_keras_evaluate, which fills every argument.")));
		sizes[i] = VARSIZE_ANY(DatumGetPointer(PG_GETARG_DATUM(i + 1)));
	}
	if (em == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
		text	   *arch = PG_GETARG_TEXT_PP(1);
		char	   *arch_s = text_to_cstring(arch);
		char	   *compile = text_to_cstring(PG_GETARG_TEXT_PP(3));
		DlPgJobModel jm = {arch_s, compile, NULL, "the model"};
		DlPgJob		job = {DL_PG_JOB_EVALUATE, 1, &jm, 0, 0, 0, EVAL_BATCH_SIZE};
		int64		batch;

		/*
		 * the largest mini-batch up to EVAL_BATCH_SIZE that fits
		 * madlib_dl.max_model_memory, then the memory check, before the
		 * model is built: no optimizer state
		 */
		batch = dl_limits_fit_batch(&job, EVAL_BATCH_SIZE);
		job.batch_size = batch;
		(void) dl_limits_check_job(&job);
		em = palloc0(sizeof(EvalModel));
		em->m = dl_pg_model_build(VARDATA_ANY(arch), VARSIZE_ANY_EXHDR(arch), compile, NULL,
								  DL_PG_MODEL_INFER, batch, fcinfo->flinfo->fn_mcxt);
		dl_pg_model_set_weights(em->m, PG_GETARG_BYTEA_PP(2));
		dl_pg_model_train_config(em->m, &em->cfg);
		em->cfg.batch_size = batch;
		em->cfg.shuffle = false;
		em->K = dl_pg_model_output_width(em->m);
		em->in_size = dl_pg_model_input_size(em->m);
		em->n_acc = dl_pg_model_metric_sums_len(em->m, "evaluate");
		memcpy(em->sizes, sizes, sizeof(sizes));
		MemoryContextSwitchTo(old);
		fcinfo->flinfo->fn_extra = em;
	}
	else if (memcmp(em->sizes, sizes, sizeof(sizes)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the rows of one evaluation give different models"),
				 errhint("Pass the model as query parameters, the same in every row.")));
	return em;
}

/*
 * Output k's labels of n examples from its packed value y: decoded, and
 * one-hot rows turned into class indexes when its loss is sparse.
 */
static const float *
eval_labels(EvalModel *em, int k, bytea *y, int64 n)
{
	int64		K = dl_pg_model_output_width_k(em->m, k);
	DlLossKind	loss = em->cfg.outputs != NULL ? em->cfg.outputs[k].loss : em->cfg.loss;
	float	   *v = dl_pg_decode_y(y, n, K, CurrentMemoryContext);

	if (dl_loss_y_width(loss, K) != K)
	{
		/* n * 4 bytes is below the y buffer's n * K * 2 bytes + 2 */
		float	   *idx = palloc(sizeof(float) * (n > 0 ? n : 1));

		one_hot_to_index(idx, v, n, K);
		return idx;
	}
	return v;
}

/*
 * Add the loss and metric of buffer (arguments 4..8: buffer_id, dep,
 * indep, dep_shape, indep_shape) to stats, decoded in the current memory
 * context (the aggregate's per-row one).
 */
static void
eval_buffer(FunctionCallInfo fcinfo, EvalModel *em, DlBatchStats *stats, double *acc)
{
	static const char *const names[4] = {"dependent variable", "independent variable",
	"dependent variable shape", "independent variable shape"};
	int32		buffer_id = PG_ARGISNULL(4) ? -1 : PG_GETARG_INT32(4);
	int64		xd[DL_MAX_RANK + 1];
	int64		yd[2];
	int64		n;
	float	   *x;			/* (n, in_size) */
	float	   *y;			/* (n, K), or (n, 1) for the sparse loss */
	DlError		err;

	for (int i = 0; i < 4; i++)
		if (PG_ARGISNULL(5 + i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("buffer %d of the test table has a NULL %s", buffer_id, names[i]),
					 errhint("Preprocess the test table again with validation_preprocessor_dl.")));
	dl_pg_model_check_input(em->m, PG_GETARG_ARRAYTYPE_P(8), PG_GETARG_ARRAYTYPE_P(7));
	(void) dl_pg_read_shape(PG_GETARG_ARRAYTYPE_P(8), xd, DL_MAX_RANK + 1, "independent variable shape");
	(void) dl_pg_read_shape(PG_GETARG_ARRAYTYPE_P(7), yd, 2, "dependent variable shape");
	n = xd[0];
	if (yd[0] != n)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("buffer %d has " INT64_FORMAT " examples of the independent variable "
						"but " INT64_FORMAT " of the dependent variable",
						buffer_id, n, yd[0]),
				 errhint("Preprocess the test table again with validation_preprocessor_dl.")));
	x = dl_pg_decode_x(PG_GETARG_BYTEA_PP(6), n, em->in_size, CurrentMemoryContext);
	y = dl_pg_decode_y(PG_GETARG_BYTEA_PP(5), n, em->K, CurrentMemoryContext);
	if (dl_loss_y_width(em->cfg.loss, em->K) != em->K)
	{
		/* n * 4 bytes is below the y buffer's n * K * 2 bytes + 2 */
		float	   *idx = palloc(sizeof(float) * (n > 0 ? n : 1));

		one_hot_to_index(idx, y, n, em->K);
		y = idx;
	}
	if (n > 0)
	{
		int64_t		row;

		dl_error_clear(&err);
		/* token ids an Embedding cannot look up: name the row and its buffer */
		if (dl_model_check_ids(dl_model_spec(em->m->model), 0, x, n, &row, &err) != DL_OK)
		{
			dl_error_prefix(&err, "row " INT64_FORMAT " of buffer %d of the test table",
							(int64) (row + 1), buffer_id);
			dl_pg_report(&err);
		}
		dl_pg_check(dl_model_evaluate(em->m->model, &em->cfg, x, y, n, stats, &err), &err);
		eval_acc_add(em, x, y, n, acc);
	}
}

/*
 * Add the loss and metric of a buffer of several variables (arguments
 * 4..: buffer_id, n_x, then each variable and its shape, dl_gp_row_vars)
 * to stats: one variable per model input and output, each of its shape.
 */
static void
eval_buffer_io(FunctionCallInfo fcinfo, EvalModel *em, DlBatchStats *stats)
{
	const DlModelSpec *spec = em->m->spec;
	int32		buffer_id = PG_ARGISNULL(4) ? -1 : PG_GETARG_INT32(4);
	Datum		vals[DL_SEG_MAX_VARS];
	ArrayType  *shapes[DL_SEG_MAX_VARS];
	const float *xs[DL_MAX_IO];
	const float *ys[DL_MAX_IO];
	int			n_x;
	int			n_y;
	int64		n = -1;
	DlError		err;

	dl_gp_row_vars(fcinfo, 5, &n_x, &n_y, vals, shapes);
	if (n_x != spec->n_inputs || n_y != spec->n_outputs)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("buffer %d has %d independent and %d dependent variables, the model has %d inputs and %d outputs",
						buffer_id, n_x, n_y, spec->n_inputs, spec->n_outputs),
				 errhint("Evaluate on a table preprocessed with one variable per model input and output.")));
	for (int i = 0; i < n_x + n_y; i++)
	{
		bool		y = i >= n_x;
		int			k = y ? i - n_x : i;
		int64		d[DL_MAX_RANK + 1];

		dl_pg_model_check_io(em->m, y ? -1 : k, shapes[i], "the test table", y ? k : -1,
							 shapes[i], "the test table");
		(void) dl_pg_read_shape(shapes[i], d, DL_MAX_RANK + 1, "variable shape");
		if (n >= 0 && d[0] != n)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("buffer %d has " INT64_FORMAT " examples of one variable and " INT64_FORMAT " of another",
							buffer_id, n, d[0]),
					 errhint("Preprocess the test table again with validation_preprocessor_dl.")));
		n = d[0];
		if (!y)
			xs[k] = dl_pg_decode_x(DatumGetByteaPP(vals[i]), n, dl_pg_model_input_size_k(em->m, k),
								   CurrentMemoryContext);
		else
			ys[k] = eval_labels(em, k, DatumGetByteaPP(vals[i]), n);
	}
	if (n > 0)
	{
		int64_t		row;

		dl_error_clear(&err);
		/* token ids an Embedding cannot look up: name the row and its buffer */
		for (int k = 0; k < n_x; k++)
			if (dl_model_check_ids(spec, k, xs[k], n, &row, &err) != DL_OK)
			{
				dl_error_prefix(&err, "row " INT64_FORMAT " of buffer %d of the test table",
								(int64) (row + 1), buffer_id);
				dl_pg_report(&err);
			}
		dl_pg_check(dl_model_evaluate_io(em->m->model, &em->cfg, xs, ys, n, stats, &err), &err);
	}
}

/*
 * The transition of _evaluate_segment (io false: one variable of each
 * kind, arguments 5..8) or of _evaluate_segment_io (several).
 */
static Datum
evaluate_transition(FunctionCallInfo fcinfo, bool io)
{
	MemoryContext aggcxt;
	EvalState  *st = PG_ARGISNULL(0) ? NULL : (EvalState *) PG_GETARG_POINTER(0);
	EvalModel  *em;
	instr_time	start;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("_evaluate_transition must be called as an aggregate support function"),
				 errhint("Call the aggregate _evaluate_segment.")));
	CHECK_FOR_INTERRUPTS();
	INSTR_TIME_SET_CURRENT(start);
	em = eval_model(fcinfo);
	if (st == NULL)
	{
		st = MemoryContextAllocZero(aggcxt, sizeof(EvalState));
		st->has_metric = em->cfg.metric != DL_METRIC_NONE;
		st->n_out = em->m->spec->n_outputs > 1 ? em->m->spec->n_outputs : 0;
		st->n_acc = em->n_acc;
		if (em->n_acc > 0)
			st->acc = MemoryContextAllocZero(aggcxt, sizeof(double) * em->n_acc);
	}
	if (io)
		eval_buffer_io(fcinfo, em, &st->stats);
	else if (em->m->spec->n_inputs == 1 && em->m->spec->n_outputs == 1)
		eval_buffer(fcinfo, em, &st->stats, st->acc);
	else
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("the model has %d inputs and %d outputs, the test table one variable of each",
						em->m->spec->n_inputs, em->m->spec->n_outputs),
				 errhint("Evaluate on a table preprocessed with one variable per model input and output.")));
	st->seconds += dl_pg_seconds_since(start);
	PG_RETURN_POINTER(st);
}

PG_FUNCTION_INFO_V1(madlib_dl__evaluate_transition);

/*
 * madlib_dl._evaluate_transition(state internal, model_arch json,
 *     model_weights bytea, compile_params text, buffer_id int, dep bytea,
 *     indep bytea, dep_shape int[], indep_shape int[]) RETURNS internal
 *
 * Add one buffer's loss and metric sums.  Every buffer's shapes are
 * checked against the architecture (ERROR 22000 naming both); NULLs are
 * ERROR 22004.
 */
Datum
madlib_dl__evaluate_transition(PG_FUNCTION_ARGS)
{
	return evaluate_transition(fcinfo, false);
}

PG_FUNCTION_INFO_V1(madlib_dl__evaluate_transition_io);

/*
 * madlib_dl._evaluate_transition_io(state internal, model_arch json,
 *     model_weights bytea, compile_params text, buffer_id int, n_x int,
 *     VARIADIC "any") RETURNS internal
 *
 * _evaluate_transition for a buffer of several variables: n_x
 * independent ones, then the dependent ones, each a bytea and its
 * int[] shape, one per model input and output.
 */
Datum
madlib_dl__evaluate_transition_io(PG_FUNCTION_ARGS)
{
	return evaluate_transition(fcinfo, true);
}

PG_FUNCTION_INFO_V1(madlib_dl__evaluate_final);

/*
 * madlib_dl._evaluate_final(state internal) RETURNS madlib_dl._step_result
 *
 * The group's loss and metric sums over n examples (no rows: n 0), its
 * seconds; state and diverged NULL, metric_sum NULL when the model's
 * compile_params name no metric.
 */
Datum
madlib_dl__evaluate_final(PG_FUNCTION_ARGS)
{
	EvalState  *st = PG_ARGISNULL(0) ? NULL : (EvalState *) PG_GETARG_POINTER(0);
	TupleDesc	tupdesc;
	Datum		values[9] = {0};
	bool		nulls[9] = {true, false, false, false, false, true, true, true, true};

	if (!AggCheckCallContext(fcinfo, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("_evaluate_final must be called as an aggregate support function"),
				 errhint("Call the aggregate _evaluate_segment.")));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE || tupdesc->natts != 9)
		elog(ERROR, "madlib_dl: _evaluate_final must return madlib_dl._step_result");
	if (st != NULL)
		dl_seg_output_sums(st->n_out, st->stats.output_loss_sum, st->stats.output_metric_sum,
						   values + 6, nulls + 6);
	values[1] = Float8GetDatum(st != NULL ? st->stats.loss_sum : 0.0);
	values[2] = Float8GetDatum(st != NULL ? st->stats.metric_sum : 0.0);
	values[3] = Int64GetDatum(st != NULL ? st->stats.n : 0);
	values[4] = Float8GetDatum(st != NULL ? st->seconds : 0.0);
	nulls[2] = st != NULL && !st->has_metric;
	if (st != NULL && st->acc != NULL)
	{
		/* the metric sums, as doubles, in the state column (_metric_sums) */
		Size		len = sizeof(double) * (Size) st->n_acc;
		bytea	   *b = palloc(VARHDRSZ + len);

		SET_VARSIZE(b, VARHDRSZ + len);
		memcpy(VARDATA(b), st->acc, len);
		values[0] = PointerGetDatum(b);
		nulls[0] = false;
	}
	tupdesc = BlessTupleDesc(tupdesc);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
