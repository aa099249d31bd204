/*-------------------------------------------------------------------------
 *
 * fma_peak.c
 *	  The single-core float32 FMA peak of the machine it runs on, measured:
 *	  the denominator of "percent of peak" in bench/all.sh (issue 31).
 *
 * Twelve independent chains of fused multiply-adds on the widest vectors
 * the compiler targets (built with -march=native: AVX-512 where the CPU
 * has it, else AVX2/FMA), so that neither latency nor loads limit the
 * rate; each FMA counts 2 flops per lane.  The best of 7 runs of about
 * 0.2 s each is printed, one "key value" line each:
 *	 fma_peak_gflops  the measured peak, one thread
 *	 vector_bits      512, 256 or 128 (what was compiled in)
 * Never a test: it prints what it measured.
 *
 * IDENTIFICATION
 *	  bench/fma_peak.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <time.h>

#if defined(__AVX512F__)
#define VBITS 512
#elif defined(__AVX2__) || defined(__AVX__)
#define VBITS 256
#else
#define VBITS 128
#endif
#define LANES (VBITS / 32)
#define CHAINS 12			/* c0 .. c11 below */

typedef float vf __attribute__((vector_size(LANES * 4)));

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* iters x CHAINS fused multiply-adds of LANES floats; returns a checksum */
static float __attribute__((noinline))
fma_chains(long iters, float seed)
{
	vf			m,
				a;
	vf			c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11;

	for (int l = 0; l < LANES; l++)
	{
		m[l] = 0.999999f;
		a[l] = seed * 1e-7f;
	}
	c0 = a; c1 = a * 2; c2 = a * 3; c3 = a * 4; c4 = a * 5; c5 = a * 6;
	c6 = a * 7; c7 = a * 8; c8 = a * 9; c9 = a * 10; c10 = a * 11; c11 = a * 12;
	for (long i = 0; i < iters; i++)
	{
		/* one FMA per lane each (-march=native has FMA) */
		c0 = c0 * m + a; c1 = c1 * m + a; c2 = c2 * m + a; c3 = c3 * m + a;
		c4 = c4 * m + a; c5 = c5 * m + a; c6 = c6 * m + a; c7 = c7 * m + a;
		c8 = c8 * m + a; c9 = c9 * m + a; c10 = c10 * m + a; c11 = c11 * m + a;
	}
	{
		vf			t = c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7 + c8 + c9 + c10 + c11;
		float		s = 0;

		for (int l = 0; l < LANES; l++)
			s += t[l];
		return s;
	}
}

int
main(void)
{
	long		iters = 1000000;
	double		best = 0;
	float		sink = 0;

	/* size a run to about 0.2 s */
	for (;;)
	{
		double		t0 = now();

		sink += fma_chains(iters, 1.0f);
		if (now() - t0 > 0.05)
			break;
		iters *= 2;
	}
	iters *= 4;
	for (int r = 0; r < 7; r++)
	{
		double		t0 = now();
		double		dt;
		double		gf;

		sink += fma_chains(iters, (float) r);
		dt = now() - t0;
		gf = (double) iters * CHAINS * LANES * 2 / dt / 1e9;
		if (gf > best)
			best = gf;
	}
	printf("fma_peak_gflops %.2f\n", best);
	printf("vector_bits %d\n", VBITS);
	printf("checksum %g\n", (double) sink);
	return 0;
}
