/*-------------------------------------------------------------------------
 *
 * predict.c
 *	  Model outputs for raw rows, a batch of rows per forward pass, by a
 *	  function that reads no table: the segment-side half of
 *	  madlib_keras_predict and madlib_keras_predict_byom.
 *
 *	  _predict_batch(model_arch, model_weights, normalizing_const,
 *	                 batch_size, feature_col, max_rank,
 *	                 id_value, features, flush)
 *	    RETURNS SETOF (id text, class_index int, prob float8, rank int)
 *
 * is a set-returning function in the SELECT list of a query over the
 * test table (src/sql/evaluate_predict.sql, _ep_write_predictions).
 * Each call brings one row; the function keeps it in a batch and returns
 * nothing, until the batch is full or a row with flush = true comes:
 * then one dl_model_predict call predicts the batch, and the function
 * returns every row's outputs, a row per class (class_index 1..K, its
 * probability, its rank 1..K by probability, ties by class index; ranks
 * over max_rank left out).  The query ends its rows with a flush row: on
 * PostgreSQL one, on Greenplum one per segment (gp_dist_random('gp_id')),
 * so each segment's process predicts its own rows, and the model comes as
 * query parameters: no SPI, which Greenplum refuses on a segment for a
 * user table, as MADlib's internal_keras_predict.
 *
 * The model is built and its weights loaded once per query and process,
 * after the memory check.  Batches hold up to batch_size rows (fewer when
 * the examples are large, so a batch's input stays near
 * PREDICT_BATCH_BYTES, and fewer again when the model's activations for
 * that many rows would be over madlib_dl.max_model_memory: the largest
 * batch that fits, dl_limits_fit_batch), so a large image model predicts
 * at the default limit.  Memory stays at one batch plus the model; with
 * oneDNN's kernels the numbers do not depend on the batch (a lone row
 * runs as two, predict_run).
 *
 * IDENTIFICATION
 *	  src/pg/api/predict.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "access/htup_details.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/typcache.h"

#include "madlib_dl/dl_model.h"

#include "pg_limits.h"
#include "pg_model.h"
#include "pg_util.h"
#include "predict.h"

/* Upper bound of rows per forward pass. */
#define PREDICT_BATCH_MAX 65536
/* Soft cap on one batch's input, in bytes (64 MB). */
#define PREDICT_BATCH_BYTES ((int64) 64 * 1024 * 1024)

/* The id of a fetched row for messages: its text, or NULL. */
const char *
dl_pg_predict_id_label(Datum id, bool isnull)
{
	return isnull ? "NULL" : TextDatumGetCString(id);
}

ArrayType *
dl_pg_predict_feature_array(Datum arr_datum, bool arr_null, const char *col, Datum id, bool id_null)
{
	if (arr_null)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s of the row with id %s is NULL", col, dl_pg_predict_id_label(id, id_null)),
				 errhint("Every row needs its features; delete or fix the row.")));
	return DatumGetArrayTypeP(arr_datum);
}

/*
 * ERROR 22000: feature j (0-based) of column col of the row with id id
 * is d, NaN or infinite, or out of float32 range after the division.
 */
static void pg_attribute_noreturn()
bad_feature(double d, int64 j, const char *col, Datum id, bool id_null)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_EXCEPTION),
			 errmsg("%s of the row with id %s has %s at position " INT64_FORMAT,
					col, dl_pg_predict_id_label(id, id_null),
					isnan(d) ? "NaN" : isinf(d) ? "an infinite value" :
					"a value out of float32 range", j + 1),
			 errhint("Every feature must be a finite number; delete or fix the row.")));
}

/* ERROR 22004 naming the first NULL of the n elements of arr. */
static void
check_no_null_features(ArrayType *arr, int64 n, const char *col, Datum id, bool id_null)
{
	int64		j = dl_pg_array_first_null(arr, n);

	if (j >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s of the row with id %s has a NULL at position " INT64_FORMAT,
						col, dl_pg_predict_id_label(id, id_null), j + 1),
				 errhint("Every feature must be a number; delete or fix the row.")));
}

/*
 * Copy the n values of arr (a float8[] or, for row mode, a real[] of n
 * elements, in storage order) into x, divided by nc.  x (n).  ERROR naming column col of the row with
 * id id (NULL: id_null) when a value is NULL, NaN or infinite, or out of
 * float32 range after the division.  0.1.0's _predict_rows reads its rows
 * with it too (compat_predict.c).
 */
