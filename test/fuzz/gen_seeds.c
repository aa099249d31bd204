/*-------------------------------------------------------------------------
 *
 * gen_seeds.c
 *	  Write the seed inputs of the fuzz corpora that are not copied from
 *	  fixtures: MADlib parameter strings, valid model state blobs and flat
 *	  weights for the blob target's fixed architectures, packed buffers,
 *	  and functional models that are graphs: the architectures of the
 *	  graph fixtures, and hostile ones (cycles, dangling references, shape
 *	  mismatches at merges, huge fan-in, shared layers, deep graphs); and
 *	  the records of decoded Keras files (the server's child's output).
 *
 * Usage: gen_seeds DIR [FIXTURES [KERAS_FILES]]   (writes DIR/fuzz_params,
 * DIR/fuzz_grid, DIR/fuzz_blob, DIR/fuzz_buffer, DIR/fuzz_keras and
 * DIR/fuzz_keras_file, which must exist; FIXTURES, default
 * ../unit/fixtures, holds tfjs_graphs.json, torch_graphs.json,
 * tfjs_sequences.json and torch_sequences.json; KERAS_FILES, default
 * ../data/keras_files.sql, the Keras model files whose decoding records
 * dl_keras_file_encode writes as fuzz_keras_file's seeds).
 * gen_seeds --hdf5 DIR KERAS_FILES writes only the legacy .h5 files of
 * KERAS_FILES into DIR/fuzz_keras_file_hdf5 (make explore-hdf5).  Test
 * code: prints and exits.
 *
 * IDENTIFICATION
 *	  test/fuzz/gen_seeds.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "fuzz_util.h"
#include "fuzz_blob_archs.h"
#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_keras.h"
#include "madlib_dl/dl_keras_file.h"
#include "madlib_dl/dl_model.h"

static const char *dir;
static int	n_written;

static void
write_seed(const char *target, const char *name, const void *data, size_t len)
{
	char		path[1024];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s/seed_%s", dir, target, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0)
	{
		fprintf(stderr, "gen_seeds: cannot write %s\n", path);
		exit(1);
	}
	n_written++;
}

static const char *const param_seeds[] = {
	/* MADlib documentation and user examples */
	"loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']",
	"loss='categorical_crossentropy', optimizer='SGD(lr=0.01, momentum=0.9, nesterov=True)', metrics=['accuracy']",
	"loss='mse', optimizer='RMSprop(lr=0.001, rho=0.9, epsilon=None, decay=0.0)', metrics=['mae']",
	"optimizer=SGD(lr=0.01, momentum=0.9, nesterov=True), loss='mse', metrics=['mae']",
	"optimizer='Adam(lr=0.5, beta_1=0.8, beta_2=0.95, epsilon=1e-8, amsgrad=true, decay=0.1)', loss=binary_crossentropy, metrics=['binary_accuracy']",
	"optimizer=Adagrad(initial_accumulator_value=0.2), loss=sparse_categorical_crossentropy, metrics=['sparse_categorical_accuracy']",
	"optimizer=Adadelta(learning_rate=1.0, rho=0.9, clipnorm=1.5, clipvalue=0.5), loss=mae, metrics=['top_k_categorical_accuracy']",
	"optimizer=Nadam(schedule_decay=0.005), loss=mse, loss_weights={'out': 1.0}, sample_weight_mode=None",
	"optimizer='Adam(name=\"a,b)(\")', loss='mse', weighted_metrics=['acc', 'mse']",
	"optimizer=\"RMSprop(lr=1e-3, rho=0.8, momentum=0.5, centered=False)\", loss=mae, metrics=None",
	"optimizer=Adamax(), loss=mean_squared_error, metrics=['mse',]",
	"batch_size=128, epochs=2, shuffle=True",
	"batch_size=32, epochs=1, shuffle=False, seed=7, verbose=1",
	"epochs=10,batch_size=64",
	"shuffle=True, seed=0, verbose=2, initial_epoch=0, steps_per_epoch=None, class_weight=None",
	"seed=9223372036854775807, shuffle=false",
	"batch_size=4, epochs=3, validation_split=0.1",
};

