/*-------------------------------------------------------------------------
 *
 * model_seq.c
 *	  The executor's part for the layers of text and sequences and those
 *	  that came with them: Embedding, the 1-D layers, LSTM, GRU,
 *	  SimpleRNN (and Bidirectional), DepthwiseConv2D, SeparableConv2D,
 *	  LayerNormalization, the parametric ReLUs, Permute, RepeatVector.
 *
 * model.c walks the graph and calls dl_seq_layer_forward and
 * dl_seq_layer_backward for every kind from DL_LAYER_EMBEDDING on (but
 * Conv1D, which runs as the Conv2D of height 1 it is, and Reshape, which
 * is its input); its workspace_layout gives these layers their saved
 * tensors (the recurrent layers' per-step tensors, the separable
 * convolution's depthwise output, the layer normalisation's statistics).
 * The 1-D layers are the 2-D kernels with a height of 1: a sequence
 * (T, C) is an image (1, T, C).
 *
 * An Embedding id that is not an integer in [0, input_dim) cannot be
 * looked up: the kernel zeroes its row and the pass records the first
 * such id as the model's kernel failure (DL_ERR_DATA), which every
 * caller of a forward pass reports (dl_model_kernel_status).
 *
 * IDENTIFICATION
 *	  src/engine/model_seq.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "model_impl.h"

void
dl_seq_conv_geom(DlConvGeom *g, const DlLayer *l, int64_t B)
{
	const DlShape *in = &l->in_shape;

	if (l->kind != DL_LAYER_CONV1D)
	{
		dl_conv_geom_init_dilated(g, B, in->dims[0], in->dims[1], in->dims[2],
								  in->dims[2] * l->depth_multiplier, l->kernel_size[0],
								  l->kernel_size[1], l->strides[0], l->strides[1],
								  l->dilation[0], l->dilation[1], l->padding);
		return;
	}
	/* a sequence (T, C) as an image (1, T, C) */
	dl_conv_geom_init_dilated(g, B, 1, in->dims[0], in->dims[1], l->filters, 1,
							  l->kernel_size[1], 1, l->strides[1], 1, l->dilation[1],
							  l->padding == DL_PADDING_CAUSAL ? DL_PADDING_VALID : l->padding);
	if (l->padding == DL_PADDING_CAUSAL)
	{
		/* (K - 1) * D zeros before the first step, none after */
		g->pad_left = (int64_t) (l->kernel_size[1] - 1) * l->dilation[1];
		g->OW = (in->dims[0] - 1) / l->strides[1] + 1;
	}
}

void
dl_seq_pool_geom(DlPoolGeom *g, const DlLayer *l, int64_t B)
{
	dl_pool_geom_init(g, B, 1, l->in_shape.dims[0], l->in_shape.dims[1], 1, l->pool_size[1],
					  1, l->strides[1], l->padding);
}

void
dl_seq_rnn_geom(DlRnnGeom *g, const DlLayer *l, int dir, int64_t B)
{
	g->cell = l->kind;
	g->B = B;
	g->T = l->in_shape.dims[0];
	g->I = l->in_shape.dims[1];
	g->U = l->units;
	g->act = l->activation;
	g->rec_act = l->recurrent_activation;
	g->reset_after = l->kind == DL_LAYER_GRU && l->reset_after;
	g->backwards = l->bidir != DL_BIDIR_NONE ? dir == 1 : l->go_backwards;
	g->use_bias = l->use_bias;
}

bool
dl_seq_keeps_pre(const DlLayer *l)
{
	switch (l->kind)
	{
		case DL_LAYER_DENSE:
		case DL_LAYER_CONV2D:
		case DL_LAYER_CONV1D:
		case DL_LAYER_DEPTHWISECONV2D:
		case DL_LAYER_SEPARABLECONV2D:
			return dl_activation_needs_input(l->activation);
		default:
			return false;
	}
}

void
dl_seq_activation_backward(const DlLayer *l, const DlLayerWork *w, float *dy, int64_t rows,
						   int64_t cout)
{
	if (dl_activation_needs_input(l->activation))
		dl_activation_backward_x(l->activation, dy, dy, w->pre, rows * cout);
	else
		dl_activation_backward(l->activation, dy, dy, w->out, rows, cout);
}

