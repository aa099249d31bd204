/*-------------------------------------------------------------------------
 *
 * fit_multiple.c
 *	  madlib_dl._fit_multiple_run: train many model configurations at once
 *	  by model hopper parallelism (MOP, as in Cerebro) over the segments.
 *
 * One call runs the whole job; the PL/pgSQL driver (src/sql/
 * fit_multiple.sql) validates the user's arguments before and writes
 * the output tables after.  It reads top to bottom:
 *
 *	 1. parse and check the job (job.c), and its memory (limits.c);
 *	 2. describe every model k from its parsed configuration (state size,
 *	    cost = parameters x epochs, metric) and make the hopper
 *	    (dl_hopper.h: the seeded visit order, the rotation);
 *	 3. start the segments (the transport) with one state slot per model,
 *	    and write each model's initial state (given weights, or random
 *	    from its seed) into its slot;
 *	 4. for each round of iterations up to the next metrics point:
 *	      free segments take the model the hopper gives them, which trains
 *	          its `epochs` passes over that segment's partition, reading
 *	          and writing its own slot: the state moves without a copy and
 *	          a model is never on two segments at once; no barrier per hop
 *	          or per iteration;
 *	      at the metrics point every live model is evaluated on every
 *	          segment's training and validation partitions, sums in
 *	          segment order, and a NOTICE names the best model so far;
 *	      with early_stopping, each evaluated model's rule (dl_early_stop.h):
 *	          its state is copied when it is its best so far
 *	          (restore_best), and a model that stops is dropped from the
 *	          hopper, so the next rounds have less work and the others
 *	          take the segments it would have used;
 *	 5. the result rows: each model's final weights (read from its slot,
 *	    or its best state's with restore_best),
 *	    status, metric history, the schedule, and its own training and
 *	    waiting seconds.
 * A model whose training diverges (NaN/inf) keeps the state it had before
 * that visit and stops; the others go on.  Steps 2 to 5 are also
 * madlib_keras_automl's (automl.c), through fit_multiple.h.
 *
 * The result of model k depends only on its definition, its initial state
 * and the order of segments it visits (fixed by the hopper), never on
 * timing or on which process or transport ran a step.  With one segment
 * and one model this is exactly fit on one segment.
 *
 * IDENTIFICATION
 *	  src/pg/api/fit_multiple.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_hopper.h"
#include "madlib_dl/dl_params.h"

#include "fit_multiple.h"
#include "history.h"
#include "job.h"
#include "pg_glue.h"
#include "pg_model.h"
#include "pg_util.h"
#include "progress.h"
#include "transport.h"

/* 2. Every model's description, from its parsed configuration. */
void
dl_fm_describe(FmRun *r, MemoryContext cxt, int64 n_points)
{
	r->models = palloc0(sizeof(FmModel) * r->K);
	for (int k = 0; k < r->K; k++)
	{
		FmModel    *fm = &r->models[k];
		DlPgModel  *m;
		DlMemoryEstimate est;
		char		name[64];

		CHECK_FOR_INTERRUPTS();
		fm->mst_key = r->job.mst_keys[k];
		m = dl_pg_model_parse(r->job.archs[k], strlen(r->job.archs[k]), r->job.compiles[k],
							  r->job.fits[k], cxt);
		dl_pg_model_estimate(m, DL_PG_MODEL_STATE, 0, &est);
		fm->state_size = (Size) est.state_blob;	/* the job's check bounded it */
		fm->cost = (double) m->spec->n_params * (double) m->fit.epochs;
		fm->metric = m->compile.metric;
		strlcpy(fm->metric_name, dl_compile_params_metric_name(&m->compile, name, sizeof(name)),
				sizeof(fm->metric_name));
		fm->has_metric = m->compile.metric != DL_METRIC_NONE;
		fm->higher_is_better = fm->has_metric && fm->metric != DL_METRIC_MAE &&
			fm->metric != DL_METRIC_MSE;
		dl_pg_history_init(&fm->history, n_points, m->spec->n_outputs);
		dl_pg_history_set_metrics(&fm->history, &m->compile);
		dl_pg_job_early_stop_begin(&r->job, &fm->history, psprintf("mst_key %d", fm->mst_key),
								   &fm->es);
		dl_pg_model_free(m);
	}
}