/* Write the strings seeds[0, n) as the seeds of target, named 00, 01, ... */
static void
string_seeds(const char *target, const char *const *seeds, size_t n)
{
	for (size_t i = 0; i < n; i++)
	{
		char		name[32];

		snprintf(name, sizeof(name), "%02zu", i);
		write_seed(target, name, seeds[i], strlen(seeds[i]));
	}
}

/*
 * Grids for fuzz_grid: the first byte picks the search ('0', '2' grid;
 * '1', '3' random) and the grid ('0', '1' compile; '2', '3' fit); the
 * last ones are automl_params.
 */
static const char *const grid_seeds[] = {
	("0{'loss': ['categorical_crossentropy'], 'optimizer_params_list': [ {'optimizer': ['SGD'], "
	 "'lr': [0.0001, 0.001], 'momentum': [0.95, 0.99]}, {'optimizer': ['Adam'], 'lr': [0.01, 0.1]} ], "
	 "'metrics': ['accuracy']}"),
	("1{'loss': ['categorical_crossentropy'], 'optimizer_params_list': [ {'optimizer': ['SGD'], "
	 "'lr': [0.0001, 0.001, 'log'], 'momentum': [0.95, 0.99, 'log_near_one']}, {'optimizer': ['Adam'], "
	 "'lr': [0.01, 0.1, 'linear']} ], 'metrics': ['accuracy']}"),
	("0 {\"loss\": [\"mse\"], 'optimizer': [u'SGD(lr=0.1)', \"Adam\"],\n 'loss_weights': [[1e-3, 1.5E-7, "
	 "100.0, 1e16, 2, -0.0, 0.30000000000000004], ((1,), (), {1: 'a\\'b', \"c\": None}, True, False)],}"),
	"0{'loss': ['mse'], 'optimizer_params_list': [{'lr': [0.5]}, {'optimizer': ['adamax']}]}",
	"2{'batch_size': [64, 128], 'epochs': [10]}",
	"3{'batch_size': [16, 32, 64, 128], 'epochs': [1, 2, 3]}",
	"3{'epochs': [1, 5, 'cubic'], 'shuffle': [True, False]}",
	"2{'s': ['a\\x01b\\tc\\nd', \"it's\", 'both \\' \"', '\\q', '\xc3\xa9']}",
	"2 {'batch_size': [[[[64]]]], 'x': [None, (1, 2)]} ",
	"2{'batch_size': [64, 1x]}",
	"2{}",
	/* automl_params (every input is also read as them) */
	"0R=9, eta=3, skip_last=1",
	"0num_configs=8, num_iterations=2, algorithm='rand'",
	"0r=6,ETA=3,num_configs=4,",
};

