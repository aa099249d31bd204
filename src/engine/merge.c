/*-------------------------------------------------------------------------
 *
 * merge.c
 *	  The merge layers: Add, Subtract, Multiply, Average, Maximum,
 *	  Minimum and Concatenate.
 *
 * The element-wise merges fold their inputs left to right, as Keras'
 * _Merge layers do (output = x0; output = op(output, xi) ...), Average
 * dividing the sum by k at the end; the shapes are equal (finalize
 * checks: no broadcasting).  A ReLU layer reading the merge can be fused
 * into the last pass (a residual block's Add then ReLU is one pass).  Their backward passes give one input's
 * gradient per call, written or added, so that a tensor read twice (a
 * residual block's shortcut, Add()([x, x])) collects the sum without a
 * buffer of its own.  Maximum and Minimum send dy to the first input
 * holding the extreme, which is what TensorFlow's gradient of its fold
 * does (maximum(a, b) gives a its gradient where a >= b); TensorFlow.js
 * agrees.
 *
 * Concatenate sees every tensor as (outer, width) rows: outer counts the
 * batch and the axes before the concatenation axis, width the axis and
 * those after; each output row is the inputs' rows side by side.
 *
 * IDENTIFICATION
 *	  src/engine/merge.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "dl_kernels.h"

void
dl_add_into(float *dst, const float *src, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		dst[i] += src[i];
}

/* y (n) = op(a, b) for an element-wise merge kind; y may be a. */
static void
merge_fold(DlLayerKind kind, float *y, const float *a, const float *b, int64_t n)
{
	switch (kind)
	{
		case DL_LAYER_ADD:
		case DL_LAYER_AVERAGE:
			for (int64_t i = 0; i < n; i++)
				y[i] = a[i] + b[i];
			break;
		case DL_LAYER_SUBTRACT:
			for (int64_t i = 0; i < n; i++)
				y[i] = a[i] - b[i];
			break;
		case DL_LAYER_MULTIPLY:
			for (int64_t i = 0; i < n; i++)
				y[i] = a[i] * b[i];
			break;
		case DL_LAYER_MAXIMUM:
			for (int64_t i = 0; i < n; i++)
				y[i] = a[i] >= b[i] ? a[i] : b[i];
			break;
		case DL_LAYER_MINIMUM:
			for (int64_t i = 0; i < n; i++)
				y[i] = a[i] <= b[i] ? a[i] : b[i];
			break;
		default:
			break;
	}
}

void
dl_merge_forward(DlLayerKind kind, float *y, const float *const *x, int k, int64_t n,
				 DlActivation act)
{
	/* a residual block's Add and its ReLU: one pass */
	if (kind == DL_LAYER_ADD && k == 2 && act == DL_ACT_RELU)
	{
		const float *a = x[0];
		const float *b = x[1];

		for (int64_t i = 0; i < n; i++)
		{
			float		v = a[i] + b[i];

			y[i] = v > 0.0f ? v : 0.0f;
		}
		return;
	}
	merge_fold(kind, y, x[0], x[1], n);
	for (int j = 2; j < k; j++)
		merge_fold(kind, y, y, x[j], n);
	if (kind == DL_LAYER_AVERAGE)
		for (int64_t i = 0; i < n; i++)
			y[i] /= (float) k;
	if (act == DL_ACT_RELU)
		for (int64_t i = 0; i < n; i++)
			y[i] = y[i] > 0.0f ? y[i] : 0.0f;
}

/* Is input j the first of the k inputs holding the extreme at position i? */
static inline bool
holds_extreme(bool max, int j, const float *const *x, int k, int64_t i)
{
	float		v = x[j][i];

	for (int q = 0; q < k; q++)
	{
		float		u = x[q][i];

		if (q < j ? (max ? u >= v : u <= v) : (max ? u > v : u < v))
			return false;
	}
	return true;
}

void
dl_merge_backward(DlLayerKind kind, float *dx, bool add, int j, const float *dy,
				  const float *const *x, int k, int64_t n)
{
	if (kind == DL_LAYER_ADD)
	{
		/* a residual block's shortcut: a copy or one add */
		if (add)
			dl_add_into(dx, dy, n);
		else
			memcpy(dx, dy, (size_t) n * sizeof(float));
		return;
	}
	for (int64_t i = 0; i < n; i++)
	{
		float		g;

		switch (kind)
		{
			case DL_LAYER_SUBTRACT:
				g = j == 0 ? dy[i] : -dy[i];
				break;
			case DL_LAYER_MULTIPLY:
				g = dy[i];
				for (int q = 0; q < k; q++)
					if (q != j)
						g *= x[q][i];
				break;
			case DL_LAYER_AVERAGE:
				g = dy[i] / (float) k;
				break;
			case DL_LAYER_MAXIMUM:
			case DL_LAYER_MINIMUM:
				g = holds_extreme(kind == DL_LAYER_MAXIMUM, j, x, k, i) ? dy[i] : 0.0f;
				break;
			default:
				g = dy[i];
				break;
		}
		dx[i] = add ? dx[i] + g : g;
	}
}

void
dl_concat_forward(float *y, const float *const *x, const int64_t *width, int k, int64_t outer)
{
	int64_t		total = 0;

	for (int j = 0; j < k; j++)
		total += width[j];
	for (int64_t r = 0; r < outer; r++)
	{
		float	   *yr = y + r * total;

		for (int j = 0; j < k; j++)
		{
			memcpy(yr, x[j] + r * width[j], (size_t) width[j] * sizeof(float));
			yr += width[j];
		}
	}
}

void
dl_concat_backward(float *dx, bool add, int j, const float *dy, const int64_t *width, int k,
				   int64_t outer)
{
	int64_t		total = 0;
	int64_t		first = 0;		/* input j's first column */

	for (int q = 0; q < k; q++)
	{
		if (q == j)
			first = total;
		total += width[q];
	}
	for (int64_t r = 0; r < outer; r++)
	{
		const float *src = dy + r * total + first;
		float	   *dst = dx + r * width[j];

		if (add)
			dl_add_into(dst, src, width[j]);
		else
			memcpy(dst, src, (size_t) width[j] * sizeof(float));
	}
}
