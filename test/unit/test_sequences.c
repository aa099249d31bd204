/*-------------------------------------------------------------------------
 *
 * test_sequences.c
 *	  Unit tests: the layers of text and sequences (issue 18) in whole
 *	  models, against TensorFlow.js and PyTorch, their gradients through
 *	  time, bad Embedding ids, and the memory of recurrent models.
 *
 * tfjs_sequences.json (gen_sequences.js) holds TF.js models of every new
 * layer TF.js has: Embedding with LSTM and with Conv1D, stacked and
 * backward LSTMs, GRU (reset_after false), SimpleRNN, Bidirectional with
 * each merge, Conv1D and the 1-D poolings, DepthwiseConv2D,
 * SeparableConv2D, LayerNormalization, ReLU(max_value), LeakyReLU,
 * PReLU, Reshape, Permute, RepeatVector and the new activations;
 * torch_sequences.json (gen_sequences_torch.py) what TF.js lacks: GRU
 * with reset_after (PyTorch's nn.GRU), causal and dilated Conv1D, the
 * exponential activation and ReLU's negative_slope and threshold.  Each
 * must predict within 1e-5 and train two full-batch steps within 2e-4
 * (fixture_cases.c); every fixture model's gradient is checked against
 * finite differences of its whole loss.
 *
 * IDENTIFICATION
 *	  test/unit/test_sequences.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_cases.h"
#include "model_impl.h"

static void
test_tfjs_fixture(void **state)
{
	fx_check_fixture("tfjs_sequences.json", "TF.js");
}

static void
test_torch_fixture(void **state)
{
	fx_check_fixture("torch_sequences.json", "PyTorch");
}

static void
test_fixture_gradients(void **state)
{
	fx_check_fixture_gradients("tfjs_sequences.json");
	fx_check_fixture_gradients("torch_sequences.json");
}

/* ---------------------------------------------------------------------
 * Token ids
 * --------------------------------------------------------------------- */

#define SEQ(shape, layers) "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"m\", \"layers\": [" \
	"{\"class_name\": \"InputLayer\", \"config\": {\"name\": \"x\", \"batch_input_shape\": [null, " shape "]}}" \
	layers "]}}"
#define LAYER(cls, name, cfg) ", {\"class_name\": \"" cls "\", \"config\": {\"name\": \"" name "\"" cfg "}}"

static const char emb_json[] =
SEQ("4", LAYER("Embedding", "emb", ", \"input_dim\": 5, \"output_dim\": 2")
	LAYER("Flatten", "f", "") LAYER("Dense", "d", ", \"units\": 2, \"activation\": \"softmax\""));

