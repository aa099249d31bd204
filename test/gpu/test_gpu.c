/*-------------------------------------------------------------------------
 *
 * test_gpu.c
 *	  GPU unit tests: every CUDA kernel against the CPU reference engine,
 *	  whole-model training CPU vs GPU, GPU reproducibility, memory release.
 *
 * Not built by make unit (it needs a GPU): scripts/gpu_check.sh builds
 * and runs it.  Plain C with its own checks (no cmocka, which GPU hosts
 * may lack); exit status 0 only when every check passed.
 *
 * Tolerances (GPU reductions run in another order than OpenBLAS):
 *	 kernels          relative L2 error <= 1e-5 (sgemm, pooling, activations),
 *	                  optimizers <= 1e-6 (one double-precision update; fma)
 *	 whole model      relative L2 error of the weights after one epoch
 *	                  (8 steps) <= 1e-4, loss sums within 1e-4 relative
 *	 reproducibility  two GPU runs (with Dropout): identical bytes
 *
 * Test code, not engine code: uses malloc and prints.
 *
 * IDENTIFICATION
 *	  test/gpu/test_gpu.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cublas_v2.h>

#include "madlib_dl/dl_cuda.h"
#include "madlib_dl/dl_model.h"
#include "dl_kernels.h"
#include "model_impl.h"
#include "cuda/cuda_kernels.h"
#include "cuda/cuda_ops.h"

static int n_checks = 0;
static int n_failed = 0;

#define CHECK(cond, ...) \
	do { n_checks++; if (!(cond)) { n_failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
		 printf(__VA_ARGS__); printf("\n"); } } while (0)

#define CU(call) \
	do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
		printf("FATAL %s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(2); } } while (0)

static void *t_alloc(void *ctx, size_t n) { (void) ctx; return calloc(1, n); }
static void t_free(void *ctx, void *p) { (void) ctx; free(p); }
static const DlAllocator ALLOC = {t_alloc, t_free, NULL};

static cublasHandle_t blas;

/* Reproducible uniform values in [lo, hi). */
static void
fill(float *v, int64_t n, uint64_t seed, float lo, float hi)
{
	DlRng		r;

	dl_rng_seed(&r, seed);
	for (int64_t i = 0; i < n; i++)
		v[i] = lo + (hi - lo) * (float) dl_rng_uniform(&r);
}

static double
rel_l2(const float *a, const float *ref, int64_t n)
{
	double		num = 0,
				den = 0;

	for (int64_t i = 0; i < n; i++)
	{
		double		d = (double) a[i] - (double) ref[i];

		num += d * d;
		den += (double) ref[i] * ref[i];
	}
	return den > 0 ? sqrt(num / den) : sqrt(num);
}

static float *
dev(const float *h, int64_t n)
{
	float	   *d;

	CU(cudaMalloc((void **) &d, (size_t) (n > 0 ? n : 1) * sizeof(float)));
	if (h != NULL)
		CU(cudaMemcpy(d, h, (size_t) n * sizeof(float), cudaMemcpyHostToDevice));
	else
		CU(cudaMemset(d, 0, (size_t) (n > 0 ? n : 1) * sizeof(float)));
	return d;
}

static float *
host(const float *d, int64_t n)
{
	float	   *h = malloc((size_t) (n > 0 ? n : 1) * sizeof(float));

	CU(cudaDeviceSynchronize());
	CU(cudaMemcpy(h, d, (size_t) n * sizeof(float), cudaMemcpyDeviceToHost));
	return h;
}

#define EXPECT_CLOSE(gpu_dev, ref, n, tol, what) \
	do { float *h_ = host((gpu_dev), (n)); double e_ = rel_l2(h_, (ref), (n)); \
		 CHECK(e_ <= (tol), "%s: rel L2 error %.3g > %.1g", (what), e_, (double) (tol)); \
		 free(h_); } while (0)

static float *
ones_dev(int64_t n)
{
	float	   *h = malloc((size_t) n * sizeof(float));
	float	   *d;

	for (int64_t i = 0; i < n; i++)
		h[i] = 1.0f;
	d = dev(h, n);
	free(h);
	return d;
}

/* ------------------------------------------------------------------ */

