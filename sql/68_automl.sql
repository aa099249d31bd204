--
-- 68_automl: madlib_keras_automl (Hyperband, Hyperopt with TPE and rand,
-- ASHA) and hyperband_schedule on iris, 2 virtual segments, two
-- architectures.  Checks every output table's columns, the schedule
-- against MADlib's formulas, each method's decisions against its rule
-- (computed here from the tables), that the configurations are random
-- search's rows for the same random_state, reproducibility (same
-- random_state: the same configurations, decisions and weights, with or
-- without parallel workers, and over the greenplum transport), and every
-- bad input with its SQLSTATE and hint.  Losses depend on the CPU's
-- float kernels, so only relations between them are printed.
--
\set VERBOSITY terse
\set SHOW_CONTEXT never
SET extra_float_digits = 0;
CREATE SCHEMA automl;
SET search_path = automl, public;
\set ECHO none
\i test/data/iris.sql
\set ECHO all
CREATE TABLE iris_train AS SELECT * FROM iris_data WHERE id % 5 <> 0;
CREATE TABLE iris_test AS SELECT * FROM iris_data WHERE id % 5 = 0;
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'iris_p2', 'class_text',
    'attributes', NULL, 1.0, NULL, '2');
SELECT madlib_dl.validation_preprocessor_dl('iris_test', 'iris_v2', 'class_text',
    'attributes', 'iris_p2');
\set arch '{"class_name": "Sequential", "config": {"layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4]}}, {"class_name": "Dense", "config": {"units": 10, "activation": "relu"}}, {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}'
SELECT madlib_dl.load_keras_model('arch', :'arch', NULL, 'iris mlp 10');
SELECT madlib_dl.load_keras_model('arch', replace(:'arch', '"units": 10', '"units": 5')::json,
    NULL, 'iris mlp 5');
\set cgrid '{''loss'': [''categorical_crossentropy''], ''metrics'': [''accuracy''], ''optimizer_params_list'': [{''optimizer'': [''Adam''], ''lr'': [0.001, 0.1, ''log'']}, {''optimizer'': [''SGD''], ''lr'': [0.01, 0.3, ''log''], ''momentum'': [0.8, 0.99, ''log_near_one'']}]}'
\set fgrid '{''batch_size'': [8, 16], ''epochs'': [1]}'

-- The columns of a table, in order.
CREATE FUNCTION cols(t regclass) RETURNS TABLE (attnum smallint, attname name, type text)
LANGUAGE sql AS $$
    SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod)
      FROM pg_attribute a WHERE a.attrelid = t AND a.attnum > 0 AND NOT a.attisdropped
     ORDER BY a.attnum
$$;

-- The weights of a model table, as one md5.
CREATE FUNCTION weights_md5(t regclass) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE m text;
BEGIN
    EXECUTE format('SELECT md5(string_agg(mst_key || '':'' || md5(model_weights), '','' ORDER BY mst_key)) FROM %s', t)
       INTO m;
    RETURN m;
END
$$;

-- ---------------------------------------------------------------------
-- hyperband_schedule: MADlib's table
-- ---------------------------------------------------------------------
SELECT madlib_dl.hyperband_schedule('hb_sched', 9, 3, 0);
SELECT * FROM cols('hb_sched');
SELECT * FROM hb_sched ORDER BY s DESC, i;
-- MADlib's defaults (eta 3, skip_last 0) and its formulas for R = 81:
-- n = floor((s_max + 1) / (s + 1)) * eta^s, n_i = n / eta^i,
-- r_i = round(R * eta^(i - s)); skip_last leaves out each bracket's last
-- round (bracket 0 entirely)
SELECT madlib_dl.hyperband_schedule('hb_sched81', 81, 3, 1);
SELECT madlib_dl.hyperband_schedule('hb_sched81_all', 81);
SELECT bool_and(n_i = floor(5.0 / (s + 1)) * 3 ^ s / 3 ^ i AND r_i = round(81 * 3.0 ^ (i - s)))
       AS madlib_formulas,
       count(*) AS rounds, max(s) AS s_max FROM hb_sched81_all;
SELECT s, count(*) AS rounds, max(i) AS last_round, sum(n_i) FILTER (WHERE i = 0) AS configs
  FROM hb_sched81 GROUP BY s ORDER BY s DESC;
