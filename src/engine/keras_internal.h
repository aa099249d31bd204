/*-------------------------------------------------------------------------
 *
 * keras_internal.h
 *	  What the Keras reader's files (keras_json.c, keras_graph.c,
 *	  keras_layers.c, keras_read.c) share: the json helpers, the config
 *	  value readers and the shape readers (keras_read.c), the layer reader
 *	  (keras_layers.c) and the model builders (keras_graph.c).  Internal
 *	  to the engine.
 *
 * IDENTIFICATION
 *	  src/engine/keras_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_KERAS_INTERNAL_H
#define DL_KERAS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "madlib_dl/dl_keras.h"

/* Deepest nesting json-c accepts; Keras 3 functional models need about 10. */
#define KERAS_JSON_MAX_DEPTH 64

/* Room for a user-supplied value quoted in a message. */
#define KERAS_TEXT_MAX 100

/* Room for a normalized class, mode or distribution name. */
#define KERAS_NORM_MAX 48

extern const char *const keras_hint_layers;
extern const char *const keras_hint_graph;
extern const char *const keras_hint_nested;

json_object *keras_jget(json_object *obj, const char *key);
size_t keras_jlen(json_object *v);
json_object *keras_jidx(json_object *v, size_t i);
const char *keras_jget_str(json_object *obj, const char *key);
void keras_copy_clipped(char *buf, size_t size, const char *s);
void keras_text_append(char *buf, size_t size, const char *s);
const char *keras_value_text(json_object *v, char *buf, size_t size);
void keras_norm_name(const char *s, char *buf, size_t size);
bool keras_json_int64(json_object *v, int64_t *out);
DlStatus keras_bad_type(const DlLayer *layer, const char *key, json_object *v, const char *what, DlError *err);
DlStatus keras_get_int(json_object *cfg, const char *key, const DlLayer *layer, int64_t *out, DlError *err);
DlStatus keras_get_double(json_object *cfg, const char *key, const DlLayer *layer, double *out, DlError *err);
DlStatus keras_get_bool(json_object *cfg, const char *key, const DlLayer *layer, bool *out, DlError *err);
DlStatus keras_get_seed(json_object *cfg, const DlLayer *layer, const char *what, bool *has_seed,
		uint64_t *seed, DlError *err);
DlStatus keras_get_pair(json_object *cfg, const char *key, const DlLayer *layer, int out[2], DlError *err);
DlStatus keras_need_null(json_object *cfg, const char *key, const DlLayer *layer, DlError *err);
DlStatus keras_need_false(json_object *cfg, const char *key, const DlLayer *layer, DlError *err);
DlStatus keras_get_padding(json_object *cfg, const DlLayer *layer, DlPadding *out, DlError *err);
DlStatus keras_check_data_format(json_object *cfg, const DlLayer *layer, DlError *err);
DlStatus keras_get_activation_key(json_object *cfg, const char *key, DlLayer *layer, DlActivation *out,
		DlError *err);
DlStatus keras_get_activation(json_object *cfg, DlLayer *layer, DlError *err);
DlStatus keras_read_layer(const char *cls, const char *name, json_object *cfg, DlLayer *layer, int *rank,
		bool keras3, DlError *err);
const char *keras_layer_name(json_object *entry);
DlStatus keras_read_shape(json_object *v, bool with_batch, const char *who, const char *key, DlShape *shape,
		DlError *err);
DlStatus keras_find_input_shape(json_object *model, json_object *first, DlShape *shape, DlError *err);
DlStatus keras_refuse_multi_io(const DlModelSpec *spec, DlError *err);
DlStatus keras_read_functional(json_object *model, json_object *cfg, json_object *layers, size_t n,
		const DlAllocator *alloc, DlModelSpec **out, DlError *err);
bool keras_is_model_class(const char *cls);
json_object *keras_model_layers(json_object *entry);
const char *keras_entry_name(json_object *entry);
DlStatus keras_flatten_nested(json_object *model, json_object *cfg, json_object *layers,
		const DlAllocator *alloc, json_object **flat, DlError *err);
DlStatus keras_read_sequential(json_object *model, json_object *cfg, json_object *layers, size_t n,
		const DlAllocator *alloc, DlModelSpec **out, DlError *err);

#endif							/* DL_KERAS_INTERNAL_H */
