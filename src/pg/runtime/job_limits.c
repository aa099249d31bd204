/*-------------------------------------------------------------------------
 *
 * job_limits.c
 *	  The memory check of a whole job against madlib_dl.max_model_memory
 *	  (dl_limits_check_job, dl_limits_fit_batch; from SQL
 *	  madlib_dl._check_model_memory and madlib_dl._partition_budget).
 *
 * Split from limits.c, which holds the GUCs and the per-model checks that
 * pg_model.c calls: this file parses architectures (pg_model.c), so it
 * sits above both and no file calls it back (scripts/check-layers.py).
 *
 * IDENTIFICATION
 *	  src/pg/runtime/job_limits.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

#include <limits.h>
#include <math.h>
#include <unistd.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_visit.h"

#include "pg_limits.h"
#include "pg_model.h"
#include "segments.h"

/*
 * Bytes per metric point of one model: the six history arrays of the C
 * function (five float8 and one int4: 44), its result arrays and their
 * Datum temporaries (92), and the driver's copy (44).
 */
#define HISTORY_BYTES_PER_POINT 180.0

/*
 * fit_multiple: evaluation sums (a copy of a DlSegStats without its
 * metric sums block, and its pointer) and the visit order (an int) per
 * model and segment, priced by sizeof; the metric sums a model keeps are
 * JobModelInfo's metric_sums.
 */
#define FM_BYTES_PER_MODEL_SEGMENT \
	((double) (offsetof(DlSegStats, msum) + sizeof(DlSegStats *) + sizeof(int)))

/*
 * Bytes per metric point and metric of a model whose compile_params keep
 * metric sums: each metric's training and validation series (a double, a
 * Datum and the metrics jsonb's text of at most 24 bytes each).
 */
#define HISTORY_BYTES_PER_POINT_METRIC (2 * 40.0)

/* fit_multiple: training loss sums per model and iteration of a metrics window. */
#define FM_BYTES_PER_MODEL_WINDOW 16.0

/* Most metric points: a history array is one palloc of Datums. */
#define MAX_METRIC_POINTS ((int64) (MaxAllocSize / sizeof(Datum)))

/* ---------------------------------------------------------------------
 * Jobs
 * --------------------------------------------------------------------- */

/* What the check needs of one model of a job. */
typedef struct JobModelInfo
{
	const char *what;
	size_t		n_params;
	DlMemoryEstimate train;		/* training model (the fit kinds) */
	DlMemoryEstimate state;		/* model that only holds states */
	DlMemoryEstimate infer;		/* inference model (EVALUATE, PREDICT) */
	double		averaging;		/* fit's double-precision averaging buffer */
	double		shuffle;		/* a training model's row order of a window */
	double		io;				/* PREDICT: one batch's inputs and outputs */
	double		metric_point;	/* the fit kinds: bytes per metric point of
								 * its metrics' series (several metrics) */
	double		metric_sums;	/* bytes of one evaluation's metric sums */
} JobModelInfo;

/* What one process of a job holds, by part. */
typedef struct JobParts
{
	DlMemoryEstimate models;	/* the models it holds at once, summed */
	double		slots;			/* model states: shared memory, or bytea values */
	double		averaging;		/* averaging buffers */
	double		shuffle;		/* the training models' row orders (dl_epoch.h) */
	double		history;		/* metric histories and per-model arrays */
	double		io;				/* predict's batch */
	double		weights;		/* the trained weights returned */
	double		total;
} JobParts;

static void
est_add(DlMemoryEstimate *sum, const DlMemoryEstimate *e)
{
	sum->weights += e->weights;
	sum->gradients += e->gradients;
	sum->optimizer += e->optimizer;
	sum->activations += e->activations;
	sum->im2col += e->im2col;
	sum->onednn_scratch += e->onednn_scratch;
	sum->bookkeeping += e->bookkeeping;
	sum->total += e->total;
}

