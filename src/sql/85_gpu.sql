-- 85_gpu.sql: the GPUs of this host (src/pg/gpu.c, docs/gpu.md).
--
-- gpu_configuration(output_table, source) creates output_table
-- (hostname text, gpu_descr text) with one row per GPU, as MADlib's does:
-- source 'tensorflow' (default) describes each GPU as TensorFlow does
-- ("device: 0, name: ..., pci bus id: ..., compute capability: 9.0"),
-- 'nvidia' as nvidia-smi -L ("GPU 0: ... (UUID: GPU-...)").  Like
-- MADlib it lists what is there: on a host without GPUs, or with a
-- build of madlib_dl without CUDA, the table is created with zero rows
-- and a NOTICE says why (fit with use_gpus => true is the call that
-- errors).  All segments of a PostgreSQL server share one host, so the
-- rows are this server's GPUs.

CREATE FUNCTION madlib_dl._gpu_list(source text)
RETURNS TABLE (hostname text, gpu_descr text)
AS 'MODULE_PATHNAME', 'madlib_dl__gpu_list'
LANGUAGE C VOLATILE STRICT;

-- The number of usable GPUs; raises 0A000 when use_gpus cannot work
-- (a build without CUDA, or no GPU).
CREATE FUNCTION madlib_dl._gpu_status()
RETURNS integer
AS 'MODULE_PATHNAME', 'madlib_dl__gpu_status'
LANGUAGE C VOLATILE;

CREATE FUNCTION madlib_dl._gpu_configuration(output_table text[], source text)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    IF source IS NULL OR lower(source) NOT IN ('tensorflow', 'nvidia') THEN
        RAISE EXCEPTION 'source must be ''tensorflow'' or ''nvidia'', got %', coalesce(quote_literal(source), 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Leave source out for the TensorFlow-style description, or pass ''nvidia''.';
    END IF;
    PERFORM madlib_dl._assert_output_absent(output_table, 'output_table');
    EXECUTE format('CREATE TABLE %s (hostname text, gpu_descr text)', madlib_dl._table_sql(output_table));
    EXECUTE format('INSERT INTO %s SELECT hostname, gpu_descr FROM madlib_dl._gpu_list($1)',
                   madlib_dl._table_sql(output_table)) USING lower(source);
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n = 0 THEN
        IF madlib_dl._gpu_built() THEN
            RAISE NOTICE 'no GPU found: the CUDA driver reports no device on this host'
                USING HINT = 'The table has no rows; nvidia-smi shows what the driver sees.';
        ELSE
            RAISE NOTICE 'no GPU found: madlib_dl was built without CUDA'
                USING HINT = 'The table has no rows; docs/gpu.md says how to build with make USE_CUDA=1.';
        END IF;
    END IF;
END
$$;

CREATE FUNCTION madlib_dl._gpu_built()
RETURNS boolean
AS 'MODULE_PATHNAME', 'madlib_dl__gpu_built'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION madlib_dl.gpu_configuration(output_table varchar, source varchar DEFAULT 'tensorflow')
RETURNS void
LANGUAGE sql VOLATILE
AS $$ SELECT madlib_dl._gpu_configuration(madlib_dl._resolve_table(output_table, 'output_table'), source) $$;
