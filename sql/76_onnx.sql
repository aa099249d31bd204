-- 76_onnx.sql: ONNX in and out (docs/interchange.md, issue 29).
-- load_onnx_model on eight models PyTorch exported (test/data/onnx_torch.sql,
-- made by test/interchange/gen_torch.py): an MLP, a CNN with BatchNorm
-- taking NCHW rows, a residual block, an LSTM text classifier, a model of
-- two inputs, a Conv1d text model (x.view(x.size(0), -1), LayerNorm), a
-- bidirectional LSTM, an MLP with GELU (Div, Erf, Add, Mul, Mul);
-- predict_byom within 1e-5 of PyTorch; a warm-start fit and evaluate from
-- the imported weights; export_onnx of the trained model and its import
-- predicting the same; import -> export -> import keeping the weights;
-- hostile files refused.  (ONNX Runtime and onnx.checker run on the
-- exports in scripts/test.sh's interchange step.)
SET client_min_messages = warning;
CREATE SCHEMA onnx_test;
SET search_path = onnx_test, madlib_dl, public;
\set ECHO none
\i test/data/onnx_torch.sql
\set ECHO all
RESET client_min_messages;
-- errors without CONTEXT lines: they name internal functions' line numbers
\set SHOW_CONTEXT never

SELECT load_onnx_model('onnx_arch', :'mlp_onnx', 'mlp', 'PyTorch MLP');
SELECT load_onnx_model('onnx_arch', :'cnn_onnx', 'cnn', 'PyTorch CNN, NCHW');
SELECT load_onnx_model('onnx_arch', :'resblock_onnx', 'resblock', 'PyTorch residual block');
SELECT load_onnx_model('onnx_arch', :'lstm_onnx', 'lstm', 'PyTorch LSTM text classifier');
SELECT load_onnx_model('onnx_arch', :'twoin_onnx', 'twoin', 'PyTorch, two inputs');
SELECT load_onnx_model('onnx_arch', :'textcnn_onnx', 'textcnn', 'PyTorch Conv1d text model');
SELECT load_onnx_model('onnx_arch', :'bilstm_onnx', 'bilstm', 'PyTorch bidirectional LSTM');
SELECT load_onnx_model('onnx_arch', :'gelu_onnx', 'gelu', 'PyTorch MLP with GELU');
SELECT model_id, name, octet_length(model_weights) / 4 AS n_weights,
       (SELECT array_agg(io || ' ' || name || ' ' || shape::text ORDER BY io DESC, position)
          FROM _arch_io(model_arch)) AS io
  FROM onnx_arch ORDER BY model_id;
-- the CNN takes NCHW rows: one Permute after the input, then channels last
SELECT layer_name, layer_type, output_shape FROM keras_model_summary(
    (SELECT model_arch FROM onnx_arch WHERE name = 'cnn'));

-- predict_byom: PyTorch's probabilities, within 1e-5
SELECT predict_byom('onnx_arch', 1, 'mlp_data', 'id', 'x', 'mlp_pred');
SELECT predict_byom('onnx_arch', 2, 'cnn_data', 'id', 'x', 'cnn_pred');
SELECT predict_byom('onnx_arch', 3, 'resblock_data', 'id', 'x', 'resblock_pred');
SELECT predict_byom('onnx_arch', 4, 'lstm_data', 'id', 'x', 'lstm_pred');
SELECT predict_byom('onnx_arch', 5, 'twoin_data', 'id', 'x, x2', 'twoin_pred');
SELECT predict_byom('onnx_arch', 6, 'textcnn_data', 'id', 'x', 'textcnn_pred');
SELECT predict_byom('onnx_arch', 7, 'bilstm_data', 'id', 'x', 'bilstm_pred');
SELECT predict_byom('onnx_arch', 8, 'gelu_data', 'id', 'x', 'gelu_pred');
SELECT m.name, count(*) AS n_probs,
       max(abs(b.prob - t.prob[b.class_value::int + 1])) < 1e-5 AS matches_pytorch
  FROM (SELECT 'mlp' AS name, * FROM mlp_pred UNION ALL SELECT 'cnn', * FROM cnn_pred
        UNION ALL SELECT 'resblock', * FROM resblock_pred UNION ALL SELECT 'lstm', * FROM lstm_pred
        UNION ALL SELECT 'twoin', * FROM twoin_pred UNION ALL SELECT 'textcnn', * FROM textcnn_pred
        UNION ALL SELECT 'bilstm', * FROM bilstm_pred UNION ALL SELECT 'gelu', * FROM gelu_pred) b
  JOIN (SELECT 'mlp' AS name, * FROM mlp_torch UNION ALL SELECT 'cnn', * FROM cnn_torch
        UNION ALL SELECT 'resblock', * FROM resblock_torch UNION ALL SELECT 'lstm', * FROM lstm_torch
        UNION ALL SELECT 'twoin', * FROM twoin_torch UNION ALL SELECT 'textcnn', * FROM textcnn_torch
        UNION ALL SELECT 'bilstm', * FROM bilstm_torch UNION ALL SELECT 'gelu', * FROM gelu_torch) t
       USING (name, id)
  JOIN (VALUES ('mlp'), ('cnn'), ('resblock'), ('lstm'), ('twoin'), ('textcnn'), ('bilstm'), ('gelu')) m(name) USING (name)
 GROUP BY m.name ORDER BY m.name;

-- predict_row on the imported models (the architecture table and its
-- model_id): PyTorch's class for every row (the two-input model takes
-- two arrays, which predict_row does not)
CREATE FUNCTION pg_temp.predict_row_matches(name text, model_id integer,
                                            OUT n_rows bigint, OUT pytorch_class boolean)
