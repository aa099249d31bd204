/*-------------------------------------------------------------------------
 *
 * optim.c
 *	  Optimizers with tf.keras 2.x / Keras 2 semantics over a flat block.
 *
 * The state is n_slots float arrays of P floats each, laid out like the
 * parameter block, so an update is one flat loop per trainable range
 * (llm.c's gpt2_update).  Each element is updated in double and stored
 * as float; the loops run in index order, so results are deterministic.
 *
 * With t = iterations (updates applied before this one) and
 * lr_t = lr / (1 + decay * t), the rules are those listed in
 * docs/engine-training.md.  Gradient clipping happens first: clipnorm
 * scales every gradient in the ranges by c / max(norm, c), where norm is
 * the global L2 norm over all ranges computed in double (Keras 2.2 used a
 * global norm; tf.keras 2.x clips each variable separately), then
 * clipvalue clips each element to [-c, c].
 *
 * Slot order per optimizer:
 *	 SGD      [velocity]            (only with momentum > 0)
 *	 Adam     m, v [, vhat]         (vhat with amsgrad)
 *	 RMSprop  ms [, mom] [, mg]     (mom with momentum > 0, mg when centered)
 *	 Adagrad  acc
 *	 Adadelta acc, delta_acc
 *	 Adamax   m, u
 *	 Nadam    m, v
 *
 * IDENTIFICATION
 *	  src/engine/optim.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "madlib_dl/dl_optim.h"

static const char *const optim_names[] = {
	[DL_OPTIM_SGD] = "SGD",
	[DL_OPTIM_ADAM] = "Adam",
	[DL_OPTIM_RMSPROP] = "RMSprop",
	[DL_OPTIM_ADAGRAD] = "Adagrad",
	[DL_OPTIM_ADADELTA] = "Adadelta",
	[DL_OPTIM_ADAMAX] = "Adamax",
	[DL_OPTIM_NADAM] = "Nadam",
};

#define N_OPTIM ((int) (sizeof(optim_names) / sizeof(optim_names[0])))

/* Fill cfg with the tf.keras 2.x defaults of kind (see dl_optim.h). */
void
dl_optim_config_default(DlOptimConfig *cfg, DlOptimKind kind)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->kind = kind;
	cfg->lr = kind == DL_OPTIM_SGD ? 0.01 : 0.001;
	cfg->momentum = 0.0;
	cfg->nesterov = false;
	cfg->decay = 0.0;
	cfg->beta_1 = 0.9;
	cfg->beta_2 = 0.999;
	cfg->epsilon = 1e-7;
	cfg->amsgrad = false;
	cfg->rho = kind == DL_OPTIM_ADADELTA ? 0.95 : 0.9;
	cfg->centered = false;
	cfg->initial_accumulator_value = 0.1;
	cfg->schedule_decay = 0.004;
	cfg->clipnorm = 0.0;
	cfg->clipvalue = 0.0;
}

/* ASCII case-insensitive equality (no locale). */
static bool
name_eq_ci(const char *a, const char *b)
{
	for (; *a != '\0' && *b != '\0'; a++, b++)
	{
		int			ca = (unsigned char) *a,
					cb = (unsigned char) *b;

		if (ca >= 'A' && ca <= 'Z')
			ca += 'a' - 'A';
		if (cb >= 'A' && cb <= 'Z')
			cb += 'a' - 'A';
		if (ca != cb)
			return false;
	}
	return *a == '\0' && *b == '\0';
}

/* "SGD", "adam", "RMSProp", ...: case-insensitive Keras class names. */
DlStatus
dl_optim_kind_from_name(const char *name, DlOptimKind *out, DlError *err)
{
	DlError		scratch;

	if (err == NULL)
		err = &scratch;		/* so dl_error_hint returns the code */
	if (name != NULL)
	{
		for (int i = 0; i < N_OPTIM; i++)
		{
			if (name_eq_ci(name, optim_names[i]))
			{
				*out = (DlOptimKind) i;
				return DL_OK;
			}
		}
	}
	dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "optimizer \"%.200s\" is not supported",
				 name != NULL ? name : "(null)");
	return dl_error_hint(err, "Supported optimizers are SGD, Adam, RMSprop, Adagrad, "
						 "Adadelta, Adamax and Nadam.");
}

const char *
dl_optim_kind_name(DlOptimKind kind)
{
	if ((int) kind >= 0 && (int) kind < N_OPTIM)
		return optim_names[kind];
	return "unknown";
}

