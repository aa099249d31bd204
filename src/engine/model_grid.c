/*-------------------------------------------------------------------------
 *
 * model_grid.c
 *	  The reader of model selection grids (model_grid.h): an arena of
 *	  blocks, MADlib's grid syntax parsed into Python values, and Python's
 *	  repr and str of those values (for row strings and messages).
 *
 * GRIDS are Python dict literals, read by a small strict parser over the
 * engine's lexer (pylit.c, strict mode): dicts, lists, tuples, '...' /
 * "..." strings with backslash escapes (a u prefix allowed), decimal
 * ints, floats (1e-3 included), True, False and None.  Nothing else
 * (names, calls, sets, arithmetic) is accepted; an error names the
 * position (a byte offset, 1-based) and the text found there.
 *
 * What the values mean (parameter names, choices, distributions) is
 * model_select.c's business.
 *
 * IDENTIFICATION
 *	  src/engine/model_grid.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "madlib_dl/dl_caps.h"
#include "madlib_dl/dl_pylit.h"
#include "model_grid.h"

/* Deepest bracket nesting accepted in a grid. */
#define MS_MAX_DEPTH 32
/* Longest piece of text quoted in a syntax error. */
#define MS_NEAR_LEN 24
/* A value shown in a message: its repr, cut to 76 bytes past 80. */
#define MS_SHOW_MAX 80
#define MS_SHOW_CUT 76
/* Longest piece of a name or string quoted in a message. */
#define MS_NAME_SHOW 64
#define MS_TEXT_SHOW 200
/* Most items in one list or dict (as PostgreSQL's 1 GB allocation limit). */
#define MS_MAX_ITEMS ((int) (0x3fffffff / sizeof(void *)))
/* Arena blocks, and the size above which a request gets its own block. */
#define MS_BLOCK_SIZE ((size_t) 64 * 1024)
#define MS_BIG_REQUEST ((size_t) 16 * 1024)

/* ---------------------------------------------------------------------
 * Arena
 * ---------------------------------------------------------------------
 */

typedef struct MsBlock
{
	struct MsBlock *next;
	size_t		size;			/* usable bytes after the header */
	size_t		used;
} MsBlock;

struct DlMsArena
{
	DlAllocator alloc;
	MsBlock    *head;			/* the block being filled, then the others */
};

#define MS_ALIGN(n) (((n) + 15) & ~(size_t) 15)
#define MS_HEADER MS_ALIGN(sizeof(MsBlock))

MsArena *
dl_grid_arena_create(const DlAllocator *alloc, DlError *err)
{
	MsArena    *a = dl_alloc(alloc, sizeof(MsArena), err);

	if (a != NULL)
	{
		a->alloc = *alloc;
		a->head = NULL;
	}
	return a;
}

void
dl_grid_arena_free(MsArena *a)
{
	MsBlock    *b,
			   *next;
	DlAllocator alloc;

	if (a == NULL)
		return;
	alloc = a->alloc;
	for (b = a->head; b != NULL; b = next)
	{
		next = b->next;
		dl_free(&alloc, b);
	}
	dl_free(&alloc, a);
}

const DlAllocator *
dl_grid_arena_allocator(const MsArena *a)
{
	return &a->alloc;
}

