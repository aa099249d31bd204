/*-------------------------------------------------------------------------
 *
 * job.c
 *	  Read and check a madlib_dl._train_job value (job.h): every rule
 *	  about a training job's arguments is written here, once.
 *
 * IDENTIFICATION
 *	  src/pg/api/job.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "history.h"
#include "job.h"
#include "pg_util.h"

/* The field name of job, ERROR 22004 when it is NULL. */
static Datum
field(HeapTupleHeader job, const char *name)
{
	bool		isnull;
	Datum		d = GetAttributeByName(job, name, &isnull);

	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s of the training job must not be NULL", name),
				 errhint("Call fit or fit_multiple, which fill the job.")));
	return d;
}

/* The field, or (Datum) 0 with *isnull. */
static Datum
field_or_null(HeapTupleHeader job, const char *name, bool *isnull)
{
	return GetAttributeByName(job, name, isnull);
}

static char *
text_field(HeapTupleHeader job, const char *name)
{
	return TextDatumGetCString(field(job, name));
}

/*
 * The elements of array field name (one dimension, n elements, n from
 * the first array read when *n < 0), of type elemtype; NULL elements only
 * when nulls_ok.  values and nulls are palloc'd.
 */
static void
array_field(HeapTupleHeader job, const char *name, Oid elemtype, bool nulls_ok, int max_n,
			int *n, Datum **values, bool **nulls)
{
	ArrayType  *a = DatumGetArrayTypeP(field(job, name));
	int16		typlen;
	bool		typbyval;
	char		typalign;
	int			count;

	if (ARR_ELEMTYPE(a) != elemtype || ARR_NDIM(a) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s of the training job must be a one-dimensional %s array", name,
						format_type_be(elemtype)),
				 errhint("Call fit or fit_multiple, which fill the job.")));
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(a, elemtype, typlen, typbyval, typalign, values, nulls, &count);
	if (*n < 0)
	{
		if (count < 1 || count > max_n)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a training job has 1 to %d model configurations, got %d", max_n, count),
					 errhint("Train at most %d configurations in one call.", max_n)));
		*n = count;
	}
	else if (count != *n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s of the training job has %d elements, expected %d", name, count, *n),
				 errhint("Give one element per model configuration.")));
	for (int i = 0; i < count && !nulls_ok; i++)
		if ((*nulls)[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s[%d] of the training job must not be NULL", name, i + 1),
					 errhint("Give a value for every model configuration.")));
}

int
dl_pg_check_iterations(int num_iterations, bool freq_null, int freq)
{
	if (num_iterations < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("num_iterations must be at least 1, got %d", num_iterations),
				 errhint("Give the number of iterations to train, 1 or more.")));
	if (freq_null)
		freq = num_iterations;
	if (freq < 1 || freq > num_iterations)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("metrics_compute_frequency must be between 1 and %d, got %d", num_iterations, freq),
				 errhint("Give a frequency between 1 and num_iterations, or NULL to compute metrics at the last iteration only.")));
	return freq;
}

PG_FUNCTION_INFO_V1(madlib_dl__check_iterations);

/*
 * madlib_dl._fit_check_iterations(num_iterations int,
 *     metrics_compute_frequency int) RETURNS int: dl_pg_check_iterations
 * for the SQL drivers.  A NULL num_iterations is 22004.
 */
Datum
madlib_dl__check_iterations(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("num_iterations must not be NULL"),
				 errhint("Give a value for num_iterations.")));
	PG_RETURN_INT32(dl_pg_check_iterations(PG_GETARG_INT32(0), PG_ARGISNULL(1),
										   PG_ARGISNULL(1) ? 0 : PG_GETARG_INT32(1)));
}

void
dl_pg_check_averaging(bool period_null, int period, const char *scaling, int *period_out,
					  DlPgLrScaling *scaling_out)
{
	if (!period_null && period < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("averaging_period must be at least 1, got %d", period),
				 errhint("Give the number of mini-batches between two averages, or NULL to average once per iteration.")));
	*period_out = period_null ? 0 : period;
	*scaling_out = DL_PG_LR_SCALING_NONE;
	if (scaling == NULL)
		return;
	if (strcmp(scaling, "linear") == 0)
		*scaling_out = DL_PG_LR_SCALING_LINEAR;
	else if (strcmp(scaling, "sqrt") == 0)
		*scaling_out = DL_PG_LR_SCALING_SQRT;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lr_scaling must be 'linear', 'sqrt' or NULL, got \"%s\"", scaling),
				 errhint("'linear' multiplies the learning rate by the number of segments, 'sqrt' by its square root; NULL leaves it.")));
}

PG_FUNCTION_INFO_V1(madlib_dl__check_averaging);

/*
 * madlib_dl._fit_check_averaging(averaging_period int, lr_scaling text)
 * RETURNS void: dl_pg_check_averaging for the SQL driver.
 */
