/*-------------------------------------------------------------------------
 *
 * transport.h
 *	  How model states reach the segments: the one interface the fit and
 *	  fit_multiple drivers use, and its three transports.
 *
 * A transport runs steps (dl_seg_train_step, dl_seg_eval_step: runtime/step.c)
 * on segments and moves model states; it decides nothing.  What trains
 * where is the drivers' (fit.c: model averaging, dl_average.h;
 * fit_multiple.c: the model hopper, dl_hopper.h).  The interface:
 *	 slots       n_slots model states (dl_blob format) the driver reads and
 *	             writes between steps: dl_transport_slot / _slot_len;
 *	 submit      give segment s a command: TRAIN (cmd->model's step on
 *	             s's partition, from slot cmd->slot and back into it) or
 *	             EVAL (loss and metric of that slot on s's partitions);
 *	 wait_any    the segment of a finished command (its statistics then in
 *	             dl_transport_stats), -1 when none is outstanding.
 * The transports:
 *	 workers     PostgreSQL parallel workers, one per virtual segment,
 *	             the states in shared memory (transport/workers.c);
 *	 greenplum   the per-segment aggregates over Greenplum's real
 *	             segments, the states as bytea values (transport/greenplum.c);
 *	 plproxy     a PL/Proxy cluster of PostgreSQL servers, the states as
 *	             bytea values through the proxy calls (transport/plproxy.c).
 * The last two run the commands given since the last wait as one SQL
 * call when wait_any finds nothing finished: a round of all the segments
 * that have a command.
 *
 * A step's result depends only on the state, the model, the partition,
 * the iteration and the segment: the same on every transport.
 *
 * IDENTIFICATION
 *	  src/pg/transport/transport.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_TRANSPORT_H
#define DL_TRANSPORT_H

#include "postgres.h"

#include "segments.h"

typedef struct DlTransport DlTransport;

typedef struct DlTransportOps
{
	const char *name;
	uint8	   *(*slot) (DlTransport *t, int slot);
	Size		(*slot_len) (const DlTransport *t, int slot);
	Size		(*slot_cap) (const DlTransport *t, int slot);
	void		(*set_slot_len) (DlTransport *t, int slot, Size len);
	void		(*submit) (DlTransport *t, int seg, const DlSegCommand *cmd);
	int			(*wait_any) (DlTransport *t);
	const DlSegStats *(*stats) (const DlTransport *t, int seg);
	void		(*finish) (DlTransport *t);
} DlTransportOps;

/* Every transport's state starts with this. */
struct DlTransport
{
	const DlTransportOps *ops;
	int			nseg;			/* segments 0..nseg-1 */
	int			n_slots;
	int			n_own;			/* segments 0..n_own-1 run without the
								 * leader: give them work first */
};

/*
 * Start the transport setup->transport for the job setup (segments.h),
 * allocating under cxt.  The caller must be a PARALLEL UNSAFE function
 * that writes nothing to the database until dl_transport_finish, and
 * must call that on success (an ERROR cleans up with the transaction).
 */
DlTransport *dl_transport_start(const DlSegSetup *setup, MemoryContext cxt);

/* The transports' starts, for dl_transport_start. */
DlTransport *dl_transport_workers_start(const DlSegSetup *setup, MemoryContext cxt);
DlTransport *dl_transport_greenplum_start(const DlSegSetup *setup, MemoryContext cxt);
DlTransport *dl_transport_plproxy_start(const DlSegSetup *setup, MemoryContext cxt);

/*
 * A parallel worker's life on the workers transport: attach to the job's
 * shared memory, load its segment into an executor of the given ops, run
 * the commands it is given until told to exit.  Called by the worker's
 * entry point (dl_segment_worker_main, runtime/seg_exec.c).
 */
void		dl_transport_workers_serve(shm_toc *toc, const DlSegExecutor *executor);

/* Slot i's bytes (capacity dl_transport_slot_cap) and current length. */
static inline uint8 *
dl_transport_slot(DlTransport *t, int slot)
{
	return t->ops->slot(t, slot);
}

static inline Size
dl_transport_slot_len(const DlTransport *t, int slot)
{
	return t->ops->slot_len(t, slot);
}

static inline Size
dl_transport_slot_cap(const DlTransport *t, int slot)
{
	return t->ops->slot_cap(t, slot);
}

static inline void
dl_transport_set_slot_len(DlTransport *t, int slot, Size len)
{
	t->ops->set_slot_len(t, slot, len);
}

/*
 * Give idle segment seg a command.  Two segments must not write one slot
 * at the same time.
 */
static inline void
dl_transport_submit(DlTransport *t, int seg, const DlSegCommand *cmd)
{
	t->ops->submit(t, seg, cmd);
}

/*
 * Wait for a submitted command; return its segment (the lowest when
 * several finished), -1 when none is outstanding.  Errors of a segment
 * are re-thrown here.
 */
static inline int
dl_transport_wait_any(DlTransport *t)
{
	return t->ops->wait_any(t);
}

/* Statistics of segment seg's last finished command. */
static inline const DlSegStats *
dl_transport_stats(const DlTransport *t, int seg)
{
	return t->ops->stats(t, seg);
}

/* Release the segments (workers exit). */
static inline void
dl_transport_finish(DlTransport *t)
{
	t->ops->finish(t);
}

/*
 * One round: cmds[k] is segment k's command (nseg of them; NONE idles),
 * the segments of their own first; returns when all have finished.
 */
void		dl_transport_run(DlTransport *t, const DlSegCommand *cmds);

/* Write state[0..len) into slot (ERROR if it does not fit). */
void		dl_transport_put_state(DlTransport *t, int slot, const uint8 *state, Size len);

#endif							/* DL_TRANSPORT_H */
