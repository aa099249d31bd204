/*-------------------------------------------------------------------------
 *
 * gp_agg.c
 *	  The per-segment step as SQL aggregates, for Greenplum and Cloudberry
 *	  (and usable, and tested, on PostgreSQL).
 *
 * On Greenplum a function running on a segment may not read user tables,
 * so the per-segment work is the aggregate itself, grouped by
 * __dist_key__ (one group per segment, with no data motion because the
 * packed table is DISTRIBUTED BY (__dist_key__)).  docs/greenplum.md
 * explains the whole path.  Three aggregates:
 *
 *	 _gp_fit_segment(dep, indep, dep_shape, indep_shape, model_state,
 *	                 model_arch, compile_params, fit_params, iteration,
 *	                 segment ORDER BY buffer_id) -> bytea state
 *	     transition: decode and append one buffer to the partition;
 *	     final: dl_seg_train_step (seg_step.c) over the whole partition,
 *	     the very function a PostgreSQL virtual segment runs for a TRAIN
 *	     command: load model_state, reseed from (seed, iteration,
 *	     segment), `epochs` passes, new state with its sample count.  So
 *	     one segment's result is byte-identical on both.  NULL (with a
 *	     NOTICE) when training diverged, so a driver can stop that model.
 *	 _avg_states(state, model_arch, compile_params ORDER BY segment)
 *	     -> bytea state
 *	     the average of the states, weights and optimizer slots weighted
 *	     by their sample counts, summed in double in input order: the
 *	     arithmetic of average_states in fit.c.  NULL when no state has
 *	     samples.
 *	 _gp_eval_segment(dep, indep, dep_shape, indep_shape, model_state,
 *	                  model_arch, compile_params, fit_params)
 *	     -> float8[] {loss_sum, metric_sum, n}
 *	     dl_seg_eval_step on each buffer as it comes (sums combine in
 *	     any order, so this one may run as a two-phase aggregate).
 * and two plain functions: _gp_initial_state (the starting state of a fit,
 * as fit.c makes it) and _gp_state_weights (a state's flat weights).
 *
 * Every aggregate has COMBINEFUNC / SERIALFUNC / DESERIALFUNC so it may
 * run as a two-phase (partial) aggregate.  For _gp_fit_segment the
 * combine function concatenates partitions in the order it is given;
 * PostgreSQL and Greenplum never split an aggregate called with ORDER BY,
 * and the fit drivers always call it with ORDER BY buffer_id and group by
 * the distribution key, so the partition order is buffer_id order.
 * Serialized states use the host byte order: they only travel between the
 * processes of one cluster.
 *
 * IDENTIFICATION
 *	  src/pg/gp_agg.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/int.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_hopper.h"

#include "pg_buffer.h"
#include "pg_glue.h"
#include "pg_model.h"
#include "pg_util.h"
#include "segments.h"

/* ---------------------------------------------------------------------
 * Helpers
 * --------------------------------------------------------------------- */

/* ERROR unless called as an aggregate support function; returns its context. */
static MemoryContext
agg_context(FunctionCallInfo fcinfo, const char *fn)
{
	MemoryContext aggcxt;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		elog(ERROR, "madlib_dl: %s called in non-aggregate context", fn);
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
				 errhint("Pass the columns of a table made by training_preprocessor_dl and a model state.")));
}

/* A NUL-terminated copy of text/json argument i in cxt, or NULL for SQL NULL. */
static char *
text_arg_in(FunctionCallInfo fcinfo, int i, MemoryContext cxt)
{
	text	   *t;
	Size		len;
	char	   *s;

	if (PG_ARGISNULL(i))
		return NULL;
	t = PG_GETARG_TEXT_PP(i);
	len = VARSIZE_ANY_EXHDR(t);
	s = MemoryContextAlloc(cxt, len + 1);
	memcpy(s, VARDATA_ANY(t), len);
	s[len] = '\0';
	return s;
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

/* Bytes of n floats, checked. */
static Size
float_bytes(int64 n)
{
	int64		b = checked_mul64(n, (int64) sizeof(float));

	if ((uint64) b > MaxAllocHugeSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("segment data of " INT64_FORMAT " bytes is more than one process can hold", b),
				 errhint("Preprocess with more segments (distribution_rules).")));
	return (Size) b;
}

/*
 * Decode one packed buffer: shapes {n, dims...} and {n, classes}, then
 * the bytes.  Fills *n, *x_width, *y_width and returns freshly palloc'd
 * x (n, x_width) and y (n, y_width) in CurrentMemoryContext.
 */
static void
decode_buffer(bytea *dep, bytea *indep, ArrayType *dep_shape, ArrayType *indep_shape,
			  int64 *n, int64 *x_width, int64 *y_width, float **x, float **y)
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
	*n = xd[0];
	*x_width = w;
	*y_width = yd[1];
	*x = dl_pg_decode_x(indep, xd[0], w, CurrentMemoryContext);
	*y = dl_pg_decode_y(dep, yd[0], yd[1], CurrentMemoryContext);
}

/* A new bytea holding len bytes of buf. */
static bytea *
make_bytea(const void *buf, Size len)
{
	bytea	   *b;

	if (len > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("value of %zu bytes is larger than a bytea can hold", len),
				 errhint("Use a smaller model, or more segments for smaller partitions.")));
	b = palloc(VARHDRSZ + len);
	SET_VARSIZE(b, VARHDRSZ + len);
	if (len > 0)
		memcpy(VARDATA(b), buf, len);
	return b;
}

