/*-------------------------------------------------------------------------
 *
 * fit.c
 *	  madlib_dl._fit_run: train one model by model averaging over the
 *	  segments (Su & Chen 2015; MADlib's fit).
 *
 * One call runs the whole fit; the PL/pgSQL driver (src/sql/30_fit.sql)
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
 *	      on metrics points (every metrics_compute_frequency-th iteration
 *	          and the last): every segment evaluates the average on its
 *	          training and validation partitions, sums in segment order;
 *	      a NOTICE with the progress;
 *	 4. the result row: the final weights and the metric history.
 * Training that diverges (NaN or infinity) stops with a WARNING and keeps
 * the last finite average and the history so far.
 *
 * With one segment the average of one state is that state exactly (n*w/n
 * is exact in double for n < 2^29), so fit on one segment is plain
 * sequential mini-batch training.
 *
 * IDENTIFICATION
 *	  src/pg/api/fit.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

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
#include "madlib_dl/dl_params.h"

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
	DlPgModel  *model;			/* the average: the initial state, then each iteration's */
	Size		state_size;		/* dl_blob_size of model */
	DlTransport *segs;
	int			launched;		/* segments that ran without the leader */
	DlPgHistory history;
	bool		has_metric;
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
	r->model = dl_pg_model_initial(job->archs[0], job->compiles[0], job->fits[0], job->inits[0], cxt);
	dl_pg_check(dl_blob_size(r->model->model, &r->state_size, &err), &err);
	r->has_metric = r->model->compile.metric != DL_METRIC_NONE;
	dl_pg_history_init(&r->history, dl_limits_metric_points(job->num_iterations, job->freq),
					   r->model->spec->n_outputs);

	dl_pg_job_setup(job, &def, &setup);
	setup.n_slots = job->nseg;	/* one slot per segment */
	setup.slot_size = r->state_size;
	dl_progress_begin("fit", dl_progress_relname(job->source), NULL, job->num_iterations, 1);
	r->segs = dl_transport_start(&setup, cxt);
	broadcast(r);
}

/* One command of kind for every segment, on its own slot. */
static void
run_all(FitRun *r, DlSegCommandKind kind, int it)
{
	DlSegCommand *cmds = palloc(sizeof(DlSegCommand) * r->job.nseg);	/* (nseg) */

	for (int k = 0; k < r->job.nseg; k++)
	{
		memset(&cmds[k], 0, sizeof(DlSegCommand));
		cmds[k].kind = kind;
		cmds[k].model = 0;
		cmds[k].slot = k;
		cmds[k].iteration = it;
		cmds[k].catch_divergence = true;
	}
	dl_transport_run(r->segs, cmds);
	pfree(cmds);
}

/*
 * 3. Iteration it: train on every segment, average.  Returns false when
 * training diverged (the model keeps the previous average).  *loss and
 * *n get the training loss sum and samples of the iteration.
 */
static bool
fit_iteration(FitRun *r, int it, double *loss, int64 *n)
{
	DlAllocator alloc = dl_pg_allocator(CurrentMemoryContext);
	DlAverage	avg;
	DlError		err;

	run_all(r, DL_SEG_CMD_TRAIN, it);
	*loss = 0;
	*n = 0;
	for (int k = 0; k < r->job.nseg; k++)
	{
		const DlSegStats *st = dl_transport_stats(r->segs, k);

		if (st->diverged)
		{
			ereport(WARNING,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("training diverged in iteration %d on segment %d: %s", it, k, st->message),
					 errdetail("fit stops and keeps the weights and metrics of iteration %d.", it - 1),
					 errhint("Lower the learning rate, normalize the features, or clip gradients with clipnorm.")));
			return false;
		}
		*loss += st->train_loss_sum;
		*n += st->train_n;
	}

	/* the average of the segments' states, in segment order */
	dl_error_clear(&err);
	dl_pg_check(dl_avg_begin(&avg, r->model->model, &alloc, &err), &err);
	for (int k = 0; k < r->job.nseg; k++)
	{
		CHECK_FOR_INTERRUPTS();
		dl_pg_check(dl_avg_add(&avg, dl_transport_slot(r->segs, k),
							   dl_transport_slot_len(r->segs, k), &err), &err);
	}
	dl_pg_check(dl_avg_finish(&avg, &err), &err);
	dl_avg_end(&avg);
	broadcast(r);
	return true;
}

/* 3. A metrics point: every segment evaluates the average. */
static void
fit_evaluate(FitRun *r, int it)
{
	DlPgEvalSums sums;

	memset(&sums, 0, sizeof(sums));
	run_all(r, DL_SEG_CMD_EVAL, it);
	for (int k = 0; k < r->job.nseg; k++)
		dl_pg_eval_sums_add(&sums, dl_transport_stats(r->segs, k));
	(void) dl_pg_history_add(&r->history, it, &sums, dl_pg_seconds_since(r->start));
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

/* 4. The result row (madlib_dl._fit_result), in the caller's context. */
static Datum
fit_result(FitRun *r, FunctionCallInfo fcinfo)
{
	TupleDesc	tupdesc;
	Datum		values[12];
	bool		nulls[12];

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE || tupdesc->natts != 12)
		elog(ERROR, "madlib_dl: _fit_run must return madlib_dl._fit_result");
	values[0] = PointerGetDatum(dl_pg_model_get_weights(r->model));
	nulls[0] = false;
	dl_pg_history_columns(&r->history, r->has_metric, OidIsValid(r->job.validation),
						  values + 1, nulls + 1);
	values[7] = Int32GetDatum(r->launched);
	nulls[7] = false;
	dl_pg_history_output_columns(&r->history, r->has_metric, OidIsValid(r->job.validation),
								 values + 8, nulls + 8);
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

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the training job must not be NULL"),
				 errhint("Call fit, which fills the job.")));
	memset(&r, 0, sizeof(r));
	dl_pg_job_read(PG_GETARG_HEAPTUPLEHEADER(0), 1, &r.job);
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
	}
	r.launched = r.segs->n_own;
	dl_transport_finish(r.segs);
	dl_progress_end();

	MemoryContextSwitchTo(caller);
	result = fit_result(&r, fcinfo);
	MemoryContextDelete(fcxt);
	PG_RETURN_DATUM(result);
}
