/*-------------------------------------------------------------------------
 *
 * automl.c
 *	  madlib_keras_automl's C side: the search (Hyperband, Hyperopt, ASHA:
 *	  the engine's schedulers, dl_automl.h) run on fit_multiple's model
 *	  hopping (fit_multiple.h), and hyperband_schedule's rows.
 *
 *	 madlib_dl._automl_check(method, params)         -> the params in force
 *	 madlib_dl._automl_probe(ids, cgrid, fgrid)       -> configurations that
 *	     use every value of the grids, each checked by the engine
 *	 madlib_dl._hyperband_schedule_rows(r, eta, skip_last) -> (s, i, n_i, r_i)
 *	 madlib_dl._automl_run(job, method, params, cgrid, fgrid, random_state)
 *	     -> one row per configuration tried
 *
 * _automl_run reads top to bottom (madlib_dl__automl_run):
 *
 *	 1. the search space of the grids (every value checked by the engine)
 *	    and the scheduler;
 *	 2. a session: the configurations known so far (all of them, but for
 *	    TPE, which proposes a batch at a time: then a session per batch),
 *	    one state slot each on the job's transport;
 *	 3. rounds on the hopper's iteration clock: the jobs the scheduler
 *	    gives now join the hopper (a new configuration from its initial
 *	    state, a promoted one from its slot: its weights and optimizer
 *	    state); every live job trains up to the next stop (the end of a
 *	    job, or a metrics point of one); there the jobs due are evaluated
 *	    on every segment, the ended ones reported to the scheduler in
 *	    order of configuration and dropped from the hopper;
 *	 4. the rows: each configuration's weights, history and decisions.
 *
 * The scheduler decides only at the stops, from evaluations that depend
 * on nothing but the configurations and the hopper's order: the same
 * random_state gives the same configurations, promotions and weights
 * whatever the number of workers launched.  A job trains from its
 * configuration's own iteration on (the shuffle seeds): the hopper's
 * iteration minus the job's offset.
 *
 * IDENTIFICATION
 *	  src/pg/api/automl.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "madlib_dl/dl_automl.h"
#include "madlib_dl/dl_model_select.h"
#include "madlib_dl/dl_params.h"

#include "fit_multiple.h"
#include "pg_glue.h"
#include "pg_util.h"
#include "progress.h"

/* Columns of madlib_dl._automl_result. */
#define AM_RESULT_COLS 24

/* One configuration of the search, across sessions. */
typedef struct AmConfig
{
	int32		model_id;
	int			arch;			/* index of model_id in the job's architectures */
	char	   *compile;
	char	   *fit;
	FmModel    *fm;				/* its model in the session that trained it */
	bytea	   *weights;		/* final, once its session ended */
	int			rung;			/* the last rung it trained */
	bool		started;
	bool		stopped;		/* early stopping ended it: never trained again */
} AmConfig;

/* A job on the hopper: a configuration training from its own iteration on. */
typedef struct AmJob
{
	int			config;
	int			h;				/* its hopper model */
	int64		offset;			/* the clock minus the configuration's own iteration */
	int64		end;			/* the clock at which it ends */
} AmJob;

typedef struct AmRun
{
	DlPgTrainJob arch_job;		/* the data and the architectures (mst_keys: model ids) */
	DlAutomlParams params;
	DlSearchSpace *space;
	DlAutoml   *search;
	int			cap;			/* configurations at most */
	AmConfig   *cfg;			/* (cap) */
	int			max_iters;		/* of one configuration */
	int64		n_points;		/* room in a history */
	MemoryContext cxt;			/* the run */
	MemoryContext scxt;			/* the session, or NULL */
	FmRun		fm;				/* the session's hopping run */
	int		   *sess_of;		/* (capacity) session model of each configuration, -1 */
	AmJob	   *jobs;			/* (capacity) the live jobs */
	int			n_jobs;
	int64		clock;			/* iterations of the hopper done */
	int64		work_done;		/* iterations of all jobs done */
	int			ended;			/* jobs reported at this stop */
	int			started_new;	/* jobs started at this stop */
	int			started_promoted;
	int			launched;		/* workers of the last session */
	instr_time	start;
} AmRun;

/* The engine's check of a configuration's strings; ERROR naming them. */
static void
check_strings(const char *compile, const char *fit, const char *what)
{
	DlCompileParams cp;
	DlFitParams fp;
	DlError		err;

	dl_error_clear(&err);
	if (dl_compile_params_parse(compile, &cp, &err) != DL_OK)
	{
		dl_error_prefix(&err, "%s compile_params \"%s\"", what, compile);
		dl_pg_report(&err);
	}
	if (dl_fit_params_parse(fit, &fp, &err) != DL_OK)
	{
		dl_error_prefix(&err, "%s fit_params \"%s\"", what, fit);
		dl_pg_report(&err);
	}
}

