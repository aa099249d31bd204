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
 *		allows (the order of get_weights());
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

/* Deepest nesting json-c accepts; Keras 3 functional models need about 10. */
#define KERAS_JSON_MAX_DEPTH 64

/* Room for a user-supplied value quoted in a message. */
#define KERAS_TEXT_MAX 100

/* Room for a normalized class, mode or distribution name. */
#define KERAS_NORM_MAX 48

static const char *const hint_layers =
"Use only the layers Dense, Conv2D, MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D, "
"GlobalMaxPooling2D, ZeroPadding2D, Cropping2D, UpSampling2D, Flatten, Dropout, Activation, "
"ReLU, Softmax, ELU, BatchNormalization, Add, Subtract, Multiply, Average, Maximum, Minimum, "
"Concatenate, Embedding, Conv1D, MaxPooling1D, AveragePooling1D, GlobalMaxPooling1D, "
"GlobalAveragePooling1D, LSTM, GRU, SimpleRNN, Bidirectional, DepthwiseConv2D, SeparableConv2D, "
"LayerNormalization, LeakyReLU, PReLU, Reshape, Permute, RepeatVector and InputLayer.";

static const char *const hint_graph =
"Export a Sequential model, or a functional model whose layers each take the outputs of layers "
"before them, as model.to_json() writes it.";

/* ----------------------------------------------------------------------
 * Small json helpers
 * ----------------------------------------------------------------------
 */

/* Member key of obj; NULL when obj is not an object, key is absent or null. */
static json_object *
jget(json_object *obj, const char *key)
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
static size_t
jlen(json_object *v)
{
	return (v != NULL && json_object_is_type(v, json_type_array)) ? json_object_array_length(v) : 0;
}

/* Element i of v, or NULL when v is not an array or i is out of range. */
static json_object *
jidx(json_object *v, size_t i)
{
	return i < jlen(v) ? json_object_array_get_idx(v, i) : NULL;
}

/* String member key of obj, or NULL when absent or not a string. */
static const char *
jget_str(json_object *obj, const char *key)
{
	json_object *v = jget(obj, key);

	return (v != NULL && json_object_is_type(v, json_type_string)) ? json_object_get_string(v) : NULL;
}

/* Copy s into buf (size bytes) without splitting a UTF-8 sequence. */
static void
copy_clipped(char *buf, size_t size, const char *s)
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
static void
text_append(char *buf, size_t size, const char *s)
{
	size_t		used = strlen(buf);

	if (used + 1 < size)
		copy_clipped(buf + used, size - used, s);
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
static const char *
value_text(json_object *v, char *buf, size_t size)
{
	buf[0] = '\0';
	if (v == NULL)
		text_append(buf, size, "null");
	else if (json_object_is_type(v, json_type_string))
	{
		text_append(buf, size, "\"");
		if (size > 2)
			copy_clipped(buf + 1, size - 2, json_object_get_string(v));
		text_append(buf, size, "\"");
	}
	else if (json_object_is_type(v, json_type_array))
	{
		size_t		n = jlen(v);

		text_append(buf, size, "(");
		for (size_t i = 0; i < n; i++)
		{
			json_object *e = jidx(v, i);

			if (i > 0)
				text_append(buf, size, ", ");
			text_append(buf, size, e == NULL ? "null" : json_plain(e));
		}
		text_append(buf, size, ")");
	}
	else if (jget_str(v, "class_name") != NULL)
		text_append(buf, size, jget_str(v, "class_name"));
	else
		text_append(buf, size, json_plain(v));
	return buf;
}

/*
 * Lowercase s without underscores into buf, so that "GlorotUniform",
 * "glorot_uniform" and "glorotUniform" all read "glorotuniform".
 */
static void
norm_name(const char *s, char *buf, size_t size)
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
static bool
json_int64(json_object *v, int64_t *out)
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
static DlStatus
bad_type(const DlLayer *layer, const char *key, json_object *v, const char *what, DlError *err)
{
	char		text[KERAS_TEXT_MAX];

	dl_error_set(err, DL_ERR_PARSE, "layer \"%s\": %s must be %s, got %s",
				 layer->name, key, what, value_text(v, text, sizeof(text)));
	return dl_error_hint(err, "Pass the output of model.to_json() unchanged.");
}

/* An integer (or integral double) under key. */
static DlStatus
get_int(json_object *cfg, const char *key, const DlLayer *layer, int64_t *out, DlError *err)
{
	json_object *v = jget(cfg, key);

	if (v != NULL && !json_int64(v, out))
		return bad_type(layer, key, v, "an integer", err);
	return DL_OK;
}

/* A finite number under key; NaN and Infinity are refused. */
static DlStatus
get_double(json_object *cfg, const char *key, const DlLayer *layer, double *out, DlError *err)
{
	json_object *v = jget(cfg, key);

	if (v == NULL)
		return DL_OK;
	if (!(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) ||
		!isfinite(json_object_get_double(v)))
		return bad_type(layer, key, v, "a finite number", err);
	*out = json_object_get_double(v);
	return DL_OK;
}

/* true or false under key. */
static DlStatus
get_bool(json_object *cfg, const char *key, const DlLayer *layer, bool *out, DlError *err)
{
	json_object *v = jget(cfg, key);

	if (v == NULL)
		return DL_OK;
	if (!json_object_is_type(v, json_type_boolean))
		return bad_type(layer, key, v, "true or false", err);
	*out = json_object_get_boolean(v);
	return DL_OK;
}

/* A seed: null leaves *has_seed false; an integer sets it. */
static DlStatus
get_seed(json_object *cfg, const DlLayer *layer, const char *what, bool *has_seed,
		 uint64_t *seed, DlError *err)
{
	json_object *v = jget(cfg, "seed");
	int64_t		s;
	char		text[KERAS_TEXT_MAX];

	*has_seed = false;
	*seed = 0;
	if (v == NULL)
		return DL_OK;
	if (!json_int64(v, &s))
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": %s seed %s is not supported",
					 layer->name, what, value_text(v, text, sizeof(text)));
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
static DlStatus
get_pair(json_object *cfg, const char *key, const DlLayer *layer, int out[2], DlError *err)
{
	json_object *v = jget(cfg, key);
	int64_t		p[2];
	char		text[KERAS_TEXT_MAX];

	if (v == NULL)
		return DL_OK;
	if (json_object_is_type(v, json_type_array))
	{
		if (jlen(v) != 2 ||
			!json_int64(jidx(v, 0), &p[0]) ||
			!json_int64(jidx(v, 1), &p[1]))
			return bad_type(layer, key, v, "an integer or a list of two integers", err);
	}
	else if (json_int64(v, &p[0]))
		p[1] = p[0];
	else
		return bad_type(layer, key, v, "an integer or a list of two integers", err);
	for (int i = 0; i < 2; i++)
	{
		if (p[i] < 1 || p[i] > INT_MAX)
			return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
								"layer \"%s\": %s %s must be positive",
								layer->name, key, value_text(v, text, sizeof(text)));
		out[i] = (int) p[i];
	}
	return DL_OK;
}

/* Refuse key unless it is absent or null: we do not implement it. */
static DlStatus
need_null(json_object *cfg, const char *key, const DlLayer *layer, DlError *err)
{
	json_object *v = jget(cfg, key);
	char		text[KERAS_TEXT_MAX];

	if (v == NULL)
		return DL_OK;
	dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": %s %s is not supported",
				 layer->name, key, value_text(v, text, sizeof(text)));
	return dl_error_hint(err, "Remove %s from the layer; madlib_dl does not implement it.", key);
}

/* Refuse key unless it is absent, null or false. */
static DlStatus
need_false(json_object *cfg, const char *key, const DlLayer *layer, DlError *err)
{
	json_object *v = jget(cfg, key);

	if (v != NULL && json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v))
		return DL_OK;
	return need_null(cfg, key, layer, err);
}

/* padding: "valid" or "same", in any case. */
static DlStatus
get_padding(json_object *cfg, const DlLayer *layer, DlPadding *out, DlError *err)
{
	json_object *v = jget(cfg, "padding");
	char		text[KERAS_TEXT_MAX];

	if (v == NULL)
		return DL_OK;
	if (!json_object_is_type(v, json_type_string))
		return bad_type(layer, "padding", v, "a string", err);
	if (strcasecmp(json_object_get_string(v), "valid") == 0)
		*out = DL_PADDING_VALID;
	else if (strcasecmp(json_object_get_string(v), "same") == 0)
		*out = DL_PADDING_SAME;
	else
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": padding %s is not supported",
					 layer->name, value_text(v, text, sizeof(text)));
		return dl_error_hint(err, "Use padding \"valid\" or \"same\".");
	}
	return DL_OK;
}

/* data_format: null or "channels_last". */
static DlStatus
check_data_format(json_object *cfg, const DlLayer *layer, DlError *err)
{
	json_object *v = jget(cfg, "data_format");
	char		text[KERAS_TEXT_MAX];

	if (v == NULL ||
		(json_object_is_type(v, json_type_string) &&
		 strcmp(json_object_get_string(v), "channels_last") == 0))
		return DL_OK;
	dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": data_format %s is not supported",
				 layer->name, value_text(v, text, sizeof(text)));
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
static DlStatus
get_activation_key(json_object *cfg, const char *key, DlLayer *layer, DlActivation *out,
				   DlError *err)
{
	json_object *v = jget(cfg, key);
	char		text[KERAS_TEXT_MAX];

	if (v == NULL)
		return DL_OK;
	if (json_object_is_type(v, json_type_object))
	{
		json_object *c = jget(v, "config");

		if (c != NULL && json_object_is_type(c, json_type_string))
			v = c;
		else if (jget_str(v, "class_name") == NULL)
			return bad_type(layer, key, v, "a name", err);
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
		return bad_type(layer, key, v, "a name", err);
	dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\" has unsupported %s %s",
				 layer->name, key, value_text(v, text, sizeof(text)));
	return dl_error_hint(err, "Use one of the activations linear, relu, sigmoid, tanh, softmax, elu, "
						 "softplus, selu, swish (silu), gelu, softsign, hard_sigmoid and exponential.");
}

/* activation, into layer->activation. */
static DlStatus
get_activation(json_object *cfg, DlLayer *layer, DlError *err)
{
	return get_activation_key(cfg, "activation", layer, &layer->activation, err);
}

