/*-------------------------------------------------------------------------
 *
 * test_memory.c
 *	  Unit tests: dl_model_memory_estimate against what a model really
 *	  allocates, hostile specs, and the oneDNN scratch limit.
 *
 * Each model is built with a counting allocator and run through a train
 * batch (and an evaluation) or a prediction; the allocator's peak must
 * not exceed the estimate, and the estimate must stay within twice the
 * peak.  MLP, CNN (im2col on the OpenBLAS backend, and oneDNN),
 * BatchNormalization and Dropout models, and the layers of text and
 * sequences (Embedding, LSTM, Bidirectional GRU, Conv1D, separable
 * convolutions), training and inference.  The
 * figures go to stdout (docs/engine.md quotes them).
 *
 * IDENTIFICATION
 *	  test/unit/test_memory.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_backend.h"
#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_keras.h"
#include "madlib_dl/dl_model.h"
#include "model_impl.h"

#define SEQ_HEAD "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"m\", \"layers\": ["
#define SEQ_TAIL "]}}"
#define INPUT(shape) "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, " shape "]}},"
#define DENSE(name, units, act) "{\"class_name\": \"Dense\", \"config\": {\"name\": \"" name "\", \"units\": " units ", \"activation\": \"" act "\"}}"

static const char mlp_json[] =
SEQ_HEAD INPUT("20")
DENSE("d1", "64", "relu") ","
DENSE("d2", "32", "tanh") ","
DENSE("d3", "5", "softmax") SEQ_TAIL;

static const char cnn_json[] =
SEQ_HEAD INPUT("16, 16, 3")
"{\"class_name\": \"Conv2D\", \"config\": {\"name\": \"c1\", \"filters\": 8, \"kernel_size\": [3, 3],"
" \"activation\": \"relu\"}},"
"{\"class_name\": \"MaxPooling2D\", \"config\": {\"name\": \"p1\", \"pool_size\": [2, 2]}},"
"{\"class_name\": \"Conv2D\", \"config\": {\"name\": \"c2\", \"filters\": 16, \"kernel_size\": [3, 3],"
" \"padding\": \"same\", \"activation\": \"relu\"}},"
"{\"class_name\": \"Flatten\", \"config\": {\"name\": \"f\"}},"
DENSE("d", "5", "softmax") SEQ_TAIL;

static const char bn_json[] =
SEQ_HEAD INPUT("20")
DENSE("d1", "64", "linear") ","
"{\"class_name\": \"BatchNormalization\", \"config\": {\"name\": \"bn\"}},"
"{\"class_name\": \"Activation\", \"config\": {\"name\": \"a\", \"activation\": \"relu\"}},"
DENSE("d2", "5", "softmax") SEQ_TAIL;

static const char dropout_json[] =
SEQ_HEAD INPUT("20")
DENSE("d1", "128", "relu") ","
"{\"class_name\": \"Dropout\", \"config\": {\"name\": \"dr\", \"rate\": 0.5}},"
DENSE("d2", "64", "relu") ","
"{\"class_name\": \"Dropout\", \"config\": {\"name\": \"dr2\", \"rate\": 0.25}},"
DENSE("d3", "5", "softmax") SEQ_TAIL;

/* The layers of text and sequences (issue 18): their saved tensors are workspace too. */
#define LAYER(cls, cfg) "{\"class_name\": \"" cls "\", \"config\": {\"name\": \"" cls "\"" cfg "}}"

static const char emb_lstm_json[] =
SEQ_HEAD INPUT("20")
LAYER("Embedding", ", \"input_dim\": 50, \"output_dim\": 16") ","
"{\"class_name\": \"LSTM\", \"config\": {\"name\": \"l1\", \"units\": 24, \"return_sequences\": true}},"
"{\"class_name\": \"LSTM\", \"config\": {\"name\": \"l2\", \"units\": 8}},"
DENSE("d", "5", "softmax") SEQ_TAIL;

static const char emb_conv1d_json[] =
SEQ_HEAD INPUT("30")
LAYER("Embedding", ", \"input_dim\": 100, \"output_dim\": 16") ","
LAYER("Conv1D", ", \"filters\": 32, \"kernel_size\": 5, \"activation\": \"relu\"") ","
LAYER("GlobalMaxPooling1D", "") ","
DENSE("d", "5", "softmax") SEQ_TAIL;

