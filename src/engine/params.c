/*-------------------------------------------------------------------------
 *
 * params.c
 *	  Parse and write MADlib's compile_params and fit_params strings
 *	  (and the early-stopping option).
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
 * The scanner those rules describe is params_scan.c; the learning-rate
 * schedules an optimizer's learning_rate= may name are lr_schedule.c.
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
#include "madlib_dl/dl_metrics.h"
#include "madlib_dl/dl_params.h"
#include "madlib_dl/dl_pylit.h"
#include "madlib_dl/dl_strbuf.h"
#include "params_scan.h"

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

/* One name=value argument inside the optimizer call. */
static DlStatus
parse_optim_arg(DlParamsCtx *c, size_t ib, size_t ie, DlOptimConfig *cfg)
{
	const char *s = c->s;
	size_t		kb,
				ke,
				vb,
				ve;
	const OptimArg *arg = NULL;
	DlStatus	rc;

	if (dl_params_scan_to(s, ib, ie, '=') == ie)
	{
		dl_error_set(c->err, DL_ERR_PARSE,
					 "optimizer argument \"%.*s\" at position %zu in %s is not written as name=value",
					 dl_params_show_len(s, ib, ie), s + ib, ib + 1, c->what);
		return dl_error_hint(c->err, "Name every optimizer argument, for example "
							 "optimizer='SGD(lr=0.01, momentum=0.9)'.");
	}
	rc = dl_params_split_key_value(c, ib, ie, &kb, &ke, &vb, &ve, "optimizer='SGD(lr=0.01, momentum=0.9)'");
	if (rc != DL_OK)
		return rc;
	for (size_t i = 0; i < N_OPTIM_ARGS; i++)
		if (dl_params_piece_eq(s, kb, ke, optim_args[i].name))
			arg = &optim_args[i];
	if (arg == NULL)
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "optimizer argument \"%.*s\" is not supported",
					 dl_params_show_len(s, kb, ke), s + kb);
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

		if ((rc = dl_params_parse_lr_schedule(c, vb, ve, cfg, &is_schedule)) != DL_OK)
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

				if (arg->offset == offsetof(DlOptimConfig, epsilon) && dl_params_piece_eq(s, vb, ve, "None"))
					*field = 1e-7;	/* Keras: None means backend epsilon */
				else if (!dl_params_parse_double(s, vb, ve, field))
					return dl_params_bad_value(c, "optimizer argument", kb, ke, vb, ve,
									 "a finite number, for example 0.001");
			}
			break;
		case ARG_BOOL:
			if (!dl_params_parse_bool(s, vb, ve, (bool *) ((char *) cfg + arg->offset)))
				return dl_params_bad_value(c, "optimizer argument", kb, ke, vb, ve, "True or False");
			break;
		case ARG_IGNORED:
			break;
	}
	return DL_OK;
}

/* optimizer='Name(args)' or Name(args) or 'Name' or Name. */
static DlStatus
parse_optimizer(DlParamsCtx *c, size_t vb, size_t ve, DlOptimConfig *cfg)
{
	const char *s = c->s;
	size_t		nb,
				ne,
				pos,
				ib,
				ie;
	char		name[DL_PARAMS_NAME_MAX];
	DlOptimKind kind;
	DlStatus	rc;
	int			more;
	DlPylitLexer lx;
	DlPylitToken name_tok,
				paren;

	dl_params_unquote(s, &vb, &ve);
	dl_pylit_init(&lx, s, vb, ve, DL_PYLIT_LENIENT);
	dl_pylit_next(&lx, &name_tok);
	dl_pylit_next(&lx, &paren);
	if (name_tok.kind != DL_PYLIT_NAME ||
		(paren.kind != DL_PYLIT_END &&
		 (paren.kind != DL_PYLIT_PUNCT || paren.ch != '(' ||
		  dl_params_scan_to(s, paren.end, ve, ')') != ve - 1)))
	{
		dl_error_set(c->err, DL_ERR_PARSE, "invalid optimizer \"%.*s\" at position %zu in %s",
					 dl_params_show_len(s, vb, ve), s + vb, vb + 1, c->what);
		return dl_error_hint(c->err, "Write the optimizer as a name or a call, for example "
							 "optimizer='SGD(lr=0.01, momentum=0.9)'.");
	}
	nb = name_tok.begin;
	ne = name_tok.end;
	if (!dl_params_copy_name(name, s, nb, ne))
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "optimizer \"%.*s\" is not supported",
					 dl_params_show_len(s, nb, ne), s + nb);
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
		while ((more = dl_params_next_item(c, &pos, ve - 1, &ib, &ie)) == 1)
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
	dl_params_unquote(s, &vb, &ve);
	return dl_params_copy_name(buf, s, vb, ve);
}

