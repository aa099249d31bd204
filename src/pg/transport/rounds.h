/*-------------------------------------------------------------------------
 *
 * rounds.h
 *	  What the greenplum and plproxy transports (transport.h) share: model
 *	  states in slots of the leader's memory, and commands that wait until
 *	  a round runs them all through SQL.
 *
 * submit only queues a segment's command.  wait_any returns the lowest
 * segment whose command has finished; when none has and some are queued,
 * it first runs a round: the transport's run hook once per kind queued
 * (TRAIN, then EVAL) with every queued segment of that kind.  The hook
 * sends the commands' states, model definitions and iterations to the
 * segments in SQL, runs the steps (the aggregates of gp_agg.c), and
 * gives each segment's results back with dl_rounds_train_done or by
 * filling dl_rounds_stats.  A round is a barrier: the segments that
 * finished in it get their next commands, which run in the next round.
 *
 * IDENTIFICATION
 *	  src/pg/transport/rounds.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_ROUNDS_H
#define DL_ROUNDS_H

#include "postgres.h"

#include "transport.h"

typedef struct DlRounds DlRounds;

typedef struct DlRoundsHooks
{
	const char *name;			/* the transport, for messages */

	/*
	 * Run the queued commands of kind (TRAIN or EVAL) of segments
	 * segs[0..n-1], ascending; each one's command is dl_rounds_command.
	 */
	void		(*run) (DlRounds *r, DlSegCommandKind kind, const int *segs, int n);
	/* Release what the transport made (may be NULL). */
	void		(*finish) (DlRounds *r);
} DlRoundsHooks;

struct DlRounds
{
	DlTransport base;			/* first: a DlRounds is a DlTransport */
	const DlRoundsHooks *hooks;
	MemoryContext cxt;			/* everything of the transport */
	DlSegSetup	setup;			/* a copy, its strings and models in cxt */
	uint8	  **slot;			/* (n_slots) */
	Size	   *slot_len;		/* (n_slots) */
	Size	   *slot_cap;		/* (n_slots) */
	DlSegCommand *cmd;			/* (nseg) each segment's last command */
	char	   *status;			/* (nseg) idle, queued or done */
	DlSegStats *stats;			/* (nseg) */
	void	   *priv;			/* the transport's own state */
};

/* What one step gave back: a madlib_dl._step_result, read. */
typedef struct DlStepResult
{
	bytea	   *state;			/* TRAIN: the new state; NULL: none */
	double		loss_sum;
	double		metric_sum;
	int64		n;
	double		seconds;
	char	   *diverged;		/* the engine's message when it diverged */
	int			n_out;			/* an evaluation of a model of several
								 * outputs: each one's sums; else 0 */
	double		out_loss[DL_MAX_IO];
	double		out_metric[DL_MAX_IO];
	Datum		msum;			/* an evaluation's metric sums (float8[],
								 * dl_seg_msum_read), a copy in
								 * CurrentMemoryContext */
	bool		msum_null;		/* none */
} DlStepResult;

/*
 * Start a round-based transport for setup in a new child of cxt: its
 * checks of setup, slots of setup's capacities (each at most what a bytea
 * holds), every segment idle.  priv_size bytes of zeroed private state.
 */
DlRounds   *dl_rounds_create(const DlSegSetup *setup, MemoryContext cxt,
							 const DlRoundsHooks *hooks, Size priv_size);

/* The command of segment seg in this round. */
static inline const DlSegCommand *
dl_rounds_command(const DlRounds *r, int seg)
{
	return &r->cmd[seg];
}

/* A new bytea holding the state in slot (CurrentMemoryContext). */
bytea	   *dl_rounds_state_bytea(const DlRounds *r, int slot);

/* The model definition of model (ERROR when out of range). */
const DlSegModelDef *dl_rounds_model(const DlRounds *r, int model);

/*
 * Read a madlib_dl._step_result value d (isnull: none, as a group without
 * rows) into out.  out->state points into d when d holds it plainly (use
 * it while d is valid), else into a copy in CurrentMemoryContext.
 */
void		dl_rounds_read_result(Datum d, bool isnull, DlStepResult *out);

/*
 * Segment seg's TRAIN command gave res: its statistics, and its new state
 * into the command's slot (when not NULL).  When it diverged: the slot
 * unchanged, and the statistics say so when the command catches
 * divergence, else ERROR 22000.
 */
void		dl_rounds_train_done(DlRounds *r, int seg, const DlStepResult *res);

/*
 * Segment seg's EVAL command gave res for its training partition (val
 * false: the sums are set) or for a part of its validation share (val
 * true: the sums are added): its statistics, each output's included.
 */
void		dl_rounds_eval_done(DlRounds *r, int seg, const DlStepResult *res, bool val);

#endif							/* DL_ROUNDS_H */
