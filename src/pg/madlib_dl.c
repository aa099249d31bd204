/*-------------------------------------------------------------------------
 *
 * madlib_dl.c
 *	  Module magic, _PG_init and the madlib_dl.* GUCs.
 *
 * IDENTIFICATION
 *	  src/pg/madlib_dl.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "pg_limits.h"
#include "progress.h"

PG_MODULE_MAGIC;

/* From OpenBLAS; declared here so any cblas.h alternative works. */
extern void openblas_set_num_threads(int num_threads);

#define DL_BLAS_THREADS_DEFAULT 1
#define DL_BLAS_THREADS_MAX 64

int			dl_pg_blas_threads = DL_BLAS_THREADS_DEFAULT;

void
dl_pg_set_blas_threads(void)
{
	openblas_set_num_threads(dl_pg_blas_threads);
}

static void
blas_threads_assign(int newval, void *extra)
{
	openblas_set_num_threads(newval);
}

void		_PG_init(void);

void
_PG_init(void)
{
	DefineCustomIntVariable("madlib_dl.blas_threads",
							"Number of OpenBLAS threads each madlib_dl process uses.",
							"Segments share a host, so one thread per segment is the efficient default.",
							&dl_pg_blas_threads,
							DL_BLAS_THREADS_DEFAULT, 1, DL_BLAS_THREADS_MAX,
							PGC_USERSET, 0,
							NULL, blas_threads_assign, NULL);
	dl_limits_init();
	MarkGUCPrefixReserved("madlib_dl");
	openblas_set_num_threads(dl_pg_blas_threads);
	dl_progress_init();
}
