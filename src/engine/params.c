/*-------------------------------------------------------------------------
 *
 * params.c
 *	  Parse MADlib's compile_params and fit_params strings.
 *
 * The grammar is the subset of Python call syntax that MADlib users write:
 *
 *	 params := [item {"," item} [","]]
 *	 item   := key "=" value
 *	 key    := identifier
 *	 value  := 'text' | "text" | None | True | False | number | list | call
 *	 call   := identifier ["(" [item {"," item}] ")"]
 *
 * The tokens are those of the engine's Python-literal lexer (pylit.c) in
 * its lenient mode.  The whole string is first checked for balanced
 * quotes and brackets ((), [], {}); after that every scan can split on
 * top-level commas and '=' without further checks.  A value is the text
 * between its first and last token, so that a message quotes it as the
 * user wrote it.  All positions are offsets into the original string,
 * reported 1-based.  Nothing is allocated: pieces are (begin, end)
 * offsets, and names are copied into small fixed buffers for lookup.
 *
 * IDENTIFICATION
 *	  src/engine/params.c
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
#include "madlib_dl/dl_early_stop.h"
#include "madlib_dl/dl_params.h"
#include "madlib_dl/dl_pylit.h"
#include "madlib_dl/dl_strbuf.h"

#define MAX_NESTING 32			/* deepest bracket nesting accepted */
#define NAME_MAX_LEN 128		/* longest name looked up (buffer size) */
#define SHOW_MAX 120			/* longest piece quoted in a message */

/* The string being parsed, and what to call it in messages. */
typedef struct PCtx
{
	const char *s;
	size_t		len;
	const char *what;			/* "compile_params" or "fit_params" */
	DlError    *err;
} PCtx;

/* Shrink [*b, *e) past leading and trailing whitespace. */
static void
trim(const char *s, size_t *b, size_t *e)
{
	while (*b < *e && dl_pylit_is_space(s[*b]))
		(*b)++;
	while (*e > *b && dl_pylit_is_space(s[*e - 1]))
		(*e)--;
}

/*
 * Length of the piece [b, e) of s to show in a message: capped at
 * SHOW_MAX bytes, without splitting a UTF-8 sequence (messages go to a
 * client that checks the encoding).
 */
static inline int
show_len(const char *s, size_t b, size_t e)
{
	return (int) dl_text_clip(s + b, e - b, SHOW_MAX);
}

/* Does [b, e) spell exactly word? */
static bool
piece_eq(const char *s, size_t b, size_t e, const char *word)
{
	size_t		n = strlen(word);

	return e - b == n && memcmp(s + b, word, n) == 0;
}

