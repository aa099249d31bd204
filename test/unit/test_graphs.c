/*-------------------------------------------------------------------------
 *
 * test_graphs.c
 *	  Unit tests: functional models that are graphs, against TensorFlow.js
 *	  and PyTorch, their gradients, their memory and their plan.
 *
 * The fixture tfjs_graphs.json is made by gen_graphs.js (next to it):
 * TensorFlow.js builds functional models (residual blocks, two inputs,
 * two outputs, each merge it has, ZeroPadding2D, Cropping2D,
 * UpSampling2D, GlobalMaxPooling2D, dilated Conv2D), sets fixed initial
 * weights, predicts, and takes two full-batch training steps with SGD and
 * with Adam.  The engine reads the same JSON, sets the same weights, and
 * must predict the same within FX_PRED_TOL and train to the same weights
 * within FX_STEP_TOL.  torch_graphs.json (gen_graphs_torch.py) does the same
 * for what TF.js lacks: Subtract and the training of dilated
 * convolutions.
 *
 * tfjs_nested.json (gen_nested.js) holds nested models (a model used as
 * a layer: Sequential([base, Dense]), a functional model calling a
 * Sequential sub-model, two levels): the reader inlines them into one
 * flat model whose weights are in Keras' get_weights() order.
 *
 * Whole-model gradients of graphs (merges, a tensor read twice, two
 * inputs, two weighted outputs, the new layers) are compared with
 * central finite differences of the loss computed in double from float
 * forward passes, as test_model.c does for chains.
 *
 * IDENTIFICATION
 *	  test/unit/test_graphs.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_cases.h"
#include "madlib_dl/dl_epoch.h"
#include "model_impl.h"

static void
test_tfjs_fixture(void **state)
{
	fx_check_fixture("tfjs_graphs.json", "TF.js");
}

static void
test_torch_fixture(void **state)
{
	fx_check_fixture("torch_graphs.json", "PyTorch");
}

static void
test_fixture_gradients(void **state)
{
	fx_check_fixture_gradients("tfjs_graphs.json");
	fx_check_fixture_gradients("torch_graphs.json");
}

/* Parse json (one input, one output); the status, *spec on success. */
static DlStatus
nested_parse(const char *json, const DlAllocator *a, DlModelSpec **spec, DlError *err)
{
	dl_error_clear(err);
	*spec = NULL;
	return dl_keras_parse(json, strlen(json), a, spec, err);
}

#define NEST_IN "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 4], \"name\": \"in\"}}"
#define NEST_DENSE(n, u) "{\"class_name\": \"Dense\", \"config\": {\"name\": \"" n "\", \"units\": " #u "}}"

/* A Sequential model holding models nested depth deep (m0 .. m<depth-1>) around one Dense. */
static void
nested_deep(char *buf, size_t size, int depth)
{
	snprintf(buf, size, "{\"class_name\": \"Sequential\", \"config\": {\"layers\": [" NEST_IN);
	for (int d = 0; d < depth; d++)
		snprintf(buf + strlen(buf), size - strlen(buf),
				 "%s{\"class_name\": \"Sequential\", \"config\": {\"name\": \"m%d\", \"layers\": [",
				 d == 0 ? ", " : "", d);
	snprintf(buf + strlen(buf), size - strlen(buf), "%s", NEST_DENSE("d", 2));
	for (int d = 0; d < depth; d++)
		snprintf(buf + strlen(buf), size - strlen(buf), "]}}");
	snprintf(buf + strlen(buf), size - strlen(buf), "]}}");
}

/*
 * Nested models: TF.js' predictions and training steps; the flat layer
 * list; a frozen base; names that collide; nesting too deep.
 */