/* The space of ids and the grids; every probe's strings checked by the engine. */
static DlSearchSpace *
make_space(const int32 *ids, int n, const char *cgrid, const char *fgrid, MemoryContext cxt)
{
	DlAllocator alloc = dl_pg_allocator(cxt);
	DlSearchSpace *s;
	DlError		err;
	double	   *pt;

	dl_error_clear(&err);
	dl_pg_check(dl_search_space_create(ids, n, cgrid, fgrid, &alloc, &s, &err), &err);
	pt = palloc(sizeof(double) * dl_search_space_n_dims(s));
	for (int i = 0; i < dl_search_space_n_probes(s); i++)
	{
		int32		id;
		char	   *cp,
				   *fp;

		CHECK_FOR_INTERRUPTS();
		dl_search_space_probe(s, i, pt);
		dl_pg_check(dl_search_space_config(s, pt, &id, &cp, &fp, &alloc, &err), &err);
		check_strings(cp, fp, "the grids give");
		dl_free(&alloc, cp);
		dl_free(&alloc, fp);
	}
	pfree(pt);
	return s;
}

/* Configuration c's strings, from its point (made when it is first needed). */
static void
config_strings(AmRun *a, int c)
{
	AmConfig   *cf = &a->cfg[c];
	DlAllocator alloc = dl_pg_allocator(a->cxt);
	DlError		err;

	if (cf->compile != NULL)
		return;
	dl_error_clear(&err);
	dl_pg_check(dl_search_space_config(a->space, dl_automl_point(a->search, c), &cf->model_id,
									   &cf->compile, &cf->fit, &alloc, &err), &err);
	check_strings(cf->compile, cf->fit, "a configuration of the grids has");
	for (cf->arch = 0; a->arch_job.mst_keys[cf->arch] != cf->model_id; cf->arch++)
		;
}

/* ---------------------------------------------------------------------
 * 2. Sessions
 * --------------------------------------------------------------------- */

/*
 * A session for configurations cs[0..n-1]: their job (data of the run,
 * one model each, mst_key = configuration + 1), its memory check, the
 * models described (in the run's context, so that their histories stay)
 * and the transport started.
 */
static void
session_begin(AmRun *a, const int *cs, int n)
{
	DlPgTrainJob *job = &a->fm.job;
	MemoryContext old;

	a->scxt = AllocSetContextCreate(a->cxt, "madlib_dl automl session", ALLOCSET_DEFAULT_SIZES);
	memset(&a->fm, 0, sizeof(a->fm));
	*job = a->arch_job;
	job->n_models = n;
	job->mst_keys = palloc(sizeof(int32) * n);
	job->archs = palloc(sizeof(char *) * n);
	job->inits = palloc(sizeof(bytea *) * n);
	job->compiles = palloc(sizeof(char *) * n);
	job->fits = palloc(sizeof(char *) * n);
	for (int i = 0; i < n; i++)
	{
		AmConfig   *cf = &a->cfg[cs[i]];

		config_strings(a, cs[i]);
		job->mst_keys[i] = cs[i] + 1;
		job->archs[i] = a->arch_job.archs[cf->arch];
		job->inits[i] = a->arch_job.inits[cf->arch];
		job->compiles[i] = cf->compile;
		job->fits[i] = cf->fit;
		a->sess_of[cs[i]] = i;
	}
	job->num_iterations = a->max_iters;
	job->freq = Min(a->arch_job.freq, a->max_iters);
	dl_pg_job_check_memory(job, DL_PG_JOB_FIT_MULTIPLE);
	a->fm.K = n;
	a->fm.has_val = OidIsValid(job->validation);
	a->fm.start = a->start;
	dl_fm_describe(&a->fm, a->scxt, a->n_points);
	for (int i = 0; i < n; i++)
		a->cfg[cs[i]].fm = &a->fm.models[i];
	old = MemoryContextSwitchTo(a->scxt);
	dl_fm_start(&a->fm, a->scxt);
	MemoryContextSwitchTo(old);
	a->launched = a->fm.launched;
}

