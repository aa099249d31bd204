/*-------------------------------------------------------------------------
 *
 * history.c
 *	  The metric history of fit and fit_multiple (history.h).
 *
 * IDENTIFICATION
 *	  src/pg/api/history.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/fmgrprotos.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "madlib_dl/dl_metrics.h"

#include "history.h"
#include "pg_util.h"

void
dl_pg_history_init(DlPgHistory *h, int64 n_points, int n_out)
{
	Size		n = (Size) Max(n_points, 1);

	memset(h, 0, sizeof(*h));
	if (n_out > 1)
	{
		Size		bytes = mul_size(mul_size(n, n_out), sizeof(double));

		h->n_out = n_out;
		h->out.train_loss = MemoryContextAllocHuge(CurrentMemoryContext, bytes);
		h->out.train_metric = MemoryContextAllocHuge(CurrentMemoryContext, bytes);
		h->out.val_loss = MemoryContextAllocHuge(CurrentMemoryContext, bytes);
		h->out.val_metric = MemoryContextAllocHuge(CurrentMemoryContext, bytes);
	}
	h->cap = n_points;
	h->train_loss = MemoryContextAllocHuge(CurrentMemoryContext, mul_size(n, sizeof(double)));
	h->train_metric = MemoryContextAllocHuge(CurrentMemoryContext, mul_size(n, sizeof(double)));
	h->val_loss = MemoryContextAllocHuge(CurrentMemoryContext, mul_size(n, sizeof(double)));
	h->val_metric = MemoryContextAllocHuge(CurrentMemoryContext, mul_size(n, sizeof(double)));
	h->elapsed = MemoryContextAllocHuge(CurrentMemoryContext, mul_size(n, sizeof(double)));
	h->iters = MemoryContextAllocHuge(CurrentMemoryContext, mul_size(n, sizeof(int32)));
}

void
dl_pg_history_set_metrics(DlPgHistory *h, const DlCompileParams *cp)
{
	Size		n = (Size) Max(h->cap, 1);

	h->n_metrics = cp->n_metrics;
	h->names = palloc0(sizeof(char *) * Max(cp->n_metrics, 1));
	for (int i = 0; i < cp->n_metrics; i++)
	{
		char		buf[32];

		h->names[i] = pstrdup(dl_compile_params_metric_name_i(cp, i, buf, sizeof(buf)));
		h->kinds[i] = cp->metrics[i];
		h->top_k[i] = cp->metric_top_k[i];
	}
	h->sums = dl_compile_params_metric_sums_len(cp) > 0;
	if (h->sums)
	{
		Size		bytes = mul_size(mul_size(n, cp->n_metrics), sizeof(double));

		h->m_train = MemoryContextAllocHuge(CurrentMemoryContext, bytes);
		h->m_val = MemoryContextAllocHuge(CurrentMemoryContext, bytes);
	}
}

double
dl_pg_history_metric(const DlPgHistory *h, int j, int i, bool val)
{
	if (h->sums && i >= 0 && i < h->n_metrics)
		return (val ? h->m_val : h->m_train)[(Size) j * h->n_metrics + i];
	return val ? h->val_metric[j] : h->train_metric[j];
}

double
dl_pg_history_monitored(const DlPgHistory *h, int j, const DlEarlyStopConfig *cfg,
						const DlEarlyStopState *es)
{
	if (cfg->monitor_loss)
		return cfg->validation ? h->val_loss[j] : h->train_loss[j];
	return dl_pg_history_metric(h, j, es->metric_index, cfg->validation);
}

Datum
dl_pg_history_metrics_json(const DlPgHistory *h, bool has_val, bool *isnull)
{
	StringInfoData s;

	*isnull = h->n_metrics == 0;
	if (*isnull)
		return (Datum) 0;
	initStringInfo(&s);
	appendStringInfoChar(&s, '{');
	for (int part = 0; part < (has_val ? 2 : 1); part++)
	{
		appendStringInfo(&s, "%s\"%s\": {", part > 0 ? ", " : "", part > 0 ? "validation" : "training");
		for (int i = 0; i < h->n_metrics; i++)
		{
			if (i > 0)
				appendStringInfoString(&s, ", ");
			escape_json(&s, h->names[i]);
			appendStringInfoString(&s, ": [");
			for (int j = 0; j < h->n; j++)
			{
				double		v = dl_pg_history_metric(h, j, i, part > 0);

				if (j > 0)
					appendStringInfoString(&s, ", ");
				if (isfinite(v))
					appendStringInfoString(&s, float8out_internal(v));
				else
					appendStringInfoString(&s, "null");
			}
			appendStringInfoChar(&s, ']');
		}
		appendStringInfoChar(&s, '}');
	}
	appendStringInfoChar(&s, '}');
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(s.data));
}

void
dl_pg_eval_sums_add(DlPgEvalSums *sums, const DlSegStats *st)
{
	sums->train_loss += st->train_loss_sum;
	sums->train_metric += st->train_metric_sum;
	sums->train_n += st->train_n;
	sums->val_loss += st->val_loss_sum;
	sums->val_metric += st->val_metric_sum;
	sums->val_n += st->val_n;
	sums->n_out = Max(sums->n_out, st->n_out);
	if (st->n_msum > 0)
	{
		if (sums->n_msum == 0)
			memset(sums->msum, 0, sizeof(double) * 2 * (Size) st->n_msum);
		else if (sums->n_msum != st->n_msum)
			elog(ERROR, "madlib_dl: segments report %d and %d metric sums", sums->n_msum, st->n_msum);
		sums->n_msum = st->n_msum;
		for (int i = 0; i < 2 * st->n_msum; i++)
			sums->msum[i] += st->msum[i];
	}
	for (int k = 0; k < st->n_out; k++)
	{
		sums->train_out_loss[k] += st->train_out_loss[k];
		sums->train_out_metric[k] += st->train_out_metric[k];
		sums->val_out_loss[k] += st->val_out_loss[k];
		sums->val_out_metric[k] += st->val_out_metric[k];
	}
}

int
dl_pg_history_add(DlPgHistory *h, int it, const DlPgEvalSums *sums, double elapsed)
{
	int			j = h->n;

	if (j >= h->cap)
		elog(ERROR, "madlib_dl: more metric points than " INT64_FORMAT, h->cap);
	h->iters[j] = it;
	h->train_loss[j] = dl_pg_ratio(sums->train_loss, sums->train_n);
	h->train_metric[j] = dl_pg_ratio(sums->train_metric, sums->train_n);
	h->val_loss[j] = dl_pg_ratio(sums->val_loss, sums->val_n);
	h->val_metric[j] = dl_pg_ratio(sums->val_metric, sums->val_n);
	h->elapsed[j] = elapsed;
	if (h->sums)
	{
		DlMetricList l = {h->n_metrics, h->kinds, h->top_k};
		int			len = dl_metric_list_acc_len(&l);
		double	   *zero = palloc0(sizeof(double) * Max(len, 1));

		if (sums->n_msum != 0 && sums->n_msum != len)
			elog(ERROR, "madlib_dl: %d metric sums for metrics that keep %d", sums->n_msum, len);
		dl_metric_list_values(&l, sums->n_msum > 0 ? sums->msum : zero, sums->train_n,
							  h->m_train + (Size) j * h->n_metrics);
		dl_metric_list_values(&l, sums->n_msum > 0 ? sums->msum + len : zero, sums->val_n,
							  h->m_val + (Size) j * h->n_metrics);
		/* MADlib's single-metric series: the first metric */
		h->train_metric[j] = h->m_train[(Size) j * h->n_metrics];
		h->val_metric[j] = h->m_val[(Size) j * h->n_metrics];
		pfree(zero);
	}
	for (int k = 0; k < h->n_out; k++)
	{
		h->out.train_loss[j * h->n_out + k] = dl_pg_ratio(sums->train_out_loss[k], sums->train_n);
		h->out.train_metric[j * h->n_out + k] = dl_pg_ratio(sums->train_out_metric[k], sums->train_n);
		h->out.val_loss[j * h->n_out + k] = dl_pg_ratio(sums->val_out_loss[k], sums->val_n);
		h->out.val_metric[j * h->n_out + k] = dl_pg_ratio(sums->val_out_metric[k], sums->val_n);
	}
	h->n++;
	return j;
}