/* Reset *init to kind with the Keras defaults of every parameter. */
static void
init_reset(DlInitializer *init, DlInitKind kind)
{
	memset(init, 0, sizeof(*init));
	init->kind = kind;
	init->stddev = 0.05;
	init->minval = -0.05;
	init->maxval = 0.05;
	init->scale = 1.0;
	init->mode = DL_FAN_IN;
	init->distribution = DL_DIST_TRUNCATED_NORMAL;
}

/* The named VarianceScaling presets (Keras 2.2 spells them out in full). */
static const struct
{
	const char *norm;
	double		scale;
	DlFanMode	mode;
	DlDistribution distribution;
}			keras_vs_presets[] =
{
	{"glorotuniform", 1.0, DL_FAN_AVG, DL_DIST_UNIFORM},
	{"glorotnormal", 1.0, DL_FAN_AVG, DL_DIST_TRUNCATED_NORMAL},
	{"heuniform", 2.0, DL_FAN_IN, DL_DIST_UNIFORM},
	{"henormal", 2.0, DL_FAN_IN, DL_DIST_TRUNCATED_NORMAL},
	{"lecununiform", 1.0, DL_FAN_IN, DL_DIST_UNIFORM},
	{"lecunnormal", 1.0, DL_FAN_IN, DL_DIST_TRUNCATED_NORMAL},
};

/* DL_ERR_UNSUPPORTED: an initializer's mode or distribution v. */
static DlStatus
unsupported_init_value(const DlLayer *layer, const char *key, const char *what, json_object *v,
					   DlError *err)
{
	char		text[KERAS_TEXT_MAX];

	dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": %s %s %s is not supported",
				 layer->name, key, what, value_text(v, text, sizeof(text)));
	return dl_error_hint(err, "Use mode fan_in, fan_out or fan_avg and distribution uniform, "
						 "truncated_normal, untruncated_normal or normal.");
}

/* VarianceScaling's scale, mode and distribution from cfg. */
static DlStatus
read_variance_scaling(json_object *cfg, const char *key, const DlLayer *layer,
					  DlInitializer *init, DlError *err)
{
	json_object *v;
	char		norm[KERAS_NORM_MAX];
	DlStatus	st;

	if ((st = get_double(cfg, "scale", layer, &init->scale, err)) != DL_OK)
		return st;
	if (!(init->scale > 0.0))
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							"layer \"%s\": %s scale must be positive, got %g",
							layer->name, key, init->scale);
	if ((v = jget(cfg, "mode")) != NULL)
	{
		if (!json_object_is_type(v, json_type_string))
			return bad_type(layer, "mode", v, "a string", err);
		norm_name(json_object_get_string(v), norm, sizeof(norm));
		if (strcmp(norm, "fanin") == 0)
			init->mode = DL_FAN_IN;
		else if (strcmp(norm, "fanout") == 0)
			init->mode = DL_FAN_OUT;
		else if (strcmp(norm, "fanavg") == 0)
			init->mode = DL_FAN_AVG;
		else
			return unsupported_init_value(layer, key, "mode", v, err);
	}
	if ((v = jget(cfg, "distribution")) != NULL)
	{
		if (!json_object_is_type(v, json_type_string))
			return bad_type(layer, "distribution", v, "a string", err);
		norm_name(json_object_get_string(v), norm, sizeof(norm));
		/* Keras 2.2, TF.js and tf.keras all mean truncated by "normal". */
		if (strcmp(norm, "normal") == 0 || strcmp(norm, "truncatednormal") == 0)
			init->distribution = DL_DIST_TRUNCATED_NORMAL;
		else if (strcmp(norm, "untruncatednormal") == 0)
			init->distribution = DL_DIST_UNTRUNCATED_NORMAL;
		else if (strcmp(norm, "uniform") == 0)
			init->distribution = DL_DIST_UNIFORM;
		else
			return unsupported_init_value(layer, key, "distribution", v, err);
	}
	return DL_OK;
}

/*
 * An initializer under key: {"class_name": ..., "config": {...}} (with
 * Keras 3's module and registered_name), or just a name.  Absent or null
 * keeps *init.
 */
static DlStatus
get_initializer(json_object *layer_cfg, const char *key, const DlLayer *layer,
				DlInitializer *init, DlError *err)
{
	json_object *v = jget(layer_cfg, key);
	json_object *cfg = NULL;
	const char *cls;
	char		norm[KERAS_NORM_MAX];
	char		text[KERAS_TEXT_MAX];
	DlStatus	st = DL_OK;

	if (v == NULL)
		return DL_OK;
	if (json_object_is_type(v, json_type_string))
		cls = json_object_get_string(v);
	else if (json_object_is_type(v, json_type_object) && (cls = jget_str(v, "class_name")) != NULL)
	{
		cfg = jget(v, "config");
		if (cfg != NULL && !json_object_is_type(cfg, json_type_object))
			return bad_type(layer, key, cfg, "an object", err);
	}
	else
		return bad_type(layer, key, v, "an initializer with a class_name", err);

	norm_name(cls, norm, sizeof(norm));
	if (strcmp(norm, "zeros") == 0 || strcmp(norm, "zero") == 0)
	{
		init_reset(init, DL_INIT_ZEROS);
		return DL_OK;
	}
	if (strcmp(norm, "ones") == 0 || strcmp(norm, "one") == 0)
	{
		init_reset(init, DL_INIT_ONES);
		return DL_OK;
	}
	if (strcmp(norm, "constant") == 0)
	{
		json_object *value = jget(cfg, "value");

		init_reset(init, DL_INIT_CONSTANT);
		if (value != NULL && json_object_is_type(value, json_type_array))
		{
			dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": %s Constant value %s is not supported",
						 layer->name, key, value_text(value, text, sizeof(text)));
			return dl_error_hint(err, "Give Constant a single number.");
		}
		return get_double(cfg, "value", layer, &init->value, err);
	}

	if (strcmp(norm, "randomnormal") == 0 || strcmp(norm, "normal") == 0 ||
		strcmp(norm, "truncatednormal") == 0)
	{
		init_reset(init, norm[0] == 't' ? DL_INIT_TRUNCATED_NORMAL : DL_INIT_RANDOM_NORMAL);
		if ((st = get_double(cfg, "mean", layer, &init->mean, err)) != DL_OK ||
			(st = get_double(cfg, "stddev", layer, &init->stddev, err)) != DL_OK)
			return st;
		if (!(init->stddev >= 0.0))
			return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
								"layer \"%s\": %s stddev must not be negative, got %g",
								layer->name, key, init->stddev);
	}
	else if (strcmp(norm, "randomuniform") == 0 || strcmp(norm, "uniform") == 0)
	{
		init_reset(init, DL_INIT_RANDOM_UNIFORM);
		if ((st = get_double(cfg, "minval", layer, &init->minval, err)) != DL_OK ||
			(st = get_double(cfg, "maxval", layer, &init->maxval, err)) != DL_OK)
			return st;
		if (!(init->minval <= init->maxval))
			return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
								"layer \"%s\": %s minval %g is greater than maxval %g",
								layer->name, key, init->minval, init->maxval);
	}
	else if (strcmp(norm, "orthogonal") == 0)
	{
		init_reset(init, DL_INIT_ORTHOGONAL);
		if ((st = get_double(cfg, "gain", layer, &init->scale, err)) != DL_OK)
			return st;
		if (!(init->scale > 0.0))
			return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
								"layer \"%s\": %s gain must be positive, got %g",
								layer->name, key, init->scale);
	}
	else if (strcmp(norm, "variancescaling") == 0)
	{
		init_reset(init, DL_INIT_VARIANCE_SCALING);
		if ((st = read_variance_scaling(cfg, key, layer, init, err)) != DL_OK)
			return st;
	}
	else
	{
		size_t		i;

		for (i = 0; i < sizeof(keras_vs_presets) / sizeof(keras_vs_presets[0]); i++)
		{
			if (strcmp(norm, keras_vs_presets[i].norm) == 0)
				break;
		}
		if (i == sizeof(keras_vs_presets) / sizeof(keras_vs_presets[0]))
		{
			char		clsbuf[KERAS_TEXT_MAX];

			copy_clipped(clsbuf, sizeof(clsbuf), cls);
			dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": %s \"%s\" is not supported",
						 layer->name, key, clsbuf);
			return dl_error_hint(err, "Use one of the initializers Zeros, Ones, Constant, RandomNormal, "
								 "RandomUniform, TruncatedNormal, VarianceScaling, GlorotUniform, "
								 "GlorotNormal, HeUniform, HeNormal, LecunUniform, LecunNormal and "
								 "Orthogonal.");
		}
		init_reset(init, DL_INIT_VARIANCE_SCALING);
		init->scale = keras_vs_presets[i].scale;
		init->mode = keras_vs_presets[i].mode;
		init->distribution = keras_vs_presets[i].distribution;
	}
	/* Only the random initializers have a seed. */
	return get_seed(cfg, layer, key, &init->has_seed, &init->seed, err);
}

/*
 * A regularizer under key: L1, L2, L1L2 (any spelling), as an object or
 * a bare name (Keras default factor 0.01).  Absent or null is zero.
 */
static DlStatus
get_regularizer(json_object *layer_cfg, const char *key, const DlLayer *layer,
				DlRegularizer *reg, DlError *err)
{
	json_object *v = jget(layer_cfg, key);
	json_object *cfg = NULL;
	const char *cls;
	char		norm[KERAS_NORM_MAX];
	DlStatus	st;

	reg->l1 = reg->l2 = 0.0;
	if (v == NULL)
		return DL_OK;
	if (json_object_is_type(v, json_type_string))
		cls = json_object_get_string(v);
	else if (json_object_is_type(v, json_type_object) && (cls = jget_str(v, "class_name")) != NULL)
		cfg = jget(v, "config");
	else
		return bad_type(layer, key, v, "a regularizer with a class_name", err);

	norm_name(cls, norm, sizeof(norm));
	if (strcmp(norm, "l1") == 0)
		reg->l1 = 0.01;
	else if (strcmp(norm, "l2") == 0)
		reg->l2 = 0.01;
	else if (strcmp(norm, "l1l2") == 0)
	{
		/* The class defaults to 0, the l1_l2() shortcut to 0.01 each. */
		if (cfg == NULL && json_object_is_type(v, json_type_string))
			reg->l1 = reg->l2 = 0.01;
	}
	else
	{
		char		clsbuf[KERAS_TEXT_MAX];

		copy_clipped(clsbuf, sizeof(clsbuf), cls);
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": %s \"%s\" is not supported",
					 layer->name, key, clsbuf);
		return dl_error_hint(err, "Use the regularizers L1, L2 or L1L2.");
	}
	if (strcmp(norm, "l2") != 0 && (st = get_double(cfg, "l1", layer, &reg->l1, err)) != DL_OK)
		return st;
	if (strcmp(norm, "l1") != 0 && (st = get_double(cfg, "l2", layer, &reg->l2, err)) != DL_OK)
		return st;
	if (!(reg->l1 >= 0.0 && reg->l2 >= 0.0))
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							"layer \"%s\": %s factors l1 %g and l2 %g must not be negative",
							layer->name, key, reg->l1, reg->l2);
	return DL_OK;
}