/* End the session: the weights of its configurations kept, the rest freed. */
static void
session_end(AmRun *a)
{
	MemoryContext old;

	if (a->scxt == NULL)
		return;
	old = MemoryContextSwitchTo(a->cxt);
	for (int c = 0; c < a->cap; c++)
		if (a->sess_of[c] >= 0)
		{
			if (a->cfg[c].started)
				a->cfg[c].weights = dl_fm_final_weights(&a->fm, a->sess_of[c]);
			a->sess_of[c] = -1;
		}
	MemoryContextSwitchTo(a->scxt);
	dl_transport_finish(a->fm.segs);
	MemoryContextSwitchTo(old);
	dl_hopper_free(a->fm.hopper);
	MemoryContextDelete(a->scxt);
	a->scxt = NULL;
	a->fm.hopper = NULL;
}

/* ---------------------------------------------------------------------
 * 3. Rounds
 * --------------------------------------------------------------------- */

static double latest_score(const AmRun *a, int c);

/* The jobs the scheduler gives now, into jobs[] (room: capacity); returns how many. */
static int
next_jobs(AmRun *a, DlAutomlJob *jobs)
{
	DlError		err;
	int			n = 0;

	dl_error_clear(&err);
	while (dl_automl_next(a->search, &jobs[n], &err))
		n++;
	dl_pg_check(err.code, &err);
	return n;
}

/*
 * Drop from the n jobs the ones of configurations early stopping ended:
 * such a job (a promotion) ends at once with its score, and the
 * scheduler may then give others.  Returns how many jobs are left.
 */
static int
drop_stopped_jobs(AmRun *a, DlAutomlJob *jobs, int n)
{
	for (bool again = true; again;)
	{
		int			kept = 0;

		again = false;
		for (int i = 0; i < n; i++)
		{
			if (a->cfg[jobs[i].config].stopped)
			{
				dl_automl_report(a->search, jobs[i].config, latest_score(a, jobs[i].config));
				again = true;
			}
			else
				jobs[kept++] = jobs[i];
		}
		n = kept;
		if (again)
		{
			DlError		err;

			dl_error_clear(&err);
			while (n < a->cap && dl_automl_next(a->search, &jobs[n], &err))
				n++;
			dl_pg_check(err.code, &err);
		}
	}
	return n;
}

/*
 * A new session for the n jobs when one of them has a configuration the
 * session does not hold: of all configurations when they are known, else
 * of the batch.  models: room for a->cap.
 */
static void
session_for_jobs(AmRun *a, const DlAutomlJob *jobs, int n, int *models)
{
	bool		fresh = false;

	for (int i = 0; i < n; i++)
		fresh = fresh || a->sess_of[jobs[i].config] < 0;
	if (!fresh)
		return;
	if (a->n_jobs > 0)
		elog(ERROR, "madlib_dl: a new session while jobs run");
	session_end(a);
	/* all configurations when they are known, else the batch */
	for (int i = 0; i < a->cap; i++)
		models[i] = i;
	if (!dl_automl_configs_known(a->search))
		for (int i = 0; i < n; i++)
			models[i] = jobs[i].config;
	session_begin(a, models, dl_automl_configs_known(a->search) ? a->cap : n);
}

/*
 * Put the n jobs on the hopper (made for them when there is none), a new
 * configuration from its initial state; in the session's context.
 */
static void
add_jobs(AmRun *a, const DlAutomlJob *jobs, int n)
{
	int		   *models = palloc(sizeof(int) * a->cap);
	int64	   *offsets = palloc(sizeof(int64) * a->cap);
	MemoryContext old = MemoryContextSwitchTo(a->scxt);

	for (int i = 0; i < n; i++)
	{
		AmConfig   *cf = &a->cfg[jobs[i].config];
		AmJob	   *j = &a->jobs[a->n_jobs++];
		int			k = a->sess_of[jobs[i].config];

		if (!cf->started)
			dl_fm_init_state(&a->fm, k, a->scxt);
		cf->started = true;
		cf->rung = jobs[i].rung;
		j->config = jobs[i].config;
		j->offset = a->clock - (jobs[i].total - jobs[i].iterations);
		j->end = a->clock + jobs[i].iterations;
		models[i] = k;
		offsets[i] = j->offset;
		if (a->fm.hopper != NULL)
			j->h = dl_fm_hop_add(&a->fm, k, j->offset);
		else
			j->h = i;
		if (jobs[i].rung > 0)
			a->started_promoted++;
		else
			a->started_new++;
	}
	if (a->fm.hopper == NULL && n > 0)
		dl_fm_make_hopper(&a->fm, models, offsets, n, a->scxt);
	MemoryContextSwitchTo(old);
	pfree(models);
	pfree(offsets);
}

/*
 * Start the jobs the scheduler gives now: in a new session when one of
 * them has a configuration the session does not hold (TPE's next batch:
 * nothing runs then); each on the hopper, a new configuration from its
 * initial state.
 */