/* Apply l's activation to y (rows, cout), keeping the pre-activation where needed. */
static void
apply_activation(const DlLayer *l, DlLayerWork *w, float *y, int64_t rows, int64_t cout)
{
	if (l->activation == DL_ACT_LINEAR)
		return;
	if (w->pre != NULL)
		memcpy(w->pre, y, (size_t) (rows * cout) * sizeof(float));
	dl_activation_forward(l->activation, y, y, rows, cout);
}

/* Record a bad Embedding id (the first of the pass) as the model's kernel failure. */
static void
embedding_failed(DlModel *m, const DlLayer *l, const float *in, int64_t bad, int64_t per_sample)
{
	DlError    *e = &m->kernel_err;

	if (m->kernel_status != DL_OK)
		return;
	dl_error_set(e, DL_ERR_DATA,
				 "layer \"%s\" (Embedding): sample %lld of the batch holds id %.9g at position %lld, "
				 "not an integer in [0, %lld)",
				 l->name, (long long) (bad / per_sample + 1), (double) in[bad],
				 (long long) (bad % per_sample + 1), (long long) l->input_dim);
	dl_error_hint(e, "Give the Embedding integer token ids from 0 to input_dim - 1 "
				  "(0 for padding), or build it with a larger input_dim.");
	m->kernel_status = DL_ERR_DATA;
}

/* Depthwise kernel size of a DepthwiseConv2D or SeparableConv2D: KH*KW*C*M. */
static int64_t
depthwise_floats(const DlLayer *l)
{
	return (int64_t) l->kernel_size[0] * l->kernel_size[1] * dl_shape_last(&l->in_shape) *
		l->depth_multiplier;
}

void
dl_seq_layer_forward(DlModel *m, const DlLayer *l, DlLayerWork *w, const float *in, int64_t B,
					 bool training)
{
	const float *p = m->params + l->param_offset;
	int64_t		in_size = dl_shape_size(&l->in_shape);
	int64_t		out_size = dl_shape_size(&l->out_shape);
	int64_t		cin = dl_shape_last(&l->in_shape);
	int64_t		cout = dl_shape_last(&l->out_shape);
	int64_t		rows = B * (out_size / cout);
	float	   *y = w->buf;		/* (B, out size) */

	switch (l->kind)
	{
		case DL_LAYER_EMBEDDING:
			{
				int64_t		bad = dl_embedding_forward(y, in, p, B * in_size, l->input_dim,
													   l->units);

				if (bad >= 0)
					embedding_failed(m, l, in, bad, in_size);
			}
			break;
		case DL_LAYER_MAXPOOL1D:
		case DL_LAYER_AVGPOOL1D:
			{
				DlPoolGeom	g;

				dl_seq_pool_geom(&g, l, B);
				if (l->kind == DL_LAYER_MAXPOOL1D)
					dl_maxpool2d_forward(y, w->argmax, in, &g);
				else
					dl_avgpool2d_forward(y, in, &g);
			}
			break;
		case DL_LAYER_GLOBALMAXPOOL1D:
			dl_global_maxpool2d_forward(y, w->argmax, in, B, in_size / cin, cin);
			break;
		case DL_LAYER_GLOBALAVGPOOL1D:
			dl_global_avgpool2d_forward(y, in, B, in_size / cin, cin);
			break;
		case DL_LAYER_LSTM:
		case DL_LAYER_GRU:
		case DL_LAYER_SIMPLERNN:
			{
				int			dirs = l->bidir != DL_BIDIR_NONE ? 2 : 1;
				size_t		per = l->n_params / (size_t) dirs;
				DlRnnGeom	g;

				for (int dir = 0; dir < dirs; dir++)
				{
					dl_seq_rnn_geom(&g, l, dir, B);
					dl_rnn_forward(&w->rnn[dir], in, p + (size_t) dir * per, &g);
				}
				dl_rnn_output(y, w->rnn[0].h, dirs == 2 ? w->rnn[1].h : NULL, l->bidir,
							  l->return_sequences, l->go_backwards, B, g.T, g.U);
			}
			break;
		case DL_LAYER_DEPTHWISECONV2D:
			{
				DlConvGeom	g;

				dl_seq_conv_geom(&g, l, B);
				dl_depthwise_forward(y, in, p, l->use_bias ? p + depthwise_floats(l) : NULL,
									 l->depth_multiplier, &g);
				apply_activation(l, w, y, rows, cout);
			}
			break;
		case DL_LAYER_SEPARABLECONV2D:
			{
				DlConvGeom	g;
				int64_t		nd = depthwise_floats(l);
				int64_t		cm = cin * l->depth_multiplier;

				/* depthwise into mid (B*OH*OW, C*M), then the pointwise product */
				dl_seq_conv_geom(&g, l, B);
				dl_depthwise_forward(w->mid, in, p, NULL, l->depth_multiplier, &g);
				dl_dense_forward_act(y, w->mid, p + nd, l->use_bias ? p + nd + cm * l->filters : NULL,
									 DL_ACT_LINEAR, rows, cm, l->filters);
				apply_activation(l, w, y, rows, cout);
			}
			break;
		case DL_LAYER_LAYERNORM:
			{
				const float *gamma = l->scale ? p : NULL;
				const float *beta = l->center ? p + (l->scale ? cin : 0) : NULL;

				dl_layernorm_forward(y, training ? w->mean : NULL, w->invstd, in, gamma, beta,
									 B * (in_size / cin), cin, l->epsilon);
			}
			break;
		case DL_LAYER_RELU:
			dl_relu_args_forward(y, in, B * in_size, l->has_max_value, l->max_value,
								 l->negative_slope, l->threshold);
			break;
		case DL_LAYER_PRELU:
			dl_prelu_forward(y, in, p, B, l->in_shape.dims, l->in_shape.rank, l->shared_axes);
			break;
		case DL_LAYER_PERMUTE:
			dl_permute_forward(y, in, B, l->in_shape.dims, l->perm, l->in_shape.rank);
			break;
		case DL_LAYER_REPEATVECTOR:
			dl_repeat_forward(y, in, B, l->repeat_n, cin);
			break;
		default:
			/* model.c runs the others */
			break;
	}
}

