/*-------------------------------------------------------------------------
 *
 * model.c
 *	  Building a model from its spec; workspace; forward and backward.
 *
 * A model is its spec plus one allocation holding params (P) and grads
 * (P), the optimizer state (n_slots arrays of the same layout) and a
 * workspace that is laid out by one function (workspace_layout), called
 * once to size the blocks and once to point into them.
 *
 * The executor runs the spec's graph with the plan finalize made
 * (plan.c).  Forward walks the layers in order, each reading the tensors
 * it names (earlier layers' outputs or the model's inputs) and writing
 * its output where its plan puts it, in an arena whose buffers are
 * reused once their last reader is done.  Backward walks them in
 * reverse, each layer reading its output's gradient and giving each
 * input its share: written when it is the first that input gets, else
 * computed aside and added, so a tensor read twice gets the sum.
 * In-place steps (activation backward, Flatten, Dropout without a mask,
 * an Add's first input) hand their buffer on.  For a chain this is the
 * classic pair of gradient buffers used in turn.  A ReLU layer reading a
 * BatchNormalization or a merge is applied in that layer's forward pass
 * (the plan's fwd_relu).

 * Dropout draws its masks from the model rng even when the layer gives a
 * seed, so a fit depends only on its own seed (and the data order).
 * A frozen BatchNormalization layer (trainable false) runs in inference
 * mode also during training, as in tf.keras 2.
 *
 * IDENTIFICATION
 *	  src/engine/model.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "madlib_dl/dl_backend.h"
#include "madlib_dl/dl_blob.h"
#include "dl_kernels.h"
#include "model_impl.h"
#include "plan.h"

/* Sub-buffers start on 64-byte boundaries (16 floats or 8 int64). */
#define WS_ALIGN 16

static double onednn_budget(const DlModelSpec *spec);

DlStatus
dl_model_create(const DlModelSpec *spec, const DlOptimConfig *optim,
				const DlAllocator *alloc, DlModel **out, DlError *err)
{
	DlModel    *m;
	size_t		P = spec->n_params;
	size_t		n_floats;
	DlStatus	st;
	int			n_ranges = 0;

	*out = NULL;
	if (spec->n_layers < 1 || spec->output_shape.rank < 1)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "model spec is not finalized (%d layers)",
					 spec->n_layers);
		return dl_error_hint(err, "Call dl_model_spec_finalize() before dl_model_create().");
	}
	if (optim != NULL && (st = dl_optim_config_validate(optim, err)) != DL_OK)
		return st;

	m = dl_alloc(alloc, sizeof(DlModel), err);
	if (m == NULL)
		return err ? err->code : DL_ERR_NO_MEMORY;
	m->spec = spec;
	m->alloc = *alloc;
	m->conv_scratch.alloc = &m->alloc;
	{
		/* the oneDNN scratch may grow to the budget the estimate counts */
		double		budget = onednn_budget(spec);

		m->conv_scratch.limit = budget < (double) DL_ALLOC_MAX ? (size_t) budget : DL_ALLOC_MAX;
	}
	m->n_params = P;
	dl_model_seed_rng(m, 0);

	/* params and grads: one allocation */
	if (!dl_size_mul(P, optim != NULL ? 2 : 1, &n_floats))
	{
		dl_free(alloc, m);
		return dl_error_set(err, DL_ERR_LIMIT, "model with %zu parameters is too large", P);
	}
	m->params = dl_alloc_array(alloc, n_floats, sizeof(float), err);
	if (m->params == NULL)
		goto fail;
	if (optim != NULL)
		m->grads = m->params + P;

	m->lw = dl_alloc_array(alloc, (size_t) spec->n_layers, sizeof(DlLayerWork), err);
	if (m->lw == NULL)
		goto fail;

	for (int i = 0; i < spec->n_layers; i++)
	{
		if (spec->layers[i].n_trainable > 0)
			n_ranges++;
	}
	m->ranges = dl_alloc_array(alloc, n_ranges > 0 ? (size_t) n_ranges : 1,
							   sizeof(DlParamRange), err);
	if (m->ranges == NULL)
		goto fail;
	for (int i = 0; i < spec->n_layers; i++)
	{
		const DlLayer *l = &spec->layers[i];

		if (l->n_trainable > 0)
		{
			m->ranges[m->n_ranges].begin = l->param_offset;
			m->ranges[m->n_ranges].end = l->param_offset + l->n_trainable;
			m->n_ranges++;
		}
	}

	if (optim != NULL)
	{
		if (dl_optim_state_init(&m->optim, optim, P, alloc, err) != DL_OK)
			goto fail;
		m->has_optim = true;
	}
	*out = m;
	return DL_OK;

fail:
	st = err ? err->code : DL_ERR_NO_MEMORY;
	dl_model_free(m);
	return st;
}

void
dl_model_free(DlModel *m)
{
	DlAllocator a;

	if (m == NULL)
		return;
	a = m->alloc;
	if (m->has_optim)
		dl_optim_state_free(&m->optim, &a);
	dl_free(&a, m->ws);
	dl_free(&a, m->conv_scratch.p);
	dl_free(&a, m->ws_i64);
	dl_free(&a, m->perm);
	dl_free(&a, m->order);
	dl_free(&a, m->ranges);
	dl_free(&a, m->lw);
	dl_free(&a, m->params);
	dl_free(&a, m);
}

