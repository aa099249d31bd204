/*-------------------------------------------------------------------------
 *
 * pg_model.c
 *	  Build engine models inside PostgreSQL (see pg_model.h).
 *
 * IDENTIFICATION
 *	  src/pg/runtime/pg_model.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_model.h"

#include "lib/stringinfo.h"
#include "miscadmin.h"

#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_keras.h"

#include "pg_buffer.h"
#include "pg_limits.h"

/*
 * Each output's loss, weight and metric from compile_params (m->outputs),
 * given to the engine when the model has several outputs or a weight is
 * not 1; a list of one loss for a model of one output is its loss.
 */
static void
model_outputs(DlPgModel *m)
{
	DlError		err;

	dl_error_clear(&err);
	dl_pg_check(dl_compile_params_outputs(&m->compile, m->spec, m->outputs, &err), &err);
	m->has_outputs = m->spec->n_outputs > 1;
	for (int k = 0; k < m->spec->n_outputs; k++)
		m->has_outputs = m->has_outputs || m->outputs[k].loss_weight != 1.0;
	if (!m->has_outputs)
		m->compile.loss = m->outputs[0].loss;
}

DlPgModel *
dl_pg_model_parse(const char *arch_json, size_t len,
				  const char *compile_params, const char *fit_params,
				  MemoryContext cxt)
{
	MemoryContext mcxt;
	DlPgModel  *m;
	DlError		err;

	dl_error_clear(&err);
	mcxt = AllocSetContextCreate(cxt, "madlib_dl model", ALLOCSET_DEFAULT_SIZES);
	m = MemoryContextAllocZero(mcxt, sizeof(DlPgModel));
	m->cxt = mcxt;
	m->alloc = dl_pg_allocator(mcxt);

	dl_pg_check(dl_keras_parse_multi_io(arch_json, len, &m->alloc, &m->spec, &err), &err);
	if (compile_params != NULL)
	{
		dl_pg_check(dl_compile_params_parse(compile_params, &m->compile, &err), &err);
		m->has_compile = true;
		model_outputs(m);
	}
	dl_pg_check(dl_fit_params_parse(fit_params, &m->fit, &err), &err);
	if (m->fit.n_class_weight > 0 && m->spec->n_outputs > 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("class_weight is not supported for a model of %d outputs", m->spec->n_outputs),
				 errhint("Leave class_weight out of fit_params, or weigh the outputs with loss_weights in compile_params.")));
	/* class_weight names the model's classes, before any data is read */
	dl_pg_check(dl_fit_params_check_classes(&m->fit, m->has_compile ? m->compile.loss :
											DL_LOSS_CATEGORICAL_CROSSENTROPY,
											dl_shape_size(&m->spec->output_shape), &err), &err);
	return m;
}

/* The optimizer a model for use gets (NULL: none). */
static const DlOptimConfig *
use_optim(const DlPgModel *m, DlPgModelUse use)
{
	return use != DL_PG_MODEL_INFER && m->has_compile ? &m->compile.optim : NULL;
}

void
dl_pg_model_estimate(const DlPgModel *m, DlPgModelUse use, int64 infer_batch,
					 DlMemoryEstimate *out)
{
	DlMemoryUse mu;
	DlError		err;

	dl_error_clear(&err);
	mu.optim = use_optim(m, use);
	mu.batch_size = use == DL_PG_MODEL_TRAIN ? m->fit.batch_size :
		use == DL_PG_MODEL_INFER ? Max(infer_batch, 0) : 0;
	dl_pg_check(dl_model_memory_estimate(m->spec, &mu, out, &err), &err);
}

void
dl_pg_model_create(DlPgModel *m, DlPgModelUse use, int64 infer_batch)
{
	DlMemoryEstimate est;
	DlError		err;

	dl_error_clear(&err);
	if (m->model != NULL)
		elog(ERROR, "madlib_dl: model built twice");
	if (use == DL_PG_MODEL_TRAIN && !m->has_compile)
		elog(ERROR, "madlib_dl: a training model needs compile params");
	/* every model built anywhere is checked first, however it was reached */
	dl_pg_model_estimate(m, use, infer_batch, &est);
	dl_limits_check_model(&est, use == DL_PG_MODEL_TRAIN ? m->fit.batch_size : infer_batch);
	dl_pg_check(dl_model_create(m->spec, use_optim(m, use), &m->alloc, &m->model, &err), &err);
	dl_model_set_cancel(m->model, dl_pg_cancel_requested, NULL);
}

