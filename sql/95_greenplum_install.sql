--
-- 95_greenplum_install: the Greenplum / Cloudberry path, checked on
-- PostgreSQL (docs/greenplum.md).
--   * the install script created no Greenplum-only object here;
--   * the aggregates are real two-phase aggregates (COMBINEFUNC,
--     SERIALFUNC, DESERIALFUNC, PARALLEL SAFE);
--   * the per-segment aggregate, grouped by __dist_key__, gives the bytes
--     of the parallel-worker segments: fit (_gp_fit_run, model averaging
--     by _avg_states) and fit_multiple (_gp_fit_multiple_run, the
--     schedule table rotated each hop) against _fit_run and
--     _fit_multiple_run, for 1, 2 and 3 segments and K < N, K = N, K > N;
--   * every model visits every segment once per iteration;
--   * the partial-aggregate paths (serialize, deserialize, combine) run.
-- Only md5s and relations are printed: values depend on the CPU's kernels.
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
SELECT p.proname, a.aggcombinefn <> 0 AS has_combine, a.aggserialfn <> 0 AS has_serial,
       a.aggdeserialfn <> 0 AS has_deserial, format_type(a.aggtranstype, NULL) AS stype,
       p.proparallel
  FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
 WHERE p.pronamespace = 'madlib_dl'::regnamespace
   AND p.proname IN ('_gp_fit_segment', '_avg_states', '_gp_eval_segment')
 ORDER BY 1;

-- data on 1, 2 and 3 segments
CREATE TABLE iris_train AS SELECT * FROM iris_data WHERE id % 5 <> 0;
CREATE TABLE iris_test AS SELECT * FROM iris_data WHERE id % 5 = 0;
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'p1', 'class_text', 'attributes', 20, 1.0, NULL, '1');
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'p2', 'class_text', 'attributes', 20, 1.0, NULL, '2');
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'p3', 'class_text', 'attributes', 20, 1.0, NULL, '3');
SELECT madlib_dl.validation_preprocessor_dl('iris_test', 'v3', 'class_text', 'attributes', 'p3');
SELECT 'p3' AS tbl, count(*) AS buffers, array_agg(DISTINCT __dist_key__) AS keys FROM p3;

\set arch '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "name": "dense_input"}}, {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "batch_input_shape": [null, 4], "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}}}, {"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 3, "activation": "softmax", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
\set arch2 '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "name": "dense_input"}}, {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "batch_input_shape": [null, 4], "dtype": "float32", "units": 6, "activation": "tanh", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}}}, {"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 3, "activation": "softmax", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
\set cp '$$loss=''categorical_crossentropy'', optimizer=''Adam(lr=0.01)'', metrics=[''accuracy'']$$'
\set fp '$$batch_size=8, epochs=2, seed=7$$'

-- 2. one segment step, by hand: initial state -> _gp_fit_segment ->
-- weights, against one iteration of the parallel-worker fit
SET client_min_messages = warning;
CREATE TABLE ref1 AS
SELECT (r).model_weights AS w
  FROM (SELECT madlib_dl._fit_run('p1'::regclass, 'attributes', 'class_text', NULL, NULL, NULL,
                                  :'arch'::json, NULL, :cp, :fp, 1, 1, 1) AS r) s;
RESET client_min_messages;
SELECT md5(madlib_dl._gp_state_weights(t.state, :'arch'::json)) = (SELECT md5(w) FROM ref1) AS step_equals_fit,
       octet_length(t.state) > 0 AS has_state
  FROM (SELECT madlib_dl._gp_fit_segment(class_text, attributes, class_text_shape, attributes_shape,
               madlib_dl._gp_initial_state(:'arch'::json, NULL, :cp, :fp), :'arch'::json, :cp, :fp, 1, 0
               ORDER BY buffer_id) AS state
          FROM p1 GROUP BY __dist_key__) t;
