/*-------------------------------------------------------------------------
 *
 * fuzz_transform.c
 *	  libFuzzer target: the column transforms saved with a model
 *	  (transform.c): transform specs and stored plans.
 *
 * The first byte picks the reader: even, the input after it is a spec
 * (dl_transform_parse); odd, a stored plan (dl_transform_from_json), as a
 * summary table another role wrote could hold.  A refused input must give
 * a well-formed error.  An accepted one is written as JSON, which must
 * read back and write to the same text; every item is then checked
 * against every column kind and applied to a few values of each kind
 * (numbers, NULL, an array, categories): errors are fine, crashes,
 * leaks and out-of-range writes are not.
 *
 * IDENTIFICATION
 *	  test/fuzz/fuzz_transform.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz_util.h"
#include "madlib_dl/dl_strbuf.h"
#include "madlib_dl/dl_transform.h"

static void
exercise(const DlTransform *t)
{
	static const double numbers[] = {0.0, 1.0, -1.0, 2.5, 1e300, -1e-300, NAN, INFINITY};
	static const double arr[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	static const char *const cats[] = {"", "a", "Berlin", "zz", "\xc3\xa9"};
	DlError		err;
	int			width = 0;

	for (int i = 0; i < t->n_items; i++)
	{
		const DlTfItem *it = &t->items[i];
		float	   *out;
		size_t		w = (size_t) (it->width > 0 ? it->width : 1);

		for (int k = DL_TF_KIND_UNKNOWN; k <= DL_TF_KIND_ARRAY; k++)
		{
			DlStatus	st = dl_transform_check_kind(t, i, (DlTfKind) k, "t", &err);

			if (st != DL_OK)
				fuzz_check_error(st, &err);
		}
		(void) dl_transform_needs_stats(t, i, 0);
		(void) dl_transform_needs_stats(t, i, 1);
		for (int stage = -1; stage <= 2; stage++)
			for (size_t n = 0; n < sizeof(numbers) / sizeof(numbers[0]); n++)
			{
				double		v;
				bool		isnull;
				DlStatus	st = dl_transform_stage_value(t, i, stage, n == 0, numbers[n], &v, &isnull, &err);

				if (st != DL_OK)
					fuzz_check_error(st, &err);
			}
		if (w > 1000000)
			continue;
		out = malloc(sizeof(float) * (w + 1));
		if (out == NULL)
			continue;
		out[w] = 12345.0f;		/* a canary past the item's features */
		for (size_t n = 0; n < sizeof(numbers) / sizeof(numbers[0]); n++)
		{
			DlStatus	st = dl_transform_apply_number(t, i, n == 0, numbers[n], out, &err);

			if (st != DL_OK)
				fuzz_check_error(st, &err);
		}
		for (size_t n = 0; n <= 8; n++)
		{
			DlStatus	st;

			if (n > w)
				break;
			st = dl_transform_apply_array(t, i, arr, n, out, &err);
			if (st != DL_OK)
				fuzz_check_error(st, &err);
		}
		for (size_t c = 0; c < sizeof(cats) / sizeof(cats[0]); c++)
		{
			DlStatus	st = dl_transform_apply_category(t, i, cats[c], strlen(cats[c]), out, &err);

			if (st != DL_OK)
				fuzz_check_error(st, &err);
		}
		if (it->n_categories > 0 && it->categories != NULL)
		{
			DlStatus	st = dl_transform_apply_category(t, i, it->categories[0], strlen(it->categories[0]),
														 out, &err);

			if (st != DL_OK)
				fuzz_check_error(st, &err);
		}
		FUZZ_CHECK(out[w] == 12345.0f, "item %d wrote past its %zu features", i, w);
		free(out);
	}
	if (dl_transform_width(t, &width, &err) == DL_OK)
		FUZZ_CHECK(width >= 1 && width <= DL_TF_MAX_WIDTH, "width %d", width);
	(void) dl_transform_offset(t, t->n_items);
}

static void
round_trip(const DlTransform *t, const DlAllocator *a)
{
	DlStrBuf	sb1,
				sb2;
	DlTransform *back = NULL;
	DlError		err;
	DlStatus	st;

	dl_strbuf_init(&sb1, a);
	dl_transform_to_json(t, &sb1);
	if (sb1.failed)
	{
		dl_strbuf_free(&sb1);
		return;
	}
	st = dl_transform_from_json(sb1.data, sb1.len, a, &back, &err);
	FUZZ_CHECK(st == DL_OK, "written plan does not read back: %s: %s", err.msg, sb1.data);
	dl_strbuf_init(&sb2, a);
	dl_transform_to_json(back, &sb2);
	FUZZ_CHECK(sb2.failed || strcmp(sb1.data, sb2.data) == 0, "plan changes on a round trip:\n%s\n%s",
			   sb1.data, sb2.data);
	dl_strbuf_free(&sb2);
	dl_strbuf_free(&sb1);
	dl_transform_free(back);
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzAllocCounter c = {0};
	DlAllocator a = fuzz_allocator(&c);
	DlTransform *t = NULL;
	DlError		err;
	DlStatus	st;

	if (size < 1)
		return 0;
	dl_error_clear(&err);
	if ((data[0] & 1) == 0)
		st = dl_transform_parse((const char *) data + 1, size - 1, &a, &t, &err);
	else
		st = dl_transform_from_json((const char *) data + 1, size - 1, &a, &t, &err);
	if (st != DL_OK)
	{
		FUZZ_CHECK(t == NULL, "a refused input left a plan");
		fuzz_check_error_in(st, &err, data + 1, size - 1);
	}
	else
	{
		round_trip(t, &a);
		exercise(t);
		dl_transform_free(t);
	}
	FUZZ_NO_LEAKS(&c);
	return 0;
}
