/*-------------------------------------------------------------------------
 *
 * visit.c
 *	  A visit in rounds (dl_visit.h): the passes of the one shuffle over a
 *	  partition, stopped after some mini-batches and resumed where they
 *	  stopped, and the round record that carries the position.
 *
 * A resumed pass draws its block order again from the generator the pass
 * began with, and a resumed window its row permutation from the one the
 * window began with; then the generator becomes the one of the stop and
 * the rows are taken from the stop on (dl_pass_window_from).  A stop that
 * used up its window moves to the next window, and one that used up the
 * pass (no partial batch can be pending at a stop) to the next pass, so
 * a visit whose last batch ends a round is done.
 *
 * IDENTIFICATION
 *	  src/engine/visit.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "bytes_le.h"
#include "madlib_dl/dl_optim.h"
#include "madlib_dl/dl_visit.h"

/* Field offsets of the round record (dl_visit.h). */
#define OFF_MAGIC 0
#define OFF_VERSION 4
#define OFF_MAX_BATCHES 8
#define OFF_LR_FACTOR 16
#define OFF_RESUME 24
#define OFF_DONE 28
#define OFF_TOTAL 32
#define OFF_BATCHES 40
#define OFF_EPOCH 48
#define OFF_WINDOW 56
#define OFF_ROW 64
#define OFF_RNG_PASS 72
#define OFF_RNG_WINDOW 104
#define OFF_RNG 136

void
dl_visit_round_init(DlVisitRound *r)
{
	memset(r, 0, sizeof(*r));
	r->lr_factor = 1.0;
}

void
dl_visit_round_write(const DlVisitRound *r, uint8_t *buf)
{
	uint64_t	f;

	memset(buf, 0, DL_VISIT_ROUND_BYTES);
	memcpy(buf + OFF_MAGIC, DL_VISIT_MAGIC, 4);
	dl_le_put_u32(buf + OFF_VERSION, DL_VISIT_VERSION);
	dl_le_put_u64(buf + OFF_MAX_BATCHES, (uint64_t) r->max_batches);
	memcpy(&f, &r->lr_factor, sizeof(f));
	dl_le_put_u64(buf + OFF_LR_FACTOR, f);
	dl_le_put_u32(buf + OFF_RESUME, r->resume ? 1 : 0);
	dl_le_put_u32(buf + OFF_DONE, r->done ? 1 : 0);
	dl_le_put_u64(buf + OFF_TOTAL, (uint64_t) r->total);
	dl_le_put_u64(buf + OFF_BATCHES, (uint64_t) r->pos.batches);
	dl_le_put_u64(buf + OFF_EPOCH, (uint64_t) r->pos.epoch);
	dl_le_put_u64(buf + OFF_WINDOW, (uint64_t) r->pos.window);
	dl_le_put_u64(buf + OFF_ROW, (uint64_t) r->pos.row);
	dl_le_put_rng(buf + OFF_RNG_PASS, &r->pos.rng_pass);
	dl_le_put_rng(buf + OFF_RNG_WINDOW, &r->pos.rng_window);
	dl_le_put_rng(buf + OFF_RNG, &r->pos.rng);
}

static DlStatus
corrupt(DlError *err, const char *what)
{
	dl_error_set(err, DL_ERR_CORRUPT, "a round record of fit is invalid: %s", what);
	return dl_error_hint(err, "Call fit, which writes the round records.");
}

DlStatus
dl_visit_round_read(const uint8_t *buf, size_t len, DlVisitRound *r, DlError *err)
{
	uint64_t	f;
	uint32_t	resume;
	uint32_t	done;

	if (len != DL_VISIT_ROUND_BYTES || memcmp(buf + OFF_MAGIC, DL_VISIT_MAGIC, 4) != 0)
		return corrupt(err, "no round record");
	if (dl_le_get_u32(buf + OFF_VERSION) != DL_VISIT_VERSION)
		return corrupt(err, "another format version");
	memset(r, 0, sizeof(*r));
	r->max_batches = (int64_t) dl_le_get_u64(buf + OFF_MAX_BATCHES);
	f = dl_le_get_u64(buf + OFF_LR_FACTOR);
	memcpy(&r->lr_factor, &f, sizeof(f));
	resume = dl_le_get_u32(buf + OFF_RESUME);
	done = dl_le_get_u32(buf + OFF_DONE);
	r->total = (int64_t) dl_le_get_u64(buf + OFF_TOTAL);
	r->pos.batches = (int64_t) dl_le_get_u64(buf + OFF_BATCHES);
	r->pos.epoch = (int64_t) dl_le_get_u64(buf + OFF_EPOCH);
	r->pos.window = (int64_t) dl_le_get_u64(buf + OFF_WINDOW);
	r->pos.row = (int64_t) dl_le_get_u64(buf + OFF_ROW);
	dl_le_get_rng(buf + OFF_RNG_PASS, &r->pos.rng_pass);
	dl_le_get_rng(buf + OFF_RNG_WINDOW, &r->pos.rng_window);
	dl_le_get_rng(buf + OFF_RNG, &r->pos.rng);
	if (resume > 1 || done > 1)
		return corrupt(err, "a flag is neither 0 nor 1");
	if (!(isfinite(r->lr_factor) && r->lr_factor > 0.0))
		return corrupt(err, "the learning-rate factor is not a positive number");
	if (r->max_batches < 0 || r->total < 0 || r->pos.batches < 0 || r->pos.epoch < 0 ||
		r->pos.window < 0 || r->pos.row < 0)
		return corrupt(err, "a count is negative");
	r->resume = resume == 1;
	r->done = done == 1;
	return DL_OK;
}