static void
test_tfjs_nested(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlModelSpec *spec;
	DlError		err;
	char	   *text = read_fixture("tfjs_nested.json", NULL);
	json_object *root = json_tokener_parse(text);
	static const char *const want[][4] = {
		{"b_dense1", "b_dense2", "head", NULL},
		{"h", "s1", "s2", "skip"},
		{"i1", "m1", "o", NULL},
	};
	char		deep[4096];

	fx_check_fixture("tfjs_nested.json", "TF.js");
	assert_non_null(root);
	for (size_t i = 0; i < 3; i++)
	{
		json_object *cs = json_object_array_get_idx(json_object_object_get(root, "cases"), i);
		const char *arch = json_object_to_json_string(json_object_object_get(cs, "model_arch"));

		if (nested_parse(arch, &a, &spec, &err) != DL_OK)
			fail_msg("case %zu: %s", i, err.msg);
		for (int k = 0; k < 4 && want[i][k] != NULL; k++)
			assert_string_equal(spec->layers[k].name, want[i][k]);
		assert_int_equal(spec->n_inputs, 1);
		dl_model_spec_free(spec, &a);
	}
	json_object_put(root);
	free(text);

	/* a frozen base: its layers are not trained */
	assert_int_equal(nested_parse("{\"class_name\": \"Sequential\", \"config\": {\"layers\": [" NEST_IN ", "
								  "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"base\", \"trainable\": false, "
								  "\"layers\": [" NEST_DENSE("d1", 3) "]}}, " NEST_DENSE("d2", 2) "]}}",
								  &a, &spec, &err), DL_OK);
	assert_int_equal(spec->n_layers, 2);
	assert_string_equal(spec->layers[0].name, "d1");
	assert_false(spec->layers[0].trainable);
	assert_true(spec->layers[1].trainable);
	dl_model_spec_free(spec, &a);

	/* a nested model of two outputs, read as its node 1 (Keras' numbering) */
	if (nested_parse("{\"class_name\": \"Model\", \"config\": {\"name\": \"m\", \"layers\": ["
					 "{\"class_name\": \"InputLayer\", \"name\": \"x\", \"config\": {\"batch_input_shape\": [null, 4]}, "
					 "\"inbound_nodes\": []}, "
					 "{\"class_name\": \"Functional\", \"name\": \"sub\", \"config\": {\"name\": \"sub\", \"layers\": ["
					 "{\"class_name\": \"InputLayer\", \"name\": \"a\", \"config\": {\"batch_input_shape\": [null, 4]}, "
					 "\"inbound_nodes\": []}, "
					 "{\"class_name\": \"Dense\", \"name\": \"d1\", \"config\": {\"units\": 3}, \"inbound_nodes\": [[[\"a\", 0, 0, {}]]]}, "
					 "{\"class_name\": \"Dense\", \"name\": \"d2\", \"config\": {\"units\": 3}, \"inbound_nodes\": [[[\"a\", 0, 0, {}]]]}], "
					 "\"input_layers\": [[\"a\", 0, 0]], \"output_layers\": [[\"d1\", 0, 0], [\"d2\", 0, 0]]}, "
					 "\"inbound_nodes\": [[[\"x\", 0, 0, {}]]]}, "
					 "{\"class_name\": \"Add\", \"name\": \"sum\", \"config\": {}, "
					 "\"inbound_nodes\": [[[\"sub\", 1, 1, {}], [\"sub\", 1, 0, {}]]]}], "
					 "\"input_layers\": [[\"x\", 0, 0]], \"output_layers\": [[\"sum\", 0, 0]]}}",
					 &a, &spec, &err) != DL_OK)
		fail_msg("%s", err.msg);
	assert_int_equal(spec->n_layers, 3);
	assert_string_equal(spec->layers[0].name, "d1");
	assert_string_equal(spec->layers[1].name, "d2");
	assert_int_equal(spec->layers[0].in[0], -1);
	assert_int_equal(spec->layers[2].n_in, 2);
	assert_int_equal(spec->layers[2].in[0], 1);
	assert_int_equal(spec->layers[2].in[1], 0);
	dl_model_spec_free(spec, &a);

	/* an inner layer named as an outer one */
	assert_int_equal(nested_parse("{\"class_name\": \"Sequential\", \"config\": {\"name\": \"outer\", \"layers\": [" NEST_IN ", "
								  "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"base\", "
								  "\"layers\": [" NEST_DENSE("d", 3) "]}}, " NEST_DENSE("d", 2) "]}}",
								  &a, &spec, &err), DL_ERR_UNSUPPORTED);
	assert_null(spec);
	assert_non_null(strstr(err.msg, "layer \"d\" of model \"base\" and layer \"d\" of model \"outer\" have the same name"));

	/* nine models deep */
	nested_deep(deep, sizeof(deep), 9);
	if (nested_parse(deep, &a, &spec, &err) != DL_ERR_UNSUPPORTED)
		fail_msg("%s", err.msg);
	assert_string_equal(err.msg, "layer \"m8\" is a model nested more than 8 deep");
	/* eight deep is taken */
	nested_deep(deep, sizeof(deep), 8);
	if (nested_parse(deep, &a, &spec, &err) != DL_OK)
		fail_msg("%s", err.msg);
	assert_int_equal(spec->n_layers, 1);
	dl_model_spec_free(spec, &a);
	assert_no_leaks(&c);
}

/* ---------------------------------------------------------------------
 * Hand-written graphs, in the TF.js (tf.keras 2) dialect
 * --------------------------------------------------------------------- */

#define FN_HEAD(name) "{\"class_name\": \"Model\", \"config\": {\"name\": \"" name "\", \"layers\": ["
#define FN_TAIL(ins, outs) "], \"input_layers\": " ins ", \"output_layers\": " outs "}}"
#define FN_INPUT(name, shape) "{\"class_name\": \"InputLayer\", \"name\": \"" name "\", \"config\": " \
	"{\"name\": \"" name "\", \"batch_input_shape\": [null, " shape "]}, \"inbound_nodes\": []}"
