/*-------------------------------------------------------------------------
 *
 * test_signals.c
 *	  Unit tests: the signal window around oneDNN calls (backend.c) and
 *	  the signal masks of the helper threads OpenBLAS and oneDNN start.
 *
 * Inside PostgreSQL the engine's allocator is palloc, whose ERROR would
 * longjmp out of a window and leave the backend's signals blocked, and
 * PostgreSQL's signal handlers are written for the backend's own thread.
 * So: every engine call returns with the caller's signal mask, whatever
 * the path (first call, scratch growth, allocation failure, refusal,
 * backend switched off); the allocator is never called inside a window
 * (test_allocator counts such calls; assert_no_leaks fails on them, here
 * and in every other test file); and every thread of the process but
 * the main one blocks every signal, so that a signal sent to the process
 * waits for the main thread.
 *
 * The thread test runs first: it starts OpenBLAS's pool itself, with
 * signals unblocked, as loading the library does in a server process,
 * and forks a child, as the postmaster does, before anything runs
 * oneDNN.  Linux only (/proc/self/task).
 *
 * IDENTIFICATION
 *	  test/unit/test_signals.c
 *
 *-------------------------------------------------------------------------
 */
#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit_util.h"
#include "madlib_dl/dl_backend.h"
#include "madlib_dl/dl_rng.h"
#include "dl_kernels.h"

/* OpenBLAS: the thread count, and whether this is its pthreads build */
extern void openblas_set_num_threads(int num_threads);
extern int	blas_thread_shutdown_(void) __attribute__((weak));

#define THREADS 3

static float *
fnew(int64_t n, DlRng *r)
{
	float	   *p = malloc((size_t) (n > 0 ? n : 1) * sizeof(float));

	if (p == NULL)
		abort();				/* a test's own buffer */
	for (int64_t i = 0; i < n; i++)
		p[i] = r != NULL ? (float) (2.0 * dl_rng_uniform(r) - 1.0) : 0.0f;
	return p;
}

static pid_t
my_tid(void)
{
	return (pid_t) syscall(SYS_gettid);
}

/* The signals a thread can block: all but SIGKILL, SIGSTOP (and libc's). */
static void
blockable(sigset_t *s)
{
	sigfillset(s);
	sigdelset(s, SIGKILL);
	sigdelset(s, SIGSTOP);
}

/*
 * The threads of this process other than the calling one: how many, and
 * how many of them leave a blockable signal unblocked (the first such
 * one's tid and mask into *bad_tid, *bad_mask).
 */
static int
helper_threads(int *unblocked, long *bad_tid, unsigned long long *bad_mask)
{
	DIR		   *d = opendir("/proc/self/task");
	struct dirent *e;
	sigset_t	want;
	int			n = 0;

	*unblocked = 0;
	if (d == NULL)
		return -1;
	blockable(&want);
	*unblocked = 0;
	while ((e = readdir(d)) != NULL)
	{
		char		path[300],
					line[256];
		FILE	   *f;
		unsigned long long blk = 0;
		bool		found = false;
		long		tid = atol(e->d_name);

		if (tid <= 0 || tid == (long) my_tid())
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%ld/status", tid);
		f = fopen(path, "r");
		if (f == NULL)
			continue;			/* the thread ended meanwhile */
		while (fgets(line, sizeof(line), f) != NULL)
			if (sscanf(line, "SigBlk: %llx", &blk) == 1)
				found = true;
		fclose(f);
		n++;
		if (!found)
			blk = 0;
		for (int s = 1; s <= 64 && s < NSIG; s++)
			if (sigismember(&want, s) == 1 && !(blk & (1ULL << (s - 1))))
			{
				if (*unblocked == 0)
				{
					*bad_tid = tid;
					*bad_mask = blk;
				}
				(*unblocked)++;
				break;
			}
	}
	closedir(d);
	return n;
}

