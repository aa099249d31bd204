/*-------------------------------------------------------------------------
 *
 * registry.c
 *	  The only writers of the model registry (madlib_dl.model_versions,
 *	  madlib_dl.model_deployments; src/sql/serving.sql).
 *
 *	  _registry_record(name, model_table regclass, mst_keys int[],
 *	                   function text, source_table text,
 *	                   metrics jsonb[], params jsonb[]) RETURNS void
 *	  _registry_deploy(name, version_id bigint, strategy text) RETURNS void
 *
 * Nobody but the extension's owner holds a write privilege on the
 * registry: these functions check who calls them, then write as the
 * registry's owner.  A version may be recorded only by a role with the
 * privileges of the model table's owner, under a name that is new or
 * whose first version's owner the caller has the privileges of; a name
 * may be deployed only by such a role, and only a version of that name.
 * (A SECURITY DEFINER function cannot see who called it: hence C.)
 *
 * IDENTIFICATION
 *	  src/pg/api/registry.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "pg_util.h"

/* The owner of table madlib_dl.<name> (the registry), ERROR when it is missing. */
static Oid
registry_owner(const char *name)
{
	Oid			nsp = get_namespace_oid("madlib_dl", false);
	Oid			rel = get_relname_relid(name, nsp);
	HeapTuple	tup;
	Oid			owner;

	if (!OidIsValid(rel))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the model registry madlib_dl.%s does not exist", name),
				 errhint("Update the extension: ALTER EXTENSION madlib_dl UPDATE.")));
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(rel));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", rel);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/*
 * ERROR 42501 unless the caller has the privileges of the owner of name's
 * versions (when it has any).  Inside SPI.
 */
static void
check_name_owner(const char *name)
{
	bool		isnull;
	Oid			owner;

	/* a NULL oid when the owner's role is gone (or renamed): refused */
	if (!dl_pg_spi_select_text("SELECT (SELECT o.oid FROM pg_catalog.pg_roles o"
							   "         WHERE o.rolname OPERATOR(pg_catalog.=) v.owner)"
							   "  FROM madlib_dl.model_versions v"
							   " WHERE v.name OPERATOR(pg_catalog.=) $1 ORDER BY v.version LIMIT 1",
							   name, 1))
		elog(ERROR, "madlib_dl: could not read the model registry");
	if (SPI_processed == 0)
		return;
	owner = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (isnull || !has_privs_of_role(GetUserId(), owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("model name \"%s\" belongs to another role", name),
				 errdetail("Its versions are owned by role %s.",
						   isnull ? "(dropped)" : GetUserNameFromId(owner, true)),
				 errhint("Record your models under another name: SET madlib_dl.model_name = 'my_name'.")));
}

/* Run sql (a write) as the registry's owner, restricted; ERROR unless it succeeds. */
static void
write_as_owner(Oid owner, const char *sql, int nargs, Oid *types, Datum *values, const char *nulls, int expect)
{
	Oid			save_user;
	int			save_sec;
	int			rc;

	GetUserIdAndSecContext(&save_user, &save_sec);
	SetUserIdAndSecContext(owner, save_sec | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	rc = SPI_execute_with_args(sql, nargs, types, values, nulls, false, 0);
	SetUserIdAndSecContext(save_user, save_sec);
	if (rc != expect)
		elog(ERROR, "madlib_dl: registry write failed: %s", SPI_result_code_string(rc));
}

/* The model name of a _registry_record call, its arguments checked for NULLs first. */
static char *
record_name_arg(FunctionCallInfo fcinfo)
{
	char	   *name;

	for (int i = 0; i < 4; i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("argument %d of _registry_record must not be NULL", i + 1),
					 errhint("fit, fit_multiple and madlib_keras_automl record their versions themselves.")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (name[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a model name must not be empty"),
				 errhint("SET madlib_dl.model_name to a name, or leave it empty for schema.table of the model table.")));
	return name;
}

/* ERROR unless rel exists and the caller has the privileges of its owner. */
static void
record_check_table(Oid rel)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(rel));
	Oid			relowner;

	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", rel),
				 errhint("Give the model table the run wrote.")));
	relowner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	if (!has_privs_of_role(GetUserId(), relowner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of table %s to record its models", get_rel_name(rel)),
				 errhint("Versions are recorded by the runs that write the model tables.")));
}

