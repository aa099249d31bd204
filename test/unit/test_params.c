/*-------------------------------------------------------------------------
 *
 * test_params.c
 *	  Unit tests: parsing compile_params and fit_params strings.
 *
 * Good strings (including the examples from MADlib's documentation) must
 * give the expected fields; each kind of bad string must give its status
 * code and a message naming the offending piece.
 *
 * IDENTIFICATION
 *	  test/unit/test_params.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_keras.h"
#include "madlib_dl/dl_params.h"

static DlCompileParams
compile_ok(const char *s)
{
	DlCompileParams p;
	DlError		err;
	DlStatus	rc;

	memset(&p, 0xab, sizeof(p));
	dl_error_clear(&err);
	rc = dl_compile_params_parse(s, &p, &err);
	if (rc != DL_OK)
		fail_msg("compile_params \"%s\" failed: %s (%s)", s, err.msg, dl_status_name(rc));
	return p;
}

static DlFitParams
fit_ok(const char *s)
{
	DlFitParams p;
	DlError		err;
	DlStatus	rc;

	memset(&p, 0xab, sizeof(p));
	dl_error_clear(&err);
	rc = dl_fit_params_parse(s, &p, &err);
	if (rc != DL_OK)
		fail_msg("fit_params \"%s\" failed: %s (%s)", s, err.msg, dl_status_name(rc));
	return p;
}

/* Expect code, a message containing piece, and a hint. */
static void
compile_bad(const char *s, DlStatus code, const char *piece)
{
	DlCompileParams p;
	DlError		err;
	DlStatus	rc;

	dl_error_clear(&err);
	rc = dl_compile_params_parse(s, &p, &err);
	if (rc != code)
		fail_msg("compile_params \"%s\": got %s (%s), expected %s", s, dl_status_name(rc),
				 err.msg, dl_status_name(code));
	if (strstr(err.msg, piece) == NULL)
		fail_msg("compile_params \"%s\": message \"%s\" lacks \"%s\"", s, err.msg, piece);
	if (err.hint[0] == '\0')
		fail_msg("compile_params \"%s\": no hint for \"%s\"", s, err.msg);
}

static void
fit_bad(const char *s, DlStatus code, const char *piece)
{
	DlFitParams p;
	DlError		err;
	DlStatus	rc;

	dl_error_clear(&err);
	rc = dl_fit_params_parse(s, &p, &err);
	if (rc != code)
		fail_msg("fit_params \"%s\": got %s (%s), expected %s", s, dl_status_name(rc),
				 err.msg, dl_status_name(code));
	if (strstr(err.msg, piece) == NULL)
		fail_msg("fit_params \"%s\": message \"%s\" lacks \"%s\"", s, err.msg, piece);
	if (err.hint[0] == '\0')
		fail_msg("fit_params \"%s\": no hint for \"%s\"", s, err.msg);
}

static void
test_compile_madlib_examples(void **state)
{
	DlCompileParams p;

	p = compile_ok("loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']");
	assert_int_equal(p.loss, DL_LOSS_CATEGORICAL_CROSSENTROPY);
	assert_int_equal(p.metric, DL_METRIC_ACCURACY);
	assert_int_equal(p.top_k, 5);
	assert_int_equal(p.optim.kind, DL_OPTIM_ADAM);
	assert_close(p.optim.lr, 0.001, 0, 0);
	assert_close(p.optim.beta_1, 0.9, 0, 0);
	assert_close(p.optim.epsilon, 1e-7, 0, 0);

	p = compile_ok("optimizer=SGD(lr=0.01, momentum=0.9, nesterov=True), loss='mse', metrics=['mae']");
	assert_int_equal(p.optim.kind, DL_OPTIM_SGD);
	assert_close(p.optim.lr, 0.01, 0, 0);
	assert_close(p.optim.momentum, 0.9, 0, 0);
	assert_true(p.optim.nesterov);
	assert_int_equal(p.loss, DL_LOSS_MEAN_SQUARED_ERROR);
	assert_int_equal(p.metric, DL_METRIC_MAE);

	/* MADlib's generated form, no spaces */
	p = compile_ok("optimizer='Adam(lr=0.001)',metrics=['accuracy'],loss='categorical_crossentropy'");
	assert_int_equal(p.optim.kind, DL_OPTIM_ADAM);

	p = compile_ok("optimizer='SGD', loss='categorical_crossentropy'");
	assert_int_equal(p.optim.kind, DL_OPTIM_SGD);
	assert_close(p.optim.lr, 0.01, 0, 0);
	assert_int_equal(p.metric, DL_METRIC_NONE);

	p = compile_ok("optimizer='Adam()', loss='categorical_crossentropy', metrics=[]");
	assert_int_equal(p.optim.kind, DL_OPTIM_ADAM);
	assert_int_equal(p.metric, DL_METRIC_NONE);

	p = compile_ok("optimizer=Adam(epsilon=None), loss='categorical_crossentropy'");
	assert_close(p.optim.epsilon, 1e-7, 0, 0);

	p = compile_ok("optimizer=\"RMSprop(lr=1e-3, rho=0.8, momentum=0.5, centered=False)\", "
				   "loss=\"binary_crossentropy\", metrics=[\"top_k_categorical_accuracy\"]");
	assert_int_equal(p.optim.kind, DL_OPTIM_RMSPROP);
	assert_close(p.optim.lr, 1e-3, 0, 0);
	assert_close(p.optim.rho, 0.8, 0, 0);
	assert_close(p.optim.momentum, 0.5, 0, 0);
	assert_false(p.optim.centered);
	assert_int_equal(p.loss, DL_LOSS_BINARY_CROSSENTROPY);
	assert_int_equal(p.metric, DL_METRIC_TOP_K_CATEGORICAL_ACCURACY);
	assert_int_equal(p.top_k, 5);
}

