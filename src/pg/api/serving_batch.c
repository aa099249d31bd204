/*-------------------------------------------------------------------------
 *
 * serving_batch.c
 *	  predict_row, predict_row_prob and _predict_probs batched across
 *	  rows: a custom scan node, "madlib_dl batched predict", that a
 *	  planner hook puts where a query calls them once per row.
 *
 * A scalar function sees one row: one forward pass per row reads every
 * weight of the model for every row (14.4 us for the MLP
 * 784-256-128-10, against 4.8 us a row in a batch of 8 and 4.5 us from
 * 64: bench/predict_rows.c).  After the standard
 * planner, the hook looks for calls whose model arguments are constants
 * or parameters of the query, in two places:
 *
 *	 a. a whole select-list entry of a scan, a join or a Result over a
 *		plan (SELECT id, predict_row('m', x) FROM t; CREATE TABLE AS; a
 *		view; INSERT ... SELECT): predict_row and predict_row_prob.  That
 *		node now outputs the features in the entry's place, and a batch
 *		node above it gives the prediction there;
 *	 b. inside an aggregate's argument or FILTER (count(predict_row(...)),
 *		a partial aggregate of a parallel plan included), or a
 *		ProjectSet's select list (predict's row mode:
 *		_predict_ranked(id, _predict_probs(...), k)), where the call is
 *		evaluated for every row (not under AND, OR, CASE or COALESCE, nor
 *		in the arguments of an aggregate with a FILTER).  A batch node
 *		goes between the node and its input, evaluates the call's per-row
 *		arguments over each input row and adds the prediction as one more
 *		column, which the node reads instead of calling the function.
 *
 * The node reads batch rows from its input (1, 2, 4, ... up to
 * madlib_dl.serving_batch_rows, so a LIMIT 1 reads one row), copies them,
 * and per call finds the model (predict_row: the per-backend cache of
 * serving.c, with its version stamp and snapshot rules; _predict_probs:
 * built from its arguments once per query), copies each row's features,
 * runs one forward pass over the batch (fewer rows when that many would
 * be over madlib_dl.max_model_memory) and then returns the rows in their
 * order with their predictions.  Rows of NULL features give NULL, as the
 * function does; a row whose features predict_row refuses gives its
 * error when it is returned.  With oneDNN's kernels a row's numbers are
 * those of one call per row, bit for bit (dl_serve_run runs a lone row
 * as two).  Other calls
 * (in a WHERE clause, inside a larger expression of a select list, with
 * a model from a column) stay one call per row.
 *
 * Not done for: scrollable cursors, SELECT ... FOR UPDATE, UPDATE and
 * DELETE (their rechecks), statements with data-modifying CTEs, a node
 * beside a volatile function (rows are read ahead), the inner side of a
 * merge join (mark and restore), grouping sets, Greenplum and servers
 * before PostgreSQL 14 (no hook: the functions run per row there).
 * madlib_dl.serving_batch_rows = 1 turns the hook off.
 *
 * IDENTIFICATION
 *	  src/pg/api/serving_batch.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "serving.h"

void		dl_serving_batch_init(void);

/* madlib_dl.serving_batch_rows: most rows per forward pass; 1: no batching */
static int	dl_serving_batch_rows = 64;

#define BATCH_ROWS_MAX 4096
/* at most this many bytes of copied rows, and of features and outputs per call, per batch */
#define BATCH_BUFFER_BYTES ((Size) 64 * 1024 * 1024)

#if PG_VERSION_NUM >= 140000 && !defined(GP_VERSION_NUM)

#include "access/htup_details.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

extern Datum madlib_dl__predict_row(PG_FUNCTION_ARGS);	/* serving.c */
extern Datum madlib_dl__predict_row_prob(PG_FUNCTION_ARGS);
extern Datum madlib_dl__predict_probs(PG_FUNCTION_ARGS);

/* The calls the node batches. */
#define KIND_ROW 1				/* predict_row(model, features, key) */
#define KIND_ROW_PROB 2			/* predict_row_prob(model, features, key) */
#define KIND_PROBS 3			/* _predict_probs(arch, weights, nc, col, id, features) */
#define CALL_MAX_ARGS 6

/* A kind's arguments: how many, and which change per row (the others are the model). */
static const struct
{
	int			nargs;
	bool		per_row[CALL_MAX_ARGS];
}			kind_args[4] = {
	{0, {false}},
	{3, {false, true, false}},
	{3, {false, true, false}},
	{6, {false, false, false, false, true, true}},
};

#define BATCH_NODE_NAME "madlib_dl batched predict"

static planner_hook_type prev_planner = NULL;

/* ---------------------------------------------------------------------
 * Planning: find the calls and put batch nodes in
 * ---------------------------------------------------------------------
 */

/*
 * The KIND_ of a call of funcid, 0 for anything else: the function's C
 * symbol, as fmgr resolves it.
 */