static const char bigru_json[] =
SEQ_HEAD INPUT("12, 6")
"{\"class_name\": \"Bidirectional\", \"config\": {\"name\": \"bi\", \"merge_mode\": \"mul\", "
"\"layer\": {\"class_name\": \"GRU\", \"config\": {\"name\": \"g\", \"units\": 10, "
"\"reset_after\": true, \"return_sequences\": true}}}},"
LAYER("LayerNormalization", "") ","
LAYER("Conv1D", ", \"filters\": 6, \"kernel_size\": 3, \"padding\": \"causal\", \"dilation_rate\": 2, \"activation\": \"swish\"") ","
LAYER("MaxPooling1D", ", \"pool_size\": 2") ","
LAYER("Flatten", "") ","
DENSE("d", "5", "softmax") SEQ_TAIL;

static const char separable_json[] =
SEQ_HEAD INPUT("12, 12, 3")
LAYER("SeparableConv2D", ", \"filters\": 8, \"kernel_size\": 3, \"depth_multiplier\": 2, \"activation\": \"gelu\"") ","
LAYER("DepthwiseConv2D", ", \"kernel_size\": 3, \"padding\": \"same\"") ","
LAYER("PReLU", "") ","
LAYER("GlobalAveragePooling2D", "") ","
DENSE("d", "5", "softmax") SEQ_TAIL;

static DlModelSpec *
parse(const char *json, const DlAllocator *a)
{
	DlModelSpec *spec = NULL;
	DlError		err;

	if (dl_keras_parse(json, strlen(json), a, &spec, &err) != DL_OK)
		fail_msg("parse: %s", err.msg);
	return spec;
}

/* n floats of a fixed pseudo-random pattern; y one-hot over k classes. */
static float *
data_x(int64_t n)
{
	float	   *x = malloc((size_t) n * sizeof(float));

	for (int64_t i = 0; i < n; i++)
		x[i] = (float) ((i * 37 % 101) / 101.0 - 0.5);
	return x;
}

static float *
data_y(int64_t rows, int64_t k)
{
	float	   *y = calloc((size_t) (rows * k), sizeof(float));

	for (int64_t i = 0; i < rows; i++)
		y[i * k + i % k] = 1.0f;
	return y;
}

/*
 * Build spec's model (training with Adam when training), run one train
 * batch and one evaluation of B samples (or a prediction of B samples),
 * and compare the allocator's peak with the estimate.  Returns the
 * model's oneDNN scratch capacity after the run.
 */
