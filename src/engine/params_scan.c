/*-------------------------------------------------------------------------
 *
 * params_scan.c
 *	  The scanner under the compile_params / fit_params / early-stopping
 *	  parsers (params.c, lr_schedule.c): balanced-bracket check, splitting
 *	  on top-level commas and '=', unquoting and reading scalar values, the
 *	  "invalid value" message; and the canonical writers' number format.
 *
 * The grammar and conventions (offsets, 1-based positions in messages,
 * no allocation) are described in params.c.
 *
 * IDENTIFICATION
 *	  src/engine/params_scan.c
 *
 *-------------------------------------------------------------------------
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "madlib_dl/dl_caps.h"
#include "params_scan.h"

/* Shrink [*b, *e) past leading and trailing whitespace. */
void
dl_params_trim(const char *s, size_t *b, size_t *e)
{
	while (*b < *e && dl_pylit_is_space(s[*b]))
		(*b)++;
	while (*e > *b && dl_pylit_is_space(s[*e - 1]))
		(*e)--;
}

/*
 * Length of the piece [b, e) of s to show in a message: capped at
 * DL_PARAMS_SHOW_MAX bytes, without splitting a UTF-8 sequence (messages go to a
 * client that checks the encoding).
 */
int
dl_params_show_len(const char *s, size_t b, size_t e)
{
	return (int) dl_text_clip(s + b, e - b, DL_PARAMS_SHOW_MAX);
}

/* Does [b, e) spell exactly word? */
bool
dl_params_piece_eq(const char *s, size_t b, size_t e, const char *word)
{
	size_t		n = strlen(word);

	return e - b == n && memcmp(s + b, word, n) == 0;
}

/* The only token of [b, e) into *tok; false when there are more or none. */
bool
dl_params_single_token(const char *s, size_t b, size_t e, DlPylitToken *tok)
{
	DlPylitLexer lx;

	dl_pylit_init(&lx, s, b, e, DL_PYLIT_LENIENT);
	dl_pylit_next(&lx, tok);
	return tok->kind != DL_PYLIT_END && tok->begin == b && tok->end == e;
}

/*
 * Check that quotes and brackets balance in [b, e); DL_ERR_PARSE names
 * the position of the first problem.
 */
DlStatus
dl_params_check_balanced(DlParamsCtx *c, size_t b, size_t e)
{
	char		stack[DL_PARAMS_MAX_NESTING];
	size_t		where[DL_PARAMS_MAX_NESTING];
	int			depth = 0;
	DlPylitLexer lx;
	DlPylitToken tok;

	dl_pylit_init(&lx, c->s, b, e, DL_PYLIT_LENIENT);
	for (dl_pylit_next(&lx, &tok); tok.kind != DL_PYLIT_END; dl_pylit_next(&lx, &tok))
	{
		char		ch = tok.ch;

		if (tok.kind == DL_PYLIT_ERROR && tok.problem == DL_PYLIT_UNTERMINATED_STRING)
		{
			dl_error_set(c->err, DL_ERR_PARSE, "unterminated quote at position %zu in %s",
						 tok.problem_at + 1, c->what);
			return dl_error_hint(c->err, "Close every quoted string in %s.", c->what);
		}
		if (tok.kind != DL_PYLIT_PUNCT)
			continue;			/* the other malformed tokens are values' business */
		if (ch == '(' || ch == '[' || ch == '{')
		{
			if (depth == DL_PARAMS_MAX_NESTING)
			{
				dl_error_set(c->err, DL_ERR_PARSE,
							 "brackets nested more than %d deep at position %zu in %s",
							 DL_PARAMS_MAX_NESTING, tok.begin + 1, c->what);
				return dl_error_hint(c->err, "Simplify the value in %s.", c->what);
			}
			stack[depth] = ch == '(' ? ')' : (ch == '[' ? ']' : '}');
			where[depth] = tok.begin;
			depth++;
		}
		else if (ch == ')' || ch == ']' || ch == '}')
		{
			if (depth == 0 || stack[depth - 1] != ch)
			{
				dl_error_set(c->err, DL_ERR_PARSE, "unbalanced \"%c\" at position %zu in %s",
							 ch, tok.begin + 1, c->what);
				return dl_error_hint(c->err, "Check that every bracket in %s is opened and "
									 "closed in order.", c->what);
			}
			depth--;
		}
	}
	if (depth > 0)
	{
		char		open = stack[depth - 1] == ')' ? '(' : (stack[depth - 1] == ']' ? '[' : '{');

		dl_error_set(c->err, DL_ERR_PARSE, "unclosed \"%c\" at position %zu in %s",
					 open, where[depth - 1] + 1, c->what);
		return dl_error_hint(c->err, "Add the missing \"%c\" in %s.", stack[depth - 1], c->what);
	}
	return DL_OK;
}

/*
 * Offset of the first target token ("," "=" or ")") in [i, e) outside
 * brackets and quotes, or e.  The range must be balanced
 * (check_balanced) when i starts at depth 0.
 */
