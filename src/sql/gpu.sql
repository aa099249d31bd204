-- gpu.sql: the GPUs of this host (src/pg/api/gpu.c, docs/gpu.md).
--
-- gpu_configuration(output_table, source) creates output_table
-- (hostname text, gpu_descr text) with one row per NVIDIA GPU, as
-- MADlib's does: source 'tensorflow' (default) describes each GPU as
-- TensorFlow does ("device: 0, name: NVIDIA H200, pci bus id:
-- 0000:18:00.0", without the compute capability, which only CUDA knows),
-- 'nvidia' as nvidia-smi -L ("GPU 0: NVIDIA H200 (UUID: GPU-...)").
-- The list comes from the NVIDIA driver (/proc/driver/nvidia/gpus), not
-- from CUDA: madlib_dl has no GPU backend in this release, and fit,
-- fit_multiple, evaluate and predict refuse use_gpus => true.  On a host
-- without GPUs the table is created with zero rows and a NOTICE says so.
-- All segments of a PostgreSQL server share one host, so the rows are
-- this server's GPUs.

-- information NULL: this host's GPUs; otherwise the texts of
-- /proc/driver/nvidia/gpus/*/information files (tests).
CREATE FUNCTION madlib_dl._gpu_list(source text, information text[])
RETURNS TABLE (hostname text, gpu_descr text)
AS 'MODULE_PATHNAME', 'madlib_dl__gpu_list'
LANGUAGE C VOLATILE;

CREATE FUNCTION madlib_dl._gpu_configuration(output_table text[], source text, information text[])
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
    EXECUTE format('CREATE TABLE %s (hostname text, gpu_descr text)%s', madlib_dl._table_sql(output_table),
                   madlib_dl._distributed_clause());
    EXECUTE format('INSERT INTO %s SELECT hostname, gpu_descr FROM madlib_dl._gpu_list($1, $2)',
                   madlib_dl._table_sql(output_table)) USING lower(source), information;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n = 0 THEN
        RAISE NOTICE 'no GPU found: the NVIDIA driver lists none in /proc/driver/nvidia/gpus'
            USING HINT = 'The table has no rows. madlib_dl has no GPU backend in this release either: '
                         'call fit, fit_multiple, evaluate and predict with use_gpus => false (docs/gpu.md).';
    END IF;
END
$$;

CREATE FUNCTION madlib_dl.gpu_configuration(output_table varchar, source varchar DEFAULT 'tensorflow')
RETURNS void
LANGUAGE sql VOLATILE
AS $$ SELECT madlib_dl._gpu_configuration(madlib_dl._resolve_table(output_table, 'output_table'),
                                          coalesce(source, 'tensorflow'), NULL) $$;

-- gpu_configuration() returns its help, as MADlib's does (a one-argument
-- 'usage' form would clash with gpu_configuration(output_table)).
CREATE FUNCTION madlib_dl.gpu_configuration()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT
$usage$gpu_configuration: list the NVIDIA GPUs of the server's host, one row each.

    SELECT madlib_dl.gpu_configuration(
        output_table  VARCHAR,                     -- table to create (hostname text, gpu_descr text)
        source        VARCHAR DEFAULT 'tensorflow' -- 'tensorflow' or 'nvidia': the description format
    );

'tensorflow': device: 0, name: NVIDIA H200, pci bus id: 0000:18:00.0
'nvidia':     GPU 0: NVIDIA H200 (UUID: GPU-...)

The list comes from the NVIDIA driver (/proc/driver/nvidia/gpus); zero rows
and a NOTICE on a host without GPUs.  madlib_dl has no GPU backend in this
release: fit, fit_multiple, evaluate and predict need use_gpus => false.$usage$::text
$$;