void
dl_model_seed_rng(DlModel *m, uint64_t seed)
{
	dl_rng_seed(&m->rng, seed);
}

const DlModelSpec *
dl_model_spec(const DlModel *m)
{
	return m->spec;
}

size_t
dl_model_n_params(const DlModel *m)
{
	return m->n_params;
}

float *
dl_model_params(DlModel *m)
{
	return m->params;
}

float *
dl_model_grads(DlModel *m)
{
	return m->grads;
}

DlOptimState *
dl_model_optim(DlModel *m)
{
	return m->has_optim ? &m->optim : NULL;
}

DlRng *
dl_model_rng(DlModel *m)
{
	return &m->rng;
}

const DlParamRange *
dl_model_trainable_ranges(const DlModel *m, int *n_ranges)
{
	*n_ranges = m->n_ranges;
	return m->ranges;
}

DlStatus
dl_model_set_params(DlModel *m, const float *w, size_t n, DlError *err)
{
	if (n != m->n_params)
	{
		dl_error_set(err, DL_ERR_SHAPE, "weights have %zu values but the architecture needs %zu",
					 n, m->n_params);
		return dl_error_hint(err, "Use weights saved from a model with the same architecture, or leave them out to initialise the weights randomly.");
	}
	if (n > 0)
		memcpy(m->params, w, n * sizeof(float));
	return DL_OK;
}

void
dl_model_reset_optim(DlModel *m)
{
	size_t		n;
	float		init = 0.0f;

	if (!m->has_optim)
		return;
	m->optim.iterations = 0;
	m->optim.m_schedule = 1.0;
	/* dl_optim_state_init: zeros, Adagrad's accumulator at its initial value */
	if (m->optim.cfg.kind == DL_OPTIM_ADAGRAD)
		init = (float) m->optim.cfg.initial_accumulator_value;
	n = m->n_params * (size_t) m->optim.n_slots;	/* allocated, cannot overflow */
	for (size_t i = 0; i < n; i++)
		m->optim.slots[i] = init;
}

/* ---------------------------------------------------------------------
 * Workspace
 * --------------------------------------------------------------------- */

/*
 * Workspace sizes are computed in double: exact below 2^53 (far above
 * DL_ALLOC_MAX, the most the allocator is ever asked for), and a hostile
 * spec (huge units, a huge batch) gives a huge size, never a wrapped
 * small one.  The layout is only applied once the total is known to be
 * below WS_MAX_FLOATS, where every offset is exact.
 */
#define WS_MAX_FLOATS ((double) (DL_ALLOC_MAX / sizeof(float)))

/* The sizes of a workspace, in elements. */
typedef struct WsPlan
{
	double		floats;			/* every float buffer, im2col included */
	double		i64;			/* the max-pooling argmax buffers */
	double		im2col;			/* the Conv2D column buffer (part of floats) */
} WsPlan;

/* Reserve n elements at *total, rounded up to WS_ALIGN; returns their offset. */
static double
ws_take(double *total, double n)
{
	double		off = *total;

	*total += ceil(n / WS_ALIGN) * WS_ALIGN;
	return off;
}

static inline bool
dropout_has_buffer(bool training, const DlLayer *l)
{
	return training && l->rate > 0.0;
}

/* The geometry of Conv2D or Conv1D layer l over B samples. */
static void
conv_geom(DlConvGeom *g, const DlLayer *l, int64_t B)
{
	if (l->kind == DL_LAYER_CONV1D)
	{
		dl_seq_conv_geom(g, l, B);
		return;
	}
	dl_conv_geom_init_dilated(g, B, l->in_shape.dims[0], l->in_shape.dims[1],
							  l->in_shape.dims[2], l->filters, l->kernel_size[0],
							  l->kernel_size[1], l->strides[0], l->strides[1], l->dilation[0],
							  l->dilation[1], l->padding);
}

static void
pool_geom(DlPoolGeom *g, const DlLayer *l, int64_t B)
{
	dl_pool_geom_init(g, B, l->in_shape.dims[0], l->in_shape.dims[1], l->in_shape.dims[2],
					  l->pool_size[0], l->pool_size[1], l->strides[0], l->strides[1],
					  l->padding);
}

/*
 * Lay the workspace of spec out for B samples (training: with the
 * buffers of the backward pass).  With m NULL only the sizes are
 * computed into *plan; otherwise (fbase and ibase holding plan's sizes)
 * the pointers of m are set into them.  The layers' outputs and the
 * gradients sit in two arenas laid out by the spec's plan (plan.c), in
 * floats per sample: a buffer at offset o of an arena is at B * o.
 */
