/*-------------------------------------------------------------------------
 *
 * lr_schedule.c
 *	  Parse and write the learning-rate schedules that compile_params'
 *	  optimizer accepts as learning_rate= (Keras LearningRateSchedule
 *	  calls and their serialized dicts).
 *
 * Called from params.c; the scanner is params_scan.c.  The schedules'
 * evaluation (dl_lr_schedule_value) lives with the optimizers.
 *
 * IDENTIFICATION
 *	  src/engine/lr_schedule.c
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

#include "params_scan.h"

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
sched_unknown(DlParamsCtx *c, size_t b, size_t e)
{
	dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "learning-rate schedule \"%.*s\" is not supported",
				 dl_params_show_len(c->s, b, e), c->s + b);
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
		if (dl_params_piece_eq(s, last, e, sched_kinds[k].name))
			return &sched_kinds[k];
	return NULL;
}

/* A list of 1..max finite numbers [a, b, ...] into out; their count, or -1. */
static int
number_list(DlParamsCtx *c, size_t vb, size_t ve, double *out, int max)
{
	size_t		pos,
				ib,
				ie;
	int			n = 0,
				more;

	if (!(c->s[vb] == '[' || c->s[vb] == '(') ||
		dl_params_scan_to(c->s, vb + 1, ve, c->s[vb] == '[' ? ']' : ')') != ve - 1)
		return -1;
	pos = vb + 1;
	while ((more = dl_params_next_item(c, &pos, ve - 1, &ib, &ie)) == 1)
		if (n >= max || !dl_params_parse_double(c->s, ib, ie, &out[n++]))
			return -1;
	return more < 0 || n == 0 ? -1 : n;
}

/* "invalid value "<v>" for argument "<name>" of <kind>", with a hint. */
static DlStatus
sched_bad(DlParamsCtx *c, const SchedKind *k, const char *name, size_t vb, size_t ve, const char *takes)
{
	dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "invalid value \"%.*s\" for argument \"%s\" of %s",
				 dl_params_show_len(c->s, vb, ve), c->s + vb, name, k->name);
	return dl_error_hint(c->err, "%s takes %s.", name, takes);
}

