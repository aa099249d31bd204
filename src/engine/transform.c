/*-------------------------------------------------------------------------
 *
 * transform.c
 *	  Column transforms saved with a model: the spec parser, the stored
 *	  plan as JSON, and the application of a plan to one raw row (see
 *	  include/madlib_dl/dl_transform.h for the language).
 *
 * The parser reads the spec with the Python-literal lexer (pylit.c) and
 * knows a fixed list of function names; nothing of the spec becomes SQL.
 * The plan is read back from JSON with json-c and checked as untrusted:
 * a summary table is data any role could have written.
 *
 * IDENTIFICATION
 *	  src/engine/transform.c
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "madlib_dl/dl_pylit.h"
#include "madlib_dl/dl_transform.h"

#define TF_JSON_MAX_DEPTH 8

static const char *const op_names[] = {
	"identity", "standardize", "minmax", "scale", "clip", "onehot", "ordinal"
};

const char *
dl_transform_op_name(DlTfOp op)
{
	if ((int) op < 0 || (size_t) op >= sizeof(op_names) / sizeof(op_names[0]))
		return "?";
	return op_names[op];
}

static const char *
impute_name(DlTfImpute m)
{
	switch (m)
	{
		case DL_TF_IMPUTE_MEAN:
			return "mean";
		case DL_TF_IMPUTE_MEDIAN:
			return "median";
		case DL_TF_IMPUTE_CONSTANT:
			return "constant";
		default:
			return "none";
	}
}

static const char *
kind_name(DlTfKind k)
{
	switch (k)
	{
		case DL_TF_KIND_NUMBER:
			return "number";
		case DL_TF_KIND_TEXT:
			return "text";
		case DL_TF_KIND_ARRAY:
			return "array";
		default:
			return "unknown";
	}
}

static bool
is_category_op(DlTfOp op)
{
	return op == DL_TF_ONEHOT || op == DL_TF_ORDINAL;
}

/* ---------------------------------------------------------------------
 * Allocation
 * ---------------------------------------------------------------------
 */

static DlTransform *
plan_new(int n_items, const DlAllocator *alloc, DlError *err)
{
	DlTransform *t = dl_alloc(alloc, sizeof(DlTransform), err);

	if (t == NULL)
		return NULL;
	t->alloc = alloc;
	t->n_items = n_items;
	t->items = dl_alloc_array(alloc, (size_t) (n_items > 0 ? n_items : 1), sizeof(DlTfItem), err);
	if (t->items == NULL)
	{
		dl_free(alloc, t);
		return NULL;
	}
	return t;
}

void
dl_transform_free(DlTransform *t)
{
	if (t == NULL)
		return;
	for (int i = 0; i < t->n_items; i++)
	{
		DlTfItem   *it = &t->items[i];

		if (it->categories != NULL)
		{
			for (int c = 0; c < it->n_categories; c++)
				dl_free(t->alloc, it->categories[c]);
			dl_free(t->alloc, it->categories);
		}
		dl_free(t->alloc, it->sorted);
	}
	dl_free(t->alloc, t->items);
	dl_free(t->alloc, t);
}

/* ---------------------------------------------------------------------
 * The spec parser
 * ---------------------------------------------------------------------
 */

typedef struct Parser
{
	const char *s;
	size_t		len;
	DlPylitLexer lx;
	DlPylitToken tok;			/* the current token */
	DlError    *err;
} Parser;

static void
advance(Parser *p)
{
	dl_pylit_next(&p->lx, &p->tok);
}

static DlStatus
syntax_error(Parser *p, const char *expected)
{
	size_t		at = p->tok.begin;

	if (p->tok.kind == DL_PYLIT_END)
		dl_error_set(p->err, DL_ERR_PARSE, "invalid transform: expected %s at the end", expected);
	else
	{
		size_t		n = p->tok.end > at ? p->tok.end - at : 1;

		/* a one-byte token inside a UTF-8 character: quote the whole character */
		while (at + n < p->len && ((unsigned char) p->s[at + n] & 0xC0) == 0x80)
			n++;
		n = dl_text_clip(p->s + at, n, 40);
		dl_error_set(p->err, DL_ERR_PARSE, "invalid transform: expected %s at offset %zu, found \"%.*s\"",
					 expected, at, (int) n, p->s + at);
	}
	return dl_error_hint(p->err,
						 "Write a comma list such as 'standardize(age), onehot(city), scale(pixels, 1.0/255)'.");
}

static bool
is_punct(const Parser *p, char c)
{
	return p->tok.kind == DL_PYLIT_PUNCT && p->tok.ch == c;
}

static DlStatus
expect_punct(Parser *p, char c)
{
	char		what[8];

	if (!is_punct(p, c))
	{
		snprintf(what, sizeof(what), "'%c'", c);
		return syntax_error(p, what);
	}
	advance(p);
	return DL_OK;
}

/* Is the current token the NAME word (case-insensitive)? */
static bool
is_word(const Parser *p, const char *word)
{
	size_t		n = strlen(word);

	return p->tok.kind == DL_PYLIT_NAME && p->tok.end - p->tok.begin == n
		&& strncasecmp(p->s + p->tok.begin, word, n) == 0;
}