static void
start_jobs(AmRun *a)
{
	DlAutomlJob *jobs = palloc(sizeof(DlAutomlJob) * a->cap);
	int		   *models = palloc(sizeof(int) * a->cap);
	int			n = next_jobs(a, jobs);

	/* a configuration early stopping ended is not trained again */
	n = drop_stopped_jobs(a, jobs, n);
	if (n == 0)
		return;					/* nothing may start now */
	session_for_jobs(a, jobs, n, models);
	add_jobs(a, jobs, n);
	pfree(jobs);
	pfree(models);
}

/* The clock of job j's next stop: its end, or its next own metrics point. */
static int64
job_stop(const AmRun *a, const AmJob *j)
{
	int64		own = a->clock - j->offset;
	int64		freq = a->fm.job.freq;
	int64		point = (own / freq + 1) * freq;

	return Min(j->end, j->offset + point);
}

/* The next stop of any live job. */
static int64
next_stop(const AmRun *a)
{
	int64		stop = PG_INT64_MAX;

	for (int i = 0; i < a->n_jobs; i++)
		stop = Min(stop, job_stop(a, &a->jobs[i]));
	return stop;
}

/* Configuration c's latest score: its ranking loss (validation, else training). */
static double
latest_score(const AmRun *a, int c)
{
	const FmModel *fm = a->cfg[c].fm;
	const DlPgHistory *h = &fm->history;

	if (fm->diverged || h->n == 0)
		return get_float8_nan();
	return a->fm.has_val ? h->val_loss[h->n - 1] : h->train_loss[h->n - 1];
}

/*
 * Early stopping at the stop (the clock) for the jobs just evaluated
 * there: each configuration's rule on its own iterations (its history's
 * last entry); the best state copied with restore_best; a configuration
 * that stops ends its job now (stop_jobs reports it to the scheduler).
 */
static void
early_stop_jobs(AmRun *a, int64 stop)
{
	const DlEarlyStopConfig *cfg = &a->fm.job.early_stop;

	if (!cfg->enabled)
		return;
	for (int i = 0; i < a->n_jobs; i++)
	{
		AmJob	   *j = &a->jobs[i];
		AmConfig   *cf = &a->cfg[j->config];
		FmModel    *fm = cf->fm;
		const DlPgHistory *h = &fm->history;
		int			own = (int) (stop - j->offset);
		int			k = a->sess_of[j->config];
		double		v;
		DlEarlyStopAction act;

		if (fm->diverged || h->n == 0 || h->iters[h->n - 1] != own)
			continue;			/* not evaluated at this stop */
		v = dl_pg_history_monitored(h, h->n - 1, cfg, &fm->es);
		act = dl_early_stop_update(cfg, &fm->es, own, v);
		if (act.save_best && cfg->restore_best)
		{
			size_t		len = dl_transport_slot_len(a->fm.segs, k);

			if (fm->best == NULL)
				fm->best = MemoryContextAllocHuge(a->scxt, Max(len, fm->state_size));
			else if (len > Max(fm->best_len, fm->state_size))
				elog(ERROR, "madlib_dl: the state of configuration %d grew", j->config + 1);
			memcpy(fm->best, dl_transport_slot(a->fm.segs, k), len);
			fm->best_len = len;
		}
		if (act.stop)
		{
			cf->stopped = fm->stopped = true;
			j->end = stop;
			ereport(NOTICE,
					(errmsg("configuration mst_key %d stops early after %d of its iterations: %s%s has not improved by %g for %d metrics points; the best was %.6g after %d",
							j->config + 1, own, cfg->validation ? "validation_" : "training_",
							cfg->monitor_loss ? "loss" : cfg->metric, cfg->min_delta, fm->es.wait,
							fm->es.best, fm->es.best_iteration)));
		}
	}
}

/*
 * At the stop (the clock): evaluate the jobs due (metrics point or end),
 * then report the ended ones (and the diverged ones) to the scheduler in
 * order of configuration and take them off the hopper.
 */
static void
stop_jobs(AmRun *a, int64 stop)
{
	int		   *models = palloc(sizeof(int) * Max(a->n_jobs, 1));
	int		   *iters = palloc(sizeof(int) * Max(a->n_jobs, 1));
	int			n = 0;

	for (int i = 0; i < a->n_jobs; i++)
		if (job_stop(a, &a->jobs[i]) == stop)
		{
			models[n] = a->sess_of[a->jobs[i].config];
			iters[n++] = (int) (stop - a->jobs[i].offset);
		}
	a->clock = stop;
	dl_fm_evaluate(&a->fm, (int) stop, models, iters, n);
	early_stop_jobs(a, stop);
	a->ended = 0;
	for (int c = 0; c < a->cap; c++)
		for (int i = 0; i < a->n_jobs; i++)
		{
			AmJob	   *j = &a->jobs[i];

			if (j->config != c || (j->end != stop && !a->cfg[c].fm->diverged))
				continue;
			dl_automl_report(a->search, c, latest_score(a, c));
			dl_hopper_drop_model(a->fm.hopper, j->h);
			*j = a->jobs[--a->n_jobs];
			a->ended++;
			break;
		}
	pfree(models);
	pfree(iters);
}