/* A model's state as a new bytea (dl_blob format) with samples_seen. */
static bytea *
state_bytea(DlPgModel *m, int64 samples_seen)
{
	DlError		err;
	size_t		need;
	bytea	   *b;

	dl_error_clear(&err);
	dl_pg_check(dl_blob_size(m->model, &need, &err), &err);
	if (need > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("model state of %zu bytes is larger than a bytea can hold", need),
				 errhint("Use a smaller model.")));
	b = palloc(VARHDRSZ + need);
	SET_VARSIZE(b, VARHDRSZ + need);
	dl_pg_check(dl_blob_write(m->model, samples_seen, (uint8_t *) VARDATA(b), need, &err), &err);
	return b;
}

/* Serialization: a growing byte buffer (palloc'd, huge allowed). */
typedef struct SerBuf
{
	char	   *data;
	Size		len;
	Size		cap;
} SerBuf;

/* Append n bytes; ERROR 54000 past MaxAllocSize. */
static void
ser_put(SerBuf *sb, const void *p, Size n)
{
	if (n > MaxAllocSize || sb->len > MaxAllocSize - VARHDRSZ - n)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("aggregate state of more than %zu bytes cannot be serialized", (Size) MaxAllocSize),
				 errhint("Group by the distribution key (__dist_key__) so the state stays on its segment.")));
	if (sb->len + n > sb->cap)
	{
		Size		cap = Max(sb->cap * 2, sb->len + n + VARHDRSZ);

		cap = Min(cap, (Size) MaxAllocSize);
		sb->data = sb->data == NULL ? palloc(cap) : repalloc(sb->data, cap);
		sb->cap = cap;
	}
	if (n > 0)
		memcpy(sb->data + sb->len, p, n);
	sb->len += n;
}

/* Strings are written as int32 length (-1 for NULL) and bytes. */
static void
ser_put_str(SerBuf *sb, const char *s)
{
	int32		len = s == NULL ? -1 : (int32) strlen(s);

	ser_put(sb, &len, sizeof(len));
	if (len > 0)
		ser_put(sb, s, len);
}

/* Start a serialized bytea: room for the header. */
static void
ser_begin(SerBuf *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->len = VARHDRSZ;
	sb->cap = 1024;
	sb->data = palloc(sb->cap);
}

/* The buffer as a bytea (its header set). */
static bytea *
ser_end(SerBuf *sb)
{
	SET_VARSIZE(sb->data, sb->len);
	return (bytea *) sb->data;
}

typedef struct DeBuf
{
	const char *p;
	Size		left;
} DeBuf;

/* Start reading a bytea written by ser_begin ... ser_end. */
static void
de_begin(DeBuf *db, bytea *b)
{
	db->p = VARDATA_ANY(b);
	db->left = VARSIZE_ANY_EXHDR(b);
}

/* Read n bytes into out; ERROR on a truncated state. */
static void
de_get(DeBuf *db, void *out, Size n)
{
	if (n > db->left)
		elog(ERROR, "madlib_dl: truncated aggregate state");
	if (n > 0)
		memcpy(out, db->p, n);
	db->p += n;
	db->left -= n;
}

/* Read a string written by ser_put_str, copied into cxt (NULL for -1). */
static char *
de_get_str(DeBuf *db, MemoryContext cxt)
{
	int32		len;
	char	   *s;

	de_get(db, &len, sizeof(len));
	if (len < 0)
		return NULL;
	s = MemoryContextAlloc(cxt, (Size) len + 1);
	de_get(db, s, (Size) len);
	s[len] = '\0';
	return s;
}

/* ---------------------------------------------------------------------
 * _gp_fit_segment: one segment's training step
 * --------------------------------------------------------------------- */

typedef struct GpFitState
{
	/* the job, from the first row */
	char	   *model_state;	/* dl_blob bytes */
	Size		model_state_len;
	char	   *arch;
	char	   *compile;
	char	   *fitp;			/* may be NULL */
	int32		iteration;
	int32		segment;
	/* the partition, in arrival (buffer_id) order */
	int64		n;				/* samples */
	int64		cap;			/* samples there is room for */
	int64		x_width;		/* -1 before the first buffer */
	int64		y_width;
	float	   *x;				/* (cap, x_width) */
	float	   *y;				/* (cap, y_width) */
} GpFitState;

/* An empty state in cxt: no job, no buffers. */
static GpFitState *
fit_state_new(MemoryContext cxt)
{
	GpFitState *st = MemoryContextAllocZero(cxt, sizeof(GpFitState));

	st->x_width = -1;
	st->y_width = -1;
	return st;
}

/* Room for `more` further samples. */
static void
fit_state_reserve(GpFitState *st, int64 more, MemoryContext cxt)
{
	int64		need;
	int64		cap;

	if (pg_add_s64_overflow(st->n, more, &need))
		ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						errmsg("too many rows in one segment")));
	if (need <= st->cap)
		return;
	cap = Max(need, Max(st->cap * 2, (int64) 64));
	if (st->x == NULL)
	{
		st->x = MemoryContextAllocHuge(cxt, float_bytes(checked_mul64(cap, Max(st->x_width, 1))));
		st->y = MemoryContextAllocHuge(cxt, float_bytes(checked_mul64(cap, Max(st->y_width, 1))));
	}
	else
	{
		st->x = repalloc_huge(st->x, float_bytes(checked_mul64(cap, Max(st->x_width, 1))));
		st->y = repalloc_huge(st->y, float_bytes(checked_mul64(cap, Max(st->y_width, 1))));
	}
	st->cap = cap;
}

/* Append n samples (x (n, x_width), y (n, y_width)) to st. */
static void
fit_state_append(GpFitState *st, const float *x, const float *y, int64 n,
				 int64 x_width, int64 y_width, MemoryContext cxt)
{
	if (st->x_width < 0)
	{
		st->x_width = x_width;
		st->y_width = y_width;
	}
	else if (x_width != st->x_width || y_width != st->y_width)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("buffers have different sample sizes: " INT64_FORMAT " and " INT64_FORMAT " values, " INT64_FORMAT " and " INT64_FORMAT " classes",
						st->x_width, x_width, st->y_width, y_width),
				 errhint("Preprocess the data again with training_preprocessor_dl.")));
	if (n <= 0)
		return;
	fit_state_reserve(st, n, cxt);
	memcpy(st->x + st->n * st->x_width, x, float_bytes(checked_mul64(n, x_width)));
	memcpy(st->y + st->n * st->y_width, y, float_bytes(checked_mul64(n, y_width)));
	st->n += n;
}

