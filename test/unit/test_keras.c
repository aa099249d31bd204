/*-------------------------------------------------------------------------
 *
 * test_keras.c
 *	  Unit tests: reading Keras model.to_json() architectures.
 *
 * The fixtures in test/unit/fixtures/ are written to look exactly like
 * what each dialect's to_json() produces:
 *	 k2_*    Keras 2.1-2.2 (Sequential config is a list, VarianceScaling)
 *	 tf2_*   tf.keras 2.x (InputLayer, GlorotUniform, L2, BatchNormalization
 *			 axis [3], Functional inbound_nodes [[["input_1", 0, 0, {}]]])
 *	 tfjs_*  TensorFlow.js (compact, VarianceScaling "normal", scale 1)
 *	 k3_*    Keras 3 (module, registered_name, build_config, batch_shape,
 *			 DTypePolicy, __keras_tensor__ inbound nodes)
 * The same architectures appear in several dialects and must give the
 * same spec.  Error cases are derived from the fixtures by replacing one
 * attribute, so they stay realistic.
 *
 * IDENTIFICATION
 *	  test/unit/test_keras.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_keras.h"

/* One parse with its own counting allocator. */
typedef struct KerasCase
{
	TestAllocCounter counter;
	DlAllocator alloc;
	DlModelSpec *spec;
	DlError		err;
	DlStatus	st;
} KerasCase;

/* Parse len bytes of text; fail_after >= 0 makes that allocation fail. */
static void
case_parse_n(KerasCase *c, const char *text, size_t len, int64_t fail_after)
{
	c->alloc = test_allocator(&c->counter);
	c->counter.fail_after = fail_after;
	/* a stale pointer that dl_keras_parse must overwrite */
	c->spec = (DlModelSpec *) &c->counter;
	dl_error_clear(&c->err);
	c->st = dl_keras_parse(text, len, &c->alloc, &c->spec, &c->err);
}

static void
case_parse(KerasCase *c, const char *text)
{
	case_parse_n(c, text, strlen(text), -1);
}

static void
case_fixture(KerasCase *c, const char *name)
{
	size_t		len;
	char	   *text = read_fixture(name, &len);

	case_parse_n(c, text, len, -1);
	free(text);
}

/* The parse succeeded. */
static void
case_ok(KerasCase *c)
{
	if (c->st != DL_OK)
		fail_msg("parse failed with %s: %s", dl_status_name(c->st), c->err.msg);
	assert_non_null(c->spec);
	assert_true(c->spec != (DlModelSpec *) &c->counter);
}

/* Free the spec and check that nothing leaked. */
static void
case_done(KerasCase *c)
{
	if (c->st == DL_OK)
		dl_model_spec_free(c->spec, &c->alloc);
	assert_no_leaks(&c->counter);
}

/*
 * The parse failed with code, left no spec and no leak, and its message
 * contains s1 and s2 (either may be NULL).
 */
static void
case_error(KerasCase *c, DlStatus code, const char *s1, const char *s2)
{
	if (c->st != code)
		fail_msg("expected %s, got %s: %s", dl_status_name(code), dl_status_name(c->st), c->err.msg);
	assert_int_equal(c->err.code, code);
	assert_null(c->spec);
	assert_no_leaks(&c->counter);
	if (s1 != NULL && strstr(c->err.msg, s1) == NULL)
		fail_msg("message \"%s\" does not contain \"%s\"", c->err.msg, s1);
	if (s2 != NULL && strstr(c->err.msg, s2) == NULL)
		fail_msg("message \"%s\" does not contain \"%s\"", c->err.msg, s2);
	/* lowercase first letter, no final period */
	assert_true(c->err.msg[0] != '\0');
	assert_true(c->err.msg[0] < 'A' || c->err.msg[0] > 'Z');
	assert_true(c->err.msg[strlen(c->err.msg) - 1] != '.');
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
	strcat(out, at + strlen(from));
	return out;
}

/* Parse fixture name with the first "from" replaced by "to". */
static void
case_fixture_with(KerasCase *c, const char *name, const char *from, const char *to)
{
	char	   *text = read_fixture(name, NULL);
	char	   *edited = replace_once(text, from, to);

	case_parse(c, edited);
	free(edited);
	free(text);
}

static void
assert_shape(const DlShape *s, int rank, int64_t d0, int64_t d1, int64_t d2)
{
	int64_t		d[3] = {d0, d1, d2};

	assert_int_equal(s->rank, rank);
	for (int i = 0; i < rank && i < 3; i++)
		assert_int_equal(s->dims[i], d[i]);
}

static void
assert_vs(const DlInitializer *init, double scale, DlFanMode mode, DlDistribution dist,
		  bool has_seed, uint64_t seed)
{
	assert_int_equal(init->kind, DL_INIT_VARIANCE_SCALING);
	assert_close(init->scale, scale, 1e-12, 0);
	assert_int_equal(init->mode, mode);
	assert_int_equal(init->distribution, dist);
	assert_int_equal(init->has_seed, has_seed);
	if (has_seed)
		assert_int_equal(init->seed, seed);
}

/* ----------------------------------------------------------------------
 * The iris MLP 4-10-10-3 (193 parameters) in every dialect
 * ----------------------------------------------------------------------
 */

static void
check_iris(const DlModelSpec *spec, const char *const names[3], DlDistribution dist)
{
	static const int64_t units[3] = {10, 10, 3};
	static const DlActivation acts[3] = {DL_ACT_RELU, DL_ACT_RELU, DL_ACT_SOFTMAX};
	static const size_t params[3] = {50, 110, 33};
	size_t		offset = 0;

	assert_int_equal(spec->n_layers, 3);
	assert_shape(&spec->input_shape, 1, 4, 0, 0);
	for (int i = 0; i < 3; i++)
	{
		const DlLayer *l = &spec->layers[i];

		assert_int_equal(l->kind, DL_LAYER_DENSE);
		assert_string_equal(l->name, names[i]);
		assert_int_equal(l->units, units[i]);
		assert_int_equal(l->activation, acts[i]);
		assert_true(l->use_bias);
		assert_true(l->trainable);
		assert_vs(&l->kernel_init, 1.0, DL_FAN_AVG, dist, false, 0);
		assert_int_equal(l->bias_init.kind, DL_INIT_ZEROS);
		assert_close(l->kernel_reg.l2, i == 1 ? 0.01 : 0.0, 1e-6, 0);
		assert_close(l->kernel_reg.l1, 0.0, 0, 0);
		assert_close(l->bias_reg.l2, 0.0, 0, 0);
		assert_int_equal(l->n_params, params[i]);
		assert_int_equal(l->param_offset, offset);
		offset += params[i];
	}
	assert_shape(&spec->output_shape, 1, 3, 0, 0);
	assert_int_equal(spec->n_params, 193);
	assert_int_equal(spec->n_trainable, 193);
}

