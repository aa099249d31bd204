/*-------------------------------------------------------------------------
 *
 * test_onnx.c
 *	  ONNX export and import (src/engine/onnx_export.c, onnx_import.c).
 *
 *	 - every model of the graph and sequence fixtures (TF.js and PyTorch
 *	   references: the architectures the engine trains) exports; where
 *	   import converts the exported graph back, the re-imported model
 *	   predicts what the original does (export -> import round trip)
 *	 - with ONNX_DUMP_DIR set, each exported model is written there with
 *	   its inputs and the engine's predictions, for the checks against
 *	   ONNX Runtime and onnx.checker (test/interchange/, scripts/test.sh's
 *	   interchange step)
 *	 - hostile files: not a protobuf, truncated, an unsupported operator,
 *	   a 2 GB tensor declared in a few bytes, a cycle: refused with the
 *	   error each deserves, nothing leaked
 *
 * IDENTIFICATION
 *	  test/unit/test_onnx.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_cases.h"
#include "madlib_dl/dl_onnx.h"
#include "onnx.pb-c.h"

static void
write_floats(FILE *f, const float *v, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%.9g", i ? "," : "", v[i]);
	fputc(']', f);
}

static void
dump_case(const char *dir, const char *fixture, FxCase *g, const uint8_t *onnx, size_t len,
		  float *const *pred)
{
	char		path[1024];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s_%s.onnx", dir, fixture, g->name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(onnx, 1, len, f), len);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s_%s.json", dir, fixture, g->name);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "{\"inputs\": [");
	for (int k = 0; k < g->n_in; k++)
	{
		const DlShape *s = &g->spec->input_shapes[k];

		fprintf(f, "%s{\"name\": \"%s\", \"shape\": [%lld", k ? ", " : "", g->spec->input_names[k][0] ? g->spec->input_names[k] : "input", (long long) g->n);
		for (int d = 0; d < s->rank; d++)
			fprintf(f, ", %lld", (long long) s->dims[d]);
		fprintf(f, "], \"data\": ");
		write_floats(f, g->x[k], (size_t) (g->n * dl_shape_size(s)));
		fprintf(f, "}");
	}
	fprintf(f, "], \"outputs\": [");
	for (int k = 0; k < g->n_out; k++)
	{
		fprintf(f, "%s{\"name\": \"%s\", \"data\": ", k ? ", " : "", g->spec->layers[g->spec->outputs[k]].name);
		write_floats(f, pred[k], g->pred_len[k]);
		fprintf(f, "}");
	}
	fprintf(f, "]}\n");
	fclose(f);
}

/* The engine's predictions of spec with weights w on g's inputs. */
static void
predict(FxCase *g, DlModelSpec *spec, const float *w, size_t P, float **out)
{
	DlModel    *m;
	DlError		err;

	assert_int_equal(dl_model_create(spec, NULL, &g->alloc, &m, &err), DL_OK);
	if (dl_model_set_params(m, w, P, &err) != DL_OK)
		fail_msg("%s: set_params: %s", g->name, err.msg);
	for (int k = 0; k < g->n_out; k++)
		out[k] = malloc(sizeof(float) * g->pred_len[k]);
	if (dl_model_predict_io(m, out, (const float *const *) g->x, g->n, 4, &err) != DL_OK)
		fail_msg("%s: predict: %s", g->name, err.msg);
	dl_model_free(m);
}

