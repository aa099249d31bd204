/*-------------------------------------------------------------------------
 *
 * workers.c
 *	  Virtual segments on PostgreSQL: persistent parallel workers, each
 *	  owning one partition of a packed table (see segments.h).
 *
 * Shared memory (one DSM segment of the ParallelContext) holds:
 *	 DlSegControl   the command board: a spinlock-protected generation
 *	                counter, one command and one statistics record per
 *	                segment, the generation each segment last finished,
 *	                and two condition variables (work for workers, done
 *	                for the leader);
 *	 text           table and column names, architectures and parameter
 *	                strings, NUL-terminated, addressed by offset;
 *	 slot table     offset, capacity and length of each state slot;
 *	 slots          the state slots themselves (each MAXALIGNed; sizes may
 *	                differ, e.g. one slot per model sized by its state).
 *
 * A command (workers_submit):
 *	 leader: write cmd[k], cmd_gen[k] = ++generation, broadcast "work";
 *	         a segment no worker took is run by the leader right there.
 *	 worker: sleep on "work" until its cmd_gen changes; run its command;
 *	         set done_gen = cmd_gen; broadcast "done".
 *	 leader (workers_wait_any): sleep on "done" until a submitted segment
 *	         has done_gen == cmd_gen, re-throwing worker ERRORs
 *	         (CHECK_FOR_INTERRUPTS) and noticing dead workers.
 * A round (dl_transport_run) submits a command to every segment (workers'
 * first, then the leader's own) and waits for all of them.
 * Slot ownership: a slot is written only by the segment whose command
 * names it during a round, and by the leader between rounds.  The
 * spinlock around the generation and done_gen gives the memory barriers.
 *
 * The segments' work is the segment executor's (DlSegExecutor,
 * runtime/seg_exec.c), which the driver hands over in DlSegSetup: the
 * leader runs it for the segments no worker took, and each worker
 * (dl_segment_worker_main, runtime/seg_exec.c, which calls
 * dl_transport_workers_serve here) for its own.  A command's result
 * depends only on the command, the slot's bytes and the segment's
 * partition, so the results do not depend on which process ran a
 * segment.  This file moves commands and states; it runs no step.
 *
 * IDENTIFICATION
 *	  src/pg/transport/workers.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#ifndef GP_VERSION_NUM
#include "access/detoast.h"
#include "access/parallel.h"
#endif
#include "access/xact.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#ifndef GP_VERSION_NUM
#include "postmaster/bgworker.h"
#endif
#ifndef GP_VERSION_NUM
#include "storage/condition_variable.h"
#endif
#include "storage/shm_toc.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#ifndef GP_VERSION_NUM
#include "utils/wait_event.h"
#endif

#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_rng.h"

#include "pg_glue.h"
#include "pg_util.h"
#include "segments.h"
#include "transport.h"

/* ---------------------------------------------------------------------
 * Small helpers (every server, Greenplum included)
 * --------------------------------------------------------------------- */

/*
 * Everything below is the ParallelContext machinery of virtual segments on
 * PostgreSQL.  Greenplum and Cloudberry run the per-segment step inside
 * aggregates over their real segments instead (gp_agg.c), so there the
 * leader functions only raise FEATURE_NOT_SUPPORTED (docs/greenplum.md).
 */
#ifndef GP_VERSION_NUM

/* shm_toc keys */
#define DL_SEG_KEY_CONTROL	UINT64CONST(0xD15E000000000001)
#define DL_SEG_KEY_TEXT		UINT64CONST(0xD15E000000000002)
#define DL_SEG_KEY_MODELS	UINT64CONST(0xD15E000000000003)
#define DL_SEG_KEY_SLOTLEN	UINT64CONST(0xD15E000000000004)
#define DL_SEG_KEY_SLOTS	UINT64CONST(0xD15E000000000005)

/* How long the leader sleeps before it looks for dead workers again (ms). */
#define DL_SEG_POLL_MS 100

/* Offsets of one model's strings in the text area; -1 for NULL. */
typedef struct DlSegModelText
{
	int64		arch;
	int64		compile;
	int64		fit;
} DlSegModelText;

