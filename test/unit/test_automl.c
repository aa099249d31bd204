/*-------------------------------------------------------------------------
 *
 * test_automl.c
 *	  Unit tests: the searches of madlib_keras_automl (automl.c, tpe.c)
 *	  and the search spaces they work in (model_select.c).
 *
 * automl_params with its defaults and every kind of bad value; Hyperband's
 * schedule against MADlib's (computed by its formulas); the Hyperband,
 * ASHA and Hyperopt schedulers driven by a simulated clock, checked
 * against their rules (the best 1/eta go on, at most n_workers jobs in
 * ASHA, promotions only from the top floor(n/eta) finished so far,
 * batches in Hyperopt); TPE proposing better points than chance on a
 * known objective; the space drawing exactly random search's rows; and
 * allocation failures.
 *
 * IDENTIFICATION
 *	  test/unit/test_automl.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_automl.h"
#include "madlib_dl/dl_model_select.h"

#define CGRID "{'loss': ['categorical_crossentropy'], 'optimizer_params_list': [ " \
	"{'optimizer': ['SGD'], 'lr': [0.0001, 0.001, 'log'], 'momentum': [0.95, 0.99, 'log_near_one']}, " \
	"{'optimizer': ['Adam'], 'lr': [0.01, 0.1, 'linear']} ], 'metrics': ['accuracy']}"
#define FGRID "{'batch_size': [16, 32, 64, 128], 'epochs': [1, 2, 3]}"

static const int32_t ids12[] = {1, 2};

static DlSearchSpace *
space_ok(const char *cgrid, const char *fgrid, const DlAllocator *alloc)
{
	DlSearchSpace *s = NULL;
	DlError		err;

	dl_error_clear(&err);
	if (dl_search_space_create(ids12, 2, cgrid, fgrid, alloc, &s, &err) != DL_OK)
		fail_msg("space: %s", err.msg);
	return s;
}

static DlAutomlParams
params_ok(DlAutomlMethod m, const char *text)
{
	DlAutomlParams p;
	DlError		err;

	dl_error_clear(&err);
	if (dl_automl_params_parse(m, text, &p, &err) != DL_OK)
		fail_msg("params '%s': %s", text ? text : "(null)", err.msg);
	return p;
}

static void
bad_params(DlAutomlMethod m, const char *text, DlStatus code, const char *message)
{
	DlAutomlParams p;
	DlError		err;

	dl_error_clear(&err);
	assert_int_equal(dl_automl_params_parse(m, text, &p, &err), code);
	if (strstr(err.msg, message) == NULL)
		fail_msg("params '%s': got \"%s\", expected \"%s\"", text, err.msg, message);
	assert_true(err.hint[0] != '\0');
}

static void
test_params(void **state)
{
	DlAutomlParams p;
	DlAutomlMethod m;
	DlError		err;

	p = params_ok(DL_AUTOML_HYPERBAND, NULL);
	assert_int_equal(p.R, 6);
	assert_int_equal(p.eta, 3);
	assert_int_equal(p.skip_last, 0);
	p = params_ok(DL_AUTOML_HYPERBAND, "  ");
	assert_int_equal(p.R, 6);
	p = params_ok(DL_AUTOML_HYPERBAND, "R=9, eta=3");
	assert_int_equal(p.R, 9);
	assert_int_equal(p.skip_last, 0);
	p = params_ok(DL_AUTOML_HYPERBAND, "r=81,ETA=3,skip_last=1,");
	assert_int_equal(p.R, 81);
	assert_int_equal(p.skip_last, 1);
	p = params_ok(DL_AUTOML_HYPEROPT, NULL);
	assert_int_equal(p.num_configs, 20);
	assert_int_equal(p.num_iterations, 5);
	assert_int_equal(p.algorithm, DL_AUTOML_TPE);
	p = params_ok(DL_AUTOML_HYPEROPT, "num_configs=7, algorithm='rand'");
	assert_int_equal(p.num_configs, 7);
	assert_int_equal(p.num_iterations, 5);
	assert_int_equal(p.algorithm, DL_AUTOML_RAND);
	p = params_ok(DL_AUTOML_ASHA, NULL);
	assert_int_equal(p.R, 6);
	assert_int_equal(p.num_configs, 20);
	assert_int_equal(dl_automl_max_configs(&p), 20);
	assert_int_equal(dl_automl_max_iterations(&p), 6);

	dl_error_clear(&err);
	assert_int_equal(dl_automl_method_from_name("HyperBand", &m, &err), DL_OK);
	assert_int_equal(m, DL_AUTOML_HYPERBAND);
	assert_int_equal(dl_automl_method_from_name("asha", &m, &err), DL_OK);
	assert_int_equal(m, DL_AUTOML_ASHA);
	assert_int_equal(dl_automl_method_from_name("bayes", &m, &err), DL_ERR_INVALID_ARGUMENT);
	assert_string_equal(err.msg, "automl_method must be 'hyperband', 'hyperopt' or 'asha', got 'bayes'");

	bad_params(DL_AUTOML_HYPERBAND, "eta=1", DL_ERR_INVALID_ARGUMENT, "eta must be greater than 1, got 1");
	bad_params(DL_AUTOML_HYPERBAND, "R=2, eta=3", DL_ERR_INVALID_ARGUMENT,
			   "eta must not be greater than R, got R=2 and eta=3");
	bad_params(DL_AUTOML_HYPERBAND, "skip_last=2", DL_ERR_INVALID_ARGUMENT,
			   "skip_last must be non-negative and less than 2, got 2");
	bad_params(DL_AUTOML_HYPERBAND, "skip_last=-1", DL_ERR_INVALID_ARGUMENT, "got -1");
	bad_params(DL_AUTOML_HYPERBAND, "num_configs=3", DL_ERR_INVALID_ARGUMENT,
			   "unknown parameter \"num_configs\" of hyperband in automl_params");
	bad_params(DL_AUTOML_HYPERBAND, "R=6, R=9", DL_ERR_INVALID_ARGUMENT, "parameter R is given twice");
	/* a message starts lowercase, whatever key the user wrote (found by fuzz_grid) */
	bad_params(DL_AUTOML_HYPERBAND, "U=1", DL_ERR_INVALID_ARGUMENT, "unknown parameter \"U\" of hyperband");
	bad_params(DL_AUTOML_HYPERBAND, "R=6.5", DL_ERR_INVALID_ARGUMENT, "parameter R of automl_params must be an integer, got 6.5");
	bad_params(DL_AUTOML_HYPERBAND, "R 6", DL_ERR_PARSE, "expected \"=\" after the parameter name at position 3");
	bad_params(DL_AUTOML_HYPERBAND, "R=", DL_ERR_PARSE, "expected a value at the end of automl_params");
	bad_params(DL_AUTOML_HYPERBAND, "R=6 eta=3", DL_ERR_PARSE, "expected \",\" at position 5");
	bad_params(DL_AUTOML_HYPERBAND, "=6", DL_ERR_PARSE, "expected a parameter name at position 1");
	bad_params(DL_AUTOML_HYPERBAND, "R=200000", DL_ERR_LIMIT, "most iterations R must be at most 100000");
	bad_params(DL_AUTOML_HYPERBAND, "R=100000, eta=2", DL_ERR_LIMIT, "more than 1024");
	bad_params(DL_AUTOML_HYPEROPT, "algorithm=atpe", DL_ERR_INVALID_ARGUMENT,
			   "algorithm in automl_params must be tpe or rand, got atpe");
	bad_params(DL_AUTOML_HYPEROPT, "num_configs=0", DL_ERR_INVALID_ARGUMENT,
			   "num_configs in automl_params must be > 0, got 0");
	bad_params(DL_AUTOML_HYPEROPT, "num_iterations=0", DL_ERR_INVALID_ARGUMENT,
			   "num_iterations in automl_params must be between 1 and 100000, got 0");
	bad_params(DL_AUTOML_HYPEROPT, "num_configs=2000", DL_ERR_LIMIT, "at most 1024, got 2000");
	bad_params(DL_AUTOML_HYPEROPT, "R=6", DL_ERR_INVALID_ARGUMENT, "unknown parameter \"R\" of hyperopt");
	bad_params(DL_AUTOML_ASHA, "skip_last=1", DL_ERR_INVALID_ARGUMENT, "unknown parameter \"skip_last\" of asha");
	bad_params(DL_AUTOML_ASHA, "eta=0", DL_ERR_INVALID_ARGUMENT, "eta must be greater than 1, got 0");
}

