/*-------------------------------------------------------------------------
 *
 * keras_graph.c
 *	  The Keras reader's model topology: a functional model's graph (its
 *	  layers' inbound nodes resolved by name and ordered so that each
 *	  layer comes after what it reads) and a Sequential model's chain,
 *	  both into a DlModelSpec.  Part of the reader described in
 *	  keras_json.c.
 *
 * IDENTIFICATION
 *	  src/engine/keras_graph.c
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "madlib_dl/dl_caps.h"
#include "madlib_dl/dl_keras.h"

#include "keras_internal.h"

/* ----------------------------------------------------------------------
 * Functional models: the graph
 *
 * A functional model lists its layers, each with the tensors it was
 * called on ("inbound_nodes"), plus the model's input and output layers.
 * A tensor is [layer name, node index, tensor index]: which call of which
 * layer, which of its outputs.  read_graph resolves every reference by
 * name, orders the layers so that each comes after what it reads
 * (read_graph_order), and checks that each layer leads to an output.
 * Bounds for hostile JSON: DL_MAX_LAYERS layers, DL_MAX_FAN_IN tensors a
 * layer, DL_MAX_IO inputs and outputs; the work is linear in the text
 * but for the ordering, O(layers^2).
 * ----------------------------------------------------------------------
 */

/* A tensor a layer reads, or a model input or output: [name, node, tensor]. */
typedef struct KerasRef
{
	const char *name;			/* owned by the json tree */
	int64_t		node_index;		/* which call of the layer */
	int64_t		tensor_index;	/* which of its outputs */
	int			node;			/* the layer, once resolved */
} KerasRef;

/* A layer of a functional model while its graph is read. */
typedef struct KerasNode
{
	json_object *layer;			/* the layer's object in the model's list */
	const char *name;			/* owned by the json tree */
	bool		is_input;		/* class InputLayer */
	int			n_calls;		/* entries of inbound_nodes */
	int			first_ref;		/* the tensors it reads: refs[first_ref ..] */
	int			n_refs;
	int			input_no;		/* InputLayer: its place among the inputs */
	int			pending;		/* tensors it reads of layers not yet ordered */
	int			spec_index;		/* its place in the spec, -1 before ordering */
	bool		reaches_output;
} KerasNode;

/* A name and its layer, for lookups by name. */
typedef struct KerasName
{
	const char *name;
	int			node;
} KerasName;

/* The graph being read; every array comes from the allocator. */
typedef struct KerasGraph
{
	const DlAllocator *alloc;
	int			n;				/* layers, InputLayers included */
	KerasNode  *nodes;			/* (n), in the model's list order */
	KerasName  *names;			/* (n), sorted by name */
	KerasRef   *refs;			/* every layer's inbound tensors */
	int			n_refs;
	int			cap_refs;
	KerasRef	inputs[DL_MAX_IO];
	int			n_inputs;
	KerasRef	outputs[DL_MAX_IO];
	int			n_outputs;
	int		   *order;			/* (n) non-input layers in spec order */
	int			n_order;
	int		   *consumers;		/* (n_refs) the layers reading each layer, */
	int		   *cons_start;		/* (n + 1) grouped by the layer read */
} KerasGraph;

static void
graph_free(KerasGraph *g)
{
	dl_free(g->alloc, g->nodes);
	dl_free(g->alloc, g->names);
	dl_free(g->alloc, g->refs);
	dl_free(g->alloc, g->order);
	dl_free(g->alloc, g->consumers);
	dl_free(g->alloc, g->cons_start);
}

/* Refuse the structure of a functional model: layer "<who>" <what>. */
static DlStatus
refuse_graph(const char *who, const char *what, DlError *err)
{
	char		name[KERAS_TEXT_MAX];

	keras_copy_clipped(name, sizeof(name), who);
	dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\" %s", name, what);
	return dl_error_hint(err, "%s", keras_hint_graph);
}

/*
 * Read v as a reference [name, node_index, tensor_index, ...] into *ref.
 * false when v is not one (a list not starting with a name).
 */
static bool
read_ref_list(json_object *v, KerasRef *ref)
{
	json_object *first = keras_jidx(v, 0);

	if (keras_jlen(v) < 3 || first == NULL || !json_object_is_type(first, json_type_string))
		return false;
	ref->name = json_object_get_string(first);
	if (!keras_json_int64(keras_jidx(v, 1), &ref->node_index) || !keras_json_int64(keras_jidx(v, 2), &ref->tensor_index))
		ref->node_index = -1;	/* malformed: refused when resolved */
	ref->node = -1;
	return true;
}

/*
 * Add every tensor found under v to the layer's references, in order:
 * tf.keras 2, Keras 2.2 and TF.js write [name, node_index, tensor_index,
 * kwargs]; Keras 3 writes {"class_name": "__keras_tensor__", "config":
 * {"keras_history": [name, node_index, tensor_index]}}, anywhere in a
 * call's args and kwargs.  With refs NULL only counts them.
 */
static DlStatus
collect_refs(json_object *v, KerasNode *node, KerasRef *refs, DlError *err)
{
	KerasRef	ref;

	if (v == NULL)
		return DL_OK;
	if (json_object_is_type(v, json_type_array))
	{
		if (read_ref_list(v, &ref))
			goto found;
		for (size_t i = 0; i < keras_jlen(v); i++)
		{
			DlStatus	st = collect_refs(keras_jidx(v, i), node, refs, err);

			if (st != DL_OK)
				return st;
		}
		return DL_OK;
	}
	if (!json_object_is_type(v, json_type_object))
		return DL_OK;
	if (keras_jget_str(v, "class_name") != NULL && strcmp(keras_jget_str(v, "class_name"), "__keras_tensor__") == 0)
	{
		if (!read_ref_list(keras_jget(keras_jget(v, "config"), "keras_history"), &ref))
		{
			char		text[KERAS_TEXT_MAX];

			keras_copy_clipped(text, sizeof(text), node->name);
			return dl_error_set(err, DL_ERR_PARSE, "layer \"%s\" reads a tensor without a keras_history",
								text);
		}
		goto found;
	}
	{
		/* the macro declares its variables: keep it in its own block */
		json_object_object_foreach(v, key, val)
		{
			DlStatus	st;

			(void) key;
			if ((st = collect_refs(val, node, refs, err)) != DL_OK)
				return st;
		}
	}
	return DL_OK;

found:
	if (node->n_refs >= DL_MAX_FAN_IN)
	{
		char		text[KERAS_TEXT_MAX];

		keras_copy_clipped(text, sizeof(text), node->name);
		dl_error_set(err, DL_ERR_LIMIT, "layer \"%s\" reads more than %d tensors", text, DL_MAX_FAN_IN);
		return dl_error_hint(err, "Merge at most %d tensors in one layer.", DL_MAX_FAN_IN);
	}
	if (refs != NULL)
		refs[node->first_ref + node->n_refs] = ref;
	node->n_refs++;
	return DL_OK;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(((const KerasName *) a)->name, ((const KerasName *) b)->name);
}