#define FN_INPUT_NEXT(name, shape) ", " FN_INPUT(name, shape)
#define FN_LAYER(cls, name, cfg, inbound) ", {\"class_name\": \"" cls "\", \"name\": \"" name "\", " \
	"\"config\": {\"name\": \"" name "\"" cfg "}, \"inbound_nodes\": [[" inbound "]]}"
#define REF(name) "[\"" name "\", 0, 0, {}]"
#define DENSE(name, units, act, inbound) FN_LAYER("Dense", name, ", \"units\": " units ", \"activation\": \"" act "\"", inbound)
#define CONV(name, filters, act, inbound) FN_LAYER("Conv2D", name, ", \"filters\": " filters \
	", \"kernel_size\": [3, 3], \"padding\": \"same\", \"activation\": \"" act "\"", inbound)

static DlModelSpec *
parse_graph(const char *json, const DlAllocator *a)
{
	DlModelSpec *spec;
	DlError		err;

	if (dl_keras_parse_multi_io(json, strlen(json), a, &spec, &err) != DL_OK)
		fail_msg("parse: %s", err.msg);
	return spec;
}

/* A FxCase for spec with random weights and data (B samples). */
static void
case_random(FxCase *g, const char *name, const char *json, int64_t B, const DlLossKind *losses,
			const double *weights, uint64_t seed)
{
	DlRng		r;

	memset(g, 0, sizeof(*g));
	g->name = name;
	g->alloc = test_allocator(&g->counter);
	g->spec = parse_graph(json, &g->alloc);
	g->n = B;
	g->n_in = g->spec->n_inputs;
	g->n_out = g->spec->n_outputs;
	g->P = g->spec->n_params;
	dl_rng_seed(&r, seed);
	g->w0 = malloc(sizeof(float) * (g->P > 0 ? g->P : 1));
	for (size_t i = 0; i < g->P; i++)
		g->w0[i] = (float) (0.6 * dl_rng_uniform(&r) - 0.3);
	for (int k = 0; k < g->n_in; k++)
	{
		int64_t		n = B * dl_shape_size(&g->spec->input_shapes[k]);

		g->x[k] = malloc(sizeof(float) * (size_t) n);
		for (int64_t i = 0; i < n; i++)
			g->x[k][i] = (float) (2 * dl_rng_uniform(&r) - 1);
	}
	for (int k = 0; k < g->n_out; k++)
	{
		int64_t		K = dl_shape_size(&g->spec->output_shapes[k]);

		g->out_cfg[k].loss = losses[k];
		g->out_cfg[k].loss_weight = weights[k];
		g->y[k] = malloc(sizeof(float) * (size_t) (B * K));
		for (int64_t b = 0; b < B; b++)
			for (int64_t j = 0; j < K; j++)
				g->y[k][b * K + j] = losses[k] == DL_LOSS_CATEGORICAL_CROSSENTROPY ?
					(j == b % K ? 1.0f : 0.0f) : (float) (2 * dl_rng_uniform(&r) - 1);
		g->pred_len[k] = (size_t) (B * K);
		g->pred[k] = malloc(sizeof(float) * g->pred_len[k]);
	}
}

/* A tensor read twice, by one layer or by two: its gradient is the sum. */
static void
test_tensor_read_twice(void **state)
{
	static const char *const graphs[][2] = {
		{"add_self", FN_HEAD("a") FN_INPUT("x", "4") DENSE("d", "5", "tanh", REF("x"))
			FN_LAYER("Add", "twice", "", REF("d") ", " REF("d"))
		DENSE("head", "3", "softmax", REF("twice")) FN_TAIL("[[\"x\", 0, 0]]", "[[\"head\", 0, 0]]")},
		{"multiply_self", FN_HEAD("m") FN_INPUT("x", "4") DENSE("d", "5", "tanh", REF("x"))
			FN_LAYER("Multiply", "sq", "", REF("d") ", " REF("d") ", " REF("d"))
		DENSE("head", "3", "softmax", REF("sq")) FN_TAIL("[[\"x\", 0, 0]]", "[[\"head\", 0, 0]]")},
		{"concat_self", FN_HEAD("c") FN_INPUT("x", "4") DENSE("d", "5", "tanh", REF("x"))
			FN_LAYER("Concatenate", "cat", "", REF("d") ", " REF("x") ", " REF("d"))
		DENSE("head", "3", "softmax", REF("cat")) FN_TAIL("[[\"x\", 0, 0]]", "[[\"head\", 0, 0]]")},
		/* d read by a Flatten (in place) and a Dense, and by the output */
		{"fan_out", FN_HEAD("f") FN_INPUT("x", "4") DENSE("d", "6", "tanh", REF("x"))
			FN_LAYER("Flatten", "fl", "", REF("d"))
			DENSE("e", "6", "tanh", REF("d"))
			FN_LAYER("Subtract", "s", "", REF("fl") ", " REF("e"))
			FN_LAYER("Activation", "a", ", \"activation\": \"tanh\"", REF("d"))
			FN_LAYER("Average", "avg", "", REF("s") ", " REF("a") ", " REF("d"))
		DENSE("head", "3", "softmax", REF("avg"))
		FN_TAIL("[[\"x\", 0, 0]]", "[[\"head\", 0, 0], [\"d\", 0, 0]]")},
	};
	static const DlLossKind losses[2] = {DL_LOSS_CATEGORICAL_CROSSENTROPY, DL_LOSS_MEAN_SQUARED_ERROR};
	static const double weights[2] = {1.0, 0.3};

	for (int q = 0; q < 4; q++)
	{
		FxCase	g;
		int			kinks;
		double		e;

		case_random(&g, graphs[q][0], graphs[q][1], 5, losses, weights, 60 + q);
		e = fx_gradcheck(&g, &kinks);
		print_message("gradient check %-18s: relative L2 error %.2e\n", g.name, e);
		if (!(e < FX_GRAD_TOL))
			fail_msg("%s: relative L2 gradient error %g >= %g", g.name, e, FX_GRAD_TOL);
		fx_case_free(&g);
	}
}

