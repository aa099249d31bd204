-- golden.sql: the weights of a fixed set of training runs on every path,
-- as "label md5" lines (test/golden/golden.sh runs it).  Weights depend
-- on the CPU's kernels: compare the md5s of one machine with each other,
-- never across machines.
--   fit          model averaging, 1, 2 and 3 segments, SGD+Nesterov, Dropout
--   fit_multiple K > N, K = N, K < N, with and without validation
--   streamed     partitions read from their tables a window at a time
--                (use_caching false): the md5s of the cached runs
--   gp_*         the greenplum transport (the step aggregates), run on PostgreSQL
--   px_*         PL/Proxy: a cluster of two databases of this server
-- Needs: superuser, plproxy installed (the px_ lines are skipped otherwise,
-- and say so), psql variables node1 and node2 (conninfos of the nodes).
\set ON_ERROR_STOP on
\set QUIET on
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS golden CASCADE;
CREATE SCHEMA golden;
SET search_path = golden, public;
\i test/data/iris.sql
\o /dev/null
CREATE TABLE iris_train AS SELECT * FROM iris_data WHERE id % 5 <> 0;
CREATE TABLE iris_test AS SELECT * FROM iris_data WHERE id % 5 = 0;
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'p1', 'class_text', 'attributes', 20, 1.0, NULL, '1');
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'p2', 'class_text', 'attributes', 20, 1.0, NULL, '2');
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'p3', 'class_text', 'attributes', 20, 1.0, NULL, '3');
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'p4', 'class_text', 'attributes', 13, 1.0, NULL, '4');
SELECT madlib_dl.validation_preprocessor_dl('iris_test', 'v3', 'class_text', 'attributes', 'p3');
SELECT madlib_dl.load_keras_model('arch',
  '{"class_name": "Sequential", "config": {"layers": [
     {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4]}},
     {"class_name": "Dense", "config": {"units": 10, "activation": "relu"}},
     {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}');
SELECT madlib_dl.load_keras_model('arch',
  '{"class_name": "Sequential", "config": {"layers": [
     {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4]}},
     {"class_name": "Dense", "config": {"units": 6, "activation": "tanh"}},
     {"class_name": "Dropout", "config": {"rate": 0.25}},
     {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}');
SELECT madlib_dl.load_keras_model('arch',
  '{"class_name": "Sequential", "config": {"layers": [
     {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 2, 2, 1]}},
     {"class_name": "Conv2D", "config": {"filters": 4, "kernel_size": [2, 2], "padding": "same", "activation": "relu"}},
     {"class_name": "Flatten", "config": {}},
     {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}');
-- the CNN reads the 4 iris features as a 2x2 image
CREATE TABLE iris_img AS
SELECT id, ARRAY[[[attributes[1]], [attributes[2]]], [[attributes[3]], [attributes[4]]]] AS attributes, class_text
  FROM iris_train;
SELECT madlib_dl.training_preprocessor_dl('iris_img', 'img2', 'class_text', 'attributes', 16, 1.0, NULL, '2');

\set adam '$$loss=''categorical_crossentropy'', optimizer=''Adam(lr=0.01)'', metrics=[''accuracy'']$$'
\set nest '$$loss=''categorical_crossentropy'', optimizer=''SGD(lr=0.05, momentum=0.9, nesterov=True)'', metrics=[''accuracy'']$$'
\set fp '$$batch_size=8, epochs=2, seed=7$$'
CREATE TABLE golden_md5 (label text PRIMARY KEY, md5 text);

