/*-------------------------------------------------------------------------
 *
 * dl_layer.h
 *	  Layer configuration: what a Keras layer says, in C.
 *
 * A DlLayer holds the attributes read from the Keras JSON plus the shapes
 * and parameter offsets that dl_model_spec_finalize() computes.  The
 * parameters of a layer occupy [param_offset, param_offset + n_params) of
 * the model's float32 block, in Keras get_weights() order:
 *	 Dense:              kernel (I, O), then bias (O)
 *	 Conv2D:             kernel (KH, KW, C, OC), then bias (OC)
 *	 BatchNormalization: gamma (C), beta (C), moving_mean (C), moving_variance (C)
 *	                     (gamma absent when scale=false, beta when center=false)
 *	 Embedding:          embeddings (input_dim, output_dim)
 *	 Conv1D:             kernel (K, C, OC), then bias (OC)
 *	 LSTM, GRU,          kernel (I, G*U), recurrent_kernel (U, G*U), bias (G*U)
 *	 SimpleRNN:          with G = 4 (gates i, f, c, o), 3 (z, r, h) or 1; a
 *	                     GRU with reset_after has bias (2, 3U): input, then
 *	                     recurrent; Bidirectional: the forward layer's, then
 *	                     the backward layer's
 *	 DepthwiseConv2D:    depthwise_kernel (KH, KW, C, M), then bias (C*M)
 *	 SeparableConv2D:    depthwise_kernel (KH, KW, C, M), pointwise_kernel
 *	                     (1, 1, C*M, OC), then bias (OC)
 *	 LayerNormalization: gamma (C), beta (C) (each absent as for BN)
 *	 PReLU:              alpha (the input shape, shared axes of size 1)
 * Other layers have no parameters.
 *
 * A layer reads n_in tensors (in[]), each the output of an earlier layer
 * of the spec or one of the model's inputs: that is all a graph is (see
 * dl_spec.h).  Merge layers (Add ... Concatenate) read two or more, every
 * other kind exactly one.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_layer.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_LAYER_H
#define DL_LAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "madlib_dl/dl_tensor.h"

#define DL_NAME_MAX 128

/*
 * The layer kinds, declared once: X(KIND, name) for DL_LAYER_<KIND> and
 * its name (dl_layer_kind_name).  The order is the enum's values, which
 * are part of stored fingerprints: append only.
 */
#define DL_LAYER_KINDS(X) \
	X(DENSE, "Dense") \
	X(CONV2D, "Conv2D") \
	X(MAXPOOL2D, "MaxPooling2D") \
	X(AVGPOOL2D, "AveragePooling2D") \
	X(GLOBALAVGPOOL2D, "GlobalAveragePooling2D") \
	X(FLATTEN, "Flatten") \
	X(DROPOUT, "Dropout") \
	X(ACTIVATION, "Activation") \
	X(BATCHNORM, "BatchNormalization") \
	/* appended: the values above are part of stored fingerprints */ \
	X(GLOBALMAXPOOL2D, "GlobalMaxPooling2D") \
	X(ZEROPADDING2D, "ZeroPadding2D") \
	X(CROPPING2D, "Cropping2D") \
	X(UPSAMPLING2D, "UpSampling2D")	/* nearest neighbour */ \
	X(ADD, "Add")				/* merges: element-wise over equal shapes ... */ \
	X(SUBTRACT, "Subtract")		/* exactly two inputs: in[0] - in[1] */ \
	X(MULTIPLY, "Multiply") \
	X(AVERAGE, "Average") \
	X(MAXIMUM, "Maximum") \
	X(MINIMUM, "Minimum") \
	X(CONCATENATE, "Concatenate")	/* ... and joined along concat_axis */ \
	/* text and sequences (recurrent.c, embedding.c), 1-D layers (run by */ \
	/* the 2-D kernels with a height of 1) and the layers after them */ \
	X(EMBEDDING, "Embedding") \
	X(CONV1D, "Conv1D") \
	X(MAXPOOL1D, "MaxPooling1D") \
	X(AVGPOOL1D, "AveragePooling1D") \
	X(GLOBALMAXPOOL1D, "GlobalMaxPooling1D") \
	X(GLOBALAVGPOOL1D, "GlobalAveragePooling1D") \
	X(LSTM, "LSTM") \
	X(GRU, "GRU") \
	X(SIMPLERNN, "SimpleRNN") \
	X(DEPTHWISECONV2D, "DepthwiseConv2D") \
	X(SEPARABLECONV2D, "SeparableConv2D") \
	X(LAYERNORM, "LayerNormalization") \
	X(RELU, "ReLU")				/* ReLU with arguments, LeakyReLU */ \
	X(PRELU, "PReLU") \
	X(RESHAPE, "Reshape") \
	X(PERMUTE, "Permute") \
	X(REPEATVECTOR, "RepeatVector")

