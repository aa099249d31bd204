/*-------------------------------------------------------------------------
 *
 * test_fuzz_regressions.c
 *	  Unit tests: every failure the libFuzzer targets (test/fuzz/) found,
 *	  reduced to a readable input, so that it stays fixed.
 *
 * docs/fuzzing.md lists each finding with its fix.  The tests build the
 * input by hand instead of reading the crash file, and check the fixed
 * behaviour.
 *
 * IDENTIFICATION
 *	  test/unit/test_fuzz_regressions.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_blob.h"
#include "madlib_dl/dl_keras.h"
#include "madlib_dl/dl_model.h"
#include "madlib_dl/dl_params.h"

/* Whether s is valid UTF-8 (no overlongs, no surrogates, <= U+10FFFF). */
static bool
utf8_valid(const char *str)
{
	const unsigned char *s = (const unsigned char *) str;

	while (*s != '\0')
	{
		unsigned int n,
					cp;

		if (*s < 0x80)
		{
			s++;
			continue;
		}
		if (*s >= 0xC2 && *s <= 0xDF)
			n = 1, cp = *s & 0x1F;
		else if (*s >= 0xE0 && *s <= 0xEF)
			n = 2, cp = *s & 0x0F;
		else if (*s >= 0xF0 && *s <= 0xF4)
			n = 3, cp = *s & 0x07;
		else
			return false;
		for (unsigned int j = 1; j <= n; j++)
		{
			if ((s[j] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (s[j] & 0x3F);
		}
		if ((n == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
			(n == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
			return false;
		s += n + 1;
	}
	return true;
}

/*
 * Finding 1 (fuzz_params): a piece of the parameter string quoted in an
 * error message was cut at 120 bytes, which could split a multi-byte
 * UTF-8 character and put invalid UTF-8 into the message sent to the
 * client.  Fixed in params.c (show_len backs off to a character start).
 */
static void
test_params_message_utf8(void **state)
{
	char		s[512];
	DlCompileParams cp;
	DlFitParams fp;
	DlError		err;

	/* every cut position near the cap, with 2-, 3- and 4-byte characters */
	static const char *const chars[] = {"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"};

	for (int c = 0; c < 3; c++)
	{
		for (int pad = 110; pad <= 122; pad++)
		{
			size_t		n = 0;

			/* an invalid name (it has a space) long enough to be cut */
			memset(s, 'x', (size_t) pad);
			n = (size_t) pad;
			for (int k = 0; k < 10; k++)
			{
				strcpy(s + n, chars[c]);
				n += strlen(chars[c]);
			}
			strcpy(s + n, " y");

			assert_int_not_equal(dl_compile_params_parse(s, &cp, &err), DL_OK);
			if (!utf8_valid(err.msg))
				fail_msg("compile_params message is not UTF-8 (pad %d, char %d): %s", pad, c,
						 err.msg);
			assert_int_not_equal(dl_fit_params_parse(s, &fp, &err), DL_OK);
			if (!utf8_valid(err.msg))
				fail_msg("fit_params message is not UTF-8 (pad %d, char %d): %s", pad, c,
						 err.msg);
			/* the same text as a value */
			memmove(s + 10, s, strlen(s) + 1);
			memcpy(s, "optimizer=", 10);
			assert_int_not_equal(dl_compile_params_parse(s, &cp, &err), DL_OK);
			if (!utf8_valid(err.msg))
				fail_msg("optimizer message is not UTF-8 (pad %d, char %d): %s", pad, c,
						 err.msg);
		}
	}
}

/* A small model with an Adam optimizer, and its blob (malloc'd). */
static const char *const mlp_json =
"{\"class_name\": \"Sequential\", \"config\": {\"name\": \"mlp\", \"layers\": ["
"{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 4]}},"
"{\"class_name\": \"Dense\", \"config\": {\"name\": \"d1\", \"units\": 5, \"activation\": \"relu\"}},"
"{\"class_name\": \"Dense\", \"config\": {\"name\": \"d2\", \"units\": 3, \"activation\": \"softmax\"}}]}}";

static void
put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

/*
 * Finding 2 (fuzz_blob, reached with a targeted header): the optimizer
 * iteration count and Nadam's m_schedule in the blob header were loaded
 * unchecked (the checksum covers only the data after the header).  An
 * iteration count of INT64_MAX made the next training step overflow a
 * signed integer (undefined behaviour, reported by UBSan).  Fixed in
 * blob.c: iterations above 2^53, or an m_schedule outside [0, 1] or NaN,
 * refuse the blob as corrupt.
 */
static void
test_blob_optimizer_header(void **state)
{
	TestAllocCounter counter;
	DlAllocator alloc = test_allocator(&counter);
	DlModelSpec *spec = NULL;
	DlModel    *m = NULL;
	DlOptimConfig ocfg;
	DlError		err;
	size_t		size;
	uint8_t    *blob,
			   *before,
			   *after;
	static const uint64_t bad_iterations[] = {
		(uint64_t) INT64_MAX, (uint64_t) 1 << 63, ((uint64_t) 1 << 53) + 1, UINT64_MAX
	};
	static const double bad_schedule[] = {-0.5, 1.5, 1e300};
	double		nan_value = __builtin_nan("");
	int64_t		seen = -7;

	assert_int_equal(dl_keras_parse(mlp_json, strlen(mlp_json), &alloc, &spec, &err), DL_OK);
	dl_optim_config_default(&ocfg, DL_OPTIM_NADAM);
	assert_int_equal(dl_model_create(spec, &ocfg, &alloc, &m, &err), DL_OK);
	assert_int_equal(dl_model_init_weights(m, 3, &err), DL_OK);
	assert_int_equal(dl_blob_size(m, &size, &err), DL_OK);
	blob = malloc(size);
	before = malloc(size);
	after = malloc(size);
	assert_int_equal(dl_blob_write(m, 10, blob, size, &err), DL_OK);
	memcpy(before, blob, size);

	for (size_t i = 0; i < sizeof(bad_iterations) / sizeof(bad_iterations[0]); i++)
	{
		memcpy(blob, before, size);
		put_u64(blob + 32, bad_iterations[i]);
		assert_int_equal(dl_blob_read(m, blob, size, &seen, &err), DL_ERR_CORRUPT);
		if (strstr(err.msg, "invalid optimizer header") == NULL)
			fail_msg("unexpected message: %s", err.msg);
		assert_int_equal(seen, -7);
	}
	for (int i = 0; i < 4; i++)
	{
		double		v = i < 3 ? bad_schedule[i] : nan_value;
		uint64_t	u;

		memcpy(&u, &v, sizeof(u));
		memcpy(blob, before, size);
		put_u64(blob + 40, u);
		assert_int_equal(dl_blob_read(m, blob, size, &seen, &err), DL_ERR_CORRUPT);
	}
	/* the model is untouched by the refusals */
	assert_int_equal(dl_blob_write(m, 10, after, size, &err), DL_OK);
	assert_memory_equal(before, after, size);

	/* the largest accepted count loads, and a training step stays defined */
	memcpy(blob, before, size);
	put_u64(blob + 32, (uint64_t) 1 << 53);
	assert_int_equal(dl_blob_read(m, blob, size, &seen, &err), DL_OK);
	assert_int_equal(seen, 10);
	assert_true(dl_model_optim(m)->iterations == (int64_t) 1 << 53);
	{
		float		x[4] = {1, 2, 3, 4};
		float		y[3] = {0, 1, 0};
		DlTrainConfig cfg = {0};
		DlStatus	st;

		cfg.loss = DL_LOSS_CATEGORICAL_CROSSENTROPY;
		cfg.batch_size = 1;
		st = dl_model_train_batch(m, &cfg, x, y, 1, NULL, &err);
		assert_true(st == DL_OK || st == DL_ERR_DIVERGED);
		assert_true(dl_model_optim(m)->iterations == ((int64_t) 1 << 53) + 1);
	}
	free(blob);
	free(before);
	free(after);
	dl_model_free(m);
	dl_model_spec_free(spec, &alloc);
	assert_no_leaks(&counter);
}

/*
 * Finding 3 (fuzz_keras, in the CI run of 2026-11-30): a functional
 * model whose input_layers or output_layers list mixes references and
 * non-lists, such as [["input_1", 0, 0], 0], reached json-c's
 * json_object_array_get_idx with a number.  json-c asserts on that, and
 * assert() aborts: inside PostgreSQL the backend would have died.  Fixed
 * in keras_json.c: every array access goes through jlen/jidx, which
 * check the type and the index first.
 */
static void
test_keras_functional_ref_not_list(void **state)
{
	static const char *const refs[] = {
		"[[\"input_1\", 0, 0], 0]",
		"[[\"input_1\", 0, 0], \"x\"]",
		"[[\"input_1\", 0, 0], {\"a\": 1}, null]",
		"[[\"input_1\", 0, 0], []]",
		"[[]]",
		"[0]",
		"[[0, 0, 0]]",
		"\"input_1\"",
		"[]",
		"{}",
	};
	static const char *const keys[] = {"input_layers", "output_layers"};

	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++)
		{
			TestAllocCounter counter;
			DlAllocator alloc = test_allocator(&counter);
			DlModelSpec *spec = NULL;
			DlError		err;
			char		json[2048];
			DlStatus	st;

			snprintf(json, sizeof(json),
					 "{\"class_name\": \"Functional\", \"config\": {\"name\": \"model\", "
					 "\"layers\": [{\"class_name\": \"InputLayer\", \"name\": \"input_1\", "
					 "\"config\": {\"batch_input_shape\": [null, 4], \"name\": \"input_1\"}, "
					 "\"inbound_nodes\": []}, "
					 "{\"class_name\": \"Dense\", \"name\": \"dense_1\", "
					 "\"config\": {\"name\": \"dense_1\", \"units\": 3}, "
					 "\"inbound_nodes\": [[[\"input_1\", 0, 0, {}]]]}], "
					 "\"%s\": %s, \"%s\": [[\"%s\", 0, 0]]}}",
					 keys[k], refs[i], keys[1 - k], k == 0 ? "dense_1" : "input_1");
			st = dl_keras_parse(json, strlen(json), &alloc, &spec, &err);
			if (st == DL_OK)
				fail_msg("%s = %s was accepted", keys[k], refs[i]);
			assert_true(st == DL_ERR_UNSUPPORTED || st == DL_ERR_PARSE);
			assert_null(spec);
			if (strstr(err.msg, keys[k]) == NULL && strstr(err.msg, "only one") == NULL)
				fail_msg("%s = %s: message does not name the key: %s", keys[k], refs[i], err.msg);
			assert_no_leaks(&counter);
		}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_params_message_utf8),
		cmocka_unit_test(test_blob_optimizer_header),
		cmocka_unit_test(test_keras_functional_ref_not_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
