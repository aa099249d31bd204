/*-------------------------------------------------------------------------
 *
 * pg_glue.h
 *	  Shared declarations of the PostgreSQL glue (src/pg/).
 *
 * The glue is the only code that includes postgres.h next to the engine
 * headers and the only code that calls ereport.  Engine calls are made
 * with an allocator over a memory context (pg_alloc.c) and their status is
 * turned into an ERROR with the right SQLSTATE by dl_pg_check
 * (pg_error.c).
 *
 * IDENTIFICATION
 *	  src/pg/pg_glue.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_GLUE_H
#define PG_GLUE_H

#include "postgres.h"

#include "utils/memutils.h"

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_status.h"

#include "pg_compat.h"

/* pg_alloc.c */

/*
 * An engine allocator over cxt: MemoryContextAllocExtended with
 * MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM, so the engine sees NULL on failure
 * (never a longjmp) and may hold blocks over 1 GB.  Everything it hands
 * out is freed when cxt is reset or deleted, also on ERROR.
 */
DlAllocator dl_pg_allocator(MemoryContext cxt);

/* pg_error.c */

/* The SQLSTATE for an engine status. */
int			dl_pg_sqlstate(DlStatus status);

/*
 * Raise ERROR for a failed engine call: the engine's message and hint,
 * with the SQLSTATE of its status.  Never returns.
 */
void		dl_pg_report(const DlError *err) pg_attribute_noreturn();

/* Raise ERROR if st is not DL_OK. */
static inline void
dl_pg_check(DlStatus st, const DlError *err)
{
	if (st != DL_OK)
		dl_pg_report(err);
}

/* madlib_dl.c */

/* Value of the GUC madlib_dl.blas_threads (default 1). */
extern int	dl_pg_blas_threads;

/* Apply madlib_dl.blas_threads to OpenBLAS in this process. */
void		dl_pg_set_blas_threads(void);

/*
 * The GUC flag of the settings a segment's process reads
 * (madlib_dl.backend, blas_threads and max_model_memory).  Greenplum
 * gives a session's value of a setting to the segment processes it
 * starts only when the setting has GUC_GPDB_NEED_SYNC (its utils/guc.h);
 * elsewhere no flag is needed.
 */
#ifdef GP_VERSION_NUM
#define DL_GUC_SEGMENT_SYNC GUC_GPDB_NEED_SYNC
#else
#define DL_GUC_SEGMENT_SYNC 0
#endif

#endif							/* PG_GLUE_H */
