/*-------------------------------------------------------------------------
 *
 * init.c
 *	  Weight initialisation with the Keras initializers.
 *
 * Layers are initialised in order, each tensor in get_weights() order:
 *	 Dense              kernel (fan_in = I, fan_out = O), bias
 *	 Conv2D             kernel (fan_in = KH*KW*C, fan_out = KH*KW*OC), bias
 *	 BatchNormalization gamma, beta, moving_mean, moving_variance
 * VarianceScaling (glorot_*, he_*, lecun_*): n = fan_in, fan_out or their
 * mean (at least 1), then
 *	 truncated_normal    stddev = sqrt(scale / n) / 0.87962566103423978,
 *	                     draws beyond 2 stddev redrawn
 *	 untruncated_normal  stddev = sqrt(scale / n)
 *	 uniform             limit = sqrt(3 * scale / n)
 * An initializer with its own seed draws from a generator seeded by it, so
 * the same JSON gives the same tensor whatever the fit seed; the others
 * share one generator seeded by the fit seed, consumed in layer order.
 * Bit-identical values to TensorFlow are not a goal (different generator).
 *
 * IDENTIFICATION
 *	  src/engine/init.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "model_impl.h"

/* stddev of a standard normal truncated to [-2, 2] */
#define TRUNCATED_NORMAL_STDDEV 0.87962566103423978

/* XORed into the fit seed for the model rng, so its stream differs from init's. */
#define MODEL_RNG_SEED_XOR 0x5eed5eed0dd5eedULL

/* Standard normal redrawn until |z| <= 2. */
static double
truncated_normal(DlRng *rng)
{
	double		z;

	do
		z = dl_rng_normal(rng);
	while (fabs(z) > 2.0);
	return z;
}

static DlStatus
check_initializer(const DlInitializer *ini, const DlLayer *l, const char *what, DlError *err)
{
	bool		ok = true;

	switch (ini->kind)
	{
		case DL_INIT_RANDOM_NORMAL:
		case DL_INIT_TRUNCATED_NORMAL:
			ok = ini->stddev >= 0.0 && isfinite(ini->stddev) && isfinite(ini->mean);
			break;
		case DL_INIT_RANDOM_UNIFORM:
			ok = isfinite(ini->minval) && isfinite(ini->maxval) && ini->minval <= ini->maxval;
			break;
		case DL_INIT_VARIANCE_SCALING:
			ok = ini->scale > 0.0 && isfinite(ini->scale);
			break;
		case DL_INIT_CONSTANT:
			ok = isfinite(ini->value);
			break;
		default:
			break;
	}
	if (!ok)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
					 "layer \"%s\": %s initializer has invalid arguments (stddev %g, minval %g, maxval %g, scale %g)",
					 l->name, what, ini->stddev, ini->minval, ini->maxval, ini->scale);
		return dl_error_hint(err, "Use a non-negative stddev, minval <= maxval and a positive scale.");
	}
	return DL_OK;
}

/*
 * Fill w (n) from ini.  rng is the shared generator, used unless the
 * initializer has its own seed.
 */
