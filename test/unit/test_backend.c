/*-------------------------------------------------------------------------
 *
 * test_backend.c
 *	  Unit tests: the oneDNN kernels (conv2d_dnnl.c, dl_sgemm in
 *	  backend.c) against the OpenBLAS ones (im2col convolutions, cblas
 *	  sgemm) and the double-precision references, and the switch between
 *	  them (dl_backend.h).
 *
 * When the build has no oneDNN (WITH_ONEDNN=0) the same tests check that
 * every oneDNN convolution entry point refuses with DL_ERR_UNSUPPORTED
 * and writes nothing, and that models train through OpenBLAS.
 *
 * IDENTIFICATION
 *	  test/unit/test_backend.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "ref_kernels.h"
#include "madlib_dl/dl_backend.h"
#include "madlib_dl/dl_keras.h"
#include "madlib_dl/dl_model.h"
#include "dl_kernels.h"

#define TOL 1e-5

typedef struct ConvCase
{
	int64_t		B, H, W, C, OC;
	int			KH, KW, SH, SW;
	DlPadding	padding;
} ConvCase;

/* the bench CNN's two layers, odd sizes, strides, paddings, pointwise */
static const ConvCase cases[] = {
	{16, 28, 28, 1, 32, 3, 3, 1, 1, DL_PADDING_VALID},
	{16, 13, 13, 32, 64, 3, 3, 1, 1, DL_PADDING_VALID},
	{2, 7, 7, 3, 4, 3, 3, 1, 1, DL_PADDING_SAME},
	{3, 9, 8, 2, 5, 3, 2, 2, 2, DL_PADDING_SAME},
	{1, 10, 11, 1, 3, 4, 3, 2, 3, DL_PADDING_VALID},
	{2, 10, 11, 2, 3, 4, 3, 2, 3, DL_PADDING_SAME},
	{2, 6, 5, 4, 3, 1, 1, 1, 1, DL_PADDING_VALID},
	{2, 6, 5, 4, 3, 1, 1, 2, 2, DL_PADDING_SAME},
	{2, 5, 5, 2, 3, 5, 5, 1, 1, DL_PADDING_SAME},
	{1, 4, 3, 2, 2, 5, 4, 1, 1, DL_PADDING_SAME},
	{2, 8, 8, 3, 2, 2, 2, 2, 2, DL_PADDING_VALID},
	{1, 6, 9, 2, 2, 2, 4, 3, 1, DL_PADDING_SAME},
	{4, 9, 9, 17, 33, 3, 3, 1, 1, DL_PADDING_SAME},	/* channels not a multiple of 16 */
};

#define N_CASES ((int) (sizeof(cases) / sizeof(cases[0])))

static float *
fnew(int64_t n, DlRng *r, double lo, double hi)
{
	float	   *p = malloc((size_t) (n > 0 ? n : 1) * sizeof(float));

	assert_non_null(p);
	for (int64_t i = 0; i < n; i++)
		p[i] = r != NULL ? (float) (lo + (hi - lo) * dl_rng_uniform(r)) : (float) lo;
	return p;
}

static void
check_close(const char *what, int k, const float *got, const float *want, int64_t n)
{
	double		e = rel_l2_error_f(got, want, (size_t) n);

	if (!(e < TOL))
		fail_msg("%s (case %d): relative L2 error %g against OpenBLAS", what, k, e);
}

