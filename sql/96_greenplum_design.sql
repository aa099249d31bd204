--
-- 96_greenplum_design: what makes the Greenplum / Cloudberry path right by
-- design, shown on PostgreSQL (docs/greenplum.md, issue 21):
--   1. install: the Greenplum-only choices (replicated metadata tables,
--      the preprocessor's row identity) and their PostgreSQL values;
--   2. the preprocessor's row identity with duplicated ctids: two source
--      tables inherited into one parent, so that their ctids collide, as
--      the rows of different segments do on Greenplum; every row is
--      packed exactly once;
--   3. the step aggregates are plain aggregates: the buffers' order comes
--      from buffer_id, not from the input order; every row of a group
--      must give the same step;
--   4. evaluate runs through the aggregate _evaluate_segment, grouped by
--      __dist_key__ (the segments): the same numbers as one group, and as
--      the groups' sums added by hand;
--   5. predict runs through _predict_batch: rows of three simulated
--      segments, each ending with its flush row as on Greenplum, give
--      predict's output; batches of any size give it too; rows after the
--      last flush row are not predicted; the model must be the same in
--      every row.
-- Only relations between numbers are printed: values depend on the CPU's
-- kernels.
--
\set SHOW_CONTEXT never
\set VERBOSITY terse
CREATE SCHEMA gpd_test;
SET search_path = gpd_test, public;
\set ECHO none
\i test/data/iris.sql
\set ECHO all

-- =====================================================================
-- 1. install: PostgreSQL's values of the Greenplum-only choices
-- =====================================================================
SELECT madlib_dl._replicated_clause() AS here, madlib_dl._replicated_clause(true) AS greenplum;
SELECT madlib_dl._pp_row_identity() AS here, madlib_dl._pp_row_identity(true) AS greenplum;
-- the model architecture table: __internal_madlib_id__ as MADlib writes it
SELECT madlib_dl.load_keras_model('arch', '{"class_name": "Sequential", "config": {"layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4]}}, {"class_name": "Dense", "config": {"units": 10, "activation": "relu"}}, {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}');
SELECT __internal_madlib_id__ ~ '^__madlib_temp_[0-9a-f]{8}_[0-9a-f]{4}_[0-9a-f]{4}_[0-9a-f]{4}_[0-9a-f]{12}$'
       AS internal_id_format
  FROM arch;

-- =====================================================================
-- 2. the preprocessor's row identity with duplicated ctids
-- =====================================================================
CREATE TABLE dup_parent (id integer, attributes double precision[], class_text varchar);
CREATE TABLE dup_a () INHERITS (dup_parent);
CREATE TABLE dup_b () INHERITS (dup_parent);
INSERT INTO dup_a SELECT * FROM iris_data WHERE id % 2 = 0 ORDER BY id;
INSERT INTO dup_b SELECT * FROM iris_data WHERE id % 2 = 1 ORDER BY id;
-- the same ctids in both children: (0,1) .. (0,75)
SELECT count(*) AS colliding_ctids
  FROM (SELECT ctid FROM dup_parent GROUP BY ctid HAVING count(DISTINCT tableoid) = 2) c;
SET client_min_messages = warning;
SELECT madlib_dl.training_preprocessor_dl('dup_parent', 'dup_packed', 'class_text', 'attributes', 16, 1.0, NULL, '2');
SELECT madlib_dl.validation_preprocessor_dl('dup_parent', 'dup_val', 'class_text', 'attributes', 'dup_packed');
RESET client_min_messages;
-- Every packed row as (x, y): x real[], y smallint[] one-hot.
CREATE FUNCTION packed_rows(tbl regclass)
RETURNS TABLE (x real[], y smallint[])
LANGUAGE sql AS $f$
    SELECT (madlib_dl._unpack_float32(p.attributes))[(i - 1) * 4 + 1 : i * 4],
           (madlib_dl._unpack_int16(p.class_text))[(i - 1) * 3 + 1 : i * 3]
      FROM gpd_test.dup_packed p, generate_series(1, p.attributes_shape[1]) i
     WHERE tbl = 'gpd_test.dup_packed'::regclass
    UNION ALL
    SELECT (madlib_dl._unpack_float32(p.attributes))[(i - 1) * 4 + 1 : i * 4],
           (madlib_dl._unpack_int16(p.class_text))[(i - 1) * 3 + 1 : i * 3]
      FROM gpd_test.dup_val p, generate_series(1, p.attributes_shape[1]) i
     WHERE tbl = 'gpd_test.dup_val'::regclass
$f$;
-- The source rows in the same form.
CREATE VIEW source_rows AS
SELECT attributes::real[] AS x,
       ARRAY[(class_text = 'Iris-setosa')::int, (class_text = 'Iris-versicolor')::int,
             (class_text = 'Iris-virginica')::int]::smallint[] AS y
  FROM dup_parent;
-- each of the 150 rows exactly once, in training (shuffled) and
-- validation (storage order) packing
SELECT t AS packed, (SELECT count(*) FROM packed_rows(t)) AS n_rows,
       (SELECT count(*) FROM (SELECT * FROM packed_rows(t) EXCEPT ALL SELECT * FROM source_rows) d) AS not_in_source,
       (SELECT count(*) FROM (SELECT * FROM source_rows EXCEPT ALL SELECT * FROM packed_rows(t)) d) AS not_packed
  FROM unnest(ARRAY['dup_packed', 'dup_val']::regclass[]) t;
-- and the packing does not depend on the scan: the same buffers again
SET client_min_messages = warning;
SELECT madlib_dl.training_preprocessor_dl('dup_parent', 'dup_packed2', 'class_text', 'attributes', 16, 1.0, NULL, '2');
RESET client_min_messages;
SELECT (SELECT md5(string_agg(attributes::text || class_text::text, ',' ORDER BY buffer_id)) FROM dup_packed)
     = (SELECT md5(string_agg(attributes::text || class_text::text, ',' ORDER BY buffer_id)) FROM dup_packed2)
       AS same_buffers;

-- =====================================================================
-- 3. the step aggregates: plain, the buffers ordered by buffer_id
-- =====================================================================
SELECT p.proname, a.aggkind, a.aggnumdirectargs, a.aggcombinefn = 0 AS no_combine,
       a.aggsortop = 0 AS no_sort_operator
  FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
 WHERE p.proname IN ('_gp_fit_segment', '_gp_eval_segment', '_evaluate_segment')
   AND p.pronamespace = 'madlib_dl'::regnamespace
 ORDER BY 1;
\set cp '$$loss=''categorical_crossentropy'', optimizer=''Adam(lr=0.01)'', metrics=[''accuracy'']$$'
\set arch '{"class_name": "Sequential", "config": {"layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4]}}, {"class_name": "Dense", "config": {"units": 10, "activation": "relu"}}, {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}'
CREATE TABLE step AS
SELECT ROW(madlib_dl._initial_state(:'arch', NULL, :cp, 'seed=5'), :'arch', :cp,
           'batch_size=8, epochs=1, seed=5', 1, 0, NULL)::madlib_dl._step AS s;
-- one segment's buffers in ascending, descending and shuffled order: the
-- same trained state
SELECT count(DISTINCT md5((r).state)) AS distinct_states, min((r).n) AS n
  FROM (SELECT madlib_dl._gp_fit_segment(st.s, q.buffer_id, q.class_text, q.attributes,
                                         q.class_text_shape, q.attributes_shape) AS r
          FROM step st, generate_series(1, 3) o,
               LATERAL (SELECT * FROM dup_packed WHERE __dist_key__ = 0
                         ORDER BY CASE o WHEN 1 THEN buffer_id WHEN 2 THEN -buffer_id
                                         ELSE hashint4(buffer_id) END) q
         GROUP BY o) g;
-- every row of a group must give the same step
SELECT madlib_dl._gp_fit_segment(CASE WHEN p.buffer_id = 0 THEN st.s
                                      ELSE ROW((st.s).state || '\x00'::bytea, (st.s).model_arch,
                                               (st.s).compile_params, (st.s).fit_params, 1, 0, NULL)::madlib_dl._step END,
                                 p.buffer_id, p.class_text, p.attributes, p.class_text_shape, p.attributes_shape)
  FROM step st, dup_packed p;

-- =====================================================================
-- 4. evaluate through _evaluate_segment, grouped by the segments
-- =====================================================================
SET client_min_messages = warning;
SELECT madlib_dl.fit('dup_packed', 'dup_model', 'arch', 1, :cp, 'batch_size=8, epochs=1, seed=5', 3);
RESET client_min_messages;
SELECT madlib_dl.evaluate('dup_model', 'dup_val', 'dup_eval');
-- the groups (segments) of the validation table
SELECT __dist_key__, count(*) AS buffers FROM dup_val GROUP BY 1 ORDER BY 1;
-- the groups' sums added by hand, and one group (a copy without
-- __dist_key__): the same loss and metric
CREATE TABLE dup_val_one AS SELECT buffer_id, class_text, attributes, class_text_shape, attributes_shape FROM dup_val;
SELECT madlib_dl.evaluate('dup_model', 'dup_val_one', 'dup_eval_one');
WITH g AS (
    SELECT madlib_dl._evaluate_segment(m.model_arch, m.model_weights, :cp, v.buffer_id, v.class_text,
                                       v.attributes, v.class_text_shape, v.attributes_shape) AS r
      FROM dup_model m, dup_val v GROUP BY v.__dist_key__)