DlPgModel *
dl_pg_model_build(const char *arch_json, size_t len,
				  const char *compile_params, const char *fit_params,
				  DlPgModelUse use, int64 infer_batch, MemoryContext cxt)
{
	DlPgModel  *m = dl_pg_model_parse(arch_json, len, compile_params, fit_params, cxt);

	dl_pg_model_create(m, use, infer_batch);
	return m;
}

void
dl_pg_model_free(DlPgModel *m)
{
	if (m != NULL)
		MemoryContextDelete(m->cxt);	/* m itself lives there */
}

void
dl_pg_model_set_weights(DlPgModel *m, bytea *weights)
{
	DlError		err;

	dl_error_clear(&err);
	dl_pg_check(dl_weights_read(dl_model_params(m->model), dl_model_n_params(m->model),
								(const uint8_t *) VARDATA_ANY(weights),
								VARSIZE_ANY_EXHDR(weights), &err), &err);
}

bytea *
dl_pg_model_get_weights(DlPgModel *m)
{
	size_t		P = dl_model_n_params(m->model);
	size_t		bytes;
	bytea	   *out;

	if (!dl_size_mul(P, sizeof(float), &bytes) || bytes > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("model has %zu parameters, more than a bytea value can hold", P),
				 errhint("Use a smaller model (at most about 268 million parameters).")));
	out = palloc(VARHDRSZ + bytes);
	SET_VARSIZE(out, VARHDRSZ + bytes);
	dl_weights_write((uint8_t *) VARDATA(out), dl_model_params(m->model), P);
	return out;
}

int64
dl_pg_model_output_width(const DlPgModel *m)
{
	return dl_shape_size(&m->spec->output_shape);
}

int64
dl_pg_model_input_size(const DlPgModel *m)
{
	return dl_shape_size(&m->spec->input_shape);
}

int64
dl_pg_model_input_size_k(const DlPgModel *m, int k)
{
	return dl_shape_size(&m->spec->input_shapes[k]);
}

int64
dl_pg_model_output_width_k(const DlPgModel *m, int k)
{
	return dl_shape_size(&m->spec->output_shapes[k]);
}

int64
dl_pg_model_row_width(const DlPgModel *m)
{
	int64		w = 0;

	for (int k = 0; k < m->spec->n_inputs; k++)
		w += dl_shape_size(&m->spec->input_shapes[k]);
	return w;
}

/* Append "{a,b,c}" of dims to buf. */
static void
append_dims(StringInfo buf, const int64 *dims, int n)
{
	appendStringInfoChar(buf, '{');
	for (int i = 0; i < n; i++)
		appendStringInfo(buf, "%s" INT64_FORMAT, i > 0 ? "," : "", dims[i]);
	appendStringInfoChar(buf, '}');
}

void
dl_pg_model_check_io(const DlPgModel *m, int k_in, ArrayType *x_shape, const char *x_what,
					 int k_out, ArrayType *y_shape, const char *y_what)
{
	if (k_in >= 0)
	{
		int64		xd[DL_MAX_RANK + 1];
		int			nx = dl_pg_read_shape(x_shape, xd, DL_MAX_RANK + 1, "independent variable shape");
		const DlShape *in = &m->spec->input_shapes[k_in];
		bool		same = (nx - 1 == in->rank);

		for (int i = 0; same && i < in->rank; i++)
			same = (xd[i + 1] == in->dims[i]);
		if (!same)
		{
			StringInfoData data;
			StringInfoData arch;

			initStringInfo(&data);
			initStringInfo(&arch);
			append_dims(&data, xd + 1, nx - 1);
			append_dims(&arch, in->dims, in->rank);
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 x_what == NULL ?
					 errmsg("input shape %s in the data does not match the input shape %s of the model architecture",
							data.data, arch.data) :
					 errmsg("input shape %s of %s in the data does not match the shape %s of input \"%s\" of the model architecture",
							data.data, x_what, arch.data, m->spec->input_names[k_in]),
					 errhint("Use an architecture whose input layer has the shape of the data, or preprocess the data to that shape.")));
		}
	}
	if (k_out >= 0 && y_shape != NULL)
	{
		int64		yd[2];
		int			ny = dl_pg_read_shape(y_shape, yd, 2, "dependent variable shape");
		int64		K = dl_pg_model_output_width_k(m, k_out);

		if (ny != 2 || yd[1] != K)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 y_what == NULL ?
					 errmsg("the data has " INT64_FORMAT " classes but the model architecture has " INT64_FORMAT " outputs",
							ny == 2 ? yd[1] : (int64) 0, K) :
					 errmsg("%s has " INT64_FORMAT " classes but output \"%s\" of the model architecture has " INT64_FORMAT " values",
							y_what, ny == 2 ? yd[1] : (int64) 0,
							m->spec->layers[m->spec->outputs[k_out]].name, K),
					 errhint("Use an architecture whose last layer has one unit per class, or set num_classes in the preprocessor.")));
	}
}