/* Where slot i lives in the slot area, and how full it is. */
typedef struct DlSegSlot
{
	Size		offset;			/* from the start of the slot area */
	Size		cap;			/* bytes */
	Size		len;			/* bytes of the state it holds now */
} DlSegSlot;

/* A table's variables (DlSegVars) in the text area: their names' offsets. */
typedef struct DlSegTextVars
{
	int			n_x;
	int			n_y;
	int64		x[DL_MAX_IO];
	int64		y[DL_MAX_IO];
} DlSegTextVars;

typedef struct DlSegControl
{
	slock_t		mutex;			/* protects generation, cmd, cmd_gen, done_gen */
	ConditionVariable cv_work;	/* leader -> workers: a new command */
	ConditionVariable cv_done;	/* workers -> leader: a segment finished */
	uint64		generation;		/* command counter, 0 before the first */
	uint64		cmd_gen[DL_SEG_MAX];	/* generation of a segment's command */
	uint64		done_gen[DL_SEG_MAX];	/* generation a segment last finished */
	DlSegCommand cmd[DL_SEG_MAX];
	DlSegStats	stats[DL_SEG_MAX];
	int64		part_rows[DL_SEG_MAX];	/* training rows per segment */

	/* the job, fixed at start */
	int			nseg;
	int			n_models;
	int			n_slots;
	Oid			source;
	Oid			validation;
	bool		by_dist_key;	/* training partition by __dist_key__ */
	int			caching;		/* DlCaching: the job's use_caching */
	double		partition_budget;	/* bytes of partitions one process holds */
	DlSegTextVars vars;			/* the tables' variable names */
	DlSegTextVars val_vars;
} DlSegControl;

/* Per-process view of a job: the shared areas, and this process's executor. */
typedef struct DlSegLocal
{
	DlSegControl *ctl;
	const char *text;
	const DlSegModelText *mtext;
	DlSegSlot  *slot;			/* (n_slots) */
	uint8	   *slots;			/* the slot area */
	MemoryContext cxt;			/* the executor's memory */
	const DlSegExecutor *executor;
	DlSegExec  *exec;			/* its partitions and models in this process */
} DlSegLocal;

typedef struct DlSegments DlSegments;

struct DlSegments
{
	DlTransport base;			/* first: a DlSegments is a DlTransport */
	ParallelContext *pcxt;
	DlSegLocal	local;
	int			nlaunched;
	MemoryContext cxt;
	bool		pending[DL_SEG_MAX];	/* submitted, not yet reported done */
};

/* The string at offset off of the shared text area; NULL for -1. */
static const char *
text_at(const DlSegLocal *l, int64 off)
{
	return off < 0 ? NULL : l->text + off;
}

/* The variables tv as names in the text area. */
static void
vars_at(const DlSegLocal *l, const DlSegTextVars *tv, DlSegVars *out)
{
	memset(out, 0, sizeof(*out));
	out->n_x = tv->n_x;
	out->n_y = tv->n_y;
	for (int i = 0; i < tv->n_x; i++)
		out->x[i] = text_at(l, tv->x[i]);
	for (int i = 0; i < tv->n_y; i++)
		out->y[i] = text_at(l, tv->y[i]);
}

/* ---------------------------------------------------------------------
 * The executor, in the leader and in the workers
 * --------------------------------------------------------------------- */

/*
 * Attach l to the shared areas in toc, and make this process's executor
 * for the job they describe (its strings in the text area, memory in cxt).
 */
