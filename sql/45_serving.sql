--
-- 45_serving: predict_row and predict_row_prob inside queries (a view, a
-- trigger, a parallel plan), the model cache under updates, and the
-- model registry with deploy (docs/serving.md).  Probabilities depend on
-- the CPU's float kernels: only relations between numbers are printed.
--
\set SHOW_CONTEXT never
CREATE SCHEMA sv_test;
SET search_path = sv_test, public;
\set ECHO none
\i test/data/iris.sql
\set ECHO all
SET client_min_messages = warning;
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_packed', 'class_text',
    'attributes', NULL, 1.0, NULL, '2');
\set arch '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "name": "dense_input"}}, {"class_name": "Dense", "config": {"name": "dense", "units": 10, "activation": "relu", "use_bias": true}}, {"class_name": "Dense", "config": {"name": "dense_1", "units": 3, "activation": "softmax", "use_bias": true}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
SELECT madlib_dl.load_keras_model('arch', :'arch', NULL, 'iris mlp');
-- two runs recorded under one name
SET madlib_dl.model_name = 'sv_iris';
SELECT madlib_dl.fit('iris_packed', 'iris_m1', 'arch', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
    'batch_size=16, epochs=1, seed=1', 2);
SELECT madlib_dl.fit('iris_packed', 'iris_m2', 'arch', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
    'batch_size=16, epochs=4, seed=2', 5);
RESET madlib_dl.model_name;
SELECT madlib_dl.predict('iris_m1', 'iris_data', 'id', 'attributes', 'iris_pred', 'response');
SELECT madlib_dl.predict('iris_m1', 'iris_data', 'id', 'attributes', 'iris_prob', 'prob');
RESET client_min_messages;

-- =====================================================================
-- predict_row equals predict
-- =====================================================================
SELECT count(*) AS n_rows,
       count(*) FILTER (WHERE p.class_value = madlib_dl.predict_row('iris_m1', d.attributes)) AS same_class
  FROM iris_data d JOIN iris_pred p ON p.id = d.id;
SELECT count(*) AS n_probs,
       max(abs(p.prob - (madlib_dl.predict_row_prob('iris_m1', d.attributes))[
           array_position(s.class_text_class_values, p.class_value)])) < 1e-6 AS same_probs
  FROM iris_data d JOIN iris_prob p ON p.id = d.id, iris_m1_summary s;
-- real[], integer[] and numeric[] features give the same as float8[]
SELECT madlib_dl.predict_row('iris_m1', ARRAY[5.1, 3.5, 1.4, 0.2]::real[])
     = madlib_dl.predict_row('iris_m1', ARRAY[5.1, 3.5, 1.4, 0.2]::float8[]) AS real_same,
       madlib_dl.predict_row_prob('iris_m1', ARRAY[5, 3, 1, 0]::integer[])
     = madlib_dl.predict_row_prob('iris_m1', ARRAY[5, 3, 1, 0]::numeric[]) AS int_numeric_same,
       madlib_dl.predict_row('iris_m1', NULL::float8[]) IS NULL AS null_features_null,
       cardinality(madlib_dl.predict_row_prob('iris_m1', ARRAY[5, 3, 1, 0]::float8[])) AS n_outputs;

-- in a view
CREATE VIEW iris_scored AS
SELECT id, madlib_dl.predict_row('sv_test.iris_m1', attributes) AS predicted FROM iris_data;
SELECT count(*) FILTER (WHERE s.predicted = p.class_value) AS view_same
  FROM iris_scored s JOIN iris_pred p ON p.id = s.id;

-- in a BEFORE INSERT trigger
CREATE TABLE incoming (id integer, attributes float8[], predicted text);
CREATE FUNCTION score_incoming() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.predicted := madlib_dl.predict_row('sv_test.iris_m1', NEW.attributes);
    RETURN NEW;
