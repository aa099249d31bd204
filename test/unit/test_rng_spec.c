/*-------------------------------------------------------------------------
 *
 * test_rng_spec.c
 *	  Unit tests: the random generator, allocation checks and spec layout.
 *
 * IDENTIFICATION
 *	  test/unit/test_rng_spec.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_rng.h"
#include "madlib_dl/dl_spec.h"

static void
test_rng_deterministic(void **state)
{
	DlRng		a,
				b;
	double		sum = 0,
				sumsq = 0;

	dl_rng_seed(&a, 7);
	dl_rng_seed(&b, 7);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(dl_rng_next(&a), dl_rng_next(&b));
	dl_rng_seed(&b, 8);
	assert_true(dl_rng_next(&a) != dl_rng_next(&b));
	for (int i = 0; i < 100000; i++)
	{
		double		z = dl_rng_normal(&a);

		sum += z;
		sumsq += z * z;
	}
	assert_close(sum / 100000, 0.0, 0, 0.02);
	assert_close(sumsq / 100000, 1.0, 0, 0.02);
}

static void
test_rng_shuffle_is_permutation(void **state)
{
	DlRng		r;
	int64_t		p[100];
	int			seen[100] = {0};

	dl_rng_seed(&r, 1);
	for (int i = 0; i < 100; i++)
		p[i] = i;
	dl_rng_shuffle_i64(&r, p, 100);
	for (int i = 0; i < 100; i++)
		seen[p[i]]++;
	for (int i = 0; i < 100; i++)
		assert_int_equal(seen[i], 1);
}

/*
 * splitmix64 against the published reference outputs (Vigna's
 * splitmix64.c: seed 0 and seed 1234567), and the state it leaves.
 */
static void
test_splitmix64_reference(void **state)
{
	static const uint64_t from0[4] = {
		0xe220a8397b1dcdafULL, 0x6e789e6aa1b965f4ULL,
		0x06c45d188009454fULL, 0xf88bb8a8724c81ecULL
	};
	static const uint64_t from1234567[3] = {
		6457827717110365317ULL, 3203168211198807973ULL, 9817491932198370423ULL
	};
	uint64_t	x = 0;
	DlRng		r;

	for (int i = 0; i < 4; i++)
		assert_true(dl_splitmix64_next(&x) == from0[i]);
	assert_true(x == 4 * 0x9e3779b97f4a7c15ULL);
	x = 1234567;
	for (int i = 0; i < 3; i++)
		assert_true(dl_splitmix64_next(&x) == from1234567[i]);
	/* xoshiro's state is the first four splitmix64 outputs of the seed */
	dl_rng_seed(&r, 0);
	assert_memory_equal(r.s, from0, sizeof(from0));
}

/*
 * dl_rng_hash_seed is three chained splitmix64 steps (values from an
 * independent Python implementation); each key changes the result.
 */
static void
test_rng_hash_seed(void **state)
{
	assert_true(dl_rng_hash_seed(42, 3, 1) == 0x5d396f908f79bb0bULL);
	assert_true(dl_rng_hash_seed(42, -1, -2) == 0x30a013fb16631ad1ULL);
	assert_true(dl_rng_hash_seed(0, 0, 0) == 0x238275bc38fcbe91ULL);
	assert_true(dl_rng_hash_seed(42, 3, 2) != dl_rng_hash_seed(42, 3, 1));
	assert_true(dl_rng_hash_seed(42, 4, 1) != dl_rng_hash_seed(42, 3, 1));
	assert_true(dl_rng_hash_seed(43, 3, 1) != dl_rng_hash_seed(42, 3, 1));
}

static void
test_alloc_overflow(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlError		err;

	assert_null(dl_alloc_array(&a, SIZE_MAX / 2, 4, &err));
	assert_int_equal(err.code, DL_ERR_LIMIT);
	c.fail_after = 0;
	assert_null(dl_alloc(&a, 16, &err));
	assert_int_equal(err.code, DL_ERR_NO_MEMORY);
	assert_no_leaks(&c);
}

static void
test_spec_layout(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlError		err;
	DlModelSpec *s = dl_model_spec_create(5, &a, &err);

	assert_non_null(s);
	s->input_shape.rank = 3;
	s->input_shape.dims[0] = 28;
	s->input_shape.dims[1] = 28;
	s->input_shape.dims[2] = 1;
	dl_layer_defaults(&s->layers[0], DL_LAYER_CONV2D);
	s->layers[0].filters = 32;
	s->layers[0].kernel_size[0] = s->layers[0].kernel_size[1] = 3;
	dl_layer_defaults(&s->layers[1], DL_LAYER_MAXPOOL2D);
	dl_layer_defaults(&s->layers[2], DL_LAYER_BATCHNORM);
	dl_layer_defaults(&s->layers[3], DL_LAYER_FLATTEN);
	dl_layer_defaults(&s->layers[4], DL_LAYER_DENSE);
	s->layers[4].units = 10;
	assert_int_equal(dl_model_spec_finalize(s, &err), DL_OK);
	assert_int_equal(s->layers[0].out_shape.dims[0], 26);
	assert_int_equal(s->layers[1].out_shape.dims[0], 13);
	assert_int_equal(s->layers[0].n_params, 3 * 3 * 1 * 32 + 32);
	assert_int_equal(s->layers[2].n_params, 4 * 32);
	assert_int_equal(s->layers[2].n_trainable, 2 * 32);
	assert_int_equal(s->layers[3].out_shape.dims[0], 13 * 13 * 32);
	assert_int_equal(s->n_params, 320 + 128 + 13 * 13 * 32 * 10 + 10);
	assert_int_equal(s->layers[4].param_offset, 320 + 128);

	/* a window larger than the input is refused, naming the layer */
	strcpy(s->layers[1].name, "pool_big");
	s->layers[1].pool_size[0] = 40;
	assert_int_equal(dl_model_spec_finalize(s, &err), DL_ERR_SHAPE);
	assert_non_null(strstr(err.msg, "pool_big"));
	dl_model_spec_free(s, &a);
	assert_no_leaks(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rng_deterministic),
		cmocka_unit_test(test_rng_shuffle_is_permutation),
		cmocka_unit_test(test_splitmix64_reference),
		cmocka_unit_test(test_rng_hash_seed),
		cmocka_unit_test(test_alloc_overflow),
		cmocka_unit_test(test_spec_layout),
	};

	return cmocka_run_group_tests_name("rng_spec", tests, NULL, NULL);
}
