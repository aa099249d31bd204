/*-------------------------------------------------------------------------
 *
 * pylit.c
 *	  The lexer of MADlib's Python-literal syntax (see dl_pylit.h): one
 *	  scanner for compile_params, fit_params and the model selection grids.
 *
 * IDENTIFICATION
 *	  src/engine/pylit.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "madlib_dl/dl_pylit.h"

static inline bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline bool
is_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline bool
is_name_char(char c)
{
	return is_name_start(c) || is_digit(c);
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

static inline bool
is_punct(char c)
{
	return c == '[' || c == ']' || c == '{' || c == '}' || c == '(' || c == ')' ||
		c == ',' || c == ':' || c == '=';
}

void
dl_pylit_init(DlPylitLexer *lx, const char *s, size_t begin, size_t end, DlPylitMode mode)
{
	lx->s = s;
	lx->pos = begin;
	lx->end = end;
	lx->mode = mode;
}

/* Append c to out (when decoding). */
static inline void
put(char *out, size_t *n, char c)
{
	if (out != NULL)
		out[*n] = c;
	(*n)++;
}

/*
 * Scan the string whose opening quote is s[start], up to end; decode it
 * into out when out is not NULL (strict mode only).  *stop is just past
 * the closing quote, or where the scan stopped on a problem, which is
 * reported at *at.  *len is the decoded length.
 */
static DlPylitProblem
scan_string(const char *s, size_t start, size_t end, DlPylitMode mode, char *out,
			size_t *len, size_t *stop, size_t *at)
{
	char		q = s[start];
	size_t		i = start + 1;
	size_t		n = 0;

	*len = 0;
	if (mode == DL_PYLIT_LENIENT)
	{
		/* a backslash keeps the next byte, newlines included */
		for (; i < end; i++)
		{
			if (s[i] == '\\' && i + 1 < end)
				i++;
			else if (s[i] == q)
			{
				*stop = i + 1;
				return DL_PYLIT_NO_PROBLEM;
			}
		}
		*stop = end;
		*at = start;
		return DL_PYLIT_UNTERMINATED_STRING;
	}
	for (;;)
	{
		char		c;
		int			hi,
					lo;

		*stop = i;
		if (i >= end || s[i] == '\n' || s[i] == '\r')
		{
			*at = start;
			return DL_PYLIT_UNTERMINATED_STRING;
		}
		c = s[i++];
		if (c == q)
			break;
		if (c == '\0')
		{
			*stop = i;
			*at = i - 1;
			return DL_PYLIT_NUL_IN_STRING;
		}
		if (c != '\\')
		{
			put(out, &n, c);
			continue;
		}
		if (i >= end)
		{
			*stop = i;
			*at = start;
			return DL_PYLIT_UNTERMINATED_STRING;
		}
		c = s[i++];
		*stop = i;
		switch (c)
		{
			case '\\':
			case '\'':
			case '"':
				put(out, &n, c);
				break;
			case 'n':
				put(out, &n, '\n');
				break;
			case 't':
				put(out, &n, '\t');
				break;
			case 'r':
				put(out, &n, '\r');
				break;
			case '\n':
				break;			/* line continuation */
			case 'x':
				if (i + 1 >= end || (hi = hex_value(s[i])) < 0 || (lo = hex_value(s[i + 1])) < 0 ||
					hi * 16 + lo == 0 || hi * 16 + lo > 0x7f)
				{
					*at = i - 2;
					return DL_PYLIT_BAD_HEX_ESCAPE;
				}
				put(out, &n, (char) (hi * 16 + lo));
				i += 2;
				break;
			case '0':
			case '\0':
				*at = i - 2;
				return DL_PYLIT_NUL_IN_STRING;
			default:
				/* as Python: an unknown escape keeps its backslash */
				put(out, &n, '\\');
				put(out, &n, c);
				break;
		}
	}
	*stop = i;
	*len = n;
	return DL_PYLIT_NO_PROBLEM;
}

