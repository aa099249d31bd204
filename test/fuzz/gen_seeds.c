/*-------------------------------------------------------------------------
 *
 * gen_seeds.c
 *	  Write the seed inputs of the fuzz corpora that are not copied from
 *	  fixtures: MADlib parameter strings, valid model state blobs and flat
 *	  weights for the blob target's fixed architectures, and packed
 *	  buffers.
 *
 * Usage: gen_seeds DIR   (writes DIR/fuzz_params, DIR/fuzz_blob,
 * DIR/fuzz_buffer, which must exist).  Test code: prints and exits.
 *
 * IDENTIFICATION
 *	  test/fuzz/gen_seeds.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "fuzz_blob_archs.h"
#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_keras.h"
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

int
main(int argc, char **argv)
{
	static const uint8_t optims[] = {
		4 * FUZZ_NO_OPTIM, 4 * 0, 0x80 | (4 * 0), 4 * 1, 0x80 | (4 * 1), 4 * 2, 4 * 3, 4 * 4,
		4 * 5, 4 * 6
	};

	if (argc != 2)
	{
		fprintf(stderr, "usage: gen_seeds DIR\n");
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
	printf("gen_seeds: wrote %d seeds\n", n_written);
	return 0;
}
