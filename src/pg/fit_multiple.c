/*-------------------------------------------------------------------------
 *
 * fit_multiple.c
 *	  madlib_dl._fit_multiple_run: train many model configurations at once
 *	  by model hopper parallelism (MOP) over the virtual segments.
 *
 * One call runs the whole job (the PL/pgSQL driver in
 * src/sql/60_fit_multiple.sql validates the arguments before and writes
 * the output tables after):
 *
 *	 every model k (K of them): state_k = initial weights (given, or random
 *	     from its seed), optimizer state reset, in DSM slot k sized by its
 *	     state; no other copy of it exists
 *	 visit order: a permutation of the models, seeded (schedule_seed),
 *	     then stably sorted by estimated cost (parameters x epochs,
 *	     largest first) so that models of similar cost train side by side;
 *	     padded with empty places to M = max(K, N)
 *	 for i in 1..num_iterations:
 *	     every live model visits every segment once, the model at place p
 *	     visiting segments (p - h) mod M for h = 0..M-1 (those < N): the
 *	     MADlib rotation, where at hop h segment s holds place (s + h) mod
 *	     M.  Executed without a barrier per hop or per iteration: a
 *	     segment that finishes takes the next model that is free and due
 *	     on it (lowest iteration, then fewest visits, then place order),
 *	     and a model that has visited every segment goes on to its next
 *	     iteration; only metrics points wait for all models.  On a
 *	     segment, the model trains
 *	     its `epochs` passes over that partition, reading its state from
 *	     its slot and writing it back, so the state moves without a copy
 *	     and one model is never on two segments at once
 *	     on metric iterations: every live model is evaluated on every
 *	         segment's training and validation partitions (slots are only
 *	         read, segments go at their own pace); sums in segment order
 *	     NOTICE: the best model so far
 * Over an iteration the model at place p meets each segment 0..N-1
 * exactly once.  A model whose training diverges (NaN/inf) keeps the
 * state it had before that visit, is not scheduled again and its metrics
 * stop.
 *
 * The result of model k depends only on its definition, its initial state
 * and the order of segments it visits (fixed by the schedule), never on
 * timing or on which process ran a segment.  With one segment and one
 * model this is exactly fit on one segment (same seeds, same data order).
 *
 * IDENTIFICATION
 *	  src/pg/fit_multiple.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_hopper.h"
#include "madlib_dl/dl_params.h"
#include "madlib_dl/dl_rng.h"

#include "pg_glue.h"
#include "pg_limits.h"
#include "pg_model.h"
#include "pg_util.h"
#include "progress.h"
#include "segments.h"

/* Everything the leader knows about one model configuration. */
typedef struct FmModel
{
	int32		mst_key;
	char	   *arch;
	char	   *compile;
	char	   *fit;			/* may be NULL */
	Size		state_size;		/* dl_blob_size */
	double		cost;			/* parameters x epochs: a cost estimate */
	bool		has_metric;
	bool		higher_is_better;	/* its metric is an accuracy */
	DlMetricKind metric;
	bool		diverged;
	int			diverged_iteration;
	/* history, one entry per metrics point it took part in */
	int			n_hist;
	double	   *train_loss;		/* (metric points) */
	double	   *train_metric;
	double	   *val_loss;
	double	   *val_metric;
	int32	   *iters;
	double	   *elapsed;
} FmModel;

/* The text elements of a 1-D array argument (NULL elements allowed when nulls_ok). */
static void
text_elements(ArrayType *a, int n, char **out, bool nulls_ok, const char *what)
{
	Datum	   *d;
	bool	   *nulls;
	int			cnt;

	deconstruct_array(a, TEXTOID, -1, false, TYPALIGN_INT, &d, &nulls, &cnt);
	if (cnt != n)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s has %d elements, expected %d", what, cnt, n)));
	for (int i = 0; i < n; i++)
	{
		if (nulls[i] && !nulls_ok)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s[%d] must not be NULL", what, i + 1)));
		out[i] = nulls[i] ? NULL : TextDatumGetCString(d[i]);
	}
}

