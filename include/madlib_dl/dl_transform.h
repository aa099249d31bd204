/*-------------------------------------------------------------------------
 *
 * dl_transform.h
 *	  Column transforms saved with a model: the parser of the transform
 *	  spec of training_preprocessor_dl, the stored plan (JSON, with the
 *	  statistics learned on the training table), and the application of a
 *	  plan to one raw row, shared by the packing, predict and predict_row.
 *
 * A spec is a comma list of items; each item gives one or more features
 * of ONE input, in order:
 *
 *	 item   := op '(' inner [',' arg]... ')' | inner
 *	 inner  := column | 'log' '(' column ')'
 *	         | 'impute' '(' strategy ',' column_or_log ')'
 *	 op     := standardize | minmax | scale | clip | onehot | ordinal
 *	 column := NAME (folded to lower case, as SQL does) | "quoted name"
 *
 *	 standardize(e)              (v - mean) / std   (std 0: 1, as sklearn)
 *	 minmax(e)                   (v - min) / (max - min)   (range 0: v - min)
 *	 scale(e, c)                 v * c; c a number or number / number
 *	 clip(e, lo, hi)             min(max(v, lo), hi)
 *	 e                           v as it is (numbers, booleans 0/1, arrays)
 *	 log(col)                    ln(v), v must be > 0
 *	 impute(mean|median|<number>, col or log(col))
 *	                             NULL becomes the training mean or median
 *	                             (of ln(v) under log) or the number
 *	 onehot(col [, max_categories => n])
 *	                             one feature per training category (sorted),
 *	                             then one "unknown" feature for a value not
 *	                             seen in training and for NULL
 *	 ordinal(col)                the index of the value among the sorted
 *	                             training categories, -1 unknown or NULL
 *
 * Numeric steps (log, impute, standardize, minmax) take scalar columns;
 * scale, clip, log and the bare column also take numeric arrays, element
 * by element, one feature per element (the array's length is fixed by
 * the training table).  The order within an item is fixed: ln first, then
 * imputation, then the op.  Only the names above are functions: anything
 * else is refused (the spec never becomes SQL text).
 *
 * Limits: a spec of at most DL_TF_MAX_SPEC bytes, DL_TF_MAX_ITEMS items,
 * column names of at most 63 bytes, max_categories at most
 * DL_TF_MAX_CATEGORIES, features at most DL_TF_MAX_WIDTH.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_transform.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_TRANSFORM_H
#define DL_TRANSFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_status.h"
#include "madlib_dl/dl_strbuf.h"

#define DL_TF_MAX_SPEC 65536
#define DL_TF_MAX_ITEMS 1024
#define DL_TF_MAX_NAME 63
#define DL_TF_MAX_CATEGORIES 10000
#define DL_TF_DEFAULT_MAX_CATEGORIES 100
#define DL_TF_MAX_WIDTH 1000000
#define DL_TF_PLAN_VERSION 1

typedef enum DlTfOp
{
	DL_TF_IDENTITY,
	DL_TF_STANDARDIZE,
	DL_TF_MINMAX,
	DL_TF_SCALE,
	DL_TF_CLIP,
	DL_TF_ONEHOT,
	DL_TF_ORDINAL
} DlTfOp;

typedef enum DlTfImpute
{
	DL_TF_IMPUTE_NONE,
	DL_TF_IMPUTE_MEAN,
	DL_TF_IMPUTE_MEDIAN,
	DL_TF_IMPUTE_CONSTANT
} DlTfImpute;

/* The kind of column an item reads, set by the caller from the catalog. */
typedef enum DlTfKind
{
	DL_TF_KIND_UNKNOWN,			/* not yet resolved (a parsed spec) */
	DL_TF_KIND_NUMBER,			/* smallint .. numeric, boolean */
	DL_TF_KIND_TEXT,			/* text, varchar, char (categories only) */
	DL_TF_KIND_ARRAY			/* one-dimensional numeric array */
} DlTfKind;