-- the step's state records the samples it trained on (epochs x rows),
-- little-endian at byte 80
SELECT (SELECT sum(x) FROM (SELECT get_byte(t.state, 80 + i) * (256::numeric ^ i) AS x
                              FROM generate_series(0, 7) i) b)::bigint AS samples_seen,
       2 * (SELECT count(*) FROM iris_train) AS expected
  FROM (SELECT madlib_dl._gp_fit_segment(class_text, attributes, class_text_shape, attributes_shape,
               madlib_dl._gp_initial_state(:'arch'::json, NULL, :cp, :fp), :'arch'::json, :cp, :fp, 1, 0
               ORDER BY buffer_id) AS state
          FROM p1 GROUP BY __dist_key__) t;

-- 3. fit: _gp_fit_run against _fit_run, byte for byte
CREATE FUNCTION fit_pair(tbl regclass, val regclass, iters integer, freq integer,
                         arch json, cp text, fp text)
RETURNS TABLE (same_weights boolean, same_iters boolean, loss_close boolean, metric_close boolean,
               val_close boolean, n_segments integer)
LANGUAGE plpgsql AS $f$
DECLARE
    a madlib_dl._fit_result;
    b madlib_dl._fit_result;
    nseg integer;
BEGIN
    EXECUTE format('SELECT count(DISTINCT __dist_key__) FROM %s', tbl) INTO nseg;
    a := madlib_dl._fit_run(tbl, 'attributes', 'class_text', val,
                            CASE WHEN val IS NOT NULL THEN 'attributes' END,
                            CASE WHEN val IS NOT NULL THEN 'class_text' END,
                            arch, NULL, cp, fp, iters, freq, nseg);
    b := madlib_dl._gp_fit_run(tbl, 'attributes', 'class_text', val,
                               CASE WHEN val IS NOT NULL THEN 'attributes' END,
                               CASE WHEN val IS NOT NULL THEN 'class_text' END,
                               arch, NULL, cp, fp, iters, freq);
    RETURN QUERY SELECT
        md5(a.model_weights) = md5(b.model_weights),
        a.metrics_iters = b.metrics_iters,
        (SELECT bool_and(abs(x - y) < 1e-6) FROM unnest(a.training_loss, b.training_loss) u(x, y)),
        (SELECT bool_and(abs(x - y) < 1e-6) FROM unnest(a.training_metrics, b.training_metrics) u(x, y)),
        coalesce((SELECT bool_and(abs(x - y) < 1e-6)
                    FROM unnest(a.validation_loss || a.validation_metrics,
                                b.validation_loss || b.validation_metrics) u(x, y)), val IS NULL),
        b.workers_launched;
END
$f$;
SET client_min_messages = warning;
SELECT 1 AS segments, * FROM fit_pair('p1', NULL, 2, 1, :'arch', :cp, :fp);
SELECT 2 AS segments, * FROM fit_pair('p2', NULL, 3, 2, :'arch', :cp, :fp);
SELECT 3 AS segments, * FROM fit_pair('p3', 'v3', 3, 1, :'arch', :cp, :fp);
RESET client_min_messages;

-- 4. fit_multiple: _gp_fit_multiple_run (schedule table, rotated each
-- hop) against _fit_multiple_run (parallel workers), K < N, K = N, K > N
CREATE FUNCTION mop_pair(tbl regclass, val regclass, k integer, iters integer, arch1 text, arch2 text)
RETURNS TABLE (mst_key integer, same_weights boolean, same_status boolean, same_iters boolean,
               metrics_close boolean, same_schedule boolean)