-- fit: model averaging
SELECT madlib_dl.fit('p1', 'f1', 'arch', 1, :adam, :fp, 3);
SELECT madlib_dl.fit('p2', 'f2', 'arch', 1, :adam, :fp, 3);
SELECT madlib_dl.fit('p3', 'f3', 'arch', 1, :adam, :fp, 3, FALSE, 'v3');
SELECT madlib_dl.fit('p2', 'f2n', 'arch', 2, :nest, :fp, 3);
SELECT madlib_dl.fit('p3', 'f3d', 'arch', 2, :adam, :fp, 2, FALSE, 'v3');
SELECT madlib_dl.fit('img2', 'fimg', 'arch', 3, :adam, :fp, 2);
SELECT madlib_dl.fit('p4', 'f4', 'arch', 1, :adam, :fp, 3);
INSERT INTO golden_md5 VALUES
  ('fit p1', (SELECT md5(model_weights) FROM f1)),
  ('fit p2', (SELECT md5(model_weights) FROM f2)),
  ('fit p3 validation', (SELECT md5(model_weights) FROM f3)),
  ('fit p2 sgd nesterov', (SELECT md5(model_weights) FROM f2n)),
  ('fit p3 dropout', (SELECT md5(model_weights) FROM f3d)),
  ('fit cnn 2 segments', (SELECT md5(model_weights) FROM fimg)),
  ('fit p4', (SELECT md5(model_weights) FROM f4));

-- fit_multiple: K = 3 configurations on 2, 3 and 4 segments
SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1, 2],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='SGD(lr=0.05, momentum=0.9)', metrics=['accuracy']$$],
    ARRAY[$$batch_size=8, epochs=1, seed=3$$, $$batch_size=16, epochs=2, seed=5$$]);
DELETE FROM mst WHERE mst_key > 3;
SELECT madlib_dl.fit_multiple('p2', 'm2', 'mst', 3);
SELECT madlib_dl.fit_multiple('p3', 'm3', 'mst', 3, FALSE, 'v3');
SELECT madlib_dl.fit_multiple('p4', 'm4', 'mst', 3);
SET max_parallel_workers = 0;      -- the leader runs every segment itself
SELECT madlib_dl.fit_multiple('p4', 'm4w0', 'mst', 3);
RESET max_parallel_workers;
INSERT INTO golden_md5
SELECT format('fit_multiple %s mst_key %s', t, mst_key), md5(model_weights)
  FROM (SELECT 'K>N p2' AS t, * FROM m2 UNION ALL SELECT 'K=N p3 validation', * FROM m3
        UNION ALL SELECT 'K<N p4', * FROM m4 UNION ALL SELECT 'K<N p4 no workers', * FROM m4w0) u;
INSERT INTO golden_md5
SELECT 'fit_multiple ' || t || ' schedule', md5(schedule::text)
  FROM (SELECT 'K>N p2' AS t, schedule FROM m2_summary UNION ALL SELECT 'K=N p3 validation', schedule FROM m3_summary
        UNION ALL SELECT 'K<N p4', schedule FROM m4_summary) u;

-- streamed: every partition read from its table a window at a time
-- (use_caching false); the md5s equal those of the cached runs above
SELECT madlib_dl.fit_multiple('p2', 'm2s', 'mst', 3, use_caching => false);
INSERT INTO golden_md5
SELECT format('fit_multiple K>N p2 streamed mst_key %s', mst_key), md5(model_weights) FROM m2s;
INSERT INTO golden_md5
SELECT 'fit p3 dropout streamed', md5(r.model_weights)
  FROM madlib_dl._fit_run(madlib_dl._make_train_job('p3', 'attributes', 'class_text',
           ARRAY[(SELECT model_arch::text FROM arch WHERE model_id = 2)], ARRAY[:adam], 2,
           fit_params => ARRAY[:fp], validation => 'v3', val_x_col => 'attributes',
           val_y_col => 'class_text', num_segments => 3, use_caching => false)) r;

-- the greenplum transport (the step aggregates), on PostgreSQL
INSERT INTO golden_md5
SELECT 'gp fit p3 validation', md5(r.model_weights)
  FROM madlib_dl._fit_run(madlib_dl._make_train_job('p3', 'attributes', 'class_text',
           ARRAY[(SELECT model_arch::text FROM arch WHERE model_id = 1)], ARRAY[:adam], 3,
           fit_params => ARRAY[:fp], validation => 'v3', val_x_col => 'attributes',
           val_y_col => 'class_text', metrics_compute_frequency => 1,
           transport => 'greenplum', num_segments => 3)) r;