static int
cmp_train_desc(const void *a, const void *b)
{
	double		x = (*(const JobModelInfo *const *) a)->train.total;
	double		y = (*(const JobModelInfo *const *) b)->train.total;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Parse (never build) model jm and estimate what job needs of it. */
static void
job_model_info(const DlPgJob *job, const DlPgJobModel *jm, JobModelInfo *info)
{
	DlPgModel  *m = dl_pg_model_parse(jm->arch, strlen(jm->arch), jm->compile_params,
									  jm->fit_params, CurrentMemoryContext);

	memset(info, 0, sizeof(*info));
	info->what = jm->what;
	info->n_params = m->spec->n_params;
	if (job->kind == DL_PG_JOB_EVALUATE || job->kind == DL_PG_JOB_PREDICT)
	{
		int64		in = dl_pg_model_row_width(m);
		int64		K = 0;

		for (int k = 0; k < m->spec->n_outputs; k++)
			K += dl_pg_model_output_width_k(m, k);

		dl_pg_model_estimate(m, DL_PG_MODEL_INFER, job->batch_size, &info->infer);
		if (job->kind == DL_PG_JOB_PREDICT)
			info->io = (double) job->batch_size * (double) (in + K) * sizeof(float) +
				(double) K * sizeof(Datum);
	}
	else
	{
		if (!m->has_compile)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s has no compile_params", jm->what)));
		dl_pg_model_estimate(m, DL_PG_MODEL_TRAIN, 0, &info->train);
		dl_pg_model_estimate(m, DL_PG_MODEL_STATE, 0, &info->state);
		/* a double per weight and optimizer float */
		info->averaging = 2.0 * (info->state.state_blob - DL_BLOB_HEADER_SIZE);
		/* the one shuffle permutes the rows of a window: an int64 each */
		info->shuffle = (double) sizeof(int64) *
			(double) dl_epoch_window_rows(dl_pg_model_row_width(m));
		if (dl_compile_params_metric_sums_len(&m->compile) > 0)
		{
			info->metric_point = m->compile.n_metrics * HISTORY_BYTES_PER_POINT_METRIC;
			info->metric_sums = 2.0 * sizeof(double) * dl_compile_params_metric_sums_len(&m->compile);
		}
	}
	dl_pg_model_free(m);
}

/* What job_parts needs across the models of a job. */
typedef struct JobMax
{
	double		points;			/* metric points of a fit kind, else 0 */
	double		max_blob;		/* the largest state */
	const JobModelInfo *max_state;	/* the model of the largest state model */
	const JobModelInfo *max_train;	/* the model of the largest training model */
} JobMax;

/* fit: the master model, the leader's training model, its slots and history. */
static void
parts_fit(const DlPgJob *job, const JobModelInfo *m, const JobMax *x, JobParts *p)
{
	/* the master model and the leader's own training model */
	est_add(&p->models, &m->state);
	est_add(&p->models, &m->train);
	/* and the state an iteration began from (averaging_period) */
	p->averaging = m->averaging + m->state.state_blob;
	p->shuffle = m->shuffle;
	/* each slot: a state and its round record (dl_visit.h) */
	p->slots = (double) job->nseg * MAXALIGN(m->state.state_blob + DL_VISIT_ROUND_BYTES);
	p->history = x->points * (HISTORY_BYTES_PER_POINT + m->metric_point);
	p->weights = m->state.weights;
	/* early stopping's copy of the best state */
	if (job->keep_best)
		p->slots += m->state.state_blob;
}

/* fit_multiple: the leader's cache of built models, one state model, every model's slot. */
static void
parts_fit_multiple(const DlPgJob *job, JobModelInfo **ms, int n, const JobMax *x, JobParts *p)
{
	JobModelInfo **sorted = palloc(sizeof(JobModelInfo *) * n);

	/* the leader's cache of built models, and one state model */
	memcpy(sorted, ms, sizeof(JobModelInfo *) * n);
	qsort(sorted, n, sizeof(JobModelInfo *), cmp_train_desc);
	for (int i = 0; i < Min(n, DL_SEG_MODEL_CACHE); i++)
	{
		est_add(&p->models, &sorted[i]->train);
		p->shuffle += sorted[i]->shuffle;
	}
	est_add(&p->models, &x->max_state->state);
	for (int i = 0; i < n; i++)
	{
		p->slots += MAXALIGN(ms[i]->state.state_blob);
		p->weights += ms[i]->state.weights;
		/* early stopping's copy of its best state, in the leader */
		if (job->keep_best)
			p->slots += ms[i]->state.state_blob;
	}
	p->history = n * (x->points * HISTORY_BYTES_PER_POINT +
					  job->metrics_frequency * FM_BYTES_PER_MODEL_WINDOW +
					  job->nseg * FM_BYTES_PER_MODEL_SEGMENT);
	for (int i = 0; i < n; i++)
		p->history += x->points * ms[i]->metric_point + job->nseg * ms[i]->metric_sums;
	pfree(sorted);
}

/* distributed: a segment's training model, the coordinator's averaging and the states it holds. */
static void
parts_distributed(const DlPgJob *job, JobModelInfo **ms, int n, const JobMax *x, JobParts *p)
{
	/* a segment's training model, the coordinator's averaging */
	est_add(&p->models, &x->max_train->train);
	est_add(&p->models, &x->max_state->state);
	p->averaging = x->max_state->averaging;
	p->shuffle = x->max_train->shuffle;

	/*
	 * the transport's slots in the coordinator's memory (rounds.c): one per
	 * model, and fit (one model) one per segment; a round's states sent as
	 * bytea values; the one being trained, averaged and written
	 */
	for (int i = 0; i < n; i++)
	{
		p->slots += ms[i]->state.state_blob;
		p->weights += ms[i]->state.weights;
		if (job->keep_best)
			p->slots += ms[i]->state.state_blob;
	}
	if (n == 1)
		p->slots += (double) (job->nseg - 1) * x->max_blob;
	p->slots += (double) job->nseg * x->max_blob + 3 * x->max_blob;
	p->history = n * x->points * HISTORY_BYTES_PER_POINT;
	for (int i = 0; i < n; i++)
		p->history += x->points * ms[i]->metric_point;
}

/* The largest state and training models of the n models ms, and the job's metric points. */
static JobMax
job_max(const DlPgJob *job, JobModelInfo **ms, int n)
{
	JobMax		x;

	memset(&x, 0, sizeof(x));
	if (job->kind != DL_PG_JOB_EVALUATE && job->kind != DL_PG_JOB_PREDICT)
		x.points = (double) dl_limits_metric_points(job->num_iterations, job->metrics_frequency);
	for (int i = 0; i < n; i++)
	{
		if (x.max_state == NULL || ms[i]->state.total > x.max_state->state.total)
			x.max_state = ms[i];
		if (x.max_train == NULL || ms[i]->train.total > x.max_train->train.total)
			x.max_train = ms[i];
		x.max_blob = Max(x.max_blob, ms[i]->state.state_blob);
	}
	return x;
}

/*
 * What one process of job holds when it runs the n models ms: the
 * formulas of dl_limits_check_job (pg_limits.h).
 */
static void
job_parts(const DlPgJob *job, JobModelInfo **ms, int n, JobParts *p)
{
	JobMax		x = job_max(job, ms, n);

	memset(p, 0, sizeof(*p));
	switch (job->kind)
	{
		case DL_PG_JOB_FIT:
			parts_fit(job, ms[0], &x, p);
			break;
		case DL_PG_JOB_FIT_MULTIPLE:
			parts_fit_multiple(job, ms, n, &x, p);
			break;
		case DL_PG_JOB_DISTRIBUTED:
			parts_distributed(job, ms, n, &x, p);
			break;
		case DL_PG_JOB_EVALUATE:
		case DL_PG_JOB_PREDICT:
			est_add(&p->models, &ms[0]->infer);
			p->io = ms[0]->io;
			break;
	}
	p->total = p->models.total + p->slots + p->averaging + p->shuffle + p->history + p->io +
		p->weights;
}

/* ERROR 54000 when parts is over the limit; what names the model(s). */
static void
check_parts(const DlPgJob *job, const JobParts *p, const char *what, bool plural)
{
	StringInfoData detail;
	const char *advice;
	double		biggest;

	if (p->total <= dl_limits_bytes())	/* NaN is refused too */
		return;
	initStringInfo(&detail);
	appendStringInfo(&detail, "One process holds: models %s", dl_limits_size_text(p->models.total));
	dl_limits_append_estimate(&detail, &p->models, " (", ")");
	if (p->slots > 0)
		appendStringInfo(&detail, ", model states %s%s", dl_limits_size_text(p->slots),
						 job->kind == DL_PG_JOB_DISTRIBUTED ? " (bytea values)" :
						 psprintf(" (in shared memory, %d segment%s)", job->nseg,
								  job->nseg == 1 ? "" : "s"));
	if (p->averaging > 0)
		appendStringInfo(&detail, ", averaging buffer %s", dl_limits_size_text(p->averaging));
	if (p->shuffle >= 1024.0)
		appendStringInfo(&detail, ", shuffle order %s", dl_limits_size_text(p->shuffle));
	if (p->history >= 1024.0)
		appendStringInfo(&detail, ", metric history %s (%lld metric points)", dl_limits_size_text(p->history),
						 (long long) dl_limits_metric_points(job->num_iterations, job->metrics_frequency));
	if (p->io > 0)
		appendStringInfo(&detail, ", one batch of rows %s", dl_limits_size_text(p->io));
	if (p->weights >= 1024.0)
		appendStringInfo(&detail, ", returned weights %s", dl_limits_size_text(p->weights));
	appendStringInfoChar(&detail, '.');

	/* advise on the biggest part */
	biggest = Max(Max(p->slots, p->history), p->models.total);
	if (biggest == p->history)
		advice = "Compute metrics less often (a larger metrics_compute_frequency) or run fewer iterations";
	else if (biggest == p->slots && job->kind != DL_PG_JOB_DISTRIBUTED)
		advice = job->kind == DL_PG_JOB_FIT_MULTIPLE ?
			"Train fewer or smaller configurations in one call" :
			"Use a smaller model or fewer segments (distribution_rules of the preprocessor)";
	else if ((job->kind == DL_PG_JOB_PREDICT || job->kind == DL_PG_JOB_EVALUATE) &&
			 job->batch_size == 1)
		advice = "Even one row at a time is over the limit (batch_size cannot help): use a smaller "
			"model or smaller inputs";
	else if (job->kind == DL_PG_JOB_PREDICT || job->kind == DL_PG_JOB_EVALUATE)
		advice = psprintf("Pass a smaller batch_size (this ran " INT64_FORMAT " rows per forward pass)",
						  job->batch_size);
	else
		advice = dl_limits_model_advice(&p->models);
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("%s need%s about %s of memory per process, more than madlib_dl.max_model_memory (%s)",
					what, plural ? "" : "s", dl_limits_size_text(p->total), dl_limits_size_text(dl_limits_bytes())),
			 errdetail_internal("%s", detail.data),
			 errhint("%s", dl_limits_raise_hint(advice, p->total))));
}

