/*-------------------------------------------------------------------------
 *
 * preprocess.c
 *	  Aggregates that pack source rows into the buffers of a preprocessed
 *	  table, and functions that unpack buffers again.
 *
 * training_preprocessor_dl and validation_preprocessor_dl
 * (src/sql/preprocess.sql) build every buffer of the output table with
 * one INSERT ... SELECT ... GROUP BY buffer_id.  The aggregates here make
 * the buffer columns:
 *
 *	 _pack_float32(x, row, slot, n, normalizing_const, dims)
 *		 n x prod(dims) float32, each value divided by normalizing_const
 *	 _pack_onehot_int16(class_index, num_classes, slot, n)
 *		 n x num_classes int16, one-hot
 *	 _pack_int16_array(y, row, slot, n, width)
 *		 n x width int16, from arrays that are already one-hot
 *	 _pack_target_float32(y, row, slot, n, width)
 *		 n x width float32, from arrays of numeric targets (regression)
 *
 * Each row carries its slot (0 .. n-1) in its buffer and is written at
 * that slot.  The bytes therefore do not depend on the order in which rows
 * reach the aggregate (hashed or sorted grouping, any scan order), and no
 * ORDER BY is needed inside the aggregate, which would sort the wide
 * arrays once more.  Every slot is written exactly once; the final
 * function checks it.  All values are written little-endian, C order,
 * whatever the host.  Bad rows are named in errors by their ctid in the
 * source table.
 *
 * Also here: _unpack_float32 / _unpack_int16 (a buffer back to an array)
 * and _pp_default_segments (the default number of virtual segments).
 *
 * IDENTIFICATION
 *	  src/pg/api/preprocess.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "catalog/pg_type.h"
#include "common/int.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "port/pg_bswap.h"
#include "storage/itemptr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"

#define ROW_HINT "Find the row with SELECT * FROM <source_table> WHERE ctid = '%s', then fix or delete it."

/* The state of the three packing aggregates, in the aggregate's context. */
typedef struct PackState
{
	int64		n;				/* rows in this buffer */
	int64		row_values;		/* values per row */
	int			value_size;		/* bytes per value: 4 (float32) or 2 (int16) */
	int64		filled;			/* slots written so far */
	bytea	   *buf;			/* VARHDRSZ + (n, row_values) values */
	uint8	   *seen;			/* (n) bits: slot already written */
	int			ndims;			/* _pack_float32: the expected array dims */
	int			dims[MAXDIM];
} PackState;

/*
 * The data of an array without NULLs (the caller has checked
 * ARR_HASNULL).  ARR_DATA_PTR gives -Wsign-compare warnings.
 */

/*
 * ERROR 22023 for a bad argument of the packing functions.  Only the
 * preprocessors call them, with arguments they have checked; a direct
 * call gets a clean error.
 */
#define PACK_ERROR(...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE), \
			 errmsg(__VA_ARGS__), \
			 errhint("The packing functions are internal to training_preprocessor_dl and " \
					 "validation_preprocessor_dl; call those.")))

static inline void *
array_data(ArrayType *a)
{
	return (char *) a + ARR_OVERHEAD_NONULLS(ARR_NDIM(a));
}

static inline void
put_f32le(uint8 *dst, float v)
{
	uint32		u;

	memcpy(&u, &v, sizeof(u));
#ifdef WORDS_BIGENDIAN
	u = pg_bswap32(u);
#endif
	memcpy(dst, &u, sizeof(u));
}

static inline float
get_f32le(const uint8 *src)
{
	uint32		u;
	float		v;

	memcpy(&u, src, sizeof(u));
#ifdef WORDS_BIGENDIAN
	u = pg_bswap32(u);
#endif
	memcpy(&v, &u, sizeof(v));
	return v;
}

static inline void
put_i16le(uint8 *dst, int16 v)
{
	uint16		u = (uint16) v;

	dst[0] = (uint8) (u & 0xff);
	dst[1] = (uint8) (u >> 8);
}

static inline int16
get_i16le(const uint8 *src)
{
	return (int16) (uint16) (src[0] | (src[1] << 8));
}

