--
-- 31_metrics: several metrics in evaluate (metrics => '[...]'), checked
-- against scikit-learn: a tiny fixed table, a Dense(3, softmax) model with
-- fixed weights, and the values test/data/gen_metrics_evaluate.py computes
-- for them (test/data/metrics_evaluate.sql).  Keras' AUC (200
-- thresholds) is compared with sklearn's exact roc_auc_score within 1e-3
-- and with a numpy transcription of Keras' method within 1e-6.
--
\set SHOW_CONTEXT never
CREATE SCHEMA metrics_test;
SET search_path = metrics_test, public;
\set ECHO none
\i test/data/metrics_evaluate.sql
\set ECHO all
SET client_min_messages = warning;
SELECT madlib_dl.training_preprocessor_dl('metrics_raw', 'metrics_packed', 'y', 'x', NULL, 1.0);
\set arch '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 2], "dtype": "float32", "sparse": false, "ragged": false, "name": "x"}}, {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "dtype": "float32", "units": 3, "activation": "softmax", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
SELECT madlib_dl.load_keras_model('metrics_arch', :'arch', NULL, 'softmax regression');
SELECT madlib_dl.madlib_keras_fit('metrics_packed', 'metrics_model', 'metrics_arch', 1,
    $$loss='categorical_crossentropy', optimizer='SGD(lr=0.01)', metrics=['accuracy']$$,
    'batch_size=8, epochs=1, seed=1', 1);
RESET client_min_messages;
-- the fixed weights of the generator
UPDATE metrics_model SET model_weights = madlib_dl.weights_from_array(:'metrics_weights'::real[]);

-- =====================================================================
-- evaluate with the seven metrics (and top_2_accuracy)
-- =====================================================================
SELECT madlib_dl.madlib_keras_evaluate('metrics_model', 'metrics_packed', 'metrics_eval', FALSE, NULL,
    $$['accuracy', 'top_k_categorical_accuracy', 'top_2_accuracy', 'auc', 'precision', 'recall', 'mae', 'mse']$$);
SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod)
  FROM pg_attribute a
 WHERE a.attrelid = 'metrics_eval'::regclass AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY a.attnum;
-- metric is the first metric's, metrics_type the list
SELECT metrics_type, metric = (metrics->>'accuracy')::float8 AS metric_is_first,
       (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(metrics) k) AS keys
  FROM metrics_eval;
-- every value against sklearn: the difference, and whether it is within 1e-6
SELECT x.name, round(e.value::numeric, 6) AS sklearn,
       abs(x.value - e.value) < 1e-6 AS within_1e6
  FROM (SELECT 'loss' AS name, loss AS value FROM metrics_eval
        UNION ALL
        SELECT k, v::float8 FROM metrics_eval, jsonb_each_text(metrics) AS j(k, v)) x
  JOIN metrics_expected e ON e.name = x.name
 WHERE x.name <> 'auc'
 ORDER BY x.name;
-- Keras' AUC against the exact ROC AUC (1e-3) and Keras' method in numpy (1e-6)
SELECT abs((metrics->>'auc')::float8 - (SELECT value FROM metrics_expected WHERE name = 'auc')) < 1e-3
           AS auc_within_1e3_of_exact,
       abs((metrics->>'auc')::float8 - (SELECT value FROM metrics_expected WHERE name = 'auc_keras')) < 1e-6
           AS auc_within_1e6_of_keras_method
  FROM metrics_eval;

-- auc first: metric is its value
SELECT madlib_dl.evaluate('metrics_model', 'metrics_packed', 'metrics_eval_auc', FALSE, NULL,
    $$['auc', 'accuracy']$$);
SELECT metrics_type, abs(metric - (SELECT value FROM metrics_expected WHERE name = 'auc_keras')) < 1e-6
           AS metric_is_auc
  FROM metrics_eval_auc;
-- without metrics: the model's own, in the metrics column too
SELECT madlib_dl.evaluate('metrics_model', 'metrics_packed', 'metrics_eval_own');
SELECT metrics_type, metric = (metrics->>'accuracy')::float8 AS same,
       abs(metric - (SELECT value FROM metrics_expected WHERE name = 'accuracy')) < 1e-6 AS within_1e6
  FROM metrics_eval_own;
-- metrics => '[]': no metric
SELECT madlib_dl.evaluate('metrics_model', 'metrics_packed', 'metrics_eval_none', FALSE, NULL, '[]');
SELECT metric IS NULL AS no_metric, metrics_type IS NULL AS no_type, metrics IS NULL AS no_metrics
  FROM metrics_eval_none;

-- =====================================================================
-- refusals
-- =====================================================================
\set VERBOSITY sqlstate
SELECT madlib_dl.evaluate('metrics_model', 'metrics_packed', 'bad', FALSE, NULL, $$['f1']$$);
SELECT madlib_dl.evaluate('metrics_model', 'metrics_packed', 'bad', FALSE, NULL, $$['auc', 'AUC']$$);
SELECT madlib_dl.evaluate('metrics_model', 'metrics_packed', 'bad', FALSE, NULL,
    $$['sparse_categorical_accuracy']$$);
SELECT madlib_dl.evaluate('metrics_model', 'metrics_packed', 'bad', FALSE, NULL, 'accuracy');
SELECT madlib_dl.evaluate('metrics_model', 'metrics_packed', 'bad', FALSE, NULL,
    $$['accuracy', 'mae', 'mse', 'auc', 'precision', 'recall', 'top_2_accuracy', 'top_3_accuracy', 'binary_accuracy']$$);
\set VERBOSITY default
-- training records one metric: a list, or auc, is refused (0A000) before any work
SELECT madlib_dl.madlib_keras_fit('metrics_packed', 'metrics_model2', 'metrics_arch', 1,
    $$loss='categorical_crossentropy', optimizer='SGD(lr=0.01)', metrics=['accuracy', 'auc']$$,
    'batch_size=8, epochs=1', 1);
SELECT madlib_dl.madlib_keras_fit('metrics_packed', 'metrics_model2', 'metrics_arch', 1,
    $$loss='categorical_crossentropy', optimizer='SGD(lr=0.01)', metrics=['precision']$$,
    'batch_size=8, epochs=1', 1);
SELECT to_regclass('metrics_model2') IS NULL AS nothing_written;
-- the internal functions check their input
SELECT madlib_dl._metric_sums_add('\x0102'::bytea, NULL);
SELECT madlib_dl._metric_sums_add('\x0000000000000000'::bytea, '\x00000000000000000000000000000000'::bytea);
SELECT madlib_dl._metrics_values($$loss='mse', optimizer='SGD()', metrics=['auc']$$, '\x0000000000000000'::bytea, 1);
SELECT madlib_dl._metrics_values($$loss='mse', optimizer='SGD()', metrics=['mae']$$, '\x000000000000f03f'::bytea, -1);
SELECT madlib_dl._metrics_values($$loss='mse', optimizer='SGD()', metrics=['mae', 'precision']$$,
    '\x000000000000f03f000000000000f03f000000000000f03f0000000000000000'::bytea, 4);
SELECT madlib_dl._compile_params_with_metrics($$loss='mse', optimizer='SGD()'$$, $$['mae', 'auc']$$);
SELECT madlib_dl._metrics_names($$loss='mse', optimizer='SGD()', metrics=['top_3_accuracy', 'Recall']$$);

DROP SCHEMA metrics_test CASCADE;
