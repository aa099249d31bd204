/*-------------------------------------------------------------------------
 *
 * greenplum.c
 *	  The greenplum transport (transport.h): the steps run as aggregates
 *	  over Greenplum's real segments, a round of commands per SQL query.
 *	  PostgreSQL runs the same SQL on one server (sql/95_greenplum_install
 *	  compares it with the workers transport there).
 *
 * Segments.  The packed table is DISTRIBUTED BY (__dist_key__) (the
 * preprocessor's _gp_place_buffers); its segment keys are
 * madlib_dl._gp_table_keys(source), and segment s is the s-th key in
 * ascending order (the step's `segment`, which seeds its shuffle, is s).
 * The job may have more segments than keys: those have no rows.  Segment
 * s's share of the validation table is its buffers with buffer_id % nseg
 * = s (as on the workers transport), wherever they are stored.
 *
 * A round (rounds.h) of TRAIN or EVAL commands:
 *	 1. TRUNCATE the round table, a temporary table distributed by
 *	    __dist_key__ (its name from _temp_table_name: never a user's), and
 *	    INSERT one row per command: (key, segment, part, step), step the
 *	    madlib_dl._step (state, model definition, iteration, segment).
 *	    part 0 is the segment's training partition (rows of its key);
 *	    an EVAL with a validation table also gets one part-1 row per
 *	    validation key that holds buffers of its share (found once, at
 *	    the start).  Each row is one INSERT: Greenplum sends a one-row
 *	    INSERT to the segment of its key, so every state travels once, to
 *	    where its rows are; states passed as parameters of the query
 *	    itself would go to every segment with the plan.
 *	 2. one SELECT: the round table joined with the packed table on
 *	    __dist_key__ (co-located: no data motion), one group per row of
 *	    the round table, the step aggregate (_gp_fit_segment or
 *	    _gp_eval_segment, gp_agg.c) over the group's buffers; for an EVAL,
 *	    UNION ALL the same over the validation table.  Every row of a
 *	    group passes the round table's step column, a pointer to one value
 *	    (stored out of line): the aggregate keeps the first and sorts
 *	    nothing but its buffers, so the step is never copied per row.
 *	    Only the results come back to the coordinator: the new
 *	    states and the statistics, which go into the slots and stats; a
 *	    segment's validation sums are added in key order.
 * A segment whose key has no rows (or no key) gives no group: its state
 * stays as it was, with zero statistics, as on the workers transport.
 *
 * IDENTIFICATION
 *	  src/pg/transport/greenplum.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "pg_util.h"
#include "rounds.h"

#ifdef GP_VERSION_NUM
#define GP_DISTRIBUTED " DISTRIBUTED BY (__dist_key__)"
#else
#define GP_DISTRIBUTED ""
#endif

/* The greenplum transport's own state (DlRounds.priv). */
typedef struct GpTransport
{
	char	   *round_table;	/* pg_temp."name", quoted */
	int			nkeys;
	int32	   *keys;			/* (nkeys) ascending: segment s is keys[s] */
	int		   *n_vkeys;		/* (nseg) validation keys of segment s */
	int32	  **vkeys;			/* (nseg) those keys, ascending */
	char	   *insert_sql;
	char	   *train_sql;
	char	   *eval_sql;
} GpTransport;

/* One validation result: part of segment seg's share, stored under key. */
typedef struct GpValPart
{
	int			seg;
	int32		key;
	DlStepResult res;
} GpValPart;

/* Run sql (no parameters) through SPI; ERROR unless it returns expect. */
static void
spi_run(const char *sql, int expect)
{
	int			rc = SPI_execute(sql, false, 0);

	if (rc != expect)
		elog(ERROR, "madlib_dl: SPI_execute failed (%s) for: %s", SPI_result_code_string(rc), sql);
}

/* The int4 value of column col of SPI result row row; ERROR when NULL. */
static int32
spi_int(int row, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, &isnull);

	if (isnull)
		elog(ERROR, "madlib_dl: unexpected NULL in column %d of an internal query", col);
	return DatumGetInt32(d);
}