/* The best configuration so far by its latest score, or -1. */
static int
best_config(const AmRun *a)
{
	int			best = -1;

	for (int c = 0; c < a->cap; c++)
	{
		double		s;

		if (a->cfg[c].fm == NULL || isnan(s = latest_score(a, c)))
			continue;
		if (best < 0 || s < latest_score(a, best))
			best = c;
	}
	return best;
}

/* The NOTICE and the progress of a stop. */
static void
stop_notice(AmRun *a)
{
	StringInfoData msg;
	int			best = best_config(a);
	double		now = dl_pg_seconds_since(a->start);
	double		metric = get_float8_nan();
	int			done = 0;
	int			rung = 0;

	initStringInfo(&msg);
	if (best >= 0)
	{
		const FmModel *fm = a->cfg[best].fm;
		const DlPgHistory *h = &fm->history;

		appendStringInfo(&msg, "best so far mst_key %d after %d iterations: %s loss %.4f",
						 best + 1, h->iters[h->n - 1], a->fm.has_val ? "validation" : "training",
						 latest_score(a, best));
		if (fm->has_metric)
		{
			metric = a->fm.has_val ? h->val_metric[h->n - 1] : h->train_metric[h->n - 1];
			appendStringInfo(&msg, ", %s %.4f", fm->metric_name, metric);
		}
	}
	else
		appendStringInfoString(&msg, "no configuration evaluated");
	for (int i = 0; i < a->n_jobs; i++)
		rung = Max(rung, a->cfg[a->jobs[i].config].rung);
	for (int c = 0; c < a->cap; c++)
		done += a->cfg[c].started ? 1 : 0;
	done -= a->n_jobs;
	dl_progress_update((int) Min(a->clock, PG_INT32_MAX), done, metric, now,
					   dl_progress_eta(now, (double) a->work_done,
									   (double) dl_automl_planned_work(a->search)));
	dl_progress_set_stage(rung, a->n_jobs);
	ereport(NOTICE,
			(errmsg("%s: iteration " INT64_FORMAT ": %d configurations ended a rung, %d promoted, %d new; %d training; %s; %.2f s",
					dl_automl_method_name(a->params.method), a->clock, a->ended,
					a->started_promoted, a->started_new, a->n_jobs, msg.data, now)));
	a->started_new = a->started_promoted = 0;
	pfree(msg.data);
}

/* ---------------------------------------------------------------------
 * 4. Rows
 * --------------------------------------------------------------------- */

/*
 * Configuration c's decisions, one element per rung it ended: its
 * iterations then, the loss it was ranked by, its metric (validation,
 * else training) and whether it went on.
 */
static void
decision_columns(const AmRun *a, int c, Datum *values, bool *nulls)
{
	const FmModel *fm = a->cfg[c].fm;
	const DlPgHistory *h = &fm->history;
	int			n = dl_automl_n_records(a->search);
	int32	   *iters = palloc(sizeof(int32) * Max(n, 1));
	double	   *scores = palloc(sizeof(double) * Max(n, 1));
	double	   *metrics = palloc(sizeof(double) * Max(n, 1));
	Datum	   *promoted = palloc(sizeof(Datum) * Max(n, 1));
	int			m = 0;

	for (int i = 0; i < n; i++)
	{
		const DlAutomlRecord *r = dl_automl_record(a->search, i);

		if (r->config != c)
			continue;
		iters[m] = r->total;
		scores[m] = r->score;
		metrics[m] = get_float8_nan();
		for (int j = 0; j < h->n; j++)
			if (h->iters[j] == r->total)
				metrics[m] = a->fm.has_val ? h->val_metric[j] : h->train_metric[j];
		promoted[m++] = BoolGetDatum(r->promoted);
	}
	values[0] = PointerGetDatum(dl_pg_int4_array(iters, NULL, m));
	values[1] = PointerGetDatum(dl_pg_float8_array(scores, m));
	values[2] = PointerGetDatum(dl_pg_float8_array(metrics, m));
	nulls[2] = !fm->has_metric;
	values[3] = PointerGetDatum(construct_array(promoted, m, BOOLOID, 1, true, TYPALIGN_CHAR));
}