static void
check_file(const char *file, int *n_cases, int *n_round, double *worst)
{
	char	   *text = read_fixture(file, NULL);
	json_object *root = json_tokener_parse(text);
	json_object *cases = fx_member(root, "cases");
	const char *dir = getenv("ONNX_DUMP_DIR");
	char		fixture[64];

	snprintf(fixture, sizeof(fixture), "%.*s", (int) (strlen(file) - 5), file);
	for (size_t i = 0; i < json_object_array_length(cases); i++)
	{
		FxCase		g;
		DlOnnxExportArgs args = {0};
		uint8_t    *buf = NULL;
		size_t		len = 0;
		DlError		err;
		float	   *pred[DL_MAX_IO];
		DlOnnxImport imp;

		fx_case_read(&g, json_object_array_get_idx(cases, i), "model_arch");
		predict(&g, g.spec, g.w0, g.P, pred);
		args.spec = g.spec;
		args.params = g.w0;
		args.opset = 17;
		if (dl_onnx_export(&args, &g.alloc, &buf, &len, &err) != DL_OK)
			fail_msg("%s/%s: export: %s", file, g.name, err.msg);
		(*n_cases)++;
		if (dir)
			dump_case(dir, fixture, &g, buf, len, pred);
		/* export -> import: the same predictions, where import converts it */
		if (dl_onnx_import(buf, len, &g.alloc, &imp, &err) == DL_OK)
		{
			DlModelSpec *spec2;
			float	   *pred2[DL_MAX_IO];
			double		d = 0;

			if (dl_keras_parse_multi_io(imp.json, imp.json_len, &g.alloc, &spec2, &err) != DL_OK)
				fail_msg("%s/%s: re-imported JSON: %s\n%s", file, g.name, err.msg, imp.json);
			assert_int_equal(spec2->n_params, imp.n_params);
			predict(&g, spec2, imp.params, imp.n_params, pred2);
			for (int k = 0; k < g.n_out; k++)
			{
				d = fmax(d, fx_max_abs_diff(pred[k], pred2[k], g.pred_len[k]));
				free(pred2[k]);
			}
			if (d > 1e-5)
				fail_msg("%s/%s: re-imported model differs by %g", file, g.name, d);
			*worst = fmax(*worst, d);
			(*n_round)++;
			dl_model_spec_free(spec2, &g.alloc);
			dl_onnx_import_free(&imp, &g.alloc);
		}
		else
			printf("    %s/%s: exported; import does not take it back: %s\n", file, g.name, err.msg);
		for (int k = 0; k < g.n_out; k++)
			free(pred[k]);
		dl_free(&g.alloc, buf);
		fx_case_free(&g);
	}
	json_object_put(root);
	free(text);
}

static void
test_export_fixtures(void **state)
{
	int			n_cases = 0,
				n_round = 0;
	double		worst = 0;
	static const char *const files[] = {"tfjs_graphs.json", "torch_graphs.json", "tfjs_sequences.json",
	"torch_sequences.json"};

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++)
		check_file(files[f], &n_cases, &n_round, &worst);
	printf("    onnx: %d models exported; %d imported back, predictions within %.3g\n",
		   n_cases, n_round, worst);
}

/* ---------------------------------------------------------------------
 * PyTorch -> import (test/interchange/gen_torch.py's models), then
 * import -> export -> import
 * --------------------------------------------------------------------- */