/* A blob of arch a with optimizer choice byte0 after a training step, and its weights. */
static void
blob_seed(int a, uint8_t byte0)
{
	FuzzAllocCounter counter;
	DlAllocator alloc = fuzz_allocator(&counter);
	DlModelSpec *spec = NULL;
	DlModel    *m = NULL;
	DlOptimConfig ocfg;
	int			okind = FUZZ_OPTIM(byte0);
	DlError		err;
	size_t		size,
				P;
	uint8_t    *buf;
	float		x[2 * 64] = {0},
				y[2 * 8] = {0};
	DlTrainConfig cfg = {0};
	char		name[32];

	if (dl_keras_parse(fuzz_archs[a], strlen(fuzz_archs[a]), &alloc, &spec, &err) != DL_OK)
	{
		fprintf(stderr, "gen_seeds: arch %d: %s\n", a, err.msg);
		exit(1);
	}
	if (okind != FUZZ_NO_OPTIM)
	{
		dl_optim_config_default(&ocfg, (DlOptimKind) okind);
		if (byte0 & 0x80)
		{
			ocfg.momentum = 0.5;
			ocfg.amsgrad = true;
		}
	}
	if (dl_model_create(spec, okind != FUZZ_NO_OPTIM ? &ocfg : NULL, &alloc, &m, &err) != DL_OK ||
		dl_model_init_weights(m, 11, &err) != DL_OK)
	{
		fprintf(stderr, "gen_seeds: model %d: %s\n", a, err.msg);
		exit(1);
	}
	if (okind != FUZZ_NO_OPTIM)
	{
		for (int i = 0; i < 2 * 64; i++)
			x[i] = (float) (i % 7) * 0.25f;
		y[0] = 1.0f;
		cfg.loss = DL_LOSS_MEAN_SQUARED_ERROR;
		cfg.batch_size = 2;
		if (dl_model_train_batch(m, &cfg, x, y, 2, NULL, &err) != DL_OK)
		{
			fprintf(stderr, "gen_seeds: train %d: %s\n", a, err.msg);
			exit(1);
		}
	}
	dl_blob_size(m, &size, &err);
	P = dl_model_n_params(m);
	buf = calloc(FUZZ_PREFIX + (size > 4 * P ? size : 4 * P), 1);
	buf[0] = byte0;
	buf[1] = 0;
	if (dl_blob_write(m, 1000, buf + FUZZ_PREFIX, size, &err) != DL_OK)
	{
		fprintf(stderr, "gen_seeds: blob %d: %s\n", a, err.msg);
		exit(1);
	}
	snprintf(name, sizeof(name), "blob_%d_%02x", a, byte0);
	write_seed("fuzz_blob", name, buf, FUZZ_PREFIX + size);
	if (okind == FUZZ_NO_OPTIM)
	{
		dl_weights_write(buf + FUZZ_PREFIX, dl_model_params(m), P);
		snprintf(name, sizeof(name), "weights_%d", a);
		write_seed("fuzz_blob", name, buf, FUZZ_PREFIX + 4 * P);
	}
	free(buf);
	dl_model_free(m);
	dl_model_spec_free(spec, &alloc);
	if (counter.live != 0)
	{
		fprintf(stderr, "gen_seeds: leak\n");
		exit(1);
	}
}

static void
put_f32(uint8_t *p, float v)
{
	uint32_t	u;

	memcpy(&u, &v, 4);
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t) (u >> (8 * i));
}

/* header n, row, k, mode, split; x (n, row) then y (n, k) one-hot */
static void
buffer_seed(const char *name, int n, int row, int k, uint8_t mode, bool nan)
{
	uint8_t		buf[5 + 4 * 16 * 16 + 2 * 16 * 16];
	size_t		len = 5;

	buf[0] = (uint8_t) n;
	buf[1] = (uint8_t) row;
	buf[2] = (uint8_t) k;
	buf[3] = mode;
	buf[4] = 0;
	for (int i = 0; i < n * row; i++, len += 4)
		put_f32(buf + len, (float) i * 0.5f - 1.0f);
	if (nan && n * row > 0)
		put_f32(buf + 5 + 4 * (n * row - 1), __builtin_nanf(""));
	for (int i = 0; i < n; i++)
	{
		for (int j = 0; j < k; j++, len += 2)
		{
			buf[len] = (uint8_t) (j == i % k);
			buf[len + 1] = 0;
		}
	}
	write_seed("fuzz_buffer", name, buf, len);
}

/* ---- graphs for fuzz_keras ------------------------------------------- */

#define G_HEAD "{\"class_name\": \"Model\", \"config\": {\"name\": \"g\", \"layers\": ["
#define G_IN(n, shape) "{\"class_name\": \"InputLayer\", \"name\": \"" n "\", \"config\": {\"name\": \"" n \
	"\", \"batch_input_shape\": [null, " shape "]}, \"inbound_nodes\": []}"
#define G_L(cls, n, cfg, in) ", {\"class_name\": \"" cls "\", \"name\": \"" n "\", \"config\": {\"name\": \"" n \
	"\"" cfg "}, \"inbound_nodes\": [[" in "]]}"
#define G_R(n) "[\"" n "\", 0, 0, {}]"
#define G_D(n, units, in) G_L("Dense", n, ", \"units\": " units, in)
#define G_TAIL(ins, outs) "], \"input_layers\": " ins ", \"output_layers\": " outs "}}"
#define G_X "[[\"x\", 0, 0]]"

