/*-------------------------------------------------------------------------
 *
 * gp_agg.c
 *	  One segment's step as an SQL aggregate over the segment's rows: the
 *	  way the greenplum and plproxy transports run a step (src/sql/
 *	  step.sql has the SQL objects; docs/greenplum.md the whole path).
 *
 * On Greenplum a function running on a segment may not read user tables,
 * so the per-segment work is an aggregate grouped by the distribution key
 * (one group per segment, no data motion: the packed table is DISTRIBUTED
 * BY (__dist_key__)).  Two plain aggregates, without ORDER BY, share one
 * transition function:
 *
 *	 _gp_fit_segment(step, buffer_id, dep, indep, dep_shape, indep_shape)
 *	 _gp_eval_segment(step, buffer_id, dep, indep, dep_shape, indep_shape)
 *
 *	 transition: keep the step (madlib_dl._step: the state, the model
 *	     definition, iteration, segment and use_caching) of the group's
 *	     first row, and
 *	     each buffer as it comes (a TOASTed value as its pointer, read only
 *	     at the end) with its buffer_id and row count, checking the shapes;
 *	     every row must give the same step (its size, or its TOAST pointer,
 *	     is compared: the callers pass one stored value or one parameter);
 *	 final: sort the buffers by buffer_id into one partition
 *	     (DlSegPartition: decoded into memory when it fits the segment's
 *	     madlib_dl.partition_memory or the step's use_caching says so,
 *	     else read a block at a time from the kept values), then run the
 *	     very step a parallel worker runs (runtime/step.c):
 *	       fit:  dl_seg_train_step, divergence caught and reported in the
 *	             result (state NULL, diverged = the engine's message);
 *	       eval: dl_seg_eval_step on the partition.
 *	     The result is a madlib_dl._step_result.  So one segment's result
 *	     is byte-identical on every transport.
 *
 * Why a plain aggregate.  The step is an ordinary argument, but it is a
 * column of the round table (or a query parameter): each row passes a
 * pointer to the same value, which is never sorted or copied per row,
 * because nothing is sorted: there is no ORDER BY, the final function
 * orders the buffers itself.  (An ORDER BY inside a plain aggregate would
 * make the executor sort every argument, the state included.)  An
 * aggregate without a combine function is never split into partial
 * aggregates: Greenplum runs it in one phase on the segment that holds
 * the group, the shape of MADlib's fit aggregates there.
 *
 * Both functions check what a caller passes: NULL buffers, shapes, sizes
 * (ERROR 22004, 22000, 54000); the step's fields are read once per group.
 *
 * IDENTIFICATION
 *	  src/pg/runtime/gp_agg.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/int.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/memutils.h"

#include "madlib_dl/dl_blob.h"

#include "pg_buffer.h"
#include "pg_glue.h"
#include "pg_limits.h"
#include "pg_model.h"
#include "pg_util.h"
#include "segments.h"

/* One buffer of the group, as it came. */
typedef struct GpBuffer
{
	int32		buffer_id;
	int32		arrival;		/* its place in the input: the tie-breaker */
	int64		n;				/* rows */
	Datum		v[DL_SEG_MAX_VARS]; /* the variables' values (independent
									 * ones, then dependent ones), copies of
									 * the values given: a TOASTed one stays
									 * a pointer until read */
} GpBuffer;

/*
 * What identifies a step as a row passes it: its TOAST pointer when it is
 * stored out of line, else its size as given.  Every row of a group must
 * give the same (cheap to compare, and enough for the callers, which pass
 * one stored value or one parameter).
 */
typedef struct GpStepId
{
	bool		ondisk;
	Oid			valueid;
	Oid			toastrelid;
	Size		size;
} GpStepId;

/* The transition state: the group's step and buffers. */
typedef struct GpStepState
{
	Datum		step;			/* the first row's step (a TOASTed value as
								 * its pointer) */
	GpStepId	step_id;		/* what every row's step must match */
	GpBuffer   *bufs;			/* (cap) */
	int			nbufs;
	int			cap;
	int64		n;				/* rows of all buffers */
	int			n_x;			/* independent variables */
	int			n_y;			/* dependent variables */
	int64		widths[DL_SEG_MAX_VARS];	/* floats per sample of each; -1
											 * before the first buffer */
} GpStepState;