/* oneDNN forward and backward = im2col's, for every case and variant. */
static void
test_against_im2col(void **state)
{
	DlRng		rng;

	dl_backend_set(DL_BACKEND_AUTO);
	dl_rng_seed(&rng, 41);
	for (int k = 0; k < N_CASES; k++)
	{
		const ConvCase *cc = &cases[k];
		DlConvGeom	g;
		int64_t		nx = cc->B * cc->H * cc->W * cc->C;
		int64_t		nk = (int64_t) cc->KH * cc->KW * cc->C * cc->OC;
		int64_t		ny;
		float	   *x,
				   *K,
				   *b,
				   *dy,
				   *work,
				   *y1,
				   *y2,
				   *dx1,
				   *dx2,
				   *dK1,
				   *dK2,
				   *db1,
				   *db2;
		TestAllocCounter counter;
		DlAllocator alloc = test_allocator(&counter);
		DlScratch	scratch = {&alloc, NULL, 0, SIZE_MAX};
		DlError		err;
		static const DlActivation acts[] = {DL_ACT_RELU, DL_ACT_LINEAR, DL_ACT_TANH};

		dl_conv_geom_init(&g, cc->B, cc->H, cc->W, cc->C, cc->OC, cc->KH, cc->KW,
						  cc->SH, cc->SW, cc->padding);
		ny = g.B * g.OH * g.OW * g.OC;
		x = fnew(nx, &rng, -1, 1);
		K = fnew(nk, &rng, -1, 1);
		b = fnew(cc->OC, &rng, -1, 1);
		dy = fnew(ny, &rng, -1, 1);
		work = fnew((int64_t) dl_conv2d_workspace_floats(&g), NULL, 0, 0);
		y1 = fnew(ny, NULL, 0, 0);
		y2 = fnew(ny, NULL, 7, 0);
		dx1 = fnew(nx, NULL, 0, 0);
		dx2 = fnew(nx, NULL, 7, 0);
		/* dK and db accumulate: start both sides from the same values */
		dK1 = fnew(nk, NULL, 0.25, 0);
		dK2 = fnew(nk, NULL, 0.25, 0);
		db1 = fnew(cc->OC, NULL, -0.5, 0);
		db2 = fnew(cc->OC, NULL, -0.5, 0);

		for (int a = 0; a < 3; a++)
		{
			const float *bias = a == 1 ? NULL : b;
			DlStatus	st;

			dl_conv2d_forward_act(y1, work, x, K, bias, acts[a], &g);
			st = dl_conv2d_dnnl_forward(y2, x, K, bias, acts[a], &g, &scratch, &err);
			if (!dl_backend_onednn_available())
			{
				assert_int_equal(st, DL_ERR_UNSUPPORTED);
				assert_true(y2[0] == 7.0f && y2[ny - 1] == 7.0f);
				continue;
			}
			if (st != DL_OK)
				fail_msg("case %d forward: %s", k, err.msg);
			check_close(a == 0 ? "forward relu" : a == 1 ? "forward no bias" : "forward tanh",
						k, y2, y1, ny);
		}

		dl_conv2d_backward(dx1, dK1, db1, work, dy, x, K, &g);
		if (dl_backend_onednn_available())
		{
			DlStatus	st = dl_conv2d_dnnl_backward(dx2, dK2, db2, dy, x, K, &g, &scratch, &err);

			if (st != DL_OK)
				fail_msg("case %d backward: %s", k, err.msg);
			check_close("dx", k, dx2, dx1, nx);
			check_close("dK", k, dK2, dK1, nk);
			check_close("db", k, db2, db1, cc->OC);

			/* without dx and db: dK still accumulates, dx is not touched */
			memset(dx2, 0, (size_t) nx * sizeof(float));
			dx2[0] = 3.0f;
			assert_int_equal(dl_conv2d_dnnl_backward(NULL, dK2, NULL, dy, x, K, &g, &scratch, &err),
							 DL_OK);
			dl_conv2d_backward(NULL, dK1, NULL, work, dy, x, K, &g);
			check_close("dK twice", k, dK2, dK1, nk);
			assert_true(dx2[0] == 3.0f);

			/* the scratch grew once; the same calls again allocate nothing */
			{
				int64_t		before = counter.total;

				assert_int_equal(dl_conv2d_dnnl_forward(y2, x, K, b, DL_ACT_RELU, &g, &scratch, &err),
								 DL_OK);
				assert_int_equal(dl_conv2d_dnnl_backward(dx2, dK2, db2, dy, x, K, &g, &scratch, &err),
								 DL_OK);
				assert_int_equal(counter.total, before);
			}
		}
		else
			assert_int_equal(dl_conv2d_dnnl_backward(dx2, dK2, db2, dy, x, K, &g, &scratch, &err),
							 DL_ERR_UNSUPPORTED);
		dl_free(&alloc, scratch.p);
		assert_no_leaks(&counter);
		free(x);
		free(K);
		free(b);
		free(dy);
		free(work);
		free(y1);
		free(y2);
		free(dx1);
		free(dx2);
		free(dK1);
		free(dK2);
		free(db1);
		free(db2);
	}
}

