/*-------------------------------------------------------------------------
 *
 * keras_layers.c
 *	  The Keras reader's layer table: each layer class's config, read into
 *	  a DlLayer (read_layer_config dispatches on the class name), with the
 *	  initializers and regularizers.  Every value that changes the math
 *	  and that we do not implement is refused, naming the layer, the
 *	  attribute and the value.  Part of the reader described in
 *	  keras_json.c.
 *
 * IDENTIFICATION
 *	  src/engine/keras_layers.c
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
				 layer->name, key, what, keras_value_text(v, text, sizeof(text)));
	return dl_error_hint(err, "Use mode fan_in, fan_out or fan_avg and distribution uniform, "
						 "truncated_normal, untruncated_normal or normal.");
}

/* A positive init->scale under name (scale, gain) of initializer key's config. */
static DlStatus
get_init_scale(json_object *cfg, const char *key, const char *name, const DlLayer *layer,
			   DlInitializer *init, DlError *err)
{
	DlStatus	st;

	if ((st = keras_get_double(cfg, name, layer, &init->scale, err)) != DL_OK)
		return st;
	if (!(init->scale > 0.0))
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							"layer \"%s\": %s %s must be positive, got %g",
							layer->name, key, name, init->scale);
	return DL_OK;
}

/*
 * An initializer's or regularizer's v: a bare name, or an object with a
 * class_name (and maybe a config): *cls, and *cfg (NULL when none).
 * false when it is neither.
 */
static bool
class_and_config(json_object *v, const char **cls, json_object **cfg)
{
	*cfg = NULL;
	if (json_object_is_type(v, json_type_string))
	{
		*cls = json_object_get_string(v);
		return true;
	}
	if (json_object_is_type(v, json_type_object) && (*cls = keras_jget_str(v, "class_name")) != NULL)
	{
		*cfg = keras_jget(v, "config");
		return true;
	}
	return false;
}

/* VarianceScaling's scale, mode and distribution from cfg. */
static DlStatus
read_variance_scaling(json_object *cfg, const char *key, const DlLayer *layer,
					  DlInitializer *init, DlError *err)
{
	json_object *v;
	char		norm[KERAS_NORM_MAX];
	DlStatus	st;

	if ((st = get_init_scale(cfg, key, "scale", layer, init, err)) != DL_OK)
		return st;
	if ((v = keras_jget(cfg, "mode")) != NULL)
	{
		if (!json_object_is_type(v, json_type_string))
			return keras_bad_type(layer, "mode", v, "a string", err);
		keras_norm_name(json_object_get_string(v), norm, sizeof(norm));
		if (strcmp(norm, "fanin") == 0)
			init->mode = DL_FAN_IN;
		else if (strcmp(norm, "fanout") == 0)
			init->mode = DL_FAN_OUT;
		else if (strcmp(norm, "fanavg") == 0)
			init->mode = DL_FAN_AVG;
		else
			return unsupported_init_value(layer, key, "mode", v, err);
	}
	if ((v = keras_jget(cfg, "distribution")) != NULL)
	{
		if (!json_object_is_type(v, json_type_string))
			return keras_bad_type(layer, "distribution", v, "a string", err);
		keras_norm_name(json_object_get_string(v), norm, sizeof(norm));
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
	json_object *v = keras_jget(layer_cfg, key);
	json_object *cfg = NULL;
	const char *cls;
	char		norm[KERAS_NORM_MAX];
	char		text[KERAS_TEXT_MAX];
	DlStatus	st = DL_OK;

	if (v == NULL)
		return DL_OK;
	if (!class_and_config(v, &cls, &cfg))
		return keras_bad_type(layer, key, v, "an initializer with a class_name", err);
	if (cfg != NULL && !json_object_is_type(cfg, json_type_object))
		return keras_bad_type(layer, key, cfg, "an object", err);

	keras_norm_name(cls, norm, sizeof(norm));
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
		json_object *value = keras_jget(cfg, "value");

		init_reset(init, DL_INIT_CONSTANT);
		if (value != NULL && json_object_is_type(value, json_type_array))
		{
			dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": %s Constant value %s is not supported",
						 layer->name, key, keras_value_text(value, text, sizeof(text)));
			return dl_error_hint(err, "Give Constant a single number.");
		}
		return keras_get_double(cfg, "value", layer, &init->value, err);
	}

	if (strcmp(norm, "randomnormal") == 0 || strcmp(norm, "normal") == 0 ||
		strcmp(norm, "truncatednormal") == 0)
	{
		init_reset(init, norm[0] == 't' ? DL_INIT_TRUNCATED_NORMAL : DL_INIT_RANDOM_NORMAL);
		if ((st = keras_get_double(cfg, "mean", layer, &init->mean, err)) != DL_OK ||
			(st = keras_get_double(cfg, "stddev", layer, &init->stddev, err)) != DL_OK)
			return st;
		if (!(init->stddev >= 0.0))
			return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
								"layer \"%s\": %s stddev must not be negative, got %g",
								layer->name, key, init->stddev);
	}
	else if (strcmp(norm, "randomuniform") == 0 || strcmp(norm, "uniform") == 0)
	{
		init_reset(init, DL_INIT_RANDOM_UNIFORM);
		if ((st = keras_get_double(cfg, "minval", layer, &init->minval, err)) != DL_OK ||
			(st = keras_get_double(cfg, "maxval", layer, &init->maxval, err)) != DL_OK)
			return st;
		if (!(init->minval <= init->maxval))
			return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
								"layer \"%s\": %s minval %g is greater than maxval %g",
								layer->name, key, init->minval, init->maxval);
	}
	else if (strcmp(norm, "orthogonal") == 0)
	{
		init_reset(init, DL_INIT_ORTHOGONAL);
		if ((st = get_init_scale(cfg, key, "gain", layer, init, err)) != DL_OK)
			return st;
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

			keras_copy_clipped(clsbuf, sizeof(clsbuf), cls);
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
	return keras_get_seed(cfg, layer, key, &init->has_seed, &init->seed, err);
}

