/*-------------------------------------------------------------------------
 *
 * spec.c
 *	  Layer defaults, shape inference, parameter layout and fingerprint.
 *
 * dl_model_spec_finalize() walks the layers once, in their (topological)
 * order, giving each its output shape from the shapes of the tensors it
 * reads and its slice of the parameter block in Keras get_weights()
 * order; then plan.c works out how the executor runs the graph.  Every
 * size is computed with overflow checks, because the JSON is user input.
 *
 * IDENTIFICATION
 *	  src/engine/spec.c
 *
 *-------------------------------------------------------------------------
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "madlib_dl/dl_spec.h"
#include "plan.h"

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
	layer->dilation[0] = layer->dilation[1] = 1;
	layer->pool_size[0] = layer->pool_size[1] = 2;
	layer->size[0] = layer->size[1] = 2;
	layer->concat_axis = -1;
	if (kind == DL_LAYER_MAXPOOL2D || kind == DL_LAYER_AVGPOOL2D)
		layer->strides[0] = layer->strides[1] = 2;
	layer->padding = DL_PADDING_VALID;
	layer->momentum = 0.99;
	layer->epsilon = 1e-3;
	layer->center = true;
	layer->scale = true;
	init_glorot_uniform(&layer->kernel_init);
	init_set(&layer->bias_init, DL_INIT_ZEROS);
	init_set(&layer->recurrent_init, DL_INIT_ORTHOGONAL);
	init_glorot_uniform(&layer->pointwise_init);
	layer->recurrent_activation = DL_ACT_SIGMOID;
	layer->unit_forget_bias = true;
	layer->depth_multiplier = 1;
	for (int d = 0; d < DL_MAX_RANK; d++)
		layer->perm[d] = -1;
	if (kind == DL_LAYER_EMBEDDING)
		init_set(&layer->kernel_init, DL_INIT_RANDOM_UNIFORM);
	if (kind == DL_LAYER_PRELU)
		init_set(&layer->kernel_init, DL_INIT_ZEROS);
	if (dl_layer_is_recurrent(kind))
		layer->activation = DL_ACT_TANH;
	init_set(&layer->gamma_init, DL_INIT_ONES);
	init_set(&layer->beta_init, DL_INIT_ZEROS);
	init_set(&layer->moving_mean_init, DL_INIT_ZEROS);
	init_set(&layer->moving_variance_init, DL_INIT_ONES);
}

#define DL_LAYER_NAME_ENTRY(kind, name) [DL_LAYER_##kind] = name,

static const char *const layer_kind_names[] = {DL_LAYER_KINDS(DL_LAYER_NAME_ENTRY)};

_Static_assert(sizeof(layer_kind_names) / sizeof(layer_kind_names[0]) == DL_LAYER_N_KINDS,
			   "layer_kind_names names every layer kind");

const char *
dl_layer_kind_name(DlLayerKind kind)
{
	if ((unsigned) kind >= DL_LAYER_N_KINDS)
		return "unknown";
	return layer_kind_names[kind];
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
		case DL_ACT_SELU:
			return "selu";
		case DL_ACT_SWISH:
			return "swish";
		case DL_ACT_GELU:
			return "gelu";
		case DL_ACT_SOFTSIGN:
			return "softsign";
		case DL_ACT_HARD_SIGMOID:
		case DL_ACT_HARD_SIGMOID_K3:
			return "hard_sigmoid";
		case DL_ACT_EXPONENTIAL:
			return "exponential";
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
	spec->n_inputs = 1;
	spec->n_outputs = 0;		/* finalize: the last layer */
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
window_out(int64_t in, int64_t k, int s, DlPadding pad, int64_t *out,
		   const DlLayer *layer, const char *axis, DlError *err)
{
	if (k < 1 || s < 1)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							"layer \"%s\": window %lld and stride %d along %s must be positive",
							layer->name, (long long) k, s, axis);
	if (pad == DL_PADDING_SAME)
		*out = (in + s - 1) / s;
	else
		*out = in >= k ? (in - k) / s + 1 : 0;
	if (*out < 1)
		return dl_error_set(err, DL_ERR_SHAPE,
							"layer \"%s\": %s of %lld is smaller than the window of %lld",
							layer->name, axis, (long long) in, (long long) k);
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

static const char *shape_text(const DlShape *s, char *buf, size_t size);

