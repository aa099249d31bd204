--
-- 97_greenplum_cluster: the check to run on a Greenplum 7 or Cloudberry
-- cluster (docs/greenplum.md, "Checklist"); it runs here too.  The same
-- expected output on both servers: every line is a check that prints t.
-- On PostgreSQL the Greenplum-only checks (gp_check) are not run and
-- print t; the others run everywhere:
--   install      the Greenplum-only objects exist there, the metadata
--                tables are replicated there;
--   placement    the preprocessors put buffer b on segment b % nseg;
--   row identity every source row is packed exactly once (on Greenplum
--                the same ctid is on every segment);
--   settings     the segments see the session's madlib_dl.backend;
--   plans        the round of steps and evaluate's aggregate join and
--                aggregate on each segment, no Redistribute or Broadcast;
--   fit, fit_multiple, evaluate, predict: complete and consistent.
--
\set SHOW_CONTEXT never
\set VERBOSITY terse
CREATE SCHEMA gpc_test;
SET search_path = gpc_test, public;
\set ECHO none
\i test/data/iris.sql
\set ECHO all
-- (Greenplum's NOTICEs about distribution keys, and fit's progress)
SET client_min_messages = warning;

-- gp_check(sql): on Greenplum the boolean result of sql, here true.
CREATE FUNCTION gp_check(sql text) RETURNS boolean
LANGUAGE plpgsql AS $f$
DECLARE
    ok boolean;
BEGIN
    IF NOT madlib_dl._is_greenplum() THEN
        RETURN true;
    END IF;
    EXECUTE sql INTO ok;
    RETURN coalesce(ok, false);
END
$f$;
-- plan_moves(sql): whether EXPLAIN sql shows a Redistribute or Broadcast
-- Motion (Greenplum), false here.
-- With a model table: EXPLAIN sql with $1 the model's architecture and
-- $2 its weights, as evaluate runs its aggregate (_ep_evaluate: the model
-- is a parameter of the query, not a table joined to the data).
CREATE FUNCTION plan_moves(sql text, model regclass DEFAULT NULL) RETURNS boolean
LANGUAGE plpgsql AS $f$
DECLARE
    line text;
    moves boolean := false;
    arch json;
    weights bytea;
BEGIN
    IF NOT madlib_dl._is_greenplum() THEN
        RETURN false;
    END IF;
    IF model IS NOT NULL THEN
        EXECUTE format('SELECT model_arch, model_weights FROM %s', model) INTO arch, weights;
    END IF;
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || sql USING arch, weights LOOP
        moves := moves OR line ~ '(Redistribute|Broadcast) Motion';
    END LOOP;
    RETURN moves;
END
$f$;

-- install
SELECT madlib_dl._is_greenplum() = (to_regclass('pg_catalog.gp_segment_configuration') IS NOT NULL) AS detected,
       gp_check($$SELECT (SELECT count(*) FROM madlib_dl._gp_segment_keys())
                       = (SELECT count(*) FROM gp_segment_configuration WHERE role = 'p' AND content >= 0)$$)
         AS a_key_per_segment,
       gp_check($$SELECT policytype = 'r' FROM gp_distribution_policy
                   WHERE localoid = 'madlib_dl.plproxy_tables'::regclass$$) AS catalog_replicated;

-- placement and row identity
CREATE TABLE iris_train AS SELECT * FROM iris_data WHERE id % 5 <> 0;
CREATE TABLE iris_test AS SELECT * FROM iris_data WHERE id % 5 = 0;
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'train_packed', 'class_text', 'attributes', 10);
SELECT madlib_dl.validation_preprocessor_dl('iris_test', 'test_packed', 'class_text', 'attributes', 'train_packed');
SELECT gp_check($$SELECT bool_and(p.gp_segment_id = p.buffer_id % s.num_segments)
                    FROM gpc_test.train_packed p, gpc_test.train_packed_summary s$$) AS train_placed,
       gp_check($$SELECT bool_and(p.gp_segment_id = p.buffer_id % s.num_segments)
                    FROM gpc_test.test_packed p, gpc_test.train_packed_summary s$$) AS test_placed;
-- every row once: as many rows, the same sum of features, the same
-- class counts
SELECT t AS packed,
       coalesce((SELECT sum(attributes_shape[1]) FROM train_packed WHERE t = 'train'),
                (SELECT sum(attributes_shape[1]) FROM test_packed WHERE t = 'test'))
         = (SELECT count(*) FROM iris_data WHERE (id % 5 = 0) = (t = 'test')) AS n_rows,
       abs(coalesce((SELECT sum(v) FROM train_packed, unnest(madlib_dl._unpack_float32(attributes)) v WHERE t = 'train'),
                    (SELECT sum(v) FROM test_packed, unnest(madlib_dl._unpack_float32(attributes)) v WHERE t = 'test'))
           - (SELECT sum(v) FROM iris_data, unnest(attributes) v WHERE (id % 5 = 0) = (t = 'test'))) < 1e-3 AS same_features
  FROM unnest(ARRAY['train', 'test']) t ORDER BY 1;

