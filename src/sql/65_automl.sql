-- 65_automl.sql: MADlib's AutoML entry points (madlib_keras_automl.sql_in),
-- refused clearly: Hyperband and Hyperopt are not implemented, and a
-- MADlib script calling them gets 0A000 with what to do instead, not
-- "function does not exist".  docs/migration.md lists the difference.

CREATE FUNCTION madlib_dl._automl_refused(fn text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION '% is not supported: madlib_dl does not implement AutoML (Hyperband, Hyperopt)', fn
        USING ERRCODE = 'feature_not_supported',
              HINT = 'Generate the configurations with generate_model_configs (grid or random search), '
                     'train them together with madlib_keras_fit_multiple_model, and keep the best by '
                     'the validation loss in its _info table.';
END
$$;

CREATE FUNCTION madlib_dl.madlib_keras_automl(source_table varchar, model_output_table varchar,
    model_arch_table varchar, model_selection_table varchar, model_id_list integer[],
    compile_params_grid varchar, fit_params_grid varchar,
    automl_method varchar DEFAULT 'hyperband', automl_params varchar DEFAULT NULL,
    random_state integer DEFAULT NULL, object_table varchar DEFAULT NULL,
    use_gpus boolean DEFAULT false, validation_table varchar DEFAULT NULL,
    metrics_compute_frequency integer DEFAULT NULL, name varchar DEFAULT NULL,
    description varchar DEFAULT NULL, use_caching boolean DEFAULT false)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl._automl_refused('madlib_keras_automl') $$;

CREATE FUNCTION madlib_dl.hyperband_schedule(schedule_table varchar, r integer,
    eta integer DEFAULT 3, skip_last integer DEFAULT 0)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl._automl_refused('hyperband_schedule') $$;
