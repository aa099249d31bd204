/*-------------------------------------------------------------------------
 *
 * dl_pylit.h
 *	  The lexer of the Python-literal syntax that MADlib's parameters are
 *	  written in: compile_params and fit_params strings (params.c) and the
 *	  grids of generate_model_configs (model_select.c).
 *
 * Tokens:
 *	 STRING  '...' or "..." (the token spans the quotes)
 *	 INT     [+-] digits                       value in i (and f)
 *	 FLOAT   [+-] digits . [digits] [exponent], [+-] . digits [exponent],
 *	         [+-] digits exponent              value in f, always finite
 *	 NAME    [A-Za-z_][A-Za-z0-9_]*            True, False, None included
 *	 PUNCT   one of [ ] { } ( ) , : =          the byte in ch
 *	 OTHER   any other byte, one at a time     the byte in ch
 *	 END     the end of the range
 *	 ERROR   a malformed string or number      problem, problem_at
 * Whitespace (space, \t, \n, \r, \f, \v) separates tokens.  A sign is
 * part of the number it stands before ("- 1" is an invalid number, as in
 * both parsers before this lexer).  inf, nan, hex, octal, binary,
 * underscores in numbers, and string prefixes other than the parser's own
 * u'' are not literals: inf is a NAME, 0x10 an invalid number.
 *
 * Two modes:
 *	 DL_PYLIT_STRICT   Python's rules, for the grids: a string ends on its
 *	                   line; escapes \\ \' \" \n \t \r \xhh (01 to 7f)
 *	                   and backslash-newline; \0 and other NULs are
 *	                   refused; an unknown escape keeps its backslash;
 *	                   an integer may not start with 0 (except 0 itself).
 *	 DL_PYLIT_LENIENT  compile_params and fit_params as MADlib users write
 *	                   them: a string may span lines, a backslash keeps
 *	                   the next byte whatever it is, 007 is 7.
 * In both modes a number must not run into a name or a dot (1x, 1.2.3,
 * 0x10 are invalid numbers), floats must be finite and integers fit in
 * int64.
 *
 * The lexer allocates nothing and never fails: a malformed token is an
 * ERROR token, and the next call carries on after it, so a caller that
 * only wants the brackets and commas (params.c) can read past it.  All
 * positions are byte offsets into s.  Numbers are read with strtod in
 * place, so s must be readable up to a NUL at or after the range's end
 * (every caller passes a C string).
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_pylit.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_PYLIT_H
#define DL_PYLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum DlPylitMode
{
	DL_PYLIT_STRICT,
	DL_PYLIT_LENIENT
} DlPylitMode;

typedef enum DlPylitKind
{
	DL_PYLIT_END,
	DL_PYLIT_STRING,
	DL_PYLIT_INT,
	DL_PYLIT_FLOAT,
	DL_PYLIT_NAME,
	DL_PYLIT_PUNCT,
	DL_PYLIT_OTHER,
	DL_PYLIT_ERROR
} DlPylitKind;

typedef enum DlPylitProblem
{
	DL_PYLIT_NO_PROBLEM,
	DL_PYLIT_UNTERMINATED_STRING,	/* at the opening quote */
	DL_PYLIT_BAD_HEX_ESCAPE,	/* at the backslash (strict) */
	DL_PYLIT_NUL_IN_STRING,		/* at the backslash of \0, or the NUL (strict) */
	DL_PYLIT_INVALID_NUMBER,	/* at the number's first byte */
	DL_PYLIT_LEADING_ZERO,		/* 007 (strict) */
	DL_PYLIT_FLOAT_RANGE,		/* not finite as a double */
	DL_PYLIT_INT_RANGE			/* outside int64; f holds it as a double */
} DlPylitProblem;

typedef struct DlPylitToken
{
	DlPylitKind kind;
	size_t		begin;			/* first byte */
	size_t		end;			/* one past the last byte */
	char		ch;				/* PUNCT, OTHER */
	int64_t		i;				/* INT */
	double		f;				/* INT, FLOAT; ERROR with DL_PYLIT_INT_RANGE */
	DlPylitProblem problem;		/* ERROR */
	size_t		problem_at;		/* ERROR: the offset to report */
} DlPylitToken;

typedef struct DlPylitLexer
{
	const char *s;
	size_t		pos;			/* next byte to read */
	size_t		end;			/* end of the range */
	DlPylitMode mode;
} DlPylitLexer;

/* Lex s[begin, end) in mode.  s must be NUL-terminated at or after end. */
void		dl_pylit_init(DlPylitLexer *lx, const char *s, size_t begin, size_t end,
						  DlPylitMode mode);

/*
 * The next token into *tok (END at the end of the range, again on every
 * later call).  Never fails: see DL_PYLIT_ERROR.
 */
void		dl_pylit_next(DlPylitLexer *lx, DlPylitToken *tok);

/*
 * The description of a problem as the grid parser words it, for example
 * "unterminated string" or "invalid number (an integer may not start
 * with 0)".
 */
const char *dl_pylit_problem_text(DlPylitProblem problem);

/*
 * Decode the STRING token tok of a DL_PYLIT_STRICT lexer of s into out,
 * which needs tok->end - tok->begin bytes; the result is NUL-terminated
 * and holds no other NUL.  Returns its length.
 */
size_t		dl_pylit_string_decode(const char *s, const DlPylitToken *tok, char *out);

/* Whitespace between tokens: space, \t, \n, \r, \f, \v. */
static inline bool
dl_pylit_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Is s[0, n) one NAME token, [A-Za-z_][A-Za-z0-9_]*? */
bool		dl_pylit_is_name(const char *s, size_t n);

#endif							/* DL_PYLIT_H */
