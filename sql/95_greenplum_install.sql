--
-- 95_greenplum_install: the Greenplum / Cloudberry path, checked on
-- PostgreSQL (docs/greenplum.md).
--   * the install script created no Greenplum-only object here;
--   * the step aggregates are plain aggregates (no ORDER BY, no direct
--     argument) with the step as their first argument;
--   * the greenplum transport (a round of steps per query of the step
--     aggregates, grouped by __dist_key__) gives the bytes of the workers
--     transport: _fit_run and _fit_multiple_run on jobs that differ only
--     in their transport, for fit on 1, 2 and 3 segments, fit_multiple
--     with K < N, K = N and K > N, a segment without rows, and training
--     that diverges on one segment; the metrics are the same values;
--   * it leaves no temporary table, and never touches the user's own;
--     the memory check counts its slots in the coordinator's memory;
--   * the aggregates refuse what a caller may pass them: NULLs, bad
--     shapes, a corrupt state, a call outside an aggregate.
-- Only md5s and comparisons are printed: values depend on the CPU's
-- kernels.
--
\set SHOW_CONTEXT never
CREATE SCHEMA gp_test;
SET search_path = gp_test, public;
\set ECHO none
\i test/data/iris.sql
\set ECHO all

-- 1. what was installed
SELECT madlib_dl._is_greenplum() AS is_greenplum;
SELECT to_regprocedure('madlib_dl._gp_segment_keys()') IS NULL AS no_segment_keys,
       to_regprocedure('madlib_dl._gp_place_buffers(text[])') IS NULL AS no_place_buffers;
SELECT p.proname, a.aggkind, a.aggnumdirectargs, format_type(a.aggtranstype, NULL) AS stype,
       pg_get_function_arguments(p.oid) AS arguments, format_type(p.prorettype, NULL) AS result
  FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
 WHERE p.pronamespace = 'madlib_dl'::regnamespace
 ORDER BY 1;

-- data on 1, 2 and 3 segments
CREATE TABLE iris_train AS SELECT * FROM iris_data WHERE id % 5 <> 0;
CREATE TABLE iris_test AS SELECT * FROM iris_data WHERE id % 5 = 0;
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'p1', 'class_text', 'attributes', 20, 1.0, NULL, '1');
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'p2', 'class_text', 'attributes', 20, 1.0, NULL, '2');
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'p3', 'class_text', 'attributes', 20, 1.0, NULL, '3');
SELECT madlib_dl.validation_preprocessor_dl('iris_test', 'v3', 'class_text', 'attributes', 'p3');
SELECT 'p3' AS tbl, count(*) AS buffers, array_agg(DISTINCT __dist_key__) AS keys FROM p3;
SELECT madlib_dl._gp_table_keys('p3') AS segment_keys;

\set arch '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "name": "dense_input"}}, {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "batch_input_shape": [null, 4], "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}}}, {"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 3, "activation": "softmax", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
\set arch2 '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "name": "dense_input"}}, {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "batch_input_shape": [null, 4], "dtype": "float32", "units": 6, "activation": "tanh", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}}}, {"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 3, "activation": "softmax", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
\set cp '$$loss=''categorical_crossentropy'', optimizer=''Adam(lr=0.01)'', metrics=[''accuracy'']$$'
\set fp '$$batch_size=8, epochs=2, seed=7$$'

-- A job on table tbl (validation val, or NULL) for transport tr.
CREATE FUNCTION job(tbl regclass, val regclass, archs text[], cps text[], fps text[], iters integer,
                    freq integer, nseg integer, tr text, keys integer[] DEFAULT NULL)
RETURNS madlib_dl._train_job
LANGUAGE sql AS $f$
    SELECT madlib_dl._make_train_job(tbl, 'attributes', 'class_text', archs, cps, iters,
               fit_params => fps, mst_keys => keys, validation => val,
               val_x_col => CASE WHEN val IS NOT NULL THEN 'attributes' END,
               val_y_col => CASE WHEN val IS NOT NULL THEN 'class_text' END,
               metrics_compute_frequency => freq, num_segments => nseg, transport => tr)
$f$;

-- 2. fit: the greenplum transport against the workers transport, byte
-- for byte, metrics included
CREATE FUNCTION fit_pair(tbl regclass, val regclass, iters integer, freq integer, nseg integer,
                         arch text, cp text, fp text)
RETURNS TABLE (same_weights boolean, same_metrics boolean, same_iters boolean, n_points integer,
               workers_launched integer)
LANGUAGE plpgsql AS $f$
DECLARE
    a madlib_dl._fit_result := madlib_dl._fit_run(job(tbl, val, ARRAY[arch], ARRAY[cp], ARRAY[fp],
                                                      iters, freq, nseg, 'workers'));
    b madlib_dl._fit_result := madlib_dl._fit_run(job(tbl, val, ARRAY[arch], ARRAY[cp], ARRAY[fp],
                                                      iters, freq, nseg, 'greenplum'));
