/*-------------------------------------------------------------------------
 *
 * test_class_weight.c
 *	  Unit tests: Keras' class_weight against TensorFlow.js.
 *
 * The fixture tfjs_class_weight.json is made by gen_class_weight.js (next
 * to it): TensorFlow.js trains small models from fixed initial weights
 * with model.fit(..., {classWeight, shuffle: false}) and plain SGD, and
 * records the final weights and the loss of each epoch.  Here the engine
 * trains the same models from the same weights, on the same data and
 * class weights, and must end with the same weights (float32 rounding
 * apart) and report the same weighted loss per epoch.  The same training
 * without class_weight must end elsewhere, so the comparison can fail.
 *
 * IDENTIFICATION
 *	  test/unit/test_class_weight.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "fixture_cases.h"
#include "unit_util.h"
#include "madlib_dl/dl_keras.h"
#include "madlib_dl/dl_model.h"
#include "madlib_dl/dl_params.h"

/* float32 rounding over a few steps; the differences seen are ~1e-7 */
#define WEIGHT_TOL 2e-5
#define LOSS_TOL 2e-5
/* without class_weight the weights must move at least this much more */
#define SENSITIVITY 1e-3

/*
 * Train case c with the engine, with its class_weight or without; the
 * final weights into out (P floats), the largest difference of the epoch
 * losses from TF.js' into *loss_diff.
 */
static void
train_case(json_object *c, bool with_weights, float *out, size_t P, double *loss_diff)
{
	TestAllocCounter counter;
	DlAllocator alloc = test_allocator(&counter);
	const char *arch = json_object_to_json_string_ext(fx_member(c, "model_arch"), JSON_C_TO_STRING_PLAIN);
	DlModelSpec *spec = NULL;
	DlModel    *m = NULL;
	DlOptimConfig o;
	DlTrainConfig cfg;
	DlError		err;
	json_object *cwo = fx_member(c, "class_weight");
	float		cw[DL_CLASS_WEIGHT_MAX];
	int64_t		n_cw = 0;
	size_t		nx,
				ny,
				nw,
				nl;
	float	   *x = fx_floats(fx_member(c, "x"), &nx);
	float	   *y = fx_floats(fx_member(c, "y"), &ny);
	float	   *w0 = fx_floats(fx_member(c, "initial_weights"), &nw);
	float	   *losses = fx_floats(fx_member(c, "epoch_loss"), &nl);
	int64_t		n = json_object_get_int64(fx_member(c, "n"));
	int			epochs = json_object_get_int(fx_member(c, "epochs"));

	json_object_object_foreach(cwo, key, val)
	{
		int			k = atoi(key);

		assert_true(k >= 0 && k < DL_CLASS_WEIGHT_MAX);
		while (n_cw <= k)
			cw[n_cw++] = NAN;
		cw[k] = (float) json_object_get_double(val);
	}
	if (dl_keras_parse(arch, strlen(arch), &alloc, &spec, &err) != DL_OK)
		fail_msg("%s: %s", json_object_get_string(fx_member(c, "name")), err.msg);
	dl_optim_config_default(&o, DL_OPTIM_SGD);
	o.lr = json_object_get_double(fx_member(c, "lr"));
	assert_int_equal(dl_model_create(spec, &o, &alloc, &m, &err), DL_OK);
	assert_int_equal(nw, P);
	assert_int_equal(dl_model_n_params(m), P);
	assert_int_equal(dl_model_set_params(m, w0, nw, &err), DL_OK);

	memset(&cfg, 0, sizeof(cfg));
	cfg.loss = fx_loss_of(json_object_get_string(fx_member(c, "loss")));
	cfg.metric = DL_METRIC_NONE;
	cfg.batch_size = json_object_get_int64(fx_member(c, "batch_size"));
	cfg.shuffle = false;
	if (with_weights)
	{
		cfg.class_weight = cw;
		cfg.n_class_weight = n_cw;
	}
	assert_int_equal(nl, (size_t) epochs);
	*loss_diff = 0;
	for (int e = 0; e < epochs; e++)
	{
		DlBatchStats st = {0};

		if (dl_model_train_epoch(m, &cfg, x, y, n, &st, &err) != DL_OK)
			fail_msg("train: %s", err.msg);
		*loss_diff = fmax(*loss_diff, fabs(st.loss_sum / (double) st.n - (double) losses[e]));
	}
	memcpy(out, dl_model_params(m), sizeof(float) * P);
	dl_model_free(m);
	dl_model_spec_free(spec, &alloc);
	assert_no_leaks(&counter);
	free(x);
	free(y);
	free(w0);
	free(losses);
	(void) nx;
	(void) ny;
}