/*
 * A regularizer under key: L1, L2, L1L2 (any spelling), as an object or
 * a bare name (Keras default factor 0.01).  Absent or null is zero.
 */
static DlStatus
get_regularizer(json_object *layer_cfg, const char *key, const DlLayer *layer,
				DlRegularizer *reg, DlError *err)
{
	json_object *v = keras_jget(layer_cfg, key);
	json_object *cfg = NULL;
	const char *cls;
	char		norm[KERAS_NORM_MAX];
	DlStatus	st;

	reg->l1 = reg->l2 = 0.0;
	if (v == NULL)
		return DL_OK;
	if (!class_and_config(v, &cls, &cfg))
		return keras_bad_type(layer, key, v, "a regularizer with a class_name", err);

	keras_norm_name(cls, norm, sizeof(norm));
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

		keras_copy_clipped(clsbuf, sizeof(clsbuf), cls);
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": %s \"%s\" is not supported",
					 layer->name, key, clsbuf);
		return dl_error_hint(err, "Use the regularizers L1, L2 or L1L2.");
	}
	if (strcmp(norm, "l2") != 0 && (st = keras_get_double(cfg, "l1", layer, &reg->l1, err)) != DL_OK)
		return st;
	if (strcmp(norm, "l1") != 0 && (st = keras_get_double(cfg, "l2", layer, &reg->l2, err)) != DL_OK)
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

	if ((st = keras_get_activation(cfg, layer, err)) != DL_OK ||
		(st = keras_get_bool(cfg, "use_bias", layer, &layer->use_bias, err)) != DL_OK ||
		(st = get_initializer(cfg, "kernel_initializer", layer, &layer->kernel_init, err)) != DL_OK ||
		(st = get_initializer(cfg, "bias_initializer", layer, &layer->bias_init, err)) != DL_OK ||
		(st = get_regularizer(cfg, "kernel_regularizer", layer, &layer->kernel_reg, err)) != DL_OK ||
		(st = get_regularizer(cfg, "bias_regularizer", layer, &layer->bias_reg, err)) != DL_OK)
		return st;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
	{
		if ((st = keras_need_null(cfg, refused[i], layer, err)) != DL_OK)
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
	json_object *v = keras_jget(cfg, key);
	char		text[KERAS_TEXT_MAX];

	if (v == NULL ||
		((json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) &&
		 json_object_get_double(v) == want))
		return DL_OK;
	dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": %s %s is not supported",
				 layer->name, key, keras_value_text(v, text, sizeof(text)));
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
		if ((st = keras_need_null(cfg, "max_value", layer, err)) != DL_OK)
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
		json_object *v = keras_jget(cfg, "axis");
		json_object *a = v;
		int64_t		axis = -1;
		char		text[KERAS_TEXT_MAX];

		if (v != NULL && json_object_is_type(v, json_type_array) &&
			keras_jlen(v) == 1)
			a = keras_jidx(v, 0);
		if (v != NULL && (a == NULL || !keras_json_int64(a, &axis) || (axis != -1 && axis != rank)))
		{
			dl_error_set(err, DL_ERR_UNSUPPORTED,
						 "layer \"%s\": axis %s is not supported, only the last axis (-1)",
						 layer->name, keras_value_text(v, text, sizeof(text)));
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
	if (keras_jget(cfg, key) == NULL)
		return dl_error_set(err, DL_ERR_PARSE, "layer \"%s\" (%s) has no \"%s\"",
							layer->name, dl_layer_kind_name(layer->kind), key);
	return keras_get_int(cfg, key, layer, out, err);
}

