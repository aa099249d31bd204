/*-------------------------------------------------------------------------
 *
 * plproxy.c
 *	  The plproxy transport (transport.h): the steps run on the data nodes
 *	  of a PL/Proxy cluster, a round of commands per proxy call
 *	  (src/sql/plproxy.sql, docs/plproxy.md).
 *
 * Segments.  The packed table was distributed with plproxy_distribute:
 * segment s (its buffers with __dist_key__ = s) is on partition s of the
 * cluster (madlib_dl.plproxy_tables has its name on the nodes and the
 * number of segments).  The validation table is not distributed: segment
 * s's share, its buffers with buffer_id % nseg = s (as on the workers
 * transport), is read once at the start into the coordinator's memory,
 * by the job's segment executor (runtime/seg_exec.c).
 *
 * A round (rounds.h) of TRAIN or EVAL commands is one call of
 * madlib_dl._px_round, which calls the proxy function _px_step once: the
 * (segment, state, model definition, iteration) lists are SPLIT by
 * segment, each partition runs the step (runtime/node.c) on its
 * segment's rows (_px_node_step -> _px_node_run) and returns the step's
 * result.  A node keeps a partition that fits its madlib_dl.partition_memory
 * (or use_caching says so) in its backend for the call's next hops, keyed
 * by the call's random identifier; the call's end (_px_end_call ->
 * _px_release, on every partition) drops it.  An error
 * of the call is raised again by _px_rethrow, which names the data nodes
 * that do not answer.  An EVAL then evaluates each segment's validation
 * share on the coordinator, with the state in its slot.
 *
 * The access checks (the session user's USAGE on the cluster's server and
 * a user mapping, _px_check_access) and the cluster's partition count are
 * checked at the start, before any work.
 *
 * IDENTIFICATION
 *	  src/pg/transport/plproxy.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "pg_glue.h"
#include "pg_util.h"
#include "rounds.h"

#ifndef GP_VERSION_NUM

/* The plproxy transport's own state (DlRounds.priv). */
typedef struct PxTransport
{
	Datum		src;			/* text[]: the table's {schema, name} on the nodes */
	DlSegExec  *val_exec;		/* the validation shares; NULL without */
	int64		call_id;		/* names this call on the nodes (their cache) */
} PxTransport;

/* The arrays of a round's call: one element per command. */
typedef struct PxRound
{
	ArrayType  *segs;
	ArrayType  *states;
	ArrayType  *archs;
	ArrayType  *compiles;
	ArrayType  *fits;
	ArrayType  *iterations;
} PxRound;

/* A text[] of the n strings s (NULL elements where s[i] is NULL). */
static ArrayType *
text_array(char **s, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * n);
	bool	   *nulls = palloc(sizeof(bool) * n);
	int			dims[1] = {n};
	int			lbs[1] = {1};

	for (int i = 0; i < n; i++)
	{
		nulls[i] = s[i] == NULL;
		d[i] = nulls[i] ? (Datum) 0 : CStringGetTextDatum(s[i]);
	}
	return construct_md_array(d, nulls, 1, dims, lbs, TEXTOID, -1, false, TYPALIGN_INT);
}

