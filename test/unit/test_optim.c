/*-------------------------------------------------------------------------
 *
 * test_optim.c
 *	  Unit tests: optimizer update rules, decay, clipping, ranges, state
 *	  and configuration checks.
 *
 * The expected parameter values after each of three steps were computed
 * independently with python3 (float64 arithmetic following the Keras
 * formulas, with float32 rounding of parameters and state between steps,
 * as the engine stores them); the generator is reproduced at the end of
 * this file.  Every case updates a 3-parameter block that sits in the
 * middle of a 5-float block, so the test also checks that floats outside
 * the range (and their gradients) are untouched.
 *
 * IDENTIFICATION
 *	  test/unit/test_optim.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_optim.h"

/* Start values and per-step gradients of the 3 updated parameters. */
static const float P0[3] = {1.0f, -0.5f, 0.25f};
static const float G[3][3] = {
	{0.5f, -1.0f, 2.0f},
	{-0.3f, 0.8f, 1.5f},
	{0.05f, -0.02f, 0.01f},
};

/* Expected parameters after steps 1, 2, 3 (python3, see the end of the file). */
static const double exp_sgd_plain[3][3] = {
	{0.949999988, -0.400000006, 0.0500000007},
	{0.980000019, -0.480000019, -0.100000001},
	{0.975000024, -0.478000015, -0.101000004},
};
static const double exp_sgd_momentum[3][3] = {
	{0.949999988, -0.400000006, 0.0500000007},
	{0.935000002, -0.390000015, -0.280000001},
	{0.916500032, -0.379000008, -0.578000009},
};
static const double exp_sgd_nesterov_decay[3][3] = {
	{0.904999971, -0.310000002, -0.129999995},
	{0.902499974, -0.330333322, -0.481999993},
	{0.877499998, -0.298733324, -0.709749997},
};
static const double exp_adam[3][3] = {
	{0.900000632, -0.400000304, 0.150000155},
	{0.880850911, -0.394187808, 0.0517427735},
	{0.86063993, -0.388696939, -0.0244655963},
};
static const double exp_adam_amsgrad_decay[3][3] = {
	{0.900000632, -0.400000304, 0.150000155},
	{0.882591844, -0.394716233, 0.0606752597},
	{0.865749359, -0.390142232, -0.00280046184},
};
static const double exp_rmsprop[3][3] = {
	{0.683772445, -0.18377234, -0.0662277192},
	{0.85280323, -0.387631178, -0.262343824},
	{0.823237658, -0.382259816, -0.263721973},
};
static const double exp_rmsprop_momentum_bigeps[3][3] = {
	{0.930993438, -0.370900542, 0.0391814895},
	{0.937640131, -0.405274689, -0.210232377},
	{0.934086382, -0.419959098, -0.335926324},
};
static const double exp_adam_bigeps[3][3] = {
	{0.986347318, -0.475974679, 0.211257413},
	{0.983366907, -0.474299639, 0.167882666},
	{0.980212927, -0.472717702, 0.134250492},
};
static const double exp_rmsprop_momentum_centered[3][3] = {
	{0.666667402, -0.16666685, -0.0833332837},
	{0.669638634, -0.203925312, -0.467391193},
	{0.641380191, -0.217180818, -0.660931647},
};
static const double exp_adagrad[3][3] = {
	{0.915484607, -0.404653758, 0.151227042},
	{0.9607113, -0.465301603, 0.0917013586},
	{0.953194857, -0.463785589, 0.0913045257},
};
static const double exp_adadelta[3][3] = {
	{0.99858582, -0.49858579, 0.24858579},
	{0.999634266, -0.499854684, 0.247366115},
	{0.99943465, -0.499816477, 0.24735643},
};
static const double exp_adamax[3][3] = {
	{0.900000036, -0.400000006, 0.150000006},
	{0.884194732, -0.394731581, 0.0630709752},
	{0.870514274, -0.390664399, 0.00797929801},
};
static const double exp_nadam[3][3] = {
	{0.89435482, -0.39435482, 0.14435482},
	{0.942730784, -0.454730093, 0.076591149},
	{0.931203425, -0.452394634, 0.0664738715},
};
static const double exp_sgd_clipnorm[3][3] = {
	{0.781782091, -0.0635642111, -0.622871578},
	{0.95556742, -0.526991785, -1.49179816},
	{0.905567408, -0.506991804, -1.50179815},
};
static const double exp_sgd_clipvalue[3][3] = {
	{0.5, 0.100000024, -0.350000024},
	{0.800000012, -0.5, -0.950000048},
	{0.75, -0.479999989, -0.960000038},
};

