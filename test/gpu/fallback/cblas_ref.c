/*-------------------------------------------------------------------------
 *
 * cblas_ref.c
 *	  Fallback cblas_sgemm (row-major only, double accumulation) for GPU
 *	  hosts without OpenBLAS; see cblas.h next to it.
 *
 * IDENTIFICATION
 *	  test/gpu/fallback/cblas_ref.c
 *
 *-------------------------------------------------------------------------
 */
#include "cblas.h"

void
cblas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb,
			int M, int N, int K, float alpha, const float *A, int lda,
			const float *B, int ldb, float beta, float *C, int ldc)
{
	(void) order;				/* the engine only uses CblasRowMajor */
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++)
		{
			double		s = 0.0;

			for (int k = 0; k < K; k++)
			{
				float		a = ta == CblasNoTrans ? A[(long) i * lda + k] : A[(long) k * lda + i];
				float		b = tb == CblasNoTrans ? B[(long) k * ldb + j] : B[(long) j * ldb + k];

				s += (double) a * b;
			}
			C[(long) i * ldc + j] = (float) (alpha * s + (beta == 0.0f ? 0.0 : (double) beta * C[(long) i * ldc + j]));
		}
}