/* 2. The hopper: the seeded visit order of the models, sorted by cost. */
void
dl_fm_make_hopper(FmRun *r, const int *models, const int64 *offsets, int n, MemoryContext cxt)
{
	double	   *cost = palloc(sizeof(double) * n);	/* (n) */
	DlAllocator alloc = dl_pg_allocator(cxt);
	DlHopperConfig hc;
	DlError		err;

	for (int h = 0; h < n; h++)
		cost[h] = r->models[models != NULL ? models[h] : h].cost;
	if (models != NULL)
	{
		r->hop_cap = Max(n, 16);
		r->hop_model = palloc(sizeof(int) * r->hop_cap);
		r->hop_offset = palloc(sizeof(int64) * r->hop_cap);
		memcpy(r->hop_model, models, sizeof(int) * n);
		for (int h = 0; h < n; h++)
			r->hop_offset[h] = offsets != NULL ? offsets[h] : 0;
	}
	hc.n_models = n;
	hc.n_segments = r->job.nseg;
	hc.cost = cost;
	hc.seed = r->job.schedule_seed;
	dl_error_clear(&err);
	dl_pg_check(dl_hopper_create(&hc, &alloc, &r->hopper, &err), &err);
	pfree(cost);
}

int
dl_fm_hop_add(FmRun *r, int k, int64 offset)
{
	DlError		err;
	int			h;

	if (r->hop_model == NULL)
		elog(ERROR, "madlib_dl: this hopper takes no models between rounds");
	dl_error_clear(&err);
	h = dl_hopper_add_model(r->hopper, r->models[k].cost, &err);
	if (h < 0)
		dl_pg_report(&err);
	if (h >= r->hop_cap)
	{
		r->hop_cap = Max(h + 1, r->hop_cap * 2);
		r->hop_model = repalloc(r->hop_model, sizeof(int) * r->hop_cap);
		r->hop_offset = repalloc(r->hop_offset, sizeof(int64) * r->hop_cap);
	}
	r->hop_model[h] = k;
	r->hop_offset[h] = offset;
	return h;
}

/* The schedule column: the mst_key at each place of the hopper, in caller. */
static ArrayType *
fm_schedule(FmRun *r, MemoryContext caller)
{
	int			M = dl_hopper_n_places(r->hopper);
	int32	   *keys = palloc(sizeof(int32) * M);
	bool	   *empty = palloc(sizeof(bool) * M);
	MemoryContext old;
	ArrayType  *a;

	for (int p = 0; p < M; p++)
	{
		int			k = dl_hopper_place(r->hopper, p);

		empty[p] = k < 0;
		keys[p] = k < 0 ? 0 : r->models[k].mst_key;
	}
	old = MemoryContextSwitchTo(caller);
	a = dl_pg_int4_array(keys, empty, M);
	MemoryContextSwitchTo(old);
	return a;
}

/* 3. The segments, one slot per model (sized by its state). */
void
dl_fm_start(FmRun *r, MemoryContext cxt)
{
	DlSegModelDef *defs = palloc(sizeof(DlSegModelDef) * r->K);
	Size	   *sizes = palloc(sizeof(Size) * r->K);
	DlSegSetup	setup;

	for (int k = 0; k < r->K; k++)
		sizes[k] = r->models[k].state_size;
	dl_pg_job_setup(&r->job, defs, &setup);
	setup.n_slots = r->K;
	setup.slot_sizes = sizes;
	r->segs = dl_transport_start(&setup, cxt);
	r->launched = r->segs->n_own;
	r->seg_model = palloc(sizeof(int) * r->job.nseg);
	r->seg_hop = palloc(sizeof(int) * r->job.nseg);
	for (int sg = 0; sg < r->job.nseg; sg++)
		r->seg_model[sg] = r->seg_hop[sg] = -1;
}