/* The backward pass of a recurrent layer: each direction through time. */
static void
rnn_backward(DlModel *m, const DlLayer *l, DlLayerWork *w, const float *dy, float *dx,
			 int64_t B)
{
	int			dirs = l->bidir != DL_BIDIR_NONE ? 2 : 1;
	size_t		per = l->n_params / (size_t) dirs;
	const float *p = m->params + l->param_offset;
	float	   *g = m->grads + l->param_offset;

	for (int dir = 0; dir < dirs; dir++)
	{
		DlRnnGeom	geom;

		dl_seq_rnn_geom(&geom, l, dir, B);
		dl_rnn_output_grad(w->rnn_dh, dy, l->bidir == DL_BIDIR_MUL ? w->rnn[1 - dir].h : NULL,
						   dir, l->bidir, l->return_sequences, l->go_backwards, B, geom.T, geom.U);
		dl_rnn_backward(dx, dir > 0, g + (size_t) dir * per, w->rnn_dh, w->rnn_work, &w->rnn[dir],
						p + (size_t) dir * per, &geom);
	}
}

void
dl_seq_layer_backward(DlModel *m, const DlLayer *l, DlLayerWork *w, float *dy, float *dx,
					  const float *in, int64_t B)
{
	const float *p = m->params + l->param_offset;
	float	   *g = m->grads + l->param_offset;
	int64_t		in_size = dl_shape_size(&l->in_shape);
	int64_t		out_size = dl_shape_size(&l->out_shape);
	int64_t		cin = dl_shape_last(&l->in_shape);
	int64_t		cout = dl_shape_last(&l->out_shape);
	int64_t		rows = B * (out_size / cout);

	switch (l->kind)
	{
		case DL_LAYER_EMBEDDING:
			dl_embedding_backward(g, dy, in, B * in_size, l->input_dim, l->units);
			if (dx != NULL)		/* ids are not differentiable */
				memset(dx, 0, (size_t) (B * in_size) * sizeof(float));
			break;
		case DL_LAYER_MAXPOOL1D:
		case DL_LAYER_AVGPOOL1D:
			{
				DlPoolGeom	pg;

				if (dx == NULL)
					break;
				dl_seq_pool_geom(&pg, l, B);
				if (l->kind == DL_LAYER_MAXPOOL1D)
					dl_maxpool2d_backward(dx, dy, w->argmax, &pg);
				else
					dl_avgpool2d_backward(dx, dy, &pg);
			}
			break;
		case DL_LAYER_GLOBALMAXPOOL1D:
			if (dx != NULL)
				dl_global_maxpool2d_backward(dx, dy, w->argmax, B, in_size / cin, cin);
			break;
		case DL_LAYER_GLOBALAVGPOOL1D:
			if (dx != NULL)
				dl_global_avgpool2d_backward(dx, dy, B, in_size / cin, cin);
			break;
		case DL_LAYER_LSTM:
		case DL_LAYER_GRU:
		case DL_LAYER_SIMPLERNN:
			rnn_backward(m, l, w, dy, dx, B);
			break;
		case DL_LAYER_DEPTHWISECONV2D:
			{
				DlConvGeom	cg;

				if (l->activation != DL_ACT_LINEAR)
					dl_seq_activation_backward(l, w, dy, rows, cout);
				dl_seq_conv_geom(&cg, l, B);
				dl_depthwise_backward(dx, g, l->use_bias ? g + depthwise_floats(l) : NULL, dy, in,
									  p, l->depth_multiplier, &cg);
			}
			break;
		case DL_LAYER_SEPARABLECONV2D:
			{
				DlConvGeom	cg;
				int64_t		nd = depthwise_floats(l);
				int64_t		cm = cin * l->depth_multiplier;

				if (l->activation != DL_ACT_LINEAR)
					dl_seq_activation_backward(l, w, dy, rows, cout);
				/* the pointwise product, then the depthwise convolution */
				dl_dense_backward(w->dmid, g + nd, l->use_bias ? g + nd + cm * l->filters : NULL,
								  dy, w->mid, p + nd, rows, cm, l->filters);
				dl_seq_conv_geom(&cg, l, B);
				dl_depthwise_backward(dx, g, NULL, w->dmid, in, p, l->depth_multiplier, &cg);
			}
			break;
		case DL_LAYER_LAYERNORM:
			{
				const float *gamma = l->scale ? p : NULL;
				float	   *dgamma = l->scale ? g : NULL;
				float	   *dbeta = l->center ? g + (l->scale ? cin : 0) : NULL;

				dl_layernorm_backward(dx, dgamma, dbeta, dy, in, w->mean, w->invstd, gamma,
									  B * (in_size / cin), cin);
			}
			break;
		case DL_LAYER_RELU:
			if (dx != NULL)
				dl_relu_args_backward(dx, dy, in, B * in_size, l->has_max_value, l->max_value,
									  l->negative_slope, l->threshold);
			break;
		case DL_LAYER_PRELU:
			dl_prelu_backward(dx, g, dy, in, p, B, l->in_shape.dims, l->in_shape.rank,
							  l->shared_axes);
			break;
		case DL_LAYER_PERMUTE:
			if (dx != NULL)
				dl_permute_backward(dx, dy, B, l->in_shape.dims, l->perm, l->in_shape.rank);
			break;
		case DL_LAYER_REPEATVECTOR:
			if (dx != NULL)
				dl_repeat_backward(dx, dy, B, l->repeat_n, cin);
			break;
		default:
			break;
	}
}

