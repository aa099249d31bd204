/*-------------------------------------------------------------------------
 *
 * dl_optim.h
 *	  Optimizers with Keras semantics and defaults, over a flat block.
 *
 * The optimizer state is n_slots float arrays laid out exactly like the
 * parameter block, so one update is a flat loop over the trainable ranges.
 * Defaults follow tf.keras 2.x (docs/engine-training.md lists them):
 *	 SGD      lr 0.01, momentum 0, nesterov false
 *	 Adam     lr 0.001, beta_1 0.9, beta_2 0.999, epsilon 1e-7, amsgrad false
 *	 RMSprop  lr 0.001, rho 0.9, momentum 0, epsilon 1e-7
 *	 Adagrad  lr 0.001, initial_accumulator_value 0.1, epsilon 1e-7
 *	 Adadelta lr 0.001, rho 0.95, epsilon 1e-7
 *	 Adamax   lr 0.001, beta_1 0.9, beta_2 0.999, epsilon 1e-7
 *	 Nadam    lr 0.001, beta_1 0.9, beta_2 0.999, epsilon 1e-7, schedule_decay 0.004
 * Every optimizer honours the legacy "decay": lr_t = lr / (1 + decay * t),
 * and clipnorm / clipvalue when positive.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_optim.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_OPTIM_H
#define DL_OPTIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_status.h"

typedef enum DlOptimKind
{
	DL_OPTIM_SGD = 0,
	DL_OPTIM_ADAM,
	DL_OPTIM_RMSPROP,
	DL_OPTIM_ADAGRAD,
	DL_OPTIM_ADADELTA,
	DL_OPTIM_ADAMAX,
	DL_OPTIM_NADAM
} DlOptimKind;

/*
 * A Keras LearningRateSchedule (keras.optimizers.schedules), counted in
 * optimizer steps as Keras counts them: the update that follows
 * `iterations` earlier updates uses the schedule's value at step =
 * iterations (0 for the first).  With p = step / decay_steps (floored
 * when staircase):
 *	 ExponentialDecay        initial * decay_rate ^ p
 *	 InverseTimeDecay        initial / (1 + decay_rate * p)
 *	 PiecewiseConstantDecay  values[0] while step <= boundaries[0],
 *	                         values[i] while boundaries[i-1] < step <=
 *	                         boundaries[i], values[n] after boundaries[n-1]
 *	 PolynomialDecay         (initial - end) * (1 - min(step, decay_steps)
 *	                         / decay_steps) ^ power + end; with cycle,
 *	                         decay_steps is multiplied by ceil(step /
 *	                         decay_steps) (1 at step 0)
 *	 CosineDecay             initial * ((1 - alpha) * 0.5 * (1 + cos(pi *
 *	                         min(step, decay_steps) / decay_steps)) + alpha)
 * The legacy decay applies on top, as in tf.keras: lr_t = schedule(t) /
 * (1 + decay * t).
 */
typedef enum DlLrScheduleKind
{
	DL_LR_CONSTANT = 0,			/* lr, no schedule */
	DL_LR_EXPONENTIAL,
	DL_LR_INVERSE_TIME,
	DL_LR_PIECEWISE,
	DL_LR_POLYNOMIAL,
	DL_LR_COSINE
} DlLrScheduleKind;

/* Most boundaries of a PiecewiseConstantDecay. */
#define DL_LR_MAX_BOUNDARIES 32

typedef struct DlLrSchedule
{
	DlLrScheduleKind kind;
	double		initial;		/* initial_learning_rate */
	double		decay_steps;	/* > 0 */
	double		decay_rate;		/* Exponential, InverseTime */
	bool		staircase;		/* Exponential, InverseTime */
	double		end_learning_rate;	/* Polynomial */
	double		power;			/* Polynomial */
	bool		cycle;			/* Polynomial */
	double		alpha;			/* Cosine */
	int			n_boundaries;	/* Piecewise: boundaries */
	int			n_values;		/* and values: n_boundaries + 1 */
	double		boundaries[DL_LR_MAX_BOUNDARIES];
	double		values[DL_LR_MAX_BOUNDARIES + 1];
} DlLrSchedule;