/* 3. Build model k once, write its initial state straight into its slot, free it. */
void
dl_fm_init_state(FmRun *r, int k, MemoryContext cxt)
{
	DlPgModel  *m;
	size_t		size;
	DlError		err;

	CHECK_FOR_INTERRUPTS();
	dl_error_clear(&err);
	m = dl_pg_model_initial(r->job.archs[k], r->job.compiles[k], r->job.fits[k],
							r->job.inits[k], cxt);
	dl_pg_check(dl_blob_size(m->model, &size, &err), &err);
	if (size != r->models[k].state_size)
		elog(ERROR, "madlib_dl: state of mst_key %d has %zu bytes, %zu were estimated",
			 r->models[k].mst_key, size, r->models[k].state_size);
	dl_pg_check(dl_blob_write(m->model, 0, dl_transport_slot(r->segs, k), size, &err), &err);
	dl_transport_set_slot_len(r->segs, k, size);
	dl_pg_model_free(m);
}

/*
 * Is point ia of model a's metrics history better than point ib of model
 * b's?  by_metric: compare metrics, else losses.
 */
static bool
better(const FmModel *a, int ia, const FmModel *b, int ib, bool use_val, bool by_metric)
{
	const DlPgHistory *ha = &a->history;
	const DlPgHistory *hb = &b->history;
	double		va;
	double		vb;

	if (by_metric)
	{
		va = use_val ? ha->val_metric[ia] : ha->train_metric[ia];
		vb = use_val ? hb->val_metric[ib] : hb->train_metric[ib];
		if (isnan(vb))
			return !isnan(va);
		return !isnan(va) && (a->higher_is_better ? va > vb : va < vb);
	}
	va = use_val ? ha->val_loss[ia] : ha->train_loss[ia];
	vb = use_val ? hb->val_loss[ib] : hb->train_loss[ib];
	if (isnan(vb))
		return !isnan(va);
	return !isnan(va) && va < vb;
}

/*
 * The best metrics point of the run so far, over every model and every
 * point of its history: returns the model (-1 when none has a point) and
 * sets *point to the point's index in its history; *by_metric.  Ties go
 * to the lower model index, then to the earlier point.
 */
static int
best_model(const FmRun *r, int *point, bool *by_metric)
{
	int			best = -1;
	const FmModel *first = NULL;

	*by_metric = true;
	*point = -1;
	for (int k = 0; k < r->K; k++)
	{
		const FmModel *fm = &r->models[k];

		if (fm->history.n == 0)
			continue;
		if (first == NULL)
			first = fm;
		if (!fm->has_metric || fm->metric != first->metric || fm->has_metric != first->has_metric)
			*by_metric = false;
	}
	for (int k = 0; k < r->K; k++)
		for (int j = 0; j < r->models[k].history.n; j++)
			if (best < 0 ||
				better(&r->models[k], j, &r->models[best], *point, r->has_val, *by_metric))
			{
				best = k;
				*point = j;
			}
	return best;
}

/*
 * The progress NOTICE of iteration it.  Before the first metrics point it
 * names the lowest mean training loss of the iteration: loss[k * stride]
 * and n[k * stride] are model k's sums during it.
 */
