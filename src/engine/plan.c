/*-------------------------------------------------------------------------
 *
 * plan.c
 *	  How the executor runs a graph: who reads what, and which buffers
 *	  can share memory.
 *
 * dl_spec_plan works, once per spec, from the layers' inputs (in[]):
 *	 1. the graph facts: each output's consumers, which layers some model
 *	    output depends on, which the backward pass must run (those and
 *	    the layers after a trainable one), the MaxPooling2D that take over
 *	    the ReLU backward of the layer they read, the BatchNormalization
 *	    and merge layers that apply the ReLU of the Activation reading
 *	    them in their own forward pass (that Activation then is its input);
 *	 2. which layer gives each tensor its first gradient (it writes, every
 *	    later one adds: a tensor read twice gets the sum);
 *	 3. the activation arena, for training and for inference: a layer's
 *	    output lives from the layer to its last reader, or to the end when
 *	    it is a model output or the backward pass needs it (its own
 *	    activation's derivative, a Dense or Conv2D kernel gradient, a
 *	    Multiply, Maximum or Minimum; an Embedding's ids, a Conv1D's or
 *	    a depthwise convolution's input, a LayerNormalization's, a
 *	    parametric ReLU's, a swish or gelu Activation's; a recurrent
 *	    layer keeps its own copy).  Layers whose output is their input
 *	    (Flatten, Reshape, ...) extend their input's life instead of
 *	    taking room;
 *	 4. the gradient arena: the backward pass visits the layers in reverse;
 *	    a tensor's gradient lives from its first contribution to its
 *	    producer's backward, shared along in-place layers (and an Add's
 *	    first input, whose gradient is the Add's); an input gradient that
 *	    is added is first computed in a block of its own.
 * Buffers are placed first fit, lowest offset first, in floats per
 * sample rounded up to PLAN_ALIGN, so a batch of B samples uses the same
 * layout scaled by B.  A chain in inference needs two buffers in turn; in
 * training every saved output keeps its own, and the gradients need
 * about two (a ResNet block one more, for the shortcut's gradient).
 *
 * The work is O(layers x live buffers): finalize bounds the layers by
 * DL_MAX_LAYERS and their inputs by DL_MAX_FAN_IN, and the scratch
 * arrays live on the stack.
 *
 * IDENTIFICATION
 *	  src/engine/plan.c
 *
 *-------------------------------------------------------------------------
 */
#include <limits.h>
#include <string.h>

#include "plan.h"

/* Buffers start on 64-byte boundaries: 16 floats per sample. */
#define PLAN_ALIGN 16

/* A block's end when it lives to the end of the pass. */
#define PLAN_FOREVER INT_MAX

/* A live block of an arena: [off, off + size) until time end. */
typedef struct PlanBlock
{
	size_t		off;
	size_t		size;
	int			end;
} PlanBlock;

/* An arena being laid out: its live blocks sorted by offset. */
typedef struct PlanArena
{
	PlanBlock	live[DL_MAX_LAYERS + 1];
	int			n;
	size_t		top;			/* the arena's size so far */
} PlanArena;

bool
dl_plan_forward_aliases(const DlLayer *l, bool training)
{
	switch (l->kind)
	{
		case DL_LAYER_FLATTEN:
		case DL_LAYER_RESHAPE:
			return true;
		case DL_LAYER_ACTIVATION:
			return l->activation == DL_ACT_LINEAR || l->plan.fwd_relu_done;
		case DL_LAYER_DROPOUT:
			return !(training && l->rate > 0.0);
		default:
			return false;
	}
}

bool
dl_plan_grad_in_place(const DlLayer *l)
{
	return l->kind == DL_LAYER_FLATTEN || l->kind == DL_LAYER_ACTIVATION ||
		l->kind == DL_LAYER_ADD || (l->kind == DL_LAYER_DROPOUT && !(l->rate > 0.0)) ||
		l->kind == DL_LAYER_RESHAPE;
}

