/*-------------------------------------------------------------------------
 *
 * transform.h
 *	  The column transforms saved with a model, in the server: a stored
 *	  plan (the jsonb of a summary's transform column) loaded once, and
 *	  one raw row turned into its feature array.  Used by
 *	  madlib_dl._transform_apply (packing, predict) and by any other
 *	  reader of raw rows (predict_row).
 *
 * IDENTIFICATION
 *	  src/pg/api/transform.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_PG_TRANSFORM_H
#define DL_PG_TRANSFORM_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "madlib_dl/dl_transform.h"

/*
 * The plan stored in jsonb, read and checked by the engine, allocated in
 * cxt (which owns it).  ERROR (22000 / XX001) when it is not a fitted plan.
 * *width: its number of features.
 */
DlTransform *dl_pg_transform_load(Jsonb *plan, MemoryContext cxt, int *width);

/*
 * ERROR (42804) unless a value of type typid can be read by item i of t
 * (the kind the training column had).
 */
void		dl_pg_transform_check_arg(const DlTransform *t, int i, Oid typid);

/*
 * One raw row into out[0 .. width-1]: values[i], nulls[i] of type
 * types[i] are the raw value of item i (t->n_items of them, each checked
 * with dl_pg_transform_check_arg first).  ERROR naming the column for a
 * value the plan cannot take (NULL without imputation, ln of <= 0, NaN,
 * an array of another length).
 */
void		dl_pg_transform_row(const DlTransform *t, const Datum *values, const bool *nulls,
								const Oid *types, float *out);

#endif							/* DL_PG_TRANSFORM_H */