/* ERROR unless a and b describe the same job (one group = one segment step). */
static void
fit_state_same_job(const GpFitState *st, int32 iteration, int32 segment)
{
	if (st->iteration != iteration || st->segment != segment)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("one _gp_fit_segment group mixes segment %d iteration %d with segment %d iteration %d",
						st->segment, st->iteration, segment, iteration),
				 errhint("Group by the distribution key and pass one segment number and iteration per group.")));
}

PG_FUNCTION_INFO_V1(madlib_dl__gp_fit_transition);

/*
 * madlib_dl._gp_fit_transition(state internal, dep bytea, indep bytea,
 *     dep_shape int[], indep_shape int[], model_state bytea, arch json,
 *     compile_params text, fit_params text, iteration int, segment int)
 * RETURNS internal.  fit_params may be NULL; every other argument must
 * not be.  The job arguments are taken from the first row.
 */
Datum
madlib_dl__gp_fit_transition(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = agg_context(fcinfo, "_gp_fit_transition");
	GpFitState *st = PG_ARGISNULL(0) ? NULL : (GpFitState *) PG_GETARG_POINTER(0);
	int64		n;
	int64		xw;
	int64		yw;
	float	   *x;
	float	   *y;

	require_arg(fcinfo, 1, "dependent variable");
	require_arg(fcinfo, 2, "independent variable");
	require_arg(fcinfo, 3, "dependent variable shape");
	require_arg(fcinfo, 4, "independent variable shape");
	require_arg(fcinfo, 5, "model_state");
	require_arg(fcinfo, 6, "model_arch");
	require_arg(fcinfo, 7, "compile_params");
	require_arg(fcinfo, 9, "iteration");
	require_arg(fcinfo, 10, "segment");

	if (st == NULL)
	{
		bytea	   *ms = PG_GETARG_BYTEA_PP(5);

		st = fit_state_new(aggcxt);
		st->model_state_len = VARSIZE_ANY_EXHDR(ms);
		st->model_state = MemoryContextAlloc(aggcxt, Max(st->model_state_len, 1));
		memcpy(st->model_state, VARDATA_ANY(ms), st->model_state_len);
		st->arch = text_arg_in(fcinfo, 6, aggcxt);
		st->compile = text_arg_in(fcinfo, 7, aggcxt);
		st->fitp = text_arg_in(fcinfo, 8, aggcxt);
		st->iteration = PG_GETARG_INT32(9);
		st->segment = PG_GETARG_INT32(10);
	}
	else
		fit_state_same_job(st, PG_GETARG_INT32(9), PG_GETARG_INT32(10));

	decode_buffer(PG_GETARG_BYTEA_PP(1), PG_GETARG_BYTEA_PP(2),
				  PG_GETARG_ARRAYTYPE_P(3), PG_GETARG_ARRAYTYPE_P(4),
				  &n, &xw, &yw, &x, &y);
	fit_state_append(st, x, y, n, xw, yw, aggcxt);
	pfree(x);
	pfree(y);
	PG_RETURN_POINTER(st);
}

PG_FUNCTION_INFO_V1(madlib_dl__gp_fit_combine);

/* Concatenate partition state2 after state1 (see the file header). */
Datum
madlib_dl__gp_fit_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = agg_context(fcinfo, "_gp_fit_combine");
	GpFitState *s1 = PG_ARGISNULL(0) ? NULL : (GpFitState *) PG_GETARG_POINTER(0);
	GpFitState *s2 = PG_ARGISNULL(1) ? NULL : (GpFitState *) PG_GETARG_POINTER(1);

	if (s2 == NULL)
	{
		if (s1 == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(s1);
	}
	if (s1 == NULL)
	{
		/* copy the job into the aggregate context, then append the data */
		s1 = fit_state_new(aggcxt);
		s1->model_state_len = s2->model_state_len;
		s1->model_state = MemoryContextAlloc(aggcxt, Max(s2->model_state_len, 1));
		memcpy(s1->model_state, s2->model_state, s2->model_state_len);
		s1->arch = MemoryContextStrdup(aggcxt, s2->arch);
		s1->compile = MemoryContextStrdup(aggcxt, s2->compile);
		s1->fitp = s2->fitp == NULL ? NULL : MemoryContextStrdup(aggcxt, s2->fitp);
		s1->iteration = s2->iteration;
		s1->segment = s2->segment;
	}
	else
		fit_state_same_job(s1, s2->iteration, s2->segment);
	if (s2->x_width >= 0)
		fit_state_append(s1, s2->x, s2->y, s2->n, s2->x_width, s2->y_width, aggcxt);
	PG_RETURN_POINTER(s1);
}

PG_FUNCTION_INFO_V1(madlib_dl__gp_fit_serialize);

/* internal -> bytea (host byte order). */
Datum
madlib_dl__gp_fit_serialize(PG_FUNCTION_ARGS)
{
	GpFitState *st;
	SerBuf		sb;

	(void) agg_context(fcinfo, "_gp_fit_serialize");
	st = (GpFitState *) PG_GETARG_POINTER(0);
	ser_begin(&sb);
	ser_put(&sb, &st->iteration, sizeof(int32));
	ser_put(&sb, &st->segment, sizeof(int32));
	ser_put(&sb, &st->n, sizeof(int64));
	ser_put(&sb, &st->x_width, sizeof(int64));
	ser_put(&sb, &st->y_width, sizeof(int64));
	ser_put(&sb, &st->model_state_len, sizeof(Size));
	ser_put(&sb, st->model_state, st->model_state_len);
	ser_put_str(&sb, st->arch);
	ser_put_str(&sb, st->compile);
	ser_put_str(&sb, st->fitp);
	if (st->n > 0)
	{
		ser_put(&sb, st->x, float_bytes(checked_mul64(st->n, st->x_width)));
		ser_put(&sb, st->y, float_bytes(checked_mul64(st->n, st->y_width)));
	}
	PG_RETURN_BYTEA_P(ser_end(&sb));
}