/* Conv1D, Conv2D: filters and kernel_size must be there (cls names the layer). */
static DlStatus
read_filters_kernel(json_object *cfg, DlLayer *layer, const char *cls, DlError *err)
{
	DlStatus	st;

	if ((st = get_required_int(cfg, "filters", layer, &layer->filters, err)) != DL_OK)
		return st;
	if (keras_jget(cfg, "kernel_size") == NULL)
		return dl_error_set(err, DL_ERR_PARSE, "layer \"%s\" (%s) has no \"kernel_size\"",
							layer->name, cls);
	return DL_OK;
}

/* Conv1D, Conv2D: groups must be 1; then the weights' attributes. */
static DlStatus
finish_conv(json_object *cfg, DlLayer *layer, int64_t groups, DlError *err)
{
	if (groups != 1)
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": groups %lld is not supported",
					 layer->name, (long long) groups);
		return dl_error_hint(err, "Use groups=1.");
	}
	return read_weighted(cfg, layer, err);
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

	if ((st = read_filters_kernel(cfg, layer, "Conv2D", err)) != DL_OK)
		return st;
	if ((st = keras_get_pair(cfg, "kernel_size", layer, layer->kernel_size, err)) != DL_OK ||
		(st = keras_get_pair(cfg, "strides", layer, layer->strides, err)) != DL_OK ||
		(st = keras_get_padding(cfg, layer, &layer->padding, err)) != DL_OK ||
		(st = keras_check_data_format(cfg, layer, err)) != DL_OK ||
		(st = keras_get_pair(cfg, "dilation_rate", layer, layer->dilation, err)) != DL_OK ||
		(st = keras_get_int(cfg, "groups", layer, &groups, err)) != DL_OK)
		return st;
	return finish_conv(cfg, layer, groups, err);
}

/* MaxPooling2D and AveragePooling2D: pool_size, strides (null: pool_size), padding. */
static DlStatus
read_pooling(json_object *cfg, DlLayer *layer, DlError *err)
{
	DlStatus	st;

	if ((st = keras_get_pair(cfg, "pool_size", layer, layer->pool_size, err)) != DL_OK)
		return st;
	/* strides null (or absent) means strides = pool_size */
	layer->strides[0] = layer->pool_size[0];
	layer->strides[1] = layer->pool_size[1];
	if ((st = keras_get_pair(cfg, "strides", layer, layer->strides, err)) != DL_OK ||
		(st = keras_get_padding(cfg, layer, &layer->padding, err)) != DL_OK)
		return st;
	return keras_check_data_format(cfg, layer, err);
}

/*
 * ZeroPadding2D's padding or Cropping2D's cropping (key) into margins
 * (top, bottom, left, right): n for all four, [h, w] for (h, h, w, w),
 * or [[top, bottom], [left, right]]; each in [0, INT_MAX].
 */