static DlStatus
need_rank2(const DlLayer *layer, const DlShape *in, DlError *err)
{
	if (in->rank != 2)
	{
		dl_error_set(err, DL_ERR_SHAPE,
					 "layer \"%s\" (%s) needs an input of rank 2 (steps, features), got rank %d",
					 layer->name, dl_layer_kind_name(layer->kind), in->rank);
		return dl_error_hint(err, "Give the layer a sequence: an Embedding's output, a Conv1D's, or an input "
							 "of shape [steps, features].");
	}
	return DL_OK;
}

/* Gate blocks of a recurrent cell: LSTM 4 (i, f, c, o), GRU 3 (z, r, h), SimpleRNN 1. */
int
dl_rnn_gates(DlLayerKind kind)
{
	return kind == DL_LAYER_LSTM ? 4 : kind == DL_LAYER_GRU ? 3 : 1;
}

/*
 * Floats of one direction of a recurrent layer: kernel (I, G*U),
 * recurrent_kernel (U, G*U) and bias; -1 when too many.
 */
static int64_t
rnn_direction_params(const DlLayer *layer, int64_t I)
{
	int64_t		U = layer->units;
	int64_t		GU = dl_rnn_gates(layer->kind) * U;
	int64_t		bias = !layer->use_bias ? 0 :
		(layer->kind == DL_LAYER_GRU && layer->reset_after ? 2 * GU : GU);

	if (I > DL_MAX_ELEMENTS / GU || U > DL_MAX_ELEMENTS / GU)
		return -1;
	return I * GU + U * GU + bias;
}

/* Recurrent layers: (T, I) -> (T, U') or (U'); U' = 2U for a concatenation. */
static DlStatus
finalize_recurrent(DlLayer *layer, const DlShape *in, DlShape *out, int64_t *n_params,
				   DlError *err)
{
	int64_t		dirs = layer->bidir != DL_BIDIR_NONE ? 2 : 1;
	int64_t		per;
	DlStatus	st;

	if ((st = need_rank2(layer, in, err)) != DL_OK)
		return st;
	if (layer->units < 1 || layer->units > DL_MAX_ELEMENTS / 4)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							"layer \"%s\": units must be positive, got %lld",
							layer->name, (long long) layer->units);
	per = rnn_direction_params(layer, in->dims[1]);
	if (per < 0 || per > DL_MAX_ELEMENTS / 2)
		return dl_error_set(err, DL_ERR_LIMIT, "layer \"%s\": kernel is too large", layer->name);
	/* a step's rows lie steps x (in + 4 units) floats apart: an int for BLAS */
	if (in->dims[0] > INT_MAX / (in->dims[1] + 4 * layer->units))
		return dl_error_set(err, DL_ERR_LIMIT,
							"layer \"%s\": %lld steps of %lld features and %lld units are too many",
							layer->name, (long long) in->dims[0], (long long) in->dims[1],
							(long long) layer->units);
	*n_params = dirs * per;
	out->rank = layer->return_sequences ? 2 : 1;
	out->dims[0] = layer->return_sequences ? in->dims[0] : 0;
	out->dims[out->rank - 1] = (layer->bidir == DL_BIDIR_CONCAT ? 2 : 1) * layer->units;
	return DL_OK;
}

/* dilation_rate: positive, and other than 1 only with strides 1 (as in Keras). */
static DlStatus
check_dilation(const DlLayer *layer, DlError *err)
{
	if (layer->dilation[0] < 1 || layer->dilation[1] < 1)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							"layer \"%s\": dilation_rate (%d, %d) must be positive",
							layer->name, layer->dilation[0], layer->dilation[1]);
	if ((layer->dilation[0] > 1 || layer->dilation[1] > 1) &&
		(layer->strides[0] > 1 || layer->strides[1] > 1))
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
					 "layer \"%s\": dilation_rate (%d, %d) with strides (%d, %d)",
					 layer->name, layer->dilation[0], layer->dilation[1],
					 layer->strides[0], layer->strides[1]);
		return dl_error_hint(err, "Keras allows a dilation_rate other than 1 only with strides 1.");
	}
	return DL_OK;
}

/*
 * Conv1D, DepthwiseConv2D and SeparableConv2D geometry: the output's
 * spatial extent (Conv1D as a height of 1) from kernel, strides,
 * dilation and padding ("causal": (K - 1) * D zeros before, none after).
 */
