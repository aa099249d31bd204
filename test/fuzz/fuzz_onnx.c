/*-------------------------------------------------------------------------
 *
 * fuzz_onnx.c
 *	  libFuzzer target: ONNX import (dl_onnx_import) of arbitrary bytes,
 *	  and, when a model comes out, the Keras reader over its JSON and
 *	  ONNX export of the result.
 *
 * Checks: no crash, no leak (also after an error), a proper error (status,
 * lowercase message) when refused; an imported model's JSON parses with
 * as many parameters as import gave, and exports (or is refused as
 * unsupported).  Seeds: corpus/fuzz_onnx (PyTorch's exports of
 * test/unit/fixtures/onnx_*.onnx and the hostile files of
 * test/interchange/gen_torch.py: an unsupported operator, a cycle, a 2 GB
 * tensor declared in 115 bytes).
 *
 * IDENTIFICATION
 *	  test/fuzz/fuzz_onnx.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "fuzz_util.h"
#include "madlib_dl/dl_keras.h"
#include "madlib_dl/dl_onnx.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzAllocCounter counter;
	DlAllocator alloc = fuzz_allocator(&counter);
	DlOnnxImport imp;
	DlModelSpec *spec = NULL;
	DlError		err;
	DlStatus	st;

	dl_error_clear(&err);
	st = dl_onnx_import(data, size, &alloc, &imp, &err);
	if (st != DL_OK)
	{
		fuzz_check_error_in(st, &err, NULL, 0);
		FUZZ_CHECK(imp.json == NULL && imp.params == NULL, "failed import left output set");
		FUZZ_NO_LEAKS(&counter);
		return 0;
	}
	FUZZ_CHECK(imp.json != NULL && imp.json_len == strlen(imp.json), "import gave no JSON");
	st = dl_keras_parse_multi_io(imp.json, imp.json_len, &alloc, &spec, &err);
	if (st == DL_OK)
	{
		DlOnnxExportArgs args = {0};
		uint8_t    *buf = NULL;
		size_t		len = 0;

		FUZZ_CHECK(spec->n_params == imp.n_params, "JSON takes %zu parameters, import gave %zu",
				   spec->n_params, imp.n_params);
		args.spec = spec;
		args.params = imp.params;
		args.opset = 17;
		st = dl_onnx_export(&args, &alloc, &buf, &len, &err);
		if (st == DL_OK)
		{
			DlOnnxImport again;

			FUZZ_CHECK(len > 0, "empty export");
			if (dl_onnx_import(buf, len, &alloc, &again, &err) == DL_OK)
				dl_onnx_import_free(&again, &alloc);
			dl_free(&alloc, buf);
		}
		else
			fuzz_check_error(st, &err);
		dl_model_spec_free(spec, &alloc);
	}
	else
		fuzz_check_error(st, &err);
	dl_onnx_import_free(&imp, &alloc);
	FUZZ_NO_LEAKS(&counter);
	return 0;
}
