/*-------------------------------------------------------------------------
 *
 * transform.c
 *	  The column transforms saved with a model (include/madlib_dl/
 *	  dl_transform.h), SQL-callable: the spec parsed into a plan, the
 *	  plan's columns resolved to their kinds, the values the statistics
 *	  are computed on, and a raw row turned into its feature array
 *	  (madlib_dl._transform_apply, used by the packing and by predict).
 *
 * Only built-in types are read (a fixed list of type oids, so a domain
 * or another role's type is never read, and no function of theirs
 * runs); categories of integer and boolean columns are compared as the
 * text SQL's ::text writes for them.
 *
 * IDENTIFICATION
 *	  src/pg/api/transform.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/typcache.h"

#include "madlib_dl/dl_strbuf.h"
#include "madlib_dl/dl_transform.h"

#include "pg_glue.h"
#include "transform.h"

PG_FUNCTION_INFO_V1(madlib_dl__transform_parse);
PG_FUNCTION_INFO_V1(madlib_dl__transform_resolve);
PG_FUNCTION_INFO_V1(madlib_dl__transform_stage_value);
PG_FUNCTION_INFO_V1(madlib_dl__transform_finish);
PG_FUNCTION_INFO_V1(madlib_dl__transform_width);
PG_FUNCTION_INFO_V1(madlib_dl__transform_apply);
PG_FUNCTION_INFO_V1(madlib_dl_transform_features);

static bool
is_number_type(Oid t)
{
	return t == INT2OID || t == INT4OID || t == INT8OID || t == FLOAT4OID || t == FLOAT8OID ||
		t == NUMERICOID || t == BOOLOID;
}

static bool
is_text_type(Oid t)
{
	return t == TEXTOID || t == VARCHAROID || t == BPCHAROID;
}

/* A type whose values are categories: text, integers, booleans (exact text forms). */
static bool
is_category_type(Oid t)
{
	return is_text_type(t) || t == INT2OID || t == INT4OID || t == INT8OID || t == BOOLOID;
}

static bool
is_number_array_type(Oid t)
{
	return t == INT2ARRAYOID || t == INT4ARRAYOID || t == INT8ARRAYOID || t == FLOAT4ARRAYOID ||
		t == FLOAT8ARRAYOID || t == NUMERICARRAYOID;
}

static DlTfKind
kind_of(Oid t)
{
	if (is_number_type(t))
		return DL_TF_KIND_NUMBER;
	if (is_text_type(t))
		return DL_TF_KIND_TEXT;
	if (is_number_array_type(t))
		return DL_TF_KIND_ARRAY;
	return DL_TF_KIND_UNKNOWN;
}

static bool
is_category_op(DlTfOp op)
{
	return op == DL_TF_ONEHOT || op == DL_TF_ORDINAL;
}

static char *
plan_text(Jsonb *jb, size_t *len)
{
	char	   *s = JsonbToCString(NULL, &jb->root, VARSIZE(jb));

	*len = strlen(s);
	return s;
}

static Datum
plan_jsonb(const DlTransform *t)
{
	DlAllocator a = dl_pg_allocator(CurrentMemoryContext);
	DlStrBuf	sb;
	Datum		d;

	dl_strbuf_init(&sb, &a);
	dl_transform_to_json(t, &sb);
	if (sb.failed)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory writing a transform plan")));
	d = DirectFunctionCall1(jsonb_in, CStringGetDatum(sb.data));
	dl_strbuf_free(&sb);
	return d;
}

/* A plan read from jsonb in cxt, fitted or not. */
static DlTransform *
plan_read(Jsonb *jb, MemoryContext cxt)
{
	DlAllocator *a = MemoryContextAlloc(cxt, sizeof(DlAllocator));
	DlTransform *t;
	DlError		err;
	size_t		len;
	char	   *s = plan_text(jb, &len);

	*a = dl_pg_allocator(cxt);
	dl_error_clear(&err);
	dl_pg_check(dl_transform_from_json(s, len, a, &t, &err), &err);
	pfree(s);
	return t;
}