/*
 * Run three steps of cfg on the block {7, P0, -3} with range [1, 4) and
 * compare with expected; floats 0 and 4 and their gradients must stay.
 */
static void
check_three_steps(const DlOptimConfig *cfg, const double expected[3][3], const char *what)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlError		err;
	DlOptimState st;
	float		p[5] = {7.0f, P0[0], P0[1], P0[2], -3.0f};
	DlParamRange r = {1, 4};

	assert_int_equal(dl_optim_state_init(&st, cfg, 5, &a, &err), DL_OK);
	for (int step = 0; step < 3; step++)
	{
		float		g[5] = {100.0f, G[step][0], G[step][1], G[step][2], -100.0f};

		dl_optim_step(&st, p, g, &r, 1);
		for (int i = 0; i < 3; i++)
		{
			if (!(fabs(p[1 + i] - expected[step][i]) <= 2e-6 * fabs(expected[step][i]) + 1e-7))
				fail_msg("%s: step %d param %d = %.9g, expected %.9g", what, step + 1, i,
						 (double) p[1 + i], expected[step][i]);
		}
		assert_true(p[0] == 7.0f && p[4] == -3.0f);
		assert_true(g[0] == 100.0f && g[4] == -100.0f);
		assert_int_equal(st.iterations, step + 1);
	}
	dl_optim_state_free(&st, &a);
	assert_null(st.slots);
	assert_no_leaks(&c);
}

static DlOptimConfig
cfg_of(DlOptimKind kind, double lr)
{
	DlOptimConfig cfg;

	dl_optim_config_default(&cfg, kind);
	cfg.lr = lr;
	return cfg;
}

static void
test_sgd(void **state)
{
	DlOptimConfig cfg = cfg_of(DL_OPTIM_SGD, 0.1);

	check_three_steps(&cfg, exp_sgd_plain, "sgd");
	cfg.momentum = 0.9;
	check_three_steps(&cfg, exp_sgd_momentum, "sgd momentum");
	cfg.nesterov = true;
	cfg.decay = 0.5;
	check_three_steps(&cfg, exp_sgd_nesterov_decay, "sgd nesterov decay");
}

static void
test_adam(void **state)
{
	DlOptimConfig cfg = cfg_of(DL_OPTIM_ADAM, 0.1);

	check_three_steps(&cfg, exp_adam, "adam");
	cfg.amsgrad = true;
	cfg.decay = 0.1;
	check_three_steps(&cfg, exp_adam_amsgrad_decay, "adam amsgrad decay");
	/* a large epsilon pins where epsilon enters the formula */
	cfg = cfg_of(DL_OPTIM_ADAM, 0.1);
	cfg.epsilon = 0.1;
	check_three_steps(&cfg, exp_adam_bigeps, "adam epsilon 0.1");
}

static void
test_rmsprop(void **state)
{
	DlOptimConfig cfg = cfg_of(DL_OPTIM_RMSPROP, 0.1);

	check_three_steps(&cfg, exp_rmsprop, "rmsprop");
	cfg.momentum = 0.5;
	cfg.centered = true;
	check_three_steps(&cfg, exp_rmsprop_momentum_centered, "rmsprop momentum centered");
	/* with momentum, epsilon goes inside the square root (TensorFlow kernel) */
	cfg = cfg_of(DL_OPTIM_RMSPROP, 0.1);
	cfg.momentum = 0.5;
	cfg.epsilon = 0.5;
	check_three_steps(&cfg, exp_rmsprop_momentum_bigeps, "rmsprop momentum epsilon 0.5");
}

static void
test_adagrad_adadelta_adamax_nadam(void **state)
{
	DlOptimConfig cfg = cfg_of(DL_OPTIM_ADAGRAD, 0.1);

	check_three_steps(&cfg, exp_adagrad, "adagrad");
	cfg = cfg_of(DL_OPTIM_ADADELTA, 1.0);
	check_three_steps(&cfg, exp_adadelta, "adadelta");
	cfg = cfg_of(DL_OPTIM_ADAMAX, 0.1);
	check_three_steps(&cfg, exp_adamax, "adamax");
	cfg = cfg_of(DL_OPTIM_NADAM, 0.1);
	check_three_steps(&cfg, exp_nadam, "nadam");
}