/* The layer named name, or -1. */
static int
find_node(const KerasGraph *g, const char *name)
{
	KerasName	key = {name, -1};
	const KerasName *hit = bsearch(&key, g->names, (size_t) g->n, sizeof(KerasName), name_cmp);

	return hit != NULL ? hit->node : -1;
}

/*
 * Resolve ref, read by layer who (NULL: the model's input or output
 * list): the layer must exist, the call must be its first and only one,
 * the tensor its one output.
 */
static DlStatus
resolve_ref(const KerasGraph *g, KerasRef *ref, const char *who, DlError *err)
{
	char		reader[KERAS_TEXT_MAX];
	char		name[KERAS_TEXT_MAX / 2];
	const KerasNode *t;

	if (who != NULL)
	{
		keras_copy_clipped(name, sizeof(name), who);
		snprintf(reader, sizeof(reader), "layer \"%s\"", name);
	}
	else
		snprintf(reader, sizeof(reader), "the model's input or output list");
	keras_copy_clipped(name, sizeof(name), ref->name);
	ref->node = find_node(g, ref->name);
	if (ref->node < 0)
		return dl_error_set(err, DL_ERR_PARSE, "%s reads \"%s\", which is not a layer of the model",
							reader, name);
	t = &g->nodes[ref->node];
	if (ref->node_index != 0)
		return dl_error_set(err, DL_ERR_PARSE, "%s reads call %lld of layer \"%s\", which has %d",
							reader, (long long) ref->node_index, name, t->n_calls > 0 ? t->n_calls : 1);
	if (ref->tensor_index != 0)
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "%s reads output %lld of layer \"%s\"",
					 reader, (long long) ref->tensor_index, name);
		return dl_error_hint(err, "Only layers with one output are supported.");
	}
	return DL_OK;
}

/*
 * The model's input_layers or output_layers (key) into refs (at most
 * DL_MAX_IO): a list of references, or one reference.
 */
static DlStatus
read_io_refs(json_object *model_cfg, const char *key, KerasRef *refs, int *n, DlError *err)
{
	json_object *v = keras_jget(model_cfg, key);
	char		text[KERAS_TEXT_MAX];

	*n = 0;
	if (v == NULL)
		return dl_error_set(err, DL_ERR_PARSE, "functional model has no \"%s\"", key);
	if (read_ref_list(v, &refs[0]))
	{
		*n = 1;
		return DL_OK;
	}
	if (keras_jlen(v) == 0 || keras_jlen(v) > DL_MAX_IO)
	{
		dl_error_set(err, keras_jlen(v) == 0 ? DL_ERR_UNSUPPORTED : DL_ERR_LIMIT,
					 "model %s %s: between 1 and %d are supported",
					 key, keras_value_text(v, text, sizeof(text)), DL_MAX_IO);
		return dl_error_hint(err, "%s", keras_hint_graph);
	}
	for (size_t i = 0; i < keras_jlen(v); i++)
	{
		if (!read_ref_list(keras_jidx(v, i), &refs[i]))
		{
			dl_error_set(err, DL_ERR_UNSUPPORTED, "model %s %s is not supported",
						 key, keras_value_text(v, text, sizeof(text)));
			return dl_error_hint(err, "%s", keras_hint_graph);
		}
	}
	*n = (int) keras_jlen(v);
	return DL_OK;
}

/* Step 1: the layers, their names and the tensors each reads. */
static DlStatus
read_graph_nodes(KerasGraph *g, json_object *layers, DlError *err)
{
	DlStatus	st;

	g->nodes = dl_alloc_array(g->alloc, (size_t) g->n, sizeof(KerasNode), err);
	g->names = dl_alloc_array(g->alloc, (size_t) g->n, sizeof(KerasName), err);
	if (g->nodes == NULL || g->names == NULL)
		return err != NULL ? err->code : DL_ERR_NO_MEMORY;
	for (int i = 0; i < g->n; i++)
	{
		KerasNode  *node = &g->nodes[i];
		json_object *inbound;

		node->layer = keras_jidx(layers, (size_t) i);
		node->name = keras_jget_str(node->layer, "name");
		if (node->name == NULL)
			node->name = keras_layer_name(node->layer);
		node->is_input = strcmp(keras_jget_str(node->layer, "class_name"), "InputLayer") == 0;
		node->input_no = -1;
		node->spec_index = -1;
		inbound = keras_jget(node->layer, "inbound_nodes");
		node->n_calls = (int) keras_jlen(inbound);
		if (node->n_calls > 1 && !node->is_input)
		{
			char		text[KERAS_TEXT_MAX];

			keras_copy_clipped(text, sizeof(text), node->name);
			dl_error_set(err, DL_ERR_UNSUPPORTED,
						 "layer \"%s\" is called %d times (a shared layer); shared layers are not "
						 "supported", text, node->n_calls);
			return dl_error_hint(err, "Give each call a layer of its own (weights are then not shared).");
		}
		/* count first, so that refs is allocated once */
		node->first_ref = g->cap_refs;
		if (!node->is_input && (st = collect_refs(keras_jidx(inbound, 0), node, NULL, err)) != DL_OK)
			return st;
		g->cap_refs += node->n_refs;
		g->names[i].name = node->name;
		g->names[i].node = i;
	}
	qsort(g->names, (size_t) g->n, sizeof(KerasName), name_cmp);
	for (int i = 1; i < g->n; i++)
	{
		if (strcmp(g->names[i - 1].name, g->names[i].name) == 0)
		{
			char		text[KERAS_TEXT_MAX];

			keras_copy_clipped(text, sizeof(text), g->names[i].name);
			return dl_error_set(err, DL_ERR_PARSE, "layer name \"%s\" appears twice in the model", text);
		}
	}
	g->refs = dl_alloc_array(g->alloc, (size_t) (g->cap_refs > 0 ? g->cap_refs : 1),
							 sizeof(KerasRef), err);
	if (g->refs == NULL)
		return err != NULL ? err->code : DL_ERR_NO_MEMORY;
	for (int i = 0; i < g->n; i++)
	{
		KerasNode  *node = &g->nodes[i];

		node->n_refs = 0;
		if (!node->is_input &&
			(st = collect_refs(keras_jidx(keras_jget(node->layer, "inbound_nodes"), 0), node, g->refs, err)) != DL_OK)
			return st;
		g->n_refs += node->n_refs;
	}
	return DL_OK;
}