/* Hyperband's schedule, row by row: {s, i, n_i, r_i}, as MADlib's formulas give it. */
static void
check_schedule(int R, int eta, int skip_last, const int (*want)[4], int n_want)
{
	DlHyperbandRound rows[DL_HYPERBAND_MAX_ROUNDS];
	DlError		err;
	int			n,
				s_max;

	dl_error_clear(&err);
	assert_int_equal(dl_hyperband_schedule(R, eta, skip_last, rows, &n, &s_max, &err), DL_OK);
	assert_int_equal(n, n_want);
	for (int k = 0; k < n; k++)
	{
		if (rows[k].s != want[k][0] || rows[k].i != want[k][1] || rows[k].n_i != want[k][2] ||
			rows[k].r_i != want[k][3])
			fail_msg("R=%d eta=%d row %d: (%d,%d,%d,%d), expected (%d,%d,%d,%d)", R, eta, k,
					 rows[k].s, rows[k].i, rows[k].n_i, rows[k].r_i,
					 want[k][0], want[k][1], want[k][2], want[k][3]);
	}
}

static void
test_hyperband_schedule(void **state)
{
	static const int r6[][4] = {{1, 0, 3, 2}, {1, 1, 1, 6}, {0, 0, 2, 6}};
	static const int r9[][4] = {{2, 0, 9, 1}, {2, 1, 3, 3}, {2, 2, 1, 9}, {1, 0, 3, 3}, {1, 1, 1, 9},
	{0, 0, 3, 9}};
	static const int r81s1[][4] = {{4, 0, 81, 1}, {4, 1, 27, 3}, {4, 2, 9, 9}, {4, 3, 3, 27},
	{3, 0, 27, 3}, {3, 1, 9, 9}, {3, 2, 3, 27}, {2, 0, 9, 9}, {2, 1, 3, 27}, {1, 0, 6, 27}};
	/* halves round up: 10 / 8 * 2 = 2.5 -> 3 */
	static const int r10e2[][4] = {{3, 0, 8, 1}, {3, 1, 4, 3}, {3, 2, 2, 5}, {3, 3, 1, 10},
	{2, 0, 4, 3}, {2, 1, 2, 5}, {2, 2, 1, 10}, {1, 0, 4, 5}, {1, 1, 2, 10}, {0, 0, 4, 10}};
	DlHyperbandRound rows[DL_HYPERBAND_MAX_ROUNDS];
	DlAutomlParams p;
	DlError		err;
	int			n,
				s_max;

	check_schedule(6, 3, 0, r6, 3);
	check_schedule(9, 3, 0, r9, 6);
	check_schedule(81, 3, 1, r81s1, 10);
	check_schedule(10, 2, 0, r10e2, 10);
	/* s_max exactly: MADlib's floor(log(243, 3)) is 4 */
	dl_error_clear(&err);
	assert_int_equal(dl_hyperband_schedule(243, 3, 0, rows, &n, &s_max, &err), DL_OK);
	assert_int_equal(s_max, 5);
	assert_int_equal(rows[0].n_i, 243);
	assert_int_equal(rows[n - 1].r_i, 243);

	p = params_ok(DL_AUTOML_HYPERBAND, "R=9, eta=3");
	assert_int_equal(dl_automl_max_configs(&p), 15);
	assert_int_equal(dl_automl_max_iterations(&p), 9);
	p = params_ok(DL_AUTOML_HYPERBAND, "R=9, eta=3, skip_last=1");
	assert_int_equal(dl_automl_max_configs(&p), 12);
	assert_int_equal(dl_automl_max_iterations(&p), 3);
}

