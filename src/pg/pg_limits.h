/*-------------------------------------------------------------------------
 *
 * pg_limits.h
 *	  The madlib_dl.max_model_memory limit: a check that fails early, with
 *	  54000, instead of through the OOM killer.
 *
 * IDENTIFICATION
 *	  src/pg/pg_limits.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_PG_LIMITS_H
#define DL_PG_LIMITS_H

#include "postgres.h"

/* madlib_dl.max_model_memory, in kB (GUC_UNIT_KB). */
extern int	dl_pg_max_model_memory_kb;

/*
 * Define the GUC madlib_dl.max_model_memory.  Call once, from _PG_init,
 * before MarkGUCPrefixReserved("madlib_dl").
 */
void		dl_limits_init(void);

/*
 * ERROR 54000 (program_limit_exceeded) when bytes, the estimated memory
 * one model state needs in one process, exceeds madlib_dl.max_model_memory.
 * what names the model in the message (e.g. "model_id 3" or "mst_key 7").
 * Call it before allocating the model or reading the partitions.
 */
void		dl_limits_check_memory(const char *what, double bytes);

#endif							/* DL_PG_LIMITS_H */