static void
local_attach(DlSegLocal *l, shm_toc *toc, const DlSegExecutor *executor, MemoryContext cxt)
{
	DlSegControl *ctl;
	DlSegModelDef *defs;
	DlSegJob	job;

	memset(l, 0, sizeof(*l));
	l->ctl = ctl = shm_toc_lookup(toc, DL_SEG_KEY_CONTROL, false);
	l->text = shm_toc_lookup(toc, DL_SEG_KEY_TEXT, false);
	l->mtext = shm_toc_lookup(toc, DL_SEG_KEY_MODELS, false);
	l->slot = shm_toc_lookup(toc, DL_SEG_KEY_SLOTLEN, false);
	l->slots = shm_toc_lookup(toc, DL_SEG_KEY_SLOTS, false);
	l->cxt = cxt;
	l->executor = executor;

	defs = MemoryContextAllocZero(cxt, sizeof(DlSegModelDef) * ctl->n_models);
	for (int i = 0; i < ctl->n_models; i++)
	{
		defs[i].arch_json = text_at(l, l->mtext[i].arch);
		defs[i].compile_params = text_at(l, l->mtext[i].compile);
		defs[i].fit_params = text_at(l, l->mtext[i].fit);
	}
	memset(&job, 0, sizeof(job));
	job.source = ctl->source;
	vars_at(l, &ctl->vars, &job.vars);
	job.by_dist_key = ctl->by_dist_key;
	job.validation = ctl->validation;
	vars_at(l, &ctl->val_vars, &job.val_vars);
	job.caching = (DlCaching) ctl->caching;
	job.nseg = ctl->nseg;
	job.n_models = ctl->n_models;
	job.models = defs;
	job.partition_budget = ctl->partition_budget;
	l->exec = executor->create(&job, cxt);
}

/* Load segments segs[0..n) into this process's executor (their row counts into ctl). */
static void
local_load(DlSegLocal *l, const int *segs, int n)
{
	int64		rows[DL_SEG_MAX];

	l->executor->load(l->exec, segs, n, true, rows);
	for (int i = 0; i < n; i++)
		l->ctl->part_rows[segs[i]] = rows[i];
}

/* Run command cmd of segment seg in this process, its statistics into *out. */
static void
local_run(DlSegLocal *l, int seg, const DlSegCommand *cmd, DlSegStats *out)
{
	DlSegSlot  *sl;

	if (cmd->kind != DL_SEG_CMD_TRAIN && cmd->kind != DL_SEG_CMD_EVAL)
	{
		memset(out, 0, sizeof(*out));	/* idle this round: nothing to report */
		return;
	}
	if (cmd->slot < 0 || cmd->slot >= l->ctl->n_slots)
		elog(ERROR, "madlib_dl: command names slot %d of %d", cmd->slot, l->ctl->n_slots);
	sl = &l->slot[cmd->slot];
	l->executor->run(l->exec, seg, cmd, l->slots + sl->offset, &sl->len, sl->cap, out);
}

/* ---------------------------------------------------------------------
 * Worker side
 * --------------------------------------------------------------------- */

void
dl_transport_workers_serve(shm_toc *toc, const DlSegExecutor *executor)
{
	MemoryContext cxt;
	DlSegLocal	local;
	DlSegControl *ctl;
	int			me = ParallelWorkerNumber;
	uint64		seen = 0;

	elog(DEBUG2, "madlib_dl: worker for segment %d started", me);
	dl_pg_set_blas_threads();
	cxt = AllocSetContextCreate(CurrentMemoryContext, "madlib_dl segment worker",
								ALLOCSET_DEFAULT_SIZES);
	local_attach(&local, toc, executor, cxt);
	ctl = local.ctl;
	if (me < 0 || me >= ctl->nseg)
		elog(ERROR, "madlib_dl: parallel worker number %d out of range for %d segments", me, ctl->nseg);

	local_load(&local, &me, 1);

	for (;;)
	{
		uint64		gen;
		DlSegCommand cmd;

		SpinLockAcquire(&ctl->mutex);
		gen = ctl->cmd_gen[me];
		cmd = ctl->cmd[me];
		SpinLockRelease(&ctl->mutex);
		if (gen == seen)
		{
			ConditionVariableSleep(&ctl->cv_work, PG_WAIT_EXTENSION);
			continue;
		}
		ConditionVariableCancelSleep();
		seen = gen;
		if (cmd.kind == DL_SEG_CMD_EXIT)
			break;

		local_run(&local, me, &cmd, &ctl->stats[me]);

		SpinLockAcquire(&ctl->mutex);
		ctl->done_gen[me] = gen;
		SpinLockRelease(&ctl->mutex);
		ConditionVariableBroadcast(&ctl->cv_done);
	}
	MemoryContextDelete(cxt);
	elog(DEBUG2, "madlib_dl: worker for segment %d exits", me);
}

/* ---------------------------------------------------------------------
 * Leader side
 * --------------------------------------------------------------------- */

