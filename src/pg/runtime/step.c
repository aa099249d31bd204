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
#include "madlib_dl/dl_visit.h"

#include "pg_glue.h"
#include "pg_model.h"
#include "pg_util.h"
#include "segments.h"

/* A pass over a partition's windows: where a streamed window's rows go. */
typedef struct StepWindow
{
	float	   *buf[DL_SEG_MAX_VARS];	/* streamed: (window rows, widths[i]) */
	/* the runs' arrays: every variable's rows of each run */
	const float *rows[DL_EPOCH_WINDOW_BLOCKS][DL_SEG_MAX_VARS];
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
	for (int i = 0; i < p->n_x + p->n_y; i++)
		w->buf[i] = MemoryContextAllocExtended(CurrentMemoryContext,
											   Max((Size) rows * p->widths[i] * sizeof(float), 1),
											   MCXT_ALLOC_HUGE);
}

/*
 * The rows of blocks order[first .. first + k) of p as runs: pointers
 * into a cached partition, or read into w's buffers.  A run gives every
 * variable's rows: the model's inputs (xs) and outputs (ys, one-hot or
 * numeric of each output's width).
 */
static void
window_runs(const DlSegPartition *p, const int64 *order, int64 first, int k, StepWindow *w,
			DlRows *runs)
{
	int			nv = p->n_x + p->n_y;
	int64		used = 0;
	instr_time	start;

	if (!p->cached)
		INSTR_TIME_SET_CURRENT(start);
	for (int j = 0; j < k; j++)
	{
		const DlBlock *b = &p->blocks[order[first + j]];
		float	   *out[DL_SEG_MAX_VARS];

		memset(&runs[j], 0, sizeof(DlRows));
		runs[j].n = b->n;
		runs[j].xs = w->rows[j];
		runs[j].ys = w->rows[j] + p->n_x;
		runs[j].y_widths = (const int64_t *) p->widths + p->n_x;
		for (int i = 0; i < nv; i++)
			w->rows[j][i] = p->cached ? p->data[i] + b->start * p->widths[i] :
				(out[i] = w->buf[i] + used * p->widths[i]);
		if (p->cached)
			continue;
		CHECK_FOR_INTERRUPTS();
		dl_seg_partition_read_rows(p, (int) b->buffer, b->offset, b->n, out);
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

	for (int i = 0; i < spec->n_inputs && i < p->n_x; i++)
	{
		if (!dl_model_spec_reads_ids(spec, i))
			continue;
		for (int j = 0; j < k; j++)
		{
			const DlBlock *b = &p->blocks[order[first + j]];
			DlError		err;
			int64_t		row;

			dl_error_clear(&err);
			if (dl_model_check_ids(spec, i, runs[j].xs[i], runs[j].n, &row, &err) == DL_OK)
				continue;
			dl_error_prefix(&err, "row " INT64_FORMAT " of buffer %d of table %s",
							(int64) (b->offset + row + 1), p->bufs[b->buffer].buffer_id, p->relname);
			dl_pg_report(&err);
		}
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

/* A visit's windows (dl_visit.h): the partition and where its windows go. */
typedef struct StepVisit
{
	DlPgModel  *m;				/* its token ids are checked */
	const DlSegPartition *p;
	StepWindow	w;
} StepVisit;

/* DlVisitWindowFn: the rows of the blocks order[0..k) of the partition. */
static DlStatus
visit_window(void *arg, const int64_t *order, int k, DlRows *runs, DlError *err)
{
	StepVisit  *v = (StepVisit *) arg;

	window_runs(v->p, order, 0, k, &v->w, runs);
	check_window_ids(v->m, v->p, order, 0, k, runs);
	return DL_OK;
}

/*
 * The round record after the blob in state[0..len) (blob bytes of
 * state), into *r: false when there is none (len is not blob plus a
 * record), ERROR 22000 when it is malformed.
 */
static bool
read_round(const uint8 *state, Size len, size_t blob, DlVisitRound *r)
{
	DlError		err;

	dl_visit_round_init(r);
	if (len != blob + DL_VISIT_ROUND_BYTES)
		return false;
	dl_error_clear(&err);
	dl_pg_check(dl_visit_round_read(state + blob, DL_VISIT_ROUND_BYTES, r, &err), &err);
	return true;
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
	const DlModelSpec *spec = m->spec;

	if (p->n <= 0)
		return;
	if (p->n_x != spec->n_inputs || p->n_y != spec->n_outputs)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("%s data has %d independent and %d dependent variables, the model has %d inputs and %d outputs",
						what, p->n_x, p->n_y, spec->n_inputs, spec->n_outputs),
				 errhint("Preprocess one independent variable per model input and one dependent variable per output, in the model's order.")));
	if (p->n_x == 1 && p->n_y == 1)
	{
		if (p->x_width != dl_pg_model_input_size(m) || p->y_width != dl_pg_model_output_width(m))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("%s data has " INT64_FORMAT " values and " INT64_FORMAT " classes per sample, the model takes " INT64_FORMAT " and gives " INT64_FORMAT,
							what, p->x_width, p->y_width, dl_pg_model_input_size(m),
							dl_pg_model_output_width(m)),
					 errhint("Use an architecture that matches the preprocessed data.")));
		return;
	}
	for (int i = 0; i < p->n_x + p->n_y; i++)
	{
		bool		y = i >= p->n_x;
		int			k = y ? i - p->n_x : i;
		int64		want = y ? dl_pg_model_output_width_k(m, k) : dl_pg_model_input_size_k(m, k);

		if (p->widths[i] != want)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("%s data has " INT64_FORMAT " %s per sample in %s variable %d, model %s \"%s\" %s " INT64_FORMAT,
							what, p->widths[i], y ? "classes" : "values", y ? "dependent" : "independent",
							k + 1, y ? "output" : "input",
							y ? spec->layers[spec->outputs[k]].name : spec->input_names[k],
							y ? "gives" : "takes", want),
					 errhint("Preprocess the variables in the order of the model's inputs and outputs, each of its shape.")));
	}
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
	StepVisit	v;
	DlVisitData d;
	DlVisitRound round;
	DlStatus	rc;
	bool		has_round;
	size_t		blob;
	size_t		need;

	memset(st, 0, sizeof(*st));
	*state_len_out = state_len;
	dl_error_clear(&err);
	dl_pg_model_train_config(m, &cfg);
	dl_pg_check(dl_blob_size(m->model, &blob, &err), &err);
	has_round = read_round(state, state_len, blob, &round);
	dl_pg_check(dl_blob_read(m->model, state, has_round ? blob : state_len, NULL, &err), &err);
	dl_seg_check_partition(m, p, "training");
	if (p->n <= 0)
	{
		/* nothing to learn from: state unchanged, the visit over */
		round.done = true;
		if (has_round)
			dl_visit_round_write(&round, state + blob);
		return true;
	}

	sc = step_context(cxt, p, &d.order);
	old = MemoryContextSwitchTo(sc);
	v.m = m;
	v.p = p;
	window_alloc(&v.w, p);
	d.blocks = p->blocks;
	d.n_blocks = p->n_blocks;
	d.rows = p->n;
	d.window = visit_window;
	d.arg = &v;
	if (!round.resume)
		dl_model_seed_rng(m->model, dl_rng_hash_seed(m->fit.seed, iteration, segment));
	rc = dl_visit_run(m->model, &cfg, m->fit.epochs, &d, &round, &bs, &err);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(sc);
	if (rc == DL_ERR_DIVERGED && catch_divergence)
	{
		/* the state buffer still holds the state this round started from */
		st->diverged = true;
		strlcpy(st->message, err.msg, sizeof(st->message));
		return false;
	}
	dl_pg_check(rc, &err);
	need = blob + (has_round ? DL_VISIT_ROUND_BYTES : 0);
	if (need > state_cap)
		elog(ERROR, "madlib_dl: model state of %zu bytes does not fit a slot of %zu", need, state_cap);
	dl_pg_check(dl_blob_write(m->model, bs.n, state, blob, &err), &err);
	if (has_round)
		dl_visit_round_write(&round, state + blob);
	*state_len_out = need;
	st->train_loss_sum = bs.loss_sum;
	st->train_metric_sum = bs.metric_sum;
	st->train_n = bs.n;
	st->samples_seen = bs.n;
	st->read_seconds = v.w.read_seconds;
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
	st->n_out = m->spec->n_outputs > 1 ? m->spec->n_outputs : 0;
	memcpy(st->train_out_loss, bs.output_loss_sum, sizeof(double) * st->n_out);
	memcpy(st->train_out_metric, bs.output_metric_sum, sizeof(double) * st->n_out);
	if (vp != NULL)
	{
		DlBatchStats vs = {0};

		eval_partition(m, &cfg, vp, "validation", cxt, &vs, &st->read_seconds);
		st->val_loss_sum = vs.loss_sum;
		st->val_metric_sum = vs.metric_sum;
		st->val_n = vs.n;
		memcpy(st->val_out_loss, vs.output_loss_sum, sizeof(double) * st->n_out);
		memcpy(st->val_out_metric, vs.output_metric_sum, sizeof(double) * st->n_out);
	}
}

void
dl_seg_output_sums(int n_out, const double *loss, const double *metric, Datum *values,
				   bool *nulls)
{
	nulls[0] = nulls[1] = n_out <= 0;
	values[0] = values[1] = (Datum) 0;
	if (n_out <= 0)
		return;
	values[0] = PointerGetDatum(dl_pg_float8_array(loss, n_out));
	values[1] = PointerGetDatum(dl_pg_float8_array(metric, n_out));
}
