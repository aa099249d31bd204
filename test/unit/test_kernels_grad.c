/*-------------------------------------------------------------------------
 *
 * test_kernels_grad.c
 *	  Unit tests: every layer's backward kernel against finite differences.
 *
 * For each layer the scalar loss L = sum(r * y) with a fixed random r is
 * differentiated numerically (central differences, eps 1e-6) through the
 * DOUBLE reference forward of ref_kernels.c, and compared with the FLOAT
 * backward kernel run with dy = r.  Inputs are kept away from kinks (ReLU
 * at 0, max-pool ties) so the numeric derivative is well defined.  Also
 * checked: backward adds into parameter gradients, overwrites dx (which
 * starts as NaN here) and accepts dx = NULL.
 *
 * IDENTIFICATION
 *	  test/unit/test_kernels_grad.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "unit_util.h"
#include "ref_kernels.h"
#include "dl_kernels.h"

#define GRAD_TOL 1e-3
#define FD_EPS 1e-6

/* Fail unless the analytic (float) gradient matches the numeric one. */
static void
check_grad(const char *what, int cfg, const float *analytic, const double *numeric, int64_t n)
{
	double		norm = 0.0,
				e;

	for (int64_t i = 0; i < n; i++)
		norm += numeric[i] * numeric[i];
	if (!(norm > 0.0))
		fail_msg("%s (config %d): numeric gradient is zero, the check is void", what, cfg);
	e = rel_l2_error_fd(analytic, numeric, (size_t) n);
	if (!(e < GRAD_TOL))
		fail_msg("%s (config %d): gradient relative L2 error %g >= %g", what, cfg, e, GRAD_TOL);
}

/* n floats set to NaN: a kernel that overwrites leaves none behind. */
static float *
nan_buffer(int64_t n)
{
	float	   *p = REF_NEW(float, n);

	for (int64_t i = 0; i < n; i++)
		p[i] = NAN;
	return p;
}

/* Fail unless b == factor * a within float rounding. */
static void
check_scaled(const char *what, const float *b, const float *a, double factor, int64_t n)
{
	double		num = 0.0,
				den = 0.0;

	for (int64_t i = 0; i < n; i++)
	{
		double		d = b[i] - factor * a[i];

		num += d * d;
		den += factor * a[i] * factor * a[i];
	}
	if (!(den > 0.0) || !(sqrt(num) <= 1e-6 * sqrt(den)))
		fail_msg("%s: not %g times the single-call gradient", what, factor);
}

/* ---- dense ---------------------------------------------------------- */

typedef struct DenseCtx
{
	double	   *x,
			   *W,
			   *b,
			   *r,
			   *y;
	int64_t		B,
				I,
				O;
} DenseCtx;

static double
dense_loss(void *p)
{
	DenseCtx   *c = p;

	ref_dense_forward(c->y, c->x, c->W, c->b, c->B, c->I, c->O);
	return ref_dot(c->r, c->y, c->B * c->O);
}