SELECT (SELECT count(*) FROM hb_sched81_all) - (SELECT count(*) FROM hb_sched81) AS rounds_skipped;
-- s_max is exact: MADlib's floor(log(243, 3)) gives 4
SELECT madlib_dl.hyperband_schedule('hb_sched243', 243);
SELECT max(s) AS s_max, max(r_i) AS r FROM hb_sched243;

-- ---------------------------------------------------------------------
-- Hyperband
-- ---------------------------------------------------------------------
SET client_min_messages = warning;
SELECT madlib_dl.madlib_keras_automl('iris_p2', 'hb', 'arch', 'hb_mst', ARRAY[1, 2],
    :'cgrid', :'fgrid', 'hyperband', 'R=9, eta=3', 42, NULL, FALSE, 'iris_v2');
RESET client_min_messages;
SELECT * FROM cols('hb');
SELECT * FROM cols('hb_info');
SELECT * FROM cols('hb_summary');
SELECT * FROM cols('hb_mst');
SELECT * FROM cols('hb_mst_summary');
-- 15 configurations in MADlib's numbering: bracket 2 first; each went as
-- far as the schedule allows (rounds = i + 1)
SELECT count(*) AS configs, min(mst_key), max(mst_key) FROM hb_info;
SELECT s, i, count(*) AS configs FROM hb_info GROUP BY s, i ORDER BY s DESC, i;
SELECT s, min(mst_key) AS first_key, max(mst_key) AS last_key FROM hb_info GROUP BY s ORDER BY s DESC;
SELECT s, i, n_i AS schedule_n_i,
       (SELECT count(*) FROM hb_info f WHERE f.s = h.s AND f.i >= h.i) AS trained_in_round
  FROM hb_sched h ORDER BY s DESC, i;
-- each round's survivors are its best n_{i+1} by validation loss
WITH r AS (
    SELECT s, j, mst_key, rung_losses[j + 1] AS loss, rung_promoted[j + 1] AS promoted,
           rung_iters[j + 1] AS iters
      FROM hb_info, generate_series(0, i) j),
ranked AS (
    SELECT r.*, row_number() OVER (PARTITION BY s, j ORDER BY loss, mst_key) AS rk,
           coalesce((SELECT n_i FROM hb_sched h WHERE h.s = r.s AND h.i = r.j + 1), 0) AS n_next,
           (SELECT r_i FROM hb_sched h WHERE h.s = r.s AND h.i = r.j) AS r_j
      FROM r)
SELECT s, j AS round, count(*) AS configs, count(*) FILTER (WHERE promoted) AS promoted,
       bool_and(promoted = (rk <= n_next)) AS best_promoted, bool_and(iters = r_j) AS iterations_as_scheduled
  FROM ranked GROUP BY s, j ORDER BY s DESC, j;
-- a rung ends with a metrics point: its loss and metric are in the history
SELECT bool_and(rung_iters <@ metrics_iters) AS rung_ends_evaluated,
       bool_and(rung_losses[cardinality(rung_losses)] = validation_loss_final) AS ranked_by_validation_loss,
       bool_and(rung_metrics[cardinality(rung_metrics)] = validation_metrics_final) AS rung_metric,
       bool_and(metrics_iters[cardinality(metrics_iters)] = rung_iters[cardinality(rung_iters)]) AS last_point,
       bool_and(cardinality(metrics_elapsed_time) = cardinality(metrics_iters)) AS elapsed_per_point,
       bool_and(status = 'completed') AS all_completed
  FROM hb_info;
SELECT bool_and(i.model_type = 'madlib_keras') AS model_type, bool_and(i.loss_type = 'categorical_crossentropy') AS loss_type,
       bool_and(i.metrics_type = '{accuracy}') AS metrics_type,
       bool_and(octet_length(m.model_weights) = 4 * (madlib_dl._arch_info(m.model_arch)).n_params) AS weights_size,
       bool_and(i.model_size = octet_length(m.model_weights) / 1024.0) AS model_size,
       bool_and(m.model_arch::text = a.model_arch::text) AS arch_of_model_id
  FROM hb_info i JOIN hb m USING (mst_key) JOIN arch a ON a.model_id = i.model_id;
-- the model selection table holds the best configuration, under its key
SELECT (SELECT mst_key FROM hb_mst) =
       (SELECT mst_key FROM hb_info ORDER BY validation_loss_final, mst_key LIMIT 1) AS best_kept,
       (SELECT count(*) FROM hb_mst) AS rows,
       (SELECT row(model_id, compile_params, fit_params)::text FROM hb_mst) =
       (SELECT row(model_id, compile_params, fit_params)::text FROM hb_info i
         WHERE i.mst_key = (SELECT mst_key FROM hb_mst)) AS same_configuration;