typedef struct DlTfItem
{
	char		column[DL_TF_MAX_NAME + 1];
	DlTfOp		op;
	bool		log;
	DlTfImpute	impute;
	double		impute_value;	/* learned (mean, median) or given */
	bool		impute_known;	/* impute_value is set */
	double		a;				/* standardize mean, minmax min, scale factor, clip lo */
	double		b;				/* standardize std, minmax max, clip hi */
	int			max_categories; /* onehot */
	int			n_categories;	/* onehot, ordinal: learned */
	char	  **categories;		/* NUL-terminated, in training order */
	int		   *sorted;			/* category indexes by strcmp order (lookup) */
	DlTfKind	kind;
	int			width;			/* features of this item (arrays: elements) */
	bool		fitted;			/* statistics present */
} DlTfItem;

typedef struct DlTransform
{
	int			n_items;
	DlTfItem   *items;			/* n_items */
	const DlAllocator *alloc;	/* borrowed; frees the plan */
} DlTransform;

/*
 * Parse a spec (len bytes, at most DL_TF_MAX_SPEC) into *out: items with
 * their ops and constants, kind unknown, not fitted.  DL_ERR_PARSE names
 * the offset and the text; DL_ERR_LIMIT for the caps.
 */
DlStatus	dl_transform_parse(const char *spec, size_t len, const DlAllocator *alloc,
							   DlTransform **out, DlError *err);

/*
 * Read a stored plan (the JSON that dl_transform_to_json writes, with
 * statistics, fitted or not) into *out.  DL_ERR_CORRUPT for a plan that
 * is not one.
 */
DlStatus	dl_transform_from_json(const char *json, size_t len, const DlAllocator *alloc,
								   DlTransform **out, DlError *err);

/* Write t as JSON (see docs/formats.md: the transform column). */
void		dl_transform_to_json(const DlTransform *t, DlStrBuf *sb);

void		dl_transform_free(DlTransform *t);

/*
 * Check that item i fits a column of kind (42804 in the glue:
 * DL_ERR_UNSUPPORTED with a message naming op and column).
 */
DlStatus	dl_transform_check_kind(const DlTransform *t, int i, DlTfKind kind, const char *type_name,
									DlError *err);

/* Does item i need the learned statistics of stage (0: impute, 1: op)? */
bool		dl_transform_needs_stats(const DlTransform *t, int i, int stage);

/*
 * The value of item i's number v after its steps before stage: stage 0
 * after ln, stage 1 after ln and imputation (stats of stage 0 needed).
 * *out_null: still NULL (skipped by the statistics).  DL_ERR_DATA for
 * ln of v <= 0, or NaN / infinity.
 */
DlStatus	dl_transform_stage_value(const DlTransform *t, int i, int stage, bool isnull, double v,
									 double *out, bool *out_null, DlError *err);

/* Total features of a fitted plan, checked against DL_TF_MAX_WIDTH. */
DlStatus	dl_transform_width(const DlTransform *t, int *width, DlError *err);

/* Offset of item i's first feature in the feature array. */
int			dl_transform_offset(const DlTransform *t, int i);

/* Item i (kind NUMBER) of v into out[0] (DL_ERR_DATA: NULL without impute, ln of <= 0, not finite). */
DlStatus	dl_transform_apply_number(const DlTransform *t, int i, bool isnull, double v, float *out,
									  DlError *err);

/* Item i (kind ARRAY) of n values (no NULLs) into out[0 .. n-1]; n must be its width. */
DlStatus	dl_transform_apply_array(const DlTransform *t, int i, const double *v, size_t n,
									 float *out, DlError *err);

/* Item i (onehot, ordinal) of the category s (len bytes, or NULL) into out[0 .. width-1]. */
DlStatus	dl_transform_apply_category(const DlTransform *t, int i, const char *s, size_t len,
										float *out, DlError *err);

/* The name of an op as the spec writes it. */
const char *dl_transform_op_name(DlTfOp op);

#endif							/* DL_TRANSFORM_H */