/* n bytes, zeroed, 16-byte aligned; NULL with DL_ERR_NO_MEMORY or LIMIT. */
void *
dl_grid_arena_alloc(MsArena *a, size_t n, DlError *err)
{
	MsBlock    *b;
	size_t		size,
				total;

	if (n > DL_ALLOC_MAX)
	{
		dl_error_set(err, DL_ERR_LIMIT, "allocation of %zu bytes exceeds the engine limit", n);
		return NULL;
	}
	n = MS_ALIGN(n == 0 ? 1 : n);
	b = a->head;
	if (b != NULL && b->size - b->used >= n)
	{
		void	   *p = (char *) b + MS_HEADER + b->used;

		b->used += n;
		memset(p, 0, n);
		return p;
	}
	size = n > MS_BIG_REQUEST ? n : MS_BLOCK_SIZE;
	if (!dl_size_add(size, MS_HEADER, &total))
	{
		dl_error_set(err, DL_ERR_LIMIT, "allocation of %zu bytes overflows size_t", n);
		return NULL;
	}
	b = dl_alloc(&a->alloc, total, err);
	if (b == NULL)
		return NULL;
	b->size = size;
	b->used = n;
	if (n > MS_BIG_REQUEST && a->head != NULL)
	{
		/* a block of its own: keep filling the current one */
		b->next = a->head->next;
		a->head->next = b;
	}
	else
	{
		b->next = a->head;
		a->head = b;
	}
	return (char *) b + MS_HEADER;
}

char *
dl_grid_arena_strndup(MsArena *a, const char *s, size_t n, DlError *err)
{
	char	   *p = dl_grid_arena_alloc(a, n + 1, err);

	if (p != NULL)
		memcpy(p, s, n);
	return p;
}

/* ---------------------------------------------------------------------
 * Python values
 * ---------------------------------------------------------------------
 */

const char *
dl_grid_kind_name(PyKind k)
{
	switch (k)
	{
		case PY_NONE:
			return "None";
		case PY_BOOL:
			return "a boolean";
		case PY_INT:
			return "an integer";
		case PY_FLOAT:
			return "a float";
		case PY_STR:
			return "a string";
		case PY_LIST:
			return "a list";
		case PY_TUPLE:
			return "a tuple";
		case PY_DICT:
			return "a dict";
	}
	return "a value";
}

/* ---------------------------------------------------------------------
 * Grid parser
 * ---------------------------------------------------------------------
 */

typedef struct GridParser
{
	const char *s;
	size_t		len;
	const char *what;			/* "compile_params_grid" or "fit_params_grid" */
	DlPylitLexer lx;
	DlPylitToken tok;			/* the next token, not consumed yet */
	MsArena    *arena;
	DlError    *err;
} GridParser;

static void
advance(GridParser *p)
{
	dl_pylit_next(&p->lx, &p->tok);
}

static bool
at_punct(const GridParser *p, char c)
{
	return p->tok.kind == DL_PYLIT_PUNCT && p->tok.ch == c;
}

/*
 * The syntax error "<problem> at position P in <what>, near "..."" (or
 * "at the end of <what>").  at is a 0-based offset.
 */
static DlStatus
syntax_error(GridParser *p, size_t at, const char *problem)
{
	if (at >= p->len)
		dl_error_set(p->err, DL_ERR_PARSE, "%s at the end of %s", problem, p->what);
	else
	{
		size_t		n = 0;

		while (at + n < p->len && n < MS_NEAR_LEN && p->s[at + n] != '\n' && p->s[at + n] != '\r')
			n++;
		n = dl_text_clip(p->s + at, p->len - at, n);
		dl_error_set(p->err, DL_ERR_PARSE, "%s at position %zu in %s, near \"%.*s\"",
					 problem, at + 1, p->what, (int) n, p->s + at);
	}
	return dl_error_hint(p->err, GRID_HINT);
}

static PyVal *
new_val(GridParser *p, PyKind kind, size_t at)
{
	PyVal	   *v = dl_grid_arena_alloc(p->arena, sizeof(PyVal), p->err);

	if (v != NULL)
	{
		v->kind = kind;
		v->pos = at + 1;
	}
	return v;
}

