/*-------------------------------------------------------------------------
 *
 * test_blob.c
 *	  Unit tests: the model state blob and the flat weights format.
 *
 * Round trips (weights, optimizer state, rng, samples seen, and training
 * that continues exactly as without the round trip), the byte layout, and
 * refusal of corrupt, truncated, foreign and other-version blobs.
 *
 * IDENTIFICATION
 *	  test/unit/test_blob.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_model.h"

enum
{
N = 40, IN = 5, K = 3};

/* Dense(8, relu) -> Dropout(0.2) -> Dense(k, softmax) on IN inputs. */
static DlModelSpec *
make_spec(const DlAllocator *a, int64_t hidden)
{
	DlModelSpec *s = dl_model_spec_create(3, a, NULL);
	DlError		err;

	assert_non_null(s);
	s->input_shape.rank = 1;
	s->input_shape.dims[0] = IN;
	dl_layer_defaults(&s->layers[0], DL_LAYER_DENSE);
	s->layers[0].units = hidden;
	s->layers[0].activation = DL_ACT_RELU;
	dl_layer_defaults(&s->layers[1], DL_LAYER_DROPOUT);
	s->layers[1].rate = 0.2;
	dl_layer_defaults(&s->layers[2], DL_LAYER_DENSE);
	s->layers[2].units = K;
	s->layers[2].activation = DL_ACT_SOFTMAX;
	if (dl_model_spec_finalize(s, &err) != DL_OK)
		fail_msg("finalize: %s", err.msg);
	return s;
}

static DlModel *
make_model(const DlModelSpec *s, const DlAllocator *a, const DlOptimConfig *o, uint64_t seed)
{
	DlModel    *m;
	DlError		err;

	if (dl_model_create(s, o, a, &m, &err) != DL_OK)
		fail_msg("create: %s", err.msg);
	if (dl_model_init_weights(m, seed, &err) != DL_OK)
		fail_msg("init: %s", err.msg);
	return m;
}

typedef struct Data
{
	float		x[N * IN];
	float		y[N];
} Data;

static void
make_data(Data *d)
{
	DlRng		r;

	dl_rng_seed(&r, 77);
	for (int i = 0; i < N * IN; i++)
		d->x[i] = (float) dl_rng_normal(&r);
	for (int i = 0; i < N; i++)
		d->y[i] = (float) dl_rng_below(&r, K);
}

static void
train(DlModel *m, const Data *d, int epochs)
{
	DlTrainConfig cfg;
	DlError		err;

	memset(&cfg, 0, sizeof(cfg));
	cfg.loss = DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY;
	cfg.batch_size = 6;
	cfg.shuffle = true;
	for (int e = 0; e < epochs; e++)
		if (dl_model_train_epoch(m, &cfg, d->x, d->y, N, NULL, &err) != DL_OK)
			fail_msg("train: %s", err.msg);
}

/* Allocate and write m's blob. */
static uint8_t *
write_blob(const DlModel *m, int64_t samples, size_t *len)
{
	uint8_t    *buf;
	DlError		err;

	assert_int_equal(dl_blob_size(m, len, &err), DL_OK);
	buf = malloc(*len);
	assert_non_null(buf);
	if (dl_blob_write(m, samples, buf, *len, &err) != DL_OK)
		fail_msg("write: %s", err.msg);
	return buf;
}

