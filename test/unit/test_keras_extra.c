/*-------------------------------------------------------------------------
 *
 * test_keras_extra.c
 *	  Unit tests: the advanced activation layers ReLU, Softmax and ELU.
 *
 * Keras writes these as their own layer classes; the reader turns them
 * into Activation layers when their attributes give the plain activation
 * (ReLU: max_value null, negative_slope 0, threshold 0; Softmax: last
 * axis; ELU: alpha 1) and refuses any other value, naming the layer and
 * the attribute.  (Since issue 18 a ReLU with other arguments is a ReLU
 * layer of its own, DL_LAYER_RELU.)  The fixtures hold the same network (Conv2D, ReLU,
 * Flatten, Dense, ELU, Dense, Softmax) in three dialects, plus the same
 * network written with Activation layers:
 *	 k2_advanced_activations.json    Keras 2.2.4
 *	 tf2_advanced_activations.json   tf.keras 2.11
 *	 k3_advanced_activations.json    Keras 3
 *	 tf2_plain_activations.json      Activation("relu"), ("elu"), ("softmax")
 *
 * IDENTIFICATION
 *	  test/unit/test_keras_extra.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_keras.h"
#include "madlib_dl/dl_model.h"

/* Parse text (len bytes) with a fresh counting allocator. */
static DlStatus
parse(const char *text, size_t len, TestAllocCounter *counter, DlAllocator *alloc,
	  DlModelSpec **spec, DlError *err)
{
	*alloc = test_allocator(counter);
	dl_error_clear(err);
	return dl_keras_parse(text, len, alloc, spec, err);
}

/* Parse a fixture; fail the test unless it parses. */
static DlModelSpec *
parse_fixture_ok(const char *name, TestAllocCounter *counter, DlAllocator *alloc)
{
	size_t		len;
	char	   *text = read_fixture(name, &len);
	DlModelSpec *spec = NULL;
	DlError		err;
	DlStatus	st = parse(text, len, counter, alloc, &spec, &err);

	free(text);
	if (st != DL_OK)
		fail_msg("%s: parse failed with %s: %s", name, dl_status_name(st), err.msg);
	assert_non_null(spec);
	return spec;
}

/* A malloc'd copy of text with the first "from" replaced by "to". */
static char *
replace_once(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	size_t		head;
	char	   *out;

	if (at == NULL)
		fail_msg("\"%s\" not found in the fixture", from);
	head = (size_t) (at - text);
	out = malloc(strlen(text) - strlen(from) + strlen(to) + 1);
	assert_non_null(out);
	memcpy(out, text, head);
	strcpy(out + head, to);
	strcat(out + head, at + strlen(from));
	return out;
}

/*
 * The fixture with from replaced by to must fail with code, leave no spec
 * and no leak, and the message must contain s1 and s2 (s2 may be NULL).
 */
static void
expect_error(const char *fixture, const char *from, const char *to, DlStatus code,
			 const char *s1, const char *s2)
{
	char	   *text = read_fixture(fixture, NULL);
	char	   *bad = replace_once(text, from, to);
	TestAllocCounter counter;
	DlAllocator alloc;
	DlModelSpec *spec = (DlModelSpec *) &counter;
	DlError		err;
	DlStatus	st = parse(bad, strlen(bad), &counter, &alloc, &spec, &err);

	free(bad);
	free(text);
	if (st != code)
		fail_msg("%s -> %s: expected %s, got %s: %s", from, to, dl_status_name(code),
				 dl_status_name(st), err.msg);
	assert_null(spec);
	assert_no_leaks(&counter);
	if (strstr(err.msg, s1) == NULL)
		fail_msg("message \"%s\" does not contain \"%s\"", err.msg, s1);
	if (s2 != NULL && strstr(err.msg, s2) == NULL)
		fail_msg("message \"%s\" does not contain \"%s\"", err.msg, s2);
	assert_true(err.hint[0] != '\0');
	assert_true(err.msg[strlen(err.msg) - 1] != '.');
}