void
dl_pg_predict_copy_values(float *x, ArrayType *arr, int64 n, double nc, const char *col,
						  Datum id, bool id_null)
{
	const float8 *v;

	check_no_null_features(arr, n, col, id, id_null);
	/* no NULL elements (checked above); a null bitmap may still be there */
	v = (const float8 *) ((const char *) arr + (ARR_HASNULL(arr) ? (Size) arr->dataoffset :
												ARR_OVERHEAD_NONULLS(ARR_NDIM(arr))));
	if (ARR_ELEMTYPE(arr) == FLOAT4OID)
	{
		/* a real[] read as it is stored: the float8 of each value, as a cast gives */
		const float4 *v4 = (const float4 *) v;

		for (int64 j = 0; j < n; j++)
		{
			double		d = (double) v4[j];
			double		t = d / nc;

			if (!isfinite(d) || !isfinite((float) t))
				bad_feature(d, j, col, id, id_null);
			x[j] = (float) t;
		}
		return;
	}
	if (ARR_ELEMTYPE(arr) != FLOAT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s of the row with id %s is an array of type %s, not real[] or float8[]",
						col, dl_pg_predict_id_label(id, id_null), format_type_be(ARR_ELEMTYPE(arr))),
				 errhint("Call madlib_keras_predict, which casts the features.")));
	for (int64 j = 0; j < n; j++)
	{
		double		t = v[j] / nc;

		if (!isfinite(v[j]) || !isfinite((float) t))
			bad_feature(v[j], j, col, id, id_null);
		x[j] = (float) t;
	}
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
void
dl_pg_predict_copy_row(float *x, Datum arr_datum, bool arr_null, const DlShape *in, int64 in_size,
					   double nc, Datum id, bool id_null, const char *col)
{
	ArrayType  *arr;
	int64		n;
	StringInfoData have;
	StringInfoData want;

	arr = dl_pg_predict_feature_array(arr_datum, arr_null, col, id, id_null);
	n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	if (dl_pg_array_shape_differs(arr, in->dims, in->rank, &have, &want))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("%s of the row with id %s has shape %s but the model's input shape is %s",
						col, dl_pg_predict_id_label(id, id_null), have.data, want.data),
				 n == in_size ?
				 errhint("The array has the right number of values in another layout (channels "
						 "first against channels last?): give every row an array of exactly the "
						 "model's input shape, in row-major order.") :
				 errhint("Give every row an array of exactly the model's input shape %s "
						 "(%lld values), in row-major order; a model of a variable input shape "
						 "takes its shape from the first row: predict the rows of each shape in "
						 "a call of their own (a view WHERE array_dims(x) = ...).",
						 want.data, (long long) in_size)));
	dl_pg_predict_copy_values(x, arr, n, nc, col, id, id_null);
}

/*
 * The state of one call site of _predict_batch (or _predict_batch_io),
 * for the whole query (fn_extra, in per-query memory).
 */
typedef struct PredictState
{
	MemoryContext cxt;			/* owns this, the model and the buffers */
	MemoryContext batch_cxt;	/* the batch's ids */
	DlPgModel  *m;
	bool		io;				/* _predict_batch_io: features are a record of
								 * one array per input, result rows name
								 * their output */
	int			n_in;
	int			n_out;
	int64		in_size[DL_MAX_IO];
	int64		K[DL_MAX_IO];
	int64		max_rank[DL_MAX_IO];	/* ranks returned per row and output: 1..K */
	int64		rows_per_batch;
	int64		buf_rows;		/* rows of x and out: rows_per_batch, at least 2 when
								 * two fit (a lone row runs twice, predict_run) */
	double		nc;
	char	   *feature_col[DL_MAX_IO]; /* for messages */
	Size		sizes[3];		/* of model_arch, model_weights and the feature
								 * columns as the first row gave them: every
								 * row must give the same */
	int32		batch_size;
	int32		max_rank_given; /* max_rank as given (NULL: PG_INT32_MAX) */
	TupleDesc	desc;			/* of the result rows, blessed */
	bool		callback_set;	/* the rescan callback is registered */
	/* the batch */
	float	   *x[DL_MAX_IO];	/* (rows_per_batch, in_size[k]) */
	char	  **ids;			/* (rows_per_batch); NULL for a NULL id */
	int64		n;
	/* its outputs, being returned */
	float	   *out[DL_MAX_IO]; /* (rows_per_batch, K[k]) */
	int32	   *order;			/* (the largest K) the classes of (emit_row,
								 * emit_out), by rank */
	bool		emitting;
	int64		emit_row;
	int			emit_out;
	int64		emit_rank;
} PredictState;

