/*-------------------------------------------------------------------------
 *
 * dl_kernels.h
 *	  Internal: forward and backward kernels of every layer type.
 *
 * Argument order is outputs, then inputs, then dimensions (llm.c).
 * Backward kernels ADD into parameter gradients (dW, db, dgamma, dbeta)
 * and OVERWRITE input gradients (dx); dx may be NULL when the input
 * gradient is not needed (first layer).  Shapes use the legend of
 * dl_tensor.h.  Kernels never allocate: workspaces are passed in, sized by
 * the *_workspace_floats helpers.  Kernels cannot fail.
 *
 * IDENTIFICATION
 *	  src/engine/dl_kernels.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_KERNELS_H
#define DL_KERNELS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_layer.h"
#include "madlib_dl/dl_rng.h"

/*
 * DL_VEC_CLONES on a hot element-wise loop compiles it also for AVX2 and
 * AVX-512 and picks the version at load time (GCC function
 * multiversioning), while the build stays portable (no -march).  Only for
 * loops whose every result is one exactly rounded operation or a select
 * (max, ReLU, one add), so all versions give the same bits.
 */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
	!defined(__SANITIZE_ADDRESS__)
#define DL_VEC_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DL_VEC_CLONES
#endif

/*
 * The same for loops of several operations per result whose lanes are
 * independent (per-channel sums in a fixed order, products then sums):
 * with floating-point contraction off, no version fuses a multiply and an
 * add into one rounding (AVX2 and AVX-512 have FMA, the portable build
 * does not), so every version gives the portable build's bits.
 */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
	!defined(__SANITIZE_ADDRESS__)
#define DL_VEC_CLONES_NO_FMA \
	__attribute__((target_clones("avx512f", "avx2", "default"), optimize("fp-contract=off")))
#else
#define DL_VEC_CLONES_NO_FMA
#endif

/* dense.c ------------------------------------------------------------- */

/* y (B,O) = x (B,I) @ W (I,O) + b (O); b may be NULL. */
void		dl_dense_forward(float *y, const float *x, const float *W, const float *b,
							 int64_t B, int64_t I, int64_t O);

/* y (B,O) = act(x (B,I) @ W (I,O) + b (O)), bias and activation fused. */
void		dl_dense_forward_act(float *y, const float *x, const float *W, const float *b,
								 DlActivation act, int64_t B, int64_t I, int64_t O);

/*
 * dx (B,I) = dy (B,O) @ W^T   (skipped when dx is NULL)
 * dW (I,O) += x^T @ dy
 * db (O)   += sum over B of dy (skipped when db is NULL)
 */
void		dl_dense_backward(float *dx, float *dW, float *db, const float *dy,
							  const float *x, const float *W, int64_t B, int64_t I, int64_t O);

/* conv2d.c ------------------------------------------------------------ */

typedef struct DlConvGeom
{
	int64_t		B, H, W, C;		/* input (B,H,W,C) */
	int64_t		OH, OW, OC;		/* output (B,OH,OW,OC) */
	int64_t		KH, KW;			/* kernel (KH,KW,C,OC) */
	int64_t		SH, SW;			/* strides */
	int64_t		DH, DW;			/* dilation: kernel taps DH rows, DW columns
								 * apart (1: adjacent) */
	int64_t		pad_top, pad_left;	/* zero padding before the first row/col */
} DlConvGeom;

/*
 * Geometry from the layer and a batch size, without dilation.  Keras
 * rules: valid: OH = (H - KH) / SH + 1; same: OH = ceil(H / SH),
 * pad_total = max((OH-1)*SH + KH - H, 0), pad_top = pad_total / 2.
 */
void		dl_conv_geom_init(DlConvGeom *g, int64_t B, int64_t H, int64_t W, int64_t C,
							  int64_t OC, int KH, int KW, int SH, int SW, DlPadding padding);

/*
 * The same with dilation DH, DW: the same rules with the dilated kernel's
 * extent (KH - 1) * DH + 1 in place of KH (and KW likewise).
 */
void		dl_conv_geom_init_dilated(DlConvGeom *g, int64_t B, int64_t H, int64_t W, int64_t C,
									  int64_t OC, int KH, int KW, int SH, int SW, int DH, int DW,
									  DlPadding padding);

/*
 * Floats of workspace the conv kernels need (one block of the im2col
 * matrix); SIZE_MAX when that overflows.  The _d form is the same number
 * as a double: exact below 2^53 and never wrapping, for memory estimates.
 */