/* Append a layer of class cls reading the tensors of layers a and b (b may be NULL). */
static size_t
append_layer(char *json, size_t cap, size_t len, const char *cls, const char *name,
			 const char *cfg, const char *a, const char *b)
{
	len += (size_t) snprintf(json + len, cap - len,
							 ", {\"class_name\": \"%s\", \"name\": \"%s\", \"config\": {\"name\": \"%s\"%s}, "
							 "\"inbound_nodes\": [[[\"%s\", 0, 0, {}]%s%s%s]]}",
							 cls, name, name, cfg, a, b != NULL ? ", [\"" : "", b != NULL ? b : "",
							 b != NULL ? "\", 0, 0, {}]" : "");
	assert_true(len < cap);
	return len;
}

/*
 * n residual blocks at 16x16x8 (Conv, Conv, Add with the block's input,
 * ReLU), or the same layers without the Adds (a chain).
 */
static char *
resnet_json(int n, bool residual)
{
	static const char conv_relu[] = ", \"filters\": 8, \"kernel_size\": [3, 3], \"padding\": \"same\", "
		"\"activation\": \"relu\"";
	static const char conv_lin[] = ", \"filters\": 8, \"kernel_size\": [3, 3], \"padding\": \"same\"";
	static const char relu[] = ", \"activation\": \"relu\"";
	size_t		cap = 4096 + (size_t) n * 2048;
	char	   *json = malloc(cap);
	char		prev[32] = "stem";
	size_t		len;

	len = (size_t) snprintf(json, cap, "%s", FN_HEAD("r") FN_INPUT("x", "16, 16, 3"));
	len = append_layer(json, cap, len, "Conv2D", "stem", conv_relu, "x", NULL);
	for (int i = 0; i < n; i++)
	{
		char		ca[16],
					cb[16],
					add[16],
					r[16];

		snprintf(ca, sizeof(ca), "c%da", i);
		snprintf(cb, sizeof(cb), "c%db", i);
		snprintf(add, sizeof(add), "add%d", i);
		snprintf(r, sizeof(r), "r%d", i);
		len = append_layer(json, cap, len, "Conv2D", ca, conv_relu, prev, NULL);
		len = append_layer(json, cap, len, "Conv2D", cb, conv_lin, ca, NULL);
		if (residual)
		{
			len = append_layer(json, cap, len, "Add", add, "", cb, prev);
			len = append_layer(json, cap, len, "Activation", r, relu, add, NULL);
		}
		else
			len = append_layer(json, cap, len, "Activation", r, relu, cb, NULL);
		snprintf(prev, sizeof(prev), "%s", r);
	}
	len = append_layer(json, cap, len, "GlobalAveragePooling2D", "gap", "", prev, NULL);
	len = append_layer(json, cap, len, "Dense", "head", ", \"units\": 10, \"activation\": \"softmax\"",
					   "gap", NULL);
	snprintf(json + len, cap - len, "%s", FN_TAIL("[[\"x\", 0, 0]]", "[[\"head\", 0, 0]]"));
	return json;
}

/*
 * A ResNet's memory stays close to the chain of the same layers: in
 * inference a few buffers in turn (not one per layer), in training one
 * more gradient buffer for the shortcut; and what the model allocates
 * stays within the estimate.
 */
