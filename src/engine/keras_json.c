/*-------------------------------------------------------------------------
 *
 * keras_json.c
 *	  Read a Keras model.to_json() architecture into a DlModelSpec.
 *
 * The reader works in four steps:
 *	 1. parse the text with json-c (strict: no trailing commas, nothing
 *		after the value);
 *	 2. find the model's layer list and put it in execution order: as
 *		listed for a Sequential model (a chain); for a functional ("Model",
 *		"Functional") one, any DAG, by reading which tensors each layer
 *		takes (its inbound nodes) and ordering the layers so that each
 *		comes after what it reads, in the model's list order where that
 *		allows (the order of get_weights()); a model holding a model used
 *		as a layer (a nested model) is first inlined into a functional
 *		model of the inner layers (keras_flatten_nested, keras_graph.c);
 *	 3. find the input shapes: the InputLayers' batch_input_shape or
 *		batch_shape, else the first layer's, else a Keras 3 build_config,
 *		else an "input_shape" attribute;
 *	 4. translate each layer's config into a DlLayer, refusing every value
 *		that would change the math and that we do not implement, then
 *		dl_model_spec_finalize().
 *
 * The three dialects differ in details handled here: Keras 2.1-2.2 writes
 * the Sequential config as a bare list and initializers as VarianceScaling
 * with distribution "normal" (a truncated normal); tf.keras 2 and
 * TensorFlow.js write {name, layers}, an InputLayer and class names such
 * as GlorotUniform; Keras 3 adds "module", "registered_name",
 * "build_config", "batch_shape", DTypePolicy objects and activations as
 * {"class_name": "function", "config": "relu"}.  Class and mode names are
 * compared after lowercasing and dropping underscores, so GlorotUniform,
 * glorot_uniform and glorotUniform (and fan_avg, fanAvg) are the same.
 *
 * Attribute keys that do not change the math (name, dtype, sparse, ...)
 * and keys we have never seen are ignored; known keys that change the math
 * must hold a value we implement, otherwise DL_ERR_UNSUPPORTED names the
 * layer, the attribute and the value.
 *
 * The code is in four files, each using only those after it:
 * keras_json.c (this one: the model's structure, parsing and
 * dl_keras_bind_shape), keras_graph.c (a functional model's graph and
 * the Sequential chain), keras_layers.c (each layer class's config into
 * a DlLayer) and keras_read.c (the hints, the json helpers, the config
 * value readers and the layer name and shape readers); keras_internal.h
 * declares what they share.
 *
 * json-c allocates its tree with malloc; the tree lives only inside
 * dl_keras_parse() and is released on every path.  Everything the caller
 * keeps comes from the DlAllocator.
 *
 * IDENTIFICATION
 *	  src/engine/keras_json.c
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
 * Model structure
 * ----------------------------------------------------------------------
 */

/* Check that entry i of the layer list has a class_name and a config. */
static DlStatus
check_entry(json_object *entry, size_t i, DlError *err)
{
	json_object *cfg = keras_jget(entry, "config");

	if (entry == NULL || !json_object_is_type(entry, json_type_object))
		return dl_error_set(err, DL_ERR_PARSE, "layer %zu of the model is not an object", i + 1);
	if (keras_jget_str(entry, "class_name") == NULL)
		return dl_error_set(err, DL_ERR_PARSE, "layer %zu of the model has no \"class_name\"", i + 1);
	if (cfg == NULL || !json_object_is_type(cfg, json_type_object))
	{
		char		name[KERAS_TEXT_MAX];
		char		cls[KERAS_TEXT_MAX];

		keras_copy_clipped(name, sizeof(name), keras_layer_name(entry));
		keras_copy_clipped(cls, sizeof(cls), keras_jget_str(entry, "class_name"));
		return dl_error_set(err, DL_ERR_PARSE, "layer %zu (\"%s\", %s) of the model has no \"config\"",
							i + 1, name, cls);
	}
	return DL_OK;
}

/*
 * The model object: the root, or the Keras model inside a TF.js model.json
 * ("modelTopology") or an HDF5-style wrapper ("model_config").
 */
static json_object *
unwrap_model(json_object *root)
{
	for (int i = 0; i < 2 && root != NULL && keras_jget(root, "class_name") == NULL; i++)
	{
		if (keras_jget(root, "modelTopology") != NULL)
			root = keras_jget(root, "modelTopology");
		else if (keras_jget(root, "model_config") != NULL)
			root = keras_jget(root, "model_config");
		else
			break;
	}
	return root;
}