size_t		dl_conv2d_workspace_floats(const DlConvGeom *g);
double		dl_conv2d_workspace_floats_d(const DlConvGeom *g);

/* y (B,OH,OW,OC) = conv(x (B,H,W,C), K (KH,KW,C,OC)) + b (OC); b may be NULL. */
void		dl_conv2d_forward(float *y, float *work, const float *x, const float *K,
							  const float *b, const DlConvGeom *g);

/* The same followed by act, fused into the pass that adds the bias. */
void		dl_conv2d_forward_act(float *y, float *work, const float *x, const float *K,
								  const float *b, DlActivation act, const DlConvGeom *g);

/*
 * dx (B,H,W,C) overwritten (skipped when NULL), dK (KH,KW,C,OC) +=,
 * db (OC) += (skipped when NULL), from dy (B,OH,OW,OC).
 */
void		dl_conv2d_backward(float *dx, float *dK, float *db, float *work, const float *dy,
							   const float *x, const float *K, const DlConvGeom *g);

/* backend.c ----------------------------------------------------------- */

/*
 * C (M,N) = alpha op(A) op(B) + beta C, row-major, through oneDNN's sgemm
 * or OpenBLAS's (dl_backend.h).  op(A) is (M,K), stored (K,M) when
 * trans_a; op(B) is (K,N), stored (N,K) when trans_b.  M, N, K >= 1, each
 * fitting in an int.  Cannot fail.
 */
void		dl_sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
					 float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
					 float beta, float *C, int64_t ldc);

/*
 * The same product always through OpenBLAS (the im2col convolutions use
 * it), in the signal window when OpenBLAS runs more than one thread
 * (backend.c says why).
 */
void		dl_sgemm_openblas(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
							  float alpha, const float *A, int64_t lda, const float *B,
							  int64_t ldb, float beta, float *C, int64_t ldc);

/* The thread count of dl_backend_set_threads. */
int			dl_backend_threads(void);

/*
 * The signal window around a oneDNN call (backend.c): nothing inside it
 * may call the caller's allocator.
 */
typedef struct DlSignalMask
{
	sigset_t	mask;
	bool		ok;
} DlSignalMask;

/* Block every blockable signal into *saved; restore what was saved. */
void		dl_backend_block_signals(DlSignalMask *saved);
void		dl_backend_restore_signals(const DlSignalMask *saved);

/* conv2d_dnnl.c ------------------------------------------------------- */

/*
 * The same convolutions through oneDNN (dl_backend.h).  DL_OK; or
 * DL_ERR_UNSUPPORTED, with nothing written, when oneDNN is not built in,
 * switched off, refuses the geometry, or would need more scratch than
 * scratch->limit: then use the functions above; or another error
 * (DL_ERR_NO_MEMORY, DL_ERR_INTERNAL), after which the outputs are
 * undefined.  All scratch memory (reordered kernels, oneDNN's own
 * scratchpad) comes from *scratch, which a call grows (through
 * scratch->alloc, outside the signal window, freeing the old one first)
 * to what it needs, never past scratch->limit, so that the allocator is
 * never asked for more than limit + 64 bytes and the next call of the
 * same geometry allocates nothing.  The owner frees scratch->p with
 * scratch->alloc.
 */
/* Scratch buffers start on this boundary; a scratch holds up to limit + DL_SCRATCH_ALIGN bytes. */
#define DL_SCRATCH_ALIGN 64

typedef struct DlScratch
{
	const DlAllocator *alloc;
	void	   *p;				/* NULL or cap bytes */
	size_t		cap;
	size_t		limit;			/* most bytes a call may use (SIZE_MAX: no limit) */
} DlScratch;

/*
 * The scratch budget of a convolution of geometry g (its batch size does
 * not matter) run with the given oneDNN thread count, in bytes:
 *	 (4 + threads) * (kernel + bias, channels padded to 16)
 *	 + (1 + threads) * 64 KiB.
 * A call holds at most four kernel-sized buffers (the reordered kernel,
 * its gradient in oneDNN's layout and in Keras layout, the reordered
 * kernel of the input gradient); oneDNN's scratchpad for its direct (jit)
 * convolutions holds per-thread reduction buffers of the kernel and small
 * per-thread buffers.  oneDNN's gemm-based convolutions also want a
 * per-thread im2col buffer that this budget does not cover: they are
 * refused and run as the engine's own im2col, the same algorithm.
 * 0 when oneDNN is not built in.  A double, so that no geometry wraps.
 */
