/*-------------------------------------------------------------------------
 *
 * dl_spec.h
 *	  A model's architecture: its inputs, its layers in order, its outputs.
 *
 * A DlModelSpec is what the Keras JSON reader produces and what a DlModel
 * is built from.  InputLayers are not layers here: their shapes become
 * the model's inputs.  The layers form a graph (any DAG): each reads the
 * outputs of earlier layers or the model's inputs (DlLayer.in), so their
 * order is a topological one, and it is also the order of the parameter
 * block, Keras' get_weights() order.  A chain (a Sequential model) is the
 * default: one input, each layer reading the one before, the last layer
 * the output.  After dl_model_spec_finalize() every layer knows its input
 * and output shapes, its slice of the parameter block and its plan (how
 * the executor runs it, dl_layer.h).
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

/* Most inputs, and most outputs, of a model. */
#define DL_MAX_IO 16

typedef struct DlModelSpec
{
	char		name[DL_NAME_MAX];	/* Keras model name, may be empty */
	DlShape		input_shape;	/* input 0, per sample, without batch */
	int			n_layers;
	DlLayer    *layers;			/* (n_layers), in topological order */

	/*
	 * Inputs and outputs.  dl_model_spec_create makes one input and
	 * n_outputs 0, which finalize reads as one output, the last layer.
	 */
	int			n_inputs;		/* 1 .. DL_MAX_IO */
	DlShape		input_shapes[DL_MAX_IO];	/* [0]: finalize copies input_shape */
	char		input_names[DL_MAX_IO][DL_NAME_MAX];	/* InputLayer names, for messages */
	int			n_outputs;		/* 1 .. DL_MAX_IO */
	int			outputs[DL_MAX_IO]; /* the layer giving each output */

	/* Filled by dl_model_spec_finalize() */
	DlShape		output_shape;	/* output 0 */
	DlShape		output_shapes[DL_MAX_IO];
	size_t		n_params;		/* P: floats in the parameter block */
	size_t		n_trainable;	/* floats the optimizer updates */
	bool		is_chain;		/* one input, one output, each layer reading
								 * the one before */
	size_t		ws_train;		/* floats per sample of the activation arena,
								 * training forward (layers' plan.out_train) */
	size_t		ws_infer;		/* the same, inference forward */
	size_t		ws_grad;		/* floats per sample of the gradient arena */
} DlModelSpec;

/*
 * Allocate an empty spec with room for n_layers layers, each set to
 * Dense defaults.  Free with dl_model_spec_free().
 */
DlModelSpec *dl_model_spec_create(int n_layers, const DlAllocator *alloc, DlError *err);

void		dl_model_spec_free(DlModelSpec *spec, const DlAllocator *alloc);

/*
 * Compute every layer's in/out shape, parameter offsets and plan, and
 * check that the layers fit together (e.g. Conv2D needs a rank-3 input,
 * output sizes must be positive, sizes must not overflow, a merge's
 * inputs agree in shape, a layer reads only earlier layers).  Errors name
 * the layer.  Must be called once after the layers are filled in.
 */
DlStatus	dl_model_spec_finalize(DlModelSpec *spec, DlError *err);

/*
 * 64-bit fingerprint of the architecture: layer kinds, shapes, activations,
 * parameter layout and, for a model that is not a chain, its graph (not
 * names, initializers or trainable flags).  Two specs with equal
 * fingerprints accept each other's weight blocks.
 */
uint64_t	dl_model_spec_fingerprint(const DlModelSpec *spec);

#endif							/* DL_SPEC_H */
