/*-------------------------------------------------------------------------
 *
 * onnx_import_rnn.c
 *	  The ONNX importer's LSTM and GRU (part of onnx_import.c): a
 *	  recurrent node is recorded with its weights in Keras order, and
 *	  made a Keras layer (its full sequence or its last step) by what
 *	  reads its outputs: Squeeze, Gather, Transpose, Reshape.
 *
 * IDENTIFICATION
 *	  src/engine/onnx_import_rnn.c
 *
 *-------------------------------------------------------------------------
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnx_import_impl.h"

/* ------------------------------------------------------------------ */
/* recurrent layers */

int
dl_im_rnn_layer(Im *im, int ri, bool seq)
{
	Rnn		   *r = &im->rnns[ri];
	int			li;
	char		nm[DL_NAME_MAX];
	char		inner[768];
	size_t		nk = (size_t) (r->I * (r->gru ? 3 : 4) * r->H);
	size_t		nr = (size_t) (r->H * (r->gru ? 3 : 4) * r->H);
	float	   *w;

	if ((seq ? r->layer_seq : r->layer_last) >= 0)
		return seq ? r->layer_seq : r->layer_last;
	snprintf(nm, sizeof(nm), "%.100s%s", r->name, seq ? "_seq" : "");
	if (r->gru)
		snprintf(inner, sizeof(inner),
				 "\"units\": %lld, \"activation\": \"tanh\", \"recurrent_activation\": \"sigmoid\", "
				 "\"use_bias\": true, \"return_sequences\": %s, \"go_backwards\": %s, \"reset_after\": %s",
				 (long long) r->H, seq ? "true" : "false", r->reverse ? "true" : "false",
				 r->reset_after ? "true" : "false");
	else
		snprintf(inner, sizeof(inner),
				 "\"units\": %lld, \"activation\": \"tanh\", \"recurrent_activation\": \"sigmoid\", "
				 "\"use_bias\": true, \"return_sequences\": %s, \"go_backwards\": %s, \"unit_forget_bias\": false",
				 (long long) r->H, seq ? "true" : "false", r->reverse ? "true" : "false");
	if (r->D == 2)
		li = dl_im_lay1(im, "Bidirectional", nm, r->x_ref,
				  "\"merge_mode\": \"concat\", \"layer\": {\"class_name\": \"%s\", \"config\": {\"name\": \"%.100s_fwd\", %s}}",
				  r->gru ? "GRU" : "LSTM", nm, inner);
	else
		li = dl_im_lay1(im, r->gru ? "GRU" : "LSTM", nm, r->x_ref, "%s", inner);
	if (li < 0)
		return -1;
	r = &im->rnns[ri];
	w = dl_im_lay_weights(im, li, (size_t) r->D * (nk + nr + r->n_bias));
	if (w == NULL)
		return -1;
	for (int d = 0; d < r->D; d++)
	{
		float	   *wd = w + (size_t) d * (nk + nr + r->n_bias);

		memcpy(wd, r->kernel + (size_t) d * nk, nk * sizeof(float));
		memcpy(wd + nk, r->recurrent + (size_t) d * nr, nr * sizeof(float));
		memcpy(wd + nk + nr, r->bias + (size_t) d * r->n_bias, r->n_bias * sizeof(float));
	}
	if (seq)
		r->layer_seq = li;
	else
		r->layer_last = li;
	return li;
}

/*
 * Recurrent ri's full output sequence as tensor out of the given layout
 * and dims, its rnn set; NULL with im->err set where it cannot be (a
 * reverse layer's sequence is not supported).
 */
Val *
dl_im_rnn_sequence(Im *im, int ri, const char *out, Layout layout, int rank, const int64_t *dims)
{
	int			li;
	Val		   *o;

	if (im->rnns[ri].reverse)
	{
		dl_im_unsup(im, "the full sequence of a reverse recurrent layer");
		return NULL;
	}
	li = dl_im_rnn_layer(im, ri, true);
	if (li < 0)
		return NULL;
	o = dl_im_out_tensor(im, out, li, layout, rank, dims);
	if (o != NULL)
		o->rnn = ri;
	return o;
}

DlStatus
dl_im_rnn_last(Im *im, int ri, const char *out)
{
	int			li = dl_im_rnn_layer(im, ri, false);
	int64_t		dims[2];
	Rnn		   *r;

	if (li < 0)
		return im->err->code;
	r = &im->rnns[ri];
	dims[0] = 1;				/* batch, not known here */
	dims[1] = r->D * r->H;
	return dl_im_out_tensor(im, out, li, LAY_PLAIN, 2, dims) ? DL_OK : im->err->code;
}