static void
require_args(FunctionCallInfo fcinfo, int n)
{
	for (int i = 0; i < n; i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("argument %d of this transform function must not be NULL", i + 1),
					 errhint("The preprocessors call it with a plan they made.")));
}

/*
 * madlib_dl._transform_parse(spec text) RETURNS jsonb: the plan of a
 * spec, not yet resolved nor fitted.
 */
Datum
madlib_dl__transform_parse(PG_FUNCTION_ARGS)
{
	text	   *spec;
	DlAllocator a = dl_pg_allocator(CurrentMemoryContext);
	DlTransform *t;
	DlError		err;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("transform must not be NULL here"),
				 errhint("Give a comma list such as 'standardize(age), onehot(city)'.")));
	spec = PG_GETARG_TEXT_PP(0);
	if (VARSIZE_ANY_EXHDR(spec) > DL_TF_MAX_SPEC)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("transform of %zu bytes is longer than %d bytes", VARSIZE_ANY_EXHDR(spec), DL_TF_MAX_SPEC),
				 errhint("Build fewer features in one input.")));
	dl_error_clear(&err);
	dl_pg_check(dl_transform_parse(VARDATA_ANY(spec), VARSIZE_ANY_EXHDR(spec), &a, &t, &err), &err);
	PG_RETURN_DATUM(plan_jsonb(t));
}

/*
 * Set item i of t to the kind of its column's type typid, and to width
 * (the first row's) for an array; 42804 for a type the item does not take.
 */
static void
resolve_item(DlTransform *t, int i, Oid typid, int width)
{
	DlTfItem   *it = &t->items[i];
	DlTfKind	kind = kind_of(typid);
	DlError		err;
	char	   *tname = OidIsValid(typid) ? format_type_be(typid) : "unknown";

	if (is_category_op(it->op) && !is_category_type(typid))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("transform %s of column \"%s\" of type %s: categories must be text, integers or booleans",
						dl_transform_op_name(it->op), it->column, tname),
				 errhint("Cast the column to text or integer in a view, or use a numeric transform.")));
	dl_error_clear(&err);
	if (kind == DL_TF_KIND_UNKNOWN)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" has type %s, which a transform does not read", it->column, tname),
				 errhint("Transforms read smallint, integer, bigint, real, double precision, numeric, boolean, "
						 "text, character varying, character, and one-dimensional arrays of the numeric types.")));
	if (dl_transform_check_kind(t, i, kind, tname, &err) != DL_OK)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH), errmsg("%s", err.msg),
				 err.hint[0] ? errhint("%s", err.hint) : 0));
	it->kind = kind;
	if (kind == DL_TF_KIND_ARRAY)
	{
		if (width < 1 || width > DL_TF_MAX_WIDTH)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("array column \"%s\" has %d values in the first row", it->column, width),
					 errhint("Arrays must hold 1 to %d values, the same number in every row.", DL_TF_MAX_WIDTH)));
		it->width = width;
	}
}

/*
 * madlib_dl._transform_resolve(plan jsonb, types regtype[], widths int[])
 * RETURNS jsonb: each item's kind from the type of its column (one per
 * item, as the catalog gives it), arrays with their widths (the training
 * table's first row).  42804 for a type the item does not take.
 */
