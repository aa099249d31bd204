/*-------------------------------------------------------------------------
 *
 * onnx_import.c
 *	  An ONNX ModelProto as a Keras (tf.keras 2) Functional model JSON and
 *	  its weights in Keras get_weights() order, which the engine's Keras
 *	  reader then loads like any other architecture.
 *
 * The file is parsed by protobuf-c into the caller's allocator.  Every
 * tensor's declared size is checked against the bytes present before
 * anything is allocated for it.  The nodes are taken in a topological
 * order (a cycle, or a tensor no node produces, is refused).
 *
 * Layouts: each ONNX value is held as an engine tensor (a Keras layer's
 * output, or an input) in one of three layouts:
 *	 PLAIN       the engine tensor is the ONNX tensor (batch first)
 *	 NHWC        the ONNX tensor is (N, C, H, W); the engine holds (H, W, C)
 *	 TIME_MAJOR  the ONNX tensor is (T, N, F); the engine holds (T, F)
 * A spatial operator reading a PLAIN rank-4 value gets one Permute layer
 * (made once per value); a layout-sensitive one (Flatten, Reshape,
 * Transpose, Gemm) reading an NHWC value gets the Permute back.  Weights
 * are converted once: Conv kernels (O, C, KH, KW) -> (KH, KW, C, O),
 * Gemm's (transposed) B -> (K, O), LSTM gates i o f c -> i f c o.
 *
 * IDENTIFICATION
 *	  src/engine/onnx_import.c
 *
 *-------------------------------------------------------------------------
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "madlib_dl/dl_onnx.h"
#include "madlib_dl/dl_strbuf.h"
#include "onnx_impl.h"

#define SUPPORTED_OPS "Gemm, MatMul (+ Add), Conv, BatchNormalization, Relu, LeakyRelu, " \
	"Sigmoid, Tanh, Softmax, Elu, HardSigmoid, Gelu, Softplus, Softsign, Selu, MaxPool, " \
	"AveragePool, GlobalAveragePool, GlobalMaxPool, ReduceMean, ReduceMax, Flatten, Reshape, " \
	"Transpose, Squeeze, Concat, Add, Sub, Mul, Sum, Mean, Max, Min, LSTM, GRU, Gather, Cast, " \
	"Dropout, Identity, Constant, Shape, Unsqueeze, ConstantOfShape, LayerNormalization, " \
	"the Div-Erf-Add-Mul-Mul of GELU"

const char *
dl_onnx_import_ops(void)
{
	return SUPPORTED_OPS;
}

typedef enum Layout
{
	LAY_PLAIN = 0,
	LAY_NHWC,
	LAY_TIME_MAJOR
} Layout;

typedef enum ValKind
{
	VAL_CONST = 0,
	VAL_TENSOR,
	VAL_RNN_Y,					/* an RNN's Y: (T, 1, N, H) */
	VAL_RNN_YH,					/* an RNN's Y_h: (D, N, H) */
	VAL_RNN_YH_DIR,				/* one direction of a bidirectional Y_h: (N, H) */
	VAL_RNN_Y_TNDH,				/* a bidirectional Y as (T, N, 2, H) */
	VAL_GELU					/* a step of x * 0.5 * (1 + erf(x / sqrt 2)),
								 * the GELU opsets before 20 write: stage 1
								 * x / sqrt 2, 2 erf, 3 + 1, 4 x * (...) */
} ValKind;

#define MAX_DIMS 8

/* In an integer constant made from Shape: the batch size, not known here. */
#define BATCH_DIM INT64_MIN

typedef struct Val
{
	const char *name;
	ValKind		kind;
	int			rank;			/* ONNX rank, batch included */
	int64_t		dims[MAX_DIMS];
	/* VAL_CONST */
	bool		is_int;
	float	   *f;				/* (count) */
	int64_t    *i;				/* (count) */
	size_t		count;
	bool		zero_fill;		/* ConstantOfShape(0) of a shape holding the
								 * batch size: zeros of unknown count */
	/* VAL_TENSOR */
	int			ref;			/* engine tensor: layer >= 0, input -1 - k */
	Layout		layout;
	int			nhwc_ref;		/* cached Permute of a PLAIN rank-4 value, or INT32_MIN */
	int			plain_ref;		/* cached Permute back of an NHWC value */
	int			rnn;			/* VAL_RNN_*: the record; a TENSOR that is an
								 * RNN's full sequence: its record; else -1 */
	bool		seq_tm;			/* that sequence is time major */
	int			dir;			/* VAL_RNN_YH_DIR: 0 forward, 1 backward;
								 * VAL_GELU: the stage */
	int			gelu_x;			/* VAL_GELU: the value x */
	bool		squash;			/* the engine tensor is this one with its last
								 * two axes merged (a recurrent layer's
								 * directions): a Reshape merging them is free */
	int			bias_layer;		/* a Dense/Conv2D without bias producing it,
								 * to which an Add of a constant folds; or -1 */
} Val;

typedef struct Lay
{
	char		cls[32];
	char		name[DL_NAME_MAX];
	char	   *cfg;			/* JSON members after "name" (may be "") */
	int			n_in;
	int			in[DL_MAX_FAN_IN];
	float	   *w;				/* (nw) Keras order */
	size_t		nw;
	/* Dense/Conv2D awaiting a bias: where it goes */
	int64_t		bias_n;			/* 0: none may fold */
} Lay;

typedef struct Rnn
{
	bool		gru;
	int			x_ref;			/* its input, time major */
	int64_t		T, I, H;
	bool		reverse;
	bool		reset_after;
	int			D;				/* 2: bidirectional (weights: forward's, then backward's) */
	float	   *kernel, *recurrent, *bias;	/* Keras order, D blocks each */
	size_t		n_bias;
	int			layer_seq, layer_last;	/* materialized layers, or -1 */
	char		name[DL_NAME_MAX];
} Rnn;

typedef struct Im
{
	DlOnnxArena arena;
	DlError    *err;
	int			opset;
	Val		   *vals;
	int			n_vals, cap_vals;
	int		   *hash;			/* open addressing over vals, -1 empty */
	int			hash_cap;
	Lay		   *lays;
	int			n_lays, cap_lays;
	int			n_inputs;
	char		input_names[DL_MAX_IO][DL_NAME_MAX];
	int64_t		input_shapes[DL_MAX_IO][MAX_DIMS];
	int			input_ranks[DL_MAX_IO];
	Rnn		   *rnns;
	int			n_rnns, cap_rnns;
	struct NameSlot *names;		/* every tensor name of the graph: producer, readers */
	size_t		names_cap;
	const Onnx__NodeProto *node;	/* the node being converted, for messages */
} Im;

static int	rnn_layer(Im *im, int ri, bool seq);
static DlStatus rnn_last(Im *im, int ri, const char *out);

/* ------------------------------------------------------------------ */
/* errors */

static DlStatus
im_err(Im *im, DlStatus code, const char *fmt,...) DL_PRINTF_FMT(3, 4);

static DlStatus
im_err(Im *im, DlStatus code, const char *fmt,...)
{
	char		msg[DL_ERROR_MSG_MAX];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (im->node)
		return dl_error_set(im->err, code, "node \"%.100s\" (%.40s): %s",
							im->node->name && im->node->name[0] ? im->node->name :
							(im->node->n_output > 0 ? im->node->output[0] : "?"),
							im->node->op_type ? im->node->op_type : "?", msg);
	return dl_error_set(im->err, code, "%s", msg);
}

static DlStatus
im_oom(Im *im)
{
	return dl_onnx_arena_error(&im->arena, im->err);
}

static DlStatus
im_unsup(Im *im, const char *fmt,...) DL_PRINTF_FMT(2, 3);

static DlStatus
im_unsup(Im *im, const char *fmt,...)
{
	char		msg[DL_ERROR_MSG_MAX];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	im_err(im, DL_ERR_UNSUPPORTED, "%s", msg);
	return dl_error_hint(im->err, "Supported: %s (docs/interchange.md).", SUPPORTED_OPS);
}

/* ------------------------------------------------------------------ */
/* values */

static uint32_t
hash_str(const char *s)
{
	uint32_t	h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t) *s) * 16777619u;
	return h;
}

static int
val_find(Im *im, const char *name)
{
	uint32_t	h;

	if (name == NULL || im->hash_cap == 0)
		return -1;
	h = hash_str(name) & (im->hash_cap - 1);
	while (im->hash[h] >= 0)
	{
		if (strcmp(im->vals[im->hash[h]].name, name) == 0)
			return im->hash[h];
		h = (h + 1) & (im->hash_cap - 1);
	}
	return -1;
}

/* A new value named name (its fields to fill); NULL when out of memory. */
static Val *
val_new(Im *im, const char *name)
{
	Val		   *v;
	uint32_t	h;

	if (im->n_vals == im->cap_vals)
	{
		int			ncap = im->cap_vals ? im->cap_vals * 2 : 256;
		Val		   *nv = dl_onnx_arena_alloc(&im->arena, sizeof(Val) * (size_t) ncap);

		if (nv == NULL)
			return NULL;
		if (im->n_vals)
			memcpy(nv, im->vals, sizeof(Val) * (size_t) im->n_vals);
		im->vals = nv;
		im->cap_vals = ncap;
	}
	if ((im->n_vals + 1) * 2 > im->hash_cap)
	{
		int			ncap = im->hash_cap ? im->hash_cap * 2 : 1024;
		int		   *nh = dl_onnx_arena_alloc(&im->arena, sizeof(int) * (size_t) ncap);

		if (nh == NULL)
			return NULL;
		for (int k = 0; k < ncap; k++)
			nh[k] = -1;
		im->hash = nh;
		im->hash_cap = ncap;
		for (int k = 0; k < im->n_vals; k++)
		{
			uint32_t	hh = hash_str(im->vals[k].name) & (ncap - 1);

			while (nh[hh] >= 0)
				hh = (hh + 1) & (ncap - 1);
			nh[hh] = k;
		}
	}
	v = &im->vals[im->n_vals];
	memset(v, 0, sizeof(*v));
	v->name = name;
	v->ref = 0;
	v->nhwc_ref = INT32_MIN;
	v->plain_ref = INT32_MIN;
	v->rnn = -1;
	v->bias_layer = -1;
	h = hash_str(name) & (im->hash_cap - 1);
	while (im->hash[h] >= 0)
		h = (h + 1) & (im->hash_cap - 1);
	im->hash[h] = im->n_vals;
	im->n_vals++;
	return v;
}

/* ------------------------------------------------------------------ */
/* tensors */

static size_t
elem_size(int32_t type)
{
	switch (type)
	{
		case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
		case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
			return 4;
		case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
		case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE:
			return 8;
		default:
			return 0;
	}
}

/*
 * A constant from t: its dims checked, its element count against the
 * bytes present, then copied as float (or int64) into the arena.
 */
static DlStatus
const_from_tensor(Im *im, const Onnx__TensorProto *t, const char *name)
{
	size_t		count = 1;
	size_t		es = elem_size(t->data_type);
	Val		   *v;
	size_t		present;
	bool		raw = t->has_raw_data && t->raw_data.len > 0;

	if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
		return im_unsup(im, "tensor \"%.100s\" keeps its data in an external file", name);
	if (es == 0)
		return im_unsup(im, "tensor \"%.100s\" has data type %d; float, double, int32 and int64 are read",
						name, (int) t->data_type);
	if (t->n_dims > MAX_DIMS)
		return im_err(im, DL_ERR_LIMIT, "tensor \"%.100s\" has %zu dimensions, more than %d", name, t->n_dims, MAX_DIMS);
	for (size_t d = 0; d < t->n_dims; d++)
	{
		if (t->dims[d] < 0)
			return im_err(im, DL_ERR_CORRUPT, "tensor \"%.100s\" has a negative dimension %lld",
						  name, (long long) t->dims[d]);
		if (!dl_size_mul(count, (size_t) t->dims[d], &count) || count > DL_ONNX_MAX_BYTES)
			return im_err(im, DL_ERR_CORRUPT, "tensor \"%.100s\" declares more elements than any file holds", name);
	}
	/* what is actually there */
	if (raw)
		present = t->raw_data.len / es;
	else if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
		present = t->n_float_data;
	else if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64)
		present = t->n_int64_data;
	else if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT32)
		present = t->n_int32_data;
	else
		present = t->n_double_data;
	if (present != count || (raw && t->raw_data.len != count * es))
	{
		dl_error_set(im->err, DL_ERR_CORRUPT,
					 "tensor \"%.100s\" declares %zu elements but holds %zu", name, count, present);
		return dl_error_hint(im->err, "The file is truncated or corrupt: export it again.");
	}
	v = val_new(im, name);
	if (v == NULL)
		return im_oom(im);
	v->kind = VAL_CONST;
	v->rank = (int) t->n_dims;
	for (size_t d = 0; d < t->n_dims; d++)
		v->dims[d] = t->dims[d];
	v->count = count;
	v->is_int = t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 ||
		t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT32;
	v->f = dl_onnx_arena_alloc(&im->arena, count * sizeof(float) + 1);
	v->i = dl_onnx_arena_alloc(&im->arena, count * sizeof(int64_t) + 1);
	if (v->f == NULL || v->i == NULL)
		return im_oom(im);
	for (size_t k = 0; k < count; k++)
	{
		double		x;

		if (raw)
		{
			const uint8_t *p = t->raw_data.data + k * es;

			switch (t->data_type)
			{
				case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
					{
						float		f;

						memcpy(&f, p, 4);
						x = f;
						v->i[k] = (isfinite(f) && fabsf(f) < 9.2e18f) ? (int64_t) f : 0;
						break;
					}
				case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
					{
						int32_t		q;

						memcpy(&q, p, 4);
						x = q;
						v->i[k] = q;
						break;
					}
				case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
					{
						int64_t		q;

						memcpy(&q, p, 8);
						x = (double) q;
						v->i[k] = q;
						break;
					}
				default:
					memcpy(&x, p, 8);
					v->i[k] = 0;
			}
		}
		else if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
		{
			x = t->float_data[k];
			v->i[k] = 0;
		}
		else if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64)
		{
			x = (double) t->int64_data[k];
			v->i[k] = t->int64_data[k];
		}
		else if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT32)
		{
			x = t->int32_data[k];
			v->i[k] = t->int32_data[k];
		}
		else
		{
			x = t->double_data[k];
			v->i[k] = 0;
		}
		if (!v->is_int && (!isfinite(x) || fabs(x) > FLT_MAX))
			return im_err(im, DL_ERR_DATA, "tensor \"%.100s\" holds a value that is not a finite float", name);
		v->f[k] = (fabs(x) > FLT_MAX) ? 0.0f : (float) x;
	}
	return DL_OK;
}

/* ------------------------------------------------------------------ */
/* attributes */

static const Onnx__AttributeProto *
attr(const Onnx__NodeProto *n, const char *name)
{
	for (size_t k = 0; k < n->n_attribute; k++)
		if (n->attribute[k]->name && strcmp(n->attribute[k]->name, name) == 0)
			return n->attribute[k];
	return NULL;
}

static int64_t
attr_int(const Onnx__NodeProto *n, const char *name, int64_t dflt)
{
	const Onnx__AttributeProto *a = attr(n, name);

	return a && a->has_i ? a->i : dflt;
}

static double
attr_float(const Onnx__NodeProto *n, const char *name, double dflt)
{
	const Onnx__AttributeProto *a = attr(n, name);

	return a && a->has_f ? a->f : dflt;
}

/* ints attribute into v (at most max); returns count, -1 if absent */
static int
attr_ints(const Onnx__NodeProto *n, const char *name, int64_t *v, int max)
{
	const Onnx__AttributeProto *a = attr(n, name);

	if (a == NULL)
		return -1;
	if (a->n_ints > (size_t) max)
		return -2;
	for (size_t k = 0; k < a->n_ints; k++)
		v[k] = a->ints[k];
	return (int) a->n_ints;
}

static bool
attr_str_is(const Onnx__NodeProto *n, const char *name, const char *want, const char *dflt)
{
	const Onnx__AttributeProto *a = attr(n, name);
	const char *s = dflt;
	size_t		len = strlen(dflt);

	if (a && a->has_s)
	{
		s = (const char *) a->s.data;
		len = a->s.len;
	}
	return len == strlen(want) && memcmp(s, want, len) == 0;
}

