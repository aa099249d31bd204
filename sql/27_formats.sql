--
-- 27_formats: tables written by another madlib_dl version (docs/formats.md).
-- model_weights and packed buffers carry no header: the summary table's
-- madlib_version says which madlib_dl wrote them.
--   * the preprocessors and fit write madlib_version = madlib_dl.version();
--   * a model or packed table from an older madlib_dl (0.1.0), or from
--     another writer (no madlib_version, as MADlib's packed tables, or a
--     NULL one), is read;
--   * one claiming a newer major.minor (madlib_dl 9.0.0, 0.99.0) is refused
--     with 0A000 by predict, evaluate, fit (source, validation and warm
--     start), fit_multiple (source and warm start) and
--     validation_preprocessor_dl, before any table is written;
--   * 'madlib_dl ' followed by no version is refused too.
--
\set SHOW_CONTEXT never
CREATE SCHEMA formats_test;
SET search_path = formats_test, public;
\set ECHO none
\i test/data/iris.sql
\set ECHO all
SET client_min_messages = warning;   -- fit's NOTICEs print timings

SELECT madlib_dl.training_preprocessor_dl('iris_data', 'fp', 'class_text', 'attributes', NULL, 1.0, NULL, '2');
SELECT madlib_dl.validation_preprocessor_dl('iris_data', 'fv', 'class_text', 'attributes', 'fp');
\set arch '{"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "name": "in"}}, {"class_name": "Dense", "config": {"name": "d1", "units": 3, "activation": "softmax"}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
SELECT madlib_dl.load_keras_model('arch', :'arch');
\set compile '$$loss=''categorical_crossentropy'', optimizer=''Adam(lr=0.01)'', metrics=[''accuracy'']$$'
SELECT madlib_dl.madlib_keras_fit('fp', 'fm', 'arch', 1, :compile, 'batch_size=16', 1);
SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1], ARRAY[:compile], ARRAY['batch_size=16']);
SELECT madlib_dl.madlib_keras_fit_multiple_model('fp', 'fmm', 'mst', 1);

-- what this version writes
SELECT (SELECT madlib_version FROM fp_summary) = madlib_dl.version() AS packed_written,
       (SELECT madlib_version FROM fv_summary) = madlib_dl.version() AS validation_written,
       (SELECT madlib_version FROM fm_summary) = madlib_dl.version() AS model_written,
       (SELECT madlib_version FROM fmm_summary) = madlib_dl.version() AS multi_written;

-- older versions and other writers are read
UPDATE fm_summary SET madlib_version = 'madlib_dl 0.1.0';
UPDATE fp_summary SET madlib_version = 'madlib_dl 0.1.0';
SELECT madlib_dl.madlib_keras_predict('fm', 'iris_data', 'id', 'attributes', 'p1');
SELECT madlib_dl.madlib_keras_evaluate('fm', 'fv', 'e1');
SELECT madlib_dl.madlib_keras_fit('fp', 'fm', 'arch', 1, :compile, 'batch_size=16', 1, warm_start => true);
UPDATE fm_summary SET madlib_version = NULL;
ALTER TABLE fp_summary DROP COLUMN madlib_version;
SELECT madlib_dl.madlib_keras_predict('fm', 'iris_data', 'id', 'attributes', 'p2');
SELECT madlib_dl.madlib_keras_fit('fp', 'fm_other', 'arch', 1, :compile, 'batch_size=16', 1);
SELECT count(*) AS predictions FROM p1;
SELECT (SELECT count(*) FROM p1) = (SELECT count(*) FROM p2) AS both_read;

-- a newer madlib_dl: refused, nothing written
UPDATE fm_summary SET madlib_version = 'madlib_dl 9.0.0';
SELECT madlib_dl.madlib_keras_predict('fm', 'iris_data', 'id', 'attributes', 'p_new');
SELECT madlib_dl.madlib_keras_evaluate('fm', 'fv', 'e_new');
SELECT madlib_dl.madlib_keras_fit('fp', 'fm', 'arch', 1, :compile, 'batch_size=16', 1, warm_start => true);
UPDATE fm_summary SET madlib_version = 'madlib_dl 0.99.0';
SELECT madlib_dl.madlib_keras_predict('fm', 'iris_data', 'id', 'attributes', 'p_new');
UPDATE fm_summary SET madlib_version = 'madlib_dl next';
SELECT madlib_dl.madlib_keras_predict('fm', 'iris_data', 'id', 'attributes', 'p_new');
UPDATE fmm_summary SET madlib_version = 'madlib_dl 1.0.0';
SELECT madlib_dl.madlib_keras_predict('fmm', 'iris_data', 'id', 'attributes', 'p_new', mst_key => 1);
SELECT madlib_dl.madlib_keras_fit_multiple_model('fp', 'fmm', 'mst', 1, warm_start => true);
UPDATE fv_summary SET madlib_version = 'madlib_dl 9.0.0';
SELECT madlib_dl.madlib_keras_evaluate('fm_other', 'fv', 'e_new');
SELECT madlib_dl.madlib_keras_fit('fp', 'fm_new', 'arch', 1, :compile, 'batch_size=16', 1, validation_table => 'fv');
ALTER TABLE fp_summary ADD COLUMN madlib_version text DEFAULT 'madlib_dl 9.0.0';
SELECT madlib_dl.madlib_keras_fit('fp', 'fm_new', 'arch', 1, :compile, 'batch_size=16', 1);
SELECT madlib_dl.madlib_keras_fit_multiple_model('fp', 'fmm_new', 'mst', 1);
SELECT madlib_dl.validation_preprocessor_dl('iris_data', 'fv_new', 'class_text', 'attributes', 'fp');
SELECT count(*) AS tables_written FROM pg_class
 WHERE relnamespace = 'formats_test'::regnamespace AND relname LIKE '%\_new%';

RESET search_path;
DROP SCHEMA formats_test CASCADE;