/* Step 2: resolve every reference; the inputs and outputs of the model. */
static DlStatus
read_graph_links(KerasGraph *g, json_object *model_cfg, DlError *err)
{
	DlStatus	st;

	for (int i = 0; i < g->n; i++)
	{
		KerasNode  *node = &g->nodes[i];

		if (node->is_input)
			continue;
		if (node->n_refs == 0)
			return refuse_graph(node->name, "has no inbound layer and is not the model's input", err);
		for (int j = 0; j < node->n_refs; j++)
		{
			KerasRef   *r = &g->refs[node->first_ref + j];

			if ((st = resolve_ref(g, r, node->name, err)) != DL_OK)
				return st;
			if (!g->nodes[r->node].is_input)
				node->pending++;
		}
	}
	if ((st = read_io_refs(model_cfg, "input_layers", g->inputs, &g->n_inputs, err)) != DL_OK ||
		(st = read_io_refs(model_cfg, "output_layers", g->outputs, &g->n_outputs, err)) != DL_OK)
		return st;
	for (int k = 0; k < g->n_inputs; k++)
	{
		KerasNode  *t;

		if ((st = resolve_ref(g, &g->inputs[k], NULL, err)) != DL_OK)
			return st;
		t = &g->nodes[g->inputs[k].node];
		if (!t->is_input)
			return refuse_graph(t->name, "is a model input but not an InputLayer", err);
		if (t->input_no >= 0)
			return refuse_graph(t->name, "is listed twice among the model's inputs", err);
		t->input_no = k;
	}
	for (int i = 0; i < g->n; i++)
		if (g->nodes[i].is_input && g->nodes[i].input_no < 0)
			return refuse_graph(g->nodes[i].name, "is an InputLayer but not one of the model's inputs",
								err);
	for (int k = 0; k < g->n_outputs; k++)
	{
		KerasNode  *t;

		if ((st = resolve_ref(g, &g->outputs[k], NULL, err)) != DL_OK)
			return st;
		t = &g->nodes[g->outputs[k].node];
		if (t->is_input)
			return refuse_graph(t->name, "is both an input and an output of the model", err);
		if (t->reaches_output)
			return refuse_graph(t->name, "is listed twice among the model's outputs", err);
		t->reaches_output = true;
	}
	return DL_OK;
}

/* A layer on a cycle, found by walking back from not-ordered layer start. */
static const char *
cycle_member(const KerasGraph *g, int start)
{
	int			cur = start;

	for (int steps = 0; steps < g->n; steps++)
	{
		const KerasNode *node = &g->nodes[cur];

		for (int j = 0; j < node->n_refs; j++)
		{
			int			t = g->refs[node->first_ref + j].node;

			if (g->nodes[t].spec_index < 0 && !g->nodes[t].is_input)
			{
				cur = t;
				break;
			}
		}
	}
	return g->nodes[cur].name;
}

/*
 * Step 3: order the layers so that each comes after what it reads,
 * keeping the model's list order among those that are ready: Keras lists
 * a model's layers in such an order (model.layers, whose weights
 * get_weights() concatenates), which then comes out unchanged; a chain
 * listed out of order comes out as the chain.
 */
static DlStatus
read_graph_order(KerasGraph *g, DlError *err)
{
	int			n_layers = 0;

	g->order = dl_alloc_array(g->alloc, (size_t) g->n, sizeof(int), err);
	g->cons_start = dl_alloc_array(g->alloc, (size_t) g->n + 1, sizeof(int), err);
	g->consumers = dl_alloc_array(g->alloc, (size_t) (g->n_refs > 0 ? g->n_refs : 1), sizeof(int),
								  err);
	if (g->order == NULL || g->cons_start == NULL || g->consumers == NULL)
		return err != NULL ? err->code : DL_ERR_NO_MEMORY;

	/* who reads each layer, grouped by the layer read (counting sort) */
	for (int r = 0; r < g->n_refs; r++)
		g->cons_start[g->refs[r].node + 1]++;
	for (int i = 0; i < g->n; i++)
		g->cons_start[i + 1] += g->cons_start[i];
	for (int i = 0; i < g->n; i++)
	{
		const KerasNode *node = &g->nodes[i];

		n_layers += node->is_input ? 0 : 1;
		for (int j = 0; j < node->n_refs; j++)
			g->consumers[g->cons_start[g->refs[node->first_ref + j].node]++] = i;
	}
	/* the fill moved each start to the next one's: move them back */
	for (int i = g->n; i > 0; i--)
		g->cons_start[i] = g->cons_start[i - 1];
	g->cons_start[0] = 0;

	while (g->n_order < n_layers)
	{
		int			next = -1;

		for (int i = 0; i < g->n && next < 0; i++)
			if (!g->nodes[i].is_input && g->nodes[i].spec_index < 0 && g->nodes[i].pending == 0)
				next = i;
		if (next < 0)
		{
			/* what is left reads itself through a cycle */
			for (int i = 0; i < g->n; i++)
				if (!g->nodes[i].is_input && g->nodes[i].spec_index < 0)
					return refuse_graph(cycle_member(g, i), "is part of a cycle", err);
			return dl_error_set(err, DL_ERR_INTERNAL, "functional model ordering stopped");
		}
		g->nodes[next].spec_index = g->n_order;
		g->order[g->n_order++] = next;
		for (int c = g->cons_start[next]; c < g->cons_start[next + 1]; c++)
			g->nodes[g->consumers[c]].pending--;
	}

	/* every layer must lead to an output */
	for (int k = g->n_order - 1; k >= 0; k--)
	{
		const KerasNode *node = &g->nodes[g->order[k]];

		if (!node->reaches_output)
			return refuse_graph(node->name, "does not lead to any of the model's outputs", err);
		for (int j = 0; j < node->n_refs; j++)
			g->nodes[g->refs[node->first_ref + j].node].reaches_output = true;
	}
	return DL_OK;
}

/*
 * Refuse a model of several inputs or outputs where one of each is
 * wanted (dl_keras_parse), naming them.
 */
