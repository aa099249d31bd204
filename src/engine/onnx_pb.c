/*-------------------------------------------------------------------------
 *
 * onnx_pb.c
 *	  The arena the ONNX converters allocate from, and protobuf-c's
 *	  allocator over it: every byte protobuf-c allocates while parsing a
 *	  file comes from the caller's allocator, counted against a limit.
 *
 * IDENTIFICATION
 *	  src/engine/onnx_pb.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "onnx_impl.h"

typedef struct ArenaBlock
{
	struct ArenaBlock *next;
	size_t		size;
	double		align_;			/* keeps the payload aligned for doubles */
} ArenaBlock;

void
dl_onnx_arena_init(DlOnnxArena *a, const DlAllocator *alloc, size_t limit)
{
	memset(a, 0, sizeof(*a));
	a->alloc = alloc;
	a->limit = limit;
}

void *
dl_onnx_arena_alloc(DlOnnxArena *a, size_t size)
{
	size_t		total;
	ArenaBlock *b;

	if (!dl_size_add(size, sizeof(ArenaBlock), &total) || total > DL_ALLOC_MAX ||
		a->total > a->limit || total > a->limit - a->total)
	{
		a->failed = true;
		a->over_limit = true;
		return NULL;
	}
	b = a->alloc->alloc(a->alloc->ctx, total);
	if (b == NULL)
	{
		a->failed = true;
		return NULL;
	}
	memset(b, 0, total);
	b->next = a->blocks;
	b->size = total;
	a->blocks = b;
	a->total += total;
	return (void *) (b + 1);
}

char *
dl_onnx_arena_strdup(DlOnnxArena *a, const char *s)
{
	size_t		n = strlen(s);
	char	   *p = dl_onnx_arena_alloc(a, n + 1);

	if (p != NULL)
		memcpy(p, s, n + 1);
	return p;
}

void
dl_onnx_arena_free(DlOnnxArena *a)
{
	ArenaBlock *b = a->blocks;

	while (b != NULL)
	{
		ArenaBlock *next = b->next;

		a->alloc->free(a->alloc->ctx, b);
		b = next;
	}
	a->blocks = NULL;
	a->total = 0;
}

static void *
pb_alloc(void *data, size_t size)
{
	return dl_onnx_arena_alloc((DlOnnxArena *) data, size);
}

static void
pb_free(void *data, void *ptr)
{
	/* freed with the arena */
}

ProtobufCAllocator
dl_onnx_pb_allocator(DlOnnxArena *a)
{
	ProtobufCAllocator pa;

	pa.alloc = pb_alloc;
	pa.free = pb_free;
	pa.allocator_data = a;
	return pa;
}

DlStatus
dl_onnx_arena_error(DlOnnxArena *a, DlError *err)
{
	if (a->over_limit)
		return dl_error_set(err, DL_ERR_LIMIT,
							"the ONNX model needs more than %zu bytes of memory", a->limit);
	return dl_error_set(err, DL_ERR_NO_MEMORY, "out of memory converting the ONNX model");
}
