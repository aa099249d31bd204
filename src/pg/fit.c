/*-------------------------------------------------------------------------
 *
 * fit.c
 *	  madlib_dl._fit_run: train one model by model averaging over the
 *	  virtual segments, and madlib_dl._check_params.
 *
 * One call runs the whole fit (the PL/pgSQL driver in src/sql/30_fit.sql
 * validates the arguments before and writes the output tables after):
 *
 *	 state0 = initial weights (given, or random from the seed), optimizer
 *	          state reset; copied into every segment's slot
 *	 for i in 1..num_iterations:
 *	     every segment k, at the same time: read slot k, reseed the
 *	         shuffle/dropout generator with f(seed, i, k), train `epochs`
 *	         passes over its partition, write slot k with its sample count
 *	     leader: average weights AND optimizer slots over the segments,
 *	         weighted by samples seen, in double, in segment order; the
 *	         optimizer step count is the largest of the segments' (they
 *	         agree up to partition sizes); write the average into every
 *	         slot
 *	     on metric iterations (every metrics_compute_frequency and the
 *	         last): every segment evaluates the average on its training
 *	         and validation partitions; sums are combined in segment order
 *	     NOTICE with the progress
 *
 * With one segment the average of one state is that state exactly (n*w/n
 * is exact in double for n < 2^29), so fit on one segment is plain
 * sequential mini-batch training.
 *
 * IDENTIFICATION
 *	  src/pg/fit.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/array.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_params.h"

#include "pg_glue.h"
#include "pg_limits.h"
#include "pg_model.h"
#include "pg_util.h"
#include "progress.h"
#include "segments.h"

/* Metric history, one entry per metrics point. */
typedef struct FitHistory
{
	int			n;
	double	   *train_loss;		/* (metric points) */
	double	   *train_metric;
	double	   *val_loss;
	double	   *val_metric;
	int32	   *iters;
	double	   *elapsed;
} FitHistory;

/*
 * Average the segments' states into master, weighted by the samples each
 * saw, in segment order.  acc has room for P * (1 + n_slots) doubles.
 */
static void
average_states(DlSegments *segs, int nseg, DlPgModel *master, double *acc)
{
	DlModel    *m = master->model;
	size_t		P = dl_model_n_params(m);
	DlOptimState *opt = dl_model_optim(m);
	size_t		S = opt != NULL ? (size_t) opt->n_slots * P : 0;
	double		total = 0;
	int64		iterations = 0;
	double		m_schedule = 1.0;
	bool		any = false;
	DlError		err;
	float	   *w;

	dl_error_clear(&err);
	memset(acc, 0, sizeof(double) * (P + S));
	for (int k = 0; k < nseg; k++)
	{
		int64		samples = 0;
		double		wk;

		CHECK_FOR_INTERRUPTS();
		if (dl_seg_stats(segs, k)->samples_seen <= 0)
			continue;
		dl_pg_check(dl_blob_read(m, dl_seg_slot(segs, k), dl_seg_slot_len(segs, k), &samples, &err), &err);
		if (samples <= 0)
			continue;
		wk = (double) samples;
		total += wk;
		w = dl_model_params(m);
		for (size_t i = 0; i < P; i++)
			acc[i] += wk * (double) w[i];
		if (opt != NULL)
		{
			for (size_t i = 0; i < S; i++)
				acc[P + i] += wk * (double) opt->slots[i];
			if (!any || opt->iterations > iterations)
			{
				iterations = opt->iterations;
				m_schedule = opt->m_schedule;
			}
		}
		any = true;
	}
	if (!any)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("no segment has training data"),
				 errhint("The source table is empty; preprocess a table with rows.")));
	w = dl_model_params(m);
	for (size_t i = 0; i < P; i++)
		w[i] = (float) (acc[i] / total);
	if (opt != NULL)
	{
		for (size_t i = 0; i < S; i++)
			opt->slots[i] = (float) (acc[P + i] / total);
		opt->iterations = iterations;
		opt->m_schedule = m_schedule;
	}
}

/* Write master's state (samples 0) into the first nseg slots. */
static void
broadcast_state(DlSegments *segs, int nseg, DlPgModel *master, size_t blob_size)
{
	DlError		err;
	uint8	   *first = dl_seg_slot(segs, 0);

	dl_error_clear(&err);
	dl_pg_check(dl_blob_write(master->model, 0, first, blob_size, &err), &err);
	dl_seg_set_slot_len(segs, 0, blob_size);
	for (int k = 1; k < nseg; k++)
	{
		memcpy(dl_seg_slot(segs, k), first, blob_size);
		dl_seg_set_slot_len(segs, k, blob_size);
	}
}