static void
workspace_layout(const DlModelSpec *spec, bool training, int64_t B, DlModel *m,
				 float *fbase, int64_t *ibase, WsPlan *plan)
{
	double		ft = 0,
				it = 0,
				off;
	double		b = (double) B;
	double		conv_floats = 0;
	double		acts = ws_take(&ft, b * (double) (training ? spec->ws_train : spec->ws_infer));
	double		grads = 0;

#define F_PTR(o) (m != NULL ? fbase + (size_t) (o) : NULL)
#define ARENA_PTR(base, o) ((o) == DL_PLAN_NONE ? NULL : F_PTR((base) + b * (double) (o)))

	if (training)
		grads = ws_take(&ft, b * (double) spec->ws_grad);
	for (int i = 0; i < spec->n_layers; i++)
	{
		const DlLayer *l = &spec->layers[i];
		DlLayerWork *w = m != NULL ? &m->lw[i] : NULL;
		DlLayerWork unused;
		double		size = (double) dl_shape_size(&l->out_shape);
		double		c = (double) dl_shape_last(&l->in_shape);

		if (w == NULL)
			w = &unused;
		memset(w, 0, sizeof(*w));
		w->buf = ARENA_PTR(acts, training ? l->plan.out_train : l->plan.out_infer);
		if (training)
		{
			w->grad = ARENA_PTR(grads, l->plan.grad);
			w->grad_tmp = ARENA_PTR(grads, l->plan.grad_tmp);
		}
		switch (l->kind)
		{
			case DL_LAYER_MAXPOOL2D:
			case DL_LAYER_GLOBALMAXPOOL2D:
				off = ws_take(&it, b * size);
				w->argmax = m != NULL ? ibase + (size_t) off : NULL;
				break;
			case DL_LAYER_DROPOUT:
				if (dropout_has_buffer(training, l))
				{
					off = ws_take(&ft, b * size);
					w->mask = F_PTR(off);
				}
				break;
			case DL_LAYER_BATCHNORM:
				if (training)
				{
					off = ws_take(&ft, c);
					w->mean = F_PTR(off);
					off = ws_take(&ft, c);
					w->invstd = F_PTR(off);
				}
				break;
			case DL_LAYER_CONV2D:
			case DL_LAYER_CONV1D:
				{
					DlConvGeom	g;
					double		cf;

					conv_geom(&g, l, B);
					cf = dl_conv2d_workspace_floats_d(&g);
					if (cf > conv_floats)
						conv_floats = cf;
				}
				break;
			case DL_LAYER_MAXPOOL1D:
			case DL_LAYER_GLOBALMAXPOOL1D:
				off = ws_take(&it, b * size);
				w->argmax = m != NULL ? ibase + (size_t) off : NULL;
				break;
			case DL_LAYER_SEPARABLECONV2D:
				{
					/* the depthwise output, and its gradient */
					double		mid = (double) l->out_shape.dims[0] * (double) l->out_shape.dims[1] *
						(double) c * (double) l->depth_multiplier;

					off = ws_take(&ft, b * mid);
					w->mid = F_PTR(off);
					if (training && l->plan.backward)
					{
						off = ws_take(&ft, b * mid);
						w->dmid = F_PTR(off);
					}
				}
				break;
			case DL_LAYER_LAYERNORM:
				if (training && l->plan.backward)
				{
					off = ws_take(&ft, b * size / c);
					w->mean = F_PTR(off);
					off = ws_take(&ft, b * size / c);
					w->invstd = F_PTR(off);
				}
				break;
			case DL_LAYER_LSTM:
			case DL_LAYER_GRU:
			case DL_LAYER_SIMPLERNN:
				for (int dir = 0; dir < (l->bidir != DL_BIDIR_NONE ? 2 : 1); dir++)
				{
					DlRnnGeom	g;
					double		steps;

					dl_seq_rnn_geom(&g, l, dir, B);
					steps = b * (double) g.T;
					off = ws_take(&ft, steps * (double) (g.I + g.U));
					w->rnn[dir].xh = F_PTR(off);
					off = ws_take(&ft, steps * (double) dl_rnn_slots(&g) * (double) g.U);
					w->rnn[dir].gates = F_PTR(off);
					off = ws_take(&ft, steps * (double) g.U);
					w->rnn[dir].h = F_PTR(off);
					if (dl_rnn_has_aux(&g))
					{
						off = ws_take(&ft, steps * (double) g.U);
						w->rnn[dir].aux = F_PTR(off);
					}
					if (dir == 0 && training && l->plan.backward)
					{
						off = ws_take(&ft, steps * (double) g.U);
						w->rnn_dh = F_PTR(off);
						off = ws_take(&ft, b * (double) g.U);
						w->rnn_work = F_PTR(off);
					}
				}
				break;
			default:
				break;
		}
		if (training && l->plan.backward && dl_seq_keeps_pre(l))
		{
			off = ws_take(&ft, b * size);
			w->pre = F_PTR(off);
		}
	}
	off = ws_take(&ft, conv_floats);
	plan->im2col = ft - off;
	if (m != NULL)
	{
		m->conv_work = conv_floats > 0 ? F_PTR(off) : NULL;
		m->batch_x = m->batch_y = NULL;
	}
	if (training)
	{
		/*
		 * a pass (dl_epoch.h) gathers a shuffled mini-batch here: every
		 * input's rows, then every output's labels, each B rows
		 */
		double		in_floats = 0;
		double		out_floats = 0;

		for (int k = 0; k < spec->n_inputs; k++)
			in_floats += (double) dl_shape_size(&spec->input_shapes[k]);
		for (int k = 0; k < spec->n_outputs; k++)
			out_floats += (double) dl_shape_size(&spec->output_shapes[k]);
		off = ws_take(&ft, b * in_floats);
		if (m != NULL)
			m->batch_x = F_PTR(off);
		off = ws_take(&ft, b * out_floats);
		if (m != NULL)
			m->batch_y = F_PTR(off);
	}
#undef ARENA_PTR
#undef F_PTR
	plan->floats = ft;
	plan->i64 = it;
}