/* Build the spec from the parsed tree.  On error *out stays NULL. */
static DlStatus
read_model(json_object *root, const DlAllocator *alloc, DlModelSpec **out, DlError *err)
{
	json_object *model = unwrap_model(root);
	json_object *cfg;
	json_object *layers;
	const char *cls;
	char		text[KERAS_TEXT_MAX];
	bool		functional;
	size_t		n;
	DlStatus	st;

	if (!json_object_is_type(model, json_type_object))
	{
		dl_error_set(err, DL_ERR_PARSE, "model architecture must be a json object, got %s",
					 keras_value_text(model, text, sizeof(text)));
		return dl_error_hint(err, "Pass the output of model.to_json() unchanged.");
	}
	cls = keras_jget_str(model, "class_name");
	if (cls == NULL)
	{
		dl_error_set(err, DL_ERR_PARSE, "model architecture has no \"class_name\"");
		return dl_error_hint(err, "Pass the output of model.to_json() unchanged.");
	}
	if ((cfg = keras_jget(model, "config")) == NULL)
	{
		dl_error_set(err, DL_ERR_PARSE, "model architecture has no \"config\"");
		return dl_error_hint(err, "Pass the output of model.to_json() unchanged.");
	}
	if (strcmp(cls, "Sequential") == 0)
		functional = false;
	else if (strcmp(cls, "Model") == 0 || strcmp(cls, "Functional") == 0)
		functional = true;
	else
	{
		keras_copy_clipped(text, sizeof(text), cls);
		dl_error_set(err, DL_ERR_UNSUPPORTED, "model class \"%s\" is not supported", text);
		return dl_error_hint(err, "%s", keras_hint_graph);
	}
	/* Keras 2.1-2.2 Sequential: the config is the layer list itself. */
	layers = (!functional && json_object_is_type(cfg, json_type_array)) ? cfg : keras_jget(cfg, "layers");
	if (layers == NULL || !json_object_is_type(layers, json_type_array))
	{
		dl_error_set(err, DL_ERR_PARSE, "model config has no \"layers\" list");
		return dl_error_hint(err, "Pass the output of model.to_json() unchanged.");
	}
	n = keras_jlen(layers);
	if (n == 0)
	{
		dl_error_set(err, DL_ERR_SHAPE, "model has no layers");
		return dl_error_hint(err, "Give a model with at least one layer.");
	}
	if (n > (size_t) DL_MAX_LAYERS + 1)
		return dl_error_set(err, DL_ERR_LIMIT, "model has %zu layers, more than the limit of %d",
							n, DL_MAX_LAYERS);
	for (size_t i = 0; i < n; i++)
	{
		if ((st = check_entry(keras_jidx(layers, i), i, err)) != DL_OK)
			return st;
	}
	for (size_t i = 0; i < n; i++)
	{
		/* a model used as a layer: inlined into a flat functional model */
		if (keras_is_model_class(keras_jget_str(keras_jidx(layers, i), "class_name")))
		{
			json_object *flat;
			json_object *fcfg;

			if ((st = keras_flatten_nested(model, cfg, layers, alloc, &flat, err)) != DL_OK)
				return st;
			fcfg = keras_jget(flat, "config");
			st = keras_read_functional(flat, fcfg, keras_jget(fcfg, "layers"),
									   keras_jlen(keras_jget(fcfg, "layers")), alloc, out, err);
			json_object_put(flat);
			return st;
		}
	}
	if (functional)
		return keras_read_functional(model, cfg, layers, n, alloc, out, err);
	return keras_read_sequential(model, cfg, layers, n, alloc, out, err);
}