double		dl_conv2d_dnnl_scratch_budget(const DlConvGeom *g, int threads);

DlStatus	dl_conv2d_dnnl_forward(float *y, const float *x, const float *K, const float *b,
								   DlActivation act, const DlConvGeom *g,
								   DlScratch *scratch, DlError *err);
DlStatus	dl_conv2d_dnnl_backward(float *dx, float *dK, float *db, const float *dy,
									const float *x, const float *K, const DlConvGeom *g,
									DlScratch *scratch, DlError *err);

/* pool.c -------------------------------------------------------------- */

typedef struct DlPoolGeom
{
	int64_t		B, H, W, C;		/* input (B,H,W,C) */
	int64_t		OH, OW;			/* output (B,OH,OW,C) */
	int64_t		PH, PW;			/* window */
	int64_t		SH, SW;			/* strides */
	int64_t		pad_top, pad_left;
} DlPoolGeom;

/* Same output-size rules as convolution, with the window as kernel. */
void		dl_pool_geom_init(DlPoolGeom *g, int64_t B, int64_t H, int64_t W, int64_t C,
							  int PH, int PW, int SH, int SW, DlPadding padding);

/* y (B,OH,OW,C); argmax (B,OH,OW,C) holds the flat input index of each max. */
void		dl_maxpool2d_forward(float *y, int64_t *argmax, const float *x, const DlPoolGeom *g);

/* dx (B,H,W,C) overwritten: zero, then dy scattered to the argmax positions. */
void		dl_maxpool2d_backward(float *dx, const float *dy, const int64_t *argmax,
								  const DlPoolGeom *g);

/*
 * The same fused with the ReLU backward of the layer before the pool:
 * dy reaches an argmax position only where y (B,OH,OW,C), the pool's
 * forward output (= the ReLU output at the argmax), is > 0.  Equal, bit
 * for bit, to dl_maxpool2d_backward followed by
 * dl_activation_backward(DL_ACT_RELU) on the pool's input.
 */
void		dl_maxpool2d_backward_relu(float *dx, const float *dy, const int64_t *argmax,
									   const float *y, const DlPoolGeom *g);

/* Average over the window's in-bounds cells (padding not counted, as Keras). */
void		dl_avgpool2d_forward(float *y, const float *x, const DlPoolGeom *g);
void		dl_avgpool2d_backward(float *dx, const float *dy, const DlPoolGeom *g);

/*
 * y (B,C) = max over the S = H*W positions of x (B,S,C); argmax (B,C)
 * the position s of each maximum (the first of equal ones).
 */
void		dl_global_maxpool2d_forward(float *y, int64_t *argmax, const float *x, int64_t B,
										int64_t S, int64_t C);

/* dx (B,S,C) overwritten: zero but dy (B,C) at each argmax position. */
void		dl_global_maxpool2d_backward(float *dx, const float *dy, const int64_t *argmax,
										 int64_t B, int64_t S, int64_t C);

/* y (B,C) = mean over the S = H*W positions of x (B,S,C). */
void		dl_global_avgpool2d_forward(float *y, const float *x, int64_t B, int64_t S, int64_t C);
void		dl_global_avgpool2d_backward(float *dx, const float *dy, int64_t B, int64_t S, int64_t C);

/* spatial.c ----------------------------------------------------------- */

/*
 * ZeroPadding2D: y (B, H+top+bottom, W+left+right, C) is x (B,H,W,C)
 * framed by zeros; the backward pass crops: dx = dy's inner window.
 * Cropping2D is the same pair the other way round.  m: top, bottom,
 * left, right.  Outputs are overwritten.
 */
void		dl_zeropad2d_forward(float *y, const float *x, int64_t B, int64_t H, int64_t W,
								 int64_t C, const int m[4]);
void		dl_zeropad2d_backward(float *dx, const float *dy, int64_t B, int64_t H, int64_t W,
								  int64_t C, const int m[4]);
void		dl_crop2d_forward(float *y, const float *x, int64_t B, int64_t H, int64_t W,
							  int64_t C, const int m[4]);
void		dl_crop2d_backward(float *dx, const float *dy, int64_t B, int64_t H, int64_t W,
							   int64_t C, const int m[4]);