static const char *const graph_seeds[] = {
	/* valid: a residual block, two inputs, two outputs, every merge */
	G_HEAD G_IN("x", "6, 6, 2")
	G_L("Conv2D", "c1", ", \"filters\": 2, \"kernel_size\": 3, \"padding\": \"same\", \"activation\": \"relu\"", G_R("x"))
	G_L("Conv2D", "c2", ", \"filters\": 2, \"kernel_size\": 3, \"padding\": \"same\", \"dilation_rate\": 2", G_R("c1"))
	G_L("Add", "add", "", G_R("c2") ", " G_R("x"))
	G_L("ZeroPadding2D", "zp", ", \"padding\": [[1, 0], [2, 1]]", G_R("add"))
	G_L("Cropping2D", "cr", ", \"cropping\": 1", G_R("zp"))
	G_L("UpSampling2D", "up", ", \"size\": [2, 1]", G_R("cr"))
	G_L("GlobalMaxPooling2D", "gmp", "", G_R("up"))
	G_D("out", "3", G_R("gmp")) G_TAIL(G_X, "[[\"out\", 0, 0]]"),
	G_HEAD G_IN("a", "3") ", " G_IN("b", "3")
	G_L("Subtract", "s", "", G_R("a") ", " G_R("b"))
	G_L("Multiply", "m", "", G_R("a") ", " G_R("b") ", " G_R("s"))
	G_L("Maximum", "mx", "", G_R("m") ", " G_R("s"))
	G_L("Minimum", "mn", "", G_R("m") ", " G_R("a"))
	G_L("Average", "av", "", G_R("mx") ", " G_R("mn"))
	G_L("Concatenate", "cat", ", \"axis\": -1", G_R("av") ", " G_R("a") ", " G_R("av"))
	G_D("o1", "2", G_R("cat")) G_D("o2", "1", G_R("s"))
	G_TAIL("[[\"a\", 0, 0], [\"b\", 0, 0]]", "[[\"o1\", 0, 0], [\"o2\", 0, 0]]"),
	/* a cycle, a self-loop */
	G_HEAD G_IN("x", "4") G_D("a", "4", G_R("b")) G_D("b", "4", G_R("a")) G_D("c", "2", G_R("x") ", " G_R("b"))
	G_TAIL(G_X, "[[\"c\", 0, 0]]"),
	G_HEAD G_IN("x", "4") G_L("Add", "a", "", G_R("x") ", " G_R("a")) G_TAIL(G_X, "[[\"a\", 0, 0]]"),
	/* dangling: no such layer, a second call, a second output */
	G_HEAD G_IN("x", "4") G_D("a", "4", G_R("nowhere")) G_TAIL(G_X, "[[\"a\", 0, 0]]"),
	G_HEAD G_IN("x", "4") G_D("a", "4", "[\"x\", 3, 0, {}]") G_TAIL(G_X, "[[\"a\", 0, 0]]"),
	G_HEAD G_IN("x", "4") G_D("a", "4", "[\"x\", 0, 2, {}]") G_TAIL(G_X, "[[\"a\", 7, 0]]"),
	/* shapes that do not meet at a merge */
	G_HEAD G_IN("x", "4") G_D("a", "4", G_R("x")) G_D("b", "5", G_R("x")) G_L("Add", "s", "", G_R("a") ", " G_R("b"))
	G_TAIL(G_X, "[[\"s\", 0, 0]]"),
	G_HEAD G_IN("x", "4, 4, 2") G_L("Flatten", "f", "", G_R("x"))
	G_L("Concatenate", "c", ", \"axis\": 2", G_R("x") ", " G_R("f")) G_TAIL(G_X, "[[\"c\", 0, 0]]"),
	/* a shared layer, a merge of one, an output that is an input, an output twice */
	G_HEAD G_IN("x", "4") ", {\"class_name\": \"Dense\", \"name\": \"d\", \"config\": {\"units\": 4}, "
	"\"inbound_nodes\": [[" G_R("x") "], [" G_R("x") "]]}" G_TAIL(G_X, "[[\"d\", 0, 0]]"),
	G_HEAD G_IN("x", "4") G_L("Add", "a", "", G_R("x")) G_TAIL(G_X, "[[\"a\", 0, 0]]"),
	G_HEAD G_IN("x", "4") G_D("a", "4", G_R("x")) G_TAIL(G_X, "[[\"x\", 0, 0], [\"a\", 0, 0], [\"a\", 0, 0]]"),
	/* Keras 3: tensors in args and kwargs */
	"{\"class_name\": \"Functional\", \"config\": {\"name\": \"k3\", \"layers\": ["
	"{\"class_name\": \"InputLayer\", \"name\": \"x\", \"config\": {\"batch_shape\": [null, 3], \"name\": \"x\"}, \"inbound_nodes\": []}, "
	"{\"class_name\": \"Dense\", \"name\": \"d\", \"config\": {\"name\": \"d\", \"units\": 3}, \"inbound_nodes\": "
	"[{\"args\": [{\"class_name\": \"__keras_tensor__\", \"config\": {\"keras_history\": [\"x\", 0, 0]}}], \"kwargs\": {}}]}, "
	"{\"class_name\": \"Add\", \"name\": \"a\", \"config\": {\"name\": \"a\"}, \"inbound_nodes\": "
	"[{\"args\": [[{\"class_name\": \"__keras_tensor__\", \"config\": {\"keras_history\": [\"d\", 0, 0]}}]], "
	"\"kwargs\": {\"other\": {\"class_name\": \"__keras_tensor__\", \"config\": {\"keras_history\": [\"x\", 0, 0]}}}}]}], "
	"\"input_layers\": [[\"x\", 0, 0]], \"output_layers\": [[\"a\", 0, 0]]}}",
};

