/*-------------------------------------------------------------------------
 *
 * workers.c
 *	  Virtual segments on PostgreSQL: persistent parallel workers, each
 *	  owning one partition of a packed table (see segments.h).
 *
 * Shared memory (one DSM segment of the ParallelContext) holds:
 *	 DlSegControl   the command board: a spinlock-protected generation
 *	                counter, one command and one statistics record per
 *	                segment, the generation each segment last finished,
 *	                and two condition variables (work for workers, done
 *	                for the leader);
 *	 text           table and column names, architectures and parameter
 *	                strings, NUL-terminated, addressed by offset;
 *	 slot table     offset, capacity and length of each state slot;
 *	 slots          the state slots themselves (each MAXALIGNed; sizes may
 *	                differ, e.g. one slot per model sized by its state).
 *
 * A command (workers_submit):
 *	 leader: write cmd[k], cmd_gen[k] = ++generation, broadcast "work";
 *	         a segment no worker took is run by the leader right there.
 *	 worker: sleep on "work" until its cmd_gen changes; run its command;
 *	         set done_gen = cmd_gen; broadcast "done".
 *	 leader (workers_wait_any): sleep on "done" until a submitted segment
 *	         has done_gen == cmd_gen, re-throwing worker ERRORs
 *	         (CHECK_FOR_INTERRUPTS) and noticing dead workers.
 * A round (dl_transport_run) submits a command to every segment (workers'
 * first, then the leader's own) and waits for all of them.
 * Slot ownership: a slot is written only by the segment whose command
 * names it during a round, and by the leader between rounds.  The
 * spinlock around the generation and done_gen gives the memory barriers.
 *
 * The per-segment step (segment_execute) is the same function in the
 * leader and in the workers, and it depends only on the command, the
 * slot's bytes and the segment's partition, so the results do not depend
 * on which process ran a segment.
 *
 * IDENTIFICATION
 *	  src/pg/transport/workers.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#ifndef GP_VERSION_NUM
#include "access/detoast.h"
#include "access/parallel.h"
#endif
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#ifndef GP_VERSION_NUM
#include "postmaster/bgworker.h"
#endif
#ifndef GP_VERSION_NUM
#include "storage/condition_variable.h"
#endif
#include "storage/shm_toc.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#ifndef GP_VERSION_NUM
#include "utils/wait_event.h"
#endif

#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_buffer.h"
#include "madlib_dl/dl_rng.h"

#include "pg_buffer.h"
#include "pg_glue.h"
#include "pg_model.h"
#include "pg_util.h"
#include "segments.h"
#include "transport.h"

/* ---------------------------------------------------------------------
 * Small helpers (every server, Greenplum included)
 * --------------------------------------------------------------------- */

int
dl_seg_default_count(void)
{
	long		cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int			n;

	if (cpus < 1)
		cpus = 1;
#if PG_VERSION_NUM >= 100000
	n = (int) Min(cpus, (long) max_parallel_workers);
#else
	n = (int) cpus;
#endif
	return Max(1, Min(n, DL_SEG_MAX));
}

PG_FUNCTION_INFO_V1(madlib_dl__default_num_segments);

/* SQL madlib_dl._default_num_segments() RETURNS int */
Datum
madlib_dl__default_num_segments(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(dl_seg_default_count());
}

/*
 * Everything below is the ParallelContext machinery of virtual segments on
 * PostgreSQL.  Greenplum and Cloudberry run the per-segment step inside
 * aggregates over their real segments instead (gp_agg.c), so there the
 * leader functions only raise FEATURE_NOT_SUPPORTED (docs/greenplum.md).
 */
#ifndef GP_VERSION_NUM

/* shm_toc keys */
#define DL_SEG_KEY_CONTROL	UINT64CONST(0xD15E000000000001)
#define DL_SEG_KEY_TEXT		UINT64CONST(0xD15E000000000002)
#define DL_SEG_KEY_MODELS	UINT64CONST(0xD15E000000000003)
#define DL_SEG_KEY_SLOTLEN	UINT64CONST(0xD15E000000000004)
#define DL_SEG_KEY_SLOTS	UINT64CONST(0xD15E000000000005)

/* How long the leader sleeps before it looks for dead workers again (ms). */
#define DL_SEG_POLL_MS 100

/* Offsets of one model's strings in the text area; -1 for NULL. */
typedef struct DlSegModelText
{
	int64		arch;
	int64		compile;
	int64		fit;
} DlSegModelText;

/* Where slot i lives in the slot area, and how full it is. */
typedef struct DlSegSlot
{
	Size		offset;			/* from the start of the slot area */
	Size		cap;			/* bytes */
	Size		len;			/* bytes of the state it holds now */
} DlSegSlot;

