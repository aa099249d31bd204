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
-- =====================================================================
-- training records every metric per metrics point (summary and info
-- tables' metrics column); the final ones equal evaluate's of the saved
-- model on the same table, for training and validation data
-- =====================================================================
SET client_min_messages = warning;
SELECT madlib_dl.training_preprocessor_dl('metrics_raw', 'metrics_packed4', 'y', 'x', 4, 1.0);
\set cp7 '$$loss=''categorical_crossentropy'', optimizer=''SGD(lr=0.5)'', metrics=[''accuracy'', ''top_k_categorical_accuracy'', ''top_2_accuracy'', ''auc'', ''precision'', ''recall'', ''mae'', ''mse'']$$'
SELECT madlib_dl.madlib_keras_fit('metrics_packed4', 'metrics_fit7', 'metrics_arch', 1, :cp7,
    'batch_size=4, epochs=1, seed=7', 3, NULL, 'metrics_packed', 1);
SELECT madlib_dl.madlib_keras_evaluate('metrics_fit7', 'metrics_packed4', 'metrics_fit7_eval');
SELECT madlib_dl.madlib_keras_evaluate('metrics_fit7', 'metrics_packed', 'metrics_fit7_veval');
RESET client_min_messages;
-- one series per metric and part, 3 points each; MADlib's columns hold the first metric
SELECT p.key AS part, count(*) AS metrics, min(jsonb_array_length(s.value)) AS points,
       bool_and(jsonb_array_length(s.value) = 3) AS all_three
  FROM metrics_fit7_summary, jsonb_each(metrics) p, jsonb_each(p.value) s
 GROUP BY p.key ORDER BY p.key;
SELECT metrics_type, training_metrics = ARRAY(SELECT jsonb_array_elements_text(metrics->'training'->'accuracy')::float8)
           AS madlib_training_is_first,
       validation_metrics = ARRAY(SELECT jsonb_array_elements_text(metrics->'validation'->'accuracy')::float8)
           AS madlib_validation_is_first
  FROM metrics_fit7_summary;
-- the final values against evaluate's: within 1e-6, auc exactly
SELECT x.part, x.name, CASE WHEN x.name = 'auc' THEN x.v = e.v::float8 ELSE abs(x.v - e.v::float8) < 1e-6 END AS same
  FROM (SELECT p.key AS part, s.key AS name, (s.value->>-1)::float8 AS v
          FROM metrics_fit7_summary, jsonb_each(metrics) p, jsonb_each(p.value) s) x
  JOIN (SELECT 'training' AS part, k, v FROM metrics_fit7_eval, jsonb_each_text(metrics) AS j(k, v)
        UNION ALL
        SELECT 'validation', k, v FROM metrics_fit7_veval, jsonb_each_text(metrics) AS j(k, v)) e
    ON e.part = x.part AND e.k = x.name
 ORDER BY x.part, x.name;
-- deterministic: the same metrics whatever the parallel workers launched
SET client_min_messages = warning;
SET max_parallel_workers = 0;
SELECT madlib_dl.madlib_keras_fit('metrics_packed4', 'metrics_fit7_w0', 'metrics_arch', 1, :cp7,
    'batch_size=4, epochs=1, seed=7', 3, NULL, 'metrics_packed', 1);
RESET max_parallel_workers;
RESET client_min_messages;
SELECT a.metrics = b.metrics AS same_metrics, a.training_metrics = b.training_metrics AS same_madlib
  FROM metrics_fit7_summary a, metrics_fit7_w0_summary b;
-- and on 3 segments, with 0, 1 and 2 workers launched: the same bytes
CREATE FUNCTION metrics_run(cp text) RETURNS TABLE (m jsonb, launched integer)
LANGUAGE sql AS $f$
    SELECT r.metrics, r.workers_launched
      FROM madlib_dl._fit_run(madlib_dl._make_train_job('metrics_test.metrics_packed4'::regclass, 'x', 'y',
               ARRAY[(SELECT model_arch::text FROM metrics_test.metrics_arch WHERE model_id = 1)], ARRAY[cp], 3,
               fit_params => ARRAY['batch_size=4, epochs=1, seed=7'],
               validation => 'metrics_test.metrics_packed'::regclass, val_x_col => 'x', val_y_col => 'y',
               metrics_compute_frequency => 1, num_segments => 3)) r
$f$;
SET client_min_messages = warning;
SET max_parallel_workers = 2;
CREATE TEMP TABLE metrics_runs AS SELECT 2 AS w, * FROM metrics_run(:cp7);
SET max_parallel_workers = 1;
INSERT INTO metrics_runs SELECT 1, * FROM metrics_run(:cp7);
SET max_parallel_workers = 0;
INSERT INTO metrics_runs SELECT 0, * FROM metrics_run(:cp7);
RESET max_parallel_workers;
RESET client_min_messages;
SELECT r.w AS max_workers, r.launched <= r.w AS launched_ok, r.m = b.m AS same_metrics,
       jsonb_array_length(r.m->'validation'->'auc') AS points
  FROM metrics_runs r, metrics_runs b WHERE b.w = 2 ORDER BY r.w;
-- early stopping may monitor any metric of the list
SET client_min_messages = warning;
SELECT madlib_dl.madlib_keras_fit('metrics_packed4', 'metrics_fit_es', 'metrics_arch', 1, :cp7,
    'batch_size=4, epochs=1, seed=7', 6, NULL, 'metrics_packed', 1, early_stopping => 'monitor=validation_recall, patience=0');
RESET client_min_messages;
SELECT early_stopping, best_iteration IS NOT NULL AS has_best,
       jsonb_array_length(metrics->'validation'->'recall') = cardinality(metrics_iters) AS one_per_point
  FROM metrics_fit_es_summary;
SELECT madlib_dl.madlib_keras_fit('metrics_packed4', 'metrics_bad', 'metrics_arch', 1,
    $$loss='categorical_crossentropy', optimizer='SGD(lr=0.01)', metrics=['accuracy', 'auc']$$,
    'batch_size=8, epochs=1', 1, NULL, 'metrics_packed', 1, early_stopping => 'monitor=validation_mse');
-- one metric: the metrics column holds it, MADlib's columns as before
SET client_min_messages = warning;
SELECT madlib_dl.madlib_keras_fit('metrics_packed4', 'metrics_fit1', 'metrics_arch', 1,
    $$loss='categorical_crossentropy', optimizer='SGD(lr=0.5)', metrics=['accuracy']$$,
    'batch_size=4, epochs=1, seed=7', 3, NULL, NULL, 1);
RESET client_min_messages;
SELECT a.training_metrics = b.training_metrics AS same_accuracy, a.training_loss = b.training_loss AS same_loss,
       a.metrics ? 'validation' AS has_validation,
       a.training_metrics = ARRAY(SELECT jsonb_array_elements_text(a.metrics->'training'->'accuracy')::float8)
           AS metrics_column_same
  FROM metrics_fit1_summary a, metrics_fit7_summary b;
-- the versions record every metric's final value
SELECT metrics ? 'validation_auc_final' AS has_auc, metrics ? 'training_mse_final' AS has_mse,
       (metrics->>'validation_metrics_final')::float8 = (metrics->>'validation_accuracy_final')::float8 AS first_is_madlib
  FROM madlib_dl.model_versions WHERE model_table = 'metrics_test.metrics_fit7';
-- fit_multiple: every model's metrics, the final ones as evaluate gives them
SET client_min_messages = warning;
SELECT madlib_dl.load_model_selection_table('metrics_arch', 'metrics_mst', ARRAY[1],
    ARRAY[:cp7, $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['auc', 'mse']$$],
    ARRAY['batch_size=4, epochs=1, seed=7']);
SELECT madlib_dl.madlib_keras_fit_multiple_model('metrics_packed4', 'metrics_fm', 'metrics_mst', 3, FALSE,
    'metrics_packed', 1);
SELECT madlib_dl.madlib_keras_evaluate('metrics_fm', 'metrics_packed', 'metrics_fm_veval', FALSE, 2);
RESET client_min_messages;
SELECT mst_key, metrics_type, (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(metrics->'validation') k) AS names,
       validation_metrics = ARRAY(SELECT jsonb_array_elements_text(
           metrics->'validation'->(CASE WHEN mst_key = 1 THEN 'accuracy' ELSE 'auc' END))::float8) AS madlib_is_first
  FROM metrics_fm_info ORDER BY mst_key;
SELECT (i.metrics->'validation'->'auc'->>-1)::float8 = (e.metrics->>'auc')::float8 AS auc_same,
       abs((i.metrics->'validation'->'mse'->>-1)::float8 - (e.metrics->>'mse')::float8) < 1e-6 AS mse_same
  FROM metrics_fm_info i, metrics_fm_veval e WHERE i.mst_key = 2;
-- deterministic whatever the workers launched
SET client_min_messages = warning;
SET max_parallel_workers = 0;
SELECT madlib_dl.madlib_keras_fit_multiple_model('metrics_packed4', 'metrics_fm_w0', 'metrics_mst', 3, FALSE,
    'metrics_packed', 1);
RESET max_parallel_workers;
RESET client_min_messages;
SELECT a.mst_key, a.metrics = b.metrics AS same_metrics
  FROM metrics_fm_info a JOIN metrics_fm_w0_info b USING (mst_key) ORDER BY a.mst_key;
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