/*
 * UpSampling2D, nearest: y (B, H*SH, W*SW, C) repeats each pixel of
 * x (B,H,W,C) over an SH x SW block; dx (B,H,W,C) is the sum of dy over
 * the block.  Outputs are overwritten.
 */
void		dl_upsample2d_forward(float *y, const float *x, int64_t B, int64_t H, int64_t W,
								  int64_t C, int SH, int SW);
void		dl_upsample2d_backward(float *dx, const float *dy, int64_t B, int64_t H, int64_t W,
								   int64_t C, int SH, int SW);

/* merge.c ------------------------------------------------------------- */

/*
 * The element-wise merges, y (n) from the k inputs x[0..k-1] (n each):
 * Add sum, Subtract x[0] - x[1], Multiply product, Average sum / k,
 * Maximum, Minimum; folded left to right as Keras does; then act
 * (DL_ACT_LINEAR, or DL_ACT_RELU for a ReLU layer that follows, fused).
 */
void		dl_merge_forward(DlLayerKind kind, float *y, const float *const *x, int k, int64_t n,
							 DlActivation act);

/*
 * The gradient of input j, dx (n), from dy (n): written, or added into dx
 * when add.  Multiply, Maximum and Minimum read the inputs x; Maximum and
 * Minimum send dy to the first input holding the extreme, as
 * TensorFlow's fold of maximum(a, b) (a wins ties) does.
 */
void		dl_merge_backward(DlLayerKind kind, float *dx, bool add, int j, const float *dy,
							  const float *const *x, int k, int64_t n);

/*
 * Concatenate: input j is x[j] (outer, width[j]), the output y
 * (outer, sum of width) holds each row's pieces side by side.  The
 * backward pass gives input j its columns of dy, written or added.
 */
void		dl_concat_forward(float *y, const float *const *x, const int64_t *width, int k,
							  int64_t outer);
void		dl_concat_backward(float *dx, bool add, int j, const float *dy, const int64_t *width,
							   int k, int64_t outer);

/* dst (n) += src (n). */
void		dl_add_into(float *dst, const float *src, int64_t n);

/* activation.c -------------------------------------------------------- */

/*
 * y (rows, cols) = act(x (rows, cols)); softmax is over cols.  y may equal
 * x (in place).
 */
void		dl_activation_forward(DlActivation act, float *y, const float *x,
								  int64_t rows, int64_t cols);

/* y (rows, cols) = act(y + b (cols)) in place; b may be NULL. */
void		dl_bias_act_forward(float *y, const float *b, DlActivation act, int64_t rows,
								int64_t cols);

/*
 * dx (rows, cols) from dy and the forward OUTPUT y (every supported
 * activation's derivative is a function of its output).  dx may equal dy.
 */
void		dl_activation_backward(DlActivation act, float *dx, const float *dy,
								   const float *y, int64_t rows, int64_t cols);

/* dropout.c ----------------------------------------------------------- */

/*
 * Inverted dropout: mask[i] = 0 with probability rate, else 1/(1-rate);
 * y = x * mask.  y may equal x.
 */
void		dl_dropout_forward(float *y, float *mask, const float *x, int64_t n, double rate,
							   DlRng *rng);
void		dl_dropout_backward(float *dx, const float *dy, const float *mask, int64_t n);

/* batchnorm.c --------------------------------------------------------- */

/*
 * Training mode over R rows of C channels (R = B*H*W, statistics per
 * channel, biased variance):
 *	 y (R,C) = act(gamma * xhat + beta), xhat = (x - mean) * invstd;
 *	 mean (C), invstd (C) saved for backward;
 *	 moving_mean/var (C) updated in place:
 *	   moving = moving * momentum + batch * (1 - momentum)
 * the batch variance for moving_var being the unbiased var * R / (R - 1)
 * when unbiased_moving_var (TensorFlow's fused batch norm, rank-3 inputs).
 * gamma or beta may be NULL (scale=false / center=false).  act is
 * DL_ACT_LINEAR, or DL_ACT_RELU for a ReLU layer that follows (fused).
 */
void		dl_batchnorm_forward_train(float *y, float *mean, float *invstd,
									   float *moving_mean, float *moving_var, const float *x,
									   const float *gamma, const float *beta, int64_t R,
									   int64_t C, double momentum, double epsilon,
									   bool unbiased_moving_var, DlActivation act);

/*
 * Inference: y = act(gamma * (x - moving_mean) / sqrt(moving_var + eps) +
 * beta); act as for training.
 */
