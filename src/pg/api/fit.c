/*-------------------------------------------------------------------------
 *
 * fit.c
 *	  madlib_dl._fit_run: train one model by model averaging over the
 *	  segments (Su & Chen 2015; MADlib's fit).
 *
 * One call runs the whole fit; the PL/pgSQL driver (src/sql/fit.sql)
 * validates the user's arguments before and writes the output tables
 * after.  It reads top to bottom:
 *
 *	 1. parse and check the job (job.c), and its memory (limits.c);
 *	 2. build the model: initial weights (given, or random from the seed),
 *	    optimizer state reset: state0, copied into every segment's slot;
 *	 3. for i in 1..num_iterations:
 *	      every segment k at once (the transport): read slot k, reseed the
 *	          shuffle/dropout generator with f(seed, i, k), train `epochs`
 *	          passes over its partition, write slot k with its sample count;
 *	      average the slots (dl_average.h: weights and optimizer state,
 *	          weighted by samples seen, in segment order) and copy the
 *	          average into every slot;
 *	      with an averaging_period P, that is done in rounds: each segment
 *	          trains at most P mini-batches of its visit (dl_visit.h: the
 *	          round record after the state in its slot says from where,
 *	          and comes back saying where it stopped), then the slots are
 *	          averaged, until every segment's visit has ended; a segment
 *	          whose visit has ended waits, and weighs nothing in the
 *	          rounds it does not train;
 *	      on metrics points (every metrics_compute_frequency-th iteration
 *	          and the last): every segment evaluates the average on its
 *	          training and validation partitions, sums in segment order;
 *	      a NOTICE with the progress;
 *	      with early_stopping, the rule of dl_early_stop.h on the
 *	          monitored value of the point: the state is copied when it
 *	          is the best so far (restore_best), and the loop ends when
 *	          the rule says stop;
 *	 4. the result row: the final weights (the best state's with
 *	    restore_best) and the metric history.
 * Training that diverges (NaN or infinity) stops with a WARNING and keeps
 * the last finite average and the history so far.
 *
 * With one segment the average of one state is that state exactly (n*w/n
 * is exact in double for n < 2^29), so fit on one segment is plain
 * sequential mini-batch training, whatever the averaging_period.
 *
 * lr_scaling multiplies the learning rate by N or sqrt(N), N the segments
 * with training rows, after a linear warm-up from 1 over the first
 * ceil(num_iterations / 10) iterations, in steps of one round: the factor
 * of a round is 1 + (s - 1) * min(1, (i - 1 + f) / W), f the share of
 * the largest visit done before the round.  It travels in the round
 * record, so the segments need nothing else.  Every quantity here
 * depends on the data and the job only, never on timing or on the
 * number of processes.
 *
 * Averaging rounds are timed (the leader's averaging and copies, the
 * round's time beyond its slowest segment, and that segment's step);
 * with an averaging_period a last NOTICE reports them.
 *
 * IDENTIFICATION
 *	  src/pg/api/fit.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/float.h"
#include "utils/memutils.h"

#include "madlib_dl/dl_average.h"
#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_early_stop.h"
#include "madlib_dl/dl_params.h"
#include "madlib_dl/dl_visit.h"

#include "history.h"
#include "job.h"
#include "pg_glue.h"
#include "pg_model.h"
#include "pg_util.h"
#include "progress.h"
#include "transport.h"

/* One fit in progress. */
typedef struct FitRun
{
	DlPgTrainJob job;
	DlPgModel  *model;			/* the average: the initial state, then each round's */
	Size		state_size;		/* dl_blob_size of model */
	bool		rounds;			/* slots carry round records (an averaging_period
								 * or lr_scaling) */
	DlVisitRound *visit;		/* (nseg) each segment's round record */
	bool	   *active;			/* (nseg) its visit goes on in this iteration */
	int64		max_total;		/* mini-batches of the largest visit; 0 before
								 * the first round */
	int			n_data;			/* segments with training rows (idem) */
	uint8	   *iter_start;		/* (state_size) the state the iteration began from */
	DlAllocator alloc;			/* in the fit's context */
	DlAverage	avg;			/* its sums, begun once, reset every round */
	const uint8 **states;		/* (nseg) the slots, for the average */
	size_t	   *lens;			/* (nseg) their states' lengths */
	int64		n_rounds;		/* averaging rounds run */
	double		avg_seconds;	/* leader: averaging and copies */
	double		wait_seconds;	/* rounds beyond their slowest segment */
	double		train_seconds;	/* rounds' slowest segments */
	DlTransport *segs;
	int			launched;		/* segments that ran without the leader */
	DlPgHistory history;
	bool		has_metric;
	DlEarlyStopState es;		/* early stopping's rule (job.early_stop) */
	uint8	   *best;			/* (state_size) the best state (restore_best) */
	bool		best_saved;
	instr_time	start;
} FitRun;

