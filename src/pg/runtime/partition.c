/*-------------------------------------------------------------------------
 *
 * partition.c
 *	  A segment's partition of a packed table: its directory of buffers,
 *	  held in memory (cached) or read a block at a time from the table
 *	  (streamed), under the per-segment budget madlib_dl.partition_memory.
 *
 * The directory is read once per call: one read-only query for the
 * segment's buffers in buffer_id order, with their shapes (checked as
 * they come) and their x and y values as stored.  A value stored out of
 * line stays a TOAST pointer (a few bytes); a value stored in the row is
 * copied (at most about 2 kB).  Nothing is decoded yet.  The Greenplum
 * aggregate (gp_agg.c) makes a directory from the values it was given.
 *
 * Then the partition is placed (dl_seg_partitions_place): cached, every
 * buffer decoded into one float array as the steps want it, or streamed:
 * the steps read the rows of each block of the one shuffle (dl_epoch.h)
 * when its window comes, into a window-sized buffer.  An uncompressed
 * out-of-line value (what the preprocessor writes: STORAGE EXTERNAL) is
 * read as a slice, only the TOAST chunks of the block; any other value
 * is detoasted whole for each block (slow when compressed: documented).
 * Both ways decode with the same functions, so a step gives the same
 * bytes whatever the placement.
 *
 * TOAST pointers are read under the snapshot of the call (the leader's
 * query, restored in the workers) while the table is locked by the
 * caller; they are valid until the call ends and never kept beyond it.
 *
 * IDENTIFICATION
 *	  src/pg/runtime/partition.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "common/int.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/datum.h"
#include "utils/memutils.h"

#include "madlib_dl/dl_buffer.h"

#include "pg_buffer.h"
#include "pg_glue.h"
#include "pg_limits.h"
#include "pg_util.h"
#include "segments.h"

/* Bytes of one slice when a whole buffer is read (caching). */
#define DL_SEG_SLICE_BYTES (8 * 1024 * 1024)

/* Names the partition and the buffer being read in error messages. */
typedef struct ReadContext
{
	const DlSegPartition *p;
	int32		buffer_id;		/* -1: none yet */
	int64		offset;			/* first row read */
	int64		n;				/* rows read, 0: the whole directory */
} ReadContext;

static void
read_error_callback(void *arg)
{
	ReadContext *rc = (ReadContext *) arg;

	if (rc->buffer_id < 0)
		errcontext("reading table %s for segment %d", rc->p->relname, rc->p->seg);
	else if (rc->n > 0)
		errcontext("reading rows " INT64_FORMAT " to " INT64_FORMAT " of buffer %d of table %s for segment %d",
				   rc->offset + 1, rc->offset + rc->n, rc->buffer_id, rc->p->relname, rc->p->seg);
	else
		errcontext("reading buffer %d of table %s for segment %d",
				   rc->buffer_id, rc->p->relname, rc->p->seg);
}

/* a * b, ERROR 54000 naming what on overflow or a negative product. */
static int64
checked_mul(int64 a, int64 b, const char *what)
{
	int64		r;

	if (pg_mul_s64_overflow(a, b, &r) || r < 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s is too large: " INT64_FORMAT " x " INT64_FORMAT, what, a, b),
				 errhint("Preprocess with more segments or a smaller buffer_size.")));
	return r;
}

/* Is v an out-of-line value stored without compression (readable in slices)? */
static bool
value_sliceable(Datum d)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(d);
	struct varatt_external ext;

	if (!VARATT_IS_EXTERNAL_ONDISK(v))
		return false;
	VARATT_EXTERNAL_GET_POINTER(ext, v);
	/* not compressed: stored size == raw size (sign-clean) */
	return (int64) VARATT_EXTERNAL_GET_EXTSIZE(ext) == (int64) ext.va_rawsize - VARHDRSZ;
}

/* Bytes of the directory's copy of a value. */
static Size
value_held(Datum d)
{
	return VARSIZE_ANY(DatumGetPointer(d));
}

/* ERROR for a damaged buffer: err (from the decoders), with the hint of pg_buffer.c. */
static void
report_buffer(DlError *err, const char *what)
{
	if (err->code == DL_ERR_SHAPE || err->code == DL_ERR_DATA)
		dl_error_hint(err, "The %s buffer of the packed table is damaged or was not made by "
					  "training_preprocessor_dl; preprocess the data again.", what);
	dl_pg_report(err);
}

