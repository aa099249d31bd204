/*-------------------------------------------------------------------------
 *
 * keras_read.c
 *	  The Keras reader's low-level helpers, shared by keras_json.c,
 *	  keras_graph.c and keras_layers.c: the hints, the small json helpers
 *	  (member and element getters, quoting a value in a message,
 *	  normalizing a name), the config value readers (int, double, bool,
 *	  seed, pair, padding, data format, activation) and the layer name
 *	  and shape readers.  They depend on no other file of the reader, so
 *	  keras_json.c -> keras_graph.c -> keras_layers.c -> keras_read.c is
 *	  a DAG.  Part of the reader described in keras_json.c.
 *
 * IDENTIFICATION
 *	  src/engine/keras_read.c
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

const char *const keras_hint_layers =
"Use only the layers Dense, Conv2D, MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D, "
"GlobalMaxPooling2D, ZeroPadding2D, Cropping2D, UpSampling2D, Flatten, Dropout, Activation, "
"ReLU, Softmax, ELU, BatchNormalization, Add, Subtract, Multiply, Average, Maximum, Minimum, "
"Concatenate, Embedding, Conv1D, MaxPooling1D, AveragePooling1D, GlobalMaxPooling1D, "
"GlobalAveragePooling1D, LSTM, GRU, SimpleRNN, Bidirectional, DepthwiseConv2D, SeparableConv2D, "
"LayerNormalization, LeakyReLU, PReLU, Reshape, Permute, RepeatVector and InputLayer.";

const char *const keras_hint_nested =
"Save a model that lists the inner model's layers itself: for an inner model whose layers form a "
"chain, keras.Sequential(base.layers + [head]) keeps the trained weights; then model.save() again.";

const char *const keras_hint_graph =
"Export a Sequential model, or a functional model whose layers each take the outputs of layers "
"before them, as model.to_json() writes it.";

/* ----------------------------------------------------------------------
 * Small json helpers
 * ----------------------------------------------------------------------
 */

/* Member key of obj; NULL when obj is not an object, key is absent or null. */
json_object *
keras_jget(json_object *obj, const char *key)
{
	json_object *v = NULL;

	if (obj == NULL || !json_object_is_type(obj, json_type_object))
		return NULL;
	if (!json_object_object_get_ex(obj, key, &v))
		return NULL;
	return v;
}

/*
 * Length of v when it is an array, else 0.  json-c asserts (aborts) when
 * its array functions get anything else, so every array access in this
 * file goes through jlen and jidx.
 */
size_t
keras_jlen(json_object *v)
{
	return (v != NULL && json_object_is_type(v, json_type_array)) ? json_object_array_length(v) : 0;
}

/* Element i of v, or NULL when v is not an array or i is out of range. */
json_object *
keras_jidx(json_object *v, size_t i)
{
	return i < keras_jlen(v) ? json_object_array_get_idx(v, i) : NULL;
}

/* String member key of obj, or NULL when absent or not a string. */
const char *
keras_jget_str(json_object *obj, const char *key)
{
	json_object *v = keras_jget(obj, key);

	return (v != NULL && json_object_is_type(v, json_type_string)) ? json_object_get_string(v) : NULL;
}

/* Copy s into buf (size bytes) without splitting a UTF-8 sequence. */
void
keras_copy_clipped(char *buf, size_t size, const char *s)
{
	size_t		n = strlen(s);

	if (size == 0)
		return;
	if (n >= size)
	{
		n = size - 1;
		while (n > 0 && ((unsigned char) s[n] & 0xC0) == 0x80)
			n--;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
}

/* Append s to the NUL-terminated text in buf (size bytes), clipped. */
void
keras_text_append(char *buf, size_t size, const char *s)
{
	size_t		used = strlen(buf);

	if (used + 1 < size)
		keras_copy_clipped(buf + used, size - used, s);
}

/* JSON text of v without whitespace; never NULL. */
static const char *
json_plain(json_object *v)
{
	const char *s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);

	return s != NULL ? s : "?";
}