/* ------------------------------------------------------------------ */
/* layers */

/* Keras-safe name from s: [A-Za-z0-9_], made unique */
static void
make_name(Im *im, const char *s, char *out)
{
	char		base[DL_NAME_MAX - 16];
	size_t		k = 0;
	int			suffix = 0;

	for (; s && *s && k < sizeof(base) - 1; s++)
	{
		char		c = *s;

		base[k++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') ? c : '_';
	}
	if (k == 0)
		base[k++] = 'l';
	base[k] = '\0';
	if (base[0] >= '0' && base[0] <= '9')
		base[0] = 'n';
	for (;;)
	{
		bool		clash = false;

		if (suffix == 0)
			snprintf(out, DL_NAME_MAX, "%s", base);
		else
			snprintf(out, DL_NAME_MAX, "%s_%d", base, suffix);
		for (int i = 0; i < im->n_lays && !clash; i++)
			clash = strcmp(im->lays[i].name, out) == 0;
		for (int i = 0; i < im->n_inputs && !clash; i++)
			clash = strcmp(im->input_names[i], out) == 0;
		if (!clash)
			return;
		suffix++;
	}
}

/* A new layer of class cls reading refs (n), config members cfg; -1 on OOM. */
static int
lay_new(Im *im, const char *cls, const char *name, const char *cfg, int n, const int *refs)
{
	Lay		   *l;

	if (im->n_lays >= DL_MAX_LAYERS)
	{
		im_err(im, DL_ERR_LIMIT, "the converted model would have more than %d layers", DL_MAX_LAYERS);
		return -1;
	}
	if (im->n_lays == im->cap_lays)
	{
		int			ncap = im->cap_lays ? im->cap_lays * 2 : 64;
		Lay		   *nl = dl_onnx_arena_alloc(&im->arena, sizeof(Lay) * (size_t) ncap);

		if (nl == NULL)
		{
			im_oom(im);
			return -1;
		}
		if (im->n_lays)
			memcpy(nl, im->lays, sizeof(Lay) * (size_t) im->n_lays);
		im->lays = nl;
		im->cap_lays = ncap;
	}
	l = &im->lays[im->n_lays];
	memset(l, 0, sizeof(*l));
	snprintf(l->cls, sizeof(l->cls), "%s", cls);
	make_name(im, name, l->name);
	l->cfg = dl_onnx_arena_strdup(&im->arena, cfg);
	if (l->cfg == NULL)
	{
		im_oom(im);
		return -1;
	}
	l->n_in = n;
	for (int k = 0; k < n; k++)
		l->in[k] = refs[k];
	return im->n_lays++;
}

static int
lay1(Im *im, const char *cls, const char *name, int ref, const char *fmt,...) DL_PRINTF_FMT(5, 6);

static int
lay1(Im *im, const char *cls, const char *name, int ref, const char *fmt,...)
{
	char		cfg[1024];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(cfg, sizeof(cfg), fmt, ap);
	va_end(ap);
	return lay_new(im, cls, name, cfg, 1, &ref);
}

static float *
lay_weights(Im *im, int li, size_t n)
{
	Lay		   *l = &im->lays[li];

	l->w = dl_onnx_arena_alloc(&im->arena, n * sizeof(float) + 1);
	l->nw = n;
	if (l->w == NULL)
		im_oom(im);
	return l->w;
}

static const char *
node_label(Im *im)
{
	const Onnx__NodeProto *n = im->node;

	if (n->name && n->name[0])
		return n->name;
	return n->n_output > 0 ? n->output[0] : n->op_type;
}

/* ------------------------------------------------------------------ */
/* layouts */

/* The engine tensor of v with ONNX (N, C, H, W) as (H, W, C) */
static DlStatus
ref_nhwc(Im *im, Val *v, int *ref)
{
	if (v->kind != VAL_TENSOR || (v->rank != 4 && v->rank != 3))
		return im_unsup(im, "input \"%.100s\" must be a (N, C, L) or (N, C, H, W) tensor", v->name);
	if (v->layout == LAY_NHWC)
	{
		*ref = v->ref;
		return DL_OK;
	}
	if (v->layout != LAY_PLAIN)
		return im_unsup(im, "input \"%.100s\" is in a layout this operator does not take", v->name);
	if (v->nhwc_ref == INT32_MIN)
	{
		char		nm[DL_NAME_MAX];
		int			li;

		snprintf(nm, sizeof(nm), "%.100s_nhwc", v->name);
		li = lay1(im, "Permute", nm, v->ref, "%s", v->rank == 4 ? "\"dims\": [2, 3, 1]" : "\"dims\": [2, 1]");
		if (li < 0)
			return im->err->code;
		v = &im->vals[v - im->vals];
		v->nhwc_ref = li;
	}
	*ref = v->nhwc_ref;
	return DL_OK;
}

/* The engine tensor of v holding exactly the ONNX tensor (batch first) */
static DlStatus
ref_plain(Im *im, Val *v, int *ref)
{
	if (v->kind != VAL_TENSOR)
		return im_unsup(im, "input \"%.100s\" is %s", v->name,
						v->kind == VAL_CONST ? "a constant where a computed tensor is needed" :
						"a recurrent output read other than by Squeeze or Gather");
	if (v->layout == LAY_PLAIN)
	{
		*ref = v->ref;
		return DL_OK;
	}
	if (v->layout == LAY_TIME_MAJOR)
		return im_unsup(im, "input \"%.100s\" is time major (T, N, F); only LSTM, GRU and Transpose(1, 0, 2) read it",
						v->name);
	if (v->plain_ref == INT32_MIN)
	{
		char		nm[DL_NAME_MAX];
		int			li;

		snprintf(nm, sizeof(nm), "%.100s_nchw", v->name);
		li = lay1(im, "Permute", nm, v->ref, "%s", v->rank == 4 ? "\"dims\": [3, 1, 2]" : "\"dims\": [2, 1]");
		if (li < 0)
			return im->err->code;
		v = &im->vals[v - im->vals];
		v->plain_ref = li;
	}
	*ref = v->plain_ref;
	return DL_OK;
}

/* A tensor value named name: engine ref in layout, ONNX dims */
static Val *
out_tensor(Im *im, const char *name, int ref, Layout layout, int rank, const int64_t *dims)
{
	Val		   *v;

	if (val_find(im, name) >= 0)
	{
		im_err(im, DL_ERR_INVALID_ARGUMENT, "tensor \"%.100s\" is produced twice", name);
		return NULL;
	}
	v = val_new(im, name);
	if (v == NULL)
	{
		im_oom(im);
		return NULL;
	}
	v->kind = VAL_TENSOR;
	v->ref = ref;
	v->layout = layout;
	v->rank = rank;
	memcpy(v->dims, dims, sizeof(int64_t) * (size_t) rank);
	return v;
}

/* ------------------------------------------------------------------ */
/* operators */

static Val *
in_val(Im *im, int k)
{
	const Onnx__NodeProto *n = im->node;
	int			vi;

	if ((size_t) k >= n->n_input || n->input[k] == NULL || n->input[k][0] == '\0')
		return NULL;
	vi = val_find(im, n->input[k]);
	return vi < 0 ? NULL : &im->vals[vi];
}

static DlStatus
need_inputs(Im *im, int min)
{
	for (int k = 0; k < min; k++)
		if (in_val(im, k) == NULL)
			return im_err(im, DL_ERR_INVALID_ARGUMENT, "input %d is missing", k + 1);
	if (im->node->n_output < 1 || im->node->output[0] == NULL || im->node->output[0][0] == '\0')
		return im_err(im, DL_ERR_INVALID_ARGUMENT, "the node has no output");
	return DL_OK;
}

static int
norm_axis(int64_t axis, int rank)
{
	if (axis < 0)
		axis += rank;
	return (axis < 0 || axis >= rank) ? -1 : (int) axis;
}

static const char *
act_of(const char *op)
{
	static const char *const map[][2] = {
		{"Relu", "relu"}, {"Sigmoid", "sigmoid"}, {"Tanh", "tanh"}, {"Softplus", "softplus"},
		{"Softsign", "softsign"}, {"Exp", "exponential"}, {NULL, NULL}
	};

	for (int k = 0; map[k][0]; k++)
		if (strcmp(op, map[k][0]) == 0)
			return map[k][1];
	return NULL;
}

/* Element-wise: same layout and dims out */
static DlStatus
op_elementwise(Im *im, Val *x, const char *cls, const char *cfg)
{
	int			li;
	Val		   *o;
	Val			xv;

	if (x->kind != VAL_TENSOR)
		return im_unsup(im, "input \"%.100s\" must be a computed tensor", x->name);
	xv = *x;
	li = lay1(im, cls, node_label(im), xv.ref, "%s", cfg);
	if (li < 0)
		return im->err->code;
	o = out_tensor(im, im->node->output[0], li, xv.layout, xv.rank, xv.dims);
	return o ? DL_OK : im->err->code;
}

static DlStatus
alias(Im *im, Val *x)
{
	Val			xv = *x;
	Val		   *o;

	if (val_find(im, im->node->output[0]) >= 0)
		return im_err(im, DL_ERR_INVALID_ARGUMENT, "tensor \"%.100s\" is produced twice", im->node->output[0]);
	o = val_new(im, im->node->output[0]);
	if (o == NULL)
		return im_oom(im);
	{
		const char *nm = o->name;

		*o = xv;
		o->name = nm;
		o->nhwc_ref = xv.nhwc_ref;
		o->plain_ref = xv.plain_ref;
		o->bias_layer = -1;
	}
	return DL_OK;
}

static DlStatus
dense_from(Im *im, Val *a, const float *B, int64_t K, int64_t O, bool transB, double alpha,
		   const Val *c, double beta)
{
	int			ref,
				li;
	DlStatus	st;
	int64_t		dims[MAX_DIMS];
	Val			av;
	float	   *w;
	Val		   *o;

	if ((st = ref_plain(im, a, &ref)) != DL_OK)
		return st;
	av = im->vals[a - im->vals];
	if (av.dims[av.rank - 1] != K)
		return im_err(im, DL_ERR_SHAPE, "input \"%.100s\" has %lld features but the weights take %lld",
					  av.name, (long long) av.dims[av.rank - 1], (long long) K);
	if (c && c->count != (size_t) O)
		return im_unsup(im, "bias \"%.100s\" has %zu values for %lld outputs", c->name, c->count, (long long) O);
	li = lay1(im, "Dense", node_label(im), ref, "\"units\": %lld, \"activation\": \"linear\", \"use_bias\": %s",
			  (long long) O, c ? "true" : "false");
	if (li < 0)
		return im->err->code;
	w = lay_weights(im, li, (size_t) (K * O + (c ? O : 0)));
	if (w == NULL)
		return im->err->code;
	for (int64_t k = 0; k < K; k++)
		for (int64_t j = 0; j < O; j++)
			w[k * O + j] = (float) (alpha * (transB ? B[j * K + k] : B[k * O + j]));
	if (c)
		for (int64_t j = 0; j < O; j++)
			w[K * O + j] = (float) (beta * c->f[j]);
	memcpy(dims, av.dims, sizeof(dims));
	dims[av.rank - 1] = O;
	o = out_tensor(im, im->node->output[0], li, LAY_PLAIN, av.rank, dims);
	if (o == NULL)
		return im->err->code;
	if (!c)
	{
		o->bias_layer = li;
		im->lays[li].bias_n = O;
	}
	return DL_OK;
}

/* Add of a constant to a Dense/Conv output without bias: fold it */
static int	uses_of(Im *im, const char *name);

static DlStatus
fold_bias(Im *im, Val *x, Val *c)
{
	Lay		   *l;
	float	   *nw;

	if (x->bias_layer < 0 || uses_of(im, x->name) != 1)
		return im_unsup(im, "Add of the constant \"%.100s\" is converted only as the bias of a MatMul or Conv it follows",
						c->name);
	l = &im->lays[x->bias_layer];
	if (c->count != (size_t) l->bias_n)
		return im_unsup(im, "constant \"%.100s\" has %zu values, not one per output (%lld)",
						c->name, c->count, (long long) l->bias_n);
	nw = dl_onnx_arena_alloc(&im->arena, (l->nw + c->count) * sizeof(float));
	if (nw == NULL)
		return im_oom(im);
	memcpy(nw, l->w, l->nw * sizeof(float));
	memcpy(nw + l->nw, c->f, c->count * sizeof(float));
	l->w = nw;
	l->nw += c->count;
	l->bias_n = 0;
	{
		char	   *p = strstr(l->cfg, "\"use_bias\": false");

		if (p)
			memcpy(p, "\"use_bias\": true ", strlen("\"use_bias\": true "));
	}
	return alias(im, x);
}

static DlStatus
op_gemm(Im *im)
{
	Val		   *a = in_val(im, 0),
			   *b = in_val(im, 1),
			   *c = in_val(im, 2);
	bool		transB = attr_int(im->node, "transB", 0) != 0;

	if (attr_int(im->node, "transA", 0) != 0)
		return im_unsup(im, "transA=1");
	if (b->kind != VAL_CONST || b->rank != 2)
		return im_unsup(im, "B must be a 2-d constant (weights)");
	if (c && c->kind != VAL_CONST)
		return im_unsup(im, "C must be a constant (bias)");
	if (a->kind != VAL_TENSOR || a->rank != 2)
		return im_unsup(im, "A must be a 2-d computed tensor");
	return dense_from(im, a, b->f, transB ? b->dims[1] : b->dims[0], transB ? b->dims[0] : b->dims[1],
					  transB, attr_float(im->node, "alpha", 1.0), c, attr_float(im->node, "beta", 1.0));
}

static DlStatus
op_matmul(Im *im)
{
	Val		   *a = in_val(im, 0),
			   *b = in_val(im, 1);

	if (b->kind != VAL_CONST || b->rank != 2)
		return im_unsup(im, "the second operand must be a 2-d constant (weights)");
	if (a->kind != VAL_TENSOR || a->rank < 2)
		return im_unsup(im, "the first operand must be a computed tensor");
	return dense_from(im, a, b->f, b->dims[0], b->dims[1], false, 1.0, NULL, 1.0);
}

static DlStatus
op_binary(Im *im, const char *op)
{
	Val		   *a = in_val(im, 0),
			   *b = in_val(im, 1);
	int			refs[2];
	DlStatus	st;
	Layout		lay;
	int			li;
	Val			av,
				bv;

	if (strcmp(op, "Add") == 0 && (a->kind == VAL_CONST) != (b->kind == VAL_CONST))
		return a->kind == VAL_CONST ? fold_bias(im, b, a) : fold_bias(im, a, b);
	if (a->kind != VAL_TENSOR || b->kind != VAL_TENSOR)
		return im_unsup(im, "both operands must be computed tensors (a constant operand is converted only as a bias)");
	if (a->rank != b->rank || memcmp(a->dims + 1, b->dims + 1, sizeof(int64_t) * (size_t) (a->rank - 1)) != 0)
		return im_unsup(im, "operands \"%.100s\" and \"%.100s\" differ in shape (broadcasting is not converted)",
						a->name, b->name);
	lay = (a->layout == LAY_NHWC || b->layout == LAY_NHWC) ? LAY_NHWC : LAY_PLAIN;
	if (lay == LAY_NHWC)
	{
		if ((st = ref_nhwc(im, a, &refs[0])) != DL_OK)
			return st;
		if ((st = ref_nhwc(im, &im->vals[val_find(im, im->node->input[1])], &refs[1])) != DL_OK)
			return st;
	}
	else
	{
		if ((st = ref_plain(im, a, &refs[0])) != DL_OK)
			return st;
		if ((st = ref_plain(im, b, &refs[1])) != DL_OK)
			return st;
	}
	av = *in_val(im, 0);
	bv = *in_val(im, 1);
	(void) bv;
	li = lay_new(im, strcmp(op, "Add") == 0 ? "Add" : strcmp(op, "Sub") == 0 ? "Subtract" : "Multiply",
				 node_label(im), "", 2, refs);
	if (li < 0)
		return im->err->code;
	return out_tensor(im, im->node->output[0], li, lay, av.rank, av.dims) ? DL_OK : im->err->code;
}

/* Sum, Mean, Max, Min of computed tensors of one shape */
static DlStatus
op_variadic(Im *im, const char *op)
{
	const Onnx__NodeProto *n = im->node;
	int			k = (int) n->n_input;
	int			refs[DL_MAX_FAN_IN];
	bool		nhwc = false;
	Val		   *v0 = in_val(im, 0);
	Val			v0v;
	int			li;

	if (k < 1 || k > DL_MAX_FAN_IN)
		return im_unsup(im, "%d inputs", k);
	for (int j = 0; j < k; j++)
	{
		Val		   *v = in_val(im, j);

		if (v == NULL || v->kind != VAL_TENSOR)
			return im_unsup(im, "every input must be a computed tensor");
		if (v->rank != v0->rank || memcmp(v->dims + 1, v0->dims + 1, sizeof(int64_t) * (size_t) (v->rank - 1)) != 0)
			return im_unsup(im, "inputs differ in shape (broadcasting is not converted)");
		nhwc = nhwc || v->layout == LAY_NHWC;
	}
	if (k == 1)
		return alias(im, v0);
	for (int j = 0; j < k; j++)
	{
		DlStatus	st = nhwc ? ref_nhwc(im, in_val(im, j), &refs[j]) : ref_plain(im, in_val(im, j), &refs[j]);

		if (st != DL_OK)
			return st;
	}
	v0v = *in_val(im, 0);
	li = lay_new(im, strcmp(op, "Sum") == 0 ? "Add" : strcmp(op, "Mean") == 0 ? "Average" :
				 strcmp(op, "Max") == 0 ? "Maximum" : "Minimum", node_label(im), "", k, refs);
	if (li < 0)
		return im->err->code;
	return out_tensor(im, n->output[0], li, nhwc ? LAY_NHWC : LAY_PLAIN, v0v.rank, v0v.dims) ? DL_OK : im->err->code;
}

static DlStatus
op_concat(Im *im)
{
	const Onnx__NodeProto *n = im->node;
	int			k = (int) n->n_input;
	int			refs[DL_MAX_FAN_IN];
	Val		   *v0 = in_val(im, 0);
	int			axis;
	bool		all_nhwc = true;
	int64_t		dims[MAX_DIMS];
	int			li;
	char		cfg[64];

	if (k < 1 || k > DL_MAX_FAN_IN)
		return im_unsup(im, "%d inputs", k);
	if (k == 2 && v0 && v0->kind == VAL_RNN_YH_DIR && in_val(im, 1) && in_val(im, 1)->kind == VAL_RNN_YH_DIR &&
		in_val(im, 1)->rnn == v0->rnn && v0->dir == 0 && in_val(im, 1)->dir == 1 &&
		norm_axis(attr_int(n, "axis", 1), 2) == 1)
		return rnn_last(im, v0->rnn, n->output[0]);	/* Bidirectional, merge_mode concat */
	for (int j = 0; j < k; j++)
	{
		Val		   *v = in_val(im, j);

		if (v == NULL || v->kind != VAL_TENSOR)
			return im_unsup(im, "every input must be a computed tensor");
		if (v->rank != v0->rank)
			return im_err(im, DL_ERR_SHAPE, "inputs differ in rank");
		all_nhwc = all_nhwc && v->layout == LAY_NHWC;
	}
	axis = norm_axis(attr_int(n, "axis", 1), v0->rank);
	if (axis <= 0)
		return im_unsup(im, "axis %lld (the batch axis cannot be joined)", (long long) attr_int(n, "axis", 1));
	memcpy(dims, v0->dims, sizeof(dims));
	dims[axis] = 0;
	for (int j = 0; j < k; j++)
	{
		Val		   *v = in_val(im, j);
		DlStatus	st;

		for (int d = 1; d < v->rank; d++)
			if (d != axis && v->dims[d] != v0->dims[d])
				return im_err(im, DL_ERR_SHAPE, "inputs differ in dimension %d", d);
		dims[axis] += v->dims[axis];
		st = (all_nhwc && axis == 1) ? ref_nhwc(im, v, &refs[j]) : ref_plain(im, v, &refs[j]);
		if (st != DL_OK)
			return st;
	}
	snprintf(cfg, sizeof(cfg), "\"axis\": %d", (all_nhwc && axis == 1) ? -1 : axis);
	if (k == 1)
		return alias(im, v0);
	li = lay_new(im, "Concatenate", node_label(im), cfg, k, refs);
	if (li < 0)
		return im->err->code;
	return out_tensor(im, n->output[0], li, (all_nhwc && axis == 1) ? LAY_NHWC : LAY_PLAIN,
					  in_val(im, 0)->rank, dims) ? DL_OK : im->err->code;
}

/* Keras 'same' pads for one axis, as same_pads in onnx_export.c */
static void
keras_same(int64_t in, int64_t k, int64_t s, int64_t d, int64_t *lo, int64_t *hi)
{
	int64_t		ek = (k - 1) * d + 1;
	int64_t		out = (in + s - 1) / s;
	int64_t		total = (out - 1) * s + ek - in;

	if (total < 0)
		total = 0;
	*lo = total / 2;
	*hi = total - *lo;
}

/* Conv over (N, C, L): Conv1D on the engine's (L, C) */
static DlStatus
op_conv1d(Im *im)
{
	const Onnx__NodeProto *n = im->node;
	Val		   *x = in_val(im, 0),
			   *w = in_val(im, 1),
			   *b = in_val(im, 2);
	int64_t		ks[1] = {0}, st[1] = {1}, dl[1] = {1}, pads[2] = {0, 0};
	int64_t		OC, C, K, L;
	int			ref, li;
	DlStatus	s;
	const char *padding = "valid";
	int64_t		dims[3], sl[2];
	float	   *kw;

	if (attr_int(n, "group", 1) != 1)
		return im_unsup(im, "a grouped 1-d convolution");
	if (b && b->kind != VAL_CONST)
		return im_unsup(im, "the bias must be a constant");
	if ((s = ref_nhwc(im, x, &ref)) != DL_OK)
		return s;
	x = in_val(im, 0);
	w = in_val(im, 1);
	OC = w->dims[0];
	K = w->dims[2];
	C = x->dims[1];
	L = x->dims[2];
	if (w->dims[1] != C)
		return im_err(im, DL_ERR_SHAPE, "the weights take %lld channels, the input has %lld",
					  (long long) w->dims[1], (long long) C);
	if (attr_ints(n, "strides", st, 1) == -2 || attr_ints(n, "dilations", dl, 1) == -2 ||
		attr_ints(n, "pads", pads, 2) == -2)
		return im_unsup(im, "strides, dilations or pads of more than 1 axis");
	if (attr_ints(n, "kernel_shape", ks, 1) == 1 && ks[0] != K)
		return im_err(im, DL_ERR_SHAPE, "kernel_shape disagrees with the weights");
	if (st[0] < 1 || dl[0] < 1 || K < 1 || OC < 1 || st[0] > 1 << 20 || dl[0] > 1 << 20 || K > 1 << 20 ||
		pads[0] < 0 || pads[1] < 0 || pads[0] > 1 << 20 || pads[1] > 1 << 20)
		return im_err(im, DL_ERR_SHAPE, "strides, dilations, pads and kernel sizes out of range");
	if (!attr_str_is(n, "auto_pad", "NOTSET", "NOTSET"))
		return im_unsup(im, "auto_pad on a 1-d convolution");
	if (dl[0] > 1 && st[0] > 1)
		return im_unsup(im, "dilations with strides (Keras refuses them together)");
	keras_same(L, K, st[0], dl[0], &sl[0], &sl[1]);
	if (pads[0] == 0 && pads[1] == 0)
		padding = "valid";
	else if (pads[0] == sl[0] && pads[1] == sl[1])
		padding = "same";
	else if (pads[0] == (K - 1) * dl[0] && pads[1] == 0)
		padding = "causal";
	else
		return im_unsup(im, "pads [%lld, %lld] (none, Keras' 'same' or 'causal' are converted)",
						(long long) pads[0], (long long) pads[1]);
	dims[0] = x->dims[0];
	dims[1] = OC;
	dims[2] = (L + pads[0] + pads[1] - dl[0] * (K - 1) - 1) / st[0] + 1;
	if (dims[2] < 1)
		return im_err(im, DL_ERR_SHAPE, "the kernel is larger than the padded input");
	li = lay1(im, "Conv1D", node_label(im), ref,
			  "\"filters\": %lld, \"kernel_size\": [%lld], \"strides\": [%lld], \"padding\": \"%s\", "
			  "\"dilation_rate\": [%lld], \"activation\": \"linear\", \"use_bias\": %s",
			  (long long) OC, (long long) K, (long long) st[0], padding, (long long) dl[0],
			  b ? "true" : "false");
	if (li < 0)
		return im->err->code;
	if (b && b->count != (size_t) OC)
		return im_err(im, DL_ERR_SHAPE, "the bias has %zu values for %lld filters", b->count, (long long) OC);
	w = in_val(im, 1);
	b = in_val(im, 2);
	kw = lay_weights(im, li, (size_t) (K * C * OC + (b ? OC : 0)));
	if (kw == NULL)
		return im->err->code;
	/* (OC, C, K) -> (K, C, OC) */
	for (int64_t k = 0; k < K; k++)
		for (int64_t c = 0; c < C; c++)
			for (int64_t o = 0; o < OC; o++)
				kw[(k * C + c) * OC + o] = w->f[(o * C + c) * K + k];
	if (b)
		memcpy(kw + K * C * OC, b->f, sizeof(float) * (size_t) OC);
	{
		Val		   *o = out_tensor(im, n->output[0], li, LAY_NHWC, 3, dims);

		if (o == NULL)
			return im->err->code;
		if (!b)
		{
			o->bias_layer = li;
			im->lays[li].bias_n = OC;
		}
	}
	return DL_OK;
}

static DlStatus
op_conv(Im *im)
{
	const Onnx__NodeProto *n = im->node;
	Val		   *x = in_val(im, 0),
			   *w = in_val(im, 1),
			   *b = in_val(im, 2);
	int64_t		ks[2] = {0, 0}, st[2] = {1, 1}, dl[2] = {1, 1}, pads[4] = {0, 0, 0, 0};
	int64_t		group = attr_int(n, "group", 1);
	int64_t		OC, Cg, KH, KW, C, H, W;
	int			ref, li;
	DlStatus	s;
	bool		depthwise;
	const char *padding = "valid";
	int64_t		dims[4];
	float	   *kw;

	if (w != NULL && w->kind == VAL_CONST && w->rank == 3 && x->kind == VAL_TENSOR && x->rank == 3)
		return op_conv1d(im);
	if (w == NULL || w->kind != VAL_CONST || w->rank != 4)
		return im_unsup(im, "only 1-d and 2-d convolutions with constant weights are converted");
	if (b && b->kind != VAL_CONST)
		return im_unsup(im, "the bias must be a constant");
	if ((s = ref_nhwc(im, x, &ref)) != DL_OK)
		return s;
	x = in_val(im, 0);
	OC = w->dims[0];
	Cg = w->dims[1];
	KH = w->dims[2];
	KW = w->dims[3];
	C = x->dims[1];
	H = x->dims[2];
	W = x->dims[3];
	if (attr_ints(n, "strides", st, 2) == -2 || attr_ints(n, "dilations", dl, 2) == -2 ||
		attr_ints(n, "pads", pads, 4) == -2)
		return im_unsup(im, "strides, dilations or pads of more than 2 spatial axes");
	if (attr_ints(n, "kernel_shape", ks, 2) == 2 && (ks[0] != KH || ks[1] != KW))
		return im_err(im, DL_ERR_SHAPE, "kernel_shape disagrees with the weights");
	if (st[0] < 1 || st[1] < 1 || dl[0] < 1 || dl[1] < 1 || KH < 1 || KW < 1 || OC < 1 || Cg < 1 ||
		st[0] > 1 << 20 || st[1] > 1 << 20 || dl[0] > 1 << 20 || dl[1] > 1 << 20 || KH > 1 << 20 || KW > 1 << 20)
		return im_err(im, DL_ERR_SHAPE, "strides, dilations and kernel sizes must be positive");
	for (int k = 0; k < 4; k++)
		if (pads[k] < 0 || pads[k] > 1 << 20)
			return im_err(im, DL_ERR_SHAPE, "pads must be non-negative");
	if (group == 1)
	{
		if (Cg != C)
			return im_err(im, DL_ERR_SHAPE, "the weights take %lld channels, the input has %lld",
						  (long long) Cg, (long long) C);
		depthwise = false;
	}
	else if (group == C && Cg == 1 && OC % C == 0)
		depthwise = true;
	else
		return im_unsup(im, "group=%lld (1, or depthwise with group = channels, is converted)", (long long) group);
	if (!attr_str_is(n, "auto_pad", "NOTSET", "NOTSET"))
	{
		if (attr_str_is(n, "auto_pad", "VALID", "NOTSET"))
			pads[0] = pads[1] = pads[2] = pads[3] = 0;
		else if (attr_str_is(n, "auto_pad", "SAME_UPPER", "NOTSET"))
		{
			keras_same(H, KH, st[0], dl[0], &pads[0], &pads[2]);
			keras_same(W, KW, st[1], dl[1], &pads[1], &pads[3]);
		}
		else
			return im_unsup(im, "auto_pad SAME_LOWER");
	}
	if (dl[0] > 1 || dl[1] > 1)
	{
		if (st[0] > 1 || st[1] > 1)
			return im_unsup(im, "dilations with strides (Keras refuses them together)");
	}
	if (pads[0] || pads[1] || pads[2] || pads[3])
	{
		int64_t		sl[4];

		keras_same(H, KH, st[0], dl[0], &sl[0], &sl[2]);
		keras_same(W, KW, st[1], dl[1], &sl[1], &sl[3]);
		if (memcmp(sl, pads, sizeof(sl)) == 0)
			padding = "same";
		else
		{
			char		nm[DL_NAME_MAX];

			snprintf(nm, sizeof(nm), "%.100s_pad", node_label(im));
			li = lay1(im, "ZeroPadding2D", nm, ref, "\"padding\": [[%lld, %lld], [%lld, %lld]]",
					  (long long) pads[0], (long long) pads[2], (long long) pads[1], (long long) pads[3]);
			if (li < 0)
				return im->err->code;
			ref = li;
			H += pads[0] + pads[2];
			W += pads[1] + pads[3];
		}
	}
	if (strcmp(padding, "same") == 0)
	{
		dims[2] = (H + st[0] - 1) / st[0];
		dims[3] = (W + st[1] - 1) / st[1];
	}
	else
	{
		dims[2] = (H - dl[0] * (KH - 1) - 1) / st[0] + 1;
		dims[3] = (W - dl[1] * (KW - 1) - 1) / st[1] + 1;
	}
	if (dims[2] < 1 || dims[3] < 1)
		return im_err(im, DL_ERR_SHAPE, "the kernel is larger than the padded input");
	dims[0] = x->dims[0];
	dims[1] = OC;
	if (depthwise)
		li = lay1(im, "DepthwiseConv2D", node_label(im), ref,
				  "\"kernel_size\": [%lld, %lld], \"strides\": [%lld, %lld], \"padding\": \"%s\", "
				  "\"depth_multiplier\": %lld, \"dilation_rate\": [%lld, %lld], \"activation\": \"linear\", \"use_bias\": %s",
				  (long long) KH, (long long) KW, (long long) st[0], (long long) st[1], padding,
				  (long long) (OC / C), (long long) dl[0], (long long) dl[1], b ? "true" : "false");
	else
		li = lay1(im, "Conv2D", node_label(im), ref,
				  "\"filters\": %lld, \"kernel_size\": [%lld, %lld], \"strides\": [%lld, %lld], \"padding\": \"%s\", "
				  "\"dilation_rate\": [%lld, %lld], \"activation\": \"linear\", \"use_bias\": %s",
				  (long long) OC, (long long) KH, (long long) KW, (long long) st[0], (long long) st[1], padding,
				  (long long) dl[0], (long long) dl[1], b ? "true" : "false");
	if (li < 0)
		return im->err->code;
	if (b && b->count != (size_t) OC)
		return im_err(im, DL_ERR_SHAPE, "the bias has %zu values for %lld filters", b->count, (long long) OC);
	w = in_val(im, 1);
	b = in_val(im, 2);
	kw = lay_weights(im, li, (size_t) (KH * KW * Cg * OC + (b ? OC : 0)));
	if (kw == NULL)
		return im->err->code;
	if (depthwise)
	{
		int64_t		M = OC / C;

		/* (C*M, 1, KH, KW) -> (KH, KW, C, M) */
		for (int64_t kh = 0; kh < KH; kh++)
			for (int64_t kx = 0; kx < KW; kx++)
				for (int64_t c = 0; c < C; c++)
					for (int64_t m = 0; m < M; m++)
						kw[((kh * KW + kx) * C + c) * M + m] = w->f[((c * M + m) * KH + kh) * KW + kx];
	}
	else
		for (int64_t kh = 0; kh < KH; kh++)
			for (int64_t kx = 0; kx < KW; kx++)
				for (int64_t c = 0; c < C; c++)
					for (int64_t o = 0; o < OC; o++)
						kw[((kh * KW + kx) * C + c) * OC + o] = w->f[((o * C + c) * KH + kh) * KW + kx];
	if (b)
		memcpy(kw + KH * KW * Cg * OC, b->f, sizeof(float) * (size_t) OC);
	{
		Val		   *o = out_tensor(im, n->output[0], li, LAY_NHWC, 4, dims);

		if (o == NULL)
			return im->err->code;
		if (!b)
		{
			o->bias_layer = li;
			im->lays[li].bias_n = OC;
		}
	}
	return DL_OK;
}

static DlStatus
op_pool(Im *im, bool mx)
{
	const Onnx__NodeProto *n = im->node;
	Val		   *x = in_val(im, 0);
	int64_t		ks[2] = {0, 0}, st[2] = {1, 1}, pads[4] = {0, 0, 0, 0}, dl[2] = {1, 1};
	int			ref, li;
	DlStatus	s;
	const char *padding = "valid";
	int64_t		dims[4];

	if ((s = ref_nhwc(im, x, &ref)) != DL_OK)
		return s;
	x = in_val(im, 0);
	if (x->rank == 3)
	{
		/* (N, C, L): MaxPooling1D / AveragePooling1D */
		int64_t		k1[1] = {0}, s1[1] = {0}, p1[2] = {0, 0}, sl[2];
		const char *pd = "valid";
		int64_t		d3[3];

		if (attr_ints(n, "kernel_shape", k1, 1) != 1)
			return im_unsup(im, "kernel_shape must give 1 axis for a (N, C, L) input");
		if (attr_ints(n, "strides", s1, 1) != 1)
			s1[0] = 1;
		if (attr_ints(n, "pads", p1, 2) == -2 || attr_int(n, "ceil_mode", 0) != 0 ||
			!attr_str_is(n, "auto_pad", "NOTSET", "NOTSET") || attr(n, "dilations"))
			return im_unsup(im, "pads, ceil_mode, auto_pad or dilations of a 1-d pool");
		if (k1[0] < 1 || s1[0] < 1 || k1[0] > 1 << 20 || s1[0] > 1 << 20)
			return im_err(im, DL_ERR_SHAPE, "kernel_shape and strides must be positive");
		keras_same(x->dims[2], k1[0], s1[0], 1, &sl[0], &sl[1]);
		if (p1[0] || p1[1])
		{
			if (p1[0] != sl[0] || p1[1] != sl[1] || (!mx && attr_int(n, "count_include_pad", 0)))
				return im_unsup(im, "pads of a 1-d pool other than Keras' 'same'");
			pd = "same";
		}
		d3[0] = x->dims[0];
		d3[1] = x->dims[1];
		d3[2] = strcmp(pd, "same") == 0 ? (x->dims[2] + s1[0] - 1) / s1[0] : (x->dims[2] - k1[0]) / s1[0] + 1;
		if (d3[2] < 1)
			return im_err(im, DL_ERR_SHAPE, "the pool is larger than the input");
		li = lay1(im, mx ? "MaxPooling1D" : "AveragePooling1D", node_label(im), ref,
				  "\"pool_size\": [%lld], \"strides\": [%lld], \"padding\": \"%s\"",
				  (long long) k1[0], (long long) s1[0], pd);
		if (li < 0)
			return im->err->code;
		return out_tensor(im, n->output[0], li, LAY_NHWC, 3, d3) ? DL_OK : im->err->code;
	}
	if (attr_ints(n, "kernel_shape", ks, 2) != 2)
		return im_unsup(im, "kernel_shape must give 2 spatial axes");
	if (attr_ints(n, "strides", st, 2) == -2 || attr_ints(n, "pads", pads, 4) == -2 ||
		attr_ints(n, "dilations", dl, 2) == -2)
		return im_unsup(im, "more than 2 spatial axes");
	if (dl[0] != 1 || dl[1] != 1)
		return im_unsup(im, "dilations");
	if (attr_int(n, "ceil_mode", 0) != 0)
		return im_unsup(im, "ceil_mode=1");
	if (ks[0] < 1 || ks[1] < 1 || st[0] < 1 || st[1] < 1 || ks[0] > 1 << 20 || ks[1] > 1 << 20 ||
		st[0] > 1 << 20 || st[1] > 1 << 20)
		return im_err(im, DL_ERR_SHAPE, "kernel_shape and strides must be positive");
	if (!mx && attr_int(n, "count_include_pad", 0) != 0 && (pads[0] || pads[1] || pads[2] || pads[3]))
		return im_unsup(im, "count_include_pad=1 with pads");
	if (pads[0] || pads[1] || pads[2] || pads[3] || !attr_str_is(n, "auto_pad", "NOTSET", "NOTSET"))
	{
		int64_t		sl[4];

		keras_same(x->dims[2], ks[0], st[0], 1, &sl[0], &sl[2]);
		keras_same(x->dims[3], ks[1], st[1], 1, &sl[1], &sl[3]);
		if (memcmp(sl, pads, sizeof(sl)) == 0 || attr_str_is(n, "auto_pad", "SAME_UPPER", "NOTSET"))
			padding = "same";
		else if (!attr_str_is(n, "auto_pad", "VALID", "NOTSET"))
			return im_unsup(im, "pads [%lld, %lld, %lld, %lld] (none, or Keras' 'same', are converted)",
							(long long) pads[0], (long long) pads[1], (long long) pads[2], (long long) pads[3]);
	}
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	if (strcmp(padding, "same") == 0)
	{
		dims[2] = (x->dims[2] + st[0] - 1) / st[0];
		dims[3] = (x->dims[3] + st[1] - 1) / st[1];
	}
	else
	{
		dims[2] = (x->dims[2] - ks[0]) / st[0] + 1;
		dims[3] = (x->dims[3] - ks[1]) / st[1] + 1;
	}
	if (dims[2] < 1 || dims[3] < 1)
		return im_err(im, DL_ERR_SHAPE, "the pool is larger than the input");
	li = lay1(im, mx ? "MaxPooling2D" : "AveragePooling2D", node_label(im), ref,
			  "\"pool_size\": [%lld, %lld], \"strides\": [%lld, %lld], \"padding\": \"%s\"",
			  (long long) ks[0], (long long) ks[1], (long long) st[0], (long long) st[1], padding);
	if (li < 0)
		return im->err->code;
	return out_tensor(im, n->output[0], li, LAY_NHWC, 4, dims) ? DL_OK : im->err->code;
}

/* GlobalAveragePool: (N, C, H, W) -> (N, C, 1, 1), held as (1, 1, C) */
static DlStatus
op_global_pool(Im *im, bool mx)
{
	Val		   *x = in_val(im, 0);
	int			ref, li, li2;
	DlStatus	s;
	int64_t		dims[4];
	char		nm[DL_NAME_MAX];

	if ((s = ref_nhwc(im, x, &ref)) != DL_OK)
		return s;
	x = in_val(im, 0);
	if (x->rank == 3)
		li = lay1(im, mx ? "GlobalMaxPooling1D" : "GlobalAveragePooling1D", node_label(im), ref, "%s", "");
	else
		li = lay1(im, mx ? "GlobalMaxPooling2D" : "GlobalAveragePooling2D", node_label(im), ref, "%s", "");
	if (li < 0)
		return im->err->code;
	snprintf(nm, sizeof(nm), "%.100s_keepdims", node_label(im));
	if (x->rank == 3)
		li2 = lay1(im, "Reshape", nm, li, "\"target_shape\": [1, %lld]", (long long) x->dims[1]);
	else
		li2 = lay1(im, "Reshape", nm, li, "\"target_shape\": [1, 1, %lld]", (long long) x->dims[1]);
	if (li2 < 0)
		return im->err->code;
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	dims[2] = dims[3] = 1;
	return out_tensor(im, im->node->output[0], li2, LAY_NHWC, x->rank, dims) ? DL_OK : im->err->code;
}

/* ReduceMean/ReduceMax over axes 2 and 3 of NCHW (or 1, 2 of NHWC data) */
static DlStatus
op_reduce(Im *im, bool mx)
{
	const Onnx__NodeProto *n = im->node;
	Val		   *x = in_val(im, 0);
	Val		   *ax = in_val(im, 1);
	int64_t		axes[4];
	int			na;
	int			keep = (int) attr_int(n, "keepdims", 1);
	int			ref, li;
	DlStatus	s;
	int64_t		dims[4];

	if (ax && ax->kind == VAL_CONST && ax->count <= 4)
	{
		na = (int) ax->count;
		memcpy(axes, ax->i, sizeof(int64_t) * (size_t) na);
	}
	else
		na = attr_ints(n, "axes", axes, 4);
	if (x->kind == VAL_TENSOR && x->rank == 3 && na == 1 && !keep &&
		((x->layout == LAY_PLAIN && norm_axis(axes[0], 3) == 1) ||
		 (x->layout == LAY_NHWC && norm_axis(axes[0], 3) == 2)))
	{
		/* over the steps of (N, L, C) data, or of (N, C, L) held as (L, C) */
		int64_t		d2[2] = {x->dims[0], x->layout == LAY_PLAIN ? x->dims[2] : x->dims[1]};

		li = lay1(im, mx ? "GlobalMaxPooling1D" : "GlobalAveragePooling1D", node_label(im), x->ref, "%s", "");
		if (li < 0)
			return im->err->code;
		return out_tensor(im, n->output[0], li, LAY_PLAIN, 2, d2) ? DL_OK : im->err->code;
	}
	if (x->kind != VAL_TENSOR || x->rank != 4 || na != 2)
		return im_unsup(im, "only a reduction over the spatial axes of a 3-d or 4-d tensor is converted");
	for (int k = 0; k < 2; k++)
		axes[k] = norm_axis(axes[k], 4);
	if (x->layout == LAY_PLAIN && ((axes[0] == 1 && axes[1] == 2) || (axes[0] == 2 && axes[1] == 1)))
	{
		/* the data is channels last already (e.g. export_onnx's) */
		ref = x->ref;
		dims[0] = x->dims[0];
		dims[1] = x->dims[3];
	}
	else if ((axes[0] == 2 && axes[1] == 3) || (axes[0] == 3 && axes[1] == 2))
	{
		if ((s = ref_nhwc(im, x, &ref)) != DL_OK)
			return s;
		x = in_val(im, 0);
		dims[0] = x->dims[0];
		dims[1] = x->dims[1];
		if (keep)
		{
			Val		   *o = NULL;

			(void) o;
			return op_global_pool(im, mx);
		}
	}
	else
		return im_unsup(im, "only a reduction over the two spatial axes of a 4-d tensor is converted");
	if (keep)
		return im_unsup(im, "keepdims=1 over axes 1 and 2");
	li = lay1(im, mx ? "GlobalMaxPooling2D" : "GlobalAveragePooling2D", node_label(im), ref, "%s", "");
	if (li < 0)
		return im->err->code;
	return out_tensor(im, n->output[0], li, LAY_PLAIN, 2, dims) ? DL_OK : im->err->code;
}

static DlStatus
op_batchnorm(Im *im)
{
	Val		   *x = in_val(im, 0);
	Val		   *p[4];
	int64_t		C;
	int			ref, li;
	DlStatus	s;
	Layout		lay;
	float	   *w;
	Val			xv;

	for (int k = 0; k < 4; k++)
	{
		p[k] = in_val(im, k + 1);
		if (p[k] == NULL || p[k]->kind != VAL_CONST)
			return im_unsup(im, "scale, B, mean and var must be constants");
	}
	if (x->kind != VAL_TENSOR || x->rank < 2 || x->rank > 4)
		return im_unsup(im, "only (N, C), (N, C, L) and (N, C, H, W) inputs are converted");
	C = x->dims[1];
	for (int k = 0; k < 4; k++)
		if (p[k]->count != (size_t) C)
			return im_err(im, DL_ERR_SHAPE, "\"%.100s\" has %zu values for %lld channels", p[k]->name,
						  p[k]->count, (long long) C);
	for (size_t k = 1; k < im->node->n_output; k++)
		if (im->node->output[k] && im->node->output[k][0])
			return im_unsup(im, "training-mode outputs (running mean and variance)");
	if (x->rank >= 3)
	{
		if ((s = ref_nhwc(im, x, &ref)) != DL_OK)
			return s;
		lay = LAY_NHWC;
	}
	else
	{
		if ((s = ref_plain(im, x, &ref)) != DL_OK)
			return s;
		lay = LAY_PLAIN;
	}
	xv = *in_val(im, 0);
	li = lay1(im, "BatchNormalization", node_label(im), ref,
			  "\"axis\": -1, \"epsilon\": %.9g, \"momentum\": %.9g, \"center\": true, \"scale\": true",
			  attr_float(im->node, "epsilon", 1e-5), attr_float(im->node, "momentum", 0.9));
	if (li < 0)
		return im->err->code;
	w = lay_weights(im, li, (size_t) (4 * C));
	if (w == NULL)
		return im->err->code;
	for (int k = 0; k < 4; k++)
	{
		p[k] = in_val(im, k + 1);
		memcpy(w + k * C, p[k]->f, sizeof(float) * (size_t) C);
	}
	return out_tensor(im, im->node->output[0], li, lay, xv.rank, xv.dims) ? DL_OK : im->err->code;
}

/* LayerNormalization over the last axis */
static DlStatus
op_layernorm(Im *im)
{
	Val		   *x = in_val(im, 0),
			   *g = in_val(im, 1),
			   *b = in_val(im, 2);
	int			ref, li;
	DlStatus	s;
	int64_t		C;
	float	   *w;
	Val			xv;

	if (x->kind != VAL_TENSOR || g->kind != VAL_CONST || (b && b->kind != VAL_CONST))
		return im_unsup(im, "scale and B must be constants");
	if (norm_axis(attr_int(im->node, "axis", -1), x->rank) != x->rank - 1)
		return im_unsup(im, "normalization over axes other than the last");
	for (size_t k = 1; k < im->node->n_output; k++)
		if (im->node->output[k] && im->node->output[k][0])
			return im_unsup(im, "the Mean and InvStdDev outputs");
	if ((s = ref_plain(im, x, &ref)) != DL_OK)
		return s;
	xv = *in_val(im, 0);
	g = in_val(im, 1);
	b = in_val(im, 2);
	C = xv.dims[xv.rank - 1];
	if (g->count != (size_t) C || (b && b->count != (size_t) C))
		return im_err(im, DL_ERR_SHAPE, "scale and B must have %lld values", (long long) C);
	li = lay1(im, "LayerNormalization", node_label(im), ref,
			  "\"axis\": -1, \"epsilon\": %.9g, \"center\": true, \"scale\": true",
			  attr_float(im->node, "epsilon", 1e-5));
	if (li < 0)
		return im->err->code;
	w = lay_weights(im, li, (size_t) (2 * C));
	if (w == NULL)
		return im->err->code;
	memcpy(w, in_val(im, 1)->f, sizeof(float) * (size_t) C);
	if (b)
		memcpy(w + C, in_val(im, 2)->f, sizeof(float) * (size_t) C);
	return out_tensor(im, im->node->output[0], li, LAY_PLAIN, xv.rank, xv.dims) ? DL_OK : im->err->code;
}

static DlStatus
op_flatten(Im *im)
{
	Val		   *x = in_val(im, 0);
	int			axis;
	int			ref, li;
	DlStatus	s;
	int64_t		dims[2];
	int64_t		size = 1;

	if (x->kind != VAL_TENSOR)
		return im_unsup(im, "input must be a computed tensor");
	axis = norm_axis(attr_int(im->node, "axis", 1), x->rank);
	if (axis != 1)
		return im_unsup(im, "axis %lld (1 is converted)", (long long) attr_int(im->node, "axis", 1));
	for (int d = 1; d < x->rank; d++)
		size *= x->dims[d];
	dims[0] = x->dims[0];
	dims[1] = size;
	if (x->rank == 2 && x->layout == LAY_PLAIN)
		return alias(im, x);
	if (x->layout == LAY_NHWC && x->dims[2] * (x->rank == 4 ? x->dims[3] : 1) == 1)
		ref = x->ref;			/* (1, 1, C) flattens as (C, 1, 1) */
	else if ((s = ref_plain(im, x, &ref)) != DL_OK)
		return s;
	li = lay1(im, "Flatten", node_label(im), ref, "%s", "");
	if (li < 0)
		return im->err->code;
	return out_tensor(im, im->node->output[0], li, LAY_PLAIN, 2, dims) ? DL_OK : im->err->code;
}

static DlStatus
op_reshape(Im *im)
{
	Val		   *x = in_val(im, 0),
			   *sh = in_val(im, 1);
	int64_t		dims[MAX_DIMS];
	int64_t		size = 1, known = 1;
	int			infer = -1;
	int			ref, li;
	DlStatus	s;
	char		cfg[256];
	size_t		pos;

	if (sh == NULL || sh->kind != VAL_CONST || !sh->is_int || sh->count < 1 || sh->count > DL_MAX_RANK + 1)
		return im_unsup(im, "the shape must be a constant of 1 to %d integers", DL_MAX_RANK + 1);
	if (x->kind == VAL_RNN_Y_TNDH)
	{
		/* (T, N, 2, H) -> (T, N, 2H): the bidirectional sequence, time major */
		int			ri = x->rnn;
		int64_t		T = x->dims[0], H2 = 2 * x->dims[3];
		int64_t		d3[3] = {T, x->dims[1], H2};
		int			lj;
		Val		   *o;

		if (sh->count != 3 || !(sh->i[0] == 0 || sh->i[0] == T) ||
			!(sh->i[1] == 0 || sh->i[1] == -1 || sh->i[1] == BATCH_DIM) || !(sh->i[2] == -1 || sh->i[2] == H2))
			return im_unsup(im, "a reshape of a bidirectional sequence other than to (T, N, 2H)");
		lj = rnn_layer(im, ri, true);
		if (lj < 0)
			return im->err->code;
		o = out_tensor(im, im->node->output[0], lj, LAY_TIME_MAJOR, 3, d3);
		if (o == NULL)
			return im->err->code;
		o->rnn = ri;
		o->seq_tm = true;
		return DL_OK;
	}
	if (x->kind != VAL_TENSOR)
		return im_unsup(im, "input must be a computed tensor");
	if (sh->i[0] != 0 && sh->i[0] != -1 && sh->i[0] != BATCH_DIM)
		return im_unsup(im, "the shape's first dimension must keep the batch (0 or -1)");
	for (int d = 1; d < x->rank; d++)
		size *= x->dims[d];
	dims[0] = x->dims[0];
	for (size_t d = 1; d < sh->count; d++)
	{
		int64_t		v = sh->i[d];

		if (v == BATCH_DIM)
			return im_unsup(im, "a shape that moves the batch dimension");
		if (v == 0)
			v = (int) d < x->rank ? x->dims[d] : 0;
		if (v == -1)
		{
			if (infer >= 0)
				return im_err(im, DL_ERR_SHAPE, "the shape has two -1");
			infer = (int) d;
			continue;
		}
		if (v < 1 || v > size || known > size / v)
			return im_err(im, DL_ERR_SHAPE, "the shape has dimension %lld", (long long) sh->i[d]);
		dims[d] = v;
		known *= v;
	}
	if (infer >= 0)
	{
		if (known == 0 || size % known != 0)
			return im_err(im, DL_ERR_SHAPE, "the shape does not divide the input's %lld values", (long long) size);
		dims[infer] = size / known;
		known = size;
	}
	if (known != size || sh->count < 2)
		return im_err(im, DL_ERR_SHAPE, "the shape does not hold the input's %lld values", (long long) size);
	if (x->squash && (int) sh->count == x->rank - 1)
	{
		bool		same = dims[sh->count - 1] == x->dims[x->rank - 2] * x->dims[x->rank - 1];

		for (int d = 1; d < x->rank - 2 && same; d++)
			same = dims[d] == x->dims[d];
		if (same)
		{
			/* the engine holds it merged already */
			Val			xv = *x;
			Val		   *o;

			o = out_tensor(im, im->node->output[0], xv.ref, LAY_PLAIN, (int) sh->count, dims);
			if (o == NULL)
				return im->err->code;
			o->rnn = xv.rnn;
			return DL_OK;
		}
	}
	if ((s = ref_plain(im, x, &ref)) != DL_OK)
		return s;
	pos = (size_t) snprintf(cfg, sizeof(cfg), "\"target_shape\": [");
	for (size_t d = 1; d < sh->count; d++)
		pos += (size_t) snprintf(cfg + pos, sizeof(cfg) - pos, "%s%lld", d > 1 ? ", " : "", (long long) dims[d]);
	snprintf(cfg + pos, sizeof(cfg) - pos, "]");
	li = lay1(im, "Reshape", node_label(im), ref, "%s", cfg);
	if (li < 0)
		return im->err->code;
	return out_tensor(im, im->node->output[0], li, LAY_PLAIN, (int) sh->count, dims) ? DL_OK : im->err->code;
}

static int	rnn_layer(Im *im, int ri, bool seq);

static DlStatus
op_transpose(Im *im)
{
	Val		   *x = in_val(im, 0);
	int64_t		perm[MAX_DIMS];
	int			k;
	int			ref, li;
	DlStatus	s;
	int64_t		dims[MAX_DIMS];
	bool		ident = true;
	char		cfg[128];
	size_t		pos;
	Val		   *o;
	Val			xv;

	k = attr_ints(im->node, "perm", perm, MAX_DIMS);
	if (x->kind == VAL_RNN_Y && k == 4 && perm[0] == 2 && perm[1] == 0 && perm[2] == 1 && perm[3] == 3)
	{
		/* Y (T, 1, N, H) -> (N, T, 1, H): the full sequence, batch first */
		int			ri = x->rnn;
		int64_t		d4[4] = {x->dims[2], x->dims[0], x->dims[1], x->dims[3]};
		Val		   *o;

		if (im->rnns[ri].reverse)
			return im_unsup(im, "the full sequence of a reverse recurrent layer");
		li = rnn_layer(im, ri, true);
		if (li < 0)
			return im->err->code;
		o = out_tensor(im, im->node->output[0], li, LAY_PLAIN, 4, d4);
		if (o == NULL)
			return im->err->code;
		o->rnn = ri;
		o->squash = true;
		return DL_OK;
	}
	if (x->kind == VAL_RNN_YH && im->rnns[x->rnn].D == 2 && k == 3 && perm[0] == 1 && perm[1] == 0 && perm[2] == 2)
	{
		/* Y_h (2, N, H) -> (N, 2, H): the final states, forward's then backward's */
		int64_t		d3[3] = {x->dims[1], 2, x->dims[2]};
		int			lj = rnn_layer(im, x->rnn, false);

		Val		   *o;

		if (lj < 0)
			return im->err->code;
		o = out_tensor(im, im->node->output[0], lj, LAY_PLAIN, 3, d3);
		if (o == NULL)
			return im->err->code;
		o->squash = true;
		return DL_OK;
	}
	if (x->kind == VAL_RNN_Y && im->rnns[x->rnn].D == 2 && k == 4 && perm[0] == 0 && perm[1] == 2 &&
		perm[2] == 1 && perm[3] == 3)
	{
		/* Y (T, 2, N, H) -> (T, N, 2, H), as PyTorch writes for a batch-first layer */
		int64_t		d4[4] = {x->dims[0], x->dims[2], 2, x->dims[3]};
		int			ri = x->rnn;
		Val		   *o = out_tensor(im, im->node->output[0], 0, LAY_PLAIN, 4, d4);

		if (o == NULL)
			return im->err->code;
		o->kind = VAL_RNN_Y_TNDH;
		o->rnn = ri;
		return DL_OK;
	}
	if (x->kind != VAL_TENSOR)
		return im_unsup(im, "input must be a computed tensor");
	if (k < 0)
	{
		k = x->rank;
		for (int d = 0; d < k; d++)
			perm[d] = k - 1 - d;
	}
	if (k != x->rank)
		return im_err(im, DL_ERR_SHAPE, "perm has %d axes, the input %d", k, x->rank);
	for (int d = 0; d < k; d++)
	{
		if (perm[d] < 0 || perm[d] >= k)
			return im_err(im, DL_ERR_SHAPE, "perm names axis %lld", (long long) perm[d]);
		for (int e = 0; e < d; e++)
			if (perm[e] == perm[d])
				return im_err(im, DL_ERR_SHAPE, "perm names axis %lld twice", (long long) perm[d]);
		dims[d] = x->dims[perm[d]];
		ident = ident && perm[d] == d;
	}
	xv = *x;
	if (ident)
		return alias(im, x);
	/* (N, T, F) <-> (T, N, F): the engine keeps batch first */
	if (k == 3 && perm[0] == 1 && perm[1] == 0 && perm[2] == 2 &&
		(xv.layout == LAY_PLAIN || xv.layout == LAY_TIME_MAJOR))
	{
		if ((s = alias(im, x)) != DL_OK)
			return s;
		o = &im->vals[val_find(im, im->node->output[0])];
		o->layout = xv.layout == LAY_PLAIN ? LAY_TIME_MAJOR : LAY_PLAIN;
		memcpy(o->dims, dims, sizeof(dims));
		o->seq_tm = !xv.seq_tm;
		return DL_OK;
	}
	if (perm[0] != 0)
		return im_unsup(im, "a perm that moves the batch axis");
	/* channels last <-> first without a layer */
	if ((k == 4 && xv.layout == LAY_PLAIN && perm[1] == 3 && perm[2] == 1 && perm[3] == 2) ||
		(k == 3 && xv.layout == LAY_PLAIN && perm[1] == 2 && perm[2] == 1))
	{
		if ((s = alias(im, x)) != DL_OK)
			return s;
		o = &im->vals[val_find(im, im->node->output[0])];
		o->layout = LAY_NHWC;
		o->nhwc_ref = INT32_MIN;
		o->plain_ref = INT32_MIN;
		memcpy(o->dims, dims, sizeof(dims));
		return DL_OK;
	}
	if ((k == 4 && xv.layout == LAY_NHWC && perm[1] == 2 && perm[2] == 3 && perm[3] == 1) ||
		(k == 3 && xv.layout == LAY_NHWC && perm[1] == 2 && perm[2] == 1))
	{
		if ((s = alias(im, x)) != DL_OK)
			return s;
		o = &im->vals[val_find(im, im->node->output[0])];
		o->layout = LAY_PLAIN;
		o->nhwc_ref = INT32_MIN;
		o->plain_ref = INT32_MIN;
		memcpy(o->dims, dims, sizeof(dims));
		return DL_OK;
	}
	if ((s = ref_plain(im, x, &ref)) != DL_OK)
		return s;
	pos = (size_t) snprintf(cfg, sizeof(cfg), "\"dims\": [");
	for (int d = 1; d < k; d++)
		pos += (size_t) snprintf(cfg + pos, sizeof(cfg) - pos, "%s%lld", d > 1 ? ", " : "", (long long) perm[d]);
	snprintf(cfg + pos, sizeof(cfg) - pos, "]");
	li = lay1(im, "Permute", node_label(im), ref, "%s", cfg);
	if (li < 0)
		return im->err->code;
	return out_tensor(im, im->node->output[0], li, LAY_PLAIN, k, dims) ? DL_OK : im->err->code;
}

static DlStatus
op_softmax(Im *im)
{
	Val		   *x = in_val(im, 0);
	int			axis;

	if (x->kind != VAL_TENSOR)
		return im_unsup(im, "input must be a computed tensor");
	axis = norm_axis(attr_int(im->node, "axis", im->opset >= 13 ? -1 : 1), x->rank);
	if (im->opset < 13 && x->rank != 2)
		return im_unsup(im, "Softmax before opset 13 over a tensor of rank %d", x->rank);
	if ((x->layout == LAY_PLAIN && axis == x->rank - 1) || (x->layout == LAY_NHWC && axis == 1))
		return op_elementwise(im, x, "Activation", "\"activation\": \"softmax\"");
	if (x->layout == LAY_PLAIN && x->rank == 4 && axis == 1)
	{
		int			ref;
		DlStatus	s = ref_nhwc(im, x, &ref);
		Val			v;
		int			li;

		if (s != DL_OK)
			return s;
		v = *in_val(im, 0);
		li = lay1(im, "Activation", node_label(im), ref, "\"activation\": \"softmax\"");
		if (li < 0)
			return im->err->code;
		return out_tensor(im, im->node->output[0], li, LAY_NHWC, 4, v.dims) ? DL_OK : im->err->code;
	}
	return im_unsup(im, "softmax over axis %d (the last axis, or the channels, is converted)", axis);
}

static DlStatus rnn_last(Im *im, int ri, const char *out);
static DlStatus fold_gather(Im *im, Val *data, Val *idx);

static DlStatus
op_gather(Im *im)
{
	Val		   *data = in_val(im, 0),
			   *idx = in_val(im, 1);
	int64_t		axis = attr_int(im->node, "axis", 0);

	if (data->kind == VAL_CONST && idx->kind == VAL_CONST)
		return fold_gather(im, data, idx);
	if (data->kind == VAL_CONST && idx->kind == VAL_TENSOR)
	{
		/* an embedding lookup */
		int			ref, li;
		DlStatus	s;
		int64_t		dims[MAX_DIMS];
		float	   *w;
		Val			iv;

		if (axis != 0 || data->rank != 2)
			return im_unsup(im, "an embedding is a 2-d constant gathered along axis 0");
		if (idx->rank + 1 > DL_MAX_RANK + 1)
			return im_unsup(im, "indices of rank %d", idx->rank);
		if ((s = ref_plain(im, idx, &ref)) != DL_OK)
			return s;
		iv = *in_val(im, 1);
		data = in_val(im, 0);
		li = lay1(im, "Embedding", node_label(im), ref, "\"input_dim\": %lld, \"output_dim\": %lld",
				  (long long) data->dims[0], (long long) data->dims[1]);
		if (li < 0)
			return im->err->code;
		w = lay_weights(im, li, data->count);
		if (w == NULL)
			return im->err->code;
		memcpy(w, in_val(im, 0)->f, sizeof(float) * in_val(im, 0)->count);
		memcpy(dims, iv.dims, sizeof(int64_t) * (size_t) iv.rank);
		dims[iv.rank] = in_val(im, 0)->dims[1];
		return out_tensor(im, im->node->output[0], li, LAY_PLAIN, iv.rank + 1, dims) ? DL_OK : im->err->code;
	}
	if (idx->kind == VAL_CONST && idx->count == 1 && data->kind == VAL_RNN_YH &&
		im->rnns[data->rnn].D == 2 && norm_axis(axis, 3) == 0)
	{
		/* h_n[-2] (forward) or h_n[-1] (backward) of a bidirectional layer */
		int64_t		t = idx->i[0];
		int			ri = data->rnn;
		int64_t		d2[2] = {data->dims[1], data->dims[2]};
		Val		   *o;

		if (t < -2 || t > 1)
			return im_err(im, DL_ERR_SHAPE, "index %lld of a bidirectional state", (long long) t);
		o = out_tensor(im, im->node->output[0], 0, LAY_PLAIN, 2, d2);
		if (o == NULL)
			return im->err->code;
		o->kind = VAL_RNN_YH_DIR;
		o->rnn = ri;
		o->dir = (t == 0 || t == -2) ? 0 : 1;
		return DL_OK;
	}
	if (idx->kind == VAL_CONST && idx->count == 1 && (data->kind == VAL_RNN_YH || data->rnn >= 0))
	{
		/* h_n[-1], or output[:, -1, :] */
		Rnn		   *r = &im->rnns[data->rnn];
		int64_t		t = idx->i[0];
		int			want_axis = data->kind == VAL_RNN_YH ? 0 : (data->seq_tm ? 0 : 1);

		if (r->D != 1)
			return im_unsup(im, "a gather from a bidirectional output other than of its final states");

		if (norm_axis(axis, data->rank) != want_axis)
			return im_unsup(im, "a gather from a recurrent output other than its last step");
		if (data->kind == VAL_RNN_YH ? (t != 0 && t != -1) : (t != -1 && t != r->T - 1) || r->reverse)
			return im_unsup(im, "a gather from a recurrent output other than its last step");
		return rnn_last(im, data->rnn, im->node->output[0]);
	}
	return im_unsup(im, "Gather other than an embedding lookup or a recurrent layer's last step");
}

/* ------------------------------------------------------------------ */
/* recurrent layers */

static int
rnn_layer(Im *im, int ri, bool seq)
{
	Rnn		   *r = &im->rnns[ri];
	int			li;
	char		nm[DL_NAME_MAX];
	char		inner[768];
	size_t		nk = (size_t) (r->I * (r->gru ? 3 : 4) * r->H);
	size_t		nr = (size_t) (r->H * (r->gru ? 3 : 4) * r->H);
	float	   *w;

	if ((seq ? r->layer_seq : r->layer_last) >= 0)
		return seq ? r->layer_seq : r->layer_last;
	snprintf(nm, sizeof(nm), "%.100s%s", r->name, seq ? "_seq" : "");
	if (r->gru)
		snprintf(inner, sizeof(inner),
				 "\"units\": %lld, \"activation\": \"tanh\", \"recurrent_activation\": \"sigmoid\", "
				 "\"use_bias\": true, \"return_sequences\": %s, \"go_backwards\": %s, \"reset_after\": %s",
				 (long long) r->H, seq ? "true" : "false", r->reverse ? "true" : "false",
				 r->reset_after ? "true" : "false");
	else
		snprintf(inner, sizeof(inner),
				 "\"units\": %lld, \"activation\": \"tanh\", \"recurrent_activation\": \"sigmoid\", "
				 "\"use_bias\": true, \"return_sequences\": %s, \"go_backwards\": %s, \"unit_forget_bias\": false",
				 (long long) r->H, seq ? "true" : "false", r->reverse ? "true" : "false");
	if (r->D == 2)
		li = lay1(im, "Bidirectional", nm, r->x_ref,
				  "\"merge_mode\": \"concat\", \"layer\": {\"class_name\": \"%s\", \"config\": {\"name\": \"%.100s_fwd\", %s}}",
				  r->gru ? "GRU" : "LSTM", nm, inner);
	else
		li = lay1(im, r->gru ? "GRU" : "LSTM", nm, r->x_ref, "%s", inner);
	if (li < 0)
		return -1;
	r = &im->rnns[ri];
	w = lay_weights(im, li, (size_t) r->D * (nk + nr + r->n_bias));
	if (w == NULL)
		return -1;
	for (int d = 0; d < r->D; d++)
	{
		float	   *wd = w + (size_t) d * (nk + nr + r->n_bias);

		memcpy(wd, r->kernel + (size_t) d * nk, nk * sizeof(float));
		memcpy(wd + nk, r->recurrent + (size_t) d * nr, nr * sizeof(float));
		memcpy(wd + nk + nr, r->bias + (size_t) d * r->n_bias, r->n_bias * sizeof(float));
	}
	if (seq)
		r->layer_seq = li;
	else
		r->layer_last = li;
	return li;
}

static DlStatus
rnn_last(Im *im, int ri, const char *out)
{
	int			li = rnn_layer(im, ri, false);
	int64_t		dims[2];
	Rnn		   *r;

	if (li < 0)
		return im->err->code;
	r = &im->rnns[ri];
	dims[0] = 1;				/* batch, not known here */
	dims[1] = r->D * r->H;
	return out_tensor(im, out, li, LAY_PLAIN, 2, dims) ? DL_OK : im->err->code;
}

static DlStatus
op_rnn(Im *im, bool gru)
{
	const Onnx__NodeProto *n = im->node;
	Val		   *x = in_val(im, 0),
			   *W = in_val(im, 1),
			   *R = in_val(im, 2),
			   *B = in_val(im, 3);
	int			G = gru ? 3 : 4;
	int			D;
	int64_t		H = attr_int(n, "hidden_size", 0);
	int64_t		I;
	Rnn		   *r;
	static const int lstm_map[4] = {0, 2, 3, 1};	/* Keras i f c o -> ONNX i o f c */

	if (x->kind != VAL_TENSOR || x->layout != LAY_TIME_MAJOR || x->rank != 3)
		return im_unsup(im, "the input must be a batch-first sequence transposed to (T, N, F)");
	if (W->kind != VAL_CONST || R->kind != VAL_CONST || (B && B->kind != VAL_CONST))
		return im_unsup(im, "W, R and B must be constants");
	if (in_val(im, 4))
		return im_unsup(im, "sequence_lens");
	for (int k = 5; k < 8; k++)
	{
		Val		   *s = in_val(im, k);

		if (s == NULL)
			continue;
		if (s->kind != VAL_CONST || k == 7)
			return im_unsup(im, "initial states other than zeros, or peepholes");
		if (s->zero_fill)
			continue;
		for (size_t j = 0; j < s->count; j++)
			if (s->f[j] != 0.0f)
				return im_unsup(im, "initial states other than zeros");
	}
	if (attr(n, "activations"))
	{
		const Onnx__AttributeProto *a = attr(n, "activations");
		static const char *const dflt[3] = {"Sigmoid", "Tanh", "Tanh"};
		size_t		per = gru ? 2 : 3;
		size_t		want = per * (attr_str_is(n, "direction", "bidirectional", "forward") ? 2 : 1);

		if (a->n_strings != want)
			return im_unsup(im, "activations other than the defaults");
		for (size_t k = 0; k < want; k++)
			if (a->strings[k].len != strlen(dflt[k % per]) ||
				memcmp(a->strings[k].data, dflt[k % per], a->strings[k].len) != 0)
				return im_unsup(im, "activations other than the defaults (Sigmoid, Tanh%s)", gru ? "" : ", Tanh");
	}
	if (attr(n, "clip") || attr_int(n, "input_forget", 0) || attr_int(n, "layout", 0))
		return im_unsup(im, "clip, input_forget or layout other than the defaults");
	I = x->dims[2];
	D = attr_str_is(n, "direction", "bidirectional", "forward") ? 2 : 1;
	if (H < 1 || H > 1 << 20 || W->rank != 3 || W->dims[0] != D || W->dims[1] != G * H || W->dims[2] != I ||
		R->rank != 3 || R->dims[0] != D || R->dims[1] != G * H || R->dims[2] != H ||
		(B && (B->count != (size_t) (D * 2 * G * H))))
		return im_err(im, DL_ERR_SHAPE, "W, R and B do not fit hidden_size %lld and %lld features",
					  (long long) H, (long long) I);
	if (im->n_rnns == im->cap_rnns)
	{
		int			ncap = im->cap_rnns ? im->cap_rnns * 2 : 8;
		Rnn		   *nr = dl_onnx_arena_alloc(&im->arena, sizeof(Rnn) * (size_t) ncap);

		if (nr == NULL)
			return im_oom(im);
		if (im->n_rnns)
			memcpy(nr, im->rnns, sizeof(Rnn) * (size_t) im->n_rnns);
		im->rnns = nr;
		im->cap_rnns = ncap;
	}
	r = &im->rnns[im->n_rnns];
	memset(r, 0, sizeof(*r));
	r->gru = gru;
	r->x_ref = x->ref;
	r->T = x->dims[0];
	r->I = I;
	r->H = H;
	r->reverse = attr_str_is(n, "direction", "reverse", "forward");
	r->reset_after = gru && attr_int(n, "linear_before_reset", 0) != 0;
	r->layer_seq = r->layer_last = -1;
	r->D = D;
	snprintf(r->name, sizeof(r->name), "%.100s", node_label(im));
	r->kernel = dl_onnx_arena_alloc(&im->arena, sizeof(float) * (size_t) (D * I * G * H));
	r->recurrent = dl_onnx_arena_alloc(&im->arena, sizeof(float) * (size_t) (D * H * G * H));
	r->n_bias = (size_t) (r->reset_after ? 2 * G * H : G * H);
	r->bias = dl_onnx_arena_alloc(&im->arena, sizeof(float) * r->n_bias * (size_t) D);
	if (!r->kernel || !r->recurrent || !r->bias)
		return im_oom(im);
	for (int d = 0; d < D; d++)
	for (int g = 0; g < G; g++)
	{
		int			og = gru ? g : lstm_map[g];

		for (int64_t u = 0; u < H; u++)
		{
			int64_t		row = d * G * H + og * H + u;
			float	   *kd = r->kernel + (size_t) d * I * G * H;
			float	   *rd = r->recurrent + (size_t) d * H * G * H;
			float	   *bd = r->bias + (size_t) d * r->n_bias;
			const float *bs = B ? B->f + (size_t) d * 2 * G * H : NULL;

			for (int64_t i = 0; i < I; i++)
				kd[i * G * H + g * H + u] = W->f[row * I + i];
			for (int64_t j = 0; j < H; j++)
				rd[j * G * H + g * H + u] = R->f[row * H + j];
			if (bs)
			{
				float		wb = bs[og * H + u],
							rb = bs[G * H + og * H + u];

				if (r->reset_after)
				{
					bd[g * H + u] = wb;
					bd[G * H + g * H + u] = rb;
				}
				else
					bd[g * H + u] = wb + rb;
			}
		}
	}
	im->n_rnns++;
	/* outputs: Y (T, 1, N, H), Y_h (1, N, H); Y_c must be unused */
	for (size_t k = 0; k < n->n_output && k < 2; k++)
	{
		Val		   *o;

		if (n->output[k] == NULL || n->output[k][0] == '\0')
			continue;
		if (val_find(im, n->output[k]) >= 0)
			return im_err(im, DL_ERR_INVALID_ARGUMENT, "tensor \"%.100s\" is produced twice", n->output[k]);
		o = val_new(im, n->output[k]);
		if (o == NULL)
			return im_oom(im);
		o->kind = k == 0 ? VAL_RNN_Y : VAL_RNN_YH;
		o->rnn = im->n_rnns - 1;
		if (k == 0)
		{
			o->rank = 4;
			o->dims[0] = im->rnns[o->rnn].T;
			o->dims[1] = D;
			o->dims[2] = in_val(im, 0)->dims[1];
			o->dims[3] = H;
		}
		else
		{
			o->rank = 3;
			o->dims[0] = D;
			o->dims[1] = in_val(im, 0)->dims[1];
			o->dims[2] = H;
		}
	}
	if (n->n_output > 2 && n->output[2] && n->output[2][0])
	{
		int			vi = -1;

		(void) vi;
		/* Y_c: refused if read (it is never registered, so a reader fails) */
	}
	return DL_OK;
}

static DlStatus
op_squeeze(Im *im)
{
	Val		   *x = in_val(im, 0);
	Val		   *ax = in_val(im, 1);
	int64_t		axes[MAX_DIMS];
	int			na;

	if (ax && ax->kind == VAL_CONST && ax->count <= MAX_DIMS)
	{
		na = (int) ax->count;
		memcpy(axes, ax->i, sizeof(int64_t) * (size_t) na);
	}
	else
		na = attr_ints(im->node, "axes", axes, MAX_DIMS);
	if ((x->kind == VAL_RNN_YH || x->kind == VAL_RNN_Y) && im->rnns[x->rnn].D != 1)
		return im_unsup(im, "Squeeze of a bidirectional output");
	if (x->kind == VAL_RNN_YH && na == 1 && norm_axis(axes[0], 3) == 0)
		return rnn_last(im, x->rnn, im->node->output[0]);
	if (x->kind == VAL_RNN_Y && na == 1 && norm_axis(axes[0], 4) == 1)
	{
		int			ri = x->rnn;
		int64_t		dims[3] = {x->dims[0], x->dims[2], x->dims[3]};
		int			li;
		Val		   *o;

		if (im->rnns[ri].reverse)
			return im_unsup(im, "the full sequence of a reverse recurrent layer");
		li = rnn_layer(im, ri, true);
		if (li < 0)
			return im->err->code;
		o = out_tensor(im, im->node->output[0], li, LAY_TIME_MAJOR, 3, dims);
		if (o == NULL)
			return im->err->code;
		o->rnn = ri;
		o->seq_tm = true;
		return DL_OK;
	}
	return im_unsup(im, "Squeeze other than of a recurrent layer's outputs");
}

static DlStatus
op_constant(Im *im)
{
	const Onnx__AttributeProto *a = attr(im->node, "value");

	if (a && a->t)
		return const_from_tensor(im, a->t, im->node->output[0]);
	{
		Onnx__TensorProto t;
		int64_t		one = 1;
		const Onnx__AttributeProto *b;

		onnx__tensor_proto__init(&t);
		if ((b = attr(im->node, "value_float")) && b->has_f)
		{
			t.has_data_type = true;
			t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
			t.n_float_data = 1;
			t.float_data = (float *) &b->f;
		}
		else if ((b = attr(im->node, "value_int")) && b->has_i)
		{
			t.has_data_type = true;
			t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
			t.n_int64_data = 1;
			t.int64_data = (int64_t *) &b->i;
		}
		else if ((b = attr(im->node, "value_ints")))
		{
			t.has_data_type = true;
			t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
			t.n_int64_data = b->n_ints;
			t.int64_data = b->ints;
			one = (int64_t) b->n_ints;
			t.n_dims = 1;
			t.dims = &one;
		}
		else if ((b = attr(im->node, "value_floats")))
		{
			t.has_data_type = true;
			t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
			t.n_float_data = b->n_floats;
			t.float_data = b->floats;
			one = (int64_t) b->n_floats;
			t.n_dims = 1;
			t.dims = &one;
		}
		else
			return im_unsup(im, "a Constant without a value");
		return const_from_tensor(im, &t, im->node->output[0]);
	}
}

/* A new integer constant (count values, rank 1, or 0 when scalar) */
static Val *
int_const(Im *im, const char *name, const int64_t *v, size_t count, bool scalar)
{
	Val		   *o;

	if (val_find(im, name) >= 0)
	{
		im_err(im, DL_ERR_INVALID_ARGUMENT, "tensor \"%.100s\" is produced twice", name);
		return NULL;
	}
	o = val_new(im, name);
	if (o == NULL)
	{
		im_oom(im);
		return NULL;
	}
	o->kind = VAL_CONST;
	o->is_int = true;
	o->rank = scalar ? 0 : 1;
	o->dims[0] = (int64_t) count;
	o->count = count;
	o->i = dl_onnx_arena_alloc(&im->arena, sizeof(int64_t) * (count + 1));
	o->f = dl_onnx_arena_alloc(&im->arena, sizeof(float) * (count + 1));
	if (o->i == NULL || o->f == NULL)
	{
		im_oom(im);
		return NULL;
	}
	for (size_t k = 0; k < count; k++)
	{
		o->i[k] = v[k];
		o->f[k] = v[k] == BATCH_DIM ? 0.0f : (float) v[k];
	}
	return o;
}

/* Shape of a tensor: its dimensions, the batch as BATCH_DIM */
static DlStatus
op_shape(Im *im)
{
	Val		   *x = in_val(im, 0);
	int64_t		v[MAX_DIMS];

	if (x->kind != VAL_TENSOR)
		return im_unsup(im, "Shape of a constant or of a recurrent output");
	if (attr(im->node, "start") || attr(im->node, "end"))
		return im_unsup(im, "Shape with start or end");
	for (int d = 0; d < x->rank; d++)
		v[d] = x->dims[d];
	v[x->layout == LAY_TIME_MAJOR ? 1 : 0] = BATCH_DIM;
	return int_const(im, im->node->output[0], v, (size_t) x->rank, false) ? DL_OK : im->err->code;
}

/* Gather, Unsqueeze, Concat over integer constants (shape arithmetic) */
static DlStatus
fold_gather(Im *im, Val *data, Val *idx)
{
	int64_t		v[MAX_DIMS];
	size_t		n = idx->count;

	if (!data->is_int || !idx->is_int || data->rank > 1 || n > MAX_DIMS || data->zero_fill)
		return im_unsup(im, "Gather of constants other than a shape's dimensions");
	for (size_t k = 0; k < n; k++)
	{
		int64_t		j = idx->i[k];

		if (j < 0)
			j += (int64_t) data->count;
		if (j < 0 || j >= (int64_t) data->count)
			return im_err(im, DL_ERR_SHAPE, "index %lld is out of range", (long long) idx->i[k]);
		v[k] = data->i[j];
	}
	return int_const(im, im->node->output[0], v, n, idx->rank == 0) ? DL_OK : im->err->code;
}

static DlStatus
op_unsqueeze(Im *im)
{
	Val		   *x = in_val(im, 0);
	Val		   *o;

	if (x->kind != VAL_CONST || !x->is_int || x->rank > 1 || x->count > MAX_DIMS)
		return im_unsup(im, "Unsqueeze other than of a shape's dimensions");
	o = int_const(im, im->node->output[0], x->i, x->count, false);
	return o ? DL_OK : im->err->code;
}

static DlStatus
fold_concat(Im *im)
{
	int64_t		v[MAX_DIMS];
	size_t		n = 0;

	for (size_t k = 0; k < im->node->n_input; k++)
	{
		Val		   *x = in_val(im, (int) k);

		if (x == NULL || x->kind != VAL_CONST || !x->is_int || x->rank > 1 || n + x->count > MAX_DIMS)
			return im_unsup(im, "Concat of constants other than shapes");
		for (size_t j = 0; j < x->count; j++)
			v[n++] = x->i[j];
	}
	return int_const(im, im->node->output[0], v, n, false) ? DL_OK : im->err->code;
}

static DlStatus
op_constant_of_shape(Im *im)
{
	Val		   *x = in_val(im, 0);
	const Onnx__AttributeProto *a = attr(im->node, "value");
	Val		   *o;

	if (x->kind != VAL_CONST || !x->is_int)
		return im_unsup(im, "ConstantOfShape of a computed shape");
	if (a && a->t)
	{
		const Onnx__TensorProto *t = a->t;
		bool		zero = true;

		if (t->has_raw_data)
			for (size_t k = 0; k < t->raw_data.len; k++)
				zero = zero && t->raw_data.data[k] == 0;
		for (size_t k = 0; k < t->n_float_data; k++)
			zero = zero && t->float_data[k] == 0.0f;
		for (size_t k = 0; k < t->n_int64_data; k++)
			zero = zero && t->int64_data[k] == 0;
		if (!zero)
			return im_unsup(im, "ConstantOfShape of a value other than 0");
	}
	o = int_const(im, im->node->output[0], x->i, 0, false);
	if (o == NULL)
		return im->err->code;
	o->is_int = false;
	o->zero_fill = true;
	return DL_OK;
}

/* Is v a scalar constant equal to want (within float rounding)? */
static bool
const_is(const Val *v, double want)
{
	return v != NULL && v->kind == VAL_CONST && !v->zero_fill && v->count == 1 &&
		fabs((double) v->f[0] - want) <= 1e-6 * fabs(want);
}

/* a GELU step: out is stage of x */
static DlStatus
gelu_step(Im *im, int x_index, int stage)
{
	Val		   *o;
	Val			xv = im->vals[x_index];

	o = out_tensor(im, im->node->output[0], xv.ref, xv.layout, xv.rank, xv.dims);
	if (o == NULL)
		return im->err->code;
	o->kind = VAL_GELU;
	o->dir = stage;
	o->gelu_x = x_index;
	return DL_OK;
}

/*
 * Div, Erf, Add, Mul of the GELU decomposition: each step is recorded, the
 * last (Mul by 0.5) becomes Activation gelu of x.  Returns DL_OK with
 * *done false when the node is not such a step.
 */
static DlStatus
try_gelu(Im *im, const char *op, bool *done)
{
	Val		   *a = in_val(im, 0),
			   *b = in_val(im, 1);

	*done = false;
	if (strcmp(op, "Div") == 0 && a && a->kind == VAL_TENSOR && const_is(b, 1.4142135623730951))
	{
		*done = true;
		return gelu_step(im, (int) (a - im->vals), 1);
	}
	if (strcmp(op, "Erf") == 0 && a && a->kind == VAL_GELU && a->dir == 1)
	{
		*done = true;
		return gelu_step(im, a->gelu_x, 2);
	}
	if (strcmp(op, "Add") == 0 && a && b)
	{
		Val		   *g = a->kind == VAL_GELU ? a : b->kind == VAL_GELU ? b : NULL;
		Val		   *c = g == a ? b : a;

		if (g && g->dir == 2 && const_is(c, 1.0))
		{
			*done = true;
			return gelu_step(im, g->gelu_x, 3);
		}
	}
	if (strcmp(op, "Mul") == 0 && a && b)
	{
		Val		   *g = a->kind == VAL_GELU ? a : b->kind == VAL_GELU ? b : NULL;
		Val		   *c = g == a ? b : a;

		if (g && g->dir == 3 && c->kind == VAL_TENSOR && (int) (c - im->vals) == g->gelu_x)
		{
			*done = true;
			return gelu_step(im, g->gelu_x, 4);
		}
		if (g && g->dir == 3 && const_is(c, 0.5))
		{
			/* 0.5 * (1 + erf(x / sqrt 2)) first, then times x */
			*done = true;
			return gelu_step(im, g->gelu_x, 5);
		}
		if (g && (g->dir == 4 ? const_is(c, 0.5) :
				  g->dir == 5 && c->kind == VAL_TENSOR && (int) (c - im->vals) == g->gelu_x))
		{
			Val		   *x = &im->vals[g->gelu_x];

			*done = true;
			return op_elementwise(im, x, "Activation", "\"activation\": \"gelu\"");
		}
	}
	return DL_OK;
}

static DlStatus
convert_node(Im *im)
{
	const Onnx__NodeProto *n = im->node;
	const char *op = n->op_type ? n->op_type : "";
	const char *act;
	DlStatus	st;

	if (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
		return im_unsup(im, "operator of domain \"%.60s\"", n->domain);
	if (strcmp(op, "Constant") == 0)
	{
		if (n->n_output < 1 || !n->output[0] || !n->output[0][0])
			return im_err(im, DL_ERR_INVALID_ARGUMENT, "the node has no output");
		return op_constant(im);
	}
	if ((st = need_inputs(im, 1)) != DL_OK)
		return st;
	{
		bool		done;

		if ((st = try_gelu(im, op, &done)) != DL_OK || done)
			return st;
	}
	if ((act = act_of(op)) != NULL)
	{
		char		cfg[64];

		snprintf(cfg, sizeof(cfg), "\"activation\": \"%s\"", act);
		return op_elementwise(im, in_val(im, 0), "Activation", cfg);
	}
	if (strcmp(op, "Identity") == 0 || strcmp(op, "Dropout") == 0)
	{
		if (strcmp(op, "Dropout") == 0 && n->n_output > 1 && n->output[1] && n->output[1][0])
			return im_unsup(im, "the mask output of Dropout");
		return alias(im, in_val(im, 0));
	}
	if (strcmp(op, "Cast") == 0)
	{
		int64_t		to = attr_int(n, "to", 1);

		if (in_val(im, 0)->kind != VAL_TENSOR ||
			(to != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && to != ONNX__TENSOR_PROTO__DATA_TYPE__INT64 &&
			 to != ONNX__TENSOR_PROTO__DATA_TYPE__INT32))
			return im_unsup(im, "Cast to type %lld of a computed tensor", (long long) to);
		return alias(im, in_val(im, 0));
	}
	if (strcmp(op, "Gemm") == 0)
		return (st = need_inputs(im, 2)) != DL_OK ? st : op_gemm(im);
	if (strcmp(op, "MatMul") == 0)
		return (st = need_inputs(im, 2)) != DL_OK ? st : op_matmul(im);
	if (strcmp(op, "Add") == 0 || strcmp(op, "Sub") == 0 || strcmp(op, "Mul") == 0)
		return (st = need_inputs(im, 2)) != DL_OK ? st : op_binary(im, op);
	if (strcmp(op, "Sum") == 0 || strcmp(op, "Mean") == 0 || strcmp(op, "Max") == 0 || strcmp(op, "Min") == 0)
		return op_variadic(im, op);
	if (strcmp(op, "Concat") == 0)
		return in_val(im, 0)->kind == VAL_CONST ? fold_concat(im) : op_concat(im);
	if (strcmp(op, "Conv") == 0)
		return (st = need_inputs(im, 2)) != DL_OK ? st : op_conv(im);
	if (strcmp(op, "MaxPool") == 0 || strcmp(op, "AveragePool") == 0)
	{
		if (n->n_output > 1 && n->output[1] && n->output[1][0])
			return im_unsup(im, "the Indices output");
		return op_pool(im, strcmp(op, "MaxPool") == 0);
	}
	if (strcmp(op, "GlobalAveragePool") == 0 || strcmp(op, "GlobalMaxPool") == 0)
		return op_global_pool(im, strcmp(op, "GlobalMaxPool") == 0);
	if (strcmp(op, "ReduceMean") == 0 || strcmp(op, "ReduceMax") == 0)
		return op_reduce(im, strcmp(op, "ReduceMax") == 0);
	if (strcmp(op, "BatchNormalization") == 0)
		return (st = need_inputs(im, 5)) != DL_OK ? st : op_batchnorm(im);
	if (strcmp(op, "Flatten") == 0)
		return op_flatten(im);
	if (strcmp(op, "LayerNormalization") == 0)
		return (st = need_inputs(im, 2)) != DL_OK ? st : op_layernorm(im);
	if (strcmp(op, "Reshape") == 0)
		return (st = need_inputs(im, 2)) != DL_OK ? st : op_reshape(im);
	if (strcmp(op, "Transpose") == 0)
		return op_transpose(im);
	if (strcmp(op, "Softmax") == 0)
		return op_softmax(im);
	if (strcmp(op, "LeakyRelu") == 0)
	{
		char		cfg[64];

		snprintf(cfg, sizeof(cfg), "\"alpha\": %.9g", attr_float(n, "alpha", 0.01));
		return op_elementwise(im, in_val(im, 0), "LeakyReLU", cfg);
	}
	if (strcmp(op, "Elu") == 0)
	{
		if (attr_float(n, "alpha", 1.0) != 1.0)
			return im_unsup(im, "alpha other than 1");
		return op_elementwise(im, in_val(im, 0), "Activation", "\"activation\": \"elu\"");
	}
	if (strcmp(op, "Selu") == 0)
	{
		if (attr(n, "alpha") || attr(n, "gamma"))
		{
			if (fabs(attr_float(n, "alpha", 1.67326) - 1.67326319217681884765625) > 1e-6 ||
				fabs(attr_float(n, "gamma", 1.0507) - 1.05070102214813232421875) > 1e-6)
				return im_unsup(im, "alpha or gamma other than the defaults");
		}
		return op_elementwise(im, in_val(im, 0), "Activation", "\"activation\": \"selu\"");
	}
	if (strcmp(op, "HardSigmoid") == 0)
	{
		if (fabs(attr_float(n, "alpha", 0.2) - 0.2) > 1e-7 || fabs(attr_float(n, "beta", 0.5) - 0.5) > 1e-7)
			return im_unsup(im, "alpha %g, beta %g (0.2 and 0.5 are converted)",
							attr_float(n, "alpha", 0.2), attr_float(n, "beta", 0.5));
		return op_elementwise(im, in_val(im, 0), "Activation", "\"activation\": \"hard_sigmoid\"");
	}
	if (strcmp(op, "Gelu") == 0)
	{
		if (!attr_str_is(n, "approximate", "none", "none"))
			return im_unsup(im, "approximate=tanh");
		return op_elementwise(im, in_val(im, 0), "Activation", "\"activation\": \"gelu\"");
	}
	if (strcmp(op, "Gather") == 0)
		return (st = need_inputs(im, 2)) != DL_OK ? st : op_gather(im);
	if (strcmp(op, "LSTM") == 0 || strcmp(op, "GRU") == 0)
		return (st = need_inputs(im, 3)) != DL_OK ? st : op_rnn(im, strcmp(op, "GRU") == 0);
	if (strcmp(op, "Squeeze") == 0)
		return op_squeeze(im);
	if (strcmp(op, "Shape") == 0)
		return op_shape(im);
	if (strcmp(op, "Unsqueeze") == 0)
		return op_unsqueeze(im);
	if (strcmp(op, "ConstantOfShape") == 0)
		return op_constant_of_shape(im);
	return im_unsup(im, "operator %.60s is not supported", op);
}

/* ------------------------------------------------------------------ */
/* the graph */

static DlStatus
read_input(Im *im, const Onnx__ValueInfoProto *vi)
{
	const Onnx__TypeProto__Tensor *tt;
	const Onnx__TensorShapeProto *sh;
	int			k = im->n_inputs;
	int64_t		dims[MAX_DIMS];
	Val		   *v;

	if (vi->name == NULL || vi->name[0] == '\0')
		return im_err(im, DL_ERR_INVALID_ARGUMENT, "a graph input has no name");
	if (k >= DL_MAX_IO)
		return im_err(im, DL_ERR_LIMIT, "the graph has more than %d inputs", DL_MAX_IO);
	if (vi->type == NULL || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
		(tt = vi->type->tensor_type) == NULL || (sh = tt->shape) == NULL)
		return im_err(im, DL_ERR_SHAPE, "graph input \"%.100s\" has no tensor shape", vi->name);
	if (sh->n_dim < 2 || sh->n_dim > DL_MAX_RANK + 1)
	{
		dl_error_set(im->err, DL_ERR_SHAPE, "graph input \"%.100s\" has rank %zu", vi->name, sh->n_dim);
		return dl_error_hint(im->err, "Inputs are (batch, ...) with 1 to %d dimensions per sample.", DL_MAX_RANK);
	}
	dims[0] = 1;
	for (size_t d = 1; d < sh->n_dim; d++)
	{
		const Onnx__TensorShapeProto__Dimension *dm = sh->dim[d];

		if (dm == NULL || dm->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
			dm->dim_value < 1 || dm->dim_value > (1 << 24))
		{
			dl_error_set(im->err, DL_ERR_SHAPE, "graph input \"%.100s\" has no fixed size in dimension %zu",
						 vi->name, d);
			return dl_error_hint(im->err, "Export the model with a fixed shape per sample and only the batch "
								 "dimension dynamic (torch.onnx.export(..., dynamic_axes={'input': {0: 'N'}})).");
		}
		dims[d] = dm->dim_value;
	}
	make_name(im, vi->name, im->input_names[k]);
	im->input_ranks[k] = (int) sh->n_dim - 1;
	for (size_t d = 1; d < sh->n_dim; d++)
		im->input_shapes[k][d - 1] = dims[d];
	im->n_inputs++;
	v = out_tensor(im, vi->name, -1 - k, LAY_PLAIN, (int) sh->n_dim, dims);
	return v ? DL_OK : im->err->code;
}

static DlStatus
emit_json(Im *im, const int *out_layers, int n_out, DlOnnxImport *out, const DlAllocator *alloc, DlError *err)
{
	DlStrBuf	sb;
	size_t		nw = 0;
	float	   *w;
	size_t		pos = 0;

	dl_strbuf_init(&sb, alloc);
	dl_strbuf_puts(&sb, "{\"class_name\": \"Functional\", \"config\": {\"name\": \"onnx_model\", \"layers\": [");
	for (int k = 0; k < im->n_inputs; k++)
	{
		dl_strbuf_printf(&sb, "%s{\"class_name\": \"InputLayer\", \"name\": \"%s\", \"config\": {\"name\": \"%s\", "
						  "\"dtype\": \"float32\", \"batch_input_shape\": [null",
						  k ? ", " : "", im->input_names[k], im->input_names[k]);
		for (int d = 0; d < im->input_ranks[k]; d++)
			dl_strbuf_printf(&sb, ", %lld", (long long) im->input_shapes[k][d]);
		dl_strbuf_puts(&sb, "]}, \"inbound_nodes\": []}");
	}
	for (int i = 0; i < im->n_lays; i++)
	{
		const Lay  *l = &im->lays[i];

		dl_strbuf_printf(&sb, ", {\"class_name\": \"%s\", \"name\": \"%s\", \"config\": {\"name\": \"%s\"%s%s}, "
						  "\"inbound_nodes\": [[", l->cls, l->name, l->name, l->cfg[0] ? ", " : "", l->cfg);
		for (int j = 0; j < l->n_in; j++)
			dl_strbuf_printf(&sb, "%s[\"%s\", 0, 0, {}]", j ? ", " : "",
							  l->in[j] >= 0 ? im->lays[l->in[j]].name : im->input_names[-1 - l->in[j]]);
		dl_strbuf_puts(&sb, "]]}");
		nw += l->nw;
	}
	dl_strbuf_puts(&sb, "], \"input_layers\": [");
	for (int k = 0; k < im->n_inputs; k++)
		dl_strbuf_printf(&sb, "%s[\"%s\", 0, 0]", k ? ", " : "", im->input_names[k]);
	dl_strbuf_puts(&sb, "], \"output_layers\": [");
	for (int k = 0; k < n_out; k++)
		dl_strbuf_printf(&sb, "%s[\"%s\", 0, 0]", k ? ", " : "", im->lays[out_layers[k]].name);
	dl_strbuf_puts(&sb, "]}, \"keras_version\": \"2.15.0\", \"backend\": \"tensorflow\"}");
	if (sb.failed || sb.data == NULL)
	{
		dl_strbuf_free(&sb);
		return dl_error_set(err, DL_ERR_NO_MEMORY, "out of memory writing the architecture");
	}
	w = dl_alloc_array(alloc, nw + 1, sizeof(float), err);
	if (w == NULL)
	{
		dl_strbuf_free(&sb);
		return err ? err->code : DL_ERR_NO_MEMORY;
	}
	for (int i = 0; i < im->n_lays; i++)
	{
		if (im->lays[i].nw)
			memcpy(w + pos, im->lays[i].w, im->lays[i].nw * sizeof(float));
		pos += im->lays[i].nw;
	}
	out->json = sb.data;
	out->json_len = sb.len;
	out->params = w;
	out->n_params = nw;
	out->n_layers = im->n_lays;
	return DL_OK;
}

/* ------------------------------------------------------------------ */
/* node order */

typedef struct NameSlot
{
	const char *name;
	int			producer;		/* node index, or -1 */
	int			uses;			/* node inputs and graph outputs naming it */
} NameSlot;

static NameSlot *
name_slot(NameSlot *tab, size_t cap, const char *name)
{
	size_t		h = hash_str(name) & (cap - 1);

	while (tab[h].name != NULL && strcmp(tab[h].name, name) != 0)
		h = (h + 1) & (cap - 1);
	if (tab[h].name == NULL)
	{
		tab[h].name = name;
		tab[h].producer = -1;
	}
	return &tab[h];
}

/*
 * Convert the nodes of g in a topological order (Kahn's algorithm over
 * the producer of each tensor, in file order among the ready ones), with
 * each tensor's number of readers known (a bias folds only into a MatMul
 * or Conv that nothing else reads).  Linear in the graph's size.  A node
 * left over means a cycle; an input that nothing gives is named.
 */
static DlStatus
order_nodes(Im *im, const Onnx__GraphProto *g)
{
	size_t		n = g->n_node;
	size_t		names = 16 + g->n_output,
				cap = 64;
	NameSlot   *tab;
	int		   *indeg, *queue, *edge_start, *edges, *fill;
	size_t		n_edges = 0, head = 0, tail = 0;
	DlStatus	st;

	for (size_t k = 0; k < n; k++)
	{
		if (g->node[k]->n_input > 1 << 16 || g->node[k]->n_output > 1 << 16)
			return dl_error_set(im->err, DL_ERR_LIMIT, "node %zu has more than 65536 inputs or outputs", k + 1);
		names += g->node[k]->n_input + g->node[k]->n_output;
	}
	while (cap < 2 * names)
		cap *= 2;
	tab = dl_onnx_arena_alloc(&im->arena, sizeof(NameSlot) * cap);
	indeg = dl_onnx_arena_alloc(&im->arena, sizeof(int) * (n + 1));
	queue = dl_onnx_arena_alloc(&im->arena, sizeof(int) * (n + 1));
	edge_start = dl_onnx_arena_alloc(&im->arena, sizeof(int) * (n + 2));
	fill = dl_onnx_arena_alloc(&im->arena, sizeof(int) * (n + 2));
	if (!tab || !indeg || !queue || !edge_start || !fill)
		return im_oom(im);
	im->names = tab;
	im->names_cap = cap;
	for (size_t k = 0; k < n; k++)
	{
		const Onnx__NodeProto *nd = g->node[k];

		for (size_t o = 0; o < nd->n_output; o++)
		{
			NameSlot   *sl;

			if (nd->output[o] == NULL || nd->output[o][0] == '\0')
				continue;
			sl = name_slot(tab, cap, nd->output[o]);
			if (sl->producer >= 0 || val_find(im, nd->output[o]) >= 0)
			{
				dl_error_set(im->err, DL_ERR_INVALID_ARGUMENT, "tensor \"%.100s\" is produced twice", nd->output[o]);
				return dl_error_hint(im->err, "Each tensor of an ONNX graph has one producer; export the model again.");
			}
			sl->producer = (int) k;
		}
	}
	for (size_t k = 0; k < n; k++)
		for (size_t j = 0; j < g->node[k]->n_input; j++)
		{
			const char *in = g->node[k]->input[j];
			NameSlot   *sl;

			if (in == NULL || in[0] == '\0')
				continue;
			sl = name_slot(tab, cap, in);
			sl->uses++;
			if (sl->producer >= 0)
			{
				indeg[k]++;
				edge_start[sl->producer + 1]++;
				n_edges++;
			}
			else if (val_find(im, in) < 0)
			{
				dl_error_set(im->err, DL_ERR_INVALID_ARGUMENT,
							 "node \"%.100s\" (%.40s) reads tensor \"%.100s\", which no node, input or initializer gives",
							 g->node[k]->name ? g->node[k]->name : "", g->node[k]->op_type ? g->node[k]->op_type : "", in);
				return dl_error_hint(im->err, "The file is incomplete: export the model again.");
			}
		}
	for (size_t q = 0; q < g->n_output; q++)
		if (g->output[q]->name)
			name_slot(tab, cap, g->output[q]->name)->uses++;
	edges = dl_onnx_arena_alloc(&im->arena, sizeof(int) * (n_edges + 1));
	if (edges == NULL)
		return im_oom(im);
	for (size_t k = 0; k < n; k++)
		edge_start[k + 1] += edge_start[k];
	memcpy(fill, edge_start, sizeof(int) * (n + 1));
	for (size_t k = 0; k < n; k++)
		for (size_t j = 0; j < g->node[k]->n_input; j++)
		{
			const char *in = g->node[k]->input[j];
			NameSlot   *sl;

			if (in == NULL || in[0] == '\0')
				continue;
			sl = name_slot(tab, cap, in);
			if (sl->producer >= 0)
				edges[fill[sl->producer]++] = (int) k;
		}
	for (size_t k = 0; k < n; k++)
		if (indeg[k] == 0)
			queue[tail++] = (int) k;
	while (head < tail)
	{
		int			k = queue[head++];

		im->node = g->node[k];
		if ((st = convert_node(im)) != DL_OK)
			return st;
		im->node = NULL;
		for (int e = edge_start[k]; e < edge_start[k + 1]; e++)
			if (--indeg[edges[e]] == 0)
				queue[tail++] = edges[e];
	}
	if (tail < n)
	{
		for (size_t k = 0; k < n; k++)
			if (indeg[k] > 0)
			{
				const Onnx__NodeProto *nd = g->node[k];
				const char *via = "";

				for (size_t j = 0; j < nd->n_input; j++)
					if (nd->input[j] && nd->input[j][0] && val_find(im, nd->input[j]) < 0)
					{
						via = nd->input[j];
						break;
					}
				dl_error_set(im->err, DL_ERR_INVALID_ARGUMENT,
							 "the graph has a cycle: node \"%.100s\" (%.40s) depends on its own output through \"%.100s\"",
							 nd->name ? nd->name : "", nd->op_type ? nd->op_type : "", via);
				return dl_error_hint(im->err, "An ONNX graph must be acyclic; export the model again.");
			}
	}
	return DL_OK;
}

/* How many node inputs and graph outputs read the tensor name. */
static int
uses_of(Im *im, const char *name)
{
	return im->names ? name_slot(im->names, im->names_cap, name)->uses : 0;
}

static DlStatus
import_graph(Im *im, const Onnx__ModelProto *m, DlOnnxImport *out, const DlAllocator *alloc)
{
	const Onnx__GraphProto *g = m->graph;
	int			out_layers[DL_MAX_IO];
	DlStatus	st;

	if (g == NULL)
		return dl_error_set(im->err, DL_ERR_CORRUPT, "the ONNX model has no graph");
	im->opset = 0;
	for (size_t k = 0; k < m->n_opset_import; k++)
		if (m->opset_import[k]->domain == NULL || m->opset_import[k]->domain[0] == '\0' ||
			strcmp(m->opset_import[k]->domain, "ai.onnx") == 0)
			im->opset = (int) m->opset_import[k]->version;
	if (im->opset < 7 || im->opset > 21)
	{
		dl_error_set(im->err, DL_ERR_UNSUPPORTED, "the ONNX model's opset is %d", im->opset);
		return dl_error_hint(im->err, "Export it with an opset from 7 to 21 (torch.onnx.export(..., opset_version=17)).");
	}
	if (g->n_node > DL_ONNX_MAX_NODES)
		return dl_error_set(im->err, DL_ERR_LIMIT, "the graph has %zu nodes, more than %d", g->n_node, DL_ONNX_MAX_NODES);
	for (size_t k = 0; k < g->n_initializer; k++)
	{
		const Onnx__TensorProto *t = g->initializer[k];

		if (t->name == NULL || t->name[0] == '\0')
			return dl_error_set(im->err, DL_ERR_CORRUPT, "an initializer has no name");
		if (val_find(im, t->name) >= 0)
			return dl_error_set(im->err, DL_ERR_INVALID_ARGUMENT, "tensor \"%.100s\" is given twice", t->name);
		if ((st = const_from_tensor(im, t, t->name)) != DL_OK)
			return st;
	}
	for (size_t k = 0; k < g->n_input; k++)
	{
		if (g->input[k]->name && val_find(im, g->input[k]->name) >= 0)
			continue;			/* an initializer listed as an input */
		if ((st = read_input(im, g->input[k])) != DL_OK)
			return st;
	}
	if (im->n_inputs == 0)
		return dl_error_set(im->err, DL_ERR_SHAPE, "the graph has no input");
	if (g->n_output < 1 || g->n_output > DL_MAX_IO)
		return dl_error_set(im->err, DL_ERR_SHAPE, "the graph has %zu outputs (1 to %d are converted)",
							g->n_output, DL_MAX_IO);
	if ((st = order_nodes(im, g)) != DL_OK)
		return st;
	/* outputs */
	for (size_t k = 0; k < g->n_output; k++)
	{
		const char *nm = g->output[k]->name;
		int			vi = nm ? val_find(im, nm) : -1;
		int			ref;
		Val		   *v;

		if (vi < 0)
			return dl_error_set(im->err, DL_ERR_INVALID_ARGUMENT, "graph output \"%.100s\" is not computed", nm ? nm : "");
		v = &im->vals[vi];
		if (v->kind == VAL_RNN_YH)
		{
			if ((st = rnn_last(im, v->rnn, "\001tmp")) != DL_OK)
				return st;
			v = &im->vals[val_find(im, "\001tmp")];
			v->name = "\001used";
		}
		if ((st = ref_plain(im, v, &ref)) != DL_OK)
			return st;
		if (ref < 0)
			return dl_error_set(im->err, DL_ERR_UNSUPPORTED, "graph output \"%.100s\" is an input", nm);
		for (size_t q = 0; q < k; q++)
			if (out_layers[q] == ref)
				return dl_error_set(im->err, DL_ERR_UNSUPPORTED, "graph outputs %zu and %zu are the same tensor", q + 1, k + 1);
		out_layers[k] = ref;
		/* the output layer takes the output's name */
		{
			char		nn[DL_NAME_MAX];
			char		old[DL_NAME_MAX];

			snprintf(old, sizeof(old), "%s", im->lays[ref].name);
			im->lays[ref].name[0] = '\0';
			make_name(im, nm, nn);
			snprintf(im->lays[ref].name, DL_NAME_MAX, "%s", nn);
			(void) old;
		}
	}
	return emit_json(im, out_layers, (int) g->n_output, out, alloc, im->err);
}

DlStatus
dl_onnx_import(const uint8_t *buf, size_t len, const DlAllocator *alloc, DlOnnxImport *out, DlError *err)
{
	Im			im;
	ProtobufCAllocator pa;
	Onnx__ModelProto *m;
	DlStatus	st;

	memset(out, 0, sizeof(*out));
	dl_error_clear(err);
	if (len == 0)
	{
		dl_error_set(err, DL_ERR_CORRUPT, "the ONNX model is empty");
		return dl_error_hint(err, "Pass the bytes of an .onnx file.");
	}
	if (len > DL_ONNX_MAX_BYTES)
		return dl_error_set(err, DL_ERR_LIMIT, "the ONNX model has %zu bytes, more than %zu", len, DL_ONNX_MAX_BYTES);
	memset(&im, 0, sizeof(im));
	im.err = err;
	/* protobuf-c's tree is a few times the file; the converted copies as much again */
	dl_onnx_arena_init(&im.arena, alloc, len * 16 + ((size_t) 64 << 20));
	pa = dl_onnx_pb_allocator(&im.arena);
	m = onnx__model_proto__unpack(&pa, len, buf);
	if (m == NULL)
	{
		if (im.arena.failed)
			st = dl_onnx_arena_error(&im.arena, err);
		else
		{
			dl_error_set(err, DL_ERR_CORRUPT, "the bytes are not an ONNX model (a truncated or malformed protobuf of %zu bytes)", len);
			st = dl_error_hint(err, "Pass the complete .onnx file, as torch.onnx.export or export_onnx wrote it.");
		}
		dl_onnx_arena_free(&im.arena);
		return st;
	}
	st = import_graph(&im, m, out, alloc);
	if (st == DL_OK)
		out->n_nodes = m->graph ? (int) m->graph->n_node : 0;
	else if (im.arena.failed && (err == NULL || err->code == DL_OK))
		st = dl_onnx_arena_error(&im.arena, err);
	dl_onnx_arena_free(&im.arena);
	if (st != DL_OK)
	{
		dl_onnx_import_free(out, alloc);
		/* messages quote names from the file: keep them printable ASCII */
		if (err)
			for (char *p = err->msg; *p; p++)
				if ((unsigned char) *p < 0x20 || (unsigned char) *p >= 0x7f)
					*p = '?';
	}
	return st;
}

void
dl_onnx_import_free(DlOnnxImport *imp, const DlAllocator *alloc)
{
	if (imp == NULL)
		return;
	dl_free(alloc, imp->json);
	dl_free(alloc, imp->params);
	memset(imp, 0, sizeof(*imp));
}
