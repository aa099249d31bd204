/*-------------------------------------------------------------------------
 *
 * spec.c
 *	  Layer defaults, shape inference, parameter layout and fingerprint.
 *
 * dl_model_spec_finalize() walks the layers once, from the input shape,
 * giving each its output shape and its slice of the parameter block in
 * Keras get_weights() order.  Every size is computed with overflow checks,
 * because the JSON is user input.
 *
 * IDENTIFICATION
 *	  src/engine/spec.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "madlib_dl/dl_spec.h"

/* Largest parameter count or per-sample tensor size we accept (2^40). */
#define DL_MAX_ELEMENTS ((int64_t) 1 << 40)

static void
init_set(DlInitializer *init, DlInitKind kind)
{
	memset(init, 0, sizeof(*init));
	init->kind = kind;
	init->stddev = 0.05;		/* Keras RandomNormal default */
	init->minval = -0.05;		/* Keras RandomUniform defaults */
	init->maxval = 0.05;
	init->scale = 1.0;
	init->mode = DL_FAN_IN;
	init->distribution = DL_DIST_TRUNCATED_NORMAL;
}

static void
init_glorot_uniform(DlInitializer *init)
{
	init_set(init, DL_INIT_VARIANCE_SCALING);
	init->scale = 1.0;
	init->mode = DL_FAN_AVG;
	init->distribution = DL_DIST_UNIFORM;
}

void
dl_layer_defaults(DlLayer *layer, DlLayerKind kind)
{
	memset(layer, 0, sizeof(*layer));
	layer->kind = kind;
	layer->trainable = true;
	layer->activation = DL_ACT_LINEAR;
	layer->use_bias = true;
	layer->kernel_size[0] = layer->kernel_size[1] = 1;
	layer->strides[0] = layer->strides[1] = 1;
	layer->pool_size[0] = layer->pool_size[1] = 2;
	if (kind == DL_LAYER_MAXPOOL2D || kind == DL_LAYER_AVGPOOL2D)
		layer->strides[0] = layer->strides[1] = 2;
	layer->padding = DL_PADDING_VALID;
	layer->momentum = 0.99;
	layer->epsilon = 1e-3;
	layer->center = true;
	layer->scale = true;
	init_glorot_uniform(&layer->kernel_init);
	init_set(&layer->bias_init, DL_INIT_ZEROS);
	init_set(&layer->gamma_init, DL_INIT_ONES);
	init_set(&layer->beta_init, DL_INIT_ZEROS);
	init_set(&layer->moving_mean_init, DL_INIT_ZEROS);
	init_set(&layer->moving_variance_init, DL_INIT_ONES);
}

const char *
dl_layer_kind_name(DlLayerKind kind)
{
	switch (kind)
	{
		case DL_LAYER_DENSE:
			return "Dense";
		case DL_LAYER_CONV2D:
			return "Conv2D";
		case DL_LAYER_MAXPOOL2D:
			return "MaxPooling2D";
		case DL_LAYER_AVGPOOL2D:
			return "AveragePooling2D";
		case DL_LAYER_GLOBALAVGPOOL2D:
			return "GlobalAveragePooling2D";
		case DL_LAYER_FLATTEN:
			return "Flatten";
		case DL_LAYER_DROPOUT:
			return "Dropout";
		case DL_LAYER_ACTIVATION:
			return "Activation";
		case DL_LAYER_BATCHNORM:
			return "BatchNormalization";
	}
	return "unknown";
}

const char *
dl_activation_name(DlActivation act)
{
	switch (act)
	{
		case DL_ACT_LINEAR:
			return "linear";
		case DL_ACT_RELU:
			return "relu";
		case DL_ACT_SIGMOID:
			return "sigmoid";
		case DL_ACT_TANH:
			return "tanh";
		case DL_ACT_SOFTMAX:
			return "softmax";
		case DL_ACT_ELU:
			return "elu";
		case DL_ACT_SOFTPLUS:
			return "softplus";
	}
	return "unknown";
}

DlModelSpec *
dl_model_spec_create(int n_layers, const DlAllocator *alloc, DlError *err)
{
	DlModelSpec *spec;

	if (n_layers < 0 || n_layers > DL_MAX_LAYERS)
	{
		dl_error_set(err, DL_ERR_LIMIT, "model has %d layers, more than the limit of %d",
					 n_layers, DL_MAX_LAYERS);
		return NULL;
	}
	spec = dl_alloc(alloc, sizeof(DlModelSpec), err);
	if (spec == NULL)
		return NULL;
	spec->layers = dl_alloc_array(alloc, n_layers > 0 ? (size_t) n_layers : 1, sizeof(DlLayer), err);
	if (spec->layers == NULL)
	{
		dl_free(alloc, spec);
		return NULL;
	}
	spec->n_layers = n_layers;
	for (int i = 0; i < n_layers; i++)
		dl_layer_defaults(&spec->layers[i], DL_LAYER_DENSE);
	return spec;
}