SELECT model_arch_table, object_table FROM hb_mst_summary;
SELECT source_table, validation_table, model, model_info, dependent_varname, independent_varname,
       model_arch_table, model_selection_table, automl_method, automl_params, random_state,
       object_table, use_gpus, metrics_compute_frequency, name, description, madlib_version,
       num_classes, class_text_class_values, dependent_vartype, normalizing_const, use_caching,
       start_training_time <= end_training_time AS times, workers_launched BETWEEN 0 AND 2 AS workers
  FROM hb_summary;
-- the configurations are random search's rows for the same random_state
SELECT madlib_dl.generate_model_configs('arch', 'gm', ARRAY[1, 2], :'cgrid', :'fgrid', 'random', 15, 42);
SELECT count(*) AS same_rows FROM hb_info i JOIN gm g
    ON g.mst_key = i.mst_key AND g.model_id = i.model_id AND g.compile_params = i.compile_params
   AND g.fit_params = i.fit_params;
-- the best can train again with fit_multiple from the selection table
SET client_min_messages = warning;
SELECT madlib_dl.madlib_keras_fit_multiple_model('iris_p2', 'hb_best', 'hb_mst', 1);
RESET client_min_messages;
SELECT (SELECT mst_key FROM hb_best) = (SELECT mst_key FROM hb_mst) AS refit_best;

-- reproducible: the same random_state gives the same configurations,
-- decisions and weights, with two parallel workers or none (the leader
-- runs every segment); another random_state other configurations
SET client_min_messages = warning;
SELECT madlib_dl.madlib_keras_automl('iris_p2', 'hb2', 'arch', 'hb2_mst', ARRAY[2, 1, 2],
    :'cgrid', :'fgrid', 'hyperband', 'R=9, eta=3', 42, NULL, FALSE, 'iris_v2');
SET max_parallel_workers = 0;
SELECT madlib_dl.madlib_keras_automl('iris_p2', 'hb3', 'arch', 'hb3_mst', ARRAY[1, 2],
    :'cgrid', :'fgrid', 'hyperband', 'R=9, eta=3', 42, NULL, FALSE, 'iris_v2');
RESET max_parallel_workers;
SELECT madlib_dl.madlib_keras_automl('iris_p2', 'hb4', 'arch', 'hb4_mst', ARRAY[1, 2],
    :'cgrid', :'fgrid', 'hyperband', 'R=9, eta=3', 43, NULL, FALSE, 'iris_v2');
RESET client_min_messages;
SELECT weights_md5('hb') = weights_md5('hb2') AS same_weights,
       weights_md5('hb') = weights_md5('hb3') AS same_weights_without_workers,
       (SELECT workers_launched FROM hb3_summary) AS workers_hb3,
       (SELECT string_agg(row(mst_key, compile_params, rung_iters, rung_promoted)::text, ';' ORDER BY mst_key) FROM hb_info) =
       (SELECT string_agg(row(mst_key, compile_params, rung_iters, rung_promoted)::text, ';' ORDER BY mst_key) FROM hb3_info)
       AS same_decisions,
       (SELECT count(*) FROM hb_info a JOIN hb4_info b USING (mst_key) WHERE a.compile_params = b.compile_params)
       AS same_configs_other_seed;

-- the same search over the greenplum transport (its step aggregates, run
-- here on PostgreSQL): the same configurations, decisions and weights
CREATE FUNCTION automl_run_md5(transport text, method text, params text, iters integer,
                               cgrid text, fgrid text) RETURNS text
LANGUAGE sql AS $$
    SELECT md5(string_agg(r.mst_key || ':' || md5(r.model_weights) || ':' || r.rung_promoted::text
                          || ':' || r.compile_params, ',' ORDER BY r.mst_key))
      FROM madlib_dl._automl_run(madlib_dl._make_train_job('iris_p2', 'attributes', 'class_text',
               (SELECT array_agg(model_arch::text ORDER BY model_id) FROM arch), ARRAY['', ''], iters,
               validation => 'iris_v2', val_x_col => 'attributes', val_y_col => 'class_text',
               mst_keys => ARRAY[1, 2], num_segments => 2, transport => transport),
           method, params, cgrid, fgrid, 5) r
