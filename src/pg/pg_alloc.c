/*-------------------------------------------------------------------------
 *
 * pg_alloc.c
 *	  The engine's allocator inside PostgreSQL: palloc in a memory context.
 *
 * IDENTIFICATION
 *	  src/pg/pg_alloc.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

static void *
pg_ctx_alloc(void *ctx, size_t size)
{
	return MemoryContextAllocExtended((MemoryContext) ctx, size,
									  MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

static void
pg_ctx_free(void *ctx, void *ptr)
{
	if (ptr != NULL)
		pfree(ptr);
}

DlAllocator
dl_pg_allocator(MemoryContext cxt)
{
	DlAllocator a;

	a.alloc = pg_ctx_alloc;
	a.free = pg_ctx_free;
	a.ctx = cxt;
	return a;
}
