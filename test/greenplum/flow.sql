-- test/greenplum/flow.sql: the whole flow on a Greenplum cluster (run by
-- test/greenplum/run.sh in a fresh database with the extension created).
-- Every check is chk(name, condition): it prints "ok name" or raises, and
-- psql stops at the first error (ON_ERROR_STOP), so a run that reaches the
-- end passed every check.  MADlib's own call forms are used throughout.
\set ON_ERROR_STOP 1
\set VERBOSITY terse
SET client_min_messages = notice;
CREATE FUNCTION pg_temp.chk(name text, ok boolean) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
    IF ok IS NOT TRUE THEN
        RAISE EXCEPTION 'check failed: %', name;
    END IF;
    RAISE NOTICE 'ok %', name;
END
$f$;
\set ECHO none
\i test/data/iris.sql
\set ECHO errors
SET client_min_messages = notice;
-- Any NOTICE about a missing DISTRIBUTED clause would show here: the
-- flow's output tables all say how they are distributed.
CREATE TABLE iris_train AS SELECT * FROM iris_data WHERE id % 5 <> 0 DISTRIBUTED BY (id);
CREATE TABLE iris_test AS SELECT * FROM iris_data WHERE id % 5 = 0 DISTRIBUTED BY (id);

-- preprocessors: buffers on segment buffer_id % nseg, all segments used,
-- every row once
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'train_p', 'class_text', 'attributes', 10);
SELECT madlib_dl.validation_preprocessor_dl('iris_test', 'test_p', 'class_text', 'attributes', 'train_p');
SELECT pg_temp.chk('summary num_segments is the number of primaries',
    (SELECT num_segments FROM train_p_summary)
      = (SELECT count(*) FROM gp_segment_configuration WHERE role = 'p' AND content >= 0));
SELECT pg_temp.chk('train buffers on segment buffer_id % nseg',
    (SELECT bool_and(p.gp_segment_id = p.buffer_id % s.num_segments) FROM train_p p, train_p_summary s));
SELECT pg_temp.chk('test buffers on segment buffer_id % nseg',
    (SELECT bool_and(p.gp_segment_id = p.buffer_id % s.num_segments) FROM test_p p, train_p_summary s));
SELECT pg_temp.chk('every primary holds training buffers',
    (SELECT count(DISTINCT gp_segment_id) FROM train_p)
      = (SELECT count(*) FROM gp_segment_configuration WHERE role = 'p' AND content >= 0));
SELECT pg_temp.chk('every training row packed once',
    (SELECT sum(attributes_shape[1]) FROM train_p) = 120
    AND abs((SELECT sum(v) FROM train_p, unnest(madlib_dl._unpack_float32(attributes)) v)
            - (SELECT sum(v) FROM iris_train, unnest(attributes) v)) < 1e-2);
SELECT pg_temp.chk('every test row packed once', (SELECT sum(attributes_shape[1]) FROM test_p) = 30);
SELECT pg_temp.chk('packed table distributed by __dist_key__',
    (SELECT distkey::text = (SELECT attnum::text FROM pg_attribute WHERE attrelid = 'train_p'::regclass
                                                                   AND attname = '__dist_key__')
       FROM gp_distribution_policy WHERE localoid = 'train_p'::regclass));

-- load_keras_model, fit (averaging), evaluate, predict, predict_byom
SELECT madlib_dl.load_keras_model('arch', '{"class_name": "Sequential", "config": {"layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4]}}, {"class_name": "Dense", "config": {"units": 10, "activation": "relu"}}, {"class_name": "Dense", "config": {"units": 10, "activation": "relu"}}, {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}');
\set cp '$$loss=''categorical_crossentropy'', optimizer=''Adam(lr=0.01)'', metrics=[''accuracy'']$$'
SELECT madlib_dl.madlib_keras_fit('train_p', 'm1', 'arch', 1, :cp, 'batch_size=8, epochs=2, seed=5', 20, FALSE, 'test_p');
SELECT pg_temp.chk('fit reaches 0.9 validation accuracy', (SELECT validation_metrics_final >= 0.9 FROM m1_summary));
SELECT pg_temp.chk('fit model table distributed randomly',
    (SELECT policytype = 'p' AND distkey::text = '' FROM gp_distribution_policy WHERE localoid = 'm1'::regclass));
SELECT madlib_dl.fit('train_p', 'm_avg', 'arch', 1, :cp, 'batch_size=8, epochs=1, seed=5', 3, FALSE, 'test_p',
                     averaging_period => 2, lr_scaling => 'linear');
