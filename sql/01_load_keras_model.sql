--
-- 01_load_keras_model: load_keras_model, delete_keras_model,
-- keras_model_summary and the weights helpers.
--
\set SHOW_CONTEXT never
CREATE SCHEMA arch_test;
SET search_path = arch_test, public;

-- Four architectures, one per Keras dialect we read.
-- iris MLP 4-10-10-3 as tf.keras 2 writes it (InputLayer, GlorotUniform)
\set iris_tf2 '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "sparse": false, "ragged": false, "name": "dense_input"}}, {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "batch_input_shape": [null, 4], "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}, {"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}, {"class_name": "Dense", "config": {"name": "dense_2", "trainable": true, "dtype": "float32", "units": 3, "activation": "softmax", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
-- the same MLP as Keras 2.1/2.2 writes it (MADlib's documentation example)
\set iris_k22 '{"class_name": "Sequential", "keras_version": "2.1.6", "config": [{"class_name": "Dense", "config": {"kernel_initializer": {"class_name": "VarianceScaling", "config": {"distribution": "uniform", "scale": 1.0, "seed": null, "mode": "fan_avg"}}, "name": "dense_1", "kernel_constraint": null, "bias_regularizer": null, "bias_constraint": null, "dtype": "float32", "activation": "relu", "trainable": true, "kernel_regularizer": null, "bias_initializer": {"class_name": "Zeros", "config": {}}, "units": 10, "batch_input_shape": [null, 4], "use_bias": true, "activity_regularizer": null}}, {"class_name": "Dense", "config": {"kernel_initializer": {"class_name": "VarianceScaling", "config": {"distribution": "uniform", "scale": 1.0, "seed": null, "mode": "fan_avg"}}, "name": "dense_2", "kernel_constraint": null, "bias_regularizer": null, "bias_constraint": null, "activation": "relu", "trainable": true, "kernel_regularizer": null, "bias_initializer": {"class_name": "Zeros", "config": {}}, "units": 10, "use_bias": true, "activity_regularizer": null}}, {"class_name": "Dense", "config": {"kernel_initializer": {"class_name": "VarianceScaling", "config": {"distribution": "uniform", "scale": 1.0, "seed": null, "mode": "fan_avg"}}, "name": "dense_3", "kernel_constraint": null, "bias_regularizer": null, "bias_constraint": null, "activation": "softmax", "trainable": true, "kernel_regularizer": null, "bias_initializer": {"class_name": "Zeros", "config": {}}, "units": 3, "use_bias": true, "activity_regularizer": null}}], "backend": "tensorflow"}'
-- a small CNN for 8x8x1 images, tf.keras 2
\set cnn_tf2 '{"class_name": "Sequential", "config": {"name": "sequential_1", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 8, 8, 1], "dtype": "float32", "sparse": false, "ragged": false, "name": "conv2d_input"}}, {"class_name": "Conv2D", "config": {"name": "conv2d", "trainable": true, "batch_input_shape": [null, 8, 8, 1], "dtype": "float32", "filters": 8, "kernel_size": [3, 3], "strides": [1, 1], "padding": "valid", "data_format": "channels_last", "dilation_rate": [1, 1], "groups": 1, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}, {"class_name": "MaxPooling2D", "config": {"name": "max_pooling2d", "trainable": true, "dtype": "float32", "pool_size": [2, 2], "padding": "valid", "strides": [2, 2], "data_format": "channels_last"}}, {"class_name": "Dropout", "config": {"name": "dropout", "trainable": true, "dtype": "float32", "rate": 0.25, "noise_shape": null, "seed": null}}, {"class_name": "Flatten", "config": {"name": "flatten", "trainable": true, "dtype": "float32", "data_format": "channels_last"}}, {"class_name": "Dense", "config": {"name": "dense_3", "trainable": true, "dtype": "float32", "units": 10, "activation": "softmax", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
-- an MLP 4-16-3 as Keras 3 writes it (module, registered_name, batch_shape)
\set mlp_k3 '{"module": "keras", "class_name": "Sequential", "config": {"name": "sequential", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "layers": [{"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [null, 4], "dtype": "float32", "sparse": false, "name": "input_layer"}, "registered_name": null}, {"module": "keras.layers", "class_name": "Dense", "config": {"name": "hidden", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "units": 16, "activation": "relu", "use_bias": true, "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null}, "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "kernel_regularizer": null, "bias_regularizer": null, "kernel_constraint": null, "bias_constraint": null}, "registered_name": null, "build_config": {"input_shape": [null, 4]}}, {"module": "keras.layers", "class_name": "Dense", "config": {"name": "output", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "units": 3, "activation": "softmax", "use_bias": true, "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null}, "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "kernel_regularizer": null, "bias_regularizer": null, "kernel_constraint": null, "bias_constraint": null}, "registered_name": null, "build_config": {"input_shape": [null, 16]}}], "build_input_shape": [null, 4]}, "registered_name": null, "build_config": {"input_shape": [null, 4]}}'

-- layers, shapes and parameter counts (Keras model.summary() agrees:
-- 50 + 110 + 33 = 193; 80 + 0 + 0 + 0 + 730 = 810; 80 + 51 = 131)
SELECT * FROM madlib_dl.keras_model_summary(:'iris_tf2'::json);
SELECT * FROM madlib_dl.keras_model_summary(:'iris_k22'::json);
SELECT * FROM madlib_dl.keras_model_summary(:'cnn_tf2'::json);
SELECT * FROM madlib_dl.keras_model_summary(:'mlp_k3'::json);
SELECT input_shape, output_shape, n_params, n_trainable, n_layers
  FROM madlib_dl._arch_info(:'cnn_tf2');
-- the two iris dialects describe the same network
SELECT (madlib_dl._arch_info(:'iris_tf2')).fingerprint
     = (madlib_dl._arch_info(:'iris_k22')).fingerprint AS same_network,
       (madlib_dl._arch_info(:'iris_tf2')).fingerprint
     = (madlib_dl._arch_info(:'mlp_k3')).fingerprint AS same_as_k3;

-- weights helpers: little-endian float32, no header
SELECT madlib_dl.weights_from_array('{1, -2.5, 0}'::real[]);
SELECT madlib_dl.weights_to_array('\x0000803f000020c000000000'::bytea);
SELECT madlib_dl.weights_to_array(madlib_dl.weights_from_array('{{1.5, 2}, {3, 4}}'::real[]));
SELECT madlib_dl.weights_to_array(''::bytea);

-- load: the table is created on first use, with MADlib's columns
SELECT madlib_dl.load_keras_model('model_arch_library', :'iris_tf2');
SELECT madlib_dl.load_keras_model('model_arch_library', :'iris_k22',
       madlib_dl.weights_from_array(array_fill(0.5::real, ARRAY[193])),
       'iris k22', 'Keras 2.2 MLP with weights');
SELECT madlib_dl.load_keras_model('arch_test.model_arch_library', :'cnn_tf2',
       decode(repeat('0000803f', 810), 'hex'), name => 'cnn');
SELECT madlib_dl.load_keras_model(keras_model_arch_table => 'model_arch_library',
       model_arch => :'mlp_k3', description => 'Keras 3');
SELECT a.attname, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull
  FROM pg_attribute a
 WHERE a.attrelid = 'arch_test.model_arch_library'::regclass AND a.attnum > 0
 ORDER BY a.attnum;
SELECT i.indexrelid::regclass AS index, i.indisprimary, i.indisunique
  FROM pg_index i WHERE i.indrelid = 'arch_test.model_arch_library'::regclass
 ORDER BY 1::text;
SELECT model_id, name, description,
       model_arch->'config' IS NOT NULL AS has_config,
       octet_length(model_weights) AS weight_bytes,
       __internal_madlib_id__ LIKE '\_\_madlib\_temp\_%' AS internal_id_ok
  FROM model_arch_library ORDER BY model_id;
SELECT count(DISTINCT __internal_madlib_id__) AS distinct_internal_ids FROM model_arch_library;
-- the stored JSON and weights are what was given
SELECT model_arch::text = :'iris_tf2' AS same_json FROM model_arch_library WHERE model_id = 1;
SELECT (madlib_dl.weights_to_array(model_weights))[1:3] AS first_weights,
       cardinality(madlib_dl.weights_to_array(model_weights)) AS n
  FROM model_arch_library WHERE model_id = 2;
-- the stored architectures summarize as loaded
SELECT m.model_id, sum(s.n_params) AS n_params, count(*) AS n_layers
  FROM model_arch_library m, madlib_dl.keras_model_summary(m.model_arch) s
 GROUP BY m.model_id ORDER BY m.model_id;

-- delete: missing ids are errors; the last delete drops the table
SELECT madlib_dl.delete_keras_model('model_arch_library', 3);
SELECT model_id FROM model_arch_library ORDER BY model_id;
\set VERBOSITY default
SELECT madlib_dl.delete_keras_model('model_arch_library', 3);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
SELECT madlib_dl.delete_keras_model('model_arch_library', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.delete_keras_model('model_arch_library', 1);
SELECT madlib_dl.delete_keras_model('model_arch_library', 2);
SELECT to_regclass('arch_test.model_arch_library') AS table_exists;
SELECT madlib_dl.delete_keras_model('arch_test.model_arch_library', 4);
SELECT to_regclass('arch_test.model_arch_library') AS table_after_last_delete;
SELECT madlib_dl.delete_keras_model('model_arch_library', 1);
\echo :LAST_ERROR_SQLSTATE
-- model ids keep counting while the table lives
SELECT madlib_dl.load_keras_model('model_arch_library', :'iris_tf2');
SELECT madlib_dl.load_keras_model('model_arch_library', :'iris_tf2');
SELECT madlib_dl.delete_keras_model('model_arch_library', 1);
SELECT madlib_dl.load_keras_model('model_arch_library', :'iris_tf2');
SELECT model_id FROM model_arch_library ORDER BY model_id;

-- bad architectures: nothing is stored
SELECT count(*) AS before FROM model_arch_library;
SELECT madlib_dl.load_keras_model('model_arch_library', '{"class_name": "Sequential", "config": ');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.load_keras_model('model_arch_library', '[1, 2, 3]');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.load_keras_model('model_arch_library', '{"class_name": "Sequential"}');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
SELECT madlib_dl.load_keras_model('model_arch_library',
       replace(:'iris_tf2', '"class_name": "Dense", "config": {"name": "dense_1"',
                            '"class_name": "MultiHeadAttention", "config": {"name": "mha"')::json);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
SELECT madlib_dl.load_keras_model('model_arch_library',
       replace(:'iris_tf2', '"softmax"', '"mish"')::json);
\echo :LAST_ERROR_SQLSTATE
-- a conv layer on a flat input
SELECT madlib_dl.load_keras_model('model_arch_library',
       replace(:'cnn_tf2', '[null, 8, 8, 1]', '[null, 64]')::json);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.load_keras_model('model_arch_library', NULL);
\echo :LAST_ERROR_SQLSTATE

-- bad weights: wrong size, not whole float32 values, NaN
\set VERBOSITY default
SELECT madlib_dl.load_keras_model('model_arch_library', :'iris_tf2',
       decode(repeat('00000000', 192), 'hex'));
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
SELECT madlib_dl.load_keras_model('model_arch_library', :'iris_tf2', '\x000000'::bytea);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.load_keras_model('model_arch_library', :'iris_tf2',
       madlib_dl.weights_from_array(array_fill(0::real, ARRAY[60]) || 'NaN'::real
                                    || array_fill(0::real, ARRAY[132])));
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.weights_from_array('{1, NULL}'::real[]);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.weights_to_array('\x0000803f00'::bytea);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS after FROM model_arch_library;

-- bad table names never become SQL
\set VERBOSITY default
SELECT madlib_dl.load_keras_model('arch; drop table x', :'iris_tf2');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
SELECT madlib_dl.load_keras_model('a.b.c', :'iris_tf2');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.load_keras_model('', :'iris_tf2');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.load_keras_model('"unterminated', :'iris_tf2');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.load_keras_model('1abc', :'iris_tf2');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.load_keras_model(NULL, :'iris_tf2');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.load_keras_model('no_such_schema.arch', :'iris_tf2');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.delete_keras_model('no_such_table', 1);
\echo :LAST_ERROR_SQLSTATE
-- quoted names, and names that are SQL keywords, work
SELECT madlib_dl.load_keras_model('"Arch; Lib"', :'iris_tf2', name => 'quoted');
SELECT madlib_dl.load_keras_model(' arch_test . "select" ', :'iris_tf2', name => 'keyword');
SELECT name FROM arch_test."Arch; Lib" UNION ALL SELECT name FROM arch_test."select";
SELECT madlib_dl.delete_keras_model('"Arch; Lib"', 1);
SELECT madlib_dl.delete_keras_model('arch_test.select', 1);
SELECT to_regclass('arch_test."Arch; Lib"') IS NULL AND to_regclass('arch_test."select"') IS NULL AS both_dropped;

-- tables that are not model architecture tables
CREATE TABLE not_arch (model_id integer, model_arch text);
SELECT madlib_dl.load_keras_model('not_arch', :'iris_tf2');
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE not_arch2 (id integer);
SELECT madlib_dl.load_keras_model('not_arch2', :'iris_tf2');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.delete_keras_model('not_arch2', 1);
\echo :LAST_ERROR_SQLSTATE
CREATE VIEW arch_view AS SELECT 1 AS model_id;
SELECT madlib_dl.load_keras_model('arch_view', :'iris_tf2');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS untouched FROM not_arch;

-- unqualified names follow the caller's search_path, for creation too
CREATE SCHEMA arch_test2;
SET search_path = arch_test2, arch_test;
SELECT madlib_dl.load_keras_model('model_arch_library', :'iris_tf2', name => 'found');
SELECT count(*) AS in_arch_test FROM arch_test.model_arch_library;
SELECT madlib_dl.load_keras_model('new_library', :'iris_tf2');
SELECT relnamespace::regnamespace AS created_in FROM pg_class WHERE relname = 'new_library';
SET search_path = arch_test, public;

-- help text
SELECT madlib_dl.load_keras_model() LIKE 'load_keras_model: %' AS summary;
SELECT madlib_dl.load_keras_model('usage') LIKE '%__internal_madlib_id__%' AS usage;
SELECT madlib_dl.delete_keras_model();
SELECT madlib_dl.delete_keras_model('usage') LIKE '%P0002%' AS usage;
-- keras_model_summary, weights_to_array and weights_from_array: fn() and
-- fn('usage'); any other untyped text is refused with a hint to cast it
-- (never answered with help in place of the result)
SELECT madlib_dl.keras_model_summary() LIKE 'keras_model_summary: %' AS summary,
       madlib_dl.keras_model_summary('usage') LIKE '%output_shape%' AS usage,
       madlib_dl.weights_to_array() LIKE 'weights_to_array: %' AS to_summary,
       madlib_dl.weights_to_array('usage') LIKE '%get_weights()%' AS to_usage,
       madlib_dl.weights_from_array() LIKE 'weights_from_array: %' AS from_summary,
       madlib_dl.weights_from_array('HELP') LIKE '%row-major%' AS from_usage;
SELECT * FROM madlib_dl.keras_model_summary('{"class_name": "Sequential"}');
SELECT madlib_dl.weights_to_array('\x0000803f');
SELECT madlib_dl.weights_from_array('{1, 2}');
\set VERBOSITY sqlstate
SELECT madlib_dl.weights_from_array('x');
\set VERBOSITY default
SELECT madlib_dl.weights_to_array('\x0000803f'::bytea), madlib_dl.weights_from_array('{1, 2}'::real[]);

RESET search_path;
\set VERBOSITY default
SET client_min_messages = warning;
DROP SCHEMA arch_test, arch_test2 CASCADE;
RESET client_min_messages;
