/*-------------------------------------------------------------------------
 *
 * onnx_import_impl.h
 *	  Shared by the files of the ONNX importer (onnx_import.c: the driver;
 *	  onnx_import_ops.c: the layer operators; onnx_import_rnn.c: LSTM and
 *	  GRU; onnx_import_fold.c: constants, shape arithmetic and GELU;
 *	  onnx_import_core.c: what they all use): the importer's state and its
 *	  helpers.  Internal to the engine.  Calls go driver -> converters ->
 *	  core, never back.
 *
 * IDENTIFICATION
 *	  src/engine/onnx_import_impl.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_ONNX_IMPORT_IMPL_H
#define DL_ONNX_IMPORT_IMPL_H

#include "madlib_dl/dl_onnx.h"
#include "onnx_impl.h"

typedef enum Layout
{
	LAY_PLAIN = 0,
	LAY_NHWC,
	LAY_TIME_MAJOR
} Layout;

typedef enum ValKind
{
	VAL_CONST = 0,
	VAL_TENSOR,
	VAL_RNN_Y,					/* an RNN's Y: (T, 1, N, H) */
	VAL_RNN_YH,					/* an RNN's Y_h: (D, N, H) */
	VAL_RNN_YH_DIR,				/* one direction of a bidirectional Y_h: (N, H) */
	VAL_RNN_Y_TNDH,				/* a bidirectional Y as (T, N, 2, H) */
	VAL_GELU					/* a step of x * 0.5 * (1 + erf(x / sqrt 2)),
								 * the GELU opsets before 20 write: stage 1
								 * x / sqrt 2, 2 erf, 3 + 1, 4 x * (...) */
} ValKind;

#define MAX_DIMS 8

/* In an integer constant made from Shape: the batch size, not known here. */
#define BATCH_DIM INT64_MIN

typedef struct Val
{
	const char *name;
	ValKind		kind;
	int			rank;			/* ONNX rank, batch included */
	int64_t		dims[MAX_DIMS];
	/* VAL_CONST */
	bool		is_int;
	float	   *f;				/* (count) */
	int64_t    *i;				/* (count) */
	size_t		count;
	bool		zero_fill;		/* ConstantOfShape(0) of a shape holding the
								 * batch size: zeros of unknown count */
	/* VAL_TENSOR */
	int			ref;			/* engine tensor: layer >= 0, input -1 - k */
	Layout		layout;
	int			nhwc_ref;		/* cached Permute of a PLAIN rank-4 value, or INT32_MIN */
	int			plain_ref;		/* cached Permute back of an NHWC value */
	int			rnn;			/* VAL_RNN_*: the record; a TENSOR that is an
								 * RNN's full sequence: its record; else -1 */
	bool		seq_tm;			/* that sequence is time major */
	int			dir;			/* VAL_RNN_YH_DIR: 0 forward, 1 backward;
								 * VAL_GELU: the stage */
	int			gelu_x;			/* VAL_GELU: the value x */
	bool		squash;			/* the engine tensor is this one with its last
								 * two axes merged (a recurrent layer's
								 * directions): a Reshape merging them is free */
	int			bias_layer;		/* a Dense/Conv2D without bias producing it,
								 * to which an Add of a constant folds; or -1 */
} Val;

typedef struct Lay
{
	char		cls[32];
	char		name[DL_NAME_MAX];
	char	   *cfg;			/* JSON members after "name" (may be "") */
	int			n_in;
	int			in[DL_MAX_FAN_IN];
	float	   *w;				/* (nw) Keras order */
	size_t		nw;
	/* Dense/Conv2D awaiting a bias: where it goes */
	int64_t		bias_n;			/* 0: none may fold */
} Lay;

typedef struct Rnn
{
	bool		gru;
	int			x_ref;			/* its input, time major */
	int64_t		T, I, H;
	bool		reverse;
	bool		reset_after;
	int			D;				/* 2: bidirectional (weights: forward's, then backward's) */
	float	   *kernel, *recurrent, *bias;	/* Keras order, D blocks each */
	size_t		n_bias;
	int			layer_seq, layer_last;	/* materialized layers, or -1 */
	char		name[DL_NAME_MAX];
} Rnn;

typedef struct NameSlot
{
	const char *name;
	int			producer;		/* node index, or -1 */
	int			uses;			/* node inputs and graph outputs naming it */
} NameSlot;

typedef struct Im
{
	DlOnnxArena arena;
	DlError    *err;
	int			opset;
	Val		   *vals;
	int			n_vals, cap_vals;
	int		   *hash;			/* open addressing over vals, -1 empty */
	int			hash_cap;
	Lay		   *lays;
	int			n_lays, cap_lays;
	int			n_inputs;
	char		input_names[DL_MAX_IO][DL_NAME_MAX];
	int64_t		input_shapes[DL_MAX_IO][MAX_DIMS];
	int			input_ranks[DL_MAX_IO];
	Rnn		   *rnns;
	int			n_rnns, cap_rnns;
	struct NameSlot *names;		/* every tensor name of the graph: producer, readers */
	size_t		names_cap;
	const Onnx__NodeProto *node;	/* the node being converted, for messages */
} Im;