/* The only token of [b, e) into *tok; false when there are more or none. */
static bool
single_token(const char *s, size_t b, size_t e, DlPylitToken *tok)
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
static DlStatus
check_balanced(PCtx *c, size_t b, size_t e)
{
	char		stack[MAX_NESTING];
	size_t		where[MAX_NESTING];
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
			if (depth == MAX_NESTING)
			{
				dl_error_set(c->err, DL_ERR_PARSE,
							 "brackets nested more than %d deep at position %zu in %s",
							 MAX_NESTING, tok.begin + 1, c->what);
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
static size_t
scan_to(const char *s, size_t i, size_t e, char target)
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
static int
next_item(PCtx *c, size_t *pos, size_t e, size_t *ib, size_t *ie)
{
	size_t		comma;

	if (*pos > e)
		return 0;
	comma = scan_to(c->s, *pos, e, ',');
	*ib = *pos;
	*ie = comma;
	trim(c->s, ib, ie);
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
static DlStatus
split_key_value(PCtx *c, size_t ib, size_t ie, size_t *kb, size_t *ke,
				size_t *vb, size_t *ve, const char *example)
{
	const char *s = c->s;
	size_t		eq = scan_to(s, ib, ie, '=');

	if (eq == ie)
	{
		dl_error_set(c->err, DL_ERR_PARSE, "expected name=value at position %zu in %s, got \"%.*s\"",
					 ib + 1, c->what, show_len(s, ib, ie), s + ib);
		return dl_error_hint(c->err, "Write each parameter as name=value, for example %s.", example);
	}
	*kb = ib;
	*ke = eq;
	trim(s, kb, ke);
	*vb = eq + 1;
	*ve = ie;
	trim(s, vb, ve);
	if (!dl_pylit_is_name(s + *kb, *ke - *kb))
	{
		dl_error_set(c->err, DL_ERR_PARSE, "invalid parameter name \"%.*s\" at position %zu in %s",
					 show_len(s, *kb, *ke), s + *kb, *kb + 1, c->what);
		return dl_error_hint(c->err, "Write each parameter as name=value, for example %s.", example);
	}
	if (*vb == *ve)
	{
		dl_error_set(c->err, DL_ERR_PARSE, "missing value for \"%.*s\" at position %zu in %s",
					 show_len(s, *kb, *ke), s + *kb, *kb + 1, c->what);
		return dl_error_hint(c->err, "Write each parameter as name=value, for example %s.", example);
	}
	return DL_OK;
}

/* Is [b, e) exactly one quoted string?  Then strip the quotes and trim. */
static bool
unquote(const char *s, size_t *b, size_t *e)
{
	DlPylitToken tok;

	if (single_token(s, *b, *e, &tok) && tok.kind == DL_PYLIT_STRING)
	{
		(*b)++;
		(*e)--;
		trim(s, b, e);
		return true;
	}
	return false;
}

/* Copy [b, e) into buf (NAME_MAX_LEN); false when it does not fit. */
static bool
copy_name(char *buf, const char *s, size_t b, size_t e)
{
	if (e - b >= NAME_MAX_LEN)
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
static bool
parse_double(const char *s, size_t b, size_t e, double *out)
{
	DlPylitToken tok;

	if (!single_token(s, b, e, &tok) ||
		!(tok.kind == DL_PYLIT_INT || tok.kind == DL_PYLIT_FLOAT ||
		  (tok.kind == DL_PYLIT_ERROR && tok.problem == DL_PYLIT_INT_RANGE)) ||
		!isfinite(tok.f))
		return false;
	*out = tok.f;
	return true;
}

/* A decimal integer [+-] digits that fits in int64, one INT token. */
static bool
parse_int64(const char *s, size_t b, size_t e, int64_t *out)
{
	DlPylitToken tok;

	if (!single_token(s, b, e, &tok) || tok.kind != DL_PYLIT_INT)
		return false;
	*out = tok.i;
	return true;
}

static bool
parse_bool(const char *s, size_t b, size_t e, bool *out)
{
	if (piece_eq(s, b, e, "True") || piece_eq(s, b, e, "true"))
		*out = true;
	else if (piece_eq(s, b, e, "False") || piece_eq(s, b, e, "false"))
		*out = false;
	else
		return false;
	return true;
}

/* "invalid value "<v>" for <kind> "<key>"", with a hint. */
static DlStatus
bad_value(PCtx *c, const char *kind, size_t kb, size_t ke, size_t vb, size_t ve,
		  const char *takes)
{
	dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "invalid value \"%.*s\" for %s \"%.*s\"",
				 show_len(c->s, vb, ve), c->s + vb, kind, show_len(c->s, kb, ke), c->s + kb);
	return dl_error_hint(c->err, "%.*s takes %s.", show_len(c->s, kb, ke), c->s + kb, takes);
}

/* ---------------------------------------------------------------------
 * compile_params
 * ---------------------------------------------------------------------
 */

#define COMPILE_EXAMPLE "optimizer='Adam(lr=0.001)'"

typedef enum ArgType
{
	ARG_DOUBLE,
	ARG_BOOL,
	ARG_IGNORED					/* accepted, any value (Keras "name") */
} ArgType;

#define KB(k) (1u << (k))
#define ALL_OPTIM 0x7fu

typedef struct OptimArg
{
	const char *name;
	ArgType		type;
	size_t		offset;			/* into DlOptimConfig */
	unsigned	kinds;			/* bit per DlOptimKind accepting it */
} OptimArg;

static const OptimArg optim_args[] = {
	{"lr", ARG_DOUBLE, offsetof(DlOptimConfig, lr), ALL_OPTIM},
	{"learning_rate", ARG_DOUBLE, offsetof(DlOptimConfig, lr), ALL_OPTIM},
	{"momentum", ARG_DOUBLE, offsetof(DlOptimConfig, momentum), KB(DL_OPTIM_SGD) | KB(DL_OPTIM_RMSPROP)},
	{"nesterov", ARG_BOOL, offsetof(DlOptimConfig, nesterov), KB(DL_OPTIM_SGD)},
	{"beta_1", ARG_DOUBLE, offsetof(DlOptimConfig, beta_1),
	KB(DL_OPTIM_ADAM) | KB(DL_OPTIM_ADAMAX) | KB(DL_OPTIM_NADAM)},
	{"beta_2", ARG_DOUBLE, offsetof(DlOptimConfig, beta_2),
	KB(DL_OPTIM_ADAM) | KB(DL_OPTIM_ADAMAX) | KB(DL_OPTIM_NADAM)},
	{"epsilon", ARG_DOUBLE, offsetof(DlOptimConfig, epsilon), ALL_OPTIM & ~KB(DL_OPTIM_SGD)},
	{"amsgrad", ARG_BOOL, offsetof(DlOptimConfig, amsgrad), KB(DL_OPTIM_ADAM)},
	{"rho", ARG_DOUBLE, offsetof(DlOptimConfig, rho), KB(DL_OPTIM_RMSPROP) | KB(DL_OPTIM_ADADELTA)},
	{"centered", ARG_BOOL, offsetof(DlOptimConfig, centered), KB(DL_OPTIM_RMSPROP)},
	{"initial_accumulator_value", ARG_DOUBLE, offsetof(DlOptimConfig, initial_accumulator_value),
	KB(DL_OPTIM_ADAGRAD)},
	{"schedule_decay", ARG_DOUBLE, offsetof(DlOptimConfig, schedule_decay), KB(DL_OPTIM_NADAM)},
	{"decay", ARG_DOUBLE, offsetof(DlOptimConfig, decay), ALL_OPTIM},
	{"clipnorm", ARG_DOUBLE, offsetof(DlOptimConfig, clipnorm), ALL_OPTIM},
	{"clipvalue", ARG_DOUBLE, offsetof(DlOptimConfig, clipvalue), ALL_OPTIM},
	{"name", ARG_IGNORED, 0, ALL_OPTIM},
};

#define N_OPTIM_ARGS (sizeof(optim_args) / sizeof(optim_args[0]))

/* Hint listing the arguments kind accepts. */
static DlStatus
hint_optim_args(DlError *err, DlOptimKind kind)
{
	char		list[DL_ERROR_MSG_MAX];
	size_t		n = 0;

	list[0] = '\0';
	for (size_t i = 0; i < N_OPTIM_ARGS; i++)
	{
		if (!(optim_args[i].kinds & KB(kind)) || optim_args[i].type == ARG_IGNORED)
			continue;
		n += (size_t) snprintf(list + n, sizeof(list) - n, "%s%s", n > 0 ? ", " : "",
							   optim_args[i].name);
		if (n >= sizeof(list))
			break;
	}
	return dl_error_hint(err, "%s accepts %s.", dl_optim_kind_name(kind), list);
}

/* ---------------------------------------------------------------------
 * Learning-rate schedules: learning_rate=<a Keras LearningRateSchedule>
 *
 *	 Name(args)                 a call, args by position (Keras' order) or
 *	                            by name; Name may carry a dotted prefix
 *	                            (keras.optimizers.schedules.Name)
 *	 {'class_name': 'Name', 'config': {'arg': value, ...}}
 *	                            the dict tf.keras.optimizers.schedules.
 *	                            serialize gives ('module' and
 *	                            'registered_name' are ignored)
 * Name is one of sched_kinds; a schedule's name=None is ignored.
 * ---------------------------------------------------------------------
 */

#define SCHED_EXAMPLE "learning_rate=ExponentialDecay(initial_learning_rate=0.01, decay_steps=1000, decay_rate=0.9)"
#define SCHED_MAX_PARAMS 6

typedef struct SchedKind
{
	const char *name;
	DlLrScheduleKind kind;
	int			n_required;		/* the first n_required params */
	const char *params[SCHED_MAX_PARAMS];	/* in Keras' positional order */
} SchedKind;

static const SchedKind sched_kinds[] = {
	{"ExponentialDecay", DL_LR_EXPONENTIAL, 3,
	{"initial_learning_rate", "decay_steps", "decay_rate", "staircase", "name"}},
	{"InverseTimeDecay", DL_LR_INVERSE_TIME, 3,
	{"initial_learning_rate", "decay_steps", "decay_rate", "staircase", "name"}},
	{"PiecewiseConstantDecay", DL_LR_PIECEWISE, 2, {"boundaries", "values", "name"}},
	{"PolynomialDecay", DL_LR_POLYNOMIAL, 2,
	{"initial_learning_rate", "decay_steps", "end_learning_rate", "power", "cycle", "name"}},
	{"CosineDecay", DL_LR_COSINE, 2,
	{"initial_learning_rate", "decay_steps", "alpha", "name", "warmup_target", "warmup_steps"}},
};

#define N_SCHED_KINDS (sizeof(sched_kinds) / sizeof(sched_kinds[0]))

static DlStatus
sched_unknown(PCtx *c, size_t b, size_t e)
{
	dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "learning-rate schedule \"%.*s\" is not supported",
				 show_len(c->s, b, e), c->s + b);
	return dl_error_hint(c->err, "Supported schedules are ExponentialDecay, InverseTimeDecay, "
						 "PiecewiseConstantDecay, PolynomialDecay and CosineDecay, for example %s.",
						 SCHED_EXAMPLE);
}

/* The schedule kind named [b, e) (its last dotted component), or NULL. */
static const SchedKind *
sched_kind(const char *s, size_t b, size_t e)
{
	size_t		last = b;

	for (size_t i = b; i <= e; i++)
	{
		if (i < e && s[i] != '.')
			continue;
		if (!dl_pylit_is_name(s + last, i - last))
			return NULL;
		if (i < e)
			last = i + 1;
	}
	for (size_t k = 0; k < N_SCHED_KINDS; k++)
		if (piece_eq(s, last, e, sched_kinds[k].name))
			return &sched_kinds[k];
	return NULL;
}

/* A list of 1..max finite numbers [a, b, ...] into out; their count, or -1. */
static int
number_list(PCtx *c, size_t vb, size_t ve, double *out, int max)
{
	size_t		pos,
				ib,
				ie;
	int			n = 0,
				more;

	if (!(c->s[vb] == '[' || c->s[vb] == '(') ||
		scan_to(c->s, vb + 1, ve, c->s[vb] == '[' ? ']' : ')') != ve - 1)
		return -1;
	pos = vb + 1;
	while ((more = next_item(c, &pos, ve - 1, &ib, &ie)) == 1)
		if (n >= max || !parse_double(c->s, ib, ie, &out[n++]))
			return -1;
	return more < 0 || n == 0 ? -1 : n;
}

/* "invalid value "<v>" for argument "<name>" of <kind>", with a hint. */
static DlStatus
sched_bad(PCtx *c, const SchedKind *k, const char *name, size_t vb, size_t ve, const char *takes)
{
	dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "invalid value \"%.*s\" for argument \"%s\" of %s",
				 show_len(c->s, vb, ve), c->s + vb, name, k->name);
	return dl_error_hint(c->err, "%s takes %s.", name, takes);
}

/* Set parameter i of kind k to the value [vb, ve). */
static DlStatus
sched_param(PCtx *c, const SchedKind *k, int i, size_t vb, size_t ve, DlLrSchedule *out)
{
	const char *name = k->params[i];
	const char *s = c->s;
	double		v = 0;
	int			n;

	if (strcmp(name, "name") == 0)
		return DL_OK;
	if (strcmp(name, "staircase") == 0 || strcmp(name, "cycle") == 0)
	{
		if (!parse_bool(s, vb, ve, strcmp(name, "cycle") == 0 ? &out->cycle : &out->staircase))
			return sched_bad(c, k, name, vb, ve, "True or False");
		return DL_OK;
	}
	if (strcmp(name, "boundaries") == 0 || strcmp(name, "values") == 0)
	{
		bool		bounds = strcmp(name, "boundaries") == 0;

		n = number_list(c, vb, ve, bounds ? out->boundaries : out->values,
						DL_LR_MAX_BOUNDARIES + (bounds ? 0 : 1));
		if (n < 0)
			return sched_bad(c, k, name, vb, ve,
							 "a list of at most 32 boundaries (33 values), for example "
							 "boundaries=[1000, 2000], values=[0.01, 0.001, 0.0001]");
		if (bounds)
			out->n_boundaries = n;
		else
			out->n_values = n;
		return DL_OK;
	}
	if (strcmp(name, "warmup_target") == 0 || strcmp(name, "warmup_steps") == 0)
	{
		if (piece_eq(s, vb, ve, "None") || (parse_double(s, vb, ve, &v) && v == 0.0))
			return DL_OK;
		dl_error_set(c->err, DL_ERR_UNSUPPORTED, "%s of CosineDecay is not supported", name);
		return dl_error_hint(c->err, "Leave out warmup_target and warmup_steps; fit's lr_scaling "
							 "has a warm-up of its own.");
	}
	if (!parse_double(s, vb, ve, &v))
		return sched_bad(c, k, name, vb, ve, "a finite number");
	if (strcmp(name, "initial_learning_rate") == 0)
		out->initial = v;
	else if (strcmp(name, "decay_steps") == 0)
		out->decay_steps = v;
	else if (strcmp(name, "decay_rate") == 0)
		out->decay_rate = v;
	else if (strcmp(name, "end_learning_rate") == 0)
		out->end_learning_rate = v;
	else if (strcmp(name, "power") == 0)
		out->power = v;
	else
		out->alpha = v;
	return DL_OK;
}

/* Parameter [kb, ke) of kind k (given twice: an error); its index, or -1. */
static int
sched_param_index(PCtx *c, const SchedKind *k, size_t kb, size_t ke, unsigned *given)
{
	for (int i = 0; i < SCHED_MAX_PARAMS && k->params[i] != NULL; i++)
		if (piece_eq(c->s, kb, ke, k->params[i]))
		{
			if (*given & (1u << i))
			{
				dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "%s gets argument \"%s\" twice",
							 k->name, k->params[i]);
				dl_error_hint(c->err, "Give each argument of the schedule once.");
				return -1;
			}
			*given |= 1u << i;
			return i;
		}
	dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "%s has no argument \"%.*s\"", k->name,
				 show_len(c->s, kb, ke), c->s + kb);
	dl_error_hint(c->err, "Give the arguments Keras' %s takes, for example %s.", k->name,
				  SCHED_EXAMPLE);
	return -1;
}

/* The defaults of kind k, before its arguments. */
static void
sched_defaults(const SchedKind *k, DlLrSchedule *out)
{
	memset(out, 0, sizeof(*out));
	out->kind = k->kind;
	out->end_learning_rate = 0.0001;
	out->power = 1.0;
}