static size_t
check_model(const char *name, const char *json, bool training, int64_t B)
{
	TestAllocCounter spec_counter;
	DlAllocator spec_alloc = test_allocator(&spec_counter);
	TestAllocCounter counter;
	DlAllocator alloc = test_allocator(&counter);
	DlModelSpec *spec = parse(json, &spec_alloc);
	DlOptimConfig o;
	DlMemoryUse use;
	DlMemoryEstimate est;
	DlModel    *m = NULL;
	DlError		err;
	int64_t		in = dl_shape_size(&spec->input_shape);
	int64_t		k = dl_shape_size(&spec->output_shape);
	float	   *x = data_x(B * in);
	int64_t		vocab = 0;		/* an Embedding's input_dim: x holds ids below it */
	float	   *y = data_y(B, k);
	float	   *out = malloc((size_t) (B * k) * sizeof(float));
	size_t		blob;
	size_t		scratch_cap;

	for (int i = 0; i < spec->n_layers; i++)
		if (spec->layers[i].kind == DL_LAYER_EMBEDDING)
			vocab = spec->layers[i].input_dim;
	for (int64_t i = 0; vocab > 0 && i < B * in; i++)
		x[i] = (float) ((i * 37) % vocab);
	dl_optim_config_default(&o, DL_OPTIM_ADAM);
	use.optim = training ? &o : NULL;
	use.batch_size = B;
	assert_int_equal(dl_model_memory_estimate(spec, &use, &est, &err), DL_OK);
	assert_int_equal(counter.total, 0);	/* the estimate allocates nothing */

	assert_int_equal(dl_model_create(spec, use.optim, &alloc, &m, &err), DL_OK);
	assert_int_equal(dl_model_init_weights(m, 3, &err), DL_OK);
	if (training)
	{
		DlTrainConfig cfg;
		DlBatchStats stats = {0};

		memset(&cfg, 0, sizeof(cfg));
		cfg.loss = DL_LOSS_CATEGORICAL_CROSSENTROPY;
		cfg.metric = DL_METRIC_CATEGORICAL_ACCURACY;
		cfg.batch_size = B;
		if (dl_model_train_batch(m, &cfg, x, y, B, &stats, &err) != DL_OK)
			fail_msg("%s: train batch: %s", name, err.msg);
		if (dl_model_evaluate(m, &cfg, x, y, B, &stats, &err) != DL_OK)
			fail_msg("%s: evaluate: %s", name, err.msg);
	}
	else if (dl_model_predict(m, out, x, B, B, &err) != DL_OK)
		fail_msg("%s: predict: %s", name, err.msg);
	assert_int_equal(dl_model_kernel_status(m, &err), DL_OK);
	assert_int_equal(dl_blob_size(m, &blob, &err), DL_OK);
	scratch_cap = m->conv_scratch.cap;

	printf("%-24s B=%-4lld estimate %9.0f  peak %9zu  (%.2fx; weights %.0f grads %.0f optim %.0f "
		   "activations %.0f im2col %.0f onednn %.0f; scratch used %zu)\n",
		   name, (long long) B, est.total, counter.bytes_peak, est.total / (double) counter.bytes_peak,
		   est.weights, est.gradients, est.optimizer, est.activations, est.im2col,
		   est.onednn_scratch, scratch_cap);
	if (!(est.total >= (double) counter.bytes_peak))
		fail_msg("%s: estimate %.0f is below the peak %zu", name, est.total, counter.bytes_peak);
	if (!(est.total <= 2.0 * (double) counter.bytes_peak))
		fail_msg("%s: estimate %.0f is over twice the peak %zu", name, est.total, counter.bytes_peak);
	assert_true(est.state_blob == (double) blob);
	assert_true(est.weights == 4.0 * (double) spec->n_params);
	assert_true(scratch_cap <= m->conv_scratch.limit + DL_SCRATCH_ALIGN);

	dl_model_free(m);
	assert_no_leaks(&counter);
	dl_model_spec_free(spec, &spec_alloc);
	free(x);
	free(y);
	free(out);
	return scratch_cap;
}

static void
test_mlp(void **state)
{
	check_model("mlp train", mlp_json, true, 32);
	check_model("mlp train", mlp_json, true, 1);
	check_model("mlp predict", mlp_json, false, 100);
}

static void
test_cnn_openblas(void **state)
{
	dl_backend_set(DL_BACKEND_OPENBLAS);
	assert_int_equal(check_model("cnn train openblas", cnn_json, true, 16), 0);
	assert_int_equal(check_model("cnn predict openblas", cnn_json, false, 64), 0);
	dl_backend_set(DL_BACKEND_AUTO);
}

static void
test_cnn_onednn(void **state)
{
	size_t		cap;

	if (!dl_backend_onednn_available())
		skip();
	dl_backend_set(DL_BACKEND_ONEDNN);
	dl_backend_set_threads(1);
	cap = check_model("cnn train onednn", cnn_json, true, 16);
	assert_true(cap > 0);		/* oneDNN ran, within its budget */
	cap = check_model("cnn predict onednn", cnn_json, false, 64);
	assert_true(cap > 0);
	dl_backend_set_threads(2);
	cap = check_model("cnn train onednn 2thr", cnn_json, true, 16);
	assert_true(cap > 0);
	dl_backend_set_threads(1);
	dl_backend_set(DL_BACKEND_AUTO);
}

static void
test_batchnorm_dropout(void **state)
{
	check_model("batchnorm train", bn_json, true, 32);
	check_model("batchnorm predict", bn_json, false, 32);
	check_model("dropout train", dropout_json, true, 32);
	check_model("dropout predict", dropout_json, false, 32);
}

