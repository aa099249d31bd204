/*-------------------------------------------------------------------------
 *
 * rng.c
 *	  xoshiro256** with splitmix64 seeding: the engine's only randomness.
 *	  splitmix64 itself is here too, for the glue's seeds and schedules.
 *
 * IDENTIFICATION
 *	  src/engine/rng.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "madlib_dl/dl_rng.h"

static inline uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t
dl_splitmix64_next(uint64_t *state)
{
	uint64_t	z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t
dl_rng_hash_seed(uint64_t seed, int64_t iteration, int segment)
{
	uint64_t	h = seed;

	h = dl_splitmix64_next(&h);
	h ^= (uint64_t) iteration;
	h = dl_splitmix64_next(&h);
	h ^= (uint64_t) (int64_t) segment;
	return dl_splitmix64_next(&h);
}

void
dl_rng_seed(DlRng *rng, uint64_t seed)
{
	uint64_t	x = seed;

	for (int i = 0; i < 4; i++)
		rng->s[i] = dl_splitmix64_next(&x);
}

uint64_t
dl_rng_next(DlRng *rng)
{
	uint64_t   *s = rng->s;
	uint64_t	result = rotl(s[1] * 5, 7) * 9;
	uint64_t	t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double
dl_rng_uniform(DlRng *rng)
{
	return (double) (dl_rng_next(rng) >> 11) * 0x1.0p-53;
}

double
dl_rng_normal(DlRng *rng)
{
	double		u1,
				u2;

	do
		u1 = dl_rng_uniform(rng);
	while (u1 <= 0.0);
	u2 = dl_rng_uniform(rng);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

uint64_t
dl_rng_below(DlRng *rng, uint64_t n)
{
	uint64_t	limit = UINT64_MAX - UINT64_MAX % n;
	uint64_t	r;

	do
		r = dl_rng_next(rng);
	while (r >= limit);
	return r % n;
}

void
dl_rng_shuffle_i64(DlRng *rng, int64_t *perm, int64_t n)
{
	for (int64_t i = n - 1; i > 0; i--)
	{
		int64_t		j = (int64_t) dl_rng_below(rng, (uint64_t) i + 1);
		int64_t		t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
}
