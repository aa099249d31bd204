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
 * This file is the driver: the dispatch of each node to its converter,
 * the graph's inputs, the topological order, and the JSON written.  The
 * converters are in onnx_import_ops.c (layer operators), onnx_import_rnn.c
 * (LSTM, GRU) and onnx_import_fold.c (constants, shape arithmetic, GELU);
 * what they all use (errors, values, tensors, attributes, layers, layouts)
 * is in onnx_import_core.c, declared in onnx_import_impl.h.
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

#include "madlib_dl/dl_strbuf.h"
#include "onnx_import_impl.h"

static DlStatus
need_inputs(Im *im, int min)
{
	for (int k = 0; k < min; k++)
		if (dl_im_in_val(im, k) == NULL)
			return dl_im_err(im, DL_ERR_INVALID_ARGUMENT, "input %d is missing", k + 1);
	if (im->node->n_output < 1 || im->node->output[0] == NULL || im->node->output[0][0] == '\0')
		return dl_im_err(im, DL_ERR_INVALID_ARGUMENT, "the node has no output");
	return DL_OK;
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
static DlStatus
convert_node(Im *im)
{
	const Onnx__NodeProto *n = im->node;
	const char *op = n->op_type ? n->op_type : "";
	const char *act;
	DlStatus	st;

	if (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
		return dl_im_unsup(im, "operator of domain \"%.60s\"", n->domain);
	if (strcmp(op, "Constant") == 0)
	{
		if (n->n_output < 1 || !n->output[0] || !n->output[0][0])
			return dl_im_err(im, DL_ERR_INVALID_ARGUMENT, "the node has no output");
		return dl_im_op_constant(im);
	}
	if ((st = need_inputs(im, 1)) != DL_OK)
		return st;
	{
		bool		done;

		if ((st = dl_im_try_gelu(im, op, &done)) != DL_OK || done)
			return st;
	}
	if ((act = act_of(op)) != NULL)
	{
		char		cfg[64];

		snprintf(cfg, sizeof(cfg), "\"activation\": \"%s\"", act);
		return dl_im_op_elementwise(im, dl_im_in_val(im, 0), "Activation", cfg);
	}
	if (strcmp(op, "Identity") == 0 || strcmp(op, "Dropout") == 0)
	{
		if (strcmp(op, "Dropout") == 0 && n->n_output > 1 && n->output[1] && n->output[1][0])
			return dl_im_unsup(im, "the mask output of Dropout");
		return dl_im_alias(im, dl_im_in_val(im, 0));
	}
	if (strcmp(op, "Cast") == 0)
	{
		int64_t		to = dl_im_attr_int(n, "to", 1);

		if (dl_im_in_val(im, 0)->kind != VAL_TENSOR ||
			(to != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && to != ONNX__TENSOR_PROTO__DATA_TYPE__INT64 &&
			 to != ONNX__TENSOR_PROTO__DATA_TYPE__INT32))
			return dl_im_unsup(im, "Cast to type %lld of a computed tensor", (long long) to);
		return dl_im_alias(im, dl_im_in_val(im, 0));
	}
	if (strcmp(op, "Gemm") == 0)
		return (st = need_inputs(im, 2)) != DL_OK ? st : dl_im_op_gemm(im);
	if (strcmp(op, "MatMul") == 0)
		return (st = need_inputs(im, 2)) != DL_OK ? st : dl_im_op_matmul(im);
	if (strcmp(op, "Add") == 0 || strcmp(op, "Sub") == 0 || strcmp(op, "Mul") == 0)
		return (st = need_inputs(im, 2)) != DL_OK ? st : dl_im_op_binary(im, op);
	if (strcmp(op, "Sum") == 0 || strcmp(op, "Mean") == 0 || strcmp(op, "Max") == 0 || strcmp(op, "Min") == 0)
		return dl_im_op_variadic(im, op);
	if (strcmp(op, "Concat") == 0)
		return dl_im_in_val(im, 0)->kind == VAL_CONST ? dl_im_fold_concat(im) : dl_im_op_concat(im);
	if (strcmp(op, "Conv") == 0)
		return (st = need_inputs(im, 2)) != DL_OK ? st : dl_im_op_conv(im);
	if (strcmp(op, "MaxPool") == 0 || strcmp(op, "AveragePool") == 0)
	{
		if (n->n_output > 1 && n->output[1] && n->output[1][0])
			return dl_im_unsup(im, "the Indices output");
		return dl_im_op_pool(im, strcmp(op, "MaxPool") == 0);
	}
	if (strcmp(op, "GlobalAveragePool") == 0 || strcmp(op, "GlobalMaxPool") == 0)
		return dl_im_op_global_pool(im, strcmp(op, "GlobalMaxPool") == 0);
	if (strcmp(op, "ReduceMean") == 0 || strcmp(op, "ReduceMax") == 0)
		return dl_im_op_reduce(im, strcmp(op, "ReduceMax") == 0);
	if (strcmp(op, "BatchNormalization") == 0)
		return (st = need_inputs(im, 5)) != DL_OK ? st : dl_im_op_batchnorm(im);
	if (strcmp(op, "Flatten") == 0)
		return dl_im_op_flatten(im);
	if (strcmp(op, "LayerNormalization") == 0)
		return (st = need_inputs(im, 2)) != DL_OK ? st : dl_im_op_layernorm(im);
	if (strcmp(op, "Reshape") == 0)
		return (st = need_inputs(im, 2)) != DL_OK ? st : dl_im_op_reshape(im);
	if (strcmp(op, "Transpose") == 0)
		return dl_im_op_transpose(im);
	if (strcmp(op, "Softmax") == 0)
		return dl_im_op_softmax(im);
	if (strcmp(op, "LeakyRelu") == 0)
	{
		char		cfg[64];

		snprintf(cfg, sizeof(cfg), "\"alpha\": %.9g", dl_im_attr_float(n, "alpha", 0.01));
		return dl_im_op_elementwise(im, dl_im_in_val(im, 0), "LeakyReLU", cfg);
	}
	if (strcmp(op, "Elu") == 0)
	{
		if (dl_im_attr_float(n, "alpha", 1.0) != 1.0)
			return dl_im_unsup(im, "alpha other than 1");
		return dl_im_op_elementwise(im, dl_im_in_val(im, 0), "Activation", "\"activation\": \"elu\"");
	}
	if (strcmp(op, "Selu") == 0)
	{
		if (dl_im_attr(n, "alpha") || dl_im_attr(n, "gamma"))
		{
			if (fabs(dl_im_attr_float(n, "alpha", 1.67326) - 1.67326319217681884765625) > 1e-6 ||
				fabs(dl_im_attr_float(n, "gamma", 1.0507) - 1.05070102214813232421875) > 1e-6)
				return dl_im_unsup(im, "alpha or gamma other than the defaults");
		}
		return dl_im_op_elementwise(im, dl_im_in_val(im, 0), "Activation", "\"activation\": \"selu\"");
	}
	if (strcmp(op, "HardSigmoid") == 0)
	{
		if (fabs(dl_im_attr_float(n, "alpha", 0.2) - 0.2) > 1e-7 || fabs(dl_im_attr_float(n, "beta", 0.5) - 0.5) > 1e-7)
			return dl_im_unsup(im, "alpha %g, beta %g (0.2 and 0.5 are converted)",
							dl_im_attr_float(n, "alpha", 0.2), dl_im_attr_float(n, "beta", 0.5));
		return dl_im_op_elementwise(im, dl_im_in_val(im, 0), "Activation", "\"activation\": \"hard_sigmoid\"");
	}
	if (strcmp(op, "Gelu") == 0)
	{
		if (!dl_im_attr_str_is(n, "approximate", "none", "none"))
			return dl_im_unsup(im, "approximate=tanh");
		return dl_im_op_elementwise(im, dl_im_in_val(im, 0), "Activation", "\"activation\": \"gelu\"");
	}
	if (strcmp(op, "Gather") == 0)
		return (st = need_inputs(im, 2)) != DL_OK ? st : dl_im_op_gather(im);
	if (strcmp(op, "LSTM") == 0 || strcmp(op, "GRU") == 0)
		return (st = need_inputs(im, 3)) != DL_OK ? st : dl_im_op_rnn(im, strcmp(op, "GRU") == 0);
	if (strcmp(op, "Squeeze") == 0)
		return dl_im_op_squeeze(im);
	if (strcmp(op, "Shape") == 0)
		return dl_im_op_shape(im);
	if (strcmp(op, "Unsqueeze") == 0)
		return dl_im_op_unsqueeze(im);
	if (strcmp(op, "ConstantOfShape") == 0)
		return dl_im_op_constant_of_shape(im);
	return dl_im_unsup(im, "operator %.60s is not supported", op);
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
		return dl_im_err(im, DL_ERR_INVALID_ARGUMENT, "a graph input has no name");
	if (k >= DL_MAX_IO)
		return dl_im_err(im, DL_ERR_LIMIT, "the graph has more than %d inputs", DL_MAX_IO);
	if (vi->type == NULL || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
		(tt = vi->type->tensor_type) == NULL || (sh = tt->shape) == NULL)
		return dl_im_err(im, DL_ERR_SHAPE, "graph input \"%.100s\" has no tensor shape", vi->name);
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
	dl_im_make_name(im, vi->name, im->input_names[k]);
	im->input_ranks[k] = (int) sh->n_dim - 1;
	for (size_t d = 1; d < sh->n_dim; d++)
		im->input_shapes[k][d - 1] = dims[d];
	im->n_inputs++;
	v = dl_im_out_tensor(im, vi->name, -1 - k, LAY_PLAIN, (int) sh->n_dim, dims);
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

/* The name slot of a node's input in, or NULL where in is empty (an optional input left out). */
static NameSlot *
input_slot(NameSlot *tab, size_t cap, const char *in)
{
	return in == NULL || in[0] == '\0' ? NULL : dl_im_name_slot(tab, cap, in);
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
		return dl_im_oom(im);
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
			sl = dl_im_name_slot(tab, cap, nd->output[o]);
			if (sl->producer >= 0 || dl_im_val_find(im, nd->output[o]) >= 0)
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
			NameSlot   *sl = input_slot(tab, cap, in);

			if (sl == NULL)
				continue;
			sl->uses++;
			if (sl->producer >= 0)
			{
				indeg[k]++;
				edge_start[sl->producer + 1]++;
				n_edges++;
			}
			else if (dl_im_val_find(im, in) < 0)
			{
				dl_error_set(im->err, DL_ERR_INVALID_ARGUMENT,
							 "node \"%.100s\" (%.40s) reads tensor \"%.100s\", which no node, input or initializer gives",
							 g->node[k]->name ? g->node[k]->name : "", g->node[k]->op_type ? g->node[k]->op_type : "", in);
				return dl_error_hint(im->err, "The file is incomplete: export the model again.");
			}
		}
	for (size_t q = 0; q < g->n_output; q++)
		if (g->output[q]->name)
			dl_im_name_slot(tab, cap, g->output[q]->name)->uses++;
	edges = dl_onnx_arena_alloc(&im->arena, sizeof(int) * (n_edges + 1));
	if (edges == NULL)
		return dl_im_oom(im);
	for (size_t k = 0; k < n; k++)
		edge_start[k + 1] += edge_start[k];
	memcpy(fill, edge_start, sizeof(int) * (n + 1));
	for (size_t k = 0; k < n; k++)
		for (size_t j = 0; j < g->node[k]->n_input; j++)
		{
			NameSlot   *sl = input_slot(tab, cap, g->node[k]->input[j]);

			if (sl != NULL && sl->producer >= 0)
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
					if (nd->input[j] && nd->input[j][0] && dl_im_val_find(im, nd->input[j]) < 0)
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
		if (dl_im_val_find(im, t->name) >= 0)
			return dl_error_set(im->err, DL_ERR_INVALID_ARGUMENT, "tensor \"%.100s\" is given twice", t->name);
		if ((st = dl_im_const_from_tensor(im, t, t->name)) != DL_OK)
			return st;
	}
	for (size_t k = 0; k < g->n_input; k++)
	{
		if (g->input[k]->name && dl_im_val_find(im, g->input[k]->name) >= 0)
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
		int			vi = nm ? dl_im_val_find(im, nm) : -1;
		int			ref;
		Val		   *v;

		if (vi < 0)
			return dl_error_set(im->err, DL_ERR_INVALID_ARGUMENT, "graph output \"%.100s\" is not computed", nm ? nm : "");
		v = &im->vals[vi];
		if (v->kind == VAL_RNN_YH)
		{
			if ((st = dl_im_rnn_last(im, v->rnn, "\001tmp")) != DL_OK)
				return st;
			v = &im->vals[dl_im_val_find(im, "\001tmp")];
			v->name = "\001used";
		}
		if ((st = dl_im_ref_plain(im, v, &ref)) != DL_OK)
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
			dl_im_make_name(im, nm, nn);
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
