-- automl.sql: madlib_keras_automl and hyperband_schedule, as in MADlib
-- (madlib_keras_automl.sql_in): Hyperband, Hyperopt (TPE or random) and
-- ASHA over the model hopper of fit_multiple, on PostgreSQL and through
-- the same transports on Greenplum and PL/Proxy.  The searches are the
-- engine's (src/engine/automl.c, tpe.c), the run is src/pg/api/automl.c.
-- docs/automl.md is the user page.

-- ---------------------------------------------------------------------
-- C functions
-- ---------------------------------------------------------------------

-- The method as MADlib spells it, the params in force (as given, or the
-- method's defaults) and the most iterations one configuration trains.
-- ERROR naming a bad method or parameter.
CREATE FUNCTION madlib_dl._automl_check(automl_method text, automl_params text,
    OUT method text, OUT params text, OUT max_iterations integer)
AS 'MODULE_PATHNAME', 'madlib_dl__automl_check'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- Configurations of the grids that together use every value (and both
-- bounds of every range), each checked by the engine.
CREATE FUNCTION madlib_dl._automl_probe(model_id_list integer[], compile_params_grid text,
                                        fit_params_grid text)
RETURNS TABLE (model_id integer, compile_params text, fit_params text)
AS 'MODULE_PATHNAME', 'madlib_dl__automl_probe'
LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20;

-- Hyperband's brackets and rounds (MADlib's hyperband_schedule).
CREATE FUNCTION madlib_dl._hyperband_schedule_rows(r integer, eta integer, skip_last integer)
RETURNS TABLE (s integer, i integer, n_i integer, r_i integer)
AS 'MODULE_PATHNAME', 'madlib_dl__hyperband_schedule_rows'
LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 10;

CREATE TYPE madlib_dl._automl_result AS (
    mst_key              integer,
    model_id             integer,
    compile_params       text,
    fit_params           text,
    model_weights        bytea,
    status               text,
    training_loss        double precision[],
    training_metrics     double precision[],
    validation_loss      double precision[],
    validation_metrics   double precision[],
    metrics_iters        integer[],
    metrics_elapsed_time double precision[],
    bracket              integer,             -- Hyperband's s, else NULL
    rung                 integer,             -- the last rung (Hyperband: round) it trained
    rung_iters           integer[],           -- at the end of each rung it finished:
    rung_losses          double precision[],  --   its iterations, the loss it was ranked by,
    rung_metrics         double precision[],  --   its metric,
    rung_promoted        boolean[],           --   whether it went on
    training_seconds     double precision,
    waiting_seconds      double precision,
    workers_launched     integer,
    stopped_at_iteration integer,             -- early stopping (NULL without): where it
    best_iteration       integer,             --   stopped (NULL: it did not) and its best
    metrics              jsonb                -- every metric's series (_fit_result's)
);

-- The whole search, in one call (src/pg/api/automl.c): the job names the
-- data, the transport and the architectures (mst_keys: the model ids).
-- One row per configuration tried.  Writes nothing; the driver writes the
-- tables.  PARALLEL UNSAFE: it starts its own parallel workers.
CREATE FUNCTION madlib_dl._automl_run(job madlib_dl._train_job, automl_method text,
    automl_params text, compile_params_grid text, fit_params_grid text, random_state integer)
RETURNS SETOF madlib_dl._automl_result
AS 'MODULE_PATHNAME', 'madlib_dl__automl_run'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 20;

-- ---------------------------------------------------------------------
-- Drivers (internal; search_path pinned; tables come as {schema, table})
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl._hyperband_schedule(sched text[], r integer, eta integer,
                                              skip_last integer)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM madlib_dl._assert_not_null(r, 'r');
    PERFORM madlib_dl._assert_not_null(eta, 'eta');
    PERFORM madlib_dl._assert_not_null(skip_last, 'skip_last');
    PERFORM count(*) FROM madlib_dl._hyperband_schedule_rows(r, eta, skip_last);
    PERFORM madlib_dl._assert_schema_exists(sched);
    PERFORM madlib_dl._assert_output_absent(sched, 'schedule_table');
    EXECUTE format('CREATE TABLE %s (s integer, i integer, n_i integer, r_i integer, UNIQUE (s, i))%s',
                   madlib_dl._table_sql(sched), madlib_dl._distributed_clause('s, i'));
    EXECUTE format('INSERT INTO %s SELECT * FROM madlib_dl._hyperband_schedule_rows($1, $2, $3)',
                   madlib_dl._table_sql(sched))
       USING r, eta, skip_last;
