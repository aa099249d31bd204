--
-- 50_fit_multiple: madlib_keras_fit_multiple_model / fit_multiple on iris
-- (model hopper parallelism).  Preprocess on 1, 3 and 4 virtual segments,
-- model selection tables with 2, 3 and 5 configurations (K < N, K = N,
-- K > N), two architectures of different sizes.  Checks every output
-- column, the recorded schedule, determinism with any number of parallel
-- workers, the one-segment equality with fit, divergence, warm start,
-- evaluate/predict with mst_key, cancel and the bad inputs.  Losses depend
-- on the CPU's float kernels, so only relations between them are printed.
--
\set SHOW_CONTEXT never
CREATE SCHEMA fm_test;
SET search_path = fm_test, public;
\set ECHO none
\i test/data/iris.sql
\set ECHO all
CREATE TABLE iris_train AS SELECT * FROM iris_data WHERE id % 5 <> 0;
CREATE TABLE iris_test AS SELECT * FROM iris_data WHERE id % 5 = 0;
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'iris_p3', 'class_text',
    'attributes', NULL, 1.0, NULL, '3');
SELECT madlib_dl.validation_preprocessor_dl('iris_test', 'iris_v3', 'class_text',
    'attributes', 'iris_p3');
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'iris_p4', 'class_text',
    'attributes', NULL, 1.0, NULL, '4');
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'iris_p1', 'class_text',
    'attributes', NULL, 1.0, NULL, '1');
SELECT 'iris_p3' AS t, num_segments FROM iris_p3_summary
UNION ALL SELECT 'iris_p4', num_segments FROM iris_p4_summary
UNION ALL SELECT 'iris_p1', num_segments FROM iris_p1_summary;

-- iris MLP 4-10-10-3 (193 weights), a smaller 4-5-5-3 (73 weights), and
-- the big one with 5 inputs (for the shape error)
\set iris_tf2 '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "sparse": false, "ragged": false, "name": "dense_input"}}, {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "batch_input_shape": [null, 4], "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}, {"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}, {"class_name": "Dense", "config": {"name": "dense_2", "trainable": true, "dtype": "float32", "units": 3, "activation": "softmax", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
SELECT madlib_dl.load_keras_model('arch', :'iris_tf2', NULL, 'iris mlp 10-10');
SELECT madlib_dl.load_keras_model('arch', replace(:'iris_tf2', '"units": 10', '"units": 5')::json,
    NULL, 'iris mlp 5-5');
SELECT madlib_dl.load_keras_model('arch', replace(:'iris_tf2', '[null, 4]', '[null, 5]')::json,
    NULL, 'five inputs');
SELECT model_id, name, (madlib_dl._arch_info(model_arch)).n_params FROM arch ORDER BY model_id;

-- model selection tables: 2, 3 and 5 configurations
SELECT madlib_dl.load_model_selection_table('arch', 'mst2', ARRAY[1, 2],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$],
    ARRAY['batch_size=16, epochs=1']);
SELECT madlib_dl.load_model_selection_table('arch', 'mst3', ARRAY[1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1, momentum=0.9)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='RMSprop(lr=0.01)', metrics=['accuracy']$$],
    ARRAY['batch_size=16, epochs=1']);
SELECT madlib_dl.generate_model_configs('arch', 'mst5', ARRAY[1, 2],
    $${'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['Adam'], 'lr': [0.01, 0.05]}, {'optimizer': ['SGD'], 'lr': [0.1]}], 'metrics': ['accuracy']}$$,
    $${'batch_size': [16], 'epochs': [3]}$$);
SELECT count(*) FROM mst5;
DELETE FROM mst5 WHERE mst_key = (SELECT max(mst_key) FROM mst5);
SELECT count(*) FROM mst5;

-- K > N: 5 models on 3 segments, validation table, metrics every 2 iterations
SET client_min_messages = warning;
SELECT madlib_dl.madlib_keras_fit_multiple_model('iris_p3', 'multi5', 'mst5', 3, FALSE,
    'iris_v3', 2, FALSE, 'five on three', 'K > N');
RESET client_min_messages;

-- <out>: one row per configuration, weights of the right size, the architecture
SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod)
  FROM pg_attribute a
 WHERE a.attrelid = 'multi5'::regclass AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY a.attnum;
