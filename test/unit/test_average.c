/*-------------------------------------------------------------------------
 *
 * test_average.c
 *	  Model averaging (dl_average.h) against the definition: the weights
 *	  and every optimizer slot are sum(n_k v_k) / sum(n_k) over the states
 *	  with samples, with n_k the samples each state saw (uneven on
 *	  purpose: equal weights would give another mean); the step counter is
 *	  the largest; a state without samples is skipped; no state with
 *	  samples is DL_ERR_DATA; merging two partial averages gives the mean
 *	  of all their states.
 *
 * IDENTIFICATION
 *	  test/unit/test_average.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_average.h"
#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_model.h"
#include "madlib_dl/dl_optim.h"

enum
{
IN = 4, HIDDEN = 6, K = 3, NSTATES = 4};

/* Dense(6, relu) -> Dense(3, softmax) on 4 inputs. */
static DlModelSpec *
make_spec(const DlAllocator *a)
{
	DlModelSpec *s = dl_model_spec_create(2, a, NULL);
	DlError		err;

	assert_non_null(s);
	s->input_shape.rank = 1;
	s->input_shape.dims[0] = IN;
	dl_layer_defaults(&s->layers[0], DL_LAYER_DENSE);
	s->layers[0].units = HIDDEN;
	s->layers[0].activation = DL_ACT_RELU;
	dl_layer_defaults(&s->layers[1], DL_LAYER_DENSE);
	s->layers[1].units = K;
	s->layers[1].activation = DL_ACT_SOFTMAX;
	if (dl_model_spec_finalize(s, &err) != DL_OK)
		fail_msg("finalize: %s", err.msg);
	return s;
}

/* Adam: two optimizer slots, so the slots are averaged too. */
static DlModel *
make_model(const DlModelSpec *s, const DlAllocator *a)
{
	DlOptimConfig o;
	DlModel    *m;
	DlError		err;

	dl_optim_config_default(&o, DL_OPTIM_ADAM);
	if (dl_model_create(s, &o, a, &m, &err) != DL_OK)
		fail_msg("create: %s", err.msg);
	return m;
}

typedef struct States
{
	uint8_t    *blob[NSTATES];	/* (size) each */
	size_t		size;
	int64_t		samples[NSTATES];
	int64_t		steps[NSTATES];
	size_t		n_values;		/* P * (1 + n_slots) */
	float	   *values[NSTATES];	/* (n_values): weights, then the slots */
} States;

/*
 * Four states of m with distinct weights, slots and step counts, and the
 * sample counts 75, 74, 0 and 13 (the third has none).
 */
static void
make_states(States *st, DlModel *m)
{
	static const int64_t samples[NSTATES] = {75, 74, 0, 13};
	static const int64_t steps[NSTATES] = {10, 30, 50, 20};
	size_t		P = dl_model_n_params(m);
	DlOptimState *opt = dl_model_optim(m);
	size_t		S = (size_t) opt->n_slots * P;
	DlError		err;

	st->n_values = P + S;
	assert_int_equal(dl_blob_size(m, &st->size, &err), DL_OK);
	for (int k = 0; k < NSTATES; k++)
	{
		float	   *w = dl_model_params(m);
		DlRng		r;

		dl_rng_seed(&r, 100 + (uint64_t) k);
		st->values[k] = malloc(sizeof(float) * st->n_values);
		for (size_t i = 0; i < P; i++)
			w[i] = (float) (dl_rng_uniform(&r) * 2.0 - 1.0);
		for (size_t i = 0; i < S; i++)
			opt->slots[i] = (float) dl_rng_uniform(&r);
		opt->iterations = steps[k];
		memcpy(st->values[k], w, sizeof(float) * P);
		memcpy(st->values[k] + P, opt->slots, sizeof(float) * S);
		st->samples[k] = samples[k];
		st->steps[k] = steps[k];
		st->blob[k] = malloc(st->size);
		assert_int_equal(dl_blob_write(m, samples[k], st->blob[k], st->size, &err), DL_OK);
	}
}

static void
free_states(States *st)
{
	for (int k = 0; k < NSTATES; k++)
	{
		free(st->blob[k]);
		free(st->values[k]);
	}
}

/* The model's weights and slots against sum(n_k v_k) / sum(n_k) over states from..to-1. */
static void
assert_mean(DlModel *m, const States *st, int from, int to)
{
	size_t		P = dl_model_n_params(m);
	const float *w = dl_model_params(m);
	const float *slots = dl_model_optim(m)->slots;
	int64_t		most_steps = 0;

	for (size_t i = 0; i < st->n_values; i++)
	{
		double		num = 0;
		double		den = 0;
		float		got = i < P ? w[i] : slots[i - P];

		for (int k = from; k < to; k++)
		{
			num += (double) st->samples[k] * (double) st->values[k][i];
			den += (double) st->samples[k];
		}
		assert_close(got, (float) (num / den), 1e-6, 1e-7);
	}
	for (int k = from; k < to; k++)
		if (st->samples[k] > 0 && st->steps[k] > most_steps)
			most_steps = st->steps[k];
	assert_int_equal(dl_model_optim(m)->iterations, most_steps);
}