END
$$;

-- automl's grids, every value checked now (_automl_probe), the object
-- table (NULL: none) against them, and early_stopping against every
-- compile_params of them: its series must exist for each.  Returns
-- early_stopping, canonical (NULL: none).
CREATE FUNCTION madlib_dl._automl_check_grids(ids integer[], compile_params_grid text, fit_params_grid text,
    object_table text[], early_stopping text, has_validation boolean)
RETURNS text
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    probe_compiles text[];
    es text;
BEGIN
    SELECT array_agg(p.compile_params) INTO probe_compiles
      FROM madlib_dl._automl_probe(ids, compile_params_grid, fit_params_grid) p;
    IF object_table IS NOT NULL THEN
        PERFORM madlib_dl._object_table_check(object_table, probe_compiles);
    END IF;
    -- early_stopping: its series must exist for every value of the grids
    FOR i IN 1 .. cardinality(probe_compiles) LOOP
        es := madlib_dl._check_early_stopping_of(early_stopping, probe_compiles[i], has_validation,
            'compile_params ' || coalesce(probe_compiles[i], '<NULL>'),
            'Monitor a series every configuration has: the loss, or a metric every compile_params of the grid names.');
    END LOOP;

    RETURN es;
END
$$;

-- automl's model selection table mst: the best configuration of results
-- by its final loss (validation when by_validation, else training), under
-- its own mst_key, as MADlib leaves it.
CREATE FUNCTION madlib_dl._automl_store_best(mst text[], arch_tbl text[], arch_raw text, object_table text[],
    results madlib_dl._automl_result[], by_validation boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    best record;
BEGIN
    SELECT r.mst_key, r.model_id, r.compile_params, r.fit_params INTO best
      FROM unnest(results) r
     ORDER BY CASE WHEN NOT by_validation THEN r.training_loss[array_upper(r.training_loss, 1)]
                   ELSE r.validation_loss[array_upper(r.validation_loss, 1)] END NULLS LAST,
              r.mst_key
     LIMIT 1;
    PERFORM madlib_dl._ms_store(mst, arch_tbl, arch_raw, ARRAY[best.model_id],
                                ARRAY[best.compile_params], ARRAY[best.fit_params], object_table);
    EXECUTE format('UPDATE %s SET mst_key = $1', madlib_dl._table_sql(mst)) USING best.mst_key;
END
$$;

-- The columns of automl's summary table.
CREATE FUNCTION madlib_dl._automl_summary_defs()
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'source_table text, validation_table text, model text,'
        ' model_info text, dependent_varname text[], independent_varname text[], model_arch_table text,'
        ' model_selection_table text, automl_method text, automl_params text, random_state text,'
        ' object_table text, use_gpus boolean, metrics_compute_frequency integer, name text,'
        ' description text, start_training_time timestamp, end_training_time timestamp,'
        ' madlib_version text, num_classes integer[]{class_values}, dependent_vartype text[],'
        ' normalizing_const real, use_caching boolean, workers_launched integer'
$$;

-- automl's info table: one row per configuration of results (Hyperband's
-- bracket and round as s and i for method hyperband).
CREATE FUNCTION madlib_dl._automl_write_info(info_tbl text[], method text, results madlib_dl._automl_result[])
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM madlib_dl._fit_write_rows(info_tbl, madlib_dl._fit_info_defs(
            CASE WHEN method = 'hyperband' THEN ', s integer, i integer' ELSE '' END
            || ', rung integer, rung_iters integer[], rung_losses double precision[],'
               ' rung_metrics double precision[], rung_promoted boolean[]', ''),
        madlib_dl._distributed_clause('mst_key'),
        (SELECT jsonb_agg(madlib_dl._fit_series(to_jsonb(r) - 'model_weights', octet_length(r.model_weights))
                          || jsonb_build_object('s', r.bracket, 'i', r.rung, 'loss_type', p.loss_type,
                                                'metrics_type', CASE WHEN p.metrics_type[1] IS NOT NULL
                                                                     THEN p.metrics_type[1:1] END)
                          ORDER BY r.mst_key)
           FROM unnest(results) r, LATERAL madlib_dl._check_params(r.compile_params, r.fit_params) p));