static DlStatus
parse_loss(DlParamsCtx *c, size_t vb, size_t ve, DlLossKind *out)
{
	char		name[DL_PARAMS_NAME_MAX];

	if (!name_value(c->s, vb, ve, name))
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "loss function \"%.*s\" is not supported",
					 dl_params_show_len(c->s, vb, ve), c->s + vb);
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
 * One metric name of the list, the text s[vb, ve) (quoted or bare):
 * entry i of p's metrics.  MADlib's top_<k>_accuracy is top-k
 * categorical accuracy with that k.
 */
static DlStatus
parse_metric_name(DlParamsCtx *c, size_t vb, size_t ve, DlCompileParams *p, int i)
{
	const char *s = c->s;
	char		name[DL_PARAMS_NAME_MAX];

	p->metric_top_k[i] = 5;
	p->metric_top_k_named[i] = false;
	if (!name_value(s, vb, ve, name))
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "metric \"%.*s\" is not supported",
					 dl_params_show_len(s, vb, ve), s + vb);
		return dl_error_hint(c->err, "Supported metrics are accuracy (acc), categorical_accuracy, "
							 "sparse_categorical_accuracy, binary_accuracy, "
							 "top_k_categorical_accuracy, top_<k>_accuracy, auc, precision, "
							 "recall, mae and mse.");
	}
	if (top_k_name(name, &p->metric_top_k[i]))
	{
		p->metric_top_k_named[i] = true;
		p->metrics[i] = DL_METRIC_TOP_K_CATEGORICAL_ACCURACY;
		return DL_OK;
	}
	if (dl_metrics_from_name(name, &p->metrics[i], c->err) != DL_OK)
		return dl_error_hint(c->err, "Supported metrics are accuracy (acc), categorical_accuracy, "
							 "sparse_categorical_accuracy, binary_accuracy, "
							 "top_k_categorical_accuracy, top_<k>_accuracy, auc, precision, "
							 "recall, mae and mse.");
	return DL_OK;
}

/*
 * metrics=None, [], ['name', ...] (at most DL_MAX_METRICS names, none
 * twice), or a bare 'name'.  Entry 0 is also p->metric, p->top_k and
 * p->top_k_named.
 */
static DlStatus
parse_metrics(DlParamsCtx *c, size_t vb, size_t ve, DlCompileParams *p)
{
	const char *s = c->s;
	size_t		pos,
				ib,
				ie;
	int			n = 0,
				more;
	DlStatus	rc;

	p->metric = DL_METRIC_NONE;
	p->top_k = 5;
	p->top_k_named = false;
	p->n_metrics = 0;
	if (dl_params_piece_eq(s, vb, ve, "None"))
		return DL_OK;
	if (s[vb] == '[' && dl_params_scan_to(s, vb + 1, ve, ']') == ve - 1)
	{
		size_t		items[DL_MAX_METRICS][2];

		/* the list's syntax first, then its names */
		pos = vb + 1;
		while ((more = dl_params_next_item(c, &pos, ve - 1, &ib, &ie)) == 1)
		{
			if (n < DL_MAX_METRICS)
			{
				items[n][0] = ib;
				items[n][1] = ie;
			}
			n++;
		}
		if (more < 0)
			return c->err->code;
		if (n > DL_MAX_METRICS)
		{
			dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "metrics lists more than %d names: %.*s",
						 DL_MAX_METRICS, dl_params_show_len(s, vb, ve), s + vb);
			return dl_error_hint(c->err, "Pass at most 8 metrics, for example "
								 "metrics=['accuracy', 'auc'].");
		}
		for (int i = 0; i < n; i++)
			if ((rc = parse_metric_name(c, items[i][0], items[i][1], p, i)) != DL_OK)
				return rc;
	}
	else if (!(s[vb] == '\'' || s[vb] == '"'))
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT,
					 "invalid value \"%.*s\" for compile parameter \"metrics\"",
					 dl_params_show_len(s, vb, ve), s + vb);
		return dl_error_hint(c->err, "Write metrics as a list of names, for example "
							 "metrics=['accuracy', 'auc'].");
	}
	else
	{
		if ((rc = parse_metric_name(c, vb, ve, p, 0)) != DL_OK)
			return rc;
		n = 1;
	}
	p->n_metrics = n;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
		{
			char		a[32],
						b[32];
			const char *na = dl_compile_params_metric_name_i(p, i, a, sizeof(a));

			if (strcmp(na, dl_compile_params_metric_name_i(p, j, b, sizeof(b))) == 0)
			{
				dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "metric \"%s\" is listed twice in metrics", na);
				p->n_metrics = 0;
				return dl_error_hint(c->err, "Name each metric once.");
			}
		}
	if (n > 0)
	{
		p->metric = p->metrics[0];
		p->top_k = p->metric_top_k[0];
		p->top_k_named = p->metric_top_k_named[0];
	}
	return DL_OK;
}

