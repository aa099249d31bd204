/*-------------------------------------------------------------------------
 *
 * serving.c
 *	  Predict inside any query: predict_row and predict_row_prob, and the
 *	  per-backend cache of compiled models they share.
 *
 *	  _predict_row(model text, features anyarray, mst_key int, prob bool)
 *	    prob false: RETURNS text (the class value, or a regression output
 *	    as text); prob true: RETURNS real[] (the output layer)
 *
 * behind madlib_dl.predict_row and madlib_dl.predict_row_prob
 * (src/sql/serving.sql, docs/serving.md).  model names a table made by
 * fit (one row), by fit_multiple or madlib_keras_automl (mst_key chooses
 * the row), an architecture table of load_keras_model (mst_key is the
 * model_id), or, when no such table exists, a name deployed with
 * madlib_dl.deploy (the registry chooses the table and mst_key).
 *
 * The function is STABLE and PARALLEL SAFE: it reads tables with SPI,
 * read-only, under the query's snapshot, writes nothing and makes no
 * temporary table, so it runs in parallel workers, in views, in triggers
 * and on a hot standby.
 *
 * The cache.  Each backend keeps compiled models (the parsed
 * architecture, the weights, the engine's plan and oneDNN primitives) in
 * a list under TopMemoryContext, most recently used first, keyed by the
 * model table's OID, the row (mst_key / model_id) and a version stamp:
 * the ctid, xmin and cmin of the model row and of its summary row, and
 * the summary table's OID.  Any UPDATE, DELETE + INSERT, TRUNCATE +
 * INSERT or rewrite makes a new row version, so a new stamp.  The stamp
 * is read again whenever the snapshot the call runs under may see other
 * data than the last one did: another transaction of this backend, or a
 * snapshot with another xmin, xmax, command id or completed-transaction
 * count; within one query it is read once.  An older version of the same
 * model is dropped when a new one is loaded, and the least recently used
 * models go when the cache holds more than madlib_dl.model_cache_size
 * (SUSET); the model in use stays (one model larger than the cap is
 * still cached while it is used).  A model is built under the query's
 * memory and moved into the cache only when complete: an ERROR while
 * loading leaves nothing behind.
 *
 * IDENTIFICATION
 *	  src/pg/api/serving.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

#include <math.h>

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/ilist.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/regproc.h"
#include "utils/snapmgr.h"
#include "utils/varlena.h"

#include "madlib_dl/dl_model.h"

#include "pg_limits.h"
#include "pg_model.h"
#include "pg_util.h"
#include "predict.h"
#include "serving.h"

/* madlib_dl.model_cache_size, kB */
static int	dl_model_cache_kb = 256 * 1024;
/* madlib_dl.model_name: the name runs record their versions under */
static char *dl_model_name = NULL;

typedef enum ServeKind
{
	SERVE_FIT,					/* fit's model table: one row + <t>_summary */
	SERVE_MULTI,				/* fit_multiple / automl: mst_key + <t>_summary */
	SERVE_BYOM					/* load_keras_model's table: model_id */
} ServeKind;

/* One cached model (serving.h: ServeEntry). */
struct ServeEntry
{
	dlist_node	node;			/* in serve_lru, most recent first */
	MemoryContext cxt;			/* owns this entry and its model */
	Oid			relid;
	int32		key;			/* mst_key or model_id; 0 for SERVE_FIT */
	char	   *stamp;
	DlPgModel  *m;
	int64		in_size;
	int64		K;
	double		nc;
	int			n_class;		/* 0: no class values */
	char	  **class_values;	/* (n_class); NULL elements allowed */
	float	   *x;				/* (in_size) */
	float	   *out;			/* (K) */
	int64		batch_ok;		/* most rows a forward pass was found to fit (dl_serve_batch_rows) */
	bool		cached;			/* in serve_lru (a _predict_probs model is not) */
	int64		rows_run;		/* most rows a forward pass has run (dl_serve_run) */
	float	   *x2;				/* (2, in_size) a row run twice (dl_serve_run) */
	float	   *out2;			/* (2, K) */
	Size		bytes;
};

static dlist_head serve_lru = DLIST_STATIC_INIT(serve_lru);
static MemoryContext serve_cxt = NULL;
static Size serve_bytes = 0;
static uint64 serve_generation = 1; /* bumped when an entry is freed */

/* What the snapshot of a call looks like: a change means read the stamp again. */
typedef struct SnapKey
{
	LocalTransactionId lxid;
	TransactionId xmin;
	TransactionId xmax;
	CommandId	curcid;
	uint32		xcnt;
	int32		subxcnt;
	uint64		completions;
} SnapKey;

/* The state of one call site (fn_extra): the model it last used. */
typedef struct ServeCall
{
	bool		valid;
	SnapKey		snap;
	char	   *model;			/* as given */
	bool		key_null;
	int32		key;
	/* what it resolved to */
	Oid			relid;
	int32		rkey;
	char	   *stamp;
	ServeEntry *e;
	uint64		generation;
} ServeCall;

void		dl_serving_init(void);