/* After the arguments: the required ones given, the lists agree, the values valid. */
static DlStatus
sched_finish(PCtx *c, const SchedKind *k, unsigned given, DlLrSchedule *out)
{
	for (int i = 0; i < k->n_required; i++)
		if (!(given & (1u << i)))
		{
			dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "%s needs argument \"%s\"", k->name,
						 k->params[i]);
			return dl_error_hint(c->err, "Give the arguments Keras' %s takes, for example %s.",
								 k->name, SCHED_EXAMPLE);
		}
	if (k->kind == DL_LR_PIECEWISE && out->n_values != out->n_boundaries + 1)
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT,
					 "PiecewiseConstantDecay has %d boundaries and %d values", out->n_boundaries,
					 out->n_values);
		return dl_error_hint(c->err, "Give one value more than boundaries, for example "
							 "boundaries=[1000], values=[0.01, 0.001].");
	}
	return dl_lr_schedule_validate(out, c->err);
}

/* Name(args): the call form. */
static DlStatus
sched_call(PCtx *c, size_t vb, size_t ve, size_t paren, DlLrSchedule *out)
{
	const SchedKind *k;
	size_t		nb = vb,
				ne = paren,
				pos,
				ib,
				ie;
	unsigned	given = 0;
	int			more,
				n = 0;
	bool		named = false;
	DlStatus	rc;

	trim(c->s, &nb, &ne);
	if ((k = sched_kind(c->s, nb, ne)) == NULL)
		return sched_unknown(c, nb, ne);
	sched_defaults(k, out);
	pos = paren + 1;
	while ((more = next_item(c, &pos, ve - 1, &ib, &ie)) == 1)
	{
		size_t		kb,
					ke,
					ab = ib,
					ae = ie;
		int			i;

		if (scan_to(c->s, ib, ie, '=') == ie)
		{
			/* positional, before any named one */
			if (named || n >= SCHED_MAX_PARAMS || k->params[n] == NULL)
			{
				dl_error_set(c->err, DL_ERR_PARSE, "unexpected argument \"%.*s\" of %s",
							 show_len(c->s, ib, ie), c->s + ib, k->name);
				return dl_error_hint(c->err, "Name the arguments of the schedule, for example %s.",
									 SCHED_EXAMPLE);
			}
			i = n++;
			given |= 1u << i;
		}
		else
		{
			named = true;
			if ((rc = split_key_value(c, ib, ie, &kb, &ke, &ab, &ae, SCHED_EXAMPLE)) != DL_OK)
				return rc;
			if ((i = sched_param_index(c, k, kb, ke, &given)) < 0)
				return c->err->code;
		}
		if ((rc = sched_param(c, k, i, ab, ae, out)) != DL_OK)
			return rc;
	}
	if (more < 0)
		return c->err->code;
	return sched_finish(c, k, given, out);
}

/* The string key of a dict item "'key': value", unquoted, and its value. */
static DlStatus
dict_item(PCtx *c, size_t ib, size_t ie, size_t *kb, size_t *ke, size_t *vb, size_t *ve)
{
	size_t		colon = scan_to(c->s, ib, ie, ':');

	*kb = ib;
	*ke = colon;
	*vb = colon + 1;
	*ve = ie;
	if (colon < ie)
	{
		trim(c->s, kb, ke);
		trim(c->s, vb, ve);
	}
	if (colon == ie || *vb == *ve || !unquote(c->s, kb, ke))
	{
		dl_error_set(c->err, DL_ERR_PARSE, "schedule entry \"%.*s\" at position %zu in %s is not written 'key': value",
					 show_len(c->s, ib, ie), c->s + ib, ib + 1, c->what);
		return dl_error_hint(c->err, "Write a schedule as Keras serializes it, {'class_name': "
							 "'ExponentialDecay', 'config': {'initial_learning_rate': 0.01, "
							 "'decay_steps': 1000, 'decay_rate': 0.9}}, or as a call: %s.",
							 SCHED_EXAMPLE);
	}
	return DL_OK;
}

/* {'class_name': 'Name', 'config': {...}}: the dict form. */
static DlStatus
sched_dict(PCtx *c, size_t vb, size_t ve, DlLrSchedule *out)
{
	const SchedKind *k = NULL;
	size_t		pos = vb + 1,
				ib,
				ie,
				kb,
				ke,
				ab,
				ae,
				cb = 0,
				ce = 0;
	unsigned	given = 0;
	int			more;
	DlStatus	rc;

	while ((more = next_item(c, &pos, ve - 1, &ib, &ie)) == 1)
	{
		if ((rc = dict_item(c, ib, ie, &kb, &ke, &ab, &ae)) != DL_OK)
			return rc;
		if (piece_eq(c->s, kb, ke, "class_name"))
		{
			if (!unquote(c->s, &ab, &ae) || (k = sched_kind(c->s, ab, ae)) == NULL)
				return sched_unknown(c, ab, ae);
		}
		else if (piece_eq(c->s, kb, ke, "config"))
		{
			cb = ab;
			ce = ae;
		}
		else if (!piece_eq(c->s, kb, ke, "module") && !piece_eq(c->s, kb, ke, "registered_name"))
		{
			dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT,
						 "a learning-rate schedule given as a dict has an unknown key \"%.*s\"",
						 show_len(c->s, kb, ke), c->s + kb);
			return dl_error_hint(c->err, "The keys of the dict are class_name and config (module "
								 "and registered_name are ignored).");
		}
	}
	if (more < 0)
		return c->err->code;
	if (k == NULL || ce == cb || c->s[cb] != '{' || scan_to(c->s, cb + 1, ce, '}') != ce - 1)
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT,
					 "a learning-rate schedule given as a dict needs 'class_name' and a 'config' dict");
		return dl_error_hint(c->err, "Write {'class_name': 'ExponentialDecay', 'config': "
							 "{'initial_learning_rate': 0.01, 'decay_steps': 1000, "
							 "'decay_rate': 0.9}}.");
	}
	sched_defaults(k, out);
	pos = cb + 1;
	while ((more = next_item(c, &pos, ce - 1, &ib, &ie)) == 1)
	{
		int			i;

		if ((rc = dict_item(c, ib, ie, &kb, &ke, &ab, &ae)) != DL_OK)
			return rc;
		if ((i = sched_param_index(c, k, kb, ke, &given)) < 0)
			return c->err->code;
		if ((rc = sched_param(c, k, i, ab, ae, out)) != DL_OK)
			return rc;
	}
	if (more < 0)
		return c->err->code;
	return sched_finish(c, k, given, out);
}

/*
 * Is the learning_rate value [vb, ve) a schedule (a call or a dict)?
 * Then parse it into cfg (lr becomes its value at step 0) and set *is.
 */
static DlStatus
parse_lr_schedule(PCtx *c, size_t vb, size_t ve, DlOptimConfig *cfg, bool *is)
{
	size_t		paren = scan_to(c->s, vb, ve, '(');
	DlLrSchedule sch;
	DlStatus	rc;

	*is = false;
	if (c->s[vb] == '{' && scan_to(c->s, vb + 1, ve, '}') == ve - 1)
		rc = sched_dict(c, vb, ve, &sch);
	else if (paren > vb && paren < ve && scan_to(c->s, paren + 1, ve, ')') == ve - 1)
		rc = sched_call(c, vb, ve, paren, &sch);
	else
		return DL_OK;
	if (rc != DL_OK)
		return rc;
	*is = true;
	cfg->schedule = sch;
	cfg->lr = dl_lr_schedule_value(&sch, 0);
	return DL_OK;
}

/* One name=value argument inside the optimizer call. */
static DlStatus
parse_optim_arg(PCtx *c, size_t ib, size_t ie, DlOptimConfig *cfg)
{
	const char *s = c->s;
	size_t		kb,
				ke,
				vb,
				ve;
	const OptimArg *arg = NULL;
	DlStatus	rc;

	if (scan_to(s, ib, ie, '=') == ie)
	{
		dl_error_set(c->err, DL_ERR_PARSE,
					 "optimizer argument \"%.*s\" at position %zu in %s is not written as name=value",
					 show_len(s, ib, ie), s + ib, ib + 1, c->what);
		return dl_error_hint(c->err, "Name every optimizer argument, for example "
							 "optimizer='SGD(lr=0.01, momentum=0.9)'.");
	}
	rc = split_key_value(c, ib, ie, &kb, &ke, &vb, &ve, "optimizer='SGD(lr=0.01, momentum=0.9)'");
	if (rc != DL_OK)
		return rc;
	for (size_t i = 0; i < N_OPTIM_ARGS; i++)
		if (piece_eq(s, kb, ke, optim_args[i].name))
			arg = &optim_args[i];
	if (arg == NULL)
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "optimizer argument \"%.*s\" is not supported",
					 show_len(s, kb, ke), s + kb);
		return hint_optim_args(c->err, cfg->kind);
	}
	if (!(arg->kinds & KB(cfg->kind)))
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "optimizer argument \"%s\" is not accepted by %s",
					 arg->name, dl_optim_kind_name(cfg->kind));
		return hint_optim_args(c->err, cfg->kind);
	}
	if (arg->offset == offsetof(DlOptimConfig, lr) && arg->type == ARG_DOUBLE)
	{
		bool		is_schedule;

		if ((rc = parse_lr_schedule(c, vb, ve, cfg, &is_schedule)) != DL_OK)
			return rc;
		if (is_schedule)
			return DL_OK;
		cfg->schedule.kind = DL_LR_CONSTANT;	/* the last learning rate given wins */
	}
	switch (arg->type)
	{
		case ARG_DOUBLE:
			{
				double	   *field = (double *) ((char *) cfg + arg->offset);

				if (arg->offset == offsetof(DlOptimConfig, epsilon) && piece_eq(s, vb, ve, "None"))
					*field = 1e-7;	/* Keras: None means backend epsilon */
				else if (!parse_double(s, vb, ve, field))
					return bad_value(c, "optimizer argument", kb, ke, vb, ve,
									 "a finite number, for example 0.001");
			}
			break;
		case ARG_BOOL:
			if (!parse_bool(s, vb, ve, (bool *) ((char *) cfg + arg->offset)))
				return bad_value(c, "optimizer argument", kb, ke, vb, ve, "True or False");
			break;
		case ARG_IGNORED:
			break;
	}
	return DL_OK;
}