/* A column name: NAME folded to lower case, or a "double-quoted" name kept as written. */
static DlStatus
parse_column(Parser *p, char *out)
{
	size_t		b = p->tok.begin,
				e = p->tok.end;

	if (p->tok.kind == DL_PYLIT_NAME)
	{
		if (e - b > DL_TF_MAX_NAME)
			goto too_long;
		for (size_t i = b; i < e; i++)
			out[i - b] = (char) tolower((unsigned char) p->s[i]);
		out[e - b] = '\0';
		advance(p);
		return DL_OK;
	}
	if (p->tok.kind == DL_PYLIT_STRING && p->s[b] == '"')
	{
		size_t		n = 0;

		for (size_t i = b + 1; i + 1 < e; i++)
		{
			char		c = p->s[i];

			if (c == '\\' || c == '\0' || (unsigned char) c < 0x20)
			{
				dl_error_set(p->err, DL_ERR_PARSE,
							 "invalid transform: column name at offset %zu has a backslash or control character", b);
				return dl_error_hint(p->err, "Rename the column, or transform a view that renames it.");
			}
			if (n == DL_TF_MAX_NAME)
				goto too_long;
			out[n++] = c;
		}
		if (n == 0)
		{
			dl_error_set(p->err, DL_ERR_PARSE, "invalid transform: empty column name at offset %zu", b);
			return dl_error_hint(p->err, "Give the name of a column of the source table.");
		}
		out[n] = '\0';
		advance(p);
		return DL_OK;
	}
	return syntax_error(p, "a column name");
too_long:
	dl_error_set(p->err, DL_ERR_LIMIT, "invalid transform: column name at offset %zu is longer than %d bytes",
				 b, DL_TF_MAX_NAME);
	return dl_error_hint(p->err, "PostgreSQL names have at most 63 bytes.");
}

/* A number: [-]n or [-]n / [-]n (e.g. 1.0/255), finite. */
static DlStatus
parse_number(Parser *p, double *out)
{
	double		v,
				d;

	if (p->tok.kind != DL_PYLIT_INT && p->tok.kind != DL_PYLIT_FLOAT)
		return syntax_error(p, "a number");
	v = p->tok.f;
	advance(p);
	if (p->tok.kind == DL_PYLIT_OTHER && p->tok.ch == '/')
	{
		advance(p);
		if (p->tok.kind != DL_PYLIT_INT && p->tok.kind != DL_PYLIT_FLOAT)
			return syntax_error(p, "a number after '/'");
		d = p->tok.f;
		if (d == 0.0)
		{
			dl_error_set(p->err, DL_ERR_PARSE, "invalid transform: division by zero at offset %zu", p->tok.begin);
			return dl_error_hint(p->err, "Give a nonzero divisor, e.g. scale(pixels, 1.0/255).");
		}
		advance(p);
		v = v / d;
	}
	if (!isfinite(v))
	{
		dl_error_set(p->err, DL_ERR_PARSE, "invalid transform: number out of range");
		return dl_error_hint(p->err, "Give a finite number.");
	}
	*out = v == 0.0 ? 0.0 : v;	/* no -0: the stored plan keeps none */
	return DL_OK;
}

/* column | log(column) */
static DlStatus
parse_log_or_column(Parser *p, DlTfItem *it)
{
	DlStatus	st;

	if (is_word(p, "log"))
	{
		DlPylitLexer save_lx = p->lx;
		DlPylitToken save_tok = p->tok;

		advance(p);
		if (is_punct(p, '('))
		{
			advance(p);
			it->log = true;
			if ((st = parse_column(p, it->column)) != DL_OK)
				return st;
			return expect_punct(p, ')');
		}
		/* a column named log */
		p->lx = save_lx;
		p->tok = save_tok;
	}
	{
		size_t		at = p->tok.begin;

		if ((st = parse_column(p, it->column)) != DL_OK)
			return st;
		if (is_punct(p, '('))
		{
			dl_error_set(p->err, DL_ERR_PARSE, "invalid transform: unknown function \"%s\" at offset %zu",
						 it->column, at);
			return dl_error_hint(p->err, "The functions are standardize, minmax, scale, clip, log, impute, "
								 "onehot and ordinal.");
		}
	}
	return DL_OK;
}

/* inner := column | log(column) | impute(strategy, column | log(column)) */
static DlStatus
parse_inner(Parser *p, DlTfItem *it)
{
	DlStatus	st;

	if (is_word(p, "impute"))
	{
		DlPylitLexer save_lx = p->lx;
		DlPylitToken save_tok = p->tok;

		advance(p);
		if (is_punct(p, '('))
		{
			advance(p);
			if (is_word(p, "mean"))
			{
				it->impute = DL_TF_IMPUTE_MEAN;
				advance(p);
			}
			else if (is_word(p, "median"))
			{
				it->impute = DL_TF_IMPUTE_MEDIAN;
				advance(p);
			}
			else if (p->tok.kind == DL_PYLIT_INT || p->tok.kind == DL_PYLIT_FLOAT)
			{
				it->impute = DL_TF_IMPUTE_CONSTANT;
				if ((st = parse_number(p, &it->impute_value)) != DL_OK)
					return st;
				it->impute_known = true;
			}
			else
				return syntax_error(p, "mean, median or a number (the value for NULLs)");
			if ((st = expect_punct(p, ',')) != DL_OK)
				return st;
			if ((st = parse_log_or_column(p, it)) != DL_OK)
				return st;
			return expect_punct(p, ')');
		}
		p->lx = save_lx;
		p->tok = save_tok;
	}
	return parse_log_or_column(p, it);
}

