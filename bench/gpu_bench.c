/*-------------------------------------------------------------------------
 *
 * gpu_bench.c
 *	  The engine on a GPU (the CUDA backend) on Fashion-MNIST: samples/s,
 *	  to compare with bench/gpu_bench.py (PyTorch on the same GPU).
 *
 *	  gpu_bench NET OPT BATCH [EPOCHS [TF32]]
 *	    NET mlp | cnn   OPT sgd | adam   BATCH e.g. 128, 512
 *	    EPOCHS (3): the first is a warm-up, samples/s is over the others
 *	    TF32 (0): 1 turns on TF32 tensor cores for the sgemms
 *
 * Data: $FASHION_RAW, a directory holding the four UNCOMPRESSED IDX files
 * (scripts/gpu_check.sh decompresses them), or "synthetic" (or unset):
 * random pixels and labels of the same shapes (throughput does not depend
 * on the values; test_acc is then meaningless).
 * Networks, optimizers, init and loss as bench/engine_bench.c:
 *	 mlp 784-256-128-10; cnn Conv32 3x3, MaxPool 2, Conv64 3x3, MaxPool 2,
 *	 Flatten, Dense 128, Dense 10; relu, softmax; SGD(0.05, momentum 0.9)
 *	 or Adam(0.001); sparse categorical crossentropy; seed 42.
 * The whole training set is uploaded once; each epoch is one
 * dl_cuda_model_train_epoch (shuffled, synchronised at its end).
 * Output, one "key value" per line: samples_per_s, epoch_s_min,
 * test_acc, weights_fnv (hash of the final weights), device.
 *
 * Not engine code: a plain program, uses malloc and prints.
 *
 * IDENTIFICATION
 *	  bench/gpu_bench.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "madlib_dl/dl_cuda.h"
#include "madlib_dl/dl_model.h"

static void *b_alloc(void *c, size_t n) { (void) c; return calloc(1, n); }
static void b_free(void *c, void *p) { (void) c; free(p); }

static void
die(const char *what, const char *detail)
{
	fprintf(stderr, "gpu_bench: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	exit(1);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static unsigned char *
read_file(const char *path, size_t *len)
{
	FILE	   *f = fopen(path, "rb");
	unsigned char *buf;
	long		n;

	if (f == NULL)
		die("cannot open", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t) n + 1);
	if (buf == NULL || fread(buf, 1, (size_t) n, f) != (size_t) n)
		die("cannot read", path);
	fclose(f);
	*len = (size_t) n;
	return buf;
}

static uint32_t
be32(const unsigned char *p)
{
	return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

/* x (N, 784) / 255, y (N) class indices; synthetic when dir is NULL. */
static int64_t
load_split(const char *dir, const char *prefix, int64_t synth_n, float **x, float **y)
{
	char		path[1024];
	size_t		ni, nl;
	unsigned char *img, *lab;
	int64_t		N;

	if (dir == NULL)
	{
		DlRng		r;

		dl_rng_seed(&r, (uint64_t) synth_n);
		*x = malloc((size_t) synth_n * 784 * sizeof(float));
		*y = malloc((size_t) synth_n * sizeof(float));
		for (int64_t i = 0; i < synth_n * 784; i++)
			(*x)[i] = (float) dl_rng_uniform(&r);
		for (int64_t i = 0; i < synth_n; i++)
			(*y)[i] = (float) dl_rng_below(&r, 10);
		return synth_n;
	}
	snprintf(path, sizeof(path), "%s/%s-images-idx3-ubyte", dir, prefix);
	img = read_file(path, &ni);
	snprintf(path, sizeof(path), "%s/%s-labels-idx1-ubyte", dir, prefix);
	lab = read_file(path, &nl);
	if (ni < 16 || be32(img) != 0x803 || nl < 8 || be32(lab) != 0x801)
		die("bad IDX magic in", prefix);
	N = be32(img + 4);
	if (be32(lab + 4) != (uint32_t) N || ni < 16 + (size_t) N * 784 || nl < 8 + (size_t) N)
		die("unexpected IDX sizes in", prefix);
	*x = malloc((size_t) N * 784 * sizeof(float));
	*y = malloc((size_t) N * sizeof(float));
	for (int64_t i = 0; i < N * 784; i++)
		(*x)[i] = (float) img[16 + i] / 255.0f;
	for (int64_t i = 0; i < N; i++)
		(*y)[i] = (float) lab[8 + i];
	free(img);
	free(lab);
	return N;
}

static void
dense(DlLayer *l, int64_t units, DlActivation act)
{
	dl_layer_defaults(l, DL_LAYER_DENSE);
	l->units = units;
	l->activation = act;
}

static void
conv(DlLayer *l, int64_t filters)
{
	dl_layer_defaults(l, DL_LAYER_CONV2D);
	l->filters = filters;
	l->kernel_size[0] = l->kernel_size[1] = 3;
	l->activation = DL_ACT_RELU;
}

static void
maxpool(DlLayer *l)
{
	dl_layer_defaults(l, DL_LAYER_MAXPOOL2D);
	l->pool_size[0] = l->pool_size[1] = 2;
	l->strides[0] = l->strides[1] = 2;
}