static void
test_dense(void)
{
	const int64_t B = 37, I = 50, O = 23;
	DlActivation acts[] = {DL_ACT_LINEAR, DL_ACT_RELU, DL_ACT_SIGMOID, DL_ACT_TANH,
	DL_ACT_SOFTMAX, DL_ACT_ELU, DL_ACT_SOFTPLUS};

	for (size_t a = 0; a < sizeof(acts) / sizeof(acts[0]); a++)
	{
		float	   *x = malloc(B * I * 4), *W = malloc(I * O * 4), *b = malloc(O * 4);
		float	   *y = malloc(B * O * 4), *dy = malloc(B * O * 4), *dx = malloc(B * I * 4);
		float	   *dW = calloc(I * O, 4), *db = calloc(O, 4), *dz = malloc(B * O * 4);
		float	   *d_x, *d_W, *d_b, *d_y, *d_dy, *d_dx, *d_dW, *d_db, *d_ones;
		char		what[64];

		fill(x, B * I, 1, -1, 1);
		fill(W, I * O, 2, -0.3f, 0.3f);
		fill(b, O, 3, -0.1f, 0.1f);
		fill(dy, B * O, 4, -1, 1);
		dl_dense_forward_act(y, x, W, b, acts[a], B, I, O);
		d_x = dev(x, B * I); d_W = dev(W, I * O); d_b = dev(b, O); d_y = dev(NULL, B * O);
		CHECK(dl_cu_dense_forward(blas, d_y, d_x, d_W, d_b, acts[a], B, I, O, 0) == CUBLAS_STATUS_SUCCESS, "sgemm");
		snprintf(what, sizeof(what), "dense forward %s", dl_activation_name(acts[a]));
		EXPECT_CLOSE(d_y, y, B * O, 1e-5, what);

		/* activation backward then dense backward */
		dl_activation_backward(acts[a], dz, dy, y, B, O);
		dl_dense_backward(dx, dW, db, dz, x, W, B, I, O);
		d_dy = dev(dy, B * O); d_dx = dev(NULL, B * I); d_dW = dev(NULL, I * O); d_db = dev(NULL, O);
		d_ones = ones_dev(B);
		{
			float	   *yh = host(d_y, B * O);	/* GPU's own forward output */
			float	   *d_yc = dev(y, B * O);

			free(yh);
			dl_cu_act_backward(acts[a], d_dy, d_dy, d_yc, B, O, 0);
			cudaFree(d_yc);
		}
		snprintf(what, sizeof(what), "activation backward %s", dl_activation_name(acts[a]));
		EXPECT_CLOSE(d_dy, dz, B * O, 1e-5, what);
		CHECK(dl_cu_dense_backward(blas, d_dx, d_dW, d_db, d_dy, d_x, d_W, d_ones, B, I, O) == CUBLAS_STATUS_SUCCESS, "sgemm");
		EXPECT_CLOSE(d_dx, dx, B * I, 1e-5, "dense backward dx");
		EXPECT_CLOSE(d_dW, dW, I * O, 1e-5, "dense backward dW");
		EXPECT_CLOSE(d_db, db, O, 1e-5, "dense backward db");
		cudaFree(d_x); cudaFree(d_W); cudaFree(d_b); cudaFree(d_y); cudaFree(d_dy);
		cudaFree(d_dx); cudaFree(d_dW); cudaFree(d_db); cudaFree(d_ones);
		free(x); free(W); free(b); free(y); free(dy); free(dx); free(dW); free(db); free(dz);
	}
}

static void
to_cu(DlCuGeom *c, const DlConvGeom *g)
{
	c->B = g->B; c->H = g->H; c->W = g->W; c->C = g->C;
	c->OH = g->OH; c->OW = g->OW; c->OC = g->OC;
	c->KH = g->KH; c->KW = g->KW; c->SH = g->SH; c->SW = g->SW;
	c->pad_top = g->pad_top; c->pad_left = g->pad_left;
}