END $$;
CREATE TRIGGER score BEFORE INSERT ON incoming FOR EACH ROW EXECUTE FUNCTION score_incoming();
INSERT INTO incoming (id, attributes) SELECT id, attributes FROM iris_data WHERE id <= 20;
INSERT INTO incoming (id, attributes) SELECT id, attributes FROM iris_data WHERE id = 21;
SELECT count(*) AS n, count(*) FILTER (WHERE i.predicted = p.class_value) AS trigger_same
  FROM incoming i JOIN iris_pred p ON p.id = i.id;

-- a parallel plan: predict_row runs in the workers
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
ALTER TABLE iris_data SET (parallel_workers = 2);
EXPLAIN (COSTS OFF)
SELECT count(*) FILTER (WHERE madlib_dl.predict_row('iris_m1', attributes) = class_text) FROM iris_data;
SELECT count(*) FILTER (WHERE madlib_dl.predict_row('iris_m1', d.attributes) = p.class_value) AS parallel_same
  FROM iris_data d JOIN iris_pred p ON p.id = d.id;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- =====================================================================
-- batched calls (serving_batch.c): a select list's or an aggregate's
-- calls run many rows per forward pass, with the results of one call
-- per row (madlib_dl.serving_batch_rows = 1), bit for bit
-- =====================================================================
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF)
SELECT id, madlib_dl.predict_row('iris_m1', attributes) FROM iris_data;
CREATE TEMP TABLE b_on AS
SELECT id, madlib_dl.predict_row('iris_m1', attributes) AS c,
       madlib_dl.predict_row_prob('iris_m1', attributes) AS p,
       madlib_dl.predict_row('iris_m2', attributes) AS c2,
       madlib_dl.predict_row('iris_m1', CASE WHEN id % 3 = 0 THEN NULL ELSE attributes END) AS c_nulls
  FROM iris_data;
SET madlib_dl.serving_batch_rows = 1;
EXPLAIN (COSTS OFF)
SELECT id, madlib_dl.predict_row('iris_m1', attributes) FROM iris_data;
CREATE TEMP TABLE b_off AS
SELECT id, madlib_dl.predict_row('iris_m1', attributes) AS c,
       madlib_dl.predict_row_prob('iris_m1', attributes) AS p,
       madlib_dl.predict_row('iris_m2', attributes) AS c2
  FROM iris_data;
RESET madlib_dl.serving_batch_rows;
SELECT count(*) AS n, count(*) FILTER (WHERE a.c = b.c) AS same_class,
       count(*) FILTER (WHERE a.c2 = b.c2) AS same_class_m2,
       bool_and(a.p = b.p) AS identical_probs,
       count(*) FILTER (WHERE a.c_nulls IS NULL) AS null_rows,
       count(*) FILTER (WHERE a.c_nulls = b.c) AS same_non_null
  FROM b_on a JOIN b_off b USING (id);
-- a LIMIT reads a batch of one row first
SELECT count(*) FILTER (WHERE l.c = b.c) AS limit_same
  FROM (SELECT id, madlib_dl.predict_row('iris_m1', attributes) AS c FROM iris_data LIMIT 3) l
  JOIN b_off b USING (id);
-- a subquery run again for each outer row (rescans)
EXPLAIN (COSTS OFF)
SELECT (SELECT madlib_dl.predict_row('iris_m1', e.attributes) FROM iris_data e WHERE e.id = d.id)
  FROM iris_data d WHERE d.id <= 10;
SELECT count(*) FILTER (WHERE (SELECT madlib_dl.predict_row('iris_m1', e.attributes)
                                 FROM iris_data e WHERE e.id = d.id) = b.c) AS rescan_same
  FROM iris_data d JOIN b_off b USING (id) WHERE d.id <= 10;