DlStatus
dl_im_op_rnn(Im *im, bool gru)
{
	const Onnx__NodeProto *n = im->node;
	Val		   *x = dl_im_in_val(im, 0),
			   *W = dl_im_in_val(im, 1),
			   *R = dl_im_in_val(im, 2),
			   *B = dl_im_in_val(im, 3);
	int			G = gru ? 3 : 4;
	int			D;
	int64_t		H = dl_im_attr_int(n, "hidden_size", 0);
	int64_t		I;
	Rnn		   *r;
	static const int lstm_map[4] = {0, 2, 3, 1};	/* Keras i f c o -> ONNX i o f c */

	if (x->kind != VAL_TENSOR || x->layout != LAY_TIME_MAJOR || x->rank != 3)
		return dl_im_unsup(im, "the input must be a batch-first sequence transposed to (T, N, F)");
	if (W->kind != VAL_CONST || R->kind != VAL_CONST || (B && B->kind != VAL_CONST))
		return dl_im_unsup(im, "W, R and B must be constants");
	if (dl_im_in_val(im, 4))
		return dl_im_unsup(im, "sequence_lens");
	for (int k = 5; k < 8; k++)
	{
		Val		   *s = dl_im_in_val(im, k);

		if (s == NULL)
			continue;
		if (s->kind != VAL_CONST || k == 7)
			return dl_im_unsup(im, "initial states other than zeros, or peepholes");
		if (s->zero_fill)
			continue;
		for (size_t j = 0; j < s->count; j++)
			if (s->f[j] != 0.0f)
				return dl_im_unsup(im, "initial states other than zeros");
	}
	if (dl_im_attr(n, "activations"))
	{
		const Onnx__AttributeProto *a = dl_im_attr(n, "activations");
		static const char *const dflt[3] = {"Sigmoid", "Tanh", "Tanh"};
		size_t		per = gru ? 2 : 3;
		size_t		want = per * (dl_im_attr_str_is(n, "direction", "bidirectional", "forward") ? 2 : 1);

		if (a->n_strings != want)
			return dl_im_unsup(im, "activations other than the defaults");
		for (size_t k = 0; k < want; k++)
			if (a->strings[k].len != strlen(dflt[k % per]) ||
				memcmp(a->strings[k].data, dflt[k % per], a->strings[k].len) != 0)
				return dl_im_unsup(im, "activations other than the defaults (Sigmoid, Tanh%s)", gru ? "" : ", Tanh");
	}
	if (dl_im_attr(n, "clip") || dl_im_attr_int(n, "input_forget", 0) || dl_im_attr_int(n, "layout", 0))
		return dl_im_unsup(im, "clip, input_forget or layout other than the defaults");
	I = x->dims[2];
	D = dl_im_attr_str_is(n, "direction", "bidirectional", "forward") ? 2 : 1;
	if (H < 1 || H > 1 << 20 || W->rank != 3 || W->dims[0] != D || W->dims[1] != G * H || W->dims[2] != I ||
		R->rank != 3 || R->dims[0] != D || R->dims[1] != G * H || R->dims[2] != H ||
		(B && (B->count != (size_t) (D * 2 * G * H))))
		return dl_im_err(im, DL_ERR_SHAPE, "W, R and B do not fit hidden_size %lld and %lld features",
					  (long long) H, (long long) I);
	if (im->n_rnns == im->cap_rnns)
	{
		int			ncap = im->cap_rnns ? im->cap_rnns * 2 : 8;
		Rnn		   *nr = dl_onnx_arena_alloc(&im->arena, sizeof(Rnn) * (size_t) ncap);

		if (nr == NULL)
			return dl_im_oom(im);
		if (im->n_rnns)
			memcpy(nr, im->rnns, sizeof(Rnn) * (size_t) im->n_rnns);
		im->rnns = nr;
		im->cap_rnns = ncap;
	}
	r = &im->rnns[im->n_rnns];
	memset(r, 0, sizeof(*r));
	r->gru = gru;
	r->x_ref = x->ref;
	r->T = x->dims[0];
	r->I = I;
	r->H = H;
	r->reverse = dl_im_attr_str_is(n, "direction", "reverse", "forward");
	r->reset_after = gru && dl_im_attr_int(n, "linear_before_reset", 0) != 0;
	r->layer_seq = r->layer_last = -1;
	r->D = D;
	snprintf(r->name, sizeof(r->name), "%.100s", dl_im_node_label(im));
	r->kernel = dl_onnx_arena_alloc(&im->arena, sizeof(float) * (size_t) (D * I * G * H));
	r->recurrent = dl_onnx_arena_alloc(&im->arena, sizeof(float) * (size_t) (D * H * G * H));
	r->n_bias = (size_t) (r->reset_after ? 2 * G * H : G * H);
	r->bias = dl_onnx_arena_alloc(&im->arena, sizeof(float) * r->n_bias * (size_t) D);
	if (!r->kernel || !r->recurrent || !r->bias)
		return dl_im_oom(im);
	for (int d = 0; d < D; d++)
	for (int g = 0; g < G; g++)
	{
		int			og = gru ? g : lstm_map[g];

		for (int64_t u = 0; u < H; u++)
		{
			int64_t		row = d * G * H + og * H + u;
			float	   *kd = r->kernel + (size_t) d * I * G * H;
			float	   *rd = r->recurrent + (size_t) d * H * G * H;
			float	   *bd = r->bias + (size_t) d * r->n_bias;
			const float *bs = B ? B->f + (size_t) d * 2 * G * H : NULL;

			for (int64_t i = 0; i < I; i++)
				kd[i * G * H + g * H + u] = W->f[row * I + i];
			for (int64_t j = 0; j < H; j++)
				rd[j * G * H + g * H + u] = R->f[row * H + j];
			if (bs)
			{
				float		wb = bs[og * H + u],
							rb = bs[G * H + og * H + u];

				if (r->reset_after)
				{
					bd[g * H + u] = wb;
					bd[G * H + g * H + u] = rb;
				}
				else
					bd[g * H + u] = wb + rb;
			}
		}
	}
	im->n_rnns++;
	/* outputs: Y (T, 1, N, H), Y_h (1, N, H); Y_c must be unused */
	for (size_t k = 0; k < n->n_output && k < 2; k++)
	{
		Val		   *o;

		if (n->output[k] == NULL || n->output[k][0] == '\0')
			continue;
		o = dl_im_val_produce(im, n->output[k]);
		if (o == NULL)
			return im->err->code;
		o->kind = k == 0 ? VAL_RNN_Y : VAL_RNN_YH;
		o->rnn = im->n_rnns - 1;
		if (k == 0)
		{
			o->rank = 4;
			o->dims[0] = im->rnns[o->rnn].T;
			o->dims[1] = D;
			o->dims[2] = dl_im_in_val(im, 0)->dims[1];
			o->dims[3] = H;
		}
		else
		{
			o->rank = 3;
			o->dims[0] = D;
			o->dims[1] = dl_im_in_val(im, 0)->dims[1];
			o->dims[2] = H;
		}
	}
	if (n->n_output > 2 && n->output[2] && n->output[2][0])
	{
		int			vi = -1;

		(void) vi;
		/* Y_c: refused if read (it is never registered, so a reader fails) */
	}
	return DL_OK;
}