DlStatus
keras_refuse_multi_io(const DlModelSpec *spec, DlError *err)
{
	bool		inputs = spec->n_inputs > 1;
	int			n = inputs ? spec->n_inputs : spec->n_outputs;
	char		text[KERAS_TEXT_MAX];

	text[0] = '\0';
	for (int k = 0; k < n; k++)
	{
		keras_text_append(text, sizeof(text), k == 0 ? "(\"" : ", \"");
		keras_text_append(text, sizeof(text),
					inputs ? spec->input_names[k] : spec->layers[spec->outputs[k]].name);
		keras_text_append(text, sizeof(text), "\"");
	}
	keras_text_append(text, sizeof(text), ")");
	dl_error_set(err, DL_ERR_UNSUPPORTED, "model%s%.60s%s has %d %s %s; only one is supported here",
				 spec->name[0] != '\0' ? " \"" : "", spec->name, spec->name[0] != '\0' ? "\"" : "",
				 n, inputs ? "inputs" : "outputs", text);
	return dl_error_hint(err, "The SQL functions take models with one input and one output; "
						 "give the model a single input and a single output.");
}

/*
 * The shape of input k: the InputLayer's batch_input_shape or
 * batch_shape; for input 0 also what find_input_shape falls back to.
 */
static DlStatus
input_shape_of(json_object *model, json_object *layer, int k, DlShape *shape, DlError *err)
{
	json_object *cfg = keras_jget(layer, "config");
	char		who[DL_NAME_MAX + 16];
	json_object *v;

	if (k == 0)
		return keras_find_input_shape(model, layer, shape, err);
	snprintf(who, sizeof(who), "layer \"%.100s\"", keras_layer_name(layer));
	if ((v = keras_jget(cfg, "batch_input_shape")) != NULL)
		return keras_read_shape(v, true, who, "batch_input_shape", shape, err);
	if ((v = keras_jget(cfg, "batch_shape")) != NULL)
		return keras_read_shape(v, true, who, "batch_shape", shape, err);
	dl_error_set(err, DL_ERR_SHAPE, "input layer \"%.100s\" has no shape", keras_layer_name(layer));
	return dl_error_hint(err, "Give every InputLayer a shape.");
}

/* Fill spec (n_order layers) from the ordered graph. */
static DlStatus
graph_to_spec(const KerasGraph *g, json_object *model, DlModelSpec *spec, DlError *err)
{
	int			ranks[DL_MAX_IO];
	int		   *layer_rank;		/* output rank of each spec layer */
	DlStatus	st = DL_OK;

	spec->n_inputs = g->n_inputs;
	for (int k = 0; k < g->n_inputs; k++)
	{
		json_object *layer = g->nodes[g->inputs[k].node].layer;

		if ((st = input_shape_of(model, layer, k, &spec->input_shapes[k], err)) != DL_OK)
			return st;
		ranks[k] = spec->input_shapes[k].rank;
		keras_copy_clipped(spec->input_names[k], DL_NAME_MAX, keras_layer_name(layer));
	}
	spec->input_shape = spec->input_shapes[0];
	spec->n_outputs = g->n_outputs;
	for (int k = 0; k < g->n_outputs; k++)
		spec->outputs[k] = g->nodes[g->outputs[k].node].spec_index;

	layer_rank = dl_alloc_array(g->alloc, (size_t) g->n_order, sizeof(int), err);
	if (layer_rank == NULL)
		return err != NULL ? err->code : DL_ERR_NO_MEMORY;
	for (int i = 0; i < g->n_order && st == DL_OK; i++)
	{
		const KerasNode *node = &g->nodes[g->order[i]];
		const KerasNode *t0 = &g->nodes[g->refs[node->first_ref].node];
		DlLayer    *l = &spec->layers[i];
		int			rank = t0->is_input ? ranks[t0->input_no] : layer_rank[t0->spec_index];

		st = keras_read_layer(keras_jget_str(node->layer, "class_name"), node->name,
						keras_jget(node->layer, "config"), l, &rank, keras_jget(model, "module") != NULL, err);
		/* read_layer set the layer's defaults: the inputs go in after */
		l->n_in = node->n_refs;
		for (int j = 0; j < node->n_refs; j++)
		{
			const KerasNode *t = &g->nodes[g->refs[node->first_ref + j].node];

			l->in[j] = t->is_input ? -1 - t->input_no : t->spec_index;
		}
		layer_rank[i] = rank;
	}
	dl_free(g->alloc, layer_rank);
	return st;
}

/*
 * Read a functional model (config cfg, layer list layers of n entries)
 * into *out.
 */
DlStatus
keras_read_functional(json_object *model, json_object *cfg, json_object *layers, size_t n,
				const DlAllocator *alloc, DlModelSpec **out, DlError *err)
{
	KerasGraph	g;
	DlStatus	st;

	memset(&g, 0, sizeof(g));
	g.alloc = alloc;
	g.n = (int) n;
	if ((st = read_graph_nodes(&g, layers, err)) != DL_OK ||
		(st = read_graph_links(&g, cfg, err)) != DL_OK ||
		(st = read_graph_order(&g, err)) != DL_OK)
		goto done;
	if (g.n_order == 0)
	{
		st = dl_error_set(err, DL_ERR_SHAPE, "model has no layers besides its inputs");
		goto done;
	}
	*out = dl_model_spec_create(g.n_order, alloc, err);
	if (*out == NULL)
	{
		st = err != NULL ? err->code : DL_ERR_NO_MEMORY;
		goto done;
	}
	if (keras_jget_str(cfg, "name") != NULL)
		keras_copy_clipped((*out)->name, sizeof((*out)->name), keras_jget_str(cfg, "name"));
	if ((st = graph_to_spec(&g, model, *out, err)) != DL_OK)
	{
		dl_model_spec_free(*out, alloc);
		*out = NULL;
	}

done:
	graph_free(&g);
	return st;
}