/* ---- the layers of text and sequences (issue 18) for fuzz_keras ------ */

#define S_HEAD(shape) "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\", \"layers\": [" \
	"{\"class_name\": \"InputLayer\", \"config\": {\"name\": \"x\", \"batch_input_shape\": [null, " shape "]}}"
#define S_L(cls, cfg) ", {\"class_name\": \"" cls "\", \"config\": {\"name\": \"" cls "\"" cfg "}}"
#define S_TAIL "]}}"

static const char *const sequence_seeds[] = {
	/* valid: text through every recurrent layer and merge */
	S_HEAD("6") S_L("Embedding", ", \"input_dim\": 4, \"output_dim\": 3")
	S_L("Conv1D", ", \"filters\": 3, \"kernel_size\": 2, \"padding\": \"causal\", \"dilation_rate\": 2")
	S_L("MaxPooling1D", ", \"pool_size\": 2, \"padding\": \"same\"")
	", {\"class_name\": \"Bidirectional\", \"config\": {\"name\": \"bi\", \"merge_mode\": \"mul\", "
	"\"layer\": {\"class_name\": \"GRU\", \"config\": {\"name\": \"g\", \"units\": 2, \"reset_after\": true, "
	"\"return_sequences\": true}}}}"
	S_L("LSTM", ", \"units\": 2, \"return_sequences\": true, \"go_backwards\": true")
	S_L("SimpleRNN", ", \"units\": 2, \"activation\": \"selu\", \"return_sequences\": true")
	S_L("LayerNormalization", "") S_L("AveragePooling1D", ", \"pool_size\": [2]")
	S_L("GlobalAveragePooling1D", "") S_L("RepeatVector", ", \"n\": 2") S_L("Permute", ", \"dims\": [2, 1]")
	S_L("Reshape", ", \"target_shape\": [-1]") S_L("PReLU", "") S_TAIL,
	/* valid: images through the mobile convolutions and the activation layers */
	S_HEAD("5, 5, 2") S_L("DepthwiseConv2D", ", \"kernel_size\": 3, \"depth_multiplier\": 2, \"padding\": \"same\"")
	S_L("SeparableConv2D", ", \"filters\": 2, \"kernel_size\": 2, \"activation\": \"gelu\"")
	S_L("ReLU", ", \"max_value\": 6, \"negative_slope\": 0.1, \"threshold\": 0.5")
	S_L("LeakyReLU", ", \"alpha\": 0.2") S_L("GlobalMaxPooling2D", "")
	S_L("Dense", ", \"units\": 2, \"activation\": \"swish\"")
	S_L("Activation", ", \"activation\": \"hard_sigmoid\"") S_TAIL,
	/* refused or hostile: masking, a backward layer of another kind, huge sizes */
	S_HEAD("4") S_L("Embedding", ", \"input_dim\": 9, \"output_dim\": 2, \"mask_zero\": true") S_TAIL,
	S_HEAD("4, 2") ", {\"class_name\": \"Bidirectional\", \"config\": {\"name\": \"bi\", "
	"\"layer\": {\"class_name\": \"LSTM\", \"config\": {\"name\": \"l\", \"units\": 2}}, "
	"\"backward_layer\": {\"class_name\": \"GRU\", \"config\": {\"name\": \"b\", \"units\": 2, "
	"\"go_backwards\": true}}}}" S_TAIL,
	S_HEAD("4") S_L("Embedding", ", \"input_dim\": 1099511627776, \"output_dim\": 2") S_TAIL,
	S_HEAD("1000000, 3") S_L("LSTM", ", \"units\": 4611686018427387904") S_TAIL,
	S_HEAD("3, 2") S_L("Reshape", ", \"target_shape\": [-1, -1]") S_TAIL,
	S_HEAD("3, 2") S_L("Permute", ", \"dims\": [9, -3]") S_TAIL,
};

