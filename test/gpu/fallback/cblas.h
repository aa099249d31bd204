/*-------------------------------------------------------------------------
 *
 * cblas.h
 *	  Fallback for GPU hosts without OpenBLAS: the one CBLAS call the CPU
 *	  reference engine makes (cblas_sgemm), for scripts/gpu_check.sh.
 *
 * Only used when the host has no <cblas.h>; a plain triple loop (in
 * cblas_ref.c), fast enough for the small CPU references of test_gpu.
 *
 * IDENTIFICATION
 *	  test/gpu/fallback/cblas.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_FALLBACK_CBLAS_H
#define DL_FALLBACK_CBLAS_H

enum CBLAS_ORDER
{
	CblasRowMajor = 101,
	CblasColMajor = 102
};
enum CBLAS_TRANSPOSE
{
	CblasNoTrans = 111,
	CblasTrans = 112
};

/* C (M,N) = alpha * op(A) (M,K) @ op(B) (K,N) + beta * C. */
void		cblas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb,
						int M, int N, int K, float alpha, const float *A, int lda,
						const float *B, int ldb, float beta, float *C, int ldc);

#endif							/* DL_FALLBACK_CBLAS_H */
