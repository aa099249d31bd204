/*-------------------------------------------------------------------------
 *
 * test_cancel.c
 *	  Unit tests: the caller's cancel check (dl_model_set_cancel).
 *
 * A check that says stop makes predict, evaluate and a training step
 * return DL_ERR_CANCELLED at the next layer boundary or sub-batch, with
 * nothing leaked and the model usable afterwards (the same predictions
 * as an uncancelled model); the check is called between layers, so a
 * pass over a deep model asks it once per layer; dl_model_cancel_rows
 * cuts inference of a heavy convolution into small sub-batches and
 * leaves light models' batches whole; and predictions do not depend on
 * the sub-batches.
 *
 * IDENTIFICATION
 *	  test/unit/test_cancel.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_keras.h"
#include "madlib_dl/dl_model.h"

/* A check that says stop from its n-th call on (n < 0: never). */
typedef struct Counter
{
	int			calls;
	int			stop_at;
} Counter;

static bool
stop_after(void *arg)
{
	Counter    *c = arg;

	c->calls++;
	return c->stop_at >= 0 && c->calls >= c->stop_at;
}

/* L Dense(8, relu) layers on 4 inputs, then Dense(3, softmax). */
static char *
deep_arch(int L)
{
	char	   *s = malloc(256 + (size_t) L * 128);
	char	   *p = s;

	p += sprintf(p, "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\", \"layers\": ["
				 "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 4], \"name\": \"in\"}}");
	for (int i = 0; i < L; i++)
		p += sprintf(p, ", {\"class_name\": \"Dense\", \"config\": {\"name\": \"d%d\", \"units\": 8, \"activation\": \"relu\"}}", i);
	sprintf(p, ", {\"class_name\": \"Dense\", \"config\": {\"name\": \"o\", \"units\": 3, \"activation\": \"softmax\"}}]}}");
	return s;
}

static DlModelSpec *
parse_ok(const char *json, const DlAllocator *a)
{
	DlModelSpec *spec = NULL;
	DlError		err;

	dl_error_clear(&err);
	if (dl_keras_parse(json, strlen(json), a, &spec, &err) != DL_OK)
		fail_msg("parse: %s", err.msg);
	return spec;
}

static void
test_predict_and_train_cancelled(void **state)
{
	TestAllocCounter counter;
	DlAllocator a = test_allocator(&counter);
	char	   *json = deep_arch(10);
	DlModelSpec *spec = parse_ok(json, &a);
	DlOptimConfig o;
	DlModel    *m = NULL;
	DlError		err;
	Counter		c = {0, 3};
	float		x[40 * 4],
				y[40 * 3],
				out[40 * 3],
				ref[40 * 3];
	DlTrainConfig cfg;
	DlBatchStats stats;

	for (int i = 0; i < 40 * 4; i++)
		x[i] = (float) (i % 7) / 7.0f;
	memset(y, 0, sizeof(y));
	for (int i = 0; i < 40; i++)
		y[i * 3 + i % 3] = 1.0f;
	dl_optim_config_default(&o, DL_OPTIM_SGD);
	dl_error_clear(&err);
	assert_int_equal(dl_model_create(spec, &o, &a, &m, &err), DL_OK);
	assert_int_equal(dl_model_init_weights(m, 7, &err), DL_OK);
	assert_int_equal(dl_model_predict(m, ref, x, 40, 8, &err), DL_OK);

	/* stopped at the third layer boundary of the first batch */
	dl_model_set_cancel(m, stop_after, &c);
	assert_int_equal(dl_model_predict(m, out, x, 40, 8, &err), DL_ERR_CANCELLED);
	assert_int_equal(c.calls, 3);
	assert_non_null(strstr(err.msg, "cancelled"));

	/* 5 batches of 8 of the 40 rows: 11 layers, 10 boundaries each, and 4 between batches */
	c.calls = 0;
	c.stop_at = -1;
	assert_int_equal(dl_model_predict(m, out, x, 40, 8, &err), DL_OK);
	assert_int_equal(c.calls, 5 * 10 + 4);
	assert_memory_equal(out, ref, sizeof(ref));

	/* evaluate and a training step */
	memset(&cfg, 0, sizeof(cfg));
	cfg.loss = DL_LOSS_CATEGORICAL_CROSSENTROPY;
	cfg.metric = DL_METRIC_NONE;
	cfg.batch_size = 8;
	memset(&stats, 0, sizeof(stats));
	c.calls = 0;
	c.stop_at = 20;
	assert_int_equal(dl_model_evaluate(m, &cfg, x, y, 40, &stats, &err), DL_ERR_CANCELLED);
	c.calls = 0;
	c.stop_at = 5;
	assert_int_equal(dl_model_train_batch(m, &cfg, x, y, 8, &stats, &err), DL_ERR_CANCELLED);
	c.calls = 0;
	c.stop_at = 15;				/* in the backward pass */
	assert_int_equal(dl_model_train_batch(m, &cfg, x, y, 8, &stats, &err), DL_ERR_CANCELLED);
	c.calls = 0;
	c.stop_at = 3;
	assert_int_equal(dl_model_train_epoch(m, &cfg, x, y, 40, &stats, &err), DL_ERR_CANCELLED);

	/* a stopped model still works */
	c.stop_at = -1;
	assert_int_equal(dl_model_train_batch(m, &cfg, x, y, 8, &stats, &err), DL_OK);
	dl_model_set_cancel(m, NULL, NULL);
	assert_int_equal(dl_model_predict(m, out, x, 40, 8, &err), DL_OK);

	dl_model_free(m);
	dl_model_spec_free(spec, &a);
	free(json);
	assert_no_leaks(&counter);
}