static void
test_compile_forms(void **state)
{
	DlCompileParams p;

	/* unquoted names, extra whitespace, newlines, trailing comma */
	p = compile_ok("  loss = categorical_crossentropy ,\n optimizer = adam ( learning_rate = 2.5E-2 ) , ");
	assert_int_equal(p.optim.kind, DL_OPTIM_ADAM);
	assert_close(p.optim.lr, 0.025, 0, 0);

	/* every argument of every optimizer */
	p = compile_ok("optimizer='Adam(lr=0.5, beta_1=0.8, beta_2=0.95, epsilon=1e-8, amsgrad=true, "
				   "decay=0.01, clipnorm=1, clipvalue=.5, name=\"opt\")', loss='mae'");
	assert_close(p.optim.lr, 0.5, 0, 0);
	assert_close(p.optim.beta_1, 0.8, 0, 0);
	assert_close(p.optim.beta_2, 0.95, 0, 0);
	assert_close(p.optim.epsilon, 1e-8, 0, 0);
	assert_true(p.optim.amsgrad);
	assert_close(p.optim.decay, 0.01, 0, 0);
	assert_close(p.optim.clipnorm, 1, 0, 0);
	assert_close(p.optim.clipvalue, 0.5, 0, 0);
	assert_int_equal(p.loss, DL_LOSS_MEAN_ABSOLUTE_ERROR);

	p = compile_ok("optimizer=Adagrad(initial_accumulator_value=0.2), loss=mse");
	assert_int_equal(p.optim.kind, DL_OPTIM_ADAGRAD);
	assert_close(p.optim.initial_accumulator_value, 0.2, 0, 0);
	p = compile_ok("optimizer=Adadelta(lr=1.0, rho=0.9), loss=mse");
	assert_int_equal(p.optim.kind, DL_OPTIM_ADADELTA);
	assert_close(p.optim.rho, 0.9, 0, 0);
	p = compile_ok("optimizer=Adamax(), loss=mse");
	assert_int_equal(p.optim.kind, DL_OPTIM_ADAMAX);
	p = compile_ok("optimizer=Nadam(schedule_decay=0.005), loss=mse");
	assert_int_equal(p.optim.kind, DL_OPTIM_NADAM);
	assert_close(p.optim.schedule_decay, 0.005, 0, 0);
	p = compile_ok("optimizer=SGD(momentum=0.9, nesterov=False), loss=mse");
	assert_false(p.optim.nesterov);
	assert_close(p.optim.lr, 0.01, 0, 0);
	p = compile_ok("optimizer=RMSprop(centered=True), loss=mse");
	assert_true(p.optim.centered);

	/* the last duplicate wins, also for the optimizer as a whole */
	p = compile_ok("optimizer='SGD(lr=0.5)', loss=mse, optimizer=Adam, loss=mae");
	assert_int_equal(p.optim.kind, DL_OPTIM_ADAM);
	assert_close(p.optim.lr, 0.001, 0, 0);
	assert_int_equal(p.loss, DL_LOSS_MEAN_ABSOLUTE_ERROR);
	p = compile_ok("optimizer=SGD(lr=0.5, lr=0.25), loss=mse");
	assert_close(p.optim.lr, 0.25, 0, 0);

	/* metrics: None, a bare string, a trailing comma, acc */
	p = compile_ok("optimizer=SGD, loss=mse, metrics=None");
	assert_int_equal(p.metric, DL_METRIC_NONE);
	p = compile_ok("optimizer=SGD, loss=mse, metrics='mse'");
	assert_int_equal(p.metric, DL_METRIC_MSE);
	p = compile_ok("optimizer=SGD, loss=mse, metrics=['acc',]");
	assert_int_equal(p.metric, DL_METRIC_ACCURACY);
	p = compile_ok("optimizer=SGD, loss=sparse_categorical_crossentropy, "
				   "metrics=['sparse_categorical_accuracy']");
	assert_int_equal(p.metric, DL_METRIC_SPARSE_CATEGORICAL_ACCURACY);
	assert_int_equal(p.loss, DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);

	/* loss_weights read (and checked against a model later); the others accepted and ignored */
	p = compile_ok("optimizer=SGD, loss=mse, loss_weights=[1.0, 0.5], weighted_metrics=['acc', 'mse'], "
				   "sample_weight_mode=None");
	assert_int_equal(p.loss, DL_LOSS_MEAN_SQUARED_ERROR);
	assert_int_equal(p.losses.n, 0);
	assert_int_equal(p.loss_weights.n, 2);
	assert_false(p.loss_weights.by_name);
	assert_true(p.loss_weights.weight[0] == 1.0 && p.loss_weights.weight[1] == 0.5);
	p = compile_ok("optimizer=SGD, loss=mse, loss_weights={'out': 1.0}");
	assert_int_equal(p.optim.kind, DL_OPTIM_SGD);
	assert_true(p.loss_weights.by_name && p.loss_weights.n == 1);
	assert_string_equal(p.loss_weights.names[0], "out");
	p = compile_ok("optimizer=SGD, loss=mse, loss_weights=None");
	assert_int_equal(p.loss_weights.n, 0);

	/* quotes and brackets inside quoted strings do not count */
	p = compile_ok("optimizer='Adam(name=\"a,b)(\")', loss='mse'");
	assert_int_equal(p.optim.kind, DL_OPTIM_ADAM);
	p = compile_ok("optimizer='Adam(name=\"it\\\"s\")', loss='mse'");
	assert_int_equal(p.optim.kind, DL_OPTIM_ADAM);
}

/*
 * Keras' per-output forms: loss as a list or dict, loss_weights likewise,
 * resolved against a model of two outputs named cls and reg.
 */
static void
test_compile_outputs(void **state)
{
	static const char json[] =
		"{\"class_name\": \"Model\", \"config\": {\"name\": \"two\", \"layers\": ["
		"{\"class_name\": \"InputLayer\", \"name\": \"a\", \"config\": {\"name\": \"a\", \"batch_input_shape\": [null, 3]}, \"inbound_nodes\": []},"
		"{\"class_name\": \"Dense\", \"name\": \"cls\", \"config\": {\"name\": \"cls\", \"units\": 2, \"activation\": \"softmax\"}, \"inbound_nodes\": [[[\"a\", 0, 0, {}]]]},"
		"{\"class_name\": \"Dense\", \"name\": \"reg\", \"config\": {\"name\": \"reg\", \"units\": 1}, \"inbound_nodes\": [[[\"a\", 0, 0, {}]]]}],"
		"\"input_layers\": [[\"a\", 0, 0]], \"output_layers\": [[\"cls\", 0, 0], [\"reg\", 0, 0]]}}";
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlModelSpec *spec;
	DlOutputConfig out[DL_MAX_IO];
	DlCompileParams p;
	DlError		err;

	assert_int_equal(dl_keras_parse_multi_io(json, strlen(json), &a, &spec, &err), DL_OK);

	/* one loss for every output, weight 1 */
	p = compile_ok("optimizer=SGD, loss=mse, metrics=['mae']");
	assert_int_equal(dl_compile_params_outputs(&p, spec, out, &err), DL_OK);
	assert_true(out[0].loss == DL_LOSS_MEAN_SQUARED_ERROR && out[1].loss == DL_LOSS_MEAN_SQUARED_ERROR);
	assert_true(out[0].loss_weight == 1.0 && out[1].loss_weight == 1.0);
	assert_true(out[0].metric == DL_METRIC_MAE && out[1].metric == DL_METRIC_MAE);

	/* a list: in the outputs' order; p.loss is the first */
	p = compile_ok("optimizer=SGD, loss=['categorical_crossentropy', 'mse'], loss_weights=[1.0, 0.5], "
				   "metrics=['accuracy']");
	assert_int_equal(p.loss, DL_LOSS_CATEGORICAL_CROSSENTROPY);
	assert_int_equal(p.losses.n, 2);
	assert_int_equal(dl_compile_params_outputs(&p, spec, out, &err), DL_OK);
	assert_true(out[0].loss == DL_LOSS_CATEGORICAL_CROSSENTROPY && out[1].loss == DL_LOSS_MEAN_SQUARED_ERROR);
	assert_true(out[0].loss_weight == 1.0 && out[1].loss_weight == 0.5);
	assert_true(out[0].metric == DL_METRIC_ACCURACY && out[1].metric == DL_METRIC_ACCURACY);

	/* a dict: by the output layers' names, in any order; a missing weight is 1 */
	p = compile_ok("optimizer=SGD, loss={'reg': 'mae', \"cls\": binary_crossentropy}, "
				   "loss_weights={'reg': 2}");
	assert_true(p.losses.by_name && p.losses.n == 2);
	assert_int_equal(dl_compile_params_outputs(&p, spec, out, &err), DL_OK);
	assert_true(out[0].loss == DL_LOSS_BINARY_CROSSENTROPY && out[1].loss == DL_LOSS_MEAN_ABSOLUTE_ERROR);
	assert_true(out[0].loss_weight == 1.0 && out[1].loss_weight == 2.0);

	/* against the model: lengths, names, every output's loss, the metric per output */
	p = compile_ok("optimizer=SGD, loss=['mse']");
	assert_int_equal(dl_compile_params_outputs(&p, spec, out, &err), DL_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err.msg, "has 1 entries, but the model has 2 outputs"));
	p = compile_ok("optimizer=SGD, loss=mse, loss_weights=[1, 2, 3]");
	assert_int_equal(dl_compile_params_outputs(&p, spec, out, &err), DL_ERR_INVALID_ARGUMENT);
	p = compile_ok("optimizer=SGD, loss={'cls': 'mse', 'other': 'mse'}");
	assert_int_equal(dl_compile_params_outputs(&p, spec, out, &err), DL_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err.msg, "\"other\", which is not an output"));
	p = compile_ok("optimizer=SGD, loss={'cls': 'mse'}");
	assert_int_equal(dl_compile_params_outputs(&p, spec, out, &err), DL_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err.msg, "no loss for output \"reg\""));
	p = compile_ok("optimizer=SGD, loss=['sparse_categorical_crossentropy', 'sparse_categorical_crossentropy'], "
				   "metrics=['sparse_categorical_accuracy']");
	assert_int_equal(dl_compile_params_outputs(&p, spec, out, &err), DL_OK);
	p.losses.loss[1] = DL_LOSS_MEAN_SQUARED_ERROR;
	assert_int_equal(dl_compile_params_outputs(&p, spec, out, &err), DL_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err.msg, "output \"reg\""));

	/* the strings themselves */
	compile_bad("optimizer=SGD, loss=[]", DL_ERR_INVALID_ARGUMENT, "\"loss\" has no entry");
	compile_bad("optimizer=SGD, loss=['mse', 'nope']", DL_ERR_INVALID_ARGUMENT, "nope");
	compile_bad("optimizer=SGD, loss={'a' 'mse'}", DL_ERR_PARSE, "expected 'output name': value");
	compile_bad("optimizer=SGD, loss={'a': 'mse', 'a': 'mae'}", DL_ERR_INVALID_ARGUMENT, "appears twice");
	compile_bad("optimizer=SGD, loss={'a\\'b': 'mse'}", DL_ERR_INVALID_ARGUMENT, "invalid output name");
	compile_bad("optimizer=SGD, loss=mse, loss_weights=[1, -0.5]", DL_ERR_INVALID_ARGUMENT, "-0.5");
	compile_bad("optimizer=SGD, loss=mse, loss_weights=[1, 'x']", DL_ERR_INVALID_ARGUMENT, "'x'");
	compile_bad("optimizer=SGD, loss=mse, loss_weights=0.5", DL_ERR_INVALID_ARGUMENT, "loss_weights");
	compile_bad("optimizer=SGD, loss=mse, loss_weights=[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]",
				DL_ERR_INVALID_ARGUMENT, "more than 16 entries");
	dl_model_spec_free(spec, &a);
	assert_no_leaks(&c);
}