static int64
text_put(char *area, Size *used, const char *s)
{
	int64		off;
	Size		len;

	if (s == NULL)
		return -1;
	off = (int64) *used;
	len = strlen(s) + 1;
	memcpy(area + *used, s, len);
	*used += len;
	return off;
}

static Size
text_need(const char *s)
{
	return s == NULL ? 0 : strlen(s) + 1;
}

/* Bytes the names of vars (NULL: none) take in the text area. */
static Size
vars_need(const DlSegVars *vars)
{
	Size		n = 0;

	for (int i = 0; vars != NULL && i < vars->n_x; i++)
		n = add_size(n, text_need(vars->x[i]));
	for (int i = 0; vars != NULL && i < vars->n_y; i++)
		n = add_size(n, text_need(vars->y[i]));
	return n;
}

/* Put the names of vars (NULL: none) into the text area, their offsets into tv. */
static void
vars_put(char *area, Size *used, const DlSegVars *vars, DlSegTextVars *tv)
{
	memset(tv, 0, sizeof(*tv));
	if (vars == NULL)
		return;
	tv->n_x = vars->n_x;
	tv->n_y = vars->n_y;
	for (int i = 0; i < vars->n_x; i++)
		tv->x[i] = text_put(area, used, vars->x[i]);
	for (int i = 0; i < vars->n_y; i++)
		tv->y[i] = text_put(area, used, vars->y[i]);
}

static uint8 *workers_slot(DlTransport *t, int slot);
static Size workers_slot_len(const DlTransport *t, int slot);
static Size workers_slot_cap(const DlTransport *t, int slot);
static void workers_set_slot_len(DlTransport *t, int slot, Size len);
static void workers_submit(DlTransport *t, int seg, const DlSegCommand *cmd);
static int	workers_wait_any(DlTransport *t);
static const DlSegStats *workers_stats(const DlTransport *t, int seg);
static void workers_finish(DlTransport *t);

static const DlTransportOps workers_ops = {
	.name = "workers",
	.slot = workers_slot,
	.slot_len = workers_slot_len,
	.slot_cap = workers_slot_cap,
	.set_slot_len = workers_set_slot_len,
	.submit = workers_submit,
	.wait_any = workers_wait_any,
	.stats = workers_stats,
	.finish = workers_finish,
};

/* Bytes the job's shared areas take, overflow-checked (add_size/mul_size ERROR). */
typedef struct DlSegSizes
{
	Size		text;			/* the text area */
	Size		slots;			/* the slot area */
} DlSegSizes;

/* Capacity of state slot i of the job. */
static Size
setup_slot_cap(const DlSegSetup *setup, int i)
{
	return setup->slot_sizes != NULL ? setup->slot_sizes[i] : setup->slot_size;
}

/* The validation table's variables, or NULL without a validation table. */
static const DlSegVars *
setup_val_vars(const DlSegSetup *setup)
{
	return OidIsValid(setup->validation) ? &setup->val_vars : NULL;
}

/* ERROR unless setup describes a job the segments can run. */
static void
workers_check_setup(const DlSegSetup *setup)
{
	if (setup->nseg < 1 || setup->nseg > DL_SEG_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of segments %d is out of range", setup->nseg),
				 errhint("Use 1 to %d segments (distribution_rules of the preprocessor).", DL_SEG_MAX)));
	if (setup->n_models < 1 || setup->n_models > DL_SEG_MAX_MODELS || setup->n_slots < 1)
		elog(ERROR, "madlib_dl: bad segment job (%d models, %d slots)", setup->n_models, setup->n_slots);
	if (setup->executor == NULL)
		elog(ERROR, "madlib_dl: a segment job without an executor (dl_seg_setup_prepare)");
}

