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

#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/builtins.h"
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

/* One training step's model, partition and what it reads of the state. */
typedef struct TrainStep
{
	DlPgModel  *m;
	DlSegPartition *p;
	DlTrainConfig cfg;
	size_t		blob;			/* bytes of the state's blob */
	bool		has_round;		/* a round record follows the blob */
	DlVisitRound round;
	DlBatchStats bs;
	DlError		err;
	double		read_seconds;	/* reading a streamed partition */
} TrainStep;

/* Run the visit of ts (the partition not empty) in a child of cxt; the engine's status. */
static DlStatus
train_visit(TrainStep *ts, MemoryContext cxt, int64 iteration, int segment)
{
	MemoryContext sc;
	MemoryContext old;
	StepVisit	v;
	DlVisitData d;
	DlStatus	rc;

	sc = step_context(cxt, ts->p, &d.order);
	old = MemoryContextSwitchTo(sc);
	v.m = ts->m;
	v.p = ts->p;
	window_alloc(&v.w, ts->p);
	d.blocks = ts->p->blocks;
	d.n_blocks = ts->p->n_blocks;
	d.rows = ts->p->n;
	d.window = visit_window;
	d.arg = &v;
	if (!ts->round.resume)
		dl_model_seed_rng(ts->m->model, dl_rng_hash_seed(ts->m->fit.seed, iteration, segment));
	rc = dl_visit_run(ts->m->model, &ts->cfg, ts->m->fit.epochs, &d, &ts->round, &ts->bs, &ts->err);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(sc);
	ts->read_seconds = v.w.read_seconds;
	return rc;
}

/* Write the trained state of ts (and its round record) to state, of state_cap bytes; its sums into *st. */
static void
train_write(TrainStep *ts, uint8 *state, Size state_cap, Size *state_len_out, DlSegStats *st)
{
	size_t		need = ts->blob + (ts->has_round ? DL_VISIT_ROUND_BYTES : 0);

	if (need > state_cap)
		elog(ERROR, "madlib_dl: model state of %zu bytes does not fit a slot of %zu", need, state_cap);
	dl_pg_check(dl_blob_write(ts->m->model, ts->bs.n, state, ts->blob, &ts->err), &ts->err);
	if (ts->has_round)
		dl_visit_round_write(&ts->round, state + ts->blob);
	*state_len_out = need;
	st->train_loss_sum = ts->bs.loss_sum;
	st->train_metric_sum = ts->bs.metric_sum;
	st->train_n = ts->bs.n;
	st->samples_seen = ts->bs.n;
	st->read_seconds = ts->read_seconds;
}

bool
dl_seg_train_step(DlPgModel *m, uint8 *state, Size state_len, Size state_cap,
				  Size *state_len_out, DlSegPartition *p, MemoryContext cxt,
				  int64 iteration, int segment, bool catch_divergence, DlSegStats *st)
{
	TrainStep	ts;
	DlStatus	rc;

	memset(st, 0, sizeof(*st));
	memset(&ts, 0, sizeof(ts));
	ts.m = m;
	ts.p = p;
	*state_len_out = state_len;
	dl_error_clear(&ts.err);
	dl_pg_model_train_config(m, &ts.cfg);
	dl_pg_check(dl_blob_size(m->model, &ts.blob, &ts.err), &ts.err);
	ts.has_round = read_round(state, state_len, ts.blob, &ts.round);
	dl_pg_check(dl_blob_read(m->model, state, ts.has_round ? ts.blob : state_len, NULL, &ts.err), &ts.err);
	dl_seg_check_partition(m, p, "training");
	if (p->n <= 0)
	{
		/* nothing to learn from: state unchanged, the visit over */
		ts.round.done = true;
		if (ts.has_round)
			dl_visit_round_write(&ts.round, state + ts.blob);
		return true;
	}
	rc = train_visit(&ts, cxt, iteration, segment);
	if (rc == DL_ERR_DIVERGED && catch_divergence)
	{
		/* the state buffer still holds the state this round started from */
		st->diverged = true;
		strlcpy(st->message, ts.err.msg, sizeof(st->message));
		return false;
	}
	dl_pg_check(rc, &ts.err);
	train_write(&ts, state, state_cap, state_len_out, st);
	return true;
}

bytea *
dl_seg_train_state(const DlSegStepRun *run, const bytea *state, DlSegStats *st)
{
	Size		len = VARSIZE_ANY_EXHDR(state);
	size_t		cap;
	uint8	   *buf;
	bytea	   *out;
	DlError		err;

	dl_error_clear(&err);
	dl_pg_check(dl_blob_size(run->m->model, &cap, &err), &err);
	cap = Max(cap, len);
	buf = MemoryContextAllocHuge(run->cxt, Max(cap, 1));
	memcpy(buf, VARDATA_ANY(state), len);
	if (!dl_seg_train_step(run->m, buf, len, cap, &len, run->part, run->cxt, run->iteration,
						   run->segment, true, st))
		return NULL;
	if (len > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("model state of %zu bytes is larger than a bytea can hold", len),
				 errhint("Use a smaller model.")));
	out = MemoryContextAlloc(run->out_cxt, VARHDRSZ + len);
	SET_VARSIZE(out, VARHDRSZ + len);
	memcpy(VARDATA(out), buf, len);
	return out;
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

	int			n_msum = dl_pg_model_metric_sums_len(m, "fit");

	memset(st, 0, dl_seg_stats_size(n_msum));
	dl_error_clear(&err);
	dl_pg_model_train_config(m, &cfg);
	dl_pg_check(dl_blob_read(m->model, state, state_len, NULL, &err), &err);
	st->n_msum = n_msum;
	bs.metric_sums = n_msum > 0 ? st->msum : NULL;
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

		vs.metric_sums = n_msum > 0 ? st->msum + n_msum : NULL;
		eval_partition(m, &cfg, vp, "validation", cxt, &vs, &st->read_seconds);
		st->val_loss_sum = vs.loss_sum;
		st->val_metric_sum = vs.metric_sum;
		st->val_n = vs.n;
		memcpy(st->val_out_loss, vs.output_loss_sum, sizeof(double) * st->n_out);
		memcpy(st->val_out_metric, vs.output_metric_sum, sizeof(double) * st->n_out);
	}
}

Datum
dl_seg_step_field(HeapTupleHeader step, const char *name, bool null_ok, bool *isnull)
{
	Datum		d = GetAttributeByName(step, name, isnull);

	if (*isnull && !null_ok)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s of the step must not be NULL", name),
				 errhint("Give a model state, its architecture, compile_params, the iteration and the segment.")));
	return d;
}

Datum
dl_seg_step_result(TupleDesc tupdesc, bytea *state, const DlSegStats *st, double seconds)
{
	Datum		values[9];
	bool		nulls[9] = {false, false, false, false, false, false, false, false, false};

	values[0] = PointerGetDatum(state);
	nulls[0] = state == NULL;
	values[1] = Float8GetDatum(st->train_loss_sum);
	values[2] = Float8GetDatum(st->train_metric_sum);
	values[3] = Int64GetDatum(st->train_n);
	values[4] = Float8GetDatum(seconds);
	values[5] = st->diverged ? CStringGetTextDatum(st->message) : (Datum) 0;
	nulls[5] = !st->diverged;
	dl_seg_output_sums(st->n_out, st->train_out_loss, st->train_out_metric, values + 6, nulls + 6);
	values[8] = dl_seg_msum_datum(st, &nulls[8]);
	tupdesc = BlessTupleDesc(tupdesc);
	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
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
