/*-------------------------------------------------------------------------
 *
 * test_weights.c
 *	  Unit tests: the weight tensors in Keras order (dl_weights.h), the
 *	  check of a block's values that shows another order, and the binding
 *	  of a variable input shape (dl_keras_bind_shape).
 *
 * IDENTIFICATION
 *	  test/unit/test_weights.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_keras.h"
#include "madlib_dl/dl_model.h"
#include "madlib_dl/dl_weights.h"

/* Conv2D(4, 3x3) on [null, null, 3] (or fixed), BatchNormalization, Dense(2). */
#define ARCH(h, w) \
	"{\"class_name\": \"Sequential\", \"config\": {\"name\": \"m\", \"layers\": [" \
	"{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, " h ", " w ", 3]}}," \
	"{\"class_name\": \"Conv2D\", \"config\": {\"name\": \"c\", \"filters\": 4, \"kernel_size\": [3, 3]}}," \
	"{\"class_name\": \"BatchNormalization\", \"config\": {\"name\": \"bn\"}}," \
	"{\"class_name\": \"GlobalAveragePooling2D\", \"config\": {\"name\": \"g\"}}," \
	"{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\", \"units\": 2}}]}}"

static DlModelSpec *
parse_ok(const char *text, TestAllocCounter *counter, DlAllocator *alloc)
{
	DlModelSpec *spec = NULL;
	DlError		err;

	*alloc = test_allocator(counter);
	dl_error_clear(&err);
	if (dl_keras_parse(text, strlen(text), alloc, &spec, &err) != DL_OK)
		fail_msg("parse failed: %s", err.msg);
	return spec;
}

/* Every layer's tensors, in order, tile the block exactly. */
static void
test_tensors_in_keras_order(void **state)
{
	TestAllocCounter counter;
	DlAllocator alloc;
	DlModelSpec *spec = parse_ok(ARCH("8", "8"), &counter, &alloc);
	static const char *const names[] = {"kernel", "bias", "gamma", "beta", "moving_mean",
	"moving_variance", "kernel", "bias"};
	static const size_t counts[] = {108, 4, 4, 4, 4, 4, 8, 2};
	size_t		next = 0;
	int			k = 0;

	(void) state;
	for (int i = 0; i < spec->n_layers; i++)
	{
		DlWeightTensor t[DL_LAYER_MAX_TENSORS];
		int			n = dl_layer_weight_tensors(&spec->layers[i], t);

		for (int j = 0; j < n; j++, k++)
		{
			assert_true(k < 8);
			assert_string_equal(t[j].name, names[k]);
			assert_int_equal(t[j].count, counts[k]);
			assert_int_equal(t[j].offset, next);
			next += t[j].count;
		}
	}
	assert_int_equal(k, 8);
	assert_int_equal(next, spec->n_params);
	dl_model_spec_free(spec, &alloc);
	assert_no_leaks(&counter);
}

/* A negative moving_variance is refused, naming the layer; Keras order passes. */
static void
test_negative_moving_variance(void **state)
{
	TestAllocCounter counter;
	DlAllocator alloc;
	DlModelSpec *spec = parse_ok(ARCH("8", "8"), &counter, &alloc);
	float	   *w = calloc(spec->n_params, sizeof(float));
	DlError		err;

	(void) state;
	for (size_t i = 124; i < 128; i++)	/* moving_variance */
		w[i] = 1.0f;
	dl_error_clear(&err);
	assert_int_equal(dl_weights_check_values(spec, w, &err), DL_OK);
	w[125] = -0.5f;
	assert_int_equal(dl_weights_check_values(spec, w, &err), DL_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err.msg, "\"bn\""));
	assert_non_null(strstr(err.msg, "moving_variance"));
	free(w);
	dl_model_spec_free(spec, &alloc);
	assert_no_leaks(&counter);
}

/* [null, null, 3] does not parse; bound to 16x16 it parses as the fixed model. */
static void
test_bind_shape(void **state)
{
	TestAllocCounter counter;
	DlAllocator alloc = test_allocator(&counter);
	const char *free_arch = ARCH("null", "null");
	DlModelSpec *spec = NULL;
	DlModelSpec *fixed;
	TestAllocCounter counter2;
	DlAllocator alloc2;
	DlError		err;
	char	   *out = NULL;
	int			n_free = -1;
	int64_t		dims[3] = {16, 16, 3};
	int64_t		two[2] = {16, 16};

	(void) state;
	dl_error_clear(&err);
	assert_int_equal(dl_keras_parse(free_arch, strlen(free_arch), &alloc, &spec, &err), DL_ERR_SHAPE);
	assert_null(spec);
	assert_int_equal(dl_keras_bind_shape(free_arch, strlen(free_arch), dims, 3, &alloc, &out, &n_free,
										 &err), DL_OK);
	assert_int_equal(n_free, 2);
	assert_int_equal(dl_keras_parse(out, strlen(out), &alloc, &spec, &err), DL_OK);
	fixed = parse_ok(ARCH("16", "16"), &counter2, &alloc2);
	assert_int_equal(spec->n_params, fixed->n_params);
	assert_int_equal(spec->input_shape.dims[0], 16);
	assert_int_equal(dl_model_spec_fingerprint(spec), dl_model_spec_fingerprint(fixed));
	dl_model_spec_free(spec, &alloc);
	dl_model_spec_free(fixed, &alloc2);
	assert_no_leaks(&counter2);
	dl_free(&alloc, out);
	out = NULL;
	/* the default binding, for the weights check */
	assert_int_equal(dl_keras_bind_shape(free_arch, strlen(free_arch), NULL, 0, &alloc, &out, &n_free,
										 &err), DL_OK);
	assert_non_null(strstr(out, "224"));
	dl_free(&alloc, out);
	out = NULL;
	/* another rank: refused */
	assert_int_equal(dl_keras_bind_shape(free_arch, strlen(free_arch), two, 2, &alloc, &out, &n_free,
										 &err), DL_ERR_SHAPE);
	assert_null(out);
	/* a fixed model: nothing to bind */
	assert_int_equal(dl_keras_bind_shape(ARCH("8", "8"), strlen(ARCH("8", "8")), dims, 3, &alloc, &out,
										 &n_free, &err), DL_OK);
	assert_int_equal(n_free, 0);
	dl_free(&alloc, out);
	/* malformed JSON */
	out = NULL;
	assert_int_equal(dl_keras_bind_shape("{", 1, dims, 3, &alloc, &out, &n_free, &err), DL_ERR_PARSE);
	assert_no_leaks(&counter);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tensors_in_keras_order),
		cmocka_unit_test(test_negative_moving_variance),
		cmocka_unit_test(test_bind_shape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
