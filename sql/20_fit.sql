--
-- 20_fit: madlib_keras_fit / fit on iris, MADlib's flow: preprocess on two
-- virtual segments -> load_keras_model -> fit with a validation table.
-- Checks every summary column, determinism with any number of parallel
-- workers, warm start, transfer learning, cancel, and the bad inputs.
-- Losses depend on the CPU's float kernels, so only relations between
-- them are printed, never the values.
--
\set SHOW_CONTEXT never
CREATE SCHEMA fit_test;
SET search_path = fit_test, public;
\set ECHO none
\i test/data/iris.sql
\set ECHO all
CREATE TABLE iris_train AS SELECT * FROM iris_data WHERE id % 5 <> 0;
CREATE TABLE iris_test AS SELECT * FROM iris_data WHERE id % 5 = 0;
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'iris_train_packed', 'class_text',
    'attributes', NULL, 1.0, NULL, '2');
SELECT madlib_dl.validation_preprocessor_dl('iris_test', 'iris_test_packed', 'class_text',
    'attributes', 'iris_train_packed');
SELECT num_segments FROM iris_train_packed_summary;
SELECT buffer_id, __dist_key__, attributes_shape FROM iris_train_packed ORDER BY buffer_id;

-- iris MLP 4-10-10-3 as tf.keras 2 writes it, and the same with 5 inputs
\set iris_tf2 '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "sparse": false, "ragged": false, "name": "dense_input"}}, {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "batch_input_shape": [null, 4], "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}, {"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}, {"class_name": "Dense", "config": {"name": "dense_2", "trainable": true, "dtype": "float32", "units": 3, "activation": "softmax", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
\set iris_5in '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 5], "dtype": "float32", "sparse": false, "ragged": false, "name": "dense_input"}}, {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "batch_input_shape": [null, 5], "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}, {"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}, {"class_name": "Dense", "config": {"name": "dense_2", "trainable": true, "dtype": "float32", "units": 3, "activation": "softmax", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
SELECT madlib_dl.load_keras_model('model_arch_library', :'iris_tf2', NULL, 'iris mlp', 'tf.keras 2');
SELECT madlib_dl.load_keras_model('model_arch_library', :'iris_5in', NULL, 'five inputs');

-- The progress NOTICEs carry timings and machine-dependent losses.
SET client_min_messages = warning;
SELECT madlib_dl.madlib_keras_fit('iris_train_packed', 'iris_model', 'model_arch_library', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
    'batch_size=16, epochs=2', 10, FALSE, 'iris_test_packed', 3, FALSE,
    'iris fit', 'ten iterations');
RESET client_min_messages;

-- the model table: one row, 193 float32 weights, the architecture
SELECT count(*) AS n_rows, min(octet_length(model_weights)) AS weight_bytes,
       min(model_arch::text) = :'iris_tf2' AS arch_copied
  FROM iris_model;

-- the summary: MADlib's columns, in MADlib's order (plus seed, averaging_period and lr_scaling)
SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod)
  FROM pg_attribute a
 WHERE a.attrelid = 'iris_model_summary'::regclass AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY a.attnum;
\x on
SELECT source_table, model, dependent_varname, independent_varname, model_arch_table, model_id,
       compile_params, fit_params, num_iterations, validation_table, object_table,
       metrics_compute_frequency, name, description, model_type,
       model_size = 4 * 193 / 1024.0 AS model_size_is_kb,
       start_training_time <= end_training_time AS times_ordered,
       array_length(metrics_elapsed_time, 1) AS n_elapsed,
       metrics_elapsed_time[1] >= 0
         AND metrics_elapsed_time[1] <= metrics_elapsed_time[2]
         AND metrics_elapsed_time[2] <= metrics_elapsed_time[3]
         AND metrics_elapsed_time[3] <= metrics_elapsed_time[4] AS elapsed_increasing,
       madlib_version = madlib_dl.version() AS version_ok,
       num_classes, dependent_vartype, normalizing_const, metrics_type, loss_type,
       training_metrics_final > 0.9 AS training_accuracy_above_90,
       training_metrics_final = training_metrics[4] AS metrics_final_is_last,
       training_loss_final = training_loss[4] AS loss_final_is_last,
       training_loss[4] < training_loss[1] AS loss_went_down,
       array_length(training_metrics, 1) AS n_training_metrics,
       array_length(training_loss, 1) AS n_training_loss,
       validation_metrics_final > 0.8 AS validation_accuracy_above_80,
       validation_metrics_final = validation_metrics[4] AS val_metrics_final_is_last,
       validation_loss_final = validation_loss[4] AS val_loss_final_is_last,
       array_length(validation_metrics, 1) AS n_validation_metrics,
       array_length(validation_loss, 1) AS n_validation_loss,
       metrics_iters, class_text_class_values, seed
  FROM iris_model_summary;