typedef struct DlSegControl
{
	slock_t		mutex;			/* protects generation, cmd, cmd_gen, done_gen */
	ConditionVariable cv_work;	/* leader -> workers: a new command */
	ConditionVariable cv_done;	/* workers -> leader: a segment finished */
	uint64		generation;		/* command counter, 0 before the first */
	uint64		cmd_gen[DL_SEG_MAX];	/* generation of a segment's command */
	uint64		done_gen[DL_SEG_MAX];	/* generation a segment last finished */
	DlSegCommand cmd[DL_SEG_MAX];
	DlSegStats	stats[DL_SEG_MAX];
	int64		part_rows[DL_SEG_MAX];	/* training rows per segment */

	/* the job, fixed at start */
	int			nseg;
	int			n_models;
	int			n_slots;
	Oid			source;
	Oid			validation;
	bool		by_dist_key;	/* training partition by __dist_key__ */
	int64		x_col;			/* offsets into the text area */
	int64		y_col;
	int64		val_x_col;
	int64		val_y_col;
} DlSegControl;

/* Per-process view of a job: shared pointers plus local models and data. */
typedef struct DlSegLocal
{
	DlSegControl *ctl;
	const char *text;
	const DlSegModelText *mtext;
	DlSegSlot  *slot;			/* (n_slots) */
	uint8	   *slots;			/* the slot area */
	MemoryContext cxt;			/* models and partitions */
	DlPgModel **models;			/* (n_models), built on first use, at most
								 * DL_SEG_MODEL_CACHE at a time */
	uint64	   *model_used;		/* (n_models) use clock of each built model */
	uint64		use_clock;
	int			n_built;
	DlSegPartition train[DL_SEG_MAX];
	DlSegPartition val[DL_SEG_MAX];
} DlSegLocal;

typedef struct DlSegments DlSegments;

struct DlSegments
{
	DlTransport base;			/* first: a DlSegments is a DlTransport */
	ParallelContext *pcxt;
	DlSegLocal	local;
	int			nlaunched;
	MemoryContext cxt;
	bool		pending[DL_SEG_MAX];	/* submitted, not yet reported done */
};

/* The string at offset off of the shared text area; NULL for -1. */
static const char *
text_at(const DlSegLocal *l, int64 off)
{
	return off < 0 ? NULL : l->text + off;
}

/* ---------------------------------------------------------------------
 * Loading partitions
 * --------------------------------------------------------------------- */

typedef struct LoadContext
{
	const char *relname;
	int			seg;
	int			buffer_id;		/* -1 before the first row */
} LoadContext;

static void
load_error_callback(void *arg)
{
	LoadContext *lc = (LoadContext *) arg;

	if (lc->buffer_id >= 0)
		errcontext("reading buffer %d of table %s for segment %d",
				   lc->buffer_id, lc->relname, lc->seg);
	else
		errcontext("reading table %s for segment %d", lc->relname, lc->seg);
}

/* Multiply with overflow check for partition sizes. */
static int64
checked_mul(int64 a, int64 b, const char *what)
{
	int64		r;

	if (pg_mul_s64_overflow(a, b, &r))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s is too large: " INT64_FORMAT " x " INT64_FORMAT, what, a, b)));
	return r;
}

/* Bytes of one slice when x is decoded straight from the TOAST table. */
#define DL_SEG_SLICE_BYTES (8 * 1024 * 1024)

/*
 * Decode the x buffer d (n rows of width float32 values, not detoasted)
 * into out (n, width).  An uncompressed out-of-line value of the right
 * size is fetched and decoded a slice of rows at a time, so loading a
 * partition never holds the buffer twice (a one-buffer partition of
 * Fashion-MNIST is 188 MB); anything else is detoasted whole.  Errors
 * (size, NaN) are reported by dl_pg_decode_x, which names the row.
 */
static void
decode_x_into(float *out, Datum d, int64 n, int64 width)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(d);
	int64		row_bytes = width * (int64) sizeof(float);

	if (VARATT_IS_EXTERNAL_ONDISK(v) && row_bytes > 0)
	{
		struct varatt_external ext;

		VARATT_EXTERNAL_GET_POINTER(ext, v);
		/* not compressed: stored size == raw size (VARATT_EXTERNAL_IS_COMPRESSED, sign-clean) */
		if ((int64) VARATT_EXTERNAL_GET_EXTSIZE(ext) == (int64) ext.va_rawsize - VARHDRSZ &&
			(int64) VARATT_EXTERNAL_GET_EXTSIZE(ext) == n * row_bytes)
		{
			int64		per = Max(DL_SEG_SLICE_BYTES / row_bytes, 1);
			bool		ok = true;

			for (int64 r = 0; r < n && ok; r += per)
			{
				int64		cnt = Min(per, n - r);
				struct varlena *sl = pg_detoast_datum_slice(v, (int32) (r * row_bytes),
															(int32) (cnt * row_bytes));
				DlError		err;

				CHECK_FOR_INTERRUPTS();
				dl_error_clear(&err);
				ok = (int64) VARSIZE_ANY_EXHDR(sl) == cnt * row_bytes &&
					dl_buffer_decode_x(out + r * width, (const uint8_t *) VARDATA_ANY(sl),
									   VARSIZE_ANY_EXHDR(sl), cnt, width, &err) == DL_OK;
				pfree(sl);
			}
			if (ok)
				return;
		}
	}
	{
		bytea	   *xb = DatumGetByteaPP(d);
		float	   *fx = dl_pg_decode_x(xb, n, width, CurrentMemoryContext);

		memcpy(out, fx, (Size) (n * width) * sizeof(float));
		pfree(fx);
		if ((Pointer) xb != DatumGetPointer(d))
			pfree(xb);
	}
}