static void
test_sequences(void **state)
{
	check_model("embedding lstm train", emb_lstm_json, true, 16);
	check_model("embedding lstm predict", emb_lstm_json, false, 32);
	check_model("embedding conv1d train", emb_conv1d_json, true, 16);
	check_model("embedding conv1d predict", emb_conv1d_json, false, 32);
	check_model("bigru conv1d train", bigru_json, true, 16);
	check_model("bigru conv1d predict", bigru_json, false, 64);
	check_model("separable train", separable_json, true, 8);
	check_model("separable predict", separable_json, false, 16);
	if (dl_backend_onednn_available())
	{
		/* Conv1D's oneDNN scratch is in the budget */
		dl_backend_set(DL_BACKEND_ONEDNN);
		assert_true(check_model("embedding conv1d onednn", emb_conv1d_json, true, 16) > 0);
		dl_backend_set(DL_BACKEND_AUTO);
	}
}

/*
 * Hostile specs: the estimate is huge, finite and made without
 * allocating; the parts add up.
 */
static void
test_hostile(void **state)
{
	TestAllocCounter counter;
	DlAllocator alloc = test_allocator(&counter);
	DlModelSpec *spec;
	DlOptimConfig o;
	DlMemoryUse use;
	DlMemoryEstimate est;
	DlError		err;
	int64_t		before;

	dl_optim_config_default(&o, DL_OPTIM_ADAM);

	/* Dense(units=2147483647) on 4 inputs: 10.7e9 parameters */
	spec = parse(SEQ_HEAD INPUT("4") DENSE("d", "2147483647", "softmax") SEQ_TAIL, &alloc);
	before = counter.total;
	use.optim = &o;
	use.batch_size = 32;
	assert_int_equal(dl_model_memory_estimate(spec, &use, &est, &err), DL_OK);
	assert_int_equal(counter.total, before);
	assert_true(isfinite(est.total));
	/* weights, gradients, 2 Adam slots: 16 bytes per parameter */
	assert_true(est.weights + est.gradients + est.optimizer == 16.0 * 10737418235.0);
	assert_true(est.total > 1.7e11);
	assert_true(est.state_blob == 96.0 + 12.0 * 10737418235.0);
	dl_model_spec_free(spec, &alloc);

	/* a huge batch of a small model: no wrap-around */
	spec = parse(mlp_json, &alloc);
	use.batch_size = INT64_MAX;
	assert_int_equal(dl_model_memory_estimate(spec, &use, &est, &err), DL_OK);
	assert_true(isfinite(est.total) && est.activations > 1e20);
	use.batch_size = -1;
	assert_int_equal(dl_model_memory_estimate(spec, &use, &est, &err), DL_ERR_INVALID_ARGUMENT);
	dl_model_spec_free(spec, &alloc);

	/* a 64x64 kernel on [256, 256, 16] ('same'): about 17 GB of im2col for one sample */
	spec = parse(SEQ_HEAD INPUT("256, 256, 16")
				 "{\"class_name\": \"Conv2D\", \"config\": {\"name\": \"c\", \"filters\": 4,"
				 " \"kernel_size\": [64, 64], \"padding\": \"same\"}},"
				 "{\"class_name\": \"Flatten\", \"config\": {\"name\": \"f\"}},"
				 DENSE("d", "2", "softmax") SEQ_TAIL, &alloc);
	use.batch_size = 1;
	assert_int_equal(dl_model_memory_estimate(spec, &use, &est, &err), DL_OK);
	assert_true(est.im2col == 256.0 * 256 * 64 * 64 * 16 * 4);
	assert_true(est.total > 17e9);
	dl_model_spec_free(spec, &alloc);

	/* not finalized */
	spec = dl_model_spec_create(1, &alloc, &err);
	use.batch_size = 1;
	assert_int_equal(dl_model_memory_estimate(spec, &use, &est, &err), DL_ERR_INVALID_ARGUMENT);
	dl_model_spec_free(spec, &alloc);
	assert_no_leaks(&counter);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mlp),
		cmocka_unit_test(test_cnn_openblas),
		cmocka_unit_test(test_cnn_onednn),
		cmocka_unit_test(test_batchnorm_dropout),
		cmocka_unit_test(test_sequences),
		cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
