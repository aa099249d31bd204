-- 10_arch.sql: Keras model architecture tables, as in MADlib
-- (keras_model_arch_table): load_keras_model, delete_keras_model,
-- keras_model_summary, and the C helpers over architectures and weights
-- (src/pg/api/arch.c).

-- ---------------------------------------------------------------------
-- C functions
-- ---------------------------------------------------------------------

-- Parse model_arch (ERROR when NULL, malformed or unsupported) and check
-- model_weights, when not NULL, holds exactly P finite float32 values.
-- Returns P, the number of parameters.
CREATE FUNCTION madlib_dl._validate_arch(model_arch json, model_weights bytea)
RETURNS bigint
AS 'MODULE_PATHNAME', 'madlib_dl__validate_arch'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- Facts the drivers check data against.  output_shape's last dimension
-- is the number of classes; equal fingerprints accept each other's weights.
CREATE FUNCTION madlib_dl._arch_info(model_arch json,
    OUT input_shape integer[], OUT output_shape integer[],
    OUT n_params bigint, OUT n_trainable bigint, OUT n_layers integer,
    OUT fingerprint bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'madlib_dl__arch_info'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Each input (io 'input') and output ('output') of the model, in its
-- order (position from 0), with its layer's name and its shape per
-- sample: a packed table gives one independent variable per input and
-- one dependent variable per output, in this order.
CREATE FUNCTION madlib_dl._arch_io(model_arch json)
RETURNS TABLE (io text, "position" integer, name text, shape integer[])
AS 'MODULE_PATHNAME', 'madlib_dl__arch_io'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 2;

-- One row per layer, in model order, like Keras model.summary().
CREATE FUNCTION madlib_dl.keras_model_summary(model_arch json)
RETURNS TABLE (layer_name text, layer_type text, output_shape integer[], n_params bigint)
AS 'MODULE_PATHNAME', 'madlib_dl_keras_model_summary'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 10;

-- model_weights (flat little-endian float32) as real[], and back.
CREATE FUNCTION madlib_dl.weights_to_array(model_weights bytea)
RETURNS real[]
AS 'MODULE_PATHNAME', 'madlib_dl_weights_to_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION madlib_dl.weights_from_array(weights real[])
RETURNS bytea
AS 'MODULE_PATHNAME', 'madlib_dl_weights_from_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- ---------------------------------------------------------------------
-- Drivers (internal; search_path pinned; tables come as {schema, table})
-- ---------------------------------------------------------------------

-- Insert one architecture into tbl, creating the table on first use.
CREATE FUNCTION madlib_dl._load_keras_model(tbl text[], model_arch json, model_weights bytea,
                                            name varchar, description varchar)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass;
BEGIN
    PERFORM madlib_dl._assert_not_null(model_arch, 'model_arch');
    -- Validate before touching any table, so a bad model leaves no trace.
    PERFORM madlib_dl._validate_arch(model_arch, model_weights);

    IF madlib_dl._table_oid(tbl) IS NULL THEN
        PERFORM madlib_dl._assert_schema_exists(tbl);
        EXECUTE format(
            'CREATE TABLE IF NOT EXISTS %I.%I ('
            '  model_id serial PRIMARY KEY,'
            '  model_arch json,'
            '  model_weights bytea,'
            '  name text,'
            '  description text,'
            '  __internal_madlib_id__ text UNIQUE)%s', tbl[1], tbl[2], madlib_dl._replicated_clause());
    END IF;
    rel := madlib_dl._assert_table_exists(tbl, 'keras_model_arch_table');
    PERFORM madlib_dl._assert_columns(rel,
        ARRAY['model_id', 'model_arch', 'model_weights', 'name', 'description',
              '__internal_madlib_id__'],
        ARRAY['integer', 'json', 'bytea', 'text', 'text', 'text'],
        'a model architecture table made by load_keras_model');
    -- appending to an existing table: only one of the caller's own, with
    -- no other role's trigger, rule or default (docs/security.md)
    PERFORM madlib_dl._assert_writable_table(rel, 'a model architecture table made by load_keras_model');

    EXECUTE format(
        'INSERT INTO %I.%I (model_arch, model_weights, name, description, __internal_madlib_id__)'
        ' VALUES ($1, $2, $3, $4, $5)', tbl[1], tbl[2])
    USING model_arch, model_weights, name::text, description::text,
          '__madlib_temp_' || replace(md5(random()::text || clock_timestamp()::text)::uuid::text, '-', '_');
END
$$;

-- Delete model model_id from tbl; drop the table when it becomes empty.
CREATE FUNCTION madlib_dl._delete_keras_model(tbl text[], model_id integer)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass;
    n bigint;
    left_over boolean;
BEGIN
    PERFORM madlib_dl._assert_not_null(model_id, 'model_id');
    rel := madlib_dl._assert_table_exists(tbl, 'keras_model_arch_table');
    PERFORM madlib_dl._assert_columns(rel, ARRAY['model_id'], ARRAY['integer'],
        'a model architecture table made by load_keras_model');
    PERFORM madlib_dl._assert_writable_table(rel, 'a model architecture table made by load_keras_model');

    -- No load may slip in between the emptiness check and the DROP.
    EXECUTE format('LOCK TABLE %I.%I IN EXCLUSIVE MODE', tbl[1], tbl[2]);
    EXECUTE format('DELETE FROM %I.%I WHERE model_id = $1', tbl[1], tbl[2]) USING model_id;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n = 0 THEN
        RAISE EXCEPTION 'model id % not found in table "%"', model_id, madlib_dl._table_label(tbl)
            USING ERRCODE = 'no_data_found',
                  HINT = format('SELECT model_id, name FROM %s lists the models it holds.',
                                madlib_dl._table_sql(tbl));
    END IF;

    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.%I)', tbl[1], tbl[2]) INTO left_over;
    IF NOT left_over THEN
        EXECUTE format('DROP TABLE %I.%I', tbl[1], tbl[2]);
    END IF;