/* Append item (and key, for a dict) to container v, growing by doubling. */
static DlStatus
push_item(GridParser *p, PyVal *v, PyVal *key, PyVal *item)
{
	if (v->n == v->cap)
	{
		int			ncap = v->cap == 0 ? 4 : (v->cap > MS_MAX_ITEMS / 2 ? MS_MAX_ITEMS : v->cap * 2);
		PyVal	  **items,
				  **keys = NULL;

		if (v->cap >= MS_MAX_ITEMS)
		{
			dl_error_set(p->err, DL_ERR_LIMIT, "too many items in one list or dict");
			return dl_error_hint(p->err, "Shorten the lists of the grid.");
		}
		items = dl_grid_arena_alloc(p->arena, sizeof(PyVal *) * (size_t) ncap, p->err);
		if (items == NULL)
			return p->err->code;
		if (v->kind == PY_DICT)
		{
			keys = dl_grid_arena_alloc(p->arena, sizeof(PyVal *) * (size_t) ncap, p->err);
			if (keys == NULL)
				return p->err->code;
			if (v->n > 0)
				memcpy(keys, v->keys, sizeof(PyVal *) * (size_t) v->n);
			v->keys = keys;
		}
		if (v->n > 0)
			memcpy(items, v->items, sizeof(PyVal *) * (size_t) v->n);
		v->items = items;
		v->cap = ncap;
	}
	if (v->kind == PY_DICT)
		v->keys[v->n] = key;
	v->items[v->n++] = item;
	return DL_OK;
}

static DlStatus parse_value(GridParser *p, int depth, PyVal **out);

/* The STRING token p->tok. */
static DlStatus
parse_string(GridParser *p, PyVal **out)
{
	PyVal	   *v = new_val(p, PY_STR, p->tok.begin);

	if (v == NULL)
		return p->err->code;
	v->s = dl_grid_arena_alloc(p->arena, p->tok.end - p->tok.begin, p->err);
	if (v->s == NULL)
		return p->err->code;
	dl_pylit_string_decode(p->s, &p->tok, v->s);
	advance(p);
	*out = v;
	return DL_OK;
}

/* True, False, None, or a u'' string; any other name is an error. */
static DlStatus
parse_name(GridParser *p, PyVal **out)
{
	const char *name = p->s + p->tok.begin;
	size_t		n = p->tok.end - p->tok.begin;
	PyVal	   *v;

	if (n == 1 && (name[0] == 'u' || name[0] == 'U') && p->tok.end < p->len &&
		(p->s[p->tok.end] == '\'' || p->s[p->tok.end] == '"'))
	{
		advance(p);				/* u'...' is a Python 2 unicode string */
		if (p->tok.kind != DL_PYLIT_STRING)
			return syntax_error(p, p->tok.problem_at, dl_pylit_problem_text(p->tok.problem));
		return parse_string(p, out);
	}
	if (n == 4 && memcmp(name, "True", 4) == 0)
	{
		v = new_val(p, PY_BOOL, p->tok.begin);
		if (v != NULL)
			v->b = true;
	}
	else if (n == 5 && memcmp(name, "False", 5) == 0)
		v = new_val(p, PY_BOOL, p->tok.begin);
	else if (n == 4 && memcmp(name, "None", 4) == 0)
		v = new_val(p, PY_NONE, p->tok.begin);
	else
	{
		int			shown = (int) (n < MS_NAME_SHOW ? n : MS_NAME_SHOW);

		dl_error_set(p->err, DL_ERR_PARSE, "unknown name \"%.*s\" at position %zu in %s",
					 shown, name, p->tok.begin + 1, p->what);
		return dl_error_hint(p->err, "Quote strings ('%.*s'); the only names allowed are True, "
							 "False and None.", shown, name);
	}
	if (v == NULL)
		return p->err->code;
	advance(p);
	*out = v;
	return DL_OK;
}

/* An INT or FLOAT token. */
static DlStatus
parse_number(GridParser *p, PyVal **out)
{
	PyVal	   *v = new_val(p, p->tok.kind == DL_PYLIT_INT ? PY_INT : PY_FLOAT, p->tok.begin);

	if (v == NULL)
		return p->err->code;
	v->i = p->tok.i;
	v->f = p->tok.f;
	advance(p);
	*out = v;
	return DL_OK;
}

/*
 * The items of a list or tuple up to close; p->tok just past the opening
 * bracket.  A trailing comma is allowed.
 */