/* What one process of an EVALUATE or PREDICT job of model m holds for batches of batch rows. */
static double
infer_total(const DlPgModel *m, DlPgJobKind kind, int64 batch)
{
	DlMemoryEstimate est;
	double		total;

	dl_pg_model_estimate(m, DL_PG_MODEL_INFER, batch, &est);
	total = est.total;
	if (kind == DL_PG_JOB_PREDICT)
	{
		int64		in = dl_pg_model_row_width(m);
		int64		K = 0;

		for (int k = 0; k < m->spec->n_outputs; k++)
			K += dl_pg_model_output_width_k(m, k);
		/* the same formula as job_model_info's io */
		total += (double) batch * (double) (in + K) * sizeof(float) + (double) K * sizeof(Datum);
	}
	return total;
}

int64
dl_limits_fit_batch(const DlPgJob *job, int64 want)
{
	DlPgModel  *m;
	int64		lo;
	int64		hi;

	if ((job->kind != DL_PG_JOB_EVALUATE && job->kind != DL_PG_JOB_PREDICT) || job->n_models != 1)
		elog(ERROR, "madlib_dl: batch fitting of a job that is not one inference model");
	if (want <= 1)
		return 1;
	m = dl_pg_model_parse(job->models[0].arch, strlen(job->models[0].arch), NULL, NULL,
						  CurrentMemoryContext);
	if (infer_total(m, job->kind, want) <= dl_limits_bytes())
	{
		dl_pg_model_free(m);
		return want;
	}
	/* the largest batch in [1, want) that fits; 1 when none does */
	lo = 1;
	hi = want - 1;
	while (lo < hi)
	{
		int64		mid = lo + (hi - lo + 1) / 2;

		CHECK_FOR_INTERRUPTS();
		if (infer_total(m, job->kind, mid) <= dl_limits_bytes())
			lo = mid;
		else
			hi = mid - 1;
	}
	dl_pg_model_free(m);
	return lo;
}