static void
test_k2_iris_mlp(void **state)
{
	static const char *const names[3] = {"dense_1", "dense_2", "dense_3"};
	KerasCase	c;

	case_fixture(&c, "k2_iris_mlp.json");
	case_ok(&c);
	check_iris(c.spec, names, DL_DIST_UNIFORM);
	assert_string_equal(c.spec->name, "");
	case_done(&c);
}

static void
test_tfjs_iris_mlp(void **state)
{
	static const char *const names[3] = {"dense_Dense1", "dense_Dense2", "dense_Dense3"};
	KerasCase	c;

	case_fixture(&c, "tfjs_iris_mlp.json");
	case_ok(&c);
	/* TF.js glorotNormal: VarianceScaling "normal" = truncated normal */
	check_iris(c.spec, names, DL_DIST_TRUNCATED_NORMAL);
	assert_string_equal(c.spec->name, "sequential_1");
	case_done(&c);
}

/* A TF.js model.json wraps the architecture in "modelTopology". */
static void
test_tfjs_model_json_wrapper(void **state)
{
	static const char *const names[3] = {"dense_Dense1", "dense_Dense2", "dense_Dense3"};
	char	   *text = read_fixture("tfjs_iris_mlp.json", NULL);
	char	   *wrapped = malloc(strlen(text) + 200);
	KerasCase	c;

	assert_non_null(wrapped);
	sprintf(wrapped, "{\"format\":\"layers-model\",\"generatedBy\":\"TensorFlow.js tfjs-layers v4.22.0\","
			"\"convertedBy\":null,\"modelTopology\":%s,\"weightsManifest\":[]}", text);
	case_parse(&c, wrapped);
	case_ok(&c);
	check_iris(c.spec, names, DL_DIST_TRUNCATED_NORMAL);
	case_done(&c);
	free(wrapped);
	free(text);
}

static void
test_functional_k2(void **state)
{
	static const char *const names[3] = {"dense_1", "dense_2", "dense_3"};
	KerasCase	c;

	case_fixture(&c, "k2_functional_iris.json");
	case_ok(&c);
	check_iris(c.spec, names, DL_DIST_UNIFORM);
	assert_string_equal(c.spec->name, "model_1");
	case_done(&c);
}

static void
test_functional_tf2(void **state)
{
	static const char *const names[3] = {"dense", "dense_1", "dense_2"};
	KerasCase	c;

	case_fixture(&c, "tf2_functional_iris.json");
	case_ok(&c);
	check_iris(c.spec, names, DL_DIST_UNIFORM);
	case_done(&c);
}

static void
test_functional_k3(void **state)
{
	static const char *const names[3] = {"dense", "dense_1", "dense_2"};
	KerasCase	c;

	case_fixture(&c, "k3_functional_iris.json");
	case_ok(&c);
	check_iris(c.spec, names, DL_DIST_UNIFORM);
	assert_string_equal(c.spec->name, "functional");
	case_done(&c);
}

/* Layers listed out of order are put in chain order. */
static void
test_functional_follows_chain(void **state)
{
	static const char *const names[3] = {"dense", "dense_1", "dense_2"};
	KerasCase	c;

	case_fixture(&c, "k3_functional_shuffled.json");
	case_ok(&c);
	check_iris(c.spec, names, DL_DIST_UNIFORM);
	case_done(&c);
}

/* A branch joined by Add: the layers in the model's order, Add reading both. */
static void
test_functional_branching(void **state)
{
	KerasCase	c;
	const DlLayer *add;

	/* Keras 3: dense and dense_1 both read the input and are added */
	case_fixture(&c, "k3_functional_branching.json");
	case_ok(&c);
	assert_int_equal(c.spec->n_layers, 4);
	assert_string_equal(c.spec->layers[0].name, "dense");
	assert_string_equal(c.spec->layers[1].name, "dense_1");
	add = &c.spec->layers[2];
	assert_string_equal(add->name, "add");
	assert_int_equal(add->kind, DL_LAYER_ADD);
	assert_int_equal(add->n_in, 2);
	assert_int_equal(add->in[0], 0);
	assert_int_equal(add->in[1], 1);
	assert_int_equal(c.spec->layers[0].in[0], -1);
	assert_int_equal(c.spec->layers[1].in[0], -1);
	assert_int_equal(c.spec->layers[3].in[0], 2);
	assert_false(c.spec->is_chain);
	/* weights in layer order: dense, dense_1, then dense_2 after the add */
	assert_int_equal(c.spec->layers[1].param_offset, 40);
	assert_int_equal(c.spec->layers[3].param_offset, 80);
	case_done(&c);
}

