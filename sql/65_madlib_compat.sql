--
-- 65_madlib_compat: a MADlib user's scripts run unchanged (issue 20).
-- Statements from MADlib's documentation and install-check tests, with
-- the schema madlib replaced by madlib_dl (here: in the search_path, so
-- the calls are MADlib's own text):
--   1. output tables in pg_temp, for every function that writes one, and
--      temporary tables as training data (trained by this backend alone);
--   2. predict_byom's class_values as MADlib 2.x documents them;
--   3. gpu_configuration(out, NULL);
--   4. predict and predict_byom refuse an array of another shape than the
--      model's input (channels first against channels last);
--   summary tables record table names as the user gave them, and warm
--   start still only replaces outputs its own summary names;
--   distribution_rules naming a table of segment ids;
--   class_weight (against TensorFlow.js), initial_epoch, top_<k>_accuracy
--   with an object table, and the refused custom-function loaders;
--   predict 'response' with hand-set weights: the class is known ahead.
-- Losses depend on the CPU's float kernels: only relations are printed.
--
\set SHOW_CONTEXT never
CREATE SCHEMA compat_test;
SET search_path = compat_test, madlib_dl;
\set ECHO none
\i test/data/iris.sql
\set ECHO all

-- iris MLP 4-10-10-3 as tf.keras 2 writes it
\set iris_tf2 '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "sparse": false, "ragged": false, "name": "dense_input"}}, {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "batch_input_shape": [null, 4], "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}, {"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}, {"class_name": "Dense", "config": {"name": "dense_2", "trainable": true, "dtype": "float32", "units": 3, "activation": "softmax", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
\set cp '$$loss=''categorical_crossentropy'', optimizer=''Adam(lr=0.01)'', metrics=[''accuracy'']$$'

-- The data as MADlib's documentation prepares it, on one virtual segment
-- (so that every comparison below is byte for byte)
CREATE TABLE iris_train AS SELECT * FROM iris_data WHERE id % 5 <> 0;
CREATE TABLE iris_test AS SELECT * FROM iris_data WHERE id % 5 = 0;
SELECT training_preprocessor_dl('iris_data', 'iris_data_packed', 'class_text', 'attributes', NULL, 1.0, NULL, '1');
SELECT training_preprocessor_dl('iris_train', 'iris_train_packed', 'class_text', 'attributes', NULL, 1.0, NULL, '1');
SELECT validation_preprocessor_dl('iris_test', 'iris_test_packed', 'class_text', 'attributes', 'iris_train_packed');
SELECT load_keras_model('iris_model_arch', :'iris_tf2');

-- ---------------------------------------------------------------------
-- 1. Output tables in pg_temp
-- ---------------------------------------------------------------------
-- The statement of the issue (it failed with 3F000 schema "pg_temp" does
-- not exist); the progress NOTICEs carry timings.
SET client_min_messages = warning;
SELECT madlib_keras_fit('iris_data_packed', 'pg_temp.iris_model', 'iris_model_arch', 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, $$batch_size=16, epochs=1$$, 3, FALSE);
RESET client_min_messages;
-- the tables are temporary, in this session's temporary schema
CREATE FUNCTION pg_temp.is_temp(name text) RETURNS boolean LANGUAGE sql AS
$$ SELECT c.relpersistence = 't' AND c.relnamespace = pg_my_temp_schema()
     FROM pg_class c WHERE c.oid = to_regclass('pg_temp.' || name) $$;
SELECT pg_temp.is_temp('iris_model') AS model_temp, pg_temp.is_temp('iris_model_summary') AS summary_temp,
       to_regclass('compat_test.iris_model') IS NULL AS nothing_elsewhere;
-- the summary records the names as they were given
SELECT source_table, model, model_arch_table FROM pg_temp.iris_model_summary;
-- warm start finds them again, by the same name
SET client_min_messages = warning;
SELECT madlib_keras_fit('iris_data_packed', 'pg_temp.iris_model', 'iris_model_arch', 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, $$batch_size=16, epochs=1$$, 3, FALSE, NULL, NULL, TRUE);
RESET client_min_messages;
SELECT count(*) AS one_model, pg_temp.is_temp('iris_model') AS still_temp FROM pg_temp.iris_model;

-- every other function that writes a table, into pg_temp
SELECT training_preprocessor_dl('iris_train', 'pg_temp.pp_train', 'class_text', 'attributes', NULL, 1.0, NULL, '1');
SELECT validation_preprocessor_dl('iris_test', 'pg_temp.pp_val', 'class_text', 'attributes', 'iris_train_packed');
SELECT load_keras_model('pg_temp.arch_tmp', :'iris_tf2');
SELECT madlib_keras_evaluate('pg_temp.iris_model', 'iris_test_packed', 'pg_temp.eval_out');
SELECT madlib_keras_predict('pg_temp.iris_model', 'iris_test', 'id', 'attributes', 'pg_temp.pred_out', 'response');
UPDATE iris_model_arch SET model_weights = (SELECT model_weights FROM pg_temp.iris_model) WHERE model_id = 1;
SELECT madlib_keras_predict_byom('iris_model_arch', 1, 'iris_test', 'id', 'attributes', 'pg_temp.byom_out', 'prob');
SELECT load_model_selection_table('iris_model_arch', 'pg_temp.mst_tmp', ARRAY[1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$],
    ARRAY['batch_size=16, epochs=1']);
SELECT generate_model_configs('iris_model_arch', 'pg_temp.mst_gen', ARRAY[1],
    $${'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['Adam'], 'lr': [0.01, 0.1]}], 'metrics': ['accuracy']}$$,
    $${'batch_size': [16], 'epochs': [1]}$$);
SET client_min_messages = warning;
SELECT madlib_keras_fit_multiple_model('iris_train_packed', 'pg_temp.multi_tmp', 'pg_temp.mst_tmp', 2);
RESET client_min_messages;
SET client_min_messages = warning;    -- "no GPU found" depends on the host
SELECT gpu_configuration('pg_temp.gpus');
RESET client_min_messages;
SELECT load_top_k_accuracy_function('pg_temp.objects_tmp', 3);
SELECT t AS output, pg_temp.is_temp(t) AS is_temp
  FROM unnest(ARRAY['pp_train', 'pp_train_summary', 'pp_val', 'pp_val_summary', 'arch_tmp', 'eval_out',
                    'pred_out', 'byom_out', 'mst_tmp', 'mst_tmp_summary', 'mst_gen', 'mst_gen_summary',
                    'multi_tmp', 'multi_tmp_info', 'multi_tmp_summary', 'gpus', 'objects_tmp']) AS t;
SELECT count(*) FILTER (WHERE c.relnamespace = 'compat_test'::regnamespace) AS left_in_compat_test
  FROM pg_class c WHERE c.relname IN ('pp_train', 'pp_val', 'arch_tmp', 'eval_out', 'pred_out', 'byom_out',
                                      'mst_tmp', 'mst_gen', 'multi_tmp', 'gpus', 'objects_tmp');
-- the summaries' names as given
SELECT source_table, output_table FROM pg_temp.pp_train_summary;
SELECT model_arch_table, model_arch_table_qualified FROM pg_temp.mst_tmp_summary;
SELECT source_table, model, model_info, model_selection_table FROM pg_temp.multi_tmp_summary;
-- warm start of fit_multiple on temporary outputs
SET client_min_messages = warning;
SELECT madlib_keras_fit_multiple_model('iris_train_packed', 'pg_temp.multi_tmp', 'pg_temp.mst_tmp', 1,
    FALSE, NULL, NULL, TRUE);
RESET client_min_messages;
SELECT count(*) AS one_model FROM pg_temp.multi_tmp;

-- A temporary packed table as training data: parallel workers cannot
-- read it (before: ERROR 25000 from a worker), so this backend trains
-- every segment itself, with the same result.
CREATE TEMPORARY TABLE tmp_train_packed AS SELECT * FROM iris_train_packed;
CREATE TEMPORARY TABLE tmp_train_packed_summary AS SELECT * FROM iris_train_packed_summary;
CREATE TEMPORARY TABLE tmp_test_packed AS SELECT * FROM iris_test_packed;
CREATE TEMPORARY TABLE tmp_test_packed_summary AS SELECT * FROM iris_test_packed_summary;
-- (max_parallel_workers is 0 for the run, in its transaction only)
SELECT current_setting('max_parallel_workers') AS saved \gset
BEGIN;
SELECT madlib_dl._leader_only_for_temp(ARRAY['tmp_train_packed'::regclass], 'workers') = :'saved' AS returns_setting;
SELECT current_setting('max_parallel_workers') AS during;
SELECT madlib_dl._leader_only_end(:'saved');
SELECT current_setting('max_parallel_workers') = :'saved' AS restored;
COMMIT;
-- two segments this time, so that the leader has more than one to train
SELECT training_preprocessor_dl('iris_train', 'iris_train_packed2', 'class_text', 'attributes', NULL, 1.0, NULL, '2');
CREATE TEMPORARY TABLE tmp2_train_packed AS SELECT * FROM iris_train_packed2;
CREATE TEMPORARY TABLE tmp2_train_packed_summary AS SELECT * FROM iris_train_packed2_summary;
SET client_min_messages = warning;
SELECT fit('iris_train_packed2', 'm_perm', 'iris_model_arch', 1, :cp, 'batch_size=16, epochs=1', 2,
           FALSE, 'iris_test_packed');
BEGIN;
SELECT fit('tmp2_train_packed', 'm_temp', 'iris_model_arch', 1, :cp, 'batch_size=16, epochs=1', 2,
           FALSE, 'tmp_test_packed');
SELECT current_setting('max_parallel_workers') = :'saved' AS setting_restored;
COMMIT;
RESET client_min_messages;
SELECT (SELECT model_weights FROM m_perm) = (SELECT model_weights FROM m_temp) AS same_weights,
       (SELECT validation_loss FROM m_perm_summary) = (SELECT validation_loss FROM m_temp_summary) AS same_validation;
-- fit_multiple too
SET client_min_messages = warning;
SELECT fit_multiple('iris_train_packed2', 'mm_perm', 'pg_temp.mst_tmp', 2);
SELECT fit_multiple('tmp2_train_packed', 'mm_temp', 'pg_temp.mst_tmp', 2);
RESET client_min_messages;
SELECT (SELECT model_weights FROM mm_perm) = (SELECT model_weights FROM mm_temp) AS same_weights;
-- a PL/Proxy job cannot read a temporary table: refused, never sent
SELECT madlib_dl._leader_only_for_temp(ARRAY['tmp_train_packed'::regclass], 'plproxy');
\echo :LAST_ERROR_SQLSTATE
-- a permanent source needs nothing
SELECT madlib_dl._leader_only_for_temp(ARRAY['iris_train_packed'::regclass, NULL], 'workers') IS NULL AS untouched;

-- ---------------------------------------------------------------------
-- 2. predict_byom's class_values as MADlib 2.x documents them: one row
--    per output (the statement failed with "class_values has 3 values
--    but the model has 3 outputs")
-- ---------------------------------------------------------------------
SELECT madlib_keras_predict_byom('iris_model_arch', 1, 'iris_test', 'id', 'attributes', 'byom_2d', 'response', NULL, ARRAY[ARRAY['Iris-setosa','Iris-versicolor','Iris-virginica']::text[]]);
SELECT madlib_keras_predict_byom('iris_model_arch', 1, 'iris_test', 'id', 'attributes', 'byom_1d', 'response', NULL, ARRAY['Iris-setosa','Iris-versicolor','Iris-virginica']);
SELECT count(*) AS n_rows,
       bool_and(a.class_value = b.class_value AND a.prob = b.prob) AS both_forms_agree,
       bool_and(a.class_value IN ('Iris-setosa', 'Iris-versicolor', 'Iris-virginica')) AS class_names
  FROM byom_2d a JOIN byom_1d b USING (id);
-- each error says what was wrong
SELECT madlib_keras_predict_byom('iris_model_arch', 1, 'iris_test', 'id', 'attributes', 'byom_bad', 'response', NULL, ARRAY[ARRAY['a','b','c'], ARRAY['d','e','f']]);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_keras_predict_byom('iris_model_arch', 1, 'iris_test', 'id', 'attributes', 'byom_bad', 'response', NULL, ARRAY[ARRAY[ARRAY['a','b','c']]]);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_keras_predict_byom('iris_model_arch', 1, 'iris_test', 'id', 'attributes', 'byom_bad', 'response', NULL, ARRAY[ARRAY['a','b']]);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_keras_predict_byom('iris_model_arch', 1, 'iris_test', 'id', 'attributes', 'byom_bad', 'response', NULL, '{}'::text[]);
\echo :LAST_ERROR_SQLSTATE
SELECT to_regclass('byom_bad') IS NULL AS no_table_left;

-- ---------------------------------------------------------------------
-- 3. gpu_configuration(out, NULL): NULL is MADlib's default 'tensorflow'
-- ---------------------------------------------------------------------
SET client_min_messages = warning;
SELECT gpu_configuration('gpus_null', NULL);
SELECT gpu_configuration('gpus_default');
RESET client_min_messages;
SELECT (SELECT array_agg(g::text ORDER BY g::text) FROM gpus_null g) IS NOT DISTINCT FROM
       (SELECT array_agg(g::text ORDER BY g::text) FROM gpus_default g) AS same_as_default;

-- ---------------------------------------------------------------------
-- 4. An array of another shape than the model's input is refused, also
--    with the same number of values: [3,32,32] images for a [32,32,3]
--    model (before: predicted without any error)
-- ---------------------------------------------------------------------
SELECT load_keras_model('image_arch', '{"class_name": "Sequential", "config": {"name": "img", "layers": [{"class_name": "Flatten", "config": {"name": "flatten", "batch_input_shape": [null, 32, 32, 3]}}, {"class_name": "Dense", "config": {"name": "dense", "units": 2, "activation": "softmax"}}]}}',
    weights_from_array(array_fill(0.001::real, ARRAY[32 * 32 * 3 * 2 + 2])), 'channels last');
CREATE TABLE images_cf (id integer, x real[]);        -- channels first
INSERT INTO images_cf SELECT i, array_fill(i::real / 10, ARRAY[3, 32, 32]) FROM generate_series(1, 3) i;
CREATE TABLE images_cl (id integer, x real[]);        -- channels last
INSERT INTO images_cl SELECT i, array_fill(i::real / 10, ARRAY[32, 32, 3]) FROM generate_series(1, 3) i;
CREATE TABLE images_flat (id integer, x real[]);      -- the values, flat
INSERT INTO images_flat SELECT i, array_fill(i::real / 10, ARRAY[32 * 32 * 3]) FROM generate_series(1, 3) i;
SELECT madlib_keras_predict_byom('image_arch', 1, 'images_cf', 'id', 'x', 'img_out', 'prob');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_keras_predict_byom('image_arch', 1, 'images_flat', 'id', 'x', 'img_out', 'prob');
\echo :LAST_ERROR_SQLSTATE
SELECT to_regclass('img_out') IS NULL AS no_table_left;
SELECT madlib_keras_predict_byom('image_arch', 1, 'images_cl', 'id', 'x', 'img_out', 'prob');
SELECT count(*) AS rows_predicted FROM img_out;
-- predict with a model table: the same check
CREATE TABLE img_model AS SELECT model_weights, model_arch FROM image_arch;
CREATE TABLE img_model_summary (dependent_varname text[], independent_varname text[], normalizing_const real,
    compile_params text, metrics_type text[], loss_type text, class_text_class_values text[]);
INSERT INTO img_model_summary VALUES ('{class_text}', '{x}', 1.0,
    $$loss='categorical_crossentropy', optimizer='SGD'$$, NULL, 'categorical_crossentropy', '{cat,dog}');
SELECT madlib_keras_predict('img_model', 'images_cf', 'id', 'x', 'img_pred');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_keras_predict('img_model', 'images_cl', 'id', 'x', 'img_pred', 'response');
SELECT count(*) AS rows_predicted, bool_and(class_value IN ('cat', 'dog')) AS classes FROM img_pred;

-- ---------------------------------------------------------------------
-- Summary tables record the names as the user gave them (MADlib does;
-- before: schema.table); inside, the tables stay resolved once.
-- ---------------------------------------------------------------------
SET client_min_messages = warning;
SELECT fit('iris_train_packed', 'ws_model', 'iris_model_arch', 1, :cp, 'batch_size=16', 1, FALSE,
           'iris_test_packed');
SELECT fit('COMPAT_TEST.Iris_Train_Packed', 'Compat_Test.WS_Upper', 'compat_test."iris_model_arch"', 1,
           :cp, 'batch_size=16', 1);
RESET client_min_messages;
SELECT source_table, model, model_arch_table, validation_table FROM ws_model_summary;
SELECT source_table, model, model_arch_table FROM ws_upper_summary;
SELECT source_table, output_table FROM iris_train_packed_summary;
-- warm start reads them back as names, never through the search_path
SET client_min_messages = warning;
SELECT fit('iris_train_packed', 'Compat_Test.WS_Upper', 'iris_model_arch', 1, :cp, 'batch_size=16', 1,
           warm_start => TRUE);
RESET client_min_messages;
SELECT model FROM ws_upper_summary;
-- a copy in another schema: its summary names "ws_model" next to it, fine
CREATE SCHEMA compat_other;
CREATE TABLE compat_other.ws_model AS SELECT * FROM ws_model;
CREATE TABLE compat_other.ws_model_summary AS SELECT * FROM ws_model_summary;
SET client_min_messages = warning;
SELECT fit('iris_train_packed', 'compat_other.ws_model', 'iris_model_arch', 1, :cp, 'batch_size=16', 1,
           warm_start => TRUE);
RESET client_min_messages;
-- but a summary naming another schema's table is not its model's, even
-- when that table is the one the search_path finds
UPDATE compat_other.ws_model_summary SET model = 'compat_test.ws_model';
SELECT fit('iris_train_packed', 'compat_other.ws_model', 'iris_model_arch', 1, :cp, 'batch_size=16', 1,
           warm_start => TRUE);
\echo :LAST_ERROR_SQLSTATE
SET search_path = compat_other, compat_test, madlib_dl;
UPDATE compat_other.ws_model_summary SET model = 'WS_MODEL';        -- bare, in its own schema
SET client_min_messages = warning;
SELECT fit('iris_train_packed', 'compat_other.ws_model', 'iris_model_arch', 1, :cp, 'batch_size=16', 1,
           warm_start => TRUE);
RESET client_min_messages;
UPDATE compat_other.ws_model_summary SET model = 'compat_other.ws_model; DROP TABLE x';
SET client_min_messages = warning;
SELECT fit('iris_train_packed', 'compat_other.ws_model', 'iris_model_arch', 1, :cp, 'batch_size=16', 1,
           warm_start => TRUE);
\echo :LAST_ERROR_SQLSTATE
RESET client_min_messages;
SET search_path = compat_test, madlib_dl;
-- the model selection table names its architecture table as given; fit_multiple
-- finds the table it was resolved to, not the one of the same name in the
-- selection table's schema, nor the one the search_path finds now
\set iris_5in '{"class_name": "Sequential", "config": {"name": "five", "layers": [{"class_name": "Dense", "config": {"name": "d", "batch_input_shape": [null, 5], "units": 3, "activation": "softmax"}}]}}'
-- a decoy of the same name: model_id 1 there takes 5 features, not 4
SELECT load_keras_model('compat_other.iris_model_arch', :'iris_5in');
SELECT load_model_selection_table('iris_model_arch', 'compat_other.mst_names', ARRAY[1], ARRAY[:cp], ARRAY['batch_size=16']);
SELECT model_arch_table, model_arch_table_qualified FROM compat_other.mst_names_summary;
SET search_path = compat_other, compat_test, madlib_dl;
SET client_min_messages = warning;
SELECT fit_multiple('iris_train_packed', 'compat_test.mm_names', 'compat_other.mst_names', 1);
RESET client_min_messages;
SELECT model_arch_table, model_selection_table FROM compat_test.mm_names_summary;
-- appending from that search_path is refused: the name now means the decoy
SELECT load_model_selection_table('iris_model_arch', 'compat_other.mst_names', ARRAY[1], ARRAY[:cp], ARRAY['batch_size=8']);
\echo :LAST_ERROR_SQLSTATE
SET search_path = compat_test, madlib_dl;

-- ---------------------------------------------------------------------
-- distribution_rules naming a table of segment ids: MADlib on PostgreSQL
-- accepts and ignores it; here too, with a NOTICE (before: 22023)
-- ---------------------------------------------------------------------
CREATE TABLE seg_ids (dbid integer);
INSERT INTO seg_ids VALUES (2), (3);
SELECT training_preprocessor_dl('iris_data', 'dr_packed', 'class_text', 'attributes', NULL, 1.0, NULL, 'seg_ids');
SELECT distribution_rules, num_segments = madlib_dl._default_num_segments() AS default_segments
  FROM dr_packed_summary;
SELECT validation_preprocessor_dl('iris_test', 'dr_val', 'class_text', 'attributes', 'dr_packed', NULL, 'seg_ids');
SELECT s.num_segments = t.num_segments AS training_segments FROM dr_val_summary s, dr_packed_summary t;
-- where it cannot apply, still an error
SELECT training_preprocessor_dl('iris_data', 'dr_bad', 'class_text', 'attributes', NULL, 1.0, NULL, 'no_such_segments');
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE not_segments (id integer);
SELECT training_preprocessor_dl('iris_data', 'dr_bad', 'class_text', 'attributes', NULL, 1.0, NULL, 'not_segments');
\echo :LAST_ERROR_SQLSTATE
SELECT training_preprocessor_dl('iris_data', 'dr_bad', 'class_text', 'attributes', NULL, 1.0, NULL, 'gpu_segments');
\echo :LAST_ERROR_SQLSTATE
SELECT to_regclass('dr_bad') IS NULL AND to_regclass('dr_bad_summary') IS NULL AS no_table_left;

-- ---------------------------------------------------------------------
-- class_weight (Keras: each sample's loss and gradient times its class's
-- weight), against TensorFlow.js: test/data/tfjs_class_weight.sql holds
-- a model, its initial weights, 15 rows and the weights TF.js ended with
-- after model.fit(x, y, {classWeight: {0: 0.4, 1: 1, 2: 3.5},
-- batchSize: 15, epochs: 6, shuffle: false}) with SGD(lr=0.2).
-- ---------------------------------------------------------------------
\set ECHO none
\i test/data/tfjs_class_weight.sql
\set ECHO all
-- one buffer on one segment: one full batch per epoch, as in TF.js
SELECT training_preprocessor_dl('cw_data', 'cw_packed', 'cls', 'x', 15, 1.0, NULL, '1');
SELECT load_keras_model('cw_arch', :'cw_arch', weights_from_array((SELECT weights FROM cw_init)), 'tfjs');
\set cw_cp '$$loss=''categorical_crossentropy'', optimizer=''SGD(lr=0.2)'', metrics=[''accuracy'']$$'
SET client_min_messages = warning;
SELECT fit('cw_packed', 'cw_model', 'cw_arch', 1, :cw_cp,
           'batch_size=15, epochs=6, shuffle=False, class_weight={0: 0.4, 1: 1.0, 2: 3.5}', 1);
SELECT fit('cw_packed', 'cw_plain', 'cw_arch', 1, :cw_cp, 'batch_size=15, epochs=6, shuffle=False', 1);
RESET client_min_messages;
CREATE FUNCTION pg_temp.max_diff(a real[], b real[]) RETURNS double precision LANGUAGE sql AS
$$ SELECT max(abs(x::float8 - y::float8)) FROM unnest(a, b) AS u(x, y) $$;
SELECT pg_temp.max_diff(weights_to_array(m.model_weights), e.weights) < 1e-5 AS matches_tfjs,
       pg_temp.max_diff(weights_to_array(p.model_weights), e.weights) > 1e-3 AS differs_without
  FROM cw_model m, cw_plain p, cw_expected e;
SELECT fit_params FROM cw_model_summary;
-- fit_multiple: the same configuration among others
SELECT load_model_selection_table('cw_arch', 'cw_mst', ARRAY[1], ARRAY[:cw_cp],
    ARRAY['batch_size=15, epochs=6, shuffle=False',
          'batch_size=15, epochs=6, shuffle=False, class_weight={0: 0.4, 1: 1.0, 2: 3.5}',
          'batch_size=15, epochs=6, shuffle=False, class_weight={2: 3.5, 1: 1, 0: 0.4}']);
SELECT count(*) AS configurations FROM cw_mst;
SET client_min_messages = warning;
SELECT fit_multiple('cw_packed', 'cw_multi', 'cw_mst', 1);
RESET client_min_messages;
SELECT i.fit_params LIKE '%class_weight%' AS weighted,
       pg_temp.max_diff(weights_to_array(m.model_weights), e.weights) < 1e-5 AS matches_tfjs
  FROM cw_multi m JOIN cw_multi_info i USING (mst_key), cw_expected e ORDER BY mst_key;
-- bad class weights, before any training
SELECT fit('cw_packed', 'cw_bad', 'cw_arch', 1, :cw_cp, 'class_weight={0: 1, 1: 2}', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fit('cw_packed', 'cw_bad', 'cw_arch', 1, :cw_cp, 'class_weight={0: 1, 1: 2, 2: 1, 3: 1}', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fit('cw_packed', 'cw_bad', 'cw_arch', 1, :cw_cp, 'class_weight={0: -1, 1: 2, 2: 1}', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fit('cw_packed', 'cw_bad', 'cw_arch', 1, :cw_cp, 'class_weight=[1, 2, 3]', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT to_regclass('cw_bad') IS NULL AS no_table_left;

-- ---------------------------------------------------------------------
-- initial_epoch as MADlib passes it to Keras' fit: each iteration trains
-- epochs - initial_epoch passes (warm start does not move it)
-- ---------------------------------------------------------------------
SET client_min_messages = warning;
SELECT fit('cw_packed', 'ie_3_2', 'cw_arch', 1, :cw_cp, 'batch_size=15, epochs=3, initial_epoch=2, shuffle=False', 2);
SELECT fit('cw_packed', 'ie_1', 'cw_arch', 1, :cw_cp, 'batch_size=15, epochs=1, shuffle=False', 2);
SELECT fit('cw_packed', 'ie_3', 'cw_arch', 1, :cw_cp, 'batch_size=15, epochs=3, shuffle=False', 2);
RESET client_min_messages;
SELECT (SELECT model_weights FROM ie_3_2) = (SELECT model_weights FROM ie_1) AS one_epoch_each,
       (SELECT model_weights FROM ie_3_2) <> (SELECT model_weights FROM ie_3) AS not_three;
SELECT fit_params FROM ie_3_2_summary;
SELECT fit('cw_packed', 'ie_bad', 'cw_arch', 1, :cw_cp, 'epochs=2, initial_epoch=2', 1);
\echo :LAST_ERROR_SQLSTATE

-- ---------------------------------------------------------------------
-- top_<k>_accuracy with an object table, as MADlib's
-- load_top_k_accuracy_function makes it; computed natively.  Eight
-- classes so that k = 1, 3 and 5 differ; evaluate's metric must equal the share
-- of rows whose true class predict ranks k-th or better.
-- ---------------------------------------------------------------------
SELECT load_top_k_accuracy_function('custom_function_table', 1);
SELECT load_top_k_accuracy_function('custom_function_table', 3);
SELECT load_top_k_accuracy_function('custom_function_table', 5);
SELECT id, name, description, octet_length(object) > 0 AS has_object FROM custom_function_table ORDER BY id;
SELECT load_top_k_accuracy_function('custom_function_table', 3);
\echo :LAST_ERROR_SQLSTATE
SELECT load_top_k_accuracy_function('custom_function_table', 0);
\echo :LAST_ERROR_SQLSTATE
SELECT load_top_k_accuracy_function('iris_data', 2);
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE six (id integer, x real[], cls integer);
INSERT INTO six SELECT i, ARRAY(SELECT sin(i * 7.3 + j * 1.7)::real FROM generate_series(1, 8) j), (i * 5) % 8
  FROM generate_series(1, 96) i;
SELECT training_preprocessor_dl('six', 'six_packed', 'cls', 'x', NULL, 1.0, NULL, '1');
SELECT load_keras_model('six_arch', '{"class_name": "Sequential", "config": {"name": "six", "layers": [{"class_name": "Dense", "config": {"name": "d", "batch_input_shape": [null, 8], "units": 8, "activation": "softmax", "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": 5}}}}]}}');
SET client_min_messages = warning;
SELECT fit('six_packed', 'six_top1', 'six_arch', 1,
           $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['top_1_accuracy']$$,
           'batch_size=10', 2, object_table => 'custom_function_table');
SELECT fit('six_packed', 'six_top3', 'six_arch', 1,
           $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['top_3_accuracy']$$,
           'batch_size=10', 2, object_table => 'custom_function_table');
SELECT fit('six_packed', 'six_top5', 'six_arch', 1,
           $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['top_5_accuracy']$$,
           'batch_size=10', 2, object_table => 'custom_function_table');
RESET client_min_messages;
SELECT metrics_type, object_table FROM six_top3_summary;
SELECT evaluate('six_top1', 'six_packed', 'six_eval1');
SELECT evaluate('six_top3', 'six_packed', 'six_eval3');
SELECT evaluate('six_top5', 'six_packed', 'six_eval5');
SELECT predict('six_top1', 'six', 'id', 'x', 'six_pred1');
SELECT predict('six_top3', 'six', 'id', 'x', 'six_pred3');
SELECT predict('six_top5', 'six', 'id', 'x', 'six_pred5');
CREATE FUNCTION pg_temp.share_top(pred regclass, k integer) RETURNS double precision LANGUAGE plpgsql AS $$
DECLARE r double precision;
BEGIN
    EXECUTE format('SELECT avg((p.rank <= $1)::int) FROM %s p JOIN compat_test.six s ON s.id = p.id
                     WHERE p.class_value = s.cls::text', pred) INTO r USING k;
    RETURN r;
END $$;
SELECT e.k, e.metrics_type, abs(e.metric - pg_temp.share_top(format('six_pred%s', e.k)::regclass, e.k)) < 1e-9
           AS metric_is_top_k,
       e.metric < 1 AS not_trivial
  FROM (SELECT 1 AS k, * FROM six_eval1 UNION ALL SELECT 3, * FROM six_eval3
        UNION ALL SELECT 5, * FROM six_eval5) e
 ORDER BY e.k;
SELECT (SELECT metric FROM six_eval1) < (SELECT metric FROM six_eval3) AS k1_below_k3,
       (SELECT metric FROM six_eval3) < (SELECT metric FROM six_eval5) AS k3_below_k5;
-- the training metric is the same top-k
SELECT abs(s.training_metrics_final - e.metric) < 1e-6 AS training_metric_is_top_k
  FROM six_top3_summary s, six_eval3 e;
-- fit_multiple, with the object table the selection table records
SELECT load_model_selection_table('six_arch', 'six_mst', ARRAY[1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['top_3_accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['top_5_accuracy']$$],
    ARRAY['batch_size=10'], 'custom_function_table');
SELECT model_arch_table, object_table FROM six_mst_summary;
SET client_min_messages = warning;
SELECT fit_multiple('six_packed', 'six_multi', 'six_mst', 2);
RESET client_min_messages;
SELECT object_table FROM six_multi_summary;
SELECT mst_key, metrics_type FROM six_multi_info ORDER BY mst_key;
SELECT evaluate('six_multi', 'six_packed', 'six_multi_eval', NULL, 1);
SELECT abs(i.training_metrics_final - e.metric) < 1e-6 AS info_equals_evaluate
  FROM six_multi_info i, six_multi_eval e WHERE i.mst_key = 1;
-- a function the object table lacks, an object table that is not one
SELECT fit('six_packed', 'six_bad', 'six_arch', 1,
           $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['top_4_accuracy']$$,
           'batch_size=10', 1, object_table => 'custom_function_table');
\echo :LAST_ERROR_SQLSTATE
SELECT fit('six_packed', 'six_bad', 'six_arch', 1,
           $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['top_3_accuracy']$$,
           'batch_size=10', 1, object_table => 'six');
\echo :LAST_ERROR_SQLSTATE
SELECT load_model_selection_table('six_arch', 'six_mst_bad', ARRAY[1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['top_2_accuracy']$$],
    ARRAY['batch_size=10'], 'custom_function_table');
\echo :LAST_ERROR_SQLSTATE
SELECT to_regclass('six_bad') IS NULL AND to_regclass('six_mst_bad') IS NULL AS no_table_left;
-- MADlib's custom Python functions cannot run here: refused, with a hint
SELECT load_custom_function('custom_function_table', '\x80'::bytea, 'sum_fn', 'returns sum');
\echo :LAST_ERROR_SQLSTATE
SELECT delete_custom_function('custom_function_table', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT delete_custom_function('custom_function_table', 'top_3_accuracy');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS functions_kept FROM custom_function_table;
-- MADlib's AutoML, called as MADlib scripts call it (docs/automl.md)
SET client_min_messages = warning;
SELECT madlib_keras_automl('iris_train_packed', 'automl_out', 'iris_model_arch', 'automl_mst', ARRAY[1],
    $${'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['Adam'], 'lr': [0.001, 0.1, 'log']}], 'metrics': ['accuracy']}$$,
    $${'batch_size': [16], 'epochs': [1]}$$, 'hyperband', 'R=3, eta=3, skip_last=0', 1);
RESET client_min_messages;
SELECT count(*) AS configs, count(*) FILTER (WHERE i = 1) AS second_round FROM automl_out_info;
SELECT count(*) AS best FROM automl_mst;
SELECT hyperband_schedule('hb_schedule', 6, 3, 0);
SELECT * FROM hb_schedule ORDER BY s DESC, i;
DROP TABLE automl_out, automl_out_info, automl_out_summary, automl_mst, automl_mst_summary, hb_schedule;
SELECT load_top_k_accuracy_function() LIKE 'load_top_k_accuracy_function:%' AS help;

-- ---------------------------------------------------------------------
-- predict 'response' with hand-set weights: softmax(5 x), so the class is
-- the index of the largest feature, known before predicting
-- ---------------------------------------------------------------------
SELECT load_keras_model('hand_arch', '{"class_name": "Sequential", "config": {"name": "hand", "layers": [{"class_name": "Dense", "config": {"name": "d", "batch_input_shape": [null, 3], "units": 3, "activation": "softmax", "use_bias": true}}]}}',
    weights_from_array(ARRAY[5, 0, 0, 0, 5, 0, 0, 0, 5, 0, 0, 0]::real[]), 'argmax');
CREATE TABLE hand_rows (id integer, x double precision[]);
INSERT INTO hand_rows SELECT i, ARRAY[sin(i), cos(i * 3), sin(i * 7 + 1)] FROM generate_series(1, 40) i;
SELECT madlib_keras_predict_byom('hand_arch', 1, 'hand_rows', 'id', 'x', 'hand_byom', 'response', NULL,
                                 ARRAY['first', 'second', 'third']);
SELECT count(*) AS n_rows,
       bool_and(p.class_value = (ARRAY['first', 'second', 'third'])[
           (SELECT i FROM unnest(r.x) WITH ORDINALITY AS u(v, i) ORDER BY v DESC LIMIT 1)]) AS argmax_class,
       count(DISTINCT p.class_value) AS classes_seen
  FROM hand_byom p JOIN hand_rows r USING (id);
-- the same through predict, on a model table made by fit whose weights
-- are then set by hand: the class values come from its summary
CREATE TABLE hand_train (id integer, x double precision[], label text);
INSERT INTO hand_train SELECT id, x, (ARRAY['a', 'b', 'c'])[1 + id % 3] FROM hand_rows;
SELECT training_preprocessor_dl('hand_train', 'hand_packed', 'label', 'x', NULL, 1.0, NULL, '1');
SELECT load_keras_model('hand_arch', '{"class_name": "Sequential", "config": {"name": "hand", "layers": [{"class_name": "Dense", "config": {"name": "d", "batch_input_shape": [null, 3], "units": 3, "activation": "softmax", "use_bias": true}}]}}');
SET client_min_messages = warning;
SELECT fit('hand_packed', 'hand_model', 'hand_arch', 2, :cp, 'batch_size=8', 1);
RESET client_min_messages;
UPDATE hand_model SET model_weights = weights_from_array(ARRAY[5, 0, 0, 0, 5, 0, 0, 0, 5, 0, 0, 0]::real[]);
SELECT label_class_values FROM hand_model_summary;
SELECT predict('hand_model', 'hand_rows', 'id', 'x', 'hand_pred', 'response');
SELECT count(*) AS n_rows,
       bool_and(p.class_value = (ARRAY['a', 'b', 'c'])[
           (SELECT i FROM unnest(r.x) WITH ORDINALITY AS u(v, i) ORDER BY v DESC LIMIT 1)]) AS argmax_class
  FROM hand_pred p JOIN hand_rows r USING (id);

RESET search_path;
DROP SCHEMA compat_test CASCADE;
DROP SCHEMA compat_other CASCADE;