SELECT count(*) AS groups, sum((r).n) AS examples,
       abs(sum((r).loss_sum) / sum((r).n) - e.loss) <= 1e-12 * e.loss AS loss_is_the_groups,
       abs(sum((r).metric_sum) / sum((r).n) - e.metric) <= 1e-12 AS metric_is_the_groups,
       abs(o.loss - e.loss) <= 1e-12 * e.loss AS one_group_same_loss, o.metric = e.metric AS one_group_same_metric,
       bool_and((r).state IS NULL AND (r).diverged IS NULL) AS no_state
  FROM g, dup_eval e, dup_eval_one o GROUP BY e.loss, e.metric, o.loss, o.metric;
-- no rows: no examples; without a metric, metric_sum is NULL
SELECT (r).n, (r).loss_sum, (r).metric_sum IS NULL AS no_metric
  FROM (SELECT madlib_dl._evaluate_segment(m.model_arch, m.model_weights, :cp, v.buffer_id, v.class_text,
                                           v.attributes, v.class_text_shape, v.attributes_shape) AS r
          FROM dup_model m, dup_val v WHERE false) s;
SELECT (r).n > 0 AS has_examples, (r).metric_sum IS NULL AS no_metric
  FROM (SELECT madlib_dl._evaluate_segment(m.model_arch, m.model_weights,
               'loss=''categorical_crossentropy'', optimizer=''SGD''', v.buffer_id, v.class_text,
               v.attributes, v.class_text_shape, v.attributes_shape) AS r
          FROM dup_model m, dup_val v) s;
