--
-- 30_evaluate_predict: madlib_keras_evaluate, madlib_keras_predict and
-- madlib_keras_predict_byom on iris, after MADlib's flow: preprocess ->
-- load_keras_model -> fit (fixed seed) -> evaluate -> predict ->
-- predict_byom.  Losses and probabilities depend on the CPU's float
-- kernels, so only relations between numbers are printed.
--
\set SHOW_CONTEXT never
CREATE SCHEMA ep_test;
SET search_path = ep_test, public;
\set ECHO none
\i test/data/iris.sql
\set ECHO all
CREATE TABLE iris_train AS SELECT * FROM iris_data WHERE id % 5 <> 0;
CREATE TABLE iris_test AS SELECT * FROM iris_data WHERE id % 5 = 0;
SET client_min_messages = warning;
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'iris_train_packed', 'class_text',
    'attributes', NULL, 1.0, NULL, '2');
SELECT madlib_dl.validation_preprocessor_dl('iris_test', 'iris_test_packed', 'class_text',
    'attributes', 'iris_train_packed');
RESET client_min_messages;

-- iris MLP 4-10-10-3 as tf.keras 2 writes it
\set iris_tf2 '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "sparse": false, "ragged": false, "name": "dense_input"}}, {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "batch_input_shape": [null, 4], "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}, {"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}, {"class_name": "Dense", "config": {"name": "dense_2", "trainable": true, "dtype": "float32", "units": 3, "activation": "softmax", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
SELECT madlib_dl.load_keras_model('model_arch_library', :'iris_tf2', NULL, 'iris mlp');

-- The progress NOTICEs carry timings and machine-dependent losses.
SET client_min_messages = warning;
SELECT madlib_dl.madlib_keras_fit('iris_train_packed', 'iris_model', 'model_arch_library', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
    'batch_size=16, epochs=2, seed=1', 10, FALSE, 'iris_test_packed');
RESET client_min_messages;

-- =====================================================================
-- evaluate
-- =====================================================================
SELECT madlib_dl.madlib_keras_evaluate('iris_model', 'iris_test_packed', 'iris_eval');
-- MADlib's columns and types
SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod)
  FROM pg_attribute a
 WHERE a.attrelid = 'iris_eval'::regclass AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY a.attnum;
-- one row; on the validation table, the numbers fit reported
SELECT count(*) AS n_rows,
       bool_and(e.loss > 0 AND e.loss < 0.5) AS loss_in_range,
       bool_and(e.metric >= 0.9 AND e.metric <= 1) AS accuracy_in_range,
       bool_and(abs(e.loss - s.validation_loss_final) < 1e-6) AS loss_is_validation_loss,
       bool_and(abs(e.metric - s.validation_metrics_final) < 1e-6) AS metric_is_validation_metric,
       min(e.metrics_type::text) AS metrics_type, min(e.loss_type) AS loss_type
  FROM iris_eval e, iris_model_summary s;
-- the short name, the 3-argument form and a schema-qualified name give
-- the same numbers; on the training table, the training numbers
SELECT madlib_dl.evaluate('ep_test.iris_model', 'iris_test_packed', 'ep_test.iris_eval2');
SELECT madlib_dl.evaluate('iris_model', 'iris_train_packed', 'iris_eval_train', FALSE, NULL);
SELECT a.loss = b.loss AND a.metric = b.metric AS same_result,
       abs(t.loss - s.training_loss_final) < 1e-6 AS loss_is_training_loss,
       abs(t.metric - s.training_metrics_final) < 1e-6 AS metric_is_training_metric
  FROM iris_eval a, iris_eval2 b, iris_eval_train t, iris_model_summary s;

-- =====================================================================
-- predict
-- =====================================================================
SELECT madlib_dl.madlib_keras_predict('iris_model', 'iris_test', 'id', 'attributes',
    'iris_response', 'response');
-- MADlib's columns: the id keeps its type; no rank for 'response'
SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod)
  FROM pg_attribute a
 WHERE a.attrelid = 'iris_response'::regclass AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY a.attnum;