DlStatus
dl_im_op_squeeze(Im *im)
{
	Val		   *x = dl_im_in_val(im, 0);
	Val		   *ax = dl_im_in_val(im, 1);
	int64_t		axes[MAX_DIMS];
	int			na;

	if (ax && ax->kind == VAL_CONST && ax->count <= MAX_DIMS)
	{
		na = (int) ax->count;
		memcpy(axes, ax->i, sizeof(int64_t) * (size_t) na);
	}
	else
		na = dl_im_attr_ints(im->node, "axes", axes, MAX_DIMS);
	if ((x->kind == VAL_RNN_YH || x->kind == VAL_RNN_Y) && im->rnns[x->rnn].D != 1)
		return dl_im_unsup(im, "Squeeze of a bidirectional output");
	if (x->kind == VAL_RNN_YH && na == 1 && dl_im_norm_axis(axes[0], 3) == 0)
		return dl_im_rnn_last(im, x->rnn, im->node->output[0]);
	if (x->kind == VAL_RNN_Y && na == 1 && dl_im_norm_axis(axes[0], 4) == 1)
	{
		int64_t		dims[3] = {x->dims[0], x->dims[2], x->dims[3]};
		Val		   *o = dl_im_rnn_sequence(im, x->rnn, im->node->output[0], LAY_TIME_MAJOR, 3, dims);

		if (o == NULL)
			return im->err->code;
		o->seq_tm = true;
		return DL_OK;
	}
	return dl_im_unsup(im, "Squeeze other than of a recurrent layer's outputs");
}
