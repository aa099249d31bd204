--
-- 40_model_selection: load_model_selection_table and generate_model_configs
-- (grid and random search), their tables, and their errors.
--
\set SHOW_CONTEXT never
CREATE SCHEMA ms_test;
SET search_path = ms_test, public;

-- two architectures: the iris MLP (tf.keras 2), model ids 1 and 2
\set iris '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "sparse": false, "ragged": false, "name": "dense_input"}}, {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "batch_input_shape": [null, 4], "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}, {"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}, {"class_name": "Dense", "config": {"name": "dense_2", "trainable": true, "dtype": "float32", "units": 3, "activation": "softmax", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
SELECT madlib_dl.load_keras_model('ms_arch', :'iris', name => 'mlp a');
SELECT madlib_dl.load_keras_model('ms_arch', :'iris', name => 'mlp b');
SELECT model_id, name FROM ms_arch ORDER BY model_id;

-- help
SELECT madlib_dl.load_model_selection_table() LIKE 'load_model_selection_table:%' AS help_summary,
       position('compile_params_list' IN madlib_dl.load_model_selection_table('usage')) > 0 AS help_usage;
SELECT madlib_dl.generate_model_configs() LIKE 'generate_model_configs:%' AS help_summary,
       position('optimizer_params_list' IN madlib_dl.generate_model_configs('usage')) > 0 AS help_usage;

--
-- load_model_selection_table: model ids x compile params x fit params
--
SELECT madlib_dl.load_model_selection_table('ms_arch', 'mst_load', ARRAY[2, 1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1, momentum=0.9)', metrics=['accuracy']$$,
          $$loss='mse', optimizer='RMSprop'$$,
          $$optimizer='Adam(lr=0.01)', metrics=['accuracy'], loss='categorical_crossentropy'$$],
    ARRAY['batch_size=16, epochs=1', 'batch_size=32, epochs=2', 'epochs=2,batch_size=32']);
-- the 4th compile string and the 3rd fit string mean the same as earlier
-- ones and are dropped: 2 ids x 3 x 2 = 12 rows, model id slowest
SELECT count(*) AS n_rows, count(*) = 2 * 3 * 2 AS is_product FROM mst_load;
SELECT * FROM mst_load ORDER BY mst_key;
SELECT a.attname, format_type(a.atttypid, a.atttypmod) AS type
  FROM pg_attribute a
 WHERE a.attrelid = 'ms_test.mst_load'::regclass AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY a.attnum;
SELECT pg_get_constraintdef(c.oid) AS constraint_def
  FROM pg_constraint c WHERE c.conrelid = 'ms_test.mst_load'::regclass
 ORDER BY 1;
SELECT * FROM mst_load_summary;
-- the same call again adds nothing; a new fit string appends 2 x 3 rows
SELECT madlib_dl.load_model_selection_table('ms_arch', 'ms_test.mst_load', ARRAY[1, 2],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1, momentum=0.9)', metrics=['accuracy']$$,
          $$loss='mse', optimizer='RMSprop'$$],
    ARRAY['batch_size=16, epochs=1', 'batch_size=32, epochs=2']);
SELECT count(*) AS n_rows, max(mst_key) AS max_key FROM mst_load;
SELECT madlib_dl.load_model_selection_table('ms_arch', 'mst_load', ARRAY[1, 2],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1, momentum=0.9)', metrics=['accuracy']$$,
          $$loss='mse', optimizer='RMSprop'$$],
    ARRAY['batch_size=16, epochs=1', 'batch_size=64, epochs=3']);
SELECT count(*) AS n_rows, max(mst_key) AS max_key,
       count(*) FILTER (WHERE fit_params = 'batch_size=64, epochs=3') AS n_new
  FROM mst_load;
SELECT count(*) AS summary_rows FROM mst_load_summary;

