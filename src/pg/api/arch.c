/*-------------------------------------------------------------------------
 *
 * arch.c
 *	  SQL functions over Keras architectures and flat model weights.
 *
 * The JSON is parsed by the engine (dl_keras_parse_multi_io: any graph,
 * several inputs and outputs included); this file only turns
 * the resulting DlModelSpec into SQL values and engine errors into
 * ereports.  Every function here allocates in CurrentMemoryContext, so an
 * ERROR frees everything.
 *
 *	 _validate_arch(json, bytea)    parse, check weights, return P
 *	 _arch_info(json)               input/output shapes, P, fingerprint
 *	 _arch_io(json)                 each input and output: name, shape
 *	 keras_model_summary(json)      one row per layer, like model.summary()
 *	 weights_to_array(bytea)        flat little-endian float32 -> real[]
 *	 weights_from_array(real[])     real[] -> flat little-endian float32
 *
 * The weights format is MADlib's model_weights: the float32 concatenation
 * of Keras get_weights(), little-endian, no header (include/madlib_dl/dl_blob.h).
 *
 * IDENTIFICATION
 *	  src/pg/api/arch.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

#include <math.h>
#include <string.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "madlib_dl/dl_keras.h"
#include "madlib_dl/dl_spec.h"
#include "madlib_dl/dl_weights.h"

#include "pg_limits.h"

#define WEIGHTS_HINT "model_weights must be the little-endian float32 concatenation of Keras " \
	"get_weights() in layer order, e.g. numpy.concatenate([w.ravel() for w in " \
	"model.get_weights()]).astype('<f4').tobytes()."

/*
 * Parse the json datum arch into a finalized spec allocated in
 * CurrentMemoryContext.  Raises ERROR (with the engine's SQLSTATE, message
 * and hint) when the architecture is malformed or unsupported.
 */
static DlModelSpec *
parse_arch(text *arch, DlAllocator *alloc)
{
	DlModelSpec *spec = NULL;
	DlError		err;
	DlStatus	st;

	dl_error_clear(&err);
	st = dl_keras_parse_multi_io(VARDATA_ANY(arch), VARSIZE_ANY_EXHDR(arch), alloc, &spec, &err);
	dl_pg_check(st, &err);
	if (spec == NULL)
		elog(ERROR, "dl_keras_parse_multi_io returned DL_OK without a spec");
	return spec;
}

/*
 * The architecture arch with its unknown per-sample input dimensions
 * bound to dims (rank of them; NULL: DL_KERAS_FREE_DIM_DEFAULT), as a
 * new text in CurrentMemoryContext, and in *n_free how many there were.
 * ERROR with the engine's message when the rank differs.
 */
static text *
bind_arch(text *arch, const int64 *dims, int rank, int *n_free)
{
	DlAllocator alloc = dl_pg_allocator(CurrentMemoryContext);
	DlError		err;
	char	   *out = NULL;
	text	   *t;

	dl_error_clear(&err);
	dl_pg_check(dl_keras_bind_shape(VARDATA_ANY(arch), VARSIZE_ANY_EXHDR(arch), (const int64_t *) dims,
									rank, &alloc, &out, n_free, &err), &err);
	t = cstring_to_text(out);
	pfree(out);
	return t;
}

/*
 * arch, or for a model of a variable input shape, arch bound to
 * DL_KERAS_FREE_DIM_DEFAULT: what the weights are checked against (their
 * count does not depend on the spatial sizes).
 */
static text *
arch_for_weights(text *arch)
{
	int			n_free;
	text	   *bound = bind_arch(arch, NULL, 0, &n_free);

	return n_free > 0 ? bound : arch;
}

