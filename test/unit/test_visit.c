/*-------------------------------------------------------------------------
 *
 * test_visit.c
 *	  A visit in rounds (dl_visit.h): stopped every k mini-batches and
 *	  resumed by a fresh model from the saved state and round record (as
 *	  another process would), a visit gives byte-identical weights,
 *	  optimizer state and generator to the uninterrupted visit of the
 *	  segments' step before rounds existed, for any k, with Dropout
 *	  drawing from the generator, batches spanning windows, stops at
 *	  window and pass ends, several passes, and windows whose memory is
 *	  overwritten once given (streamed).  Bad round records are refused.
 *
 * IDENTIFICATION
 *	  test/unit/test_visit.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_epoch.h"
#include "madlib_dl/dl_model.h"
#include "madlib_dl/dl_visit.h"

#define NBUF 5
#define WIDTH ((int64_t) (DL_EPOCH_BLOCK_BYTES / (8 * sizeof(float))))	/* 8 rows a block */
#define CLASSES 3
#define NROWS 244

/* Input WIDTH -> Dense(6, relu) -> Dropout(0.3) -> Dense(3, softmax). */
static DlModelSpec *
dropout_mlp(const DlAllocator *a)
{
	DlModelSpec *s = dl_model_spec_create(3, a, NULL);
	DlError		err;

	assert_non_null(s);
	s->input_shape.rank = 1;
	s->input_shape.dims[0] = WIDTH;
	dl_layer_defaults(&s->layers[0], DL_LAYER_DENSE);
	s->layers[0].units = 6;
	s->layers[0].activation = DL_ACT_RELU;
	dl_layer_defaults(&s->layers[1], DL_LAYER_DROPOUT);
	s->layers[1].rate = 0.3;
	dl_layer_defaults(&s->layers[2], DL_LAYER_DENSE);
	s->layers[2].units = CLASSES;
	s->layers[2].activation = DL_ACT_SOFTMAX;
	if (dl_model_spec_finalize(s, &err) != DL_OK)
		fail_msg("finalize: %s", err.msg);
	return s;
}

static DlModel *
new_model(const DlModelSpec *s, const DlAllocator *a, double lr)
{
	DlOptimConfig o;
	DlModel    *m;
	DlError		err;

	dl_optim_config_default(&o, DL_OPTIM_ADAM);
	o.lr = lr;
	if (dl_model_create(s, &o, a, &m, &err) != DL_OK)
		fail_msg("create: %s", err.msg);
	if (dl_model_init_weights(m, 5, &err) != DL_OK)
		fail_msg("init: %s", err.msg);
	return m;
}

static DlTrainConfig
config(int64_t bs, bool shuffle)
{
	DlTrainConfig cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.loss = DL_LOSS_CATEGORICAL_CROSSENTROPY;
	cfg.metric = DL_METRIC_ACCURACY;
	cfg.batch_size = bs;
	cfg.shuffle = shuffle;
	return cfg;
}

/* The partition: rows of NBUF buffers, x and y, its blocks; a scratch window. */
typedef struct Part
{
	const float *x;
	const float *y;
	DlBlock    *blocks;
	int64_t		n_blocks;
	bool		streamed;
	float	   *sx;				/* streamed: the window's rows, overwritten after */
	float	   *sy;
} Part;

static DlStatus
part_window(void *arg, const int64_t *order, int k, DlRows *runs, DlError *err)
{
	Part	   *p = arg;
	int64_t		used = 0;

	for (int64_t i = 0; p->streamed && i < DL_EPOCH_WINDOW_BLOCKS * 8 * WIDTH; i++)
		p->sx[i] = NAN;			/* what an earlier window left is gone */
	for (int j = 0; j < k; j++)
	{
		const DlBlock *b = &p->blocks[order[j]];

		memset(&runs[j], 0, sizeof(DlRows));
		runs[j].n = b->n;
		runs[j].y_width = CLASSES;
		runs[j].x = p->x + b->start * WIDTH;
		runs[j].y = p->y + b->start * CLASSES;
		if (p->streamed)
		{
			memcpy(p->sx + used * WIDTH, runs[j].x, sizeof(float) * b->n * WIDTH);
			memcpy(p->sy + used * CLASSES, runs[j].y, sizeof(float) * b->n * CLASSES);
			runs[j].x = p->sx + used * WIDTH;
			runs[j].y = p->sy + used * CLASSES;
			used += b->n;
		}
	}
	return DL_OK;
}