-- one row per example, the class of the training summary, accuracy > 0.9
SELECT count(*) AS n_rows, count(DISTINCT r.id) AS n_ids,
       min(r.class_name) AS class_name,
       avg((r.class_value = t.class_text)::int) > 0.9 AS accuracy_above_90,
       bool_and(r.class_value IN ('Iris-setosa', 'Iris-versicolor', 'Iris-virginica')) AS known_classes
  FROM iris_response r JOIN iris_test t USING (id);

-- 'prob' (the default): every class, ranked; probabilities sum to 1
SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'iris_prob');
SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod)
  FROM pg_attribute a
 WHERE a.attrelid = 'iris_prob'::regclass AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY a.attnum;
SELECT count(*) AS n_ids,
       bool_and(n = 3) AS three_rows_per_id,
       bool_and(ranks = '{1,2,3}') AS ranks_1_to_3,
       bool_and(classes = '{Iris-setosa,Iris-versicolor,Iris-virginica}') AS every_class,
       bool_and(abs(total - 1) < 1e-6) AS probs_sum_to_1,
       bool_and(ordered) AS prob_falls_with_rank
  FROM (SELECT id, count(*) AS n, array_agg(rank ORDER BY rank) AS ranks,
               array_agg(class_value ORDER BY class_value) AS classes, sum(prob) AS total,
               array_agg(prob ORDER BY rank) = array_agg(prob ORDER BY prob DESC) AS ordered
          FROM iris_prob GROUP BY id) g;
-- rank 1 of 'prob' is the 'response' row
SELECT count(*) AS agree
  FROM iris_prob p JOIN iris_response r USING (id)
 WHERE p.rank = 1 AND p.class_value = r.class_value AND p.prob = r.prob;

-- top k: an integer, or an integer written as text
SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'iris_top2', 2);
SELECT madlib_dl.madlib_keras_predict('iris_model', 'iris_test', 'id', 'attributes',
    'iris_top2_text', '2');
SELECT (SELECT count(*) FROM iris_top2) AS n_rows,
       (SELECT array_agg(DISTINCT rank) FROM iris_top2) AS ranks,
       NOT EXISTS (SELECT id, class_value, prob, rank FROM iris_top2
                   EXCEPT SELECT id, class_value, prob, rank FROM iris_prob WHERE rank <= 2)
       AND NOT EXISTS (SELECT id, class_value, prob, rank FROM iris_prob WHERE rank <= 2
                       EXCEPT SELECT id, class_value, prob, rank FROM iris_top2) AS top2_of_prob,
       NOT EXISTS (SELECT * FROM iris_top2 EXCEPT SELECT * FROM iris_top2_text)
       AND NOT EXISTS (SELECT * FROM iris_top2_text EXCEPT SELECT * FROM iris_top2) AS text_same;

-- threshold: a double precision, or a decimal written as text
SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'iris_over', 0.2);
SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'iris_over_text', '0.2');
SELECT (SELECT count(*) FROM iris_over) = (SELECT count(*) FROM iris_prob WHERE prob > 0.2) AS same_count,
       (SELECT count(*) FROM iris_over) BETWEEN 30 AND 60 AS count_plausible,
       (SELECT bool_and(prob > 0.2) FROM iris_over) AS all_above,
       NOT EXISTS (SELECT id, class_value, prob, rank FROM iris_over
                   EXCEPT SELECT id, class_value, prob, rank FROM iris_prob WHERE prob > 0.2) AS subset_of_prob,
       NOT EXISTS (SELECT * FROM iris_over EXCEPT SELECT * FROM iris_over_text)
       AND NOT EXISTS (SELECT * FROM iris_over_text EXCEPT SELECT * FROM iris_over) AS text_same;
-- threshold 0 keeps every class (all probabilities are > 0)
SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'iris_over0', 0.0::float8);
SELECT count(*) AS n_rows FROM iris_over0;

