/*-------------------------------------------------------------------------
 *
 * backend.c
 *	  The process-wide kernel choice (dl_backend.h) and dl_sgemm, the
 *	  matrix product every Dense layer uses.
 *
 * dl_sgemm is a row-major sgemm that goes to oneDNN's dnnl_sgemm when
 * oneDNN is in use, else to OpenBLAS's cblas_sgemm.  With the kernels
 * the environment of the development machine pins for OpenBLAS (Haswell,
 * AVX2) oneDNN's AVX-512 sgemm runs the MLP's products about 1.9x faster
 * (docs/performance.md).  dnnl_sgemm fails only on invalid arguments or
 * when oneDNN cannot allocate its packing buffers; the product is then
 * computed by OpenBLAS, so dl_sgemm itself cannot fail.
 *
 * Also the signal window every oneDNN call runs in, and the thread count
 * of both libraries with what keeps their helper threads away from the
 * process's signals (dl_backend_set_threads).
 *
 * IDENTIFICATION
 *	  src/engine/backend.c
 *
 *-------------------------------------------------------------------------
 */
#include <signal.h>
#include <stdio.h>

/* keep <complex.h> (and its macro I, a dimension name here) out */
#define FORCE_OPENBLAS_COMPLEX_STRUCT
#include <cblas.h>

#include "madlib_dl/dl_backend.h"
#include "dl_kernels.h"

/* From OpenBLAS; declared here so any cblas.h alternative works. */
extern void openblas_set_num_threads(int num_threads);

/*
 * OpenBLAS's (pthreads build) own shutdown of its thread pool, which its
 * fork handler calls; weak, so that builds without it (OpenMP or serial
 * OpenBLAS) leave it NULL.
 */
extern int	blas_thread_shutdown_(void) __attribute__((weak));

static DlBackend backend = DL_BACKEND_AUTO;
static int	blas_threads = 1;
static bool load_pool_dropped = false;

void
dl_backend_set(DlBackend b)
{
	backend = b;
}

/*
 * Both libraries start helper threads: OpenBLAS (pthreads build) a pool
 * of (CPUs - 1) threads when it is loaded and again, after a fork, on the
 * first multi-threaded call, plus one per thread added here; oneDNN's
 * OpenMP runtime (libgomp) a pool on the first parallel region with more
 * than one thread.  A new thread starts with its creator's signal mask.
 * A process-directed signal (kill() from PostgreSQL: cancel, terminate,
 * the latch and procsignal SIGUSR1) goes to any thread that does not
 * block it, so a helper thread started with signals unblocked would run
 * PostgreSQL's handlers, which are written for the backend's own thread;
 * and whenever the main thread blocks signals around a oneDNN call, such
 * a thread would get every signal meant for the backend.
 *
 * So every helper thread is started inside the signal window, with all
 * signals blocked, and keeps that mask for life (neither library changes
 * it): thread counts change here in the window; oneDNN calls run in the
 * window anyway; multi-threaded OpenBLAS calls run in it too
 * (dl_sgemm_openblas), since they may start the pool; and the pool
 * OpenBLAS started when it was loaded, with whatever mask the loading
 * thread had, is shut down here the first time (OpenBLAS 0.3.21 starts
 * it again at once in openblas_set_num_threads, in the window; versions
 * that do not start it in the first multi-threaded call, in its window).
 * test_signals.c checks the mask of every thread of the process, and TAP
 * 007_signal_threads of the server's processes.
 */
void
dl_backend_set_threads(int n)
{
	DlSignalMask mask;

	blas_threads = n < 1 ? 1 : n;
	dl_backend_block_signals(&mask);
	if (!load_pool_dropped && blas_thread_shutdown_ != NULL)
		(void) blas_thread_shutdown_();
	load_pool_dropped = true;
	openblas_set_num_threads(blas_threads);
	dl_backend_restore_signals(&mask);
}

