/*-------------------------------------------------------------------------
 *
 * onnx_impl.h
 *	  Shared by onnx_export.c and the importer (onnx_import*.c): an arena over the
 *	  caller's allocator, and the ProtobufCAllocator made from it.
 *	  Internal to the engine.
 *
 * IDENTIFICATION
 *	  src/engine/onnx_impl.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_ONNX_IMPL_H
#define DL_ONNX_IMPL_H

#include <protobuf-c/protobuf-c.h>

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_status.h"
#include "onnx.pb-c.h"

/*
 * Every block the arena hands out is on one list, freed at once by
 * dl_onnx_arena_free; total counts the bytes, capped by limit.
 */
typedef struct DlOnnxArena
{
	const DlAllocator *alloc;
	void	   *blocks;			/* list of headers */
	size_t		total;
	size_t		limit;
	bool		failed;			/* an allocation was refused */
	bool		over_limit;		/* ... because of limit */
} DlOnnxArena;

void		dl_onnx_arena_init(DlOnnxArena *a, const DlAllocator *alloc, size_t limit);
void	   *dl_onnx_arena_alloc(DlOnnxArena *a, size_t size);	/* zeroed; NULL on failure */
char	   *dl_onnx_arena_strdup(DlOnnxArena *a, const char *s);
void		dl_onnx_arena_free(DlOnnxArena *a);

/* protobuf-c's allocator over the arena (its free is a no-op). */
ProtobufCAllocator dl_onnx_pb_allocator(DlOnnxArena *a);

/* The error to report when the arena refused an allocation. */
DlStatus	dl_onnx_arena_error(DlOnnxArena *a, DlError *err);

#endif							/* DL_ONNX_IMPL_H */
