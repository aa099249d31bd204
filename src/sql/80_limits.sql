-- 80_limits.sql: the memory limit madlib_dl.max_model_memory (src/pg/limits.c).
-- fit and fit_multiple call _check_model_memory before training, so a
-- model too large for the limit fails at once with 54000.

-- ERROR 54000 when bytes exceeds madlib_dl.max_model_memory; else bytes.
-- what names the model in the message.
CREATE FUNCTION madlib_dl._check_memory(what text, bytes double precision)
RETURNS double precision
AS 'MODULE_PATHNAME', 'madlib_dl__check_memory'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- The estimated memory of one model state in one process, in bytes:
--   28 bytes per parameter: float32 weights, gradients and up to two
--     optimizer slots (16), the state's copy in shared memory (4) and the
--     leader's double-precision averaging buffer (8);
--   12 bytes per activation value of one mini-batch: the input and every
--     layer's output, its pre-activation and its gradient, batch_size rows.
-- The partition's data is not counted (it is the table's size).
CREATE FUNCTION madlib_dl._model_memory_estimate(model_arch json, batch_size bigint)
RETURNS double precision
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 28.0 * a.n_params
         + 12.0 * batch_size * (
               (SELECT coalesce(sum(d), 0) FROM (
                    SELECT (SELECT exp(sum(ln(greatest(x, 1)::float8))) FROM unnest(s.output_shape) x) AS d
                      FROM madlib_dl.keras_model_summary(model_arch) s) o)
             + (SELECT exp(sum(ln(greatest(x, 1)::float8))) FROM unnest(a.input_shape) x))
      FROM madlib_dl._arch_info(model_arch) a
$$;

-- ERROR 54000 when the model model_arch, trained with batch_size, needs
-- more than madlib_dl.max_model_memory; else returns the estimate in bytes.
-- what names the model in the message (e.g. 'model_id 3', 'mst_key 7').
--   PERFORM madlib_dl._check_model_memory(arch, params.batch_size, format('model_id %s', model_id));
CREATE FUNCTION madlib_dl._check_model_memory(model_arch json, batch_size bigint, what text)
RETURNS double precision
LANGUAGE sql VOLATILE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT madlib_dl._check_memory(what, madlib_dl._model_memory_estimate(model_arch, batch_size))
$$;