/* ---------------------------------------------------------------------
 * Learning-rate schedules (Keras' LearningRateSchedule classes)
 * --------------------------------------------------------------------- */

static const char *const schedule_names[] = {
	[DL_LR_CONSTANT] = "constant",
	[DL_LR_EXPONENTIAL] = "ExponentialDecay",
	[DL_LR_INVERSE_TIME] = "InverseTimeDecay",
	[DL_LR_PIECEWISE] = "PiecewiseConstantDecay",
	[DL_LR_POLYNOMIAL] = "PolynomialDecay",
	[DL_LR_COSINE] = "CosineDecay",
};

const char *
dl_lr_schedule_name(DlLrScheduleKind kind)
{
	if ((int) kind >= 0 && (int) kind < (int) (sizeof(schedule_names) / sizeof(schedule_names[0])))
		return schedule_names[kind];
	return "unknown";
}

double
dl_lr_schedule_value(const DlLrSchedule *s, int64_t step)
{
	double		t = (double) (step > 0 ? step : 0);
	double		p;

	switch (s->kind)
	{
		case DL_LR_CONSTANT:
			return s->initial;
		case DL_LR_EXPONENTIAL:
			p = t / s->decay_steps;
			return s->initial * pow(s->decay_rate, s->staircase ? floor(p) : p);
		case DL_LR_INVERSE_TIME:
			p = t / s->decay_steps;
			return s->initial / (1.0 + s->decay_rate * (s->staircase ? floor(p) : p));
		case DL_LR_PIECEWISE:
			for (int i = 0; i < s->n_boundaries; i++)
				if (t <= s->boundaries[i])
					return s->values[i];
			return s->values[s->n_boundaries];
		case DL_LR_POLYNOMIAL:
			{
				double		steps = s->decay_steps;

				if (s->cycle)
					steps *= t > 0.0 ? ceil(t / steps) : 1.0;
				else
					t = fmin(t, steps);
				return (s->initial - s->end_learning_rate) * pow(1.0 - t / steps, s->power) +
					s->end_learning_rate;
			}
		case DL_LR_COSINE:
			p = fmin(t, s->decay_steps) / s->decay_steps;
			return s->initial * ((1.0 - s->alpha) * 0.5 * (1.0 + cos(M_PI * p)) + s->alpha);
	}
	return s->initial;
}

/* "<what> of <schedule> must be <rule>, got <v>", with a hint. */
static DlStatus
bad_schedule(DlError *err, const DlLrSchedule *s, const char *what, const char *rule, double v)
{
	dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "%s of %s must be %s, got %g", what,
				 dl_lr_schedule_name(s->kind), rule, v);
	return dl_error_hint(err, "Give the schedule as Keras takes it, for example "
						 "learning_rate=ExponentialDecay(initial_learning_rate=0.01, "
						 "decay_steps=1000, decay_rate=0.9).");
}

static inline bool
positive(double v)				/* finite and > 0 */
{
	return isfinite(v) && v > 0.0;
}

DlStatus
dl_lr_schedule_validate(const DlLrSchedule *s, DlError *err)
{
	DlError		scratch;

	if (err == NULL)
		err = &scratch;		/* so dl_error_hint returns the code */
	if (s->kind == DL_LR_CONSTANT)
		return DL_OK;
	if (s->kind == DL_LR_PIECEWISE)
	{
		if (s->n_boundaries < 1 || s->n_boundaries > DL_LR_MAX_BOUNDARIES)
			return bad_schedule(err, s, "the number of boundaries", "1 to 32",
								(double) s->n_boundaries);
		for (int i = 0; i < s->n_boundaries; i++)
			if (!isfinite(s->boundaries[i]) || (i > 0 && s->boundaries[i] <= s->boundaries[i - 1]))
				return bad_schedule(err, s, "each boundary", "finite and larger than the one before",
									s->boundaries[i]);
		for (int i = 0; i <= s->n_boundaries; i++)
			if (!positive(s->values[i]))
				return bad_schedule(err, s, "each value", "positive", s->values[i]);
		return DL_OK;
	}
	if (!positive(s->initial))
		return bad_schedule(err, s, "initial_learning_rate", "positive", s->initial);
	if (!positive(s->decay_steps))
		return bad_schedule(err, s, "decay_steps", "positive", s->decay_steps);
	if (s->kind == DL_LR_EXPONENTIAL && !positive(s->decay_rate))
		return bad_schedule(err, s, "decay_rate", "positive", s->decay_rate);
	if (s->kind == DL_LR_INVERSE_TIME && !(isfinite(s->decay_rate) && s->decay_rate >= 0.0))
		return bad_schedule(err, s, "decay_rate", "non-negative", s->decay_rate);
	if (s->kind == DL_LR_POLYNOMIAL &&
		!(isfinite(s->end_learning_rate) && s->end_learning_rate >= 0.0))
		return bad_schedule(err, s, "end_learning_rate", "non-negative", s->end_learning_rate);
	if (s->kind == DL_LR_POLYNOMIAL && !positive(s->power))
		return bad_schedule(err, s, "power", "positive", s->power);
	if (s->kind == DL_LR_COSINE && !(s->alpha >= 0.0 && s->alpha <= 1.0))
		return bad_schedule(err, s, "alpha", "in [0, 1]", s->alpha);
	return DL_OK;
}