/* ----------------------------------------------------------------------
 * Layers
 * ----------------------------------------------------------------------
 */

static const struct
{
	const char *class_name;
	DlLayerKind kind;
}			keras_layer_classes[] =
{
	{"Dense", DL_LAYER_DENSE},
	{"Conv2D", DL_LAYER_CONV2D},
	{"Convolution2D", DL_LAYER_CONV2D},
	{"MaxPooling2D", DL_LAYER_MAXPOOL2D},
	{"MaxPool2D", DL_LAYER_MAXPOOL2D},
	{"AveragePooling2D", DL_LAYER_AVGPOOL2D},
	{"AvgPool2D", DL_LAYER_AVGPOOL2D},
	{"GlobalAveragePooling2D", DL_LAYER_GLOBALAVGPOOL2D},
	{"GlobalAvgPool2D", DL_LAYER_GLOBALAVGPOOL2D},
	{"Flatten", DL_LAYER_FLATTEN},
	{"Dropout", DL_LAYER_DROPOUT},
	{"Activation", DL_LAYER_ACTIVATION},
	{"ReLU", DL_LAYER_ACTIVATION},
	{"Softmax", DL_LAYER_ACTIVATION},
	{"ELU", DL_LAYER_ACTIVATION},
	{"BatchNormalization", DL_LAYER_BATCHNORM},
	{"GlobalMaxPooling2D", DL_LAYER_GLOBALMAXPOOL2D},
	{"GlobalMaxPool2D", DL_LAYER_GLOBALMAXPOOL2D},
	{"ZeroPadding2D", DL_LAYER_ZEROPADDING2D},
	{"Cropping2D", DL_LAYER_CROPPING2D},
	{"UpSampling2D", DL_LAYER_UPSAMPLING2D},
	{"Add", DL_LAYER_ADD},
	{"Subtract", DL_LAYER_SUBTRACT},
	{"Multiply", DL_LAYER_MULTIPLY},
	{"Average", DL_LAYER_AVERAGE},
	{"Maximum", DL_LAYER_MAXIMUM},
	{"Minimum", DL_LAYER_MINIMUM},
	{"Concatenate", DL_LAYER_CONCATENATE},
	{"Embedding", DL_LAYER_EMBEDDING},
	{"Conv1D", DL_LAYER_CONV1D},
	{"Convolution1D", DL_LAYER_CONV1D},
	{"MaxPooling1D", DL_LAYER_MAXPOOL1D},
	{"MaxPool1D", DL_LAYER_MAXPOOL1D},
	{"AveragePooling1D", DL_LAYER_AVGPOOL1D},
	{"AvgPool1D", DL_LAYER_AVGPOOL1D},
	{"GlobalMaxPooling1D", DL_LAYER_GLOBALMAXPOOL1D},
	{"GlobalMaxPool1D", DL_LAYER_GLOBALMAXPOOL1D},
	{"GlobalAveragePooling1D", DL_LAYER_GLOBALAVGPOOL1D},
	{"GlobalAvgPool1D", DL_LAYER_GLOBALAVGPOOL1D},
	{"LSTM", DL_LAYER_LSTM},
	{"GRU", DL_LAYER_GRU},
	{"SimpleRNN", DL_LAYER_SIMPLERNN},
	{"Bidirectional", DL_LAYER_LSTM},	/* the wrapped layer's kind: read_bidirectional */
	{"DepthwiseConv2D", DL_LAYER_DEPTHWISECONV2D},
	{"SeparableConv2D", DL_LAYER_SEPARABLECONV2D},
	{"SeparableConvolution2D", DL_LAYER_SEPARABLECONV2D},
	{"LayerNormalization", DL_LAYER_LAYERNORM},
	{"LeakyReLU", DL_LAYER_RELU},
	{"PReLU", DL_LAYER_PRELU},
	{"Reshape", DL_LAYER_RESHAPE},
	{"Permute", DL_LAYER_PERMUTE},
	{"RepeatVector", DL_LAYER_REPEATVECTOR},
};

/* Attributes shared by Dense and Conv2D. */
static DlStatus
read_weighted(json_object *cfg, DlLayer *layer, DlError *err)
{
	static const char *const refused[] = {
		"activity_regularizer", "kernel_constraint", "bias_constraint",
		"lora_rank", "quantization_config"
	};
	DlStatus	st;

	if ((st = get_activation(cfg, layer, err)) != DL_OK ||
		(st = get_bool(cfg, "use_bias", layer, &layer->use_bias, err)) != DL_OK ||
		(st = get_initializer(cfg, "kernel_initializer", layer, &layer->kernel_init, err)) != DL_OK ||
		(st = get_initializer(cfg, "bias_initializer", layer, &layer->bias_init, err)) != DL_OK ||
		(st = get_regularizer(cfg, "kernel_regularizer", layer, &layer->kernel_reg, err)) != DL_OK ||
		(st = get_regularizer(cfg, "bias_regularizer", layer, &layer->bias_reg, err)) != DL_OK)
		return st;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
	{
		if ((st = need_null(cfg, refused[i], layer, err)) != DL_OK)
			return st;
	}
	return DL_OK;
}

/*
 * Refuse key unless it is absent, null or the number want: the one value
 * of an advanced activation's attribute that the plain activation has.
 */
static DlStatus
need_number(json_object *cfg, const char *key, double want, const DlLayer *layer,
			DlError *err)
{
	json_object *v = jget(cfg, key);
	char		text[KERAS_TEXT_MAX];

	if (v == NULL ||
		((json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) &&
		 json_object_get_double(v) == want))
		return DL_OK;
	dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": %s %s is not supported",
				 layer->name, key, value_text(v, text, sizeof(text)));
	return dl_error_hint(err, "Use %s=%g, or an Activation layer.", key, want);
}

/*
 * The advanced activation layers ReLU, Softmax and ELU (class cls), read
 * as Activation layers when their attributes give the plain activation:
 * ReLU with max_value null, negative_slope 0 and threshold 0; Softmax over
 * the last axis (-1, or rank, the last axis counted with the batch); ELU
 * with alpha 1.  rank: rank of the layer's input, without batch.
 */
static DlStatus
read_advanced_activation(const char *cls, json_object *cfg, DlLayer *layer, int rank,
						 DlError *err)
{
	DlStatus	st;

	if (strcmp(cls, "ReLU") == 0)
	{
		layer->activation = DL_ACT_RELU;
		if ((st = need_null(cfg, "max_value", layer, err)) != DL_OK)
			return st;
		if ((st = need_number(cfg, "negative_slope", 0.0, layer, err)) != DL_OK)
			return st;
		return need_number(cfg, "threshold", 0.0, layer, err);
	}
	if (strcmp(cls, "ELU") == 0)
	{
		layer->activation = DL_ACT_ELU;
		return need_number(cfg, "alpha", 1.0, layer, err);
	}
	/* Softmax */
	layer->activation = DL_ACT_SOFTMAX;
	{
		json_object *v = jget(cfg, "axis");
		json_object *a = v;
		int64_t		axis = -1;
		char		text[KERAS_TEXT_MAX];

		if (v != NULL && json_object_is_type(v, json_type_array) &&
			jlen(v) == 1)
			a = jidx(v, 0);
		if (v != NULL && (a == NULL || !json_int64(a, &axis) || (axis != -1 && axis != rank)))
		{
			dl_error_set(err, DL_ERR_UNSUPPORTED,
						 "layer \"%s\": axis %s is not supported, only the last axis (-1)",
						 layer->name, value_text(v, text, sizeof(text)));
			return dl_error_hint(err, "Apply the softmax over the last axis: axis=-1.");
		}
	}
	return DL_OK;
}

/* A required positive count (units, filters). */
static DlStatus
get_required_int(json_object *cfg, const char *key, const DlLayer *layer, int64_t *out,
				 DlError *err)
{
	if (jget(cfg, key) == NULL)
		return dl_error_set(err, DL_ERR_PARSE, "layer \"%s\" (%s) has no \"%s\"",
							layer->name, dl_layer_kind_name(layer->kind), key);
	return get_int(cfg, key, layer, out, err);
}

/*
 * Conv2D: filters, kernel, strides, padding, dilation (with strides 1,
 * which finalize checks); groups 1, channels_last.
 */
static DlStatus
read_conv2d(json_object *cfg, DlLayer *layer, DlError *err)
{
	int64_t		groups = 1;
	DlStatus	st;

	if ((st = get_required_int(cfg, "filters", layer, &layer->filters, err)) != DL_OK)
		return st;
	if (jget(cfg, "kernel_size") == NULL)
		return dl_error_set(err, DL_ERR_PARSE, "layer \"%s\" (Conv2D) has no \"kernel_size\"",
							layer->name);
	if ((st = get_pair(cfg, "kernel_size", layer, layer->kernel_size, err)) != DL_OK ||
		(st = get_pair(cfg, "strides", layer, layer->strides, err)) != DL_OK ||
		(st = get_padding(cfg, layer, &layer->padding, err)) != DL_OK ||
		(st = check_data_format(cfg, layer, err)) != DL_OK ||
		(st = get_pair(cfg, "dilation_rate", layer, layer->dilation, err)) != DL_OK ||
		(st = get_int(cfg, "groups", layer, &groups, err)) != DL_OK)
		return st;
	if (groups != 1)
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": groups %lld is not supported",
					 layer->name, (long long) groups);
		return dl_error_hint(err, "Use groups=1.");
	}
	return read_weighted(cfg, layer, err);
}

/* MaxPooling2D and AveragePooling2D: pool_size, strides (null: pool_size), padding. */
static DlStatus
read_pooling(json_object *cfg, DlLayer *layer, DlError *err)
{
	DlStatus	st;

	if ((st = get_pair(cfg, "pool_size", layer, layer->pool_size, err)) != DL_OK)
		return st;
	/* strides null (or absent) means strides = pool_size */
	layer->strides[0] = layer->pool_size[0];
	layer->strides[1] = layer->pool_size[1];
	if ((st = get_pair(cfg, "strides", layer, layer->strides, err)) != DL_OK ||
		(st = get_padding(cfg, layer, &layer->padding, err)) != DL_OK)
		return st;
	return check_data_format(cfg, layer, err);
}

