--
-- 74_sequence_models: text and sequence models through the SQL API
-- (issue 18).  test/data/tfjs_sequences.sql (made by
-- test/unit/fixtures/gen_sequences.js) holds two models TensorFlow.js
-- built: Embedding(12, 5) + LSTM(6) + a softmax head on 7 token ids
-- (prefix el), and Embedding(12, 4) + Conv1D(6, 3, relu) +
-- GlobalMaxPooling1D + a softmax head on 9 token ids (prefix ec); their
-- initial weights; 6 rows of token ids (numbers in real[]) with their
-- classes; TF.js' predictions; and the weights TF.js reached after each
-- of two full-batch SGD(lr=0.1) steps, with its predictions after them.
-- Through load_keras_model, predict_byom, fit and predict the engine must
-- predict as TF.js does within 1e-5 and train as it does within 2e-4.
-- Then ids an Embedding cannot look up, named with their row and buffer,
-- and attributes still refused.
--
SET search_path = madlib_dl, public;
\set ECHO none
\i test/data/tfjs_sequences.sql
\set ECHO all
CREATE FUNCTION pg_temp.max_diff(a real[], b real[]) RETURNS double precision LANGUAGE sql AS
$$ SELECT max(abs(x::float8 - y::float8)) FROM unnest(a, b) AS u(x, y) $$;
\set cp '$$loss=''categorical_crossentropy'', optimizer=''SGD(lr=0.1)'', metrics=[''accuracy'']$$'

-- the architectures, with TF.js' initial weights
SELECT load_keras_model('seq_arch', :'el_arch', weights_from_array((SELECT weights FROM el_init)),
                        'tfjs embedding lstm');
SELECT load_keras_model('seq_arch', :'ec_arch', weights_from_array((SELECT weights FROM ec_init)),
                        'tfjs embedding conv1d');
SELECT * FROM keras_model_summary(:'el_arch'::json);
SELECT * FROM keras_model_summary(:'ec_arch'::json);
SELECT * FROM keras_model_summary('{"class_name": "Sequential", "config": {"name": "s", "layers": [
  {"class_name": "InputLayer", "config": {"name": "x", "batch_input_shape": [null, 10]}},
  {"class_name": "Embedding", "config": {"name": "emb", "input_dim": 50, "output_dim": 8}},
  {"class_name": "Bidirectional", "config": {"name": "bi", "merge_mode": "concat",
   "layer": {"class_name": "GRU", "config": {"name": "gru", "units": 4, "reset_after": true, "return_sequences": true}}}},
  {"class_name": "Conv1D", "config": {"name": "causal", "filters": 3, "kernel_size": 3, "padding": "causal", "dilation_rate": 2}},
  {"class_name": "LayerNormalization", "config": {"name": "ln"}},
  {"class_name": "GlobalAveragePooling1D", "config": {"name": "gap"}},
  {"class_name": "Dense", "config": {"name": "head", "units": 2, "activation": "softmax"}}]}}'::json);
SELECT input_shape, output_shape, n_params, n_layers FROM madlib_dl._arch_info(:'el_arch');
SELECT input_shape, output_shape, n_params, n_layers FROM madlib_dl._arch_info(:'ec_arch');

-- predict_byom with TF.js' initial weights: TF.js' probabilities
SELECT predict_byom('seq_arch', 1, 'el_data', 'id', 'x', 'el_byom');
SELECT count(*) AS n_rows,
       max(abs(b.prob - p.prob[b.class_value::int + 1])) < 1e-5 AS matches_tfjs
  FROM el_byom b JOIN el_pred p USING (id);
SELECT predict_byom('seq_arch', 2, 'ec_data', 'id', 'x', 'ec_byom');
SELECT count(*) AS n_rows,
       max(abs(b.prob - p.prob[b.class_value::int + 1])) < 1e-5 AS matches_tfjs
  FROM ec_byom b JOIN ec_pred p USING (id);

-- fit: one buffer, so each epoch is one full-batch step as TF.js' trainOnBatch
SELECT training_preprocessor_dl('el_data', 'el_packed', 'cls', 'x', 6, 1.0, NULL, '1');
SELECT training_preprocessor_dl('ec_data', 'ec_packed', 'cls', 'x', 6, 1.0, NULL, '1');
SET client_min_messages = warning;
SELECT fit('el_packed', 'el_step1', 'seq_arch', 1, :cp, 'batch_size=6, epochs=1, shuffle=False', 1);
SELECT fit('el_packed', 'el_step2', 'seq_arch', 1, :cp, 'batch_size=6, epochs=2, shuffle=False', 1);
SELECT fit('ec_packed', 'ec_step1', 'seq_arch', 2, :cp, 'batch_size=6, epochs=1, shuffle=False', 1);
SELECT fit('ec_packed', 'ec_step2', 'seq_arch', 2, :cp, 'batch_size=6, epochs=2, shuffle=False', 1);
RESET client_min_messages;
SELECT 'el' AS model, e.step,
       pg_temp.max_diff(weights_to_array(m.model_weights), e.weights) < 2e-4 AS matches_tfjs,
       pg_temp.max_diff(weights_to_array(m.model_weights), i.weights) > 1e-2 AS moved
  FROM el_expected e
  JOIN (SELECT 1 AS step, model_weights FROM el_step1
        UNION ALL SELECT 2, model_weights FROM el_step2) m USING (step), el_init i
