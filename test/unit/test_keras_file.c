/*-------------------------------------------------------------------------
 *
 * test_keras_file.c
 *	  Unit tests: Keras model files (.keras archives, legacy .h5) decoded
 *	  by dl_keras_file_decode, and the record that carries the outcome
 *	  from the server's decoding child (dl_keras_file_encode / _parse).
 *
 * The files are test/data/keras_files.sql's (written with h5py to Keras'
 * layouts by test/keras_files/gen_keras_files.py): the weights of each
 * must be the flat float32 weights the generator wrote beside it; the
 * hostile files, every truncation of a record and every allocation
 * failure must be refused without a leak; a nested model (a model used
 * as a layer) decodes with its tensors named by the inner layers, and
 * its architecture reads as the flat model.
 *
 * IDENTIFICATION
 *	  test/unit/test_keras_file.c
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_keras.h"
#include "madlib_dl/dl_keras_file.h"

static char *sql_text;

/* The bytes of \set name '\\x...' in keras_files.sql (malloc'd). */
static uint8_t *
fixture_bytes(const char *name, size_t *len)
{
	char		key[128];
	const char *p,
			   *e;
	uint8_t    *out;
	size_t		n;

	if (sql_text == NULL)
		sql_text = read_fixture("../../data/keras_files.sql", NULL);
	snprintf(key, sizeof(key), "\\set %s '\\\\x", name);
	p = strstr(sql_text, key);
	if (p == NULL)
		fail_msg("no fixture %s in keras_files.sql", name);
	p += strlen(key);
	e = strchr(p, '\'');
	assert_non_null(e);
	n = (size_t) (e - p) / 2;
	out = malloc(n + 1);
	for (size_t i = 0; i < n; i++)
	{
		unsigned int v;

		assert_int_equal(sscanf(p + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t) v;
	}
	*len = n;
	return out;
}

static DlKerasFileLimits
limits(void)
{
	DlKerasFileLimits l = {1 << 26, 1 << 26, 1 << 24, 1000, 1 << 26};

	return l;
}

/* Decode fixture name; its tensors' values must be found in <model>_weights. */
static void
check_file(const char *name, const char *weights, size_t n_tensors, bool in_order)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlKerasFileLimits lim = limits();
	DlKerasFile f;
	DlError		err;
	size_t		len,
				wlen,
				total = 0;
	uint8_t    *buf = fixture_bytes(name, &len);
	uint8_t    *w = fixture_bytes(weights, &wlen);

	dl_error_clear(&err);
	if (dl_keras_file_decode(buf, len, &lim, &a, &f, &err) != DL_OK)
		fail_msg("%s: %s", name, err.msg);
	assert_int_equal(f.n_tensors, n_tensors);
	assert_non_null(strstr(f.config, "\"class_name\": \"Sequential\""));
	assert_int_equal(strlen(f.config), f.config_len);
	for (size_t i = 0; i < f.n_tensors; i++)
	{
		const DlKerasFileTensor *t = &f.tensors[i];
		size_t		nb = t->count * sizeof(float);

		if (in_order)
			assert_memory_equal(w + total, t->data, nb);
		else if (memmem(w, wlen, t->data, nb) == NULL)
			fail_msg("%s: tensor %s is not one of the weights", name, t->path);
		if (i > 0 && strcmp(t->layer, f.tensors[i - 1].layer) == 0)
			assert_int_equal(t->index, f.tensors[i - 1].index + 1);
		else
			assert_int_equal(t->index, 0);
		total += nb;
	}
	assert_int_equal(total, wlen);
	dl_keras_file_free(&a, &f);
	assert_no_leaks(&c);
	free(buf);
	free(w);
}

static void
test_files(void **state)
{
	check_file("mlp_keras", "mlp_weights", 4, true);
	check_file("mlp_h5", "mlp_weights", 4, true);
	check_file("mlp_k213_keras", "mlp_weights", 4, true);
	check_file("mlp_f64_keras", "mlp_weights", 4, true);
	check_file("cnn_keras", "cnn_weights", 8, false);
	check_file("cnn_h5", "cnn_weights", 8, true);
	check_file("lstm_keras", "lstm_weights", 6, false);
	check_file("lstm_h5", "lstm_weights", 6, true);
}

