/*-------------------------------------------------------------------------
 *
 * pg_compat.h
 *	  The PostgreSQL 15 APIs the glue uses, for servers that lack them:
 *	  Greenplum 7 (PostgreSQL 12) and Apache Cloudberry 1.x and 2.0
 *	  (PostgreSQL 14).  Each shim is defined only where the server lacks
 *	  the API, so on PostgreSQL 15 this file defines nothing.
 *
 *	  TYPALIGN_*               PostgreSQL 13: the pg_type.typalign letters
 *	  ROLE_PG_READ_ALL_STATS   PostgreSQL 14: DEFAULT_ROLE_READ_ALL_STATS
 *	                           before
 *	  MarkGUCPrefixReserved    PostgreSQL 15: EmitWarningsOnPlaceholders
 *	                           before (the same function, renamed)
 *	  InitMaterializedSRF      PostgreSQL 15: dl_init_materialized_srf
 *	                           (pg_util.c) before, the idiom of the
 *	                           PostgreSQL 14 contrib modules
 *	  shmem_request_hook       PostgreSQL 15: progress.c calls
 *	                           RequestAddinShmemSpace from _PG_init before
 *	                           (PG_HAVE_SHMEM_REQUEST_HOOK tells which)
 *	  access/detoast.h         PostgreSQL 13: access/tuptoaster.h before
 *	                           (this file includes whichever the server has)
 *	  MemoryContextMemAllocated  PostgreSQL 13: the sum of the stats
 *	                           counters before
 *	  VARATT_EXTERNAL_GET_EXTSIZE  PostgreSQL 14: the va_extsize field
 *	                           before
 *
 * scripts/test.sh compiles every file of src/pg against the PostgreSQL
 * 12 and 14 server headers of test/pg-headers with GP_VERSION_NUM
 * defined (docs/greenplum.md, "Building").
 *
 * IDENTIFICATION
 *	  src/pg/pg_compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_COMPAT_H
#define PG_COMPAT_H

#include "postgres.h"

#include "fmgr.h"

#if PG_VERSION_NUM < 130000
#define TYPALIGN_CHAR	'c'
#define TYPALIGN_SHORT	's'
#define TYPALIGN_INT	'i'
#define TYPALIGN_DOUBLE 'd'
#endif

#if PG_VERSION_NUM < 140000
#define ROLE_PG_READ_ALL_STATS DEFAULT_ROLE_READ_ALL_STATS
#endif

#if PG_VERSION_NUM >= 150000
#define PG_HAVE_SHMEM_REQUEST_HOOK 1
#else
#define MarkGUCPrefixReserved(className) EmitWarningsOnPlaceholders(className)

/*
 * Materialize mode for a set-returning function: check that the caller
 * accepts a tuplestore, make one in per-query memory with the function's
 * declared row type, and put both in fcinfo->resultinfo.  flags must be
 * 0 (the only use here).
 */
extern void dl_init_materialized_srf(FunctionCallInfo fcinfo, bits32 flags);

#define InitMaterializedSRF(fcinfo, flags) dl_init_materialized_srf(fcinfo, flags)
#endif

/* access/detoast.h is PostgreSQL 13's split of access/tuptoaster.h. */
#if PG_VERSION_NUM >= 130000
#include "access/detoast.h"
#else
#include "access/tuptoaster.h"
#endif

#if PG_VERSION_NUM < 140000
/* before PostgreSQL 14 the external size is a field of its own */
#define VARATT_EXTERNAL_GET_EXTSIZE(toast_pointer) ((toast_pointer).va_extsize)
#endif

#if PG_VERSION_NUM < 130000
#include "nodes/memnodes.h"
#include "utils/memutils.h"

/*
 * MemoryContextMemAllocated (PostgreSQL 13): the bytes context c holds
 * from the system, with its children when recurse, from the counters of
 * its stats method (PostgreSQL 12 has no mem_allocated field).
 */
static inline Size
dl_memory_context_allocated(MemoryContext c, bool recurse)
{
	MemoryContextCounters totals;
	Size		total;

	memset(&totals, 0, sizeof(totals));
	c->methods->stats(c, NULL, NULL, &totals);
	total = totals.totalspace;
	if (recurse)
		for (MemoryContext child = c->firstchild; child != NULL; child = child->nextchild)
			total += dl_memory_context_allocated(child, true);
	return total;
}
#define MemoryContextMemAllocated(c, recurse) dl_memory_context_allocated(c, recurse)
#endif

#endif							/* PG_COMPAT_H */