static void
test_conv(void)
{
	struct { int KH, KW, S; DlPadding pad; } cases[] = {
		{3, 3, 1, DL_PADDING_VALID}, {3, 3, 2, DL_PADDING_SAME}, {5, 3, 1, DL_PADDING_SAME},
		{1, 1, 1, DL_PADDING_VALID}, {2, 2, 2, DL_PADDING_VALID}};

	for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++)
	{
		DlConvGeom	g;
		DlCuGeom	cg;
		int64_t		B = 3, H = 9, W = 8, C = 3, OC = 5;
		int64_t		nx, ny, nk, ncol;
		float	   *x, *K, *b, *y, *dy, *dx, *dK, *db, *work;
		float	   *d_x, *d_K, *d_b, *d_y, *d_dy, *d_dx, *d_dK, *d_db, *d_col, *d_dcol, *d_ones;
		char		what[80];

		dl_conv_geom_init(&g, B, H, W, C, OC, cases[t].KH, cases[t].KW, cases[t].S, cases[t].S,
						  cases[t].pad);
		to_cu(&cg, &g);
		nx = B * H * W * C; ny = B * g.OH * g.OW * OC; nk = g.KH * g.KW * C * OC;
		ncol = dl_cu_conv_col_floats(&cg);
		x = malloc(nx * 4); K = malloc(nk * 4); b = malloc(OC * 4); y = malloc(ny * 4);
		dy = malloc(ny * 4); dx = malloc(nx * 4); dK = calloc(nk, 4); db = calloc(OC, 4);
		work = malloc(dl_conv2d_workspace_floats(&g) * 4 + 64);
		fill(x, nx, 10 + t, -1, 1); fill(K, nk, 20 + t, -0.5f, 0.5f); fill(b, OC, 30, -0.1f, 0.1f);
		fill(dy, ny, 40 + t, -1, 1);
		dl_conv2d_forward_act(y, work, x, K, b, DL_ACT_RELU, &g);
		dl_conv2d_backward(dx, dK, db, work, dy, x, K, &g);
		d_x = dev(x, nx); d_K = dev(K, nk); d_b = dev(b, OC); d_y = dev(NULL, ny);
		d_dy = dev(dy, ny); d_dx = dev(NULL, nx); d_dK = dev(NULL, nk); d_db = dev(NULL, OC);
		d_col = dev(NULL, ncol); d_dcol = dev(NULL, ncol); d_ones = ones_dev(B * g.OH * g.OW);
		dl_cu_conv2d_forward(blas, d_y, d_col, d_x, d_K, d_b, DL_ACT_RELU, &cg, 0);
		dl_cu_conv2d_backward(blas, d_dx, d_dK, d_db, d_col, d_dcol, d_dy, d_x, d_K, d_ones, &cg, 0);
		snprintf(what, sizeof(what), "conv %dx%d s%d %s forward", cases[t].KH, cases[t].KW,
				 cases[t].S, cases[t].pad == DL_PADDING_SAME ? "same" : "valid");
		EXPECT_CLOSE(d_y, y, ny, 1e-5, what);
		EXPECT_CLOSE(d_dx, dx, nx, 1e-5, "conv backward dx");
		EXPECT_CLOSE(d_dK, dK, nk, 1e-5, "conv backward dK");
		EXPECT_CLOSE(d_db, db, OC, 1e-5, "conv backward db");
		cudaFree(d_x); cudaFree(d_K); cudaFree(d_b); cudaFree(d_y); cudaFree(d_dy); cudaFree(d_dx);
		cudaFree(d_dK); cudaFree(d_db); cudaFree(d_col); cudaFree(d_dcol); cudaFree(d_ones);
		free(x); free(K); free(b); free(y); free(dy); free(dx); free(dK); free(db); free(work);
	}
}

static void
test_pools(void)
{
	struct { int P, S; DlPadding pad; } cases[] = {
		{2, 2, DL_PADDING_VALID}, {3, 2, DL_PADDING_SAME}, {3, 1, DL_PADDING_VALID}};

	for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++)
	{
		DlPoolGeom	g;
		DlCuGeom	cg;
		int64_t		B = 2, H = 7, W = 6, C = 4;
		int64_t		nx, ny;
		float	   *x, *y, *dy, *dx;
		int64_t    *am;
		float	   *d_x, *d_y, *d_dy, *d_dx;
		int32_t    *d_am;

		dl_pool_geom_init(&g, B, H, W, C, cases[t].P, cases[t].P, cases[t].S, cases[t].S,
						  cases[t].pad);
		cg.B = B; cg.H = H; cg.W = W; cg.C = C; cg.OH = g.OH; cg.OW = g.OW; cg.OC = C;
		cg.KH = g.PH; cg.KW = g.PW; cg.SH = g.SH; cg.SW = g.SW;
		cg.pad_top = g.pad_top; cg.pad_left = g.pad_left;
		nx = B * H * W * C; ny = B * g.OH * g.OW * C;
		x = malloc(nx * 4); y = malloc(ny * 4); dy = malloc(ny * 4); dx = malloc(nx * 4);
		am = malloc(ny * 8);
		fill(x, nx, 50 + t, -1, 1); fill(dy, ny, 60 + t, -1, 1);
		d_x = dev(x, nx); d_y = dev(NULL, ny); d_dy = dev(dy, ny); d_dx = dev(NULL, nx);
		CU(cudaMalloc((void **) &d_am, ny * 4));

		dl_maxpool2d_forward(y, am, x, &g);
		dl_maxpool2d_backward(dx, dy, am, &g);
		dl_cu_maxpool_forward(d_y, d_am, d_x, &cg, 0);
		dl_cu_maxpool_backward(d_dx, d_dy, d_am, &cg, 0);
		EXPECT_CLOSE(d_y, y, ny, 0, "maxpool forward (exact)");
		EXPECT_CLOSE(d_dx, dx, nx, 1e-6, "maxpool backward");

		dl_avgpool2d_forward(y, x, &g);
		dl_avgpool2d_backward(dx, dy, &g);
		dl_cu_avgpool_forward(d_y, d_x, &cg, 0);
		dl_cu_avgpool_backward(d_dx, d_dy, &cg, 0);
		EXPECT_CLOSE(d_y, y, ny, 1e-6, "avgpool forward");
		EXPECT_CLOSE(d_dx, dx, nx, 1e-6, "avgpool backward");

		dl_global_avgpool2d_forward(y, x, B, H * W, C);
		dl_global_avgpool2d_backward(dx, dy, B, H * W, C);
		dl_cu_global_avgpool_forward(d_y, d_x, B, H * W, C, 0);
		dl_cu_global_avgpool_backward(d_dx, d_dy, B, H * W, C, 0);
		EXPECT_CLOSE(d_y, y, B * C, 1e-6, "global avgpool forward");
		EXPECT_CLOSE(d_dx, dx, nx, 1e-6, "global avgpool backward");

		cudaFree(d_x); cudaFree(d_y); cudaFree(d_dy); cudaFree(d_dx); cudaFree(d_am);
		free(x); free(y); free(dy); free(dx); free(am);
	}
}

