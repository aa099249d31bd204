/*-------------------------------------------------------------------------
 *
 * seg_exec.c
 *	  The segment executor (segments.h): what one process does with the
 *	  segments a transport gives it.  It holds their partitions and the
 *	  models it has built, and runs each command on the state in the
 *	  command's slot.
 *
 * A transport moves commands and states; it never runs a step.  Each
 * process that runs segments (a parallel worker, the leader for the
 * segments no worker took, the PL/Proxy coordinator for the validation
 * shares) makes one executor through the ops of DlSegSetup.executor
 * (dl_seg_executor), loads its segments' partitions and hands it the
 * commands.  So the transports call down into no runtime file: the
 * runtime gives them its work (docs/architecture.md).
 *
 * A command's result depends only on the command, the slot's bytes and
 * the segment's partition, never on the process that ran it: a rebuilt
 * model loads everything that matters (weights, optimizer state, rng)
 * from the state.
 *
 * dl_seg_setup_prepare is what a driver calls before dl_transport_start:
 * it checks the job's tables as packed ones, once, and sets the
 * executor and the partition budget the transports pass on.
 *
 * IDENTIFICATION
 *	  src/pg/runtime/seg_exec.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "pg_glue.h"
#include "pg_limits.h"
#include "pg_model.h"
#include "pg_util.h"
#include "segments.h"
#include "transport.h"

/* One process's executor (DlSegExec is opaque to the transports). */
struct DlSegExec
{
	DlSegJob	job;			/* the strings stay the caller's */
	MemoryContext cxt;			/* models and partitions */
	DlPgModel **models;			/* (n_models), built on first use, at most
								 * DL_SEG_MODEL_CACHE at a time */
	uint64	   *model_used;		/* (n_models) use clock of each built model */
	uint64		use_clock;
	int			n_built;
	DlSegPartition train[DL_SEG_MAX];
	DlSegPartition val[DL_SEG_MAX];
};

static DlSegExec *
seg_exec_create(const DlSegJob *job, MemoryContext cxt)
{
	DlSegExec  *ex;

	if (job->nseg < 1 || job->nseg > DL_SEG_MAX || job->n_models < 1 ||
		job->n_models > DL_SEG_MAX_MODELS || job->models == NULL)
		elog(ERROR, "madlib_dl: bad segment job (%d segments, %d models)", job->nseg, job->n_models);
	ex = MemoryContextAllocZero(cxt, sizeof(DlSegExec));
	ex->job = *job;
	ex->cxt = cxt;
	ex->models = MemoryContextAllocZero(cxt, sizeof(DlPgModel *) * job->n_models);
	ex->model_used = MemoryContextAllocZero(cxt, sizeof(uint64) * job->n_models);
	return ex;
}

/*
 * Read the partitions of segments segs[0..n): training when train (their
 * rows into rows_out[i] when not NULL), else an empty training partition
 * each; validation when the job has one.  Then place all of them under
 * the job's budget: the budget of one segment, for all this process
 * holds.
 */
static void
seg_exec_load(DlSegExec *ex, const int *segs, int n, bool train, int64 *rows_out)
{
	const DlSegJob *job = &ex->job;
	DlSegPartition **ps = palloc(sizeof(DlSegPartition *) * 2 * Max(n, 1));
	int			np = 0;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	for (int i = 0; i < n; i++)
	{
		int			seg = segs[i];

		if (seg < 0 || seg >= job->nseg)
			elog(ERROR, "madlib_dl: segment %d of %d", seg, job->nseg);
		CHECK_FOR_INTERRUPTS();
		if (train)
		{
			dl_seg_partition_read(&ex->train[seg], job->source, &job->vars, job->by_dist_key, seg,
								  job->nseg, ex->cxt);
			ps[np++] = &ex->train[seg];
			if (rows_out != NULL)
				rows_out[i] = ex->train[seg].n;
		}
		else
		{
			memset(&ex->train[seg], 0, sizeof(DlSegPartition));
			ex->train[seg].loaded = true;	/* empty: its rows are elsewhere */
		}
	}
	for (int i = 0; i < n && OidIsValid(job->validation); i++)
	{
		int			seg = segs[i];

		CHECK_FOR_INTERRUPTS();
		dl_seg_partition_read(&ex->val[seg], job->validation, &job->val_vars, false, seg, job->nseg,
							  ex->cxt);
		ps[np++] = &ex->val[seg];
	}
	dl_seg_partitions_place(ps, np, job->caching, job->partition_budget);
	pfree(ps);
	elog(DEBUG1, "madlib_dl: %d segment%s from %d loaded in %.3f s", n, n == 1 ? "" : "s",
		 n > 0 ? segs[0] : -1, dl_pg_seconds_since(start));
}

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
exec_model(DlSegExec *ex, int model)
{
	if (model < 0 || model >= ex->job.n_models)
		elog(ERROR, "madlib_dl: command names model %d of %d", model, ex->job.n_models);
	if (ex->models[model] == NULL)
	{
		const DlSegModelDef *def = &ex->job.models[model];

		if (ex->n_built >= (ex->job.model_cache > 0 ? ex->job.model_cache : DL_SEG_MODEL_CACHE))
		{
			int			lru = -1;

			for (int i = 0; i < ex->job.n_models; i++)
				if (ex->models[i] != NULL && (lru < 0 || ex->model_used[i] < ex->model_used[lru]))
					lru = i;
			dl_pg_model_free(ex->models[lru]);
			ex->models[lru] = NULL;
			ex->n_built--;
		}
		ex->models[model] = dl_pg_model_build(def->arch_json, strlen(def->arch_json),
											  def->compile_params, def->fit_params,
											  DL_PG_MODEL_TRAIN, 0, ex->cxt);
		ex->n_built++;
	}
	ex->model_used[model] = ++ex->use_clock;
	return ex->models[model];
}

