/*-------------------------------------------------------------------------
 *
 * train.c
 *	  The training loop, evaluation and prediction.
 *
 * One training step (dl_model_train_batch) reads top to bottom:
 *	 1. zero the gradients
 *	 2. forward in training mode (Dropout on, BatchNormalization on batch
 *	    statistics, moving statistics updated)
 *	 3. loss and dL/d(output), scaled by 1/B (Keras means over the batch);
 *	    with Keras' class_weight each sample's loss and gradient row are
 *	    scaled by its class's weight first
 *	 4. backward
 *	 5. regularization gradients (trainable layers only)
 *	 6. optimizer step over the trainable ranges
 *	 7. divergence check
 *
 * Step 3 takes a fused path when the last op and the loss cancel:
 *	 softmax + (sparse) categorical crossentropy:  dz = (p * sum(y) - y) / B
 *	 sigmoid + binary crossentropy:                dz = (p - y) / (B * K)
 * (what tf.keras computes from the logits); otherwise dl_loss_compute
 * gives dL/dp and the last activation's backward is applied.  The
 * reported loss always comes from dl_loss_compute and never includes the
 * regularization term.
 *
 * IDENTIFICATION
 *	  src/engine/train.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "madlib_dl/dl_epoch.h"

#include "model_impl.h"

static DlStatus
check_batch_size(int64_t batch_size, DlError *err)
{
	if (batch_size < 1)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "batch_size must be at least 1, got %lld",
					 (long long) batch_size);
		return dl_error_hint(err, "Pass a positive batch_size in fit_params, for example batch_size=32.");
	}
	return DL_OK;
}

static DlStatus
check_trainable(const DlModel *m, DlError *err)
{
	if (m->grads == NULL || !m->has_optim)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							"model was built without an optimizer and cannot be trained");
	return DL_OK;
}

/* The functions of one x and one y need a model of one input and one output. */
static DlStatus
check_single_io(const DlModel *m, DlError *err)
{
	if (m->spec->n_inputs == 1 && m->spec->n_outputs == 1)
		return DL_OK;
	dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "model has %d inputs and %d outputs",
				 m->spec->n_inputs, m->spec->n_outputs);
	return dl_error_hint(err, "Pass one buffer per input and per output (the _io functions).");
}

/* Output k's loss, weight and metric under cfg. */
static DlOutputConfig
output_config(const DlTrainConfig *cfg, int k)
{
	DlOutputConfig o;

	if (cfg->outputs != NULL)
		return cfg->outputs[k];
	o.loss = cfg->loss;
	o.loss_weight = 1.0;
	o.metric = cfg->metric;
	o.top_k = cfg->top_k;
	return o;
}

/* Output k's width K. */
static int64_t
output_width(const DlModel *m, int k)
{
	return dl_shape_size(&m->spec->output_shapes[k]);
}

/* Is the last op of output k fused with its loss (see the file header)? */
static bool
loss_is_fused(const DlModelSpec *spec, int k, DlLossKind loss)
{
	const DlLayer *l = &spec->layers[spec->outputs[k]];

	if (l->kind != DL_LAYER_DENSE && l->kind != DL_LAYER_CONV2D &&
		l->kind != DL_LAYER_ACTIVATION)
		return false;
	if (l->plan.n_consumers > 0)
		return false;			/* other layers need d(output) */
	if (l->activation == DL_ACT_SOFTMAX && spec->output_shapes[k].rank == 1 &&
		(loss == DL_LOSS_CATEGORICAL_CROSSENTROPY ||
		 loss == DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY))
		return true;
	return l->activation == DL_ACT_SIGMOID && loss == DL_LOSS_BINARY_CROSSENTROPY;
}

/*
 * dz (B, K): gradient of the fused last op and loss, times batch_scale
 * and each sample's class weight (cfg's class_weight; 1 without one).
 *	 p (B, K) model output  y (B, K) or (B, 1) for the sparse loss
 */
static void
fused_gradient(float *dz, const DlTrainConfig *cfg, DlLossKind loss, const float *p,
			   const float *y, int64_t B, int64_t K, double batch_scale)
{
	int64_t		yw = dl_loss_y_width(loss, K);

	for (int64_t b = 0; b < B; b++)
	{
		const float *pb = p + b * K;
		float	   *db = dz + b * K;
		double		scale = batch_scale * dl_loss_sample_weight(loss, y + b * yw, K,
																cfg->class_weight,
																cfg->n_class_weight);

		if (loss == DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY)
		{
			int64_t		t = (int64_t) y[b];	/* checked by dl_loss_check_labels */

			for (int64_t k = 0; k < K; k++)
				db[k] = (float) (scale * pb[k]);
			db[t] -= (float) scale;
		}
		else if (loss == DL_LOSS_CATEGORICAL_CROSSENTROPY)
		{
			const float *yb = y + b * K;
			double		sum = 0.0;

			for (int64_t k = 0; k < K; k++)
				sum += yb[k];
			for (int64_t k = 0; k < K; k++)
				db[k] = (float) (scale * (pb[k] * sum - yb[k]));
		}
		else
		{
			const float *yb = y + b * K;

			for (int64_t k = 0; k < K; k++)
				db[k] = (float) (scale * (pb[k] - yb[k]) / (double) K);
		}
	}
}