static void
test_functional_graph_refused(void **state)
{
	KerasCase	c;
	char	   *text;

	/* tf.keras 2: one layer feeding two outputs; the SQL functions take one */
	case_fixture(&c, "tf2_functional_two_heads.json");
	case_error(&c, DL_ERR_UNSUPPORTED, "2 outputs", "(\"dense_1\", \"dense_2\")");
	assert_true(strlen(c.err.hint) > 0);

	/* ... which dl_keras_parse_multi_io takes */
	text = read_fixture("tf2_functional_two_heads.json", NULL);
	c.alloc = test_allocator(&c.counter);
	c.st = dl_keras_parse_multi_io(text, strlen(text), &c.alloc, &c.spec, &c.err);
	case_ok(&c);
	assert_int_equal(c.spec->n_outputs, 2);
	assert_int_equal(c.spec->outputs[0], 1);
	assert_int_equal(c.spec->outputs[1], 2);
	assert_shape(&c.spec->output_shapes[1], 1, 1, 0, 0);
	case_done(&c);
	free(text);

	/* the same with one declared output: dense_2 leads nowhere */
	case_fixture_with(&c, "tf2_functional_two_heads.json",
					  "[[\"dense_1\", 0, 0], [\"dense_2\", 0, 0]]", "[[\"dense_1\", 0, 0]]");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"dense_2\" does not lead to any of the model's outputs",
			   NULL);

	/* a layer with no inbound connection */
	case_fixture_with(&c, "tf2_functional_iris.json", "\"inbound_nodes\": [[[\"dense\", 0, 0, {}]]]",
					  "\"inbound_nodes\": []");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"dense_1\" has no inbound layer", NULL);

	/* the output is not the end of the chain */
	case_fixture_with(&c, "k3_functional_iris.json", "\"output_layers\": [[\"dense_2\", 0, 0]]",
					  "\"output_layers\": [[\"dense_1\", 0, 0]]");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"dense_2\"", "outputs");

	/* a shared layer: dense called twice */
	case_fixture_with(&c, "tf2_functional_iris.json", "\"inbound_nodes\": [[[\"dense\", 0, 0, {}]]]",
					  "\"inbound_nodes\": [[[\"dense\", 0, 0, {}]], [[\"dense\", 0, 0, {}]]]");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"dense_1\" is called 2 times (a shared layer)", NULL);

	/* a reference to a layer that does not exist, to a second call, to a second output */
	case_fixture_with(&c, "tf2_functional_iris.json", "\"inbound_nodes\": [[[\"dense\", 0, 0, {}]]]",
					  "\"inbound_nodes\": [[[\"nowhere\", 0, 0, {}]]]");
	case_error(&c, DL_ERR_PARSE, "layer \"dense_1\" reads \"nowhere\", which is not a layer", NULL);
	case_fixture_with(&c, "tf2_functional_iris.json", "\"inbound_nodes\": [[[\"dense\", 0, 0, {}]]]",
					  "\"inbound_nodes\": [[[\"dense\", 1, 0, {}]]]");
	case_error(&c, DL_ERR_PARSE, "layer \"dense_1\" reads call 1 of layer \"dense\"", NULL);
	case_fixture_with(&c, "tf2_functional_iris.json", "\"inbound_nodes\": [[[\"dense\", 0, 0, {}]]]",
					  "\"inbound_nodes\": [[[\"dense\", 0, 1, {}]]]");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"dense_1\" reads output 1 of layer \"dense\"", NULL);

	/* a cycle: dense reads dense_1, which reads dense */
	case_fixture_with(&c, "tf2_functional_iris.json", "\"inbound_nodes\": [[[\"input_1\", 0, 0, {}]]]",
					  "\"inbound_nodes\": [[[\"dense_1\", 0, 0, {}]]]");
	case_error(&c, DL_ERR_UNSUPPORTED, "is part of a cycle", NULL);

	/* a merge of shapes that differ: Add of dense (8) and dense_1 (5) */
	case_fixture_with(&c, "k3_functional_branching.json", "\"units\": 8, \"activation\": \"tanh\"",
					  "\"units\": 5, \"activation\": \"tanh\"");
	case_error(&c, DL_ERR_SHAPE, "layer \"add\" (Add): input 2 has shape (5), input 1 has (8)", NULL);
}

/* ----------------------------------------------------------------------
 * Fashion MLP 784-256-128-10 (235146 parameters)
 * ----------------------------------------------------------------------
 */

/* first: index of the first Dense layer (1 when a Flatten comes first) */
static void
check_fashion(const DlModelSpec *spec, int first)
{
	const DlLayer *l = &spec->layers[first];

	assert_int_equal(spec->n_layers, first + 4);
	assert_int_equal(l[0].kind, DL_LAYER_DENSE);
	assert_int_equal(l[0].units, 256);
	assert_int_equal(l[0].activation, DL_ACT_RELU);
	assert_close(l[0].kernel_reg.l2, 0.01, 1e-6, 0);
	assert_close(l[0].kernel_reg.l1, 0.0, 0, 0);
	assert_vs(&l[0].kernel_init, 1.0, DL_FAN_AVG, DL_DIST_UNIFORM, false, 0);
	assert_int_equal(l[0].n_params, 784 * 256 + 256);
	assert_int_equal(l[1].kind, DL_LAYER_DROPOUT);
	assert_close(l[1].rate, 0.2, 1e-12, 0);
	assert_int_equal(l[1].n_params, 0);
	assert_int_equal(l[2].kind, DL_LAYER_DENSE);
	assert_int_equal(l[2].units, 128);
	assert_vs(&l[2].kernel_init, 1.0, DL_FAN_AVG, DL_DIST_TRUNCATED_NORMAL, true, 1);
	assert_int_equal(l[3].units, 10);
	assert_int_equal(l[3].activation, DL_ACT_SOFTMAX);
	assert_int_equal(l[3].param_offset, 235146 - 1290);
	assert_shape(&spec->output_shape, 1, 10, 0, 0);
	assert_int_equal(spec->n_params, 235146);
}

static void
test_tf2_fashion_mlp(void **state)
{
	KerasCase	c;

	case_fixture(&c, "tf2_fashion_mlp.json");
	case_ok(&c);
	assert_shape(&c.spec->input_shape, 1, 784, 0, 0);
	check_fashion(c.spec, 0);
	assert_false(c.spec->layers[1].has_seed);
	assert_string_equal(c.spec->layers[0].name, "dense");
	case_done(&c);
}

static void
test_k3_fashion_mlp(void **state)
{
	KerasCase	c;

	case_fixture(&c, "k3_fashion_mlp.json");
	case_ok(&c);
	assert_shape(&c.spec->input_shape, 3, 28, 28, 1);
	assert_int_equal(c.spec->layers[0].kind, DL_LAYER_FLATTEN);
	assert_shape(&c.spec->layers[0].out_shape, 1, 784, 0, 0);
	check_fashion(c.spec, 1);
	assert_true(c.spec->layers[2].has_seed);
	assert_int_equal(c.spec->layers[2].seed, 42);
	case_done(&c);
}

/* ----------------------------------------------------------------------
 * MNIST CNN Conv32-Pool-Conv64-Pool-Flatten-Dense128-Dense10 (225034)
 * ----------------------------------------------------------------------
 */