PG_FUNCTION_INFO_V1(madlib_dl__fit_run);

/*
 * madlib_dl._fit_run(source regclass, x_col text, y_col text,
 *     validation regclass, val_x_col text, val_y_col text,
 *     model_arch json, init_weights bytea, compile_params text,
 *     fit_params text, num_iterations int, metrics_compute_frequency int,
 *     num_segments int) RETURNS madlib_dl._fit_result
 *
 * The driver has validated every argument; this checks again only what
 * would otherwise crash or loop.
 */
Datum
madlib_dl__fit_run(PG_FUNCTION_ARGS)
{
	Oid			source;
	char	   *x_col;
	char	   *y_col;
	Oid			validation = InvalidOid;
	char	   *val_x_col = NULL;
	char	   *val_y_col = NULL;
	char	   *arch;
	char	   *compile;
	char	   *fitp;
	int32		num_iterations;
	int32		freq;
	int32		nseg;
	MemoryContext fcxt;
	MemoryContext old;
	DlPgModel  *master;
	DlError		err;
	size_t		blob_size;
	size_t		P;
	size_t		n_acc;
	double	   *acc;
	DlSegSetup	setup;
	DlSegModelDef def;
	DlSegments *segs;
	DlSegCommand cmds[DL_SEG_MAX];
	FitHistory	h;
	instr_time	start;
	bool		has_metric;
	bool		has_val;
	int64		n_points;
	int			launched;
	int			diverged_at;	/* iteration whose training diverged, 0 if none */
	bytea	   *weights;
	TupleDesc	tupdesc;
	Datum		values[8];
	bool		nulls[8];

	for (int i = 0; i < 13; i++)
		if (PG_ARGISNULL(i) && i != 3 && i != 4 && i != 5 && i != 7 && i != 9)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("argument %d of _fit_run must not be NULL", i + 1)));
	source = PG_GETARG_OID(0);
	x_col = dl_pg_text_arg(fcinfo, 1);
	y_col = dl_pg_text_arg(fcinfo, 2);
	if (!PG_ARGISNULL(3))
	{
		validation = PG_GETARG_OID(3);
		val_x_col = dl_pg_text_arg(fcinfo, 4);
		val_y_col = dl_pg_text_arg(fcinfo, 5);
		if (val_x_col == NULL || val_y_col == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("validation column names must not be NULL")));
	}
	arch = dl_pg_text_arg(fcinfo, 6);
	compile = dl_pg_text_arg(fcinfo, 8);
	fitp = dl_pg_text_arg(fcinfo, 9);
	num_iterations = PG_GETARG_INT32(10);
	freq = PG_GETARG_INT32(11);
	nseg = PG_GETARG_INT32(12);
	if (num_iterations < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("num_iterations must be at least 1, got %d", num_iterations)));
	if (freq < 1 || freq > num_iterations)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("metrics_compute_frequency must be between 1 and %d, got %d", num_iterations, freq)));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "madlib_dl: _fit_run must return a composite type");

	INSTR_TIME_SET_CURRENT(start);
	dl_pg_set_blas_threads();

	/* what the leader will hold, before anything is allocated */
	{
		DlPgJobModel jm = {arch, compile, fitp, "the model"};
		DlPgJob		job = {DL_PG_JOB_FIT, 1, &jm, num_iterations, freq, nseg, 0};

		(void) dl_limits_check_job(&job);
	}
	n_points = dl_limits_metric_points(num_iterations, freq);

	fcxt = AllocSetContextCreate(CurrentMemoryContext, "madlib_dl fit", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(fcxt);
	dl_error_clear(&err);

	/* the master model: initial state, then the averages */
	master = dl_pg_model_build(arch, strlen(arch), compile, fitp, DL_PG_MODEL_STATE, 0, fcxt);
	dl_pg_check(dl_model_init_weights(master->model, master->fit.seed, &err), &err);
	if (!PG_ARGISNULL(7))
		dl_pg_model_set_weights(master, PG_GETARG_BYTEA_PP(7));
	dl_pg_check(dl_blob_size(master->model, &blob_size, &err), &err);
	P = dl_model_n_params(master->model);
	n_acc = P;
	if (dl_model_optim(master->model) != NULL)
		n_acc = add_size(P, mul_size(P, (Size) dl_model_optim(master->model)->n_slots));
	acc = MemoryContextAllocExtended(fcxt, mul_size(n_acc, sizeof(double)), MCXT_ALLOC_HUGE);
	has_metric = master->compile.metric != DL_METRIC_NONE;
	has_val = OidIsValid(validation);

	/* one entry per metric point (the check above bounds their number) */
	memset(&h, 0, sizeof(h));
	h.train_loss = palloc0(sizeof(double) * n_points);
	h.train_metric = palloc0(sizeof(double) * n_points);
	h.val_loss = palloc0(sizeof(double) * n_points);
	h.val_metric = palloc0(sizeof(double) * n_points);
	h.iters = palloc0(sizeof(int32) * n_points);
	h.elapsed = palloc0(sizeof(double) * n_points);

	/* segments: one worker each, the leader covers the rest */
	def.arch_json = arch;
	def.compile_params = compile;
	def.fit_params = fitp;
	memset(&setup, 0, sizeof(setup));
	setup.source = source;
	setup.x_col = x_col;
	setup.y_col = y_col;
	setup.validation = validation;
	setup.val_x_col = val_x_col;
	setup.val_y_col = val_y_col;
	setup.nseg = nseg;
	setup.n_models = 1;
	setup.models = &def;
	setup.n_slots = nseg;
	setup.slot_size = blob_size;
	dl_progress_begin("fit", dl_progress_relname(source), NULL, num_iterations, 1);
	segs = dl_seg_start(&setup, fcxt);
	launched = dl_seg_workers_launched(segs);
	broadcast_state(segs, nseg, master, blob_size);

	diverged_at = 0;
	for (int it = 1; it <= num_iterations; it++)
	{
		double		loss_sum = 0;
		double		metric_sum = 0;
		int64		n = 0;
		bool		metric_point = (it % freq == 0) || it == num_iterations;
		StringInfoData msg;

		for (int k = 0; k < nseg; k++)
		{
			memset(&cmds[k], 0, sizeof(DlSegCommand));
			cmds[k].kind = DL_SEG_CMD_TRAIN;
			cmds[k].model = 0;
			cmds[k].slot = k;
			cmds[k].iteration = it;
			cmds[k].catch_divergence = true;
		}
		dl_seg_run(segs, cmds);
		for (int k = 0; k < nseg; k++)
		{
			const DlSegStats *st = dl_seg_stats(segs, k);

			if (st->diverged)
			{
				/*
				 * Stop here: master still holds the average of the last
				 * finite iteration, and the metric history so far is kept.
				 */
				ereport(WARNING,
						(errcode(ERRCODE_DATA_EXCEPTION),
						 errmsg("training diverged in iteration %d on segment %d: %s", it, k, st->message),
						 errdetail("fit stops and keeps the weights and metrics of iteration %d.", it - 1),
						 errhint("Lower the learning rate, normalize the features, or clip gradients with clipnorm.")));
				diverged_at = it;
				break;
			}
			loss_sum += st->train_loss_sum;
			n += st->train_n;
		}
		if (diverged_at > 0)
			break;
		average_states(segs, nseg, master, acc);
		broadcast_state(segs, nseg, master, blob_size);

		initStringInfo(&msg);
		if (metric_point)
		{
			double		vl = 0;
			double		vm = 0;
			int64		vn = 0;
			int			j = h.n++;

			if (j >= n_points)
				elog(ERROR, "madlib_dl: more metric points than " INT64_FORMAT, n_points);

			for (int k = 0; k < nseg; k++)
				cmds[k].kind = DL_SEG_CMD_EVAL;
			dl_seg_run(segs, cmds);
			loss_sum = 0;
			n = 0;
			for (int k = 0; k < nseg; k++)
			{
				const DlSegStats *st = dl_seg_stats(segs, k);

				loss_sum += st->train_loss_sum;
				metric_sum += st->train_metric_sum;
				n += st->train_n;
				vl += st->val_loss_sum;
				vm += st->val_metric_sum;
				vn += st->val_n;
			}
			h.iters[j] = it;
			h.train_loss[j] = dl_pg_ratio(loss_sum, n);
			h.train_metric[j] = dl_pg_ratio(metric_sum, n);
			h.val_loss[j] = dl_pg_ratio(vl, vn);
			h.val_metric[j] = dl_pg_ratio(vm, vn);
			h.elapsed[j] = dl_pg_seconds_since(start);
			appendStringInfo(&msg, "training loss %.4f", h.train_loss[j]);
			if (has_metric)
				appendStringInfo(&msg, ", %s %.4f",
								 dl_metric_name(master->compile.metric), h.train_metric[j]);
			if (has_val)
			{
				appendStringInfo(&msg, "; validation loss %.4f", h.val_loss[j]);
				if (has_metric)
					appendStringInfo(&msg, ", %s %.4f",
									 dl_metric_name(master->compile.metric), h.val_metric[j]);
			}
		}
		else
			appendStringInfo(&msg, "mean training loss during the iteration %.4f", dl_pg_ratio(loss_sum, n));
		dl_progress_update(it, 1, has_metric && metric_point ? (has_val ? h.val_metric[h.n - 1] : h.train_metric[h.n - 1]) : get_float8_nan(), dl_pg_seconds_since(start), -1);
		ereport(NOTICE,
				(errmsg("iteration %d of %d: %s; %.2f s, about %.1f s left", it, num_iterations, msg.data,
						dl_pg_seconds_since(start), dl_progress_eta(dl_pg_seconds_since(start), it, num_iterations))));
	}

	dl_seg_finish(segs);
	dl_progress_end();

	MemoryContextSwitchTo(old);
	weights = dl_pg_model_get_weights(master);
	memset(nulls, 0, sizeof(nulls));
	values[0] = PointerGetDatum(weights);
	values[1] = PointerGetDatum(dl_pg_float8_array(h.train_loss, h.n));
	if (has_metric)
		values[2] = PointerGetDatum(dl_pg_float8_array(h.train_metric, h.n));
	else
		nulls[2] = true;
	if (has_val)
	{
		values[3] = PointerGetDatum(dl_pg_float8_array(h.val_loss, h.n));
		if (has_metric)
			values[4] = PointerGetDatum(dl_pg_float8_array(h.val_metric, h.n));
		else
			nulls[4] = true;
	}
	else
		nulls[3] = nulls[4] = true;
	values[5] = PointerGetDatum(dl_pg_int4_array(h.iters, NULL, h.n));
	values[6] = PointerGetDatum(dl_pg_float8_array(h.elapsed, h.n));
	values[7] = Int32GetDatum(launched);
	MemoryContextDelete(fcxt);

	tupdesc = BlessTupleDesc(tupdesc);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

PG_FUNCTION_INFO_V1(madlib_dl__check_params);

/*
 * madlib_dl._check_params(compile_params text, fit_params text,
 *     OUT loss_type text, OUT metrics_type text[], OUT seed bigint,
 *     OUT epochs int, OUT batch_size bigint)
 *
 * Parse both strings with the engine (ERROR with its message otherwise)
 * and return what the summary tables record.  metrics_type is NULL when
 * compile_params has no metric.
 */
Datum
madlib_dl__check_params(PG_FUNCTION_ARGS)
{
	DlCompileParams cp;
	DlFitParams fp;
	DlError		err;
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5] = {false, false, false, false, false};
	char	   *compile;
	char	   *fitp;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("compile_params must not be NULL"),
				 errhint("Give at least loss and optimizer, e.g. 'loss=''categorical_crossentropy'', optimizer=''Adam(lr=0.001)''.")));
	compile = text_to_cstring(PG_GETARG_TEXT_PP(0));
	fitp = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	dl_error_clear(&err);
	dl_pg_check(dl_compile_params_parse(compile, &cp, &err), &err);
	dl_pg_check(dl_fit_params_parse(fitp, &fp, &err), &err);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "madlib_dl: _check_params must return a composite type");

	values[0] = CStringGetTextDatum(dl_loss_name(cp.loss));
	if (cp.metric != DL_METRIC_NONE)
	{
		Datum		m = CStringGetTextDatum(dl_metric_name(cp.metric));

		values[1] = PointerGetDatum(construct_array(&m, 1, TEXTOID, -1, false, TYPALIGN_INT));
	}
	else
		nulls[1] = true;
	values[2] = Int64GetDatum((int64) fp.seed);
	values[3] = Int32GetDatum(fp.epochs);
	values[4] = Int64GetDatum(fp.batch_size);
	tupdesc = BlessTupleDesc(tupdesc);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

PG_FUNCTION_INFO_V1(madlib_dl__check_input_shape);

/*
 * madlib_dl._check_input_shape(model_arch json, x_shape int[], y_shape int[])
 * RETURNS void: dl_pg_model_check_input for the SQL drivers, on the
 * parsed architecture (no model is built).  y_shape may be NULL.
 */
Datum
madlib_dl__check_input_shape(PG_FUNCTION_ARGS)
{
	char	   *arch;
	DlPgModel  *m;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model_arch and the input shape must not be NULL")));
	arch = text_to_cstring(PG_GETARG_TEXT_PP(0));
	/* the shapes come from the spec: no model is built */
	m = dl_pg_model_parse(arch, strlen(arch), NULL, NULL, CurrentMemoryContext);
	dl_pg_model_check_input(m, PG_GETARG_ARRAYTYPE_P(1),
							PG_ARGISNULL(2) ? NULL : PG_GETARG_ARRAYTYPE_P(2));
	dl_pg_model_free(m);
	PG_RETURN_VOID();
}