--
-- generate_model_configs, grid search
--
\set cgrid '{''loss'': [''categorical_crossentropy''], ''optimizer_params_list'': [ {''optimizer'': [''SGD''], ''lr'': [0.0001, 0.001], ''momentum'': [0.95, 0.99]}, {''optimizer'': [''Adam''], ''lr'': [0.01, 0.1]} ], ''metrics'': [''accuracy'']}'
\set fgrid '{''batch_size'': [64, 128], ''epochs'': [10]}'
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_grid', ARRAY[1, 2], :'cgrid', :'fgrid');
-- 2 ids x (SGD: 2 lr x 2 momentum + Adam: 2 lr) x (2 batch sizes x 1 epochs)
SELECT count(*) AS n_rows, count(*) = 2 * (2 * 2 + 2) * (2 * 1) AS is_product,
       count(DISTINCT compile_params) AS n_compile, count(DISTINCT fit_params) AS n_fit
  FROM mst_grid;
SELECT * FROM mst_grid ORDER BY mst_key;
SELECT * FROM mst_grid_summary;
-- every row parses
SELECT bool_and(madlib_dl._check_compile_params(compile_params) IS NOT NULL
                AND madlib_dl._check_fit_params(fit_params) IS NOT NULL) AS all_parse
  FROM mst_grid;
-- again, with search_type spelled 'g': nothing new
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_grid', ARRAY[2, 1, 1], :'cgrid', :'fgrid', 'g');
SELECT count(*) AS n_rows, max(mst_key) AS max_key FROM mst_grid;
-- a grid without optimizer_params_list, with every kind of literal; the
-- numbers are written as Python's repr writes them
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_lit', ARRAY[1],
    $$ {"loss": ["mse"], 'optimizer': [u'SGD(lr=0.1)', "Adam"],
        'weighted_metrics': [[1e-3, 1.5E-7, 100.0, 1e16, 2, -0.0, 0.30000000000000004],
                         ((1,), (), {1: 'a\'b', "c": None}, True, False)],}$$,
    $$ {'batch_size': [32], 'shuffle': [True, False]} $$);
SELECT mst_key, compile_params, fit_params FROM mst_lit ORDER BY mst_key;
-- an empty fit grid gives Keras' defaults
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_nofit', ARRAY[1],
    $$ {'loss': ['mse'], 'optimizer_params_list': [{'lr': [0.5]}, {'optimizer': ['adamax']}]} $$, '{}');
SELECT mst_key, compile_params, fit_params = '' AS empty_fit FROM mst_nofit ORDER BY mst_key;

--
-- generate_model_configs, random search
--
\set rgrid '{''loss'': [''categorical_crossentropy''], ''optimizer_params_list'': [ {''optimizer'': [''SGD''], ''lr'': [0.0001, 0.001, ''log''], ''momentum'': [0.95, 0.99, ''log_near_one'']}, {''optimizer'': [''Adam''], ''lr'': [0.01, 0.1, ''linear'']} ], ''metrics'': [''accuracy'']}'
\set rfgrid '{''batch_size'': [16, 32, 64, 128], ''epochs'': [1, 2, 3]}'
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_r1', ARRAY[1, 2], :'rgrid', :'rfgrid', 'random', 20, 7);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_r2', ARRAY[1, 2], :'rgrid', :'rfgrid', 'rand', 20, 7);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_r3', ARRAY[1, 2], :'rgrid', :'rfgrid', 'RANDOM', 20, 8);
SELECT (SELECT count(*) FROM mst_r1) AS n_r1, (SELECT count(*) FROM mst_r3) AS n_r3;
-- same random_state: the same rows; another: other rows
SELECT (SELECT array_agg((model_id, compile_params, fit_params) ORDER BY mst_key) FROM mst_r1)
     = (SELECT array_agg((model_id, compile_params, fit_params) ORDER BY mst_key) FROM mst_r2) AS same_seed_same_rows,
       (SELECT count(*) FROM mst_r1 a JOIN mst_r3 b USING (mst_key)
         WHERE a.compile_params = b.compile_params) AS equal_compile_other_seed;
