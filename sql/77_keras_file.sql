-- 77_keras_file.sql: Keras model files in (docs/interchange.md, "Keras
-- files", issue 29): load_keras_file on .keras archives (Keras 3 and the
-- Keras 2.13 layout) and legacy .h5 files of an MLP, a CNN with
-- BatchNormalization and an LSTM text model (test/data/keras_files.sql,
-- written with h5py to Keras' layouts by test/keras_files/gen_keras_files.py,
-- not by Keras itself); the weights equal those load_keras_model loads from
-- the same config and flat weights, and predict the same; hostile files
-- refused with a clean error, the server never crashing (the decoding runs
-- in a child process); a nested model inlined, predicting as numpy does.
SET client_min_messages = warning;
CREATE SCHEMA kf_test;
SET search_path = kf_test, madlib_dl, public;
\set ECHO none
\i test/data/keras_files.sql
\set ECHO all
RESET client_min_messages;

-- help: fn() the summary, fn('usage') (any case, 'help', '?') the usage,
-- other text the summary; the help overloads take no argument or one
-- varchar, so every call with the file's bytes is the function itself
SELECT load_keras_file() LIKE 'load_keras_file: %load_keras_file(''usage'');' AS summary;
SELECT load_keras_file('usage') LIKE 'load_keras_file: %.keras%.h5%Nested models%load_onnx_model(''usage'');' AS usage,
       load_keras_file('USAGE') = load_keras_file('?') AS any_case,
       load_keras_file('other') = load_keras_file() AS other_text;
SELECT p.oid::regprocedure AS overloads FROM pg_proc p
 WHERE p.pronamespace = 'madlib_dl'::regnamespace AND p.proname = 'load_keras_file' ORDER BY 1::text;

SELECT load_keras_file('kf_arch', :'mlp_keras', 'mlp keras', 'Keras 3 .keras');
SELECT load_keras_file('kf_arch', :'cnn_keras', 'cnn keras');
SELECT load_keras_file('kf_arch', :'lstm_keras', 'lstm keras');
SELECT load_keras_file('kf_arch', :'mlp_h5', 'mlp h5', 'legacy .h5');
SELECT load_keras_file('kf_arch', :'cnn_h5', 'cnn h5');
SELECT load_keras_file('kf_arch', :'lstm_h5', 'lstm h5');
SELECT load_keras_file('kf_arch', :'mlp_k213_keras', 'mlp k213');
SELECT load_keras_file('kf_arch', :'mlp_f64_keras', 'mlp f64');
SELECT load_keras_file('kf_arch', :'mlp_f16_keras', 'mlp f16');
SELECT load_keras_model('kf_arch', :'mlp_arch', :'mlp_weights', 'mlp ref');
SELECT load_keras_model('kf_arch', :'cnn_arch', :'cnn_weights', 'cnn ref');
SELECT load_keras_model('kf_arch', :'lstm_arch', :'lstm_weights', 'lstm ref');

-- the same weights as load_keras_model's (float16 rounded), the config kept
SELECT a.name, a.description, octet_length(a.model_weights) / 4 AS n_weights,
       a.model_weights = r.model_weights AS same_weights,
       a.model_arch::jsonb->'config'->'layers'->1->>'class_name' AS first_layer
  FROM kf_arch a JOIN kf_arch r ON r.name = split_part(a.name, ' ', 1) || ' ref'
 WHERE a.name NOT LIKE '% ref' ORDER BY a.model_id;
SELECT (SELECT max(abs(x - y)) FROM unnest(weights_to_array(a.model_weights), weights_to_array(r.model_weights)) u(x, y))
       < 1e-2 AS f16_close
  FROM kf_arch a, kf_arch r WHERE a.name = 'mlp f16' AND r.name = 'mlp ref';

-- predict: the file's model and load_keras_model's give the same probabilities
CREATE TABLE mlp_data AS SELECT ord::integer AS id, ARRAY(SELECT jsonb_array_elements_text(v)::real) AS x
  FROM jsonb_array_elements(:'mlp_data') WITH ORDINALITY t(v, ord);
CREATE TABLE lstm_data AS SELECT ord::integer AS id, ARRAY(SELECT jsonb_array_elements_text(v)::real) AS x
  FROM jsonb_array_elements(:'lstm_data') WITH ORDINALITY t(v, ord);
