/*-------------------------------------------------------------------------
 *
 * onnx_export.c
 *	  A finalized DlModelSpec and its parameter block as an ONNX
 *	  ModelProto (protobuf-c, onnx.proto).
 *
 * Each layer becomes a few ONNX nodes whose last output is named after
 * the layer; graph inputs are named after the Keras InputLayers and
 * shaped (N, per-sample dims...) with N symbolic.  The engine's tensors
 * are channels last, ONNX's spatial operators channels first: Conv,
 * pooling and BatchNormalization over rank > 1 are wrapped in Transposes,
 * so the exported model takes and gives exactly what madlib_dl's predict
 * does.  Weights move from Keras order to ONNX's: Dense kernels stay
 * (I, O) under Gemm/MatMul, convolution kernels go (KH, KW, C, O) ->
 * (O, C, KH, KW), recurrent gates i f c o -> i o f c (LSTM), z r h
 * unchanged (GRU).
 *
 * IDENTIFICATION
 *	  src/engine/onnx_export.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "madlib_dl/dl_onnx.h"
#include "onnx_impl.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "onnx_export.c writes raw_data as host floats: little-endian hosts only"
#endif

typedef struct Ex
{
	DlOnnxArena arena;
	int			opset;
	Onnx__NodeProto **nodes;
	size_t		n_nodes, cap_nodes;
	Onnx__TensorProto **inits;
	size_t		n_inits, cap_inits;
	DlError    *err;
	bool		oom;
} Ex;

#define EX_CHECK(ex, p) do { if ((p) == NULL) { (ex)->oom = true; return NULL; } } while (0)

static char *
ex_fmt(Ex *ex, const char *a, const char *b)
{
	char		buf[DL_NAME_MAX * 2 + 16];

	snprintf(buf, sizeof(buf), "%s/%s", a, b);
	return dl_onnx_arena_strdup(&ex->arena, buf);
}

static bool
ex_grow(Ex *ex, void ***arr, size_t *n, size_t *cap)
{
	if (*n < *cap)
		return true;
	{
		size_t		ncap = *cap ? *cap * 2 : 64;
		void	  **na = dl_onnx_arena_alloc(&ex->arena, ncap * sizeof(void *));

		if (na == NULL)
		{
			ex->oom = true;
			return false;
		}
		if (*n)
			memcpy(na, *arr, *n * sizeof(void *));
		*arr = na;
		*cap = ncap;
	}
	return true;
}

/* A node op(ins) -> outs; returns it (attributes added after). */
static Onnx__NodeProto *
ex_node(Ex *ex, const char *op, const char *name, int n_in, const char *const *ins,
		int n_out, const char *const *outs)
{
	Onnx__NodeProto *n = dl_onnx_arena_alloc(&ex->arena, sizeof(*n));

	EX_CHECK(ex, n);
	onnx__node_proto__init(n);
	n->op_type = dl_onnx_arena_strdup(&ex->arena, op);
	n->name = dl_onnx_arena_strdup(&ex->arena, name);
	n->input = dl_onnx_arena_alloc(&ex->arena, (n_in + 1) * sizeof(char *));
	n->output = dl_onnx_arena_alloc(&ex->arena, (n_out + 1) * sizeof(char *));
	n->attribute = dl_onnx_arena_alloc(&ex->arena, 16 * sizeof(Onnx__AttributeProto *));
	EX_CHECK(ex, n->op_type);
	EX_CHECK(ex, n->name);
	EX_CHECK(ex, n->input);
	EX_CHECK(ex, n->output);
	EX_CHECK(ex, n->attribute);
	for (int i = 0; i < n_in; i++)
	{
		n->input[i] = dl_onnx_arena_strdup(&ex->arena, ins[i]);
		EX_CHECK(ex, n->input[i]);
	}
	for (int i = 0; i < n_out; i++)
	{
		n->output[i] = dl_onnx_arena_strdup(&ex->arena, outs[i]);
		EX_CHECK(ex, n->output[i]);
	}
	n->n_input = n_in;
	n->n_output = n_out;
	if (!ex_grow(ex, (void ***) &ex->nodes, &ex->n_nodes, &ex->cap_nodes))
		return NULL;
	ex->nodes[ex->n_nodes++] = n;
	return n;
}

/* One-input one-output node. */
static Onnx__NodeProto *
ex_node1(Ex *ex, const char *op, const char *name, const char *in, const char *out)
{
	return ex_node(ex, op, name, 1, &in, 1, &out);
}

static Onnx__AttributeProto *
ex_attr(Ex *ex, Onnx__NodeProto *n, const char *name, Onnx__AttributeProto__AttributeType type)
{
	Onnx__AttributeProto *a;

	if (n == NULL || n->n_attribute >= 16)
	{
		ex->oom = true;
		return NULL;
	}
	a = dl_onnx_arena_alloc(&ex->arena, sizeof(*a));
	EX_CHECK(ex, a);
	onnx__attribute_proto__init(a);
	a->name = dl_onnx_arena_strdup(&ex->arena, name);
	EX_CHECK(ex, a->name);
	a->has_type = true;
	a->type = type;
	n->attribute[n->n_attribute++] = a;
	return a;
}

static void
ex_attr_int(Ex *ex, Onnx__NodeProto *n, const char *name, int64_t v)
{
	Onnx__AttributeProto *a = ex_attr(ex, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);

	if (a)
	{
		a->has_i = true;
		a->i = v;
	}
}

static void
ex_attr_float(Ex *ex, Onnx__NodeProto *n, const char *name, double v)
{
	Onnx__AttributeProto *a = ex_attr(ex, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);

	if (a)
	{
		a->has_f = true;
		a->f = (float) v;
	}
}

static void
ex_attr_str(Ex *ex, Onnx__NodeProto *n, const char *name, const char *v)
{
	Onnx__AttributeProto *a = ex_attr(ex, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);

	if (a)
	{
		size_t		len = strlen(v);

		a->has_s = true;
		a->s.data = dl_onnx_arena_alloc(&ex->arena, len + 1);
		if (a->s.data == NULL)
		{
			ex->oom = true;
			return;
		}
		memcpy(a->s.data, v, len);
		a->s.len = len;
	}
}

static void
ex_attr_ints(Ex *ex, Onnx__NodeProto *n, const char *name, int k, const int64_t *v)
{
	Onnx__AttributeProto *a = ex_attr(ex, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);

	if (a)
	{
		a->ints = dl_onnx_arena_alloc(&ex->arena, (k + 1) * sizeof(int64_t));
		if (a->ints == NULL)
		{
			ex->oom = true;
			return;
		}
		memcpy(a->ints, v, k * sizeof(int64_t));
		a->n_ints = k;
	}
}

static void
ex_attr_strs(Ex *ex, Onnx__NodeProto *n, const char *name, int k, const char *const *v)
{
	Onnx__AttributeProto *a = ex_attr(ex, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);

	if (a)
	{
		a->strings = dl_onnx_arena_alloc(&ex->arena, (k + 1) * sizeof(ProtobufCBinaryData));
		if (a->strings == NULL)
		{
			ex->oom = true;
			return;
		}
		for (int i = 0; i < k; i++)
		{
			size_t		len = strlen(v[i]);

			a->strings[i].data = dl_onnx_arena_alloc(&ex->arena, len + 1);
			if (a->strings[i].data == NULL)
			{
				ex->oom = true;
				return;
			}
			memcpy(a->strings[i].data, v[i], len);
			a->strings[i].len = len;
		}
		a->n_strings = k;
	}
}

