-- 80_limits.sql: the memory limit madlib_dl.max_model_memory (src/pg/runtime/limits.c).
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