static void
check_mnist_cnn(const DlModelSpec *spec)
{
	static const DlLayerKind kinds[10] = {
		DL_LAYER_CONV2D, DL_LAYER_MAXPOOL2D, DL_LAYER_CONV2D, DL_LAYER_MAXPOOL2D, DL_LAYER_DROPOUT,
		DL_LAYER_FLATTEN, DL_LAYER_DENSE, DL_LAYER_DROPOUT, DL_LAYER_DENSE, DL_LAYER_ACTIVATION
	};
	static const size_t params[10] = {320, 0, 18496, 0, 0, 0, 204928, 0, 1290, 0};
	const DlLayer *l = spec->layers;

	assert_int_equal(spec->n_layers, 10);
	assert_shape(&spec->input_shape, 3, 28, 28, 1);
	for (int i = 0; i < 10; i++)
	{
		assert_int_equal(l[i].kind, kinds[i]);
		assert_int_equal(l[i].n_params, params[i]);
		assert_true(l[i].trainable);
	}
	for (int i = 0; i < 3; i += 2)
	{
		assert_int_equal(l[i].filters, i == 0 ? 32 : 64);
		assert_int_equal(l[i].kernel_size[0], 3);
		assert_int_equal(l[i].kernel_size[1], 3);
		assert_int_equal(l[i].strides[0], 1);
		assert_int_equal(l[i].strides[1], 1);
		assert_int_equal(l[i].padding, DL_PADDING_VALID);
		assert_int_equal(l[i].activation, DL_ACT_RELU);
		assert_vs(&l[i].kernel_init, 1.0, DL_FAN_AVG, DL_DIST_UNIFORM, false, 0);
		assert_int_equal(l[i + 1].pool_size[0], 2);
		assert_int_equal(l[i + 1].pool_size[1], 2);
		assert_int_equal(l[i + 1].strides[0], 2);
		assert_int_equal(l[i + 1].strides[1], 2);
	}
	assert_shape(&l[0].out_shape, 3, 26, 26, 32);
	assert_shape(&l[1].out_shape, 3, 13, 13, 32);
	assert_shape(&l[2].out_shape, 3, 11, 11, 64);
	assert_shape(&l[3].out_shape, 3, 5, 5, 64);
	assert_shape(&l[5].out_shape, 1, 1600, 0, 0);
	assert_close(l[4].rate, 0.25, 1e-12, 0);
	assert_close(l[7].rate, 0.5, 1e-12, 0);
	assert_int_equal(l[6].units, 128);
	assert_int_equal(l[8].units, 10);
	assert_int_equal(l[8].activation, DL_ACT_LINEAR);
	assert_int_equal(l[9].activation, DL_ACT_SOFTMAX);
	assert_int_equal(l[8].param_offset, 320 + 18496 + 204928);
	assert_int_equal(spec->n_params, 225034);
	assert_int_equal(spec->n_trainable, 225034);
}

static void
test_mnist_cnn_dialects(void **state)
{
	static const char *const files[3] = {"k2_mnist_cnn.json", "tf2_mnist_cnn.json", "k3_mnist_cnn.json"};
	static const char *const first[3] = {"conv2d_1", "conv2d", "conv2d"};
	uint64_t	fp[3];

	for (int i = 0; i < 3; i++)
	{
		KerasCase	c;

		case_fixture(&c, files[i]);
		case_ok(&c);
		check_mnist_cnn(c.spec);
		assert_string_equal(c.spec->layers[0].name, first[i]);
		fp[i] = dl_model_spec_fingerprint(c.spec);
		case_done(&c);
	}
	assert_true(fp[0] == fp[1]);
	assert_true(fp[1] == fp[2]);
}

/* ----------------------------------------------------------------------
 * Every layer kind (5450 parameters): Conv2D same/no bias/frozen,
 * BatchNormalization, Activation, MaxPooling2D, strided Conv2D with
 * regularizers, AveragePooling2D same, seeded Dropout,
 * GlobalAveragePooling2D, Dense with random initializers
 * ----------------------------------------------------------------------
 */