/*
 * dl_sgemm and the Dense layer with each backend: against the
 * double-precision reference, and oneDNN against OpenBLAS, for the four
 * transpose combinations, odd sizes, leading dimensions larger than the
 * rows, and beta 0 / 1.
 */
static void
test_sgemm_and_dense(void **state)
{
	static const int64_t shapes[][3] = {{128, 256, 784}, {7, 5, 3}, {1, 1, 1}, {33, 17, 65}, {128, 10, 128}};
	DlRng		rng;

	dl_rng_seed(&rng, 43);
	for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++)
	{
		int64_t		M = shapes[k][0],
					N = shapes[k][1],
					K = shapes[k][2];

		for (int t = 0; t < 4; t++)
		{
			bool		ta = (t & 1) != 0,
						tb = (t & 2) != 0;
			int64_t		lda = (ta ? M : K) + 3,
						ldb = (tb ? K : N) + 2,
						ldc = N + 1;
			float	   *A = fnew((ta ? K : M) * lda, &rng, -1, 1),
					   *B = fnew((tb ? N : K) * ldb, &rng, -1, 1),
					   *C0 = fnew(M * ldc, &rng, -1, 1),
					   *C1 = malloc((size_t) (M * ldc) * sizeof(float)),
					   *C2 = malloc((size_t) (M * ldc) * sizeof(float));
			double	   *R = malloc((size_t) (M * ldc) * sizeof(double));

			for (int beta = 0; beta < 2; beta++)
			{
				memcpy(C1, C0, (size_t) (M * ldc) * sizeof(float));
				memcpy(C2, C0, (size_t) (M * ldc) * sizeof(float));
				dl_backend_set(DL_BACKEND_OPENBLAS);
				dl_sgemm(ta, tb, M, N, K, 0.5f, A, lda, B, ldb, (float) beta, C1, ldc);
				dl_backend_set(DL_BACKEND_AUTO);
				dl_sgemm(ta, tb, M, N, K, 0.5f, A, lda, B, ldb, (float) beta, C2, ldc);
				for (int64_t i = 0; i < M; i++)
					for (int64_t j = 0; j < ldc; j++)
					{
						double		acc = 0.0;

						if (j >= N)
						{
							/* padding columns of C are never written */
							R[i * ldc + j] = C0[i * ldc + j];
							continue;
						}
						for (int64_t p = 0; p < K; p++)
							acc += (double) (ta ? A[p * lda + i] : A[i * lda + p]) *
								(double) (tb ? B[j * ldb + p] : B[p * ldb + j]);
						R[i * ldc + j] = 0.5 * acc + beta * (double) C0[i * ldc + j];
					}
				if (!(rel_l2_error_fd(C1, R, (size_t) (M * ldc)) < TOL))
					fail_msg("openblas sgemm %lld x %lld x %lld trans %d beta %d: error %g",
							 (long long) M, (long long) N, (long long) K, t, beta,
							 rel_l2_error_fd(C1, R, (size_t) (M * ldc)));
				if (!(rel_l2_error_fd(C2, R, (size_t) (M * ldc)) < TOL))
					fail_msg("auto sgemm %lld x %lld x %lld trans %d beta %d: error %g",
							 (long long) M, (long long) N, (long long) K, t, beta,
							 rel_l2_error_fd(C2, R, (size_t) (M * ldc)));
				for (int64_t i = 0; i < M; i++)
					for (int64_t j = N; j < ldc; j++)
						assert_true(C2[i * ldc + j] == C0[i * ldc + j]);
			}
			free(A);
			free(B);
			free(C0);
			free(C1);
			free(C2);
			free(R);
		}
	}

	/* a Dense layer forward and backward: the backends agree */
	{
		int64_t		Bn = 64,
					I = 300,
					O = 70;
		float	   *x = fnew(Bn * I, &rng, -1, 1),
				   *W = fnew(I * O, &rng, -0.2, 0.2),
				   *b = fnew(O, &rng, -1, 1),
				   *dy = fnew(Bn * O, &rng, -1, 1),
				   *y1 = fnew(Bn * O, NULL, 0, 0),
				   *y2 = fnew(Bn * O, NULL, 0, 0),
				   *dx1 = fnew(Bn * I, NULL, 0, 0),
				   *dx2 = fnew(Bn * I, NULL, 0, 0),
				   *dW1 = fnew(I * O, NULL, 0.5, 0),
				   *dW2 = fnew(I * O, NULL, 0.5, 0),
				   *db1 = fnew(O, NULL, 0, 0),
				   *db2 = fnew(O, NULL, 0, 0);

		dl_backend_set(DL_BACKEND_OPENBLAS);
		dl_dense_forward_act(y1, x, W, b, DL_ACT_RELU, Bn, I, O);
		dl_dense_backward(dx1, dW1, db1, dy, x, W, Bn, I, O);
		dl_backend_set(DL_BACKEND_AUTO);
		dl_dense_forward_act(y2, x, W, b, DL_ACT_RELU, Bn, I, O);
		dl_dense_backward(dx2, dW2, db2, dy, x, W, Bn, I, O);
		check_close("dense forward", 0, y2, y1, Bn * O);
		check_close("dense dx", 0, dx2, dx1, Bn * I);
		check_close("dense dW", 0, dW2, dW1, I * O);
		check_close("dense db", 0, db2, db1, O);
		free(x);
		free(W);
		free(b);
		free(dy);
		free(y1);
		free(y2);
		free(dx1);
		free(dx2);
		free(dW1);
		free(dW2);
		free(db1);
		free(db2);
	}
}