/*
 * ZeroPadding2D's padding or Cropping2D's cropping (key) into margins
 * (top, bottom, left, right): n for all four, [h, w] for (h, h, w, w),
 * or [[top, bottom], [left, right]]; each in [0, INT_MAX].
 */
static DlStatus
get_margins(json_object *cfg, const char *key, DlLayer *layer, DlError *err)
{
	json_object *v = jget(cfg, key);
	int64_t		m[4];
	char		text[KERAS_TEXT_MAX];
	const char *what = "an integer, a list of two or a list of two pairs of integers";

	if (v == NULL)
		return DL_OK;
	if (json_int64(v, &m[0]))
		m[1] = m[2] = m[3] = m[0];
	else if (jlen(v) != 2)
		return bad_type(layer, key, v, what, err);
	else if (json_int64(jidx(v, 0), &m[0]) && json_int64(jidx(v, 1), &m[2]))
	{
		m[1] = m[0];
		m[3] = m[2];
	}
	else if (!(jlen(jidx(v, 0)) == 2 && jlen(jidx(v, 1)) == 2 &&
			   json_int64(jidx(jidx(v, 0), 0), &m[0]) && json_int64(jidx(jidx(v, 0), 1), &m[1]) &&
			   json_int64(jidx(jidx(v, 1), 0), &m[2]) && json_int64(jidx(jidx(v, 1), 1), &m[3])))
		return bad_type(layer, key, v, what, err);
	for (int k = 0; k < 4; k++)
	{
		if (m[k] < 0 || m[k] > INT_MAX)
			return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
								"layer \"%s\": %s %s must not be negative",
								layer->name, key, value_text(v, text, sizeof(text)));
		layer->margins[k] = (int) m[k];
	}
	return DL_OK;
}

/* UpSampling2D: size, interpolation "nearest" only. */
static DlStatus
read_upsampling(json_object *cfg, DlLayer *layer, DlError *err)
{
	json_object *v = jget(cfg, "interpolation");
	char		text[KERAS_TEXT_MAX];
	DlStatus	st;

	if ((st = get_pair(cfg, "size", layer, layer->size, err)) != DL_OK)
		return st;
	if (v != NULL && !(json_object_is_type(v, json_type_string) &&
					   strcmp(json_object_get_string(v), "nearest") == 0))
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": interpolation %s is not supported",
					 layer->name, value_text(v, text, sizeof(text)));
		return dl_error_hint(err, "Use interpolation=\"nearest\".");
	}
	return check_data_format(cfg, layer, err);
}

/*
 * Concatenate's axis, counted with the batch axis as Keras does: kept as
 * the per-sample axis (axis - 1), or negative from the end; finalize
 * checks it against the inputs' rank.
 */
static DlStatus
read_concatenate(json_object *cfg, DlLayer *layer, DlError *err)
{
	int64_t		axis = -1;
	DlStatus	st;

	if ((st = get_int(cfg, "axis", layer, &axis, err)) != DL_OK)
		return st;
	if (axis == 0 || axis > DL_MAX_RANK || axis < -DL_MAX_RANK)
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": axis %lld is not supported",
					 layer->name, (long long) axis);
		return dl_error_hint(err, "Concatenate along an axis of the samples, not the batch axis 0: "
							 "-1 for the last.");
	}
	layer->concat_axis = axis > 0 ? (int) axis - 1 : (int) axis;
	return DL_OK;
}

/* BatchNormalization.  rank: rank of the layer's input, without batch. */
static DlStatus
read_batchnorm(json_object *cfg, DlLayer *layer, int rank, DlError *err)
{
	static const char *const refused[] = {
		"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint",
		"virtual_batch_size", "adjustment", "renorm_clipping"
	};
	json_object *v = jget(cfg, "axis");
	int64_t		axis = -1;
	char		text[KERAS_TEXT_MAX];
	DlStatus	st;

	if (v != NULL)
	{
		json_object *a = v;

		if (json_object_is_type(v, json_type_array) && jlen(v) == 1)
			a = jidx(v, 0);
		if (json_object_is_type(v, json_type_array) && jlen(v) != 1)
			axis = 0;			/* several axes: refused below */
		else if (!json_int64(a, &axis))
			return bad_type(layer, "axis", v, "an integer", err);
		if (axis != -1 && axis != rank)
		{
			dl_error_set(err, DL_ERR_UNSUPPORTED,
						 "layer \"%s\": axis %s is not supported, only the last axis (-1 or %d)",
						 layer->name, value_text(v, text, sizeof(text)), rank);
			return dl_error_hint(err, "Normalize over the channels (last) axis: axis=-1.");
		}
	}
	if ((st = get_double(cfg, "momentum", layer, &layer->momentum, err)) != DL_OK ||
		(st = get_double(cfg, "epsilon", layer, &layer->epsilon, err)) != DL_OK ||
		(st = get_bool(cfg, "center", layer, &layer->center, err)) != DL_OK ||
		(st = get_bool(cfg, "scale", layer, &layer->scale, err)) != DL_OK ||
		(st = get_initializer(cfg, "beta_initializer", layer, &layer->beta_init, err)) != DL_OK ||
		(st = get_initializer(cfg, "gamma_initializer", layer, &layer->gamma_init, err)) != DL_OK ||
		(st = get_initializer(cfg, "moving_mean_initializer", layer,
							  &layer->moving_mean_init, err)) != DL_OK ||
		(st = get_initializer(cfg, "moving_variance_initializer", layer,
							  &layer->moving_variance_init, err)) != DL_OK ||
		(st = need_false(cfg, "renorm", layer, err)) != DL_OK)
		return st;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
	{
		if ((st = need_null(cfg, refused[i], layer, err)) != DL_OK)
			return st;
	}
	if (!(layer->momentum >= 0.0 && layer->momentum <= 1.0))
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							"layer \"%s\": momentum must be in [0, 1], got %g",
							layer->name, layer->momentum);
	return DL_OK;
}

/* ----------------------------------------------------------------------
 * Layers of text and sequences, and the layers after them (issue 18)
 * ----------------------------------------------------------------------
 */

/*
 * A 1-D window size or stride under key: an integer, or a list of one
 * (TF.js, tf.keras 2), in [1, INT_MAX].  Absent or null keeps *out.
 */
static DlStatus
get_single(json_object *cfg, const char *key, const DlLayer *layer, int *out, DlError *err)
{
	json_object *v = jget(cfg, key);
	int64_t		n;
	char		text[KERAS_TEXT_MAX];

	if (v == NULL)
		return DL_OK;
	if (!(json_int64(v, &n) || (jlen(v) == 1 && json_int64(jidx(v, 0), &n))))
		return bad_type(layer, key, v, "an integer or a list of one integer", err);
	if (n < 1 || n > INT_MAX)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "layer \"%s\": %s %s must be positive",
							layer->name, key, value_text(v, text, sizeof(text)));
	*out = (int) n;
	return DL_OK;
}

/* Refuse each of keys unless absent or null. */
static DlStatus
need_nulls(json_object *cfg, const char *const *keys, size_t n, const DlLayer *layer, DlError *err)
{
	DlStatus	st;

	for (size_t i = 0; i < n; i++)
		if ((st = need_null(cfg, keys[i], layer, err)) != DL_OK)
			return st;
	return DL_OK;
}

/* Refuse key unless absent, null or the number 0 (a dropout rate). */
static DlStatus
need_zero(json_object *cfg, const char *key, const DlLayer *layer, DlError *err)
{
	json_object *v = jget(cfg, key);
	char		text[KERAS_TEXT_MAX];

	if (v == NULL ||
		((json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) &&
		 json_object_get_double(v) == 0.0))
		return DL_OK;
	dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": %s %s is not supported",
				 layer->name, key, value_text(v, text, sizeof(text)));
	return dl_error_hint(err, "Set %s to 0, or put a Dropout layer before the layer.", key);
}

/*
 * Embedding: input_dim, output_dim (kept in units), the embeddings'
 * initializer and regularizer.  mask_zero is refused: masking would have
 * to run through every layer after it.
 */
static DlStatus
read_embedding(json_object *cfg, DlLayer *layer, int *rank, DlError *err)
{
	static const char *const refused[] = {
		"activity_regularizer", "embeddings_constraint", "lora_rank", "quantization_config"
	};
	json_object *mz = jget(cfg, "mask_zero");
	DlStatus	st;

	if ((st = get_required_int(cfg, "input_dim", layer, &layer->input_dim, err)) != DL_OK ||
		(st = get_required_int(cfg, "output_dim", layer, &layer->units, err)) != DL_OK ||
		(st = get_initializer(cfg, "embeddings_initializer", layer, &layer->kernel_init, err)) != DL_OK ||
		(st = get_regularizer(cfg, "embeddings_regularizer", layer, &layer->kernel_reg, err)) != DL_OK ||
		(st = need_false(cfg, "sparse", layer, err)) != DL_OK ||
		(st = need_nulls(cfg, refused, sizeof(refused) / sizeof(refused[0]), layer, err)) != DL_OK)
		return st;
	if (mz != NULL && !(json_object_is_type(mz, json_type_boolean) && !json_object_get_boolean(mz)))
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": mask_zero true is not supported",
					 layer->name);
		return dl_error_hint(err, "Build the Embedding with mask_zero=False: padding ids then count as "
							 "ordinary ids (learn an embedding for id 0, or pad on the left before an RNN).");
	}
	*rank += 1;
	return DL_OK;
}

/* Conv1D: filters, kernel_size, strides, padding (valid, same, causal), dilation_rate. */
static DlStatus
read_conv1d(json_object *cfg, DlLayer *layer, DlError *err)
{
	json_object *pad = jget(cfg, "padding");
	int64_t		groups = 1;
	DlStatus	st;

	if ((st = get_required_int(cfg, "filters", layer, &layer->filters, err)) != DL_OK)
		return st;
	if (jget(cfg, "kernel_size") == NULL)
		return dl_error_set(err, DL_ERR_PARSE, "layer \"%s\" (Conv1D) has no \"kernel_size\"",
							layer->name);
	if ((st = get_single(cfg, "kernel_size", layer, &layer->kernel_size[1], err)) != DL_OK ||
		(st = get_single(cfg, "strides", layer, &layer->strides[1], err)) != DL_OK ||
		(st = get_single(cfg, "dilation_rate", layer, &layer->dilation[1], err)) != DL_OK ||
		(st = check_data_format(cfg, layer, err)) != DL_OK ||
		(st = get_int(cfg, "groups", layer, &groups, err)) != DL_OK)
		return st;
	if (pad != NULL && json_object_is_type(pad, json_type_string) &&
		strcasecmp(json_object_get_string(pad), "causal") == 0)
		layer->padding = DL_PADDING_CAUSAL;
	else if ((st = get_padding(cfg, layer, &layer->padding, err)) != DL_OK)
		return st;
	if (groups != 1)
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": groups %lld is not supported",
					 layer->name, (long long) groups);
		return dl_error_hint(err, "Use groups=1.");
	}
	return read_weighted(cfg, layer, err);
}