static DlStatus
parse_item(Parser *p, DlTfItem *it)
{
	static const struct
	{
		const char *name;
		DlTfOp		op;
	}			ops[] = {
		{"standardize", DL_TF_STANDARDIZE}, {"minmax", DL_TF_MINMAX}, {"scale", DL_TF_SCALE},
		{"clip", DL_TF_CLIP}, {"onehot", DL_TF_ONEHOT}, {"ordinal", DL_TF_ORDINAL}
	};
	DlStatus	st;

	it->op = DL_TF_IDENTITY;
	it->width = 1;
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
	{
		DlPylitLexer save_lx;
		DlPylitToken save_tok;

		if (!is_word(p, ops[k].name))
			continue;
		save_lx = p->lx;
		save_tok = p->tok;
		advance(p);
		if (!is_punct(p, '('))
		{
			/* a column with the name of an op */
			p->lx = save_lx;
			p->tok = save_tok;
			break;
		}
		advance(p);
		it->op = ops[k].op;
		if (is_category_op(it->op))
		{
			if ((st = parse_column(p, it->column)) != DL_OK)
				return st;
			it->max_categories = DL_TF_DEFAULT_MAX_CATEGORIES;
			if (it->op == DL_TF_ONEHOT && is_punct(p, ','))
			{
				double		n;

				advance(p);
				if (!is_word(p, "max_categories"))
					return syntax_error(p, "max_categories => n");
				advance(p);
				if ((st = expect_punct(p, '=')) != DL_OK)
					return st;
				if (p->tok.kind == DL_PYLIT_OTHER && p->tok.ch == '>')
					advance(p);
				if (p->tok.kind != DL_PYLIT_INT)
					return syntax_error(p, "an integer number of categories");
				n = p->tok.f;
				if (n < 1 || n > DL_TF_MAX_CATEGORIES)
				{
					dl_error_set(p->err, DL_ERR_LIMIT,
								 "invalid transform: max_categories %.0f of column \"%s\" is not between 1 and %d",
								 n, it->column, DL_TF_MAX_CATEGORIES);
					return dl_error_hint(p->err, "Give a number of categories from 1 to 10000.");
				}
				it->max_categories = (int) n;
				advance(p);
			}
			return expect_punct(p, ')');
		}
		if ((st = parse_inner(p, it)) != DL_OK)
			return st;
		if (it->op == DL_TF_SCALE)
		{
			if ((st = expect_punct(p, ',')) != DL_OK || (st = parse_number(p, &it->a)) != DL_OK)
				return st;
		}
		else if (it->op == DL_TF_CLIP)
		{
			if ((st = expect_punct(p, ',')) != DL_OK || (st = parse_number(p, &it->a)) != DL_OK ||
				(st = expect_punct(p, ',')) != DL_OK || (st = parse_number(p, &it->b)) != DL_OK)
				return st;
			if (it->a > it->b)
			{
				dl_error_set(p->err, DL_ERR_PARSE, "invalid transform: clip(%s, %g, %g) has its bounds reversed",
							 it->column, it->a, it->b);
				return dl_error_hint(p->err, "Give the lower bound first, e.g. clip(x, -5, 5).");
			}
		}
		return expect_punct(p, ')');
	}
	return parse_inner(p, it);
}

