/*-------------------------------------------------------------------------
 *
 * early_stop.c
 *	  Early stopping: Keras' EarlyStopping rule at each metrics point, and
 *	  the check of the monitored series against a model (dl_early_stop.h).
 *	  The option string is parsed in params.c, with the other parameter
 *	  strings.
 *
 * IDENTIFICATION
 *	  src/engine/early_stop.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "madlib_dl/dl_early_stop.h"
#include "madlib_dl/dl_loss.h"
#include "madlib_dl/dl_metrics.h"

static bool
ends_with(const char *s, const char *suffix)
{
	size_t		n = strlen(s);
	size_t		m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

bool
dl_early_stop_higher_is_better(const char *metric)
{
	DlMetricKind kind;

	if (metric == NULL)
		return false;
	if (dl_metrics_from_name(metric, &kind, NULL) == DL_OK)
		return kind != DL_METRIC_MAE && kind != DL_METRIC_MSE && kind != DL_METRIC_NONE;
	/* Keras 2's rule for names it does not know, e.g. top_3_accuracy */
	return ends_with(metric, "acc") || ends_with(metric, "accuracy") || ends_with(metric, "auc");
}

/* Is the monitored metric name the model's metric (same name, or an alias of it)? */
static bool
same_metric(const char *monitored, const char *compiled)
{
	DlMetricKind a;
	DlMetricKind b;

	if (strcmp(monitored, compiled) == 0)
		return true;
	return dl_metrics_from_name(monitored, &a, NULL) == DL_OK &&
		dl_metrics_from_name(compiled, &b, NULL) == DL_OK && a == b;
}

DlStatus
dl_early_stop_begin(const DlEarlyStopConfig *cfg, const char *metric_name, bool has_validation,
					DlEarlyStopState *st, DlError *err)
{
	memset(st, 0, sizeof(*st));
	st->best = INFINITY;
	if (!cfg->enabled)
		return DL_OK;
	if (cfg->validation && !has_validation)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
					 "early_stopping monitors validation_%s, but no validation table is given",
					 cfg->monitor_loss ? "loss" : cfg->metric);
		return dl_error_hint(err, "Give a validation_table, or monitor the training series "
							 "(monitor=loss).");
	}
	if (!cfg->monitor_loss)
	{
		if (metric_name == NULL)
		{
			dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
						 "early_stopping monitors metric \"%s\", but compile_params has no metrics",
						 cfg->metric);
			return dl_error_hint(err, "Add metrics=['%s'] to compile_params, or monitor the "
								 "loss (monitor=validation_loss).", cfg->metric);
		}
		if (!same_metric(cfg->metric, metric_name))
		{
			dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
						 "early_stopping monitors metric \"%s\", but the model's metric is \"%s\"",
						 cfg->metric, metric_name);
			return dl_error_hint(err, "Monitor the metric compile_params names (monitor=%s%s), "
								 "or the loss.", cfg->validation ? "validation_" : "",
								 metric_name);
		}
	}
	if (cfg->mode == DL_EARLY_STOP_MAX)
		st->greater = true;
	else if (cfg->mode == DL_EARLY_STOP_MIN)
		st->greater = false;
	else
		st->greater = !cfg->monitor_loss && dl_early_stop_higher_is_better(cfg->metric);
	st->delta = st->greater ? cfg->min_delta : -cfg->min_delta;
	st->best = st->greater ? -INFINITY : INFINITY;
	return DL_OK;
}

DlStatus
dl_early_stop_begin_list(const DlEarlyStopConfig *cfg, const char *const *names, int n,
						 bool has_validation, DlEarlyStopState *st, DlError *err)
{
	int			found = -1;
	DlStatus	rc;

	if (cfg->enabled && !cfg->monitor_loss && n > 1)
	{
		for (int i = 0; i < n && found < 0; i++)
			if (same_metric(cfg->metric, names[i]))
				found = i;
		if (found < 0)
		{
			dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
						 "early_stopping monitors metric \"%s\", which is not among the %d metrics of compile_params",
						 cfg->metric, n);
			return dl_error_hint(err, "Monitor one of the metrics compile_params names (e.g. monitor=%s%s), "
								 "or the loss.", cfg->validation ? "validation_" : "", names[0]);
		}
	}
	rc = dl_early_stop_begin(cfg, n > 0 ? names[found < 0 ? 0 : found] : NULL, has_validation, st, err);
	st->metric_index = found < 0 ? 0 : found;
	return rc;
}

/* Keras' _is_improvement: monitor_op(value - delta, reference); false for NaN. */
static bool
improves(const DlEarlyStopState *st, double value, double reference)
{
	double		v = value - st->delta;

	return st->greater ? v > reference : v < reference;
}

DlEarlyStopAction
dl_early_stop_update(const DlEarlyStopConfig *cfg, DlEarlyStopState *st, int it, double value)
{
	DlEarlyStopAction a = {false, false};

	if (!cfg->enabled || st->stopped_iteration > 0 || it - 1 < cfg->start_from)
		return a;
	/* Keras keeps the weights of the first monitored epoch when none improves */
	if (st->points == 0)
	{
		a.save_best = true;
		st->best_iteration = it;
	}
	st->points++;
	st->wait++;
	if (improves(st, value, st->best))
	{
		st->best = value;
		st->best_iteration = it;
		a.save_best = true;
		if (!cfg->has_baseline || improves(st, value, cfg->baseline))
			st->wait = 0;
		return a;
	}
	if (st->wait >= cfg->patience && it > 1)
	{
		st->stopped_iteration = it;
		a.stop = true;
	}
	return a;
}

/* The shortest %.15g / %.17g form of v that reads back exactly. */
static void
format_double(char *buf, size_t len, double v)
{
	snprintf(buf, len, "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, len, "%.17g", v);
}

DlStatus
dl_early_stop_format(const DlEarlyStopConfig *cfg, char *buf, size_t len, DlError *err)
{
	char		delta[40];
	char		base[40];
	int			n;
	static const char *const modes[] = {"auto", "min", "max"};

	if (len > 0)
		buf[0] = '\0';
	if (!cfg->enabled)
		return DL_OK;
	format_double(delta, sizeof(delta), cfg->min_delta);
	if (cfg->has_baseline)
		format_double(base, sizeof(base), cfg->baseline);
	else
		snprintf(base, sizeof(base), "None");
	n = snprintf(buf, len,
				 "monitor=%s%s, patience=%d, min_delta=%s, mode=%s, baseline=%s, "
				 "restore_best=%s, start_from_epoch=%d",
				 cfg->validation ? "validation_" : "", cfg->monitor_loss ? "loss" : cfg->metric,
				 cfg->patience, delta, modes[cfg->mode], base,
				 cfg->restore_best ? "True" : "False", cfg->start_from);
	if (n < 0 || (size_t) n >= len)
	{
		if (len > 0)
			buf[len - 1] = '\0';
		return dl_error_set(err, DL_ERR_LIMIT, "early_stopping does not fit in %zu bytes", len);
	}
	return DL_OK;
}