/* ---------------------------------------------------------------------
 * Per-output values: loss=[...] / {...} and loss_weights=[...] / {...}
 * ---------------------------------------------------------------------
 */

static DlStatus check_metric_loss(const DlCompileParams *p, DlError *err);

/* Parses entry k's value [vb, ve) of a per-output list or dict into out. */
typedef DlStatus (*OutputEntryFn) (DlParamsCtx *c, size_t vb, size_t ve, int k, DlOutputValues *out);

static DlStatus
loss_entry(DlParamsCtx *c, size_t vb, size_t ve, int k, DlOutputValues *out)
{
	return parse_loss(c, vb, ve, &out->loss[k]);
}

static DlStatus
weight_entry(DlParamsCtx *c, size_t vb, size_t ve, int k, DlOutputValues *out)
{
	if (!dl_params_parse_double(c->s, vb, ve, &out->weight[k]) || !(out->weight[k] >= 0.0))
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT,
					 "invalid loss weight \"%.*s\" in compile parameter \"loss_weights\"",
					 dl_params_show_len(c->s, vb, ve), c->s + vb);
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
output_name(DlParamsCtx *c, const char *key, size_t kb, size_t ke, int k, DlOutputValues *out)
{
	bool		ok = dl_params_unquote(c->s, &kb, &ke) || dl_pylit_is_name(c->s + kb, ke - kb);

	for (size_t i = kb; ok && i < ke; i++)
		ok = c->s[i] != '\'' && c->s[i] != '"' && c->s[i] != '\\' && (unsigned char) c->s[i] >= 0x20;
	if (!ok || kb == ke || ke - kb >= DL_NAME_MAX)
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "invalid output name \"%.*s\" in compile parameter \"%s\"",
					 dl_params_show_len(c->s, kb, ke), c->s + kb, key);
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
parse_output_values(DlParamsCtx *c, const char *key, size_t vb, size_t ve, OutputEntryFn one,
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
	while ((more = dl_params_next_item(c, &pos, ve - 1, &ib, &ie)) == 1)
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
			size_t		colon = dl_params_scan_to(c->s, ib, ie, ':');
			size_t		kb = ib,
						ke = colon;

			if (colon == ie)
			{
				dl_error_set(c->err, DL_ERR_PARSE, "expected 'output name': value at position %zu in %s, got \"%.*s\"",
							 ib + 1, c->what, dl_params_show_len(c->s, ib, ie), c->s + ib);
				return dl_error_hint(c->err, "Write %s as a dict keyed by output names, for example "
									 "%s={'cls': ..., 'reg': ...}.", key, key);
			}
			dl_params_trim(c->s, &kb, &ke);
			if ((rc = output_name(c, key, kb, ke, out->n, out)) != DL_OK)
				return rc;
			ib = colon + 1;
			dl_params_trim(c->s, &ib, &ie);
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
	return ve - vb >= 2 && ((s[vb] == '[' && dl_params_scan_to(s, vb + 1, ve, ']') == ve - 1) ||
							(s[vb] == '{' && dl_params_scan_to(s, vb + 1, ve, '}') == ve - 1));
}

/* loss='name', or a list or dict of names; p->loss is the first. */
static DlStatus
parse_losses(DlParamsCtx *c, size_t vb, size_t ve, DlCompileParams *p)
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
parse_loss_weights(DlParamsCtx *c, size_t vb, size_t ve, DlCompileParams *p)
{
	memset(&p->loss_weights, 0, sizeof(p->loss_weights));
	if (dl_params_piece_eq(c->s, vb, ve, "None"))
		return DL_OK;
	if (!is_list_or_dict(c->s, vb, ve))
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT,
					 "invalid value \"%.*s\" for compile parameter \"loss_weights\"",
					 dl_params_show_len(c->s, vb, ve), c->s + vb);
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
dl_compile_params_metric_name_i(const DlCompileParams *p, int i, char *buf, size_t len)
{
	if (i < 0 || i >= p->n_metrics || i >= DL_MAX_METRICS)
		return dl_metric_name(DL_METRIC_NONE);
	if (p->metrics[i] == DL_METRIC_TOP_K_CATEGORICAL_ACCURACY && p->metric_top_k_named[i] && len > 0)
	{
		snprintf(buf, len, "top_%d_accuracy", p->metric_top_k[i]);
		return buf;
	}
	return dl_metric_name(p->metrics[i]);
}