/* The row's ctid as "(block,offset)", palloc'd; "(unknown)" for NULL. */
static char *
row_label(FunctionCallInfo fcinfo, int argno)
{
	ItemPointer tid;

	if (PG_ARGISNULL(argno))
		return pstrdup("(unknown)");
	tid = (ItemPointer) PG_GETARG_POINTER(argno);
	return psprintf("(%u,%u)",
					ItemPointerGetBlockNumberNoCheck(tid),
					(unsigned) ItemPointerGetOffsetNumberNoCheck(tid));
}

/* The subscripts of the flat (0-based) element k of x, e.g. "[2][3]". */
static char *
element_label(ArrayType *x, int64 k)
{
	int			ndim = ARR_NDIM(x);
	int		   *dims = ARR_DIMS(x);
	int		   *lbs = ARR_LBOUND(x);
	int			sub[MAXDIM];
	StringInfoData s;

	for (int d = ndim - 1; d >= 0; d--)
	{
		sub[d] = (int) (k % dims[d]) + lbs[d];
		k /= dims[d];
	}
	initStringInfo(&s);
	for (int d = 0; d < ndim; d++)
		appendStringInfo(&s, "[%d]", sub[d]);
	return s.data;
}

/* "{4,2}" for a dims vector. */
static char *
dims_label(int ndims, const int *dims)
{
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfoChar(&s, '{');
	for (int d = 0; d < ndims; d++)
		appendStringInfo(&s, d ? ",%d" : "%d", dims[d]);
	appendStringInfoChar(&s, '}');
	return s.data;
}

/* Raise 22004 for the first NULL element of x (which has one). */
static void
report_null_element(ArrayType *x, const char *what, const char *row) pg_attribute_noreturn();

static void
report_null_element(ArrayType *x, const char *what, const char *row)
{
	bits8	   *bitmap = ARR_NULLBITMAP(x);
	int64		nitems = ArrayGetNItems(ARR_NDIM(x), ARR_DIMS(x));
	int64		k = 0;

	for (k = 0; k < nitems; k++)
		if (bitmap != NULL && (bitmap[k / 8] & (1 << (k % 8))) == 0)
			break;
	ereport(ERROR,
			(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
			 errmsg("%s has a NULL element at %s in the row with ctid %s",
					what, element_label(x, k), row),
			 errhint(ROW_HINT, row)));
	pg_unreachable();
}

/*
 * Ask the kernel for transparent huge pages on the 2 MB-aligned interior
 * of a large allocation (a buffer is tens of MB, written once, front to
 * back).  With 4 kB pages, faulting in fresh memory cost about as much as
 * writing the buffer (bench/preprocess_bench.sh); madvise is a hint, and
 * its failure (no THP, another kernel) changes nothing but speed.
 */
static void
advise_huge_pages(void *p, Size len)
{
#if defined(MADV_HUGEPAGE)
	const uintptr_t huge = (uintptr_t) 2 * 1024 * 1024;
	uintptr_t	lo = ((uintptr_t) p + huge - 1) & ~(huge - 1);
	uintptr_t	hi = ((uintptr_t) p + len) & ~(huge - 1);

	if (len >= 4 * huge && hi > lo)
		(void) madvise((void *) lo, hi - lo, MADV_HUGEPAGE);
#endif
}

/*
 * The state for this call: created on the first call in the aggregate's
 * memory context with n rows of row_values values of value_size bytes,
 * zeroed when value_size is 2 (one-hot rows set one value each).
 * Raises 54000 when the buffer would exceed what a bytea holds.
 * Later calls must pass the same n (the driver computes it from the
 * buffer id, so it is constant within a group).
 */
