/*-------------------------------------------------------------------------
 *
 * dl_automl.h
 *	  The searches of madlib_keras_automl: Hyperband, Hyperopt (TPE or
 *	  random) and asynchronous successive halving (ASHA), as schedulers
 *	  that say which configuration trains for how many iterations next.
 *
 * A search works on a search space (dl_model_select.h): configuration c
 * is a point of it.  It never trains anything; its caller (the
 * madlib_keras_automl driver, src/pg/api/automl.c) runs the jobs it
 * gives on the model hopper and reports each job's score back:
 *
 *	 dl_automl_create(&params, space, n_workers, ...);
 *	 loop:
 *	     while dl_automl_next(a, &job): start job (config, iterations)
 *	     run until some jobs end; for each one that ended, in order of
 *	         configuration: dl_automl_report(a, config, score)
 *	 until nothing runs and dl_automl_next gives nothing
 *
 * A score is lower-better (the validation loss, else the training loss);
 * NaN (a diverged model) ranks last, never goes on to a next rung, and
 * of equal scores the one reported first ranks first (in Hyperband the
 * lower configuration).
 * The decisions depend only on the scores and the order of the calls, so
 * a caller that reports at fixed points of its own clock (the hopper's
 * iterations) gets the same search whatever the speed of its workers.
 *
 * HYPERBAND (Li et al., 2018), with MADlib's schedule (hyperband_schedule):
 * s_max = floor(log_eta(R)); bracket s (s_max down to skip_last) starts
 * n = floor((s_max + 1) / (s + 1)) * eta^s configurations at
 * r = R * eta^-s iterations; its round i keeps n_i = floor(n * eta^-i) of
 * them and trains them to r_i = round(r * eta^i) iterations in all, for
 * i = 0 .. s - skip_last.  Every bracket starts at once; a round's
 * survivors (the best n_{i+1} by score) go on from their weights, for
 * r_{i+1} - r_i more iterations.  Configurations are numbered bracket by
 * bracket, s_max first, as MADlib numbers its mst_keys.
 *
 * ASHA (Li et al., 2020): rungs k = 0 .. s_max at r_k = round(R *
 * eta^(k - s_max)) iterations.  At most n_workers jobs run at once.  When
 * one may start, the highest rung k < s_max that has a configuration in
 * the top floor(n_k / eta) of the n_k finished at rung k, not yet
 * promoted, promotes its best one to rung k + 1; otherwise a new
 * configuration starts at rung 0, until num_configs have started.
 *
 * HYPEROPT: num_configs configurations, each trained num_iterations, in
 * batches of n_workers (the last one smaller): a batch starts when the
 * previous one has ended.  algorithm=rand draws each as random search
 * does; algorithm=tpe draws the first n_startup = max(1, min(20,
 * num_configs / 4)) at random and proposes the others by TPE (below)
 * from every configuration before it, those of its own batch (still
 * running) with an infinite loss, as hyperopt's tpe.suggest counts
 * running trials.  (Hyperopt starts TPE after 20 random trials; with a
 * budget of 20 to 100 configurations that would leave TPE little or
 * nothing, hence num_configs / 4.)
 *
 * Configuration c's random draws use the generator dl_search_space_seed
 * gives for (random_state, c): Hyperband's and ASHA's configurations, and
 * Hyperopt's random ones, are random search's rows for that random_state.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_automl.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_AUTOML_H
#define DL_AUTOML_H

#include <stdbool.h>
#include <stdint.h>

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_model_select.h"
#include "madlib_dl/dl_rng.h"
#include "madlib_dl/dl_status.h"

/* Most configurations of one search (fit_multiple's limit). */
#define DL_AUTOML_MAX_CONFIGS 1024

/* Most iterations one configuration may be given (R, num_iterations). */
#define DL_AUTOML_MAX_ITERATIONS 100000

typedef enum DlAutomlMethod
{
	DL_AUTOML_HYPERBAND,
	DL_AUTOML_HYPEROPT,
	DL_AUTOML_ASHA
} DlAutomlMethod;

