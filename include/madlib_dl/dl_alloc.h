/*-------------------------------------------------------------------------
 *
 * dl_alloc.h
 *	  The allocator every engine call takes from its caller.
 *
 * The engine never calls malloc.  Inside PostgreSQL the allocator is
 * palloc in a memory context chosen by the glue (so an ereport unwinds
 * everything); in unit tests it is malloc with a counter, so a leak fails
 * the test.  alloc must return NULL on failure (never longjmp) and memory
 * aligned for float and double.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_alloc.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_ALLOC_H
#define DL_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "madlib_dl/dl_status.h"

typedef struct DlAllocator
{
	void	   *(*alloc) (void *ctx, size_t size);	/* NULL on failure */
	void		(*free) (void *ctx, void *ptr);		/* ptr may be NULL */
	void	   *ctx;
} DlAllocator;

/* Largest single allocation the engine asks for (1 TiB, a sanity bound). */
#define DL_ALLOC_MAX ((size_t) 1 << 40)

/* Overflow-checked size arithmetic: return false on overflow. */
static inline bool
dl_size_mul(size_t a, size_t b, size_t *out)
{
	if (a != 0 && b > SIZE_MAX / a)
		return false;
	*out = a * b;
	return true;
}

static inline bool
dl_size_add(size_t a, size_t b, size_t *out)
{
	if (b > SIZE_MAX - a)
		return false;
	*out = a + b;
	return true;
}

/*
 * Allocate size bytes, zeroed.  On failure returns NULL and sets err to
 * DL_ERR_NO_MEMORY (or DL_ERR_LIMIT when size exceeds DL_ALLOC_MAX).
 * size 0 allocates 1 byte.
 */
void	   *dl_alloc(const DlAllocator *a, size_t size, DlError *err);

/* Allocate count * elem bytes, zeroed, with overflow check (DL_ERR_LIMIT). */
void	   *dl_alloc_array(const DlAllocator *a, size_t count, size_t elem, DlError *err);

/* Free memory from dl_alloc / dl_alloc_array.  ptr may be NULL. */
void		dl_free(const DlAllocator *a, void *ptr);

#endif							/* DL_ALLOC_H */