LANGUAGE plpgsql AS $f$
DECLARE
    keys integer[] := ARRAY(SELECT 10 + g FROM generate_series(1, k) g);
    archs text[] := ARRAY(SELECT CASE WHEN g % 2 = 0 THEN arch1 ELSE arch2 END FROM generate_series(1, k) g);
    cps text[] := ARRAY(SELECT format('loss=''categorical_crossentropy'', optimizer=''%s(lr=0.0%s)'', metrics=[''accuracy'']',
                                      CASE WHEN g % 3 = 0 THEN 'SGD' ELSE 'Adam' END, g)
                          FROM generate_series(1, k) g);
    fps text[] := ARRAY(SELECT format('batch_size=8, epochs=%s, seed=%s', 1 + g % 2, g) FROM generate_series(1, k) g);
    inits bytea[] := array_fill(NULL::bytea, ARRAY[k]);
    nseg integer;
BEGIN
    EXECUTE format('SELECT count(DISTINCT __dist_key__) FROM %s', tbl) INTO nseg;
    CREATE TEMP TABLE mop_a ON COMMIT DROP AS
    SELECT * FROM madlib_dl._fit_multiple_run(tbl, 'attributes', 'class_text', val,
        CASE WHEN val IS NOT NULL THEN 'attributes' END, CASE WHEN val IS NOT NULL THEN 'class_text' END,
        keys, archs, inits, cps, fps, iters, 1, nseg, 1);
    CREATE TEMP TABLE mop_b ON COMMIT DROP AS
    SELECT * FROM madlib_dl._gp_fit_multiple_run(tbl, 'attributes', 'class_text', val,
        CASE WHEN val IS NOT NULL THEN 'attributes' END, CASE WHEN val IS NOT NULL THEN 'class_text' END,
        keys, archs, inits, cps, fps, iters, 1, nseg, 1);
    RETURN QUERY SELECT a.mst_key, md5(a.model_weights) = md5(b.model_weights), a.status = b.status,
        a.metrics_iters = b.metrics_iters,
        (SELECT bool_and(abs(x - y) < 1e-6)
           FROM unnest(a.training_loss || a.training_metrics || coalesce(a.validation_loss, '{}') || coalesce(a.validation_metrics, '{}'),
                       b.training_loss || b.training_metrics || coalesce(b.validation_loss, '{}') || coalesce(b.validation_metrics, '{}')) u(x, y)),
        a.schedule IS NOT DISTINCT FROM b.schedule
      FROM mop_a a JOIN mop_b b USING (mst_key) ORDER BY 1;
END
$f$;

-- every model visits every segment exactly once per iteration, and no
-- segment holds two models in one hop
CREATE FUNCTION visits_ok(nseg integer, k integer, iters integer)
RETURNS TABLE (visits bigint, each_model_each_segment_once boolean, one_model_per_segment_per_hop boolean,
               hops_per_iteration bigint)
LANGUAGE plpgsql AS $f$
BEGIN
    RETURN QUERY
    SELECT (SELECT count(*) FROM pg_temp.madlib_dl_gp_visits),
           (SELECT bool_and(c = 1) AND count(*) = nseg * k * iters
              FROM (SELECT v.it, v.mst_key, v.segment, count(*) AS c FROM pg_temp.madlib_dl_gp_visits v
                     GROUP BY 1, 2, 3) v),
           (SELECT bool_and(c = 1) FROM (SELECT v.it, v.hop, v.segment, count(*) AS c
                                           FROM pg_temp.madlib_dl_gp_visits v GROUP BY 1, 2, 3) v),
           (SELECT count(DISTINCT v.hop) FROM pg_temp.madlib_dl_gp_visits v WHERE v.it = 1);
END
$f$;

SET client_min_messages = warning;
BEGIN;
SELECT 'K<N' AS k_vs_n, * FROM mop_pair('p3', 'v3', 2, 2, :'arch', :'arch2');
SELECT * FROM visits_ok(3, 2, 2);
COMMIT;
BEGIN;
SELECT 'K=N' AS k_vs_n, * FROM mop_pair('p3', NULL, 3, 2, :'arch', :'arch2');
SELECT * FROM visits_ok(3, 3, 2);
COMMIT;
BEGIN;
SELECT 'K>N' AS k_vs_n, * FROM mop_pair('p2', NULL, 5, 2, :'arch', :'arch2');
SELECT * FROM visits_ok(2, 5, 2);
COMMIT;
RESET client_min_messages;