/* The sizes of the text and slot areas of setup's job. */
static DlSegSizes
workers_sizes(const DlSegSetup *setup)
{
	DlSegSizes	z;

	z.text = add_size(vars_need(&setup->vars), vars_need(setup_val_vars(setup)));
	for (int i = 0; i < setup->n_models; i++)
	{
		z.text = add_size(z.text, text_need(setup->models[i].arch_json));
		z.text = add_size(z.text, text_need(setup->models[i].compile_params));
		z.text = add_size(z.text, text_need(setup->models[i].fit_params));
	}
	z.text = Max(z.text, 1);
	z.slots = 0;
	for (int i = 0; i < setup->n_slots; i++)
	{
		Size		cap = setup_slot_cap(setup, i);

		if (cap > MaxAllocHugeSize)
			elog(ERROR, "madlib_dl: state slot of %zu bytes is too large", cap);
		z.slots = add_size(z.slots, MAXALIGN(cap));
	}
	z.slots = Max(z.slots, MAXIMUM_ALIGNOF);
	return z;
}

/* Enter parallel mode and create the ParallelContext with its DSM sized by z. */
static ParallelContext *
workers_create_context(const DlSegSetup *setup, const DlSegSizes *z)
{
	ParallelContext *pcxt;

	EnterParallelMode();
	pcxt = CreateParallelContext("madlib_dl", "dl_segment_worker_main", setup->nseg);
	shm_toc_estimate_chunk(&pcxt->estimator, sizeof(DlSegControl));
	shm_toc_estimate_chunk(&pcxt->estimator, z->text);
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(sizeof(DlSegModelText), setup->n_models));
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(sizeof(DlSegSlot), setup->n_slots));
	shm_toc_estimate_chunk(&pcxt->estimator, z->slots);
	shm_toc_estimate_keys(&pcxt->estimator, 5);
	InitializeParallelDSM(pcxt);
	return pcxt;
}

/* The command board of setup's job, in toc. */
static DlSegControl *
control_create(shm_toc *toc, const DlSegSetup *setup)
{
	DlSegControl *ctl = shm_toc_allocate(toc, sizeof(DlSegControl));

	memset(ctl, 0, sizeof(DlSegControl));
	SpinLockInit(&ctl->mutex);
	ConditionVariableInit(&ctl->cv_work);
	ConditionVariableInit(&ctl->cv_done);
	ctl->nseg = setup->nseg;
	ctl->n_models = setup->n_models;
	ctl->n_slots = setup->n_slots;
	ctl->source = setup->source;
	ctl->validation = setup->validation;
	ctl->by_dist_key = get_attnum(setup->source, "__dist_key__") != InvalidAttrNumber;
	ctl->caching = (int) setup->caching;
	ctl->partition_budget = setup->partition_budget;
	shm_toc_insert(toc, DL_SEG_KEY_CONTROL, ctl);
	return ctl;
}

/* The text area (variable names, then the models' strings) and the model table, in toc. */
static void
text_create(shm_toc *toc, const DlSegSetup *setup, const DlSegSizes *z, DlSegControl *ctl)
{
	char	   *text = shm_toc_allocate(toc, z->text);
	DlSegModelText *mtext;
	Size		used = 0;

	vars_put(text, &used, &setup->vars, &ctl->vars);
	vars_put(text, &used, setup_val_vars(setup), &ctl->val_vars);
	mtext = shm_toc_allocate(toc, sizeof(DlSegModelText) * setup->n_models);
	for (int i = 0; i < setup->n_models; i++)
	{
		mtext[i].arch = text_put(text, &used, setup->models[i].arch_json);
		mtext[i].compile = text_put(text, &used, setup->models[i].compile_params);
		mtext[i].fit = text_put(text, &used, setup->models[i].fit_params);
	}
	shm_toc_insert(toc, DL_SEG_KEY_TEXT, text);
	shm_toc_insert(toc, DL_SEG_KEY_MODELS, mtext);
}

/* The slot table and the (empty) slot area, in toc. */
static void
slots_create(shm_toc *toc, const DlSegSetup *setup, const DlSegSizes *z)
{
	DlSegSlot  *slot_tab = shm_toc_allocate(toc, sizeof(DlSegSlot) * setup->n_slots);
	Size		off = 0;

	for (int i = 0; i < setup->n_slots; i++)
	{
		slot_tab[i].offset = off;
		slot_tab[i].cap = setup_slot_cap(setup, i);
		slot_tab[i].len = 0;
		off += MAXALIGN(slot_tab[i].cap);
	}
	shm_toc_insert(toc, DL_SEG_KEY_SLOTLEN, slot_tab);
	shm_toc_insert(toc, DL_SEG_KEY_SLOTS, shm_toc_allocate(toc, z->slots));
}

