/*-------------------------------------------------------------------------
 *
 * weights.c
 *	  The weight tensors of each layer in Keras get_weights() order, and
 *	  the check of a block's values that shows weights in another order
 *	  (see dl_weights.h).
 *
 * IDENTIFICATION
 *	  src/engine/weights.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "madlib_dl/dl_layer.h"
#include "madlib_dl/dl_weights.h"

/* Append tensor name of the given dims at *off; returns the new count. */
static int
add(DlWeightTensor *out, int n, size_t *off, const char *name, int rank, int64_t d0, int64_t d1,
	int64_t d2, int64_t d3)
{
	DlWeightTensor *t = &out[n];
	int64_t		d[DL_MAX_RANK] = {d0, d1, d2, d3};
	size_t		count = 1;

	memset(t, 0, sizeof(*t));
	t->name = name;
	t->rank = rank;
	for (int i = 0; i < rank; i++)
	{
		t->dims[i] = d[i];
		count *= (size_t) d[i];
	}
	t->offset = *off;
	t->count = count;
	*off += count;
	return n + 1;
}

/* A normalization's gamma (scale) and beta (center), c each, as it has them. */
static int
add_gamma_beta(DlWeightTensor *out, int n, size_t *off, const DlLayer *l, int64_t c)
{
	if (l->scale)
		n = add(out, n, off, "gamma", 1, c, 0, 0, 0);
	if (l->center)
		n = add(out, n, off, "beta", 1, c, 0, 0, 0);
	return n;
}

int
dl_layer_weight_tensors(const DlLayer *l, DlWeightTensor *out)
{
	size_t		off = l->param_offset;
	int			n = 0;
	int64_t		c = l->in_shape.rank > 0 ? l->in_shape.dims[l->in_shape.rank - 1] : 0;

	if (l->n_params == 0)
		return 0;
	switch (l->kind)
	{
		case DL_LAYER_DENSE:
			n = add(out, n, &off, "kernel", 2, c, l->units, 0, 0);
			if (l->use_bias)
				n = add(out, n, &off, "bias", 1, l->units, 0, 0, 0);
			break;
		case DL_LAYER_CONV2D:
			n = add(out, n, &off, "kernel", 4, l->kernel_size[0], l->kernel_size[1], c, l->filters);
			if (l->use_bias)
				n = add(out, n, &off, "bias", 1, l->filters, 0, 0, 0);
			break;
		case DL_LAYER_CONV1D:
			n = add(out, n, &off, "kernel", 3, l->kernel_size[1], c, l->filters, 0);
			if (l->use_bias)
				n = add(out, n, &off, "bias", 1, l->filters, 0, 0, 0);
			break;
		case DL_LAYER_BATCHNORM:
			n = add_gamma_beta(out, n, &off, l, c);
			n = add(out, n, &off, "moving_mean", 1, c, 0, 0, 0);
			n = add(out, n, &off, "moving_variance", 1, c, 0, 0, 0);
			break;
		case DL_LAYER_LAYERNORM:
			n = add_gamma_beta(out, n, &off, l, c);
			break;
		case DL_LAYER_EMBEDDING:
			n = add(out, n, &off, "embeddings", 2, l->input_dim, l->units, 0, 0);
			break;
		case DL_LAYER_DEPTHWISECONV2D:
		case DL_LAYER_SEPARABLECONV2D:
			{
				int64_t		cm = c * l->depth_multiplier;
				bool		sep = l->kind == DL_LAYER_SEPARABLECONV2D;

				n = add(out, n, &off, "depthwise_kernel", 4, l->kernel_size[0], l->kernel_size[1], c,
						l->depth_multiplier);
				if (sep)
					n = add(out, n, &off, "pointwise_kernel", 4, 1, 1, cm, l->filters);
				if (l->use_bias)
					n = add(out, n, &off, "bias", 1, sep ? l->filters : cm, 0, 0, 0);
			}
			break;
		case DL_LAYER_LSTM:
		case DL_LAYER_GRU:
		case DL_LAYER_SIMPLERNN:
			{
				int64_t		U = l->units;
				int64_t		GU = dl_rnn_gates(l->kind) * U;
				int			dirs = l->bidir != DL_BIDIR_NONE ? 2 : 1;

				for (int d = 0; d < dirs; d++)
				{
					n = add(out, n, &off, "kernel", 2, c, GU, 0, 0);
					n = add(out, n, &off, "recurrent_kernel", 2, U, GU, 0, 0);
					if (l->use_bias)
					{
						if (l->kind == DL_LAYER_GRU && l->reset_after)
							n = add(out, n, &off, "bias", 2, 2, GU, 0, 0);
						else
							n = add(out, n, &off, "bias", 1, GU, 0, 0, 0);
					}
				}
			}
			break;
		case DL_LAYER_PRELU:
			{
				DlShape		s = l->in_shape;

				for (int i = 0; i < s.rank; i++)
					if (l->shared_axes & (1u << i))
						s.dims[i] = 1;
				n = add(out, n, &off, "alpha", s.rank, s.dims[0], s.dims[1], s.dims[2], s.dims[3]);
			}
			break;
		default:
			n = add(out, n, &off, "weights", 1, (int64_t) l->n_params, 0, 0, 0);
			break;
	}
	/* a kind whose floats this file counts otherwise than spec.c: one flat tensor */
	if (off != l->param_offset + l->n_params)
	{
		off = l->param_offset;
		n = add(out, 0, &off, "weights", 1, (int64_t) l->n_params, 0, 0, 0);
	}
	return n;
}

DlStatus
dl_weights_check_values(const DlModelSpec *spec, const float *w, DlError *err)
{
	for (int i = 0; i < spec->n_layers; i++)
	{
		const DlLayer *l = &spec->layers[i];
		DlWeightTensor t[DL_LAYER_MAX_TENSORS];
		int			n;

		if (l->kind != DL_LAYER_BATCHNORM)
			continue;
		n = dl_layer_weight_tensors(l, t);
		for (int k = 0; k < n; k++)
		{
			if (strcmp(t[k].name, "moving_variance") != 0)
				continue;
			for (size_t j = 0; j < t[k].count; j++)
				if (w[t[k].offset + j] < 0.0f)
				{
					dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
								 "layer \"%s\" (BatchNormalization): moving_variance has the negative value %g "
								 "at position %zu (of %zu floats from float %zu of the weights): the weights "
								 "are not in Keras order",
								 l->name, (double) w[t[k].offset + j], j + 1, t[k].count, t[k].offset + 1);
					return dl_error_hint(err, "Give the weights layer by layer as Keras' model.get_weights() "
										 "lists them (gamma, beta, moving_mean, moving_variance for a "
										 "BatchNormalization); in TF.js model.layers.flatMap(l => "
										 "l.getWeights()), not model.getWeights(), which lists the moving "
										 "statistics and frozen layers' weights last.");
				}
		}
	}
	return DL_OK;
}
