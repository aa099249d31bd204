--
-- 22_averaging: fit's averaging every few mini-batches (averaging_period,
-- Su & Chen 2015), lr_scaling and Keras learning-rate schedules.
--   * with epochs=1, a period at least the largest partition's number of
--     mini-batches gives the bytes of NULL (once per iteration); a
--     shorter one does not (so the check can fail); one segment is
--     sequential training whatever the period;
--   * unequal segments: the same bytes with 0, 1 and 2 launched workers,
--     on the greenplum transport, and with partitions streamed rather
--     than cached (windows resumed in the middle);
--   * the summary records averaging_period and lr_scaling;
--   * lr_scaling multiplies the learning rate by the segments with rows;
--   * LearningRateSchedules in compile_params, counted in optimizer steps;
--   * bad values are refused before any table is written; a round record
--     that is not one, or does not fit the partition, is refused (XX001).
-- Only md5s and comparisons are printed: values depend on the CPU's kernels.
--
\set SHOW_CONTEXT never
CREATE SCHEMA averaging_test;
SET search_path = averaging_test, public;
\set ECHO none
\i test/data/iris.sql
\set ECHO all

-- 150 rows on 3 segments of 51, 51 and 48 rows: with batches of 16, 4, 4
-- and 3 mini-batches a pass
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'u3', 'class_text', 'attributes', 20, 1.0, NULL, '3');
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'u1', 'class_text', 'attributes', 20, 1.0, NULL, '1');
SELECT __dist_key__, sum(attributes_shape[1]) AS rows FROM u3 GROUP BY 1 ORDER BY 1;
\set arch '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "name": "dense_input"}}, {"class_name": "Dense", "config": {"name": "dense", "units": 10, "activation": "relu"}}, {"class_name": "Dropout", "config": {"rate": 0.2}}, {"class_name": "Dense", "config": {"name": "dense_1", "units": 3, "activation": "softmax"}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
SELECT madlib_dl.load_keras_model('arch', :'arch');
\set cp '$$loss=''categorical_crossentropy'', optimizer=''Adam(lr=0.01)'', metrics=[''accuracy'']$$'

-- The md5 of the weights of _fit_run on table tbl with the period, the
-- scaling and fit_params fp, and the workers it launched.
CREATE FUNCTION run(tbl regclass, nseg integer, period integer, scaling text, fp text,
                    iters integer DEFAULT 3, tr text DEFAULT 'workers', caching boolean DEFAULT NULL,
                    cp text DEFAULT NULL)
RETURNS TABLE (w text, losses double precision[], launched integer)
LANGUAGE sql AS $f$
    SELECT md5(r.model_weights), r.training_loss || r.validation_loss, r.workers_launched
      FROM madlib_dl._fit_run(madlib_dl._make_train_job(tbl, 'attributes', 'class_text',
               ARRAY[(SELECT model_arch::text FROM averaging_test.arch WHERE model_id = 1)],
               ARRAY[coalesce(cp, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$)],
               iters, fit_params => ARRAY[fp], validation => tbl, val_x_col => 'attributes',
               val_y_col => 'class_text', metrics_compute_frequency => 1, num_segments => nseg,
               transport => tr, use_caching => caching, averaging_period => period,
               lr_scaling => scaling)) r
$f$;
SET client_min_messages = warning;