-- one model on one segment: fit_multiple is fit
SET client_min_messages = warning;
SELECT md5((SELECT model_weights FROM madlib_dl._gp_fit_multiple_run('p1', 'attributes', 'class_text',
               NULL, NULL, NULL, ARRAY[1], ARRAY[:'arch'], ARRAY[NULL::bytea], ARRAY[:cp], ARRAY[:fp],
               3, 3, 1, 1)))
     = md5((madlib_dl._gp_fit_run('p1', 'attributes', 'class_text', NULL, NULL, NULL,
               :'arch'::json, NULL, :cp, :fp, 3, 3)).model_weights) AS mop_equals_fit;
RESET client_min_messages;

-- a model that diverges stops (NOTICE naming it), keeps its last finite
-- state, and the others go on: as on the parallel-worker path
SET client_min_messages = warning;
CREATE TABLE div_a AS SELECT * FROM madlib_dl._fit_multiple_run('p2', 'attributes', 'class_text',
       NULL, NULL, NULL, ARRAY[1, 2], ARRAY[:'arch', :'arch'], ARRAY[NULL::bytea, NULL],
       ARRAY[:cp, $$loss='categorical_crossentropy', optimizer='SGD(lr=1e30)'$$],
       ARRAY[:fp, :fp], 2, 1, 2, 1);
CREATE TABLE div_b AS SELECT * FROM madlib_dl._gp_fit_multiple_run('p2', 'attributes', 'class_text',
       NULL, NULL, NULL, ARRAY[1, 2], ARRAY[:'arch', :'arch'], ARRAY[NULL::bytea, NULL],
       ARRAY[:cp, $$loss='categorical_crossentropy', optimizer='SGD(lr=1e30)'$$],
       ARRAY[:fp, :fp], 2, 1, 2, 1);
RESET client_min_messages;
SELECT b.mst_key, b.status, a.status = b.status AS same_status,
       md5(a.model_weights) = md5(b.model_weights) AS same_weights,
       coalesce(array_length(b.metrics_iters, 1), 0) AS n_metrics,
       a.metrics_iters = b.metrics_iters AS same_iters
  FROM div_a a JOIN div_b b USING (mst_key) ORDER BY 1;

-- 5. two-phase aggregation: force partial aggregates so that serialize,
-- deserialize and combine run (in parallel workers)
CREATE TABLE states AS
SELECT g AS id, t.seg, t.state
  FROM (SELECT __dist_key__ AS seg,
               madlib_dl._gp_fit_segment(class_text, attributes, class_text_shape, attributes_shape,
               madlib_dl._gp_initial_state(:'arch'::json, NULL, :cp, :fp), :'arch'::json, :cp, :fp, 1,
               __dist_key__ ORDER BY buffer_id) AS state
          FROM p3 GROUP BY __dist_key__) t, generate_series(1, 200) g;
CREATE TABLE p3_big AS SELECT p.* FROM p3 p, generate_series(1, 50);
ANALYZE states;
ANALYZE p3_big;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
CREATE FUNCTION plan_has(q text, node text) RETURNS boolean LANGUAGE plpgsql AS $f$
DECLARE l text; found boolean := false;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        IF l LIKE '%' || node || '%' THEN found := true; END IF;
    END LOOP;
    RETURN found;