/* ---------------------------------------------------------------------
 * A simulated driver: jobs end on an iteration clock
 * --------------------------------------------------------------------- */

#define MAXC 64

typedef struct Sim
{
	int			clock;
	int			end[MAXC];		/* clock at which config c's job ends, -1: none */
	int			trained[MAXC];	/* iterations so far */
	int			max_running;
	int			jobs;
	int64_t		work;
	DlAutomlJob log[4 * MAXC];	/* every job started, in order */
	int			rec_at[4 * MAXC];	/* records reported before each job started */
} Sim;

/* A config's score: a fixed function of the configuration and its iterations. */
static double
sim_score(int c, int trained)
{
	return (double) ((c * 37) % 17) / 17.0 + 1.0 / (1.0 + trained);
}

/*
 * Run the search a to its end: start what it gives, move the clock to the
 * next end, report the ended jobs in order of configuration.
 */
static void
sim_run(DlAutoml *a, Sim *sim, double (*score) (int, int))
{
	DlAutomlJob job;
	DlError		err;

	memset(sim, 0, sizeof(*sim));
	for (int c = 0; c < MAXC; c++)
		sim->end[c] = -1;
	dl_error_clear(&err);
	for (;;)
	{
		int			next = -1;
		int			running = 0;

		while (dl_automl_next(a, &job, &err))
		{
			assert_true(job.config >= 0 && job.config < MAXC);
			assert_int_equal(sim->end[job.config], -1);
			assert_int_equal(job.total - job.iterations, sim->trained[job.config]);
			assert_true(job.iterations >= 1);
			sim->end[job.config] = sim->clock + job.iterations;
			sim->rec_at[sim->jobs] = dl_automl_n_records(a);
			sim->log[sim->jobs++] = job;
			sim->work += job.iterations;
		}
		assert_int_equal(err.code, DL_OK);
		for (int c = 0; c < MAXC; c++)
			if (sim->end[c] >= 0)
			{
				running++;
				if (next < 0 || sim->end[c] < next)
					next = sim->end[c];
			}
		assert_int_equal(running, dl_automl_running(a));
		if (running > sim->max_running)
			sim->max_running = running;
		if (next < 0)
			break;
		for (int c = 0; c < MAXC; c++)
			if (sim->end[c] >= 0)
				sim->trained[c] += next - sim->clock;
		sim->clock = next;
		for (int c = 0; c < MAXC; c++)
			if (sim->end[c] == next)
			{
				sim->end[c] = -1;
				dl_automl_report(a, c, score(c, sim->trained[c]));
			}
	}
}

