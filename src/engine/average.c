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

/* sum (n) += wk * the little-endian float32 values p (4 * n bytes). */
static void
add_floats(double *sum, const uint8_t *p, size_t n, double wk)
{
	float		chunk[1024];

	for (size_t i = 0; i < n; i += 1024)
	{
		size_t		k = n - i < 1024 ? n - i : 1024;

		dl_blob_floats(chunk, p + 4 * i, k);
		for (size_t j = 0; j < k; j++)
			sum[i + j] += wk * (double) chunk[j];
	}
}

/* Count the state's optimizer step counter (the largest wins). */
static void
add_counters(DlAverage *a, int64_t iterations, double m_schedule)
{
	if (a->n_added == 0 || iterations > a->iterations)
	{
		a->iterations = iterations;
		a->m_schedule = m_schedule;
	}
}

DlStatus
dl_avg_add(DlAverage *a, const uint8_t *state, size_t len, DlError *err)
{
	int64_t		samples;
	DlStatus	st;
	const DlOptimState *opt = dl_model_optim(a->model);
	DlBlobView	v;
	double		wk;

	if ((st = dl_blob_samples(state, len, &samples, err)) != DL_OK)
		return st;
	if (samples <= 0)
		return DL_OK;
	if ((st = dl_blob_view(a->model, state, len, true, &v, err)) != DL_OK)
		return st;
	wk = (double) samples;
	a->total += wk;
	if (v.optim_matches)
	{
		/* straight from the blob's bytes: no copy into the model */
		add_floats(a->sum, v.weights, a->n_params, wk);
		if (opt != NULL)
		{
			add_floats(a->sum + a->n_params, v.slots, a->n_values - a->n_params, wk);
			add_counters(a, v.iterations, v.m_schedule);
		}
	}
	else
	{
		/* another optimizer's state: loaded, the model's optimizer state reset */
		const float *w;
		const float *slots;

		if ((st = dl_blob_read(a->model, state, len, NULL, err)) != DL_OK)
			return st;
		w = dl_model_params(a->model);
		for (size_t i = 0; i < a->n_params; i++)
			a->sum[i] += wk * (double) w[i];
		if (opt != NULL)
		{
			slots = opt->slots; /* (n_slots, P) */
			for (size_t i = 0; i < a->n_values - a->n_params; i++)
				a->sum[a->n_params + i] += wk * (double) slots[i];
			add_counters(a, opt->iterations, opt->m_schedule);
		}
	}
	a->n_added++;
	return DL_OK;
}

/* Floats of one piece of dl_avg_add_many: 256 KB of each state, a multiple of 64 bytes. */
#define AVG_PIECE 65536

DlStatus
dl_avg_add_many(DlAverage *a, const uint8_t *const *states, const size_t *lens, int n,
				DlError *err)
{
	DlBlobView *v;
	DlBlobHasher *h;
	int64_t    *samples;
	DlStatus	st = DL_OK;
	bool		direct = true;

	if (n <= 0)
		return DL_OK;
	v = dl_alloc_array(a->alloc, (size_t) n, sizeof(DlBlobView) + sizeof(DlBlobHasher) +
					   sizeof(int64_t), err);
	if (v == NULL)
		return err != NULL ? err->code : DL_ERR_NO_MEMORY;
	h = (DlBlobHasher *) (v + n);
	samples = (int64_t *) (h + n);
	for (int k = 0; k < n && st == DL_OK; k++)
	{
		if ((st = dl_blob_samples(states[k], lens[k], &samples[k], err)) != DL_OK ||
			samples[k] <= 0)
			continue;
		if ((st = dl_blob_view(a->model, states[k], lens[k], false, &v[k], err)) == DL_OK)
			direct &= v[k].optim_matches;
		dl_blob_hasher_init(&h[k]);
	}
	if (st == DL_OK && !direct)
	{
		/* a state of another optimizer: one by one, as dl_avg_add does */
		for (int k = 0; k < n && st == DL_OK; k++)
			st = dl_avg_add(a, states[k], lens[k], err);
	}
	else if (st == DL_OK)
	{
		/* piece by piece, each state in turn: the sums stay in the cache */
		for (size_t i = 0; i < a->n_values; i += AVG_PIECE)
		{
			size_t		m = a->n_values - i < AVG_PIECE ? a->n_values - i : AVG_PIECE;

			for (int k = 0; k < n; k++)
				if (samples[k] > 0)
				{
					const uint8_t *p = v[k].weights + 4 * i;	/* the sections are contiguous */

					dl_blob_hasher_add(&h[k], p, 4 * m);
					add_floats(a->sum + i, p, m, (double) samples[k]);
				}
		}
		for (int k = 0; k < n && st == DL_OK; k++)
		{
			if (samples[k] <= 0)
				continue;
			if (!dl_blob_checksum_is(states[k], dl_blob_hasher_final(&h[k])))
			{
				dl_error_set(err, DL_ERR_CORRUPT, "model state checksum mismatch");
				st = dl_error_hint(err, "Train the model again, or load model state written by this version of madlib_dl for this architecture.");
				break;
			}
			a->total += (double) samples[k];
			if (dl_model_optim(a->model) != NULL)
				add_counters(a, v[k].iterations, v[k].m_schedule);
			a->n_added++;
		}
	}
	dl_free(a->alloc, v);
	return st;
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
dl_avg_reset(DlAverage *a)
{
	if (a->sum != NULL)
		memset(a->sum, 0, a->n_values * sizeof(double));
	a->total = 0;
	a->iterations = 0;
	a->m_schedule = 1.0;
	a->n_added = 0;
}

void
dl_avg_end(DlAverage *a)
{
	if (a->sum != NULL)
		dl_free(a->alloc, a->sum);
	a->sum = NULL;
}