void
dl_serving_init(void)
{
	DefineCustomIntVariable("madlib_dl.model_cache_size",
							"Memory each backend may keep compiled models in for predict_row.",
							"predict_row and predict_row_prob keep the models they use, compiled, per "
							"backend; the least recently used go when the cache holds more. 0 keeps only "
							"the model in use. Only superusers can change it.",
							&dl_model_cache_kb,
							256 * 1024, 0, INT_MAX,
							PGC_SUSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
	DefineCustomStringVariable("madlib_dl.model_name",
							   "Name that fit, fit_multiple and madlib_keras_automl record their model versions under.",
							   "Empty: schema.table of the model table. madlib_dl.deploy(name, ...) chooses among the "
							   "versions of a name (docs/serving.md).",
							   &dl_model_name,
							   "",
							   PGC_USERSET, 0,
							   NULL, NULL, NULL);
}

static bool
snap_key(SnapKey *k)
{
	Snapshot	s;

	memset(k, 0, sizeof(*k));
	if (!ActiveSnapshotSet())
		return false;
	s = GetActiveSnapshot();
	k->lxid = MyProc->lxid;
	k->xmin = s->xmin;
	k->xmax = s->xmax;
	k->curcid = s->curcid;
	k->xcnt = s->xcnt;
	k->subxcnt = s->subxcnt;
#if PG_VERSION_NUM >= 140000
	k->completions = s->snapXactCompletionCount;
#endif
	return true;
}

static void
entry_free(ServeEntry *e)
{
	dlist_delete(&e->node);
	serve_bytes -= Min(serve_bytes, e->bytes);
	serve_generation++;
	MemoryContextDelete(e->cxt);
}

static ServeEntry *
cache_find(Oid relid, int32 key, const char *stamp)
{
	dlist_iter	it;

	dlist_foreach(it, &serve_lru)
	{
		ServeEntry *e = dlist_container(ServeEntry, node, it.cur);

		if (e->relid == relid && e->key == key && strcmp(e->stamp, stamp) == 0)
		{
			dlist_move_head(&serve_lru, &e->node);
			return e;
		}
	}
	return NULL;
}

/* Add e, dropping older versions of its model, then the least recently used over the cap. */
static void
cache_add(ServeEntry *e)
{
	dlist_mutable_iter it;
	Size		cap = (Size) dl_model_cache_kb * 1024;

	if (serve_cxt == NULL)
		serve_cxt = AllocSetContextCreate(TopMemoryContext, "madlib_dl model cache",
										  ALLOCSET_SMALL_SIZES);
	dlist_foreach_modify(it, &serve_lru)
	{
		ServeEntry *o = dlist_container(ServeEntry, node, it.cur);

		if (o->relid == e->relid && o->key == e->key)
			entry_free(o);
	}
	MemoryContextSetParent(e->cxt, serve_cxt);
	e->bytes = MemoryContextMemAllocated(e->cxt, true);
	e->cached = true;
	dlist_push_head(&serve_lru, &e->node);
	serve_bytes += e->bytes;
	while (serve_bytes > cap && !dlist_is_empty(&serve_lru))
	{
		ServeEntry *last = dlist_container(ServeEntry, node, dlist_tail_node(&serve_lru));

		if (last == e)
			break;
		entry_free(last);
	}
}

/* The text of column 1 of SPI row i, or NULL. */
static char *
spi_text(int row, int col)
{
	return SPI_getvalue(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col);
}

/*
 * The prepared plans of the stamp and load queries, by query text (which
 * names the table as it is called now: a renamed table gets a new plan),
 * kept across queries (SPI_keepplan; the plan cache revalidates them
 * after DDL).  At most SERVE_PLANS, the oldest replaced first.
 */
#define SERVE_PLANS 32
typedef struct ServePlan
{
	char	   *sql;
	bool		with_key;
	SPIPlanPtr	plan;
} ServePlan;
static ServePlan serve_plans[SERVE_PLANS];
static int	serve_plans_next = 0;

static SPIPlanPtr
serve_plan(const char *sql, bool with_key)
{
	Oid			argtypes[1] = {INT4OID};
	SPIPlanPtr	plan;
	ServePlan  *slot;

	for (int i = 0; i < SERVE_PLANS; i++)
		if (serve_plans[i].sql != NULL && serve_plans[i].with_key == with_key &&
			strcmp(serve_plans[i].sql, sql) == 0)
			return serve_plans[i].plan;
	plan = SPI_prepare(sql, with_key ? 1 : 0, argtypes);
	if (plan == NULL)
		elog(ERROR, "madlib_dl: predict_row could not prepare \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "madlib_dl: SPI_keepplan failed");
	slot = &serve_plans[serve_plans_next];
	serve_plans_next = (serve_plans_next + 1) % SERVE_PLANS;
	if (slot->sql != NULL)
	{
		SPI_freeplan(slot->plan);
		pfree(slot->sql);
		slot->sql = NULL;
	}
	slot->plan = plan;
	slot->with_key = with_key;
	slot->sql = MemoryContextStrdup(TopMemoryContext, sql);
	return plan;
}

/* Run a read-only query with one int4 parameter (or none); ERROR when SPI fails. */
static void
spi_run(const char *sql, bool with_key, int32 key, long limit)
{
	Datum		args[1] = {Int32GetDatum(key)};
	int			rc;

	rc = SPI_execute_plan(serve_plan(sql, with_key), with_key ? args : NULL, NULL, true, limit);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "madlib_dl: predict_row query failed: %s", SPI_result_code_string(rc));
}

/* Append the row versions (ctid:xmin:cmin) of the rows query gives to buf. */
static void
stamp_rows(StringInfo buf, const char *tbl_sql, const char *where, bool with_key, int32 key)
{
	char	   *sql = psprintf("SELECT ctid::text || ':' || xmin::text || ':' || cmin::text FROM %s%s",
							   tbl_sql, where);

	spi_run(sql, with_key, key, 3);
	appendStringInfo(buf, UINT64_FORMAT "[", SPI_processed);
	for (uint64 i = 0; i < SPI_processed; i++)
		appendStringInfo(buf, "%s;", spi_text((int) i, 1));
	appendStringInfoChar(buf, ']');
}

/* What a call asks for: a model, an mst_key or model_id, at a snapshot. */
typedef struct ServeAsk
{
	const char *model;			/* as given */
	bool		key_null;
	int32		key;
	SnapKey		snap;
	bool		have_snap;
} ServeAsk;

/* What a model name resolves to (serve_resolve). */
typedef struct ServeTarget
{
	ServeKind	kind;
	Oid			relid;
	bool		key_null;		/* no mst_key or model_id */
	int32		key;
	int32		rkey;			/* key, 0 for none */
	char	   *nsp;
	char	   *relname;
	char	   *tbl_sql;		/* the table, quoted for SQL */
	char	   *label;			/* nsp.relname, for messages */
	char	   *stamp;			/* the version stamp of the rows read */
} ServeTarget;

/* t's table and key from the deployment named model (inside SPI). */
static void
resolve_deployed(const char *model, ServeTarget *t)
{
	bool		isnull;

	if (!dl_pg_spi_select_text("SELECT v.model_relid, v.mst_key, v.model_table"
							   "  FROM madlib_dl.model_deployments d"
							   "  JOIN madlib_dl.model_versions v"
							   "    ON v.version_id OPERATOR(pg_catalog.=) d.version_id"
							   " WHERE d.name OPERATOR(pg_catalog.=) $1",
							   model, 1))
		elog(ERROR, "madlib_dl: predict_row could not read the deployments");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("model \"%s\" is neither a table nor a deployed model name", model),
				 errhint("Give a model table made by fit, fit_multiple or madlib_keras_automl, an "
						 "architecture table of load_keras_model with a model_id, or a name "
						 "deployed with madlib_dl.deploy (SELECT * FROM madlib_dl.model_deployments).")));
	if (!t->key_null)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("mst_key %d must not be given with the deployed name \"%s\"", t->key, model),
				 errhint("The deployed version chooses the model; call predict_row(name, features).")));
	t->relid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	t->key = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &t->key_null));
	if (get_rel_relkind(t->relid) == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the version of \"%s\" deployed names model table %s, which was dropped",
						model, spi_text(0, 3)),
				 errhint("Deploy another version: SELECT madlib_dl.deploy('%s', 'latest').", model)));
}