/* Read a Sequential model's n layers (a chain, in list order) into *out. */
DlStatus
keras_read_sequential(json_object *model, json_object *cfg, json_object *layers, size_t n,
				const DlAllocator *alloc, DlModelSpec **out, DlError *err)
{
	json_object *first = keras_jidx(layers, 0);
	DlModelSpec *spec;
	size_t		skip;
	int			rank;
	DlShape		input_shape;
	DlStatus	st;

	if ((st = keras_find_input_shape(model, first, &input_shape, err)) != DL_OK)
		return st;
	skip = strcmp(keras_jget_str(first, "class_name"), "InputLayer") == 0 ? 1 : 0;
	if (n - skip == 0)
	{
		dl_error_set(err, DL_ERR_SHAPE, "model has no layers besides its input");
		return dl_error_hint(err, "Give a model with at least one layer.");
	}
	spec = dl_model_spec_create((int) (n - skip), alloc, err);
	if (spec == NULL)
		return err != NULL ? err->code : DL_ERR_NO_MEMORY;
	spec->input_shape = input_shape;
	keras_copy_clipped(spec->input_names[0], DL_NAME_MAX, keras_layer_name(first));
	if (json_object_is_type(cfg, json_type_object) && keras_jget_str(cfg, "name") != NULL)
		keras_copy_clipped(spec->name, sizeof(spec->name), keras_jget_str(cfg, "name"));
	rank = input_shape.rank;
	for (size_t i = skip; i < n; i++)
	{
		json_object *entry = keras_jidx(layers, i);
		const char *lcls = keras_jget_str(entry, "class_name");

		if (strcmp(lcls, "InputLayer") == 0)
			st = refuse_graph(keras_layer_name(entry), "is an InputLayer after the first layer", err);
		else
			st = keras_read_layer(lcls, keras_layer_name(entry), keras_jget(entry, "config"),
							&spec->layers[i - skip], &rank, keras_jget(model, "module") != NULL, err);
		if (st != DL_OK)
		{
			dl_model_spec_free(spec, alloc);
			return st;
		}
	}
	*out = spec;
	return DL_OK;
}

/* ----------------------------------------------------------------------
 * Nested models: inlined into one flat functional model
 *
 * A layer whose class is Sequential, Functional or Model is a model used
 * as a layer (transfer learning: Sequential([base, Dense(10)]), or a
 * functional model calling a sub-model).  keras_flatten_nested rewrites
 * the whole model, once, into a functional model of the inner layers:
 * a nested model's InputLayers are dropped, what reads its inputs reads
 * what fed the nested-model layer, and what read the nested-model layer
 * reads its outputs.  The inner layers take the nested model's place in
 * the layer list, so that the flat list's order is Keras' get_weights()
 * order (the outer layers in order, a nested model's weights at its
 * place).  The inner layers keep their names; one that an other layer
 * of the flat model has too is refused (0A000), naming both models.
 * A nested model inside a nested model is inlined the same way, at most
 * KERAS_NEST_MAX_DEPTH deep.  A nested model of several inputs and
 * outputs is taken in a functional model (tensor k of it is its output
 * k); in a Sequential model, only one of one input and one output.
 * ----------------------------------------------------------------------
 */

/* Deepest nesting of models taken. */
#define KERAS_NEST_MAX_DEPTH 8

/* The flat model being built. */
typedef struct KerasFlat
{
	const DlAllocator *alloc;
	json_object *layers;		/* the flat layer list */
	const char **owner;			/* (cap) the model each flat layer came from */
	int			cap;
	bool		keras3;
} KerasFlat;

/* A model class: the layer is a nested model. */
bool
keras_is_model_class(const char *cls)
{
	return cls != NULL && (strcmp(cls, "Sequential") == 0 || strcmp(cls, "Functional") == 0 ||
						   strcmp(cls, "Model") == 0);
}

/* The layer list of a model's config: a Keras 2.1-2.2 Sequential's config is the list. */
json_object *
keras_model_layers(json_object *entry)
{
	json_object *cfg = keras_jget(entry, "config");

	if (json_object_is_type(cfg, json_type_array))
		return cfg;
	return keras_jget(cfg, "layers");
}

/* The name of an entry of a layer list: its "name", else its config's. */
const char *
keras_entry_name(json_object *entry)
{
	const char *name = keras_jget_str(entry, "name");

	return name != NULL ? name : keras_layer_name(entry);
}

/* Check an inner model's layer list and its entries. */
static DlStatus
check_model_layers(json_object *entry, const char *mname, DlError *err)
{
	json_object *layers = keras_model_layers(entry);
	char		text[KERAS_TEXT_MAX];

	keras_copy_clipped(text, sizeof(text), mname);
	if (!json_object_is_type(layers, json_type_array) || keras_jlen(layers) == 0)
	{
		dl_error_set(err, DL_ERR_PARSE, "nested model \"%s\" has no layers", text);
		return dl_error_hint(err, "Pass the output of model.to_json() unchanged.");
	}
	if (keras_jlen(layers) > (size_t) DL_MAX_LAYERS + 1)
		return dl_error_set(err, DL_ERR_LIMIT, "nested model \"%s\" has more than %d layers", text,
							DL_MAX_LAYERS);
	for (size_t i = 0; i < keras_jlen(layers); i++)
	{
		json_object *e = keras_jidx(layers, i);
		json_object *cfg = keras_jget(e, "config");

		if (!json_object_is_type(e, json_type_object) || keras_jget_str(e, "class_name") == NULL ||
			!(json_object_is_type(cfg, json_type_object) ||
			  (keras_is_model_class(keras_jget_str(e, "class_name")) && json_object_is_type(cfg, json_type_array))))
			return dl_error_set(err, DL_ERR_PARSE,
								"layer %zu of nested model \"%s\" has no \"class_name\" or \"config\"",
								i + 1, text);
	}
	return DL_OK;
}

/* A reference [name, 0, 0, {}] to a flat layer. */
static json_object *
new_ref(const char *name, int64_t node, int64_t tensor)
{
	json_object *r = json_object_new_array();

	json_object_array_add(r, json_object_new_string(name));
	json_object_array_add(r, json_object_new_int64(node));
	json_object_array_add(r, json_object_new_int64(tensor));
	json_object_array_add(r, json_object_new_object());
	return r;
}

/*
 * Append a layer to the flat list: class cls, name, config cfg (shared,
 * or copied with trainable false when frozen), reading the n_in tensors
 * in (names and indexes).  owner names the model it comes from.
 */
