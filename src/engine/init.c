/*-------------------------------------------------------------------------
 *
 * init.c
 *	  Weight initialisation with the Keras initializers.
 *
 * Layers are initialised in order, each tensor in get_weights() order:
 *	 Dense              kernel (fan_in = I, fan_out = O), bias
 *	 Conv2D             kernel (fan_in = KH*KW*C, fan_out = KH*KW*OC), bias
 *	 BatchNormalization gamma, beta, moving_mean, moving_variance
 *	 Embedding          embeddings (fan_in = input_dim, fan_out = output_dim)
 *	 Conv1D             kernel (fan_in = K*C, fan_out = K*OC), bias
 *	 LSTM, GRU,         per direction: kernel (I, G*U), recurrent_kernel
 *	 SimpleRNN          (U, G*U), bias (an LSTM's forget gate's set to 1
 *	                    with unit_forget_bias)
 *	 DepthwiseConv2D    depthwise kernel (fan_in = KH*KW*C, fan_out =
 *	 SeparableConv2D    KH*KW*M), pointwise kernel (CM, OC), bias
 *	 LayerNormalization gamma, beta
 *	 PReLU              alpha
 * Orthogonal (the recurrent kernels' default): a matrix of the tensor's
 * rows (all dimensions but the last) and columns, whose rows (or
 * columns, the fewer) are orthonormal, times gain: standard normal draws
 * made orthonormal by Gram-Schmidt (Keras takes the QR factor of the
 * same draws, with the signs that make R's diagonal positive: the same
 * matrix).
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
		case DL_INIT_ORTHOGONAL:
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
 * Make the n vectors of length len at w + i * step (elements stride
 * apart) orthonormal, in order, by modified Gram-Schmidt run twice (sums
 * in double).  A vector that vanishes (probability 0) is left as it is.
 */
static void
orthonormalize(float *w, int64_t n, int64_t len, int64_t step, int64_t stride)
{
	for (int64_t j = 0; j < n; j++)
	{
		float	   *v = w + j * step;
		double		norm = 0.0;

		for (int pass = 0; pass < 2; pass++)
			for (int64_t k = 0; k < j; k++)
			{
				const float *q = w + k * step;
				double		dot = 0.0;

				for (int64_t i = 0; i < len; i++)
					dot += (double) v[i * stride] * q[i * stride];
				for (int64_t i = 0; i < len; i++)
					v[i * stride] = (float) (v[i * stride] - dot * q[i * stride]);
			}
		for (int64_t i = 0; i < len; i++)
			norm += (double) v[i * stride] * v[i * stride];
		if (!(norm > 0.0))
			continue;
		norm = sqrt(norm);
		for (int64_t i = 0; i < len; i++)
			v[i * stride] = (float) (v[i * stride] / norm);
	}
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
		case DL_INIT_ORTHOGONAL:
			/* a vector (Keras refuses one): a row of one matrix, unit length, times gain */
			for (size_t i = 0; i < n; i++)
				w[i] = (float) dl_rng_normal(rng);
			orthonormalize(w, 1, (int64_t) n, (int64_t) n, 1);
			for (size_t i = 0; i < n; i++)
				w[i] = (float) (w[i] * ini->scale);
			break;
	}
}

/*
 * Fill the matrix w (rows, cols) from ini: orthogonal as the file header
 * says, any other initializer as fill() does.
 */
static void
fill_matrix(float *w, int64_t rows, int64_t cols, const DlInitializer *ini, DlRng *rng,
			double fan_in, double fan_out)
{
	DlRng		own;

	if (ini->kind != DL_INIT_ORTHOGONAL)
	{
		fill(w, (size_t) (rows * cols), ini, rng, fan_in, fan_out);
		return;
	}
	if (ini->has_seed)
	{
		dl_rng_seed(&own, ini->seed);
		rng = &own;
	}
	for (int64_t i = 0; i < rows * cols; i++)
		w[i] = (float) dl_rng_normal(rng);
	if (rows < cols)
		orthonormalize(w, rows, cols, cols, 1);	/* the rows */
	else
		orthonormalize(w, cols, rows, 1, cols);	/* the columns */
	for (int64_t i = 0; i < rows * cols; i++)
		w[i] = (float) (w[i] * ini->scale);
}

