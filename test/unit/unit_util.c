/*-------------------------------------------------------------------------
 *
 * unit_util.c
 *	  Shared helpers for the engine's cmocka tests.
 *
 * IDENTIFICATION
 *	  test/unit/unit_util.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"

typedef struct AllocHeader
{
	size_t		size;
	size_t		pad;			/* keeps the payload 16-byte aligned */
} AllocHeader;

bool
signals_blocked_beyond(const sigset_t *mask)
{
	sigset_t	now;

	if (sigprocmask(SIG_BLOCK, NULL, &now) != 0)
		fail_msg("sigprocmask failed");
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&now, s) == 1 && sigismember(mask, s) != 1)
			return true;
	return false;
}

static void *
counting_alloc(void *ctx, size_t size)
{
	TestAllocCounter *c = ctx;
	AllocHeader *h;

	if (signals_blocked_beyond(&c->mask))
		c->in_window++;

	if (c->fail_after >= 0 && c->total >= c->fail_after)
	{
		c->total++;
		return NULL;
	}
	h = malloc(sizeof(AllocHeader) + size);
	if (h == NULL)
		return NULL;
	h->size = size;
	c->live++;
	c->total++;
	c->bytes_live += size;
	if (c->bytes_live > c->bytes_peak)
		c->bytes_peak = c->bytes_live;
	return h + 1;
}

static void
counting_free(void *ctx, void *ptr)
{
	TestAllocCounter *c = ctx;
	AllocHeader *h;

	if (signals_blocked_beyond(&c->mask))
		c->in_window++;
	if (ptr == NULL)
		return;
	h = (AllocHeader *) ptr - 1;
	c->live--;
	c->bytes_live -= h->size;
	free(h);
}

DlAllocator
test_allocator(TestAllocCounter *counter)
{
	DlAllocator a;

	memset(counter, 0, sizeof(*counter));
	counter->fail_after = -1;
	if (sigprocmask(SIG_BLOCK, NULL, &counter->mask) != 0)
		fail_msg("sigprocmask failed");
	a.alloc = counting_alloc;
	a.free = counting_free;
	a.ctx = counter;
	return a;
}

void
assert_close_msg(double a, double b, double rtol, double atol, const char *what,
				 const char *file, int line)
{
	if (!(fabs(a - b) <= atol + rtol * fabs(b)))
		fail_msg("%s:%d: %s = %.9g, expected %.9g (rtol %g, atol %g)", file, line, what, a, b,
				 rtol, atol);
}

double
rel_l2_error_f(const float *a, const float *b, size_t n)
{
	double		num = 0,
				den = 0;

	for (size_t i = 0; i < n; i++)
	{
		double		d = (double) a[i] - (double) b[i];

		num += d * d;
		den += (double) b[i] * (double) b[i];
	}
	return sqrt(num) / fmax(sqrt(den), 1e-30);
}

double
rel_l2_error_fd(const float *a, const double *b, size_t n)
{
	double		num = 0,
				den = 0;

	for (size_t i = 0; i < n; i++)
	{
		double		d = (double) a[i] - b[i];

		num += d * d;
		den += b[i] * b[i];
	}
	return sqrt(num) / fmax(sqrt(den), 1e-30);
}

char *
read_fixture(const char *name, size_t *len)
{
	const char *dir = getenv("TEST_FIXTURES");
	char		path[1024];
	FILE	   *f;
	long		n;
	char	   *buf;

	if (dir == NULL)
		dir = "test/unit/fixtures";
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (f == NULL)
		fail_msg("cannot open fixture %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t) n + 1);
	if (buf == NULL || fread(buf, 1, (size_t) n, f) != (size_t) n)
		fail_msg("cannot read fixture %s", path);
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = (size_t) n;
	return buf;
}