static void
test_clipping(void **state)
{
	DlOptimConfig cfg = cfg_of(DL_OPTIM_SGD, 1.0);

	/* the gradients +-100 outside the range must not enter the norm */
	cfg.clipnorm = 1.0;
	check_three_steps(&cfg, exp_sgd_clipnorm, "sgd clipnorm");
	cfg.clipnorm = 0.0;
	cfg.clipvalue = 0.6;
	check_three_steps(&cfg, exp_sgd_clipvalue, "sgd clipvalue");
}

/* Two disjoint ranges: the norm is global over both; the gap stays. */
static void
test_ranges_global_norm(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlError		err;
	DlOptimState st;
	DlOptimConfig cfg = cfg_of(DL_OPTIM_SGD, 0.5);
	float		p[5] = {1, 1, 1, 1, 1};
	float		g[5] = {3, 50, 50, 0, 4};	/* norm over ranges = 5 */
	DlParamRange r[2] = {{0, 1}, {3, 5}};

	cfg.clipnorm = 1.0;
	assert_int_equal(dl_optim_state_init(&st, &cfg, 5, &a, &err), DL_OK);
	assert_int_equal(st.n_slots, 0);
	dl_optim_step(&st, p, g, r, 2);
	/* scaled gradient 3/5, 0, 4/5; p -= 0.5 * g */
	assert_close(p[0], 1.0 - 0.5 * 0.6, 1e-6, 1e-7);
	assert_true(p[1] == 1.0f && p[2] == 1.0f);
	assert_close(p[3], 1.0, 0, 0);
	assert_close(p[4], 1.0 - 0.5 * 0.8, 1e-6, 1e-7);
	/* a range running past the block is clamped, not overrun */
	r[1].end = 99;
	dl_optim_step(&st, p, g, r, 2);
	assert_int_equal(st.iterations, 2);
	dl_optim_state_free(&st, &a);
	assert_no_leaks(&c);
}

static void
test_slots_and_state(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlError		err;
	DlOptimState st;
	DlOptimConfig cfg = cfg_of(DL_OPTIM_ADAGRAD, 0.1);
	float		p[4] = {0},
				g[4] = {0};
	DlParamRange r = {0, 4};

	assert_int_equal(dl_optim_n_slots(&cfg), 1);
	cfg.initial_accumulator_value = 0.25;
	assert_int_equal(dl_optim_state_init(&st, &cfg, 4, &a, &err), DL_OK);
	for (int i = 0; i < 4; i++)
		assert_true(st.slots[i] == 0.25f);
	dl_optim_state_free(&st, &a);

	cfg = cfg_of(DL_OPTIM_SGD, 0.1);
	assert_int_equal(dl_optim_n_slots(&cfg), 0);
	cfg.momentum = 0.5;
	assert_int_equal(dl_optim_n_slots(&cfg), 1);
	cfg = cfg_of(DL_OPTIM_ADAM, 0.1);
	assert_int_equal(dl_optim_n_slots(&cfg), 2);
	cfg.amsgrad = true;
	assert_int_equal(dl_optim_n_slots(&cfg), 3);
	cfg = cfg_of(DL_OPTIM_RMSPROP, 0.1);
	assert_int_equal(dl_optim_n_slots(&cfg), 1);
	cfg.momentum = 0.9;
	cfg.centered = true;
	assert_int_equal(dl_optim_n_slots(&cfg), 3);
	cfg = cfg_of(DL_OPTIM_ADADELTA, 1);
	assert_int_equal(dl_optim_n_slots(&cfg), 2);
	cfg = cfg_of(DL_OPTIM_ADAMAX, 1);
	assert_int_equal(dl_optim_n_slots(&cfg), 2);

	/* Nadam keeps the running momentum product */
	cfg = cfg_of(DL_OPTIM_NADAM, 0.1);
	assert_int_equal(dl_optim_n_slots(&cfg), 2);
	assert_int_equal(dl_optim_state_init(&st, &cfg, 4, &a, &err), DL_OK);
	assert_close(st.m_schedule, 1.0, 0, 0);
	dl_optim_step(&st, p, g, &r, 1);
	dl_optim_step(&st, p, g, &r, 1);
	assert_close(st.m_schedule,
				 0.9 * (1 - 0.5 * pow(0.96, 0.004)) * 0.9 * (1 - 0.5 * pow(0.96, 0.008)),
				 1e-12, 0);
	dl_optim_state_free(&st, &a);

	/* out of memory is reported, and nothing is left allocated */
	cfg = cfg_of(DL_OPTIM_ADAM, 0.1);
	c.fail_after = c.total;
	assert_int_equal(dl_optim_state_init(&st, &cfg, 4, &a, &err), DL_ERR_NO_MEMORY);
	assert_null(st.slots);
	assert_no_leaks(&c);
}

