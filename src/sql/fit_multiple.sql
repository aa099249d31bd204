-- fit_multiple.sql: madlib_keras_fit_multiple_model / fit_multiple, as
-- in MADlib (madlib_keras_fit_multiple_model.sql_in), trained by model
-- hopper parallelism over the virtual segments (src/pg/api/fit_multiple.c,
-- src/pg/transport/workers.c).  docs/fit-multiple.md is the user page.

-- ---------------------------------------------------------------------
-- C function
-- ---------------------------------------------------------------------

CREATE TYPE madlib_dl._fit_multiple_result AS (
    mst_key              integer,
    model_weights        bytea,
    status               text,
    training_loss        double precision[],
    training_metrics     double precision[],
    validation_loss      double precision[],
    validation_metrics   double precision[],
    metrics_iters        integer[],
    metrics_elapsed_time double precision[],
    schedule             integer[],
    workers_launched     integer,
    training_seconds     double precision,    -- the model's own steps, on whichever segment
    waiting_seconds      double precision,    -- the rest of its run, waiting for a free segment
    -- a model of several outputs: each output's series, one row per
    -- metrics point, one column per output (NULL for one output)
    output_training_loss      double precision[],
    output_training_metrics   double precision[],
    output_validation_loss    double precision[],
    output_validation_metrics double precision[],
    -- early stopping (NULL without): the iteration the model stopped at
    -- (NULL when it ran every iteration) and its best monitored iteration
    stopped_at_iteration integer,
    best_iteration       integer,
    -- every metric of compile_params, per metrics point:
    -- {"training": {"<metric>": [...], ...}, "validation": {...}}
    metrics              jsonb
);

-- The whole model selection run, in one call: the models hop between the
-- segments of the job's transport (src/pg/api/fit_multiple.c, with the
-- hopper of src/engine/hopper.c).  One row per model, in the order of the
-- job's mst_keys.  Writes nothing; the driver writes the tables.
-- PARALLEL UNSAFE: it starts its own parallel workers.
CREATE FUNCTION madlib_dl._fit_multiple_run(job madlib_dl._train_job)
RETURNS SETOF madlib_dl._fit_multiple_result
AS 'MODULE_PATHNAME', 'madlib_dl__fit_multiple_run'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 10;

-- ---------------------------------------------------------------------
-- The driver (internal; search_path pinned)
-- ---------------------------------------------------------------------

-- The configurations of a model selection table mst (made by
-- load_model_selection_table or generate_model_configs), each checked:
-- keys, their model ids, compile_params and fit_params (in mst_key
-- order), loss_types and metric_types (_check_params), the model
-- architecture table its summary names (arch_tbl; arch_raw as recorded)
-- and the object table (object_raw as recorded), checked against the
-- configurations; es: early_stopping, checked against every one.
CREATE FUNCTION madlib_dl._fit_multiple_configs(mst text[], early_stopping text, has_validation boolean,
    OUT keys integer[], OUT ids integer[], OUT compiles text[], OUT fits text[],
    OUT loss_types text[], OUT metric_types text[], OUT arch_tbl text[], OUT arch_raw text,
    OUT object_raw text, OUT es text)
RETURNS record
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    mst_summ text[] := ARRAY[mst[1], mst[2] || '_summary'];
    what constant text := madlib_dl._ms_table_what();
    mst_rel regclass;
    msum_rel regclass;
    arch_rel regclass;
    arch_qualified text;
    object_qualified text;
    object_tbl text[];
    params record;
    nt bigint;
    i integer;