static void
test_grad_dense(void **state)
{
	static const int64_t cases[][3] = {{1, 1, 1}, {3, 5, 7}, {8, 13, 4}};
	DlRng		rng;

	dl_rng_seed(&rng, 21);
	for (int k = 0; k < 3; k++)
	{
		DenseCtx	c;
		int64_t		B = cases[k][0],
					I = cases[k][1],
					O = cases[k][2];
		float	   *x = REF_NEW(float, B * I);
		float	   *W = REF_NEW(float, I * O);
		float	   *b = REF_NEW(float, O);
		float	   *r = REF_NEW(float, B * O);
		float	   *dx = nan_buffer(B * I);
		float	   *dW = REF_NEW(float, I * O);
		float	   *db = REF_NEW(float, O);
		float	   *dW2 = REF_NEW(float, I * O);
		float	   *db2 = REF_NEW(float, O);
		double	   *num;

		c.B = B;
		c.I = I;
		c.O = O;
		c.x = REF_NEW(double, B * I);
		c.W = REF_NEW(double, I * O);
		c.b = REF_NEW(double, O);
		c.r = REF_NEW(double, B * O);
		c.y = REF_NEW(double, B * O);
		ref_fill_uniform(x, c.x, B * I, -1, 1, &rng);
		ref_fill_uniform(W, c.W, I * O, -1, 1, &rng);
		ref_fill_uniform(b, c.b, O, -1, 1, &rng);
		ref_fill_uniform(r, c.r, B * O, -1, 1, &rng);

		dl_dense_backward(dx, dW, db, r, x, W, B, I, O);
		num = REF_NEW(double, B * I);
		ref_numeric_grad(num, c.x, B * I, dense_loss, &c, FD_EPS);
		check_grad("dense dx", k, dx, num, B * I);
		num = REF_NEW(double, I * O);
		ref_numeric_grad(num, c.W, I * O, dense_loss, &c, FD_EPS);
		check_grad("dense dW", k, dW, num, I * O);
		num = REF_NEW(double, O);
		ref_numeric_grad(num, c.b, O, dense_loss, &c, FD_EPS);
		check_grad("dense db", k, db, num, O);

		/* dx NULL is allowed; a second call adds */
		memcpy(dW2, dW, (size_t) (I * O) * sizeof(float));
		memcpy(db2, db, (size_t) O * sizeof(float));
		dl_dense_backward(NULL, dW2, db2, r, x, W, B, I, O);
		check_scaled("dense dW twice", dW2, dW, 2.0, I * O);
		check_scaled("dense db twice", db2, db, 2.0, O);
		/* db NULL skips the bias */
		dl_dense_backward(NULL, dW2, NULL, r, x, W, B, I, O);
		check_scaled("dense dW thrice", dW2, dW, 3.0, I * O);
	}
	ref_free_all();
}

/* ---- conv2d --------------------------------------------------------- */

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

/* B, H, W, C, OC, KH, KW, SH, SW, padding */
static const int64_t conv_grad_cases[][10] = {
	{2, 5, 5, 2, 3, 3, 3, 1, 1, DL_PADDING_VALID},
	{2, 5, 5, 2, 3, 3, 3, 1, 1, DL_PADDING_SAME},
	{2, 7, 6, 3, 2, 3, 2, 2, 2, DL_PADDING_SAME},	/* non-square, stride 2 */
	{1, 8, 7, 2, 3, 2, 3, 2, 1, DL_PADDING_VALID},
	{3, 4, 5, 3, 2, 1, 1, 1, 1, DL_PADDING_VALID},	/* pointwise */
	{1, 4, 3, 2, 2, 5, 4, 1, 1, DL_PADDING_SAME},	/* kernel > input */
};

static void
test_grad_conv2d(void **state)
{
	DlRng		rng;

	dl_rng_seed(&rng, 22);
	for (int k = 0; k < (int) (sizeof(conv_grad_cases) / sizeof(conv_grad_cases[0])); k++)
	{
		const int64_t *q = conv_grad_cases[k];
		ConvCtx		c;
		DlConvGeom	g;
		int64_t		nx,
					nk,
					ny,
					OC = q[4];
		float	   *x,
				   *K,
				   *b,
				   *r,
				   *dx,
				   *dK,
				   *db,
				   *dK2,
				   *db2,
				   *work;
		double	   *num;

		dl_conv_geom_init(&g, q[0], q[1], q[2], q[3], OC, (int) q[5], (int) q[6],
						  (int) q[7], (int) q[8], (DlPadding) q[9]);
		memset(&c.g, 0, sizeof(c.g));
		c.g.B = q[0];
		c.g.H = q[1];
		c.g.W = q[2];
		c.g.C = q[3];
		c.g.OC = OC;
		c.g.KH = q[5];
		c.g.KW = q[6];
		c.g.SH = q[7];
		c.g.SW = q[8];
		c.g.padding = (DlPadding) q[9];
		ref_geom_init(&c.g);
		nx = g.B * g.H * g.W * g.C;
		nk = g.KH * g.KW * g.C * OC;
		ny = g.B * g.OH * g.OW * OC;
		x = REF_NEW(float, nx);
		K = REF_NEW(float, nk);
		b = REF_NEW(float, OC);
		r = REF_NEW(float, ny);
		dx = nan_buffer(nx);
		dK = REF_NEW(float, nk);
		db = REF_NEW(float, OC);
		dK2 = REF_NEW(float, nk);
		db2 = REF_NEW(float, OC);
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

		dl_conv2d_backward(dx, dK, db, work, r, x, K, &g);
		num = REF_NEW(double, nx);
		ref_numeric_grad(num, c.x, nx, conv_loss, &c, FD_EPS);
		check_grad("conv2d dx", k, dx, num, nx);
		num = REF_NEW(double, nk);
		ref_numeric_grad(num, c.K, nk, conv_loss, &c, FD_EPS);
		check_grad("conv2d dK", k, dK, num, nk);
		num = REF_NEW(double, OC);
		ref_numeric_grad(num, c.b, OC, conv_loss, &c, FD_EPS);
		check_grad("conv2d db", k, db, num, OC);

		/* dx NULL allowed; dK and db accumulate */
		memcpy(dK2, dK, (size_t) nk * sizeof(float));
		memcpy(db2, db, (size_t) OC * sizeof(float));
		dl_conv2d_backward(NULL, dK2, db2, work, r, x, K, &g);
		check_scaled("conv2d dK twice", dK2, dK, 2.0, nk);
		check_scaled("conv2d db twice", db2, db, 2.0, OC);
		dl_conv2d_backward(NULL, dK2, NULL, work, r, x, K, &g);
		check_scaled("conv2d dK thrice", dK2, dK, 3.0, nk);
	}
	ref_free_all();
}