static DlStatus
flat_emit(KerasFlat *f, const char *cls, const char *name, json_object *cfg, bool frozen,
		  const KerasRef *in, int n_in, const char *owner, DlError *err)
{
	int			n = (int) json_object_array_length(f->layers);
	json_object *e;
	json_object *node;
	char		a[KERAS_TEXT_MAX / 2];
	char		b[KERAS_TEXT_MAX / 2];
	char		c[KERAS_TEXT_MAX / 2];

	for (int i = 0; i < n; i++)
	{
		if (strcmp(keras_entry_name(json_object_array_get_idx(f->layers, i)), name) == 0)
		{
			keras_copy_clipped(a, sizeof(a), name);
			keras_copy_clipped(b, sizeof(b), owner);
			keras_copy_clipped(c, sizeof(c), f->owner[i]);
			dl_error_set(err, DL_ERR_UNSUPPORTED,
						 "layer \"%s\" of model \"%s\" and layer \"%s\" of model \"%s\" have the same name; "
						 "nested models are inlined, so every layer's name must be unique",
						 a, c, a, b);
			return dl_error_hint(err, "Rename one of the two layers (layer.name before model.save()), "
								 "or save a model that lists the inner model's layers itself.");
		}
	}
	if (n >= f->cap)
		return dl_error_set(err, DL_ERR_LIMIT, "the model with its nested models inlined has more than %d layers",
							DL_MAX_LAYERS);
	if (frozen && json_object_is_type(cfg, json_type_object))
	{
		json_object *copy = json_object_new_object();

		json_object_object_foreach(cfg, key, val)
			json_object_object_add(copy, key, json_object_get(val));
		json_object_object_add(copy, "trainable", json_object_new_boolean(0));
		cfg = copy;
	}
	else
		cfg = json_object_get(cfg);
	e = json_object_new_object();
	json_object_object_add(e, "class_name", json_object_new_string(cls));
	json_object_object_add(e, "name", json_object_new_string(name));
	json_object_object_add(e, "config", cfg);
	node = json_object_new_array();
	for (int k = 0; k < n_in; k++)
		json_object_array_add(node, new_ref(in[k].name, in[k].node_index, in[k].tensor_index));
	json_object_object_add(e, "inbound_nodes", json_object_new_array());
	if (n_in > 0)
		json_object_array_add(keras_jget(e, "inbound_nodes"), node);
	else
		json_object_put(node);
	json_object_array_add(f->layers, e);
	f->owner[n] = owner;
	return DL_OK;
}

/* The name of the flat layer just appended (owned by the flat tree). */
static const char *
flat_last(const KerasFlat *f)
{
	return keras_entry_name(json_object_array_get_idx(f->layers, json_object_array_length(f->layers) - 1));
}

static DlStatus flat_model(KerasFlat *f, json_object *entry, const KerasRef *in, int n_in, bool frozen,
						   int depth, KerasRef *out, int *n_out, DlError *err);

/* A nested-model layer read with n_in tensors in: inline it, its outputs into out. */
static DlStatus
flat_nested(KerasFlat *f, json_object *entry, const KerasRef *in, int n_in, bool frozen, int depth,
			KerasRef *out, int *n_out, DlError *err)
{
	char		text[KERAS_TEXT_MAX];
	bool		tr = true;

	keras_copy_clipped(text, sizeof(text), keras_entry_name(entry));
	if (depth + 1 > KERAS_NEST_MAX_DEPTH)
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\" is a model nested more than %d deep",
					 text, KERAS_NEST_MAX_DEPTH);
		return dl_error_hint(err, "%s", keras_hint_nested);
	}
	if (json_object_is_type(keras_jget(keras_jget(entry, "config"), "trainable"), json_type_boolean))
		tr = json_object_get_boolean(keras_jget(keras_jget(entry, "config"), "trainable"));
	return flat_model(f, entry, in, n_in, frozen || !tr, depth + 1, out, n_out, err);
}

/* A nested Sequential model (depth > 0) reading in[0]: its chain. */
static DlStatus
flat_sequential(KerasFlat *f, json_object *entry, const KerasRef *in, int n_in, bool frozen, int depth,
				KerasRef *out, int *n_out, DlError *err)
{
	json_object *layers = keras_model_layers(entry);
	const char *mname = keras_entry_name(entry);
	KerasRef	cur = in[0];
	DlStatus	st;

	if (n_in != 1)
		return refuse_graph(mname, "is a Sequential model read with several inputs", err);
	for (size_t i = 0; i < keras_jlen(layers); i++)
	{
		json_object *e = keras_jidx(layers, i);
		const char *cls = keras_jget_str(e, "class_name");

		if (strcmp(cls, "InputLayer") == 0)
		{
			if (i > 0)
				return refuse_graph(keras_layer_name(e), "is an InputLayer after the first layer", err);
			continue;
		}
		if (keras_is_model_class(cls))
		{
			KerasRef	o[DL_MAX_IO];
			int			no;

			if ((st = flat_nested(f, e, &cur, 1, frozen, depth, o, &no, err)) != DL_OK)
				return st;
			if (no != 1)
				return refuse_graph(keras_entry_name(e), "is a model of several outputs inside a Sequential model",
									err);
			cur = o[0];
			continue;
		}
		if ((st = flat_emit(f, cls, keras_layer_name(e), keras_jget(e, "config"), frozen, &cur, 1, mname,
							err)) != DL_OK)
			return st;
		cur.name = flat_last(f);
		cur.node_index = 0;
		cur.tensor_index = 0;
	}
	out[0] = cur;
	*n_out = 1;
	return DL_OK;
}

/* The layer of a functional model's list named name, or -1. */
static int
flat_find(json_object *layers, const char *name)
{
	for (size_t i = 0; i < keras_jlen(layers); i++)
		if (strcmp(keras_entry_name(keras_jidx(layers, i)), name) == 0)
			return (int) i;
	return -1;
}

/* What a functional model's layer list keeps while it is inlined. */
typedef struct FlatScope
{
	json_object *layers;
	const char *mname;
	int			n;
	int		   *input_no;		/* (n) InputLayer: its place among the inputs, else -1 */
	int		   *n_outs;			/* (n) nested model: its outputs once inlined, -1 before */
	KerasRef   *outs;			/* (n * DL_MAX_IO) */
	const KerasRef *in;			/* depth > 0: what feeds each input */
	int			depth;
} FlatScope;

