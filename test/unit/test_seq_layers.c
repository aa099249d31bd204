/*-------------------------------------------------------------------------
 *
 * test_seq_layers.c
 *	  Unit tests: every layer of text and sequences (issue 18) against a
 *	  double-precision reference and double finite differences.
 *
 * Each case is a small Sequential model, usually a Dense layer (so that
 * the layer's input gradient is checked too, through the Dense's kernel
 * gradient) followed by the layer under test with its attributes, and a
 * mean squared error against random targets.  The engine's predictions
 * must match ref_chain_forward (ref_chain.c, Keras' formulas in double)
 * within 1e-5, and its analytic gradients (float) the central
 * differences (eps 1e-6) of the loss computed through that double
 * reference, parameter block by parameter block, within a relative L2
 * error of 1e-3: the recurrent layers over every step (backpropagation
 * through time), in both directions, with and without sequences.
 *
 * IDENTIFICATION
 *	  test/unit/test_seq_layers.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "ref_kernels.h"
#include "madlib_dl/dl_keras.h"
#include "madlib_dl/dl_model.h"
#include "model_impl.h"

#define GRAD_TOL 1e-3
#define FWD_TOL 1e-5
#define FD_EPS 1e-6

/* A Sequential model, tf.keras 2 dialect (K3: Keras 3's, for hard_sigmoid). */
#define SEQ(shape, layers) "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"m\", \"layers\": [" \
	"{\"class_name\": \"InputLayer\", \"config\": {\"name\": \"x\", \"batch_input_shape\": [null, " shape "]}}" \
	layers "]}}"
#define K3(shape, layers) "{\"module\": \"keras\", \"class_name\": \"Sequential\", \"config\": {\"name\": \"m\", " \
	"\"layers\": [{\"module\": \"keras.layers\", \"class_name\": \"InputLayer\", \"config\": " \
	"{\"name\": \"x\", \"batch_shape\": [null, " shape "]}}" layers "]}}"
#define L(cls, cfg) ", {\"class_name\": \"" cls "\", \"config\": {\"name\": \"" cls "_l\"" cfg "}}"
#define DENSE(units, act) ", {\"class_name\": \"Dense\", \"config\": {\"name\": \"d" units act "\", " \
	"\"units\": " units ", \"activation\": \"" act "\"}}"
#define RNN(cls, units, extra) L(cls, ", \"units\": " units extra)
#define BI(cls, units, extra, merge) ", {\"class_name\": \"Bidirectional\", \"config\": {\"name\": \"bi\", " \
	"\"merge_mode\": \"" merge "\", \"layer\": {\"class_name\": \"" cls "\", \"config\": {\"name\": \"in\", " \
	"\"units\": " units extra "}}}}"

typedef struct SeqCase
{
	const char *name;
	const char *json;
	int64_t		ids;			/* > 0: the input holds token ids below this */
	int64_t		B;
} SeqCase;