/* Write the model's state (no samples) into every segment's slot. */
static void
broadcast(FitRun *r)
{
	DlError		err;
	uint8	   *first = dl_transport_slot(r->segs, 0);

	dl_error_clear(&err);
	dl_pg_check(dl_blob_write(r->model->model, 0, first, r->state_size, &err), &err);
	dl_transport_set_slot_len(r->segs, 0, r->state_size);
	for (int k = 1; k < r->job.nseg; k++)
		dl_transport_put_state(r->segs, k, first, r->state_size);
}

/* 2. The model and its initial state, the history, the segments. */
static void
fit_build(FitRun *r, MemoryContext cxt)
{
	DlPgTrainJob *job = &r->job;
	DlSegModelDef def;
	DlSegSetup	setup;
	DlError		err;

	dl_error_clear(&err);
	r->alloc = dl_pg_allocator(cxt);
	r->model = dl_pg_model_initial(job->archs[0], job->compiles[0], job->fits[0], job->inits[0], cxt);
	dl_pg_check(dl_blob_size(r->model->model, &r->state_size, &err), &err);
	dl_pg_check(dl_avg_begin(&r->avg, r->model->model, &r->alloc, &err), &err);	/* freed with cxt */
	r->has_metric = r->model->compile.metric != DL_METRIC_NONE;
	dl_pg_history_init(&r->history, dl_limits_metric_points(job->num_iterations, job->freq),
					   r->model->spec->n_outputs);
	dl_pg_history_set_metrics(&r->history, &r->model->compile);
	(void) dl_pg_model_metric_sums_len(r->model, "fit");	/* 0A000 before training */
	dl_pg_job_early_stop_begin(job, &r->history, NULL, &r->es);
	if (job->early_stop.enabled && job->early_stop.restore_best)
		r->best = MemoryContextAllocHuge(cxt, r->state_size);

	r->rounds = job->averaging_period > 0 || job->lr_scaling != DL_PG_LR_SCALING_NONE;
	r->visit = palloc0(sizeof(DlVisitRound) * job->nseg);
	r->active = palloc0(sizeof(bool) * job->nseg);
	r->states = palloc0(sizeof(uint8 *) * job->nseg);
	r->lens = palloc0(sizeof(size_t) * job->nseg);
	if (job->averaging_period > 0)
		r->iter_start = MemoryContextAllocHuge(cxt, r->state_size);
	dl_pg_job_setup(job, &def, &setup);
	setup.n_slots = job->nseg;	/* one slot per segment, and its round record */
	setup.slot_size = r->state_size + (r->rounds ? DL_VISIT_ROUND_BYTES : 0);
	dl_progress_begin("fit", dl_progress_relname(job->source), NULL, job->num_iterations, 1);
	r->segs = dl_transport_start(&setup, cxt);
	broadcast(r);
}

/*
 * One command of kind for every segment (TRAIN: those still active), on
 * its own slot.  Returns the seconds of the slowest segment.
 */
static double
run_all(FitRun *r, DlSegCommandKind kind, int it)
{
	DlSegCommand *cmds = palloc(sizeof(DlSegCommand) * r->job.nseg);	/* (nseg) */
	double		slowest = 0;

	for (int k = 0; k < r->job.nseg; k++)
	{
		memset(&cmds[k], 0, sizeof(DlSegCommand));
		cmds[k].kind = kind == DL_SEG_CMD_TRAIN && !r->active[k] ? DL_SEG_CMD_NONE : kind;
		cmds[k].model = 0;
		cmds[k].slot = k;
		cmds[k].iteration = it;
		cmds[k].catch_divergence = true;
	}
	dl_transport_run(r->segs, cmds);
	for (int k = 0; k < r->job.nseg; k++)
		if (cmds[k].kind != DL_SEG_CMD_NONE)
			slowest = Max(slowest, dl_transport_stats(r->segs, k)->seconds);
	pfree(cmds);
	return slowest;
}

