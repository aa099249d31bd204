/*-------------------------------------------------------------------------
 *
 * test_epoch.c
 *	  The one shuffle (dl_epoch.h): blocks of a partition, the block order
 *	  of an epoch, and passes over windows.  A partition fed from memory
 *	  that stays put (cached) and one whose windows are copied into a
 *	  scratch buffer that is overwritten after each window (streamed) give
 *	  byte-identical weights, with Dropout drawing from the same generator
 *	  and batches that span windows.
 *
 * IDENTIFICATION
 *	  test/unit/test_epoch.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_epoch.h"
#include "madlib_dl/dl_model.h"

/* Input n -> Dense(h, relu) -> Dropout(0.3) -> Dense(k, softmax). */
static DlModelSpec *
dropout_mlp(const DlAllocator *a, int64_t n, int64_t h, int64_t k)
{
	DlModelSpec *s = dl_model_spec_create(3, a, NULL);
	DlError		err;

	assert_non_null(s);
	s->input_shape.rank = 1;
	s->input_shape.dims[0] = n;
	dl_layer_defaults(&s->layers[0], DL_LAYER_DENSE);
	s->layers[0].units = h;
	s->layers[0].activation = DL_ACT_RELU;
	dl_layer_defaults(&s->layers[1], DL_LAYER_DROPOUT);
	s->layers[1].rate = 0.3;
	dl_layer_defaults(&s->layers[2], DL_LAYER_DENSE);
	s->layers[2].units = k;
	s->layers[2].activation = DL_ACT_SOFTMAX;
	if (dl_model_spec_finalize(s, &err) != DL_OK)
		fail_msg("finalize: %s", err.msg);
	return s;
}

static DlModel *
new_model(const DlModelSpec *s, const DlAllocator *a, uint64_t seed)
{
	DlOptimConfig o;
	DlModel    *m;
	DlError		err;

	dl_optim_config_default(&o, DL_OPTIM_ADAM);
	if (dl_model_create(s, &o, a, &m, &err) != DL_OK)
		fail_msg("create: %s", err.msg);
	if (dl_model_init_weights(m, seed, &err) != DL_OK)
		fail_msg("init: %s", err.msg);
	return m;
}

static DlTrainConfig
config(DlLossKind loss, int64_t bs, bool shuffle)
{
	DlTrainConfig cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.loss = loss;
	cfg.metric = DL_METRIC_ACCURACY;
	cfg.batch_size = bs;
	cfg.shuffle = shuffle;
	return cfg;
}

/* Blocks: cut at block_rows, never across buffers; empty buffers have none. */
static void
test_blocks(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	int64_t		width = DL_EPOCH_BLOCK_BYTES / (2 * sizeof(float));	/* 2 rows a block */
	int64_t		rows[3] = {5, 0, 3};
	DlBlock		want[5] = {{0, 0, 2, 0}, {0, 2, 2, 2}, {0, 4, 1, 4}, {2, 0, 2, 5}, {2, 2, 1, 7}};
	DlBlock    *b;
	int64_t		nb;
	DlError		err;
	int64_t		bad[1] = {-1};

	assert_int_equal(dl_epoch_block_rows(width), 2);
	assert_int_equal(dl_epoch_block_rows(1), DL_EPOCH_BLOCK_BYTES / sizeof(float));
	assert_int_equal(dl_epoch_block_rows(INT64_MAX), 1);
	assert_int_equal(dl_epoch_window_rows(width), 2 * DL_EPOCH_WINDOW_BLOCKS);
	assert_int_equal(dl_epoch_blocks(rows, 3, width, &a, &b, &nb, &err), DL_OK);
	assert_int_equal(nb, 5);
	for (int i = 0; i < 5; i++)
	{
		assert_int_equal(b[i].buffer, want[i].buffer);
		assert_int_equal(b[i].offset, want[i].offset);
		assert_int_equal(b[i].n, want[i].n);
		assert_int_equal(b[i].start, want[i].start);
	}
	dl_free(&a, b);
	assert_int_equal(dl_epoch_count_blocks(bad, 1, width, &nb, &err), DL_ERR_SHAPE);
	assert_no_leaks(&c);
}

/* The order is a permutation drawn from the generator, identity without shuffle. */
static void
test_order(void **state)
{
	int64_t		o[40];
	int			seen[40] = {0};
	DlRng		r1,
				r2;
	bool		moved = false;

	dl_rng_seed(&r1, 7);
	r2 = r1;
	dl_epoch_order(&r1, false, o, 40);
	for (int i = 0; i < 40; i++)
		assert_int_equal(o[i], i);
	assert_memory_equal(&r1, &r2, sizeof(r1));	/* no draw */
	dl_epoch_order(&r1, true, o, 40);
	for (int i = 0; i < 40; i++)
	{
		seen[o[i]]++;
		moved |= o[i] != i;
	}
	for (int i = 0; i < 40; i++)
		assert_int_equal(seen[i], 1);
	assert_true(moved);
}

