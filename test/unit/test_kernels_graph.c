/*-------------------------------------------------------------------------
 *
 * test_kernels_graph.c
 *	  Unit tests: the kernels graphs brought (merges, Concatenate,
 *	  ZeroPadding2D, Cropping2D, UpSampling2D, GlobalMaxPooling2D, dilated
 *	  Conv2D) against double references and double finite differences.
 *
 * As in test_kernels_grad.c: each forward kernel (float) is compared with
 * its direct double reference of ref_kernels.c, and each backward kernel,
 * run with dy = r, with the central differences (eps 1e-6) of the scalar
 * L = sum(r * y) computed through the double reference.  Inputs are drawn
 * uniformly, so no two compete for a maximum within eps.  Also checked:
 * the backward kernels overwrite dx (which starts as NaN) or add into it
 * as asked, and the dilated convolution gives the same through im2col and
 * through oneDNN.
 *
 * IDENTIFICATION
 *	  test/unit/test_kernels_graph.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "unit_util.h"
#include "ref_kernels.h"
#include "dl_kernels.h"
#include "madlib_dl/dl_backend.h"

#define GRAD_TOL 1e-3
#define FD_EPS 1e-6
#define FWD_TOL 1e-5

/* the largest error of the checks of the current test, printed at its end */
static double worst_error;

static void
report(const char *what)
{
	print_message("%s: largest gradient relative L2 error %.2e (double finite differences)\n",
				  what, worst_error);
	worst_error = 0;
}

/* Fail unless the analytic (float) gradient matches the numeric one. */
static void
check_grad(const char *what, int cfg, const float *analytic, const double *numeric, int64_t n)
{
	double		norm = 0.0,
				e;

	for (int64_t i = 0; i < n; i++)
		norm += numeric[i] * numeric[i];
	if (!(norm > 0.0))
		fail_msg("%s (case %d): numeric gradient is zero, the check is void", what, cfg);
	e = rel_l2_error_fd(analytic, numeric, (size_t) n);
	worst_error = fmax(worst_error, e);
	if (!(e < GRAD_TOL))
		fail_msg("%s (case %d): gradient relative L2 error %g >= %g", what, cfg, e, GRAD_TOL);
}

/* Fail unless the float output y (n) matches the double reference. */
static void
check_forward(const char *what, int cfg, const float *y, const double *ref, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (!(fabs((double) y[i] - ref[i]) <= FWD_TOL * (1.0 + fabs(ref[i]))))
			fail_msg("%s (case %d): output %lld is %.9g, the reference %.9g", what, cfg,
					 (long long) i, y[i], ref[i]);
}

static float *
nan_buffer(int64_t n)
{
	float	   *p = REF_NEW(float, n);

	for (int64_t i = 0; i < n; i++)
		p[i] = NAN;
	return p;
}

/*
 * Fail unless after == before + grad: a backward kernel asked to add.
 */
static void
check_added(const char *what, int cfg, const float *after, const float *before,
			const float *grad, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (!(fabs((double) after[i] - ((double) before[i] + grad[i])) <= 1e-6))
			fail_msg("%s (case %d): value %lld did not add the gradient", what, cfg, (long long) i);
}

/* ---- ZeroPadding2D, Cropping2D, UpSampling2D, GlobalMaxPooling2D ----- */

typedef struct UnaryCtx
{
	DlLayerKind kind;
	int64_t		B,
				H,
				W,
				C;
	int			m[4];
	int			s[2];
	double	   *x,
			   *y,
			   *r;
	int64_t		ny;
} UnaryCtx;

static void
unary_ref(UnaryCtx *c)
{
	switch (c->kind)
	{
		case DL_LAYER_ZEROPADDING2D:
			ref_zeropad2d_forward(c->y, c->x, c->B, c->H, c->W, c->C, c->m);
			break;
		case DL_LAYER_CROPPING2D:
			ref_crop2d_forward(c->y, c->x, c->B, c->H, c->W, c->C, c->m);
			break;
		case DL_LAYER_UPSAMPLING2D:
			ref_upsample2d_forward(c->y, c->x, c->B, c->H, c->W, c->C, c->s[0], c->s[1]);
			break;
		default:
			ref_global_maxpool2d_forward(c->y, c->x, c->B, c->H * c->W, c->C);
			break;
	}
}

static double
unary_loss(void *p)
{
	UnaryCtx   *c = p;

	unary_ref(c);
	return ref_dot(c->r, c->y, c->ny);
}