/* The step's fields (madlib_dl._step). */
typedef struct GpStep
{
	bytea	   *state;
	char	   *arch;
	char	   *compile;
	char	   *fitp;			/* may be NULL */
	int32		iteration;
	int32		segment;
	DlCaching	caching;		/* use_caching: NULL, true or false */
} GpStep;

/* ERROR unless called as an aggregate support function; returns its context. */
static MemoryContext
agg_context(FunctionCallInfo fcinfo, const char *fn)
{
	MemoryContext aggcxt;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s must be called as an aggregate support function", fn),
				 errhint("Call the aggregates _gp_fit_segment or _gp_eval_segment.")));
	return aggcxt;
}

/* ERROR 22004 when argument i (named what) is NULL. */
static void
require_arg(FunctionCallInfo fcinfo, int i, const char *what)
{
	if (PG_ARGISNULL(i))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", what),
				 errhint("Pass the columns of a table made by training_preprocessor_dl.")));
}

/* a * b; ERROR 54000 on overflow or a negative product. */
static int64
checked_mul64(int64 a, int64 b)
{
	int64		r;

	if (pg_mul_s64_overflow(a, b, &r) || r < 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("segment data is too large: " INT64_FORMAT " x " INT64_FORMAT " values", a, b),
				 errhint("Preprocess with more segments or a smaller buffer_size.")));
	return r;
}

/*
 * A copy of varlena argument d in the current context that stays valid
 * for the whole aggregation: a value TOASTed on disk stays its pointer
 * (fetched by the final function, in the same query), any other is
 * copied as it is.
 */
static Datum
keep_varlena(Datum d)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(d);

	if (VARATT_IS_EXTERNAL(v) && !VARATT_IS_EXTERNAL_ONDISK(v))
		return PointerGetDatum(pg_detoast_datum_copy(v));
	return datumCopy(d, false, -1);
}

/*
 * The rows and sample widths of one buffer of one independent and one
 * dependent variable, from their shapes {n, dims...} and {n, classes};
 * ERROR 22000 when they disagree or differ from the group's.
 */
static int64
buffer_rows_1(GpStepState *st, ArrayType *dep_shape, ArrayType *indep_shape)
{
	int64		xd[DL_MAX_RANK + 1];
	int64		yd[2];
	int			nx = dl_pg_read_shape(indep_shape, xd, DL_MAX_RANK + 1, "independent variable shape");
	int			ny = dl_pg_read_shape(dep_shape, yd, 2, "dependent variable shape");
	int64		w = 1;

	if (nx < 2 || ny != 2 || xd[0] != yd[0])
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("buffer shapes do not match: the independent shape has %d values and the dependent shape %d, with " INT64_FORMAT " and " INT64_FORMAT " rows",
						nx, ny, xd[0], ny > 0 ? yd[0] : (int64) 0),
				 errhint("Preprocess the data again with training_preprocessor_dl.")));
	for (int i = 1; i < nx; i++)
		w = checked_mul64(w, xd[i]);
	if (st->widths[0] < 0)
	{
		st->widths[0] = w;
		st->widths[1] = yd[1];
	}
	else if (w != st->widths[0] || yd[1] != st->widths[1])
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("buffers have different sample sizes: " INT64_FORMAT " and " INT64_FORMAT " values, " INT64_FORMAT " and " INT64_FORMAT " classes",
						st->widths[0], w, st->widths[1], yd[1]),
				 errhint("Preprocess the data again with training_preprocessor_dl.")));
	return xd[0];
}

/*
 * The rows of one buffer and the sample width of each of its variables,
 * from their shapes (shapes[i]: {n, dims...}, a dependent one {n,
 * classes}); ERROR 22000 when they disagree or differ from the group's.
 */
