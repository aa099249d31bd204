/*-------------------------------------------------------------------------
 *
 * pg_model.h
 *	  Build engine models inside PostgreSQL, from an architecture JSON and
 *	  MADlib's compile_params / fit_params strings.
 *
 * A DlPgModel owns one memory context; everything the engine allocates
 * for it lives there, so deleting the context (dl_pg_model_free, or the
 * end of the parent context) frees it all, also after an ERROR.  Engine
 * errors become ERRORs through dl_pg_report.
 *
 * IDENTIFICATION
 *	  src/pg/runtime/pg_model.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_MODEL_H
#define PG_MODEL_H

#include "pg_glue.h"

#include "utils/array.h"

#include "madlib_dl/dl_model.h"
#include "madlib_dl/dl_params.h"
#include "madlib_dl/dl_spec.h"

typedef struct DlPgModel
{
	MemoryContext cxt;			/* owns everything below */
	DlAllocator alloc;			/* palloc in cxt */
	DlModelSpec *spec;
	DlModel    *model;			/* NULL until dl_pg_model_create; with
								 * optimizer state for the TRAIN and STATE
								 * uses when has_compile */
	DlCompileParams compile;	/* valid when has_compile */
	DlFitParams fit;			/* defaults when fit_params was NULL */
	bool		has_compile;

	/*
	 * Each output's loss, weight and metric (dl_compile_params_outputs),
	 * given to the engine (DlTrainConfig.outputs) when has_outputs: a
	 * model of several outputs, or loss_weights other than 1.
	 */
	bool		has_outputs;
	DlOutputConfig outputs[DL_MAX_IO];
} DlPgModel;

/*
 * What a built model will do, which decides whether it gets optimizer
 * state and what its memory check (dl_pg_model_create) counts.
 */
typedef enum DlPgModelUse
{
	DL_PG_MODEL_TRAIN,			/* optimizer state; trains and evaluates in
								 * mini-batches of fit_params' batch_size */
	DL_PG_MODEL_STATE,			/* optimizer state when compile_params is given;
								 * runs no batch (initial, averaged or final
								 * states) */
	DL_PG_MODEL_INFER			/* no optimizer state; evaluates or predicts in
								 * batches of up to the given batch size */
} DlPgModelUse;

/*
 * Parse the architecture (len bytes of JSON, need not be NUL-terminated),
 * compile_params (NULL: none) and fit_params (NULL: defaults) into a new
 * memory context under cxt, without building the model (m->model is
 * NULL): what dl_pg_model_check_input, dl_pg_model_estimate and
 * dl_pg_model_create need.  ERRORs on any engine error.
 */
DlPgModel  *dl_pg_model_parse(const char *arch_json, size_t len,
							  const char *compile_params,
							  const char *fit_params, MemoryContext cxt);

/*
 * The memory the model of m needs for use (infer_batch: the largest
 * batch of DL_PG_MODEL_INFER, ignored otherwise): dl_model_memory_estimate
 * with the optimizer and batch size use implies.
 */
void		dl_pg_model_estimate(const DlPgModel *m, DlPgModelUse use, int64 infer_batch,
								 DlMemoryEstimate *out);

/*
 * Build the model of a parsed m for use, after checking its estimate
 * against madlib_dl.max_model_memory (ERROR 54000 before anything is
 * allocated).  Weights are zero until dl_pg_model_set_weights or
 * dl_model_init_weights.
 */
void		dl_pg_model_create(DlPgModel *m, DlPgModelUse use, int64 infer_batch);

/* dl_pg_model_parse then dl_pg_model_create. */
DlPgModel  *dl_pg_model_build(const char *arch_json, size_t len,
							  const char *compile_params, const char *fit_params,
							  DlPgModelUse use, int64 infer_batch, MemoryContext cxt);

/* Free the model and its context.  m may be NULL. */
void		dl_pg_model_free(DlPgModel *m);

/*
 * The model a fit starts from: built for training (DL_PG_MODEL_STATE),
 * its weights initialised from fit_params' seed, or set to init (flat
 * weights) when not NULL, and its optimizer state fresh.  fit,
 * fit_multiple and madlib_dl._initial_state make their first states
 * with it.
 */
DlPgModel  *dl_pg_model_initial(const char *arch_json, const char *compile_params,
								const char *fit_params, bytea *init, MemoryContext cxt);

/*
 * Load flat little-endian float32 weights (MADlib's model_weights).
 * ERROR 22000 when the length is not 4 * P.  weights may be packed but
 * not toasted.
 */
void		dl_pg_model_set_weights(DlPgModel *m, bytea *weights);

/* The weights as flat little-endian float32, palloc'd in CurrentMemoryContext. */
bytea	   *dl_pg_model_get_weights(DlPgModel *m);

/*
 * Check the data against the architecture: x_shape ({n, dims...}) must
 * end in the model's input shape, and y_shape ({n, classes}), when not
 * NULL, must have as many classes as the model has outputs.  ERROR 22000
 * naming both shapes otherwise.  For input 0 and output 0.
 */
void		dl_pg_model_check_input(const DlPgModel *m, ArrayType *x_shape, ArrayType *y_shape_or_null);

/*
 * The same for input k and output k (either -1: not checked); x_what and
 * y_what name the variables in the messages.
 */
void		dl_pg_model_check_io(const DlPgModel *m, int k_in, ArrayType *x_shape, const char *x_what,
								 int k_out, ArrayType *y_shape, const char *y_what);

/* Width of output 0 per sample (K). */
int64		dl_pg_model_output_width(const DlPgModel *m);

/* Floats per sample of input 0 (product of the input shape). */
int64		dl_pg_model_input_size(const DlPgModel *m);

/* The same for input k and output k. */
int64		dl_pg_model_input_size_k(const DlPgModel *m, int k);
int64		dl_pg_model_output_width_k(const DlPgModel *m, int k);

/* Floats of a sample's inputs, all of them together (the one shuffle's row width). */
int64		dl_pg_model_row_width(const DlPgModel *m);

/*
 * Fill cfg for training or evaluation from the compile and fit params:
 * loss, resolved metric, top_k, batch_size, shuffle, class_weight (m's
 * own array: valid while m is), and a between-batch
 * callback that runs CHECK_FOR_INTERRUPTS.  m must have compile params.
 */
void		dl_pg_model_train_config(const DlPgModel *m, DlTrainConfig *cfg);

/*
 * The metric sums an evaluation of m keeps (dl_compile_params_metric_sums_len
 * of its compile params; 0 without): a model of several inputs or outputs
 * reports one per-sample metric per output, so several metrics, or auc,
 * precision or recall, are 0A000 for it; what names the caller
 * ("evaluate", "fit").  dl_pg_model_train_config sets cfg->sum_metrics to
 * the list when this is not 0.
 */
int			dl_pg_model_metric_sums_len(const DlPgModel *m, const char *what);

/*
 * The engine's cancel check for every model the glue builds: true when a
 * cancel, statement_timeout or termination is pending (never longjmps).
 */
bool		dl_pg_cancel_requested(void *arg);

#endif							/* PG_MODEL_H */