SELECT mst_key, model_id, compile_params, fit_params FROM mst_r1 ORDER BY mst_key LIMIT 4;
-- every value comes from its list or its distribution
WITH v AS (
    SELECT model_id, fit_params,
           substring(compile_params FROM $$optimizer='([A-Za-z]+)\($$) AS opt,
           substring(compile_params FROM 'lr=([0-9.e+-]+)')::float8 AS lr,
           substring(compile_params FROM 'momentum=([0-9.e+-]+)')::float8 AS momentum,
           substring(fit_params FROM 'batch_size=([0-9]+)')::int AS batch_size,
           substring(fit_params FROM 'epochs=([0-9]+)')::int AS epochs
      FROM mst_r1)
SELECT count(*) FILTER (WHERE opt = 'SGD') AS n_sgd,
       count(*) FILTER (WHERE opt = 'Adam') AS n_adam,
       bool_and(CASE opt WHEN 'SGD' THEN lr BETWEEN 0.0001 AND 0.001
                                         AND momentum BETWEEN 0.95 AND 0.99
                         WHEN 'Adam' THEN lr BETWEEN 0.01 AND 0.1 AND momentum IS NULL END) AS in_range,
       count(DISTINCT lr) = count(*) AS lr_all_distinct,
       bool_and(batch_size IN (16, 32, 64, 128) AND epochs IN (1, 2, 3)
                AND fit_params = format('batch_size=%s,epochs=%s', batch_size, epochs)) AS fit_from_lists,
       count(DISTINCT model_id) AS n_model_ids, count(DISTINCT batch_size) AS n_batch_sizes
  FROM v;
-- 'log' spreads over the decades: both halves of [1e-4, 1e-3] in log
-- space are hit; 'log_near_one' leans towards 1 - 10^uniform
SELECT count(*) FILTER (WHERE lr < sqrt(0.0001 * 0.001)) > 0 AS low_half,
       count(*) FILTER (WHERE lr >= sqrt(0.0001 * 0.001)) > 0 AS high_half
  FROM (SELECT substring(compile_params FROM 'lr=([0-9.e+-]+)')::float8 AS lr
          FROM madlib_dl._model_configs(ARRAY[1], $$ {'loss': ['mse'], 'optimizer_params_list': [{'optimizer': ['SGD'], 'lr': [0.0001, 0.001, 'log']}]} $$,
                                        '{}', 'random', 200, 1)) s;
SELECT bool_and(m BETWEEN 0.9 AND 0.999) AS in_range,
       count(*) FILTER (WHERE m > 0.99) > 0 AS reaches_near_one,
       count(*) FILTER (WHERE m < 0.99) > 0 AS reaches_low
  FROM (SELECT substring(compile_params FROM 'momentum=([0-9.e+-]+)')::float8 AS m
          FROM madlib_dl._model_configs(ARRAY[1], $$ {'loss': ['mse'], 'optimizer_params_list': [{'optimizer': ['SGD'], 'momentum': [0.9, 0.999, 'log_near_one']}]} $$,
                                        '{}', 'random', 200, 1)) s;
-- configuration k depends only on random_state and k: a shorter draw is
-- a prefix of a longer one
SELECT (SELECT array_agg((model_id, compile_params::text, fit_params::text) ORDER BY mst_key)
          FROM mst_r1 WHERE mst_key <= 5)
     = (SELECT array_agg((g.model_id, g.compile_params, g.fit_params) ORDER BY o)
          FROM madlib_dl._model_configs(ARRAY[1, 2], :'rgrid', :'rfgrid', 'random', 5, 7)
               WITH ORDINALITY AS g(model_id, compile_params, fit_params, o)) AS prefix_of_longer_draw;
-- plain lists are chosen from uniformly: 4000 draws of 4 model ids
SELECT model_id, count(*) BETWEEN 900 AND 1100 AS about_a_quarter
  FROM madlib_dl._model_configs(ARRAY[4, 3, 2, 1], $$ {'loss': ['mse'], 'optimizer': ['SGD']} $$,
                                '{}', 'random', 4000, 3)
 GROUP BY model_id ORDER BY model_id;
-- the same draw again appends nothing; without random_state the draw is
-- not reproducible, but still num_configs rows
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_r1', ARRAY[1, 2], :'rgrid', :'rfgrid', 'random', 20, 7);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_r4', ARRAY[1, 2], :'rgrid', :'rfgrid', 'random', 5);
SELECT (SELECT count(*) FROM mst_r1) AS n_r1, (SELECT count(*) FROM mst_r4) AS n_r4;