-- an empty test table, a NULL model, different models in one group
CREATE TABLE dup_val_empty AS SELECT * FROM dup_val WHERE false;
SELECT madlib_dl.evaluate('dup_model', 'dup_val_empty', 'dup_eval_empty');
SELECT madlib_dl._evaluate_segment(NULL, m.model_weights, :cp, v.buffer_id, v.class_text,
                                   v.attributes, v.class_text_shape, v.attributes_shape)
  FROM dup_model m, dup_val v;
SELECT madlib_dl._evaluate_segment(m.model_arch,
                                   CASE WHEN v.buffer_id = 0 THEN m.model_weights ELSE m.model_weights || m.model_weights END,
                                   :cp, v.buffer_id, v.class_text, v.attributes, v.class_text_shape, v.attributes_shape)
  FROM dup_model m, dup_val v;

-- =====================================================================
-- 5. predict through _predict_batch
-- =====================================================================
SELECT madlib_dl.predict('dup_model', 'iris_data', 'id', 'attributes', 'dup_pred');
-- Rows of three simulated segments (id % 3), each ending with its flush
-- row, as Greenplum's plan gives them (one flush row per segment), in
-- batches of size bs; compared with predict's output.
CREATE FUNCTION predict_segments(bs integer, max_rank integer DEFAULT NULL)
RETURNS TABLE (id integer, class_index integer, prob float8, rank integer)
LANGUAGE sql AS $f$
    SELECT (q.r).id::integer, (q.r).class_index, (q.r).prob, (q.r).rank
      FROM (SELECT madlib_dl._predict_batch(m.model_arch, m.model_weights, 1.0, bs, 'attributes',
                                            max_rank, s.id::text, s.attributes, s.flush) AS r
              FROM gpd_test.dup_model m,
                   (SELECT d.id, d.attributes, false AS flush FROM gpd_test.iris_data d WHERE d.id % 3 = 0
                    UNION ALL SELECT NULL, NULL, true
                    UNION ALL SELECT d.id, d.attributes, false FROM gpd_test.iris_data d WHERE d.id % 3 = 1
                    UNION ALL SELECT NULL, NULL, true
                    UNION ALL SELECT d.id, d.attributes, false FROM gpd_test.iris_data d WHERE d.id % 3 = 2
                    UNION ALL SELECT NULL, NULL, true) s) q