/* One segment's share of a packed table, and the reading of it. */
typedef struct PartitionQuery
{
	const char *relsql;			/* the table, quoted */
	const char *x_col;
	const char *y_col;
	char	   *xs;				/* <x_col>_shape */
	char	   *ys;				/* <y_col>_shape */
	const char *where;			/* the segment's rows: $1 segment, $2 nseg */
	Oid			argtypes[2];
	Datum		args[2];
	LoadContext lc;				/* names the buffer in error messages */
} PartitionQuery;

/* Column col (1-based) of the current row; ERROR 22004 naming it when NULL. */
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

/* Open a read-only cursor over the segment's rows with the columns cols, in buffer_id order. */
static Portal
partition_cursor(PartitionQuery *q, const char *cols)
{
	char	   *sql = psprintf("SELECT %s, buffer_id FROM %s WHERE %s ORDER BY buffer_id",
							   cols, q->relsql, q->where);

	/* not parallel (options 0): the leader, in parallel mode, starts no nested workers */
	return SPI_cursor_open_with_args(NULL, sql, 2, q->argtypes, q->args, NULL, true, 0);
}

/*
 * Pass 1: the shapes of the segment's buffers; returns its samples and
 * sets their widths (-1 without buffers).  Every buffer must agree.
 */
static int64
partition_sizes(PartitionQuery *q, int64 *x_width, int64 *y_width)
{
	Portal		portal = partition_cursor(q, psprintf("%s, %s", quote_identifier(q->xs),
													   quote_identifier(q->ys)));
	int64		total = 0;

	*x_width = *y_width = -1;
	for (;;)
	{
		int64		xd[DL_MAX_RANK + 1];
		int64		yd[2];
		int			nx;
		int			ny;
		int64		w = 1;
		HeapTuple	tup;
		TupleDesc	desc;

		CHECK_FOR_INTERRUPTS();
		SPI_cursor_fetch(portal, true, 1);
		if (SPI_processed == 0)
			break;
		tup = SPI_tuptable->vals[0];
		desc = SPI_tuptable->tupdesc;
		q->lc.buffer_id = DatumGetInt32(row_value(tup, desc, 3, "buffer_id"));
		nx = dl_pg_read_shape(DatumGetArrayTypeP(row_value(tup, desc, 1, q->xs)), xd, DL_MAX_RANK + 1, q->xs);
		ny = dl_pg_read_shape(DatumGetArrayTypeP(row_value(tup, desc, 2, q->ys)), yd, 2, q->ys);
		if (nx < 2 || ny != 2 || xd[0] != yd[0])
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("buffer shapes do not match: %s has %d values and %s has %d, with " INT64_FORMAT " and " INT64_FORMAT " rows",
							q->xs, nx, q->ys, ny, xd[0], ny > 0 ? yd[0] : (int64) 0),
					 errhint("Preprocess the data again with training_preprocessor_dl.")));
		for (int i = 1; i < nx; i++)
			w = checked_mul(w, xd[i], "sample size");
		if (*x_width < 0)
		{
			*x_width = w;
			*y_width = yd[1];
		}
		else if (w != *x_width || yd[1] != *y_width)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("buffers have different sample sizes: " INT64_FORMAT " and " INT64_FORMAT " values, " INT64_FORMAT " and " INT64_FORMAT " classes",
							*x_width, w, *y_width, yd[1]),
					 errhint("Preprocess the data again with training_preprocessor_dl.")));
		if (pg_add_s64_overflow(total, xd[0], &total))
			ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
							errmsg("too many rows in one segment")));
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
	q->lc.buffer_id = -1;
	return total;
}