SELECT pg_temp.chk('fit with averaging_period and lr_scaling',
    (SELECT averaging_period = 2 AND lr_scaling = 'linear' AND validation_loss_final > 0 FROM m_avg_summary));
SELECT madlib_dl.madlib_keras_evaluate('m1', 'test_p', 'm1_eval');
SELECT pg_temp.chk('evaluate is fit''s validation',
    (SELECT abs(e.loss - s.validation_loss_final) < 1e-6 AND abs(e.metric - s.validation_metrics_final) < 1e-6
       FROM m1_eval e, m1_summary s));
-- every metric per metrics point: the segments' metric sums (auc: 800)
-- travel in the step results; the final ones are evaluate's
SELECT madlib_dl.madlib_keras_fit('train_p', 'm7', 'arch', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy', 'auc', 'precision', 'recall', 'mse']$$,
    'batch_size=8, epochs=1, seed=5', 3, FALSE, 'test_p', 1);
SELECT madlib_dl.madlib_keras_evaluate('m7', 'test_p', 'm7_eval');
SELECT pg_temp.chk('fit records every metric, the final ones evaluate''s',
    (SELECT bool_and(jsonb_array_length(v.value) = 3)
            AND bool_and(CASE WHEN v.key = 'auc' THEN (v.value->>-1)::float8 = (e.metrics->>v.key)::float8
                              ELSE abs((v.value->>-1)::float8 - (e.metrics->>v.key)::float8) < 1e-6 END)
            AND count(*) = 5
       FROM m7_summary s, m7_eval e, jsonb_each(s.metrics->'validation') v));
SELECT madlib_dl.madlib_keras_predict('m1', 'iris_data', 'id', 'attributes', 'm1_pred', 'response');
SELECT pg_temp.chk('predict: 150 rows', (SELECT count(*) = 150 AND count(DISTINCT id) = 150 FROM m1_pred));
SELECT pg_temp.chk('predict agrees with the labels on >= 90%',
    (SELECT avg((p.class_value = d.class_text)::int) >= 0.9 FROM m1_pred p JOIN iris_data d USING (id)));
SELECT madlib_dl.load_keras_model('arch', (SELECT model_arch FROM m1), (SELECT model_weights FROM m1), 'trained');
SELECT madlib_dl.madlib_keras_predict_byom('arch', 2, 'iris_data', 'id', 'attributes', 'byom_pred', 'response', FALSE,
    ARRAY['Iris-setosa', 'Iris-versicolor', 'Iris-virginica'], 1.0);
SELECT pg_temp.chk('predict_byom = predict',
    (SELECT count(*) = 150 AND bool_and(b.class_value = p.class_value) FROM byom_pred b JOIN m1_pred p USING (id)));

-- warm start
SELECT madlib_dl.madlib_keras_fit('train_p', 'm1', 'arch', 1, :cp, 'batch_size=8, epochs=1, seed=5', 2, FALSE,
                                  'test_p', NULL, TRUE);
SELECT pg_temp.chk('warm start continues', (SELECT validation_metrics_final >= 0.9 FROM m1_summary));

-- fit_multiple: 4 configurations hop over the segments
SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1],
    ARRAY[:cp, $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['accuracy']$$],
    ARRAY['batch_size=8, epochs=1, seed=5', 'batch_size=16, epochs=1, seed=6']);
SELECT madlib_dl.madlib_keras_fit_multiple_model('train_p', 'multi', 'mst', 3, FALSE, 'test_p');
SELECT pg_temp.chk('fit_multiple: 4 models, complete',
    (SELECT count(*) = 4 AND bool_and(validation_loss_final > 0) FROM multi_info)
    AND (SELECT count(*) = 4 AND count(DISTINCT md5(model_weights)) = 4 FROM multi));
SELECT madlib_dl.madlib_keras_evaluate('multi', 'test_p', 'multi_eval', FALSE, 2);
SELECT pg_temp.chk('evaluate of one mst_key is its validation',
    (SELECT abs(e.loss - i.validation_loss_final) < 1e-6 FROM multi_eval e, multi_info i WHERE i.mst_key = 2));

-- streaming: use_caching false streams every segment's buffers from the
-- table in each hop, with the same bytes as cached
SELECT pg_temp.chk('use_caching false streams every segment',
    (SELECT count(*) = 3 AND NOT bool_or(cached) FROM madlib_dl.partition_plan('train_p', false)));
