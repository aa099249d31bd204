-- test/greenplum/same_answer.sql: run on Greenplum (3 segments) and on
-- PostgreSQL (3 virtual segments) by test/greenplum/run.sh, which
-- compares the two outputs line by line: the packed buffers (the same
-- placement), then fit's and fit_multiple's weights, as md5s.
\set ON_ERROR_STOP 1
\set VERBOSITY terse
SET client_min_messages = warning;
\set ECHO none
\i test/data/iris.sql
\set ECHO none
\pset format unaligned
\pset tuples_only on
CREATE TABLE iris_train AS SELECT * FROM iris_data WHERE id % 5 <> 0;
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'train_p', 'class_text', 'attributes', 10, 1.0, NULL, '3');
SELECT madlib_dl.validation_preprocessor_dl('iris_data', 'val_p', 'class_text', 'attributes', 'train_p');
SELECT madlib_dl.load_keras_model('arch', '{"class_name": "Sequential", "config": {"layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4]}}, {"class_name": "Dense", "config": {"units": 10, "activation": "relu"}}, {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}') \g /dev/null
SELECT 'buffers ' || string_agg(buffer_id || ':' || (buffer_id % 3) || ':' || md5(attributes) || md5(class_text), ' ' ORDER BY buffer_id)
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
