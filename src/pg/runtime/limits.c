/*-------------------------------------------------------------------------
 *
 * limits.c
 *	  The madlib_dl.max_model_memory GUC and the memory checks against it.
 *
 * A model too large for the machine must fail at once with a clear
 * error, not after minutes of reading data, and never through the OOM
 * killer (which takes the whole server through a restart) or an
 * allocation failure at the end of training.  So every job estimates,
 * from the architectures alone (the engine's dl_model_memory_estimate:
 * no model is built, nothing proportional to a model is allocated), what
 * one of its processes will hold, and checks it before it starts
 * workers, reads data or builds a model (dl_limits_check_job in
 * job_limits.c, also callable from SQL as madlib_dl._check_model_memory).
 * This file holds the GUCs, the partition budget, the per-model checks
 * and the job limits the SQL drivers read (madlib_dl._job_limit), and
 * calls nothing above it (pg_model.c calls it).  As a backstop,
 * every model dl_pg_model_create builds is checked alone
 * (dl_limits_check_model), whichever path reached it.
 *
 * The GUC is PGC_SUSET, like temp_file_limit: a role that may not use
 * more memory cannot raise its own limit.
 *
 * IDENTIFICATION
 *	  src/pg/runtime/limits.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

#include <limits.h>
#include <math.h>
#include <unistd.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_model_select.h"
#include "madlib_dl/dl_visit.h"

#include "pg_limits.h"
#include "pg_model.h"
#include "segments.h"

/* 1 GB, in kB. */
#define DL_MAX_MODEL_MEMORY_DEFAULT (1024 * 1024)

int			dl_pg_max_model_memory_kb = DL_MAX_MODEL_MEMORY_DEFAULT;
int			dl_pg_partition_memory_kb = -1;

/* The smallest partition_memory (kB), and the default rule's floor (bytes). */
#define DL_PARTITION_MEMORY_MIN_KB 64
#define DL_PARTITION_MEMORY_FLOOR (64.0 * 1024 * 1024)

/* -1 (the default rule) or at least DL_PARTITION_MEMORY_MIN_KB. */
static bool
partition_memory_check(int *newval, void **extra, GucSource source)
{
	if (*newval == -1 || *newval >= DL_PARTITION_MEMORY_MIN_KB)
		return true;
	GUC_check_errcode(ERRCODE_INVALID_PARAMETER_VALUE);
	GUC_check_errmsg("madlib_dl.partition_memory must be -1 or at least %d kB, not %d kB",
					 DL_PARTITION_MEMORY_MIN_KB, *newval);
	GUC_check_errhint("Give -1 for the default rule (half the memory not in shared_buffers, shared by the segments), or a size such as '512MB'.");
	return false;
}

void
dl_limits_init(void)
{
	DefineCustomIntVariable("madlib_dl.max_model_memory",
							"Most memory one process of a madlib_dl job may need (fit, fit_multiple, evaluate, predict).",
							"The estimate, made from the architecture before any model is built, counts the "
							"weights, gradients, optimizer state, the activations and im2col buffers of a "
							"mini-batch, the oneDNN scratch, the model states in shared memory, the averaging "
							"buffer and the metric history. A job over the limit fails before it starts, with "
							"SQLSTATE 54000. Only superusers can change it.",
							&dl_pg_max_model_memory_kb,
							DL_MAX_MODEL_MEMORY_DEFAULT, 64, INT_MAX,
							PGC_SUSET, GUC_UNIT_KB | DL_GUC_SEGMENT_SYNC,
							NULL, NULL, NULL);
	DefineCustomIntVariable("madlib_dl.partition_memory",
							"Memory budget of one segment's partition in fit and fit_multiple; -1: the default rule.",
							"A partition that fits is kept in memory for the whole call (cached); a larger one "
							"is read from its table a window at a time (streamed). -1 gives each segment "
							"max(64MB, (physical memory - shared_buffers) / (2 * segments)). Only superusers "
							"can change it.",
							&dl_pg_partition_memory_kb,
							-1, -1, INT_MAX,
							PGC_SUSET, GUC_UNIT_KB,
							partition_memory_check, NULL, NULL);
}

double
dl_limits_partition_budget(int nseg)
{
	long		pages = sysconf(_SC_PHYS_PAGES);
	long		page_size = sysconf(_SC_PAGESIZE);
	double		avail;

	if (dl_pg_partition_memory_kb > 0)
		return (double) dl_pg_partition_memory_kb * 1024.0;
	if (pages <= 0 || page_size <= 0)
		return DL_PARTITION_MEMORY_FLOOR;
	avail = (double) pages * (double) page_size - (double) NBuffers * BLCKSZ;
	return Max(DL_PARTITION_MEMORY_FLOOR, avail / (2.0 * Max(nseg, 1)));
}

double
dl_limits_bytes(void)
{
	return (double) dl_pg_max_model_memory_kb * 1024.0;
}