static void
test_spatial_layers(void **state)
{
	/* kind, B, H, W, C, margins or size */
	static const struct
	{
		DlLayerKind kind;
		int64_t		B,
					H,
					W,
					C;
		int			a[4];
	}			cases[] = {
		{DL_LAYER_ZEROPADDING2D, 2, 3, 4, 2, {1, 2, 0, 3}},
		{DL_LAYER_ZEROPADDING2D, 1, 2, 2, 5, {0, 0, 0, 0}},
		{DL_LAYER_CROPPING2D, 2, 6, 5, 3, {1, 0, 2, 1}},
		{DL_LAYER_CROPPING2D, 3, 4, 4, 1, {1, 2, 0, 3}},
		{DL_LAYER_UPSAMPLING2D, 2, 3, 2, 2, {2, 3}},
		{DL_LAYER_UPSAMPLING2D, 3, 2, 4, 3, {1, 2}},
		{DL_LAYER_GLOBALMAXPOOL2D, 3, 3, 3, 4, {0}},
		{DL_LAYER_GLOBALMAXPOOL2D, 2, 1, 5, 2, {0}},
	};
	DlRng		rng;

	dl_rng_seed(&rng, 41);
	for (int k = 0; k < (int) (sizeof(cases) / sizeof(cases[0])); k++)
	{
		UnaryCtx	c;
		int64_t		nx,
					OH,
					OW;
		float	   *x,
				   *r,
				   *y,
				   *dx;
		int64_t    *argmax;
		double	   *num;
		const char *what = dl_layer_kind_name(cases[k].kind);

		memset(&c, 0, sizeof(c));
		c.kind = cases[k].kind;
		c.B = cases[k].B;
		c.H = cases[k].H;
		c.W = cases[k].W;
		c.C = cases[k].C;
		memcpy(c.m, cases[k].a, sizeof(c.m));
		c.s[0] = cases[k].a[0];
		c.s[1] = cases[k].a[1];
		OH = c.kind == DL_LAYER_ZEROPADDING2D ? c.H + c.m[0] + c.m[1] :
			c.kind == DL_LAYER_CROPPING2D ? c.H - c.m[0] - c.m[1] :
			c.kind == DL_LAYER_UPSAMPLING2D ? c.H * c.s[0] : 1;
		OW = c.kind == DL_LAYER_ZEROPADDING2D ? c.W + c.m[2] + c.m[3] :
			c.kind == DL_LAYER_CROPPING2D ? c.W - c.m[2] - c.m[3] :
			c.kind == DL_LAYER_UPSAMPLING2D ? c.W * c.s[1] : 1;
		nx = c.B * c.H * c.W * c.C;
		c.ny = c.B * OH * OW * c.C;
		x = REF_NEW(float, nx);
		r = REF_NEW(float, c.ny);
		y = nan_buffer(c.ny);
		dx = nan_buffer(nx);
		argmax = REF_NEW(int64_t, c.ny);
		c.x = REF_NEW(double, nx);
		c.y = REF_NEW(double, c.ny);
		c.r = REF_NEW(double, c.ny);
		ref_fill_uniform(x, c.x, nx, -1, 1, &rng);
		ref_fill_uniform(r, c.r, c.ny, -1, 1, &rng);

		switch (c.kind)
		{
			case DL_LAYER_ZEROPADDING2D:
				dl_zeropad2d_forward(y, x, c.B, c.H, c.W, c.C, c.m);
				dl_zeropad2d_backward(dx, r, c.B, c.H, c.W, c.C, c.m);
				break;
			case DL_LAYER_CROPPING2D:
				dl_crop2d_forward(y, x, c.B, c.H, c.W, c.C, c.m);
				dl_crop2d_backward(dx, r, c.B, c.H, c.W, c.C, c.m);
				break;
			case DL_LAYER_UPSAMPLING2D:
				dl_upsample2d_forward(y, x, c.B, c.H, c.W, c.C, c.s[0], c.s[1]);
				dl_upsample2d_backward(dx, r, c.B, c.H, c.W, c.C, c.s[0], c.s[1]);
				break;
			default:
				dl_global_maxpool2d_forward(y, argmax, x, c.B, c.H * c.W, c.C);
				dl_global_maxpool2d_backward(dx, r, argmax, c.B, c.H * c.W, c.C);
				break;
		}
		unary_ref(&c);
		check_forward(what, k, y, c.y, c.ny);
		num = REF_NEW(double, nx);
		ref_numeric_grad(num, c.x, nx, unary_loss, &c, FD_EPS);
		check_grad(what, k, dx, num, nx);
	}
	report("ZeroPadding2D, Cropping2D, UpSampling2D, GlobalMaxPooling2D");
	ref_free_all();
}