/* g (n) += l1 * sign(w) + 2 * l2 * w, the gradient of l1*sum|w| + l2*sum w^2. */
static void
regularize(float *g, const float *w, size_t n, const DlRegularizer *r)
{
	if (r->l1 == 0.0 && r->l2 == 0.0)
		return;
	for (size_t i = 0; i < n; i++)
	{
		double		s = w[i] > 0.0f ? 1.0 : (w[i] < 0.0f ? -1.0 : 0.0);

		g[i] += (float) (r->l1 * s + 2.0 * r->l2 * w[i]);
	}
}

/*
 * The regularizers of the layers of text and sequences: the embeddings,
 * a Conv1D's kernel and bias, each direction's kernel, recurrent kernel
 * and bias, the depthwise and pointwise kernels and bias, PReLU's alpha.
 */
static void
add_regularization_seq(DlModel *m, const DlLayer *l)
{
	float	   *g = m->grads + l->param_offset;
	const float *w = m->params + l->param_offset;
	int64_t		c = dl_shape_last(&l->in_shape);
	int64_t		k = (int64_t) l->kernel_size[0] * l->kernel_size[1];
	size_t		n;

	switch (l->kind)
	{
		case DL_LAYER_EMBEDDING:
		case DL_LAYER_PRELU:
			regularize(g, w, l->n_params, &l->kernel_reg);
			break;
		case DL_LAYER_CONV1D:
			n = (size_t) (k * c * l->filters);
			regularize(g, w, n, &l->kernel_reg);
			if (l->use_bias)
				regularize(g + n, w + n, (size_t) l->filters, &l->bias_reg);
			break;
		case DL_LAYER_LSTM:
		case DL_LAYER_GRU:
		case DL_LAYER_SIMPLERNN:
			{
				int			dirs = l->bidir != DL_BIDIR_NONE ? 2 : 1;
				size_t		per = l->n_params / (size_t) dirs;
				size_t		gu = (size_t) (dl_rnn_gates(l->kind) * l->units);
				size_t		nk = (size_t) c * gu;
				size_t		nr = (size_t) l->units * gu;

				for (int d = 0; d < dirs; d++)
				{
					regularize(g + d * per, w + d * per, nk, &l->kernel_reg);
					regularize(g + d * per + nk, w + d * per + nk, nr, &l->recurrent_reg);
					regularize(g + d * per + nk + nr, w + d * per + nk + nr, per - nk - nr,
							   &l->bias_reg);
				}
			}
			break;
		case DL_LAYER_DEPTHWISECONV2D:
		case DL_LAYER_SEPARABLECONV2D:
			{
				size_t		nd = (size_t) (k * c * l->depth_multiplier);
				size_t		np = l->kind == DL_LAYER_SEPARABLECONV2D ?
					(size_t) (c * l->depth_multiplier * l->filters) : 0;

				regularize(g, w, nd, &l->kernel_reg);
				regularize(g + nd, w + nd, np, &l->pointwise_reg);
				if (l->use_bias)
					regularize(g + nd + np, w + nd + np, l->n_params - nd - np, &l->bias_reg);
			}
			break;
		default:
			break;
	}
}

static void
add_regularization(DlModel *m)
{
	const DlModelSpec *spec = m->spec;

	for (int i = 0; i < spec->n_layers; i++)
	{
		const DlLayer *l = &spec->layers[i];
		int64_t		c = dl_shape_last(&l->in_shape);
		int64_t		out;
		size_t		nk;

		if (l->n_trainable > 0 && l->kind >= DL_LAYER_EMBEDDING)
			add_regularization_seq(m, l);
		if (l->n_trainable == 0 ||
			(l->kind != DL_LAYER_DENSE && l->kind != DL_LAYER_CONV2D))
			continue;
		out = l->kind == DL_LAYER_DENSE ? l->units : l->filters;
		nk = (size_t) ((l->kind == DL_LAYER_DENSE ? 1 :
						(int64_t) l->kernel_size[0] * l->kernel_size[1]) * c * out);
		regularize(m->grads + l->param_offset, m->params + l->param_offset, nk, &l->kernel_reg);
		if (l->use_bias)
			regularize(m->grads + l->param_offset + nk, m->params + l->param_offset + nk,
					   (size_t) out, &l->bias_reg);
	}
}

/*
 * Steps 1-5 of a training step; the model outputs of the forward pass
 * stay readable (dl_model_output) until the next forward.  *loss_sum is
 * the total, sum_k weight_k loss_k; output_loss[k] each output's own
 * (summed over the batch).
 */