static void
test_dropout(void)
{
	int64_t		n = 100000;
	float	   *x = malloc(n * 4), *m, *y;
	float	   *d_x = NULL, *d_y, *d_m, *d_m2;
	int64_t		zeros = 0;
	int			same;

	fill(x, n, 70, 0.5f, 1.5f);
	d_x = dev(x, n); d_y = dev(NULL, n); d_m = dev(NULL, n); d_m2 = dev(NULL, n);
	dl_cu_dropout_forward(d_y, d_m, d_x, n, 0.3, 12345, 0);
	dl_cu_dropout_forward(d_y, d_m2, d_x, n, 0.3, 12345, 0);
	m = host(d_m, n);
	y = host(d_m2, n);
	same = memcmp(m, y, n * 4) == 0;
	free(y);
	y = host(d_y, n);
	for (int64_t i = 0; i < n; i++)
	{
		zeros += m[i] == 0.0f;
		if (m[i] != 0.0f && fabsf(m[i] - 1.0f / 0.7f) > 1e-6f)
			break;
	}
	CHECK(same, "dropout: same key gives a different mask");
	CHECK(fabs((double) zeros / n - 0.3) < 0.01, "dropout: dropped fraction %g, expected 0.3",
		  (double) zeros / n);
	CHECK(y[7] == x[7] * m[7], "dropout: y != x * mask");
	cudaFree(d_x); cudaFree(d_y); cudaFree(d_m); cudaFree(d_m2);
	free(x); free(m); free(y);
}