DlStatus
dl_transform_parse(const char *spec, size_t len, const DlAllocator *alloc, DlTransform **out,
				   DlError *err)
{
	Parser		p;
	int			n = 1;
	DlTransform *t;
	DlStatus	st;

	*out = NULL;
	if (spec == NULL || len == 0)
	{
		dl_error_set(err, DL_ERR_PARSE, "invalid transform: the transform is empty");
		return dl_error_hint(err, "Give a comma list such as 'standardize(age), onehot(city)'.");
	}
	if (len > DL_TF_MAX_SPEC)
	{
		dl_error_set(err, DL_ERR_LIMIT, "transform of %zu bytes is longer than %d bytes", len, DL_TF_MAX_SPEC);
		return dl_error_hint(err, "Build fewer features in one input.");
	}
	if (memchr(spec, '\0', len) != NULL)
		return dl_error_set(err, DL_ERR_PARSE, "invalid transform: NUL byte in the transform");
	/* the lexer reads numbers with strtod: copy to a NUL-terminated buffer */
	{
		char	   *copy = dl_alloc(alloc, len + 1, err);
		int			depth = 0;

		if (copy == NULL)
			return err ? err->code : DL_ERR_NO_MEMORY;
		memcpy(copy, spec, len);
		copy[len] = '\0';
		/* items: commas outside parentheses (and outside quoted names) */
		dl_pylit_init(&p.lx, copy, 0, len, DL_PYLIT_STRICT);
		do
		{
			dl_pylit_next(&p.lx, &p.tok);
			if (p.tok.kind == DL_PYLIT_PUNCT && p.tok.ch == '(')
				depth++;
			else if (p.tok.kind == DL_PYLIT_PUNCT && p.tok.ch == ')')
				depth--;
			else if (p.tok.kind == DL_PYLIT_PUNCT && p.tok.ch == ',' && depth == 0)
				n++;
		} while (p.tok.kind != DL_PYLIT_END);
		if (n > DL_TF_MAX_ITEMS)
		{
			dl_free(alloc, copy);
			dl_error_set(err, DL_ERR_LIMIT, "transform has %d items, more than %d", n, DL_TF_MAX_ITEMS);
			return dl_error_hint(err, "Build fewer features in one input, or use array columns.");
		}
		t = plan_new(n, alloc, err);
		if (t == NULL)
		{
			dl_free(alloc, copy);
			return err ? err->code : DL_ERR_NO_MEMORY;
		}
		p.s = copy;
		p.len = len;
		p.err = err;
		dl_pylit_init(&p.lx, copy, 0, len, DL_PYLIT_STRICT);
		advance(&p);
		st = DL_OK;
		for (int i = 0; i < n && st == DL_OK; i++)
		{
			if (p.tok.kind == DL_PYLIT_ERROR)
			{
				dl_error_set(err, DL_ERR_PARSE, "invalid transform: %s at offset %zu",
							 dl_pylit_problem_text(p.tok.problem), p.tok.problem_at);
				st = dl_error_hint(err, "Numbers are written as 1.5 or 1.0/255, names as age or \"Age\".");
				break;
			}
			st = parse_item(&p, &t->items[i]);
			if (st == DL_OK && i + 1 < n)
				st = expect_punct(&p, ',');
		}
		if (st == DL_OK && p.tok.kind != DL_PYLIT_END)
			st = syntax_error(&p, "',' or the end");
		dl_free(alloc, copy);
	}
	if (st != DL_OK)
	{
		dl_transform_free(t);
		return st;
	}
	*out = t;
	return DL_OK;
}

/* ---------------------------------------------------------------------
 * Kinds and statistics
 * ---------------------------------------------------------------------
 */

DlStatus
dl_transform_check_kind(const DlTransform *t, int i, DlTfKind kind, const char *type_name,
						DlError *err)
{
	const DlTfItem *it;
	const char *what = NULL;

	if (t == NULL || i < 0 || i >= t->n_items)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "transform item %d does not exist", i + 1);
	it = &t->items[i];
	if (kind == DL_TF_KIND_TEXT && !is_category_op(it->op))
		what = "takes numbers, booleans or numeric arrays, not text";
	else if (kind == DL_TF_KIND_ARRAY && (is_category_op(it->op) || it->op == DL_TF_STANDARDIZE ||
										  it->op == DL_TF_MINMAX || it->impute != DL_TF_IMPUTE_NONE))
		what = "takes scalar columns, not arrays (arrays take scale, clip, log or the bare column)";
	else if (kind == DL_TF_KIND_UNKNOWN)
		what = "does not take a column of this type";
	if (what != NULL)
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "transform %s%s of column \"%s\" of type %s: %s",
					 dl_transform_op_name(it->op),
					 it->impute != DL_TF_IMPUTE_NONE ? " with impute" : (it->log ? " with log" : ""),
					 it->column, type_name ? type_name : kind_name(kind), what);
		return dl_error_hint(err, "Use onehot or ordinal for text columns; numeric ops for numbers, "
							 "booleans and numeric arrays.");
	}
	return DL_OK;
}

bool
dl_transform_needs_stats(const DlTransform *t, int i, int stage)
{
	const DlTfItem *it;

	if (t == NULL || i < 0 || i >= t->n_items)
		return false;
	it = &t->items[i];
	if (stage == 0)
		return it->impute == DL_TF_IMPUTE_MEAN || it->impute == DL_TF_IMPUTE_MEDIAN;
	return it->op == DL_TF_STANDARDIZE || it->op == DL_TF_MINMAX;
}

static DlStatus
value_error(const DlTfItem *it, double v, DlError *err)
{
	if (it->log && !(v > 0))
	{
		dl_error_set(err, DL_ERR_DATA, "transform log(%s) of value %g: the logarithm needs a positive value",
					 it->column, v);
		return dl_error_hint(err, "Filter or fix the rows with values <= 0, or transform without log.");
	}
	dl_error_set(err, DL_ERR_DATA, "column \"%s\" holds the value %g, not a finite number", it->column, v);
	return dl_error_hint(err, "Filter or fix the rows with NaN or infinite values.");
}