static DlAutoml *
automl_ok(const DlAutomlParams *p, const DlSearchSpace *s, int workers, const DlAllocator *alloc)
{
	DlAutoml   *a = NULL;
	DlError		err;

	dl_error_clear(&err);
	if (dl_automl_create(p, s, workers, true, 42, 0, alloc, &a, &err) != DL_OK)
		fail_msg("create: %s", err.msg);
	return a;
}

static void
test_hyperband(void **state)
{
	TestAllocCounter c;
	DlAllocator alloc = test_allocator(&c);
	DlSearchSpace *s = space_ok(CGRID, FGRID, &alloc);
	DlAutomlParams p = params_ok(DL_AUTOML_HYPERBAND, "R=9, eta=3");
	DlAutoml   *a = automl_ok(&p, s, 2, &alloc);
	Sim			sim;
	int			per_round[3][3] = {{0}};

	assert_true(dl_automl_configs_known(a));
	assert_int_equal(dl_automl_n_configs(a), 15);
	for (int k = 0; k < 15; k++)
		assert_int_equal(dl_automl_bracket(a, k), k < 9 ? 2 : (k < 12 ? 1 : 0));
	sim_run(a, &sim, sim_score);
	/* every bracket runs at once: all 15 start at clock 0 */
	assert_int_equal(sim.max_running, 15);
	assert_int_equal(sim.clock, 9);
	assert_int_equal(sim.work, dl_automl_planned_work(a));
	assert_int_equal(sim.work, 9 * 1 + 3 * 2 + 1 * 6 + 3 * 3 + 1 * 6 + 3 * 9);
	for (int i = 0; i < sim.jobs; i++)
		per_round[2 - sim.log[i].bracket][sim.log[i].rung]++;
	assert_int_equal(per_round[0][0], 9);
	assert_int_equal(per_round[0][1], 3);
	assert_int_equal(per_round[0][2], 1);
	assert_int_equal(per_round[1][0], 3);
	assert_int_equal(per_round[1][1], 1);
	assert_int_equal(per_round[2][0], 3);

	/* the promoted ones of each round are its best by score */
	for (int i = 0; i < dl_automl_n_records(a); i++)
	{
		const DlAutomlRecord *r = dl_automl_record(a, i);
		int			better = 0;
		int			keep = r->bracket == 2 ? (r->rung == 0 ? 3 : (r->rung == 1 ? 1 : 0))
			: (r->bracket == 1 && r->rung == 0 ? 1 : 0);

		for (int j = 0; j < dl_automl_n_records(a); j++)
		{
			const DlAutomlRecord *o = dl_automl_record(a, j);

			if (o->bracket == r->bracket && o->rung == r->rung &&
				(o->score < r->score || (o->score == r->score && o->config < r->config)))
				better++;
		}
		if (r->promoted != (better < keep))
			fail_msg("config %d bracket %d round %d: promoted %d with %d better", r->config,
					 r->bracket, r->rung, r->promoted, better);
		assert_int_equal(r->total, r->bracket == 2 ? (r->rung == 0 ? 1 : (r->rung == 1 ? 3 : 9))
						 : (r->bracket == 1 ? (r->rung == 0 ? 3 : 9) : 9));
	}
	dl_automl_free(a);
	dl_search_space_free(s);
	assert_no_leaks(&c);
}

/* A diverged configuration (NaN) is never promoted. */
static double
nan_score(int c, int trained)
{
	return c % 3 == 0 ? NAN : sim_score(c, trained);
}

static void
test_hyperband_diverged(void **state)
{
	TestAllocCounter c;
	DlAllocator alloc = test_allocator(&c);
	DlSearchSpace *s = space_ok(CGRID, FGRID, &alloc);
	DlAutomlParams p = params_ok(DL_AUTOML_HYPERBAND, "R=9, eta=3");
	DlAutoml   *a = automl_ok(&p, s, 2, &alloc);
	Sim			sim;

	sim_run(a, &sim, nan_score);
	for (int i = 0; i < dl_automl_n_records(a); i++)
	{
		const DlAutomlRecord *r = dl_automl_record(a, i);

		if (isnan(r->score))
			assert_false(r->promoted);
	}
	dl_automl_free(a);
	dl_search_space_free(s);
	assert_no_leaks(&c);
}

