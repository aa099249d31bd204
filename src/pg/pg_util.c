/*-------------------------------------------------------------------------
 *
 * pg_util.c
 *	  Small helpers shared by the SQL-callable C functions (fit.c,
 *	  fit_multiple.c, evaluate.c, predict.c, gp_agg.c), and the
 *	  materialized-SRF shim of pg_compat.h for servers before PostgreSQL 15.
 *
 * IDENTIFICATION
 *	  src/pg/pg_util.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_util.h"

#include "catalog/pg_class.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"


char *
dl_pg_text_arg(FunctionCallInfo fcinfo, int i)
{
	return PG_ARGISNULL(i) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(i));
}

ArrayType *
dl_pg_float8_array(const double *v, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
		d[i] = Float8GetDatum(v[i]);
	return construct_array(d, n, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
}

ArrayType *
dl_pg_int4_array(const int32 *v, const bool *nulls, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	int			dims[1] = {n};
	int			lbs[1] = {1};

	for (int i = 0; i < n; i++)
		d[i] = Int32GetDatum(v[i]);
	return construct_md_array(d, (bool *) nulls, 1, dims, lbs, INT4OID, sizeof(int32), true,
							  TYPALIGN_INT);
}

double
dl_pg_ratio(double sum, int64 n)
{
	return n > 0 ? sum / (double) n : get_float8_nan();
}

double
dl_pg_seconds_since(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_DOUBLE(now);
}

char *
dl_pg_relation_sql_name(Oid relid)
{
	char	   *rel = get_rel_name(relid);
	char	   *nsp = get_namespace_name(get_rel_namespace(relid));

	if (rel == NULL || nsp == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	return quote_qualified_identifier(nsp, rel);
}

Portal
dl_pg_spi_open_cursor(const char *query)
{
	SPIPlanPtr	plan;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = SPI_prepare(query, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", query,
			 SPI_result_code_string(SPI_result));
	return SPI_cursor_open(NULL, plan, NULL, NULL, true);
}

bool
dl_pg_spi_select_text(const char *sql, const char *arg, long limit)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(arg)};

	return SPI_execute_with_args(sql, 1, argtypes, args, NULL, true, limit) == SPI_OK_SELECT;
}

#if PG_VERSION_NUM < 150000
void
dl_init_materialized_srf(FunctionCallInfo fcinfo, bits32 flags)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext old;
	TupleDesc	desc;

	if (flags != 0)
		elog(ERROR, "madlib_dl: dl_init_materialized_srf takes no flags");
	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set"),
				 errhint("Call the function in the FROM clause.")));
	if (!(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("materialize mode required, but it is not allowed in this context"),
				 errhint("Call the function in the FROM clause.")));
	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "madlib_dl: return type must be a row type");
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = tuplestore_begin_heap((rsinfo->allowedModes & SFRM_Materialize_Random) != 0,
											  false, work_mem);
	rsinfo->setDesc = desc;
	MemoryContextSwitchTo(old);
}
#endif

void
dl_pg_old_sql_error(FunctionCallInfo fcinfo, const char *version)
{
	Oid			fn = fcinfo->flinfo != NULL ? fcinfo->flinfo->fn_oid : InvalidOid;
	char	   *name = OidIsValid(fn) ? get_func_name(fn) : NULL;

	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("function madlib_dl.%s was created by madlib_dl %s, whose SQL this library no longer serves",
					name != NULL ? name : "?", version),
			 errdetail("The madlib_dl library was upgraded and the extension's SQL objects were not."),
			 errhint("Run ALTER EXTENSION madlib_dl UPDATE.")));
}

Oid
dl_pg_declared_argtype(FunctionCallInfo fcinfo, int i)
{
	HeapTuple	tup;
	Form_pg_proc proc;
	Oid			type = InvalidOid;

	if (fcinfo->flinfo == NULL || !OidIsValid(fcinfo->flinfo->fn_oid) || i < 0)
		return InvalidOid;
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fcinfo->flinfo->fn_oid));
	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	proc = (Form_pg_proc) GETSTRUCT(tup);
	if (i < proc->pronargs)
		type = proc->proargtypes.values[i];
	ReleaseSysCache(tup);
	return type;
}


/* Append "[a,b,c]" of n dims to buf. */
static void
append_dims(StringInfo buf, const int *dims, int n)
{
	appendStringInfoChar(buf, '[');
	for (int i = 0; i < n; i++)
		appendStringInfo(buf, "%s%d", i > 0 ? "," : "", dims[i]);
	appendStringInfoChar(buf, ']');
}

bool
dl_pg_array_shape_differs(ArrayType *arr, const int64 *dims, int rank,
						  StringInfo have, StringInfo want)
{
	bool		same = ARR_NDIM(arr) == rank;
	int			want_dims[MAXDIM] = {0};

	for (int i = 0; same && i < rank; i++)
		same = ARR_DIMS(arr)[i] == dims[i];
	if (same)
		return false;
	for (int i = 0; i < rank && i < MAXDIM; i++)
		want_dims[i] = (int) dims[i];
	initStringInfo(have);
	initStringInfo(want);
	append_dims(have, ARR_DIMS(arr), ARR_NDIM(arr));
	append_dims(want, want_dims, rank);
	return true;
}

int64
dl_pg_array_first_null(ArrayType *arr, int64 n)
{
	bits8	   *bitmap = ARR_NULLBITMAP(arr);

	if (ARR_HASNULL(arr))
		for (int64 j = 0; j < n; j++)
			if (!(bitmap[j / 8] & (1 << (j % 8))))
				return j;
	return -1;
}
