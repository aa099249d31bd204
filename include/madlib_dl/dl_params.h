/*-------------------------------------------------------------------------
 *
 * dl_params.h
 *	  Parse MADlib's compile_params and fit_params strings.
 *
 * compile_params: "loss='categorical_crossentropy', optimizer='Adam(lr=0.001)',
 *                  metrics=['accuracy']"
 * fit_params:     "batch_size=128, epochs=2, shuffle=True"
 *
 * The string is a list of key=value pairs split on top-level commas, with
 * brackets and quotes matched.  The last duplicate key wins.  Booleans are
 * True/False (False means false, unlike MADlib).  A bad string gives
 * DL_ERR_PARSE or DL_ERR_INVALID_ARGUMENT with a message naming the
 * offending piece and a hint listing what is accepted.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_params.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_PARAMS_H
#define DL_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "madlib_dl/dl_loss.h"
#include "madlib_dl/dl_optim.h"
#include "madlib_dl/dl_status.h"

typedef struct DlCompileParams
{
	DlLossKind	loss;
	DlMetricKind metric;		/* DL_METRIC_NONE when metrics absent or [] */
	int			top_k;			/* for top_k_categorical_accuracy, default 5 */
	DlOptimConfig optim;
} DlCompileParams;

/* Keras fit() defaults: batch_size 32, epochs 1, shuffle true. */
#define DL_DEFAULT_BATCH_SIZE 32
#define DL_DEFAULT_SEED 42

typedef struct DlFitParams
{
	int64_t		batch_size;		/* >= 1 */
	int			epochs;			/* >= 1 */
	bool		shuffle;
	bool		has_seed;		/* seed= was given */
	uint64_t	seed;			/* DL_DEFAULT_SEED when not given */
	int			verbose;		/* accepted and ignored */
} DlFitParams;

/*
 * Parse compile_params.  optimizer and loss are required; metrics is
 * optional and may hold at most one entry.  Accepted and ignored for
 * MADlib compatibility: loss_weights, weighted_metrics,
 * sample_weight_mode=None.
 */
DlStatus	dl_compile_params_parse(const char *s, DlCompileParams *out, DlError *err);

/*
 * Parse fit_params.  Accepted: batch_size, epochs, shuffle, seed, verbose
 * (ignored), initial_epoch=0, steps_per_epoch=None.  Rejected with a clear
 * error: validation_split, validation_data, sample_weight, callbacks, ...
 * NULL or empty string gives the defaults.
 */
DlStatus	dl_fit_params_parse(const char *s, DlFitParams *out, DlError *err);

/*
 * Write a canonical string that parses back to the same values, for
 * summary tables and de-duplication:
 *	 loss='mean_squared_error', optimizer='SGD(lr=0.01, momentum=0.9, nesterov=True, ...)',
 *	 metrics=['mae']
 * The optimizer lists every argument its kind accepts; numbers use the
 * shortest of %.15g/%.17g that reads back exactly.  fit params give
 * "batch_size=32, epochs=1, shuffle=True[, seed=N]" (seed only when given).
 * DL_ERR_LIMIT when buf (len bytes) is too small; buf is always
 * NUL-terminated when len > 0.
 */
DlStatus	dl_compile_params_format(const DlCompileParams *p, char *buf, size_t len, DlError *err);
DlStatus	dl_fit_params_format(const DlFitParams *p, char *buf, size_t len, DlError *err);

#endif							/* DL_PARAMS_H */
