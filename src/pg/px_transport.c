/*-------------------------------------------------------------------------
 *
 * px_transport.c
 *	  The PL/Proxy transport (transport.h).  (being written)
 *
 * IDENTIFICATION
 *	  src/pg/px_transport.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "transport.h"

DlTransport *
dl_transport_plproxy_start(const DlSegSetup *setup, MemoryContext cxt)
{
	elog(ERROR, "madlib_dl: the plproxy transport is not built yet");
	return NULL;
}
