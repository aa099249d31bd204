/*-------------------------------------------------------------------------
 *
 * progress.c
 *	  Live progress of fit, fit_multiple and madlib_keras_automl in shared
 *	  memory (progress.h),
 *	  and the SQL functions behind the view madlib_dl.fit_progress.
 *
 * Layout: one DlProgressShared in the main shared memory segment, made by
 * the postmaster when madlib_dl is in shared_preload_libraries (from
 * PostgreSQL 15 shmem_request_hook reserves the space, before it _PG_init
 * does, as Greenplum 7 and Cloudberry need; shmem_startup_hook
 * initialises it).  It holds DL_PROGRESS_SLOTS slots, each with its own spinlock:
 *
 *	  - a backend claims a free slot under the header's spinlock (which
 *		also hands out run ids), then owns it: only it writes the slot,
 *		under the slot's spinlock, until it frees it, again under the
 *		header's spinlock;
 *	  - a reader copies a whole slot under the slot's spinlock, so it never
 *		sees half an update; spinlocks are held only for a memcpy.
 *
 * The owning backend frees its slot in dl_progress_end, and also when the
 * (sub)transaction that claimed it aborts or ends (xact and subxact
 * callbacks) and when the backend exits (before_shmem_exit), so an ERROR
 * or a cancel leaves no stale slot.  A crash of any backend reinitialises
 * shared memory, slots included.
 *
 * IDENTIFICATION
 *	  src/pg/api/progress.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/parallel.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "pg_compat.h"
#include "pg_util.h"
#include "progress.h"

/* Longest function name ("fit_multiple" and room to spare). */
#define DL_PROGRESS_FUNC_LEN 32

typedef struct DlProgressSlot
{
	slock_t		mutex;			/* protects every field below */
	bool		in_use;
	int			pid;
	int64		run_id;
	Oid			dbid;
	Oid			userid;
	TimestampTz started;
	TimestampTz updated;
	char		function[DL_PROGRESS_FUNC_LEN];
	char		source[DL_PROGRESS_NAME_LEN];
	char		output[DL_PROGRESS_NAME_LEN];
	int32		iteration;
	int32		num_iterations;
	int32		models_done;
	int32		num_models;
	double		best_metric;	/* NaN: none yet */
	double		elapsed_s;
	double		eta_s;			/* NaN: unknown */
	int32		rung;			/* AutoML: the highest rung training; -1: none */
	int32		models_alive;	/* AutoML: configurations training; -1: none */
} DlProgressSlot;

typedef struct DlProgressShared
{
	slock_t		mutex;			/* protects next_run_id and claiming/freeing */
	int64		next_run_id;
	DlProgressSlot slots[DL_PROGRESS_SLOTS];
} DlProgressShared;

/* NULL unless madlib_dl was preloaded. */
static DlProgressShared *dl_progress = NULL;

#ifdef PG_HAVE_SHMEM_REQUEST_HOOK
static shmem_request_hook_type prev_shmem_request_hook = NULL;
#endif
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* This backend's slot, or -1, and the subtransaction that claimed it. */
static int	my_slot = -1;
static SubTransactionId my_subid = InvalidSubTransactionId;
static bool callbacks_registered = false;

/* Output name from madlib_dl._progress_label, until the transaction ends. */
static char pending_label[DL_PROGRESS_NAME_LEN];

static Size
progress_shmem_size(void)
{
	return sizeof(DlProgressShared);
}

#ifdef PG_HAVE_SHMEM_REQUEST_HOOK
static void
progress_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(progress_shmem_size());
}
#endif

static void
progress_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	dl_progress = ShmemInitStruct("madlib_dl progress", progress_shmem_size(), &found);
	if (!found)
	{
		memset(dl_progress, 0, progress_shmem_size());
		SpinLockInit(&dl_progress->mutex);
		dl_progress->next_run_id = 1;
		for (int i = 0; i < DL_PROGRESS_SLOTS; i++)
			SpinLockInit(&dl_progress->slots[i].mutex);
	}
	LWLockRelease(AddinShmemInitLock);
}

void
dl_progress_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
#ifdef PG_HAVE_SHMEM_REQUEST_HOOK
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = progress_shmem_request;
#else
	RequestAddinShmemSpace(progress_shmem_size());
#endif
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = progress_shmem_startup;
}