/*
 * Does l's backward read its own output (its activation's derivative)?
 * Not for swish and gelu, whose derivatives read the pre-activation: a
 * Dense's, Conv's ... kept aside (model.c), an Activation's input.
 */
static bool
backward_reads_output(const DlLayer *l)
{
	switch (l->kind)
	{
		case DL_LAYER_DENSE:
		case DL_LAYER_CONV2D:
		case DL_LAYER_ACTIVATION:
		case DL_LAYER_CONV1D:
		case DL_LAYER_DEPTHWISECONV2D:
		case DL_LAYER_SEPARABLECONV2D:
			return l->activation != DL_ACT_LINEAR && !dl_activation_needs_input(l->activation);
		case DL_LAYER_MAXPOOL2D:
			return true;		/* dl_maxpool2d_backward_relu */
		default:
			return false;
	}
}

/*
 * Does l's backward read its inputs' values?  (A recurrent layer keeps
 * its own copy of its input, beside its states.)
 */
static bool
backward_reads_inputs(const DlLayer *l)
{
	switch (l->kind)
	{
		case DL_LAYER_DENSE:
		case DL_LAYER_CONV2D:
		case DL_LAYER_MULTIPLY:
		case DL_LAYER_MAXIMUM:
		case DL_LAYER_MINIMUM:
		case DL_LAYER_EMBEDDING:	/* the ids */
		case DL_LAYER_CONV1D:
		case DL_LAYER_DEPTHWISECONV2D:
		case DL_LAYER_SEPARABLECONV2D:
		case DL_LAYER_LAYERNORM:
		case DL_LAYER_RELU:
		case DL_LAYER_PRELU:
			return true;
		case DL_LAYER_ACTIVATION:
			return dl_activation_needs_input(l->activation);
		case DL_LAYER_BATCHNORM:
			return l->trainable;	/* xhat is recomputed from the input */
		default:
			return false;
	}
}

/* Floats per sample of l's output, rounded up to PLAN_ALIGN. */
static size_t
aligned_size(const DlShape *s)
{
	size_t		n = (size_t) dl_shape_size(s);

	return (n + PLAN_ALIGN - 1) / PLAN_ALIGN * PLAN_ALIGN;
}

static void
arena_init(PlanArena *a)
{
	a->n = 0;
	a->top = 0;
}

/* Drop the blocks whose life ended before time now. */
static void
arena_expire(PlanArena *a, int now)
{
	int			k = 0;

	for (int i = 0; i < a->n; i++)
		if (a->live[i].end >= now)
			a->live[k++] = a->live[i];
	a->n = k;
}

/* Place a block of size floats living until end, first fit; its offset. */
static size_t
arena_take(PlanArena *a, size_t size, int end)
{
	size_t		off = 0;
	int			k;

	for (k = 0; k < a->n; k++)
	{
		const PlanBlock *b = &a->live[k];

		if (b->off >= off + size)
			break;
		if (b->off + b->size > off)
			off = b->off + b->size;
	}
	memmove(&a->live[k + 1], &a->live[k], (size_t) (a->n - k) * sizeof(PlanBlock));
	a->live[k].off = off;
	a->live[k].size = size;
	a->live[k].end = end;
	a->n++;
	if (off + size > a->top)
		a->top = off + size;
	return off;
}

