-- 32_predict_shapes.sql: predict at the memory limit (the batch that
-- runs, batch_size), variable input shapes bound from the rows, and the
-- order of the weights checked (issue 28, items 4 to 6).
-- test/data/tfjs_variable_shape.sql is made by
-- test/unit/fixtures/gen_variable_shape.js (TensorFlow.js).
\set VERBOSITY terse
SET client_min_messages = warning;
\i test/data/tfjs_variable_shape.sql

-- A variable input shape: 2 unknown sizes; the weights are checked
SELECT madlib_dl._arch_free_dims(:'vs_arch'::json) AS free_dims;
SELECT madlib_dl._validate_arch(:'vs_arch'::json, madlib_dl.weights_from_array(keras)) AS n_params
  FROM vs_weights;
SELECT (madlib_dl._arch_info(madlib_dl._arch_bind_shape(:'vs_arch'::json, '{16,16,3}'))).output_shape;
SELECT madlib_dl._arch_bind_shape(:'vs_arch'::json, '{16,16}');
SELECT madlib_dl._arch_bind_shape(:'vs_arch'::json, '{16,0,3}');

-- the weight tensors in Keras order
SELECT * FROM madlib_dl.keras_model_weights(:'vs_arch'::json);

SELECT madlib_dl.load_keras_model('vs_models', :'vs_arch'::json,
                                  madlib_dl.weights_from_array(keras), 'keras order')
  FROM vs_weights;

-- 16x16 and 32x32 images, each in a call of its own, against TF.js
CREATE VIEW vs_16 AS SELECT id, x FROM vs_img WHERE id = 1;
CREATE VIEW vs_32 AS SELECT id, x FROM vs_img WHERE id = 2;
SELECT madlib_dl.predict_byom('vs_models', 1, 'vs_16', 'id', 'x', 'vs_out16');
SELECT madlib_dl.predict_byom('vs_models', 1, 'vs_32', 'id', 'x', 'vs_out32');
SELECT o.id, count(*) AS n_values, max(abs(o.prob - e.value)) < 1e-5 AS matches_tfjs
  FROM (SELECT * FROM vs_out16 UNION ALL SELECT * FROM vs_out32) o
  JOIN vs_expected e ON e.id = o.id AND e.k = o.class_value::int + 1
 GROUP BY o.id ORDER BY o.id;
-- rows of two shapes in one call: refused, naming the row
SELECT madlib_dl.predict_byom('vs_models', 1, 'vs_img', 'id', 'x', 'vs_out_mixed');
SELECT to_regclass('vs_out_mixed') IS NULL AS no_output;

-- Predict at the limit: the batch is what fits.  batch_size is taken
-- after MADlib's arguments; the results do not depend on it.
SELECT madlib_dl.predict_byom('vs_models', 1, 'vs_32', 'id', 'x', 'vs_out_b1', batch_size => 1);
SELECT count(*) AS n, bool_and(a.prob = b.prob) AS same FROM vs_out32 a JOIN vs_out_b1 b USING (id, class_value);
SELECT madlib_dl.predict_byom('vs_models', 1, 'vs_32', 'id', 'x', 'vs_out_b0', batch_size => 0);
-- 2048 rows of 32x32 images: 1024 rows a pass would be over 64 MB; fewer are run
CREATE TABLE vs_many AS SELECT g AS id, x FROM vs_img, generate_series(1, 2048) g WHERE vs_img.id = 2;
SET madlib_dl.max_model_memory = '64MB';
SELECT madlib_dl._check_model_memory('predict',
    ARRAY[madlib_dl._arch_bind_shape(:'vs_arch'::json, '{32,32,3}')::text], NULL, NULL, NULL,
    batch_size => 1024);
SELECT madlib_dl.predict_byom('vs_models', 1, 'vs_many', 'id', 'x', 'vs_out_many', 'response',
                              batch_size => 1024);