/* The arrays for the commands of segments segs[0..n-1]. */
static void
round_arrays(DlRounds *r, const int *segs, int n, PxRound *a)
{
	Datum	   *seg = palloc(sizeof(Datum) * n);
	Datum	   *state = palloc(sizeof(Datum) * n);
	Datum	   *it = palloc(sizeof(Datum) * n);
	char	  **arch = palloc(sizeof(char *) * n);
	char	  **compile = palloc(sizeof(char *) * n);
	char	  **fitp = palloc(sizeof(char *) * n);

	for (int i = 0; i < n; i++)
	{
		const DlSegCommand *cmd = dl_rounds_command(r, segs[i]);
		const DlSegModelDef *def = dl_rounds_model(r, cmd->model);

		seg[i] = Int32GetDatum(segs[i]);
		state[i] = PointerGetDatum(dl_rounds_state_bytea(r, cmd->slot));
		it[i] = Int32GetDatum((int32) cmd->iteration);
		arch[i] = (char *) def->arch_json;
		compile[i] = (char *) def->compile_params;
		fitp[i] = (char *) def->fit_params;
	}
	a->segs = construct_array(seg, n, INT4OID, sizeof(int32), true, TYPALIGN_INT);
	a->states = construct_array(state, n, BYTEAOID, -1, false, TYPALIGN_INT);
	a->iterations = construct_array(it, n, INT4OID, sizeof(int32), true, TYPALIGN_INT);
	a->archs = text_array(arch, n);
	a->compiles = text_array(compile, n);
	a->fits = text_array(fitp, n);
	for (int i = 0; i < n; i++)
		pfree(DatumGetPointer(state[i]));
}

/*
 * Evaluate segment seg's validation share with the state in its command's
 * slot (the executor's EVAL on an empty training partition: the nodes
 * evaluated the training rows).
 */
static void
eval_val_share(DlRounds *r, const PxTransport *p, int seg)
{
	const DlSegCommand *cmd = dl_rounds_command(r, seg);
	Size		len = dl_transport_slot_len(&r->base, cmd->slot);
	DlSegStats	st;
	instr_time	start;

	CHECK_FOR_INTERRUPTS();
	INSTR_TIME_SET_CURRENT(start);
	r->setup.executor->run(p->val_exec, seg, cmd, dl_transport_slot(&r->base, cmd->slot), &len,
						   dl_transport_slot_cap(&r->base, cmd->slot), &st);
	r->stats[seg].val_loss_sum = st.val_loss_sum;
	r->stats[seg].val_metric_sum = st.val_metric_sum;
	r->stats[seg].val_n = st.val_n;
	r->stats[seg].n_out = Max(r->stats[seg].n_out, st.n_out);
	memcpy(r->stats[seg].val_out_loss, st.val_out_loss, sizeof(st.val_out_loss));
	memcpy(r->stats[seg].val_out_metric, st.val_out_metric, sizeof(st.val_out_metric));
	if (st.n_msum > 0)
	{
		/* the nodes gave the training sums; this process the validation share's */
		DlSegStats *rs = &r->stats[seg];

		if (rs->n_msum == 0)
			memset(rs->msum, 0, sizeof(double) * st.n_msum);
		rs->n_msum = st.n_msum;
		memcpy(rs->msum + st.n_msum, st.msum + st.n_msum, sizeof(double) * st.n_msum);
	}
	r->stats[seg].seconds += dl_pg_seconds_since(start);
}

/*
 * Open (inside SPI) the cursor of madlib_dl._px_round over the n segments
 * segs of r: their states, models and iterations, training or evaluating.
 */
static Portal
px_open_round(DlRounds *r, DlSegCommandKind kind, const int *segs, int n)
{
	PxTransport *p = (PxTransport *) r->priv;
	Oid			argtypes[13] = {TEXTOID, TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID, BOOLOID, INT4ARRAYOID,
	BYTEAARRAYOID, TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID, INT4ARRAYOID, INT8OID, BOOLOID};
	Datum		args[13];
	char		nulls[13];
	PxRound		a;

	round_arrays(r, segs, n, &a);
	args[0] = CStringGetTextDatum(r->setup.cluster);
	args[1] = p->src;
	args[2] = PointerGetDatum(text_array((char **) r->setup.vars.x, r->setup.vars.n_x));
	args[3] = PointerGetDatum(text_array((char **) r->setup.vars.y, r->setup.vars.n_y));
	args[4] = BoolGetDatum(kind == DL_SEG_CMD_TRAIN);
	args[5] = PointerGetDatum(a.segs);
	args[6] = PointerGetDatum(a.states);
	args[7] = PointerGetDatum(a.archs);
	args[8] = PointerGetDatum(a.compiles);
	args[9] = PointerGetDatum(a.fits);
	args[10] = PointerGetDatum(a.iterations);
	args[11] = Int64GetDatum(p->call_id);
	args[12] = BoolGetDatum(r->setup.caching == DL_CACHING_ON);
	memset(nulls, ' ', sizeof(nulls));
	if (r->setup.caching == DL_CACHING_AUTO)
		nulls[12] = 'n';
	return SPI_cursor_open_with_args(NULL,
									 "SELECT t.seg, t.result FROM madlib_dl._px_round($1, $2, $3, $4, $5,"
									 " $6, $7, $8, $9, $10, $11, $12, $13) t",
									 13, argtypes, args, nulls, false, 0);
}