static void
test_defaults_and_names(void **state)
{
	DlOptimConfig cfg;
	DlOptimKind k;
	DlError		err;

	dl_optim_config_default(&cfg, DL_OPTIM_SGD);
	assert_close(cfg.lr, 0.01, 0, 0);
	assert_close(cfg.momentum, 0, 0, 0);
	assert_false(cfg.nesterov);
	dl_optim_config_default(&cfg, DL_OPTIM_ADAM);
	assert_close(cfg.lr, 0.001, 0, 0);
	assert_close(cfg.beta_1, 0.9, 0, 0);
	assert_close(cfg.beta_2, 0.999, 0, 0);
	assert_close(cfg.epsilon, 1e-7, 0, 0);
	dl_optim_config_default(&cfg, DL_OPTIM_ADADELTA);
	assert_close(cfg.rho, 0.95, 0, 0);
	assert_close(cfg.lr, 0.001, 0, 0);
	dl_optim_config_default(&cfg, DL_OPTIM_RMSPROP);
	assert_close(cfg.rho, 0.9, 0, 0);
	dl_optim_config_default(&cfg, DL_OPTIM_ADAGRAD);
	assert_close(cfg.initial_accumulator_value, 0.1, 0, 0);
	dl_optim_config_default(&cfg, DL_OPTIM_NADAM);
	assert_close(cfg.schedule_decay, 0.004, 0, 0);

	assert_int_equal(dl_optim_kind_from_name("adam", &k, &err), DL_OK);
	assert_int_equal(k, DL_OPTIM_ADAM);
	assert_int_equal(dl_optim_kind_from_name("RMSProp", &k, &err), DL_OK);
	assert_int_equal(k, DL_OPTIM_RMSPROP);
	assert_int_equal(dl_optim_kind_from_name("sgd", &k, &err), DL_OK);
	assert_int_equal(k, DL_OPTIM_SGD);
	assert_int_equal(dl_optim_kind_from_name("NADAM", &k, &err), DL_OK);
	assert_int_equal(k, DL_OPTIM_NADAM);
	assert_int_equal(dl_optim_kind_from_name("Adamaxx", &k, &err), DL_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err.msg, "\"Adamaxx\""));
	assert_non_null(strstr(err.hint, "Adadelta"));
	assert_int_equal(dl_optim_kind_from_name("Ftrl", &k, NULL), DL_ERR_INVALID_ARGUMENT);
	assert_string_equal(dl_optim_kind_name(DL_OPTIM_RMSPROP), "RMSprop");
	for (int i = DL_OPTIM_SGD; i <= DL_OPTIM_NADAM; i++)
	{
		assert_int_equal(dl_optim_kind_from_name(dl_optim_kind_name((DlOptimKind) i), &k, &err), DL_OK);
		assert_int_equal(k, i);
	}
}

/* Set one field to a bad value; validation must fail naming it. */
static void
expect_invalid(DlOptimConfig cfg, const char *msg)
{
	DlError		err;

	dl_error_clear(&err);
	assert_int_equal(dl_optim_config_validate(&cfg, &err), DL_ERR_INVALID_ARGUMENT);
	if (strstr(err.msg, msg) == NULL)
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, msg);
	assert_true(err.hint[0] != '\0');
}