DlStatus
dl_transform_stage_value(const DlTransform *t, int i, int stage, bool isnull, double v,
						 double *out, bool *out_null, DlError *err)
{
	const DlTfItem *it;

	if (t == NULL || i < 0 || i >= t->n_items || stage < 0 || stage > 1)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "transform item %d stage %d does not exist", i + 1, stage);
	it = &t->items[i];
	*out = 0;
	*out_null = isnull;
	if (isnull)
	{
		if (stage == 1 && it->impute != DL_TF_IMPUTE_NONE)
		{
			if (!it->impute_known)
				return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
									"transform of column \"%s\" has no imputation value yet", it->column);
			*out = it->impute_value;
			*out_null = false;
		}
		return DL_OK;
	}
	if (!isfinite(v))
		return value_error(it, v, err);
	if (it->log)
	{
		if (!(v > 0))
			return value_error(it, v, err);
		v = log(v);
	}
	*out = v;
	return DL_OK;
}

DlStatus
dl_transform_width(const DlTransform *t, int *width, DlError *err)
{
	int64_t		w = 0;

	for (int i = 0; i < t->n_items; i++)
		w += t->items[i].width;
	if (w < 1 || w > DL_TF_MAX_WIDTH)
	{
		dl_error_set(err, DL_ERR_LIMIT, "transform builds %lld features, not between 1 and %d",
					 (long long) w, DL_TF_MAX_WIDTH);
		return dl_error_hint(err, "Use fewer categories or shorter arrays.");
	}
	*width = (int) w;
	return DL_OK;
}

int
dl_transform_offset(const DlTransform *t, int i)
{
	int			off = 0;

	for (int k = 0; k < i && k < t->n_items; k++)
		off += t->items[k].width;
	return off;
}

/* ---------------------------------------------------------------------
 * Application
 * ---------------------------------------------------------------------
 */

/* The op of item it on v (after ln and imputation). */
static double
apply_op(const DlTfItem *it, double v)
{
	switch (it->op)
	{
		case DL_TF_STANDARDIZE:
			return (v - it->a) / (it->b > 0 ? it->b : 1.0);
		case DL_TF_MINMAX:
			return it->b > it->a ? (v - it->a) / (it->b - it->a) : v - it->a;
		case DL_TF_SCALE:
			return v * it->a;
		case DL_TF_CLIP:
			return v < it->a ? it->a : (v > it->b ? it->b : v);
		default:
			return v;
	}
}

static DlStatus
check_item(const DlTransform *t, int i, DlTfKind kind, DlError *err)
{
	const DlTfItem *it;

	if (t == NULL || i < 0 || i >= t->n_items)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "transform item %d does not exist", i + 1);
	it = &t->items[i];
	if (it->kind != kind)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							"transform item %d of column \"%s\" reads a %s column, not a %s",
							i + 1, it->column, kind_name(it->kind), kind_name(kind));
	if ((dl_transform_needs_stats(t, i, 0) || dl_transform_needs_stats(t, i, 1) ||
		 is_category_op(it->op)) && !it->fitted)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							"transform item %d of column \"%s\" has no statistics", i + 1, it->column);
	return DL_OK;
}

DlStatus
dl_transform_apply_number(const DlTransform *t, int i, bool isnull, double v, float *out,
						  DlError *err)
{
	const DlTfItem *it;
	double		x;
	bool		xnull;
	DlStatus	st;

	if ((st = check_item(t, i, DL_TF_KIND_NUMBER, err)) != DL_OK)
		return st;
	it = &t->items[i];
	if ((st = dl_transform_stage_value(t, i, 1, isnull, v, &x, &xnull, err)) != DL_OK)
		return st;
	if (xnull)
	{
		dl_error_set(err, DL_ERR_DATA, "column \"%s\" is NULL and its transform does not impute", it->column);
		return dl_error_hint(err, "Write impute(median, %s) (or mean, or a number) in the transform, "
							 "or filter the rows.", it->column);
	}
	x = apply_op(it, x);
	if (!isfinite(x) || fabs(x) > 3.4e38)
	{
		dl_error_set(err, DL_ERR_DATA, "transform of column \"%s\" gives %g, outside the float32 range",
					 it->column, x);
		return dl_error_hint(err, "Scale the column down, e.g. with log or standardize.");
	}
	out[0] = (float) x;
	return DL_OK;
}

DlStatus
dl_transform_apply_array(const DlTransform *t, int i, const double *v, size_t n, float *out,
						 DlError *err)
{
	const DlTfItem *it;
	DlStatus	st;

	if ((st = check_item(t, i, DL_TF_KIND_ARRAY, err)) != DL_OK)
		return st;
	it = &t->items[i];
	if (n != (size_t) it->width)
	{
		dl_error_set(err, DL_ERR_SHAPE, "array column \"%s\" has %zu values, the training rows %d",
					 it->column, n, it->width);
		return dl_error_hint(err, "Every row must have an array of the training length.");
	}
	for (size_t k = 0; k < n; k++)
	{
		double		x = v[k];

		if (!isfinite(x))
			return value_error(it, x, err);
		if (it->log)
		{
			if (!(x > 0))
				return value_error(it, x, err);
			x = log(x);
		}
		x = apply_op(it, x);
		if (!isfinite(x) || fabs(x) > 3.4e38)
		{
			dl_error_set(err, DL_ERR_DATA, "transform of column \"%s\" gives %g, outside the float32 range",
						 it->column, x);
			return dl_error_hint(err, "Scale the column down.");
		}
		out[k] = (float) x;
	}
	return DL_OK;
}