/* An id out of range, negative, not an integer or NaN fails the pass, naming it. */
static void
test_bad_ids(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlModelSpec *spec;
	DlModel    *m;
	DlOptimConfig o;
	DlTrainConfig cfg;
	DlError		err;
	float		x[8] = {0, 1, 2, 3, 4, 4, 0, 1};
	float		y[4] = {1, 0, 0, 1};
	float		out[4];
	float		w0[14];
	static const float bad[] = {5.0f, -1.0f, 2.5f, NAN, 1e30f};
	static const char *const shown[] = {"id 5 ", "id -1 ", "id 2.5 ", "id nan ", "id 1.00000002e+30 "};
	int64_t		row;

	assert_int_equal(dl_keras_parse(emb_json, strlen(emb_json), &a, &spec, &err), DL_OK);
	assert_true(dl_model_spec_reads_ids(spec, 0));
	dl_optim_config_default(&o, DL_OPTIM_SGD);
	assert_int_equal(dl_model_create(spec, &o, &a, &m, &err), DL_OK);
	assert_int_equal(dl_model_init_weights(m, 5, &err), DL_OK);
	memcpy(w0, dl_model_params(m), sizeof(w0));
	memset(&cfg, 0, sizeof(cfg));
	cfg.loss = DL_LOSS_CATEGORICAL_CROSSENTROPY;
	cfg.batch_size = 2;

	/* every id from 0 to input_dim - 1 is good */
	assert_int_equal(dl_model_predict(m, out, x, 2, 2, &err), DL_OK);
	assert_int_equal(dl_model_check_ids(spec, 0, x, 2, &row, &err), DL_OK);
	assert_int_equal(row, -1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		x[6] = bad[i];			/* sample 2, position 3 */
		assert_int_equal(dl_model_predict(m, out, x, 2, 2, &err), DL_ERR_DATA);
		assert_non_null(strstr(err.msg, "layer \"emb\" (Embedding): sample 2 of the batch holds"));
		if (strstr(err.msg, shown[i]) == NULL || strstr(err.msg, "at position 3, not an integer in [0, 5)") == NULL)
			fail_msg("message \"%s\" does not name %s at position 3", err.msg, shown[i]);
		assert_true(err.hint[0] != '\0');

		/* a training step fails too, before its optimizer step */
		assert_int_equal(dl_model_train_batch(m, &cfg, x, y, 2, NULL, &err), DL_ERR_DATA);
		assert_memory_equal(dl_model_params(m), w0, sizeof(w0));

		/* the check callers make first names the row */
		assert_int_equal(dl_model_check_ids(spec, 0, x, 2, &row, &err), DL_ERR_DATA);
		assert_int_equal(row, 1);
		if (strstr(err.msg, shown[i]) == NULL ||
			strstr(err.msg, "at position 3 is not an integer in [0, 5) (layer \"emb\", Embedding)") == NULL)
			fail_msg("message \"%s\" does not name %s at position 3", err.msg, shown[i]);
	}
	/* the model is not stuck: good ids again */
	x[6] = 4.0f;
	assert_int_equal(dl_model_train_batch(m, &cfg, x, y, 2, NULL, &err), DL_OK);
	dl_model_free(m);
	dl_model_spec_free(spec, &a);

	/* ids that reach the Embedding through another layer: its forward pass checks */
	{
		static const char json[] =
			SEQ("2, 2", LAYER("Reshape", "r", ", \"target_shape\": [4]")
				LAYER("Embedding", "emb2", ", \"input_dim\": 3, \"output_dim\": 2")
				LAYER("GlobalAveragePooling1D", "g", ""));
		float		ids[4] = {0, 1, 2, 3};
		float		o2[2];

		assert_int_equal(dl_keras_parse(json, strlen(json), &a, &spec, &err), DL_OK);
		assert_false(dl_model_spec_reads_ids(spec, 0));
		assert_int_equal(dl_model_check_ids(spec, 0, ids, 1, &row, &err), DL_OK);
		assert_int_equal(dl_model_create(spec, NULL, &a, &m, &err), DL_OK);
		assert_int_equal(dl_model_predict(m, o2, ids, 1, 1, &err), DL_ERR_DATA);
		assert_non_null(strstr(err.msg, "layer \"emb2\""));
		assert_non_null(strstr(err.msg, "id 3 at position 4"));
		dl_model_free(m);
		dl_model_spec_free(spec, &a);
	}
	assert_no_leaks(&c);
}

/* ---------------------------------------------------------------------
 * The reader: attributes read, and refused by name
 * --------------------------------------------------------------------- */

/* Parse json: DL_OK, or code with a message holding want (a refusal with a hint). */
static DlModelSpec *
parse_expect(const char *json, DlStatus code, const char *want, DlAllocator *a)
{
	DlModelSpec *spec = NULL;
	DlError		err;
	DlStatus	st = dl_keras_parse(json, strlen(json), a, &spec, &err);

	if (st != code)
		fail_msg("expected %s, got %s (%s) for %s", dl_status_name(code), dl_status_name(st),
				 st != DL_OK ? err.msg : "", json);
	if (code == DL_OK)
		return spec;
	assert_null(spec);
	if (strstr(err.msg, want) == NULL)
		fail_msg("message \"%s\" does not contain \"%s\"", err.msg, want);
	if (code == DL_ERR_UNSUPPORTED && err.hint[0] == '\0')
		fail_msg("message \"%s\" has no hint", err.msg);
	return NULL;
}

#define LSTM(cfg) SEQ("5, 3", LAYER("LSTM", "lstm", ", \"units\": 4" cfg))
#define BIDI(cfg, inner) SEQ("5, 3", ", {\"class_name\": \"Bidirectional\", \"config\": {\"name\": \"bi\"" cfg \
	", \"layer\": {\"class_name\": \"" inner "\", \"config\": {\"name\": \"in\", \"units\": 2}}}}")