/* Parse len bytes of json into *root; DL_ERR_PARSE says where it fails. */
static DlStatus
parse_text(const char *json, size_t len, json_object **root, DlError *err)
{
	json_tokener *tok;
	json_object *obj;
	enum json_tokener_error jerr;
	size_t		end;
	size_t		heap;

	*root = NULL;
	/* the caps come first: json-c allocates with malloc, unbounded (dl_caps.h) */
	if (dl_text_check_cap("model architecture", len, DL_ARCH_JSON_MAX_BYTES, err) != DL_OK)
		return DL_ERR_LIMIT;
	heap = dl_json_heap_estimate(json, len, DL_ARCH_JSON_MAX_HEAP);
	if (heap > DL_ARCH_JSON_MAX_HEAP)
	{
		dl_error_set(err, DL_ERR_LIMIT,
					 "model architecture of %zu bytes needs more than %zu MiB to parse",
					 len, DL_ARCH_JSON_MAX_HEAP >> 20);
		dl_error_hint(err, "madlib_dl parses an architecture only when its json parser needs at most %zu MiB "
					  "(a Keras model.to_json() needs about 10 bytes per byte of text); "
					  "docs/security.md lists the size caps.", DL_ARCH_JSON_MAX_HEAP >> 20);
		return DL_ERR_LIMIT;
	}
	tok = json_tokener_new_ex(KERAS_JSON_MAX_DEPTH);
	if (tok == NULL)
		return dl_error_set(err, DL_ERR_NO_MEMORY, "out of memory creating the json parser");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
	obj = json_tokener_parse_ex(tok, json, (int) len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (jerr == json_tokener_continue)
	{
		json_object_put(obj);
		dl_error_set(err, DL_ERR_PARSE,
					 "invalid model architecture json: unexpected end of input at offset %zu", end);
		return dl_error_hint(err, "The text is empty or truncated; pass the whole output of model.to_json().");
	}
	if (jerr != json_tokener_success)
	{
		json_object_put(obj);
		dl_error_set(err, DL_ERR_PARSE, "invalid model architecture json: %s at offset %zu",
					 json_tokener_error_desc(jerr), end);
		return dl_error_hint(err, "Pass the output of model.to_json() unchanged.");
	}
	/* only whitespace (or a C string's terminator) may follow the value */
	for (size_t i = end; i < len; i++)
	{
		if (json[i] != '\0' && !isspace((unsigned char) json[i]))
		{
			json_object_put(obj);
			dl_error_set(err, DL_ERR_PARSE,
						 "invalid model architecture json: unexpected text after the end at offset %zu", i);
			return dl_error_hint(err, "Pass the output of model.to_json() unchanged.");
		}
	}
	*root = obj;
	return DL_OK;
}

/*
 * Parse and finalize; with several inputs or outputs refused unless
 * multi_io.  json-c's tree is released before finalizing; the spec keeps
 * copies of every name it needs.
 */
static DlStatus
parse_spec(const char *json, size_t len, bool multi_io, const DlAllocator *alloc,
		   DlModelSpec **out, DlError *err)
{
	json_object *root;
	DlModelSpec *spec = NULL;
	DlStatus	st;

	if (out == NULL)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "no place to return the model spec");
	*out = NULL;
	if (json == NULL)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "model architecture is null");
	if ((st = parse_text(json, len, &root, err)) != DL_OK)
		return st;
	st = read_model(root, alloc, &spec, err);
	json_object_put(root);
	if (st != DL_OK)
		return st;
	if (!multi_io && (spec->n_inputs > 1 || spec->n_outputs > 1))
		st = keras_refuse_multi_io(spec, err);
	else
		st = dl_model_spec_finalize(spec, err);
	if (st != DL_OK)
	{
		dl_model_spec_free(spec, alloc);
		return st;
	}
	*out = spec;
	return DL_OK;
}

DlStatus
dl_keras_parse(const char *json, size_t len, const DlAllocator *alloc, DlModelSpec **out,
			   DlError *err)
{
	return parse_spec(json, len, false, alloc, out, err);
}

DlStatus
dl_keras_parse_multi_io(const char *json, size_t len, const DlAllocator *alloc,
						DlModelSpec **out, DlError *err)
{
	return parse_spec(json, len, true, alloc, out, err);
}

/* ----------------------------------------------------------------------
 * Variable input shapes: binding the unknown dimensions
 * ----------------------------------------------------------------------
 */

/* Where binding is: the dims, their rank, and what was found. */
typedef struct BindState
{
	const int64_t *dims;		/* NULL: DL_KERAS_FREE_DIM_DEFAULT each */
	int			rank;
	int			n_free;			/* null dimensions found */
	int			free_rank;		/* the per-sample rank of the lists with one */
	DlStatus	st;
} BindState;

/*
 * In the shape list v (with_batch: its first element is the batch
 * dimension, kept), replace each null per-sample dimension by the bound
 * one.
 */