static int
predict_kind(Oid funcid)
{
	FmgrInfo	fi;
	HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	bool		ours = false;

	if (!HeapTupleIsValid(tup))
		return 0;
	/* a C function of one of the two symbol names, before fmgr loads anything */
	if (((Form_pg_proc) GETSTRUCT(tup))->prolang == ClanguageId)
	{
		bool		isnull;
		Datum		src = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);

		if (!isnull)
		{
			char	   *name = TextDatumGetCString(src);

			ours = strcmp(name, "madlib_dl__predict_row") == 0 ||
				strcmp(name, "madlib_dl__predict_row_prob") == 0 ||
				strcmp(name, "madlib_dl__predict_probs") == 0;
			pfree(name);
		}
	}
	ReleaseSysCache(tup);
	if (!ours)
		return 0;
	fmgr_info(funcid, &fi);
	if (fi.fn_addr == madlib_dl__predict_row)
		return KIND_ROW;
	if (fi.fn_addr == madlib_dl__predict_row_prob)
		return KIND_ROW_PROB;
	if (fi.fn_addr == madlib_dl__predict_probs)
		return KIND_PROBS;
	return 0;
}

/* A constant or a parameter of the query (the same for every row of a scan). */
static bool
is_query_constant(Node *n)
{
	return IsA(n, Const) || (IsA(n, Param) && ((Param *) n)->paramkind == PARAM_EXTERN);
}

/* e's KIND_ when it is a call the node can batch: the model arguments constants; else 0. */
static int
batchable_call(Node *e)
{
	FuncExpr   *f;
	int			kind;
	int			i = 0;
	ListCell   *lc;

	if (e == NULL || !IsA(e, FuncExpr))
		return 0;
	f = (FuncExpr *) e;
	if (f->funcretset || list_length(f->args) < 3 || list_length(f->args) > CALL_MAX_ARGS)
		return 0;
	kind = predict_kind(f->funcid);
	if (kind == 0 || list_length(f->args) != kind_args[kind].nargs)
		return 0;
	foreach(lc, f->args)
		if (!kind_args[kind].per_row[i++] && !is_query_constant(lfirst(lc)))
			return 0;
	return kind;
}

static bool has_exec_param_walker(Node *n, void *ctx);

/* The per-row arguments of call f (of kind) have no PARAM_EXEC or SubPlan (the node evaluates them). */
static bool
per_row_args_plain(FuncExpr *f, int kind)
{
	int			i = 0;
	ListCell   *lc;

	foreach(lc, f->args)
		if (kind_args[kind].per_row[i++] && has_exec_param_walker(lfirst(lc), NULL))
			return false;
	return true;
}

/* A PARAM_EXEC or a SubPlan in n (which the node does not evaluate). */
static bool
has_exec_param_walker(Node *n, void *ctx)
{
	if (n == NULL)
		return false;
	if (IsA(n, Param) && ((Param *) n)->paramkind == PARAM_EXEC)
		return true;
	if (IsA(n, SubPlan) || IsA(n, AlternativeSubPlan))
		return true;
	return expression_tree_walker(n, has_exec_param_walker, ctx);
}

/* What a batch node is built from: its input and the calls it runs. */
typedef struct BatchBuild
{
	Plan	   *child;
	List	   *calls;			/* FuncExpr, features over the child's columns (OUTER_VAR) */
	List	   *kinds;			/* their KIND_s (int) */
	List	   *out_cols;		/* case a: the child's column of each call (int); b: NIL */
} BatchBuild;

/* The next plan_node_id of the statement being rewritten. */
static int	batch_next_node_id;

static CustomScanMethods batch_plan_methods;

/*
 * The batch node's output: the scan tuple's columns (n of the child's,
 * then one per call in scan_tlist), in the order of child_tlist_orig;
 * case a (out_cols): each call's column replaced by its prediction; case
 * b: the predictions after the child's columns.
 */
static List *
batch_output_tlist(const BatchBuild *b, List *child_tlist_orig, int n, List *scan_tlist)
{
	List	   *tlist = NIL;
	ListCell   *lc;

	foreach(lc, child_tlist_orig)
	{
		TargetEntry *orig = lfirst_node(TargetEntry, lc);
		Node	   *e = (Node *) orig->expr;
		int			col = orig->resno;
		int			k = 0;
		ListCell   *oc;
		TargetEntry *tle;

		foreach(oc, b->out_cols)
		{
			if (lfirst_int(oc) == orig->resno)
				col = n + k + 1;
			k++;
		}
		tle = flatCopyTargetEntry(orig);
		tle->expr = (Expr *) makeVar(INDEX_VAR, col, exprType(e), exprTypmod(e), exprCollation(e), 0);
		tlist = lappend(tlist, tle);
	}
	if (b->out_cols == NIL)
		for (int k = n; k < list_length(scan_tlist); k++)
		{
			Node	   *e = (Node *) list_nth_node(TargetEntry, scan_tlist, k)->expr;

			tlist = lappend(tlist, makeTargetEntry((Expr *) makeVar(INDEX_VAR, k + 1, exprType(e), -1,
																	exprCollation(e), 0),
												   k + 1, NULL, false));
		}
	return tlist;
}

