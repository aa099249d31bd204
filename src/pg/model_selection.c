/*-------------------------------------------------------------------------
 *
 * model_selection.c
 *	  Model selection tables: the engine checks of compile_params and
 *	  fit_params strings, and the configurations of generate_model_configs
 *	  (MADlib's grid syntax, grid search and random search).
 *
 * The SQL drivers in src/sql/50_model_selection.sql own the tables; this
 * file only turns arguments into rows:
 *
 *	 madlib_dl._check_compile_params(text, context)  -> canonical text
 *	 madlib_dl._check_fit_params(text, context)      -> canonical text
 *	 madlib_dl._model_configs(ids, compile_grid, fit_grid, search_type,
 *	                          num_configs, random_state)
 *	     -> SETOF (model_id, compile_params, fit_params), in MADlib's order
 *
 * GRIDS are Python dict literals, read by a small strict parser (below):
 * dicts, lists, tuples, '...' / "..." strings with backslash escapes,
 * decimal ints, floats (1e-3 included), True, False and None.  Nothing
 * else (names, calls, sets, arithmetic) is accepted; an error names the
 * position (a byte offset, 1-based) and the text found there.  Each grid
 * maps parameter names to lists of choices; the compile grid may hold
 * optimizer_params_list, a list of dicts that are alternatives, each
 * mapping 'optimizer' and the optimizer's arguments to lists.
 *
 * GRID SEARCH follows madlib_keras_model_selection.py_in: for each entry
 * of optimizer_params_list (or once without one), the Cartesian product
 * over the compile keys (the entry's own product standing for the
 * optimizer), then the fit keys, then the model ids, the last varying
 * fastest.  A list [lo, hi, 'linear'|'log'|'log_near_one'] is a
 * distribution and is refused.
 *
 * RANDOM SEARCH draws num_configs configurations, each in MADlib's draw
 * order: the model id, then each compile key (for optimizer_params_list
 * the entry, then each of its arguments), then each fit key.  The
 * generator is the engine's DlRng, not numpy's, so the values differ from
 * MADlib's.  Configuration k is drawn from a generator seeded with
 * base + k, where base is the first output of a generator seeded with
 * random_state: the same random_state gives the same rows, and the first
 * rows do not depend on num_configs.  (MADlib reseeds numpy with
 * random_state + d before every draw d; its seed sequences for nearby
 * random_states fall into step after a configuration of another size, so
 * random_state 7 and 8 give mostly the same rows.  Scrambling the
 * random_state first avoids that.)  Without random_state the generator
 * is seeded once from the clock and the process id.
 *
 * ROW STRINGS are built as MADlib's generate_row_string does: the
 * optimizer first, optimizer='Name(arg=value,...)', then the other keys
 * in the order of the grid, key=value joined by ",", strings quoted,
 * metrics wrapped in a list, numbers as Python's repr writes them.  Every
 * string is parsed by the engine before any row is returned.
 *
 * IDENTIFICATION
 *	  src/pg/model_selection.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "madlib_dl/dl_params.h"
#include "madlib_dl/dl_rng.h"

/* Most configurations one call may generate (grid product or num_configs). */
#define MS_MAX_CONFIGS 100000
/* Deepest bracket nesting accepted in a grid. */
#define MS_MAX_DEPTH 32
/* Longest piece of text quoted in a syntax error. */
#define MS_NEAR_LEN 24
/* Buffer for the engine's canonical parameter strings. */
#define MS_CANON_LEN 4096

#define OPL_KEY "optimizer_params_list"

#define GRID_HINT "Write the grid as a Python dict of lists, for example " \
	"{'batch_size': [64, 128], 'epochs': [10]}."

/* ---------------------------------------------------------------------
 * Python literals
 * ---------------------------------------------------------------------
 */

typedef enum PyKind
{
	PY_NONE,
	PY_BOOL,
	PY_INT,
	PY_FLOAT,
	PY_STR,
	PY_LIST,
	PY_TUPLE,
	PY_DICT
} PyKind;

typedef struct PyVal
{
	PyKind		kind;
	int			pos;			/* 1-based byte offset in the grid text */
	bool		b;				/* PY_BOOL */
	int64		i;				/* PY_INT */
	double		f;				/* PY_FLOAT, finite */
	char	   *s;				/* PY_STR, NUL-terminated, no NUL inside */
	int			n;				/* PY_LIST, PY_TUPLE, PY_DICT: item count */
	struct PyVal **items;		/* (n) values */
	struct PyVal **keys;		/* (n) keys of a PY_DICT, else NULL */
} PyVal;

typedef struct PyParser
{
	const char *s;
	int			len;
	int			i;				/* next byte to read */
	const char *what;			/* "compile_params_grid" or "fit_params_grid" */
} PyParser;

static const char *
kind_name(PyKind k)
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

/*
 * Raise the syntax error "<problem> at position P in <what>, near "...""
 * (or "at the end of <what>").  at is a 0-based offset.
 */
static void
pg_attribute_noreturn()
syntax_error(PyParser *p, int at, const char *problem)
{
	if (at >= p->len)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s at the end of %s", problem, p->what),
				 errhint(GRID_HINT)));
	else
	{
		int			n = 0;

		while (at + n < p->len && n < MS_NEAR_LEN && p->s[at + n] != '\n' && p->s[at + n] != '\r')
			n++;
		/* do not cut a multibyte character */
		n = pg_mbcliplen(p->s + at, n, n);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s at position %d in %s, near \"%.*s\"", problem, at + 1, p->what,
						n, p->s + at),
				 errhint(GRID_HINT)));
	}
	pg_unreachable();
}

static inline bool
py_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static inline bool
py_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline bool
py_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline bool
py_ident_char(char c)
{
	return py_ident_start(c) || py_digit(c);
}

static int
hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void
skip_ws(PyParser *p)
{
	while (p->i < p->len && py_space(p->s[p->i]))
		p->i++;
}

static PyVal *
new_val(PyKind kind, int at)
{
	PyVal	   *v = palloc0(sizeof(PyVal));

	v->kind = kind;
	v->pos = at + 1;
	return v;
}