/* t's names and kind, and ERROR unless the key given fits the kind. */
static void
resolve_kind(const char *model, ServeTarget *t)
{
	t->nsp = get_namespace_name(get_rel_namespace(t->relid));
	t->relname = get_rel_name(t->relid);
	if (t->nsp == NULL || t->relname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("model table \"%s\" does not exist", model),
				 errhint("Check the table name and the search_path, or give schema.table.")));
	t->tbl_sql = quote_qualified_identifier(t->nsp, t->relname);
	t->label = psprintf("%s.%s", t->nsp, t->relname);
	if (get_attnum(t->relid, "mst_key") != InvalidAttrNumber)
		t->kind = SERVE_MULTI;
	else if (get_attnum(t->relid, "model_id") != InvalidAttrNumber)
		t->kind = SERVE_BYOM;
	else
		t->kind = SERVE_FIT;
	if (t->kind == SERVE_FIT && !t->key_null)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("mst_key must not be given for a single-model table"),
				 errhint("\"%s\" holds one model (made by fit); call predict_row without mst_key.", t->label)));
	if (t->kind != SERVE_FIT && t->key_null)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is required for \"%s\"", t->kind == SERVE_MULTI ? "mst_key" : "a model_id", t->label),
				 errhint(t->kind == SERVE_MULTI ?
						 "The table holds several models (fit_multiple, automl): give the mst_key of one, "
						 "predict_row(model, features, mst_key)." :
						 "An architecture table holds several models: give the model_id as the third "
						 "argument, predict_row(table, features, model_id).")));
}

/* ERROR unless t's table has the columns of its kind. */
static void
resolve_columns(const ServeTarget *t)
{
	DlPgColumn	fit_cols[3] = {{"model_weights", BYTEAOID}, {"model_arch", JSONOID}, {"mst_key", INT4OID}};
	DlPgColumn	byom_cols[3] = {{"model_weights", BYTEAOID}, {"model_arch", JSONOID}, {"model_id", INT4OID}};

	if (t->kind == SERVE_BYOM)
		dl_pg_require_columns(t->relid, byom_cols, 3, "an architecture table of load_keras_model");
	else
		dl_pg_require_columns(t->relid, fit_cols, t->kind == SERVE_MULTI ? 3 : 2,
							  "a model table made by fit, fit_multiple or madlib_keras_automl");
}

/* Append the stamp of the summary table next to t's table, when there is one. */
static void
stamp_summary(StringInfo stamp, const ServeTarget *t)
{
	char	   *sname = psprintf("%s_summary", t->relname);
	Oid			srel = get_relname_relid(sname, get_rel_namespace(t->relid));
	char		skind;

	/* only system columns are read here (after the trust check); _ep_model reads the rest */
	if (!OidIsValid(srel))
		return;
	skind = get_rel_relkind(srel);
	if (skind != RELKIND_RELATION && skind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s.%s is not a table", t->nsp, sname),
				 errhint("Give a model table with the summary table fit wrote next to it.")));
	dl_pg_require_trusted_table(srel, "the summary table fit wrote next to the model table");
	appendStringInfo(stamp, "|%u:", srel);
	stamp_rows(stamp, quote_qualified_identifier(t->nsp, sname), "", false, 0);
}

/* The version stamp of t's row (and of its summary table). */
static char *
resolve_stamp(const ServeTarget *t)
{
	StringInfoData stamp;

	initStringInfo(&stamp);
	appendStringInfo(&stamp, "%u:", t->relid);
	if (t->kind == SERVE_FIT)
		stamp_rows(&stamp, t->tbl_sql, "", false, 0);
	else
		stamp_rows(&stamp, t->tbl_sql, t->kind == SERVE_MULTI ? " WHERE mst_key OPERATOR(pg_catalog.=) $1" :
				   " WHERE model_id OPERATOR(pg_catalog.=) $1", true, t->key);
	if (t->kind != SERVE_BYOM)
		stamp_summary(&stamp, t);
	return stamp.data;
}

/*
 * Resolve the model (and the mst_key) ask gives to a table, a row and its
 * version stamp in *t, with every column type checked before a row is
 * read.  Inside SPI.  t's names and stamp are palloc'd in cxt.
 */