/* MaxPooling1D, AveragePooling1D: pool_size, strides (null: pool_size), padding. */
static DlStatus
read_pooling1d(json_object *cfg, DlLayer *layer, DlError *err)
{
	DlStatus	st;

	layer->pool_size[0] = layer->strides[0] = 1;
	if ((st = get_single(cfg, "pool_size", layer, &layer->pool_size[1], err)) != DL_OK)
		return st;
	layer->strides[1] = layer->pool_size[1];
	if ((st = get_single(cfg, "strides", layer, &layer->strides[1], err)) != DL_OK ||
		(st = get_padding(cfg, layer, &layer->padding, err)) != DL_OK)
		return st;
	return check_data_format(cfg, layer, err);
}

/*
 * The activations of a recurrent layer: the backward pass through time
 * keeps each step's outputs, so each derivative must come from its
 * output (not swish, gelu) and act on single values (not softmax).
 */
static DlStatus
check_recurrent_activation(const DlLayer *layer, const char *key, DlActivation act,
						   DlError *err)
{
	if (act != DL_ACT_SOFTMAX && !dl_activation_needs_input(act))
		return DL_OK;
	dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\" (%s): %s \"%s\" is not supported",
				 layer->name, dl_layer_kind_name(layer->kind), key, dl_activation_name(act));
	return dl_error_hint(err, "Use tanh, sigmoid, hard_sigmoid, relu or another element-wise "
						 "activation whose derivative follows from its output.");
}

/*
 * LSTM, GRU, SimpleRNN: units, the two activations, use_bias, the three
 * initializers and regularizers, return_sequences, go_backwards,
 * reset_after (GRU), unit_forget_bias (LSTM).  Refused: dropout,
 * return_state, stateful, time_major, constraints.
 */
static DlStatus
read_recurrent(json_object *cfg, DlLayer *layer, int *rank, DlError *err)
{
	static const char *const refused[] = {
		"activity_regularizer", "kernel_constraint", "recurrent_constraint", "bias_constraint"
	};
	json_object *ufb = jget(cfg, "unit_forget_bias");
	DlStatus	st;

	if ((st = get_required_int(cfg, "units", layer, &layer->units, err)) != DL_OK ||
		(st = get_activation(cfg, layer, err)) != DL_OK ||
		(st = get_activation_key(cfg, "recurrent_activation", layer, &layer->recurrent_activation,
								 err)) != DL_OK ||
		(st = get_bool(cfg, "use_bias", layer, &layer->use_bias, err)) != DL_OK ||
		(st = get_initializer(cfg, "kernel_initializer", layer, &layer->kernel_init, err)) != DL_OK ||
		(st = get_initializer(cfg, "recurrent_initializer", layer, &layer->recurrent_init, err)) != DL_OK ||
		(st = get_initializer(cfg, "bias_initializer", layer, &layer->bias_init, err)) != DL_OK ||
		(st = get_regularizer(cfg, "kernel_regularizer", layer, &layer->kernel_reg, err)) != DL_OK ||
		(st = get_regularizer(cfg, "recurrent_regularizer", layer, &layer->recurrent_reg, err)) != DL_OK ||
		(st = get_regularizer(cfg, "bias_regularizer", layer, &layer->bias_reg, err)) != DL_OK ||
		(st = get_bool(cfg, "return_sequences", layer, &layer->return_sequences, err)) != DL_OK ||
		(st = get_bool(cfg, "go_backwards", layer, &layer->go_backwards, err)) != DL_OK ||
		(st = need_false(cfg, "return_state", layer, err)) != DL_OK ||
		(st = need_false(cfg, "stateful", layer, err)) != DL_OK ||
		(st = need_false(cfg, "time_major", layer, err)) != DL_OK ||
		(st = need_zero(cfg, "dropout", layer, err)) != DL_OK ||
		(st = need_zero(cfg, "recurrent_dropout", layer, err)) != DL_OK ||
		(st = need_nulls(cfg, refused, sizeof(refused) / sizeof(refused[0]), layer, err)) != DL_OK)
		return st;
	if (layer->kind != DL_LAYER_SIMPLERNN &&
		(st = check_recurrent_activation(layer, "recurrent_activation", layer->recurrent_activation,
										 err)) != DL_OK)
		return st;
	if ((st = check_recurrent_activation(layer, "activation", layer->activation, err)) != DL_OK)
		return st;
	/* reset_after: absent in Keras 2.2's and TF.js' GRU, whose formula is reset_after=False */
	layer->reset_after = false;
	if (layer->kind == DL_LAYER_GRU &&
		(st = get_bool(cfg, "reset_after", layer, &layer->reset_after, err)) != DL_OK)
		return st;
	/* unit_forget_bias: Keras writes true or false; TF.js null, which means false */
	if (layer->kind == DL_LAYER_LSTM)
	{
		if (ufb == NULL && json_object_object_get_ex(cfg, "unit_forget_bias", NULL))
			layer->unit_forget_bias = false;
		else if ((st = get_bool(cfg, "unit_forget_bias", layer, &layer->unit_forget_bias, err)) != DL_OK)
			return st;
	}
	*rank = layer->return_sequences ? 2 : 1;
	return DL_OK;
}

/*
 * Bidirectional(layer): a recurrent layer run over the steps in both
 * directions, the two outputs merged (merge_mode concat, sum, ave, mul).
 * The wrapped layer's config gives the attributes; a backward_layer
 * (Keras 3 always writes one) must be the same layer reading backwards.
 * name: the Bidirectional layer's, which the spec keeps.
 */
static DlStatus
read_bidirectional(json_object *cfg, const char *name, DlLayer *layer, int *rank, DlError *err)
{
	json_object *inner = jget(cfg, "layer");
	json_object *back = jget(cfg, "backward_layer");
	json_object *mm = jget(cfg, "merge_mode");
	const char *cls = jget_str(inner, "class_name");
	char		text[KERAS_TEXT_MAX];
	DlLayerKind kind;
	DlStatus	st;

	copy_clipped(layer->name, sizeof(layer->name), name);
	if (cls == NULL || !json_object_is_type(jget(inner, "config"), json_type_object))
		return dl_error_set(err, DL_ERR_PARSE, "layer \"%s\" (Bidirectional) has no \"layer\" with a "
							"class_name and a config", layer->name);
	if (strcmp(cls, "LSTM") == 0)
		kind = DL_LAYER_LSTM;
	else if (strcmp(cls, "GRU") == 0)
		kind = DL_LAYER_GRU;
	else if (strcmp(cls, "SimpleRNN") == 0)
		kind = DL_LAYER_SIMPLERNN;
	else
	{
		copy_clipped(text, sizeof(text), cls);
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\" (Bidirectional): layer \"%s\" is not supported",
					 layer->name, text);
		return dl_error_hint(err, "Wrap an LSTM, a GRU or a SimpleRNN.");
	}
	dl_layer_defaults(layer, kind);
	copy_clipped(layer->name, sizeof(layer->name), name);
	if ((st = get_bool(cfg, "trainable", layer, &layer->trainable, err)) != DL_OK ||
		(st = read_recurrent(jget(inner, "config"), layer, rank, err)) != DL_OK)
		return st;
	if (layer->go_backwards)
		return need_false(jget(inner, "config"), "go_backwards", layer, err);
	layer->bidir = DL_BIDIR_CONCAT;
	if (json_object_object_get_ex(cfg, "merge_mode", NULL) &&
		!(mm != NULL && json_object_is_type(mm, json_type_string)))
		layer->bidir = DL_BIDIR_NONE;
	else if (mm != NULL && strcmp(json_object_get_string(mm), "sum") == 0)
		layer->bidir = DL_BIDIR_SUM;
	else if (mm != NULL && strcmp(json_object_get_string(mm), "ave") == 0)
		layer->bidir = DL_BIDIR_AVE;
	else if (mm != NULL && strcmp(json_object_get_string(mm), "mul") == 0)
		layer->bidir = DL_BIDIR_MUL;
	else if (mm != NULL && strcmp(json_object_get_string(mm), "concat") != 0)
		layer->bidir = DL_BIDIR_NONE;
	if (layer->bidir == DL_BIDIR_NONE)
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\" (Bidirectional): merge_mode %s is not supported",
					 layer->name, value_text(mm, text, sizeof(text)));
		return dl_error_hint(err, "Use merge_mode \"concat\", \"sum\", \"ave\" or \"mul\".");
	}
	if (back != NULL)
	{
		/* the backward layer: the same attributes, reading backwards */
		DlLayer		b;
		int			brank = 2;
		const char *bcls = jget_str(back, "class_name");

		dl_layer_defaults(&b, kind);
		copy_clipped(b.name, sizeof(b.name), layer->name);
		if (bcls == NULL || strcmp(bcls, cls) != 0 ||
			read_recurrent(jget(back, "config"), &b, &brank, err) != DL_OK ||
			!b.go_backwards || b.units != layer->units || b.activation != layer->activation ||
			b.recurrent_activation != layer->recurrent_activation || b.use_bias != layer->use_bias ||
			b.reset_after != layer->reset_after || b.return_sequences != layer->return_sequences)
		{
			dl_error_set(err, DL_ERR_UNSUPPORTED,
						 "layer \"%s\" (Bidirectional): a backward_layer other than the layer reading "
						 "backwards is not supported", layer->name);
			return dl_error_hint(err, "Leave backward_layer out, or give the same layer with go_backwards=True.");
		}
	}
	return DL_OK;
}

/*
 * DepthwiseConv2D and SeparableConv2D: kernel_size, strides, padding,
 * dilation_rate, depth_multiplier, activation, use_bias; the depthwise
 * (and pointwise) kernels' initializers and regularizers.
 */