static void
test_losses(void)
{
	const int64_t B = 64, K = 10;
	float	   *z = malloc(B * K * 4), *p = malloc(B * K * 4), *yo = calloc(B * K, 4),
			   *ys = malloc(B * 4), *g = malloc(B * K * 4);
	float	   *d_p, *d_yo, *d_ys, *d_g;
	double	   *d_l, *d_c, *d_acc;
	double		acc[2];
	DlRng		r;

	dl_rng_seed(&r, 80);
	fill(z, B * K, 81, -3, 3);
	dl_activation_forward(DL_ACT_SOFTMAX, p, z, B, K);
	for (int64_t b = 0; b < B; b++)
	{
		int64_t		t = (int64_t) dl_rng_below(&r, K);

		ys[b] = (float) t;
		yo[b * K + t] = 1.0f;
	}
	d_p = dev(p, B * K); d_yo = dev(yo, B * K); d_ys = dev(ys, B); d_g = dev(NULL, B * K);
	CU(cudaMalloc((void **) &d_l, B * 8)); CU(cudaMalloc((void **) &d_c, B * 8));
	CU(cudaMalloc((void **) &d_acc, 16));

	for (int sparse = 0; sparse < 2; sparse++)
	{
		DlLossKind	lk = sparse ? DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY : DL_LOSS_CATEGORICAL_CROSSENTROPY;
		const float *y = sparse ? ys : yo;
		double		L = dl_loss_compute(lk, NULL, p, y, B, K, 1.0);
		DlMetricKind mk = sparse ? DL_METRIC_SPARSE_CATEGORICAL_ACCURACY : DL_METRIC_CATEGORICAL_ACCURACY;
		double		M = dl_metric_sum(mk, 5, p, y, B, K);

		/* fused gradient: (p * sum(y) - y) / B */
		for (int64_t i = 0; i < B * K; i++)
			g[i] = (float) ((p[i] - yo[i]) / (double) B);
		CU(cudaMemset(d_acc, 0, 16));
		dl_cu_loss(d_g, d_l, d_c, d_p, sparse ? d_ys : d_yo,
				   sparse ? DL_CU_LOSS_SPARSE_CCE : DL_CU_LOSS_CCE, B, K, 1.0 / B, 0);
		dl_cu_sum_into(d_acc, NULL, d_l, d_c, B, 0);
		CU(cudaMemcpy(acc, d_acc, 16, cudaMemcpyDeviceToHost));
		CHECK(fabs(acc[0] - L) <= 1e-6 * fabs(L), "%s loss %.9g vs CPU %.9g", dl_loss_name(lk), acc[0], L);
		CHECK(acc[1] == M, "%s accuracy %g vs CPU %g", dl_loss_name(lk), acc[1], M);
		EXPECT_CLOSE(d_g, g, B * K, 1e-6, "softmax-crossentropy fused gradient");
	}
	{
		double		L = dl_loss_compute(DL_LOSS_MEAN_SQUARED_ERROR, g, p, yo, B, K, 1.0 / B);

		CU(cudaMemset(d_acc, 0, 16));
		dl_cu_loss(d_g, d_l, NULL, d_p, d_yo, DL_CU_LOSS_MSE, B, K, 1.0 / B, 0);
		dl_cu_sum_into(d_acc, NULL, d_l, NULL, B, 0);
		CU(cudaMemcpy(acc, d_acc, 16, cudaMemcpyDeviceToHost));
		CHECK(fabs(acc[0] - L) <= 1e-6 * fabs(L), "mse loss %.9g vs CPU %.9g", acc[0], L);
		EXPECT_CLOSE(d_g, g, B * K, 1e-6, "mse gradient");
	}
	cudaFree(d_p); cudaFree(d_yo); cudaFree(d_ys); cudaFree(d_g); cudaFree(d_l); cudaFree(d_c);
	cudaFree(d_acc);
	free(z); free(p); free(yo); free(ys); free(g);
}

static void
test_optimizers(void)
{
	const int64_t P = 1000;
	struct { DlOptimKind kind; double mom; bool nest; bool ams; double clipv; const char *name; } cases[] = {
		{DL_OPTIM_SGD, 0, false, false, 0, "SGD"},
		{DL_OPTIM_SGD, 0.9, false, false, 0, "SGD momentum"},
		{DL_OPTIM_SGD, 0.9, true, false, 0.05, "SGD nesterov clipvalue"},
		{DL_OPTIM_ADAM, 0, false, false, 0, "Adam"},
		{DL_OPTIM_ADAM, 0, false, true, 0, "Adam amsgrad"}};

	for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++)
	{
		DlOptimConfig c;
		DlOptimState st;
		DlParamRange rg[2] = {{0, 400}, {500, 1000}};
		float	   *p = malloc(P * 4), *g = malloc(P * 4), *g2 = malloc(P * 4);
		float	   *d_p, *d_g, *d_s;
		int		   *d_flag;
		DlError		err;
		int			ns;

		dl_optim_config_default(&c, cases[t].kind);
		c.momentum = cases[t].mom; c.nesterov = cases[t].nest; c.amsgrad = cases[t].ams;
		c.clipvalue = cases[t].clipv; c.decay = 0.01;
		CHECK(dl_optim_state_init(&st, &c, P, &ALLOC, &err) == DL_OK, "%s", err.msg);
		ns = st.n_slots;
		fill(p, P, 90, -1, 1);
		d_p = dev(p, P); d_g = dev(NULL, P); d_s = dev(NULL, P * (ns > 0 ? ns : 1));
		CU(cudaMalloc((void **) &d_flag, sizeof(int)));
		CU(cudaMemset(d_flag, 0, sizeof(int)));
		for (int step = 0; step < 3; step++)
		{
			DlCuOptimStep k;
			double		tt = (double) st.iterations + 1.0;

			fill(g, P, 100 + step, -0.2f, 0.2f);
			memcpy(g2, g, P * 4);
			CU(cudaMemcpy(d_g, g, P * 4, cudaMemcpyHostToDevice));
			memset(&k, 0, sizeof(k));
			k.kind = c.kind == DL_OPTIM_SGD ? 0 : 1;
			k.lr_t = c.lr / (1.0 + c.decay * (double) st.iterations);
			k.adam_lr = k.lr_t * sqrt(1.0 - pow(c.beta_2, tt)) / (1.0 - pow(c.beta_1, tt));
			k.momentum = c.momentum; k.nesterov = c.nesterov; k.beta_1 = c.beta_1;
			k.beta_2 = c.beta_2; k.epsilon = c.epsilon; k.amsgrad = c.amsgrad;
			k.clipvalue = c.clipvalue;
			for (int r = 0; r < 2; r++)
				dl_cu_optim_step(d_p, d_g, d_s, ns > 1 ? d_s + P : NULL, ns > 2 ? d_s + 2 * P : NULL,
								 d_flag, &k, rg[r].begin, rg[r].end, 0);
			dl_optim_step(&st, p, g2, rg, 2);
		}
		{
			char		what[64];

			snprintf(what, sizeof(what), "%s 3 steps: params", cases[t].name);
			EXPECT_CLOSE(d_p, p, P, 1e-6, what);
			if (ns > 0)
				EXPECT_CLOSE(d_s, st.slots, P * ns, 1e-6, "optimizer slots");
		}
		dl_optim_state_free(&st, &ALLOC);
		cudaFree(d_p); cudaFree(d_g); cudaFree(d_s); cudaFree(d_flag);
		free(p); free(g); free(g2);
	}
}