void
dl_model_spec_free(DlModelSpec *spec, const DlAllocator *alloc)
{
	if (spec == NULL)
		return;
	dl_free(alloc, spec->layers);
	dl_free(alloc, spec);
}

/* Output extent of a convolution or pooling window along one axis. */
static DlStatus
window_out(int64_t in, int k, int s, DlPadding pad, int64_t *out,
		   const DlLayer *layer, const char *axis, DlError *err)
{
	if (k < 1 || s < 1)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							"layer \"%s\": window %d and stride %d along %s must be positive",
							layer->name, k, s, axis);
	if (pad == DL_PADDING_SAME)
		*out = (in + s - 1) / s;
	else
		*out = in >= k ? (in - k) / s + 1 : 0;
	if (*out < 1)
		return dl_error_set(err, DL_ERR_SHAPE,
							"layer \"%s\": %s of %lld is smaller than the window of %d",
							layer->name, axis, (long long) in, k);
	return DL_OK;
}

static bool
elements_ok(const DlShape *s)
{
	int64_t		n = 1;

	for (int i = 0; i < s->rank; i++)
	{
		if (s->dims[i] < 1 || s->dims[i] > DL_MAX_ELEMENTS / n)
			return false;
		n *= s->dims[i];
	}
	return true;
}

static DlStatus
need_rank3(const DlLayer *layer, const DlShape *in, DlError *err)
{
	if (in->rank != 3)
	{
		dl_error_set(err, DL_ERR_SHAPE,
					 "layer \"%s\" (%s) needs an input of rank 3 (height, width, channels), got rank %d",
					 layer->name, dl_layer_kind_name(layer->kind), in->rank);
		return dl_error_hint(err, "Give the input layer a shape such as [28, 28, 1], or add a Flatten layer before Dense layers only.");
	}
	return DL_OK;
}

static DlStatus
finalize_layer(DlLayer *layer, const DlShape *in, size_t *offset, DlError *err)
{
	DlShape		out = *in;
	int64_t		n_params = 0;
	int64_t		n_trainable = 0;
	int64_t		c = dl_shape_last(in);
	DlStatus	st;

	switch (layer->kind)
	{
		case DL_LAYER_DENSE:
			if (layer->units < 1)
				return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
									"layer \"%s\": units must be positive, got %lld",
									layer->name, (long long) layer->units);
			out.dims[out.rank - 1] = layer->units;
			if (c > DL_MAX_ELEMENTS / layer->units)
				return dl_error_set(err, DL_ERR_LIMIT, "layer \"%s\": kernel of %lld x %lld is too large",
									layer->name, (long long) c, (long long) layer->units);
			n_params = c * layer->units + (layer->use_bias ? layer->units : 0);
			n_trainable = n_params;
			break;
		case DL_LAYER_CONV2D:
			if ((st = need_rank3(layer, in, err)) != DL_OK)
				return st;
			if (layer->filters < 1)
				return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
									"layer \"%s\": filters must be positive, got %lld",
									layer->name, (long long) layer->filters);
			if ((st = window_out(in->dims[0], layer->kernel_size[0], layer->strides[0],
								 layer->padding, &out.dims[0], layer, "height", err)) != DL_OK ||
				(st = window_out(in->dims[1], layer->kernel_size[1], layer->strides[1],
								 layer->padding, &out.dims[1], layer, "width", err)) != DL_OK)
				return st;
			out.dims[2] = layer->filters;
			{
				int64_t		k = (int64_t) layer->kernel_size[0] * layer->kernel_size[1];

				if (c > DL_MAX_ELEMENTS / k || c * k > DL_MAX_ELEMENTS / layer->filters)
					return dl_error_set(err, DL_ERR_LIMIT, "layer \"%s\": kernel is too large",
										layer->name);
				n_params = k * c * layer->filters + (layer->use_bias ? layer->filters : 0);
			}
			n_trainable = n_params;
			break;
		case DL_LAYER_MAXPOOL2D:
		case DL_LAYER_AVGPOOL2D:
			if ((st = need_rank3(layer, in, err)) != DL_OK)
				return st;
			if ((st = window_out(in->dims[0], layer->pool_size[0], layer->strides[0],
								 layer->padding, &out.dims[0], layer, "height", err)) != DL_OK ||
				(st = window_out(in->dims[1], layer->pool_size[1], layer->strides[1],
								 layer->padding, &out.dims[1], layer, "width", err)) != DL_OK)
				return st;
			break;
		case DL_LAYER_GLOBALAVGPOOL2D:
			if ((st = need_rank3(layer, in, err)) != DL_OK)
				return st;
			out.rank = 1;
			out.dims[0] = c;
			break;
		case DL_LAYER_FLATTEN:
			out.rank = 1;
			out.dims[0] = dl_shape_size(in);
			break;
		case DL_LAYER_DROPOUT:
			if (!(layer->rate >= 0.0 && layer->rate < 1.0))
				return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
									"layer \"%s\": dropout rate must be in [0, 1), got %g",
									layer->name, layer->rate);
			break;
		case DL_LAYER_ACTIVATION:
			break;
		case DL_LAYER_BATCHNORM:
			if (!(layer->epsilon > 0.0))
				return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
									"layer \"%s\": epsilon must be positive, got %g",
									layer->name, layer->epsilon);
			n_trainable = c * ((layer->scale ? 1 : 0) + (layer->center ? 1 : 0));
			n_params = n_trainable + 2 * c;
			break;
	}
	if (!elements_ok(&out))
		return dl_error_set(err, DL_ERR_LIMIT, "layer \"%s\": output shape is empty or too large",
							layer->name);
	if (n_params > DL_MAX_ELEMENTS || (size_t) n_params > SIZE_MAX - *offset)
		return dl_error_set(err, DL_ERR_LIMIT, "layer \"%s\": too many parameters", layer->name);
	layer->in_shape = *in;
	layer->out_shape = out;
	layer->param_offset = *offset;
	layer->n_params = (size_t) n_params;
	layer->n_trainable = layer->trainable ? (size_t) n_trainable : 0;
	*offset += (size_t) n_params;
	return DL_OK;
}