DlMetricList
dl_compile_params_metric_list(const DlCompileParams *p)
{
	DlMetricList l = {p->n_metrics, p->metrics, p->metric_top_k};

	return l;
}

int
dl_compile_params_metric_sums_len(const DlCompileParams *p)
{
	DlMetricList l = dl_compile_params_metric_list(p);
	int			len;

	if (p->n_metrics == 0 || (p->n_metrics == 1 && p->metric != DL_METRIC_AUC &&
							  p->metric != DL_METRIC_PRECISION && p->metric != DL_METRIC_RECALL))
		return 0;
	len = dl_metric_list_acc_len(&l);
	return len <= DL_METRIC_SUMS_MAX ? len : DL_METRIC_SUMS_MAX;
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

	for (int i = 0; i < p->n_metrics && i < DL_MAX_METRICS; i++)
	{
		DlMetricKind m = p->metrics[i];
		bool		sparse_metric = m == DL_METRIC_SPARSE_CATEGORICAL_ACCURACY;

		if (m == DL_METRIC_NONE || m == DL_METRIC_ACCURACY)
			continue;
		if (sparse_loss != sparse_metric)
		{
			dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "metric \"%s\" cannot be used with loss \"%s\"",
						 dl_metric_name(m), dl_loss_name(p->loss));
			return dl_error_hint(err, sparse_loss ?
								 "With sparse_categorical_crossentropy use metrics=['accuracy'] or "
								 "['sparse_categorical_accuracy']." :
								 "Use sparse_categorical_accuracy only with "
								 "sparse_categorical_crossentropy; metrics=['accuracy'] picks the "
								 "right accuracy for any loss.");
		}
	}
	return DL_OK;
}

/* What a compile_params parse has gathered so far. */
typedef struct CompileItems
{
	DlCompileParams p;
	bool		have_optimizer;
	bool		have_loss;
} CompileItems;

/* One compile parameter key=value into the CompileItems arg. */
static DlStatus
compile_item(DlParamsCtx *c, size_t kb, size_t ke, size_t vb, size_t ve, void *arg)
{
	CompileItems *st = arg;
	DlCompileParams *p = &st->p;
	DlStatus	rc = DL_OK;

	if (dl_params_piece_eq(c->s, kb, ke, "optimizer"))
	{
		rc = parse_optimizer(c, vb, ve, &p->optim);
		st->have_optimizer = true;
	}
	else if (dl_params_piece_eq(c->s, kb, ke, "loss"))
	{
		rc = parse_losses(c, vb, ve, p);
		st->have_loss = true;
	}
	else if (dl_params_piece_eq(c->s, kb, ke, "metrics"))
		rc = parse_metrics(c, vb, ve, p);
	else if (dl_params_piece_eq(c->s, kb, ke, "loss_weights"))
		rc = parse_loss_weights(c, vb, ve, p);
	else if (dl_params_piece_eq(c->s, kb, ke, "weighted_metrics"))
		rc = DL_OK;			/* accepted for MADlib compatibility, ignored */
	else if (dl_params_piece_eq(c->s, kb, ke, "sample_weight_mode"))
	{
		size_t		b = vb,
					e = ve;

		dl_params_unquote(c->s, &b, &e);
		if (!dl_params_piece_eq(c->s, b, e, "None"))
		{
			dl_error_set(c->err, DL_ERR_UNSUPPORTED, "sample_weight_mode \"%.*s\" is not supported",
						 dl_params_show_len(c->s, vb, ve), c->s + vb);
			return dl_error_hint(c->err, "Remove sample_weight_mode or set it to None.");
		}
	}
	else
		return dl_params_unsupported_key(c, DL_ERR_INVALID_ARGUMENT, "compile parameter", kb, ke,
										 "Accepted compile parameters are optimizer, loss, metrics, "
										 "loss_weights, weighted_metrics and sample_weight_mode.");
	return rc;
}

/*
 * Parse compile_params into out.  optimizer and loss are required; the
 * last duplicate key wins.  out is fully written on success only.
 */
