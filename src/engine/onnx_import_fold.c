/*-------------------------------------------------------------------------
 *
 * onnx_import_fold.c
 *	  The ONNX importer's constants and what folds over them (part of
 *	  onnx_import.c): Constant, the shape arithmetic of Shape, Gather,
 *	  Unsqueeze, Concat and ConstantOfShape done at import, and the
 *	  Div-Erf-Add-Mul-Mul decomposition of GELU recognised as one
 *	  activation.
 *
 * IDENTIFICATION
 *	  src/engine/onnx_import_fold.c
 *
 *-------------------------------------------------------------------------
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnx_import_impl.h"

DlStatus
dl_im_op_constant(Im *im)
{
	const Onnx__AttributeProto *a = dl_im_attr(im->node, "value");

	if (a && a->t)
		return dl_im_const_from_tensor(im, a->t, im->node->output[0]);
	{
		Onnx__TensorProto t;
		int64_t		one = 1;
		const Onnx__AttributeProto *b;
		const int64_t *ints = NULL;
		const float *floats = NULL;
		size_t		count = 1;
		bool		is_int = false,
					list = false;

		onnx__tensor_proto__init(&t);
		if ((b = dl_im_attr(im->node, "value_float")) && b->has_f)
			floats = &b->f;
		else if ((b = dl_im_attr(im->node, "value_int")) && b->has_i)
		{
			is_int = true;
			ints = &b->i;
		}
		else if ((b = dl_im_attr(im->node, "value_ints")))
		{
			is_int = true;
			ints = b->ints;
			count = b->n_ints;
			list = true;
		}
		else if ((b = dl_im_attr(im->node, "value_floats")))
		{
			floats = b->floats;
			count = b->n_floats;
			list = true;
		}
		else
			return dl_im_unsup(im, "a Constant without a value");
		t.has_data_type = true;
		if (is_int)
		{
			t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
			t.n_int64_data = count;
			t.int64_data = (int64_t *) ints;
		}
		else
		{
			t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
			t.n_float_data = count;
			t.float_data = (float *) floats;
		}
		if (list)
		{
			one = (int64_t) count;
			t.n_dims = 1;
			t.dims = &one;
		}
		return dl_im_const_from_tensor(im, &t, im->node->output[0]);
	}
}

/* A new integer constant (count values, rank 1, or 0 when scalar) */
static Val *
int_const(Im *im, const char *name, const int64_t *v, size_t count, bool scalar)
{
	Val		   *o = dl_im_val_produce(im, name);

	if (o == NULL)
		return NULL;
	o->kind = VAL_CONST;
	o->is_int = true;
	o->rank = scalar ? 0 : 1;
	o->dims[0] = (int64_t) count;
	o->count = count;
	o->i = dl_onnx_arena_alloc(&im->arena, sizeof(int64_t) * (count + 1));
	o->f = dl_onnx_arena_alloc(&im->arena, sizeof(float) * (count + 1));
	if (o->i == NULL || o->f == NULL)
	{
		dl_im_oom(im);
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
DlStatus
dl_im_op_shape(Im *im)
{
	Val		   *x = dl_im_in_val(im, 0);
	int64_t		v[MAX_DIMS];

	if (x->kind != VAL_TENSOR)
		return dl_im_unsup(im, "Shape of a constant or of a recurrent output");
	if (dl_im_attr(im->node, "start") || dl_im_attr(im->node, "end"))
		return dl_im_unsup(im, "Shape with start or end");
	for (int d = 0; d < x->rank; d++)
		v[d] = x->dims[d];
	v[x->layout == LAY_TIME_MAJOR ? 1 : 0] = BATCH_DIM;
	return int_const(im, im->node->output[0], v, (size_t) x->rank, false) ? DL_OK : im->err->code;
}

/* Gather, Unsqueeze, Concat over integer constants (shape arithmetic) */
DlStatus
dl_im_fold_gather(Im *im, Val *data, Val *idx)
{
	int64_t		v[MAX_DIMS];
	size_t		n = idx->count;

	if (!data->is_int || !idx->is_int || data->rank > 1 || n > MAX_DIMS || data->zero_fill)
		return dl_im_unsup(im, "Gather of constants other than a shape's dimensions");
	for (size_t k = 0; k < n; k++)
	{
		int64_t		j = idx->i[k];

		if (j < 0)
			j += (int64_t) data->count;
		if (j < 0 || j >= (int64_t) data->count)
			return dl_im_err(im, DL_ERR_SHAPE, "index %lld is out of range", (long long) idx->i[k]);
		v[k] = data->i[j];
	}
	return int_const(im, im->node->output[0], v, n, idx->rank == 0) ? DL_OK : im->err->code;
}

DlStatus
dl_im_op_unsqueeze(Im *im)
{
	Val		   *x = dl_im_in_val(im, 0);
	Val		   *o;

	if (x->kind != VAL_CONST || !x->is_int || x->rank > 1 || x->count > MAX_DIMS)
		return dl_im_unsup(im, "Unsqueeze other than of a shape's dimensions");
	o = int_const(im, im->node->output[0], x->i, x->count, false);
	return o ? DL_OK : im->err->code;
}

DlStatus
dl_im_fold_concat(Im *im)
{
	int64_t		v[MAX_DIMS];
	size_t		n = 0;

	for (size_t k = 0; k < im->node->n_input; k++)
	{
		Val		   *x = dl_im_in_val(im, (int) k);

		if (x == NULL || x->kind != VAL_CONST || !x->is_int || x->rank > 1 || n + x->count > MAX_DIMS)
			return dl_im_unsup(im, "Concat of constants other than shapes");
		for (size_t j = 0; j < x->count; j++)
			v[n++] = x->i[j];
	}
	return int_const(im, im->node->output[0], v, n, false) ? DL_OK : im->err->code;
}

DlStatus
dl_im_op_constant_of_shape(Im *im)
{
	Val		   *x = dl_im_in_val(im, 0);
	const Onnx__AttributeProto *a = dl_im_attr(im->node, "value");
	Val		   *o;

	if (x->kind != VAL_CONST || !x->is_int)
		return dl_im_unsup(im, "ConstantOfShape of a computed shape");
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
			return dl_im_unsup(im, "ConstantOfShape of a value other than 0");
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

	o = dl_im_out_tensor(im, im->node->output[0], xv.ref, xv.layout, xv.rank, xv.dims);
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
DlStatus
dl_im_try_gelu(Im *im, const char *op, bool *done)
{
	Val		   *a = dl_im_in_val(im, 0),
			   *b = dl_im_in_val(im, 1);

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
			return dl_im_op_elementwise(im, x, "Activation", "\"activation\": \"gelu\"");
		}
	}
	return DL_OK;
}