static PackState *
pack_state(FunctionCallInfo fcinfo, int64 n, int64 row_values, int value_size)
{
	MemoryContext aggcxt;
	PackState  *st;
	int64		bytes;
	int64		total;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		PACK_ERROR("madlib_dl packing function called in non-aggregate context");
	if (!PG_ARGISNULL(0))
	{
		st = (PackState *) PG_GETARG_POINTER(0);
		if (st->n != n)
			PACK_ERROR("buffer row count changed from " INT64_FORMAT " to " INT64_FORMAT,
				 st->n, n);
		return st;
	}

	if (n <= 0 || row_values <= 0)
		PACK_ERROR("invalid buffer of " INT64_FORMAT " rows of " INT64_FORMAT " values",
			 n, row_values);
	if (pg_mul_s64_overflow(n, row_values, &total) ||
		pg_mul_s64_overflow(total, value_size, &bytes) ||
		bytes > (int64) (MaxAllocSize - VARHDRSZ))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a buffer of " INT64_FORMAT " rows of " INT64_FORMAT
						" values does not fit in a bytea of at most 1 GB", n, row_values),
				 errhint("Give a smaller buffer_size.")));

	st = (PackState *) MemoryContextAllocZero(aggcxt, sizeof(PackState));
	st->n = n;
	st->row_values = row_values;
	st->value_size = value_size;
	/* float32 rows are all written; int16 one-hot rows need the zeros */
	if (value_size == 4)
	{
		st->buf = (bytea *) MemoryContextAlloc(aggcxt, VARHDRSZ + (Size) bytes);
		advise_huge_pages(st->buf, VARHDRSZ + (Size) bytes);
	}
	else
		st->buf = (bytea *) MemoryContextAllocZero(aggcxt, VARHDRSZ + (Size) bytes);
	SET_VARSIZE(st->buf, VARHDRSZ + (Size) bytes);
	st->seen = (uint8 *) MemoryContextAllocZero(aggcxt, (Size) (n / 8 + 1));
	return st;
}

/* Claim slot for this row; internal error when out of range or taken. */
static uint8 *
pack_slot(PackState *st, int64 slot)
{
	if (slot < 0 || slot >= st->n)
		PACK_ERROR("slot " INT64_FORMAT " outside a buffer of " INT64_FORMAT " rows",
			 slot, st->n);
	if (st->seen[slot / 8] & (1 << (slot % 8)))
		PACK_ERROR("slot " INT64_FORMAT " of a buffer written twice", slot);
	st->seen[slot / 8] |= (uint8) (1 << (slot % 8));
	st->filled++;
	return (uint8 *) VARDATA(st->buf) + slot * st->row_values * st->value_size;
}

static int32
required_int4(FunctionCallInfo fcinfo, int argno, const char *name)
{
	if (PG_ARGISNULL(argno))
		PACK_ERROR("madlib_dl packing: %s must not be NULL", name);
	return PG_GETARG_INT32(argno);
}

/* Report a value of x that is not finite, or not after the division. */
static void
report_bad_value(ArrayType *x, int64 k, double v, double norm, const char *row,
				 const char *what) pg_attribute_noreturn();

static void
report_bad_value(ArrayType *x, int64 k, double v, double norm, const char *row, const char *what)
{
	char	   *at = element_label(x, k);

	if (isnan(v) || isinf(v))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("%s has value %s at %s in the row with ctid %s", what,
						isnan(v) ? "NaN" : (v > 0 ? "Infinity" : "-Infinity"), at, row),
				 errhint(ROW_HINT, row)));
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("%s value %g at %s in the row with ctid %s divided by "
					"normalizing_const %g is out of range for real", what, v, at, row, norm),
			 errhint("Give a larger normalizing_const, or fix the row.")));
	pg_unreachable();
}

/*
 * The row's array (argument 1); what names the variable in the error
 * when it is NULL.
 */
static ArrayType *
row_array(FunctionCallInfo fcinfo, const char *what)
{
	if (PG_ARGISNULL(1))
	{
		char	   *row = row_label(fcinfo, 2);

		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s is NULL in the row with ctid %s", what, row),
				 errhint(ROW_HINT, row)));
	}
	return PG_GETARG_ARRAYTYPE_P(1);
}

/* One row being written as float32: its array x, divided by norm, at dst. */
typedef struct PackRow
{
	FunctionCallInfo fcinfo;	/* names the row (argument 2) in errors */
	ArrayType  *x;
	uint8	   *dst;
	int64		nv;				/* values */
	double		norm;
	const char *what;			/* the variable, in errors */
} PackRow;

