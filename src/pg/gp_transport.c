/*-------------------------------------------------------------------------
 *
 * gp_transport.c
 *	  The Greenplum transport (transport.h).  (being written)
 *
 * IDENTIFICATION
 *	  src/pg/gp_transport.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "transport.h"

DlTransport *
dl_transport_greenplum_start(const DlSegSetup *setup, MemoryContext cxt)
{
	elog(ERROR, "madlib_dl: the greenplum transport is not built yet");
	return NULL;
}