SELECT (SELECT conname IS NOT NULL FROM pg_constraint WHERE conrelid = 'multi5'::regclass AND contype = 'p') AS has_pk;
SELECT o.mst_key, m.model_id, octet_length(o.model_weights) / 4 AS n_weights,
       o.model_arch::text = (SELECT model_arch::text FROM arch WHERE model_id = m.model_id) AS arch_copied
  FROM multi5 o JOIN mst5 m USING (mst_key) ORDER BY o.mst_key;

-- <out>_info: MADlib's columns, then metrics_iters and status
SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod)
  FROM pg_attribute a
 WHERE a.attrelid = 'multi5_info'::regclass AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY a.attnum;
SELECT i.mst_key, i.model_id = m.model_id AS model_id_ok,
       i.compile_params = m.compile_params AS compile_ok, i.fit_params = m.fit_params AS fit_ok,
       i.model_type, i.model_size = octet_length(o.model_weights) / 1024.0 AS model_size_is_kb,
       array_length(i.metrics_elapsed_time, 1) AS n_elapsed,
       i.metrics_elapsed_time[1] >= 0 AND i.metrics_elapsed_time[1] <= i.metrics_elapsed_time[2] AS elapsed_ordered,
       i.metrics_type, i.loss_type,
       i.training_metrics_final = i.training_metrics[2] AS tm_final,
       i.training_loss_final = i.training_loss[2] AS tl_final,
       i.validation_metrics_final = i.validation_metrics[2] AS vm_final,
       i.validation_loss_final = i.validation_loss[2] AS vl_final,
       array_length(i.training_metrics, 1) AS n_tm, array_length(i.training_loss, 1) AS n_tl,
       array_length(i.validation_metrics, 1) AS n_vm, array_length(i.validation_loss, 1) AS n_vl,
       i.training_metrics_final BETWEEN 0 AND 1 AS tm_range,
       i.validation_loss_final > 0 AS vl_positive,
       i.metrics_iters, i.status
  FROM multi5_info i JOIN mst5 m USING (mst_key) JOIN multi5 o USING (mst_key)
 ORDER BY i.mst_key;
-- the best configuration learned something
SELECT max(validation_metrics_final) > 0.8 AS best_validation_above_80 FROM multi5_info;

-- <out>_summary: MADlib's columns (num_classes = the class count), then
-- the recorded schedule and use_caching
SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod)
  FROM pg_attribute a
 WHERE a.attrelid = 'multi5_summary'::regclass AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY a.attnum;
\x on
SELECT source_table, validation_table, model, model_info, dependent_varname, independent_varname,
       model_arch_table, model_selection_table, object_table, num_iterations,
       metrics_compute_frequency, warm_start, name, description,
       start_training_time <= end_training_time AS times_ordered,
       madlib_version = madlib_dl.version() AS version_ok,
       num_classes, class_text_class_values, dependent_vartype, normalizing_const, metrics_iters,
       cardinality(schedule) AS schedule_length,
       (SELECT array_agg(k ORDER BY k) FROM unnest(schedule) k) = (SELECT array_agg(mst_key ORDER BY mst_key) FROM mst5) AS schedule_is_a_permutation,
       use_caching
  FROM multi5_summary;
\x off