/* ERROR unless x has the dims of the buffer of st and no NULL element. */
static void
check_float32_row(FunctionCallInfo fcinfo, const PackState *st, ArrayType *x, const char *what)
{
	if (ARR_NDIM(x) != st->ndims ||
		memcmp(ARR_DIMS(x), st->dims, st->ndims * sizeof(int)) != 0)
	{
		char	   *row = row_label(fcinfo, 2);

		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("%s has shape %s in the row with ctid %s, not %s as in the first row",
						what, dims_label(ARR_NDIM(x), ARR_DIMS(x)), row,
						dims_label(st->ndims, st->dims)),
				 errhint("Every row's array must have the same dimensions.")));
	}
	if (ARR_HASNULL(x))
		report_null_element(x, what, row_label(fcinfo, 2));
}

/*
 * One loop per element type (PACK_LOOP, over the PackRow *r).  The
 * division is done in double and rounded once to float32; a value that
 * is not finite afterwards is either not finite in the data or overflows
 * float32.  On a little-endian host the float is its own little-endian
 * bytes: the loop stores it and tests its exponent with integer
 * operations and no early exit, so it vectorizes; a second loop runs
 * only to name a bad value.
 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PACK_LOOP(ctype) \
	do { \
		const ctype *src = (const ctype *) array_data(r->x); \
		uint32		bad = 0; \
		for (int64 k = 0; k < r->nv; k++) \
		{ \
			float	f = (float) ((double) src[k] / r->norm); \
			uint32	u; \
			memcpy(&u, &f, sizeof(u)); \
			bad |= (u & 0x7f800000u) == 0x7f800000u; \
			memcpy(r->dst + 4 * k, &f, sizeof(f)); \
		} \
		for (int64 k = 0; unlikely(bad) && k < r->nv; k++) \
		{ \
			double	v = (double) src[k]; \
			if (!isfinite((float) (v / r->norm))) \
				report_bad_value(r->x, k, v, r->norm, row_label(r->fcinfo, 2), r->what); \
		} \
	} while (0)
#else
#define PACK_LOOP(ctype) \
	do { \
		const ctype *src = (const ctype *) array_data(r->x); \
		for (int64 k = 0; k < r->nv; k++) \
		{ \
			double	v = (double) src[k]; \
			float	f = (float) (v / r->norm); \
			if (unlikely(!isfinite(f))) \
				report_bad_value(r->x, k, v, r->norm, row_label(r->fcinfo, 2), r->what); \
			put_f32le(r->dst + 4 * k, f); \
		} \
	} while (0)
#endif

/* PACK_LOOP for a numeric array: each element through float8. */
static void
pack_numeric_values(const PackRow *r)
{
	Datum	   *elems;
	int			nelems;

	deconstruct_array(r->x, NUMERICOID, -1, false, TYPALIGN_INT, &elems, NULL, &nelems);
	for (int64 k = 0; k < r->nv; k++)
	{
		double		v = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, elems[k]));
		float		f = (float) (v / r->norm);

		if (!isfinite(f))
			report_bad_value(r->x, k, v, r->norm, row_label(r->fcinfo, 2), r->what);
		put_f32le(r->dst + 4 * k, f);
	}
}

/* Write the values of r's array as float32; ERROR for a non-numeric type. */
static void
pack_float32_values(const PackRow *r)
{
	Oid			elemtype = ARR_ELEMTYPE(r->x);

	switch (elemtype)
	{
		case FLOAT4OID:
			PACK_LOOP(float4);
			break;
		case FLOAT8OID:
			PACK_LOOP(float8);
			break;
		case INT2OID:
			PACK_LOOP(int16);
			break;
		case INT4OID:
			PACK_LOOP(int32);
			break;
		case INT8OID:
			PACK_LOOP(int64);
			break;
		case NUMERICOID:
			pack_numeric_values(r);
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("%s has type %s[], not a numeric array", r->what,
							format_type_be(elemtype)),
					 errhint("Use an array of smallint, integer, bigint, real, double precision or numeric.")));
	}
}