-- the id keeps its name and type (text here), from a view; batches of
-- any size give the same numbers
CREATE VIEW iris_test_named AS
SELECT 'flower ' || id AS "Flower", attributes::real[] AS feats FROM iris_test;
SELECT madlib_dl.predict('iris_model', 'iris_test_named', 'Flower', 'feats', 'iris_named', 'response');
SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod)
  FROM pg_attribute a
 WHERE a.attrelid = 'iris_named'::regclass AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY a.attnum;
SELECT count(*) AS agree
  FROM iris_named n JOIN iris_response r ON n."Flower" = 'flower ' || r.id
 WHERE n.class_value = r.class_value AND abs(n.prob - r.prob) < 1e-6;
SELECT count(*) AS n_values, count(DISTINCT (p.r).id) AS n_ids,
       bool_and(abs((p.r).prob - q.prob) < 1e-6) AS same_probs
  FROM (SELECT madlib_dl._predict_batch(:'iris_tf2', (SELECT model_weights FROM iris_model), 1.0, 7,
                                        'attributes', NULL, s.id::text, s.attributes, s.flush) AS r
          FROM (SELECT id, attributes, false AS flush FROM iris_test
                UNION ALL SELECT NULL, NULL, true) s) p
       JOIN iris_prob q
         ON q.id = (p.r).id::integer
        AND q.class_value = (ARRAY['Iris-setosa', 'Iris-versicolor', 'Iris-virginica'])[(p.r).class_index];

-- the training normalizing_const is applied: a model whose summary says
-- 10 gives, on data multiplied by 10, what the model gives on raw data
CREATE TABLE iris_model_nc AS SELECT * FROM iris_model;
CREATE TABLE iris_model_nc_summary AS SELECT * FROM iris_model_summary;
UPDATE iris_model_nc_summary SET normalizing_const = 10;
CREATE TABLE iris_test_x10 AS
SELECT id, array_agg(v * 10 ORDER BY k) AS attributes
  FROM iris_test, unnest(attributes) WITH ORDINALITY AS u(v, k) GROUP BY id;
SELECT madlib_dl.predict('iris_model_nc', 'iris_test_x10', 'id', 'attributes', 'iris_prob_nc');
SELECT count(*) AS n_rows, bool_and(abs(a.prob - b.prob) < 1e-6) AS same_probs,
       bool_and(a.class_value = b.class_value) AS same_classes
  FROM iris_prob_nc a JOIN iris_prob b USING (id, rank);

-- a model trained on an already one-hot dependent has no class values:
-- class_value is the output index
CREATE TABLE iris_model_oh AS SELECT * FROM iris_model;
CREATE TABLE iris_model_oh_summary AS SELECT * FROM iris_model_summary;
UPDATE iris_model_oh_summary SET class_text_class_values = NULL;
SELECT madlib_dl.predict('iris_model_oh', 'iris_test', 'id', 'attributes', 'iris_prob_oh');
SELECT o.class_value, min(p.class_value) AS training_class, count(*)
  FROM iris_prob_oh o JOIN iris_prob p USING (id, rank)
 GROUP BY o.class_value ORDER BY o.class_value;