/* optimizer='Name(args)' or Name(args) or 'Name' or Name. */
static DlStatus
parse_optimizer(PCtx *c, size_t vb, size_t ve, DlOptimConfig *cfg)
{
	const char *s = c->s;
	size_t		nb,
				ne,
				pos,
				ib,
				ie;
	char		name[NAME_MAX_LEN];
	DlOptimKind kind;
	DlStatus	rc;
	int			more;
	DlPylitLexer lx;
	DlPylitToken name_tok,
				paren;

	unquote(s, &vb, &ve);
	dl_pylit_init(&lx, s, vb, ve, DL_PYLIT_LENIENT);
	dl_pylit_next(&lx, &name_tok);
	dl_pylit_next(&lx, &paren);
	if (name_tok.kind != DL_PYLIT_NAME ||
		(paren.kind != DL_PYLIT_END &&
		 (paren.kind != DL_PYLIT_PUNCT || paren.ch != '(' ||
		  scan_to(s, paren.end, ve, ')') != ve - 1)))
	{
		dl_error_set(c->err, DL_ERR_PARSE, "invalid optimizer \"%.*s\" at position %zu in %s",
					 show_len(s, vb, ve), s + vb, vb + 1, c->what);
		return dl_error_hint(c->err, "Write the optimizer as a name or a call, for example "
							 "optimizer='SGD(lr=0.01, momentum=0.9)'.");
	}
	nb = name_tok.begin;
	ne = name_tok.end;
	if (!copy_name(name, s, nb, ne))
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "optimizer \"%.*s\" is not supported",
					 show_len(s, nb, ne), s + nb);
		return dl_error_hint(c->err, "Supported optimizers are SGD, Adam, RMSprop, Adagrad, "
							 "Adadelta, Adamax and Nadam.");
	}
	rc = dl_optim_kind_from_name(name, &kind, c->err);
	if (rc != DL_OK)
		return rc;
	dl_optim_config_default(cfg, kind);
	if (paren.kind != DL_PYLIT_END)
	{
		/* arguments between paren and s[ve - 1] == ')' */
		pos = paren.end;
		while ((more = next_item(c, &pos, ve - 1, &ib, &ie)) == 1)
		{
			rc = parse_optim_arg(c, ib, ie, cfg);
			if (rc != DL_OK)
				return rc;
		}
		if (more < 0)
			return c->err->code;
	}
	return dl_optim_config_validate(cfg, c->err);
}

/* A loss or metric name: quoted or bare, copied into buf. */
static bool
name_value(const char *s, size_t vb, size_t ve, char *buf)
{
	unquote(s, &vb, &ve);
	return copy_name(buf, s, vb, ve);
}

static DlStatus
parse_loss(PCtx *c, size_t vb, size_t ve, DlLossKind *out)
{
	char		name[NAME_MAX_LEN];

	if (!name_value(c->s, vb, ve, name))
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "loss function \"%.*s\" is not supported",
					 show_len(c->s, vb, ve), c->s + vb);
		return dl_error_hint(c->err, "Supported losses are categorical_crossentropy, "
							 "sparse_categorical_crossentropy, binary_crossentropy, "
							 "mean_squared_error (mse) and mean_absolute_error (mae).");
	}
	return dl_loss_from_name(name, out, c->err);
}

/*
 * Is name MADlib's top_<k>_accuracy (load_top_k_accuracy_function), k a
 * decimal 1 .. INT_MAX without a leading zero?  Then *k is k.
 */
static bool
top_k_name(const char *name, int *k)
{
	const char *prefix = "top_";
	const char *suffix = "_accuracy";
	size_t		n = strlen(name);
	size_t		np = strlen(prefix);
	size_t		ns = strlen(suffix);
	int64_t		v = 0;

	if (n <= np + ns || strncmp(name, prefix, np) != 0 || strcmp(name + n - ns, suffix) != 0 ||
		name[np] == '0')
		return false;
	for (size_t i = np; i < n - ns; i++)
	{
		if (name[i] < '0' || name[i] > '9')
			return false;
		v = v * 10 + (name[i] - '0');
		if (v > INT_MAX)
			return false;
	}
	*k = (int) v;
	return true;
}

/*
 * metrics=None, [], ['name'], or a bare 'name'.  MADlib's top_<k>_accuracy
 * is top-k categorical accuracy with that k (p->top_k, p->top_k_named).
 */
static DlStatus
parse_metrics(PCtx *c, size_t vb, size_t ve, DlCompileParams *p)
{
	DlMetricKind *out = &p->metric;
	const char *s = c->s;
	char		name[NAME_MAX_LEN];
	size_t		pos,
				ib,
				ie,
				first_b = 0,
				first_e = 0;
	int			n = 0,
				more;

	*out = DL_METRIC_NONE;
	p->top_k = 5;
	p->top_k_named = false;
	if (piece_eq(s, vb, ve, "None"))
		return DL_OK;
	if (s[vb] == '[' && scan_to(s, vb + 1, ve, ']') == ve - 1)
	{
		pos = vb + 1;
		while ((more = next_item(c, &pos, ve - 1, &ib, &ie)) == 1)
		{
			if (n++ == 0)
			{
				first_b = ib;
				first_e = ie;
			}
		}
		if (more < 0)
			return c->err->code;
		if (n == 0)
			return DL_OK;
		if (n > 1)
		{
			dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "only one metric is supported, got %d: %.*s",
						 n, show_len(s, vb, ve), s + vb);
			return dl_error_hint(c->err, "Pass at most one metric, for example metrics=['accuracy'].");
		}
		vb = first_b;
		ve = first_e;
	}
	else if (!(s[vb] == '\'' || s[vb] == '"'))
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT,
					 "invalid value \"%.*s\" for compile parameter \"metrics\"",
					 show_len(s, vb, ve), s + vb);
		return dl_error_hint(c->err, "Write metrics as a list with at most one name, for example "
							 "metrics=['accuracy'].");
	}
	if (!name_value(s, vb, ve, name))
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "metric \"%.*s\" is not supported",
					 show_len(s, vb, ve), s + vb);
		return dl_error_hint(c->err, "Supported metrics are accuracy (acc), categorical_accuracy, "
							 "sparse_categorical_accuracy, binary_accuracy, "
							 "top_k_categorical_accuracy, top_<k>_accuracy, mae and mse.");
	}
	p->top_k = 5;
	p->top_k_named = false;
	if (top_k_name(name, &p->top_k))
	{
		p->top_k_named = true;
		*out = DL_METRIC_TOP_K_CATEGORICAL_ACCURACY;
		return DL_OK;
	}
	return dl_metric_from_name(name, out, c->err);
}

/* ---------------------------------------------------------------------
 * Per-output values: loss=[...] / {...} and loss_weights=[...] / {...}
 * ---------------------------------------------------------------------
 */

static DlStatus check_metric_loss(const DlCompileParams *p, DlError *err);

/* Parses entry k's value [vb, ve) of a per-output list or dict into out. */
typedef DlStatus (*OutputEntryFn) (PCtx *c, size_t vb, size_t ve, int k, DlOutputValues *out);

static DlStatus
loss_entry(PCtx *c, size_t vb, size_t ve, int k, DlOutputValues *out)
{
	return parse_loss(c, vb, ve, &out->loss[k]);
}

static DlStatus
weight_entry(PCtx *c, size_t vb, size_t ve, int k, DlOutputValues *out)
{
	if (!parse_double(c->s, vb, ve, &out->weight[k]) || !(out->weight[k] >= 0.0))
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT,
					 "invalid loss weight \"%.*s\" in compile parameter \"loss_weights\"",
					 show_len(c->s, vb, ve), c->s + vb);
		return dl_error_hint(c->err, "Give each output a finite weight >= 0, for example "
							 "loss_weights=[1.0, 0.5].");
	}
	return DL_OK;
}

/*
 * The output name of a dict entry's key [kb, ke): a quoted string or a
 * bare name, without quotes, backslashes or control characters (so that
 * the canonical string quotes it back), into out->names[k].
 */
static DlStatus
output_name(PCtx *c, const char *key, size_t kb, size_t ke, int k, DlOutputValues *out)
{
	bool		ok = unquote(c->s, &kb, &ke) || dl_pylit_is_name(c->s + kb, ke - kb);

	for (size_t i = kb; ok && i < ke; i++)
		ok = c->s[i] != '\'' && c->s[i] != '"' && c->s[i] != '\\' && (unsigned char) c->s[i] >= 0x20;
	if (!ok || kb == ke || ke - kb >= DL_NAME_MAX)
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "invalid output name \"%.*s\" in compile parameter \"%s\"",
					 show_len(c->s, kb, ke), c->s + kb, key);
		return dl_error_hint(c->err, "Key the dict by the names of the model's output layers, "
							 "for example %s={'cls': ..., 'reg': ...}.", key);
	}
	memcpy(out->names[k], c->s + kb, ke - kb);
	out->names[k][ke - kb] = '\0';
	for (int j = 0; j < k; j++)
		if (strcmp(out->names[j], out->names[k]) == 0)
		{
			dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "output \"%s\" appears twice in compile parameter \"%s\"",
						 out->names[k], key);
			return dl_error_hint(c->err, "Name each output once.");
		}
	return DL_OK;
}