/* onnx_import_core.c: errors (the node being converted named) */
DlStatus	dl_im_err(Im *im, DlStatus code, const char *fmt,...) DL_PRINTF_FMT(3, 4);
DlStatus	dl_im_oom(Im *im);
DlStatus	dl_im_unsup(Im *im, const char *fmt,...) DL_PRINTF_FMT(2, 3);

/* onnx_import_core.c: values, tensors, attributes */
int			dl_im_val_find(Im *im, const char *name);
Val		   *dl_im_val_produce(Im *im, const char *name);
DlStatus	dl_im_const_from_tensor(Im *im, const Onnx__TensorProto *t, const char *name);
int			dl_im_uses_of(Im *im, const char *name);
NameSlot   *dl_im_name_slot(NameSlot *tab, size_t cap, const char *name);
void		dl_im_make_name(Im *im, const char *s, char *out);
const Onnx__AttributeProto *dl_im_attr(const Onnx__NodeProto *n, const char *name);
int64_t		dl_im_attr_int(const Onnx__NodeProto *n, const char *name, int64_t dflt);
double		dl_im_attr_float(const Onnx__NodeProto *n, const char *name, double dflt);
int			dl_im_attr_ints(const Onnx__NodeProto *n, const char *name, int64_t *v, int max);
bool		dl_im_attr_str_is(const Onnx__NodeProto *n, const char *name, const char *want, const char *dflt);

/* onnx_import_core.c: layers and layouts */
int			dl_im_lay_new(Im *im, const char *cls, const char *name, const char *cfg, int n, const int *refs);
int			dl_im_lay1(Im *im, const char *cls, const char *name, int ref, const char *fmt,...) DL_PRINTF_FMT(5, 6);
float	   *dl_im_lay_weights(Im *im, int li, size_t n);
const char *dl_im_node_label(Im *im);
DlStatus	dl_im_ref_nhwc(Im *im, Val *v, int *ref);
DlStatus	dl_im_ref_plain(Im *im, Val *v, int *ref);
Val		   *dl_im_out_tensor(Im *im, const char *name, int ref, Layout layout, int rank, const int64_t *dims);
Val		   *dl_im_in_val(Im *im, int k);
int			dl_im_norm_axis(int64_t axis, int rank);
DlStatus	dl_im_op_elementwise(Im *im, Val *x, const char *cls, const char *cfg);
DlStatus	dl_im_alias(Im *im, Val *x);

/* onnx_import_ops.c: one converter an operator */
DlStatus	dl_im_op_gemm(Im *im);
DlStatus	dl_im_op_matmul(Im *im);
DlStatus	dl_im_op_binary(Im *im, const char *op);
DlStatus	dl_im_op_variadic(Im *im, const char *op);
DlStatus	dl_im_op_concat(Im *im);
DlStatus	dl_im_op_conv(Im *im);
DlStatus	dl_im_op_pool(Im *im, bool mx);
DlStatus	dl_im_op_global_pool(Im *im, bool mx);
DlStatus	dl_im_op_reduce(Im *im, bool mx);
DlStatus	dl_im_op_batchnorm(Im *im);
DlStatus	dl_im_op_layernorm(Im *im);
DlStatus	dl_im_op_flatten(Im *im);
DlStatus	dl_im_op_reshape(Im *im);
DlStatus	dl_im_op_transpose(Im *im);
DlStatus	dl_im_op_softmax(Im *im);
DlStatus	dl_im_op_gather(Im *im);

/* onnx_import_rnn.c: LSTM, GRU and the Squeeze of their outputs */
int			dl_im_rnn_layer(Im *im, int ri, bool seq);
Val		   *dl_im_rnn_sequence(Im *im, int ri, const char *out, Layout layout, int rank, const int64_t *dims);
DlStatus	dl_im_rnn_last(Im *im, int ri, const char *out);
DlStatus	dl_im_op_rnn(Im *im, bool gru);
DlStatus	dl_im_op_squeeze(Im *im);

/* onnx_import_fold.c: constants, shape arithmetic folded, GELU */
DlStatus	dl_im_op_constant(Im *im);
DlStatus	dl_im_op_shape(Im *im);
DlStatus	dl_im_fold_gather(Im *im, Val *data, Val *idx);
DlStatus	dl_im_op_unsqueeze(Im *im);
DlStatus	dl_im_fold_concat(Im *im);
DlStatus	dl_im_op_constant_of_shape(Im *im);
DlStatus	dl_im_try_gelu(Im *im, const char *op, bool *done);

#endif							/* DL_ONNX_IMPORT_IMPL_H */