static DlStatus
finalize_window_conv(DlLayer *layer, const DlShape *in, DlShape *out, DlError *err)
{
	int			axes = layer->kind == DL_LAYER_CONV1D ? 1 : 2;
	DlStatus	st;

	if ((st = check_dilation(layer, err)) != DL_OK)
		return st;
	for (int a = 0; a < axes; a++)
	{
		int			d = axes == 1 ? 1 : a;	/* the axis of the geometry */
		int64_t		span = (int64_t) (layer->kernel_size[d] - 1) * layer->dilation[d] + 1;

		if (layer->padding == DL_PADDING_CAUSAL)
		{
			if (layer->kind != DL_LAYER_CONV1D)
				return dl_error_set(err, DL_ERR_UNSUPPORTED,
									"layer \"%s\": padding \"causal\" is for Conv1D only", layer->name);
			/* (K - 1) * D zeros before the first step: a "valid" window over T + span - 1 */
			st = window_out(in->dims[0] + span - 1, span, layer->strides[d], DL_PADDING_VALID,
							&out->dims[0], layer, "steps", err);
		}
		else
			st = window_out(in->dims[a], span, layer->strides[d], layer->padding, &out->dims[a],
							layer, axes == 1 ? "steps" : a == 0 ? "height" : "width", err);
		if (st != DL_OK)
			return st;
	}
	return DL_OK;
}

/* Resolve Reshape's target_shape (one dimension may be -1) against the input's size. */
static DlStatus
finalize_reshape(DlLayer *layer, const DlShape *in, DlShape *out, DlError *err)
{
	int64_t		size = dl_shape_size(in);
	int64_t		known = 1;
	int			unknown = -1;

	*out = layer->target_shape;
	if (out->rank < 1 || out->rank > DL_MAX_RANK)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							"layer \"%s\" (Reshape): target_shape of rank %d", layer->name, out->rank);
	for (int d = 0; d < out->rank; d++)
	{
		if (out->dims[d] == -1 && unknown < 0)
			unknown = d;
		else if (out->dims[d] < 1 || out->dims[d] > DL_MAX_ELEMENTS / known)
			return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
								"layer \"%s\" (Reshape): target_shape dimension %d is %lld",
								layer->name, d + 1, (long long) out->dims[d]);
		else
			known *= out->dims[d];
	}
	if (unknown >= 0 && size % known == 0)
		out->dims[unknown] = size / known;
	if ((unknown >= 0 && size % known != 0) || (unknown < 0 && known != size))
	{
		char		a[64],
					b[64];

		dl_error_set(err, DL_ERR_SHAPE,
					 "layer \"%s\" (Reshape): an input of shape %s cannot become %s",
					 layer->name, shape_text(in, a, sizeof(a)),
					 shape_text(&layer->target_shape, b, sizeof(b)));
		return dl_error_hint(err, "Give a target_shape with as many values as the input, "
							 "one dimension at most -1.");
	}
	return DL_OK;
}

/* Permute's dims: a permutation of the input's axes. */
static DlStatus
finalize_permute(DlLayer *layer, const DlShape *in, DlShape *out, DlError *err)
{
	unsigned	seen = 0;

	for (int d = 0; d < in->rank; d++)
	{
		int			p = layer->perm[d];

		if (p < 0 || p >= in->rank || (seen & (1u << p)) != 0)
		{
			dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
						 "layer \"%s\" (Permute): dims are not a permutation of the %d axes of its input",
						 layer->name, in->rank);
			return dl_error_hint(err, "Give dims as the input's axes 1 .. rank in a new order, "
								 "e.g. [2, 1].");
		}
		seen |= 1u << p;
		out->dims[d] = in->dims[p];
	}
	for (int d = in->rank; d < DL_MAX_RANK; d++)
		if (layer->perm[d] != -1)
			return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
								"layer \"%s\" (Permute): dims has more axes than its input's %d",
								layer->name, in->rank);
	return DL_OK;
}

/* Shape of what in[j] of a layer names: a layer's output or a model input. */
static const DlShape *
tensor_shape(const DlModelSpec *spec, int ref)
{
	return ref >= 0 ? &spec->layers[ref].out_shape : &spec->input_shapes[-1 - ref];
}

