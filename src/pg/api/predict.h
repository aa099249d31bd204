/*-------------------------------------------------------------------------
 *
 * predict.h
 *	  What predict.c shares with 0.1.0's _predict_rows (compat_predict.c):
 *	  a row's id for messages, its feature array and the copy of its
 *	  feature values with their checks.
 *
 * IDENTIFICATION
 *	  src/pg/api/predict.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_PREDICT_H
#define DL_PREDICT_H

#include "postgres.h"

#include "utils/array.h"

#include "madlib_dl/dl_model.h"

/* The id of a fetched row for messages: its text, or "NULL". */
const char *dl_pg_predict_id_label(Datum id, bool isnull);

/*
 * The feature array of column col of the row with id id (NULL: id_null),
 * detoasted.  ERROR 22004 when it is NULL (arr_null).
 */
ArrayType  *dl_pg_predict_feature_array(Datum arr_datum, bool arr_null, const char *col,
										Datum id, bool id_null);

/*
 * Copy the n values of arr (a float8[] or a real[] of n elements, in
 * storage order) into x, divided by nc.  x (n).  ERROR naming column col
 * of the row with id id (NULL: id_null) when a value is NULL, NaN or
 * infinite, or out of float32 range after the division, or the array of
 * another element type (42804).
 */
void		dl_pg_predict_copy_values(float *x, ArrayType *arr, int64 n, double nc, const char *col,
									  Datum id, bool id_null);

/*
 * Copy one row's features (arr_datum, a float8[] or real[] of the
 * model's input shape in) into x (in_size), divided by nc.  ERROR naming
 * column col of the row with id id when the array is NULL, has another
 * shape, or a value is NULL, NaN, infinite or out of float32 range.
 */
void		dl_pg_predict_copy_row(float *x, Datum arr_datum, bool arr_null, const DlShape *in,
								   int64 in_size, double nc, Datum id, bool id_null, const char *col);

/* ERROR 22023: a model argument of predict's function differs between rows. */
void		dl_pg_predict_model_changed(void) pg_attribute_noreturn();

/* ERROR 22023 unless normalizing_const nc is a positive finite number. */
void		dl_pg_predict_check_nc(double nc);

/*
 * The memory check of predict for the architecture arch (JSON text) and
 * batch rows a pass: ERROR naming the estimate, the limit and what helps.
 */
void		dl_pg_predict_check_memory(const char *arch, int64 batch);

/* ERROR naming the row with id id when x (one row) holds a token id an Embedding input cannot look up. */
void		dl_pg_predict_check_ids(const DlModelSpec *spec, const float *x, double nc, Datum id,
									bool id_null);

#endif							/* DL_PREDICT_H */
