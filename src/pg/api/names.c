/*-------------------------------------------------------------------------
 *
 * names.c
 *	  Resolve a user-given table name to (schema, table), safely.
 *
 * The PL/pgSQL drivers run with search_path pinned to pg_catalog, pg_temp,
 * so they cannot resolve an unqualified name the way the user expects.
 * Each public entry point is therefore a thin LANGUAGE sql wrapper that
 * calls _resolve_table() in the caller's own search_path and hands the
 * result, two plain identifiers, to the pinned driver, which only ever
 * builds SQL with format('%I.%I', ...).  The user's text never becomes SQL.
 *
 * Accepted syntax (as in SQL): name or schema.name, each part either an
 * unquoted identifier (letters, digits, _ and $, not starting with a
 * digit or $; folded to lower case) or a double-quoted one ("" for a
 * quote); blanks around parts and dots are allowed.  Anything else
 * (semicolons, a third part, empty names) is refused with 42602.
 *
 * The schema pg_temp is SQL's alias of the session's temporary schema: it
 * is resolved to that schema's real name (pg_temp_N, created on first
 * use as CREATE TEMPORARY TABLE would), so that every later check sees a
 * schema that exists.
 *
 * _resolve_table also returns the name as the user gave it, only to be
 * recorded in summary tables as MADlib records it; it is never looked up
 * again and never becomes SQL.
 *
 * IDENTIFICATION
 *	  src/pg/api/names.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "nodes/makefuncs.h"
#include "parser/scansup.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#define NAME_HINT "Give a table name or schema.table; write names with other characters " \
	"in double quotes, e.g. '\"My Table\"'."

static bool
ident_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || IS_HIGHBIT_SET(c);
}

static bool
ident_cont(unsigned char c)
{
	return ident_start(c) || (c >= '0' && c <= '9') || c == '$';
}

static void
invalid_name(const char *param, const char *raw)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_NAME),
			 errmsg("%s \"%s\" is not a valid table name", param, raw),
			 errhint(NAME_HINT)));
}

/* What split_parts found wrong with a name. */
typedef enum NameProblem
{
	NAME_OK,
	NAME_INVALID,				/* bad syntax, empty part, unterminated quote */
	NAME_TOO_MANY_PARTS			/* a third dotted part */
} NameProblem;

/*
 * Split raw into at most two identifiers, stored in parts[0..*nparts-1]
 * (palloc'd, dequoted, folded and truncated to NAMEDATALEN-1 as the SQL
 * parser does).  Raises nothing: returns what is wrong.
 */
static NameProblem
split_parts(const char *raw, char *parts[2], int *nparts)
{
	const unsigned char *p = (const unsigned char *) raw;

	*nparts = 0;
	for (;;)
	{
		char	   *ident;

		while (scanner_isspace(*p))
			p++;
		if (*p == '"')
		{
			StringInfoData buf;

			initStringInfo(&buf);
			p++;
			for (;;)
			{
				if (*p == '\0')
					return NAME_INVALID;	/* unterminated quote */
				if (*p == '"')
				{
					if (p[1] != '"')
						break;
					p++;
				}
				appendStringInfoChar(&buf, (char) *p);
				p++;
			}
			p++;
			if (buf.len == 0)
				return NAME_INVALID;	/* "" */
			truncate_identifier(buf.data, buf.len, false);
			ident = buf.data;
		}
		else if (ident_start(*p))
		{
			const unsigned char *start = p;

			while (ident_cont(*p))
				p++;
			ident = downcase_truncate_identifier((const char *) start, (int) (p - start), false);
		}
		else
			return NAME_INVALID;

		if (*nparts == 2)
			return NAME_TOO_MANY_PARTS;
		parts[(*nparts)++] = ident;

		while (scanner_isspace(*p))
			p++;
		if (*p == '\0')
			return NAME_OK;
		if (*p != '.')
			return NAME_INVALID;
		p++;
	}
}

/* split_parts, raising 42602 for a bad name; param names the argument. */
static void
split_name(const char *raw, const char *param, char *parts[2], int *nparts)
{
	switch (split_parts(raw, parts, nparts))
	{
		case NAME_OK:
			return;
		case NAME_INVALID:
			invalid_name(param, raw);
			break;
		case NAME_TOO_MANY_PARTS:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_NAME),
					 errmsg("%s \"%s\" has more than two dotted parts", param, raw),
					 errhint("Give a table name or schema.table; other databases cannot be named.")));
			break;
	}
}