DlStatus
dl_compile_params_parse(const char *s, DlCompileParams *out, DlError *err)
{
	DlError		scratch;
	CompileItems st;
	DlCompileParams *p = &st.p;
	DlStatus	rc;

	if (err == NULL)
		err = &scratch;
	memset(&st, 0, sizeof(st));
	p->loss = DL_LOSS_CATEGORICAL_CROSSENTROPY;
	p->metric = DL_METRIC_NONE;
	p->top_k = 5;
	dl_optim_config_default(&p->optim, DL_OPTIM_ADAM);

	if ((rc = dl_params_parse_items(s, "compile_params", COMPILE_EXAMPLE, compile_item, &st, err)) != DL_OK)
		return rc;
	if (!st.have_optimizer)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "optimizer is a required compile parameter");
		return dl_error_hint(err, "Add an optimizer to compile_params, for example "
							 "loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', "
							 "metrics=['accuracy'].");
	}
	if (!st.have_loss)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "loss is a required compile parameter");
		return dl_error_hint(err, "Add a loss to compile_params, for example "
							 "loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', "
							 "metrics=['accuracy'].");
	}
	rc = check_metric_loss(p, err);
	if (rc != DL_OK)
		return rc;
	*out = *p;
	return DL_OK;
}

DlStatus
dl_compile_params_set_metrics(DlCompileParams *p, const char *metrics, DlError *err)
{
	DlError		scratch;
	DlParamsCtx		c = {metrics != NULL ? metrics : "", metrics != NULL ? strlen(metrics) : 0, "metrics",
	err != NULL ? err : &scratch};
	DlCompileParams q = *p;
	size_t		b = 0,
				e;
	DlStatus	rc;

	err = c.err;
	e = c.len;
	dl_params_trim(c.s, &b, &e);
	if (b == e)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "metrics must not be empty");
		return dl_error_hint(err, "Give a list of metric names, for example "
							 "'[''accuracy'', ''auc'', ''precision'']'.");
	}
	if ((rc = dl_params_check_balanced(&c, b, e)) != DL_OK)
		return rc;
	if ((rc = parse_metrics(&c, b, e, &q)) != DL_OK)
		return rc;
	if ((rc = check_metric_loss(&q, err)) != DL_OK)
		return rc;
	*p = q;
	return DL_OK;
}

/* ---------------------------------------------------------------------
 * fit_params
 * ---------------------------------------------------------------------
 */

#define FIT_EXAMPLE "batch_size=128"

/* An integer fit parameter in [lo, hi]. */
static DlStatus
fit_int(DlParamsCtx *c, size_t kb, size_t ke, size_t vb, size_t ve, int64_t lo, int64_t hi,
		int64_t *out)
{
	if (!dl_params_parse_int64(c->s, vb, ve, out))
		return dl_params_bad_value(c, "fit parameter", kb, ke, vb, ve, "an integer");
	if (*out < lo || *out > hi)
	{
		if (hi == lo)
			dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "%.*s must be %lld, got %lld",
						 dl_params_show_len(c->s, kb, ke), c->s + kb, (long long) lo, (long long) *out);
		else
			dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT, "%.*s must be between %lld and %lld, got %lld",
						 dl_params_show_len(c->s, kb, ke), c->s + kb, (long long) lo, (long long) hi,
						 (long long) *out);
		return dl_error_hint(c->err, "Change %.*s in fit_params.", dl_params_show_len(c->s, kb, ke), c->s + kb);
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
parse_class_weight(DlParamsCtx *c, size_t kb, size_t ke, size_t vb, size_t ve, DlFitParams *p)
{
	const char *s = c->s;
	size_t		pos,
				ib,
				ie;
	int			more;

	p->n_class_weight = 0;
	if (dl_params_piece_eq(s, vb, ve, "None"))
		return DL_OK;
	if (!(s[vb] == '{' && dl_params_scan_to(s, vb + 1, ve, '}') == ve - 1))
		return dl_params_bad_value(c, "fit parameter", kb, ke, vb, ve,
						 "None or a dict from class index to weight, for example "
						 "class_weight={0: 1.0, 1: 5.0}");
	pos = vb + 1;
	while ((more = dl_params_next_item(c, &pos, ve - 1, &ib, &ie)) == 1)
	{
		size_t		colon = dl_params_scan_to(s, ib, ie, ':');
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
						 dl_params_show_len(s, ib, ie), s + ib, ib + 1, c->what);
			return dl_error_hint(c->err, "Write class_weight as a dict, for example "
								 "class_weight={0: 1.0, 1: 5.0}.");
		}
		dl_params_trim(s, &cb, &ce);
		dl_params_trim(s, &wb, &we);
		if (!dl_params_parse_int64(s, cb, ce, &cls) || cls < 0 || cls >= DL_CLASS_WEIGHT_MAX)
		{
			dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT,
						 "class_weight key \"%.*s\" is not a class index from 0 to %d",
						 dl_params_show_len(s, cb, ce), s + cb, DL_CLASS_WEIGHT_MAX - 1);
			return dl_error_hint(c->err, "The keys of class_weight are the classes' indexes: "
								 "the position of each class in the dependent variable's "
								 "class values, from 0.");
		}
		if (!dl_params_parse_double(s, wb, we, &w) || w < 0.0 || w > FLT_MAX)
		{
			dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT,
						 "class_weight of class %lld is \"%.*s\", not a finite number >= 0",
						 (long long) cls, dl_params_show_len(s, wb, we), s + wb);
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

