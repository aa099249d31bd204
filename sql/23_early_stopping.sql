--
-- 23_early_stopping: fit and fit_multiple with early_stopping (Keras'
-- EarlyStopping).  A crafted learning-rate schedule (Adam's rate jumps
-- from 0.01 to 0.5 after 16 steps, or to 1e-9 for a plateau) makes the
-- validation loss rise or stay flat; the expected stop and best
-- iterations are computed here from the recorded per-iteration losses by
-- an independent transcription of Keras' rule (es_expect), the saved
-- weights are evaluated and compared with the recorded best, and
-- fit_multiple's stopped models leave the schedule.  Losses depend on the
-- CPU's float kernels, so only relations between them are printed.
--
\set SHOW_CONTEXT never
CREATE SCHEMA es_test;
SET search_path = es_test, public;
\set ECHO none
\i test/data/iris.sql
\set iris_tf2 '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "sparse": false, "ragged": false, "name": "dense_input"}}, {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "batch_input_shape": [null, 4], "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}, {"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}, {"class_name": "Dense", "config": {"name": "dense_2", "trainable": true, "dtype": "float32", "units": 3, "activation": "softmax", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
\set ECHO all
CREATE TABLE iris_train AS SELECT * FROM iris_data WHERE id % 5 <> 0;
CREATE TABLE iris_test AS SELECT * FROM iris_data WHERE id % 5 = 0;
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'iris_p2', 'class_text',
    'attributes', NULL, 1.0, NULL, '2');
SELECT madlib_dl.validation_preprocessor_dl('iris_test', 'iris_v2', 'class_text',
    'attributes', 'iris_p2');
SELECT madlib_dl.load_keras_model('arch', :'iris_tf2', NULL, 'iris mlp');

-- Keras' EarlyStopping.on_epoch_end over the metrics points (vals at
-- iters), written independently of the engine: returns the stop
-- iteration (NULL: none) and the best iteration.
CREATE FUNCTION es_expect(vals float8[], iters int[], patience int, min_delta float8,
                          greater boolean, baseline float8 DEFAULT NULL,
                          OUT stop int, OUT best_it int)
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    best float8 := CASE WHEN greater THEN '-Infinity' ELSE 'Infinity' END;
    delta float8 := CASE WHEN greater THEN abs(min_delta) ELSE -abs(min_delta) END;
    wait int := 0;
BEGIN
    FOR j IN 1 .. cardinality(vals) LOOP
        IF j = 1 THEN best_it := iters[j]; END IF;
        wait := wait + 1;
        IF (greater AND vals[j] - delta > best) OR (NOT greater AND vals[j] - delta < best) THEN
            best := vals[j];
            best_it := iters[j];
            -- Keras restarts the wait only past the baseline too
            IF baseline IS NULL OR (greater AND vals[j] - delta > baseline)
               OR (NOT greater AND vals[j] - delta < baseline) THEN
                wait := 0;
            END IF;
        ELSIF wait >= patience AND iters[j] > 1 THEN
            stop := iters[j];
            RETURN;
        END IF;
    END LOOP;
END
$$;

\set cp_jump '$$loss=''categorical_crossentropy'', optimizer=''Adam(learning_rate=PiecewiseConstantDecay([16], [0.01, 0.5]))'', metrics=[''accuracy'']$$'
\set cp_flat '$$loss=''categorical_crossentropy'', optimizer=''Adam(learning_rate=PiecewiseConstantDecay([16], [0.01, 1e-9]))'', metrics=[''accuracy'']$$'

-- 1. the rate jumps: validation loss rises; stop at the right iteration, best weights kept
SET client_min_messages = warning;
SELECT madlib_dl.fit('iris_p2', 'm_jump', 'arch', 1, :cp_jump, 'batch_size=16, seed=7', 30,
    FALSE, 'iris_v2', 1, early_stopping => 'monitor=validation_loss, patience=3, min_delta=0.001, restore_best=True');
SELECT madlib_dl.fit('iris_p2', 'm_jump_last', 'arch', 1, :cp_jump, 'batch_size=16, seed=7', 30,
    FALSE, 'iris_v2', 1, early_stopping => 'monitor=validation_loss, patience=3, min_delta=0.001');