/*
 * key=[v, ...] or key={'name': v, ...} (the caller has seen the bracket):
 * one to DL_MAX_IO entries, each parsed by one.
 */
static DlStatus
parse_output_values(PCtx *c, const char *key, size_t vb, size_t ve, OutputEntryFn one,
					DlOutputValues *out)
{
	bool		dict = c->s[vb] == '{';
	size_t		pos = vb + 1,
				ib,
				ie;
	int			more;
	DlStatus	rc;

	memset(out, 0, sizeof(*out));
	out->by_name = dict;
	while ((more = next_item(c, &pos, ve - 1, &ib, &ie)) == 1)
	{
		if (out->n == DL_MAX_IO)
		{
			dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT,
						 "compile parameter \"%s\" has more than %d entries", key, DL_MAX_IO);
			return dl_error_hint(c->err, "Give one entry per output; a model has at most %d outputs.",
								 DL_MAX_IO);
		}
		if (dict)
		{
			size_t		colon = scan_to(c->s, ib, ie, ':');
			size_t		kb = ib,
						ke = colon;

			if (colon == ie)
			{
				dl_error_set(c->err, DL_ERR_PARSE, "expected 'output name': value at position %zu in %s, got \"%.*s\"",
							 ib + 1, c->what, show_len(c->s, ib, ie), c->s + ib);
				return dl_error_hint(c->err, "Write %s as a dict keyed by output names, for example "
									 "%s={'cls': ..., 'reg': ...}.", key, key);
			}
			trim(c->s, &kb, &ke);
			if ((rc = output_name(c, key, kb, ke, out->n, out)) != DL_OK)
				return rc;
			ib = colon + 1;
			trim(c->s, &ib, &ie);
		}
		if ((rc = one(c, ib, ie, out->n, out)) != DL_OK)
			return rc;
		out->n++;
	}
	if (more < 0)
		return c->err->code;
	if (out->n == 0)
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "compile parameter \"%s\" has no entry", key);
		return dl_error_hint(c->err, "Give one entry per output of the model.");
	}
	return DL_OK;
}

/* Is [vb, ve) a bracketed list or dict? */
static bool
is_list_or_dict(const char *s, size_t vb, size_t ve)
{
	return ve - vb >= 2 && ((s[vb] == '[' && scan_to(s, vb + 1, ve, ']') == ve - 1) ||
							(s[vb] == '{' && scan_to(s, vb + 1, ve, '}') == ve - 1));
}

/* loss='name', or a list or dict of names; p->loss is the first. */
static DlStatus
parse_losses(PCtx *c, size_t vb, size_t ve, DlCompileParams *p)
{
	DlStatus	rc;

	memset(&p->losses, 0, sizeof(p->losses));
	if (!is_list_or_dict(c->s, vb, ve))
		return parse_loss(c, vb, ve, &p->loss);
	rc = parse_output_values(c, "loss", vb, ve, loss_entry, &p->losses);
	if (rc == DL_OK)
		p->loss = p->losses.loss[0];
	return rc;
}

/* loss_weights=None, or a list or dict of weights. */
static DlStatus
parse_loss_weights(PCtx *c, size_t vb, size_t ve, DlCompileParams *p)
{
	memset(&p->loss_weights, 0, sizeof(p->loss_weights));
	if (piece_eq(c->s, vb, ve, "None"))
		return DL_OK;
	if (!is_list_or_dict(c->s, vb, ve))
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT,
					 "invalid value \"%.*s\" for compile parameter \"loss_weights\"",
					 show_len(c->s, vb, ve), c->s + vb);
		return dl_error_hint(c->err, "Write loss_weights as a list, one weight per output, or a "
							 "dict keyed by output names: loss_weights=[1.0, 0.5].");
	}
	return parse_output_values(c, "loss_weights", vb, ve, weight_entry, &p->loss_weights);
}

/*
 * Entry of v for output k named name: the list's k-th, the dict's entry
 * for name, or -1 (a dict without it).  DL_ERR_INVALID_ARGUMENT for a
 * list of another length, and for a dict key that names no output.
 */
static DlStatus
output_entry(const DlOutputValues *v, const char *key, const DlModelSpec *spec, int k, int *entry,
			 DlError *err)
{
	*entry = -1;
	if (!v->by_name)
	{
		if (v->n != spec->n_outputs)
		{
			dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "compile parameter \"%s\" has %d entries, but the model has %d outputs",
						 key, v->n, spec->n_outputs);
			return dl_error_hint(err, "Give one entry per output, in the order of the model's outputs, "
								 "or a dict keyed by the output layers' names.");
		}
		*entry = k;
		return DL_OK;
	}
	for (int i = 0; i < v->n; i++)
	{
		bool		known = false;

		for (int j = 0; j < spec->n_outputs && !known; j++)
			known = strcmp(v->names[i], spec->layers[spec->outputs[j]].name) == 0;
		if (!known)
		{
			dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "compile parameter \"%s\" names \"%s\", which is not an output of the model",
						 key, v->names[i]);
			return dl_error_hint(err, "Key the dict by the names of the model's output layers.");
		}
		if (strcmp(v->names[i], spec->layers[spec->outputs[k]].name) == 0)
			*entry = i;
	}
	return DL_OK;
}

DlStatus
dl_compile_params_outputs(const DlCompileParams *p, const DlModelSpec *spec, DlOutputConfig *out,
						  DlError *err)
{
	for (int k = 0; k < spec->n_outputs; k++)
	{
		const char *name = spec->layers[spec->outputs[k]].name;
		DlCompileParams one = *p;
		int			e;
		DlStatus	rc;

		out[k].loss = p->loss;
		out[k].loss_weight = 1.0;
		out[k].metric = p->metric;
		out[k].top_k = p->top_k;
		if (p->losses.n > 0)
		{
			if ((rc = output_entry(&p->losses, "loss", spec, k, &e, err)) != DL_OK)
				return rc;
			if (e < 0)
			{
				dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "compile parameter \"loss\" gives no loss for output \"%s\"",
							 name);
				return dl_error_hint(err, "Give every output of the model a loss.");
			}
			out[k].loss = p->losses.loss[e];
		}
		if (p->loss_weights.n > 0)
		{
			if ((rc = output_entry(&p->loss_weights, "loss_weights", spec, k, &e, err)) != DL_OK)
				return rc;
			if (e >= 0)
				out[k].loss_weight = p->loss_weights.weight[e];
		}
		one.loss = out[k].loss;
		if ((rc = check_metric_loss(&one, err)) != DL_OK)
		{
			dl_error_prefix(err, "output \"%s\"", name);
			return rc;
		}
	}
	return DL_OK;
}

const char *
dl_compile_params_metric_name(const DlCompileParams *p, char *buf, size_t len)
{
	if (p->metric == DL_METRIC_TOP_K_CATEGORICAL_ACCURACY && p->top_k_named && len > 0)
	{
		snprintf(buf, len, "top_%d_accuracy", p->top_k);
		return buf;
	}
	return dl_metric_name(p->metric);
}

/*
 * Metrics read y_true as (B, K) except the sparse ones, which read class
 * indices (B, 1): refuse pairs where the loss's y_true has the other shape.
 */
static DlStatus
check_metric_loss(const DlCompileParams *p, DlError *err)
{
	bool		sparse_loss = p->loss == DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY;
	bool		sparse_metric = p->metric == DL_METRIC_SPARSE_CATEGORICAL_ACCURACY;

	if (p->metric == DL_METRIC_NONE || p->metric == DL_METRIC_ACCURACY)
		return DL_OK;
	if (sparse_loss != sparse_metric)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "metric \"%s\" cannot be used with loss \"%s\"",
					 dl_metric_name(p->metric), dl_loss_name(p->loss));
		return dl_error_hint(err, sparse_loss ?
							 "With sparse_categorical_crossentropy use metrics=['accuracy'] or "
							 "['sparse_categorical_accuracy']." :
							 "Use sparse_categorical_accuracy only with "
							 "sparse_categorical_crossentropy; metrics=['accuracy'] picks the "
							 "right accuracy for any loss.");
	}
	return DL_OK;
}

/*
 * Parse compile_params into out.  optimizer and loss are required; the
 * last duplicate key wins.  out is fully written on success only.
 */