/* Rank order of classes: probability descending (NaN first), then index. */
static int
class_cmp(const void *a, const void *b, void *arg)
{
	const float *p = (const float *) arg;
	int32		i = *(const int32 *) a;
	int32		j = *(const int32 *) b;
	bool		ni = isnan(p[i]);
	bool		nj = isnan(p[j]);

	if (ni != nj)
		return ni ? -1 : 1;
	if (!ni && p[i] != p[j])
		return p[i] > p[j] ? -1 : 1;
	return i < j ? -1 : (i > j ? 1 : 0);
}

/* Forget the batch (a rescan of the query, or its end). */
static void
predict_reset(Datum arg)
{
	PredictState *ps = (PredictState *) DatumGetPointer(arg);

	ps->n = 0;
	ps->emitting = false;
	ps->callback_set = false;	/* the executor drops a callback it has run */
	MemoryContextReset(ps->batch_cxt);
}

/*
 * Parse the architecture arch, check the memory a batch of batch_size
 * rows needs, and build the model for inference (into ps).
 */
static void
predict_model(PredictState *ps, text *arch, int32 batch_size)
{
	char	   *arch_s = text_to_cstring(arch);
	DlPgJobModel jm = {arch_s, NULL, NULL, "the model"};
	DlPgJob		job = {DL_PG_JOB_PREDICT, 1, &jm, 0, 0, 0, 0};
	const DlModelSpec *spec;
	int64		row = 0;

	ps->m = dl_pg_model_parse(VARDATA_ANY(arch), VARSIZE_ANY_EXHDR(arch), NULL, NULL, ps->cxt);
	spec = ps->m->spec;
	ps->n_in = spec->n_inputs;
	ps->n_out = spec->n_outputs;
	for (int k = 0; k < ps->n_in; k++)
		row += ps->in_size[k] = dl_pg_model_input_size_k(ps->m, k);
	for (int k = 0; k < ps->n_out; k++)
	{
		ps->K[k] = dl_pg_model_output_width_k(ps->m, k);
		if (ps->K[k] < 1 || ps->K[k] > (int64) (MaxAllocSize / sizeof(Datum)))
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("model has output width " INT64_FORMAT, ps->K[k]),
					 errhint("Predict with a model of at most %d outputs.",
							 (int) (MaxAllocSize / sizeof(Datum)))));
	}
	if (row < 1)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("model has input size " INT64_FORMAT, row),
				 errhint("Predict with a model that reads its inputs.")));
	/* row * 4 bytes fits easily: the engine bounds shapes far below 2^62 */
	ps->rows_per_batch = Min((int64) batch_size, Max((int64) 1, PREDICT_BATCH_BYTES / (row * 4)));
	/* the largest batch up to that which fits madlib_dl.max_model_memory */
	ps->rows_per_batch = dl_limits_fit_batch(&job, ps->rows_per_batch);
	/* the memory check, before the model is built: refuses a model one row overflows */
	job.batch_size = ps->rows_per_batch;
	(void) dl_limits_check_job(&job);
	ps->buf_rows = ps->rows_per_batch >= 2 ? ps->rows_per_batch : dl_limits_fit_batch(&job, 2);
	pfree(arch_s);
	dl_pg_model_create(ps->m, DL_PG_MODEL_INFER, ps->buf_rows);
}

/*
 * The feature column names of argument 4: feature_col (text) for
 * _predict_batch, feature_cols (text[], one per model input) for
 * _predict_batch_io.
 */
static void
predict_feature_cols(FunctionCallInfo fcinfo, PredictState *ps)
{
	Datum	   *v;
	bool	   *nulls;
	int			n;

	if (!ps->io)
	{
		if (ps->n_in != 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the model has %d inputs, the rows give one array", ps->n_in),
					 errhint("Give one independent variable per model input: predict with a list 'a, b'.")));
		ps->feature_col[0] = text_to_cstring(PG_GETARG_TEXT_PP(4));
		return;
	}
	deconstruct_array(PG_GETARG_ARRAYTYPE_P(4), TEXTOID, -1, false, TYPALIGN_INT, &v, &nulls, &n);
	if (n != ps->n_in)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%d independent variables are given for a model of %d inputs", n, ps->n_in),
				 errhint("Give one independent variable per model input, in the model's order.")));
	for (int k = 0; k < n; k++)
		ps->feature_col[k] = nulls[k] ? "independent variable" : TextDatumGetCString(v[k]);
}