/* Append item (and key, for a dict) to container v, growing by doubling. */
static void
push_item(PyVal *v, int *cap, PyVal *key, PyVal *item)
{
	if (v->n == *cap)
	{
		int			ncap = *cap == 0 ? 4 : *cap * 2;

		if ((Size) ncap > MaxAllocSize / sizeof(PyVal *))
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("too many items in one list or dict")));
		v->items = v->items ? repalloc(v->items, ncap * sizeof(PyVal *))
			: palloc(ncap * sizeof(PyVal *));
		if (v->kind == PY_DICT)
			v->keys = v->keys ? repalloc(v->keys, ncap * sizeof(PyVal *))
				: palloc(ncap * sizeof(PyVal *));
		*cap = ncap;
	}
	if (v->kind == PY_DICT)
		v->keys[v->n] = key;
	v->items[v->n++] = item;
}

static PyVal *parse_value(PyParser *p, int depth);

/* 'text' or "text", p->i at the opening quote. */
static PyVal *
parse_string(PyParser *p)
{
	int			start = p->i;
	char		q = p->s[p->i++];
	StringInfoData buf;
	PyVal	   *v;

	initStringInfo(&buf);
	for (;;)
	{
		char		c;

		if (p->i >= p->len || p->s[p->i] == '\n' || p->s[p->i] == '\r')
			syntax_error(p, start, "unterminated string");
		c = p->s[p->i++];
		if (c == q)
			break;
		if (c != '\\')
		{
			appendStringInfoChar(&buf, c);
			continue;
		}
		if (p->i >= p->len)
			syntax_error(p, start, "unterminated string");
		c = p->s[p->i++];
		switch (c)
		{
			case '\\':
			case '\'':
			case '"':
				appendStringInfoChar(&buf, c);
				break;
			case 'n':
				appendStringInfoChar(&buf, '\n');
				break;
			case 't':
				appendStringInfoChar(&buf, '\t');
				break;
			case 'r':
				appendStringInfoChar(&buf, '\r');
				break;
			case '\n':
				break;			/* line continuation */
			case 'x':
				{
					int			hi,
								lo;

					if (p->i + 1 >= p->len ||
						(hi = hex_value(p->s[p->i])) < 0 || (lo = hex_value(p->s[p->i + 1])) < 0 ||
						hi * 16 + lo == 0 || hi * 16 + lo > 0x7f)
						syntax_error(p, p->i - 2, "invalid \\x escape (give two hex digits, 01 to 7f)");
					appendStringInfoChar(&buf, (char) (hi * 16 + lo));
					p->i += 2;
					break;
				}
			case '0':
				syntax_error(p, p->i - 2, "a string may not hold a NUL character");
				break;
			default:
				/* as Python: an unknown escape keeps its backslash */
				appendStringInfoChar(&buf, '\\');
				appendStringInfoChar(&buf, c);
				break;
		}
	}
	v = new_val(PY_STR, start);
	v->s = buf.data;
	return v;
}

/* [+-] digits [. digits] [e [+-] digits], or [+-] . digits [...]. */
static PyVal *
parse_number(PyParser *p)
{
	int			start = p->i;
	int			i = p->i;
	int			int_digits = 0,
				frac_digits = 0;
	bool		is_float = false;
	int			mant_start;
	char	   *tok;
	PyVal	   *v;

	if (p->s[i] == '+' || p->s[i] == '-')
		i++;
	mant_start = i;
	while (i < p->len && py_digit(p->s[i]))
		i++, int_digits++;
	if (i < p->len && p->s[i] == '.')
	{
		is_float = true;
		i++;
		while (i < p->len && py_digit(p->s[i]))
			i++, frac_digits++;
	}
	if (int_digits + frac_digits == 0)
		syntax_error(p, start, "invalid number");
	if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E'))
	{
		int			exp_digits = 0;

		is_float = true;
		i++;
		if (i < p->len && (p->s[i] == '+' || p->s[i] == '-'))
			i++;
		while (i < p->len && py_digit(p->s[i]))
			i++, exp_digits++;
		if (exp_digits == 0)
			syntax_error(p, start, "invalid number");
	}
	/* a number runs into a name or another dot: 1x, 0x10, 1.2.3, 1_000 */
	if (i < p->len && (py_ident_char(p->s[i]) || p->s[i] == '.'))
		syntax_error(p, start, "invalid number");
	/* Python refuses leading zeros in integers: 007 */
	if (!is_float && int_digits > 1 && p->s[mant_start] == '0')
		syntax_error(p, start, "invalid number (an integer may not start with 0)");

	tok = pnstrdup(p->s + start, i - start);
	if (is_float)
	{
		char	   *end;
		double		d = strtod(tok, &end);

		if (*end != '\0' || !isfinite(d))
			syntax_error(p, start, "number out of range");
		v = new_val(PY_FLOAT, start);
		v->f = d;
	}
	else
	{
		bool		neg = tok[0] == '-';
		uint64		u = 0;

		for (int k = mant_start - start; tok[k] != '\0'; k++)
		{
			int			d = tok[k] - '0';

			if (u > (PG_UINT64_MAX - d) / 10)
				syntax_error(p, start, "integer out of range");
			u = u * 10 + d;
		}
		if (u > (uint64) PG_INT64_MAX + (neg ? 1 : 0))
			syntax_error(p, start, "integer out of range");
		v = new_val(PY_INT, start);
		v->i = neg ? (int64) (0 - u) : (int64) u;
	}
	pfree(tok);
	p->i = i;
	return v;
}

/* True, False, None; any other name is an error. */
static PyVal *
parse_name(PyParser *p)
{
	int			start = p->i;
	int			n = 0;
	PyVal	   *v;

	while (p->i < p->len && py_ident_char(p->s[p->i]))
		p->i++, n++;
	if (n == 4 && strncmp(p->s + start, "True", 4) == 0)
	{
		v = new_val(PY_BOOL, start);
		v->b = true;
	}
	else if (n == 5 && strncmp(p->s + start, "False", 5) == 0)
		v = new_val(PY_BOOL, start);
	else if (n == 4 && strncmp(p->s + start, "None", 4) == 0)
		v = new_val(PY_NONE, start);
	else
	{
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown name \"%.*s\" at position %d in %s", Min(n, 64), p->s + start,
						start + 1, p->what),
				 errhint("Quote strings ('%.*s'); the only names allowed are True, False and None.",
						 Min(n, 64), p->s + start)));
		pg_unreachable();
	}
	return v;
}

