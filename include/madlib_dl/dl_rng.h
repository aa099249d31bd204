/*-------------------------------------------------------------------------
 *
 * dl_rng.h
 *	  The engine's deterministic random number generator.
 *
 * xoshiro256** seeded through splitmix64.  Every random choice the engine
 * makes (initial weights, shuffling, dropout masks) draws from a DlRng, so
 * the same seed and data order give byte-identical weights.  The state is
 * four 64-bit words and is saved in the model blob.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_rng.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_RNG_H
#define DL_RNG_H

#include <stdint.h>

typedef struct DlRng
{
	uint64_t	s[4];
} DlRng;

/*
 * One step of splitmix64 (Steele, Lea, Flood 2014; Vigna's reference
 * code): adds the golden-ratio increment to *state and returns the
 * mixed value.  The only splitmix64 of madlib_dl: dl_rng_seed,
 * dl_rng_hash_seed and fit_multiple's visit order (dl_pg_visit_order)
 * all draw from it.
 */
uint64_t	dl_splitmix64_next(uint64_t *state);

/*
 * A seed for (seed, iteration, segment): three chained splitmix64 steps,
 * each from the previous value xor the next key.  Segments seed their
 * per-visit shuffling with it (dl_seg_shuffle_seed), so the same fit
 * seed gives the same weights whatever the number of processes.
 */
uint64_t	dl_rng_hash_seed(uint64_t seed, int64_t iteration, int segment);

/* Seed the generator; any seed (0 included) gives a valid state. */
void		dl_rng_seed(DlRng *rng, uint64_t seed);

/* Next raw 64-bit value. */
uint64_t	dl_rng_next(DlRng *rng);

/* Uniform double in [0, 1), 53 random bits. */
double		dl_rng_uniform(DlRng *rng);

/* Standard normal deviate (Box-Muller, no cached second value). */
double		dl_rng_normal(DlRng *rng);

/* Uniform integer in [0, n), n > 0, without modulo bias. */
uint64_t	dl_rng_below(DlRng *rng, uint64_t n);

/* Fisher-Yates shuffle of perm[0..n). */
void		dl_rng_shuffle_i64(DlRng *rng, int64_t *perm, int64_t n);

#endif							/* DL_RNG_H */