/* The average of the slots of the segments that trained (dl_average.h), into every slot. */
static void
average_slots(FitRun *r)
{
	DlError		err;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	CHECK_FOR_INTERRUPTS();
	for (int k = 0; k < r->job.nseg; k++)
	{
		/* the state without its round record; one that saw no samples adds nothing */
		r->states[k] = dl_transport_slot(r->segs, k);
		r->lens[k] = Min(dl_transport_slot_len(r->segs, k), r->state_size);
	}
	dl_error_clear(&err);
	dl_avg_reset(&r->avg);
	dl_pg_check(dl_avg_add_many(&r->avg, r->states, r->lens, r->job.nseg, &err), &err);
	dl_pg_check(dl_avg_finish(&r->avg, &err), &err);
	broadcast(r);
	r->avg_seconds += dl_pg_seconds_since(start);
	r->n_rounds++;
}

/*
 * The learning-rate factor of the next round of iteration it, whose
 * `done` mini-batches of the largest visit have run (lr_scaling, with
 * its warm-up: the file's header).
 */
static double
lr_factor(const FitRun *r, int it, int64 done)
{
	double		s;
	double		f;
	int			warmup = (r->job.num_iterations + 9) / 10;

	if (r->job.lr_scaling == DL_PG_LR_SCALING_NONE || r->n_data <= 1)
		return 1.0;
	s = r->job.lr_scaling == DL_PG_LR_SCALING_LINEAR ? (double) r->n_data : sqrt((double) r->n_data);
	f = r->max_total > 0 ? Min(1.0, (double) done / (double) r->max_total) : 0.0;
	return 1.0 + (s - 1.0) * Min(1.0, ((double) (it - 1) + f) / (double) warmup);
}

/* Write each active segment's round record after the state in its slot. */
static void
put_records(FitRun *r, double factor)
{
	for (int k = 0; k < r->job.nseg; k++)
	{
		uint8	   *slot = dl_transport_slot(r->segs, k);

		if (!r->active[k])
			continue;
		r->visit[k].lr_factor = factor;
		dl_visit_round_write(&r->visit[k], slot + r->state_size);
		dl_transport_set_slot_len(r->segs, k, r->state_size + DL_VISIT_ROUND_BYTES);
	}
}

/*
 * After a round: each segment's record back from its slot; a visit goes
 * on while its record says so and the round trained it (a segment with
 * no rows may not run at all: Greenplum gives it no group).
 */
static void
take_records(FitRun *r)
{
	DlError		err;

	dl_error_clear(&err);
	for (int k = 0; k < r->job.nseg; k++)
	{
		const DlSegStats *st = dl_transport_stats(r->segs, k);

		if (!r->active[k])
			continue;
		r->active[k] = false;
		if (!r->rounds || st->samples_seen <= 0 ||
			dl_transport_slot_len(r->segs, k) != r->state_size + DL_VISIT_ROUND_BYTES)
			continue;
		dl_pg_check(dl_visit_round_read(dl_transport_slot(r->segs, k) + r->state_size,
										DL_VISIT_ROUND_BYTES, &r->visit[k], &err), &err);
		r->active[k] = !r->visit[k].done;
		r->max_total = Max(r->max_total, r->visit[k].total);
	}
}

/* The WARNING of divergence in iteration it on segment k; false. */
static bool
diverged(FitRun *r, int it, int k, const char *message)
{
	ereport(WARNING,
			(errcode(ERRCODE_DATA_EXCEPTION),
			 errmsg("training diverged in iteration %d on segment %d: %s", it, k, message),
			 errdetail("fit stops and keeps the weights and metrics of iteration %d.", it - 1),
			 errhint("Lower the learning rate, normalize the features, or clip gradients with clipnorm.")));
	return false;
}

/*
 * 3. Iteration it: rounds of training on every segment whose visit goes
 * on, each followed by the average, until every visit has ended (one
 * round without an averaging_period).  Returns false when training
 * diverged (the model goes back to the state the iteration began from).
 * *loss and *n get the training loss sum and samples of the iteration.
 */