#define DL_LAYER_ENUM_ENTRY(kind, name) DL_LAYER_##kind,

typedef enum DlLayerKind
{
	DL_LAYER_KINDS(DL_LAYER_ENUM_ENTRY)
} DlLayerKind;

/* How many kinds there are (not an enum member, so switches stay complete). */
#define DL_LAYER_COUNT_ENTRY(kind, name) + 1
#define DL_LAYER_N_KINDS (0 DL_LAYER_KINDS(DL_LAYER_COUNT_ENTRY))

/*
 * The case labels of the element-wise merges, Add to Minimum, for a switch
 * on DlLayerKind: "DL_LAYER_CASES_ELEMENTWISE:".
 */
#define DL_LAYER_CASES_ELEMENTWISE \
	case DL_LAYER_ADD: \
	case DL_LAYER_SUBTRACT: \
	case DL_LAYER_MULTIPLY: \
	case DL_LAYER_AVERAGE: \
	case DL_LAYER_MAXIMUM: \
	case DL_LAYER_MINIMUM

/* Most tensors one layer reads (a merge's inputs), a bound for hostile JSON. */
#define DL_MAX_FAN_IN 64

/* Is kind a merge layer (two or more inputs)? */
static inline bool
dl_layer_is_merge(DlLayerKind kind)
{
	return kind >= DL_LAYER_ADD && kind <= DL_LAYER_CONCATENATE;
}

/* Is kind a recurrent layer (LSTM, GRU, SimpleRNN, or one Bidirectional wraps)? */
static inline bool
dl_layer_is_recurrent(DlLayerKind kind)
{
	return kind == DL_LAYER_LSTM || kind == DL_LAYER_GRU || kind == DL_LAYER_SIMPLERNN;
}

typedef enum DlActivation
{
	DL_ACT_LINEAR = 0,
	DL_ACT_RELU,
	DL_ACT_SIGMOID,
	DL_ACT_TANH,
	DL_ACT_SOFTMAX,				/* over the last axis */
	DL_ACT_ELU,					/* alpha = 1 */
	DL_ACT_SOFTPLUS,
	/* appended: the values above are part of stored fingerprints */
	DL_ACT_SELU,
	DL_ACT_SWISH,				/* x * sigmoid(x), Keras' silu */
	DL_ACT_GELU,				/* x * Phi(x), exact (erf), Keras' default */
	DL_ACT_SOFTSIGN,
	DL_ACT_HARD_SIGMOID,		/* clip(0.2 x + 0.5, 0, 1): TF.js, tf.keras 2 */
	DL_ACT_EXPONENTIAL,
	DL_ACT_HARD_SIGMOID_K3		/* clip(x / 6 + 0.5, 0, 1): Keras 3 */
} DlActivation;

/*
 * Whether act's derivative needs its input x (swish, gelu); every other
 * activation's is a function of its output y (activation.c).
 */
static inline bool
dl_activation_needs_input(DlActivation act)
{
	return act == DL_ACT_SWISH || act == DL_ACT_GELU;
}

/* Bidirectional's merge_mode; NONE: a layer of one direction. */
typedef enum DlBidirMerge
{
	DL_BIDIR_NONE = 0,
	DL_BIDIR_CONCAT,
	DL_BIDIR_SUM,
	DL_BIDIR_AVE,
	DL_BIDIR_MUL
} DlBidirMerge;

typedef enum DlPadding
{
	DL_PADDING_VALID = 0,
	DL_PADDING_SAME,
	DL_PADDING_CAUSAL			/* Conv1D: (K - 1) * dilation zeros before */
} DlPadding;