SELECT count(*) AS n, count(DISTINCT class_value) AS classes FROM vs_out_many;
-- row mode (no batch_size: _predict_probs, batched by the batched predict
-- node, in parallel workers when the planner takes them): the same rows
-- with and without workers
SET max_parallel_workers_per_gather = 0;
SELECT madlib_dl.predict_byom('vs_models', 1, 'vs_many', 'id', 'x', 'vs_out_serial', 'response');
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT madlib_dl.predict_byom('vs_models', 1, 'vs_many', 'id', 'x', 'vs_out_parallel', 'response');
-- the query of row mode runs in parallel workers (a Gather over a parallel scan),
-- batched
SELECT model_weights AS vs_w FROM vs_models WHERE model_id = 1 \gset
PREPARE vs_rowmode(json, bytea) AS
  SELECT madlib_dl._predict_ranked(t.id::text, madlib_dl._predict_probs($1, $2, 1.0, 'x', t.id::text, t.x), 1)
    FROM vs_many t;
EXPLAIN (COSTS OFF) EXECUTE vs_rowmode(madlib_dl._arch_bind_shape(:'vs_arch'::json, '{32,32,3}'), :'vs_w');
DEALLOCATE vs_rowmode;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
SELECT count(*) AS n, bool_and(a.prob = b.prob) AS identical
  FROM vs_out_serial a FULL JOIN vs_out_parallel b USING (id, class_value);
-- too large for even one row: the error names the estimate, the limit and what helps
SET madlib_dl.max_model_memory = '128kB';
\set VERBOSITY default
\set SHOW_CONTEXT never
SELECT madlib_dl.predict_byom('vs_models', 1, 'vs_32', 'id', 'x', 'vs_out_small');
\set VERBOSITY terse
RESET madlib_dl.max_model_memory;

-- Weight order.  TF.js' model.getWeights() puts the moving statistics
-- last: as a flat block of the right length it is refused (a negative
-- moving_variance), with TF.js' manifest it is put in Keras order by name,
-- with its shapes alone it is refused where the shapes differ.
SELECT madlib_dl.load_keras_model('vs_models', :'vs_arch'::json, madlib_dl.weights_from_array(tfjs),
                                  'tfjs order') FROM vs_weights;
SELECT madlib_dl.load_keras_model('vs_models', :'vs_arch'::json, madlib_dl.weights_from_array(tfjs),
                                  'tfjs order, manifest', NULL, :'vs_tfjs_manifest'::jsonb) FROM vs_weights;
SELECT m.name, m.model_weights = madlib_dl.weights_from_array(w.keras) AS keras_order
  FROM vs_models m, vs_weights w ORDER BY m.model_id;
SELECT madlib_dl.load_keras_model('vs_models', :'vs_arch'::json, madlib_dl.weights_from_array(tfjs),
    'shapes', NULL, (SELECT jsonb_agg(e->'shape') FROM jsonb_array_elements(:'vs_tfjs_manifest'::jsonb) e))
  FROM vs_weights;
-- a TF.js weightsManifest (groups of entries), in Keras order, names dropped: loads
SELECT madlib_dl.load_keras_model('vs_models', :'vs_arch'::json, madlib_dl.weights_from_array(keras),
    'manifest groups', NULL,
    jsonb_build_array(jsonb_build_object('paths', '["group1-shard1of1.bin"]'::jsonb, 'weights',
        (SELECT jsonb_agg(jsonb_build_object('shape', to_jsonb(k.shape)) ORDER BY k.position)
           FROM madlib_dl.keras_model_weights(:'vs_arch'::json) k))))
  FROM vs_weights;
-- a manifest of another length, a quantized entry, not a list
SELECT madlib_dl.load_keras_model('vs_models', :'vs_arch'::json, madlib_dl.weights_from_array(keras),
    'short', NULL, '[[3,3,3,4]]') FROM vs_weights;
SELECT madlib_dl.load_keras_model('vs_models', :'vs_arch'::json, madlib_dl.weights_from_array(keras),
    'quantized', NULL, jsonb_set(:'vs_tfjs_manifest'::jsonb, '{0,quantization}', '{"dtype": "uint8"}'))
  FROM vs_weights;
SELECT madlib_dl.load_keras_model('vs_models', :'vs_arch'::json, madlib_dl.weights_from_array(keras),
    'object', NULL, '{"a": 1}') FROM vs_weights;
-- predict_byom checks weights changed in the table since
UPDATE vs_models SET model_weights = (SELECT madlib_dl.weights_from_array(tfjs) FROM vs_weights)
 WHERE model_id = 1;
SELECT madlib_dl.predict_byom('vs_models', 1, 'vs_16', 'id', 'x', 'vs_out_bad');
