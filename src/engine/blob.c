/*-------------------------------------------------------------------------
 *
 * blob.c
 *	  The versioned model state blob and the flat weights format.
 *
 * Every field is written byte by byte in little-endian order (the layout
 * is in dl_blob.h), so a blob moves between hosts of any byte order.
 * Reading validates everything before touching the model: a refused blob
 * leaves the model unchanged.
 *
 * Optimizer state: the blob's slots are loaded when its optimizer kind
 * and slot count equal the model's.  Otherwise (a blob written without
 * optimizer state, or by another optimizer, e.g. a model saved after fit
 * and trained again with other compile_params) the weights and rng still
 * load and the model's optimizer state is reset to its initial values.
 *
 * IDENTIFICATION
 *	  src/engine/blob.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "bytes_le.h"
#include "madlib_dl/dl_blob.h"
#include "model_impl.h"

/* Optimizer state arrays we accept in a header (Adam with amsgrad has 3). */
#define BLOB_MAX_SLOTS 8

/* Largest optimizer iteration count we accept (2^53: exact as a double). */
#define BLOB_MAX_ITERATIONS ((uint64_t) 1 << 53)

/* Header field offsets (dl_blob.h). */
#define OFF_MAGIC 0
#define OFF_VERSION 4
#define OFF_FINGERPRINT 8
#define OFF_P 16
#define OFF_OPTIM_KIND 24
#define OFF_N_SLOTS 28
#define OFF_ITERATIONS 32
#define OFF_M_SCHEDULE 40
#define OFF_RNG 48
#define OFF_SAMPLES_SEEN 80
#define OFF_CHECKSUM 88

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define BLOB_HOST_LE 1			/* float32 bytes are already the blob's */
#else
#define BLOB_HOST_LE 0
#endif

/* p (4*n bytes) = w (n) as little-endian float32 */
static void
put_f32s(uint8_t *p, const float *w, size_t n)
{
	if (BLOB_HOST_LE)
	{
		if (n > 0)				/* w may be NULL then */
			memcpy(p, w, n * sizeof(float));
		return;
	}
	for (size_t i = 0; i < n; i++)
	{
		uint32_t	u;

		memcpy(&u, &w[i], sizeof(u));
		dl_le_put_u32(p + 4 * i, u);
	}
}

/* w (n) = p (4*n bytes) read as little-endian float32 */
static void
get_f32s(float *w, const uint8_t *p, size_t n)
{
	if (BLOB_HOST_LE)
	{
		if (n > 0)				/* w may be NULL then */
			memcpy(w, p, n * sizeof(float));
		return;
	}
	for (size_t i = 0; i < n; i++)
	{
		uint32_t	u = dl_le_get_u32(p + 4 * i);

		memcpy(&w[i], &u, sizeof(u));
	}
}