\x off

-- Determinism: the same seed gives the same bytes, with 2 workers, 1
-- worker or none (the leader then runs every segment itself).
SET client_min_messages = warning;
SELECT madlib_dl.fit('iris_train_packed', 'iris_again', 'model_arch_library', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, 'batch_size=16, epochs=2', 10, FALSE, 'iris_test_packed', 3);
SET max_parallel_workers = 1;
SELECT madlib_dl.fit('iris_train_packed', 'iris_one_worker', 'model_arch_library', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, 'batch_size=16, epochs=2', 10, FALSE, 'iris_test_packed', 3);
SET max_parallel_workers = 0;
SELECT madlib_dl.fit('iris_train_packed', 'iris_no_worker', 'model_arch_library', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, 'batch_size=16, epochs=2', 10, FALSE, 'iris_test_packed', 3);
RESET max_parallel_workers;
SELECT madlib_dl.fit('iris_train_packed', 'iris_seed7', 'model_arch_library', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, 'batch_size=16, epochs=2, seed=7', 10, FALSE, 'iris_test_packed', 3);
RESET client_min_messages;
SELECT (SELECT md5(model_weights) FROM iris_again) = (SELECT md5(model_weights) FROM iris_model) AS same_seed_same_weights,
       (SELECT md5(model_weights) FROM iris_one_worker) = (SELECT md5(model_weights) FROM iris_model) AS one_worker_same_weights,
       (SELECT md5(model_weights) FROM iris_no_worker) = (SELECT md5(model_weights) FROM iris_model) AS no_worker_same_weights,
       (SELECT md5(model_weights) FROM iris_seed7) <> (SELECT md5(model_weights) FROM iris_model) AS other_seed_other_weights,
       (SELECT training_loss || validation_loss FROM iris_no_worker_summary)
         = (SELECT training_loss || validation_loss FROM iris_model_summary) AS same_metrics,
       (SELECT seed FROM iris_seed7_summary) AS recorded_seed;
-- the C runner reports how many workers PostgreSQL launched
SET client_min_messages = warning;
SELECT r.workers_launched, md5(r.model_weights) = (SELECT md5(model_weights) FROM iris_model) AS same_weights
  FROM madlib_dl._fit_run(madlib_dl._make_train_job('iris_train_packed', 'attributes', 'class_text',
           ARRAY[:'iris_tf2'], ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$],
           10, fit_params => ARRAY['batch_size=16, epochs=2'], validation => 'iris_test_packed',
           val_x_col => 'attributes', val_y_col => 'class_text', metrics_compute_frequency => 3,
           num_segments => 2)) r;
SET max_parallel_workers = 0;
SELECT r.workers_launched, md5(r.model_weights) = (SELECT md5(model_weights) FROM iris_model) AS same_weights
  FROM madlib_dl._fit_run(madlib_dl._make_train_job('iris_train_packed', 'attributes', 'class_text',
           ARRAY[:'iris_tf2'], ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$],
           10, fit_params => ARRAY['batch_size=16, epochs=2'], validation => 'iris_test_packed',
           val_x_col => 'attributes', val_y_col => 'class_text', metrics_compute_frequency => 3,
           num_segments => 2)) r;
RESET max_parallel_workers;
RESET client_min_messages;

-- Warm start continues from the model table; the metric history restarts.
SET client_min_messages = warning;
SELECT madlib_dl.fit('iris_train_packed', 'iris_warm', 'model_arch_library', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, 'batch_size=16, epochs=2', 3);
CREATE TEMP TABLE warm_before AS
SELECT s.training_loss_final AS loss, m.model_weights AS w FROM iris_warm_summary s, iris_warm m;
SELECT madlib_dl.fit('iris_train_packed', 'iris_warm', 'model_arch_library', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, 'batch_size=16, epochs=2', 3, warm_start => TRUE);
RESET client_min_messages;
SELECT s.training_loss_final <= b.loss AS loss_not_higher,
       s.metrics_iters, s.validation_loss IS NULL AS no_validation,
       m.model_weights <> b.w AS weights_changed
  FROM iris_warm_summary s, iris_warm m, warm_before b;

-- Transfer learning: weights in the architecture row are the start.
SELECT madlib_dl.load_keras_model('model_arch_library', :'iris_tf2',
    (SELECT model_weights FROM iris_model), 'iris mlp, trained');