DlStatus
dl_model_workspace_reserve(DlModel *m, int64_t B, DlError *err)
{
	WsPlan		plan;
	float	   *fb;
	int64_t    *ib;

	if (B <= m->ws_cap)
		return DL_OK;
	workspace_layout(m->spec, m->grads != NULL, B, NULL, NULL, NULL, &plan);
	if (plan.floats > WS_MAX_FLOATS || plan.i64 > WS_MAX_FLOATS / 2)
	{
		dl_error_set(err, DL_ERR_LIMIT, "workspace for a batch of %lld samples needs %.0f bytes",
					 (long long) B, plan.floats * sizeof(float) + plan.i64 * sizeof(int64_t));
		return dl_error_hint(err, "Use a smaller batch_size or a smaller model.");
	}
	/* free first: the old workspace is not needed and memory may be tight */
	dl_free(&m->alloc, m->ws);
	dl_free(&m->alloc, m->ws_i64);
	m->ws = NULL;
	m->ws_i64 = NULL;
	m->ws_cap = 0;
	fb = dl_alloc_array(&m->alloc, (size_t) plan.floats, sizeof(float), err);
	if (fb == NULL)
		goto fail;
	ib = dl_alloc_array(&m->alloc, (size_t) plan.i64, sizeof(int64_t), err);
	if (ib == NULL)
	{
		dl_free(&m->alloc, fb);
		goto fail;
	}
	workspace_layout(m->spec, m->grads != NULL, B, m, fb, ib, &plan);
	m->ws = fb;
	m->ws_i64 = ib;
	m->ws_cap = B;
	return DL_OK;

fail:
	dl_error_prefix(err, "workspace for a batch of %lld samples", (long long) B);
	return dl_error_hint(err, "Use a smaller batch_size.");
}

/*
 * The oneDNN convolutions' scratch budget of spec: the largest
 * dl_conv2d_dnnl_scratch_budget of its Conv2D layers for the current
 * thread count; 0 when convolutions do not go to oneDNN.
 */
static double
onednn_budget(const DlModelSpec *spec)
{
	double		best = 0;

	if (!dl_backend_uses_onednn())
		return 0;
	for (int i = 0; i < spec->n_layers; i++)
	{
		const DlLayer *l = &spec->layers[i];
		DlConvGeom	g;
		double		b;

		if (l->kind != DL_LAYER_CONV2D && l->kind != DL_LAYER_CONV1D)
			continue;
		conv_geom(&g, l, 1);
		b = dl_conv2d_dnnl_scratch_budget(&g, dl_backend_threads());
		if (b > best)
			best = b;
	}
	return best;
}

DlStatus
dl_model_memory_estimate(const DlModelSpec *spec, const DlMemoryUse *use,
						 DlMemoryEstimate *out, DlError *err)
{
	bool		training = use->optim != NULL;
	double		P = (double) spec->n_params;
	int			n_slots = 0;
	int			n_ranges = 0;
	DlStatus	st;

	memset(out, 0, sizeof(*out));
	if (spec->n_layers < 1 || spec->output_shape.rank < 1)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "model spec is not finalized (%d layers)",
					 spec->n_layers);
		return dl_error_hint(err, "Call dl_model_spec_finalize() before dl_model_memory_estimate().");
	}
	if (use->batch_size < 0)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "batch_size must not be negative, got %lld",
							(long long) use->batch_size);
	if (training)
	{
		if ((st = dl_optim_config_validate(use->optim, err)) != DL_OK)
			return st;
		n_slots = dl_optim_n_slots(use->optim);
	}
	for (int i = 0; i < spec->n_layers; i++)
		if (spec->layers[i].n_trainable > 0)
			n_ranges++;

	/* dl_model_create */
	out->bookkeeping = (double) sizeof(DlModel) + (double) spec->n_layers * sizeof(DlLayerWork) +
		(double) (n_ranges > 0 ? n_ranges : 1) * sizeof(DlParamRange);
	out->weights = fmax(P * sizeof(float), 1);
	out->gradients = training ? P * sizeof(float) : 0;
	out->optimizer = P * n_slots * sizeof(float);

	/* dl_model_workspace_reserve, and what the passes over a batch use */
	if (use->batch_size > 0)
	{
		WsPlan		plan;
		double		budget = onednn_budget(spec);

		workspace_layout(spec, training, use->batch_size, NULL, NULL, NULL, &plan);
		out->im2col = plan.im2col * sizeof(float);
		/* two allocations; dl_alloc makes 1 byte of an empty one */
		out->activations = fmax(plan.floats * sizeof(float), 1) - out->im2col +
			fmax(plan.i64 * sizeof(int64_t), 1);
		out->onednn_scratch = budget > 0 ? budget + DL_SCRATCH_ALIGN : 0;
	}
	out->total = out->bookkeeping + out->weights + out->gradients + out->optimizer +
		out->activations + out->im2col + out->onednn_scratch;
	/* dl_blob.h: header, weights, optimizer slots */
	out->state_blob = DL_BLOB_HEADER_SIZE + P * (1 + n_slots) * sizeof(float);
	return DL_OK;
}

/* Grow *buf (capacity *cap) to hold at least N int64s; its contents are not kept. */
static DlStatus
reserve_i64(DlModel *m, int64_t **buf, int64_t *cap, int64_t N, DlError *err)
{
	int64_t    *p;

	if (N <= *cap)
		return DL_OK;
	p = dl_alloc_array(&m->alloc, (size_t) N, sizeof(int64_t), err);
	if (p == NULL)
		return err ? err->code : DL_ERR_NO_MEMORY;
	dl_free(&m->alloc, *buf);
	*buf = p;
	*cap = N;
	return DL_OK;
}