PG_FUNCTION_INFO_V1(madlib_dl__gp_fit_deserialize);

/* bytea -> internal, in CurrentMemoryContext. */
Datum
madlib_dl__gp_fit_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *b;
	DeBuf		db;
	GpFitState *st;
	MemoryContext cxt = CurrentMemoryContext;

	(void) agg_context(fcinfo, "_gp_fit_deserialize");
	b = PG_GETARG_BYTEA_PP(0);
	de_begin(&db, b);
	st = fit_state_new(cxt);
	de_get(&db, &st->iteration, sizeof(int32));
	de_get(&db, &st->segment, sizeof(int32));
	de_get(&db, &st->n, sizeof(int64));
	de_get(&db, &st->x_width, sizeof(int64));
	de_get(&db, &st->y_width, sizeof(int64));
	de_get(&db, &st->model_state_len, sizeof(Size));
	if (st->model_state_len > db.left || st->n < 0)
		elog(ERROR, "madlib_dl: corrupt _gp_fit_segment state");
	st->model_state = MemoryContextAlloc(cxt, Max(st->model_state_len, 1));
	de_get(&db, st->model_state, st->model_state_len);
	st->arch = de_get_str(&db, cxt);
	st->compile = de_get_str(&db, cxt);
	st->fitp = de_get_str(&db, cxt);
	if (st->arch == NULL || st->compile == NULL)
		elog(ERROR, "madlib_dl: corrupt _gp_fit_segment state");
	if (st->n > 0)
	{
		Size		xb = float_bytes(checked_mul64(st->n, st->x_width));
		Size		yb = float_bytes(checked_mul64(st->n, st->y_width));

		st->x = MemoryContextAllocHuge(cxt, Max(xb, 1));
		st->y = MemoryContextAllocHuge(cxt, Max(yb, 1));
		de_get(&db, st->x, xb);
		de_get(&db, st->y, yb);
		st->cap = st->n;
	}
	PG_RETURN_POINTER(st);
}

PG_FUNCTION_INFO_V1(madlib_dl__gp_fit_final);

/*
 * Train: dl_seg_train_step (seg_step.c), the very step a PostgreSQL
 * virtual segment runs for a TRAIN command, on the accumulated partition.
 * NULL, with a NOTICE naming segment and iteration, when training
 * diverged; the unchanged model_state when the partition is empty.
 */