/* The fixture with from replaced by to must parse. */
static void
expect_ok(const char *fixture, const char *from, const char *to, DlActivation act, int index)
{
	char	   *text = read_fixture(fixture, NULL);
	char	   *good = replace_once(text, from, to);
	TestAllocCounter counter;
	DlAllocator alloc;
	DlModelSpec *spec = NULL;
	DlError		err;
	DlStatus	st = parse(good, strlen(good), &counter, &alloc, &spec, &err);

	free(good);
	free(text);
	if (st != DL_OK)
		fail_msg("%s -> %s: parse failed with %s: %s", from, to, dl_status_name(st), err.msg);
	assert_int_equal(spec->layers[index].kind, DL_LAYER_ACTIVATION);
	assert_int_equal(spec->layers[index].activation, act);
	dl_model_spec_free(spec, &alloc);
	assert_no_leaks(&counter);
}

/*
 * The fixture with from replaced by to must parse, layer index being a
 * ReLU with arguments (issue 18): max_value (has_max), negative_slope,
 * threshold as given.
 */
static void
expect_relu_args(const char *fixture, const char *from, const char *to, int index,
				 bool has_max, double max_value, double slope, double threshold)
{
	char	   *text = read_fixture(fixture, NULL);
	char	   *good = replace_once(text, from, to);
	TestAllocCounter counter;
	DlAllocator alloc;
	DlModelSpec *spec = NULL;
	DlError		err;
	DlStatus	st = parse(good, strlen(good), &counter, &alloc, &spec, &err);
	const DlLayer *l;

	free(good);
	free(text);
	if (st != DL_OK)
		fail_msg("%s -> %s: parse failed with %s: %s", from, to, dl_status_name(st), err.msg);
	l = &spec->layers[index];
	assert_int_equal(l->kind, DL_LAYER_RELU);
	assert_int_equal(l->has_max_value, has_max);
	if (has_max)
		assert_true(l->max_value == max_value);
	assert_true(l->negative_slope == slope);
	assert_true(l->threshold == threshold);
	dl_model_spec_free(spec, &alloc);
	assert_no_leaks(&counter);
}

/* Every dialect gives Activation layers, the same spec as the plain model. */
static void
test_advanced_activation_dialects(void **state)
{
	static const char *const fixtures[] = {
		"k2_advanced_activations.json",
		"tf2_advanced_activations.json",
		"k3_advanced_activations.json",
	};
	TestAllocCounter pc;
	DlAllocator palloc;
	DlModelSpec *plain = parse_fixture_ok("tf2_plain_activations.json", &pc, &palloc);

	assert_int_equal(plain->n_layers, 7);
	for (size_t f = 0; f < sizeof(fixtures) / sizeof(fixtures[0]); f++)
	{
		TestAllocCounter counter;
		DlAllocator alloc;
		DlModelSpec *spec = parse_fixture_ok(fixtures[f], &counter, &alloc);

		assert_int_equal(spec->n_layers, 7);
		assert_int_equal(spec->layers[1].kind, DL_LAYER_ACTIVATION);
		assert_int_equal(spec->layers[1].activation, DL_ACT_RELU);
		assert_int_equal(spec->layers[1].in_shape.rank, 3);
		assert_int_equal(spec->layers[4].kind, DL_LAYER_ACTIVATION);
		assert_int_equal(spec->layers[4].activation, DL_ACT_ELU);
		assert_int_equal(spec->layers[6].kind, DL_LAYER_ACTIVATION);
		assert_int_equal(spec->layers[6].activation, DL_ACT_SOFTMAX);
		assert_true(strncmp(spec->layers[1].name, "re_lu", 5) == 0);
		assert_int_equal(spec->n_params, plain->n_params);
		/* 4*9 + 4 + 144*16 + 16 + 16*3 + 3 */
		assert_int_equal(spec->n_params, 40 + 2320 + 51);
		if (dl_model_spec_fingerprint(spec) != dl_model_spec_fingerprint(plain))
			fail_msg("%s: fingerprint differs from the Activation-layer model", fixtures[f]);
		dl_model_spec_free(spec, &alloc);
		assert_no_leaks(&counter);
	}
	dl_model_spec_free(plain, &palloc);
	assert_no_leaks(&pc);
}