/* A new state of this call site for the first row's arguments (see predict_state). */
static PredictState *
predict_state_new(FunctionCallInfo fcinfo, bool io, const Size *sizes, double nc, int32 batch_size,
				  int32 max_rank)
{
	MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	PredictState *ps = palloc0(sizeof(PredictState));
	int64		max_K = 1;

	ps->cxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt, "madlib_dl predict",
									ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(ps->cxt);
	ps->io = io;
	ps->batch_cxt = AllocSetContextCreate(ps->cxt, "madlib_dl predict batch", ALLOCSET_DEFAULT_SIZES);
	predict_model(ps, PG_GETARG_TEXT_PP(0), batch_size);
	predict_feature_cols(fcinfo, ps);
	ps->max_rank_given = max_rank;
	ps->nc = nc;
	ps->batch_size = batch_size;
	memcpy(ps->sizes, sizes, sizeof(ps->sizes));
	dl_pg_model_set_weights(ps->m, PG_GETARG_BYTEA_PP(1));
	for (int k = 0; k < ps->n_in; k++)
		ps->x[k] = MemoryContextAllocHuge(ps->cxt, (Size) ps->buf_rows * (Size) ps->in_size[k] * sizeof(float));
	for (int k = 0; k < ps->n_out; k++)
	{
		ps->max_rank[k] = Min((int64) max_rank, ps->K[k]);
		ps->out[k] = MemoryContextAllocHuge(ps->cxt, (Size) ps->buf_rows * (Size) ps->K[k] * sizeof(float));
		max_K = Max(max_K, ps->K[k]);
	}
	ps->ids = palloc0(sizeof(char *) * ps->rows_per_batch);
	ps->order = palloc(sizeof(int32) * max_K);
	if (get_call_result_type(fcinfo, NULL, &ps->desc) != TYPEFUNC_COMPOSITE || ps->desc->natts != (io ? 5 : 4))
		elog(ERROR, "madlib_dl: _predict_batch must return %d columns", io ? 5 : 4);
	ps->desc = BlessTupleDesc(ps->desc);
	MemoryContextSwitchTo(old);
	fcinfo->flinfo->fn_extra = ps;
	return ps;
}

/*
 * The state of this call site: on the first call, check the model
 * arguments (0..5), run the memory check and build the model; later,
 * check that they are the same.
 */
static PredictState *
predict_state(FunctionCallInfo fcinfo, bool io)
{
	PredictState *ps = (PredictState *) fcinfo->flinfo->fn_extra;
	Size		sizes[3];
	int32		batch_size;
	int32		max_rank;
	double		nc;

	for (int i = 0; i < 5; i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("argument %d of _predict_batch must not be NULL", i + 1),
					 errhint("Call madlib_keras_predict, which fills every argument.")));
	sizes[0] = VARSIZE_ANY(DatumGetPointer(PG_GETARG_DATUM(0)));
	sizes[1] = VARSIZE_ANY(DatumGetPointer(PG_GETARG_DATUM(1)));
	sizes[2] = VARSIZE_ANY(DatumGetPointer(PG_GETARG_DATUM(4)));
	nc = PG_GETARG_FLOAT8(2);
	batch_size = PG_GETARG_INT32(3);
	max_rank = PG_ARGISNULL(5) ? PG_INT32_MAX : PG_GETARG_INT32(5);
	if (ps != NULL)
	{
		if (memcmp(ps->sizes, sizes, sizeof(sizes)) != 0 || ps->nc != nc ||
			ps->batch_size != batch_size || ps->max_rank_given != max_rank)
			dl_pg_predict_model_changed();
		return ps;
	}
	dl_pg_predict_check_nc(nc);
	if (batch_size < 1 || batch_size > PREDICT_BATCH_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("batch_size %d is out of range", batch_size),
				 errhint("Give a batch_size from 1 to %d.", PREDICT_BATCH_MAX)));
	if (max_rank < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_rank %d must be at least 1", max_rank),
				 errhint("Give how many of each row's classes to return, or NULL for all.")));
	return predict_state_new(fcinfo, io, sizes, nc, batch_size, max_rank);
}