/* The segments' step before rounds: each pass, its block order, then its windows. */
static void
reference_visit(DlModel *m, const DlTrainConfig *cfg, int epochs, Part *p, DlBatchStats *bs)
{
	int64_t    *order = malloc(sizeof(int64_t) * p->n_blocks);
	DlError		err;

	for (int e = 0; e < epochs; e++)
	{
		DlPass		pass;

		dl_epoch_order(dl_model_rng(m), cfg->shuffle, order, p->n_blocks);
		assert_int_equal(dl_pass_begin(&pass, m, cfg, true, NROWS, bs, &err), DL_OK);
		for (int64_t w = 0; w < p->n_blocks; w += DL_EPOCH_WINDOW_BLOCKS)
		{
			DlRows		runs[DL_EPOCH_WINDOW_BLOCKS];
			int			k = (int) (p->n_blocks - w < DL_EPOCH_WINDOW_BLOCKS ?
								   p->n_blocks - w : DL_EPOCH_WINDOW_BLOCKS);

			assert_int_equal(part_window(p, order + w, k, runs, &err), DL_OK);
			if (dl_pass_window(&pass, runs, k, &err) != DL_OK)
				fail_msg("window: %s", err.msg);
		}
		assert_int_equal(dl_pass_end(&pass, &err), DL_OK);
	}
	free(order);
}

/*
 * The same visit in rounds of `period` batches: each round a fresh
 * model loads the state and the round record the last one wrote.
 * Returns the rounds run.
 */
static int
visit_in_rounds(const DlModelSpec *s, const DlAllocator *a, const DlTrainConfig *cfg,
				int epochs, int64_t period, Part *p, uint64_t seed, uint8_t *state,
				size_t state_len, DlBatchStats *bs)
{
	uint8_t		rec[DL_VISIT_ROUND_BYTES];
	int64_t    *order = malloc(sizeof(int64_t) * p->n_blocks);
	DlVisitData d = {p->blocks, p->n_blocks, NROWS, order, part_window, p};
	DlVisitRound r;
	int			rounds = 0;
	DlError		err;

	dl_visit_round_init(&r);
	r.max_batches = period;
	dl_visit_round_write(&r, rec);
	for (;;)
	{
		DlModel    *m = new_model(s, a, 0.001);
		int64_t		before;
		int64_t		samples;

		assert_int_equal(dl_blob_read(m, state, state_len, NULL, &err), DL_OK);
		assert_int_equal(dl_visit_round_read(rec, sizeof(rec), &r, &err), DL_OK);
		if (!r.resume)
			dl_rng_seed(dl_model_rng(m), seed);
		before = bs->n;
		if (dl_visit_run(m, cfg, epochs, &d, &r, bs, &err) != DL_OK)
			fail_msg("visit: %s", err.msg);
		samples = bs->n - before;
		rounds++;
		assert_true(samples > 0);
		assert_true(period == 0 || r.pos.batches <= (int64_t) rounds * period);
		assert_int_equal(dl_blob_write(m, samples, state, state_len, &err), DL_OK);
		dl_visit_round_write(&r, rec);
		dl_model_free(m);
		if (r.done)
			break;
		assert_true(r.pos.batches == (int64_t) rounds * period);
	}
	assert_int_equal(r.pos.batches, r.total);
	free(order);
	return rounds;
}