#define NBUF 5
#define WIDTH ((int64_t) (DL_EPOCH_BLOCK_BYTES / (8 * sizeof(float))))	/* 8 rows a block */
#define CLASSES 3

/*
 * One epoch over a partition of buffers rows[], as segments train it:
 * the block order, then windows of DL_EPOCH_WINDOW_BLOCKS blocks.
 * streamed: each window's rows are copied into scratch first, which is
 * overwritten (NaN) once the window is done.
 */
static void
epoch(DlModel *m, const DlTrainConfig *cfg, const float *x, const float *y, const int64_t *rows,
	  int nbuf, bool streamed, DlBatchStats *st)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlBlock    *blocks;
	int64_t		nb;
	int64_t    *order;
	int64_t		total = 0;
	float	   *sx = malloc(sizeof(float) * DL_EPOCH_WINDOW_BLOCKS * 8 * WIDTH);
	float	   *sy = malloc(sizeof(float) * DL_EPOCH_WINDOW_BLOCKS * 8 * CLASSES);
	DlPass		p;
	DlError		err;

	for (int i = 0; i < nbuf; i++)
		total += rows[i];
	assert_int_equal(dl_epoch_blocks(rows, nbuf, WIDTH, &a, &blocks, &nb, &err), DL_OK);
	order = malloc(sizeof(int64_t) * nb);
	dl_epoch_order(dl_model_rng(m), cfg->shuffle, order, nb);
	assert_int_equal(dl_pass_begin(&p, m, cfg, true, total, st, &err), DL_OK);
	for (int64_t w = 0; w < nb; w += DL_EPOCH_WINDOW_BLOCKS)
	{
		DlRows		runs[DL_EPOCH_WINDOW_BLOCKS];
		int			k = 0;
		int64_t		used = 0;

		memset(runs, 0, sizeof(runs));

		for (; k < DL_EPOCH_WINDOW_BLOCKS && w + k < nb; k++)
		{
			const DlBlock *b = &blocks[order[w + k]];

			runs[k].n = b->n;
			runs[k].y_width = CLASSES;
			if (streamed)
			{
				memcpy(sx + used * WIDTH, x + b->start * WIDTH, sizeof(float) * b->n * WIDTH);
				memcpy(sy + used * CLASSES, y + b->start * CLASSES, sizeof(float) * b->n * CLASSES);
				runs[k].x = sx + used * WIDTH;
				runs[k].y = sy + used * CLASSES;
				used += b->n;
			}
			else
			{
				runs[k].x = x + b->start * WIDTH;
				runs[k].y = y + b->start * CLASSES;
			}
		}
		if (dl_pass_window(&p, runs, k, &err) != DL_OK)
			fail_msg("window: %s", err.msg);
		for (int64_t i = 0; streamed && i < DL_EPOCH_WINDOW_BLOCKS * 8 * WIDTH; i++)
			sx[i] = NAN;
	}
	if (dl_pass_end(&p, &err) != DL_OK)
		fail_msg("end: %s", err.msg);
	free(order);
	free(sx);
	free(sy);
	dl_free(&a, blocks);
	assert_no_leaks(&c);
}

/* Data of n rows: x normal, y one-hot of a class that depends on x. */
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

/*
 * Cached and streamed give byte-identical weights and sums, for two
 * losses (the sparse one takes class indices made from the one-hot
 * rows), shuffled or not; batches of 7 span windows and blocks.
 */
static void
test_cached_equals_streamed(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	int64_t		rows[NBUF] = {70, 3, 0, 130, 41};	/* 9 + 1 + 0 + 17 + 6 blocks: 3 windows */
	int64_t		n = 244;
	float	   *x = malloc(sizeof(float) * n * WIDTH);
	float	   *y = malloc(sizeof(float) * n * CLASSES);
	DlModelSpec *s = dropout_mlp(&a, WIDTH, 6, CLASSES);
	DlLossKind	losses[2] = {DL_LOSS_CATEGORICAL_CROSSENTROPY, DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY};

	make_data(x, y, n, 11);
	for (int l = 0; l < 2; l++)
		for (int sh = 0; sh < 2; sh++)
		{
			DlTrainConfig cfg = config(losses[l], 7, sh == 1);
			DlModel    *m1 = new_model(s, &a, 5);
			DlModel    *m2 = new_model(s, &a, 5);
			DlModel    *m3 = new_model(s, &a, 6);
			DlBatchStats s1 = {0},
						s2 = {0},
						s3 = {0};

			for (int e = 0; e < 3; e++)
			{
				epoch(m1, &cfg, x, y, rows, NBUF, false, &s1);
				epoch(m2, &cfg, x, y, rows, NBUF, true, &s2);
				epoch(m3, &cfg, x, y, rows, NBUF, false, &s3);
			}
			assert_int_equal(s1.n, 3 * n);
			assert_int_equal(s2.n, 3 * n);
			assert_memory_equal(dl_model_params(m1), dl_model_params(m2),
								dl_model_n_params(m1) * sizeof(float));
			assert_memory_equal(&s1.loss_sum, &s2.loss_sum, sizeof(double));
			assert_memory_equal(dl_model_rng(m1), dl_model_rng(m2), sizeof(DlRng));
			/* and a different seed trains differently: the check can fail */
			assert_memory_not_equal(dl_model_params(m1), dl_model_params(m3),
									dl_model_n_params(m1) * sizeof(float));
			dl_model_free(m1);
			dl_model_free(m2);
			dl_model_free(m3);
		}
	dl_model_spec_free(s, &a);
	free(x);
	free(y);
	assert_no_leaks(&c);
}

