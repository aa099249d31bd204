/*-------------------------------------------------------------------------
 *
 * fixture_cases.c
 *	  Unit-test support: reference fixtures of whole models, run by the
 *	  engine and compared with the reference (fixture_cases.h).
 *
 * IDENTIFICATION
 *	  test/unit/fixture_cases.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_cases.h"
#include "model_impl.h"

json_object *
fx_member(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("fixture lacks \"%s\"", key);
	return v;
}

/* The number array a as floats (malloc'd), its length into *n. */
float *
fx_floats(json_object *a, size_t *n)
{
	size_t		len = json_object_array_length(a);
	float	   *out = malloc(sizeof(float) * (len > 0 ? len : 1));

	for (size_t i = 0; i < len; i++)
		out[i] = (float) json_object_get_double(json_object_array_get_idx(a, i));
	*n = len;
	return out;
}

DlLossKind
fx_loss_of(const char *name)
{
	if (strcmp(name, "categoricalCrossentropy") == 0)
		return DL_LOSS_CATEGORICAL_CROSSENTROPY;
	if (strcmp(name, "binaryCrossentropy") == 0)
		return DL_LOSS_BINARY_CROSSENTROPY;
	if (strcmp(name, "meanSquaredError") == 0)
		return DL_LOSS_MEAN_SQUARED_ERROR;
	fail_msg("unknown loss %s in the fixture", name);
	return DL_LOSS_CATEGORICAL_CROSSENTROPY;
}

double
fx_max_abs_diff(const float *a, const float *b, size_t n)
{
	double		d = 0;

	for (size_t i = 0; i < n; i++)
		d = fmax(d, fabs((double) a[i] - (double) b[i]));
	return d;
}


/*
 * Read case c with the architecture under arch_key; smooth: with every
 * ReLU made a tanh, so that finite differences see no kinks.
 */
void
fx_case_read_as(FxCase *g, json_object *c, const char *arch_key, bool smooth)
{
	char	   *arch = strdup(json_object_to_json_string_ext(fx_member(c, arch_key), JSON_C_TO_STRING_PLAIN));
	char	   *at;
	json_object *ins = fx_member(c, "inputs");
	json_object *outs = fx_member(c, "outputs");
	DlError		err;
	size_t		len;

	memset(g, 0, sizeof(*g));
	g->name = json_object_get_string(fx_member(c, "name"));
	g->alloc = test_allocator(&g->counter);
	while (smooth && (at = strstr(arch, "\"activation\":\"relu\"")) != NULL)
		memcpy(at + strlen("\"activation\":\""), "tanh", 4);
	if (dl_keras_parse_multi_io(arch, strlen(arch), &g->alloc, &g->spec, &err) != DL_OK)
		fail_msg("%s (%s): %s", g->name, arch_key, err.msg);
	free(arch);
	g->n = json_object_get_int64(fx_member(c, "n"));
	g->n_in = (int) json_object_array_length(ins);
	g->n_out = (int) json_object_array_length(outs);
	assert_int_equal(g->spec->n_inputs, g->n_in);
	assert_int_equal(g->spec->n_outputs, g->n_out);
	for (int k = 0; k < g->n_in; k++)
	{
		g->x[k] = fx_floats(fx_member(json_object_array_get_idx(ins, (size_t) k), "data"), &len);
		assert_int_equal(len, g->n * dl_shape_size(&g->spec->input_shapes[k]));
	}
	for (int k = 0; k < g->n_out; k++)
	{
		json_object *o = json_object_array_get_idx(outs, (size_t) k);

		g->y[k] = fx_floats(fx_member(o, "y"), &len);
		g->pred[k] = fx_floats(fx_member(o, "prediction"), &g->pred_len[k]);
		assert_int_equal(g->pred_len[k], g->n * dl_shape_size(&g->spec->output_shapes[k]));
		g->out_cfg[k].loss = fx_loss_of(json_object_get_string(fx_member(o, "loss")));
		g->out_cfg[k].loss_weight = json_object_get_double(fx_member(o, "loss_weight"));
		g->out_cfg[k].metric = DL_METRIC_NONE;
		g->out_cfg[k].top_k = 5;
	}
	g->w0 = fx_floats(fx_member(c, "initial_weights"), &g->P);
	if (g->P != g->spec->n_params)
		fail_msg("%s: the fixture has %zu weights, the spec %zu", g->name, g->P, g->spec->n_params);
}