/*
 * Format v for a message into buf (size bytes) and return buf: strings in
 * double quotes, lists as Python tuples "(2, 2)", objects by their
 * class_name when they have one, anything else as JSON.
 */
const char *
keras_value_text(json_object *v, char *buf, size_t size)
{
	buf[0] = '\0';
	if (v == NULL)
		keras_text_append(buf, size, "null");
	else if (json_object_is_type(v, json_type_string))
	{
		keras_text_append(buf, size, "\"");
		if (size > 2)
			keras_copy_clipped(buf + 1, size - 2, json_object_get_string(v));
		keras_text_append(buf, size, "\"");
	}
	else if (json_object_is_type(v, json_type_array))
	{
		size_t		n = keras_jlen(v);

		keras_text_append(buf, size, "(");
		for (size_t i = 0; i < n; i++)
		{
			json_object *e = keras_jidx(v, i);

			if (i > 0)
				keras_text_append(buf, size, ", ");
			keras_text_append(buf, size, e == NULL ? "null" : json_plain(e));
		}
		keras_text_append(buf, size, ")");
	}
	else if (keras_jget_str(v, "class_name") != NULL)
		keras_text_append(buf, size, keras_jget_str(v, "class_name"));
	else
		keras_text_append(buf, size, json_plain(v));
	return buf;
}

/*
 * Lowercase s without underscores into buf, so that "GlorotUniform",
 * "glorot_uniform" and "glorotUniform" all read "glorotuniform".
 */
void
keras_norm_name(const char *s, char *buf, size_t size)
{
	size_t		n = 0;

	for (; *s != '\0' && n + 1 < size; s++)
	{
		if (*s != '_')
			buf[n++] = (char) tolower((unsigned char) *s);
	}
	buf[n] = '\0';
}

/* Integer value of v (a JSON integer, or a double with an integral value). */
bool
keras_json_int64(json_object *v, int64_t *out)
{
	if (json_object_is_type(v, json_type_int))
	{
		*out = json_object_get_int64(v);
		return true;
	}
	if (json_object_is_type(v, json_type_double))
	{
		double		d = json_object_get_double(v);

		if (isfinite(d) && d == floor(d) && fabs(d) < 9.0e15)
		{
			*out = (int64_t) d;
			return true;
		}
	}
	return false;
}

/* ----------------------------------------------------------------------
 * Typed attribute readers.  Each leaves *out alone when the key is
 * absent or null (the caller set the Keras default), and fails with
 * DL_ERR_PARSE naming layer, key and value when the type is wrong.
 * ----------------------------------------------------------------------
 */

/* DL_ERR_PARSE: key of layer holds v, which is not what. */
DlStatus
keras_bad_type(const DlLayer *layer, const char *key, json_object *v, const char *what, DlError *err)
{
	char		text[KERAS_TEXT_MAX];

	dl_error_set(err, DL_ERR_PARSE, "layer \"%s\": %s must be %s, got %s",
				 layer->name, key, what, keras_value_text(v, text, sizeof(text)));
	return dl_error_hint(err, "Pass the output of model.to_json() unchanged.");
}

/* An integer (or integral double) under key. */
DlStatus
keras_get_int(json_object *cfg, const char *key, const DlLayer *layer, int64_t *out, DlError *err)
{
	json_object *v = keras_jget(cfg, key);

	if (v != NULL && !keras_json_int64(v, out))
		return keras_bad_type(layer, key, v, "an integer", err);
	return DL_OK;
}

/* A finite number under key; NaN and Infinity are refused. */
DlStatus
keras_get_double(json_object *cfg, const char *key, const DlLayer *layer, double *out, DlError *err)
{
	json_object *v = keras_jget(cfg, key);

	if (v == NULL)
		return DL_OK;
	if (!(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) ||
		!isfinite(json_object_get_double(v)))
		return keras_bad_type(layer, key, v, "a finite number", err);
	*out = json_object_get_double(v);
	return DL_OK;
}