static void
fm_notice(FmRun *r, int it, const double *loss, const int64 *n, int stride)
{
	StringInfoData msg;
	bool		by_metric;
	int			j;
	int			best = best_model(r, &j, &by_metric);
	double		best_metric = get_float8_nan();
	double		now = dl_pg_seconds_since(r->start);
	int			n_div = 0;

	initStringInfo(&msg);
	if (best >= 0)
	{
		const FmModel *b = &r->models[best];
		const DlPgHistory *h = &b->history;

		appendStringInfo(&msg, "best so far mst_key %d (iteration %d): %s ",
						 b->mst_key, h->iters[j], r->has_val ? "validation" : "training");
		if (by_metric)
		{
			best_metric = r->has_val ? h->val_metric[j] : h->train_metric[j];
			appendStringInfo(&msg, "%s %.4f, ", b->metric_name, best_metric);
		}
		appendStringInfo(&msg, "loss %.4f", r->has_val ? h->val_loss[j] : h->train_loss[j]);
	}
	else
	{
		double		bl = 0;

		for (int k = 0; k < r->K; k++)
		{
			double		l = dl_pg_ratio(loss[k * stride], n[k * stride]);

			if (!r->models[k].diverged && !isnan(l) && (best < 0 || l < bl))
			{
				best = k;
				bl = l;
			}
		}
		if (best >= 0)
			appendStringInfo(&msg, "lowest mean training loss during the iteration: mst_key %d, %.4f",
							 r->models[best].mst_key, bl);
		else
			appendStringInfoString(&msg, "no model trained");
	}
	for (int k = 0; k < r->K; k++)
		n_div += r->models[k].diverged ? 1 : 0;
	if (n_div > 0)
		appendStringInfo(&msg, "; %d of %d models diverged", n_div, r->K);
	dl_progress_update(it, r->K, best_metric, now, -1);
	ereport(NOTICE,
			(errmsg("iteration %d of %d: %s; %.2f s, about %.1f s left", it, r->job.num_iterations,
					msg.data, now, dl_progress_eta(now, it, r->job.num_iterations))));
}

/* Give every idle segment the model the hopper has for it: the segments of their own first. */
static void
fm_offer(FmRun *r)
{
	for (int pass = 0; pass < 2; pass++)
		for (int sg = 0; sg < r->job.nseg; sg++)
		{
			DlSegCommand cmd;
			int64		it;
			int			h;

			if ((sg < r->launched) != (pass == 0) || r->seg_model[sg] >= 0)
				continue;
			h = dl_hopper_next(r->hopper, sg, &it);
			if (h < 0)
				continue;
			memset(&cmd, 0, sizeof(cmd));
			cmd.kind = DL_SEG_CMD_TRAIN;
			cmd.model = cmd.slot = dl_fm_hop_model(r, h);
			cmd.iteration = it - (r->hop_offset != NULL ? r->hop_offset[h] : 0);
			cmd.catch_divergence = true;
			r->seg_model[sg] = cmd.model;
			r->seg_hop[sg] = h;
			dl_transport_submit(r->segs, sg, &cmd);
		}
}

/* Segment sg finished its TRAIN step; first..first+W-1 is the round. */
static void
fm_step_done(FmRun *r, int sg, int64 first, int W)
{
	const DlSegStats *st = dl_transport_stats(r->segs, sg);
	int			k = r->seg_model[sg];
	int			h = r->seg_hop[sg];
	FmModel    *fm = &r->models[k];
	int64		it = dl_hopper_iteration(r->hopper, h);

	r->seg_model[sg] = r->seg_hop[sg] = -1;
	fm->train_seconds += st->seconds;
	fm->finished_at = dl_pg_seconds_since(r->start);
	if (st->diverged)
	{
		fm->diverged = true;
		ereport(NOTICE,
				(errmsg("model mst_key %d diverged in iteration " INT64_FORMAT " on segment %d and stops: %s",
						fm->mst_key, it - (r->hop_offset != NULL ? r->hop_offset[h] : 0), sg, st->message),
				 errdetail("Its weights are the last finite ones and its metrics so far are kept; the other models go on."),
				 errhint("Lower the learning rate of this configuration, or scale the input features.")));
	}
	else if (r->win_loss != NULL)
	{
		/* added in the model's own visiting order: deterministic */
		r->win_loss[k * W + (it - first)] += st->train_loss_sum;
		r->win_n[k * W + (it - first)] += st->train_n;
	}
	dl_hopper_done(r->hopper, h, st->diverged);
}

/*
 * 4. Train iterations first..target (target a metrics point): every live
 * hopper model visits every segment once per iteration, in the hopper's
 * order, without a barrier; with win_loss, NOTICEs for the iterations
 * before target that every live model has finished.
 */
