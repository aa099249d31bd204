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

#include "utils/memutils.h"

#include "history.h"
#include "pg_util.h"

void
dl_pg_history_init(DlPgHistory *h, int64 n_points)
{
	Size		n = (Size) Max(n_points, 1);

	memset(h, 0, sizeof(*h));
	h->cap = n_points;
	h->train_loss = MemoryContextAllocHuge(CurrentMemoryContext, mul_size(n, sizeof(double)));
	h->train_metric = MemoryContextAllocHuge(CurrentMemoryContext, mul_size(n, sizeof(double)));
	h->val_loss = MemoryContextAllocHuge(CurrentMemoryContext, mul_size(n, sizeof(double)));
	h->val_metric = MemoryContextAllocHuge(CurrentMemoryContext, mul_size(n, sizeof(double)));
	h->elapsed = MemoryContextAllocHuge(CurrentMemoryContext, mul_size(n, sizeof(double)));
	h->iters = MemoryContextAllocHuge(CurrentMemoryContext, mul_size(n, sizeof(int32)));
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