static void
test_asha(void **state)
{
	TestAllocCounter c;
	DlAllocator alloc = test_allocator(&c);
	DlSearchSpace *s = space_ok(CGRID, FGRID, &alloc);
	DlAutomlParams p = params_ok(DL_AUTOML_ASHA, "R=9, eta=3, num_configs=12");
	DlAutoml   *a = automl_ok(&p, s, 3, &alloc);
	Sim			sim;
	int			promoted[3] = {0, 0, 0};

	sim_run(a, &sim, sim_score);
	assert_int_equal(dl_automl_n_configs(a), 12);
	assert_int_equal(sim.max_running, 3);

	/*
	 * Each promotion to rung k + 1: when its job started, the configuration
	 * was in the top floor(n_k / 3) of the n_k records of rung k so far.
	 */
	for (int i = 0; i < sim.jobs; i++)
	{
		const DlAutomlJob *job = &sim.log[i];
		int			n_k = 0,
					better = 0;
		double		mine = NAN;

		if (job->rung == 0)
			continue;
		promoted[job->rung - 1]++;
		for (int j = 0; j < sim.rec_at[i]; j++)
			if (dl_automl_record(a, j)->rung == job->rung - 1 &&
				dl_automl_record(a, j)->config == job->config)
				mine = dl_automl_record(a, j)->score;
		assert_false(isnan(mine));
		for (int j = 0; j < sim.rec_at[i]; j++)
		{
			const DlAutomlRecord *o = dl_automl_record(a, j);

			if (o->rung != job->rung - 1)
				continue;
			n_k++;
			better += o->score < mine ? 1 : 0;
		}
		if (!(better < n_k / 3))
			fail_msg("job %d: config %d promoted to rung %d as number %d of %d", i, job->config,
					 job->rung, better + 1, n_k);
	}
	/* in the end the top floor(n_k / 3) of every rung below the top were promoted */
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < dl_automl_n_records(a); i++)
		{
			const DlAutomlRecord *r = dl_automl_record(a, i);
			int			n_k = 0,
						better = 0;

			if (r->rung != k)
				continue;
			for (int j = 0; j < dl_automl_n_records(a); j++)
				if (dl_automl_record(a, j)->rung == k)
				{
					n_k++;
					better += dl_automl_record(a, j)->score < r->score ? 1 : 0;
				}
			if (better < n_k / 3)
				assert_true(r->promoted);
		}
	assert_true(promoted[0] >= 4);
	assert_true(promoted[1] >= 1);
	assert_int_equal(sim.work, 12 * 1 + promoted[0] * 2 + promoted[1] * 6);
	dl_automl_free(a);
	dl_search_space_free(s);
	assert_no_leaks(&c);
}

/* A hand-checked ASHA run: 2 workers, eta 2, R 4 (rungs at 1, 2 and 4 iterations). */
static double
asha_hand_score(int c, int trained)
{
	static const double base[] = {0.5, 0.4, 0.9, 0.1, 0.8, 0.7};

	return base[c] - 0.01 * trained;
}

static void
test_asha_by_hand(void **state)
{
	TestAllocCounter c;
	DlAllocator alloc = test_allocator(&c);
	DlSearchSpace *s = space_ok(CGRID, FGRID, &alloc);
	DlAutomlParams p = params_ok(DL_AUTOML_ASHA, "R=4, eta=2, num_configs=6");
	DlAutoml   *a = automl_ok(&p, s, 2, &alloc);
	Sim			sim;

	/*
	 * Rungs at 1, 2 and 4 iterations.  clock 0: new 0, 1.  clock 1: rung 0
	 * {1: .39, 0: .49}, top 1 = 1: promote 1; new 2.  clock 2: rung 1 {1}
	 * has no top; rung 0's top (1) is promoted: new 3, 4.  clock 3: rung 0
	 * top 2 = {3: .09, 1}: promote 3; new 5.  clock 4: rung 1 {3: .08, 1:
	 * .38}: promote 3 to rung 2; rung 0 top 3 = {3, 1, 0: .49}: promote 0.
	 */
	sim_run(a, &sim, asha_hand_score);
	{
		static const int want[][2] = {{0, 0}, {1, 0}, {1, 1}, {2, 0}, {3, 0}, {4, 0}, {3, 1}, {5, 0},
		{3, 2}, {0, 1}};

		assert_true(sim.jobs >= 10);
		for (int i = 0; i < 10; i++)
			if (sim.log[i].config != want[i][0] || sim.log[i].rung != want[i][1])
				fail_msg("job %d: config %d rung %d, expected config %d rung %d", i, sim.log[i].config,
						 sim.log[i].rung, want[i][0], want[i][1]);
	}
	dl_automl_free(a);
	dl_search_space_free(s);
	assert_no_leaks(&c);
}

