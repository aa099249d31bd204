/*-------------------------------------------------------------------------
 *
 * engine_bench.c
 *	  Engine-alone training benchmark on Fashion-MNIST (issue 5).
 *
 *	  engine_bench NET OPT [EPOCHS [WINDOWS_PER_EPOCH]]
 *	    NET  mlp | cnn | resnet        OPT  sgd | adam
 *
 * Loads the four gzipped IDX files of /usr/share/datasets/fashion-mnist
 * (or $FASHION_DIR), scales pixels by 1/255 and trains, in memory, with
 * dl_model_train_epoch (batch 128, shuffled every epoch):
 *	 mlp  784-256-128-10, relu, relu, softmax
 *	 cnn  Conv2D 32 3x3 relu, MaxPool 2, Conv2D 64 3x3 relu, MaxPool 2,
 *	      Flatten, Dense 128 relu, Dense 10 softmax
 *	 resnet  (issue 15) the images zero-padded to 32x32; a stem Conv2D 16
 *	      3x3 + BatchNormalization + ReLU, then three residual blocks of 16,
 *	      32 and 64 channels (Conv2D 3x3 + BN + ReLU, Conv2D 3x3 + BN, Add
 *	      with the shortcut, ReLU; the second and third blocks start with
 *	      stride 2 and their shortcut is a strided 1x1 Conv2D + BN), global
 *	      average pooling, Dense 10 softmax: a functional model, a graph
 * with SGD(lr 0.05, momentum 0.9) or Adam(lr 0.001), glorot_uniform
 * kernels and zero biases (the Keras defaults), sparse categorical
 * crossentropy, seed 42.
 *
 * Timing: every epoch is cut into WINDOWS_PER_EPOCH windows of whole
 * batches (timestamps taken in the between_batches hook); the first epoch
 * is a warm-up (with a single epoch, its first window is) and samples/s is
 * the median over the other windows.  Defaults: mlp 5 epochs of 1 window,
 * cnn and resnet 1 epoch of 6 windows (the whole bench stays within
 * minutes; PyTorch trains this CNN slowly here).
 * One figure per line, "key value" (bench/run.sh reads them):
 *	 samples_per_s, gflops (achieved, actual training FLOPs), flop_per_sample,
 *	 sgemm_gflops_* (cblas_sgemm measured in this process), pct_sgemm,
 *	 engine_sgemm_gflops_1024sq and pct_engine_sgemm_cpu (the same with
 *	 the engine's dl_sgemm: oneDNN's sgemm when it is in use),
 *	 backend (BENCH_BACKEND=auto|openblas|onednn), onednn_version,
 *	 peak_rss_mb (getrusage), test_acc, epoch_s_*, weights_fnv (a hash of
 *	 the final weights: equal across runs = deterministic).
 *
 * BENCH_SEED=n changes the seed (weights and shuffling; default 42).
 * BENCH_TRAIN_N=n trains on the first n samples only (short runs for
 * profiling; not for the figures).
 *
 * Not engine code: runs as a plain program, uses malloc and prints.
 *
 * IDENTIFICATION
 *	  bench/engine_bench.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <zlib.h>

#define FORCE_OPENBLAS_COMPLEX_STRUCT
#include <cblas.h>

#include "madlib_dl/dl_backend.h"
#include "madlib_dl/dl_model.h"
#include "dl_kernels.h"

#define BATCH 128
#define SEED 42				/* default; BENCH_SEED overrides */
#define MAX_STAMPS 100000