Datum
madlib_dl__transform_resolve(PG_FUNCTION_ARGS)
{
	DlTransform *t;
	ArrayType  *ta,
			   *wa;
	Datum	   *tv,
			   *wv;
	bool	   *tn,
			   *wn;
	int			nt,
				nw;

	require_args(fcinfo, 3);
	t = plan_read(PG_GETARG_JSONB_P(0), CurrentMemoryContext);
	ta = PG_GETARG_ARRAYTYPE_P(1);
	wa = PG_GETARG_ARRAYTYPE_P(2);
	if (ARR_ELEMTYPE(ta) != REGTYPEOID || ARR_ELEMTYPE(wa) != INT4OID)
		ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH), errmsg("types must be regtype[] and widths integer[]")));
	deconstruct_array(ta, REGTYPEOID, 4, true, TYPALIGN_INT, &tv, &tn, &nt);
	deconstruct_array(wa, INT4OID, 4, true, TYPALIGN_INT, &wv, &wn, &nw);
	if (nt != t->n_items || nw != t->n_items)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the transform has %d items but %d types and %d widths were given", t->n_items, nt, nw)));
	for (int i = 0; i < t->n_items; i++)
		resolve_item(t, i, tn[i] ? InvalidOid : DatumGetObjectId(tv[i]), wn[i] ? 0 : DatumGetInt32(wv[i]));
	PG_RETURN_DATUM(plan_jsonb(t));
}

/* A plan cached for the query in fn_extra, keyed by the plan's bytes. */
typedef struct PlanCache
{
	Jsonb	   *key;			/* a copy of the plan datum */
	DlTransform *t;
	int			width;
	Oid		   *types;			/* _transform_apply: each item's argument type */
	Datum	   *values;
	bool	   *nulls;
} PlanCache;

static PlanCache *
plan_cached(FunctionCallInfo fcinfo, Jsonb *jb, bool fitted)
{
	PlanCache  *pc = (PlanCache *) fcinfo->flinfo->fn_extra;
	MemoryContext cxt = fcinfo->flinfo->fn_mcxt;

	if (pc != NULL && VARSIZE(pc->key) == VARSIZE(jb) && memcmp(pc->key, jb, VARSIZE(jb)) == 0)
		return pc;
	pc = MemoryContextAllocZero(cxt, sizeof(PlanCache));
	if (fitted)
		pc->t = dl_pg_transform_load(jb, cxt, &pc->width);
	else
		pc->t = plan_read(jb, cxt);
	pc->key = MemoryContextAlloc(cxt, VARSIZE(jb));
	memcpy(pc->key, jb, VARSIZE(jb));
	fcinfo->flinfo->fn_extra = pc;
	return pc;
}

/*
 * madlib_dl._transform_stage_value(plan jsonb, item int, stage int,
 * v float8) RETURNS float8: the value item's statistics of stage are
 * computed on (stage 0: after ln; 1: after ln and imputation), NULL for
 * NULL.  The drivers aggregate it.
 */
Datum
madlib_dl__transform_stage_value(PG_FUNCTION_ARGS)
{
	PlanCache  *pc;
	double		out;
	bool		out_null;
	DlError		err;

	require_args(fcinfo, 3);
	pc = plan_cached(fcinfo, PG_GETARG_JSONB_P(0), false);
	dl_error_clear(&err);
	dl_pg_check(dl_transform_stage_value(pc->t, PG_GETARG_INT32(1) - 1, PG_GETARG_INT32(2), PG_ARGISNULL(3),
										 PG_ARGISNULL(3) ? 0 : PG_GETARG_FLOAT8(3), &out, &out_null, &err),
				&err);
	if (out_null)
		PG_RETURN_NULL();
	PG_RETURN_FLOAT8(out);
}

DlTransform *
dl_pg_transform_load(Jsonb *plan, MemoryContext cxt, int *width)
{
	DlTransform *t = plan_read(plan, cxt);
	DlError		err;

	for (int i = 0; i < t->n_items; i++)
	{
		DlTfItem   *it = &t->items[i];

		if (it->kind == DL_TF_KIND_UNKNOWN ||
			((dl_transform_needs_stats(t, i, 0) || dl_transform_needs_stats(t, i, 1) ||
			  is_category_op(it->op)) && !it->fitted))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("stored transform is not valid: item %d (column \"%s\") has no statistics",
							i + 1, it->column),
					 errhint("Give a model or packed table made by madlib_dl, with its summary unchanged.")));
	}
	dl_error_clear(&err);
	dl_pg_check(dl_transform_width(t, width, &err), &err);
	return t;
}