Datum
madlib_dl__check_averaging(PG_FUNCTION_ARGS)
{
	int			period;
	DlPgLrScaling scaling;

	dl_pg_check_averaging(PG_ARGISNULL(0), PG_ARGISNULL(0) ? 0 : PG_GETARG_INT32(0),
						  PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1)),
						  &period, &scaling);
	PG_RETURN_VOID();
}

/* The transport named t. */
static DlTransportKind
transport_kind(const char *t)
{
	if (strcmp(t, "workers") == 0)
		return DL_TRANSPORT_WORKERS;
	if (strcmp(t, "greenplum") == 0)
		return DL_TRANSPORT_GREENPLUM;
	if (strcmp(t, "plproxy") == 0)
		return DL_TRANSPORT_PLPROXY;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("transport of the training job must be workers, greenplum or plproxy, got \"%s\"", t),
			 errhint("Call fit or fit_multiple, which choose the transport.")));
	return DL_TRANSPORT_WORKERS;	/* keep the compiler quiet */
}

/* Most segments a transport runs: virtual ones are parallel workers. */
static int
max_segments(DlTransportKind t)
{
	return t == DL_TRANSPORT_WORKERS ? DL_SEG_MAX : DL_SEG_MAX_PLACES;
}

/* The models' arrays: keys, architectures, initial weights, parameters. */
static void
read_models(HeapTupleHeader job, int max_models, DlPgTrainJob *out)
{
	Datum	   *v;
	bool	   *n;
	int			K = -1;

	array_field(job, "mst_keys", INT4OID, false, max_models, &K, &v, &n);
	out->n_models = K;
	out->mst_keys = palloc(sizeof(int32) * K);
	for (int k = 0; k < K; k++)
	{
		out->mst_keys[k] = DatumGetInt32(v[k]);
		for (int j = 0; j < k; j++)
			if (out->mst_keys[j] == out->mst_keys[k])
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("mst_key %d appears twice in the training job", out->mst_keys[k]),
						 errhint("Give each model configuration its own key.")));
	}
	out->archs = palloc(sizeof(char *) * K);
	out->compiles = palloc(sizeof(char *) * K);
	out->fits = palloc0(sizeof(char *) * K);
	out->inits = palloc0(sizeof(bytea *) * K);
	array_field(job, "model_archs", TEXTOID, false, max_models, &K, &v, &n);
	for (int k = 0; k < K; k++)
		out->archs[k] = TextDatumGetCString(v[k]);
	array_field(job, "compile_params", TEXTOID, false, max_models, &K, &v, &n);
	for (int k = 0; k < K; k++)
		out->compiles[k] = TextDatumGetCString(v[k]);
	array_field(job, "fit_params", TEXTOID, true, max_models, &K, &v, &n);
	for (int k = 0; k < K; k++)
		out->fits[k] = n[k] ? NULL : TextDatumGetCString(v[k]);
	array_field(job, "init_weights", BYTEAOID, true, max_models, &K, &v, &n);
	for (int k = 0; k < K; k++)
		out->inits[k] = n[k] ? NULL : DatumGetByteaPP(v[k]);
}

/* fit's averaging_period and lr_scaling: NULL in the other jobs. */
static void
read_averaging(HeapTupleHeader job, int max_models, DlPgTrainJob *out)
{
	bool		pnull;
	bool		snull;
	Datum		period = field_or_null(job, "averaging_period", &pnull);
	Datum		scaling = field_or_null(job, "lr_scaling", &snull);

	if (max_models > 1 && !(pnull && snull))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("averaging_period and lr_scaling are for fit, which averages one model over the segments"),
				 errhint("Leave them NULL: fit_multiple trains each model on one segment at a time.")));
	dl_pg_check_averaging(pnull, pnull ? 0 : DatumGetInt32(period),
						  snull ? NULL : TextDatumGetCString(scaling),
						  &out->averaging_period, &out->lr_scaling);
}