DlStatus
dl_model_perm_reserve(DlModel *m, int64_t N, DlError *err)
{
	return reserve_i64(m, &m->perm, &m->perm_cap, N, err);
}

DlStatus
dl_model_order_reserve(DlModel *m, int64_t N, DlError *err)
{
	return reserve_i64(m, &m->order, &m->order_cap, N, err);
}

/* ---------------------------------------------------------------------
 * Forward and backward
 * --------------------------------------------------------------------- */


/*
 * Whether a oneDNN convolution ran (st DL_OK).  DL_ERR_UNSUPPORTED (off,
 * or a geometry it refuses) sends the caller to im2col quietly; any other
 * failure also does, and is kept for dl_model_kernel_status.
 */
static bool
conv_kernel_ok(DlModel *m, DlStatus st, const DlError *e)
{
	if (st == DL_OK)
		return true;
	if (st != DL_ERR_UNSUPPORTED && m->kernel_status == DL_OK)
	{
		m->kernel_status = st;
		m->kernel_err = *e;
	}
	return false;
}

void
dl_model_set_cancel(DlModel *m, DlCancelFn cancel, void *arg)
{
	m->cancel = cancel;
	m->cancel_arg = arg;
}

bool
dl_model_cancelled(DlModel *m, const char *what)
{
	if (m->cancel == NULL || !m->cancel(m->cancel_arg))
		return false;
	if (m->kernel_status != DL_ERR_CANCELLED)
	{
		m->kernel_status = DL_ERR_CANCELLED;
		dl_error_set(&m->kernel_err, DL_ERR_CANCELLED, "cancelled %s", what);
	}
	return true;
}

/*
 * Multiply-adds of layer l's forward pass for one sample, roughly: its
 * parameters times its rows (Dense, the convolutions, the recurrent
 * layers, normalizations: each parameter meets each row of the input or
 * output once) plus its input and output; an Embedding only copies.
 */
static double
layer_macs(const DlLayer *l)
{
	double		in_size = (double) dl_shape_size(&l->in_shape);
	double		out_size = (double) dl_shape_size(&l->out_shape);
	double		in_rows = in_size / (double) (dl_shape_last(&l->in_shape) > 0 ? dl_shape_last(&l->in_shape) : 1);
	double		out_rows = out_size / (double) (dl_shape_last(&l->out_shape) > 0 ? dl_shape_last(&l->out_shape) : 1);
	double		rows = in_rows > out_rows ? in_rows : out_rows;

	if (l->kind == DL_LAYER_EMBEDDING)
		return in_size + out_size;
	return (double) l->n_params * rows + in_size + out_size;
}

int64_t
dl_model_cancel_rows(const DlModelSpec *spec)
{
	double		most = 1.0;
	double		rows;

	for (int i = 0; i < spec->n_layers; i++)
	{
		double		c = layer_macs(&spec->layers[i]);

		if (c > most)
			most = c;
	}
	rows = DL_CANCEL_WORK_MACS / most;
	if (rows < 1.0)
		return 1;
	return rows > (double) INT64_MAX / 2 ? INT64_MAX / 2 : (int64_t) rows;
}

DlStatus
dl_model_kernel_status(DlModel *m, DlError *err)
{
	DlStatus	st = m->kernel_status;

	if (st != DL_OK && err != NULL)
		*err = m->kernel_err;
	m->kernel_status = DL_OK;
	return st;
}

/*
 * BatchNormalization parameter pointers into p (the layer's slice of the
 * block or of the gradients): gamma, beta, moving mean and variance, each
 * (C); gamma is NULL when scale is false, beta when center is false.
 */
static void
bn_params(float *p, const DlLayer *l, int64_t C, float **gamma, float **beta,
		  float **mmean, float **mvar)
{
	float	   *q = p;

	*gamma = NULL;
	*beta = NULL;
	if (l->scale)
	{
		*gamma = q;
		q += C;
	}
	if (l->center)
	{
		*beta = q;
		q += C;
	}
	*mmean = q;
	*mvar = q + C;
}

/* The tensors layer l reads, ins (l->n_in): model inputs or earlier outputs. */
static void
layer_inputs(const DlModel *m, const DlLayer *l, const float *const *xs, const float **ins)
{
	for (int j = 0; j < l->n_in; j++)
		ins[j] = l->in[j] < 0 ? xs[-1 - l->in[j]] : m->lw[l->in[j]].out;
}

/*
 * Concatenate's view of its tensors: *outer rows of width[j] floats for
 * input j (the batch and the axes before the axis, then the rest).
 */
static void
concat_widths(const DlModelSpec *spec, const DlLayer *l, int64_t B, int64_t *width,
			  int64_t *outer)
{
	int			axis = l->concat_axis;

	*outer = B;
	for (int d = 0; d < axis; d++)
		*outer *= l->in_shape.dims[d];
	for (int j = 0; j < l->n_in; j++)
	{
		const DlShape *s = l->in[j] < 0 ? &spec->input_shapes[-1 - l->in[j]] :
			&spec->layers[l->in[j]].out_shape;

		width[j] = 1;
		for (int d = axis; d < s->rank; d++)
			width[j] *= s->dims[d];
	}
}