static void
test_compile_errors(void **state)
{
	/* missing required keys */
	compile_bad("loss='mse'", DL_ERR_INVALID_ARGUMENT, "optimizer is a required compile parameter");
	compile_bad("", DL_ERR_INVALID_ARGUMENT, "optimizer is a required compile parameter");
	compile_bad(NULL, DL_ERR_INVALID_ARGUMENT, "optimizer is a required compile parameter");
	compile_bad("optimizer='Adam'", DL_ERR_INVALID_ARGUMENT, "loss is a required compile parameter");

	/* unknown keys, names and arguments */
	compile_bad("optimizer=SGD, loss=mse, foo=1", DL_ERR_INVALID_ARGUMENT,
				"compile parameter \"foo\" is not supported");
	compile_bad("optimizer=SGD, loss='hinge'", DL_ERR_INVALID_ARGUMENT,
				"loss function \"hinge\" is not supported");
	compile_bad("optimizer='Ftrl(lr=0.1)', loss=mse", DL_ERR_INVALID_ARGUMENT,
				"optimizer \"Ftrl\" is not supported");
	compile_bad("optimizer='Adam(lr=0.1, gamma=2)', loss=mse", DL_ERR_INVALID_ARGUMENT,
				"optimizer argument \"gamma\" is not supported");
	compile_bad("optimizer='SGD(beta_1=0.5)', loss=mse", DL_ERR_INVALID_ARGUMENT,
				"optimizer argument \"beta_1\" is not accepted by SGD");
	compile_bad("optimizer=SGD, loss=mse, metrics=['f1']", DL_ERR_INVALID_ARGUMENT,
				"metric \"f1\" is not supported");

	/* metric count and metric/loss pairing */
	compile_bad("optimizer=SGD, loss=mse, metrics=['mae', 'MAE']", DL_ERR_INVALID_ARGUMENT,
				"metric \"mae\" is listed twice in metrics");
	compile_bad("optimizer=SGD, loss=mse, metrics=['mae', 'mse', 'auc', 'precision', 'recall', "
				"'accuracy', 'top_2_accuracy', 'top_3_accuracy', 'binary_accuracy']",
				DL_ERR_INVALID_ARGUMENT, "metrics lists more than 8 names");
	compile_bad("optimizer=SGD, loss=mse, metrics=accuracy", DL_ERR_INVALID_ARGUMENT,
				"invalid value \"accuracy\" for compile parameter \"metrics\"");
	compile_bad("optimizer=SGD, loss=sparse_categorical_crossentropy, metrics=['categorical_accuracy']",
				DL_ERR_INVALID_ARGUMENT, "metric \"categorical_accuracy\" cannot be used");
	compile_bad("optimizer=SGD, loss=categorical_crossentropy, metrics=['sparse_categorical_accuracy']",
				DL_ERR_INVALID_ARGUMENT, "cannot be used with loss \"categorical_crossentropy\"");
	compile_bad("optimizer=SGD, loss=mse, sample_weight_mode='temporal'", DL_ERR_UNSUPPORTED,
				"'temporal'");

	/* bad values */
	compile_bad("optimizer='Adam(lr=0.0.1)', loss=mse", DL_ERR_INVALID_ARGUMENT,
				"invalid value \"0.0.1\" for optimizer argument \"lr\"");
	compile_bad("optimizer='Adam(lr=nan)', loss=mse", DL_ERR_INVALID_ARGUMENT, "\"nan\"");
	compile_bad("optimizer='Adam(lr=inf)', loss=mse", DL_ERR_INVALID_ARGUMENT, "\"inf\"");
	compile_bad("optimizer='Adam(lr=1e999)', loss=mse", DL_ERR_INVALID_ARGUMENT, "\"1e999\"");
	compile_bad("optimizer='Adam(lr=0x10)', loss=mse", DL_ERR_INVALID_ARGUMENT, "\"0x10\"");
	compile_bad("optimizer='Adam(lr=1e-3x)', loss=mse", DL_ERR_INVALID_ARGUMENT, "\"1e-3x\"");
	compile_bad("optimizer='Adam(lr=\"0.1\")', loss=mse", DL_ERR_INVALID_ARGUMENT, "\"0.1\"");
	compile_bad("optimizer='Adam(lr=None)', loss=mse", DL_ERR_INVALID_ARGUMENT, "\"None\"");
	compile_bad("optimizer='Adam(amsgrad=yes)', loss=mse", DL_ERR_INVALID_ARGUMENT,
				"invalid value \"yes\" for optimizer argument \"amsgrad\"");
	compile_bad("optimizer='Adam(lr=-0.1)', loss=mse", DL_ERR_INVALID_ARGUMENT,
				"learning rate must be positive, got -0.1");
	compile_bad("optimizer='SGD(momentum=1.5)', loss=mse", DL_ERR_INVALID_ARGUMENT,
				"momentum must be in [0, 1), got 1.5");

	/* structure */
	compile_bad("optimizer='Adam(lr=0.1), loss=mse", DL_ERR_PARSE, "unterminated quote at position 11");
	compile_bad("optimizer=Adam(lr=0.1, loss=mse", DL_ERR_PARSE, "unclosed \"(\" at position 15");
	compile_bad("optimizer=Adam(lr=0.1)), loss=mse", DL_ERR_PARSE, "unbalanced \")\" at position 23");
	compile_bad("optimizer=SGD, loss=mse, metrics=['acc')", DL_ERR_PARSE, "unbalanced \")\" at position 40");
	compile_bad("optimizer=SGD, loss", DL_ERR_PARSE, "expected name=value at position 16");
	compile_bad("optimizer=SGD,, loss=mse", DL_ERR_PARSE, "position 15");
	compile_bad("optimizer=SGD, 2x=3, loss=mse", DL_ERR_PARSE, "invalid parameter name \"2x\"");
	compile_bad("optimizer=, loss=mse", DL_ERR_PARSE, "missing value for \"optimizer\"");
	compile_bad("optimizer='SGD(0.1)', loss=mse", DL_ERR_PARSE, "optimizer argument \"0.1\"");
	compile_bad("optimizer='SGD(lr=0.1) x', loss=mse", DL_ERR_PARSE,
				"invalid optimizer \"SGD(lr=0.1) x\"");
	compile_bad("optimizer=SGD(lr=0.1)(), loss=mse", DL_ERR_PARSE, "invalid optimizer");
	compile_bad("optimizer='', loss=mse", DL_ERR_PARSE, "invalid optimizer");
	compile_bad("optimizer=SGD(lr=), loss=mse", DL_ERR_PARSE, "missing value for \"lr\"");
	compile_bad("optimizer=SGD(lr=0.1,,momentum=0.5), loss=mse", DL_ERR_PARSE, "empty item");
	compile_bad("optimizer=SGD, loss=mse, metrics=['a', , 'b']", DL_ERR_PARSE, "empty item");
}

