/*-------------------------------------------------------------------------
 *
 * reshape.c
 *	  Permute and RepeatVector, forward and backward.  (Reshape needs no
 *	  kernel: like Flatten it is its input, read with another shape.)
 *
 * Permute walks the output in order, finding each element's input by
 * the input strides taken in the output's axis order; its backward pass
 * is the same walk with the copy the other way.  RepeatVector copies
 * each sample's vector n times; its backward pass sums the n copies.
 *
 * IDENTIFICATION
 *	  src/engine/reshape.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "dl_kernels.h"

/*
 * One sample: walk the output in order (o), the input offset i of each
 * element following (the input's strides taken in the output's axis
 * order), and copy dst[o] = src[i] (gather: the forward pass) or
 * dst[i] = src[o] (the backward pass).
 */
static void
permute_walk(float *dst, const float *src, const int64_t *in_dims, const int *perm, int rank,
			 bool gather)
{
	int64_t		in_stride[DL_MAX_RANK];
	int64_t		out_dims[DL_MAX_RANK];
	int64_t		step[DL_MAX_RANK];
	int64_t		idx[DL_MAX_RANK] = {0};
	int64_t		n = 1;
	int64_t		i = 0;

	in_stride[rank - 1] = 1;
	for (int d = rank - 2; d >= 0; d--)
		in_stride[d] = in_stride[d + 1] * in_dims[d + 1];
	for (int d = 0; d < rank; d++)
	{
		out_dims[d] = in_dims[perm[d]];
		step[d] = in_stride[perm[d]];
		n *= out_dims[d];
	}
	for (int64_t o = 0; o < n; o++)
	{
		if (gather)
			dst[o] = src[i];
		else
			dst[i] = src[o];
		/* the odometer: the next output index, and its input offset */
		for (int d = rank - 1; d >= 0; d--)
		{
			i += step[d];
			if (++idx[d] < out_dims[d])
				break;
			i -= step[d] * out_dims[d];
			idx[d] = 0;
		}
	}
}

/* permute_walk over each of B samples of in_dims. */
static void
permute_batch(float *dst, const float *src, int64_t B, const int64_t *in_dims, const int *perm,
			  int rank, bool forward)
{
	int64_t		n = 1;

	for (int d = 0; d < rank; d++)
		n *= in_dims[d];
	for (int64_t b = 0; b < B; b++)
		permute_walk(dst + b * n, src + b * n, in_dims, perm, rank, forward);
}

void
dl_permute_forward(float *y, const float *x, int64_t B, const int64_t *in_dims,
				   const int *perm, int rank)
{
	permute_batch(y, x, B, in_dims, perm, rank, true);
}

void
dl_permute_backward(float *dx, const float *dy, int64_t B, const int64_t *in_dims,
					const int *perm, int rank)
{
	permute_batch(dx, dy, B, in_dims, perm, rank, false);
}

void
dl_repeat_forward(float *y, const float *x, int64_t B, int64_t n, int64_t F)
{
	for (int64_t b = 0; b < B; b++)
		for (int64_t k = 0; k < n; k++)
			memcpy(y + (b * n + k) * F, x + b * F, (size_t) F * sizeof(float));
}

void
dl_repeat_backward(float *dx, const float *dy, int64_t B, int64_t n, int64_t F)
{
	for (int64_t b = 0; b < B; b++)
	{
		float	   *d = dx + b * F;

		memcpy(d, dy + b * n * F, (size_t) F * sizeof(float));
		for (int64_t k = 1; k < n; k++)
			for (int64_t j = 0; j < F; j++)
				d[j] += dy[(b * n + k) * F + j];
	}
}