/*
 * Run one command for segment seg on the state in slot (*len bytes of
 * cap) and write its statistics to *out: TRAIN is dl_seg_train_step,
 * which writes the new state and *len; EVAL is dl_seg_eval_step (the
 * slot is not written).  Anything else reports nothing.
 */
static void
seg_exec_run(DlSegExec *ex, int seg, const DlSegCommand *cmd, uint8 *slot, Size *len, Size cap,
			 DlSegStats *out)
{
	ExecContext ec;
	ErrorContextCallback errcb;
	DlSegPartition *tp;
	DlPgModel  *m;
	instr_time	start;
	instr_time	dur;
	DlSegStats	st;

	if (cmd->kind != DL_SEG_CMD_TRAIN && cmd->kind != DL_SEG_CMD_EVAL)
	{
		memset(out, 0, sizeof(*out));	/* idle this round: nothing to report */
		return;
	}
	if (seg < 0 || seg >= ex->job.nseg || !ex->train[seg].loaded)
		elog(ERROR, "madlib_dl: segment %d has no partition in this process", seg);
	tp = &ex->train[seg];

	ec.seg = seg;
	ec.cmd = cmd;
	errcb.callback = exec_error_callback;
	errcb.arg = &ec;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;

	INSTR_TIME_SET_CURRENT(start);
	m = exec_model(ex, cmd->model);
	if (cmd->kind == DL_SEG_CMD_TRAIN)
		(void) dl_seg_train_step(m, slot, *len, cap, len, tp, ex->cxt, cmd->iteration, seg,
								 cmd->catch_divergence, &st);
	else
		dl_seg_eval_step(m, slot, *len, tp, OidIsValid(ex->job.validation) ? &ex->val[seg] : NULL,
						 ex->cxt, &st);
	INSTR_TIME_SET_CURRENT(dur);
	INSTR_TIME_SUBTRACT(dur, start);
	st.seconds = INSTR_TIME_GET_DOUBLE(dur);
	memcpy(out, &st, dl_seg_stats_size(st.n_msum));	/* the metric sums block as used */
	elog(DEBUG1, "madlib_dl: segment %d %s model %d in %.3f s, of which reading %.3f s (%s)",
		 seg, cmd->kind == DL_SEG_CMD_TRAIN ? "trained" : "evaluated", cmd->model, st.seconds,
		 st.read_seconds, tp->cached ? "cached" : "streamed");

	error_context_stack = errcb.previous;
}

const DlSegExecutor dl_seg_executor = {
	.create = seg_exec_create,
	.load = seg_exec_load,
	.run = seg_exec_run,
};

void
dl_seg_setup_prepare(DlSegSetup *setup)
{
	/* the segments read these tables as packed ones: their types, checked once */
	dl_seg_require_vars(setup->source, &setup->vars);
	if (OidIsValid(setup->validation))
		dl_seg_require_vars(setup->validation, &setup->val_vars);
	setup->executor = &dl_seg_executor;
	if (setup->nseg >= 1 && setup->nseg <= DL_SEG_MAX)
		setup->partition_budget = dl_limits_partition_budget(setup->nseg);
}

#ifndef GP_VERSION_NUM

/* The parallel workers' entry point: the workers transport serves this executor. */
void
dl_segment_worker_main(dsm_segment *seg, shm_toc *toc)
{
	dl_transport_workers_serve(toc, &dl_seg_executor);
}

#else							/* GP_VERSION_NUM */

void
dl_segment_worker_main(dsm_segment *seg, shm_toc *toc)
{
	elog(ERROR, "madlib_dl: no parallel workers on Greenplum");
}

#endif							/* GP_VERSION_NUM */