static void
test_fit(void **state)
{
	DlFitParams p;

	p = fit_ok("batch_size=128, epochs=2, shuffle=False");
	assert_int_equal(p.batch_size, 128);
	assert_int_equal(p.epochs, 2);
	assert_false(p.shuffle);
	assert_false(p.has_seed);
	assert_int_equal(p.seed, DL_DEFAULT_SEED);

	p = fit_ok(NULL);
	assert_int_equal(p.batch_size, DL_DEFAULT_BATCH_SIZE);
	assert_int_equal(p.epochs, 1);
	assert_true(p.shuffle);
	assert_false(p.has_seed);
	assert_int_equal(p.seed, DL_DEFAULT_SEED);
	assert_int_equal(p.verbose, 0);
	p = fit_ok("");
	assert_int_equal(p.batch_size, 32);
	p = fit_ok("   \n ");
	assert_true(p.shuffle);

	p = fit_ok("epochs=10,batch_size=64");
	assert_int_equal(p.batch_size, 64);
	assert_int_equal(p.epochs, 10);
	p = fit_ok("shuffle=True, seed=0, verbose=2, initial_epoch=0, steps_per_epoch=None, "
			   "class_weight=None, batch_size=+7, epochs=3, epochs=4");
	assert_true(p.shuffle);
	assert_true(p.has_seed);
	assert_int_equal(p.seed, 0);
	assert_int_equal(p.verbose, 2);
	assert_int_equal(p.batch_size, 7);
	assert_int_equal(p.epochs, 4);
	p = fit_ok("seed=9223372036854775807, shuffle=false");
	assert_int_equal(p.seed, INT64_MAX);
	assert_false(p.shuffle);
	assert_int_equal(p.initial_epoch, 0);
	assert_int_equal(p.n_class_weight, 0);
}

/* initial_epoch as Keras' fit takes it: each call trains epochs - initial_epoch. */
static void
test_fit_initial_epoch(void **state)
{
	DlFitParams p = fit_ok("epochs=5, initial_epoch=2");

	assert_int_equal(p.epochs, 3);
	assert_int_equal(p.initial_epoch, 2);
	p = fit_ok("initial_epoch=4, epochs=5");
	assert_int_equal(p.epochs, 1);
	p = fit_ok("initial_epoch=0");
	assert_int_equal(p.epochs, 1);
	assert_int_equal(p.initial_epoch, 0);
}

/* class_weight: a dict from class index to weight, as Keras takes it. */
static void
test_fit_class_weight(void **state)
{
	DlFitParams p = fit_ok("class_weight={0: 1, 1: 5.5}, batch_size=4");
	DlError		err;

	assert_int_equal(p.n_class_weight, 2);
	assert_true(p.class_weight[0] == 1.0f && p.class_weight[1] == 5.5f);
	assert_int_equal(p.batch_size, 4);

	/* keys in any order, gaps allowed by the parser, a trailing comma */
	p = fit_ok("class_weight = { 2 : 0.25 , 0:3, }");
	assert_int_equal(p.n_class_weight, 3);
	assert_true(p.class_weight[0] == 3.0f && isnan(p.class_weight[1]) && p.class_weight[2] == 0.25f);

	/* None and {} are no class_weight; the last one given wins */
	assert_int_equal(fit_ok("class_weight=None").n_class_weight, 0);
	assert_int_equal(fit_ok("class_weight={}").n_class_weight, 0);
	assert_int_equal(fit_ok("class_weight={0: 2}, class_weight=None").n_class_weight, 0);
	p = fit_ok("class_weight={1023: 0}");
	assert_int_equal(p.n_class_weight, 1024);
	assert_true(p.class_weight[1023] == 0.0f);

	/* against the model: every class named, none beyond */
	p = fit_ok("class_weight={0: 1, 1: 2, 2: 3}");
	assert_int_equal(dl_fit_params_check_classes(&p, DL_LOSS_CATEGORICAL_CROSSENTROPY, 3, &err), DL_OK);
	assert_int_equal(dl_fit_params_check_classes(&p, DL_LOSS_CATEGORICAL_CROSSENTROPY, 2, &err),
					 DL_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err.msg, "class_weight names class 2, but the model has 2 classes (0 to 1)"));
	assert_true(err.hint[0] != '\0');
	assert_int_equal(dl_fit_params_check_classes(&p, DL_LOSS_CATEGORICAL_CROSSENTROPY, 4, &err),
					 DL_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err.msg, "class_weight gives no weight for class 3 of the model's 4 classes"));
	p = fit_ok("class_weight={0: 1, 2: 3}");
	assert_int_equal(dl_fit_params_check_classes(&p, DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, 3, &err),
					 DL_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err.msg, "no weight for class 1"));
	/* one output: classes 0 and 1, unless the loss is sparse */
	p = fit_ok("class_weight={0: 1, 1: 4}");
	assert_int_equal(dl_fit_params_check_classes(&p, DL_LOSS_BINARY_CROSSENTROPY, 1, &err), DL_OK);
	assert_int_equal(dl_fit_params_check_classes(&p, DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, 1, &err),
					 DL_ERR_INVALID_ARGUMENT);
	p = fit_ok(NULL);
	assert_int_equal(dl_fit_params_check_classes(&p, DL_LOSS_MEAN_SQUARED_ERROR, 7, &err), DL_OK);
}