static void
check_all_layers(const DlModelSpec *spec)
{
	static const DlLayerKind kinds[9] = {
		DL_LAYER_CONV2D, DL_LAYER_BATCHNORM, DL_LAYER_ACTIVATION, DL_LAYER_MAXPOOL2D, DL_LAYER_CONV2D,
		DL_LAYER_AVGPOOL2D, DL_LAYER_DROPOUT, DL_LAYER_GLOBALAVGPOOL2D, DL_LAYER_DENSE
	};
	static const char *const names[9] = {
		"conv_a", "bn_a", "act_a", "pool_a", "conv_b", "pool_b", "drop_a", "gap", "out"
	};
	const DlLayer *l = spec->layers;

	assert_int_equal(spec->n_layers, 9);
	assert_shape(&spec->input_shape, 3, 32, 32, 3);
	for (int i = 0; i < 9; i++)
	{
		assert_int_equal(l[i].kind, kinds[i]);
		assert_string_equal(l[i].name, names[i]);
	}
	/* conv_a: 16 filters 3x3 same, no bias, he_normal(seed 7), frozen */
	assert_int_equal(l[0].filters, 16);
	assert_int_equal(l[0].padding, DL_PADDING_SAME);
	assert_false(l[0].use_bias);
	assert_false(l[0].trainable);
	assert_int_equal(l[0].activation, DL_ACT_LINEAR);
	assert_vs(&l[0].kernel_init, 2.0, DL_FAN_IN, DL_DIST_TRUNCATED_NORMAL, true, 7);
	assert_shape(&l[0].out_shape, 3, 32, 32, 16);
	assert_int_equal(l[0].n_params, 432);
	assert_int_equal(l[0].n_trainable, 0);
	/* bn_a: momentum 0.9, epsilon 1e-5, no gamma */
	assert_close(l[1].momentum, 0.9, 1e-12, 0);
	assert_close(l[1].epsilon, 1e-5, 1e-12, 0);
	assert_true(l[1].center);
	assert_false(l[1].scale);
	assert_int_equal(l[1].beta_init.kind, DL_INIT_ZEROS);
	assert_int_equal(l[1].gamma_init.kind, DL_INIT_ONES);
	assert_int_equal(l[1].moving_mean_init.kind, DL_INIT_ZEROS);
	assert_int_equal(l[1].moving_variance_init.kind, DL_INIT_ONES);
	assert_int_equal(l[1].n_params, 48);
	assert_int_equal(l[1].n_trainable, 16);
	assert_int_equal(l[2].activation, DL_ACT_RELU);
	assert_shape(&l[3].out_shape, 3, 16, 16, 16);
	/* conv_b: 32 filters 3x3 stride 2 valid, lecun_uniform, Constant(0.1), L1L2 */
	assert_int_equal(l[4].filters, 32);
	assert_int_equal(l[4].strides[0], 2);
	assert_int_equal(l[4].strides[1], 2);
	assert_int_equal(l[4].padding, DL_PADDING_VALID);
	assert_vs(&l[4].kernel_init, 1.0, DL_FAN_IN, DL_DIST_UNIFORM, false, 0);
	assert_int_equal(l[4].bias_init.kind, DL_INIT_CONSTANT);
	assert_close(l[4].bias_init.value, 0.1, 1e-12, 0);
	assert_close(l[4].kernel_reg.l1, 0.001, 1e-6, 0);
	assert_close(l[4].kernel_reg.l2, 0.0001, 1e-6, 0);
	assert_close(l[4].bias_reg.l1, 0.0, 0, 0);
	assert_close(l[4].bias_reg.l2, 0.01, 1e-6, 0);
	assert_shape(&l[4].out_shape, 3, 7, 7, 32);
	assert_int_equal(l[4].n_params, 4640);
	/* pool_b: 3x3 stride 1 same */
	assert_int_equal(l[5].pool_size[0], 3);
	assert_int_equal(l[5].pool_size[1], 3);
	assert_int_equal(l[5].strides[0], 1);
	assert_int_equal(l[5].padding, DL_PADDING_SAME);
	assert_shape(&l[5].out_shape, 3, 7, 7, 32);
	/* drop_a */
	assert_close(l[6].rate, 0.3, 1e-12, 0);
	assert_true(l[6].has_seed);
	assert_int_equal(l[6].seed, 123);
	assert_shape(&l[7].out_shape, 1, 32, 0, 0);
	/* out: RandomNormal(0, 0.01, seed 3), RandomUniform(-0.1, 0.1, seed 5) */
	assert_int_equal(l[8].kernel_init.kind, DL_INIT_RANDOM_NORMAL);
	assert_close(l[8].kernel_init.mean, 0.0, 0, 1e-12);
	assert_close(l[8].kernel_init.stddev, 0.01, 1e-12, 0);
	assert_true(l[8].kernel_init.has_seed);
	assert_int_equal(l[8].kernel_init.seed, 3);
	assert_int_equal(l[8].bias_init.kind, DL_INIT_RANDOM_UNIFORM);
	assert_close(l[8].bias_init.minval, -0.1, 1e-12, 0);
	assert_close(l[8].bias_init.maxval, 0.1, 1e-12, 0);
	assert_int_equal(l[8].bias_init.seed, 5);
	assert_int_equal(l[8].activation, DL_ACT_SOFTMAX);
	assert_int_equal(l[8].n_params, 330);
	assert_int_equal(spec->n_params, 5450);
	assert_int_equal(spec->n_trainable, 16 + 4640 + 330);
}

static void
test_all_layers_dialects(void **state)
{
	static const char *const files[3] = {"k2_all_layers.json", "tf2_all_layers.json", "k3_all_layers.json"};
	uint64_t	fp[3];

	for (int i = 0; i < 3; i++)
	{
		KerasCase	c;

		case_fixture(&c, files[i]);
		case_ok(&c);
		check_all_layers(c.spec);
		fp[i] = dl_model_spec_fingerprint(c.spec);
		case_done(&c);
	}
	assert_true(fp[0] == fp[1]);
	assert_true(fp[1] == fp[2]);
}

/* ----------------------------------------------------------------------
 * Spellings: snake_case names, bare-string initializers and
 * regularizers, Keras 3 activation objects, input_shape and build_config
 * as the input shape, layer class aliases
 * ----------------------------------------------------------------------
 */