static void
test_round_trip(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlModelSpec *s = make_spec(&a, 8);
	DlOptimConfig o;
	DlModel    *m1,
			   *m2;
	Data		d;
	uint8_t    *buf;
	size_t		len;
	int64_t		seen = 0;
	DlOptimState *o1,
			   *o2;
	size_t		P = s->n_params;
	DlError		err;

	make_data(&d);
	dl_optim_config_default(&o, DL_OPTIM_NADAM);
	m1 = make_model(s, &a, &o, 1);
	train(m1, &d, 2);
	buf = write_blob(m1, 12345, &len);
	o1 = dl_model_optim(m1);
	assert_int_equal(len, DL_BLOB_HEADER_SIZE + 4 * P * (1 + (size_t) o1->n_slots));

	/* a model with other weights and rng takes everything from the blob */
	m2 = make_model(s, &a, &o, 99);
	assert_int_equal(dl_blob_read(m2, buf, len, &seen, &err), DL_OK);
	o2 = dl_model_optim(m2);
	assert_int_equal(seen, 12345);
	assert_memory_equal(dl_model_params(m1), dl_model_params(m2), P * sizeof(float));
	assert_memory_equal(o1->slots, o2->slots, P * (size_t) o1->n_slots * sizeof(float));
	assert_int_equal(o1->iterations, 14);
	assert_int_equal(o2->iterations, o1->iterations);
	assert_true(o2->m_schedule == o1->m_schedule);
	assert_true(o1->m_schedule != 1.0);
	assert_memory_equal(dl_model_rng(m1)->s, dl_model_rng(m2)->s, sizeof(DlRng));

	/* training continues exactly as without the round trip */
	train(m1, &d, 2);
	train(m2, &d, 2);
	assert_memory_equal(dl_model_params(m1), dl_model_params(m2), P * sizeof(float));
	assert_memory_equal(o1->slots, o2->slots, P * (size_t) o1->n_slots * sizeof(float));

	/* samples_seen may be NULL */
	assert_int_equal(dl_blob_read(m2, buf, len, NULL, &err), DL_OK);

	free(buf);
	dl_model_free(m1);
	dl_model_free(m2);
	dl_model_spec_free(s, &a);
	assert_no_leaks(&c);
}

/* The header is little-endian at the documented offsets. */
static void
test_layout(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlModelSpec *s = make_spec(&a, 8);
	DlOptimConfig o;
	DlModel    *m;
	uint8_t    *buf;
	size_t		len;
	uint64_t	fp = dl_model_spec_fingerprint(s);

	dl_optim_config_default(&o, DL_OPTIM_ADAM);
	m = make_model(s, &a, &o, 1);
	dl_model_params(m)[0] = 1.0f;	/* 0x3f800000 */
	buf = write_blob(m, 0x0102030405060708LL, &len);
	assert_memory_equal(buf, "MDLS", 4);
	assert_int_equal(buf[4], DL_BLOB_VERSION);
	assert_true(buf[5] == 0 && buf[6] == 0 && buf[7] == 0);
	for (int i = 0; i < 8; i++)
		assert_int_equal(buf[8 + i], (fp >> (8 * i)) & 0xff);
	assert_int_equal(buf[16], s->n_params & 0xff);
	assert_int_equal(buf[17], (s->n_params >> 8) & 0xff);
	assert_int_equal(buf[24], DL_OPTIM_ADAM);
	assert_int_equal(buf[28], 2);	/* Adam: m and v */
	assert_int_equal(buf[80], 0x08);
	assert_int_equal(buf[87], 0x01);
	assert_true(buf[96] == 0x00 && buf[97] == 0x00 && buf[98] == 0x80 && buf[99] == 0x3f);
	free(buf);

	/* a model without optimizer writes kind -1 and no slots */
	dl_model_free(m);
	m = make_model(s, &a, NULL, 1);
	buf = write_blob(m, 0, &len);
	assert_int_equal(len, DL_BLOB_HEADER_SIZE + 4 * s->n_params);
	assert_true(buf[24] == 0xff && buf[25] == 0xff && buf[26] == 0xff && buf[27] == 0xff);
	assert_int_equal(buf[28], 0);
	free(buf);

	/* too small a buffer is refused */
	{
		uint8_t		small[DL_BLOB_HEADER_SIZE];
		DlError		err;

		assert_int_equal(dl_blob_write(m, 0, small, sizeof(small), &err), DL_ERR_INVALID_ARGUMENT);
	}
	dl_model_free(m);
	dl_model_spec_free(s, &a);
	assert_no_leaks(&c);
}

/* Expect dl_blob_read to refuse buf with DL_ERR_CORRUPT and a message containing what. */
static void
expect_corrupt(DlModel *m, const uint8_t *buf, size_t len, const char *what)
{
	DlError		err;
	size_t		P = dl_model_n_params(m);
	float	   *before = malloc(P * sizeof(float));
	DlRng		rng = *dl_model_rng(m);

	memcpy(before, dl_model_params(m), P * sizeof(float));
	dl_error_clear(&err);
	assert_int_equal(dl_blob_read(m, buf, len, NULL, &err), DL_ERR_CORRUPT);
	if (strstr(err.msg, what) == NULL)
		fail_msg("expected \"%s\" in \"%s\"", what, err.msg);
	assert_true(err.hint[0] != '\0');
	/* a refused blob leaves the model untouched */
	assert_memory_equal(before, dl_model_params(m), P * sizeof(float));
	assert_memory_equal(rng.s, dl_model_rng(m)->s, sizeof(DlRng));
	free(before);
}

