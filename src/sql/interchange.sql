-- interchange.sql: ONNX out and in (docs/interchange.md):
-- export_onnx(model_table, mst_key, opset) and load_onnx_model(...),
-- over the C converters of src/pg/api/onnx.c.

-- ---------------------------------------------------------------------
-- C functions
-- ---------------------------------------------------------------------

-- The model (architecture and flat float32 weights) as an ONNX ModelProto.
CREATE FUNCTION madlib_dl._onnx_export(model_arch json, model_weights bytea, opset integer)
RETURNS bytea
AS 'MODULE_PATHNAME', 'madlib_dl__onnx_export'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- An ONNX ModelProto as a Keras architecture and its weights.
CREATE FUNCTION madlib_dl._onnx_import(onnx bytea, OUT model_arch json, OUT model_weights bytea)
RETURNS record
AS 'MODULE_PATHNAME', 'madlib_dl__onnx_import'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- ---------------------------------------------------------------------
-- Drivers (internal; search_path pinned; tables come as {schema, table})
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl._export_onnx(mtbl text[], mst_key integer, opset integer)
RETURNS bytea
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m record;
BEGIN
    PERFORM madlib_dl._assert_not_null(opset, 'opset');
    -- _ep_model checks the tables' column types before reading them
    m := madlib_dl._ep_model(mtbl, mst_key);
    IF m.model_weights IS NULL THEN
        RAISE EXCEPTION 'model table "%" has no weights', madlib_dl._table_label(mtbl)
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Export a model table that fit or fit_multiple_model wrote.';
    END IF;
    RETURN madlib_dl._onnx_export(m.model_arch, m.model_weights, opset);
END
$$;

CREATE FUNCTION madlib_dl._load_onnx_model(tbl text[], onnx bytea, name varchar, description varchar)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
BEGIN
    PERFORM madlib_dl._assert_not_null(onnx, 'onnx');
    -- converted (and refused) before any table is touched
    r := madlib_dl._onnx_import(onnx);
    PERFORM madlib_dl._load_keras_model(tbl, r.model_arch, r.model_weights, name, description);
END
$$;

-- ---------------------------------------------------------------------
-- Public API
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl.export_onnx(model_table varchar, mst_key integer DEFAULT NULL,
                                      opset integer DEFAULT 17)
RETURNS bytea
LANGUAGE sql STABLE SECURITY INVOKER
AS $$
    SELECT madlib_dl._export_onnx(madlib_dl._resolve_table($1, 'model_table'), $2, $3)
$$;

CREATE FUNCTION madlib_dl.load_onnx_model(model_arch_table varchar, onnx bytea,
                                          name varchar DEFAULT NULL,
                                          description varchar DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._load_onnx_model(
        madlib_dl._resolve_table($1, 'model_arch_table'), $2, $3, $4)
$$;

-- Help text, as MADlib's fn() and fn('usage').  export_onnx's one-text
-- form would be export_onnx(model_table) itself, so its help is
-- export_onnx() only.
CREATE FUNCTION madlib_dl.load_onnx_model(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
SELECT CASE WHEN lower(coalesce(message, '')) IN ('usage', 'help', '?') THEN
$usage$load_onnx_model: convert an ONNX model (e.g. PyTorch's torch.onnx.export)
into a Keras architecture and weights, stored in a model architecture table
as load_keras_model stores them (the table is created on first use).

    SELECT madlib_dl.load_onnx_model(
        model_arch_table  VARCHAR,  -- table to insert into (name or schema.name)
        onnx              BYTEA,    -- the .onnx file's bytes
        name              VARCHAR,  -- optional
        description       VARCHAR   -- optional
    );

The model takes its rows in the ONNX model's own layout (NCHW for a
PyTorch CNN); predict_byom, evaluate and fit (warm start from the imported
weights) use it like any architecture.  Unsupported operators are refused,
naming the node.  docs/interchange.md lists the operators.

See also: SELECT madlib_dl.export_onnx();$usage$
ELSE
$summary$load_onnx_model: store an ONNX model as an architecture with its weights.

    SELECT madlib_dl.load_onnx_model('model_arch_library', pg_read_binary_file('/path/model.onnx'),
                                     'name', 'description');

For all parameters: SELECT madlib_dl.load_onnx_model('usage');$summary$
END
$$;

CREATE FUNCTION madlib_dl.load_onnx_model()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.load_onnx_model(''::varchar) $$;

CREATE FUNCTION madlib_dl.export_onnx()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
SELECT $usage$export_onnx: a trained model as an ONNX file (bytea), for ONNX Runtime and
every other ONNX consumer.

    SELECT madlib_dl.export_onnx(
        model_table  VARCHAR,            -- fit's or fit_multiple_model's output table
        mst_key      INTEGER DEFAULT NULL, -- the model of a fit_multiple_model table
        opset        INTEGER DEFAULT 17  -- ONNX opset, 13 to 17
    );

Inputs and outputs carry the Keras layers' names and shapes (channels
last, as madlib_dl's predict takes them) with a dynamic batch dimension N.
docs/interchange.md lists the layers and the operators they become.

See also: SELECT madlib_dl.load_onnx_model('usage');$usage$
$$;