/* The little-endian 64-bit word at p. */
static inline uint64_t
load_u64(const uint8_t *p)
{
	uint64_t	v;

	if (!BLOB_HOST_LE)
		return dl_le_get_u64(p);
	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * The checksum of a blob's bytes after the header (n of them), as an
 * incremental hash (DlBlobHasher): eight lanes over consecutive 8-byte
 * little-endian words (lane l takes words l, l + 8, ...), each
 * h = (h + w) * K with K odd; the bytes after the last whole 64 go into
 * an FNV-1a 64 hash h; the final value is h continued over each lane's
 * bytes (the lane xor-shifted first) and over n.  Each step is a
 * bijection of its lane, so one changed word changes the result; the
 * independent lanes run at memory speed (FNV-1a over every byte, the
 * checksum of version 1, took milliseconds for a model state of a few
 * MB, on every step and every average of fit).
 */
void
dl_blob_hasher_init(DlBlobHasher *s)
{
	for (int l = 0; l < 8; l++)
		s->lane[l] = (uint64_t) (l + 1) * 0x243f6a8885a308d3ULL;
	s->h = 0xcbf29ce484222325ULL;
	s->n = 0;
}

void
dl_blob_hasher_add(DlBlobHasher *s, const uint8_t *p, size_t n)
{
	const uint64_t K = 0x9e3779b97f4a7c15ULL;
	uint64_t	lane[8];
	size_t		i = 0;

	memcpy(lane, s->lane, sizeof(lane));
	for (; i + 64 <= n; i += 64)
		for (int l = 0; l < 8; l++)
			lane[l] = (lane[l] + load_u64(p + i + 8 * l)) * K;
	memcpy(s->lane, lane, sizeof(lane));
	for (; i < n; i++)
		s->h = (s->h ^ p[i]) * 0x100000001b3ULL;
	s->n += n;
}

uint64_t
dl_blob_hasher_final(const DlBlobHasher *s)
{
	uint64_t	h = s->h;

	for (int l = 0; l < 8; l++)
	{
		uint64_t	v = s->lane[l] ^ (s->lane[l] >> 29);

		for (int b = 0; b < 8; b++)
			h = (h ^ ((v >> (8 * b)) & 0xff)) * 0x100000001b3ULL;
	}
	for (int b = 0; b < 8; b++)
		h = (h ^ (((uint64_t) s->n >> (8 * b)) & 0xff)) * 0x100000001b3ULL;
	return h;
}

static uint64_t
blob_checksum(const uint8_t *buf, size_t n)
{
	DlBlobHasher s;

	dl_blob_hasher_init(&s);
	dl_blob_hasher_add(&s, buf, n);
	return dl_blob_hasher_final(&s);
}

bool
dl_blob_checksum_is(const uint8_t *blob, uint64_t sum)
{
	return dl_le_get_u64(blob + OFF_CHECKSUM) == sum;
}

/* Total blob size for P parameters and n_slots state arrays; false on overflow. */
static bool
blob_total(size_t P, size_t n_slots, size_t *size)
{
	size_t		floats,
				bytes;

	return dl_size_add(n_slots, 1, &floats) &&
		dl_size_mul(floats, P, &floats) &&
		dl_size_mul(floats, sizeof(float), &bytes) &&
		dl_size_add(bytes, DL_BLOB_HEADER_SIZE, size);
}

static int
model_slots(const DlModel *m)
{
	return m->has_optim ? m->optim.n_slots : 0;
}

DlStatus
dl_blob_size(const DlModel *m, size_t *size, DlError *err)
{
	if (!blob_total(m->n_params, (size_t) model_slots(m), size))
		return dl_error_set(err, DL_ERR_LIMIT, "model state of %zu parameters overflows size_t",
							m->n_params);
	return DL_OK;
}

DlStatus
dl_blob_write(const DlModel *m, int64_t samples_seen, uint8_t *buf, size_t cap, DlError *err)
{
	size_t		size;
	size_t		P = m->n_params;
	int			n_slots = model_slots(m);
	uint64_t	ms;
	double		msd;
	DlStatus	st;

	if ((st = dl_blob_size(m, &size, err)) != DL_OK)
		return st;
	if (cap < size)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							"model state buffer of %zu bytes is too small, %zu needed", cap, size);

	memset(buf, 0, DL_BLOB_HEADER_SIZE);
	memcpy(buf + OFF_MAGIC, DL_BLOB_MAGIC, 4);
	dl_le_put_u32(buf + OFF_VERSION, DL_BLOB_VERSION);
	dl_le_put_u64(buf + OFF_FINGERPRINT, dl_model_spec_fingerprint(m->spec));
	dl_le_put_u64(buf + OFF_P, (uint64_t) P);
	dl_le_put_u32(buf + OFF_OPTIM_KIND, m->has_optim ? (uint32_t) m->optim.cfg.kind : (uint32_t) -1);
	dl_le_put_u32(buf + OFF_N_SLOTS, (uint32_t) n_slots);
	dl_le_put_u64(buf + OFF_ITERATIONS, m->has_optim ? (uint64_t) m->optim.iterations : 0);
	msd = m->has_optim ? m->optim.m_schedule : 1.0;
	memcpy(&ms, &msd, sizeof(ms));
	dl_le_put_u64(buf + OFF_M_SCHEDULE, ms);
	dl_le_put_rng(buf + OFF_RNG, &m->rng);
	dl_le_put_u64(buf + OFF_SAMPLES_SEEN, (uint64_t) samples_seen);

	put_f32s(buf + DL_BLOB_HEADER_SIZE, m->params, P);
	if (n_slots > 0)
		put_f32s(buf + DL_BLOB_HEADER_SIZE + 4 * P, m->optim.slots, P * (size_t) n_slots);
	dl_le_put_u64(buf + OFF_CHECKSUM, blob_checksum(buf + DL_BLOB_HEADER_SIZE, size - DL_BLOB_HEADER_SIZE));
	return DL_OK;
}

static DlStatus
corrupt_hint(DlError *err)
{
	return dl_error_hint(err, "Train the model again, or load model state written by this version of madlib_dl for this architecture.");
}

