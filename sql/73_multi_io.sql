--
-- 73_multi_io: models of several inputs and outputs through the SQL API
-- (issue 15), with MADlib's multi-io interface: comma lists of dependent
-- and independent variables in the preprocessors and in predict, one
-- packed column per variable, lists in the summaries.
-- test/data/tfjs_multi_io.sql (made by test/unit/fixtures/gen_graphs.js)
-- holds two functional models TensorFlow.js built: two_inputs (a vector
-- and an image, joined by Concatenate, one softmax head) and two_outputs
-- (a softmax head and a regression head, the regression loss weighted
-- 0.5), their initial weights, their rows, TF.js' predictions and the
-- weights after each of two full-batch SGD and Adam steps.  Through
-- load_keras_model, predict_byom, the preprocessors, fit, fit_multiple,
-- evaluate and predict the engine must predict as TF.js does within 1e-5
-- and train as it does within 2e-4; every transport gives the same bytes.
--
SET search_path = madlib_dl, public;
\set ECHO none
\i test/data/tfjs_multi_io.sql
\set ECHO all
CREATE FUNCTION pg_temp.max_diff(a real[], b real[]) RETURNS double precision LANGUAGE sql AS
$$ SELECT max(abs(x::float8 - y::float8)) FROM unnest(a, b) AS u(x, y) $$;

-- the architectures load, each with TF.js' initial weights; their inputs
-- and outputs, in the order of the packed variables
SELECT load_keras_model('mio_arch', :'ti_arch', weights_from_array((SELECT weights FROM ti_init)),
                        'two inputs');
SELECT load_keras_model('mio_arch', :'to_arch', weights_from_array((SELECT weights FROM to_init)),
                        'two outputs');
SELECT m.model_id, a.* FROM mio_arch m, madlib_dl._arch_io(m.model_arch) a
 ORDER BY m.model_id, a.io, a."position";
SELECT layer_name, layer_type, output_shape FROM keras_model_summary(:'to_arch'::json);

-- predict_byom with TF.js' initial weights: every output's probabilities;
-- two inputs as MADlib names them, 'vec, img'; two outputs with
-- dependent_count 2 (class names dependent_var_0, dependent_var_1)
SELECT predict_byom('mio_arch', 1, 'ti_data', 'id', 'vec, img', 'ti_byom');
SELECT count(*) AS n_rows, min(class_name) AS class_name,
       max(abs(b.prob - p.prob[b.class_value::int + 1])) < 1e-5 AS matches_tfjs
  FROM ti_byom b JOIN ti_pred p ON p.id = b.id;
SELECT predict_byom('mio_arch', 2, 'to_data', 'id', 'x', 'to_byom', 'prob', false, NULL, 1.0, 2);
SELECT b.class_name, count(*) AS n_rows,
       max(abs(b.prob - p.prob[b.class_value::int + 1])) < 1e-5 AS matches_tfjs
  FROM to_byom b JOIN to_pred p ON p.id = b.id AND p.output = right(b.class_name, 1)::int + 1
 GROUP BY b.class_name ORDER BY 1;
-- the top class of each output, with MADlib's 2.x class values (one row per output)
SELECT predict_byom('mio_arch', 2, 'to_data', 'id', 'x', 'to_byom_r', 'response', false,
                    ARRAY[ARRAY['a', 'b', 'c'], ARRAY['u', 'v', NULL]], 1.0, 2);
SELECT id, array_agg(class_value ORDER BY class_name) AS top FROM to_byom_r GROUP BY id ORDER BY id LIMIT 3;