static void
test_cancel_rows(void **state)
{
	TestAllocCounter counter;
	DlAllocator a = test_allocator(&counter);
	char	   *json = deep_arch(3);
	DlModelSpec *light = parse_ok(json, &a);
	const char *conv =
		"{\"class_name\": \"Sequential\", \"config\": {\"name\": \"c\", \"layers\": ["
		"{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 32, 32, 16], \"name\": \"in\"}}, "
		"{\"class_name\": \"Conv2D\", \"config\": {\"name\": \"c\", \"filters\": 16, \"kernel_size\": [9, 9], \"padding\": \"same\"}}, "
		"{\"class_name\": \"Flatten\", \"config\": {\"name\": \"f\"}}, "
		"{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\", \"units\": 2, \"activation\": \"softmax\"}}]}}";
	DlModelSpec *heavy = parse_ok(conv, &a);
	int64_t		r = dl_model_cancel_rows(heavy);

	/* 32*32 rows of 9*9*16*16 multiply-adds: 21 M a sample, 2^28 per sub-batch */
	assert_true(r >= 8 && r <= 16);
	assert_true(dl_model_cancel_rows(light) > 1000000);
	dl_model_spec_free(light, &a);
	dl_model_spec_free(heavy, &a);
	free(json);
	assert_no_leaks(&counter);
}

/* Sub-batches do not change predictions: batch 40 and batch 1 agree. */
static void
test_sub_batches_same_predictions(void **state)
{
	TestAllocCounter counter;
	DlAllocator a = test_allocator(&counter);
	const char *conv =
		"{\"class_name\": \"Sequential\", \"config\": {\"name\": \"c\", \"layers\": ["
		"{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 32, 32, 16], \"name\": \"in\"}}, "
		"{\"class_name\": \"Conv2D\", \"config\": {\"name\": \"c\", \"filters\": 16, \"kernel_size\": [9, 9], \"padding\": \"same\", \"activation\": \"relu\"}}, "
		"{\"class_name\": \"GlobalAveragePooling2D\", \"config\": {\"name\": \"g\"}}, "
		"{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\", \"units\": 2, \"activation\": \"softmax\"}}]}}";
	DlModelSpec *spec = parse_ok(conv, &a);
	DlModel    *m = NULL;
	DlError		err;
	int64_t		N = 40;
	float	   *x = malloc((size_t) N * 32 * 32 * 16 * sizeof(float));
	float		out[40 * 2],
				one[40 * 2];

	for (int64_t i = 0; i < N * 32 * 32 * 16; i++)
		x[i] = (float) ((i * 37) % 101) / 101.0f;
	dl_error_clear(&err);
	assert_int_equal(dl_model_create(spec, NULL, &a, &m, &err), DL_OK);
	assert_int_equal(dl_model_init_weights(m, 3, &err), DL_OK);
	assert_int_equal(dl_model_predict(m, out, x, N, N, &err), DL_OK);	/* sub-batches of r */
	for (int64_t i = 0; i < N; i++)
		assert_int_equal(dl_model_predict(m, one + 2 * i, x + i * 32 * 32 * 16, 1, 1, &err), DL_OK);
	for (int i = 0; i < 2 * N; i++)
		assert_close(out[i], one[i], 1e-5, 1e-7);
	dl_model_free(m);
	dl_model_spec_free(spec, &a);
	free(x);
	assert_no_leaks(&counter);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_predict_and_train_cancelled),
		cmocka_unit_test(test_cancel_rows),
		cmocka_unit_test(test_sub_batches_same_predictions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
