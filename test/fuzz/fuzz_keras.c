/*-------------------------------------------------------------------------
 *
 * fuzz_keras.c
 *	  libFuzzer target: the Keras JSON architecture reader.
 *
 * The input (not NUL-terminated) goes to dl_keras_parse_multi_io, which
 * takes any graph.  A refusal must give a well-formed error, no spec and
 * no leak.  An accepted spec is fingerprinted, and dl_keras_parse (one
 * input, one output) must accept it exactly when it has one of each.
 * When the model is small (fewer than 1e6 parameters, inputs of fewer
 * than 1e5 values and bounded work per sample) it is built with
 * dl_model_create, its weights are initialised from the JSON's
 * initializers and two samples of its inputs (0.5, or the id 1 where an
 * Embedding reads them) are predicted; when it is
 * smaller still, a training model takes one step on them (SGD, mean
 * squared error against zeros): forward, backward and the plan's buffers
 * of any graph.  Finally the
 * parse is repeated with one allocation failing, which must give
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
#include "madlib_dl/dl_optim.h"

#define MAX_PARAMS 1000000
#define MAX_INPUT 100000
#define MAX_ACTIVATIONS 400000	/* sum of layer output sizes, one sample */
#define MAX_WORK 20000000		/* multiply-adds per sample, roughly */
#define MAX_TRAIN_WORK (MAX_WORK / 4)	/* the same, for a training step */

/*
 * Whether predicting one sample with spec is cheap enough for a fuzz run
 * (under max_work multiply-adds).
 */
static bool
small_model(const DlModelSpec *spec, double max_work)
{
	int64_t		acts = 0;
	int64_t		inputs = 0;
	double		work = 0.0;

	for (int k = 0; k < spec->n_inputs; k++)
		inputs += dl_shape_size(&spec->input_shapes[k]);
	if (spec->n_params >= MAX_PARAMS || inputs >= MAX_INPUT)
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
		work += (double) out * (double) (l->n_params + l->n_in);
		work += (double) in * (double) l->pool_size[0] * (double) l->pool_size[1];
	}
	return work < max_work;
}

/*
 * Predict two samples of 0.5 (ids 1) with m, and, when it trains, take one step
 * on them; every failure must be a well-formed error.
 */
static void
run_passes(DlModel *m, const DlModelSpec *spec, bool train)
{
	float	   *x[DL_MAX_IO] = {0};
	float	   *y[DL_MAX_IO] = {0};
	DlOutputConfig outs[DL_MAX_IO];
	DlTrainConfig cfg;
	DlError		err;
	DlStatus	st;
	bool		ok = true;

	for (int k = 0; k < spec->n_inputs; k++)
	{
		size_t		n = 2 * (size_t) dl_shape_size(&spec->input_shapes[k]);

		x[k] = malloc(n * sizeof(float));
		ok = ok && x[k] != NULL;
		/* an input an Embedding reads holds the id 1 (an input_dim of 1 refuses it) */
		for (size_t i = 0; x[k] != NULL && i < n; i++)
			x[k][i] = dl_model_spec_reads_ids(spec, k) ? 1.0f : 0.5f;
	}
	for (int k = 0; k < spec->n_outputs; k++)
	{
		y[k] = calloc(2 * (size_t) dl_shape_size(&spec->output_shapes[k]) + 1, sizeof(float));
		ok = ok && y[k] != NULL;
		outs[k].loss = DL_LOSS_MEAN_SQUARED_ERROR;
		outs[k].loss_weight = 1.0;
		outs[k].metric = DL_METRIC_NONE;
		outs[k].top_k = 1;
	}
	if (ok)
	{
		st = dl_model_predict_io(m, y, (const float *const *) x, 2, 2, &err);
		if (st != DL_OK)
			fuzz_check_error(st, &err);
	}
	if (ok && train)
	{
		memset(&cfg, 0, sizeof(cfg));
		cfg.batch_size = 2;
		cfg.outputs = outs;
		for (int k = 0; k < spec->n_outputs; k++)
			memset(y[k], 0, 2 * (size_t) dl_shape_size(&spec->output_shapes[k]) * sizeof(float));
		st = dl_model_train_batch_io(m, &cfg, (const float *const *) x, (const float *const *) y,
									 2, NULL, &err);
		if (st != DL_OK)
			fuzz_check_error(st, &err);
	}
	for (int k = 0; k < DL_MAX_IO; k++)
	{
		free(x[k]);
		free(y[k]);
	}
}

static void
run_model(const DlModelSpec *spec, const DlAllocator *alloc, bool train)
{
	DlModel    *m = NULL;
	DlOptimConfig o;
	DlError		err;
	DlStatus	st;

	dl_optim_config_default(&o, DL_OPTIM_SGD);
	st = dl_model_create(spec, train ? &o : NULL, alloc, &m, &err);
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
	run_passes(m, spec, train);
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
	st = dl_keras_parse_multi_io((const char *) data, size, &alloc, &spec, &err);
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
	{
		/* the single-io reader takes the same spec exactly when it has one input and output */
		DlModelSpec *one = NULL;
		bool		single = spec->n_inputs == 1 && spec->n_outputs == 1;

		st = dl_keras_parse((const char *) data, size, &alloc, &one, &err);
		FUZZ_CHECK(single ? st == DL_OK : st == DL_ERR_UNSUPPORTED,
				   "dl_keras_parse gave %s for a model of %d inputs and %d outputs",
				   dl_status_name(st), spec->n_inputs, spec->n_outputs);
		if (st == DL_OK)
		{
			FUZZ_CHECK(dl_model_spec_fingerprint(one) == dl_model_spec_fingerprint(spec),
					   "the two readers' specs differ");
			dl_model_spec_free(one, &alloc);
		}
		else
			fuzz_check_error(st, &err);
	}
	if (small_model(spec, MAX_WORK))
		run_model(spec, &alloc, false);
	if (small_model(spec, MAX_TRAIN_WORK))
		run_model(spec, &alloc, true);
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
		st = dl_keras_parse_multi_io((const char *) data, size, &alloc, &spec, &err);
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