static void
result_rows(AmRun *a, ReturnSetInfo *rsinfo)
{
	for (int c = 0; c < a->cap; c++)
	{
		AmConfig   *cf = &a->cfg[c];
		Datum		values[AM_RESULT_COLS];
		bool		nulls[AM_RESULT_COLS];
		int			bracket = dl_automl_bracket(a->search, c);

		if (!cf->started)
			continue;
		memset(nulls, 0, sizeof(nulls));
		values[0] = Int32GetDatum(c + 1);
		values[1] = Int32GetDatum(cf->model_id);
		values[2] = CStringGetTextDatum(cf->compile);
		values[3] = CStringGetTextDatum(cf->fit);
		values[4] = PointerGetDatum(cf->weights);
		values[5] = CStringGetTextDatum(cf->fm->diverged ? "diverged" : "completed");
		dl_pg_history_columns(&cf->fm->history, cf->fm->has_metric, a->fm.has_val, values + 6,
							  nulls + 6);
		values[12] = Int32GetDatum(bracket);
		nulls[12] = bracket < 0;
		values[13] = Int32GetDatum(cf->rung);
		decision_columns(a, c, values + 14, nulls + 14);
		values[18] = Float8GetDatum(cf->fm->train_seconds);
		values[19] = Float8GetDatum(Max(cf->fm->finished_at - cf->fm->train_seconds, 0.0));
		values[20] = Int32GetDatum(a->launched);
		values[21] = Int32GetDatum(cf->fm->es.stopped_iteration);
		nulls[21] = cf->fm->es.stopped_iteration == 0;
		values[22] = Int32GetDatum(cf->fm->es.best_iteration);
		nulls[22] = cf->fm->es.best_iteration == 0;
		values[23] = dl_pg_history_metrics_json(&cf->fm->history, a->fm.has_val, &nulls[23]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/* ---------------------------------------------------------------------
 * SQL functions
 * --------------------------------------------------------------------- */

/* Argument i must not be NULL; ERROR 22004 naming it. */
static void
not_null(FunctionCallInfo fcinfo, int i, const char *name, const char *hint)
{
	if (PG_ARGISNULL(i))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", name),
				 errhint("%s", hint)));
}

/* automl_method (arg i) and automl_params (arg i + 1, NULL: the defaults), parsed. */
static DlAutomlParams
read_method(FunctionCallInfo fcinfo, int i)
{
	DlAutomlMethod m;
	DlAutomlParams p;
	DlError		err;

	not_null(fcinfo, i, "automl_method", "Give 'hyperband', 'hyperopt' or 'asha'.");
	dl_error_clear(&err);
	dl_pg_check(dl_automl_method_from_name(text_to_cstring(PG_GETARG_TEXT_PP(i)), &m, &err), &err);
	dl_pg_check(dl_automl_params_parse(m, PG_ARGISNULL(i + 1) ? NULL :
									   text_to_cstring(PG_GETARG_TEXT_PP(i + 1)), &p, &err), &err);
	return p;
}

PG_FUNCTION_INFO_V1(madlib_dl__automl_check);

/*
 * madlib_dl._automl_check(automl_method text, automl_params text)
 *	 RETURNS TABLE (method text, params text, max_iterations int)
 *
 * The method's name as MADlib spells it, the params in force (as given,
 * or the method's defaults when NULL or blank), and the most iterations
 * a configuration trains.  ERROR (22023, or 54000 for a
 * limit) naming the bad value.
 */
Datum
madlib_dl__automl_check(PG_FUNCTION_ARGS)
{
	DlAutomlParams p = read_method(fcinfo, 0);
	const char *given = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	TupleDesc	desc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};
	bool		blank = true;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "madlib_dl: _automl_check must return a row");
	for (const char *c = given; c != NULL && *c != '\0'; c++)
		blank = blank && isspace((unsigned char) *c);
	values[0] = CStringGetTextDatum(dl_automl_method_name(p.method));
	values[1] = CStringGetTextDatum(blank ? dl_automl_default_params(p.method) : given);
	values[2] = Int32GetDatum(dl_automl_max_iterations(&p));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

/* model_id_list argument i: one dimension, no NULL; *n ids. */
static int32 *
id_list(FunctionCallInfo fcinfo, int i, int *n)
{
	ArrayType  *arr;
	Datum	   *d;
	bool	   *nulls;
	int32	   *ids;

	not_null(fcinfo, i, "model_id_list", "Give the model ids to try, for example ARRAY[1, 2].");
	arr = PG_GETARG_ARRAYTYPE_P(i);
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model_id_list must be a one-dimensional array"),
				 errhint("Give the model ids to try, for example ARRAY[1, 2].")));
	deconstruct_array(arr, INT4OID, 4, true, TYPALIGN_INT, &d, &nulls, n);
	ids = palloc(sizeof(int32) * Max(*n, 1));
	for (int k = 0; k < *n; k++)
	{
		if (nulls[k])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("model_id_list must not hold NULL"),
					 errhint("Give the model ids of the model architecture table.")));
		ids[k] = DatumGetInt32(d[k]);
	}
	return ids;
}

