/*-------------------------------------------------------------------------
 *
 * dl_spec.h
 *	  A model's architecture: input shape plus an ordered list of layers.
 *
 * A DlModelSpec is what the Keras JSON reader produces and what a DlModel
 * is built from.  The InputLayer is not a layer here: its shape becomes
 * input_shape.  After dl_model_spec_finalize() every layer knows its input
 * and output shapes and its slice of the parameter block.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_spec.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_SPEC_H
#define DL_SPEC_H

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_layer.h"
#include "madlib_dl/dl_status.h"

/* Upper bound on layers, a sanity limit for hostile JSON. */
#define DL_MAX_LAYERS 1024

typedef struct DlModelSpec
{
	char		name[DL_NAME_MAX];	/* Keras model name, may be empty */
	DlShape		input_shape;	/* per sample, without batch */
	int			n_layers;
	DlLayer    *layers;			/* (n_layers) */

	/* Filled by dl_model_spec_finalize() */
	DlShape		output_shape;
	size_t		n_params;		/* P: floats in the parameter block */
	size_t		n_trainable;	/* floats the optimizer updates */
} DlModelSpec;

/*
 * Allocate an empty spec with room for n_layers layers, each set to
 * Dense defaults.  Free with dl_model_spec_free().
 */
DlModelSpec *dl_model_spec_create(int n_layers, const DlAllocator *alloc, DlError *err);

void		dl_model_spec_free(DlModelSpec *spec, const DlAllocator *alloc);

/*
 * Compute every layer's in/out shape and parameter offsets, and check
 * that the layers fit together (e.g. Conv2D needs a rank-3 input, output
 * sizes must be positive, sizes must not overflow).  Errors name the layer.
 * Must be called once after the layers are filled in.
 */
DlStatus	dl_model_spec_finalize(DlModelSpec *spec, DlError *err);

/*
 * 64-bit fingerprint of the architecture: layer kinds, shapes, activations
 * and parameter layout (not names, initializers or trainable flags).  Two
 * specs with equal fingerprints accept each other's weight blocks.
 */
uint64_t	dl_model_spec_fingerprint(const DlModelSpec *spec);

#endif							/* DL_SPEC_H */