-- a prepared statement's generic plan: the model is a parameter
PREPARE score_q(text) AS SELECT id, madlib_dl.predict_row($1, attributes) AS c FROM iris_data;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE score_q('iris_m1');
CREATE TEMP TABLE b_prep AS EXECUTE score_q('iris_m1');
RESET plan_cache_mode;
DEALLOCATE score_q;
SELECT count(*) FILTER (WHERE q.c = b.c) AS prepared_same FROM b_prep q JOIN b_off b USING (id);
-- a scrollable cursor keeps one call per row, and moves back
BEGIN;
DECLARE sc SCROLL CURSOR FOR SELECT id, madlib_dl.predict_row('iris_m1', attributes) AS c FROM iris_data ORDER BY id;
FETCH 2 FROM sc;
FETCH BACKWARD 1 FROM sc;
COMMIT;
-- a bad row read ahead but never returned (after a LIMIT) gives no error, as
-- with one call per row; a call under AND, CASE or COALESCE, or beside a
-- volatile function, is not batched (it might not run for every row)
SELECT id, madlib_dl.predict_row('iris_m1', CASE WHEN id = 3 THEN ARRAY[1, 2]::float8[] ELSE attributes END)
  FROM iris_data LIMIT 2;
SELECT count(*) FILTER (WHERE id <> 3 AND madlib_dl.predict_row('iris_m1',
           CASE WHEN id = 3 THEN ARRAY[1, 2]::float8[] ELSE attributes END) IS NOT NULL) AS guarded
  FROM iris_data;
EXPLAIN (COSTS OFF)
SELECT count(*) FILTER (WHERE id <> 3 AND madlib_dl.predict_row('iris_m1', attributes) IS NOT NULL)
  FROM iris_data;
EXPLAIN (COSTS OFF)
SELECT madlib_dl.predict_row('iris_m1', attributes), random() FROM iris_data;
-- predict's row mode (batched in the node), batch_size => 1 and => 1024: the same numbers
SET client_min_messages = warning;
SELECT madlib_dl.predict('iris_m1', 'iris_data', 'id', 'attributes', 'iris_prob_b1', 'prob', batch_size => 1);
SELECT madlib_dl.predict('iris_m1', 'iris_data', 'id', 'attributes', 'iris_prob_b1024', 'prob', batch_size => 1024);
RESET client_min_messages;
SELECT count(*) AS n, count(*) FILTER (WHERE a.prob = b.prob AND a.prob = c.prob) AS identical
  FROM iris_prob a JOIN iris_prob_b1 b USING (id, class_value) JOIN iris_prob_b1024 c USING (id, class_value);
SELECT count(*) FILTER (WHERE abs(p.prob - o.p[array_position(s.class_text_class_values, p.class_value)]) = 0)
       AS predict_row_prob_identical
  FROM iris_prob p JOIN b_off o USING (id), iris_m1_summary s;
-- a bad row in the middle of a batch: the error names it, as one call per row does
SELECT count(madlib_dl.predict_row('iris_m1', CASE WHEN id = 70 THEN ARRAY[1, 2]::float8[] ELSE attributes END))
  FROM iris_data;
SELECT id, madlib_dl.predict_row(NULL, attributes) FROM iris_data;
RESET max_parallel_workers_per_gather;

-- =====================================================================
-- fit_multiple (mst_key) and load_keras_model tables (model_id)
-- =====================================================================
SET client_min_messages = warning;
SELECT madlib_dl.load_model_selection_table('arch', 'sv_mst', ARRAY[1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['accuracy']$$],
    ARRAY['batch_size=16, epochs=1']);
SELECT madlib_dl.fit_multiple('iris_packed', 'iris_multi', 'sv_mst', 2);
SELECT madlib_dl.predict('iris_multi', 'iris_data', 'id', 'attributes', 'iris_multi_pred', 'response',
    false, 2);
SELECT madlib_dl.load_keras_model('arch', :'arch', (SELECT model_weights FROM iris_m1), 'with weights');
RESET client_min_messages;
SELECT count(*) FILTER (WHERE p.class_value = madlib_dl.predict_row('iris_multi', d.attributes, 2)) AS multi_same
  FROM iris_data d JOIN iris_multi_pred p ON p.id = d.id;