/* Read the i-th little-endian float32 of buf (4*(i+1) bytes at least). */
static float
read_le_float(const uint8 *buf, size_t i)
{
	const uint8 *p = buf + 4 * i;
	uint32		u = (uint32) p[0] | ((uint32) p[1] << 8) |
		((uint32) p[2] << 16) | ((uint32) p[3] << 24);
	float		f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* Write f as little-endian float32 at buf + 4*i. */
static void
write_le_float(uint8 *buf, size_t i, float f)
{
	uint8	   *p = buf + 4 * i;
	uint32		u;

	memcpy(&u, &f, sizeof(u));
	p[0] = (uint8) (u & 0xff);
	p[1] = (uint8) ((u >> 8) & 0xff);
	p[2] = (uint8) ((u >> 16) & 0xff);
	p[3] = (uint8) ((u >> 24) & 0xff);
}

/* Name of the layer owning parameter index k (0-based), for messages. */
static const char *
layer_of_param(const DlModelSpec *spec, size_t k)
{
	for (int i = 0; i < spec->n_layers; i++)
	{
		const DlLayer *l = &spec->layers[i];

		if (k >= l->param_offset && k - l->param_offset < l->n_params)
			return l->name;
	}
	return "?";
}

/*
 * The check of the values that shows weights in another order than
 * Keras' (dl_weights_check_values: a BatchNormalization's negative
 * moving_variance), for a model with a BatchNormalization layer: the n
 * floats of buf are copied (aligned, host order) for it.
 */
static void
check_weight_values(const DlModelSpec *spec, const uint8 *buf, size_t n)
{
	bool		any = false;
	float	   *w;
	DlError		err;

	for (int i = 0; i < spec->n_layers && !any; i++)
		any = spec->layers[i].kind == DL_LAYER_BATCHNORM;
	if (!any || n == 0)
		return;
	/* n * 4 is the bytea's length, below 1 GB */
	w = MemoryContextAllocHuge(CurrentMemoryContext, n * sizeof(float));
	for (size_t k = 0; k < n; k++)
		w[k] = read_le_float(buf, k);
	dl_error_clear(&err);
	dl_pg_check(dl_weights_check_values(spec, w, &err), &err);
	pfree(w);
}

/*
 * Check that weights (a bytea) fits spec: exactly 4*P bytes, all values
 * finite.  Raises DATA_EXCEPTION naming the counts or the first bad value.
 */
static void
check_weights(const DlModelSpec *spec, bytea *weights)
{
	size_t		len = VARSIZE_ANY_EXHDR(weights);
	const uint8 *buf = (const uint8 *) VARDATA_ANY(weights);
	size_t		n = len / 4;

	if (len % 4 != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("model_weights has %zu bytes, not a whole number of float32 values", len),
				 errhint(WEIGHTS_HINT)));
	if (n != spec->n_params)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("model_weights has %zu float32 values but the architecture needs %zu",
						n, spec->n_params),
				 errhint(WEIGHTS_HINT)));
	for (size_t k = 0; k < n; k++)
	{
		float		f = read_le_float(buf, k);

		if (!isfinite(f))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("model_weights value %zu (layer \"%s\") is %s",
							k + 1, layer_of_param(spec, k), isnan(f) ? "NaN" : "infinite"),
					 errhint("Load finite weights, or leave model_weights NULL so that training initializes them.")));
	}
	check_weight_values(spec, buf, n);
}

/* A DlShape as an int[]; ERROR if a dimension does not fit in int4. */
static ArrayType *
shape_to_array(const DlShape *s)
{
	Datum		elems[DL_MAX_RANK];

	for (int i = 0; i < s->rank; i++)
	{
		if (s->dims[i] > PG_INT32_MAX || s->dims[i] < 0)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("dimension %lld does not fit in an integer", (long long) s->dims[i])));
		elems[i] = Int32GetDatum((int32) s->dims[i]);
	}
	return construct_array(elems, s->rank, INT4OID, sizeof(int32), true, TYPALIGN_INT);
}

/* size_t parameter count as int8; P is bounded by 2^40 in spec.c. */
static int64
count_to_int64(size_t n)
{
	if (n > (size_t) PG_INT64_MAX)
		elog(ERROR, "parameter count %zu does not fit in bigint", n);
	return (int64) n;
}

/*
 * _validate_arch(model_arch json, model_weights bytea) RETURNS bigint
 *
 * Parse model_arch (ERROR if NULL, malformed or unsupported, or 54000 if
 * its P weights cannot fit in one model_weights value) and, when
 * model_weights is not NULL, check it has exactly P finite float32 values.
 * Returns P, the number of parameters.
 */