void
dl_fm_train_round(FmRun *r, int first, int target)
{
	int			W = target - first + 1;
	int			noticed = r->win_loss != NULL ? first - 1 : target;	/* iterations reported so far */
	int			sg;

	if (r->win_loss != NULL)
	{
		memset(r->win_loss, 0, sizeof(double) * r->K * W);
		memset(r->win_n, 0, sizeof(int64) * r->K * W);
	}
	dl_hopper_begin_round(r->hopper, first, target);
	for (;;)
	{
		int64		done_through;

		fm_offer(r);
		sg = dl_transport_wait_any(r->segs);
		if (sg < 0)
			break;				/* nothing running and nothing due: done */
		fm_step_done(r, sg, first, W);
		done_through = Min(dl_hopper_finished_through(r->hopper), target - 1);
		while (noticed < done_through)
		{
			noticed++;
			fm_notice(r, noticed, r->win_loss + (noticed - first), r->win_n + (noticed - first), W);
		}
	}
	while (noticed < target - 1)	/* every model diverged */
	{
		noticed++;
		fm_notice(r, noticed, r->win_loss + (noticed - first), r->win_n + (noticed - first), W);
	}
}

/* Send segment sg an EVAL of model k (its slot, only read) for iteration it. */
static void
submit_eval(FmRun *r, int sg, int k, int it)
{
	DlSegCommand cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.kind = DL_SEG_CMD_EVAL;
	cmd.model = cmd.slot = k;
	cmd.iteration = it;
	r->seg_model[sg] = k;
	dl_transport_submit(r->segs, sg, &cmd);
}

/*
 * 4. The metrics point it of models[0..n-1] (na of them not diverged) on
 * every segment.  Segment s evaluates alive[(s + i) mod na] for i =
 * 0..na-1, each segment at its own pace (slots are only read, so two
 * segments may read one at once); the sums are kept per (model, segment)
 * and added in segment order.
 */
void
dl_fm_evaluate(FmRun *r, int it, const int *models, const int *iters, int n)
{
	int			nseg = r->job.nseg;
	int		   *alive = palloc(sizeof(int) * Max(n, 1));
	int		   *alive_it = palloc(sizeof(int) * Max(n, 1));
	DlSegStats **ev = palloc0(sizeof(DlSegStats *) * r->K * nseg);	/* (K, nseg) copies */
	int		   *next = palloc0(sizeof(int) * nseg);	/* (nseg) evaluations given */
	int			na = 0;
	int			sg;
	double		now;

	for (int i = 0; i < n; i++)
		if (!r->models[models[i]].diverged)
		{
			alive_it[na] = iters != NULL ? iters[i] : it;
			alive[na++] = models[i];
		}
	for (int pass = 0; pass < 2 && na > 0; pass++)
		for (sg = 0; sg < nseg; sg++)
			if ((sg < r->launched) == (pass == 0))
				submit_eval(r, sg, alive[(sg + next[sg]++) % na], it);
	while ((sg = dl_transport_wait_any(r->segs)) >= 0)
	{
		ev[r->seg_model[sg] * nseg + sg] = dl_seg_stats_copy(dl_transport_stats(r->segs, sg));
		r->seg_model[sg] = -1;
		if (next[sg] < na)
			submit_eval(r, sg, alive[(sg + next[sg]++) % na], it);
	}
	now = dl_pg_seconds_since(r->start);
	for (int a = 0; a < na; a++)
	{
		DlPgEvalSums sums;

		memset(&sums, 0, sizeof(sums));
		for (sg = 0; sg < nseg; sg++)
			if (ev[alive[a] * nseg + sg] != NULL)
			{
				dl_pg_eval_sums_add(&sums, ev[alive[a] * nseg + sg]);
				pfree(ev[alive[a] * nseg + sg]);
			}
		(void) dl_pg_history_add(&r->models[alive[a]].history, alive_it[a], &sums, now);
	}
	pfree(ev);
	pfree(next);
	pfree(alive_it);
	pfree(alive);
}