BEGIN
    RETURN QUERY SELECT
        md5(a.model_weights) = md5(b.model_weights),
        a.training_loss = b.training_loss
            AND a.training_metrics IS NOT DISTINCT FROM b.training_metrics
            AND a.validation_loss IS NOT DISTINCT FROM b.validation_loss
            AND a.validation_metrics IS NOT DISTINCT FROM b.validation_metrics,
        a.metrics_iters = b.metrics_iters,
        cardinality(b.metrics_iters),
        b.workers_launched;
END
$f$;
SET client_min_messages = warning;
SELECT 1 AS segments, * FROM fit_pair('p1', NULL, 2, 1, 1, :'arch', :cp, :fp);
SELECT 2 AS segments, * FROM fit_pair('p2', NULL, 3, 2, 2, :'arch', :cp, :fp);
SELECT 3 AS segments, * FROM fit_pair('p3', 'v3', 3, 1, 3, :'arch', :cp, :fp);
RESET client_min_messages;

-- 3. fit_multiple: the greenplum transport against the workers
-- transport, K < N, K = N, K > N
CREATE FUNCTION mop_pair(tbl regclass, val regclass, k integer, iters integer, nseg integer,
                         arch1 text, arch2 text)
RETURNS TABLE (mst_key integer, same_weights boolean, same_status boolean, same_metrics boolean,
               same_schedule boolean, n_points integer)
LANGUAGE plpgsql AS $f$
DECLARE
    keys integer[] := ARRAY(SELECT 10 + g FROM generate_series(1, k) g);
    archs text[] := ARRAY(SELECT CASE WHEN g % 2 = 0 THEN arch1 ELSE arch2 END FROM generate_series(1, k) g);
    cps text[] := ARRAY(SELECT format('loss=''categorical_crossentropy'', optimizer=''%s(lr=0.0%s)'', metrics=[''accuracy'']',
                                      CASE WHEN g % 3 = 0 THEN 'SGD' ELSE 'Adam' END, g)
                          FROM generate_series(1, k) g);
    fps text[] := ARRAY(SELECT format('batch_size=8, epochs=%s, seed=%s', 1 + g % 2, g) FROM generate_series(1, k) g);
BEGIN
    CREATE TEMP TABLE mop_a ON COMMIT DROP AS
    SELECT * FROM madlib_dl._fit_multiple_run(job(tbl, val, archs, cps, fps, iters, 1, nseg, 'workers', keys));
    CREATE TEMP TABLE mop_b ON COMMIT DROP AS
    SELECT * FROM madlib_dl._fit_multiple_run(job(tbl, val, archs, cps, fps, iters, 1, nseg, 'greenplum', keys));
    RETURN QUERY SELECT a.mst_key, md5(a.model_weights) = md5(b.model_weights), a.status = b.status,
        a.training_loss = b.training_loss AND a.training_metrics = b.training_metrics
            AND a.validation_loss IS NOT DISTINCT FROM b.validation_loss
            AND a.validation_metrics IS NOT DISTINCT FROM b.validation_metrics
            AND a.metrics_iters = b.metrics_iters,
        a.schedule IS NOT DISTINCT FROM b.schedule, cardinality(b.metrics_iters)
      FROM mop_a a JOIN mop_b b USING (mst_key) ORDER BY 1;
END
$f$;
SET client_min_messages = warning;
BEGIN;
SELECT 'K<N' AS k_vs_n, * FROM mop_pair('p3', 'v3', 2, 2, 3, :'arch', :'arch2');
COMMIT;
BEGIN;
SELECT 'K=N' AS k_vs_n, * FROM mop_pair('p3', NULL, 3, 2, 3, :'arch', :'arch2');
COMMIT;
BEGIN;
SELECT 'K>N' AS k_vs_n, * FROM mop_pair('p2', NULL, 5, 2, 2, :'arch', :'arch2');
COMMIT;
-- one model on one segment: fit_multiple is fit
SELECT md5((SELECT model_weights FROM madlib_dl._fit_multiple_run(
                job('p1', NULL, ARRAY[:'arch'], ARRAY[:cp], ARRAY[:fp], 3, 3, 1, 'greenplum'))))
     = md5((madlib_dl._fit_run(job('p1', NULL, ARRAY[:'arch'], ARRAY[:cp], ARRAY[:fp], 3, 3, 1,
                                   'greenplum'))).model_weights) AS mop_equals_fit;
RESET client_min_messages;