/*
 * The batch node over b->child: its scan tuple is the child's columns
 * then one column per call (batch_output_tlist says what it returns);
 * custom_exprs every call's arguments, custom_private their KIND_s.
 */
static Plan *
make_batch_node(BatchBuild *b, List *child_tlist_orig)
{
	CustomScan *cs = makeNode(CustomScan);
	Plan	   *child = b->child;
	List	   *scan_tlist = NIL;
	List	   *exprs = NIL;
	List	   *kinds = NIL;
	int			n = list_length(child->targetlist);
	ListCell   *kc;
	ListCell   *lc;

	foreach(lc, child->targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Var		   *v = makeVarFromTargetEntry(OUTER_VAR, tle);

		scan_tlist = lappend(scan_tlist, makeTargetEntry((Expr *) v, tle->resno, tle->resname, false));
	}
	forboth(lc, b->calls, kc, b->kinds)
	{
		FuncExpr   *f = lfirst_node(FuncExpr, lc);

		scan_tlist = lappend(scan_tlist, makeTargetEntry((Expr *) f, list_length(scan_tlist) + 1, NULL, false));
		exprs = list_concat(exprs, f->args);
		kinds = lappend(kinds, makeInteger(lfirst_int(kc)));
	}
	cs->scan.plan.targetlist = batch_output_tlist(b, child_tlist_orig, n, scan_tlist);
	cs->scan.plan.startup_cost = child->startup_cost;
	cs->scan.plan.total_cost = child->total_cost;
	cs->scan.plan.plan_rows = child->plan_rows;
	cs->scan.plan.plan_width = child->plan_width;
	cs->scan.plan.parallel_aware = false;
	cs->scan.plan.parallel_safe = child->parallel_safe;
	cs->scan.plan.plan_node_id = batch_next_node_id++;
	cs->scan.plan.lefttree = child;
	cs->scan.plan.extParam = bms_copy(child->extParam);
	cs->scan.plan.allParam = bms_copy(child->allParam);
	cs->scan.scanrelid = 0;
	cs->flags = 0;
	cs->custom_exprs = exprs;
	cs->custom_private = kinds;
	cs->custom_scan_tlist = scan_tlist;
	cs->methods = &batch_plan_methods;
	return (Plan *) cs;
}

/*
 * Case a: the whole select-list entries of p that are batchable calls.
 * p then outputs their features in their place; the batch node above it
 * is returned (p itself when there is none).
 */
static Plan *
wrap_projection(Plan *p)
{
	BatchBuild	b = {p, NIL, NIL, NIL};
	List	   *orig = p->targetlist;
	List	   *tlist = NIL;
	ListCell   *lc;

	/*
	 * The node's rows are read a batch ahead of the rows returned: not
	 * where that would run a volatile function (nextval, ...) for rows a
	 * LIMIT or a cursor never takes.
	 */
	if (contain_volatile_functions((Node *) orig) || contain_volatile_functions((Node *) p->qual))
		return p;
	foreach(lc, orig)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		int			kind = batchable_call((Node *) tle->expr);

		/* predict_row and predict_row_prob: their one per-row argument in the entry's place */
		if (kind == KIND_ROW || kind == KIND_ROW_PROB)
		{
			FuncExpr   *f = copyObject((FuncExpr *) tle->expr);
			TargetEntry *nt = flatCopyTargetEntry(tle);
			Node	   *feat = lsecond(f->args);

			nt->expr = (Expr *) feat;
			tlist = lappend(tlist, nt);
			lsecond(f->args) = makeVar(OUTER_VAR, tle->resno, exprType(feat), exprTypmod(feat),
									   exprCollation(feat), 0);
			b.calls = lappend(b.calls, f);
			b.kinds = lappend_int(b.kinds, kind);
			b.out_cols = lappend_int(b.out_cols, tle->resno);
		}
		else
			tlist = lappend(tlist, tle);
	}
	if (b.calls == NIL)
		return p;
	p->targetlist = tlist;
	return make_batch_node(&b, orig);
}

/* Case b: replace each batchable call in an aggregate's input by a column of the batch node. */
typedef struct AggRewrite
{
	int			ncols;			/* the child's columns */
	List	   *calls;
	List	   *kinds;			/* their KIND_s (int) */
} AggRewrite;

/*
 * Whether n's children are all evaluated whenever n is (no AND, OR,
 * CASE or COALESCE, which may skip some): only there is a call
 * evaluated for every row, so that batching it evaluates nothing the
 * query would not.
 */
static bool
evaluates_all_children(Node *n)
{
	switch (nodeTag(n))
	{
		case T_List:
		case T_TargetEntry:
		case T_FuncExpr:
		case T_OpExpr:
		case T_DistinctExpr:
		case T_NullIfExpr:
		case T_RelabelType:
		case T_CoerceViaIO:
		case T_ArrayCoerceExpr:
		case T_ConvertRowtypeExpr:
		case T_CollateExpr:
		case T_NullTest:
		case T_BooleanTest:
		case T_ArrayExpr:
		case T_RowExpr:
		case T_MinMaxExpr:
			return true;
		default:
			return false;
	}
}