/* {a, b} or, when c is not NULL, {a, b, c}, as text[]. */
static Datum
text_array(const char *a, const char *b, const char *c)
{
	Datum		elems[3];

	elems[0] = CStringGetTextDatum(a);
	elems[1] = CStringGetTextDatum(b);
	if (c != NULL)
		elems[2] = CStringGetTextDatum(c);
	return PointerGetDatum(construct_array(elems, c != NULL ? 3 : 2, TEXTOID, -1, false,
										   TYPALIGN_INT));
}

/* Is schema the pg_temp alias (as the parser folds and compares it)? */
static bool
is_temp_alias(const char *schema)
{
	return strcmp(schema, "pg_temp") == 0;
}

/*
 * _resolve_table(name text, param text) RETURNS text[]
 *
 * {schema, table, given} for the user-given name, resolved in the
 * CALLER's search_path: call it only from an unpinned (LANGUAGE sql)
 * wrapper.  given is name itself, for summary tables only.
 *	 - schema.table: returned as given (the schema need not exist yet),
 *	   except pg_temp: the session's temporary schema, created if need be;
 *	 - table that exists in the search_path: the schema it was found in;
 *	 - table that does not exist: the schema CREATE TABLE would use
 *	   (3F000 if the search_path names no existing schema).
 * param ('keras_model_arch_table', 'output_table', ...) names the argument
 * in messages.  NULL name: 22004.  Bad syntax or more than two parts: 42602.
 * No lock is taken and no privilege is checked: the caller's later
 * statements do both.
 */
PG_FUNCTION_INFO_V1(madlib_dl__resolve_table);
Datum
madlib_dl__resolve_table(PG_FUNCTION_ARGS)
{
	const char *param = PG_ARGISNULL(1) ? "table" : text_to_cstring(PG_GETARG_TEXT_PP(1));
	char	   *raw;
	char	   *parts[2];
	int			nparts;
	RangeVar   *rv;
	Oid			relid;
	Oid			nspid;
	char	   *nspname;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", param),
				 errhint("Give a table name or schema.table.")));
	raw = text_to_cstring(PG_GETARG_TEXT_PP(0));
	split_name(raw, param, parts, &nparts);
	if (nparts == 2 && is_temp_alias(parts[0]))
	{
		/* 42501 without the TEMP privilege, as CREATE TEMPORARY TABLE */
		nspname = get_namespace_name(LookupCreationNamespace(parts[0]));
		if (nspname == NULL)
			elog(ERROR, "madlib_dl: the temporary schema has no name");
		PG_RETURN_DATUM(text_array(nspname, parts[1], raw));
	}
	if (nparts == 2)
		PG_RETURN_DATUM(text_array(parts[0], parts[1], raw));

	rv = makeRangeVar(NULL, parts[0], -1);
	relid = RangeVarGetRelid(rv, NoLock, true);
	if (OidIsValid(relid))
		nspid = get_rel_namespace(relid);
	else
		nspid = RangeVarGetCreationNamespace(rv);
	nspname = get_namespace_name(nspid);
	if (nspname == NULL)
		elog(ERROR, "cache lookup failed for namespace %u", nspid);
	PG_RETURN_DATUM(text_array(nspname, parts[0], raw));
}

PG_FUNCTION_INFO_V1(madlib_dl__table_name_parts);

/*
 * _table_name_parts(name text) RETURNS text[]
 *
 * The parts of a table name as SQL reads them, WITHOUT resolving it:
 * {table} or {schema, table}, dequoted and folded; the pg_temp alias
 * becomes the name of the session's temporary schema when it has one.
 * NULL when name is NULL or not a valid name (no error): for comparing a
 * name recorded in a summary table with a table already resolved.
 */
Datum
madlib_dl__table_name_parts(PG_FUNCTION_ARGS)
{
	char	   *parts[2];
	int			nparts;

	if (PG_ARGISNULL(0) ||
		split_parts(text_to_cstring(PG_GETARG_TEXT_PP(0)), parts, &nparts) != NAME_OK)
		PG_RETURN_NULL();
	if (nparts == 1)
	{
		Datum		table = CStringGetTextDatum(parts[0]);

		PG_RETURN_DATUM(PointerGetDatum(construct_array(&table, 1, TEXTOID, -1, false, TYPALIGN_INT)));
	}
	if (is_temp_alias(parts[0]))
	{
		Oid			nsp = LookupExplicitNamespace(parts[0], true);
		char	   *name = OidIsValid(nsp) ? get_namespace_name(nsp) : NULL;

		if (name != NULL)
			parts[0] = name;
	}
	PG_RETURN_DATUM(text_array(parts[0], parts[1], NULL));
}