/* Switched off: every entry point refuses and writes nothing. */
static void
test_switch_off(void **state)
{
	DlConvGeom	g;
	float		x[2 * 5 * 5 * 2] = {0},
				K[3 * 3 * 2 * 3] = {0},
				y[2 * 3 * 3 * 3],
				dy[2 * 3 * 3 * 3] = {0},
				dK[3 * 3 * 2 * 3];
	TestAllocCounter counter;
	DlAllocator alloc = test_allocator(&counter);
	DlScratch	scratch = {&alloc, NULL, 0, SIZE_MAX};
	DlError		err;

	dl_conv_geom_init(&g, 2, 5, 5, 2, 3, 3, 3, 1, 1, DL_PADDING_VALID);
	for (int i = 0; i < 54; i++)
		y[i] = dK[i] = 9.0f;
	dl_backend_set(DL_BACKEND_OPENBLAS);
	assert_false(dl_backend_uses_onednn());
	assert_int_equal(dl_conv2d_dnnl_forward(y, x, K, NULL, DL_ACT_RELU, &g, &scratch, &err),
					 DL_ERR_UNSUPPORTED);
	assert_int_equal(dl_conv2d_dnnl_backward(NULL, dK, NULL, dy, x, K, &g, &scratch, &err),
					 DL_ERR_UNSUPPORTED);
	for (int i = 0; i < 54; i++)
		assert_true(y[i] == 9.0f && dK[i] == 9.0f);
	assert_int_equal(counter.total, 0);
	dl_backend_set(DL_BACKEND_ONEDNN);
	assert_true(dl_backend_uses_onednn() == dl_backend_onednn_available());
	dl_backend_set(DL_BACKEND_AUTO);
	assert_true(dl_backend_uses_onednn() == dl_backend_onednn_available());
	assert_non_null(dl_backend_onednn_version());
}