static void
test_rejects_bad_blobs(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlModelSpec *s = make_spec(&a, 8);
	DlModelSpec *other = make_spec(&a, 9);
	DlOptimConfig o;
	DlModel    *m,
			   *mo;
	uint8_t    *buf,
			   *bad,
			   *obuf;
	size_t		len,
				olen;
	size_t		cuts[6];
	char		want[128];

	dl_optim_config_default(&o, DL_OPTIM_ADAM);
	m = make_model(s, &a, &o, 1);
	mo = make_model(other, &a, &o, 1);
	buf = write_blob(m, 10, &len);
	bad = malloc(len + 1);

	/* bad magic */
	memcpy(bad, buf, len);
	bad[0] = 'X';
	expect_corrupt(m, bad, len, "magic");

	/* other version */
	memcpy(bad, buf, len);
	bad[4] = DL_BLOB_VERSION + 1;
	snprintf(want, sizeof(want), "unsupported model state version %d", DL_BLOB_VERSION + 1);
	expect_corrupt(m, bad, len, want);

	/* truncated anywhere */
	cuts[0] = 0;
	cuts[1] = 50;
	cuts[2] = DL_BLOB_HEADER_SIZE - 1;
	cuts[3] = DL_BLOB_HEADER_SIZE;
	cuts[4] = len / 2;
	cuts[5] = len - 1;
	for (int i = 0; i < 6; i++)
	{
		snprintf(want, sizeof(want), "model state is truncated: %zu bytes", cuts[i]);
		expect_corrupt(m, buf, cuts[i], want);
	}
	snprintf(want, sizeof(want), "expected %zu", len);
	expect_corrupt(m, buf, len - 1, want);
	/* a trailing byte */
	memcpy(bad, buf, len);
	bad[len] = 0;
	expect_corrupt(m, bad, len + 1, "expected");

	/* a flipped byte in the weights and in the optimizer state */
	memcpy(bad, buf, len);
	bad[DL_BLOB_HEADER_SIZE + 3] ^= 0x10;
	expect_corrupt(m, bad, len, "checksum mismatch");
	memcpy(bad, buf, len);
	bad[len - 1] ^= 0x01;
	expect_corrupt(m, bad, len, "checksum mismatch");

	/* a corrupt optimizer header */
	memcpy(bad, buf, len);
	bad[28] = 200;
	expect_corrupt(m, bad, len, "optimizer");

	/* another architecture, in both directions */
	obuf = write_blob(mo, 0, &olen);
	expect_corrupt(m, obuf, olen, "another architecture");
	expect_corrupt(mo, buf, len, "another architecture");
	/* same P, different layout: the fingerprint catches it */
	{
		DlModelSpec *t = make_spec(&a, 8);
		DlModel    *mt;

		t->layers[0].activation = DL_ACT_TANH;
		assert_int_equal(dl_model_spec_finalize(t, NULL), DL_OK);
		assert_int_equal(t->n_params, s->n_params);
		mt = make_model(t, &a, &o, 1);
		expect_corrupt(mt, buf, len, "another architecture");
		dl_model_free(mt);
		dl_model_spec_free(t, &a);
	}

	/* the intact blob still loads */
	assert_int_equal(dl_blob_read(m, buf, len, NULL, NULL), DL_OK);

	free(buf);
	free(bad);
	free(obuf);
	dl_model_free(m);
	dl_model_free(mo);
	dl_model_spec_free(s, &a);
	dl_model_spec_free(other, &a);
	assert_no_leaks(&c);
}

/*
 * Optimizer state that does not fit the model's optimizer (none in the
 * blob, or another kind): weights and rng load, optimizer state resets.
 */