END
$$;

-- ---------------------------------------------------------------------
-- Public API (MADlib signatures).  Thin wrappers: they resolve the table
-- name in the caller's search_path, then call the pinned drivers.
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl.load_keras_model(keras_model_arch_table varchar, model_arch json,
                                           model_weights bytea DEFAULT NULL,
                                           name varchar DEFAULT NULL,
                                           description varchar DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._load_keras_model(
        madlib_dl._resolve_table($1, 'keras_model_arch_table'), $2, $3, $4, $5)
$$;

CREATE FUNCTION madlib_dl.delete_keras_model(keras_model_arch_table varchar, model_id integer)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._delete_keras_model(
        madlib_dl._resolve_table($1, 'keras_model_arch_table'), $2)
$$;

-- Help text, as MADlib's fn() and fn('usage').
CREATE FUNCTION madlib_dl.load_keras_model(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
SELECT CASE WHEN lower(coalesce(message, '')) IN ('usage', 'help', '?') THEN
$usage$load_keras_model: store a Keras model architecture (and optional weights)
in a model architecture table, creating the table on first use.

    SELECT madlib_dl.load_keras_model(
        keras_model_arch_table  VARCHAR,  -- table to insert into (name or schema.name)
        model_arch              JSON,     -- Keras model.to_json()
        model_weights           BYTEA,    -- optional: float32 concatenation of
                                          -- model.get_weights(), little-endian
        name                    VARCHAR,  -- optional
        description             VARCHAR   -- optional
    );

The table has the columns
    model_id                SERIAL PRIMARY KEY
    model_arch              JSON
    model_weights           BYTEA
    name                    TEXT
    description             TEXT
    __internal_madlib_id__  TEXT UNIQUE

The architecture (and the weights' size) is checked before anything is
stored; madlib_dl.keras_model_summary(model_arch) lists its layers.
Supported: Sequential models, and Functional models of any graph with one
input and one output (branches, residual connections, merges), of Dense,
Conv2D, pooling, ZeroPadding2D, Cropping2D, UpSampling2D, Flatten, Dropout,
Activation, BatchNormalization and merge (Add, Concatenate, ...) layers,
from Keras 2.1+, tf.keras 2, Keras 3 or TensorFlow.js.

See also: SELECT madlib_dl.delete_keras_model('usage');$usage$
ELSE
$summary$load_keras_model: store a Keras model architecture in a table.

    SELECT madlib_dl.load_keras_model('model_arch_library', '<model.to_json()>'::json);
    SELECT madlib_dl.load_keras_model('model_arch_library', '<model.to_json()>'::json,
                                      '<weights>'::bytea, 'name', 'description');

For all parameters: SELECT madlib_dl.load_keras_model('usage');$summary$
END
$$;

CREATE FUNCTION madlib_dl.load_keras_model()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.load_keras_model(''::varchar) $$;

CREATE FUNCTION madlib_dl.delete_keras_model(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
SELECT CASE WHEN lower(coalesce(message, '')) IN ('usage', 'help', '?') THEN
$usage$delete_keras_model: delete one model from a model architecture table; the
table is dropped when its last model is deleted.

    SELECT madlib_dl.delete_keras_model(
        keras_model_arch_table  VARCHAR,  -- table made by load_keras_model
        model_id                INTEGER   -- model_id of the row to delete
    );

A model_id that is not in the table is an error (SQLSTATE P0002).

See also: SELECT madlib_dl.load_keras_model('usage');$usage$
ELSE
$summary$delete_keras_model: delete one model from a model architecture table.

    SELECT madlib_dl.delete_keras_model('model_arch_library', 1);

For all parameters: SELECT madlib_dl.delete_keras_model('usage');$summary$
END
$$;

CREATE FUNCTION madlib_dl.delete_keras_model()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.delete_keras_model(''::varchar) $$;

-- The help of keras_model_summary, weights_to_array and weights_from_array.
-- Their one argument is json, bytea or real[], so an untyped literal picks
-- these varchar overloads: anything but a help word is refused with a hint
-- to cast it, never answered with help text in place of the result.
CREATE FUNCTION madlib_dl._help_or_refuse(fn text, arg_type text, message varchar,
                                          usage text, summary text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF lower(coalesce(message, '')) IN ('usage', 'help', '?') THEN
        RETURN usage;
    ELSIF coalesce(message, '') = '' THEN
        RETURN summary;
    END IF;
    RAISE EXCEPTION 'madlib_dl.%() takes a % value, not the text %', fn, arg_type,
        quote_literal(CASE WHEN length(message) > 40 THEN left(message, 40) || '...' ELSE message END)
        USING ERRCODE = 'invalid_parameter_value',
              HINT = format('Cast the literal: madlib_dl.%s(''...''::%s); for help, madlib_dl.%s(''usage'').',
                            fn, arg_type, fn);
END
$$;

CREATE FUNCTION madlib_dl.keras_model_summary(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
SELECT madlib_dl._help_or_refuse('keras_model_summary', 'json', message,
$usage$keras_model_summary: the layers of a Keras architecture, one row per layer
in model order, like Keras' model.summary().

    SELECT * FROM madlib_dl.keras_model_summary(
        model_arch  JSON    -- Keras model.to_json(), as load_keras_model takes it
    );

Columns:
    layer_name    TEXT       the layer's name
    layer_type    TEXT       Dense, Conv2D, Flatten, ...
    output_shape  INTEGER[]  the shape of one sample after the layer (channels last)
    n_params      BIGINT     the layer's weights, trainable or not

A NULL architecture gives no rows; a bad one raises load_keras_model's errors
(22023, 0A000, 22000, 54000).  A literal architecture needs a cast:
keras_model_summary('{...}'::json).

See also: SELECT madlib_dl.load_keras_model('usage');$usage$,
$summary$keras_model_summary: the layers of a Keras architecture, like model.summary().

    SELECT s.* FROM model_arch_library, madlib_dl.keras_model_summary(model_arch) s
     WHERE model_id = 1;

For all parameters: SELECT madlib_dl.keras_model_summary('usage');$summary$)
$$;

CREATE FUNCTION madlib_dl.keras_model_summary()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.keras_model_summary(''::varchar) $$;

CREATE FUNCTION madlib_dl.weights_to_array(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
SELECT madlib_dl._help_or_refuse('weights_to_array', 'bytea', message,
$usage$weights_to_array: model_weights as an array of real, e.g. to inspect weights.

    SELECT madlib_dl.weights_to_array(
        model_weights  BYTEA   -- little-endian float32 values, the concatenation of
                               -- Keras get_weights(), as fit and load_keras_model store them
    );                         -- returns REAL[]

A byte length that is not a multiple of 4 is an error (22000); NULL gives NULL.
A literal needs a cast: weights_to_array('\x0000803f'::bytea).

See also: SELECT madlib_dl.weights_from_array('usage');$usage$,
$summary$weights_to_array: model_weights as an array of real.

    SELECT madlib_dl.weights_to_array(model_weights) FROM iris_model;

For all parameters: SELECT madlib_dl.weights_to_array('usage');$summary$)
$$;

CREATE FUNCTION madlib_dl.weights_to_array()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.weights_to_array(''::varchar) $$;

CREATE FUNCTION madlib_dl.weights_from_array(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
SELECT madlib_dl._help_or_refuse('weights_from_array', 'real[]', message,
$usage$weights_from_array: an array of real as model_weights, e.g. to load weights
computed in SQL.

    SELECT madlib_dl.weights_from_array(
        weights  REAL[]   -- any shape, read in row-major order; no NULL element
    );                    -- returns BYTEA: little-endian float32 values

A NULL element is an error (22004); NULL gives NULL.  A literal needs a cast:
weights_from_array('{1, 2}'::real[]).

See also: SELECT madlib_dl.weights_to_array('usage');$usage$,
$summary$weights_from_array: an array of real as model_weights.

    UPDATE model_arch_library SET model_weights = madlib_dl.weights_from_array(w) ...;

For all parameters: SELECT madlib_dl.weights_from_array('usage');$summary$)
$$;

CREATE FUNCTION madlib_dl.weights_from_array()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.weights_from_array(''::varchar) $$;
