/*-------------------------------------------------------------------------
 *
 * predict_rows.c
 *	  The forward pass of the MLP 784-256-128-10 through the engine's
 *	  dl_sgemm, M rows at a time: what one row costs alone and in a batch
 *	  (docs/serving.md, "Batched across rows"), and whether a row's
 *	  numbers depend on the rows it is batched with.
 *
 *	 make -C bench out/predict_rows && OMP_NUM_THREADS=1 \
 *	   OPENBLAS_NUM_THREADS=1 bench/out/predict_rows [openblas|onednn]
 *
 * Prints one line per M (1, 2, 3, 4, 8, 16, 64, 128, 1024):
 *	 rows M us_per_row X gflops Y same_as_2_rows yes|no
 * us_per_row: CPU time of the three products (bias and ReLU left out),
 * best of REPS passes over 65,536 rows; same_as_2_rows: the last row of
 * the batch (a fixed input row) has, bit for bit, the outputs it has in a
 * batch of 2.  Never a test.
 *
 * IDENTIFICATION
 *	  bench/predict_rows.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "madlib_dl/dl_backend.h"
#include "dl_kernels.h"

#define REPS 3
#define ROWS_PER_PASS 65536
#define MAX_M 1024

static const int64_t layers[4] = {784, 256, 128, 10};

static double
cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

static float *
filled(size_t n, unsigned seed)
{
	float	   *p = malloc(n * sizeof(float));

	if (p == NULL)
	{
		fprintf(stderr, "predict_rows: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		p[i] = (float) ((i * 7 + seed) % 13) / 13.0f - 0.5f;
	return p;
}

/* act[l+1] (M, layers[l+1]) = relu(act[l] (M, layers[l]) @ W[l]); the last layer without ReLU. */
static void
forward(float *const *act, float *const *W, int64_t M)
{
	for (int l = 0; l < 3; l++)
	{
		dl_sgemm(false, false, M, layers[l + 1], layers[l], 1.0f, act[l], layers[l], W[l], layers[l + 1],
				 0.0f, act[l + 1], layers[l + 1]);
		if (l < 2)
			for (int64_t i = 0; i < M * layers[l + 1]; i++)
				act[l + 1][i] = act[l + 1][i] > 0.0f ? act[l + 1][i] : 0.0f;
	}
}

/* Put row at position M - 1 of the batch and run the batch: the row's outputs into out (10). */
static void
row_in_batch(float *const *act, float *const *W, const float *row, int64_t M, float *out)
{
	memcpy(act[0] + (M - 1) * layers[0], row, sizeof(float) * (size_t) layers[0]);
	forward(act, W, M);
	memcpy(out, act[3] + (M - 1) * layers[3], sizeof(float) * (size_t) layers[3]);
}

int
main(int argc, char **argv)
{
	static const int64_t ms[] = {1, 2, 3, 4, 8, 16, 64, 128, 1024};
	float	   *W[3];
	float	   *act[4];
	float	   *row;			/* (784) the row checked */
	float		ref[10];		/* its outputs in a batch of 2 */
	double		flops_row = 0;

	if (argc > 1)
		dl_backend_set(strcmp(argv[1], "openblas") == 0 ? DL_BACKEND_OPENBLAS : DL_BACKEND_ONEDNN);
	for (int l = 0; l < 3; l++)
	{
		W[l] = filled((size_t) (layers[l] * layers[l + 1]), 3u + (unsigned) l);
		flops_row += 2.0 * (double) (layers[l] * layers[l + 1]);
	}
	for (int l = 0; l < 4; l++)
		act[l] = filled((size_t) (MAX_M * layers[l]), 11u);
	row = filled((size_t) layers[0], 5u);
	row_in_batch(act, W, row, 2, ref);
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
	{
		int64_t		M = ms[i];
		float		out[10];
		double		best = 1e30;

		row_in_batch(act, W, row, M, out);
		for (int r = 0; r < REPS; r++)
		{
			double		t = cpu_s();

			for (int64_t done = 0; done < ROWS_PER_PASS; done += M)
				forward(act, W, M);
			t = cpu_s() - t;
			if (t < best)
				best = t;
		}
		printf("rows %lld us_per_row %.2f gflops %.1f same_as_2_rows %s\n", (long long) M,
			   best / (double) ROWS_PER_PASS * 1e6, flops_row * ROWS_PER_PASS / best / 1e9,
			   memcmp(ref, out, sizeof(ref)) == 0 ? "yes" : "no");
	}
	return 0;
}