/* The segment keys of source (ascending), checked against nseg. */
static void
read_keys(GpTransport *g, Oid source, int nseg, MemoryContext cxt)
{
	Oid			argtypes[1] = {REGCLASSOID};
	Datum		args[1] = {ObjectIdGetDatum(source)};
	ArrayType  *a;
	Datum	   *v;
	bool	   *nulls;
	bool		isnull;
	int			n;

	if (SPI_execute_with_args("SELECT madlib_dl._gp_table_keys($1)", 1, argtypes, args, NULL,
							  true, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "madlib_dl: could not read the segment keys");
	a = DatumGetArrayTypeP(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	deconstruct_array(a, INT4OID, sizeof(int32), true, TYPALIGN_INT, &v, &nulls, &n);
	if (n > nseg)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("table %s has %d segment keys, more than the %d segments of the training job",
						get_rel_name(source), n, nseg),
				 errhint("Give the job as many segments as the table has values of __dist_key__.")));
	g->nkeys = n;
	g->keys = MemoryContextAlloc(cxt, sizeof(int32) * Max(n, 1));
	for (int i = 0; i < n; i++)
		g->keys[i] = DatumGetInt32(v[i]);
}

/*
 * For each segment s, the values of __dist_key__ of the validation table
 * val (quoted) that hold buffers with buffer_id % nseg = s.
 */
static void
read_val_keys(GpTransport *g, const char *val, int nseg, MemoryContext cxt)
{
	Oid			argtypes[1] = {INT4OID};
	Datum		args[1] = {Int32GetDatum(nseg)};
	char	   *sql = psprintf("SELECT v.buffer_id %% $1, v.__dist_key__ FROM %s v"
							   " GROUP BY 1, 2 ORDER BY 1, 2", val);

	if (SPI_execute_with_args(sql, 1, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "madlib_dl: could not read the validation table's keys");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		n1;
		bool		n2;

		(void) SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &n1);
		(void) SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &n2);
		if (n1 || n2)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("validation table %s has buffers with a NULL buffer_id or __dist_key__", val),
					 errhint("Preprocess the validation data again with validation_preprocessor_dl.")));
	}
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		int			s = spi_int(i, 1);

		if (s < 0)
			continue;			/* a negative buffer_id: on no segment, as on the workers */
		if (g->vkeys[s] == NULL)
			g->vkeys[s] = MemoryContextAlloc(cxt, sizeof(int32) * SPI_processed);
		g->vkeys[s][g->n_vkeys[s]++] = spi_int(i, 2);
	}
}

/* Create the round table; its name (quoted, in pg_temp) into g. */
static void
create_round_table(GpTransport *g, MemoryContext cxt)
{
	bool		isnull;
	char	   *name;

	spi_run("SELECT madlib_dl._temp_table_name('madlib_dl_gp_round')", SPI_OK_SELECT);
	name = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	g->round_table = MemoryContextStrdup(cxt, psprintf("pg_temp.%s", quote_identifier(name)));
	spi_run(psprintf("CREATE TEMPORARY TABLE %s (__dist_key__ integer, seg integer, part integer,"
					 " step madlib_dl._step) ON COMMIT DROP" GP_DISTRIBUTED, g->round_table),
			SPI_OK_UTILITY);
	/* states are not compressible: stored out of line as they are */
	spi_run(psprintf("ALTER TABLE %s ALTER COLUMN step SET STORAGE EXTERNAL", g->round_table),
			SPI_OK_UTILITY);
}

/*
 * The aggregate's arguments after the buffer_id for variables vars of
 * rows s: a table of one independent and one dependent variable passes
 * (dep, indep, dep_shape, indep_shape) to the six-argument aggregate;
 * one of several variables passes n_x, then each variable and its shape
 * to the _io aggregate (VARIADIC "any": the values stay TOAST pointers).
 */
static void
append_vars(StringInfo q, const DlSegVars *vars)
{
	if (vars->n_x == 1 && vars->n_y == 1)
	{
		appendStringInfo(q, "s.%s, s.%s, s.%s, s.%s", quote_identifier(vars->y[0]),
						 quote_identifier(vars->x[0]),
						 quote_identifier(psprintf("%s_shape", vars->y[0])),
						 quote_identifier(psprintf("%s_shape", vars->x[0])));
		return;
	}
	appendStringInfo(q, "%d", vars->n_x);
	for (int i = 0; i < vars->n_x + vars->n_y; i++)
	{
		const char *col = i < vars->n_x ? vars->x[i] : vars->y[i - vars->n_x];

		appendStringInfo(q, ", s.%s, s.%s", quote_identifier(col),
						 quote_identifier(psprintf("%s_shape", col)));
	}
}

/*
 * One part of a round's query: the step aggregate agg (its _io form for
 * several variables) over the rows of relation rel (variables vars)
 * joined with the round table's rows of part, on __dist_key__ (and cond).
 */