/* Map reference r of layer who in scope s to a flat tensor. */
static DlStatus
flat_map_ref(const FlatScope *s, const char *who, const KerasRef *r, KerasRef *to, DlError *err)
{
	int			i = flat_find(s->layers, r->name);
	char		a[KERAS_TEXT_MAX / 2];
	char		b[KERAS_TEXT_MAX / 2];

	if (i < 0)
	{
		keras_copy_clipped(a, sizeof(a), who);
		keras_copy_clipped(b, sizeof(b), r->name);
		return dl_error_set(err, DL_ERR_PARSE, "layer \"%s\" reads \"%s\", which is not a layer of the model",
							a, b);
	}
	if (s->input_no[i] >= 0 && s->depth > 0)
	{
		*to = s->in[s->input_no[i]];
		return DL_OK;
	}
	if (keras_is_model_class(keras_jget_str(keras_jidx(s->layers, (size_t) i), "class_name")))
	{
		keras_copy_clipped(a, sizeof(a), who);
		keras_copy_clipped(b, sizeof(b), r->name);
		if (s->n_outs[i] < 0)
			return dl_error_set(err, DL_ERR_UNSUPPORTED,
								"layer \"%s\" reads nested model \"%s\", which is listed after it", a, b);
		/* node 0 of a nested model is its own call on its inputs: Keras writes node 1 */
		if (r->node_index != 0 && r->node_index != 1)
			return dl_error_set(err, DL_ERR_PARSE, "layer \"%s\" reads call %lld of nested model \"%s\"",
								a, (long long) r->node_index, b);
		if (r->tensor_index < 0 || r->tensor_index >= s->n_outs[i])
			return dl_error_set(err, DL_ERR_PARSE, "layer \"%s\" reads output %lld of nested model \"%s\", "
								"which has %d", a, (long long) r->tensor_index, b, s->n_outs[i]);
		*to = s->outs[(size_t) i * DL_MAX_IO + (size_t) r->tensor_index];
		return DL_OK;
	}
	*to = *r;
	return DL_OK;
}

/* The tensors layer entry e reads (its first call), mapped into to[]. */
static DlStatus
flat_inbound(const FlatScope *s, json_object *e, KerasRef *to, int *n, DlError *err)
{
	KerasNode	node;
	KerasRef	refs[DL_MAX_FAN_IN];
	json_object *inbound = keras_jget(e, "inbound_nodes");
	DlStatus	st;

	memset(&node, 0, sizeof(node));
	node.name = keras_entry_name(e);
	if (keras_jlen(inbound) > 1)
	{
		char		text[KERAS_TEXT_MAX];

		keras_copy_clipped(text, sizeof(text), node.name);
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\" is called %zu times (a shared layer); shared "
					 "layers are not supported", text, keras_jlen(inbound));
		return dl_error_hint(err, "Give each call a layer of its own (weights are then not shared).");
	}
	if ((st = collect_refs(keras_jidx(inbound, 0), &node, refs, err)) != DL_OK)
		return st;
	for (int k = 0; k < node.n_refs; k++)
		if ((st = flat_map_ref(s, node.name, &refs[k], &to[k], err)) != DL_OK)
			return st;
	*n = node.n_refs;
	return DL_OK;
}

/* A functional model (outer when depth is 0) fed by in[n_in]. */
static DlStatus
flat_functional(KerasFlat *f, json_object *entry, const KerasRef *in, int n_in, bool frozen, int depth,
				KerasRef *out, int *n_out, DlError *err)
{
	json_object *cfg = keras_jget(entry, "config");
	FlatScope	s;
	KerasRef	io[DL_MAX_IO];
	int			nio;
	DlStatus	st;

	memset(&s, 0, sizeof(s));
	s.layers = keras_model_layers(entry);
	s.mname = keras_entry_name(entry);
	s.n = (int) keras_jlen(s.layers);
	s.in = in;
	s.depth = depth;
	s.input_no = dl_alloc_array(f->alloc, (size_t) s.n, sizeof(int), err);
	s.n_outs = dl_alloc_array(f->alloc, (size_t) s.n, sizeof(int), err);
	s.outs = dl_alloc_array(f->alloc, (size_t) s.n * DL_MAX_IO, sizeof(KerasRef), err);
	if (s.input_no == NULL || s.n_outs == NULL || s.outs == NULL)
	{
		st = err != NULL ? err->code : DL_ERR_NO_MEMORY;
		goto done;
	}
	for (int i = 0; i < s.n; i++)
		s.input_no[i] = s.n_outs[i] = -1;
	if ((st = read_io_refs(cfg, "input_layers", io, &nio, err)) != DL_OK)
		goto done;
	for (int k = 0; k < nio; k++)
	{
		int			i = flat_find(s.layers, io[k].name);

		if (i < 0 || strcmp(keras_jget_str(keras_jidx(s.layers, (size_t) i), "class_name"), "InputLayer") != 0)
		{
			st = refuse_graph(io[k].name, "is a model input but not an InputLayer", err);
			goto done;
		}
		s.input_no[i] = k;
	}
	if (depth > 0 && nio != n_in)
	{
		char		text[KERAS_TEXT_MAX];

		keras_copy_clipped(text, sizeof(text), s.mname);
		st = dl_error_set(err, DL_ERR_PARSE, "nested model \"%s\" has %d inputs but is called on %d tensors",
						  text, nio, n_in);
		goto done;
	}
	for (int i = 0; i < s.n && st == DL_OK; i++)
	{
		json_object *e = keras_jidx(s.layers, (size_t) i);
		const char *cls = keras_jget_str(e, "class_name");
		KerasRef	r[DL_MAX_FAN_IN];
		int			nr = 0;

		if (strcmp(cls, "InputLayer") == 0)
		{
			if (depth == 0)
				st = flat_emit(f, cls, keras_entry_name(e), keras_jget(e, "config"), false, NULL, 0, s.mname, err);
			else if (s.input_no[i] < 0)
				st = refuse_graph(keras_entry_name(e), "is an InputLayer but not one of the model's inputs", err);
			continue;
		}
		if ((st = flat_inbound(&s, e, r, &nr, err)) != DL_OK)
			break;
		if (keras_is_model_class(cls))
			st = flat_nested(f, e, r, nr, frozen, depth, &s.outs[(size_t) i * DL_MAX_IO], &s.n_outs[i], err);
		else
			st = flat_emit(f, cls, keras_entry_name(e), keras_jget(e, "config"), frozen, r, nr, s.mname, err);
	}
	if (st != DL_OK)
		goto done;
	if ((st = read_io_refs(cfg, "output_layers", io, &nio, err)) != DL_OK)
		goto done;
	for (int k = 0; k < nio && st == DL_OK; k++)
		st = flat_map_ref(&s, "the model's output list", &io[k], &out[k], err);
	*n_out = nio;

done:
	dl_free(f->alloc, s.input_no);
	dl_free(f->alloc, s.n_outs);
	dl_free(f->alloc, s.outs);
	return st;
}