static int64
buffer_rows(GpStepState *st, ArrayType **shapes)
{
	int64		n = -1;

	if (st->n_x == 1 && st->n_y == 1)
		return buffer_rows_1(st, shapes[1], shapes[0]);
	for (int i = 0; i < st->n_x + st->n_y; i++)
	{
		bool		y = i >= st->n_x;
		int64		d[DL_MAX_RANK + 1];
		int			nd = dl_pg_read_shape(shapes[i], d, DL_MAX_RANK + 1,
										  y ? "dependent variable shape" : "independent variable shape");
		int64		w = 1;

		if (nd < 2 || (y && nd != 2) || (n >= 0 && d[0] != n))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("buffer shapes do not match: the %s variable %d has a shape of %d values with " INT64_FORMAT " rows, other variables " INT64_FORMAT " rows",
							y ? "dependent" : "independent", (y ? i - st->n_x : i) + 1, nd, d[0], n),
					 errhint("Preprocess the data again with training_preprocessor_dl.")));
		n = d[0];
		for (int j = 1; j < nd; j++)
			w = checked_mul64(w, d[j]);
		if (st->widths[i] < 0)
			st->widths[i] = w;
		else if (w != st->widths[i])
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("buffers have different sample sizes: " INT64_FORMAT " and " INT64_FORMAT " %s",
							st->widths[i], w, y ? "classes" : "values"),
					 errhint("Preprocess the data again with training_preprocessor_dl.")));
	}
	return n;
}

static GpStepId
step_id(Datum d)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(d);
	GpStepId	id = {false, InvalidOid, InvalidOid, VARSIZE_ANY(v)};

	if (VARATT_IS_EXTERNAL_ONDISK(v))
	{
		struct varatt_external e;

		memcpy(&e, VARDATA_EXTERNAL(v), sizeof(e));	/* it may be unaligned */
		id.ondisk = true;
		id.valueid = e.va_valueid;
		id.toastrelid = e.va_toastrelid;
	}
	return id;
}

static bool
same_step_id(GpStepId a, GpStepId b)
{
	return a.ondisk == b.ondisk && a.size == b.size && a.valueid == b.valueid &&
		a.toastrelid == b.toastrelid;
}

/*
 * The group's state: on its first row, one of n_x and n_y variables
 * keeping the step (argument 1); later, checking that the rows give the
 * same step and the same variables.
 */
static GpStepState *
group_state(FunctionCallInfo fcinfo, MemoryContext aggcxt, int n_x, int n_y)
{
	GpStepState *st = PG_ARGISNULL(0) ? NULL : (GpStepState *) PG_GETARG_POINTER(0);
	MemoryContext old;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the step must not be NULL"),
				 errhint("Give a madlib_dl._step value: the state, the model definition, the iteration and the segment.")));
	if (st == NULL)
	{
		st = MemoryContextAllocZero(aggcxt, sizeof(GpStepState));
		st->n_x = n_x;
		st->n_y = n_y;
		for (int i = 0; i < DL_SEG_MAX_VARS; i++)
			st->widths[i] = -1;
		old = MemoryContextSwitchTo(aggcxt);
		st->step = keep_varlena(PG_GETARG_DATUM(1));
		MemoryContextSwitchTo(old);
		st->step_id = step_id(PG_GETARG_DATUM(1));
	}
	else if (!same_step_id(st->step_id, step_id(PG_GETARG_DATUM(1))))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the rows of one group give different steps"),
				 errhint("Pass one madlib_dl._step per group, the same in every row, e.g. a column of a table joined on the group key.")));
	else if (st->n_x != n_x || st->n_y != n_y)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the rows of one group give different numbers of variables"),
				 errhint("Pass the same variables in every row.")));
	return st;
}

/*
 * Keep one buffer of the group: buffer_id, the values vals of its
 * variables (independent ones, then dependent ones) and their shapes.
 */
static void
keep_buffer(GpStepState *st, MemoryContext aggcxt, int32 buffer_id, const Datum *vals,
			ArrayType **shapes)
{
	MemoryContext old;
	GpBuffer   *b;
	int64		n = buffer_rows(st, shapes);

	if (pg_add_s64_overflow(st->n, n, &st->n) || st->nbufs >= (int) (MaxAllocSize / sizeof(GpBuffer)) - 1)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many rows or buffers in one segment"),
				 errhint("Preprocess with more segments (distribution_rules).")));
	if (st->nbufs == st->cap)
	{
		int			cap = Min(Max(st->cap * 2, 16), (int) (MaxAllocSize / sizeof(GpBuffer)));

		st->bufs = st->bufs == NULL ? MemoryContextAlloc(aggcxt, sizeof(GpBuffer) * cap)
			: repalloc(st->bufs, sizeof(GpBuffer) * cap);
		st->cap = cap;
	}
	old = MemoryContextSwitchTo(aggcxt);
	b = &st->bufs[st->nbufs];
	memset(b, 0, sizeof(*b));
	b->buffer_id = buffer_id;
	b->arrival = st->nbufs;
	b->n = n;
	for (int i = 0; i < st->n_x + st->n_y; i++)
		b->v[i] = keep_varlena(vals[i]);
	MemoryContextSwitchTo(old);
	st->nbufs++;
}