-- the preprocessors: several variables (MADlib's comma lists), one column
-- per variable; a one-hot integer[] output stays int16 classes, the
-- regression output's real[] targets are packed as float32
SELECT training_preprocessor_dl('ti_data', 'ti_packed', 'head', 'vec, img', 5, 1.0, NULL, '1');
SELECT training_preprocessor_dl('to_data', 'to_packed', 'cls, reg', 'x', 7, 1.0, NULL, '1');
\x on
SELECT dependent_varname, independent_varname, dependent_vartype, cls_class_values, reg_class_values,
       num_classes, buffer_size FROM to_packed_summary;
\x off
SELECT a.attname, format_type(a.atttypid, NULL) AS type FROM pg_attribute a
 WHERE a.attrelid = 'ti_packed'::regclass AND a.attnum > 0 ORDER BY a.attnum;
SELECT cls_shape, reg_shape, x_shape, octet_length(cls) AS cls_bytes, octet_length(reg) AS reg_bytes
  FROM to_packed;
-- validation data: the same variables, in the same order; its rows in
-- storage order hold the targets exactly
SELECT validation_preprocessor_dl('to_data', 'to_val', 'cls, reg', 'x', 'to_packed');
SELECT dependent_varname, independent_varname, num_classes FROM to_val_summary;
SELECT _unpack_float32(reg) = (SELECT array_agg(v ORDER BY id, o) FROM to_data, unnest(reg)
                                 WITH ORDINALITY u(v, o)) AS targets_exact,
       _unpack_int16(cls) = (SELECT array_agg(v ORDER BY id, o) FROM to_data, unnest(cls)
                               WITH ORDINALITY u(v, o))::smallint[] AS classes_exact
  FROM to_val;

-- fit: one buffer, so each epoch is one full-batch step as TF.js'
-- trainOnBatch; SGD and Adam, one and two steps; two_outputs with its
-- loss list and loss_weights
\set ti_sgd '$$loss=''categorical_crossentropy'', optimizer=''SGD(lr=0.1)'', metrics=[''accuracy'']$$'
\set ti_adam '$$loss=''categorical_crossentropy'', optimizer=''Adam(lr=0.01, epsilon=1e-14)'', metrics=[''accuracy'']$$'
\set to_sgd '$$loss=[''categorical_crossentropy'', ''mse''], loss_weights=[1.0, 0.5], optimizer=''SGD(lr=0.1)'', metrics=[''accuracy'']$$'
\set to_adam '$$loss={''reg'': ''mean_squared_error'', ''cls'': ''categorical_crossentropy''}, loss_weights={''reg'': 0.5}, optimizer=''Adam(lr=0.01, epsilon=1e-14)'', metrics=[''accuracy'']$$'
SET client_min_messages = warning;
SELECT fit('ti_packed', 'ti_sgd1', 'mio_arch', 1, :ti_sgd, 'batch_size=5, epochs=1, shuffle=False', 1);
SELECT fit('ti_packed', 'ti_sgd2', 'mio_arch', 1, :ti_sgd, 'batch_size=5, epochs=2, shuffle=False', 1);
SELECT fit('ti_packed', 'ti_adam1', 'mio_arch', 1, :ti_adam, 'batch_size=5, epochs=1, shuffle=False', 1);
SELECT fit('ti_packed', 'ti_adam2', 'mio_arch', 1, :ti_adam, 'batch_size=5, epochs=2, shuffle=False', 1);
SELECT fit('to_packed', 'to_sgd1', 'mio_arch', 2, :to_sgd, 'batch_size=7, epochs=1, shuffle=False', 1);
SELECT fit('to_packed', 'to_sgd2', 'mio_arch', 2, :to_sgd, 'batch_size=7, epochs=2, shuffle=False', 1,
           FALSE, 'to_val');
SELECT fit('to_packed', 'to_adam1', 'mio_arch', 2, :to_adam, 'batch_size=7, epochs=1, shuffle=False', 1);
SELECT fit('to_packed', 'to_adam2', 'mio_arch', 2, :to_adam, 'batch_size=7, epochs=2, shuffle=False', 1);
RESET client_min_messages;
SELECT m.name, e.opt, e.step,
       pg_temp.max_diff(weights_to_array(m.w), e.weights) < 2e-4 AS matches_tfjs,
       pg_temp.max_diff(weights_to_array(m.w), i.weights) > 1e-2 AS moved
  FROM (SELECT 'ti' AS name, 'sgd' AS opt, 1 AS step, model_weights AS w FROM ti_sgd1
        UNION ALL SELECT 'ti', 'sgd', 2, model_weights FROM ti_sgd2
        UNION ALL SELECT 'ti', 'adam', 1, model_weights FROM ti_adam1
        UNION ALL SELECT 'ti', 'adam', 2, model_weights FROM ti_adam2) m
  JOIN ti_expected e USING (opt, step), ti_init i
UNION ALL
SELECT m.name, e.opt, e.step,
       pg_temp.max_diff(weights_to_array(m.w), e.weights) < 2e-4,
       pg_temp.max_diff(weights_to_array(m.w), i.weights) > 1e-2
  FROM (SELECT 'to' AS name, 'sgd' AS opt, 1 AS step, model_weights AS w FROM to_sgd1
        UNION ALL SELECT 'to', 'sgd', 2, model_weights FROM to_sgd2
        UNION ALL SELECT 'to', 'adam', 1, model_weights FROM to_adam1
        UNION ALL SELECT 'to', 'adam', 2, model_weights FROM to_adam2) m
  JOIN to_expected e USING (opt, step), to_init i
 ORDER BY 1, 2 DESC, 3;

-- the summary: MADlib's lists, and each output's metrics, prefixed with
-- its dependent variable; the loss is the weighted sum of the outputs'
\x on
SELECT dependent_varname, independent_varname, dependent_vartype, num_classes, loss_type,
       metrics_type, cls_class_values, reg_class_values FROM to_sgd2_summary;
\x off
SELECT abs(training_loss_final - (cls_training_loss_final + 0.5 * reg_training_loss_final)) < 1e-6
           AS weighted_sum,
       training_metrics_final = cls_training_metrics_final AS metric_of_first_output,
       validation_loss_final = training_loss_final AS same_data_same_loss,
       cardinality(reg_validation_metrics) AS points,
       cls_training_metrics_final BETWEEN 0 AND 1 AS accuracy
  FROM to_sgd2_summary;

-- evaluate: the loss fit recorded, and each output's
SELECT evaluate('to_sgd2', 'to_val', 'to_eval');
SELECT abs(e.loss - s.training_loss_final) < 1e-6 AS loss_as_fit,
       abs(e.cls_loss - s.cls_training_loss_final) < 1e-6 AS cls_loss_as_fit,
       abs(e.reg_loss - s.reg_training_loss_final) < 1e-6 AS reg_loss_as_fit,
       e.metric = e.cls_metric AS metric_of_first_output, e.metrics_type, e.loss_type
  FROM to_eval e, to_sgd2_summary s;

-- predict with the fitted models: TF.js' probabilities after two SGD
-- steps; rows per id and output, each output's classes ranked on their own
SELECT predict('ti_sgd2', 'ti_data', 'id', 'vec, img', 'ti_pred2');
SELECT count(*) AS n_rows, max(abs(b.prob - p.prob_after[b.class_value::int + 1])) < 1e-5 AS matches_tfjs
  FROM ti_pred2 b JOIN ti_pred p ON p.id = b.id;
SELECT predict('to_sgd2', 'to_data', 'id', 'x', 'to_pred2');
SELECT b.class_name, count(*) AS n_rows, max(b.rank) AS max_rank,
       max(abs(b.prob - p.prob_after[b.class_value::int + 1])) < 1e-5 AS matches_tfjs
  FROM to_pred2 b JOIN to_pred p ON p.id = b.id AND p.output = CASE b.class_name WHEN 'cls' THEN 1 ELSE 2 END
 GROUP BY b.class_name ORDER BY 1;

-- warm start: one SGD step, then one more from it, is TF.js' second step
-- (SGD has no optimizer state); transfer learning is the arch table's
-- weights, as above
SET client_min_messages = warning;
SELECT fit('to_packed', 'to_warm', 'mio_arch', 2, :to_sgd, 'batch_size=7, epochs=1, shuffle=False', 1);
SELECT fit('to_packed', 'to_warm', 'mio_arch', 2, :to_sgd, 'batch_size=7, epochs=1, shuffle=False', 1,
           FALSE, NULL, NULL, TRUE);
RESET client_min_messages;
SELECT pg_temp.max_diff(weights_to_array(w.model_weights), e.weights) < 2e-4 AS warm_start_matches_tfjs
  FROM to_warm w, to_expected e WHERE e.opt = 'sgd' AND e.step = 2;

-- fit_multiple (beyond MADlib, which refuses multi-io there): the same
-- steps, and each output's metrics in _info
SELECT load_model_selection_table('mio_arch', 'to_mst', ARRAY[2], ARRAY[:to_sgd, :to_adam],
    ARRAY['batch_size=7, epochs=2, shuffle=False']);
SET client_min_messages = warning;
SELECT fit_multiple('to_packed', 'to_multi', 'to_mst', 1, FALSE, 'to_val');
RESET client_min_messages;
SELECT s.mst_key, pg_temp.max_diff(weights_to_array(m.model_weights), e.weights) < 2e-4 AS matches_tfjs,
       abs(i.training_loss_final - (i.cls_training_loss_final + 0.5 * i.reg_training_loss_final)) < 1e-6
           AS weighted_sum,
       i.cls_validation_loss_final IS NOT NULL AS has_validation
  FROM to_mst s JOIN to_multi m USING (mst_key) JOIN to_multi_info i USING (mst_key)
  JOIN to_expected e ON e.step = 2 AND e.opt = CASE WHEN s.compile_params LIKE '%SGD%' THEN 'sgd' ELSE 'adam' END
 ORDER BY 1;
SELECT dependent_varname, independent_varname, num_classes FROM to_multi_summary;

-- every path gives the same bytes for models of several inputs and
-- outputs: two segments with parallel workers (batches that cross the
-- shuffle's windows), the leader alone, and the greenplum transport's
-- _io aggregates, validation metrics included; evaluate on both paths
SELECT training_preprocessor_dl('to_data', 'to_packed2', 'cls, reg', 'x', 2, 1.0, NULL, '2');
SELECT validation_preprocessor_dl('to_data', 'to_val2', 'cls, reg', 'x', 'to_packed2', 2);
SELECT training_preprocessor_dl('ti_data', 'ti_packed2', 'head', 'vec, img', 2, 1.0, NULL, '2');
SET client_min_messages = warning;
SELECT fit('to_packed2', 'to_seg2', 'mio_arch', 2, :to_adam, 'batch_size=3, epochs=2, seed=7', 2,
           FALSE, 'to_val2', 1);
SELECT fit('ti_packed2', 'ti_seg2', 'mio_arch', 1, :ti_adam, 'batch_size=3, epochs=2, seed=7', 2);
SET max_parallel_workers = 0;
SELECT fit('to_packed2', 'to_seg2_w0', 'mio_arch', 2, :to_adam, 'batch_size=3, epochs=2, seed=7', 2,
           FALSE, 'to_val2', 1);
RESET max_parallel_workers;
CREATE FUNCTION pg_temp.job(tbl regclass, val regclass, model_id integer, cp text, tr text,
                            xs text[], ys text[])
RETURNS madlib_dl._train_job LANGUAGE sql AS $f$
    SELECT madlib_dl._make_train_job(tbl, NULL, NULL,
               ARRAY[(SELECT model_arch::text FROM mio_arch WHERE mio_arch.model_id = $3)], ARRAY[cp], 2,
               fit_params => ARRAY['batch_size=3, epochs=2, seed=7'],
               init_weights => ARRAY[(SELECT model_weights FROM mio_arch WHERE mio_arch.model_id = $3)],
               validation => val, metrics_compute_frequency => 1, transport => tr, num_segments => 2,
               x_cols => xs, y_cols => ys, val_x_cols => xs, val_y_cols => ys)
$f$;
SELECT md5(a.model_weights) = md5(b.model_weights) AS leader_alone_same,
       md5(a.model_weights) = md5(g.model_weights) AS greenplum_same,
       s.validation_loss = g.validation_loss AS greenplum_loss,
       s.cls_validation_metrics = ARRAY(SELECT unnest(g.output_validation_metrics[:][1:1]))
           AS greenplum_cls_metrics,
       s.reg_validation_loss = ARRAY(SELECT unnest(g.output_validation_loss[:][2:2])) AS greenplum_reg_loss,
       cardinality(s.reg_validation_loss) AS points
  FROM to_seg2 a, to_seg2_w0 b, to_seg2_summary s,
       madlib_dl._fit_run(pg_temp.job('to_packed2', 'to_val2', 2, :to_adam, 'greenplum',
                                      ARRAY['x'], ARRAY['cls', 'reg'])) g;
-- evaluate gives the loss of the last metrics point (the same model on the same rows)
SELECT evaluate('to_seg2', 'to_val2', 'to_eval2');
SELECT abs(e.loss - s.validation_loss_final) < 1e-6 AS loss_as_fit,
       abs(e.reg_metric - s.reg_validation_metrics_final) < 1e-6 AS reg_metric_as_fit
  FROM to_eval2 e, to_seg2_summary s;
SELECT md5(a.model_weights) = md5(g.model_weights) AS two_inputs_greenplum_same
  FROM ti_seg2 a, madlib_dl._fit_run(pg_temp.job('ti_packed2', NULL, 1, :ti_adam, 'greenplum',
                                                 ARRAY['vec', 'img'], ARRAY['head'])) g;
SELECT md5(w.model_weights) = md5(g.model_weights) AS fit_multiple_greenplum_same
  FROM madlib_dl._fit_multiple_run(pg_temp.job('to_packed2', 'to_val2', 2, :to_adam, 'workers',
                                               ARRAY['x'], ARRAY['cls', 'reg'])) w,
       madlib_dl._fit_multiple_run(pg_temp.job('to_packed2', 'to_val2', 2, :to_adam, 'greenplum',
                                               ARRAY['x'], ARRAY['cls', 'reg'])) g;
RESET client_min_messages;
SELECT count(*) AS segments, sum(rows) AS rows FROM partition_plan('to_packed2');

-- MADlib's multi-io script (madlib_keras_multi_io.sql_in, on iris): two
-- class columns, two feature columns, its model of two inputs and two
-- outputs, fit with validation, evaluate, predict with pred_type 0.5,
-- warm start, transfer learning
CREATE TABLE mio_iris AS
SELECT g AS id, ARRAY[(g % 7) / 7.0, (g % 5) / 5.0, (g % 3) / 3.0, (g % 11) / 11.0]::real[] AS attributes,
       ARRAY[((g % 7) / 7.0) ^ 2, ((g % 5) / 5.0) ^ 2, ((g % 3) / 3.0) ^ 2, ((g % 11) / 11.0) ^ 2]::real[]
           AS attributes2,
       (ARRAY['Iris-setosa', 'Iris-versicolor', 'Iris-virginica'])[g % 3 + 1] AS class_text,
       (ARRAY['Iris-setosa', 'Iris-versicolor', 'Iris-virginica'])[g % 3 + 1] AS class_text2
  FROM generate_series(1, 60) g;
SELECT load_keras_model('mio_arch', '{"class_name": "Model", "keras_version": "2.2.4-tf", "config": {"layers": [{"class_name": "InputLayer", "config": {"dtype": "float32", "batch_input_shape": [null, 4], "name": "input_1", "sparse": false}, "inbound_nodes": [], "name": "input_1"}, {"class_name": "InputLayer", "config": {"dtype": "float32", "batch_input_shape": [null, 4], "name": "input_2", "sparse": false}, "inbound_nodes": [], "name": "input_2"}, {"class_name": "Dense", "config": {"kernel_initializer": {"class_name": "VarianceScaling", "config": {"dtype": "float32", "distribution": "uniform", "scale": 1.0, "seed": null, "mode": "fan_in"}}, "name": "dense", "kernel_constraint": null, "bias_regularizer": null, "bias_constraint": null, "dtype": "float32", "activation": "relu", "trainable": true, "kernel_regularizer": null, "bias_initializer": {"class_name": "Zeros", "config": {"dtype": "float32"}}, "units": 10, "use_bias": true, "activity_regularizer": null}, "inbound_nodes": [[["input_1", 0, 0, {}]]], "name": "dense"}, {"class_name": "Dense", "config": {"kernel_initializer": {"class_name": "VarianceScaling", "config": {"dtype": "float32", "distribution": "uniform", "scale": 1.0, "seed": null, "mode": "fan_in"}}, "name": "dense_2", "kernel_constraint": null, "bias_regularizer": null, "bias_constraint": null, "dtype": "float32", "activation": "relu", "trainable": true, "kernel_regularizer": null, "bias_initializer": {"class_name": "Zeros", "config": {"dtype": "float32"}}, "units": 10, "use_bias": true, "activity_regularizer": null}, "inbound_nodes": [[["input_2", 0, 0, {}]]], "name": "dense_2"}, {"class_name": "Dense", "config": {"kernel_initializer": {"class_name": "VarianceScaling", "config": {"dtype": "float32", "distribution": "uniform", "scale": 1.0, "seed": null, "mode": "fan_in"}}, "name": "dense_1", "kernel_constraint": null, "bias_regularizer": null, "bias_constraint": null, "dtype": "float32", "activation": "relu", "trainable": true, "kernel_regularizer": null, "bias_initializer": {"class_name": "Zeros", "config": {"dtype": "float32"}}, "units": 10, "use_bias": true, "activity_regularizer": null}, "inbound_nodes": [[["dense", 0, 0, {}]]], "name": "dense_1"}, {"class_name": "Dense", "config": {"kernel_initializer": {"class_name": "VarianceScaling", "config": {"dtype": "float32", "distribution": "uniform", "scale": 1.0, "seed": null, "mode": "fan_in"}}, "name": "dense_3", "kernel_constraint": null, "bias_regularizer": null, "bias_constraint": null, "dtype": "float32", "activation": "relu", "trainable": true, "kernel_regularizer": null, "bias_initializer": {"class_name": "Zeros", "config": {"dtype": "float32"}}, "units": 10, "use_bias": true, "activity_regularizer": null}, "inbound_nodes": [[["dense_2", 0, 0, {}]]], "name": "dense_3"}, {"class_name": "Concatenate", "config": {"dtype": "float32", "trainable": true, "name": "concatenate", "axis": -1}, "inbound_nodes": [[["dense_1", 0, 0, {}], ["dense_3", 0, 0, {}]]], "name": "concatenate"}, {"class_name": "Dense", "config": {"kernel_initializer": {"class_name": "VarianceScaling", "config": {"dtype": "float32", "distribution": "uniform", "scale": 1.0, "seed": null, "mode": "fan_in"}}, "name": "dense_4", "kernel_constraint": null, "bias_regularizer": null, "bias_constraint": null, "dtype": "float32", "activation": "softmax", "trainable": true, "kernel_regularizer": null, "bias_initializer": {"class_name": "Zeros", "config": {"dtype": "float32"}}, "units": 3, "use_bias": true, "activity_regularizer": null}, "inbound_nodes": [[["concatenate", 0, 0, {}]]], "name": "dense_4"}, {"class_name": "Dense", "config": {"kernel_initializer": {"class_name": "VarianceScaling", "config": {"dtype": "float32", "distribution": "uniform", "scale": 1.0, "seed": null, "mode": "fan_in"}}, "name": "dense_5", "kernel_constraint": null, "bias_regularizer": null, "bias_constraint": null, "dtype": "float32", "activation": "softmax", "trainable": true, "kernel_regularizer": null, "bias_initializer": {"class_name": "Zeros", "config": {"dtype": "float32"}}, "units": 3, "use_bias": true, "activity_regularizer": null}, "inbound_nodes": [[["dense_3", 0, 0, {}]]], "name": "dense_5"}], "input_layers": [["input_1", 0, 0], ["input_2", 0, 0]], "output_layers": [["dense_4", 0, 0], ["dense_5", 0, 0]], "name": "model"}, "backend": "tensorflow"}', NULL, 'Sophie', 'A simple model');
SELECT training_preprocessor_dl('mio_iris', 'iris_mult_packed', 'class_text, class_text2',
                                'attributes, attributes2', NULL, 255);
SELECT validation_preprocessor_dl('mio_iris', 'iris_mult_val', 'class_text, class_text2',
                                  'attributes, attributes2', 'iris_mult_packed');
SET client_min_messages = warning;
SELECT madlib_keras_fit('iris_mult_packed', 'iris_model', 'mio_arch', 3,
    $$ loss='categorical_crossentropy', optimizer='adam', metrics=['categorical_accuracy'] $$::text,
    $$ batch_size=5, epochs=3 $$::text, 2, NULL, 'iris_mult_val');
SELECT madlib_keras_evaluate('iris_model', 'iris_mult_val', 'evaluate_out', FALSE);
SELECT madlib_keras_predict('iris_model', 'mio_iris', 'id', 'attributes, attributes2', 'iris_predict',
                            0.5, FALSE);
SELECT madlib_keras_predict('iris_model', 'mio_iris', 'id', 'attributes, attributes2', 'iris_predict_all');
CREATE TABLE iris_model_first_run AS SELECT training_loss_final, training_metrics_final FROM iris_model_summary;
SELECT madlib_keras_fit('iris_mult_packed', 'iris_model', 'mio_arch', 3,
    $$ loss='categorical_crossentropy', optimizer='adam', metrics=['categorical_accuracy'] $$::text,
    $$ batch_size=5, epochs=3 $$::text, 2, NULL, 'iris_mult_val', 1, TRUE);
CREATE TABLE iris_model_arch_multi AS SELECT * FROM mio_arch WHERE model_id = 3;
UPDATE iris_model_arch_multi SET model_weights = (SELECT model_weights FROM iris_model);
SELECT madlib_keras_fit('iris_mult_packed', 'iris_model_transfer', 'iris_model_arch_multi', 3,
    $$ loss='categorical_crossentropy', optimizer='adam', metrics=['categorical_accuracy'] $$::text,
    $$ batch_size=5, epochs=3 $$::text, 2, NULL, 'iris_mult_val');
RESET client_min_messages;
SELECT dependent_varname, independent_varname, metrics_type, cardinality(training_loss) AS points,
       cardinality(class_text_training_metrics) AS class_text_points,
       cardinality(class_text2_validation_loss) AS class_text2_points,
       class_text2_class_values
  FROM iris_model_summary;
SELECT e.metrics_type, e.loss_type, e.loss > 0 AS has_loss,
       e.class_text_metric BETWEEN 0 AND 1 AND e.class_text2_metric BETWEEN 0 AND 1 AS accuracies
  FROM evaluate_out e;
SELECT class_name, count(DISTINCT id) AS ids, count(*) AS n_rows, sum(prob) BETWEEN 59.9 AND 60.1 AS sums_to_one,
       (SELECT count(*) FROM iris_predict p WHERE p.class_name = a.class_name)
           = count(*) FILTER (WHERE prob > 0.5) AS threshold_rows
  FROM iris_predict_all a GROUP BY class_name ORDER BY 1;
SELECT t.training_loss_final < f.training_loss_final AS transfer_continues
  FROM iris_model_transfer_summary t, iris_model_first_run f;

-- refused with a clear error
\set VERBOSITY terse
-- a packed table of one variable of each for a model of two outputs
SELECT training_preprocessor_dl('to_data', 'to_one', 'cls', 'x', 7, 1.0, NULL, '1');
SELECT fit('to_one', 'e1', 'mio_arch', 2, :to_sgd, 'batch_size=7', 1);
-- a loss list of the wrong length, a dict naming no output, class_weight
SELECT fit('to_packed', 'e1', 'mio_arch', 2, $$loss=['mse'], optimizer='SGD'$$, 'batch_size=7', 1);
SELECT fit('to_packed', 'e1', 'mio_arch', 2, $$loss={'cls': 'mse', 'nope': 'mse'}, optimizer='SGD'$$,
           'batch_size=7', 1);
SELECT fit('to_packed', 'e1', 'mio_arch', 2, :to_sgd, 'batch_size=7, class_weight={0: 1, 1: 2, 2: 1}', 1);
-- predict with one feature column for two inputs; predict_byom with the
-- wrong dependent_count or class values of the wrong shape
SELECT predict('ti_sgd2', 'ti_data', 'id', 'vec', 'e_pred');
SELECT predict_byom('mio_arch', 2, 'to_data', 'id', 'x', 'e_pred');
SELECT predict_byom('mio_arch', 2, 'to_data', 'id', 'x', 'e_pred', 'prob', false,
                    ARRAY[ARRAY['a', 'b'], ARRAY['u', 'v']], 1.0, 2);
-- evaluate on a table of other variables; validation data of other variables
SELECT evaluate('to_sgd2', 'ti_packed', 'e_eval');
SELECT validation_preprocessor_dl('to_data', 'e_val', 'cls', 'x', 'to_packed');
\set VERBOSITY default