typedef enum DlAutomlAlgorithm
{
	DL_AUTOML_TPE,
	DL_AUTOML_RAND
} DlAutomlAlgorithm;

typedef struct DlAutomlParams
{
	DlAutomlMethod method;
	int			R;				/* HYPERBAND, ASHA: most iterations of a configuration */
	int			eta;			/* HYPERBAND, ASHA: >= 2 */
	int			skip_last;		/* HYPERBAND: rounds left out of each bracket */
	int			num_configs;	/* HYPEROPT, ASHA */
	int			num_iterations; /* HYPEROPT */
	DlAutomlAlgorithm algorithm;	/* HYPEROPT */
} DlAutomlParams;

/*
 * 'hyperband', 'hyperopt' or 'asha', in any case.  DL_ERR_INVALID_ARGUMENT
 * otherwise.
 */
DlStatus	dl_automl_method_from_name(const char *name, DlAutomlMethod *out, DlError *err);

/* The method's name, and its default parameters (MADlib's for the first two). */
const char *dl_automl_method_name(DlAutomlMethod m);
const char *dl_automl_default_params(DlAutomlMethod m);

/*
 * Parse automl_params, "key=value, ..." as MADlib writes it (NULL or
 * blank: the defaults), for method into *out, and check it:
 *	 hyperband  R, eta, skip_last (names as written: R is upper case)
 *	 hyperopt   num_configs, num_iterations, algorithm (tpe or rand)
 *	 asha       R, eta, num_configs
 * Keys not given keep their defaults.  DL_ERR_PARSE or
 * DL_ERR_INVALID_ARGUMENT naming the key and value, DL_ERR_LIMIT past
 * DL_AUTOML_MAX_CONFIGS configurations or DL_AUTOML_MAX_ITERATIONS.
 */
DlStatus	dl_automl_params_parse(DlAutomlMethod method, const char *text, DlAutomlParams *out,
								   DlError *err);

/* The most iterations a configuration trains under p. */
int			dl_automl_max_iterations(const DlAutomlParams *p);

/* The configurations a search under p creates at most. */
int			dl_automl_max_configs(const DlAutomlParams *p);

/* ---------------------------------------------------------------------
 * Hyperband's schedule (MADlib's hyperband_schedule)
 * --------------------------------------------------------------------- */

typedef struct DlHyperbandRound
{
	int			s;				/* the bracket */
	int			i;				/* the round */
	int			n_i;			/* configurations */
	int			r_i;			/* iterations each, in all */
} DlHyperbandRound;

/* Most rows of a schedule: (s_max + 1)(s_max + 2) / 2 with s_max <= 30. */
#define DL_HYPERBAND_MAX_ROUNDS 496

/*
 * Check R, eta and skip_last as MADlib does (eta > 1, R >= eta, 0 <=
 * skip_last <= s_max; R at most DL_AUTOML_MAX_ITERATIONS and at most
 * DL_AUTOML_MAX_CONFIGS configurations in all) and write the rounds,
 * bracket s_max first, round 0 first, into rows (room for
 * DL_HYPERBAND_MAX_ROUNDS); *n rows.  *s_max too (may be NULL).
 */
DlStatus	dl_hyperband_schedule(int R, int eta, int skip_last, DlHyperbandRound *rows, int *n,
								  int *s_max, DlError *err);

/* ---------------------------------------------------------------------
 * TPE: the Tree-structured Parzen Estimator (Bergstra et al., 2011), as
 * hyperopt 0.2's tpe.suggest computes it
 * --------------------------------------------------------------------- */

typedef struct DlTpeOptions
{
	double		gamma;			/* share of the observations that are "good": 0.25 */
	int			n_ei_candidates;	/* draws scored per dimension: 24 */
	double		prior_weight;	/* weight of the prior: 1.0 */
	int			linear_forgetting;	/* observations at full weight: 25 */
} DlTpeOptions;

/* Hyperopt's defaults. */
void		dl_tpe_default_options(DlTpeOptions *o);