INSERT INTO golden_md5
SELECT 'gp fit p3 validation streamed', md5(r.model_weights)
  FROM madlib_dl._fit_run(madlib_dl._make_train_job('p3', 'attributes', 'class_text',
           ARRAY[(SELECT model_arch::text FROM arch WHERE model_id = 1)], ARRAY[:adam], 3,
           fit_params => ARRAY[:fp], validation => 'v3', val_x_col => 'attributes',
           val_y_col => 'class_text', metrics_compute_frequency => 1,
           transport => 'greenplum', num_segments => 3, use_caching => false)) r;
INSERT INTO golden_md5
SELECT format('gp fit_multiple %s mst_key %s', t, r.mst_key), md5(r.model_weights)
  FROM (VALUES ('p2'::regclass, 2, 'K>N p2'), ('p4'::regclass, 4, 'K<N p4')) v(tbl, nseg, t),
       LATERAL madlib_dl._fit_multiple_run(madlib_dl._make_train_job(v.tbl, 'attributes', 'class_text',
           (SELECT array_agg(a.model_arch::text ORDER BY m.mst_key) FROM mst m JOIN arch a USING (model_id)),
           (SELECT array_agg(compile_params::text ORDER BY mst_key) FROM mst), 3,
           fit_params => (SELECT array_agg(fit_params::text ORDER BY mst_key) FROM mst),
           mst_keys => (SELECT array_agg(mst_key ORDER BY mst_key) FROM mst),
           metrics_compute_frequency => 1, schedule_seed => 1,
           transport => 'greenplum', num_segments => v.nseg)) r;

-- PL/Proxy: 4 segments on two databases of this server
SELECT count(*) > 0 AS have_plproxy FROM pg_available_extensions WHERE name = 'plproxy' \gset
\if :have_plproxy
CREATE EXTENSION IF NOT EXISTS plproxy;
SELECT madlib_dl.plproxy_setup();
DO $$ BEGIN
    IF EXISTS (SELECT 1 FROM pg_foreign_server WHERE srvname = 'golden_px') THEN
        DROP SERVER golden_px CASCADE;
    END IF;
END $$;
SELECT madlib_dl.plproxy_create_cluster('golden_px', ARRAY[:'node1', :'node2'], 4);
DO $$ BEGIN   -- older versions made a PUBLIC mapping themselves
    IF NOT EXISTS (SELECT 1 FROM pg_user_mappings WHERE srvname = 'golden_px') THEN
        CREATE USER MAPPING FOR CURRENT_USER SERVER golden_px;
    END IF;
END $$;
SELECT madlib_dl.plproxy_distribute('p4', 'golden_px', 3);
SELECT madlib_dl.fit('p4', 'pxf', 'arch', 1, :adam, :fp, 3);
SELECT madlib_dl.fit_multiple('p4', 'pxm', 'mst', 3);
SELECT madlib_dl.fit_multiple('p4', 'pxms', 'mst', 3, use_caching => false);
INSERT INTO golden_md5 VALUES ('px fit p4', (SELECT md5(model_weights) FROM pxf));
INSERT INTO golden_md5 SELECT format('px fit_multiple K<N p4 mst_key %s', mst_key), md5(model_weights) FROM pxm;
INSERT INTO golden_md5
SELECT format('px fit_multiple K<N p4 streamed mst_key %s', mst_key), md5(model_weights) FROM pxms;
DROP SERVER golden_px CASCADE;
\else
INSERT INTO golden_md5 VALUES ('px skipped: plproxy is not installed', NULL);
\endif

\o
\pset format unaligned
\pset tuples_only on
\pset fieldsep ' '
SELECT md5, label FROM golden_md5 ORDER BY label;
DROP SCHEMA golden CASCADE;
