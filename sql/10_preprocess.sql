-- 10_preprocess.sql: training_preprocessor_dl / validation_preprocessor_dl
-- on the iris data: layout of the packed and summary tables, buffers and
-- segments, normalisation, one-hot encoding of every kind of dependent
-- variable, determinism, and each bad input with its error.
\set VERBOSITY terse
SET extra_float_digits = 0;
\i test/data/iris.sql

-- Test helpers.  pp_try runs a statement and returns 'SQLSTATE: message'.
CREATE FUNCTION pp_try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;
-- Every packed row of a preprocessed table: its buffer and slot, x as
-- real[] (flattened), y as smallint[].
CREATE FUNCTION pp_rows(tbl text, xcol text, ycol text)
RETURNS TABLE (buffer_id int, slot int, x real[], y smallint[])
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT p.buffer_id, i, '
        '       (madlib_dl._unpack_float32(p.%2$I))[(i - 1) * w.xw + 1 : i * w.xw], '
        '       (madlib_dl._unpack_int16(p.%3$I))[(i - 1) * w.yw + 1 : i * w.yw] '
        '  FROM %1$s p, '
        '       LATERAL (SELECT (octet_length(p.%2$I) / 4 / p.%4$I[1])::int AS xw, p.%5$I[2] AS yw) w, '
        '       generate_series(1, p.%4$I[1]) i',
        tbl, xcol, ycol, xcol || '_shape', ycol || '_shape');
END
$$;
-- Sum of the one-hot columns over all buffers: the count of each class.
CREATE FUNCTION pp_class_counts(tbl text, ycol text) RETURNS bigint[] LANGUAGE plpgsql AS $$
DECLARE r bigint[];
BEGIN
    EXECUTE format(
        'SELECT array_agg(c ORDER BY k) FROM ('
        '  SELECT k, sum(v) AS c FROM ('
        '    SELECT ((i - 1) %% p.%2$I[2]) + 1 AS k, v'
        '      FROM %1$s p, unnest(madlib_dl._unpack_int16(p.%3$I)) WITH ORDINALITY u(v, i)) a'
        '  GROUP BY k) b', tbl, ycol || '_shape', ycol) INTO r;
    RETURN r;
END
$$;

-- =====================================================================
-- Training, 3 segments, normalizing_const 2
-- =====================================================================
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_packed', 'class_text', 'attributes',
                                          NULL, 2, NULL, '3');

-- Columns, in MADlib's order; the buffers are stored uncompressed ('e').
SELECT attname, format_type(atttypid, atttypmod) AS type, attstorage
  FROM pg_attribute WHERE attrelid = 'iris_packed'::regclass AND attnum > 0 ORDER BY attnum;

-- 3 buffers of 50 rows, one per segment; 4 float32 / 3 int16 per row.
SELECT buffer_id, __dist_key__, class_text_shape, attributes_shape,
       octet_length(class_text) AS y_bytes, octet_length(attributes) AS x_bytes,
       octet_length(attributes) = 4 * attributes_shape[1] * 4 AS x_bytes_ok,
       octet_length(class_text) = 2 * class_text_shape[1] * 3 AS y_bytes_ok
  FROM iris_packed ORDER BY buffer_id;
SELECT sum(attributes_shape[1]) AS total_rows, count(DISTINCT __dist_key__) AS segments_used
  FROM iris_packed;

-- The summary, every column, and its types.
\x on
SELECT * FROM iris_packed_summary;
\x off
SELECT attname, format_type(atttypid, atttypmod) AS type
  FROM pg_attribute WHERE attrelid = 'iris_packed_summary'::regclass AND attnum > 0 ORDER BY attnum;

-- Decode: the first two rows of buffer 0 (values are iris / 2) ...
SELECT buffer_id, slot, x, y FROM pp_rows('iris_packed', 'attributes', 'class_text')
 WHERE buffer_id = 0 AND slot <= 2 ORDER BY slot;