/* One fit parameter key=value into the DlFitParams arg. */
static DlStatus
fit_item(DlParamsCtx *c, size_t kb, size_t ke, size_t vb, size_t ve, void *arg)
{
	DlFitParams *p = arg;
	int64_t		v;
	DlStatus	rc = DL_OK;

	if (dl_params_piece_eq(c->s, kb, ke, "batch_size"))
	{
		rc = fit_int(c, kb, ke, vb, ve, 1, INT64_MAX, &v);
		p->batch_size = v;
	}
	else if (dl_params_piece_eq(c->s, kb, ke, "epochs"))
	{
		rc = fit_int(c, kb, ke, vb, ve, 1, INT_MAX, &v);
		p->epochs = (int) v;
	}
	else if (dl_params_piece_eq(c->s, kb, ke, "seed"))
	{
		rc = fit_int(c, kb, ke, vb, ve, 0, INT64_MAX, &v);
		p->seed = (uint64_t) v;
		p->has_seed = true;
	}
	else if (dl_params_piece_eq(c->s, kb, ke, "verbose"))
	{
		rc = fit_int(c, kb, ke, vb, ve, INT_MIN, INT_MAX, &v);
		p->verbose = (int) v;
	}
	else if (dl_params_piece_eq(c->s, kb, ke, "initial_epoch"))
	{
		rc = fit_int(c, kb, ke, vb, ve, 0, INT_MAX, &v);
		p->initial_epoch = (int) v;
	}
	else if (dl_params_piece_eq(c->s, kb, ke, "class_weight"))
		rc = parse_class_weight(c, kb, ke, vb, ve, p);
	else if (dl_params_piece_eq(c->s, kb, ke, "shuffle"))
	{
		if (!dl_params_parse_bool(c->s, vb, ve, &p->shuffle))
			return dl_params_bad_value(c, "fit parameter", kb, ke, vb, ve, "True or False");
	}
	else if (dl_params_piece_eq(c->s, kb, ke, "steps_per_epoch"))
	{
		if (!dl_params_piece_eq(c->s, vb, ve, "None"))
		{
			dl_error_set(c->err, DL_ERR_UNSUPPORTED, "fit parameter \"%.*s\" is only accepted as None, got \"%.*s\"",
						 dl_params_show_len(c->s, kb, ke), c->s + kb, dl_params_show_len(c->s, vb, ve), c->s + vb);
			return dl_error_hint(c->err, "Remove %.*s from fit_params.", dl_params_show_len(c->s, kb, ke), c->s + kb);
		}
	}
	else if (dl_params_piece_eq(c->s, kb, ke, "validation_split") ||
			 dl_params_piece_eq(c->s, kb, ke, "validation_data") ||
			 dl_params_piece_eq(c->s, kb, ke, "validation_steps") ||
			 dl_params_piece_eq(c->s, kb, ke, "validation_freq"))
	{
		dl_error_set(c->err, DL_ERR_UNSUPPORTED, "fit parameter \"%.*s\" is not supported",
					 dl_params_show_len(c->s, kb, ke), c->s + kb);
		return dl_error_hint(c->err, "Remove %.*s from fit_params and pass a validation table "
							 "to madlib_keras_fit instead.", dl_params_show_len(c->s, kb, ke), c->s + kb);
	}
	else if (dl_params_piece_eq(c->s, kb, ke, "sample_weight") ||
			 dl_params_piece_eq(c->s, kb, ke, "callbacks"))
	{
		dl_error_set(c->err, DL_ERR_UNSUPPORTED, "fit parameter \"%.*s\" is not supported",
					 dl_params_show_len(c->s, kb, ke), c->s + kb);
		return dl_error_hint(c->err, "Remove %.*s from fit_params.", dl_params_show_len(c->s, kb, ke), c->s + kb);
	}
	else
		return dl_params_unsupported_key(c, DL_ERR_INVALID_ARGUMENT, "fit parameter", kb, ke,
										 "Accepted fit parameters are batch_size, epochs, shuffle, "
										 "seed, verbose, initial_epoch, class_weight and "
										 "steps_per_epoch=None.");
	return rc;
}

/*
 * Parse fit_params into out; NULL, empty or blank gives the defaults.
 * out is fully written on success only.
 */