/* Hand each (seg, result) row of portal to r, one row at a time. */
static void
px_read_results(DlRounds *r, DlSegCommandKind kind, Portal portal)
{
	for (;;)
	{
		bool		isnull;
		Datum		d;
		int			seg;
		DlStepResult res;

		SPI_cursor_fetch(portal, true, 1);
		if (SPI_processed == 0)
			break;
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		seg = isnull ? -1 : DatumGetInt32(d);
		if (seg < 0 || seg >= r->base.nseg)
			elog(ERROR, "madlib_dl: a proxy call answered for segment %d", seg);
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
		dl_rounds_read_result(d, isnull, &res);
		if (kind == DL_SEG_CMD_TRAIN)
			dl_rounds_train_done(r, seg, &res);
		else
			dl_rounds_eval_done(r, seg, &res, false);
		SPI_freetuptable(SPI_tuptable);
	}
}

/* The plproxy transport's round (DlRoundsHooks.run). */
static void
px_run(DlRounds *r, DlSegCommandKind kind, const int *segs, int n)
{
	PxTransport *p = (PxTransport *) r->priv;
	Portal		portal;

	/* everything of the call in SPI's memory, gone after SPI_finish */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "madlib_dl: SPI_connect failed");
	portal = px_open_round(r, kind, segs, n);
	px_read_results(r, kind, portal);
	SPI_cursor_close(portal);
	SPI_finish();
	if (kind == DL_SEG_CMD_EVAL && p->val_exec != NULL)
	{
		dl_pg_set_blas_threads();
		for (int i = 0; i < n; i++)
			eval_val_share(r, p, segs[i]);
	}
}

/*
 * The call's end (DlRoundsHooks.finish): the nodes drop the partitions
 * they kept for it (_px_end_call: a failure there is a WARNING, the
 * training is done).
 */
static void
px_finish(DlRounds *r)
{
	PxTransport *p = (PxTransport *) r->priv;
	Oid			argtypes[2] = {TEXTOID, INT8OID};
	Datum		args[2] = {CStringGetTextDatum(r->setup.cluster), Int64GetDatum(p->call_id)};

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "madlib_dl: SPI_connect failed");
	if (SPI_execute_with_args("SELECT madlib_dl._px_end_call($1, $2)", 2, argtypes, args, NULL,
							  false, 0) != SPI_OK_SELECT)
		elog(ERROR, "madlib_dl: could not end a PL/Proxy call");
	SPI_finish();
}

static const DlRoundsHooks px_hooks = {
	.name = "plproxy",
	.run = px_run,
	.finish = px_finish,
};

/*
 * The table's name on the nodes, after the checks: the proxy functions
 * exist, the table is distributed over cluster, the session user may use
 * the cluster, which has the job's nseg partitions.
 */