/* With the same weights, the advanced and plain models predict the same. */
static void
test_advanced_activation_predict(void **state)
{
	TestAllocCounter ac,
				pc;
	DlAllocator aalloc,
				palloc;
	DlModelSpec *adv = parse_fixture_ok("tf2_advanced_activations.json", &ac, &aalloc);
	DlModelSpec *plain = parse_fixture_ok("tf2_plain_activations.json", &pc, &palloc);
	DlModel    *ma = NULL,
			   *mp = NULL;
	DlError		err;
	float		x[2 * 64];
	float		ya[2 * 3],
				yp[2 * 3];

	assert_int_equal(dl_model_create(adv, NULL, &aalloc, &ma, &err), DL_OK);
	assert_int_equal(dl_model_create(plain, NULL, &palloc, &mp, &err), DL_OK);
	assert_int_equal(dl_model_init_weights(ma, 7, &err), DL_OK);
	assert_int_equal(dl_model_set_params(mp, dl_model_params(ma), dl_model_n_params(ma), &err),
					 DL_OK);
	for (int i = 0; i < 2 * 64; i++)
		x[i] = (float) ((i * 37) % 17) / 8.0f - 1.0f;
	assert_int_equal(dl_model_predict(ma, ya, x, 2, 2, &err), DL_OK);
	assert_int_equal(dl_model_predict(mp, yp, x, 2, 2, &err), DL_OK);
	for (int i = 0; i < 2; i++)
	{
		double		sum = 0.0;

		for (int k = 0; k < 3; k++)
		{
			assert_true(ya[i * 3 + k] == yp[i * 3 + k]);
			assert_true(ya[i * 3 + k] > 0.0f);
			sum += ya[i * 3 + k];
		}
		assert_close(sum, 1.0, 1e-6, 0);	/* the Softmax layer ran */
	}
	dl_model_free(ma);
	dl_model_free(mp);
	dl_model_spec_free(adv, &aalloc);
	dl_model_spec_free(plain, &palloc);
	assert_no_leaks(&ac);
	assert_no_leaks(&pc);
}

/* Attribute values equal to the plain activation's, written otherwise, are accepted. */
static void
test_advanced_activation_accepted_forms(void **state)
{
	const char *f = "tf2_advanced_activations.json";

	expect_ok(f, "\"threshold\": 0.0", "\"threshold\": 0", DL_ACT_RELU, 1);
	expect_ok(f, "\"negative_slope\": 0.0", "\"negative_slope\": 0", DL_ACT_RELU, 1);
	expect_ok(f, "\"max_value\": null, ", "", DL_ACT_RELU, 1);
	expect_ok(f, "\"alpha\": 1.0", "\"alpha\": 1", DL_ACT_ELU, 4);
	/* after a Dense (rank 1) the last axis is also axis 1, or [-1] */
	expect_ok(f, "\"axis\": -1", "\"axis\": 1", DL_ACT_SOFTMAX, 6);
	expect_ok(f, "\"axis\": -1", "\"axis\": [-1]", DL_ACT_SOFTMAX, 6);
	expect_ok(f, "\"axis\": -1", "\"axis\": null", DL_ACT_SOFTMAX, 6);
}