/* A merge of n references to the input: n = 64 is the most a layer reads. */
static void
fan_in_seed(const char *name, int n)
{
	size_t		cap = 256 + (size_t) n * 24;
	char	   *buf = malloc(cap);
	size_t		len = (size_t) snprintf(buf, cap, G_HEAD G_IN("x", "2") ", {\"class_name\": \"Add\", "
									   "\"name\": \"a\", \"config\": {}, \"inbound_nodes\": [[");

	for (int i = 0; i < n; i++)
		len += (size_t) snprintf(buf + len, cap - len, "%s" G_R("x"), i > 0 ? ", " : "");
	len += (size_t) snprintf(buf + len, cap - len, "]]}" G_TAIL(G_X, "[[\"a\", 0, 0]]"));
	write_seed("fuzz_keras", name, buf, len);
	free(buf);
}

/* n residual links, each an Add of the two before: a deep graph. */
static void
deep_seed(const char *name, int n)
{
	size_t		cap = 256 + (size_t) n * 160;
	char	   *buf = malloc(cap);
	size_t		len = (size_t) snprintf(buf, cap, G_HEAD G_IN("x", "2") G_D("a0", "2", G_R("x"))
									   G_D("a1", "2", G_R("a0")));

	for (int i = 2; i < n; i++)
		len += (size_t) snprintf(buf + len, cap - len,
								 ", {\"class_name\": \"Add\", \"name\": \"a%d\", \"config\": {}, "
								 "\"inbound_nodes\": [[[\"a%d\", 0, 0, {}], [\"a%d\", 0, 0, {}]]]}",
								 i, i - 1, i - 2);
	len += (size_t) snprintf(buf + len, cap - len, "], \"input_layers\": " G_X
							 ", \"output_layers\": [[\"a%d\", 0, 0]]}}", n - 1);
	write_seed("fuzz_keras", name, buf, len);
	free(buf);
}

/*
 * The architectures of a graph fixture (model_arch, model_arch_k3), one
 * seed each, named prefix_<case>.
 */
static void
fixture_graph_seeds(const char *fixtures, const char *file, const char *prefix)
{
	char		path[1024];
	json_object *root;
	json_object *cases;

	snprintf(path, sizeof(path), "%s/%s", fixtures, file);
	root = json_object_from_file(path);
	if (root == NULL || !json_object_object_get_ex(root, "cases", &cases))
	{
		fprintf(stderr, "gen_seeds: cannot read %s\n", path);
		exit(1);
	}
	for (size_t i = 0; i < json_object_array_length(cases); i++)
	{
		json_object *c = json_object_array_get_idx(cases, i);
		json_object *name;
		static const char *const keys[] = {"model_arch", "model_arch_k3"};

		json_object_object_get_ex(c, "name", &name);
		for (int k = 0; k < 2; k++)
		{
			json_object *arch;
			char		seed[96];
			const char *text;

			if (!json_object_object_get_ex(c, keys[k], &arch))
				continue;
			text = json_object_to_json_string_ext(arch, JSON_C_TO_STRING_PLAIN);
			snprintf(seed, sizeof(seed), "%s_%s%s", prefix, json_object_get_string(name), k ? "_k3" : "");
			write_seed("fuzz_keras", seed, text, strlen(text));
		}
	}
	json_object_put(root);
}