static Datum
px_check(const DlSegSetup *s, MemoryContext cxt)
{
	Oid			argtypes[2] = {TEXTOID, REGCLASSOID};
	Datum		args[2] = {CStringGetTextDatum(s->cluster), ObjectIdGetDatum(s->source)};
	bool		isnull;
	int			n_seg;
	Datum		src;
	MemoryContext old;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "madlib_dl: SPI_connect failed");
	if (SPI_execute("SELECT to_regprocedure('madlib_dl._px_round(text, text[], text[], text[], boolean,"
					" integer[], bytea[], text[], text[], text[], integer[], bigint, boolean)') IS NOT NULL"
					" AND to_regproc('madlib_dl._px_step') IS NOT NULL"
					" AND to_regproc('madlib_dl._px_release') IS NOT NULL", true, 0) != SPI_OK_SELECT ||
		!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("the PL/Proxy functions of madlib_dl are not installed"),
				 errhint("Run CREATE EXTENSION plproxy and SELECT madlib_dl.plproxy_setup() on the coordinator.")));
	if (SPI_execute_with_args("SELECT madlib_dl._px_cluster_of($2) IS NOT DISTINCT FROM $1", 2,
							  argtypes, args, NULL, true, 0) != SPI_OK_SELECT ||
		!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("table \"%s\" is not distributed over a PL/Proxy cluster named \"%s\"",
						get_rel_name(s->source), s->cluster),
				 errhint("Distribute it with madlib_dl.plproxy_distribute.")));
	if (SPI_execute_with_args("SELECT p.src, p.n_seg FROM madlib_dl._px_table_segments($1, $2) p",
							  2, argtypes, args, NULL, true, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "madlib_dl: could not read the segments of a distributed table");
	n_seg = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	if (isnull || n_seg != s->nseg)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("table \"%s\" was distributed over %d segments, the training job has %d",
						get_rel_name(s->source), isnull ? 0 : n_seg, s->nseg),
				 errhint("Give the job the table's segment count (madlib_dl.plproxy_tables).")));
	src = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	old = MemoryContextSwitchTo(cxt);
	src = datumCopy(src, false, -1);
	MemoryContextSwitchTo(old);
	SPI_finish();
	return src;
}

DlTransport *
dl_transport_plproxy_start(const DlSegSetup *setup, MemoryContext cxt)
{
	DlRounds   *r = dl_rounds_create(setup, cxt, &px_hooks, sizeof(PxTransport));
	PxTransport *p = (PxTransport *) r->priv;
	const DlSegSetup *s = &r->setup;
	MemoryContext old;

	if (s->cluster == NULL || s->executor == NULL)
		elog(ERROR, "madlib_dl: a plproxy job without a cluster or an executor");
	p->src = px_check(s, r->cxt);	/* the tables' types: dl_seg_setup_prepare */
	if (!pg_strong_random(&p->call_id, sizeof(p->call_id)))
		elog(ERROR, "madlib_dl: could not draw a call identifier");
	old = MemoryContextSwitchTo(r->cxt);
	if (OidIsValid(s->validation))
	{
		DlSegJob	job;
		int		   *segs = palloc(sizeof(int) * s->nseg);

		memset(&job, 0, sizeof(job));
		job.source = s->source;
		job.vars = s->vars;
		job.validation = s->validation;
		job.val_vars = s->val_vars;
		job.caching = s->caching;
		job.nseg = s->nseg;
		job.n_models = s->n_models;
		job.models = s->models;
		job.partition_budget = s->partition_budget;
		job.model_cache = 1;	/* one model built at a time, for the evaluations */
		for (int k = 0; k < s->nseg; k++)
			segs[k] = k;
		/* every share, no training rows (the nodes have them): one budget for them all */
		p->val_exec = s->executor->create(&job, r->cxt);
		s->executor->load(p->val_exec, segs, s->nseg, false, NULL);
	}
	MemoryContextSwitchTo(old);
	return &r->base;
}

#else							/* GP_VERSION_NUM */

DlTransport *
dl_transport_plproxy_start(const DlSegSetup *setup, MemoryContext cxt)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("PL/Proxy clusters are not used on Greenplum"),
			 errhint("On Greenplum and Cloudberry, fit and fit_multiple run over the real segments.")));
	return NULL;
}

#endif							/* GP_VERSION_NUM */