/* A float initializer name of dims (rank) holding data (copied). */
static const char *
ex_init_float(Ex *ex, const char *name, int rank, const int64_t *dims, const float *data)
{
	Onnx__TensorProto *t = dl_onnx_arena_alloc(&ex->arena, sizeof(*t));
	size_t		n = 1;

	EX_CHECK(ex, t);
	onnx__tensor_proto__init(t);
	t->name = dl_onnx_arena_strdup(&ex->arena, name);
	EX_CHECK(ex, t->name);
	t->dims = dl_onnx_arena_alloc(&ex->arena, (rank + 1) * sizeof(int64_t));
	EX_CHECK(ex, t->dims);
	for (int i = 0; i < rank; i++)
	{
		t->dims[i] = dims[i];
		n *= (size_t) dims[i];
	}
	t->n_dims = rank;
	t->has_data_type = true;
	t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	t->has_raw_data = true;
	t->raw_data.data = dl_onnx_arena_alloc(&ex->arena, n * sizeof(float) + 1);
	EX_CHECK(ex, t->raw_data.data);
	if (data)
		memcpy(t->raw_data.data, data, n * sizeof(float));
	t->raw_data.len = n * sizeof(float);
	if (!ex_grow(ex, (void ***) &ex->inits, &ex->n_inits, &ex->cap_inits))
		return NULL;
	ex->inits[ex->n_inits++] = t;
	return t->name;
}

/* A float initializer, uninitialized data to fill: returns the floats. */
static float *
ex_init_float_buf(Ex *ex, const char *name, int rank, const int64_t *dims)
{
	const char *nm = ex_init_float(ex, name, rank, dims, NULL);

	if (nm == NULL)
		return NULL;
	return (float *) ex->inits[ex->n_inits - 1]->raw_data.data;
}

static const char *
ex_init_int64(Ex *ex, const char *name, int k, const int64_t *v)
{
	Onnx__TensorProto *t = dl_onnx_arena_alloc(&ex->arena, sizeof(*t));

	EX_CHECK(ex, t);
	onnx__tensor_proto__init(t);
	t->name = dl_onnx_arena_strdup(&ex->arena, name);
	EX_CHECK(ex, t->name);
	t->dims = dl_onnx_arena_alloc(&ex->arena, sizeof(int64_t));
	EX_CHECK(ex, t->dims);
	t->dims[0] = k;
	t->n_dims = 1;
	t->has_data_type = true;
	t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
	t->int64_data = dl_onnx_arena_alloc(&ex->arena, (k + 1) * sizeof(int64_t));
	EX_CHECK(ex, t->int64_data);
	memcpy(t->int64_data, v, k * sizeof(int64_t));
	t->n_int64_data = k;
	if (!ex_grow(ex, (void ***) &ex->inits, &ex->n_inits, &ex->cap_inits))
		return NULL;
	ex->inits[ex->n_inits++] = t;
	return t->name;
}

/* Transpose in -> out by perm (k axes, batch included). */
static const char *
ex_transpose(Ex *ex, const char *base, const char *tag, const char *in, int k, const int64_t *perm)
{
	char	   *out = ex_fmt(ex, base, tag);
	Onnx__NodeProto *n;

	EX_CHECK(ex, out);
	n = ex_node1(ex, "Transpose", out, in, out);
	ex_attr_ints(ex, n, "perm", k, perm);
	return out;
}

/* channels last (B, d1.., C) <-> channels first (B, C, d1..), rank r with batch */
static const char *
ex_to_cf(Ex *ex, const char *base, const char *in, int r)
{
	int64_t		perm[DL_MAX_RANK + 1];

	perm[0] = 0;
	perm[1] = r - 1;
	for (int i = 2; i < r; i++)
		perm[i] = i - 1;
	return ex_transpose(ex, base, "to_nchw", in, r, perm);
}

static const char *
ex_to_cl(Ex *ex, const char *base, const char *in, const char *out, int r)
{
	int64_t		perm[DL_MAX_RANK + 1];
	Onnx__NodeProto *n;

	perm[0] = 0;
	for (int i = 1; i < r - 1; i++)
		perm[i] = i + 1;
	perm[r - 1] = 1;
	n = ex_node1(ex, "Transpose", out, in, out);
	ex_attr_ints(ex, n, "perm", r, perm);
	return out;
}

/* Reduce op over axes: attribute or (ReduceSum, opset >= 18 others) input. */
static const char *
ex_reduce(Ex *ex, const char *op, const char *base, const char *in, const char *out,
		  int k, const int64_t *axes, int keepdims)
{
	Onnx__NodeProto *n;
	bool		as_input = strcmp(op, "ReduceSum") == 0 || ex->opset >= 18;

	if (as_input)
	{
		const char *ax = ex_init_int64(ex, ex_fmt(ex, base, "axes"), k, axes);
		const char *ins[2] = {in, ax};

		if (ax == NULL)
			return NULL;
		n = ex_node(ex, op, out, 2, ins, 1, &out);
	}
	else
	{
		n = ex_node1(ex, op, out, in, out);
		ex_attr_ints(ex, n, "axes", k, axes);
	}
	ex_attr_int(ex, n, "keepdims", keepdims);
	return out;
}

/* Squeeze / Unsqueeze with axes as an input (opset 13+). */
static const char *
ex_squeeze(Ex *ex, const char *op, const char *base, const char *tag, const char *in, int k, const int64_t *axes)
{
	char	   *out = ex_fmt(ex, base, tag);
	const char *ax = ex_init_int64(ex, ex_fmt(ex, base, tag[0] ? "sq_axes" : "axes"), k, axes);
	const char *ins[2] = {in, ax};

	if (out == NULL || ax == NULL)
		return NULL;
	ex_node(ex, op, out, 2, ins, 1, (const char *const *) &out);
	return out;
}

/*
 * The activation act over in, written to out (or a fresh name when out is
 * NULL).  Returns the tensor name; linear gives an Identity.
 */