static void
test_validate(void **state)
{
	DlOptimConfig good = cfg_of(DL_OPTIM_SGD, 0.1),
				cfg;
	DlError		err;
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlOptimState st;

	assert_int_equal(dl_optim_config_validate(&good, &err), DL_OK);
	cfg = good;
	cfg.lr = -1;
	assert_int_equal(dl_optim_config_validate(&cfg, NULL), DL_ERR_INVALID_ARGUMENT);
	assert_int_equal(dl_optim_state_init(&st, &cfg, 4, &a, NULL), DL_ERR_INVALID_ARGUMENT);
	cfg = good;
	cfg.lr = -0.1;
	expect_invalid(cfg, "learning rate must be positive, got -0.1");
	cfg.lr = 0;
	expect_invalid(cfg, "learning rate must be positive, got 0");
	cfg.lr = NAN;
	expect_invalid(cfg, "learning rate must be positive, got nan");
	cfg.lr = INFINITY;
	expect_invalid(cfg, "learning rate must be positive, got inf");
	cfg = good;
	cfg.momentum = 1.0;
	expect_invalid(cfg, "momentum must be in [0, 1), got 1");
	cfg = good;
	cfg.momentum = -0.5;
	expect_invalid(cfg, "got -0.5");
	cfg = good;
	cfg.beta_1 = 1.5;
	expect_invalid(cfg, "beta_1 must be in [0, 1), got 1.5");
	cfg = good;
	cfg.beta_2 = 1.0;
	expect_invalid(cfg, "beta_2");
	cfg = good;
	cfg.rho = -0.1;
	expect_invalid(cfg, "rho must be in [0, 1), got -0.1");
	cfg = good;
	cfg.epsilon = -1e-3;
	expect_invalid(cfg, "epsilon must be non-negative, got -0.001");
	cfg = good;
	cfg.decay = -1;
	expect_invalid(cfg, "decay must be non-negative, got -1");
	cfg = good;
	cfg.clipnorm = -2;
	expect_invalid(cfg, "clipnorm must be non-negative, got -2");
	cfg = good;
	cfg.clipvalue = NAN;
	expect_invalid(cfg, "clipvalue must be non-negative, got nan");
	cfg = good;
	cfg.initial_accumulator_value = -1;
	expect_invalid(cfg, "initial_accumulator_value");

	/* state_init refuses a bad configuration without allocating */
	cfg = good;
	cfg.lr = -1;
	assert_int_equal(dl_optim_state_init(&st, &cfg, 4, &a, &err), DL_ERR_INVALID_ARGUMENT);
	assert_int_equal(c.total, 0);
}

/* Same inputs give byte-identical results. */
static void
test_deterministic(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlError		err;
	DlOptimState s1,
				s2;
	DlOptimConfig cfg = cfg_of(DL_OPTIM_NADAM, 0.01);
	float		p1[64],
				p2[64],
				g[64];
	DlParamRange r = {0, 64};

	for (int i = 0; i < 64; i++)
		p1[i] = p2[i] = (float) sin(i);
	assert_int_equal(dl_optim_state_init(&s1, &cfg, 64, &a, &err), DL_OK);
	assert_int_equal(dl_optim_state_init(&s2, &cfg, 64, &a, &err), DL_OK);
	for (int step = 0; step < 10; step++)
	{
		for (int i = 0; i < 64; i++)
			g[i] = (float) cos(i * step);
		dl_optim_step(&s1, p1, g, &r, 1);
		for (int i = 0; i < 64; i++)
			g[i] = (float) cos(i * step);
		dl_optim_step(&s2, p2, g, &r, 1);
	}
	assert_memory_equal(p1, p2, sizeof(p1));
	assert_memory_equal(s1.slots, s2.slots, 2 * 64 * sizeof(float));
	dl_optim_state_free(&s1, &a);
	dl_optim_state_free(&s2, &a);
	assert_no_leaks(&c);
}

/*
 * Keras LearningRateSchedules at given optimizer steps (values worked out
 * with python3 from Keras' formulas), an SGD run whose three updates use
 * steps 0, 1 and 2 of a schedule, and lr_scale multiplying the rate.
 */