/* The LSTM's weights are its cell's, in the layer's order. */
static void
test_lstm_names(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlKerasFileLimits lim = limits();
	DlKerasFile f;
	DlError		err;
	size_t		len;
	uint8_t    *buf = fixture_bytes("lstm_keras", &len);
	int			found = 0;

	assert_int_equal(dl_keras_file_decode(buf, len, &lim, &a, &f, &err), DL_OK);
	assert_int_equal(f.format, DL_KERAS_FILE_KERAS);
	for (size_t i = 0; i < f.n_tensors; i++)
		if (strcmp(f.tensors[i].layer, "lstm") == 0)
		{
			char		want[64];

			snprintf(want, sizeof(want), "layers/lstm/cell/vars/%d", found);
			assert_string_equal(f.tensors[i].path, want);
			assert_int_equal(f.tensors[i].index, found);
			found++;
		}
	assert_int_equal(found, 3);
	dl_keras_file_free(&a, &f);
	free(buf);
	buf = fixture_bytes("lstm_h5", &len);
	assert_int_equal(dl_keras_file_decode(buf, len, &lim, &a, &f, &err), DL_OK);
	assert_int_equal(f.format, DL_KERAS_FILE_H5);
	assert_string_equal(f.tensors[1].path, "model_weights/lstm/lstm/lstm_cell/kernel:0");
	assert_int_equal(f.tensors[1].ndim, 2);
	assert_int_equal(f.tensors[1].dims[1], 20);
	dl_keras_file_free(&a, &f);
	assert_no_leaks(&c);
	free(buf);
}

static void
expect_refused(const char *name, DlStatus code, const char *substr, const DlKerasFileLimits *lim)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlKerasFile f;
	DlError		err;
	size_t		len;
	uint8_t    *buf = fixture_bytes(name, &len);
	DlStatus	st = dl_keras_file_decode(buf, len, lim, &a, &f, &err);

	if (st != code || strstr(err.msg, substr) == NULL)
		fail_msg("%s: status %d \"%s\", wanted %d with \"%s\"", name, st, err.msg, code, substr);
	assert_int_equal(f.n_tensors, 0);
	assert_null(f.config);
	assert_no_leaks(&c);
	free(buf);
}

static void
test_refusals(void **state)
{
	DlKerasFileLimits lim = limits();

	expect_refused("bad_truncated", DL_ERR_CORRUPT, "not a readable .keras archive", &lim);
	expect_refused("bad_garbage", DL_ERR_CORRUPT, "not a readable .keras archive", &lim);
	expect_refused("bad_h5garbage", DL_ERR_CORRUPT, "not a readable HDF5 file", &lim);
	expect_refused("bad_h5truncated", DL_ERR_CORRUPT, "not a readable HDF5 file", &lim);
	expect_refused("bad_noconfig", DL_ERR_CORRUPT, "no config.json", &lim);
	expect_refused("bad_int", DL_ERR_UNSUPPORTED, "holds integers", &lim);
	/* no internal error (libhdf5 refuses an empty image): the file's fault */
	expect_refused("bad_emptyh5", DL_ERR_CORRUPT, "model.weights.h5 is not a readable HDF5 file (0 bytes)", &lim);
	lim.max_entry = 1 << 19;
	expect_refused("bad_bomb", DL_ERR_LIMIT, "1048576 bytes uncompressed", &lim);
	lim = limits();
	lim.max_tensors = 3;
	expect_refused("mlp_h5", DL_ERR_LIMIT, "more than 3 tensors", &lim);
	lim = limits();
	lim.max_bytes = 100;
	expect_refused("mlp_keras", DL_ERR_LIMIT, "over the limit of 100 bytes", &lim);
	lim = limits();
	lim.max_file = 1000;
	expect_refused("mlp_keras", DL_ERR_LIMIT, "more than the limit of 1000", &lim);
	lim = limits();
	lim.max_config = 100;
	expect_refused("mlp_keras", DL_ERR_LIMIT, "config.json", &lim);
	expect_refused("mlp_h5", DL_ERR_LIMIT, "model_config", &lim);
}

/*
 * Sequential([base, Dense]) with base a functional model: Keras 2's .h5
 * keeps the inner model's weights in base's group (its weight_names
 * "dense/kernel:0", ...), Keras 3's .keras under layers/base/layers/dense.
 * Both decode with the tensors named by the inner layer ("dense"), as
 * the architecture, the nested model inlined, names its layers.
 */