/* 5. Model k's final weights, straight from its state slot (no model is built). */
bytea *
dl_fm_final_weights(FmRun *r, int k)
{
	const uint8 *w;
	size_t		n;
	bytea	   *out;
	DlError		err;

	dl_error_clear(&err);
	if (r->models[k].best != NULL)
		dl_pg_check(dl_blob_weights(r->models[k].best, r->models[k].best_len, &w, &n, &err), &err);
	else
		dl_pg_check(dl_blob_weights(dl_transport_slot(r->segs, k),
									dl_transport_slot_len(r->segs, k), &w, &n, &err), &err);
	out = palloc(VARHDRSZ + n);
	SET_VARSIZE(out, VARHDRSZ + n);
	memcpy(VARDATA(out), w, n);
	return out;
}

/*
 * 4. Early stopping at the metrics point of iteration it, for the
 * evaluated models alive[0..na-1] (hopper model k is model k): keep the
 * best states, drop the models that stop from the hopper.
 */
static void
fm_early_stop(FmRun *r, int it, const int *alive, int na, MemoryContext cxt)
{
	const DlEarlyStopConfig *cfg = &r->job.early_stop;

	if (!cfg->enabled)
		return;
	for (int a = 0; a < na; a++)
	{
		int			k = alive[a];
		FmModel    *fm = &r->models[k];
		const DlPgHistory *h = &fm->history;
		int			j = h->n - 1;
		double		v;
		DlEarlyStopAction act;

		if (j < 0 || h->iters[j] != it)
			continue;
		v = dl_pg_history_monitored(h, j, cfg, &fm->es);
		act = dl_early_stop_update(cfg, &fm->es, it, v);
		if (act.save_best && cfg->restore_best)
		{
			size_t		len = dl_transport_slot_len(r->segs, k);

			if (fm->best == NULL)
				fm->best = MemoryContextAllocHuge(cxt, Max(len, fm->state_size));
			else if (len > Max(fm->best_len, fm->state_size))
				elog(ERROR, "madlib_dl: the state of mst_key %d grew", fm->mst_key);
			memcpy(fm->best, dl_transport_slot(r->segs, k), len);
			fm->best_len = len;
		}
		if (act.stop)
		{
			fm->stopped = true;
			dl_hopper_drop_model(r->hopper, k);
			ereport(NOTICE,
					(errmsg("model mst_key %d stops early in iteration %d of %d: %s%s has not improved by %g for %d metrics points; the best was %.6g in iteration %d%s",
							fm->mst_key, it, r->job.num_iterations,
							cfg->validation ? "validation_" : "training_",
							cfg->monitor_loss ? "loss" : cfg->metric, cfg->min_delta, fm->es.wait,
							fm->es.best, fm->es.best_iteration,
							cfg->restore_best ? ", whose weights are kept" : ""),
					 errdetail("Its segments go to the other models.")));
		}
	}
}