/* The index of category s among it's categories, or -1. */
static int
find_category(const DlTfItem *it, const char *s, size_t len)
{
	int			lo = 0,
				hi = it->n_categories - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;
		const char *c = it->categories[it->sorted[mid]];
		size_t		clen = strlen(c);
		int			cmp = memcmp(c, s, clen < len ? clen : len);

		if (cmp == 0)
			cmp = clen < len ? -1 : (clen > len ? 1 : 0);
		if (cmp == 0)
			return it->sorted[mid];
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

DlStatus
dl_transform_apply_category(const DlTransform *t, int i, const char *s, size_t len, float *out,
							DlError *err)
{
	const DlTfItem *it;
	int			idx;

	if (t == NULL || i < 0 || i >= t->n_items)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "transform item %d does not exist", i + 1);
	it = &t->items[i];
	if (!is_category_op(it->op) || !it->fitted)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							"transform item %d of column \"%s\" is not a fitted onehot or ordinal", i + 1, it->column);
	idx = s == NULL ? -1 : find_category(it, s, len);
	if (it->op == DL_TF_ORDINAL)
	{
		out[0] = (float) idx;
		return DL_OK;
	}
	for (int k = 0; k < it->width; k++)
		out[k] = 0.0f;
	out[idx < 0 ? it->n_categories : idx] = 1.0f;
	return DL_OK;
}

/* ---------------------------------------------------------------------
 * The stored plan (JSON)
 * ---------------------------------------------------------------------
 */

static void
put_json_string(DlStrBuf *sb, const char *s)
{
	dl_strbuf_putc(sb, '"');
	for (const unsigned char *c = (const unsigned char *) s; *c; c++)
	{
		if (*c == '"' || *c == '\\')
		{
			dl_strbuf_putc(sb, '\\');
			dl_strbuf_putc(sb, (char) *c);
		}
		else if (*c < 0x20)
			dl_strbuf_printf(sb, "\\u%04x", *c);
		else
			dl_strbuf_putc(sb, (char) *c);
	}
	dl_strbuf_putc(sb, '"');
}

static void
put_double(DlStrBuf *sb, const char *key, double v)
{
	if (v == 0.0)
		v = 0.0;				/* -0 reads back as 0 */
	dl_strbuf_printf(sb, ", \"%s\": %.17g", key, v);
}

void
dl_transform_to_json(const DlTransform *t, DlStrBuf *sb)
{
	dl_strbuf_printf(sb, "{\"version\": %d, \"items\": [", DL_TF_PLAN_VERSION);
	for (int i = 0; i < t->n_items; i++)
	{
		const DlTfItem *it = &t->items[i];

		dl_strbuf_puts(sb, i ? ", {\"column\": " : "{\"column\": ");
		put_json_string(sb, it->column);
		dl_strbuf_printf(sb, ", \"op\": \"%s\", \"log\": %s, \"impute\": \"%s\", \"kind\": \"%s\", "
						 "\"width\": %d, \"fitted\": %s",
						 dl_transform_op_name(it->op), it->log ? "true" : "false", impute_name(it->impute),
						 kind_name(it->kind), it->width, it->fitted ? "true" : "false");
		if (it->impute != DL_TF_IMPUTE_NONE && it->impute_known)
			put_double(sb, "impute_value", it->impute_value);
		switch (it->op)
		{
			case DL_TF_STANDARDIZE:
				if (it->fitted)
				{
					put_double(sb, "mean", it->a);
					put_double(sb, "std", it->b);
				}
				break;
			case DL_TF_MINMAX:
				if (it->fitted)
				{
					put_double(sb, "min", it->a);
					put_double(sb, "max", it->b);
				}
				break;
			case DL_TF_SCALE:
				put_double(sb, "factor", it->a);
				break;
			case DL_TF_CLIP:
				put_double(sb, "lo", it->a);
				put_double(sb, "hi", it->b);
				break;
			case DL_TF_ONEHOT:
			case DL_TF_ORDINAL:
				dl_strbuf_printf(sb, ", \"max_categories\": %d", it->max_categories);
				if (it->fitted)
				{
					dl_strbuf_puts(sb, ", \"categories\": [");
					for (int c = 0; c < it->n_categories; c++)
					{
						if (c)
							dl_strbuf_puts(sb, ", ");
						put_json_string(sb, it->categories[c]);
					}
					dl_strbuf_putc(sb, ']');
				}
				break;
			default:
				break;
		}
		dl_strbuf_putc(sb, '}');
	}
	dl_strbuf_puts(sb, "]}");
}

