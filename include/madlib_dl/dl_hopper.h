/*-------------------------------------------------------------------------
 *
 * dl_hopper.h
 *	  The model hopper of fit_multiple (model hopper parallelism, MOP, as
 *	  in Cerebro): which model trains on which segment, and when.
 *
 * K models and N segments.  The models are put in a visit order: a
 * Fisher-Yates permutation drawn from the seed with splitmix64, then
 * stably sorted by cost, largest first, so that models of similar cost
 * train side by side.  That order fills places 0..K-1 of M = max(K, N)
 * places (places K..M-1 stay empty).  The model at place p visits the
 * segments (p - j) mod N for j = 0..N-1, starting at p mod N.  For K <= N
 * that is MADlib's rotation, in which at hop h segment s holds place
 * (s + h) mod M.  For K > N MADlib's rotation would start every model of
 * a place p >= N on segment N-1, so that they queue there and every
 * round ends with a pipeline's drain; starting them at p mod N spreads
 * them over the segments (bench/hopper_sim.c: at 256 segments and 1,000
 * models the makespan falls from 1.22 to 1.05 of its lower bound).  So in
 * every iteration each live model visits every segment exactly once, in
 * an order fixed by its place.
 *
 * The hopper runs that schedule without a barrier per hop: a segment that
 * is free takes the next model that is free and due on it (the least
 * advanced: lowest iteration, then fewest visits, then place order), and
 * a model that has visited every segment goes on to its next iteration.
 * Only the end of a round (a metrics point) waits for every model.  A
 * model's result depends on its own order of segments alone, never on
 * timing or on which transport ran a step.
 *
 *	 dl_hopper_create(&cfg, alloc, &h, err);
 *	 for each round (iterations first..last):
 *	     dl_hopper_begin_round(h, first, last);
 *	     loop:
 *	         for each free segment s (in the transport's order):
 *	             k = dl_hopper_next(h, s, &iteration);	// -1: none due
 *	             if k >= 0: run model k's step on segment s
 *	         wait for a step; dl_hopper_done(h, k, diverged)
 *	     until dl_hopper_round_done(h)
 *	 between rounds: dl_hopper_add_model, dl_hopper_drop_model
 *
 * Models are numbered in the order they were given (then added); a
 * dropped or diverged model keeps its number and place, and is never
 * scheduled again.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_hopper.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_HOPPER_H
#define DL_HOPPER_H

#include <stdbool.h>
#include <stdint.h>

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_status.h"

/* Most models and segments of one hopper (sanity bounds on hostile input). */
#define DL_HOPPER_MAX_MODELS 65536
#define DL_HOPPER_MAX_SEGMENTS 65536

typedef struct DlHopperConfig
{
	int			n_models;		/* K, 1..DL_HOPPER_MAX_MODELS */
	int			n_segments;		/* N, 1..DL_HOPPER_MAX_SEGMENTS */
	const double *cost;			/* (K) cost estimates, e.g. parameters x epochs */
	uint64_t	seed;			/* of the visit order */
} DlHopperConfig;

typedef struct DlHopper DlHopper;

/*
 * The visit order of K models: order (K) becomes a permutation of
 * 0..K-1, Fisher-Yates from seed (splitmix64), then stably sorted by
 * cost (K), largest first.
 */
void		dl_hopper_visit_order(int *order, const double *cost, int K, uint64_t seed);

/* A hopper for cfg (the costs are copied).  DL_ERR_INVALID_ARGUMENT on bad counts. */
DlStatus	dl_hopper_create(const DlHopperConfig *cfg, const DlAllocator *alloc, DlHopper **out,
							 DlError *err);

/* Free h (may be NULL). */
void		dl_hopper_free(DlHopper *h);

/* M = max(models, segments): the places of the rotation. */
int			dl_hopper_n_places(const DlHopper *h);

/* The model at place p (0 <= p < M), -1 for an empty place. */
int			dl_hopper_place(const DlHopper *h, int p);

/* Models so far (given and added), dropped and diverged ones included. */
int			dl_hopper_n_models(const DlHopper *h);

/* Whether model k is still scheduled (neither dropped nor diverged). */
bool		dl_hopper_is_live(const DlHopper *h, int k);

/*
 * Start a round of iterations first..last (1 <= first <= last): every
 * live model visits every segment once per iteration.  No step may be
 * running.
 */
void		dl_hopper_begin_round(DlHopper *h, int64_t first, int64_t last);

/*
 * The model free segment s takes next, now marked busy, and the iteration
 * of that visit in *iteration; -1 when no free live model is due on s in
 * this round.
 */
int			dl_hopper_next(DlHopper *h, int s, int64_t *iteration);

/* The iteration model k is in: while it is busy, the one of its visit. */
int64_t		dl_hopper_iteration(const DlHopper *h, int k);

/*
 * Model k's visit (from dl_hopper_next) finished.  diverged: the model
 * stops (its state is the one before the visit, the driver's business);
 * otherwise it goes on to its next segment, or its next iteration.
 */
void		dl_hopper_done(DlHopper *h, int k, bool diverged);

/* The last iteration of the round that every live model has finished (first - 1 when none). */
int64_t		dl_hopper_finished_through(const DlHopper *h);

/* Every live model has finished the round (also when none is live). */
bool		dl_hopper_round_done(const DlHopper *h);

/*
 * Between rounds: add a model of the given cost, at the first empty
 * place, or at a new place when there is none (M grows; a model's order
 * of segments depends on its place and N only, so no other model's
 * changes).  It is due from the next round on.  Returns its number, or
 * -1 with err set when the hopper is full or out of memory.
 */
int			dl_hopper_add_model(DlHopper *h, double cost, DlError *err);

/* Between rounds: model k is not scheduled again; its place stays empty. */
void		dl_hopper_drop_model(DlHopper *h, int k);

#endif							/* DL_HOPPER_H */