static double
clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* Wall-clock seconds. */
static double
now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* CPU seconds of this process (robust when other processes share the cores). */
static double
cpu_s(void)
{
	return clock_s(CLOCK_PROCESS_CPUTIME_ID);
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

static void
die(const char *what, const char *detail)
{
	fprintf(stderr, "engine_bench: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	exit(1);
}

/* Read a whole gzipped file; *len gets its uncompressed size. */
static unsigned char *
read_gz(const char *path, size_t *len)
{
	gzFile		f = gzopen(path, "rb");
	size_t		cap = 1 << 20,
				n = 0;
	unsigned char *buf;
	int			r;

	if (f == NULL)
		die("cannot open", path);
	buf = malloc(cap);
	for (;;)
	{
		if (n == cap)
		{
			cap *= 2;
			buf = realloc(buf, cap);
			if (buf == NULL)
				die("out of memory reading", path);
		}
		r = gzread(f, buf + n, (unsigned) (cap - n));
		if (r < 0)
			die("gzread failed on", path);
		if (r == 0)
			break;
		n += (size_t) r;
	}
	gzclose(f);
	*len = n;
	return buf;
}

static uint32_t
be32(const unsigned char *p)
{
	return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

/*
 * Load one split: x (N, 784) floats / 255, y (N, 1) labels as floats
 * (sparse categorical labels); with pad, x (N, 32, 32): the images framed
 * by two rows and columns of zeros.
 */
static int64_t
load_split(const char *dir, const char *prefix, bool pad, float **x, float **y)
{
	char		path[1024];
	size_t		ni,
				nl;
	unsigned char *img,
			   *lab;
	int64_t		N;

	snprintf(path, sizeof(path), "%s/%s-images-idx3-ubyte.gz", dir, prefix);
	img = read_gz(path, &ni);
	snprintf(path, sizeof(path), "%s/%s-labels-idx1-ubyte.gz", dir, prefix);
	lab = read_gz(path, &nl);
	if (ni < 16 || be32(img) != 0x803 || nl < 8 || be32(lab) != 0x801)
		die("bad IDX magic in", prefix);
	N = be32(img + 4);
	if (be32(lab + 4) != (uint32_t) N || be32(img + 8) != 28 || be32(img + 12) != 28 ||
		ni < 16 + (size_t) N * 784 || nl < 8 + (size_t) N)
		die("unexpected IDX sizes in", prefix);
	*x = calloc((size_t) N * (pad ? 1024 : 784), sizeof(float));
	*y = malloc((size_t) N * sizeof(float));
	for (int64_t i = 0; i < N * 784; i++)
	{
		int64_t		n = i / 784,
					r = i % 784 / 28,
					c = i % 28;

		(*x)[pad ? n * 1024 + (r + 2) * 32 + c + 2 : i] = (float) img[16 + i] / 255.0f;
	}
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
conv(DlLayer *l, int64_t filters, DlActivation act)
{
	dl_layer_defaults(l, DL_LAYER_CONV2D);
	l->filters = filters;
	l->kernel_size[0] = l->kernel_size[1] = 3;
	l->activation = act;
}

static void
maxpool(DlLayer *l)
{
	dl_layer_defaults(l, DL_LAYER_MAXPOOL2D);
	l->pool_size[0] = l->pool_size[1] = 2;
	l->strides[0] = l->strides[1] = 2;
}

/*
 * Layer *n of s, of kind, reading layer in0 (and in1 when >= 0; -1 is the
 * model's input): a graph written by hand.  Returns its index.
 */
static int
node(DlModelSpec *s, int *n, DlLayerKind kind, int in0, int in1)
{
	DlLayer    *l = &s->layers[*n];

	dl_layer_defaults(l, kind);
	l->n_in = in1 >= 0 ? 2 : 1;
	l->in[0] = in0;
	l->in[1] = in1;
	return (*n)++;
}

/* Conv2D 3x3 (or 1x1 when k is 1) without bias, then BatchNormalization. */
static int
conv_bn(DlModelSpec *s, int *n, int in, int64_t filters, int k, int stride)
{
	int			c = node(s, n, DL_LAYER_CONV2D, in, -1);
	DlLayer    *l = &s->layers[c];

	l->filters = filters;
	l->kernel_size[0] = l->kernel_size[1] = k;
	l->strides[0] = l->strides[1] = stride;
	l->padding = DL_PADDING_SAME;
	l->use_bias = false;
	return node(s, n, DL_LAYER_BATCHNORM, c, -1);
}

static int
relu(DlModelSpec *s, int *n, int in)
{
	int			r = node(s, n, DL_LAYER_ACTIVATION, in, -1);

	s->layers[r].activation = DL_ACT_RELU;
	return r;
}

/* A residual block of filters channels; stride 2 halves the image. */
static int
res_block(DlModelSpec *s, int *n, int in, int64_t filters, int stride)
{
	int			y = relu(s, n, conv_bn(s, n, in, filters, 3, stride));
	int			sc = stride == 1 ? in : conv_bn(s, n, in, filters, 1, stride);

	y = conv_bn(s, n, y, filters, 3, 1);
	return relu(s, n, node(s, n, DL_LAYER_ADD, y, sc));
}

static DlModelSpec *
make_spec(const char *net, const DlAllocator *a)
{
	DlModelSpec *s;
	DlError		err;

	if (strcmp(net, "mlp") == 0)
	{
		s = dl_model_spec_create(3, a, &err);
		if (s == NULL)
			die("spec", err.msg);
		s->input_shape.rank = 1;
		s->input_shape.dims[0] = 784;
		dense(&s->layers[0], 256, DL_ACT_RELU);
		dense(&s->layers[1], 128, DL_ACT_RELU);
		dense(&s->layers[2], 10, DL_ACT_SOFTMAX);
	}
	else if (strcmp(net, "cnn") == 0)
	{
		s = dl_model_spec_create(7, a, &err);
		if (s == NULL)
			die("spec", err.msg);
		s->input_shape.rank = 3;
		s->input_shape.dims[0] = 28;
		s->input_shape.dims[1] = 28;
		s->input_shape.dims[2] = 1;
		conv(&s->layers[0], 32, DL_ACT_RELU);
		maxpool(&s->layers[1]);
		conv(&s->layers[2], 64, DL_ACT_RELU);
		maxpool(&s->layers[3]);
		dl_layer_defaults(&s->layers[4], DL_LAYER_FLATTEN);
		dense(&s->layers[5], 128, DL_ACT_RELU);
		dense(&s->layers[6], 10, DL_ACT_SOFTMAX);
	}
	else if (strcmp(net, "resnet") == 0)
	{
		int			n = 0,
					x;

		s = dl_model_spec_create(30, a, &err);
		if (s == NULL)
			die("spec", err.msg);
		s->input_shape.rank = 3;
		s->input_shape.dims[0] = 32;
		s->input_shape.dims[1] = 32;
		s->input_shape.dims[2] = 1;
		x = relu(s, &n, conv_bn(s, &n, -1, 16, 3, 1));
		x = res_block(s, &n, x, 16, 1);
		x = res_block(s, &n, x, 32, 2);
		x = res_block(s, &n, x, 64, 2);
		x = node(s, &n, DL_LAYER_GLOBALAVGPOOL2D, x, -1);
		x = node(s, &n, DL_LAYER_DENSE, x, -1);
		s->layers[x].units = 10;
		s->layers[x].activation = DL_ACT_SOFTMAX;
		if (n != s->n_layers)
			die("resnet: wrong layer count", NULL);
	}
	else
		die("unknown network (mlp, cnn or resnet)", net);
	if (dl_model_spec_finalize(s, &err) != DL_OK)
		die("finalize", err.msg);
	return s;
}

/*
 * Training FLOPs per sample actually computed: forward, weight gradient,
 * and input gradient except for the first trainable layer (2 FLOP per
 * MAC; bias, activations and pooling not counted).
 */
static double
train_flop_per_sample(const DlModelSpec *s)
{
	double		total = 0.0;
	int			first = 1;

	for (int i = 0; i < s->n_layers; i++)
	{
		const DlLayer *l = &s->layers[i];
		double		macs;

		if (l->kind == DL_LAYER_DENSE)
			macs = (double) dl_shape_size(&l->in_shape) * (double) l->units;
		else if (l->kind == DL_LAYER_CONV2D)
			macs = (double) dl_shape_size(&l->out_shape) *
				l->kernel_size[0] * l->kernel_size[1] * (double) dl_shape_last(&l->in_shape);
		else
			continue;
		total += 2.0 * macs * (first ? 2 : 3);
		first = 0;
	}
	return total;
}

/*
 * GFLOP/s of C (M,N) = A (M,K) B (K,N), best of a few reps: OpenBLAS's
 * cblas_sgemm, or with engine set the engine's dl_sgemm (oneDNN's sgemm
 * when it is in use).
 */
static double
sgemm_gflops_of(int M, int N, int K, int transA, int engine)
{
	float	   *A = malloc((size_t) M * K * sizeof(float));
	float	   *Bm = malloc((size_t) K * N * sizeof(float));
	float	   *C = malloc((size_t) M * N * sizeof(float));
	double		flop = 2.0 * M * N * K;
	double		best = 0.0;
	int			reps = (int) (2e9 / flop) + 1;

	for (size_t i = 0; i < (size_t) M * K; i++)
		A[i] = (float) (i % 7) * 0.1f;
	for (size_t i = 0; i < (size_t) K * N; i++)
		Bm[i] = (float) (i % 5) * 0.1f;
	for (int t = 0; t < 5; t++)
	{
		double		t0 = cpu_s(),
					dt;

		for (int r = 0; r < reps; r++)
		{
			if (engine)
				dl_sgemm(transA != 0, false, M, N, K, 1.0f, A, transA ? M : K, Bm, N, 0.0f, C, N);
			else
				cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, CblasNoTrans,
							M, N, K, 1.0f, A, transA ? M : K, Bm, N, 0.0f, C, N);
		}
		dt = cpu_s() - t0;
		if (flop * reps / dt / 1e9 > best)
			best = flop * reps / dt / 1e9;
	}
	free(A);
	free(Bm);
	free(C);
	return best;
}

static double
sgemm_gflops(int M, int N, int K, int transA)
{
	return sgemm_gflops_of(M, N, K, transA, 0);
}

/* Wall and CPU timestamps taken between batches. */
typedef struct Stamps
{
	int64_t		n;
	double		t[MAX_STAMPS];
	double		c[MAX_STAMPS];
} Stamps;

static void
stamp(void *arg)
{
	Stamps	   *s = arg;

	if (s->n < MAX_STAMPS)
	{
		s->t[s->n] = now_s();
		s->c[s->n++] = cpu_s();
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, (size_t) n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int
main(int argc, char **argv)
{
	const char *dir = getenv("FASHION_DIR") ? getenv("FASHION_DIR") : "/usr/share/datasets/fashion-mnist";
	DlAllocator a = {bench_alloc, bench_free, NULL};
	const char *net,
			   *opt;
	int			epochs,
				wpe;
	float	   *xtr,
			   *ytr,
			   *xte,
			   *yte;
	int64_t		Ntr,
				Nte,
				n_batches;
	DlModelSpec *spec;
	DlOptimConfig oc;
	DlModel    *m;
	DlError		err;
	DlTrainConfig cfg;
	DlBatchStats st;
	static Stamps stamps;
	double	   *rates,
			   *crates;
	int			n_rates = 0;
	double		flop,
				sps,
				cps,
				sg_sq,
				sg_eng,
				sg_l1,
				sg_l1t,
				sg_l2;
	struct rusage ru;
	uint64_t	fnv = 1469598103934665603ULL;

	if (argc < 3)
	{
		fprintf(stderr, "usage: engine_bench mlp|cnn|resnet sgd|adam [EPOCHS [WINDOWS_PER_EPOCH]]\n");
		return 2;
	}
	net = argv[1];
	opt = argv[2];
	epochs = argc > 3 ? atoi(argv[3]) : (strcmp(net, "mlp") != 0 ? 1 : 5);
	wpe = argc > 4 ? atoi(argv[4]) : (strcmp(net, "mlp") != 0 ? 6 : 1);
	if (epochs < 1 || wpe < 1 || (epochs == 1 && wpe < 2))
		die("need EPOCHS >= 1, WINDOWS_PER_EPOCH >= 1, and >= 2 windows with one epoch", NULL);

	/* BENCH_BACKEND: the kernels, auto (default), openblas or onednn */
	if (getenv("BENCH_BACKEND") != NULL && strcmp(getenv("BENCH_BACKEND"), "openblas") == 0)
		dl_backend_set(DL_BACKEND_OPENBLAS);
	else if (getenv("BENCH_BACKEND") != NULL && strcmp(getenv("BENCH_BACKEND"), "onednn") == 0)
	{
		if (!dl_backend_onednn_available())
			die("BENCH_BACKEND=onednn, but the engine was built without oneDNN", NULL);
		dl_backend_set(DL_BACKEND_ONEDNN);
	}
	else if (getenv("BENCH_BACKEND") != NULL && strcmp(getenv("BENCH_BACKEND"), "auto") != 0)
		die("BENCH_BACKEND must be auto, openblas or onednn", getenv("BENCH_BACKEND"));
	printf("backend %s\n", dl_backend_uses_onednn() ? "onednn" : "openblas");
	printf("onednn_version %s\n", dl_backend_onednn_version());

	Ntr = load_split(dir, "train", strcmp(net, "resnet") == 0, &xtr, &ytr);
	/* BENCH_TRAIN_N: train on the first n samples only (short profiling runs) */
	if (getenv("BENCH_TRAIN_N") != NULL && atoll(getenv("BENCH_TRAIN_N")) >= BATCH &&
		atoll(getenv("BENCH_TRAIN_N")) < Ntr)
		Ntr = atoll(getenv("BENCH_TRAIN_N"));
	Nte = load_split(dir, "t10k", strcmp(net, "resnet") == 0, &xte, &yte);
	spec = make_spec(net, &a);
	if (strcmp(opt, "sgd") == 0)
	{
		dl_optim_config_default(&oc, DL_OPTIM_SGD);
		oc.lr = 0.05;
		oc.momentum = 0.9;
	}
	else if (strcmp(opt, "adam") == 0)
	{
		dl_optim_config_default(&oc, DL_OPTIM_ADAM);
		oc.lr = 0.001;
	}
	else
		die("unknown optimizer (sgd or adam)", opt);
	if (dl_model_create(spec, &oc, &a, &m, &err) != DL_OK ||
		dl_model_init_weights(m, getenv("BENCH_SEED") ? strtoull(getenv("BENCH_SEED"), NULL, 10) : SEED,
							  &err) != DL_OK)
		die("model", err.msg);

	/* sgemm reference rates, in this process, before training */
	sg_sq = sgemm_gflops(1024, 1024, 1024, 0);
	sg_eng = sgemm_gflops_of(1024, 1024, 1024, 0, 1);
	sg_l1 = sgemm_gflops(128, 256, 784, 0);	/* MLP layer 1 forward */
	sg_l1t = sgemm_gflops(784, 256, 128, 1);	/* its weight gradient */
	sg_l2 = sgemm_gflops(128, 128, 256, 0);

	memset(&cfg, 0, sizeof(cfg));
	cfg.loss = DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY;
	cfg.metric = DL_METRIC_ACCURACY;
	cfg.batch_size = BATCH;
	cfg.shuffle = true;
	cfg.between_batches = stamp;
	cfg.between_batches_arg = &stamps;
	n_batches = (Ntr + BATCH - 1) / BATCH;
	rates = malloc(sizeof(double) * (size_t) epochs * wpe);
	crates = malloc(sizeof(double) * (size_t) epochs * wpe);

	for (int e = 0; e < epochs; e++)
	{
		double		t0 = now_s(),
					t1;
		int64_t		per = (Ntr / BATCH) / wpe;	/* full batches per window */

		stamps.n = 0;
		stamp(&stamps);			/* t[0]: start; t[k]: before batch k (k >= 1) */
		memset(&st, 0, sizeof(st));
		if (dl_model_train_epoch(m, &cfg, xtr, ytr, Ntr, &st, &err) != DL_OK)
			die("train", err.msg);
		t1 = now_s();
		stamp(&stamps);			/* t[n_batches]: end */
		printf("epoch_s_%d %.3f\n", e + 1, t1 - t0);
		printf("train_loss_%d %.4f\n", e + 1, st.loss_sum / (double) st.n);
		if ((e == 0 && epochs > 1) || per < 1 || stamps.n != n_batches + 1)
			continue;
		/* windows of `per` full batches; the partial last batch is left out */
		for (int w = (e == 0 ? 1 : 0); w < wpe; w++)
		{
			int64_t		b0 = w * per,
						b1 = b0 + per;

			rates[n_rates] = (double) ((b1 - b0) * BATCH) / (stamps.t[b1] - stamps.t[b0]);
			crates[n_rates++] = (double) ((b1 - b0) * BATCH) / (stamps.c[b1] - stamps.c[b0]);
		}
	}
	if (n_rates == 0)
		die("no timing windows", NULL);
	sps = median(rates, n_rates);
	cps = median(crates, n_rates);

	memset(&st, 0, sizeof(st));
	cfg.between_batches = NULL;
	cfg.shuffle = false;
	cfg.batch_size = BATCH;
	if (dl_model_evaluate(m, &cfg, xte, yte, Nte, &st, &err) != DL_OK)
		die("evaluate", err.msg);

	for (size_t i = 0; i < dl_model_n_params(m); i++)
	{
		uint32_t	u;

		memcpy(&u, &dl_model_params(m)[i], 4);
		fnv = (fnv ^ u) * 1099511628211ULL;
	}
	getrusage(RUSAGE_SELF, &ru);
	flop = train_flop_per_sample(spec);

	printf("net %s\nopt %s\nepochs %d\ntiming_windows %d\n", net, opt, epochs, n_rates);
	printf("flop_per_sample %.0f\n", flop);
	printf("samples_per_s %.0f\n", sps);
	printf("samples_per_cpu_s %.0f\n", cps);
	printf("gflops %.2f\n", sps * flop / 1e9);
	printf("gflops_cpu %.2f\n", cps * flop / 1e9);
	printf("sgemm_gflops_1024sq %.2f\n", sg_sq);
	printf("sgemm_gflops_128x784x256 %.2f\n", sg_l1);
	printf("sgemm_gflops_784x128x256T %.2f\n", sg_l1t);
	printf("sgemm_gflops_128x256x128 %.2f\n", sg_l2);
	printf("pct_sgemm %.1f\n", 100.0 * sps * flop / 1e9 / sg_sq);
	printf("pct_sgemm_cpu %.1f\n", 100.0 * cps * flop / 1e9 / sg_sq);
	printf("engine_sgemm_gflops_1024sq %.2f\n", sg_eng);
	printf("pct_engine_sgemm_cpu %.1f\n", 100.0 * cps * flop / 1e9 / sg_eng);
	printf("peak_rss_mb %.1f\n", (double) ru.ru_maxrss / 1024.0);
	printf("test_acc %.4f\n", st.metric_sum / (double) st.n);
	printf("weights_fnv %016llx\n", (unsigned long long) fnv);

	dl_model_free(m);
	dl_model_spec_free(spec, &a);
	free(rates);
	free(crates);
	free(xtr);
	free(ytr);
	free(xte);
	free(yte);
	return 0;
}