static void
test_resnet_memory(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	char	   *rj = resnet_json(6, true);
	char	   *cj = resnet_json(6, false);
	DlModelSpec *res = parse_graph(rj, &a);
	DlModelSpec *chain = parse_graph(cj, &a);
	size_t		tensor = 16 * 16 * 8;	/* floats of one activation per sample */
	DlOptimConfig o;
	DlMemoryUse use;
	DlMemoryEstimate er,
				ec;
	DlError		err;

	assert_false(res->is_chain);
	assert_true(chain->is_chain);
	print_message("6 residual blocks, floats per sample: inference arena %zu (chain %zu), "
				  "training arena %zu (chain %zu), gradients %zu (chain %zu); one tensor %zu\n",
				  res->ws_infer, chain->ws_infer, res->ws_train, chain->ws_train,
				  res->ws_grad, chain->ws_grad, tensor);
	/*
	 * inference: the chain takes two buffers in turn, the ResNet three
	 * (the shortcut's); training: the outputs the backward pass reads (the
	 * Adds' it does not); gradients: two buffers in turn and the small
	 * ones of the head, one more for the shortcut
	 */
	assert_true(chain->ws_infer <= 2 * tensor);
	assert_true(res->ws_infer <= 3 * tensor);
	assert_true(res->ws_train <= chain->ws_train);
	assert_true(chain->ws_grad <= 2 * tensor + 64);
	assert_true(res->ws_grad <= 3 * tensor + 64);
	/* every output kept, as before plans: 2 + 5 per block, of one tensor each */
	assert_true(res->ws_train < (2 + 5 * 6) * tensor);

	/* what a training model allocates stays within the estimate */
	dl_optim_config_default(&o, DL_OPTIM_ADAM);
	use.optim = &o;
	use.batch_size = 8;
	assert_int_equal(dl_model_memory_estimate(res, &use, &er, &err), DL_OK);
	assert_int_equal(dl_model_memory_estimate(chain, &use, &ec, &err), DL_OK);
	print_message("batch 8, Adam: activations %.0f bytes (chain %.0f), total %.0f (chain %.0f)\n",
				  er.activations, ec.activations, er.total, ec.total);
	assert_true(er.activations <= 1.5 * ec.activations);
	{
		TestAllocCounter mc;
		DlAllocator ma = test_allocator(&mc);
		DlModel    *m;
		DlTrainConfig cfg;
		float	   *x = calloc(8 * 16 * 16 * 3, sizeof(float));
		float	   *y = calloc(8 * 10, sizeof(float));
		DlBatchStats st;

		memset(&cfg, 0, sizeof(cfg));
		memset(&st, 0, sizeof(st));
		cfg.loss = DL_LOSS_CATEGORICAL_CROSSENTROPY;
		cfg.batch_size = 8;
		for (int b = 0; b < 8; b++)
			y[b * 10 + b] = 1.0f;
		for (int i = 0; i < 8 * 16 * 16 * 3; i++)
			x[i] = (float) ((i * 37) % 101) / 50.0f - 1.0f;
		assert_int_equal(dl_model_create(res, &o, &ma, &m, &err), DL_OK);
		assert_int_equal(dl_model_init_weights(m, 3, &err), DL_OK);
		assert_int_equal(dl_model_train_batch(m, &cfg, x, y, 8, &st, &err), DL_OK);
		dl_model_free(m);
		print_message("batch 8, Adam: peak %zu bytes allocated, estimate %.0f\n", mc.bytes_peak, er.total);
		assert_true((double) mc.bytes_peak <= er.total);
		assert_no_leaks(&mc);
		free(x);
		free(y);
	}
	dl_model_spec_free(res, &a);
	dl_model_spec_free(chain, &a);
	assert_no_leaks(&c);
	free(rj);
	free(cj);
}

/*
 * Reused buffers do not leak into results: a training model's forward
 * in inference mode (its plan keeps more) and an inference model's give
 * the same bits, batch by batch or all at once.
 */
static void
test_plans_agree(void **state)
{
	char	   *text = read_fixture("tfjs_graphs.json", NULL);
	json_object *root = json_tokener_parse(text);
	json_object *cases = fx_member(root, "cases");

	for (size_t i = 0; i < json_object_array_length(cases); i++)
	{
		FxCase	g;
		DlModel    *infer,
				   *train;
		DlOptimConfig o;
		DlError		err;
		float	   *a[DL_MAX_IO],
				   *b[DL_MAX_IO];

		fx_case_read(&g, json_object_array_get_idx(cases, i), "model_arch");
		dl_optim_config_default(&o, DL_OPTIM_SGD);
		assert_int_equal(dl_model_create(g.spec, NULL, &g.alloc, &infer, &err), DL_OK);
		assert_int_equal(dl_model_create(g.spec, &o, &g.alloc, &train, &err), DL_OK);
		assert_int_equal(dl_model_set_params(infer, g.w0, g.P, &err), DL_OK);
		assert_int_equal(dl_model_set_params(train, g.w0, g.P, &err), DL_OK);
		for (int k = 0; k < g.n_out; k++)
		{
			a[k] = malloc(sizeof(float) * g.pred_len[k]);
			b[k] = malloc(sizeof(float) * g.pred_len[k]);
		}
		assert_int_equal(dl_model_predict_io(infer, a, (const float *const *) g.x, g.n, 1, &err), DL_OK);
		assert_int_equal(dl_model_predict_io(train, b, (const float *const *) g.x, g.n, 1, &err), DL_OK);
		for (int k = 0; k < g.n_out; k++)
			if (memcmp(a[k], b[k], sizeof(float) * g.pred_len[k]) != 0)
				fail_msg("%s: the training model predicts other bits than the inference model", g.name);
		assert_int_equal(dl_model_predict_io(infer, b, (const float *const *) g.x, g.n, g.n, &err),
						 DL_OK);
		for (int k = 0; k < g.n_out; k++)
		{
			if (fx_max_abs_diff(a[k], b[k], g.pred_len[k]) > 1e-6)
				fail_msg("%s: batches of 1 and of %lld predict differently", g.name, (long long) g.n);
			free(a[k]);
			free(b[k]);
		}
		dl_model_free(infer);
		dl_model_free(train);
		fx_case_free(&g);
	}
	json_object_put(root);
	free(text);
}

