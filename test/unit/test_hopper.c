/*-------------------------------------------------------------------------
 *
 * test_hopper.c
 *	  The model hopper (dl_hopper.h) against its rotation: whatever order
 *	  the segments finish in, every model visits the segments in the
 *	  order of the rotation (the model at place p visits segments
 *	  (p - j) mod N, j = 0..N-1: for K <= N MADlib's hop-by-hop rotation,
 *	  at hop h segment s holds place (s + h) mod M), each segment once
 *	  per iteration, never two segments at once; K < N, K = N and K > N.  Also the visit order
 *	  (a seeded permutation, stably sorted by cost), divergence, and
 *	  models added and dropped between rounds.
 *
 * IDENTIFICATION
 *	  test/unit/test_hopper.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_hopper.h"
#include "madlib_dl/dl_rng.h"

#define MAXK 12
#define MAXN 9
#define MAXIT 4

/*
 * The segments model at place p visits in one iteration: (p - j) mod N.
 * For p < N that is MADlib's rotation over M places (at hop h segment s
 * holds place (s + h) mod M, the segments below N), checked here too.
 */
static int
rotation(int p, int M, int N, int *seq)
{
	int			n = 0;

	for (int j = 0; j < N; j++)
		seq[n++] = ((p - j) % N + N) % N;
	if (p < N)
	{
		int			m = 0;

		for (int h = 0; h < M; h++)
		{
			int			s = ((p - h) % M + M) % M;

			if (s < N)
				assert_int_equal(seq[m++], s);
		}
		assert_int_equal(m, N);
	}
	return n;
}

/*
 * The model that a free segment s should get, by the rule of
 * dl_hopper.h, from the test's own record: the least advanced of the
 * free models due on s (lowest iteration, fewest visits in it, then
 * place), -1 when none.  visits_done[k] counts k's visits since the
 * round began at iteration first.
 */
static int
expected_pick(const DlHopper *h, int K, int N, int s, int first, int last,
			  const int *visits_done, const int *on)
{
	int			best = -1,
				best_it = 0,
				best_pos = 0,
				best_p = 0;

	for (int p = 0; p < dl_hopper_n_places(h); p++)
	{
		int			k = dl_hopper_place(h, p);
		int			it,
					pos;
		bool		busy = false;

		if (k < 0 || k >= K || !dl_hopper_is_live(h, k))
			continue;
		for (int t = 0; t < N; t++)
			busy = busy || on[t] == k;
		it = first + visits_done[k] / N;
		pos = visits_done[k] % N;
		if (busy || it > last || ((p - pos) % N + N) % N != s)
			continue;
		if (best < 0 || it < best_it || (it == best_it && pos < best_pos) ||
			(it == best_it && pos == best_pos && p < best_p))
		{
			best = k;
			best_it = it;
			best_pos = pos;
			best_p = p;
		}
	}
	return best;
}

/*
 * Run iterations 1..iters of a hopper of K models on N segments, in
 * rounds of `round` iterations, finishing a random busy segment each
 * time (rng), and check each model's visits against the rotation.
 */