-- Determinism: the same bytes and metrics with 1 worker and with none
SET client_min_messages = warning;
SET max_parallel_workers = 1;
SELECT madlib_dl.fit_multiple('iris_p3', 'multi5_w1', 'mst5', 3, FALSE, 'iris_v3', 2);
SET max_parallel_workers = 0;
SELECT madlib_dl.fit_multiple('iris_p3', 'multi5_w0', 'mst5', 3, FALSE, 'iris_v3', 2);
RESET max_parallel_workers;
RESET client_min_messages;
SELECT (SELECT array_agg(md5(model_weights) ORDER BY mst_key) FROM multi5_w1)
         = (SELECT array_agg(md5(model_weights) ORDER BY mst_key) FROM multi5) AS one_worker_same_weights,
       (SELECT array_agg(md5(model_weights) ORDER BY mst_key) FROM multi5_w0)
         = (SELECT array_agg(md5(model_weights) ORDER BY mst_key) FROM multi5) AS no_worker_same_weights,
       (SELECT array_agg(training_loss || validation_loss || training_metrics ORDER BY mst_key) FROM multi5_w0_info)
         = (SELECT array_agg(training_loss || validation_loss || training_metrics ORDER BY mst_key) FROM multi5_info) AS same_metrics,
       (SELECT schedule FROM multi5_w0_summary) = (SELECT schedule FROM multi5_summary) AS same_schedule,
       (SELECT count(DISTINCT md5(model_weights)) FROM multi5) AS distinct_models;
-- the C runner reports how many workers PostgreSQL launched
SET client_min_messages = warning;
SET max_parallel_workers = 0;
SELECT count(*) AS n_models, min(r.workers_launched) AS workers_launched
  FROM madlib_dl._fit_multiple_run(madlib_dl._make_train_job('iris_p3', 'attributes', 'class_text',
       ARRAY[:'iris_tf2', :'iris_tf2'],
       ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)'$$, $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)'$$],
       1, fit_params => ARRAY['batch_size=16', NULL], num_segments => 3)) r;
RESET max_parallel_workers;
RESET client_min_messages;

-- K < N and K = N on 3 segments; K < N and K > N on 4 segments
SET client_min_messages = warning;
SELECT madlib_dl.fit_multiple('iris_p3', 'multi2', 'mst2', 2, FALSE, 'iris_v3');
SELECT madlib_dl.fit_multiple('iris_p3', 'multi3', 'mst3', 2, FALSE, NULL, 1);
SELECT madlib_dl.fit_multiple('iris_p4', 'multi3_4', 'mst3', 2);
SELECT madlib_dl.fit_multiple('iris_p4', 'multi5_4', 'mst5', 2);
RESET client_min_messages;
SELECT t, n_rows, n_completed, schedule_length, schedule_nulls, metrics_iters, n_hist
  FROM (SELECT 'multi2' AS t, (SELECT count(*) FROM multi2) AS n_rows,
               (SELECT count(*) FROM multi2_info WHERE status = 'completed') AS n_completed,
               cardinality(schedule) AS schedule_length,
               cardinality(schedule) - cardinality(array_remove(schedule, NULL)) AS schedule_nulls,
               metrics_iters, (SELECT max(array_length(training_loss, 1)) FROM multi2_info) AS n_hist
          FROM multi2_summary
        UNION ALL
        SELECT 'multi3', (SELECT count(*) FROM multi3),
               (SELECT count(*) FROM multi3_info WHERE status = 'completed'),
               cardinality(schedule), cardinality(schedule) - cardinality(array_remove(schedule, NULL)),
               metrics_iters, (SELECT max(array_length(training_loss, 1)) FROM multi3_info)
          FROM multi3_summary
        UNION ALL
        SELECT 'multi3_4', (SELECT count(*) FROM multi3_4),
               (SELECT count(*) FROM multi3_4_info WHERE status = 'completed'),
               cardinality(schedule), cardinality(schedule) - cardinality(array_remove(schedule, NULL)),
               metrics_iters, (SELECT max(array_length(training_loss, 1)) FROM multi3_4_info)
          FROM multi3_4_summary
        UNION ALL
        SELECT 'multi5_4', (SELECT count(*) FROM multi5_4),
               (SELECT count(*) FROM multi5_4_info WHERE status = 'completed'),
               cardinality(schedule), cardinality(schedule) - cardinality(array_remove(schedule, NULL)),
               metrics_iters, (SELECT max(array_length(training_loss, 1)) FROM multi5_4_info)
          FROM multi5_4_summary) s
 ORDER BY t;