static void
test_schedules(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlLrSchedule s;
	DlOptimConfig cfg;
	DlOptimState st;
	DlError		err;
	float		p[3] = {P0[0], P0[1], P0[2]};
	const double want[3][3] = {
		{0.95, -0.4, 0.05}, {0.965, -0.44, -0.025}, {0.9645, -0.4398, -0.0251}
	};
	DlParamRange r = {0, 3};

	memset(&s, 0, sizeof(s));
	s.kind = DL_LR_EXPONENTIAL;
	s.initial = 0.1;
	s.decay_steps = 100;
	s.decay_rate = 0.96;
	assert_true(dl_lr_schedule_value(&s, 0) == 0.1);
	assert_true(fabs(dl_lr_schedule_value(&s, 250) - 0.09029798987795908) < 1e-15);
	s.staircase = true;
	assert_true(fabs(dl_lr_schedule_value(&s, 250) - 0.09216) < 1e-15);
	assert_true(fabs(dl_lr_schedule_value(&s, 199) - 0.096) < 1e-15);
	s.kind = DL_LR_INVERSE_TIME;
	s.decay_steps = 10;
	s.decay_rate = 0.5;
	assert_true(fabs(dl_lr_schedule_value(&s, 25) - 0.05) < 1e-15);
	s.staircase = false;
	assert_true(fabs(dl_lr_schedule_value(&s, 25) - 0.044444444444444446) < 1e-15);

	memset(&s, 0, sizeof(s));
	s.kind = DL_LR_PIECEWISE;
	s.n_boundaries = 2;
	s.n_values = 3;
	s.boundaries[0] = 100;
	s.boundaries[1] = 200;
	s.values[0] = 1.0;
	s.values[1] = 0.5;
	s.values[2] = 0.1;
	assert_true(dl_lr_schedule_value(&s, 100) == 1.0 && dl_lr_schedule_value(&s, 101) == 0.5 &&
				dl_lr_schedule_value(&s, 200) == 0.5 && dl_lr_schedule_value(&s, 201) == 0.1);
	assert_int_equal(dl_lr_schedule_validate(&s, &err), DL_OK);
	s.boundaries[1] = 100;
	assert_int_equal(dl_lr_schedule_validate(&s, &err), DL_ERR_INVALID_ARGUMENT);

	memset(&s, 0, sizeof(s));
	s.kind = DL_LR_POLYNOMIAL;
	s.initial = 0.1;
	s.decay_steps = 100;
	s.end_learning_rate = 0.01;
	s.power = 2;
	assert_true(fabs(dl_lr_schedule_value(&s, 50) - 0.0325) < 1e-15);
	assert_true(fabs(dl_lr_schedule_value(&s, 150) - 0.01) < 1e-15);
	s.cycle = true;
	assert_true(fabs(dl_lr_schedule_value(&s, 150) - 0.015625) < 1e-15);
	assert_true(dl_lr_schedule_value(&s, 0) == 0.1);

	memset(&s, 0, sizeof(s));
	s.kind = DL_LR_COSINE;
	s.initial = 0.1;
	s.decay_steps = 100;
	s.alpha = 0.1;
	assert_true(fabs(dl_lr_schedule_value(&s, 50) - 0.05500000000000001) < 1e-15);
	assert_true(fabs(dl_lr_schedule_value(&s, 500) - 0.01) < 1e-15);
	assert_string_equal(dl_lr_schedule_name(DL_LR_COSINE), "CosineDecay");

	/* SGD: the updates use the schedule at steps 0, 1 and 2 (0.1, 0.05, 0.01) */
	cfg = cfg_of(DL_OPTIM_SGD, 1.0);
	cfg.schedule.kind = DL_LR_PIECEWISE;
	cfg.schedule.n_boundaries = 2;
	cfg.schedule.n_values = 3;
	cfg.schedule.boundaries[0] = 0;
	cfg.schedule.boundaries[1] = 1;
	cfg.schedule.values[0] = 0.1;
	cfg.schedule.values[1] = 0.05;
	cfg.schedule.values[2] = 0.01;
	assert_int_equal(dl_optim_state_init(&st, &cfg, 3, &a, &err), DL_OK);
	for (int step = 0; step < 3; step++)
	{
		float		g[3] = {G[step][0], G[step][1], G[step][2]};

		dl_optim_step(&st, p, g, &r, 1);
		for (int i = 0; i < 3; i++)
			if (!(fabs(p[i] - want[step][i]) <= 2e-6 * fabs(want[step][i]) + 1e-7))
				fail_msg("schedule: step %d param %d = %.9g, expected %.9g", step + 1, i,
						 (double) p[i], want[step][i]);
	}
	dl_optim_state_free(&st, &a);

	/* lr_scale: SGD at 0.05 scaled by 2 is SGD at 0.1, bit for bit */
	cfg = cfg_of(DL_OPTIM_SGD, 0.05);
	assert_int_equal(dl_optim_state_init(&st, &cfg, 3, &a, &err), DL_OK);
	assert_true(st.lr_scale == 1.0);
	st.lr_scale = 2.0;
	memcpy(p, P0, sizeof(p));
	for (int step = 0; step < 3; step++)
	{
		float		g[3] = {G[step][0], G[step][1], G[step][2]};

		dl_optim_step(&st, p, g, &r, 1);
		for (int i = 0; i < 3; i++)
			assert_true((float) exp_sgd_plain[step][i] == p[i] ||
						fabs(p[i] - exp_sgd_plain[step][i]) <= 2e-6 * fabs(exp_sgd_plain[step][i]) + 1e-7);
	}
	assert_true(dl_optim_lr(&st) == 0.1);
	dl_optim_state_free(&st, &a);
	assert_no_leaks(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sgd),
		cmocka_unit_test(test_adam),
		cmocka_unit_test(test_rmsprop),
		cmocka_unit_test(test_adagrad_adadelta_adamax_nadam),
		cmocka_unit_test(test_clipping),
		cmocka_unit_test(test_ranges_global_norm),
		cmocka_unit_test(test_slots_and_state),
		cmocka_unit_test(test_defaults_and_names),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_schedules),
	};

	return cmocka_run_group_tests_name("optim", tests, NULL, NULL);
}