static void
test_uneven_weights(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlModelSpec *s = make_spec(&a);
	DlModel    *m = make_model(s, &a);
	States		st;
	DlAverage	avg;
	DlError		err;

	make_states(&st, m);
	assert_int_equal(dl_avg_begin(&avg, m, &a, &err), DL_OK);
	for (int k = 0; k < NSTATES; k++)
		assert_int_equal(dl_avg_add(&avg, st.blob[k], st.size, &err), DL_OK);
	assert_int_equal(avg.n_added, 3);	/* the state without samples is skipped */
	assert_int_equal(dl_avg_finish(&avg, &err), DL_OK);
	assert_mean(m, &st, 0, NSTATES);

	/* not the unweighted mean: the first weight differs from it */
	{
		double		plain = (st.values[0][0] + st.values[1][0] + st.values[3][0]) / 3.0;

		assert_true(fabs(dl_model_params(m)[0] - plain) > 1e-4);
	}
	dl_avg_end(&avg);
	free_states(&st);
	dl_model_free(m);
	dl_model_spec_free(s, &a);
	assert_no_leaks(&c);
}

static void
test_merge_equals_sequential(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlModelSpec *s = make_spec(&a);
	DlModel    *m = make_model(s, &a);
	States		st;
	DlAverage	left;
	DlAverage	right;
	DlError		err;

	make_states(&st, m);
	assert_int_equal(dl_avg_begin(&left, m, &a, &err), DL_OK);
	assert_int_equal(dl_avg_begin(&right, m, &a, &err), DL_OK);
	assert_int_equal(dl_avg_add(&left, st.blob[0], st.size, &err), DL_OK);
	assert_int_equal(dl_avg_add(&right, st.blob[1], st.size, &err), DL_OK);
	assert_int_equal(dl_avg_add(&right, st.blob[3], st.size, &err), DL_OK);
	assert_int_equal(dl_avg_merge(&left, &right, &err), DL_OK);
	assert_int_equal(dl_avg_finish(&left, &err), DL_OK);
	assert_mean(m, &st, 0, NSTATES);
	dl_avg_end(&left);
	dl_avg_end(&right);
	free_states(&st);
	dl_model_free(m);
	dl_model_spec_free(s, &a);
	assert_no_leaks(&c);
}

static void
test_no_samples_and_bad_states(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlModelSpec *s = make_spec(&a);
	DlModel    *m = make_model(s, &a);
	States		st;
	DlAverage	avg;
	DlError		err;
	float		before;

	make_states(&st, m);
	before = dl_model_params(m)[0];
	assert_int_equal(dl_avg_begin(&avg, m, &a, &err), DL_OK);
	assert_int_equal(dl_avg_add(&avg, st.blob[2], st.size, &err), DL_OK);
	assert_int_equal(dl_avg_finish(&avg, &err), DL_ERR_DATA);
	assert_float_equal(dl_model_params(m)[0], before, 0);
	/* truncated and foreign blobs */
	assert_int_equal(dl_avg_add(&avg, st.blob[0], 50, &err), DL_ERR_CORRUPT);
	st.blob[0][0] = 'X';
	assert_int_equal(dl_avg_add(&avg, st.blob[0], st.size, &err), DL_ERR_CORRUPT);
	dl_avg_end(&avg);
	dl_avg_end(&avg);			/* twice: harmless */
	free_states(&st);
	dl_model_free(m);
	dl_model_spec_free(s, &a);
	assert_no_leaks(&c);
}

/* Dense(6000, relu) -> Dense(3, softmax) on 4 inputs: 48,003 weights, 3 pieces with Adam. */
static DlModel *
make_big(const DlAllocator *a, DlModelSpec **spec, DlOptimKind kind)
{
	DlModelSpec *s = dl_model_spec_create(2, a, NULL);
	DlOptimConfig o;
	DlModel    *m;
	DlError		err;

	s->input_shape.rank = 1;
	s->input_shape.dims[0] = IN;
	dl_layer_defaults(&s->layers[0], DL_LAYER_DENSE);
	s->layers[0].units = 6000;
	s->layers[0].activation = DL_ACT_RELU;
	dl_layer_defaults(&s->layers[1], DL_LAYER_DENSE);
	s->layers[1].units = K;
	s->layers[1].activation = DL_ACT_SOFTMAX;
	if (dl_model_spec_finalize(s, &err) != DL_OK)
		fail_msg("finalize: %s", err.msg);
	dl_optim_config_default(&o, kind);
	o.momentum = 0.5;
	if (dl_model_create(s, &o, a, &m, &err) != DL_OK)
		fail_msg("create: %s", err.msg);
	*spec = s;
	return m;
}