void
dl_pg_predict_check_memory(const char *arch, int64 batch)
{
	DlPgJobModel jm = {arch, NULL, NULL, "the model"};
	DlPgJob		job = {DL_PG_JOB_PREDICT, 1, &jm, 0, 0, 0, 0};

	job.batch_size = batch;
	(void) dl_limits_check_job(&job);
}

void
dl_pg_predict_model_changed(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("the rows of one prediction give different models"),
			 errhint("Pass the model as query parameters, the same in every row.")));
}

void
dl_pg_predict_check_nc(double nc)
{
	if (!(nc > 0.0) || !isfinite(nc))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("normalizing_const %g must be a positive number", nc),
				 errhint("Give the constant the training data was divided by, e.g. 255.0.")));
}

/* ERROR err of a token id check, naming the row by id (NULL: none) and hinting at nc. */
static void pg_attribute_noreturn()
report_bad_ids(DlError *err, const char *id, double nc)
{
	if (id != NULL)
		dl_error_prefix(err, "the row with id %s", id);
	if (nc != 1.0)
		dl_error_hint(err, "The features were divided by normalizing_const %g: give 1.0 for "
					  "token ids.", nc);
	dl_pg_report(err);
	pg_unreachable();
}

void
dl_pg_predict_check_ids(const DlModelSpec *spec, const float *x, double nc, Datum id, bool id_null)
{
	DlError		err;
	int64_t		row;

	dl_error_clear(&err);
	for (int k = 0; k < spec->n_inputs; k++)
		if (dl_model_check_ids(spec, k, x, 1, &row, &err) != DL_OK)
			report_bad_ids(&err, id_null ? NULL : TextDatumGetCString(id), nc);
}

/* Predict the batch and start returning its outputs. */
static void
predict_run(PredictState *ps)
{
	DlError		err;
	int64_t		row;

	dl_error_clear(&err);
	/* token ids an Embedding cannot look up: name the row by its id */
	for (int k = 0; k < ps->n_in; k++)
		if (dl_model_check_ids(dl_model_spec(ps->m->model), k, ps->x[k], ps->n, &row, &err) != DL_OK)
			report_bad_ids(&err, ps->ids[row], ps->nc);
	/*
	 * A lone row runs as two (itself twice) when two fit: a one-row
	 * product takes another BLAS kernel, whose sums differ in the last
	 * bits, and a row's numbers must not depend on its batch (row mode,
	 * serving.c's dl_serve_run, does the same).
	 */
	if (ps->n == 1 && ps->buf_rows >= 2)
	{
		for (int k = 0; k < ps->n_in; k++)
			memcpy(ps->x[k] + ps->in_size[k], ps->x[k], (Size) ps->in_size[k] * sizeof(float));
		dl_pg_check(dl_model_predict_io(ps->m->model, ps->out, (const float *const *) ps->x, 2, 2, &err),
					&err);
	}
	else
		dl_pg_check(dl_model_predict_io(ps->m->model, ps->out, (const float *const *) ps->x, ps->n,
										ps->rows_per_batch, &err), &err);
	ps->emitting = true;
	ps->emit_row = -1;
	ps->emit_out = ps->n_out - 1;
	ps->emit_rank = ps->max_rank[ps->emit_out]; /* the next output moves to row 0 */
}

/*
 * The next output row of the batch: (id, class_index, prob, rank), and
 * for _predict_batch_io the output (1-based) after the id.
 */
static Datum
predict_next(PredictState *ps)
{
	Datum		values[5];
	bool		nulls[5] = {false, false, false, false, false};
	const float *p;
	int			c = 0;

	if (ps->emit_rank >= ps->max_rank[ps->emit_out])
	{
		if (++ps->emit_out >= ps->n_out)
		{
			ps->emit_out = 0;
			ps->emit_row++;
		}
		ps->emit_rank = 0;
		for (int32 k = 0; k < (int32) ps->K[ps->emit_out]; k++)
			ps->order[k] = k;
		qsort_arg(ps->order, ps->K[ps->emit_out], sizeof(int32), class_cmp,
				  ps->out[ps->emit_out] + ps->emit_row * ps->K[ps->emit_out]);
	}
	p = ps->out[ps->emit_out] + ps->emit_row * ps->K[ps->emit_out];
	nulls[c] = ps->ids[ps->emit_row] == NULL;
	values[c++] = nulls[0] ? (Datum) 0 : CStringGetTextDatum(ps->ids[ps->emit_row]);
	if (ps->io)
		values[c++] = Int32GetDatum(ps->emit_out + 1);
	values[c++] = Int32GetDatum(ps->order[ps->emit_rank] + 1);
	values[c++] = Float8GetDatum((double) p[ps->order[ps->emit_rank]]);
	values[c++] = Int32GetDatum((int32) ps->emit_rank + 1);
	ps->emit_rank++;
	return HeapTupleGetDatum(heap_form_tuple(ps->desc, values, nulls));
}

