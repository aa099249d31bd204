/*-------------------------------------------------------------------------
 *
 * step.c
 *	  The per-segment steps of fit and fit_multiple: train one model state
 *	  on one partition for one visit, and evaluate a state on a segment's
 *	  partitions (see segments.h for the contracts).
 *
 * Nothing here uses shared memory or the parallel machinery: a step reads
 * a state buffer and a partition (runtime/partition.c: cached in process
 * memory, or streamed from its table a window at a time) and writes the
 * state buffer back.  Both placements run the same passes of the one
 * shuffle (dl_epoch.h), so they give the same bytes.  The PostgreSQL virtual segments (transport/workers.c) call these in
 * the leader and in the workers; a Greenplum aggregate can call them in
 * its final function over the rows of one segment.
 *
 * IDENTIFICATION
 *	  src/pg/runtime/step.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_rng.h"

#include "pg_glue.h"
#include "pg_model.h"
#include "pg_util.h"
#include "segments.h"

/* A pass over a partition's windows: where a streamed window's rows go. */
typedef struct StepWindow
{
	float	   *x;				/* streamed: (window rows, x_width) */
	float	   *y;				/* streamed: (window rows, y_width) */
	double		read_seconds;
} StepWindow;

/* The buffers of a streamed partition's window, sized once per step. */
static void
window_alloc(StepWindow *w, const DlSegPartition *p)
{
	int64		rows = Min(p->n, dl_epoch_window_rows(p->x_width));

	memset(w, 0, sizeof(*w));
	if (p->cached || p->n <= 0)
		return;
	/* the partition's sizes were checked against MaxAllocHugeSize rows by rows */
	w->x = MemoryContextAllocExtended(CurrentMemoryContext,
									  Max((Size) rows * p->x_width * sizeof(float), 1),
									  MCXT_ALLOC_HUGE);
	w->y = MemoryContextAllocExtended(CurrentMemoryContext,
									  Max((Size) rows * p->y_width * sizeof(float), 1),
									  MCXT_ALLOC_HUGE);
}

/*
 * The rows of blocks order[first .. first + k) of p as runs: pointers
 * into a cached partition, or read into w's buffers.
 */
static void
window_runs(const DlSegPartition *p, const int64 *order, int64 first, int k, StepWindow *w,
			DlRows *runs)
{
	int64		used = 0;
	instr_time	start;

	if (!p->cached)
		INSTR_TIME_SET_CURRENT(start);
	for (int j = 0; j < k; j++)
	{
		const DlBlock *b = &p->blocks[order[first + j]];

		runs[j].n = b->n;
		runs[j].y_width = p->y_width;
		if (p->cached)
		{
			runs[j].x = p->x + b->start * p->x_width;
			runs[j].y = p->y + b->start * p->y_width;
			continue;
		}
		CHECK_FOR_INTERRUPTS();
		dl_seg_partition_read_rows(p, (int) b->buffer, b->offset, b->n,
								   w->x + used * p->x_width, w->y + used * p->y_width);
		runs[j].x = w->x + used * p->x_width;
		runs[j].y = w->y + used * p->y_width;
		used += b->n;
	}
	if (!p->cached)
		w->read_seconds += dl_pg_seconds_since(start);
}

/*
 * The token ids of a window's runs (blocks order[first .. first + k) of
 * p): every value an Embedding reads from the input must be an integer
 * id it can look up.  ERROR 22000 naming the row, its buffer and the
 * table (the Embedding's forward pass would name only the row of a
 * shuffled batch).
 */
static void
check_window_ids(DlPgModel *m, const DlSegPartition *p, const int64 *order, int64 first, int k,
				 const DlRows *runs)
{
	const DlModelSpec *spec = dl_model_spec(m->model);

	if (!dl_model_spec_reads_ids(spec, 0))
		return;
	for (int j = 0; j < k; j++)
	{
		const DlBlock *b = &p->blocks[order[first + j]];
		DlError		err;
		int64_t		row;

		dl_error_clear(&err);
		if (dl_model_check_ids(spec, 0, runs[j].x, runs[j].n, &row, &err) == DL_OK)
			continue;
		dl_error_prefix(&err, "row " INT64_FORMAT " of buffer %d of table %s",
						(int64) (b->offset + row + 1), p->bufs[b->buffer].buffer_id, p->relname);
		dl_pg_report(&err);
	}
}

/*
 * One pass over p: an epoch (train: the blocks in the order drawn from
 * the model's generator) or an evaluation (the rows in order).
 */
static DlStatus
partition_pass(DlPgModel *m, const DlTrainConfig *cfg, const DlSegPartition *p, bool train,
			   int64 *order, StepWindow *w, DlBatchStats *bs, DlError *err)
{
	DlPass		pass;
	DlStatus	rc;

	dl_epoch_order(dl_model_rng(m->model), train && cfg->shuffle, order, p->n_blocks);
	if ((rc = dl_pass_begin(&pass, m->model, cfg, train, p->n, bs, err)) != DL_OK)
		return rc;
	for (int64 first = 0; first < p->n_blocks; first += DL_EPOCH_WINDOW_BLOCKS)
	{
		DlRows		runs[DL_EPOCH_WINDOW_BLOCKS];
		int			k = (int) Min((int64) DL_EPOCH_WINDOW_BLOCKS, p->n_blocks - first);

		window_runs(p, order, first, k, w, runs);
		check_window_ids(m, p, order, first, k, runs);
		if ((rc = dl_pass_window(&pass, runs, k, err)) != DL_OK)
			return rc;
	}
	return dl_pass_end(&pass, err);
}

