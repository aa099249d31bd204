/*-------------------------------------------------------------------------
 *
 * transport.c
 *	  The transport interface (transport.h): the choice of transport, and
 *	  what every transport shares.
 *
 * IDENTIFICATION
 *	  src/pg/transport/transport.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "transport.h"

DlTransport *
dl_transport_start(const DlSegSetup *setup, MemoryContext cxt)
{
	switch (setup->transport)
	{
		case DL_TRANSPORT_WORKERS:
			return dl_transport_workers_start(setup, cxt);
		case DL_TRANSPORT_GREENPLUM:
			return dl_transport_greenplum_start(setup, cxt);
		case DL_TRANSPORT_PLPROXY:
			return dl_transport_plproxy_start(setup, cxt);
	}
	elog(ERROR, "madlib_dl: unknown transport %d", (int) setup->transport);
	return NULL;				/* keep the compiler quiet */
}

void
dl_transport_run(DlTransport *t, const DlSegCommand *cmds)
{
	/* the segments that run without the leader first, so they overlap */
	for (int k = 0; k < t->nseg; k++)
		if (k < t->n_own && cmds[k].kind != DL_SEG_CMD_NONE)
			dl_transport_submit(t, k, &cmds[k]);
	for (int k = t->n_own; k < t->nseg; k++)
		if (cmds[k].kind != DL_SEG_CMD_NONE)
			dl_transport_submit(t, k, &cmds[k]);
	while (dl_transport_wait_any(t) >= 0)
		;
}

void
dl_transport_put_state(DlTransport *t, int slot, const uint8 *state, Size len)
{
	if (len > dl_transport_slot_cap(t, slot))
		elog(ERROR, "madlib_dl: model state of %zu bytes does not fit slot %d of %zu",
			 len, slot, dl_transport_slot_cap(t, slot));
	memcpy(dl_transport_slot(t, slot), state, len);
	dl_transport_set_slot_len(t, slot, len);
}