SELECT madlib_dl.fit('iris_p2', 'm_jump_all', 'arch', 1, :cp_jump, 'batch_size=16, seed=7', 30,
    FALSE, 'iris_v2', 1);
RESET client_min_messages;
SELECT s.early_stopping, s.num_iterations,
       s.stopped_at_iteration = e.stop AS stop_as_keras,
       s.best_iteration = e.best_it AS best_as_keras,
       s.stopped_at_iteration < 30 AS stopped_early,
       s.metrics_iters[array_upper(s.metrics_iters, 1)] = s.stopped_at_iteration AS history_ends_there,
       s.best_iteration < s.stopped_at_iteration AS best_before_stop
  FROM m_jump_summary s,
       es_expect(s.validation_loss, s.metrics_iters, 3, 0.001, false) e;
-- the same seed gives the same stop; without restore_best the same stop
SELECT a.stopped_at_iteration = b.stopped_at_iteration AND a.best_iteration = b.best_iteration
         AS same_stop,
       a.validation_loss = b.validation_loss AS same_history,
       c.stopped_at_iteration IS NULL AND c.best_iteration IS NULL AS none_without_early_stopping,
       c.early_stopping IS NULL AS no_option_recorded,
       c.validation_loss[1:cardinality(a.validation_loss)] = a.validation_loss AS same_prefix
  FROM m_jump_summary a, m_jump_last_summary b, m_jump_all_summary c;
-- the saved weights: the best iteration's with restore_best, the last ones without
SELECT madlib_dl.evaluate('m_jump', 'iris_v2', 'm_jump_eval');
SELECT madlib_dl.evaluate('m_jump_last', 'iris_v2', 'm_jump_last_eval');
SELECT abs(e.loss - s.validation_loss[array_position(s.metrics_iters, s.best_iteration)]) < 1e-6
         AS restored_is_best,
       abs(l.loss - s.validation_loss[array_upper(s.validation_loss, 1)]) < 1e-6 AS last_is_last,
       e.loss < l.loss AS best_better_than_last
  FROM m_jump_eval e, m_jump_last_eval l, m_jump_summary s;

-- 2. a plateau (rate 1e-9 after 16 steps), metrics every 2 iterations:
--    patience counts metrics points, so it stops at a point
SET client_min_messages = warning;
SELECT madlib_dl.fit('iris_p2', 'm_flat', 'arch', 1, :cp_flat, 'batch_size=16', 40,
    FALSE, 'iris_v2', 2, early_stopping => 'monitor=val_accuracy, patience=2, restore_best_weights=True');
RESET client_min_messages;
SELECT s.early_stopping,
       s.stopped_at_iteration = e.stop AS stop_as_keras,
       s.best_iteration = e.best_it AS best_as_keras,
       s.stopped_at_iteration % 2 = 0 AS at_a_point,
       s.stopped_at_iteration < 40 AS stopped_early
  FROM m_flat_summary s,
       es_expect(s.validation_metrics, s.metrics_iters, 2, 0, true) e;

-- 3. training loss, a baseline never reached: improvements do not restart
--    the wait, so the first point that does not improve after patience
--    points stops (Keras returns early on an improvement)
SET client_min_messages = warning;
SELECT madlib_dl.fit('iris_p2', 'm_base', 'arch', 1, :cp_flat, 'batch_size=16', 10,
    FALSE, NULL, 1, early_stopping => 'monitor=loss, patience=2, baseline=0.0001');
RESET client_min_messages;
SELECT s.early_stopping, s.stopped_at_iteration IS NOT DISTINCT FROM e.stop AS stop_as_keras,
       s.best_iteration = e.best_it AS best_as_keras
  FROM m_base_summary s,
       es_expect(s.training_loss, s.metrics_iters, 2, 0, false, 0.0001) e;

-- 4. fit_multiple: the two jumping models stop and leave the schedule;
--    the steady one runs every iteration
SELECT madlib_dl.load_model_selection_table('arch', 'mst3', ARRAY[1],
    ARRAY[:cp_jump, :cp_flat,
          $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$],
    ARRAY['batch_size=16, seed=7']);