size_t
dl_params_scan_to(const char *s, size_t i, size_t e, char target)
{
	int			depth = 0;
	DlPylitLexer lx;
	DlPylitToken tok;

	dl_pylit_init(&lx, s, i, e, DL_PYLIT_LENIENT);
	for (dl_pylit_next(&lx, &tok); tok.kind != DL_PYLIT_END; dl_pylit_next(&lx, &tok))
	{
		if (tok.kind != DL_PYLIT_PUNCT)
			continue;
		if (depth == 0 && tok.ch == target)
			return tok.begin;
		if (tok.ch == '(' || tok.ch == '[' || tok.ch == '{')
			depth++;
		else if (tok.ch == ')' || tok.ch == ']' || tok.ch == '}')
			depth--;
	}
	return e;
}


/*
 * Next comma-separated item of [*pos, e), trimmed, into [*ib, *ie).
 * Returns 1 for an item, 0 at the end (an empty last item, i.e. an empty
 * list or a trailing comma, also ends it), -1 with DL_ERR_PARSE for an
 * empty item in the middle.  Start with *pos = b.
 */
int
dl_params_next_item(DlParamsCtx *c, size_t *pos, size_t e, size_t *ib, size_t *ie)
{
	size_t		comma;

	if (*pos > e)
		return 0;
	comma = dl_params_scan_to(c->s, *pos, e, ',');
	*ib = *pos;
	*ie = comma;
	dl_params_trim(c->s, ib, ie);
	*pos = comma + 1;
	if (*ib == *ie)
	{
		if (comma == e)
			return 0;
		dl_error_set(c->err, DL_ERR_PARSE, "empty item before the comma at position %zu in %s",
					 comma + 1, c->what);
		dl_error_hint(c->err, "Remove the extra comma in %s.", c->what);
		return -1;
	}
	return 1;
}

/*
 * Split an item into a key (an identifier) and a non-empty value, both
 * trimmed.  DL_ERR_PARSE otherwise.
 */
DlStatus
dl_params_split_key_value(DlParamsCtx *c, size_t ib, size_t ie, size_t *kb, size_t *ke,
				size_t *vb, size_t *ve, const char *example)
{
	const char *s = c->s;
	size_t		eq = dl_params_scan_to(s, ib, ie, '=');

	if (eq == ie)
	{
		dl_error_set(c->err, DL_ERR_PARSE, "expected name=value at position %zu in %s, got \"%.*s\"",
					 ib + 1, c->what, dl_params_show_len(s, ib, ie), s + ib);
		return dl_error_hint(c->err, "Write each parameter as name=value, for example %s.", example);
	}
	*kb = ib;
	*ke = eq;
	dl_params_trim(s, kb, ke);
	*vb = eq + 1;
	*ve = ie;
	dl_params_trim(s, vb, ve);
	if (!dl_pylit_is_name(s + *kb, *ke - *kb))
	{
		dl_error_set(c->err, DL_ERR_PARSE, "invalid parameter name \"%.*s\" at position %zu in %s",
					 dl_params_show_len(s, *kb, *ke), s + *kb, *kb + 1, c->what);
		return dl_error_hint(c->err, "Write each parameter as name=value, for example %s.", example);
	}
	if (*vb == *ve)
	{
		dl_error_set(c->err, DL_ERR_PARSE, "missing value for \"%.*s\" at position %zu in %s",
					 dl_params_show_len(s, *kb, *ke), s + *kb, *kb + 1, c->what);
		return dl_error_hint(c->err, "Write each parameter as name=value, for example %s.", example);
	}
	return DL_OK;
}

/*
 * Call fn(c, kb, ke, vb, ve, arg) for each key=value item of [b, e), in
 * order (example is for the messages of a malformed item); stops at the
 * first status other than DL_OK and returns it.
 */
DlStatus
dl_params_each_item(DlParamsCtx *c, size_t b, size_t e, const char *example, DlParamsItemFn fn,
					void *arg)
{
	size_t		pos = b,
				ib,
				ie,
				kb,
				ke,
				vb,
				ve;
	int			more;
	DlStatus	rc;

	while ((more = dl_params_next_item(c, &pos, e, &ib, &ie)) == 1)
	{
		if ((rc = dl_params_split_key_value(c, ib, ie, &kb, &ke, &vb, &ve, example)) != DL_OK ||
			(rc = fn(c, kb, ke, vb, ve, arg)) != DL_OK)
			return rc;
	}
	return more < 0 ? c->err->code : DL_OK;
}

/*
 * Parse s (NULL: empty), named what in messages (and its size cap,
 * DL_PARAMS_MAX_BYTES: DL_ERR_LIMIT over it): balanced brackets, then
 * fn for each key=value item (dl_params_each_item).  err is not NULL.
 */