-- =====================================================================
-- a multi-model table (fit_multiple_model's layout), chosen by mst_key
-- =====================================================================
CREATE TABLE iris_multi AS
SELECT k AS mst_key, model_weights, model_arch FROM iris_model, generate_series(1, 2) k;
CREATE TABLE iris_multi_summary AS SELECT * FROM iris_model_summary;
CREATE TABLE iris_multi_info (mst_key integer PRIMARY KEY, model_id integer, compile_params text,
                              fit_params text, metrics_type text[], loss_type text);
INSERT INTO iris_multi_info VALUES
    (1, 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
     'batch_size=16', '{accuracy}', 'categorical_crossentropy'),
    (2, 1, $$loss='mse', optimizer='SGD', metrics=['mae']$$,
     'batch_size=16', '{mae}', 'mean_squared_error'),
    (4, 1, $$loss='categorical_crossentropy', optimizer='SGD'$$,
     'batch_size=16', NULL, 'categorical_crossentropy'),
    (5, 1, $$loss='sparse_categorical_crossentropy', optimizer='SGD', metrics=['accuracy']$$,
     'batch_size=16', '{accuracy}', 'sparse_categorical_crossentropy');
INSERT INTO iris_multi SELECT k, model_weights, model_arch FROM iris_model, unnest('{4,5}'::int[]) k;
SELECT madlib_dl.evaluate('iris_multi', 'iris_test_packed', 'iris_multi_eval1', mst_key => 1);
SELECT madlib_dl.evaluate('iris_multi', 'iris_test_packed', 'iris_multi_eval2', FALSE, 2);
SELECT a.loss = e.loss AND a.metric = e.metric AS mst1_is_the_model,
       a.metrics_type, b.metrics_type AS metrics_type_2, b.loss_type AS loss_type_2,
       b.loss > 0 AND b.loss < 1 AND b.metric > 0 AND b.metric < 1 AS mse_mae_in_range
  FROM iris_multi_eval1 a, iris_multi_eval2 b, iris_eval e;
-- without a metric in compile_params, metric is NULL
SELECT madlib_dl.evaluate('iris_multi', 'iris_test_packed', 'iris_multi_eval4', mst_key => 4);
SELECT a.loss = e.loss AS same_loss, a.metric IS NULL AS metric_is_null, a.metrics_type, a.loss_type
  FROM iris_multi_eval4 a, iris_eval e;
-- the sparse loss reads the one-hot buffers as class indexes: the same
-- numbers as categorical crossentropy
SELECT madlib_dl.evaluate('iris_multi', 'iris_test_packed', 'iris_multi_eval5', mst_key => 5);
SELECT abs(a.loss - e.loss) < 1e-6 AS same_loss, a.metric = e.metric AS same_metric, a.loss_type
  FROM iris_multi_eval5 a, iris_eval e;
SELECT madlib_dl.predict('iris_multi', 'iris_test', 'id', 'attributes', 'iris_multi_prob',
    'prob', FALSE, 2);
SELECT NOT EXISTS (SELECT * FROM iris_multi_prob EXCEPT SELECT * FROM iris_prob)
       AND NOT EXISTS (SELECT * FROM iris_prob EXCEPT SELECT * FROM iris_multi_prob) AS same_as_single;

-- =====================================================================
-- predict_byom: the trained weights copied into an architecture table
-- =====================================================================
SELECT madlib_dl.load_keras_model('model_arch_library', (SELECT model_arch FROM iris_model),
    (SELECT model_weights FROM iris_model), 'iris trained');
SELECT model_id, name, model_weights IS NOT NULL AS has_weights
  FROM model_arch_library ORDER BY model_id;
-- with the training class values and normalizing constant, byom = predict
SELECT madlib_dl.madlib_keras_predict_byom('model_arch_library', 2, 'iris_test', 'id',
    'attributes', 'iris_byom', 'response', FALSE,
    ARRAY['Iris-setosa', 'Iris-versicolor', 'Iris-virginica'], 1.0);
SELECT count(*) AS n_rows, min(b.class_name) AS class_name,
       bool_and(b.class_value = r.class_value) AS same_classes,
       bool_and(b.prob = r.prob) AS same_probs
  FROM iris_byom b JOIN iris_response r USING (id);
-- defaults: class values '0'..'2', normalizing_const 1.0, 'prob'
SELECT madlib_dl.predict_byom('model_arch_library', 2, 'iris_test', 'id', 'attributes',
    'iris_byom_prob');
SELECT b.class_value, min(p.class_value) AS training_class, count(*),
       bool_and(b.prob = p.prob) AS same_probs, min(b.class_name) AS class_name
  FROM iris_byom_prob b JOIN iris_prob p USING (id, rank)
 GROUP BY b.class_value ORDER BY b.class_value;
-- top k and threshold; normalizing_const divides the features
SELECT madlib_dl.predict_byom('model_arch_library', 2, 'iris_test', 'id', 'attributes',
    'iris_byom_top1', 1);
SELECT madlib_dl.predict_byom('model_arch_library', 2, 'iris_test', 'id', 'attributes',
    'iris_byom_over', 0.2);
SELECT madlib_dl.predict_byom('model_arch_library', 2, 'iris_test_x10', 'id', 'attributes',
    'iris_byom_nc', 'prob', FALSE, NULL, 10);
SELECT (SELECT count(*) FROM iris_byom_top1) AS top1_rows,
       (SELECT array_agg(DISTINCT rank) FROM iris_byom_top1) AS top1_ranks,
       (SELECT count(*) FROM iris_byom_over) = (SELECT count(*) FROM iris_over) AS over_same_count,
       (SELECT bool_and(abs(a.prob - b.prob) < 1e-6) FROM iris_byom_nc a JOIN iris_prob b USING (id, rank))
         AS nc_same_probs;

-- =====================================================================
-- help
-- =====================================================================
SELECT position('madlib_keras_evaluate' IN madlib_dl.evaluate()) > 0 AS evaluate_help,
       position('mst_key' IN madlib_dl.madlib_keras_evaluate('usage')) > 0 AS evaluate_usage,
       position('madlib_keras_predict' IN madlib_dl.predict()) > 0 AS predict_help,
       position('pred_type' IN madlib_dl.madlib_keras_predict('usage')) > 0 AS predict_usage,
       position('madlib_keras_predict_byom' IN madlib_dl.predict_byom()) > 0 AS byom_help,
       position('dependent_count' IN madlib_dl.madlib_keras_predict_byom('usage')) > 0 AS byom_usage;

-- =====================================================================
-- bad inputs
-- =====================================================================
\set VERBOSITY default
-- mst_key misuse
SELECT madlib_dl.evaluate('iris_model', 'iris_test_packed', 'bad_out', mst_key => 1);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.evaluate('iris_multi', 'iris_test_packed', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict('iris_multi', 'iris_test', 'id', 'attributes', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.evaluate('iris_multi', 'iris_test_packed', 'bad_out', mst_key => 7);
\echo :LAST_ERROR_SQLSTATE
INSERT INTO iris_multi SELECT 3, model_weights, model_arch FROM iris_model;
SELECT madlib_dl.predict('iris_multi', 'iris_test', 'id', 'attributes', 'bad_out', 'prob', FALSE, 3);
\echo :LAST_ERROR_SQLSTATE
-- pred_type
SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'bad_out', 'foo');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'bad_out', 0);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'bad_out', 4);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'bad_out', '4');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'bad_out', 1.5);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'bad_out', 1.0::float8);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict_byom('model_arch_library', 2, 'iris_test', 'id', 'attributes',
    'bad_out', '-0.5');
