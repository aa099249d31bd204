/*-------------------------------------------------------------------------
 *
 * test_kernels.c
 *	  Unit tests: layer kernels' forward passes against double references,
 *	  geometry, dropout masks and batch-normalization statistics.
 *
 * Gradients are checked in test_kernels_grad.c.
 *
 * IDENTIFICATION
 *	  test/unit/test_kernels.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "unit_util.h"
#include "ref_kernels.h"
#include "dl_kernels.h"

#define FWD_TOL 1e-5

/* Fail unless the float result matches the double reference. */
static void
check_fwd(const char *what, int cfg, const float *got, const double *want, int64_t n)
{
	double		e = rel_l2_error_fd(got, want, (size_t) n);

	if (!(e < FWD_TOL))
		fail_msg("%s (config %d): relative L2 error %g >= %g", what, cfg, e, FWD_TOL);
}

/* Convolution and pooling configurations: odd sizes, strides, paddings. */
typedef struct ConvCase
{
	int64_t		B, H, W, C, OC;
	int			KH, KW, SH, SW;
	DlPadding	padding;
} ConvCase;

static const ConvCase conv_cases[] = {
	{2, 7, 7, 3, 4, 3, 3, 1, 1, DL_PADDING_VALID},
	{2, 7, 7, 3, 4, 3, 3, 1, 1, DL_PADDING_SAME},
	{3, 9, 8, 2, 5, 3, 2, 2, 2, DL_PADDING_SAME},	/* non-square, stride 2 */
	{1, 10, 11, 1, 3, 4, 3, 2, 3, DL_PADDING_VALID},
	{2, 10, 11, 2, 3, 4, 3, 2, 3, DL_PADDING_SAME},
	{2, 6, 5, 4, 3, 1, 1, 1, 1, DL_PADDING_VALID}, /* pointwise fast path */
	{2, 6, 5, 4, 3, 1, 1, 1, 1, DL_PADDING_SAME},
	{2, 6, 5, 4, 3, 1, 1, 2, 2, DL_PADDING_SAME},
	{2, 5, 5, 2, 3, 5, 5, 1, 1, DL_PADDING_SAME},	/* kernel = input */
	{1, 4, 3, 2, 2, 5, 4, 1, 1, DL_PADDING_SAME},	/* kernel > input */
	{2, 8, 8, 3, 2, 2, 2, 2, 2, DL_PADDING_VALID},
	{1, 6, 9, 2, 2, 2, 4, 3, 1, DL_PADDING_SAME},
};

#define N_CONV_CASES ((int) (sizeof(conv_cases) / sizeof(conv_cases[0])))

static RefGeom
ref_geom_of(const ConvCase *cc, int pool)
{
	RefGeom		g;

	memset(&g, 0, sizeof(g));
	g.B = cc->B;
	g.H = cc->H;
	g.W = cc->W;
	g.C = cc->C;
	g.OC = pool ? cc->C : cc->OC;
	g.KH = cc->KH;
	g.KW = cc->KW;
	g.SH = cc->SH;
	g.SW = cc->SW;
	g.padding = cc->padding;
	ref_geom_init(&g);
	return g;
}