/* ---- merges ----------------------------------------------------------- */

typedef struct MergeCtx
{
	DlLayerKind kind;
	int			k;
	int64_t		n;
	double	   *x[4];
	double	   *y,
			   *r;
} MergeCtx;

static double
merge_loss(void *p)
{
	MergeCtx   *c = p;

	ref_merge_forward(c->kind, c->y, c->x, c->k, c->n);
	return ref_dot(c->r, c->y, c->n);
}

static void
test_merges(void **state)
{
	static const struct
	{
		DlLayerKind kind;
		int			k;
	}			cases[] = {
		{DL_LAYER_ADD, 2}, {DL_LAYER_ADD, 3}, {DL_LAYER_SUBTRACT, 2},
		{DL_LAYER_MULTIPLY, 2}, {DL_LAYER_MULTIPLY, 4}, {DL_LAYER_AVERAGE, 3},
		{DL_LAYER_MAXIMUM, 2}, {DL_LAYER_MAXIMUM, 4}, {DL_LAYER_MINIMUM, 3},
	};
	const int64_t n = 37;
	DlRng		rng;

	dl_rng_seed(&rng, 42);
	for (int q = 0; q < (int) (sizeof(cases) / sizeof(cases[0])); q++)
	{
		MergeCtx	c;
		float	   *xf[4];
		float	   *r = REF_NEW(float, n);
		float	   *y = nan_buffer(n);
		const char *what = dl_layer_kind_name(cases[q].kind);

		c.kind = cases[q].kind;
		c.k = cases[q].k;
		c.n = n;
		c.y = REF_NEW(double, n);
		c.r = REF_NEW(double, n);
		for (int j = 0; j < c.k; j++)
		{
			xf[j] = REF_NEW(float, n);
			c.x[j] = REF_NEW(double, n);
			ref_fill_uniform(xf[j], c.x[j], n, -1, 1, &rng);
		}
		ref_fill_uniform(r, c.r, n, -1, 1, &rng);
		dl_merge_forward(c.kind, y, (const float *const *) xf, c.k, n, DL_ACT_LINEAR);
		ref_merge_forward(c.kind, c.y, c.x, c.k, n);
		check_forward(what, q, y, c.y, n);
		{
			/* a fused ReLU gives the ReLU of those bits */
			float	   *yr = nan_buffer(n);

			dl_merge_forward(c.kind, yr, (const float *const *) xf, c.k, n, DL_ACT_RELU);
			for (int64_t i = 0; i < n; i++)
				if (yr[i] != (y[i] > 0.0f ? y[i] : 0.0f))
					fail_msg("%s with ReLU (case %d): value %lld", what, q, (long long) i);
		}
		for (int j = 0; j < c.k; j++)
		{
			float	   *dx = nan_buffer(n);
			float	   *acc = REF_NEW(float, n);
			float	   *base = REF_NEW(float, n);
			double	   *num = REF_NEW(double, n);

			dl_merge_backward(c.kind, dx, false, j, r, (const float *const *) xf, c.k, n);
			ref_numeric_grad(num, c.x[j], n, merge_loss, &c, FD_EPS);
			if (c.kind == DL_LAYER_MAXIMUM || c.kind == DL_LAYER_MINIMUM)
			{
				/* an input that never wins has a zero gradient, rightly */
				double		s = 0;

				for (int64_t i = 0; i < n; i++)
					s += fabs(num[i]) + fabs(dx[i]);
				if (s == 0)
					continue;
			}
			check_grad(what, q * 10 + j, dx, num, n);
			/* asked to add, it adds */
			for (int64_t i = 0; i < n; i++)
				acc[i] = base[i] = (float) i / 7.0f;
			dl_merge_backward(c.kind, acc, true, j, r, (const float *const *) xf, c.k, n);
			check_added(what, q * 10 + j, acc, base, dx, n);
		}
	}
	report("Add, Subtract, Multiply, Average, Maximum, Minimum");
	ref_free_all();
}

/* ---- Concatenate ------------------------------------------------------ */

typedef struct ConcatCtx
{
	int			k;
	int64_t		outer;
	int64_t		width[3];
	double	   *x[3];
	double	   *y,
			   *r;
	int64_t		ny;
} ConcatCtx;

static double
concat_loss(void *p)
{
	ConcatCtx  *c = p;

	ref_concat_forward(c->y, c->x, c->width, c->k, c->outer);
	return ref_dot(c->r, c->y, c->ny);
}