/*
 * Propose point out (n_dims) of space s from n observed points (n,
 * n_dims; NaN in inactive dimensions) and their losses (NaN ranks last),
 * in the order they were observed.  The best n_below = min(ceil(gamma *
 * sqrt(n)), linear_forgetting) observations make the "below" density l,
 * the others the "above" density g; each active dimension, in order,
 * takes the candidate of n_ei_candidates drawn from l with the largest
 * log l - log g.  Choices use smoothed counts (prior weight on each
 * choice); ranges, in the coordinate where they are uniform, a Parzen
 * mixture of truncated normals with the prior N(middle, width) (as in
 * hyperopt, a log range's densities are not renormalized to the range).
 * Losses may be infinite (running trials).  All draws come from rng.
 * Scratch memory from alloc.
 */
DlStatus	dl_tpe_suggest(const DlSearchSpace *s, const double *points, const double *losses,
						   int n, const DlTpeOptions *o, DlRng *rng, double *out,
						   const DlAllocator *alloc, DlError *err);

/* ---------------------------------------------------------------------
 * The scheduler
 * --------------------------------------------------------------------- */

typedef struct DlAutoml DlAutoml;

/* A job: train configuration `config` for `iterations` more. */
typedef struct DlAutomlJob
{
	int			config;			/* 0-based */
	int			bracket;		/* HYPERBAND: s; -1 otherwise */
	int			rung;			/* HYPERBAND: round i; ASHA: rung; HYPEROPT: 0 */
	int			iterations;		/* to train now, >= 1 */
	int			total;			/* the configuration's iterations when it ends */
} DlAutomlJob;

/* A finished job and what became of it. */
typedef struct DlAutomlRecord
{
	int			config;
	int			bracket;
	int			rung;
	int			total;			/* iterations trained in all */
	double		score;
	bool		promoted;		/* continued to the next rung (or round) */
} DlAutomlRecord;

/*
 * A search under p over space s (which must outlive it) with n_workers
 * (>= 1: the segments) running jobs.  random_state seeds the draws when
 * has_random_state, else entropy does.  Hyperband's and ASHA's
 * configurations, and Hyperopt's with algorithm=rand, are all drawn here
 * (dl_automl_point); TPE's are proposed as their batches start.
 */
DlStatus	dl_automl_create(const DlAutomlParams *p, const DlSearchSpace *s, int n_workers,
							 bool has_random_state, int64_t random_state, uint64_t entropy,
							 const DlAllocator *alloc, DlAutoml **out, DlError *err);

void		dl_automl_free(DlAutoml *a);

/*
 * The next job to start now into *job, true; false when none may start
 * until more jobs are reported (or ever).  A TPE proposal may fail
 * (memory): then false with *err set (err->code != DL_OK).
 */
bool		dl_automl_next(DlAutoml *a, DlAutomlJob *job, DlError *err);

/* The running job of config ended with score (lower is better, NaN last). */
void		dl_automl_report(DlAutoml *a, int config, double score);

/* Jobs running (started, not reported). */
int			dl_automl_running(const DlAutoml *a);

/* Configurations created so far (numbered 0..n-1), and at most. */
int			dl_automl_n_configs(const DlAutoml *a);
int			dl_automl_capacity(const DlAutoml *a);

/* Whether every configuration is known at creation (all but TPE). */
bool		dl_automl_configs_known(const DlAutoml *a);

/* Configuration c's point (dl_search_space_n_dims doubles). */
const double *dl_automl_point(const DlAutoml *a, int c);

/* Configuration c's bracket (HYPERBAND) or -1. */
int			dl_automl_bracket(const DlAutoml *a, int c);

/* The finished jobs, in the order they were reported. */
int			dl_automl_n_records(const DlAutoml *a);
const DlAutomlRecord *dl_automl_record(const DlAutoml *a, int i);

/* Iterations of all jobs together under p at most: the work planned. */
int64_t		dl_automl_planned_work(const DlAutoml *a);

#endif							/* DL_AUTOML_H */
