/*-------------------------------------------------------------------------
 *
 * dl_tensor.h
 *	  Shapes, the dimension legend and the memory layout, chosen once.
 *
 * Dimension legend used in every shape comment of the engine:
 *	 B  = batch size (samples in a mini-batch)
 *	 N  = number of samples in a data set or partition
 *	 H, W = height and width of an image-like tensor
 *	 C  = channels (input channels of a convolution: Cin)
 *	 OH, OW, OC = output height, width and channels
 *	 KH, KW = kernel height and width
 *	 I, O = input and output features of a Dense layer
 *	 K  = width of the model output (classes for classification)
 *	 P  = number of parameters in the model's float32 block
 *
 * Layout: channels-last (NHWC), exactly as Keras.  A sample of shape
 * (H, W, C) is H*W*C contiguous floats with C varying fastest; a batch is B
 * such samples back to back.  All tensors are float32, C order.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_tensor.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_TENSOR_H
#define DL_TENSOR_H

#include <stdint.h>
#include <stddef.h>

#define DL_MAX_RANK 4

/* Per-sample shape (the batch dimension is never included). */
typedef struct DlShape
{
	int			rank;			/* 1..DL_MAX_RANK */
	int64_t		dims[DL_MAX_RANK];
} DlShape;

/* Number of elements in one sample (product of dims); 0 if rank is 0. */
static inline int64_t
dl_shape_size(const DlShape *s)
{
	int64_t		n = s->rank > 0 ? 1 : 0;

	for (int i = 0; i < s->rank; i++)
		n *= s->dims[i];
	return n;
}

/* Last dimension (features or channels). */
static inline int64_t
dl_shape_last(const DlShape *s)
{
	return s->rank > 0 ? s->dims[s->rank - 1] : 0;
}

#endif							/* DL_TENSOR_H */