static DlStatus
gradients(DlModel *m, const DlTrainConfig *cfg, const float *const *xs,
		  const float *const *ys, int64_t B, double *loss_sum, double *output_loss,
		  DlError *err)
{
	const DlModelSpec *spec = m->spec;
	bool		fused[DL_MAX_IO];
	DlStatus	st;

	if ((st = check_trainable(m, err)) != DL_OK ||
		(st = check_batch_size(B, err)) != DL_OK)
		return st;
	if (cfg->class_weight != NULL && spec->n_outputs > 1)
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "class_weight with a model of %d outputs",
					 spec->n_outputs);
		return dl_error_hint(err, "Leave class_weight out for models with several outputs.");
	}
	for (int k = 0; k < spec->n_outputs; k++)
	{
		DlOutputConfig o = output_config(cfg, k);
		int64_t		K = output_width(m, k);

		if ((st = dl_loss_check_labels(o.loss, ys[k], B, K, err)) != DL_OK ||
			(st = dl_loss_check_class_weights(o.loss, ys[k], B, K, cfg->class_weight,
											  cfg->n_class_weight, err)) != DL_OK)
			return st;
	}
	if ((st = dl_model_workspace_reserve(m, B, err)) != DL_OK)
		return st;

	/* 1. zero the gradients (all of them: frozen layers' kernels add too) */
	memset(m->grads, 0, m->n_params * sizeof(float));

	/* 2. forward (a cancel stops here: the outputs are not all computed) */
	dl_model_forward_io(m, xs, B, true);
	if (m->kernel_status == DL_ERR_CANCELLED)
		return dl_model_kernel_status(m, err);

	/* 3. each output's loss and its gradient (each sample's weighted by its class's weight) */
	*loss_sum = 0.0;
	for (int k = 0; k < spec->n_outputs; k++)
	{
		DlOutputConfig o = output_config(cfg, k);
		int64_t		K = output_width(m, k);
		const float *p = dl_model_output(m, k);
		float	   *dp = dl_model_output_grad(m, k);	/* NULL: nothing to train behind */
		double		scale = o.loss_weight / (double) B;

		fused[k] = dp != NULL && loss_is_fused(spec, k, o.loss);
		if (fused[k])
		{
			output_loss[k] = dl_loss_compute_weighted(o.loss, NULL, p, ys[k], B, K, 1.0,
													  cfg->class_weight, cfg->n_class_weight);
			fused_gradient(dp, cfg, o.loss, p, ys[k], B, K, scale);
		}
		else
			output_loss[k] = dl_loss_compute_weighted(o.loss, dp, p, ys[k], B, K, scale,
													  cfg->class_weight, cfg->n_class_weight);
		*loss_sum += o.loss_weight * output_loss[k];
	}

	/* 4. backward */
	dl_model_backward_io(m, xs, B, fused);
	if ((st = dl_model_kernel_status(m, err)) != DL_OK)
		return st;

	/* 5. regularization */
	add_regularization(m);
	return DL_OK;
}

DlStatus
dl_model_compute_gradients_io(DlModel *m, const DlTrainConfig *cfg, const float *const *xs,
							  const float *const *ys, int64_t B, double *loss_sum, DlError *err)
{
	double		output_loss[DL_MAX_IO];

	return gradients(m, cfg, xs, ys, B, loss_sum, output_loss, err);
}

DlStatus
dl_model_compute_gradients(DlModel *m, const DlTrainConfig *cfg, const float *x,
						   const float *y, int64_t B, double *loss_sum, DlError *err)
{
	DlStatus	st = check_single_io(m, err);

	return st != DL_OK ? st : dl_model_compute_gradients_io(m, cfg, &x, &y, B, loss_sum, err);
}

/*
 * Are all of w (n) finite?  Tests the exponent bits (all ones: inf or
 * NaN) with integer operations and no early exit, so the loop vectorizes;
 * the caller scans again only when it finds one.
 */
static bool
all_finite(const float *w, size_t n)
{
	uint32_t	bad = 0;

	for (size_t i = 0; i < n; i++)
	{
		uint32_t	u;

		memcpy(&u, &w[i], sizeof(u));
		bad |= (u & 0x7f800000u) == 0x7f800000u;
	}
	return bad == 0;
}

static DlStatus
diverged(const DlModel *m, const char *what, double loss, DlError *err)
{
	dl_error_set(err, DL_ERR_DIVERGED, "training diverged: %s is %g at optimizer iteration %lld",
				 what, loss, (long long) m->optim.iterations);
	return dl_error_hint(err, "Lower the learning rate (for example by a factor of 10), scale the input features, or set clipnorm in the optimizer.");
}

/* Add a batch's losses and each output's metric over ys to stats. */
static void
add_stats(const DlModel *m, const DlTrainConfig *cfg, const float *const *ys, int64_t B,
		  double loss, const double *output_loss, DlBatchStats *stats)
{
	for (int k = 0; k < m->spec->n_outputs; k++)
	{
		DlOutputConfig o = output_config(cfg, k);
		int64_t		K = output_width(m, k);
		DlMetricKind mk = dl_metric_resolve(o.metric, o.loss, K);
		double		metric = 0.0;

		if (mk != DL_METRIC_NONE)
			metric = dl_metric_sum(mk, o.top_k, dl_model_output(m, k), ys[k], B, K);
		if (k == 0)
			stats->metric_sum += metric;
		stats->output_loss_sum[k] += output_loss[k];
		stats->output_metric_sum[k] += metric;
	}
	stats->loss_sum += loss;
	stats->n += B;
}