static Node *
agg_call_mutator(Node *n, AggRewrite *r)
{
	int			kind;

	if (n == NULL)
		return NULL;
	if (!evaluates_all_children(n))
		return n;				/* leave it, and any call under it, alone */
	if (IsA(n, FuncExpr) && (kind = batchable_call(n)) != 0 && per_row_args_plain((FuncExpr *) n, kind))
	{
		int			j = 0;
		ListCell   *lc;

		/* the same call twice is one column */
		foreach(lc, r->calls)
		{
			j++;
			if (equal(lfirst(lc), n))
				return (Node *) makeVar(OUTER_VAR, r->ncols + j, exprType(n), -1, exprCollation(n), 0);
		}
		r->calls = lappend(r->calls, copyObject(n));
		r->kinds = lappend_int(r->kinds, kind);
		return (Node *) makeVar(OUTER_VAR, r->ncols + list_length(r->calls), exprType(n), -1,
								exprCollation(n), 0);
	}
	return expression_tree_mutator(n, agg_call_mutator, r);
}

/* Inside the aggregates of an Agg's select list and HAVING: their arguments and FILTERs. */
static Node *
agg_mutator(Node *n, AggRewrite *r)
{
	if (n == NULL)
		return NULL;
	if (IsA(n, Aggref))
	{
		Aggref	   *a = (Aggref *) copyObject(n);

		if (DO_AGGSPLIT_COMBINE(a->aggsplit))
			return (Node *) a;
		/* the arguments are evaluated only for the rows the FILTER keeps */
		if (a->aggfilter == NULL)
			a->args = (List *) agg_call_mutator((Node *) a->args, r);
		a->aggfilter = (Expr *) agg_call_mutator((Node *) a->aggfilter, r);
		return (Node *) a;
	}
	return expression_tree_mutator(n, agg_mutator, r);
}

/*
 * Case b: the calls an Agg evaluates in its aggregates' arguments and
 * FILTERs, or a ProjectSet in its select list (the arguments of its
 * set-returning functions included), for each row of its input: a batch
 * node between the node and its input.
 */
static void
wrap_input(Plan *parent)
{
	Plan	   *child = parent->lefttree;
	AggRewrite	r = {0, NIL, NIL};
	List	   *tlist;
	List	   *qual;
	BatchBuild	b;

	if (child == NULL)
		return;
	r.ncols = list_length(child->targetlist);
	if (IsA(parent, Agg))
	{
		Agg		   *agg = (Agg *) parent;

		/* grouping sets sort the input again per set: left alone */
		if (agg->groupingSets != NIL || agg->chain != NIL)
			return;
		tlist = (List *) agg_mutator((Node *) parent->targetlist, &r);
		qual = (List *) agg_mutator((Node *) parent->qual, &r);
	}
	else
	{
		tlist = (List *) agg_call_mutator((Node *) parent->targetlist, &r);
		qual = parent->qual;
	}
	if (r.calls == NIL)
		return;
	parent->targetlist = tlist;
	parent->qual = qual;
	b.child = child;
	b.calls = r.calls;
	b.kinds = r.kinds;
	b.out_cols = NIL;
	parent->lefttree = make_batch_node(&b, child->targetlist);
}

/* Whether p is a node that projects each of its rows (case a). */
static bool
projects_rows(Plan *p)
{
	switch (nodeTag(p))
	{
		case T_SeqScan:
		case T_SampleScan:
		case T_IndexScan:
		case T_IndexOnlyScan:
		case T_BitmapHeapScan:
		case T_TidScan:
		case T_TidRangeScan:
		case T_SubqueryScan:
		case T_FunctionScan:
		case T_ValuesScan:
		case T_TableFuncScan:
		case T_CteScan:
		case T_NamedTuplestoreScan:
		case T_WorkTableScan:
		case T_NestLoop:
		case T_MergeJoin:
		case T_HashJoin:
			return true;
		case T_Result:
			return p->lefttree != NULL;
		default:
			return false;
	}
}

static Plan *batch_rewrite(Plan *p, bool needs_mark);

static List *
batch_rewrite_list(List *plans)
{
	ListCell   *lc;

	foreach(lc, plans)
		lfirst(lc) = batch_rewrite((Plan *) lfirst(lc), false);
	return plans;
}

/*
 * Rewrite the plan tree p (its children first); the node to put where p
 * was.  needs_mark: p is the inner side of a merge join, which may mark
 * and restore it.
 */