void
dl_pg_job_read(HeapTupleHeader job, int max_models, DlPgTrainJob *out)
{
	bool		isnull;
	Datum		d;

	memset(out, 0, sizeof(*out));
	out->source = DatumGetObjectId(field(job, "source"));
	dl_seg_vars_from_arrays(DatumGetArrayTypeP(field(job, "x_cols")),
							DatumGetArrayTypeP(field(job, "y_cols")), &out->vars,
							"x_cols of the training job", "y_cols of the training job");
	d = field_or_null(job, "validation", &isnull);
	if (!isnull)
	{
		out->validation = DatumGetObjectId(d);
		dl_seg_vars_from_arrays(DatumGetArrayTypeP(field(job, "val_x_cols")),
								DatumGetArrayTypeP(field(job, "val_y_cols")), &out->val_vars,
								"val_x_cols of the training job", "val_y_cols of the training job");
		if (out->val_vars.n_x != out->vars.n_x || out->val_vars.n_y != out->vars.n_y)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the validation table of the training job has %d independent and %d dependent variables, the training table %d and %d",
							out->val_vars.n_x, out->val_vars.n_y, out->vars.n_x, out->vars.n_y),
					 errhint("Preprocess the validation data with the variables of the training data.")));
	}
	read_models(job, max_models, out);
	out->num_iterations = DatumGetInt32(field(job, "num_iterations"));
	d = field_or_null(job, "metrics_compute_frequency", &isnull);
	out->freq = dl_pg_check_iterations(out->num_iterations, isnull, isnull ? 0 : DatumGetInt32(d));
	out->transport = transport_kind(text_field(job, "transport"));
	out->nseg = DatumGetInt32(field(job, "num_segments"));
	if (out->nseg < 1 || out->nseg > max_segments(out->transport))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of segments %d is out of range", out->nseg),
				 errhint("Use 1 to %d segments (distribution_rules of the preprocessor).",
						 max_segments(out->transport))));
	d = field_or_null(job, "schedule_seed", &isnull);
	out->schedule_seed = isnull ? 1 : (uint64) DatumGetInt64(d);
	d = field_or_null(job, "cluster", &isnull);
	out->cluster = isnull ? NULL : TextDatumGetCString(d);
	d = field_or_null(job, "use_caching", &isnull);
	out->caching = isnull ? DL_CACHING_AUTO : DatumGetBool(d) ? DL_CACHING_ON : DL_CACHING_OFF;
	read_averaging(job, max_models, out);
	d = field_or_null(job, "early_stopping", &isnull);
	{
		DlError		err;

		dl_error_clear(&err);
		dl_pg_check(dl_early_stop_parse(isnull ? NULL : TextDatumGetCString(d), &out->early_stop,
										&err), &err);
	}
	if ((out->transport == DL_TRANSPORT_PLPROXY) != (out->cluster != NULL))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a training job names a cluster exactly when its transport is plproxy"),
				 errhint("Call fit or fit_multiple, which choose the transport.")));
}

void
dl_pg_job_early_stop_begin(const DlPgTrainJob *job, const DlPgHistory *h, const char *what,
						   DlEarlyStopState *st)
{
	DlError		err;

	dl_error_clear(&err);
	if (dl_early_stop_begin_list(&job->early_stop, (const char *const *) h->names, h->n_metrics,
								 OidIsValid(job->validation), st, &err) != DL_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 what != NULL ? errmsg("%s: %s", what, err.msg) : errmsg("%s", err.msg),
				 errhint("%s", err.hint)));
}

void
dl_pg_job_read_arg(FunctionCallInfo fcinfo, const char *driver, int max_models, DlPgTrainJob *out)
{
	if (PG_NARGS() != 1)
		dl_pg_old_sql_error(fcinfo, "0.1.0");
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the training job must not be NULL"),
				 errhint("Call %s, which fills the job.", driver)));
	dl_pg_job_read(PG_GETARG_HEAPTUPLEHEADER(0), max_models, out);
}

void
dl_pg_job_setup(const DlPgTrainJob *job, DlSegModelDef *defs, DlSegSetup *setup)
{
	for (int k = 0; k < job->n_models; k++)
	{
		defs[k].arch_json = job->archs[k];
		defs[k].compile_params = job->compiles[k];
		defs[k].fit_params = job->fits[k];
	}
	memset(setup, 0, sizeof(*setup));
	setup->transport = job->transport;
	setup->caching = job->caching;
	setup->cluster = job->cluster;
	setup->source = job->source;
	setup->vars = job->vars;
	setup->validation = job->validation;
	setup->val_vars = job->val_vars;
	setup->nseg = job->nseg;
	setup->n_models = job->n_models;
	setup->models = defs;
	dl_seg_setup_prepare(setup);	/* the tables checked; the executor, the budget */
}

void
dl_pg_job_check_memory(const DlPgTrainJob *job, DlPgJobKind kind)
{
	DlPgJobModel *jm = palloc(sizeof(DlPgJobModel) * job->n_models);
	DlPgJob		lj;

	for (int k = 0; k < job->n_models; k++)
	{
		jm[k].arch = job->archs[k];
		jm[k].compile_params = job->compiles[k];
		jm[k].fit_params = job->fits[k];
		jm[k].what = kind == DL_PG_JOB_FIT ? "the model" : psprintf("mst_key %d", job->mst_keys[k]);
	}
	memset(&lj, 0, sizeof(lj));
	lj.kind = job->transport == DL_TRANSPORT_WORKERS ? kind : DL_PG_JOB_DISTRIBUTED;
	lj.n_models = job->n_models;
	lj.models = jm;
	lj.num_iterations = job->num_iterations;
	lj.metrics_frequency = job->freq;
	lj.nseg = job->nseg;
	lj.keep_best = job->early_stop.enabled && job->early_stop.restore_best;
	(void) dl_limits_check_job(&lj);
	pfree(jm);
}