static void
assert_helpers_blocked(const char *when)
{
	int			unblocked;
	long		tid = 0;
	unsigned long long mask = 0;

	if (helper_threads(&unblocked, &tid, &mask) < 0)
		fail_msg("%s: cannot read /proc/self/task", when);
	if (unblocked != 0)
		fail_msg("%s: %d helper threads leave signals unblocked (thread %ld: SigBlk %016llx)",
				 when, unblocked, tid, mask);
}

/* Where the handlers ran. */
static volatile sig_atomic_t usr1_count;
static volatile sig_atomic_t usr1_other_thread;
static volatile sig_atomic_t alrm_count;
static volatile sig_atomic_t alrm_other_thread;
static pid_t main_tid;

static void
on_usr1(int sig)
{
	usr1_count++;
	if (my_tid() != main_tid)
		usr1_other_thread++;
}

static void
on_alrm(int sig)
{
	alrm_count++;
	if (my_tid() != main_tid)
		alrm_other_thread++;
}

/*
 * Everything in the engine that may start threads, with the threads set;
 * false on a failure.  No cmocka assertions: a forked child runs it.
 */
static bool
run_every_kernel(void)
{
	enum
	{
		N = 384
	};
	DlRng		rng;
	DlConvGeom	g;
	TestAllocCounter counter;
	DlAllocator alloc = test_allocator(&counter);
	DlScratch	scratch = {&alloc, NULL, 0, SIZE_MAX};
	DlError		err;
	bool		ok = true;
	float	   *A,
			   *B,
			   *C,
			   *x,
			   *K,
			   *b,
			   *y,
			   *dy,
			   *dx,
			   *dK,
			   *db,
			   *work;

	dl_rng_seed(&rng, 3);
	A = fnew(N * N, &rng);
	B = fnew(N * N, &rng);
	C = fnew(N * N, NULL);
	/* the bench CNN's second convolution, batch 8 */
	dl_conv_geom_init(&g, 8, 13, 13, 32, 64, 3, 3, 1, 1, DL_PADDING_VALID);
	x = fnew(8 * 13 * 13 * 32, &rng);
	K = fnew(9 * 32 * 64, &rng);
	b = fnew(64, &rng);
	y = fnew(8 * 11 * 11 * 64, NULL);
	dy = fnew(8 * 11 * 11 * 64, &rng);
	dx = fnew(8 * 13 * 13 * 32, NULL);
	dK = fnew(9 * 32 * 64, NULL);
	db = fnew(64, NULL);
	work = fnew((int64_t) dl_conv2d_workspace_floats(&g), NULL);

	dl_sgemm(false, false, N, N, N, 1.0f, A, N, B, N, 0.0f, C, N);
	dl_sgemm_openblas(false, true, N, N, N, 1.0f, A, N, B, N, 1.0f, C, N);
	dl_conv2d_forward_act(y, work, x, K, b, DL_ACT_RELU, &g);
	dl_conv2d_backward(dx, dK, db, work, dy, x, K, &g);
	if (dl_backend_onednn_available())
		ok = dl_conv2d_dnnl_forward(y, x, K, b, DL_ACT_RELU, &g, &scratch, &err) == DL_OK &&
			dl_conv2d_dnnl_backward(dx, dK, db, dy, x, K, &g, &scratch, &err) == DL_OK;
	dl_free(&alloc, scratch.p);
	ok = ok && counter.live == 0 && counter.in_window == 0;
	free(A);
	free(B);
	free(C);
	free(x);
	free(K);
	free(b);
	free(y);
	free(dy);
	free(dx);
	free(dK);
	free(db);
	free(work);
	return ok;
}

/*
 * With THREADS threads, after every kernel has run: each helper thread
 * blocks every signal; a signal sent to the process while the main
 * thread blocks it waits for the main thread; timer signals during the
 * kernels all run on the main thread.
 */