static void
test_reader_refusals(void **state)
{
	static const struct
	{
		const char *json;
		DlStatus	code;
		const char *want;
	}			cases[] = {
		{SEQ("4", LAYER("Embedding", "e", ", \"input_dim\": 9, \"output_dim\": 2, \"mask_zero\": true")),
		DL_ERR_UNSUPPORTED, "layer \"e\": mask_zero true is not supported"},
		{SEQ("4", LAYER("Embedding", "e", ", \"input_dim\": 9, \"output_dim\": 2, \"embeddings_constraint\": \"NonNeg\"")),
		DL_ERR_UNSUPPORTED, "embeddings_constraint"},
		{SEQ("4", LAYER("Embedding", "e", ", \"output_dim\": 2")), DL_ERR_PARSE, "has no \"input_dim\""},
		{SEQ("4", LAYER("Embedding", "e", ", \"input_dim\": 0, \"output_dim\": 2")), DL_ERR_INVALID_ARGUMENT, "input_dim 0"},
		{LSTM(", \"dropout\": 0.2"), DL_ERR_UNSUPPORTED, "layer \"lstm\": dropout 0.2 is not supported"},
		{LSTM(", \"recurrent_dropout\": 0.1"), DL_ERR_UNSUPPORTED, "recurrent_dropout 0.1"},
		{LSTM(", \"return_state\": true"), DL_ERR_UNSUPPORTED, "return_state true"},
		{LSTM(", \"stateful\": true"), DL_ERR_UNSUPPORTED, "stateful true"},
		{LSTM(", \"time_major\": true"), DL_ERR_UNSUPPORTED, "time_major true"},
		{LSTM(", \"recurrent_constraint\": \"NonNeg\""), DL_ERR_UNSUPPORTED, "recurrent_constraint"},
		{LSTM(", \"activation\": \"swish\""), DL_ERR_UNSUPPORTED, "layer \"lstm\" (LSTM): activation \"swish\""},
		{LSTM(", \"recurrent_activation\": \"softmax\""), DL_ERR_UNSUPPORTED, "recurrent_activation \"softmax\""},
		{LSTM(", \"recurrent_activation\": \"mish\""), DL_ERR_UNSUPPORTED, "unsupported recurrent_activation \"mish\""},
		{SEQ("5", LAYER("LSTM", "lstm", ", \"units\": 4")), DL_ERR_SHAPE, "needs an input of rank 2"},
		{BIDI(", \"merge_mode\": null", "LSTM"), DL_ERR_UNSUPPORTED, "merge_mode null is not supported"},
		{BIDI(", \"merge_mode\": \"max\"", "GRU"), DL_ERR_UNSUPPORTED, "merge_mode \"max\""},
		{BIDI("", "Dense"), DL_ERR_UNSUPPORTED, "layer \"bi\" (Bidirectional): layer \"Dense\" is not supported"},
		{BIDI(", \"backward_layer\": {\"class_name\": \"GRU\", \"config\": {\"name\": \"b\", \"units\": 2, \"go_backwards\": true}}", "LSTM"),
		DL_ERR_UNSUPPORTED, "backward_layer"},
		{BIDI(", \"backward_layer\": {\"class_name\": \"LSTM\", \"config\": {\"name\": \"b\", \"units\": 3, \"go_backwards\": true}}", "LSTM"),
		DL_ERR_UNSUPPORTED, "backward_layer"},
		{SEQ("5, 3", LAYER("Conv1D", "c", ", \"filters\": 2, \"kernel_size\": 2, \"groups\": 3")), DL_ERR_UNSUPPORTED, "groups 3"},
		{SEQ("5, 3", LAYER("Conv1D", "c", ", \"filters\": 2, \"kernel_size\": [2, 2]")), DL_ERR_PARSE, "kernel_size must be an integer or a list of one integer"},
		{SEQ("5, 3", LAYER("Conv1D", "c", ", \"filters\": 2, \"kernel_size\": 2, \"strides\": 2, \"dilation_rate\": 2")),
		DL_ERR_INVALID_ARGUMENT, "dilation_rate (1, 2) with strides (1, 2)"},
		{SEQ("5, 3", LAYER("Conv1D", "c", ", \"filters\": 2, \"kernel_size\": 2, \"data_format\": \"channels_first\"")), DL_ERR_UNSUPPORTED, "channels_first"},
		{SEQ("5, 5, 3", LAYER("Conv2D", "c", ", \"filters\": 2, \"kernel_size\": 2, \"padding\": \"causal\"")), DL_ERR_UNSUPPORTED, "padding \"causal\""},
		{SEQ("5, 5, 3", LAYER("DepthwiseConv2D", "c", ", \"kernel_size\": 2, \"padding\": \"causal\"")), DL_ERR_UNSUPPORTED, "padding \"causal\""},
		{SEQ("5, 5, 3", LAYER("DepthwiseConv2D", "c", ", \"kernel_size\": 2, \"depthwise_constraint\": \"NonNeg\"")), DL_ERR_UNSUPPORTED, "depthwise_constraint"},
		{SEQ("5, 5, 3", LAYER("SeparableConv2D", "c", ", \"kernel_size\": 2")), DL_ERR_PARSE, "has no \"filters\""},
		{SEQ("5, 3", LAYER("GlobalMaxPooling1D", "g", ", \"keepdims\": true")), DL_ERR_UNSUPPORTED, "keepdims true"},
		{SEQ("5, 3", LAYER("LayerNormalization", "n", ", \"axis\": 1")), DL_ERR_UNSUPPORTED, "axis 1 is not supported"},
		{SEQ("5, 3", LAYER("LayerNormalization", "n", ", \"rms_scaling\": true")), DL_ERR_UNSUPPORTED, "rms_scaling true"},
		{SEQ("5, 3", LAYER("LayerNormalization", "n", ", \"gamma_regularizer\": \"l2\"")), DL_ERR_UNSUPPORTED, "gamma_regularizer"},
		{SEQ("5, 3", LAYER("PReLU", "p", ", \"shared_axes\": [3]")), DL_ERR_UNSUPPORTED, "shared_axes (3)"},
		{SEQ("6", LAYER("Reshape", "r", ", \"target_shape\": [4, -1]")), DL_ERR_SHAPE, "an input of shape (6) cannot become (4, -1)"},
		{SEQ("6", LAYER("Reshape", "r", ", \"target_shape\": [-1, -1, 6]")), DL_ERR_INVALID_ARGUMENT, "target_shape dimension 2"},
		{SEQ("2, 3", LAYER("Permute", "p", ", \"dims\": [1, 1]")), DL_ERR_INVALID_ARGUMENT, "not a permutation"},
		{SEQ("2, 3", LAYER("Permute", "p", ", \"dims\": [2, 1, 3]")), DL_ERR_INVALID_ARGUMENT, "dims has more axes than its input's 2"},
		{SEQ("2, 3", LAYER("RepeatVector", "r", ", \"n\": 2")), DL_ERR_SHAPE, "needs an input of rank 1"},
		{SEQ("4", LAYER("Dense", "d", ", \"units\": 2, \"activation\": \"relu6\"")), DL_ERR_UNSUPPORTED, "unsupported activation \"relu6\""},
		{SEQ("4", LAYER("ThresholdedReLU", "t", "")), DL_ERR_UNSUPPORTED, "unsupported type \"ThresholdedReLU\""},
		{SEQ("5, 3", LAYER("ConvLSTM1D", "c", "")), DL_ERR_UNSUPPORTED, "unsupported type \"ConvLSTM1D\""},
		{SEQ("5, 3", LAYER("Attention", "a", "")), DL_ERR_UNSUPPORTED, "unsupported type \"Attention\""},
	};
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		parse_expect(cases[i].json, cases[i].code, cases[i].want, &a);
	assert_no_leaks(&c);
}