void		dl_batchnorm_forward_infer(float *y, const float *x, const float *gamma,
									   const float *beta, const float *moving_mean,
									   const float *moving_var, int64_t R, int64_t C,
									   double epsilon, DlActivation act);

/*
 * From dy (R,C), the forward's input x (R,C) and its mean and invstd (C)
 * (xhat is recomputed, as the forward pass computed it): dx (R,C)
 * overwritten (skipped when NULL); dgamma, dbeta (C) += (skipped when
 * NULL).  y_relu: NULL, or the output of a forward with a fused ReLU; dy
 * is then the ReLU output's gradient, and its backward is applied first.
 */
void		dl_batchnorm_backward(float *dx, float *dgamma, float *dbeta, const float *dy,
								  const float *y_relu, const float *x, const float *mean,
								  const float *invstd, const float *gamma, int64_t R,
								  int64_t C);

/* activation.c (more) -------------------------------------------------- */

/*
 * The backward of the activations whose derivative needs the input
 * (dl_activation_needs_input: swish, gelu): dx (n) = dy * act'(x), from
 * the forward's input x (n).  dx may equal dy.
 */
void		dl_activation_backward_x(DlActivation act, float *dx, const float *dy,
									 const float *x, int64_t n);

/*
 * ReLU with arguments and LeakyReLU, Keras' formula: with p the positive
 * part (x if x > threshold, else 0; max(x, 0) when threshold is 0, then
 * clipped to [0, max_value] when has_max), y = p - slope * max(threshold
 * - x, 0).  y (n) from x (n); dx (n) = dy * y'(x), from x.
 */
void		dl_relu_args_forward(float *y, const float *x, int64_t n, bool has_max,
								 double max_value, double slope, double threshold);
void		dl_relu_args_backward(float *dx, const float *dy, const float *x, int64_t n,
								  bool has_max, double max_value, double slope,
								  double threshold);

/*
 * PReLU: y = x > 0 ? x : alpha * x over B samples of shape dims (rank
 * axes), alpha (the shape with the shared axes of size 1) broadcast over
 * them (bit d of shared: axis d shared).  Backward: dx (overwritten,
 * skipped when NULL), dalpha += sum of dy * min(x, 0) over what shares
 * each alpha.
 */
void		dl_prelu_forward(float *y, const float *x, const float *alpha, int64_t B,
							 const int64_t *dims, int rank, unsigned shared);
void		dl_prelu_backward(float *dx, float *dalpha, const float *dy, const float *x,
							  const float *alpha, int64_t B, const int64_t *dims, int rank,
							  unsigned shared);

/* embedding.c --------------------------------------------------------- */

/*
 * y (N, D) = E (V, D) row x[i] for each of the N ids x (N), floats that
 * must be integers in [0, V).  A row of a bad id is zero; returns the
 * index of the first bad id, -1 when all are good.
 */
int64_t		dl_embedding_forward(float *y, const float *x, const float *E, int64_t N,
								 int64_t V, int64_t D);

/* The index of the first of the N ids x that is bad, -1 when none is. */
int64_t		dl_embedding_check(const float *x, int64_t N, int64_t V);

/* dE (V, D) += dy (N, D) rows added to the rows of their ids; bad ids skipped. */
void		dl_embedding_backward(float *dE, const float *dy, const float *x, int64_t N,
								  int64_t V, int64_t D);

/* recurrent.c --------------------------------------------------------- */

typedef struct DlRnnGeom
{
	DlLayerKind cell;			/* DL_LAYER_LSTM, _GRU or _SIMPLERNN */
	int64_t		B, T, I, U;		/* x (B, T, I), states (B, U) */
	DlActivation act;			/* the candidate's and state's (SimpleRNN: h's) */
	DlActivation rec_act;		/* the gates' */
	bool		reset_after;	/* GRU */
	bool		backwards;		/* from the last step to the first */
	bool		use_bias;
} DlRnnGeom;

/*
 * One direction's tensors for every step, batch-major and indexed by the
 * step's time (recurrent.c), each (B, T, width):
 *	 xh     I+U    the step's input and the previous state
 *	 gates  S*U    the gates (dl_rnn_slots); the backward pass overwrites
 *	               them with their gradients
 *	 h      U      the states
 *	 aux    U      an LSTM's cell states, a GRU's r * h_prev without
 *	               reset_after; NULL for the others (dl_rnn_has_aux)
 */