SET client_min_messages = warning;
SELECT madlib_dl.fit_multiple('iris_p2', 'fm_es', 'mst3', 12, FALSE, 'iris_v2', 1,
    early_stopping => 'monitor=validation_loss, patience=2, restore_best=True');
SELECT madlib_dl.fit_multiple('iris_p2', 'fm_all', 'mst3', 12, FALSE, 'iris_v2', 1);
RESET client_min_messages;
SELECT i.mst_key, i.status, i.stopped_at_iteration IS NOT NULL AS stopped,
       i.stopped_at_iteration IS NOT DISTINCT FROM e.stop AS stop_as_keras,
       i.best_iteration = e.best_it AS best_as_keras,
       cardinality(i.metrics_iters) = coalesce(i.stopped_at_iteration, 12) AS history_to_stop,
       i.validation_loss = a.validation_loss[1:cardinality(i.validation_loss)] AS same_as_full_run
  FROM fm_es_info i JOIN fm_all_info a USING (mst_key),
       es_expect(i.validation_loss, i.metrics_iters, 2, 0, false) e
 ORDER BY i.mst_key;
-- less work: the stopped models trained fewer iterations
SELECT e.early_stopping, (SELECT sum(cardinality(metrics_iters)) FROM fm_es_info) < 3 * 12
         AS fewer_iterations,
       (SELECT sum(cardinality(metrics_iters)) FROM fm_all_info) = 3 * 12 AS all_iterations
  FROM fm_es_summary e;
SELECT a.stopped_at_iteration IS NULL AND a.best_iteration IS NULL AS none_without,
       s.early_stopping IS NULL AS no_option
  FROM fm_all_info a, fm_all_summary s WHERE a.mst_key = 1;
-- the saved weights of a stopped model are its best ones
SELECT madlib_dl.evaluate('fm_es', 'iris_v2', 'fm_es_eval1', mst_key => 1);
SELECT abs(e.loss - i.validation_loss[array_position(i.metrics_iters, i.best_iteration)]) < 1e-6
         AS restored_is_best
  FROM fm_es_eval1 e, fm_es_info i WHERE i.mst_key = 1;

-- 4b. automl (Hyperband, R=9): a configuration whose rate jumps stops
--     within its rung and is never trained again; each stop is Keras'
--     rule over its own history
SET client_min_messages = warning;
SELECT madlib_dl.madlib_keras_automl('iris_p2', 'hb_es', 'arch', 'hb_es_mst', ARRAY[1],
    $${'loss': ['categorical_crossentropy'],
       'optimizer_params_list': [{'optimizer': ['Adam'], 'learning_rate': [0.5, 0.01]}],
       'metrics': ['accuracy']}$$,
    $${'batch_size': [16], 'epochs': [1]}$$, 'hyperband', 'R=9, eta=3', 42, NULL, FALSE,
    'iris_v2', 1, early_stopping => 'monitor=validation_loss, patience=0, restore_best=True');
RESET client_min_messages;
SELECT count(*) > 0 AS some_stopped,
       bool_and(i.stopped_at_iteration = e.stop) AS stops_as_keras,
       bool_and(i.best_iteration = e.best_it) AS best_as_keras,
       bool_and(i.metrics_iters[array_upper(i.metrics_iters, 1)] = i.stopped_at_iteration)
         AS not_trained_after
  FROM hb_es_info i, es_expect(i.validation_loss, i.metrics_iters, 0, 0, false) e
 WHERE i.stopped_at_iteration IS NOT NULL;
SELECT bool_and(e.stop IS NULL OR e.stop = i.stopped_at_iteration) AS others_did_not_stop
  FROM hb_es_info i, es_expect(i.validation_loss, i.metrics_iters, 0, 0, false) e;

-- 5. bad options: clear errors before any work
SELECT madlib_dl.fit('iris_p2', 'm_bad', 'arch', 1, :cp_jump, NULL, 2, FALSE, NULL, 1,
    early_stopping => 'monitor=validation_loss');