--
-- errors
--
\set VERBOSITY terse
-- tables
SELECT madlib_dl.load_model_selection_table('no_such_arch', 'mst_e', ARRAY[1], ARRAY[$$loss='mse', optimizer='SGD'$$], ARRAY['']);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.generate_model_configs('no_such_arch', 'mst_e', ARRAY[1], :'cgrid', :'fgrid');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.load_model_selection_table('ms_arch', 'mst_e', ARRAY[1, 99, 42], ARRAY[$$loss='mse', optimizer='SGD'$$], ARRAY['']);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[7], :'cgrid', :'fgrid');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.load_model_selection_table('ms_arch', 'mst_e', ARRAY[]::int[], ARRAY[$$loss='mse', optimizer='SGD'$$], ARRAY['']);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.load_model_selection_table('ms_arch', 'mst_e', ARRAY[1, NULL], ARRAY[$$loss='mse', optimizer='SGD'$$], ARRAY['']);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.load_model_selection_table('ms_arch', 'mst_e', ARRAY[1], NULL, ARRAY['']);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.load_model_selection_table('ms_arch', 'mst_e', ARRAY[1], ARRAY[]::varchar[], ARRAY['']);
\echo :LAST_ERROR_SQLSTATE
-- a table of another shape, or made for another architecture table
CREATE TABLE mst_wrong (mst_key serial, model_id integer, compile_params text);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_wrong', ARRAY[1], :'cgrid', :'fgrid');
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE mst_wrong ADD COLUMN fit_params json;
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_wrong', ARRAY[1], :'cgrid', :'fgrid');
\echo :LAST_ERROR_SQLSTATE
-- a table written by hand (text columns, no UNIQUE) is appended to,
-- without repeats
ALTER TABLE mst_wrong DROP COLUMN fit_params;
ALTER TABLE mst_wrong ADD COLUMN fit_params text;
INSERT INTO mst_wrong (model_id, compile_params, fit_params)
VALUES (1, $$optimizer='Adam(lr=0.01)',loss='categorical_crossentropy',metrics=['accuracy']$$, 'batch_size=64,epochs=10');
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_wrong', ARRAY[1], :'cgrid', :'fgrid');
SELECT count(*) AS n_rows, count(DISTINCT (model_id, compile_params, fit_params)) AS n_distinct FROM mst_wrong;
SELECT * FROM mst_wrong_summary;
CREATE TABLE mst_nokey (mst_key integer, model_id integer, compile_params varchar, fit_params varchar);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_nokey', ARRAY[1], :'cgrid', :'fgrid');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.load_keras_model('ms_arch2', :'iris');
SELECT madlib_dl.generate_model_configs('ms_arch2', 'mst_grid', ARRAY[1], :'cgrid', :'fgrid');
\echo :LAST_ERROR_SQLSTATE
-- parameter strings are checked when the row is created
SELECT madlib_dl.load_model_selection_table('ms_arch', 'mst_e', ARRAY[1],
    ARRAY[$$loss='mse', optimizer='SGD'$$, $$loss='mse', optimizer='Foo(lr=0.1)'$$], ARRAY['']);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.load_model_selection_table('ms_arch', 'mst_e', ARRAY[1],
    ARRAY[$$loss='mse', optimizer='SGD'$$], ARRAY['batch_size=32', 'batch_size=32, validation_split=0.1']);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.load_model_selection_table('ms_arch', 'mst_e', ARRAY[1],
    ARRAY[$$loss='mse', optimizer='SGD'$$], ARRAY['batch_size=32', NULL]);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1],
    $$ {'loss': ['mse'], 'optimizer_params_list': [{'optimizer': ['SGD', 'Foo']}]} $$, '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_grid', ARRAY[1],
    $$ {'loss': ['mse'], 'optimizer': ['SGD']} $$, $$ {'batch_size': [8, 0]} $$);