/* MADlib's top_<k>_accuracy (load_top_k_accuracy_function) is top-k accuracy. */
static void
test_compile_metrics_list(void **state)
{
	char		name[32];
	char		buf[1024];
	DlCompileParams p = compile_ok("optimizer=SGD, loss=categorical_crossentropy, metrics=['accuracy', "
								   "'top_k_categorical_accuracy', 'top_2_accuracy', 'AUC', 'precision', "
								   "'Recall', 'mae', 'mse']");
	DlCompileParams q;
	DlError		err;
	static const char *const names[] = {"accuracy", "top_k_categorical_accuracy", "top_2_accuracy", "auc",
	"precision", "recall", "mae", "mse"};

	assert_int_equal(p.n_metrics, 8);
	for (int i = 0; i < 8; i++)
		assert_string_equal(dl_compile_params_metric_name_i(&p, i, name, sizeof(name)), names[i]);
	assert_int_equal(p.metric, DL_METRIC_ACCURACY);
	assert_int_equal(p.metrics[3], DL_METRIC_AUC);
	assert_int_equal(p.metric_top_k[1], 5);
	assert_int_equal(p.metric_top_k[2], 2);
	dl_error_clear(&err);
	/* training keeps every metric's sums: one AUC, two of 3, five of 1 */
	assert_int_equal(dl_compile_params_metric_sums_len(&p), 4 * DL_AUC_THRESHOLDS + 2 * 3 + 5);
	assert_true(dl_compile_params_metric_sums_len(&p) <= DL_METRIC_SUMS_MAX);
	/* the canonical form lists them all and reads back the same */
	assert_int_equal(dl_compile_params_format(&p, buf, sizeof(buf), &err), DL_OK);
	assert_non_null(strstr(buf, "metrics=['accuracy', 'top_k_categorical_accuracy', 'top_2_accuracy', "
						   "'auc', 'precision', 'recall', 'mae', 'mse']"));
	q = compile_ok(buf);
	assert_int_equal(q.n_metrics, 8);
	assert_memory_equal(q.metrics, p.metrics, sizeof(p.metrics));

	/* evaluate's metrics replace the model's, checked against its loss */
	q = compile_ok("optimizer=SGD, loss=categorical_crossentropy, metrics=['accuracy']");
	assert_int_equal(dl_compile_params_metric_sums_len(&q), 0);	/* the loss pass's metric */
	assert_int_equal(dl_compile_params_set_metrics(&q, " ['auc', 'top_3_accuracy'] ", &err), DL_OK);
	assert_int_equal(q.n_metrics, 2);
	assert_int_equal(q.metric, DL_METRIC_AUC);
	assert_int_equal(q.metric_top_k[1], 3);
	assert_int_equal(dl_compile_params_metric_sums_len(&q), 4 * DL_AUC_THRESHOLDS + 1);
	assert_int_equal(dl_compile_params_set_metrics(&q, "['sparse_categorical_accuracy']", &err),
					 DL_ERR_INVALID_ARGUMENT);
	assert_int_equal(q.n_metrics, 2);	/* unchanged */
	assert_int_not_equal(dl_compile_params_set_metrics(&q, "['auc'", &err), DL_OK);
	assert_int_equal(dl_compile_params_set_metrics(&q, "", &err), DL_ERR_INVALID_ARGUMENT);
	assert_int_equal(dl_compile_params_set_metrics(&q, "[]", &err), DL_OK);
	assert_int_equal(q.n_metrics, 0);
	assert_int_equal(q.metric, DL_METRIC_NONE);
	q = compile_ok("optimizer=SGD, loss=mse, metrics=['precision']");
	assert_int_equal(dl_compile_params_metric_sums_len(&q), 3);
}

static void
test_compile_top_k_names(void **state)
{
	static const int ks[] = {1, 3, 5, 12, 2147483647};
	char		s[160];
	char		name[32];

	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
	{
		DlCompileParams p;

		snprintf(s, sizeof(s), "optimizer=SGD, loss=categorical_crossentropy, metrics=['top_%d_accuracy']", ks[i]);
		p = compile_ok(s);
		assert_int_equal(p.metric, DL_METRIC_TOP_K_CATEGORICAL_ACCURACY);
		assert_int_equal(p.top_k, ks[i]);
		assert_true(p.top_k_named);
		snprintf(s, sizeof(s), "top_%d_accuracy", ks[i]);
		assert_string_equal(dl_compile_params_metric_name(&p, name, sizeof(name)), s);
	}
	{
		DlCompileParams p = compile_ok("optimizer=SGD, loss=mse, metrics=['top_k_categorical_accuracy']");

		assert_int_equal(p.top_k, 5);
		assert_false(p.top_k_named);
		assert_string_equal(dl_compile_params_metric_name(&p, name, sizeof(name)),
							"top_k_categorical_accuracy");
		/* a later metrics= replaces the k of an earlier one */
		p = compile_ok("optimizer=SGD, loss=mse, metrics=['top_2_accuracy'], metrics=['mae']");
		assert_int_equal(p.metric, DL_METRIC_MAE);
		assert_false(p.top_k_named);
		assert_int_equal(p.top_k, 5);
	}
	compile_bad("optimizer=SGD, loss=mse, metrics=['top_0_accuracy']", DL_ERR_INVALID_ARGUMENT,
				"metric \"top_0_accuracy\" is not supported");
	compile_bad("optimizer=SGD, loss=mse, metrics=['top_03_accuracy']", DL_ERR_INVALID_ARGUMENT,
				"\"top_03_accuracy\"");
	compile_bad("optimizer=SGD, loss=mse, metrics=['top_2147483648_accuracy']", DL_ERR_INVALID_ARGUMENT,
				"\"top_2147483648_accuracy\"");
	compile_bad("optimizer=SGD, loss=mse, metrics=['top__accuracy']", DL_ERR_INVALID_ARGUMENT,
				"\"top__accuracy\"");
	compile_bad("optimizer=SGD, loss=mse, metrics=['top_3x_accuracy']", DL_ERR_INVALID_ARGUMENT,
				"\"top_3x_accuracy\"");
	compile_bad("optimizer=SGD, loss=sparse_categorical_crossentropy, metrics=['top_3_accuracy']",
				DL_ERR_INVALID_ARGUMENT, "cannot be used with loss");
}

