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
#include "utils/array.h"
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

/* Is variable i of p a dependent one? */
static inline bool
is_y(const DlSegPartition *p, int i)
{
	return i >= p->n_x;
}

/*
 * Bytes per value of variable i of buffer b: 4 (float32) for an
 * independent one; for a dependent one 2 (int16 classes) or 4 (float32
 * numeric targets), as its raw size says.
 */
static int
value_elem(const DlSegPartition *p, const DlSegBuffer *b, int i)
{
	if (!is_y(p, i))
		return sizeof(float);
	return (int64) toast_raw_datum_size(b->v[i]) - VARHDRSZ ==
		b->n * p->widths[i] * (int64) sizeof(float) && b->n * p->widths[i] > 0 ?
		(int) sizeof(float) : (int) sizeof(int16);
}

/*
 * Check one buffer's raw sizes (what its values decode to) against its
 * shapes: 22000 as the decoders say it otherwise.
 */
static void
check_sizes(const DlSegPartition *p, const DlSegBuffer *b)
{
	for (int i = 0; i < p->n_x + p->n_y; i++)
	{
		const char *what = is_y(p, i) ? "dependent variable" : "independent variable";
		int64		vals = checked_mul(b->n, p->widths[i], "buffer");
		int64		want = checked_mul(vals, value_elem(p, b, i), "buffer");
		int64		have = (int64) toast_raw_datum_size(b->v[i]) - VARHDRSZ;
		DlError		err;

		if (have == want)
			continue;
		dl_error_clear(&err);
		dl_error_set(&err, DL_ERR_SHAPE, "%s buffer holds %lld bytes, but its shape {%lld,%lld} needs %lld",
					 what, (long long) have, (long long) b->n, (long long) p->widths[i],
					 (long long) want);
		report_buffer(&err, what);
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
	p->dir_bytes += sizeof(DlSegBuffer) + sizeof(Datum) * (p->n_x + p->n_y);
	for (int i = 0; i < p->n_x + p->n_y; i++)
		p->dir_bytes += value_held(b->v[i]);
}

/*
 * An empty partition of n_x and n_y variables in cxt, named for messages;
 * widths -1 until the first buffer gives them.
 */
static void
partition_init(DlSegPartition *p, int n_x, int n_y, const char *relname, int seg,
			   MemoryContext cxt)
{
	memset(p, 0, sizeof(*p));
	p->loaded = true;
	p->cxt = cxt;
	p->relname = MemoryContextStrdup(cxt, relname);
	p->seg = seg;
	p->n_x = n_x;
	p->n_y = n_y;
	for (int i = 0; i < DL_SEG_MAX_VARS; i++)
		p->widths[i] = -1;
}

/* The widths together, once known (0 for a partition without buffers). */
static void
partition_widths(DlSegPartition *p)
{
	p->x_width = p->y_width = 0;
	for (int i = 0; i < p->n_x + p->n_y; i++)
	{
		p->widths[i] = Max(p->widths[i], 0);
		if (is_y(p, i))
			p->y_width += p->widths[i];
		else
			p->x_width += p->widths[i];
	}
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
 * The sample width of variable i of one buffer from its shape {n, dims...}
 * (a dependent one: {n, classes}), setting the partition's width from
 * the first buffer: 22000 when it differs from the partition's.  Returns
 * n.  name names the shape column.
 */
static int64
shape_rows(DlSegPartition *p, int i, ArrayType *shape, const char *name)
{
	int64		d[DL_MAX_RANK + 1];
	int			nd = dl_pg_read_shape(shape, d, DL_MAX_RANK + 1, name);
	int64		w = 1;

	if (nd < 2 || (is_y(p, i) && nd != 2))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("buffer shape %s has %d values, expected %s", name, nd,
						is_y(p, i) ? "2: {rows, classes}" : "2 or more: {rows, dims...}"),
				 errhint("Preprocess the data again with training_preprocessor_dl.")));
	for (int j = 1; j < nd; j++)
		w = checked_mul(w, d[j], "sample size");
	if (p->widths[i] < 0)
		p->widths[i] = w;
	else if (w != p->widths[i])
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("buffers have different sample sizes in %s: " INT64_FORMAT " and " INT64_FORMAT " values",
						name, p->widths[i], w),
				 errhint("Preprocess the data again with training_preprocessor_dl.")));
	return d[0];
}

/*
 * The rows of one buffer: every variable's shape gives the same count
 * (22000 otherwise).  shapes[i] is variable i's shape, names[i] its
 * column's name.
 */