static DlStatus
parse_items(GridParser *p, PyVal *v, char close, int depth)
{
	for (;;)
	{
		PyVal	   *item;
		DlStatus	rc;

		if (at_punct(p, close))
		{
			advance(p);
			return DL_OK;
		}
		rc = parse_value(p, depth + 1, &item);
		if (rc == DL_OK)
			rc = push_item(p, v, NULL, item);
		if (rc != DL_OK)
			return rc;
		if (at_punct(p, ','))
			advance(p);
		else if (at_punct(p, close))
		{
			advance(p);
			return DL_OK;
		}
		else
			return syntax_error(p, p->tok.begin,
								close == ']' ? "expected \",\" or \"]\"" : "expected \",\" or \")\"");
	}
}

static DlStatus
parse_dict(GridParser *p, int depth, PyVal **out)
{
	PyVal	   *v = new_val(p, PY_DICT, p->tok.begin);

	if (v == NULL)
		return p->err->code;
	advance(p);					/* { */
	for (;;)
	{
		PyVal	   *key,
				   *item;
		DlStatus	rc;

		if (at_punct(p, '}'))
		{
			advance(p);
			*out = v;
			return DL_OK;
		}
		rc = parse_value(p, depth + 1, &key);
		if (rc != DL_OK)
			return rc;
		if (key->kind == PY_LIST || key->kind == PY_DICT)
			return syntax_error(p, key->pos - 1, "a list or dict cannot be a dict key");
		if ((at_punct(p, ',') || at_punct(p, '}')) && v->n == 0)
			return syntax_error(p, v->pos - 1, "sets are not supported (expected a dict)");
		if (!at_punct(p, ':'))
			return syntax_error(p, p->tok.begin, "expected \":\" after the dict key");
		advance(p);
		rc = parse_value(p, depth + 1, &item);
		if (rc == DL_OK)
			rc = push_item(p, v, key, item);
		if (rc != DL_OK)
			return rc;
		if (at_punct(p, ','))
			advance(p);
		else if (at_punct(p, '}'))
		{
			advance(p);
			*out = v;
			return DL_OK;
		}
		else
			return syntax_error(p, p->tok.begin, "expected \",\" or \"}\"");
	}
}

/* ( ... ): the empty tuple, a parenthesized value, or a tuple. */
static DlStatus
parse_paren(GridParser *p, int depth, PyVal **out)
{
	size_t		start = p->tok.begin;
	PyVal	   *first,
			   *v;
	DlStatus	rc;

	advance(p);					/* ( */
	if (at_punct(p, ')'))
	{
		advance(p);
		*out = new_val(p, PY_TUPLE, start);
		return *out != NULL ? DL_OK : p->err->code;
	}
	rc = parse_value(p, depth + 1, &first);
	if (rc != DL_OK)
		return rc;
	if (at_punct(p, ')'))
	{
		advance(p);
		*out = first;
		return DL_OK;
	}
	if (!at_punct(p, ','))
		return syntax_error(p, p->tok.begin, "expected \",\" or \")\"");
	advance(p);
	v = new_val(p, PY_TUPLE, start);
	if (v == NULL)
		return p->err->code;
	rc = push_item(p, v, NULL, first);
	if (rc == DL_OK)
		rc = parse_items(p, v, ')', depth);
	*out = v;
	return rc;
}