static DlStatus
read_depthwise(json_object *cfg, DlLayer *layer, DlError *err)
{
	static const char *const refused[] = {
		"activity_regularizer", "depthwise_constraint", "pointwise_constraint", "bias_constraint"
	};
	bool		sep = layer->kind == DL_LAYER_SEPARABLECONV2D;
	DlStatus	st;

	if (sep && (st = get_required_int(cfg, "filters", layer, &layer->filters, err)) != DL_OK)
		return st;
	if (jget(cfg, "kernel_size") == NULL)
		return dl_error_set(err, DL_ERR_PARSE, "layer \"%s\" (%s) has no \"kernel_size\"",
							layer->name, dl_layer_kind_name(layer->kind));
	if ((st = get_pair(cfg, "kernel_size", layer, layer->kernel_size, err)) != DL_OK ||
		(st = get_pair(cfg, "strides", layer, layer->strides, err)) != DL_OK ||
		(st = get_padding(cfg, layer, &layer->padding, err)) != DL_OK ||
		(st = check_data_format(cfg, layer, err)) != DL_OK ||
		(st = get_pair(cfg, "dilation_rate", layer, layer->dilation, err)) != DL_OK ||
		(st = get_int(cfg, "depth_multiplier", layer, &layer->depth_multiplier, err)) != DL_OK ||
		(st = get_activation(cfg, layer, err)) != DL_OK ||
		(st = get_bool(cfg, "use_bias", layer, &layer->use_bias, err)) != DL_OK ||
		(st = get_initializer(cfg, "depthwise_initializer", layer, &layer->kernel_init, err)) != DL_OK ||
		(st = get_initializer(cfg, "bias_initializer", layer, &layer->bias_init, err)) != DL_OK ||
		(st = get_regularizer(cfg, "depthwise_regularizer", layer, &layer->kernel_reg, err)) != DL_OK ||
		(st = get_regularizer(cfg, "bias_regularizer", layer, &layer->bias_reg, err)) != DL_OK ||
		(st = need_nulls(cfg, refused, sizeof(refused) / sizeof(refused[0]), layer, err)) != DL_OK)
		return st;
	if (!sep)
		return DL_OK;
	if ((st = get_initializer(cfg, "pointwise_initializer", layer, &layer->pointwise_init, err)) != DL_OK)
		return st;
	return get_regularizer(cfg, "pointwise_regularizer", layer, &layer->pointwise_reg, err);
}

/*
 * LayerNormalization over the last axis (-1, rank, or a list of it):
 * epsilon, center, scale, gamma and beta initializers.  rank: of the
 * input, without batch.
 */
static DlStatus
read_layernorm(json_object *cfg, DlLayer *layer, int rank, DlError *err)
{
	static const char *const refused[] = {
		"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"
	};
	json_object *v = jget(cfg, "axis");
	json_object *a = v;
	int64_t		axis = -1;
	char		text[KERAS_TEXT_MAX];
	DlStatus	st;

	if (v != NULL && jlen(v) == 1)
		a = jidx(v, 0);
	if (v != NULL && (!json_int64(a, &axis) || (axis != -1 && axis != rank)))
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED,
					 "layer \"%s\": axis %s is not supported, only the last axis (-1 or %d)",
					 layer->name, value_text(v, text, sizeof(text)), rank);
		return dl_error_hint(err, "Normalize over the last axis: axis=-1.");
	}
	layer->epsilon = 1e-3;
	if ((st = get_double(cfg, "epsilon", layer, &layer->epsilon, err)) != DL_OK ||
		(st = get_bool(cfg, "center", layer, &layer->center, err)) != DL_OK ||
		(st = get_bool(cfg, "scale", layer, &layer->scale, err)) != DL_OK ||
		(st = get_initializer(cfg, "beta_initializer", layer, &layer->beta_init, err)) != DL_OK ||
		(st = get_initializer(cfg, "gamma_initializer", layer, &layer->gamma_init, err)) != DL_OK ||
		(st = need_false(cfg, "rms_scaling", layer, err)) != DL_OK)
		return st;
	return need_nulls(cfg, refused, sizeof(refused) / sizeof(refused[0]), layer, err);
}

/*
 * ReLU with its arguments (max_value, negative_slope, threshold) and
 * LeakyReLU (alpha, or Keras 3's negative_slope; 0.3 by default).  A ReLU
 * with the default arguments stays a plain relu Activation (the kind
 * table's), as before.
 */
static DlStatus
read_relu_args(const char *cls, json_object *cfg, DlLayer *layer, DlError *err)
{
	json_object *mv = jget(cfg, "max_value");
	DlStatus	st;

	layer->kind = DL_LAYER_RELU;
	layer->negative_slope = strcmp(cls, "LeakyReLU") == 0 ? 0.3 : 0.0;
	if ((st = get_double(cfg, "alpha", layer, &layer->negative_slope, err)) != DL_OK ||
		(st = get_double(cfg, "negative_slope", layer, &layer->negative_slope, err)) != DL_OK)
		return st;
	if (strcmp(cls, "LeakyReLU") == 0)
		return DL_OK;
	if (mv != NULL)
	{
		layer->has_max_value = true;
		if ((st = get_double(cfg, "max_value", layer, &layer->max_value, err)) != DL_OK)
			return st;
	}
	if ((st = get_double(cfg, "threshold", layer, &layer->threshold, err)) != DL_OK)
		return st;
	if (!layer->has_max_value && layer->negative_slope == 0.0 && layer->threshold == 0.0)
	{
		/* the plain relu: an Activation, fused where the engine fuses it */
		layer->kind = DL_LAYER_ACTIVATION;
		layer->activation = DL_ACT_RELU;
	}
	return DL_OK;
}

/* PReLU: alpha's initializer and regularizer, shared_axes (counted with the batch axis). */
static DlStatus
read_prelu(json_object *cfg, DlLayer *layer, int rank, DlError *err)
{
	json_object *v = jget(cfg, "shared_axes");
	char		text[KERAS_TEXT_MAX];
	DlStatus	st;

	if ((st = get_initializer(cfg, "alpha_initializer", layer, &layer->kernel_init, err)) != DL_OK ||
		(st = get_regularizer(cfg, "alpha_regularizer", layer, &layer->kernel_reg, err)) != DL_OK ||
		(st = need_null(cfg, "alpha_constraint", layer, err)) != DL_OK)
		return st;
	if (v == NULL)
		return DL_OK;
	for (size_t i = 0; i < (json_object_is_type(v, json_type_array) ? jlen(v) : 1); i++)
	{
		int64_t		a;

		if (!json_int64(json_object_is_type(v, json_type_array) ? jidx(v, i) : v, &a))
			return bad_type(layer, "shared_axes", v, "an integer or a list of integers", err);
		if (a < 1 || a > rank)
		{
			dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": shared_axes %s is not supported",
						 layer->name, value_text(v, text, sizeof(text)));
			return dl_error_hint(err, "Name axes of the sample, 1 to %d.", rank);
		}
		layer->shared_axes |= 1u << (a - 1);
	}
	return DL_OK;
}

/*
 * A list of at most DL_MAX_RANK integers under key (Reshape's
 * target_shape, Permute's dims) into v[], its length into *n.
 */
static DlStatus
get_int_list(json_object *cfg, const char *key, const DlLayer *layer, int64_t *v, int *n,
			 DlError *err)
{
	json_object *a = jget(cfg, key);
	char		text[KERAS_TEXT_MAX];

	if (a == NULL)
		return dl_error_set(err, DL_ERR_PARSE, "layer \"%s\" (%s) has no \"%s\"",
							layer->name, dl_layer_kind_name(layer->kind), key);
	if (!json_object_is_type(a, json_type_array) || jlen(a) < 1)
		return bad_type(layer, key, a, "a list of integers", err);
	if (jlen(a) > DL_MAX_RANK)
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": %s %s has more than %d dimensions",
					 layer->name, key, value_text(a, text, sizeof(text)), DL_MAX_RANK);
		return dl_error_hint(err, "Use at most %d dimensions per sample.", DL_MAX_RANK);
	}
	for (size_t i = 0; i < jlen(a); i++)
		if (!json_int64(jidx(a, i), &v[i]) || v[i] < -1 || v[i] > ((int64_t) 1 << 40))
			return bad_type(layer, key, a, "a list of integers", err);
	*n = (int) jlen(a);
	return DL_OK;
}

/* Reshape (target_shape), Permute (dims, 1-based), RepeatVector (n). */
static DlStatus
read_shape_layer(json_object *cfg, DlLayer *layer, int *rank, DlError *err)
{
	int64_t		v[DL_MAX_RANK];
	int			n;
	DlStatus	st;

	switch (layer->kind)
	{
		case DL_LAYER_RESHAPE:
			if ((st = get_int_list(cfg, "target_shape", layer, v, &n, err)) != DL_OK)
				return st;
			layer->target_shape.rank = n;
			for (int d = 0; d < n; d++)
				layer->target_shape.dims[d] = v[d];
			*rank = n;
			return DL_OK;
		case DL_LAYER_PERMUTE:
			if ((st = get_int_list(cfg, "dims", layer, v, &n, err)) != DL_OK)
				return st;
			for (int d = 0; d < n; d++)
				layer->perm[d] = v[d] >= 1 && v[d] <= DL_MAX_RANK ? (int) v[d] - 1 : DL_MAX_RANK;
			return DL_OK;
		default:
			if (jget(cfg, "n") == NULL)
				return dl_error_set(err, DL_ERR_PARSE, "layer \"%s\" (RepeatVector) has no \"n\"",
									layer->name);
			*rank = 2;
			return get_int(cfg, "n", layer, &layer->repeat_n, err);
	}
}

/*
 * Translate one Keras layer (class cls, config cfg) into *layer.  name is
 * the layer's name; *rank is the rank of its input (without batch) and is
 * updated to the rank of its output.
 */