-- ... and the whole table: the packed rows are exactly the source rows
-- (as a multiset), x divided by 2 in float32, y one-hot of the class.
CREATE TEMP TABLE iris_expected AS
SELECT (SELECT array_agg((v / 2)::real ORDER BY k) FROM unnest(attributes) WITH ORDINALITY u(v, k)) AS x,
       CASE class_text WHEN 'Iris-setosa' THEN '{1,0,0}'::smallint[]
                       WHEN 'Iris-versicolor' THEN '{0,1,0}'::smallint[]
                       ELSE '{0,0,1}'::smallint[] END AS y
  FROM iris_data;
SELECT (SELECT count(*) FROM (SELECT x, y FROM pp_rows('iris_packed', 'attributes', 'class_text')
                              EXCEPT ALL SELECT x, y FROM iris_expected) a) AS missing_from_source,
       (SELECT count(*) FROM (SELECT x, y FROM iris_expected
                              EXCEPT ALL SELECT x, y FROM pp_rows('iris_packed', 'attributes', 'class_text')) b)
           AS missing_from_packed;
-- Shuffled: the classes are mixed over the buffers (per buffer, rows per class).
SELECT buffer_id, pp_class_counts(format('(SELECT * FROM iris_packed WHERE buffer_id = %s)', buffer_id),
                                  'class_text') AS rows_per_class
  FROM iris_packed ORDER BY buffer_id;
-- The shaped decode gives a (n, 4) array.
SELECT array_dims(madlib_dl._unpack_float32(attributes, attributes_shape)) AS x_dims,
       array_dims(madlib_dl._unpack_int16(class_text, class_text_shape)) AS y_dims
  FROM iris_packed WHERE buffer_id = 0;

-- Deterministic: the same table packs to the same bytes.
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_packed_again', 'class_text', 'attributes',
                                          NULL, 2, NULL, '3');
SELECT (SELECT md5(string_agg(attributes || class_text, ''::bytea ORDER BY buffer_id)) FROM iris_packed)
     = (SELECT md5(string_agg(attributes || class_text, ''::bytea ORDER BY buffer_id)) FROM iris_packed_again)
       AS same_bytes;