static const SeqCase cases[] = {
	/* Embedding: ids repeat in a batch; the rows of unused ids get no gradient */
	{"embedding", SEQ("5", L("Embedding", ", \"input_dim\": 7, \"output_dim\": 3") L("Flatten", "") DENSE("2", "linear")), 7, 3},
	{"embedding_rank2", SEQ("2, 3", L("Embedding", ", \"input_dim\": 5, \"output_dim\": 2") L("Reshape", ", \"target_shape\": [12]") DENSE("2", "tanh")), 5, 3},
	/* Conv1D: causal dilated, same strided, valid; activations on the way */
	{"conv1d_causal", SEQ("9, 2", DENSE("3", "linear") L("Conv1D", ", \"filters\": 4, \"kernel_size\": 3, \"padding\": \"causal\", \"dilation_rate\": 2, \"activation\": \"tanh\"")), 0, 3},
	{"conv1d_same_strided", SEQ("8, 2", DENSE("3", "linear") L("Conv1D", ", \"filters\": 2, \"kernel_size\": [4], \"strides\": [3], \"padding\": \"same\", \"activation\": \"swish\"")), 0, 2},
	{"conv1d_valid", SEQ("7, 3", DENSE("2", "linear") L("Conv1D", ", \"filters\": 3, \"kernel_size\": 2, \"dilation_rate\": 3, \"use_bias\": false, \"activation\": \"gelu\"")), 0, 2},
	/* the 1-D poolings */
	{"pool1d", SEQ("9, 2", DENSE("3", "tanh") L("MaxPooling1D", ", \"pool_size\": 3, \"strides\": 2, \"padding\": \"same\"") L("AveragePooling1D", ", \"pool_size\": [2], \"strides\": [1], \"padding\": \"same\"") L("GlobalMaxPooling1D", "")), 0, 3},
	{"pool1d_valid", SEQ("8, 2", DENSE("3", "tanh") L("AveragePooling1D", ", \"pool_size\": 3") L("MaxPooling1D", ", \"pool_size\": [2], \"strides\": [1]") L("GlobalAveragePooling1D", "")), 0, 3},
	/* recurrent layers through time: sequences, last steps, backwards */
	{"lstm_sequences", SEQ("6, 3", DENSE("2", "linear") RNN("LSTM", "3", ", \"return_sequences\": true")), 0, 2},
	{"lstm_backwards_last", SEQ("5, 2", DENSE("3", "linear") RNN("LSTM", "4", ", \"go_backwards\": true, \"recurrent_activation\": \"hard_sigmoid\", \"activation\": \"softsign\"")), 0, 3},
	{"lstm_no_bias", SEQ("4, 2", DENSE("2", "linear") RNN("LSTM", "2", ", \"use_bias\": false, \"return_sequences\": true, \"go_backwards\": true")), 0, 2},
	{"gru_reset_after", SEQ("6, 3", DENSE("2", "linear") RNN("GRU", "3", ", \"reset_after\": true, \"return_sequences\": true")), 0, 2},
	{"gru_reset_before", SEQ("6, 3", DENSE("2", "linear") RNN("GRU", "3", ", \"reset_after\": false, \"go_backwards\": true")), 0, 2},
	{"gru_reset_after_backwards", SEQ("5, 2", DENSE("3", "linear") RNN("GRU", "4", ", \"reset_after\": true, \"go_backwards\": true, \"return_sequences\": true, \"activation\": \"selu\"")), 0, 2},
	{"gru_no_bias", SEQ("4, 2", DENSE("2", "linear") RNN("GRU", "2", ", \"reset_after\": true, \"use_bias\": false")), 0, 2},
	{"simple_rnn", SEQ("6, 2", DENSE("3", "linear") RNN("SimpleRNN", "3", ", \"return_sequences\": true, \"go_backwards\": true")), 0, 2},
	{"simple_rnn_last", SEQ("5, 2", DENSE("2", "linear") RNN("SimpleRNN", "4", ", \"activation\": \"sigmoid\"")), 0, 3},
	/* Bidirectional: each merge, sequences or not */
	{"bidirectional_concat", SEQ("5, 2", DENSE("3", "linear") BI("LSTM", "2", ", \"return_sequences\": true", "concat")), 0, 2},
	{"bidirectional_sum", SEQ("5, 2", DENSE("3", "linear") BI("GRU", "3", ", \"reset_after\": true", "sum")), 0, 2},
	{"bidirectional_ave", SEQ("4, 3", DENSE("2", "linear") BI("SimpleRNN", "2", ", \"return_sequences\": true", "ave")), 0, 2},
	{"bidirectional_mul", SEQ("4, 2", DENSE("2", "linear") BI("GRU", "3", ", \"reset_after\": false, \"return_sequences\": true", "mul")), 0, 2},
	{"bidirectional_mul_last", SEQ("5, 2", DENSE("2", "linear") BI("LSTM", "2", "", "mul")), 0, 3},
	/* mobile-style convolutions */
	{"depthwise", SEQ("5, 5, 2", DENSE("2", "linear") L("DepthwiseConv2D", ", \"kernel_size\": 3, \"depth_multiplier\": 2, \"padding\": \"same\", \"strides\": 2, \"activation\": \"swish\"")), 0, 2},
	{"depthwise_dilated", SEQ("6, 6, 2", DENSE("3", "linear") L("DepthwiseConv2D", ", \"kernel_size\": [2, 3], \"dilation_rate\": [2, 1], \"use_bias\": false")), 0, 2},
	{"separable", SEQ("5, 5, 2", DENSE("3", "linear") L("SeparableConv2D", ", \"filters\": 4, \"kernel_size\": 2, \"depth_multiplier\": 2, \"activation\": \"gelu\"")), 0, 2},
	{"separable_dilated", SEQ("7, 6, 2", DENSE("2", "linear") L("SeparableConv2D", ", \"filters\": 3, \"kernel_size\": 3, \"dilation_rate\": 2, \"padding\": \"same\", \"activation\": \"tanh\"")), 0, 2},
	/* LayerNormalization: gamma and beta, either alone */
	{"layer_norm", SEQ("4, 5", DENSE("3", "linear") L("LayerNormalization", ", \"epsilon\": 0.01")), 0, 3},
	{"layer_norm_no_center", SEQ("6", DENSE("5", "tanh") L("LayerNormalization", ", \"center\": false")), 0, 3},
	{"layer_norm_no_scale", SEQ("6", DENSE("5", "tanh") L("LayerNormalization", ", \"scale\": false, \"axis\": [1]")), 0, 3},
	/* the activation layers */
	{"relu_args", SEQ("6", DENSE("8", "linear") L("ReLU", ", \"max_value\": 0.4, \"negative_slope\": 0.1, \"threshold\": 0.2")), 0, 3},
	{"relu_threshold", SEQ("6", DENSE("8", "linear") L("ReLU", ", \"negative_slope\": 0.2, \"threshold\": -0.1")), 0, 3},
	{"leaky_relu", SEQ("6", DENSE("8", "linear") L("LeakyReLU", ", \"alpha\": 0.2")), 0, 3},
	{"prelu", SEQ("3, 4", DENSE("5", "linear") L("PReLU", "")), 0, 3},
	{"prelu_shared", SEQ("3, 4, 2", DENSE("3", "linear") L("PReLU", ", \"shared_axes\": [1, 2], \"alpha_initializer\": \"ones\"")), 0, 2},
	/* the shape layers */
	{"permute", SEQ("2, 3, 4", DENSE("3", "linear") L("Permute", ", \"dims\": [3, 1, 2]") DENSE("2", "linear")), 0, 2},
	{"repeat_reshape", SEQ("4", DENSE("3", "tanh") L("RepeatVector", ", \"n\": 4") L("Reshape", ", \"target_shape\": [2, -1]") RNN("SimpleRNN", "2", "")), 0, 3},
	/* the activations, in a Dense and as layers (swish, gelu read the input) */
	{"activations", SEQ("5", DENSE("6", "selu") DENSE("6", "softsign") DENSE("6", "hard_sigmoid") DENSE("6", "exponential") DENSE("6", "swish") DENSE("5", "gelu")), 0, 3},
	{"activation_layers", SEQ("5", DENSE("6", "linear") L("Activation", ", \"activation\": \"swish\"") DENSE("6", "linear") L("Activation", ", \"activation\": \"gelu\"") DENSE("4", "linear") L("Activation", ", \"activation\": \"exponential\"")), 0, 3},
	/* Keras 3's hard_sigmoid is relu6(x + 3) / 6, in a Dense and in an LSTM's gates */
	{"hard_sigmoid_k3", K3("5", DENSE("6", "hard_sigmoid") L("Reshape", ", \"target_shape\": [3, 2]") RNN("LSTM", "2", ", \"recurrent_activation\": \"hard_sigmoid\"")), 0, 3},
};

