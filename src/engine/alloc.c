/*-------------------------------------------------------------------------
 *
 * alloc.c
 *	  Checked allocation through the caller's DlAllocator.
 *
 * IDENTIFICATION
 *	  src/engine/alloc.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "madlib_dl/dl_alloc.h"

void *
dl_alloc(const DlAllocator *a, size_t size, DlError *err)
{
	void	   *p;

	if (size > DL_ALLOC_MAX)
	{
		dl_error_set(err, DL_ERR_LIMIT, "allocation of %zu bytes exceeds the engine limit of %zu bytes",
					 size, (size_t) DL_ALLOC_MAX);
		return NULL;
	}
	if (size == 0)
		size = 1;
	p = a->alloc(a->ctx, size);
	if (p == NULL)
	{
		dl_error_set(err, DL_ERR_NO_MEMORY, "out of memory allocating %zu bytes", size);
		return NULL;
	}
	memset(p, 0, size);
	return p;
}

void *
dl_alloc_array(const DlAllocator *a, size_t count, size_t elem, DlError *err)
{
	size_t		size;

	if (!dl_size_mul(count, elem, &size))
	{
		dl_error_set(err, DL_ERR_LIMIT, "array of %zu elements of %zu bytes overflows size_t",
					 count, elem);
		return NULL;
	}
	return dl_alloc(a, size, err);
}

void
dl_free(const DlAllocator *a, void *ptr)
{
	if (ptr != NULL)
		a->free(a->ctx, ptr);
}