static void
serve_resolve(const ServeAsk *ask, MemoryContext cxt, ServeTarget *t)
{
	List	   *names = stringToQualifiedNameList(ask->model);
	RangeVar   *rv = makeRangeVarFromNameList(names);

	memset(t, 0, sizeof(*t));
	t->key_null = ask->key_null;
	t->key = ask->key;
	t->relid = RangeVarGetRelid(rv, NoLock, true);
	if (!OidIsValid(t->relid))
		resolve_deployed(ask->model, t);	/* a deployed name */
	resolve_kind(ask->model, t);
	resolve_columns(t);
	t->stamp = MemoryContextStrdup(cxt, resolve_stamp(t));
	t->rkey = t->key_null ? 0 : t->key;
	t->nsp = MemoryContextStrdup(cxt, t->nsp);
	t->relname = MemoryContextStrdup(cxt, t->relname);
}

/* Read the architecture table row of t (SPI_tuptable: arch, weights). */
static void
load_byom_row(const ServeTarget *t)
{
	char	   *sql = psprintf("SELECT model_arch::text, model_weights FROM %s"
							   " WHERE model_id OPERATOR(pg_catalog.=) $1",
							   quote_qualified_identifier(t->nsp, t->relname));

	spi_run(sql, true, t->rkey, 2);
	if (SPI_processed != 1)
		ereport(ERROR,
				(errcode(SPI_processed == 0 ? ERRCODE_NO_DATA_FOUND : ERRCODE_CARDINALITY_VIOLATION),
				 errmsg("model_id %d is in architecture table \"%s.%s\" %s", t->rkey, t->nsp, t->relname,
						SPI_processed == 0 ? "no time" : "more than once"),
				 errhint("SELECT model_id FROM %s lists the models it holds.",
						 quote_qualified_identifier(t->nsp, t->relname))));
}

/* Read the model of a fit or fit_multiple table t (SPI_tuptable: arch, weights, nc, classes). */
static void
load_model_row(const ServeTarget *t)
{
	Oid			argtypes[2] = {TEXTARRAYOID, INT4OID};
	Datum		parts[2] = {CStringGetTextDatum(t->nsp), CStringGetTextDatum(t->relname)};
	Datum		args[2];
	char		nulls[2] = {' ', t->kind == SERVE_MULTI ? ' ' : 'n'};

	args[0] = PointerGetDatum(construct_array(parts, 2, TEXTOID, -1, false, TYPALIGN_INT));
	args[1] = Int32GetDatum(t->rkey);
	if (SPI_execute_with_args("SELECT m.model_arch::text, m.model_weights, m.normalizing_const,"
							  "       m.class_values"
							  "  FROM madlib_dl._ep_model($1, $2) m",
							  2, argtypes, args, nulls, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "madlib_dl: predict_row could not read the model");
}

/* The architecture (*arch) and weights (*weights) of the row read, copied into the current context. */
static void
read_arch_weights(const ServeTarget *t, MemoryContext cxt, char **arch, bytea **weights)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	MemoryContext old;

	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model \"%s.%s\" has no model_arch", t->nsp, t->relname),
				 errhint("Load or train the model again.")));
	old = MemoryContextSwitchTo(cxt);
	*arch = TextDatumGetCString(d);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model \"%s.%s\" has no model_weights", t->nsp, t->relname),
				 errhint("Load weights with load_keras_model, or train the model with fit.")));
	*weights = DatumGetByteaPCopy(d);
	MemoryContextSwitchTo(old);
}

/* e's normalizing_const and class values from the row read (fit tables only), checked. */
static void
read_norm_classes(ServeEntry *e, const ServeTarget *t)
{
	bool		isnull;
	Datum		d;

	if (t->kind != SERVE_BYOM)
	{
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull);
		e->nc = isnull ? 1.0 : DatumGetFloat8(d);
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4, &isnull);
		if (!isnull)
		{
			Datum	   *v;
			bool	   *vn;
			int			n;
			MemoryContext old = MemoryContextSwitchTo(e->cxt);

			deconstruct_array(DatumGetArrayTypeP(d), TEXTOID, -1, false, TYPALIGN_INT, &v, &vn, &n);
			e->n_class = n;
			e->class_values = palloc0(sizeof(char *) * Max(n, 1));
			for (int i = 0; i < n; i++)
				e->class_values[i] = vn[i] ? NULL : TextDatumGetCString(v[i]);
			MemoryContextSwitchTo(old);
		}
	}
	if (!(e->nc > 0.0) || !isfinite(e->nc))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("model \"%s.%s\" has normalizing_const %g", t->nsp, t->relname, e->nc),
				 errhint("Train the model again: normalizing_const must be a positive number.")));
}

/* Parse, check and build e's model from arch and weights; its input and output buffers. */
static void
entry_build(ServeEntry *e, const char *label, const char *arch, size_t arch_len, bytea *weights)
{
	MemoryContext old = MemoryContextSwitchTo(e->cxt);
	const DlModelSpec *spec;

	e->m = dl_pg_model_parse(arch, arch_len, NULL, NULL, e->cxt);
	spec = e->m->spec;
	if (spec->n_inputs != 1 || spec->n_outputs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s has %d inputs and %d outputs; predict_row takes models of one of each",
						label, spec->n_inputs, spec->n_outputs),
				 errhint("Predict it with madlib_dl.predict, which takes one column per input.")));
	e->in_size = dl_pg_model_input_size(e->m);
	e->K = dl_pg_model_output_width(e->m);
	if (e->in_size < 1 || e->K < 1 || e->K > (int64) (MaxAllocSize / sizeof(float)))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s has input size " INT64_FORMAT " and output width " INT64_FORMAT,
						label, e->in_size, e->K),
				 errhint("Predict with a model that reads its input and has outputs.")));
	/* the memory check (madlib_dl.max_model_memory) comes before the build */
	dl_pg_model_create(e->m, DL_PG_MODEL_INFER, 1);
	dl_pg_model_set_weights(e->m, weights);
	e->x = MemoryContextAllocHuge(e->cxt, (Size) e->in_size * sizeof(float));
	e->out = MemoryContextAllocHuge(e->cxt, (Size) e->K * sizeof(float));
	MemoryContextSwitchTo(old);
}