UNION ALL
SELECT 'ec', e.step,
       pg_temp.max_diff(weights_to_array(m.model_weights), e.weights) < 2e-4,
       pg_temp.max_diff(weights_to_array(m.model_weights), i.weights) > 1e-2
  FROM ec_expected e
  JOIN (SELECT 1 AS step, model_weights FROM ec_step1
        UNION ALL SELECT 2, model_weights FROM ec_step2) m USING (step), ec_init i
 ORDER BY 1, 2;

-- predict with the fitted models: TF.js' probabilities after its two steps
SELECT predict('el_step2', 'el_data', 'id', 'x', 'el_pred2');
SELECT count(*) AS n_rows,
       max(abs(b.prob - p.prob_after[b.class_value::int + 1])) < 1e-5 AS matches_tfjs
  FROM el_pred2 b JOIN el_pred p USING (id);
SELECT predict('ec_step2', 'ec_data', 'id', 'x', 'ec_pred2');
SELECT count(*) AS n_rows,
       max(abs(b.prob - p.prob_after[b.class_value::int + 1])) < 1e-5 AS matches_tfjs
  FROM ec_pred2 b JOIN ec_pred p USING (id);

-- a model made here (weights drawn from the fit's seed: orthogonal
-- recurrent kernels) trains, and gives the same bytes on every path:
-- two segments with parallel workers and the leader alone
SELECT load_keras_model('seq_arch', :'el_arch', NULL, 'no weights');
SELECT training_preprocessor_dl('el_data', 'el_packed2', 'cls', 'x', 3, 1.0, NULL, '2');
SELECT validation_preprocessor_dl('el_data', 'el_valid', 'cls', 'x', 'el_packed2', 6);
SET client_min_messages = warning;
SELECT fit('el_packed2', 'el_seg2', 'seq_arch', 3, :cp, 'batch_size=2, epochs=3, seed=7', 2,
           validation_table => 'el_valid');
SET max_parallel_workers = 0;
SELECT fit('el_packed2', 'el_seg2_w0', 'seq_arch', 3, :cp, 'batch_size=2, epochs=3, seed=7', 2,
           validation_table => 'el_valid');
RESET max_parallel_workers;
RESET client_min_messages;
SELECT md5(a.model_weights) = md5(b.model_weights) AS leader_alone_same,
       s.training_loss_final > 0 AND s.validation_loss_final > 0 AS losses_reported
  FROM el_seg2 a, el_seg2_w0 b, el_seg2_summary s;

-- token ids an Embedding cannot look up are refused, naming the row:
-- predicting (by the row's id), training (its row, buffer and table),
-- validating and evaluating
\set VERBOSITY default
\set SHOW_CONTEXT never
INSERT INTO el_data VALUES (7, '{0, 1, 2, 12, 4, 5, 6}', 1), (8, '{0, 1, 2.5, 3, 4, 5, 6}', 0);
CREATE VIEW el_out_of_range AS SELECT * FROM el_data WHERE id <> 8;
CREATE VIEW el_fraction AS SELECT * FROM el_data WHERE id <> 7;
SELECT predict_byom('seq_arch', 1, 'el_out_of_range', 'id', 'x', 'el_bad');
SELECT predict_byom('seq_arch', 1, 'el_fraction', 'id', 'x', 'el_bad');
SELECT predict_byom('seq_arch', 1, 'el_data', 'id', 'x', 'el_bad', normalizing_const => 2.0);
SELECT training_preprocessor_dl('el_data', 'el_packed_bad', 'cls', 'x', 4, 1.0, NULL, '1');
SELECT fit('el_packed_bad', 'el_bad_fit', 'seq_arch', 1, :cp, 'batch_size=8, epochs=1, seed=1', 1);
-- the same with averaging every 2 mini-batches (the rounds' own window reader)
SELECT fit('el_packed_bad', 'el_bad_fit', 'seq_arch', 1, :cp, 'batch_size=8, epochs=1, seed=1', 1,
           averaging_period => 2);
SELECT validation_preprocessor_dl('el_data', 'el_valid_bad', 'cls', 'x', 'el_packed', 4);
SELECT fit('el_packed', 'el_bad_fit', 'seq_arch', 1, :cp, 'batch_size=8, epochs=1, seed=1', 1,
           validation_table => 'el_valid_bad');
SELECT evaluate('el_step2', 'el_valid_bad', 'el_eval_bad');
\set VERBOSITY terse
\set SHOW_CONTEXT errors
SELECT count(*) AS tables_left FROM pg_tables WHERE tablename IN ('el_bad', 'el_bad_fit', 'el_eval_bad');

-- still refused, naming the layer and the attribute (0A000)
\set VERBOSITY default
\set SHOW_CONTEXT never
SELECT load_keras_model('seq_arch', replace(:'el_arch', '"mask_zero":null', '"mask_zero":true')::json);
\echo :LAST_ERROR_SQLSTATE
SELECT load_keras_model('seq_arch', replace(:'el_arch', '"dropout":0,', '"dropout":0.25,')::json);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM keras_model_summary(replace(:'el_arch', '"return_state":false', '"return_state":true')::json);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
\set SHOW_CONTEXT errors
SELECT count(*) AS models FROM seq_arch;