typedef enum DlInitKind
{
	DL_INIT_ZEROS = 0,
	DL_INIT_ONES,
	DL_INIT_CONSTANT,			/* value */
	DL_INIT_RANDOM_NORMAL,		/* mean, stddev */
	DL_INIT_RANDOM_UNIFORM,		/* minval, maxval */
	DL_INIT_TRUNCATED_NORMAL,	/* mean, stddev; redraw beyond 2 stddev */
	DL_INIT_VARIANCE_SCALING,	/* scale, mode, distribution; glorot/he/lecun map here */
	DL_INIT_ORTHOGONAL			/* gain (in scale): the recurrent kernels' default */
} DlInitKind;

typedef enum DlFanMode
{
	DL_FAN_IN = 0,
	DL_FAN_OUT,
	DL_FAN_AVG
} DlFanMode;

typedef enum DlDistribution
{
	DL_DIST_TRUNCATED_NORMAL = 0,	/* Keras "truncated_normal" and legacy "normal" */
	DL_DIST_UNTRUNCATED_NORMAL,
	DL_DIST_UNIFORM
} DlDistribution;

typedef struct DlInitializer
{
	DlInitKind	kind;
	double		value;			/* CONSTANT */
	double		mean;			/* RANDOM_NORMAL, TRUNCATED_NORMAL */
	double		stddev;			/* RANDOM_NORMAL, TRUNCATED_NORMAL */
	double		minval;			/* RANDOM_UNIFORM */
	double		maxval;			/* RANDOM_UNIFORM */
	double		scale;			/* VARIANCE_SCALING */
	DlFanMode	mode;			/* VARIANCE_SCALING */
	DlDistribution distribution;	/* VARIANCE_SCALING */
	bool		has_seed;		/* the JSON gave "seed": n */
	uint64_t	seed;
} DlInitializer;

/* Kernel (or bias) regularizer: adds l1*sum|w| + l2*sum w^2 to the loss. */
typedef struct DlRegularizer
{
	double		l1;
	double		l2;
} DlRegularizer;

/*
 * What the executor (model.c) needs to know about a layer's place in the
 * graph, worked out once by dl_model_spec_finalize().  Buffer offsets are
 * in floats per sample: a batch of B samples finds the buffer at B times
 * the offset in its arena (see model_impl.h).  DL_PLAN_NONE: no buffer.
 */
#define DL_PLAN_NONE SIZE_MAX

typedef struct DlLayerPlan
{
	int			n_consumers;	/* in[] entries of later layers naming it */
	bool		is_output;		/* one of the model's outputs */
	bool		reaches_output; /* some output depends on it */
	bool		backward;		/* the backward pass runs it: it reaches an
								 * output and it or a layer it depends on
								 * has trainable floats */
	bool		relu_fused;		/* MaxPooling2D: its backward also applies
								 * the ReLU backward of the layer it reads */
	bool		relu_by_consumer;	/* that layer: skip its own ReLU backward */
	bool		fwd_relu;		/* BatchNormalization or an element-wise
								 * merge: its forward also applies the ReLU
								 * of the one Activation reading it, and its
								 * backward that ReLU's backward */
	bool		fwd_relu_done;	/* that Activation: its input already is its
								 * output, and its gradient its input's */
	uint64_t	grad_first;		/* bit j: the gradient this layer gives its
								 * input j is the first that tensor gets
								 * (written); otherwise it is added */
	size_t		out_train;		/* output buffer, training forward */
	size_t		out_infer;		/* output buffer, inference forward */
	size_t		grad;			/* gradient of the output, in the gradient
								 * arena; NONE when backward is false */
	size_t		grad_tmp;		/* where an input gradient that is added is
								 * computed first; NONE when none is */
} DlLayerPlan;