SELECT (SELECT validation_loss FROM multi3_info LIMIT 1) IS NULL AS no_validation_metrics,
       (SELECT validation_table FROM multi3_summary) IS NULL AS no_validation_table;
-- every model trained on every segment: the mean training loss fell
SELECT bool_and(training_loss[2] < training_loss[1]) AS all_losses_fell FROM multi3_info;

-- One segment, one configuration: byte-identical to fit with the same
-- seed and data order
CREATE TABLE mst1 (mst_key serial PRIMARY KEY, model_id integer, compile_params text, fit_params text);
CREATE TABLE mst1_summary (model_arch_table varchar, object_table varchar);
INSERT INTO mst1_summary VALUES ('arch', NULL);
INSERT INTO mst1 (model_id, compile_params, fit_params) VALUES
    (1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
     'batch_size=16, epochs=2, seed=11');
SET client_min_messages = warning;
SELECT madlib_dl.fit_multiple('iris_p1', 'multi1', 'mst1', 3);
SELECT madlib_dl.fit('iris_p1', 'fit1', 'arch', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
    'batch_size=16, epochs=2, seed=11', 3);
RESET client_min_messages;
SELECT (SELECT md5(model_weights) FROM multi1) = (SELECT md5(model_weights) FROM fit1) AS same_weights_as_fit,
       (SELECT training_loss FROM multi1_info) = (SELECT training_loss FROM fit1_summary) AS same_loss_as_fit;

-- Divergence: a linear output with a huge SGD step; the model stops with a
-- NOTICE, keeps its last finite weights, the other one goes on
SELECT madlib_dl.load_keras_model('arch', replace(:'iris_tf2', '"softmax"', '"linear"')::json,
    NULL, 'linear output');
CREATE TABLE mst_div (mst_key serial PRIMARY KEY, model_id integer, compile_params varchar, fit_params varchar);
CREATE TABLE mst_div_summary (model_arch_table varchar, object_table varchar);
INSERT INTO mst_div_summary VALUES ('fm_test.arch', NULL);
INSERT INTO mst_div (model_id, compile_params, fit_params) VALUES
    (4, $$loss='mean_squared_error', optimizer='SGD(lr=100.0)', metrics=['accuracy']$$, 'batch_size=4'),
    (1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, 'batch_size=16');
SET client_min_messages = warning;
SELECT madlib_dl.fit_multiple('iris_p3', 'multi_div', 'mst_div', 2, FALSE, 'iris_v3', 1);
RESET client_min_messages;
SELECT mst_key, status, training_loss = '{}' AS history_stopped, metrics_iters,
       training_loss_final IS NULL AS no_final
  FROM multi_div_info ORDER BY mst_key;
-- its weights are finite: evaluate gives a finite loss
SELECT madlib_dl.evaluate('multi_div', 'iris_v3', 'div_eval', FALSE, 1);
SELECT loss <> 'NaN'::float8 AND loss < 'Infinity'::float8 AS finite_loss FROM div_eval;

-- Warm start: drop key 2, add a new key; key 1 and 3 continue
SET client_min_messages = warning;
SELECT madlib_dl.fit_multiple('iris_p3', 'multi_warm', 'mst3', 2, FALSE, 'iris_v3');
RESET client_min_messages;
CREATE TEMP TABLE warm_before AS
SELECT i.mst_key, i.training_loss_final AS loss, o.model_weights AS w
  FROM multi_warm_info i JOIN multi_warm o USING (mst_key);
DELETE FROM mst3 WHERE mst_key = (SELECT min(mst_key) + 1 FROM mst3);
SELECT madlib_dl.load_model_selection_table('arch', 'mst3', ARRAY[2],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$],
    ARRAY['batch_size=8, epochs=1']);
SET client_min_messages = warning;
SELECT madlib_dl.fit_multiple('iris_p3', 'multi_warm', 'mst3', 2, FALSE, 'iris_v3',
    warm_start => TRUE);