-- 4. a segment without rows: p3 less its segment 2 (a job of 3 segments,
-- 2 keys), with the validation share of segment 2
CREATE TABLE p3e AS SELECT * FROM p3 WHERE __dist_key__ <> 2;
CREATE TABLE p3e_summary AS SELECT * FROM p3_summary;
SELECT madlib_dl._gp_table_keys('p3e') AS segment_keys;
SET client_min_messages = warning;
SELECT 'empty segment' AS fit, * FROM fit_pair('p3e', 'v3', 2, 1, 3, :'arch', :cp, :fp);
BEGIN;
SELECT 'empty segment' AS fit_multiple, * FROM mop_pair('p3e', 'v3', 2, 2, 3, :'arch', :'arch2');
COMMIT;
RESET client_min_messages;

-- 5. divergence on one segment: in a buffer of segment 1 every row's
-- first feature is 1e30, so a softmax regression with plain SGD diverges
-- there (its weights grow to about 1e28 in the first batch, the logits
-- overflow in the next).  fit stops with a WARNING naming the segment and keeps the
-- last finite average; in fit_multiple that model stops on its first
-- visit there, with the state it had before, and the other goes on; the
-- same on both transports
CREATE TABLE p3d AS SELECT * FROM p3;
CREATE TABLE p3d_summary AS SELECT * FROM p3_summary;
UPDATE p3d SET attributes = (SELECT string_agg(CASE WHEN i % 16 = 0 THEN '\xcaf24971'::bytea
                                                   ELSE substr(attributes, i + 1, 4) END, ''::bytea ORDER BY i)
                               FROM generate_series(0, length(attributes) - 1, 4) i)
 WHERE buffer_id = (SELECT min(buffer_id) FROM p3 WHERE __dist_key__ = 1);
\set sgd '$$loss=''categorical_crossentropy'', optimizer=''SGD(lr=0.1)'', metrics=[''accuracy'']$$'
\set linear '{"class_name": "Sequential", "config": {"layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4]}}, {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}'
SET client_min_messages = warning;
SELECT md5(a.model_weights) = md5(b.model_weights) AS same_weights, a.metrics_iters = b.metrics_iters AS same_iters,
       cardinality(b.metrics_iters) AS n_points
  FROM madlib_dl._fit_run(job('p3d', NULL, ARRAY[:'linear'], ARRAY[:sgd], ARRAY[:fp], 3, 1, 3, 'workers')) a,
       madlib_dl._fit_run(job('p3d', NULL, ARRAY[:'linear'], ARRAY[:sgd], ARRAY[:fp], 3, 1, 3, 'greenplum')) b;
CREATE TABLE div_a AS SELECT * FROM madlib_dl._fit_multiple_run(
    job('p3d', NULL, ARRAY[:'linear', :'arch2'], ARRAY[:sgd, :cp], ARRAY[:fp, :fp], 2, 1, 3, 'workers'));
CREATE TABLE div_b AS SELECT * FROM madlib_dl._fit_multiple_run(
    job('p3d', NULL, ARRAY[:'linear', :'arch2'], ARRAY[:sgd, :cp], ARRAY[:fp, :fp], 2, 1, 3, 'greenplum'));
-- and a model that diverges everywhere stops while the other goes on
CREATE TABLE div_c AS SELECT * FROM madlib_dl._fit_multiple_run(
    job('p2', NULL, ARRAY[:'arch', :'arch'], ARRAY[:cp, $$loss='categorical_crossentropy', optimizer='SGD(lr=1e30)'$$],
        ARRAY[:fp, :fp], 2, 1, 2, 'workers'));
CREATE TABLE div_d AS SELECT * FROM madlib_dl._fit_multiple_run(
    job('p2', NULL, ARRAY[:'arch', :'arch'], ARRAY[:cp, $$loss='categorical_crossentropy', optimizer='SGD(lr=1e30)'$$],
        ARRAY[:fp, :fp], 2, 1, 2, 'greenplum'));
RESET client_min_messages;
SELECT 'one segment' AS diverges, b.mst_key, b.status, a.status = b.status AS same_status,
       md5(a.model_weights) = md5(b.model_weights) AS same_weights,
       a.metrics_iters = b.metrics_iters AS same_iters
  FROM div_a a JOIN div_b b USING (mst_key)
UNION ALL
SELECT 'one model', b.mst_key, b.status, a.status = b.status, md5(a.model_weights) = md5(b.model_weights),
       a.metrics_iters = b.metrics_iters
  FROM div_c a JOIN div_d b USING (mst_key) ORDER BY 1, 2;

-- 6. temporary tables: the round table is gone after a run, and a
-- user's table of its name is neither used nor dropped
CREATE TEMP TABLE madlib_dl_gp_round_1 (note text);
INSERT INTO madlib_dl_gp_round_1 VALUES ('mine');
SET client_min_messages = warning;
SELECT md5((madlib_dl._fit_run(job('p2', NULL, ARRAY[:'arch'], ARRAY[:cp], ARRAY[:fp], 1, 1, 2,
                                   'greenplum'))).model_weights)
     = md5((madlib_dl._fit_run(job('p2', NULL, ARRAY[:'arch'], ARRAY[:cp], ARRAY[:fp], 1, 1, 2,
                                   'workers'))).model_weights) AS same_weights;
