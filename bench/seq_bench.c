/*-------------------------------------------------------------------------
 *
 * seq_bench.c
 *	  Engine-alone benchmark of a text and a sequence model (issue 18).
 *
 *	  seq_bench data NET FILE [N_TRAIN [N_TEST]]   write NET's data set
 *	  seq_bench train NET FILE [EPOCHS]            train on it, print figures
 *	    NET  text | lstm
 *
 * The data sets are synthetic, with a learnable signal, made by a fixed
 * linear congruential generator (so bench/seq_torch_bench.py reads the
 * very same samples from FILE):
 *	 text  sequences of 100 token ids below 20000 in 4 classes: ids drawn
 *	       uniformly from 81 .. 19999, then 3 of the 100 replaced by
 *	       keywords of the sample's class (20 per class, ids 1 .. 80)
 *	 lstm  sequences of 50 steps of 8 features in 4 classes: uniform noise
 *	       in [-1, 1), plus 0.2 on the feature of the sample's class at
 *	       every step (the class shows only over many steps)
 * Defaults: 20000 training and 4000 test samples.  FILE: int32 N_TRAIN,
 * N_TEST, WIDTH (floats per sample), K; float32 x_train, int32 y_train,
 * float32 x_test, int32 y_test (little-endian).
 *
 * The models, as Keras would build them (glorot_uniform kernels,
 * orthogonal recurrent kernels, zero biases, an LSTM's forget bias 1,
 * embeddings uniform in [-0.05, 0.05]):
 *	 text  Embedding(20000, 64), Conv1D(128, 5, relu), GlobalMaxPooling1D,
 *	       Dense(4, softmax)
 *	 lstm  LSTM(64), Dense(4, softmax)
 * trained with Adam(lr 0.001, epsilon 1e-7) on sparse categorical
 * crossentropy, batch 64, shuffled every epoch (dl_model_train_epoch),
 * seed 42 (BENCH_SEED).  Default 3 epochs.  The first epoch is a warm-up:
 * samples/s is the median over the others (wall clock; also per CPU
 * second).  Prints "key value" lines: samples_per_s, samples_per_cpu_s,
 * epoch_s_<k>, test_acc (after the last epoch), backend.
 *
 * Not engine code: runs as a plain program, uses malloc and prints.
 *
 * IDENTIFICATION
 *	  bench/seq_bench.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "madlib_dl/dl_backend.h"
#include "madlib_dl/dl_keras.h"
#include "madlib_dl/dl_model.h"

#define BATCH 64
#define K 4

static const char text_json[] =
"{\"class_name\": \"Sequential\", \"config\": {\"name\": \"text\", \"layers\": ["
"{\"class_name\": \"InputLayer\", \"config\": {\"name\": \"x\", \"batch_input_shape\": [null, 100]}},"
"{\"class_name\": \"Embedding\", \"config\": {\"name\": \"emb\", \"input_dim\": 20000, \"output_dim\": 64}},"
"{\"class_name\": \"Conv1D\", \"config\": {\"name\": \"conv\", \"filters\": 128, \"kernel_size\": 5,"
" \"activation\": \"relu\"}},"
"{\"class_name\": \"GlobalMaxPooling1D\", \"config\": {\"name\": \"gmp\"}},"
"{\"class_name\": \"Dense\", \"config\": {\"name\": \"head\", \"units\": 4, \"activation\": \"softmax\"}}]}}";

static const char lstm_json[] =
"{\"class_name\": \"Sequential\", \"config\": {\"name\": \"lstm\", \"layers\": ["
"{\"class_name\": \"InputLayer\", \"config\": {\"name\": \"x\", \"batch_input_shape\": [null, 50, 8]}},"
"{\"class_name\": \"LSTM\", \"config\": {\"name\": \"lstm\", \"units\": 64}},"
"{\"class_name\": \"Dense\", \"config\": {\"name\": \"head\", \"units\": 4, \"activation\": \"softmax\"}}]}}";

static uint32_t lcg_state;

/* x_{n+1} = (a x_n + c) mod 2^32 as a uniform in [0, 1) (the fixtures' generator) */
static double
lcg(void)
{
	lcg_state = lcg_state * 1664525u + 1013904223u;
	return lcg_state / 4294967296.0;
}

