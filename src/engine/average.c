/*-------------------------------------------------------------------------
 *
 * average.c
 *	  Model averaging over state blobs, weighted by samples seen
 *	  (dl_average.h).  The one implementation that fit on parallel
 *	  workers, the Greenplum aggregate and PL/Proxy use.
 *
 * IDENTIFICATION
 *	  src/engine/average.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "madlib_dl/dl_average.h"
#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_optim.h"

DlStatus
dl_avg_begin(DlAverage *a, DlModel *m, const DlAllocator *alloc, DlError *err)
{
	DlOptimState *opt = dl_model_optim(m);
	size_t		P = dl_model_n_params(m);
	size_t		S = 0;

	memset(a, 0, sizeof(*a));
	if ((opt != NULL && !dl_size_mul((size_t) opt->n_slots, P, &S)) || !dl_size_add(P, S, &a->n_values))
		return dl_error_set(err, DL_ERR_LIMIT, "model of %zu parameters is too large to average", P);
	/* zeroed */
	a->sum = dl_alloc_array(alloc, a->n_values, sizeof(double), err);
	if (a->sum == NULL)
	{
		dl_error_prefix(err, "model averaging");
		return err != NULL ? err->code : DL_ERR_NO_MEMORY;
	}
	a->model = m;
	a->alloc = alloc;
	a->n_params = P;
	a->m_schedule = 1.0;
	return DL_OK;
}

DlStatus
dl_avg_add(DlAverage *a, const uint8_t *state, size_t len, DlError *err)
{
	int64_t		samples;
	DlStatus	st;
	const float *w;				/* (P) */
	const DlOptimState *opt;
	double		wk;

	if ((st = dl_blob_samples(state, len, &samples, err)) != DL_OK)
		return st;
	if (samples <= 0)
		return DL_OK;
	if ((st = dl_blob_read(a->model, state, len, NULL, err)) != DL_OK)
		return st;
	wk = (double) samples;
	a->total += wk;
	w = dl_model_params(a->model);
	for (size_t i = 0; i < a->n_params; i++)
		a->sum[i] += wk * (double) w[i];
	opt = dl_model_optim(a->model);
	if (opt != NULL)
	{
		const float *slots = opt->slots;	/* (n_slots, P) */
		double	   *sum = a->sum + a->n_params;

		for (size_t i = 0; i < a->n_values - a->n_params; i++)
			sum[i] += wk * (double) slots[i];
		if (a->n_added == 0 || opt->iterations > a->iterations)
		{
			a->iterations = opt->iterations;
			a->m_schedule = opt->m_schedule;
		}
	}
	a->n_added++;
	return DL_OK;
}

DlStatus
dl_avg_merge(DlAverage *a, const DlAverage *b, DlError *err)
{
	if (b->n_added == 0)
		return DL_OK;
	if (b->n_values != a->n_values || b->n_params != a->n_params)
		return dl_error_set(err, DL_ERR_SHAPE, "cannot merge averages of %zu and %zu values",
							a->n_values, b->n_values);
	for (size_t i = 0; i < a->n_values; i++)
		a->sum[i] += b->sum[i];
	a->total += b->total;
	if (a->n_added == 0 || b->iterations > a->iterations)
	{
		a->iterations = b->iterations;
		a->m_schedule = b->m_schedule;
	}
	a->n_added += b->n_added;
	return DL_OK;
}

DlStatus
dl_avg_finish(DlAverage *a, DlError *err)
{
	float	   *w;				/* (P) */
	DlOptimState *opt;

	if (a->n_added == 0)
	{
		dl_error_set(err, DL_ERR_DATA, "no segment has training data");
		return dl_error_hint(err, "The source table is empty; preprocess a table with rows.");
	}
	w = dl_model_params(a->model);
	for (size_t i = 0; i < a->n_params; i++)
		w[i] = (float) (a->sum[i] / a->total);
	opt = dl_model_optim(a->model);
	if (opt != NULL)
	{
		const double *sum = a->sum + a->n_params;

		for (size_t i = 0; i < a->n_values - a->n_params; i++)
			opt->slots[i] = (float) (sum[i] / a->total);
		opt->iterations = a->iterations;
		opt->m_schedule = a->m_schedule;
	}
	return DL_OK;
}

void
dl_avg_end(DlAverage *a)
{
	if (a->sum != NULL)
		dl_free(a->alloc, a->sum);
	a->sum = NULL;
}
