--
-- 72_graph_models: functional models that are graphs through the SQL
-- API (issue 15).  test/data/tfjs_resnet.sql (made by
-- test/unit/fixtures/gen_graphs.js) holds a model TensorFlow.js built:
-- a stem convolution, two residual blocks (two convolutions and an Add
-- with the block's input, the second block downsampling with a strided
-- 1x1 shortcut), global average pooling and a softmax head; its initial
-- weights; 6 rows of 6x6x2 images with their classes; TF.js'
-- predictions; and the weights TF.js reached after each of two
-- full-batch SGD(lr=0.1) steps, with its predictions after them.
-- Through load_keras_model, predict_byom, fit and predict the engine must
-- predict as TF.js does within 1e-5 and train as it does within 2e-4.
--
SET search_path = madlib_dl, public;
\set ECHO none
\i test/data/tfjs_resnet.sql
\set ECHO all
CREATE FUNCTION pg_temp.max_diff(a real[], b real[]) RETURNS double precision LANGUAGE sql AS
$$ SELECT max(abs(x::float8 - y::float8)) FROM unnest(a, b) AS u(x, y) $$;

-- the architecture: every layer in an order where each comes after what it reads
SELECT load_keras_model('rn_arch', :'rn_arch', weights_from_array((SELECT weights FROM rn_init)),
                        'tfjs resnet');
SELECT * FROM keras_model_summary(:'rn_arch'::json);
SELECT input_shape, output_shape, n_params, n_layers FROM madlib_dl._arch_info(:'rn_arch');

-- predict_byom with TF.js' initial weights: TF.js' probabilities
SELECT predict_byom('rn_arch', 1, 'rn_data', 'id', 'x', 'rn_byom');
SELECT count(*) AS n_rows,
       max(abs(b.prob - p.prob[b.class_value::int + 1])) < 1e-5 AS matches_tfjs
  FROM rn_byom b JOIN rn_pred p USING (id);

-- fit: one buffer, so each epoch is one full-batch step as TF.js' trainOnBatch
SELECT training_preprocessor_dl('rn_data', 'rn_packed', 'cls', 'x', 6, 1.0, NULL, '1');
\set rn_cp '$$loss=''categorical_crossentropy'', optimizer=''SGD(lr=0.1)'', metrics=[''accuracy'']$$'
SET client_min_messages = warning;
SELECT fit('rn_packed', 'rn_step1', 'rn_arch', 1, :rn_cp, 'batch_size=6, epochs=1, shuffle=False', 1);
SELECT fit('rn_packed', 'rn_step2', 'rn_arch', 1, :rn_cp, 'batch_size=6, epochs=2, shuffle=False', 1);
RESET client_min_messages;
SELECT e.step,
       pg_temp.max_diff(weights_to_array(m.model_weights), e.weights) < 2e-4 AS matches_tfjs,
       pg_temp.max_diff(weights_to_array(m.model_weights), i.weights) > 1e-2 AS moved
  FROM rn_expected e
  JOIN (SELECT 1 AS step, model_weights FROM rn_step1
        UNION ALL SELECT 2, model_weights FROM rn_step2) m USING (step), rn_init i
 ORDER BY e.step;

-- predict with the fitted model: TF.js' probabilities after its two steps
SELECT predict('rn_step2', 'rn_data', 'id', 'x', 'rn_pred2');
SELECT count(*) AS n_rows,
       max(abs(b.prob - p.prob_after[b.class_value::int + 1])) < 1e-5 AS matches_tfjs
  FROM rn_pred2 b JOIN rn_pred p USING (id);

-- fit_multiple trains the same
SELECT load_model_selection_table('rn_arch', 'rn_mst', ARRAY[1], ARRAY[:rn_cp],
    ARRAY['batch_size=6, epochs=2, shuffle=False']);
SET client_min_messages = warning;
SELECT fit_multiple('rn_packed', 'rn_multi', 'rn_mst', 1);
RESET client_min_messages;
SELECT pg_temp.max_diff(weights_to_array(m.model_weights), e.weights) < 2e-4 AS matches_tfjs
  FROM rn_multi m, rn_expected e WHERE e.step = 2;

-- every path gives the same bytes for a graph: two segments with parallel
-- workers, the leader alone, and the greenplum transport's aggregates
SELECT training_preprocessor_dl('rn_data', 'rn_packed2', 'cls', 'x', 3, 1.0, NULL, '2');
SET client_min_messages = warning;
SELECT fit('rn_packed2', 'rn_seg2', 'rn_arch', 1, :rn_cp, 'batch_size=3, epochs=2, seed=7', 2);
SET max_parallel_workers = 0;
SELECT fit('rn_packed2', 'rn_seg2_w0', 'rn_arch', 1, :rn_cp, 'batch_size=3, epochs=2, seed=7', 2);
RESET max_parallel_workers;
SELECT md5(a.model_weights) = md5(b.model_weights) AS leader_alone_same,
       md5(a.model_weights) = (
           SELECT md5(r.model_weights)
             FROM madlib_dl._fit_run(madlib_dl._make_train_job('rn_packed2', 'x', 'cls',
                      ARRAY[(SELECT model_arch::text FROM rn_arch WHERE model_id = 1)], ARRAY[:rn_cp], 2,
                      fit_params => ARRAY['batch_size=3, epochs=2, seed=7'],
                      init_weights => ARRAY[(SELECT model_weights FROM rn_arch WHERE model_id = 1)],
                      transport => 'greenplum', num_segments => 2)) r) AS greenplum_same
  FROM rn_seg2 a, rn_seg2_w0 b;
RESET client_min_messages;

-- a model of two inputs or two outputs loads (sql/73_multi_io trains,
-- evaluates and predicts with such models)
\set two_in '{"class_name": "Model", "config": {"name": "two_in", "layers": [{"class_name": "InputLayer", "name": "a", "config": {"name": "a", "batch_input_shape": [null, 3]}, "inbound_nodes": []}, {"class_name": "InputLayer", "name": "b", "config": {"name": "b", "batch_input_shape": [null, 3]}, "inbound_nodes": []}, {"class_name": "Add", "name": "s", "config": {"name": "s"}, "inbound_nodes": [[["a", 0, 0, {}], ["b", 0, 0, {}]]]}, {"class_name": "Dense", "name": "d", "config": {"name": "d", "units": 2, "activation": "softmax"}, "inbound_nodes": [[["s", 0, 0, {}]]]}], "input_layers": [["a", 0, 0], ["b", 0, 0]], "output_layers": [["d", 0, 0]]}}'
\set two_out '{"class_name": "Model", "config": {"name": "two_out", "layers": [{"class_name": "InputLayer", "name": "a", "config": {"name": "a", "batch_input_shape": [null, 3]}, "inbound_nodes": []}, {"class_name": "Dense", "name": "c", "config": {"name": "c", "units": 2, "activation": "softmax"}, "inbound_nodes": [[["a", 0, 0, {}]]]}, {"class_name": "Dense", "name": "r", "config": {"name": "r", "units": 1}, "inbound_nodes": [[["a", 0, 0, {}]]]}], "input_layers": [["a", 0, 0]], "output_layers": [["c", 0, 0], ["r", 0, 0]]}}'
\set VERBOSITY default
SELECT load_keras_model('rn_arch', :'two_in');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM keras_model_summary(:'two_out'::json);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
SELECT count(*) AS models FROM rn_arch;