PG_FUNCTION_INFO_V1(madlib_dl__gp_step_transition);

/*
 * madlib_dl._gp_step_transition(state internal, step madlib_dl._step,
 *     buffer_id int, dep bytea, indep bytea, dep_shape int[],
 *     indep_shape int[]) RETURNS internal
 * Keep the step (first row) and one buffer.  No argument may be NULL.
 */
Datum
madlib_dl__gp_step_transition(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = agg_context(fcinfo, "_gp_step_transition");
	GpStepState *st;
	Datum		vals[2];
	ArrayType  *shapes[2];

	st = group_state(fcinfo, aggcxt, 1, 1);
	require_arg(fcinfo, 2, "buffer_id");
	require_arg(fcinfo, 3, "dependent variable");
	require_arg(fcinfo, 4, "independent variable");
	require_arg(fcinfo, 5, "dependent variable shape");
	require_arg(fcinfo, 6, "independent variable shape");
	vals[0] = PG_GETARG_DATUM(4);
	vals[1] = PG_GETARG_DATUM(3);
	shapes[0] = PG_GETARG_ARRAYTYPE_P(6);
	shapes[1] = PG_GETARG_ARRAYTYPE_P(5);
	keep_buffer(st, aggcxt, PG_GETARG_INT32(2), vals, shapes);
	PG_RETURN_POINTER(st);
}

/*
 * The variables of a multi-io row from argument first on: n_x (an
 * integer), then a bytea value and its int[] shape for each variable,
 * the independent ones first (VARIADIC "any").  Their count and types
 * are checked; *n_y is what is left.
 */
void
dl_gp_row_vars(FunctionCallInfo fcinfo, int first, int *n_x, int *n_y, Datum *vals,
			   ArrayType **shapes)
{
	int			nargs = PG_NARGS() - first - 1;

	require_arg(fcinfo, first, "n_x");
	*n_x = PG_GETARG_INT32(first);
	if (get_fn_expr_argtype(fcinfo->flinfo, first) != INT4OID || nargs % 2 != 0 ||
		*n_x < 1 || *n_x > DL_MAX_IO || nargs / 2 - *n_x < 1 || nargs / 2 - *n_x > DL_MAX_IO)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a buffer of several variables is n_x, then a value and its shape for each of 2 to %d variables, not %d arguments with n_x %d",
						2 * DL_MAX_IO, nargs + 1, *n_x),
				 errhint("Pass n_x, then each independent variable and its shape, then each dependent one and its shape.")));
	*n_y = nargs / 2 - *n_x;
	for (int i = 0; i < nargs / 2; i++)
	{
		int			a = first + 1 + 2 * i;

		if (get_fn_expr_argtype(fcinfo->flinfo, a) != BYTEAOID ||
			get_fn_expr_argtype(fcinfo->flinfo, a + 1) != INT4ARRAYOID)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("variable %d of a buffer must be a bytea value and its integer[] shape", i + 1),
					 errhint("Pass the columns of a table made by training_preprocessor_dl.")));
		require_arg(fcinfo, a, i < *n_x ? "independent variable" : "dependent variable");
		require_arg(fcinfo, a + 1, "variable shape");
		vals[i] = PG_GETARG_DATUM(a);
		shapes[i] = PG_GETARG_ARRAYTYPE_P(a + 1);
	}
}

PG_FUNCTION_INFO_V1(madlib_dl__gp_step_transition_io);

/*
 * madlib_dl._gp_step_transition_io(state internal, step madlib_dl._step,
 *     buffer_id int, n_x int, VARIADIC "any") RETURNS internal
 * The same for a buffer of several variables (dl_gp_row_vars).
 */
Datum
madlib_dl__gp_step_transition_io(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = agg_context(fcinfo, "_gp_step_transition_io");
	Datum		vals[DL_SEG_MAX_VARS];
	ArrayType  *shapes[DL_SEG_MAX_VARS];
	int			n_x;
	int			n_y;
	GpStepState *st;

	require_arg(fcinfo, 2, "buffer_id");
	dl_gp_row_vars(fcinfo, 3, &n_x, &n_y, vals, shapes);
	st = group_state(fcinfo, aggcxt, n_x, n_y);
	keep_buffer(st, aggcxt, PG_GETARG_INT32(2), vals, shapes);
	PG_RETURN_POINTER(st);
}