/*
 * The engine API of several inputs and outputs: the one-buffer functions
 * refuse such a model, class_weight is for one output, an output with
 * nothing trainable behind it has a loss but no gradient, and evaluation
 * gives each output's loss.
 */
static void
test_multi_io_api(void **state)
{
	static const char json[] =
		FN_HEAD("two") FN_INPUT("a", "3") FN_INPUT_NEXT("b", "2")
		DENSE("da", "4", "tanh", REF("a"))
		FN_LAYER("Concatenate", "cat", "", REF("da") ", " REF("b"))
		DENSE("cls", "3", "softmax", REF("cat"))
		FN_LAYER("Dense", "frozen", ", \"units\": 2, \"trainable\": false", REF("b"))
		FN_TAIL("[[\"a\", 0, 0], [\"b\", 0, 0]]", "[[\"cls\", 0, 0], [\"frozen\", 0, 0]]");
	static const DlLossKind losses[2] = {DL_LOSS_CATEGORICAL_CROSSENTROPY, DL_LOSS_MEAN_SQUARED_ERROR};
	static const double weights[2] = {1.0, 2.0};
	FxCase	g;
	DlModel    *m;
	DlOptimConfig o;
	DlTrainConfig cfg;
	DlBatchStats st,
				ev;
	DlError		err;
	float		cw[3] = {1, 1, 1};
	float		frozen_before[6];

	case_random(&g, "two_by_two", json, 4, losses, weights, 70);
	dl_optim_config_default(&o, DL_OPTIM_SGD);
	assert_int_equal(dl_model_create(g.spec, &o, &g.alloc, &m, &err), DL_OK);
	assert_int_equal(dl_model_set_params(m, g.w0, g.P, &err), DL_OK);
	memset(&cfg, 0, sizeof(cfg));
	cfg.batch_size = 4;
	cfg.outputs = g.out_cfg;

	assert_int_equal(dl_model_train_batch(m, &cfg, g.x[0], g.y[0], 4, NULL, &err),
					 DL_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err.msg, "2 inputs and 2 outputs"));
	assert_int_equal(dl_model_predict(m, g.pred[0], g.x[0], 4, 4, &err), DL_ERR_INVALID_ARGUMENT);

	cfg.class_weight = cw;
	cfg.n_class_weight = 3;
	assert_int_equal(dl_model_train_batch_io(m, &cfg, (const float *const *) g.x,
											 (const float *const *) g.y, 4, NULL, &err),
					 DL_ERR_UNSUPPORTED);
	cfg.class_weight = NULL;
	cfg.n_class_weight = 0;

	/* the frozen head: no gradient buffer, weights unchanged */
	assert_null(dl_model_output_grad(m, 1));
	memcpy(frozen_before, dl_model_params(m) + g.spec->layers[3].param_offset, sizeof(frozen_before));
	memset(&st, 0, sizeof(st));
	assert_int_equal(dl_model_train_batch_io(m, &cfg, (const float *const *) g.x,
											 (const float *const *) g.y, 4, &st, &err), DL_OK);
	assert_memory_equal(frozen_before, dl_model_params(m) + g.spec->layers[3].param_offset,
						sizeof(frozen_before));
	assert_close(st.loss_sum, st.output_loss_sum[0] + 2.0 * st.output_loss_sum[1], 1e-12, 0);
	assert_true(st.output_loss_sum[1] > 0);

	/* evaluation: the same losses as training's, before its step */
	memset(&ev, 0, sizeof(ev));
	assert_int_equal(dl_model_set_params(m, g.w0, g.P, &err), DL_OK);
	assert_int_equal(dl_model_evaluate_io(m, &cfg, (const float *const *) g.x,
										  (const float *const *) g.y, 4, &ev, &err), DL_OK);
	assert_close(ev.output_loss_sum[0], st.output_loss_sum[0], 1e-6, 0);
	assert_close(ev.output_loss_sum[1], st.output_loss_sum[1], 1e-6, 0);
	assert_close(ev.loss_sum, st.loss_sum, 1e-6, 0);
	assert_int_equal(ev.n, 4);
	dl_model_free(m);
	fx_case_free(&g);
}