#undef PACK_LOOP

/*
 * Write the row's array (argument 1) divided by norm as float32 at slot
 * of the buffer of st, whose dims it must have; what names the variable
 * in the errors.
 */
static void
pack_float32_row(FunctionCallInfo fcinfo, PackState *st, int32 slot, double norm, const char *what)
{
	PackRow		r;

	r.fcinfo = fcinfo;
	r.x = row_array(fcinfo, what);
	check_float32_row(fcinfo, st, r.x, what);
	r.dst = pack_slot(st, slot);
	r.nv = st->row_values;
	r.norm = norm;
	r.what = what;
	pack_float32_values(&r);
}

/*
 * _pack_float32_sfunc(state internal, x anyarray, row tid, slot int,
 *                     n int, normalizing_const float8, dims int[])
 *
 * Writes x / normalizing_const as float32 at slot of a buffer of n rows.
 * x must have exactly the dims given (those of the table's first row),
 * no NULL element and only finite values; element types smallint,
 * integer, bigint, real, double precision and numeric.  Not strict: a
 * NULL x is an error naming the row.
 */
PG_FUNCTION_INFO_V1(madlib_dl__pack_float32_sfunc);
Datum
madlib_dl__pack_float32_sfunc(PG_FUNCTION_ARGS)
{
	int32		slot = required_int4(fcinfo, 3, "slot");
	int32		n = required_int4(fcinfo, 4, "n");
	double		norm;
	PackState  *st;

	if (PG_ARGISNULL(5) || PG_ARGISNULL(6))
		PACK_ERROR("madlib_dl packing: normalizing_const and dims must not be NULL");
	norm = PG_GETARG_FLOAT8(5);
	if (!(norm > 0.0) || isinf(norm))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("normalizing_const must be a positive finite number, not %g", norm),
				 errhint("Give a value such as 1.0 or 255.0.")));

	if (PG_ARGISNULL(0))
	{
		ArrayType  *dims = PG_GETARG_ARRAYTYPE_P(6);
		int			nd = ArrayGetNItems(ARR_NDIM(dims), ARR_DIMS(dims));
		int32	   *dv;
		int64		prod = 1;

		if (ARR_ELEMTYPE(dims) != INT4OID || ARR_HASNULL(dims) || nd < 1 || nd > MAXDIM)
			PACK_ERROR("madlib_dl packing: dims must be 1 to %d integers", MAXDIM);
		dv = (int32 *) array_data(dims);
		for (int d = 0; d < nd; d++)
		{
			if (dv[d] <= 0 || pg_mul_s64_overflow(prod, dv[d], &prod))
				PACK_ERROR("madlib_dl packing: invalid dims");
		}
		st = pack_state(fcinfo, n, prod, 4);
		st->ndims = nd;
		memcpy(st->dims, dv, nd * sizeof(int));
	}
	else
		st = pack_state(fcinfo, n, 0, 4);

	pack_float32_row(fcinfo, st, slot, norm, "independent variable");
	PG_RETURN_POINTER(st);
}

/*
 * The state of a packing function of (y, row, slot, n, width) arguments,
 * with width values of value_size bytes per row; *slot and *width its
 * arguments (required; width positive).
 */
static PackState *
pack_width_state(FunctionCallInfo fcinfo, int value_size, int32 *slot, int32 *width)
{
	int32		n;

	*slot = required_int4(fcinfo, 3, "slot");
	n = required_int4(fcinfo, 4, "n");
	*width = required_int4(fcinfo, 5, "width");
	if (*width < 1)
		PACK_ERROR("madlib_dl packing: width %d is not positive", *width);
	return pack_state(fcinfo, n, *width, value_size);
}

/*
 * _pack_target_float32_sfunc(state internal, y anyarray, row tid, slot
 *     int, n int, width int)
 *
 * Writes y, a one-dimensional numeric array of exactly width values (a
 * numeric dependent variable: a regression target), as float32 at slot,
 * unscaled; NULLs, NaN and infinities are errors naming the row.
 */
