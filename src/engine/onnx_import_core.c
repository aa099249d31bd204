/*-------------------------------------------------------------------------
 *
 * onnx_import_core.c
 *	  What every ONNX converter shares: errors that name the node being
 *	  converted, the table of ONNX values, constant tensors read from the
 *	  file (their declared size checked against the bytes present), node
 *	  attributes, the Keras layers made and their weights, the NHWC/PLAIN
 *	  layout conversions, and the table of tensor names with their
 *	  producers and readers.
 *
 * The driver (onnx_import.c) and the converters (onnx_import_ops.c,
 * onnx_import_rnn.c, onnx_import_fold.c) call into this file; it calls
 * none of them, so the import's files form a DAG.
 *
 * IDENTIFICATION
 *	  src/engine/onnx_import_core.c
 *
 *-------------------------------------------------------------------------
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "onnx_import_impl.h"

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

/* ------------------------------------------------------------------ */
/* errors */

DlStatus
dl_im_err(Im *im, DlStatus code, const char *fmt,...)
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

DlStatus
dl_im_oom(Im *im)
{
	return dl_onnx_arena_error(&im->arena, im->err);
}

DlStatus
dl_im_unsup(Im *im, const char *fmt,...)
{
	char		msg[DL_ERROR_MSG_MAX];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	dl_im_err(im, DL_ERR_UNSUPPORTED, "%s", msg);
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

int
dl_im_val_find(Im *im, const char *name)
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

/*
 * A new value named name for the node being converted to produce; NULL,
 * the error set, when another node produced it already or out of memory.
 */
Val *
dl_im_val_produce(Im *im, const char *name)
{
	Val		   *v;

	if (dl_im_val_find(im, name) >= 0)
	{
		dl_im_err(im, DL_ERR_INVALID_ARGUMENT, "tensor \"%.100s\" is produced twice", name);
		return NULL;
	}
	v = val_new(im, name);
	if (v == NULL)
		dl_im_oom(im);
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
DlStatus
dl_im_const_from_tensor(Im *im, const Onnx__TensorProto *t, const char *name)
{
	size_t		count = 1;
	size_t		es = elem_size(t->data_type);
	Val		   *v;
	size_t		present;
	bool		raw = t->has_raw_data && t->raw_data.len > 0;

	if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
		return dl_im_unsup(im, "tensor \"%.100s\" keeps its data in an external file", name);
	if (es == 0)
		return dl_im_unsup(im, "tensor \"%.100s\" has data type %d; float, double, int32 and int64 are read",
						name, (int) t->data_type);
	if (t->n_dims > MAX_DIMS)
		return dl_im_err(im, DL_ERR_LIMIT, "tensor \"%.100s\" has %zu dimensions, more than %d", name, t->n_dims, MAX_DIMS);
	for (size_t d = 0; d < t->n_dims; d++)
	{
		if (t->dims[d] < 0)
			return dl_im_err(im, DL_ERR_CORRUPT, "tensor \"%.100s\" has a negative dimension %lld",
						  name, (long long) t->dims[d]);
		if (!dl_size_mul(count, (size_t) t->dims[d], &count) || count > DL_ONNX_MAX_BYTES)
			return dl_im_err(im, DL_ERR_CORRUPT, "tensor \"%.100s\" declares more elements than any file holds", name);
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
		return dl_im_oom(im);
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
		return dl_im_oom(im);
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
			return dl_im_err(im, DL_ERR_DATA, "tensor \"%.100s\" holds a value that is not a finite float", name);
		v->f[k] = (fabs(x) > FLT_MAX) ? 0.0f : (float) x;
	}
	return DL_OK;
}

/* ------------------------------------------------------------------ */
/* attributes */

const Onnx__AttributeProto *
dl_im_attr(const Onnx__NodeProto *n, const char *name)
{
	for (size_t k = 0; k < n->n_attribute; k++)
		if (n->attribute[k]->name && strcmp(n->attribute[k]->name, name) == 0)
			return n->attribute[k];
	return NULL;
}

int64_t
dl_im_attr_int(const Onnx__NodeProto *n, const char *name, int64_t dflt)
{
	const Onnx__AttributeProto *a = dl_im_attr(n, name);

	return a && a->has_i ? a->i : dflt;
}

double
dl_im_attr_float(const Onnx__NodeProto *n, const char *name, double dflt)
{
	const Onnx__AttributeProto *a = dl_im_attr(n, name);

	return a && a->has_f ? a->f : dflt;
}

/* ints attribute into v (at most max); returns count, -1 if absent */
int
dl_im_attr_ints(const Onnx__NodeProto *n, const char *name, int64_t *v, int max)
{
	const Onnx__AttributeProto *a = dl_im_attr(n, name);

	if (a == NULL)
		return -1;
	if (a->n_ints > (size_t) max)
		return -2;
	for (size_t k = 0; k < a->n_ints; k++)
		v[k] = a->ints[k];
	return (int) a->n_ints;
}

bool
dl_im_attr_str_is(const Onnx__NodeProto *n, const char *name, const char *want, const char *dflt)
{
	const Onnx__AttributeProto *a = dl_im_attr(n, name);
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
void
dl_im_make_name(Im *im, const char *s, char *out)
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
int
dl_im_lay_new(Im *im, const char *cls, const char *name, const char *cfg, int n, const int *refs)
{
	Lay		   *l;

	if (im->n_lays >= DL_MAX_LAYERS)
	{
		dl_im_err(im, DL_ERR_LIMIT, "the converted model would have more than %d layers", DL_MAX_LAYERS);
		return -1;
	}
	if (im->n_lays == im->cap_lays)
	{
		int			ncap = im->cap_lays ? im->cap_lays * 2 : 64;
		Lay		   *nl = dl_onnx_arena_alloc(&im->arena, sizeof(Lay) * (size_t) ncap);

		if (nl == NULL)
		{
			dl_im_oom(im);
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
	dl_im_make_name(im, name, l->name);
	l->cfg = dl_onnx_arena_strdup(&im->arena, cfg);
	if (l->cfg == NULL)
	{
		dl_im_oom(im);
		return -1;
	}
	l->n_in = n;
	for (int k = 0; k < n; k++)
		l->in[k] = refs[k];
	return im->n_lays++;
}

int
dl_im_lay1(Im *im, const char *cls, const char *name, int ref, const char *fmt,...)
{
	char		cfg[1024];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(cfg, sizeof(cfg), fmt, ap);
	va_end(ap);
	return dl_im_lay_new(im, cls, name, cfg, 1, &ref);
}

float *
dl_im_lay_weights(Im *im, int li, size_t n)
{
	Lay		   *l = &im->lays[li];

	l->w = dl_onnx_arena_alloc(&im->arena, n * sizeof(float) + 1);
	l->nw = n;
	if (l->w == NULL)
		dl_im_oom(im);
	return l->w;
}

const char *
dl_im_node_label(Im *im)
{
	const Onnx__NodeProto *n = im->node;

	if (n->name && n->name[0])
		return n->name;
	return n->n_output > 0 ? n->output[0] : n->op_type;
}

/* ------------------------------------------------------------------ */
/* layouts */

/* The engine tensor of v with ONNX (N, C, H, W) as (H, W, C) */
DlStatus
dl_im_ref_nhwc(Im *im, Val *v, int *ref)
{
	if (v->kind != VAL_TENSOR || (v->rank != 4 && v->rank != 3))
		return dl_im_unsup(im, "input \"%.100s\" must be a (N, C, L) or (N, C, H, W) tensor", v->name);
	if (v->layout == LAY_NHWC)
	{
		*ref = v->ref;
		return DL_OK;
	}
	if (v->layout != LAY_PLAIN)
		return dl_im_unsup(im, "input \"%.100s\" is in a layout this operator does not take", v->name);
	if (v->nhwc_ref == INT32_MIN)
	{
		char		nm[DL_NAME_MAX];
		int			li;

		snprintf(nm, sizeof(nm), "%.100s_nhwc", v->name);
		li = dl_im_lay1(im, "Permute", nm, v->ref, "%s", v->rank == 4 ? "\"dims\": [2, 3, 1]" : "\"dims\": [2, 1]");
		if (li < 0)
			return im->err->code;
		v = &im->vals[v - im->vals];
		v->nhwc_ref = li;
	}
	*ref = v->nhwc_ref;
	return DL_OK;
}

/* The engine tensor of v holding exactly the ONNX tensor (batch first) */
DlStatus
dl_im_ref_plain(Im *im, Val *v, int *ref)
{
	if (v->kind != VAL_TENSOR)
		return dl_im_unsup(im, "input \"%.100s\" is %s", v->name,
						v->kind == VAL_CONST ? "a constant where a computed tensor is needed" :
						"a recurrent output read other than by Squeeze or Gather");
	if (v->layout == LAY_PLAIN)
	{
		*ref = v->ref;
		return DL_OK;
	}
	if (v->layout == LAY_TIME_MAJOR)
		return dl_im_unsup(im, "input \"%.100s\" is time major (T, N, F); only LSTM, GRU and Transpose(1, 0, 2) read it",
						v->name);
	if (v->plain_ref == INT32_MIN)
	{
		char		nm[DL_NAME_MAX];
		int			li;

		snprintf(nm, sizeof(nm), "%.100s_nchw", v->name);
		li = dl_im_lay1(im, "Permute", nm, v->ref, "%s", v->rank == 4 ? "\"dims\": [3, 1, 2]" : "\"dims\": [2, 1]");
		if (li < 0)
			return im->err->code;
		v = &im->vals[v - im->vals];
		v->plain_ref = li;
	}
	*ref = v->plain_ref;
	return DL_OK;
}

/* A tensor value named name: engine ref in layout, ONNX dims */
Val *
dl_im_out_tensor(Im *im, const char *name, int ref, Layout layout, int rank, const int64_t *dims)
{
	Val		   *v = dl_im_val_produce(im, name);

	if (v == NULL)
		return NULL;
	v->kind = VAL_TENSOR;
	v->ref = ref;
	v->layout = layout;
	v->rank = rank;
	memcpy(v->dims, dims, sizeof(int64_t) * (size_t) rank);
	return v;
}

/* ------------------------------------------------------------------ */
/* operators */

Val *
dl_im_in_val(Im *im, int k)
{
	const Onnx__NodeProto *n = im->node;
	int			vi;

	if ((size_t) k >= n->n_input || n->input[k] == NULL || n->input[k][0] == '\0')
		return NULL;
	vi = dl_im_val_find(im, n->input[k]);
	return vi < 0 ? NULL : &im->vals[vi];
}

int
dl_im_norm_axis(int64_t axis, int rank)
{
	if (axis < 0)
		axis += rank;
	return (axis < 0 || axis >= rank) ? -1 : (int) axis;
}

/* Element-wise: same layout and dims out */
DlStatus
dl_im_op_elementwise(Im *im, Val *x, const char *cls, const char *cfg)
{
	int			li;
	Val		   *o;
	Val			xv;

	if (x->kind != VAL_TENSOR)
		return dl_im_unsup(im, "input \"%.100s\" must be a computed tensor", x->name);
	xv = *x;
	li = dl_im_lay1(im, cls, dl_im_node_label(im), xv.ref, "%s", cfg);
	if (li < 0)
		return im->err->code;
	o = dl_im_out_tensor(im, im->node->output[0], li, xv.layout, xv.rank, xv.dims);
	return o ? DL_OK : im->err->code;
}

DlStatus
dl_im_alias(Im *im, Val *x)
{
	Val			xv = *x;
	Val		   *o = dl_im_val_produce(im, im->node->output[0]);

	if (o == NULL)
		return im->err->code;
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

/* ------------------------------------------------------------------ */
/* tensor names: producer and readers */

/* The slot of name in the open-addressed table tab (cap a power of two), made on first use. */
NameSlot *
dl_im_name_slot(NameSlot *tab, size_t cap, const char *name)
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

/* How many node inputs and graph outputs read the tensor name. */
int
dl_im_uses_of(Im *im, const char *name)
{
	return im->names ? dl_im_name_slot(im->names, im->names_cap, name)->uses : 0;
}