/* Set parameter i of kind k to the value [vb, ve). */
static DlStatus
sched_param(DlParamsCtx *c, const SchedKind *k, int i, size_t vb, size_t ve, DlLrSchedule *out)
{
	const char *name = k->params[i];
	const char *s = c->s;
	double		v = 0;
	int			n;

	if (strcmp(name, "name") == 0)
		return DL_OK;
	if (strcmp(name, "staircase") == 0 || strcmp(name, "cycle") == 0)
	{
		if (!dl_params_parse_bool(s, vb, ve, strcmp(name, "cycle") == 0 ? &out->cycle : &out->staircase))
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
		if (dl_params_piece_eq(s, vb, ve, "None") || (dl_params_parse_double(s, vb, ve, &v) && v == 0.0))
			return DL_OK;
		dl_error_set(c->err, DL_ERR_UNSUPPORTED, "%s of CosineDecay is not supported", name);
		return dl_error_hint(c->err, "Leave out warmup_target and warmup_steps; fit's lr_scaling "
							 "has a warm-up of its own.");
	}
	if (!dl_params_parse_double(s, vb, ve, &v))
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

/*
 * Named argument [kb, ke) = [vb, ve) of kind k into out (one it does not
 * take, or given twice: an error).
 */
static DlStatus
sched_named_param(DlParamsCtx *c, const SchedKind *k, size_t kb, size_t ke, size_t vb, size_t ve,
				  unsigned *given, DlLrSchedule *out)
{
	for (int i = 0; i < SCHED_MAX_PARAMS && k->params[i] != NULL; i++)
		if (dl_params_piece_eq(c->s, kb, ke, k->params[i]))
		{
			if (*given & (1u << i))
			{
				dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "%s gets argument \"%s\" twice",
							 k->name, k->params[i]);
				return dl_error_hint(c->err, "Give each argument of the schedule once.");
			}
			*given |= 1u << i;
			return sched_param(c, k, i, vb, ve, out);
		}
	dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "%s has no argument \"%.*s\"", k->name,
				 dl_params_show_len(c->s, kb, ke), c->s + kb);
	return dl_error_hint(c->err, "Give the arguments Keras' %s takes, for example %s.", k->name,
						 SCHED_EXAMPLE);
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
sched_finish(DlParamsCtx *c, const SchedKind *k, unsigned given, DlLrSchedule *out)
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
sched_call(DlParamsCtx *c, size_t vb, size_t ve, size_t paren, DlLrSchedule *out)
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

	dl_params_trim(c->s, &nb, &ne);
	if ((k = sched_kind(c->s, nb, ne)) == NULL)
		return sched_unknown(c, nb, ne);
	sched_defaults(k, out);
	pos = paren + 1;
	while ((more = dl_params_next_item(c, &pos, ve - 1, &ib, &ie)) == 1)
	{
		size_t		kb,
					ke,
					ab,
					ae;

		if (dl_params_scan_to(c->s, ib, ie, '=') == ie)
		{
			/* positional, before any named one */
			if (named || n >= SCHED_MAX_PARAMS || k->params[n] == NULL)
			{
				dl_error_set(c->err, DL_ERR_PARSE, "unexpected argument \"%.*s\" of %s",
							 dl_params_show_len(c->s, ib, ie), c->s + ib, k->name);
				return dl_error_hint(c->err, "Name the arguments of the schedule, for example %s.",
									 SCHED_EXAMPLE);
			}
			given |= 1u << n;
			rc = sched_param(c, k, n++, ib, ie, out);
		}
		else
		{
			named = true;
			if ((rc = dl_params_split_key_value(c, ib, ie, &kb, &ke, &ab, &ae, SCHED_EXAMPLE)) == DL_OK)
				rc = sched_named_param(c, k, kb, ke, ab, ae, &given, out);
		}
		if (rc != DL_OK)
			return rc;
	}
	if (more < 0)
		return c->err->code;
	return sched_finish(c, k, given, out);
}

/* The string key of a dict item "'key': value", unquoted, and its value. */
static DlStatus
dict_item(DlParamsCtx *c, size_t ib, size_t ie, size_t *kb, size_t *ke, size_t *vb, size_t *ve)
{
	size_t		colon = dl_params_scan_to(c->s, ib, ie, ':');

	*kb = ib;
	*ke = colon;
	*vb = colon + 1;
	*ve = ie;
	if (colon < ie)
	{
		dl_params_trim(c->s, kb, ke);
		dl_params_trim(c->s, vb, ve);
	}
	if (colon == ie || *vb == *ve || !dl_params_unquote(c->s, kb, ke))
	{
		dl_error_set(c->err, DL_ERR_PARSE, "schedule entry \"%.*s\" at position %zu in %s is not written 'key': value",
					 dl_params_show_len(c->s, ib, ie), c->s + ib, ib + 1, c->what);
		return dl_error_hint(c->err, "Write a schedule as Keras serializes it, {'class_name': "
							 "'ExponentialDecay', 'config': {'initial_learning_rate': 0.01, "
							 "'decay_steps': 1000, 'decay_rate': 0.9}}, or as a call: %s.",
							 SCHED_EXAMPLE);
	}
	return DL_OK;
}

