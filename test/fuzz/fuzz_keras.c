/*-------------------------------------------------------------------------
 *
 * fuzz_keras.c
 *	  libFuzzer target: the Keras JSON architecture reader.
 *
 * The input (not NUL-terminated) goes to dl_keras_parse.  A refusal must
 * give a well-formed error, no spec and no leak.  An accepted spec is
 * fingerprinted; when the model is small (fewer than 1e6 parameters, an
 * input of fewer than 1e5 values and bounded work per sample) it is built
 * with dl_model_create, its weights are initialised from the JSON's
 * initializers, and one sample of zeros is predicted.  Finally the parse
 * is repeated with one allocation failing, which must give
 * DL_ERR_NO_MEMORY and leak nothing.
 *
 * IDENTIFICATION
 *	  test/fuzz/fuzz_keras.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "fuzz_util.h"
#include "madlib_dl/dl_keras.h"
#include "madlib_dl/dl_model.h"

#define MAX_PARAMS 1000000
#define MAX_INPUT 100000
#define MAX_ACTIVATIONS 400000	/* sum of layer output sizes, one sample */
#define MAX_WORK 20000000		/* multiply-adds per sample, roughly */

/* Whether predicting one sample with spec is cheap enough for a fuzz run. */
static bool
small_model(const DlModelSpec *spec)
{
	int64_t		acts = 0;
	double		work = 0.0;

	if (spec->n_params >= MAX_PARAMS || dl_shape_size(&spec->input_shape) >= MAX_INPUT)
		return false;
	for (int i = 0; i < spec->n_layers; i++)
	{
		const DlLayer *l = &spec->layers[i];
		int64_t		out = dl_shape_size(&l->out_shape);
		int64_t		in = dl_shape_size(&l->in_shape);

		acts += out;
		if (acts >= MAX_ACTIVATIONS)
			return false;
		/* every float of the layer's parameters, or a pooling window, per output */
		work += (double) out * (double) (l->n_params + 1);
		work += (double) in * (double) l->pool_size[0] * (double) l->pool_size[1];
	}
	return work < MAX_WORK;
}

static void
run_model(const DlModelSpec *spec, const DlAllocator *alloc)
{
	DlModel    *m = NULL;
	DlError		err;
	DlStatus	st;
	float	   *x,
			   *y;

	st = dl_model_create(spec, NULL, alloc, &m, &err);
	if (st != DL_OK)
	{
		fuzz_check_error(st, &err);
		FUZZ_CHECK(m == NULL, "failed create left a model");
		return;
	}
	FUZZ_CHECK(dl_model_n_params(m) == spec->n_params, "model has %zu params, spec %zu",
			   dl_model_n_params(m), spec->n_params);
	st = dl_model_init_weights(m, 1, &err);
	if (st != DL_OK)
		fuzz_check_error(st, &err);
	x = calloc((size_t) dl_shape_size(&spec->input_shape) + 1, sizeof(float));
	y = calloc((size_t) dl_shape_size(&spec->output_shape) + 1, sizeof(float));
	if (x != NULL && y != NULL)
	{
		st = dl_model_predict(m, y, x, 1, 1, &err);
		if (st != DL_OK)
			fuzz_check_error(st, &err);
	}
	free(x);
	free(y);
	dl_model_free(m);
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzAllocCounter counter;
	DlAllocator alloc = fuzz_allocator(&counter);
	DlModelSpec *spec = (DlModelSpec *) &counter;	/* must be overwritten */
	DlError		err;
	DlStatus	st;
	int64_t		n_allocs;

	dl_error_clear(&err);
	st = dl_keras_parse((const char *) data, size, &alloc, &spec, &err);
	if (st != DL_OK)
	{
		fuzz_check_error_in(st, &err, data, size);
		FUZZ_CHECK(spec == NULL, "failed parse left *out set");
		FUZZ_NO_LEAKS(&counter);
		return 0;
	}
	FUZZ_CHECK(spec != NULL && spec != (DlModelSpec *) &counter, "parse gave no spec");
	n_allocs = counter.total;
	FUZZ_CHECK(spec->n_layers >= 0 && spec->n_layers <= DL_MAX_LAYERS, "n_layers %d",
			   spec->n_layers);
	(void) dl_model_spec_fingerprint(spec);
	if (small_model(spec))
		run_model(spec, &alloc);
	dl_model_spec_free(spec, &alloc);
	FUZZ_NO_LEAKS(&counter);

	/* the same parse with one allocation failing */
	if (n_allocs > 0)
	{
		int64_t		fail = 0;

		/* the parse's own allocations come first; pick one from the input */
		for (size_t i = 0; i < size && i < 8; i++)
			fail = fail * 31 + data[i];
		alloc = fuzz_allocator(&counter);
		counter.fail_after = fail % n_allocs;
		spec = NULL;
		st = dl_keras_parse((const char *) data, size, &alloc, &spec, &err);
		if (st == DL_OK)
		{
			/* the failing index was past the parse's allocations */
			FUZZ_CHECK(spec != NULL, "parse gave no spec");
			dl_model_spec_free(spec, &alloc);
		}
		else
		{
			FUZZ_CHECK(st == DL_ERR_NO_MEMORY, "failed allocation gave %s: %s",
					   dl_status_name(st), err.msg);
			FUZZ_CHECK(spec == NULL, "failed parse left *out set");
		}
		FUZZ_NO_LEAKS(&counter);
	}
	return 0;
}