/* ERROR unless job's counts (models, iterations, metrics, segments, batch) are in range. */
static void
check_job_args(const DlPgJob *job)
{
	bool		fit_kind = job->kind == DL_PG_JOB_FIT || job->kind == DL_PG_JOB_FIT_MULTIPLE ||
		job->kind == DL_PG_JOB_DISTRIBUTED;
	int64		points;

	if (job->n_models < 1 || (job->kind != DL_PG_JOB_FIT_MULTIPLE &&
							  job->kind != DL_PG_JOB_DISTRIBUTED && job->n_models != 1))
		elog(ERROR, "madlib_dl: memory check of %d models", job->n_models);
	if (!fit_kind)
	{
		if (job->batch_size < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("batch_size " INT64_FORMAT " must be at least 1", job->batch_size)));
		return;
	}
	if (job->num_iterations < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("num_iterations must be at least 1, got %d", job->num_iterations),
				 errhint("Give the number of iterations to train, 1 or more.")));
	if (job->metrics_frequency < 1 || job->metrics_frequency > job->num_iterations)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("metrics_compute_frequency must be between 1 and %d, got %d",
						job->num_iterations, job->metrics_frequency),
				 errhint("Give a frequency between 1 and num_iterations, or NULL to compute metrics at the last iteration only.")));
	points = dl_limits_metric_points(job->num_iterations, job->metrics_frequency);
	if (points > MAX_METRIC_POINTS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("num_iterations %d with metrics_compute_frequency %d gives " INT64_FORMAT " metric points, more than the " INT64_FORMAT " a metric history holds",
						job->num_iterations, job->metrics_frequency, points, MAX_METRIC_POINTS),
				 errhint("Compute metrics less often (a larger metrics_compute_frequency).")));
	if ((job->kind == DL_PG_JOB_FIT || job->kind == DL_PG_JOB_FIT_MULTIPLE) &&
		(job->nseg < 1 || job->nseg > DL_SEG_MAX))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of segments %d is out of range", job->nseg),
				 errhint("Use 1 to %d segments (distribution_rules of the preprocessor).", DL_SEG_MAX)));
}