$f$;
SELECT bs, count(*) AS n_values, count(DISTINCT s.id) AS n_ids,
       bool_and(s.rank = p.rank AND abs(s.prob - p.prob) < 1e-6) AS same_as_predict,
       count(p.id) AS matched
  FROM unnest(ARRAY[1, 4, 1024]) bs, predict_segments(bs) s
       LEFT JOIN dup_pred p
         ON p.id = s.id AND p.class_value = (ARRAY['Iris-setosa', 'Iris-versicolor', 'Iris-virginica'])[s.class_index]
 GROUP BY bs ORDER BY bs;
-- max_rank: the best classes only, as pred_type 'response' and top_k
SELECT count(*) AS n_values, max(rank) AS max_rank FROM predict_segments(16, 2);
-- rows after the last flush row are not predicted: 150 rows in batches
-- of 40 without a flush row give the 3 full batches
SELECT count(DISTINCT (q.r).id) AS predicted_ids
  FROM (SELECT madlib_dl._predict_batch(m.model_arch, m.model_weights, 1.0, 40, 'attributes', 1,
                                        d.id::text, d.attributes, false) AS r
          FROM dup_model m, iris_data d) q;
-- the model must be the same in every row; bad arguments
SELECT count(*) FROM (SELECT madlib_dl._predict_batch(m.model_arch,
                                 CASE WHEN d.id = 1 THEN m.model_weights ELSE m.model_weights || '\x00'::bytea END,
                                 1.0, 40, 'attributes', 1, d.id::text, d.attributes, false)
                        FROM dup_model m, iris_data d) q;
SELECT madlib_dl._predict_batch(NULL, m.model_weights, 1.0, 40, 'attributes', 1, '1', ARRAY[1, 2, 3, 4], true)
  FROM dup_model m;
SELECT madlib_dl._predict_batch(m.model_arch, m.model_weights, 0.0, 40, 'attributes', 1, '1', ARRAY[1, 2, 3, 4], true)
  FROM dup_model m;
SELECT madlib_dl._predict_batch(m.model_arch, m.model_weights, 1.0, 0, 'attributes', 1, '1', ARRAY[1, 2, 3, 4], true)
  FROM dup_model m;
SELECT madlib_dl._predict_batch(m.model_arch, m.model_weights, 1.0, 4, 'attributes', 0, '1', ARRAY[1, 2, 3, 4], true)
  FROM dup_model m;
SELECT madlib_dl._predict_batch(m.model_arch, m.model_weights, 1.0, 4, 'attributes', 1, '7', ARRAY[1, 2, 3], false)
  FROM dup_model m;

DROP SCHEMA gpd_test CASCADE;