SET client_min_messages = warning;
SELECT madlib_dl.fit('iris_train_packed', 'iris_transfer', 'model_arch_library', 3,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, 'batch_size=16, epochs=2', 1);
SELECT madlib_dl.fit('iris_train_packed', 'iris_scratch', 'model_arch_library', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, 'batch_size=16, epochs=2', 1);
RESET client_min_messages;
SELECT t.training_loss_final < s.training_loss_final AS transfer_starts_ahead,
       t.training_metrics_final > 0.9 AS transfer_accuracy_above_90
  FROM iris_transfer_summary t, iris_scratch_summary s;

-- Schema-qualified names
SET client_min_messages = warning;
SELECT madlib_dl.fit('fit_test.iris_train_packed', 'fit_test.iris_qualified', 'fit_test.model_arch_library', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, NULL, 1);
RESET client_min_messages;
SELECT model, source_table, fit_params, metrics_iters, array_length(training_metrics, 1) AS n_metrics
  FROM fit_test.iris_qualified_summary;

-- Cancel: a statement timeout during training leaves no table and no worker.
SET client_min_messages = warning;
SET statement_timeout = '1s';
\set VERBOSITY terse
SELECT madlib_dl.fit('iris_train_packed', 'iris_cancelled', 'model_arch_library', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, 'batch_size=4, epochs=100000', 5);
\set VERBOSITY default
RESET statement_timeout;
RESET client_min_messages;
SELECT to_regclass('iris_cancelled') IS NULL AS no_model_table,
       to_regclass('iris_cancelled_summary') IS NULL AS no_summary_table,
       (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'parallel worker') AS workers_left;

-- Bad inputs: each is refused before any table is written.
\set VERBOSITY terse
-- missing source table
SELECT madlib_dl.fit('no_such_table', 'bad_model', 'model_arch_library', 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, NULL, 1);
\echo :LAST_ERROR_SQLSTATE
-- output table already exists
SELECT madlib_dl.fit('iris_train_packed', 'iris_model', 'model_arch_library', 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, NULL, 1);
\echo :LAST_ERROR_SQLSTATE
-- compile_params without an optimizer, with an unknown one, and NULL
SELECT madlib_dl.fit('iris_train_packed', 'bad_model', 'model_arch_library', 1,
    $$loss='categorical_crossentropy'$$, NULL, 1);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.fit('iris_train_packed', 'bad_model', 'model_arch_library', 1,
    $$loss='categorical_crossentropy', optimizer='Adamm()'$$, NULL, 1);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.fit('iris_train_packed', 'bad_model', 'model_arch_library', 1, NULL, NULL, 1);