/* Keras output sizes and padding, worked out by hand. */
static void
test_geom_keras_rules(void **state)
{
	DlConvGeom	g;
	DlPoolGeom	p;

	dl_conv_geom_init(&g, 128, 28, 28, 1, 32, 3, 3, 1, 1, DL_PADDING_VALID);
	assert_int_equal(g.OH, 26);
	assert_int_equal(g.OW, 26);
	assert_int_equal(g.pad_top, 0);
	dl_conv_geom_init(&g, 1, 28, 28, 1, 8, 3, 3, 2, 2, DL_PADDING_SAME);
	assert_int_equal(g.OH, 14);	/* ceil(28/2) */
	assert_int_equal(g.pad_top, 0);	/* total 13*2+3-28 = 1 goes to the bottom */
	dl_conv_geom_init(&g, 1, 5, 6, 1, 8, 4, 3, 1, 1, DL_PADDING_SAME);
	assert_int_equal(g.OH, 5);
	assert_int_equal(g.pad_top, 1);	/* total 3: 1 above, 2 below */
	assert_int_equal(g.OW, 6);
	assert_int_equal(g.pad_left, 1);	/* total 2 */
	dl_conv_geom_init(&g, 1, 10, 11, 1, 3, 4, 3, 2, 3, DL_PADDING_VALID);
	assert_int_equal(g.OH, 4);	/* (10-4)/2+1 */
	assert_int_equal(g.OW, 3);	/* (11-3)/3+1 */
	dl_conv_geom_init(&g, 1, 2, 2, 1, 1, 3, 3, 1, 1, DL_PADDING_VALID);
	assert_int_equal(g.OH, 0);	/* kernel larger than the input */
	assert_int_equal(g.OW, 0);

	dl_pool_geom_init(&p, 4, 26, 26, 32, 2, 2, 2, 2, DL_PADDING_VALID);
	assert_int_equal(p.OH, 13);
	assert_int_equal(p.OW, 13);
	assert_int_equal(p.C, 32);
	dl_pool_geom_init(&p, 1, 7, 7, 1, 2, 2, 2, 2, DL_PADDING_VALID);
	assert_int_equal(p.OH, 3);
	dl_pool_geom_init(&p, 1, 7, 7, 1, 2, 2, 2, 2, DL_PADDING_SAME);
	assert_int_equal(p.OH, 4);
	assert_int_equal(p.pad_top, 0);	/* total 3*2+2-7 = 1 */
	dl_pool_geom_init(&p, 1, 8, 8, 1, 3, 3, 1, 1, DL_PADDING_SAME);
	assert_int_equal(p.OH, 8);
	assert_int_equal(p.pad_top, 1);

	/* the references' independent geometry agrees on every test case */
	for (int i = 0; i < N_CONV_CASES; i++)
	{
		const ConvCase *cc = &conv_cases[i];
		RefGeom		rg = ref_geom_of(cc, 0);

		dl_conv_geom_init(&g, cc->B, cc->H, cc->W, cc->C, cc->OC, cc->KH, cc->KW,
						  cc->SH, cc->SW, cc->padding);
		assert_int_equal(g.OH, rg.OH);
		assert_int_equal(g.OW, rg.OW);
		assert_int_equal(g.pad_top, rg.pad_top);
		assert_int_equal(g.pad_left, rg.pad_left);
	}
	/* last case: B=1, OH=ceil(6/3)=2, OW=9, KH=2, KW=4, C=2 */
	assert_int_equal(dl_conv2d_workspace_floats(&g), 1 * 2 * 9 * 2 * 4 * 2);
}

static void
test_dense_forward(void **state)
{
	static const int64_t cases[][3] = {{1, 1, 1}, {3, 5, 7}, {17, 33, 9}, {128, 13, 1}, {4, 64, 70}};
	DlRng		rng;

	dl_rng_seed(&rng, 11);
	for (int i = 0; i < (int) (sizeof(cases) / sizeof(cases[0])); i++)
	{
		int64_t		B = cases[i][0],
					I = cases[i][1],
					O = cases[i][2];
		float	   *x = REF_NEW(float, B * I);
		float	   *W = REF_NEW(float, I * O);
		float	   *b = REF_NEW(float, O);
		float	   *y = REF_NEW(float, B * O);
		double	   *xd = REF_NEW(double, B * I);
		double	   *Wd = REF_NEW(double, I * O);
		double	   *bd = REF_NEW(double, O);
		double	   *yd = REF_NEW(double, B * O);

		ref_fill_uniform(x, xd, B * I, -1, 1, &rng);
		ref_fill_uniform(W, Wd, I * O, -1, 1, &rng);
		ref_fill_uniform(b, bd, O, -1, 1, &rng);
		dl_dense_forward(y, x, W, b, B, I, O);
		ref_dense_forward(yd, xd, Wd, bd, B, I, O);
		check_fwd("dense", i, y, yd, B * O);
		/* without bias; y holds stale values that must be overwritten */
		dl_dense_forward(y, x, W, NULL, B, I, O);
		ref_dense_forward(yd, xd, Wd, NULL, B, I, O);
		check_fwd("dense no bias", i, y, yd, B * O);
	}
	ref_free_all();
}