/* Every allocation of a oneDNN call failing in turn: NO_MEMORY, no leak. */
static void
test_out_of_memory(void **state)
{
	DlRng		rng;
	DlConvGeom	g;
	float	   *x,
			   *K,
			   *b,
			   *y,
			   *dy,
			   *dx,
			   *dK,
			   *db;
	int			failures = 0;

	if (!dl_backend_onednn_available())
	{
		/* nothing of oneDNN to run out of memory in: still no allocation */
		TestAllocCounter counter;
		DlAllocator alloc = test_allocator(&counter);
		DlScratch	scratch = {&alloc, NULL, 0, SIZE_MAX};
		DlError		err;
		float		one = 1.0f;

		dl_conv_geom_init(&g, 1, 1, 1, 1, 1, 1, 1, 1, 1, DL_PADDING_VALID);
		assert_int_equal(dl_conv2d_dnnl_forward(&one, &one, &one, NULL, DL_ACT_LINEAR, &g,
												&scratch, &err), DL_ERR_UNSUPPORTED);
		assert_int_equal(counter.total, 0);
		return;
	}
	dl_backend_set(DL_BACKEND_AUTO);
	dl_rng_seed(&rng, 5);
	dl_conv_geom_init(&g, 4, 13, 13, 32, 64, 3, 3, 1, 1, DL_PADDING_VALID);
	x = fnew(4 * 13 * 13 * 32, &rng, -1, 1);
	K = fnew(9 * 32 * 64, &rng, -1, 1);
	b = fnew(64, &rng, -1, 1);
	y = fnew(4 * 11 * 11 * 64, NULL, 0, 0);
	dy = fnew(4 * 11 * 11 * 64, &rng, -1, 1);
	dx = fnew(4 * 13 * 13 * 32, NULL, 0, 0);
	dK = fnew(9 * 32 * 64, NULL, 0, 0);
	db = fnew(64, NULL, 0, 0);
	for (int64_t fail = 0; fail < 64; fail++)
	{
		TestAllocCounter counter;
		DlAllocator alloc = test_allocator(&counter);
		DlScratch	scratch = {&alloc, NULL, 0, SIZE_MAX};
		DlError		err;
		DlStatus	st;

		counter.fail_after = fail;
		st = dl_conv2d_dnnl_forward(y, x, K, b, DL_ACT_RELU, &g, &scratch, &err);
		if (st == DL_OK)
			st = dl_conv2d_dnnl_backward(dx, dK, db, dy, x, K, &g, &scratch, &err);
		if (st != DL_OK)
		{
			assert_int_equal(st, DL_ERR_NO_MEMORY);
			failures++;
		}
		dl_free(&alloc, scratch.p);
		assert_no_leaks(&counter);
	}
	assert_true(failures > 0);
	free(x);
	free(K);
	free(b);
	free(y);
	free(dy);
	free(dx);
	free(dK);
	free(db);
}

/*
 * The scratch limit: a call that would need more is refused
 * (DL_ERR_UNSUPPORTED) before it writes or allocates anything; exactly
 * enough runs, and the scratch never holds more than limit + 64 bytes.
 */