\echo :LAST_ERROR_SQLSTATE
-- fit_params with a rejected key, and with epochs=0
SELECT madlib_dl.fit('iris_train_packed', 'bad_model', 'model_arch_library', 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
    'batch_size=16, validation_split=0.2', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.fit('iris_train_packed', 'bad_model', 'model_arch_library', 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, 'epochs=0', 1);
\echo :LAST_ERROR_SQLSTATE
-- an architecture with 5 inputs for data with 4
SELECT madlib_dl.fit('iris_train_packed', 'bad_model', 'model_arch_library', 2, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, NULL, 1);
\echo :LAST_ERROR_SQLSTATE
-- no such model_id
SELECT madlib_dl.fit('iris_train_packed', 'bad_model', 'model_arch_library', 99, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, NULL, 1);
\echo :LAST_ERROR_SQLSTATE
-- num_iterations < 1
SELECT madlib_dl.fit('iris_train_packed', 'bad_model', 'model_arch_library', 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, NULL, 0);
\echo :LAST_ERROR_SQLSTATE
-- metrics_compute_frequency outside 1..num_iterations
SELECT madlib_dl.fit('iris_train_packed', 'bad_model', 'model_arch_library', 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, NULL, 10,
    FALSE, NULL, 11);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.fit('iris_train_packed', 'bad_model', 'model_arch_library', 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, NULL, 10,
    FALSE, NULL, 0);
\echo :LAST_ERROR_SQLSTATE
-- no GPU backend; an object_table that does not exist
SELECT madlib_dl.fit('iris_train_packed', 'bad_model', 'model_arch_library', 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, NULL, 1, TRUE);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.fit('iris_train_packed', 'bad_model', 'model_arch_library', 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, NULL, 1,
    object_table => 'custom_functions');
\echo :LAST_ERROR_SQLSTATE
-- missing validation table; warm start without a model table
SELECT madlib_dl.fit('iris_train_packed', 'bad_model', 'model_arch_library', 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, NULL, 1,
    FALSE, 'no_such_validation');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.fit('iris_train_packed', 'bad_model', 'model_arch_library', 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, NULL, 1,
    warm_start => TRUE);
\echo :LAST_ERROR_SQLSTATE
-- warm start replaces only the outputs of an earlier fit, as their
-- summary names them: not an architecture table that happens to have
-- model_weights and model_arch columns and one row, and not a copy of a
-- model table whose summary names another table; both stay as they were
SELECT madlib_dl.load_keras_model('warm_arch', :'iris_tf2'::json, (SELECT model_weights FROM iris_warm));
SELECT madlib_dl.fit('iris_train_packed', 'warm_arch', 'warm_arch', 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, NULL, 1,
    warm_start => TRUE);
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE iris_warm_copy AS SELECT * FROM iris_warm;
CREATE TABLE iris_warm_copy_summary AS SELECT * FROM iris_warm_summary;
SELECT madlib_dl.fit('iris_train_packed', 'iris_warm_copy', 'model_arch_library', 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, NULL, 1,
    warm_start => TRUE);
\echo :LAST_ERROR_SQLSTATE
SELECT (SELECT count(*) FROM warm_arch) AS arch_rows,
       (SELECT array_agg(attname ORDER BY attnum) FROM pg_attribute
         WHERE attrelid = 'warm_arch'::regclass AND attnum > 0 AND NOT attisdropped) AS arch_columns,
       (SELECT model_weights FROM iris_warm_copy) = (SELECT model_weights FROM iris_warm) AS copy_unchanged;
DROP TABLE warm_arch, iris_warm_copy, iris_warm_copy_summary;
-- The class values are copied from the packed table's summary into the
-- model summary: when their element type there is a domain (another
-- role's code in its CHECK), they are copied as text[], so that the
-- model summary neither depends on that type nor runs its check.
CREATE FUNCTION fit_spy(v text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('fit.spy', true) = 'on' THEN
        RAISE WARNING 'domain check ran as %', current_user;
    END IF;
    RETURN true;
END $$;
CREATE DOMAIN fit_spy_text AS text CHECK (fit_spy(VALUE));
CREATE TABLE spy_packed AS SELECT * FROM iris_train_packed;
CREATE TABLE spy_packed_summary AS SELECT * FROM iris_train_packed_summary;
ALTER TABLE spy_packed_summary ALTER COLUMN class_text_class_values TYPE fit_spy_text[];
SET fit.spy = on;
SET client_min_messages = warning;
SELECT madlib_dl.fit('spy_packed', 'spy_model', 'model_arch_library', 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, NULL, 1);
RESET client_min_messages;
RESET fit.spy;
SELECT format_type(atttypid, atttypmod) AS class_values_type,
       (SELECT class_text_class_values FROM spy_model_summary) AS class_values
  FROM pg_attribute WHERE attrelid = 'spy_model_summary'::regclass AND attname = 'class_text_class_values';
DROP TABLE spy_packed, spy_packed_summary, spy_model, spy_model_summary;
DROP DOMAIN fit_spy_text;
DROP FUNCTION fit_spy(text);
-- warm start with another architecture (tanh instead of relu, same size)
SELECT madlib_dl.load_keras_model('model_arch_library',
    replace(:'iris_tf2', '"activation": "relu"', '"activation": "tanh"')::json, NULL, 'tanh');
SELECT madlib_dl.fit('iris_train_packed', 'iris_warm', 'model_arch_library', 4, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, NULL, 1,
    warm_start => TRUE);
\echo :LAST_ERROR_SQLSTATE
-- a damaged buffer on segment 1: the worker's ERROR reaches the client,
-- and the leader reports the same when it runs the segment itself
CREATE TABLE damaged_packed AS SELECT * FROM iris_train_packed;
CREATE TABLE damaged_packed_summary AS SELECT * FROM iris_train_packed_summary;
UPDATE damaged_packed SET attributes = substring(attributes FROM 1 FOR 8) WHERE buffer_id = 1;
SELECT madlib_dl.fit('damaged_packed', 'bad_model', 'model_arch_library', 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, NULL, 1);
\echo :LAST_ERROR_SQLSTATE
SET max_parallel_workers = 0;
SELECT madlib_dl.fit('damaged_packed', 'bad_model', 'model_arch_library', 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, NULL, 1);
\echo :LAST_ERROR_SQLSTATE
RESET max_parallel_workers;
\set VERBOSITY default
SELECT to_regclass('bad_model') IS NULL AS no_model_table,
       to_regclass('bad_model_summary') IS NULL AS no_summary_table;

-- help
SELECT madlib_dl.fit() LIKE 'madlib_keras_fit: train one model%' AS help_summary,
       position('metrics_compute_frequency' IN madlib_dl.madlib_keras_fit('usage')) > 0 AS help_usage,
       madlib_dl.fit('usage') = madlib_dl.madlib_keras_fit('usage') AS same_help;
SELECT madlib_dl._default_num_segments() BETWEEN 1 AND 64 AS default_segments_in_range;

SET client_min_messages = warning;
DROP SCHEMA fit_test CASCADE;
RESET client_min_messages;
RESET search_path;