/* One value starting at p->tok, at nesting depth. */
static DlStatus
parse_value(GridParser *p, int depth, PyVal **out)
{
	const DlPylitToken *tok = &p->tok;
	char		msg[64];

	if (depth > MS_MAX_DEPTH)
		return syntax_error(p, tok->begin, "brackets nested too deep");
	switch (tok->kind)
	{
		case DL_PYLIT_END:
			return syntax_error(p, tok->begin, "expected a value");
		case DL_PYLIT_STRING:
			return parse_string(p, out);
		case DL_PYLIT_INT:
		case DL_PYLIT_FLOAT:
			return parse_number(p, out);
		case DL_PYLIT_NAME:
			return parse_name(p, out);
		case DL_PYLIT_ERROR:
			return syntax_error(p, tok->problem_at, dl_pylit_problem_text(tok->problem));
		case DL_PYLIT_PUNCT:
			if (tok->ch == '{')
				return parse_dict(p, depth, out);
			if (tok->ch == '(')
				return parse_paren(p, depth, out);
			if (tok->ch == '[')
			{
				PyVal	   *v = new_val(p, PY_LIST, tok->begin);

				if (v == NULL)
					return p->err->code;
				advance(p);
				*out = v;
				return parse_items(p, v, ']', depth);
			}
			if (tok->ch != '=')
			{
				snprintf(msg, sizeof(msg), "unexpected \"%c\", expected a value", tok->ch);
				return syntax_error(p, tok->begin, msg);
			}
			break;
		case DL_PYLIT_OTHER:
			break;
	}
	return syntax_error(p, tok->begin, "unexpected character");
}

/* Parse the whole text as one literal. */
DlStatus
dl_grid_parse(const char *text, const char *what, MsArena *arena, PyVal **out, DlError *err)
{
	GridParser	p;
	DlStatus	rc;

	p.s = text;
	p.len = strlen(text);
	if (dl_text_check_cap(what, p.len, DL_GRID_MAX_BYTES, err) != DL_OK)
		return DL_ERR_LIMIT;
	p.what = what;
	p.arena = arena;
	p.err = err;
	dl_pylit_init(&p.lx, text, 0, p.len, DL_PYLIT_STRICT);
	advance(&p);
	if (p.tok.kind == DL_PYLIT_END)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "%s is empty", what);
		return dl_error_hint(err, GRID_HINT);
	}
	rc = parse_value(&p, 0, out);
	if (rc != DL_OK)
		return rc;
	if (p.tok.kind != DL_PYLIT_END)
		return syntax_error(&p, p.tok.begin, "unexpected text after the end of the grid");
	return DL_OK;
}

/* ---------------------------------------------------------------------
 * Python repr / str
 * ---------------------------------------------------------------------
 */

/*
 * Python's repr of a finite double: the shortest digits that read back
 * exactly, positional for exponents -4..15 (always with a fraction,
 * "100.0"), else d.dde+XX ("1e-05", "1.5e+16").
 */