/*
 * Check one buffer's raw sizes (what its values decode to) against its
 * shape: 22000 as the decoders say it otherwise.
 */
static void
check_sizes(const DlSegPartition *p, const DlSegBuffer *b)
{
	struct
	{
		Datum		d;
		int64		width;
		int			elem;
		const char *what;
	}			v[2] = {
		{b->x, p->x_width, sizeof(float), "independent variable"},
		{b->y, p->y_width, sizeof(int16), "dependent variable"},
	};

	for (int i = 0; i < 2; i++)
	{
		int64		want = checked_mul(checked_mul(b->n, v[i].width, "buffer"), v[i].elem, "buffer");
		int64		have = (int64) toast_raw_datum_size(v[i].d) - VARHDRSZ;
		DlError		err;

		if (have == want)
			continue;
		dl_error_clear(&err);
		dl_error_set(&err, DL_ERR_SHAPE, "%s buffer holds %lld bytes, but its shape {%lld,%lld} needs %lld",
					 v[i].what, (long long) have, (long long) b->n, (long long) v[i].width,
					 (long long) want);
		report_buffer(&err, v[i].what);
	}
}

/* Blocks of the one shuffle, and the totals, once the directory is complete. */
static void
directory_finish(DlSegPartition *p)
{
	int64	   *rows = palloc(sizeof(int64) * Max(p->nbuf, 1));
	DlAllocator alloc = dl_pg_allocator(p->cxt);
	DlError		err;
	MemoryContext old = MemoryContextSwitchTo(p->cxt);

	p->n = 0;
	for (int i = 0; i < p->nbuf; i++)
	{
		p->bufs[i].start = p->n;
		if (pg_add_s64_overflow(p->n, p->bufs[i].n, &p->n))
			ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
							errmsg("too many rows in one segment")));
		rows[i] = p->bufs[i].n;
	}
	dl_error_clear(&err);
	dl_pg_check(dl_epoch_blocks(rows, p->nbuf, p->x_width, &alloc, &p->blocks, &p->n_blocks, &err),
				&err);
	MemoryContextSwitchTo(old);
	pfree(rows);
}

/* Add buffer b to p's directory (its values already copied into p->cxt). */
static void
directory_add(DlSegPartition *p, const DlSegBuffer *b)
{
	if (p->nbuf == p->cap)
	{
		int			cap = p->cap == 0 ? 16 : p->cap * 2;

		if ((Size) cap > MaxAllocSize / sizeof(DlSegBuffer))
			ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
							errmsg("too many buffers in one segment"),
							errhint("Preprocess with a larger buffer_size.")));
		p->bufs = p->bufs == NULL ? MemoryContextAlloc(p->cxt, sizeof(DlSegBuffer) * cap)
			: repalloc(p->bufs, sizeof(DlSegBuffer) * cap);
		p->cap = cap;
	}
	check_sizes(p, b);
	p->bufs[p->nbuf++] = *b;
	p->dir_bytes += sizeof(DlSegBuffer) + value_held(b->x) + value_held(b->y);
}

/* An empty partition in cxt, named for messages. */
static void
partition_init(DlSegPartition *p, const char *relname, int seg, MemoryContext cxt)
{
	memset(p, 0, sizeof(*p));
	p->loaded = true;
	p->cxt = cxt;
	p->relname = MemoryContextStrdup(cxt, relname);
	p->seg = seg;
	p->x_width = -1;
	p->y_width = -1;
}

/* Column col (1-based) of an SPI row; ERROR 22004 naming it when NULL. */
static Datum
row_value(HeapTuple tup, TupleDesc desc, int col, const char *name)
{
	bool		isnull;
	Datum		d = SPI_getbinval(tup, desc, col, &isnull);

	if (isnull)
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						errmsg("column \"%s\" is NULL", name),
						errhint("Preprocess the data again with training_preprocessor_dl.")));
	return d;
}

/*
 * The rows of one buffer from its shapes {n, dims...} and {n, classes},
 * setting the partition's widths from the first buffer: 22000 when the
 * shapes disagree or differ from the partition's.  xs, ys name them.
 */