RESET client_min_messages;
SELECT * FROM madlib_dl_gp_round_1;
SELECT count(*) AS round_tables_left FROM pg_class
 WHERE relname LIKE 'madlib\_dl\_gp\_round%' AND relpersistence = 't' AND relname <> 'madlib_dl_gp_round_1';
DROP TABLE madlib_dl_gp_round_1;

-- the memory check of a distributed fit counts the coordinator's slots:
-- one state per segment (and a round's states sent), so 64 segments need
-- 2 x 63 states more than one
SELECT (madlib_dl._check_model_memory('distributed', ARRAY[:'arch'], ARRAY[:cp], ARRAY[:fp], NULL,
                                      num_segments => 64)
        - madlib_dl._check_model_memory('distributed', ARRAY[:'arch'], ARRAY[:cp], ARRAY[:fp], NULL,
                                        num_segments => 1))
       / (96 + 12 * (madlib_dl._arch_info(:'arch')).n_params) AS extra_states;

-- 7. errors
-- more segment keys than segments in the job
SELECT madlib_dl._fit_run(job('p3', NULL, ARRAY[:'arch'], ARRAY[:cp], ARRAY[:fp], 1, 1, 2, 'greenplum'));
-- a table without __dist_key__
CREATE TABLE p2n AS SELECT buffer_id, class_text, attributes, class_text_shape, attributes_shape FROM p2;
SELECT madlib_dl._fit_run(job('p2n', NULL, ARRAY[:'arch'], ARRAY[:cp], ARRAY[:fp], 1, 1, 2, 'greenplum'));
-- the aggregates, called by hand
\set bufs 'buffer_id, class_text, attributes, class_text_shape, attributes_shape'
SELECT madlib_dl._gp_fit_segment(NULL::madlib_dl._step, :bufs) FROM p1;
SELECT madlib_dl._gp_fit_segment(ROW(NULL, :'arch', :cp, NULL, 1, 0, NULL)::madlib_dl._step, :bufs) FROM p1;
SELECT madlib_dl._gp_eval_segment(ROW('\x00', NULL, :cp, NULL, 1, 0, NULL)::madlib_dl._step, :bufs) FROM p1;
SELECT madlib_dl._gp_fit_segment(ROW('\x00', :'arch', :cp, NULL, NULL, 0, NULL)::madlib_dl._step, :bufs) FROM p1;
SELECT madlib_dl._gp_fit_segment(ROW('\x00', :'arch', :cp, NULL, 1, 0, NULL)::madlib_dl._step, :bufs) FROM p1;
SELECT madlib_dl._gp_eval_segment(ROW('\x00', :'arch', :cp, NULL, 1, 0, NULL)::madlib_dl._step, :bufs) FROM p1;
SELECT madlib_dl._gp_fit_segment(ROW('\x00', :'arch', :cp, NULL, 1, 0, NULL)::madlib_dl._step,
       buffer_id, NULL::bytea, attributes, class_text_shape, attributes_shape) FROM p1;
SELECT madlib_dl._gp_fit_segment(ROW('\x00', :'arch', :cp, NULL, 1, 0, NULL)::madlib_dl._step,
       NULL::integer, class_text, attributes, class_text_shape, attributes_shape) FROM p1;
SELECT madlib_dl._gp_fit_segment(ROW('\x00', :'arch', :cp, NULL, 1, 0, NULL)::madlib_dl._step,
       buffer_id, class_text, attributes, ARRAY[1], attributes_shape) FROM p1;
SELECT madlib_dl._gp_fit_segment(ROW('\x00', :'arch', :cp, NULL, 1, 0, NULL)::madlib_dl._step,
       buffer_id, class_text, attributes, class_text_shape,
       CASE WHEN buffer_id = 0 THEN ARRAY[20, 5] ELSE attributes_shape END) FROM p1;
SELECT madlib_dl._gp_fit_segment(ROW('\x00', :'arch', :cp, NULL, 1, 0, NULL)::madlib_dl._step,
       buffer_id, class_text, '\x0000'::bytea, class_text_shape, attributes_shape) FROM p1;
-- no rows: nothing is trained and the state is not read
SELECT (r).state IS NULL AS no_state, (r).n, (r).diverged
  FROM (SELECT madlib_dl._gp_fit_segment(ROW('\x00', :'arch', :cp, NULL, 1, 0, NULL)::madlib_dl._step, :bufs) AS r
          FROM p1 WHERE false) s;

DROP SCHEMA gp_test CASCADE;