static void
bind_list(json_object *v, bool with_batch, BindState *b, DlError *err)
{
	size_t		n = keras_jlen(v);
	size_t		first = with_batch ? 1 : 0;
	int			nulls = 0;

	if (n <= first || b->st != DL_OK)
		return;
	for (size_t i = first; i < n; i++)
		nulls += keras_jidx(v, i) == NULL;
	if (nulls == 0)
		return;
	b->n_free += nulls;
	if (b->free_rank != 0 && b->free_rank != (int) (n - first))
	{
		b->st = dl_error_set(err, DL_ERR_UNSUPPORTED,
							 "the model has inputs of unknown dimensions of ranks %d and %zu",
							 b->free_rank, n - first);
		dl_error_hint(err, "Give the model's inputs fixed sizes (all but the batch dimension).");
		return;
	}
	b->free_rank = (int) (n - first);
	if (b->dims != NULL && b->rank != (int) (n - first))
	{
		b->st = dl_error_set(err, DL_ERR_SHAPE,
							 "the rows have %d dimensions but the model's input has %zu per sample",
							 b->rank, n - first);
		dl_error_hint(err, "Give every row an array of the model's input rank %zu.", n - first);
		return;
	}
	for (size_t i = first; i < n; i++)
		if (keras_jidx(v, i) == NULL)
		{
			int64_t		d = b->dims != NULL ? b->dims[i - first] : DL_KERAS_FREE_DIM_DEFAULT;

			json_object_array_put_idx(v, i, json_object_new_int64(d));
		}
}

/* Bind every input shape list in the tree under obj (depth-limited by the parser). */
static void
bind_walk(json_object *obj, bool in_build_config, bool in_layer_config, BindState *b, DlError *err)
{
	if (obj == NULL || b->st != DL_OK)
		return;
	if (json_object_is_type(obj, json_type_array))
	{
		for (size_t i = 0; i < keras_jlen(obj); i++)
			bind_walk(keras_jidx(obj, i), false, false, b, err);
		return;
	}
	if (!json_object_is_type(obj, json_type_object))
		return;
	{
		json_object_object_foreach(obj, key, val)
		{
		if (val == NULL)
			continue;
		if (strcmp(key, "batch_input_shape") == 0 || strcmp(key, "batch_shape") == 0 ||
			strcmp(key, "build_input_shape") == 0)
			bind_list(val, true, b, err);
		else if (strcmp(key, "input_shape") == 0 && json_object_is_type(val, json_type_array))
			/* build_config's has the batch dimension, a layer config's not */
			bind_list(val, in_build_config || !in_layer_config, b, err);
		else
			bind_walk(val, strcmp(key, "build_config") == 0, strcmp(key, "config") == 0, b, err);
		}
	}
}

DlStatus
dl_keras_bind_shape(const char *json, size_t len, const int64_t *dims, int rank,
					const DlAllocator *alloc, char **out, int *n_free, DlError *err)
{
	json_object *root;
	BindState	b = {dims, rank, 0, 0, DL_OK};
	DlStatus	st;

	if (out == NULL || n_free == NULL)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "no place to return the bound architecture");
	*out = NULL;
	*n_free = 0;
	if (json == NULL)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "model architecture is null");
	if (dims != NULL && (rank < 1 || rank > DL_MAX_RANK))
		return dl_error_set(err, DL_ERR_SHAPE, "the rows have %d dimensions, expected 1 to %d",
							rank, DL_MAX_RANK);
	for (int i = 0; dims != NULL && i < rank; i++)
		if (dims[i] < 1 || dims[i] > INT32_MAX)
			return dl_error_set(err, DL_ERR_SHAPE, "the rows' dimension %d has the size %lld",
								i + 1, (long long) dims[i]);
	if ((st = parse_text(json, len, &root, err)) != DL_OK)
		return st;
	bind_walk(root, false, false, &b, err);
	if (b.st == DL_OK)
	{
		size_t		n;
		const char *text = json_object_to_json_string_length(root, JSON_C_TO_STRING_PLAIN, &n);

		*out = text == NULL ? NULL : dl_alloc(alloc, n + 1, err);
		if (text == NULL)
			b.st = dl_error_set(err, DL_ERR_NO_MEMORY, "out of memory writing the architecture");
		else if (*out == NULL)
			b.st = DL_ERR_NO_MEMORY;
		else
			memcpy(*out, text, n + 1);
		*n_free = b.n_free;
	}
	json_object_put(root);
	return b.st;
}
