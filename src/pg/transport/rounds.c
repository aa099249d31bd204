/*-------------------------------------------------------------------------
 *
 * rounds.c
 *	  The round-based transports' shared half (rounds.h): leader-memory
 *	  state slots, the command queue, and the step results read back.
 *
 * IDENTIFICATION
 *	  src/pg/transport/rounds.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "rounds.h"

/* A segment's state in the queue. */
#define ROUND_IDLE		0
#define ROUND_QUEUED	1
#define ROUND_DONE		2

static uint8 *
rounds_slot(DlTransport *t, int slot)
{
	DlRounds   *r = (DlRounds *) t;

	if (slot < 0 || slot >= t->n_slots)
		elog(ERROR, "madlib_dl: slot %d out of range", slot);
	return r->slot[slot];
}

static Size
rounds_slot_len(const DlTransport *t, int slot)
{
	const DlRounds *r = (const DlRounds *) t;

	if (slot < 0 || slot >= t->n_slots)
		elog(ERROR, "madlib_dl: slot %d out of range", slot);
	return r->slot_len[slot];
}

static Size
rounds_slot_cap(const DlTransport *t, int slot)
{
	const DlRounds *r = (const DlRounds *) t;

	if (slot < 0 || slot >= t->n_slots)
		elog(ERROR, "madlib_dl: slot %d out of range", slot);
	return r->slot_cap[slot];
}

static void
rounds_set_slot_len(DlTransport *t, int slot, Size len)
{
	DlRounds   *r = (DlRounds *) t;

	if (slot < 0 || slot >= t->n_slots || len > r->slot_cap[slot])
		elog(ERROR, "madlib_dl: bad slot %d or length %zu", slot, len);
	r->slot_len[slot] = len;
}

static void
rounds_submit(DlTransport *t, int seg, const DlSegCommand *cmd)
{
	DlRounds   *r = (DlRounds *) t;

	if (seg < 0 || seg >= t->nseg || r->status[seg] != ROUND_IDLE)
		elog(ERROR, "madlib_dl: segment %d is out of range or busy", seg);
	if ((cmd->kind != DL_SEG_CMD_TRAIN && cmd->kind != DL_SEG_CMD_EVAL) ||
		cmd->slot < 0 || cmd->slot >= t->n_slots ||
		cmd->model < 0 || cmd->model >= r->setup.n_models ||
		cmd->iteration < 1 || cmd->iteration > PG_INT32_MAX)
		elog(ERROR, "madlib_dl: bad command for segment %d", seg);
	r->cmd[seg] = *cmd;
	r->status[seg] = ROUND_QUEUED;
}

/* Run every queued command: one call of the run hook per kind. */
static void
run_round(DlRounds *r)
{
	static const DlSegCommandKind kinds[2] = {DL_SEG_CMD_TRAIN, DL_SEG_CMD_EVAL};
	int		   *segs = palloc(sizeof(int) * r->base.nseg);

	for (int i = 0; i < 2; i++)
	{
		int			n = 0;

		for (int k = 0; k < r->base.nseg; k++)
			if (r->status[k] == ROUND_QUEUED && r->cmd[k].kind == kinds[i])
			{
				memset(&r->stats[k], 0, sizeof(DlSegStats));
				segs[n++] = k;
			}
		if (n > 0)
			r->hooks->run(r, kinds[i], segs, n);
		for (int j = 0; j < n; j++)
			r->status[segs[j]] = ROUND_DONE;
	}
	pfree(segs);
}

static int
rounds_wait_any(DlTransport *t)
{
	DlRounds   *r = (DlRounds *) t;
	bool		queued = false;

	for (int pass = 0; pass < 2; pass++)
	{
		for (int k = 0; k < t->nseg; k++)
		{
			if (r->status[k] == ROUND_DONE)
			{
				r->status[k] = ROUND_IDLE;
				return k;
			}
			queued |= r->status[k] == ROUND_QUEUED;
		}
		if (!queued)
			return -1;
		CHECK_FOR_INTERRUPTS();
		run_round(r);
	}
	elog(ERROR, "madlib_dl: a round of the %s transport finished no command", r->hooks->name);
	return -1;					/* keep the compiler quiet */
}

static const DlSegStats *
rounds_stats(const DlTransport *t, int seg)
{
	const DlRounds *r = (const DlRounds *) t;

	if (seg < 0 || seg >= t->nseg)
		elog(ERROR, "madlib_dl: segment %d out of range", seg);
	return &r->stats[seg];
}

static void
rounds_finish(DlTransport *t)
{
	DlRounds   *r = (DlRounds *) t;

	if (r->hooks->finish != NULL)
		r->hooks->finish(r);
	MemoryContextDelete(r->cxt);	/* r lives there */
}

static const DlTransportOps rounds_ops = {
	.name = "rounds",
	.slot = rounds_slot,
	.slot_len = rounds_slot_len,
	.slot_cap = rounds_slot_cap,
	.set_slot_len = rounds_set_slot_len,
	.submit = rounds_submit,
	.wait_any = rounds_wait_any,
	.stats = rounds_stats,
	.finish = rounds_finish,
};