/* madlib_dl._transform_finish(plan jsonb) RETURNS jsonb: the fitted plan, checked. */
Datum
madlib_dl__transform_finish(PG_FUNCTION_ARGS)
{
	int			w;

	require_args(fcinfo, 1);
	PG_RETURN_DATUM(plan_jsonb(dl_pg_transform_load(PG_GETARG_JSONB_P(0), CurrentMemoryContext, &w)));
}

/* madlib_dl._transform_width(plan jsonb) RETURNS int: the features of a fitted plan. */
Datum
madlib_dl__transform_width(PG_FUNCTION_ARGS)
{
	int			w;

	require_args(fcinfo, 1);
	(void) dl_pg_transform_load(PG_GETARG_JSONB_P(0), CurrentMemoryContext, &w);
	PG_RETURN_INT32(w);
}

void
dl_pg_transform_check_arg(const DlTransform *t, int i, Oid typid)
{
	const DlTfItem *it = &t->items[i];
	bool		ok;

	if (is_category_op(it->op))
		ok = is_category_type(typid) && (kind_of(typid) == DL_TF_KIND_TEXT) == (it->kind == DL_TF_KIND_TEXT);
	else
		ok = kind_of(typid) == it->kind;
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" has type %s, but the transform was trained on a %s column",
						it->column, OidIsValid(typid) ? format_type_be(typid) : "unknown",
						it->kind == DL_TF_KIND_TEXT ? "text" :
						it->kind == DL_TF_KIND_ARRAY ? "numeric array" : "numeric or boolean"),
				 errhint("Give a table whose columns have the types of the training table's.")));
}

static double
number_of(Datum d, Oid typid)
{
	switch (typid)
	{
		case INT2OID:
			return (double) DatumGetInt16(d);
		case INT4OID:
			return (double) DatumGetInt32(d);
		case INT8OID:
			return (double) DatumGetInt64(d);
		case FLOAT4OID:
			return (double) DatumGetFloat4(d);
		case FLOAT8OID:
			return DatumGetFloat8(d);
		case NUMERICOID:
			return DatumGetFloat8(DirectFunctionCall1(numeric_float8, d));
		case BOOLOID:
			return DatumGetBool(d) ? 1.0 : 0.0;
		default:
			elog(ERROR, "transform: unexpected type %u", typid);
	}
	return 0;
}

static void
report(const DlError *err)
{
	dl_pg_report(err);
}

/*
 * The exact text of the category value v of type type (not NULL), *len
 * bytes, not NUL-terminated; buf (32 bytes) holds it for an integer.
 */
static const char *
category_text(Datum v, Oid type, char *buf, size_t *len)
{
	const char *s;

	switch (type)
	{
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
			{
				text	   *tx = DatumGetTextPP(v);

				s = VARDATA_ANY(tx);
				*len = VARSIZE_ANY_EXHDR(tx);
				if (type == BPCHAROID)	/* as bpchar::text: no trailing blanks */
					while (*len > 0 && s[*len - 1] == ' ')
						(*len)--;
				return s;
			}
		case BOOLOID:
			s = DatumGetBool(v) ? "true" : "false";
			*len = strlen(s);
			return s;
		case INT2OID:
		case INT4OID:
		case INT8OID:
			snprintf(buf, 32, INT64_FORMAT,
					 type == INT2OID ? (int64) DatumGetInt16(v) :
					 type == INT4OID ? (int64) DatumGetInt32(v) :
					 DatumGetInt64(v));
			*len = strlen(buf);
			return buf;
		default:
			elog(ERROR, "transform: unexpected category type %u", type);
	}
	return NULL;
}

/*
 * The *n values of the array v of item it (NULL when isnull: an ERROR)
 * as doubles, palloc'd; ERROR for a NULL element, and via err for a
 * length other than the training rows'.
 */