double
dl_optim_lr(const DlOptimState *st)
{
	const DlOptimConfig *c = &st->cfg;
	double		lr = c->schedule.kind == DL_LR_CONSTANT ? c->lr :
		dl_lr_schedule_value(&c->schedule, st->iterations);

	return st->lr_scale * lr / (1.0 + c->decay * (double) st->iterations);
}

/* Record "<what> must be <rule>, got <v>" with a hint. */
static DlStatus
bad_value(DlError *err, const char *what, const char *rule, double v, const char *hint)
{
	dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "%s must be %s, got %g", what, rule, v);
	return dl_error_hint(err, "%s", hint);
}

static inline bool
in_unit_interval(double v)		/* [0, 1) */
{
	return v >= 0.0 && v < 1.0;
}

static inline bool
non_negative(double v)			/* finite and >= 0 */
{
	return isfinite(v) && v >= 0.0;
}

/* Check every hyperparameter's range; the message names the bad value. */
DlStatus
dl_optim_config_validate(const DlOptimConfig *cfg, DlError *err)
{
	DlError		scratch;

	if (err == NULL)
		err = &scratch;		/* so dl_error_hint returns the code */
	if ((int) cfg->kind < 0 || (int) cfg->kind >= N_OPTIM)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "unknown optimizer kind %d", (int) cfg->kind);
		return dl_error_hint(err, "Use one of SGD, Adam, RMSprop, Adagrad, Adadelta, Adamax and Nadam.");
	}
	if (cfg->schedule.kind != DL_LR_CONSTANT)
	{
		DlStatus	rc = dl_lr_schedule_validate(&cfg->schedule, err);

		if (rc != DL_OK)
			return rc;
	}
	else if (!(isfinite(cfg->lr) && cfg->lr > 0.0))
		return bad_value(err, "learning rate", "positive", cfg->lr,
						 "Pass a positive finite learning rate, for example lr=0.001.");
	if (!in_unit_interval(cfg->momentum))
		return bad_value(err, "momentum", "in [0, 1)", cfg->momentum,
						 "Pass a momentum such as 0.9, or 0 for none.");
	if (!in_unit_interval(cfg->beta_1))
		return bad_value(err, "beta_1", "in [0, 1)", cfg->beta_1,
						 "Pass beta_1 such as 0.9.");
	if (!in_unit_interval(cfg->beta_2))
		return bad_value(err, "beta_2", "in [0, 1)", cfg->beta_2,
						 "Pass beta_2 such as 0.999.");
	if (!in_unit_interval(cfg->rho))
		return bad_value(err, "rho", "in [0, 1)", cfg->rho,
						 "Pass rho such as 0.9 (RMSprop) or 0.95 (Adadelta).");
	if (!non_negative(cfg->epsilon))
		return bad_value(err, "epsilon", "non-negative", cfg->epsilon,
						 "Pass a small epsilon such as 1e-7, or None for the default.");
	if (!non_negative(cfg->decay))
		return bad_value(err, "decay", "non-negative", cfg->decay,
						 "Pass decay=0 for a constant learning rate.");
	if (!non_negative(cfg->initial_accumulator_value))
		return bad_value(err, "initial_accumulator_value", "non-negative",
						 cfg->initial_accumulator_value,
						 "Pass initial_accumulator_value such as 0.1.");
	if (!non_negative(cfg->schedule_decay))
		return bad_value(err, "schedule_decay", "non-negative", cfg->schedule_decay,
						 "Pass schedule_decay such as 0.004.");
	if (!non_negative(cfg->clipnorm))
		return bad_value(err, "clipnorm", "non-negative", cfg->clipnorm,
						 "Pass a positive clipnorm, or 0 for no clipping.");
	if (!non_negative(cfg->clipvalue))
		return bad_value(err, "clipvalue", "non-negative", cfg->clipvalue,
						 "Pass a positive clipvalue, or 0 for no clipping.");
	return DL_OK;
}