/* true or false under key. */
DlStatus
keras_get_bool(json_object *cfg, const char *key, const DlLayer *layer, bool *out, DlError *err)
{
	json_object *v = keras_jget(cfg, key);

	if (v == NULL)
		return DL_OK;
	if (!json_object_is_type(v, json_type_boolean))
		return keras_bad_type(layer, key, v, "true or false", err);
	*out = json_object_get_boolean(v);
	return DL_OK;
}

/* A seed: null leaves *has_seed false; an integer sets it. */
DlStatus
keras_get_seed(json_object *cfg, const DlLayer *layer, const char *what, bool *has_seed,
		 uint64_t *seed, DlError *err)
{
	json_object *v = keras_jget(cfg, "seed");
	int64_t		s;
	char		text[KERAS_TEXT_MAX];

	*has_seed = false;
	*seed = 0;
	if (v == NULL)
		return DL_OK;
	if (!keras_json_int64(v, &s))
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": %s seed %s is not supported",
					 layer->name, what, keras_value_text(v, text, sizeof(text)));
		return dl_error_hint(err, "Give the seed as an integer, or null.");
	}
	*has_seed = true;
	*seed = (uint64_t) s;
	return DL_OK;
}

/*
 * A window size or stride: an integer n (meaning (n, n)) or a list of two
 * integers, each in [1, INT_MAX].
 */
DlStatus
keras_get_pair(json_object *cfg, const char *key, const DlLayer *layer, int out[2], DlError *err)
{
	json_object *v = keras_jget(cfg, key);
	int64_t		p[2];
	char		text[KERAS_TEXT_MAX];

	if (v == NULL)
		return DL_OK;
	if (json_object_is_type(v, json_type_array))
	{
		if (keras_jlen(v) != 2 ||
			!keras_json_int64(keras_jidx(v, 0), &p[0]) ||
			!keras_json_int64(keras_jidx(v, 1), &p[1]))
			return keras_bad_type(layer, key, v, "an integer or a list of two integers", err);
	}
	else if (keras_json_int64(v, &p[0]))
		p[1] = p[0];
	else
		return keras_bad_type(layer, key, v, "an integer or a list of two integers", err);
	for (int i = 0; i < 2; i++)
	{
		if (p[i] < 1 || p[i] > INT_MAX)
			return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
								"layer \"%s\": %s %s must be positive",
								layer->name, key, keras_value_text(v, text, sizeof(text)));
		out[i] = (int) p[i];
	}
	return DL_OK;
}

/* Refuse key unless it is absent or null: we do not implement it. */
DlStatus
keras_need_null(json_object *cfg, const char *key, const DlLayer *layer, DlError *err)
{
	json_object *v = keras_jget(cfg, key);
	char		text[KERAS_TEXT_MAX];

	if (v == NULL)
		return DL_OK;
	dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": %s %s is not supported",
				 layer->name, key, keras_value_text(v, text, sizeof(text)));
	return dl_error_hint(err, "Remove %s from the layer; madlib_dl does not implement it.", key);
}

/* Refuse key unless it is absent, null or false. */
DlStatus
keras_need_false(json_object *cfg, const char *key, const DlLayer *layer, DlError *err)
{
	json_object *v = keras_jget(cfg, key);

	if (v != NULL && json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v))
		return DL_OK;
	return keras_need_null(cfg, key, layer, err);
}

/* padding: "valid" or "same", in any case. */
DlStatus
keras_get_padding(json_object *cfg, const DlLayer *layer, DlPadding *out, DlError *err)
{
	json_object *v = keras_jget(cfg, "padding");
	char		text[KERAS_TEXT_MAX];

	if (v == NULL)
		return DL_OK;
	if (!json_object_is_type(v, json_type_string))
		return keras_bad_type(layer, "padding", v, "a string", err);
	if (strcasecmp(json_object_get_string(v), "valid") == 0)
		*out = DL_PADDING_VALID;
	else if (strcasecmp(json_object_get_string(v), "same") == 0)
		*out = DL_PADDING_SAME;
	else
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": padding %s is not supported",
					 layer->name, keras_value_text(v, text, sizeof(text)));
		return dl_error_hint(err, "Use padding \"valid\" or \"same\".");
	}
	return DL_OK;
}