static int64
shape_rows(DlSegPartition *p, ArrayType *x_shape, ArrayType *y_shape, const char *xs,
		   const char *ys)
{
	int64		xd[DL_MAX_RANK + 1];
	int64		yd[2];
	int			nx = dl_pg_read_shape(x_shape, xd, DL_MAX_RANK + 1, xs);
	int			ny = dl_pg_read_shape(y_shape, yd, 2, ys);
	int64		w = 1;

	if (nx < 2 || ny != 2 || xd[0] != yd[0])
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("buffer shapes do not match: %s has %d values and %s has %d, with " INT64_FORMAT " and " INT64_FORMAT " rows",
						xs, nx, ys, ny, xd[0], ny > 0 ? yd[0] : (int64) 0),
				 errhint("Preprocess the data again with training_preprocessor_dl.")));
	for (int i = 1; i < nx; i++)
		w = checked_mul(w, xd[i], "sample size");
	if (p->x_width < 0)
	{
		p->x_width = w;
		p->y_width = yd[1];
	}
	else if (w != p->x_width || yd[1] != p->y_width)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("buffers have different sample sizes: " INT64_FORMAT " and " INT64_FORMAT " values, " INT64_FORMAT " and " INT64_FORMAT " classes",
						p->x_width, w, p->y_width, yd[1]),
				 errhint("Preprocess the data again with training_preprocessor_dl.")));
	return xd[0];
}

void
dl_seg_partition_read(DlSegPartition *p, Oid rel, const char *x_col, const char *y_col,
					  bool by_dist_key, int seg, int nseg, MemoryContext cxt)
{
	char	   *xs = psprintf("%s_shape", x_col);
	char	   *ys = psprintf("%s_shape", y_col);
	char	   *relsql = dl_pg_relation_sql_name(rel);
	Oid			argtypes[2] = {INT4OID, INT4OID};
	Datum		args[2] = {Int32GetDatum(seg), Int32GetDatum(nseg)};
	ReadContext rc;
	ErrorContextCallback errcb;
	Portal		portal;
	char	   *sql;

	partition_init(p, relsql, seg, cxt);
	rc.p = p;
	rc.buffer_id = -1;
	rc.offset = rc.n = 0;
	errcb.callback = read_error_callback;
	errcb.arg = &rc;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "madlib_dl: SPI_connect failed");
	sql = psprintf("SELECT %s, %s, buffer_id, %s, %s FROM %s WHERE %s ORDER BY buffer_id",
				   quote_identifier(xs), quote_identifier(ys), quote_identifier(x_col),
				   quote_identifier(y_col), relsql,
				   by_dist_key ? "__dist_key__ = $1" : "buffer_id % $2 = $1");
	/* not parallel (options 0): the leader, in parallel mode, starts no nested workers */
	portal = SPI_cursor_open_with_args(NULL, sql, 2, argtypes, args, NULL, true, 0);
	for (;;)
	{
		HeapTuple	tup;
		TupleDesc	desc;
		DlSegBuffer b;
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		SPI_cursor_fetch(portal, true, 64);
		if (SPI_processed == 0)
			break;
		desc = SPI_tuptable->tupdesc;
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			tup = SPI_tuptable->vals[i];
			memset(&b, 0, sizeof(b));
			b.buffer_id = rc.buffer_id = DatumGetInt32(row_value(tup, desc, 3, "buffer_id"));
			b.n = shape_rows(p, DatumGetArrayTypeP(row_value(tup, desc, 1, xs)),
							 DatumGetArrayTypeP(row_value(tup, desc, 2, ys)), xs, ys);
			old = MemoryContextSwitchTo(p->cxt);
			/* an out-of-line value stays its TOAST pointer; a value in the row is copied */
			b.x = datumCopy(row_value(tup, desc, 4, x_col), false, -1);
			b.y = datumCopy(row_value(tup, desc, 5, y_col), false, -1);
			MemoryContextSwitchTo(old);
			directory_add(p, &b);
		}
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
	SPI_finish();
	p->x_width = Max(p->x_width, 0);
	p->y_width = Max(p->y_width, 0);
	directory_finish(p);
	error_context_stack = errcb.previous;
}

void
dl_seg_partition_from_buffers(DlSegPartition *p, const DlSegBuffer *bufs, int nbuf,
							  int64 x_width, int64 y_width, const char *relname, int seg,
							  MemoryContext cxt)
{
	partition_init(p, relname, seg, cxt);
	p->x_width = Max(x_width, 0);
	p->y_width = Max(y_width, 0);
	for (int i = 0; i < nbuf; i++)
	{
		CHECK_FOR_INTERRUPTS();
		directory_add(p, &bufs[i]);
	}
	directory_finish(p);
}

/* ---------------------------------------------------------------------
 * Sizes and placement
 * --------------------------------------------------------------------- */