static void
test_scratch_limit(void **state)
{
	DlRng		rng;
	DlConvGeom	g;
	float	   *x,
			   *K,
			   *b,
			   *y,
			   *dy,
			   *dx,
			   *dK;
	size_t		need_f = 0,
				need_b = 0;
	int64_t		ny = 4 * 11 * 11 * 64,
				nk = 9 * 32 * 64;

	if (!dl_backend_onednn_available())
		skip();
	dl_backend_set(DL_BACKEND_AUTO);
	dl_rng_seed(&rng, 6);
	dl_conv_geom_init(&g, 4, 13, 13, 32, 64, 3, 3, 1, 1, DL_PADDING_VALID);
	x = fnew(4 * 13 * 13 * 32, &rng, -1, 1);
	K = fnew(nk, &rng, -1, 1);
	b = fnew(64, &rng, -1, 1);
	y = fnew(ny, NULL, 7, 0);
	dy = fnew(ny, &rng, -1, 1);
	dx = fnew(4 * 13 * 13 * 32, NULL, 0, 0);
	dK = fnew(nk, NULL, 7, 0);

	/* what each pass needs, unlimited */
	for (int pass = 0; pass < 2; pass++)
	{
		TestAllocCounter counter;
		DlAllocator alloc = test_allocator(&counter);
		DlScratch	scratch = {&alloc, NULL, 0, SIZE_MAX};
		DlError		err;
		DlStatus	st = pass == 0 ?
			dl_conv2d_dnnl_forward(y, x, K, b, DL_ACT_RELU, &g, &scratch, &err) :
			dl_conv2d_dnnl_backward(dx, dK, NULL, dy, x, K, &g, &scratch, &err);

		assert_int_equal(st, DL_OK);
		assert_true(scratch.cap > DL_SCRATCH_ALIGN);
		assert_int_equal(counter.total, 1);	/* one allocation per call at most */
		if (pass == 0)
			need_f = scratch.cap - DL_SCRATCH_ALIGN;
		else
			need_b = scratch.cap - DL_SCRATCH_ALIGN;
		dl_free(&alloc, scratch.p);
		assert_no_leaks(&counter);
	}

	/* below the need: refused, nothing written, nothing allocated */
	for (int pass = 0; pass < 2; pass++)
	{
		size_t		limits[2] = {0, (pass == 0 ? need_f : need_b) - 1};

		for (int i = 0; i < 2; i++)
		{
			TestAllocCounter counter;
			DlAllocator alloc = test_allocator(&counter);
			DlScratch	scratch = {&alloc, NULL, 0, limits[i]};
			DlError		err;
			float	   *out = pass == 0 ? y : dK;
			int64_t		n = pass == 0 ? ny : nk;

			for (int64_t j = 0; j < n; j++)
				out[j] = 7.0f;
			assert_int_equal(pass == 0 ?
							 dl_conv2d_dnnl_forward(y, x, K, b, DL_ACT_RELU, &g, &scratch, &err) :
							 dl_conv2d_dnnl_backward(dx, dK, NULL, dy, x, K, &g, &scratch, &err),
							 DL_ERR_UNSUPPORTED);
			assert_int_equal(counter.total, 0);
			for (int64_t j = 0; j < n; j++)
				assert_true(out[j] == 7.0f);
		}
	}

	/* exactly the need: runs, in one allocation of limit + 64 bytes */
	for (int pass = 0; pass < 2; pass++)
	{
		TestAllocCounter counter;
		DlAllocator alloc = test_allocator(&counter);
		DlScratch	scratch = {&alloc, NULL, 0, pass == 0 ? need_f : need_b};
		DlError		err;

		assert_int_equal(pass == 0 ?
						 dl_conv2d_dnnl_forward(y, x, K, b, DL_ACT_RELU, &g, &scratch, &err) :
						 dl_conv2d_dnnl_backward(dx, dK, NULL, dy, x, K, &g, &scratch, &err),
						 DL_OK);
		assert_true(counter.bytes_peak <= scratch.limit + DL_SCRATCH_ALIGN);
		/* and within the budget the model's estimate counts */
		assert_true((double) scratch.limit <= dl_conv2d_dnnl_scratch_budget(&g, 1));
		dl_free(&alloc, scratch.p);
		assert_no_leaks(&counter);
	}
	free(x);
	free(K);
	free(b);
	free(y);
	free(dy);
	free(dx);
	free(dK);
}