static double *
array_numbers(const DlTfItem *it, Datum v, bool isnull, int *n, DlError *err)
{
	ArrayType  *arr;
	Oid			elem;
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	Datum	   *ev;
	bool	   *en;
	double	   *dv;

	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("array column \"%s\" is NULL in a row", it->column),
				 errhint("Filter or fix the rows with a NULL array.")));
	arr = DatumGetArrayTypeP(v);
	elem = ARR_ELEMTYPE(arr);
	get_typlenbyvalalign(elem, &elmlen, &elmbyval, &elmalign);
	deconstruct_array(arr, elem, elmlen, elmbyval, elmalign, &ev, &en, n);
	if (*n != it->width)
	{
		dl_error_set(err, DL_ERR_SHAPE, "array column \"%s\" has %d values, the training rows %d",
					 it->column, *n, it->width);
		dl_error_hint(err, "Every row must have an array of the training length.");
		report(err);
	}
	dv = palloc(sizeof(double) * (size_t) (*n > 0 ? *n : 1));
	for (int k = 0; k < *n; k++)
	{
		if (en[k])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("array column \"%s\" holds a NULL element", it->column),
					 errhint("Filter or fix the rows with NULL elements.")));
		dv[k] = number_of(ev[k], elem);
	}
	pfree(ev);
	pfree(en);
	return dv;
}

void
dl_pg_transform_row(const DlTransform *t, const Datum *values, const bool *nulls, const Oid *types,
					float *out)
{
	DlError		err;

	dl_error_clear(&err);
	for (int i = 0; i < t->n_items; i++)
	{
		const DlTfItem *it = &t->items[i];
		float	   *o = out + dl_transform_offset(t, i);
		DlStatus	st;

		CHECK_FOR_INTERRUPTS();
		if (is_category_op(it->op))
		{
			char		buf[32];
			size_t		len = 0;
			const char *s = nulls[i] ? NULL : category_text(values[i], types[i], buf, &len);

			st = dl_transform_apply_category(t, i, s, len, o, &err);
		}
		else if (it->kind == DL_TF_KIND_ARRAY)
		{
			int			n;
			double	   *dv = array_numbers(it, values[i], nulls[i], &n, &err);

			st = dl_transform_apply_array(t, i, dv, (size_t) n, o, &err);
			pfree(dv);
		}
		else
			st = dl_transform_apply_number(t, i, nulls[i], nulls[i] ? 0 : number_of(values[i], types[i]), o, &err);
		if (st != DL_OK)
			report(&err);
	}
}

/* The real[] of the features t builds from a row's values (width of them). */
static ArrayType *
features_array(const DlTransform *t, int width, const Datum *values, const bool *nulls, const Oid *types)
{
	float	   *feats = palloc(sizeof(float) * (size_t) width);
	Datum	   *elems;

	dl_pg_transform_row(t, values, nulls, types, feats);
	elems = palloc(sizeof(Datum) * (size_t) width);
	for (int k = 0; k < width; k++)
		elems[k] = Float4GetDatum(feats[k]);
	return construct_array(elems, width, FLOAT4OID, 4, true, TYPALIGN_INT);
}

/*
 * madlib_dl._transform_apply(plan jsonb, VARIADIC "any") RETURNS real[]:
 * the feature array of one raw row; the arguments after the plan are the
 * row's values of the plan's items, in order (its columns, as the
 * drivers name them from the catalog).
 */