/* A copy of s in cxt; NULL for NULL. */
static char *
strdup_or_null(MemoryContext cxt, const char *s)
{
	return s == NULL ? NULL : MemoryContextStrdup(cxt, s);
}

/* Copy setup's strings and models into r's context. */
static void
copy_setup(DlRounds *r, const DlSegSetup *setup)
{
	DlSegModelDef *defs = palloc(sizeof(DlSegModelDef) * setup->n_models);

	r->setup = *setup;
	r->setup.cluster = strdup_or_null(r->cxt, setup->cluster);
	dl_seg_vars_copy(&r->setup.vars, &setup->vars);
	if (OidIsValid(setup->validation))
		dl_seg_vars_copy(&r->setup.val_vars, &setup->val_vars);
	for (int k = 0; k < setup->n_models; k++)
	{
		if (setup->models[k].arch_json == NULL || setup->models[k].compile_params == NULL)
			elog(ERROR, "madlib_dl: model %d of the job has no definition", k);
		defs[k].arch_json = pstrdup(setup->models[k].arch_json);
		defs[k].compile_params = pstrdup(setup->models[k].compile_params);
		defs[k].fit_params = strdup_or_null(r->cxt, setup->models[k].fit_params);
	}
	r->setup.models = defs;
	r->setup.slot_sizes = NULL;
}

DlRounds *
dl_rounds_create(const DlSegSetup *setup, MemoryContext cxt, const DlRoundsHooks *hooks,
				 Size priv_size)
{
	MemoryContext rcxt;
	MemoryContext old;
	DlRounds   *r;

	if (setup->nseg < 1 || setup->nseg > DL_SEG_MAX_PLACES || setup->n_models < 1 ||
		setup->n_models > DL_SEG_MAX_MODELS || setup->n_slots < 1 ||
		!dl_seg_vars_valid(&setup->vars) ||
		(OidIsValid(setup->validation) && !dl_seg_vars_valid(&setup->val_vars)))
		elog(ERROR, "madlib_dl: bad %s job (%d segments, %d models, %d slots)",
			 hooks->name, setup->nseg, setup->n_models, setup->n_slots);
	rcxt = AllocSetContextCreate(cxt, "madlib_dl transport", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(rcxt);
	r = palloc0(sizeof(DlRounds));
	r->cxt = rcxt;
	r->hooks = hooks;
	copy_setup(r, setup);
	r->slot = palloc(sizeof(uint8 *) * setup->n_slots);
	r->slot_len = palloc0(sizeof(Size) * setup->n_slots);
	r->slot_cap = palloc(sizeof(Size) * setup->n_slots);
	for (int i = 0; i < setup->n_slots; i++)
	{
		Size		cap = setup->slot_sizes != NULL ? setup->slot_sizes[i] : setup->slot_size;

		/* states travel as bytea values */
		if (cap > MaxAllocSize - VARHDRSZ)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a model state of %zu bytes is larger than the %s transport can send", cap, hooks->name),
					 errhint("Use a smaller model: a state must fit in a bytea value (1 GB).")));
		CHECK_FOR_INTERRUPTS();
		r->slot[i] = MemoryContextAllocHuge(rcxt, Max(cap, 1));
		r->slot_cap[i] = cap;
	}
	r->cmd = palloc0(sizeof(DlSegCommand) * setup->nseg);
	r->status = palloc0(sizeof(char) * setup->nseg);
	r->stats = palloc0(sizeof(DlSegStats) * setup->nseg);
	r->priv = palloc0(Max(priv_size, 1));
	MemoryContextSwitchTo(old);
	r->base.ops = &rounds_ops;
	r->base.nseg = setup->nseg;
	r->base.n_slots = setup->n_slots;
	r->base.n_own = setup->nseg;	/* every segment runs without the leader */
	return r;
}

bytea *
dl_rounds_state_bytea(const DlRounds *r, int slot)
{
	Size		len = r->slot_len[slot];
	bytea	   *b = palloc(VARHDRSZ + len);

	SET_VARSIZE(b, VARHDRSZ + len);
	memcpy(VARDATA(b), r->slot[slot], len);
	return b;
}

const DlSegModelDef *
dl_rounds_model(const DlRounds *r, int model)
{
	if (model < 0 || model >= r->setup.n_models)
		elog(ERROR, "madlib_dl: command names model %d of %d", model, r->setup.n_models);
	return &r->setup.models[model];
}

/* Field i (1-based) of step result tuple t, or (Datum) 0 with *isnull. */
static Datum
result_field(HeapTupleHeader t, int i, bool *isnull)
{
	return GetAttributeByNum(t, (AttrNumber) i, isnull);
}

/*
 * The per-output sums of a step result, a float8[] of 1 .. DL_MAX_IO
 * values without NULLs, into out; their count.
 */