/* Whether every output of the batch has been returned. */
static bool
predict_done(const PredictState *ps)
{
	return ps->emit_row >= ps->n - 1 && ps->emit_out >= ps->n_out - 1 &&
		ps->emit_rank >= ps->max_rank[ps->emit_out];
}

/*
 * The arrays of the record of features (argument 7) of _predict_batch_io:
 * one float8[] (or NULL) per model input; 42804 for a record of another
 * shape.  A NULL record is a NULL array for every input.
 */
static void
predict_record(FunctionCallInfo fcinfo, PredictState *ps, Datum id, bool id_null, Datum *arrs,
			   bool *nulls)
{
	HeapTupleHeader rec;
	TupleDesc	desc;
	HeapTupleData tuple;

	for (int k = 0; k < ps->n_in; k++)
	{
		arrs[k] = (Datum) 0;
		nulls[k] = true;
	}
	if (PG_ARGISNULL(7))
		return;
	rec = PG_GETARG_HEAPTUPLEHEADER(7);
	desc = lookup_rowtype_tupdesc(HeapTupleHeaderGetTypeId(rec), HeapTupleHeaderGetTypMod(rec));
	if (desc->natts != ps->n_in)
	{
		ReleaseTupleDesc(desc);
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the row with id %s gives %d feature arrays for a model of %d inputs",
						dl_pg_predict_id_label(id, id_null), desc->natts, ps->n_in),
				 errhint("Give one array per model input, ROW(a::float8[], b::float8[], ...).")));
	}
	tuple.t_len = HeapTupleHeaderGetDatumLength(rec);
	ItemPointerSetInvalid(&tuple.t_self);
	tuple.t_tableOid = InvalidOid;
	tuple.t_data = rec;
	for (int k = 0; k < ps->n_in; k++)
	{
		if (TupleDescAttr(desc, k)->atttypid != FLOAT8ARRAYOID || TupleDescAttr(desc, k)->attisdropped)
		{
			ReleaseTupleDesc(desc);
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("feature array %d of the row with id %s is not a float8[]", k + 1,
							dl_pg_predict_id_label(id, id_null)),
					 errhint("Give one array per model input, ROW(a::float8[], b::float8[], ...).")));
		}
		arrs[k] = heap_getattr(&tuple, k + 1, desc, &nulls[k]);
	}
	ReleaseTupleDesc(desc);
}

/*
 * Add the row (arguments 6 and 7: id_value, features) to the batch:
 * features a float8[] (_predict_batch), or a record of one float8[] per
 * model input (_predict_batch_io).
 */
static void
predict_add_row(FunctionCallInfo fcinfo, PredictState *ps)
{
	bool		id_null = PG_ARGISNULL(6);
	Datum		id = id_null ? (Datum) 0 : PG_GETARG_DATUM(6);
	Datum		arrs[DL_MAX_IO];
	bool		arr_nulls[DL_MAX_IO];

	if (!ps->io)
	{
		arr_nulls[0] = PG_ARGISNULL(7);
		arrs[0] = arr_nulls[0] ? (Datum) 0 : PG_GETARG_DATUM(7);
	}
	else
		predict_record(fcinfo, ps, id, id_null, arrs, arr_nulls);
	for (int k = 0; k < ps->n_in; k++)
		dl_pg_predict_copy_row(ps->x[k] + ps->n * ps->in_size[k], arrs[k], arr_nulls[k],
					  &ps->m->spec->input_shapes[k], ps->in_size[k], ps->nc, id, id_null,
					  ps->feature_col[k]);
	ps->ids[ps->n] = id_null ? NULL : MemoryContextStrdup(ps->batch_cxt, TextDatumGetCString(id));
	ps->n++;
}

/*
 * _predict_batch and _predict_batch_io (io): keep the row, or predict
 * and return the batch's outputs a row at a time.
 */