SELECT madlib_dl.fit('iris_p2', 'm_bad', 'arch', 1, :cp_jump, NULL, 2, FALSE, 'iris_v2', 1,
    early_stopping => 'monitor=val_mae');
SELECT madlib_dl.fit('iris_p2', 'm_bad', 'arch', 1, :cp_jump, NULL, 2, FALSE, 'iris_v2', 1,
    early_stopping => 'monitor=val_f1');
SELECT madlib_dl.fit('iris_p2', 'm_bad', 'arch', 1, :cp_jump, NULL, 2, FALSE, 'iris_v2', 1,
    early_stopping => 'patience=-2');
SELECT madlib_dl.fit('iris_p2', 'm_bad', 'arch', 1, :cp_jump, NULL, 2, FALSE, 'iris_v2', 1,
    early_stopping => 'patience=2, callbacks=[1]');
SELECT madlib_dl.fit('iris_p2', 'm_bad', 'arch', 1, :cp_jump, NULL, 2, FALSE, 'iris_v2', 1,
    early_stopping => repeat(' ', 2000) || 'patience=1');
SELECT madlib_dl.fit_multiple('iris_p2', 'fm_bad', 'mst3', 2, FALSE, NULL, 1,
    early_stopping => 'monitor=val_loss');
SELECT madlib_dl.madlib_keras_automl('iris_p2', 'hb_bad', 'arch', 'hb_bad_mst', ARRAY[1],
    $${'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['Adam']}],
       'metrics': ['accuracy']}$$, $${'batch_size': [16]}$$, 'hyperband', 'R=3, eta=3', 1,
    NULL, FALSE, 'iris_v2', early_stopping => 'monitor=val_mae');
SELECT to_regclass('m_bad') IS NULL AND to_regclass('fm_bad') IS NULL
       AND to_regclass('hb_bad') IS NULL AS nothing_written;
-- the internal check and the job: SQL-callable, checked the same way
SELECT madlib_dl._check_early_stopping(NULL, NULL, NULL) IS NULL AS null_is_none,
       madlib_dl._check_early_stopping('  ', NULL, NULL) IS NULL AS blank_is_none,
       madlib_dl._check_early_stopping('monitor=loss', NULL, NULL);
SELECT count(*) FROM madlib_dl._fit_run(madlib_dl._make_train_job('iris_p2', 'attributes',
    'class_text', ARRAY[(SELECT model_arch::text FROM arch)], ARRAY[:cp_jump], 1,
    num_segments => 2, early_stopping => 'monitor=val_accuracy'));

-- 6. restore_best's copy of the state counts in the memory check: with the
--    limit just above fit's estimate, fit passes and fit with restore_best
--    fails before it starts (54000)
SELECT ceil(madlib_dl._check_model_memory('fit', ARRAY[(SELECT model_arch::text FROM arch)],
    ARRAY[:cp_jump], ARRAY['batch_size=16, seed=7'], NULL, 4, 1, 2) / 1024)::int AS limit_kb \gset
SET madlib_dl.max_model_memory = :limit_kb;
SET client_min_messages = warning;
SELECT madlib_dl.fit('iris_p2', 'm_mem', 'arch', 1, :cp_jump, 'batch_size=16, seed=7', 4,
    FALSE, 'iris_v2', 1, early_stopping => 'patience=1');
DO $$
BEGIN
    PERFORM madlib_dl.fit('iris_p2', 'm_mem2', 'arch', 1,
        $c$loss='categorical_crossentropy', optimizer='Adam(learning_rate=PiecewiseConstantDecay([16], [0.01, 0.5]))', metrics=['accuracy']$c$,
        'batch_size=16, seed=7', 4, FALSE, 'iris_v2', 1,
        early_stopping => 'patience=1, restore_best=True');
    RAISE NOTICE 'restore_best: no error';
EXCEPTION WHEN program_limit_exceeded THEN
    RAISE WARNING 'restore_best: 54000, the best copy is counted';
END
$$;
RESET client_min_messages;
RESET madlib_dl.max_model_memory;
SELECT to_regclass('m_mem') IS NOT NULL AS fit_ran, to_regclass('m_mem2') IS NULL AS nothing_written;

DROP SCHEMA es_test CASCADE;
