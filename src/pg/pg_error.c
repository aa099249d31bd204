/*-------------------------------------------------------------------------
 *
 * pg_error.c
 *	  Map engine statuses to SQLSTATEs and raise them.
 *
 * This is the single place where an engine DlStatus becomes an ereport.
 * The table is documented in docs/errors.md.
 *
 * IDENTIFICATION
 *	  src/pg/pg_error.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

int
dl_pg_sqlstate(DlStatus status)
{
	switch (status)
	{
		case DL_OK:
			return ERRCODE_SUCCESSFUL_COMPLETION;
		case DL_ERR_INVALID_ARGUMENT:
		case DL_ERR_PARSE:
			return ERRCODE_INVALID_PARAMETER_VALUE;
		case DL_ERR_UNSUPPORTED:
			return ERRCODE_FEATURE_NOT_SUPPORTED;
		case DL_ERR_SHAPE:
		case DL_ERR_DATA:
		case DL_ERR_DIVERGED:
			return ERRCODE_DATA_EXCEPTION;
		case DL_ERR_CORRUPT:
			return ERRCODE_DATA_CORRUPTED;
		case DL_ERR_NO_MEMORY:
			return ERRCODE_OUT_OF_MEMORY;
		case DL_ERR_LIMIT:
			return ERRCODE_PROGRAM_LIMIT_EXCEEDED;
		case DL_ERR_INTERNAL:
			return ERRCODE_INTERNAL_ERROR;
	}
	return ERRCODE_INTERNAL_ERROR;
}

void
dl_pg_report(const DlError *err)
{
	if (err->code == DL_ERR_INTERNAL)
		elog(ERROR, "madlib_dl internal error: %s", err->msg);
	ereport(ERROR,
			(errcode(dl_pg_sqlstate(err->code)),
			 errmsg("%s", err->msg),
			 err->hint[0] != '\0' ? errhint("%s", err->hint) : 0));
	pg_unreachable();
}