/*
 * The visit order: a Fisher-Yates permutation of 0..K-1 drawn from seed,
 * then stably sorted by cost, largest first (dl_pg_visit_order, which
 * _gp_visit_order in gp_agg.c uses too).
 */
static void
visit_order(const FmModel *models, int K, uint64 seed, int *order)
{
	double	   *cost = palloc(sizeof(double) * Max(K, 1));	/* (K) */

	for (int i = 0; i < K; i++)
		cost[i] = models[i].cost;
	dl_hopper_visit_order(order, cost, K, seed);
	pfree(cost);
}

/*
 * Send segment sg an EVAL of model (its state slot) for iteration it, and
 * record it in seg_model[sg].
 */
static void
submit_eval(DlSegments *segs, int sg, int model, int it, int *seg_model)
{
	DlSegCommand cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.kind = DL_SEG_CMD_EVAL;
	cmd.model = cmd.slot = model;
	cmd.iteration = it;
	seg_model[sg] = cmd.model;
	dl_seg_submit(segs, sg, &cmd);
}

/* Is model a's latest score better than b's?  by_metric: compare metrics. */
static bool
better(const FmModel *a, const FmModel *b, bool use_val, bool by_metric)
{
	int			ia = a->n_hist - 1;
	int			ib = b->n_hist - 1;
	double		va;
	double		vb;

	if (by_metric)
	{
		va = use_val ? a->val_metric[ia] : a->train_metric[ia];
		vb = use_val ? b->val_metric[ib] : b->train_metric[ib];
		if (isnan(vb))
			return !isnan(va);
		return !isnan(va) && (a->higher_is_better ? va > vb : va < vb);
	}
	va = use_val ? a->val_loss[ia] : a->train_loss[ia];
	vb = use_val ? b->val_loss[ib] : b->train_loss[ib];
	if (isnan(vb))
		return !isnan(va);
	return !isnan(va) && va < vb;
}

/* The progress line of iteration it: the best model so far. */
/*
 * The progress line of iteration it: the best model so far.  loss[k * stride]
 * and n[k * stride] are model k's training loss sum and sample count during
 * the iteration, for the line before the first metrics point.
 */
static void
progress_notice(FmModel *models, int K, const double *loss, const int64 *n_seen, int stride,
				int it, int num_iterations, bool has_val, instr_time start)
{
	StringInfoData msg;
	int			best = -1;
	bool		by_metric = true;
	int			n_div = 0;
	int			n_hist_models = 0;

	initStringInfo(&msg);
	for (int k = 0; k < K; k++)
	{
		n_div += models[k].diverged ? 1 : 0;
		if (models[k].n_hist > 0)
		{
			n_hist_models++;
			if (!models[k].has_metric || models[k].metric != models[0].metric ||
				models[k].has_metric != models[0].has_metric)
				by_metric = false;
		}
	}
	if (n_hist_models > 0)
	{
		for (int k = 0; k < K; k++)
			if (models[k].n_hist > 0 && (best < 0 || better(&models[k], &models[best], has_val, by_metric)))
				best = k;
		{
			const FmModel *b = &models[best];
			int			j = b->n_hist - 1;

			appendStringInfo(&msg, "best so far mst_key %d (iteration %d): %s ",
							 b->mst_key, b->iters[j], has_val ? "validation" : "training");
			if (by_metric)
				appendStringInfo(&msg, "%s %.4f, ", dl_metric_name(b->metric),
								 has_val ? b->val_metric[j] : b->train_metric[j]);
			appendStringInfo(&msg, "loss %.4f", has_val ? b->val_loss[j] : b->train_loss[j]);
		}
	}
	else
	{
		/* no metrics yet: the lowest mean training loss of this iteration */
		double		bl = 0;

		for (int k = 0; k < K; k++)
		{
			double		l;

			if (models[k].diverged)
				continue;
			l = dl_pg_ratio(loss[k * stride], n_seen[k * stride]);
			if (!isnan(l) && (best < 0 || l < bl))
			{
				best = k;
				bl = l;
			}
		}
		if (best >= 0)
			appendStringInfo(&msg, "lowest mean training loss during the iteration: mst_key %d, %.4f",
							 models[best].mst_key, bl);
		else
			appendStringInfoString(&msg, "no model trained");
	}
	if (n_div > 0)
		appendStringInfo(&msg, "; %d of %d models diverged", n_div, K);
	dl_progress_update(it, K, best >= 0 && n_hist_models > 0 && by_metric ? (has_val ? models[best].val_metric[models[best].n_hist - 1] : models[best].train_metric[models[best].n_hist - 1]) : get_float8_nan(), dl_pg_seconds_since(start), -1);
	ereport(NOTICE,
			(errmsg("iteration %d of %d: %s; %.2f s, about %.1f s left", it, num_iterations, msg.data,
					dl_pg_seconds_since(start), dl_progress_eta(dl_pg_seconds_since(start), it, num_iterations))));
}

