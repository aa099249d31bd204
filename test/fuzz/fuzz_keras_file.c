/*-------------------------------------------------------------------------
 *
 * fuzz_keras_file.c
 *	  libFuzzer target: the record that carries a Keras file's decoding
 *	  from the server's child process back to the backend
 *	  (dl_keras_file_parse, which runs in the backend on the child's
 *	  bytes), and the .keras archive's zip layer (dl_keras_file_decode
 *	  up to, not into, libhdf5).
 *
 * An input that starts with the record's magic ("DLKF") is parsed: no
 * crash, no leak, no allocation out of proportion to the input (the peak
 * of live bytes stays under 8 times its length plus 64 kB, whatever the
 * lengths and counts it declares), a well-formed error when refused, and
 * what it accepts is within the limits and encodes back to exactly the
 * same bytes.  An input that starts with a zip's magic ("PK\3\4") is
 * decoded with a limit of 0 bytes on model.weights.h5, so libzip and the
 * config.json checks see every mutation but libhdf5 is never called
 * (model.weights.h5 is refused by its size, or, empty, before libhdf5);
 * anything else is skipped.
 *
 * libhdf5 1.10 crashes on malformed files (the server contains that by
 * decoding in a child process, src/pg/api/keras_file.c), so HDF5
 * decoding is NOT part of the test suite's fuzz step (make check).  To
 * explore it, set FUZZ_KERAS_FILE_HDF5=1 (make explore-hdf5 does, on the
 * fixtures' .h5 files): inputs that start with HDF5's magic are then
 * decoded as legacy .h5 files, and the zip's model.weights.h5 up to 1 MB.
 * Debian 12's libhdf5 1.10.8 stops it within seconds: heap overflows,
 * uses after free and a SEGV inside libhdf5 (H5O__msg_iterate_real,
 * H5O__attr_exists, H5MM_strdup), leaks and 2^60-byte allocations inside
 * it; none in our code.  Loaded into the server (no ASan there), the
 * files it stopped on were clean errors.
 *
 * Seeds: corpus/fuzz_keras_file, written by gen_seeds (make seed) from
 * test/data/keras_files.sql: dl_keras_file_encode's records of the MLP's
 * .h5 and .keras and of two refusals (an integer dataset, over the
 * tensor limit), and two .keras files (the MLP's; one whose
 * model.weights.h5 is empty).
 *
 * IDENTIFICATION
 *	  test/fuzz/fuzz_keras_file.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "fuzz_util.h"
#include "madlib_dl/dl_keras_file.h"

int			LLVMFuzzerInitialize(int *argc, char ***argv);
int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool with_hdf5;

/* The allocator of fuzz_util.h, with the peak of live bytes kept. */
typedef struct PeakCounter
{
	FuzzAllocCounter c;
	size_t		peak;
} PeakCounter;

static void *
peak_alloc(void *ctx, size_t size)
{
	PeakCounter *p = ctx;
	void	   *r = fuzz_alloc(&p->c, size);

	if (p->c.bytes_live > p->peak)
		p->peak = p->c.bytes_live;
	return r;
}

static void
peak_free(void *ctx, void *ptr)
{
	fuzz_free(&((PeakCounter *) ctx)->c, ptr);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *v = getenv("FUZZ_KERAS_FILE_HDF5");

	with_hdf5 = v != NULL && strcmp(v, "1") == 0;
	return 0;
}

/* The server's limits (src/pg/api/keras_file.c) with a 64 MB weight budget. */
static DlKerasFileLimits
server_limits(void)
{
	DlKerasFileLimits l;

	l.max_file = (size_t) 64 << 20;
	l.max_entry = l.max_file;
	l.max_config = (size_t) 64 << 20;
	l.max_tensors = 100000;
	l.max_bytes = (size_t) 64 << 20;
	return l;
}

/* A decode's or parse's error: a known status, a terminated, non-empty message. */
static void
check_error(DlStatus st, const DlError *err)
{
	FUZZ_CHECK(st > DL_OK && st <= DL_ERR_CANCELLED, "bad status %d", (int) st);
	FUZZ_CHECK(err->code == st, "err->code %d but status %d", (int) err->code, (int) st);
	FUZZ_CHECK(memchr(err->msg, '\0', sizeof(err->msg)) != NULL && err->msg[0] != '\0',
			   "empty or unterminated message");
	FUZZ_CHECK(memchr(err->hint, '\0', sizeof(err->hint)) != NULL, "unterminated hint");
}