/* Inline the model entry (depth 0: the outer model) fed by in[n_in]. */
static DlStatus
flat_model(KerasFlat *f, json_object *entry, const KerasRef *in, int n_in, bool frozen, int depth,
		   KerasRef *out, int *n_out, DlError *err)
{
	DlStatus	st;

	if (depth > 0 && (st = check_model_layers(entry, keras_entry_name(entry), err)) != DL_OK)
		return st;
	if (strcmp(keras_jget_str(entry, "class_name"), "Sequential") == 0)
		return flat_sequential(f, entry, in, n_in, frozen, depth, out, n_out, err);
	return flat_functional(f, entry, in, n_in, frozen, depth, out, n_out, err);
}

/*
 * The outer Sequential model's input, as the flat model's InputLayer: its
 * own, or one made from the input shape (the first layer's, or a nested
 * first layer's own first layer's).
 */
static DlStatus
flat_sequential_input(KerasFlat *f, json_object *model, json_object *layers, KerasRef *in, DlError *err)
{
	json_object *first = keras_jidx(layers, 0);
	json_object *owner = model;
	json_object *cfg;
	json_object *shape;
	DlShape		s;
	char		name[DL_NAME_MAX];
	DlStatus	st;

	if (strcmp(keras_jget_str(first, "class_name"), "InputLayer") == 0)
	{
		if ((st = flat_emit(f, "InputLayer", keras_layer_name(first), keras_jget(first, "config"), false,
							NULL, 0, keras_layer_name(model), err)) != DL_OK)
			return st;
		in->name = flat_last(f);
		in->node_index = in->tensor_index = 0;
		return DL_OK;
	}
	snprintf(name, sizeof(name), "%.100s_input", keras_entry_name(first));
	/* a model first: its own first layer holds the shape */
	for (int d = 0; keras_is_model_class(keras_jget_str(first, "class_name")) && d <= KERAS_NEST_MAX_DEPTH; d++)
	{
		owner = first;
		first = keras_jidx(keras_model_layers(first), 0);
	}
	if ((st = keras_find_input_shape(owner, first, &s, err)) != DL_OK)
		return st;
	cfg = json_object_new_object();
	shape = json_object_new_array();
	json_object_array_add(shape, NULL);
	for (int k = 0; k < s.rank; k++)
		json_object_array_add(shape, json_object_new_int64(s.dims[k]));
	json_object_object_add(cfg, "batch_input_shape", shape);
	json_object_object_add(cfg, "name", json_object_new_string(name));
	st = flat_emit(f, "InputLayer", name, cfg, false, NULL, 0, keras_layer_name(model), err);
	json_object_put(cfg);
	if (st != DL_OK)
		return st;
	in->name = flat_last(f);
	in->node_index = in->tensor_index = 0;
	return DL_OK;
}

/*
 * Rewrite model (cfg, its layer list layers), which holds a nested
 * model, into *flat: a functional model of the inner layers, to be read
 * by keras_read_functional and released with json_object_put.
 */
DlStatus
keras_flatten_nested(json_object *model, json_object *cfg, json_object *layers, const DlAllocator *alloc,
					 json_object **flat, DlError *err)
{
	KerasFlat	f;
	KerasRef	out[DL_MAX_IO];
	int			n_out = 0;
	json_object *fcfg;
	json_object *outs;
	DlStatus	st;

	*flat = NULL;
	memset(&f, 0, sizeof(f));
	f.alloc = alloc;
	f.cap = DL_MAX_LAYERS + DL_MAX_IO;
	f.owner = dl_alloc_array(alloc, (size_t) f.cap, sizeof(char *), err);
	if (f.owner == NULL)
		return err != NULL ? err->code : DL_ERR_NO_MEMORY;
	f.layers = json_object_new_array();
	if (strcmp(keras_jget_str(model, "class_name"), "Sequential") == 0)
	{
		KerasRef	in;
		json_object *chain = json_object_new_object();
		json_object *ccfg = json_object_new_object();
		json_object *rest = json_object_new_array();
		size_t		skip = strcmp(keras_jget_str(keras_jidx(layers, 0), "class_name"), "InputLayer") == 0;

		/* the outer chain as a nested Sequential (without its InputLayer) fed by the input */
		for (size_t i = skip; i < keras_jlen(layers); i++)
			json_object_array_add(rest, json_object_get(keras_jidx(layers, i)));
		json_object_object_add(ccfg, "layers", rest);
		json_object_object_add(chain, "class_name", json_object_new_string("Sequential"));
		json_object_object_add(chain, "config", ccfg);
		if (keras_jget_str(cfg, "name") != NULL)
			json_object_object_add(ccfg, "name", json_object_new_string(keras_jget_str(cfg, "name")));
		st = flat_sequential_input(&f, model, layers, &in, err);
		if (st == DL_OK && keras_jlen(rest) == 0)
		{
			dl_error_set(err, DL_ERR_SHAPE, "model has no layers besides its input");
			st = dl_error_hint(err, "Give a model with at least one layer.");
		}
		if (st == DL_OK)
			st = flat_sequential(&f, chain, &in, 1, false, 0, out, &n_out, err);
		json_object_put(chain);
	}
	else
		st = flat_functional(&f, model, NULL, 0, false, 0, out, &n_out, err);
	if (st != DL_OK)
	{
		json_object_put(f.layers);
		dl_free(alloc, f.owner);
		return st;
	}
	*flat = json_object_new_object();
	fcfg = json_object_new_object();
	outs = json_object_new_array();
	json_object_object_add(*flat, "class_name", json_object_new_string("Functional"));
	if (keras_jget(model, "module") != NULL)
		json_object_object_add(*flat, "module", json_object_get(keras_jget(model, "module")));
	json_object_object_add(*flat, "config", fcfg);
	if (json_object_is_type(cfg, json_type_object) && keras_jget_str(cfg, "name") != NULL)
		json_object_object_add(fcfg, "name", json_object_new_string(keras_jget_str(cfg, "name")));
	json_object_object_add(fcfg, "layers", f.layers);
	if (strcmp(keras_jget_str(model, "class_name"), "Sequential") == 0)
	{
		json_object *ins = json_object_new_array();

		json_object_array_add(ins, new_ref(keras_entry_name(json_object_array_get_idx(f.layers, 0)), 0, 0));
		json_object_object_add(fcfg, "input_layers", ins);
	}
	else
		json_object_object_add(fcfg, "input_layers", json_object_get(keras_jget(cfg, "input_layers")));
	for (int k = 0; k < n_out; k++)
		json_object_array_add(outs, new_ref(out[k].name, out[k].node_index, out[k].tensor_index));
	json_object_object_add(fcfg, "output_layers", outs);
	dl_free(alloc, f.owner);
	return DL_OK;
}