/*
 * The items of a list or tuple up to close; p->i just past the opening
 * bracket.  A trailing comma is allowed.
 */
static void
parse_items(PyParser *p, PyVal *v, char close, int depth)
{
	int			cap = v->n;

	for (;;)
	{
		skip_ws(p);
		if (p->i < p->len && p->s[p->i] == close)
		{
			p->i++;
			return;
		}
		push_item(v, &cap, NULL, parse_value(p, depth + 1));
		skip_ws(p);
		if (p->i < p->len && p->s[p->i] == ',')
			p->i++;
		else if (p->i < p->len && p->s[p->i] == close)
		{
			p->i++;
			return;
		}
		else
			syntax_error(p, p->i, close == ']' ? "expected \",\" or \"]\"" : "expected \",\" or \")\"");
	}
}

static PyVal *
parse_dict(PyParser *p, int depth)
{
	PyVal	   *v = new_val(PY_DICT, p->i);
	int			cap = 0;

	p->i++;						/* { */
	for (;;)
	{
		PyVal	   *key;

		skip_ws(p);
		if (p->i < p->len && p->s[p->i] == '}')
		{
			p->i++;
			return v;
		}
		key = parse_value(p, depth + 1);
		if (key->kind == PY_LIST || key->kind == PY_DICT)
			syntax_error(p, key->pos - 1, "a list or dict cannot be a dict key");
		skip_ws(p);
		if (p->i < p->len && (p->s[p->i] == ',' || p->s[p->i] == '}') && v->n == 0)
			syntax_error(p, v->pos - 1, "sets are not supported (expected a dict)");
		if (p->i >= p->len || p->s[p->i] != ':')
			syntax_error(p, p->i, "expected \":\" after the dict key");
		p->i++;
		push_item(v, &cap, key, parse_value(p, depth + 1));
		skip_ws(p);
		if (p->i < p->len && p->s[p->i] == ',')
			p->i++;
		else if (p->i < p->len && p->s[p->i] == '}')
		{
			p->i++;
			return v;
		}
		else
			syntax_error(p, p->i, "expected \",\" or \"}\"");
	}
}

/* ( ... ): the empty tuple, a parenthesized value, or a tuple. */
static PyVal *
parse_paren(PyParser *p, int depth)
{
	int			start = p->i;
	PyVal	   *first;
	PyVal	   *v;
	int			cap = 0;

	p->i++;						/* ( */
	skip_ws(p);
	if (p->i < p->len && p->s[p->i] == ')')
	{
		p->i++;
		return new_val(PY_TUPLE, start);
	}
	first = parse_value(p, depth + 1);
	skip_ws(p);
	if (p->i < p->len && p->s[p->i] == ')')
	{
		p->i++;
		return first;
	}
	if (p->i >= p->len || p->s[p->i] != ',')
		syntax_error(p, p->i, "expected \",\" or \")\"");
	p->i++;
	v = new_val(PY_TUPLE, start);
	push_item(v, &cap, NULL, first);
	parse_items(p, v, ')', depth);
	return v;
}

static PyVal *
parse_value(PyParser *p, int depth)
{
	char		c;

	check_stack_depth();
	if (depth > MS_MAX_DEPTH)
		syntax_error(p, p->i, "brackets nested too deep");
	skip_ws(p);
	if (p->i >= p->len)
		syntax_error(p, p->i, "expected a value");
	c = p->s[p->i];
	if (c == '{')
		return parse_dict(p, depth);
	if (c == '[')
	{
		PyVal	   *v = new_val(PY_LIST, p->i);

		p->i++;
		parse_items(p, v, ']', depth);
		return v;
	}
	if (c == '(')
		return parse_paren(p, depth);
	if (c == '\'' || c == '"')
		return parse_string(p);
	if ((c == 'u' || c == 'U') && p->i + 1 < p->len &&
		(p->s[p->i + 1] == '\'' || p->s[p->i + 1] == '"'))
	{
		p->i++;					/* u'...' is a Python 2 unicode string */
		return parse_string(p);
	}
	if (py_digit(c) || c == '.' || c == '+' || c == '-')
		return parse_number(p);
	if (py_ident_start(c))
		return parse_name(p);
	if (c == ']' || c == '}' || c == ')' || c == ',' || c == ':')
		syntax_error(p, p->i, psprintf("unexpected \"%c\", expected a value", c));
	syntax_error(p, p->i, "unexpected character");
}

/* Parse the whole text as one literal. */
static PyVal *
parse_grid(const char *text, const char *what)
{
	PyParser	p = {text, (int) strlen(text), 0, what};
	PyVal	   *v;

	skip_ws(&p);
	if (p.i >= p.len)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is empty", what),
				 errhint(GRID_HINT)));
	v = parse_value(&p, 0);
	skip_ws(&p);
	if (p.i < p.len)
		syntax_error(&p, p.i, "unexpected text after the end of the grid");
	return v;
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
append_py_float(StringInfo buf, double x)
{
	char		tmp[64];
	char		digits[32];
	int			nd = 0;
	int			exp10;
	char	   *e;
	const char *q;

	if (!isfinite(x))
	{
		appendStringInfoString(buf, isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf"));
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
		appendStringInfoChar(buf, '-');
		q++;
	}
	for (; *q != 'e' && *q != '\0'; q++)
		if (py_digit(*q) && nd < (int) sizeof(digits) - 1)
			digits[nd++] = *q;
	exp10 = (int) strtol(q + 1, &e, 10);
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
				appendStringInfoChar(buf, k < nd ? digits[k] : '0');
			appendStringInfoChar(buf, '.');
			if (nd > exp10 + 1)
				appendStringInfoString(buf, digits + exp10 + 1);
			else
				appendStringInfoChar(buf, '0');
		}
		else
		{
			appendStringInfoString(buf, "0.");
			for (int k = 0; k < -exp10 - 1; k++)
				appendStringInfoChar(buf, '0');
			appendStringInfoString(buf, digits);
		}
	}
	else
	{
		appendStringInfoChar(buf, digits[0]);
		if (nd > 1)
		{
			appendStringInfoChar(buf, '.');
			appendStringInfoString(buf, digits + 1);
		}
		appendStringInfo(buf, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
	}
}