PG_FUNCTION_INFO_V1(madlib_dl__automl_probe);

/*
 * madlib_dl._automl_probe(model_id_list int[], compile_params_grid text,
 *     fit_params_grid text)
 *	 RETURNS TABLE (model_id int, compile_params text, fit_params text)
 *
 * Configurations of the grids (random search's rules) that together use
 * every value and both bounds of every range, each checked by the
 * engine: a grid that would fail later fails here, before training.
 */
Datum
madlib_dl__automl_probe(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext work;
	MemoryContext old;
	DlSearchSpace *s;
	DlAllocator alloc;
	DlError		err;
	double	   *pt;
	int32	   *ids;
	int			n;

	ids = id_list(fcinfo, 0, &n);
	not_null(fcinfo, 1, "compile_params_grid", "Give a dict of lists, for example "
			 "{'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['Adam'], "
			 "'lr': [0.0001, 0.01, 'log']}], 'metrics': ['accuracy']}.");
	not_null(fcinfo, 2, "fit_params_grid", "Give a dict of lists, for example "
			 "{'batch_size': [32, 64], 'epochs': [1]}.");
	InitMaterializedSRF(fcinfo, 0);
	work = AllocSetContextCreate(CurrentMemoryContext, "madlib_dl automl probe", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);
	s = make_space(ids, n, text_to_cstring(PG_GETARG_TEXT_PP(1)), text_to_cstring(PG_GETARG_TEXT_PP(2)),
				   work);
	alloc = dl_pg_allocator(work);
	pt = palloc(sizeof(double) * dl_search_space_n_dims(s));
	dl_error_clear(&err);
	for (int i = 0; i < dl_search_space_n_probes(s); i++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};
		int32		id;
		char	   *cp,
				   *fp;

		dl_search_space_probe(s, i, pt);
		dl_pg_check(dl_search_space_config(s, pt, &id, &cp, &fp, &alloc, &err), &err);
		MemoryContextSwitchTo(old);
		values[0] = Int32GetDatum(id);
		values[1] = CStringGetTextDatum(cp);
		values[2] = CStringGetTextDatum(fp);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextSwitchTo(work);
	}
	MemoryContextSwitchTo(old);
	dl_search_space_free(s);
	MemoryContextDelete(work);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(madlib_dl__hyperband_schedule_rows);

/*
 * madlib_dl._hyperband_schedule_rows(r int, eta int, skip_last int)
 *	 RETURNS TABLE (s int, i int, n_i int, r_i int)
 *
 * Hyperband's brackets and rounds, as MADlib's hyperband_schedule
 * computes them (dl_hyperband_schedule), bracket s_max first.
 */