static void
test_spellings(void **state)
{
	KerasCase	c;
	const DlLayer *l;

	case_parse(&c,
			   "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\", \"layers\": ["
			   "{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\", \"units\": 2, \"input_shape\": [3],"
			   " \"kernel_initializer\": {\"class_name\": \"he_uniform\", \"config\": {\"seed\": 9}},"
			   " \"bias_initializer\": \"ones\","
			   " \"kernel_regularizer\": {\"class_name\": \"l1_l2\", \"config\": {\"l1\": 0.5, \"l2\": 0.25}},"
			   " \"bias_regularizer\": \"l1\"}}]}}");
	case_ok(&c);
	l = &c.spec->layers[0];
	assert_shape(&c.spec->input_shape, 1, 3, 0, 0);
	assert_vs(&l->kernel_init, 2.0, DL_FAN_IN, DL_DIST_UNIFORM, true, 9);
	assert_int_equal(l->bias_init.kind, DL_INIT_ONES);
	assert_close(l->kernel_reg.l1, 0.5, 0, 0);
	assert_close(l->kernel_reg.l2, 0.25, 0, 0);
	assert_close(l->bias_reg.l1, 0.01, 1e-12, 0);
	assert_int_equal(c.spec->n_params, 8);
	case_done(&c);

	/* Keras 3 without an InputLayer: build_config; camelCase mode names */
	case_parse(&c,
			   "{\"module\": \"keras\", \"class_name\": \"Sequential\", \"config\": {\"name\": \"s\", \"layers\": ["
			   "{\"module\": \"keras.layers\", \"class_name\": \"Dense\", \"config\": {\"name\": \"d\", \"units\": 4,"
			   " \"activation\": {\"module\": \"keras.activations\", \"class_name\": \"function\","
			   " \"config\": \"tanh\", \"registered_name\": \"function\"},"
			   " \"kernel_initializer\": {\"module\": \"keras.initializers\", \"class_name\": \"VarianceScaling\","
			   " \"config\": {\"scale\": 0.5, \"mode\": \"fanOut\", \"distribution\": \"untruncated_normal\","
			   " \"seed\": null}, \"registered_name\": null},"
			   " \"bias_initializer\": {\"class_name\": \"TruncatedNormal\","
			   " \"config\": {\"mean\": 0.1, \"stddev\": 0.2, \"seed\": -1}}},"
			   " \"registered_name\": null, \"build_config\": {\"input_shape\": [null, 6]}}]},"
			   " \"registered_name\": null}");
	case_ok(&c);
	l = &c.spec->layers[0];
	assert_shape(&c.spec->input_shape, 1, 6, 0, 0);
	assert_int_equal(l->activation, DL_ACT_TANH);
	assert_vs(&l->kernel_init, 0.5, DL_FAN_OUT, DL_DIST_UNTRUNCATED_NORMAL, false, 0);
	assert_int_equal(l->bias_init.kind, DL_INIT_TRUNCATED_NORMAL);
	assert_close(l->bias_init.mean, 0.1, 1e-12, 0);
	assert_close(l->bias_init.stddev, 0.2, 1e-12, 0);
	assert_true(l->bias_init.has_seed);
	assert_true(l->bias_init.seed == (uint64_t) -1);
	case_done(&c);

	/* aliases, int kernel_size, upper-case padding, null pooling strides, axis list */
	case_parse(&c,
			   "{\"class_name\": \"Sequential\", \"config\": ["
			   "{\"class_name\": \"Convolution2D\", \"config\": {\"name\": \"c\", \"filters\": 4,"
			   " \"kernel_size\": 5, \"strides\": 1, \"padding\": \"SAME\", \"dilation_rate\": 1,"
			   " \"data_format\": null, \"batch_input_shape\": [null, 10, 12, 2]}},"
			   "{\"class_name\": \"MaxPool2D\", \"config\": {\"name\": \"m\", \"pool_size\": [2, 3], \"strides\": null}},"
			   "{\"class_name\": \"AvgPool2D\", \"config\": {\"name\": \"a\", \"pool_size\": 1}},"
			   "{\"class_name\": \"GlobalAvgPool2D\", \"config\": {\"name\": \"g\"}},"
			   "{\"class_name\": \"BatchNormalization\", \"config\": {\"name\": \"b\", \"axis\": [1]}},"
			   "{\"class_name\": \"Dense\", \"config\": {\"name\": \"e\", \"units\": 2, \"activation\": \"elu\"}},"
			   "{\"class_name\": \"Activation\", \"config\": {\"name\": \"f\", \"activation\": \"softplus\"}},"
			   "{\"class_name\": \"Activation\", \"config\": {\"name\": \"h\", \"activation\": \"sigmoid\"}}]}");
	case_ok(&c);
	l = c.spec->layers;
	assert_int_equal(l[0].kind, DL_LAYER_CONV2D);
	assert_int_equal(l[0].kernel_size[0], 5);
	assert_int_equal(l[0].kernel_size[1], 5);
	assert_int_equal(l[0].padding, DL_PADDING_SAME);
	assert_shape(&l[0].out_shape, 3, 10, 12, 4);
	assert_int_equal(l[1].kind, DL_LAYER_MAXPOOL2D);
	assert_int_equal(l[1].strides[0], 2);
	assert_int_equal(l[1].strides[1], 3);
	assert_shape(&l[1].out_shape, 3, 5, 4, 4);
	assert_int_equal(l[2].kind, DL_LAYER_AVGPOOL2D);
	assert_int_equal(l[2].strides[0], 1);
	assert_int_equal(l[3].kind, DL_LAYER_GLOBALAVGPOOL2D);
	assert_int_equal(l[4].kind, DL_LAYER_BATCHNORM);
	assert_int_equal(l[5].activation, DL_ACT_ELU);
	assert_int_equal(l[6].activation, DL_ACT_SOFTPLUS);
	assert_int_equal(l[7].activation, DL_ACT_SIGMOID);
	assert_int_equal(c.spec->n_params, 5 * 5 * 2 * 4 + 4 + 16 + 10);
	case_done(&c);
}

/* Only len bytes are read; the text need not be NUL-terminated. */
static void
test_reads_only_len_bytes(void **state)
{
	static const char *const names[3] = {"dense_1", "dense_2", "dense_3"};
	size_t		len;
	char	   *text = read_fixture("k2_iris_mlp.json", &len);
	char	   *buf = malloc(len + 8);
	KerasCase	c;

	assert_non_null(buf);
	memcpy(buf, text, len);
	memcpy(buf + len, "garbage!", 8);
	case_parse_n(&c, buf, len, -1);
	case_ok(&c);
	check_iris(c.spec, names, DL_DIST_UNIFORM);
	case_done(&c);
	/* a length that counts the terminating NUL is accepted too */
	case_parse_n(&c, text, len + 1, -1);
	case_ok(&c);
	check_iris(c.spec, names, DL_DIST_UNIFORM);
	case_done(&c);
	free(buf);
	free(text);
}

/* ----------------------------------------------------------------------
 * Errors
 * ----------------------------------------------------------------------
 */

static void
test_error_malformed_json(void **state)
{
	KerasCase	c;
	size_t		len;
	char	   *text;

	case_fixture_with(&c, "tf2_fashion_mlp.json", "\"units\": 256,", "\"units\": 256,,");
	case_error(&c, DL_ERR_PARSE, "invalid model architecture json", "offset");

	/* truncated in the middle */
	text = read_fixture("k3_mnist_cnn.json", &len);
	case_parse_n(&c, text, len / 2, -1);
	case_error(&c, DL_ERR_PARSE, "unexpected end of input", NULL);
	assert_true(strlen(c.err.hint) > 0);
	free(text);

	case_parse(&c, "");
	case_error(&c, DL_ERR_PARSE, "unexpected end", NULL);
	case_parse(&c, "{\"class_name\": \"Sequential\", \"config\": []} extra");
	case_error(&c, DL_ERR_PARSE, "after the end", NULL);
	case_parse(&c, "[1, 2]");
	case_error(&c, DL_ERR_PARSE, "must be a json object", NULL);
	case_parse(&c, "{\"config\": []}");
	case_error(&c, DL_ERR_PARSE, "\"class_name\"", NULL);
	case_parse(&c, "{\"class_name\": \"Sequential\"}");
	case_error(&c, DL_ERR_PARSE, "\"config\"", NULL);
	case_parse(&c, "{\"class_name\": \"Sequential\", \"config\": [{\"class_name\": \"Dense\"}]}");
	case_error(&c, DL_ERR_PARSE, "layer 1", "\"config\"");
	case_parse(&c, "{\"class_name\": \"Sequential\", \"config\": [{\"config\": {\"units\": 1}}]}");
	case_error(&c, DL_ERR_PARSE, "layer 1", "\"class_name\"");
	case_fixture_with(&c, "k2_iris_mlp.json", "\"units\": 10, \"batch", "\"units\": \"ten\", \"batch");
	case_error(&c, DL_ERR_PARSE, "layer \"dense_1\": units must be an integer", "\"ten\"");
	case_fixture_with(&c, "k2_iris_mlp.json", "\"units\": 10, \"batch", "\"batch");
	case_error(&c, DL_ERR_PARSE, "layer \"dense_1\"", "\"units\"");
	/* Python writes NaN for a nan float; json-c reads it, we refuse it */
	case_fixture_with(&c, "k3_all_layers.json", "\"momentum\": 0.9", "\"momentum\": NaN");
	case_error(&c, DL_ERR_PARSE, "layer \"bn_a\": momentum must be a finite number", NULL);
	case_parse(&c, "{\"class_name\": \"MyModel\", \"config\": {}}");
	case_error(&c, DL_ERR_UNSUPPORTED, "\"MyModel\"", NULL);
}