static void
fill(float *w, size_t n, const DlInitializer *ini, DlRng *rng, double fan_in, double fan_out)
{
	DlRng		own;
	double		fan,
				sd,
				limit;

	if (ini->has_seed)
	{
		dl_rng_seed(&own, ini->seed);
		rng = &own;
	}
	switch (ini->kind)
	{
		case DL_INIT_ZEROS:
			for (size_t i = 0; i < n; i++)
				w[i] = 0.0f;
			break;
		case DL_INIT_ONES:
			for (size_t i = 0; i < n; i++)
				w[i] = 1.0f;
			break;
		case DL_INIT_CONSTANT:
			for (size_t i = 0; i < n; i++)
				w[i] = (float) ini->value;
			break;
		case DL_INIT_RANDOM_NORMAL:
			for (size_t i = 0; i < n; i++)
				w[i] = (float) (ini->mean + ini->stddev * dl_rng_normal(rng));
			break;
		case DL_INIT_RANDOM_UNIFORM:
			for (size_t i = 0; i < n; i++)
				w[i] = (float) (ini->minval + (ini->maxval - ini->minval) * dl_rng_uniform(rng));
			break;
		case DL_INIT_TRUNCATED_NORMAL:
			for (size_t i = 0; i < n; i++)
				w[i] = (float) (ini->mean + ini->stddev * truncated_normal(rng));
			break;
		case DL_INIT_VARIANCE_SCALING:
			fan = ini->mode == DL_FAN_IN ? fan_in :
				ini->mode == DL_FAN_OUT ? fan_out : (fan_in + fan_out) / 2.0;
			if (fan < 1.0)
				fan = 1.0;
			switch (ini->distribution)
			{
				case DL_DIST_TRUNCATED_NORMAL:
					sd = sqrt(ini->scale / fan) / TRUNCATED_NORMAL_STDDEV;
					for (size_t i = 0; i < n; i++)
						w[i] = (float) (sd * truncated_normal(rng));
					break;
				case DL_DIST_UNTRUNCATED_NORMAL:
					sd = sqrt(ini->scale / fan);
					for (size_t i = 0; i < n; i++)
						w[i] = (float) (sd * dl_rng_normal(rng));
					break;
				case DL_DIST_UNIFORM:
					limit = sqrt(3.0 * ini->scale / fan);
					for (size_t i = 0; i < n; i++)
						w[i] = (float) (limit * (2.0 * dl_rng_uniform(rng) - 1.0));
					break;
			}
			break;
	}
}

DlStatus
dl_model_init_weights(DlModel *m, uint64_t seed, DlError *err)
{
	const DlModelSpec *spec = m->spec;
	DlRng		rng;
	DlStatus	st;

	dl_rng_seed(&rng, seed);
	for (int i = 0; i < spec->n_layers; i++)
	{
		const DlLayer *l = &spec->layers[i];
		float	   *p = m->params + l->param_offset;
		int64_t		c = dl_shape_last(&l->in_shape);

		switch (l->kind)
		{
			case DL_LAYER_DENSE:
			case DL_LAYER_CONV2D:
				{
					int64_t		out = l->kind == DL_LAYER_DENSE ? l->units : l->filters;
					int64_t		rf = l->kind == DL_LAYER_DENSE ? 1 :
						(int64_t) l->kernel_size[0] * l->kernel_size[1];
					size_t		nk = (size_t) (rf * c * out);	/* bounded by finalize */

					if ((st = check_initializer(&l->kernel_init, l, "kernel", err)) != DL_OK ||
						(st = check_initializer(&l->bias_init, l, "bias", err)) != DL_OK)
						return st;
					fill(p, nk, &l->kernel_init, &rng, (double) (rf * c), (double) (rf * out));
					if (l->use_bias)
						fill(p + nk, (size_t) out, &l->bias_init, &rng, (double) out, (double) out);
				}
				break;
			case DL_LAYER_BATCHNORM:
				{
					const DlInitializer *inits[4] = {&l->gamma_init, &l->beta_init,
					&l->moving_mean_init, &l->moving_variance_init};
					const char *names[4] = {"gamma", "beta", "moving_mean", "moving_variance"};
					bool		present[4] = {l->scale, l->center, true, true};
					float	   *q = p;

					for (int k = 0; k < 4; k++)
					{
						if (!present[k])
							continue;
						if ((st = check_initializer(inits[k], l, names[k], err)) != DL_OK)
							return st;
						fill(q, (size_t) c, inits[k], &rng, (double) c, (double) c);
						q += c;
					}
				}
				break;
			default:
				break;
		}
	}
	dl_model_seed_rng(m, seed ^ MODEL_RNG_SEED_XOR);
	dl_model_reset_optim(m);
	return DL_OK;
}