RESET client_min_messages;
SELECT o.mst_key - (SELECT min(mst_key) FROM mst3) AS key_offset, b.mst_key IS NOT NULL AS continued,
       CASE WHEN b.mst_key IS NOT NULL THEN o.model_weights <> b.w END AS weights_changed,
       CASE WHEN b.mst_key IS NOT NULL THEN i.training_loss_final < b.loss END AS loss_lower,
       i.metrics_iters, i.status
  FROM multi_warm o JOIN multi_warm_info i USING (mst_key)
  LEFT JOIN warm_before b USING (mst_key)
 ORDER BY o.mst_key;
SELECT warm_start, metrics_iters, cardinality(schedule) AS schedule_length FROM multi_warm_summary;
SELECT (SELECT array_agg(mst_key ORDER BY mst_key) FROM multi_warm)
         = (SELECT array_agg(mst_key ORDER BY mst_key) FROM mst3) AS keys_follow_selection_table;

-- evaluate and predict with mst_key on the output
SELECT madlib_dl.evaluate('multi5', 'iris_v3', 'multi5_eval', FALSE, (SELECT min(mst_key) FROM mst5));
SELECT abs(e.loss - i.validation_loss_final) < 1e-6 AS loss_matches_info,
       abs(e.metric - i.validation_metrics_final) < 1e-9 AS metric_matches_info,
       e.metrics_type, e.loss_type
  FROM multi5_eval e, multi5_info i WHERE i.mst_key = (SELECT min(mst_key) FROM mst5);
SELECT madlib_dl.predict('multi5', 'iris_test', 'id', 'attributes', 'multi5_pred', 'response',
    FALSE, (SELECT min(mst_key) FROM mst5));
SELECT count(*) AS n_predictions, count(DISTINCT class_value) <= 3 AS classes_known FROM multi5_pred;
\set VERBOSITY terse
SELECT madlib_dl.evaluate('multi5', 'iris_v3', 'multi5_eval_bad');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.evaluate('multi5', 'iris_v3', 'multi5_eval_bad', FALSE, 999);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default

-- Schema-qualified names and a hand-made selection table with text columns
SET client_min_messages = warning;
SELECT madlib_dl.fit_multiple('fm_test.iris_p3', 'fm_test.multi_q', 'fm_test.mst1', 1);
RESET client_min_messages;
SELECT model, model_info, model_selection_table, model_arch_table FROM fm_test.multi_q_summary;

-- Cancel: a statement timeout during training leaves no table and no worker.
UPDATE mst1 SET fit_params = 'batch_size=1, epochs=100000';
SET client_min_messages = warning;
SET statement_timeout = '1s';
\set VERBOSITY terse
SELECT madlib_dl.fit_multiple('iris_p3', 'multi_cancelled', 'mst1', 5);
\set VERBOSITY default
RESET statement_timeout;
RESET client_min_messages;
SELECT to_regclass('multi_cancelled') IS NULL AS no_model_table,
       to_regclass('multi_cancelled_info') IS NULL AS no_info_table,
       to_regclass('multi_cancelled_summary') IS NULL AS no_summary_table,
       (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'parallel worker') AS workers_left;