Datum
madlib_dl__hyperband_schedule_rows(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	DlHyperbandRound *rows = palloc(sizeof(DlHyperbandRound) * DL_HYPERBAND_MAX_ROUNDS);
	DlError		err;
	int			n;

	not_null(fcinfo, 0, "r", "Give R, the most iterations one configuration trains, for example 6.");
	not_null(fcinfo, 1, "eta", "Give eta, for example 3.");
	not_null(fcinfo, 2, "skip_last", "Give skip_last, for example 0.");
	dl_error_clear(&err);
	dl_pg_check(dl_hyperband_schedule(PG_GETARG_INT32(0), PG_GETARG_INT32(1), PG_GETARG_INT32(2),
									  rows, &n, NULL, &err), &err);
	InitMaterializedSRF(fcinfo, 0);
	for (int k = 0; k < n; k++)
	{
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		values[0] = Int32GetDatum(rows[k].s);
		values[1] = Int32GetDatum(rows[k].i);
		values[2] = Int32GetDatum(rows[k].n_i);
		values[3] = Int32GetDatum(rows[k].r_i);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* 1. The run: the job of architectures, the space, the scheduler. */
static void
run_setup(AmRun *a, FunctionCallInfo fcinfo)
{
	DlAllocator alloc = dl_pg_allocator(a->cxt);
	DlError		err;
	int			cap;

	a->params = read_method(fcinfo, 1);
	not_null(fcinfo, 3, "compile_params_grid", "Give a dict of lists.");
	not_null(fcinfo, 4, "fit_params_grid", "Give a dict of lists, or {} for Keras' defaults.");
	dl_pg_job_read(PG_GETARG_HEAPTUPLEHEADER(0), DL_SEG_MAX_MODELS, &a->arch_job);
	a->max_iters = dl_automl_max_iterations(&a->params);
	if (a->arch_job.num_iterations != a->max_iters)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("num_iterations of the AutoML job must be %d, got %d", a->max_iters,
						a->arch_job.num_iterations),
				 errhint("Call madlib_keras_automl, which fills the job.")));
	a->space = make_space(a->arch_job.mst_keys, a->arch_job.n_models,
						  text_to_cstring(PG_GETARG_TEXT_PP(3)),
						  text_to_cstring(PG_GETARG_TEXT_PP(4)), a->cxt);
	dl_error_clear(&err);
	dl_pg_check(dl_automl_create(&a->params, a->space, a->arch_job.nseg, !PG_ARGISNULL(5),
								 PG_ARGISNULL(5) ? 0 : (int64) PG_GETARG_INT32(5),
								 (uint64) GetCurrentTimestamp() ^ ((uint64) MyProcPid << 40),
								 &alloc, &a->search, &err), &err);
	a->cap = cap = dl_automl_capacity(a->search);
	a->cfg = palloc0(sizeof(AmConfig) * cap);
	a->sess_of = palloc(sizeof(int) * cap);
	for (int c = 0; c < cap; c++)
		a->sess_of[c] = -1;
	a->jobs = palloc(sizeof(AmJob) * cap);
	/* a metrics point every freq own iterations, and at the end of each rung (31 at most) */
	a->n_points = dl_limits_metric_points(a->max_iters, Min(a->arch_job.freq, a->max_iters)) + 32;
}

/* The clock the run should end near, for the progress view. */
static int
clock_estimate(const AmRun *a)
{
	const DlAutomlParams *p = &a->params;
	int64		est;

	if (p->method == DL_AUTOML_HYPERBAND)
		est = a->max_iters;
	else if (p->method == DL_AUTOML_HYPEROPT)
		est = (int64) ((p->num_configs + a->arch_job.nseg - 1) / a->arch_job.nseg) * p->num_iterations;
	else
		est = (dl_automl_planned_work(a->search) + a->arch_job.nseg - 1) / a->arch_job.nseg;
	return (int) Max(Min(est, PG_INT32_MAX), 1);
}

PG_FUNCTION_INFO_V1(madlib_dl__automl_run);

/*
 * madlib_dl._automl_run(job madlib_dl._train_job, automl_method text,
 *     automl_params text, compile_params_grid text, fit_params_grid text,
 *     random_state int) RETURNS SETOF madlib_dl._automl_result
 *
 * The job names the data, the transport and the architectures to try
 * (mst_keys: their model ids; compile and fit params unused), its
 * num_iterations the most a configuration trains, its
 * metrics_compute_frequency the metrics points within a rung.  One row
 * per configuration tried, mst_key = its number + 1.  Writes nothing.
 */
Datum
madlib_dl__automl_run(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext caller = CurrentMemoryContext;
	AmRun		a;

	not_null(fcinfo, 0, "the training job", "Call madlib_keras_automl, which fills the job.");
	memset(&a, 0, sizeof(a));
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != AM_RESULT_COLS)
		elog(ERROR, "madlib_dl: _automl_run must return madlib_dl._automl_result");
	INSTR_TIME_SET_CURRENT(a.start);
	dl_pg_set_blas_threads();
	a.cxt = AllocSetContextCreate(caller, "madlib_dl automl", ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(a.cxt);
	run_setup(&a, fcinfo);
	dl_progress_begin("madlib_keras_automl", dl_progress_relname(a.arch_job.source), NULL,
					  clock_estimate(&a), dl_automl_capacity(a.search));

	/* 3. rounds: start what may start, train to the next stop, stop there */
	for (;;)
	{
		int64		stop;

		start_jobs(&a);
		stop_notice(&a);
		if (a.n_jobs == 0)
			break;
		stop = next_stop(&a);
		dl_fm_train_round(&a.fm, (int) a.clock + 1, (int) stop);
		a.work_done += (stop - a.clock) * a.n_jobs;
		stop_jobs(&a, stop);
	}
	session_end(&a);
	dl_progress_end();

	/* 4. the rows */
	MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	result_rows(&a, rsinfo);
	MemoryContextSwitchTo(caller);
	dl_automl_free(a.search);
	dl_search_space_free(a.space);
	MemoryContextDelete(a.cxt);
	return (Datum) 0;
}