-- =====================================================================
-- Buffer sizes (MADlib's formula) and segments
-- =====================================================================
SELECT madlib_dl._pp_buffer_size(52, 4, 3, NULL) AS madlib_example_18,
       madlib_dl._pp_buffer_size(150, 4, 3, NULL) AS b150_3,
       madlib_dl._pp_buffer_size(150, 4, 4, NULL) AS b150_4,
       madlib_dl._pp_buffer_size(150, 4, 3, 40) AS hint40_3,
       madlib_dl._pp_buffer_size(60000, 784, 2, NULL) AS mnist_2,
       madlib_dl._pp_buffer_size(1000, 1000000, 1, NULL) AS wide_rows;

-- buffer_size hint 40 on 3 segments: 6 buffers of 25, keys 0,1,2,0,1,2.
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_b40', 'class_text', 'attributes', 40, 1.0, NULL, '3');
SELECT buffer_id, __dist_key__, attributes_shape FROM iris_b40 ORDER BY buffer_id;
SELECT buffer_size, num_segments, distribution_rules FROM iris_b40_summary;

-- 4 segments: MADlib's formula gives buffers of 38, 38, 38, 36.
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_s4', 'class_text', 'attributes', NULL, 1.0, NULL, '4');
SELECT buffer_id, __dist_key__, attributes_shape FROM iris_s4 ORDER BY buffer_id;

-- Defaults: the default number of segments, normalizing_const 1.
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_default', 'class_text', 'attributes');
SELECT s.num_segments = (madlib_dl._pp_segments(NULL)).nseg AS default_segments,
       s.num_segments >= 1 AS positive,
       s.distribution_rules, s.normalizing_const, s.buffer_size = madlib_dl._pp_buffer_size(150, 4, s.num_segments, NULL) AS bs_ok,
       (SELECT count(*) FROM iris_default) = ceil(150.0 / s.buffer_size) AS nbuf_ok,
       (SELECT bool_and(__dist_key__ = buffer_id % s.num_segments) FROM iris_default) AS keys_ok,
       (SELECT sum(attributes_shape[1]) FROM iris_default) AS total_rows
  FROM iris_default_summary s;
SELECT x FROM pp_rows('iris_default', 'attributes', 'class_text') ORDER BY x LIMIT 1;

-- distribution_rules 'all_segments' is the default; '1' is one segment.
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_all', 'class_text', 'attributes', NULL, 1, NULL, 'all_segments');
SELECT distribution_rules, num_segments = (madlib_dl._pp_segments(NULL)).nseg AS default_segments FROM iris_all_summary;
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_s1', 'class_text', 'attributes', NULL, 1, NULL, '1');
SELECT buffer_id, __dist_key__, attributes_shape FROM iris_s1;
SELECT distribution_rules, num_segments, buffer_size FROM iris_s1_summary;

-- =====================================================================
-- Validation preprocessor
-- =====================================================================
CREATE TABLE iris_val AS SELECT * FROM iris_data WHERE id % 5 = 0 ORDER BY id;
SELECT madlib_dl.validation_preprocessor_dl('iris_val', 'iris_val_packed', 'class_text', 'attributes',
                                            'iris_packed');
\x on
SELECT * FROM iris_val_packed_summary;
\x off
SELECT buffer_id, __dist_key__, class_text_shape, attributes_shape FROM iris_val_packed ORDER BY buffer_id;
-- Not shuffled: rows keep the storage order (ids 5, 10, ...), divided by
-- the training normalizing_const 2, with the training classes.
SELECT buffer_id, slot, x, y FROM pp_rows('iris_val_packed', 'attributes', 'class_text')
 WHERE buffer_id = 0 AND slot <= 2 ORDER BY slot;
SELECT attributes, class_text FROM iris_val ORDER BY id LIMIT 2;
SELECT pp_class_counts('iris_val_packed', 'class_text') AS rows_per_class;
-- distribution_rules overrides the training segments.
SELECT madlib_dl.validation_preprocessor_dl('iris_val', 'iris_val_s2', 'class_text', 'attributes',
                                            'iris_packed', NULL, '2');
SELECT buffer_id, __dist_key__, attributes_shape FROM iris_val_s2 ORDER BY buffer_id;
SELECT num_segments, distribution_rules FROM iris_val_s2_summary;

-- A class that is not a training class is refused, and named.
CREATE TABLE iris_val_bad AS SELECT * FROM iris_val;
UPDATE iris_val_bad SET class_text = 'Iris-unknown' WHERE id = 50;
SELECT madlib_dl.validation_preprocessor_dl('iris_val_bad', 'iris_val_bad_packed', 'class_text', 'attributes',
                                            'iris_packed');
-- So is NULL, which was not a training class.
UPDATE iris_val_bad SET class_text = NULL WHERE id = 50;
SELECT pp_try($$SELECT madlib_dl.validation_preprocessor_dl('iris_val_bad', 'iris_val_bad_packed',
                'class_text', 'attributes', 'iris_packed')$$);
-- Other validation errors.
SELECT pp_try($$SELECT madlib_dl.validation_preprocessor_dl('iris_val', 'v_out', 'class_text', 'attributes',
                'no_such_packed')$$);
CREATE TABLE iris_val_wide AS SELECT id, attributes || 0.0::float8 AS attributes, class_text FROM iris_val;
SELECT pp_try($$SELECT madlib_dl.validation_preprocessor_dl('iris_val_wide', 'v_out', 'class_text', 'attributes',
                'iris_packed')$$);
SELECT pp_try($$SELECT madlib_dl.validation_preprocessor_dl('iris_val', 'iris_val_packed', 'class_text', 'attributes',
                'iris_packed')$$);
SELECT pp_try($$SELECT madlib_dl.validation_preprocessor_dl('iris_val', 'v_out', 'class_text', 'attributes',
                'iris_packed', 0)$$);
SELECT to_regclass('v_out') IS NULL AND to_regclass('iris_val_bad_packed') IS NULL AS nothing_left;
-- The preprocessor's scratch table never takes the place of a user's own
-- temporary table of the same name: that one keeps its rows.
CREATE TEMPORARY TABLE madlib_dl_pp_order_1 AS SELECT 'mine'::text AS note;
CREATE TEMPORARY TABLE madlib_dl_pp_order AS SELECT 'mine too'::text AS note;
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_tmpname', 'class_text', 'attributes');
SELECT (SELECT note FROM pg_temp.madlib_dl_pp_order_1) AS kept_1,
       (SELECT note FROM pg_temp.madlib_dl_pp_order) AS kept,
       (SELECT count(*) FROM iris_tmpname) > 0 AS packed;
DROP TABLE pg_temp.madlib_dl_pp_order_1, pg_temp.madlib_dl_pp_order, iris_tmpname, iris_tmpname_summary;
-- The class values of a training summary are cast to their element type:
-- a domain there (whose CHECK would run the summary owner's code as the
-- caller) is refused before any row is read, and its check never runs.
CREATE FUNCTION pp_spy(v text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('pp.spy', true) = 'on' THEN
        RAISE NOTICE 'domain check ran as %', current_user;
    END IF;
    RETURN true;
END $$;
CREATE DOMAIN pp_spy_text AS text CHECK (pp_spy(VALUE));
CREATE TABLE iris_spy AS SELECT * FROM iris_packed;
CREATE TABLE iris_spy_summary AS SELECT * FROM iris_packed_summary;
ALTER TABLE iris_spy_summary ALTER COLUMN class_text_class_values TYPE pp_spy_text[];
SET pp.spy = on;
SELECT pp_try($$SELECT madlib_dl.validation_preprocessor_dl('iris_val', 'v_out', 'class_text', 'attributes',
                'iris_spy')$$);
RESET pp.spy;
SELECT to_regclass('v_out') IS NULL AS nothing_left;

-- =====================================================================
-- Kinds of dependent variable
-- =====================================================================
-- integer classes with NULL as a class (sorted first); integer[] features.
CREATE TABLE iris_int AS
SELECT id, ARRAY[round(attributes[1] * 10), round(attributes[2] * 10),
                 round(attributes[3] * 10), round(attributes[4] * 10)]::integer[] AS x,
       CASE WHEN id % 10 = 0 THEN NULL
            ELSE CASE class_text WHEN 'Iris-setosa' THEN 7 WHEN 'Iris-versicolor' THEN 3 ELSE 5 END
       END AS y
  FROM iris_data ORDER BY id;
SELECT madlib_dl.training_preprocessor_dl('iris_int', 'iris_int_packed', 'y', 'x', NULL, 10, NULL, '2');
SELECT dependent_vartype, y_class_values, num_classes, normalizing_const, buffer_size FROM iris_int_packed_summary;
SELECT buffer_id, __dist_key__, y_shape, x_shape FROM iris_int_packed ORDER BY buffer_id;
-- counts per class, in class order {NULL, 3, 5, 7}
SELECT pp_class_counts('iris_int_packed', 'y') AS rows_per_class,
       (SELECT array_agg(n ORDER BY y NULLS FIRST) FROM (SELECT y, count(*) n FROM iris_int GROUP BY y) c) AS expected;
-- integers divided by 10: the packed x are the iris values (as float32)
SELECT (SELECT count(*) FROM (SELECT x FROM pp_rows('iris_int_packed', 'x', 'y')
                              EXCEPT ALL
                              SELECT (SELECT array_agg((v::float8 / 10)::real ORDER BY k)
                                        FROM unnest(x) WITH ORDINALITY u(v, k)) FROM iris_int) a) AS mismatches;
-- the NULL-class rows are one-hot in column 1
SELECT count(*) FILTER (WHERE y = '{1,0,0,0}') AS null_class_rows FROM pp_rows('iris_int_packed', 'x', 'y');

-- boolean classes; real[] features.
CREATE TABLE iris_bool AS
SELECT id, attributes::real[] AS x, class_text = 'Iris-setosa' AS is_setosa FROM iris_data ORDER BY id;
SELECT madlib_dl.training_preprocessor_dl('iris_bool', 'iris_bool_packed', 'is_setosa', 'x', NULL, 1, NULL, '2');
SELECT dependent_vartype, is_setosa_class_values, num_classes FROM iris_bool_packed_summary;
SELECT pp_class_counts('iris_bool_packed', 'is_setosa') AS rows_per_class;

-- double precision classes; numeric[] features.
CREATE TABLE iris_dbl AS
SELECT id, attributes::numeric[] AS x, round(attributes[1])::float8 AS y FROM iris_data ORDER BY id;
SELECT madlib_dl.training_preprocessor_dl('iris_dbl', 'iris_dbl_packed', 'y', 'x', NULL, 1, NULL, '2');
SELECT dependent_vartype, y_class_values, num_classes FROM iris_dbl_packed_summary;
SELECT pp_class_counts('iris_dbl_packed', 'y') AS rows_per_class,
       (SELECT array_agg(n ORDER BY y) FROM (SELECT y, count(*) n FROM iris_dbl GROUP BY y) c) AS expected;
SELECT (SELECT count(*) FROM (SELECT x FROM pp_rows('iris_dbl_packed', 'x', 'y')
                              EXCEPT ALL SELECT x::real[] FROM iris_dbl) a) AS mismatches;

-- text classes, smallint[] features in a 2x2 array: shape {n, 2, 2}.
CREATE TABLE iris_2d AS
SELECT id, ARRAY[[round(attributes[1])::smallint, round(attributes[2])::smallint],
                 [round(attributes[3])::smallint, round(attributes[4])::smallint]] AS x,
       class_text::text AS y FROM iris_data ORDER BY id;
SELECT madlib_dl.training_preprocessor_dl('iris_2d', 'iris_2d_packed', 'y', 'x', NULL, 1, NULL, '2');
SELECT buffer_id, y_shape, x_shape, octet_length(x) = 4 * x_shape[1] * 4 AS x_bytes_ok
  FROM iris_2d_packed ORDER BY buffer_id;
SELECT dependent_vartype, y_class_values FROM iris_2d_packed_summary;
SELECT array_dims(madlib_dl._unpack_float32(x, x_shape)) FROM iris_2d_packed WHERE buffer_id = 0;

-- Already one-hot integer[] dependent: taken as it is, class values NULL.
CREATE TABLE iris_onehot AS
SELECT id, attributes,
       CASE class_text WHEN 'Iris-setosa' THEN '{1,0,0}'::integer[]
                       WHEN 'Iris-versicolor' THEN '{0,1,0}'::integer[]
                       ELSE '{0,0,1}'::integer[] END AS y
  FROM iris_data ORDER BY id;
SELECT madlib_dl.training_preprocessor_dl('iris_onehot', 'iris_onehot_packed', 'y', 'attributes',
                                          NULL, 2, NULL, '3');
\x on
SELECT * FROM iris_onehot_packed_summary;
\x off
SELECT buffer_id, y_shape, attributes_shape FROM iris_onehot_packed ORDER BY buffer_id;
-- the same rows as the class_text packing
SELECT (SELECT count(*) FROM (SELECT x, y FROM pp_rows('iris_onehot_packed', 'attributes', 'y')
                              EXCEPT ALL SELECT x, y FROM iris_expected) a) AS mismatches;
-- float8[] one-hot too; validation of one-hot data.
CREATE TABLE iris_onehot_f AS SELECT id, attributes, y::float8[] AS y FROM iris_onehot WHERE id % 5 = 0 ORDER BY id;
SELECT madlib_dl.validation_preprocessor_dl('iris_onehot_f', 'iris_onehot_f_packed', 'y', 'attributes',
                                            'iris_onehot_packed');
SELECT pp_class_counts('iris_onehot_f_packed', 'y') AS rows_per_class, num_classes, y_class_values IS NULL AS no_class_values
  FROM iris_onehot_f_packed_summary;
-- an array holding values other than 0 and 1 is a numeric target
-- (regression), packed as float32 (4 bytes a value, not 2)
UPDATE iris_onehot_f SET y = '{0,2.5,0}' WHERE id = 50;
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_onehot_f', 'oh_out', 'y', 'attributes')$$);
SELECT sum(octet_length(y)) = 4 * 3 * 30 AS float32_targets, num_classes, y_class_values IS NULL AS no_class_values,
       (SELECT max(v) FROM oh_out, unnest(madlib_dl._unpack_float32(y)) v) AS max_target
  FROM oh_out, oh_out_summary GROUP BY num_classes, y_class_values;
DROP TABLE oh_out, oh_out_summary;
-- one-hot errors
UPDATE iris_onehot_f SET y = '{0,1}' WHERE id = 50;
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_onehot_f', 'oh_out', 'y', 'attributes')$$);
UPDATE iris_onehot_f SET y = '{0,NULL,1}' WHERE id = 50;
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_onehot_f', 'oh_out', 'y', 'attributes')$$);
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_onehot', 'oh_out', 'y', 'attributes', NULL, 1, 4)$$);
SELECT pp_try($$SELECT madlib_dl.validation_preprocessor_dl('iris_val', 'oh_out', 'class_text', 'attributes',
                'iris_onehot_packed')$$);
SELECT pp_try($$SELECT madlib_dl.validation_preprocessor_dl('iris_onehot', 'oh_out', 'y', 'attributes',
                'iris_packed')$$);

-- =====================================================================
-- num_classes
-- =====================================================================
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_nc5', 'class_text', 'attributes', NULL, 1, 5, '3');
SELECT class_text_class_values, num_classes FROM iris_nc5_summary;
SELECT buffer_id, class_text_shape, octet_length(class_text) AS y_bytes FROM iris_nc5 ORDER BY buffer_id;
SELECT pp_class_counts('iris_nc5', 'class_text') AS rows_per_class;
-- ARRAY[n] as newer MADlib versions take it, and NULL before distribution_rules
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_nc5a', 'class_text', 'attributes', NULL, 1, ARRAY[5], '3');
SELECT num_classes FROM iris_nc5a_summary;
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_ncnull', 'class_text', 'attributes', 10, 255, NULL, '2');
SELECT num_classes, buffer_size, normalizing_const FROM iris_ncnull_summary;
-- validation of padded classes reuses the padding
SELECT madlib_dl.validation_preprocessor_dl('iris_val', 'iris_val_nc5', 'class_text', 'attributes', 'iris_nc5');
SELECT class_text_class_values, num_classes FROM iris_val_nc5_summary;
SELECT DISTINCT class_text_shape[2] FROM iris_val_nc5;
-- too few classes
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'nc_out', 'class_text', 'attributes', NULL, 1, 2);
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_data', 'nc_out', 'class_text', 'attributes',
                NULL, 1, ARRAY[3, 3])$$);
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_data', 'nc_out', 'class_text', 'attributes',
                NULL, 1, 'x'::text)$$);