/* ---- pooling -------------------------------------------------------- */

typedef struct PoolCtx
{
	double	   *x,
			   *r,
			   *y;
	RefGeom		g;
	int			mode;			/* 0 max, 1 average, 2 global average */
} PoolCtx;

static double
pool_loss(void *p)
{
	PoolCtx    *c = p;

	if (c->mode == 0)
		ref_maxpool2d_forward(c->y, c->x, &c->g);
	else if (c->mode == 1)
		ref_avgpool2d_forward(c->y, c->x, &c->g);
	else
	{
		ref_global_avgpool2d_forward(c->y, c->x, c->g.B, c->g.H * c->g.W, c->g.C);
		return ref_dot(c->r, c->y, c->g.B * c->g.C);
	}
	return ref_dot(c->r, c->y, c->g.B * c->g.OH * c->g.OW * c->g.C);
}

/* B, H, W, C, PH, PW, SH, SW, padding */
static const int64_t pool_grad_cases[][9] = {
	{2, 6, 6, 2, 2, 2, 2, 2, DL_PADDING_VALID},
	{2, 7, 7, 2, 2, 2, 2, 2, DL_PADDING_SAME},
	{1, 7, 6, 3, 3, 2, 2, 1, DL_PADDING_SAME},
	{2, 5, 8, 1, 3, 3, 1, 1, DL_PADDING_VALID},	/* overlapping windows */
	{1, 5, 5, 2, 3, 3, 1, 1, DL_PADDING_SAME},
};

