/*-------------------------------------------------------------------------
 *
 * fuzz_util.h
 *	  Shared pieces of the libFuzzer targets: a counting allocator that
 *	  fails the run on a leak, and checks that abort with a message.
 *
 * The targets are test code, not engine code: they may print and abort,
 * which is how libFuzzer learns that an input found a bug.  json-c's own
 * malloc'd tree is covered by LeakSanitizer (-fsanitize=address).
 *
 * IDENTIFICATION
 *	  test/fuzz/fuzz_util.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_status.h"

typedef struct FuzzAllocCounter
{
	int64_t		live;			/* allocations not yet freed */
	int64_t		total;			/* allocations made */
	int64_t		fail_after;		/* >= 0: the allocation with this index fails */
	size_t		bytes_live;
} FuzzAllocCounter;

/* Refuse single allocations above this: keeps hostile sizes from OOMing. */
#define FUZZ_ALLOC_LIMIT ((size_t) 256 << 20)

/* Every allocation carries its size in a 16-byte prefix. */
static void *
fuzz_alloc(void *ctx, size_t size)
{
	FuzzAllocCounter *c = ctx;
	size_t	   *p;

	if (size > FUZZ_ALLOC_LIMIT)
		return NULL;
	if (c->fail_after >= 0 && c->total == c->fail_after)
	{
		c->total++;
		return NULL;
	}
	c->total++;
	p = malloc(size + 16);
	if (p == NULL)
		return NULL;
	p[0] = size;
	c->live++;
	c->bytes_live += size;
	return (char *) p + 16;
}

static void
fuzz_free(void *ctx, void *ptr)
{
	FuzzAllocCounter *c = ctx;
	size_t	   *p;

	if (ptr == NULL)
		return;
	p = (size_t *) ((char *) ptr - 16);
	c->live--;
	c->bytes_live -= p[0];
	free(p);
}

static inline DlAllocator
fuzz_allocator(FuzzAllocCounter *c)
{
	DlAllocator a = {fuzz_alloc, fuzz_free, c};

	c->live = 0;
	c->total = 0;
	c->fail_after = -1;
	c->bytes_live = 0;
	return a;
}

/* Abort (a crash libFuzzer records) with a message. */
#define FUZZ_FAIL(...) \
	do { \
		fprintf(stderr, "FUZZ FAILURE %s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fprintf(stderr, "\n"); \
		abort(); \
	} while (0)

#define FUZZ_CHECK(cond, ...) \
	do { \
		if (!(cond)) \
			FUZZ_FAIL(__VA_ARGS__); \
	} while (0)

/* Fail the run when anything allocated through c is still live. */
#define FUZZ_NO_LEAKS(c) \
	FUZZ_CHECK((c)->live == 0, "%lld allocations (%zu bytes) leaked", \
			   (long long) (c)->live, (c)->bytes_live)

/* Whether buf (len bytes) is valid UTF-8 (no overlongs, no surrogates). */
static inline bool
fuzz_utf8_valid(const uint8_t *buf, size_t len)
{
	size_t		i = 0;

	while (i < len)
	{
		uint8_t		c = buf[i];
		size_t		n;
		uint32_t	cp;

		if (c < 0x80)
		{
			i++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF)
			n = 1, cp = c & 0x1F;
		else if (c >= 0xE0 && c <= 0xEF)
			n = 2, cp = c & 0x0F;
		else if (c >= 0xF0 && c <= 0xF4)
			n = 3, cp = c & 0x07;
		else
			return false;
		for (size_t j = 1; j <= n; j++)
		{
			if (i + j >= len || (buf[i + j] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (buf[i + j] & 0x3F);
		}
		if ((n == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
			(n == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
			return false;
		i += n + 1;
	}
	return true;
}

/*
 * An engine error must be well formed: a known code, a non-empty
 * message not starting with an uppercase letter, and not ending with a
 * period unless the input holds one (messages quote user text) or it is
 * the " ..." that marks a quoted value cut short.  When
 * the input is valid UTF-8, so must the message and hint be: they go to
 * a PostgreSQL client.  input may be NULL (binary input: no text checks).
 */
static inline void
fuzz_check_error_in(DlStatus st, const DlError *err, const uint8_t *input, size_t len)
{
	size_t		n = 0;

	FUZZ_CHECK(st > DL_OK && st <= DL_ERR_INTERNAL, "bad status %d", (int) st);
	FUZZ_CHECK(st != DL_ERR_INTERNAL, "internal error: %s", err->msg);
	FUZZ_CHECK(err->code == st, "err->code %d but status %d", (int) err->code, (int) st);
	while (n < DL_ERROR_MSG_MAX && err->msg[n] != '\0')
		n++;
	FUZZ_CHECK(n > 0 && n < DL_ERROR_MSG_MAX, "empty or unterminated message");
	FUZZ_CHECK(!(err->msg[0] >= 'A' && err->msg[0] <= 'Z'), "message starts uppercase: %s",
			   err->msg);
	FUZZ_CHECK(err->msg[n - 1] != '.' || (input != NULL && memchr(input, '.', len) != NULL) ||
			   (n >= 4 && memcmp(err->msg + n - 4, " ...", 4) == 0),
			   "message ends with a period: %s", err->msg);
	if (input != NULL && fuzz_utf8_valid(input, len))
	{
		FUZZ_CHECK(fuzz_utf8_valid((const uint8_t *) err->msg, n),
				   "message is not valid UTF-8: %s", err->msg);
		FUZZ_CHECK(fuzz_utf8_valid((const uint8_t *) err->hint, strnlen(err->hint, DL_ERROR_MSG_MAX)),
				   "hint is not valid UTF-8: %s", err->hint);
	}
}

static inline void
fuzz_check_error(DlStatus st, const DlError *err)
{
	fuzz_check_error_in(st, err, NULL, 0);
}

#endif							/* FUZZ_UTIL_H */
