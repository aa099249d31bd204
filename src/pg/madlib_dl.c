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

#include <limits.h>
#include <unistd.h>

#include "fmgr.h"
#include "utils/guc.h"

#include "madlib_dl/dl_backend.h"
#include "pg_limits.h"
#include "progress.h"

PG_MODULE_MAGIC;

#define DL_BLAS_THREADS_DEFAULT 1
#define DL_BLAS_THREADS_MAX 64

int			dl_pg_blas_threads = DL_BLAS_THREADS_DEFAULT;

/* madlib_dl.backend (docs/engine.md, "Kernels, threads and determinism") */
static int	dl_pg_backend = DL_BACKEND_AUTO;

static const struct config_enum_entry backend_options[] = {
	{"auto", DL_BACKEND_AUTO, false},
	{"openblas", DL_BACKEND_OPENBLAS, false},
	{"onednn", DL_BACKEND_ONEDNN, false},
	{NULL, 0, false}
};

/* Online CPU cores, at least 1: the most threads madlib_dl.blas_threads allows. */
static int
online_cores(void)
{
	long		n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > INT_MAX ? INT_MAX : (int) n;
}

/* n threads, at most online_cores() (a thread libgomp cannot create makes it exit()). */
static int
bounded_threads(int n)
{
	return Max(1, Min(n, online_cores()));
}

void
dl_pg_set_blas_threads(void)
{
	dl_backend_set_threads(bounded_threads(dl_pg_blas_threads));
	dl_backend_set((DlBackend) dl_pg_backend);
}

/*
 * madlib_dl.blas_threads may not exceed the online cores: libgomp calls
 * exit() when it cannot create a thread, which would take the server
 * through a restart.  This also refuses a postgresql.conf value over the
 * cores when the library loads (the server then logs it and keeps 1).
 */
static bool
blas_threads_check(int *newval, void **extra, GucSource source)
{
	int			cores = online_cores();

	if (*newval > cores)
	{
		GUC_check_errcode(ERRCODE_INVALID_PARAMETER_VALUE);
		GUC_check_errmsg("madlib_dl.blas_threads %d is more than the %d online CPU cores", *newval, cores);
		GUC_check_errhint("Use 1 to %d threads; 1 is best when segments run in parallel.", cores);
		return false;
	}
	return true;
}

static void
blas_threads_assign(int newval, void *extra)
{
	dl_backend_set_threads(bounded_threads(newval));
}

static bool
backend_check(int *newval, void **extra, GucSource source)
{
	if (*newval == DL_BACKEND_ONEDNN && !dl_backend_onednn_available())
	{
		GUC_check_errcode(ERRCODE_FEATURE_NOT_SUPPORTED);
		GUC_check_errmsg("madlib_dl was built without oneDNN");
		GUC_check_errhint("Use \"auto\" or \"openblas\", or rebuild madlib_dl with libdnnl-dev installed.");
		return false;
	}
	return true;
}

static void
backend_assign(int newval, void *extra)
{
	dl_backend_set((DlBackend) newval);
}

void		_PG_init(void);
extern void dl_serving_init(void);	/* api/serving.c */
extern void dl_serving_batch_init(void);	/* api/serving_batch.c */

void
_PG_init(void)
{
	DefineCustomIntVariable("madlib_dl.blas_threads",
							"Number of OpenBLAS and oneDNN threads each madlib_dl process uses.",
							"Segments share a host, so one thread per segment is the efficient default. "
							"At most the number of online CPU cores; only superusers can change it.",
							&dl_pg_blas_threads,
							DL_BLAS_THREADS_DEFAULT, 1, DL_BLAS_THREADS_MAX,
							PGC_SUSET, DL_GUC_SEGMENT_SYNC,
							blas_threads_check, blas_threads_assign, NULL);
	DefineCustomEnumVariable("madlib_dl.backend",
							 "Kernels of madlib_dl's Conv2D and Dense layers: auto, openblas or onednn.",
							 "auto uses oneDNN when madlib_dl was built with it, else OpenBLAS (im2col "
							 "for convolutions). Results differ between the two in the last bits.",
							 &dl_pg_backend,
							 DL_BACKEND_AUTO, backend_options,
							 PGC_USERSET, DL_GUC_SEGMENT_SYNC,
							 backend_check, backend_assign, NULL);
	dl_limits_init();
	dl_serving_init();
	dl_serving_batch_init();
	MarkGUCPrefixReserved("madlib_dl");
	/* whatever the configuration said, never more threads than cores */
	dl_pg_set_blas_threads();
	dl_progress_init();
}