/* Text of shape s, "(28, 28, 1)", into buf. */
static const char *
shape_text(const DlShape *s, char *buf, size_t size)
{
	size_t		n = 0;

	buf[0] = '\0';
	for (int i = 0; i < s->rank && n + 1 < size; i++)
		n += (size_t) snprintf(buf + n, size - n, "%s%lld", i == 0 ? "(" : ", ",
							   (long long) s->dims[i]);
	if (n + 2 < size)
		snprintf(buf + n, size - n, "%s", s->rank > 0 ? ")" : "()");
	return buf;
}

static bool
shape_equal(const DlShape *a, const DlShape *b)
{
	if (a->rank != b->rank)
		return false;
	for (int i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	return true;
}

/*
 * The output shape of a merge layer from the shapes of its n inputs: all
 * equal for the element-wise merges; for Concatenate equal but along the
 * axis, where they add up.
 */
static DlStatus
merge_shape(DlLayer *layer, const DlShape *const *ins, int n, DlShape *out, DlError *err)
{
	char		a[64],
				b[64];

	if (n < 2 || (layer->kind == DL_LAYER_SUBTRACT && n != 2))
	{
		dl_error_set(err, DL_ERR_SHAPE, "layer \"%s\" (%s) needs %s inputs, got %d",
					 layer->name, dl_layer_kind_name(layer->kind),
					 layer->kind == DL_LAYER_SUBTRACT ? "exactly 2" : "at least 2", n);
		return dl_error_hint(err, "Call the merge layer on a list of tensors, e.g. Add()([x, y]).");
	}
	*out = *ins[0];
	if (layer->kind != DL_LAYER_CONCATENATE)
	{
		for (int j = 1; j < n; j++)
		{
			if (!shape_equal(ins[j], ins[0]))
			{
				dl_error_set(err, DL_ERR_SHAPE,
							 "layer \"%s\" (%s): input %d has shape %s, input 1 has %s",
							 layer->name, dl_layer_kind_name(layer->kind), j + 1,
							 shape_text(ins[j], a, sizeof(a)), shape_text(ins[0], b, sizeof(b)));
				return dl_error_hint(err, "Give the inputs of a merge layer the same shape; "
									 "broadcasting is not supported.");
			}
		}
		return DL_OK;
	}
	{
		int			rank = ins[0]->rank;
		int			axis = layer->concat_axis < 0 ? rank + layer->concat_axis : layer->concat_axis;
		int64_t		sum = 0;

		if (axis < 0 || axis >= rank)
		{
			dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
						 "layer \"%s\" (Concatenate): axis %d is outside the %d axes of its inputs",
						 layer->name, layer->concat_axis, rank);
			return dl_error_hint(err, "Concatenate along an axis of the inputs (not the batch): "
								 "-1 for the last.");
		}
		layer->concat_axis = axis;
		for (int j = 0; j < n; j++)
		{
			bool		ok = ins[j]->rank == rank;

			for (int d = 0; ok && d < rank; d++)
				ok = d == axis || ins[j]->dims[d] == ins[0]->dims[d];
			if (!ok)
			{
				dl_error_set(err, DL_ERR_SHAPE,
							 "layer \"%s\" (Concatenate): input %d has shape %s, input 1 has %s, "
							 "which differ beyond axis %d",
							 layer->name, j + 1, shape_text(ins[j], a, sizeof(a)),
							 shape_text(ins[0], b, sizeof(b)), axis);
				return dl_error_hint(err, "Give the inputs of Concatenate the same shape except "
									 "along the axis they are joined on.");
			}
			if (ins[j]->dims[axis] > DL_MAX_ELEMENTS - sum)
				return dl_error_set(err, DL_ERR_LIMIT, "layer \"%s\": output shape is too large",
									layer->name);
			sum += ins[j]->dims[axis];
		}
		out->dims[axis] = sum;
	}
	return DL_OK;
}

/* ZeroPadding2D and Cropping2D: the four margins must not be negative. */
static DlStatus
check_margins(const DlLayer *layer, DlError *err)
{
	for (int k = 0; k < 4; k++)
		if (layer->margins[k] < 0)
			return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
								"layer \"%s\" (%s): margins (%d, %d, %d, %d) must not be negative",
								layer->name, dl_layer_kind_name(layer->kind), layer->margins[0],
								layer->margins[1], layer->margins[2], layer->margins[3]);
	return DL_OK;
}