int
dl_optim_n_slots(const DlOptimConfig *cfg)
{
	switch (cfg->kind)
	{
		case DL_OPTIM_SGD:
			return cfg->momentum > 0.0 ? 1 : 0;
		case DL_OPTIM_ADAM:
			return cfg->amsgrad ? 3 : 2;
		case DL_OPTIM_RMSPROP:
			return 1 + (cfg->momentum > 0.0 ? 1 : 0) + (cfg->centered ? 1 : 0);
		case DL_OPTIM_ADAGRAD:
			return 1;
		case DL_OPTIM_ADADELTA:
		case DL_OPTIM_ADAMAX:
		case DL_OPTIM_NADAM:
			return 2;
	}
	return 0;
}

/*
 * Validate cfg and allocate n_slots * P zeroed floats (Adagrad's
 * accumulator starts at initial_accumulator_value).  On failure st holds
 * nothing to free.
 */
DlStatus
dl_optim_state_init(DlOptimState *st, const DlOptimConfig *cfg, size_t n_params,
					const DlAllocator *alloc, DlError *err)
{
	DlStatus	rc;
	size_t		n;
	DlError		scratch;

	if (err == NULL)
		err = &scratch;		/* so dl_error_hint returns the code */
	memset(st, 0, sizeof(*st));
	rc = dl_optim_config_validate(cfg, err);
	if (rc != DL_OK)
		return rc;
	st->cfg = *cfg;
	st->n_params = n_params;
	st->n_slots = dl_optim_n_slots(cfg);
	st->iterations = 0;
	st->m_schedule = 1.0;
	st->lr_scale = 1.0;
	if (st->n_slots == 0 || n_params == 0)
		return DL_OK;
	if (!dl_size_mul((size_t) st->n_slots, n_params, &n))
	{
		dl_error_set(err, DL_ERR_LIMIT, "optimizer state of %d slots for %zu parameters overflows",
					 st->n_slots, n_params);
		return dl_error_hint(err, "Use a smaller model.");
	}
	st->slots = dl_alloc_array(alloc, n, sizeof(float), err);
	if (st->slots == NULL)
		return err->code;
	if (cfg->kind == DL_OPTIM_ADAGRAD)
	{
		for (size_t i = 0; i < n_params; i++)
			st->slots[i] = (float) cfg->initial_accumulator_value;
	}
	return DL_OK;
}

void
dl_optim_state_free(DlOptimState *st, const DlAllocator *alloc)
{
	if (st == NULL)
		return;
	dl_free(alloc, st->slots);
	st->slots = NULL;
	st->n_slots = 0;
}

/* Range [begin, end) clamped to the block; false when empty. */
static inline bool
range_clamp(const DlParamRange *r, size_t P, size_t *b, size_t *e)
{
	*b = r->begin;
	*e = r->end < P ? r->end : P;
	return *b < *e;
}

/* clipnorm (global) then clipvalue, over the ranges only.  grads (P) */
static void
clip_gradients(const DlOptimConfig *cfg, float *grads, size_t P,
			   const DlParamRange *ranges, int n_ranges)
{
	size_t		b,
				e;

	if (cfg->clipnorm > 0.0)
	{
		double		sq = 0;

		for (int r = 0; r < n_ranges; r++)
			if (range_clamp(&ranges[r], P, &b, &e))
				for (size_t i = b; i < e; i++)
					sq += (double) grads[i] * (double) grads[i];
		/* scale by c / max(norm, c); NaN norms are left to the caller */
		if (sqrt(sq) > cfg->clipnorm)
		{
			double		scale = cfg->clipnorm / sqrt(sq);

			for (int r = 0; r < n_ranges; r++)
				if (range_clamp(&ranges[r], P, &b, &e))
					for (size_t i = b; i < e; i++)
						grads[i] = (float) ((double) grads[i] * scale);
		}
	}
	if (cfg->clipvalue > 0.0)
	{
		float		c = (float) cfg->clipvalue;

		for (int r = 0; r < n_ranges; r++)
			if (range_clamp(&ranges[r], P, &b, &e))
				for (size_t i = b; i < e; i++)
				{
					if (grads[i] > c)
						grads[i] = c;
					else if (grads[i] < -c)
						grads[i] = -c;
				}
	}
}