static Datum
predict_batch(FunctionCallInfo fcinfo, bool io)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	PredictState *ps;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) || !(rsinfo->allowedModes & SFRM_ValuePerCall))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("_predict_batch must be called as a set-returning function"),
				 errhint("Call madlib_keras_predict.")));
	CHECK_FOR_INTERRUPTS();
	ps = predict_state(fcinfo, io);
	if (!ps->callback_set)
	{
		RegisterExprContextCallback(rsinfo->econtext, predict_reset, PointerGetDatum(ps));
		ps->callback_set = true;
	}
	rsinfo->returnMode = SFRM_ValuePerCall;
	if (!ps->emitting)
	{
		/* a new row: into the batch, or a flush */
		if (PG_ARGISNULL(8) || !PG_GETARG_BOOL(8))
			predict_add_row(fcinfo, ps);
		if (ps->n > 0 && (ps->n == ps->rows_per_batch || (!PG_ARGISNULL(8) && PG_GETARG_BOOL(8))))
			predict_run(ps);
	}
	if (ps->emitting && !predict_done(ps))
	{
		rsinfo->isDone = ExprMultipleResult;
		return predict_next(ps);
	}
	if (ps->emitting)
	{
		ps->n = 0;
		ps->emitting = false;
		MemoryContextReset(ps->batch_cxt);
	}
	rsinfo->isDone = ExprEndResult;
	PG_RETURN_NULL();
}

PG_FUNCTION_INFO_V1(madlib_dl__predict_batch);

/*
 * _predict_batch(model_arch json, model_weights bytea,
 *     normalizing_const float8, batch_size int, feature_col text,
 *     max_rank int, id_value text, features float8[], flush boolean)
 *	 RETURNS SETOF record (id text, class_index int, prob float8, rank int)
 *
 * In the SELECT list of a query whose rows end with a flush row (see the
 * header).  A row's features must be an array of exactly the model's
 * input shape; they are divided by normalizing_const; feature_col names
 * them in messages.  max_rank NULL: every class.  The model arguments
 * (1..6) must be the same in every row.  Not STRICT: NULL model arguments
 * raise 22004; flush NULL is false.  For a model of one input and one
 * output.
 */
Datum
madlib_dl__predict_batch(PG_FUNCTION_ARGS)
{
	return predict_batch(fcinfo, false);
}

PG_FUNCTION_INFO_V1(madlib_dl__predict_batch_io);

/*
 * _predict_batch_io(model_arch json, model_weights bytea,
 *     normalizing_const float8, batch_size int, feature_cols text[],
 *     max_rank int, id_value text, features record, flush boolean)
 *	 RETURNS SETOF record (id text, output int, class_index int,
 *	 prob float8, rank int)
 *
 * _predict_batch for any model: features is a row of one float8[] per
 * model input, in its order (feature_cols names them), and a row's
 * outputs come output after output (output 1-based), each one's classes
 * by rank.
 */
Datum
madlib_dl__predict_batch_io(PG_FUNCTION_ARGS)
{
	return predict_batch(fcinfo, true);
}

PG_FUNCTION_INFO_V1(madlib_dl__predict_ranked);

/* The state of a call site of _predict_ranked (fn_extra): the row being returned. */
typedef struct RankedState
{
	TupleDesc	desc;			/* of the result rows, blessed */
	MemoryContext row_cxt;		/* the row's probs and order */
	const float *p;				/* (K) */
	int32	   *order;			/* (n) classes by rank */
	int32		n;				/* ranks to return */
	int32		next;			/* the next rank, 0-based; n: the row is done */
	bool		active;
	bool		callback_set;	/* ranked_reset is registered */
} RankedState;

/* Forget the row being returned (a rescan, or the end of the query). */
static void
ranked_reset(Datum arg)
{
	RankedState *st = (RankedState *) DatumGetPointer(arg);

	st->active = false;
	st->callback_set = false;	/* the executor drops a callback it has run */
}

/* The state of this call site, made on its first call. */
static RankedState *
ranked_state(FunctionCallInfo fcinfo)
{
	RankedState *st = (RankedState *) fcinfo->flinfo->fn_extra;
	MemoryContext old;

	if (st != NULL)
		return st;
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	st = palloc0(sizeof(RankedState));
	if (get_call_result_type(fcinfo, NULL, &st->desc) != TYPEFUNC_COMPOSITE || st->desc->natts != 4)
		elog(ERROR, "madlib_dl: _predict_ranked must return 4 columns");
	st->desc = BlessTupleDesc(st->desc);
	st->row_cxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt, "madlib_dl predict ranks",
										ALLOCSET_SMALL_SIZES);
	MemoryContextSwitchTo(old);
	fcinfo->flinfo->fn_extra = st;
	return st;
}