/* bytes as text with a unit, as pg_size_pretty writes it (rounded). */
char *
dl_limits_size_text(double bytes)
{
	static const char *const units[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB"};
	int			u = 0;

	if (!isfinite(bytes))
		return pstrdup("an unbounded amount");
	while (bytes >= 10240.0 && u < (int) lengthof(units) - 1)
	{
		bytes /= 1024.0;
		u++;
	}
	return psprintf("%.0f %s", bytes, units[u]);
}

/* The errhint: first, then the advice to raise the limit to 1.25 times bytes if it can be. */
char *
dl_limits_raise_hint(const char *first, double bytes)
{
	double		gb = ceil(bytes * 1.25 / (1024.0 * 1024 * 1024));

	if (!(gb * 1024 * 1024 <= (double) INT_MAX))
		return psprintf("%s: this is more than madlib_dl.max_model_memory can allow.", first);
	return psprintf("%s, or, if the server has the memory, have a superuser raise the limit, "
					"e.g. SET madlib_dl.max_model_memory = '%.0fGB'.",
					first, Max(gb, 2.0));
}

/* ---------------------------------------------------------------------
 * One model
 * --------------------------------------------------------------------- */

/*
 * Append "weights 1 MB, gradients 1 MB, ..." of the parts of est of 1 kB
 * or more, between before and after when there is any.
 */
void
dl_limits_append_estimate(StringInfo buf, const DlMemoryEstimate *est, const char *before,
				const char *after)
{
	struct
	{
		const char *name;
		double		bytes;
	}			parts[] = {
		{"weights", est->weights},
		{"gradients", est->gradients},
		{"optimizer state", est->optimizer},
		{"activations", est->activations},
		{"im2col buffer", est->im2col},
		{"oneDNN scratch", est->onednn_scratch},
	};
	bool		first = true;

	for (int i = 0; i < (int) lengthof(parts); i++)
	{
		if (parts[i].bytes < 1024.0)
			continue;
		appendStringInfo(buf, "%s%s %s", first ? before : ", ", parts[i].name,
						 dl_limits_size_text(parts[i].bytes));
		first = false;
	}
	if (!first)
		appendStringInfoString(buf, after);
}

/* The advice for a model whose largest part is what est says. */
const char *
dl_limits_model_advice(const DlMemoryEstimate *est)
{
	double		fixed = est->weights + est->gradients + est->optimizer;

	if (est->im2col >= fixed && est->im2col >= est->activations)
		return "Use smaller Conv2D kernels or inputs, or a smaller batch_size";
	if (est->activations >= fixed)
		return "Use a smaller batch_size or smaller layers";
	return "Use a smaller model";
}

/* Segments a parallel-worker fit uses by default (every server, Greenplum included). */
int
dl_seg_default_count(void)
{
	long		cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int			n;

	if (cpus < 1)
		cpus = 1;
#if PG_VERSION_NUM >= 100000
	n = (int) Min(cpus, (long) max_parallel_workers);
#else
	n = (int) cpus;
#endif
	return Max(1, Min(n, DL_SEG_MAX));
}

void
dl_limits_check_model(const DlMemoryEstimate *est, int64 batch)
{
	StringInfoData detail;

	if (est->total <= dl_limits_bytes())	/* NaN is refused too */
		return;
	initStringInfo(&detail);
	appendStringInfoString(&detail, "The model holds");
	dl_limits_append_estimate(&detail, est, " ", "");
	appendStringInfo(&detail, " for batches of " INT64_FORMAT " rows.", batch);
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("the model needs about %s of memory, more than madlib_dl.max_model_memory (%s)",
					dl_limits_size_text(est->total), dl_limits_size_text(dl_limits_bytes())),
			 errdetail_internal("%s", detail.data),
			 errhint("%s", dl_limits_raise_hint(dl_limits_model_advice(est), est->total))));
}

void
dl_limits_check_weights(size_t n_params, const char *what)
{
	if ((double) n_params * sizeof(float) > MAX_BYTEA_PAYLOAD)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s has %zu parameters, more than the %.0f whose weights fit in one model_weights value",
						what, n_params, floor(MAX_BYTEA_PAYLOAD / sizeof(float))),
				 errdetail("model_weights holds every parameter as a float32 in one bytea value, of at most 1 GB."),
				 errhint("Use a smaller model (fewer units, filters or layers).")));
}

/*
 * madlib_dl._job_limit(name text) RETURNS integer: a job limit the SQL
 * drivers check before they build a job, so that each number exists once,
 * in C:
 *	 'segments'  most segments of a packed table or a cluster (DL_SEG_MAX)
 *	 'models'    most configurations of one fit_multiple job (DL_SEG_MAX_MODELS)
 *	 'configs'   most rows generate_model_configs writes (DL_MS_MAX_CONFIGS)
 */
PG_FUNCTION_INFO_V1(madlib_dl__job_limit);

Datum
madlib_dl__job_limit(PG_FUNCTION_ARGS)
{
	static const struct
	{
		const char *name;
		int			value;
	}			limits[] = {
		{"segments", DL_SEG_MAX},
		{"models", DL_SEG_MAX_MODELS},
		{"configs", DL_MS_MAX_CONFIGS},
	};
	char	   *name;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("name must not be NULL"),
				 errhint("Name a job limit: 'segments', 'models' or 'configs'.")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	for (size_t k = 0; k < lengthof(limits); k++)
		if (strcmp(name, limits[k].name) == 0)
			PG_RETURN_INT32(limits[k].value);
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown job limit \"%.64s\"", name),
			 errhint("Name a job limit: 'segments', 'models' or 'configs'.")));
	PG_RETURN_NULL();			/* not reached */
}