/*
 * One update over [b, e) for every optimizer.  The step-wide scalars
 * (lr_t, bias corrections, Nadam schedule) are computed once by the
 * caller.  p, g (P); slot s is st->slots + s * P.
 */
typedef struct StepScalars
{
	double		lr_t;			/* lr / (1 + decay * t) */
	double		adam_lr;		/* Adam: lr_t * sqrt(1 - b2^t) / (1 - b1^t) */
	double		adamax_lr;		/* Adamax: lr_t / (1 - b1^t) */
	double		mu_t,			/* Nadam */
				mu_t1,
				m_sched_new,
				m_sched_next,
				v_corr;			/* Nadam: 1 - b2^t */
} StepScalars;

static void
step_range(DlOptimState *st, const StepScalars *k, float *p, const float *g,
		   size_t b, size_t e)
{
	const DlOptimConfig *c = &st->cfg;
	size_t		P = st->n_params;
	float	   *s0 = st->slots;
	float	   *s1 = st->n_slots > 1 ? st->slots + P : NULL;
	float	   *s2 = st->n_slots > 2 ? st->slots + 2 * P : NULL;
	double		eps = c->epsilon;

	switch (c->kind)
	{
		case DL_OPTIM_SGD:
			if (c->momentum <= 0.0)
			{
				for (size_t i = b; i < e; i++)
					p[i] = (float) ((double) p[i] - k->lr_t * (double) g[i]);
			}
			else if (!c->nesterov)
			{
				/*
				 * Loop invariants in locals: with -fno-strict-aliasing
				 * (PGXS) the float stores could alias *c and *k, which
				 * kept this loop from vectorizing (same bits either way).
				 */
				const double mom = c->momentum;
				const double lr = k->lr_t;

				for (size_t i = b; i < e; i++)
				{
					double		v = mom * (double) s0[i] - lr * (double) g[i];

					s0[i] = (float) v;
					p[i] = (float) ((double) p[i] + v);
				}
			}
			else
			{
				/* Nesterov momentum: the step looks ahead along v. */
				for (size_t i = b; i < e; i++)
				{
					double		v = c->momentum * (double) s0[i] - k->lr_t * (double) g[i];

					s0[i] = (float) v;
					p[i] = (float) ((double) p[i] + c->momentum * v - k->lr_t * (double) g[i]);
				}
			}
			break;

		case DL_OPTIM_ADAM:
			if (!c->amsgrad)
			{
				/*
				 * Loop invariants in locals (see SGD above) so the loop
				 * vectorizes; with -fno-math-errno sqrt is the vector
				 * instruction.  Same expressions, so the same bits as the
				 * general loop below.
				 */
				const double b1 = c->beta_1;
				const double b2 = c->beta_2;
				const double one_b1 = 1.0 - c->beta_1;
				const double one_b2 = 1.0 - c->beta_2;
				const double lr = k->adam_lr;

				for (size_t i = b; i < e; i++)
				{
					double		gi = (double) g[i];
					double		m = b1 * (double) s0[i] + one_b1 * gi;
					double		v = b2 * (double) s1[i] + one_b2 * gi * gi;

					s0[i] = (float) m;
					s1[i] = (float) v;
					p[i] = (float) ((double) p[i] - lr * m / (sqrt(v) + eps));
				}
				break;
			}
			for (size_t i = b; i < e; i++)
			{
				double		gi = (double) g[i];
				double		m = c->beta_1 * (double) s0[i] + (1.0 - c->beta_1) * gi;
				double		v = c->beta_2 * (double) s1[i] + (1.0 - c->beta_2) * gi * gi;
				double		vu = v;

				s0[i] = (float) m;
				s1[i] = (float) v;
				if (c->amsgrad)
				{
					vu = fmax((double) s2[i], v);
					s2[i] = (float) vu;
				}
				p[i] = (float) ((double) p[i] - k->adam_lr * m / (sqrt(vu) + eps));
			}
			break;

		case DL_OPTIM_RMSPROP:
			{
				float	   *mom = c->momentum > 0.0 ? s1 : NULL;
				float	   *mg = c->centered ? (mom != NULL ? s2 : s1) : NULL;

				for (size_t i = b; i < e; i++)
				{
					double		gi = (double) g[i];
					double		ms = c->rho * (double) s0[i] + (1.0 - c->rho) * gi * gi;
					double		denom = ms;

					s0[i] = (float) ms;
					if (mg != NULL)
					{
						double		a = c->rho * (double) mg[i] + (1.0 - c->rho) * gi;

						mg[i] = (float) a;
						denom = ms - a * a;
					}
					if (mom != NULL)
					{
						/* TensorFlow's ApplyRMSProp kernel: epsilon inside the root */
						double		mo = c->momentum * (double) mom[i] +
							k->lr_t * gi / sqrt(denom + eps);

						mom[i] = (float) mo;
						p[i] = (float) ((double) p[i] - mo);
					}
					else
						p[i] = (float) ((double) p[i] - k->lr_t * gi / (sqrt(denom) + eps));
				}
			}
			break;

		case DL_OPTIM_ADAGRAD:
			for (size_t i = b; i < e; i++)
			{
				double		gi = (double) g[i];
				double		acc = (double) s0[i] + gi * gi;

				s0[i] = (float) acc;
				p[i] = (float) ((double) p[i] - k->lr_t * gi / (sqrt(acc) + eps));
			}
			break;

		case DL_OPTIM_ADADELTA:
			for (size_t i = b; i < e; i++)
			{
				double		gi = (double) g[i];
				double		acc = c->rho * (double) s0[i] + (1.0 - c->rho) * gi * gi;
				double		upd = gi * sqrt((double) s1[i] + eps) / sqrt(acc + eps);

				s0[i] = (float) acc;
				p[i] = (float) ((double) p[i] - k->lr_t * upd);
				s1[i] = (float) (c->rho * (double) s1[i] + (1.0 - c->rho) * upd * upd);
			}
			break;

		case DL_OPTIM_ADAMAX:
			for (size_t i = b; i < e; i++)
			{
				double		gi = (double) g[i];
				double		m = c->beta_1 * (double) s0[i] + (1.0 - c->beta_1) * gi;
				double		u = fmax(c->beta_2 * (double) s1[i], fabs(gi));

				s0[i] = (float) m;
				s1[i] = (float) u;
				p[i] = (float) ((double) p[i] - k->adamax_lr * m / (u + eps));
			}
			break;

		case DL_OPTIM_NADAM:
			for (size_t i = b; i < e; i++)
			{
				double		gi = (double) g[i];
				double		g_prime = gi / (1.0 - k->m_sched_new);
				double		m = c->beta_1 * (double) s0[i] + (1.0 - c->beta_1) * gi;
				double		m_prime = m / (1.0 - k->m_sched_next);
				double		v = c->beta_2 * (double) s1[i] + (1.0 - c->beta_2) * gi * gi;
				double		v_prime = v / k->v_corr;
				double		m_bar = (1.0 - k->mu_t) * g_prime + k->mu_t1 * m_prime;

				s0[i] = (float) m;
				s1[i] = (float) v;
				p[i] = (float) ((double) p[i] - k->lr_t * m_bar / (sqrt(v_prime) + eps));
			}
			break;
	}
}