static void
check_schedule(int K, int N, int iters, int round, uint64_t seed)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlHopperConfig cfg;
	double		cost[MAXK];
	DlHopper   *h;
	DlError		err;
	int			on[MAXN];		/* model on each segment, -1 free */
	int			n_visits[MAXK];
	int			round_visits[MAXK];	/* visits since the round began */
	int			visits[MAXK][MAXIT * MAXN];	/* segments, in order */
	int64_t		visit_it[MAXK][MAXIT * MAXN];
	DlRng		r;

	for (int k = 0; k < K; k++)
		cost[k] = (double) (k % 3);	/* ties: the sort must be stable */
	cfg.n_models = K;
	cfg.n_segments = N;
	cfg.cost = cost;
	cfg.seed = seed;
	assert_int_equal(dl_hopper_create(&cfg, &a, &h, &err), DL_OK);
	assert_int_equal(dl_hopper_n_places(h), K > N ? K : N);
	dl_rng_seed(&r, seed * 31 + 7);
	memset(n_visits, 0, sizeof(n_visits));

	for (int first = 1; first <= iters; first += round)
	{
		int			last = first + round - 1 > iters ? iters : first + round - 1;

		dl_hopper_begin_round(h, first, last);
		for (int s = 0; s < N; s++)
			on[s] = -1;
		memset(round_visits, 0, sizeof(round_visits));
		for (;;)
		{
			int			busy[MAXN];
			int			n_busy = 0;
			int			s;

			for (s = 0; s < N; s++)
			{
				int64_t		it;
				int			want;

				if (on[s] >= 0)
					continue;
				want = expected_pick(h, K, N, s, first, last, round_visits, on);
				on[s] = dl_hopper_next(h, s, &it);
				assert_int_equal(on[s], want);
				if (on[s] >= 0)
				{
					int			k = on[s];

					round_visits[k]++;

					/* never on two segments at once */
					for (int t = 0; t < N; t++)
						assert_true(t == s || on[t] != k);
					assert_in_range(it, first, last);
					visits[k][n_visits[k]] = s;
					visit_it[k][n_visits[k]] = it;
					n_visits[k]++;
				}
			}
			for (s = 0; s < N; s++)
				if (on[s] >= 0)
					busy[n_busy++] = s;
			if (n_busy == 0)
				break;
			s = busy[(int) (dl_rng_uniform(&r) * n_busy) % n_busy];
			dl_hopper_done(h, on[s], false);
			on[s] = -1;
			assert_true(dl_hopper_finished_through(h) >= first - 1);
		}
		assert_true(dl_hopper_round_done(h));
		assert_int_equal(dl_hopper_finished_through(h), last);
	}

	/* each model: the rotation of its place, once per iteration */
	for (int p = 0; p < dl_hopper_n_places(h); p++)
	{
		int			k = dl_hopper_place(h, p);
		int			seq[MAXK > MAXN ? MAXK : MAXN];
		int			n;

		if (k < 0)
		{
			assert_true(p >= K);
			continue;
		}
		n = rotation(p, dl_hopper_n_places(h), N, seq);
		assert_int_equal(n, N);
		assert_int_equal(n_visits[k], iters * N);
		for (int i = 0; i < iters * N; i++)
		{
			assert_int_equal(visits[k][i], seq[i % N]);
			assert_int_equal(visit_it[k][i], 1 + i / N);
		}
	}
	dl_hopper_free(h);
	assert_no_leaks(&c);
}

static void
test_rotation(void **state)
{
	static const int shapes[][2] = {{3, 5}, {5, 5}, {8, 3}, {1, 1}, {1, 4}, {12, 1}, {7, 9}};

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		for (uint64_t seed = 1; seed <= 4; seed++)
		{
			check_schedule(shapes[i][0], shapes[i][1], MAXIT, 1, seed);
			check_schedule(shapes[i][0], shapes[i][1], MAXIT, 3, seed);
		}
}

static void
test_visit_order(void **state)
{
	double		cost[10] = {1, 5, 5, 2, 5, 1, 0, 2, 9, 5};
	double		flat[10] = {0};
	int			o1[10],
				o2[10],
				o3[10];
	bool		seen[10] = {false};

	dl_hopper_visit_order(o1, cost, 10, 42);
	dl_hopper_visit_order(o2, cost, 10, 42);
	assert_memory_equal(o1, o2, sizeof(o1));
	for (int i = 0; i < 10; i++)
	{
		assert_in_range(o1[i], 0, 9);
		assert_false(seen[o1[i]]);
		seen[o1[i]] = true;
		if (i > 0)
			assert_true(cost[o1[i - 1]] >= cost[o1[i]]);
	}
	/* stable: equal costs keep the order of the permutation */
	dl_hopper_visit_order(o3, flat, 10, 42);
	{
		int			pos[10];

		for (int i = 0; i < 10; i++)
			pos[o3[i]] = i;
		for (int i = 1; i < 10; i++)
			if (cost[o1[i - 1]] == cost[o1[i]])
				assert_true(pos[o1[i - 1]] < pos[o1[i]]);
	}
	/* another seed, another permutation */
	dl_hopper_visit_order(o2, flat, 10, 43);
	assert_memory_not_equal(o2, o3, sizeof(o2));
}

