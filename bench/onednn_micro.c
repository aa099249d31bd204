/*-------------------------------------------------------------------------
 *
 * onednn_micro.c
 *	  Microbenchmark behind changes 11 and 12 of docs/performance.md: the
 *	  engine's kernels with OpenBLAS against the same kernels with oneDNN.
 *
 *	 make -C bench out/onednn_micro && OMP_NUM_THREADS=1 \
 *	   OPENBLAS_NUM_THREADS=1 bench/out/onednn_micro
 *
 * Prints one line per case, CPU time, best of REPS:
 *	 gemm <product> openblas_gflops X onednn_gflops Y
 *		dl_sgemm with each backend, the MLP's shapes and 1024 square
 *	 conv <layer> <pass> openblas_ms X onednn_ms Y
 *		the bench CNN's two convolutions, batch 128: forward (with ReLU),
 *		backward (weight and bias gradient; the second layer also the
 *		input gradient), im2col + sgemm against conv2d_dnnl.c
 * Never a test.  Needs a build with oneDNN.
 *
 * IDENTIFICATION
 *	  bench/onednn_micro.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_backend.h"
#include "dl_kernels.h"

#define REPS 20

static double
cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

static float *
filled(size_t n)
{
	float	   *p = malloc(n * sizeof(float));

	if (p == NULL)
	{
		fprintf(stderr, "onednn_micro: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		p[i] = (float) ((i * 7) % 13) / 13.0f - 0.5f;
	return p;
}

static void *
bench_alloc(void *ctx, size_t size)
{
	(void) ctx;
	return malloc(size);
}

static void
bench_free(void *ctx, void *p)
{
	(void) ctx;
	free(p);
}

/* Best GFLOP/s of dl_sgemm for op(A) (M,K) @ B (K,N) with backend b. */
static double
gemm_gflops(DlBackend b, bool ta, int64_t M, int64_t N, int64_t K)
{
	float	   *A = filled((size_t) (M * K)),
			   *B = filled((size_t) (K * N)),
			   *C = filled((size_t) (M * N));
	double		best = 1e30;

	dl_backend_set(b);
	for (int r = 0; r < REPS; r++)
	{
		double		t = cpu_s();

		dl_sgemm(ta, false, M, N, K, 1.0f, A, ta ? M : K, B, N, 0.0f, C, N);
		t = cpu_s() - t;
		if (t < best)
			best = t;
	}
	free(A);
	free(B);
	free(C);
	return 2.0 * (double) M * (double) N * (double) K / best / 1e9;
}

/* Best milliseconds of the forward or backward pass of g with backend b. */
static double
conv_ms(DlBackend b, bool backward, bool with_dx, const DlConvGeom *g)
{
	DlAllocator a = {bench_alloc, bench_free, NULL};
	DlScratch	scratch = {&a, NULL, 0, SIZE_MAX};
	size_t		nx = (size_t) (g->B * g->H * g->W * g->C),
				ny = (size_t) (g->B * g->OH * g->OW * g->OC),
				nk = (size_t) (g->KH * g->KW * g->C * g->OC);
	float	   *x = filled(nx),
			   *dx = filled(nx),
			   *y = filled(ny),
			   *dy = filled(ny),
			   *K = filled(nk),
			   *dK = filled(nk),
			   *bias = filled((size_t) g->OC),
			   *db = filled((size_t) g->OC),
			   *work = filled(dl_conv2d_workspace_floats(g));
	double		best = 1e30;
	DlError		err;

	dl_backend_set(b);
	for (int r = 0; r < REPS; r++)
	{
		double		t = cpu_s();
		DlStatus	st = DL_ERR_UNSUPPORTED;

		if (b == DL_BACKEND_ONEDNN)
			st = backward ?
				dl_conv2d_dnnl_backward(with_dx ? dx : NULL, dK, db, dy, x, K, g, &scratch, &err) :
				dl_conv2d_dnnl_forward(y, x, K, bias, DL_ACT_RELU, g, &scratch, &err);
		if (st == DL_ERR_UNSUPPORTED)
		{
			if (backward)
				dl_conv2d_backward(with_dx ? dx : NULL, dK, db, work, dy, x, K, g);
			else
				dl_conv2d_forward_act(y, work, x, K, bias, DL_ACT_RELU, g);
		}
		else if (st != DL_OK)
		{
			fprintf(stderr, "onednn_micro: %s\n", err.msg);
			exit(1);
		}
		t = cpu_s() - t;
		if (t < best)
			best = t;
	}
	free(scratch.p);
	free(x);
	free(dx);
	free(y);
	free(dy);
	free(K);
	free(dK);
	free(bias);
	free(db);
	free(work);
	return best * 1e3;
}

int
main(void)
{
	static const struct
	{
		const char *name;
		bool		ta;
		int64_t		M,
					N,
					K;
	}			gemms[] = {
		{"128x784@784x256", false, 128, 256, 784},
		{"(784x128)^T@128x256", true, 784, 256, 128},
		{"128x256@256x128", false, 128, 128, 256},
		{"128x128@128x10", false, 128, 10, 128},
		{"1024x1024@1024x1024", false, 1024, 1024, 1024},
	};
	DlConvGeom	g1,
				g2;

	if (!dl_backend_onednn_available())
	{
		fprintf(stderr, "onednn_micro: built without oneDNN\n");
		return 2;
	}
	printf("onednn_version %s\n", dl_backend_onednn_version());
	for (size_t i = 0; i < sizeof(gemms) / sizeof(gemms[0]); i++)
		printf("gemm %s openblas_gflops %.1f onednn_gflops %.1f\n", gemms[i].name,
			   gemm_gflops(DL_BACKEND_OPENBLAS, gemms[i].ta, gemms[i].M, gemms[i].N, gemms[i].K),
			   gemm_gflops(DL_BACKEND_ONEDNN, gemms[i].ta, gemms[i].M, gemms[i].N, gemms[i].K));
	dl_conv_geom_init(&g1, 128, 28, 28, 1, 32, 3, 3, 1, 1, DL_PADDING_VALID);
	dl_conv_geom_init(&g2, 128, 13, 13, 32, 64, 3, 3, 1, 1, DL_PADDING_VALID);
	printf("conv 28x28x1->32 forward openblas_ms %.2f onednn_ms %.2f\n",
		   conv_ms(DL_BACKEND_OPENBLAS, false, false, &g1), conv_ms(DL_BACKEND_ONEDNN, false, false, &g1));
	printf("conv 28x28x1->32 backward(dK,db) openblas_ms %.2f onednn_ms %.2f\n",
		   conv_ms(DL_BACKEND_OPENBLAS, true, false, &g1), conv_ms(DL_BACKEND_ONEDNN, true, false, &g1));
	printf("conv 13x13x32->64 forward openblas_ms %.2f onednn_ms %.2f\n",
		   conv_ms(DL_BACKEND_OPENBLAS, false, false, &g2), conv_ms(DL_BACKEND_ONEDNN, false, false, &g2));
	printf("conv 13x13x32->64 backward(dx,dK,db) openblas_ms %.2f onednn_ms %.2f\n",
		   conv_ms(DL_BACKEND_OPENBLAS, true, true, &g2), conv_ms(DL_BACKEND_ONEDNN, true, true, &g2));
	return 0;
}