/* Python's repr of a str: single quotes unless it holds ' and no ". */
static void
append_py_str_repr(StringInfo buf, const char *s)
{
	char		q = (strchr(s, '\'') != NULL && strchr(s, '"') == NULL) ? '"' : '\'';

	appendStringInfoChar(buf, q);
	for (const unsigned char *c = (const unsigned char *) s; *c != '\0'; c++)
	{
		if (*c == '\\' || *c == (unsigned char) q)
		{
			appendStringInfoChar(buf, '\\');
			appendStringInfoChar(buf, (char) *c);
		}
		else if (*c == '\n')
			appendStringInfoString(buf, "\\n");
		else if (*c == '\t')
			appendStringInfoString(buf, "\\t");
		else if (*c == '\r')
			appendStringInfoString(buf, "\\r");
		else if (*c < 0x20 || *c == 0x7f)
			appendStringInfo(buf, "\\x%02x", *c);
		else
			appendStringInfoChar(buf, (char) *c);
	}
	appendStringInfoChar(buf, q);
}

static void
append_py_repr(StringInfo buf, const PyVal *v)
{
	switch (v->kind)
	{
		case PY_NONE:
			appendStringInfoString(buf, "None");
			break;
		case PY_BOOL:
			appendStringInfoString(buf, v->b ? "True" : "False");
			break;
		case PY_INT:
			appendStringInfo(buf, INT64_FORMAT, v->i);
			break;
		case PY_FLOAT:
			append_py_float(buf, v->f);
			break;
		case PY_STR:
			append_py_str_repr(buf, v->s);
			break;
		case PY_LIST:
		case PY_TUPLE:
			appendStringInfoChar(buf, v->kind == PY_LIST ? '[' : '(');
			for (int k = 0; k < v->n; k++)
			{
				if (k > 0)
					appendStringInfoString(buf, ", ");
				append_py_repr(buf, v->items[k]);
			}
			if (v->kind == PY_TUPLE && v->n == 1)
				appendStringInfoChar(buf, ',');
			appendStringInfoChar(buf, v->kind == PY_LIST ? ']' : ')');
			break;
		case PY_DICT:
			appendStringInfoChar(buf, '{');
			for (int k = 0; k < v->n; k++)
			{
				if (k > 0)
					appendStringInfoString(buf, ", ");
				append_py_repr(buf, v->keys[k]);
				appendStringInfoString(buf, ": ");
				append_py_repr(buf, v->items[k]);
			}
			appendStringInfoChar(buf, '}');
			break;
	}
}

/* Python's str(): a string as it is, anything else as repr. */
static void
append_py_str(StringInfo buf, const PyVal *v)
{
	if (v->kind == PY_STR)
		appendStringInfoString(buf, v->s);
	else
		append_py_repr(buf, v);
}

/* repr of v, capped for messages. */
static char *
show_val(const PyVal *v)
{
	StringInfoData buf;

	initStringInfo(&buf);
	append_py_repr(&buf, v);
	if (buf.len > 80)
	{
		buf.len = pg_mbcliplen(buf.data, buf.len, 76);
		buf.data[buf.len] = '\0';
		appendStringInfoString(&buf, " ...");
	}
	return buf.data;
}

/* ---------------------------------------------------------------------
 * Grid validation
 * ---------------------------------------------------------------------
 */

static const char *const distributions[] = {"linear", "log", "log_near_one"};

/* [x, ..., 'name'] with only the last item a string, as MADlib tests it. */
static bool
is_distribution(const PyVal *list)
{
	if (list->n < 2 || list->items[list->n - 1]->kind != PY_STR)
		return false;
	for (int k = 0; k < list->n - 1; k++)
		if (list->items[k]->kind == PY_STR)
			return false;
	return true;
}

static bool
is_known_distribution(const char *name)
{
	for (int k = 0; k < (int) lengthof(distributions); k++)
		if (strcmp(name, distributions[k]) == 0)
			return true;
	return false;
}

static double
num_value(const PyVal *v)
{
	return v->kind == PY_INT ? (double) v->i : v->f;
}

/*
 * Check one list of choices for key in what.  In grid search a
 * distribution is refused; in random search it must be well formed.
 */
static void
check_choices(const PyVal *list, const char *key, const char *what, bool random)
{
	const char *dist;
	const PyVal *lo,
			   *hi;

	if (list->kind != PY_LIST)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("value of \"%s\" in %s must be a list, got %s %s",
						key, what, kind_name(list->kind), show_val(list)),
				 errhint("Write every value as a list of choices, for example 'epochs': [10] "
						 "or 'lr': [0.01, 0.1].")));
	if (list->n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("list of \"%s\" in %s is empty", key, what),
				 errhint("Give at least one value to try, or remove the key.")));
	if (!is_distribution(list))
		return;
	dist = list->items[list->n - 1]->s;
	if (!random)
	{
		if (is_known_distribution(dist))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot search from a distribution with grid search: \"%s\" in %s is %s",
							key, what, show_val(list)),
					 errhint("Use search_type => 'random' with num_configs to sample from a "
							 "distribution, or list the values to try.")));
		return;
	}
	if (list->n != 3)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("distribution of \"%s\" in %s must have 3 items, got %d: %s",
						key, what, list->n, show_val(list)),
				 errhint("Write a distribution as [low, high, 'linear'], [low, high, 'log'] or "
						 "[low, high, 'log_near_one'].")));
	if (!is_known_distribution(dist))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown distribution '%s' for \"%s\" in %s", dist, key, what),
				 errhint("The distributions are 'linear', 'log' and 'log_near_one'.")));
	lo = list->items[0];
	hi = list->items[1];
	if ((lo->kind != PY_INT && lo->kind != PY_FLOAT) || (hi->kind != PY_INT && hi->kind != PY_FLOAT))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bounds of the distribution of \"%s\" in %s must be numbers: %s",
						key, what, show_val(list)),
				 errhint("Write a distribution as [low, high, '%s'].", dist)));
	if (!(num_value(hi) > num_value(lo)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("distribution of \"%s\" in %s must have low < high: %s",
						key, what, show_val(list)),
				 errhint("Write a distribution as [low, high, '%s'].", dist)));
	if (strcmp(dist, "log") == 0 && !(num_value(lo) > 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("'log' distribution of \"%s\" in %s needs 0 < low: %s",
						key, what, show_val(list)),
				 errhint("Give positive bounds, or use 'linear'.")));
	if (strcmp(dist, "log_near_one") == 0 && !(num_value(hi) < 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("'log_near_one' distribution of \"%s\" in %s needs high < 1: %s",
						key, what, show_val(list)),
				 errhint("Give bounds below 1, for example [0.9, 0.999, 'log_near_one'].")));
}