/* The shuffle's bookkeeping: the blocks and one epoch's order. */
static double
blocks_bytes(const DlSegPartition *p)
{
	return (double) p->n_blocks * (sizeof(DlBlock) + sizeof(int64));
}

double
dl_seg_partition_cache_bytes(const DlSegPartition *p)
{
	return (double) p->n * (double) (p->x_width + p->y_width) * sizeof(float) +
		(double) p->dir_bytes + blocks_bytes(p);
}

/* What reading block rows of buffer b holds at once besides the window. */
static double
read_bytes(const DlSegPartition *p, const DlSegBuffer *b, int64 rows)
{
	double		x = value_sliceable(b->x) ? (double) rows * p->x_width * sizeof(float)
		: (double) toast_raw_datum_size(b->x);
	double		y = value_sliceable(b->y) ? (double) rows * p->y_width * sizeof(int16)
		: (double) toast_raw_datum_size(b->y);

	return x + y;
}

double
dl_seg_partition_stream_bytes(const DlSegPartition *p)
{
	int64		br = dl_epoch_block_rows(p->x_width);
	double		reading = 0;
	double		window = (double) Min(p->n, dl_epoch_window_rows(p->x_width)) *
		(double) (p->x_width + p->y_width) * sizeof(float);

	for (int i = 0; i < p->nbuf; i++)
		reading = Max(reading, read_bytes(p, &p->bufs[i], Min(br, p->bufs[i].n)));
	return (double) p->dir_bytes + blocks_bytes(p) + window + reading;
}

/* bytes as "12 MB" (rounded), for messages. */
static char *
size_text(double bytes)
{
	static const char *const units[] = {"bytes", "kB", "MB", "GB", "TB"};
	int			u = 0;

	while (bytes >= 10240.0 && u < (int) lengthof(units) - 1)
	{
		bytes /= 1024.0;
		u++;
	}
	return psprintf("%.0f %s", bytes, units[u]);
}

/* Decode every buffer of p into one float array: the cached placement. */
static void
partition_cache(DlSegPartition *p)
{
	int64		xbytes = checked_mul(checked_mul(p->n, p->x_width, "partition"), sizeof(float), "partition");
	int64		ybytes = checked_mul(checked_mul(p->n, p->y_width, "partition"), sizeof(float), "partition");

	if ((uint64) xbytes > MaxAllocHugeSize || (uint64) ybytes > MaxAllocHugeSize)
		ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						errmsg("segment %d holds " INT64_FORMAT " bytes of data, more than one process can hold in one array",
							   p->seg, xbytes),
						errhint("Let it be streamed (use_caching NULL or false), or preprocess with more segments.")));
	p->x = MemoryContextAllocExtended(p->cxt, Max(xbytes, 1), MCXT_ALLOC_HUGE);
	p->y = MemoryContextAllocExtended(p->cxt, Max(ybytes, 1), MCXT_ALLOC_HUGE);
	for (int i = 0; i < p->nbuf; i++)
	{
		DlSegBuffer *b = &p->bufs[i];

		CHECK_FOR_INTERRUPTS();
		dl_seg_partition_read_rows(p, i, 0, b->n, p->x + b->start * p->x_width,
								   p->y + b->start * p->y_width);
	}
	p->cached = true;
}