static DlStatus
finalize_layer(DlLayer *layer, const DlShape *const *ins, int n_in, size_t *offset, DlError *err)
{
	const DlShape *in = ins[0];
	DlShape		out = *in;
	int64_t		n_params = 0;
	int64_t		n_trainable = 0;
	int64_t		c = dl_shape_last(in);
	DlStatus	st;

	if (!dl_layer_is_merge(layer->kind) && n_in != 1)
		return dl_error_set(err, DL_ERR_SHAPE, "layer \"%s\" (%s) takes one input, got %d",
							layer->name, dl_layer_kind_name(layer->kind), n_in);
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
			if ((st = check_dilation(layer, err)) != DL_OK)
				return st;
			/* the dilated window spans (K - 1) * D + 1 cells */
			if ((st = window_out(in->dims[0],
								 (int64_t) (layer->kernel_size[0] - 1) * layer->dilation[0] + 1,
								 layer->strides[0], layer->padding, &out.dims[0], layer,
								 "height", err)) != DL_OK ||
				(st = window_out(in->dims[1],
								 (int64_t) (layer->kernel_size[1] - 1) * layer->dilation[1] + 1,
								 layer->strides[1], layer->padding, &out.dims[1], layer,
								 "width", err)) != DL_OK)
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
		case DL_LAYER_GLOBALMAXPOOL2D:
			if ((st = need_rank3(layer, in, err)) != DL_OK)
				return st;
			out.rank = 1;
			out.dims[0] = c;
			break;
		case DL_LAYER_ZEROPADDING2D:
			if ((st = need_rank3(layer, in, err)) != DL_OK ||
				(st = check_margins(layer, err)) != DL_OK)
				return st;
			out.dims[0] = in->dims[0] + layer->margins[0] + layer->margins[1];
			out.dims[1] = in->dims[1] + layer->margins[2] + layer->margins[3];
			break;
		case DL_LAYER_CROPPING2D:
			if ((st = need_rank3(layer, in, err)) != DL_OK ||
				(st = check_margins(layer, err)) != DL_OK)
				return st;
			out.dims[0] = in->dims[0] - layer->margins[0] - layer->margins[1];
			out.dims[1] = in->dims[1] - layer->margins[2] - layer->margins[3];
			if (out.dims[0] < 1 || out.dims[1] < 1)
				return dl_error_set(err, DL_ERR_SHAPE,
									"layer \"%s\" (Cropping2D): cropping (%d, %d, %d, %d) leaves nothing "
									"of an input of %lld x %lld",
									layer->name, layer->margins[0], layer->margins[1],
									layer->margins[2], layer->margins[3],
									(long long) in->dims[0], (long long) in->dims[1]);
			break;
		case DL_LAYER_UPSAMPLING2D:
			if ((st = need_rank3(layer, in, err)) != DL_OK)
				return st;
			if (layer->size[0] < 1 || layer->size[1] < 1)
				return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
									"layer \"%s\" (UpSampling2D): size (%d, %d) must be positive",
									layer->name, layer->size[0], layer->size[1]);
			if (in->dims[0] > DL_MAX_ELEMENTS / layer->size[0] ||
				in->dims[1] > DL_MAX_ELEMENTS / layer->size[1])
				return dl_error_set(err, DL_ERR_LIMIT, "layer \"%s\": output shape is empty or too large",
									layer->name);
			out.dims[0] = in->dims[0] * layer->size[0];
			out.dims[1] = in->dims[1] * layer->size[1];
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
		DL_LAYER_CASES_ELEMENTWISE:
		case DL_LAYER_CONCATENATE:
			if ((st = merge_shape(layer, ins, n_in, &out, err)) != DL_OK)
				return st;
			break;
		case DL_LAYER_EMBEDDING:
			if (in->rank >= DL_MAX_RANK)
				return dl_error_set(err, DL_ERR_SHAPE,
									"layer \"%s\" (Embedding): an input of rank %d gives an output of rank %d, "
									"more than %d", layer->name, in->rank, in->rank + 1, DL_MAX_RANK);
			if (layer->input_dim < 1 || layer->units < 1 ||
				layer->input_dim > DL_MAX_ELEMENTS / layer->units)
				return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
									"layer \"%s\" (Embedding): input_dim %lld and output_dim %lld must be "
									"positive and their product at most 2^40",
									layer->name, (long long) layer->input_dim, (long long) layer->units);
			out.rank = in->rank + 1;
			out.dims[in->rank] = layer->units;
			n_params = layer->input_dim * layer->units;
			n_trainable = n_params;
			break;
		case DL_LAYER_CONV1D:
			if ((st = need_rank2(layer, in, err)) != DL_OK)
				return st;
			if (layer->filters < 1)
				return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
									"layer \"%s\": filters must be positive, got %lld",
									layer->name, (long long) layer->filters);
			if ((st = finalize_window_conv(layer, in, &out, err)) != DL_OK)
				return st;
			out.dims[1] = layer->filters;
			if (c > DL_MAX_ELEMENTS / layer->kernel_size[1] ||
				c * layer->kernel_size[1] > DL_MAX_ELEMENTS / layer->filters)
				return dl_error_set(err, DL_ERR_LIMIT, "layer \"%s\": kernel is too large", layer->name);
			n_params = layer->kernel_size[1] * c * layer->filters + (layer->use_bias ? layer->filters : 0);
			n_trainable = n_params;
			break;
		case DL_LAYER_MAXPOOL1D:
		case DL_LAYER_AVGPOOL1D:
			if ((st = need_rank2(layer, in, err)) != DL_OK ||
				(st = window_out(in->dims[0], layer->pool_size[1], layer->strides[1],
								 layer->padding, &out.dims[0], layer, "steps", err)) != DL_OK)
				return st;
			break;
		case DL_LAYER_GLOBALMAXPOOL1D:
		case DL_LAYER_GLOBALAVGPOOL1D:
			if ((st = need_rank2(layer, in, err)) != DL_OK)
				return st;
			out.rank = 1;
			out.dims[0] = c;
			break;
		case DL_LAYER_LSTM:
		case DL_LAYER_GRU:
		case DL_LAYER_SIMPLERNN:
			if ((st = finalize_recurrent(layer, in, &out, &n_params, err)) != DL_OK)
				return st;
			n_trainable = n_params;
			break;
		case DL_LAYER_DEPTHWISECONV2D:
		case DL_LAYER_SEPARABLECONV2D:
			if ((st = need_rank3(layer, in, err)) != DL_OK)
				return st;
			if (layer->depth_multiplier < 1 || layer->depth_multiplier > DL_MAX_ELEMENTS / c)
				return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
									"layer \"%s\": depth_multiplier must be positive, got %lld",
									layer->name, (long long) layer->depth_multiplier);
			if (layer->kind == DL_LAYER_SEPARABLECONV2D && layer->filters < 1)
				return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
									"layer \"%s\": filters must be positive, got %lld",
									layer->name, (long long) layer->filters);
			if ((st = finalize_window_conv(layer, in, &out, err)) != DL_OK)
				return st;
			{
				int64_t		k = (int64_t) layer->kernel_size[0] * layer->kernel_size[1];
				int64_t		cm = c * layer->depth_multiplier;
				int64_t		oc = layer->kind == DL_LAYER_SEPARABLECONV2D ? layer->filters : cm;

				if (cm > DL_MAX_ELEMENTS / k || cm > DL_MAX_ELEMENTS / oc)
					return dl_error_set(err, DL_ERR_LIMIT, "layer \"%s\": kernel is too large",
										layer->name);
				out.dims[2] = oc;
				n_params = k * cm + (layer->kind == DL_LAYER_SEPARABLECONV2D ? cm * oc : 0) +
					(layer->use_bias ? oc : 0);
			}
			n_trainable = n_params;
			break;
		case DL_LAYER_LAYERNORM:
			if (!(layer->epsilon > 0.0))
				return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
									"layer \"%s\": epsilon must be positive, got %g",
									layer->name, layer->epsilon);
			n_params = c * ((layer->scale ? 1 : 0) + (layer->center ? 1 : 0));
			n_trainable = n_params;
			break;
		case DL_LAYER_RELU:
			if (!isfinite(layer->negative_slope) || !isfinite(layer->threshold) ||
				(layer->has_max_value && !(layer->max_value >= 0.0)))
			{
				dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							 "layer \"%s\" (ReLU): max_value %g, negative_slope %g and threshold %g "
							 "must be finite, max_value not negative",
							 layer->name, layer->has_max_value ? layer->max_value : 0.0,
							 layer->negative_slope, layer->threshold);
				return dl_error_hint(err, "Give ReLU a max_value of at least 0, or none.");
			}
			break;
		case DL_LAYER_PRELU:
			n_params = 1;
			for (int d = 0; d < in->rank; d++)
				if ((layer->shared_axes & (1u << d)) == 0)
					n_params *= in->dims[d];
			if ((layer->shared_axes >> in->rank) != 0)
				return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
									"layer \"%s\" (PReLU): shared_axes name an axis beyond the %d of its input",
									layer->name, in->rank);
			n_trainable = n_params;
			break;
		case DL_LAYER_RESHAPE:
			if ((st = finalize_reshape(layer, in, &out, err)) != DL_OK)
				return st;
			break;
		case DL_LAYER_PERMUTE:
			if ((st = finalize_permute(layer, in, &out, err)) != DL_OK)
				return st;
			break;
		case DL_LAYER_REPEATVECTOR:
			if (in->rank != 1)
				return dl_error_set(err, DL_ERR_SHAPE,
									"layer \"%s\" (RepeatVector) needs an input of rank 1, got rank %d",
									layer->name, in->rank);
			if (layer->repeat_n < 1 || layer->repeat_n > DL_MAX_ELEMENTS)
				return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
									"layer \"%s\" (RepeatVector): n must be positive, got %lld",
									layer->name, (long long) layer->repeat_n);
			out.rank = 2;
			out.dims[0] = layer->repeat_n;
			out.dims[1] = in->dims[0];
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