\echo :LAST_ERROR_SQLSTATE
-- tables
SELECT madlib_dl.evaluate('iris_model', 'no_such_table', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict('iris_model', 'no_such_table', 'id', 'attributes', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict('no_such_model', 'iris_test', 'id', 'attributes', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.evaluate('iris_model', 'iris_test_packed', 'iris_eval');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'iris_prob');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'bad;name');
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE iris_no_summary AS SELECT * FROM iris_model;
SELECT madlib_dl.evaluate('iris_no_summary', 'iris_test_packed', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
-- evaluate takes packed tables, predict raw rows
\set VERBOSITY default
SELECT madlib_dl.evaluate('iris_model', 'iris_test', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict('iris_model', 'iris_test_packed', 'buffer_id', 'attributes', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
SELECT madlib_dl.predict('iris_model', 'iris_test', 'no_id', 'attributes', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'no_feats', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes, class_text', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict('iris_model', 'iris_test', NULL, 'attributes', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
CREATE VIEW iris_test_rank AS SELECT id AS rank, attributes FROM iris_test;
SELECT madlib_dl.predict('iris_model', 'iris_test_rank', 'rank', 'attributes', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.evaluate('iris_model', 'iris_test_packed', 'bad_out', TRUE);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'bad_out', use_gpus => TRUE);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict_byom('model_arch_library', 2, 'iris_test', 'id', 'attributes', 'bad_out', use_gpus => TRUE);
\echo :LAST_ERROR_SQLSTATE
SELECT to_regclass('bad_out') IS NULL AS no_output_with_use_gpus;
-- an input shape that does not match the architecture
CREATE TABLE iris_5 AS SELECT id, attributes || 0.0::float8 AS attributes, class_text FROM iris_test;
SET client_min_messages = warning;
SELECT madlib_dl.training_preprocessor_dl('iris_5', 'iris_5_packed', 'class_text', 'attributes');
RESET client_min_messages;
\set VERBOSITY default
SELECT madlib_dl.evaluate('iris_model', 'iris_5_packed', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
-- bad rows name their id; the failed call leaves no output table
CREATE TABLE iris_bad AS SELECT * FROM iris_test;
UPDATE iris_bad SET attributes = attributes[1:3] WHERE id = 25;
SELECT madlib_dl.predict('iris_model', 'iris_bad', 'id', 'attributes', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
SELECT to_regclass('bad_out') IS NULL AS no_output_table;
UPDATE iris_bad SET attributes = NULL WHERE id = 25;
SELECT madlib_dl.predict('iris_model', 'iris_bad', 'id', 'attributes', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
UPDATE iris_bad SET attributes = ARRAY[5.0, NULL, 1.4, 0.2] WHERE id = 25;
SELECT madlib_dl.predict('iris_model', 'iris_bad', 'id', 'attributes', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
UPDATE iris_bad SET attributes = ARRAY[5.0, 'NaN', 1.4, 0.2] WHERE id = 25;
SELECT madlib_dl.predict_byom('model_arch_library', 2, 'iris_bad', 'id', 'attributes', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
-- predict_byom
\set VERBOSITY default
SELECT madlib_dl.predict_byom('model_arch_library', 1, 'iris_test', 'id', 'attributes', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict_byom('model_arch_library', 2, 'iris_test', 'id', 'attributes', 'bad_out',
    dependent_count => 2);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
SELECT madlib_dl.predict_byom('model_arch_library', 9, 'iris_test', 'id', 'attributes', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict_byom('model_arch_library', NULL, 'iris_test', 'id', 'attributes', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict_byom('model_arch_library', 2, 'iris_test', 'id', 'attributes', 'bad_out',
    class_values => ARRAY['a', 'b']);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict_byom('model_arch_library', 2, 'iris_test', 'id', 'attributes', 'bad_out',
    normalizing_const => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.predict_byom('no_such_arch_table', 2, 'iris_test', 'id', 'attributes', 'bad_out');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default

-- A float8[] that keeps a null bitmap after its only NULL was replaced
-- (PL/pgSQL element assignment keeps it) predicts as the same values
-- without one: its data starts after the bitmap.
CREATE TABLE iris_bitmap (id integer, attributes float8[]);
DO $$
DECLARE
    a float8[] := ARRAY[5.1, NULL, 1.4, 0.2];
BEGIN
    a[2] := 3.5;
    INSERT INTO iris_bitmap VALUES (1, a), (2, ARRAY[5.1, 3.5, 1.4, 0.2]);
END
$$;
SELECT count(*) FILTER (WHERE array_to_string(attributes, ',', 'x') = '5.1,3.5,1.4,0.2') AS same_values
  FROM iris_bitmap;
SELECT madlib_dl.madlib_keras_predict('iris_model', 'iris_bitmap', 'id', 'attributes', 'bitmap_out', 'prob');
SELECT count(DISTINCT (class_value, prob)) = count(*) / 2 AS bitmap_row_predicts_the_same
  FROM bitmap_out;

SET client_min_messages = warning;
DROP SCHEMA ep_test CASCADE;
RESET client_min_messages;
