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
    best_iteration       integer              --   stopped (NULL: it did not) and its best
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
    chk record;
    src_rel regclass;
    val_rel regclass;
    arch_rel regclass;
    psum jsonb;
    vsum jsonb;
    x_cols text[];              -- the packed tables' variables (_fit_vars)
    y_cols text[];
    vx_cols text[];
    vy_cols text[];
    ids integer[];
    archs text[];
    inits bytea[];
    a json;
    aw bytea;
    nt bigint;
    freq integer;
    nseg integer;
    tr record;
    saved_workers text;
    probe_compiles text[];
    t_start timestamp;
    t_end timestamp;
    results madlib_dl._automl_result[];
    loss_types text[];
    metric_types text[];
    params record;
    best record;
    es text;                    -- early_stopping, canonical (NULL: none)
    cv record;                  -- _fit_class_values_columns
BEGIN
    -- 1. arguments that need no table
    IF coalesce(use_gpus, false) THEN
        RAISE EXCEPTION 'use_gpus is not supported: this build of madlib_dl has no GPU backend'
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Call madlib_keras_automl with use_gpus => false; training runs on the CPU cores of all segments.';
    END IF;
    chk := madlib_dl._automl_check(coalesce(automl_method, 'hyperband'), automl_params);
    IF metrics_compute_frequency IS NOT NULL
       AND (metrics_compute_frequency < 1 OR metrics_compute_frequency > chk.max_iterations) THEN
        RAISE EXCEPTION 'metrics_compute_frequency must be between 1 and % (the most iterations a configuration trains), got %',
                        chk.max_iterations, metrics_compute_frequency
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give a frequency in iterations of a configuration, or NULL for metrics at the end of each rung only.';
    END IF;
    freq := metrics_compute_frequency;
    PERFORM madlib_dl._assert_not_null(compile_params_grid, 'compile_params_grid');
    PERFORM madlib_dl._assert_not_null(fit_params_grid, 'fit_params_grid');

    -- 2. tables: inputs exist, outputs absent
    src_rel := madlib_dl._assert_table_exists(source, 'source_table');
    psum := madlib_dl._fit_packed_summary(source, 'source_table');
    SELECT v.x_cols, v.y_cols INTO x_cols, y_cols FROM madlib_dl._fit_vars(psum) v;
    IF validation IS NOT NULL THEN
        val_rel := madlib_dl._assert_table_exists(validation, 'validation_table');
        vsum := madlib_dl._fit_packed_summary(validation, 'validation_table');
        SELECT v.x_cols, v.y_cols INTO vx_cols, vy_cols FROM madlib_dl._fit_vars(vsum) v;
    END IF;
    PERFORM madlib_dl._assert_schema_exists(model);
    PERFORM madlib_dl._assert_output_absent(model, 'model_output_table');
    PERFORM madlib_dl._assert_output_absent(info_tbl, 'model info table');
    PERFORM madlib_dl._assert_output_absent(summary_tbl, 'model summary table');
    PERFORM madlib_dl._assert_schema_exists(mst);
    PERFORM madlib_dl._assert_output_absent(mst, 'model_selection_table');
    PERFORM madlib_dl._assert_output_absent(mst_summ, 'model selection summary table');

    -- 3. the architectures, each checked against the data
    ids := madlib_dl._ms_check_model_ids(arch_tbl, model_id_list);
    arch_rel := madlib_dl._assert_table_exists(arch_tbl, 'model_arch_table');
    PERFORM madlib_dl._assert_columns(arch_rel, ARRAY['model_id', 'model_arch', 'model_weights'],
        ARRAY['integer', 'json', 'bytea'], 'a model architecture table made by load_keras_model');
    FOR i IN 1 .. cardinality(ids) LOOP
        EXECUTE format('SELECT count(*), (array_agg(model_arch))[1], (array_agg(model_weights))[1]'
                       '  FROM %s WHERE model_id = $1', madlib_dl._table_sql(arch_tbl))
           INTO nt, a, aw USING ids[i];
        IF nt <> 1 OR a IS NULL THEN
            RAISE EXCEPTION 'model_id % of model architecture table "%" has % architectures',
                            ids[i], madlib_dl._table_label(arch_tbl), CASE WHEN a IS NULL THEN 0 ELSE nt END
                USING ERRCODE = 'cardinality_violation',
                      HINT = 'Give model ids that name one architecture each (load_keras_model).';
        END IF;
        archs[i] := a::text;
        inits[i] := aw;     -- transfer learning; NULL: random
        IF aw IS NOT NULL THEN
            PERFORM madlib_dl._validate_arch(a, aw);
        END IF;
        PERFORM madlib_dl._fit_check_packed(source, 'source_table', x_cols, y_cols, a);
        IF validation IS NOT NULL THEN
            PERFORM madlib_dl._fit_check_packed(validation, 'validation_table', vx_cols, vy_cols, a);
        END IF;
    END LOOP;

    -- 4. the grids: every value checked now, and the object table against them
    SELECT array_agg(p.compile_params) INTO probe_compiles
      FROM madlib_dl._automl_probe(ids, compile_params_grid, fit_params_grid) p;
    IF object_table IS NOT NULL THEN
        PERFORM madlib_dl._object_table_check(object_table, probe_compiles);
    END IF;
    -- early_stopping: its series must exist for every value of the grids
    FOR i IN 1 .. cardinality(probe_compiles) LOOP
        BEGIN
            es := madlib_dl._check_early_stopping(early_stopping, probe_compiles[i], validation IS NOT NULL);
        EXCEPTION WHEN invalid_parameter_value THEN
            RAISE EXCEPTION 'compile_params %: %', probe_compiles[i], SQLERRM
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Monitor a series every configuration has: the loss, or a metric every compile_params of the grid names.';
        END;
    END LOOP;

    -- 5. train over the transport (no table is written before this returns)
    tr := madlib_dl._job_transport(src_rel);
    nseg := coalesce(tr.num_segments, madlib_dl._fit_num_segments(source, src_rel, psum));
    saved_workers := madlib_dl._leader_only_for_temp(ARRAY[src_rel, val_rel], tr.transport);
    PERFORM madlib_dl._progress_label(model);
    t_start := clock_timestamp();
    results := ARRAY(
        SELECT r FROM madlib_dl._automl_run(
            ROW(src_rel, x_cols, y_cols, val_rel, vx_cols, vy_cols, ids, archs, inits,
                array_fill(''::text, ARRAY[cardinality(ids)]),
                array_fill(NULL::text, ARRAY[cardinality(ids)]), chk.max_iterations,
                freq, nseg, 1::bigint, tr.transport, tr.cluster, use_caching,
                NULL, NULL, es)::madlib_dl._train_job,
            chk.method, chk.params, compile_params_grid, fit_params_grid, random_state) r
        ORDER BY r.mst_key);
    t_end := clock_timestamp();
    PERFORM madlib_dl._leader_only_end(saved_workers);

    -- 6. output tables, in this transaction
    FOR i IN 1 .. cardinality(results) LOOP
        params := madlib_dl._check_params(results[i].compile_params, results[i].fit_params);
        loss_types[i] := params.loss_type;
        metric_types[i] := params.metrics_type[1];
    END LOOP;
    EXECUTE format('CREATE TABLE %s (mst_key integer PRIMARY KEY, model_weights bytea, model_arch json)%s',
                   madlib_dl._table_sql(model), madlib_dl._distributed_clause('mst_key'));
    EXECUTE format('INSERT INTO %s SELECT r.mst_key, r.model_weights, a.arch::json'
                   '  FROM unnest($1) r JOIN unnest($2, $3) AS a(id, arch) ON a.id = r.model_id'
                   ' ORDER BY r.mst_key', madlib_dl._table_sql(model))
       USING results, ids, archs;
    EXECUTE format(
        'CREATE TABLE %s ('
        '  mst_key integer PRIMARY KEY, model_id integer, compile_params text, fit_params text,'
        '  model_type text, model_size double precision, metrics_elapsed_time double precision[],'
        '  metrics_type text[], loss_type text,'
        '  training_metrics_final double precision, training_loss_final double precision,'
        '  training_metrics double precision[], training_loss double precision[],'
        '  validation_metrics_final double precision, validation_loss_final double precision,'
        '  validation_metrics double precision[], validation_loss double precision[],'
        '  metrics_iters integer[],%s rung integer, rung_iters integer[],'
        '  rung_losses double precision[], rung_metrics double precision[], rung_promoted boolean[],'
        '  status text, training_seconds double precision, waiting_seconds double precision,'
        '  stopped_at_iteration integer, best_iteration integer)%s',
        madlib_dl._table_sql(info_tbl), CASE WHEN chk.method = 'hyperband' THEN ' s integer, i integer,' ELSE '' END,
        madlib_dl._distributed_clause('mst_key'));
    EXECUTE format(
        'INSERT INTO %s'
        ' SELECT r.mst_key, r.model_id, r.compile_params, r.fit_params, ''madlib_keras'','
        '        octet_length(r.model_weights) / 1024.0, r.metrics_elapsed_time,'
        '        CASE WHEN k.m IS NULL THEN NULL ELSE ARRAY[k.m] END, k.l,'
        '        r.training_metrics[array_upper(r.training_metrics, 1)],'
        '        r.training_loss[array_upper(r.training_loss, 1)],'
        '        r.training_metrics, r.training_loss,'
        '        r.validation_metrics[array_upper(r.validation_metrics, 1)],'
        '        r.validation_loss[array_upper(r.validation_loss, 1)],'
        '        r.validation_metrics, r.validation_loss, r.metrics_iters,%s r.rung, r.rung_iters,'
        '        r.rung_losses, r.rung_metrics, r.rung_promoted, r.status, r.training_seconds,'
        '        r.waiting_seconds, r.stopped_at_iteration, r.best_iteration'
        '   FROM unnest($1) WITH ORDINALITY AS r'
        '   JOIN unnest($2, $3) WITH ORDINALITY AS k(l, m, o) ON k.o = r.ordinality'
        '  ORDER BY r.mst_key', madlib_dl._table_sql(info_tbl),
        CASE WHEN chk.method = 'hyperband' THEN ' r.bracket, r.rung,' ELSE '' END)
       USING results, loss_types, metric_types;

    cv := madlib_dl._fit_class_values_columns(source, y_cols);
    EXECUTE format(
        'CREATE TABLE %s ('
        '  source_table text, validation_table text, model text, model_info text,'
        '  dependent_varname text[], independent_varname text[], model_arch_table text,'
        '  model_selection_table text, automl_method text, automl_params text, random_state text,'
        '  object_table text, use_gpus boolean, metrics_compute_frequency integer, name text,'
        '  description text, start_training_time timestamp, end_training_time timestamp,'
        '  madlib_version text, num_classes integer[]%s, dependent_vartype text[],'
        '  normalizing_const real, use_caching boolean, workers_launched integer)%s',
        madlib_dl._table_sql(summary_tbl), cv.defs, madlib_dl._distributed_clause());
    EXECUTE format(
        'INSERT INTO %s SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,'
        ' $16, $17, $18, $19, $20%s, $21, $22, $23, $24',
        madlib_dl._table_sql(summary_tbl), cv.exprs)
    USING
        madlib_dl._table_given(source),
        madlib_dl._table_given(validation),
        madlib_dl._table_given(model),
        madlib_dl._table_given(info_tbl),
        y_cols,
        x_cols,
        arch_raw,
        madlib_dl._table_given(mst),
        chk.method,
        chk.params,
        random_state::text,
        madlib_dl._table_given(object_table),
        coalesce(use_gpus, false),
        metrics_compute_frequency,
        name,
        description,
        t_start,
        t_end,
        madlib_dl.version(),
        madlib_dl._summary_int_list(psum->'num_classes'),
        madlib_dl._summary_text_list(psum->'dependent_vartype'),
        coalesce((psum->>'normalizing_const')::real, 1.0::real),
        use_caching,
        (results[1]).workers_launched;

    -- the model selection table: the best configuration by its final loss
    -- (validation, else training), under its own mst_key, as MADlib leaves it
    SELECT r.mst_key, r.model_id, r.compile_params, r.fit_params INTO best
      FROM unnest(results) r
     ORDER BY CASE WHEN validation IS NULL THEN r.training_loss[array_upper(r.training_loss, 1)]
                   ELSE r.validation_loss[array_upper(r.validation_loss, 1)] END NULLS LAST,
              r.mst_key
     LIMIT 1;
    PERFORM madlib_dl._ms_store(mst, arch_tbl, arch_raw, ARRAY[best.model_id],
                                ARRAY[best.compile_params], ARRAY[best.fit_params], object_table);
    EXECUTE format('UPDATE %s SET mst_key = $1', madlib_dl._table_sql(mst)) USING best.mst_key;
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