/* Without shuffling the batches are those of the plain sequence. */
static void
test_unshuffled_is_sequential(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	int64_t		rows[NBUF] = {70, 3, 0, 130, 41};
	int64_t		n = 244;
	float	   *x = malloc(sizeof(float) * n * WIDTH);
	float	   *y = malloc(sizeof(float) * n * CLASSES);
	DlModelSpec *s = dropout_mlp(&a, WIDTH, 6, CLASSES);
	DlTrainConfig cfg = config(DL_LOSS_CATEGORICAL_CROSSENTROPY, 9, false);
	DlModel    *m1 = new_model(s, &a, 5);
	DlModel    *m2 = new_model(s, &a, 5);
	DlModel    *m3 = new_model(s, &a, 5);
	DlError		err;

	make_data(x, y, n, 12);
	epoch(m1, &cfg, x, y, rows, NBUF, true, NULL);
	for (int64_t b = 0; b < n; b += 9)
		assert_int_equal(dl_model_train_batch(m2, &cfg, x + b * WIDTH, y + b * CLASSES,
											  n - b < 9 ? n - b : 9, NULL, &err), DL_OK);
	assert_int_equal(dl_model_train_epoch(m3, &cfg, x, y, n, NULL, &err), DL_OK);
	assert_memory_equal(dl_model_params(m1), dl_model_params(m2),
						dl_model_n_params(m1) * sizeof(float));
	assert_memory_equal(dl_model_params(m1), dl_model_params(m3),
						dl_model_n_params(m1) * sizeof(float));
	dl_model_free(m1);
	dl_model_free(m2);
	dl_model_free(m3);
	dl_model_spec_free(s, &a);
	free(x);
	free(y);
	assert_no_leaks(&c);
}

/* An evaluation pass gives dl_model_evaluate's sums; one-hot rows become indices. */
static void
test_eval_pass(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	int64_t		n = 50;
	float	   *x = malloc(sizeof(float) * n * WIDTH);
	float	   *y = malloc(sizeof(float) * n * CLASSES);
	float	   *yi = malloc(sizeof(float) * n);
	DlModelSpec *s = dropout_mlp(&a, WIDTH, 6, CLASSES);
	DlTrainConfig cfg = config(DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, 8, true);
	DlModel    *m = new_model(s, &a, 5);
	DlBatchStats e1 = {0},
				e2 = {0};
	DlRows		runs[2];
	DlPass		p;
	DlError		err;

	make_data(x, y, n, 13);
	for (int64_t i = 0; i < n; i++)
		for (int k = 0; k < CLASSES; k++)
			if (y[i * CLASSES + k] == 1)
				yi[i] = (float) k;
	assert_int_equal(dl_model_evaluate(m, &cfg, x, yi, n, &e1, &err), DL_OK);
	runs[0] = (DlRows) {x, y, 21, CLASSES};
	runs[1] = (DlRows) {x + 21 * WIDTH, y + 21 * CLASSES, n - 21, CLASSES};
	assert_int_equal(dl_pass_begin(&p, m, &cfg, false, n, &e2, &err), DL_OK);
	assert_int_equal(dl_pass_window(&p, runs, 1, &err), DL_OK);
	assert_int_equal(dl_pass_window(&p, runs + 1, 1, &err), DL_OK);
	assert_int_equal(dl_pass_end(&p, &err), DL_OK);
	assert_int_equal(e1.n, n);
	assert_int_equal(e2.n, n);
	assert_memory_equal(&e1.loss_sum, &e2.loss_sum, sizeof(double));
	assert_memory_equal(&e1.metric_sum, &e2.metric_sum, sizeof(double));

	/* more rows than begun for, too many runs, a bad label width */
	assert_int_equal(dl_pass_begin(&p, m, &cfg, false, 10, NULL, &err), DL_OK);
	assert_int_equal(dl_pass_window(&p, runs, 1, &err), DL_ERR_INVALID_ARGUMENT);
	assert_int_equal(dl_pass_window(&p, runs, DL_PASS_MAX_RUNS + 1, &err), DL_ERR_INVALID_ARGUMENT);
	runs[0].y_width = 2;
	assert_int_equal(dl_pass_window(&p, runs, 1, &err), DL_ERR_SHAPE);
	dl_model_free(m);
	dl_model_spec_free(s, &a);
	free(x);
	free(y);
	free(yi);
	assert_no_leaks(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blocks),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_cached_equals_streamed),
		cmocka_unit_test(test_unshuffled_is_sequential),
		cmocka_unit_test(test_eval_pass),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