static DlStatus
get_margins(json_object *cfg, const char *key, DlLayer *layer, DlError *err)
{
	json_object *v = keras_jget(cfg, key);
	int64_t		m[4];
	char		text[KERAS_TEXT_MAX];
	const char *what = "an integer, a list of two or a list of two pairs of integers";

	if (v == NULL)
		return DL_OK;
	if (keras_json_int64(v, &m[0]))
		m[1] = m[2] = m[3] = m[0];
	else if (keras_jlen(v) != 2)
		return keras_bad_type(layer, key, v, what, err);
	else if (keras_json_int64(keras_jidx(v, 0), &m[0]) && keras_json_int64(keras_jidx(v, 1), &m[2]))
	{
		m[1] = m[0];
		m[3] = m[2];
	}
	else if (!(keras_jlen(keras_jidx(v, 0)) == 2 && keras_jlen(keras_jidx(v, 1)) == 2 &&
			   keras_json_int64(keras_jidx(keras_jidx(v, 0), 0), &m[0]) && keras_json_int64(keras_jidx(keras_jidx(v, 0), 1), &m[1]) &&
			   keras_json_int64(keras_jidx(keras_jidx(v, 1), 0), &m[2]) && keras_json_int64(keras_jidx(keras_jidx(v, 1), 1), &m[3])))
		return keras_bad_type(layer, key, v, what, err);
	for (int k = 0; k < 4; k++)
	{
		if (m[k] < 0 || m[k] > INT_MAX)
			return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
								"layer \"%s\": %s %s must not be negative",
								layer->name, key, keras_value_text(v, text, sizeof(text)));
		layer->margins[k] = (int) m[k];
	}
	return DL_OK;
}

/* UpSampling2D: size, interpolation "nearest" only. */
static DlStatus
read_upsampling(json_object *cfg, DlLayer *layer, DlError *err)
{
	json_object *v = keras_jget(cfg, "interpolation");
	char		text[KERAS_TEXT_MAX];
	DlStatus	st;

	if ((st = keras_get_pair(cfg, "size", layer, layer->size, err)) != DL_OK)
		return st;
	if (v != NULL && !(json_object_is_type(v, json_type_string) &&
					   strcmp(json_object_get_string(v), "nearest") == 0))
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": interpolation %s is not supported",
					 layer->name, keras_value_text(v, text, sizeof(text)));
		return dl_error_hint(err, "Use interpolation=\"nearest\".");
	}
	return keras_check_data_format(cfg, layer, err);
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

	if ((st = keras_get_int(cfg, "axis", layer, &axis, err)) != DL_OK)
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
	json_object *v = keras_jget(cfg, "axis");
	int64_t		axis = -1;
	char		text[KERAS_TEXT_MAX];
	DlStatus	st;

	if (v != NULL)
	{
		json_object *a = v;

		if (json_object_is_type(v, json_type_array) && keras_jlen(v) == 1)
			a = keras_jidx(v, 0);
		if (json_object_is_type(v, json_type_array) && keras_jlen(v) != 1)
			axis = 0;			/* several axes: refused below */
		else if (!keras_json_int64(a, &axis))
			return keras_bad_type(layer, "axis", v, "an integer", err);
		if (axis != -1 && axis != rank)
		{
			dl_error_set(err, DL_ERR_UNSUPPORTED,
						 "layer \"%s\": axis %s is not supported, only the last axis (-1 or %d)",
						 layer->name, keras_value_text(v, text, sizeof(text)), rank);
			return dl_error_hint(err, "Normalize over the channels (last) axis: axis=-1.");
		}
	}
	if ((st = keras_get_double(cfg, "momentum", layer, &layer->momentum, err)) != DL_OK ||
		(st = keras_get_double(cfg, "epsilon", layer, &layer->epsilon, err)) != DL_OK ||
		(st = keras_get_bool(cfg, "center", layer, &layer->center, err)) != DL_OK ||
		(st = keras_get_bool(cfg, "scale", layer, &layer->scale, err)) != DL_OK ||
		(st = get_initializer(cfg, "beta_initializer", layer, &layer->beta_init, err)) != DL_OK ||
		(st = get_initializer(cfg, "gamma_initializer", layer, &layer->gamma_init, err)) != DL_OK ||
		(st = get_initializer(cfg, "moving_mean_initializer", layer,
							  &layer->moving_mean_init, err)) != DL_OK ||
		(st = get_initializer(cfg, "moving_variance_initializer", layer,
							  &layer->moving_variance_init, err)) != DL_OK ||
		(st = keras_need_false(cfg, "renorm", layer, err)) != DL_OK)
		return st;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
	{
		if ((st = keras_need_null(cfg, refused[i], layer, err)) != DL_OK)
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
	json_object *v = keras_jget(cfg, key);
	int64_t		n;
	char		text[KERAS_TEXT_MAX];

	if (v == NULL)
		return DL_OK;
	if (!(keras_json_int64(v, &n) || (keras_jlen(v) == 1 && keras_json_int64(keras_jidx(v, 0), &n))))
		return keras_bad_type(layer, key, v, "an integer or a list of one integer", err);
	if (n < 1 || n > INT_MAX)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "layer \"%s\": %s %s must be positive",
							layer->name, key, keras_value_text(v, text, sizeof(text)));
	*out = (int) n;
	return DL_OK;
}