/* ------------------------------------------------------------------ */

static DlModelSpec *
small_cnn(bool dropout)
{
	DlError		err;
	DlModelSpec *s = dl_model_spec_create(dropout ? 7 : 6, &ALLOC, &err);
	int			i = 0;

	s->input_shape.rank = 3;
	s->input_shape.dims[0] = 12;
	s->input_shape.dims[1] = 12;
	s->input_shape.dims[2] = 2;
	dl_layer_defaults(&s->layers[i], DL_LAYER_CONV2D);
	s->layers[i].filters = 6;
	s->layers[i].kernel_size[0] = s->layers[i].kernel_size[1] = 3;
	s->layers[i++].activation = DL_ACT_RELU;
	dl_layer_defaults(&s->layers[i], DL_LAYER_MAXPOOL2D);
	s->layers[i].pool_size[0] = s->layers[i].pool_size[1] = 2;
	s->layers[i].strides[0] = s->layers[i].strides[1] = 2;
	i++;
	dl_layer_defaults(&s->layers[i], DL_LAYER_CONV2D);
	s->layers[i].filters = 8;
	s->layers[i].kernel_size[0] = s->layers[i].kernel_size[1] = 3;
	s->layers[i].padding = DL_PADDING_SAME;
	s->layers[i++].activation = DL_ACT_TANH;
	dl_layer_defaults(&s->layers[i++], DL_LAYER_FLATTEN);
	dl_layer_defaults(&s->layers[i], DL_LAYER_DENSE);
	s->layers[i].units = 16;
	s->layers[i++].activation = DL_ACT_RELU;
	if (dropout)
	{
		dl_layer_defaults(&s->layers[i], DL_LAYER_DROPOUT);
		s->layers[i++].rate = 0.25;
	}
	dl_layer_defaults(&s->layers[i], DL_LAYER_DENSE);
	s->layers[i].units = 10;
	s->layers[i].kernel_reg.l2 = 1e-3;
	s->layers[i++].activation = DL_ACT_SOFTMAX;
	if (dl_model_spec_finalize(s, &err) != DL_OK)
	{
		printf("FATAL spec: %s\n", err.msg);
		exit(2);
	}
	return s;
}

/* Train one epoch on the GPU from host's state; result stored back into host. */
static DlStatus
gpu_epoch(DlModel *host, const DlModelSpec *s, const DlOptimConfig *oc, const DlTrainConfig *tc,
		  const float *x, const float *y, int64_t N, DlBatchStats *bs, DlError *err)
{
	DlCudaModel *cm;
	DlStatus	st;

	if ((st = dl_cuda_model_create(s, oc, 0, &ALLOC, &cm, err)) != DL_OK)
		return st;
	if ((st = dl_cuda_model_load(cm, host, err)) == DL_OK &&
		(st = dl_cuda_model_set_data(cm, x, y, N, dl_loss_y_width(tc->loss, 10), err)) == DL_OK &&
		(st = dl_cuda_model_train_epoch(cm, tc, bs, err)) == DL_OK)
		st = dl_cuda_model_store(cm, host, err);
	dl_cuda_model_free(cm);
	return st;
}