static void
test_nested(void **state)
{
	static const char *const names[] = {"nested_h5", "nested_keras"};
	static const char *const first[][2] = {
		{"dense", "model_weights/base/dense/kernel:0"},
		{"dense", "layers/base/layers/dense/vars/0"},
	};

	for (int k = 0; k < 2; k++)
	{
		TestAllocCounter c;
		DlAllocator a = test_allocator(&c);
		DlKerasFileLimits lim = limits();
		DlKerasFile f;
		DlModelSpec *spec = NULL;
		DlError		err;
		size_t		len;
		uint8_t    *buf = fixture_bytes(names[k], &len);

		if (dl_keras_file_decode(buf, len, &lim, &a, &f, &err) != DL_OK)
			fail_msg("%s: %s", names[k], err.msg);
		assert_int_equal(f.n_tensors, 4);
		assert_string_equal(f.tensors[0].layer, first[k][0]);
		assert_string_equal(f.tensors[0].path, first[k][1]);
		assert_int_equal(f.tensors[1].index, 1);
		assert_int_equal(f.tensors[1].count, 8);
		assert_string_equal(f.tensors[2].layer, "dense_1");
		assert_int_equal(f.tensors[2].index, 0);
		assert_int_equal(f.tensors[3].count, 3);
		dl_error_clear(&err);
		if (dl_keras_parse(f.config, f.config_len, &a, &spec, &err) != DL_OK)
			fail_msg("%s: %s", names[k], err.msg);
		assert_int_equal(spec->n_layers, 2);
		assert_string_equal(spec->layers[0].name, "dense");
		assert_string_equal(spec->layers[1].name, "dense_1");
		assert_int_equal(spec->n_params, 4 * 8 + 8 + 8 * 3 + 3);
		dl_model_spec_free(spec, &a);
		dl_keras_file_free(&a, &f);
		assert_no_leaks(&c);
		free(buf);
	}
	/* an inner Sequential (Keras 2) or Model (Keras 2.2) without layers */
	for (int k = 0; k < 2; k++)
	{
		TestAllocCounter c;
		DlAllocator a = test_allocator(&c);
		DlModelSpec *spec = NULL;
		DlError		err;
		char		json[512];

		snprintf(json, sizeof(json),
				 "{\"class_name\": \"Sequential\", \"config\": {\"layers\": ["
				 "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 4]}}, "
				 "{\"class_name\": \"%s\", \"config\": {\"name\": \"inner\", \"layers\": []}}, "
				 "{\"class_name\": \"Dense\", \"config\": {\"units\": 2}}]}}", k ? "Model" : "Sequential");
		assert_int_equal(dl_keras_parse(json, strlen(json), &a, &spec, &err), DL_ERR_PARSE);
		assert_string_equal(err.msg, "nested model \"inner\" has no layers");
		assert_no_leaks(&c);
	}
}

/* Every allocation that fails is a clean DL_ERR_NO_MEMORY with nothing leaked. */
static void
test_alloc_failures(void **state)
{
	const char *names[] = {"mlp_h5", "lstm_keras"};

	for (size_t k = 0; k < 2; k++)
	{
		size_t		len;
		uint8_t    *buf = fixture_bytes(names[k], &len);
		DlKerasFileLimits lim = limits();

		for (int64_t i = 0;; i++)
		{
			TestAllocCounter c;
			DlAllocator a = test_allocator(&c);
			DlKerasFile f;
			DlError		err;
			DlStatus	st;

			c.fail_after = i;
			st = dl_keras_file_decode(buf, len, &lim, &a, &f, &err);
			if (st == DL_OK)
			{
				dl_keras_file_free(&a, &f);
				assert_no_leaks(&c);
				break;
			}
			assert_int_equal(st, DL_ERR_NO_MEMORY);
			assert_no_leaks(&c);
		}
		free(buf);
	}
}

