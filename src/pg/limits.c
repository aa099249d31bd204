/*-------------------------------------------------------------------------
 *
 * limits.c
 *	  The madlib_dl.max_model_memory GUC and the check against it.
 *
 * A model too large for the machine should fail at once with a clear
 * error, not after minutes of reading data, and never through the OOM
 * killer (which takes the whole server through a restart).  fit and
 * fit_multiple estimate the memory of one model state in one process
 * (madlib_dl._model_memory_estimate in src/sql/80_limits.sql) and check
 * it here before they start workers or allocate models.
 *
 * IDENTIFICATION
 *	  src/pg/limits.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

#include <limits.h>
#include <math.h>

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "pg_limits.h"

/* 1 GB, in kB. */
#define DL_MAX_MODEL_MEMORY_DEFAULT (1024 * 1024)

int			dl_pg_max_model_memory_kb = DL_MAX_MODEL_MEMORY_DEFAULT;

void
dl_limits_init(void)
{
	DefineCustomIntVariable("madlib_dl.max_model_memory",
							"Most memory one model state may need in one process (fit, fit_multiple).",
							"The estimate counts the weights, gradients, optimizer state, averaging "
							"buffers and the activations of one mini-batch. A model over the limit "
							"fails before training starts, with SQLSTATE 54000.",
							&dl_pg_max_model_memory_kb,
							DL_MAX_MODEL_MEMORY_DEFAULT, 64, INT_MAX,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
}

/* bytes as text with a unit, as pg_size_pretty writes it (rounded). */
static char *
size_text(double bytes)
{
	static const char *const units[] = {"bytes", "kB", "MB", "GB", "TB", "PB"};
	int			u = 0;

	while (bytes >= 10240.0 && u < (int) lengthof(units) - 1)
	{
		bytes /= 1024.0;
		u++;
	}
	return psprintf("%.0f %s", bytes, units[u]);
}

void
dl_limits_check_memory(const char *what, double bytes)
{
	double		limit = (double) dl_pg_max_model_memory_kb * 1024.0;

	if (isnan(bytes) || bytes > limit)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s needs about %s of memory per segment, more than madlib_dl.max_model_memory (%s)",
						what, size_text(bytes), size_text(limit)),
				 errhint("Use a smaller model or batch_size, or raise the limit if the server has the memory, "
						 "e.g. SET madlib_dl.max_model_memory = '%.0fGB'.",
						 Max(ceil(bytes * 1.25 / (1024.0 * 1024 * 1024)), 2.0))));
}

/*
 * madlib_dl._check_memory(what text, bytes float8) RETURNS float8
 *
 * SQL access to dl_limits_check_memory: ERROR 54000 when bytes exceeds
 * the limit, else returns bytes.  NULL arguments: NULL.
 */
PG_FUNCTION_INFO_V1(madlib_dl__check_memory);
Datum
madlib_dl__check_memory(PG_FUNCTION_ARGS)
{
	char	   *what;
	double		bytes;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	what = text_to_cstring(PG_GETARG_TEXT_PP(0));
	bytes = PG_GETARG_FLOAT8(1);
	dl_limits_check_memory(what, bytes);
	PG_RETURN_FLOAT8(bytes);
}