static void
torch_case(const char *name, double *worst_torch, double *worst_round)
{
	char		file[128];
	size_t		len;
	uint8_t    *onnx;
	char	   *text;
	json_object *root, *inputs, *outputs;
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlOnnxImport imp, imp2;
	DlError		err;
	DlModelSpec *spec, *spec2;
	float	   *x[DL_MAX_IO];
	int64_t		n = 0;
	float	   *ref, *out, *out2;
	size_t		n_ref;
	DlModel    *m;
	DlOnnxExportArgs args = {0};
	uint8_t    *buf;
	size_t		blen;
	double		d;
	const char *dir = getenv("ONNX_DUMP_DIR");

	snprintf(file, sizeof(file), "onnx_%s.onnx", name);
	onnx = (uint8_t *) read_fixture(file, &len);
	snprintf(file, sizeof(file), "onnx_%s.json", name);
	text = read_fixture(file, NULL);
	root = json_tokener_parse(text);
	inputs = fx_member(root, "inputs");
	outputs = fx_member(root, "outputs");
	if (dl_onnx_import(onnx, len, &a, &imp, &err) != DL_OK)
		fail_msg("%s: import: %s", name, err.msg);
	if (dl_keras_parse_multi_io(imp.json, imp.json_len, &a, &spec, &err) != DL_OK)
		fail_msg("%s: JSON: %s\n%s", name, err.msg, imp.json);
	assert_int_equal((int) json_object_array_length(inputs), spec->n_inputs);
	for (int k = 0; k < spec->n_inputs; k++)
	{
		size_t		cnt;
		json_object *in = json_object_array_get_idx(inputs, k);

		x[k] = fx_floats(fx_member(in, "data"), &cnt);
		n = json_object_get_int64(json_object_array_get_idx(fx_member(in, "shape"), 0));
		assert_int_equal(cnt, (size_t) (n * dl_shape_size(&spec->input_shapes[k])));
	}
	ref = fx_floats(fx_member(json_object_array_get_idx(outputs, 0), "data"), &n_ref);
	out = malloc(sizeof(float) * n_ref);
	out2 = malloc(sizeof(float) * n_ref);
	assert_int_equal(dl_model_create(spec, NULL, &a, &m, &err), DL_OK);
	assert_int_equal(dl_model_set_params(m, imp.params, imp.n_params, &err), DL_OK);
	if (dl_model_predict_io(m, &out, (const float *const *) x, n, 4, &err) != DL_OK)
		fail_msg("%s: predict: %s", name, err.msg);
	dl_model_free(m);
	d = fx_max_abs_diff(out, ref, n_ref);
	printf("    %s: PyTorch -> import: %d nodes -> %d layers, max abs difference %.3g\n",
		   name, imp.n_nodes, imp.n_layers, d);
	assert_true(d < 1e-5);
	*worst_torch = fmax(*worst_torch, d);

	/* export, import again: the same weights, the same predictions */
	args.spec = spec;
	args.params = imp.params;
	args.opset = 17;
	if (dl_onnx_export(&args, &a, &buf, &blen, &err) != DL_OK)
		fail_msg("%s: export: %s", name, err.msg);
	if (dl_onnx_import(buf, blen, &a, &imp2, &err) != DL_OK)
		fail_msg("%s: import of the export: %s", name, err.msg);
	assert_int_equal(imp2.n_params, imp.n_params);
	assert_memory_equal(imp2.params, imp.params, imp.n_params * sizeof(float));
	assert_int_equal(dl_keras_parse_multi_io(imp2.json, imp2.json_len, &a, &spec2, &err), DL_OK);
	assert_true(dl_model_spec_fingerprint(spec2) == dl_model_spec_fingerprint(spec));
	assert_int_equal(dl_model_create(spec2, NULL, &a, &m, &err), DL_OK);
	assert_int_equal(dl_model_set_params(m, imp2.params, imp2.n_params, &err), DL_OK);
	assert_int_equal(dl_model_predict_io(m, &out2, (const float *const *) x, n, 4, &err), DL_OK);
	dl_model_free(m);
	d = fx_max_abs_diff(out, out2, n_ref);
	assert_true(d == 0.0);
	*worst_round = fmax(*worst_round, d);
	if (dir)
	{
		FxCase		g;

		memset(&g, 0, sizeof(g));
		g.name = name;
		g.spec = spec;
		g.n = n;
		g.n_in = spec->n_inputs;
		g.n_out = 1;
		for (int k = 0; k < g.n_in; k++)
			g.x[k] = x[k];
		g.pred_len[0] = n_ref;
		dump_case(dir, "torch_imported", &g, buf, blen, &out);
	}
	dl_free(&a, buf);
	dl_model_spec_free(spec2, &a);
	dl_onnx_import_free(&imp2, &a);
	dl_model_spec_free(spec, &a);
	dl_onnx_import_free(&imp, &a);
	assert_int_equal(c.live, 0);
	for (int k = 0; k < (int) json_object_array_length(inputs); k++)
		free(x[k]);
	free(out);
	free(out2);
	free(ref);
	json_object_put(root);
	free(text);
	free(onnx);
}

static void
test_torch_import(void **state)
{
	static const char *const names[] = {"mlp", "cnn", "resblock", "lstm", "twoin", "textcnn", "bilstm", "gelu"};
	double		worst_torch = 0,
				worst_round = 0;

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		torch_case(names[k], &worst_torch, &worst_round);
	printf("    onnx: 8 PyTorch models within %.3g of PyTorch; import -> export -> import: "
		   "identical weights, predictions within %.3g\n", worst_torch, worst_round);
}

/* ---------------------------------------------------------------------
 * hostile files
 * --------------------------------------------------------------------- */

/* A graph x -> op -> y with one float input (N, 4); the caller adds nodes. */
static uint8_t *
pack_model(Onnx__GraphProto *graph, size_t *len)
{
	Onnx__ModelProto model;
	Onnx__OperatorSetIdProto opset;
	Onnx__OperatorSetIdProto *opsets[1] = {&opset};
	uint8_t    *buf;

	onnx__model_proto__init(&model);
	onnx__operator_set_id_proto__init(&opset);
	opset.domain = "";
	opset.has_version = true;
	opset.version = 17;
	model.has_ir_version = true;
	model.ir_version = 8;
	model.n_opset_import = 1;
	model.opset_import = opsets;
	model.graph = graph;
	*len = protobuf_c_message_get_packed_size(&model.base);
	buf = malloc(*len);
	protobuf_c_message_pack(&model.base, buf);
	return buf;
}