DlStatus
dl_model_train_batch_io(DlModel *m, const DlTrainConfig *cfg, const float *const *xs,
						const float *const *ys, int64_t B, DlBatchStats *stats, DlError *err)
{
	double		loss;
	double		output_loss[DL_MAX_IO];
	DlStatus	st;

	/* 1-5. gradients of the batch */
	if ((st = gradients(m, cfg, xs, ys, B, &loss, output_loss, err)) != DL_OK)
		return st;
	if (!isfinite(loss))
		return diverged(m, "loss", loss, err);	/* no step: weights stay finite */

	/* 6. optimizer step */
	dl_optim_step(&m->optim, m->params, m->grads, m->ranges, m->n_ranges);

	/* 7. the step itself may overflow: check the updated weights (O(P)) */
	for (int r = 0; r < m->n_ranges; r++)
	{
		const float *w = m->params + m->ranges[r].begin;
		size_t		n = m->ranges[r].end - m->ranges[r].begin;

		if (!all_finite(w, n))
			for (size_t i = 0; i < n; i++)
				if (!isfinite(w[i]))
					return diverged(m, "a weight", (double) w[i], err);
	}

	/* the outputs of step 2 are still in the workspace */
	if (stats != NULL)
		add_stats(m, cfg, ys, B, loss, output_loss, stats);
	return DL_OK;
}

DlStatus
dl_model_train_batch(DlModel *m, const DlTrainConfig *cfg, const float *x, const float *y,
					 int64_t B, DlBatchStats *stats, DlError *err)
{
	DlStatus	st = check_single_io(m, err);

	return st != DL_OK ? st : dl_model_train_batch_io(m, cfg, &x, &y, B, stats, err);
}

/*
 * The epoch of dl_model_train_epoch(_io): the N rows are one buffer cut
 * into blocks of the one shuffle (dl_epoch.h), each run pointing into the
 * data.  xs NULL: x and y (one input, one output).
 */
static DlStatus
train_epoch(DlModel *m, const DlTrainConfig *cfg, const float *x, const float *y,
			const float *const *xs, const float *const *ys, int64_t N, DlBatchStats *stats,
			DlError *err)
{
	const DlModelSpec *spec = m->spec;
	int64_t		x_width = 0;
	int64_t		yw[DL_MAX_IO];
	int64_t		br;
	int64_t		nb;
	DlPass		p;
	DlStatus	st;

	if ((st = check_trainable(m, err)) != DL_OK ||
		(st = check_batch_size(cfg->batch_size, err)) != DL_OK)
		return st;
	if (N <= 0)
		return DL_OK;
	for (int k = 0; k < spec->n_inputs; k++)
		x_width += dl_shape_size(&spec->input_shapes[k]);
	for (int k = 0; k < spec->n_outputs; k++)
		yw[k] = dl_loss_y_width(output_config(cfg, k).loss, output_width(m, k));
	br = dl_epoch_block_rows(x_width);

	/* the one shuffle (dl_epoch.h) over one buffer of N rows: block k is rows k*br.. */
	nb = N / br + (N % br != 0);
	if ((st = dl_model_order_reserve(m, nb, err)) != DL_OK)
		return st;
	dl_epoch_order(&m->rng, cfg->shuffle, m->order, nb);
	if ((st = dl_pass_begin(&p, m, cfg, true, N, stats, err)) != DL_OK)
		return st;
	for (int64_t w = 0; w < nb; w += DL_EPOCH_WINDOW_BLOCKS)
	{
		DlRows		runs[DL_EPOCH_WINDOW_BLOCKS];
		const float *rx[DL_EPOCH_WINDOW_BLOCKS][DL_MAX_IO];
		const float *ry[DL_EPOCH_WINDOW_BLOCKS][DL_MAX_IO];
		int			k = 0;

		for (; k < DL_EPOCH_WINDOW_BLOCKS && w + k < nb; k++)
		{
			int64_t		start = m->order[w + k] * br;

			memset(&runs[k], 0, sizeof(DlRows));
			runs[k].n = N - start < br ? N - start : br;
			if (xs == NULL)
			{
				runs[k].x = x + start * x_width;
				runs[k].y = y + start * yw[0];
				runs[k].y_width = yw[0];
				continue;
			}
			for (int i = 0; i < spec->n_inputs; i++)
				rx[k][i] = xs[i] + start * dl_shape_size(&spec->input_shapes[i]);
			for (int o = 0; o < spec->n_outputs; o++)
				ry[k][o] = ys[o] + start * yw[o];
			runs[k].xs = rx[k];
			runs[k].ys = ry[k];
			runs[k].y_widths = yw;
		}
		if ((st = dl_pass_window(&p, runs, k, err)) != DL_OK)
			return st;
	}
	return dl_pass_end(&p, err);
}

