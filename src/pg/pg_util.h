/*-------------------------------------------------------------------------
 *
 * pg_util.h
 *	  Small helpers shared by the SQL-callable C functions: argument and
 *	  array conversion, timing, relation names and SPI cursors.
 *
 * IDENTIFICATION
 *	  src/pg/pg_util.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_UTIL_H
#define PG_UTIL_H

#include "postgres.h"

#include "fmgr.h"
#include "portability/instr_time.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/portal.h"

#include "pg_compat.h"

/* Text argument i as a palloc'd C string, or NULL for SQL NULL. */
char	   *dl_pg_text_arg(FunctionCallInfo fcinfo, int i);

/*
 * ERROR 55000 for a call from SQL that an older release's install script
 * created (version: its version), whose arguments this library does not
 * read: "function madlib_dl.<name> was created by madlib_dl <version>",
 * hint ALTER EXTENSION madlib_dl UPDATE.  docs/releasing.md.
 */
void		dl_pg_old_sql_error(FunctionCallInfo fcinfo, const char *version) pg_attribute_noreturn();

/*
 * The type of argument i as the calling SQL function declares it in
 * pg_proc (InvalidOid when it has no argument i, or is not called through
 * the function manager): how a C function tells an older release's
 * signature from its own, as its arguments must not be read before.
 */
Oid			dl_pg_declared_argtype(FunctionCallInfo fcinfo, int i);

/* A 1-D float8[] of the n values v (n >= 0), palloc'd.  v (n) */
ArrayType  *dl_pg_float8_array(const double *v, int n);

/*
 * A 1-D int4[] of the n values v (n >= 0), palloc'd; element i is NULL
 * where nulls[i] (nulls may be NULL: no NULL elements).  v (n)  nulls (n)
 */
ArrayType  *dl_pg_int4_array(const int32 *v, const bool *nulls, int n);

/* sum / n, or NaN when n <= 0. */
double		dl_pg_ratio(double sum, int64 n);

/* Seconds elapsed since start (set with INSTR_TIME_SET_CURRENT). */
double		dl_pg_seconds_since(instr_time start);

/*
 * The quoted, schema-qualified SQL name of relation relid, palloc'd.
 * ERROR 42P01 when it does not exist.
 */
char	   *dl_pg_relation_sql_name(Oid relid);

/* One column a function reads from a table its caller named. */
typedef struct DlPgColumn
{
	const char *name;			/* column name, unquoted */
	Oid			type;			/* its exact type (a domain over it is refused) */
} DlPgColumn;

/*
 * Check, from the catalog and before any query reads it, that relid is an
 * ordinary or partitioned table on which the caller may read each of the
 * n columns cols[i], and that each has exactly the type cols[i].type.
 * Takes AccessShareLock on relid (after the privilege check), so the
 * types cannot change before the transaction ends.  Then a query may
 * read the values as those types: no value of another type is ever taken
 * for a bytea or an array, and no user-defined cast, operator or domain
 * check runs.  what says what the table should be, e.g. "a table made by
 * training_preprocessor_dl", for the hint.
 * ERROR 42P01 (no such table), 42809 (not a table), 42501 (no SELECT
 * right), 42703 (no such column), 42804 (another type).
 *	 cols (n)
 */
void		dl_pg_require_columns(Oid relid, const DlPgColumn *cols, int n, const char *what);

/*
 * The columns of a packed table (training_preprocessor_dl's output) for
 * the variables x_col and y_col: x_col and y_col bytea, <x_col>_shape and
 * <y_col>_shape integer[], buffer_id integer, and __dist_key__ integer
 * when the table has that column.  ERROR as dl_pg_require_columns.
 */
void		dl_pg_require_packed_table(Oid relid, const char *x_col, const char *y_col);

/* pg_trust.c: the rule of docs/security.md, "Whose code runs". */

/*
 * Is an object owned by owner trusted: the bootstrap superuser, any
 * superuser, or the calling role (GetUserId()) itself?
 */
bool		dl_pg_owner_trusted(Oid owner);

/*
 * The first type owned by an untrusted role found walking type (array
 * element, domain base, composite attributes, range subtype), or
 * InvalidOid; *owner is set to its owner.
 */
Oid			dl_pg_untrusted_type(Oid type, Oid *owner);

/*
 * Call before reading relid: ERROR 42501 unless the caller may SELECT
 * from it, every column has a trusted type (dl_pg_untrusted_type) and no
 * row-security policy of it uses a function, operator or type of an
 * untrusted role.  Takes AccessShareLock on relid after the privilege
 * check.  what: what the table should be, for messages (may be NULL).
 */
void		dl_pg_require_trusted_table(Oid relid, const char *what);

/*
 * Call before writing into relid, a table that madlib_dl did not create
 * in this call: dl_pg_require_trusted_table, and ERROR 42501 unless the
 * caller owns relid and none of its triggers, rules, defaults, generated
 * columns, constraints or indexes uses code of an untrusted role.
 */
void		dl_pg_require_writable_table(Oid relid, const char *what);

/*
 * SPI_connect, then open a read-only cursor on query (no parameters).
 * The caller fetches from the returned portal, closes it and calls
 * SPI_finish.  elog ERROR when SPI fails.
 */
Portal		dl_pg_spi_open_cursor(const char *query);

/*
 * Inside SPI: run the read-only query sql with $1 the text arg, at most
 * limit rows (0: all).  Whether it ran (SPI_OK_SELECT); the caller
 * raises its own error when not.
 */
bool		dl_pg_spi_select_text(const char *sql, const char *arg, long limit);

/*
 * Whether the dimensions of arr differ from the rank dims (a model's
 * per-sample input shape); when they do, "[a,b,c]" of arr's dimensions
 * into have and of dims into want (both initStringInfo'd here), for the
 * caller's message.  dims (rank)
 */
bool		dl_pg_array_shape_differs(ArrayType *arr, const int64 *dims, int rank,
									  StringInfo have, StringInfo want);

/* The 0-based position of the first NULL of the n elements of arr, or -1. */
int64		dl_pg_array_first_null(ArrayType *arr, int64 n);

#endif							/* PG_UTIL_H */