/* A dict key that must be a parameter name; duplicates are refused. */
static const char *
check_param_key(const PyVal *dict, int k, const char *what)
{
	const PyVal *key = dict->keys[k];
	const char *s;

	if (key->kind != PY_STR)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("key %s at position %d in %s is not a parameter name",
						show_val(key), key->pos, what),
				 errhint("Keys are parameter names in quotes, for example 'batch_size'.")));
	s = key->s;
	if (!py_ident_start(s[0]))
		goto bad;
	for (const char *c = s; *c != '\0'; c++)
		if (!py_ident_char(*c))
			goto bad;
	for (int j = 0; j < k; j++)
		if (strcmp(dict->keys[j]->s, s) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("duplicate key '%s' at position %d in %s", s, key->pos, what),
					 errhint("Give each parameter once, with all its values in one list.")));
	return s;

bad:
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("key %s at position %d in %s is not a parameter name",
					show_val(key), key->pos, what),
			 errhint("Keys are parameter names in quotes, for example 'batch_size'.")));
	pg_unreachable();
}

static int
find_key(const PyVal *dict, const char *name)
{
	for (int k = 0; k < dict->n; k++)
		if (strcmp(dict->keys[k]->s, name) == 0)
			return k;
	return -1;
}

/*
 * Check a whole grid (a dict of lists).  In the compile grid,
 * optimizer_params_list is a non-empty list of non-empty dicts of lists
 * whose keys do not appear at the top level.  Returns the index of
 * optimizer_params_list, or -1.
 */
static int
check_grid(const PyVal *g, const char *what, bool compile, bool random)
{
	int			opl = -1;

	if (g->kind != PY_DICT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a dict, got %s", what, kind_name(g->kind)),
				 errhint(GRID_HINT)));
	for (int k = 0; k < g->n; k++)
	{
		const char *key = check_param_key(g, k, what);

		if (compile && strcmp(key, OPL_KEY) == 0)
			opl = k;
	}
	for (int k = 0; k < g->n; k++)
	{
		const PyVal *list = g->items[k];

		if (k != opl)
		{
			check_choices(list, g->keys[k]->s, what, random);
			continue;
		}
		if (list->kind != PY_LIST || list->n == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("optimizer_params_list in %s must be a non-empty list of dicts", what),
					 errhint("Write for example 'optimizer_params_list': [{'optimizer': ['SGD'], "
							 "'lr': [0.01, 0.1]}, {'optimizer': ['Adam'], 'lr': [0.001]}].")));
		for (int e = 0; e < list->n; e++)
		{
			const PyVal *entry = list->items[e];
			char	   *ctx;

			if (entry->kind != PY_DICT || entry->n == 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("entry %d of optimizer_params_list in %s must be a non-empty dict, got %s",
								e + 1, what, show_val(entry)),
						 errhint("Each entry maps 'optimizer' and its arguments to lists, for example "
								 "{'optimizer': ['Adam'], 'lr': [0.001, 0.01]}.")));
			ctx = psprintf("optimizer_params_list entry %d of %s", e + 1, what);
			for (int j = 0; j < entry->n; j++)
			{
				const char *okey = check_param_key(entry, j, ctx);

				if (find_key(g, okey) >= 0)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("\"%s\" is both in optimizer_params_list and at the top of %s",
									okey, what),
							 errhint("Put the optimizer and its arguments only inside "
									 "optimizer_params_list.")));
				check_choices(entry->items[j], okey, ctx, random);
				if (strcmp(okey, "optimizer") == 0)
					for (int c = 0; c < entry->items[j]->n; c++)
						if (entry->items[j]->items[c]->kind != PY_STR)
							ereport(ERROR,
									(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
									 errmsg("optimizer %s in %s is not a name",
											show_val(entry->items[j]->items[c]), ctx),
									 errhint("Give optimizer names as strings, for example "
											 "'optimizer': ['SGD', 'Adam'].")));
			}
		}
	}
	return opl;
}

/* ---------------------------------------------------------------------
 * Row strings
 * ---------------------------------------------------------------------
 */

/*
 * MADlib's spelling of an optimizer name: SGD, RMSprop, else the name
 * capitalized (adam -> Adam).
 */
static void
append_optimizer_name(StringInfo buf, const char *name)
{
	if (pg_strcasecmp(name, "sgd") == 0)
		appendStringInfoString(buf, "SGD");
	else if (pg_strcasecmp(name, "rmsprop") == 0)
		appendStringInfoString(buf, "RMSprop");
	else
		for (const char *c = name; *c != '\0'; c++)
			appendStringInfoChar(buf, c == name ? pg_ascii_toupper((unsigned char) *c)
								 : pg_ascii_tolower((unsigned char) *c));
}

/*
 * The row string of one configuration: grid dict g with vals[k] chosen
 * for key k (vals[opl] unused); for the compile grid with opl >= 0,
 * optimizer entry `entry` with opt_vals[j] chosen for its key j.
 */