-- 1. epochs=1: a period of at least 4 mini-batches (the largest
-- partition's) is once per iteration, byte for byte, metrics included;
-- 3 averages more often and trains otherwise
CREATE TEMP TABLE base AS SELECT * FROM run('u3', 3, NULL, NULL, 'batch_size=16, epochs=1');
SELECT p AS period, r.w = b.w AS same_weights, r.losses = b.losses AS same_metrics
  FROM base b, unnest(ARRAY[4, 5, 1000, 3, 1]) p, LATERAL run('u3', 3, p, NULL, 'batch_size=16, epochs=1') r;
-- with epochs=2 a visit is 8 mini-batches: 8 is once per iteration, 4 is not
SELECT p AS period, r.w = b.w AS same_weights
  FROM run('u3', 3, NULL, NULL, 'batch_size=16, epochs=2') b, unnest(ARRAY[8, 4]) p,
       LATERAL run('u3', 3, p, NULL, 'batch_size=16, epochs=2') r;
-- one segment: sequential training whatever the period (and lr_scaling,
-- with one segment of rows, scales by 1)
SELECT p AS period, r.w = b.w AS same_weights
  FROM run('u1', 1, NULL, NULL, 'batch_size=16, epochs=2') b, unnest(ARRAY[1, 3, 7]) p,
       LATERAL run('u1', 1, p, 'linear', 'batch_size=16, epochs=2') r;

-- 2. unequal segments, a period of 1 and 3 mini-batches, 2 epochs (rounds
-- that cross the passes), lr_scaling: the same bytes with 2, 1 and 0
-- launched workers, and on the greenplum transport (a round per query of
-- its aggregates)
SET max_parallel_workers = 2;
CREATE TEMP TABLE w2 AS
SELECT p, s, r.* FROM unnest(ARRAY[1, 3]) p, unnest(ARRAY['linear', 'none']) s,
       LATERAL run('u3', 3, p, nullif(s, 'none'), 'batch_size=16, epochs=2') r;
SET max_parallel_workers = 1;
CREATE TEMP TABLE w1 AS
SELECT p, s, r.* FROM unnest(ARRAY[1, 3]) p, unnest(ARRAY['linear', 'none']) s,
       LATERAL run('u3', 3, p, nullif(s, 'none'), 'batch_size=16, epochs=2') r;
SET max_parallel_workers = 0;
CREATE TEMP TABLE w0 AS
SELECT p, s, r.* FROM unnest(ARRAY[1, 3]) p, unnest(ARRAY['linear', 'none']) s,
       LATERAL run('u3', 3, p, nullif(s, 'none'), 'batch_size=16, epochs=2') r;
RESET max_parallel_workers;
CREATE TEMP TABLE gp AS
SELECT p, s, r.* FROM unnest(ARRAY[1, 3]) p, unnest(ARRAY['linear', 'none']) s,
       LATERAL run('u3', 3, p, nullif(s, 'none'), 'batch_size=16, epochs=2', tr => 'greenplum') r;
SELECT a.p AS period, a.s AS lr_scaling, a.launched AS launched_a, b.launched AS launched_b,
       c.launched AS launched_c, a.w = b.w AND a.w = c.w AS same_weights_2_1_0,
       a.losses = b.losses AND a.losses = c.losses AS same_metrics_2_1_0,
       a.w = g.w AND a.losses = g.losses AS greenplum_same
  FROM w2 a JOIN w1 b USING (p, s) JOIN w0 c USING (p, s) JOIN gp g USING (p, s)
 ORDER BY 1, 2;
-- lr_scaling and the period change the training (the checks above can fail)
SELECT count(DISTINCT w) AS distinct_weights FROM w2;

-- 3. windows resumed in the middle: 2 segments of 300 rows of 4096
-- features (16 rows a block of the shuffle, 256 a window: two windows a
-- segment), rounds of 5 batches of 16; streamed (each window read from
-- the table when it comes) and cached give the same bytes
SELECT setseed(0.5);
CREATE TABLE wide AS
SELECT g AS id, ARRAY(SELECT (random() * 2 - 1)::real FROM generate_series(1, 4096) WHERE g > 0) AS attributes,
       (g % 3)::text AS class_text
  FROM generate_series(1, 600) g;
SELECT madlib_dl.training_preprocessor_dl('wide', 'wide_p', 'class_text', 'attributes', 150, 1.0, NULL, '2');
SELECT madlib_dl.load_keras_model('arch',
  '{"class_name": "Sequential", "config": {"layers": [
     {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4096]}},
     {"class_name": "Dense", "config": {"units": 4, "activation": "relu"}},
     {"class_name": "Dropout", "config": {"rate": 0.2}},
     {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}');
CREATE FUNCTION run_wide(period integer, caching boolean, tr text DEFAULT 'workers')
RETURNS text
LANGUAGE sql AS $f$
    SELECT md5(r.model_weights)
      FROM madlib_dl._fit_run(madlib_dl._make_train_job('wide_p', 'attributes', 'class_text',
               ARRAY[(SELECT model_arch::text FROM averaging_test.arch WHERE model_id = 2)],
               ARRAY[$$loss='categorical_crossentropy', optimizer='SGD(lr=0.05, momentum=0.9)'$$],
               2, fit_params => ARRAY['batch_size=16, epochs=2'], num_segments => 2,
               transport => tr, use_caching => caching, averaging_period => period)) r