END
$$;

-- ERROR unless automl's metrics_compute_frequency (NULL: at the end of
-- each rung) is 1 to max_iterations, the most a configuration trains.
CREATE FUNCTION madlib_dl._automl_check_frequency(metrics_compute_frequency integer, max_iterations integer)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF metrics_compute_frequency IS NOT NULL
       AND (metrics_compute_frequency < 1 OR metrics_compute_frequency > max_iterations) THEN
        RAISE EXCEPTION 'metrics_compute_frequency must be between 1 and % (the most iterations a configuration trains), got %',
                        max_iterations, metrics_compute_frequency
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give a frequency in iterations of a configuration, or NULL for metrics at the end of each rung only.';
    END IF;
END
$$;

CREATE FUNCTION madlib_dl._automl(source text[], model text[], arch_tbl text[], arch_raw text,
    mst text[], model_id_list integer[], compile_params_grid text, fit_params_grid text,
    automl_method text, automl_params text, random_state integer, object_table text[],
    use_gpus boolean, validation text[], metrics_compute_frequency integer, name text,
    description text, use_caching boolean, early_stopping text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    info_tbl text[] := madlib_dl._table_with_suffix(model, '_info');
    summary_tbl text[] := ARRAY[model[1], model[2] || '_summary'];
    mst_summ text[] := ARRAY[mst[1], mst[2] || '_summary'];
    chk record;                 -- _automl_check: the method and its params
    inp record;                 -- _fit_inputs: the packed tables and their variables
    ids integer[];
    ar record;                  -- _fit_archs: the architectures and their weights
    freq integer;
    tr record;                  -- _fit_job_transport: how the job runs
    saved_workers text;         -- _leader_only_for_temp
    t_start timestamp;
    t_end timestamp;
    results madlib_dl._automl_result[];
    es text;                    -- early_stopping, canonical (NULL: none)
BEGIN
    -- 1. arguments that need no table
    PERFORM madlib_dl._fit_check_no_gpus(use_gpus, 'madlib_keras_automl');
    chk := madlib_dl._automl_check(coalesce(automl_method, 'hyperband'), automl_params);
    PERFORM madlib_dl._automl_check_frequency(metrics_compute_frequency, chk.max_iterations);
    freq := metrics_compute_frequency;
    PERFORM madlib_dl._assert_not_null(compile_params_grid, 'compile_params_grid');
    PERFORM madlib_dl._assert_not_null(fit_params_grid, 'fit_params_grid');

    -- 2. tables: inputs exist, outputs absent
    inp := madlib_dl._fit_inputs(source, validation);
    PERFORM madlib_dl._fit_assert_outputs_absent(model, info_tbl, summary_tbl);
    PERFORM madlib_dl._assert_schema_exists(mst);
    PERFORM madlib_dl._assert_output_absent(mst, 'model_selection_table');
    PERFORM madlib_dl._assert_output_absent(mst_summ, 'model selection summary table');

    -- 3. the architectures, each checked against the data
    ids := madlib_dl._ms_check_model_ids(arch_tbl, model_id_list);
    ar := madlib_dl._fit_archs(arch_tbl, ids, array_fill(NULL::text, ARRAY[cardinality(ids)]));
    PERFORM madlib_dl._fit_check_inits(ar.archs, ar.inits);
    PERFORM madlib_dl._fit_check_data(source, validation, inp.x_cols, inp.y_cols, inp.vx_cols, inp.vy_cols,
                                      ar.archs);

    -- 4. the grids: every value checked now, and the object table against them
    es := madlib_dl._automl_check_grids(ids, compile_params_grid, fit_params_grid, object_table,
                                        early_stopping, validation IS NOT NULL);

    -- 5. train over the transport (no table is written before this returns)
    tr := madlib_dl._fit_job_transport(source, inp.src_rel, inp.psum);
    saved_workers := madlib_dl._leader_only_for_temp(ARRAY[inp.src_rel, inp.val_rel], tr.transport);
    PERFORM madlib_dl._progress_label(model);
    t_start := clock_timestamp();
    results := ARRAY(SELECT r FROM madlib_dl._automl_run(madlib_dl._make_train_job(inp.src_rel, NULL, NULL,
            ar.archs, array_fill(''::text, ARRAY[cardinality(ids)]), chk.max_iterations,
            init_weights => ar.inits, mst_keys => ids, validation => inp.val_rel,
            metrics_compute_frequency => freq, num_segments => tr.num_segments, transport => tr.transport,
            cluster => tr.cluster, use_caching => use_caching, x_cols => inp.x_cols, y_cols => inp.y_cols,
            val_x_cols => inp.vx_cols, val_y_cols => inp.vy_cols, early_stopping => es),
        chk.method, chk.params, compile_params_grid, fit_params_grid, random_state) r
        ORDER BY r.mst_key);
    t_end := clock_timestamp();
    PERFORM madlib_dl._leader_only_end(saved_workers);

    -- 6. output tables, in this transaction
    PERFORM madlib_dl._fit_write_models(model, ARRAY(SELECT r.mst_key FROM unnest(results) r),
        ARRAY(SELECT r.model_weights FROM unnest(results) r),
        ARRAY(SELECT ar.archs[array_position(ids, r.model_id)] FROM unnest(results) r));
    PERFORM madlib_dl._automl_write_info(info_tbl, chk.method, results);
    PERFORM madlib_dl._fit_write_summary(summary_tbl, madlib_dl._automl_summary_defs(),
        source, inp.psum, false,
        jsonb_build_object('source_table', madlib_dl._table_given(source),
            'validation_table', madlib_dl._table_given(validation), 'model', madlib_dl._table_given(model),
            'model_info', madlib_dl._table_given(info_tbl), 'model_arch_table', arch_raw,
            'model_selection_table', madlib_dl._table_given(mst), 'automl_method', chk.method,
            'automl_params', chk.params, 'random_state', random_state::text,
            'object_table', madlib_dl._table_given(object_table), 'use_gpus', coalesce(use_gpus, false),
            'metrics_compute_frequency', metrics_compute_frequency, 'name', name, 'description', description,
            'start_training_time', t_start, 'end_training_time', t_end, 'use_caching', use_caching,
            'workers_launched', (results[1]).workers_launched));

    -- the model selection table: the best configuration
    PERFORM madlib_dl._automl_store_best(mst, arch_tbl, arch_raw, object_table, results, validation IS NOT NULL);
    -- a version per model in the registry (src/sql/serving.sql)
    PERFORM madlib_dl._record_versions(model, 'automl');
END
$$;

-- ---------------------------------------------------------------------
-- Public API (MADlib signatures).  Thin wrappers: they resolve the table
-- names in the caller's search_path, then call the pinned drivers.
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl.madlib_keras_automl(source_table varchar, model_output_table varchar,
    model_arch_table varchar, model_selection_table varchar, model_id_list integer[],
    compile_params_grid varchar, fit_params_grid varchar,
    automl_method varchar DEFAULT 'hyperband', automl_params varchar DEFAULT NULL,
    random_state integer DEFAULT NULL, object_table varchar DEFAULT NULL,
    use_gpus boolean DEFAULT false, validation_table varchar DEFAULT NULL,
    metrics_compute_frequency integer DEFAULT NULL, name varchar DEFAULT NULL,
    description varchar DEFAULT NULL, use_caching boolean DEFAULT NULL,
    early_stopping varchar DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
AS $$
    SELECT madlib_dl._automl(
        madlib_dl._resolve_table($1, 'source_table'),
        madlib_dl._resolve_table($2, 'model_output_table'),
        madlib_dl._resolve_table($3, 'model_arch_table'), $3,
        madlib_dl._resolve_table($4, 'model_selection_table'),
        $5, $6, $7, $8, $9, $10,
        CASE WHEN $11 IS NULL THEN NULL ELSE madlib_dl._resolve_table($11, 'object_table') END,
        $12,
        CASE WHEN $13 IS NULL THEN NULL ELSE madlib_dl._resolve_table($13, 'validation_table') END,
        $14, $15, $16, $17, $18)
$$;

CREATE FUNCTION madlib_dl.hyperband_schedule(schedule_table varchar, r integer,
    eta integer DEFAULT 3, skip_last integer DEFAULT 0)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._hyperband_schedule(madlib_dl._resolve_table($1, 'schedule_table'), $2, $3, $4)
$$;