/* The number starting at s[start] (a digit, '.', '+' or '-'). */
static void
lex_number(DlPylitLexer *lx, size_t start, DlPylitToken *tok)
{
	const char *s = lx->s;
	size_t		i = start,
				mant;
	int			int_digits = 0,
				frac_digits = 0;
	bool		is_float = false;
	DlPylitProblem problem = DL_PYLIT_NO_PROBLEM;

	if (s[i] == '+' || s[i] == '-')
		i++;
	mant = i;
	while (i < lx->end && is_digit(s[i]))
		i++, int_digits++;
	if (i < lx->end && s[i] == '.')
	{
		is_float = true;
		i++;
		while (i < lx->end && is_digit(s[i]))
			i++, frac_digits++;
	}
	if (int_digits + frac_digits == 0)
		problem = DL_PYLIT_INVALID_NUMBER;
	else if (i < lx->end && (s[i] == 'e' || s[i] == 'E'))
	{
		int			exp_digits = 0;

		is_float = true;
		i++;
		if (i < lx->end && (s[i] == '+' || s[i] == '-'))
			i++;
		while (i < lx->end && is_digit(s[i]))
			i++, exp_digits++;
		if (exp_digits == 0)
			problem = DL_PYLIT_INVALID_NUMBER;
	}
	/* a number runs into a name or another dot: 1x, 0x10, 1.2.3, 1_000 */
	if (i < lx->end && (is_name_char(s[i]) || s[i] == '.'))
		problem = DL_PYLIT_INVALID_NUMBER;
	if (problem != DL_PYLIT_NO_PROBLEM)
	{
		/* one ERROR token for the whole run of number-like bytes */
		while (i < lx->end && (is_name_char(s[i]) || s[i] == '.'))
			i++;
	}
	else if (!is_float && int_digits > 1 && s[mant] == '0' && lx->mode == DL_PYLIT_STRICT)
		problem = DL_PYLIT_LEADING_ZERO;	/* Python refuses 007 */
	else
	{
		char	   *e;
		double		d = strtod(s + start, &e);

		/* strtod reads the same grammar; a difference is refused */
		if (e != s + i)
			problem = DL_PYLIT_INVALID_NUMBER;
		else if (is_float)
		{
			if (!isfinite(d))
				problem = DL_PYLIT_FLOAT_RANGE;
			tok->f = d;
		}
		else
		{
			bool		neg = s[start] == '-';
			uint64_t	u = 0;

			for (size_t k = mant; k < i && problem == DL_PYLIT_NO_PROBLEM; k++)
			{
				uint64_t	digit = (uint64_t) (s[k] - '0');

				if (u > (UINT64_MAX - digit) / 10)
					problem = DL_PYLIT_INT_RANGE;
				else
					u = u * 10 + digit;
			}
			if (problem == DL_PYLIT_NO_PROBLEM && u > (uint64_t) INT64_MAX + (neg ? 1 : 0))
				problem = DL_PYLIT_INT_RANGE;
			if (problem == DL_PYLIT_NO_PROBLEM)
				tok->i = neg ? (int64_t) (0 - u) : (int64_t) u;
			tok->f = d;
		}
	}
	tok->end = i;
	if (problem != DL_PYLIT_NO_PROBLEM)
	{
		tok->kind = DL_PYLIT_ERROR;
		tok->problem = problem;
		tok->problem_at = start;
	}
	else
		tok->kind = is_float ? DL_PYLIT_FLOAT : DL_PYLIT_INT;
}

void
dl_pylit_next(DlPylitLexer *lx, DlPylitToken *tok)
{
	const char *s = lx->s;
	size_t		i;
	char		c;

	memset(tok, 0, sizeof(*tok));
	while (lx->pos < lx->end && dl_pylit_is_space(s[lx->pos]))
		lx->pos++;
	i = lx->pos;
	tok->begin = i;
	tok->end = i;
	if (i >= lx->end)
	{
		tok->kind = DL_PYLIT_END;
		return;
	}
	c = s[i];
	if (c == '\'' || c == '"')
	{
		size_t		len,
					stop,
					at = i;
		DlPylitProblem p = scan_string(s, i, lx->end, lx->mode, NULL, &len, &stop, &at);

		tok->kind = p == DL_PYLIT_NO_PROBLEM ? DL_PYLIT_STRING : DL_PYLIT_ERROR;
		tok->problem = p;
		tok->problem_at = at;
		tok->end = stop;
	}
	else if (is_digit(c) || c == '.' || c == '+' || c == '-')
		lex_number(lx, i, tok);
	else if (is_name_start(c))
	{
		while (i < lx->end && is_name_char(s[i]))
			i++;
		tok->kind = DL_PYLIT_NAME;
		tok->end = i;
	}
	else
	{
		tok->kind = is_punct(c) ? DL_PYLIT_PUNCT : DL_PYLIT_OTHER;
		tok->ch = c;
		tok->end = i + 1;
	}
	lx->pos = tok->end;
}

const char *
dl_pylit_problem_text(DlPylitProblem problem)
{
	switch (problem)
	{
		case DL_PYLIT_NO_PROBLEM:
			return "no problem";
		case DL_PYLIT_UNTERMINATED_STRING:
			return "unterminated string";
		case DL_PYLIT_BAD_HEX_ESCAPE:
			return "invalid \\x escape (give two hex digits, 01 to 7f)";
		case DL_PYLIT_NUL_IN_STRING:
			return "a string may not hold a NUL character";
		case DL_PYLIT_INVALID_NUMBER:
			return "invalid number";
		case DL_PYLIT_LEADING_ZERO:
			return "invalid number (an integer may not start with 0)";
		case DL_PYLIT_FLOAT_RANGE:
			return "number out of range";
		case DL_PYLIT_INT_RANGE:
			return "integer out of range";
	}
	return "invalid token";
}

size_t
dl_pylit_string_decode(const char *s, const DlPylitToken *tok, char *out)
{
	size_t		len = 0,
				stop,
				at;

	if (tok->kind != DL_PYLIT_STRING ||
		scan_string(s, tok->begin, tok->end, DL_PYLIT_STRICT, out, &len, &stop, &at) !=
		DL_PYLIT_NO_PROBLEM)
		len = 0;
	out[len] = '\0';
	return len;
}

bool
dl_pylit_is_name(const char *s, size_t n)
{
	if (n == 0 || !is_name_start(s[0]))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!is_name_char(s[i]))
			return false;
	return true;
}