DlStatus
dl_model_spec_finalize(DlModelSpec *spec, DlError *err)
{
	DlShape		cur = spec->input_shape;
	size_t		offset = 0;
	size_t		trainable = 0;

	if (cur.rank < 1 || cur.rank > DL_MAX_RANK || !elements_ok(&cur))
	{
		dl_error_set(err, DL_ERR_SHAPE, "model input shape is missing or invalid (rank %d)", cur.rank);
		return dl_error_hint(err, "Give the first layer batch_input_shape, or start the model with an InputLayer.");
	}
	if (spec->n_layers < 1)
		return dl_error_set(err, DL_ERR_SHAPE, "model has no layers");
	for (int i = 0; i < spec->n_layers; i++)
	{
		DlStatus	st = finalize_layer(&spec->layers[i], &cur, &offset, err);

		if (st != DL_OK)
			return st;
		cur = spec->layers[i].out_shape;
		trainable += spec->layers[i].n_trainable;
	}
	spec->output_shape = cur;
	spec->n_params = offset;
	spec->n_trainable = trainable;
	return DL_OK;
}

static uint64_t
fnv_mix(uint64_t h, int64_t v)
{
	for (int i = 0; i < 8; i++)
	{
		h ^= (uint64_t) ((v >> (8 * i)) & 0xff);
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t
fnv_shape(uint64_t h, const DlShape *s)
{
	h = fnv_mix(h, s->rank);
	for (int i = 0; i < s->rank; i++)
		h = fnv_mix(h, s->dims[i]);
	return h;
}

uint64_t
dl_model_spec_fingerprint(const DlModelSpec *spec)
{
	uint64_t	h = 0xcbf29ce484222325ULL;

	h = fnv_shape(h, &spec->input_shape);
	h = fnv_mix(h, spec->n_layers);
	for (int i = 0; i < spec->n_layers; i++)
	{
		const DlLayer *l = &spec->layers[i];

		h = fnv_mix(h, l->kind);
		h = fnv_mix(h, l->activation);
		h = fnv_shape(h, &l->out_shape);
		h = fnv_mix(h, (int64_t) l->n_params);
		h = fnv_mix(h, l->use_bias);
		h = fnv_mix(h, l->kernel_size[0]);
		h = fnv_mix(h, l->kernel_size[1]);
		h = fnv_mix(h, l->strides[0]);
		h = fnv_mix(h, l->strides[1]);
		h = fnv_mix(h, l->padding);
		h = fnv_mix(h, l->pool_size[0]);
		h = fnv_mix(h, l->pool_size[1]);
		h = fnv_mix(h, (int64_t) l->center * 2 + l->scale);
	}
	return h;
}