/* Pass 2: the data into p (sized by pass 1), same snapshot and order. */
static void
partition_fill(PartitionQuery *q, DlSegPartition *p)
{
	Portal		portal = partition_cursor(q, psprintf("%s, %s, %s", quote_identifier(q->x_col),
													   quote_identifier(q->y_col),
													   quote_identifier(q->xs)));
	int64		offset = 0;

	for (;;)
	{
		HeapTuple	tup;
		TupleDesc	desc;
		Datum		xv;
		Datum		yv;
		bytea	   *yb;
		int64		xd[DL_MAX_RANK + 1];
		int64		n;

		CHECK_FOR_INTERRUPTS();
		SPI_cursor_fetch(portal, true, 1);
		if (SPI_processed == 0)
			break;
		tup = SPI_tuptable->vals[0];
		desc = SPI_tuptable->tupdesc;
		q->lc.buffer_id = DatumGetInt32(row_value(tup, desc, 4, "buffer_id"));
		(void) dl_pg_read_shape(DatumGetArrayTypeP(row_value(tup, desc, 3, q->xs)), xd, DL_MAX_RANK + 1, q->xs);
		n = xd[0];
		if (offset + n > p->n)
			elog(ERROR, "madlib_dl: partition grew between two reads of one snapshot");
		xv = row_value(tup, desc, 1, q->x_col);
		yv = row_value(tup, desc, 2, q->y_col);
		yb = DatumGetByteaPP(yv);
		if (n > 0)
		{
			float	   *fy = dl_pg_decode_y(yb, n, p->y_width, CurrentMemoryContext);

			/* x straight into the partition: no second copy of the buffer */
			decode_x_into(p->x + offset * p->x_width, xv, n, p->x_width);
			memcpy(p->y + offset * p->y_width, fy, (Size) (n * p->y_width) * sizeof(float));
			pfree(fy);
		}
		if ((Pointer) yb != DatumGetPointer(yv))
			pfree(yb);
		offset += n;
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
	if (offset != p->n)
		elog(ERROR, "madlib_dl: partition shrank between two reads of one snapshot");
}

/*
 * Read one segment's buffers of rel, in buffer_id order, into p (memory in
 * cxt).  Two read-only passes under the same snapshot: shapes first, to
 * size the arrays exactly, then the data.  by_dist_key selects rows by
 * __dist_key__ = seg, otherwise by buffer_id % nseg = seg.  The leader
 * checked the table's column types (dl_pg_require_packed_table) and holds
 * a lock on it.
 */
void
dl_seg_load_partition(DlSegPartition *p, Oid rel, const char *x_col, const char *y_col,
					  bool by_dist_key, int seg, int nseg, MemoryContext cxt)
{
	PartitionQuery q;
	ErrorContextCallback errcb;
	int64		x_width;
	int64		y_width;

	q.relsql = dl_pg_relation_sql_name(rel);
	q.x_col = x_col;
	q.y_col = y_col;
	q.xs = psprintf("%s_shape", x_col);
	q.ys = psprintf("%s_shape", y_col);
	q.where = by_dist_key ? "__dist_key__ = $1" : "buffer_id % $2 = $1";
	q.argtypes[0] = q.argtypes[1] = INT4OID;
	q.args[0] = Int32GetDatum(seg);
	q.args[1] = Int32GetDatum(nseg);
	q.lc.relname = q.relsql;
	q.lc.seg = seg;
	q.lc.buffer_id = -1;
	errcb.callback = load_error_callback;
	errcb.arg = &q.lc;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "madlib_dl: SPI_connect failed");
	memset(p, 0, sizeof(*p));
	p->loaded = true;
	p->n = partition_sizes(&q, &x_width, &y_width);
	p->x_width = Max(x_width, 0);
	p->y_width = Max(y_width, 0);
	if (p->n > 0)
	{
		int64		xbytes = checked_mul(checked_mul(p->n, x_width, "partition"), sizeof(float), "partition");
		int64		ybytes = checked_mul(checked_mul(p->n, y_width, "partition"), sizeof(float), "partition");

		if ((uint64) xbytes > MaxAllocHugeSize || (uint64) ybytes > MaxAllocHugeSize)
			ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
							errmsg("segment %d holds " INT64_FORMAT " bytes of data, more than one process can hold", seg, xbytes),
							errhint("Preprocess with distribution_rules giving more segments.")));
		p->x = MemoryContextAllocExtended(cxt, xbytes, MCXT_ALLOC_HUGE);
		p->y = MemoryContextAllocExtended(cxt, ybytes, MCXT_ALLOC_HUGE);
	}
	partition_fill(&q, p);
	SPI_finish();
	error_context_stack = errcb.previous;
}

/* ---------------------------------------------------------------------
 * The per-segment step, shared by leader and workers
 * --------------------------------------------------------------------- */

typedef struct ExecContext
{
	int			seg;
	const DlSegCommand *cmd;
} ExecContext;

static void
exec_error_callback(void *arg)
{
	ExecContext *ec = (ExecContext *) arg;

	errcontext("%s on segment %d, iteration " INT64_FORMAT,
			   ec->cmd->kind == DL_SEG_CMD_TRAIN ? "training" : "evaluating",
			   ec->seg, ec->cmd->iteration);
}

/*
 * Model definition `model` built in this process, on first use.  At most
 * DL_SEG_MODEL_CACHE models stay built; the least recently used one is
 * freed to make room.  A rebuilt model gives the same results: a step
 * loads everything that matters (weights, optimizer state, rng) from the
 * state slot.
 */
static DlPgModel *
local_model(DlSegLocal *l, int model)
{
	if (model < 0 || model >= l->ctl->n_models)
		elog(ERROR, "madlib_dl: command names model %d of %d", model, l->ctl->n_models);
	if (l->models[model] == NULL)
	{
		const DlSegModelText *mt = &l->mtext[model];
		const char *arch = text_at(l, mt->arch);

		if (l->n_built >= DL_SEG_MODEL_CACHE)
		{
			int			lru = -1;

			for (int i = 0; i < l->ctl->n_models; i++)
				if (l->models[i] != NULL && (lru < 0 || l->model_used[i] < l->model_used[lru]))
					lru = i;
			dl_pg_model_free(l->models[lru]);
			l->models[lru] = NULL;
			l->n_built--;
		}
		l->models[model] = dl_pg_model_build(arch, strlen(arch), text_at(l, mt->compile),
											 text_at(l, mt->fit), DL_PG_MODEL_TRAIN, 0,
											 l->cxt);
		l->n_built++;
	}
	l->model_used[model] = ++l->use_clock;
	return l->models[model];
}