/* What a parse or decode accepted is within lim, and consistent. */
static void
check_file(const DlKerasFile *f, const DlKerasFileLimits *lim)
{
	size_t		bytes = 0;

	FUZZ_CHECK(f->format == DL_KERAS_FILE_KERAS || f->format == DL_KERAS_FILE_H5, "format %d", (int) f->format);
	FUZZ_CHECK(f->config != NULL && strlen(f->config) == f->config_len && f->config_len <= lim->max_config,
			   "config of %zu bytes", f->config_len);
	FUZZ_CHECK(f->n_tensors <= lim->max_tensors, "%zu tensors", f->n_tensors);
	for (size_t i = 0; i < f->n_tensors; i++)
	{
		const DlKerasFileTensor *t = &f->tensors[i];
		size_t		count = 1;

		FUZZ_CHECK(t->layer != NULL && t->path != NULL && t->data != NULL, "tensor %zu incomplete", i);
		FUZZ_CHECK(t->ndim <= DL_KERAS_FILE_MAX_DIMS, "tensor %zu has %u dims", i, t->ndim);
		for (uint32_t d = 0; d < t->ndim; d++)
			count *= (size_t) t->dims[d];
		FUZZ_CHECK(count == t->count, "tensor %zu: count %zu, dims give %zu", i, t->count, count);
		bytes += t->count * sizeof(float);
	}
	FUZZ_CHECK(bytes <= lim->max_bytes, "%zu bytes of tensors", bytes);
}

static void
fuzz_record(const uint8_t *data, size_t size)
{
	PeakCounter pc;
	DlAllocator a = {peak_alloc, peak_free, &pc};
	DlKerasFileLimits lim = server_limits();
	DlKerasFile f;
	DlError		err,
				e2;
	DlStatus	st;
	uint8_t    *buf = NULL;
	size_t		len = 0;

	(void) fuzz_allocator(&pc.c);
	pc.peak = 0;
	dl_error_clear(&err);
	st = dl_keras_file_parse(data, size, &lim, &a, &f, &err);
	FUZZ_CHECK(pc.peak <= 8 * size + 65536, "a record of %zu bytes made the parser hold %zu bytes",
			   size, pc.peak);
	if (st == DL_OK)
	{
		check_file(&f, &lim);
		FUZZ_CHECK(dl_keras_file_encode(DL_OK, &err, &f, &a, &buf, &len, &e2) == DL_OK, "encode: %s", e2.msg);
	}
	else
	{
		FUZZ_CHECK(f.config == NULL && f.tensors == NULL && f.n_tensors == 0, "a refused record left output set");
		check_error(st, &err);
		/* the decode's own error (not the parser's): it must encode back */
		if (st != DL_ERR_CORRUPT || strncmp(err.msg, "the decoded keras file", 22) != 0)
			FUZZ_CHECK(dl_keras_file_encode(st, &err, &f, &a, &buf, &len, &e2) == DL_OK, "encode: %s", e2.msg);
	}
	if (buf != NULL)
	{
		FUZZ_CHECK(len == size && memcmp(buf, data, size) == 0,
				   "the record does not encode back to its bytes (%zu, %zu)", len, size);
		dl_free(&a, buf);
	}
	dl_keras_file_free(&a, &f);
	FUZZ_NO_LEAKS(&pc.c);
}

static void
fuzz_decode(const uint8_t *data, size_t size)
{
	FuzzAllocCounter counter;
	DlAllocator a = fuzz_allocator(&counter);
	DlKerasFileLimits lim = server_limits();
	DlKerasFile f;
	DlError		err;
	DlStatus	st;

	lim.max_entry = with_hdf5 ? (size_t) 1 << 20 : 0;
	dl_error_clear(&err);
	st = dl_keras_file_decode(data, size, &lim, &a, &f, &err);
	if (st == DL_OK)
	{
		check_file(&f, &lim);
		dl_keras_file_free(&a, &f);
	}
	else
	{
		FUZZ_CHECK(f.config == NULL && f.tensors == NULL && f.n_tensors == 0, "a refused file left output set");
		fuzz_check_error(st, &err);
	}
	FUZZ_NO_LEAKS(&counter);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 4 && memcmp(data, "PK\003\004", 4) == 0)
		fuzz_decode(data, size);
	else if (size >= 8 && memcmp(data, "\211HDF\r\n\032\n", 8) == 0)
	{
		if (with_hdf5)
			fuzz_decode(data, size);
	}
	else
		fuzz_record(data, size);
	return 0;
}