DlStatus
dl_blob_samples(const uint8_t *buf, size_t len, int64_t *samples_seen, DlError *err)
{
	if (len < DL_BLOB_HEADER_SIZE || memcmp(buf + OFF_MAGIC, DL_BLOB_MAGIC, 4) != 0)
	{
		dl_error_set(err, DL_ERR_CORRUPT, "model state is truncated or not a madlib_dl model state (%zu bytes)",
					 len);
		return corrupt_hint(err);
	}
	*samples_seen = (int64_t) dl_le_get_u64(buf + OFF_SAMPLES_SEEN);
	return DL_OK;
}

DlStatus
dl_blob_weights(const uint8_t *buf, size_t len, const uint8_t **weights, size_t *n_bytes,
				DlError *err)
{
	uint64_t	P;

	if (len < DL_BLOB_HEADER_SIZE || memcmp(buf + OFF_MAGIC, DL_BLOB_MAGIC, 4) != 0)
	{
		dl_error_set(err, DL_ERR_CORRUPT, "model state is truncated or not a madlib_dl model state (%zu bytes)",
					 len);
		return corrupt_hint(err);
	}
	P = dl_le_get_u64(buf + OFF_P);
	if (P > (len - DL_BLOB_HEADER_SIZE) / 4)
	{
		dl_error_set(err, DL_ERR_CORRUPT, "model state of %zu bytes cannot hold %llu weights",
					 len, (unsigned long long) P);
		return corrupt_hint(err);
	}
	*weights = buf + DL_BLOB_HEADER_SIZE;
	*n_bytes = (size_t) P * 4;
	return DL_OK;
}

/*
 * Check that buf[0..len) is a whole, intact state of model m: magic,
 * version, architecture, optimizer header, size and checksum.  Sets
 * *kind and *n_slots (the blob's optimizer) and *msd (its m_schedule).
 */
static DlStatus
blob_check(const DlModel *m, const uint8_t *buf, size_t len, bool checksum, int32_t *kind_out,
		   uint32_t *n_slots_out, double *msd_out, DlError *err)
{
	uint32_t	version;
	uint64_t	P;
	int32_t		kind;
	uint32_t	n_slots;
	size_t		size;
	uint64_t	ms;
	double		msd;

	if (len < DL_BLOB_HEADER_SIZE)
	{
		dl_error_set(err, DL_ERR_CORRUPT, "model state is truncated: %zu bytes, expected at least %d",
					 len, DL_BLOB_HEADER_SIZE);
		return corrupt_hint(err);
	}
	if (memcmp(buf + OFF_MAGIC, DL_BLOB_MAGIC, 4) != 0)
	{
		dl_error_set(err, DL_ERR_CORRUPT, "model state has a bad magic number (not a madlib_dl model state)");
		return corrupt_hint(err);
	}
	version = dl_le_get_u32(buf + OFF_VERSION);
	if (version != DL_BLOB_VERSION)
	{
		dl_error_set(err, DL_ERR_CORRUPT, "unsupported model state version %u", version);
		return dl_error_hint(err, "This build reads model state version %d; retrain the model or use the madlib_dl version that wrote it.",
							 DL_BLOB_VERSION);
	}
	P = dl_le_get_u64(buf + OFF_P);
	if (dl_le_get_u64(buf + OFF_FINGERPRINT) != dl_model_spec_fingerprint(m->spec) ||
		P != (uint64_t) m->n_params)
	{
		dl_error_set(err, DL_ERR_CORRUPT, "model state was made for another architecture");
		return dl_error_hint(err, "Load the state into a model built from the same model_arch it was trained with.");
	}
	kind = (int32_t) dl_le_get_u32(buf + OFF_OPTIM_KIND);
	n_slots = dl_le_get_u32(buf + OFF_N_SLOTS);
	if (kind < -1 || kind > DL_OPTIM_NADAM || n_slots > BLOB_MAX_SLOTS ||
		(kind == -1 && n_slots != 0))
	{
		dl_error_set(err, DL_ERR_CORRUPT, "model state has an invalid optimizer header (kind %d, %u slots)",
					 (int) kind, n_slots);
		return corrupt_hint(err);
	}
	/*
	 * Optimizer counters: the header is outside the checksum, and a
	 * hostile iteration count would overflow in the next step.  Nadam's
	 * m_schedule is a product of factors in (0, 1).
	 */
	ms = dl_le_get_u64(buf + OFF_M_SCHEDULE);
	memcpy(&msd, &ms, sizeof(msd));
	if (dl_le_get_u64(buf + OFF_ITERATIONS) > BLOB_MAX_ITERATIONS || !(msd >= 0.0 && msd <= 1.0))
	{
		dl_error_set(err, DL_ERR_CORRUPT,
					 "model state has an invalid optimizer header (%llu iterations, m_schedule %g)",
					 (unsigned long long) dl_le_get_u64(buf + OFF_ITERATIONS), msd);
		return corrupt_hint(err);
	}
	if (!blob_total(m->n_params, n_slots, &size))
	{
		dl_error_set(err, DL_ERR_CORRUPT, "model state size overflows size_t (%u slots)", n_slots);
		return corrupt_hint(err);
	}
	if (len != size)
	{
		if (len < size)
			dl_error_set(err, DL_ERR_CORRUPT, "model state is truncated: %zu bytes, expected %zu",
						 len, size);
		else
			dl_error_set(err, DL_ERR_CORRUPT, "model state has %zu bytes, expected %zu", len, size);
		return corrupt_hint(err);
	}
	if (checksum &&
		dl_le_get_u64(buf + OFF_CHECKSUM) != blob_checksum(buf + DL_BLOB_HEADER_SIZE, size - DL_BLOB_HEADER_SIZE))
	{
		dl_error_set(err, DL_ERR_CORRUPT, "model state checksum mismatch");
		return corrupt_hint(err);
	}
	*kind_out = kind;
	*n_slots_out = n_slots;
	*msd_out = msd;
	return DL_OK;
}