static void
append_part(StringInfo q, const GpTransport *g, const char *agg, const char *rel,
			const DlSegVars *vars, int part, const char *cond)
{
	appendStringInfo(q, "SELECT u.seg, u.part, u.__dist_key__, madlib_dl.%s%s(u.step, s.buffer_id, ",
					 agg, vars->n_x == 1 && vars->n_y == 1 ? "" : "_io");
	append_vars(q, vars);
	appendStringInfo(q, ") FROM %s u JOIN %s s ON s.__dist_key__ OPERATOR(pg_catalog.=) u.__dist_key__%s"
					 " WHERE u.part OPERATOR(pg_catalog.=) %d GROUP BY u.__dist_key__, u.seg, u.part",
					 g->round_table, rel, cond, part);
}

/* The SQL of a round, into g. */
static void
build_sql(GpTransport *g, const DlSegSetup *setup, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	char	   *src = dl_pg_relation_sql_name(setup->source);
	StringInfoData q;

	g->insert_sql = psprintf("INSERT INTO %s VALUES ($1, $2, $3, ROW($4, $5, $6, $7, $8, $9, $10)::madlib_dl._step)",
							 g->round_table);
	initStringInfo(&q);
	append_part(&q, g, "_gp_fit_segment", src, &setup->vars, 0, "");
	g->train_sql = q.data;
	initStringInfo(&q);
	append_part(&q, g, "_gp_eval_segment", src, &setup->vars, 0, "");
	if (OidIsValid(setup->validation))
	{
		appendStringInfoString(&q, " UNION ALL ");
		append_part(&q, g, "_gp_eval_segment", dl_pg_relation_sql_name(setup->validation),
					&setup->val_vars, 1, " AND s.buffer_id OPERATOR(pg_catalog.%) $1 OPERATOR(pg_catalog.=) u.seg");
	}
	g->eval_sql = q.data;
	MemoryContextSwitchTo(old);
}

