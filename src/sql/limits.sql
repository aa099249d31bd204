-- limits.sql: the memory limit madlib_dl.max_model_memory (src/pg/runtime/limits.c).
-- fit and fit_multiple call _check_model_memory before they read data or
-- build a model, so a job too large for the limit fails at once with
-- 54000; evaluate and predict make the same check in C.

-- ERROR 54000 when one process of the job would need more than
-- madlib_dl.max_model_memory; else the estimate in bytes.  The estimate
-- is made from the architectures (no model is built) and counts the
-- models' weights, gradients, optimizer state, activations, im2col and
-- oneDNN scratch, the states in shared memory (or as bytea values), the
-- averaging buffer and the metric history (docs/errors.md).
--   job: 'fit', 'fit_multiple' (this server's virtual segments),
--        'distributed' (Greenplum or PL/Proxy), 'evaluate', 'predict'
--   one element per model: model_archs, compile_params (NULL for
--   predict), fit_params (elements may be NULL), names (for messages,
--   e.g. 'model_id 3'; NULL: 'model 1', ...)
--   batch_size: rows per forward pass of evaluate and predict.
--     PERFORM madlib_dl._check_model_memory('fit', ARRAY[arch::text], ARRAY[compile_params],
--         ARRAY[fit_params], ARRAY[format('model_id %s', model_id)],
--         num_iterations => num_iterations, metrics_compute_frequency => freq,
--         num_segments => nseg);
CREATE FUNCTION madlib_dl._check_model_memory(job text, model_archs text[],
    compile_params text[], fit_params text[], names text[],
    num_iterations integer DEFAULT 1, metrics_compute_frequency integer DEFAULT NULL,
    num_segments integer DEFAULT 1, batch_size integer DEFAULT NULL)
RETURNS double precision
AS 'MODULE_PATHNAME', 'madlib_dl__check_model_memory'
LANGUAGE C VOLATILE PARALLEL SAFE;

-- madlib_dl.partition_memory in bytes for a job of num_segments segments on
-- this server: the setting, or its default rule (NULL: the default
-- segment count).  The preprocessors bound the buffers they build at once
-- by it.
CREATE FUNCTION madlib_dl._partition_budget(num_segments integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'madlib_dl__partition_budget'
LANGUAGE C STABLE PARALLEL SAFE;

-- The partition budget madlib_dl.partition_memory (src/pg/runtime/
-- partition.c): how fit and fit_multiple would place each segment's
-- training partition of a packed table on this server's parallel
-- workers, each segment alone: cached (decoded into memory for the whole
-- call) or streamed (read from the table a window at a time).  Nothing
-- is trained; the directories are read, and what caching would decode.
CREATE FUNCTION madlib_dl._partition_plan(source regclass, x_cols text[], y_cols text[],
    num_segments integer, use_caching boolean)
RETURNS TABLE (segment integer, rows bigint, buffers integer, blocks bigint, cache_bytes bigint,
               stream_bytes bigint, budget bigint, cached boolean)
AS 'MODULE_PATHNAME', 'madlib_dl__partition_plan'
LANGUAGE C VOLATILE;

-- The plan of a table made by training_preprocessor_dl (src: {schema,
-- table}), its columns and segments from its summary.
CREATE FUNCTION madlib_dl._partition_plan_of(src text[], use_caching boolean)
RETURNS TABLE (segment integer, rows bigint, buffers integer, blocks bigint, cache_bytes bigint,
               stream_bytes bigint, budget bigint, cached boolean)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass := madlib_dl._assert_table_exists(src, 'source_table');
    psum jsonb := madlib_dl._fit_packed_summary(src, 'source_table');
BEGIN
    RETURN QUERY SELECT p.* FROM madlib_dl._fit_vars(psum) v,
        LATERAL madlib_dl._partition_plan(rel, v.x_cols, v.y_cols,
                                          madlib_dl._fit_num_segments(src, rel, psum), use_caching) p;
END
$$;

-- partition_plan(source_table, use_caching): how fit and fit_multiple would
-- place each segment's training partition (docs/fit.md, "Memory: cached
-- or streamed").
CREATE FUNCTION madlib_dl.partition_plan(source_table varchar, use_caching boolean DEFAULT NULL)
RETURNS TABLE (segment integer, rows bigint, buffers integer, blocks bigint, cache_bytes bigint,
               stream_bytes bigint, budget bigint, cached boolean)
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT * FROM madlib_dl._partition_plan_of(madlib_dl._resolve_table($1, 'source_table'), $2) $$;