static void
make_data(float *x, float *y, int64_t n, uint64_t seed)
{
	DlRng		r;

	dl_rng_seed(&r, seed);
	for (int64_t i = 0; i < n; i++)
	{
		double		s = 0;

		for (int64_t j = 0; j < WIDTH; j++)
		{
			x[i * WIDTH + j] = (float) dl_rng_normal(&r);
			if (j < 8)
				s += x[i * WIDTH + j];
		}
		for (int k = 0; k < CLASSES; k++)
			y[i * CLASSES + k] = 0;
		y[i * CLASSES + (s < -1 ? 0 : s < 1 ? 1 : 2)] = 1;
	}
}

static void
test_rounds_equal_one_visit(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	int64_t		rows[NBUF] = {70, 3, 0, 130, 41};	/* 33 blocks: 3 windows (128, 128, 4 rows) */
	float	   *x = malloc(sizeof(float) * NROWS * WIDTH);
	float	   *y = malloc(sizeof(float) * NROWS * CLASSES);
	DlModelSpec *s = dropout_mlp(&a);
	Part		p;
	DlError		err;
	/* batches of 7: 35 a pass, spanning windows; of 8: windows end on batches */
	const int64_t sizes[2] = {7, 8};
	const int64_t periods[] = {1, 2, 3, 5, 16, 31, 34, 35, 36, 70, 1000, 0};
	size_t		blob;

	memset(&p, 0, sizeof(p));
	make_data(x, y, NROWS, 21);
	p.x = x;
	p.y = y;
	p.sx = malloc(sizeof(float) * DL_EPOCH_WINDOW_BLOCKS * 8 * WIDTH);
	p.sy = malloc(sizeof(float) * DL_EPOCH_WINDOW_BLOCKS * 8 * CLASSES);
	assert_int_equal(dl_epoch_blocks(rows, NBUF, WIDTH, &a, &p.blocks, &p.n_blocks, &err), DL_OK);
	{
		DlModel    *m = new_model(s, &a, 0.001);

		assert_int_equal(dl_blob_size(m, &blob, &err), DL_OK);
		dl_model_free(m);
	}
	for (int bi = 0; bi < 2; bi++)
		for (int epochs = 1; epochs <= 3; epochs += 2)
			for (int sh = 0; sh < 2; sh++)
			{
				DlTrainConfig cfg = config(sizes[bi], sh == 1);
				DlModel    *ref = new_model(s, &a, 0.001);
				DlBatchStats rs = {0};
				uint8_t    *want = malloc(blob);
				int64_t		per_pass = NROWS / sizes[bi] + (NROWS % sizes[bi] != 0);

				dl_rng_seed(dl_model_rng(ref), 99);
				reference_visit(ref, &cfg, epochs, &p, &rs);
				assert_int_equal(dl_blob_write(ref, rs.n, want, blob, &err), DL_OK);
				for (size_t pi = 0; pi < sizeof(periods) / sizeof(periods[0]); pi++)
				{
					DlModel    *m0 = new_model(s, &a, 0.001);
					uint8_t    *got = malloc(blob);
					DlBatchStats gs = {0};
					int			rounds;
					int64_t		total = per_pass * epochs;

					assert_int_equal(dl_blob_write(m0, 0, got, blob, &err), DL_OK);
					dl_model_free(m0);
					p.streamed = (pi % 2) == 1;
					rounds = visit_in_rounds(s, &a, &cfg, epochs, periods[pi], &p, 99, got, blob, &gs);
					if (periods[pi] == 0)
						assert_int_equal(rounds, 1);
					else
						assert_int_equal(rounds, (total + periods[pi] - 1) / periods[pi]);
					assert_int_equal(gs.n, rs.n);
					/* weights, optimizer state and generator; the samples field differs */
					if (memcmp(got + DL_BLOB_HEADER_SIZE, want + DL_BLOB_HEADER_SIZE,
							   blob - DL_BLOB_HEADER_SIZE) != 0 ||
						memcmp(got + 32, want + 32, 48) != 0)
						fail_msg("batch %lld, %d epochs, shuffle %d, period %lld: rounds differ from one visit",
								 (long long) sizes[bi], epochs, sh, (long long) periods[pi]);
					assert_memory_equal(&gs.loss_sum, &rs.loss_sum, sizeof(double));
					free(got);
				}
				free(want);
				dl_model_free(ref);
			}
	dl_free(&a, p.blocks);
	dl_model_spec_free(s, &a);
	free(p.sx);
	free(p.sy);
	free(x);
	free(y);
	assert_no_leaks(&c);
}