-- =====================================================================
-- Bad inputs, each with its SQLSTATE
-- =====================================================================
-- missing source table
SELECT madlib_dl.training_preprocessor_dl('no_such_table', 'e_out', 'class_text', 'attributes');
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('no_such_table', 'e_out', 'class_text', 'attributes')$$);
-- output table, or its summary, already there
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_packed', 'class_text', 'attributes')$$);
CREATE TABLE e_out_summary (a int);
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_data', 'e_out', 'class_text', 'attributes')$$);
DROP TABLE e_out_summary;
-- missing columns, two columns, the same column twice
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_data', 'e_out', 'no_such_col', 'attributes')$$);
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_data', 'e_out', 'class_text', 'no_such_col')$$);
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_data', 'e_out', 'class_text, CLASS_TEXT', 'attributes')$$);
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_data', 'e_out', 'class_text, ', 'attributes')$$);
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_data', 'e_out', 'class_text', 'attributes, id')$$);
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_data', 'e_out', 'attributes', 'attributes')$$);
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_data', 'e_out', NULL, 'attributes')$$);
-- wrong column types
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_data', 'e_out', 'id', 'class_text')$$);
CREATE TABLE e_types AS SELECT attributes, now()::date AS d, ARRAY['a'] AS t FROM iris_data LIMIT 3;
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('e_types', 'e_out', 'd', 'attributes')$$);
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('e_types', 'e_out', 't', 'attributes')$$);
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('e_types', 'e_out', 'attributes', 't')$$);
-- bad arguments
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'e_out', 'class_text', 'attributes', NULL, 0);
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_data', 'e_out', 'class_text', 'attributes', NULL, -1)$$);
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_data', 'e_out', 'class_text', 'attributes', NULL, 'NaN')$$);
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_data', 'e_out', 'class_text', 'attributes', NULL, 'Infinity')$$);
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'e_out', 'class_text', 'attributes', 0);
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_data', 'e_out', 'class_text', 'attributes', -5)$$);
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'e_out', 'class_text', 'attributes', NULL, 1, NULL, 'gpu_segments');
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_data', 'e_out', 'class_text', 'attributes', NULL, 1, NULL, '0')$$);
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_data', 'e_out', 'class_text', 'attributes', NULL, 1, NULL, '65')$$);
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('iris_data', 'e_out', 'class_text', 'attributes', NULL, 1, NULL, '2; drop table iris_data')$$);
-- empty source
CREATE TABLE e_empty (LIKE iris_data);
SELECT madlib_dl.training_preprocessor_dl('e_empty', 'e_out', 'class_text', 'attributes');
-- bad feature values: NULL array, NULL element, NaN, infinity, another
-- shape, overflow after normalising; each error names the row's ctid.
CREATE TABLE e_feat AS SELECT * FROM iris_data ORDER BY id;
UPDATE e_feat SET attributes = NULL WHERE id = 7;
SELECT madlib_dl.training_preprocessor_dl('e_feat', 'e_out', 'class_text', 'attributes');
SELECT ctid FROM e_feat WHERE attributes IS NULL;
UPDATE e_feat SET attributes = '{1,NULL,3,4}' WHERE id = 7;
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('e_feat', 'e_out', 'class_text', 'attributes')$$);
UPDATE e_feat SET attributes = '{1,2,NaN,4}' WHERE attributes[2] IS NULL;
SELECT madlib_dl.training_preprocessor_dl('e_feat', 'e_out', 'class_text', 'attributes');
SELECT ctid FROM e_feat WHERE attributes[3] = 'NaN';
UPDATE e_feat SET attributes = '{1,2,3,-Infinity}' WHERE attributes[3] = 'NaN';
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('e_feat', 'e_out', 'class_text', 'attributes')$$);
UPDATE e_feat SET attributes = '{1,2,3}' WHERE attributes[4] = '-Infinity';
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('e_feat', 'e_out', 'class_text', 'attributes')$$);
UPDATE e_feat SET attributes = '{1,2,3,1e300}' WHERE cardinality(attributes) = 3;
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('e_feat', 'e_out', 'class_text', 'attributes')$$);
UPDATE e_feat SET attributes = '{}' WHERE attributes[4] = 1e300;
SELECT pp_try($$SELECT madlib_dl.training_preprocessor_dl('e_feat', 'e_out', 'class_text', 'attributes')$$);
-- nothing was created by any failed call, and the sources are unchanged
SELECT count(*) AS leftovers FROM pg_class WHERE relname IN ('e_out', 'e_out_summary', 'nc_out', 'nc_out_summary',
       'oh_out', 'oh_out_summary', 'v_out', 'v_out_summary');
