/*-------------------------------------------------------------------------
 *
 * onnx_import_ops.c
 *	  The ONNX importer's converters of layer operators (part of
 *	  onnx_import.c, which dispatches each node): Gemm, MatMul, Add and
 *	  the other binary and variadic operators, Concat, Conv, the pools and
 *	  reductions, BatchNormalization, LayerNormalization, Flatten, Reshape,
 *	  Transpose, Softmax and Gather.  Each makes Keras layers from one
 *	  node, its weights converted to Keras order.
 *
 * IDENTIFICATION
 *	  src/engine/onnx_import_ops.c
 *
 *-------------------------------------------------------------------------
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnx_import_impl.h"

/*
 * The output of the Dense or convolution layer li (n units); without a
 * bias of its own, an Add of a constant that follows may fold into it.
 */
static DlStatus
biased_out(Im *im, int li, Layout layout, int rank, const int64_t *dims, bool has_bias, int64_t n)
{
	Val		   *o = dl_im_out_tensor(im, im->node->output[0], li, layout, rank, dims);

	if (o == NULL)
		return im->err->code;
	if (!has_bias)
	{
		o->bias_layer = li;
		im->lays[li].bias_n = n;
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

	if ((st = dl_im_ref_plain(im, a, &ref)) != DL_OK)
		return st;
	av = im->vals[a - im->vals];
	if (av.dims[av.rank - 1] != K)
		return dl_im_err(im, DL_ERR_SHAPE, "input \"%.100s\" has %lld features but the weights take %lld",
					  av.name, (long long) av.dims[av.rank - 1], (long long) K);
	if (c && c->count != (size_t) O)
		return dl_im_unsup(im, "bias \"%.100s\" has %zu values for %lld outputs", c->name, c->count, (long long) O);
	li = dl_im_lay1(im, "Dense", dl_im_node_label(im), ref, "\"units\": %lld, \"activation\": \"linear\", \"use_bias\": %s",
			  (long long) O, c ? "true" : "false");
	if (li < 0)
		return im->err->code;
	w = dl_im_lay_weights(im, li, (size_t) (K * O + (c ? O : 0)));
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
	return biased_out(im, li, LAY_PLAIN, av.rank, dims, c != NULL, O);
}

/* Add of a constant to a Dense/Conv output without bias: fold it */
static DlStatus
fold_bias(Im *im, Val *x, Val *c)
{
	Lay		   *l;
	float	   *nw;

	if (x->bias_layer < 0 || dl_im_uses_of(im, x->name) != 1)
		return dl_im_unsup(im, "Add of the constant \"%.100s\" is converted only as the bias of a MatMul or Conv it follows",
						c->name);
	l = &im->lays[x->bias_layer];
	if (c->count != (size_t) l->bias_n)
		return dl_im_unsup(im, "constant \"%.100s\" has %zu values, not one per output (%lld)",
						c->name, c->count, (long long) l->bias_n);
	nw = dl_onnx_arena_alloc(&im->arena, (l->nw + c->count) * sizeof(float));
	if (nw == NULL)
		return dl_im_oom(im);
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
	return dl_im_alias(im, x);
}

DlStatus
dl_im_op_gemm(Im *im)
{
	Val		   *a = dl_im_in_val(im, 0),
			   *b = dl_im_in_val(im, 1),
			   *c = dl_im_in_val(im, 2);
	bool		transB = dl_im_attr_int(im->node, "transB", 0) != 0;

	if (dl_im_attr_int(im->node, "transA", 0) != 0)
		return dl_im_unsup(im, "transA=1");
	if (b->kind != VAL_CONST || b->rank != 2)
		return dl_im_unsup(im, "B must be a 2-d constant (weights)");
	if (c && c->kind != VAL_CONST)
		return dl_im_unsup(im, "C must be a constant (bias)");
	if (a->kind != VAL_TENSOR || a->rank != 2)
		return dl_im_unsup(im, "A must be a 2-d computed tensor");
	return dense_from(im, a, b->f, transB ? b->dims[1] : b->dims[0], transB ? b->dims[0] : b->dims[1],
					  transB, dl_im_attr_float(im->node, "alpha", 1.0), c, dl_im_attr_float(im->node, "beta", 1.0));
}

DlStatus
dl_im_op_matmul(Im *im)
{
	Val		   *a = dl_im_in_val(im, 0),
			   *b = dl_im_in_val(im, 1);

	if (b->kind != VAL_CONST || b->rank != 2)
		return dl_im_unsup(im, "the second operand must be a 2-d constant (weights)");
	if (a->kind != VAL_TENSOR || a->rank < 2)
		return dl_im_unsup(im, "the first operand must be a computed tensor");
	return dense_from(im, a, b->f, b->dims[0], b->dims[1], false, 1.0, NULL, 1.0);
}

DlStatus
dl_im_op_binary(Im *im, const char *op)
{
	Val		   *a = dl_im_in_val(im, 0),
			   *b = dl_im_in_val(im, 1);
	int			refs[2];
	DlStatus	st;
	Layout		lay;
	int			li;
	Val			av,
				bv;

	if (strcmp(op, "Add") == 0 && (a->kind == VAL_CONST) != (b->kind == VAL_CONST))
		return a->kind == VAL_CONST ? fold_bias(im, b, a) : fold_bias(im, a, b);
	if (a->kind != VAL_TENSOR || b->kind != VAL_TENSOR)
		return dl_im_unsup(im, "both operands must be computed tensors (a constant operand is converted only as a bias)");
	if (a->rank != b->rank || memcmp(a->dims + 1, b->dims + 1, sizeof(int64_t) * (size_t) (a->rank - 1)) != 0)
		return dl_im_unsup(im, "operands \"%.100s\" and \"%.100s\" differ in shape (broadcasting is not converted)",
						a->name, b->name);
	lay = (a->layout == LAY_NHWC || b->layout == LAY_NHWC) ? LAY_NHWC : LAY_PLAIN;
	if (lay == LAY_NHWC)
	{
		if ((st = dl_im_ref_nhwc(im, a, &refs[0])) != DL_OK)
			return st;
		if ((st = dl_im_ref_nhwc(im, &im->vals[dl_im_val_find(im, im->node->input[1])], &refs[1])) != DL_OK)
			return st;
	}
	else
	{
		if ((st = dl_im_ref_plain(im, a, &refs[0])) != DL_OK)
			return st;
		if ((st = dl_im_ref_plain(im, b, &refs[1])) != DL_OK)
			return st;
	}
	av = *dl_im_in_val(im, 0);
	bv = *dl_im_in_val(im, 1);
	(void) bv;
	li = dl_im_lay_new(im, strcmp(op, "Add") == 0 ? "Add" : strcmp(op, "Sub") == 0 ? "Subtract" : "Multiply",
				 dl_im_node_label(im), "", 2, refs);
	if (li < 0)
		return im->err->code;
	return dl_im_out_tensor(im, im->node->output[0], li, lay, av.rank, av.dims) ? DL_OK : im->err->code;
}

/* Sum, Mean, Max, Min of computed tensors of one shape */
DlStatus
dl_im_op_variadic(Im *im, const char *op)
{
	const Onnx__NodeProto *n = im->node;
	int			k = (int) n->n_input;
	int			refs[DL_MAX_FAN_IN];
	bool		nhwc = false;
	Val		   *v0 = dl_im_in_val(im, 0);
	Val			v0v;
	int			li;

	if (k < 1 || k > DL_MAX_FAN_IN)
		return dl_im_unsup(im, "%d inputs", k);
	for (int j = 0; j < k; j++)
	{
		Val		   *v = dl_im_in_val(im, j);

		if (v == NULL || v->kind != VAL_TENSOR)
			return dl_im_unsup(im, "every input must be a computed tensor");
		if (v->rank != v0->rank || memcmp(v->dims + 1, v0->dims + 1, sizeof(int64_t) * (size_t) (v->rank - 1)) != 0)
			return dl_im_unsup(im, "inputs differ in shape (broadcasting is not converted)");
		nhwc = nhwc || v->layout == LAY_NHWC;
	}
	if (k == 1)
		return dl_im_alias(im, v0);
	for (int j = 0; j < k; j++)
	{
		DlStatus	st = nhwc ? dl_im_ref_nhwc(im, dl_im_in_val(im, j), &refs[j]) : dl_im_ref_plain(im, dl_im_in_val(im, j), &refs[j]);

		if (st != DL_OK)
			return st;
	}
	v0v = *dl_im_in_val(im, 0);
	li = dl_im_lay_new(im, strcmp(op, "Sum") == 0 ? "Add" : strcmp(op, "Mean") == 0 ? "Average" :
				 strcmp(op, "Max") == 0 ? "Maximum" : "Minimum", dl_im_node_label(im), "", k, refs);
	if (li < 0)
		return im->err->code;
	return dl_im_out_tensor(im, n->output[0], li, nhwc ? LAY_NHWC : LAY_PLAIN, v0v.rank, v0v.dims) ? DL_OK : im->err->code;
}

DlStatus
dl_im_op_concat(Im *im)
{
	const Onnx__NodeProto *n = im->node;
	int			k = (int) n->n_input;
	int			refs[DL_MAX_FAN_IN];
	Val		   *v0 = dl_im_in_val(im, 0);
	int			axis;
	bool		all_nhwc = true;
	int64_t		dims[MAX_DIMS];
	int			li;
	char		cfg[64];

	if (k < 1 || k > DL_MAX_FAN_IN)
		return dl_im_unsup(im, "%d inputs", k);
	if (k == 2 && v0 && v0->kind == VAL_RNN_YH_DIR && dl_im_in_val(im, 1) && dl_im_in_val(im, 1)->kind == VAL_RNN_YH_DIR &&
		dl_im_in_val(im, 1)->rnn == v0->rnn && v0->dir == 0 && dl_im_in_val(im, 1)->dir == 1 &&
		dl_im_norm_axis(dl_im_attr_int(n, "axis", 1), 2) == 1)
		return dl_im_rnn_last(im, v0->rnn, n->output[0]);	/* Bidirectional, merge_mode concat */
	for (int j = 0; j < k; j++)
	{
		Val		   *v = dl_im_in_val(im, j);

		if (v == NULL || v->kind != VAL_TENSOR)
			return dl_im_unsup(im, "every input must be a computed tensor");
		if (v->rank != v0->rank)
			return dl_im_err(im, DL_ERR_SHAPE, "inputs differ in rank");
		all_nhwc = all_nhwc && v->layout == LAY_NHWC;
	}
	axis = dl_im_norm_axis(dl_im_attr_int(n, "axis", 1), v0->rank);
	if (axis <= 0)
		return dl_im_unsup(im, "axis %lld (the batch axis cannot be joined)", (long long) dl_im_attr_int(n, "axis", 1));
	memcpy(dims, v0->dims, sizeof(dims));
	dims[axis] = 0;
	for (int j = 0; j < k; j++)
	{
		Val		   *v = dl_im_in_val(im, j);
		DlStatus	st;

		for (int d = 1; d < v->rank; d++)
			if (d != axis && v->dims[d] != v0->dims[d])
				return dl_im_err(im, DL_ERR_SHAPE, "inputs differ in dimension %d", d);
		dims[axis] += v->dims[axis];
		st = (all_nhwc && axis == 1) ? dl_im_ref_nhwc(im, v, &refs[j]) : dl_im_ref_plain(im, v, &refs[j]);
		if (st != DL_OK)
			return st;
	}
	snprintf(cfg, sizeof(cfg), "\"axis\": %d", (all_nhwc && axis == 1) ? -1 : axis);
	if (k == 1)
		return dl_im_alias(im, v0);
	li = dl_im_lay_new(im, "Concatenate", dl_im_node_label(im), cfg, k, refs);
	if (li < 0)
		return im->err->code;
	return dl_im_out_tensor(im, n->output[0], li, (all_nhwc && axis == 1) ? LAY_NHWC : LAY_PLAIN,
					  dl_im_in_val(im, 0)->rank, dims) ? DL_OK : im->err->code;
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
/*
 * A convolution's input as a channels-last layer ref (*x read again:
 * making the ref may move the values); its bias b must be a constant.
 */
static DlStatus
conv_input(Im *im, const Val *b, Val **x, int *ref)
{
	DlStatus	s;

	if (b && b->kind != VAL_CONST)
		return dl_im_unsup(im, "the bias must be a constant");
	if ((s = dl_im_ref_nhwc(im, *x, ref)) != DL_OK)
		return s;
	*x = dl_im_in_val(im, 0);
	return DL_OK;
}

/*
 * The weights of convolution layer li (NULL, im->err set, where li < 0
 * says its making failed): kernel_n floats, then the OC of bias b when
 * there is one; *w and *b read again, as adding the layer may move them.
 */
static float *
conv_weights(Im *im, int li, size_t kernel_n, int64_t OC, Val **w, Val **b)
{
	if (li < 0)
		return NULL;
	if (*b && (*b)->count != (size_t) OC)
	{
		dl_im_err(im, DL_ERR_SHAPE, "the bias has %zu values for %lld filters", (*b)->count, (long long) OC);
		return NULL;
	}
	*w = dl_im_in_val(im, 1);
	*b = dl_im_in_val(im, 2);
	return dl_im_lay_weights(im, li, kernel_n + (*b ? (size_t) OC : 0));
}

static DlStatus
op_conv1d(Im *im)
{
	const Onnx__NodeProto *n = im->node;
	Val		   *x = dl_im_in_val(im, 0),
			   *w = dl_im_in_val(im, 1),
			   *b = dl_im_in_val(im, 2);
	int64_t		ks[1] = {0}, st[1] = {1}, dl[1] = {1}, pads[2] = {0, 0};
	int64_t		OC, C, K, L;
	int			ref, li;
	DlStatus	s;
	const char *padding = "valid";
	int64_t		dims[3], sl[2];
	float	   *kw;

	if (dl_im_attr_int(n, "group", 1) != 1)
		return dl_im_unsup(im, "a grouped 1-d convolution");
	if ((s = conv_input(im, b, &x, &ref)) != DL_OK)
		return s;
	w = dl_im_in_val(im, 1);
	OC = w->dims[0];
	K = w->dims[2];
	C = x->dims[1];
	L = x->dims[2];
	if (w->dims[1] != C)
		return dl_im_err(im, DL_ERR_SHAPE, "the weights take %lld channels, the input has %lld",
					  (long long) w->dims[1], (long long) C);
	if (dl_im_attr_ints(n, "strides", st, 1) == -2 || dl_im_attr_ints(n, "dilations", dl, 1) == -2 ||
		dl_im_attr_ints(n, "pads", pads, 2) == -2)
		return dl_im_unsup(im, "strides, dilations or pads of more than 1 axis");
	if (dl_im_attr_ints(n, "kernel_shape", ks, 1) == 1 && ks[0] != K)
		return dl_im_err(im, DL_ERR_SHAPE, "kernel_shape disagrees with the weights");
	if (st[0] < 1 || dl[0] < 1 || K < 1 || OC < 1 || st[0] > 1 << 20 || dl[0] > 1 << 20 || K > 1 << 20 ||
		pads[0] < 0 || pads[1] < 0 || pads[0] > 1 << 20 || pads[1] > 1 << 20)
		return dl_im_err(im, DL_ERR_SHAPE, "strides, dilations, pads and kernel sizes out of range");
	if (!dl_im_attr_str_is(n, "auto_pad", "NOTSET", "NOTSET"))
		return dl_im_unsup(im, "auto_pad on a 1-d convolution");
	if (dl[0] > 1 && st[0] > 1)
		return dl_im_unsup(im, "dilations with strides (Keras refuses them together)");
	keras_same(L, K, st[0], dl[0], &sl[0], &sl[1]);
	if (pads[0] == 0 && pads[1] == 0)
		padding = "valid";
	else if (pads[0] == sl[0] && pads[1] == sl[1])
		padding = "same";
	else if (pads[0] == (K - 1) * dl[0] && pads[1] == 0)
		padding = "causal";
	else
		return dl_im_unsup(im, "pads [%lld, %lld] (none, Keras' 'same' or 'causal' are converted)",
						(long long) pads[0], (long long) pads[1]);
	dims[0] = x->dims[0];
	dims[1] = OC;
	dims[2] = (L + pads[0] + pads[1] - dl[0] * (K - 1) - 1) / st[0] + 1;
	if (dims[2] < 1)
		return dl_im_err(im, DL_ERR_SHAPE, "the kernel is larger than the padded input");
	li = dl_im_lay1(im, "Conv1D", dl_im_node_label(im), ref,
			  "\"filters\": %lld, \"kernel_size\": [%lld], \"strides\": [%lld], \"padding\": \"%s\", "
			  "\"dilation_rate\": [%lld], \"activation\": \"linear\", \"use_bias\": %s",
			  (long long) OC, (long long) K, (long long) st[0], padding, (long long) dl[0],
			  b ? "true" : "false");
	kw = conv_weights(im, li, (size_t) (K * C * OC), OC, &w, &b);
	if (kw == NULL)
		return im->err->code;
	/* (OC, C, K) -> (K, C, OC) */
	for (int64_t k = 0; k < K; k++)
		for (int64_t c = 0; c < C; c++)
			for (int64_t o = 0; o < OC; o++)
				kw[(k * C + c) * OC + o] = w->f[(o * C + c) * K + k];
	if (b)
		memcpy(kw + K * C * OC, b->f, sizeof(float) * (size_t) OC);
	return biased_out(im, li, LAY_NHWC, 3, dims, b != NULL, OC);
}

DlStatus
dl_im_op_conv(Im *im)
{
	const Onnx__NodeProto *n = im->node;
	Val		   *x = dl_im_in_val(im, 0),
			   *w = dl_im_in_val(im, 1),
			   *b = dl_im_in_val(im, 2);
	int64_t		ks[2] = {0, 0}, st[2] = {1, 1}, dl[2] = {1, 1}, pads[4] = {0, 0, 0, 0};
	int64_t		group = dl_im_attr_int(n, "group", 1);
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
		return dl_im_unsup(im, "only 1-d and 2-d convolutions with constant weights are converted");
	if ((s = conv_input(im, b, &x, &ref)) != DL_OK)
		return s;
	OC = w->dims[0];
	Cg = w->dims[1];
	KH = w->dims[2];
	KW = w->dims[3];
	C = x->dims[1];
	H = x->dims[2];
	W = x->dims[3];
	if (dl_im_attr_ints(n, "strides", st, 2) == -2 || dl_im_attr_ints(n, "dilations", dl, 2) == -2 ||
		dl_im_attr_ints(n, "pads", pads, 4) == -2)
		return dl_im_unsup(im, "strides, dilations or pads of more than 2 spatial axes");
	if (dl_im_attr_ints(n, "kernel_shape", ks, 2) == 2 && (ks[0] != KH || ks[1] != KW))
		return dl_im_err(im, DL_ERR_SHAPE, "kernel_shape disagrees with the weights");
	if (st[0] < 1 || st[1] < 1 || dl[0] < 1 || dl[1] < 1 || KH < 1 || KW < 1 || OC < 1 || Cg < 1 ||
		st[0] > 1 << 20 || st[1] > 1 << 20 || dl[0] > 1 << 20 || dl[1] > 1 << 20 || KH > 1 << 20 || KW > 1 << 20)
		return dl_im_err(im, DL_ERR_SHAPE, "strides, dilations and kernel sizes must be positive");
	for (int k = 0; k < 4; k++)
		if (pads[k] < 0 || pads[k] > 1 << 20)
			return dl_im_err(im, DL_ERR_SHAPE, "pads must be non-negative");
	if (group == 1)
	{
		if (Cg != C)
			return dl_im_err(im, DL_ERR_SHAPE, "the weights take %lld channels, the input has %lld",
						  (long long) Cg, (long long) C);
		depthwise = false;
	}
	else if (group == C && Cg == 1 && OC % C == 0)
		depthwise = true;
	else
		return dl_im_unsup(im, "group=%lld (1, or depthwise with group = channels, is converted)", (long long) group);
	if (!dl_im_attr_str_is(n, "auto_pad", "NOTSET", "NOTSET"))
	{
		if (dl_im_attr_str_is(n, "auto_pad", "VALID", "NOTSET"))
			pads[0] = pads[1] = pads[2] = pads[3] = 0;
		else if (dl_im_attr_str_is(n, "auto_pad", "SAME_UPPER", "NOTSET"))
		{
			keras_same(H, KH, st[0], dl[0], &pads[0], &pads[2]);
			keras_same(W, KW, st[1], dl[1], &pads[1], &pads[3]);
		}
		else
			return dl_im_unsup(im, "auto_pad SAME_LOWER");
	}
	if (dl[0] > 1 || dl[1] > 1)
	{
		if (st[0] > 1 || st[1] > 1)
			return dl_im_unsup(im, "dilations with strides (Keras refuses them together)");
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

			snprintf(nm, sizeof(nm), "%.100s_pad", dl_im_node_label(im));
			li = dl_im_lay1(im, "ZeroPadding2D", nm, ref, "\"padding\": [[%lld, %lld], [%lld, %lld]]",
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
		return dl_im_err(im, DL_ERR_SHAPE, "the kernel is larger than the padded input");
	dims[0] = x->dims[0];
	dims[1] = OC;
	if (depthwise)
		li = dl_im_lay1(im, "DepthwiseConv2D", dl_im_node_label(im), ref,
				  "\"kernel_size\": [%lld, %lld], \"strides\": [%lld, %lld], \"padding\": \"%s\", "
				  "\"depth_multiplier\": %lld, \"dilation_rate\": [%lld, %lld], \"activation\": \"linear\", \"use_bias\": %s",
				  (long long) KH, (long long) KW, (long long) st[0], (long long) st[1], padding,
				  (long long) (OC / C), (long long) dl[0], (long long) dl[1], b ? "true" : "false");
	else
		li = dl_im_lay1(im, "Conv2D", dl_im_node_label(im), ref,
				  "\"filters\": %lld, \"kernel_size\": [%lld, %lld], \"strides\": [%lld, %lld], \"padding\": \"%s\", "
				  "\"dilation_rate\": [%lld, %lld], \"activation\": \"linear\", \"use_bias\": %s",
				  (long long) OC, (long long) KH, (long long) KW, (long long) st[0], (long long) st[1], padding,
				  (long long) dl[0], (long long) dl[1], b ? "true" : "false");
	kw = conv_weights(im, li, (size_t) (KH * KW * Cg * OC), OC, &w, &b);
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
	return biased_out(im, li, LAY_NHWC, 4, dims, b != NULL, OC);
}

DlStatus
dl_im_op_pool(Im *im, bool mx)
{
	const Onnx__NodeProto *n = im->node;
	Val		   *x = dl_im_in_val(im, 0);
	int64_t		ks[2] = {0, 0}, st[2] = {1, 1}, pads[4] = {0, 0, 0, 0}, dl[2] = {1, 1};
	int			ref, li;
	DlStatus	s;
	const char *padding = "valid";
	int64_t		dims[4];

	if ((s = dl_im_ref_nhwc(im, x, &ref)) != DL_OK)
		return s;
	x = dl_im_in_val(im, 0);
	if (x->rank == 3)
	{
		/* (N, C, L): MaxPooling1D / AveragePooling1D */
		int64_t		k1[1] = {0}, s1[1] = {0}, p1[2] = {0, 0}, sl[2];
		const char *pd = "valid";
		int64_t		d3[3];

		if (dl_im_attr_ints(n, "kernel_shape", k1, 1) != 1)
			return dl_im_unsup(im, "kernel_shape must give 1 axis for a (N, C, L) input");
		if (dl_im_attr_ints(n, "strides", s1, 1) != 1)
			s1[0] = 1;
		if (dl_im_attr_ints(n, "pads", p1, 2) == -2 || dl_im_attr_int(n, "ceil_mode", 0) != 0 ||
			!dl_im_attr_str_is(n, "auto_pad", "NOTSET", "NOTSET") || dl_im_attr(n, "dilations"))
			return dl_im_unsup(im, "pads, ceil_mode, auto_pad or dilations of a 1-d pool");
		if (k1[0] < 1 || s1[0] < 1 || k1[0] > 1 << 20 || s1[0] > 1 << 20)
			return dl_im_err(im, DL_ERR_SHAPE, "kernel_shape and strides must be positive");
		keras_same(x->dims[2], k1[0], s1[0], 1, &sl[0], &sl[1]);
		if (p1[0] || p1[1])
		{
			if (p1[0] != sl[0] || p1[1] != sl[1] || (!mx && dl_im_attr_int(n, "count_include_pad", 0)))
				return dl_im_unsup(im, "pads of a 1-d pool other than Keras' 'same'");
			pd = "same";
		}
		d3[0] = x->dims[0];
		d3[1] = x->dims[1];
		d3[2] = strcmp(pd, "same") == 0 ? (x->dims[2] + s1[0] - 1) / s1[0] : (x->dims[2] - k1[0]) / s1[0] + 1;
		if (d3[2] < 1)
			return dl_im_err(im, DL_ERR_SHAPE, "the pool is larger than the input");
		li = dl_im_lay1(im, mx ? "MaxPooling1D" : "AveragePooling1D", dl_im_node_label(im), ref,
				  "\"pool_size\": [%lld], \"strides\": [%lld], \"padding\": \"%s\"",
				  (long long) k1[0], (long long) s1[0], pd);
		if (li < 0)
			return im->err->code;
		return dl_im_out_tensor(im, n->output[0], li, LAY_NHWC, 3, d3) ? DL_OK : im->err->code;
	}
	if (dl_im_attr_ints(n, "kernel_shape", ks, 2) != 2)
		return dl_im_unsup(im, "kernel_shape must give 2 spatial axes");
	if (dl_im_attr_ints(n, "strides", st, 2) == -2 || dl_im_attr_ints(n, "pads", pads, 4) == -2 ||
		dl_im_attr_ints(n, "dilations", dl, 2) == -2)
		return dl_im_unsup(im, "more than 2 spatial axes");
	if (dl[0] != 1 || dl[1] != 1)
		return dl_im_unsup(im, "dilations");
	if (dl_im_attr_int(n, "ceil_mode", 0) != 0)
		return dl_im_unsup(im, "ceil_mode=1");
	if (ks[0] < 1 || ks[1] < 1 || st[0] < 1 || st[1] < 1 || ks[0] > 1 << 20 || ks[1] > 1 << 20 ||
		st[0] > 1 << 20 || st[1] > 1 << 20)
		return dl_im_err(im, DL_ERR_SHAPE, "kernel_shape and strides must be positive");
	if (!mx && dl_im_attr_int(n, "count_include_pad", 0) != 0 && (pads[0] || pads[1] || pads[2] || pads[3]))
		return dl_im_unsup(im, "count_include_pad=1 with pads");
	if (pads[0] || pads[1] || pads[2] || pads[3] || !dl_im_attr_str_is(n, "auto_pad", "NOTSET", "NOTSET"))
	{
		int64_t		sl[4];

		keras_same(x->dims[2], ks[0], st[0], 1, &sl[0], &sl[2]);
		keras_same(x->dims[3], ks[1], st[1], 1, &sl[1], &sl[3]);
		if (memcmp(sl, pads, sizeof(sl)) == 0 || dl_im_attr_str_is(n, "auto_pad", "SAME_UPPER", "NOTSET"))
			padding = "same";
		else if (!dl_im_attr_str_is(n, "auto_pad", "VALID", "NOTSET"))
			return dl_im_unsup(im, "pads [%lld, %lld, %lld, %lld] (none, or Keras' 'same', are converted)",
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
		return dl_im_err(im, DL_ERR_SHAPE, "the pool is larger than the input");
	li = dl_im_lay1(im, mx ? "MaxPooling2D" : "AveragePooling2D", dl_im_node_label(im), ref,
			  "\"pool_size\": [%lld, %lld], \"strides\": [%lld, %lld], \"padding\": \"%s\"",
			  (long long) ks[0], (long long) ks[1], (long long) st[0], (long long) st[1], padding);
	if (li < 0)
		return im->err->code;
	return dl_im_out_tensor(im, n->output[0], li, LAY_NHWC, 4, dims) ? DL_OK : im->err->code;
}

/* GlobalAveragePool: (N, C, H, W) -> (N, C, 1, 1), held as (1, 1, C) */
DlStatus
dl_im_op_global_pool(Im *im, bool mx)
{
	Val		   *x = dl_im_in_val(im, 0);
	int			ref, li, li2;
	DlStatus	s;
	int64_t		dims[4];
	char		nm[DL_NAME_MAX];

	if ((s = dl_im_ref_nhwc(im, x, &ref)) != DL_OK)
		return s;
	x = dl_im_in_val(im, 0);
	if (x->rank == 3)
		li = dl_im_lay1(im, mx ? "GlobalMaxPooling1D" : "GlobalAveragePooling1D", dl_im_node_label(im), ref, "%s", "");
	else
		li = dl_im_lay1(im, mx ? "GlobalMaxPooling2D" : "GlobalAveragePooling2D", dl_im_node_label(im), ref, "%s", "");
	if (li < 0)
		return im->err->code;
	snprintf(nm, sizeof(nm), "%.100s_keepdims", dl_im_node_label(im));
	if (x->rank == 3)
		li2 = dl_im_lay1(im, "Reshape", nm, li, "\"target_shape\": [1, %lld]", (long long) x->dims[1]);
	else
		li2 = dl_im_lay1(im, "Reshape", nm, li, "\"target_shape\": [1, 1, %lld]", (long long) x->dims[1]);
	if (li2 < 0)
		return im->err->code;
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	dims[2] = dims[3] = 1;
	return dl_im_out_tensor(im, im->node->output[0], li2, LAY_NHWC, x->rank, dims) ? DL_OK : im->err->code;
}

/* ReduceMean/ReduceMax over axes 2 and 3 of NCHW (or 1, 2 of NHWC data) */
DlStatus
dl_im_op_reduce(Im *im, bool mx)
{
	const Onnx__NodeProto *n = im->node;
	Val		   *x = dl_im_in_val(im, 0);
	Val		   *ax = dl_im_in_val(im, 1);
	int64_t		axes[4];
	int			na;
	int			keep = (int) dl_im_attr_int(n, "keepdims", 1);
	int			ref, li;
	DlStatus	s;
	int64_t		dims[4];

	if (ax && ax->kind == VAL_CONST && ax->count <= 4)
	{
		na = (int) ax->count;
		memcpy(axes, ax->i, sizeof(int64_t) * (size_t) na);
	}
	else
		na = dl_im_attr_ints(n, "axes", axes, 4);
	if (x->kind == VAL_TENSOR && x->rank == 3 && na == 1 && !keep &&
		((x->layout == LAY_PLAIN && dl_im_norm_axis(axes[0], 3) == 1) ||
		 (x->layout == LAY_NHWC && dl_im_norm_axis(axes[0], 3) == 2)))
	{
		/* over the steps of (N, L, C) data, or of (N, C, L) held as (L, C) */
		int64_t		d2[2] = {x->dims[0], x->layout == LAY_PLAIN ? x->dims[2] : x->dims[1]};

		li = dl_im_lay1(im, mx ? "GlobalMaxPooling1D" : "GlobalAveragePooling1D", dl_im_node_label(im), x->ref, "%s", "");
		if (li < 0)
			return im->err->code;
		return dl_im_out_tensor(im, n->output[0], li, LAY_PLAIN, 2, d2) ? DL_OK : im->err->code;
	}
	if (x->kind != VAL_TENSOR || x->rank != 4 || na != 2)
		return dl_im_unsup(im, "only a reduction over the spatial axes of a 3-d or 4-d tensor is converted");
	for (int k = 0; k < 2; k++)
		axes[k] = dl_im_norm_axis(axes[k], 4);
	if (x->layout == LAY_PLAIN && ((axes[0] == 1 && axes[1] == 2) || (axes[0] == 2 && axes[1] == 1)))
	{
		/* the data is channels last already (e.g. export_onnx's) */
		ref = x->ref;
		dims[0] = x->dims[0];
		dims[1] = x->dims[3];
	}
	else if ((axes[0] == 2 && axes[1] == 3) || (axes[0] == 3 && axes[1] == 2))
	{
		if ((s = dl_im_ref_nhwc(im, x, &ref)) != DL_OK)
			return s;
		x = dl_im_in_val(im, 0);
		dims[0] = x->dims[0];
		dims[1] = x->dims[1];
		if (keep)
		{
			Val		   *o = NULL;

			(void) o;
			return dl_im_op_global_pool(im, mx);
		}
	}
	else
		return dl_im_unsup(im, "only a reduction over the two spatial axes of a 4-d tensor is converted");
	if (keep)
		return dl_im_unsup(im, "keepdims=1 over axes 1 and 2");
	li = dl_im_lay1(im, mx ? "GlobalMaxPooling2D" : "GlobalAveragePooling2D", dl_im_node_label(im), ref, "%s", "");
	if (li < 0)
		return im->err->code;
	return dl_im_out_tensor(im, n->output[0], li, LAY_PLAIN, 2, dims) ? DL_OK : im->err->code;
}

DlStatus
dl_im_op_batchnorm(Im *im)
{
	Val		   *x = dl_im_in_val(im, 0);
	Val		   *p[4];
	int64_t		C;
	int			ref, li;
	DlStatus	s;
	Layout		lay;
	float	   *w;
	Val			xv;

	for (int k = 0; k < 4; k++)
	{
		p[k] = dl_im_in_val(im, k + 1);
		if (p[k] == NULL || p[k]->kind != VAL_CONST)
			return dl_im_unsup(im, "scale, B, mean and var must be constants");
	}
	if (x->kind != VAL_TENSOR || x->rank < 2 || x->rank > 4)
		return dl_im_unsup(im, "only (N, C), (N, C, L) and (N, C, H, W) inputs are converted");
	C = x->dims[1];
	for (int k = 0; k < 4; k++)
		if (p[k]->count != (size_t) C)
			return dl_im_err(im, DL_ERR_SHAPE, "\"%.100s\" has %zu values for %lld channels", p[k]->name,
						  p[k]->count, (long long) C);
	for (size_t k = 1; k < im->node->n_output; k++)
		if (im->node->output[k] && im->node->output[k][0])
			return dl_im_unsup(im, "training-mode outputs (running mean and variance)");
	if (x->rank >= 3)
	{
		if ((s = dl_im_ref_nhwc(im, x, &ref)) != DL_OK)
			return s;
		lay = LAY_NHWC;
	}
	else
	{
		if ((s = dl_im_ref_plain(im, x, &ref)) != DL_OK)
			return s;
		lay = LAY_PLAIN;
	}
	xv = *dl_im_in_val(im, 0);
	li = dl_im_lay1(im, "BatchNormalization", dl_im_node_label(im), ref,
			  "\"axis\": -1, \"epsilon\": %.9g, \"momentum\": %.9g, \"center\": true, \"scale\": true",
			  dl_im_attr_float(im->node, "epsilon", 1e-5), dl_im_attr_float(im->node, "momentum", 0.9));
	if (li < 0)
		return im->err->code;
	w = dl_im_lay_weights(im, li, (size_t) (4 * C));
	if (w == NULL)
		return im->err->code;
	for (int k = 0; k < 4; k++)
	{
		p[k] = dl_im_in_val(im, k + 1);
		memcpy(w + k * C, p[k]->f, sizeof(float) * (size_t) C);
	}
	return dl_im_out_tensor(im, im->node->output[0], li, lay, xv.rank, xv.dims) ? DL_OK : im->err->code;
}

/* LayerNormalization over the last axis */
DlStatus
dl_im_op_layernorm(Im *im)
{
	Val		   *x = dl_im_in_val(im, 0),
			   *g = dl_im_in_val(im, 1),
			   *b = dl_im_in_val(im, 2);
	int			ref, li;
	DlStatus	s;
	int64_t		C;
	float	   *w;
	Val			xv;

	if (x->kind != VAL_TENSOR || g->kind != VAL_CONST || (b && b->kind != VAL_CONST))
		return dl_im_unsup(im, "scale and B must be constants");
	if (dl_im_norm_axis(dl_im_attr_int(im->node, "axis", -1), x->rank) != x->rank - 1)
		return dl_im_unsup(im, "normalization over axes other than the last");
	for (size_t k = 1; k < im->node->n_output; k++)
		if (im->node->output[k] && im->node->output[k][0])
			return dl_im_unsup(im, "the Mean and InvStdDev outputs");
	if ((s = dl_im_ref_plain(im, x, &ref)) != DL_OK)
		return s;
	xv = *dl_im_in_val(im, 0);
	g = dl_im_in_val(im, 1);
	b = dl_im_in_val(im, 2);
	C = xv.dims[xv.rank - 1];
	if (g->count != (size_t) C || (b && b->count != (size_t) C))
		return dl_im_err(im, DL_ERR_SHAPE, "scale and B must have %lld values", (long long) C);
	li = dl_im_lay1(im, "LayerNormalization", dl_im_node_label(im), ref,
			  "\"axis\": -1, \"epsilon\": %.9g, \"center\": true, \"scale\": true",
			  dl_im_attr_float(im->node, "epsilon", 1e-5));
	if (li < 0)
		return im->err->code;
	w = dl_im_lay_weights(im, li, (size_t) (2 * C));
	if (w == NULL)
		return im->err->code;
	memcpy(w, dl_im_in_val(im, 1)->f, sizeof(float) * (size_t) C);
	if (b)
		memcpy(w + C, dl_im_in_val(im, 2)->f, sizeof(float) * (size_t) C);
	return dl_im_out_tensor(im, im->node->output[0], li, LAY_PLAIN, xv.rank, xv.dims) ? DL_OK : im->err->code;
}

DlStatus
dl_im_op_flatten(Im *im)
{
	Val		   *x = dl_im_in_val(im, 0);
	int			axis;
	int			ref, li;
	DlStatus	s;
	int64_t		dims[2];
	int64_t		size = 1;

	if (x->kind != VAL_TENSOR)
		return dl_im_unsup(im, "input must be a computed tensor");
	axis = dl_im_norm_axis(dl_im_attr_int(im->node, "axis", 1), x->rank);
	if (axis != 1)
		return dl_im_unsup(im, "axis %lld (1 is converted)", (long long) dl_im_attr_int(im->node, "axis", 1));
	for (int d = 1; d < x->rank; d++)
		size *= x->dims[d];
	dims[0] = x->dims[0];
	dims[1] = size;
	if (x->rank == 2 && x->layout == LAY_PLAIN)
		return dl_im_alias(im, x);
	if (x->layout == LAY_NHWC && x->dims[2] * (x->rank == 4 ? x->dims[3] : 1) == 1)
		ref = x->ref;			/* (1, 1, C) flattens as (C, 1, 1) */
	else if ((s = dl_im_ref_plain(im, x, &ref)) != DL_OK)
		return s;
	li = dl_im_lay1(im, "Flatten", dl_im_node_label(im), ref, "%s", "");
	if (li < 0)
		return im->err->code;
	return dl_im_out_tensor(im, im->node->output[0], li, LAY_PLAIN, 2, dims) ? DL_OK : im->err->code;
}

DlStatus
dl_im_op_reshape(Im *im)
{
	Val		   *x = dl_im_in_val(im, 0),
			   *sh = dl_im_in_val(im, 1);
	int64_t		dims[MAX_DIMS];
	int64_t		size = 1, known = 1;
	int			infer = -1;
	int			ref, li;
	DlStatus	s;
	char		cfg[256];
	size_t		pos;

	if (sh == NULL || sh->kind != VAL_CONST || !sh->is_int || sh->count < 1 || sh->count > DL_MAX_RANK + 1)
		return dl_im_unsup(im, "the shape must be a constant of 1 to %d integers", DL_MAX_RANK + 1);
	if (x->kind == VAL_RNN_Y_TNDH)
	{
		/* (T, N, 2, H) -> (T, N, 2H): the bidirectional sequence, time major */
		int64_t		T = x->dims[0], H2 = 2 * x->dims[3];
		int64_t		d3[3] = {T, x->dims[1], H2};
		Val		   *o;

		if (sh->count != 3 || !(sh->i[0] == 0 || sh->i[0] == T) ||
			!(sh->i[1] == 0 || sh->i[1] == -1 || sh->i[1] == BATCH_DIM) || !(sh->i[2] == -1 || sh->i[2] == H2))
			return dl_im_unsup(im, "a reshape of a bidirectional sequence other than to (T, N, 2H)");
		/* a bidirectional layer is never "reverse": no new error here */
		o = dl_im_rnn_sequence(im, x->rnn, im->node->output[0], LAY_TIME_MAJOR, 3, d3);
		if (o == NULL)
			return im->err->code;
		o->seq_tm = true;
		return DL_OK;
	}
	if (x->kind != VAL_TENSOR)
		return dl_im_unsup(im, "input must be a computed tensor");
	if (sh->i[0] != 0 && sh->i[0] != -1 && sh->i[0] != BATCH_DIM)
		return dl_im_unsup(im, "the shape's first dimension must keep the batch (0 or -1)");
	for (int d = 1; d < x->rank; d++)
		size *= x->dims[d];
	dims[0] = x->dims[0];
	for (size_t d = 1; d < sh->count; d++)
	{
		int64_t		v = sh->i[d];

		if (v == BATCH_DIM)
			return dl_im_unsup(im, "a shape that moves the batch dimension");
		if (v == 0)
			v = (int) d < x->rank ? x->dims[d] : 0;
		if (v == -1)
		{
			if (infer >= 0)
				return dl_im_err(im, DL_ERR_SHAPE, "the shape has two -1");
			infer = (int) d;
			continue;
		}
		if (v < 1 || v > size || known > size / v)
			return dl_im_err(im, DL_ERR_SHAPE, "the shape has dimension %lld", (long long) sh->i[d]);
		dims[d] = v;
		known *= v;
	}
	if (infer >= 0)
	{
		if (known == 0 || size % known != 0)
			return dl_im_err(im, DL_ERR_SHAPE, "the shape does not divide the input's %lld values", (long long) size);
		dims[infer] = size / known;
		known = size;
	}
	if (known != size || sh->count < 2)
		return dl_im_err(im, DL_ERR_SHAPE, "the shape does not hold the input's %lld values", (long long) size);
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

			o = dl_im_out_tensor(im, im->node->output[0], xv.ref, LAY_PLAIN, (int) sh->count, dims);
			if (o == NULL)
				return im->err->code;
			o->rnn = xv.rnn;
			return DL_OK;
		}
	}
	if ((s = dl_im_ref_plain(im, x, &ref)) != DL_OK)
		return s;
	pos = (size_t) snprintf(cfg, sizeof(cfg), "\"target_shape\": [");
	for (size_t d = 1; d < sh->count; d++)
		pos += (size_t) snprintf(cfg + pos, sizeof(cfg) - pos, "%s%lld", d > 1 ? ", " : "", (long long) dims[d]);
	snprintf(cfg + pos, sizeof(cfg) - pos, "]");
	li = dl_im_lay1(im, "Reshape", dl_im_node_label(im), ref, "%s", cfg);
	if (li < 0)
		return im->err->code;
	return dl_im_out_tensor(im, im->node->output[0], li, LAY_PLAIN, (int) sh->count, dims) ? DL_OK : im->err->code;
}

DlStatus
dl_im_op_transpose(Im *im)
{
	Val		   *x = dl_im_in_val(im, 0);
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

	k = dl_im_attr_ints(im->node, "perm", perm, MAX_DIMS);
	if (x->kind == VAL_RNN_Y && k == 4 && perm[0] == 2 && perm[1] == 0 && perm[2] == 1 && perm[3] == 3)
	{
		/* Y (T, 1, N, H) -> (N, T, 1, H): the full sequence, batch first */
		int64_t		d4[4] = {x->dims[2], x->dims[0], x->dims[1], x->dims[3]};
		Val		   *o = dl_im_rnn_sequence(im, x->rnn, im->node->output[0], LAY_PLAIN, 4, d4);

		if (o == NULL)
			return im->err->code;
		o->squash = true;
		return DL_OK;
	}
	if (x->kind == VAL_RNN_YH && im->rnns[x->rnn].D == 2 && k == 3 && perm[0] == 1 && perm[1] == 0 && perm[2] == 2)
	{
		/* Y_h (2, N, H) -> (N, 2, H): the final states, forward's then backward's */
		int64_t		d3[3] = {x->dims[1], 2, x->dims[2]};
		int			lj = dl_im_rnn_layer(im, x->rnn, false);

		Val		   *o;

		if (lj < 0)
			return im->err->code;
		o = dl_im_out_tensor(im, im->node->output[0], lj, LAY_PLAIN, 3, d3);
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
		Val		   *o = dl_im_out_tensor(im, im->node->output[0], 0, LAY_PLAIN, 4, d4);

		if (o == NULL)
			return im->err->code;
		o->kind = VAL_RNN_Y_TNDH;
		o->rnn = ri;
		return DL_OK;
	}
	if (x->kind != VAL_TENSOR)
		return dl_im_unsup(im, "input must be a computed tensor");
	if (k < 0)
	{
		k = x->rank;
		for (int d = 0; d < k; d++)
			perm[d] = k - 1 - d;
	}
	if (k != x->rank)
		return dl_im_err(im, DL_ERR_SHAPE, "perm has %d axes, the input %d", k, x->rank);
	for (int d = 0; d < k; d++)
	{
		if (perm[d] < 0 || perm[d] >= k)
			return dl_im_err(im, DL_ERR_SHAPE, "perm names axis %lld", (long long) perm[d]);
		for (int e = 0; e < d; e++)
			if (perm[e] == perm[d])
				return dl_im_err(im, DL_ERR_SHAPE, "perm names axis %lld twice", (long long) perm[d]);
		dims[d] = x->dims[perm[d]];
		ident = ident && perm[d] == d;
	}
	xv = *x;
	if (ident)
		return dl_im_alias(im, x);
	/* (N, T, F) <-> (T, N, F): the engine keeps batch first */
	if (k == 3 && perm[0] == 1 && perm[1] == 0 && perm[2] == 2 &&
		(xv.layout == LAY_PLAIN || xv.layout == LAY_TIME_MAJOR))
	{
		if ((s = dl_im_alias(im, x)) != DL_OK)
			return s;
		o = &im->vals[dl_im_val_find(im, im->node->output[0])];
		o->layout = xv.layout == LAY_PLAIN ? LAY_TIME_MAJOR : LAY_PLAIN;
		memcpy(o->dims, dims, sizeof(dims));
		o->seq_tm = !xv.seq_tm;
		return DL_OK;
	}
	if (perm[0] != 0)
		return dl_im_unsup(im, "a perm that moves the batch axis");
	/* channels last <-> first without a layer */
	if ((k == 4 && xv.layout == LAY_PLAIN && perm[1] == 3 && perm[2] == 1 && perm[3] == 2) ||
		(k == 3 && xv.layout == LAY_PLAIN && perm[1] == 2 && perm[2] == 1) ||
		(k == 4 && xv.layout == LAY_NHWC && perm[1] == 2 && perm[2] == 3 && perm[3] == 1) ||
		(k == 3 && xv.layout == LAY_NHWC && perm[1] == 2 && perm[2] == 1))
	{
		if ((s = dl_im_alias(im, x)) != DL_OK)
			return s;
		o = &im->vals[dl_im_val_find(im, im->node->output[0])];
		o->layout = xv.layout == LAY_PLAIN ? LAY_NHWC : LAY_PLAIN;
		o->nhwc_ref = INT32_MIN;
		o->plain_ref = INT32_MIN;
		memcpy(o->dims, dims, sizeof(dims));
		return DL_OK;
	}
	if ((s = dl_im_ref_plain(im, x, &ref)) != DL_OK)
		return s;
	pos = (size_t) snprintf(cfg, sizeof(cfg), "\"dims\": [");
	for (int d = 1; d < k; d++)
		pos += (size_t) snprintf(cfg + pos, sizeof(cfg) - pos, "%s%lld", d > 1 ? ", " : "", (long long) perm[d]);
	snprintf(cfg + pos, sizeof(cfg) - pos, "]");
	li = dl_im_lay1(im, "Permute", dl_im_node_label(im), ref, "%s", cfg);
	if (li < 0)
		return im->err->code;
	return dl_im_out_tensor(im, im->node->output[0], li, LAY_PLAIN, k, dims) ? DL_OK : im->err->code;
}

DlStatus
dl_im_op_softmax(Im *im)
{
	Val		   *x = dl_im_in_val(im, 0);
	int			axis;

	if (x->kind != VAL_TENSOR)
		return dl_im_unsup(im, "input must be a computed tensor");
	axis = dl_im_norm_axis(dl_im_attr_int(im->node, "axis", im->opset >= 13 ? -1 : 1), x->rank);
	if (im->opset < 13 && x->rank != 2)
		return dl_im_unsup(im, "Softmax before opset 13 over a tensor of rank %d", x->rank);
	if ((x->layout == LAY_PLAIN && axis == x->rank - 1) || (x->layout == LAY_NHWC && axis == 1))
		return dl_im_op_elementwise(im, x, "Activation", "\"activation\": \"softmax\"");
	if (x->layout == LAY_PLAIN && x->rank == 4 && axis == 1)
	{
		int			ref;
		DlStatus	s = dl_im_ref_nhwc(im, x, &ref);
		Val			v;
		int			li;

		if (s != DL_OK)
			return s;
		v = *dl_im_in_val(im, 0);
		li = dl_im_lay1(im, "Activation", dl_im_node_label(im), ref, "\"activation\": \"softmax\"");
		if (li < 0)
			return im->err->code;
		return dl_im_out_tensor(im, im->node->output[0], li, LAY_NHWC, 4, v.dims) ? DL_OK : im->err->code;
	}
	return dl_im_unsup(im, "softmax over axis %d (the last axis, or the channels, is converted)", axis);
}

DlStatus
dl_im_op_gather(Im *im)
{
	Val		   *data = dl_im_in_val(im, 0),
			   *idx = dl_im_in_val(im, 1);
	int64_t		axis = dl_im_attr_int(im->node, "axis", 0);

	if (data->kind == VAL_CONST && idx->kind == VAL_CONST)
		return dl_im_fold_gather(im, data, idx);
	if (data->kind == VAL_CONST && idx->kind == VAL_TENSOR)
	{
		/* an embedding lookup */
		int			ref, li;
		DlStatus	s;
		int64_t		dims[MAX_DIMS];
		float	   *w;
		Val			iv;

		if (axis != 0 || data->rank != 2)
			return dl_im_unsup(im, "an embedding is a 2-d constant gathered along axis 0");
		if (idx->rank + 1 > DL_MAX_RANK + 1)
			return dl_im_unsup(im, "indices of rank %d", idx->rank);
		if ((s = dl_im_ref_plain(im, idx, &ref)) != DL_OK)
			return s;
		iv = *dl_im_in_val(im, 1);
		data = dl_im_in_val(im, 0);
		li = dl_im_lay1(im, "Embedding", dl_im_node_label(im), ref, "\"input_dim\": %lld, \"output_dim\": %lld",
				  (long long) data->dims[0], (long long) data->dims[1]);
		if (li < 0)
			return im->err->code;
		w = dl_im_lay_weights(im, li, data->count);
		if (w == NULL)
			return im->err->code;
		memcpy(w, dl_im_in_val(im, 0)->f, sizeof(float) * dl_im_in_val(im, 0)->count);
		memcpy(dims, iv.dims, sizeof(int64_t) * (size_t) iv.rank);
		dims[iv.rank] = dl_im_in_val(im, 0)->dims[1];
		return dl_im_out_tensor(im, im->node->output[0], li, LAY_PLAIN, iv.rank + 1, dims) ? DL_OK : im->err->code;
	}
	if (idx->kind == VAL_CONST && idx->count == 1 && data->kind == VAL_RNN_YH &&
		im->rnns[data->rnn].D == 2 && dl_im_norm_axis(axis, 3) == 0)
	{
		/* h_n[-2] (forward) or h_n[-1] (backward) of a bidirectional layer */
		int64_t		t = idx->i[0];
		int			ri = data->rnn;
		int64_t		d2[2] = {data->dims[1], data->dims[2]};
		Val		   *o;

		if (t < -2 || t > 1)
			return dl_im_err(im, DL_ERR_SHAPE, "index %lld of a bidirectional state", (long long) t);
		o = dl_im_out_tensor(im, im->node->output[0], 0, LAY_PLAIN, 2, d2);
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
			return dl_im_unsup(im, "a gather from a bidirectional output other than of its final states");

		if (dl_im_norm_axis(axis, data->rank) != want_axis)
			return dl_im_unsup(im, "a gather from a recurrent output other than its last step");
		if (data->kind == VAL_RNN_YH ? (t != 0 && t != -1) : (t != -1 && t != r->T - 1) || r->reverse)
			return dl_im_unsup(im, "a gather from a recurrent output other than its last step");
		return dl_im_rnn_last(im, data->rnn, im->node->output[0]);
	}
	return dl_im_unsup(im, "Gather other than an embedding lookup or a recurrent layer's last step");
}
