-- 25_streaming: partitions larger than madlib_dl.partition_memory are
-- streamed (read from the packed table a window at a time) instead of
-- cached (held in memory for the whole call), and both give
-- byte-identical weights: fit (the budget decides) and fit_multiple
-- (use_caching), on parallel workers, in the leader alone, and through
-- the greenplum transport's aggregates; buffers stored out of line
-- uncompressed (read in slices), compressed (read whole), and in the row.
\set SHOW_CONTEXT never
CREATE SCHEMA streaming_test;
SET search_path = streaming_test, public;
SET client_min_messages = warning;
SELECT setseed(0.25);

-- 2600 rows of 1024 features (4 kB a row: 64 rows a block of the shuffle),
-- on 2 segments in buffers of 434 rows: 21 blocks, two windows a segment
CREATE TABLE wide AS
SELECT g AS id, ARRAY(SELECT (random() * 2 - 1)::real FROM generate_series(1, 1024) WHERE g > 0) AS x,
       g % 3 AS y
  FROM generate_series(1, 2600) g;
SELECT madlib_dl.training_preprocessor_dl('wide', 'wide_p', 'y', 'x', 500, 1.0, NULL, '2');
SELECT madlib_dl.validation_preprocessor_dl('wide', 'wide_v', 'y', 'x', 'wide_p');
-- under a budget smaller than the packed data the preprocessor builds the
-- buffers in several passes (one buffer each here): the same bytes
SET madlib_dl.partition_memory = '1MB';
SELECT madlib_dl.training_preprocessor_dl('wide', 'wide_p1', 'y', 'x', 500, 1.0, NULL, '2');
RESET madlib_dl.partition_memory;
SELECT (SELECT string_agg(md5(x) || md5(y) || x_shape::text || y_shape::text || __dist_key__, ',' ORDER BY buffer_id) FROM wide_p)
     = (SELECT string_agg(md5(x) || md5(y) || x_shape::text || y_shape::text || __dist_key__, ',' ORDER BY buffer_id) FROM wide_p1)
       AS same_buffers;
-- the preprocessor stores buffers out of line and uncompressed
SELECT count(*) AS buffers, bool_and(pg_column_compression(x) IS NULL) AS uncompressed,
       bool_and(pg_column_size(x) > 100000) AS out_of_line
  FROM wide_p;

SELECT madlib_dl.load_keras_model('arch',
  '{"class_name": "Sequential", "config": {"layers": [
     {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 1024]}},
     {"class_name": "Dense", "config": {"units": 8, "activation": "relu"}},
     {"class_name": "Dropout", "config": {"rate": 0.2}},
     {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}');
\set adam '$$loss=''categorical_crossentropy'', optimizer=''Adam(lr=0.01)'', metrics=[''accuracy'']$$'

-- the plan: every segment cached under the default budget; streamed with
-- use_caching false, or when the budget is smaller than a partition
SELECT segment, rows, buffers, blocks, cached FROM madlib_dl.partition_plan('wide_p');
SELECT segment, rows, buffers, blocks, cached FROM madlib_dl.partition_plan('wide_p', false);
SET madlib_dl.partition_memory = '5MB';
SELECT segment, cached, cache_bytes > budget AS over_budget, stream_bytes <= budget AS streams
  FROM madlib_dl.partition_plan('wide_p');

-- fit: the budget decides (MADlib's fit has no use_caching)
SELECT madlib_dl.fit('wide_p', 'fs', 'arch', 1, :adam, 'batch_size=50, epochs=2, seed=9', 2,
                     FALSE, 'wide_v', 1);
RESET madlib_dl.partition_memory;
SELECT madlib_dl.fit('wide_p', 'fc', 'arch', 1, :adam, 'batch_size=50, epochs=2, seed=9', 2,
                     FALSE, 'wide_v', 1);
SELECT madlib_dl.fit('wide_p', 'fo', 'arch', 1, :adam, 'batch_size=50, epochs=2, seed=10', 2);
SELECT (SELECT model_weights FROM fs) = (SELECT model_weights FROM fc) AS fit_identical,
       (SELECT model_weights FROM fs) <> (SELECT model_weights FROM fo) AS another_seed_differs,
       (SELECT validation_loss FROM fs_summary) = (SELECT validation_loss FROM fc_summary) AS same_metrics;

-- fit_multiple: use_caching true and false, workers and the leader alone
SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1],
    ARRAY[:adam, $$loss='categorical_crossentropy', optimizer='SGD(lr=0.05, momentum=0.9)', metrics=['accuracy']$$],
    ARRAY[$$batch_size=32, epochs=1, seed=3$$, $$batch_size=64, epochs=2, seed=5$$]);