/* Hyperopt rand: random search's configurations, in batches of the workers. */
static void
test_hyperopt_rand(void **state)
{
	TestAllocCounter c;
	DlAllocator alloc = test_allocator(&c);
	DlSearchSpace *s = space_ok(CGRID, FGRID, &alloc);
	DlAutomlParams p = params_ok(DL_AUTOML_HYPEROPT, "num_configs=7, num_iterations=2, algorithm=rand");
	DlAutoml   *a = automl_ok(&p, s, 3, &alloc);
	DlModelSelectArgs args;
	DlModelConfigs *rows = NULL;
	DlError		err;
	Sim			sim;

	memset(&args, 0, sizeof(args));
	args.model_ids = ids12;
	args.n_model_ids = 2;
	args.compile_grid = CGRID;
	args.fit_grid = FGRID;
	args.search = DL_SEARCH_RANDOM;
	args.has_num_configs = true;
	args.num_configs = 7;
	args.has_random_state = true;
	args.random_state = 42;
	dl_error_clear(&err);
	assert_int_equal(dl_model_configs_generate(&args, &alloc, &rows, &err), DL_OK);
	for (int k = 0; k < 7; k++)
	{
		int32_t		id;
		char	   *cp,
				   *fp;

		assert_int_equal(dl_search_space_config(s, dl_automl_point(a, k), &id, &cp, &fp, &alloc, &err), DL_OK);
		assert_int_equal(id, rows->model_id[k]);
		assert_string_equal(cp, rows->compile_params[k]);
		assert_string_equal(fp, rows->fit_params[k]);
		dl_free(&alloc, cp);
		dl_free(&alloc, fp);
	}
	dl_model_configs_free(rows);
	sim_run(a, &sim, sim_score);
	assert_int_equal(sim.max_running, 3);
	assert_int_equal(sim.clock, 6);	/* batches of 3, 3, 1 */
	assert_int_equal(sim.work, 14);
	dl_automl_free(a);
	dl_search_space_free(s);
	assert_no_leaks(&c);
}

/* ---------------------------------------------------------------------
 * TPE
 * --------------------------------------------------------------------- */

#define TGRID "{'loss': ['mse'], 'optimizer_params_list': [{'optimizer': ['SGD'], " \
	"'lr': [0.0, 1.0, 'linear']}], 'metrics': [['a'], ['b'], ['c'], ['d']]}"

/* The objective: lr near 0.3, metrics choice 2; a lower value is better. */
static double
objective(const DlSearchSpace *s, const double *pt)
{
	double		lr = NAN;
	double		m = NAN;

	for (int d = 0; d < dl_search_space_n_dims(s); d++)
	{
		if (strcmp(dl_search_space_dim(s, d)->name, "lr") == 0)
			lr = pt[d];
		if (strcmp(dl_search_space_dim(s, d)->name, "metrics") == 0)
			m = pt[d];
	}
	return fabs(lr - 0.3) + (m == 2.0 ? 0.0 : 0.5);
}