/*
 * Apply one update over the ranges (clamped to the block), then count
 * it.  The caller has initialised st with dl_optim_state_init.
 */
void
dl_optim_step(DlOptimState *st, float *params, float *grads,
			  const DlParamRange *ranges, int n_ranges)
{
	const DlOptimConfig *c = &st->cfg;
	double		t = (double) st->iterations + 1.0;	/* this update's number */
	StepScalars k;
	size_t		b,
				e;

	memset(&k, 0, sizeof(k));
	clip_gradients(c, grads, st->n_params, ranges, n_ranges);

	k.lr_t = dl_optim_lr(st);
	k.adam_lr = k.lr_t * sqrt(1.0 - pow(c->beta_2, t)) / (1.0 - pow(c->beta_1, t));
	k.adamax_lr = k.lr_t / (1.0 - pow(c->beta_1, t));
	if (c->kind == DL_OPTIM_NADAM)
	{
		k.mu_t = c->beta_1 * (1.0 - 0.5 * pow(0.96, t * c->schedule_decay));
		k.mu_t1 = c->beta_1 * (1.0 - 0.5 * pow(0.96, (t + 1.0) * c->schedule_decay));
		k.m_sched_new = st->m_schedule * k.mu_t;
		k.m_sched_next = k.m_sched_new * k.mu_t1;
		k.v_corr = 1.0 - pow(c->beta_2, t);
	}

	for (int r = 0; r < n_ranges; r++)
		if (range_clamp(&ranges[r], st->n_params, &b, &e))
			step_range(st, &k, params, grads, b, e);

	if (c->kind == DL_OPTIM_NADAM)
		st->m_schedule = k.m_sched_new;
	st->iterations++;
}