const float *
dl_model_forward_io(DlModel *m, const float *const *xs, int64_t B, bool training)
{
	const DlModelSpec *spec = m->spec;

	for (int i = 0; i < spec->n_layers; i++)
	{
		const DlLayer *l = &spec->layers[i];
		DlLayerWork *w = &m->lw[i];
		float	   *p = m->params + l->param_offset;
		const float *ins[DL_MAX_FAN_IN];
		const float *in;		/* (B, in size): in[0] */
		int64_t		in_size = dl_shape_size(&l->in_shape);
		int64_t		out_size = dl_shape_size(&l->out_shape);
		int64_t		cin = dl_shape_last(&l->in_shape);
		int64_t		cout = dl_shape_last(&l->out_shape);
		int64_t		rows = B * (out_size / cout);	/* activation rows */

		if (i > 0 && dl_model_cancelled(m, "in the forward pass"))
			break;
		layer_inputs(m, l, xs, ins);
		in = ins[0];
		w->out = w->buf;
		switch (l->kind)
		{
			case DL_LAYER_DENSE:
				/* rank > 1: applies to the last axis, leading dims are rows */
				/* bias and activation fused into the pass after the sgemm */
				dl_dense_forward_act(w->buf, in, p, l->use_bias ? p + cin * l->units : NULL,
									 w->pre != NULL ? DL_ACT_LINEAR : l->activation,
									 B * (in_size / cin), cin, l->units);
				if (w->pre != NULL)
				{
					/* swish, gelu: the backward pass needs the pre-activation */
					memcpy(w->pre, w->buf, (size_t) (B * out_size) * sizeof(float));
					dl_activation_forward(l->activation, w->buf, w->buf, rows, cout);
				}
				break;
			case DL_LAYER_CONV2D:
			case DL_LAYER_CONV1D:
				{
					DlConvGeom	g;
					int64_t		nk = (int64_t) l->kernel_size[0] * l->kernel_size[1] * cin * l->filters;

					DlError		e;

					DlActivation act = w->pre != NULL ? DL_ACT_LINEAR : l->activation;

					conv_geom(&g, l, B);
					if (!conv_kernel_ok(m, dl_conv2d_dnnl_forward(w->buf, in, p,
																  l->use_bias ? p + nk : NULL,
																  act, &g, &m->conv_scratch, &e),
										&e))
						dl_conv2d_forward_act(w->buf, m->conv_work, in, p,
											  l->use_bias ? p + nk : NULL, act, &g);
					if (w->pre != NULL)
					{
						memcpy(w->pre, w->buf, (size_t) (B * out_size) * sizeof(float));
						dl_activation_forward(l->activation, w->buf, w->buf, rows, cout);
					}
				}
				break;
			case DL_LAYER_MAXPOOL2D:
				{
					DlPoolGeom	g;

					pool_geom(&g, l, B);
					dl_maxpool2d_forward(w->buf, w->argmax, in, &g);
				}
				break;
			case DL_LAYER_AVGPOOL2D:
				{
					DlPoolGeom	g;

					pool_geom(&g, l, B);
					dl_avgpool2d_forward(w->buf, in, &g);
				}
				break;
			case DL_LAYER_GLOBALAVGPOOL2D:
				dl_global_avgpool2d_forward(w->buf, in, B, in_size / cin, cin);
				break;
			case DL_LAYER_GLOBALMAXPOOL2D:
				dl_global_maxpool2d_forward(w->buf, w->argmax, in, B, in_size / cin, cin);
				break;
			case DL_LAYER_ZEROPADDING2D:
				dl_zeropad2d_forward(w->buf, in, B, l->in_shape.dims[0], l->in_shape.dims[1],
									 cin, l->margins);
				break;
			case DL_LAYER_CROPPING2D:
				dl_crop2d_forward(w->buf, in, B, l->in_shape.dims[0], l->in_shape.dims[1], cin,
								  l->margins);
				break;
			case DL_LAYER_UPSAMPLING2D:
				dl_upsample2d_forward(w->buf, in, B, l->in_shape.dims[0], l->in_shape.dims[1],
									  cin, l->size[0], l->size[1]);
				break;
			case DL_LAYER_FLATTEN:
			case DL_LAYER_RESHAPE:
				w->out = in;	/* a reshape */
				break;
			case DL_LAYER_DROPOUT:
				/* a training model's plan gives a Dropout with a mask its own buffer */
				if (w->buf == NULL)
					w->out = in;
				else if (training)
					dl_dropout_forward(w->buf, w->mask, in, B * in_size, l->rate, &m->rng);
				else
					memcpy(w->buf, in, (size_t) (B * in_size) * sizeof(float));
				break;
			case DL_LAYER_ACTIVATION:
				/* linear, or a ReLU its input's layer applied (plan.c) */
				if (l->activation == DL_ACT_LINEAR || l->plan.fwd_relu_done)
					w->out = in;
				else
					dl_activation_forward(l->activation, w->buf, in, rows, cout);
				break;
			case DL_LAYER_BATCHNORM:
				{
					float	   *gamma,
							   *beta,
							   *mm,
							   *mv;

					DlActivation act = l->plan.fwd_relu ? DL_ACT_RELU : DL_ACT_LINEAR;

					bn_params(p, l, cin, &gamma, &beta, &mm, &mv);
					if (training && l->trainable && w->mean != NULL)
						dl_batchnorm_forward_train(w->buf, w->mean, w->invstd, mm, mv, in, gamma,
												   beta, B * (in_size / cin), cin,
												   l->momentum, l->epsilon,
												   l->in_shape.rank == 3, act);
					else
						dl_batchnorm_forward_infer(w->buf, in, gamma, beta, mm, mv,
												   B * (in_size / cin), cin, l->epsilon, act);
				}
				break;
			DL_LAYER_CASES_ELEMENTWISE:
				dl_merge_forward(l->kind, w->buf, ins, l->n_in, B * out_size,
								 l->plan.fwd_relu ? DL_ACT_RELU : DL_ACT_LINEAR);
				break;
			case DL_LAYER_CONCATENATE:
				{
					int64_t		width[DL_MAX_FAN_IN];
					int64_t		outer;

					concat_widths(spec, l, B, width, &outer);
					dl_concat_forward(w->buf, ins, width, l->n_in, outer);
				}
				break;
			default:
				/* the layers of text and sequences */
				dl_seq_layer_forward(m, l, w, in, B, training);
				break;
		}
	}
	return dl_model_output(m, 0);
}