static Plan *
batch_rewrite(Plan *p, bool needs_mark)
{
	if (p == NULL)
		return NULL;
	check_stack_depth();
	p->lefttree = batch_rewrite(p->lefttree, false);
	p->righttree = batch_rewrite(p->righttree, IsA(p, MergeJoin));
	switch (nodeTag(p))
	{
		case T_Append:
			batch_rewrite_list(((Append *) p)->appendplans);
			break;
		case T_MergeAppend:
			batch_rewrite_list(((MergeAppend *) p)->mergeplans);
			break;
		case T_SubqueryScan:
			((SubqueryScan *) p)->subplan = batch_rewrite(((SubqueryScan *) p)->subplan, false);
			break;
		default:
			break;
	}
	if (IsA(p, Agg) || IsA(p, ProjectSet))
	{
		wrap_input(p);
		return p;
	}
	if (!needs_mark && projects_rows(p))
		return wrap_projection(p);
	return p;
}

/* The largest plan_node_id in the tree p. */
static int
max_node_id(Plan *p)
{
	int			m;
	ListCell   *lc;
	List	   *kids = NIL;

	if (p == NULL)
		return -1;
	m = Max(p->plan_node_id, Max(max_node_id(p->lefttree), max_node_id(p->righttree)));
	if (IsA(p, Append))
		kids = ((Append *) p)->appendplans;
	else if (IsA(p, MergeAppend))
		kids = ((MergeAppend *) p)->mergeplans;
	else if (IsA(p, SubqueryScan))
		m = Max(m, max_node_id(((SubqueryScan *) p)->subplan));
	else if (IsA(p, CustomScan))
		kids = ((CustomScan *) p)->custom_plans;
	else if (IsA(p, BitmapAnd))
		kids = ((BitmapAnd *) p)->bitmapplans;
	else if (IsA(p, BitmapOr))
		kids = ((BitmapOr *) p)->bitmapplans;
	foreach(lc, kids)
		m = Max(m, max_node_id((Plan *) lfirst(lc)));
	return m;
}

/*
 * Whether the statement may get batch nodes: a SELECT or INSERT without
 * rechecks or scrolling that calls a function not built into the server
 * (the planner records a dependency on each such function, PROCOID in
 * invalItems: a plan without one has no call of ours, and is not walked).
 */
static bool
stmt_may_batch(PlannedStmt *stmt, int cursorOptions)
{
	bool		user_function = false;
	ListCell   *lc;

	if (dl_serving_batch_rows <= 1)
		return false;
	foreach(lc, stmt->invalItems)
		user_function |= lfirst_node(PlanInvalItem, lc)->cacheId == PROCOID;
	if (!user_function)
		return false;
	if (stmt->commandType != CMD_SELECT && stmt->commandType != CMD_INSERT)
		return false;
	if (stmt->rowMarks != NIL || stmt->hasModifyingCTE || (cursorOptions & CURSOR_OPT_SCROLL))
		return false;
	return true;
}

static PlannedStmt *
batch_planner(Query *parse, const char *query_string, int cursorOptions, ParamListInfo boundParams)
{
	PlannedStmt *stmt;
	ListCell   *lc;

	if (prev_planner)
		stmt = prev_planner(parse, query_string, cursorOptions, boundParams);
	else
		stmt = standard_planner(parse, query_string, cursorOptions, boundParams);
	if (!stmt_may_batch(stmt, cursorOptions))
		return stmt;
	batch_next_node_id = max_node_id(stmt->planTree);
	foreach(lc, stmt->subplans)
		batch_next_node_id = Max(batch_next_node_id, max_node_id((Plan *) lfirst(lc)));
	batch_next_node_id++;
	stmt->planTree = batch_rewrite(stmt->planTree, false);
	foreach(lc, stmt->subplans)
		lfirst(lc) = batch_rewrite((Plan *) lfirst(lc), false);
	return stmt;
}

/* ---------------------------------------------------------------------
 * Execution
 * ---------------------------------------------------------------------
 */

/* One call the node runs. */
typedef struct BatchCall
{
	FmgrInfo	flinfo;			/* the call site: its model state (fn_extra) */
	int			kind;			/* KIND_ */
	int			nargs;
	ExprState  *args[CALL_MAX_ARGS];	/* the model's over nothing, the per-row ones
										 * over a row of the input (the outer tuple) */
	int			feat_arg;		/* the features' argument */
	Datum	   *values;			/* (cap) the batch's predictions */
	bool	   *nulls;			/* (cap) */
	Datum	   *feats;			/* (cap) the batch's features */
	bool	   *feat_nulls;		/* (cap) */
	Datum	   *ids;			/* (cap) KIND_PROBS: the rows' ids */
	bool	   *id_nulls;		/* (cap) */
	int		   *pos;			/* (cap) a row's place in x and out; -1: none */
	bool	   *bad;			/* (cap) features that give an ERROR when the row is returned */
	float	   *x;				/* (cap, input size) */
	float	   *out;			/* (cap, output width) */
	Size		x_bytes;
	Size		out_bytes;
} BatchCall;

typedef struct BatchState
{
	CustomScanState css;
	int			ncalls;
	BatchCall  *calls;
	int			nchild;			/* the input's columns */
	int			cap;			/* most rows a batch holds */
	int			want;			/* rows of the next batch: 1, 2, 4, ... cap */
	TupleTableSlot **rows;		/* (cap) the batch's input rows (copies) */
	int			nrows;
	int			next;			/* the next row to return */
	bool		done;			/* the input has no more rows */
	MemoryContext batch_cxt;	/* reset per batch */
} BatchState;