DlStatus
dl_model_train_epoch(DlModel *m, const DlTrainConfig *cfg, const float *x, const float *y,
					 int64_t N, DlBatchStats *stats, DlError *err)
{
	DlStatus	st = check_single_io(m, err);

	return st != DL_OK ? st : train_epoch(m, cfg, x, y, NULL, NULL, N, stats, err);
}

DlStatus
dl_model_train_epoch_io(DlModel *m, const DlTrainConfig *cfg, const float *const *xs,
						const float *const *ys, int64_t N, DlBatchStats *stats, DlError *err)
{
	return train_epoch(m, cfg, NULL, NULL, xs, ys, N, stats, err);
}

/* ---------------------------------------------------------------------
 * The one shuffle and the passes over windows (dl_epoch.h)
 * --------------------------------------------------------------------- */

int64_t
dl_epoch_block_rows(int64_t x_width)
{
	int64_t		row_bytes;
	int64_t		r;

	if (x_width > INT64_MAX / (int64_t) sizeof(float))
		return 1;
	row_bytes = (x_width > 0 ? x_width : 1) * (int64_t) sizeof(float);
	r = DL_EPOCH_BLOCK_BYTES / row_bytes;
	return r < 1 ? 1 : r;
}

int64_t
dl_epoch_window_rows(int64_t x_width)
{
	return dl_epoch_block_rows(x_width) * DL_EPOCH_WINDOW_BLOCKS;
}

DlStatus
dl_epoch_count_blocks(const int64_t *rows, int64_t n_buffers, int64_t x_width,
					  int64_t *n_blocks, DlError *err)
{
	int64_t		br = dl_epoch_block_rows(x_width);
	int64_t		nb = 0;

	*n_blocks = 0;
	if (n_buffers < 0)
		return dl_error_set(err, DL_ERR_SHAPE, "a partition of %lld buffers", (long long) n_buffers);
	for (int64_t i = 0; i < n_buffers; i++)
	{
		if (rows[i] < 0)
			return dl_error_set(err, DL_ERR_SHAPE, "buffer %lld of a partition has %lld rows",
								(long long) i, (long long) rows[i]);
		/* at most one block per row: no overflow while the rows add up */
		if (__builtin_add_overflow(nb, rows[i] / br + (rows[i] % br != 0), &nb))
			return dl_error_set(err, DL_ERR_LIMIT, "a partition of too many rows");
	}
	*n_blocks = nb;
	return DL_OK;
}

DlStatus
dl_epoch_blocks(const int64_t *rows, int64_t n_buffers, int64_t x_width,
				const DlAllocator *alloc, DlBlock **out, int64_t *n_blocks, DlError *err)
{
	int64_t		br = dl_epoch_block_rows(x_width);
	int64_t		nb;
	int64_t		k = 0;
	int64_t		start = 0;
	DlBlock    *b;
	DlStatus	st;

	*out = NULL;
	if ((st = dl_epoch_count_blocks(rows, n_buffers, x_width, &nb, err)) != DL_OK)
		return st;
	b = dl_alloc_array(alloc, (size_t) (nb > 0 ? nb : 1), sizeof(DlBlock), err);
	if (b == NULL)
		return err ? err->code : DL_ERR_NO_MEMORY;
	for (int64_t i = 0; i < n_buffers; i++)
	{
		for (int64_t off = 0; off < rows[i]; off += br)
		{
			b[k].buffer = i;
			b[k].offset = off;
			b[k].n = rows[i] - off < br ? rows[i] - off : br;
			b[k].start = start + off;
			k++;
		}
		start += rows[i];
	}
	*out = b;
	*n_blocks = nb;
	return DL_OK;
}

void
dl_epoch_order(DlRng *rng, bool shuffle, int64_t *order, int64_t n_blocks)
{
	for (int64_t i = 0; i < n_blocks; i++)
		order[i] = i;
	if (shuffle && n_blocks > 1)
		dl_rng_shuffle_i64(rng, order, n_blocks);
}

/* Loss and metric of one batch x (B, in), y (B, loss width) in inference mode. */
static DlStatus
evaluate_batch(DlModel *m, const DlTrainConfig *cfg, const float *x, const float *y, int64_t B,
			   DlBatchStats *stats, DlError *err)
{
	int64_t		K = dl_shape_size(&m->spec->output_shape);
	DlMetricKind mk = dl_metric_resolve(cfg->metric, cfg->loss, K);
	const float *p;
	DlStatus	st;

	if ((st = dl_loss_check_labels(cfg->loss, y, B, K, err)) != DL_OK)
		return st;
	p = dl_model_forward(m, x, B, false);
	if ((st = dl_model_kernel_status(m, err)) != DL_OK)
		return st;
	if (stats != NULL)
	{
		stats->loss_sum += dl_loss_compute(cfg->loss, NULL, p, y, B, K, 1.0);
		if (mk != DL_METRIC_NONE)
			stats->metric_sum += dl_metric_sum(mk, cfg->top_k, p, y, B, K);
		if (stats->metric_sums != NULL)
			dl_metric_list_acc_add(&cfg->sum_metrics, cfg->loss, p, y, B, K, stats->metric_sums);
		stats->n += B;
	}
	return DL_OK;
}