-- Help text, as MADlib's fn() and fn('usage').
CREATE FUNCTION madlib_dl.madlib_keras_automl(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $body$
SELECT CASE WHEN lower(coalesce(message, '')) IN ('usage', 'help', '?') THEN
$usage$madlib_keras_automl: search for the best model configuration with
Hyperband, Hyperopt (TPE or random) or ASHA, training the configurations
by model hopping over all virtual segments.

    SELECT madlib_dl.madlib_keras_automl(
        source_table              VARCHAR,  -- table made by training_preprocessor_dl
        model_output_table        VARCHAR,  -- output; <out>_info and <out>_summary too
        model_arch_table          VARCHAR,  -- table made by load_keras_model
        model_selection_table     VARCHAR,  -- output: the best configuration
        model_id_list             INTEGER[],-- model ids of model_arch_table to try
        compile_params_grid       VARCHAR,  -- dict of lists, as generate_model_configs
        fit_params_grid           VARCHAR,  -- dict of lists; [low, high, 'linear' |
                                            --   'log' | 'log_near_one'] is a range
        automl_method             VARCHAR,  -- 'hyperband' (default), 'hyperopt', 'asha'
        automl_params             VARCHAR,  -- hyperband: 'R=6, eta=3, skip_last=0'
                                            -- hyperopt:  'num_configs=20, num_iterations=5,
                                            --             algorithm=tpe' (or rand)
                                            -- asha:      'R=6, eta=3, num_configs=20'
        random_state              INTEGER,  -- DEFAULT NULL: from the clock
        object_table              VARCHAR,  -- DEFAULT NULL; custom top_k metrics
        use_gpus                  BOOLEAN,  -- DEFAULT false (true is an error: no GPU backend)
        validation_table          VARCHAR,  -- DEFAULT NULL; ranks by validation loss
        metrics_compute_frequency INTEGER,  -- DEFAULT NULL: at the end of each rung only
        name                      VARCHAR,  -- DEFAULT NULL, stored in the summary
        description               VARCHAR,  -- DEFAULT NULL, stored in the summary
        use_caching               BOOLEAN,  -- DEFAULT NULL: cache partitions that fit madlib_dl.partition_memory, stream the rest; true: cache (54000 when one does not fit); false: stream
        early_stopping            VARCHAR   -- DEFAULT NULL; Keras' EarlyStopping for every configuration, e.g. 'monitor=validation_loss, patience=2, restore_best=True': a configuration that stops ends its rung there and is not trained again
    );

Configurations are ranked by their loss (validation loss with a
validation table, else training loss).  A configuration that goes on to
the next rung continues from its weights and optimizer state.  The same
random_state gives the same configurations, decisions and weights.

Output: <out> (mst_key, model_weights, model_arch), <out>_info (one row
per configuration: parameters, metric history and its rungs: rung_iters,
rung_losses, rung_metrics, rung_promoted; Hyperband adds s and i),
<out>_summary (one row) and model_selection_table (the best
configuration).  docs/automl.md describes them.$usage$
ELSE
$summary$madlib_keras_automl: Hyperband, Hyperopt (TPE) or ASHA over model
configurations, trained by model hopping.

    SELECT madlib_dl.madlib_keras_automl('iris_train_packed', 'automl_out', 'model_arch_library',
        'automl_mst', ARRAY[1, 2],
        $$ {'loss': ['categorical_crossentropy'], 'metrics': ['accuracy'],
            'optimizer_params_list': [{'optimizer': ['Adam'], 'lr': [0.001, 0.1, 'log']}]} $$,
        $$ {'batch_size': [8, 16], 'epochs': [1]} $$,
        'hyperband', 'R=9, eta=3', 42, NULL, FALSE, 'iris_test_packed');

For all parameters: SELECT madlib_dl.madlib_keras_automl('usage');$summary$
END
$body$;

CREATE FUNCTION madlib_dl.madlib_keras_automl()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.madlib_keras_automl(''::varchar) $$;

CREATE FUNCTION madlib_dl.hyperband_schedule(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $body$
SELECT CASE WHEN lower(coalesce(message, '')) IN ('usage', 'help', '?') THEN
$usage$hyperband_schedule: the brackets and rounds Hyperband runs for R, eta
and skip_last, as a table.

    SELECT madlib_dl.hyperband_schedule(
        schedule_table  VARCHAR,  -- output table (must not exist)
        r               INTEGER,  -- most iterations of one configuration
        eta             INTEGER,  -- DEFAULT 3: keep the best 1/eta each round
        skip_last       INTEGER   -- DEFAULT 0: rounds left out of each bracket
    );

Columns: s (bracket), i (round), n_i (configurations), r_i (iterations
each, in all), UNIQUE (s, i).$usage$
ELSE
$summary$hyperband_schedule: Hyperband's brackets and rounds.

    SELECT madlib_dl.hyperband_schedule('hb_schedule', 9, 3, 0);

For all parameters: SELECT madlib_dl.hyperband_schedule('usage');$summary$
END
$body$;

CREATE FUNCTION madlib_dl.hyperband_schedule()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.hyperband_schedule(''::varchar) $$;