/* The group's step, kept by the transition function. */
static void
read_step(const GpStepState *st, GpStep *out)
{
	HeapTupleHeader step = DatumGetHeapTupleHeader(st->step);
	bool		isnull;
	Datum		d;

	out->state = DatumGetByteaPP(dl_seg_step_field(step, "state", false, &isnull));
	out->arch = TextDatumGetCString(dl_seg_step_field(step, "model_arch", false, &isnull));
	out->compile = TextDatumGetCString(dl_seg_step_field(step, "compile_params", false, &isnull));
	d = dl_seg_step_field(step, "fit_params", true, &isnull);
	out->fitp = isnull ? NULL : TextDatumGetCString(d);
	out->iteration = DatumGetInt32(dl_seg_step_field(step, "iteration", false, &isnull));
	out->segment = DatumGetInt32(dl_seg_step_field(step, "segment", false, &isnull));
	d = dl_seg_step_field(step, "use_caching", true, &isnull);
	out->caching = isnull ? DL_CACHING_AUTO : DatumGetBool(d) ? DL_CACHING_ON : DL_CACHING_OFF;
}

/* Buffer order: buffer_id, then arrival. */
static int
buffer_cmp(const void *a, const void *b)
{
	const GpBuffer *x = (const GpBuffer *) a;
	const GpBuffer *y = (const GpBuffer *) b;

	if (x->buffer_id != y->buffer_id)
		return x->buffer_id < y->buffer_id ? -1 : 1;
	return x->arrival < y->arrival ? -1 : (x->arrival > y->arrival ? 1 : 0);
}

/*
 * The group's buffers (st may be NULL: no rows), sorted by buffer_id, as
 * partition p in cxt, placed under this server's budget (partition.c):
 * decoded into memory, or read a block at a time from the values the
 * transition kept (TOAST pointers stay valid for the whole query).
 */
static void
build_partition(GpStepState *st, const GpStep *step, DlSegPartition *p, MemoryContext cxt)
{
	DlSegBuffer *bufs;
	DlSegPartition *pp = p;

	if (st == NULL || st->n == 0)
	{
		memset(p, 0, sizeof(*p));
		p->loaded = true;
		return;
	}
	qsort(st->bufs, st->nbufs, sizeof(GpBuffer), buffer_cmp);
	bufs = palloc0(sizeof(DlSegBuffer) * st->nbufs);
	for (int i = 0; i < st->nbufs; i++)
	{
		bufs[i].buffer_id = st->bufs[i].buffer_id;
		bufs[i].n = st->bufs[i].n;
		bufs[i].v = st->bufs[i].v;
	}
	dl_seg_partition_from_buffers(p, bufs, st->nbufs, st->n_x, st->n_y, st->widths,
								  "(the aggregate's rows)", step->segment, cxt);
	dl_seg_partitions_place(&pp, 1, step->caching,
							dl_limits_partition_budget(dl_seg_default_count()));
}

/*
 * The madlib_dl._step_result of a step: state (NULL: none), the sums of
 * st (training ones), seconds, diverged (st's message; NULL: did not), and each
 * output's sums (NULL for a model of one output, and for a training step).
 */
static Datum
step_result(FunctionCallInfo fcinfo, bytea *state, const DlSegStats *st, double seconds)
{
	TupleDesc	tupdesc;

	/* 0.1.0's final functions returned bytea and float8[] (src/pg/api/compat.c) */
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		dl_pg_old_sql_error(fcinfo, "0.1.0");
	if (tupdesc->natts != 9)
		elog(ERROR, "madlib_dl: a step's final function must return madlib_dl._step_result");
	return dl_seg_step_result(tupdesc, state, st, seconds);
}

/*
 * The final functions: train (or evaluate) the step's state on the
 * group's partition.  A group without samples gives state NULL and n 0;
 * so does an aggregate over no rows (no step).
 */