static char *
row_string(const PyVal *g, PyVal **vals, int opl, const PyVal *entry, PyVal **opt_vals)
{
	StringInfoData buf;
	bool		first = true;

	initStringInfo(&buf);
	if (opl >= 0)
	{
		int			oname = find_key(entry, "optimizer");
		bool		any = false;

		appendStringInfoString(&buf, "optimizer='");
		/* MADlib's default when the entry names no optimizer */
		append_optimizer_name(&buf, oname >= 0 ? opt_vals[oname]->s : "RMSprop");
		appendStringInfoChar(&buf, '(');
		for (int j = 0; j < entry->n; j++)
		{
			if (j == oname)
				continue;
			if (any)
				appendStringInfoChar(&buf, ',');
			appendStringInfo(&buf, "%s=", entry->keys[j]->s);
			append_py_str(&buf, opt_vals[j]);
			any = true;
		}
		appendStringInfoString(&buf, ")'");
		first = false;
	}
	for (int k = 0; k < g->n; k++)
	{
		const char *key = g->keys[k]->s;

		if (k == opl)
			continue;
		if (!first)
			appendStringInfoChar(&buf, ',');
		first = false;
		appendStringInfo(&buf, "%s=", key);
		if (strcmp(key, "metrics") == 0 && vals[k]->kind == PY_STR)
		{
			appendStringInfoChar(&buf, '[');
			append_py_repr(&buf, vals[k]);
			appendStringInfoChar(&buf, ']');
		}
		else
			append_py_repr(&buf, vals[k]);
	}
	return buf.data;
}

/* ---------------------------------------------------------------------
 * Configurations
 * ---------------------------------------------------------------------
 */

typedef struct ConfigList
{
	int			n;
	int			cap;
	int32	   *model_id;		/* (n) */
	char	  **compile;		/* (n) */
	char	  **fit;			/* (n) */
} ConfigList;

static void
config_add(ConfigList *cl, int32 model_id, char *compile, char *fit)
{
	if (cl->n >= MS_MAX_CONFIGS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("more than %d configurations", MS_MAX_CONFIGS),
				 errhint("Narrow the grid, or use search_type => 'random' with num_configs.")));
	if (cl->n == cl->cap)
	{
		cl->cap = cl->cap == 0 ? 64 : Min(cl->cap * 2, MS_MAX_CONFIGS);
		cl->model_id = cl->model_id ? repalloc(cl->model_id, cl->cap * sizeof(int32))
			: palloc(cl->cap * sizeof(int32));
		cl->compile = cl->compile ? repalloc(cl->compile, cl->cap * sizeof(char *))
			: palloc(cl->cap * sizeof(char *));
		cl->fit = cl->fit ? repalloc(cl->fit, cl->cap * sizeof(char *))
			: palloc(cl->cap * sizeof(char *));
	}
	cl->model_id[cl->n] = model_id;
	cl->compile[cl->n] = compile;
	cl->fit[cl->n] = fit;
	cl->n++;
}

/* product *total *= n, refusing more than MS_MAX_CONFIGS. */
static void
product_mul(int64 *total, int64 n)
{
	if (n > 0 && *total > MS_MAX_CONFIGS / n)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("grid search gives more than %d configurations", MS_MAX_CONFIGS),
				 errhint("Narrow the grid, or use search_type => 'random' with num_configs.")));
	*total *= n;
}

/*
 * Grid search.  For each optimizer entry (or once): odometer over the
 * compile keys (the entry's product for optimizer_params_list), the fit
 * keys and the model ids, the last fastest.
 */
static void
grid_search(ConfigList *out, const PyVal *cg, int opl, const PyVal *fg,
			const int32 *ids, int nids)
{
	int			nentries = opl >= 0 ? cg->items[opl]->n : 1;
	int64		total = 0;
	PyVal	  **cvals = palloc0(sizeof(PyVal *) * (cg->n + 1));
	PyVal	  **fvals = palloc0(sizeof(PyVal *) * (fg->n + 1));

	for (int e = 0; e < nentries; e++)
	{
		const PyVal *entry = opl >= 0 ? cg->items[opl]->items[e] : NULL;
		int			ndims = cg->n + fg->n + 1;
		int64	   *size = palloc(sizeof(int64) * ndims);
		int64	   *idx = palloc0(sizeof(int64) * ndims);
		PyVal	  **ovals = entry ? palloc0(sizeof(PyVal *) * entry->n) : NULL;
		int64		count = 1;

		for (int k = 0; k < cg->n; k++)
		{
			if (k == opl)
			{
				int64		m = 1;

				for (int j = 0; j < entry->n; j++)
					product_mul(&m, entry->items[j]->n);
				size[k] = m;
			}
			else
				size[k] = cg->items[k]->n;
		}
		for (int k = 0; k < fg->n; k++)
			size[cg->n + k] = fg->items[k]->n;
		size[ndims - 1] = nids;
		for (int d = 0; d < ndims; d++)
			product_mul(&count, size[d]);
		total += count;
		if (total > MS_MAX_CONFIGS)
			product_mul(&total, MS_MAX_CONFIGS + 1);	/* raises */

		for (int64 r = 0; r < count; r++)
		{
			CHECK_FOR_INTERRUPTS();
			for (int k = 0; k < cg->n; k++)
			{
				if (k == opl)
				{
					int64		rest = idx[k];

					/* the entry's own product, its last key fastest */
					for (int j = entry->n - 1; j >= 0; j--)
					{
						ovals[j] = entry->items[j]->items[rest % entry->items[j]->n];
						rest /= entry->items[j]->n;
					}
				}
				else
					cvals[k] = cg->items[k]->items[idx[k]];
			}
			for (int k = 0; k < fg->n; k++)
				fvals[k] = fg->items[k]->items[idx[cg->n + k]];
			config_add(out, ids[idx[ndims - 1]],
					   row_string(cg, cvals, opl, entry, ovals),
					   row_string(fg, fvals, -1, NULL, NULL));
			/* advance the odometer */
			for (int d = ndims - 1; d >= 0; d--)
			{
				if (++idx[d] < size[d])
					break;
				idx[d] = 0;
			}
		}
	}
}

/* Random search state. */
typedef struct Sampler
{
	DlRng		rng;
	bool		seeded;			/* random_state given */
	uint64		base;			/* configuration k uses seed base + k */
} Sampler;

/* Start configuration k: reseed when random_state was given. */
static void
sampler_start_config(Sampler *sm, int k)
{
	if (sm->seeded)
		dl_rng_seed(&sm->rng, sm->base + (uint64) k);
}

/*
 * Sample one value from a list of choices (checked by check_choices):
 * from the distribution, or one item uniformly.
 */