void
dl_pg_history_columns(const DlPgHistory *h, bool has_metric, bool has_val, Datum *values,
					  bool *nulls)
{
	memset(nulls, 0, sizeof(bool) * 6);
	values[0] = PointerGetDatum(dl_pg_float8_array(h->train_loss, h->n));
	if (has_metric)
		values[1] = PointerGetDatum(dl_pg_float8_array(h->train_metric, h->n));
	else
		nulls[1] = true;
	if (has_val)
	{
		values[2] = PointerGetDatum(dl_pg_float8_array(h->val_loss, h->n));
		if (has_metric)
			values[3] = PointerGetDatum(dl_pg_float8_array(h->val_metric, h->n));
		else
			nulls[3] = true;
	}
	else
		nulls[2] = nulls[3] = true;
	values[4] = PointerGetDatum(dl_pg_int4_array(h->iters, NULL, h->n));
	values[5] = PointerGetDatum(dl_pg_float8_array(h->elapsed, h->n));
}

/* A two-dimensional float8 array of rows x cols values v. */
static ArrayType *
float8_matrix(const double *v, int rows, int cols)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(rows * cols, 1));
	int			dims[2] = {rows, cols};
	int			lbs[2] = {1, 1};

	for (int i = 0; i < rows * cols; i++)
		d[i] = Float8GetDatum(v[i]);
	if (rows == 0)
		return construct_empty_array(FLOAT8OID);
	return construct_md_array(d, NULL, 2, dims, lbs, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL,
							  TYPALIGN_DOUBLE);
}

void
dl_pg_history_output_columns(const DlPgHistory *h, bool has_metric, bool has_val, Datum *values,
							 bool *nulls)
{
	const double *series[4] = {h->out.train_loss, h->out.train_metric, h->out.val_loss,
	h->out.val_metric};
	bool		present[4] = {true, has_metric, has_val, has_val && has_metric};

	for (int c = 0; c < 4; c++)
	{
		nulls[c] = h->n_out == 0 || !present[c];
		values[c] = nulls[c] ? (Datum) 0 :
			PointerGetDatum(float8_matrix(series[c], h->n, h->n_out));
	}
}