static double
now_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static void *
bench_alloc(void *ctx, size_t size)
{
	(void) ctx;
	return malloc(size);
}

static void
bench_free(void *ctx, void *p)
{
	(void) ctx;
	free(p);
}

static void *
xmalloc(size_t n)
{
	void	   *p = malloc(n > 0 ? n : 1);

	if (p == NULL)
	{
		fprintf(stderr, "seq_bench: out of memory\n");
		exit(1);
	}
	return p;
}

/* One sample of NET into x (width floats), its class into *y. */
static void
make_sample(bool text, float *x, int32_t *y)
{
	int32_t		c = (int32_t) (lcg() * K);

	*y = c;
	if (text)
	{
		for (int i = 0; i < 100; i++)
			x[i] = (float) (81 + (int) (lcg() * (20000 - 81)));
		for (int j = 0; j < 3; j++)
		{
			int			pos = (int) (lcg() * 100);

			x[pos] = (float) (1 + c * 20 + (int) (lcg() * 20));
		}
		return;
	}
	for (int t = 0; t < 50; t++)
		for (int f = 0; f < 8; f++)
			x[t * 8 + f] = (float) (2.0 * lcg() - 1.0 + (f == c ? 0.2 : 0.0));
}

static void
write_data(bool text, const char *file, int32_t ntrain, int32_t ntest)
{
	int32_t		hdr[4] = {ntrain, ntest, text ? 100 : 400, K};
	FILE	   *f = fopen(file, "wb");
	float	   *x = xmalloc(sizeof(float) * 400);

	if (f == NULL)
	{
		perror(file);
		exit(1);
	}
	lcg_state = text ? 18001 : 18002;
	fwrite(hdr, sizeof(hdr), 1, f);
	/* x_train, y_train, x_test, y_test: each split's samples, then its labels */
	for (int split = 0; split < 2; split++)
	{
		int32_t		n = split == 0 ? ntrain : ntest;
		int32_t    *ys = xmalloc(sizeof(int32_t) * (size_t) n);

		for (int32_t i = 0; i < n; i++)
		{
			make_sample(text, x, &ys[i]);
			fwrite(x, sizeof(float), (size_t) hdr[2], f);
		}
		fwrite(ys, sizeof(int32_t), (size_t) n, f);
		free(ys);
	}
	if (fclose(f) != 0)
	{
		perror(file);
		exit(1);
	}
	free(x);
}

typedef struct Data
{
	int32_t		ntrain,
				ntest,
				width;
	float	   *xtrain,
			   *ytrain,			/* the class as a float: sparse labels */
			   *xtest;
	int32_t    *ytest;
} Data;

static void
read_exact(void *p, size_t size, size_t n, FILE *f, const char *file)
{
	if (fread(p, size, n, f) != n)
	{
		fprintf(stderr, "seq_bench: %s is truncated\n", file);
		exit(1);
	}
}

static void
read_data(Data *d, const char *file)
{
	FILE	   *f = fopen(file, "rb");
	int32_t		hdr[4];
	int32_t    *y;

	if (f == NULL)
	{
		perror(file);
		exit(1);
	}
	read_exact(hdr, sizeof(hdr), 1, f, file);
	d->ntrain = hdr[0];
	d->ntest = hdr[1];
	d->width = hdr[2];
	d->xtrain = xmalloc(sizeof(float) * (size_t) d->ntrain * (size_t) d->width);
	d->ytrain = xmalloc(sizeof(float) * (size_t) d->ntrain);
	d->xtest = xmalloc(sizeof(float) * (size_t) d->ntest * (size_t) d->width);
	d->ytest = xmalloc(sizeof(int32_t) * (size_t) d->ntest);
	y = xmalloc(sizeof(int32_t) * (size_t) d->ntrain);
	read_exact(d->xtrain, sizeof(float), (size_t) d->ntrain * (size_t) d->width, f, file);
	read_exact(y, sizeof(int32_t), (size_t) d->ntrain, f, file);
	for (int32_t i = 0; i < d->ntrain; i++)
		d->ytrain[i] = (float) y[i];
	read_exact(d->xtest, sizeof(float), (size_t) d->ntest * (size_t) d->width, f, file);
	read_exact(d->ytest, sizeof(int32_t), (size_t) d->ntest, f, file);
	fclose(f);
	free(y);
}