static void
test_fit_errors(void **state)
{
	fit_bad("batch_size=0", DL_ERR_INVALID_ARGUMENT, "batch_size must be between 1 and");
	fit_bad("batch_size=0", DL_ERR_INVALID_ARGUMENT, "got 0");
	fit_bad("batch_size=-5", DL_ERR_INVALID_ARGUMENT, "got -5");
	fit_bad("batch_size=32.5", DL_ERR_INVALID_ARGUMENT,
			"invalid value \"32.5\" for fit parameter \"batch_size\"");
	fit_bad("batch_size='32'", DL_ERR_INVALID_ARGUMENT, "\"'32'\"");
	fit_bad("epochs=0", DL_ERR_INVALID_ARGUMENT, "epochs must be between 1 and");
	fit_bad("epochs=3000000000", DL_ERR_INVALID_ARGUMENT, "got 3000000000");
	fit_bad("epochs=99999999999999999999999", DL_ERR_INVALID_ARGUMENT, "\"99999999999999999999999\"");
	fit_bad("shuffle='batch'", DL_ERR_INVALID_ARGUMENT, "invalid value \"'batch'\" for fit parameter \"shuffle\"");
	fit_bad("shuffle=1", DL_ERR_INVALID_ARGUMENT, "\"shuffle\"");
	fit_bad("seed=-1", DL_ERR_INVALID_ARGUMENT, "seed must be between 0 and");
	fit_bad("initial_epoch=3", DL_ERR_INVALID_ARGUMENT,
			"initial_epoch 3 is not less than epochs 1: no epoch would be trained");
	fit_bad("epochs=4, initial_epoch=4", DL_ERR_INVALID_ARGUMENT, "initial_epoch 4 is not less than epochs 4");
	fit_bad("initial_epoch=-1", DL_ERR_INVALID_ARGUMENT, "initial_epoch must be between 0 and");
	fit_bad("steps_per_epoch=10", DL_ERR_UNSUPPORTED, "\"steps_per_epoch\" is only accepted as None, got \"10\"");
	fit_bad("class_weight=5", DL_ERR_INVALID_ARGUMENT, "invalid value \"5\" for fit parameter \"class_weight\"");
	fit_bad("class_weight=[1, 5]", DL_ERR_INVALID_ARGUMENT, "\"[1, 5]\"");
	fit_bad("class_weight={0: 1, 1}", DL_ERR_PARSE, "class_weight entry \"1\" at position 21");
	fit_bad("class_weight={'a': 1}", DL_ERR_INVALID_ARGUMENT, "class_weight key \"'a'\" is not a class index from 0 to 1023");
	fit_bad("class_weight={-1: 1}", DL_ERR_INVALID_ARGUMENT, "key \"-1\"");
	fit_bad("class_weight={1024: 1}", DL_ERR_INVALID_ARGUMENT, "key \"1024\"");
	fit_bad("class_weight={1.0: 1}", DL_ERR_INVALID_ARGUMENT, "key \"1.0\"");
	fit_bad("class_weight={0: -2}", DL_ERR_INVALID_ARGUMENT, "class_weight of class 0 is \"-2\", not a finite number >= 0");
	fit_bad("class_weight={0: 1e39}", DL_ERR_INVALID_ARGUMENT, "\"1e39\"");
	fit_bad("class_weight={0: inf}", DL_ERR_INVALID_ARGUMENT, "\"inf\"");
	fit_bad("class_weight={0: 'x'}", DL_ERR_INVALID_ARGUMENT, "\"'x'\"");
	fit_bad("class_weight={0: 1, 2: 3, 0: 2}", DL_ERR_INVALID_ARGUMENT, "class_weight gives class 0 twice");
	fit_bad("validation_split=0.1", DL_ERR_UNSUPPORTED, "fit parameter \"validation_split\" is not supported");
	fit_bad("validation_data=(x, y)", DL_ERR_UNSUPPORTED, "\"validation_data\"");
	fit_bad("validation_steps=2", DL_ERR_UNSUPPORTED, "\"validation_steps\"");
	fit_bad("validation_freq=2", DL_ERR_UNSUPPORTED, "\"validation_freq\"");
	fit_bad("sample_weight=None", DL_ERR_UNSUPPORTED, "\"sample_weight\"");
	fit_bad("callbacks=[TensorBoard(log_dir='/tmp/x')]", DL_ERR_UNSUPPORTED, "\"callbacks\"");
	fit_bad("batch_size=32, foo=1", DL_ERR_INVALID_ARGUMENT, "fit parameter \"foo\" is not supported");
	fit_bad("batch_size=32, epochs", DL_ERR_PARSE, "expected name=value at position 16 in fit_params");
	fit_bad("batch_size=[32", DL_ERR_PARSE, "unclosed \"[\" at position 12 in fit_params");
	fit_bad("batch_size=\"32", DL_ERR_PARSE, "unterminated quote at position 12 in fit_params");
	fit_bad("batch_size=}", DL_ERR_PARSE, "unbalanced \"}\" at position 12");
	fit_bad("batch_size=32 epochs=2", DL_ERR_INVALID_ARGUMENT, "\"32 epochs=2\"");
	fit_bad("batch_size", DL_ERR_PARSE, "expected name=value");
	fit_bad(",batch_size=2", DL_ERR_PARSE, "empty item");
}

/* A failed parse leaves the caller's struct unchanged. */
static void
test_no_partial_output(void **state)
{
	DlFitParams f,
				before;
	DlCompileParams c,
				cbefore;
	DlError		err;

	memset(&f, 0x5a, sizeof(f));
	before = f;
	assert_int_equal(dl_fit_params_parse("batch_size=8, epochs=0", &f, &err), DL_ERR_INVALID_ARGUMENT);
	assert_memory_equal(&f, &before, sizeof(f));
	memset(&c, 0x5a, sizeof(c));
	cbefore = c;
	assert_int_equal(dl_compile_params_parse("optimizer=SGD", &c, &err), DL_ERR_INVALID_ARGUMENT);
	assert_memory_equal(&c, &cbefore, sizeof(c));
	/* a NULL DlError is allowed */
	assert_int_equal(dl_compile_params_parse("optimizer=SGD((", &c, NULL), DL_ERR_PARSE);
	assert_int_equal(dl_fit_params_parse("epochs=x", &f, NULL), DL_ERR_INVALID_ARGUMENT);
}

/* Deep nesting is refused, not recursed into. */
static void
test_nesting_limit(void **state)
{
	char		s[256];
	size_t		n = 0;

	n += (size_t) snprintf(s, sizeof(s), "loss_weights=");
	for (int i = 0; i < 40; i++)
		s[n++] = '[';
	for (int i = 0; i < 40; i++)
		s[n++] = ']';
	snprintf(s + n, sizeof(s) - n, ", optimizer=SGD, loss=mse");
	compile_bad(s, DL_ERR_PARSE, "nested more than");
}

/* Field-by-field equality of two parsed compile_params. */
static void
assert_compile_equal(const DlCompileParams *a, const DlCompileParams *b)
{
	const DlOptimConfig *x = &a->optim,
			   *y = &b->optim;

	assert_int_equal(a->loss, b->loss);
	assert_int_equal(a->metric, b->metric);
	assert_int_equal(a->top_k, b->top_k);
	assert_int_equal(a->top_k_named, b->top_k_named);
	assert_int_equal(x->kind, y->kind);
	assert_true(x->lr == y->lr && x->momentum == y->momentum && x->decay == y->decay);
	assert_true(x->beta_1 == y->beta_1 && x->beta_2 == y->beta_2 && x->epsilon == y->epsilon);
	assert_true(x->rho == y->rho && x->initial_accumulator_value == y->initial_accumulator_value);
	assert_true(x->schedule_decay == y->schedule_decay);
	assert_true(x->clipnorm == y->clipnorm && x->clipvalue == y->clipvalue);
	assert_true(x->nesterov == y->nesterov && x->amsgrad == y->amsgrad &&
				x->centered == y->centered);
	assert_int_equal(a->losses.n, b->losses.n);
	assert_int_equal(a->losses.by_name, b->losses.by_name);
	assert_int_equal(a->loss_weights.n, b->loss_weights.n);
	assert_int_equal(a->loss_weights.by_name, b->loss_weights.by_name);
	for (int i = 0; i < a->losses.n; i++)
		assert_true(a->losses.loss[i] == b->losses.loss[i] &&
					strcmp(a->losses.names[i], b->losses.names[i]) == 0);
	for (int i = 0; i < a->loss_weights.n; i++)
		assert_true(a->loss_weights.weight[i] == b->loss_weights.weight[i] &&
					strcmp(a->loss_weights.names[i], b->loss_weights.names[i]) == 0);
}