typedef struct G
{
	Onnx__GraphProto graph;
	Onnx__ValueInfoProto in, out;
	Onnx__ValueInfoProto *ins[1], *outs[1];
	Onnx__TypeProto type;
	Onnx__TypeProto__Tensor tt;
	Onnx__TensorShapeProto shape;
	Onnx__TensorShapeProto__Dimension d0, d1;
	Onnx__TensorShapeProto__Dimension *dims[2];
	Onnx__NodeProto nodes[4];
	Onnx__NodeProto *np[4];
	char	   *node_in[4][2];
	char	   *node_out[4][1];
} G;

static void
g_init(G *g, int n_nodes)
{
	memset(g, 0, sizeof(*g));
	onnx__graph_proto__init(&g->graph);
	onnx__value_info_proto__init(&g->in);
	onnx__value_info_proto__init(&g->out);
	onnx__type_proto__init(&g->type);
	onnx__type_proto__tensor__init(&g->tt);
	onnx__tensor_shape_proto__init(&g->shape);
	onnx__tensor_shape_proto__dimension__init(&g->d0);
	onnx__tensor_shape_proto__dimension__init(&g->d1);
	g->d0.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
	g->d0.dim_param = "N";
	g->d1.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
	g->d1.dim_value = 4;
	g->dims[0] = &g->d0;
	g->dims[1] = &g->d1;
	g->shape.n_dim = 2;
	g->shape.dim = g->dims;
	g->tt.has_elem_type = true;
	g->tt.elem_type = 1;
	g->tt.shape = &g->shape;
	g->type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	g->type.tensor_type = &g->tt;
	g->in.name = "x";
	g->in.type = &g->type;
	g->out.name = "y";
	g->out.type = &g->type;
	g->ins[0] = &g->in;
	g->outs[0] = &g->out;
	g->graph.name = "hostile";
	g->graph.n_input = 1;
	g->graph.input = g->ins;
	g->graph.n_output = 1;
	g->graph.output = g->outs;
	for (int k = 0; k < n_nodes; k++)
	{
		onnx__node_proto__init(&g->nodes[k]);
		g->nodes[k].input = g->node_in[k];
		g->nodes[k].output = g->node_out[k];
		g->np[k] = &g->nodes[k];
	}
	g->graph.n_node = n_nodes;
	g->graph.node = g->np;
}

static void
g_node(G *g, int k, const char *op, const char *name, const char *in, const char *out)
{
	g->nodes[k].op_type = (char *) op;
	g->nodes[k].name = (char *) name;
	g->node_in[k][0] = (char *) in;
	g->nodes[k].n_input = 1;
	g->node_out[k][0] = (char *) out;
	g->nodes[k].n_output = 1;
}

static DlStatus
import_bytes(const uint8_t *buf, size_t len, DlError *err)
{
	TestAllocCounter c;
	DlAllocator a = test_allocator(&c);
	DlOnnxImport imp;
	DlStatus	st = dl_onnx_import(buf, len, &a, &imp, err);

	dl_onnx_import_free(&imp, &a);
	assert_int_equal(c.live, 0);
	return st;
}

