/*-------------------------------------------------------------------------
 *
 * pg_buffer.c
 *	  Decode packed BYTEA buffers (float32 / int16, little-endian) into
 *	  float arrays, and read shape columns.
 *
 * The packed format is fixed little-endian so that a table dumped on one
 * host loads on another.  NaN and infinite features are refused.
 *
 * IDENTIFICATION
 *	  src/pg/runtime/pg_buffer.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_buffer.h"

#include "catalog/pg_type.h"
#include "common/int.h"
#include "utils/lsyscache.h"

#include "madlib_dl/dl_buffer.h"
#include "pg_glue.h"

/*
 * Decoding is the engine's (src/engine/buffer.c, fuzzed by
 * test/fuzz/fuzz_buffer.c); this file sizes the output, allocates it in
 * cxt and turns a failure into an ERROR with the engine's message.
 */
static void
report_buffer_error(DlError *err, const char *what)
{
	if (err->code == DL_ERR_SHAPE || err->code == DL_ERR_DATA)
		dl_error_hint(err, "The %s buffer of the packed table is damaged or was not made by "
					  "training_preprocessor_dl; preprocess the data again.", what);
	dl_pg_report(err);
}

/*
 * The output of a buffer of len bytes and shape {n, width}: its length is
 * checked against the shape (dl_buffer_check_x, _target) before anything
 * is allocated.
 */
static float *
alloc_values(size_t len, int64 n, int64 width, bool y, MemoryContext cxt, const char *what)
{
	DlError		err;
	size_t		count;

	dl_error_clear(&err);
	if ((y ? dl_buffer_check_target(len, n, width, &count, &err) :
		 dl_buffer_check_x(len, n, width, &count, &err)) != DL_OK)
		report_buffer_error(&err, what);
	if (count * sizeof(float) > MaxAllocHugeSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("buffer shape {" INT64_FORMAT "," INT64_FORMAT "} is too large", n, width),
				 errhint("Preprocess the data with a smaller buffer_size.")));
	return MemoryContextAllocHuge(cxt, count > 0 ? count * sizeof(float) : 1);
}

float *
dl_pg_decode_x(bytea *x, int64 n, int64 row_size, MemoryContext cxt)
{
	float	   *out = alloc_values(VARSIZE_ANY_EXHDR(x), n, row_size, false, cxt,
									"independent variable");
	DlError		err;

	dl_error_clear(&err);
	if (dl_buffer_decode_x(out, (const uint8_t *) VARDATA_ANY(x), VARSIZE_ANY_EXHDR(x),
						   n, row_size, &err) != DL_OK)
		report_buffer_error(&err, "independent variable");
	return out;
}

float *
dl_pg_decode_y(bytea *y, int64 n, int64 n_classes, MemoryContext cxt)
{
	float	   *out = alloc_values(VARSIZE_ANY_EXHDR(y), n, n_classes, true, cxt,
									"dependent variable");
	DlError		err;

	dl_error_clear(&err);
	if (dl_buffer_decode_target(out, (const uint8_t *) VARDATA_ANY(y), VARSIZE_ANY_EXHDR(y),
								n, n_classes, &err) != DL_OK)
		report_buffer_error(&err, "dependent variable");
	return out;
}

int
dl_pg_read_shape(ArrayType *shape, int64 *dims, int max_dims, const char *what)
{
	Datum	   *elems;
	bool	   *nulls;
	int			count;

	if (ARR_ELEMTYPE(shape) != INT4OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s must be integer[]", what)));
	if (ARR_NDIM(shape) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("%s must be a one-dimensional array, got %d dimensions", what, ARR_NDIM(shape))));
	deconstruct_array(shape, INT4OID, 4, true, TYPALIGN_INT, &elems, &nulls, &count);
	if (count < 1 || count > max_dims)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("%s has %d values, expected 1 to %d", what, count, max_dims)));
	for (int i = 0; i < count; i++)
	{
		if (nulls[i] || DatumGetInt32(elems[i]) < 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("%s has a NULL or negative value at position %d", what, i + 1),
					 errhint("Preprocess the data again with training_preprocessor_dl.")));
		dims[i] = DatumGetInt32(elems[i]);
	}
	pfree(elems);
	pfree(nulls);
	return count;
}