Datum
madlib_dl__gp_fit_final(PG_FUNCTION_ARGS)
{
	GpFitState *st;
	MemoryContext cxt;
	MemoryContext old;
	DlPgModel  *m;
	DlError		err;
	DlSegPartition part;
	DlSegStats	stats;
	size_t		cap;
	uint8	   *buf;
	Size		len;
	bytea	   *result;

	(void) agg_context(fcinfo, "_gp_fit_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	st = (GpFitState *) PG_GETARG_POINTER(0);
	dl_pg_set_blas_threads();

	cxt = AllocSetContextCreate(CurrentMemoryContext, "madlib_dl _gp_fit_segment",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	dl_error_clear(&err);
	m = dl_pg_model_build(st->arch, strlen(st->arch), st->compile, st->fitp,
						  DL_PG_MODEL_TRAIN, 0, cxt);
	dl_pg_check(dl_blob_size(m->model, &cap, &err), &err);
	cap = Max(cap, st->model_state_len);
	buf = MemoryContextAllocHuge(cxt, cap);
	memcpy(buf, st->model_state, st->model_state_len);

	memset(&part, 0, sizeof(part));
	part.loaded = true;
	part.n = st->n;
	part.x_width = Max(st->x_width, 0);
	part.y_width = Max(st->y_width, 0);
	part.x = st->x;
	part.y = st->y;
	part.y_index = NULL;		/* made in cxt by the step when needed */

	(void) dl_seg_train_step(m, buf, st->model_state_len, cap, &len, &part, cxt,
							 st->iteration, st->segment, true, &stats);
	MemoryContextSwitchTo(old);
	if (stats.diverged)
	{
		ereport(NOTICE,
				(errmsg("training diverged on segment %d in iteration %d: %s",
						st->segment, st->iteration, stats.message),
				 errhint("Lower the learning rate, or normalize the input (normalizing_const).")));
		MemoryContextDelete(cxt);
		PG_RETURN_NULL();
	}
	result = make_bytea(buf, len);
	MemoryContextDelete(cxt);
	PG_RETURN_BYTEA_P(result);
}

/* ---------------------------------------------------------------------
 * _avg_states: model averaging
 * --------------------------------------------------------------------- */

typedef struct GpAvgState
{
	char	   *arch;
	char	   *compile;
	DlPgModel  *m;				/* built on first use; NULL after deserialization */
	int64		P;				/* parameters */
	int64		S;				/* optimizer floats (n_slots * P) */
	bool		has_opt;
	double	   *acc;			/* (P + S) sums of samples * value */
	double		total;			/* sum of samples */
	int64		iterations;		/* optimizer steps of the chosen state */
	double		m_schedule;
	bool		any;
} GpAvgState;

/* Build the state's model in cxt (arch and compile set). */
static void
avg_state_build(GpAvgState *st, MemoryContext cxt)
{
	DlOptimState *opt;

	st->m = dl_pg_model_build(st->arch, strlen(st->arch), st->compile, NULL,
							  DL_PG_MODEL_STATE, 0, cxt);
	opt = dl_model_optim(st->m->model);
	st->has_opt = opt != NULL;
	st->P = (int64) dl_model_n_params(st->m->model);
	st->S = opt != NULL ? checked_mul64((int64) opt->n_slots, st->P) : 0;
}

PG_FUNCTION_INFO_V1(madlib_dl__avg_states_transition);

/*
 * madlib_dl._avg_states_transition(state internal, model_state bytea,
 *     arch json, compile_params text) RETURNS internal.  A NULL
 * model_state is skipped; states with no samples add nothing.
 */
Datum
madlib_dl__avg_states_transition(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = agg_context(fcinfo, "_avg_states_transition");
	GpAvgState *st = PG_ARGISNULL(0) ? NULL : (GpAvgState *) PG_GETARG_POINTER(0);
	bytea	   *b;
	DlError		err;
	int64		samples = 0;
	double		wk;
	const float *w;
	DlOptimState *opt;

	if (PG_ARGISNULL(1))
	{
		if (st == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(st);
	}
	require_arg(fcinfo, 2, "model_arch");
	require_arg(fcinfo, 3, "compile_params");
	if (st == NULL)
	{
		st = MemoryContextAllocZero(aggcxt, sizeof(GpAvgState));
		st->arch = text_arg_in(fcinfo, 2, aggcxt);
		st->compile = text_arg_in(fcinfo, 3, aggcxt);
	}
	if (st->m == NULL)
	{
		avg_state_build(st, aggcxt);
		if (st->acc == NULL)
			st->acc = MemoryContextAllocHuge(aggcxt, Max(mul_size(sizeof(double), (Size) (st->P + st->S)), 1));
		if (!st->any)
			memset(st->acc, 0, sizeof(double) * (Size) (st->P + st->S));
	}
	b = PG_GETARG_BYTEA_PP(1);
	dl_error_clear(&err);
	dl_pg_check(dl_blob_read(st->m->model, (const uint8_t *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b),
							 &samples, &err), &err);
	if (samples <= 0)
		PG_RETURN_POINTER(st);

	/* the arithmetic of average_states in fit.c */
	wk = (double) samples;
	st->total += wk;
	w = dl_model_params(st->m->model);
	for (int64 i = 0; i < st->P; i++)
		st->acc[i] += wk * (double) w[i];
	opt = dl_model_optim(st->m->model);
	if (opt != NULL)
	{
		for (int64 i = 0; i < st->S; i++)
			st->acc[st->P + i] += wk * (double) opt->slots[i];
		if (!st->any || opt->iterations > st->iterations)
		{
			st->iterations = opt->iterations;
			st->m_schedule = opt->m_schedule;
		}
	}
	st->any = true;
	PG_RETURN_POINTER(st);
}

PG_FUNCTION_INFO_V1(madlib_dl__avg_states_combine);

/* Add the sums of state2 to state1. */
Datum
madlib_dl__avg_states_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = agg_context(fcinfo, "_avg_states_combine");
	GpAvgState *s1 = PG_ARGISNULL(0) ? NULL : (GpAvgState *) PG_GETARG_POINTER(0);
	GpAvgState *s2 = PG_ARGISNULL(1) ? NULL : (GpAvgState *) PG_GETARG_POINTER(1);

	if (s2 == NULL || !s2->any)
	{
		if (s1 == NULL)
		{
			if (s2 == NULL)
				PG_RETURN_NULL();
			s1 = MemoryContextAllocZero(aggcxt, sizeof(GpAvgState));
			s1->arch = MemoryContextStrdup(aggcxt, s2->arch);
			s1->compile = MemoryContextStrdup(aggcxt, s2->compile);
		}
		PG_RETURN_POINTER(s1);
	}
	if (s1 == NULL || !s1->any)
	{
		Size		bytes = mul_size(sizeof(double), (Size) (s2->P + s2->S));

		if (s1 == NULL)
		{
			s1 = MemoryContextAllocZero(aggcxt, sizeof(GpAvgState));
			s1->arch = MemoryContextStrdup(aggcxt, s2->arch);
			s1->compile = MemoryContextStrdup(aggcxt, s2->compile);
		}
		s1->P = s2->P;
		s1->S = s2->S;
		s1->has_opt = s2->has_opt;
		if (s1->acc == NULL)
			s1->acc = MemoryContextAllocHuge(aggcxt, Max(bytes, 1));
		memcpy(s1->acc, s2->acc, bytes);
		s1->total = s2->total;
		s1->iterations = s2->iterations;
		s1->m_schedule = s2->m_schedule;
		s1->any = true;
		PG_RETURN_POINTER(s1);
	}
	if (s1->P != s2->P || s1->S != s2->S)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("cannot average model states of " INT64_FORMAT " and " INT64_FORMAT " parameters",
						s1->P, s2->P),
				 errhint("Average the states of one model configuration only.")));
	for (int64 i = 0; i < s1->P + s1->S; i++)
		s1->acc[i] += s2->acc[i];
	s1->total += s2->total;
	if (s2->iterations > s1->iterations)
	{
		s1->iterations = s2->iterations;
		s1->m_schedule = s2->m_schedule;
	}
	PG_RETURN_POINTER(s1);
}

PG_FUNCTION_INFO_V1(madlib_dl__avg_states_serialize);