/* Steps 1 and 2: consumers, outputs, the backward set, first gradients. */
static void
plan_graph(DlModelSpec *spec)
{
	int			n = spec->n_layers;
	bool		depends[DL_MAX_LAYERS]; /* on a trainable layer */
	bool		has_grad[DL_MAX_LAYERS];	/* a later layer already gave one */

	for (int i = 0; i < n; i++)
	{
		DlLayer    *l = &spec->layers[i];

		memset(&l->plan, 0, sizeof(l->plan));
		l->plan.out_train = l->plan.out_infer = DL_PLAN_NONE;
		l->plan.grad = l->plan.grad_tmp = DL_PLAN_NONE;
		depends[i] = l->n_trainable > 0;
		has_grad[i] = false;
		for (int j = 0; j < l->n_in; j++)
		{
			if (l->in[j] < 0)
				continue;
			spec->layers[l->in[j]].plan.n_consumers++;
			depends[i] = depends[i] || depends[l->in[j]];
		}
	}
	for (int k = 0; k < spec->n_outputs; k++)
		spec->layers[spec->outputs[k]].plan.is_output = true;

	/* in reverse: what an output depends on, and the first gradients */
	for (int i = n - 1; i >= 0; i--)
	{
		DlLayer    *l = &spec->layers[i];

		l->plan.reaches_output = l->plan.reaches_output || l->plan.is_output;
		l->plan.backward = l->plan.reaches_output && depends[i];
		for (int j = 0; j < l->n_in; j++)
		{
			DlLayer    *src;

			if (l->in[j] < 0)
				continue;
			src = &spec->layers[l->in[j]];
			src->plan.reaches_output = src->plan.reaches_output || l->plan.reaches_output;
			if (!l->plan.backward || !depends[l->in[j]] || has_grad[l->in[j]])
				continue;
			has_grad[l->in[j]] = true;
			if (!src->plan.is_output)	/* an output's first is the loss's */
				l->plan.grad_first |= (uint64_t) 1 << j;
		}
	}

	/*
	 * a ReLU Activation that is the one reader of a BatchNormalization or
	 * an element-wise merge (not an output) is applied in that layer's
	 * forward pass
	 */
	for (int i = 0; i < n; i++)
	{
		DlLayer    *l = &spec->layers[i];
		DlLayer    *p;

		if (l->kind != DL_LAYER_ACTIVATION || l->activation != DL_ACT_RELU || l->in[0] < 0)
			continue;
		p = &spec->layers[l->in[0]];
		if ((p->kind == DL_LAYER_BATCHNORM ||
			 (dl_layer_is_merge(p->kind) && p->kind != DL_LAYER_CONCATENATE)) &&
			p->plan.n_consumers == 1 && !p->plan.is_output)
		{
			p->plan.fwd_relu = true;
			l->plan.fwd_relu_done = true;
		}
	}

	/* a MaxPooling2D fuses the ReLU backward of the one layer it reads */
	for (int i = 0; i < n; i++)
	{
		DlLayer    *l = &spec->layers[i];
		DlLayer    *p;

		if (l->kind != DL_LAYER_MAXPOOL2D || !l->plan.backward || l->in[0] < 0)
			continue;
		p = &spec->layers[l->in[0]];
		if (p->plan.backward && p->activation == DL_ACT_RELU &&
			(p->kind == DL_LAYER_CONV2D || p->kind == DL_LAYER_DENSE ||
			 p->kind == DL_LAYER_ACTIVATION) &&
			p->plan.n_consumers == 1 && !p->plan.is_output)
		{
			l->plan.relu_fused = true;
			p->plan.relu_by_consumer = true;
		}
	}
}

/* Step 3: the activation arena of one mode; returns its floats per sample. */
static size_t
plan_forward(DlModelSpec *spec, bool training, PlanArena *a)
{
	int			n = spec->n_layers;
	int			end[DL_MAX_LAYERS]; /* of the tensor, then of its storage */
	int			root[DL_MAX_LAYERS];	/* the layer owning the storage, -1: a
										 * model input */

	/* when each output is last needed */
	for (int i = 0; i < n; i++)
	{
		const DlLayer *l = &spec->layers[i];
		bool		saved = training && l->plan.backward && backward_reads_inputs(l);

		end[i] = i;
		if (l->plan.is_output || (training && l->plan.backward && backward_reads_output(l)))
			end[i] = PLAN_FOREVER;
		for (int j = 0; j < l->n_in; j++)
			if (l->in[j] >= 0 && end[l->in[j]] != PLAN_FOREVER)
				end[l->in[j]] = saved ? PLAN_FOREVER : i;
	}
	/* aliases hand their life to the storage they read */
	for (int i = 0; i < n; i++)
	{
		const DlLayer *l = &spec->layers[i];

		root[i] = i;
		if (!dl_plan_forward_aliases(l, training))
			continue;
		root[i] = l->in[0] >= 0 ? root[l->in[0]] : -1;
		if (root[i] >= 0 && end[i] > end[root[i]])
			end[root[i]] = end[i];
	}
	arena_init(a);
	for (int i = 0; i < n; i++)
	{
		DlLayer    *l = &spec->layers[i];
		size_t		off = DL_PLAN_NONE;

		arena_expire(a, i);
		if (root[i] == i)
			off = arena_take(a, aligned_size(&l->out_shape), end[i]);
		if (training)
			l->plan.out_train = off;
		else
			l->plan.out_infer = off;
	}
	return a->top;
}