static PyVal *
sample_choice(Sampler *sm, const PyVal *list)
{
	PyVal	   *v;
	double		lo,
				hi,
				u;
	const char *dist;

	if (!is_distribution(list))
		return list->items[dl_rng_below(&sm->rng, (uint64) list->n)];
	lo = num_value(list->items[0]);
	hi = num_value(list->items[1]);
	dist = list->items[2]->s;
	u = dl_rng_uniform(&sm->rng);
	v = new_val(PY_FLOAT, list->pos - 1);
	if (strcmp(dist, "linear") == 0)
		v->f = lo + (hi - lo) * u;
	else if (strcmp(dist, "log") == 0)
	{
		double		a = log10(lo),
					b = log10(hi);

		v->f = pow(10.0, a + (b - a) * u);
	}
	else
	{
		/* log_near_one: 1 - 10^uniform(log10(1 - hi), log10(1 - lo)) */
		double		a = log10(1.0 - hi),
					b = log10(1.0 - lo);

		v->f = 1.0 - pow(10.0, a + (b - a) * u);
	}
	return v;
}

/* One grid's values for one random configuration, in MADlib's draw order. */
static const PyVal *
sample_grid(Sampler *sm, const PyVal *g, int opl, PyVal **vals, PyVal **ovals)
{
	const PyVal *entry = NULL;

	for (int k = 0; k < g->n; k++)
	{
		if (k == opl)
		{
			const PyVal *entries = g->items[k];

			entry = entries->items[dl_rng_below(&sm->rng, (uint64) entries->n)];
			for (int j = 0; j < entry->n; j++)
				ovals[j] = sample_choice(sm, entry->items[j]);
		}
		else
			vals[k] = sample_choice(sm, g->items[k]);
	}
	return entry;
}

static void
random_search(ConfigList *out, const PyVal *cg, int opl, const PyVal *fg,
			  const int32 *ids, int nids, int num_configs, bool seeded, int64 random_state)
{
	Sampler		sm;
	PyVal	  **cvals = palloc0(sizeof(PyVal *) * (cg->n + 1));
	PyVal	  **fvals = palloc0(sizeof(PyVal *) * (fg->n + 1));
	PyVal	  **ovals;
	int			maxopt = 1;

	if (opl >= 0)
		for (int e = 0; e < cg->items[opl]->n; e++)
			maxopt = Max(maxopt, cg->items[opl]->items[e]->n);
	ovals = palloc0(sizeof(PyVal *) * maxopt);

	memset(&sm, 0, sizeof(sm));
	sm.seeded = seeded;
	if (seeded)
	{
		dl_rng_seed(&sm.rng, (uint64) random_state);
		sm.base = dl_rng_next(&sm.rng);
	}
	else
		dl_rng_seed(&sm.rng, (uint64) GetCurrentTimestamp() ^ ((uint64) MyProcPid << 40));

	for (int c = 0; c < num_configs; c++)
	{
		int32		id;
		const PyVal *entry;
		char	   *cs;

		CHECK_FOR_INTERRUPTS();
		sampler_start_config(&sm, c);
		id = ids[dl_rng_below(&sm.rng, (uint64) nids)];
		entry = sample_grid(&sm, cg, opl, cvals, ovals);
		cs = row_string(cg, cvals, opl, entry, ovals);
		sample_grid(&sm, fg, -1, fvals, NULL);
		config_add(out, id, cs, row_string(fg, fvals, -1, NULL, NULL));
	}
}

/* ---------------------------------------------------------------------
 * Engine checks
 * ---------------------------------------------------------------------
 */

/*
 * Parse s with the engine (compile or fit params); ERROR with the
 * engine's message, prefixed by context and the string when context is
 * not NULL.  Returns the canonical string when canon is true.
 */
static char *
engine_check(const char *s, bool compile, const char *context, bool canon)
{
	DlError		err;
	DlStatus	st;
	DlCompileParams cp;
	DlFitParams fp;
	char	   *buf = NULL;

	dl_error_clear(&err);
	st = compile ? dl_compile_params_parse(s, &cp, &err) : dl_fit_params_parse(s, &fp, &err);
	if (st != DL_OK)
	{
		if (context != NULL)
			dl_error_prefix(&err, "%s \"%.*s%s\"", context,
							pg_mbcliplen(s, (int) strlen(s), 120), s, strlen(s) > 120 ? "..." : "");
		dl_pg_report(&err);
	}
	if (canon)
	{
		buf = palloc(MS_CANON_LEN);
		st = compile ? dl_compile_params_format(&cp, buf, MS_CANON_LEN, &err)
			: dl_fit_params_format(&fp, buf, MS_CANON_LEN, &err);
		dl_pg_check(st, &err);
	}
	return buf;
}

static Datum
check_params_sql(FunctionCallInfo fcinfo, bool compile)
{
	const char *param = compile ? "compile_params" : "fit_params";
	char	   *context = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", context ? context : param),
				 compile ? errhint("Give at least loss and optimizer, for example "
								   "loss='categorical_crossentropy', optimizer='Adam(lr=0.001)'.")
				 : errhint("Give '' for Keras' defaults (batch_size=32, epochs=1).")));
	PG_RETURN_TEXT_P(cstring_to_text(engine_check(text_to_cstring(PG_GETARG_TEXT_PP(0)),
												  compile, context, true)));
}

PG_FUNCTION_INFO_V1(madlib_dl__check_compile_params);

/*
 * madlib_dl._check_compile_params(compile_params text, context text)
 * RETURNS text: parse with the engine (ERROR otherwise, the message
 * prefixed by context and the string when context is given) and return
 * the engine's canonical spelling, equal for strings that mean the same.
 */
Datum
madlib_dl__check_compile_params(PG_FUNCTION_ARGS)
{
	return check_params_sql(fcinfo, true);
}

PG_FUNCTION_INFO_V1(madlib_dl__check_fit_params);

/* madlib_dl._check_fit_params(fit_params text, context text): the same. */
Datum
madlib_dl__check_fit_params(PG_FUNCTION_ARGS)
{
	return check_params_sql(fcinfo, false);
}

/* ---------------------------------------------------------------------
 * _model_configs
 * ---------------------------------------------------------------------
 */