DlStatus
dl_pass_begin(DlPass *p, DlModel *m, const DlTrainConfig *cfg, bool train, int64_t total,
			  DlBatchStats *stats, DlError *err)
{
	int64_t		bs = cfg->batch_size;
	DlStatus	st;

	memset(p, 0, sizeof(*p));
	if ((st = check_trainable(m, err)) != DL_OK || (st = check_batch_size(bs, err)) != DL_OK)
		return st;
	if (total < 0)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "a pass over %lld rows", (long long) total);
	/* reserve once: batch_x and batch_y are workspace, never moved during the pass */
	if ((st = dl_model_workspace_reserve(m, bs < total ? bs : (total > 0 ? total : 1), err)) != DL_OK)
		return st;
	p->m = m;
	p->cfg = cfg;
	p->train = train;
	p->stats = stats;
	p->left = total;
	return DL_OK;
}

/*
 * Where a pass gathers a batch: input k's rows at bx[k] (ws_cap, its
 * size), output k's labels at by[k] (ws_cap, yw[k]), in the workspace's
 * batch buffers (model.c sizes them for every input and output).
 */
typedef struct PassLayout
{
	bool		single;			/* one input, one output, one loss: the
								 * functions of one x and one y */
	int			n_in;
	int			n_out;
	int64_t		in_size[DL_MAX_IO];
	int64_t		K[DL_MAX_IO];	/* output k's size */
	int64_t		yw[DL_MAX_IO];	/* its label width under its loss */
	float	   *bx[DL_MAX_IO];
	float	   *by[DL_MAX_IO];
} PassLayout;

static void
pass_layout(const DlModel *m, const DlTrainConfig *cfg, PassLayout *l)
{
	const DlModelSpec *spec = m->spec;
	int64_t		xo = 0;
	int64_t		yo = 0;

	l->n_in = spec->n_inputs;
	l->n_out = spec->n_outputs;
	l->single = l->n_in == 1 && l->n_out == 1 && cfg->outputs == NULL;
	for (int k = 0; k < l->n_in; k++)
	{
		l->in_size[k] = dl_shape_size(&spec->input_shapes[k]);
		l->bx[k] = m->batch_x + m->ws_cap * xo;
		xo += l->in_size[k];
	}
	for (int k = 0; k < l->n_out; k++)
	{
		l->K[k] = output_width(m, k);
		l->yw[k] = dl_loss_y_width(output_config(cfg, k).loss, l->K[k]);
		l->by[k] = m->batch_y + m->ws_cap * yo;
		yo += l->K[k];
	}
}

/* Run the gathered batch of B rows. */
static DlStatus
pass_batch(DlPass *p, int64_t B, DlError *err)
{
	DlModel    *m = p->m;
	const DlTrainConfig *cfg = p->cfg;
	PassLayout	l;

	if (p->batches > 0 && cfg->between_batches != NULL)
		cfg->between_batches(cfg->between_batches_arg);
	if (p->batches > 0 && dl_model_cancelled(m, "between mini-batches"))
		return dl_model_kernel_status(m, err);
	p->batches++;
	p->pending = 0;
	pass_layout(m, cfg, &l);
	if (l.single && p->train)
		return dl_model_train_batch(m, cfg, m->batch_x, m->batch_y, B, p->stats, err);
	if (l.single)
		return evaluate_batch(m, cfg, m->batch_x, m->batch_y, B, p->stats, err);
	if (p->train)
		return dl_model_train_batch_io(m, cfg, (const float *const *) l.bx,
									   (const float *const *) l.by, B, p->stats, err);
	return dl_model_evaluate_io(m, cfg, (const float *const *) l.bx, (const float *const *) l.by,
								B, p->stats, err);
}

/* A run's arrays: its xs, ys and y_widths, or x, y and y_width as arrays of one. */
typedef struct RunArrays
{
	const float *const *xs;
	const float *const *ys;
	const int64_t *y_widths;
} RunArrays;

/*
 * Check run j of a window against layout l: one array per input and
 * output, each output's labels of the loss's width or the output's size.
 */