$$;
SET client_min_messages = warning;
SELECT automl_run_md5('greenplum', 'hyperband', 'R=3, eta=3', 3, :'cgrid', :'fgrid') =
       automl_run_md5('workers', 'hyperband', 'R=3, eta=3', 3, :'cgrid', :'fgrid') AS greenplum_hyperband,
       automl_run_md5('greenplum', 'hyperopt', 'num_configs=3, num_iterations=1', 1, :'cgrid', :'fgrid') =
       automl_run_md5('workers', 'hyperopt', 'num_configs=3, num_iterations=1', 1, :'cgrid', :'fgrid') AS greenplum_tpe;
RESET client_min_messages;

-- ---------------------------------------------------------------------
-- Hyperopt: TPE and random, batches of 2 (the segments)
-- ---------------------------------------------------------------------
SET client_min_messages = warning;
SELECT madlib_dl.madlib_keras_automl('iris_p2', 'tpe', 'arch', 'tpe_mst', ARRAY[1, 2],
    :'cgrid', :'fgrid', 'hyperopt', 'num_configs=6, num_iterations=2', 7, NULL, FALSE, 'iris_v2');
SELECT madlib_dl.madlib_keras_automl('iris_p2', 'rnd', 'arch', 'rnd_mst', ARRAY[1, 2],
    :'cgrid', :'fgrid', 'HyperOpt', 'num_configs=6, num_iterations=2, algorithm=rand', 7, NULL, FALSE, 'iris_v2');
SELECT madlib_dl.madlib_keras_automl('iris_p2', 'tpe2', 'arch', 'tpe2_mst', ARRAY[1, 2],
    :'cgrid', :'fgrid', 'hyperopt', 'num_configs=6, num_iterations=2', 7, NULL, FALSE, 'iris_v2');
RESET client_min_messages;
-- the same columns as Hyperband's but s and i
SELECT (SELECT array_agg(attname ORDER BY attnum) FROM cols('tpe_info')) =
       (SELECT array_agg(attname ORDER BY attnum) FROM cols('hb_info') WHERE attname NOT IN ('s', 'i'))
       AS hyperband_columns_but_s_i;
SELECT automl_method, automl_params, random_state FROM tpe_summary;
SELECT automl_method, automl_params FROM rnd_summary;
SELECT count(*) AS configs, bool_and(rung_iters = '{2}') AS two_iterations_each,
       bool_and(rung = 0) AS one_rung, bool_and(NOT rung_promoted[1]) AS none_promoted,
       bool_and(metrics_iters = '{2}') AS one_point
  FROM tpe_info;
-- rand draws random search's rows; TPE draws its first max(1, 6/4) = 1
-- at random and proposes the others
SELECT madlib_dl.generate_model_configs('arch', 'gm7', ARRAY[1, 2], :'cgrid', :'fgrid', 'random', 6, 7);
SELECT (SELECT count(*) FROM rnd_info r JOIN gm7 g USING (mst_key) WHERE g.compile_params = r.compile_params
           AND g.fit_params = r.fit_params AND g.model_id = r.model_id) AS rand_is_random_search,
       (SELECT array_agg(t.mst_key ORDER BY t.mst_key) FROM tpe_info t JOIN gm7 g USING (mst_key)
         WHERE g.compile_params = t.compile_params AND g.fit_params = t.fit_params) AS tpe_random_ones;
SELECT weights_md5('tpe') = weights_md5('tpe2') AS tpe_reproducible,
       (SELECT string_agg(compile_params, ';' ORDER BY mst_key) FROM tpe_info) =
       (SELECT string_agg(compile_params, ';' ORDER BY mst_key) FROM tpe2_info) AS same_proposals;
-- metrics_compute_frequency: every 2 iterations of a configuration
SET client_min_messages = warning;
SELECT madlib_dl.madlib_keras_automl('iris_p2', 'tpe_f', 'arch', 'tpe_f_mst', ARRAY[1],
    :'cgrid', :'fgrid', 'hyperopt', 'num_configs=2, num_iterations=5, algorithm=rand', 3, NULL, FALSE,
    NULL, 2);
RESET client_min_messages;
SELECT mst_key, metrics_iters, rung_iters, validation_loss IS NULL AS no_validation,
       rung_losses[1] = training_loss_final AS ranked_by_training_loss
  FROM tpe_f_info ORDER BY mst_key;
SELECT metrics_compute_frequency, validation_table FROM tpe_f_summary;