/* Launch the workers; the leader loads the segments no worker took. */
static void
workers_launch(DlSegments *s, int nseg)
{
	int			own[DL_SEG_MAX];

	LaunchParallelWorkers(s->pcxt);
	if (s->pcxt->nworkers_launched > 0)
		WaitForParallelWorkersToAttach(s->pcxt);
	s->nlaunched = s->pcxt->nworkers_launched;
	elog(DEBUG1, "madlib_dl: %d of %d segments run on parallel workers", s->nlaunched, nseg);

	/* the leader's own segments load while the workers load theirs */
	for (int k = s->nlaunched; k < nseg; k++)
		own[k - s->nlaunched] = k;
	local_load(&s->local, own, nseg - s->nlaunched);
}

DlTransport *
dl_transport_workers_start(const DlSegSetup *setup, MemoryContext cxt)
{
	MemoryContext scxt;
	MemoryContext old;
	DlSegments *s;
	DlSegControl *ctl;
	DlSegSizes	z;

	workers_check_setup(setup);
	z = workers_sizes(setup);

	scxt = AllocSetContextCreate(cxt, "madlib_dl segments", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(scxt);
	s = palloc0(sizeof(DlSegments));
	s->cxt = scxt;
	s->pcxt = workers_create_context(setup, &z);

	ctl = control_create(s->pcxt->toc, setup);
	text_create(s->pcxt->toc, setup, &z, ctl);
	slots_create(s->pcxt->toc, setup, &z);
	local_attach(&s->local, s->pcxt->toc, setup->executor, scxt);

	workers_launch(s, setup->nseg);

	MemoryContextSwitchTo(old);
	s->base.ops = &workers_ops;
	s->base.nseg = setup->nseg;
	s->base.n_slots = setup->n_slots;
	s->base.n_own = s->nlaunched;
	return &s->base;
}

static uint8 *
workers_slot(DlTransport *t, int slot)
{
	DlSegments *s = (DlSegments *) t;

	if (slot < 0 || slot >= s->local.ctl->n_slots)
		elog(ERROR, "madlib_dl: slot %d out of range", slot);
	return s->local.slots + s->local.slot[slot].offset;
}

static Size
workers_slot_len(const DlTransport *t, int slot)
{
	const DlSegments *s = (const DlSegments *) t;

	if (slot < 0 || slot >= s->local.ctl->n_slots)
		elog(ERROR, "madlib_dl: slot %d out of range", slot);
	return s->local.slot[slot].len;
}

static Size
workers_slot_cap(const DlTransport *t, int slot)
{
	const DlSegments *s = (const DlSegments *) t;

	if (slot < 0 || slot >= s->local.ctl->n_slots)
		elog(ERROR, "madlib_dl: slot %d out of range", slot);
	return s->local.slot[slot].cap;
}

static void
workers_set_slot_len(DlTransport *t, int slot, Size len)
{
	DlSegments *s = (DlSegments *) t;

	if (slot < 0 || slot >= s->local.ctl->n_slots || len > s->local.slot[slot].cap)
		elog(ERROR, "madlib_dl: bad slot %d or length %zu", slot, len);
	s->local.slot[slot].len = len;
}

static const DlSegStats *
workers_stats(const DlTransport *t, int seg)
{
	const DlSegments *s = (const DlSegments *) t;

	return &s->local.ctl->stats[seg];
}

/*
 * Throw the ERROR of a worker that stopped, if it sent one; otherwise
 * report that it died.  Only workers with a command in progress matter.
 */
static void
check_workers_alive(DlSegments *s)
{
	DlSegControl *ctl = s->local.ctl;

	for (int i = 0; i < s->nlaunched; i++)
	{
		pid_t		pid;
		BgwHandleStatus status;
		bool		done;

		SpinLockAcquire(&ctl->mutex);
		done = ctl->done_gen[i] == ctl->cmd_gen[i];
		SpinLockRelease(&ctl->mutex);
		if (done)
			continue;
		status = GetBackgroundWorkerPid(s->pcxt->worker[i].bgwhandle, &pid);

		/*
		 * NOT_YET_STARTED is possible for a live worker: it may have attached
		 * (and sent its first message) before the postmaster recorded its
		 * pid.  Only a stopped worker is dead.
		 */
		if (status != BGWH_STOPPED && status != BGWH_POSTMASTER_DIED)
			continue;
		/* a worker that raised an ERROR sent it before exiting: throw it */
		HandleParallelMessages();
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("parallel worker for segment %d exited unexpectedly", i),
				 errhint("Look in the server log for the reason, then run the function again.")));
	}
}