/* data_format: null or "channels_last". */
DlStatus
keras_check_data_format(json_object *cfg, const DlLayer *layer, DlError *err)
{
	json_object *v = keras_jget(cfg, "data_format");
	char		text[KERAS_TEXT_MAX];

	if (v == NULL ||
		(json_object_is_type(v, json_type_string) &&
		 strcmp(json_object_get_string(v), "channels_last") == 0))
		return DL_OK;
	dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": data_format %s is not supported",
				 layer->name, keras_value_text(v, text, sizeof(text)));
	return dl_error_hint(err, "Build the model with data_format=\"channels_last\" (height, width, channels).");
}

/* ----------------------------------------------------------------------
 * Activations, initializers, regularizers
 * ----------------------------------------------------------------------
 */

static const struct
{
	const char *name;
	DlActivation act;
}			keras_activations[] =
{
	{"linear", DL_ACT_LINEAR},
	{"relu", DL_ACT_RELU},
	{"sigmoid", DL_ACT_SIGMOID},
	{"tanh", DL_ACT_TANH},
	{"softmax", DL_ACT_SOFTMAX},
	{"elu", DL_ACT_ELU},
	{"softplus", DL_ACT_SOFTPLUS},
	{"selu", DL_ACT_SELU},
	{"swish", DL_ACT_SWISH},
	{"silu", DL_ACT_SWISH},
	{"gelu", DL_ACT_GELU},
	{"softsign", DL_ACT_SOFTSIGN},
	{"hard_sigmoid", DL_ACT_HARD_SIGMOID},	/* Keras 3's: read_layer */
	{"hardSigmoid", DL_ACT_HARD_SIGMOID},
	{"exponential", DL_ACT_EXPONENTIAL},
};

/*
 * The activation under key: a name, null (linear), or Keras 3's
 * {"class_name": "function", "config": "relu"}; into *out.
 */
DlStatus
keras_get_activation_key(json_object *cfg, const char *key, DlLayer *layer, DlActivation *out,
				   DlError *err)
{
	json_object *v = keras_jget(cfg, key);
	char		text[KERAS_TEXT_MAX];

	if (v == NULL)
		return DL_OK;
	if (json_object_is_type(v, json_type_object))
	{
		json_object *c = keras_jget(v, "config");

		if (c != NULL && json_object_is_type(c, json_type_string))
			v = c;
		else if (keras_jget_str(v, "class_name") == NULL)
			return keras_bad_type(layer, key, v, "a name", err);
	}
	if (json_object_is_type(v, json_type_string))
	{
		for (size_t i = 0; i < sizeof(keras_activations) / sizeof(keras_activations[0]); i++)
		{
			if (strcmp(json_object_get_string(v), keras_activations[i].name) == 0)
			{
				*out = keras_activations[i].act;
				return DL_OK;
			}
		}
	}
	else if (!json_object_is_type(v, json_type_object))
		return keras_bad_type(layer, key, v, "a name", err);
	dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\" has unsupported %s %s",
				 layer->name, key, keras_value_text(v, text, sizeof(text)));
	return dl_error_hint(err, "Use one of the activations linear, relu, sigmoid, tanh, softmax, elu, "
						 "softplus, selu, swish (silu), gelu, softsign, hard_sigmoid and exponential.");
}

/* activation, into layer->activation. */
DlStatus
keras_get_activation(json_object *cfg, DlLayer *layer, DlError *err)
{
	return keras_get_activation_key(cfg, "activation", layer, &layer->activation, err);
}

/* ----------------------------------------------------------------------
 * Layer names and shapes
 * ----------------------------------------------------------------------
 */

/* The layer's name: its config's, else the functional entry's, else "". */
const char *
keras_layer_name(json_object *entry)
{
	const char *name = keras_jget_str(keras_jget(entry, "config"), "name");

	if (name == NULL)
		name = keras_jget_str(entry, "name");
	return name != NULL ? name : "";
}