const float *
dl_model_forward(DlModel *m, const float *x, int64_t B, bool training)
{
	return dl_model_forward_io(m, &x, B, training);
}

const float *
dl_model_output(const DlModel *m, int k)
{
	return m->lw[m->spec->outputs[k]].out;
}

float *
dl_model_output_grad(DlModel *m, int k)
{
	return m->lw[m->spec->outputs[k]].grad;
}

/*
 * dx (R, C) = dy * gamma / sqrt(moving_var + eps): the backward pass of a
 * frozen BatchNormalization layer, which runs in inference mode.
 */
static void
bn_frozen_backward(float *dx, const float *dy, const float *gamma, const float *mvar,
				   int64_t R, int64_t C, double epsilon)
{
	for (int64_t r = 0; r < R; r++)
		for (int64_t c = 0; c < C; c++)
		{
			double		s = 1.0 / sqrt((double) mvar[c] + epsilon);

			if (gamma != NULL)
				s *= gamma[c];
			dx[r * C + c] = (float) (dy[r * C + c] * s);
		}
}

/* Is layer i an output whose loss gradient came fused (dz, not dy)? */
static bool
fused_output(const DlModelSpec *spec, int i, const bool *fused)
{
	for (int k = 0; k < spec->n_outputs; k++)
		if (spec->outputs[k] == i)
			return fused[k];
	return false;
}

/* Does input j of layer l take a gradient (a layer the backward pass runs)? */
static inline bool
input_takes_grad(const DlModelSpec *spec, const DlLayer *l, int j)
{
	return l->in[j] >= 0 && spec->layers[l->in[j]].plan.backward;
}