static int64
buffer_rows(DlSegPartition *p, ArrayType **shapes, char **names)
{
	int64		n = -1;

	for (int i = 0; i < p->n_x + p->n_y; i++)
	{
		int64		r = shape_rows(p, i, shapes[i], names[i]);

		if (n >= 0 && r != n)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("buffer shapes do not match: %s has " INT64_FORMAT " rows and %s " INT64_FORMAT,
							names[0], n, names[i], r),
					 errhint("Preprocess the data again with training_preprocessor_dl.")));
		n = r;
	}
	return n;
}

void
dl_seg_require_vars(Oid rel, const DlSegVars *vars)
{
	if (!dl_seg_vars_valid(vars))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a packed table is read with %d independent and %d dependent variables",
						vars->n_x, vars->n_y),
				 errhint("Give 1 to %d of each.", DL_MAX_IO)));
	for (int i = 0; i < Max(vars->n_x, vars->n_y); i++)
		dl_pg_require_packed_table(rel, vars->x[Min(i, vars->n_x - 1)], vars->y[Min(i, vars->n_y - 1)]);
}

/*
 * The query of a segment's directory: the shapes, buffer_id, the values.
 * cols[i] and names[i] get variable i's column and shape column.
 */
static char *
directory_sql(const DlSegVars *vars, const char *relsql, bool by_dist_key, const char **cols,
			  char **names)
{
	StringInfoData q;
	int			nv = vars->n_x + vars->n_y;

	initStringInfo(&q);
	appendStringInfoString(&q, "SELECT ");
	for (int i = 0; i < nv; i++)
	{
		cols[i] = i < vars->n_x ? vars->x[i] : vars->y[i - vars->n_x];
		names[i] = psprintf("%s_shape", cols[i]);
		appendStringInfo(&q, "%s, ", quote_identifier(names[i]));
	}
	appendStringInfoString(&q, "buffer_id");
	for (int i = 0; i < nv; i++)
		appendStringInfo(&q, ", %s", quote_identifier(cols[i]));
	appendStringInfo(&q, " FROM %s WHERE %s ORDER BY buffer_id", relsql,
					 by_dist_key ? "__dist_key__ OPERATOR(pg_catalog.=) $1"
					 : "buffer_id OPERATOR(pg_catalog.%) $2 OPERATOR(pg_catalog.=) $1");
	return q.data;
}

/* Add the buffers of the fetched rows to p's directory. */
static void
directory_fetched(DlSegPartition *p, ReadContext *rc, const char **cols, char **names)
{
	int			nv = p->n_x + p->n_y;
	TupleDesc	desc = SPI_tuptable->tupdesc;

	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		ArrayType  *shapes[DL_SEG_MAX_VARS];
		DlSegBuffer b;
		MemoryContext old;

		memset(&b, 0, sizeof(b));
		b.buffer_id = rc->buffer_id = DatumGetInt32(row_value(tup, desc, nv + 1, "buffer_id"));
		for (int i = 0; i < nv; i++)
			shapes[i] = DatumGetArrayTypeP(row_value(tup, desc, i + 1, names[i]));
		b.n = buffer_rows(p, shapes, names);
		old = MemoryContextSwitchTo(p->cxt);
		/* an out-of-line value stays its TOAST pointer; a value in the row is copied */
		b.v = palloc(sizeof(Datum) * nv);
		for (int i = 0; i < nv; i++)
			b.v[i] = datumCopy(row_value(tup, desc, nv + 2 + i, cols[i]), false, -1);
		MemoryContextSwitchTo(old);
		directory_add(p, &b);
	}
}

void
dl_seg_partition_read(DlSegPartition *p, Oid rel, const DlSegVars *vars,
					  bool by_dist_key, int seg, int nseg, MemoryContext cxt)
{
	char	   *relsql = dl_pg_relation_sql_name(rel);
	char	   *names[DL_SEG_MAX_VARS];
	const char *cols[DL_SEG_MAX_VARS];
	Oid			argtypes[2] = {INT4OID, INT4OID};
	Datum		args[2] = {Int32GetDatum(seg), Int32GetDatum(nseg)};
	ReadContext rc;
	ErrorContextCallback errcb;
	Portal		portal;
	char	   *sql;

	partition_init(p, vars->n_x, vars->n_y, relsql, seg, cxt);
	rc.p = p;
	rc.buffer_id = -1;
	rc.offset = rc.n = 0;
	errcb.callback = read_error_callback;
	errcb.arg = &rc;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "madlib_dl: SPI_connect failed");
	sql = directory_sql(vars, relsql, by_dist_key, cols, names);
	/* not parallel (options 0): the leader, in parallel mode, starts no nested workers */
	portal = SPI_cursor_open_with_args(NULL, sql, 2, argtypes, args, NULL, true, 0);
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		SPI_cursor_fetch(portal, true, 64);
		if (SPI_processed == 0)
			break;
		directory_fetched(p, &rc, cols, names);
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
	SPI_finish();
	partition_widths(p);
	directory_finish(p);
	error_context_stack = errcb.previous;
}

