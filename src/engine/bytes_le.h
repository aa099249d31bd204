/*-------------------------------------------------------------------------
 *
 * bytes_le.h
 *	  Little-endian integers and generator states in byte buffers: what the
 *	  state blob (blob.c) and the round record (visit.c) are written in,
 *	  the same bytes on every host.  Internal to the engine.
 *
 * IDENTIFICATION
 *	  src/engine/bytes_le.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_BYTES_LE_H
#define DL_BYTES_LE_H

#include <stdint.h>

#include "madlib_dl/dl_rng.h"

/* p[0..4) = v, least significant byte first */
static inline void
dl_le_put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

/* p[0..8) = v, least significant byte first */
static inline void
dl_le_put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

static inline uint32_t
dl_le_get_u32(const uint8_t *p)
{
	uint32_t	v = 0;

	for (int i = 0; i < 4; i++)
		v |= (uint32_t) p[i] << (8 * i);
	return v;
}

static inline uint64_t
dl_le_get_u64(const uint8_t *p)
{
	uint64_t	v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t) p[i] << (8 * i);
	return v;
}

/* p[0..32) = the generator's four words */
static inline void
dl_le_put_rng(uint8_t *p, const DlRng *r)
{
	for (int i = 0; i < 4; i++)
		dl_le_put_u64(p + 8 * i, r->s[i]);
}

static inline void
dl_le_get_rng(const uint8_t *p, DlRng *r)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = dl_le_get_u64(p + 8 * i);
}

#endif							/* DL_BYTES_LE_H */