/*
 * Estimate model i of job into *info and check it alone: its weights as
 * one value, its state as one bytea (distributed), and, in a job of
 * several, its own parts, so that the message names the one too large.
 */
static void
check_one_model(const DlPgJob *job, int i, JobModelInfo *info)
{
	JobParts	parts;

	job_model_info(job, &job->models[i], info);
	/* the trained weights are written as one model_weights value */
	dl_limits_check_weights(info->n_params, info->what);
	if (job->kind == DL_PG_JOB_DISTRIBUTED && info->state.state_blob > MAX_BYTEA_PAYLOAD)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the state of %s (weights and optimizer state) takes %s, more than one bytea value holds",
						info->what, dl_limits_size_text(info->state.state_blob)),
				 errdetail("On Greenplum and PL/Proxy clusters a model's state moves between the segments as one bytea value, of at most 1 GB."),
				 errhint("Use a smaller model, or an optimizer with less state (SGD without momentum keeps none).")));
	/* each model alone, so that the message names the one too large */
	if (job->n_models > 1)
	{
		job_parts(job, &info, 1, &parts);
		check_parts(job, &parts, info->what, false);
	}
}

double
dl_limits_check_job(const DlPgJob *job)
{
	MemoryContext cxt;
	MemoryContext old;
	JobModelInfo *infos;
	JobModelInfo **ptrs;
	JobParts	parts;

	check_job_args(job);
	cxt = AllocSetContextCreate(CurrentMemoryContext, "madlib_dl memory check",
								ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(cxt);
	infos = palloc0(sizeof(JobModelInfo) * job->n_models);
	ptrs = palloc(sizeof(JobModelInfo *) * job->n_models);
	for (int i = 0; i < job->n_models; i++)
	{
		CHECK_FOR_INTERRUPTS();
		ptrs[i] = &infos[i];
		check_one_model(job, i, &infos[i]);
	}
	job_parts(job, ptrs, job->n_models, &parts);
	check_parts(job, &parts,
				job->n_models > 1 ? psprintf("the %d model configurations", job->n_models) :
				infos[0].what, job->n_models > 1);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return parts.total;
}

/* ---------------------------------------------------------------------
 * SQL
 * --------------------------------------------------------------------- */

PG_FUNCTION_INFO_V1(madlib_dl__partition_budget);

/*
 * madlib_dl._partition_budget(num_segments integer) RETURNS bigint: the
 * per-segment budget in bytes (dl_limits_partition_budget) for a job of
 * num_segments segments on this server (NULL: the default count).
 */
Datum
madlib_dl__partition_budget(PG_FUNCTION_ARGS)
{
	int			nseg = PG_ARGISNULL(0) ? dl_seg_default_count() : PG_GETARG_INT32(0);

	PG_RETURN_INT64((int64) dl_limits_partition_budget(Max(nseg, 1)));
}

/*
 * Element i of a text[] argument (NULL when the array or the element is
 * NULL), or ERROR when the array does not have n elements.
 */
static char **
text_array_arg(FunctionCallInfo fcinfo, int argno, int n, const char *name, bool nullable)
{
	char	  **out = palloc0(sizeof(char *) * Max(n, 1));
	Datum	   *d;
	bool	   *nulls;
	int			cnt;

	if (PG_ARGISNULL(argno))
	{
		if (!nullable)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not be NULL", name)));
		return out;
	}
	deconstruct_array(PG_GETARG_ARRAYTYPE_P(argno), TEXTOID, -1, false, TYPALIGN_INT,
					  &d, &nulls, &cnt);
	if (cnt != n)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s has %d elements, expected %d", name, cnt, n)));
	for (int i = 0; i < n; i++)
	{
		if (nulls[i] && !nullable)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s element %d is NULL", name, i + 1)));
		out[i] = nulls[i] ? NULL : TextDatumGetCString(d[i]);
	}
	return out;
}

/* The models of _check_model_memory's arrays (arguments 1 to 4) into job. */
static void
job_models_arg(FunctionCallInfo fcinfo, DlPgJob *job)
{
	ArrayType  *a = PG_GETARG_ARRAYTYPE_P(1);
	char	  **archs;
	char	  **compiles;
	char	  **fits;
	char	  **names;
	DlPgJobModel *models;
	int			n;

	if (ARR_NDIM(a) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("model_archs must be a one-dimensional array")));
	n = ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a));
	if (n < 1 || n > DL_SEG_MAX_MODELS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%d model configurations, expected 1 to %d", n, DL_SEG_MAX_MODELS)));
	archs = text_array_arg(fcinfo, 1, n, "model_archs", false);
	compiles = text_array_arg(fcinfo, 2, n, "compile_params", job->kind == DL_PG_JOB_PREDICT);
	fits = text_array_arg(fcinfo, 3, n, "fit_params", true);
	names = text_array_arg(fcinfo, 4, n, "names", true);
	models = palloc0(sizeof(DlPgJobModel) * n);
	for (int i = 0; i < n; i++)
	{
		models[i].arch = archs[i];
		models[i].compile_params = compiles[i];
		models[i].fit_params = fits[i];
		models[i].what = names[i] != NULL ? names[i] : psprintf("model %d", i + 1);
	}
	job->n_models = n;
	job->models = models;
}