/* Any other value is refused, naming the layer and the attribute. */
static void
test_advanced_activation_errors(void **state)
{
	const char *f = "tf2_advanced_activations.json";
	const char *k3 = "k3_advanced_activations.json";

	/* a ReLU with arguments is a layer of its own since issue 18 */
	expect_relu_args(f, "\"max_value\": null", "\"max_value\": 6.0", 1, true, 6.0, 0.0, 0.0);
	expect_relu_args(k3, "\"max_value\": null", "\"max_value\": 6", 1, true, 6.0, 0.0, 0.0);
	expect_relu_args(f, "\"negative_slope\": 0.0", "\"negative_slope\": 0.3", 1, false, 0.0,
					 0.3, 0.0);
	expect_relu_args(f, "\"threshold\": 0.0", "\"threshold\": 0.5", 1, false, 0.0, 0.0, 0.5);
	expect_error(f, "\"threshold\": 0.0", "\"threshold\": \"0\"", DL_ERR_PARSE,
				 "\"re_lu\"", "threshold must be a finite number, got \"0\"");
	expect_error(f, "\"max_value\": null", "\"max_value\": -1", DL_ERR_INVALID_ARGUMENT,
				 "\"re_lu\"", "max_value -1");
	expect_error(f, "\"alpha\": 1.0", "\"alpha\": 0.5", DL_ERR_UNSUPPORTED,
				 "\"elu\"", "alpha 0.5");
	expect_error(k3, "\"alpha\": 1.0", "\"alpha\": 2.0", DL_ERR_UNSUPPORTED,
				 "\"elu\"", "alpha 2");
	expect_error(f, "\"axis\": -1", "\"axis\": 0", DL_ERR_UNSUPPORTED,
				 "\"softmax\"", "axis 0");
	expect_error(f, "\"axis\": -1", "\"axis\": -2", DL_ERR_UNSUPPORTED,
				 "\"softmax\"", "axis -2");
	expect_error(f, "\"axis\": -1", "\"axis\": [1, 2]", DL_ERR_UNSUPPORTED,
				 "\"softmax\"", "axis (1, 2)");
	expect_error(f, "\"axis\": -1", "\"axis\": \"last\"", DL_ERR_UNSUPPORTED,
				 "\"softmax\"", "axis \"last\"");
	/* a class that is none of them is still an unknown layer */
	expect_error(f, "\"ELU\"", "\"ThresholdedReLU\"", DL_ERR_UNSUPPORTED, "\"elu\"",
				 "ThresholdedReLU");
	expect_error(f, "\"ReLU\"", "\"Snake\"", DL_ERR_UNSUPPORTED, "\"re_lu\"", "Snake");
}

/* A Softmax after Conv2D (rank 3): axis -1 or 3 is the last axis, 1 is not. */
static void
test_softmax_after_conv(void **state)
{
	const char *f = "tf2_advanced_activations.json";
	const char *relu = "{\"class_name\": \"ReLU\", \"config\": {\"name\": \"re_lu\", "
		"\"trainable\": true, \"dtype\": \"float32\", \"max_value\": null, "
		"\"negative_slope\": 0.0, \"threshold\": 0.0}}";

	expect_ok(f, relu,
			  "{\"class_name\": \"Softmax\", \"config\": {\"name\": \"sm\", \"axis\": 3}}",
			  DL_ACT_SOFTMAX, 1);
	expect_ok(f, relu,
			  "{\"class_name\": \"Softmax\", \"config\": {\"name\": \"sm\", \"axis\": -1}}",
			  DL_ACT_SOFTMAX, 1);
	expect_error(f, relu,
				 "{\"class_name\": \"Softmax\", \"config\": {\"name\": \"sm\", \"axis\": 1}}",
				 DL_ERR_UNSUPPORTED, "\"sm\"", "axis 1");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_advanced_activation_dialects),
		cmocka_unit_test(test_advanced_activation_predict),
		cmocka_unit_test(test_advanced_activation_accepted_forms),
		cmocka_unit_test(test_advanced_activation_errors),
		cmocka_unit_test(test_softmax_after_conv),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