/*
 * Run one command for segment seg in this process and write its statistics
 * to *out: TRAIN is dl_seg_train_step on the command's slot, EVAL is
 * dl_seg_eval_step (the slot is not written).  The result depends only on
 * the command, the slot's bytes and the partition, never on the process.
 */
static void
segment_execute(DlSegLocal *l, int seg, const DlSegCommand *cmd, DlSegStats *out)
{
	DlSegControl *ctl = l->ctl;
	ExecContext ec;
	ErrorContextCallback errcb;
	DlPgModel  *m;
	DlSegPartition *tp = &l->train[seg];
	DlSegSlot  *sl;
	uint8	   *slot;
	instr_time	start;
	instr_time	dur;
	DlSegStats	st;

	if (cmd->kind != DL_SEG_CMD_TRAIN && cmd->kind != DL_SEG_CMD_EVAL)
	{
		memset(out, 0, sizeof(*out));	/* idle this round: nothing to report */
		return;
	}
	if (cmd->slot < 0 || cmd->slot >= ctl->n_slots)
		elog(ERROR, "madlib_dl: command names slot %d of %d", cmd->slot, ctl->n_slots);
	if (!tp->loaded)
		elog(ERROR, "madlib_dl: segment %d has no partition in this process", seg);

	ec.seg = seg;
	ec.cmd = cmd;
	errcb.callback = exec_error_callback;
	errcb.arg = &ec;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;

	INSTR_TIME_SET_CURRENT(start);
	m = local_model(l, cmd->model);
	sl = &l->slot[cmd->slot];
	slot = l->slots + sl->offset;
	if (cmd->kind == DL_SEG_CMD_TRAIN)
	{
		Size		len;

		(void) dl_seg_train_step(m, slot, sl->len, sl->cap, &len, tp, l->cxt,
								 cmd->iteration, seg, cmd->catch_divergence, &st);
		sl->len = len;
	}
	else
		dl_seg_eval_step(m, slot, sl->len, tp,
						 OidIsValid(ctl->validation) ? &l->val[seg] : NULL, l->cxt, &st);
	INSTR_TIME_SET_CURRENT(dur);
	INSTR_TIME_SUBTRACT(dur, start);
	st.seconds = INSTR_TIME_GET_DOUBLE(dur);
	*out = st;

	error_context_stack = errcb.previous;
}

/* Load segment seg's training (and validation) partitions into l. */
static void
local_load(DlSegLocal *l, int seg)
{
	DlSegControl *ctl = l->ctl;
	instr_time	start;
	instr_time	dur;

	INSTR_TIME_SET_CURRENT(start);

	dl_seg_load_partition(&l->train[seg], ctl->source, text_at(l, ctl->x_col),
						  text_at(l, ctl->y_col), ctl->by_dist_key, seg, ctl->nseg, l->cxt);
	if (OidIsValid(ctl->validation))
		dl_seg_load_partition(&l->val[seg], ctl->validation, text_at(l, ctl->val_x_col),
							  text_at(l, ctl->val_y_col), false, seg, ctl->nseg, l->cxt);
	ctl->part_rows[seg] = l->train[seg].n;
	INSTR_TIME_SET_CURRENT(dur);
	INSTR_TIME_SUBTRACT(dur, start);
	elog(DEBUG1, "madlib_dl: segment %d loaded " INT64_FORMAT " training rows in %.3f s",
		 seg, l->train[seg].n, INSTR_TIME_GET_DOUBLE(dur));
}

/* Attach l to the shared areas in toc. */
static void
local_attach(DlSegLocal *l, shm_toc *toc, MemoryContext cxt)
{
	memset(l, 0, sizeof(*l));
	l->ctl = shm_toc_lookup(toc, DL_SEG_KEY_CONTROL, false);
	l->text = shm_toc_lookup(toc, DL_SEG_KEY_TEXT, false);
	l->mtext = shm_toc_lookup(toc, DL_SEG_KEY_MODELS, false);
	l->slot = shm_toc_lookup(toc, DL_SEG_KEY_SLOTLEN, false);
	l->slots = shm_toc_lookup(toc, DL_SEG_KEY_SLOTS, false);
	l->cxt = cxt;
	l->models = MemoryContextAllocZero(cxt, sizeof(DlPgModel *) * l->ctl->n_models);
	l->model_used = MemoryContextAllocZero(cxt, sizeof(uint64) * l->ctl->n_models);
}

/* ---------------------------------------------------------------------
 * Worker side
 * --------------------------------------------------------------------- */