/* What the reader takes: dialects, defaults, the forms of each attribute. */
static void
test_reader_attributes(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlModelSpec *s;

	/* hard_sigmoid: clip(0.2 x + 0.5) but in Keras 3's dialect, TF.js' spelling */
	s = parse_expect(SEQ("5, 3", LAYER("GRU", "g", ", \"units\": 2, \"recurrent_activation\": \"hard_sigmoid\", \"activation\": \"hardSigmoid\"")),
					 DL_OK, NULL, &a);
	assert_int_equal(s->layers[0].recurrent_activation, DL_ACT_HARD_SIGMOID);
	assert_int_equal(s->layers[0].activation, DL_ACT_HARD_SIGMOID);
	assert_false(s->layers[0].reset_after);	/* absent: Keras 2.2's and TF.js' GRU */
	assert_int_equal(s->layers[0].out_shape.rank, 1);
	dl_model_spec_free(s, &a);
	s = parse_expect("{\"module\": \"keras\", \"class_name\": \"Sequential\", \"config\": {\"name\": \"m\", "
					 "\"layers\": [{\"module\": \"keras.layers\", \"class_name\": \"InputLayer\", \"config\": "
					 "{\"name\": \"x\", \"batch_shape\": [null, 5, 3]}}, {\"module\": \"keras.layers\", "
					 "\"class_name\": \"GRU\", \"config\": {\"name\": \"g\", \"units\": 2, \"reset_after\": true, "
					 "\"recurrent_activation\": \"hard_sigmoid\", \"return_sequences\": true}}]}}", DL_OK, NULL, &a);
	assert_int_equal(s->layers[0].recurrent_activation, DL_ACT_HARD_SIGMOID_K3);
	assert_true(s->layers[0].reset_after);
	assert_int_equal(s->layers[0].out_shape.rank, 2);
	/* bias (2, 3U) */
	assert_int_equal(s->n_params, 3 * 6 + 2 * 6 + 2 * 6);
	dl_model_spec_free(s, &a);

	/* LSTM: unit_forget_bias true by default, null (TF.js) false */
	s = parse_expect(LSTM(""), DL_OK, NULL, &a);
	assert_true(s->layers[0].unit_forget_bias);
	assert_int_equal(s->layers[0].recurrent_activation, DL_ACT_SIGMOID);
	assert_int_equal(s->layers[0].activation, DL_ACT_TANH);
	assert_int_equal(s->layers[0].recurrent_init.kind, DL_INIT_ORTHOGONAL);
	dl_model_spec_free(s, &a);
	s = parse_expect(LSTM(", \"unit_forget_bias\": null, \"dropout\": 0, \"implementation\": 2, \"unroll\": true"),
					 DL_OK, NULL, &a);
	assert_false(s->layers[0].unit_forget_bias);
	dl_model_spec_free(s, &a);

	/* Bidirectional: concat by default, twice the parameters */
	s = parse_expect(BIDI("", "SimpleRNN"), DL_OK, NULL, &a);
	assert_int_equal(s->layers[0].kind, DL_LAYER_SIMPLERNN);
	assert_int_equal(s->layers[0].bidir, DL_BIDIR_CONCAT);
	assert_string_equal(s->layers[0].name, "bi");
	assert_int_equal(s->output_shape.dims[0], 4);
	assert_int_equal(s->n_params, 2 * (3 * 2 + 2 * 2 + 2));
	dl_model_spec_free(s, &a);

	/* Conv1D: causal, dilation; an integer or a list of one */
	s = parse_expect(SEQ("7, 3", LAYER("Conv1D", "c", ", \"filters\": 2, \"kernel_size\": [3], \"padding\": \"causal\", \"dilation_rate\": 2")),
					 DL_OK, NULL, &a);
	assert_int_equal(s->layers[0].padding, DL_PADDING_CAUSAL);
	assert_int_equal(s->output_shape.dims[0], 7);
	assert_int_equal(s->n_params, 3 * 3 * 2 + 2);
	dl_model_spec_free(s, &a);

	/* ReLU with arguments, LeakyReLU (alpha or negative_slope), a plain ReLU */
	s = parse_expect(SEQ("4", LAYER("LeakyReLU", "l", "") LAYER("LeakyReLU", "k", ", \"negative_slope\": 0.1")
						 LAYER("ReLU", "r", ", \"max_value\": 6") LAYER("ReLU", "p", ", \"max_value\": null")),
					 DL_OK, NULL, &a);
	assert_int_equal(s->layers[0].kind, DL_LAYER_RELU);
	assert_true(s->layers[0].negative_slope == 0.3);
	assert_true(s->layers[1].negative_slope == 0.1);
	assert_true(s->layers[2].has_max_value && s->layers[2].max_value == 6.0);
	assert_int_equal(s->layers[3].kind, DL_LAYER_ACTIVATION);
	assert_int_equal(s->layers[3].activation, DL_ACT_RELU);
	dl_model_spec_free(s, &a);

	/* PReLU: alpha of the input's shape, shared axes of size 1 */
	s = parse_expect(SEQ("3, 4, 5", LAYER("PReLU", "p", ", \"shared_axes\": [1, 3]")), DL_OK, NULL, &a);
	assert_int_equal(s->n_params, 4);
	dl_model_spec_free(s, &a);

	/* Reshape's -1, Permute, RepeatVector */
	s = parse_expect(SEQ("6", LAYER("Reshape", "r", ", \"target_shape\": [-1, 2]") LAYER("Permute", "p", ", \"dims\": [2, 1]")
						 LAYER("Flatten", "f", "") LAYER("RepeatVector", "v", ", \"n\": 3")), DL_OK, NULL, &a);
	assert_int_equal(s->layers[0].out_shape.dims[0], 3);
	assert_int_equal(s->layers[1].out_shape.dims[0], 2);
	assert_int_equal(s->layers[1].out_shape.dims[1], 3);
	assert_int_equal(s->output_shape.dims[0], 3);
	assert_int_equal(s->output_shape.dims[1], 6);
	dl_model_spec_free(s, &a);
	assert_no_leaks(&c);
}