static CustomExecMethods batch_exec_methods;

static Node *
batch_create_state(CustomScan *cs)
{
	BatchState *bs = (BatchState *) newNode(sizeof(BatchState), T_CustomScanState);

	bs->css.methods = &batch_exec_methods;
	return (Node *) bs;
}

/* Call c of kind: its arguments' expressions from *lc on (moved past them), its buffers of cap rows. */
static void
call_init(BatchCall *c, int kind, List *exprs, ListCell **lc, int cap, EState *estate)
{
	c->kind = kind;
	c->nargs = kind_args[kind].nargs;
	c->feat_arg = kind == KIND_PROBS ? 5 : 1;
	/* only the call-site state of the model: fn_extra in fn_mcxt */
	MemSet(&c->flinfo, 0, sizeof(FmgrInfo));
	c->flinfo.fn_oid = InvalidOid;
	c->flinfo.fn_mcxt = estate->es_query_cxt;
	for (int k = 0; k < c->nargs; k++)
	{
		c->args[k] = ExecInitExpr((Expr *) lfirst(*lc), NULL);
		*lc = lnext(exprs, *lc);
	}
	c->values = palloc0(sizeof(Datum) * cap);
	c->nulls = palloc0(sizeof(bool) * cap);
	c->feats = palloc0(sizeof(Datum) * cap);
	c->feat_nulls = palloc0(sizeof(bool) * cap);
	c->ids = palloc0(sizeof(Datum) * cap);
	c->id_nulls = palloc0(sizeof(bool) * cap);
	c->pos = palloc0(sizeof(int) * cap);
	c->bad = palloc0(sizeof(bool) * cap);
}

static void
batch_begin(CustomScanState *node, EState *estate, int eflags)
{
	BatchState *bs = (BatchState *) node;
	CustomScan *cs = (CustomScan *) node->ss.ps.plan;
	PlanState  *child;
	TupleDesc	desc;
	ListCell   *lc;
	ListCell   *kc;
	int			i = 0;
	int			nexprs = 0;

	child = ExecInitNode(outerPlan(cs), estate, eflags);
	outerPlanState(bs) = child;
	desc = ExecGetResultType(child);
	bs->nchild = desc->natts;
	bs->cap = Max(1, Min(dl_serving_batch_rows, BATCH_ROWS_MAX));
	bs->want = 1;
	bs->ncalls = list_length(cs->custom_private);
	foreach(kc, cs->custom_private)
	{
		int			kind = intVal(lfirst(kc));

		if (kind < KIND_ROW || kind > KIND_PROBS)
			elog(ERROR, "madlib_dl: a batched predict node with a call of kind %d", kind);
		nexprs += kind_args[kind].nargs;
	}
	if (nexprs != list_length(cs->custom_exprs) ||
		list_length(cs->custom_scan_tlist) != bs->nchild + bs->ncalls)
		elog(ERROR, "madlib_dl: a batched predict node of %d calls with %d arguments",
			 bs->ncalls, list_length(cs->custom_exprs));
	bs->calls = palloc0(sizeof(BatchCall) * bs->ncalls);
	bs->rows = palloc0(sizeof(TupleTableSlot *) * bs->cap);
	for (int r = 0; r < bs->cap; r++)
		bs->rows[r] = ExecAllocTableSlot(&estate->es_tupleTable, desc, &TTSOpsVirtual);
	bs->batch_cxt = AllocSetContextCreate(estate->es_query_cxt, "madlib_dl batched predict",
										  ALLOCSET_DEFAULT_SIZES);
	lc = list_head(cs->custom_exprs);
	foreach(kc, cs->custom_private)
		call_init(&bs->calls[i++], intVal(lfirst(kc)), cs->custom_exprs, &lc, bs->cap, estate);
}

/* buf grown to at least bytes (in the query's memory), *have its size. */
static void *
grow_buffer(void *buf, Size *have, Size bytes, MemoryContext cxt)
{
	if (bytes <= *have)
		return buf;
	if (buf != NULL)
		pfree(buf);
	buf = MemoryContextAllocHuge(cxt, bytes);
	*have = bytes;
	return buf;
}

/* Evaluate e with the outer tuple row; its value is left in the current memory context. */
static Datum
eval_on_row(ExprState *e, ExprContext *econtext, TupleTableSlot *row, bool *isnull)
{
	econtext->ecxt_outertuple = row;
	return ExecEvalExpr(e, econtext, isnull);
}

/*
 * The model of call c (its model arguments are the same for every row);
 * *col: KIND_PROBS' feature_col.
 */