static Datum
step_final(FunctionCallInfo fcinfo, bool train)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext cxt;
	GpStepState *st;
	GpStep		step;
	DlSegPartition part;
	DlSegStats	stats;
	DlPgModel  *m;
	instr_time	start;
	double		seconds;
	bytea	   *state = NULL;
	Datum		result;

	(void) agg_context(fcinfo, train ? "_gp_fit_final" : "_gp_eval_final");
	st = PG_ARGISNULL(0) ? NULL : (GpStepState *) PG_GETARG_POINTER(0);
	cxt = AllocSetContextCreate(caller, "madlib_dl step", ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(cxt);
	memset(&step, 0, sizeof(step));
	if (st != NULL)
		read_step(st, &step);
	build_partition(st, &step, &part, cxt);
	memset(&stats, 0, sizeof(stats));
	INSTR_TIME_SET_CURRENT(start);
	if (part.n > 0)
	{
		dl_pg_set_blas_threads();
		m = dl_pg_model_build(step.arch, strlen(step.arch), step.compile, step.fitp,
							  DL_PG_MODEL_TRAIN, 0, cxt);
		if (train)
		{
			DlSegStepRun run;

			run.m = m;
			run.part = &part;
			run.cxt = cxt;
			run.out_cxt = caller;
			run.iteration = step.iteration;
			run.segment = step.segment;
			state = dl_seg_train_state(&run, step.state, &stats);
		}
		else
			dl_seg_eval_step(m, (const uint8 *) VARDATA_ANY(step.state),
							 VARSIZE_ANY_EXHDR(step.state), &part, NULL, cxt, &stats);
	}
	seconds = dl_pg_seconds_since(start);
	MemoryContextSwitchTo(caller);
	result = step_result(fcinfo, state, &stats, seconds);
	MemoryContextDelete(cxt);
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(madlib_dl__gp_fit_final);

/*
 * madlib_dl._gp_fit_final(state internal) RETURNS madlib_dl._step_result
 * dl_seg_train_step on the group's partition: the new state with its
 * sample count, the training loss and metric sums over all epochs; when
 * training diverged, state NULL and the engine's message in diverged.
 */
Datum
madlib_dl__gp_fit_final(PG_FUNCTION_ARGS)
{
	return step_final(fcinfo, true);
}

PG_FUNCTION_INFO_V1(madlib_dl__gp_eval_final);

/*
 * madlib_dl._gp_eval_final(state internal) RETURNS madlib_dl._step_result
 * dl_seg_eval_step on the group's partition: the loss and metric sums;
 * state NULL.
 */
Datum
madlib_dl__gp_eval_final(PG_FUNCTION_ARGS)
{
	return step_final(fcinfo, false);
}

PG_FUNCTION_INFO_V1(madlib_dl__initial_state);

/*
 * madlib_dl._initial_state(model_arch json, init_weights bytea,
 *     compile_params text, fit_params text) RETURNS bytea
 *
 * The state a fit starts from (dl_pg_model_initial), as a dl_blob with
 * no samples: the state to give _gp_fit_segment by hand, in tests.
 * init_weights and fit_params may be NULL.
 */
Datum
madlib_dl__initial_state(PG_FUNCTION_ARGS)
{
	MemoryContext cxt;
	MemoryContext old;
	DlPgModel  *m;
	DlError		err;
	size_t		size;
	bytea	   *result;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model_arch and compile_params must not be NULL"),
				 errhint("Give the architecture and the compile_params of the model.")));
	cxt = AllocSetContextCreate(CurrentMemoryContext, "madlib_dl _initial_state", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	m = dl_pg_model_initial(text_to_cstring(PG_GETARG_TEXT_PP(0)), text_to_cstring(PG_GETARG_TEXT_PP(2)),
							PG_ARGISNULL(3) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(3)),
							PG_ARGISNULL(1) ? NULL : PG_GETARG_BYTEA_PP(1), cxt);
	dl_error_clear(&err);
	dl_pg_check(dl_blob_size(m->model, &size, &err), &err);
	if (size > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("model state of %zu bytes is larger than a bytea can hold", size),
				 errhint("Use a smaller model.")));
	MemoryContextSwitchTo(old);
	result = palloc(VARHDRSZ + size);
	SET_VARSIZE(result, VARHDRSZ + size);
	dl_pg_check(dl_blob_write(m->model, 0, (uint8 *) VARDATA(result), size, &err), &err);
	MemoryContextDelete(cxt);
	PG_RETURN_BYTEA_P(result);
}