/*
 * lr_factor multiplies the learning rate: a factor of 2 at lr 0.001 is
 * lr 0.002 bit for bit, and differs from a factor of 1 (the check can
 * fail).  The factor does not outlive the round.
 */
static void
test_lr_factor(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	int64_t		rows[2] = {40, 9};
	float	   *x = malloc(sizeof(float) * 49 * WIDTH);
	float	   *y = malloc(sizeof(float) * 49 * CLASSES);
	DlModelSpec *s = dropout_mlp(&a);
	DlTrainConfig cfg = config(8, true);
	DlModel    *m[3];
	int64_t		order[16];
	Part		p;
	DlError		err;

	memset(&p, 0, sizeof(p));
	make_data(x, y, 49, 3);
	p.x = x;
	p.y = y;
	assert_int_equal(dl_epoch_blocks(rows, 2, WIDTH, &a, &p.blocks, &p.n_blocks, &err), DL_OK);
	for (int i = 0; i < 3; i++)
	{
		DlVisitData d = {p.blocks, p.n_blocks, 49, order, part_window, &p};
		DlVisitRound r;

		m[i] = new_model(s, &a, i == 2 ? 0.002 : 0.001);
		dl_rng_seed(dl_model_rng(m[i]), 4);
		dl_visit_round_init(&r);
		r.lr_factor = i == 1 ? 2.0 : 1.0;
		assert_int_equal(dl_visit_run(m[i], &cfg, 2, &d, &r, NULL, &err), DL_OK);
		assert_true(r.done && r.total == 14);
		assert_true(dl_model_optim(m[i])->lr_scale == 1.0);
	}
	assert_memory_equal(dl_model_params(m[1]), dl_model_params(m[2]),
						dl_model_n_params(m[1]) * sizeof(float));
	assert_memory_not_equal(dl_model_params(m[0]), dl_model_params(m[1]),
							dl_model_n_params(m[1]) * sizeof(float));
	for (int i = 0; i < 3; i++)
		dl_model_free(m[i]);
	dl_free(&a, p.blocks);
	dl_model_spec_free(s, &a);
	free(x);
	free(y);
	assert_no_leaks(&c);
}