/*
 * Read a shape list into *shape.  with_batch: the list starts with the
 * batch dimension, which is dropped.  who and key name the source.
 */
DlStatus
keras_read_shape(json_object *v, bool with_batch, const char *who, const char *key, DlShape *shape,
		   DlError *err)
{
	char		text[KERAS_TEXT_MAX];
	size_t		n;
	size_t		first = with_batch ? 1 : 0;

	if (!json_object_is_type(v, json_type_array))
		return dl_error_set(err, DL_ERR_PARSE, "%s: %s must be a list, got %s",
							who, key, keras_value_text(v, text, sizeof(text)));
	n = keras_jlen(v);
	if (n <= first)
	{
		dl_error_set(err, DL_ERR_SHAPE, "%s: %s %s has no dimensions per sample",
					 who, key, keras_value_text(v, text, sizeof(text)));
		return dl_error_hint(err, "Give the input at least one dimension besides the batch.");
	}
	if (n - first > DL_MAX_RANK)
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "%s: %s %s has %zu dimensions per sample, more than %d",
					 who, key, keras_value_text(v, text, sizeof(text)), n - first, DL_MAX_RANK);
		return dl_error_hint(err, "Reshape the input to at most %d dimensions per sample.", DL_MAX_RANK);
	}
	memset(shape, 0, sizeof(*shape));
	shape->rank = (int) (n - first);
	for (size_t i = first; i < n; i++)
	{
		json_object *d = keras_jidx(v, i);
		int64_t		dim;

		if (d == NULL)
		{
			dl_error_set(err, DL_ERR_SHAPE, "%s: %s %s has an unknown (null) dimension %zu",
						 who, key, keras_value_text(v, text, sizeof(text)), i);
			return dl_error_hint(err, "Give every dimension except the batch dimension a fixed size; "
								 "predict_byom binds a variable input shape from the rows.");
		}
		if (!keras_json_int64(d, &dim) || dim < 1)
			return dl_error_set(err, DL_ERR_SHAPE, "%s: %s %s has an invalid dimension %s",
								who, key, keras_value_text(v, text, sizeof(text)), json_plain(d));
		shape->dims[i - first] = dim;
	}
	return DL_OK;
}

/*
 * Find the model's input shape: the first layer's (InputLayer or not)
 * batch_input_shape / batch_shape, its Keras 3 build_config, the model's
 * build_config or build_input_shape, or the first layer's input_shape.
 */
DlStatus
keras_find_input_shape(json_object *model, json_object *first, DlShape *shape, DlError *err)
{
	json_object *cfg = keras_jget(first, "config");
	json_object *model_cfg = keras_jget(model, "config");
	char		who[DL_NAME_MAX + 16];
	json_object *v;

	snprintf(who, sizeof(who), "layer \"%.100s\"", keras_layer_name(first));
	if ((v = keras_jget(cfg, "batch_input_shape")) != NULL)
		return keras_read_shape(v, true, who, "batch_input_shape", shape, err);
	if ((v = keras_jget(cfg, "batch_shape")) != NULL)
		return keras_read_shape(v, true, who, "batch_shape", shape, err);
	if ((v = keras_jget(keras_jget(first, "build_config"), "input_shape")) != NULL)
		return keras_read_shape(v, true, who, "build_config input_shape", shape, err);
	if ((v = keras_jget(keras_jget(model, "build_config"), "input_shape")) != NULL)
		return keras_read_shape(v, true, "model", "build_config input_shape", shape, err);
	if ((v = keras_jget(model_cfg, "build_input_shape")) != NULL)
		return keras_read_shape(v, true, "model", "build_input_shape", shape, err);
	if ((v = keras_jget(cfg, "input_shape")) != NULL)
		return keras_read_shape(v, false, who, "input_shape", shape, err);
	dl_error_set(err, DL_ERR_SHAPE, "model has no input shape");
	return dl_error_hint(err, "Give the first layer an input shape (input_shape in Python), "
						 "or start the model with an InputLayer.");
}