DlStatus
dl_fit_params_parse(const char *s, DlFitParams *out, DlError *err)
{
	DlError		scratch;
	DlFitParams p;
	DlStatus	rc;

	if (err == NULL)
		err = &scratch;
	memset(&p, 0, sizeof(p));
	p.batch_size = DL_DEFAULT_BATCH_SIZE;
	p.epochs = 1;
	p.shuffle = true;
	p.has_seed = false;
	p.seed = DL_DEFAULT_SEED;
	p.verbose = 0;
	p.initial_epoch = 0;
	p.n_class_weight = 0;

	if ((rc = dl_params_parse_items(s, "fit_params", FIT_EXAMPLE, fit_item, &p, err)) != DL_OK)
		return rc;
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

/* A schedule as the call that parses back to it. */
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
			dl_params_sb_double(sb, v->weight[i]);
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
	return dl_params_sb_finish(&sb, &err) == DL_OK ? buf : dl_loss_name(p->loss);
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
			dl_params_sb_schedule(&sb, &cfg->schedule);
			first = false;
			continue;
		}
		dl_strbuf_printf(&sb, "%s%s=", first ? "" : ", ", a->name);
		first = false;
		if (a->type == ARG_BOOL)
			dl_strbuf_printf(&sb, "%s", *(const bool *) ((const char *) cfg + a->offset) ? "True" : "False");
		else
			dl_params_sb_double(&sb, *(const double *) ((const char *) cfg + a->offset));
	}
	dl_strbuf_printf(&sb, ")', metrics=[");
	for (int i = 0; i < p->n_metrics && i < DL_MAX_METRICS; i++)
	{
		char		name[32];

		dl_strbuf_printf(&sb, "%s'%s'", i > 0 ? ", " : "",
						 dl_compile_params_metric_name_i(p, i, name, sizeof(name)));
	}
	dl_strbuf_printf(&sb, "]");
	return dl_params_sb_finish(&sb, err);
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
			dl_params_sb_float(&sb, p->class_weight[cls]);
			first = false;
		}
		dl_strbuf_puts(&sb, "}");
	}
	return dl_params_sb_finish(&sb, err);
}

/* ------------------------------------------------------------------
 * early_stopping (dl_early_stop.h)
 * ------------------------------------------------------------------ */

#define EARLY_STOP_EXAMPLE "monitor=validation_loss, patience=3, min_delta=0.001, restore_best=True"

/* A name value, bare or quoted, into buf (DL_PARAMS_NAME_MAX); false otherwise. */
static bool
word_value(const char *s, size_t vb, size_t ve, char *buf)
{
	dl_params_unquote(s, &vb, &ve);
	if (vb == ve || !dl_params_copy_name(buf, s, vb, ve))
		return false;
	return dl_pylit_is_name(buf, strlen(buf));
}

/* monitor=: [training_|train_|validation_|val_] (loss | <metric>). */
static DlStatus
early_stop_monitor(DlParamsCtx *c, size_t kb, size_t ke, size_t vb, size_t ve, DlEarlyStopConfig *p)
{
	static const struct
	{
		const char *prefix;
		bool		validation;
	}			prefixes[] = {{"validation_", true}, {"val_", true}, {"training_", false},
	{"train_", false}};
	char		name[DL_PARAMS_NAME_MAX];
	const char *rest;
	DlMetricKind kind;
	int			k;

	if (!word_value(c->s, vb, ve, name))
		return dl_params_bad_value(c, "early_stopping parameter", kb, ke, vb, ve,
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
		(dl_metrics_from_name(rest, &kind, NULL) != DL_OK && !top_k_name(rest, &k)))
	{
		dl_error_set(c->err, DL_ERR_INVALID_ARGUMENT,
					 "early_stopping monitor \"%.*s\" is neither a loss nor a metric",
					 dl_params_show_len(c->s, vb, ve), c->s + vb);
		return dl_error_hint(c->err, "Monitor loss, validation_loss, or a metric of compile_params "
							 "as <metric> or validation_<metric>, e.g. validation_accuracy.");
	}
	strcpy(p->metric, rest);
	return DL_OK;
}

static DlStatus
early_stop_int(DlParamsCtx *c, size_t kb, size_t ke, size_t vb, size_t ve, int *out)
{
	int64_t		v;

	if (!dl_params_parse_int64(c->s, vb, ve, &v) || v < 0 || v > INT_MAX)
		return dl_params_bad_value(c, "early_stopping parameter", kb, ke, vb, ve,
						 "an integer from 0 to 2147483647");
	*out = (int) v;
	return DL_OK;
}