typedef struct DlRnnState
{
	float	   *xh;
	float	   *gates;
	float	   *h;
	float	   *aux;
} DlRnnState;

int			dl_rnn_slots(const DlRnnGeom *g);
bool		dl_rnn_has_aux(const DlRnnGeom *g);

/*
 * Run one direction over x (B, T, I) with w, its parameters (kernel
 * (I, G*U), recurrent kernel (U, G*U), bias), filling *st.
 */
void		dl_rnn_forward(DlRnnState *st, const float *x, const float *w, const DlRnnGeom *g);

/*
 * Backward through time of one direction after dl_rnn_forward: dH
 * (B, T, U) holds dL/dh of each step from the layer's outputs and is
 * used up; dx (B, T, I) written, or added to when add_dx (skipped when
 * NULL); dw += the parameters' gradients; work (B, U).
 */
void		dl_rnn_backward(float *dx, bool add_dx, float *dw, float *dH, float *work,
							const DlRnnState *st, const float *w, const DlRnnGeom *g);

/*
 * The layer's output y from the states of its direction(s): hf (B, T, U)
 * the forward (or only) direction's, hb the backward one's (NULL: one
 * direction, merge NONE); the whole sequence, or each direction's last
 * step.  backwards: the only direction goes backwards (its sequence comes
 * in the order it was made, as in Keras).
 */
void		dl_rnn_output(float *y, const float *hf, const float *hb, DlBidirMerge merge,
						  bool return_sequences, bool backwards, int64_t B, int64_t T,
						  int64_t U);

/*
 * dH (B, T, U) of direction dir (0, or 1 the backward one) from the
 * output's gradient dy; other: the other direction's states (MUL only).
 */
void		dl_rnn_output_grad(float *dH, const float *dy, const float *other, int dir,
							   DlBidirMerge merge, bool return_sequences, bool backwards,
							   int64_t B, int64_t T, int64_t U);

/* depthwise.c --------------------------------------------------------- */

/*
 * DepthwiseConv2D: y (B,OH,OW,C*M), channel c*M+m = the window of
 * channel c of x (B,H,W,C) times K (KH,KW,C,M), plus b (C*M, may be
 * NULL); g's OC is C*M (its geometry: dl_conv_geom_init_dilated).
 * Backward: dx (overwritten, skipped when NULL), dK +=, db += (skipped
 * when NULL), from dy.
 */
void		dl_depthwise_forward(float *y, const float *x, const float *K, const float *b,
								 int64_t M, const DlConvGeom *g);
void		dl_depthwise_backward(float *dx, float *dK, float *db, const float *dy,
								  const float *x, const float *K, int64_t M, const DlConvGeom *g);

/* layernorm.c --------------------------------------------------------- */

/*
 * LayerNormalization over the last axis: each of R rows of C values,
 * y = gamma * (x - mean) * invstd + beta, invstd = 1/sqrt(var + eps),
 * biased variance; gamma or beta may be NULL.  mean, invstd (R) saved
 * for backward unless NULL.
 */
void		dl_layernorm_forward(float *y, float *mean, float *invstd, const float *x,
								 const float *gamma, const float *beta, int64_t R, int64_t C,
								 double epsilon);

/* dx (R,C) overwritten (skipped when NULL); dgamma, dbeta (C) += (skipped when NULL). */
void		dl_layernorm_backward(float *dx, float *dgamma, float *dbeta, const float *dy,
								  const float *x, const float *mean, const float *invstd,
								  const float *gamma, int64_t R, int64_t C);

/* reshape.c ----------------------------------------------------------- */

/*
 * Permute: y (B, out dims) from x (B, in dims), output axis d being input
 * axis perm[d] (rank axes per sample); backward: dx (B, in dims) from dy,
 * overwritten.
 */
void		dl_permute_forward(float *y, const float *x, int64_t B, const int64_t *in_dims,
							   const int *perm, int rank);
void		dl_permute_backward(float *dx, const float *dy, int64_t B, const int64_t *in_dims,
								const int *perm, int rank);

/* RepeatVector: y (B, n, F) = x (B, F) n times; dx (B, F) = sum of dy's n copies. */
void		dl_repeat_forward(float *y, const float *x, int64_t B, int64_t n, int64_t F);
void		dl_repeat_backward(float *dx, const float *dy, int64_t B, int64_t n, int64_t F);

#endif							/* DL_KERNELS_H */