\echo :LAST_ERROR_SQLSTATE
-- nothing was written
SELECT to_regclass('mst_e') IS NULL AS no_table, (SELECT count(*) FROM mst_grid) AS n_grid;
-- search type and its arguments
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'rgrid', :'fgrid');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', :'fgrid', 'grid', 10);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', :'fgrid', 'grid', NULL, 1);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'rgrid', :'fgrid', 'random');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'rgrid', :'fgrid', 'random', 0);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'rgrid', :'fgrid', 'bayesian', 5);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'rgrid', :'fgrid', '', 5);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', :'fgrid', object_table => 'custom_fns');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.load_model_selection_table('ms_arch', 'mst_e', ARRAY[1], ARRAY[$$loss='mse', optimizer='SGD'$$], ARRAY[''], 'custom_fns');
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', NULL);
\echo :LAST_ERROR_SQLSTATE
-- distributions in random search
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'epochs': [1, 'linear']} $$, 'random', 3);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'epochs': [1, 5, 'cubic']} $$, 'random', 3);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'epochs': [5, 1, 'linear']} $$, 'random', 3);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'epochs': [None, 5, 'linear']} $$, 'random', 3);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], $$ {'loss': ['mse'], 'optimizer_params_list': [{'lr': [0, 0.1, 'log']}]} $$, '{}', 'random', 3);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], $$ {'loss': ['mse'], 'optimizer_params_list': [{'momentum': [0.9, 1, 'log_near_one']}]} $$, '{}', 'random', 3);
-- malformed grids: the message names the position
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'batch_size': [64, 128}, 'epochs': [10]} $$);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'batch_size': [64, 128], 'epochs': [10] $$);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'batch_size': [64, 128]]} $$);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'batch_size': [sixty_four]} $$);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'batch_size': [64 @ 2]} $$);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'batch_size': [64, 1x]} $$);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'batch_size': [064]} $$);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'batch_size': [1e999]} $$);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'batch_size': [99999999999999999999]} $$);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'batch_size': ['64]} $$);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'batch_size': [64]} {} $$);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'batch_size', 'epochs'} $$);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'batch_size' [64]} $$);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', '   ');
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'batch_size': [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[64]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]} $$);
-- well-formed literals that are not grids
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ [{'batch_size': [64]}] $$);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'batch_size': 64} $$);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'batch_size': []} $$);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'batch_size': [64], 'batch_size': [32]} $$);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'batch size': [64]} $$);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {1: [64]} $$);
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], $$ {'loss': ['mse'], 'optimizer_params_list': []} $$, '{}');
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], $$ {'loss': ['mse'], 'optimizer_params_list': [{}]} $$, '{}');
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], $$ {'loss': ['mse'], 'optimizer': ['SGD'], 'optimizer_params_list': [{'optimizer': ['Adam']}]} $$, '{}');
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], $$ {'loss': ['mse'], 'optimizer_params_list': [{'optimizer': [1]}]} $$, '{}');
-- more than 100000 configurations
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1, 2],
    $$ {'loss': ['mse'], 'optimizer_params_list': [{'optimizer': ['SGD'], 'lr': [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]}]} $$,
    $$ {'batch_size': [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'epochs': [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'verbose': [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50]} $$);
\echo :LAST_ERROR_SQLSTATE
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'rgrid', :'fgrid', 'random', 100001);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
-- one error with its hint
SELECT madlib_dl.generate_model_configs('ms_arch', 'mst_e', ARRAY[1], :'cgrid', $$ {'batch_size': [64, 128], 'epochs': [10, 'log']} $$, 'grid');
SELECT to_regclass('mst_e') IS NULL AS no_table_after_errors;

SET client_min_messages = warning;
DROP SCHEMA ms_test CASCADE;
RESET client_min_messages;
RESET search_path;