/* Load and compile the model of a resolved table and row (inside SPI). */
static ServeEntry *
serve_load(const ServeTarget *t, MemoryContext parent)
{
	MemoryContext cxt = AllocSetContextCreate(parent, "madlib_dl cached model", ALLOCSET_DEFAULT_SIZES);
	ServeEntry *e = MemoryContextAllocZero(cxt, sizeof(ServeEntry));
	char	   *arch;
	bytea	   *weights;

	e->cxt = cxt;
	e->relid = t->relid;
	e->key = t->rkey;
	e->stamp = MemoryContextStrdup(cxt, t->stamp);
	e->nc = 1.0;
	if (t->kind == SERVE_BYOM)
		load_byom_row(t);
	else
		load_model_row(t);
	if (SPI_processed != 1)
		elog(ERROR, "madlib_dl: predict_row read no model");
	read_arch_weights(t, cxt, &arch, &weights);
	read_norm_classes(e, t);
	entry_build(e, psprintf("model \"%s.%s\"", t->nsp, t->relname), arch, strlen(arch), weights);
	pfree(weights);
	return e;
}

/* The call site's state (fn_extra), created on the first call. */
static ServeCall *
call_state(FmgrInfo *flinfo)
{
	ServeCall  *sc = (ServeCall *) flinfo->fn_extra;

	if (sc == NULL)
	{
		sc = MemoryContextAllocZero(flinfo->fn_mcxt, sizeof(ServeCall));
		flinfo->fn_extra = sc;
	}
	return sc;
}

/* The model sc used last, when ask is what it asked then and the model is still cached; else NULL. */
static ServeEntry *
call_reuse(ServeCall *sc, const ServeAsk *ask)
{
	ServeEntry *e;

	if (!(sc->valid && ask->have_snap && memcmp(&sc->snap, &ask->snap, sizeof(ask->snap)) == 0 &&
		  sc->key_null == ask->key_null && (ask->key_null || sc->key == ask->key) &&
		  strcmp(sc->model, ask->model) == 0))
		return NULL;
	if (sc->generation == serve_generation)
		return sc->e;
	e = cache_find(sc->relid, sc->rkey, sc->stamp);
	if (e != NULL)
	{
		sc->e = e;
		sc->generation = serve_generation;
	}
	return e;
}

/* Resolve ask (into *t) and find its model in the cache or load it, inside SPI and a snapshot. */
static ServeEntry *
serve_lookup(FmgrInfo *flinfo, const ServeAsk *ask, ServeTarget *t)
{
	ServeEntry *e;
	bool		pushed = false;

	if (!ActiveSnapshotSet())
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		pushed = true;
	}
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "madlib_dl: SPI_connect failed");
	serve_resolve(ask, flinfo->fn_mcxt, t);
	e = cache_find(t->relid, t->rkey, t->stamp);
	if (e == NULL)
	{
		e = serve_load(t, flinfo->fn_mcxt);
		cache_add(e);
	}
	SPI_finish();
	if (pushed)
		PopActiveSnapshot();
	return e;
}

/* Remember in sc that ask resolved to t and the model e. */
static void
call_remember(FmgrInfo *flinfo, ServeCall *sc, const ServeAsk *ask, const ServeTarget *t,
			  ServeEntry *e)
{
	if (sc->model != NULL)
		pfree(sc->model);
	if (sc->stamp != NULL)
		pfree(sc->stamp);
	sc->model = MemoryContextStrdup(flinfo->fn_mcxt, ask->model);
	sc->key_null = ask->key_null;
	sc->key = ask->key;
	sc->relid = t->relid;
	sc->rkey = t->rkey;
	sc->stamp = t->stamp;
	sc->e = e;
	sc->generation = serve_generation;
	sc->snap = ask->snap;
	sc->valid = ask->have_snap;
}

/*
 * The model this call uses: from the call site's state (flinfo's
 * fn_extra), the cache, or loaded.
 */
static ServeEntry *
serve_entry(FmgrInfo *flinfo, const char *model, bool key_null, int32 key)
{
	ServeCall  *sc = call_state(flinfo);
	ServeAsk	ask;
	ServeTarget t;
	ServeEntry *e;

	ask.model = model;
	ask.key_null = key_null;
	ask.key = key;
	ask.have_snap = snap_key(&ask.snap);
	e = call_reuse(sc, &ask);
	if (e != NULL)
		return e;
	sc->valid = false;
	e = serve_lookup(flinfo, &ask, &t);
	call_remember(flinfo, sc, &ask, &t, e);
	return e;
}

/* A non-finite feature, or one out of float32 range after division. */
static void pg_attribute_noreturn()
bad_value(double v, int64 j)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_EXCEPTION),
			 errmsg("features has %s at position " INT64_FORMAT,
					isnan(v) ? "NaN" : isinf(v) ? "an infinite value" : "a value out of float32 range", j + 1),
			 errhint("Every feature must be a finite number.")));
}

/*
 * An array's data, after its null bitmap when it has one (the caller has
 * checked that no element is NULL).  ARR_DATA_PTR itself gives
 * -Wsign-compare warnings.
 */
static inline const char *
array_values(ArrayType *a)
{
	size_t		off = ARR_HASNULL(a) ? (size_t) a->dataoffset
		: (size_t) ARR_OVERHEAD_NONULLS(ARR_NDIM(a));

	return (const char *) a + off;
}

/*
 * ERROR 22000 unless arr has the model's input shape (as predict
 * requires); the hint says whether only the layout is wrong.  With raise
 * false: false instead of the ERROR.
 */