void
dl_model_backward_io(DlModel *m, const float *const *xs, int64_t B, const bool *fused)
{
	const DlModelSpec *spec = m->spec;

	for (int i = spec->n_layers - 1; i >= 0; i--)
	{
		const DlLayer *l = &spec->layers[i];
		DlLayerWork *w = &m->lw[i];
		float	   *dy = w->grad;	/* (B, out size) */
		const float *ins[DL_MAX_FAN_IN];
		const float *in;		/* (B, in size): in[0] */
		float	   *p = m->params + l->param_offset;
		float	   *g = m->grads + l->param_offset;
		bool		first = (l->plan.grad_first & 1) != 0;
		float	   *dx = NULL;	/* (B, in size): where in[0]'s share goes */
		bool		do_act = l->activation != DL_ACT_LINEAR &&
			!fused_output(spec, i, fused) && !l->plan.relu_by_consumer &&
			!l->plan.fwd_relu_done;
		int64_t		in_size = dl_shape_size(&l->in_shape);
		int64_t		out_size = dl_shape_size(&l->out_shape);
		int64_t		cin = dl_shape_last(&l->in_shape);
		int64_t		cout = dl_shape_last(&l->out_shape);
		int64_t		rows = B * (out_size / cout);
		int64_t		H = l->in_shape.dims[0];
		int64_t		W = l->in_shape.dims[1];

		if (!l->plan.backward)
			continue;
		if (i < spec->n_layers - 1 && dl_model_cancelled(m, "in the backward pass"))
			return;
		layer_inputs(m, l, xs, ins);
		in = ins[0];
		if (input_takes_grad(spec, l, 0))
			dx = first ? m->lw[l->in[0]].grad : w->grad_tmp;

		switch (l->kind)
		{
			case DL_LAYER_DENSE:
				if (do_act)
					dl_seq_activation_backward(l, w, dy, rows, cout);
				dl_dense_backward(dx, g, l->use_bias ? g + cin * l->units : NULL, dy, in, p,
								  B * (in_size / cin), cin, l->units);
				break;
			case DL_LAYER_CONV2D:
			case DL_LAYER_CONV1D:
				{
					DlConvGeom	g2;
					int64_t		nk = (int64_t) l->kernel_size[0] * l->kernel_size[1] * cin * l->filters;
					DlError		e;

					if (do_act)
						dl_seq_activation_backward(l, w, dy, rows, cout);

					conv_geom(&g2, l, B);
					if (!conv_kernel_ok(m, dl_conv2d_dnnl_backward(dx, g, l->use_bias ? g + nk : NULL,
																   dy, in, p, &g2, &m->conv_scratch, &e),
										&e))
						dl_conv2d_backward(dx, g, l->use_bias ? g + nk : NULL, m->conv_work, dy,
										   in, p, &g2);
				}
				break;
			case DL_LAYER_MAXPOOL2D:
				{
					DlPoolGeom	g2;

					pool_geom(&g2, l, B);
					if (dx == NULL)
						break;
					/* the ReLU backward of the layer it reads, fused in */
					if (l->plan.relu_fused)
						dl_maxpool2d_backward_relu(dx, dy, w->argmax, w->out, &g2);
					else
						dl_maxpool2d_backward(dx, dy, w->argmax, &g2);
				}
				break;
			case DL_LAYER_AVGPOOL2D:
				{
					DlPoolGeom	g2;

					pool_geom(&g2, l, B);
					dl_avgpool2d_backward(dx, dy, &g2);
				}
				break;
			case DL_LAYER_GLOBALAVGPOOL2D:
				dl_global_avgpool2d_backward(dx, dy, B, in_size / cin, cin);
				break;
			case DL_LAYER_GLOBALMAXPOOL2D:
				dl_global_maxpool2d_backward(dx, dy, w->argmax, B, in_size / cin, cin);
				break;
			case DL_LAYER_ZEROPADDING2D:
				dl_zeropad2d_backward(dx, dy, B, H, W, cin, l->margins);
				break;
			case DL_LAYER_CROPPING2D:
				dl_crop2d_backward(dx, dy, B, H, W, cin, l->margins);
				break;
			case DL_LAYER_UPSAMPLING2D:
				dl_upsample2d_backward(dx, dy, B, H, W, cin, l->size[0], l->size[1]);
				break;
			case DL_LAYER_FLATTEN:
			case DL_LAYER_RESHAPE:
			case DL_LAYER_ACTIVATION:
			case DL_LAYER_DROPOUT:
				if (l->kind == DL_LAYER_DROPOUT && w->mask != NULL)
				{
					dl_dropout_backward(dx, dy, w->mask, B * in_size);
					break;
				}
				/* in place: dy becomes dx, which is in[0]'s gradient when first */
				if (l->kind == DL_LAYER_ACTIVATION && do_act &&
					dl_activation_needs_input(l->activation))
					dl_activation_backward_x(l->activation, dy, dy, in, rows * cout);
				else if (l->kind == DL_LAYER_ACTIVATION && do_act)
					dl_activation_backward(l->activation, dy, dy, w->out, rows, cout);
				if (input_takes_grad(spec, l, 0) && !first)
					dl_add_into(m->lw[l->in[0]].grad, dy, B * in_size);
				dx = NULL;		/* nothing left to add */
				break;
			case DL_LAYER_BATCHNORM:
				{
					float	   *gamma,
							   *beta,
							   *mm,
							   *mv,
							   *dgamma,
							   *dbeta,
							   *unused1,
							   *unused2;

					bn_params(p, l, cin, &gamma, &beta, &mm, &mv);
					/* a fused ReLU's backward comes first: here, or in the kernel */
					if (l->plan.fwd_relu && !l->trainable)
						dl_activation_backward(DL_ACT_RELU, dy, dy, w->out, rows, cout);
					if (l->trainable)
					{
						bn_params(g, l, cin, &dgamma, &dbeta, &unused1, &unused2);
						dl_batchnorm_backward(dx, dgamma, dbeta, dy,
											  l->plan.fwd_relu ? w->out : NULL, in, w->mean,
											  w->invstd, gamma, B * (in_size / cin), cin);
					}
					else if (dx != NULL)
						bn_frozen_backward(dx, dy, gamma, mv, B * (in_size / cin), cin,
										   l->epsilon);
				}
				break;
			DL_LAYER_CASES_ELEMENTWISE:
			case DL_LAYER_CONCATENATE:
				{
					int64_t		width[DL_MAX_FAN_IN];
					int64_t		outer;

					/* the backward of a ReLU fused into the forward comes first */
					if (l->plan.fwd_relu)
						dl_activation_backward(DL_ACT_RELU, dy, dy, w->out, rows, cout);
					if (l->kind == DL_LAYER_CONCATENATE)
						concat_widths(spec, l, B, width, &outer);
					for (int j = 0; j < l->n_in; j++)
					{
						bool		add = (l->plan.grad_first & ((uint64_t) 1 << j)) == 0;
						float	   *dxj;

						if (!input_takes_grad(spec, l, j))
							continue;
						/* an Add's first input has its gradient in place (plan.c) */
						if (l->kind == DL_LAYER_ADD && j == 0 && !add)
							continue;
						dxj = m->lw[l->in[j]].grad;
						if (l->kind == DL_LAYER_CONCATENATE)
							dl_concat_backward(dxj, add, j, dy, width, l->n_in, outer);
						else
							dl_merge_backward(l->kind, dxj, add, j, dy, ins, l->n_in,
											  B * out_size);
					}
					dx = NULL;	/* every share is in place */
				}
				break;
			default:
				/* the layers of text and sequences (with their activations) */
				dl_seq_layer_backward(m, l, w, dy, dx, in, B);
				break;
		}
		/* a share computed aside joins the gradient the input already has */
		if (dx != NULL && !first)
			dl_add_into(m->lw[l->in[0]].grad, dx, B * in_size);
	}
}

void
dl_model_backward(DlModel *m, const float *x, int64_t B, bool fused_last)
{
	dl_model_backward_io(m, &x, B, &fused_last);
}