static void
test_format_round_trip(void **state)
{
	static const char *const good[] = {
		"loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']",
		"optimizer=SGD(lr=0.01, momentum=0.9, nesterov=True), loss='mse', metrics=['mae']",
		"optimizer=SGD, loss=binary_crossentropy",
		"optimizer='RMSprop(lr=0.1, rho=0.8, momentum=0.3, centered=True, epsilon=1e-9)', loss=mae",
		"optimizer=Adam(amsgrad=True, decay=1e-4, clipnorm=0.7, clipvalue=3), loss=mse, metrics=[]",
		("optimizer=Adagrad(initial_accumulator_value=0.3), loss=sparse_categorical_crossentropy, "
		 "metrics=['sparse_categorical_accuracy']"),
		"optimizer=Adadelta(lr=1.0), loss=mse, metrics=['top_k_categorical_accuracy']",
		"optimizer=Adamax(beta_1=0.85), loss=mse",
		"optimizer=Nadam(schedule_decay=0.01, lr=0.123456789012345678), loss=mse",
		"optimizer=SGD, loss=categorical_crossentropy, metrics=['top_3_accuracy']",
		"optimizer=SGD, loss=categorical_crossentropy, metrics=['top_5_accuracy']",
		"optimizer=SGD, loss=['categorical_crossentropy', mse], loss_weights=[1, 0.25]",
		"optimizer=SGD, loss={'cls': 'categorical_crossentropy', 'reg': 'mae'}, loss_weights={'reg': 1e-3}",
	};
	char		buf[512];
	char		tiny[24];
	DlError		err;
	DlFitParams f,
				f2;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
	{
		DlCompileParams a = compile_ok(good[i]),
					b;

		assert_int_equal(dl_compile_params_format(&a, buf, sizeof(buf), &err), DL_OK);
		b = compile_ok(buf);
		assert_compile_equal(&a, &b);
	}
	{
		DlCompileParams a = compile_ok(good[1]);

		assert_int_equal(dl_compile_params_format(&a, buf, sizeof(buf), &err), DL_OK);
		assert_string_equal(buf, "loss='mean_squared_error', optimizer='SGD(lr=0.01, momentum=0.9, "
							"nesterov=True, decay=0, clipnorm=0, clipvalue=0)', metrics=['mae']");
		assert_int_equal(dl_compile_params_format(&a, tiny, sizeof(tiny), &err), DL_ERR_LIMIT);
		assert_true(strlen(tiny) < sizeof(tiny));
	}

	f = fit_ok("batch_size=128, epochs=2, shuffle=False, seed=7, verbose=1");
	assert_int_equal(dl_fit_params_format(&f, buf, sizeof(buf), &err), DL_OK);
	assert_string_equal(buf, "batch_size=128, epochs=2, shuffle=False, seed=7");
	f2 = fit_ok(buf);
	assert_true(f2.batch_size == 128 && f2.epochs == 2 && !f2.shuffle && f2.has_seed && f2.seed == 7);
	f = fit_ok(NULL);
	assert_int_equal(dl_fit_params_format(&f, buf, sizeof(buf), &err), DL_OK);
	assert_string_equal(buf, "batch_size=32, epochs=1, shuffle=True");
	assert_int_equal(dl_fit_params_format(&f, tiny, 5, &err), DL_ERR_LIMIT);

	/* initial_epoch and class_weight: written as given, read back the same */
	f = fit_ok("class_weight={2: 0.1, 0: 3}, epochs=5, initial_epoch=2");
	assert_int_equal(dl_fit_params_format(&f, buf, sizeof(buf), &err), DL_OK);
	assert_string_equal(buf, "batch_size=32, epochs=5, shuffle=True, initial_epoch=2, "
						"class_weight={0: 3, 2: 0.1}");
	f2 = fit_ok(buf);
	assert_true(f2.epochs == 3 && f2.initial_epoch == 2 && f2.n_class_weight == 3);
	assert_true(f2.class_weight[0] == 3.0f && isnan(f2.class_weight[1]) && f2.class_weight[2] == 0.1f);
	{
		DlCompileParams a = compile_ok("optimizer=SGD, loss=categorical_crossentropy, metrics=['top_3_accuracy']");

		assert_int_equal(dl_compile_params_format(&a, buf, sizeof(buf), &err), DL_OK);
		assert_non_null(strstr(buf, "metrics=['top_3_accuracy']"));
	}
}

/* Is the schedule of a equal to b's, field by field? */
static void
assert_schedule_equal(const DlLrSchedule *a, const DlLrSchedule *b)
{
	assert_int_equal(a->kind, b->kind);
	assert_true(a->initial == b->initial && a->decay_steps == b->decay_steps &&
				a->decay_rate == b->decay_rate && a->staircase == b->staircase);
	assert_true(a->end_learning_rate == b->end_learning_rate && a->power == b->power &&
				a->cycle == b->cycle && a->alpha == b->alpha);
	assert_int_equal(a->n_boundaries, b->n_boundaries);
	for (int i = 0; i < a->n_boundaries; i++)
		assert_true(a->boundaries[i] == b->boundaries[i]);
	for (int i = 0; a->kind == DL_LR_PIECEWISE && i <= a->n_boundaries; i++)
		assert_true(a->values[i] == b->values[i]);
}

/*
 * Keras LearningRateSchedules as learning_rate: the call form (by name,
 * by position, with a dotted prefix) and the dict form Keras serializes
 * give the same schedule; the canonical string parses back to it; a
 * plain lr given after a schedule wins; bad schedules are refused with
 * a message naming the piece.
 */