$f$;
SELECT run_wide(5, true) = run_wide(5, false) AS streamed_same,
       run_wide(5, true) = run_wide(5, false, 'greenplum') AS greenplum_streamed_same,
       run_wide(5, true) <> run_wide(NULL, true) AS period_changes_training,
       run_wide(NULL, true) = run_wide(38, false) AS whole_visit_same;

-- 4. the public fit: the summary records averaging_period and lr_scaling
SELECT madlib_dl.fit('u3', 'm_null', 'arch', 1, :cp, 'batch_size=16, epochs=1', 2);
SELECT madlib_dl.fit('u3', 'm_avg', 'arch', 1, :cp, 'batch_size=16, epochs=1', 2,
                     averaging_period => 2, lr_scaling => 'sqrt');
SELECT madlib_dl.madlib_keras_fit('u3', 'm_avg4', 'arch', 1, :cp, 'batch_size=16, epochs=1', 2,
                                  FALSE, NULL, NULL, FALSE, NULL, NULL, NULL, 4);
RESET client_min_messages;
SELECT averaging_period, lr_scaling FROM m_null_summary
UNION ALL SELECT averaging_period, lr_scaling FROM m_avg_summary
UNION ALL SELECT averaging_period, lr_scaling FROM m_avg4_summary;
SELECT (SELECT md5(model_weights) FROM m_null) = (SELECT md5(model_weights) FROM m_avg4) AS period_4_is_null,
       (SELECT md5(model_weights) FROM m_null) <> (SELECT md5(model_weights) FROM m_avg) AS sqrt_2_differs,
       (SELECT training_loss FROM m_null_summary) = (SELECT training_loss FROM m_avg4_summary) AS same_loss;
