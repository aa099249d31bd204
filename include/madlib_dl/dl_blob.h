/*-------------------------------------------------------------------------
 *
 * dl_blob.h
 *	  The versioned binary model state, and the flat weights format.
 *
 * Model state blob, all little-endian (docs/engine.md has the table):
 *	 offset  size  field
 *	      0     4  magic "MDLS"
 *	      4     4  format version (DL_BLOB_VERSION)
 *	      8     8  architecture fingerprint (dl_model_spec_fingerprint)
 *	     16     8  P, number of parameters
 *	     24     4  optimizer kind (-1: no optimizer state)
 *	     28     4  n_slots, optimizer state arrays
 *	     32     8  optimizer iterations
 *	     40     8  Nadam m_schedule (float64)
 *	     48    32  rng state, 4 x uint64
 *	     80     8  samples seen (a weight for model averaging)
 *	     88     8  checksum of every byte after the header (blob.c)
 *	     96  4*P   weights (float32)
 *	      .  4*P*n_slots  optimizer state (float32)
 * A blob that is corrupt, truncated, of another version or made for
 * another architecture is refused with DL_ERR_CORRUPT.
 *
 * Weights format: flat little-endian float32 in get_weights() order, no
 * header (MADlib's model_weights).
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_blob.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_BLOB_H
#define DL_BLOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "madlib_dl/dl_model.h"

#define DL_BLOB_MAGIC "MDLS"
#define DL_BLOB_VERSION 2
#define DL_BLOB_HEADER_SIZE 96

/* Bytes needed to write m's state (header + weights + optimizer state). */
DlStatus	dl_blob_size(const DlModel *m, size_t *size, DlError *err);

/*
 * Write m's state into buf (capacity cap bytes, at least dl_blob_size).
 * samples_seen is stored in the header.
 */
DlStatus	dl_blob_write(const DlModel *m, int64_t samples_seen, uint8_t *buf, size_t cap,
						  DlError *err);

/*
 * Load a blob into m: weights, optimizer state (if the blob has one and
 * its kind matches m's optimizer; otherwise m's optimizer state is reset)
 * and rng.  *samples_seen may be NULL.  DL_ERR_CORRUPT on any mismatch.
 */
DlStatus	dl_blob_read(DlModel *m, const uint8_t *buf, size_t len, int64_t *samples_seen,
						 DlError *err);

/*
 * A blob's sections, checked as dl_blob_read checks them (DL_ERR_CORRUPT
 * the same way; its checksum only when checksum is true: the caller then
 * hashes the bytes after the header with a DlBlobHasher) but not loaded:
 * pointers into buf to the weights (P little-endian float32) and, when
 * the blob's optimizer is m's (optim_matches), to its n_slots x P state
 * floats (NULL without any), and its header's counters.  Read the floats
 * with dl_blob_floats.
 */
typedef struct DlBlobView
{
	const uint8_t *weights;
	const uint8_t *slots;
	bool		optim_matches;	/* dl_blob_read would load the optimizer state */
	int64_t		iterations;
	double		m_schedule;
	int64_t		samples_seen;
} DlBlobView;

DlStatus	dl_blob_view(const DlModel *m, const uint8_t *buf, size_t len, bool checksum,
						 DlBlobView *v, DlError *err);

/*
 * The checksum of the bytes after a blob's header, given in order in
 * pieces (each a multiple of 64 bytes but the last): dl_blob_checksum_is
 * (blob, dl_blob_hasher_final(&h)) tells whether they are the blob's.
 */
typedef struct DlBlobHasher
{
	uint64_t	lane[8];
	uint64_t	h;
	size_t		n;
} DlBlobHasher;

void		dl_blob_hasher_init(DlBlobHasher *s);
void		dl_blob_hasher_add(DlBlobHasher *s, const uint8_t *p, size_t n);
uint64_t	dl_blob_hasher_final(const DlBlobHasher *s);
bool		dl_blob_checksum_is(const uint8_t *blob, uint64_t sum);

/* w (n) = the little-endian float32 bytes p (4 * n). */
void		dl_blob_floats(float *w, const uint8_t *p, size_t n);

/*
 * The samples-seen field of a blob's header, without loading it:
 * DL_ERR_CORRUPT when buf is not a model state (too short, bad magic).
 * The rest of the blob is checked only by dl_blob_read.
 */
DlStatus	dl_blob_samples(const uint8_t *buf, size_t len, int64_t *samples_seen, DlError *err);

/*
 * The weights section of a blob, in the weights format (4 * P bytes of
 * little-endian float32, MADlib's model_weights), without loading it:
 * *weights points into buf.  DL_ERR_CORRUPT when buf is not a model
 * state or is shorter than its header says.
 */
DlStatus	dl_blob_weights(const uint8_t *buf, size_t len, const uint8_t **weights,
							size_t *n_bytes, DlError *err);

/* Write P weights as little-endian float32 into buf (4*P bytes). */
void		dl_weights_write(uint8_t *buf, const float *w, size_t P);

/* Read little-endian float32 weights; len must be 4*P (DL_ERR_SHAPE naming both counts). */
DlStatus	dl_weights_read(float *w, size_t P, const uint8_t *buf, size_t len, DlError *err);

#endif							/* DL_BLOB_H */