/* The child's record: round trip, its error form, and every corruption refused. */
static void
test_record(void **state)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlKerasFileLimits lim = limits();
	DlKerasFile f,
				g;
	DlError		err,
				e2;
	size_t		len,
				rlen;
	uint8_t    *buf = fixture_bytes("cnn_h5", &len);
	uint8_t    *rec;

	assert_int_equal(dl_keras_file_decode(buf, len, &lim, &a, &f, &err), DL_OK);
	assert_int_equal(dl_keras_file_encode(DL_OK, &err, &f, &a, &rec, &rlen, &e2), DL_OK);
	assert_true(rlen <= dl_keras_file_encoded_max(&lim));
	assert_int_equal(dl_keras_file_parse(rec, rlen, &lim, &a, &g, &err), DL_OK);
	assert_int_equal(g.n_tensors, f.n_tensors);
	assert_string_equal(g.config, f.config);
	for (size_t i = 0; i < f.n_tensors; i++)
	{
		assert_string_equal(g.tensors[i].layer, f.tensors[i].layer);
		assert_string_equal(g.tensors[i].path, f.tensors[i].path);
		assert_int_equal(g.tensors[i].count, f.tensors[i].count);
		assert_memory_equal(g.tensors[i].data, f.tensors[i].data, f.tensors[i].count * sizeof(float));
	}
	dl_keras_file_free(&a, &g);
	/* every truncation, and a byte too many */
	for (size_t cut = 0; cut < rlen; cut++)
	{
		assert_int_equal(dl_keras_file_parse(rec, cut, &lim, &a, &g, &err), DL_ERR_CORRUPT);
		assert_int_equal(g.n_tensors, 0);
	}
	{
		uint8_t    *more = malloc(rlen + 1);

		memcpy(more, rec, rlen);
		more[rlen] = 0;
		assert_int_equal(dl_keras_file_parse(more, rlen + 1, &lim, &a, &g, &err), DL_ERR_CORRUPT);
		/* a length field made huge: the config's (after magic, status, format) */
		memset(more + 12, 0xff, 8);
		assert_int_equal(dl_keras_file_parse(more, rlen, &lim, &a, &g, &err), DL_ERR_CORRUPT);
		free(more);
	}
	/* under lower limits the same record is refused */
	lim.max_bytes = 64;
	assert_int_equal(dl_keras_file_parse(rec, rlen, &lim, &a, &g, &err), DL_ERR_CORRUPT);
	lim = limits();
	dl_free(&a, rec);
	dl_keras_file_free(&a, &f);

	/* the error form carries the decode's status, message and hint */
	dl_error_set(&e2, DL_ERR_LIMIT, "the file has 9 bytes, more than the limit of 1");
	dl_error_hint(&e2, "Raise the limit.");
	memset(&f, 0, sizeof(f));
	assert_int_equal(dl_keras_file_encode(DL_ERR_LIMIT, &e2, &f, &a, &rec, &rlen, &err), DL_OK);
	dl_error_clear(&err);
	assert_int_equal(dl_keras_file_parse(rec, rlen, &lim, &a, &g, &err), DL_ERR_LIMIT);
	assert_string_equal(err.msg, e2.msg);
	assert_string_equal(err.hint, "Raise the limit.");
	/* fuzz_keras_file's findings: bytes after an error record, an empty message */
	{
		uint8_t    *more = malloc(rlen + 1);

		memcpy(more, rec, rlen);
		more[rlen] = 0;
		assert_int_equal(dl_keras_file_parse(more, rlen + 1, &lim, &a, &g, &err), DL_ERR_CORRUPT);
		free(more);
	}
	dl_free(&a, rec);
	dl_error_clear(&e2);
	e2.code = DL_ERR_LIMIT;
	assert_int_equal(dl_keras_file_encode(DL_ERR_LIMIT, &e2, &f, &a, &rec, &rlen, &err), DL_OK);
	assert_int_equal(dl_keras_file_parse(rec, rlen, &lim, &a, &g, &err), DL_ERR_CORRUPT);
	dl_free(&a, rec);
	assert_no_leaks(&c);

	/*
	 * A record that declares as many tensors as the limit in 32 bytes:
	 * refused before the tensors' array is allocated (it was 100001 of
	 * them for 32 bytes)
	 */
	{
		uint8_t		small[4 + 4 + 4 + 8 + 2 + 8];
		uint32_t	u;
		uint64_t	l = 2,
					n = 1000;

		u = 0x464b4c44u;
		memcpy(small, &u, 4);
		u = DL_OK;
		memcpy(small + 4, &u, 4);
		u = DL_KERAS_FILE_H5;
		memcpy(small + 8, &u, 4);
		memcpy(small + 12, &l, 8);
		memcpy(small + 20, "{}", 2);
		memcpy(small + 22, &n, 8);
		c.bytes_peak = 0;
		assert_int_equal(dl_keras_file_parse(small, sizeof(small), &lim, &a, &g, &err), DL_ERR_CORRUPT);
		assert_true(c.bytes_peak < 1024);
		n = 0;
		memcpy(small + 22, &n, 8);
		assert_int_equal(dl_keras_file_parse(small, sizeof(small), &lim, &a, &g, &err), DL_OK);
		assert_string_equal(g.config, "{}");
		dl_keras_file_free(&a, &g);
	}
	assert_no_leaks(&c);
	free(buf);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_lstm_names),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_alloc_failures),
		cmocka_unit_test(test_record),
	};
	int			rc = cmocka_run_group_tests_name("keras_file", tests, NULL, NULL);

	free(sql_text);
	return rc;
}