static void
test_helper_threads(void **state)
{
	struct sigaction sa;
	sigset_t	usr1,
				pending;
	int			unblocked,
				n;
	long		tid;
	unsigned long long mask;
	struct itimerval every = {{0, 200}, {0, 200}};
	struct itimerval off = {{0, 0}, {0, 0}};
	struct timespec pause = {0, 50 * 1000 * 1000};
	struct timespec tick = {0, 10 * 1000 * 1000};

	main_tid = my_tid();
	dl_backend_set(DL_BACKEND_AUTO);

	/*
	 * OpenBLAS's pool started with signals unblocked, as when a server
	 * process loads the library (the test runs with OPENBLAS_NUM_THREADS=1,
	 * which starts no pool at load).  The check must see it.
	 */
	openblas_set_num_threads(THREADS);
	if (blas_thread_shutdown_ != NULL)
	{
		/*
		 * OpenBLAS's pthreads build: its pool is there, unblocked once its
		 * threads have started (a thread is created with every signal
		 * blocked and sets its inherited mask as it starts).
		 */
		for (int w = 0; w < 200; w++)
		{
			n = helper_threads(&unblocked, &tid, &mask);
			if (unblocked == THREADS - 1)
				break;
			nanosleep(&tick, NULL);
		}
		assert_int_equal(n, THREADS - 1);
		assert_int_equal(unblocked, THREADS - 1);
	}

	dl_backend_set_threads(THREADS);
	assert_int_equal(dl_backend_threads(), THREADS);
	nanosleep(&pause, NULL);
	assert_helpers_blocked("after dl_backend_set_threads");

	/*
	 * A forked child, as a backend forked by the postmaster: no pool (its
	 * threads do not survive the fork; OpenBLAS's fork handler shuts the
	 * parent's down too), so the kernels start it again.  Forked before
	 * anything here ran oneDNN: libgomp's pool does not survive a fork
	 * either, and a child of a parent that used it hangs.
	 */
	{
		pid_t		child = fork();
		int			status;

		assert_true(child >= 0);
		if (child == 0)
		{
			int			bad;
			long		t;
			unsigned long long m;

			if (!run_every_kernel())
				_exit(2);
			nanosleep(&pause, NULL);
			if (helper_threads(&bad, &t, &m) < 0)
				_exit(3);
			if (bad != 0)
			{
				fprintf(stderr, "forked child: %d helper threads leave signals unblocked "
						"(thread %ld: SigBlk %016llx)\n", bad, t, m);
				_exit(1);
			}
			_exit(0);
		}
		assert_int_equal(waitpid(child, &status, 0), child);
		assert_true(WIFEXITED(status));
		if (WEXITSTATUS(status) != 0)
			fail_msg("the forked child failed (exit %d)", WEXITSTATUS(status));
	}

	assert_true(run_every_kernel());
	n = helper_threads(&unblocked, &tid, &mask);
	/* OpenBLAS's pool, and oneDNN's OpenMP threads, exist */
	if (blas_thread_shutdown_ != NULL)
		assert_true(n >= THREADS - 1);
	if (dl_backend_onednn_available())
		assert_true(n >= (blas_thread_shutdown_ != NULL ? 2 : 1) * (THREADS - 1));
	assert_helpers_blocked("after every kernel ran with 3 threads");

	/* more threads later: the new ones are blocked too */
	dl_backend_set_threads(THREADS + 1);
	assert_true(run_every_kernel());
	assert_helpers_blocked("after every kernel ran with 4 threads");
	dl_backend_set_threads(THREADS);

	/* a signal to the process, the main thread blocking it: it waits */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	assert_int_equal(sigprocmask(SIG_BLOCK, &usr1, NULL), 0);
	usr1_count = usr1_other_thread = 0;
	assert_int_equal(kill(getpid(), SIGUSR1), 0);
	nanosleep(&pause, NULL);
	assert_int_equal(usr1_count, 0);
	assert_int_equal(sigpending(&pending), 0);
	assert_int_equal(sigismember(&pending, SIGUSR1), 1);
	assert_int_equal(sigprocmask(SIG_UNBLOCK, &usr1, NULL), 0);
	assert_int_equal(usr1_count, 1);
	assert_int_equal(usr1_other_thread, 0);

	/* timer signals while the kernels run: all on the main thread */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alrm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
	alrm_count = alrm_other_thread = 0;
	assert_int_equal(setitimer(ITIMER_REAL, &every, NULL), 0);
	for (int r = 0; r < 5; r++)
		assert_true(run_every_kernel());
	assert_int_equal(setitimer(ITIMER_REAL, &off, NULL), 0);
	signal(SIGALRM, SIG_DFL);
	signal(SIGUSR1, SIG_DFL);
	assert_true(alrm_count > 0);
	assert_int_equal(alrm_other_thread, 0);

	dl_backend_set_threads(1);
	assert_helpers_blocked("at the end");
}