static DlStatus
read_layer_config(const char *cls, const char *name, json_object *cfg, DlLayer *layer,
				  int *rank, DlError *err)
{
	size_t		i;
	DlStatus	st;

	for (i = 0; i < sizeof(keras_layer_classes) / sizeof(keras_layer_classes[0]); i++)
	{
		if (strcmp(cls, keras_layer_classes[i].class_name) == 0)
			break;
	}
	if (i == sizeof(keras_layer_classes) / sizeof(keras_layer_classes[0]))
	{
		char		namebuf[KERAS_TEXT_MAX];
		char		clsbuf[KERAS_TEXT_MAX];

		copy_clipped(namebuf, sizeof(namebuf), name);
		copy_clipped(clsbuf, sizeof(clsbuf), cls);
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\" has unsupported type \"%s\"",
					 namebuf, clsbuf);
		return dl_error_hint(err, "%s", hint_layers);
	}
	dl_layer_defaults(layer, keras_layer_classes[i].kind);
	copy_clipped(layer->name, sizeof(layer->name), name);
	if ((st = get_bool(cfg, "trainable", layer, &layer->trainable, err)) != DL_OK)
		return st;

	switch (layer->kind)
	{
		case DL_LAYER_DENSE:
			if ((st = get_required_int(cfg, "units", layer, &layer->units, err)) != DL_OK)
				return st;
			return read_weighted(cfg, layer, err);
		case DL_LAYER_CONV2D:
			return read_conv2d(cfg, layer, err);
		case DL_LAYER_MAXPOOL2D:
		case DL_LAYER_AVGPOOL2D:
			return read_pooling(cfg, layer, err);
		case DL_LAYER_GLOBALAVGPOOL2D:
		case DL_LAYER_GLOBALMAXPOOL2D:
			*rank = 1;
			if ((st = need_false(cfg, "keepdims", layer, err)) != DL_OK)
				return st;
			return check_data_format(cfg, layer, err);
		case DL_LAYER_ZEROPADDING2D:
			layer->margins[0] = layer->margins[1] = layer->margins[2] = layer->margins[3] = 1;
			if ((st = get_margins(cfg, "padding", layer, err)) != DL_OK)
				return st;
			return check_data_format(cfg, layer, err);
		case DL_LAYER_CROPPING2D:
			if ((st = get_margins(cfg, "cropping", layer, err)) != DL_OK)
				return st;
			return check_data_format(cfg, layer, err);
		case DL_LAYER_UPSAMPLING2D:
			return read_upsampling(cfg, layer, err);
		case DL_LAYER_ADD:
		case DL_LAYER_SUBTRACT:
		case DL_LAYER_MULTIPLY:
		case DL_LAYER_AVERAGE:
		case DL_LAYER_MAXIMUM:
		case DL_LAYER_MINIMUM:
			return DL_OK;
		case DL_LAYER_CONCATENATE:
			return read_concatenate(cfg, layer, err);
		case DL_LAYER_FLATTEN:
			*rank = 1;
			return check_data_format(cfg, layer, err);
		case DL_LAYER_DROPOUT:
			if (jget(cfg, "rate") == NULL)
				return dl_error_set(err, DL_ERR_PARSE, "layer \"%s\" (Dropout) has no \"rate\"",
									layer->name);
			if ((st = get_double(cfg, "rate", layer, &layer->rate, err)) != DL_OK ||
				(st = get_seed(cfg, layer, "dropout", &layer->has_seed, &layer->seed, err)) != DL_OK)
				return st;
			return need_null(cfg, "noise_shape", layer, err);
		case DL_LAYER_ACTIVATION:
			if (strcmp(cls, "ReLU") == 0)
				return read_relu_args(cls, cfg, layer, err);
			if (strcmp(cls, "Activation") != 0)
				return read_advanced_activation(cls, cfg, layer, *rank, err);
			return get_activation(cfg, layer, err);
		case DL_LAYER_BATCHNORM:
			return read_batchnorm(cfg, layer, *rank, err);
		case DL_LAYER_EMBEDDING:
			return read_embedding(cfg, layer, rank, err);
		case DL_LAYER_CONV1D:
			return read_conv1d(cfg, layer, err);
		case DL_LAYER_MAXPOOL1D:
		case DL_LAYER_AVGPOOL1D:
			return read_pooling1d(cfg, layer, err);
		case DL_LAYER_GLOBALMAXPOOL1D:
		case DL_LAYER_GLOBALAVGPOOL1D:
			*rank = 1;
			if ((st = need_false(cfg, "keepdims", layer, err)) != DL_OK)
				return st;
			return check_data_format(cfg, layer, err);
		case DL_LAYER_LSTM:
		case DL_LAYER_GRU:
		case DL_LAYER_SIMPLERNN:
			if (strcmp(cls, "Bidirectional") == 0)
				return read_bidirectional(cfg, name, layer, rank, err);
			return read_recurrent(cfg, layer, rank, err);
		case DL_LAYER_DEPTHWISECONV2D:
		case DL_LAYER_SEPARABLECONV2D:
			return read_depthwise(cfg, layer, err);
		case DL_LAYER_LAYERNORM:
			return read_layernorm(cfg, layer, *rank, err);
		case DL_LAYER_RELU:
			return read_relu_args(cls, cfg, layer, err);
		case DL_LAYER_PRELU:
			return read_prelu(cfg, layer, *rank, err);
		case DL_LAYER_RESHAPE:
		case DL_LAYER_PERMUTE:
		case DL_LAYER_REPEATVECTOR:
			return read_shape_layer(cfg, layer, rank, err);
	}
	return dl_error_set(err, DL_ERR_INTERNAL, "layer \"%s\": unhandled kind %d", layer->name,
						(int) layer->kind);
}

/*
 * read_layer_config, then what depends on the dialect: Keras 3 (keras3)
 * defines hard_sigmoid as relu6(x + 3) / 6, tf.keras 2, Keras 2.2 and
 * TF.js as clip(0.2 x + 0.5, 0, 1).
 */
static DlStatus
read_layer(const char *cls, const char *name, json_object *cfg, DlLayer *layer, int *rank,
		   bool keras3, DlError *err)
{
	DlStatus	st = read_layer_config(cls, name, cfg, layer, rank, err);

	if (st == DL_OK && keras3)
	{
		if (layer->activation == DL_ACT_HARD_SIGMOID)
			layer->activation = DL_ACT_HARD_SIGMOID_K3;
		if (layer->recurrent_activation == DL_ACT_HARD_SIGMOID)
			layer->recurrent_activation = DL_ACT_HARD_SIGMOID_K3;
	}
	return st;
}

/* ----------------------------------------------------------------------
 * Model structure
 * ----------------------------------------------------------------------
 */

/* The layer's name: its config's, else the functional entry's, else "". */
static const char *
layer_name(json_object *entry)
{
	const char *name = jget_str(jget(entry, "config"), "name");

	if (name == NULL)
		name = jget_str(entry, "name");
	return name != NULL ? name : "";
}

/* Check that entry i of the layer list has a class_name and a config. */
static DlStatus
check_entry(json_object *entry, size_t i, DlError *err)
{
	json_object *cfg = jget(entry, "config");

	if (entry == NULL || !json_object_is_type(entry, json_type_object))
		return dl_error_set(err, DL_ERR_PARSE, "layer %zu of the model is not an object", i + 1);
	if (jget_str(entry, "class_name") == NULL)
		return dl_error_set(err, DL_ERR_PARSE, "layer %zu of the model has no \"class_name\"", i + 1);
	if (cfg == NULL || !json_object_is_type(cfg, json_type_object))
	{
		char		name[KERAS_TEXT_MAX];
		char		cls[KERAS_TEXT_MAX];

		copy_clipped(name, sizeof(name), layer_name(entry));
		copy_clipped(cls, sizeof(cls), jget_str(entry, "class_name"));
		return dl_error_set(err, DL_ERR_PARSE, "layer %zu (\"%s\", %s) of the model has no \"config\"",
							i + 1, name, cls);
	}
	return DL_OK;
}

/*
 * Read a shape list into *shape.  with_batch: the list starts with the
 * batch dimension, which is dropped.  who and key name the source.
 */
static DlStatus
read_shape(json_object *v, bool with_batch, const char *who, const char *key, DlShape *shape,
		   DlError *err)
{
	char		text[KERAS_TEXT_MAX];
	size_t		n;
	size_t		first = with_batch ? 1 : 0;

	if (!json_object_is_type(v, json_type_array))
		return dl_error_set(err, DL_ERR_PARSE, "%s: %s must be a list, got %s",
							who, key, value_text(v, text, sizeof(text)));
	n = jlen(v);
	if (n <= first)
	{
		dl_error_set(err, DL_ERR_SHAPE, "%s: %s %s has no dimensions per sample",
					 who, key, value_text(v, text, sizeof(text)));
		return dl_error_hint(err, "Give the input at least one dimension besides the batch.");
	}
	if (n - first > DL_MAX_RANK)
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "%s: %s %s has %zu dimensions per sample, more than %d",
					 who, key, value_text(v, text, sizeof(text)), n - first, DL_MAX_RANK);
		return dl_error_hint(err, "Reshape the input to at most %d dimensions per sample.", DL_MAX_RANK);
	}
	memset(shape, 0, sizeof(*shape));
	shape->rank = (int) (n - first);
	for (size_t i = first; i < n; i++)
	{
		json_object *d = jidx(v, i);
		int64_t		dim;

		if (d == NULL)
		{
			dl_error_set(err, DL_ERR_SHAPE, "%s: %s %s has an unknown (null) dimension %zu",
						 who, key, value_text(v, text, sizeof(text)), i);
			return dl_error_hint(err, "Give every dimension except the batch dimension a fixed size; "
								 "predict_byom binds a variable input shape from the rows.");
		}
		if (!json_int64(d, &dim) || dim < 1)
			return dl_error_set(err, DL_ERR_SHAPE, "%s: %s %s has an invalid dimension %s",
								who, key, value_text(v, text, sizeof(text)), json_plain(d));
		shape->dims[i - first] = dim;
	}
	return DL_OK;
}

/*
 * Find the model's input shape: the first layer's (InputLayer or not)
 * batch_input_shape / batch_shape, its Keras 3 build_config, the model's
 * build_config or build_input_shape, or the first layer's input_shape.
 */
static DlStatus
find_input_shape(json_object *model, json_object *first, DlShape *shape, DlError *err)
{
	json_object *cfg = jget(first, "config");
	json_object *model_cfg = jget(model, "config");
	char		who[DL_NAME_MAX + 16];
	json_object *v;

	snprintf(who, sizeof(who), "layer \"%.100s\"", layer_name(first));
	if ((v = jget(cfg, "batch_input_shape")) != NULL)
		return read_shape(v, true, who, "batch_input_shape", shape, err);
	if ((v = jget(cfg, "batch_shape")) != NULL)
		return read_shape(v, true, who, "batch_shape", shape, err);
	if ((v = jget(jget(first, "build_config"), "input_shape")) != NULL)
		return read_shape(v, true, who, "build_config input_shape", shape, err);
	if ((v = jget(jget(model, "build_config"), "input_shape")) != NULL)
		return read_shape(v, true, "model", "build_config input_shape", shape, err);
	if ((v = jget(model_cfg, "build_input_shape")) != NULL)
		return read_shape(v, true, "model", "build_input_shape", shape, err);
	if ((v = jget(cfg, "input_shape")) != NULL)
		return read_shape(v, false, who, "input_shape", shape, err);
	dl_error_set(err, DL_ERR_SHAPE, "model has no input shape");
	return dl_error_hint(err, "Give the first layer an input shape (input_shape in Python), "
						 "or start the model with an InputLayer.");
}