static bool
fit_iteration(FitRun *r, int it, double *loss, int64 *n)
{
	DlError		err;
	bool		any = true;

	*loss = 0;
	*n = 0;
	dl_error_clear(&err);
	if (r->iter_start != NULL)
		dl_pg_check(dl_blob_write(r->model->model, 0, r->iter_start, r->state_size, &err), &err);
	for (int k = 0; k < r->job.nseg; k++)
	{
		dl_visit_round_init(&r->visit[k]);
		r->visit[k].max_batches = r->job.averaging_period;
		r->active[k] = true;
	}
	for (int64 round = 0; any; round++)
	{
		instr_time	start;
		double		slowest;

		if (r->rounds)
			put_records(r, lr_factor(r, it, round * r->job.averaging_period));
		INSTR_TIME_SET_CURRENT(start);
		slowest = run_all(r, DL_SEG_CMD_TRAIN, it);
		r->wait_seconds += Max(0.0, dl_pg_seconds_since(start) - slowest);
		r->train_seconds += slowest;
		for (int k = 0; k < r->job.nseg; k++)
		{
			const DlSegStats *st = dl_transport_stats(r->segs, k);

			if (!r->active[k])
				continue;
			if (st->diverged)
			{
				if (r->iter_start != NULL)
					dl_pg_check(dl_blob_read(r->model->model, r->iter_start, r->state_size,
											 NULL, &err), &err);
				return diverged(r, it, k, st->message);
			}
			*loss += st->train_loss_sum;
			*n += st->train_n;
			r->n_data += it == 1 && round == 0 && st->samples_seen > 0;
		}
		take_records(r);
		average_slots(r);
		any = false;
		for (int k = 0; k < r->job.nseg; k++)
			any |= r->active[k];
		elog(DEBUG1, "madlib_dl: averaging round " INT64_FORMAT " of iteration %d done%s",
			 round + 1, it, any ? "" : ", the last");
	}
	return true;
}

/* 3. A metrics point: every segment evaluates the average. */
static void
fit_evaluate(FitRun *r, int it)
{
	DlPgEvalSums sums;

	memset(&sums, 0, sizeof(sums));
	(void) run_all(r, DL_SEG_CMD_EVAL, it);
	for (int k = 0; k < r->job.nseg; k++)
		dl_pg_eval_sums_add(&sums, dl_transport_stats(r->segs, k));
	(void) dl_pg_history_add(&r->history, it, &sums, dl_pg_seconds_since(r->start));
}

/*
 * 3. Early stopping at the metrics point of iteration it (the history's
 * last entry): keep the state when it is the best so far; returns true
 * when training stops here.
 */
static bool
fit_early_stop(FitRun *r, int it)
{
	const DlEarlyStopConfig *cfg = &r->job.early_stop;
	const DlPgHistory *h = &r->history;
	int			j = h->n - 1;
	double		v;
	DlEarlyStopAction a;
	DlError		err;

	if (!cfg->enabled || j < 0)
		return false;
	v = dl_pg_history_monitored(h, j, cfg, &r->es);
	a = dl_early_stop_update(cfg, &r->es, it, v);
	if (a.save_best && r->best != NULL)
	{
		dl_error_clear(&err);
		dl_pg_check(dl_blob_write(r->model->model, 0, r->best, r->state_size, &err), &err);
		r->best_saved = true;
	}
	if (a.stop)
		ereport(NOTICE,
				(errmsg("early stopping in iteration %d of %d: %s%s has not improved by %g for %d metrics points; the best was %.6g in iteration %d%s",
						it, r->job.num_iterations, cfg->validation ? "validation_" : "training_",
						cfg->monitor_loss ? "loss" : cfg->metric, cfg->min_delta,
						r->es.wait, r->es.best, r->es.best_iteration,
						r->best != NULL ? ", whose weights are kept" : "")));
	return a.stop;
}

/* The progress NOTICE of iteration it (point: a metrics point). */
static void
fit_notice(FitRun *r, int it, bool point, double loss, int64 n)
{
	const DlPgHistory *h = &r->history;
	char		metric_buf[64];
	const char *metric = dl_compile_params_metric_name(&r->model->compile, metric_buf,
														 sizeof(metric_buf));
	bool		has_val = OidIsValid(r->job.validation);
	double		now = dl_pg_seconds_since(r->start);
	double		best = get_float8_nan();
	StringInfoData msg;

	initStringInfo(&msg);
	if (point)
	{
		int			j = h->n - 1;

		appendStringInfo(&msg, "training loss %.4f", h->train_loss[j]);
		if (r->has_metric)
			appendStringInfo(&msg, ", %s %.4f", metric, h->train_metric[j]);
		if (has_val)
		{
			appendStringInfo(&msg, "; validation loss %.4f", h->val_loss[j]);
			if (r->has_metric)
				appendStringInfo(&msg, ", %s %.4f", metric, h->val_metric[j]);
		}
		if (r->has_metric)
			best = has_val ? h->val_metric[j] : h->train_metric[j];
	}
	else if (n > 0)
		appendStringInfo(&msg, "mean training loss during the iteration %.4f", dl_pg_ratio(loss, n));
	else
		appendStringInfoString(&msg, "trained on every segment");
	dl_progress_update(it, 1, best, now, -1);
	ereport(NOTICE,
			(errmsg("iteration %d of %d: %s; %.2f s, about %.1f s left", it, r->job.num_iterations,
					msg.data, now, dl_progress_eta(now, it, r->job.num_iterations))));
}