static DlStatus
check_run(const PassLayout *l, const DlRows *run, int j, RunArrays *a, DlError *err)
{
	if (run->xs == NULL && !(l->n_in == 1 && l->n_out == 1))
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
					 "window run %d gives one array for a model of %d inputs and %d outputs",
					 j, l->n_in, l->n_out);
		return dl_error_hint(err, "Give xs, ys and y_widths: one array per input and per output.");
	}
	a->xs = run->xs != NULL ? run->xs : &run->x;
	a->ys = run->xs != NULL ? run->ys : &run->y;
	a->y_widths = run->xs != NULL ? run->y_widths : &run->y_width;
	if (run->n < 0 || a->ys == NULL || a->y_widths == NULL)
		return dl_error_set(err, DL_ERR_SHAPE, "window run %d has %lld rows", j, (long long) run->n);
	for (int k = 0; k < l->n_out; k++)
	{
		int64_t		w = a->y_widths[k];

		if (w != l->yw[k] && !(l->yw[k] == 1 && w == l->K[k]))
			return dl_error_set(err, DL_ERR_SHAPE,
								"window run %d has %lld rows of %lld labels, the loss takes %lld",
								j, (long long) run->n, (long long) w, (long long) l->yw[k]);
	}
	return DL_OK;
}

/* Copy row i of a run (its arrays a) into row dst of the batch buffers. */
static void
gather_row(const PassLayout *l, const RunArrays *a, int64_t i, int64_t dst)
{
	for (int k = 0; k < l->n_in; k++)
		memcpy(l->bx[k] + dst * l->in_size[k], a->xs[k] + i * l->in_size[k],
			   (size_t) l->in_size[k] * sizeof(float));
	for (int k = 0; k < l->n_out; k++)
	{
		const float *ys = a->ys[k] + i * a->y_widths[k];
		float	   *yd = l->by[k] + dst * l->yw[k];

		if (a->y_widths[k] == l->yw[k])
			memcpy(yd, ys, (size_t) l->yw[k] * sizeof(float));
		else
		{
			/* one-hot -> class index: the first largest value */
			int64_t		best = 0;

			for (int64_t c = 1; c < l->K[k]; c++)
				if (ys[c] > ys[best])
					best = c;
			yd[0] = (float) best;
		}
	}
}

/* The run holding row g of a window: starts[j] <= g < starts[j + 1]. */
static int
run_of(const int64_t *starts, int n_runs, int64_t g)
{
	int			lo = 0;
	int			hi = n_runs - 1;

	while (lo < hi)
	{
		int			mid = (lo + hi + 1) / 2;

		if (starts[mid] <= g)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

DlStatus
dl_pass_window(DlPass *p, const DlRows *runs, int n_runs, DlError *err)
{
	return dl_pass_window_from(p, runs, n_runs, 0, NULL, err);
}

DlStatus
dl_pass_window_from(DlPass *p, const DlRows *runs, int n_runs, int64_t from, const DlRng *rng,
					DlError *err)
{
	DlModel    *m = p->m;
	const DlTrainConfig *cfg = p->cfg;
	PassLayout	l;
	RunArrays	arrays[DL_PASS_MAX_RUNS];
	int64_t		starts[DL_PASS_MAX_RUNS + 1];
	int64_t		R = 0;
	bool		shuffle = p->train && cfg->shuffle;
	DlStatus	st;

	if (n_runs < 0 || n_runs > DL_PASS_MAX_RUNS)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "a window of %d runs, at most %d",
							n_runs, DL_PASS_MAX_RUNS);
	pass_layout(m, cfg, &l);
	for (int j = 0; j < n_runs; j++)
	{
		if ((st = check_run(&l, &runs[j], j, &arrays[j], err)) != DL_OK)
			return st;
		starts[j] = R;
		if (__builtin_add_overflow(R, runs[j].n, &R))
			return dl_error_set(err, DL_ERR_LIMIT, "a window of too many rows");
	}
	starts[n_runs] = R;
	if (from < 0 || from > R || p->stopped)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							"a window of %lld rows resumed at row %lld%s", (long long) R,
							(long long) from, p->stopped ? " after its pass stopped" : "");
	if (R == 0)
		return DL_OK;
	/* the workspace holds min(batch_size, total) rows: never more rows than begun for */
	if (R - from > p->left)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							"a pass was given %lld rows more than it was begun for",
							(long long) (R - from - p->left));
	p->left -= R - from;
	if (shuffle)
	{
		if ((st = dl_model_perm_reserve(m, R, err)) != DL_OK)
			return st;
		for (int64_t i = 0; i < R; i++)
			m->perm[i] = i;
		dl_rng_shuffle_i64(&m->rng, m->perm, R);
	}
	if (rng != NULL)
		m->rng = *rng;			/* the generator as the window stopped */

	/* every input and output of a row travel together */
	for (int64_t r = from, j = 0; r < R; r++)
	{
		int64_t		g = shuffle ? m->perm[r] : r;

		if (shuffle)
			j = run_of(starts, n_runs, g);
		else
			while (starts[j + 1] <= g)
				j++;
		gather_row(&l, &arrays[j], g - starts[j], p->pending);
		if (++p->pending == cfg->batch_size)
		{
			if ((st = pass_batch(p, p->pending, err)) != DL_OK)
				return st;
			if (p->stop_after > 0 && p->batches == p->stop_after)
			{
				/* the rest of the window waits for dl_pass_window_from */
				p->left += R - (r + 1);
				p->stopped = true;
				p->stop_row = r + 1;
				return DL_OK;
			}
		}
	}
	return DL_OK;
}