/*
 * Write out a chain link's inputs (n_in 0: the layer before) and check
 * that layer i reads only earlier layers and existing inputs.
 */
static DlStatus
check_inputs(DlModelSpec *spec, int i, DlError *err)
{
	DlLayer    *l = &spec->layers[i];

	if (l->n_in == 0)
	{
		l->n_in = 1;
		l->in[0] = i - 1;		/* -1: input 0 */
	}
	if (l->n_in < 1 || l->n_in > DL_MAX_FAN_IN)
		return dl_error_set(err, DL_ERR_LIMIT, "layer \"%s\" has %d inputs, more than the limit of %d",
							l->name, l->n_in, DL_MAX_FAN_IN);
	for (int j = 0; j < l->n_in; j++)
	{
		if (l->in[j] >= i || l->in[j] < -spec->n_inputs)
			return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
								"layer \"%s\" (layer %d) reads tensor %d, which is neither an earlier "
								"layer nor one of the %d inputs",
								l->name, i + 1, l->in[j], spec->n_inputs);
	}
	return DL_OK;
}

/* Resolve the default output and check the outputs name distinct layers. */
static DlStatus
check_outputs(DlModelSpec *spec, DlError *err)
{
	if (spec->n_outputs == 0)
	{
		spec->n_outputs = 1;
		spec->outputs[0] = spec->n_layers - 1;
	}
	if (spec->n_outputs < 1 || spec->n_outputs > DL_MAX_IO)
		return dl_error_set(err, DL_ERR_LIMIT, "model has %d outputs; between 1 and %d are supported",
							spec->n_outputs, DL_MAX_IO);
	for (int k = 0; k < spec->n_outputs; k++)
	{
		if (spec->outputs[k] < 0 || spec->outputs[k] >= spec->n_layers)
			return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "model output %d names layer %d of %d",
								k + 1, spec->outputs[k], spec->n_layers);
		for (int j = 0; j < k; j++)
			if (spec->outputs[j] == spec->outputs[k])
				return dl_error_set(err, DL_ERR_UNSUPPORTED,
									"layer \"%s\" is the model's output %d and %d",
									spec->layers[spec->outputs[k]].name, j + 1, k + 1);
		spec->output_shapes[k] = spec->layers[spec->outputs[k]].out_shape;
	}
	spec->output_shape = spec->output_shapes[0];
	return DL_OK;
}