static int
result_sums(Datum d, double *out)
{
	ArrayType  *a = DatumGetArrayTypeP(d);
	Datum	   *v;
	bool	   *nulls;
	int			n;

	if (ARR_ELEMTYPE(a) != FLOAT8OID || ARR_NDIM(a) != 1 || ARR_HASNULL(a))
		elog(ERROR, "madlib_dl: a step result's output sums must be numbers");
	deconstruct_array(a, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &v, &nulls, &n);
	if (n < 1 || n > DL_MAX_IO)
		elog(ERROR, "madlib_dl: a step result gives %d output sums, expected 1 to %d", n, DL_MAX_IO);
	for (int i = 0; i < n; i++)
		out[i] = DatumGetFloat8(v[i]);
	return n;
}

void
dl_rounds_read_result(Datum d, bool isnull, DlStepResult *out)
{
	HeapTupleHeader t;
	bool		null;
	Datum		v;

	memset(out, 0, sizeof(*out));
	out->msum_null = true;
	if (isnull)
		return;
	t = DatumGetHeapTupleHeader(d);
	if (HeapTupleHeaderGetNatts(t) != 9)
		elog(ERROR, "madlib_dl: a step result must be a madlib_dl._step_result");
	v = result_field(t, 1, &null);
	out->state = null ? NULL : DatumGetByteaPP(v);
	v = result_field(t, 2, &null);
	out->loss_sum = null ? 0 : DatumGetFloat8(v);
	v = result_field(t, 3, &null);
	out->metric_sum = null ? 0 : DatumGetFloat8(v);
	v = result_field(t, 4, &null);
	out->n = null ? 0 : DatumGetInt64(v);
	v = result_field(t, 5, &null);
	out->seconds = null ? 0 : DatumGetFloat8(v);
	v = result_field(t, 6, &null);
	out->diverged = null ? NULL : TextDatumGetCString(v);
	v = result_field(t, 7, &null);
	if (!null)
		out->n_out = result_sums(v, out->out_loss);
	v = result_field(t, 8, &null);
	if (!null && result_sums(v, out->out_metric) != out->n_out)
		elog(ERROR, "madlib_dl: a step result gives %d output losses and other metrics", out->n_out);
	v = result_field(t, 9, &out->msum_null);
	/* a copy: validation parts are added after their tuples are freed */
	out->msum = out->msum_null ? (Datum) 0 : PointerGetDatum(DatumGetArrayTypePCopy(v));
}

void
dl_rounds_eval_done(DlRounds *r, int seg, const DlStepResult *res, bool val)
{
	DlSegStats *st = &r->stats[seg];

	if (!val)
	{
		st->train_loss_sum = res->loss_sum;
		st->train_metric_sum = res->metric_sum;
		st->train_n = res->n;
		st->n_out = res->n_out;
		memcpy(st->train_out_loss, res->out_loss, sizeof(double) * res->n_out);
		memcpy(st->train_out_metric, res->out_metric, sizeof(double) * res->n_out);
		st->seconds += res->seconds;
		dl_seg_msum_read(res->msum, res->msum_null, false, st);
		return;
	}
	dl_seg_msum_read(res->msum, res->msum_null, true, st);
	st->val_loss_sum += res->loss_sum;
	st->val_metric_sum += res->metric_sum;
	st->val_n += res->n;
	st->seconds += res->seconds;
	st->n_out = Max(st->n_out, res->n_out);
	for (int k = 0; k < res->n_out; k++)
	{
		st->val_out_loss[k] += res->out_loss[k];
		st->val_out_metric[k] += res->out_metric[k];
	}
}

void
dl_rounds_train_done(DlRounds *r, int seg, const DlStepResult *res)
{
	const DlSegCommand *cmd = &r->cmd[seg];
	DlSegStats *st = &r->stats[seg];

	st->seconds = res->seconds;
	if (res->diverged != NULL)
	{
		if (!cmd->catch_divergence)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("training diverged on segment %d in iteration " INT64_FORMAT ": %s",
							seg, cmd->iteration, res->diverged),
					 errhint("Lower the learning rate, scale the input features, or set clipnorm in the optimizer.")));
		st->diverged = true;
		strlcpy(st->message, res->diverged, sizeof(st->message));
		return;
	}
	st->train_loss_sum = res->loss_sum;
	st->train_metric_sum = res->metric_sum;
	st->train_n = res->n;
	st->samples_seen = res->n;
	if (res->state != NULL)
	{
		Size		len = VARSIZE_ANY_EXHDR(res->state);

		if (len > r->slot_cap[cmd->slot])
			elog(ERROR, "madlib_dl: model state of %zu bytes from segment %d does not fit slot %d of %zu",
				 len, seg, cmd->slot, r->slot_cap[cmd->slot]);
		memcpy(r->slot[cmd->slot], VARDATA_ANY(res->state), len);
		r->slot_len[cmd->slot] = len;
	}
}