SELECT count(*), md5(string_agg(attributes::text || class_text, ',' ORDER BY id)) FROM iris_data;

-- =====================================================================
-- Schema-qualified names, help text, unpack errors
-- =====================================================================
CREATE SCHEMA pp_s;
CREATE TABLE pp_s.src AS SELECT * FROM iris_data;
SELECT madlib_dl.training_preprocessor_dl('pp_s.src', 'pp_s.packed', 'class_text', 'attributes', NULL, 1, NULL, '2');
SELECT source_table, output_table FROM pp_s.packed_summary;
SELECT madlib_dl.validation_preprocessor_dl('iris_val', 'pp_s.val', 'class_text', 'attributes', 'pp_s.packed');
SELECT count(*) FROM pp_s.val;

-- A partitioned source: rows are told apart by (tableoid, ctid).
CREATE TABLE iris_part (id int, attributes float8[], class_text varchar) PARTITION BY LIST (class_text);
CREATE TABLE iris_part_a PARTITION OF iris_part FOR VALUES IN ('Iris-setosa');
CREATE TABLE iris_part_b PARTITION OF iris_part DEFAULT;
INSERT INTO iris_part SELECT * FROM iris_data ORDER BY id;
SELECT madlib_dl.training_preprocessor_dl('iris_part', 'iris_part_packed', 'class_text', 'attributes', NULL, 2, NULL, '3');
SELECT (SELECT sum(attributes_shape[1]) FROM iris_part_packed) AS total_rows,
       (SELECT count(*) FROM (SELECT x, y FROM pp_rows('iris_part_packed', 'attributes', 'class_text')
                              EXCEPT ALL SELECT x, y FROM iris_expected) a) AS mismatches;