DlStatus
dl_model_spec_finalize(DlModelSpec *spec, DlError *err)
{
	size_t		offset = 0;
	size_t		trainable = 0;
	DlStatus	st;

	if (spec->n_inputs < 1 || spec->n_inputs > DL_MAX_IO)
		return dl_error_set(err, DL_ERR_LIMIT, "model has %d inputs; between 1 and %d are supported",
							spec->n_inputs, DL_MAX_IO);
	spec->input_shapes[0] = spec->input_shape;
	for (int k = 0; k < spec->n_inputs; k++)
	{
		const DlShape *s = &spec->input_shapes[k];

		if (s->rank < 1 || s->rank > DL_MAX_RANK || !elements_ok(s))
		{
			dl_error_set(err, DL_ERR_SHAPE, "model input shape is missing or invalid (rank %d)", s->rank);
			return dl_error_hint(err, "Give the first layer batch_input_shape, or start the model with an InputLayer.");
		}
	}
	if (spec->n_layers < 1)
		return dl_error_set(err, DL_ERR_SHAPE, "model has no layers");
	if (spec->n_layers > DL_MAX_LAYERS)
		return dl_error_set(err, DL_ERR_LIMIT, "model has %d layers, more than the limit of %d",
							spec->n_layers, DL_MAX_LAYERS);
	spec->is_chain = spec->n_inputs == 1;
	for (int i = 0; i < spec->n_layers; i++)
	{
		DlLayer    *l = &spec->layers[i];
		const DlShape *ins[DL_MAX_FAN_IN];

		if ((st = check_inputs(spec, i, err)) != DL_OK)
			return st;
		for (int j = 0; j < l->n_in; j++)
			ins[j] = tensor_shape(spec, l->in[j]);
		if ((st = finalize_layer(l, ins, l->n_in, &offset, err)) != DL_OK)
			return st;
		trainable += l->n_trainable;
		spec->is_chain = spec->is_chain && l->n_in == 1 && l->in[0] == i - 1;
	}
	if ((st = check_outputs(spec, err)) != DL_OK)
		return st;
	spec->is_chain = spec->is_chain && spec->n_outputs == 1 &&
		spec->outputs[0] == spec->n_layers - 1;
	spec->n_params = offset;
	spec->n_trainable = trainable;
	dl_spec_plan(spec);
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
		/* what later kinds add: a chain of the first kinds hashes as before */
		if (l->dilation[0] != 1 || l->dilation[1] != 1)
		{
			h = fnv_mix(h, l->dilation[0]);
			h = fnv_mix(h, l->dilation[1]);
		}
		if (l->kind == DL_LAYER_ZEROPADDING2D || l->kind == DL_LAYER_CROPPING2D)
			for (int k = 0; k < 4; k++)
				h = fnv_mix(h, l->margins[k]);
		if (l->kind == DL_LAYER_UPSAMPLING2D)
		{
			h = fnv_mix(h, l->size[0]);
			h = fnv_mix(h, l->size[1]);
		}
		if (l->kind == DL_LAYER_CONCATENATE)
			h = fnv_mix(h, l->concat_axis);
		if (l->kind >= DL_LAYER_EMBEDDING)
		{
			/* the attributes of the layers of text and sequences */
			h = fnv_mix(h, l->input_dim);
			h = fnv_mix(h, l->recurrent_activation);
			h = fnv_mix(h, (int64_t) l->return_sequences | (int64_t) l->go_backwards << 1 |
						(int64_t) l->reset_after << 2 | (int64_t) l->has_max_value << 3);
			h = fnv_mix(h, l->bidir);
			h = fnv_mix(h, l->depth_multiplier);
			h = fnv_mix(h, l->dilation[0]);
			h = fnv_mix(h, l->dilation[1]);
			h = fnv_mix(h, (int64_t) l->shared_axes);
			for (int d = 0; d < DL_MAX_RANK; d++)
				h = fnv_mix(h, l->perm[d]);
			{
				double		v[3] = {l->max_value, l->negative_slope, l->threshold};
				int64_t		bits;

				for (int k = 0; k < 3; k++)
				{
					memcpy(&bits, &v[k], sizeof(bits));
					h = fnv_mix(h, bits);
				}
			}
		}
	}
	if (!spec->is_chain)
	{
		/* the graph: inputs, what each layer reads, outputs */
		h = fnv_mix(h, spec->n_inputs);
		for (int k = 1; k < spec->n_inputs; k++)
			h = fnv_shape(h, &spec->input_shapes[k]);
		for (int i = 0; i < spec->n_layers; i++)
		{
			h = fnv_mix(h, spec->layers[i].n_in);
			for (int j = 0; j < spec->layers[i].n_in; j++)
				h = fnv_mix(h, spec->layers[i].in[j]);
		}
		h = fnv_mix(h, spec->n_outputs);
		for (int k = 0; k < spec->n_outputs; k++)
			h = fnv_mix(h, spec->outputs[k]);
	}
	return h;
}