/*
 * The generator of the expected values (python3, no numpy):
 *
 * # Independent reference for test_optim.c: the update rules written from
 * # the Keras formulas in float64, with float32 storage of params and slots
 * # between steps (struct round trip), as the engine stores them.
 * import math, struct
 * def f32(x): return struct.unpack('f', struct.pack('f', x))[0]
 *
 * P0 = [1.0, -0.5, 0.25]
 * G = [[0.5, -1.0, 2.0], [-0.3, 0.8, 1.5], [0.05, -0.02, 0.01]]
 *
 * def run(kind, steps=3, lr=0.1, decay=0.0, momentum=0.0, nesterov=False, b1=0.9, b2=0.999,
 *         eps=1e-7, amsgrad=False, rho=0.9, centered=False, iav=0.1, sd=0.004, clipnorm=0, clipvalue=0, grads=G):
 *     p = [f32(x) for x in P0]
 *     n = len(p)
 *     s = {k: [0.0]*n for k in ['m','v','vh','mom','mg','acc','dacc','u']}
 *     s['acc'] = [f32(iav)]*n if kind == 'adagrad' else [0.0]*n
 *     msched = 1.0
 *     out = []
 *     for it in range(steps):
 *         g = [f32(x) for x in grads[it]]
 *         if clipnorm > 0:
 *             nrm = math.sqrt(sum(x*x for x in g))
 *             if nrm > clipnorm:
 *                 g = [f32(x*clipnorm/nrm) for x in g]
 *         if clipvalue > 0:
 *             c = f32(clipvalue)
 *             g = [min(max(x, -c), c) for x in g]
 *         lrt = lr / (1 + decay*it)
 *         t = it + 1
 *         for i in range(n):
 *             gi = g[i]
 *             if kind == 'sgd':
 *                 if momentum == 0:
 *                     p[i] = f32(p[i] - lrt*gi)
 *                 else:
 *                     v = momentum*s['mom'][i] - lrt*gi
 *                     s['mom'][i] = f32(v)
 *                     p[i] = f32(p[i] + (momentum*v - lrt*gi if nesterov else v))
 *             elif kind == 'adam':
 *                 m = b1*s['m'][i] + (1-b1)*gi; v = b2*s['v'][i] + (1-b2)*gi*gi
 *                 s['m'][i] = f32(m); s['v'][i] = f32(v)
 *                 if amsgrad:
 *                     v = max(s['vh'][i], v); s['vh'][i] = f32(v)
 *                 lh = lrt*math.sqrt(1-b2**t)/(1-b1**t)
 *                 p[i] = f32(p[i] - lh*m/(math.sqrt(v)+eps))
 *             elif kind == 'rmsprop':
 *                 ms = rho*s['acc'][i] + (1-rho)*gi*gi; s['acc'][i] = f32(ms)
 *                 den = ms
 *                 if centered:
 *                     a = rho*s['mg'][i] + (1-rho)*gi; s['mg'][i] = f32(a); den = ms - a*a
 *                 if momentum > 0:
 *                     mo = momentum*s['mom'][i] + lrt*gi/math.sqrt(den+eps); s['mom'][i] = f32(mo)
 *                     p[i] = f32(p[i] - mo)
 *                 else:
 *                     p[i] = f32(p[i] - lrt*gi/(math.sqrt(den)+eps))
 *             elif kind == 'adagrad':
 *                 a = s['acc'][i] + gi*gi; s['acc'][i] = f32(a)
 *                 p[i] = f32(p[i] - lrt*gi/(math.sqrt(a)+eps))
 *             elif kind == 'adadelta':
 *                 a = rho*s['acc'][i] + (1-rho)*gi*gi
 *                 up = gi*math.sqrt(s['dacc'][i]+eps)/math.sqrt(a+eps)
 *                 s['acc'][i] = f32(a)
 *                 p[i] = f32(p[i] - lrt*up)
 *                 s['dacc'][i] = f32(rho*s['dacc'][i] + (1-rho)*up*up)
 *             elif kind == 'adamax':
 *                 m = b1*s['m'][i] + (1-b1)*gi; u = max(b2*s['u'][i], abs(gi))
 *                 s['m'][i] = f32(m); s['u'][i] = f32(u)
 *                 p[i] = f32(p[i] - lrt/(1-b1**t)*m/(u+eps))
 *             elif kind == 'nadam':
 *                 mu = b1*(1-0.5*0.96**(t*sd)); mu1 = b1*(1-0.5*0.96**((t+1)*sd))
 *                 msn = msched*mu; msx = msn*mu1
 *                 gp = gi/(1-msn)
 *                 m = b1*s['m'][i] + (1-b1)*gi; mp = m/(1-msx)
 *                 v = b2*s['v'][i] + (1-b2)*gi*gi; vp = v/(1-b2**t)
 *                 mbar = (1-mu)*gp + mu1*mp
 *                 s['m'][i] = f32(m); s['v'][i] = f32(v)
 *                 p[i] = f32(p[i] - lrt*mbar/(math.sqrt(vp)+eps))
 *         if kind == 'nadam':
 *             msched = msched*b1*(1-0.5*0.96**(t*sd))
 *         out.append(list(p))
 *     return out
 *
 * cases = [
 *  ('sgd_plain', dict(kind='sgd')),
 *  ('sgd_momentum', dict(kind='sgd', momentum=0.9)),
 *  ('sgd_nesterov_decay', dict(kind='sgd', momentum=0.9, nesterov=True, decay=0.5)),
 *  ('adam', dict(kind='adam')),
 *  ('adam_amsgrad_decay', dict(kind='adam', amsgrad=True, decay=0.1)),
 *  ('rmsprop', dict(kind='rmsprop')),
 *  ('rmsprop_momentum_bigeps', dict(kind='rmsprop', momentum=0.5, eps=0.5)),
 *  ('adam_bigeps', dict(kind='adam', eps=0.1)),
 *  ('rmsprop_momentum_centered', dict(kind='rmsprop', momentum=0.5, centered=True)),
 *  ('adagrad', dict(kind='adagrad')),
 *  ('adadelta', dict(kind='adadelta', lr=1.0, rho=0.95)),
 *  ('adamax', dict(kind='adamax')),
 *  ('nadam', dict(kind='nadam')),
 *  ('sgd_clipnorm', dict(kind='sgd', lr=1.0, clipnorm=1.0)),
 *  ('sgd_clipvalue', dict(kind='sgd', lr=1.0, clipvalue=0.6)),
 * ]
 * for name, kw in cases:
 *     r = run(**kw)
 *     print('static const double exp_%s[3][3] = {' % name)
 *     for row in r:
 *         print('\t{' + ', '.join('%.9g' % x for x in row) + '},')
 *     print('};')
 */