static const char cnn_json[] =
"{\"class_name\": \"Sequential\", \"config\": {\"name\": \"cnn\", \"layers\": ["
"{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 10, 10, 1]}},"
"{\"class_name\": \"Conv2D\", \"config\": {\"name\": \"c1\", \"filters\": 8, \"kernel_size\": [3, 3],"
" \"activation\": \"relu\"}},"
"{\"class_name\": \"MaxPooling2D\", \"config\": {\"name\": \"p1\", \"pool_size\": [2, 2]}},"
"{\"class_name\": \"Conv2D\", \"config\": {\"name\": \"c2\", \"filters\": 16, \"kernel_size\": [3, 3],"
" \"padding\": \"same\", \"activation\": \"relu\"}},"
"{\"class_name\": \"Flatten\", \"config\": {\"name\": \"f\"}},"
"{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\", \"units\": 3, \"activation\": \"softmax\"}}]}}";

/* Train the small CNN 3 epochs; the final weights into w (P floats). */
static size_t
train_cnn(DlBackend backend, float *w, size_t cap)
{
	TestAllocCounter counter;
	DlAllocator alloc = test_allocator(&counter);
	DlModelSpec *spec = NULL;
	DlModel    *m = NULL;
	DlOptimConfig o;
	DlTrainConfig cfg;
	DlError		err;
	DlRng		r;
	float	   *x = fnew(60 * 100, NULL, 0, 0),
			   *y = fnew(60 * 3, NULL, 0, 0);
	size_t		P;

	dl_rng_seed(&r, 77);
	for (int i = 0; i < 60; i++)
	{
		int			c = (int) dl_rng_below(&r, 3);

		for (int j = 0; j < 100; j++)
			x[i * 100 + j] = (float) (dl_rng_normal(&r) * 0.5 + (j % 3 == c ? 1.0 : 0.0));
		y[i * 3 + c] = 1.0f;
	}
	dl_backend_set(backend);
	assert_int_equal(dl_keras_parse(cnn_json, strlen(cnn_json), &alloc, &spec, &err), DL_OK);
	dl_optim_config_default(&o, DL_OPTIM_ADAM);
	assert_int_equal(dl_model_create(spec, &o, &alloc, &m, &err), DL_OK);
	assert_int_equal(dl_model_init_weights(m, 9, &err), DL_OK);
	memset(&cfg, 0, sizeof(cfg));
	cfg.loss = DL_LOSS_CATEGORICAL_CROSSENTROPY;
	cfg.batch_size = 16;
	cfg.shuffle = true;
	for (int e = 0; e < 3; e++)
		if (dl_model_train_epoch(m, &cfg, x, y, 60, NULL, &err) != DL_OK)
			fail_msg("epoch %d: %s", e, err.msg);
	P = dl_model_n_params(m);
	assert_true(P <= cap);
	memcpy(w, dl_model_params(m), P * sizeof(float));
	dl_model_free(m);
	dl_model_spec_free(spec, &alloc);
	assert_no_leaks(&counter);
	free(x);
	free(y);
	dl_backend_set(DL_BACKEND_AUTO);
	return P;
}

/*
 * Training through the model: byte-identical weights run to run with
 * each backend, and the two backends within float rounding of each other.
 */
static void
test_model_training(void **state)
{
	enum
	{
		CAP = 8192
	};
	float	   *a = malloc(CAP * sizeof(float)),
			   *b = malloc(CAP * sizeof(float)),
			   *c = malloc(CAP * sizeof(float));
	size_t		P;
	double		e;

	P = train_cnn(DL_BACKEND_AUTO, a, CAP);
	assert_int_equal(train_cnn(DL_BACKEND_AUTO, b, CAP), P);
	assert_memory_equal(a, b, P * sizeof(float));
	assert_int_equal(train_cnn(DL_BACKEND_OPENBLAS, c, CAP), P);
	e = rel_l2_error_f(a, c, P);
	if (!(e < 1e-3))
		fail_msg("oneDNN and OpenBLAS weights differ: relative L2 %g", e);
	free(a);
	free(b);
	free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_im2col),
		cmocka_unit_test(test_sgemm_and_dense),
		cmocka_unit_test(test_switch_off),
		cmocka_unit_test(test_out_of_memory),
		cmocka_unit_test(test_scratch_limit),
		cmocka_unit_test(test_model_training),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