SELECT predict_byom('kf_arch', (SELECT model_id FROM kf_arch WHERE name = 'mlp keras'), 'mlp_data', 'id', 'x', 'p1');
SELECT predict_byom('kf_arch', (SELECT model_id FROM kf_arch WHERE name = 'mlp h5'), 'mlp_data', 'id', 'x', 'p2');
SELECT predict_byom('kf_arch', (SELECT model_id FROM kf_arch WHERE name = 'mlp ref'), 'mlp_data', 'id', 'x', 'p3');
SELECT predict_byom('kf_arch', (SELECT model_id FROM kf_arch WHERE name = 'lstm keras'), 'lstm_data', 'id', 'x', 'p4');
SELECT predict_byom('kf_arch', (SELECT model_id FROM kf_arch WHERE name = 'lstm ref'), 'lstm_data', 'id', 'x', 'p5');
SELECT count(*) AS n, bool_and(p1.prob = p2.prob AND p1.prob = p3.prob) AS mlp_same
  FROM p1 JOIN p2 USING (id, class_value) JOIN p3 USING (id, class_value);
SELECT count(*) AS n, bool_and(p4.prob = p5.prob) AS lstm_same FROM p4 JOIN p5 USING (id, class_value);

-- the decoder's view: format, each tensor's layer, position and shape
SELECT format, jsonb_array_length(tensors) AS n, tensors->2 AS third, octet_length(model_weights)
  FROM _keras_file_read(:'lstm_keras');
SELECT format, tensors->2 AS third FROM _keras_file_read(:'lstm_h5');

-- refusals: SQLSTATE, message, hint; nothing is written
\set VERBOSITY default
\set SHOW_CONTEXT never
SELECT load_keras_file('kf_arch', :'bad_truncated');
SELECT load_keras_file('kf_arch', :'bad_garbage');
SELECT load_keras_file('kf_arch', :'bad_h5garbage');
SELECT load_keras_file('kf_arch', :'bad_h5truncated');
SELECT load_keras_file('kf_arch', :'bad_noconfig');
SELECT load_keras_file('kf_arch', :'bad_missing');
SELECT load_keras_file('kf_arch', :'bad_shape');
SELECT load_keras_file('kf_arch', :'bad_int');
SELECT load_keras_file('kf_arch', '\x00010203');
SELECT load_keras_file('kf_arch', NULL);
SET madlib_dl.max_model_memory = '512kB';
SELECT load_keras_file('kf_arch', :'bad_bomb');
RESET madlib_dl.max_model_memory;
SELECT load_keras_file('kf_arch', :'bad_emptyh5');
\echo :LAST_ERROR_SQLSTATE
-- a nested model (Sequential([base, Dense]), base a functional model: the
-- transfer-learning pattern), Keras 2's .h5 and Keras 3's .keras: the
-- nested model is inlined, its tensors named by the inner layer (dense,
-- the .h5's model_weights/base/dense/kernel:0, ...); both predict the
-- probabilities numpy computes from the generator's weights
SELECT tensors->0->>'layer' AS layer, tensors->0->>'path' AS path FROM _keras_file_read(:'nested_h5');
SELECT tensors->0->>'layer' AS layer, tensors->0->>'path' AS path FROM _keras_file_read(:'nested_keras');
SELECT load_keras_file('kf_arch', :'nested_h5', 'nested h5');
SELECT load_keras_file('kf_arch', :'nested_keras', 'nested keras');
SELECT name, octet_length(model_weights) / 4 AS n_weights FROM kf_arch WHERE name LIKE 'nested%' ORDER BY model_id;
CREATE TABLE nested_data AS SELECT ord::integer AS id, ARRAY(SELECT jsonb_array_elements_text(v)::real) AS x
  FROM jsonb_array_elements(:'nested_data') WITH ORDINALITY t(v, ord);
CREATE TABLE nested_want AS SELECT r.ord::integer AS id, (c.ord - 1)::integer AS k, c.v::text::float8 AS prob
  FROM jsonb_array_elements(:'nested_pred') WITH ORDINALITY r(v, ord),
       jsonb_array_elements(r.v) WITH ORDINALITY c(v, ord);
SELECT predict_byom('kf_arch', (SELECT model_id FROM kf_arch WHERE name = 'nested h5'), 'nested_data', 'id', 'x', 'p6');
SELECT predict_byom('kf_arch', (SELECT model_id FROM kf_arch WHERE name = 'nested keras'), 'nested_data', 'id', 'x', 'p7');
SELECT count(*) AS n, max(abs(p6.prob - w.prob)) < 1e-5 AS h5_as_numpy, max(abs(p7.prob - w.prob)) < 1e-5 AS keras_as_numpy
  FROM nested_want w JOIN p6 ON p6.id = w.id AND p6.class_value = w.k::text
       JOIN p7 ON p7.id = w.id AND p7.class_value = w.k::text;
\set VERBOSITY terse
SELECT count(*) AS models FROM kf_arch;

RESET search_path;
SET client_min_messages = warning;
DROP SCHEMA kf_test CASCADE;