/* Insert the round table's row (key, seg, part, step). */
static void
insert_step(const GpTransport *g, int32 key, int seg, int part, bytea *state,
			const DlSegModelDef *def, int64 iteration, DlCaching caching)
{
	Oid			argtypes[10] = {INT4OID, INT4OID, INT4OID, BYTEAOID, TEXTOID, TEXTOID, TEXTOID,
	INT4OID, INT4OID, BOOLOID};
	Datum		args[10];
	char		nulls[11] = "          ";

	args[0] = Int32GetDatum(key);
	args[1] = Int32GetDatum(seg);
	args[2] = Int32GetDatum(part);
	args[3] = PointerGetDatum(state);
	args[4] = CStringGetTextDatum(def->arch_json);
	args[5] = CStringGetTextDatum(def->compile_params);
	args[6] = def->fit_params != NULL ? CStringGetTextDatum(def->fit_params) : (Datum) 0;
	nulls[6] = def->fit_params != NULL ? ' ' : 'n';
	args[7] = Int32GetDatum((int32) iteration);
	args[8] = Int32GetDatum(seg);
	args[9] = BoolGetDatum(caching == DL_CACHING_ON);
	nulls[9] = caching == DL_CACHING_AUTO ? 'n' : ' ';
	if (SPI_execute_with_args(g->insert_sql, 10, argtypes, args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "madlib_dl: could not queue a step for segment %d", seg);
}

/* Fill the round table with the commands of segments segs[0..n-1]. */
static void
queue_round(DlRounds *r, const GpTransport *g, DlSegCommandKind kind, const int *segs, int n)
{
	spi_run(psprintf("TRUNCATE %s", g->round_table), SPI_OK_UTILITY);
	for (int i = 0; i < n; i++)
	{
		int			s = segs[i];
		const DlSegCommand *cmd = dl_rounds_command(r, s);
		const DlSegModelDef *def = dl_rounds_model(r, cmd->model);
		bytea	   *state = dl_rounds_state_bytea(r, cmd->slot);

		CHECK_FOR_INTERRUPTS();
		if (s < g->nkeys)
			insert_step(g, g->keys[s], s, 0, state, def, cmd->iteration, r->setup.caching);
		if (kind == DL_SEG_CMD_EVAL && g->n_vkeys != NULL)
			for (int j = 0; j < g->n_vkeys[s]; j++)
				insert_step(g, g->vkeys[s][j], s, 1, state, def, cmd->iteration, r->setup.caching);
		pfree(state);
	}
}

/* Order of validation parts: segment, then key. */
static int
val_part_cmp(const void *a, const void *b)
{
	const GpValPart *x = (const GpValPart *) a;
	const GpValPart *y = (const GpValPart *) b;

	if (x->seg != y->seg)
		return x->seg < y->seg ? -1 : 1;
	return x->key < y->key ? -1 : (x->key > y->key ? 1 : 0);
}

/* Add validation parts vp[0..n-1] to their segments' stats, in key order. */
static void
add_val_parts(DlRounds *r, GpValPart *vp, int n)
{
	qsort(vp, n, sizeof(GpValPart), val_part_cmp);
	for (int i = 0; i < n; i++)
		dl_rounds_eval_done(r, vp[i].seg, &vp[i].res, true);
}

/* The greenplum transport's round (DlRoundsHooks.run). */
static void
gp_run(DlRounds *r, DlSegCommandKind kind, const int *segs, int n)
{
	GpTransport *g = (GpTransport *) r->priv;
	Oid			argtypes[1] = {INT4OID};
	Datum		args[1] = {Int32GetDatum(r->base.nseg)};
	bool	   *seen = palloc0(sizeof(bool) * r->base.nseg);
	GpValPart  *vp = NULL;
	int			nvp = 0;
	int			vcap = 0;
	Portal		portal;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "madlib_dl: SPI_connect failed");
	queue_round(r, g, kind, segs, n);
	portal = SPI_cursor_open_with_args(NULL, kind == DL_SEG_CMD_TRAIN ? g->train_sql : g->eval_sql,
									   1, argtypes, args, NULL, false, 0);
	for (;;)
	{
		HeapTuple	tup;
		TupleDesc	desc;
		bool		isnull;
		int			seg;
		int			part;
		Datum		d;
		DlStepResult res;

		SPI_cursor_fetch(portal, true, 1);
		if (SPI_processed == 0)
			break;
		tup = SPI_tuptable->vals[0];
		desc = SPI_tuptable->tupdesc;
		seg = spi_int(0, 1);
		part = spi_int(0, 2);
		d = SPI_getbinval(tup, desc, 4, &isnull);
		if (seg < 0 || seg >= r->base.nseg || (part == 0 && seen[seg]))
			elog(ERROR, "madlib_dl: a round gave segment %d twice or out of range", seg);
		dl_rounds_read_result(d, isnull, &res);
		if (part == 1)
		{
			if (nvp == vcap)
			{
				vcap = Max(vcap * 2, 16);
				vp = vp == NULL ? palloc(sizeof(GpValPart) * vcap) : repalloc(vp, sizeof(GpValPart) * vcap);
			}
			vp[nvp].seg = seg;
			vp[nvp].key = spi_int(0, 3);
			vp[nvp++].res = res;
		}
		else if (kind == DL_SEG_CMD_TRAIN)
			dl_rounds_train_done(r, seg, &res);
		else
			dl_rounds_eval_done(r, seg, &res, false);
		seen[seg] = part == 0 || seen[seg];
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
	add_val_parts(r, vp, nvp);
	SPI_finish();
	pfree(seen);
}

/* Drop the round table (DlRoundsHooks.finish). */
static void
gp_finish(DlRounds *r)
{
	GpTransport *g = (GpTransport *) r->priv;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "madlib_dl: SPI_connect failed");
	spi_run(psprintf("DROP TABLE %s", g->round_table), SPI_OK_UTILITY);
	SPI_finish();
}

static const DlRoundsHooks gp_hooks = {
	.name = "greenplum",
	.run = gp_run,
	.finish = gp_finish,
};

DlTransport *
dl_transport_greenplum_start(const DlSegSetup *setup, MemoryContext cxt)
{
	DlRounds   *r = dl_rounds_create(setup, cxt, &gp_hooks, sizeof(GpTransport));
	GpTransport *g = (GpTransport *) r->priv;
	const DlSegSetup *s = &r->setup;

	/* the tables' types were checked by dl_seg_setup_prepare */
	if (OidIsValid(s->validation))
	{
		if (get_attnum(s->validation, "__dist_key__") == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("validation table %s has no column \"__dist_key__\"", get_rel_name(s->validation)),
					 errhint("Preprocess the validation data with validation_preprocessor_dl.")));
	}
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "madlib_dl: SPI_connect failed");
	read_keys(g, s->source, s->nseg, r->cxt);
	if (OidIsValid(s->validation))
	{
		g->n_vkeys = MemoryContextAllocZero(r->cxt, sizeof(int) * s->nseg);
		g->vkeys = MemoryContextAllocZero(r->cxt, sizeof(int32 *) * s->nseg);
		read_val_keys(g, dl_pg_relation_sql_name(s->validation), s->nseg, r->cxt);
	}
	create_round_table(g, r->cxt);
	SPI_finish();
	build_sql(g, s, r->cxt);
	return &r->base;
}