static void
test_grad_pool(void **state)
{
	DlRng		rng;

	dl_rng_seed(&rng, 23);
	for (int k = 0; k < (int) (sizeof(pool_grad_cases) / sizeof(pool_grad_cases[0])); k++)
	{
		const int64_t *q = pool_grad_cases[k];
		PoolCtx		c;
		DlPoolGeom	g;
		int64_t		nx,
					ny;
		float	   *x,
				   *y,
				   *r,
				   *dx;
		int64_t    *am,
				   *perm;
		double	   *num;

		dl_pool_geom_init(&g, q[0], q[1], q[2], q[3], (int) q[4], (int) q[5],
						  (int) q[6], (int) q[7], (DlPadding) q[8]);
		memset(&c.g, 0, sizeof(c.g));
		c.g.B = q[0];
		c.g.H = q[1];
		c.g.W = q[2];
		c.g.C = q[3];
		c.g.OC = q[3];
		c.g.KH = q[4];
		c.g.KW = q[5];
		c.g.SH = q[6];
		c.g.SW = q[7];
		c.g.padding = (DlPadding) q[8];
		ref_geom_init(&c.g);
		nx = g.B * g.H * g.W * g.C;
		ny = g.B * g.OH * g.OW * g.C;
		x = REF_NEW(float, nx);
		y = REF_NEW(float, ny);
		r = REF_NEW(float, ny);
		dx = nan_buffer(nx);
		am = REF_NEW(int64_t, ny);
		perm = REF_NEW(int64_t, nx);
		c.x = REF_NEW(double, nx);
		c.r = REF_NEW(double, ny);
		c.y = REF_NEW(double, ny);

		/* distinct values 0.01 apart (no ties within eps), all negative */
		for (int64_t i = 0; i < nx; i++)
			perm[i] = i;
		dl_rng_shuffle_i64(&rng, perm, nx);
		for (int64_t i = 0; i < nx; i++)
		{
			x[i] = (float) (-0.1 - 0.01 * (double) perm[i]);
			c.x[i] = x[i];
		}
		ref_fill_uniform(r, c.r, ny, -1, 1, &rng);

		c.mode = 0;
		dl_maxpool2d_forward(y, am, x, &g);
		dl_maxpool2d_backward(dx, r, am, &g);
		num = REF_NEW(double, nx);
		ref_numeric_grad(num, c.x, nx, pool_loss, &c, FD_EPS);
		check_grad("maxpool2d dx", k, dx, num, nx);

		c.mode = 1;
		dx = nan_buffer(nx);
		dl_avgpool2d_backward(dx, r, &g);
		num = REF_NEW(double, nx);
		ref_numeric_grad(num, c.x, nx, pool_loss, &c, FD_EPS);
		check_grad("avgpool2d dx", k, dx, num, nx);

		c.mode = 2;
		dx = nan_buffer(nx);
		dl_global_avgpool2d_backward(dx, r, g.B, g.H * g.W, g.C);
		num = REF_NEW(double, nx);
		ref_numeric_grad(num, c.x, nx, pool_loss, &c, FD_EPS);
		check_grad("global_avgpool2d dx", k, dx, num, nx);
	}
	ref_free_all();
}

/* ---- activations ---------------------------------------------------- */

typedef struct ActCtx
{
	double	   *x,
			   *r,
			   *y;
	int64_t		rows,
				cols;
	DlActivation act;
} ActCtx;

static double
act_loss(void *p)
{
	ActCtx	   *c = p;

	ref_activation_forward(c->act, c->y, c->x, c->rows, c->cols);
	return ref_dot(c->r, c->y, c->rows * c->cols);
}

static void
test_grad_activations(void **state)
{
	static const DlActivation acts[] = {
		DL_ACT_LINEAR, DL_ACT_RELU, DL_ACT_SIGMOID, DL_ACT_TANH,
		DL_ACT_SOFTMAX, DL_ACT_ELU, DL_ACT_SOFTPLUS
	};
	const int64_t rows = 5,
				cols = 7,
				n = rows * cols;
	DlRng		rng;

	dl_rng_seed(&rng, 24);
	for (int a = 0; a < (int) (sizeof(acts) / sizeof(acts[0])); a++)
	{
		ActCtx		c;
		float	   *x = REF_NEW(float, n);
		float	   *y = REF_NEW(float, n);
		float	   *r = REF_NEW(float, n);
		float	   *dx = nan_buffer(n);
		float	   *dxin = REF_NEW(float, n);
		double	   *num = REF_NEW(double, n);

		c.rows = rows;
		c.cols = cols;
		c.act = acts[a];
		c.x = REF_NEW(double, n);
		c.r = REF_NEW(double, n);
		c.y = REF_NEW(double, n);
		ref_fill_uniform(x, NULL, n, -3, 3, &rng);
		for (int64_t i = 0; i < n; i++)
		{
			/* away from the ReLU kink */
			if (fabsf(x[i]) < 0.05f)
				x[i] = x[i] < 0 ? -0.05f - x[i] : 0.05f + x[i];
			c.x[i] = x[i];
		}
		ref_fill_uniform(r, c.r, n, -1, 1, &rng);

		dl_activation_forward(c.act, y, x, rows, cols);
		dl_activation_backward(c.act, dx, r, y, rows, cols);
		ref_numeric_grad(num, c.x, n, act_loss, &c, FD_EPS);
		check_grad(dl_activation_name(c.act), a, dx, num, n);

		/* in place (dx == dy) gives the same bytes */
		memcpy(dxin, r, (size_t) n * sizeof(float));
		dl_activation_backward(c.act, dxin, dxin, y, rows, cols);
		assert_memory_equal(dxin, dx, (size_t) n * sizeof(float));
	}
	ref_free_all();
}