PG_FUNCTION_INFO_V1(madlib_dl__validate_arch);
Datum
madlib_dl__validate_arch(PG_FUNCTION_ARGS)
{
	DlAllocator alloc = dl_pg_allocator(CurrentMemoryContext);
	DlModelSpec *spec;
	int64		n_params;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model_arch must not be NULL"),
				 errhint("Pass the JSON of Keras model.to_json().")));
	/* a variable input shape is bound per call; its weights do not depend on it */
	spec = parse_arch(arch_for_weights(PG_GETARG_TEXT_PP(0)), &alloc);
	/* an architecture whose weights cannot be stored is refused now, not after training */
	dl_limits_check_weights(spec->n_params, "the model architecture");
	if (!PG_ARGISNULL(1))
		check_weights(spec, PG_GETARG_BYTEA_PP(1));
	n_params = count_to_int64(spec->n_params);
	dl_model_spec_free(spec, &alloc);
	PG_RETURN_INT64(n_params);
}

/*
 * _arch_info(model_arch json, OUT input_shape int[], OUT output_shape int[],
 *            OUT n_params bigint, OUT n_trainable bigint, OUT n_layers int,
 *            OUT fingerprint bigint)
 *
 * Facts about an architecture that the SQL drivers check data against.
 * fingerprint is dl_model_spec_fingerprint() as a signed bigint: two
 * architectures with equal fingerprints accept each other's weights.
 * STRICT in SQL.
 */
PG_FUNCTION_INFO_V1(madlib_dl__arch_info);
Datum
madlib_dl__arch_info(PG_FUNCTION_ARGS)
{
	DlAllocator alloc = dl_pg_allocator(CurrentMemoryContext);
	DlModelSpec *spec;
	TupleDesc	tupdesc;
	Datum		values[6];
	bool		nulls[6] = {false, false, false, false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "_arch_info must be declared to return a record");
	tupdesc = BlessTupleDesc(tupdesc);
	if (tupdesc->natts != 6)
		elog(ERROR, "_arch_info must return 6 columns, is declared with %d", tupdesc->natts);

	spec = parse_arch(PG_GETARG_TEXT_PP(0), &alloc);
	values[0] = PointerGetDatum(shape_to_array(&spec->input_shape));
	values[1] = PointerGetDatum(shape_to_array(&spec->output_shape));
	values[2] = Int64GetDatum(count_to_int64(spec->n_params));
	values[3] = Int64GetDatum(count_to_int64(spec->n_trainable));
	values[4] = Int32GetDatum(spec->n_layers);
	values[5] = Int64GetDatum((int64) dl_model_spec_fingerprint(spec));
	dl_model_spec_free(spec, &alloc);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * Begin the set-returning function fn (InitMaterializedSRF), declared
 * with natts columns; its ReturnSetInfo.
 */
static ReturnSetInfo *
srf_begin(FunctionCallInfo fcinfo, const char *fn, int natts)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != natts)
		elog(ERROR, "%s must return %d columns, is declared with %d", fn, natts, rsinfo->setDesc->natts);
	return rsinfo;
}

/*
 * _arch_io(model_arch json) RETURNS TABLE (io text, position integer,
 *     name text, shape integer[])
 *
 * The model's inputs ('input', their InputLayers' names) and outputs
 * ('output', their layers' names) in the model's order (position
 * 0-based), each with its shape per sample.  STRICT in SQL.
 */