void
dl_seg_partition_from_buffers(DlSegPartition *p, const DlSegBuffer *bufs, int nbuf,
							  int n_x, int n_y, const int64 *widths, const char *relname,
							  int seg, MemoryContext cxt)
{
	partition_init(p, n_x, n_y, relname, seg, cxt);
	for (int i = 0; i < n_x + n_y; i++)
		p->widths[i] = Max(widths[i], 0);
	partition_widths(p);
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
	double		bytes = 0;

	for (int i = 0; i < p->n_x + p->n_y; i++)
		bytes += value_sliceable(b->v[i]) ?
			(double) rows * p->widths[i] * value_elem(p, b, i) :
			(double) toast_raw_datum_size(b->v[i]);
	return bytes;
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

/* Decode every buffer of p into one float array per variable: the cached placement. */
static void
partition_cache(DlSegPartition *p)
{
	int			nv = p->n_x + p->n_y;

	for (int v = 0; v < nv; v++)
	{
		int64		bytes = checked_mul(checked_mul(p->n, p->widths[v], "partition"), sizeof(float), "partition");

		if ((uint64) bytes > MaxAllocHugeSize)
			ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
							errmsg("segment %d holds " INT64_FORMAT " bytes of data, more than one process can hold in one array",
								   p->seg, bytes),
							errhint("Let it be streamed (use_caching NULL or false), or preprocess with more segments.")));
		p->data[v] = MemoryContextAllocExtended(p->cxt, Max(bytes, 1), MCXT_ALLOC_HUGE);
	}
	for (int i = 0; i < p->nbuf; i++)
	{
		DlSegBuffer *b = &p->bufs[i];
		float	   *out[DL_SEG_MAX_VARS];

		CHECK_FOR_INTERRUPTS();
		for (int v = 0; v < nv; v++)
			out[v] = p->data[v] + b->start * p->widths[v];
		dl_seg_partition_read_rows(p, i, 0, b->n, out);
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

/* Decode len bytes of rows of width values (elem bytes each; y: a dependent variable) into out. */
static DlStatus
decode_rows(float *out, const uint8_t *data, int64 len, int64 rows, int64 width, bool y,
			DlError *err)
{
	return y ? dl_buffer_decode_target(out, data, len, rows, width, err) :
		dl_buffer_decode_x(out, data, len, rows, width, err);
}

/*
 * Decode rows [first_row, first_row + rows) of the value d (elem bytes a
 * value, width values a row; y: a dependent variable) into out.  Slices
 * when d is out of line and uncompressed, else detoasts it whole.
 */
static void
read_values(Datum d, int64 first_row, int64 rows, int64 width, int elem, bool y, float *out)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(d);
	int64		row_bytes = width * elem;
	const char *what = y ? "dependent variable" : "independent variable";
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

			CHECK_FOR_INTERRUPTS();
			sl = pg_detoast_datum_slice(v, (int32) ((first_row + r) * row_bytes),
										(int32) (cnt * row_bytes));
			if ((int64) VARSIZE_ANY_EXHDR(sl) != cnt * row_bytes)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("a slice of " INT64_FORMAT " bytes of a buffer read " INT64_FORMAT,
								cnt * row_bytes, (int64) VARSIZE_ANY_EXHDR(sl))));
			if (decode_rows(out + r * width, (const uint8_t *) VARDATA_ANY(sl),
							VARSIZE_ANY_EXHDR(sl), cnt, width, y, &err) != DL_OK)
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
		if (decode_rows(out, data + first_row * row_bytes, rows * row_bytes, rows, width, y,
						&err) != DL_OK)
			report_buffer(&err, what);
		if (w != v)
			pfree(w);
	}
}

void
dl_seg_partition_read_rows(const DlSegPartition *p, int buf, int64 offset, int64 n,
						   float *const *out)
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
	for (int i = 0; i < p->n_x + p->n_y; i++)
		read_values(b->v[i], offset, n, p->widths[i], value_elem(p, b, i), is_y(p, i), out[i]);
	error_context_stack = errcb.previous;
}

/* ---------------------------------------------------------------------
 * SQL
 * --------------------------------------------------------------------- */

/*
 * The names of one-dimensional text array a (NULL: none) into names, n of
 * them: 1 .. DL_MAX_IO, none NULL or empty.  ERROR 22023 naming what.
 */