static void
test_tfjs_fixture(void **state)
{
	char	   *text = read_fixture("tfjs_class_weight.json", NULL);
	json_object *root = json_tokener_parse(text);
	json_object *cases;
	double		worst_w = 0,
				worst_l = 0;

	assert_non_null(root);
	cases = fx_member(root, "cases");
	assert_true(json_object_array_length(cases) >= 4);
	for (size_t i = 0; i < json_object_array_length(cases); i++)
	{
		json_object *c = json_object_array_get_idx(cases, i);
		const char *name = json_object_get_string(fx_member(c, "name"));
		size_t		P;
		float	   *expect = fx_floats(fx_member(c, "final_weights"), &P);
		float	   *got = malloc(sizeof(float) * P);
		float	   *plain = malloc(sizeof(float) * P);
		double		dw = 0,
					dplain = 0,
					dl,
					dl_plain;

		train_case(c, true, got, P, &dl);
		train_case(c, false, plain, P, &dl_plain);
		for (size_t j = 0; j < P; j++)
		{
			dw = fmax(dw, fabs((double) got[j] - (double) expect[j]));
			dplain = fmax(dplain, fabs((double) plain[j] - (double) expect[j]));
		}
		print_message("class_weight vs TF.js, %s: max |weight difference| %.2e, "
					  "max |epoch loss difference| %.2e (without class_weight: %.2e, %.2e)\n",
					  name, dw, dl, dplain, dl_plain);
		if (!(dw <= WEIGHT_TOL))
			fail_msg("%s: weights differ from TF.js' by %g", name, dw);
		if (!(dl <= LOSS_TOL))
			fail_msg("%s: epoch losses differ from TF.js' by %g", name, dl);
		if (!(dplain >= SENSITIVITY))
			fail_msg("%s: without class_weight the weights differ by only %g: the case does not test it",
					 name, dplain);
		worst_w = fmax(worst_w, dw);
		worst_l = fmax(worst_l, dl);
		free(expect);
		free(got);
		free(plain);
	}
	print_message("class_weight vs TF.js, all cases: max |weight difference| %.2e, "
				  "max |epoch loss difference| %.2e\n", worst_w, worst_l);
	json_object_put(root);
	free(text);
}

/* Through fit_params: the parsed dict trains as the table above does. */
static void
test_fit_params_class_weight(void **state)
{
	DlFitParams fp;
	DlError		err;

	assert_int_equal(dl_fit_params_parse("class_weight={0: 0.5, 1: 2.0, 2: 4.0}, batch_size=4", &fp, &err),
					 DL_OK);
	assert_int_equal(fp.n_class_weight, 3);
	assert_true(fp.class_weight[0] == 0.5f && fp.class_weight[1] == 2.0f && fp.class_weight[2] == 4.0f);
	assert_int_equal(dl_fit_params_check_classes(&fp, DL_LOSS_CATEGORICAL_CROSSENTROPY, 3, &err), DL_OK);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tfjs_fixture),
		cmocka_unit_test(test_fit_params_class_weight),
	};

	return cmocka_run_group_tests_name("class_weight", tests, NULL, NULL);
}