PG_FUNCTION_INFO_V1(madlib_dl__pack_target_float32_sfunc);
Datum
madlib_dl__pack_target_float32_sfunc(PG_FUNCTION_ARGS)
{
	int32		slot;
	int32		width;
	PackState  *st = pack_width_state(fcinfo, 4, &slot, &width);

	if (st->row_values != width)
		PACK_ERROR("madlib_dl packing: width changed from " INT64_FORMAT " to %d", st->row_values, width);
	st->ndims = 1;
	st->dims[0] = width;
	pack_float32_row(fcinfo, st, slot, 1.0, "dependent variable");
	PG_RETURN_POINTER(st);
}

/*
 * _pack_onehot_int16_sfunc(state internal, class_index int, num_classes int,
 *                          slot int, n int)
 *
 * Writes the one-hot int16 row for class_index (0-based) at slot.  The
 * driver has checked every class value beforehand, so a NULL or out of
 * range index is an internal error.
 */
PG_FUNCTION_INFO_V1(madlib_dl__pack_onehot_int16_sfunc);
Datum
madlib_dl__pack_onehot_int16_sfunc(PG_FUNCTION_ARGS)
{
	int32		num_classes = required_int4(fcinfo, 2, "num_classes");
	int32		slot = required_int4(fcinfo, 3, "slot");
	int32		n = required_int4(fcinfo, 4, "n");
	int32		idx;
	PackState  *st;
	uint8	   *dst;

	if (num_classes < 1)
		PACK_ERROR("madlib_dl packing: num_classes %d is not positive", num_classes);
	st = pack_state(fcinfo, n, num_classes, 2);
	if (st->row_values != num_classes)
		PACK_ERROR("madlib_dl packing: num_classes changed within a buffer");
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("dependent variable has a value that is not among the class values"),
				 errhint("Preprocess with the classes of the training data.")));
	idx = PG_GETARG_INT32(1);
	if (idx < 0 || idx >= num_classes)
		PACK_ERROR("madlib_dl packing: class index %d outside 0..%d", idx, num_classes - 1);
	dst = pack_slot(st, slot);
	put_i16le(dst + 2 * (int64) idx, 1);
	PG_RETURN_POINTER(st);
}

/*
 * ERROR unless y, the dependent variable of the row, is a one-dimensional
 * numeric array of width values without NULLs.
 */
static void
check_onehot_row(FunctionCallInfo fcinfo, ArrayType *y, int32 width)
{
	Oid			elemtype = ARR_ELEMTYPE(y);

	if (ARR_NDIM(y) != 1 || ARR_DIMS(y)[0] != width)
	{
		char	   *row = row_label(fcinfo, 2);

		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("dependent variable has shape %s in the row with ctid %s, not {%d} as in the first row",
						dims_label(ARR_NDIM(y), ARR_DIMS(y)), row, width),
				 errhint("An array dependent variable is one-hot: every row must have one value per class.")));
	}
	if (ARR_HASNULL(y))
		report_null_element(y, "dependent variable", row_label(fcinfo, 2));

	if (elemtype != INT2OID && elemtype != INT4OID && elemtype != INT8OID &&
		elemtype != FLOAT4OID && elemtype != FLOAT8OID && elemtype != NUMERICOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("dependent variable has type %s[], not a numeric array",
						format_type_be(elemtype)),
				 errhint("A one-hot dependent variable is an array of 0 and 1 values of a numeric type.")));
}

/* Element d of an array of the numeric type elemtype, as a double. */
static double
numeric_elem_double(Oid elemtype, Datum d)
{
	switch (elemtype)
	{
		case INT2OID:
			return DatumGetInt16(d);
		case INT4OID:
			return DatumGetInt32(d);
		case INT8OID:
			return (double) DatumGetInt64(d);
		case FLOAT4OID:
			return DatumGetFloat4(d);
		case FLOAT8OID:
			return DatumGetFloat8(d);
		default:
			return DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, d));
	}
}