DlStatus
dl_blob_read(DlModel *m, const uint8_t *buf, size_t len, int64_t *samples_seen, DlError *err)
{
	int32_t		kind;
	uint32_t	n_slots;
	double		msd;
	DlStatus	st;

	if ((st = blob_check(m, buf, len, true, &kind, &n_slots, &msd, err)) != DL_OK)
		return st;

	/* valid: load */
	get_f32s(m->params, buf + DL_BLOB_HEADER_SIZE, m->n_params);
	dl_le_get_rng(buf + OFF_RNG, &m->rng);
	if (m->has_optim)
	{
		if (kind == (int32_t) m->optim.cfg.kind && (int) n_slots == m->optim.n_slots)
		{
			m->optim.iterations = (int64_t) dl_le_get_u64(buf + OFF_ITERATIONS);
			m->optim.m_schedule = msd;
			get_f32s(m->optim.slots, buf + DL_BLOB_HEADER_SIZE + 4 * m->n_params,
					 m->n_params * n_slots);
		}
		else
			dl_model_reset_optim(m);
	}
	if (samples_seen != NULL)
		*samples_seen = (int64_t) dl_le_get_u64(buf + OFF_SAMPLES_SEEN);
	return DL_OK;
}

DlStatus
dl_blob_view(const DlModel *m, const uint8_t *buf, size_t len, bool checksum, DlBlobView *v,
			 DlError *err)
{
	int32_t		kind;
	uint32_t	n_slots;
	double		msd;
	DlStatus	st;

	memset(v, 0, sizeof(*v));
	if ((st = blob_check(m, buf, len, checksum, &kind, &n_slots, &msd, err)) != DL_OK)
		return st;
	v->weights = buf + DL_BLOB_HEADER_SIZE;
	v->samples_seen = (int64_t) dl_le_get_u64(buf + OFF_SAMPLES_SEEN);
	v->optim_matches = m->has_optim ? kind == (int32_t) m->optim.cfg.kind &&
		(int) n_slots == m->optim.n_slots : n_slots == 0;
	if (v->optim_matches && n_slots > 0)
		v->slots = buf + DL_BLOB_HEADER_SIZE + 4 * m->n_params;
	v->iterations = (int64_t) dl_le_get_u64(buf + OFF_ITERATIONS);
	v->m_schedule = msd;
	return DL_OK;
}

void
dl_blob_floats(float *w, const uint8_t *p, size_t n)
{
	get_f32s(w, p, n);
}

void
dl_weights_write(uint8_t *buf, const float *w, size_t P)
{
	put_f32s(buf, w, P);
}

DlStatus
dl_weights_read(float *w, size_t P, const uint8_t *buf, size_t len, DlError *err)
{
	if (len % 4 != 0 || len / 4 != P)
	{
		if (len % 4 != 0)
			dl_error_set(err, DL_ERR_SHAPE, "weights have %zu bytes, which is not a whole number of float32 values (the architecture needs %zu values)",
						 len, P);
		else
			dl_error_set(err, DL_ERR_SHAPE, "weights have %zu values but the architecture needs %zu",
						 len / 4, P);
		return dl_error_hint(err, "Use weights saved from a model with the same architecture, as a flat float32 array in get_weights() order.");
	}
	get_f32s(w, buf, P);
	return DL_OK;
}