/* ---- decoded Keras files for fuzz_keras_file ------------------------- */

/* The bytes of "\set name '\\x...'" in the text of keras_files.sql (malloc'd). */
static uint8_t *
keras_file_bytes(const char *sql, const char *name, size_t *len)
{
	char		key[128];
	const char *p,
			   *e;
	uint8_t    *out;

	snprintf(key, sizeof(key), "\\set %s '\\\\x", name);
	p = strstr(sql, key);
	e = p ? strchr(p + strlen(key), '\'') : NULL;
	if (e == NULL)
	{
		fprintf(stderr, "gen_seeds: no file %s in keras_files.sql\n", name);
		exit(1);
	}
	p += strlen(key);
	*len = (size_t) (e - p) / 2;
	out = malloc(*len + 1);
	for (size_t i = 0; i < *len; i++)
	{
		unsigned int v;

		if (sscanf(p + 2 * i, "%2x", &v) != 1)
		{
			fprintf(stderr, "gen_seeds: bad hex in %s\n", name);
			exit(1);
		}
		out[i] = (uint8_t) v;
	}
	return out;
}

/*
 * The record dl_keras_file_encode writes for file name of keras_files.sql
 * (its decoding, or its refusal when lim refuses it), as seed record_<name>.
 */
static void
keras_record_seed(const char *sql, const char *name, const DlKerasFileLimits *lim)
{
	FuzzAllocCounter counter;
	DlAllocator a = fuzz_allocator(&counter);
	DlKerasFile f;
	DlError		err,
				e2;
	DlStatus	st;
	size_t		len,
				rlen;
	uint8_t    *file = keras_file_bytes(sql, name, &len);
	uint8_t    *rec;
	char		seed[64];

	dl_error_clear(&err);
	st = dl_keras_file_decode(file, len, lim, &a, &f, &err);
	if (dl_keras_file_encode(st, &err, &f, &a, &rec, &rlen, &e2) != DL_OK)
	{
		fprintf(stderr, "gen_seeds: encode %s: %s\n", name, e2.msg);
		exit(1);
	}
	snprintf(seed, sizeof(seed), "record_%s%s", name, st == DL_OK ? "" : "_refused");
	write_seed("fuzz_keras_file", seed, rec, rlen);
	dl_free(&a, rec);
	dl_keras_file_free(&a, &f);
	free(file);
	if (counter.live != 0)
	{
		fprintf(stderr, "gen_seeds: leak\n");
		exit(1);
	}
}

/*
 * fuzz_keras_file's seeds: records of the MLP's files and of two
 * refusals; two .keras files.  hdf5: instead, the legacy .h5 files, for
 * exploring libhdf5 (make explore-hdf5; not committed).
 */
static void
keras_file_seeds(const char *path, bool hdf5)
{
	FILE	   *fp = fopen(path, "rb");
	DlKerasFileLimits lim = {1 << 26, 1 << 26, 1 << 24, 1000, 1 << 26};
	char	   *sql;
	long		n;
	size_t		len;
	uint8_t    *file;

	if (fp == NULL || fseek(fp, 0, SEEK_END) != 0 || (n = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET) != 0)
	{
		fprintf(stderr, "gen_seeds: cannot read %s\n", path);
		exit(1);
	}
	sql = malloc((size_t) n + 1);
	if (fread(sql, 1, (size_t) n, fp) != (size_t) n)
	{
		fprintf(stderr, "gen_seeds: cannot read %s\n", path);
		exit(1);
	}
	sql[n] = '\0';
	fclose(fp);
	if (hdf5)
	{
		static const char *const h5[] = {"mlp_h5", "cnn_h5", "lstm_h5", "nested_h5"};

		for (size_t i = 0; i < sizeof(h5) / sizeof(h5[0]); i++)
		{
			file = keras_file_bytes(sql, h5[i], &len);
			write_seed("fuzz_keras_file_hdf5", h5[i], file, len);
			free(file);
		}
		free(sql);
		return;
	}
	keras_record_seed(sql, "mlp_h5", &lim);
	keras_record_seed(sql, "mlp_keras", &lim);
	keras_record_seed(sql, "bad_int", &lim);	/* unsupported, with a hint */
	lim.max_tensors = 3;
	keras_record_seed(sql, "mlp_h5", &lim); /* over a limit */
	file = keras_file_bytes(sql, "mlp_keras", &len);
	write_seed("fuzz_keras_file", "mlp_keras", file, len);
	free(file);
	file = keras_file_bytes(sql, "bad_emptyh5", &len);	/* was an internal error */
	write_seed("fuzz_keras_file", "bad_emptyh5", file, len);
	free(file);
	free(sql);
}