void
dl_segment_worker_main(dsm_segment *seg, shm_toc *toc)
{
	MemoryContext cxt;
	DlSegLocal	local;
	DlSegControl *ctl;
	int			me = ParallelWorkerNumber;
	uint64		seen = 0;

	elog(DEBUG2, "madlib_dl: worker for segment %d started", me);
	dl_pg_set_blas_threads();
	cxt = AllocSetContextCreate(CurrentMemoryContext, "madlib_dl segment worker",
								ALLOCSET_DEFAULT_SIZES);
	local_attach(&local, toc, cxt);
	ctl = local.ctl;
	if (me < 0 || me >= ctl->nseg)
		elog(ERROR, "madlib_dl: parallel worker number %d out of range for %d segments", me, ctl->nseg);

	local_load(&local, me);

	for (;;)
	{
		uint64		gen;
		DlSegCommand cmd;

		SpinLockAcquire(&ctl->mutex);
		gen = ctl->cmd_gen[me];
		cmd = ctl->cmd[me];
		SpinLockRelease(&ctl->mutex);
		if (gen == seen)
		{
			ConditionVariableSleep(&ctl->cv_work, PG_WAIT_EXTENSION);
			continue;
		}
		ConditionVariableCancelSleep();
		seen = gen;
		if (cmd.kind == DL_SEG_CMD_EXIT)
			break;

		segment_execute(&local, me, &cmd, &ctl->stats[me]);

		SpinLockAcquire(&ctl->mutex);
		ctl->done_gen[me] = gen;
		SpinLockRelease(&ctl->mutex);
		ConditionVariableBroadcast(&ctl->cv_done);
	}
	MemoryContextDelete(cxt);
	elog(DEBUG2, "madlib_dl: worker for segment %d exits", me);
}

/* ---------------------------------------------------------------------
 * Leader side
 * --------------------------------------------------------------------- */

static int64
text_put(char *area, Size *used, const char *s)
{
	int64		off;
	Size		len;

	if (s == NULL)
		return -1;
	off = (int64) *used;
	len = strlen(s) + 1;
	memcpy(area + *used, s, len);
	*used += len;
	return off;
}

static Size
text_need(const char *s)
{
	return s == NULL ? 0 : strlen(s) + 1;
}

static uint8 *workers_slot(DlTransport *t, int slot);
static Size workers_slot_len(const DlTransport *t, int slot);
static Size workers_slot_cap(const DlTransport *t, int slot);
static void workers_set_slot_len(DlTransport *t, int slot, Size len);
static void workers_submit(DlTransport *t, int seg, const DlSegCommand *cmd);
static int	workers_wait_any(DlTransport *t);
static const DlSegStats *workers_stats(const DlTransport *t, int seg);
static void workers_finish(DlTransport *t);

static const DlTransportOps workers_ops = {
	.name = "workers",
	.slot = workers_slot,
	.slot_len = workers_slot_len,
	.slot_cap = workers_slot_cap,
	.set_slot_len = workers_set_slot_len,
	.submit = workers_submit,
	.wait_any = workers_wait_any,
	.stats = workers_stats,
	.finish = workers_finish,
};