void
dl_seg_partitions_place(DlSegPartition **ps, int np, DlCaching caching, double budget)
{
	double		need_all = 0;
	double		reserve = 0;
	double		cached = 0;

	for (int i = 0; i < np; i++)
	{
		double		c = dl_seg_partition_cache_bytes(ps[i]);
		double		s = dl_seg_partition_stream_bytes(ps[i]);

		need_all += c;
		reserve = Max(reserve, s);
		if (caching == DL_CACHING_ON && c > budget)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("segment %d of table %s needs %s to be cached, more than madlib_dl.partition_memory (%s)",
							ps[i]->seg, ps[i]->relname, size_text(c), size_text(budget)),
					 errdetail("use_caching => true keeps every partition in memory for the whole call."),
					 errhint("Give use_caching => NULL to stream the partitions that do not fit, or have a superuser raise madlib_dl.partition_memory.")));
		if (caching != DL_CACHING_ON && (caching == DL_CACHING_OFF || c > budget) && s > budget)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("segment %d of table %s needs %s to be streamed, more than madlib_dl.partition_memory (%s)",
							ps[i]->seg, ps[i]->relname, size_text(s), size_text(budget)),
					 errdetail("Streaming holds a window of %d blocks of at most " INT64_FORMAT " rows, the directory of the %d buffers, and the rows being read (a compressed buffer, or one stored in its row, is read whole).",
							   DL_EPOCH_WINDOW_BLOCKS, dl_epoch_block_rows(ps[i]->x_width), ps[i]->nbuf),
					 errhint("Have a superuser raise madlib_dl.partition_memory to at least '%.0fMB'.",
							 ceil(s / (1024.0 * 1024.0)))));
	}
	/* all of them fit at once: no reserve for streaming */
	if (need_all <= budget)
		reserve = 0;
	for (int i = 0; i < np; i++)
	{
		double		c = dl_seg_partition_cache_bytes(ps[i]);
		bool		cache;

		if (caching == DL_CACHING_ON)
			cache = true;
		else if (caching == DL_CACHING_OFF)
			cache = false;
		else
		{
			/*
			 * in order, while the cached ones and the largest streaming
			 * need fit; a partition that streaming would hold more of than
			 * caching it is cached
			 */
			cache = cached + c + reserve <= budget || c <= dl_seg_partition_stream_bytes(ps[i]);
		}
		if (cache)
		{
			partition_cache(ps[i]);
			cached += c;
		}
		elog(DEBUG1, "madlib_dl: segment %d of %s: " INT64_FORMAT " rows in %d buffers, %s (%.0f bytes cached, %.0f streamed, budget %.0f)",
			 ps[i]->seg, ps[i]->relname, ps[i]->n, ps[i]->nbuf, cache ? "cached" : "streamed",
			 c, dl_seg_partition_stream_bytes(ps[i]), budget);
	}
}

/* ---------------------------------------------------------------------
 * Reading rows
 * --------------------------------------------------------------------- */

/*
 * Decode values [first, first + count) of the value d (elem bytes each,
 * row values per row) as rows into out: float32 x (elem 4) or int16 y
 * (elem 2).  Slices when d is out of line and uncompressed, else detoasts
 * it whole.
 */
static void
read_values(Datum d, int64 first_row, int64 rows, int64 width, int elem, float *out)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(d);
	int64		row_bytes = width * elem;
	const char *what = elem == sizeof(float) ? "independent variable" : "dependent variable";
	DlError		err;

	dl_error_clear(&err);
	if (rows <= 0 || width <= 0)
		return;
	if (value_sliceable(d))
	{
		int64		per = Max(DL_SEG_SLICE_BYTES / row_bytes, 1);

		for (int64 r = 0; r < rows; r += per)
		{
			int64		cnt = Min(per, rows - r);
			struct varlena *sl;
			DlStatus	st;

			CHECK_FOR_INTERRUPTS();
			sl = pg_detoast_datum_slice(v, (int32) ((first_row + r) * row_bytes),
										(int32) (cnt * row_bytes));
			if ((int64) VARSIZE_ANY_EXHDR(sl) != cnt * row_bytes)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("a slice of " INT64_FORMAT " bytes of a buffer read " INT64_FORMAT,
								cnt * row_bytes, (int64) VARSIZE_ANY_EXHDR(sl))));
			st = elem == sizeof(float) ?
				dl_buffer_decode_x(out + r * width, (const uint8_t *) VARDATA_ANY(sl),
								   VARSIZE_ANY_EXHDR(sl), cnt, width, &err) :
				dl_buffer_decode_y(out + r * width, (const uint8_t *) VARDATA_ANY(sl),
								   VARSIZE_ANY_EXHDR(sl), cnt, width, &err);
			if (st != DL_OK)
				report_buffer(&err, what);
			pfree(sl);
		}
	}
	else
	{
		struct varlena *w = pg_detoast_datum_packed(v);
		const uint8_t *data = (const uint8_t *) VARDATA_ANY(w);
		int64		len = VARSIZE_ANY_EXHDR(w);
		int64		end;

		if (pg_add_s64_overflow(first_row, rows, &end) || end > len / row_bytes)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("a buffer of " INT64_FORMAT " bytes has no rows " INT64_FORMAT " to " INT64_FORMAT,
							len, first_row + 1, first_row + rows)));
		if ((elem == sizeof(float) ?
			 dl_buffer_decode_x(out, data + first_row * row_bytes, rows * row_bytes,
								rows, width, &err) :
			 dl_buffer_decode_y(out, data + first_row * row_bytes, rows * row_bytes,
								rows, width, &err)) != DL_OK)
			report_buffer(&err, what);
		if (w != v)
			pfree(w);
	}
}