/*
 * dl_avg_add_many gives the sums of dl_avg_add in turn, bit for bit, over
 * several pieces; a corrupt byte deep in a state is caught by its
 * checksum; a state of another optimizer goes the one-by-one way.
 */
static void
test_add_many_equals_add(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlModelSpec *s;
	DlModel    *m = make_big(&a, &s, DL_OPTIM_ADAM);
	States		st;
	DlAverage	one;
	DlAverage	many;
	DlError		err;
	const uint8_t *blobs[NSTATES + 1];
	size_t		lens[NSTATES + 1];

	make_states(&st, m);
	assert_true(st.n_values > 2 * 65536);
	for (int k = 0; k < NSTATES; k++)
	{
		blobs[k] = st.blob[k];
		lens[k] = st.size;
	}
	assert_int_equal(dl_avg_begin(&one, m, &a, &err), DL_OK);
	assert_int_equal(dl_avg_begin(&many, m, &a, &err), DL_OK);
	for (int k = 0; k < NSTATES; k++)
		assert_int_equal(dl_avg_add(&one, st.blob[k], st.size, &err), DL_OK);
	assert_int_equal(dl_avg_add_many(&many, blobs, lens, NSTATES, &err), DL_OK);
	assert_memory_equal(one.sum, many.sum, sizeof(double) * one.n_values);
	assert_true(one.total == many.total && one.iterations == many.iterations &&
				one.n_added == many.n_added && many.n_added == 3);
	dl_avg_end(&many);

	/* a flipped byte in the third piece of the fourth state */
	st.blob[3][DL_BLOB_HEADER_SIZE + 4 * 140000] ^= 0x20;
	assert_int_equal(dl_avg_begin(&many, m, &a, &err), DL_OK);
	assert_int_equal(dl_avg_add_many(&many, blobs, lens, NSTATES, &err), DL_ERR_CORRUPT);
	assert_non_null(strstr(err.msg, "checksum"));
	dl_avg_end(&many);
	st.blob[3][DL_BLOB_HEADER_SIZE + 4 * 140000] ^= 0x20;

	/* a state of SGD with momentum (one slot) among Adam's: loaded with Adam's state reset */
	{
		DlModelSpec *s2;
		DlModel    *sgd = make_big(&a, &s2, DL_OPTIM_SGD);
		size_t		len;
		uint8_t    *b;
		DlAverage	ref;

		assert_int_equal(dl_blob_size(sgd, &len, &err), DL_OK);
		b = malloc(len);
		assert_int_equal(dl_blob_write(sgd, 5, b, len, &err), DL_OK);
		blobs[NSTATES] = b;
		lens[NSTATES] = len;
		assert_int_equal(dl_avg_begin(&ref, m, &a, &err), DL_OK);
		for (int k = 0; k <= NSTATES; k++)
			assert_int_equal(dl_avg_add(&ref, blobs[k], lens[k], &err), DL_OK);
		assert_int_equal(dl_avg_begin(&many, m, &a, &err), DL_OK);
		assert_int_equal(dl_avg_add_many(&many, blobs, lens, NSTATES + 1, &err), DL_OK);
		assert_memory_equal(ref.sum, many.sum, sizeof(double) * ref.n_values);
		assert_int_equal(many.n_added, 4);
		dl_avg_end(&ref);
		dl_avg_end(&many);
		free(b);
		dl_model_free(sgd);
		dl_model_spec_free(s2, &a);
	}
	dl_avg_end(&one);
	free_states(&st);
	dl_model_free(m);
	dl_model_spec_free(s, &a);
	assert_no_leaks(&c);
}

static void
test_out_of_memory(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlModelSpec *s = make_spec(&a);
	DlModel    *m = make_model(s, &a);
	DlAverage	avg;
	DlError		err;

	c.fail_after = c.total;
	assert_int_equal(dl_avg_begin(&avg, m, &a, &err), DL_ERR_NO_MEMORY);
	dl_avg_end(&avg);
	c.fail_after = -1;
	dl_model_free(m);
	dl_model_spec_free(s, &a);
	assert_no_leaks(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uneven_weights),
		cmocka_unit_test(test_merge_equals_sequential),
		cmocka_unit_test(test_no_samples_and_bad_states),
		cmocka_unit_test(test_add_many_equals_add),
		cmocka_unit_test(test_out_of_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