DlStatus
dl_pass_end(DlPass *p, DlError *err)
{
	if (p->m == NULL || p->pending == 0)
		return DL_OK;
	return pass_batch(p, p->pending, err);
}

DlStatus
dl_model_evaluate_io(DlModel *m, const DlTrainConfig *cfg, const float *const *xs,
					 const float *const *ys, int64_t N, DlBatchStats *stats, DlError *err)
{
	const DlModelSpec *spec = m->spec;
	int64_t		bs = cfg->batch_size;
	DlStatus	st;

	if ((st = check_batch_size(bs, err)) != DL_OK)
		return st;
	if (N <= 0)
		return DL_OK;
	/* inference is per sample: sub-batches short enough for a prompt cancel */
	if (bs > dl_model_cancel_rows(spec))
		bs = dl_model_cancel_rows(spec);
	if ((st = dl_model_workspace_reserve(m, bs < N ? bs : N, err)) != DL_OK)
		return st;
	for (int64_t start = 0; start < N; start += bs)
	{
		int64_t		B = N - start < bs ? N - start : bs;
		const float *xb[DL_MAX_IO];
		const float *yb[DL_MAX_IO];
		double		loss = 0.0;
		double		output_loss[DL_MAX_IO];

		if (start > 0 && cfg->between_batches != NULL)
			cfg->between_batches(cfg->between_batches_arg);
		if (start > 0 && dl_model_cancelled(m, "between batches"))
			return dl_model_kernel_status(m, err);
		for (int k = 0; k < spec->n_inputs; k++)
			xb[k] = xs[k] + start * dl_shape_size(&spec->input_shapes[k]);
		for (int k = 0; k < spec->n_outputs; k++)
		{
			DlOutputConfig o = output_config(cfg, k);

			yb[k] = ys[k] + start * dl_loss_y_width(o.loss, output_width(m, k));
			if ((st = dl_loss_check_labels(o.loss, yb[k], B, output_width(m, k), err)) != DL_OK)
				return st;
		}
		dl_model_forward_io(m, xb, B, false);
		if ((st = dl_model_kernel_status(m, err)) != DL_OK)
			return st;
		if (stats == NULL)
			continue;
		for (int k = 0; k < spec->n_outputs; k++)
		{
			DlOutputConfig o = output_config(cfg, k);

			output_loss[k] = dl_loss_compute(o.loss, NULL, dl_model_output(m, k), yb[k], B,
											 output_width(m, k), 1.0);
			loss += o.loss_weight * output_loss[k];
		}
		add_stats(m, cfg, yb, B, loss, output_loss, stats);
	}
	return DL_OK;
}

DlStatus
dl_model_evaluate(DlModel *m, const DlTrainConfig *cfg, const float *x, const float *y,
				  int64_t N, DlBatchStats *stats, DlError *err)
{
	DlStatus	st = check_single_io(m, err);

	return st != DL_OK ? st : dl_model_evaluate_io(m, cfg, &x, &y, N, stats, err);
}

DlStatus
dl_model_predict_io(DlModel *m, float *const *outs, const float *const *xs, int64_t N,
					int64_t batch_size, DlError *err)
{
	const DlModelSpec *spec = m->spec;
	DlStatus	st;

	if ((st = check_batch_size(batch_size, err)) != DL_OK)
		return st;
	if (N <= 0)
		return DL_OK;
	/* inference is per sample: sub-batches short enough for a prompt cancel */
	if (batch_size > dl_model_cancel_rows(spec))
		batch_size = dl_model_cancel_rows(spec);
	if ((st = dl_model_workspace_reserve(m, batch_size < N ? batch_size : N, err)) != DL_OK)
		return st;
	for (int64_t start = 0; start < N; start += batch_size)
	{
		int64_t		B = N - start < batch_size ? N - start : batch_size;
		const float *xb[DL_MAX_IO];

		if (start > 0 && dl_model_cancelled(m, "between batches"))
			return dl_model_kernel_status(m, err);

		for (int k = 0; k < spec->n_inputs; k++)
			xb[k] = xs[k] + start * dl_shape_size(&spec->input_shapes[k]);
		dl_model_forward_io(m, xb, B, false);
		if ((st = dl_model_kernel_status(m, err)) != DL_OK)
			return st;
		for (int k = 0; k < spec->n_outputs; k++)
		{
			int64_t		K = output_width(m, k);

			memcpy(outs[k] + start * K, dl_model_output(m, k), (size_t) (B * K) * sizeof(float));
		}
	}
	return DL_OK;
}

DlStatus
dl_model_predict(DlModel *m, float *out, const float *x, int64_t N, int64_t batch_size,
				 DlError *err)
{
	DlStatus	st = check_single_io(m, err);

	return st != DL_OK ? st : dl_model_predict_io(m, &out, &x, N, batch_size, err);
}