/* The step's memory: a child of cxt, and its block order. */
static MemoryContext
step_context(MemoryContext cxt, const DlSegPartition *p, int64 **order)
{
	MemoryContext sc = AllocSetContextCreate(cxt, "madlib_dl step", ALLOCSET_DEFAULT_SIZES);

	*order = MemoryContextAllocExtended(sc, Max((Size) p->n_blocks * sizeof(int64), 1),
										MCXT_ALLOC_HUGE);
	return sc;
}

void
dl_seg_check_partition(const DlPgModel *m, const DlSegPartition *p, const char *what)
{
	if (p->n > 0 && (p->x_width != dl_pg_model_input_size(m) ||
					 p->y_width != dl_pg_model_output_width(m)))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("%s data has " INT64_FORMAT " values and " INT64_FORMAT " classes per sample, the model takes " INT64_FORMAT " and gives " INT64_FORMAT,
						what, p->x_width, p->y_width, dl_pg_model_input_size(m),
						dl_pg_model_output_width(m)),
				 errhint("Use an architecture that matches the preprocessed data.")));
}

bool
dl_seg_train_step(DlPgModel *m, uint8 *state, Size state_len, Size state_cap,
				  Size *state_len_out, DlSegPartition *p, MemoryContext cxt,
				  int64 iteration, int segment, bool catch_divergence, DlSegStats *st)
{
	DlTrainConfig cfg;
	DlBatchStats bs = {0};
	DlError		err;
	MemoryContext sc;
	MemoryContext old;
	StepWindow	w;
	int64	   *order;
	size_t		need;

	memset(st, 0, sizeof(*st));
	*state_len_out = state_len;
	dl_error_clear(&err);
	dl_pg_model_train_config(m, &cfg);
	dl_pg_check(dl_blob_read(m->model, state, state_len, NULL, &err), &err);
	dl_seg_check_partition(m, p, "training");
	if (p->n <= 0)
		return true;			/* nothing to learn from: state unchanged */

	sc = step_context(cxt, p, &order);
	old = MemoryContextSwitchTo(sc);
	window_alloc(&w, p);
	dl_model_seed_rng(m->model, dl_rng_hash_seed(m->fit.seed, iteration, segment));
	for (int e = 0; e < m->fit.epochs; e++)
	{
		DlStatus	rc = partition_pass(m, &cfg, p, true, order, &w, &bs, &err);

		if (rc == DL_ERR_DIVERGED && catch_divergence)
		{
			/* the state buffer still holds the state this visit started from */
			st->diverged = true;
			strlcpy(st->message, err.msg, sizeof(st->message));
			MemoryContextSwitchTo(old);
			MemoryContextDelete(sc);
			return false;
		}
		dl_pg_check(rc, &err);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(sc);
	dl_pg_check(dl_blob_size(m->model, &need, &err), &err);
	if (need > state_cap)
		elog(ERROR, "madlib_dl: model state of %zu bytes does not fit a slot of %zu", need, state_cap);
	dl_pg_check(dl_blob_write(m->model, bs.n, state, state_cap, &err), &err);
	*state_len_out = need;
	st->train_loss_sum = bs.loss_sum;
	st->train_metric_sum = bs.metric_sum;
	st->train_n = bs.n;
	st->samples_seen = bs.n;
	st->read_seconds = w.read_seconds;
	return true;
}

/* Loss and metric sums of m's state on partition p (what names it) into *bs. */
static void
eval_partition(DlPgModel *m, const DlTrainConfig *cfg, DlSegPartition *p, const char *what,
			   MemoryContext cxt, DlBatchStats *bs, double *read_seconds)
{
	MemoryContext sc;
	MemoryContext old;
	StepWindow	w;
	int64	   *order;
	DlError		err;

	dl_seg_check_partition(m, p, what);
	if (p->n <= 0)
		return;
	dl_error_clear(&err);
	sc = step_context(cxt, p, &order);
	old = MemoryContextSwitchTo(sc);
	window_alloc(&w, p);
	dl_pg_check(partition_pass(m, cfg, p, false, order, &w, bs, &err), &err);
	*read_seconds += w.read_seconds;
	MemoryContextSwitchTo(old);
	MemoryContextDelete(sc);
}

void
dl_seg_eval_step(DlPgModel *m, const uint8 *state, Size state_len,
				 DlSegPartition *tp, DlSegPartition *vp, MemoryContext cxt,
				 DlSegStats *st)
{
	DlTrainConfig cfg;
	DlBatchStats bs = {0};
	DlError		err;

	memset(st, 0, sizeof(*st));
	dl_error_clear(&err);
	dl_pg_model_train_config(m, &cfg);
	dl_pg_check(dl_blob_read(m->model, state, state_len, NULL, &err), &err);
	eval_partition(m, &cfg, tp, "training", cxt, &bs, &st->read_seconds);
	st->train_loss_sum = bs.loss_sum;
	st->train_metric_sum = bs.metric_sum;
	st->train_n = bs.n;
	if (vp != NULL)
	{
		DlBatchStats vs = {0};

		eval_partition(m, &cfg, vp, "validation", cxt, &vs, &st->read_seconds);
		st->val_loss_sum = vs.loss_sum;
		st->val_metric_sum = vs.metric_sum;
		st->val_n = vs.n;
	}
}
