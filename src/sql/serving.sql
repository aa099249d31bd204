-- serving.sql: predict inside any query (predict_row, predict_row_prob),
-- the model registry (every fit, fit_multiple and automl run records a
-- version) and deploy.  C: src/pg/api/serving.c (the per-backend model
-- cache), src/pg/api/registry.c (the registry's only writers).  User page:
-- docs/serving.md.

-- ---------------------------------------------------------------------
-- The registry.  Everyone reads it (names, tables, metrics: no data);
-- nobody but the extension's owner may write it, and the functions of
-- registry.c write for the roles they check (see there).
-- (Replicated on Greenplum, madlib_dl._replicated_clause: a distributed
-- table there cannot have a primary key and a unique key without a
-- column in common.)
DO $do$
BEGIN
    EXECUTE 'CREATE TABLE madlib_dl.model_versions ('
            '    version_id   bigserial PRIMARY KEY,'
            '    name         text NOT NULL,'
            '    version      integer NOT NULL,'
            '    run_id       bigint NOT NULL,'
            '    model_table  text NOT NULL,'
            '    model_relid  oid NOT NULL,'
            '    mst_key      integer,'
            '    owner        name NOT NULL,'
            '    trained_by   name NOT NULL,'
            '    trained_at   timestamptz NOT NULL DEFAULT now(),'
            '    function     text NOT NULL,'
            '    source_table text,'
            '    metrics      jsonb,'
            '    params       jsonb,'
            '    UNIQUE (name, version)'
            ')' || madlib_dl._replicated_clause();
    EXECUTE 'CREATE TABLE madlib_dl.model_deployments ('
            '    deploy_id    bigserial PRIMARY KEY,'
            '    name         text NOT NULL,'
            '    version_id   bigint NOT NULL REFERENCES madlib_dl.model_versions,'
            '    strategy     text,'
            '    deployed_by  name NOT NULL,'
            '    deployed_at  timestamptz NOT NULL DEFAULT now()'
            ')' || madlib_dl._replicated_clause();
END
$do$;
CREATE INDEX ON madlib_dl.model_deployments (name, deploy_id);
REVOKE ALL ON madlib_dl.model_versions, madlib_dl.model_deployments FROM PUBLIC;
GRANT SELECT ON madlib_dl.model_versions, madlib_dl.model_deployments TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('madlib_dl.model_versions', '');
SELECT pg_catalog.pg_extension_config_dump('madlib_dl.model_deployments', '');

COMMENT ON TABLE madlib_dl.model_versions IS
'One row per model a fit, fit_multiple or madlib_keras_automl run wrote (fit_multiple: one per mst_key), '
'numbered per name (madlib_dl.model_name, else schema.table of the model table). See docs/serving.md.';
COMMENT ON TABLE madlib_dl.model_deployments IS
'Every madlib_dl.deploy, newest last; predict_row(name, ...) uses the newest row of the name. See docs/serving.md.';

-- Record versions (C: checks that the caller owns model_table and the name).
CREATE FUNCTION madlib_dl._registry_record(name text, model_table regclass, mst_keys integer[],
    function text, source_table text, metrics jsonb[], params jsonb[])
RETURNS void
AS 'MODULE_PATHNAME', 'madlib_dl__registry_record'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Deploy a version of name (C: checks that the caller owns the name).
CREATE FUNCTION madlib_dl._registry_deploy(name text, version_id bigint, strategy text)
RETURNS void
AS 'MODULE_PATHNAME', 'madlib_dl__registry_deploy'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- The final value of every metric of a training result's metrics column
-- (fit's summary, the info tables): {"training_<metric>_final": v,
-- "validation_<metric>_final": v, ...}; {} for NULL.  The versions'
-- metrics record them next to MADlib's *_final columns.
CREATE FUNCTION madlib_dl._metrics_final(metrics jsonb)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(pg_catalog.jsonb_object_agg(p.key || '_' || s.key || '_final', s.value OPERATOR(pg_catalog.->) -1),
                    '{}'::jsonb)
      FROM pg_catalog.jsonb_each(metrics) p, pg_catalog.jsonb_each(p.value) s
$$;

-- The versions of the run that just wrote model {schema, table} (and its
-- _summary, and for fn 'fit_multiple' / 'automl' its _info): one per row
-- of the model table, under madlib_dl.model_name, else schema.table (so
-- that two roles' tables of one name in two schemas never share a name).
-- Called by fit, fit_multiple and automl at their
-- end, in their transaction: the tables are the ones they wrote.  Under a
-- name of another role's nothing is recorded (a WARNING): the run keeps
-- its output tables.
CREATE FUNCTION madlib_dl._record_versions(model text[], fn text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    name text := coalesce(nullif(current_setting('madlib_dl.model_name'), ''), model[1] || '.' || model[2]);
    rel regclass := madlib_dl._table_oid(model);
    stbl text := madlib_dl._table_sql(madlib_dl._table_with_suffix(model, '_summary'));
    itbl text := madlib_dl._table_sql(madlib_dl._table_with_suffix(model, '_info'));
    srel regclass := madlib_dl._table_oid(madlib_dl._table_with_suffix(model, '_summary'));
    irel regclass := madlib_dl._table_oid(madlib_dl._table_with_suffix(model, '_info'));
    src text;
    keys integer[];
    metrics jsonb[];
    params jsonb[];
BEGIN
    -- whose code runs (util.sql): the tables are checked before they are read
    IF srel IS NOT NULL THEN
        PERFORM madlib_dl._assert_trusted_table(srel, 'model summary table');
    END IF;
    IF fn OPERATOR(pg_catalog.<>) 'fit' AND irel IS NOT NULL THEN
        PERFORM madlib_dl._assert_trusted_table(irel, 'model info table');
    END IF;
    IF fn = 'fit' THEN
        EXECUTE format(
            'SELECT source_table, ARRAY[jsonb_strip_nulls(jsonb_build_object('
            '    ''training_metrics_final'', training_metrics_final, ''training_loss_final'', training_loss_final,'
            '    ''validation_metrics_final'', validation_metrics_final, ''validation_loss_final'', validation_loss_final,'
            '    ''metrics_type'', metrics_type, ''loss_type'', loss_type,'
            '    ''stopped_at_iteration'', stopped_at_iteration, ''best_iteration'', best_iteration)'
            '    || madlib_dl._metrics_final(metrics))],'
            '  ARRAY[jsonb_strip_nulls(jsonb_build_object(''compile_params'', compile_params, ''fit_params'', fit_params,'
            '    ''num_iterations'', num_iterations, ''model_arch_table'', model_arch_table, ''model_id'', model_id,'
            '    ''validation_table'', validation_table, ''early_stopping'', early_stopping))]'
            '  FROM %s', stbl) INTO src, metrics, params;
        keys := ARRAY[NULL::integer];
    ELSE
        EXECUTE format('SELECT source_table FROM %s', stbl) INTO src;
        EXECUTE format(
            'SELECT array_agg(mst_key ORDER BY mst_key),'
            '  array_agg(jsonb_strip_nulls(jsonb_build_object('
            '    ''training_metrics_final'', training_metrics_final, ''training_loss_final'', training_loss_final,'
            '    ''validation_metrics_final'', validation_metrics_final, ''validation_loss_final'', validation_loss_final,'
            '    ''metrics_type'', metrics_type, ''loss_type'', loss_type,'
            '    ''stopped_at_iteration'', stopped_at_iteration, ''best_iteration'', best_iteration)'
            '    || madlib_dl._metrics_final(metrics)) ORDER BY mst_key),'
            '  array_agg(jsonb_strip_nulls(jsonb_build_object(''compile_params'', compile_params,'
            '    ''fit_params'', fit_params, ''model_id'', model_id)) ORDER BY mst_key)'
            '  FROM %s', itbl) INTO keys, metrics, params;
    END IF;
    -- a name of another role's: the run keeps its tables, without a version
    BEGIN
        PERFORM madlib_dl._registry_record(name, rel, keys, fn, src, metrics, params);
    EXCEPTION WHEN insufficient_privilege THEN
        RAISE WARNING 'the models of "%" were not recorded as versions of "%": %', model[2], name, SQLERRM
            USING HINT = 'The name belongs to another role: SET madlib_dl.model_name = ''my_name'' before training.';
    END;
END
$$;

-- deploy(name, strategy, metric): make predict_row(name, ...) use a version
-- of name: 'latest' (the highest version), 'best' (the best by metric, a
-- key of the versions' metrics: lower is better for a loss, higher for any
-- other; default validation_metrics_final when a version has it, else
-- training_metrics_final), or a version number as text.  Rollback: deploy
-- an older version.  Returns the version deployed.
CREATE FUNCTION madlib_dl.deploy(name text, strategy text DEFAULT 'latest', metric text DEFAULT NULL,
    OUT version integer, OUT model_table text, OUT mst_key integer, OUT metric_value double precision)
RETURNS record
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n text := deploy.name;
    vid bigint;
    m text := metric;
    lower_better boolean;
BEGIN
    IF n IS NULL OR strategy IS NULL THEN
        RAISE EXCEPTION 'name and strategy of deploy must not be NULL'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Call deploy(name, ''latest''), deploy(name, ''best''[, metric]) or deploy(name, ''3'').';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM madlib_dl.model_versions v WHERE v.name = n) THEN
        RAISE EXCEPTION 'model name "%" has no versions', n
            USING ERRCODE = 'no_data_found',
                  HINT = 'fit, fit_multiple and madlib_keras_automl record versions under madlib_dl.model_name, '
                         'else schema.table of the model table: SELECT DISTINCT name FROM madlib_dl.model_versions.';
    END IF;
    IF strategy = 'latest' THEN
        SELECT v.version_id INTO vid FROM madlib_dl.model_versions v
         WHERE v.name = n ORDER BY v.version DESC LIMIT 1;
    ELSIF strategy = 'best' THEN
        IF m IS NULL THEN
            m := CASE WHEN EXISTS (SELECT 1 FROM madlib_dl.model_versions v
                                    WHERE v.name = n AND v.metrics ? 'validation_metrics_final')
                      THEN 'validation_metrics_final' ELSE 'training_metrics_final' END;
        END IF;
        lower_better := m LIKE '%loss%';
        SELECT v.version_id INTO vid FROM madlib_dl.model_versions v
         WHERE v.name = n AND jsonb_typeof(v.metrics -> m) = 'number'
         ORDER BY CASE WHEN lower_better THEN (v.metrics ->> m)::float8 ELSE -(v.metrics ->> m)::float8 END,
                  v.version DESC
         LIMIT 1;
        IF vid IS NULL THEN
            RAISE EXCEPTION 'no version of "%" has metric "%"', n, m
                USING ERRCODE = 'no_data_found',
                      HINT = 'Give a key of the versions'' metrics, e.g. training_loss_final, '
                             'or train with a validation_table for validation_metrics_final.';
        END IF;
    ELSIF strategy ~ '^\s*[0-9]+\s*$' THEN
        SELECT v.version_id INTO vid FROM madlib_dl.model_versions v
         WHERE v.name = n AND v.version = btrim(strategy)::integer;
        IF vid IS NULL THEN
            RAISE EXCEPTION 'model name "%" has no version %', n, btrim(strategy)
                USING ERRCODE = 'no_data_found',
                      HINT = format('SELECT version FROM madlib_dl.model_versions WHERE name = %L lists them.', n);
        END IF;
    ELSE
        RAISE EXCEPTION 'strategy "%" is not latest, best or a version number', strategy
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Call deploy(name, ''latest''), deploy(name, ''best''[, metric]) or deploy(name, ''3'').';
    END IF;
    PERFORM madlib_dl._registry_deploy(n, vid, CASE WHEN strategy = 'best' THEN 'best by ' || m ELSE strategy END);
    SELECT v.version, v.model_table, v.mst_key,
           CASE WHEN jsonb_typeof(v.metrics -> m) = 'number' THEN (v.metrics ->> m)::float8 END
      INTO deploy.version, deploy.model_table, deploy.mst_key, deploy.metric_value
      FROM madlib_dl.model_versions v WHERE v.version_id = vid;
END
$$;

-- deploy(name, version): the version by number (rollback).
CREATE FUNCTION madlib_dl.deploy(name text, version_number integer,
    OUT version integer, OUT model_table text, OUT mst_key integer, OUT metric_value double precision)
RETURNS record
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT * FROM madlib_dl.deploy($1, $2::text, NULL::text) $$;

-- The versions deployed now: one row per name.
CREATE VIEW madlib_dl.deployed_models AS
SELECT DISTINCT ON (d.name) d.name, v.version, v.model_table, v.mst_key, d.strategy, d.deployed_by,
       d.deployed_at, v.trained_by, v.trained_at, v.metrics
  FROM madlib_dl.model_deployments d
  JOIN madlib_dl.model_versions v ON v.version_id = d.version_id
 ORDER BY d.name, d.deploy_id DESC;
GRANT SELECT ON madlib_dl.deployed_models TO PUBLIC;

-- ---------------------------------------------------------------------
-- predict_row(model_table, features, mst_key): the class value (a
-- regression output as text) of one row's features, inside any query.
-- model_table: a model table of fit (no mst_key), of fit_multiple or
-- madlib_keras_automl (mst_key), an architecture table of
-- load_keras_model (the third argument is the model_id), or a name
-- deployed with deploy (no third argument).  features: an array of the
-- model's input shape, of real, double precision, smallint, integer,
-- bigint or numeric; divided by the model's normalizing_const as predict
-- does.  NULL features: NULL.  Compiled models are cached per backend
-- (madlib_dl.model_cache_size).
CREATE FUNCTION madlib_dl.predict_row(model_table text, features anyarray, mst_key integer DEFAULT NULL)
RETURNS text
AS 'MODULE_PATHNAME', 'madlib_dl__predict_row'
LANGUAGE C STABLE PARALLEL SAFE COST 1000;

-- predict_row_prob: the model's output layer (class probabilities) as real[].
CREATE FUNCTION madlib_dl.predict_row_prob(model_table text, features anyarray, mst_key integer DEFAULT NULL)
RETURNS real[]
AS 'MODULE_PATHNAME', 'madlib_dl__predict_row_prob'
LANGUAGE C STABLE PARALLEL SAFE COST 1000;

-- The compiled models this backend caches, most recently used first.
CREATE FUNCTION madlib_dl.model_cache(OUT model_table regclass, OUT mst_key integer,
    OUT stamp text, OUT bytes bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'madlib_dl__model_cache'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