/* ---- dropout -------------------------------------------------------- */

typedef struct DropCtx
{
	double	   *x,
			   *mask,
			   *r,
			   *y;
	int64_t		n;
} DropCtx;

static double
drop_loss(void *p)
{
	DropCtx    *c = p;

	ref_dropout_forward(c->y, c->x, c->mask, c->n);
	return ref_dot(c->r, c->y, c->n);
}

static void
test_grad_dropout(void **state)
{
	const int64_t n = 300;
	DropCtx		c;
	float	   *x = REF_NEW(float, n);
	float	   *y = REF_NEW(float, n);
	float	   *mask = REF_NEW(float, n);
	float	   *r = REF_NEW(float, n);
	float	   *dx = nan_buffer(n);
	double	   *num = REF_NEW(double, n);
	DlRng		rng,
				drop;

	dl_rng_seed(&rng, 25);
	dl_rng_seed(&drop, 26);
	c.n = n;
	c.x = REF_NEW(double, n);
	c.mask = REF_NEW(double, n);
	c.r = REF_NEW(double, n);
	c.y = REF_NEW(double, n);
	ref_fill_uniform(x, c.x, n, -1, 1, &rng);
	ref_fill_uniform(r, c.r, n, -1, 1, &rng);
	dl_dropout_forward(y, mask, x, n, 0.4, &drop);
	ref_to_double(c.mask, mask, n);	/* the mask is fixed for the check */
	dl_dropout_backward(dx, r, mask, n);
	ref_numeric_grad(num, c.x, n, drop_loss, &c, FD_EPS);
	check_grad("dropout dx", 0, dx, num, n);
	ref_free_all();
}

/* ---- batch normalization -------------------------------------------- */

typedef struct BnCtx
{
	double	   *x,
			   *gamma,
			   *beta,
			   *r,
			   *y;
	int64_t		R,
				C;
	double		eps;
} BnCtx;

static double
bn_loss(void *p)
{
	BnCtx	   *c = p;

	ref_batchnorm_forward_train(c->y, NULL, NULL, c->x, c->gamma, c->beta, c->R, c->C,
								c->eps);
	return ref_dot(c->r, c->y, c->R * c->C);
}