/* The initializers of a recurrent layer, each direction: kernel, recurrent kernel, bias. */
static DlStatus
init_recurrent(float *p, const DlLayer *l, DlRng *rng, DlError *err)
{
	int64_t		I = dl_shape_last(&l->in_shape);
	int64_t		U = l->units;
	int64_t		GU = dl_rnn_gates(l->kind) * U;
	int64_t		nb = l->kind == DL_LAYER_GRU && l->reset_after ? 2 * GU : GU;
	DlStatus	st;

	if ((st = check_initializer(&l->kernel_init, l, "kernel", err)) != DL_OK ||
		(st = check_initializer(&l->recurrent_init, l, "recurrent", err)) != DL_OK ||
		(st = check_initializer(&l->bias_init, l, "bias", err)) != DL_OK)
		return st;
	for (int dir = 0; dir < (l->bidir != DL_BIDIR_NONE ? 2 : 1); dir++)
	{
		fill_matrix(p, I, GU, &l->kernel_init, rng, (double) I, (double) GU);
		p += I * GU;
		fill_matrix(p, U, GU, &l->recurrent_init, rng, (double) U, (double) GU);
		p += U * GU;
		if (!l->use_bias)
			continue;
		fill_matrix(p, nb / GU, GU, &l->bias_init, rng, (double) (nb / GU), (double) GU);
		if (l->kind == DL_LAYER_LSTM && l->unit_forget_bias)
			for (int64_t u = 0; u < U; u++)
				p[U + u] = 1.0f;
		p += nb;
	}
	return DL_OK;
}

/* The other layers of text and sequences (Embedding ... PReLU). */
static DlStatus
init_sequence_layer(float *p, const DlLayer *l, DlRng *rng, DlError *err)
{
	int64_t		c = dl_shape_last(&l->in_shape);
	int64_t		k = (int64_t) l->kernel_size[0] * l->kernel_size[1];
	int64_t		cm = c * l->depth_multiplier;
	DlStatus	st;

	switch (l->kind)
	{
		case DL_LAYER_EMBEDDING:
			if ((st = check_initializer(&l->kernel_init, l, "embeddings", err)) != DL_OK)
				return st;
			fill_matrix(p, l->input_dim, l->units, &l->kernel_init, rng, (double) l->input_dim,
						(double) l->units);
			break;
		case DL_LAYER_CONV1D:
			if ((st = check_initializer(&l->kernel_init, l, "kernel", err)) != DL_OK ||
				(st = check_initializer(&l->bias_init, l, "bias", err)) != DL_OK)
				return st;
			fill_matrix(p, k * c, l->filters, &l->kernel_init, rng, (double) (k * c),
						(double) (k * l->filters));
			if (l->use_bias)
				fill(p + k * c * l->filters, (size_t) l->filters, &l->bias_init, rng,
					 (double) l->filters, (double) l->filters);
			break;
		case DL_LAYER_LSTM:
		case DL_LAYER_GRU:
		case DL_LAYER_SIMPLERNN:
			return init_recurrent(p, l, rng, err);
		case DL_LAYER_DEPTHWISECONV2D:
		case DL_LAYER_SEPARABLECONV2D:
			{
				bool		sep = l->kind == DL_LAYER_SEPARABLECONV2D;
				int64_t		oc = sep ? l->filters : cm;

				if ((st = check_initializer(&l->kernel_init, l, "depthwise", err)) != DL_OK ||
					(st = check_initializer(&l->pointwise_init, l, "pointwise", err)) != DL_OK ||
					(st = check_initializer(&l->bias_init, l, "bias", err)) != DL_OK)
					return st;
				fill_matrix(p, k * c, l->depth_multiplier, &l->kernel_init, rng, (double) (k * c),
							(double) (k * l->depth_multiplier));
				p += k * cm;
				if (sep)
				{
					fill_matrix(p, cm, oc, &l->pointwise_init, rng, (double) cm, (double) oc);
					p += cm * oc;
				}
				if (l->use_bias)
					fill(p, (size_t) oc, &l->bias_init, rng, (double) oc, (double) oc);
			}
			break;
		case DL_LAYER_LAYERNORM:
			if ((st = check_initializer(&l->gamma_init, l, "gamma", err)) != DL_OK ||
				(st = check_initializer(&l->beta_init, l, "beta", err)) != DL_OK)
				return st;
			if (l->scale)
			{
				fill(p, (size_t) c, &l->gamma_init, rng, (double) c, (double) c);
				p += c;
			}
			if (l->center)
				fill(p, (size_t) c, &l->beta_init, rng, (double) c, (double) c);
			break;
		case DL_LAYER_PRELU:
			if ((st = check_initializer(&l->kernel_init, l, "alpha", err)) != DL_OK)
				return st;
			fill(p, l->n_params, &l->kernel_init, rng, (double) l->n_params, (double) l->n_params);
			break;
		default:
			break;
	}
	return DL_OK;
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
					fill_matrix(p, rf * c, out, &l->kernel_init, &rng, (double) (rf * c),
								(double) (rf * out));
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
				if ((st = init_sequence_layer(p, l, &rng, err)) != DL_OK)
					return st;
				break;
		}
	}
	dl_model_seed_rng(m, seed ^ MODEL_RNG_SEED_XOR);
	dl_model_reset_optim(m);
	return DL_OK;
}