static void
workers_submit(DlTransport *t, int seg, const DlSegCommand *cmd)
{
	DlSegments *s = (DlSegments *) t;

	DlSegControl *ctl = s->local.ctl;
	uint64		gen;

	if (seg < 0 || seg >= ctl->nseg || s->pending[seg])
		elog(ERROR, "madlib_dl: segment %d is out of range or busy", seg);
	SpinLockAcquire(&ctl->mutex);
	ctl->cmd[seg] = *cmd;
	gen = ++ctl->generation;
	ctl->cmd_gen[seg] = gen;
	SpinLockRelease(&ctl->mutex);
	s->pending[seg] = true;
	if (seg < s->nlaunched)
		ConditionVariableBroadcast(&ctl->cv_work);
	else
	{
		/* no worker took this segment: the leader runs it now */
		CHECK_FOR_INTERRUPTS();
		local_run(&s->local, seg, cmd, &ctl->stats[seg]);
		SpinLockAcquire(&ctl->mutex);
		ctl->done_gen[seg] = gen;
		SpinLockRelease(&ctl->mutex);
	}
}

static int
workers_wait_any(DlTransport *t)
{
	DlSegments *s = (DlSegments *) t;

	DlSegControl *ctl = s->local.ctl;
	bool		any = false;
	bool		slept = false;
	int			found = -1;

	for (int k = 0; k < ctl->nseg; k++)
		any |= s->pending[k];
	if (!any)
		return -1;
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		SpinLockAcquire(&ctl->mutex);
		for (int k = 0; k < ctl->nseg && found < 0; k++)
			if (s->pending[k] && ctl->done_gen[k] == ctl->cmd_gen[k])
				found = k;
		SpinLockRelease(&ctl->mutex);
		if (found >= 0)
			break;
		check_workers_alive(s);
		if (!slept)
		{
			ConditionVariablePrepareToSleep(&ctl->cv_done);
			slept = true;
			continue;			/* look again before the first sleep */
		}
		(void) ConditionVariableTimedSleep(&ctl->cv_done, DL_SEG_POLL_MS, PG_WAIT_EXTENSION);
	}
	if (slept)
		ConditionVariableCancelSleep();
	s->pending[found] = false;
	return found;
}

static void
workers_finish(DlTransport *t)
{
	DlSegments *s = (DlSegments *) t;

	DlSegControl *ctl = s->local.ctl;

	SpinLockAcquire(&ctl->mutex);
	for (int k = 0; k < ctl->nseg; k++)
	{
		memset(&ctl->cmd[k], 0, sizeof(DlSegCommand));
		ctl->cmd[k].kind = DL_SEG_CMD_EXIT;
		ctl->cmd_gen[k] = ++ctl->generation;
	}
	SpinLockRelease(&ctl->mutex);
	ConditionVariableBroadcast(&ctl->cv_work);

	elog(DEBUG2, "madlib_dl: segments told to exit");
	WaitForParallelWorkersToFinish(s->pcxt);
	DestroyParallelContext(s->pcxt);
	ExitParallelMode();
	elog(DEBUG2, "madlib_dl: segments finished");
	MemoryContextDelete(s->cxt);	/* s lives there */
}

#else							/* GP_VERSION_NUM */

DlTransport *
dl_transport_workers_start(const DlSegSetup *setup, MemoryContext cxt)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("virtual segments (parallel workers) are not used on Greenplum"),
			 errhint("On Greenplum and Cloudberry, fit and fit_multiple run over the real segments.")));
	return NULL;
}

void
dl_transport_workers_serve(shm_toc *toc, const DlSegExecutor *executor)
{
	elog(ERROR, "madlib_dl: no parallel workers on Greenplum");
}

#endif							/* GP_VERSION_NUM */