static void
test_concat(void **state)
{
	/* outer, k, widths: the batch times the axes before the axis, then the rest */
	static const int64_t cases[][5] = {
		{4, 2, 3, 5, 0},		/* (B, features) along the last axis */
		{6, 3, 8, 2, 6},		/* (B, H, W, C) along W: outer = B * H */
		{1, 2, 1, 1, 0},
	};
	DlRng		rng;

	dl_rng_seed(&rng, 43);
	for (int q = 0; q < 3; q++)
	{
		ConcatCtx	c;
		float	   *xf[3];
		float	   *r,
				   *y;
		int64_t		total = 0;

		memset(&c, 0, sizeof(c));
		c.outer = cases[q][0];
		c.k = (int) cases[q][1];
		for (int j = 0; j < c.k; j++)
		{
			c.width[j] = cases[q][2 + j];
			total += c.width[j];
			xf[j] = REF_NEW(float, c.outer * c.width[j]);
			c.x[j] = REF_NEW(double, c.outer * c.width[j]);
			ref_fill_uniform(xf[j], c.x[j], c.outer * c.width[j], -1, 1, &rng);
		}
		c.ny = c.outer * total;
		r = REF_NEW(float, c.ny);
		y = nan_buffer(c.ny);
		c.y = REF_NEW(double, c.ny);
		c.r = REF_NEW(double, c.ny);
		ref_fill_uniform(r, c.r, c.ny, -1, 1, &rng);
		dl_concat_forward(y, (const float *const *) xf, c.width, c.k, c.outer);
		ref_concat_forward(c.y, c.x, c.width, c.k, c.outer);
		check_forward("Concatenate", q, y, c.y, c.ny);
		for (int j = 0; j < c.k; j++)
		{
			int64_t		nj = c.outer * c.width[j];
			float	   *dx = nan_buffer(nj);
			float	   *acc = REF_NEW(float, nj);
			float	   *base = REF_NEW(float, nj);
			double	   *num = REF_NEW(double, nj);

			dl_concat_backward(dx, false, j, r, c.width, c.k, c.outer);
			ref_numeric_grad(num, c.x[j], nj, concat_loss, &c, FD_EPS);
			check_grad("Concatenate", q * 10 + j, dx, num, nj);
			for (int64_t i = 0; i < nj; i++)
				acc[i] = base[i] = (float) i / 3.0f;
			dl_concat_backward(acc, true, j, r, c.width, c.k, c.outer);
			check_added("Concatenate", q * 10 + j, acc, base, dx, nj);
		}
	}
	report("Concatenate");
	ref_free_all();
}

/* ---- dilated Conv2D --------------------------------------------------- */

typedef struct ConvCtx
{
	double	   *x,
			   *K,
			   *b,
			   *r,
			   *y;
	RefGeom		g;
} ConvCtx;

static double
conv_loss(void *p)
{
	ConvCtx    *c = p;

	ref_conv2d_forward(c->y, c->x, c->K, c->b, &c->g);
	return ref_dot(c->r, c->y, c->g.B * c->g.OH * c->g.OW * c->g.OC);
}

/* B, H, W, C, OC, KH, KW, padding, DH, DW (strides 1, as Keras requires) */
static const int64_t dilated_cases[][10] = {
	{2, 7, 8, 3, 4, 3, 3, DL_PADDING_VALID, 2, 2},
	{1, 6, 9, 2, 3, 3, 2, DL_PADDING_SAME, 2, 3},
	{2, 5, 6, 16, 3, 2, 2, DL_PADDING_SAME, 3, 1},
	{3, 4, 7, 1, 2, 2, 3, DL_PADDING_VALID, 1, 2},
};