static void
test_error_unknown_layer(void **state)
{
	KerasCase	c;

	case_parse(&c,
			   "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"sequential\", \"layers\": ["
			   "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 20, 8],"
			   " \"dtype\": \"float32\", \"sparse\": false, \"ragged\": false, \"name\": \"lstm_input\"}},"
			   "{\"class_name\": \"ConvLSTM1D\", \"config\": {\"name\": \"lstm\", \"trainable\": true,"
			   " \"dtype\": \"float32\", \"return_sequences\": false, \"filters\": 32}},"
			   "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"units\": 1}}]},"
			   " \"keras_version\": \"2.11.0\", \"backend\": \"tensorflow\"}");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"lstm\" has unsupported type \"ConvLSTM1D\"", NULL);
	assert_non_null(strstr(c.err.hint, "Conv2D"));

	case_fixture_with(&c, "k3_mnist_cnn.json", "\"class_name\": \"Flatten\"", "\"class_name\": \"ConvLSTM2D\"");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"flatten\"", "\"ConvLSTM2D\"");
}

static void
test_error_activation(void **state)
{
	KerasCase	c;

	/* selu, gelu and hard_sigmoid are read since issue 18: mish, relu6, hard_silu are not */
	case_fixture_with(&c, "tf2_fashion_mlp.json", "\"activation\": \"relu\"", "\"activation\": \"mish\"");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"dense\"", "\"mish\"");
	assert_non_null(strstr(c.err.hint, "softmax"));

	case_fixture_with(&c, "k3_fashion_mlp.json", "\"activation\": \"relu\"",
					  "\"activation\": {\"module\": \"keras.activations\", \"class_name\": \"function\","
					  " \"config\": \"relu6\", \"registered_name\": \"function\"}");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"dense\"", "\"relu6\"");

	case_fixture_with(&c, "k2_mnist_cnn.json", "\"activation\": \"softmax\"", "\"activation\": \"hard_silu\"");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"activation_1\"", "\"hard_silu\"");
}

static void
test_error_conv_attributes(void **state)
{
	KerasCase	c;

	/* dilation: read, and refused with strides, as Keras does */
	case_fixture_with(&c, "tf2_mnist_cnn.json", "\"dilation_rate\": [1, 1]", "\"dilation_rate\": [2, 3]");
	case_ok(&c);
	assert_int_equal(c.spec->layers[0].dilation[0], 2);
	assert_int_equal(c.spec->layers[0].dilation[1], 3);
	assert_shape(&c.spec->layers[0].out_shape, 3, 24, 22, 32);
	case_done(&c);
	case_fixture_with(&c, "tf2_mnist_cnn.json",
					  "\"strides\": [1, 1], \"padding\": \"valid\", \"data_format\": \"channels_last\", \"dilation_rate\": [1, 1]",
					  "\"strides\": [2, 1], \"padding\": \"valid\", \"data_format\": \"channels_last\", \"dilation_rate\": [2, 2]");
	case_error(&c, DL_ERR_INVALID_ARGUMENT, "layer \"conv2d\": dilation_rate (2, 2) with strides (2, 1)", NULL);

	case_fixture_with(&c, "k2_mnist_cnn.json", "\"data_format\": \"channels_last\"",
					  "\"data_format\": \"channels_first\"");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"conv2d_1\"", "data_format \"channels_first\"");

	case_fixture_with(&c, "k3_mnist_cnn.json", "\"groups\": 1", "\"groups\": 2");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"conv2d\"", "groups 2");

	case_fixture_with(&c, "tf2_mnist_cnn.json", "\"padding\": \"valid\"", "\"padding\": \"causal\"");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"conv2d\"", "padding \"causal\"");

	case_fixture_with(&c, "tf2_mnist_cnn.json", "\"kernel_size\": [3, 3]", "\"kernel_size\": [0, 3]");
	case_error(&c, DL_ERR_INVALID_ARGUMENT, "layer \"conv2d\"", "kernel_size (0, 3)");

	/* a pooling layer's data_format */
	case_fixture_with(&c, "tf2_mnist_cnn.json", "\"strides\": [2, 2], \"data_format\": \"channels_last\"",
					  "\"strides\": [2, 2], \"data_format\": \"channels_first\"");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"max_pooling2d\"", "channels_first");

	case_fixture_with(&c, "tf2_all_layers.json", "\"keepdims\": false", "\"keepdims\": true");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"gap\"", "keepdims true");
}

static void
test_error_batchnorm(void **state)
{
	KerasCase	c;

	/* axis 1 (height) of a rank-3 input */
	case_fixture_with(&c, "k3_all_layers.json", "\"axis\": -1", "\"axis\": 1");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"bn_a\": axis 1", "-1 or 3");
	case_fixture_with(&c, "tf2_all_layers.json", "\"axis\": [3]", "\"axis\": [1, 2]");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"bn_a\"", "axis (1, 2)");

	case_fixture_with(&c, "k3_all_layers.json", "\"synchronized\": false",
					  "\"synchronized\": false, \"renorm\": true");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"bn_a\"", "renorm true");

	case_fixture_with(&c, "k2_all_layers.json", "\"gamma_regularizer\": null",
					  "\"gamma_regularizer\": {\"class_name\": \"L1L2\", \"config\": {\"l1\": 0.0, \"l2\": 0.01}}");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"bn_a\"", "gamma_regularizer L1L2");
}