/*
 * An epoch of a model of several inputs or outputs (the one shuffle,
 * dl_epoch.h): its batches are the rows of the window's permutation, each
 * row's inputs and outputs together, as the same rows stepped through
 * dl_model_train_batch_io by hand give.  Were an input or a label
 * permuted apart from the others, the weights would differ.
 */
static void
epoch_io_case(json_object *c)
{
	FxCase	g;
	DlOptimConfig oc;
	DlTrainConfig cfg;
	DlModel    *m1,
			   *m2;
	DlRng		rng;
	DlError		err;
	DlBatchStats s1,
				s2;
	int64_t    *perm;
	float	   *bx[DL_MAX_IO];
	float	   *by[DL_MAX_IO];
	int64_t		yw[DL_MAX_IO];
	DlRows		run;

	fx_case_read(&g, c, "model_arch");
	dl_optim_config_default(&oc, DL_OPTIM_ADAM);
	memset(&cfg, 0, sizeof(cfg));
	cfg.loss = g.out_cfg[0].loss;
	cfg.batch_size = 2;
	cfg.shuffle = true;
	cfg.outputs = g.out_cfg;
	assert_int_equal(dl_model_create(g.spec, &oc, &g.alloc, &m1, &err), DL_OK);
	assert_int_equal(dl_model_create(g.spec, &oc, &g.alloc, &m2, &err), DL_OK);
	assert_int_equal(dl_model_set_params(m1, g.w0, g.P, &err), DL_OK);
	assert_int_equal(dl_model_set_params(m2, g.w0, g.P, &err), DL_OK);
	dl_model_seed_rng(m1, 99);
	dl_model_seed_rng(m2, 99);

	/* the rows fit one block: no block draws, one permutation of the window */
	rng = *dl_model_rng(m1);
	perm = malloc(sizeof(int64_t) * g.n);
	for (int64_t i = 0; i < g.n; i++)
		perm[i] = i;
	dl_rng_shuffle_i64(&rng, perm, g.n);
	memset(&s1, 0, sizeof(s1));
	if (dl_model_train_epoch_io(m1, &cfg, (const float *const *) g.x, (const float *const *) g.y,
								g.n, &s1, &err) != DL_OK)
		fail_msg("%s: epoch: %s", g.name, err.msg);

	memset(&s2, 0, sizeof(s2));
	for (int k = 0; k < g.n_in; k++)
		bx[k] = malloc(sizeof(float) * 2 * dl_shape_size(&g.spec->input_shapes[k]));
	for (int k = 0; k < g.n_out; k++)
	{
		yw[k] = dl_shape_size(&g.spec->output_shapes[k]);
		by[k] = malloc(sizeof(float) * 2 * yw[k]);
	}
	for (int64_t b = 0; b < g.n; b += 2)
	{
		int64_t		B = g.n - b < 2 ? g.n - b : 2;

		for (int64_t r = 0; r < B; r++)
		{
			for (int k = 0; k < g.n_in; k++)
			{
				int64_t		w = dl_shape_size(&g.spec->input_shapes[k]);

				memcpy(bx[k] + r * w, g.x[k] + perm[b + r] * w, sizeof(float) * w);
			}
			for (int k = 0; k < g.n_out; k++)
				memcpy(by[k] + r * yw[k], g.y[k] + perm[b + r] * yw[k], sizeof(float) * yw[k]);
		}
		assert_int_equal(dl_model_train_batch_io(m2, &cfg, (const float *const *) bx,
												 (const float *const *) by, B, &s2, &err), DL_OK);
	}
	assert_memory_equal(dl_model_params(m1), dl_model_params(m2), sizeof(float) * g.P);
	assert_memory_equal(&s1.loss_sum, &s2.loss_sum, sizeof(double));
	assert_memory_equal(s1.output_loss_sum, s2.output_loss_sum, sizeof(double) * g.n_out);
	assert_int_equal(s1.n, g.n);
	print_message("epoch of %s: %lld rows in batches of 2, shuffled, the same bytes as by hand\n",
				  g.name, (long long) g.n);

	/* a window run of one array for a model of several: refused */
	{
		DlPass		p;

		memset(&run, 0, sizeof(run));
		run.x = g.x[0];
		run.y = g.y[0];
		run.n = 1;
		run.y_width = yw[0];
		assert_int_equal(dl_pass_begin(&p, m1, &cfg, true, 1, NULL, &err), DL_OK);
		assert_int_equal(dl_pass_window(&p, &run, 1, &err), DL_ERR_INVALID_ARGUMENT);
		assert_non_null(strstr(err.msg, "one array for a model of"));
	}
	for (int k = 0; k < g.n_in; k++)
		free(bx[k]);
	for (int k = 0; k < g.n_out; k++)
		free(by[k]);
	free(perm);
	dl_model_free(m1);
	dl_model_free(m2);
	fx_case_free(&g);
}

