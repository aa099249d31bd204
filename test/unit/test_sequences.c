/*-------------------------------------------------------------------------
 *
 * test_sequences.c
 *	  Unit tests: the layers of text and sequences (issue 18) in whole
 *	  models, against TensorFlow.js and PyTorch, their gradients through
 *	  time, bad Embedding ids, and the memory of recurrent models.
 *
 * tfjs_sequences.json (gen_sequences.js) holds TF.js models of every new
 * layer TF.js has: Embedding with LSTM and with Conv1D, stacked and
 * backward LSTMs, GRU (reset_after false), SimpleRNN, Bidirectional with
 * each merge, Conv1D and the 1-D poolings, DepthwiseConv2D,
 * SeparableConv2D, LayerNormalization, ReLU(max_value), LeakyReLU,
 * PReLU, Reshape, Permute, RepeatVector and the new activations;
 * torch_sequences.json (gen_sequences_torch.py) what TF.js lacks: GRU
 * with reset_after (PyTorch's nn.GRU), causal and dilated Conv1D, the
 * exponential activation and ReLU's negative_slope and threshold.  Each
 * must predict within 1e-5 and train two full-batch steps within 2e-4
 * (fixture_cases.c); every fixture model's gradient is checked against
 * finite differences of its whole loss.
 *
 * IDENTIFICATION
 *	  test/unit/test_sequences.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_cases.h"
#include "model_impl.h"

static void
test_tfjs_fixture(void **state)
{
	fx_check_fixture("tfjs_sequences.json", "TF.js");
}

static void
test_torch_fixture(void **state)
{
	fx_check_fixture("torch_sequences.json", "PyTorch");
}

static void
test_fixture_gradients(void **state)
{
	fx_check_fixture_gradients("tfjs_sequences.json");
	fx_check_fixture_gradients("torch_sequences.json");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tfjs_fixture),
		cmocka_unit_test(test_torch_fixture),
		cmocka_unit_test(test_fixture_gradients),
	};

	return cmocka_run_group_tests_name("sequences", tests, NULL, NULL);
}