bool
dl_model_spec_reads_ids(const DlModelSpec *spec, int k)
{
	for (int i = 0; i < spec->n_layers; i++)
		if (spec->layers[i].kind == DL_LAYER_EMBEDDING && spec->layers[i].in[0] == -1 - k)
			return true;
	return false;
}

DlStatus
dl_model_check_ids(const DlModelSpec *spec, int k, const float *x, int64_t n,
				   int64_t *bad_row, DlError *err)
{
	int64_t		size = dl_shape_size(&spec->input_shapes[k]);

	*bad_row = -1;
	for (int i = 0; i < spec->n_layers; i++)
	{
		const DlLayer *l = &spec->layers[i];
		int64_t		bad;

		if (l->kind != DL_LAYER_EMBEDDING || l->in[0] != -1 - k)
			continue;
		bad = dl_embedding_check(x, n * size, l->input_dim);
		if (bad < 0)
			continue;
		*bad_row = bad / size;
		dl_error_set(err, DL_ERR_DATA,
					 "id %.9g at position %lld is not an integer in [0, %lld) (layer \"%s\", Embedding)",
					 (double) x[bad], (long long) (bad % size + 1), (long long) l->input_dim, l->name);
		return dl_error_hint(err, "Give the Embedding integer token ids from 0 to input_dim - 1 "
							 "(0 for padding), or build it with a larger input_dim.");
	}
	return DL_OK;
}