DlStatus
dl_compile_params_parse(const char *s, DlCompileParams *out, DlError *err)
{
	DlError		scratch;
	PCtx		c = {s != NULL ? s : "", s != NULL ? strlen(s) : 0, "compile_params", err != NULL ? err : &scratch};
	DlCompileParams p;
	bool		have_optimizer = false,
				have_loss = false;
	size_t		pos = 0,
				ib,
				ie,
				kb,
				ke,
				vb,
				ve;
	int			more;
	DlStatus	rc;

	err = c.err;				/* never NULL from here on */
	if (dl_text_check_cap("compile_params", c.len, DL_PARAMS_MAX_BYTES, err) != DL_OK)
		return DL_ERR_LIMIT;
	memset(&p, 0, sizeof(p));
	p.loss = DL_LOSS_CATEGORICAL_CROSSENTROPY;
	p.metric = DL_METRIC_NONE;
	p.top_k = 5;
	dl_optim_config_default(&p.optim, DL_OPTIM_ADAM);

	rc = check_balanced(&c, 0, c.len);
	if (rc != DL_OK)
		return rc;
	while ((more = next_item(&c, &pos, c.len, &ib, &ie)) == 1)
	{
		rc = split_key_value(&c, ib, ie, &kb, &ke, &vb, &ve, COMPILE_EXAMPLE);
		if (rc != DL_OK)
			return rc;
		if (piece_eq(c.s, kb, ke, "optimizer"))
		{
			rc = parse_optimizer(&c, vb, ve, &p.optim);
			have_optimizer = true;
		}
		else if (piece_eq(c.s, kb, ke, "loss"))
		{
			rc = parse_losses(&c, vb, ve, &p);
			have_loss = true;
		}
		else if (piece_eq(c.s, kb, ke, "metrics"))
			rc = parse_metrics(&c, vb, ve, &p);
		else if (piece_eq(c.s, kb, ke, "loss_weights"))
			rc = parse_loss_weights(&c, vb, ve, &p);
		else if (piece_eq(c.s, kb, ke, "weighted_metrics"))
			rc = DL_OK;			/* accepted for MADlib compatibility, ignored */
		else if (piece_eq(c.s, kb, ke, "sample_weight_mode"))
		{
			size_t		b = vb,
						e = ve;

			unquote(c.s, &b, &e);
			if (!piece_eq(c.s, b, e, "None"))
			{
				dl_error_set(err, DL_ERR_UNSUPPORTED, "sample_weight_mode \"%.*s\" is not supported",
							 show_len(c.s, vb, ve), c.s + vb);
				return dl_error_hint(err, "Remove sample_weight_mode or set it to None.");
			}
		}
		else
		{
			dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "compile parameter \"%.*s\" is not supported",
						 show_len(c.s, kb, ke), c.s + kb);
			return dl_error_hint(err, "Accepted compile parameters are optimizer, loss, metrics, "
								 "loss_weights, weighted_metrics and sample_weight_mode.");
		}
		if (rc != DL_OK)
			return rc;
	}
	if (more < 0)
		return c.err->code;
	if (!have_optimizer)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "optimizer is a required compile parameter");
		return dl_error_hint(err, "Add an optimizer to compile_params, for example "
							 "loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', "
							 "metrics=['accuracy'].");
	}
	if (!have_loss)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "loss is a required compile parameter");
		return dl_error_hint(err, "Add a loss to compile_params, for example "
							 "loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', "
							 "metrics=['accuracy'].");
	}
	rc = check_metric_loss(&p, err);
	if (rc != DL_OK)
		return rc;
	*out = p;
	return DL_OK;
}

/* ---------------------------------------------------------------------
 * fit_params
 * ---------------------------------------------------------------------
 */

#define FIT_EXAMPLE "batch_size=128"

/* An integer fit parameter in [lo, hi]. */
static DlStatus
fit_int(PCtx *c, size_t kb, size_t ke, size_t vb, size_t ve, int64_t lo, int64_t hi,
		int64_t *out)
{
	if (!parse_int64(c->s, vb, ve, out))
		return bad_value(c, "fit parameter", kb, ke, vb, ve, "an integer");
	if (*out < lo || *out > hi)
	{
		if (hi == lo)
			dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "%.*s must be %lld, got %lld",
						 show_len(c->s, kb, ke), c->s + kb, (long long) lo, (long long) *out);
		else
			dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "%.*s must be between %lld and %lld, got %lld",
						 show_len(c->s, kb, ke), c->s + kb, (long long) lo, (long long) hi,
						 (long long) *out);
		return dl_error_hint(c->err, "Change %.*s in fit_params.", show_len(c->s, kb, ke), c->s + kb);
	}
	return DL_OK;
}

/*
 * class_weight=None, {} or {class: weight, ...}, as Keras takes it:
 * classes are integers 0 .. DL_CLASS_WEIGHT_MAX - 1, each at most once;
 * weights are finite numbers >= 0 that fit a float.  Sets
 * p->n_class_weight (0 for None and {}) and p->class_weight.
 */
static DlStatus
parse_class_weight(PCtx *c, size_t kb, size_t ke, size_t vb, size_t ve, DlFitParams *p)
{
	const char *s = c->s;
	size_t		pos,
				ib,
				ie;
	int			more;

	p->n_class_weight = 0;
	if (piece_eq(s, vb, ve, "None"))
		return DL_OK;
	if (!(s[vb] == '{' && scan_to(s, vb + 1, ve, '}') == ve - 1))
		return bad_value(c, "fit parameter", kb, ke, vb, ve,
						 "None or a dict from class index to weight, for example "
						 "class_weight={0: 1.0, 1: 5.0}");
	pos = vb + 1;
	while ((more = next_item(c, &pos, ve - 1, &ib, &ie)) == 1)
	{
		size_t		colon = scan_to(s, ib, ie, ':');
		size_t		cb = ib,
					ce = colon,
					wb = colon + 1,
					we = ie;
		int64_t		cls;
		double		w;

		if (colon == ie)
		{
			dl_error_set(c->err, DL_ERR_PARSE,
						 "class_weight entry \"%.*s\" at position %zu in %s is not written class: weight",
						 show_len(s, ib, ie), s + ib, ib + 1, c->what);
			return dl_error_hint(c->err, "Write class_weight as a dict, for example "
								 "class_weight={0: 1.0, 1: 5.0}.");
		}
		trim(s, &cb, &ce);
		trim(s, &wb, &we);
		if (!parse_int64(s, cb, ce, &cls) || cls < 0 || cls >= DL_CLASS_WEIGHT_MAX)
		{
			dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT,
						 "class_weight key \"%.*s\" is not a class index from 0 to %d",
						 show_len(s, cb, ce), s + cb, DL_CLASS_WEIGHT_MAX - 1);
			return dl_error_hint(c->err, "The keys of class_weight are the classes' indexes: "
								 "the position of each class in the dependent variable's "
								 "class values, from 0.");
		}
		if (!parse_double(s, wb, we, &w) || w < 0.0 || w > FLT_MAX)
		{
			dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT,
						 "class_weight of class %lld is \"%.*s\", not a finite number >= 0",
						 (long long) cls, show_len(s, wb, we), s + wb);
			return dl_error_hint(c->err, "Give each class a weight such as 1.0 (unchanged), "
								 "5.0 (five times the loss) or 0 (ignored).");
		}
		if (cls < p->n_class_weight && !isnan(p->class_weight[cls]))
		{
			dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "class_weight gives class %lld twice",
						 (long long) cls);
			return dl_error_hint(c->err, "Give each class one weight.");
		}
		while (p->n_class_weight <= cls)
			p->class_weight[p->n_class_weight++] = NAN;
		p->class_weight[cls] = (float) w;
	}
	if (more < 0)
		return c->err->code;
	return DL_OK;
}

DlStatus
dl_fit_params_check_classes(const DlFitParams *p, DlLossKind loss, int64_t K, DlError *err)
{
	int64_t		n = (K == 1 && loss != DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY) ? 2 : K;
	DlError		scratch;

	if (err == NULL)
		err = &scratch;		/* so dl_error_hint returns the code */
	if (p->n_class_weight == 0)
		return DL_OK;
	if (p->n_class_weight > n)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
					 "class_weight names class %d, but the model has %lld classes (0 to %lld)",
					 p->n_class_weight - 1, (long long) n, (long long) n - 1);
		return dl_error_hint(err, "Give weights only for the classes 0 to %lld of the model.",
							 (long long) n - 1);
	}
	for (int64_t cls = 0; cls < n; cls++)
	{
		if (cls < p->n_class_weight && !isnan(p->class_weight[cls]))
			continue;
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
					 "class_weight gives no weight for class %lld of the model's %lld classes",
					 (long long) cls, (long long) n);
		return dl_error_hint(err, "Give a weight for every class 0 to %lld (1.0 leaves a class "
							 "as it is): Keras needs one for each class in the data.",
							 (long long) n - 1);
	}
	return DL_OK;
}

/*
 * Parse fit_params into out; NULL, empty or blank gives the defaults.
 * out is fully written on success only.
 */