static DlStatus
corrupt(DlError *err, const char *what, int i)
{
	if (i < 0)
		dl_error_set(err, DL_ERR_CORRUPT, "stored transform is not valid: %s", what);
	else
		dl_error_set(err, DL_ERR_CORRUPT, "stored transform is not valid: %s (item %d)", what, i + 1);
	return dl_error_hint(err, "Give a model or packed table made by madlib_dl, with its summary unchanged.");
}

static bool
get_double(json_object *o, const char *key, double *out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
		(!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int)))
		return false;
	*out = json_object_get_double(v);
	return isfinite(*out);
}

static bool
get_string(json_object *o, const char *key, const char **out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return false;
	*out = json_object_get_string(v);
	return true;
}

static bool
get_bool(json_object *o, const char *key, bool *out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_boolean))
		return false;
	*out = json_object_get_boolean(v);
	return true;
}

static const DlTfItem *sort_item;

static int
cmp_category(const void *a, const void *b)
{
	return strcmp(sort_item->categories[*(const int *) a], sort_item->categories[*(const int *) b]);
}

static DlStatus
read_categories(DlTransform *t, int i, json_object *arr, DlError *err)
{
	DlTfItem   *it = &t->items[i];
	size_t		n;

	if (!json_object_is_type(arr, json_type_array))
		return corrupt(err, "categories is not an array", i);
	n = json_object_array_length(arr);
	if (n > (size_t) it->max_categories)
		return corrupt(err, "more categories than max_categories", i);
	it->categories = dl_alloc_array(t->alloc, n ? n : 1, sizeof(char *), err);
	it->sorted = dl_alloc_array(t->alloc, n ? n : 1, sizeof(int), err);
	if (it->categories == NULL || it->sorted == NULL)
		return err ? err->code : DL_ERR_NO_MEMORY;
	for (size_t c = 0; c < n; c++)
	{
		json_object *v = json_object_array_get_idx(arr, c);
		const char *s;
		size_t		len;

		if (!json_object_is_type(v, json_type_string))
			return corrupt(err, "a category is not a string", i);
		s = json_object_get_string(v);
		len = (size_t) json_object_get_string_len(v);
		if (memchr(s, '\0', len) != NULL)
			return corrupt(err, "a category holds a NUL", i);
		it->categories[c] = dl_alloc(t->alloc, len + 1, err);
		if (it->categories[c] == NULL)
			return err ? err->code : DL_ERR_NO_MEMORY;
		memcpy(it->categories[c], s, len);
		it->n_categories = (int) c + 1;
		it->sorted[c] = (int) c;
	}
	sort_item = it;
	qsort(it->sorted, n, sizeof(int), cmp_category);
	sort_item = NULL;
	for (size_t c = 1; c < n; c++)
		if (strcmp(it->categories[it->sorted[c - 1]], it->categories[it->sorted[c]]) == 0)
			return corrupt(err, "a category is listed twice", i);
	return DL_OK;
}