/* {'class_name': 'Name', 'config': {...}}: the dict form. */
static DlStatus
sched_dict(DlParamsCtx *c, size_t vb, size_t ve, DlLrSchedule *out)
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

	while ((more = dl_params_next_item(c, &pos, ve - 1, &ib, &ie)) == 1)
	{
		if ((rc = dict_item(c, ib, ie, &kb, &ke, &ab, &ae)) != DL_OK)
			return rc;
		if (dl_params_piece_eq(c->s, kb, ke, "class_name"))
		{
			if (!dl_params_unquote(c->s, &ab, &ae) || (k = sched_kind(c->s, ab, ae)) == NULL)
				return sched_unknown(c, ab, ae);
		}
		else if (dl_params_piece_eq(c->s, kb, ke, "config"))
		{
			cb = ab;
			ce = ae;
		}
		else if (!dl_params_piece_eq(c->s, kb, ke, "module") && !dl_params_piece_eq(c->s, kb, ke, "registered_name"))
		{
			dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT,
						 "a learning-rate schedule given as a dict has an unknown key \"%.*s\"",
						 dl_params_show_len(c->s, kb, ke), c->s + kb);
			return dl_error_hint(c->err, "The keys of the dict are class_name and config (module "
								 "and registered_name are ignored).");
		}
	}
	if (more < 0)
		return c->err->code;
	if (k == NULL || ce == cb || c->s[cb] != '{' || dl_params_scan_to(c->s, cb + 1, ce, '}') != ce - 1)
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT,
					 "a learning-rate schedule given as a dict needs 'class_name' and a 'config' dict");
		return dl_error_hint(c->err, "Write {'class_name': 'ExponentialDecay', 'config': "
							 "{'initial_learning_rate': 0.01, 'decay_steps': 1000, "
							 "'decay_rate': 0.9}}.");
	}
	sched_defaults(k, out);
	pos = cb + 1;
	while ((more = dl_params_next_item(c, &pos, ce - 1, &ib, &ie)) == 1)
	{
		if ((rc = dict_item(c, ib, ie, &kb, &ke, &ab, &ae)) != DL_OK ||
			(rc = sched_named_param(c, k, kb, ke, ab, ae, &given, out)) != DL_OK)
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
DlStatus
dl_params_parse_lr_schedule(DlParamsCtx *c, size_t vb, size_t ve, DlOptimConfig *cfg, bool *is)
{
	size_t		paren = dl_params_scan_to(c->s, vb, ve, '(');
	DlLrSchedule sch;
	DlStatus	rc;

	*is = false;
	if (c->s[vb] == '{' && dl_params_scan_to(c->s, vb + 1, ve, '}') == ve - 1)
		rc = sched_dict(c, vb, ve, &sch);
	else if (paren > vb && paren < ve && dl_params_scan_to(c->s, paren + 1, ve, ')') == ve - 1)
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

/* One ", name=value" (prefix as given) of a schedule's call. */
static void
sb_arg(DlStrBuf *sb, const char *prefix, double v)
{
	dl_strbuf_puts(sb, prefix);
	dl_params_sb_double(sb, v);
}

void
dl_params_sb_schedule(DlStrBuf *sb, const DlLrSchedule *sch)
{
	dl_strbuf_printf(sb, "%s(", dl_lr_schedule_name(sch->kind));
	if (sch->kind == DL_LR_PIECEWISE)
	{
		dl_strbuf_puts(sb, "boundaries=[");
		for (int i = 0; i < sch->n_boundaries; i++)
		{
			dl_strbuf_puts(sb, i > 0 ? ", " : "");
			dl_params_sb_double(sb, sch->boundaries[i]);
		}
		dl_strbuf_puts(sb, "], values=[");
		for (int i = 0; i <= sch->n_boundaries; i++)
		{
			dl_strbuf_puts(sb, i > 0 ? ", " : "");
			dl_params_sb_double(sb, sch->values[i]);
		}
		dl_strbuf_puts(sb, "])");
		return;
	}
	sb_arg(sb, "initial_learning_rate=", sch->initial);
	sb_arg(sb, ", decay_steps=", sch->decay_steps);
	switch (sch->kind)
	{
		case DL_LR_EXPONENTIAL:
		case DL_LR_INVERSE_TIME:
			sb_arg(sb, ", decay_rate=", sch->decay_rate);
			dl_strbuf_printf(sb, ", staircase=%s", sch->staircase ? "True" : "False");
			break;
		case DL_LR_POLYNOMIAL:
			sb_arg(sb, ", end_learning_rate=", sch->end_learning_rate);
			sb_arg(sb, ", power=", sch->power);
			dl_strbuf_printf(sb, ", cycle=%s", sch->cycle ? "True" : "False");
			break;
		case DL_LR_COSINE:
			sb_arg(sb, ", alpha=", sch->alpha);
			break;
		default:
			break;
	}
	dl_strbuf_puts(sb, ")");
}