DlStatus
dl_fit_params_parse(const char *s, DlFitParams *out, DlError *err)
{
	DlError		scratch;
	PCtx		c = {s != NULL ? s : "", s != NULL ? strlen(s) : 0, "fit_params", err != NULL ? err : &scratch};
	DlFitParams p;
	size_t		pos = 0,
				ib,
				ie,
				kb,
				ke,
				vb,
				ve;
	int			more;
	int64_t		v;
	DlStatus	rc;

	err = c.err;				/* never NULL from here on */
	if (dl_text_check_cap("fit_params", c.len, DL_PARAMS_MAX_BYTES, err) != DL_OK)
		return DL_ERR_LIMIT;
	memset(&p, 0, sizeof(p));
	p.batch_size = DL_DEFAULT_BATCH_SIZE;
	p.epochs = 1;
	p.shuffle = true;
	p.has_seed = false;
	p.seed = DL_DEFAULT_SEED;
	p.verbose = 0;
	p.initial_epoch = 0;
	p.n_class_weight = 0;

	rc = check_balanced(&c, 0, c.len);
	if (rc != DL_OK)
		return rc;
	while ((more = next_item(&c, &pos, c.len, &ib, &ie)) == 1)
	{
		rc = split_key_value(&c, ib, ie, &kb, &ke, &vb, &ve, FIT_EXAMPLE);
		if (rc != DL_OK)
			return rc;
		if (piece_eq(c.s, kb, ke, "batch_size"))
		{
			rc = fit_int(&c, kb, ke, vb, ve, 1, INT64_MAX, &v);
			p.batch_size = v;
		}
		else if (piece_eq(c.s, kb, ke, "epochs"))
		{
			rc = fit_int(&c, kb, ke, vb, ve, 1, INT_MAX, &v);
			p.epochs = (int) v;
		}
		else if (piece_eq(c.s, kb, ke, "seed"))
		{
			rc = fit_int(&c, kb, ke, vb, ve, 0, INT64_MAX, &v);
			p.seed = (uint64_t) v;
			p.has_seed = true;
		}
		else if (piece_eq(c.s, kb, ke, "verbose"))
		{
			rc = fit_int(&c, kb, ke, vb, ve, INT_MIN, INT_MAX, &v);
			p.verbose = (int) v;
		}
		else if (piece_eq(c.s, kb, ke, "initial_epoch"))
		{
			rc = fit_int(&c, kb, ke, vb, ve, 0, INT_MAX, &v);
			p.initial_epoch = (int) v;
		}
		else if (piece_eq(c.s, kb, ke, "class_weight"))
			rc = parse_class_weight(&c, kb, ke, vb, ve, &p);
		else if (piece_eq(c.s, kb, ke, "shuffle"))
		{
			if (!parse_bool(c.s, vb, ve, &p.shuffle))
				return bad_value(&c, "fit parameter", kb, ke, vb, ve, "True or False");
		}
		else if (piece_eq(c.s, kb, ke, "steps_per_epoch"))
		{
			if (!piece_eq(c.s, vb, ve, "None"))
			{
				dl_error_set(err, DL_ERR_UNSUPPORTED, "fit parameter \"%.*s\" is only accepted as None, got \"%.*s\"",
							 show_len(c.s, kb, ke), c.s + kb, show_len(c.s, vb, ve), c.s + vb);
				return dl_error_hint(err, "Remove %.*s from fit_params.", show_len(c.s, kb, ke), c.s + kb);
			}
		}
		else if (piece_eq(c.s, kb, ke, "validation_split") ||
				 piece_eq(c.s, kb, ke, "validation_data") ||
				 piece_eq(c.s, kb, ke, "validation_steps") ||
				 piece_eq(c.s, kb, ke, "validation_freq"))
		{
			dl_error_set(err, DL_ERR_UNSUPPORTED, "fit parameter \"%.*s\" is not supported",
						 show_len(c.s, kb, ke), c.s + kb);
			return dl_error_hint(err, "Remove %.*s from fit_params and pass a validation table "
								 "to madlib_keras_fit instead.", show_len(c.s, kb, ke), c.s + kb);
		}
		else if (piece_eq(c.s, kb, ke, "sample_weight") ||
				 piece_eq(c.s, kb, ke, "callbacks"))
		{
			dl_error_set(err, DL_ERR_UNSUPPORTED, "fit parameter \"%.*s\" is not supported",
						 show_len(c.s, kb, ke), c.s + kb);
			return dl_error_hint(err, "Remove %.*s from fit_params.", show_len(c.s, kb, ke), c.s + kb);
		}
		else
		{
			dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "fit parameter \"%.*s\" is not supported",
						 show_len(c.s, kb, ke), c.s + kb);
			return dl_error_hint(err, "Accepted fit parameters are batch_size, epochs, shuffle, "
								 "seed, verbose, initial_epoch, class_weight and "
								 "steps_per_epoch=None.");
		}
		if (rc != DL_OK)
			return rc;
	}
	if (more < 0)
		return c.err->code;
	if (p.initial_epoch >= p.epochs)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
					 "initial_epoch %d is not less than epochs %d: no epoch would be trained",
					 p.initial_epoch, p.epochs);
		return dl_error_hint(err, "As in Keras' fit, each call trains epochs - initial_epoch "
							 "passes over the data: give an initial_epoch below epochs, or leave "
							 "it out.");
	}
	p.epochs -= p.initial_epoch;
	*out = p;
	return DL_OK;
}

/* ---------------------------------------------------------------------
 * Canonical writers
 * ---------------------------------------------------------------------
 */

/* The shortest of %.15g / %.17g that reads back as v. */
static void
sb_double(DlStrBuf *sb, double v)
{
	char		tmp[64];

	snprintf(tmp, sizeof(tmp), "%.15g", v);
	if (strtod(tmp, NULL) != v)
		snprintf(tmp, sizeof(tmp), "%.17g", v);
	dl_strbuf_puts(sb, tmp);
}

/* The shortest of %.6g .. %.9g that reads back as the float v. */
static void
sb_float(DlStrBuf *sb, float v)
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

static DlStatus
sb_finish(DlStrBuf *sb, DlError *err)
{
	if (sb->failed || sb->cap == 0)
	{
		dl_error_set(err, DL_ERR_LIMIT, "parameter string needs more than %zu bytes", sb->cap);
		dl_error_hint(err, "Pass a larger buffer.");
		return DL_ERR_LIMIT;
	}
	return DL_OK;
}

/* A schedule as the call that parses back to it. */
static void
sb_schedule(DlStrBuf *sb, const DlLrSchedule *sch)
{
	dl_strbuf_printf(sb, "%s(", dl_lr_schedule_name(sch->kind));
	if (sch->kind == DL_LR_PIECEWISE)
	{
		dl_strbuf_puts(sb, "boundaries=[");
		for (int i = 0; i < sch->n_boundaries; i++)
		{
			dl_strbuf_puts(sb, i > 0 ? ", " : "");
			sb_double(sb, sch->boundaries[i]);
		}
		dl_strbuf_puts(sb, "], values=[");
		for (int i = 0; i <= sch->n_boundaries; i++)
		{
			dl_strbuf_puts(sb, i > 0 ? ", " : "");
			sb_double(sb, sch->values[i]);
		}
		dl_strbuf_puts(sb, "])");
		return;
	}
	dl_strbuf_puts(sb, "initial_learning_rate=");
	sb_double(sb, sch->initial);
	dl_strbuf_puts(sb, ", decay_steps=");
	sb_double(sb, sch->decay_steps);
	switch (sch->kind)
	{
		case DL_LR_EXPONENTIAL:
		case DL_LR_INVERSE_TIME:
			dl_strbuf_puts(sb, ", decay_rate=");
			sb_double(sb, sch->decay_rate);
			dl_strbuf_printf(sb, ", staircase=%s", sch->staircase ? "True" : "False");
			break;
		case DL_LR_POLYNOMIAL:
			dl_strbuf_puts(sb, ", end_learning_rate=");
			sb_double(sb, sch->end_learning_rate);
			dl_strbuf_puts(sb, ", power=");
			sb_double(sb, sch->power);
			dl_strbuf_printf(sb, ", cycle=%s", sch->cycle ? "True" : "False");
			break;
		case DL_LR_COSINE:
			dl_strbuf_puts(sb, ", alpha=");
			sb_double(sb, sch->alpha);
			break;
		default:
			break;
	}
	dl_strbuf_puts(sb, ")");
}

/* A per-output list or dict of losses (losses) or weights, as parsed. */
static void
format_output_values(DlStrBuf *sb, const DlOutputValues *v, bool losses)
{
	dl_strbuf_puts(sb, v->by_name ? "{" : "[");
	for (int i = 0; i < v->n; i++)
	{
		if (i > 0)
			dl_strbuf_puts(sb, ", ");
		if (v->by_name)
			dl_strbuf_printf(sb, "'%s': ", v->names[i]);
		if (losses)
			dl_strbuf_printf(sb, "'%s'", dl_loss_name(v->loss[i]));
		else
			sb_double(sb, v->weight[i]);
	}
	dl_strbuf_puts(sb, v->by_name ? "}" : "]");
}

const char *
dl_compile_params_loss_name(const DlCompileParams *p, char *buf, size_t len)
{
	DlStrBuf	sb;
	DlError		err;

	if (p->losses.n == 0 || len == 0)
		return dl_loss_name(p->loss);
	dl_strbuf_init_fixed(&sb, buf, len);
	format_output_values(&sb, &p->losses, true);
	return sb_finish(&sb, &err) == DL_OK ? buf : dl_loss_name(p->loss);
}

/* Canonical compile_params; see dl_params.h. */
DlStatus
dl_compile_params_format(const DlCompileParams *p, char *buf, size_t len, DlError *err)
{
	DlStrBuf	sb;
	const DlOptimConfig *cfg = &p->optim;
	bool		first = true;

	dl_strbuf_init_fixed(&sb, buf, len);
	if (p->losses.n == 0)
		dl_strbuf_printf(&sb, "loss='%s', ", dl_loss_name(p->loss));
	else
	{
		dl_strbuf_puts(&sb, "loss=");
		format_output_values(&sb, &p->losses, true);
		dl_strbuf_puts(&sb, ", ");
	}
	if (p->loss_weights.n > 0)
	{
		dl_strbuf_puts(&sb, "loss_weights=");
		format_output_values(&sb, &p->loss_weights, false);
		dl_strbuf_puts(&sb, ", ");
	}
	dl_strbuf_printf(&sb, "optimizer='%s(", dl_optim_kind_name(cfg->kind));
	for (size_t i = 0; i < N_OPTIM_ARGS; i++)
	{
		const OptimArg *a = &optim_args[i];

		/* learning_rate duplicates lr; name is not kept */
		if (!(a->kinds & KB(cfg->kind)) || a->type == ARG_IGNORED ||
			strcmp(a->name, "learning_rate") == 0)
			continue;
		if (a->offset == offsetof(DlOptimConfig, lr) && cfg->schedule.kind != DL_LR_CONSTANT)
		{
			dl_strbuf_printf(&sb, "%slearning_rate=", first ? "" : ", ");
			sb_schedule(&sb, &cfg->schedule);
			first = false;
			continue;
		}
		dl_strbuf_printf(&sb, "%s%s=", first ? "" : ", ", a->name);
		first = false;
		if (a->type == ARG_BOOL)
			dl_strbuf_printf(&sb, "%s", *(const bool *) ((const char *) cfg + a->offset) ? "True" : "False");
		else
			sb_double(&sb, *(const double *) ((const char *) cfg + a->offset));
	}
	dl_strbuf_printf(&sb, ")', metrics=[");
	if (p->metric != DL_METRIC_NONE)
	{
		char		name[32];

		dl_strbuf_printf(&sb, "'%s'", dl_compile_params_metric_name(p, name, sizeof(name)));
	}
	dl_strbuf_printf(&sb, "]");
	return sb_finish(&sb, err);
}