static void
test_whole_model(void)
{
	const int64_t N = 256;
	float	   *x = malloc(N * 288 * 4), *y = malloc(N * 4);
	DlOptimKind kinds[] = {DL_OPTIM_SGD, DL_OPTIM_ADAM};
	DlModelSpec *s = small_cnn(false);
	DlRng		r;

	fill(x, N * 288, 200, 0, 1);
	dl_rng_seed(&r, 201);
	for (int64_t i = 0; i < N; i++)
		y[i] = (float) dl_rng_below(&r, 10);

	for (int k = 0; k < 2; k++)
	{
		DlOptimConfig oc;
		DlTrainConfig tc = {0};
		DlModel    *cpu, *gpu;
		DlBatchStats bc = {0}, bg = {0};
		DlError		err;
		DlStatus	st;
		double		e;

		dl_optim_config_default(&oc, kinds[k]);
		if (kinds[k] == DL_OPTIM_SGD)
		{
			oc.lr = 0.05;
			oc.momentum = 0.9;
		}
		tc.loss = DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY;
		tc.metric = DL_METRIC_ACCURACY;
		tc.batch_size = 32;
		tc.shuffle = true;
		dl_model_create(s, &oc, &ALLOC, &cpu, &err);
		dl_model_create(s, &oc, &ALLOC, &gpu, &err);
		dl_model_init_weights(cpu, 7, &err);
		dl_model_init_weights(gpu, 7, &err);
		st = dl_model_train_epoch(cpu, &tc, x, y, N, &bc, &err);
		CHECK(st == DL_OK, "cpu epoch: %s", err.msg);
		st = gpu_epoch(gpu, s, &oc, &tc, x, y, N, &bg, &err);
		CHECK(st == DL_OK, "gpu epoch: %s", err.msg);
		e = rel_l2(gpu->params, cpu->params, (int64_t) s->n_params);
		CHECK(e <= 1e-4, "%s: weights after one epoch differ, rel L2 %.3g > 1e-4",
			  dl_optim_kind_name(kinds[k]), e);
		printf("  whole model %s: weights rel L2 GPU vs CPU %.3g, loss %.6f vs %.6f\n",
			   dl_optim_kind_name(kinds[k]), e, bg.loss_sum / bg.n, bc.loss_sum / bc.n);
		CHECK(fabs(bg.loss_sum - bc.loss_sum) <= 1e-4 * fabs(bc.loss_sum), "loss sums %.9g vs %.9g",
			  bg.loss_sum, bc.loss_sum);
		CHECK(fabs(bg.metric_sum - bc.metric_sum) <= 2.0, "accuracy sums %g vs %g",
			  bg.metric_sum, bc.metric_sum);
		CHECK(bg.n == bc.n, "sample counts %lld vs %lld", (long long) bg.n, (long long) bc.n);
		CHECK(gpu->optim.iterations == cpu->optim.iterations, "iterations %lld vs %lld",
			  (long long) gpu->optim.iterations, (long long) cpu->optim.iterations);
		CHECK(memcmp(&gpu->rng, &cpu->rng, sizeof(DlRng)) == 0,
			  "rng state differs after a dropout-free epoch (shuffle must match the CPU)");
		e = rel_l2(gpu->optim.slots, cpu->optim.slots, (int64_t) s->n_params * cpu->optim.n_slots);
		CHECK(e <= 1e-4, "optimizer slots rel L2 %.3g", e);

		/* evaluation on the GPU against the CPU, from the same weights */
		{
			DlCudaModel *cm;
			DlBatchStats ec = {0}, eg = {0};

			dl_model_set_params(gpu, cpu->params, s->n_params, &err);
			dl_model_evaluate(cpu, &tc, x, y, N, &ec, &err);
			st = dl_cuda_model_create(s, &oc, 0, &ALLOC, &cm, &err);
			if (st == DL_OK && (st = dl_cuda_model_load(cm, gpu, &err)) == DL_OK &&
				(st = dl_cuda_model_set_data(cm, x, y, N, 1, &err)) == DL_OK)
				st = dl_cuda_model_evaluate(cm, &tc, &eg, &err);
			CHECK(st == DL_OK, "gpu evaluate: %s", err.msg);
			CHECK(fabs(eg.loss_sum - ec.loss_sum) <= 1e-5 * fabs(ec.loss_sum),
				  "evaluate loss %.9g vs %.9g", eg.loss_sum, ec.loss_sum);
			dl_cuda_model_free(cm);
		}
		dl_model_free(cpu);
		dl_model_free(gpu);
	}
	dl_model_spec_free(s, &ALLOC);
	free(x); free(y);
}