/* internal -> bytea (host byte order): the sums, not the model. */
Datum
madlib_dl__avg_states_serialize(PG_FUNCTION_ARGS)
{
	GpAvgState *st;
	SerBuf		sb;
	int32		flags;

	(void) agg_context(fcinfo, "_avg_states_serialize");
	st = (GpAvgState *) PG_GETARG_POINTER(0);
	flags = (st->any ? 1 : 0) | (st->has_opt ? 2 : 0);
	ser_begin(&sb);
	ser_put(&sb, &flags, sizeof(flags));
	ser_put(&sb, &st->P, sizeof(int64));
	ser_put(&sb, &st->S, sizeof(int64));
	ser_put(&sb, &st->total, sizeof(double));
	ser_put(&sb, &st->iterations, sizeof(int64));
	ser_put(&sb, &st->m_schedule, sizeof(double));
	ser_put_str(&sb, st->arch);
	ser_put_str(&sb, st->compile);
	if (st->any)
		ser_put(&sb, st->acc, mul_size(sizeof(double), (Size) (st->P + st->S)));
	PG_RETURN_BYTEA_P(ser_end(&sb));
}

PG_FUNCTION_INFO_V1(madlib_dl__avg_states_deserialize);

/* bytea -> internal, in CurrentMemoryContext; the model is rebuilt by the final function. */
Datum
madlib_dl__avg_states_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *b;
	DeBuf		db;
	GpAvgState *st;
	int32		flags;

	(void) agg_context(fcinfo, "_avg_states_deserialize");
	b = PG_GETARG_BYTEA_PP(0);
	de_begin(&db, b);
	st = palloc0(sizeof(GpAvgState));
	de_get(&db, &flags, sizeof(flags));
	de_get(&db, &st->P, sizeof(int64));
	de_get(&db, &st->S, sizeof(int64));
	de_get(&db, &st->total, sizeof(double));
	de_get(&db, &st->iterations, sizeof(int64));
	de_get(&db, &st->m_schedule, sizeof(double));
	st->arch = de_get_str(&db, CurrentMemoryContext);
	st->compile = de_get_str(&db, CurrentMemoryContext);
	st->any = (flags & 1) != 0;
	st->has_opt = (flags & 2) != 0;
	if (st->arch == NULL || st->compile == NULL || st->P < 0 || st->S < 0)
		elog(ERROR, "madlib_dl: corrupt _avg_states state");
	if (st->any)
	{
		Size		bytes = mul_size(sizeof(double), (Size) (st->P + st->S));

		if (bytes > db.left)
			elog(ERROR, "madlib_dl: truncated _avg_states state");
		st->acc = MemoryContextAllocHuge(CurrentMemoryContext, Max(bytes, 1));
		de_get(&db, st->acc, bytes);
	}
	PG_RETURN_POINTER(st);
}

PG_FUNCTION_INFO_V1(madlib_dl__avg_states_final);

/*
 * The average as a state with samples_seen 0, like broadcast_state in
 * fit.c.  NULL when no input state had samples.
 */