SELECT madlib_dl.training_preprocessor_dl() LIKE '%training_preprocessor_dl: pack%' AS help,
       madlib_dl.training_preprocessor_dl('usage') LIKE '%normalizing_const%' AS usage,
       madlib_dl.validation_preprocessor_dl() LIKE '%validation_preprocessor_dl: pack%' AS vhelp,
       madlib_dl.validation_preprocessor_dl('usage') LIKE '%training_preprocessor_table%' AS vusage;

SELECT madlib_dl._unpack_float32('\x0000803f00000040'::bytea) AS one_two,
       madlib_dl._unpack_int16('\x0100ffff'::bytea) AS one_minus_one,
       madlib_dl._unpack_float32('\x0000803f00000040'::bytea, '{1,2}') AS shaped;
SELECT madlib_dl._unpack_float32('\x0000803f00'::bytea);
SELECT madlib_dl._unpack_float32('\x0000803f00000040'::bytea, '{3}');

-- Leave nothing behind for the tests that follow.
DROP SCHEMA pp_s CASCADE;
DROP TABLE iris_data, iris_val, iris_val_bad, iris_val_wide, iris_int, iris_bool, iris_dbl, iris_2d,
           iris_onehot, iris_onehot_f, e_types, e_empty, e_feat,
           iris_packed, iris_packed_summary, iris_packed_again, iris_packed_again_summary,
           iris_b40, iris_b40_summary, iris_s4, iris_s4_summary, iris_default, iris_default_summary,
           iris_all, iris_all_summary, iris_s1, iris_s1_summary,
           iris_val_packed, iris_val_packed_summary, iris_val_s2, iris_val_s2_summary,
           iris_int_packed, iris_int_packed_summary, iris_bool_packed, iris_bool_packed_summary,
           iris_dbl_packed, iris_dbl_packed_summary, iris_2d_packed, iris_2d_packed_summary,
           iris_onehot_packed, iris_onehot_packed_summary, iris_onehot_f_packed, iris_onehot_f_packed_summary,
           iris_nc5, iris_nc5_summary, iris_nc5a, iris_nc5a_summary, iris_ncnull, iris_ncnull_summary,
           iris_val_nc5, iris_val_nc5_summary, iris_part, iris_part_packed, iris_part_packed_summary,
           iris_spy, iris_spy_summary;
DROP DOMAIN pp_spy_text;
DROP FUNCTION pp_try(text), pp_rows(text, text, text), pp_class_counts(text, text), pp_spy(text);
SELECT count(*) AS tables_left FROM pg_class WHERE relnamespace = 'public'::regnamespace
   AND (relname LIKE 'iris%' OR relname LIKE 'e\_%' ESCAPE '\');