static void
test_optimizer_mismatch(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlModelSpec *s = make_spec(&a, 8);
	DlOptimConfig adam,
				sgd;
	DlModel    *trained,
			   *plain,
			   *m,
			   *fresh;
	Data		d;
	uint8_t    *buf;
	size_t		len;
	size_t		P = s->n_params;
	DlOptimState *st;

	make_data(&d);
	dl_optim_config_default(&adam, DL_OPTIM_ADAM);
	dl_optim_config_default(&sgd, DL_OPTIM_SGD);
	sgd.momentum = 0.9;
	fresh = make_model(s, &a, &adam, 3);

	/* blob of an SGD-momentum model into an Adam model */
	trained = make_model(s, &a, &sgd, 1);
	train(trained, &d, 1);
	buf = write_blob(trained, 0, &len);
	m = make_model(s, &a, &adam, 3);
	train(m, &d, 1);
	st = dl_model_optim(m);
	assert_true(st->iterations > 0);
	assert_int_equal(dl_blob_read(m, buf, len, NULL, NULL), DL_OK);
	assert_memory_equal(dl_model_params(m), dl_model_params(trained), P * sizeof(float));
	assert_memory_equal(dl_model_rng(m)->s, dl_model_rng(trained)->s, sizeof(DlRng));
	assert_int_equal(st->iterations, 0);
	assert_memory_equal(st->slots, dl_model_optim(fresh)->slots,
						P * (size_t) st->n_slots * sizeof(float));
	free(buf);

	/* blob without optimizer state (kind -1) */
	plain = make_model(s, &a, NULL, 5);
	buf = write_blob(plain, 0, &len);
	train(m, &d, 1);
	assert_true(st->iterations > 0);
	assert_int_equal(dl_blob_read(m, buf, len, NULL, NULL), DL_OK);
	assert_memory_equal(dl_model_params(m), dl_model_params(plain), P * sizeof(float));
	assert_int_equal(st->iterations, 0);
	assert_memory_equal(st->slots, dl_model_optim(fresh)->slots,
						P * (size_t) st->n_slots * sizeof(float));
	free(buf);

	/* an inference-only model takes the weights of a blob with optimizer state */
	buf = write_blob(trained, 0, &len);
	assert_int_equal(dl_blob_read(plain, buf, len, NULL, NULL), DL_OK);
	assert_memory_equal(dl_model_params(plain), dl_model_params(trained), P * sizeof(float));
	free(buf);

	dl_model_free(trained);
	dl_model_free(plain);
	dl_model_free(m);
	dl_model_free(fresh);
	dl_model_spec_free(s, &a);
	assert_no_leaks(&c);
}

static void
test_weights_format(void **state)
{
	float		w[7] = {1.0f, -2.5f, 0.0f, 1e-30f, 3.25e7f, -0.0f, 0.1f};
	float		back[7];
	uint8_t		buf[29];
	DlError		err;

	dl_weights_write(buf, w, 7);
	/* little-endian float32: 1.0f is 00 00 80 3f, -2.5f is 00 00 20 c0 */
	assert_true(buf[0] == 0x00 && buf[1] == 0x00 && buf[2] == 0x80 && buf[3] == 0x3f);
	assert_true(buf[4] == 0x00 && buf[5] == 0x00 && buf[6] == 0x20 && buf[7] == 0xc0);
	assert_int_equal(dl_weights_read(back, 7, buf, 28, &err), DL_OK);
	assert_memory_equal(back, w, sizeof(w));

	/* wrong length: the message names both counts */
	assert_int_equal(dl_weights_read(back, 8, buf, 28, &err), DL_ERR_SHAPE);
	assert_non_null(strstr(err.msg, "weights have 7 values"));
	assert_non_null(strstr(err.msg, "needs 8"));
	assert_true(err.hint[0] != '\0');
	assert_int_equal(dl_weights_read(back, 6, buf, 28, &err), DL_ERR_SHAPE);
	assert_non_null(strstr(err.msg, "7 values"));
	assert_non_null(strstr(err.msg, "6"));
	/* not a whole number of floats */
	assert_int_equal(dl_weights_read(back, 7, buf, 29, &err), DL_ERR_SHAPE);
	assert_non_null(strstr(err.msg, "29 bytes"));
	assert_memory_equal(back, w, sizeof(w));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_rejects_bad_blobs),
		cmocka_unit_test(test_optimizer_mismatch),
		cmocka_unit_test(test_weights_format),
	};

	return cmocka_run_group_tests_name("blob", tests, NULL, NULL);
}