void
fx_case_read(FxCase *g, json_object *c, const char *arch_key)
{
	fx_case_read_as(g, c, arch_key, false);
}

void
fx_case_free(FxCase *g)
{
	dl_model_spec_free(g->spec, &g->alloc);
	assert_no_leaks(&g->counter);
	for (int k = 0; k < g->n_in; k++)
		free(g->x[k]);
	for (int k = 0; k < g->n_out; k++)
	{
		free(g->y[k]);
		free(g->pred[k]);
	}
	free(g->w0);
}

/* The engine's predictions against TF.js'; the largest difference. */
double
fx_case_predict(FxCase *g)
{
	DlModel    *m;
	DlError		err;
	float	   *out[DL_MAX_IO];
	double		d = 0;

	assert_int_equal(dl_model_create(g->spec, NULL, &g->alloc, &m, &err), DL_OK);
	assert_int_equal(dl_model_set_params(m, g->w0, g->P, &err), DL_OK);
	for (int k = 0; k < g->n_out; k++)
		out[k] = malloc(sizeof(float) * g->pred_len[k]);
	/* batches of 2: several passes through the reused buffers */
	if (dl_model_predict_io(m, out, (const float *const *) g->x, g->n, 2, &err) != DL_OK)
		fail_msg("%s: predict: %s", g->name, err.msg);
	for (int k = 0; k < g->n_out; k++)
	{
		d = fmax(d, fx_max_abs_diff(out[k], g->pred[k], g->pred_len[k]));
		free(out[k]);
	}
	dl_model_free(m);
	return d;
}

/*
 * Two full-batch steps with the optimizer of fixture object opt ("sgd"
 * or "adam"); the largest weight difference from TF.js' after either,
 * and the largest loss difference into *dloss.
 */