/*
 * The model object: the root, or the Keras model inside a TF.js model.json
 * ("modelTopology") or an HDF5-style wrapper ("model_config").
 */
static json_object *
unwrap_model(json_object *root)
{
	for (int i = 0; i < 2 && root != NULL && jget(root, "class_name") == NULL; i++)
	{
		if (jget(root, "modelTopology") != NULL)
			root = jget(root, "modelTopology");
		else if (jget(root, "model_config") != NULL)
			root = jget(root, "model_config");
		else
			break;
	}
	return root;
}

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

	copy_clipped(name, sizeof(name), who);
	dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\" %s", name, what);
	return dl_error_hint(err, "%s", hint_graph);
}

/*
 * Read v as a reference [name, node_index, tensor_index, ...] into *ref.
 * false when v is not one (a list not starting with a name).
 */
static bool
read_ref_list(json_object *v, KerasRef *ref)
{
	json_object *first = jidx(v, 0);

	if (jlen(v) < 3 || first == NULL || !json_object_is_type(first, json_type_string))
		return false;
	ref->name = json_object_get_string(first);
	if (!json_int64(jidx(v, 1), &ref->node_index) || !json_int64(jidx(v, 2), &ref->tensor_index))
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
		for (size_t i = 0; i < jlen(v); i++)
		{
			DlStatus	st = collect_refs(jidx(v, i), node, refs, err);

			if (st != DL_OK)
				return st;
		}
		return DL_OK;
	}
	if (!json_object_is_type(v, json_type_object))
		return DL_OK;
	if (jget_str(v, "class_name") != NULL && strcmp(jget_str(v, "class_name"), "__keras_tensor__") == 0)
	{
		if (!read_ref_list(jget(jget(v, "config"), "keras_history"), &ref))
		{
			char		text[KERAS_TEXT_MAX];

			copy_clipped(text, sizeof(text), node->name);
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

		copy_clipped(text, sizeof(text), node->name);
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
		copy_clipped(name, sizeof(name), who);
		snprintf(reader, sizeof(reader), "layer \"%s\"", name);
	}
	else
		snprintf(reader, sizeof(reader), "the model's input or output list");
	copy_clipped(name, sizeof(name), ref->name);
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
	json_object *v = jget(model_cfg, key);
	char		text[KERAS_TEXT_MAX];

	*n = 0;
	if (v == NULL)
		return dl_error_set(err, DL_ERR_PARSE, "functional model has no \"%s\"", key);
	if (read_ref_list(v, &refs[0]))
	{
		*n = 1;
		return DL_OK;
	}
	if (jlen(v) == 0 || jlen(v) > DL_MAX_IO)
	{
		dl_error_set(err, jlen(v) == 0 ? DL_ERR_UNSUPPORTED : DL_ERR_LIMIT,
					 "model %s %s: between 1 and %d are supported",
					 key, value_text(v, text, sizeof(text)), DL_MAX_IO);
		return dl_error_hint(err, "%s", hint_graph);
	}
	for (size_t i = 0; i < jlen(v); i++)
	{
		if (!read_ref_list(jidx(v, i), &refs[i]))
		{
			dl_error_set(err, DL_ERR_UNSUPPORTED, "model %s %s is not supported",
						 key, value_text(v, text, sizeof(text)));
			return dl_error_hint(err, "%s", hint_graph);
		}
	}
	*n = (int) jlen(v);
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

		node->layer = jidx(layers, (size_t) i);
		node->name = jget_str(node->layer, "name");
		if (node->name == NULL)
			node->name = layer_name(node->layer);
		node->is_input = strcmp(jget_str(node->layer, "class_name"), "InputLayer") == 0;
		node->input_no = -1;
		node->spec_index = -1;
		inbound = jget(node->layer, "inbound_nodes");
		node->n_calls = (int) jlen(inbound);
		if (node->n_calls > 1 && !node->is_input)
		{
			char		text[KERAS_TEXT_MAX];

			copy_clipped(text, sizeof(text), node->name);
			dl_error_set(err, DL_ERR_UNSUPPORTED,
						 "layer \"%s\" is called %d times (a shared layer); shared layers are not "
						 "supported", text, node->n_calls);
			return dl_error_hint(err, "Give each call a layer of its own (weights are then not shared).");
		}
		/* count first, so that refs is allocated once */
		node->first_ref = g->cap_refs;
		if (!node->is_input && (st = collect_refs(jidx(inbound, 0), node, NULL, err)) != DL_OK)
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

			copy_clipped(text, sizeof(text), g->names[i].name);
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
			(st = collect_refs(jidx(jget(node->layer, "inbound_nodes"), 0), node, g->refs, err)) != DL_OK)
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
static DlStatus
refuse_multi_io(const DlModelSpec *spec, DlError *err)
{
	bool		inputs = spec->n_inputs > 1;
	int			n = inputs ? spec->n_inputs : spec->n_outputs;
	char		text[KERAS_TEXT_MAX];

	text[0] = '\0';
	for (int k = 0; k < n; k++)
	{
		text_append(text, sizeof(text), k == 0 ? "(\"" : ", \"");
		text_append(text, sizeof(text),
					inputs ? spec->input_names[k] : spec->layers[spec->outputs[k]].name);
		text_append(text, sizeof(text), "\"");
	}
	text_append(text, sizeof(text), ")");
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
	json_object *cfg = jget(layer, "config");
	char		who[DL_NAME_MAX + 16];
	json_object *v;

	if (k == 0)
		return find_input_shape(model, layer, shape, err);
	snprintf(who, sizeof(who), "layer \"%.100s\"", layer_name(layer));
	if ((v = jget(cfg, "batch_input_shape")) != NULL)
		return read_shape(v, true, who, "batch_input_shape", shape, err);
	if ((v = jget(cfg, "batch_shape")) != NULL)
		return read_shape(v, true, who, "batch_shape", shape, err);
	dl_error_set(err, DL_ERR_SHAPE, "input layer \"%.100s\" has no shape", layer_name(layer));
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
		copy_clipped(spec->input_names[k], DL_NAME_MAX, layer_name(layer));
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

		st = read_layer(jget_str(node->layer, "class_name"), node->name,
						jget(node->layer, "config"), l, &rank, jget(model, "module") != NULL, err);
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
static DlStatus
read_functional(json_object *model, json_object *cfg, json_object *layers, size_t n,
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
	if (jget_str(cfg, "name") != NULL)
		copy_clipped((*out)->name, sizeof((*out)->name), jget_str(cfg, "name"));
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
static DlStatus
read_sequential(json_object *model, json_object *cfg, json_object *layers, size_t n,
				const DlAllocator *alloc, DlModelSpec **out, DlError *err)
{
	json_object *first = jidx(layers, 0);
	DlModelSpec *spec;
	size_t		skip;
	int			rank;
	DlShape		input_shape;
	DlStatus	st;

	if ((st = find_input_shape(model, first, &input_shape, err)) != DL_OK)
		return st;
	skip = strcmp(jget_str(first, "class_name"), "InputLayer") == 0 ? 1 : 0;
	if (n - skip == 0)
	{
		dl_error_set(err, DL_ERR_SHAPE, "model has no layers besides its input");
		return dl_error_hint(err, "Give a model with at least one layer.");
	}
	spec = dl_model_spec_create((int) (n - skip), alloc, err);
	if (spec == NULL)
		return err != NULL ? err->code : DL_ERR_NO_MEMORY;
	spec->input_shape = input_shape;
	copy_clipped(spec->input_names[0], DL_NAME_MAX, layer_name(first));
	if (json_object_is_type(cfg, json_type_object) && jget_str(cfg, "name") != NULL)
		copy_clipped(spec->name, sizeof(spec->name), jget_str(cfg, "name"));
	rank = input_shape.rank;
	for (size_t i = skip; i < n; i++)
	{
		json_object *entry = jidx(layers, i);
		const char *lcls = jget_str(entry, "class_name");

		if (strcmp(lcls, "InputLayer") == 0)
			st = refuse_graph(layer_name(entry), "is an InputLayer after the first layer", err);
		else
			st = read_layer(lcls, layer_name(entry), jget(entry, "config"),
							&spec->layers[i - skip], &rank, jget(model, "module") != NULL, err);
		if (st != DL_OK)
		{
			dl_model_spec_free(spec, alloc);
			return st;
		}
	}
	*out = spec;
	return DL_OK;
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
					 value_text(model, text, sizeof(text)));
		return dl_error_hint(err, "Pass the output of model.to_json() unchanged.");
	}
	cls = jget_str(model, "class_name");
	if (cls == NULL)
	{
		dl_error_set(err, DL_ERR_PARSE, "model architecture has no \"class_name\"");
		return dl_error_hint(err, "Pass the output of model.to_json() unchanged.");
	}
	if ((cfg = jget(model, "config")) == NULL)
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
		copy_clipped(text, sizeof(text), cls);
		dl_error_set(err, DL_ERR_UNSUPPORTED, "model class \"%s\" is not supported", text);
		return dl_error_hint(err, "%s", hint_graph);
	}
	/* Keras 2.1-2.2 Sequential: the config is the layer list itself. */
	layers = (!functional && json_object_is_type(cfg, json_type_array)) ? cfg : jget(cfg, "layers");
	if (layers == NULL || !json_object_is_type(layers, json_type_array))
	{
		dl_error_set(err, DL_ERR_PARSE, "model config has no \"layers\" list");
		return dl_error_hint(err, "Pass the output of model.to_json() unchanged.");
	}
	n = jlen(layers);
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
		if ((st = check_entry(jidx(layers, i), i, err)) != DL_OK)
			return st;
	}
	if (functional)
		return read_functional(model, cfg, layers, n, alloc, out, err);
	return read_sequential(model, cfg, layers, n, alloc, out, err);
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
		st = refuse_multi_io(spec, err);
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
	size_t		n = jlen(v);
	size_t		first = with_batch ? 1 : 0;
	int			nulls = 0;

	if (n <= first || b->st != DL_OK)
		return;
	for (size_t i = first; i < n; i++)
		nulls += jidx(v, i) == NULL;
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
		if (jidx(v, i) == NULL)
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
		for (size_t i = 0; i < jlen(obj); i++)
			bind_walk(jidx(obj, i), false, false, b, err);
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
