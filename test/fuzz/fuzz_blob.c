/*-------------------------------------------------------------------------
 *
 * fuzz_blob.c
 *	  libFuzzer target: the model state blob and flat weights readers.
 *
 * Input layout in fuzz_blob_archs.h: two bytes choose one of three small
 * fixed architectures, an optimizer (or none) and whether to repair the
 * checksum; the rest is given to dl_blob_read and dl_weights_read.
 * A refused blob must give a well-formed error and leave the model's
 * weights, optimizer state and rng unchanged.  A loaded one must
 * round-trip through dl_blob_write byte for byte (except the sample
 * count's sign, which is stored as is), then predict one sample and take
 * one training step without crashing.
 *
 * IDENTIFICATION
 *	  test/fuzz/fuzz_blob.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "fuzz_util.h"
#include "fuzz_blob_archs.h"
#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_keras.h"

/* The architectures, parsed once; their allocator lives as long. */
static FuzzAllocCounter spec_counter;
static DlAllocator spec_alloc;
static DlModelSpec *specs[FUZZ_N_ARCHS];

static void
load_specs(void)
{
	DlError		err;

	if (specs[0] != NULL)
		return;
	spec_alloc = fuzz_allocator(&spec_counter);
	for (int i = 0; i < FUZZ_N_ARCHS; i++)
	{
		DlStatus	st = dl_keras_parse(fuzz_archs[i], strlen(fuzz_archs[i]), &spec_alloc,
										&specs[i], &err);

		FUZZ_CHECK(st == DL_OK, "architecture %d: %s", i, err.msg);
	}
}

/* One training step on zeros, and a prediction. */
static void
exercise(DlModel *m, const DlModelSpec *spec, bool train)
{
	int64_t		in = dl_shape_size(&spec->input_shape);
	int64_t		K = dl_shape_size(&spec->output_shape);
	float		x[2 * 64] = {0};
	float		y[2 * 8] = {0};
	DlError		err;
	DlStatus	st;

	FUZZ_CHECK(in <= 64 && K <= 8, "fixed architecture too large");
	st = dl_model_predict(m, y, x, 2, 2, &err);
	if (st != DL_OK)
		fuzz_check_error(st, &err);
	if (train)
	{
		DlTrainConfig cfg = {0};

		cfg.loss = DL_LOSS_MEAN_SQUARED_ERROR;
		cfg.metric = DL_METRIC_NONE;
		cfg.batch_size = 2;
		memset(y, 0, sizeof(y));
		st = dl_model_train_batch(m, &cfg, x, y, 2, NULL, &err);
		if (st != DL_OK)
			fuzz_check_error(st, &err);
	}
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzAllocCounter counter;
	DlAllocator alloc = fuzz_allocator(&counter);
	const DlModelSpec *spec;
	DlOptimConfig ocfg;
	int			okind;
	DlModel    *m = NULL;
	uint8_t    *blob;
	size_t		len;
	DlError		err;
	DlStatus	st;

	if (size < FUZZ_PREFIX)
		return 0;
	load_specs();
	spec = specs[FUZZ_ARCH(data[0])];
	okind = FUZZ_OPTIM(data[0]);
	if (okind != FUZZ_NO_OPTIM)
	{
		dl_optim_config_default(&ocfg, (DlOptimKind) okind);
		/* exercise the extra slots: momentum for SGD and RMSprop, amsgrad for Adam */
		if (data[0] & 0x80)
		{
			ocfg.momentum = 0.5;
			ocfg.amsgrad = true;
		}
	}
	st = dl_model_create(spec, okind != FUZZ_NO_OPTIM ? &ocfg : NULL, &alloc, &m, &err);
	FUZZ_CHECK(st == DL_OK, "dl_model_create: %s", err.msg);
	st = dl_model_init_weights(m, 5, &err);
	FUZZ_CHECK(st == DL_OK, "dl_model_init_weights: %s", err.msg);

	len = size - FUZZ_PREFIX;
	blob = malloc(len + 1);
	FUZZ_CHECK(blob != NULL, "out of memory");
	memcpy(blob, data + FUZZ_PREFIX, len);
	if ((data[1] & 1) && len >= DL_BLOB_HEADER_SIZE)
	{
		uint64_t	h = fuzz_fnv1a64(blob + DL_BLOB_HEADER_SIZE, len - DL_BLOB_HEADER_SIZE);

		for (int i = 0; i < 8; i++)
			blob[88 + i] = (uint8_t) (h >> (8 * i));
	}

	/* flat weights: accepted exactly when len is 4 * P */
	{
		size_t		P = dl_model_n_params(m);
		float	   *w = calloc(P + 1, sizeof(float));

		FUZZ_CHECK(w != NULL, "out of memory");
		st = dl_weights_read(w, P, blob, len, &err);
		FUZZ_CHECK((st == DL_OK) == (len == 4 * P), "weights of %zu bytes for %zu params gave %d",
				   len, P, (int) st);
		if (st != DL_OK)
			fuzz_check_error(st, &err);
		free(w);
	}

	{
		size_t		P = dl_model_n_params(m);
		size_t		bsize;
		float	   *before = malloc(P * sizeof(float) + 1);
		uint8_t    *state_before,
				   *state_after;
		int64_t		seen = -12345;

		FUZZ_CHECK(dl_blob_size(m, &bsize, &err) == DL_OK, "dl_blob_size: %s", err.msg);
		state_before = malloc(bsize);
		state_after = malloc(bsize);
		FUZZ_CHECK(before != NULL && state_before != NULL && state_after != NULL, "out of memory");
		memcpy(before, dl_model_params(m), P * sizeof(float));
		FUZZ_CHECK(dl_blob_write(m, 0, state_before, bsize, &err) == DL_OK, "write: %s", err.msg);

		st = dl_blob_read(m, blob, len, &seen, &err);
		if (st != DL_OK)
		{
			fuzz_check_error(st, &err);
			FUZZ_CHECK(st == DL_ERR_CORRUPT, "blob refused with %s", dl_status_name(st));
			FUZZ_CHECK(seen == -12345, "refused blob set samples_seen");
			FUZZ_CHECK(dl_blob_write(m, 0, state_after, bsize, &err) == DL_OK, "write: %s",
					   err.msg);
			FUZZ_CHECK(memcmp(state_before, state_after, bsize) == 0,
					   "refused blob changed the model");
		}
		else
		{
			FUZZ_CHECK(dl_blob_write(m, seen, state_after, bsize, &err) == DL_OK, "write: %s",
					   err.msg);
			/* the weights and rng read back as written */
			FUZZ_CHECK(memcmp(state_after + DL_BLOB_HEADER_SIZE, blob + DL_BLOB_HEADER_SIZE,
							  4 * P) == 0, "weights do not round-trip");
			FUZZ_CHECK(memcmp(state_after + 48, blob + 48, 40) == 0,
					   "rng state or samples seen do not round-trip");
			if (len == bsize && okind != FUZZ_NO_OPTIM &&
				memcmp(blob + 24, state_after + 24, 8) == 0)
				FUZZ_CHECK(memcmp(state_after, blob, bsize) == 0,
						   "blob of the model's own optimizer does not round-trip");
			exercise(m, spec, okind != FUZZ_NO_OPTIM);
		}
		free(before);
		free(state_before);
		free(state_after);
	}
	free(blob);
	dl_model_free(m);
	FUZZ_NO_LEAKS(&counter);
	return 0;
}