static void
test_hostile(void **state)
{
	G			g;
	uint8_t    *buf;
	size_t		len;
	DlError		err;

	/* a relu model imports */
	g_init(&g, 1);
	g_node(&g, 0, "Relu", "r", "x", "y");
	buf = pack_model(&g.graph, &len);
	assert_int_equal(import_bytes(buf, len, &err), DL_OK);

	/* truncated: every prefix is refused or converted, never crashes */
	for (size_t cut = 0; cut < len; cut++)
	{
		DlStatus	st = import_bytes(buf, cut, &err);

		assert_true(st == DL_ERR_CORRUPT || st == DL_ERR_SHAPE || st == DL_ERR_INVALID_ARGUMENT ||
					st == DL_ERR_UNSUPPORTED || st == DL_OK);
	}
	assert_int_equal(import_bytes(buf, len - 3, &err), DL_ERR_CORRUPT);
	assert_non_null(strstr(err.msg, "truncated"));
	free(buf);

	/* not a protobuf */
	assert_int_equal(import_bytes((const uint8_t *) "\xff\xff\xff\xff garbage", 12, &err), DL_ERR_CORRUPT);

	/* an unsupported operator: the node, its op_type, the supported list */
	g_init(&g, 1);
	g_node(&g, 0, "NonMaxSuppression", "nms_1", "x", "y");
	buf = pack_model(&g.graph, &len);
	assert_int_equal(import_bytes(buf, len, &err), DL_ERR_UNSUPPORTED);
	assert_non_null(strstr(err.msg, "nms_1"));
	assert_non_null(strstr(err.msg, "NonMaxSuppression"));
	assert_non_null(strstr(err.hint, "Gemm"));
	free(buf);

	/* a cycle: y1 = Relu(y2), y2 = Relu(y1) */
	g_init(&g, 3);
	g_node(&g, 0, "Relu", "a", "y2", "y1");
	g_node(&g, 1, "Relu", "b", "y1", "y2");
	g_node(&g, 2, "Relu", "c", "x", "y");
	buf = pack_model(&g.graph, &len);
	assert_int_equal(import_bytes(buf, len, &err), DL_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err.msg, "cycle"));
	free(buf);

	/* nodes out of order are taken in a topological order */
	g_init(&g, 2);
	g_node(&g, 0, "Relu", "second", "y1", "y");
	g_node(&g, 1, "Sigmoid", "first", "x", "y1");
	buf = pack_model(&g.graph, &len);
	assert_int_equal(import_bytes(buf, len, &err), DL_OK);
	free(buf);

	/* a tensor nothing gives */
	g_init(&g, 1);
	g_node(&g, 0, "Relu", "r", "nowhere", "y");
	buf = pack_model(&g.graph, &len);
	assert_int_equal(import_bytes(buf, len, &err), DL_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err.msg, "nowhere"));
	free(buf);

	/* an initializer of huge floats (fuzz_onnx's first finding: a float cast to int64) */
	{
		Onnx__TensorProto t;
		Onnx__TensorProto *tp[1] = {&t};
		int64_t		dims[1] = {2};
		float		huge[2] = {7.8e34f, -3e38f};

		g_init(&g, 1);
		g_node(&g, 0, "Relu", "r", "x", "y");
		onnx__tensor_proto__init(&t);
		t.name = "huge";
		t.n_dims = 1;
		t.dims = dims;
		t.has_data_type = true;
		t.data_type = 1;
		t.has_raw_data = true;
		t.raw_data.data = (uint8_t *) huge;
		t.raw_data.len = sizeof(huge);
		g.graph.n_initializer = 1;
		g.graph.initializer = tp;
		buf = pack_model(&g.graph, &len);
		assert_int_equal(import_bytes(buf, len, &err), DL_OK);
		free(buf);
	}

	/* a 2 GB tensor declared in a few bytes */
	{
		Onnx__TensorProto t;
		Onnx__TensorProto *tp[1] = {&t};
		int64_t		dims[2] = {1 << 16, 1 << 13};	/* 2^29 floats: 2 GiB */
		uint8_t		raw[16] = {0};

		g_init(&g, 1);
		g_node(&g, 0, "Relu", "r", "x", "y");
		onnx__tensor_proto__init(&t);
		t.name = "w";
		t.n_dims = 2;
		t.dims = dims;
		t.has_data_type = true;
		t.data_type = 1;
		t.has_raw_data = true;
		t.raw_data.data = raw;
		t.raw_data.len = sizeof(raw);
		g.graph.n_initializer = 1;
		g.graph.initializer = tp;
		buf = pack_model(&g.graph, &len);
		assert_true(len < 1024);
		assert_int_equal(import_bytes(buf, len, &err), DL_ERR_CORRUPT);
		assert_non_null(strstr(err.msg, "declares 536870912 elements but holds 4"));
		free(buf);
		/* dimensions whose product overflows */
		dims[0] = INT64_MAX / 2;
		dims[1] = 4;
		buf = pack_model(&g.graph, &len);
		assert_int_equal(import_bytes(buf, len, &err), DL_ERR_CORRUPT);
		free(buf);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_export_fixtures),
		cmocka_unit_test(test_torch_import),
		cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
