/*-------------------------------------------------------------------------
 *
 * dl_average.h
 *	  Model averaging: the mean of model states weighted by the samples
 *	  each one trained on, for fit (Su & Chen 2015, FedAvg).
 *
 * fit averages with these functions on every transport (src/pg/api/fit.c:
 * the states in the transport's slots, in segment order).  The sums are
 * kept in double, in the order the states are added, so the same states
 * added in the same order give the same bytes on every path.
 *
 *	 DlAverage a;
 *	 dl_avg_begin(&a, model, alloc, err);
 *	 for each segment's state, in segment order:
 *	     dl_avg_add(&a, state, len, err);	// skipped when it saw no samples
 *	 dl_avg_finish(&a, err);				// model now holds the average
 *	 dl_avg_end(&a);
 *
 * What is averaged: the weights (P floats) and the optimizer's state
 * arrays (n_slots x P floats), each as sum(n_k * v_k) / sum(n_k) with n_k
 * the samples the state trained on (its blob header).  The optimizer's
 * step counter (and Nadam's m_schedule) are those of the state with the
 * most steps.  The rng and every other field are those of the last state
 * added; a segment's step reseeds the rng anyway.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_average.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_AVERAGE_H
#define DL_AVERAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_model.h"
#include "madlib_dl/dl_status.h"

typedef struct DlAverage
{
	DlModel    *model;			/* borrowed: decodes the states, receives the mean */
	const DlAllocator *alloc;
	size_t		n_params;		/* P */
	size_t		n_values;		/* P + n_slots * P: the averaged floats */
	double	   *sum;			/* (n_values) sum of n_k * value */
	double		total;			/* sum of n_k */
	int64_t		iterations;		/* optimizer steps of the state with the most */
	double		m_schedule;		/* its Nadam m_schedule */
	int			n_added;		/* states with samples added so far */
} DlAverage;

/*
 * Start an average of states of model m (which must outlive a; its
 * contents are overwritten by dl_avg_add and dl_avg_finish).  Allocates
 * n_values doubles.  DL_ERR_NO_MEMORY, DL_ERR_LIMIT on overflow.
 */
DlStatus	dl_avg_begin(DlAverage *a, DlModel *m, const DlAllocator *alloc, DlError *err);

/*
 * Add the state blob state[0..len) (dl_blob format, for a's model) with
 * weight its samples seen.  A state with no samples adds nothing and is
 * not decoded.  DL_ERR_CORRUPT for a blob that is not a state of the model.
 */
DlStatus	dl_avg_add(DlAverage *a, const uint8_t *state, size_t len, DlError *err);

/*
 * dl_avg_add of states[0], ..., states[n-1] (lens[k] bytes each), in
 * that order, with the same result bit for bit, in one pass over the
 * states: piece by piece of the parameters, each state in turn, so the
 * sums stay in the cache, and each blob's checksum computed on the way.
 * On an error (a corrupt state) the sums of a are spoiled: end it.
 */
DlStatus	dl_avg_add_many(DlAverage *a, const uint8_t *const *states, const size_t *lens,
							int n, DlError *err);

/*
 * Add the sums of b (an average of the same model's states, e.g. from
 * another process) to a: the result equals adding b's states after a's
 * only up to the rounding of the sums.  DL_ERR_SHAPE when sizes differ.
 */
DlStatus	dl_avg_merge(DlAverage *a, const DlAverage *b, DlError *err);

/*
 * Write the mean into a's model (weights and optimizer state).
 * DL_ERR_DATA when no state with samples was added; the model is then
 * unchanged.
 */
DlStatus	dl_avg_finish(DlAverage *a, DlError *err);

/* Start a again, empty, keeping its sums' memory (an average every round). */
void		dl_avg_reset(DlAverage *a);

/* Free a's sums.  a may be zeroed (never begun). */
void		dl_avg_end(DlAverage *a);

#endif							/* DL_AVERAGE_H */
