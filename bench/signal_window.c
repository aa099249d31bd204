/*-------------------------------------------------------------------------
 *
 * signal_window.c
 *	  How long a signal waits for the engine's signal window (backend.c):
 *	  the worst delay a cancel or terminate sees inside one oneDNN call.
 *
 *	 make -C bench out/signal_window && OPENBLAS_NUM_THREADS=1 \
 *	   bench/out/signal_window [BATCH ...]
 *
 * For each kind of call, on the shapes of the benchmarks (bench CNN:
 * Conv2D 28x28x1->32 and 13x13x32->64, 3x3; MLP: 784->256) at batch 128
 * (the benchmarks' batch) or each BATCH given, the calls run in a loop for
 * $BENCH_SECONDS (default 2) while a second thread, which blocks every
 * signal, sends SIGUSR1 to the process at random moments (0-1 ms after the
 * last one was handled).  Only the main thread can take it, and only
 * outside a window; the handler records how long after the kill() it ran.
 * Prints one line per kind:
 *	 kind K batch B threads T first_call_ms X calls N call_ms_median X
 *	   call_ms_max X signals S delay_ms_median X delay_ms_p99 X
 *	   delay_ms_max X
 * call_ms (the calls after the first) bounds the window from above (a
 * call is one window, but for the instants between its oneDNN
 * executions); the first call of a geometry in a process also creates
 * (JIT-compiles) its primitives inside the window and grows the scratch
 * outside it.  delay_ms is what a signal actually waited, the first call
 * and scheduling included: compare with the kind "busy", a loop of plain
 * arithmetic with no window.  The thread count is $BENCH_THREADS
 * (default 1, as madlib_dl.blas_threads).
 * Never a test.  Needs a build with oneDNN.
 *
 * IDENTIFICATION
 *	  bench/signal_window.c
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_backend.h"
#include "dl_kernels.h"

#define MAX_SAMPLES 100000

static double seconds = 2.0;

static int64_t
now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t) t.tv_sec * 1000000000 + t.tv_nsec;
}

/* 0: nothing outstanding; else when the outstanding signal was sent */
static atomic_llong sent_ns;
static atomic_int stop_sender;
static double delays[MAX_SAMPLES];
static volatile sig_atomic_t n_delays;

static void
on_usr1(int sig)
{
	long long s = atomic_load(&sent_ns);

	(void) sig;
	if (s != 0)
	{
		if (n_delays < MAX_SAMPLES)
			delays[n_delays++] = (double) (now_ns() - s) / 1e6;
		atomic_store(&sent_ns, 0);
	}
}

static void *
sender(void *arg)
{
	unsigned	seed = 12345;

	(void) arg;
	while (!atomic_load(&stop_sender))
	{
		struct timespec pause = {0, (long) (rand_r(&seed) % 1000) * 1000};

		nanosleep(&pause, NULL);
		if (atomic_load(&sent_ns) == 0)
		{
			atomic_store(&sent_ns, now_ns());
			kill(getpid(), SIGUSR1);
		}
	}
	return NULL;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return x < y ? -1 : x > y;
}

static double
pct(double *v, int n, double p)
{
	if (n == 0)
		return 0.0;
	qsort(v, (size_t) n, sizeof(double), cmp_double);
	return v[(int) ((n - 1) * p + 0.5)];
}