-- settings reach the segments
SET madlib_dl.backend = 'openblas';
SELECT gp_check($$SELECT bool_and(current_setting('madlib_dl.backend', true) = 'openblas')
                    FROM gp_dist_random('gp_id')$$) AS backend_on_segments;
RESET madlib_dl.backend;

-- fit: twice the same weights
SELECT madlib_dl.load_keras_model('arch', '{"class_name": "Sequential", "config": {"layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4]}}, {"class_name": "Dense", "config": {"units": 10, "activation": "relu"}}, {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}');
\set cp '$$loss=''categorical_crossentropy'', optimizer=''Adam(lr=0.01)'', metrics=[''accuracy'']$$'
SELECT madlib_dl.fit('train_packed', 'm1', 'arch', 1, :cp, 'batch_size=8, epochs=1, seed=5', 4, FALSE, 'test_packed');
SELECT madlib_dl.fit('train_packed', 'm2', 'arch', 1, :cp, 'batch_size=8, epochs=1, seed=5', 4, FALSE, 'test_packed');
SELECT (SELECT md5(model_weights) FROM m1) = (SELECT md5(model_weights) FROM m2) AS deterministic,
       s.validation_loss_final > 0 AND s.validation_loss_final < 2 AS validation_loss_in_range,
       s.metrics_iters = ARRAY[4] AS metrics_at_the_end
  FROM m1_summary s;

-- the round of steps: each segment joins and aggregates its own rows
-- (Greenplum distributes a table by its first column by default: here
-- __dist_key__, as the transport's round table)
CREATE TEMP TABLE round_like (__dist_key__ integer, seg integer, part integer, step madlib_dl._step);
SELECT NOT plan_moves($$SELECT u.seg, madlib_dl._gp_fit_segment(u.step, s.buffer_id, s.class_text, s.attributes,
                                                                  s.class_text_shape, s.attributes_shape)
                          FROM pg_temp.round_like u JOIN gpc_test.train_packed s ON s.__dist_key__ = u.__dist_key__
                         GROUP BY u.__dist_key__, u.seg, u.part$$) AS round_stays_on_segments;

-- fit_multiple: two configurations
SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1],
    ARRAY[:cp, $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['accuracy']$$],
    ARRAY['batch_size=8, epochs=1, seed=5']);
SELECT gp_check($$SELECT policytype = 'r' FROM gp_distribution_policy
                   WHERE localoid = 'gpc_test.mst'::regclass$$) AS mst_replicated;
SELECT madlib_dl.fit_multiple('train_packed', 'multi', 'mst', 2, FALSE, 'test_packed');
SELECT count(*) = 2 AS two_models, bool_and(validation_loss_final > 0) AS losses FROM multi_info;

-- evaluate: fit's validation numbers, aggregated on each segment
SELECT madlib_dl.evaluate('m1', 'test_packed', 'm1_eval');
SELECT abs(e.loss - s.validation_loss_final) < 1e-6 AS evaluate_is_validation_loss,
       abs(e.metric - s.validation_metrics_final) < 1e-6 AS evaluate_is_validation_metric
  FROM m1_eval e, m1_summary s;
SELECT NOT plan_moves($$SELECT s.__dist_key__, madlib_dl._evaluate_segment($1, $2, 'x',
                                    s.buffer_id, s.class_text, s.attributes, s.class_text_shape, s.attributes_shape)
                          FROM gpc_test.test_packed s
                         GROUP BY s.__dist_key__$$, 'm1') AS evaluate_stays_on_segments;

-- predict: every test row, its classes ranked, probabilities summing to 1
SELECT madlib_dl.predict('m1', 'iris_test', 'id', 'attributes', 'm1_prob');
SELECT madlib_dl.predict('m1', 'iris_test', 'id', 'attributes', 'm1_resp', 'response');
SELECT count(DISTINCT id) = 30 AS every_row, count(*) = 90 AS every_class FROM m1_prob;
SELECT bool_and(r) AS ranks_1_2_3, bool_and(abs(s - 1) < 1e-5) AS probs_sum_to_1
  FROM (SELECT id, array_agg(rank ORDER BY rank) = ARRAY[1, 2, 3] AS r, sum(prob) AS s
          FROM m1_prob GROUP BY id) p;
SELECT count(*) = 30 AS one_row_each,
       bool_and(r.prob = p.prob AND p.rank = 1) AS response_is_rank_1
  FROM m1_resp r JOIN m1_prob p USING (id, class_value);

DROP SCHEMA gpc_test CASCADE;
RESET client_min_messages;