static void
test_tpe(void **state)
{
	TestAllocCounter c;
	DlAllocator alloc = test_allocator(&c);
	DlSearchSpace *s = space_ok(TGRID, "{}", &alloc);
	int			D = dl_search_space_n_dims(s);
	DlTpeOptions o;
	double		pts[120 * 8];
	double		loss[120];
	double		tpe_err = 0,
				rand_err = 0;
	int			tpe_hits = 0,
				rand_hits = 0;
	DlError		err;
	DlRng		rng;

	assert_true(D <= 8);
	dl_tpe_default_options(&o);
	assert_true(o.gamma == 0.25 && o.n_ei_candidates == 24 && o.linear_forgetting == 25);
	dl_error_clear(&err);
	/* 20 random observations, then 100 proposals, each observed */
	for (int k = 0; k < 120; k++)
	{
		dl_search_space_seed(&rng, 7, k);
		if (k < 20)
			dl_search_space_sample(s, &rng, pts + k * D);
		else
			assert_int_equal(dl_tpe_suggest(s, pts, loss, k, &o, &rng, pts + k * D, &alloc, &err), DL_OK);
		loss[k] = objective(s, pts + k * D);
		for (int d = 0; d < D; d++)
		{
			const DlSpaceDim *dim = dl_search_space_dim(s, d);

			if (dim->kind != DL_SPACE_CHOICE)
				assert_true(pts[k * D + d] >= dim->low && pts[k * D + d] <= dim->high);
			else
				assert_true(pts[k * D + d] >= 0 && pts[k * D + d] < dim->n_choices);
		}
		if (k >= 20)
		{
			tpe_err += loss[k];
			tpe_hits += loss[k] < 0.5 ? 1 : 0;
		}
	}
	for (int k = 20; k < 120; k++)
	{
		double		pt[8];

		dl_search_space_seed(&rng, 7, k);
		dl_search_space_sample(s, &rng, pt);
		rand_err += objective(s, pt);
		rand_hits += objective(s, pt) < 0.5 ? 1 : 0;
	}
	/* TPE's proposals are much better than chance's */
	if (!(tpe_err < 0.7 * rand_err) || !(tpe_hits > 2 * rand_hits))
		fail_msg("TPE: mean objective %.3f (%d good choices), random %.3f (%d)", tpe_err / 100,
				 tpe_hits, rand_err / 100, rand_hits);
	/* reproducible */
	{
		double		again[8];

		dl_search_space_seed(&rng, 7, 60);
		assert_int_equal(dl_tpe_suggest(s, pts, loss, 60, &o, &rng, again, &alloc, &err), DL_OK);
		for (int d = 0; d < D; d++)
			assert_true(again[d] == pts[60 * D + d] || (isnan(again[d]) && isnan(pts[60 * D + d])));
	}
	dl_search_space_free(s);
	assert_no_leaks(&c);
}

/* Hyperopt tpe: the first n_startup configurations are random search's, the rest TPE's. */
static void
test_hyperopt_tpe(void **state)
{
	TestAllocCounter c;
	DlAllocator alloc = test_allocator(&c);
	DlSearchSpace *s = space_ok(TGRID, "{}", &alloc);
	DlAutomlParams p = params_ok(DL_AUTOML_HYPEROPT, "num_configs=12, num_iterations=1");
	DlAutoml   *a = automl_ok(&p, s, 2, &alloc);
	int			D = dl_search_space_n_dims(s);
	double		pt[8];
	DlRng		rng;
	Sim			sim;

	assert_false(dl_automl_configs_known(a));
	sim_run(a, &sim, sim_score);
	assert_int_equal(dl_automl_n_configs(a), 12);
	assert_int_equal(sim.max_running, 2);
	/* n_startup = max(1, min(20, 12 / 4)) = 3: configurations 0..2 drawn, the others TPE's */
	for (int k = 0; k < 12; k++)
	{
		bool		same = true;

		dl_search_space_seed(&rng, 42, k);
		dl_search_space_sample(s, &rng, pt);
		for (int d = 0; d < D; d++)
			same = same && (pt[d] == dl_automl_point(a, k)[d] ||
							(isnan(pt[d]) && isnan(dl_automl_point(a, k)[d])));
		if (k < 3)
			assert_true(same);
		else
			assert_false(same);
	}
	dl_automl_free(a);
	dl_search_space_free(s);
	assert_no_leaks(&c);
}

/* ---------------------------------------------------------------------
 * Spaces
 * --------------------------------------------------------------------- */

static void
test_space(void **state)
{
	TestAllocCounter c;
	DlAllocator alloc = test_allocator(&c);
	DlSearchSpace *s = space_ok(CGRID, FGRID, &alloc);
	int			D = dl_search_space_n_dims(s);
	double		pt[32];
	bool		seen_sgd = false,
				seen_adam = false,
				seen_128 = false,
				seen_high_lr = false;
	DlError		err;

	/* model_id, loss, optimizer_params_list, (optimizer, lr, momentum), (optimizer, lr), metrics, batch_size, epochs */
	assert_int_equal(D, 11);
	assert_string_equal(dl_search_space_dim(s, 0)->name, "model_id");
	assert_int_equal(dl_search_space_dim(s, 0)->n_choices, 2);
	assert_int_equal(dl_search_space_dim(s, 4)->kind, DL_SPACE_LOG);
	assert_int_equal(dl_search_space_dim(s, 4)->parent, 2);
	assert_int_equal(dl_search_space_dim(s, 4)->parent_choice, 0);
	assert_int_equal(dl_search_space_dim(s, 5)->kind, DL_SPACE_LOG_NEAR_ONE);
	assert_int_equal(dl_search_space_dim(s, 7)->kind, DL_SPACE_LINEAR);
	assert_int_equal(dl_search_space_dim(s, 7)->parent_choice, 1);
	/* probes: 1 + model 1 + opl 1 + ranges 3 + batch 3 + epochs 2 */
	assert_int_equal(dl_search_space_n_probes(s), 11);
	dl_error_clear(&err);
	for (int i = 0; i < dl_search_space_n_probes(s); i++)
	{
		int32_t		id;
		char	   *cp,
				   *fp;

		dl_search_space_probe(s, i, pt);
		assert_int_equal(dl_search_space_config(s, pt, &id, &cp, &fp, &alloc, &err), DL_OK);
		seen_sgd |= strstr(cp, "SGD(") != NULL;
		seen_adam |= strstr(cp, "Adam(lr=0.1)") != NULL;
		seen_high_lr |= strstr(cp, "lr=0.001,") != NULL;
		seen_128 |= strstr(fp, "batch_size=128") != NULL;
		dl_free(&alloc, cp);
		dl_free(&alloc, fp);
	}
	assert_true(seen_sgd && seen_adam && seen_128 && seen_high_lr);
	/* a point outside the space */
	dl_search_space_probe(s, 0, pt);
	pt[0] = 2;
	{
		int32_t		id;
		char	   *cp,
				   *fp;

		assert_int_equal(dl_search_space_config(s, pt, &id, &cp, &fp, &alloc, &err),
						 DL_ERR_INVALID_ARGUMENT);
		assert_null(cp);
	}
	dl_search_space_free(s);
	assert_no_leaks(&c);
}

