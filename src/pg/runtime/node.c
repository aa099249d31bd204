/*-------------------------------------------------------------------------
 *
 * node.c
 *	  The step of a PL/Proxy data node (src/sql/plproxy.sql,
 *	  docs/plproxy.md), with the node's partition kept across the hops of
 *	  one fit or fit_multiple call.
 *
 * PL/Proxy keeps its connections, so one backend of a data node serves
 * every hop of a call for one segment (each partition of a cluster has
 * its own connection).  madlib_dl._px_node_run reads the segment's
 * directory (runtime/partition.c) on the call's first hop, places it
 * under this server's madlib_dl.partition_memory and the step's
 * use_caching, and runs the step (runtime/step.c).  A partition that is
 * cached stays in this backend's memory for the next hops of the call:
 * the entry is keyed by the call (a random identifier the coordinator
 * draws for each call), the table's OID and relfilenode, and the segment,
 * and a backend keeps one entry at most.
 * A streamed partition is read again at every hop, under that hop's
 * snapshot (its TOAST pointers are never kept beyond a transaction).
 *
 * The entries go when the call ends (the coordinator's last call,
 * _px_node_release), and, after a call that failed, at the next call that
 * reaches this backend with another identifier, or when the connection
 * closes.  The coordinator reads the table's rows once per call, as on
 * one server: rows a node's table gets during a call are not seen by
 * that call's later hops (a TRUNCATE or a rewrite changes the
 * relfilenode and is seen).
 *
 * IDENTIFICATION
 *	  src/pg/runtime/node.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "madlib_dl/dl_blob.h"

#include "pg_glue.h"
#include "pg_limits.h"
#include "pg_model.h"
#include "pg_util.h"
#include "segments.h"

/* One cached partition of this backend. */
typedef struct NodeEntry
{
	int64		call_id;
	Oid			relid;
	Oid			relfilenode;
	int			seg;
	int64		hits;			/* steps that used it */
	MemoryContext cxt;			/* the partition; a child of node_cxt */
	DlSegPartition part;
	struct NodeEntry *next;
} NodeEntry;

static MemoryContext node_cxt = NULL;
static NodeEntry *node_entries = NULL;

/* Drop the entries of calls other than keep (all with keep 0 and all true). */
static int
drop_entries(int64 keep, bool all)
{
	NodeEntry **link = &node_entries;
	int			n = 0;

	while (*link != NULL)
	{
		NodeEntry  *e = *link;

		if (all || e->call_id != keep)
		{
			*link = e->next;
			MemoryContextDelete(e->cxt);
			pfree(e);
			n++;
		}
		else
			link = &e->next;
	}
	return n;
}

static Oid
relation_filenode(Oid relid)
{
	Relation	rel = relation_open(relid, AccessShareLock);
	Oid			fn;

#if PG_VERSION_NUM >= 160000
	fn = rel->rd_locator.relNumber;
#else
	fn = rel->rd_node.relNode;
#endif
	relation_close(rel, AccessShareLock);
	return fn;
}

static void
require(FunctionCallInfo fcinfo, int i, const char *what)
{
	if (PG_ARGISNULL(i))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", what),
				 errhint("Call fit or fit_multiple, which run the steps.")));
}

/* What a _px_node_run call asks: the step on segment seg of relid, for call call_id. */
typedef struct NodeCall
{
	int64		call_id;
	Oid			relid;
	DlSegVars	vars;
	bool		train;
	int32		seg;
	HeapTupleHeader step;
	DlCaching	caching;		/* the step's use_caching */
} NodeCall;

/*
 * The partition this backend keeps for c's call, table and segment, or
 * NULL; entries of the segment whose table was rewritten since
 * (another relfilenode) are dropped.
 */
static DlSegPartition *
node_cached_partition(const NodeCall *c, Oid relfilenode)
{
	DlSegPartition *part = NULL;

	/* another call's entries are stale: it ended or failed */
	(void) drop_entries(c->call_id, false);
	for (NodeEntry **link = &node_entries; *link != NULL;)
	{
		NodeEntry  *e = *link;

		if (e->relid == c->relid && e->seg == c->seg && e->relfilenode != relfilenode)
		{
			/* the table was rewritten since: read it again */
			*link = e->next;
			MemoryContextDelete(e->cxt);
			pfree(e);
			continue;
		}
		if (e->relid == c->relid && e->seg == c->seg)
		{
			e->hits++;
			part = &e->part;
		}
		link = &e->next;
	}
	return part;
}

/*
 * Keep the cached partition fresh (its memory pcxt) as this backend's one
 * entry, for c's call's next hops; its TOAST pointers forgotten.
 */