-- ---------------------------------------------------------------------
-- ASHA: 2 workers, rungs at 1, 3 and 9 iterations
-- ---------------------------------------------------------------------
SET client_min_messages = warning;
SELECT madlib_dl.madlib_keras_automl('iris_p2', 'asha', 'arch', 'asha_mst', ARRAY[1, 2],
    :'cgrid', :'fgrid', 'asha', 'R=9, eta=3, num_configs=9', 42, NULL, FALSE, 'iris_v2');
SET max_parallel_workers = 0;
SELECT madlib_dl.madlib_keras_automl('iris_p2', 'asha2', 'arch', 'asha2_mst', ARRAY[1, 2],
    :'cgrid', :'fgrid', 'asha', 'R=9, eta=3, num_configs=9', 42, NULL, FALSE, 'iris_v2');
RESET max_parallel_workers;
RESET client_min_messages;
SELECT (SELECT array_agg(attname ORDER BY attnum) FROM cols('asha_info')) =
       (SELECT array_agg(attname ORDER BY attnum) FROM cols('tpe_info')) AS hyperopt_columns;
SELECT count(*) AS configs, bool_and(rung_iters[1] = 1) AS rung0_at_1,
       bool_and(rung_iters <@ '{1,3,9}') AS rungs_1_3_9,
       bool_and(cardinality(rung_iters) = rung + 1) AS one_record_per_rung
  FROM asha_info;
-- the first 9 configurations are random search's, as Hyperband's
SELECT count(*) AS same_as_hyperband FROM asha_info a JOIN hb_info h USING (mst_key)
 WHERE a.compile_params = h.compile_params;
-- promotions: never more than the top third of a rung; in the end every
-- configuration in a rung's top third went on
WITH r AS (
    SELECT mst_key, k, rung_losses[k + 1] AS loss, rung_promoted[k + 1] AS promoted
      FROM asha_info, generate_series(0, rung) k),
ranked AS (
    SELECT r.*, row_number() OVER (PARTITION BY k ORDER BY loss, mst_key) AS rk,
           count(*) OVER (PARTITION BY k) AS n_k FROM r)
SELECT count(DISTINCT k) AS rungs_reached, bool_and(promoted OR rk > n_k / 3) AS top_third_promoted,
       bool_and(NOT promoted) FILTER (WHERE k = 2) AS top_rung_final,
       (SELECT count(*) FROM asha_info WHERE rung > 0) >= 3 AS a_third_went_on
  FROM ranked;
SELECT weights_md5('asha') = weights_md5('asha2') AS asha_reproducible_without_workers;

-- ---------------------------------------------------------------------
-- Help, and the bad inputs: each with its SQLSTATE and a hint
-- ---------------------------------------------------------------------
SELECT madlib_dl.madlib_keras_automl() LIKE '%madlib_keras_automl%' AS help,
       madlib_dl.madlib_keras_automl('usage') LIKE '%automl_params%' AS usage,
       madlib_dl.hyperband_schedule('usage') LIKE '%skip_last%' AS schedule_usage;

CREATE FUNCTION am_try(stmt text, OUT state text, OUT message text, OUT hint text)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RAISE EXCEPTION 'am_try: the statement ran' USING ERRCODE = 'AM000';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
                            hint = PG_EXCEPTION_HINT;
    IF state = 'AM000' THEN
        state := 'ok';
        message := NULL;
    END IF;
    hint := nullif(hint, '');
END
$$;
CREATE TABLE am_case (id serial PRIMARY KEY, what text, stmt text);
CREATE TABLE taken (x integer);
\set ok_grids '$$' :cgrid '$$, $$' :fgrid '$$'
INSERT INTO am_case (what, stmt) VALUES
('unknown method',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], $$ || :'ok_grids' || $$, 'bayes')$$),
('unknown hyperband param',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], $$ || :'ok_grids' || $$, 'hyperband', 'R=9, num_configs=3')$$),
('R not an integer',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], $$ || :'ok_grids' || $$, 'hyperband', 'R=6.5')$$),
('eta 1',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], $$ || :'ok_grids' || $$, 'hyperband', 'R=6, eta=1')$$),
('R below eta',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], $$ || :'ok_grids' || $$, 'hyperband', 'R=2')$$),
('skip_last too large',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], $$ || :'ok_grids' || $$, 'hyperband', 'R=9, eta=3, skip_last=3')$$),
('params without a comma',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], $$ || :'ok_grids' || $$, 'hyperband', 'R=9 eta=3')$$),
('a parameter twice',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], $$ || :'ok_grids' || $$, 'hyperband', 'R=9, R=6')$$),
('Hyperband too large',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], $$ || :'ok_grids' || $$, 'hyperband', 'R=5000, eta=2')$$),
('hyperopt algorithm atpe',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], $$ || :'ok_grids' || $$, 'hyperopt', 'algorithm=atpe')$$),
('hyperopt num_configs 0',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], $$ || :'ok_grids' || $$, 'hyperopt', 'num_configs=0')$$),
('hyperopt num_configs over the limit',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], $$ || :'ok_grids' || $$, 'hyperopt', 'num_configs=5000')$$),
('asha with skip_last',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], $$ || :'ok_grids' || $$, 'asha', 'skip_last=1')$$),
('NULL method',
 $$SELECT madlib_dl._automl_check(NULL, NULL)$$),