-- an architecture table: the model_id; no class values (0..K-1), no normalizing_const
SELECT count(*) FILTER (WHERE madlib_dl.predict_row_prob('arch', attributes, 2)
                              = madlib_dl.predict_row_prob('iris_m1', attributes)) AS byom_same_probs,
       count(*) FILTER (WHERE s.class_text_class_values[madlib_dl.predict_row('arch', attributes, 2)::int + 1]
                              = madlib_dl.predict_row('iris_m1', attributes)) AS byom_index_same
  FROM iris_data, iris_m1_summary s;

-- =====================================================================
-- the registry and deploy
-- =====================================================================
SELECT name, version, model_table, mst_key, function, source_table,
       metrics ? 'training_loss_final' AS has_loss, params ? 'compile_params' AS has_params,
       trained_by = current_user AS trained_by_me, owner = current_user AS owned
  FROM madlib_dl.model_versions
 WHERE model_table LIKE 'sv_test.%' ORDER BY version_id;
SELECT version, model_table FROM madlib_dl.deploy('sv_iris');
SELECT count(*) FILTER (WHERE madlib_dl.predict_row_prob('sv_iris', attributes)
                              = madlib_dl.predict_row_prob('iris_m2', attributes)) AS latest_is_m2
  FROM iris_data;
-- rollback: an older version
SELECT version, model_table FROM madlib_dl.deploy('sv_iris', 1);
SELECT count(*) FILTER (WHERE madlib_dl.predict_row_prob('sv_iris', attributes)
                              = madlib_dl.predict_row_prob('iris_m1', attributes)) AS rollback_is_m1
  FROM iris_data;
SELECT d.version = (SELECT v.version FROM madlib_dl.model_versions v
                     WHERE v.name = 'sv_iris' ORDER BY (v.metrics->>'training_loss_final')::float8 LIMIT 1)
       AS best_is_lowest_loss
  FROM madlib_dl.deploy('sv_iris', 'best', 'training_loss_final') d;
SELECT name, version, strategy FROM madlib_dl.deployed_models WHERE name = 'sv_iris';
SELECT strategy FROM madlib_dl.model_deployments WHERE name = 'sv_iris' ORDER BY deploy_id;

-- =====================================================================
-- a cached model is never stale
-- =====================================================================
SELECT madlib_dl.predict_row_prob('iris_m1', ARRAY[5.1, 3.5, 1.4, 0.2]) AS before \gset
UPDATE iris_m1 SET model_weights = (SELECT model_weights FROM iris_m2);
SELECT madlib_dl.predict_row_prob('iris_m1', ARRAY[5.1, 3.5, 1.4, 0.2]) <> :'before'::real[] AS changed,
       madlib_dl.predict_row_prob('iris_m1', ARRAY[5.1, 3.5, 1.4, 0.2])
     = madlib_dl.predict_row_prob('iris_m2', ARRAY[5.1, 3.5, 1.4, 0.2]) AS now_m2;
-- inside a transaction that rolls back, and after it
BEGIN;
UPDATE iris_m1 SET model_weights = (SELECT model_weights FROM arch WHERE model_id = 2);
SELECT madlib_dl.predict_row_prob('iris_m1', ARRAY[5.1, 3.5, 1.4, 0.2]) = :'before'::real[] AS in_xact_new;
ROLLBACK;
SELECT madlib_dl.predict_row_prob('iris_m1', ARRAY[5.1, 3.5, 1.4, 0.2])
     = madlib_dl.predict_row_prob('iris_m2', ARRAY[5.1, 3.5, 1.4, 0.2]) AS after_rollback_m2;
-- one cached version per model
SELECT model_table, count(*) FROM madlib_dl.model_cache() GROUP BY 1 ORDER BY model_table::text;