/* Write the 0/1 values of the checked array y as int16 at slot of st. */
static void
pack_onehot_values(FunctionCallInfo fcinfo, ArrayType *y, PackState *st, int32 slot)
{
	Oid			elemtype = ARR_ELEMTYPE(y);
	Datum	   *elems;
	int			nelems;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	uint8	   *dst;

	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(y, elemtype, typlen, typbyval, typalign, &elems, NULL, &nelems);
	dst = pack_slot(st, slot);
	for (int k = 0; k < nelems; k++)
	{
		double		v = numeric_elem_double(elemtype, elems[k]);

		if (v != 0.0 && v != 1.0)
		{
			char	   *row = row_label(fcinfo, 2);

			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("dependent variable has value %g at %s in the row with ctid %s, not 0 or 1",
							v, element_label(y, k), row),
					 errhint("An array dependent variable must be one-hot encoded already.")));
		}
		put_i16le(dst + 2 * (int64) k, (int16) v);
	}
}

/*
 * _pack_int16_array_sfunc(state internal, y anyarray, row tid, slot int,
 *                         n int, width int)
 *
 * Writes y, a one-dimensional numeric array of exactly width values each
 * 0 or 1 (an already one-hot dependent variable), as int16 at slot.
 */
PG_FUNCTION_INFO_V1(madlib_dl__pack_int16_array_sfunc);
Datum
madlib_dl__pack_int16_array_sfunc(PG_FUNCTION_ARGS)
{
	int32		slot;
	int32		width;
	PackState  *st = pack_width_state(fcinfo, 2, &slot, &width);
	ArrayType  *y;

	y = row_array(fcinfo, "dependent variable");
	check_onehot_row(fcinfo, y, width);
	pack_onehot_values(fcinfo, y, st, slot);
	PG_RETURN_POINTER(st);
}

/*
 * _pack_final(state internal) RETURNS bytea
 *
 * The finished buffer, copied into the caller's (the output tuple's)
 * memory, and the state's buffer freed at once (FINALFUNC_MODIFY =
 * READ_WRITE): the executor would otherwise copy the result out of the
 * aggregate's context itself and keep both until the group's state is
 * freed, so a buffer being written was held three times (state, result,
 * tuple) instead of twice.
 */
PG_FUNCTION_INFO_V1(madlib_dl__pack_final);
Datum
madlib_dl__pack_final(PG_FUNCTION_ARGS)
{
	PackState  *st;
	bytea	   *out;

	/* internal state: only an aggregate may hand one over */
	if (!AggCheckCallContext(fcinfo, NULL))
		PACK_ERROR("madlib_dl: _pack_final called in non-aggregate context");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	st = (PackState *) PG_GETARG_POINTER(0);
	if (st->buf == NULL)
		PACK_ERROR("madlib_dl packing: a buffer was finished twice");
	if (st->filled != st->n)
		PACK_ERROR("madlib_dl packing: buffer has " INT64_FORMAT " of its " INT64_FORMAT " rows",
			 st->filled, st->n);
	out = (bytea *) MemoryContextAllocHuge(CurrentMemoryContext, VARSIZE(st->buf));
	advise_huge_pages(out, VARSIZE(st->buf));
	memcpy(out, st->buf, VARSIZE(st->buf));
	pfree(st->buf);
	st->buf = NULL;
	PG_RETURN_BYTEA_P(out);
}

/*
 * The element count of a buffer of len bytes of value_size-byte values,
 * checked against shape (NULL: one dimension).  Fills ndims/dims for
 * construct_md_array.
 */