int64_t
dl_visit_batches(int64_t epochs, int64_t rows, int64_t batch_size)
{
	int64_t		per_pass;
	int64_t		total;

	if (epochs <= 0 || rows <= 0 || batch_size <= 0)
		return 0;
	per_pass = rows / batch_size + (rows % batch_size != 0);
	if (__builtin_mul_overflow(per_pass, epochs, &total))
		return INT64_MAX;
	return total;
}

/* Does pos fit a visit of epochs passes over d? */
static DlStatus
check_pos(const DlVisitPos *pos, int64_t epochs, const DlVisitData *d, DlError *err)
{
	if (pos->epoch > epochs)
		return corrupt(err, "it is past the visit's last pass");
	if (pos->window > d->n_blocks || pos->window % DL_EPOCH_WINDOW_BLOCKS != 0)
		return corrupt(err, "its window is not one of the partition's");
	if (pos->epoch == epochs && (pos->window > 0 || pos->row > 0))
		return corrupt(err, "it is inside a pass after the last one");
	return DL_OK;
}

/*
 * Run the current pass from pos to its end, or until budget batches (0:
 * no limit) have run; pos then says where it stopped.
 */
static DlStatus
visit_pass(DlModel *m, const DlTrainConfig *cfg, const DlVisitData *d, int64_t budget,
		   DlVisitPos *pos, DlBatchStats *bs, DlError *err)
{
	DlRng	   *rng = dl_model_rng(m);
	bool		mid = pos->window > 0 || pos->row > 0;
	int64_t		before = 0;		/* rows of the pass before the current window */
	DlPass		p;
	DlStatus	st;

	/* the pass's block order, drawn again when it resumes */
	*rng = mid ? pos->rng_pass : pos->rng;
	pos->rng_pass = *rng;
	dl_epoch_order(rng, cfg->shuffle, d->order, d->n_blocks);
	if (mid)
		*rng = pos->rng;
	for (int64_t i = 0; i < pos->window; i++)
		before += d->blocks[d->order[i]].n;
	if ((st = dl_pass_begin(&p, m, cfg, true, d->rows - before, bs, err)) != DL_OK)
		return st;
	p.stop_after = budget;
	for (; pos->window < d->n_blocks; pos->window += DL_EPOCH_WINDOW_BLOCKS, pos->row = 0)
	{
		DlRows		runs[DL_EPOCH_WINDOW_BLOCKS];
		int			k = (int) (d->n_blocks - pos->window < DL_EPOCH_WINDOW_BLOCKS ?
							   d->n_blocks - pos->window : DL_EPOCH_WINDOW_BLOCKS);
		int64_t		R = 0;

		memset(runs, 0, sizeof(runs));	/* a window of single arrays leaves xs NULL */
		if ((st = d->window(d->arg, d->order + pos->window, k, runs, err)) != DL_OK)
			return st;
		for (int j = 0; j < k; j++)
			R += runs[j].n;
		if (pos->row > 0)
		{
			/* the window it stopped in: its permutation again, then on from the stop */
			*rng = pos->rng_window;
			st = dl_pass_window_from(&p, runs, k, pos->row, &pos->rng, err);
		}
		else
		{
			pos->rng_window = *rng;
			st = dl_pass_window(&p, runs, k, err);
		}
		if (st != DL_OK)
			return st;
		if (p.stopped && (p.stop_row < R || pos->window + k < d->n_blocks))
		{
			pos->batches += p.batches;
			pos->row = p.stop_row;
			if (p.stop_row == R)
			{
				/* the window is used up: the next one begins at the stop */
				pos->window += DL_EPOCH_WINDOW_BLOCKS;
				pos->row = 0;
			}
			pos->rng = *rng;
			return DL_OK;
		}
		if (p.stopped)
			break;				/* the pass is used up: it ends here */
	}
	st = dl_pass_end(&p, err);
	pos->batches += p.batches;
	pos->epoch++;
	pos->window = 0;
	pos->row = 0;
	pos->rng = *rng;
	return st;
}

DlStatus
dl_visit_run(DlModel *m, const DlTrainConfig *cfg, int64_t epochs, const DlVisitData *d,
			 DlVisitRound *r, DlBatchStats *bs, DlError *err)
{
	DlVisitPos *pos = &r->pos;
	DlOptimState *opt = dl_model_optim(m);
	int64_t		start;
	DlStatus	st = DL_OK;

	if (!(isfinite(r->lr_factor) && r->lr_factor > 0.0) || r->max_batches < 0)
		return corrupt(err, "a bad learning-rate factor or batch count");
	if (!r->resume)
	{
		memset(pos, 0, sizeof(*pos));
		pos->rng = *dl_model_rng(m);
	}
	else if ((st = check_pos(pos, epochs, d, err)) != DL_OK)
		return st;
	r->total = dl_visit_batches(epochs, d->rows, cfg->batch_size);
	start = pos->batches;
	if (opt != NULL)
		opt->lr_scale = r->lr_factor;
	while (pos->epoch < epochs && d->n_blocks > 0 &&
		   (r->max_batches == 0 || pos->batches - start < r->max_batches))
	{
		int64_t		budget = r->max_batches == 0 ? 0 : r->max_batches - (pos->batches - start);

		if ((st = visit_pass(m, cfg, d, budget, pos, bs, err)) != DL_OK)
			break;
	}
	if (opt != NULL)
		opt->lr_scale = 1.0;
	if (st != DL_OK)
		return st;
	if (d->n_blocks == 0)
		pos->epoch = epochs;	/* nothing to pass over */
	*dl_model_rng(m) = pos->rng;
	r->resume = true;
	r->done = pos->epoch >= epochs;
	return DL_OK;
}