double
fx_case_train(FxCase *g, json_object *c, const char *opt, double *dloss, double *moved)
{
	json_object *o = fx_member(c, opt);
	json_object *after = fx_member(o, "weights");
	json_object *loss = fx_member(o, "loss");
	DlOptimConfig oc;
	DlTrainConfig cfg;
	DlModel    *m;
	DlError		err;
	double		d = 0;

	dl_optim_config_default(&oc, strcmp(opt, "sgd") == 0 ? DL_OPTIM_SGD : DL_OPTIM_ADAM);
	oc.lr = json_object_get_double(fx_member(o, "lr"));
	if (oc.kind == DL_OPTIM_ADAM)
	{
		oc.beta_1 = json_object_get_double(fx_member(o, "beta_1"));
		oc.beta_2 = json_object_get_double(fx_member(o, "beta_2"));
		oc.epsilon = json_object_get_double(fx_member(o, "epsilon"));
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.loss = g->out_cfg[0].loss;
	cfg.batch_size = g->n;
	cfg.outputs = g->out_cfg;
	assert_int_equal(dl_model_create(g->spec, &oc, &g->alloc, &m, &err), DL_OK);
	assert_int_equal(dl_model_set_params(m, g->w0, g->P, &err), DL_OK);
	*dloss = 0;
	*moved = 0;
	for (int s = 0; s < 2; s++)
	{
		DlBatchStats st;
		size_t		n;
		float	   *want = fx_floats(json_object_array_get_idx(after, (size_t) s), &n);

		memset(&st, 0, sizeof(st));
		assert_int_equal(n, g->P);
		if (dl_model_train_batch_io(m, &cfg, (const float *const *) g->x,
									(const float *const *) g->y, g->n, &st, &err) != DL_OK)
			fail_msg("%s: %s step %d: %s", g->name, opt, s + 1, err.msg);
		d = fmax(d, fx_max_abs_diff(dl_model_params(m), want, n));
		*moved = fmax(*moved, fx_max_abs_diff(dl_model_params(m), g->w0, n));
		*dloss = fmax(*dloss, fabs(st.loss_sum / (double) st.n -
								   json_object_get_double(json_object_array_get_idx(loss, (size_t) s))));
		free(want);
	}
	dl_model_free(m);
	return d;
}

/* Every case of a fixture file: predictions, then SGD and Adam steps. */
void
fx_check_fixture(const char *file, const char *who)
{
	char	   *text = read_fixture(file, NULL);
	json_object *root = json_tokener_parse(text);
	json_object *cases;
	double		worst_p = 0,
				worst_w = 0;

	assert_non_null(root);
	cases = fx_member(root, "cases");
	assert_true(json_object_array_length(cases) >= 2);
	for (size_t i = 0; i < json_object_array_length(cases); i++)
	{
		json_object *c = json_object_array_get_idx(cases, i);
		json_object *k3;
		FxCase	g;
		double		dp,
					dsgd = 0,
					dadam = 0,
					lsgd = 0,
					ladam = 0,
					msgd = 0,
					madam = 0;

		fx_case_read(&g, c, "model_arch");
		dp = fx_case_predict(&g);
		if (json_object_get_boolean(fx_member(c, "trained")))
		{
			dsgd = fx_case_train(&g, c, "sgd", &lsgd, &msgd);
			dadam = fx_case_train(&g, c, "adam", &ladam, &madam);
		}
		print_message("%s %-18s P %5zu: max |prediction difference| %.2e, two steps: "
					  "SGD max |weight difference| %.2e (moved %.2e, loss %.1e), "
					  "Adam %.2e (moved %.2e, loss %.1e)\n",
					  who, g.name, g.P, dp, dsgd, msgd, lsgd, dadam, madam, ladam);
		if (!(dp <= FX_PRED_TOL))
			fail_msg("%s: predictions differ from %s' by %g", g.name, who, dp);
		if (json_object_get_boolean(fx_member(c, "trained")))
		{
			if (!(dsgd <= FX_STEP_TOL) || !(dadam <= FX_STEP_TOL))
				fail_msg("%s: weights after two steps differ from %s' by %g (SGD), %g (Adam)",
						 g.name, who, dsgd, dadam);
			if (!(lsgd <= FX_LOSS_TOL) || !(ladam <= FX_LOSS_TOL))
				fail_msg("%s: losses differ from %s' by %g (SGD), %g (Adam)", g.name, who, lsgd, ladam);
			/* a step that moved nothing would match anything */
			if (!(msgd > 20 * FX_STEP_TOL) || !(madam > 20 * FX_STEP_TOL))
				fail_msg("%s: the steps moved the weights by only %g, %g", g.name, msgd, madam);
		}
		worst_p = fmax(worst_p, dp);
		worst_w = fmax(worst_w, fmax(dsgd, dadam));
		fx_case_free(&g);

		/* the same graph in Keras 3's dialect, where the fixture has it */
		if (json_object_object_get_ex(c, "model_arch_k3", &k3))
		{
			FxCase	g3;
			double		d3;

			fx_case_read(&g3, c, "model_arch_k3");
			d3 = fx_case_predict(&g3);
			print_message("%s %-18s in Keras 3's dialect: max |prediction difference| %.2e\n",
						  who, g3.name, d3);
			if (!(d3 <= FX_PRED_TOL))
				fail_msg("%s (Keras 3 dialect): predictions differ by %g", g3.name, d3);
			fx_case_free(&g3);
		}
	}
	print_message("%s, all cases: max |prediction difference| %.2e, max |weight difference| %.2e\n",
				  who, worst_p, worst_w);
	json_object_put(root);
	free(text);
}

/* ---------------------------------------------------------------------
 * Gradients against finite differences
 * --------------------------------------------------------------------- */

/* The loss (mean over the batch) at the current weights, in double. */
static double
mean_loss(DlModel *m, const DlTrainConfig *cfg, float *const *x, float *const *y, int64_t B)
{
	double		loss;
	DlError		err;

	if (dl_model_compute_gradients_io(m, cfg, (const float *const *) x, (const float *const *) y,
									  B, &loss, &err) != DL_OK)
		fail_msg("compute_gradients: %s", err.msg);
	return loss / (double) B;
}

static double
central_difference(DlModel *m, const DlTrainConfig *cfg, float *const *x, float *const *y,
				   int64_t B, size_t i, double eps)
{
	float		w0 = m->params[i];
	double		lp,
				lm;

	m->params[i] = w0 + (float) eps;
	lp = mean_loss(m, cfg, x, y, B);
	m->params[i] = w0 - (float) eps;
	lm = mean_loss(m, cfg, x, y, B);
	m->params[i] = w0;
	return (lp - lm) / (2 * eps);
}

/*
 * The analytic gradient of every trainable float of g's model at its
 * initial weights, on its data, against central differences (eps 1e-3
 * and 5e-4; a float whose two estimates disagree sits at a kink, a ReLU
 * at 0 or a maximum changing hands, and is skipped); the relative L2
 * error.
 */
double
fx_gradcheck(FxCase *g, int *n_kinks)
{
	DlOptimConfig o;
	DlTrainConfig cfg;
	DlModel    *m;
	DlError		err;
	double	   *fd = malloc(sizeof(double) * g->P);
	float	   *ga = malloc(sizeof(float) * g->P);
	float	   *grad = malloc(sizeof(float) * g->P);
	const DlParamRange *ranges;
	int			n_ranges;
	size_t		n = 0;
	int			n_checked = 0;
	double		loss,
				e;

	*n_kinks = 0;
	dl_optim_config_default(&o, DL_OPTIM_SGD);
	memset(&cfg, 0, sizeof(cfg));
	cfg.batch_size = g->n;
	cfg.outputs = g->out_cfg;
	assert_int_equal(dl_model_create(g->spec, &o, &g->alloc, &m, &err), DL_OK);
	assert_int_equal(dl_model_set_params(m, g->w0, g->P, &err), DL_OK);
	if (dl_model_compute_gradients_io(m, &cfg, (const float *const *) g->x,
									  (const float *const *) g->y, g->n, &loss, &err) != DL_OK)
		fail_msg("%s: %s", g->name, err.msg);
	memcpy(grad, dl_model_grads(m), sizeof(float) * g->P);
	ranges = dl_model_trainable_ranges(m, &n_ranges);
	for (int k = 0; k < n_ranges; k++)
		for (size_t i = ranges[k].begin; i < ranges[k].end; i++)
		{
			double		d1 = central_difference(m, &cfg, g->x, g->y, g->n, i, 1e-3);
			double		d2 = central_difference(m, &cfg, g->x, g->y, g->n, i, 5e-4);

			n_checked++;
			if (fabs(d1 - d2) > 2e-3 + 0.02 * fabs(d1))
			{
				(*n_kinks)++;
				continue;
			}
			fd[n] = d1;
			ga[n] = grad[i];
			n++;
		}
	if (*n_kinks * 10 > n_checked)
		fail_msg("%s: %d of %d floats sit at a kink: the check is meaningless", g->name,
				 *n_kinks, n_checked);
	e = rel_l2_error_fd(ga, fd, n);
	dl_model_free(m);
	free(fd);
	free(ga);
	free(grad);
	return e;
}


/*
 * Every model of the fixtures, its ReLUs made tanh: the analytic
 * gradients are right.
 */
void
fx_check_fixture_gradients(const char *file)
{
	char	   *text = read_fixture(file, NULL);
	json_object *root = json_tokener_parse(text);
	json_object *cases = fx_member(root, "cases");

	for (size_t i = 0; i < json_object_array_length(cases); i++)
	{
		FxCase	g;
		int			kinks;
		double		e;

		fx_case_read_as(&g, json_object_array_get_idx(cases, i), "model_arch", true);
		e = fx_gradcheck(&g, &kinks);
		print_message("gradient check %-18s: relative L2 error %.2e (%d floats at a kink skipped)\n",
					  g.name, e, kinks);
		if (!(e < FX_GRAD_TOL))
			fail_msg("%s: relative L2 gradient error %g >= %g", g.name, e, FX_GRAD_TOL);
		fx_case_free(&g);
	}
	json_object_put(root);
	free(text);
}