typedef struct DlLayer
{
	DlLayerKind kind;
	char		name[DL_NAME_MAX];	/* Keras layer name, for messages */
	bool		trainable;		/* false: parameters are frozen */
	DlActivation activation;	/* Dense, the convolutions, Activation; the
								 * recurrent layers' candidate and state */

	/* Dense; Embedding's output_dim; the recurrent layers' */
	int64_t		units;
	bool		use_bias;		/* Dense, the convolutions, recurrent layers */

	/* Conv2D */
	int64_t		filters;
	int			kernel_size[2]; /* KH, KW */
	int			strides[2];		/* Conv2D and pooling: SH, SW */
	DlPadding	padding;		/* Conv2D and pooling */

	int			dilation[2];	/* Conv2D: DH, DW (1: none; with > 1 the
								 * strides are 1, as Keras requires) */

	/* MaxPooling2D, AveragePooling2D */
	int			pool_size[2];	/* PH, PW */

	/* ZeroPadding2D (rows and columns added), Cropping2D (removed) */
	int			margins[4];		/* top, bottom, left, right */

	/* UpSampling2D: each pixel repeated size[0] times down, size[1] across */
	int			size[2];

	/* Concatenate: the per-sample axis (0 .. rank - 1, batch not counted) */
	int			concat_axis;

	/* Dropout */
	double		rate;
	bool		has_seed;
	uint64_t	seed;

	/* BatchNormalization, LayerNormalization (axis must be the last axis) */
	double		momentum;
	double		epsilon;
	bool		center;
	bool		scale;

	/* Embedding: ids 0 .. input_dim - 1, each a vector of units floats */
	int64_t		input_dim;

	/*
	 * LSTM, GRU, SimpleRNN (units, activation, use_bias above): the time
	 * axis is the input's first, of T steps, the features its last
	 */
	DlActivation recurrent_activation;
	bool		return_sequences;	/* output (T, units), else (units) */
	bool		go_backwards;	/* read the steps from the last */
	bool		reset_after;	/* GRU: the reset gate after the recurrent
								 * product (Keras' default, PyTorch's GRU) */
	bool		unit_forget_bias;	/* LSTM: initialize the forget bias to 1 */
	DlBidirMerge bidir;			/* Bidirectional: two layers, merged */

	/* DepthwiseConv2D, SeparableConv2D (and Conv2D's fields) */
	int64_t		depth_multiplier;

	/* ReLU with arguments, LeakyReLU (negative_slope = alpha) */
	bool		has_max_value;
	double		max_value;
	double		negative_slope;
	double		threshold;

	/* PReLU: bit d set: alpha is shared along per-sample axis d */
	unsigned	shared_axes;

	/* Reshape (target, -1 resolved), Permute (axis d of the output is
	 * axis perm[d] of the input), RepeatVector (n copies) */
	DlShape		target_shape;
	int			perm[DL_MAX_RANK];
	int64_t		repeat_n;

	DlInitializer kernel_init;	/* Dense, Conv2D; Embedding's embeddings,
								 * the depthwise kernels, PReLU's alpha */
	DlInitializer bias_init;	/* Dense, Conv2D */
	DlInitializer recurrent_init;	/* LSTM, GRU, SimpleRNN */
	DlInitializer pointwise_init;	/* SeparableConv2D */
	DlInitializer gamma_init;	/* BatchNormalization */
	DlInitializer beta_init;
	DlInitializer moving_mean_init;
	DlInitializer moving_variance_init;
	DlRegularizer kernel_reg;
	DlRegularizer bias_reg;
	DlRegularizer recurrent_reg;	/* LSTM, GRU, SimpleRNN */
	DlRegularizer pointwise_reg;	/* SeparableConv2D */

	/*
	 * The tensors the layer reads: in[j] >= 0 is the output of layer
	 * in[j], which comes earlier in the spec; in[j] < 0 is the model's
	 * input -1 - in[j].  n_in 0 (what dl_layer_defaults leaves) means a
	 * chain link: the layer before, or input 0 for the first layer;
	 * finalize writes it out.
	 */
	int			n_in;
	int			in[DL_MAX_FAN_IN];

	/* Filled by dl_model_spec_finalize() */
	DlShape		in_shape;		/* of in[0]; a merge's inputs all have it,
								 * but for Concatenate's axis */
	DlShape		out_shape;
	size_t		param_offset;	/* first float of this layer in the block */
	size_t		n_params;		/* all floats of the layer */
	size_t		n_trainable;	/* leading floats that the optimizer updates
								 * (BatchNormalization: gamma and beta only);
								 * 0 when trainable is false */
	DlLayerPlan plan;			/* how the model runs it (spec.c) */
} DlLayer;

/* Set every attribute of *layer to the Keras default for its kind. */
void		dl_layer_defaults(DlLayer *layer, DlLayerKind kind);

/* Gate blocks of a recurrent cell: LSTM 4 (i, f, c, o), GRU 3 (z, r, h), SimpleRNN 1. */
int			dl_rnn_gates(DlLayerKind kind);

/* Static names: "Dense", "relu", ... as Keras spells them. */
const char *dl_layer_kind_name(DlLayerKind kind);
const char *dl_activation_name(DlActivation act);

#endif							/* DL_LAYER_H */