void
dl_pg_model_check_input(const DlPgModel *m, ArrayType *x_shape, ArrayType *y_shape_or_null)
{
	dl_pg_model_check_io(m, 0, x_shape, NULL, y_shape_or_null != NULL ? 0 : -1, y_shape_or_null, NULL);
}

/*
 * The engine's cancel check (dl_model_set_cancel), between layers and
 * sub-batches: a cancel, statement_timeout or termination is pending.
 * It only reads the flags (the engine may be mid-pass, and the check
 * must not longjmp); the engine then returns DL_ERR_CANCELLED and
 * dl_pg_report raises the interrupt with CHECK_FOR_INTERRUPTS.
 */
bool
dl_pg_cancel_requested(void *arg)
{
	return InterruptPending && (QueryCancelPending || ProcDiePending);
}

static void
check_interrupts(void *arg)
{
	CHECK_FOR_INTERRUPTS();
}

void
dl_pg_model_train_config(const DlPgModel *m, DlTrainConfig *cfg)
{
	int64		K = dl_pg_model_output_width(m);

	if (!m->has_compile)
		elog(ERROR, "madlib_dl: train config requested for a model without compile params");
	memset(cfg, 0, sizeof(*cfg));
	cfg->loss = m->compile.loss;
	cfg->metric = m->compile.metric == DL_METRIC_NONE ? DL_METRIC_NONE :
		dl_metric_resolve(m->compile.metric, m->compile.loss, K);
	cfg->top_k = m->compile.top_k;
	cfg->batch_size = m->fit.batch_size;
	cfg->shuffle = m->fit.shuffle;
	cfg->class_weight = m->fit.n_class_weight > 0 ? m->fit.class_weight : NULL;
	cfg->n_class_weight = m->fit.n_class_weight;
	cfg->outputs = m->has_outputs ? m->outputs : NULL;
	cfg->between_batches = check_interrupts;
	cfg->between_batches_arg = NULL;
	if (dl_compile_params_metric_sums_len(&m->compile) > 0 && m->spec->n_inputs == 1 &&
		m->spec->n_outputs == 1)
		cfg->sum_metrics = dl_compile_params_metric_list(&m->compile);
}

int
dl_pg_model_metric_sums_len(const DlPgModel *m, const char *what)
{
	const DlCompileParams *cp = &m->compile;
	int			len;

	if (!m->has_compile)
		return 0;
	len = dl_compile_params_metric_sums_len(cp);
	if (len > 0 && (m->spec->n_inputs != 1 || m->spec->n_outputs != 1))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s of a model of %d inputs and %d outputs reports one metric per output, "
						"not %d metrics or auc, precision and recall",
						what, m->spec->n_inputs, m->spec->n_outputs, cp->n_metrics),
				 errhint("Pass metrics => '[''accuracy'']' (one per-sample metric) for this model.")));
	return len;
}

DlPgModel *
dl_pg_model_initial(const char *arch_json, const char *compile_params, const char *fit_params,
					bytea *init, MemoryContext cxt)
{
	DlPgModel  *m = dl_pg_model_build(arch_json, strlen(arch_json), compile_params, fit_params,
									  DL_PG_MODEL_STATE, 0, cxt);
	DlError		err;

	dl_error_clear(&err);
	dl_pg_check(dl_model_init_weights(m->model, m->fit.seed, &err), &err);
	if (init != NULL)
		dl_pg_model_set_weights(m, init);
	return m;
}