/*
 * The initializers of the new layers: the recurrent kernels orthogonal
 * (rows of Uk (U, 4U) orthonormal), the LSTM's forget bias 1, the
 * embeddings uniform in [-0.05, 0.05], PReLU's alpha 0.
 */
static void
test_initializers(void **state)
{
	static const char json[] =
		SEQ("6", LAYER("Embedding", "e", ", \"input_dim\": 9, \"output_dim\": 5")
			LAYER("LSTM", "l", ", \"units\": 4, \"return_sequences\": true")
			LAYER("Dense", "d", ", \"units\": 12, \"kernel_initializer\": {\"class_name\": \"Orthogonal\", \"config\": {\"gain\": 2.0}}")
			LAYER("PReLU", "p", ""));
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlModelSpec *s = parse_expect(json, DL_OK, NULL, &a);
	DlModel    *m;
	DlError		err;
	const float *p;
	const DlLayer *lstm = &s->layers[1];
	const DlLayer *dense = &s->layers[2];

	assert_int_equal(dl_model_create(s, NULL, &a, &m, &err), DL_OK);
	assert_int_equal(dl_model_init_weights(m, 11, &err), DL_OK);
	p = dl_model_params(m);
	for (int64_t i = 0; i < 9 * 5; i++)
		assert_true(fabsf(p[i]) <= 0.05f);
	{
		const float *R = p + lstm->param_offset + 5 * 16;	/* (4, 16) */
		const float *b = R + 4 * 16;

		for (int i = 0; i < 4; i++)
			for (int j = 0; j < 4; j++)
			{
				double		dot = 0.0;

				for (int k = 0; k < 16; k++)
					dot += (double) R[i * 16 + k] * R[j * 16 + k];
				assert_close(dot, i == j ? 1.0 : 0.0, 0, 1e-5);
			}
		for (int u = 0; u < 16; u++)
			assert_true(b[u] == (u >= 4 && u < 8 ? 1.0f : 0.0f));
	}
	{
		/* Dense (4, 12), orthogonal with gain 2: orthogonal rows of norm 2 */
		const float *W = p + dense->param_offset;

		for (int i = 0; i < 4; i++)
			for (int j = 0; j < 4; j++)
			{
				double		dot = 0.0;

				for (int k = 0; k < 12; k++)
					dot += (double) W[i * 12 + k] * W[j * 12 + k];
				assert_close(dot, i == j ? 4.0 : 0.0, 0, 1e-5);
			}
	}
	for (size_t i = 0; i < s->layers[3].n_params; i++)
		assert_true(p[s->layers[3].param_offset + i] == 0.0f);
	dl_model_free(m);
	dl_model_spec_free(s, &a);
	assert_no_leaks(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tfjs_fixture),
		cmocka_unit_test(test_torch_fixture),
		cmocka_unit_test(test_fixture_gradients),
		cmocka_unit_test(test_bad_ids),
		cmocka_unit_test(test_reader_refusals),
		cmocka_unit_test(test_reader_attributes),
		cmocka_unit_test(test_initializers),
	};

	return cmocka_run_group_tests_name("sequences", tests, NULL, NULL);
}