static ServeEntry *
call_entry(BatchState *bs, BatchCall *c, const char **col)
{
	ExprContext *econtext = bs->css.ss.ps.ps_ExprContext;
	Datum		v[CALL_MAX_ARGS];
	bool		n[CALL_MAX_ARGS];

	for (int k = 0; k < c->nargs; k++)
		if (!kind_args[c->kind].per_row[k])
			v[k] = ExecEvalExpr(c->args[k], econtext, &n[k]);
	*col = NULL;
	if (c->kind == KIND_PROBS)
		return dl_serve_entry_values(&c->flinfo, v, n, col);
	return dl_serve_entry_for(&c->flinfo, v[0], n[0], v[2], n[2]);
}

/*
 * The per-row arguments of call c for the batch's rows: features (and
 * _predict_probs' ids), predict_row's detoasted; the rows' predictions
 * reset.  How many rows have features to predict (_predict_probs: all,
 * it refuses NULL features itself).
 */
static int
read_call_rows(BatchState *bs, BatchCall *c)
{
	ExprContext *econtext = bs->css.ss.ps.ps_ExprContext;
	bool		probs = c->kind == KIND_PROBS;
	int			n_ok = 0;

	for (int r = 0; r < bs->nrows; r++)
	{
		c->feats[r] = eval_on_row(c->args[c->feat_arg], econtext, bs->rows[r], &c->feat_nulls[r]);
		if (probs)
			c->ids[r] = eval_on_row(c->args[4], econtext, bs->rows[r], &c->id_nulls[r]);
		else if (!c->feat_nulls[r])
			c->feats[r] = PointerGetDatum(DatumGetArrayTypeP(c->feats[r]));
		c->nulls[r] = c->feat_nulls[r];
		c->bad[r] = false;
		c->pos[r] = -1;
		n_ok += probs || !c->feat_nulls[r];
	}
	return n_ok;
}

/*
 * Copy the batch's features for call c into c->x, a row after the other
 * (c->pos: each row's place); a row predict_row refuses is marked bad.
 * The rows copied.
 */
static int
copy_call_rows(BatchState *bs, BatchCall *c, ServeEntry *e, const char *col, int64 in)
{
	int			n_run = 0;

	for (int r = 0; r < bs->nrows; r++)
	{
		float	   *x = c->x + (Size) n_run * in;

		if (c->kind == KIND_PROBS)
		{
			dl_serve_features_row(e, x, c->feats[r], c->feat_nulls[r], c->ids[r], c->id_nulls[r], col);
			c->nulls[r] = false;
			c->pos[r] = n_run++;
		}
		else if (c->feat_nulls[r])
			continue;
		else if (dl_serve_features_try(e, (ArrayType *) DatumGetPointer(c->feats[r]), x))
			c->pos[r] = n_run++;
		else
			c->bad[r] = true;
	}
	return n_run;
}

/*
 * Predict call c for the nrows rows of the batch (in batch_cxt).  For
 * predict_row and predict_row_prob, a row whose features fail the checks
 * is left out and marked bad: it gives its ERROR when it is returned
 * (batch_next), so that a row a LIMIT never reaches gives none, as one
 * call per row does.  _predict_probs (predict's row mode, which reads
 * every row) gives the error of the first bad row at once.
 */
static void
batch_run_call(BatchState *bs, BatchCall *c)
{
	MemoryContext query_cxt = bs->css.ss.ps.state->es_query_cxt;
	int			n_ok = read_call_rows(bs, c);
	int			n_run;
	ServeEntry *e;
	const char *col;
	int64		in;
	int64		K;
	int64		step;

	if (n_ok == 0)
		return;					/* NULL features give NULL, whatever the model */
	e = call_entry(bs, c, &col);
	in = dl_serve_input_size(e);
	K = dl_serve_output_width(e);
	/* nrows <= 4096 and in, K < 2^28 (the engine bounds shapes): no overflow */
	c->x = grow_buffer(c->x, &c->x_bytes, (Size) n_ok * (Size) in * sizeof(float), query_cxt);
	c->out = grow_buffer(c->out, &c->out_bytes, (Size) n_ok * (Size) K * sizeof(float), query_cxt);
	n_run = copy_call_rows(bs, c, e, col, in);
	/* the rows a forward pass may take; the next batches no more than that */
	step = dl_serve_batch_rows(e, bs->cap);
	bs->cap = (int) Min((int64) bs->cap, step);
	bs->cap = (int) Min((int64) bs->cap, Max((int64) 1, (int64) (BATCH_BUFFER_BYTES / ((in + K) * sizeof(float)))));
	for (int64 s = 0; s < n_run; s += step)
	{
		CHECK_FOR_INTERRUPTS();
		dl_serve_run(e, c->out + s * K, c->x + s * in, Min(step, n_run - s));
	}
	for (int r = 0; r < bs->nrows; r++)
	{
		const float *o;

		if (c->pos[r] < 0)
			continue;
		o = c->out + (Size) c->pos[r] * K;
		if (c->kind == KIND_ROW)
			c->values[r] = dl_serve_class_datum(e, o, &c->nulls[r]);
		else
			c->values[r] = dl_serve_prob_datum(e, o);
	}
}