static bool
serve_check_shape(const ServeEntry *e, ArrayType *arr, int64 n, bool raise)
{
	const DlShape *in = &e->m->spec->input_shapes[0];
	StringInfoData have;
	StringInfoData want;

	if (!dl_pg_array_shape_differs(arr, in->dims, in->rank, &have, &want))
		return true;
	if (raise)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("features has shape %s but the model's input shape is %s", have.data, want.data),
				 n == e->in_size ?
				 errhint("The array has the right number of values in another layout: give an array of "
						 "exactly the model's input shape, in row-major order.") :
				 errhint("Give an array of exactly the model's input shape %s (" INT64_FORMAT
						 " values), in row-major order.", want.data, e->in_size)));
	return false;
}

/* ERROR 22004 naming the first NULL element of arr (n elements); raise false: false instead. */
static bool
serve_check_no_nulls(ArrayType *arr, int64 n, bool raise)
{
	int64		j = dl_pg_array_first_null(arr, n);

	if (j >= 0 && raise)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("features has a NULL at position " INT64_FORMAT, j + 1),
				 errhint("Every feature must be a number.")));
	return j < 0;
}

/*
 * serve_copy_float4 and serve_copy_float8: the n values v of a real[] or
 * a double precision[] into x, divided by nc, in one pass the compiler
 * vectorizes; the checks after it (raise false: false instead of the
 * ERROR).  x (n)  v (n)
 */
#define SERVE_COPY_FLOATS(name, type) \
static bool \
name(float *x, const type *v, int64 n, double nc, bool raise) \
{ \
	int			ok = 1; \
\
	for (int64 j = 0; j < n; j++) \
	{ \
		float		f = (float) ((double) v[j] / nc); \
\
		x[j] = f; \
		ok &= isfinite(f) && isfinite(v[j]); \
	} \
	if (!ok && raise) \
		for (int64 j = 0; j < n; j++) \
			if (!isfinite(v[j]) || !isfinite(x[j])) \
				bad_value(v[j], j); \
	return ok; \
}
SERVE_COPY_FLOATS(serve_copy_float4, float4)
SERVE_COPY_FLOATS(serve_copy_float8, float8)

/*
 * The n values of arr, a smallint[], integer[], bigint[] or numeric[]
 * (elem), into x, divided by nc (raise false: false for a value the
 * ERROR would name).  x (n)
 */
static bool
serve_copy_integral(float *x, ArrayType *arr, Oid elem, int64 n, double nc, bool raise)
{
	bool		ok = true;
	Datum	   *v;
	int			cnt;
	int16		typlen;
	bool		typbyval;
	char		typalign;

	get_typlenbyvalalign(elem, &typlen, &typbyval, &typalign);
	deconstruct_array(arr, elem, typlen, typbyval, typalign, &v, NULL, &cnt);
	for (int64 j = 0; j < n; j++)
	{
		double		f;
		double		t;

		if (elem == INT2OID)
			f = DatumGetInt16(v[j]);
		else if (elem == INT4OID)
			f = DatumGetInt32(v[j]);
		else if (elem == INT8OID)
			f = (double) DatumGetInt64(v[j]);
		else
			f = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, v[j]));
		t = f / nc;
		if (!isfinite(f) || !isfinite((float) t))
		{
			if (raise)
				bad_value(f, j);
			ok = false;
		}
		x[j] = (float) t;
	}
	pfree(v);
	return ok;
}

/*
 * Copy the features arr into x (in_size floats), divided by the model's
 * normalizing_const.  The array must have the model's input shape (as
 * predict requires) and a numeric element type; no NULL elements; an
 * Embedding input's values must be its token ids.  raise false: false
 * where the checks would give an ERROR (which the call with raise true
 * then gives).
 */
static bool
serve_features(const ServeEntry *e, ArrayType *arr, float *x, bool raise)
{
	Oid			elem = ARR_ELEMTYPE(arr);
	int64		n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	bool		ok;
	DlError		err;
	int64_t		bad_row;

	if (!serve_check_shape(e, arr, n, raise) || !serve_check_no_nulls(arr, n, raise))
		return false;
	if (elem == FLOAT4OID)
		ok = serve_copy_float4(x, (const float4 *) array_values(arr), n, e->nc, raise);
	else if (elem == FLOAT8OID)
		ok = serve_copy_float8(x, (const float8 *) array_values(arr), n, e->nc, raise);
	else if (elem == INT2OID || elem == INT4OID || elem == INT8OID || elem == NUMERICOID)
		ok = serve_copy_integral(x, arr, elem, n, e->nc, raise);
	else if (!raise)
		return false;
	else
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("features is a %s, not an array of numbers", format_type_be(get_array_type(elem))),
				 errhint("Give a real[], double precision[], integer[], bigint[], smallint[] or numeric[].")));
	if (!ok)
		return false;
	dl_error_clear(&err);
	if (dl_model_check_ids(e->m->spec, 0, x, 1, &bad_row, &err) != DL_OK)
	{
		if (raise)
			dl_pg_report(&err);
		return false;
	}
	return true;
}

void
dl_serve_features(const ServeEntry *e, ArrayType *arr, float *x)
{
	(void) serve_features(e, arr, x, true);
}

bool
dl_serve_features_try(const ServeEntry *e, ArrayType *arr, float *x)
{
	return serve_features(e, arr, x, false);
}

/* The values per input row and per output row of e's model. */
int64
dl_serve_input_size(const ServeEntry *e)
{
	return e->in_size;
}

int64
dl_serve_output_width(const ServeEntry *e)
{
	return e->K;
}

/*
 * The most rows, up to want (>= 1), that one forward pass of e's model
 * may take within madlib_dl.max_model_memory (at least 1: a model that
 * does not fit one row was refused when it was built).  Remembered in e.
 */
int64
dl_serve_batch_rows(ServeEntry *e, int64 want)
{
	int64		b = Max(want, 1);

	if (b <= e->batch_ok)
		return b;
	while (b > Max(e->batch_ok, 1))
	{
		DlMemoryEstimate est;

		dl_pg_model_estimate(e->m, DL_PG_MODEL_INFER, b, &est);
		if (est.total <= dl_limits_bytes())
			break;
		b /= 2;
	}
	e->batch_ok = Max(e->batch_ok, b);
	return Max(b, 1);
}