DlTransport *
dl_transport_workers_start(const DlSegSetup *setup, MemoryContext cxt)
{
	MemoryContext scxt;
	MemoryContext old;
	DlSegments *s;
	ParallelContext *pcxt;
	DlSegControl *ctl;
	char	   *text;
	DlSegModelText *mtext;
	DlSegSlot  *slot_tab;
	uint8	   *slots;
	Size		text_size = 0;
	Size		slots_size = 0;
	Size		used = 0;

	if (setup->nseg < 1 || setup->nseg > DL_SEG_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of segments %d is out of range", setup->nseg),
				 errhint("Use 1 to %d segments (distribution_rules of the preprocessor).", DL_SEG_MAX)));
	if (setup->n_models < 1 || setup->n_models > DL_SEG_MAX_MODELS || setup->n_slots < 1)
		elog(ERROR, "madlib_dl: bad segment job (%d models, %d slots)", setup->n_models, setup->n_slots);
	if (setup->x_col == NULL || setup->y_col == NULL)
		elog(ERROR, "madlib_dl: segment job without column names");
	/* the workers read these tables as packed ones: their types, checked once */
	dl_pg_require_packed_table(setup->source, setup->x_col, setup->y_col);
	if (OidIsValid(setup->validation))
	{
		if (setup->val_x_col == NULL || setup->val_y_col == NULL)
			elog(ERROR, "madlib_dl: segment job without validation column names");
		dl_pg_require_packed_table(setup->validation, setup->val_x_col, setup->val_y_col);
	}

	/* sizes, overflow-checked (add_size/mul_size ERROR on overflow) */
	text_size = add_size(text_size, text_need(setup->x_col));
	text_size = add_size(text_size, text_need(setup->y_col));
	text_size = add_size(text_size, text_need(setup->val_x_col));
	text_size = add_size(text_size, text_need(setup->val_y_col));
	for (int i = 0; i < setup->n_models; i++)
	{
		text_size = add_size(text_size, text_need(setup->models[i].arch_json));
		text_size = add_size(text_size, text_need(setup->models[i].compile_params));
		text_size = add_size(text_size, text_need(setup->models[i].fit_params));
	}
	text_size = Max(text_size, 1);
	for (int i = 0; i < setup->n_slots; i++)
	{
		Size		cap = setup->slot_sizes != NULL ? setup->slot_sizes[i] : setup->slot_size;

		if (cap > MaxAllocHugeSize)
			elog(ERROR, "madlib_dl: state slot of %zu bytes is too large", cap);
		slots_size = add_size(slots_size, MAXALIGN(cap));
	}
	slots_size = Max(slots_size, MAXIMUM_ALIGNOF);

	scxt = AllocSetContextCreate(cxt, "madlib_dl segments", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(scxt);
	s = palloc0(sizeof(DlSegments));
	s->cxt = scxt;

	EnterParallelMode();
	pcxt = CreateParallelContext("madlib_dl", "dl_segment_worker_main", setup->nseg);
	shm_toc_estimate_chunk(&pcxt->estimator, sizeof(DlSegControl));
	shm_toc_estimate_chunk(&pcxt->estimator, text_size);
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(sizeof(DlSegModelText), setup->n_models));
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(sizeof(DlSegSlot), setup->n_slots));
	shm_toc_estimate_chunk(&pcxt->estimator, slots_size);
	shm_toc_estimate_keys(&pcxt->estimator, 5);
	InitializeParallelDSM(pcxt);
	s->pcxt = pcxt;

	ctl = shm_toc_allocate(pcxt->toc, sizeof(DlSegControl));
	memset(ctl, 0, sizeof(DlSegControl));
	SpinLockInit(&ctl->mutex);
	ConditionVariableInit(&ctl->cv_work);
	ConditionVariableInit(&ctl->cv_done);
	ctl->nseg = setup->nseg;
	ctl->n_models = setup->n_models;
	ctl->n_slots = setup->n_slots;
	ctl->source = setup->source;
	ctl->validation = setup->validation;
	ctl->by_dist_key = get_attnum(setup->source, "__dist_key__") != InvalidAttrNumber;

	text = shm_toc_allocate(pcxt->toc, text_size);
	ctl->x_col = text_put(text, &used, setup->x_col);
	ctl->y_col = text_put(text, &used, setup->y_col);
	ctl->val_x_col = text_put(text, &used, setup->val_x_col);
	ctl->val_y_col = text_put(text, &used, setup->val_y_col);
	mtext = shm_toc_allocate(pcxt->toc, sizeof(DlSegModelText) * setup->n_models);
	for (int i = 0; i < setup->n_models; i++)
	{
		mtext[i].arch = text_put(text, &used, setup->models[i].arch_json);
		mtext[i].compile = text_put(text, &used, setup->models[i].compile_params);
		mtext[i].fit = text_put(text, &used, setup->models[i].fit_params);
	}
	slot_tab = shm_toc_allocate(pcxt->toc, sizeof(DlSegSlot) * setup->n_slots);
	{
		Size		off = 0;

		for (int i = 0; i < setup->n_slots; i++)
		{
			slot_tab[i].offset = off;
			slot_tab[i].cap = setup->slot_sizes != NULL ? setup->slot_sizes[i] : setup->slot_size;
			slot_tab[i].len = 0;
			off += MAXALIGN(slot_tab[i].cap);
		}
	}
	slots = shm_toc_allocate(pcxt->toc, slots_size);

	shm_toc_insert(pcxt->toc, DL_SEG_KEY_CONTROL, ctl);
	shm_toc_insert(pcxt->toc, DL_SEG_KEY_TEXT, text);
	shm_toc_insert(pcxt->toc, DL_SEG_KEY_MODELS, mtext);
	shm_toc_insert(pcxt->toc, DL_SEG_KEY_SLOTLEN, slot_tab);
	shm_toc_insert(pcxt->toc, DL_SEG_KEY_SLOTS, slots);

	local_attach(&s->local, pcxt->toc, scxt);

	LaunchParallelWorkers(pcxt);
	if (pcxt->nworkers_launched > 0)
		WaitForParallelWorkersToAttach(pcxt);
	s->nlaunched = pcxt->nworkers_launched;
	elog(DEBUG1, "madlib_dl: %d of %d segments run on parallel workers", s->nlaunched, setup->nseg);

	/* the leader's own segments load while the workers load theirs */
	for (int k = s->nlaunched; k < setup->nseg; k++)
		local_load(&s->local, k);

	MemoryContextSwitchTo(old);
	s->base.ops = &workers_ops;
	s->base.nseg = setup->nseg;
	s->base.n_slots = setup->n_slots;
	s->base.n_own = s->nlaunched;
	return &s->base;
}

static uint8 *
workers_slot(DlTransport *t, int slot)
{
	DlSegments *s = (DlSegments *) t;

	if (slot < 0 || slot >= s->local.ctl->n_slots)
		elog(ERROR, "madlib_dl: slot %d out of range", slot);
	return s->local.slots + s->local.slot[slot].offset;
}

static Size
workers_slot_len(const DlTransport *t, int slot)
{
	const DlSegments *s = (const DlSegments *) t;

	if (slot < 0 || slot >= s->local.ctl->n_slots)
		elog(ERROR, "madlib_dl: slot %d out of range", slot);
	return s->local.slot[slot].len;
}

static Size
workers_slot_cap(const DlTransport *t, int slot)
{
	const DlSegments *s = (const DlSegments *) t;

	if (slot < 0 || slot >= s->local.ctl->n_slots)
		elog(ERROR, "madlib_dl: slot %d out of range", slot);
	return s->local.slot[slot].cap;
}

static void
workers_set_slot_len(DlTransport *t, int slot, Size len)
{
	DlSegments *s = (DlSegments *) t;

	if (slot < 0 || slot >= s->local.ctl->n_slots || len > s->local.slot[slot].cap)
		elog(ERROR, "madlib_dl: bad slot %d or length %zu", slot, len);
	s->local.slot[slot].len = len;
}