/* Free this backend's slot, if it has one.  Safe in any state. */
static void
progress_release(void)
{
	DlProgressSlot *s;

	if (dl_progress == NULL || my_slot < 0)
		return;
	s = &dl_progress->slots[my_slot];
	SpinLockAcquire(&dl_progress->mutex);
	SpinLockAcquire(&s->mutex);
	s->in_use = false;
	s->pid = 0;
	SpinLockRelease(&s->mutex);
	SpinLockRelease(&dl_progress->mutex);
	my_slot = -1;
	my_subid = InvalidSubTransactionId;
}

static void
progress_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			progress_release();
			pending_label[0] = '\0';
			break;
		default:
			break;
	}
}

static void
progress_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						  SubTransactionId parentSubid, void *arg)
{
	if (my_slot < 0 || mySubid != my_subid)
		return;
	if (event == SUBXACT_EVENT_ABORT_SUB)
		progress_release();
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
		my_subid = parentSubid;
}

static void
progress_exit_callback(int code, Datum arg)
{
	progress_release();
}

/* Once per backend: the callbacks that release this backend's slot. */
static void
progress_register_callbacks(void)
{
	if (callbacks_registered)
		return;
	RegisterXactCallback(progress_xact_callback, NULL);
	RegisterSubXactCallback(progress_subxact_callback, NULL);
	before_shmem_exit(progress_exit_callback, (Datum) 0);
	callbacks_registered = true;
}

/*
 * Claim a free slot for this backend and a new run id (*run_id): the
 * slot's index, or -1 when all are busy.
 */
static int
progress_claim_slot(int64 *run_id)
{
	int			slot = -1;

	SpinLockAcquire(&dl_progress->mutex);
	for (int i = 0; i < DL_PROGRESS_SLOTS; i++)
	{
		DlProgressSlot *s = &dl_progress->slots[i];

		SpinLockAcquire(&s->mutex);
		if (!s->in_use)
		{
			s->in_use = true;
			s->pid = MyProcPid;
			slot = i;
			*run_id = dl_progress->next_run_id++;
		}
		SpinLockRelease(&s->mutex);
		if (slot >= 0)
			break;
	}
	SpinLockRelease(&dl_progress->mutex);
	return slot;
}

/* Copy src into dst (size bytes), truncated at a character boundary. */
static void
copy_name(char *dst, const char *src, int size)
{
	int			len;

	if (src == NULL)
	{
		dst[0] = '\0';
		return;
	}
	len = strlen(src);
	if (len >= size)
		len = pg_mbcliplen(src, len, size - 1);
	memcpy(dst, src, len);
	dst[len] = '\0';
}

void
dl_progress_begin(const char *function, const char *source, const char *output,
				  int num_iterations, int num_models)
{
	DlProgressSlot *s;
	int			slot = -1;
	int64		run_id = 0;
	TimestampTz now;
	Oid			userid;

	if (dl_progress == NULL || IsParallelWorker())
		return;
	now = GetCurrentTimestamp();
	userid = GetUserId();
	progress_release();
	progress_register_callbacks();
	slot = progress_claim_slot(&run_id);
	if (slot < 0)
		return;					/* all busy: this run is not shown */

	my_slot = slot;
	my_subid = GetCurrentSubTransactionId();
	s = &dl_progress->slots[slot];
	SpinLockAcquire(&s->mutex);
	s->run_id = run_id;
	s->dbid = MyDatabaseId;
	s->userid = userid;
	s->started = s->updated = now;
	copy_name(s->function, function, DL_PROGRESS_FUNC_LEN);
	copy_name(s->source, source, DL_PROGRESS_NAME_LEN);
	copy_name(s->output, output != NULL ? output : pending_label, DL_PROGRESS_NAME_LEN);
	s->iteration = 0;
	s->num_iterations = num_iterations;
	s->models_done = 0;
	s->num_models = num_models;
	s->best_metric = get_float8_nan();
	s->elapsed_s = 0;
	s->eta_s = get_float8_nan();
	s->rung = s->models_alive = -1;
	SpinLockRelease(&s->mutex);
}

void
dl_progress_update(int iteration, int models_done, double best_metric,
				   double elapsed_s, double eta_s)
{
	DlProgressSlot *s;
	TimestampTz now;

	if (dl_progress == NULL || my_slot < 0)
		return;
	now = GetCurrentTimestamp();
	s = &dl_progress->slots[my_slot];
	SpinLockAcquire(&s->mutex);
	if (eta_s < 0)
	{
		/* work units: one per model and iteration */
		double		total = (double) s->num_iterations * s->num_models;
		double		done = (double) (iteration - 1) * s->num_models + models_done;

		eta_s = dl_progress_eta(elapsed_s, done, total);
	}
	s->iteration = iteration;
	s->models_done = models_done;
	if (!isnan(best_metric))
		s->best_metric = best_metric;
	s->elapsed_s = elapsed_s;
	s->eta_s = eta_s;
	s->updated = now;
	SpinLockRelease(&s->mutex);
}

