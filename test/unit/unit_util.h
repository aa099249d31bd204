/*-------------------------------------------------------------------------
 *
 * unit_util.h
 *	  Shared helpers for the engine's cmocka tests.
 *
 * A counting malloc allocator (leaks fail the test, and so does a call
 * made inside a signal window, where the server's palloc must never run:
 * backend.c), a failing allocator (for out-of-memory paths), closeness
 * checks, and fixture loading.
 * Every test file includes this after the cmocka prerequisites.
 *
 * IDENTIFICATION
 *	  test/unit/unit_util.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef UNIT_UTIL_H
#define UNIT_UTIL_H

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "madlib_dl/dl_alloc.h"

typedef struct TestAllocCounter
{
	int64_t		live;			/* allocations not yet freed */
	int64_t		total;			/* allocations made */
	int64_t		fail_after;		/* >= 0: the allocation with this index fails */
	size_t		bytes_live;
	size_t		bytes_peak;
	sigset_t	mask;			/* the signal mask when the allocator was made */
	int64_t		in_window;		/* calls (alloc or free) with more signals blocked */
} TestAllocCounter;

/*
 * A malloc-backed allocator counting into *counter (reset to zero).  Each
 * call checks the thread's signal mask against the one of this call: a
 * call with more signals blocked came from inside a signal window.
 */
DlAllocator test_allocator(TestAllocCounter *counter);

/*
 * Fails the test if any allocation made through counter is still live,
 * or if the allocator was called inside a signal window.
 */
#define assert_no_leaks(counter) \
	do { \
		if ((counter)->live != 0) \
			fail_msg("%lld allocations leaked", (long long) (counter)->live); \
		if ((counter)->in_window != 0) \
			fail_msg("%lld allocator calls with signals blocked", \
					 (long long) (counter)->in_window); \
	} while (0)

/* Whether the calling thread blocks a signal that mask does not. */
bool		signals_blocked_beyond(const sigset_t *mask);

/* |a - b| <= atol + rtol * |b|, else fail with a message naming what. */
void		assert_close_msg(double a, double b, double rtol, double atol, const char *what,
							 const char *file, int line);
#define assert_close(a, b, rtol, atol) \
	assert_close_msg((a), (b), (rtol), (atol), #a, __FILE__, __LINE__)

/* Relative L2 error ||a - b|| / max(||b||, tiny) over n values. */
double		rel_l2_error_f(const float *a, const float *b, size_t n);
double		rel_l2_error_fd(const float *a, const double *b, size_t n);

/*
 * Read a whole file from the fixtures directory ($TEST_FIXTURES, default
 * test/unit/fixtures) into a malloc'd NUL-terminated buffer; fails the
 * test if missing.  *len may be NULL.  Free with free().
 */
char	   *read_fixture(const char *name, size_t *len);

#endif							/* UNIT_UTIL_H */