/*
 * Does layer l (backward) compute an added gradient in a block of its
 * own?  Kernels overwrite dx; merges and in-place layers add themselves.
 * (An Add is both: in place for its first input, a merge for the rest.)
 */
static bool
needs_grad_tmp(const DlModelSpec *spec, const DlLayer *l)
{
	return !dl_layer_is_merge(l->kind) && !dl_plan_grad_in_place(l) && l->in[0] >= 0 &&
		spec->layers[l->in[0]].plan.backward && (l->plan.grad_first & 1) == 0;
}

/* Step 4: the gradient arena; returns its floats per sample. */
static size_t
plan_backward(DlModelSpec *spec, PlanArena *a)
{
	int			n = spec->n_layers;
	int			end[DL_MAX_LAYERS]; /* of the storage, in backward time */
	int			root[DL_MAX_LAYERS];	/* the tensor owning the storage */

	/* backward time of layer i: n - 1 - i; a gradient dies with its producer */
	for (int i = 0; i < n; i++)
	{
		root[i] = i;
		end[i] = n - 1 - i;
	}
	/*
	 * An in-place layer giving its input the first gradient hands it its
	 * buffer.  In reverse order a layer's root is final when it is seen.
	 */
	for (int i = n - 1; i >= 0; i--)
	{
		const DlLayer *l = &spec->layers[i];

		if (l->plan.backward && dl_plan_grad_in_place(l) && (l->plan.grad_first & 1) != 0)
		{
			root[l->in[0]] = root[i];
			if (end[root[i]] < n - 1 - l->in[0])
				end[root[i]] = n - 1 - l->in[0];
		}
	}

	arena_init(a);
	/* time -1: the outputs' gradients, which the loss writes */
	for (int k = 0; k < spec->n_outputs; k++)
	{
		DlLayer    *o = &spec->layers[spec->outputs[k]];

		if (o->plan.backward)
			o->plan.grad = arena_take(a, aligned_size(&o->out_shape), end[spec->outputs[k]]);
	}
	for (int i = n - 1; i >= 0; i--)
	{
		DlLayer    *l = &spec->layers[i];
		int			now = n - 1 - i;

		arena_expire(a, now);
		if (!l->plan.backward)
			continue;
		for (int j = 0; j < l->n_in; j++)
		{
			DlLayer    *src;

			if ((l->plan.grad_first & ((uint64_t) 1 << j)) == 0)
				continue;
			src = &spec->layers[l->in[j]];
			if (root[l->in[j]] == l->in[j])
				src->plan.grad = arena_take(a, aligned_size(&src->out_shape), end[l->in[j]]);
			else
				src->plan.grad = l->plan.grad;	/* in place */
		}
		if (needs_grad_tmp(spec, l))
			l->plan.grad_tmp = arena_take(a, aligned_size(&l->in_shape), now);
	}
	return a->top;
}

void
dl_spec_plan(DlModelSpec *spec)
{
	PlanArena	arena;

	plan_graph(spec);
	spec->ws_infer = plan_forward(spec, false, &arena);
	spec->ws_train = plan_forward(spec, true, &arena);
	spec->ws_grad = plan_backward(spec, &arena);
}