Datum
madlib_dl__avg_states_final(PG_FUNCTION_ARGS)
{
	GpAvgState *st;
	MemoryContext cxt = NULL;
	DlPgModel  *m;
	DlOptimState *opt;
	float	   *w;
	bytea	   *result;

	(void) agg_context(fcinfo, "_avg_states_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	st = (GpAvgState *) PG_GETARG_POINTER(0);
	if (!st->any || st->total <= 0)
		PG_RETURN_NULL();
	m = st->m;
	if (m == NULL)
	{
		cxt = AllocSetContextCreate(CurrentMemoryContext, "madlib_dl _avg_states",
									ALLOCSET_DEFAULT_SIZES);
		m = dl_pg_model_build(st->arch, strlen(st->arch), st->compile, NULL,
							  DL_PG_MODEL_STATE, 0, cxt);
	}
	if ((int64) dl_model_n_params(m->model) != st->P)
		elog(ERROR, "madlib_dl: _avg_states state does not match its architecture");
	w = dl_model_params(m->model);
	for (int64 i = 0; i < st->P; i++)
		w[i] = (float) (st->acc[i] / st->total);
	opt = dl_model_optim(m->model);
	if (opt != NULL)
	{
		if (checked_mul64((int64) opt->n_slots, st->P) != st->S)
			elog(ERROR, "madlib_dl: _avg_states state does not match its optimizer");
		for (int64 i = 0; i < st->S; i++)
			opt->slots[i] = (float) (st->acc[st->P + i] / st->total);
		opt->iterations = st->iterations;
		opt->m_schedule = st->m_schedule;
	}
	result = state_bytea(m, 0);
	if (cxt != NULL)
		MemoryContextDelete(cxt);
	PG_RETURN_BYTEA_P(result);
}

/* ---------------------------------------------------------------------
 * _gp_eval_segment: loss and metric sums
 * --------------------------------------------------------------------- */

typedef struct GpEvalState
{
	DlPgModel  *m;				/* NULL once combined or deserialized */
	uint8	   *state;			/* the model state evaluated (dl_blob) */
	Size		state_len;
	double		loss_sum;
	double		metric_sum;
	int64		n;
} GpEvalState;

PG_FUNCTION_INFO_V1(madlib_dl__gp_eval_transition);

/*
 * madlib_dl._gp_eval_transition(state internal, dep bytea, indep bytea,
 *     dep_shape int[], indep_shape int[], model_state bytea, arch json,
 *     compile_params text, fit_params text) RETURNS internal.  Each buffer
 * is evaluated by dl_seg_eval_step (seg_step.c) as a partition of its
 * own.  Rows with a NULL model_state are skipped (a model that diverged).
 */
Datum
madlib_dl__gp_eval_transition(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = agg_context(fcinfo, "_gp_eval_transition");
	GpEvalState *st = PG_ARGISNULL(0) ? NULL : (GpEvalState *) PG_GETARG_POINTER(0);
	DlSegPartition part;
	DlSegStats	stats;
	MemoryContext tmp;
	MemoryContext old;
	int64		n;
	int64		xw;
	int64		yw;
	float	   *x;
	float	   *y;

	if (PG_ARGISNULL(5))
	{
		if (st == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(st);
	}
	require_arg(fcinfo, 1, "dependent variable");
	require_arg(fcinfo, 2, "independent variable");
	require_arg(fcinfo, 3, "dependent variable shape");
	require_arg(fcinfo, 4, "independent variable shape");
	require_arg(fcinfo, 6, "model_arch");
	require_arg(fcinfo, 7, "compile_params");
	if (st == NULL)
	{
		char	   *arch = text_arg_in(fcinfo, 6, CurrentMemoryContext);
		char	   *compile = text_arg_in(fcinfo, 7, CurrentMemoryContext);
		char	   *fitp = text_arg_in(fcinfo, 8, CurrentMemoryContext);
		bytea	   *ms = PG_GETARG_BYTEA_PP(5);

		dl_pg_set_blas_threads();
		st = MemoryContextAllocZero(aggcxt, sizeof(GpEvalState));
		st->m = dl_pg_model_build(arch, strlen(arch), compile, fitp, DL_PG_MODEL_TRAIN, 0,
								  aggcxt);
		st->state_len = VARSIZE_ANY_EXHDR(ms);
		st->state = MemoryContextAlloc(aggcxt, Max(st->state_len, 1));
		memcpy(st->state, VARDATA_ANY(ms), st->state_len);
	}
	if (st->m == NULL)
		elog(ERROR, "madlib_dl: _gp_eval_transition after combine");

	tmp = AllocSetContextCreate(CurrentMemoryContext, "madlib_dl _gp_eval_segment",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(tmp);
	decode_buffer(PG_GETARG_BYTEA_PP(1), PG_GETARG_BYTEA_PP(2),
				  PG_GETARG_ARRAYTYPE_P(3), PG_GETARG_ARRAYTYPE_P(4),
				  &n, &xw, &yw, &x, &y);
	memset(&part, 0, sizeof(part));
	part.loaded = true;
	part.n = n;
	part.x_width = xw;
	part.y_width = yw;
	part.x = x;
	part.y = y;
	dl_seg_eval_step(st->m, st->state, st->state_len, &part, NULL, tmp, &stats);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
	st->loss_sum += stats.train_loss_sum;
	st->metric_sum += stats.train_metric_sum;
	st->n += stats.train_n;
	PG_RETURN_POINTER(st);
}

PG_FUNCTION_INFO_V1(madlib_dl__gp_eval_combine);

/* Add the sums of state2 to state1. */
Datum
madlib_dl__gp_eval_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = agg_context(fcinfo, "_gp_eval_combine");
	GpEvalState *s1 = PG_ARGISNULL(0) ? NULL : (GpEvalState *) PG_GETARG_POINTER(0);
	GpEvalState *s2 = PG_ARGISNULL(1) ? NULL : (GpEvalState *) PG_GETARG_POINTER(1);

	if (s2 == NULL)
	{
		if (s1 == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(s1);
	}
	if (s1 == NULL)
		s1 = MemoryContextAllocZero(aggcxt, sizeof(GpEvalState));
	s1->loss_sum += s2->loss_sum;
	s1->metric_sum += s2->metric_sum;
	s1->n += s2->n;
	PG_RETURN_POINTER(s1);
}

PG_FUNCTION_INFO_V1(madlib_dl__gp_eval_serialize);

/* internal -> bytea (host byte order): the three sums. */
Datum
madlib_dl__gp_eval_serialize(PG_FUNCTION_ARGS)
{
	GpEvalState *st;
	SerBuf		sb;

	(void) agg_context(fcinfo, "_gp_eval_serialize");
	st = (GpEvalState *) PG_GETARG_POINTER(0);
	ser_begin(&sb);
	ser_put(&sb, &st->loss_sum, sizeof(double));
	ser_put(&sb, &st->metric_sum, sizeof(double));
	ser_put(&sb, &st->n, sizeof(int64));
	PG_RETURN_BYTEA_P(ser_end(&sb));
}

PG_FUNCTION_INFO_V1(madlib_dl__gp_eval_deserialize);

/* bytea -> internal, in CurrentMemoryContext. */
Datum
madlib_dl__gp_eval_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *b;
	DeBuf		db;
	GpEvalState *st;

	(void) agg_context(fcinfo, "_gp_eval_deserialize");
	b = PG_GETARG_BYTEA_PP(0);
	de_begin(&db, b);
	st = palloc0(sizeof(GpEvalState));
	de_get(&db, &st->loss_sum, sizeof(double));
	de_get(&db, &st->metric_sum, sizeof(double));
	de_get(&db, &st->n, sizeof(int64));
	PG_RETURN_POINTER(st);
}

PG_FUNCTION_INFO_V1(madlib_dl__gp_eval_final);

/* {loss_sum, metric_sum, n} as float8[]; NULL for no rows. */
Datum
madlib_dl__gp_eval_final(PG_FUNCTION_ARGS)
{
	GpEvalState *st;
	Datum		d[3];

	(void) agg_context(fcinfo, "_gp_eval_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	st = (GpEvalState *) PG_GETARG_POINTER(0);
	d[0] = Float8GetDatum(st->loss_sum);
	d[1] = Float8GetDatum(st->metric_sum);
	d[2] = Float8GetDatum((double) st->n);
	PG_RETURN_ARRAYTYPE_P(construct_array(d, 3, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, 'd'));
}

/* ---------------------------------------------------------------------
 * Plain functions
 * --------------------------------------------------------------------- */

PG_FUNCTION_INFO_V1(madlib_dl__gp_initial_state);

/*
 * madlib_dl._gp_initial_state(arch json, init_weights bytea,
 *     compile_params text, fit_params text) RETURNS bytea
 * The state a fit starts from, as fit.c makes its master model: weights
 * initialised from fit_params' seed (or init_weights when not NULL),
 * fresh optimizer state, samples_seen 0.
 */
Datum
madlib_dl__gp_initial_state(PG_FUNCTION_ARGS)
{
	MemoryContext cxt;
	MemoryContext old;
	DlPgModel  *m;
	DlError		err;
	char	   *arch;
	char	   *compile;
	char	   *fitp;
	bytea	   *result;

	require_arg(fcinfo, 0, "model_arch");
	require_arg(fcinfo, 2, "compile_params");
	cxt = AllocSetContextCreate(CurrentMemoryContext, "madlib_dl _gp_initial_state",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	arch = text_arg_in(fcinfo, 0, cxt);
	compile = text_arg_in(fcinfo, 2, cxt);
	fitp = text_arg_in(fcinfo, 3, cxt);
	dl_error_clear(&err);
	m = dl_pg_model_build(arch, strlen(arch), compile, fitp, DL_PG_MODEL_STATE, 0, cxt);
	dl_pg_check(dl_model_init_weights(m->model, m->fit.seed, &err), &err);
	if (!PG_ARGISNULL(1))
		dl_pg_model_set_weights(m, PG_GETARG_BYTEA_PP(1));
	MemoryContextSwitchTo(old);
	result = state_bytea(m, 0);
	MemoryContextDelete(cxt);
	PG_RETURN_BYTEA_P(result);
}

PG_FUNCTION_INFO_V1(madlib_dl__gp_state_weights);

/*
 * madlib_dl._gp_state_weights(model_state bytea, arch json) RETURNS bytea
 * The flat little-endian float32 weights of a state (MADlib's
 * model_weights).
 */
Datum
madlib_dl__gp_state_weights(PG_FUNCTION_ARGS)
{
	MemoryContext cxt;
	DlPgModel  *m;
	DlError		err;
	char	   *arch;
	bytea	   *ms;
	bytea	   *result;

	require_arg(fcinfo, 0, "model_state");
	require_arg(fcinfo, 1, "model_arch");
	cxt = AllocSetContextCreate(CurrentMemoryContext, "madlib_dl _gp_state_weights",
								ALLOCSET_DEFAULT_SIZES);
	arch = text_arg_in(fcinfo, 1, cxt);
	ms = PG_GETARG_BYTEA_PP(0);
	dl_error_clear(&err);
	m = dl_pg_model_build(arch, strlen(arch), NULL, NULL, DL_PG_MODEL_STATE, 0, cxt);
	dl_pg_check(dl_blob_read(m->model, (const uint8_t *) VARDATA_ANY(ms), VARSIZE_ANY_EXHDR(ms),
							 NULL, &err), &err);
	result = dl_pg_model_get_weights(m);
	MemoryContextDelete(cxt);
	PG_RETURN_BYTEA_P(result);
}

/* ---------------------------------------------------------------------
 * The visit order of fit_multiple
 * --------------------------------------------------------------------- */

PG_FUNCTION_INFO_V1(madlib_dl__gp_visit_order);

/*
 * madlib_dl._gp_visit_order(mst_keys int[], costs float8[], seed bigint,
 *     num_places int) RETURNS int[]
 * The places of the model hopper: element p (0-based) is the mst_key of
 * the model that starts at place p, NULL for an empty place; num_places
 * (>= the number of models) elements.  The order is the one the
 * PostgreSQL path uses (dl_pg_visit_order in pg_util.c): a Fisher-Yates
 * permutation drawn from seed with splitmix64, then stably sorted by
 * cost, largest first.  The regression test 95_greenplum_install checks
 * that both give the same schedule.
 */
Datum
madlib_dl__gp_visit_order(PG_FUNCTION_ARGS)
{
	ArrayType  *ka;
	ArrayType  *ca;
	Datum	   *kd;
	Datum	   *cd;
	bool	   *kn;
	bool	   *cn;
	int			K;
	int			KC;
	int			M;
	uint64		x;
	double	   *cost;			/* (K) */
	int		   *order;
	Datum	   *out;
	bool	   *outn;
	int			dims[1];
	int			lbs[1] = {1};

	for (int i = 0; i < 4; i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("argument %d of _gp_visit_order must not be NULL", i + 1)));
	ka = PG_GETARG_ARRAYTYPE_P(0);
	ca = PG_GETARG_ARRAYTYPE_P(1);
	x = (uint64) PG_GETARG_INT64(2);
	M = PG_GETARG_INT32(3);
	deconstruct_array(ka, INT4OID, sizeof(int32), true, 'i', &kd, &kn, &K);
	deconstruct_array(ca, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, 'd', &cd, &cn, &KC);
	if (K < 1 || KC != K || M < K)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("_gp_visit_order needs as many costs as models (%d and %d) and at least as many places (%d)",
						K, KC, M)));
	if (K > DL_SEG_MAX_MODELS || M > DL_SEG_MAX_PLACES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("_gp_visit_order takes at most %d models and %d places, got %d and %d",
						DL_SEG_MAX_MODELS, DL_SEG_MAX_PLACES, K, M),
				 errhint("Train at most %d configurations in one fit_multiple.", DL_SEG_MAX_MODELS)));
	for (int i = 0; i < K; i++)
		if (kn[i] || cn[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("mst_keys and costs must not hold NULLs")));

	cost = palloc(sizeof(double) * K);
	for (int i = 0; i < K; i++)
		cost[i] = DatumGetFloat8(cd[i]);
	order = palloc(sizeof(int) * K);
	dl_hopper_visit_order(order, cost, K, x);
	out = palloc(sizeof(Datum) * M);
	outn = palloc(sizeof(bool) * M);
	for (int p = 0; p < M; p++)
	{
		outn[p] = p >= K;
		out[p] = p < K ? kd[order[p]] : Int32GetDatum(0);
	}
	dims[0] = M;
	PG_RETURN_ARRAYTYPE_P(construct_md_array(out, outn, 1, dims, lbs, INT4OID, sizeof(int32), true, 'i'));
}