int
main(int argc, char **argv)
{
	static const uint8_t optims[] = {
		4 * FUZZ_NO_OPTIM, 4 * 0, 0x80 | (4 * 0), 4 * 1, 0x80 | (4 * 1), 4 * 2, 4 * 3, 4 * 4,
		4 * 5, 4 * 6
	};

	if (argc == 4 && strcmp(argv[1], "--hdf5") == 0)
	{
		dir = argv[2];
		keras_file_seeds(argv[3], true);
		printf("gen_seeds: wrote %d seeds\n", n_written);
		return 0;
	}
	if (argc < 2 || argc > 4)
	{
		fprintf(stderr, "usage: gen_seeds DIR [FIXTURES [KERAS_FILES]]\n");
		return 2;
	}
	dir = argv[1];
	string_seeds("fuzz_params", param_seeds, sizeof(param_seeds) / sizeof(param_seeds[0]));
	string_seeds("fuzz_grid", grid_seeds, sizeof(grid_seeds) / sizeof(grid_seeds[0]));
	for (int a = 0; a < FUZZ_N_ARCHS; a++)
	{
		for (size_t i = 0; i < sizeof(optims) / sizeof(optims[0]); i++)
		{
			/* one architecture gets every optimizer, the others two */
			if (a != 0 && i > 2)
				continue;
			blob_seed(a, (uint8_t) (optims[i] | a));
		}
	}
	buffer_seed("2x3_k2", 2, 3, 2, 1, false);
	buffer_seed("4x8_k3", 4, 8, 3, 1, false);
	buffer_seed("1x5_k10_nan", 1, 5, 10, 1, true);
	buffer_seed("0x0_k0", 0, 0, 0, 1, false);
	buffer_seed("3x2_k2_split", 3, 2, 2, 0, false);
	for (size_t i = 0; i < sizeof(graph_seeds) / sizeof(graph_seeds[0]); i++)
	{
		char		name[32];

		snprintf(name, sizeof(name), "graph_%02zu", i);
		write_seed("fuzz_keras", name, graph_seeds[i], strlen(graph_seeds[i]));
	}
	fan_in_seed("graph_fan_in_64", 64);
	fan_in_seed("graph_fan_in_200", 200);
	deep_seed("graph_deep_100", 100);
	fixture_graph_seeds(argc == 3 ? argv[2] : "../unit/fixtures", "tfjs_graphs.json", "graph_tfjs");
	fixture_graph_seeds(argc == 3 ? argv[2] : "../unit/fixtures", "torch_graphs.json", "graph_torch");
	for (size_t i = 0; i < sizeof(sequence_seeds) / sizeof(sequence_seeds[0]); i++)
	{
		char		name[32];

		snprintf(name, sizeof(name), "sequence_%02zu", i);
		write_seed("fuzz_keras", name, sequence_seeds[i], strlen(sequence_seeds[i]));
	}
	fixture_graph_seeds(argc == 3 ? argv[2] : "../unit/fixtures", "tfjs_sequences.json", "seq_tfjs");
	fixture_graph_seeds(argc == 3 ? argv[2] : "../unit/fixtures", "torch_sequences.json", "seq_torch");
	keras_file_seeds(argc == 4 ? argv[3] : "../data/keras_files.sql", false);
	printf("gen_seeds: wrote %d seeds\n", n_written);
	return 0;
}