BEGIN
    -- 3. the model selection table and its summary
    mst_rel := madlib_dl._ms_assert_table(mst, false);
    msum_rel := madlib_dl._table_oid(mst_summ);
    IF msum_rel IS NULL THEN
        RAISE EXCEPTION 'model_selection_table "%" has no summary table "%"',
                        madlib_dl._table_label(mst), madlib_dl._table_label(mst_summ)
            USING ERRCODE = 'undefined_table',
                  HINT = format('Give %s; its summary names the model architecture table.', what);
    END IF;
    PERFORM madlib_dl._assert_columns(msum_rel, ARRAY['model_arch_table'], ARRAY['character varying'],
        'the summary table of ' || what);
    EXECUTE format('SELECT count(*), min(model_arch_table) FROM %s', madlib_dl._table_sql(mst_summ))
       INTO nt, arch_raw;
    IF nt <> 1 OR arch_raw IS NULL THEN
        RAISE EXCEPTION 'summary table "%" must hold one row naming the model_arch_table, it has % rows',
                        madlib_dl._table_label(mst_summ), nt
            USING ERRCODE = 'cardinality_violation',
                  HINT = format('Give %s.', what);
    END IF;
    -- object_table, as load_model_selection_table recorded it (copied to
    -- the summary): checked after the configurations, below
    IF madlib_dl._ep_has_column(msum_rel, 'object_table') THEN
        EXECUTE format('SELECT min(object_table::text), min(%s) FROM %s',
                       CASE WHEN madlib_dl._ep_has_column(msum_rel, 'object_table_qualified')
                            THEN 'object_table_qualified::text' ELSE 'NULL::text' END,
                       madlib_dl._table_sql(mst_summ))
           INTO object_raw, object_qualified;
    END IF;
    -- the architecture table as resolved when the summary was written
    -- (model_arch_table holds the name as the user gave it), else the
    -- recorded name in the selection table's schema, never the search_path
    IF madlib_dl._ep_has_column(msum_rel, 'model_arch_table_qualified') THEN
        EXECUTE format('SELECT min(model_arch_table_qualified::text) FROM %s', madlib_dl._table_sql(mst_summ))
           INTO arch_qualified;
    END IF;
    arch_tbl := parse_ident(coalesce(arch_qualified, arch_raw));
    IF cardinality(arch_tbl) = 1 THEN
        arch_tbl := ARRAY[mst[1], arch_tbl[1]];
    ELSIF cardinality(arch_tbl) <> 2 THEN
        RAISE EXCEPTION 'model_arch_table "%" in "%" is not a table name', arch_raw,
                        madlib_dl._table_label(mst_summ)
            USING ERRCODE = 'invalid_name',
                  HINT = 'Give schema.table or table.';
    END IF;
    arch_rel := madlib_dl._assert_table_exists(arch_tbl, 'model_arch_table');
    PERFORM madlib_dl._assert_columns(arch_rel, ARRAY['model_id', 'model_arch', 'model_weights'],
        ARRAY['integer', 'json', 'bytea'], 'a model architecture table made by load_keras_model');

    -- 4. every configuration: keys, architecture, parameter strings, shapes
    EXECUTE format('SELECT array_agg(mst_key ORDER BY mst_key), array_agg(model_id ORDER BY mst_key),'
                   '       array_agg(compile_params::text ORDER BY mst_key),'
                   '       array_agg(fit_params::text ORDER BY mst_key), count(*),'
                   '       count(DISTINCT mst_key)'
                   '  FROM %s', madlib_dl._table_sql(mst))
       INTO keys, ids, compiles, fits, nt, i;
    IF nt = 0 THEN
        RAISE EXCEPTION 'model_selection_table "%" is empty', madlib_dl._table_label(mst)
            USING ERRCODE = 'no_data_found',
                  HINT = 'Add configurations with load_model_selection_table or generate_model_configs.';
    END IF;
    IF array_position(keys, NULL) IS NOT NULL OR i <> nt THEN
        RAISE EXCEPTION 'model_selection_table "%" has NULL or repeated mst_key values',
                        madlib_dl._table_label(mst)
            USING ERRCODE = 'unique_violation',
                  HINT = 'Give each configuration its own mst_key (mst_key serial PRIMARY KEY).';
    END IF;
    IF nt > madlib_dl._job_limit('models') THEN
        RAISE EXCEPTION 'model_selection_table "%" has % configurations, more than %',
                        madlib_dl._table_label(mst), nt, madlib_dl._job_limit('models')
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = format('Train the configurations in several calls of at most %s.',
                                madlib_dl._job_limit('models'));
    END IF;
    FOR i IN 1 .. cardinality(keys) LOOP
        IF ids[i] IS NULL THEN
            RAISE EXCEPTION 'mst_key % has no model_id', keys[i]
                USING ERRCODE = 'null_value_not_allowed',
                      HINT = 'Give every configuration a model_id of the model architecture table.';
        END IF;
        PERFORM madlib_dl._check_compile_params(compiles[i], format('mst_key %s compile_params', keys[i]));
        IF fits[i] IS NOT NULL THEN
            PERFORM madlib_dl._check_fit_params(fits[i], format('mst_key %s fit_params', keys[i]));
        END IF;
        params := madlib_dl._check_params(compiles[i], fits[i]);
        es := madlib_dl._check_early_stopping_of(early_stopping, compiles[i], has_validation,
            format('mst_key %s', keys[i]),
            'Monitor a series every configuration has: the loss, or a metric they all compile.');
        loss_types[i] := params.loss_type;
        metric_types[i] := params.metrics_type[1];
    END LOOP;

    -- the object table the selection table names (as for the architecture
    -- table: as resolved then, else in the selection table's schema) must
    -- hold the top_<k>_accuracy functions the configurations use
    IF object_raw IS NOT NULL THEN
        object_tbl := madlib_dl._table_name_parts(coalesce(object_qualified, object_raw));
        IF cardinality(object_tbl) = 1 THEN
            object_tbl := ARRAY[mst[1], object_tbl[1]];
        ELSIF object_tbl IS NULL THEN
            RAISE EXCEPTION 'object_table "%" in "%" is not a table name', object_raw,
                            madlib_dl._table_label(mst_summ)
                USING ERRCODE = 'invalid_name',
                      HINT = 'Give schema.table or table.';
        END IF;
        PERFORM madlib_dl._object_table_check(object_tbl, compiles);
    END IF;

END
$$;

-- The columns of fit_multiple's summary table.
CREATE FUNCTION madlib_dl._fit_multiple_summary_defs()
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'source_table text, validation_table text, model text,'
        ' model_info text, dependent_varname text[], independent_varname text[], model_arch_table text,'
        ' model_selection_table text, object_table text, num_iterations integer,'
        ' metrics_compute_frequency integer, warm_start boolean, name text, description text,'
        ' start_training_time timestamp, end_training_time timestamp, madlib_version text,'
        ' num_classes integer[]{class_values}, dependent_vartype text[], normalizing_const real,'
        ' metrics_iters integer[], schedule integer[], use_caching boolean, early_stopping text'
$$;

CREATE FUNCTION madlib_dl._fit_multiple(source text[], model text[], mst text[],
    num_iterations integer, use_gpus boolean, validation text[],
    metrics_compute_frequency integer, warm_start boolean, name varchar,
    description varchar, use_caching boolean, early_stopping varchar)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    info_tbl text[] := madlib_dl._table_with_suffix(model, '_info');
    summary_tbl text[] := ARRAY[model[1], model[2] || '_summary'];
    inp record;                 -- _fit_inputs: the packed tables and their variables
    ms record;                  -- _fit_multiple_configs: the configurations
    ar record;                  -- _fit_archs: their architectures and weights
    freq integer;
    tr record;                  -- _fit_job_transport: how the job runs
    saved_workers text;         -- _leader_only_for_temp
    oc record;                  -- _fit_output_columns
    t_start timestamp;
    t_end timestamp;
    results madlib_dl._fit_multiple_result[];
BEGIN
    -- 1. arguments that need no table
    PERFORM madlib_dl._assert_not_null(num_iterations, 'num_iterations');
    PERFORM madlib_dl._fit_check_no_gpus(use_gpus, 'fit_multiple');
    freq := madlib_dl._fit_check_iterations(num_iterations, metrics_compute_frequency);

    -- 2. tables: inputs exist, outputs absent (or the model table present for warm start)
    inp := madlib_dl._fit_inputs(source, validation);
    IF warm_start THEN
        PERFORM madlib_dl._assert_warm_start_outputs(model, 'model_output_table', summary_tbl,
            ARRAY['mst_key', 'model_weights', 'model_arch'], ARRAY['integer', 'bytea', 'json'],
            'fit_multiple', info_tbl, 'model_info');
    ELSE
        PERFORM madlib_dl._fit_assert_outputs_absent(model, info_tbl, summary_tbl);
    END IF;

    -- 3. the configurations, their architectures, each checked against the data once
    ms := madlib_dl._fit_multiple_configs(mst, early_stopping, validation IS NOT NULL);
    ar := madlib_dl._fit_archs(ms.arch_tbl, ms.ids, ARRAY(SELECT format('mst_key %s', k) FROM unnest(ms.keys) k));
    PERFORM madlib_dl._fit_check_data(source, validation, inp.x_cols, inp.y_cols, inp.vx_cols, inp.vy_cols,
                                      ar.archs);

    -- 4. memory, before any model is built (54000 naming the configuration, or the whole)
    tr := madlib_dl._fit_job_transport(source, inp.src_rel, inp.psum);
    PERFORM madlib_dl._check_model_memory(CASE WHEN tr.transport = 'workers' THEN 'fit_multiple' ELSE 'distributed' END,
        ar.archs, ms.compiles, ms.fits, ARRAY(SELECT format('mst_key %s', k) FROM unnest(ms.keys) k),
        num_iterations => num_iterations, metrics_compute_frequency => freq, num_segments => tr.num_segments);

    -- 5. warm start: keys in the model table continue from their weights
    IF warm_start THEN
        ar.inits := madlib_dl._fit_warm_start(model, summary_tbl, ms.keys, ar.archs, ar.inits, NULL);
    END IF;
    PERFORM madlib_dl._fit_check_inits(ar.archs, ar.inits);

    -- 6. train over the transport (no table written before it returns); MADlib's schedule seed 1
    saved_workers := madlib_dl._leader_only_for_temp(ARRAY[inp.src_rel, inp.val_rel], tr.transport);
    PERFORM madlib_dl._progress_label(model);
    t_start := clock_timestamp();
    results := ARRAY(SELECT r FROM madlib_dl._fit_multiple_run(madlib_dl._make_train_job(inp.src_rel, NULL, NULL,
        ar.archs, ms.compiles, num_iterations, fit_params => ms.fits, init_weights => ar.inits,
        mst_keys => ms.keys, validation => inp.val_rel, metrics_compute_frequency => freq,
        num_segments => tr.num_segments, schedule_seed => 1, transport => tr.transport, cluster => tr.cluster,
        use_caching => use_caching, x_cols => inp.x_cols, y_cols => inp.y_cols, val_x_cols => inp.vx_cols,
        val_y_cols => inp.vy_cols, early_stopping => ms.es)) r);
    t_end := clock_timestamp();
    PERFORM madlib_dl._leader_only_end(saved_workers);

    -- 7. output tables, in this transaction
    PERFORM madlib_dl._fit_drop_outputs(warm_start, model, info_tbl, summary_tbl);
    PERFORM madlib_dl._fit_write_models(model, ms.keys, ARRAY(SELECT r.model_weights FROM unnest(results) r),
                                        ar.archs);
    oc := madlib_dl._fit_output_columns(inp.y_cols, NULL);
    PERFORM madlib_dl._fit_write_rows(info_tbl, madlib_dl._fit_info_defs('', oc.defs),
        madlib_dl._distributed_clause('mst_key'),
        (SELECT jsonb_agg(madlib_dl._fit_series(to_jsonb(r) - 'model_weights', octet_length(r.model_weights))
                          || (madlib_dl._fit_output_columns(inp.y_cols, to_jsonb(r) - 'model_weights')).vals
                          || jsonb_build_object('model_id', k.id, 'compile_params', k.c, 'fit_params', k.f,
                                                'loss_type', k.l, 'metrics_type', CASE WHEN k.m IS NOT NULL THEN ARRAY[k.m] END)
                          ORDER BY r.mst_key)
           FROM unnest(results) r
           JOIN unnest(ms.keys, ms.ids, ms.compiles, ms.fits, ms.loss_types, ms.metric_types)
                AS k(key, id, c, f, l, m) ON k.key = r.mst_key));
    PERFORM madlib_dl._fit_write_summary(summary_tbl, madlib_dl._fit_multiple_summary_defs(),
        source, inp.psum, true,
        jsonb_build_object('source_table', madlib_dl._table_given(source),
            'validation_table', madlib_dl._table_given(validation), 'model', madlib_dl._table_given(model),
            'model_info', madlib_dl._table_given(info_tbl), 'model_arch_table', ms.arch_raw,
            'model_selection_table', madlib_dl._table_given(mst), 'object_table', ms.object_raw,
            'num_iterations', num_iterations, 'metrics_compute_frequency', freq, 'warm_start', warm_start,
            'name', name, 'description', description, 'start_training_time', t_start,
            'end_training_time', t_end, 'schedule', (results[1]).schedule, 'use_caching', use_caching,
            'early_stopping', ms.es,
            'metrics_iters', ARRAY(SELECT g FROM generate_series(1, num_iterations) g
                                    WHERE g % freq = 0 OR g = num_iterations ORDER BY g)));
    -- a version per model in the registry (src/sql/serving.sql)
    PERFORM madlib_dl._record_versions(model, 'fit_multiple');
END
$$;

-- ---------------------------------------------------------------------
-- Public API (MADlib signature).  Thin wrappers: they resolve the table
-- names in the caller's search_path, then call the pinned driver.
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl.madlib_keras_fit_multiple_model(source_table varchar,
    model_output_table varchar, model_selection_table varchar, num_iterations integer,
    use_gpus boolean DEFAULT false, validation_table varchar DEFAULT NULL,
    metrics_compute_frequency integer DEFAULT NULL, warm_start boolean DEFAULT false,
    name varchar DEFAULT NULL, description varchar DEFAULT NULL,
    use_caching boolean DEFAULT NULL, early_stopping varchar DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
AS $$
    SELECT madlib_dl._fit_multiple(
        madlib_dl._resolve_table($1, 'source_table'),
        madlib_dl._resolve_table($2, 'model_output_table'),
        madlib_dl._resolve_table($3, 'model_selection_table'),
        $4, $5,
        CASE WHEN $6 IS NULL THEN NULL ELSE madlib_dl._resolve_table($6, 'validation_table') END,
        $7, coalesce($8, false), $9, $10, $11, $12)
$$;

CREATE FUNCTION madlib_dl.fit_multiple(source_table varchar,
    model_output_table varchar, model_selection_table varchar, num_iterations integer,
    use_gpus boolean DEFAULT false, validation_table varchar DEFAULT NULL,
    metrics_compute_frequency integer DEFAULT NULL, warm_start boolean DEFAULT false,
    name varchar DEFAULT NULL, description varchar DEFAULT NULL,
    use_caching boolean DEFAULT NULL, early_stopping varchar DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
AS $$
    SELECT madlib_dl.madlib_keras_fit_multiple_model($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
                                                     $12)
$$;