typedef struct DlOptimConfig
{
	DlOptimKind kind;
	double		lr;				/* "lr" or "learning_rate"; with a schedule,
								 * its value at step 0 */
	DlLrSchedule schedule;		/* "learning_rate" given as a schedule; kind
								 * DL_LR_CONSTANT otherwise */
	double		momentum;		/* SGD, RMSprop */
	bool		nesterov;		/* SGD */
	double		decay;			/* legacy time-based decay, all */
	double		beta_1;			/* Adam, Adamax, Nadam */
	double		beta_2;
	double		epsilon;
	bool		amsgrad;		/* Adam */
	double		rho;			/* RMSprop, Adadelta */
	bool		centered;		/* RMSprop */
	double		initial_accumulator_value;	/* Adagrad */
	double		schedule_decay; /* Nadam */
	double		clipnorm;		/* > 0: clip the global gradient norm */
	double		clipvalue;		/* > 0: clip each gradient element */
} DlOptimConfig;

/* A slice [begin, end) of the parameter block that the optimizer updates. */
typedef struct DlParamRange
{
	size_t		begin;
	size_t		end;
} DlParamRange;

typedef struct DlOptimState
{
	DlOptimConfig cfg;
	size_t		n_params;		/* P */
	int			n_slots;
	int64_t		iterations;		/* updates applied so far */
	double		m_schedule;		/* Nadam's running momentum product, 1 at start */
	double		lr_scale;		/* the learning rate is multiplied by it: 1
								 * but during a round of fit with
								 * lr_scaling (dl_visit.h); not saved */
	float	   *slots;			/* (n_slots, P), zero or initial_accumulator_value */
} DlOptimState;

/* Fill cfg with the defaults of kind. */
void		dl_optim_config_default(DlOptimConfig *cfg, DlOptimKind kind);

/* "SGD", "Adam", ... (case-insensitive match of Keras class names). */
DlStatus	dl_optim_kind_from_name(const char *name, DlOptimKind *out, DlError *err);
const char *dl_optim_kind_name(DlOptimKind kind);

/* The Keras class name of a schedule kind ("ExponentialDecay", ...). */
const char *dl_lr_schedule_name(DlLrScheduleKind kind);

/* The schedule's learning rate at optimizer step `step` (>= 0). */
double		dl_lr_schedule_value(const DlLrSchedule *s, int64_t step);

/*
 * Check a schedule's values (DL_ERR_INVALID_ARGUMENT naming the bad
 * one): a positive initial rate and decay_steps, decay_rate > 0
 * (exponential) or >= 0 (inverse time), increasing boundaries and
 * positive values, ...  DL_LR_CONSTANT is always valid.
 */
DlStatus	dl_lr_schedule_validate(const DlLrSchedule *s, DlError *err);

/*
 * The learning rate of the next update of st: the schedule's value (or
 * lr) at step st->iterations, over 1 + decay * iterations, times
 * st->lr_scale.
 */
double		dl_optim_lr(const DlOptimState *st);

/* Check ranges: lr > 0, 0 <= momentum < 1, 0 <= beta < 1, epsilon >= 0, ... */
DlStatus	dl_optim_config_validate(const DlOptimConfig *cfg, DlError *err);

/* Number of state floats per parameter (SGD: 1 with momentum, else 0; Adam: 2, 3 with amsgrad; ...). */
int			dl_optim_n_slots(const DlOptimConfig *cfg);

/* Allocate zeroed state (Adagrad: initial_accumulator_value) for P params. */
DlStatus	dl_optim_state_init(DlOptimState *st, const DlOptimConfig *cfg, size_t n_params,
								const DlAllocator *alloc, DlError *err);

void		dl_optim_state_free(DlOptimState *st, const DlAllocator *alloc);

/*
 * Apply one update to params over the given ranges, using grads (same
 * layout), then increment iterations.  Parameters outside the ranges are
 * untouched.  grads may be modified (clipping).
 *
 *	 params (P)  grads (P)
 */
void		dl_optim_step(DlOptimState *st, float *params, float *grads,
						  const DlParamRange *ranges, int n_ranges);

#endif							/* DL_OPTIM_H */