-- 5. learning-rate schedules: ExponentialDecay with decay_rate 1 is the
-- constant rate, bit for bit; a PiecewiseConstantDecay whose first value
-- holds for the whole run (6 steps a segment, boundary 100) is that
-- value; changing it at step 2 trains otherwise; the dict form Keras
-- serializes is the call form
SET client_min_messages = warning;
SELECT (SELECT w FROM run('u3', 3, 2, NULL, 'batch_size=16', cp => $$loss='categorical_crossentropy', optimizer='Adam(learning_rate=ExponentialDecay(0.01, 10, 1.0))'$$))
     = (SELECT w FROM run('u3', 3, 2, NULL, 'batch_size=16', cp => $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)'$$))
       AS exponential_rate_1_is_constant,
       (SELECT w FROM run('u3', 3, NULL, NULL, 'batch_size=16', cp => $$loss='categorical_crossentropy', optimizer='Adam(learning_rate=PiecewiseConstantDecay([100], [0.01, 0.5]))'$$))
     = (SELECT w FROM run('u3', 3, NULL, NULL, 'batch_size=16', cp => $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)'$$))
       AS piecewise_first_value,
       (SELECT w FROM run('u3', 3, NULL, NULL, 'batch_size=16', cp => $$loss='categorical_crossentropy', optimizer='Adam(learning_rate=PiecewiseConstantDecay([2], [0.01, 0.001]))'$$))
     <> (SELECT w FROM run('u3', 3, NULL, NULL, 'batch_size=16', cp => $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)'$$))
       AS piecewise_step_2_differs,
       (SELECT w FROM run('u3', 3, NULL, NULL, 'batch_size=16', cp => $$loss='categorical_crossentropy', optimizer='SGD(learning_rate=InverseTimeDecay(0.1, 5, 0.5, staircase=True))'$$))
     = (SELECT w FROM run('u3', 3, NULL, NULL, 'batch_size=16', cp => $$loss='categorical_crossentropy', optimizer=SGD(learning_rate={"class_name": "InverseTimeDecay", "config": {"initial_learning_rate": 0.1, "decay_steps": 5, "decay_rate": 0.5, "staircase": true, "name": null}})$$))
       AS dict_form_same;
SELECT madlib_dl.fit('u3', 'm_sched', 'arch', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(learning_rate=ExponentialDecay(initial_learning_rate=0.01, decay_steps=4, decay_rate=0.5))', metrics=['accuracy']$$,
    'batch_size=16', 2);
RESET client_min_messages;
SELECT compile_params, training_metrics_final >= 0 AS trained FROM m_sched_summary;
-- the schedules' errors name the piece
\set VERBOSITY terse
SELECT * FROM madlib_dl._check_params($$loss='mse', optimizer='SGD(lr=ExponentialDecay(0.1, 100))'$$, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM madlib_dl._check_params($$loss='mse', optimizer='SGD(lr=StepDecay(0.1, 100))'$$, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM madlib_dl._check_params($$loss='mse', optimizer='SGD(lr=PiecewiseConstantDecay([10], [0.1]))'$$, NULL);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default

-- 5b. divergence in the second round of iteration 2 (a schedule whose
-- rate explodes at step 5; iteration 1 is 4 steps): fit keeps the weights
-- of iteration 1, not the average of iteration 2's first round
SET client_min_messages = error;
SELECT (SELECT w FROM run('u3', 3, 1, NULL, 'batch_size=16', 3, cp => $$loss='categorical_crossentropy', optimizer='Adam(learning_rate=PiecewiseConstantDecay([4], [0.01, 1e30]))'$$))
     = (SELECT w FROM run('u3', 3, 1, NULL, 'batch_size=16', 1, cp => $$loss='categorical_crossentropy', optimizer='Adam(learning_rate=PiecewiseConstantDecay([4], [0.01, 1e30]))'$$))
       AS diverged_keeps_iteration_1,
       (SELECT cardinality(losses) FROM run('u3', 3, 1, NULL, 'batch_size=16', 3, cp => $$loss='categorical_crossentropy', optimizer='Adam(learning_rate=PiecewiseConstantDecay([4], [0.01, 1e30]))'$$))
       AS metric_points;
RESET client_min_messages;

-- 6. bad values: refused before any table is written
\set VERBOSITY terse
SELECT madlib_dl.fit('u3', 'bad', 'arch', 1, :cp, NULL, 2, averaging_period => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.fit('u3', 'bad', 'arch', 1, :cp, NULL, 2, averaging_period => -5);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.fit('u3', 'bad', 'arch', 1, :cp, NULL, 2, lr_scaling => 'cubic');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.fit('u3', 'bad', 'arch', 1, :cp, NULL, 2, lr_scaling => 'Linear');
\echo :LAST_ERROR_SQLSTATE
SELECT w FROM run('u3', 3, 0, NULL, 'batch_size=16');
\echo :LAST_ERROR_SQLSTATE
SELECT w FROM run('u3', 3, NULL, '', 'batch_size=16');
\echo :LAST_ERROR_SQLSTATE
-- fit_multiple trains one model per segment: it takes no averaging
SELECT count(*) FROM madlib_dl._fit_multiple_run(madlib_dl._make_train_job('u3', 'attributes', 'class_text',
    ARRAY[:'arch', :'arch'], ARRAY[:cp, :cp], 1, num_segments => 3, averaging_period => 2));
\echo :LAST_ERROR_SQLSTATE
-- a state whose round record is not one, or whose position does not fit
-- the partition, given to the step aggregate by hand
\set bufs 'buffer_id, class_text, attributes, class_text_shape, attributes_shape'
\set rec '4d444c52010000000100000000000000000000000000f03f010000000000000000000000000000000000000000000000000000000000000000040000000000000000000000000000'
SELECT madlib_dl._gp_fit_segment(ROW(madlib_dl._initial_state(:'arch', NULL, :cp, NULL)
           || decode(repeat('00', 168), 'hex'), :'arch', :cp, NULL, 1, 0, NULL)::madlib_dl._step, :bufs)
  FROM u3 WHERE __dist_key__ = 0;
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl._gp_fit_segment(ROW(madlib_dl._initial_state(:'arch', NULL, :cp, NULL)
           || decode(:'rec' || repeat('00', 96), 'hex'), :'arch', :cp, NULL, 1, 0, NULL)::madlib_dl._step, :bufs)
  FROM u3 WHERE __dist_key__ = 0;
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
SELECT to_regclass('bad') IS NULL AS no_table, to_regclass('bad_summary') IS NULL AS no_summary;