/* The ERROR of row r's features for call c (marked bad by batch_run_call). */
static void
pg_attribute_noreturn()
raise_bad_row(BatchState *bs, BatchCall *c, int r)
{
	const char *col;
	ServeEntry *e = call_entry(bs, c, &col);

	/* c->x holds at least one row of this model (the same one in this query) */
	dl_serve_features(e, (ArrayType *) DatumGetPointer(c->feats[r]), c->x);
	elog(ERROR, "madlib_dl: the features of a row failed a check once and passed it again");
}

/* Read the next batch of input rows and predict them; false when there are none. */
static bool
batch_fill(BatchState *bs)
{
	PlanState  *child = outerPlanState(bs);
	MemoryContext old;
	Size		bytes = 0;

	MemoryContextReset(bs->batch_cxt);
	bs->nrows = 0;
	bs->next = 0;
	/* the batch's copies of its rows stay under BATCH_BUFFER_BYTES (one row at least) */
	while (!bs->done && bs->nrows < Min(bs->want, bs->cap) && bytes < BATCH_BUFFER_BYTES)
	{
		TupleTableSlot *s = ExecProcNode(child);
		TupleTableSlot *row;

		if (TupIsNull(s))
		{
			bs->done = true;
			break;
		}
		row = bs->rows[bs->nrows++];
		ExecCopySlot(row, s);
		bytes += heap_compute_data_size(row->tts_tupleDescriptor, row->tts_values, row->tts_isnull);
	}
	bs->want = Min(bs->want * 2, BATCH_ROWS_MAX);
	if (bs->nrows == 0)
		return false;
	old = MemoryContextSwitchTo(bs->batch_cxt);
	for (int i = 0; i < bs->ncalls; i++)
		batch_run_call(bs, &bs->calls[i]);
	MemoryContextSwitchTo(old);
	return true;
}

/* The next row: the input's columns, then each call's prediction. */
static TupleTableSlot *
batch_next(ScanState *ss)
{
	BatchState *bs = (BatchState *) ss;
	TupleTableSlot *scan = ss->ss_ScanTupleSlot;
	TupleTableSlot *row;

	if (bs->next >= bs->nrows && !batch_fill(bs))
		return ExecClearTuple(scan);
	row = bs->rows[bs->next];
	for (int i = 0; i < bs->ncalls; i++)
		if (bs->calls[i].bad[bs->next])
			raise_bad_row(bs, &bs->calls[i], bs->next);
	ExecClearTuple(scan);
	memcpy(scan->tts_values, row->tts_values, sizeof(Datum) * bs->nchild);
	memcpy(scan->tts_isnull, row->tts_isnull, sizeof(bool) * bs->nchild);
	for (int i = 0; i < bs->ncalls; i++)
	{
		scan->tts_values[bs->nchild + i] = bs->calls[i].values[bs->next];
		scan->tts_isnull[bs->nchild + i] = bs->calls[i].nulls[bs->next];
	}
	bs->next++;
	return ExecStoreVirtualTuple(scan);
}

static bool
batch_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
batch_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, batch_next, batch_recheck);
}

static void
batch_end(CustomScanState *node)
{
	ExecEndNode(outerPlanState(node));
}

static void
batch_rescan(CustomScanState *node)
{
	BatchState *bs = (BatchState *) node;
	PlanState  *child = outerPlanState(node);

	bs->nrows = 0;
	bs->next = 0;
	bs->done = false;
	bs->want = 1;
	if (child->chgParam == NULL)
		ExecReScan(child);
}

static void
batch_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	BatchState *bs = (BatchState *) node;

	ExplainPropertyInteger("Batch Rows", NULL, bs->cap, es);
}

#endif							/* PG_VERSION_NUM >= 140000 && !GP_VERSION_NUM */

void
dl_serving_batch_init(void)
{
	DefineCustomIntVariable("madlib_dl.serving_batch_rows",
							"Most rows predict_row and predict_row_prob predict in one forward pass when a query "
							"calls them once per row.",
							"1: one forward pass per row (no batching). Fewer rows are run when that many would "
							"be over madlib_dl.max_model_memory. See docs/serving.md.",
							&dl_serving_batch_rows,
							64, 1, BATCH_ROWS_MAX,
							PGC_USERSET, 0,
							NULL, NULL, NULL);
#if PG_VERSION_NUM >= 140000 && !defined(GP_VERSION_NUM)
	batch_plan_methods.CustomName = BATCH_NODE_NAME;
	batch_plan_methods.CreateCustomScanState = batch_create_state;
	RegisterCustomScanMethods(&batch_plan_methods);
	batch_exec_methods.CustomName = BATCH_NODE_NAME;
	batch_exec_methods.BeginCustomScan = batch_begin;
	batch_exec_methods.ExecCustomScan = batch_exec;
	batch_exec_methods.EndCustomScan = batch_end;
	batch_exec_methods.ReScanCustomScan = batch_rescan;
	batch_exec_methods.ExplainCustomScan = batch_explain;
	prev_planner = planner_hook;
	planner_hook = batch_planner;
#endif
}
