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

static DlBackend backend = DL_BACKEND_AUTO;
static int	onednn_threads = 1;

void
dl_backend_set(DlBackend b)
{
	backend = b;
}

void
dl_backend_set_threads(int n)
{
	onednn_threads = n < 1 ? 1 : n;
}

int
dl_backend_threads(void)
{
	return onednn_threads;
}

/*
 * Block every blockable signal for the duration of a oneDNN call.  A
 * signal delivered while oneDNN's generated code runs could corrupt the
 * process heap: a parallel worker cancelled during a dnnl_sgemm (the
 * leader's SIGTERM and latch signals) aborted with "corrupted size vs.
 * prev_size" inside oneDNN's own free() (TAP 001_cancel, reproduced
 * every run; none with the signals blocked).  Blocked signals stay
 * pending and are handled as soon as the call returns, a few
 * milliseconds later, so a cancel is still prompt.
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

		omp_set_num_threads(onednn_threads);
		dl_backend_block_signals(&mask);
		s = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', M, N, K, alpha, A, lda,
					   B, ldb, beta, C, ldc);
		dl_backend_restore_signals(&mask);
		if (s == dnnl_success)
			return;
	}
#endif
	cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
				trans_b ? CblasTrans : CblasNoTrans,
				(int) M, (int) N, (int) K, alpha, A, (int) lda, B, (int) ldb,
				beta, C, (int) ldc);
}