static void
test_conv2d_forward(void **state)
{
	DlRng		rng;

	dl_rng_seed(&rng, 12);
	for (int i = 0; i < N_CONV_CASES; i++)
	{
		const ConvCase *cc = &conv_cases[i];
		RefGeom		rg = ref_geom_of(cc, 0);
		DlConvGeom	g;
		int64_t		nx = cc->B * cc->H * cc->W * cc->C;
		int64_t		nk = (int64_t) cc->KH * cc->KW * cc->C * cc->OC;
		int64_t		ny;
		float	   *x,
				   *K,
				   *b,
				   *y,
				   *work;
		double	   *xd,
				   *Kd,
				   *bd,
				   *yd;

		dl_conv_geom_init(&g, cc->B, cc->H, cc->W, cc->C, cc->OC, cc->KH, cc->KW,
						  cc->SH, cc->SW, cc->padding);
		ny = g.B * g.OH * g.OW * g.OC;
		assert_true(ny > 0);
		x = REF_NEW(float, nx);
		K = REF_NEW(float, nk);
		b = REF_NEW(float, cc->OC);
		y = REF_NEW(float, ny);
		work = REF_NEW(float, dl_conv2d_workspace_floats(&g));
		xd = REF_NEW(double, nx);
		Kd = REF_NEW(double, nk);
		bd = REF_NEW(double, cc->OC);
		yd = REF_NEW(double, ny);
		ref_fill_uniform(x, xd, nx, -1, 1, &rng);
		ref_fill_uniform(K, Kd, nk, -1, 1, &rng);
		ref_fill_uniform(b, bd, cc->OC, -1, 1, &rng);
		/* stale workspace contents must not matter */
		for (size_t j = 0; j < dl_conv2d_workspace_floats(&g); j++)
			work[j] = 1e30f;
		dl_conv2d_forward(y, work, x, K, b, &g);
		ref_conv2d_forward(yd, xd, Kd, bd, &rg);
		check_fwd("conv2d", i, y, yd, ny);
		dl_conv2d_forward(y, work, x, K, NULL, &g);
		ref_conv2d_forward(yd, xd, Kd, NULL, &rg);
		check_fwd("conv2d no bias", i, y, yd, ny);
	}
	ref_free_all();
}

static void
test_pool_forward(void **state)
{
	DlRng		rng;

	dl_rng_seed(&rng, 13);
	for (int i = 0; i < N_CONV_CASES; i++)
	{
		const ConvCase *cc = &conv_cases[i];
		RefGeom		rg = ref_geom_of(cc, 1);
		DlPoolGeom	g;
		int64_t		nx = cc->B * cc->H * cc->W * cc->C;
		int64_t		ny;
		float	   *x,
				   *y;
		int64_t    *am;
		double	   *xd,
				   *yd;

		dl_pool_geom_init(&g, cc->B, cc->H, cc->W, cc->C, cc->KH, cc->KW, cc->SH, cc->SW,
						  cc->padding);
		assert_int_equal(g.OH, rg.OH);
		assert_int_equal(g.OW, rg.OW);
		ny = g.B * g.OH * g.OW * g.C;
		x = REF_NEW(float, nx);
		y = REF_NEW(float, ny);
		am = REF_NEW(int64_t, ny);
		xd = REF_NEW(double, nx);
		yd = REF_NEW(double, ny);
		/* negative inputs: a zero-padded cell would win if counted */
		ref_fill_uniform(x, xd, nx, -2, -0.5, &rng);

		dl_maxpool2d_forward(y, am, x, &g);
		ref_maxpool2d_forward(yd, xd, &rg);
		check_fwd("maxpool2d", i, y, yd, ny);
		for (int64_t j = 0; j < ny; j++)
		{
			assert_true(am[j] >= 0 && am[j] < nx);
			assert_true(x[am[j]] == y[j]);
			assert_int_equal(am[j] % cc->C, j % cc->C);
		}

		dl_avgpool2d_forward(y, x, &g);
		ref_avgpool2d_forward(yd, xd, &rg);
		check_fwd("avgpool2d", i, y, yd, ny);
	}
	ref_free_all();
}