void
dl_progress_set_stage(int rung, int models_alive)
{
	DlProgressSlot *s;

	if (dl_progress == NULL || my_slot < 0)
		return;
	s = &dl_progress->slots[my_slot];
	SpinLockAcquire(&s->mutex);
	s->rung = rung;
	s->models_alive = models_alive;
	SpinLockRelease(&s->mutex);
}

void
dl_progress_end(void)
{
	progress_release();
}

double
dl_progress_eta(double elapsed_s, double done, double total)
{
	if (!(done > 0) || !(elapsed_s >= 0))
		return get_float8_nan();
	if (done >= total)
		return 0;
	return elapsed_s / done * (total - done);
}

char *
dl_progress_relname(Oid rel)
{
	char	   *name = get_rel_name(rel);
	char	   *nsp;
	Oid			user = GetUserId();

	if (name == NULL)
		return NULL;
	/* a table the caller cannot read is no label of its run */
	if (pg_class_aclcheck(rel, user, ACL_SELECT) != ACLCHECK_OK &&
		pg_attribute_aclcheck_all(rel, user, ACL_SELECT, ACLMASK_ANY) != ACLCHECK_OK)
		return NULL;
	nsp = get_namespace_name(get_rel_namespace(rel));
	return nsp != NULL ? psprintf("%s.%s", nsp, name) : name;
}

/* The {schema, table} of _progress_label's (non-NULL) argument, checked. */
static void
label_names_arg(FunctionCallInfo fcinfo, char **nspname, char **relname)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	Datum	   *elems = NULL;
	bool	   *elem_nulls = NULL;
	int			n = -1;

	if (ARR_NDIM(arr) == 1 && ARR_ELEMTYPE(arr) == TEXTOID)
		deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &elem_nulls, &n);
	/* a third element, the name as the user gave it, is not used here */
	if (n < 2 || n > 3 || elem_nulls[0] || elem_nulls[1])
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("progress label must be an array of two non-NULL names {schema, table}"),
				 errhint("Pass the output table as madlib_dl._resolve_table returns it.")));
	*nspname = TextDatumGetCString(elems[0]);
	*relname = TextDatumGetCString(elems[1]);
}

/*
 * ERROR unless the caller may write output table nspname.relname: USAGE
 * and CREATE on the schema, and ownership of the table when it exists.
 */
static void
check_label_rights(const char *nspname, const char *relname)
{
	Oid			user = GetUserId();
	Oid			nspid;
	Oid			relid;
	AclResult	acl;

	/* USAGE on the schema is checked here too (42501) */
	nspid = LookupExplicitNamespace(nspname, true);
	if (!OidIsValid(nspid))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_SCHEMA_NAME),
				 errmsg("schema \"%s\" does not exist", nspname),
				 errhint("Create the schema first, or give a table in an existing schema.")));
	relid = get_relname_relid(relname, nspid);
	if (OidIsValid(relid) && !pg_class_ownercheck(relid, user))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of table \"%s.%s\" to replace it", nspname, relname),
				 errhint("Warm start from a model table you own, or give a new output table name.")));
	acl = pg_namespace_aclcheck(nspid, user, ACL_CREATE);
	if (acl != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to create output table \"%s.%s\": no CREATE privilege on schema \"%s\"",
						nspname, relname, nspname),
				 errhint("Write the output into a schema where you may create tables, or have CREATE on \"%s\" granted.",
						 nspname)));
}

PG_FUNCTION_INFO_V1(madlib_dl__progress_label);

/*
 * madlib_dl._progress_label(output text[]) RETURNS void: the output table
 * {schema, table} that the next dl_progress_begin with a NULL output
 * shows, for drivers whose C function is not told the output name.
 * Forgotten at the end of the transaction.  NULL clears it.
 *
 * The label is what the run will write, so it is checked against the
 * caller's rights to write it: CREATE on the schema, and ownership of the
 * table when it exists already (warm start drops and re-creates it).  A
 * role therefore cannot show its run under another role's table; and a
 * fit that could not write its output fails here, before training.
 */