LANGUAGE plpgsql AS $f$
BEGIN
    EXECUTE format($q$SELECT count(*), bool_and(predict_row('onnx_arch', d.x, %s) =
                       (SELECT (i - 1)::text FROM unnest(t.prob) WITH ORDINALITY u(p, i)
                         ORDER BY p DESC LIMIT 1))
                     FROM %I d JOIN %I t USING (id)$q$, model_id, name || '_data', name || '_torch')
       INTO n_rows, pytorch_class;
END
$f$;
SELECT m.name, r.*
  FROM (VALUES ('mlp', 1), ('cnn', 2), ('resblock', 3), ('lstm', 4), ('textcnn', 6),
               ('bilstm', 7), ('gelu', 8)) m(name, model_id),
       pg_temp.predict_row_matches(m.name, m.model_id) r
 ORDER BY m.name;

-- warm start: fit from the imported CNN's weights; the loss falls
CREATE TABLE cnn_train AS SELECT id, x, (id % 3)::integer AS y FROM cnn_data;
SELECT training_preprocessor_dl('cnn_train', 'cnn_packed', 'y', 'x', NULL, 1.0, NULL, '1');
SET client_min_messages = warning;
SELECT fit('cnn_packed', 'cnn_model', 'onnx_arch', 2,
    $$loss='categorical_crossentropy', optimizer='SGD(learning_rate=0.05)', metrics=['accuracy']$$,
    'batch_size=6, epochs=1, shuffle=False', 6, FALSE, NULL, 1);
RESET client_min_messages;
SELECT array_length(training_loss, 1) AS n_losses,
       training_loss[6] < training_loss[1] AS loss_went_down
  FROM cnn_model_summary;

-- evaluate the warm-started model
SELECT validation_preprocessor_dl('cnn_train', 'cnn_val', 'y', 'x', 'cnn_packed');
SELECT evaluate('cnn_model', 'cnn_val', 'cnn_eval');
SELECT loss > 0 AS has_loss, metric BETWEEN 0 AND 1 AS accuracy_in_range FROM cnn_eval;

-- export_onnx of the trained model, and that file imported: the same predictions
SELECT substr(export_onnx('cnn_model'), 1, 2) AS starts_with_ir_version,
       octet_length(export_onnx('cnn_model')) > 1000 AS has_weights;
SELECT load_onnx_model('onnx_arch', export_onnx('cnn_model'), 'cnn trained', 'exported by export_onnx');
SELECT predict('cnn_model', 'cnn_data', 'id', 'x', 'cnn_trained_pred');
SELECT predict_byom('onnx_arch', 9, 'cnn_data', 'id', 'x', 'cnn_reimported_pred');
SELECT count(*) AS n_probs, max(abs(a.prob - b.prob)) < 1e-6 AS same_predictions
  FROM cnn_trained_pred a JOIN cnn_reimported_pred b USING (id, class_value);

-- import -> export -> import: the same weights for every imported model
SELECT a.name, b.model_weights = a.model_weights AS same_weights
  FROM onnx_arch a,
       LATERAL (SELECT (_onnx_import(_onnx_export(a.model_arch, a.model_weights, 17))).*) b
 WHERE a.model_id <= 8 ORDER BY a.model_id;
-- opsets 13 to 17 are written
SELECT opset, octet_length(export_onnx('cnn_model', NULL, opset)) > 0 AS exported
  FROM generate_series(13, 17) opset;

-- errors
\set VERBOSITY default
SELECT load_onnx_model('onnx_arch', :'hostile_unsupported');
SELECT load_onnx_model('onnx_arch', :'hostile_cycle');
SELECT load_onnx_model('onnx_arch', :'hostile_bigtensor');
SELECT octet_length(:'hostile_bigtensor'::bytea) AS bigtensor_file_bytes;
SELECT load_onnx_model('onnx_arch', substr(:'mlp_onnx'::bytea, 1, 500));
SELECT load_onnx_model('onnx_arch', '\xdeadbeef'::bytea);
SELECT load_onnx_model('onnx_arch', ''::bytea);
SELECT load_onnx_model('onnx_arch', NULL);
SELECT export_onnx('cnn_model', NULL, 12);
SELECT export_onnx('cnn_model', 3);
SELECT export_onnx('no_such_table');
SELECT count(*) AS models_after_errors FROM onnx_arch;
\set VERBOSITY terse

SET client_min_messages = warning;
DROP SCHEMA onnx_test CASCADE;
RESET client_min_messages;