/* What the reference loss needs: the model and its data in double. */
typedef struct RefCtx
{
	const DlModelSpec *spec;
	double	   *p;				/* (P) */
	const double *x;
	const double *t;			/* targets (B, K) */
	double	   *y;				/* (B, K) scratch */
	int64_t		B,
				K;
} RefCtx;

/* Mean squared error through the double reference. */
static double
ref_loss(void *arg)
{
	RefCtx	   *c = arg;
	double		s = 0.0;

	ref_chain_forward(c->y, c->spec, c->p, c->x, c->B);
	for (int64_t i = 0; i < c->B * c->K; i++)
		s += (c->y[i] - c->t[i]) * (c->y[i] - c->t[i]);
	return s / (double) (c->B * c->K);
}

/* The largest relative L2 error over the layers' parameter blocks. */
static double
run_case(const SeqCase *sc)
{
	TestAllocCounter counter;
	DlAllocator alloc = test_allocator(&counter);
	DlModelSpec *spec = NULL;
	DlModel    *m = NULL;
	DlOptimConfig o;
	DlTrainConfig cfg;
	DlError		err;
	DlRng		rng;
	RefCtx		c;
	int64_t		B = sc->B,
				P,
				N,
				K;
	float	   *pf,
			   *xf,
			   *tf,
			   *pred;
	double	   *xd,
			   *td,
			   *num,
				loss,
				worst = 0.0;

	if (dl_keras_parse(sc->json, strlen(sc->json), &alloc, &spec, &err) != DL_OK)
		fail_msg("%s: parse: %s", sc->name, err.msg);
	P = (int64_t) spec->n_params;
	N = B * dl_shape_size(&spec->input_shape);
	K = dl_shape_size(&spec->output_shape);
	dl_rng_seed(&rng, 1800 + (uint64_t) strlen(sc->name));
	pf = REF_NEW(float, P);
	c.p = REF_NEW(double, P);
	ref_fill_uniform(pf, c.p, P, -0.5, 0.5, &rng);
	xf = REF_NEW(float, N);
	xd = REF_NEW(double, N);
	if (sc->ids > 0)
	{
		for (int64_t i = 0; i < N; i++)
			xd[i] = xf[i] = (float) floor(dl_rng_uniform(&rng) * (double) sc->ids);
	}
	else
		ref_fill_uniform(xf, xd, N, -1.0, 1.0, &rng);
	tf = REF_NEW(float, B * K);
	td = REF_NEW(double, B * K);
	ref_fill_uniform(tf, td, B * K, -1.0, 1.0, &rng);
	pred = REF_NEW(float, B * K);
	num = REF_NEW(double, P);
	c.spec = spec;
	c.x = xd;
	c.t = td;
	c.y = REF_NEW(double, B * K);
	c.B = B;
	c.K = K;

	/* the engine: predictions, then the gradients of a training step */
	dl_optim_config_default(&o, DL_OPTIM_SGD);
	assert_int_equal(dl_model_create(spec, &o, &alloc, &m, &err), DL_OK);
	assert_int_equal(dl_model_set_params(m, pf, (size_t) P, &err), DL_OK);
	if (dl_model_predict(m, pred, xf, B, 2, &err) != DL_OK)
		fail_msg("%s: predict: %s", sc->name, err.msg);
	ref_chain_forward(c.y, spec, c.p, xd, B);
	for (int64_t i = 0; i < B * K; i++)
		if (!(fabs(pred[i] - c.y[i]) <= FWD_TOL * (1.0 + fabs(c.y[i]))))
			fail_msg("%s: output %lld is %.9g, the reference's %.9g", sc->name, (long long) i,
					 pred[i], c.y[i]);
	memset(&cfg, 0, sizeof(cfg));
	cfg.loss = DL_LOSS_MEAN_SQUARED_ERROR;
	cfg.batch_size = B;
	if (dl_model_compute_gradients(m, &cfg, xf, tf, B, &loss, &err) != DL_OK)
		fail_msg("%s: gradients: %s", sc->name, err.msg);

	/* the reference: central differences, block by block */
	ref_numeric_grad(num, c.p, P, ref_loss, &c, FD_EPS);
	for (int i = 0; i < spec->n_layers; i++)
	{
		const DlLayer *l = &spec->layers[i];
		double		norm = 0.0,
					e;

		if (l->n_params == 0)
			continue;
		for (size_t j = 0; j < l->n_params; j++)
			norm += num[l->param_offset + j] * num[l->param_offset + j];
		if (!(norm > 0.0))
			fail_msg("%s: layer \"%s\": the numeric gradient is zero, the check is void",
					 sc->name, l->name);
		e = rel_l2_error_fd(dl_model_grads(m) + l->param_offset, num + l->param_offset,
							l->n_params);
		if (!(e < GRAD_TOL))
			fail_msg("%s: layer \"%s\" (%s): gradient relative L2 error %g >= %g", sc->name,
					 l->name, dl_layer_kind_name(l->kind), e, GRAD_TOL);
		worst = fmax(worst, e);
	}
	dl_model_free(m);
	dl_model_spec_free(spec, &alloc);
	assert_no_leaks(&counter);
	ref_free_all();
	return worst;
}

static void
test_layers_against_double_reference(void **state)
{
	double		worst = 0.0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		double		e = run_case(&cases[i]);

		print_message("%-26s: gradient relative L2 error %.2e (double finite differences)\n",
					  cases[i].name, e);
		worst = fmax(worst, e);
	}
	print_message("all %zu cases: largest gradient relative L2 error %.2e\n",
				  sizeof(cases) / sizeof(cases[0]), worst);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layers_against_double_reference),
	};

	return cmocka_run_group_tests_name("seq_layers", tests, NULL, NULL);
}