Datum
madlib_dl__progress_label(PG_FUNCTION_ARGS)
{
	char	   *nspname;
	char	   *relname;
	char	   *label;

	/* 0.1.0's _progress_label took text (src/pg/api/compat.c) */
	if (dl_pg_declared_argtype(fcinfo, 0) != TEXTARRAYOID)
		dl_pg_old_sql_error(fcinfo, "0.1.0");
	if (PG_ARGISNULL(0))
	{
		pending_label[0] = '\0';
		PG_RETURN_VOID();
	}
	label_names_arg(fcinfo, &nspname, &relname);
	check_label_rights(nspname, relname);
	label = psprintf("%s.%s", nspname, relname);
	copy_name(pending_label, label, DL_PROGRESS_NAME_LEN);
	pfree(label);
	if (dl_progress != NULL)
		progress_register_callbacks();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(madlib_dl__progress_enabled);

/* madlib_dl._progress_enabled() RETURNS boolean: is the library preloaded? */
Datum
madlib_dl__progress_enabled(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(dl_progress != NULL);
}

#define PROGRESS_COLS 18

static Datum
nan_or(double v, bool *isnull)
{
	*isnull = isnan(v);
	return Float8GetDatum(v);
}

/* s as text, or NULL (*isnull) for NULL. */
static Datum
text_or_null(const char *s, bool *isnull)
{
	*isnull = s == NULL;
	return s != NULL ? CStringGetTextDatum(s) : (Datum) 0;
}

/*
 * The columns of the run in slot copy; visible: whether the caller may
 * see more than who and where (as pg_stat_activity).
 */
static void
progress_row(const DlProgressSlot *copy, bool visible, Datum *values, bool *nulls)
{
	memset(nulls, 0, sizeof(bool) * PROGRESS_COLS);
	values[0] = Int64GetDatum(copy->run_id);
	values[1] = Int32GetDatum(copy->pid);
	values[2] = text_or_null(get_database_name(copy->dbid), &nulls[2]);
	values[3] = text_or_null(GetUserNameFromId(copy->userid, true), &nulls[3]);
	if (!visible)
	{
		/* another role's run: who and where only, as pg_stat_activity */
		values[4] = CStringGetTextDatum("<insufficient privilege>");
		for (int c = 5; c < PROGRESS_COLS; c++)
			nulls[c] = true;
		return;
	}
	values[4] = CStringGetTextDatum(copy->function);
	values[5] = text_or_null(copy->source[0] != '\0' ? copy->source : NULL, &nulls[5]);
	values[6] = text_or_null(copy->output[0] != '\0' ? copy->output : NULL, &nulls[6]);
	values[7] = Int32GetDatum(copy->iteration);
	values[8] = Int32GetDatum(copy->num_iterations);
	values[9] = Int32GetDatum(copy->models_done);
	values[10] = Int32GetDatum(copy->num_models);
	values[11] = nan_or(copy->best_metric, &nulls[11]);
	values[12] = nan_or(copy->elapsed_s, &nulls[12]);
	values[13] = nan_or(copy->eta_s < 0 ? get_float8_nan() : copy->eta_s, &nulls[13]);
	values[14] = TimestampTzGetDatum(copy->started);
	values[15] = TimestampTzGetDatum(copy->updated);
	values[16] = Int32GetDatum(copy->rung);
	nulls[16] = copy->rung < 0;
	values[17] = Int32GetDatum(copy->models_alive);
	nulls[17] = copy->models_alive < 0;
}

PG_FUNCTION_INFO_V1(madlib_dl__progress);

/*
 * madlib_dl._progress() RETURNS SETOF record: one row per tracked run (see
 * the view madlib_dl.fit_progress in src/sql/progress.sql for the
 * columns).  As pg_stat_activity does for another role's query, a run of
 * a role whose privileges the caller does not have (and the caller is
 * not in pg_read_all_stats) shows only run_id, pid, database and
 * username; function reads '<insufficient privilege>' and every other
 * column is NULL.  Empty when madlib_dl is not preloaded.
 */
Datum
madlib_dl__progress(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	if (dl_progress == NULL)
		return (Datum) 0;

	for (int i = 0; i < DL_PROGRESS_SLOTS; i++)
	{
		DlProgressSlot copy;
		DlProgressSlot *s = &dl_progress->slots[i];
		Datum		values[PROGRESS_COLS];
		bool		nulls[PROGRESS_COLS];
		bool		visible;

		SpinLockAcquire(&s->mutex);
		memcpy(&copy, s, sizeof(copy));
		SpinLockRelease(&s->mutex);
		if (!copy.in_use)
			continue;

		visible = has_privs_of_role(GetUserId(), copy.userid) ||
			has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
		progress_row(&copy, visible, values, nulls);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
