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

#include "miscadmin.h"

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
		case DL_ERR_CANCELLED:
			return ERRCODE_QUERY_CANCELED;
	}
	return ERRCODE_INTERNAL_ERROR;
}

/*
 * The hint for an engine error that set none: what to do about that kind
 * of error in general, so that every error reaches the user with a hint.
 */
static const char *
default_hint(DlStatus status)
{
	switch (status)
	{
		case DL_ERR_INVALID_ARGUMENT:
		case DL_ERR_PARSE:
			return "Correct the value named in the message; docs/errors.md lists what each function accepts.";
		case DL_ERR_UNSUPPORTED:
			return "Use a feature madlib_dl supports; docs/engine.md lists the layers, activations and options.";
		case DL_ERR_SHAPE:
			return "Make the layers, the data and the weights agree in shape; keras_model_summary() shows each layer's output shape.";
		case DL_ERR_DATA:
			return "Fix or delete the offending values in the input table.";
		case DL_ERR_DIVERGED:
			return "Lower the learning rate, scale the input features, or set clipnorm in the optimizer.";
		case DL_ERR_CORRUPT:
			return "The stored model or buffer is damaged or of another version; train or preprocess again.";
		case DL_ERR_NO_MEMORY:
			return "Use a smaller model or batch_size, or give the server more memory.";
		case DL_ERR_LIMIT:
			return "Use a smaller model, batch or buffer.";
		default:
			return NULL;
	}
}

void
dl_pg_report(const DlError *err)
{
	const char *hint = err->hint[0] != '\0' ? err->hint : default_hint(err->code);

	if (err->code == DL_ERR_INTERNAL)
		elog(ERROR, "madlib_dl internal error: %s", err->msg);
	if (err->code == DL_ERR_CANCELLED)
	{
		/*
		 * The engine stopped because dl_pg_cancel_requested saw a pending
		 * cancel, timeout or termination: raise it as PostgreSQL would
		 * (its own message and SQLSTATE); should it be held off, the
		 * statement still stops, with the cancel's SQLSTATE.
		 */
		CHECK_FOR_INTERRUPTS();
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("canceling statement: %s", err->msg)));
	}
	ereport(ERROR,
			(errcode(dl_pg_sqlstate(err->code)),
			 errmsg("%s", err->msg),
			 hint != NULL ? errhint("%s", hint) : 0));
	pg_unreachable();
}
