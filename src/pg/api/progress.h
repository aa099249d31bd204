/*-------------------------------------------------------------------------
 *
 * progress.h
 *	  Live progress of fit and fit_multiple in shared memory, read by the
 *	  view madlib_dl.fit_progress from any session.
 *
 * When madlib_dl is in shared_preload_libraries, the postmaster reserves
 * DL_PROGRESS_SLOTS fixed-size slots.  A training run takes one slot with
 * dl_progress_begin, rewrites it with dl_progress_update after every
 * iteration (or model), and frees it with dl_progress_end.  Nothing is
 * written to tables, so another session sees each update at once, not at
 * commit.  A slot is also freed when the (sub)transaction that took it
 * aborts (ERROR, cancel) or the backend exits, so a cancelled run leaves
 * no stale row.
 *
 * When the library is not preloaded there is no shared memory: every
 * function here is a no-op and the view is empty.  The functions are for
 * the leader process only (never call them in a parallel worker) and one
 * run per backend is tracked at a time: a second dl_progress_begin before
 * dl_progress_end replaces the first.
 *
 * Typical use (three lines in a training loop):
 *
 *	  dl_progress_begin("fit", dl_progress_relname(source), NULL, n_iter, 1);
 *	  for (it = 1; it <= n_iter; it++)
 *	  {
 *		  ... train ...
 *		  dl_progress_update(it, 1, metric_or_nan, dl_pg_seconds_since(start), -1);
 *	  }
 *	  dl_progress_end();
 *
 * IDENTIFICATION
 *	  src/pg/api/progress.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PROGRESS_H
#define PROGRESS_H

#include "postgres.h"

/* Runs tracked at once on a server; more runs are simply not shown. */
#define DL_PROGRESS_SLOTS 32

/* Longest function / table name kept, in bytes with the NUL (truncated). */
#define DL_PROGRESS_NAME_LEN 256

/*
 * Called once from _PG_init.  Installs the shared memory hooks when the
 * library is being preloaded (shared_preload_libraries); does nothing
 * otherwise.
 */
void		dl_progress_init(void);

/*
 * Start tracking a run in this backend.  function: "fit",
 * "fit_multiple" or "madlib_keras_automl"; source and output: table names as the user should read
 * them (may be NULL; a NULL output takes the name last given to
 * madlib_dl._progress_label in this transaction, if any: a table the
 * caller may create or replace).  num_iterations
 * >= 1, num_models >= 1.  Never raises an ERROR: without shared memory or
 * with every slot busy the run is just not shown.
 */
void		dl_progress_begin(const char *function, const char *source,
							  const char *output, int num_iterations,
							  int num_models);

/*
 * Report progress: iteration in 1..num_iterations is the iteration under
 * way and models_done in 0..num_models the models that have finished it
 * (fit: num_models 1, so models_done 1 once the iteration is over);
 * best_metric the best metric so far (validation if there is one,
 * training otherwise; fit: the latest, since its one model only gets
 * better or worse as a whole), NaN to keep the value last given (NULL in
 * the view until one is); elapsed_s seconds since the start; eta_s
 * estimated seconds left, or negative to let this function estimate it
 * from the work units (model x iteration) done so far.  Cheap (a spinlock
 * and a few stores); no-op when no run is tracked.
 */
void		dl_progress_update(int iteration, int models_done, double best_metric,
							   double elapsed_s, double eta_s);

/*
 * AutoML: the highest rung (or Hyperband round) a configuration trains in
 * now, and how many configurations train (the view's rung and
 * models_alive; NULL for the other functions).  No-op when no run is
 * tracked.
 */
void		dl_progress_set_stage(int rung, int models_alive);

/* Stop tracking the run (frees its slot).  No-op when none is tracked. */
void		dl_progress_end(void);

/*
 * Estimated seconds left when done of total units of work took elapsed_s:
 * elapsed_s / done * (total - done); NaN when done <= 0.
 */
double		dl_progress_eta(double elapsed_s, double done, double total);

/*
 * "schema.table" of a relation, palloc'd in CurrentMemoryContext, or NULL
 * when it does not exist or the current user may not read it (no SELECT
 * on it or on any of its columns); for dl_progress_begin's source, so
 * that a run is only ever labelled with a table it can actually read.
 */
char	   *dl_progress_relname(Oid rel);

#endif							/* PROGRESS_H */