/* As the registry's owner, number and insert the versions the call gives (inside SPI). */
static void
record_insert(FunctionCallInfo fcinfo, Oid owner, Oid rel)
{
	Oid			types[8] = {TEXTOID, OIDOID, INT4ARRAYOID, TEXTOID, TEXTOID, JSONBARRAYOID, JSONBARRAYOID, TEXTOID};
	Datum		values[8];
	char		nulls[8];

	for (int i = 0; i < 7; i++)
	{
		nulls[i] = PG_ARGISNULL(i) ? 'n' : ' ';
		values[i] = PG_ARGISNULL(i) ? (Datum) 0 : PG_GETARG_DATUM(i);
	}
	values[1] = ObjectIdGetDatum(rel);
	values[7] = CStringGetTextDatum(GetUserNameFromId(GetUserId(), false));
	nulls[7] = ' ';
	/* one writer at a time numbers the versions of a name */
	write_as_owner(owner, "LOCK TABLE madlib_dl.model_versions IN SHARE ROW EXCLUSIVE MODE", 0, NULL, NULL,
				   NULL, SPI_OK_UTILITY);
	write_as_owner(owner,
				   "INSERT INTO madlib_dl.model_versions (name, version, run_id, model_table, model_relid,"
				   "       mst_key, owner, trained_by, function, source_table, metrics, params)"
				   " SELECT $1, coalesce((SELECT pg_catalog.max(v.version) FROM madlib_dl.model_versions v"
				   "                       WHERE v.name OPERATOR(pg_catalog.=) $1), 0)"
				   "        OPERATOR(pg_catalog.+) k.o::integer,"
				   "        (SELECT coalesce(pg_catalog.max(v.run_id), 0) OPERATOR(pg_catalog.+) 1"
				   "           FROM madlib_dl.model_versions v),"
				   "        pg_catalog.format('%I.%I', n.nspname, c.relname), $2, k.key,"
				   "        pg_catalog.pg_get_userbyid(c.relowner), $8, $4, $5,"
				   "        ($6)[k.o], ($7)[k.o]"
				   "   FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace,"
				   "        unnest($3) WITH ORDINALITY AS k(key, o)"
				   "  WHERE c.oid OPERATOR(pg_catalog.=) $2",
				   8, types, values, nulls, SPI_OK_INSERT);
}

PG_FUNCTION_INFO_V1(madlib_dl__registry_record);

Datum
madlib_dl__registry_record(PG_FUNCTION_ARGS)
{
	char	   *name = record_name_arg(fcinfo);
	Oid			rel = PG_GETARG_OID(1);
	Oid			owner;

	record_check_table(rel);
	owner = registry_owner("model_versions");
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "madlib_dl: SPI_connect failed");
	check_name_owner(name);
	record_insert(fcinfo, owner, rel);
	SPI_finish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(madlib_dl__registry_deploy);

Datum
madlib_dl__registry_deploy(PG_FUNCTION_ARGS)
{
	char	   *name;
	Oid			owner;
	Oid			types[4] = {TEXTOID, INT8OID, TEXTOID, TEXTOID};
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("name and version_id of _registry_deploy must not be NULL"),
				 errhint("Call madlib_dl.deploy(name, version).")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	owner = registry_owner("model_deployments");
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "madlib_dl: SPI_connect failed");
	values[0] = PG_GETARG_DATUM(0);
	values[1] = PG_GETARG_DATUM(1);
	values[2] = PG_ARGISNULL(2) ? (Datum) 0 : PG_GETARG_DATUM(2);
	nulls[2] = PG_ARGISNULL(2) ? 'n' : ' ';
	values[3] = CStringGetTextDatum(GetUserNameFromId(GetUserId(), false));
	/* the owner first: another role's name is refused whatever version is asked */
	check_name_owner(name);
	if (SPI_execute_with_args("SELECT 1 FROM madlib_dl.model_versions v"
							  " WHERE v.name OPERATOR(pg_catalog.=) $1 AND v.version_id OPERATOR(pg_catalog.=) $2",
							  2, types, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "madlib_dl: could not read the model registry");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("model \"%s\" has no version with version_id " INT64_FORMAT, name, PG_GETARG_INT64(1)),
				 errhint("SELECT * FROM madlib_dl.model_versions WHERE name = '%s' lists its versions.", name)));
	write_as_owner(owner,
				   "INSERT INTO madlib_dl.model_deployments (name, version_id, strategy, deployed_by)"
				   " VALUES ($1, $2, $3, $4)",
				   4, types, values, nulls, SPI_OK_INSERT);
	SPI_finish();
	PG_RETURN_VOID();
}
