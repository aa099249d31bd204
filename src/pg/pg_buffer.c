/*-------------------------------------------------------------------------
 *
 * pg_buffer.c
 *	  Decode packed BYTEA buffers (float32 / int16, little-endian) into
 *	  float arrays, and read shape columns.
 *
 * The packed format is fixed little-endian so that a table dumped on one
 * host loads on another.  On little-endian hosts float32 decoding is one
 * memcpy; on big-endian hosts every value is byte-swapped.
 *
 * IDENTIFICATION
 *	  src/pg/pg_buffer.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_buffer.h"

#include "catalog/pg_type.h"
#include "common/int.h"
#include "utils/lsyscache.h"

/* n * width * elem_size with overflow checks; ERROR 54000 on overflow. */
static Size
buffer_bytes(int64 n, int64 width, int elem_size)
{
	int64		count;
	int64		bytes;

	if (n < 0 || width < 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("buffer shape {" INT64_FORMAT "," INT64_FORMAT "} is negative", n, width)));
	if (pg_mul_s64_overflow(n, width, &count) ||
		pg_mul_s64_overflow(count, elem_size, &bytes) ||
		(uint64) bytes > MaxAllocHugeSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("buffer shape {" INT64_FORMAT "," INT64_FORMAT "} is too large", n, width),
				 errhint("Preprocess the data with a smaller buffer_size.")));
	return (Size) bytes;
}

static void
check_length(Size have, Size want, int64 n, int64 width, const char *what)
{
	if (have != want)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("%s buffer holds %zu bytes, but its shape {" INT64_FORMAT "," INT64_FORMAT "} needs %zu",
						what, have, n, width, want),
				 errhint("The packed table is damaged or was not made by training_preprocessor_dl; preprocess the data again.")));
}

float *
dl_pg_decode_x(bytea *x, int64 n, int64 row_size, MemoryContext cxt)
{
	Size		want = buffer_bytes(n, row_size, sizeof(float));
	Size		have = VARSIZE_ANY_EXHDR(x);
	float	   *out;

	check_length(have, want, n, row_size, "independent variable");
	out = MemoryContextAllocHuge(cxt, want > 0 ? want : 1);
#ifdef WORDS_BIGENDIAN
	{
		const uint8 *src = (const uint8 *) VARDATA_ANY(x);
		Size		count = want / 4;

		for (Size i = 0; i < count; i++)
		{
			uint32		v = (uint32) src[4 * i] | ((uint32) src[4 * i + 1] << 8) |
				((uint32) src[4 * i + 2] << 16) | ((uint32) src[4 * i + 3] << 24);

			memcpy(&out[i], &v, sizeof(float));
		}
	}
#else
	memcpy(out, VARDATA_ANY(x), want);
#endif
	return out;
}

float *
dl_pg_decode_y(bytea *y, int64 n, int64 n_classes, MemoryContext cxt)
{
	Size		want = buffer_bytes(n, n_classes, sizeof(int16));
	Size		have = VARSIZE_ANY_EXHDR(y);
	Size		count = want / 2;
	const uint8 *src = (const uint8 *) VARDATA_ANY(y);
	float	   *out;

	check_length(have, want, n, n_classes, "dependent variable");
	(void) buffer_bytes(n, n_classes, sizeof(float));
	out = MemoryContextAllocHuge(cxt, count > 0 ? count * sizeof(float) : 1);
	for (Size i = 0; i < count; i++)
	{
		int16		v = (int16) ((uint16) src[2 * i] | ((uint16) src[2 * i + 1] << 8));

		out[i] = (float) v;
	}
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
