/*-------------------------------------------------------------------------
 *
 * pg_buffer.h
 *	  Decode the packed buffers of a preprocessed table into float arrays.
 *
 * A preprocessed (packed) table holds, per buffer, the independent
 * variable as little-endian float32 (n, dims...) and the dependent
 * variable as little-endian int16 one-hot (n, num_classes), both as BYTEA,
 * with their shapes in INT[] columns.  These functions turn one buffer
 * into plain C float arrays, on any host byte order.
 *
 * IDENTIFICATION
 *	  src/pg/runtime/pg_buffer.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_BUFFER_H
#define PG_BUFFER_H

#include "postgres.h"

#include "utils/array.h"
#include "utils/memutils.h"

/*
 * Decode x (n samples of row_size float32 each) into a new float array
 * (n, row_size) allocated in cxt.  x may be a packed (short-header)
 * varlena but must not be compressed or external: pass the result of
 * DatumGetByteaPP.  ERROR 22000 when the byte length is not
 * 4 * n * row_size, 54000 when the size overflows.
 */
float	   *dl_pg_decode_x(bytea *x, int64 n, int64 row_size, MemoryContext cxt);

/*
 * Decode y (n samples of n_classes int16 each, usually one-hot, or of
 * n_classes float32 numeric targets: the length says which) into a new
 * float array (n, n_classes) allocated in cxt.  Same rules as
 * dl_pg_decode_x, with 2 or 4 bytes per value.
 */
float	   *dl_pg_decode_y(bytea *y, int64 n, int64 n_classes, MemoryContext cxt);

/*
 * Read a shape column value: an INT[] without NULLs, of 1..8 dimensions
 * values, each >= 0.  Fills dims and returns the number of values.  what
 * names the column in messages.  ERROR 22000 otherwise.
 */
int			dl_pg_read_shape(ArrayType *shape, int64 *dims, int max_dims, const char *what);

#endif							/* PG_BUFFER_H */