static void
test_epoch_io(void **state)
{
	char	   *text = read_fixture("tfjs_graphs.json", NULL);
	json_object *root = json_tokener_parse(text);
	json_object *cases = fx_member(root, "cases");
	int			done = 0;

	for (size_t i = 0; i < json_object_array_length(cases); i++)
	{
		json_object *c = json_object_array_get_idx(cases, i);
		const char *name = json_object_get_string(fx_member(c, "name"));

		if (strcmp(name, "two_inputs") == 0 || strcmp(name, "two_outputs") == 0)
		{
			epoch_io_case(c);
			done++;
		}
	}
	assert_int_equal(done, 2);
	json_object_put(root);
	free(text);
}

/*
 * Hand-built specs: finalize writes out a chain's defaults and refuses
 * graphs that are not well formed, naming the layer.
 */
static void
test_finalize_graphs(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlModelSpec *s = dl_model_spec_create(3, &a, NULL);
	DlError		err;

	s->input_shape.rank = 1;
	s->input_shape.dims[0] = 4;
	for (int i = 0; i < 3; i++)
	{
		dl_layer_defaults(&s->layers[i], DL_LAYER_DENSE);
		snprintf(s->layers[i].name, DL_NAME_MAX, "d%d", i);
		s->layers[i].units = 4;
	}
	/* a chain by default: each layer reads the one before, the last is the output */
	assert_int_equal(dl_model_spec_finalize(s, &err), DL_OK);
	assert_true(s->is_chain);
	assert_int_equal(s->n_outputs, 1);
	assert_int_equal(s->outputs[0], 2);
	assert_int_equal(s->layers[0].in[0], -1);
	assert_int_equal(s->layers[2].in[0], 1);

	/* a layer reading a later one (a cycle, or a dangling tensor) */
	s->layers[1].in[0] = 2;
	assert_int_equal(dl_model_spec_finalize(s, &err), DL_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err.msg, "layer \"d1\""));
	s->layers[1].in[0] = -2;	/* input 1 of a model of one */
	assert_int_equal(dl_model_spec_finalize(s, &err), DL_ERR_INVALID_ARGUMENT);
	s->layers[1].in[0] = 0;

	/* two inputs to a Dense; a merge of one; too many */
	s->layers[2].n_in = 2;
	s->layers[2].in[1] = 0;
	assert_int_equal(dl_model_spec_finalize(s, &err), DL_ERR_SHAPE);
	assert_non_null(strstr(err.msg, "takes one input"));
	dl_layer_defaults(&s->layers[2], DL_LAYER_ADD);
	snprintf(s->layers[2].name, DL_NAME_MAX, "add");
	s->layers[2].n_in = 1;
	s->layers[2].in[0] = 1;
	assert_int_equal(dl_model_spec_finalize(s, &err), DL_ERR_SHAPE);
	assert_non_null(strstr(err.msg, "needs at least 2 inputs"));
	s->layers[2].n_in = DL_MAX_FAN_IN + 1;
	assert_int_equal(dl_model_spec_finalize(s, &err), DL_ERR_LIMIT);
	s->layers[2].n_in = 2;
	s->layers[2].in[1] = 0;
	assert_int_equal(dl_model_spec_finalize(s, &err), DL_OK);
	assert_false(s->is_chain);
	assert_int_equal(s->layers[0].plan.n_consumers, 2);

	/* Concatenate on an axis the inputs lack */
	s->layers[2].kind = DL_LAYER_CONCATENATE;
	s->layers[2].concat_axis = 1;
	assert_int_equal(dl_model_spec_finalize(s, &err), DL_ERR_INVALID_ARGUMENT);
	s->layers[2].concat_axis = -1;
	assert_int_equal(dl_model_spec_finalize(s, &err), DL_OK);
	assert_int_equal(s->output_shape.dims[0], 8);

	/* outputs named twice, or past the layers; too many layers */
	s->n_outputs = 2;
	s->outputs[0] = s->outputs[1] = 2;
	assert_int_equal(dl_model_spec_finalize(s, &err), DL_ERR_UNSUPPORTED);
	s->outputs[1] = 3;
	assert_int_equal(dl_model_spec_finalize(s, &err), DL_ERR_INVALID_ARGUMENT);
	s->n_outputs = 1;
	s->n_layers = DL_MAX_LAYERS + 1;
	assert_int_equal(dl_model_spec_finalize(s, &err), DL_ERR_LIMIT);
	s->n_layers = 3;
	dl_model_spec_free(s, &a);
	assert_no_leaks(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_gradients),
		cmocka_unit_test(test_tfjs_fixture),
		cmocka_unit_test(test_torch_fixture),
		cmocka_unit_test(test_tfjs_nested),
		cmocka_unit_test(test_tensor_read_twice),
		cmocka_unit_test(test_resnet_memory),
		cmocka_unit_test(test_plans_agree),
		cmocka_unit_test(test_multi_io_api),
		cmocka_unit_test(test_epoch_io),
		cmocka_unit_test(test_finalize_graphs),
	};

	return cmocka_run_group_tests_name("graphs", tests, NULL, NULL);
}