/* 5. One result row per model, in the order of mst_keys. */
static void
fm_result_rows(FmRun *r, bytea **weights, ReturnSetInfo *rsinfo)
{
	for (int k = 0; k < r->K; k++)
	{
		FmModel    *fm = &r->models[k];
		Datum		values[20];
		bool		nulls[20];

		memset(nulls, 0, sizeof(nulls));
		values[0] = Int32GetDatum(fm->mst_key);
		values[1] = PointerGetDatum(weights[k]);
		values[2] = CStringGetTextDatum(fm->diverged ? "diverged" : "completed");
		dl_pg_history_columns(&fm->history, fm->has_metric, r->has_val, values + 3, nulls + 3);
		values[9] = PointerGetDatum(r->schedule);
		values[10] = Int32GetDatum(r->launched);
		values[11] = Float8GetDatum(fm->train_seconds);
		values[12] = Float8GetDatum(Max(fm->finished_at - fm->train_seconds, 0.0));
		dl_pg_history_output_columns(&fm->history, fm->has_metric, r->has_val, values + 13,
									 nulls + 13);
		values[17] = Int32GetDatum(fm->es.stopped_iteration);
		nulls[17] = fm->es.stopped_iteration == 0;
		values[18] = Int32GetDatum(fm->es.best_iteration);
		nulls[18] = fm->es.best_iteration == 0;
		values[19] = dl_pg_history_metrics_json(&fm->history, r->has_val, &nulls[19]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/* Describe r's models, build the hopper and the segments, the initial states and the windows' sums. */
static void
fm_run_build(FmRun *r, ReturnSetInfo *rsinfo, MemoryContext fcxt)
{
	dl_fm_describe(r, fcxt, dl_limits_metric_points(r->job.num_iterations, r->job.freq));
	dl_fm_make_hopper(r, NULL, NULL, r->K, fcxt);
	r->schedule = fm_schedule(r, rsinfo->econtext->ecxt_per_query_memory);
	dl_progress_begin("fit_multiple", dl_progress_relname(r->job.source), NULL,
					  r->job.num_iterations, r->K);
	dl_fm_start(r, fcxt);
	for (int k = 0; k < r->K; k++)
		dl_fm_init_state(r, k, fcxt);
	r->win_loss = MemoryContextAllocHuge(fcxt, mul_size(sizeof(double), mul_size(r->K, r->job.freq)));
	r->win_n = MemoryContextAllocHuge(fcxt, mul_size(sizeof(int64), mul_size(r->K, r->job.freq)));
}

/* The models neither diverged nor stopped, into alive; how many. */
static int
fm_alive(const FmRun *r, int *alive)
{
	int			na = 0;

	for (int k = 0; k < r->K; k++)
		if (!r->models[k].diverged && !r->models[k].stopped)
			alive[na++] = k;
	return na;
}

/* Train r window by window (metrics points), until the last iteration or no model is left. */
static void
fm_run_train(FmRun *r, MemoryContext fcxt)
{
	int		   *alive = palloc(sizeof(int) * r->K);

	for (int first = 1; first <= r->job.num_iterations;)
	{
		int			target = Min(((first + r->job.freq - 1) / r->job.freq) * r->job.freq,
								 r->job.num_iterations);
		int			na;

		dl_fm_train_round(r, first, target);
		na = fm_alive(r, alive);
		dl_fm_evaluate(r, target, alive, NULL, na);
		fm_notice(r, target, r->win_loss + (target - first), r->win_n + (target - first),
				  target - first + 1);
		fm_early_stop(r, target, alive, na, fcxt);
		first = target + 1;
		if (fm_alive(r, alive) == 0)
			break;				/* every model stopped or diverged */
	}
}

PG_FUNCTION_INFO_V1(madlib_dl__fit_multiple_run);

/*
 * madlib_dl._fit_multiple_run(job madlib_dl._train_job)
 *	 RETURNS SETOF madlib_dl._fit_multiple_result
 *
 * One row per model, in the order of the job's mst_keys.  Not STRICT: a
 * NULL job is 22004.
 */
Datum
madlib_dl__fit_multiple_run(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext fcxt;
	FmRun		r;
	bytea	  **weights;

	/* 0.1.0's _fit_multiple_run took 15 arguments (src/pg/api/compat.c) */
	memset(&r, 0, sizeof(r));
	dl_pg_job_read_arg(fcinfo, "fit_multiple", DL_SEG_MAX_MODELS, &r.job);
	r.K = r.job.n_models;
	r.has_val = OidIsValid(r.job.validation);
	dl_pg_job_check_memory(&r.job, DL_PG_JOB_FIT_MULTIPLE);
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != 20)
		elog(ERROR, "madlib_dl: _fit_multiple_run must return madlib_dl._fit_multiple_result");
	INSTR_TIME_SET_CURRENT(r.start);
	dl_pg_set_blas_threads();

	fcxt = AllocSetContextCreate(caller, "madlib_dl fit_multiple", ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(fcxt);
	fm_run_build(&r, rsinfo, fcxt);
	fm_run_train(&r, fcxt);

	MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	weights = palloc(sizeof(bytea *) * r.K);
	for (int k = 0; k < r.K; k++)
		weights[k] = dl_fm_final_weights(&r, k);
	MemoryContextSwitchTo(fcxt);
	dl_transport_finish(r.segs);
	dl_progress_end();

	MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	fm_result_rows(&r, weights, rsinfo);
	MemoryContextSwitchTo(caller);
	dl_hopper_free(r.hopper);
	MemoryContextDelete(fcxt);
	return (Datum) 0;
}