/* The caller's mask now, as a comparable set of the blockable signals. */
static bool
same_mask(const sigset_t *a, const sigset_t *b)
{
	for (int s = 1; s < NSIG; s++)
		if ((sigismember(a, s) == 1) != (sigismember(b, s) == 1))
			return false;
	return true;
}

static void
assert_mask_is(const sigset_t *want, const char *what, int k)
{
	sigset_t	now;

	assert_int_equal(sigprocmask(SIG_BLOCK, NULL, &now), 0);
	if (!same_mask(&now, want))
		fail_msg("%s (%d): the signal mask differs from the caller's after the call", what, k);
}

/*
 * Every oneDNN entry point, on every path, returns with the caller's mask
 * (here with SIGUSR2 blocked by the caller beforehand, which must stay
 * blocked) and never calls the allocator inside its window.
 */
static void
test_window_restored(void **state)
{
	DlRng		rng;
	DlConvGeom	g,
				empty;
	sigset_t	caller,
				usr2;
	float	   *x,
			   *K,
			   *b,
			   *y,
			   *dy,
			   *dx,
			   *dK,
			   *db;
	int			failures = 0,
				successes = 0;

	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	assert_int_equal(sigprocmask(SIG_BLOCK, &usr2, NULL), 0);
	assert_int_equal(sigprocmask(SIG_BLOCK, NULL, &caller), 0);

	dl_rng_seed(&rng, 11);
	dl_conv_geom_init(&g, 4, 13, 13, 32, 64, 3, 3, 1, 1, DL_PADDING_VALID);
	x = fnew(4 * 13 * 13 * 32, &rng);
	K = fnew(9 * 32 * 64, &rng);
	b = fnew(64, &rng);
	y = fnew(4 * 11 * 11 * 64, NULL);
	dy = fnew(4 * 11 * 11 * 64, &rng);
	dx = fnew(4 * 13 * 13 * 32, NULL);
	dK = fnew(9 * 32 * 64, NULL);
	db = fnew(64, NULL);

	for (int threads = 1; threads <= 2; threads++)
	{
		dl_backend_set_threads(threads);
		assert_mask_is(&caller, "dl_backend_set_threads", threads);

		/* each allocation failing in turn, then none (fail_after < 0) */
		for (int64_t fail = 0; fail <= 8; fail++)
		{
			TestAllocCounter counter;
			DlAllocator alloc = test_allocator(&counter);
			DlScratch	scratch = {&alloc, NULL, 0, SIZE_MAX};
			DlError		err;
			DlStatus	st1,
						st2,
						st3;

			counter.fail_after = fail < 8 ? fail : -1;
			dl_backend_set(DL_BACKEND_AUTO);
			st1 = dl_conv2d_dnnl_forward(y, x, K, b, DL_ACT_RELU, &g, &scratch, &err);
			assert_mask_is(&caller, "forward", (int) fail);
			st2 = dl_conv2d_dnnl_backward(dx, dK, db, dy, x, K, &g, &scratch, &err);
			assert_mask_is(&caller, "backward", (int) fail);
			st3 = dl_conv2d_dnnl_backward(NULL, dK, NULL, dy, x, K, &g, &scratch, &err);
			assert_mask_is(&caller, "backward, weights only", (int) fail);
			if (!dl_backend_onednn_available())
			{
				assert_int_equal(st1, DL_ERR_UNSUPPORTED);
				assert_int_equal(st2, DL_ERR_UNSUPPORTED);
				assert_int_equal(st3, DL_ERR_UNSUPPORTED);
			}
			else
			{
				DlStatus	sts[3] = {st1, st2, st3};

				for (int i = 0; i < 3; i++)
				{
					if (sts[i] == DL_OK)
						successes++;
					else
					{
						assert_int_equal(sts[i], DL_ERR_NO_MEMORY);
						failures++;
					}
				}
			}

			/* the same calls again: the scratch fits, no allocation */
			if (counter.fail_after < 0 && dl_backend_onednn_available())
			{
				int64_t		before = counter.total;

				assert_int_equal(dl_conv2d_dnnl_forward(y, x, K, b, DL_ACT_RELU, &g, &scratch, &err),
								 DL_OK);
				assert_int_equal(dl_conv2d_dnnl_backward(dx, dK, db, dy, x, K, &g, &scratch, &err),
								 DL_OK);
				assert_int_equal(counter.total, before);
				assert_mask_is(&caller, "again", (int) fail);
			}

			/* an empty geometry, refused inside the window */
			dl_conv_geom_init(&empty, 0, 13, 13, 32, 64, 3, 3, 1, 1, DL_PADDING_VALID);
			assert_int_equal(dl_conv2d_dnnl_forward(y, x, K, b, DL_ACT_RELU, &empty, &scratch, &err),
							 DL_ERR_UNSUPPORTED);
			assert_mask_is(&caller, "forward, refused", (int) fail);
			assert_int_equal(dl_conv2d_dnnl_backward(dx, dK, db, dy, x, K, &empty, &scratch, &err),
							 DL_ERR_UNSUPPORTED);
			assert_mask_is(&caller, "backward, refused", (int) fail);

			/* switched off */
			dl_backend_set(DL_BACKEND_OPENBLAS);
			assert_int_equal(dl_conv2d_dnnl_forward(y, x, K, b, DL_ACT_RELU, &g, &scratch, &err),
							 DL_ERR_UNSUPPORTED);
			assert_mask_is(&caller, "forward, switched off", (int) fail);
			dl_backend_set(DL_BACKEND_AUTO);

			dl_free(&alloc, scratch.p);
			assert_no_leaks(&counter);
		}

		/* the products, with each backend */
		for (int k = 0; k < 2; k++)
		{
			dl_backend_set(k == 0 ? DL_BACKEND_AUTO : DL_BACKEND_OPENBLAS);
			dl_sgemm(false, true, 44, 64, 121, 1.0f, dy, 121, dx, 121, 0.0f, y, 64);
			assert_mask_is(&caller, "dl_sgemm", k);
			dl_sgemm_openblas(true, false, 64, 44, 121, 1.0f, dy, 64, dx, 44, 1.0f, y, 44);
			assert_mask_is(&caller, "dl_sgemm_openblas", k);
		}
		dl_backend_set(DL_BACKEND_AUTO);
	}
	dl_backend_set_threads(1);
	if (dl_backend_onednn_available())
	{
		/* the injected failures hit the scratch growth, and calls passed */
		assert_true(failures > 0);
		assert_true(successes > 0);
	}
	assert_int_equal(sigprocmask(SIG_UNBLOCK, &usr2, NULL), 0);
	free(x);
	free(K);
	free(b);
	free(y);
	free(dy);
	free(dx);
	free(dK);
	free(db);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		/* first: it starts OpenBLAS's pool before the engine sets threads */
		cmocka_unit_test(test_helper_threads),
		cmocka_unit_test(test_window_restored),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