static DlSegPartition *
node_keep_partition(const NodeCall *c, Oid relfilenode, MemoryContext pcxt, const DlSegPartition *fresh)
{
	NodeEntry  *e;

	/*
	 * one partition at a time: a call's backend serves one segment of one
	 * table, and no caller can pile partitions up beyond the budget
	 */
	(void) drop_entries(0, true);
	if (node_cxt == NULL)
		node_cxt = AllocSetContextCreate(TopMemoryContext, "madlib_dl node cache",
										 ALLOCSET_SMALL_SIZES);
	e = MemoryContextAllocZero(node_cxt, sizeof(NodeEntry));
	e->call_id = c->call_id;
	e->relid = c->relid;
	e->relfilenode = relfilenode;
	e->seg = c->seg;
	e->hits = 1;
	e->cxt = pcxt;
	e->part = *fresh;
	/* the rows are decoded: the directory's TOAST pointers are never read again */
	for (int i = 0; i < e->part.nbuf; i++)
		memset(e->part.bufs[i].v, 0, sizeof(Datum) * (e->part.n_x + e->part.n_y));
	MemoryContextSetParent(pcxt, node_cxt);
	e->next = node_entries;
	node_entries = e;
	return &e->part;
}

/*
 * Segment c->seg's partition of c->relid for this step of c's call: the
 * one this backend keeps for the call, else read now (its memory a child
 * of cxt: fresh) and placed under this server's budget and caching; a
 * cached one is kept for the call's next hops (one at a time).
 */
static DlSegPartition *
node_partition(const NodeCall *c, MemoryContext cxt, DlSegPartition *fresh)
{
	Oid			relfilenode = relation_filenode(c->relid);
	DlSegPartition *part = node_cached_partition(c, relfilenode);
	MemoryContext pcxt;

	if (part != NULL)
		return part;

	/* the partition's own context: kept when it is cached */
	pcxt = AllocSetContextCreate(cxt, "madlib_dl node partition", ALLOCSET_DEFAULT_SIZES);
	dl_seg_partition_read(fresh, c->relid, &c->vars, true, c->seg, 0, pcxt);
	part = fresh;
	dl_seg_partitions_place(&part, 1, c->caching, dl_limits_partition_budget(dl_seg_default_count()));
	if (!fresh->cached)
		return fresh;
	return node_keep_partition(c, relfilenode, pcxt, fresh);
}

/*
 * The step on part (not empty) of the model of c's step: training (the
 * new state, in caller's memory; NULL when it diverged) or evaluation
 * (NULL); statistics into *stats.
 */
static bytea *
node_step(const NodeCall *c, DlSegPartition *part, DlSegStats *stats, MemoryContext cxt,
		  MemoryContext caller)
{
	bytea	   *state;
	char	   *arch;
	char	   *fitp;
	bool		isnull;
	Datum		d;
	DlSegStepRun run;

	state = DatumGetByteaPP(dl_seg_step_field(c->step, "state", false, &isnull));
	arch = TextDatumGetCString(dl_seg_step_field(c->step, "model_arch", false, &isnull));
	d = dl_seg_step_field(c->step, "fit_params", true, &isnull);
	fitp = isnull ? NULL : TextDatumGetCString(d);
	dl_pg_set_blas_threads();
	run.m = dl_pg_model_build(arch, strlen(arch),
							  TextDatumGetCString(dl_seg_step_field(c->step, "compile_params", false, &isnull)),
							  fitp, DL_PG_MODEL_TRAIN, 0, cxt);
	if (!c->train)
	{
		dl_seg_eval_step(run.m, (const uint8 *) VARDATA_ANY(state), VARSIZE_ANY_EXHDR(state),
						 part, NULL, cxt, stats);
		return NULL;
	}
	run.part = part;
	run.cxt = cxt;
	run.out_cxt = caller;
	run.iteration = DatumGetInt32(dl_seg_step_field(c->step, "iteration", false, &isnull));
	run.segment = c->seg;
	return dl_seg_train_state(&run, state, stats);
}