END $f$;
SELECT plan_has('SELECT madlib_dl._avg_states(state, ''' || :'arch' || '''::json, ''x'') FROM gp_test.states',
                'Partial Aggregate') AS avg_states_partial,
       plan_has('SELECT madlib_dl._gp_eval_segment(class_text, attributes, class_text_shape, attributes_shape,'
                ' NULL::bytea, NULL, NULL, NULL) FROM gp_test.p3_big', 'Partial Aggregate') AS eval_partial,
       plan_has('SELECT madlib_dl._gp_fit_segment(class_text, attributes, class_text_shape, attributes_shape,'
                ' ''\x''::bytea, NULL, NULL, NULL, 1, 0) FROM gp_test.p3_big', 'Partial Aggregate') AS fit_partial;
-- the average of 200 copies of each segment's state, in any order, is
-- the ordered average of the three states (up to float rounding)
WITH par AS (
    SELECT madlib_dl._unpack_float32(madlib_dl._gp_state_weights(
               madlib_dl._avg_states(state, :'arch'::json, :cp), :'arch'::json)) AS w FROM states),
ord AS (
    SELECT madlib_dl._unpack_float32(madlib_dl._gp_state_weights(
               madlib_dl._avg_states(state, :'arch'::json, :cp ORDER BY seg), :'arch'::json)) AS w
      FROM states WHERE id = 1)
SELECT array_length(par.w, 1) AS n_weights,
       (SELECT max(abs(x - y)) < 1e-5 FROM unnest(par.w, ord.w) u(x, y)) AS parallel_avg_matches
  FROM par, ord;
-- the evaluation sums of 50 copies of every buffer, in parallel, are
-- 50 times one copy's
WITH s AS (SELECT madlib_dl._gp_initial_state(:'arch'::json, NULL, :cp, :fp) AS st)
SELECT e_big[3] = 50 * e_one[3] AS n_is_50x,
       abs(e_big[1] - 50 * e_one[1]) < 1e-6 * abs(e_big[1]) AS loss_is_50x
  FROM (SELECT madlib_dl._gp_eval_segment(class_text, attributes, class_text_shape, attributes_shape,
               s.st, :'arch'::json, :cp, :fp) AS e_big FROM p3_big, s) b,
       (SELECT madlib_dl._gp_eval_segment(class_text, attributes, class_text_shape, attributes_shape,
               s.st, :'arch'::json, :cp, :fp) AS e_one FROM p3, s) o;
-- the training aggregate with partial states gathers every buffer: its
-- state counts epochs x all the rows of the 50 copies
SELECT (SELECT sum(x) FROM (SELECT get_byte(t.state, 80 + i) * (256::numeric ^ i) AS x
                              FROM generate_series(0, 7) i) b) = 2 * 50 * (SELECT count(*) FROM iris_train)
       AS partial_fit_saw_every_row
  FROM (SELECT madlib_dl._gp_fit_segment(class_text, attributes, class_text_shape, attributes_shape,
               madlib_dl._gp_initial_state(:'arch'::json, NULL, :cp, :fp), :'arch'::json, :cp, :fp, 1, 0)
               AS state
          FROM p3_big) t;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;

-- 6. errors
SELECT madlib_dl._gp_fit_segment(class_text, attributes, class_text_shape, attributes_shape,
       NULL, :'arch'::json, :cp, :fp, 1, 0) FROM p1;
SELECT madlib_dl._gp_fit_segment(class_text, attributes, class_text_shape, attributes_shape,
       madlib_dl._gp_initial_state(:'arch'::json, NULL, :cp, :fp), :'arch'::json, :cp, :fp, 1, __dist_key__
       ORDER BY buffer_id) FROM p2;
SELECT madlib_dl._gp_fit_run('iris_train', 'attributes', 'class_text', NULL, NULL, NULL,
       :'arch'::json, NULL, :cp, :fp, 1, 1);
SELECT madlib_dl._avg_states('\x00'::bytea, :'arch'::json, :cp);
-- the visit order takes at most 1024 models: a larger input (here one
-- whose sort would run for minutes, costs ascending) is refused at once
SET statement_timeout = '10s';
SELECT madlib_dl._gp_visit_order(array_agg(g), array_agg(g::float8), 1, 300000)
  FROM generate_series(1, 300000) g;
RESET statement_timeout;

DROP SCHEMA gp_test CASCADE;