static const char *
ex_activation(Ex *ex, const char *base, DlActivation act, const char *in, const char *out)
{
	Onnx__NodeProto *n;
	char	   *o = out ? (char *) out : ex_fmt(ex, base, "act");

	EX_CHECK(ex, o);
	switch (act)
	{
		case DL_ACT_LINEAR:
			ex_node1(ex, "Identity", o, in, o);
			return o;
		case DL_ACT_RELU:
			ex_node1(ex, "Relu", o, in, o);
			return o;
		case DL_ACT_SIGMOID:
			ex_node1(ex, "Sigmoid", o, in, o);
			return o;
		case DL_ACT_TANH:
			ex_node1(ex, "Tanh", o, in, o);
			return o;
		case DL_ACT_SOFTMAX:
			n = ex_node1(ex, "Softmax", o, in, o);
			ex_attr_int(ex, n, "axis", -1);
			return o;
		case DL_ACT_ELU:
			n = ex_node1(ex, "Elu", o, in, o);
			ex_attr_float(ex, n, "alpha", 1.0);
			return o;
		case DL_ACT_SOFTPLUS:
			ex_node1(ex, "Softplus", o, in, o);
			return o;
		case DL_ACT_SELU:
			ex_node1(ex, "Selu", o, in, o);
			return o;
		case DL_ACT_SOFTSIGN:
			ex_node1(ex, "Softsign", o, in, o);
			return o;
		case DL_ACT_EXPONENTIAL:
			ex_node1(ex, "Exp", o, in, o);
			return o;
		case DL_ACT_HARD_SIGMOID:
		case DL_ACT_HARD_SIGMOID_K3:
			n = ex_node1(ex, "HardSigmoid", o, in, o);
			ex_attr_float(ex, n, "alpha", act == DL_ACT_HARD_SIGMOID ? 0.2 : 1.0 / 6.0);
			ex_attr_float(ex, n, "beta", 0.5);
			return o;
		case DL_ACT_SWISH:
			{
				char	   *s = ex_fmt(ex, base, "sigmoid");
				const char *ins[2] = {in, s};

				EX_CHECK(ex, s);
				ex_node1(ex, "Sigmoid", s, in, s);
				ex_node(ex, "Mul", o, 2, ins, 1, (const char *const *) &o);
				return o;
			}
		case DL_ACT_GELU:
			{
				/* x * 0.5 * (1 + erf(x / sqrt 2)) */
				char	   *d = ex_fmt(ex, base, "gelu_div");
				char	   *e = ex_fmt(ex, base, "gelu_erf");
				char	   *p = ex_fmt(ex, base, "gelu_add");
				char	   *m = ex_fmt(ex, base, "gelu_mul");
				int64_t		one = 1;
				float		v_sqrt2 = (float) sqrt(2.0), v_one = 1.0f, v_half = 0.5f;
				const char *c_sqrt2 = ex_init_float(ex, ex_fmt(ex, base, "sqrt2"), 1, &one, &v_sqrt2);
				const char *c_one = ex_init_float(ex, ex_fmt(ex, base, "one"), 1, &one, &v_one);
				const char *c_half = ex_init_float(ex, ex_fmt(ex, base, "half"), 1, &one, &v_half);
				const char *i1[2] = {in, c_sqrt2};
				const char *i2[2] = {e, c_one};
				const char *i3[2] = {in, p};
				const char *i4[2] = {m, c_half};

				if (!d || !e || !p || !m || !c_sqrt2 || !c_one || !c_half)
				{
					ex->oom = true;
					return NULL;
				}
				ex_node(ex, "Div", d, 2, i1, 1, (const char *const *) &d);
				ex_node1(ex, "Erf", e, d, e);
				ex_node(ex, "Add", p, 2, i2, 1, (const char *const *) &p);
				ex_node(ex, "Mul", m, 2, i3, 1, (const char *const *) &m);
				ex_node(ex, "Mul", o, 2, i4, 1, (const char *const *) &o);
				return o;
			}
	}
	dl_error_set(ex->err, DL_ERR_UNSUPPORTED, "layer \"%s\": activation %s has no ONNX export",
				 base, dl_activation_name(act));
	return NULL;
}

/* the graph input name of model input k: its InputLayer's, else input_k */
static const char *
input_name(const DlModelSpec *spec, int k)
{
	static const char *const fallback[DL_MAX_IO] = {
		"input", "input_1", "input_2", "input_3", "input_4", "input_5", "input_6", "input_7",
		"input_8", "input_9", "input_10", "input_11", "input_12", "input_13", "input_14", "input_15"
	};

	return spec->input_names[k][0] ? spec->input_names[k] : fallback[k];
}

static const char *
tensor_of(const DlModelSpec *spec, int ref)
{
	if (ref >= 0)
		return spec->layers[ref].name;
	return input_name(spec, -1 - ref);
}

/* Keras same/valid padding as ONNX pads for one spatial axis. */
static void
same_pads(DlPadding padding, int64_t in, int k, int s, int d, int64_t *lo, int64_t *hi)
{
	int64_t		ek = (int64_t) (k - 1) * d + 1;

	*lo = *hi = 0;
	if (padding == DL_PADDING_SAME)
	{
		int64_t		out = (in + s - 1) / s;
		int64_t		total = (out - 1) * s + ek - in;

		if (total < 0)
			total = 0;
		*lo = total / 2;
		*hi = total - *lo;
	}
	else if (padding == DL_PADDING_CAUSAL)
		*lo = ek - 1;
}

/* Conv over a channels-last input of nsp spatial axes (1 or 2). */
static const char *
ex_conv(Ex *ex, const DlLayer *l, const float *w, const char *in, int nsp)
{
	int			r = nsp + 2;
	int64_t		C = l->in_shape.dims[nsp];
	int64_t		OC = l->filters;
	int			KH = nsp == 2 ? l->kernel_size[0] : 1;
	int			KW = l->kernel_size[1];
	int64_t		dims[4];
	float	   *W;
	const char *x, *wn, *bn = NULL;
	char	   *y = ex_fmt(ex, l->name, "conv");
	int64_t		pads[4], strides[2], dil[2], ks[2];
	Onnx__NodeProto *n;
	bool		depthwise = l->kind == DL_LAYER_DEPTHWISECONV2D;
	int64_t		M = depthwise ? l->depth_multiplier : 1;
	size_t		kernel_n;

	EX_CHECK(ex, y);
	x = ex_to_cf(ex, l->name, in, r);
	EX_CHECK(ex, x);
	if (depthwise)
		OC = C * M;
	dims[0] = OC;
	dims[1] = depthwise ? 1 : C;
	if (nsp == 2)
	{
		dims[2] = KH;
		dims[3] = KW;
	}
	else
		dims[2] = KW;
	W = ex_init_float_buf(ex, ex_fmt(ex, l->name, "kernel"), r, dims);
	EX_CHECK(ex, W);
	wn = ex->inits[ex->n_inits - 1]->name;
	/* Keras (KH, KW, C, OC) or depthwise (KH, KW, C, M) */
	for (int kh = 0; kh < KH; kh++)
		for (int kw = 0; kw < KW; kw++)
			for (int64_t c = 0; c < C; c++)
				for (int64_t o = 0; o < (depthwise ? M : OC); o++)
				{
					float		v = w[(((size_t) kh * KW + kw) * C + c) * (depthwise ? M : OC) + o];

					if (depthwise)
						W[(((size_t) (c * M + o)) * KH + kh) * KW + kw] = v;
					else
						W[(((size_t) o * C + c) * KH + kh) * KW + kw] = v;
				}
	kernel_n = (size_t) KH * KW * C * (depthwise ? M : OC);
	if (l->use_bias)
	{
		bn = ex_init_float(ex, ex_fmt(ex, l->name, "bias"), 1, &OC, w + kernel_n);
		EX_CHECK(ex, bn);
	}
	{
		const char *ins[3] = {x, wn, bn};

		n = ex_node(ex, "Conv", y, l->use_bias ? 3 : 2, ins, 1, (const char *const *) &y);
	}
	if (nsp == 2)
	{
		same_pads(l->padding, l->in_shape.dims[0], KH, l->strides[0], l->dilation[0], &pads[0], &pads[2]);
		same_pads(l->padding, l->in_shape.dims[1], KW, l->strides[1], l->dilation[1], &pads[1], &pads[3]);
		strides[0] = l->strides[0];
		strides[1] = l->strides[1];
		dil[0] = l->dilation[0];
		dil[1] = l->dilation[1];
		ks[0] = KH;
		ks[1] = KW;
	}
	else
	{
		/* a 1-d layer keeps its geometry at index 1 (a height of 1) */
		same_pads(l->padding, l->in_shape.dims[0], KW, l->strides[1], l->dilation[1], &pads[0], &pads[1]);
		strides[0] = l->strides[1];
		dil[0] = l->dilation[1];
		ks[0] = KW;
	}
	ex_attr_ints(ex, n, "kernel_shape", nsp, ks);
	ex_attr_ints(ex, n, "strides", nsp, strides);
	ex_attr_ints(ex, n, "dilations", nsp, dil);
	ex_attr_ints(ex, n, "pads", 2 * nsp, pads);
	if (depthwise)
		ex_attr_int(ex, n, "group", C);
	return y;
}