/* The arguments of _px_node_run (all required) into *c, and its step's fields checked. */
static void
node_args(FunctionCallInfo fcinfo, NodeCall *c)
{
	bool		isnull;
	Datum		d;

	c->call_id = PG_GETARG_INT64(0);
	c->relid = PG_GETARG_OID(1);
	dl_seg_vars_from_arrays(PG_GETARG_ARRAYTYPE_P(2), PG_GETARG_ARRAYTYPE_P(3), &c->vars, "x_cols",
							"y_cols");
	c->train = PG_GETARG_BOOL(4);
	c->seg = PG_GETARG_INT32(5);
	c->step = PG_GETARG_HEAPTUPLEHEADER(6);
	(void) dl_seg_step_field(c->step, "state", false, &isnull);
	(void) dl_seg_step_field(c->step, "model_arch", false, &isnull);
	(void) dl_seg_step_field(c->step, "compile_params", false, &isnull);
	(void) dl_seg_step_field(c->step, "iteration", false, &isnull);
	if (DatumGetInt32(dl_seg_step_field(c->step, "segment", false, &isnull)) != c->seg)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the step is for segment %d, not %d",
						DatumGetInt32(dl_seg_step_field(c->step, "segment", false, &isnull)), c->seg),
				 errhint("Call fit or fit_multiple, which run the steps.")));
	d = dl_seg_step_field(c->step, "use_caching", true, &isnull);
	c->caching = isnull ? DL_CACHING_AUTO : DatumGetBool(d) ? DL_CACHING_ON : DL_CACHING_OFF;
}

PG_FUNCTION_INFO_V1(madlib_dl__px_node_run);

/*
 * madlib_dl._px_node_run(call_id bigint, rel regclass, x_cols text[],
 *     y_cols text[], train boolean, seg integer, step madlib_dl._step)
 *   RETURNS madlib_dl._step_result
 *
 * The step on this node's rows of segment seg of rel (__dist_key__ =
 * seg): training (divergence reported in the result) or evaluation.  A
 * segment without rows gives NULL, as the step aggregate does.
 */
Datum
madlib_dl__px_node_run(PG_FUNCTION_ARGS)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext cxt;
	NodeCall	c;
	DlSegPartition *part;
	DlSegPartition fresh;
	DlSegStats	stats;
	bytea	   *out_state = NULL;
	instr_time	start;
	TupleDesc	tupdesc;
	Datum		d;

	for (int i = 0; i < 7; i++)
		require(fcinfo, i, i == 6 ? "the step" : "the arguments of _px_node_run");
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE || tupdesc->natts != 9)
		elog(ERROR, "madlib_dl: _px_node_run must return madlib_dl._step_result");
	node_args(fcinfo, &c);
	dl_seg_require_vars(c.relid, &c.vars);

	cxt = AllocSetContextCreate(caller, "madlib_dl node step", ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(cxt);
	part = node_partition(&c, cxt, &fresh);
	memset(&stats, 0, sizeof(stats));
	INSTR_TIME_SET_CURRENT(start);
	if (part->n > 0)
		out_state = node_step(&c, part, &stats, cxt, caller);
	MemoryContextSwitchTo(caller);
	if (part->n <= 0)
	{
		MemoryContextDelete(cxt);
		PG_RETURN_NULL();
	}
	d = dl_seg_step_result(tupdesc, out_state, &stats, dl_pg_seconds_since(start));
	MemoryContextDelete(cxt);
	PG_RETURN_DATUM(d);
}

PG_FUNCTION_INFO_V1(madlib_dl__px_node_release);

/*
 * madlib_dl._px_node_release(call_id bigint) RETURNS integer
 * Drop this backend's partitions of call call_id (NULL: of every call);
 * returns how many were dropped.
 */
Datum
madlib_dl__px_node_release(PG_FUNCTION_ARGS)
{
	int64		call_id = PG_ARGISNULL(0) ? 0 : PG_GETARG_INT64(0);
	NodeEntry **link = &node_entries;
	int			n = 0;

	if (PG_ARGISNULL(0))
		PG_RETURN_INT32(drop_entries(0, true));
	while (*link != NULL)
	{
		NodeEntry  *e = *link;

		if (e->call_id == call_id)
		{
			*link = e->next;
			MemoryContextDelete(e->cxt);
			pfree(e);
			n++;
		}
		else
			link = &e->next;
	}
	PG_RETURN_INT32(n);
}

PG_FUNCTION_INFO_V1(madlib_dl__px_node_cached);

/*
 * madlib_dl._px_node_cached(OUT call_id bigint, OUT relid oid, OUT seg
 *     integer, OUT rows bigint, OUT bytes bigint, OUT hits bigint)
 *     RETURNS SETOF record
 * The partitions this backend keeps: for tests and for looking.
 */
Datum
madlib_dl__px_node_cached(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	for (NodeEntry *e = node_entries; e != NULL; e = e->next)
	{
		Datum		values[6];
		bool		nulls[6] = {false, false, false, false, false, false};

		values[0] = Int64GetDatum(e->call_id);
		values[1] = ObjectIdGetDatum(e->relid);
		values[2] = Int32GetDatum(e->seg);
		values[3] = Int64GetDatum(e->part.n);
		values[4] = Int64GetDatum((int64) MemoryContextMemAllocated(e->cxt, true));
		values[5] = Int64GetDatum(e->hits);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