Datum
madlib_dl__transform_apply(PG_FUNCTION_ARGS)
{
	PlanCache  *pc;
	int			nargs = PG_NARGS() - 1;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("transform plan must not be NULL"),
				 errhint("Give the transform column of a packed table's or a model's summary.")));
	if (get_fn_expr_variadic(fcinfo->flinfo))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("_transform_apply takes the row's values as separate arguments, not a VARIADIC array")));
	pc = plan_cached(fcinfo, PG_GETARG_JSONB_P(0), true);
	if (nargs != pc->t->n_items)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the transform has %d items but %d values were given", pc->t->n_items, nargs),
				 errhint("Give one value per item of the transform, in order.")));
	if (pc->types == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);

		pc->types = palloc(sizeof(Oid) * (size_t) (nargs + 1));
		pc->values = palloc(sizeof(Datum) * (size_t) (nargs + 1));
		pc->nulls = palloc(sizeof(bool) * (size_t) (nargs + 1));
		MemoryContextSwitchTo(old);
		for (int i = 0; i < nargs; i++)
		{
			pc->types[i] = get_fn_expr_argtype(fcinfo->flinfo, i + 1);
			dl_pg_transform_check_arg(pc->t, i, pc->types[i]);
		}
	}
	for (int i = 0; i < nargs; i++)
	{
		pc->nulls[i] = PG_ARGISNULL(i + 1);
		pc->values[i] = pc->nulls[i] ? (Datum) 0 : PG_GETARG_DATUM(i + 1);
	}
	PG_RETURN_ARRAYTYPE_P(features_array(pc->t, pc->width, pc->values, pc->nulls, pc->types));
}

/* transform_features' cache: the model's plan and the row type's columns. */
typedef struct ModelPlanCache
{
	text	   *model;			/* the model_table argument */
	DlTransform *t;
	int			width;
	Oid			row_type;		/* the record's type and typmod, resolved for */
	int32		row_typmod;
	int		   *attnums;		/* each item's attribute (1-based) */
	Oid		   *types;
	Datum	   *values;
	bool	   *nulls;
} ModelPlanCache;

/* The plan in the summary of model table name (SPI), in cxt; ERROR when none. */
static Jsonb *
model_plan(text *name, MemoryContext cxt)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1] = {PointerGetDatum(name)};
	bool		isnull;
	Datum		d;
	Jsonb	   *plan = NULL;
	int			rc;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "transform_features: SPI_connect failed");
	rc = SPI_execute_with_args("SELECT madlib_dl._tf_of_summary(madlib_dl._table_with_suffix("
							   "madlib_dl._resolve_table($1, 'model_table'), '_summary'))",
							   1, argtypes, args, NULL, true, 1);
	if (rc != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "transform_features: reading the model summary failed");
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (!isnull)
	{
		Jsonb	   *jb = DatumGetJsonbP(d);

		plan = MemoryContextAlloc(cxt, VARSIZE(jb));
		memcpy(plan, jb, VARSIZE(jb));
	}
	SPI_finish();
	if (plan == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model \"%s\" was not trained with a transform", text_to_cstring(name)),
				 errhint("Pack the training table with training_preprocessor_dl(..., transform => '...'), "
						 "then fit; or give the feature array itself.")));
	return plan;
}

/* ERROR unless both arguments of transform_features are given. */
static void
features_check_args(FunctionCallInfo fcinfo)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("model_table must not be NULL"),
				 errhint("Give the model table that fit wrote.")));
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("the raw row must not be NULL"),
				 errhint("Give a row of the table, e.g. transform_features('m', t) FROM raw_table t.")));
}