/* A recurrent layer (LSTM, GRU, SimpleRNN, maybe Bidirectional). */
static const char *
ex_recurrent(Ex *ex, const DlLayer *l, const float *w, const char *in, const char *out)
{
	int			G = dl_rnn_gates(l->kind);
	int64_t		I = l->in_shape.dims[l->in_shape.rank - 1];
	int64_t		U = l->units;
	int64_t		T = l->in_shape.dims[0];
	int			D = l->bidir != DL_BIDIR_NONE ? 2 : 1;
	int64_t		dW[3] = {D, G * U, I}, dR[3] = {D, G * U, U}, dB[2] = {D, 2 * G * U};
	float	   *W = ex_init_float_buf(ex, ex_fmt(ex, l->name, "W"), 3, dW);
	const char *wn = W ? ex->inits[ex->n_inits - 1]->name : NULL;
	float	   *R = ex_init_float_buf(ex, ex_fmt(ex, l->name, "R"), 3, dR);
	const char *rn = R ? ex->inits[ex->n_inits - 1]->name : NULL;
	float	   *B = NULL;
	const char *bnm = "";
	/* ONNX gate block for Keras gate g */
	static const int lstm_map[4] = {0, 2, 3, 1};	/* i f c o -> i o f c */
	size_t		per_dir;
	const char *x, *y, *yh;
	Onnx__NodeProto *n;
	const char *act_names[6];
	int			n_act = 0;
	float		act_alpha[6], act_beta[6];
	int			n_ab = 0;

	if (!W || !R)
		return NULL;
	if (l->use_bias)
	{
		B = ex_init_float_buf(ex, ex_fmt(ex, l->name, "B"), 2, dB);
		EX_CHECK(ex, B);
		bnm = ex->inits[ex->n_inits - 1]->name;
	}
	per_dir = (size_t) I * G * U + (size_t) U * G * U +
		(l->use_bias ? (size_t) G * U * ((l->kind == DL_LAYER_GRU && l->reset_after) ? 2 : 1) : 0);
	for (int d = 0; d < D; d++)
	{
		const float *k = w + d * per_dir;
		const float *rk = k + (size_t) I * G * U;
		const float *bk = rk + (size_t) U * G * U;

		for (int g = 0; g < G; g++)
		{
			int			og = l->kind == DL_LAYER_LSTM ? lstm_map[g] : g;

			for (int64_t u = 0; u < U; u++)
			{
				size_t		row = (size_t) d * G * U + (size_t) og * U + u;

				for (int64_t i = 0; i < I; i++)
					W[row * I + i] = k[(size_t) i * G * U + (size_t) g * U + u];
				for (int64_t j = 0; j < U; j++)
					R[row * U + j] = rk[(size_t) j * G * U + (size_t) g * U + u];
				if (B)
				{
					float	   *bd = B + (size_t) d * 2 * G * U;

					bd[(size_t) og * U + u] = bk[(size_t) g * U + u];
					bd[(size_t) G * U + (size_t) og * U + u] =
						(l->kind == DL_LAYER_GRU && l->reset_after) ? bk[(size_t) G * U + (size_t) g * U + u] : 0.0f;
				}
			}
		}
	}
	/* (B, T, I) -> (T, B, I) */
	{
		int64_t		perm[3] = {1, 0, 2};

		x = ex_transpose(ex, l->name, "time_major", in, 3, perm);
		EX_CHECK(ex, x);
	}
	y = ex_fmt(ex, l->name, "Y");
	yh = ex_fmt(ex, l->name, "Y_h");
	EX_CHECK(ex, y);
	EX_CHECK(ex, yh);
	{
		const char *ins[3] = {x, wn, rn};
		const char *outs[2] = {y, yh};
		const char *op = l->kind == DL_LAYER_LSTM ? "LSTM" : l->kind == DL_LAYER_GRU ? "GRU" : "RNN";
		const char *ins4[4] = {x, wn, rn, bnm};

		n = ex_node(ex, op, ex_fmt(ex, l->name, op), B ? 4 : 3, B ? ins4 : ins, 2, outs);
		(void) ins;
	}
	EX_CHECK(ex, n);
	ex_attr_int(ex, n, "hidden_size", U);
	ex_attr_str(ex, n, "direction", D == 2 ? "bidirectional" : l->go_backwards ? "reverse" : "forward");
	if (l->kind == DL_LAYER_GRU)
		ex_attr_int(ex, n, "linear_before_reset", l->reset_after ? 1 : 0);
	for (int d = 0; d < D; d++)
	{
		DlActivation acts[3];
		int			na = 0;

		if (l->kind != DL_LAYER_SIMPLERNN)
			acts[na++] = l->recurrent_activation;
		acts[na++] = l->activation;
		if (l->kind == DL_LAYER_LSTM)
			acts[na++] = l->activation;
		for (int a = 0; a < na; a++)
		{
			const char *nm;

			switch (acts[a])
			{
				case DL_ACT_SIGMOID:
					nm = "Sigmoid";
					break;
				case DL_ACT_TANH:
					nm = "Tanh";
					break;
				case DL_ACT_RELU:
					nm = "Relu";
					break;
				case DL_ACT_SOFTSIGN:
					nm = "Softsign";
					break;
				case DL_ACT_SOFTPLUS:
					nm = "Softplus";
					break;
				case DL_ACT_HARD_SIGMOID:
				case DL_ACT_HARD_SIGMOID_K3:
					nm = "HardSigmoid";
					act_alpha[n_ab] = acts[a] == DL_ACT_HARD_SIGMOID ? 0.2f : (float) (1.0 / 6.0);
					act_beta[n_ab++] = 0.5f;
					break;
				default:
					dl_error_set(ex->err, DL_ERR_UNSUPPORTED,
								 "layer \"%s\": recurrent activation %s has no ONNX export",
								 l->name, dl_activation_name(acts[a]));
					dl_error_hint(ex->err, "ONNX's recurrent operators are exported with sigmoid, tanh or relu activations.");
					return NULL;
			}
			act_names[n_act++] = nm;
		}
	}
	ex_attr_strs(ex, n, "activations", n_act, act_names);
	if (n_ab > 0)
	{
		Onnx__AttributeProto *aa = ex_attr(ex, n, "activation_alpha", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
		Onnx__AttributeProto *ab = ex_attr(ex, n, "activation_beta", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);

		if (aa && ab)
		{
			aa->floats = dl_onnx_arena_alloc(&ex->arena, sizeof(float) * 6);
			ab->floats = dl_onnx_arena_alloc(&ex->arena, sizeof(float) * 6);
			if (aa->floats && ab->floats)
			{
				memcpy(aa->floats, act_alpha, sizeof(float) * n_ab);
				memcpy(ab->floats, act_beta, sizeof(float) * n_ab);
				aa->n_floats = ab->n_floats = n_ab;
			}
			else
				ex->oom = true;
		}
	}
	if (!l->return_sequences)
	{
		if (D == 1)
		{
			int64_t		ax = 0;
			const char *s = ex_squeeze(ex, "Squeeze", l->name, "last", yh, 1, &ax);

			EX_CHECK(ex, s);
			ex_node1(ex, "Identity", out, s, out);
			return out;
		}
		else
		{
			/* Y_h (2, B, U) -> (B, 2, U) */
			int64_t		perm[3] = {1, 0, 2};
			const char *t = ex_transpose(ex, l->name, "dirs", yh, 3, perm);

			EX_CHECK(ex, t);
			if (l->bidir == DL_BIDIR_CONCAT)
			{
				int64_t		shp[2] = {0, 2 * U};
				const char *sh = ex_init_int64(ex, ex_fmt(ex, l->name, "shape"), 2, shp);
				const char *ins[2] = {t, sh};

				ex_node(ex, "Reshape", out, 2, ins, 1, &out);
				return out;
			}
			else
			{
				int64_t		ax = 1;
				const char *op = l->bidir == DL_BIDIR_SUM ? "ReduceSum" :
					l->bidir == DL_BIDIR_AVE ? "ReduceMean" : "ReduceProd";

				return ex_reduce(ex, op, l->name, t, out, 1, &ax, 0);
			}
		}
	}
	else
	{
		/* Y (T, D, B, U) -> (B, T, D, U) */
		int64_t		perm[4] = {2, 0, 1, 3};
		const char *t;

		if (D == 1 && l->go_backwards)
		{
			/* Keras gives the steps in the order they were read */
			int64_t		st = -1, en = INT64_MIN, ax = 0, step = -1;
			const char *c_st = ex_init_int64(ex, ex_fmt(ex, l->name, "rev_start"), 1, &st);
			const char *c_en = ex_init_int64(ex, ex_fmt(ex, l->name, "rev_end"), 1, &en);
			const char *c_ax = ex_init_int64(ex, ex_fmt(ex, l->name, "rev_axes"), 1, &ax);
			const char *c_sp = ex_init_int64(ex, ex_fmt(ex, l->name, "rev_steps"), 1, &step);
			char	   *rv = ex_fmt(ex, l->name, "reversed");
			const char *ins[5] = {y, c_st, c_en, c_ax, c_sp};

			EX_CHECK(ex, rv);
			ex_node(ex, "Slice", rv, 5, ins, 1, (const char *const *) &rv);
			y = rv;
		}
		t = ex_transpose(ex, l->name, "batch_major", y, 4, perm);
		EX_CHECK(ex, t);
		if (D == 1 || l->bidir == DL_BIDIR_CONCAT)
		{
			int64_t		shp[3] = {0, T, D * U};
			const char *sh = ex_init_int64(ex, ex_fmt(ex, l->name, "shape"), 3, shp);
			const char *ins[2] = {t, sh};

			ex_node(ex, "Reshape", out, 2, ins, 1, &out);
			return out;
		}
		else
		{
			int64_t		ax = 2;
			const char *op = l->bidir == DL_BIDIR_SUM ? "ReduceSum" :
				l->bidir == DL_BIDIR_AVE ? "ReduceMean" : "ReduceProd";

			return ex_reduce(ex, op, l->name, t, out, 1, &ax, 0);
		}
	}
}

static DlStatus
unsupported(Ex *ex, const DlLayer *l, const char *what)
{
	dl_error_set(ex->err, DL_ERR_UNSUPPORTED, "layer \"%s\" (%s)%s%s has no ONNX export",
				 l->name, dl_layer_kind_name(l->kind), what[0] ? ": " : "", what);
	return dl_error_hint(ex->err, "docs/interchange.md lists the layers export_onnx writes.");
}

/* Emit layer li; its output tensor is named after it. */
static DlStatus
ex_layer(Ex *ex, const DlModelSpec *spec, int li, const float *params)
{
	const DlLayer *l = &spec->layers[li];
	const float *w = params + l->param_offset;
	const char *in = tensor_of(spec, l->in[0]);
	const char *out = l->name;
	int			r = l->in_shape.rank + 1;	/* with batch */
	Onnx__NodeProto *n;

	switch (l->kind)
	{
		case DL_LAYER_DENSE:
			{
				int64_t		I = l->in_shape.dims[l->in_shape.rank - 1];
				int64_t		O = l->units;
				int64_t		kd[2] = {I, O};
				const char *k = ex_init_float(ex, ex_fmt(ex, l->name, "kernel"), 2, kd, w);
				const char *b = l->use_bias ? ex_init_float(ex, ex_fmt(ex, l->name, "bias"), 1, &O, w + I * O) : NULL;
				char	   *y = l->activation == DL_ACT_LINEAR ? (char *) out : ex_fmt(ex, l->name, "linear");

				if (!k || (l->use_bias && !b) || !y)
					return dl_onnx_arena_error(&ex->arena, ex->err);
				if (r == 2)
				{
					const char *ins[3] = {in, k, b};

					ex_node(ex, "Gemm", y, l->use_bias ? 3 : 2, ins, 1, (const char *const *) &y);
				}
				else
				{
					char	   *mm = l->use_bias ? ex_fmt(ex, l->name, "matmul") : y;
					const char *ins[2] = {in, k};

					ex_node(ex, "MatMul", mm, 2, ins, 1, (const char *const *) &mm);
					if (l->use_bias)
					{
						const char *ins2[2] = {mm, b};

						ex_node(ex, "Add", y, 2, ins2, 1, (const char *const *) &y);
					}
				}
				if (l->activation != DL_ACT_LINEAR)
					ex_activation(ex, l->name, l->activation, y, out);
				break;
			}
		case DL_LAYER_ACTIVATION:
			ex_activation(ex, l->name, l->activation, in, out);
			break;
		case DL_LAYER_RELU:
			{
				const char *x = in;

				if (l->threshold != 0.0)
				{
					/* Where(x >= t, x, slope * (x - t)) */
					float		th = (float) l->threshold,
								sl = (float) l->negative_slope;
					const char *c_th = ex_init_float(ex, ex_fmt(ex, l->name, "threshold"), 0, NULL, &th);
					const char *c_sl = ex_init_float(ex, ex_fmt(ex, l->name, "slope"), 0, NULL, &sl);
					char	   *ge = ex_fmt(ex, l->name, "ge");
					char	   *d = ex_fmt(ex, l->name, "shifted");
					char	   *ng = ex_fmt(ex, l->name, "negative");
					char	   *y = l->has_max_value ? ex_fmt(ex, l->name, "thresholded") : (char *) out;
					const char *i1[2] = {x, c_th};
					const char *i3[2] = {d, c_sl};
					const char *i4[3] = {ge, x, ng};

					if (!c_th || !c_sl || !ge || !d || !ng || !y)
						return dl_onnx_arena_error(&ex->arena, ex->err);
					ex_node(ex, "GreaterOrEqual", ge, 2, i1, 1, (const char *const *) &ge);
					ex_node(ex, "Sub", d, 2, i1, 1, (const char *const *) &d);
					ex_node(ex, "Mul", ng, 2, i3, 1, (const char *const *) &ng);
					ex_node(ex, "Where", y, 3, i4, 1, (const char *const *) &y);
					if (l->has_max_value)
					{
						float		mx = (float) l->max_value;
						const char *c = ex_init_float(ex, ex_fmt(ex, l->name, "max"), 0, NULL, &mx);
						const char *ins[3] = {y, "", c};

						if (!c)
							return dl_onnx_arena_error(&ex->arena, ex->err);
						ex_node(ex, "Clip", out, 3, ins, 1, &out);
					}
					break;
				}
				if (l->has_max_value)
				{
					char	   *y = ex_fmt(ex, l->name, "relu");
					float		mx = (float) l->max_value;
					const char *c = ex_init_float(ex, ex_fmt(ex, l->name, "max"), 0, NULL, &mx);
					const char *ins[3] = {y, "", c};

					if (!y || !c)
						return dl_onnx_arena_error(&ex->arena, ex->err);
					if (l->negative_slope != 0.0)
					{
						n = ex_node1(ex, "LeakyRelu", y, x, y);
						ex_attr_float(ex, n, "alpha", l->negative_slope);
					}
					else
						ex_node1(ex, "Relu", y, x, y);
					ex_node(ex, "Clip", out, 3, ins, 1, &out);
				}
				else if (l->negative_slope != 0.0)
				{
					n = ex_node1(ex, "LeakyRelu", out, x, out);
					ex_attr_float(ex, n, "alpha", l->negative_slope);
				}
				else
					ex_node1(ex, "Relu", out, x, out);
				break;
			}
		case DL_LAYER_PRELU:
			{
				const char *a = ex_init_float(ex, ex_fmt(ex, l->name, "alpha"), 0, NULL, NULL);
				int64_t		dims[DL_MAX_RANK];
				Onnx__TensorProto *t;
				size_t		cnt = 1;

				if (!a)
					return dl_onnx_arena_error(&ex->arena, ex->err);
				t = ex->inits[ex->n_inits - 1];
				for (int d = 0; d < l->in_shape.rank; d++)
				{
					dims[d] = (l->shared_axes & (1u << d)) ? 1 : l->in_shape.dims[d];
					cnt *= (size_t) dims[d];
				}
				t->dims = dl_onnx_arena_alloc(&ex->arena, sizeof(int64_t) * DL_MAX_RANK);
				t->raw_data.data = dl_onnx_arena_alloc(&ex->arena, cnt * sizeof(float));
				if (!t->dims || !t->raw_data.data)
					return dl_onnx_arena_error(&ex->arena, ex->err);
				memcpy(t->dims, dims, sizeof(int64_t) * l->in_shape.rank);
				t->n_dims = l->in_shape.rank;
				memcpy(t->raw_data.data, w, cnt * sizeof(float));
				t->raw_data.len = cnt * sizeof(float);
				{
					const char *ins[2] = {in, a};

					ex_node(ex, "PRelu", out, 2, ins, 1, &out);
				}
				break;
			}
		case DL_LAYER_DROPOUT:
			ex_node1(ex, "Identity", out, in, out);
			break;
		case DL_LAYER_FLATTEN:
			n = ex_node1(ex, "Flatten", out, in, out);
			ex_attr_int(ex, n, "axis", 1);
			break;
		case DL_LAYER_RESHAPE:
			{
				int64_t		shp[DL_MAX_RANK + 1];
				const char *sh;

				shp[0] = 0;
				for (int d = 0; d < l->out_shape.rank; d++)
					shp[d + 1] = l->out_shape.dims[d];
				sh = ex_init_int64(ex, ex_fmt(ex, l->name, "shape"), l->out_shape.rank + 1, shp);
				if (!sh)
					return dl_onnx_arena_error(&ex->arena, ex->err);
				{
					const char *ins[2] = {in, sh};

					ex_node(ex, "Reshape", out, 2, ins, 1, &out);
				}
				break;
			}
		case DL_LAYER_PERMUTE:
			{
				int64_t		perm[DL_MAX_RANK + 1];

				perm[0] = 0;
				for (int d = 0; d < l->in_shape.rank; d++)
					perm[d + 1] = l->perm[d] + 1;
				n = ex_node1(ex, "Transpose", out, in, out);
				ex_attr_ints(ex, n, "perm", r, perm);
				break;
			}
		case DL_LAYER_REPEATVECTOR:
			{
				int64_t		ax = 1;
				int64_t		rep[3] = {1, l->repeat_n, 1};
				const char *u = ex_squeeze(ex, "Unsqueeze", l->name, "unsq", in, 1, &ax);
				const char *rp = ex_init_int64(ex, ex_fmt(ex, l->name, "repeats"), 3, rep);
				const char *ins[2] = {u, rp};

				if (!u || !rp)
					return dl_onnx_arena_error(&ex->arena, ex->err);
				ex_node(ex, "Tile", out, 2, ins, 1, &out);
				break;
			}
		case DL_LAYER_CONV2D:
		case DL_LAYER_DEPTHWISECONV2D:
		case DL_LAYER_CONV1D:
			{
				int			nsp = l->kind == DL_LAYER_CONV1D ? 1 : 2;
				const char *y = ex_conv(ex, l, w, in, nsp);
				char	   *z;

				if (y == NULL)
					break;
				z = l->activation == DL_ACT_LINEAR ? (char *) out : ex_fmt(ex, l->name, "nhwc");
				ex_to_cl(ex, l->name, y, z, nsp + 2);
				if (l->activation != DL_ACT_LINEAR)
					ex_activation(ex, l->name, l->activation, z, out);
				break;
			}
		case DL_LAYER_SEPARABLECONV2D:
			{
				/* depthwise (no bias), then a 1x1 convolution with the bias */
				DlLayer		dw = *l,
							pw = *l;
				int64_t		C = l->in_shape.dims[2];
				size_t		n_dw = (size_t) l->kernel_size[0] * l->kernel_size[1] * C * l->depth_multiplier;
				const char *y;
				char	   *mid, *z;

				dw.kind = DL_LAYER_DEPTHWISECONV2D;
				dw.use_bias = false;
				snprintf(dw.name, sizeof(dw.name), "%.100s/depthwise", l->name);
				pw.kind = DL_LAYER_CONV2D;
				pw.kernel_size[0] = pw.kernel_size[1] = 1;
				pw.strides[0] = pw.strides[1] = 1;
				pw.dilation[0] = pw.dilation[1] = 1;
				pw.padding = DL_PADDING_VALID;
				snprintf(pw.name, sizeof(pw.name), "%.100s/pointwise", l->name);
				pw.in_shape.dims[0] = l->out_shape.dims[0];
				pw.in_shape.dims[1] = l->out_shape.dims[1];
				pw.in_shape.dims[2] = C * l->depth_multiplier;
				y = ex_conv(ex, &dw, w, in, 2);
				mid = ex_fmt(ex, l->name, "depthwise_nhwc");
				if (y == NULL || mid == NULL)
					break;
				ex_to_cl(ex, dw.name, y, mid, 4);
				y = ex_conv(ex, &pw, w + n_dw, mid, 2);
				if (y == NULL)
					break;
				z = l->activation == DL_ACT_LINEAR ? (char *) out : ex_fmt(ex, l->name, "nhwc");
				ex_to_cl(ex, l->name, y, z, 4);
				if (l->activation != DL_ACT_LINEAR)
					ex_activation(ex, l->name, l->activation, z, out);
				break;
			}
		case DL_LAYER_UPSAMPLING2D:
			{
				float		sc[4] = {1.0f, (float) l->size[0], (float) l->size[1], 1.0f};
				int64_t		four = 4;
				const char *scn = ex_init_float(ex, ex_fmt(ex, l->name, "scales"), 1, &four, sc);
				const char *ins[3] = {in, "", scn};

				if (!scn)
					return dl_onnx_arena_error(&ex->arena, ex->err);
				n = ex_node(ex, "Resize", out, 3, ins, 1, &out);
				ex_attr_str(ex, n, "mode", "nearest");
				ex_attr_str(ex, n, "coordinate_transformation_mode", "asymmetric");
				ex_attr_str(ex, n, "nearest_mode", "floor");
				break;
			}
		case DL_LAYER_MAXPOOL2D:
		case DL_LAYER_AVGPOOL2D:
		case DL_LAYER_MAXPOOL1D:
		case DL_LAYER_AVGPOOL1D:
			{
				int			nsp = (l->kind == DL_LAYER_MAXPOOL1D || l->kind == DL_LAYER_AVGPOOL1D) ? 1 : 2;
				bool		mx = l->kind == DL_LAYER_MAXPOOL2D || l->kind == DL_LAYER_MAXPOOL1D;
				const char *x = ex_to_cf(ex, l->name, in, nsp + 2);
				char	   *y = ex_fmt(ex, l->name, "pool");
				int64_t		ks[2], st[2], pads[4];

				if (!x || !y)
					return dl_onnx_arena_error(&ex->arena, ex->err);
				n = ex_node1(ex, mx ? "MaxPool" : "AveragePool", y, x, y);
				for (int d = 0; d < nsp; d++)
				{
					int			g = nsp == 1 ? 1 : d;	/* 1-d: index 1 */

					ks[d] = l->pool_size[g];
					st[d] = l->strides[g];
					same_pads(l->padding, l->in_shape.dims[d], l->pool_size[g], l->strides[g], 1,
							  &pads[d], &pads[d + nsp]);
				}
				ex_attr_ints(ex, n, "kernel_shape", nsp, ks);
				ex_attr_ints(ex, n, "strides", nsp, st);
				ex_attr_ints(ex, n, "pads", 2 * nsp, pads);
				ex_to_cl(ex, l->name, y, out, nsp + 2);
				break;
			}
		case DL_LAYER_GLOBALAVGPOOL2D:
		case DL_LAYER_GLOBALMAXPOOL2D:
		case DL_LAYER_GLOBALAVGPOOL1D:
		case DL_LAYER_GLOBALMAXPOOL1D:
			{
				int64_t		axes[2] = {1, 2};
				int			k = (l->kind == DL_LAYER_GLOBALAVGPOOL2D || l->kind == DL_LAYER_GLOBALMAXPOOL2D) ? 2 : 1;
				bool		mx = l->kind == DL_LAYER_GLOBALMAXPOOL2D || l->kind == DL_LAYER_GLOBALMAXPOOL1D;
				bool		keep = l->out_shape.rank == l->in_shape.rank;

				ex_reduce(ex, mx ? "ReduceMax" : "ReduceMean", l->name, in, out, k, axes, keep ? 1 : 0);
				break;
			}
		case DL_LAYER_BATCHNORM:
		case DL_LAYER_LAYERNORM:
			{
				int64_t		C = l->in_shape.dims[l->in_shape.rank - 1];
				const float *p = w;
				float	   *g, *b;
				const char *gn, *bn;
				bool		bnorm = l->kind == DL_LAYER_BATCHNORM;

				g = ex_init_float_buf(ex, ex_fmt(ex, l->name, "gamma"), 1, &C);
				gn = g ? ex->inits[ex->n_inits - 1]->name : NULL;
				b = ex_init_float_buf(ex, ex_fmt(ex, l->name, "beta"), 1, &C);
				bn = b ? ex->inits[ex->n_inits - 1]->name : NULL;
				if (!g || !b)
					return dl_onnx_arena_error(&ex->arena, ex->err);
				for (int64_t c = 0; c < C; c++)
				{
					g[c] = l->scale ? p[c] : 1.0f;
					b[c] = 0.0f;
				}
				if (l->scale)
					p += C;
				if (l->center)
				{
					memcpy(b, p, C * sizeof(float));
					p += C;
				}
				if (bnorm)
				{
					const char *mn = ex_init_float(ex, ex_fmt(ex, l->name, "moving_mean"), 1, &C, p);
					const char *vn = ex_init_float(ex, ex_fmt(ex, l->name, "moving_variance"), 1, &C, p + C);
					const char *x = r > 2 ? ex_to_cf(ex, l->name, in, r) : in;
					char	   *y = r > 2 ? ex_fmt(ex, l->name, "bn") : (char *) out;
					const char *ins[5] = {x, gn, bn, mn, vn};

					if (!mn || !vn || !x || !y)
						return dl_onnx_arena_error(&ex->arena, ex->err);
					n = ex_node(ex, "BatchNormalization", y, 5, ins, 1, (const char *const *) &y);
					ex_attr_float(ex, n, "epsilon", l->epsilon);
					ex_attr_float(ex, n, "momentum", l->momentum);
					if (r > 2)
						ex_to_cl(ex, l->name, y, out, r);
				}
				else
				{
					const char *ins[3] = {in, gn, bn};

					n = ex_node(ex, "LayerNormalization", out, 3, ins, 1, &out);
					ex_attr_int(ex, n, "axis", -1);
					ex_attr_float(ex, n, "epsilon", l->epsilon);
				}
				break;
			}
		case DL_LAYER_ZEROPADDING2D:
			{
				int64_t		pads[8] = {0, l->margins[0], l->margins[2], 0, 0, l->margins[1], l->margins[3], 0};
				const char *pn = ex_init_int64(ex, ex_fmt(ex, l->name, "pads"), 8, pads);
				const char *ins[2] = {in, pn};

				if (!pn)
					return dl_onnx_arena_error(&ex->arena, ex->err);
				ex_node(ex, "Pad", out, 2, ins, 1, &out);
				break;
			}
		case DL_LAYER_CROPPING2D:
			{
				int64_t		st[2] = {l->margins[0], l->margins[2]};
				int64_t		en[2] = {l->in_shape.dims[0] - l->margins[1], l->in_shape.dims[1] - l->margins[3]};
				int64_t		ax[2] = {1, 2};
				const char *a = ex_init_int64(ex, ex_fmt(ex, l->name, "starts"), 2, st);
				const char *b = ex_init_int64(ex, ex_fmt(ex, l->name, "ends"), 2, en);
				const char *c = ex_init_int64(ex, ex_fmt(ex, l->name, "axes"), 2, ax);
				const char *ins[4] = {in, a, b, c};

				if (!a || !b || !c)
					return dl_onnx_arena_error(&ex->arena, ex->err);
				ex_node(ex, "Slice", out, 4, ins, 1, &out);
				break;
			}
		case DL_LAYER_EMBEDDING:
			{
				int64_t		ed[2] = {l->input_dim, l->units};
				const char *e = ex_init_float(ex, ex_fmt(ex, l->name, "embeddings"), 2, ed, w);
				char	   *ids = ex_fmt(ex, l->name, "ids");
				const char *ins[2] = {e, ids};

				if (!e || !ids)
					return dl_onnx_arena_error(&ex->arena, ex->err);
				n = ex_node1(ex, "Cast", ids, in, ids);
				ex_attr_int(ex, n, "to", ONNX__TENSOR_PROTO__DATA_TYPE__INT64);
				ex_node(ex, "Gather", out, 2, ins, 1, &out);
				break;
			}
		case DL_LAYER_LSTM:
		case DL_LAYER_GRU:
		case DL_LAYER_SIMPLERNN:
			ex_recurrent(ex, l, w, in, out);
			break;
		DL_LAYER_CASES_ELEMENTWISE:
		case DL_LAYER_CONCATENATE:
			{
				const char *ins[DL_MAX_FAN_IN];
				const char *op;

				for (int j = 0; j < l->n_in; j++)
					ins[j] = tensor_of(spec, l->in[j]);
				switch (l->kind)
				{
					case DL_LAYER_ADD:
						op = "Sum";
						break;
					case DL_LAYER_SUBTRACT:
						op = "Sub";
						break;
					case DL_LAYER_MULTIPLY:
						op = "Mul";
						break;
					case DL_LAYER_AVERAGE:
						op = "Mean";
						break;
					case DL_LAYER_MAXIMUM:
						op = "Max";
						break;
					case DL_LAYER_MINIMUM:
						op = "Min";
						break;
					default:
						op = "Concat";
				}
				if (l->kind == DL_LAYER_ADD && l->n_in == 2)
					op = "Add";
				if (l->kind == DL_LAYER_MULTIPLY && l->n_in > 2)
				{
					/* Mul is binary: a chain */
					const char *acc = ins[0];

					for (int j = 1; j < l->n_in; j++)
					{
						char	   *o = j == l->n_in - 1 ? (char *) out : ex_fmt(ex, l->name, j == 1 ? "mul1" : j == 2 ? "mul2" : "mulk");
						const char *two[2] = {acc, ins[j]};
						char		tag[32];

						if (j > 2 && j < l->n_in - 1)
						{
							snprintf(tag, sizeof(tag), "mul%d", j);
							o = ex_fmt(ex, l->name, tag);
						}
						if (!o)
							return dl_onnx_arena_error(&ex->arena, ex->err);
						ex_node(ex, "Mul", o, 2, two, 1, (const char *const *) &o);
						acc = o;
					}
					break;
				}
				n = ex_node(ex, op, out, l->n_in, ins, 1, &out);
				if (l->kind == DL_LAYER_CONCATENATE)
					ex_attr_int(ex, n, "axis", l->concat_axis + 1);
				break;
			}
		default:
			return unsupported(ex, l, "");
	}
	if (ex->err && ex->err->code != DL_OK)
		return ex->err->code;
	if (ex->oom || ex->arena.failed)
		return dl_onnx_arena_error(&ex->arena, ex->err);
	return DL_OK;
}

static Onnx__ValueInfoProto *
ex_value_info(Ex *ex, const char *name, const DlShape *s)
{
	Onnx__ValueInfoProto *v = dl_onnx_arena_alloc(&ex->arena, sizeof(*v));
	Onnx__TypeProto *t = dl_onnx_arena_alloc(&ex->arena, sizeof(*t));
	Onnx__TypeProto__Tensor *tt = dl_onnx_arena_alloc(&ex->arena, sizeof(*tt));
	Onnx__TensorShapeProto *sh = dl_onnx_arena_alloc(&ex->arena, sizeof(*sh));
	Onnx__TensorShapeProto__Dimension **dims =
		dl_onnx_arena_alloc(&ex->arena, (DL_MAX_RANK + 1) * sizeof(void *));

	if (!v || !t || !tt || !sh || !dims)
	{
		ex->oom = true;
		return NULL;
	}
	onnx__value_info_proto__init(v);
	onnx__type_proto__init(t);
	onnx__type_proto__tensor__init(tt);
	onnx__tensor_shape_proto__init(sh);
	for (int d = 0; d <= s->rank; d++)
	{
		Onnx__TensorShapeProto__Dimension *dim = dl_onnx_arena_alloc(&ex->arena, sizeof(*dim));

		if (!dim)
		{
			ex->oom = true;
			return NULL;
		}
		onnx__tensor_shape_proto__dimension__init(dim);
		if (d == 0)
		{
			dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			dim->dim_param = dl_onnx_arena_strdup(&ex->arena, "N");
		}
		else
		{
			dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			dim->dim_value = s->dims[d - 1];
		}
		dims[d] = dim;
	}
	sh->dim = dims;
	sh->n_dim = s->rank + 1;
	tt->has_elem_type = true;
	tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	tt->shape = sh;
	t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	t->tensor_type = tt;
	v->name = dl_onnx_arena_strdup(&ex->arena, name);
	v->type = t;
	return v;
}

DlStatus
dl_onnx_export(const DlOnnxExportArgs *args, const DlAllocator *alloc,
			   uint8_t **out, size_t *out_len, DlError *err)
{
	Ex			ex;
	const DlModelSpec *spec = args->spec;
	Onnx__ModelProto model;
	Onnx__GraphProto graph;
	Onnx__OperatorSetIdProto opset;
	Onnx__OperatorSetIdProto *opsets[1] = {&opset};
	Onnx__ValueInfoProto *ins[DL_MAX_IO], *outs[DL_MAX_IO];
	DlStatus	st = DL_OK;
	size_t		size;
	uint8_t    *buf;

	*out = NULL;
	*out_len = 0;
	if (args->opset < DL_ONNX_MIN_OPSET || args->opset > DL_ONNX_MAX_OPSET)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "opset %d is not supported", args->opset);
		return dl_error_hint(err, "Use an opset from %d to %d (ONNX 1.12).", DL_ONNX_MIN_OPSET, DL_ONNX_MAX_OPSET);
	}
	memset(&ex, 0, sizeof(ex));
	dl_onnx_arena_init(&ex.arena, alloc, DL_ONNX_MAX_BYTES * 2);
	ex.opset = args->opset;
	ex.err = err;
	dl_error_clear(err);

	for (int i = 0; i < spec->n_layers && st == DL_OK; i++)
	{
		if (!spec->layers[i].plan.reaches_output)
			continue;
		st = ex_layer(&ex, spec, i, args->params);
	}
	if (st == DL_OK)
	{
		for (int i = 0; i < spec->n_inputs; i++)
			ins[i] = ex_value_info(&ex, input_name(spec, i), &spec->input_shapes[i]);
		for (int i = 0; i < spec->n_outputs; i++)
			outs[i] = ex_value_info(&ex, spec->layers[spec->outputs[i]].name, &spec->output_shapes[i]);
		if (ex.oom || ex.arena.failed)
			st = dl_onnx_arena_error(&ex.arena, err);
	}
	if (st != DL_OK)
	{
		dl_onnx_arena_free(&ex.arena);
		return st;
	}

	onnx__model_proto__init(&model);
	onnx__graph_proto__init(&graph);
	onnx__operator_set_id_proto__init(&opset);
	opset.domain = "";
	opset.has_version = true;
	opset.version = args->opset;
	model.has_ir_version = true;
	model.ir_version = 8;
	model.producer_name = "madlib_dl";
	model.producer_version = (char *) (args->producer_version ? args->producer_version : "");
	model.n_opset_import = 1;
	model.opset_import = opsets;
	model.graph = &graph;
	graph.name = (char *) (spec->name[0] ? spec->name : "madlib_dl_model");
	graph.n_node = ex.n_nodes;
	graph.node = ex.nodes;
	graph.n_initializer = ex.n_inits;
	graph.initializer = ex.inits;
	graph.n_input = spec->n_inputs;
	graph.input = ins;
	graph.n_output = spec->n_outputs;
	graph.output = outs;

	size = protobuf_c_message_get_packed_size(&model.base);
	if (size > DL_ONNX_MAX_BYTES)
	{
		dl_onnx_arena_free(&ex.arena);
		dl_error_set(err, DL_ERR_LIMIT, "the ONNX model would have %zu bytes, more than %zu", size, DL_ONNX_MAX_BYTES);
		return dl_error_hint(err, "Export a smaller model.");
	}
	buf = dl_alloc(alloc, size, err);
	if (buf == NULL)
	{
		dl_onnx_arena_free(&ex.arena);
		return err ? err->code : DL_ERR_NO_MEMORY;
	}
	protobuf_c_message_pack(&model.base, buf);
	dl_onnx_arena_free(&ex.arena);
	*out = buf;
	*out_len = size;
	return DL_OK;
}