int
dl_backend_threads(void)
{
	return blas_threads;
}

/*
 * Block every blockable signal for the duration of a oneDNN call.  A
 * signal delivered while oneDNN's generated code runs could corrupt the
 * process heap: a parallel worker cancelled during a dnnl_sgemm (the
 * leader's SIGTERM and latch signals) aborted with "corrupted size vs.
 * prev_size" inside oneDNN's own free() (TAP 001_cancel, reproduced
 * every run; none with the signals blocked).  Blocked signals stay
 * pending and are handled as soon as the window closes; PostgreSQL's
 * handlers only set flags that CHECK_FOR_INTERRUPTS reads between
 * batches, so a cancel is no later for it (docs/engine.md, "Signals").
 *
 * Inside the window nothing may call the caller's allocator or anything
 * else of PostgreSQL's: in the server that is palloc, and an ERROR
 * raised there would longjmp out with the signals still blocked.  The
 * unit tests' allocator fails any test that calls it inside a window.
 */
void
dl_backend_block_signals(DlSignalMask *saved)
{
	sigset_t	all;

	sigfillset(&all);
	saved->ok = sigprocmask(SIG_BLOCK, &all, &saved->mask) == 0;
}

void
dl_backend_restore_signals(const DlSignalMask *saved)
{
	if (saved->ok)
		(void) sigprocmask(SIG_SETMASK, &saved->mask, NULL);
}

#ifdef DL_HAVE_DNNL

#include <oneapi/dnnl/dnnl.h>

/* libgomp: oneDNN's runtime in Debian's build */
extern void omp_set_num_threads(int n);

bool
dl_backend_onednn_available(void)
{
	return true;
}

bool
dl_backend_uses_onednn(void)
{
	return backend != DL_BACKEND_OPENBLAS;
}

const char *
dl_backend_onednn_version(void)
{
	static char buf[32];
	const dnnl_version_t *v = dnnl_version();

	snprintf(buf, sizeof(buf), "%d.%d.%d", v->major, v->minor, v->patch);
	return buf;
}

#else							/* !DL_HAVE_DNNL */

bool
dl_backend_onednn_available(void)
{
	return false;
}

bool
dl_backend_uses_onednn(void)
{
	return false;
}

const char *
dl_backend_onednn_version(void)
{
	return "none";
}

#endif							/* DL_HAVE_DNNL */

/*
 * The same product always through OpenBLAS.  With more than one thread
 * OpenBLAS may start its pool in the call, so the call runs in the signal
 * window (dl_backend_set_threads says why); one thread starts none and
 * needs none.
 */
void
dl_sgemm_openblas(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
				  const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
				  float *C, int64_t ldc)
{
	DlSignalMask mask;
	bool		window = blas_threads > 1;

	if (window)
		dl_backend_block_signals(&mask);
	cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
				trans_b ? CblasTrans : CblasNoTrans,
				(int) M, (int) N, (int) K, alpha, A, (int) lda, B, (int) ldb,
				beta, C, (int) ldc);
	if (window)
		dl_backend_restore_signals(&mask);
}

/*
 * C (M,N) = alpha op(A) op(B) + beta C, all row-major; op(A) is (M,K),
 * stored (K,M) when trans_a; op(B) is (K,N), stored (N,K) when trans_b.
 * M, N, K >= 1 and each fits in an int.
 */
void
dl_sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
		 const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
		 float *C, int64_t ldc)
{
#ifdef DL_HAVE_DNNL
	if (dl_backend_uses_onednn())
	{
		DlSignalMask mask;
		dnnl_status_t s;

		dl_backend_block_signals(&mask);
		omp_set_num_threads(blas_threads);
		s = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', M, N, K, alpha, A, lda,
					   B, ldb, beta, C, ldc);
		dl_backend_restore_signals(&mask);
		if (s == dnnl_success)
			return;
	}
#endif
	dl_sgemm_openblas(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