/*
 * Outputs for n rows of features, x (n, in_size) into out (n, K), in one
 * forward pass; n at most dl_serve_batch_rows(e, n).  The rows come from
 * dl_serve_features (token ids checked).
 */
void
dl_serve_run(ServeEntry *e, float *out, const float *x, int64 n)
{
	DlError		err;

	dl_error_clear(&err);
	/*
	 * One row runs as two (itself twice): oneDNN's one-row product takes
	 * another kernel (gemv) whose sums differ in the last bits from its
	 * products of two or more rows, in which a row's sums do not depend on
	 * the other rows (bench/predict_rows.c), so a row's numbers do not
	 * depend on its batch.
	 */
	if (n == 1 && dl_serve_batch_rows(e, 2) >= 2)
	{
		if (e->x2 == NULL)
		{
			e->x2 = MemoryContextAllocHuge(e->cxt, (Size) 2 * (Size) e->in_size * sizeof(float));
			e->out2 = MemoryContextAllocHuge(e->cxt, (Size) 2 * (Size) e->K * sizeof(float));
		}
		memcpy(e->x2, x, (Size) e->in_size * sizeof(float));
		memcpy(e->x2 + e->in_size, x, (Size) e->in_size * sizeof(float));
		dl_pg_check(dl_model_predict(e->m->model, e->out2, e->x2, 2, 2, &err), &err);
		memcpy(out, e->out2, (Size) e->K * sizeof(float));
	}
	else
		dl_pg_check(dl_model_predict(e->m->model, out, x, n, n, &err), &err);
	if (e->cached && Max(n, 2) > e->rows_run)
	{
		/*
		 * the buffers the model grew for a larger batch than before count
		 * in the cache's size from now on (evicting waits for the next
		 * model loaded)
		 */
		Size		now = MemoryContextMemAllocated(e->cxt, true);

		serve_bytes += now - Min(now, e->bytes);
		e->bytes = Max(now, e->bytes);
	}
	e->rows_run = Max(e->rows_run, Max(n, 2));
}

/*
 * predict_row's value for one row's outputs out (K): the class value of
 * the highest output (ties: the first; NaN counts highest, as predict
 * ranks), its index 0..K-1 as text when the model has no class values,
 * or the output as text for a model of one output and no class values
 * (regression).  *isnull when the class value is NULL or missing.
 */
Datum
dl_serve_class_datum(const ServeEntry *e, const float *out, bool *isnull)
{
	int64		best = 0;

	*isnull = false;
	if (e->n_class == 0 && e->K == 1)
		return DirectFunctionCall1(textin, DirectFunctionCall1(float4out, Float4GetDatum(out[0])));
	for (int64 k = 1; k < e->K; k++)
	{
		bool		nb = isnan(out[best]);
		bool		nk = isnan(out[k]);

		if (!nb && (nk || out[k] > out[best]))
			best = k;
	}
	if (e->n_class > 0)
	{
		if (best >= e->n_class || e->class_values[best] == NULL)
		{
			*isnull = true;
			return (Datum) 0;
		}
		return PointerGetDatum(cstring_to_text(e->class_values[best]));
	}
	return PointerGetDatum(cstring_to_text(psprintf(INT64_FORMAT, best)));
}

/* predict_row_prob's value for one row's outputs out (K): a real[]. */
Datum
dl_serve_prob_datum(const ServeEntry *e, const float *out)
{
	Datum	   *v = palloc(sizeof(Datum) * e->K);
	ArrayType  *a;

	for (int64 k = 0; k < e->K; k++)
		v[k] = Float4GetDatum(out[k]);
	a = construct_array(v, (int) e->K, FLOAT4OID, sizeof(float4), true, TYPALIGN_INT);
	pfree(v);
	return PointerGetDatum(a);
}

/*
 * The model a call names: model_table (ERROR when NULL) and its mst_key
 * or model_id (NULL: none), through the call site's state.
 */
ServeEntry *
dl_serve_entry_for(FmgrInfo *flinfo, Datum model_d, bool model_null, Datum key_d, bool key_null)
{
	char	   *model;
	ServeEntry *e;

	if (model_null)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model_table must not be NULL"),
				 errhint("Give a model table, or a name deployed with madlib_dl.deploy.")));
	model = text_to_cstring(DatumGetTextPP(model_d));
	e = serve_entry(flinfo, model, key_null, key_null ? 0 : DatumGetInt32(key_d));
	pfree(model);
	return e;
}

/* One forward pass for the features of this call; e->out holds the outputs. */
static ServeEntry *
serve_predict(FunctionCallInfo fcinfo)
{
	ServeEntry *e;

	CHECK_FOR_INTERRUPTS();
	e = dl_serve_entry_for(fcinfo->flinfo, PG_GETARG_DATUM(0), PG_ARGISNULL(0),
						   PG_ARGISNULL(2) ? (Datum) 0 : PG_GETARG_DATUM(2), PG_ARGISNULL(2));
	dl_serve_features(e, PG_GETARG_ARRAYTYPE_P(1), e->x);
	dl_serve_run(e, e->out, e->x, 1);
	return e;
}

PG_FUNCTION_INFO_V1(madlib_dl__predict_row);

/*
 * _predict_row(model text, features anyarray, mst_key int) RETURNS text:
 * dl_serve_class_datum of the row's outputs.  NULL features: NULL.  In a
 * query's select list or an aggregate's argument, serving_batch.c
 * batches the calls instead.
 */
Datum
madlib_dl__predict_row(PG_FUNCTION_ARGS)
{
	ServeEntry *e;
	Datum		d;
	bool		isnull;

	if (PG_ARGISNULL(1))
		PG_RETURN_NULL();
	e = serve_predict(fcinfo);
	d = dl_serve_class_datum(e, e->out, &isnull);
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(d);
}