static int
vars_from_array(ArrayType *a, const char **names, const char *what)
{
	Datum	   *v;
	bool	   *nulls;
	int			n;

	if (ARR_ELEMTYPE(a) != TEXTOID || ARR_NDIM(a) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a one-dimensional text array", what),
				 errhint("Give the names of the packed table's variables.")));
	deconstruct_array(a, TEXTOID, -1, false, TYPALIGN_INT, &v, &nulls, &n);
	if (n < 1 || n > DL_MAX_IO)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s has %d names, expected 1 to %d", what, n, DL_MAX_IO),
				 errhint("Give one name per model input or output; a model has at most %d of each.",
						 DL_MAX_IO)));
	for (int i = 0; i < n; i++)
	{
		if (nulls[i] || VARSIZE_ANY_EXHDR(DatumGetPointer(v[i])) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s[%d] is NULL or empty", what, i + 1),
					 errhint("Give the names of the packed table's variables.")));
		names[i] = TextDatumGetCString(v[i]);
	}
	return n;
}

void
dl_seg_vars_from_arrays(ArrayType *x, ArrayType *y, DlSegVars *out, const char *x_what,
						const char *y_what)
{
	memset(out, 0, sizeof(*out));
	out->n_x = vars_from_array(x, out->x, x_what);
	out->n_y = vars_from_array(y, out->y, y_what);
}

/*
 * On Greenplum, the __dist_key__ of segment k (0 .. nseg - 1) of rel: its
 * k-th key in ascending order (_gp_table_keys, as the greenplum transport
 * numbers the segments), a hash key, not k; NULL elsewhere (the key is k).
 * ERROR when the table has another number of keys than nseg.
 */
static int32 *
plan_segment_keys(Oid rel, int nseg)
{
	Oid			argtypes[1] = {REGCLASSOID};
	Datum		args[1] = {ObjectIdGetDatum(rel)};
	int32	   *keys = NULL;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "madlib_dl: SPI_connect failed");
	if (SPI_execute_with_args("SELECT madlib_dl._gp_table_keys($1) WHERE madlib_dl._is_greenplum()",
							  1, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "madlib_dl: could not read the segment keys");
	if (SPI_processed == 1)
	{
		bool		isnull;
		ArrayType  *a = DatumGetArrayTypeP(SPI_getbinval(SPI_tuptable->vals[0],
														 SPI_tuptable->tupdesc, 1, &isnull));
		Datum	   *v;
		bool	   *nulls;
		int			n;

		deconstruct_array(a, INT4OID, sizeof(int32), true, TYPALIGN_INT, &v, &nulls, &n);
		if (n != nseg)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("table %s has buffers on %d segments, its summary says %d",
							get_rel_name(rel), n, nseg),
					 errhint("Preprocess the data again with training_preprocessor_dl.")));
		keys = SPI_palloc(sizeof(int32) * nseg);
		for (int i = 0; i < n; i++)
			keys[i] = DatumGetInt32(v[i]);
	}
	SPI_finish();
	return keys;
}

PG_FUNCTION_INFO_V1(madlib_dl__partition_plan);

/*
 * madlib_dl._partition_plan(source regclass, x_cols text[], y_cols text[],
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
	DlSegVars	vars;
	bool		by_dist_key;
	int32	   *keys;
	double		budget;
	MemoryContext cxt;
	MemoryContext old;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("source, x_cols, y_cols and num_segments must not be NULL"),
				 errhint("Call madlib_dl.partition_plan with a packed table.")));
	rel = PG_GETARG_OID(0);
	dl_seg_vars_from_arrays(PG_GETARG_ARRAYTYPE_P(1), PG_GETARG_ARRAYTYPE_P(2), &vars, "x_cols",
							"y_cols");
	nseg = PG_GETARG_INT32(3);
	if (nseg < 1 || nseg > DL_SEG_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of segments %d is out of range", nseg),
				 errhint("Use 1 to %d segments.", DL_SEG_MAX)));
	caching = PG_ARGISNULL(4) ? DL_CACHING_AUTO : PG_GETARG_BOOL(4) ? DL_CACHING_ON : DL_CACHING_OFF;
	dl_seg_require_vars(rel, &vars);
	by_dist_key = get_attnum(rel, "__dist_key__") != InvalidAttrNumber;
	budget = dl_limits_partition_budget(nseg);
	keys = by_dist_key ? plan_segment_keys(rel, nseg) : NULL;

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
		dl_seg_partition_read(&p, rel, &vars, by_dist_key, keys ? keys[k] : k, nseg, cxt);
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