/* Round records: written and read back; bad ones refused; positions checked. */
static void
test_round_records(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	uint8_t		buf[DL_VISIT_ROUND_BYTES];
	uint8_t		bad[DL_VISIT_ROUND_BYTES];
	DlVisitRound r,
				back;
	int64_t		rows[1] = {20};
	int64_t		order[4];
	DlBlock    *blocks;
	int64_t		nb;
	DlModelSpec *s = dropout_mlp(&a);
	DlModel    *m = new_model(s, &a, 0.001);
	DlTrainConfig cfg = config(4, true);
	DlError		err;

	dl_visit_round_init(&r);
	r.max_batches = 7;
	r.lr_factor = 2.5;
	r.resume = true;
	r.total = 40;
	r.pos.batches = 3;
	r.pos.epoch = 1;
	r.pos.window = 16;
	r.pos.row = 5;
	dl_rng_seed(&r.pos.rng, 1);
	dl_rng_seed(&r.pos.rng_pass, 2);
	dl_rng_seed(&r.pos.rng_window, 3);
	dl_visit_round_write(&r, buf);
	assert_memory_equal(buf, "MDLR", 4);
	assert_int_equal(dl_visit_round_read(buf, sizeof(buf), &back, &err), DL_OK);
	assert_true(back.max_batches == 7 && back.lr_factor == 2.5 && back.resume && !back.done &&
				back.total == 40 && back.pos.batches == 3 && back.pos.epoch == 1 &&
				back.pos.window == 16 && back.pos.row == 5);
	assert_memory_equal(&back.pos.rng, &r.pos.rng, sizeof(DlRng));
	assert_memory_equal(&back.pos.rng_pass, &r.pos.rng_pass, sizeof(DlRng));
	assert_memory_equal(&back.pos.rng_window, &r.pos.rng_window, sizeof(DlRng));

	assert_int_equal(dl_visit_round_read(buf, sizeof(buf) - 1, &back, &err), DL_ERR_CORRUPT);
	memcpy(bad, buf, sizeof(buf));
	bad[0] = 'X';
	assert_int_equal(dl_visit_round_read(bad, sizeof(bad), &back, &err), DL_ERR_CORRUPT);
	memcpy(bad, buf, sizeof(buf));
	bad[4] = 9;					/* version */
	assert_int_equal(dl_visit_round_read(bad, sizeof(bad), &back, &err), DL_ERR_CORRUPT);
	memcpy(bad, buf, sizeof(buf));
	bad[24] = 2;				/* resume flag */
	assert_int_equal(dl_visit_round_read(bad, sizeof(bad), &back, &err), DL_ERR_CORRUPT);
	memcpy(bad, buf, sizeof(buf));
	bad[15] = 0x80;				/* max_batches < 0 */
	assert_int_equal(dl_visit_round_read(bad, sizeof(bad), &back, &err), DL_ERR_CORRUPT);
	assert_non_null(strstr(err.msg, "negative"));
	memcpy(bad, buf, sizeof(buf));
	memset(bad + 16, 0, 8);		/* lr_factor 0 */
	assert_int_equal(dl_visit_round_read(bad, sizeof(bad), &back, &err), DL_ERR_CORRUPT);
	memcpy(bad, buf, sizeof(buf));
	memset(bad + 16, 0xff, 8);	/* lr_factor NaN */
	assert_int_equal(dl_visit_round_read(bad, sizeof(bad), &back, &err), DL_ERR_CORRUPT);

	/* positions that do not fit the partition: 20 rows, 3 blocks, one window */
	assert_int_equal(dl_epoch_blocks(rows, 1, WIDTH, &a, &blocks, &nb, &err), DL_OK);
	{
		DlVisitData d = {blocks, nb, 20, order, part_window, NULL};

		r.pos.window = 16;		/* past the one window */
		r.pos.epoch = 0;
		assert_int_equal(dl_visit_run(m, &cfg, 2, &d, &r, NULL, &err), DL_ERR_CORRUPT);
		r.pos.window = 0;
		r.pos.epoch = 3;		/* past the last pass */
		assert_int_equal(dl_visit_run(m, &cfg, 2, &d, &r, NULL, &err), DL_ERR_CORRUPT);
		r.pos.epoch = 2;		/* inside a pass after the last */
		r.pos.row = 1;
		assert_int_equal(dl_visit_run(m, &cfg, 2, &d, &r, NULL, &err), DL_ERR_CORRUPT);
		r.lr_factor = -1;
		r.pos.row = 0;
		assert_int_equal(dl_visit_run(m, &cfg, 2, &d, &r, NULL, &err), DL_ERR_CORRUPT);
		/* a finished visit runs nothing and says so */
		r.lr_factor = 1;
		assert_int_equal(dl_visit_run(m, &cfg, 2, &d, &r, NULL, &err), DL_OK);
		assert_true(r.done && r.total == 10 && r.pos.batches == 3);
	}
	assert_int_equal(dl_visit_batches(3, 10, 4), 9);
	assert_int_equal(dl_visit_batches(3, 0, 4), 0);
	assert_int_equal(dl_visit_batches(INT32_MAX, INT64_MAX / 2, 1), INT64_MAX);
	dl_free(&a, blocks);
	dl_model_free(m);
	dl_model_spec_free(s, &a);
	assert_no_leaks(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rounds_equal_one_visit),
		cmocka_unit_test(test_lr_factor),
		cmocka_unit_test(test_round_records),
	};

	return cmocka_run_group_tests_name("visit", tests, NULL, NULL);
}