/* mode=: auto, min or max, bare or quoted. */
static DlStatus
early_stop_mode(DlParamsCtx *c, size_t kb, size_t ke, size_t vb, size_t ve, DlEarlyStopMode *out)
{
	static const struct
	{
		const char *name;
		DlEarlyStopMode mode;
	}			modes[] = {{"auto", DL_EARLY_STOP_AUTO}, {"min", DL_EARLY_STOP_MIN}, {"max", DL_EARLY_STOP_MAX}};
	char		word[DL_PARAMS_NAME_MAX];

	if (word_value(c->s, vb, ve, word))
		for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
			if (strcmp(word, modes[i].name) == 0)
			{
				*out = modes[i].mode;
				return DL_OK;
			}
	return dl_params_bad_value(c, "early_stopping parameter", kb, ke, vb, ve, "auto, min or max");
}

/* One early_stopping parameter key=value into the DlEarlyStopConfig arg. */
static DlStatus
early_stop_item(DlParamsCtx *c, size_t kb, size_t ke, size_t vb, size_t ve, void *arg)
{
	DlEarlyStopConfig *p = arg;
	DlStatus	rc = DL_OK;

	if (dl_params_piece_eq(c->s, kb, ke, "monitor"))
		rc = early_stop_monitor(c, kb, ke, vb, ve, p);
	else if (dl_params_piece_eq(c->s, kb, ke, "patience"))
		rc = early_stop_int(c, kb, ke, vb, ve, &p->patience);
	else if (dl_params_piece_eq(c->s, kb, ke, "start_from_epoch") ||
			 dl_params_piece_eq(c->s, kb, ke, "start_from_iteration"))
		rc = early_stop_int(c, kb, ke, vb, ve, &p->start_from);
	else if (dl_params_piece_eq(c->s, kb, ke, "min_delta"))
	{
		if (!dl_params_parse_double(c->s, vb, ve, &p->min_delta))
			return dl_params_bad_value(c, "early_stopping parameter", kb, ke, vb, ve, "a finite number");
		p->min_delta = fabs(p->min_delta);
	}
	else if (dl_params_piece_eq(c->s, kb, ke, "baseline"))
	{
		p->has_baseline = !dl_params_piece_eq(c->s, vb, ve, "None");
		if (p->has_baseline && !dl_params_parse_double(c->s, vb, ve, &p->baseline))
			return dl_params_bad_value(c, "early_stopping parameter", kb, ke, vb, ve,
							 "None or a finite number");
	}
	else if (dl_params_piece_eq(c->s, kb, ke, "restore_best") ||
			 dl_params_piece_eq(c->s, kb, ke, "restore_best_weights"))
	{
		if (!dl_params_parse_bool(c->s, vb, ve, &p->restore_best))
			return dl_params_bad_value(c, "early_stopping parameter", kb, ke, vb, ve, "True or False");
	}
	else if (dl_params_piece_eq(c->s, kb, ke, "mode"))
		return early_stop_mode(c, kb, ke, vb, ve, &p->mode);
	else if (dl_params_piece_eq(c->s, kb, ke, "verbose"))
	{
		int64_t		v;

		if (!dl_params_parse_int64(c->s, vb, ve, &v))
			return dl_params_bad_value(c, "early_stopping parameter", kb, ke, vb, ve, "an integer");
	}
	else
		return dl_params_unsupported_key(c, DL_ERR_INVALID_ARGUMENT, "early_stopping parameter", kb, ke,
										 "Accepted early_stopping parameters are monitor, patience, "
										 "min_delta, mode, baseline, restore_best (restore_best_weights), "
										 "start_from_epoch and verbose.");
	return rc;
}

DlStatus
dl_early_stop_parse(const char *s, DlEarlyStopConfig *out, DlError *err)
{
	DlError		scratch;
	DlParamsCtx		c = {s != NULL ? s : "", s != NULL ? strnlen(s, DL_EARLY_STOP_MAX_LEN + 1) : 0,
	"early_stopping", err != NULL ? err : &scratch};
	DlEarlyStopConfig p;
	size_t		b = 0,
				e;
	DlStatus	rc = DL_OK;

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
	dl_params_trim(c.s, &b, &e);
	if (b == e)
	{
		*out = p;				/* disabled */
		return DL_OK;
	}
	p.enabled = true;
	if ((rc = dl_params_check_balanced(&c, 0, c.len)) != DL_OK ||
		(rc = dl_params_each_item(&c, 0, c.len, EARLY_STOP_EXAMPLE, early_stop_item, &p)) != DL_OK)
		return rc;
	*out = p;
	return DL_OK;
}