-- Bad inputs: each is refused before any table is written.
\set VERBOSITY terse
-- missing source table, missing selection table
SELECT madlib_dl.fit_multiple('no_such_table', 'bad_out', 'mst5', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'no_such_mst', 1);
\echo :LAST_ERROR_SQLSTATE
-- output table (or its info table) already exists
SELECT madlib_dl.fit_multiple('iris_p3', 'multi5', 'mst5', 1);
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE bad_out_info (x int);
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'mst5', 1);
\echo :LAST_ERROR_SQLSTATE
DROP TABLE bad_out_info;
-- num_iterations < 1 or NULL; metrics_compute_frequency out of range; GPUs
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'mst5', 0);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'mst5', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'mst5', 3, FALSE, NULL, 4);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'mst5', 3, FALSE, NULL, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'mst5', 1, TRUE);
\echo :LAST_ERROR_SQLSTATE
-- warm start replaces only the outputs of an earlier fit_multiple, as their
-- summary names them: a copy of multi_warm next to a copy of its summary
-- (which names multi_warm) is refused and left as it was
CREATE TABLE multi_warm_copy AS SELECT * FROM multi_warm;
CREATE TABLE multi_warm_copy_summary AS SELECT * FROM multi_warm_summary;
SELECT madlib_dl.fit_multiple('iris_p3', 'multi_warm_copy', 'mst3', 1, warm_start => TRUE);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS rows_kept FROM multi_warm_copy;
DROP TABLE multi_warm_copy, multi_warm_copy_summary;
-- warm start without an output table; missing validation table
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'mst5', 1, warm_start => TRUE);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'mst5', 1, FALSE, 'no_such_validation');
\echo :LAST_ERROR_SQLSTATE
-- bad selection tables: no summary, a missing column, empty, repeated
-- keys, a bad compile_params row, a bad fit_params row, an unknown
-- model_id, an architecture that does not fit the data, a custom object table
CREATE TABLE mst_bad (mst_key integer, model_id integer, compile_params text, fit_params text);
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'mst_bad', 1);
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE mst_bad_summary (model_arch_table varchar, object_table varchar);
INSERT INTO mst_bad_summary VALUES ('arch', NULL);
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'mst_bad', 1);
\echo :LAST_ERROR_SQLSTATE
INSERT INTO mst_bad VALUES (1, 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)'$$, NULL),
                           (1, 1, $$loss='categorical_crossentropy', optimizer='SGD(lr=0.01)'$$, NULL);
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'mst_bad', 1);
\echo :LAST_ERROR_SQLSTATE
UPDATE mst_bad SET mst_key = 2, compile_params = $$loss='categorical_crossentropy', optimizer='Adamm()'$$
 WHERE compile_params LIKE '%SGD%';
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'mst_bad', 1);
\echo :LAST_ERROR_SQLSTATE
UPDATE mst_bad SET compile_params = $$loss='categorical_crossentropy', optimizer='SGD(lr=0.01)'$$,
                   fit_params = 'validation_split=0.2' WHERE mst_key = 2;
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'mst_bad', 1);
\echo :LAST_ERROR_SQLSTATE
UPDATE mst_bad SET fit_params = NULL, model_id = 99 WHERE mst_key = 2;
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'mst_bad', 1);
\echo :LAST_ERROR_SQLSTATE
UPDATE mst_bad SET model_id = 3 WHERE mst_key = 2;
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'mst_bad', 1);
\echo :LAST_ERROR_SQLSTATE
UPDATE mst_bad SET model_id = 1 WHERE mst_key = 2;
UPDATE mst_bad_summary SET object_table = 'custom_functions';
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'mst_bad', 1);
\echo :LAST_ERROR_SQLSTATE
UPDATE mst_bad_summary SET object_table = NULL, model_arch_table = 'no_such_arch';
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'mst_bad', 1);
\echo :LAST_ERROR_SQLSTATE
DELETE FROM mst_bad;
UPDATE mst_bad_summary SET model_arch_table = 'arch';
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'mst_bad', 1);
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE mst_bad DROP COLUMN fit_params;
SELECT madlib_dl.fit_multiple('iris_p3', 'bad_out', 'mst_bad', 1);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
SELECT to_regclass('bad_out') IS NULL AS no_model_table,
       to_regclass('bad_out_info') IS NULL AS no_info_table,
       to_regclass('bad_out_summary') IS NULL AS no_summary_table;

-- help
SELECT madlib_dl.fit_multiple() LIKE 'madlib_keras_fit_multiple_model: train every%' AS help_summary,
       position('use_caching' IN madlib_dl.madlib_keras_fit_multiple_model('usage')) > 0 AS help_usage,
       madlib_dl.fit_multiple('usage') = madlib_dl.madlib_keras_fit_multiple_model('usage') AS same_help;

SET client_min_messages = warning;
DROP SCHEMA fm_test CASCADE;
RESET client_min_messages;
RESET search_path;