static void
test_reproducible_and_memory(void)
{
	const int64_t N = 300;
	float	   *x = malloc(N * 288 * 4), *y = calloc(N * 10, 4);
	DlModelSpec *s = small_cnn(true);
	DlOptimConfig oc;
	DlTrainConfig tc = {0};
	DlModel    *a, *b;
	DlError		err;
	size_t		free0, free1, total;
	DlBatchStats sa = {0}, sb = {0};

	fill(x, N * 288, 300, 0, 1);
	for (int64_t i = 0; i < N; i++)
		y[i * 10 + i % 10] = 1.0f;
	dl_optim_config_default(&oc, DL_OPTIM_ADAM);
	oc.amsgrad = true;
	tc.loss = DL_LOSS_CATEGORICAL_CROSSENTROPY;
	tc.metric = DL_METRIC_ACCURACY;
	tc.batch_size = 64;
	tc.shuffle = true;
	dl_model_create(s, &oc, &ALLOC, &a, &err);
	dl_model_create(s, &oc, &ALLOC, &b, &err);
	dl_model_init_weights(a, 11, &err);
	dl_model_init_weights(b, 11, &err);

	/* warm-up: the CUDA context and cuBLAS's first-use allocations */
	CHECK(gpu_epoch(a, s, &oc, &tc, x, y, N, &sa, &err) == DL_OK, "gpu epoch: %s", err.msg);
	CU(cudaDeviceSynchronize());
	CU(cudaMemGetInfo(&free0, &total));
	CHECK(gpu_epoch(a, s, &oc, &tc, x, y, N, &sa, &err) == DL_OK, "gpu epoch: %s", err.msg);
	CU(cudaDeviceSynchronize());
	CU(cudaMemGetInfo(&free1, &total));
	CHECK(free1 + (2u << 20) >= free0, "GPU memory not released: %zu bytes free before, %zu after",
		  free0, free1);

	CHECK(gpu_epoch(b, s, &oc, &tc, x, y, N, &sb, &err) == DL_OK, "gpu epoch: %s", err.msg);
	CHECK(gpu_epoch(b, s, &oc, &tc, x, y, N, &sb, &err) == DL_OK, "gpu epoch: %s", err.msg);
	CHECK(memcmp(a->params, b->params, s->n_params * 4) == 0,
		  "two GPU runs with the same seed give different weights");
	CHECK(sa.loss_sum == sb.loss_sum, "two GPU runs give different losses %.17g vs %.17g",
		  sa.loss_sum, sb.loss_sum);
	dl_model_free(a);
	dl_model_free(b);
	dl_model_spec_free(s, &ALLOC);
	free(x); free(y);
}

static void
test_unsupported(void)
{
	DlModelSpec *s = small_cnn(false);
	DlOptimConfig oc;
	DlCudaModel *cm;
	DlError		err;

	dl_optim_config_default(&oc, DL_OPTIM_RMSPROP);
	CHECK(dl_cuda_model_create(s, &oc, 0, &ALLOC, &cm, &err) == DL_ERR_UNSUPPORTED &&
		  strstr(err.msg, "RMSprop") != NULL, "RMSprop: expected unsupported naming it, got %s", err.msg);
	dl_optim_config_default(&oc, DL_OPTIM_SGD);
	CHECK(dl_cuda_model_create(s, &oc, 99, &ALLOC, &cm, &err) == DL_ERR_INVALID_ARGUMENT,
		  "device 99 accepted");
	dl_model_spec_free(s, &ALLOC);
}

int
main(void)
{
	DlCudaDeviceInfo info;
	DlError		err;

	if (dl_cuda_device_count() < 1)
	{
		printf("test_gpu: no GPU visible (dl_cuda_device_count() == 0)\n");
		return 2;
	}
	if (dl_cuda_device_info(0, &info, &err) == DL_OK)
		printf("test_gpu: device 0: %s, %.1f GiB, sm_%d%d\n", info.name,
			   (double) info.total_mem / (1 << 30), info.cc_major, info.cc_minor);
	if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS)
	{
		printf("FATAL cublasCreate\n");
		return 2;
	}
#define RUN(f) do { int f0 = n_failed; f(); printf("%s %s\n", n_failed == f0 ? "ok  " : "FAIL", #f); } while (0)
	RUN(test_dense);
	RUN(test_conv);
	RUN(test_pools);
	RUN(test_dropout);
	RUN(test_losses);
	RUN(test_optimizers);
	RUN(test_whole_model);
	RUN(test_reproducible_and_memory);
	RUN(test_unsupported);
	cublasDestroy(blas);
	printf("test_gpu: %d checks, %d failed\n", n_checks, n_failed);
	return n_failed == 0 ? 0 : 1;
}