static void
test_lr_schedules(void **state)
{
	static const char *const same[] = {
		"loss=mse, optimizer='SGD(learning_rate=ExponentialDecay(initial_learning_rate=0.1, decay_steps=100, decay_rate=0.96, staircase=True))'",
		"loss=mse, optimizer='SGD(lr=ExponentialDecay(0.1, 100, 0.96, True))'",
		"loss=mse, optimizer='SGD(learning_rate=keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=100, decay_rate=0.96, staircase=True, name=None))'",
		"loss=mse, optimizer=SGD(learning_rate={'class_name': 'ExponentialDecay', 'config': {'initial_learning_rate': 0.1, 'decay_steps': 100, 'decay_rate': 0.96, 'staircase': True, 'name': None}})",
		"loss=mse, optimizer='SGD(learning_rate={\"module\": \"keras.optimizers.schedules\", \"class_name\": \"ExponentialDecay\", \"config\": {\"initial_learning_rate\": 0.1, \"decay_steps\": 100, \"decay_rate\": 0.96, \"staircase\": True}, \"registered_name\": None})'",
	};
	static const char *const others[] = {
		"loss=mse, optimizer='Adam(learning_rate=InverseTimeDecay(0.01, 10, 0.5))'",
		"loss=mse, optimizer='Adam(learning_rate=PiecewiseConstantDecay(boundaries=[100, 200], values=[0.1, 0.01, 0.001]))'",
		"loss=mse, optimizer='Adam(learning_rate=PolynomialDecay(0.1, 1000, end_learning_rate=0.01, power=0.5, cycle=True))'",
		"loss=mse, optimizer='RMSprop(learning_rate=CosineDecay(0.1, 1000, alpha=0.1, warmup_steps=0))'",
		"loss=mse, optimizer='Adam(learning_rate=PiecewiseConstantDecay([5], [0.5, 0.25]), decay=0.01)'",
	};
	DlCompileParams ref = compile_ok(same[0]);
	DlCompileParams p;
	char		buf[1024];
	DlError		err;

	assert_int_equal(ref.optim.schedule.kind, DL_LR_EXPONENTIAL);
	assert_true(ref.optim.schedule.initial == 0.1 && ref.optim.schedule.decay_steps == 100 &&
				ref.optim.schedule.decay_rate == 0.96 && ref.optim.schedule.staircase);
	assert_true(ref.optim.lr == 0.1);	/* the value at step 0 */
	for (size_t i = 1; i < sizeof(same) / sizeof(same[0]); i++)
	{
		p = compile_ok(same[i]);
		assert_schedule_equal(&p.optim.schedule, &ref.optim.schedule);
	}
	assert_int_equal(dl_compile_params_format(&ref, buf, sizeof(buf), &err), DL_OK);
	assert_non_null(strstr(buf, "optimizer='SGD(learning_rate=ExponentialDecay(initial_learning_rate=0.1, decay_steps=100, decay_rate=0.96, staircase=True), "));
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
	{
		DlCompileParams a = compile_ok(others[i]);

		assert_int_not_equal(a.optim.schedule.kind, DL_LR_CONSTANT);
		assert_int_equal(dl_compile_params_format(&a, buf, sizeof(buf), &err), DL_OK);
		p = compile_ok(buf);
		assert_schedule_equal(&p.optim.schedule, &a.optim.schedule);
		assert_true(p.optim.decay == a.optim.decay);
	}
	p = compile_ok(others[2]);
	assert_true(p.optim.schedule.end_learning_rate == 0.01 && p.optim.schedule.power == 0.5 &&
				p.optim.schedule.cycle);
	p = compile_ok(others[1]);
	assert_int_equal(p.optim.schedule.n_boundaries, 2);
	assert_true(p.optim.schedule.values[2] == 0.001);
	/* defaults: PolynomialDecay's end_learning_rate 0.0001, power 1 */
	p = compile_ok("loss=mse, optimizer='SGD(lr=PolynomialDecay(0.1, 10))'");
	assert_true(p.optim.schedule.end_learning_rate == 0.0001 && p.optim.schedule.power == 1.0 &&
				!p.optim.schedule.cycle);
	/* the last learning rate given wins, a schedule or a number */
	p = compile_ok("loss=mse, optimizer='SGD(learning_rate=ExponentialDecay(0.1, 100, 0.96), lr=0.5)'");
	assert_int_equal(p.optim.schedule.kind, DL_LR_CONSTANT);
	assert_true(p.optim.lr == 0.5);
	p = compile_ok("loss=mse, optimizer='SGD(lr=0.5, learning_rate=InverseTimeDecay(0.1, 100, 0.5))'");
	assert_int_equal(p.optim.schedule.kind, DL_LR_INVERSE_TIME);

	compile_bad("loss=mse, optimizer='SGD(lr=StepDecay(0.1, 100))'", DL_ERR_INVALID_ARGUMENT, "StepDecay");
	compile_bad("loss=mse, optimizer='SGD(lr=ExponentialDecay(0.1, 100))'", DL_ERR_INVALID_ARGUMENT, "decay_rate");
	compile_bad("loss=mse, optimizer='SGD(lr=ExponentialDecay(0.1, 0, 0.9))'", DL_ERR_INVALID_ARGUMENT, "decay_steps");
	compile_bad("loss=mse, optimizer='SGD(lr=ExponentialDecay(-0.1, 10, 0.9))'", DL_ERR_INVALID_ARGUMENT, "initial_learning_rate");
	compile_bad("loss=mse, optimizer='SGD(lr=ExponentialDecay(0.1, 10, x))'", DL_ERR_INVALID_ARGUMENT, "\"x\"");
	compile_bad("loss=mse, optimizer='SGD(lr=ExponentialDecay(0.1, 10, 0.9, staircase=2))'", DL_ERR_INVALID_ARGUMENT, "staircase");
	compile_bad("loss=mse, optimizer='SGD(lr=ExponentialDecay(0.1, 10, 0.9, decay_steps=3))'", DL_ERR_INVALID_ARGUMENT, "twice");
	compile_bad("loss=mse, optimizer='SGD(lr=ExponentialDecay(0.1, 10, 0.9, rate=3))'", DL_ERR_INVALID_ARGUMENT, "\"rate\"");
	compile_bad("loss=mse, optimizer='SGD(lr=ExponentialDecay(0.1, 10, 0.9, False, None, 7))'", DL_ERR_PARSE, "\"7\"");
	compile_bad("loss=mse, optimizer='SGD(lr=ExponentialDecay(decay_steps=10, 0.1, 0.9))'", DL_ERR_PARSE, "\"0.1\"");
	compile_bad("loss=mse, optimizer='SGD(lr=PiecewiseConstantDecay([10, 20], [0.1, 0.01]))'", DL_ERR_INVALID_ARGUMENT, "2 boundaries and 2 values");
	compile_bad("loss=mse, optimizer='SGD(lr=PiecewiseConstantDecay([20, 10], [0.1, 0.01, 0.001]))'", DL_ERR_INVALID_ARGUMENT, "boundary");
	compile_bad("loss=mse, optimizer='SGD(lr=PiecewiseConstantDecay([10], [0.1, 0]))'", DL_ERR_INVALID_ARGUMENT, "value");
	compile_bad("loss=mse, optimizer='SGD(lr=PiecewiseConstantDecay(10, [0.1, 0.2]))'", DL_ERR_INVALID_ARGUMENT, "boundaries");
	compile_bad("loss=mse, optimizer='SGD(lr=CosineDecay(0.1, 10, alpha=2))'", DL_ERR_INVALID_ARGUMENT, "alpha");
	compile_bad("loss=mse, optimizer='SGD(lr=CosineDecay(0.1, 10, warmup_steps=5))'", DL_ERR_UNSUPPORTED, "warmup_steps");
	compile_bad("loss=mse, optimizer='SGD(lr=PolynomialDecay(0.1, 10, power=0))'", DL_ERR_INVALID_ARGUMENT, "power");
	compile_bad("loss=mse, optimizer=SGD(lr={'class_name': 'ExponentialDecay'})", DL_ERR_INVALID_ARGUMENT, "config");
	compile_bad("loss=mse, optimizer=SGD(lr={'class_name': 'ExponentialDecay', 'config': {'initial_learning_rate': 0.1}, 'x': 1})", DL_ERR_INVALID_ARGUMENT, "\"x\"");
	compile_bad("loss=mse, optimizer=SGD(lr={'class_name': 'ExponentialDecay', 'config': {'initial_learning_rate': 0.1, 'decay_steps': 5}})", DL_ERR_INVALID_ARGUMENT, "decay_rate");
	compile_bad("loss=mse, optimizer=SGD(lr={class_name: 1})", DL_ERR_PARSE, "class_name");
	compile_bad("loss=mse, optimizer='SGD(lr=a..b(0.1, 10, 0.9))'", DL_ERR_INVALID_ARGUMENT, "a..b");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compile_madlib_examples),
		cmocka_unit_test(test_compile_forms),
		cmocka_unit_test(test_compile_errors),
		cmocka_unit_test(test_compile_outputs),
		cmocka_unit_test(test_fit),
		cmocka_unit_test(test_fit_errors),
		cmocka_unit_test(test_fit_initial_epoch),
		cmocka_unit_test(test_fit_class_weight),
		cmocka_unit_test(test_compile_top_k_names),
		cmocka_unit_test(test_compile_metrics_list),
		cmocka_unit_test(test_no_partial_output),
		cmocka_unit_test(test_nesting_limit),
		cmocka_unit_test(test_format_round_trip),
		cmocka_unit_test(test_lr_schedules),
	};

	return cmocka_run_group_tests_name("params", tests, NULL, NULL);
}