static DlStatus
read_item(DlTransform *t, int i, json_object *o, DlError *err)
{
	DlTfItem   *it = &t->items[i];
	const char *s;
	double		d;
	int			k;
	json_object *v;

	if (!json_object_is_type(o, json_type_object))
		return corrupt(err, "an item is not an object", i);
	if (!get_string(o, "column", &s) || strlen(s) == 0 || strlen(s) > DL_TF_MAX_NAME)
		return corrupt(err, "bad column", i);
	strcpy(it->column, s);
	if (!get_string(o, "op", &s))
		return corrupt(err, "no op", i);
	for (k = 0; k < (int) (sizeof(op_names) / sizeof(op_names[0])); k++)
		if (strcmp(s, op_names[k]) == 0)
			break;
	if (k == (int) (sizeof(op_names) / sizeof(op_names[0])))
		return corrupt(err, "unknown op", i);
	it->op = (DlTfOp) k;
	if (!get_bool(o, "log", &it->log) || !get_bool(o, "fitted", &it->fitted))
		return corrupt(err, "no log or fitted", i);
	if (!get_string(o, "impute", &s))
		return corrupt(err, "no impute", i);
	if (strcmp(s, "none") == 0)
		it->impute = DL_TF_IMPUTE_NONE;
	else if (strcmp(s, "mean") == 0)
		it->impute = DL_TF_IMPUTE_MEAN;
	else if (strcmp(s, "median") == 0)
		it->impute = DL_TF_IMPUTE_MEDIAN;
	else if (strcmp(s, "constant") == 0)
		it->impute = DL_TF_IMPUTE_CONSTANT;
	else
		return corrupt(err, "unknown impute", i);
	if (!get_string(o, "kind", &s))
		return corrupt(err, "no kind", i);
	if (strcmp(s, "number") == 0)
		it->kind = DL_TF_KIND_NUMBER;
	else if (strcmp(s, "text") == 0)
		it->kind = DL_TF_KIND_TEXT;
	else if (strcmp(s, "array") == 0)
		it->kind = DL_TF_KIND_ARRAY;
	else if (strcmp(s, "unknown") == 0)
		it->kind = DL_TF_KIND_UNKNOWN;
	else
		return corrupt(err, "unknown kind", i);
	if (!get_double(o, "width", &d) || d < 1 || d > DL_TF_MAX_WIDTH || d != floor(d))
		return corrupt(err, "bad width", i);
	it->width = (int) d;
	if (it->impute != DL_TF_IMPUTE_NONE)
	{
		if (json_object_object_get_ex(o, "impute_value", &v))
		{
			if (!get_double(o, "impute_value", &it->impute_value))
				return corrupt(err, "bad impute_value", i);
			it->impute_known = true;
		}
		else if (it->impute == DL_TF_IMPUTE_CONSTANT || it->fitted)
			return corrupt(err, "no impute_value", i);
	}
	switch (it->op)
	{
		case DL_TF_STANDARDIZE:
			if (it->fitted && (!get_double(o, "mean", &it->a) || !get_double(o, "std", &it->b) || it->b < 0))
				return corrupt(err, "bad mean or std", i);
			break;
		case DL_TF_MINMAX:
			if (it->fitted && (!get_double(o, "min", &it->a) || !get_double(o, "max", &it->b) || it->b < it->a))
				return corrupt(err, "bad min or max", i);
			break;
		case DL_TF_SCALE:
			if (!get_double(o, "factor", &it->a))
				return corrupt(err, "bad factor", i);
			break;
		case DL_TF_CLIP:
			if (!get_double(o, "lo", &it->a) || !get_double(o, "hi", &it->b) || it->b < it->a)
				return corrupt(err, "bad lo or hi", i);
			break;
		case DL_TF_ONEHOT:
		case DL_TF_ORDINAL:
			if (!get_double(o, "max_categories", &d) || d < 1 || d > DL_TF_MAX_CATEGORIES || d != floor(d))
				return corrupt(err, "bad max_categories", i);
			it->max_categories = (int) d;
			if (it->fitted)
			{
				DlStatus	st;

				if (!json_object_object_get_ex(o, "categories", &v))
					return corrupt(err, "no categories", i);
				if ((st = read_categories(t, i, v, err)) != DL_OK)
					return st;
				if (it->width != (it->op == DL_TF_ONEHOT ? it->n_categories + 1 : 1))
					return corrupt(err, "width does not match the categories", i);
			}
			break;
		default:
			break;
	}
	if (it->kind == DL_TF_KIND_NUMBER && !is_category_op(it->op) && it->width != 1)
		return corrupt(err, "a scalar item of width other than 1", i);
	if (it->kind == DL_TF_KIND_TEXT && !is_category_op(it->op))
		return corrupt(err, "a text column outside onehot and ordinal", i);
	return DL_OK;
}

DlStatus
dl_transform_from_json(const char *json, size_t len, const DlAllocator *alloc, DlTransform **out,
					   DlError *err)
{
	json_tokener *tok;
	json_object *root,
			   *items,
			   *v;
	DlTransform *t;
	size_t		n;
	double		ver;
	DlStatus	st = DL_OK;

	*out = NULL;
	if (len > (size_t) INT_MAX)
		return dl_error_set(err, DL_ERR_LIMIT, "stored transform of %zu bytes is too large", len);
	tok = json_tokener_new_ex(TF_JSON_MAX_DEPTH);
	if (tok == NULL)
		return dl_error_set(err, DL_ERR_NO_MEMORY, "out of memory creating the json parser");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, json, (int) len);
	if (json_tokener_get_error(tok) != json_tokener_success || root == NULL)
	{
		json_tokener_free(tok);
		json_object_put(root);
		return corrupt(err, "not json", -1);
	}
	json_tokener_free(tok);
	if (json_object_is_type(root, json_type_object) && get_double(root, "version", &ver) &&
		ver > DL_TF_PLAN_VERSION && ver < 1e9)
	{
		json_object_put(root);
		dl_error_set(err, DL_ERR_UNSUPPORTED, "stored transform has layout version %.0f, newer than this "
					 "madlib_dl's %d", ver, DL_TF_PLAN_VERSION);
		return dl_error_hint(err, "Upgrade madlib_dl to read it, or pack and train again with this version "
							 "(docs/formats.md).");
	}
	if (!json_object_is_type(root, json_type_object) || !get_double(root, "version", &ver) ||
		ver != DL_TF_PLAN_VERSION || !json_object_object_get_ex(root, "items", &items) ||
		!json_object_is_type(items, json_type_array))
	{
		json_object_put(root);
		return corrupt(err, "not a transform plan of version 1", -1);
	}
	n = json_object_array_length(items);
	if (n < 1 || n > DL_TF_MAX_ITEMS)
	{
		json_object_put(root);
		return corrupt(err, "no items or too many", -1);
	}
	t = plan_new((int) n, alloc, err);
	if (t == NULL)
	{
		json_object_put(root);
		return err ? err->code : DL_ERR_NO_MEMORY;
	}
	for (size_t i = 0; i < n && st == DL_OK; i++)
	{
		v = json_object_array_get_idx(items, i);
		st = read_item(t, (int) i, v, err);
	}
	json_object_put(root);
	if (st != DL_OK)
	{
		dl_transform_free(t);
		return st;
	}
	*out = t;
	return DL_OK;
}