/* Ties keep the first maximum in row-major window order; padding never wins. */
static void
test_maxpool_ties_and_padding(void **state)
{
	/* one 3x3 image, C = 2; channel 0 all equal, channel 1 ties at (0,1),(1,0) */
	float		x[18] = {
		5, 1, 5, 7, 5, 0,
		5, 7, 5, 2, 5, 7,
		5, 0, 5, 0, 5, 0
	};
	float		y[8];
	int64_t		am[8];
	float		dx[18];
	float		dy[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	float		avg[8];
	DlPoolGeom	g;

	/* 2x2 windows, stride 1, valid: 2x2 output */
	dl_pool_geom_init(&g, 1, 3, 3, 2, 2, 2, 1, 1, DL_PADDING_VALID);
	dl_maxpool2d_forward(y, am, x, &g);
	assert_int_equal(am[0], 0);	/* window (0,0): all 5, first cell */
	assert_int_equal(am[1], 3);	/* channel 1: 7 at (0,1) before (1,0) */
	assert_int_equal(am[2], 2);	/* window (0,1): first cell (0,1) */
	assert_int_equal(am[3], 3);	/* 7 at (0,1) before (1,2) */
	assert_int_equal(am[4], 6);	/* window (1,0): first cell (1,0) */
	assert_int_equal(am[5], 7);
	assert_int_equal(am[7], 11);	/* window (1,1): 7 at (1,2) */
	assert_true(y[1] == 7.0f && y[3] == 7.0f && y[5] == 7.0f && y[7] == 7.0f);
	/* backward sends each dy to its argmax; shared maxima accumulate */
	dl_maxpool2d_backward(dx, dy, am, &g);
	assert_true(dx[0] == 1.0f);
	assert_true(dx[3] == 2.0f + 4.0f);
	assert_true(dx[7] == 6.0f);
	assert_true(dx[11] == 8.0f);
	assert_true(dx[1] == 0.0f && dx[17] == 0.0f);

	/* all-negative input, 'same' padding: padded cells never win */
	for (int i = 0; i < 18; i++)
		x[i] = -1.0f - (float) i;
	dl_pool_geom_init(&g, 1, 3, 3, 2, 2, 2, 2, 2, DL_PADDING_SAME);
	assert_int_equal(g.OH, 2);
	dl_maxpool2d_forward(y, am, x, &g);
	/* window (1,1) covers only input (2,2): cells 16, 17 */
	assert_int_equal(am[6], 16);
	assert_true(y[6] == -17.0f && y[7] == -18.0f);
	for (int i = 0; i < 8; i++)
		assert_true(y[i] < 0.0f);
	/* average pooling divides by in-bounds cells: 1 for window (1,1), 2 for (0,1) */
	dl_avgpool2d_forward(avg, x, &g);
	assert_true(avg[6] == -17.0f);
	assert_close(avg[2], (x[4] + x[10]) / 2.0, 1e-6, 0);
	assert_close(avg[0], (x[0] + x[2] + x[6] + x[8]) / 4.0, 1e-6, 0);
}

static void
test_global_avgpool_forward(void **state)
{
	static const int64_t cases[][3] = {{1, 1, 1}, {2, 9, 3}, {3, 25, 7}, {4, 169, 32}};
	DlRng		rng;

	dl_rng_seed(&rng, 14);
	for (int i = 0; i < 4; i++)
	{
		int64_t		B = cases[i][0],
					S = cases[i][1],
					C = cases[i][2];
		float	   *x = REF_NEW(float, B * S * C);
		float	   *y = REF_NEW(float, B * C);
		double	   *xd = REF_NEW(double, B * S * C);
		double	   *yd = REF_NEW(double, B * C);

		ref_fill_uniform(x, xd, B * S * C, -1, 1, &rng);
		dl_global_avgpool2d_forward(y, x, B, S, C);
		ref_global_avgpool2d_forward(yd, xd, B, S, C);
		check_fwd("global_avgpool2d", i, y, yd, B * C);
	}
	ref_free_all();
}

static const DlActivation all_acts[] = {
	DL_ACT_LINEAR, DL_ACT_RELU, DL_ACT_SIGMOID, DL_ACT_TANH,
	DL_ACT_SOFTMAX, DL_ACT_ELU, DL_ACT_SOFTPLUS
};

#define N_ACTS ((int) (sizeof(all_acts) / sizeof(all_acts[0])))

static void
test_activation_forward(void **state)
{
	const int64_t rows = 7,
				cols = 11,
				n = rows * cols;
	float	   *x = REF_NEW(float, n);
	float	   *y = REF_NEW(float, n);
	float	   *yin = REF_NEW(float, n);
	double	   *xd = REF_NEW(double, n);
	double	   *yd = REF_NEW(double, n);
	DlRng		rng;

	dl_rng_seed(&rng, 15);
	ref_fill_uniform(x, xd, n, -6, 6, &rng);
	for (int a = 0; a < N_ACTS; a++)
	{
		dl_activation_forward(all_acts[a], y, x, rows, cols);
		ref_activation_forward(all_acts[a], yd, xd, rows, cols);
		check_fwd(dl_activation_name(all_acts[a]), a, y, yd, n);
		/* in place gives the same bytes */
		memcpy(yin, x, (size_t) n * sizeof(float));
		dl_activation_forward(all_acts[a], yin, yin, rows, cols);
		assert_memory_equal(yin, y, (size_t) n * sizeof(float));
	}
	ref_free_all();
}

/* Extreme inputs stay finite and correct (stable softmax and softplus). */
static void
test_activation_extremes(void **state)
{
	float		x[6] = {-1000, -90, -20, 20, 90, 1000};
	float		y[6];

	dl_activation_forward(DL_ACT_SOFTPLUS, y, x, 1, 6);
	assert_true(y[0] >= 0.0f && y[0] < 1e-30f);
	assert_close(y[2], log1p(exp(-20.0)), 1e-5, 0);
	assert_close(y[3], 20.0 + log1p(exp(-20.0)), 1e-6, 0);
	assert_true(y[5] == 1000.0f);
	dl_activation_forward(DL_ACT_SIGMOID, y, x, 1, 6);
	assert_true(y[0] == 0.0f && y[5] == 1.0f);
	dl_activation_forward(DL_ACT_SOFTMAX, y, x, 2, 3);
	for (int i = 0; i < 6; i++)
		assert_true(isfinite(y[i]));
	assert_close(y[0] + y[1] + y[2], 1.0, 1e-6, 0);
	assert_close(y[5], 1.0, 1e-6, 0);
	assert_close(y[2], 1.0, 1e-6, 0);
	/* a row of large negative logits: still normalized */
	x[0] = -1000.0f;
	x[1] = -1001.0f;
	x[2] = -1003.0f;
	dl_activation_forward(DL_ACT_SOFTMAX, y, x, 1, 3);
	assert_close(y[0], 1.0 / (1.0 + exp(-1.0) + exp(-3.0)), 1e-6, 0);
	assert_close(y[2], exp(-3.0) / (1.0 + exp(-1.0) + exp(-3.0)), 1e-5, 0);
	x[1] = -90.0f;
	x[2] = -20.0f;
	dl_activation_forward(DL_ACT_ELU, y, x, 1, 6);
	assert_true(y[0] == -1.0f && y[5] == 1000.0f);
	/* relu derivative is 0 at 0 */
	x[0] = 0.0f;
	y[0] = 0.0f;
	x[1] = 3.0f;
	dl_activation_backward(DL_ACT_RELU, x, x + 1, y, 1, 1);
	assert_true(x[0] == 0.0f);
}

/* Mask fraction, values, determinism and the number of draws. */
static void
test_dropout_mask(void **state)
{
	const int64_t n = 200000;
	float	   *x = REF_NEW(float, n);
	float	   *y = REF_NEW(float, n);
	float	   *m1 = REF_NEW(float, n);
	float	   *m2 = REF_NEW(float, n);
	float	   *dx = REF_NEW(float, n);
	double		rates[3] = {0.1, 0.3, 0.75};
	DlRng		r1,
				r2,
				data;

	dl_rng_seed(&data, 16);
	ref_fill_uniform(x, NULL, n, -1, 1, &data);
	for (int k = 0; k < 3; k++)
	{
		double		rate = rates[k];
		float		keep = (float) (1.0 / (1.0 - rate));
		int64_t		dropped = 0;

		dl_rng_seed(&r1, 99);
		dl_dropout_forward(y, m1, x, n, rate, &r1);
		for (int64_t i = 0; i < n; i++)
		{
			assert_true(m1[i] == 0.0f || m1[i] == keep);
			assert_true(y[i] == x[i] * m1[i]);
			dropped += m1[i] == 0.0f;
		}
		/* binomial sd is about 0.001 here */
		assert_close((double) dropped / (double) n, rate, 0, 0.01);

		/* same seed: same mask; and exactly n draws were consumed */
		dl_rng_seed(&r2, 99);
		memcpy(y, x, (size_t) n * sizeof(float));
		dl_dropout_forward(y, m2, y, n, rate, &r2);	/* in place */
		assert_memory_equal(m1, m2, (size_t) n * sizeof(float));
		assert_memory_equal(r1.s, r2.s, sizeof(r1.s));
		dl_rng_seed(&r2, 99);
		for (int64_t i = 0; i < n; i++)
			(void) dl_rng_uniform(&r2);
		assert_memory_equal(r1.s, r2.s, sizeof(r1.s));

		/* another seed: another mask */
		dl_rng_seed(&r2, 100);
		dl_dropout_forward(y, m2, x, n, rate, &r2);
		assert_true(memcmp(m1, m2, (size_t) n * sizeof(float)) != 0);

		dl_dropout_backward(dx, x, m1, n);
		for (int64_t i = 0; i < n; i += 997)
			assert_true(dx[i] == x[i] * m1[i]);
	}
	ref_free_all();
}

/* Training-mode forward against the reference, blocks of channels included. */
static void
test_batchnorm_forward_train(void **state)
{
	static const int64_t cases[][2] = {{1, 1}, {5, 3}, {37, 8}, {6, 70}, {200, 130}};
	DlRng		rng;

	dl_rng_seed(&rng, 17);
	for (int i = 0; i < 5; i++)
	{
		int64_t		R = cases[i][0],
					C = cases[i][1],
					n = R * C;
		float	   *x = REF_NEW(float, n);
		float	   *y = REF_NEW(float, n);
		float	   *yrelu = REF_NEW(float, n);
		float	   *gamma = REF_NEW(float, C);
		float	   *beta = REF_NEW(float, C);
		float	   *mean = REF_NEW(float, C);
		float	   *invstd = REF_NEW(float, C);
		float	   *mm = REF_NEW(float, C);
		float	   *mv = REF_NEW(float, C);
		double	   *xd = REF_NEW(double, n);
		double	   *yd = REF_NEW(double, n);
		double	   *gd = REF_NEW(double, C);
		double	   *bd = REF_NEW(double, C);
		double	   *meand = REF_NEW(double, C);
		double	   *vard = REF_NEW(double, C);
		double	   *invd = REF_NEW(double, C);
		double	   *mmd = REF_NEW(double, C);
		double	   *mvd = REF_NEW(double, C);
		double		eps = 1e-3,
					mom = 0.99;

		/* an offset mean stresses the variance computation */
		ref_fill_uniform(x, xd, n, 9, 13, &rng);
		ref_fill_uniform(gamma, gd, C, 0.5, 1.5, &rng);
		ref_fill_uniform(beta, bd, C, -1, 1, &rng);
		ref_fill_uniform(mm, NULL, C, -1, 1, &rng);
		ref_fill_uniform(mv, NULL, C, 0.5, 2, &rng);
		for (int64_t c = 0; c < C; c++)
		{
			mmd[c] = mm[c];
			mvd[c] = mv[c];
		}
		dl_batchnorm_forward_train(y, mean, invstd, mm, mv, x, gamma, beta, R, C,
								   mom, eps, false, DL_ACT_LINEAR);
		ref_batchnorm_forward_train(yd, meand, vard, xd, gd, bd, R, C, eps);
		check_fwd("batchnorm train y", i, y, yd, n);
		check_fwd("batchnorm train mean", i, mean, meand, C);
		for (int64_t c = 0; c < C; c++)
		{
			invd[c] = 1.0 / sqrt(vard[c] + eps);
			mmd[c] = mmd[c] * mom + meand[c] * (1 - mom);
			mvd[c] = mvd[c] * mom + vard[c] * (1 - mom);
		}
		check_fwd("batchnorm train invstd", i, invstd, invd, C);
		check_fwd("batchnorm moving_mean", i, mm, mmd, C);
		check_fwd("batchnorm moving_var", i, mv, mvd, C);
		/* gamma, beta NULL: y is xhat */
		ref_batchnorm_forward_train(yd, NULL, NULL, xd, NULL, NULL, R, C, eps);
		dl_batchnorm_forward_train(y, mean, invstd, mm, mv, x, NULL, NULL, R, C,
								   mom, eps, false, DL_ACT_LINEAR);
		check_fwd("batchnorm train plain", i, y, yd, n);
		/* a fused ReLU gives the ReLU of those bits */
		dl_batchnorm_forward_train(yrelu, mean, invstd, mm, mv, x, NULL, NULL, R, C,
								   mom, eps, false, DL_ACT_RELU);
		for (int64_t k = 0; k < n; k++)
			if (yrelu[k] != (y[k] > 0.0f ? y[k] : 0.0f))
				fail_msg("batchnorm train with ReLU (case %d): value %lld", i, (long long) k);
	}
	ref_free_all();
}

/* Moving statistics and inference against values computed by hand. */
static void
test_batchnorm_hand_values(void **state)
{
	/* R = 4 rows, C = 2: channel 0 = 1,2,3,4 (mean 2.5, var 1.25); channel 1 constant 2 */
	float		x[8] = {1, 2, 2, 2, 3, 2, 4, 2};
	float		gamma[2] = {2.0f, 0.5f};
	float		beta[2] = {0.1f, -1.0f};
	float		mm[2] = {0.0f, 1.0f};
	float		mv[2] = {1.0f, 1.0f};
	float		y[8],
				mean[2],
				invstd[2];
	double		eps = 1e-3;

	dl_batchnorm_forward_train(y, mean, invstd, mm, mv, x, gamma, beta, 4, 2, 0.9, eps,
							   false, DL_ACT_LINEAR);
	assert_close(mean[0], 2.5, 1e-7, 0);
	assert_close(mean[1], 2.0, 1e-7, 0);
	assert_close(invstd[0], 1.0 / sqrt(1.25 + 1e-3), 1e-6, 0);
	assert_close(invstd[1], 1.0 / sqrt(1e-3), 1e-6, 0);
	assert_close(mm[0], 0.9 * 0.0 + 0.1 * 2.5, 1e-6, 0);	/* 0.25 */
	assert_close(mm[1], 0.9 * 1.0 + 0.1 * 2.0, 1e-6, 0);	/* 1.1 */
	assert_close(mv[0], 0.9 * 1.0 + 0.1 * 1.25, 1e-6, 0);	/* 1.025 */
	assert_close(mv[1], 0.9 * 1.0 + 0.1 * 0.0, 1e-6, 0);	/* 0.9 */
	assert_close(y[0], 2.0 * (1 - 2.5) / sqrt(1.251) + 0.1, 1e-6, 0);
	assert_close(y[6], 2.0 * (4 - 2.5) / sqrt(1.251) + 0.1, 1e-6, 0);
	assert_close(y[3], -1.0, 1e-6, 0);	/* constant channel: beta */

	/* inference with the updated moving statistics */
	dl_batchnorm_forward_infer(y, x, gamma, beta, mm, mv, 4, 2, eps, DL_ACT_LINEAR);
	assert_close(y[4], 2.0 * (3 - 0.25) / sqrt(1.025 + 1e-3) + 0.1, 1e-6, 0);
	assert_close(y[5], 0.5 * (2 - 1.1) / sqrt(0.9 + 1e-3) - 1.0, 1e-6, 0);
	dl_batchnorm_forward_infer(y, x, NULL, NULL, mm, mv, 4, 2, eps, DL_ACT_LINEAR);
	assert_close(y[0], (1 - 0.25) / sqrt(1.026), 1e-6, 0);
	assert_close(y[1], (2 - 1.1) / sqrt(0.901), 1e-6, 0);
}

/*
 * unbiased_moving_var (TensorFlow's fused batch norm after Conv2D): the
 * moving variance takes var * R / (R - 1); the normalisation still uses the
 * biased variance.  Same data as test_batchnorm_hand_values.
 */
static void
test_batchnorm_unbiased_moving_var(void **state)
{
	float		x[8] = {1, 2, 2, 2, 3, 2, 4, 2};
	float		mm[2] = {0.0f, 1.0f};
	float		mv[2] = {1.0f, 1.0f};
	float		mv1[1] = {1.0f};
	float		mm1[1] = {0.0f};
	float		y[8],
				mean[2],
				invstd[2];
	double		eps = 1e-3;

	dl_batchnorm_forward_train(y, mean, invstd, mm, mv, x, NULL, NULL, 4, 2, 0.9, eps,
							   true, DL_ACT_LINEAR);
	/* channel 0: biased var 1.25, unbiased 1.25 * 4 / 3 = 5/3 */
	assert_close(invstd[0], 1.0 / sqrt(1.25 + 1e-3), 1e-6, 0);
	assert_close(mv[0], 0.9 * 1.0 + 0.1 * (5.0 / 3.0), 1e-6, 0);	/* 1.0666667 */
	assert_close(mv[1], 0.9 * 1.0 + 0.1 * 0.0, 1e-6, 0);
	assert_close(mm[0], 0.25, 1e-6, 0);
	assert_close(y[0], (1 - 2.5) / sqrt(1.251), 1e-6, 0);
	/* one row: no correction possible, the variance (0) is used as is */
	dl_batchnorm_forward_train(y, mean, invstd, mm1, mv1, x, NULL, NULL, 1, 1, 0.5, eps,
							   true, DL_ACT_LINEAR);
	assert_close(mv1[0], 0.5, 1e-7, 0);
	assert_close(mm1[0], 0.5, 1e-7, 0);
}

static void
test_batchnorm_forward_infer(void **state)
{
	const int64_t R = 9,
				C = 75,
				n = R * C;
	float	   *x = REF_NEW(float, n);
	float	   *y = REF_NEW(float, n);
	float	   *g = REF_NEW(float, C);
	float	   *b = REF_NEW(float, C);
	float	   *mm = REF_NEW(float, C);
	float	   *mv = REF_NEW(float, C);
	double	   *xd = REF_NEW(double, n);
	double	   *yd = REF_NEW(double, n);
	double	   *gd = REF_NEW(double, C);
	double	   *bd = REF_NEW(double, C);
	double	   *mmd = REF_NEW(double, C);
	double	   *mvd = REF_NEW(double, C);
	DlRng		rng;

	dl_rng_seed(&rng, 18);
	ref_fill_uniform(x, xd, n, -3, 3, &rng);
	ref_fill_uniform(g, gd, C, 0.5, 1.5, &rng);
	ref_fill_uniform(b, bd, C, -1, 1, &rng);
	ref_fill_uniform(mm, mmd, C, -1, 1, &rng);
	ref_fill_uniform(mv, mvd, C, 0.2, 2, &rng);
	dl_batchnorm_forward_infer(y, x, g, b, mm, mv, R, C, 1e-3, DL_ACT_LINEAR);
	ref_batchnorm_forward_infer(yd, xd, gd, bd, mmd, mvd, R, C, 1e-3);
	check_fwd("batchnorm infer", 0, y, yd, n);
	{
		/* a fused ReLU gives the ReLU of those bits */
		float	   *yr = REF_NEW(float, n);

		dl_batchnorm_forward_infer(yr, x, g, b, mm, mv, R, C, 1e-3, DL_ACT_RELU);
		for (int64_t k = 0; k < n; k++)
			if (yr[k] != (y[k] > 0.0f ? y[k] : 0.0f))
				fail_msg("batchnorm infer with ReLU: value %lld", (long long) k);
	}
	dl_batchnorm_forward_infer(x, x, NULL, b, mm, mv, R, C, 1e-3, DL_ACT_LINEAR);	/* in place */
	ref_batchnorm_forward_infer(yd, xd, NULL, bd, mmd, mvd, R, C, 1e-3);
	check_fwd("batchnorm infer in place", 1, x, yd, n);
	ref_free_all();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_geom_keras_rules),
		cmocka_unit_test(test_dense_forward),
		cmocka_unit_test(test_conv2d_forward),
		cmocka_unit_test(test_pool_forward),
		cmocka_unit_test(test_maxpool_ties_and_padding),
		cmocka_unit_test(test_global_avgpool_forward),
		cmocka_unit_test(test_activation_forward),
		cmocka_unit_test(test_activation_extremes),
		cmocka_unit_test(test_dropout_mask),
		cmocka_unit_test(test_batchnorm_forward_train),
		cmocka_unit_test(test_batchnorm_unbiased_moving_var),
		cmocka_unit_test(test_batchnorm_hand_values),
		cmocka_unit_test(test_batchnorm_forward_infer),
	};

	return cmocka_run_group_tests_name("kernels", tests, NULL, NULL);
}