SELECT madlib_dl.fit_multiple('wide_p', 'mc', 'mst', 2, FALSE, 'wide_v', 1, use_caching => true);
SELECT madlib_dl.fit_multiple('wide_p', 'ms', 'mst', 2, FALSE, 'wide_v', 1, use_caching => false);
SET max_parallel_workers = 0;
SELECT madlib_dl.fit_multiple('wide_p', 'ml', 'mst', 2, FALSE, 'wide_v', 1, use_caching => false);
RESET max_parallel_workers;
SELECT c.mst_key, c.model_weights = s.model_weights AS streamed_identical,
       c.model_weights = l.model_weights AS leader_identical,
       ci.validation_loss = si.validation_loss AS same_metrics
  FROM mc c JOIN ms s USING (mst_key) JOIN ml l USING (mst_key)
  JOIN mc_info ci USING (mst_key) JOIN ms_info si USING (mst_key)
 ORDER BY 1;
SELECT use_caching FROM mc_summary UNION ALL SELECT use_caching FROM ms_summary;

-- the greenplum transport (the step aggregates on PostgreSQL)
SELECT bool_and(r.model_weights = (SELECT model_weights FROM fc)) AS gp_identical
  FROM (VALUES (true), (false)) v(cache),
       LATERAL madlib_dl._fit_run(madlib_dl._make_train_job('wide_p', 'x', 'y',
           ARRAY[(SELECT model_arch::text FROM arch WHERE model_id = 1)], ARRAY[:adam], 2,
           fit_params => ARRAY['batch_size=50, epochs=2, seed=9'], validation => 'wide_v',
           val_x_col => 'x', val_y_col => 'y', metrics_compute_frequency => 1,
           transport => 'greenplum', num_segments => 2, use_caching => v.cache)) r;

-- compressed buffers (a copy with the default storage): read whole
CREATE TABLE sparse AS
SELECT g AS id, ARRAY(SELECT CASE WHEN random() < 0.9 THEN 0 ELSE random() END::real
                        FROM generate_series(1, 1024) WHERE g > 0) AS x, g % 3 AS y
  FROM generate_series(1, 1200) g;
SELECT madlib_dl.training_preprocessor_dl('sparse', 'sparse_p', 'y', 'x', 300, 1.0, NULL, '2');
CREATE TABLE sparse_c AS SELECT * FROM sparse_p;
CREATE TABLE sparse_c_summary AS SELECT * FROM sparse_p_summary;
SELECT bool_and(pg_column_compression(x) IS NOT NULL) AS compressed FROM sparse_c;
SELECT segment, blocks, cached FROM madlib_dl.partition_plan('sparse_c', false);
SELECT madlib_dl.fit_multiple('sparse_c', 'sc', 'mst', 2, use_caching => true);
SELECT madlib_dl.fit_multiple('sparse_c', 'ss', 'mst', 2, use_caching => false);
SELECT madlib_dl.fit_multiple('sparse_p', 'sp', 'mst', 2, use_caching => false);
SELECT c.mst_key, c.model_weights = s.model_weights AS streamed_identical,
       c.model_weights = p.model_weights AS same_as_uncompressed
  FROM sc c JOIN ss s USING (mst_key) JOIN sp p USING (mst_key) ORDER BY 1;

-- buffers of 3 rows stored in the row: many blocks and windows
\set ECHO none
\i test/data/iris.sql
\set ECHO all
SET client_min_messages = warning;
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_p', 'class_text', 'attributes', 3, 1.0, NULL, '2');
SELECT segment, buffers, blocks, cached FROM madlib_dl.partition_plan('iris_p', false);
SELECT madlib_dl.load_keras_model('arch',
  '{"class_name": "Sequential", "config": {"layers": [
     {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4]}},
     {"class_name": "Dense", "config": {"units": 10, "activation": "relu"}},
     {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}');
SELECT madlib_dl.load_model_selection_table('arch', 'mst2', ARRAY[2],
    ARRAY[:adam, $$loss='categorical_crossentropy', optimizer='SGD(lr=0.05, momentum=0.9)', metrics=['accuracy']$$],
    ARRAY[$$batch_size=4, epochs=1, seed=3$$, $$batch_size=7, epochs=2, seed=5$$]);
SELECT madlib_dl.fit_multiple('iris_p', 'ic', 'mst2', 3, use_caching => true);
SELECT madlib_dl.fit_multiple('iris_p', 'isr', 'mst2', 3, use_caching => false);
SELECT c.mst_key, c.model_weights = s.model_weights AS streamed_identical
  FROM ic c JOIN isr s USING (mst_key) ORDER BY 1;

-- errors: what does not fit
SET client_min_messages = error;
\set VERBOSITY default
SET max_parallel_workers = 0;   -- the leader places every segment, in order
SET madlib_dl.partition_memory = '1MB';
SELECT madlib_dl.fit_multiple('wide_p', 'e1', 'mst', 1, use_caching => true);
SELECT madlib_dl.fit_multiple('wide_p', 'e2', 'mst', 1, use_caching => false);
SELECT madlib_dl.fit('wide_p', 'e3', 'arch', 1, :adam, 'batch_size=50', 1);
RESET max_parallel_workers;
SET madlib_dl.partition_memory = '10kB';
RESET madlib_dl.partition_memory;
-- a superuser setting
CREATE ROLE streaming_user;
SET ROLE streaming_user;
SET madlib_dl.partition_memory = '1GB';
RESET ROLE;
DROP ROLE streaming_user;
SET client_min_messages = warning;
DROP SCHEMA streaming_test CASCADE;
