/*-------------------------------------------------------------------------
 *
 * fixture_cases.h
 *	  Unit-test support: reference fixtures of whole models (TF.js,
 *	  PyTorch), run by the engine and compared with the reference.
 *
 * A fixture file (tfjs_graphs.json, torch_graphs.json made by
 * gen_graphs.js and gen_graphs_torch.py; tfjs_sequences.json and
 * torch_sequences.json made by gen_sequences.js and
 * gen_sequences_torch.py) holds cases: a Keras architecture, initial
 * weights, inputs and targets, the reference's predictions and its
 * weights and losses after two full-batch steps of SGD and of Adam.  The
 * engine must predict within FX_PRED_TOL and train within FX_STEP_TOL
 * (the issues' bounds), and its analytic gradients must match finite
 * differences of the whole loss.
 *
 * IDENTIFICATION
 *	  test/unit/fixture_cases.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FIXTURE_CASES_H
#define FIXTURE_CASES_H

#include <json-c/json.h>

#include "unit_util.h"
#include "madlib_dl/dl_keras.h"
#include "madlib_dl/dl_model.h"

/* the bounds: predictions within 1e-5, two steps within 2e-4 */
#define FX_PRED_TOL 1e-5
#define FX_STEP_TOL 2e-4
#define FX_LOSS_TOL 1e-5

/* with kinks skipped, float forward passes give errors of about 1e-4 */
#define FX_GRAD_TOL 5e-3

/* One fixture case, read: the model and its data. */
typedef struct FxCase
{
	const char *name;
	TestAllocCounter counter;
	DlAllocator alloc;
	DlModelSpec *spec;
	int64_t		n;
	int			n_in;
	int			n_out;
	float	   *x[DL_MAX_IO];
	float	   *y[DL_MAX_IO];
	float	   *pred[DL_MAX_IO];
	size_t		pred_len[DL_MAX_IO];
	DlOutputConfig out_cfg[DL_MAX_IO];
	float	   *w0;
	size_t		P;
} FxCase;

/* Member key of o; fails the test when absent. */
json_object *fx_member(json_object *o, const char *key);

/* The number array a as floats (malloc'd), its length into *n. */
float	   *fx_floats(json_object *a, size_t *n);

/* A fixture's loss name (TF.js' spelling) as the engine's. */
DlLossKind	fx_loss_of(const char *name);

/* max |a[i] - b[i]| over n */
double		fx_max_abs_diff(const float *a, const float *b, size_t n);

/*
 * Read case c with the architecture under arch_key (model_arch, or
 * model_arch_k3); smooth: with every ReLU made a tanh, so that finite
 * differences see no kinks.
 */
void		fx_case_read_as(FxCase *g, json_object *c, const char *arch_key, bool smooth);
void		fx_case_read(FxCase *g, json_object *c, const char *arch_key);
void		fx_case_free(FxCase *g);

/* The engine's predictions against the reference's; the largest difference. */
double		fx_case_predict(FxCase *g);

/*
 * Two full-batch steps with the optimizer of fixture object opt ("sgd"
 * or "adam"); the largest weight difference from the reference's after
 * either, the largest loss difference into *dloss, how far the weights
 * moved into *moved.
 */
double		fx_case_train(FxCase *g, json_object *c, const char *opt, double *dloss, double *moved);

/*
 * Every case of a fixture file: predictions (also in Keras 3's dialect
 * where the case has it), then SGD and Adam steps; prints the figures,
 * fails beyond the bounds.
 */
void		fx_check_fixture(const char *file, const char *who);

/*
 * The analytic gradient of every trainable float of g's model, on its
 * data, against central differences of the loss; the relative L2 error,
 * the floats skipped at a kink into *n_kinks.
 */
double		fx_gradcheck(FxCase *g, int *n_kinks);

/* fx_gradcheck of every model of a fixture file, its ReLUs made tanh. */
void		fx_check_fixture_gradients(const char *file);

#endif							/* FIXTURE_CASES_H */