('empty compile grid',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], '', '{}')$$),
('empty dict of compile params',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], '{}', '{}')$$),
('fit grid not a dict',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], $$ || quote_literal(:'cgrid') || $$, '[1, 2]')$$),
('empty list in a grid',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], $$ || quote_literal(:'cgrid') || $$, '{''batch_size'': []}')$$),
('range with low > high',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], '{''loss'': [''categorical_crossentropy''], ''optimizer_params_list'': [{''optimizer'': [''Adam''], ''lr'': [0.1, 0.001, ''log'']}]}', '{}')$$),
('a value the engine refuses',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], '{''loss'': [''categorical_crossentropy'', ''no_such_loss''], ''optimizer'': [''Adam'']}', '{}')$$),
('NULL compile grid',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], NULL, '{}')$$),
('empty model_id_list',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[]::integer[], $$ || :'ok_grids' || $$)$$),
('model_id not in the architecture table',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1, 9], $$ || :'ok_grids' || $$)$$),
('use_gpus',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], $$ || :'ok_grids' || $$, 'hyperband', NULL, NULL, NULL, TRUE)$$),
('metrics_compute_frequency above R',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], $$ || :'ok_grids' || $$, 'hyperband', 'R=6', NULL, NULL, FALSE, NULL, 7)$$),
('missing source table',
 $$SELECT madlib_dl.madlib_keras_automl('no_such_table', 'x_out', 'arch', 'x_mst', ARRAY[1], $$ || :'ok_grids' || $$)$$),
('output table exists',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'taken', 'arch', 'x_mst', ARRAY[1], $$ || :'ok_grids' || $$)$$),
('model selection table exists',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'taken', ARRAY[1], $$ || :'ok_grids' || $$)$$),
('missing object table',
 $$SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], $$ || :'ok_grids' || $$, 'hyperband', NULL, NULL, 'no_such_objects')$$),
('schedule: eta 1',
 $$SELECT madlib_dl.hyperband_schedule('x_sched', 6, 1)$$),
('schedule: R below eta',
 $$SELECT madlib_dl.hyperband_schedule('x_sched', 2, 3)$$),
('schedule: negative skip_last',
 $$SELECT madlib_dl.hyperband_schedule('x_sched', 9, 3, -1)$$),
('schedule: skip_last past the last round',
 $$SELECT madlib_dl.hyperband_schedule('x_sched', 9, 3, 3)$$),
('schedule: NULL r',
 $$SELECT madlib_dl.hyperband_schedule('x_sched', NULL)$$),
('schedule: table exists',
 $$SELECT madlib_dl.hyperband_schedule('taken', 9)$$);
SELECT c.id, c.what, t.state, t.message, t.hint
  FROM am_case c, LATERAL am_try(c.stmt) t ORDER BY c.id;
SELECT count(*) FILTER (WHERE t.state = 'ok') AS ran,
       count(*) FILTER (WHERE t.state = 'XX000') AS internal_errors,
       count(*) FILTER (WHERE t.hint IS NULL) AS without_hint
  FROM am_case c, LATERAL am_try(c.stmt) t;
SELECT count(*) AS tables_left FROM pg_class
 WHERE relnamespace = 'automl'::regnamespace AND relname LIKE 'x\_%';
-- and one as a top-level statement
SELECT madlib_dl.madlib_keras_automl('iris_p2', 'x_out', 'arch', 'x_mst', ARRAY[1], :'cgrid', :'fgrid', 'bayes');

DROP SCHEMA automl CASCADE;