void
dl_seg_partition_read_rows(const DlSegPartition *p, int buf, int64 offset, int64 n,
						   float *x, float *y)
{
	const DlSegBuffer *b;
	ReadContext rc;
	ErrorContextCallback errcb;

	if (buf < 0 || buf >= p->nbuf || offset < 0 || n < 0 || offset > p->bufs[buf].n - n)
		elog(ERROR, "madlib_dl: rows " INT64_FORMAT "+" INT64_FORMAT " of buffer %d of %d",
			 offset, n, buf, p->nbuf);
	b = &p->bufs[buf];
	rc.p = p;
	rc.buffer_id = b->buffer_id;
	rc.offset = offset;
	rc.n = n;
	errcb.callback = read_error_callback;
	errcb.arg = &rc;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;
	read_values(b->x, offset, n, p->x_width, sizeof(float), x);
	read_values(b->y, offset, n, p->y_width, sizeof(int16), y);
	error_context_stack = errcb.previous;
}

/* ---------------------------------------------------------------------
 * SQL
 * --------------------------------------------------------------------- */

PG_FUNCTION_INFO_V1(madlib_dl__partition_plan);

/*
 * madlib_dl._partition_plan(source regclass, x_col text, y_col text,
 *     num_segments integer, use_caching boolean) RETURNS TABLE (segment integer, rows bigint,
 *     buffers integer, blocks bigint, cache_bytes bigint, stream_bytes
 *     bigint, budget bigint, cached boolean)
 *
 * How fit and fit_multiple on the workers transport would place each
 * segment's training partition of packed table source, alone, under the
 * budget of num_segments segments: read from the directories (nothing is
 * decoded but what caching would decode).  54000 as they would raise it.
 */
Datum
madlib_dl__partition_plan(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			rel;
	int			nseg;
	DlCaching	caching;
	char	   *x_col;
	char	   *y_col;
	bool		by_dist_key;
	double		budget;
	MemoryContext cxt;
	MemoryContext old;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("source, x_col, y_col and num_segments must not be NULL"),
				 errhint("Call madlib_dl.partition_plan with a packed table.")));
	rel = PG_GETARG_OID(0);
	x_col = text_to_cstring(PG_GETARG_TEXT_PP(1));
	y_col = text_to_cstring(PG_GETARG_TEXT_PP(2));
	nseg = PG_GETARG_INT32(3);
	if (nseg < 1 || nseg > DL_SEG_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of segments %d is out of range", nseg),
				 errhint("Use 1 to %d segments.", DL_SEG_MAX)));
	caching = PG_ARGISNULL(4) ? DL_CACHING_AUTO : PG_GETARG_BOOL(4) ? DL_CACHING_ON : DL_CACHING_OFF;
	dl_pg_require_packed_table(rel, x_col, y_col);
	by_dist_key = get_attnum(rel, "__dist_key__") != InvalidAttrNumber;
	budget = dl_limits_partition_budget(nseg);

	InitMaterializedSRF(fcinfo, 0);
	cxt = AllocSetContextCreate(CurrentMemoryContext, "madlib_dl partition plan",
								ALLOCSET_DEFAULT_SIZES);
	for (int k = 0; k < nseg; k++)
	{
		DlSegPartition p;
		DlSegPartition *pp = &p;
		Datum		values[8];
		bool		nulls[8] = {false, false, false, false, false, false, false, false};

		old = MemoryContextSwitchTo(cxt);
		dl_seg_partition_read(&p, rel, x_col, y_col, by_dist_key, k, nseg, cxt);
		dl_seg_partitions_place(&pp, 1, caching, budget);
		MemoryContextSwitchTo(old);
		values[0] = Int32GetDatum(k);
		values[1] = Int64GetDatum(p.n);
		values[2] = Int32GetDatum(p.nbuf);
		values[3] = Int64GetDatum(p.n_blocks);
		values[4] = Int64GetDatum((int64) dl_seg_partition_cache_bytes(&p));
		values[5] = Int64GetDatum((int64) dl_seg_partition_stream_bytes(&p));
		values[6] = Int64GetDatum((int64) budget);
		values[7] = BoolGetDatum(p.cached);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextReset(cxt);
	}
	MemoryContextDelete(cxt);
	return (Datum) 0;
}