static void
test_grad_batchnorm(void **state)
{
	/* R, C, with_gamma, with_beta */
	static const int64_t cases[][4] = {
		{6, 3, 1, 1}, {2, 1, 1, 1}, {12, 5, 0, 1}, {7, 4, 1, 0}, {4, 67, 1, 1}, {5, 2, 0, 0}
	};
	DlRng		rng;

	dl_rng_seed(&rng, 27);
	for (int k = 0; k < (int) (sizeof(cases) / sizeof(cases[0])); k++)
	{
		int64_t		R = cases[k][0],
					C = cases[k][1],
					n = R * C;
		int			has_g = (int) cases[k][2],
					has_b = (int) cases[k][3];
		BnCtx		c;
		float	   *x = REF_NEW(float, n);
		float	   *gamma = REF_NEW(float, C);
		float	   *beta = REF_NEW(float, C);
		float	   *r = REF_NEW(float, n);
		float	   *y = REF_NEW(float, n);
		float	   *mean = REF_NEW(float, C);
		float	   *invstd = REF_NEW(float, C);
		float	   *mm = REF_NEW(float, C);
		float	   *mv = REF_NEW(float, C);
		float	   *dx = nan_buffer(n);
		float	   *dg = REF_NEW(float, C);
		float	   *dbt = REF_NEW(float, C);
		float	   *dg2 = REF_NEW(float, C);
		float	   *dbt2 = REF_NEW(float, C);
		double	   *num;

		c.R = R;
		c.C = C;
		c.eps = 1e-3;
		c.x = REF_NEW(double, n);
		c.gamma = has_g ? REF_NEW(double, C) : NULL;
		c.beta = has_b ? REF_NEW(double, C) : NULL;
		c.r = REF_NEW(double, n);
		c.y = REF_NEW(double, n);
		ref_fill_uniform(x, c.x, n, -2, 2, &rng);
		ref_fill_uniform(gamma, c.gamma, C, 0.5, 1.5, &rng);
		ref_fill_uniform(beta, c.beta, C, -1, 1, &rng);
		ref_fill_uniform(r, c.r, n, -1, 1, &rng);

		dl_batchnorm_forward_train(y, mean, invstd, mm, mv, x,
								   has_g ? gamma : NULL, has_b ? beta : NULL, R, C,
								   0.99, c.eps, false, DL_ACT_LINEAR);
		dl_batchnorm_backward(dx, has_g ? dg : NULL, has_b ? dbt : NULL, r, NULL, x, mean, invstd,
							  has_g ? gamma : NULL, R, C);
		num = REF_NEW(double, n);
		ref_numeric_grad(num, c.x, n, bn_loss, &c, FD_EPS);
		check_grad("batchnorm dx", k, dx, num, n);
		if (has_g)
		{
			num = REF_NEW(double, C);
			ref_numeric_grad(num, c.gamma, C, bn_loss, &c, FD_EPS);
			check_grad("batchnorm dgamma", k, dg, num, C);
		}
		if (has_b)
		{
			num = REF_NEW(double, C);
			ref_numeric_grad(num, c.beta, C, bn_loss, &c, FD_EPS);
			check_grad("batchnorm dbeta", k, dbt, num, C);
		}
		{
			/*
			 * a fused ReLU: the forward's output through it, the backward
			 * masking dy first, bit for bit the two layers apart
			 */
			float	   *yr = REF_NEW(float, n);
			float	   *rm = REF_NEW(float, n);
			float	   *dxf = nan_buffer(n);
			float	   *dxs = nan_buffer(n);
			float	   *g1 = REF_NEW(float, C);
			float	   *g2 = REF_NEW(float, C);

			dl_batchnorm_forward_train(yr, mean, invstd, mm, mv, x,
									   has_g ? gamma : NULL, has_b ? beta : NULL, R, C,
									   0.99, c.eps, false, DL_ACT_RELU);
			for (int64_t i = 0; i < n; i++)
			{
				if (yr[i] != (y[i] > 0.0f ? y[i] : 0.0f))
					fail_msg("batchnorm with ReLU (case %d): output %lld", k, (long long) i);
				rm[i] = yr[i] > 0.0f ? r[i] : 0.0f;
			}
			dl_batchnorm_backward(dxf, g1, NULL, r, yr, x, mean, invstd, gamma, R, C);
			dl_batchnorm_backward(dxs, g2, NULL, rm, NULL, x, mean, invstd, gamma, R, C);
			assert_memory_equal(dxf, dxs, (size_t) n * sizeof(float));
			assert_memory_equal(g1, g2, (size_t) C * sizeof(float));
		}
		if (has_g && has_b)
		{
			/* dx NULL allowed; dgamma and dbeta accumulate */
			memcpy(dg2, dg, (size_t) C * sizeof(float));
			memcpy(dbt2, dbt, (size_t) C * sizeof(float));
			dl_batchnorm_backward(NULL, dg2, dbt2, r, NULL, x, mean, invstd, gamma, R, C);
			check_scaled("batchnorm dgamma twice", dg2, dg, 2.0, C);
			check_scaled("batchnorm dbeta twice", dbt2, dbt, 2.0, C);
		}
	}
	ref_free_all();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grad_dense),
		cmocka_unit_test(test_grad_conv2d),
		cmocka_unit_test(test_grad_pool),
		cmocka_unit_test(test_grad_activations),
		cmocka_unit_test(test_grad_dropout),
		cmocka_unit_test(test_grad_batchnorm),
	};

	return cmocka_run_group_tests_name("kernels_grad", tests, NULL, NULL);
}
