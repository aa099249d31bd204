/*-------------------------------------------------------------------------
 *
 * onnx.c
 *	  SQL functions over ONNX models: the C halves of export_onnx and
 *	  load_onnx_model (src/sql/interchange.sql reads and writes the
 *	  tables, with their column types checked).
 *
 *	 _onnx_export(model_arch json, model_weights bytea, opset int) bytea
 *	 _onnx_import(onnx bytea, OUT model_arch json, OUT model_weights bytea)
 *
 * The conversions are the engine's (src/engine/onnx_export.c,
 * onnx_import.c); every byte they and protobuf-c allocate comes from
 * palloc in CurrentMemoryContext, so an ERROR frees everything.
 *
 * IDENTIFICATION
 *	  src/pg/api/onnx.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

#include <math.h>
#include <string.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/json.h"

#include "madlib_dl/dl_keras.h"
#include "madlib_dl/dl_onnx.h"
#include "madlib_dl/dl_spec.h"

#define WEIGHTS_ONNX_HINT "Export a model table that fit, fit_multiple_model or load_onnx_model wrote."

/*
 * _onnx_export(model_arch json, model_weights bytea, opset int) RETURNS bytea
 */
PG_FUNCTION_INFO_V1(madlib_dl__onnx_export);
Datum
madlib_dl__onnx_export(PG_FUNCTION_ARGS)
{
	text	   *arch;
	bytea	   *weights;
	int32		opset;
	DlAllocator alloc = dl_pg_allocator(CurrentMemoryContext);
	DlModelSpec *spec = NULL;
	DlError		err;
	DlOnnxExportArgs args;
	uint8	   *buf = NULL;
	size_t		len = 0;
	float	   *params;
	size_t		wlen;
	bytea	   *result;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model_arch, model_weights and opset must not be NULL"),
				 errhint(WEIGHTS_ONNX_HINT)));
	arch = PG_GETARG_TEXT_PP(0);
	weights = PG_GETARG_BYTEA_PP(1);
	opset = PG_GETARG_INT32(2);

	dl_error_clear(&err);
	dl_pg_check(dl_keras_parse_multi_io(VARDATA_ANY(arch), VARSIZE_ANY_EXHDR(arch), &alloc, &spec, &err), &err);
	wlen = VARSIZE_ANY_EXHDR(weights);
	if (wlen % 4 != 0 || wlen / 4 != spec->n_params)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("model_weights has %zu bytes but the architecture needs %zu float32 values",
						wlen, spec->n_params),
				 errhint(WEIGHTS_ONNX_HINT)));
	/* aligned little-endian floats */
	params = palloc(wlen + sizeof(float));
	memcpy(params, VARDATA_ANY(weights), wlen);
	for (size_t k = 0; k < spec->n_params; k++)
		if (!isfinite(params[k]))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("model_weights value %zu is not finite", k + 1),
					 errhint(WEIGHTS_ONNX_HINT)));

	memset(&args, 0, sizeof(args));
	args.spec = spec;
	args.params = params;
	args.opset = opset;
	args.producer_version = "0.2.0";
	dl_pg_check(dl_onnx_export(&args, &alloc, &buf, &len, &err), &err);
	if (len > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the ONNX model has %zu bytes, more than a bytea holds", len)));
	result = palloc(VARHDRSZ + len);
	SET_VARSIZE(result, VARHDRSZ + len);
	memcpy(VARDATA(result), buf, len);
	PG_RETURN_BYTEA_P(result);
}

/*
 * _onnx_import(onnx bytea, OUT model_arch json, OUT model_weights bytea)
 */
PG_FUNCTION_INFO_V1(madlib_dl__onnx_import);
Datum
madlib_dl__onnx_import(PG_FUNCTION_ARGS)
{
	bytea	   *onnx;
	DlAllocator alloc = dl_pg_allocator(CurrentMemoryContext);
	DlOnnxImport imp;
	DlError		err;
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		nulls[2] = {false, false};
	bytea	   *w;
	size_t		wlen;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("onnx must not be NULL"),
				 errhint("Pass the bytes of an .onnx file, e.g. pg_read_binary_file('model.onnx') or a bytea parameter.")));
	onnx = PG_GETARG_BYTEA_PP(0);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "_onnx_import must return a record");
	tupdesc = BlessTupleDesc(tupdesc);

	memset(&imp, 0, sizeof(imp));
	dl_error_clear(&err);
	dl_pg_check(dl_onnx_import((const uint8_t *) VARDATA_ANY(onnx), VARSIZE_ANY_EXHDR(onnx),
							   &alloc, &imp, &err), &err);
	if (!dl_size_mul(imp.n_params, 4, &wlen) || wlen > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the ONNX model has %zu weights, more than a bytea holds", imp.n_params)));
	w = palloc(VARHDRSZ + wlen);
	SET_VARSIZE(w, VARHDRSZ + wlen);
	if (wlen)
		memcpy(VARDATA(w), imp.params, wlen);
	values[0] = PointerGetDatum(cstring_to_text_with_len(imp.json, (int) imp.json_len));
	values[1] = PointerGetDatum(w);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