static DlModelSpec *
make_spec(const char *net, const DlAllocator *a)
{
	DlModelSpec *s;
	DlError		err;

	if (strcmp(net, "mlp") == 0)
	{
		s = dl_model_spec_create(3, a, &err);
		s->input_shape.rank = 1;
		s->input_shape.dims[0] = 784;
		dense(&s->layers[0], 256, DL_ACT_RELU);
		dense(&s->layers[1], 128, DL_ACT_RELU);
		dense(&s->layers[2], 10, DL_ACT_SOFTMAX);
	}
	else if (strcmp(net, "cnn") == 0)
	{
		s = dl_model_spec_create(7, a, &err);
		s->input_shape.rank = 3;
		s->input_shape.dims[0] = 28;
		s->input_shape.dims[1] = 28;
		s->input_shape.dims[2] = 1;
		conv(&s->layers[0], 32);
		maxpool(&s->layers[1]);
		conv(&s->layers[2], 64);
		maxpool(&s->layers[3]);
		dl_layer_defaults(&s->layers[4], DL_LAYER_FLATTEN);
		dense(&s->layers[5], 128, DL_ACT_RELU);
		dense(&s->layers[6], 10, DL_ACT_SOFTMAX);
	}
	else
		die("unknown network (mlp or cnn)", net);
	if (dl_model_spec_finalize(s, &err) != DL_OK)
		die("finalize", err.msg);
	return s;
}

#define TRY(call) do { if ((call) != DL_OK) die(#call, err.msg); } while (0)

int
main(int argc, char **argv)
{
	DlAllocator a = {b_alloc, b_free, NULL};
	const char *net, *opt, *raw = getenv("FASHION_RAW");
	int64_t		batch, epochs = 3, N, Nt;
	int			tf32 = 0;
	float	   *x, *y, *xt, *yt;
	DlModelSpec *spec;
	DlOptimConfig oc;
	DlTrainConfig tc = {0};
	DlModel    *host;
	DlCudaModel *cm;
	DlCudaDeviceInfo info;
	DlError		err;
	DlBatchStats ev = {0};
	double		best = 1e30, total = 0;
	uint64_t	fnv = 1469598103934665603ULL;

	if (argc < 4)
		die("usage: gpu_bench mlp|cnn sgd|adam BATCH [EPOCHS [TF32]]", NULL);
	net = argv[1];
	opt = argv[2];
	batch = atoll(argv[3]);
	if (argc > 4)
		epochs = atoll(argv[4]);
	if (argc > 5)
		tf32 = atoi(argv[5]);
	if (epochs < 2 || batch < 1)
		die("need EPOCHS >= 2 and BATCH >= 1", NULL);
	if (raw != NULL && (raw[0] == '\0' || strcmp(raw, "synthetic") == 0))
		raw = NULL;
	N = load_split(raw, "train", 60000, &x, &y);
	Nt = load_split(raw, "t10k", 10000, &xt, &yt);

	spec = make_spec(net, &a);
	dl_optim_config_default(&oc, strcmp(opt, "adam") == 0 ? DL_OPTIM_ADAM : DL_OPTIM_SGD);
	if (oc.kind == DL_OPTIM_SGD)
	{
		oc.lr = 0.05;
		oc.momentum = 0.9;
	}
	tc.loss = DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY;
	tc.metric = DL_METRIC_ACCURACY;
	tc.batch_size = batch;
	tc.shuffle = true;

	TRY(dl_model_create(spec, &oc, &a, &host, &err));
	TRY(dl_model_init_weights(host, 42, &err));
	TRY(dl_cuda_device_info(0, &info, &err));
	TRY(dl_cuda_model_create(spec, &oc, 0, &a, &cm, &err));
	dl_cuda_model_set_tf32(cm, tf32 != 0);
	TRY(dl_cuda_model_load(cm, host, &err));
	TRY(dl_cuda_model_set_data(cm, x, y, N, 1, &err));
	for (int64_t e = 0; e < epochs; e++)
	{
		DlBatchStats bs = {0};
		double		t0 = now_s(), dt;

		TRY(dl_cuda_model_train_epoch(cm, &tc, &bs, &err));
		dt = now_s() - t0;
		fprintf(stderr, "epoch %lld: %.3f s, loss %.4f, acc %.4f\n", (long long) e + 1, dt,
				bs.loss_sum / (double) bs.n, bs.metric_sum / (double) bs.n);
		if (e > 0)
		{
			total += dt;
			if (dt < best)
				best = dt;
		}
	}
	TRY(dl_cuda_model_set_data(cm, xt, yt, Nt, 1, &err));
	TRY(dl_cuda_model_evaluate(cm, &tc, &ev, &err));
	TRY(dl_cuda_model_store(cm, host, &err));
	dl_cuda_model_free(cm);
	{
		const unsigned char *p = (const unsigned char *) dl_model_params(host);

		for (size_t i = 0; i < dl_model_n_params(host) * sizeof(float); i++)
			fnv = (fnv ^ p[i]) * 1099511628211ULL;
	}
	printf("device %s\n", info.name);
	printf("samples_per_s %.0f\n", (double) N * (double) (epochs - 1) / total);
	printf("samples_per_s_best_epoch %.0f\n", (double) N / best);
	printf("epoch_s_min %.4f\n", best);
	printf("test_acc %.4f\n", ev.metric_sum / (double) ev.n);
	printf("weights_fnv %016llx\n", (unsigned long long) fnv);
	printf("data %s\n", raw != NULL ? "fashion-mnist" : "synthetic");
	dl_model_free(host);
	dl_model_spec_free(spec, &a);
	free(x); free(y); free(xt); free(yt);
	return 0;
}