static void
test_error_input_shape(void **state)
{
	KerasCase	c;

	case_fixture_with(&c, "k2_iris_mlp.json", "\"batch_input_shape\": [null, 4], ", "");
	case_error(&c, DL_ERR_SHAPE, "no input shape", NULL);
	assert_true(strlen(c.err.hint) > 0);

	case_fixture_with(&c, "k3_mnist_cnn.json", "\"batch_shape\": [null, 28, 28, 1]",
					  "\"batch_shape\": [null, null, 28, 1]");
	case_error(&c, DL_ERR_SHAPE, "layer \"input_layer\"", "null");

	case_fixture_with(&c, "tf2_fashion_mlp.json", "\"batch_input_shape\": [null, 784]",
					  "\"batch_input_shape\": [null, 2, 2, 2, 2, 49]");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"dense_input\"", "5 dimensions");

	case_fixture_with(&c, "tf2_fashion_mlp.json", "\"batch_input_shape\": [null, 784]",
					  "\"batch_input_shape\": [null]");
	case_error(&c, DL_ERR_SHAPE, "layer \"dense_input\"", "no dimensions");

	/* layers that do not fit: Conv2D on a rank-1 input, from finalize */
	case_fixture_with(&c, "k2_mnist_cnn.json", "\"batch_input_shape\": [null, 28, 28, 1]",
					  "\"batch_input_shape\": [null, 784]");
	case_error(&c, DL_ERR_SHAPE, "layer \"conv2d_1\"", "rank 3");
}

static void
test_error_initializers_and_constraints(void **state)
{
	KerasCase	c;

	case_fixture_with(&c, "tf2_fashion_mlp.json", "\"GlorotUniform\"", "\"Identity\"");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"dense\": kernel_initializer \"Identity\"", NULL);
	assert_non_null(strstr(c.err.hint, "HeNormal"));

	case_fixture_with(&c, "k2_all_layers.json", "\"distribution\": \"normal\"",
					  "\"distribution\": \"laplace\"");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"conv_a\"", "distribution \"laplace\"");

	case_fixture_with(&c, "tf2_fashion_mlp.json", "\"kernel_constraint\": null",
					  "\"kernel_constraint\": {\"class_name\": \"MaxNorm\", \"config\": {\"max_value\": 2, \"axis\": 0}}");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"dense\": kernel_constraint MaxNorm is not supported", NULL);

	case_fixture_with(&c, "k2_iris_mlp.json", "\"activity_regularizer\": null",
					  "\"activity_regularizer\": {\"class_name\": \"L1L2\", \"config\": {\"l1\": 0.01, \"l2\": 0.0}}");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"dense_1\"", "activity_regularizer");

	case_fixture_with(&c, "tf2_fashion_mlp.json", "\"class_name\": \"L2\"",
					  "\"class_name\": \"OrthogonalRegularizer\"");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"dense\"", "\"OrthogonalRegularizer\"");

	case_fixture_with(&c, "k3_fashion_mlp.json", "\"noise_shape\": null", "\"noise_shape\": [null, 1]");
	case_error(&c, DL_ERR_UNSUPPORTED, "layer \"dropout\"", "noise_shape");
}

static void
test_error_too_many_layers(void **state)
{
	const int	n = DL_MAX_LAYERS + 10;
	const char *head = "{\"class_name\": \"Sequential\", \"config\": [{\"class_name\": \"Dense\", "
		"\"config\": {\"name\": \"d\", \"units\": 2, \"batch_input_shape\": [null, 2]}}";
	const char *layer = ", {\"class_name\": \"Dropout\", \"config\": {\"rate\": 0.1}}";
	char	   *text = malloc(strlen(head) + (size_t) n * strlen(layer) + 8);
	KerasCase	c;

	assert_non_null(text);
	strcpy(text, head);
	for (int i = 0; i < n; i++)
		strcat(text, layer);
	strcat(text, "]}");
	case_parse(&c, text);
	case_error(&c, DL_ERR_LIMIT, "more than the limit", NULL);
	free(text);
}

/* Every allocation failing in turn gives DL_ERR_NO_MEMORY and no leak. */
static void
test_out_of_memory(void **state)
{
	static const char *const files[2] = {"tf2_functional_iris.json", "k3_all_layers.json"};

	for (int f = 0; f < 2; f++)
	{
		size_t		len;
		char	   *text = read_fixture(files[f], &len);
		KerasCase	c;
		int64_t		total;

		case_parse_n(&c, text, len, -1);
		case_ok(&c);
		total = c.counter.total;
		case_done(&c);
		assert_true(total >= 2);
		for (int64_t i = 0; i < total; i++)
		{
			case_parse_n(&c, text, len, i);
			case_error(&c, DL_ERR_NO_MEMORY, NULL, NULL);
		}
		free(text);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_k2_iris_mlp),
		cmocka_unit_test(test_tfjs_iris_mlp),
		cmocka_unit_test(test_tfjs_model_json_wrapper),
		cmocka_unit_test(test_functional_k2),
		cmocka_unit_test(test_functional_tf2),
		cmocka_unit_test(test_functional_k3),
		cmocka_unit_test(test_functional_follows_chain),
		cmocka_unit_test(test_functional_branching),
		cmocka_unit_test(test_functional_graph_refused),
		cmocka_unit_test(test_tf2_fashion_mlp),
		cmocka_unit_test(test_k3_fashion_mlp),
		cmocka_unit_test(test_mnist_cnn_dialects),
		cmocka_unit_test(test_all_layers_dialects),
		cmocka_unit_test(test_spellings),
		cmocka_unit_test(test_reads_only_len_bytes),
		cmocka_unit_test(test_error_malformed_json),
		cmocka_unit_test(test_error_unknown_layer),
		cmocka_unit_test(test_error_activation),
		cmocka_unit_test(test_error_conv_attributes),
		cmocka_unit_test(test_error_batchnorm),
		cmocka_unit_test(test_error_input_shape),
		cmocka_unit_test(test_error_initializers_and_constraints),
		cmocka_unit_test(test_error_too_many_layers),
		cmocka_unit_test(test_out_of_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
