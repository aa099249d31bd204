-- test/greenplum/same_answer_prep.sql: the data of same_answer.sql,
-- packed for 3 segments (run by test/greenplum/run.sh on both servers;
-- it then copies Greenplum's packed rows into PostgreSQL's tables, so
-- that both train on the same buffers with the same placement: the
-- preprocessors' shuffle hashes each row's ctid, which differs between a
-- table spread over 3 segments and the same table in one heap).
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