/* Canonical fit_params; see dl_params.h. */
DlStatus
dl_fit_params_format(const DlFitParams *p, char *buf, size_t len, DlError *err)
{
	DlStrBuf	sb;

	dl_strbuf_init_fixed(&sb, buf, len);
	dl_strbuf_printf(&sb, "batch_size=%lld, epochs=%lld, shuffle=%s", (long long) p->batch_size,
					 (long long) p->epochs + p->initial_epoch, p->shuffle ? "True" : "False");
	if (p->has_seed)
		dl_strbuf_printf(&sb, ", seed=%llu", (unsigned long long) p->seed);
	if (p->initial_epoch > 0)
		dl_strbuf_printf(&sb, ", initial_epoch=%d", p->initial_epoch);
	if (p->n_class_weight > 0)
	{
		bool		first = true;

		dl_strbuf_puts(&sb, ", class_weight={");
		for (int cls = 0; cls < p->n_class_weight; cls++)
		{
			if (isnan(p->class_weight[cls]))
				continue;
			dl_strbuf_printf(&sb, "%s%d: ", first ? "" : ", ", cls);
			sb_float(&sb, p->class_weight[cls]);
			first = false;
		}
		dl_strbuf_puts(&sb, "}");
	}
	return sb_finish(&sb, err);
}

/* ------------------------------------------------------------------
 * early_stopping (dl_early_stop.h)
 * ------------------------------------------------------------------ */

#define EARLY_STOP_EXAMPLE "monitor=validation_loss, patience=3, min_delta=0.001, restore_best=True"

/* A name value, bare or quoted, into buf (NAME_MAX_LEN); false otherwise. */
static bool
word_value(const char *s, size_t vb, size_t ve, char *buf)
{
	unquote(s, &vb, &ve);
	if (vb == ve || !copy_name(buf, s, vb, ve))
		return false;
	return dl_pylit_is_name(buf, strlen(buf));
}

/* monitor=: [training_|train_|validation_|val_] (loss | <metric>). */
static DlStatus
early_stop_monitor(PCtx *c, size_t kb, size_t ke, size_t vb, size_t ve, DlEarlyStopConfig *p)
{
	static const struct
	{
		const char *prefix;
		bool		validation;
	}			prefixes[] = {{"validation_", true}, {"val_", true}, {"training_", false},
	{"train_", false}};
	char		name[NAME_MAX_LEN];
	const char *rest;
	DlMetricKind kind;
	int			k;

	if (!word_value(c->s, vb, ve, name))
		return bad_value(c, "early_stopping parameter", kb, ke, vb, ve,
						 "loss, validation_loss or [validation_]<metric>");
	rest = name;
	p->validation = false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
	{
		size_t		n = strlen(prefixes[i].prefix);

		if (strncmp(name, prefixes[i].prefix, n) == 0 && name[n] != '\0')
		{
			rest = name + n;
			p->validation = prefixes[i].validation;
			break;
		}
	}
	p->monitor_loss = strcmp(rest, "loss") == 0;
	p->metric[0] = '\0';
	if (p->monitor_loss)
		return DL_OK;
	if (strlen(rest) >= DL_EARLY_STOP_NAME_MAX ||
		(dl_metric_from_name(rest, &kind, NULL) != DL_OK && !top_k_name(rest, &k)))
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT,
					 "early_stopping monitor \"%.*s\" is neither a loss nor a metric",
					 show_len(c->s, vb, ve), c->s + vb);
		return dl_error_hint(c->err, "Monitor loss, validation_loss, or a metric of compile_params "
							 "as <metric> or validation_<metric>, e.g. validation_accuracy.");
	}
	strcpy(p->metric, rest);
	return DL_OK;
}

static DlStatus
early_stop_int(PCtx *c, size_t kb, size_t ke, size_t vb, size_t ve, int *out)
{
	int64_t		v;

	if (!parse_int64(c->s, vb, ve, &v) || v < 0 || v > INT_MAX)
		return bad_value(c, "early_stopping parameter", kb, ke, vb, ve,
						 "an integer from 0 to 2147483647");
	*out = (int) v;
	return DL_OK;
}

DlStatus
dl_early_stop_parse(const char *s, DlEarlyStopConfig *out, DlError *err)
{
	DlError		scratch;
	PCtx		c = {s != NULL ? s : "", s != NULL ? strnlen(s, DL_EARLY_STOP_MAX_LEN + 1) : 0,
	"early_stopping", err != NULL ? err : &scratch};
	DlEarlyStopConfig p;
	size_t		pos = 0,
				ib,
				ie,
				kb,
				ke,
				vb,
				ve,
				b = 0,
				e;
	int			more;
	DlStatus	rc = DL_OK;
	char		word[NAME_MAX_LEN];

	err = c.err;
	memset(&p, 0, sizeof(p));
	p.validation = true;		/* Keras' default monitor, val_loss */
	p.monitor_loss = true;
	p.mode = DL_EARLY_STOP_AUTO;
	if (c.len > DL_EARLY_STOP_MAX_LEN)
	{
		dl_error_set(err, DL_ERR_LIMIT, "early_stopping is longer than %d characters",
					 DL_EARLY_STOP_MAX_LEN);
		return dl_error_hint(err, "Give the options only, e.g. %s.", EARLY_STOP_EXAMPLE);
	}
	e = c.len;
	trim(c.s, &b, &e);
	if (b == e)
	{
		*out = p;				/* disabled */
		return DL_OK;
	}
	p.enabled = true;
	rc = check_balanced(&c, 0, c.len);
	if (rc != DL_OK)
		return rc;
	while ((more = next_item(&c, &pos, c.len, &ib, &ie)) == 1)
	{
		rc = split_key_value(&c, ib, ie, &kb, &ke, &vb, &ve, EARLY_STOP_EXAMPLE);
		if (rc != DL_OK)
			return rc;
		if (piece_eq(c.s, kb, ke, "monitor"))
			rc = early_stop_monitor(&c, kb, ke, vb, ve, &p);
		else if (piece_eq(c.s, kb, ke, "patience"))
			rc = early_stop_int(&c, kb, ke, vb, ve, &p.patience);
		else if (piece_eq(c.s, kb, ke, "start_from_epoch") ||
				 piece_eq(c.s, kb, ke, "start_from_iteration"))
			rc = early_stop_int(&c, kb, ke, vb, ve, &p.start_from);
		else if (piece_eq(c.s, kb, ke, "min_delta"))
		{
			if (!parse_double(c.s, vb, ve, &p.min_delta))
				return bad_value(&c, "early_stopping parameter", kb, ke, vb, ve, "a finite number");
			p.min_delta = fabs(p.min_delta);
		}
		else if (piece_eq(c.s, kb, ke, "baseline"))
		{
			p.has_baseline = !piece_eq(c.s, vb, ve, "None");
			if (p.has_baseline && !parse_double(c.s, vb, ve, &p.baseline))
				return bad_value(&c, "early_stopping parameter", kb, ke, vb, ve,
								 "None or a finite number");
		}
		else if (piece_eq(c.s, kb, ke, "restore_best") ||
				 piece_eq(c.s, kb, ke, "restore_best_weights"))
		{
			if (!parse_bool(c.s, vb, ve, &p.restore_best))
				return bad_value(&c, "early_stopping parameter", kb, ke, vb, ve, "True or False");
		}
		else if (piece_eq(c.s, kb, ke, "mode"))
		{
			if (!word_value(c.s, vb, ve, word))
				return bad_value(&c, "early_stopping parameter", kb, ke, vb, ve, "auto, min or max");
			if (strcmp(word, "auto") == 0)
				p.mode = DL_EARLY_STOP_AUTO;
			else if (strcmp(word, "min") == 0)
				p.mode = DL_EARLY_STOP_MIN;
			else if (strcmp(word, "max") == 0)
				p.mode = DL_EARLY_STOP_MAX;
			else
				return bad_value(&c, "early_stopping parameter", kb, ke, vb, ve, "auto, min or max");
		}
		else if (piece_eq(c.s, kb, ke, "verbose"))
		{
			int64_t		v;

			if (!parse_int64(c.s, vb, ve, &v))
				return bad_value(&c, "early_stopping parameter", kb, ke, vb, ve, "an integer");
		}
		else
		{
			dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "early_stopping parameter \"%.*s\" is not supported",
						 show_len(c.s, kb, ke), c.s + kb);
			return dl_error_hint(err, "Accepted early_stopping parameters are monitor, patience, "
								 "min_delta, mode, baseline, restore_best (restore_best_weights), "
								 "start_from_epoch and verbose.");
		}
		if (rc != DL_OK)
			return rc;
	}
	if (more < 0)
		return c.err->code;
	*out = p;
	return DL_OK;
}