/*
 * The cost of the averaging rounds, after the run: per round, the
 * leader's averaging and copies, and the time the round took beyond its
 * slowest segment (the barrier: commands out, results back).
 */
static void
fit_rounds_notice(const FitRun *r)
{
	double		total = dl_pg_seconds_since(r->start);
	double		per = 1e6 / (double) Max(r->n_rounds, 1);

	ereport(NOTICE,
			(errmsg("fit averaged " INT64_FORMAT " times (averaging_period %d): %.0f microseconds per round averaging, %.0f waiting beyond the slowest segment, against %.0f training on it; %.1f%% of %.2f s",
					r->n_rounds, r->job.averaging_period, r->avg_seconds * per,
					r->wait_seconds * per, r->train_seconds * per,
					total > 0 ? 100.0 * (r->avg_seconds + r->wait_seconds) / total : 0.0, total)));
}

/* 4. The result row (madlib_dl._fit_result), in the caller's context. */
static Datum
fit_result(FitRun *r, FunctionCallInfo fcinfo)
{
	TupleDesc	tupdesc;
	Datum		values[15];
	bool		nulls[15];

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE || tupdesc->natts != 15)
		elog(ERROR, "madlib_dl: _fit_run must return madlib_dl._fit_result");
	values[0] = PointerGetDatum(dl_pg_model_get_weights(r->model));
	nulls[0] = false;
	dl_pg_history_columns(&r->history, r->has_metric, OidIsValid(r->job.validation),
						  values + 1, nulls + 1);
	values[7] = Int32GetDatum(r->launched);
	nulls[7] = false;
	dl_pg_history_output_columns(&r->history, r->has_metric, OidIsValid(r->job.validation),
								 values + 8, nulls + 8);
	values[12] = Int32GetDatum(r->es.stopped_iteration);
	nulls[12] = r->es.stopped_iteration == 0;
	values[13] = Int32GetDatum(r->es.best_iteration);
	nulls[13] = r->es.best_iteration == 0;
	values[14] = dl_pg_history_metrics_json(&r->history, OidIsValid(r->job.validation), &nulls[14]);
	tupdesc = BlessTupleDesc(tupdesc);
	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
}

PG_FUNCTION_INFO_V1(madlib_dl__fit_run);

/*
 * madlib_dl._fit_run(job madlib_dl._train_job) RETURNS madlib_dl._fit_result
 *
 * The job has one model configuration.  Not STRICT: a NULL job is 22004.
 */
Datum
madlib_dl__fit_run(PG_FUNCTION_ARGS)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext fcxt;
	FitRun		r;
	Datum		result;

	/* 0.1.0's _fit_run took 13 arguments (src/pg/api/compat.c) */
	memset(&r, 0, sizeof(r));
	dl_pg_job_read_arg(fcinfo, "fit", 1, &r.job);
	dl_pg_job_check_memory(&r.job, DL_PG_JOB_FIT);
	INSTR_TIME_SET_CURRENT(r.start);
	dl_pg_set_blas_threads();

	fcxt = AllocSetContextCreate(caller, "madlib_dl fit", ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(fcxt);
	fit_build(&r, fcxt);
	for (int it = 1; it <= r.job.num_iterations; it++)
	{
		bool		point = it % r.job.freq == 0 || it == r.job.num_iterations;
		double		loss;
		int64		n;

		if (!fit_iteration(&r, it, &loss, &n))
			break;
		if (point)
			fit_evaluate(&r, it);
		fit_notice(&r, it, point, loss, n);
		if (point && fit_early_stop(&r, it))
			break;
	}
	if (r.best_saved)
	{
		DlError		err;

		/* restore_best: the weights (and optimizer state) of the best point */
		dl_error_clear(&err);
		dl_pg_check(dl_blob_read(r.model->model, r.best, r.state_size, NULL, &err), &err);
	}
	r.launched = r.segs->n_own;
	dl_transport_finish(r.segs);
	dl_progress_end();
	if (r.job.averaging_period > 0)
		fit_rounds_notice(&r);

	MemoryContextSwitchTo(caller);
	result = fit_result(&r, fcinfo);
	MemoryContextDelete(fcxt);
	PG_RETURN_DATUM(result);
}