PG_FUNCTION_INFO_V1(madlib_dl__fit_multiple_run);

/*
 * madlib_dl._fit_multiple_run(source regclass, x_col text, y_col text,
 *     validation regclass, val_x_col text, val_y_col text,
 *     mst_keys int[], model_archs text[], init_weights bytea[],
 *     compile_params text[], fit_params text[], num_iterations int,
 *     metrics_compute_frequency int, num_segments int, schedule_seed bigint)
 * RETURNS SETOF madlib_dl._fit_multiple_result, one row per model in the
 * order of mst_keys.  init_weights elements may be NULL (random start);
 * the array itself may be NULL (all random).
 *
 * The driver has validated every argument; this checks again only what
 * would otherwise crash or loop.
 */
Datum
madlib_dl__fit_multiple_run(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			source;
	char	   *x_col;
	char	   *y_col;
	Oid			validation = InvalidOid;
	char	   *val_x_col = NULL;
	char	   *val_y_col = NULL;
	ArrayType  *keys_a;
	int32	   *keys;
	int			K;
	char	  **archs;
	char	  **compiles;
	char	  **fits;
	bytea	  **inits;
	int32		num_iterations;
	int32		freq;
	int32		nseg;
	int64		n_points;
	uint64		schedule_seed;
	MemoryContext fcxt;
	MemoryContext old;
	FmModel    *models;
	DlSegModelDef *defs;
	Size	   *sizes;
	int		   *order;
	int		   *place;			/* (M) model index at each place, -1 empty */
	int			M;
	DlSegSetup	setup;
	DlSegments *segs;
	DlSegCommand cmd;
	int		   *seq;			/* (K, nseg) the segments each model visits, in order */
	int		   *pos;			/* (K) visits done in its current iteration */
	int		   *cur;			/* (K) the iteration a model is in */
	double	   *win_loss;		/* (K, W) training loss sums per iteration of a window */
	int64	   *win_n;			/* (K, W) */
	bool	   *busy;			/* (K) on a segment now */
	int			seg_model[DL_SEG_MAX];	/* model on each segment, -1 idle */
	double		busy_s[DL_SEG_MAX];	/* seconds each segment spent on commands */
	instr_time	start;
	bool		has_val;
	int			launched;
	DlError		err;
	double	   *ev_tl;			/* (K * nseg) evaluation sums per (model, segment) */
	double	   *ev_tm;
	double	   *ev_vl;
	double	   *ev_vm;
	int64	   *ev_tn;
	int64	   *ev_vn;
	bytea	  **final_weights;
	ArrayType  *schedule_arr;

	for (int i = 0; i < 15; i++)
		if (PG_ARGISNULL(i) && i != 3 && i != 4 && i != 5 && i != 8)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("argument %d of _fit_multiple_run must not be NULL", i + 1)));
	source = PG_GETARG_OID(0);
	x_col = text_to_cstring(PG_GETARG_TEXT_PP(1));
	y_col = text_to_cstring(PG_GETARG_TEXT_PP(2));
	if (!PG_ARGISNULL(3))
	{
		validation = PG_GETARG_OID(3);
		if (PG_ARGISNULL(4) || PG_ARGISNULL(5))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("validation column names must not be NULL")));
		val_x_col = text_to_cstring(PG_GETARG_TEXT_PP(4));
		val_y_col = text_to_cstring(PG_GETARG_TEXT_PP(5));
	}
	num_iterations = PG_GETARG_INT32(11);
	freq = PG_GETARG_INT32(12);
	nseg = PG_GETARG_INT32(13);
	schedule_seed = (uint64) PG_GETARG_INT64(14);
	if (num_iterations < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("num_iterations must be at least 1, got %d", num_iterations)));
	if (freq < 1 || freq > num_iterations)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("metrics_compute_frequency must be between 1 and %d, got %d", num_iterations, freq)));
	if (nseg < 1 || nseg > DL_SEG_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of segments %d is out of range", nseg),
				 errhint("Use 1 to %d segments (distribution_rules of the preprocessor).", DL_SEG_MAX)));

	keys_a = PG_GETARG_ARRAYTYPE_P(6);
	if (ARR_NDIM(keys_a) != 1 || array_contains_nulls(keys_a))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("mst_keys must be a one-dimensional array without NULLs")));
	K = ArrayGetNItems(ARR_NDIM(keys_a), ARR_DIMS(keys_a));
	if (K < 1 || K > DL_SEG_MAX_MODELS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%d model configurations, expected 1 to %d", K, DL_SEG_MAX_MODELS),
				 errhint("Train at most %d configurations in one call.", DL_SEG_MAX_MODELS)));
	{
		Datum	   *d;
		bool	   *kn;
		int			cnt;

		deconstruct_array(keys_a, INT4OID, sizeof(int32), true, TYPALIGN_INT, &d, &kn, &cnt);
		keys = palloc(sizeof(int32) * K);
		for (int k = 0; k < K; k++)
			keys[k] = DatumGetInt32(d[k]);
	}

	InitMaterializedSRF(fcinfo, 0);

	INSTR_TIME_SET_CURRENT(start);
	dl_pg_set_blas_threads();
	fcxt = AllocSetContextCreate(CurrentMemoryContext, "madlib_dl fit_multiple", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(fcxt);
	dl_error_clear(&err);
	has_val = OidIsValid(validation);

	archs = palloc0(sizeof(char *) * K);
	compiles = palloc0(sizeof(char *) * K);
	fits = palloc0(sizeof(char *) * K);
	inits = palloc0(sizeof(bytea *) * K);
	text_elements(PG_GETARG_ARRAYTYPE_P(7), K, archs, false, "model_archs");
	text_elements(PG_GETARG_ARRAYTYPE_P(9), K, compiles, false, "compile_params");
	text_elements(PG_GETARG_ARRAYTYPE_P(10), K, fits, true, "fit_params");
	if (!PG_ARGISNULL(8))
	{
		Datum	   *d;
		bool	   *nulls;
		int			cnt;

		deconstruct_array(PG_GETARG_ARRAYTYPE_P(8), BYTEAOID, -1, false, TYPALIGN_INT,
						  &d, &nulls, &cnt);
		if (cnt != K)
			ereport(ERROR,
					(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
					 errmsg("init_weights has %d elements, expected %d", cnt, K)));
		for (int k = 0; k < K; k++)
			inits[k] = nulls[k] ? NULL : DatumGetByteaPP(d[k]);
	}

	/* what the leader will hold, before any model is built */
	{
		DlPgJobModel *jms = palloc(sizeof(DlPgJobModel) * K);
		DlPgJob		job = {DL_PG_JOB_FIT_MULTIPLE, K, jms, num_iterations, freq, nseg, 0};

		for (int k = 0; k < K; k++)
		{
			jms[k].arch = archs[k];
			jms[k].compile_params = compiles[k];
			jms[k].fit_params = fits[k];
			jms[k].what = psprintf("mst_key %d", keys[k]);
		}
		(void) dl_limits_check_job(&job);
		n_points = dl_limits_metric_points(num_iterations, freq);
	}

	/*
	 * What the schedule and the state slots need, from the parsed
	 * configurations: no model is built before the slots exist, so that
	 * each initial state is written straight into its slot.
	 */
	models = palloc0(sizeof(FmModel) * K);
	defs = palloc0(sizeof(DlSegModelDef) * K);
	sizes = palloc0(sizeof(Size) * K);
	for (int k = 0; k < K; k++)
	{
		FmModel    *fm = &models[k];
		DlPgModel  *m;
		DlMemoryEstimate est;

		CHECK_FOR_INTERRUPTS();
		fm->mst_key = keys[k];
		fm->arch = archs[k];
		fm->compile = compiles[k];
		fm->fit = fits[k];
		m = dl_pg_model_parse(fm->arch, strlen(fm->arch), fm->compile, fm->fit, fcxt);
		dl_pg_model_estimate(m, DL_PG_MODEL_STATE, 0, &est);
		fm->state_size = (Size) est.state_blob;	/* P is checked: a few GB at most */
		fm->cost = (double) m->spec->n_params * (double) m->fit.epochs;
		fm->metric = m->compile.metric;
		fm->has_metric = m->compile.metric != DL_METRIC_NONE;
		fm->higher_is_better = fm->has_metric && fm->metric != DL_METRIC_MAE &&
			fm->metric != DL_METRIC_MSE;
		dl_pg_model_free(m);

		fm->train_loss = palloc0(sizeof(double) * n_points);
		fm->train_metric = palloc0(sizeof(double) * n_points);
		fm->val_loss = palloc0(sizeof(double) * n_points);
		fm->val_metric = palloc0(sizeof(double) * n_points);
		fm->iters = palloc0(sizeof(int32) * n_points);
		fm->elapsed = palloc0(sizeof(double) * n_points);
		defs[k].arch_json = fm->arch;
		defs[k].compile_params = fm->compile;
		defs[k].fit_params = fm->fit;
		sizes[k] = fm->state_size;
	}

	/* the schedule: places 0..M-1 */
	M = Max(K, nseg);
	order = palloc(sizeof(int) * K);
	visit_order(models, K, schedule_seed, order);
	place = palloc(sizeof(int) * M);
	for (int p = 0; p < M; p++)
		place[p] = p < K ? order[p] : -1;
	{
		int32	   *sv = palloc(sizeof(int32) * M);
		bool	   *sn = palloc(sizeof(bool) * M);

		for (int p = 0; p < M; p++)
		{
			sn[p] = place[p] < 0;
			sv[p] = place[p] < 0 ? 0 : models[place[p]].mst_key;
		}
		MemoryContextSwitchTo(old);
		schedule_arr = dl_pg_int4_array(sv, sn, M);
		MemoryContextSwitchTo(fcxt);
	}

	/* model at place p visits segment (p - h) mod M at hop h, h = 0..M-1 */
	seq = palloc(sizeof(int) * K * nseg);
	pos = palloc0(sizeof(int) * K);
	cur = palloc0(sizeof(int) * K);
	busy = palloc0(sizeof(bool) * K);
	for (int p = 0; p < K; p++)
	{
		int			j = 0;

		for (int h = 0; h < M; h++)
		{
			int			sg = ((p - h) % M + M) % M;

			if (sg < nseg)
				seq[place[p] * nseg + j++] = sg;
		}
	}

	ev_tl = palloc0(sizeof(double) * K * nseg);
	ev_tm = palloc0(sizeof(double) * K * nseg);
	ev_vl = palloc0(sizeof(double) * K * nseg);
	ev_vm = palloc0(sizeof(double) * K * nseg);
	ev_tn = palloc0(sizeof(int64) * K * nseg);
	ev_vn = palloc0(sizeof(int64) * K * nseg);

	/* segments: one worker each, the leader covers the rest; slot k = model k */
	memset(&setup, 0, sizeof(setup));
	setup.source = source;
	setup.x_col = x_col;
	setup.y_col = y_col;
	setup.validation = validation;
	setup.val_x_col = val_x_col;
	setup.val_y_col = val_y_col;
	setup.nseg = nseg;
	setup.n_models = K;
	setup.models = defs;
	setup.n_slots = K;
	setup.slot_sizes = sizes;
	dl_progress_begin("fit_multiple", dl_progress_relname(source), NULL, num_iterations, K);
	segs = dl_seg_start(&setup, fcxt);
	launched = dl_seg_workers_launched(segs);
	for (int sg = 0; sg < nseg; sg++)
		busy_s[sg] = 0;
	/* initial states: build each model once, write its state into its slot, free it */
	for (int k = 0; k < K; k++)
	{
		FmModel    *fm = &models[k];
		DlPgModel  *m;
		size_t		size;

		CHECK_FOR_INTERRUPTS();
		m = dl_pg_model_build(fm->arch, strlen(fm->arch), fm->compile, fm->fit,
							  DL_PG_MODEL_STATE, 0, fcxt);
		dl_pg_check(dl_model_init_weights(m->model, m->fit.seed, &err), &err);
		if (inits[k] != NULL)
			dl_pg_model_set_weights(m, inits[k]);
		dl_pg_check(dl_blob_size(m->model, &size, &err), &err);
		if (size != sizes[k])
			elog(ERROR, "madlib_dl: state of mst_key %d has %zu bytes, %zu were estimated",
				 fm->mst_key, size, sizes[k]);
		dl_pg_check(dl_blob_write(m->model, 0, dl_seg_slot(segs, k), sizes[k], &err), &err);
		dl_seg_set_slot_len(segs, k, sizes[k]);
		dl_pg_model_free(m);
	}

	/*
	 * Windows of iterations first..target, target the next metrics point.
	 * Within a window a model goes on to its next iteration as soon as it
	 * has visited every segment (no barrier per hop or per iteration); at
	 * target every live model is evaluated.
	 */
	win_loss = MemoryContextAllocExtended(fcxt, mul_size(sizeof(double), mul_size(K, freq)),
										  MCXT_ALLOC_HUGE);
	win_n = MemoryContextAllocExtended(fcxt, mul_size(sizeof(int64), mul_size(K, freq)),
									   MCXT_ALLOC_HUGE);
	for (int first = 1; first <= num_iterations;)
	{
		int			target = Min(((first + freq - 1) / freq) * freq, num_iterations);
		int			W = target - first + 1;
		int			noticed = first - 1;	/* iterations reported so far */

		memset(win_loss, 0, sizeof(double) * K * W);
		memset(win_n, 0, sizeof(int64) * K * W);
		for (int k = 0; k < K; k++)
		{
			cur[k] = first;
			pos[k] = 0;
			busy[k] = false;
		}
		for (int sg = 0; sg < nseg; sg++)
			seg_model[sg] = -1;

		/*
		 * In iteration i every live model visits every segment once, in the
		 * order of its place in the rotation (seq).  A segment that finishes
		 * takes the next model that is free and due on it (least advanced
		 * first, then place order), without waiting for the others: the
		 * result of each model depends only on its own order of segments,
		 * so this gives exactly the results of the hop-by-hop rotation,
		 * with less idling.
		 */
		for (;;)
		{
			int			sg;
			int			done_upto;

			/* give every idle segment a model: the workers' first */
			for (int pass = 0; pass < 2; pass++)
				for (sg = 0; sg < nseg; sg++)
				{
					int			pick = -1;

					if ((sg < launched) != (pass == 0) || seg_model[sg] >= 0)
						continue;
					for (int p = 0; p < K; p++)
					{
						int			k = place[p];

						if (models[k].diverged || busy[k] || cur[k] > target ||
							seq[k * nseg + pos[k]] != sg)
							continue;
						if (pick < 0 || cur[k] < cur[pick] ||
							(cur[k] == cur[pick] && pos[k] < pos[pick]))
							pick = k;
					}
					if (pick < 0)
						continue;
					memset(&cmd, 0, sizeof(cmd));
					cmd.kind = DL_SEG_CMD_TRAIN;
					cmd.model = pick;
					cmd.slot = pick;
					cmd.iteration = cur[pick];
					cmd.catch_divergence = true;
					busy[pick] = true;
					seg_model[sg] = pick;
					dl_seg_submit(segs, sg, &cmd);
				}
			sg = dl_seg_wait_any(segs);
			if (sg < 0)
				break;			/* nothing running and nothing due: done */
			{
				const DlSegStats *st = dl_seg_stats(segs, sg);
				int			k = seg_model[sg];
				FmModel    *fm = &models[k];

				busy[k] = false;
				seg_model[sg] = -1;
				busy_s[sg] += st->seconds;
				if (st->diverged)
				{
					fm->diverged = true;
					fm->diverged_iteration = cur[k];
					ereport(NOTICE,
							(errmsg("model mst_key %d diverged in iteration %d on segment %d and stops: %s",
									fm->mst_key, cur[k], sg, st->message),
							 errdetail("Its weights are the last finite ones and its metrics so far are kept; the other models go on."),
							 errhint("Lower the learning rate of this configuration, or scale the input features.")));
				}
				else
				{
					/* added in the model's own visiting order: deterministic */
					win_loss[k * W + (cur[k] - first)] += st->train_loss_sum;
					win_n[k * W + (cur[k] - first)] += st->train_n;
					if (++pos[k] == nseg)
					{
						pos[k] = 0;
						cur[k]++;
					}
				}
			}
			/* report the iterations before target that every live model finished */
			done_upto = target;
			for (int k = 0; k < K; k++)
				if (!models[k].diverged)
					done_upto = Min(done_upto, cur[k] - 1);
			while (noticed < Min(done_upto, target - 1))
			{
				noticed++;
				progress_notice(models, K, win_loss + (noticed - first), win_n + (noticed - first),
								W, noticed, num_iterations, has_val, start);
			}
		}
		while (noticed < target - 1)	/* every model diverged */
		{
			noticed++;
			progress_notice(models, K, win_loss + (noticed - first), win_n + (noticed - first),
							W, noticed, num_iterations, has_val, start);
		}

		/* metrics at target */
		{
			int		   *alive = palloc(sizeof(int) * K);
			int			na = 0;
			double		now;
			int			it = target;

			for (int k = 0; k < K; k++)
				if (!models[k].diverged)
					alive[na++] = k;

			/*
			 * Segment s evaluates alive[(s + r) mod na] for r = 0..na-1, each
			 * segment at its own pace (slots are only read, so two segments
			 * may read one slot at once).  Sums are kept per (model, segment)
			 * and added in segment order below.
			 */
			{
				int			next[DL_SEG_MAX];
				int			sg;

				for (sg = 0; sg < nseg; sg++)
					next[sg] = 0;
				for (int pass = 0; pass < 2; pass++)
					for (sg = 0; sg < nseg; sg++)
					{
						if ((sg < launched) != (pass == 0) || na == 0)
							continue;
						submit_eval(segs, sg, alive[(sg + next[sg]++) % na], it, seg_model);
					}
				while ((sg = dl_seg_wait_any(segs)) >= 0)
				{
					const DlSegStats *st = dl_seg_stats(segs, sg);
					int			i = seg_model[sg] * nseg + sg;

					busy_s[sg] += st->seconds;
					ev_tl[i] = st->train_loss_sum;
					ev_tm[i] = st->train_metric_sum;
					ev_tn[i] = st->train_n;
					ev_vl[i] = st->val_loss_sum;
					ev_vm[i] = st->val_metric_sum;
					ev_vn[i] = st->val_n;
					seg_model[sg] = -1;
					if (next[sg] < na)
					{
						submit_eval(segs, sg, alive[(sg + next[sg]++) % na], it, seg_model);
					}
				}
			}
			now = dl_pg_seconds_since(start);
			for (int a = 0; a < na; a++)
			{
				FmModel    *fm = &models[alive[a]];
				double		tl = 0,
							tm = 0,
							vl = 0,
							vm = 0;
				int64		tn = 0,
							vn = 0;
				int			j = fm->n_hist++;

				if (j >= n_points)
					elog(ERROR, "madlib_dl: more metric points than " INT64_FORMAT, n_points);
				for (int sg = 0; sg < nseg; sg++)
				{
					int			e = alive[a] * nseg + sg;

					tl += ev_tl[e];
					tm += ev_tm[e];
					tn += ev_tn[e];
					vl += ev_vl[e];
					vm += ev_vm[e];
					vn += ev_vn[e];
				}
				fm->iters[j] = it;
				fm->train_loss[j] = dl_pg_ratio(tl, tn);
				fm->train_metric[j] = dl_pg_ratio(tm, tn);
				fm->val_loss[j] = dl_pg_ratio(vl, vn);
				fm->val_metric[j] = dl_pg_ratio(vm, vn);
				fm->elapsed[j] = now;
			}
			pfree(alive);
			progress_notice(models, K, win_loss + (target - first), win_n + (target - first),
							W, target, num_iterations, has_val, start);
		}
		first = target + 1;
	}

	for (int sg = 0; sg < nseg; sg++)
		elog(DEBUG1, "madlib_dl: segment %d trained and evaluated for %.2f s of %.2f s", sg,
			 busy_s[sg], dl_pg_seconds_since(start));

	/* the final weights, from the slots, before the segments go away */
	final_weights = palloc0(sizeof(bytea *) * K);
	for (int k = 0; k < K; k++)
	{
		DlPgModel  *m;

		CHECK_FOR_INTERRUPTS();
		m = dl_pg_model_build(models[k].arch, strlen(models[k].arch), models[k].compile,
							  models[k].fit, DL_PG_MODEL_STATE, 0, fcxt);
		dl_pg_check(dl_blob_read(m->model, dl_seg_slot(segs, k), dl_seg_slot_len(segs, k),
								 NULL, &err), &err);
		MemoryContextSwitchTo(old);
		final_weights[k] = dl_pg_model_get_weights(m);
		MemoryContextSwitchTo(fcxt);
		dl_pg_model_free(m);
	}
	dl_seg_finish(segs);
	dl_progress_end();

	/* one row per model, in the order of mst_keys */
	MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	for (int k = 0; k < K; k++)
	{
		FmModel    *fm = &models[k];
		Datum		values[11];
		bool		nulls[11];

		memset(nulls, 0, sizeof(nulls));
		values[0] = Int32GetDatum(fm->mst_key);
		values[1] = PointerGetDatum(final_weights[k]);
		values[2] = CStringGetTextDatum(fm->diverged ? "diverged" : "completed");
		values[3] = PointerGetDatum(dl_pg_float8_array(fm->train_loss, fm->n_hist));
		if (fm->has_metric)
			values[4] = PointerGetDatum(dl_pg_float8_array(fm->train_metric, fm->n_hist));
		else
			nulls[4] = true;
		if (has_val)
		{
			values[5] = PointerGetDatum(dl_pg_float8_array(fm->val_loss, fm->n_hist));
			if (fm->has_metric)
				values[6] = PointerGetDatum(dl_pg_float8_array(fm->val_metric, fm->n_hist));
			else
				nulls[6] = true;
		}
		else
			nulls[5] = nulls[6] = true;
		values[7] = PointerGetDatum(dl_pg_int4_array(fm->iters, NULL, fm->n_hist));
		values[8] = PointerGetDatum(dl_pg_float8_array(fm->elapsed, fm->n_hist));
		values[9] = PointerGetDatum(schedule_arr);
		values[10] = Int32GetDatum(launched);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(fcxt);
	return (Datum) 0;
}
