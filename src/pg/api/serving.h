/*-------------------------------------------------------------------------
 *
 * serving.h
 *	  What serving.c (predict_row, predict_row_prob and the model cache)
 *	  gives serving_batch.c, which runs their calls batch_rows rows at a
 *	  time: the cached model of a call site, its features read into a
 *	  row of a batch, one forward pass over a batch, and a row's value.
 *
 * IDENTIFICATION
 *	  src/pg/api/serving.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_SERVING_H
#define DL_SERVING_H

#include "postgres.h"

#include "fmgr.h"
#include "utils/array.h"

typedef struct ServeEntry ServeEntry;

/*
 * The model a call names (model_table text, mst_key or model_id int4),
 * through the call site's state in flinfo->fn_extra (kept in
 * flinfo->fn_mcxt).  ERROR when model is NULL or names no model.  The
 * entry stays valid until the next lookup of any call site (which may
 * evict it from the cache).
 */
ServeEntry *dl_serve_entry_for(FmgrInfo *flinfo, Datum model, bool model_null, Datum key,
							   bool key_null);

/*
 * The model of a call of _predict_probs (predict's row mode): args are
 * its model_arch, model_weights, normalizing_const and feature_col (ERROR
 * when one is NULL), the same in every row (ERROR when not); built once
 * per call site (flinfo->fn_extra), not cached across queries.  *col:
 * feature_col.
 */
ServeEntry *dl_serve_entry_values(FmgrInfo *flinfo, const Datum *args, const bool *nulls,
								  const char **col);

/*
 * One row of _predict_probs into x (input size): predict's checks and
 * messages (the row's id, the column col).
 */
void		dl_serve_features_row(const ServeEntry *e, float *x, Datum arr, bool arr_null, Datum id,
								  bool id_null, const char *col);

int64		dl_serve_input_size(const ServeEntry *e);
int64		dl_serve_output_width(const ServeEntry *e);

/*
 * Copy arr (the model's input shape, numbers, no NULL; token ids for an
 * Embedding input) into x (input size), normalized; ERROR otherwise.
 * _try: false instead of the ERROR, which dl_serve_features then gives.
 */
void		dl_serve_features(const ServeEntry *e, ArrayType *arr, float *x);
bool		dl_serve_features_try(const ServeEntry *e, ArrayType *arr, float *x);

/* The most rows up to want one forward pass may take within madlib_dl.max_model_memory. */
int64		dl_serve_batch_rows(ServeEntry *e, int64 want);

/* out (n, output width) for x (n, input size); n at most dl_serve_batch_rows(e, n). */
void		dl_serve_run(ServeEntry *e, float *out, const float *x, int64 n);

/* predict_row's value of a row's outputs out (*isnull: NULL), predict_row_prob's. */
Datum		dl_serve_class_datum(const ServeEntry *e, const float *out, bool *isnull);
Datum		dl_serve_prob_datum(const ServeEntry *e, const float *out);

#endif							/* DL_SERVING_H */