static int
cmp_int32(const void *a, const void *b)
{
	int32		x = *(const int32 *) a,
				y = *(const int32 *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/* Is s a non-empty prefix of word, ignoring case? */
static bool
is_prefix_of(const char *s, const char *word)
{
	size_t		n = strlen(s);

	return n > 0 && n <= strlen(word) && pg_strncasecmp(s, word, n) == 0;
}

PG_FUNCTION_INFO_V1(madlib_dl__model_configs);

/*
 * madlib_dl._model_configs(model_id_list int[], compile_params_grid text,
 *     fit_params_grid text, search_type text, num_configs int,
 *     random_state int)
 * RETURNS TABLE (model_id int, compile_params text, fit_params text)
 *
 * Checks every argument but the table names, generates the
 * configurations (see the file header) and parses every string with the
 * engine before returning any row.  model_id_list must hold no NULL; it
 * is sorted and de-duplicated.  Rows come in generation order; they may
 * repeat (the driver removes duplicates).
 */
Datum
madlib_dl__model_configs(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ArrayType  *id_arr;
	Datum	   *id_datums;
	bool	   *id_nulls;
	int			nids_in,
				nids = 0;
	int32	   *ids;
	char	   *cgrid_text,
			   *fgrid_text,
			   *search;
	bool		random;
	PyVal	   *cg,
			   *fg;
	int			opl;
	ConfigList	cl = {0};
	MemoryContext work,
				old;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model_id_list must not be NULL"),
				 errhint("Give the model ids to try, for example ARRAY[1, 2].")));
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("compile_params_grid must not be NULL"),
				 errhint("Give a dict of lists, for example {'loss': ['categorical_crossentropy'], "
						 "'optimizer_params_list': [{'optimizer': ['Adam'], 'lr': [0.001]}], "
						 "'metrics': ['accuracy']}.")));
	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("fit_params_grid must not be NULL"),
				 errhint("Give a dict of lists, for example {'batch_size': [64, 128], 'epochs': [10]}, "
						 "or {} for Keras' defaults.")));
	if (PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("search_type must not be NULL"),
				 errhint("Give 'grid' or 'random'.")));

	InitMaterializedSRF(fcinfo, 0);
	work = AllocSetContextCreate(CurrentMemoryContext, "madlib_dl model configs",
								 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);

	/* model ids: no NULLs, at least one, sorted and unique */
	id_arr = PG_GETARG_ARRAYTYPE_P(0);
	if (ARR_NDIM(id_arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model_id_list must be a one-dimensional array")));
	deconstruct_array(id_arr, INT4OID, 4, true, TYPALIGN_INT, &id_datums, &id_nulls, &nids_in);
	if (nids_in == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model_id_list is empty"),
				 errhint("Give at least one model id of the model architecture table.")));
	ids = palloc(sizeof(int32) * nids_in);
	for (int k = 0; k < nids_in; k++)
	{
		if (id_nulls[k])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("model_id_list must not hold NULL")));
		ids[k] = DatumGetInt32(id_datums[k]);
	}
	qsort(ids, nids_in, sizeof(int32), cmp_int32);
	for (int k = 0; k < nids_in; k++)
		if (nids == 0 || ids[nids - 1] != ids[k])
			ids[nids++] = ids[k];

	/* search type and its arguments */
	search = text_to_cstring(PG_GETARG_TEXT_PP(3));
	if (is_prefix_of(search, "grid"))
		random = false;
	else if (is_prefix_of(search, "random"))
		random = true;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("search_type must be 'grid' or 'random', got '%s'", search),
				 errhint("Use 'grid' for every combination, or 'random' with num_configs "
						 "for a sample.")));
	if (!random)
	{
		if (!PG_ARGISNULL(4))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("num_configs must be NULL for grid search, got %d", PG_GETARG_INT32(4)),
					 errhint("Grid search generates every combination; use search_type => "
							 "'random' to draw num_configs of them.")));
		if (!PG_ARGISNULL(5))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("random_state must be NULL for grid search, got %d", PG_GETARG_INT32(5)),
					 errhint("Grid search draws nothing; use search_type => 'random' to "
							 "draw configurations.")));
	}
	else
	{
		if (PG_ARGISNULL(4))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("num_configs must not be NULL for random search"),
					 errhint("Give the number of configurations to draw, for example num_configs => 20.")));
		if (PG_GETARG_INT32(4) < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("num_configs must be at least 1, got %d", PG_GETARG_INT32(4)),
					 errhint("Give the number of configurations to draw, for example num_configs => 20.")));
		if (PG_GETARG_INT32(4) > MS_MAX_CONFIGS)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("num_configs must be at most %d, got %d", MS_MAX_CONFIGS,
							PG_GETARG_INT32(4)),
					 errhint("Draw fewer configurations.")));
	}

	/* the grids */
	cgrid_text = text_to_cstring(PG_GETARG_TEXT_PP(1));
	fgrid_text = text_to_cstring(PG_GETARG_TEXT_PP(2));
	cg = parse_grid(cgrid_text, "compile_params_grid");
	fg = parse_grid(fgrid_text, "fit_params_grid");
	opl = check_grid(cg, "compile_params_grid", true, random);
	(void) check_grid(fg, "fit_params_grid", false, random);

	if (random)
		random_search(&cl, cg, opl, fg, ids, nids, PG_GETARG_INT32(4),
					  !PG_ARGISNULL(5), PG_ARGISNULL(5) ? 0 : (int64) PG_GETARG_INT32(5));
	else
		grid_search(&cl, cg, opl, fg, ids, nids);

	/* every string through the engine before any row is returned */
	for (int r = 0; r < cl.n; r++)
	{
		CHECK_FOR_INTERRUPTS();
		engine_check(cl.compile[r], true, "generated compile_params", false);
		engine_check(cl.fit[r], false, "generated fit_params", false);
	}

	MemoryContextSwitchTo(old);
	for (int r = 0; r < cl.n; r++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = Int32GetDatum(cl.model_id[r]);
		values[1] = CStringGetTextDatum(cl.compile[r]);
		values[2] = CStringGetTextDatum(cl.fit[r]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		pfree(DatumGetPointer(values[1]));
		pfree(DatumGetPointer(values[2]));
	}
	MemoryContextDelete(work);
	return (Datum) 0;
}
