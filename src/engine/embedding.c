/*-------------------------------------------------------------------------
 *
 * embedding.c
 *	  Keras Embedding: a lookup of rows of the embeddings matrix.
 *
 * The ids arrive as float32 numbers (a packed buffer's features): each
 * must be an integer in [0, input_dim).  A bad id cannot index the
 * matrix: its output row is zero, its gradient goes nowhere, and the
 * forward kernel reports it to the caller (model.c), which fails the
 * call naming the layer, the sample and the value.  float32 holds every
 * integer up to 2^24 exactly, so vocabularies of up to 16.7 million ids
 * are read as written.
 *
 * The backward pass adds each row of dy into the row of its id, in the
 * order of the batch: ids repeated in a batch sum their gradients.
 *
 * IDENTIFICATION
 *	  src/engine/embedding.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "dl_kernels.h"

/* Is v an id of a vocabulary of V: an integer in [0, V)? */
static inline bool
id_ok(float v, int64_t V)
{
	return v >= 0.0f && (double) v < (double) V && v == floorf(v);
}

int64_t
dl_embedding_check(const float *x, int64_t N, int64_t V)
{
	for (int64_t i = 0; i < N; i++)
		if (!id_ok(x[i], V))
			return i;
	return -1;
}

int64_t
dl_embedding_forward(float *y, const float *x, const float *E, int64_t N, int64_t V,
					 int64_t D)
{
	int64_t		bad = -1;

	for (int64_t i = 0; i < N; i++)
	{
		float	   *yr = y + i * D;

		if (!id_ok(x[i], V))
		{
			if (bad < 0)
				bad = i;
			memset(yr, 0, (size_t) D * sizeof(float));
			continue;
		}
		memcpy(yr, E + (int64_t) x[i] * D, (size_t) D * sizeof(float));
	}
	return bad;
}

void
dl_embedding_backward(float *dE, const float *dy, const float *x, int64_t N, int64_t V,
					  int64_t D)
{
	for (int64_t i = 0; i < N; i++)
	{
		float	   *er;
		const float *dr = dy + i * D;

		if (!id_ok(x[i], V))
			continue;
		er = dE + (int64_t) x[i] * D;
		for (int64_t j = 0; j < D; j++)
			er[j] += dr[j];
	}
}