static int
dcmp(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

static void
check(DlStatus st, const DlError *err, const char *what)
{
	if (st != DL_OK)
	{
		fprintf(stderr, "seq_bench: %s: %s\n", what, err->msg);
		exit(1);
	}
}

static void
train(bool text, const char *file, int epochs)
{
	DlAllocator alloc = {bench_alloc, bench_free, NULL};
	DlModelSpec *spec;
	DlModel    *m;
	DlOptimConfig o;
	DlTrainConfig cfg;
	DlError		err;
	Data		d;
	double	   *wall = xmalloc(sizeof(double) * (size_t) epochs);
	double	   *cpu = xmalloc(sizeof(double) * (size_t) epochs);
	float	   *out;
	int32_t		right = 0;
	const char *seed_env = getenv("BENCH_SEED");
	const char *json = text ? text_json : lstm_json;

	read_data(&d, file);
	dl_backend_set_threads(1);
	check(dl_keras_parse(json, strlen(json), &alloc, &spec, &err), &err, "parse");
	dl_optim_config_default(&o, DL_OPTIM_ADAM);
	o.lr = 0.001;
	o.epsilon = 1e-7;
	check(dl_model_create(spec, &o, &alloc, &m, &err), &err, "create");
	check(dl_model_init_weights(m, seed_env != NULL ? strtoull(seed_env, NULL, 10) : 42, &err),
		  &err, "init");
	memset(&cfg, 0, sizeof(cfg));
	cfg.loss = DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY;
	cfg.batch_size = BATCH;
	cfg.shuffle = true;
	for (int e = 0; e < epochs; e++)
	{
		double		t0 = now_s(CLOCK_MONOTONIC),
					c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
		DlBatchStats st;

		memset(&st, 0, sizeof(st));
		check(dl_model_train_epoch(m, &cfg, d.xtrain, d.ytrain, d.ntrain, &st, &err), &err, "train");
		wall[e] = now_s(CLOCK_MONOTONIC) - t0;
		cpu[e] = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
		printf("epoch_s_%d %.3f\nloss_%d %.5f\n", e + 1, wall[e], e + 1, st.loss_sum / (double) st.n);
	}
	out = xmalloc(sizeof(float) * (size_t) d.ntest * K);
	check(dl_model_predict(m, out, d.xtest, d.ntest, 256, &err), &err, "predict");
	for (int32_t i = 0; i < d.ntest; i++)
	{
		int			best = 0;

		for (int k = 1; k < K; k++)
			if (out[i * K + k] > out[i * K + best])
				best = k;
		right += best == d.ytest[i];
	}
	/* the first epoch is a warm-up (unless it is the only one) */
	{
		int			first = epochs > 1 ? 1 : 0;
		int			n = epochs - first;

		qsort(wall + first, (size_t) n, sizeof(double), dcmp);
		qsort(cpu + first, (size_t) n, sizeof(double), dcmp);
		printf("samples_per_s %.1f\n", d.ntrain / wall[first + n / 2]);
		printf("samples_per_cpu_s %.1f\n", d.ntrain / cpu[first + n / 2]);
	}
	printf("test_acc %.4f\n", (double) right / d.ntest);
	printf("backend %s\n", dl_backend_uses_onednn() ? "onednn" : "openblas");
	dl_model_free(m);
	dl_model_spec_free(spec, &alloc);
	free(out);
	free(wall);
	free(cpu);
}

int
main(int argc, char **argv)
{
	bool		text;

	if (argc < 4 || (strcmp(argv[2], "text") != 0 && strcmp(argv[2], "lstm") != 0))
	{
		fprintf(stderr, "usage: seq_bench data|train text|lstm FILE [N_TRAIN [N_TEST]] | [EPOCHS]\n");
		return 2;
	}
	text = strcmp(argv[2], "text") == 0;
	if (strcmp(argv[1], "data") == 0)
		write_data(text, argv[3], argc > 4 ? atoi(argv[4]) : 20000, argc > 5 ? atoi(argv[5]) : 4000);
	else
		train(text, argv[3], argc > 4 ? atoi(argv[4]) : 3);
	return 0;
}