/* Rank the classes of this call's probs (argument 1, not NULL) into st, max_rank of them. */
static void
ranked_start_row(FunctionCallInfo fcinfo, RankedState *st, int32 max_rank)
{
	ArrayType  *a;
	int32		K;
	MemoryContext old;

	MemoryContextReset(st->row_cxt);
	old = MemoryContextSwitchTo(st->row_cxt);
	a = PG_GETARG_ARRAYTYPE_P_COPY(1);
	MemoryContextSwitchTo(old);
	if (ARR_ELEMTYPE(a) != FLOAT4OID || ARR_NDIM(a) != 1 || ARR_HASNULL(a) ||
		ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a)) < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("probs must be a one-dimensional real[] of at least one value without NULLs"),
				 errhint("Give the real[] _predict_probs returns.")));
	K = ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a));
	/* no null bitmap (checked): the values follow the header (ARR_DATA_PTR warns) */
	st->p = (const float *) ((const char *) a + ARR_OVERHEAD_NONULLS(1));
	st->n = Min(K, max_rank);
	st->order = MemoryContextAlloc(st->row_cxt, sizeof(int32) * K);
	if (st->n == 1)
	{
		/* the top class alone, in class_cmp's order */
		int32		best = 0;

		for (int32 k = 1; k < K; k++)
			if (class_cmp(&k, &best, (void *) st->p) < 0)
				best = k;
		st->order[0] = best;
	}
	else
	{
		for (int32 k = 0; k < K; k++)
			st->order[k] = k;
		qsort_arg(st->order, K, sizeof(int32), class_cmp, (void *) st->p);
	}
	st->next = 0;
	st->active = true;
}

/*
 * _predict_ranked(id_value text, probs real[], max_rank int)
 *	 RETURNS SETOF record (id text, class_index int, prob float8, rank int)
 *
 * One row's outputs probs (from _predict_probs, src/pg/api/serving.c) as
 * _predict_batch returns them: a row per class, by rank (probability
 * descending, NaN first, ties by class index), ranks over max_rank left
 * out (NULL: every class).  NULL probs: no rows.  predict's row mode
 * (_ep_write_predictions) calls it over _predict_probs, whose calls the
 * madlib_dl batched predict node batches.  Value per call, with its state
 * in fn_extra (one memory context per call site, reset per row), and
 * max_rank 1 (predict's 'response') a scan for the top class.
 */
Datum
madlib_dl__predict_ranked(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	RankedState *st;
	Datum		values[4];
	bool		nulls[4] = {PG_ARGISNULL(0), false, false, false};
	int32		c;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) || !(rsinfo->allowedModes & SFRM_ValuePerCall))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("_predict_ranked must be called as a set-returning function"),
				 errhint("Call madlib_keras_predict.")));
	st = ranked_state(fcinfo);
	if (!st->callback_set)
	{
		RegisterExprContextCallback(rsinfo->econtext, ranked_reset, PointerGetDatum(st));
		st->callback_set = true;
	}
	rsinfo->returnMode = SFRM_ValuePerCall;
	if (!st->active)
	{
		/* a new row: rank its classes */
		int32		max_rank = PG_ARGISNULL(2) ? PG_INT32_MAX : PG_GETARG_INT32(2);

		if (PG_ARGISNULL(1))
		{
			rsinfo->isDone = ExprEndResult;
			PG_RETURN_NULL();
		}
		if (max_rank < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_rank %d must be at least 1", max_rank),
					 errhint("Give how many of each row's classes to return, or NULL for all.")));
		ranked_start_row(fcinfo, st, max_rank);
	}
	if (st->next >= st->n)
	{
		st->active = false;
		rsinfo->isDone = ExprEndResult;
		PG_RETURN_NULL();
	}
	c = st->order[st->next];
	values[0] = nulls[0] ? (Datum) 0 : PG_GETARG_DATUM(0);
	values[1] = Int32GetDatum(c + 1);
	values[2] = Float8GetDatum((double) st->p[c]);
	values[3] = Int32GetDatum(st->next + 1);
	st->next++;
	rsinfo->isDone = ExprMultipleResult;
	return HeapTupleGetDatum(heap_form_tuple(st->desc, values, nulls));
}