static void
test_conv2d_dilated(void **state)
{
	TestAllocCounter counter;
	DlAllocator alloc = test_allocator(&counter);
	DlRng		rng;

	dl_rng_seed(&rng, 44);
	for (int k = 0; k < (int) (sizeof(dilated_cases) / sizeof(dilated_cases[0])); k++)
	{
		const int64_t *q = dilated_cases[k];
		ConvCtx		c;
		DlConvGeom	g;
		DlScratch	scratch = {&alloc, NULL, 0, SIZE_MAX};
		DlError		err;
		int64_t		nx,
					nk,
					ny,
					OC = q[4];
		float	   *x,
				   *K,
				   *b,
				   *r,
				   *y,
				   *dx,
				   *dK,
				   *db,
				   *work;
		double	   *num;

		dl_conv_geom_init_dilated(&g, q[0], q[1], q[2], q[3], OC, (int) q[5], (int) q[6], 1, 1,
								  (int) q[8], (int) q[9], (DlPadding) q[7]);
		memset(&c.g, 0, sizeof(c.g));
		c.g.B = q[0];
		c.g.H = q[1];
		c.g.W = q[2];
		c.g.C = q[3];
		c.g.OC = OC;
		c.g.KH = q[5];
		c.g.KW = q[6];
		c.g.SH = c.g.SW = 1;
		c.g.padding = (DlPadding) q[7];
		c.g.DH = q[8];
		c.g.DW = q[9];
		ref_geom_init(&c.g);
		assert_int_equal(g.OH, c.g.OH);
		assert_int_equal(g.OW, c.g.OW);
		assert_int_equal(g.pad_top, c.g.pad_top);
		assert_int_equal(g.pad_left, c.g.pad_left);
		nx = g.B * g.H * g.W * g.C;
		nk = g.KH * g.KW * g.C * OC;
		ny = g.B * g.OH * g.OW * OC;
		x = REF_NEW(float, nx);
		K = REF_NEW(float, nk);
		b = REF_NEW(float, OC);
		r = REF_NEW(float, ny);
		y = nan_buffer(ny);
		dx = nan_buffer(nx);
		dK = REF_NEW(float, nk);
		db = REF_NEW(float, OC);
		work = nan_buffer((int64_t) dl_conv2d_workspace_floats(&g));
		c.x = REF_NEW(double, nx);
		c.K = REF_NEW(double, nk);
		c.b = REF_NEW(double, OC);
		c.r = REF_NEW(double, ny);
		c.y = REF_NEW(double, ny);
		ref_fill_uniform(x, c.x, nx, -1, 1, &rng);
		ref_fill_uniform(K, c.K, nk, -1, 1, &rng);
		ref_fill_uniform(b, c.b, OC, -1, 1, &rng);
		ref_fill_uniform(r, c.r, ny, -1, 1, &rng);

		/* im2col */
		dl_conv2d_forward(y, work, x, K, b, &g);
		conv_loss(&c);
		check_forward("dilated conv2d", k, y, c.y, ny);
		dl_conv2d_backward(dx, dK, db, work, r, x, K, &g);
		num = REF_NEW(double, nx);
		ref_numeric_grad(num, c.x, nx, conv_loss, &c, FD_EPS);
		check_grad("dilated conv2d dx", k, dx, num, nx);
		num = REF_NEW(double, nk);
		ref_numeric_grad(num, c.K, nk, conv_loss, &c, FD_EPS);
		check_grad("dilated conv2d dK", k, dK, num, nk);
		num = REF_NEW(double, OC);
		ref_numeric_grad(num, c.b, OC, conv_loss, &c, FD_EPS);
		check_grad("dilated conv2d db", k, db, num, OC);

		/* oneDNN, where it is built in and takes the geometry: the same */
		if (dl_backend_onednn_available())
		{
			float	   *y2 = nan_buffer(ny);
			float	   *dx2 = nan_buffer(nx);
			float	   *dK2 = REF_NEW(float, nk);
			float	   *db2 = REF_NEW(float, OC);
			DlStatus	st = dl_conv2d_dnnl_forward(y2, x, K, b, DL_ACT_LINEAR, &g, &scratch, &err);

			if (st == DL_OK)
			{
				check_forward("dilated conv2d, oneDNN", k, y2, c.y, ny);
				assert_int_equal(dl_conv2d_dnnl_backward(dx2, dK2, db2, r, x, K, &g, &scratch, &err),
								 DL_OK);
				if (rel_l2_error_f(dx2, dx, (size_t) nx) > 1e-5 ||
					rel_l2_error_f(dK2, dK, (size_t) nk) > 1e-5 ||
					rel_l2_error_f(db2, db, (size_t) OC) > 1e-5)
					fail_msg("dilated conv2d (case %d): oneDNN's gradients differ from im2col's", k);
			}
			else
				assert_int_equal(st, DL_ERR_UNSUPPORTED);
			print_message("dilated conv2d case %d: oneDNN %s\n", k,
						  st == DL_OK ? "ran, same as im2col" : "refused it, im2col ran");
		}
		alloc.free(alloc.ctx, scratch.p);
	}
	report("dilated Conv2D");
	assert_no_leaks(&counter);
	ref_free_all();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spatial_layers),
		cmocka_unit_test(test_merges),
		cmocka_unit_test(test_concat),
		cmocka_unit_test(test_conv2d_dilated),
	};

	return cmocka_run_group_tests_name("graph kernels", tests, NULL, NULL);
}