PG_FUNCTION_INFO_V1(madlib_dl__predict_row_prob);

/* _predict_row_prob(model text, features anyarray, mst_key int) RETURNS real[]: the output layer. */
Datum
madlib_dl__predict_row_prob(PG_FUNCTION_ARGS)
{
	ServeEntry *e;

	if (PG_ARGISNULL(1))
		PG_RETURN_NULL();
	e = serve_predict(fcinfo);
	PG_RETURN_DATUM(dl_serve_prob_datum(e, e->out));
}

/* ---------------------------------------------------------------------
 * _predict_probs: predict's row mode, the model given as values
 * ---------------------------------------------------------------------
 */

/* The model of one call site of _predict_probs (fn_extra), built from its first row's arguments. */
typedef struct ServeValues
{
	Size		sizes[2];		/* of model_arch and model_weights */
	double		nc;
	char	   *col;			/* feature_col, for messages */
	ServeEntry *e;				/* not in the cache: freed with the query */
} ServeValues;

ServeEntry *
dl_serve_entry_values(FmgrInfo *flinfo, const Datum *args, const bool *nulls, const char **col)
{
	ServeValues *sv = (ServeValues *) flinfo->fn_extra;
	Size		sizes[2];
	double		nc;
	MemoryContext cxt;
	ServeEntry *e;
	text	   *arch;

	for (int i = 0; i < 4; i++)
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("argument %d of _predict_probs must not be NULL", i + 1),
					 errhint("Call madlib_keras_predict, which fills every argument.")));
	sizes[0] = VARSIZE_ANY(DatumGetPointer(args[0]));
	sizes[1] = VARSIZE_ANY(DatumGetPointer(args[1]));
	nc = DatumGetFloat8(args[2]);
	if (sv != NULL)
	{
		if (memcmp(sv->sizes, sizes, sizeof(sizes)) != 0 || sv->nc != nc)
			dl_pg_predict_model_changed();
		*col = sv->col;
		return sv->e;
	}
	dl_pg_predict_check_nc(nc);
	cxt = AllocSetContextCreate(flinfo->fn_mcxt, "madlib_dl predict model", ALLOCSET_DEFAULT_SIZES);
	e = MemoryContextAllocZero(cxt, sizeof(ServeEntry));
	e->cxt = cxt;
	e->nc = nc;
	arch = DatumGetTextPP(args[0]);
	/* predict's memory check and its message first (one row a pass) */
	dl_pg_predict_check_memory(text_to_cstring(arch), 1);
	entry_build(e, "the model", VARDATA_ANY(arch), VARSIZE_ANY_EXHDR(arch), DatumGetByteaPP(args[1]));
	sv = MemoryContextAllocZero(flinfo->fn_mcxt, sizeof(ServeValues));
	memcpy(sv->sizes, sizes, sizeof(sizes));
	sv->nc = nc;
	sv->col = MemoryContextStrdup(flinfo->fn_mcxt, TextDatumGetCString(args[3]));
	sv->e = e;
	flinfo->fn_extra = sv;
	*col = sv->col;
	return e;
}

void
dl_serve_features_row(const ServeEntry *e, float *x, Datum arr, bool arr_null, Datum id, bool id_null,
					  const char *col)
{
	dl_pg_predict_copy_row(x, arr, arr_null, &e->m->spec->input_shapes[0], e->in_size, e->nc, id, id_null,
						   col);
	dl_pg_predict_check_ids(e->m->spec, x, e->nc, id, id_null);
}

PG_FUNCTION_INFO_V1(madlib_dl__predict_probs);

/*
 * _predict_probs(model_arch json, model_weights bytea,
 *     normalizing_const float8, feature_col text, id_value text,
 *     features anyarray) RETURNS real[]
 *
 * The output layer for one row of predict's row mode (a model of one
 * input and one output), its features a real[] or float8[] of the
 * model's input shape, divided by normalizing_const; errors name the
 * row by id_value and the features by feature_col, as _predict_batch's
 * do.  The model arguments (1..4) must be the same in every row; it is
 * built once per query.  _predict_ranked ranks the classes; the
 * madlib_dl batched predict node (serving_batch.c) batches the calls.
 */
Datum
madlib_dl__predict_probs(PG_FUNCTION_ARGS)
{
	Datum		args[4];
	bool		nulls[4];
	const char *col;
	ServeEntry *e;

	CHECK_FOR_INTERRUPTS();
	for (int i = 0; i < 4; i++)
	{
		nulls[i] = PG_ARGISNULL(i);
		args[i] = nulls[i] ? (Datum) 0 : PG_GETARG_DATUM(i);
	}
	e = dl_serve_entry_values(fcinfo->flinfo, args, nulls, &col);
	dl_serve_features_row(e, e->x, PG_ARGISNULL(5) ? (Datum) 0 : PG_GETARG_DATUM(5), PG_ARGISNULL(5),
						  PG_ARGISNULL(4) ? (Datum) 0 : PG_GETARG_DATUM(4), PG_ARGISNULL(4), col);
	dl_serve_run(e, e->out, e->x, 1);
	PG_RETURN_DATUM(dl_serve_prob_datum(e, e->out));
}

PG_FUNCTION_INFO_V1(madlib_dl__model_cache);

/*
 * _model_cache() RETURNS SETOF (relid oid, key int, stamp text, bytes bigint):
 * this backend's cached models, most recently used first (for tests and
 * docs/serving.md).
 */
Datum
madlib_dl__model_cache(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	dlist_iter	it;

	InitMaterializedSRF(fcinfo, 0);
	dlist_foreach(it, &serve_lru)
	{
		ServeEntry *e = dlist_container(ServeEntry, node, it.cur);
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		values[0] = ObjectIdGetDatum(e->relid);
		values[1] = Int32GetDatum(e->key);
		values[2] = CStringGetTextDatum(e->stamp);
		values[3] = Int64GetDatum((int64) e->bytes);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