PG_FUNCTION_INFO_V1(madlib_dl__check_model_memory);

/*
 * madlib_dl._check_model_memory(job text, model_archs text[],
 *     compile_params text[], fit_params text[], names text[],
 *     num_iterations int DEFAULT 1, metrics_compute_frequency int
 *     DEFAULT NULL, num_segments int DEFAULT 1, batch_size int DEFAULT
 *     NULL) RETURNS float8
 *
 * dl_limits_check_job from SQL: job is 'fit', 'fit_multiple',
 * 'distributed', 'evaluate' or 'predict'; one element per model in the
 * arrays (compile_params NULL for predict, fit_params elements may be
 * NULL, names NULL: "model 1", ...).  metrics_compute_frequency NULL is
 * num_iterations; batch_size NULL is 1024 (evaluate, predict).  Returns
 * the estimate in bytes, or raises 54000.
 */
Datum
madlib_dl__check_model_memory(PG_FUNCTION_ARGS)
{
	DlPgJob		job;
	char	   *kind;

	memset(&job, 0, sizeof(job));
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("job and model_archs must not be NULL")));
	kind = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (strcmp(kind, "fit") == 0)
		job.kind = DL_PG_JOB_FIT;
	else if (strcmp(kind, "fit_multiple") == 0)
		job.kind = DL_PG_JOB_FIT_MULTIPLE;
	else if (strcmp(kind, "distributed") == 0)
		job.kind = DL_PG_JOB_DISTRIBUTED;
	else if (strcmp(kind, "evaluate") == 0)
		job.kind = DL_PG_JOB_EVALUATE;
	else if (strcmp(kind, "predict") == 0)
		job.kind = DL_PG_JOB_PREDICT;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown job \"%s\"", kind),
				 errhint("Use fit, fit_multiple, distributed, evaluate or predict.")));
	job_models_arg(fcinfo, &job);
	job.num_iterations = PG_ARGISNULL(5) ? 1 : PG_GETARG_INT32(5);
	job.metrics_frequency = PG_ARGISNULL(6) ? job.num_iterations : PG_GETARG_INT32(6);
	job.nseg = PG_ARGISNULL(7) ? 1 : PG_GETARG_INT32(7);
	job.batch_size = PG_ARGISNULL(8) ? 1024 : PG_GETARG_INT32(8);
	PG_RETURN_FLOAT8(dl_limits_check_job(&job));
}
