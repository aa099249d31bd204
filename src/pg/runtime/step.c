/*-------------------------------------------------------------------------
 *
 * step.c
 *	  The per-segment steps of fit and fit_multiple: train one model state
 *	  on one partition for one visit, and evaluate a state on a segment's
 *	  partitions (see segments.h for the contracts).
 *
 * Nothing here uses shared memory or the parallel machinery: a step reads
 * a state buffer and a partition in process memory and writes the state
 * buffer back.  The PostgreSQL virtual segments (transport/workers.c) call these in
 * the leader and in the workers; a Greenplum aggregate can call them in
 * its final function over the rows of one segment.
 *
 * IDENTIFICATION
 *	  src/pg/runtime/step.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_rng.h"

#include "pg_glue.h"
#include "pg_model.h"
#include "segments.h"

/* The class index of every sample, for sparse losses: argmax of the one-hot row. */
static const float *
partition_y_index(DlSegPartition *p, MemoryContext cxt)
{
	if (p->y_index == NULL && p->n > 0)
	{
		p->y_index = MemoryContextAllocExtended(cxt, (Size) p->n * sizeof(float), MCXT_ALLOC_HUGE);
		for (int64 i = 0; i < p->n; i++)
		{
			const float *row = p->y + i * p->y_width;
			int64		best = 0;

			for (int64 k = 1; k < p->y_width; k++)
				if (row[k] > row[best])
					best = k;
			p->y_index[i] = (float) best;
		}
	}
	return p->y_index;
}

/* y of partition p in the layout the loss of cfg wants. */
static const float *
partition_y(DlSegPartition *p, const DlTrainConfig *cfg, MemoryContext cxt)
{
	if (dl_loss_y_width(cfg->loss, p->y_width) == 1 && p->y_width > 1)
		return partition_y_index(p, cxt);
	return p->y;
}

void
dl_seg_check_partition(const DlPgModel *m, const DlSegPartition *p, const char *what)
{
	if (p->n > 0 && (p->x_width != dl_pg_model_input_size(m) ||
					 p->y_width != dl_pg_model_output_width(m)))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("%s data has " INT64_FORMAT " values and " INT64_FORMAT " classes per sample, the model takes " INT64_FORMAT " and gives " INT64_FORMAT,
						what, p->x_width, p->y_width, dl_pg_model_input_size(m),
						dl_pg_model_output_width(m)),
				 errhint("Use an architecture that matches the preprocessed data.")));
}

bool
dl_seg_train_step(DlPgModel *m, uint8 *state, Size state_len, Size state_cap,
				  Size *state_len_out, DlSegPartition *p, MemoryContext cxt,
				  int64 iteration, int segment, bool catch_divergence, DlSegStats *st)
{
	DlTrainConfig cfg;
	DlBatchStats bs = {0};
	DlError		err;
	const float *y;
	size_t		need;

	memset(st, 0, sizeof(*st));
	*state_len_out = state_len;
	dl_error_clear(&err);
	dl_pg_model_train_config(m, &cfg);
	dl_pg_check(dl_blob_read(m->model, state, state_len, NULL, &err), &err);
	dl_seg_check_partition(m, p, "training");
	if (p->n <= 0)
		return true;			/* nothing to learn from: state unchanged */

	y = partition_y(p, &cfg, cxt);
	dl_model_seed_rng(m->model, dl_rng_hash_seed(m->fit.seed, iteration, segment));
	for (int e = 0; e < m->fit.epochs; e++)
	{
		DlStatus	rc = dl_model_train_epoch(m->model, &cfg, p->x, y, p->n, &bs, &err);

		if (rc == DL_ERR_DIVERGED && catch_divergence)
		{
			/* the state buffer still holds the state this visit started from */
			st->diverged = true;
			strlcpy(st->message, err.msg, sizeof(st->message));
			return false;
		}
		dl_pg_check(rc, &err);
	}
	dl_pg_check(dl_blob_size(m->model, &need, &err), &err);
	if (need > state_cap)
		elog(ERROR, "madlib_dl: model state of %zu bytes does not fit a slot of %zu", need, state_cap);
	dl_pg_check(dl_blob_write(m->model, bs.n, state, state_cap, &err), &err);
	*state_len_out = need;
	st->train_loss_sum = bs.loss_sum;
	st->train_metric_sum = bs.metric_sum;
	st->train_n = bs.n;
	st->samples_seen = bs.n;
	return true;
}

void
dl_seg_eval_step(DlPgModel *m, const uint8 *state, Size state_len,
				 DlSegPartition *tp, DlSegPartition *vp, MemoryContext cxt,
				 DlSegStats *st)
{
	DlTrainConfig cfg;
	DlBatchStats bs = {0};
	DlError		err;

	memset(st, 0, sizeof(*st));
	dl_error_clear(&err);
	dl_pg_model_train_config(m, &cfg);
	dl_pg_check(dl_blob_read(m->model, state, state_len, NULL, &err), &err);
	dl_seg_check_partition(m, tp, "training");
	if (tp->n > 0)
		dl_pg_check(dl_model_evaluate(m->model, &cfg, tp->x, partition_y(tp, &cfg, cxt),
									  tp->n, &bs, &err), &err);
	st->train_loss_sum = bs.loss_sum;
	st->train_metric_sum = bs.metric_sum;
	st->train_n = bs.n;
	if (vp != NULL)
	{
		DlBatchStats vs = {0};

		dl_seg_check_partition(m, vp, "validation");
		if (vp->n > 0)
			dl_pg_check(dl_model_evaluate(m->model, &cfg, vp->x, partition_y(vp, &cfg, cxt),
										  vp->n, &vs, &err), &err);
		st->val_loss_sum = vs.loss_sum;
		st->val_metric_sum = vs.metric_sum;
		st->val_n = vs.n;
	}
}