/* Refuse each of keys unless absent or null. */
static DlStatus
need_nulls(json_object *cfg, const char *const *keys, size_t n, const DlLayer *layer, DlError *err)
{
	DlStatus	st;

	for (size_t i = 0; i < n; i++)
		if ((st = keras_need_null(cfg, keys[i], layer, err)) != DL_OK)
			return st;
	return DL_OK;
}

/* Refuse key unless absent, null or the number 0 (a dropout rate). */
static DlStatus
need_zero(json_object *cfg, const char *key, const DlLayer *layer, DlError *err)
{
	json_object *v = keras_jget(cfg, key);
	char		text[KERAS_TEXT_MAX];

	if (v == NULL ||
		((json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) &&
		 json_object_get_double(v) == 0.0))
		return DL_OK;
	dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": %s %s is not supported",
				 layer->name, key, keras_value_text(v, text, sizeof(text)));
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
	json_object *mz = keras_jget(cfg, "mask_zero");
	DlStatus	st;

	if ((st = get_required_int(cfg, "input_dim", layer, &layer->input_dim, err)) != DL_OK ||
		(st = get_required_int(cfg, "output_dim", layer, &layer->units, err)) != DL_OK ||
		(st = get_initializer(cfg, "embeddings_initializer", layer, &layer->kernel_init, err)) != DL_OK ||
		(st = get_regularizer(cfg, "embeddings_regularizer", layer, &layer->kernel_reg, err)) != DL_OK ||
		(st = keras_need_false(cfg, "sparse", layer, err)) != DL_OK ||
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
	json_object *pad = keras_jget(cfg, "padding");
	int64_t		groups = 1;
	DlStatus	st;

	if ((st = read_filters_kernel(cfg, layer, "Conv1D", err)) != DL_OK)
		return st;
	if ((st = get_single(cfg, "kernel_size", layer, &layer->kernel_size[1], err)) != DL_OK ||
		(st = get_single(cfg, "strides", layer, &layer->strides[1], err)) != DL_OK ||
		(st = get_single(cfg, "dilation_rate", layer, &layer->dilation[1], err)) != DL_OK ||
		(st = keras_check_data_format(cfg, layer, err)) != DL_OK ||
		(st = keras_get_int(cfg, "groups", layer, &groups, err)) != DL_OK)
		return st;
	if (pad != NULL && json_object_is_type(pad, json_type_string) &&
		strcasecmp(json_object_get_string(pad), "causal") == 0)
		layer->padding = DL_PADDING_CAUSAL;
	else if ((st = keras_get_padding(cfg, layer, &layer->padding, err)) != DL_OK)
		return st;
	return finish_conv(cfg, layer, groups, err);
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
		(st = keras_get_padding(cfg, layer, &layer->padding, err)) != DL_OK)
		return st;
	return keras_check_data_format(cfg, layer, err);
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
	json_object *ufb = keras_jget(cfg, "unit_forget_bias");
	DlStatus	st;

	if ((st = get_required_int(cfg, "units", layer, &layer->units, err)) != DL_OK ||
		(st = keras_get_activation(cfg, layer, err)) != DL_OK ||
		(st = keras_get_activation_key(cfg, "recurrent_activation", layer, &layer->recurrent_activation,
								 err)) != DL_OK ||
		(st = keras_get_bool(cfg, "use_bias", layer, &layer->use_bias, err)) != DL_OK ||
		(st = get_initializer(cfg, "kernel_initializer", layer, &layer->kernel_init, err)) != DL_OK ||
		(st = get_initializer(cfg, "recurrent_initializer", layer, &layer->recurrent_init, err)) != DL_OK ||
		(st = get_initializer(cfg, "bias_initializer", layer, &layer->bias_init, err)) != DL_OK ||
		(st = get_regularizer(cfg, "kernel_regularizer", layer, &layer->kernel_reg, err)) != DL_OK ||
		(st = get_regularizer(cfg, "recurrent_regularizer", layer, &layer->recurrent_reg, err)) != DL_OK ||
		(st = get_regularizer(cfg, "bias_regularizer", layer, &layer->bias_reg, err)) != DL_OK ||
		(st = keras_get_bool(cfg, "return_sequences", layer, &layer->return_sequences, err)) != DL_OK ||
		(st = keras_get_bool(cfg, "go_backwards", layer, &layer->go_backwards, err)) != DL_OK ||
		(st = keras_need_false(cfg, "return_state", layer, err)) != DL_OK ||
		(st = keras_need_false(cfg, "stateful", layer, err)) != DL_OK ||
		(st = keras_need_false(cfg, "time_major", layer, err)) != DL_OK ||
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
		(st = keras_get_bool(cfg, "reset_after", layer, &layer->reset_after, err)) != DL_OK)
		return st;
	/* unit_forget_bias: Keras writes true or false; TF.js null, which means false */
	if (layer->kind == DL_LAYER_LSTM)
	{
		if (ufb == NULL && json_object_object_get_ex(cfg, "unit_forget_bias", NULL))
			layer->unit_forget_bias = false;
		else if ((st = keras_get_bool(cfg, "unit_forget_bias", layer, &layer->unit_forget_bias, err)) != DL_OK)
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
	json_object *inner = keras_jget(cfg, "layer");
	json_object *back = keras_jget(cfg, "backward_layer");
	json_object *mm = keras_jget(cfg, "merge_mode");
	const char *cls = keras_jget_str(inner, "class_name");
	char		text[KERAS_TEXT_MAX];
	DlLayerKind kind;
	DlStatus	st;

	keras_copy_clipped(layer->name, sizeof(layer->name), name);
	if (cls == NULL || !json_object_is_type(keras_jget(inner, "config"), json_type_object))
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
		keras_copy_clipped(text, sizeof(text), cls);
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\" (Bidirectional): layer \"%s\" is not supported",
					 layer->name, text);
		return dl_error_hint(err, "Wrap an LSTM, a GRU or a SimpleRNN.");
	}
	dl_layer_defaults(layer, kind);
	keras_copy_clipped(layer->name, sizeof(layer->name), name);
	if ((st = keras_get_bool(cfg, "trainable", layer, &layer->trainable, err)) != DL_OK ||
		(st = read_recurrent(keras_jget(inner, "config"), layer, rank, err)) != DL_OK)
		return st;
	if (layer->go_backwards)
		return keras_need_false(keras_jget(inner, "config"), "go_backwards", layer, err);
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
					 layer->name, keras_value_text(mm, text, sizeof(text)));
		return dl_error_hint(err, "Use merge_mode \"concat\", \"sum\", \"ave\" or \"mul\".");
	}
	if (back != NULL)
	{
		/* the backward layer: the same attributes, reading backwards */
		DlLayer		b;
		int			brank = 2;
		const char *bcls = keras_jget_str(back, "class_name");

		dl_layer_defaults(&b, kind);
		keras_copy_clipped(b.name, sizeof(b.name), layer->name);
		if (bcls == NULL || strcmp(bcls, cls) != 0 ||
			read_recurrent(keras_jget(back, "config"), &b, &brank, err) != DL_OK ||
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
	if (keras_jget(cfg, "kernel_size") == NULL)
		return dl_error_set(err, DL_ERR_PARSE, "layer \"%s\" (%s) has no \"kernel_size\"",
							layer->name, dl_layer_kind_name(layer->kind));
	if ((st = keras_get_pair(cfg, "kernel_size", layer, layer->kernel_size, err)) != DL_OK ||
		(st = keras_get_pair(cfg, "strides", layer, layer->strides, err)) != DL_OK ||
		(st = keras_get_padding(cfg, layer, &layer->padding, err)) != DL_OK ||
		(st = keras_check_data_format(cfg, layer, err)) != DL_OK ||
		(st = keras_get_pair(cfg, "dilation_rate", layer, layer->dilation, err)) != DL_OK ||
		(st = keras_get_int(cfg, "depth_multiplier", layer, &layer->depth_multiplier, err)) != DL_OK ||
		(st = keras_get_activation(cfg, layer, err)) != DL_OK ||
		(st = keras_get_bool(cfg, "use_bias", layer, &layer->use_bias, err)) != DL_OK ||
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
	json_object *v = keras_jget(cfg, "axis");
	json_object *a = v;
	int64_t		axis = -1;
	char		text[KERAS_TEXT_MAX];
	DlStatus	st;

	if (v != NULL && keras_jlen(v) == 1)
		a = keras_jidx(v, 0);
	if (v != NULL && (!keras_json_int64(a, &axis) || (axis != -1 && axis != rank)))
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED,
					 "layer \"%s\": axis %s is not supported, only the last axis (-1 or %d)",
					 layer->name, keras_value_text(v, text, sizeof(text)), rank);
		return dl_error_hint(err, "Normalize over the last axis: axis=-1.");
	}
	layer->epsilon = 1e-3;
	if ((st = keras_get_double(cfg, "epsilon", layer, &layer->epsilon, err)) != DL_OK ||
		(st = keras_get_bool(cfg, "center", layer, &layer->center, err)) != DL_OK ||
		(st = keras_get_bool(cfg, "scale", layer, &layer->scale, err)) != DL_OK ||
		(st = get_initializer(cfg, "beta_initializer", layer, &layer->beta_init, err)) != DL_OK ||
		(st = get_initializer(cfg, "gamma_initializer", layer, &layer->gamma_init, err)) != DL_OK ||
		(st = keras_need_false(cfg, "rms_scaling", layer, err)) != DL_OK)
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
	json_object *mv = keras_jget(cfg, "max_value");
	DlStatus	st;

	layer->kind = DL_LAYER_RELU;
	layer->negative_slope = strcmp(cls, "LeakyReLU") == 0 ? 0.3 : 0.0;
	if ((st = keras_get_double(cfg, "alpha", layer, &layer->negative_slope, err)) != DL_OK ||
		(st = keras_get_double(cfg, "negative_slope", layer, &layer->negative_slope, err)) != DL_OK)
		return st;
	if (strcmp(cls, "LeakyReLU") == 0)
		return DL_OK;
	if (mv != NULL)
	{
		layer->has_max_value = true;
		if ((st = keras_get_double(cfg, "max_value", layer, &layer->max_value, err)) != DL_OK)
			return st;
	}
	if ((st = keras_get_double(cfg, "threshold", layer, &layer->threshold, err)) != DL_OK)
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
	json_object *v = keras_jget(cfg, "shared_axes");
	char		text[KERAS_TEXT_MAX];
	DlStatus	st;

	if ((st = get_initializer(cfg, "alpha_initializer", layer, &layer->kernel_init, err)) != DL_OK ||
		(st = get_regularizer(cfg, "alpha_regularizer", layer, &layer->kernel_reg, err)) != DL_OK ||
		(st = keras_need_null(cfg, "alpha_constraint", layer, err)) != DL_OK)
		return st;
	if (v == NULL)
		return DL_OK;
	for (size_t i = 0; i < (json_object_is_type(v, json_type_array) ? keras_jlen(v) : 1); i++)
	{
		int64_t		a;

		if (!keras_json_int64(json_object_is_type(v, json_type_array) ? keras_jidx(v, i) : v, &a))
			return keras_bad_type(layer, "shared_axes", v, "an integer or a list of integers", err);
		if (a < 1 || a > rank)
		{
			dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": shared_axes %s is not supported",
						 layer->name, keras_value_text(v, text, sizeof(text)));
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
	json_object *a = keras_jget(cfg, key);
	char		text[KERAS_TEXT_MAX];

	if (a == NULL)
		return dl_error_set(err, DL_ERR_PARSE, "layer \"%s\" (%s) has no \"%s\"",
							layer->name, dl_layer_kind_name(layer->kind), key);
	if (!json_object_is_type(a, json_type_array) || keras_jlen(a) < 1)
		return keras_bad_type(layer, key, a, "a list of integers", err);
	if (keras_jlen(a) > DL_MAX_RANK)
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\": %s %s has more than %d dimensions",
					 layer->name, key, keras_value_text(a, text, sizeof(text)), DL_MAX_RANK);
		return dl_error_hint(err, "Use at most %d dimensions per sample.", DL_MAX_RANK);
	}
	for (size_t i = 0; i < keras_jlen(a); i++)
		if (!keras_json_int64(keras_jidx(a, i), &v[i]) || v[i] < -1 || v[i] > ((int64_t) 1 << 40))
			return keras_bad_type(layer, key, a, "a list of integers", err);
	*n = (int) keras_jlen(a);
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
			if (keras_jget(cfg, "n") == NULL)
				return dl_error_set(err, DL_ERR_PARSE, "layer \"%s\" (RepeatVector) has no \"n\"",
									layer->name);
			*rank = 2;
			return keras_get_int(cfg, "n", layer, &layer->repeat_n, err);
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

		keras_copy_clipped(namebuf, sizeof(namebuf), name);
		keras_copy_clipped(clsbuf, sizeof(clsbuf), cls);
		dl_error_set(err, DL_ERR_UNSUPPORTED, "layer \"%s\" has unsupported type \"%s\"",
					 namebuf, clsbuf);
		return dl_error_hint(err, "%s", keras_hint_layers);
	}
	dl_layer_defaults(layer, keras_layer_classes[i].kind);
	keras_copy_clipped(layer->name, sizeof(layer->name), name);
	if ((st = keras_get_bool(cfg, "trainable", layer, &layer->trainable, err)) != DL_OK)
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
		case DL_LAYER_GLOBALMAXPOOL1D:
		case DL_LAYER_GLOBALAVGPOOL1D:
			*rank = 1;
			if ((st = keras_need_false(cfg, "keepdims", layer, err)) != DL_OK)
				return st;
			return keras_check_data_format(cfg, layer, err);
		case DL_LAYER_ZEROPADDING2D:
			layer->margins[0] = layer->margins[1] = layer->margins[2] = layer->margins[3] = 1;
			if ((st = get_margins(cfg, "padding", layer, err)) != DL_OK)
				return st;
			return keras_check_data_format(cfg, layer, err);
		case DL_LAYER_CROPPING2D:
			if ((st = get_margins(cfg, "cropping", layer, err)) != DL_OK)
				return st;
			return keras_check_data_format(cfg, layer, err);
		case DL_LAYER_UPSAMPLING2D:
			return read_upsampling(cfg, layer, err);
		DL_LAYER_CASES_ELEMENTWISE:
			return DL_OK;
		case DL_LAYER_CONCATENATE:
			return read_concatenate(cfg, layer, err);
		case DL_LAYER_FLATTEN:
			*rank = 1;
			return keras_check_data_format(cfg, layer, err);
		case DL_LAYER_DROPOUT:
			if (keras_jget(cfg, "rate") == NULL)
				return dl_error_set(err, DL_ERR_PARSE, "layer \"%s\" (Dropout) has no \"rate\"",
									layer->name);
			if ((st = keras_get_double(cfg, "rate", layer, &layer->rate, err)) != DL_OK ||
				(st = keras_get_seed(cfg, layer, "dropout", &layer->has_seed, &layer->seed, err)) != DL_OK)
				return st;
			return keras_need_null(cfg, "noise_shape", layer, err);
		case DL_LAYER_ACTIVATION:
			if (strcmp(cls, "ReLU") == 0)
				return read_relu_args(cls, cfg, layer, err);
			if (strcmp(cls, "Activation") != 0)
				return read_advanced_activation(cls, cfg, layer, *rank, err);
			return keras_get_activation(cfg, layer, err);
		case DL_LAYER_BATCHNORM:
			return read_batchnorm(cfg, layer, *rank, err);
		case DL_LAYER_EMBEDDING:
			return read_embedding(cfg, layer, rank, err);
		case DL_LAYER_CONV1D:
			return read_conv1d(cfg, layer, err);
		case DL_LAYER_MAXPOOL1D:
		case DL_LAYER_AVGPOOL1D:
			return read_pooling1d(cfg, layer, err);
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
DlStatus
keras_read_layer(const char *cls, const char *name, json_object *cfg, DlLayer *layer, int *rank,
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
