/*-------------------------------------------------------------------------
 *
 * dl_keras.h
 *	  Read a Keras model.to_json() architecture into a DlModelSpec.
 *
 * Accepts the three dialects users have:
 *	 - Keras 2.1-2.2: Sequential "config" is a plain list of layers;
 *	   initializers are written as VarianceScaling;
 *	 - tf.keras 2.x and TensorFlow.js: "config" is {name, layers}, with
 *	   InputLayer and GlorotUniform-style class names;
 *	 - Keras 3: "module", "registered_name", "build_config", and an
 *	   InputLayer with "batch_shape".
 * Sequential models and Functional ("Model") models that are any DAG:
 * branches, merges, several inputs and outputs (shared layers, called
 * more than once, are refused).  Anything unsupported is refused with
 * DL_ERR_UNSUPPORTED and a message naming the layer and the attribute.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_keras.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_KERAS_H
#define DL_KERAS_H

#include <stddef.h>
#include <stdint.h>

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_spec.h"
#include "madlib_dl/dl_status.h"

/*
 * Parse json (len bytes, need not be NUL-terminated) and return a
 * finalized spec in *out (free with dl_model_spec_free).  On error *out is
 * NULL, nothing is leaked and err says what is wrong:
 *	 DL_ERR_PARSE        malformed JSON, or a required key missing
 *	 DL_ERR_UNSUPPORTED  a layer, activation, initializer or attribute we
 *	                     do not implement (message names layer and attribute)
 *	 DL_ERR_SHAPE        layers do not fit together, or no input shape
 */
DlStatus	dl_keras_parse(const char *json, size_t len, const DlAllocator *alloc,
						   DlModelSpec **out, DlError *err);

/*
 * dl_keras_parse refuses a model of several inputs or outputs
 * (DL_ERR_UNSUPPORTED naming them), which the SQL functions do not take
 * yet; this one returns it.
 */
DlStatus	dl_keras_parse_multi_io(const char *json, size_t len, const DlAllocator *alloc,
									DlModelSpec **out, DlError *err);

/*
 * The size an unknown (null) per-sample input dimension is given when no
 * rows bind it: to parse the model and check its weights, whose count
 * does not depend on it.
 */
#define DL_KERAS_FREE_DIM_DEFAULT 224

/*
 * A model published with a variable input shape ([null, null, null, 3]:
 * any image size) has null per-sample dimensions, which dl_keras_parse
 * refuses.  This returns the architecture json (len bytes) with them
 * bound: each null per-sample dimension of its input shapes
 * (batch_input_shape, batch_shape, input_shape, build_config's
 * input_shape, build_input_shape; the batch dimension stays null) set to
 * the same dimension of dims (rank of them: the rows' shape), or to
 * DL_KERAS_FREE_DIM_DEFAULT when dims is NULL.  *out: new NUL-terminated
 * JSON text from alloc (the same model when nothing was null); *n_free:
 * how many dimensions were null.  DL_ERR_SHAPE when the input's rank is
 * not rank, DL_ERR_UNSUPPORTED for inputs of unknown dimensions of two
 * ranks, DL_ERR_PARSE for malformed JSON.
 */
DlStatus	dl_keras_bind_shape(const char *json, size_t len, const int64_t *dims, int rank,
								const DlAllocator *alloc, char **out, int *n_free, DlError *err);

#endif							/* DL_KERAS_H */