/*
 * A space and a search keep copies of the caller's allocator: the caller
 * may make them from an allocator on its stack and use them later.
 */
static void
test_allocator_copied(void **state)
{
	TestAllocCounter c;
	DlAllocator *a = malloc(sizeof(DlAllocator));
	DlAllocator keep;
	DlSearchSpace *s = NULL;
	DlAutomlParams p = params_ok(DL_AUTOML_HYPERBAND, NULL);
	DlAutoml   *am = NULL;
	DlError		err;
	double		pt[16];
	int32_t		id;
	char	   *cp,
			   *fp;
	Sim			sim;

	assert_non_null(a);
	*a = keep = test_allocator(&c);
	dl_error_clear(&err);
	assert_int_equal(dl_search_space_create(ids12, 2, CGRID, FGRID, a, &s, &err), DL_OK);
	assert_int_equal(dl_automl_create(&p, s, 2, true, 1, 0, a, &am, &err), DL_OK);
	memset(a, 0, sizeof(*a));	/* what a dangling pointer would find */
	sim_run(am, &sim, sim_score);
	dl_search_space_probe(s, 0, pt);
	assert_int_equal(dl_search_space_config(s, pt, &id, &cp, &fp, &keep, &err), DL_OK);
	dl_free(&keep, cp);
	dl_free(&keep, fp);
	dl_automl_free(am);
	dl_search_space_free(s);
	free(a);
	assert_no_leaks(&c);
}

static void
test_alloc_failures(void **state)
{
	for (int method = 0; method < 3; method++)
	{
		int64_t		total;
		TestAllocCounter c;
		DlAllocator alloc = test_allocator(&c);
		DlSearchSpace *s = space_ok(CGRID, FGRID, &alloc);
		DlAutomlParams p = params_ok((DlAutomlMethod) method, NULL);
		int64_t		before = c.total;
		DlAutoml   *a = automl_ok(&p, s, 2, &alloc);
		Sim			sim;

		sim_run(a, &sim, sim_score);
		dl_automl_free(a);
		total = c.total - before;
		for (int64_t k = 0; k < total; k++)
		{
			DlError		err;
			DlStatus	rc;

			c.fail_after = c.total + k;
			a = NULL;
			dl_error_clear(&err);
			rc = dl_automl_create(&p, s, 2, true, 42, 0, &alloc, &a, &err);
			if (rc == DL_OK)
			{
				DlAutomlJob job;

				/* a TPE proposal that fails says so */
				while (dl_automl_next(a, &job, &err))
					dl_automl_report(a, job.config, 0.5);
				dl_automl_free(a);
			}
			else
				assert_int_equal(rc, DL_ERR_NO_MEMORY);
			c.fail_after = -1;
		}
		dl_search_space_free(s);
		assert_no_leaks(&c);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_hyperband_schedule),
		cmocka_unit_test(test_hyperband),
		cmocka_unit_test(test_hyperband_diverged),
		cmocka_unit_test(test_asha),
		cmocka_unit_test(test_asha_by_hand),
		cmocka_unit_test(test_hyperopt_rand),
		cmocka_unit_test(test_tpe),
		cmocka_unit_test(test_hyperopt_tpe),
		cmocka_unit_test(test_space),
		cmocka_unit_test(test_allocator_copied),
		cmocka_unit_test(test_alloc_failures),
	};

	return cmocka_run_group_tests_name("automl", tests, NULL, NULL);
}