static float *
filled(size_t n)
{
	float	   *p = malloc((n > 0 ? n : 1) * sizeof(float));

	if (p == NULL)
	{
		fprintf(stderr, "signal_window: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		p[i] = (float) ((i * 7) % 13) / 13.0f - 0.5f;
	return p;
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

typedef enum Kind
{
	BUSY,
	CONV_FORWARD,
	CONV_BACKWARD_DATA,
	CONV_BACKWARD_WEIGHTS,
	CONV_BACKWARD_ALL,
	GEMM
} Kind;

typedef struct Case
{
	const char *name;
	Kind		kind;
	int64_t		H,
				W,
				C,
				OC;				/* convolutions: 3x3, stride 1, valid */
	bool		ta;				/* gemm: op(A) (B or K, M), B (K, N) */
	int64_t		M,
				N,
				K;				/* gemm; 0: the batch */
} Case;

static void
run_case(const Case *c, int64_t batch)
{
	DlAllocator a = {bench_alloc, bench_free, NULL};
	DlScratch	scratch = {&a, NULL, 0, SIZE_MAX};
	DlConvGeom	g;
	size_t		nx = 1,
				ny = 1,
				nk = 1,
				na = 1,
				nb = 1,
				nc = 1;
	int64_t		M = c->M ? c->M : batch,
				N = c->N,
				K = c->K ? c->K : batch;
	float	   *x,
			   *dx,
			   *y,
			   *dy,
			   *Kw,
			   *dK,
			   *bias,
			   *db,
			   *A,
			   *B,
			   *C;
	double	   *calls = malloc(MAX_SAMPLES * sizeof(double));
	int			n_calls = 0;
	double		first_ms = 0;
	int64_t		t_end;
	pthread_t	th;
	sigset_t	all,
				old;
	volatile double sink = 0;
	DlError		err;

	if (calls == NULL)
		exit(1);
	if (c->kind != GEMM && c->kind != BUSY)
	{
		dl_conv_geom_init(&g, batch, c->H, c->W, c->C, c->OC, 3, 3, 1, 1, DL_PADDING_VALID);
		nx = (size_t) (g.B * g.H * g.W * g.C);
		ny = (size_t) (g.B * g.OH * g.OW * g.OC);
		nk = (size_t) (9 * g.C * g.OC);
	}
	if (c->kind == GEMM)
	{
		na = (size_t) (M * K);
		nb = (size_t) (K * N);
		nc = (size_t) (M * N);
	}
	x = filled(nx);
	dx = filled(nx);
	y = filled(ny);
	dy = filled(ny);
	Kw = filled(nk);
	dK = filled(nk);
	bias = filled(c->kind == GEMM || c->kind == BUSY ? 1 : (size_t) c->OC);
	db = filled(c->kind == GEMM || c->kind == BUSY ? 1 : (size_t) c->OC);
	A = filled(na);
	B = filled(nb);
	C = filled(nc);

	n_delays = 0;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	atomic_store(&stop_sender, 0);
	atomic_store(&sent_ns, 0);
	if (pthread_create(&th, NULL, sender, NULL) != 0)
		exit(1);
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	t_end = now_ns() + (int64_t) (seconds * 1e9);
	for (int r = 0; now_ns() < t_end || r < 20; r++)
	{
		int64_t		t0 = now_ns();
		DlStatus	st = DL_OK;

		switch (c->kind)
		{
			case BUSY:
				for (int i = 0; i < 1000000; i++)
					sink += (double) i * 1e-9;
				break;
			case CONV_FORWARD:
				st = dl_conv2d_dnnl_forward(y, x, Kw, bias, DL_ACT_RELU, &g, &scratch, &err);
				break;
			case CONV_BACKWARD_DATA:
				st = dl_conv2d_dnnl_backward(dx, NULL, NULL, dy, x, Kw, &g, &scratch, &err);
				break;
			case CONV_BACKWARD_WEIGHTS:
				st = dl_conv2d_dnnl_backward(NULL, dK, db, dy, x, Kw, &g, &scratch, &err);
				break;
			case CONV_BACKWARD_ALL:
				st = dl_conv2d_dnnl_backward(dx, dK, db, dy, x, Kw, &g, &scratch, &err);
				break;
			case GEMM:
				dl_sgemm(c->ta, false, M, N, K, 1.0f, A, c->ta ? M : K, B, N, 0.0f, C, N);
				break;
		}
		if (st != DL_OK)
		{
			fprintf(stderr, "signal_window: %s: %s\n", c->name, err.msg);
			exit(1);
		}
		/* the first call also grows the scratch and creates the primitives */
		if (r == 0)
			first_ms = (double) (now_ns() - t0) / 1e6;
		else if (n_calls < MAX_SAMPLES)
			calls[n_calls++] = (double) (now_ns() - t0) / 1e6;
	}
	atomic_store(&stop_sender, 1);
	pthread_join(th, NULL);

	{
		int			n = n_delays;
		double		cmed = pct(calls, n_calls, 0.5),
					cmax = pct(calls, n_calls, 1.0),
					dmed = pct(delays, n, 0.5),
					d99 = pct(delays, n, 0.99),
					dmax = pct(delays, n, 1.0);

		printf("kind %s batch %lld threads %d first_call_ms %.2f calls %d call_ms_median %.2f "
			   "call_ms_max %.2f signals %d delay_ms_median %.3f delay_ms_p99 %.2f "
			   "delay_ms_max %.2f\n",
			   c->name, (long long) batch, dl_backend_threads(), first_ms, n_calls, cmed, cmax,
			   n, dmed, d99, dmax);
		fflush(stdout);
	}
	free(scratch.p);
	free(calls);
	free(x);
	free(dx);
	free(y);
	free(dy);
	free(Kw);
	free(dK);
	free(bias);
	free(db);
	free(A);
	free(B);
	free(C);
}

int
main(int argc, char **argv)
{
	static const Case cases[] = {
		{"busy", BUSY},
		{"conv_13x13x32->64_forward", CONV_FORWARD, 13, 13, 32, 64},
		{"conv_13x13x32->64_backward_data", CONV_BACKWARD_DATA, 13, 13, 32, 64},
		{"conv_13x13x32->64_backward_weights", CONV_BACKWARD_WEIGHTS, 13, 13, 32, 64},
		{"conv_13x13x32->64_backward_all", CONV_BACKWARD_ALL, 13, 13, 32, 64},
		{"conv_28x28x1->32_forward", CONV_FORWARD, 28, 28, 1, 32},
		{"conv_28x28x1->32_backward_weights", CONV_BACKWARD_WEIGHTS, 28, 28, 1, 32},
		{"gemm_Bx784@784x256", GEMM, 0, 0, 0, 0, false, 0, 256, 784},
		{"gemm_(784xB)^T@Bx256", GEMM, 0, 0, 0, 0, true, 784, 256, 0},
	};
	struct sigaction sa;
	const char *env = getenv("BENCH_THREADS");
	int			n_batches = argc > 1 ? argc - 1 : 1;

	if (!dl_backend_onednn_available())
	{
		fprintf(stderr, "signal_window: built without oneDNN\n");
		return 2;
	}
	if (getenv("BENCH_SECONDS") != NULL && atof(getenv("BENCH_SECONDS")) > 0)
		seconds = atof(getenv("BENCH_SECONDS"));
	dl_backend_set(DL_BACKEND_ONEDNN);
	dl_backend_set_threads(env != NULL ? atoi(env) : 1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	printf("onednn_version %s\n", dl_backend_onednn_version());
	for (int i = 0; i < n_batches; i++)
	{
		int64_t		batch = argc > 1 ? atoll(argv[i + 1]) : 128;

		if (batch < 1)
		{
			fprintf(stderr, "signal_window: bad batch %s\n", argv[i + 1]);
			return 2;
		}
		for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
			run_case(&cases[k], batch);
	}
	return 0;
}
