/*-------------------------------------------------------------------------
 *
 * compat.c
 *	  The C symbols of older releases' SQL that this library no longer
 *	  uses: between a package upgrade and ALTER EXTENSION madlib_dl UPDATE,
 *	  the functions an older install script created still call
 *	  '$libdir/madlib_dl', which is then this library.  Every symbol they
 *	  name must exist (CREATE FUNCTION ... LANGUAGE C looks it up, and so
 *	  does every call) and must fail cleanly, never read arguments laid out
 *	  for another version.  docs/releasing.md, "The new library serves the
 *	  old SQL"; test/t/050_upgrade.pl checks that every symbol of
 *	  src/sql/releases/madlib_dl--0.1.0.sql is exported and that calling the 0.1.0
 *	  functions leaves the server up.
 *
 *	  The symbols whose name still exists but whose arguments changed
 *	  check their caller where they are defined (PG_NARGS,
 *	  dl_pg_declared_argtype or the declared result type, in fit.c,
 *	  fit_multiple.c, progress.c, gp_agg.c; gpu.c serves the old
 *	  one-argument call; compat_predict.c serves _predict_rows).
 *
 * IDENTIFICATION
 *	  src/pg/api/compat.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include "pg_util.h"

/*
 * A symbol of madlib_dl 0.1.0's SQL with no counterpart here: the call
 * raises 55000 naming the function and asking for ALTER EXTENSION UPDATE.
 */
#define DL_OLD_SYMBOL_0_1_0(sym) \
PG_FUNCTION_INFO_V1(sym); \
Datum \
sym(PG_FUNCTION_ARGS) \
{ \
	dl_pg_old_sql_error(fcinfo, "0.1.0"); \
	PG_RETURN_NULL(); \
}

/* Model averaging of 0.1.0's Greenplum path (now _step aggregates). */
DL_OLD_SYMBOL_0_1_0(madlib_dl__avg_states_transition)
DL_OLD_SYMBOL_0_1_0(madlib_dl__avg_states_combine)
DL_OLD_SYMBOL_0_1_0(madlib_dl__avg_states_serialize)
DL_OLD_SYMBOL_0_1_0(madlib_dl__avg_states_deserialize)
DL_OLD_SYMBOL_0_1_0(madlib_dl__avg_states_final)

/* 0.1.0's Greenplum fit and evaluate aggregates (now _gp_fit_segment(step, ...)). */
DL_OLD_SYMBOL_0_1_0(madlib_dl__gp_fit_transition)
DL_OLD_SYMBOL_0_1_0(madlib_dl__gp_fit_combine)
DL_OLD_SYMBOL_0_1_0(madlib_dl__gp_fit_serialize)
DL_OLD_SYMBOL_0_1_0(madlib_dl__gp_fit_deserialize)
DL_OLD_SYMBOL_0_1_0(madlib_dl__gp_eval_transition)
DL_OLD_SYMBOL_0_1_0(madlib_dl__gp_eval_combine)
DL_OLD_SYMBOL_0_1_0(madlib_dl__gp_eval_serialize)
DL_OLD_SYMBOL_0_1_0(madlib_dl__gp_eval_deserialize)
DL_OLD_SYMBOL_0_1_0(madlib_dl__gp_initial_state)
DL_OLD_SYMBOL_0_1_0(madlib_dl__gp_state_weights)
DL_OLD_SYMBOL_0_1_0(madlib_dl__gp_visit_order)

/* 0.1.0's evaluate core (now _evaluate_segment); its _predict_rows is served (compat_predict.c). */
DL_OLD_SYMBOL_0_1_0(madlib_dl__evaluate_run)

/* 0.1.0's memory check and CUDA status (the CUDA backend is gone). */
DL_OLD_SYMBOL_0_1_0(madlib_dl__check_memory)
DL_OLD_SYMBOL_0_1_0(madlib_dl__gpu_status)

PG_FUNCTION_INFO_V1(madlib_dl__gpu_built);

/*
 * madlib_dl._gpu_built() RETURNS boolean, of 0.1.0's gpu_configuration:
 * served (false: this library has no CUDA backend), so that the old
 * gpu_configuration keeps working until the update.
 */
Datum
madlib_dl__gpu_built(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(false);
}