SELECT madlib_dl.fit_multiple('train_p', 'fm_stream', 'mst', 2, use_caching => FALSE);
SELECT madlib_dl.fit_multiple('train_p', 'fm_cache', 'mst', 2, use_caching => TRUE);
SELECT pg_temp.chk('streamed fit_multiple = cached fit_multiple',
    (SELECT bool_and(a.model_weights = b.model_weights) AND count(*) = 4
       FROM fm_stream a JOIN fm_cache b USING (mst_key)));

-- automl: Hyperband and TPE
\set cgrid '{''loss'': [''categorical_crossentropy''], ''metrics'': [''accuracy''], ''optimizer_params_list'': [{''optimizer'': [''Adam''], ''lr'': [0.001, 0.1, ''log'']}]}'
\set fgrid '{''batch_size'': [8, 16], ''epochs'': [1]}'
SELECT madlib_dl.madlib_keras_automl('train_p', 'hb', 'arch', 'hb_mst', ARRAY[1],
    :'cgrid', :'fgrid', 'hyperband', 'R=3, eta=3', 42, NULL, FALSE, 'test_p');
SELECT pg_temp.chk('automl hyperband', (SELECT count(*) > 0 AND bool_and(validation_loss_final > 0) FROM hb_info));
SELECT madlib_dl.madlib_keras_automl('train_p', 'tpe', 'arch', 'tpe_mst', ARRAY[1],
    :'cgrid', :'fgrid', 'hyperopt', 'num_configs=3, num_iterations=2', 42, NULL, FALSE, 'test_p');
SELECT pg_temp.chk('automl tpe', (SELECT count(*) = 3 FROM tpe_info));

-- fit_progress answers (empty without the library preloaded)
SELECT pg_temp.chk('fit_progress answers', (SELECT count(*) >= 0 FROM madlib_dl.fit_progress));

-- sequence model (Embedding + LSTM, TF.js' fixture) and multi-io (two inputs)
\set ECHO none
\i test/data/tfjs_sequences.sql
\i test/data/tfjs_multi_io.sql
\set ECHO errors
SELECT madlib_dl.load_keras_model('seq_arch', :'el_arch', madlib_dl.weights_from_array((SELECT weights FROM el_init)));
SELECT madlib_dl.training_preprocessor_dl('el_data', 'el_packed', 'cls', 'x', 2);
SELECT madlib_dl.fit('el_packed', 'el_m', 'seq_arch', 1,
    $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['accuracy']$$, 'batch_size=2, epochs=1', 2);
SELECT madlib_dl.predict('el_m', 'el_data', 'id', 'x', 'el_pred_out');
SELECT pg_temp.chk('sequence model: fit and predict', (SELECT count(DISTINCT id) = 6 FROM el_pred_out));
SELECT madlib_dl.load_keras_model('mio_arch', :'ti_arch', madlib_dl.weights_from_array((SELECT weights FROM ti_init)));
SELECT madlib_dl.predict_byom('mio_arch', 1, 'ti_data', 'id', 'vec, img', 'ti_byom');
SELECT pg_temp.chk('multi-io: predict_byom as TF.js within 1e-5',
    (SELECT max(abs(b.prob - p.prob[b.class_value::int + 1])) < 1e-5 FROM ti_byom b JOIN ti_pred p ON p.id = b.id));

-- refusals listed in docs/greenplum.md
DO $$
BEGIN
    PERFORM madlib_dl.training_preprocessor_dl('iris_train', 'bad_p', 'class_text', 'attributes', 10, 1.0, NULL, '99');
    RAISE EXCEPTION 'distribution_rules 99 was accepted';
EXCEPTION WHEN invalid_parameter_value THEN
    RAISE NOTICE 'ok distribution_rules beyond the primaries refused';
END
$$;
DO $$
BEGIN
    PERFORM madlib_dl.fit('train_p', 'bad_m', 'arch', 1, 'loss=''categorical_crossentropy'', optimizer=''Adam''', 'batch_size=8', 1, TRUE);
    RAISE EXCEPTION 'use_gpus was accepted';
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'ok use_gpus refused';
END
$$;
SELECT pg_temp.chk('nothing half-written after the refusals',
    to_regclass('bad_p') IS NULL AND to_regclass('bad_m') IS NULL AND to_regclass('bad_m_summary') IS NULL);

-- DROP TABLE works with the extension installed (its event trigger)
DROP TABLE m_avg, m_avg_summary;
SELECT pg_temp.chk('flow complete', true);
