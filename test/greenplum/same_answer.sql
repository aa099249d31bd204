-- test/greenplum/same_answer.sql: run on Greenplum (3 segments) and on
-- PostgreSQL (3 virtual segments) by test/greenplum/run.sh after
-- same_answer_prep.sql and the copy of Greenplum's packed rows; run.sh
-- compares the two outputs line by line: the buffers and their segments,
-- then fit's, the averaging fit's and fit_multiple's weights (md5) and
-- validation losses.
\set ON_ERROR_STOP 1
\set VERBOSITY terse
SET client_min_messages = warning;
\pset format unaligned
\pset tuples_only on
-- where each buffer is: its segment (Greenplum: gp_segment_id, the
-- content id; PostgreSQL: __dist_key__, the virtual segment)
CREATE FUNCTION pg_temp.placement(tbl regclass) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    r text;
BEGIN
    EXECUTE format('SELECT string_agg(buffer_id || '':'' || %s, '' '' ORDER BY buffer_id) FROM %s',
                   CASE WHEN madlib_dl._is_greenplum() THEN 'gp_segment_id' ELSE '__dist_key__' END, tbl)
       INTO r;
    RETURN r;
END
$f$;
SELECT 'placement train ' || pg_temp.placement('train_p');
SELECT 'placement validation ' || pg_temp.placement('val_p');
SELECT 'buffers ' || md5(string_agg(buffer_id || ':' || md5(attributes) || md5(class_text), ' ' ORDER BY buffer_id))
  FROM train_p;
SELECT madlib_dl.fit('train_p', 'f', 'arch', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
    'batch_size=8, epochs=1, seed=11', 4, FALSE, 'val_p') \g /dev/null
SELECT 'fit ' || md5(model_weights) FROM f;
SELECT 'fit validation_loss ' || validation_loss::text FROM f_summary;
SELECT madlib_dl.fit('train_p', 'fa', 'arch', 1,
    $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['accuracy']$$,
    'batch_size=8, epochs=1, seed=12', 3, averaging_period => 2, lr_scaling => 'linear') \g /dev/null
SELECT 'fit averaging ' || md5(model_weights) FROM fa;
SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['accuracy']$$],
    ARRAY['batch_size=8, epochs=1, seed=5', 'batch_size=16, epochs=1, seed=6']) \g /dev/null
SELECT madlib_dl.fit_multiple('train_p', 'fm', 'mst', 3, FALSE, 'val_p') \g /dev/null
SELECT 'fit_multiple ' || mst_key || ' ' || md5(model_weights) FROM fm ORDER BY mst_key;
SELECT 'fit_multiple validation_loss ' || mst_key || ' ' || validation_loss::text FROM fm_info ORDER BY mst_key;