static void
test_divergence_and_changes(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	double		cost[3] = {1, 1, 1};
	DlHopperConfig cfg = {3, 2, cost, 5};
	DlHopper   *h;
	DlError		err;
	int64_t		it;
	int			k;
	int			added;

	assert_int_equal(dl_hopper_create(&cfg, &a, &h, &err), DL_OK);
	dl_hopper_begin_round(h, 1, 2);
	k = dl_hopper_next(h, 0, &it);
	assert_true(k >= 0);
	dl_hopper_done(h, k, true);		/* diverged: never again */
	assert_false(dl_hopper_is_live(h, k));
	for (;;)
	{
		int			s0 = dl_hopper_next(h, 0, &it);
		int			s1 = dl_hopper_next(h, 1, &it);

		assert_true(s0 != k && s1 != k);
		if (s0 < 0 && s1 < 0)
			break;
		if (s0 >= 0)
			dl_hopper_done(h, s0, false);
		if (s1 >= 0)
			dl_hopper_done(h, s1, false);
	}
	assert_true(dl_hopper_round_done(h));

	/* drop one, add one: the new one takes the empty place */
	{
		int			live = dl_hopper_place(h, 0) == k ? dl_hopper_place(h, 1) : dl_hopper_place(h, 0);
		int			p_live = dl_hopper_place(h, 0) == live ? 0 : (dl_hopper_place(h, 1) == live ? 1 : 2);

		dl_hopper_drop_model(h, live);
		assert_int_equal(dl_hopper_place(h, p_live), -1);
		added = dl_hopper_add_model(h, 2.0, &err);
		assert_int_equal(added, 3);
		assert_int_equal(dl_hopper_place(h, p_live), added);
	}
	/* no empty place left after one more: a new place */
	assert_int_equal(dl_hopper_add_model(h, 1.0, &err), 4);
	assert_int_equal(dl_hopper_n_places(h), 4);
	dl_hopper_begin_round(h, 3, 3);
	{
		int			n = 0;

		for (int round = 0; round < 10; round++)
			for (int s = 0; s < 2; s++)
			{
				int			m = dl_hopper_next(h, s, &it);

				if (m >= 0)
				{
					assert_int_equal(it, 3);
					assert_true(dl_hopper_is_live(h, m));
					dl_hopper_done(h, m, false);
					n++;
				}
			}
		/* three live models (one original, two added), two segments each */
		assert_int_equal(n, 6);
	}
	assert_true(dl_hopper_round_done(h));
	dl_hopper_free(h);
	assert_no_leaks(&c);
}

static void
test_bad_config(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	double		cost[1] = {1};
	DlHopperConfig cfg = {0, 2, cost, 1};
	DlHopper   *h;
	DlError		err;

	assert_int_equal(dl_hopper_create(&cfg, &a, &h, &err), DL_ERR_INVALID_ARGUMENT);
	assert_null(h);
	cfg.n_models = 1;
	cfg.n_segments = DL_HOPPER_MAX_SEGMENTS + 1;
	assert_int_equal(dl_hopper_create(&cfg, &a, &h, &err), DL_ERR_INVALID_ARGUMENT);
	cfg.n_segments = 1;
	c.fail_after = c.total + 1;
	assert_int_equal(dl_hopper_create(&cfg, &a, &h, &err), DL_ERR_NO_MEMORY);
	c.fail_after = -1;
	dl_hopper_free(NULL);
	assert_no_leaks(&c);
}

/*
 * The hopper keeps a copy of the caller's allocator: a driver that made it
 * from an allocator on its stack adds models and frees it later.  Here
 * the allocator given is overwritten right after the hopper is made.
 */
static void
test_allocator_copied(void **state)
{
	TestAllocCounter c;
	DlAllocator *a = malloc(sizeof(DlAllocator));
	double		cost[2] = {1, 2};
	DlHopperConfig cfg = {2, 2, cost, 7};
	DlHopper   *h;
	DlError		err;

	assert_non_null(a);
	*a = test_allocator(&c);
	assert_int_equal(dl_hopper_create(&cfg, a, &h, &err), DL_OK);
	memset(a, 0, sizeof(*a));	/* what a dangling pointer would find */
	for (int k = 0; k < 40; k++)	/* enough to grow the arrays */
		assert_int_equal(dl_hopper_add_model(h, 1.0, &err), 2 + k);
	dl_hopper_free(h);
	free(a);
	assert_no_leaks(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allocator_copied),
		cmocka_unit_test(test_rotation),
		cmocka_unit_test(test_visit_order),
		cmocka_unit_test(test_divergence_and_changes),
		cmocka_unit_test(test_bad_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