static const DlSegStats *
workers_stats(const DlTransport *t, int seg)
{
	const DlSegments *s = (const DlSegments *) t;

	return &s->local.ctl->stats[seg];
}

/*
 * Throw the ERROR of a worker that stopped, if it sent one; otherwise
 * report that it died.  Only workers with a command in progress matter.
 */
static void
check_workers_alive(DlSegments *s)
{
	DlSegControl *ctl = s->local.ctl;

	for (int i = 0; i < s->nlaunched; i++)
	{
		pid_t		pid;
		BgwHandleStatus status;
		bool		done;

		SpinLockAcquire(&ctl->mutex);
		done = ctl->done_gen[i] == ctl->cmd_gen[i];
		SpinLockRelease(&ctl->mutex);
		if (done)
			continue;
		status = GetBackgroundWorkerPid(s->pcxt->worker[i].bgwhandle, &pid);

		/*
		 * NOT_YET_STARTED is possible for a live worker: it may have attached
		 * (and sent its first message) before the postmaster recorded its
		 * pid.  Only a stopped worker is dead.
		 */
		if (status != BGWH_STOPPED && status != BGWH_POSTMASTER_DIED)
			continue;
		/* a worker that raised an ERROR sent it before exiting: throw it */
		HandleParallelMessages();
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("parallel worker for segment %d exited unexpectedly", i),
				 errhint("Look in the server log for the reason, then run the function again.")));
	}
}

static void
workers_submit(DlTransport *t, int seg, const DlSegCommand *cmd)
{
	DlSegments *s = (DlSegments *) t;

	DlSegControl *ctl = s->local.ctl;
	uint64		gen;

	if (seg < 0 || seg >= ctl->nseg || s->pending[seg])
		elog(ERROR, "madlib_dl: segment %d is out of range or busy", seg);
	SpinLockAcquire(&ctl->mutex);
	ctl->cmd[seg] = *cmd;
	gen = ++ctl->generation;
	ctl->cmd_gen[seg] = gen;
	SpinLockRelease(&ctl->mutex);
	s->pending[seg] = true;
	if (seg < s->nlaunched)
		ConditionVariableBroadcast(&ctl->cv_work);
	else
	{
		/* no worker took this segment: the leader runs it now */
		CHECK_FOR_INTERRUPTS();
		segment_execute(&s->local, seg, cmd, &ctl->stats[seg]);
		SpinLockAcquire(&ctl->mutex);
		ctl->done_gen[seg] = gen;
		SpinLockRelease(&ctl->mutex);
	}
}

static int
workers_wait_any(DlTransport *t)
{
	DlSegments *s = (DlSegments *) t;

	DlSegControl *ctl = s->local.ctl;
	bool		any = false;
	bool		slept = false;
	int			found = -1;

	for (int k = 0; k < ctl->nseg; k++)
		any |= s->pending[k];
	if (!any)
		return -1;
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		SpinLockAcquire(&ctl->mutex);
		for (int k = 0; k < ctl->nseg && found < 0; k++)
			if (s->pending[k] && ctl->done_gen[k] == ctl->cmd_gen[k])
				found = k;
		SpinLockRelease(&ctl->mutex);
		if (found >= 0)
			break;
		check_workers_alive(s);
		if (!slept)
		{
			ConditionVariablePrepareToSleep(&ctl->cv_done);
			slept = true;
			continue;			/* look again before the first sleep */
		}
		(void) ConditionVariableTimedSleep(&ctl->cv_done, DL_SEG_POLL_MS, PG_WAIT_EXTENSION);
	}
	if (slept)
		ConditionVariableCancelSleep();
	s->pending[found] = false;
	return found;
}

static void
workers_finish(DlTransport *t)
{
	DlSegments *s = (DlSegments *) t;

	DlSegControl *ctl = s->local.ctl;

	SpinLockAcquire(&ctl->mutex);
	for (int k = 0; k < ctl->nseg; k++)
	{
		memset(&ctl->cmd[k], 0, sizeof(DlSegCommand));
		ctl->cmd[k].kind = DL_SEG_CMD_EXIT;
		ctl->cmd_gen[k] = ++ctl->generation;
	}
	SpinLockRelease(&ctl->mutex);
	ConditionVariableBroadcast(&ctl->cv_work);

	elog(DEBUG2, "madlib_dl: segments told to exit");
	WaitForParallelWorkersToFinish(s->pcxt);
	DestroyParallelContext(s->pcxt);
	ExitParallelMode();
	elog(DEBUG2, "madlib_dl: segments finished");
	MemoryContextDelete(s->cxt);	/* s lives there */
}

#else							/* GP_VERSION_NUM */

DlTransport *
dl_transport_workers_start(const DlSegSetup *setup, MemoryContext cxt)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("virtual segments (parallel workers) are not used on Greenplum"),
			 errhint("On Greenplum and Cloudberry, fit and fit_multiple run over the real segments.")));
	return NULL;
}

void
dl_segment_worker_main(dsm_segment *seg, shm_toc *toc)
{
	elog(ERROR, "madlib_dl: no parallel workers on Greenplum");
}

#endif							/* GP_VERSION_NUM */