DlStatus
dl_params_parse_items(const char *s, const char *what, const char *example, DlParamsItemFn fn,
					  void *arg, DlError *err)
{
	DlParamsCtx c = {s != NULL ? s : "", s != NULL ? strlen(s) : 0, what, err};
	DlStatus	rc;

	if (dl_text_check_cap(what, c.len, DL_PARAMS_MAX_BYTES, err) != DL_OK)
		return DL_ERR_LIMIT;
	if ((rc = dl_params_check_balanced(&c, 0, c.len)) != DL_OK)
		return rc;
	return dl_params_each_item(&c, 0, c.len, example, fn, arg);
}

/* DL error code "<kind> \"<key>\" is not supported", with hint. */
DlStatus
dl_params_unsupported_key(DlParamsCtx *c, DlStatus code, const char *kind, size_t kb, size_t ke,
						  const char *hint)
{
	dl_error_set(c->err, code, "%s \"%.*s\" is not supported", kind, dl_params_show_len(c->s, kb, ke),
				 c->s + kb);
	return dl_error_hint(c->err, "%s", hint);
}

/* Is [b, e) exactly one quoted string?  Then strip the quotes and trim. */
bool
dl_params_unquote(const char *s, size_t *b, size_t *e)
{
	DlPylitToken tok;

	if (dl_params_single_token(s, *b, *e, &tok) && tok.kind == DL_PYLIT_STRING)
	{
		(*b)++;
		(*e)--;
		dl_params_trim(s, b, e);
		return true;
	}
	return false;
}

/* Copy [b, e) into buf (DL_PARAMS_NAME_MAX); false when it does not fit. */
bool
dl_params_copy_name(char *buf, const char *s, size_t b, size_t e)
{
	if (e - b >= DL_PARAMS_NAME_MAX)
		return false;
	memcpy(buf, s + b, e - b);
	buf[e - b] = '\0';
	return true;
}

/*
 * A finite decimal number, one INT or FLOAT token: [+-] (digits [. digits]
 * | . digits) [e [+-] digits].  No hex, inf, nan, underscores or trailing
 * text.  An integer beyond int64 is read as a double.
 */
bool
dl_params_parse_double(const char *s, size_t b, size_t e, double *out)
{
	DlPylitToken tok;

	if (!dl_params_single_token(s, b, e, &tok) ||
		!(tok.kind == DL_PYLIT_INT || tok.kind == DL_PYLIT_FLOAT ||
		  (tok.kind == DL_PYLIT_ERROR && tok.problem == DL_PYLIT_INT_RANGE)) ||
		!isfinite(tok.f))
		return false;
	*out = tok.f;
	return true;
}

/* A decimal integer [+-] digits that fits in int64, one INT token. */
bool
dl_params_parse_int64(const char *s, size_t b, size_t e, int64_t *out)
{
	DlPylitToken tok;

	if (!dl_params_single_token(s, b, e, &tok) || tok.kind != DL_PYLIT_INT)
		return false;
	*out = tok.i;
	return true;
}

bool
dl_params_parse_bool(const char *s, size_t b, size_t e, bool *out)
{
	if (dl_params_piece_eq(s, b, e, "True") || dl_params_piece_eq(s, b, e, "true"))
		*out = true;
	else if (dl_params_piece_eq(s, b, e, "False") || dl_params_piece_eq(s, b, e, "false"))
		*out = false;
	else
		return false;
	return true;
}

/* "invalid value "<v>" for <kind> "<key>"", with a hint. */
DlStatus
dl_params_bad_value(DlParamsCtx *c, const char *kind, size_t kb, size_t ke, size_t vb, size_t ve,
		  const char *takes)
{
	dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "invalid value \"%.*s\" for %s \"%.*s\"",
				 dl_params_show_len(c->s, vb, ve), c->s + vb, kind, dl_params_show_len(c->s, kb, ke), c->s + kb);
	return dl_error_hint(c->err, "%.*s takes %s.", dl_params_show_len(c->s, kb, ke), c->s + kb, takes);
}

void
dl_params_sb_double(DlStrBuf *sb, double v)
{
	char		tmp[64];

	snprintf(tmp, sizeof(tmp), "%.15g", v);
	if (strtod(tmp, NULL) != v)
		snprintf(tmp, sizeof(tmp), "%.17g", v);
	dl_strbuf_puts(sb, tmp);
}

/* The shortest of %.6g .. %.9g that reads back as the float v. */
void
dl_params_sb_float(DlStrBuf *sb, float v)
{
	char		tmp[64];

	for (int digits = 6; digits <= 9; digits++)
	{
		snprintf(tmp, sizeof(tmp), "%.*g", digits, (double) v);
		if (strtof(tmp, NULL) == v)
			break;
	}
	dl_strbuf_puts(sb, tmp);
}

DlStatus
dl_params_sb_finish(DlStrBuf *sb, DlError *err)
{
	if (sb->failed || sb->cap == 0)
	{
		dl_error_set(err, DL_ERR_LIMIT, "parameter string needs more than %zu bytes", sb->cap);
		dl_error_hint(err, "Pass a larger buffer.");
		return DL_ERR_LIMIT;
	}
	return DL_OK;
}