static int
unpack_dims(const char *fname, size_t len, int value_size, ArrayType *shape,
			int *ndims, int *dims, int *lbs)
{
	int64		count;

	if (len % value_size != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("%s: buffer has %zu bytes, not a whole number of %d-byte values",
						fname, len, value_size),
				 errhint("Give a buffer column of a table made by training_preprocessor_dl.")));
	count = (int64) (len / value_size);
	if (shape == NULL)
	{
		*ndims = 1;
		dims[0] = (int) count;
		lbs[0] = 1;
		return (int) count;
	}
	else
	{
		int			nd = ArrayGetNItems(ARR_NDIM(shape), ARR_DIMS(shape));
		int32	   *sv = (int32 *) array_data(shape);
		int64		prod = 1;

		if (ARR_ELEMTYPE(shape) != INT4OID || ARR_HASNULL(shape) || nd < 1 || nd > MAXDIM)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: shape must hold 1 to %d integers", fname, MAXDIM),
					 errhint("Give the buffer's shape column, e.g. x_shape.")));
		for (int d = 0; d < nd; d++)
		{
			if (sv[d] < 0 || pg_mul_s64_overflow(prod, sv[d], &prod))
				prod = -1;
			dims[d] = sv[d];
			lbs[d] = 1;
		}
		if (prod != count)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("%s: shape %s does not match a buffer of " INT64_FORMAT " values",
							fname, dims_label(nd, dims), count),
					 errhint("Give the buffer's own shape column.")));
		*ndims = nd;
		return (int) count;
	}
}

/*
 * The body of _unpack_float32 (value_size 4: real[]) and _unpack_int16
 * (value_size 2: smallint[]); fname names the function in messages.
 */
static Datum
unpack_buffer(FunctionCallInfo fcinfo, const char *fname, int value_size)
{
	bytea	   *b;
	ArrayType  *shape;
	const uint8 *src;
	int			ndims;
	int			dims[MAXDIM];
	int			lbs[MAXDIM];
	int			count;
	Datum	   *elems;
	Oid			elemtype = value_size == 4 ? FLOAT4OID : INT2OID;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	b = PG_GETARG_BYTEA_PP(0);
	shape = PG_ARGISNULL(1) ? NULL : PG_GETARG_ARRAYTYPE_P(1);
	count = unpack_dims(fname, VARSIZE_ANY_EXHDR(b), value_size, shape, &ndims, dims, lbs);
	if (count == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(elemtype));
	src = (const uint8 *) VARDATA_ANY(b);
	/* count < 2^28: the bytea is below 1 GB */
	elems = (Datum *) palloc(sizeof(Datum) * (Size) count);
	for (int k = 0; k < count; k++)
		elems[k] = value_size == 4 ? Float4GetDatum(get_f32le(src + 4 * (Size) k))
			: Int16GetDatum(get_i16le(src + 2 * (Size) k));
	PG_RETURN_ARRAYTYPE_P(construct_md_array(elems, NULL, ndims, dims, lbs, elemtype,
											 value_size, true,
											 value_size == 4 ? TYPALIGN_INT : TYPALIGN_SHORT));
}

/*
 * _unpack_float32(buffer bytea, shape int[] DEFAULT NULL) RETURNS real[]
 *
 * A float32 buffer as real[]: one-dimensional, or with the given shape
 * (e.g. the x_shape column).  STRICT in SQL except for shape.
 */
PG_FUNCTION_INFO_V1(madlib_dl__unpack_float32);
Datum
madlib_dl__unpack_float32(PG_FUNCTION_ARGS)
{
	return unpack_buffer(fcinfo, "_unpack_float32", 4);
}

/*
 * _unpack_int16(buffer bytea, shape int[] DEFAULT NULL) RETURNS smallint[]
 *
 * An int16 buffer (e.g. the one-hot y column) as smallint[].
 */
PG_FUNCTION_INFO_V1(madlib_dl__unpack_int16);
Datum
madlib_dl__unpack_int16(PG_FUNCTION_ARGS)
{
	return unpack_buffer(fcinfo, "_unpack_int16", 2);
}

/*
 * _pp_default_segments() RETURNS int
 *
 * The default number of virtual segments: max(1, min(online CPUs,
 * max_parallel_workers)).  Used until transport/workers.c provides
 * _default_num_segments().
 */
PG_FUNCTION_INFO_V1(madlib_dl__pp_default_segments);
Datum
madlib_dl__pp_default_segments(PG_FUNCTION_ARGS)
{
	long		ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	long		nseg = ncpu < 1 ? 1 : ncpu;

	if (nseg > max_parallel_workers)
		nseg = max_parallel_workers;
	if (nseg < 1)
		nseg = 1;
	PG_RETURN_INT32((int32) nseg);
}