-- =====================================================================
-- bad calls
-- =====================================================================
SELECT madlib_dl.predict_row('no_such_model', ARRAY[1, 2, 3, 4]);
SELECT madlib_dl.predict_row('iris_m1', ARRAY[1, 2, 3, 4], 1);
SELECT madlib_dl.predict_row('iris_multi', ARRAY[1, 2, 3, 4]);
SELECT madlib_dl.predict_row('iris_multi', ARRAY[1, 2, 3, 4], 99);
SELECT madlib_dl.predict_row('arch', ARRAY[1, 2, 3, 4]);
SELECT madlib_dl.predict_row('sv_iris', ARRAY[1, 2, 3, 4], 1);
SELECT madlib_dl.predict_row('iris_m1', ARRAY[1, 2, 3]);
SELECT madlib_dl.predict_row('iris_m1', ARRAY[[1, 2], [3, 4]]);
SELECT madlib_dl.predict_row('iris_m1', ARRAY[1, NULL, 3, 4]);
SELECT madlib_dl.predict_row('iris_m1', ARRAY[1, 'NaN', 3, 4]::float8[]);
SELECT madlib_dl.predict_row('iris_m1', ARRAY['a', 'b', 'c', 'd']);
SELECT madlib_dl.predict_row(NULL, ARRAY[1, 2, 3, 4]);
SELECT madlib_dl.predict_row('iris_data', ARRAY[1, 2, 3, 4]);
SELECT madlib_dl.deploy('no_such_name');
SELECT madlib_dl.deploy('sv_iris', 7);
SELECT madlib_dl.deploy('sv_iris', 'oldest');
SELECT madlib_dl.deploy('sv_iris', 'best', 'no_such_metric');

-- privileges: the registry is written only through its functions, by
-- the models' owners
CREATE ROLE regress_serving_other;
GRANT USAGE ON SCHEMA sv_test, madlib_dl TO regress_serving_other;
GRANT SELECT ON iris_m1, iris_m1_summary, iris_data, iris_packed, iris_packed_summary, arch
    TO regress_serving_other;
CREATE SCHEMA sv_other AUTHORIZATION regress_serving_other;
SET ROLE regress_serving_other;
\set VERBOSITY terse
SELECT count(*) > 0 AS other_can_score FROM iris_data WHERE madlib_dl.predict_row('iris_m1', attributes) IS NOT NULL;
SELECT madlib_dl.deploy('sv_iris', 'latest');
SELECT madlib_dl._registry_record('sv_iris', 'sv_test.iris_m1'::regclass, ARRAY[NULL::integer], 'fit', NULL, NULL, NULL);
SELECT madlib_dl._registry_deploy('sv_iris', 1, 'latest');
INSERT INTO madlib_dl.model_deployments (name, version_id, deployed_by) VALUES ('sv_iris', 1, 'x');
UPDATE madlib_dl.model_versions SET owner = current_user;
DELETE FROM madlib_dl.model_versions;
SELECT count(*) > 0 AS other_reads_registry FROM madlib_dl.model_versions WHERE name = 'sv_iris';
-- a run of the other role under a name of another role's: trained, not recorded
SET madlib_dl.model_name = 'sv_iris';
SET client_min_messages = warning;
SELECT madlib_dl.fit('sv_test.iris_packed', 'sv_other.iris_other', 'sv_test.arch', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
    'batch_size=16, epochs=1, seed=1', 1);
RESET client_min_messages;
RESET madlib_dl.model_name;
SELECT count(*) AS trained FROM sv_other.iris_other;
SELECT count(*) AS recorded FROM madlib_dl.model_versions WHERE model_table = 'sv_other.iris_other';
\set VERBOSITY default
RESET ROLE;
REVOKE ALL ON iris_m1, iris_m1_summary, iris_data, iris_packed, iris_packed_summary, arch
    FROM regress_serving_other;
SET client_min_messages = warning;
DROP SCHEMA sv_other CASCADE;
RESET client_min_messages;
REVOKE USAGE ON SCHEMA sv_test, madlib_dl FROM regress_serving_other;
DROP ROLE regress_serving_other;

SET client_min_messages = warning;
DROP SCHEMA sv_test CASCADE;
DELETE FROM madlib_dl.model_deployments WHERE name = 'sv_iris';
DELETE FROM madlib_dl.model_versions WHERE model_table LIKE 'sv_test.%';
RESET client_min_messages;
