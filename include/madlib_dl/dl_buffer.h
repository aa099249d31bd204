/*-------------------------------------------------------------------------
 *
 * dl_buffer.h
 *	  Decode the packed buffers of a preprocessed table into float arrays.
 *
 * training_preprocessor_dl packs, per buffer of n samples:
 *	 x  n * row float32 values, little-endian, row-major (n, row);
 *	 y  n * k int16 values, little-endian (n, k), usually one-hot; or,
 *	    for a numeric (regression) target, n * k float32 values.
 * These functions check the byte length against the shape and decode on
 * any host byte order.  They are the server-independent core of the
 * PostgreSQL glue (src/pg/runtime/pg_buffer.c) and are fuzzed on their own
 * (test/fuzz/fuzz_buffer.c).
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_buffer.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_BUFFER_H
#define DL_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include "madlib_dl/dl_status.h"

/*
 * Number of values, n * width, of a buffer of n rows of width values,
 * checking that neither is negative (DL_ERR_SHAPE) and that the count
 * times elem_size bytes fits in size_t and DL_ALLOC_MAX (DL_ERR_LIMIT).
 * Callers use it to size the output of the decoders.
 */
DlStatus	dl_buffer_count(int64_t n, int64_t width, size_t elem_size, size_t *count,
							DlError *err);

/*
 * Length before allocation: check that a buffer of len bytes holds n rows
 * of row (x) or k (a dependent variable: int16 or float32 values) values,
 * as the decoders below do, without reading it, and return the number of
 * values in *count.  Callers check this before they allocate the output,
 * so that a hostile shape ({2147483647,3} with a 1-byte buffer) is
 * refused (DL_ERR_SHAPE, or DL_ERR_LIMIT on overflow) without asking for
 * memory.
 */
DlStatus	dl_buffer_check_x(size_t len, int64_t n, int64_t row, size_t *count, DlError *err);
DlStatus	dl_buffer_check_target(size_t len, int64_t n, int64_t k, size_t *count,
								   DlError *err);

/*
 * Decode x: buf (len bytes) holds n * row little-endian float32 values.
 * out (n, row) receives them.  DL_ERR_SHAPE when len is not 4 * n * row
 * (the message names both sizes) or a dimension is negative, DL_ERR_LIMIT
 * when the size overflows, DL_ERR_DATA naming the row and column
 * (1-based) of the first NaN or infinite value.  out may be partly
 * written on error.
 */
DlStatus	dl_buffer_decode_x(float *out, const uint8_t *buf, size_t len, int64_t n,
							   int64_t row, DlError *err);

/*
 * Decode y: buf (len bytes) holds n * k little-endian int16 values.
 * out (n, k) receives them as floats (any int16 value is accepted).
 * DL_ERR_SHAPE when len is not 2 * n * k or a dimension is negative,
 * DL_ERR_LIMIT when the size overflows.
 */
DlStatus	dl_buffer_decode_y(float *out, const uint8_t *buf, size_t len, int64_t n,
							   int64_t k, DlError *err);

/*
 * Decode a dependent variable, which the preprocessors write as int16
 * (class indicators, as dl_buffer_decode_y) or, for numeric targets, as
 * float32 (n * k little-endian values, as dl_buffer_decode_x): len says
 * which, 2 or 4 bytes per value.  The errors of those functions, with
 * DL_ERR_SHAPE when len is neither size.
 */
DlStatus	dl_buffer_decode_target(float *out, const uint8_t *buf, size_t len, int64_t n,
									int64_t k, DlError *err);

#endif							/* DL_BUFFER_H */
