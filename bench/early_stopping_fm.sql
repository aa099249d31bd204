-- early_stopping_fm.sql: fit_multiple's wall time with and without
-- early_stopping, on a 4800-row iris (40 noisy copies), 2 segments, four
-- configurations of the 4-10-10-3 network of which three stop (a rate
-- that jumps to 0.5, SGD at lr 2.0, a plateau) and one trains on.
-- It prints what it measured: each run's seconds (summary times), each
-- model's stop and best iterations and training seconds.
--
--   createdb esb && psql -d esb -c 'CREATE EXTENSION madlib_dl' && psql -X -d esb -f bench/early_stopping_fm.sql
--
\set ECHO none
DROP SCHEMA IF EXISTS esb CASCADE;
CREATE SCHEMA esb;
SET search_path = esb, public;
\i test/data/iris.sql
\set iris_tf2 '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "sparse": false, "ragged": false, "name": "dense_input"}}, {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "batch_input_shape": [null, 4], "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}, {"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}, {"class_name": "Dense", "config": {"name": "dense_2", "trainable": true, "dtype": "float32", "units": 3, "activation": "softmax", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
-- a bigger iris: 40 copies with small noise (4800 rows)
CREATE TABLE big AS SELECT row_number() OVER () AS id,
    ARRAY(SELECT a + 0.01 * ((g * 7 + i) % 13 - 6) FROM unnest(attributes) WITH ORDINALITY u(a, i)) AS attributes,
    class_text FROM iris_data, generate_series(1, 40) g;
CREATE TABLE big_tr AS SELECT * FROM big WHERE id % 5 <> 0;
CREATE TABLE big_te AS SELECT * FROM big WHERE id % 5 = 0;
SET client_min_messages = warning;
SELECT madlib_dl.training_preprocessor_dl('big_tr', 'big_p', 'class_text', 'attributes', NULL, 1.0, NULL, '2');
SELECT madlib_dl.validation_preprocessor_dl('big_te', 'big_v', 'class_text', 'attributes', 'big_p');
SELECT madlib_dl.load_keras_model('arch', :'iris_tf2', NULL, 'iris mlp');
SELECT madlib_dl.load_model_selection_table('arch', 'mst4', ARRAY[1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(learning_rate=PiecewiseConstantDecay([300], [0.01, 0.5]))', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='Adam(learning_rate=PiecewiseConstantDecay([300], [0.01, 1e-9]))', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='SGD(lr=2.0)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$],
    ARRAY['batch_size=32, seed=7']);
\set ECHO all
\timing on
SELECT madlib_dl.fit_multiple('big_p', 'fm_all', 'mst4', 20, FALSE, 'big_v', 1);
SELECT madlib_dl.fit_multiple('big_p', 'fm_es', 'mst4', 20, FALSE, 'big_v', 1,
    early_stopping => 'monitor=validation_loss, patience=2, restore_best=True');
\timing off
SELECT mst_key, stopped_at_iteration, best_iteration, cardinality(metrics_iters) AS points,
       round(training_seconds::numeric, 2) AS train_s FROM fm_es_info ORDER BY 1;
SELECT mst_key, round(training_seconds::numeric, 2) AS train_s FROM fm_all_info ORDER BY 1;
SELECT extract(epoch FROM end_training_time - start_training_time) AS all_s FROM fm_all_summary;
SELECT extract(epoch FROM end_training_time - start_training_time) AS es_s FROM fm_es_summary;