/* The call site's cache for model: kept when it is the model of the last call, else loaded anew. */
static ModelPlanCache *
model_plan_cached(FunctionCallInfo fcinfo, text *model)
{
	ModelPlanCache *pc = (ModelPlanCache *) fcinfo->flinfo->fn_extra;
	MemoryContext cxt = fcinfo->flinfo->fn_mcxt;
	Jsonb	   *plan;

	if (pc != NULL && VARSIZE_ANY_EXHDR(pc->model) == VARSIZE_ANY_EXHDR(model) &&
		memcmp(VARDATA_ANY(pc->model), VARDATA_ANY(model), VARSIZE_ANY_EXHDR(model)) == 0)
		return pc;
	plan = model_plan(model, cxt);
	pc = MemoryContextAllocZero(cxt, sizeof(ModelPlanCache));
	pc->model = MemoryContextAlloc(cxt, VARSIZE_ANY(model));
	memcpy(pc->model, model, VARSIZE_ANY(model));
	pc->t = dl_pg_transform_load(plan, cxt, &pc->width);
	pc->attnums = MemoryContextAllocZero(cxt, sizeof(int) * (size_t) pc->t->n_items);
	pc->types = MemoryContextAllocZero(cxt, sizeof(Oid) * (size_t) pc->t->n_items);
	pc->values = MemoryContextAllocZero(cxt, sizeof(Datum) * (size_t) pc->t->n_items);
	pc->nulls = MemoryContextAllocZero(cxt, sizeof(bool) * (size_t) pc->t->n_items);
	pc->row_type = InvalidOid;
	fcinfo->flinfo->fn_extra = pc;
	return pc;
}

/*
 * The attribute (1-based) of the row type desc named col; 42703 (after
 * releasing desc) when there is none.
 */
static int
row_attnum(TupleDesc desc, const char *col)
{
	for (int a = 0; a < desc->natts; a++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, a);

		if (!att->attisdropped && strcmp(NameStr(att->attname), col) == 0)
			return a + 1;
	}
	ReleaseTupleDesc(desc);
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_COLUMN),
			 errmsg("column \"%s\" of the transform is not in the row", col),
			 errhint("Give a row with the columns of the training table (by name).")));
	return 0;
}

/* Each item's attribute and type in the row type desc, checked, unless pc has them for this type. */
static void
model_plan_columns(ModelPlanCache *pc, TupleDesc desc, Oid row_type, int32 row_typmod)
{
	if (pc->row_type == row_type && pc->row_typmod == row_typmod && row_type != RECORDOID)
		return;
	for (int i = 0; i < pc->t->n_items; i++)
	{
		int			found = row_attnum(desc, pc->t->items[i].column);

		pc->attnums[i] = found;
		pc->types[i] = TupleDescAttr(desc, found - 1)->atttypid;
		dl_pg_transform_check_arg(pc->t, i, pc->types[i]);
	}
	pc->row_type = row_type;
	pc->row_typmod = row_typmod;
}

/*
 * madlib_dl.transform_features(model_table text, raw record) RETURNS
 * real[]: the features the transform of a model (its summary's plan)
 * builds from one raw row, e.g. transform_features('census_model', t)
 * for a row t of a table with the training columns (by name; other
 * columns are not read).  The input of predict_row for raw rows.
 */
Datum
madlib_dl_transform_features(PG_FUNCTION_ARGS)
{
	ModelPlanCache *pc;
	text	   *model;
	HeapTupleHeader th;
	HeapTupleData tuple;
	Oid			row_type;
	int32		row_typmod;
	TupleDesc	desc;

	features_check_args(fcinfo);
	model = PG_GETARG_TEXT_PP(0);
	th = PG_GETARG_HEAPTUPLEHEADER(1);
	row_type = HeapTupleHeaderGetTypeId(th);
	row_typmod = HeapTupleHeaderGetTypMod(th);
	pc = model_plan_cached(fcinfo, model);
	desc = lookup_rowtype_tupdesc(row_type, row_typmod);
	model_plan_columns(pc, desc, row_type, row_typmod);
	tuple.t_len = HeapTupleHeaderGetDatumLength(th);
	ItemPointerSetInvalid(&(tuple.t_self));
	tuple.t_tableOid = InvalidOid;
	tuple.t_data = th;
	for (int i = 0; i < pc->t->n_items; i++)
		pc->values[i] = heap_getattr(&tuple, pc->attnums[i], desc, &pc->nulls[i]);
	ReleaseTupleDesc(desc);
	PG_RETURN_ARRAYTYPE_P(features_array(pc->t, pc->width, pc->values, pc->nulls, pc->types));
}
