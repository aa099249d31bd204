/*-------------------------------------------------------------------------
 *
 * dl_weights.h
 *	  The weight tensors of a model in Keras get_weights() order, and the
 *	  checks that show a block of weights in another order.
 *
 * A model's weights are one flat float32 block (dl_layer.h gives each
 * layer's tensors).  A flat block has no shapes: only its length is
 * checked against the architecture, so weights in another order with
 * the right count would load.  Two checks catch what can be caught:
 *	 - with the tensors' shapes (a TF.js weightsManifest, or the shapes of
 *	   Keras' get_weights()), each shape against the one the architecture
 *	   expects at that place (dl_weights_check_shapes's caller compares);
 *	 - from the values alone: a BatchNormalization's moving_variance is
 *	   never negative, so a negative one means that other weights sit
 *	   there (TF.js' model.getWeights() lists the moving statistics and
 *	   frozen layers' weights after every trainable weight).
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_weights.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_WEIGHTS_H
#define DL_WEIGHTS_H

#include <stddef.h>

#include "madlib_dl/dl_spec.h"
#include "madlib_dl/dl_status.h"

/* Most tensors one layer has (a Bidirectional LSTM: 2 x 3). */
#define DL_LAYER_MAX_TENSORS 6

/* One weight tensor of a layer. */
typedef struct DlWeightTensor
{
	const char *name;			/* Keras' name of it: "kernel", "moving_mean" */
	int			rank;			/* 1..DL_MAX_RANK */
	int64_t		dims[DL_MAX_RANK];
	size_t		offset;			/* first float in the model's block */
	size_t		count;			/* floats */
} DlWeightTensor;

/*
 * The tensors of layer l (of a finalized spec) in Keras order, into out
 * (DL_LAYER_MAX_TENSORS); returns how many (0: no weights).  A layer
 * kind this file does not list gives one rank-1 tensor of all its floats.
 */
int			dl_layer_weight_tensors(const DlLayer *l, DlWeightTensor *out);

/*
 * DL_ERR_INVALID_ARGUMENT naming the layer when w (spec->n_params floats,
 * Keras order) cannot be the model's weights: a BatchNormalization's
 * moving_variance with a negative value.
 */
DlStatus	dl_weights_check_values(const DlModelSpec *spec, const float *w, DlError *err);

#endif							/* DL_WEIGHTS_H */