PG_FUNCTION_INFO_V1(madlib_dl__arch_io);
Datum
madlib_dl__arch_io(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = srf_begin(fcinfo, "_arch_io", 4);
	DlAllocator alloc = dl_pg_allocator(CurrentMemoryContext);
	DlModelSpec *spec;

	spec = parse_arch(PG_GETARG_TEXT_PP(0), &alloc);
	for (int i = 0; i < spec->n_inputs + spec->n_outputs; i++)
	{
		bool		in = i < spec->n_inputs;
		int			k = in ? i : i - spec->n_inputs;
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		values[0] = CStringGetTextDatum(in ? "input" : "output");
		values[1] = Int32GetDatum(k);
		values[2] = CStringGetTextDatum(in ? spec->input_names[k] :
										spec->layers[spec->outputs[k]].name);
		values[3] = PointerGetDatum(shape_to_array(in ? &spec->input_shapes[k] :
												   &spec->output_shapes[k]));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	dl_model_spec_free(spec, &alloc);
	return (Datum) 0;
}

/*
 * keras_model_summary(model_arch json)
 *	 RETURNS TABLE (layer_name text, layer_type text, output_shape int[], n_params bigint)
 *
 * One row per layer in model order (the InputLayer is not a layer here;
 * its shape is the input shape).  STRICT in SQL.
 */
PG_FUNCTION_INFO_V1(madlib_dl_keras_model_summary);
Datum
madlib_dl_keras_model_summary(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = srf_begin(fcinfo, "keras_model_summary", 4);
	DlAllocator alloc = dl_pg_allocator(CurrentMemoryContext);
	DlModelSpec *spec;

	spec = parse_arch(PG_GETARG_TEXT_PP(0), &alloc);
	for (int i = 0; i < spec->n_layers; i++)
	{
		const DlLayer *l = &spec->layers[i];
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		values[0] = CStringGetTextDatum(l->name);
		/* a Bidirectional layer is its wrapped layer, run both ways */
		values[1] = CStringGetTextDatum(l->bidir != DL_BIDIR_NONE ?
										psprintf("Bidirectional(%s)", dl_layer_kind_name(l->kind)) :
										dl_layer_kind_name(l->kind));
		values[2] = PointerGetDatum(shape_to_array(&l->out_shape));
		values[3] = Int64GetDatum(count_to_int64(l->n_params));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	dl_model_spec_free(spec, &alloc);
	return (Datum) 0;
}

/*
 * weights_to_array(model_weights bytea) RETURNS real[]
 *
 * The flat little-endian float32 weights as a one-dimensional real[].
 * STRICT in SQL.
 */
PG_FUNCTION_INFO_V1(madlib_dl_weights_to_array);
Datum
madlib_dl_weights_to_array(PG_FUNCTION_ARGS)
{
	bytea	   *weights = PG_GETARG_BYTEA_PP(0);
	size_t		len = VARSIZE_ANY_EXHDR(weights);
	const uint8 *buf = (const uint8 *) VARDATA_ANY(weights);
	size_t		n = len / 4;
	Datum	   *elems;

	if (len % 4 != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("model_weights has %zu bytes, not a whole number of float32 values", len),
				 errhint(WEIGHTS_HINT)));
	if (n == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(FLOAT4OID));
	/* n < 2^28 because a bytea is below 1 GB, so the palloc size is safe */
	elems = palloc(n * sizeof(Datum));
	for (size_t k = 0; k < n; k++)
	{
		if ((k & 0xFFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		elems[k] = Float4GetDatum(read_le_float(buf, k));
	}
	PG_RETURN_ARRAYTYPE_P(construct_array(elems, (int) n, FLOAT4OID, sizeof(float4),
										  true, TYPALIGN_INT));
}

/*
 * weights_from_array(weights real[]) RETURNS bytea
 *
 * Any-dimensional real[] (read in storage order) as flat little-endian
 * float32.  NULL elements are refused.  STRICT in SQL.
 */
PG_FUNCTION_INFO_V1(madlib_dl_weights_from_array);
Datum
madlib_dl_weights_from_array(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	size_t		bytes;
	bytea	   *out;

	deconstruct_array(arr, FLOAT4OID, sizeof(float4), true, TYPALIGN_INT,
					  &elems, &nulls, &n);
	if (!dl_size_mul((size_t) n, 4, &bytes) || bytes > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("array of %d weights is too large for a bytea", n),
				 errhint("A model_weights value holds at most %zu float32 values (1 GB).",
						 (size_t) ((MaxAllocSize - VARHDRSZ) / 4))));
	out = palloc(bytes + VARHDRSZ);
	SET_VARSIZE(out, bytes + VARHDRSZ);
	for (int k = 0; k < n; k++)
	{
		if ((k & 0xFFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (nulls[k])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("weights element %d is NULL", k + 1),
					 errhint("Every weight must be a number.")));
		write_le_float((uint8 *) VARDATA(out), (size_t) k, DatumGetFloat4(elems[k]));
	}
	PG_RETURN_BYTEA_P(out);
}

/*
 * keras_model_weights(model_arch json) RETURNS TABLE (position int,
 *     layer_name text, weight_name text, shape int[], first bigint,
 *     count bigint)
 *
 * The weight tensors of the architecture in the order model_weights
 * holds them, Keras' get_weights() order (position from 1): each
 * layer's, layer by layer, as "layer/weight" names them in a TF.js
 * weightsManifest; first is the tensor's first float in the block (from
 * 1), count its floats.  STRICT in SQL.
 */
PG_FUNCTION_INFO_V1(madlib_dl_keras_model_weights);
Datum
madlib_dl_keras_model_weights(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = srf_begin(fcinfo, "keras_model_weights", 6);
	DlAllocator alloc = dl_pg_allocator(CurrentMemoryContext);
	DlModelSpec *spec;
	int32		pos = 0;

	spec = parse_arch(arch_for_weights(PG_GETARG_TEXT_PP(0)), &alloc);
	for (int i = 0; i < spec->n_layers; i++)
	{
		DlWeightTensor t[DL_LAYER_MAX_TENSORS];
		int			n = dl_layer_weight_tensors(&spec->layers[i], t);

		for (int k = 0; k < n; k++)
		{
			Datum		values[6];
			bool		nulls[6] = {false, false, false, false, false, false};
			DlShape		sh;

			memset(&sh, 0, sizeof(sh));
			sh.rank = t[k].rank;
			memcpy(sh.dims, t[k].dims, sizeof(sh.dims));
			values[0] = Int32GetDatum(++pos);
			values[1] = CStringGetTextDatum(spec->layers[i].name);
			values[2] = CStringGetTextDatum(t[k].name);
			values[3] = PointerGetDatum(shape_to_array(&sh));
			values[4] = Int64GetDatum(count_to_int64(t[k].offset) + 1);
			values[5] = Int64GetDatum(count_to_int64(t[k].count));
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	dl_model_spec_free(spec, &alloc);
	return (Datum) 0;
}

/*
 * _arch_bind_shape(model_arch json, shape int[]) RETURNS json
 *
 * model_arch with the unknown (null) per-sample dimensions of its input
 * bound to shape (the rows' array dimensions; NULL:
 * DL_KERAS_FREE_DIM_DEFAULT each): a model published with a variable input
 * shape, [null, null, null, 3], then parses as one of that fixed shape.
 * The same model when none is unknown.  22023 for a shape of another
 * rank than the input's, NULL or non-positive elements.  STRICT on
 * model_arch in SQL.
 */
PG_FUNCTION_INFO_V1(madlib_dl__arch_bind_shape);
Datum
madlib_dl__arch_bind_shape(PG_FUNCTION_ARGS)
{
	int64		dims[DL_MAX_RANK];
	int			rank = 0;
	int			n_free;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (!PG_ARGISNULL(1))
	{
		ArrayType  *a = PG_GETARG_ARRAYTYPE_P(1);
		Datum	   *e;
		bool	   *nulls;

		deconstruct_array(a, INT4OID, sizeof(int32), true, TYPALIGN_INT, &e, &nulls, &rank);
		if (ARR_NDIM(a) > 1 || rank < 1 || rank > DL_MAX_RANK)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("shape must be a list of 1 to %d sizes, got %d", DL_MAX_RANK, rank),
					 errhint("Give the shape of one example, e.g. '{32,32,3}'.")));
		for (int i = 0; i < rank; i++)
		{
			if (nulls[i] || DatumGetInt32(e[i]) < 1)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("shape element %d is %s", i + 1,
								nulls[i] ? "NULL" : psprintf("%d", DatumGetInt32(e[i]))),
						 errhint("Every size of the shape must be positive.")));
			dims[i] = DatumGetInt32(e[i]);
		}
	}
	PG_RETURN_TEXT_P(bind_arch(PG_GETARG_TEXT_PP(0), PG_ARGISNULL(1) ? NULL : dims, rank, &n_free));
}

/*
 * _arch_free_dims(model_arch json) RETURNS int
 *
 * How many per-sample input dimensions of model_arch are unknown (null):
 * 0 for a model of a fixed input shape.  STRICT in SQL.
 */
PG_FUNCTION_INFO_V1(madlib_dl__arch_free_dims);
Datum
madlib_dl__arch_free_dims(PG_FUNCTION_ARGS)
{
	int			n_free;

	(void) bind_arch(PG_GETARG_TEXT_PP(0), NULL, 0, &n_free);
	PG_RETURN_INT32(n_free);
}