static void
append_py_float(DlStrBuf *buf, double x)
{
	char		tmp[64];
	char		digits[32];
	int			nd = 0;
	int			exp10;
	const char *q;

	if (!isfinite(x))
	{
		dl_strbuf_puts(buf, isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf"));
		return;
	}
	for (int prec = 1; prec <= 17; prec++)
	{
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, x);
		if (strtod(tmp, NULL) == x)
			break;
	}
	q = tmp;
	if (*q == '-')
	{
		dl_strbuf_putc(buf, '-');
		q++;
	}
	for (; *q != 'e' && *q != '\0'; q++)
		if (*q >= '0' && *q <= '9' && nd < (int) sizeof(digits) - 1)
			digits[nd++] = *q;
	exp10 = *q == 'e' ? (int) strtol(q + 1, NULL, 10) : 0;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	if (digits[0] == '0')
		exp10 = 0;				/* zero */

	if (exp10 >= -4 && exp10 < 16)
	{
		if (exp10 >= 0)
		{
			for (int k = 0; k <= exp10; k++)
				dl_strbuf_putc(buf, k < nd ? digits[k] : '0');
			dl_strbuf_putc(buf, '.');
			if (nd > exp10 + 1)
				dl_strbuf_puts(buf, digits + exp10 + 1);
			else
				dl_strbuf_putc(buf, '0');
		}
		else
		{
			dl_strbuf_puts(buf, "0.");
			for (int k = 0; k < -exp10 - 1; k++)
				dl_strbuf_putc(buf, '0');
			dl_strbuf_puts(buf, digits);
		}
	}
	else
	{
		dl_strbuf_putc(buf, digits[0]);
		if (nd > 1)
		{
			dl_strbuf_putc(buf, '.');
			dl_strbuf_puts(buf, digits + 1);
		}
		dl_strbuf_printf(buf, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
	}
}

/* Python's repr of a str: single quotes unless it holds ' and no ". */
static void
append_py_str_repr(DlStrBuf *buf, const char *s)
{
	char		q = (strchr(s, '\'') != NULL && strchr(s, '"') == NULL) ? '"' : '\'';

	dl_strbuf_putc(buf, q);
	for (const unsigned char *c = (const unsigned char *) s; *c != '\0' && !buf->failed; c++)
	{
		if (*c == '\\' || *c == (unsigned char) q)
		{
			dl_strbuf_putc(buf, '\\');
			dl_strbuf_putc(buf, (char) *c);
		}
		else if (*c == '\n')
			dl_strbuf_puts(buf, "\\n");
		else if (*c == '\t')
			dl_strbuf_puts(buf, "\\t");
		else if (*c == '\r')
			dl_strbuf_puts(buf, "\\r");
		else if (*c < 0x20 || *c == 0x7f)
			dl_strbuf_printf(buf, "\\x%02x", *c);
		else
			dl_strbuf_putc(buf, (char) *c);
	}
	dl_strbuf_putc(buf, q);
}

void
dl_grid_append_repr(DlStrBuf *buf, const PyVal *v)
{
	switch (v->kind)
	{
		case PY_NONE:
			dl_strbuf_puts(buf, "None");
			break;
		case PY_BOOL:
			dl_strbuf_puts(buf, v->b ? "True" : "False");
			break;
		case PY_INT:
			dl_strbuf_printf(buf, "%lld", (long long) v->i);
			break;
		case PY_FLOAT:
			append_py_float(buf, v->f);
			break;
		case PY_STR:
			append_py_str_repr(buf, v->s);
			break;
		case PY_LIST:
		case PY_TUPLE:
			dl_strbuf_putc(buf, v->kind == PY_LIST ? '[' : '(');
			for (int k = 0; k < v->n && !buf->failed; k++)
			{
				if (k > 0)
					dl_strbuf_puts(buf, ", ");
				dl_grid_append_repr(buf, v->items[k]);
			}
			if (v->kind == PY_TUPLE && v->n == 1)
				dl_strbuf_putc(buf, ',');
			dl_strbuf_putc(buf, v->kind == PY_LIST ? ']' : ')');
			break;
		case PY_DICT:
			dl_strbuf_putc(buf, '{');
			for (int k = 0; k < v->n && !buf->failed; k++)
			{
				if (k > 0)
					dl_strbuf_puts(buf, ", ");
				dl_grid_append_repr(buf, v->keys[k]);
				dl_strbuf_puts(buf, ": ");
				dl_grid_append_repr(buf, v->items[k]);
			}
			dl_strbuf_putc(buf, '}');
			break;
	}
}

/* Python's str(): a string as it is, anything else as repr. */
void
dl_grid_append_str(DlStrBuf *buf, const PyVal *v)
{
	if (v->kind == PY_STR)
		dl_strbuf_puts(buf, v->s);
	else
		dl_grid_append_repr(buf, v);
}

/* repr of v for a message, in out (MS_SHOW_BUF bytes), cut past MS_SHOW_MAX. */
const char *
dl_grid_show_val(const PyVal *v, char *out)
{
	DlStrBuf	buf;

	dl_strbuf_init_fixed(&buf, out, MS_SHOW_BUF);
	dl_grid_append_repr(&buf, v);
	if (buf.len > MS_SHOW_MAX)
	{
		size_t		n = dl_text_clip(out, buf.len, MS_SHOW_CUT);

		memcpy(out + n, " ...", 5);
	}
	return out;
}

/* Bytes of s to quote in a message (MS_TEXT_SHOW at most, whole characters). */
int
dl_grid_show_text(const char *s)
{
	return (int) dl_text_clip(s, strlen(s), MS_TEXT_SHOW);
}
