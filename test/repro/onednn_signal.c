/*-------------------------------------------------------------------------
 *
 * onednn_signal.c
 *	  Standalone reproducer: oneDNN's sgemm corrupts the heap when signals
 *	  arrive during the call.  Why src/engine/backend.c blocks signals
 *	  around every oneDNN call.
 *
 * A no-op SIGALRM handler fires every 50 us while dnnl_sgemm runs
 * 16x1024x1024 products in a loop.  With Debian's libdnnl 2.6.3 on the
 * development machine glibc aborts within seconds ("corrupted size vs.
 * prev_size while consolidating", also with ONEDNN_MAX_CPU_ISA=AVX2);
 * with the argument "block" (signals blocked around each call) 20,000
 * calls and ~31,000 signals pass.  Not part of the test suite: it shows
 * a bug outside madlib_dl, for an upstream report.
 *
 *	 cc -O2 test/repro/onednn_signal.c -ldnnl -o /tmp/onednn_signal
 *	 OMP_NUM_THREADS=1 /tmp/onednn_signal         # aborts (exit 134)
 *	 OMP_NUM_THREADS=1 /tmp/onednn_signal block   # "done, N signals"
 *
 * IDENTIFICATION
 *	  test/repro/onednn_signal.c
 *
 *-------------------------------------------------------------------------
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <oneapi/dnnl/dnnl.h>

static volatile sig_atomic_t hits;

static void
on_alarm(int sig)
{
	(void) sig;
	hits++;
}

int
main(int argc, char **argv)
{
	int			block = argc > 1 && strcmp(argv[1], "block") == 0;
	struct sigaction sa;
	struct itimerval every = {{0, 50}, {0, 50}};
	const int	M = 16,
				N = 1024,
				K = 1024;
	float	   *A = malloc(sizeof(float) * M * K),
			   *B = malloc(sizeof(float) * K * N),
			   *C = malloc(sizeof(float) * M * N);

	if (A == NULL || B == NULL || C == NULL)
		return 2;
	for (long i = 0; i < (long) M * K; i++)
		A[i] = 1e-3f * (float) (i % 7);
	for (long i = 0; i < (long) K * N; i++)
		B[i] = 1e-3f * (float) (i % 5);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &every, NULL);
	for (int r = 0; r < 20000; r++)
	{
		sigset_t	all,
					old;
		void	   *p;

		if (block)
		{
			sigfillset(&all);
			sigprocmask(SIG_BLOCK, &all, &old);
		}
		if (dnnl_sgemm('N', 'N', M, N, K, 1.0f, A, K, B, N, 0.0f, C, N) != dnnl_success)
			return 3;
		if (block)
			sigprocmask(SIG_SETMASK, &old, NULL);
		/* the program's own heap traffic, as a server's */
		p = malloc(1000 + r % 5000);
		free(p);
	}
	printf("done, %d signals, C[0] = %g\n", (int) hits, C[0]);
	free(A);
	free(B);
	free(C);
	return 0;
}
