-- madlib_dl install script, assembled from src/sql/*.sql by the Makefile.
-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION madlib_dl" to load this file. \quit

-- The extension's version, as written into every summary table.
CREATE FUNCTION version() RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 'madlib_dl 0.1.0'::text $$;
-- 01_util.sql: shared helpers for the SQL drivers (table names, argument
-- checks).  Internal: names start with "_" and may change between versions.
--
-- HOW A DRIVER USES THEM (the pattern every public function follows):
--
--   * The public function is a thin LANGUAGE sql wrapper WITHOUT a pinned
--     search_path.  It resolves each user-given table name in the caller's
--     own search_path with madlib_dl._resolve_table(name, 'param_name'),
--     which returns text[] {schema, table}, and calls the internal driver
--     with fully qualified madlib_dl.* names only:
--
--       CREATE FUNCTION madlib_dl.fit(source_table varchar, ...) RETURNS void
--       LANGUAGE sql VOLATILE SECURITY INVOKER AS $$
--         SELECT madlib_dl._fit(madlib_dl._resolve_table($1, 'source_table'), ...)
--       $$;
--
--   * The internal driver is PL/pgSQL, SECURITY INVOKER, with
--     SET search_path = pg_catalog, pg_temp.  It receives tables as text[]
--     {schema, table} and builds SQL only with format('%I.%I', t[1], t[2])
--     (or madlib_dl._table_sql(t)), with values passed by USING / %L.
--     It checks its tables with the _assert_* helpers below, which raise
--     clean errors: lowercase message naming the value, SQLSTATE, hint.
--
-- SQLSTATEs raised here (docs/errors.md has the whole table):
--   22004 null_value_not_allowed  a required argument is NULL
--   42602 invalid_name            a table name that is not name or schema.name
--   3F000 invalid_schema_name     the schema of an output table does not exist
--   42P01 undefined_table         an input table does not exist
--   42P07 duplicate_table         an output table already exists
--   42809 wrong_object_type       the name is a view, sequence, ...
--   42703 undefined_column        a table lacks a required column
--   42804 datatype_mismatch       a required column has the wrong type

-- _resolve_table(name, param): see src/pg/names.c.  Returns {schema, table}.
-- Must be called where the caller's search_path is in effect (a LANGUAGE
-- sql wrapper), never from inside a function with a pinned search_path.
CREATE FUNCTION madlib_dl._resolve_table(name text, param text DEFAULT 'table')
RETURNS text[]
AS 'MODULE_PATHNAME', 'madlib_dl__resolve_table'
LANGUAGE C STABLE PARALLEL SAFE;

-- The qualified, quoted SQL name of a resolved table: "schema"."table" as
-- format('%I.%I') writes it.  For building dynamic SQL with %s.
CREATE FUNCTION madlib_dl._table_sql(tbl text[])
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT format('%I.%I', tbl[1], tbl[2]) $$;

-- The name of a resolved table for messages: schema.table, unquoted, as
-- PostgreSQL names relations in its own messages.
CREATE FUNCTION madlib_dl._table_label(tbl text[])
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT tbl[1] || '.' || tbl[2] $$;

-- The table {schema, table} if it exists (any relkind), else NULL.
-- Never raises for a missing schema.
CREATE FUNCTION madlib_dl._table_oid(tbl text[])
RETURNS regclass
LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT to_regclass(format('%I.%I', tbl[1], tbl[2])) $$;

-- Raise 22004 "<param> must not be NULL" when val is NULL.
--   PERFORM madlib_dl._assert_not_null(model_id, 'model_id');
CREATE FUNCTION madlib_dl._assert_not_null(val anyelement, param text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF val IS NULL THEN
        RAISE EXCEPTION '% must not be NULL', param
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = format('Give a value for %s.', param);
    END IF;
END
$$;

-- Raise 42P01 unless tbl {schema, table} exists and is a table
-- (ordinary or partitioned); 42809 if it is a view or other relation.
-- Returns its regclass.  param names the argument in messages.
--   src := madlib_dl._assert_table_exists(source_table, 'source_table');
CREATE FUNCTION madlib_dl._assert_table_exists(tbl text[], param text DEFAULT 'table')
RETURNS regclass
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass := madlib_dl._table_oid(tbl);
    kind "char";
BEGIN
    IF rel IS NULL THEN
        RAISE EXCEPTION '% "%" does not exist', param, madlib_dl._table_label(tbl)
            USING ERRCODE = 'undefined_table',
                  HINT = 'Check the table name and the search_path, or give schema.table.';
    END IF;
    SELECT c.relkind INTO kind FROM pg_class c WHERE c.oid = rel;
    IF kind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '% "%" is not a table', param, madlib_dl._table_label(tbl)
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'Give the name of an ordinary table.';
    END IF;
    RETURN rel;
END
$$;

-- Raise 3F000 unless the schema of tbl {schema, table} exists.  Call it
-- before creating an output table, for a clean message.
CREATE FUNCTION madlib_dl._assert_schema_exists(tbl text[])
RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF to_regnamespace(quote_ident(tbl[1])) IS NULL THEN
        RAISE EXCEPTION 'schema "%" does not exist', tbl[1]
            USING ERRCODE = 'invalid_schema_name',
                  HINT = 'Create the schema first, or give a table in an existing schema.';
    END IF;
END
$$;

-- Raise 42P07 when tbl {schema, table} already exists (as any relation),
-- 3F000 when its schema does not exist (so that an output table in a
-- missing schema fails before any work, with a hint).
--   PERFORM madlib_dl._assert_output_absent(output_table, 'output_table');
CREATE FUNCTION madlib_dl._assert_output_absent(tbl text[], param text DEFAULT 'output_table')
RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM madlib_dl._assert_schema_exists(tbl);
    IF madlib_dl._table_oid(tbl) IS NOT NULL THEN
        RAISE EXCEPTION '% "%" already exists', param, madlib_dl._table_label(tbl)
            USING ERRCODE = 'duplicate_table',
                  HINT = 'Drop it first, or choose another name.';
    END IF;
END
$$;

-- Raise unless table rel has every column cols[i] of type types[i]
-- (types as format_type() writes them, e.g. 'integer', 'json', 'bytea',
-- 'text', 'real[]').  A missing column: 42703; another type: 42804.
-- what says what the table should be, e.g. 'a model architecture table'.
--   PERFORM madlib_dl._assert_columns(rel, ARRAY['model_arch'], ARRAY['json'],
--                                     'a model architecture table');
CREATE FUNCTION madlib_dl._assert_columns(rel regclass, cols text[], types text[], what text)
RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i int;
    have text;
BEGIN
    FOR i IN 1 .. coalesce(array_length(cols, 1), 0) LOOP
        SELECT format_type(a.atttypid, a.atttypmod) INTO have
          FROM pg_attribute a
         WHERE a.attrelid = rel AND a.attname = cols[i]
           AND a.attnum > 0 AND NOT a.attisdropped;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'table "%" has no column "%"', rel::text, cols[i]
                USING ERRCODE = 'undefined_column',
                      HINT = format('Give %s, or a name that does not exist yet.', what);
        END IF;
        IF have <> types[i] THEN
            RAISE EXCEPTION 'column "%" of table "%" has type %, not %', cols[i], rel::text, have, types[i]
                USING ERRCODE = 'datatype_mismatch',
                      HINT = format('Give %s, or a name that does not exist yet.', what);
        END IF;
    END LOOP;
END
$$;
-- 10_arch.sql: Keras model architecture tables, as in MADlib
-- (keras_model_arch_table): load_keras_model, delete_keras_model,
-- keras_model_summary, and the C helpers over architectures and weights
-- (src/pg/arch.c).

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
            '  __internal_madlib_id__ text UNIQUE)', tbl[1], tbl[2]);
    END IF;
    rel := madlib_dl._assert_table_exists(tbl, 'keras_model_arch_table');
    PERFORM madlib_dl._assert_columns(rel,
        ARRAY['model_id', 'model_arch', 'model_weights', 'name', 'description',
              '__internal_madlib_id__'],
        ARRAY['integer', 'json', 'bytea', 'text', 'text', 'text'],
        'a model architecture table made by load_keras_model');

    EXECUTE format(
        'INSERT INTO %I.%I (model_arch, model_weights, name, description, __internal_madlib_id__)'
        ' VALUES ($1, $2, $3, $4, $5)', tbl[1], tbl[2])
    USING model_arch, model_weights, name::text, description::text,
          '__madlib_temp_' || replace(gen_random_uuid()::text, '-', '_');
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
Supported: Sequential or single-chain Functional models of Dense, Conv2D,
MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D, Flatten, Dropout,
Activation and BatchNormalization layers, from Keras 2.1+, tf.keras 2 or
Keras 3.

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
-- 20_preprocess.sql: the deep-learning preprocessors, as in MADlib
-- (input_data_preprocessor): training_preprocessor_dl and
-- validation_preprocessor_dl, their help overloads, and the packing
-- aggregates of src/pg/preprocess.c.
--
-- A preprocessed ("packed") table <out> has one row per buffer:
--   <y>            bytea    int16 little-endian one-hot, (n, num_classes)
--   <x>            bytea    float32 little-endian, (n, dims...), divided
--                           by normalizing_const
--   <y>_shape      int[]    {n, num_classes}
--   <x>_shape      int[]    {n, dims...}
--   buffer_id      int      0 .. nbuf-1
--   __dist_key__   int      the virtual segment, buffer_id % num_segments
-- and <out>_summary has one row (docs/preprocessing.md lists its columns).
--
-- How rows become buffers.  Rows get a rank rn: for training a
-- deterministic shuffle (ORDER BY hashtidextended(ctid, 42), which depends
-- only on where each row is stored, not on scan order or the session's
-- random() state); for validation the storage order (tableoid, ctid).  Buffer
-- buffer_id = rn / bs holds rows rn = buffer_id*bs .. , each at slot
-- rn % bs.  One INSERT ... SELECT ... GROUP BY buffer_id builds every
-- buffer; the C aggregates write each row at its slot, so grouping needs
-- no ordering and the wide arrays are never sorted: only (ctid, rn) is.

-- ---------------------------------------------------------------------
-- C functions and aggregates (src/pg/preprocess.c)
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl._pack_final(internal)
RETURNS bytea
AS 'MODULE_PATHNAME', 'madlib_dl__pack_final'
LANGUAGE C IMMUTABLE;

CREATE FUNCTION madlib_dl._pack_float32_sfunc(internal, anyarray, tid, integer, integer,
                                              double precision, integer[])
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__pack_float32_sfunc'
LANGUAGE C IMMUTABLE;

-- _pack_float32(x, row, slot, n, normalizing_const, dims): a buffer of n
-- rows of x / normalizing_const as float32; row x goes to slot (0..n-1).
-- x: smallint/integer/bigint/real/double precision/numeric array with
-- exactly dims; NULLs, NaN and infinities are errors naming row (ctid).
CREATE AGGREGATE madlib_dl._pack_float32(anyarray, tid, integer, integer,
                                         double precision, integer[]) (
    SFUNC = madlib_dl._pack_float32_sfunc,
    STYPE = internal,
    FINALFUNC = madlib_dl._pack_final,
    FINALFUNC_MODIFY = READ_ONLY
);

CREATE FUNCTION madlib_dl._pack_onehot_int16_sfunc(internal, integer, integer, integer, integer)
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__pack_onehot_int16_sfunc'
LANGUAGE C IMMUTABLE;

-- _pack_onehot_int16(class_index, num_classes, slot, n): a buffer of n
-- one-hot int16 rows; class_index is 0-based.
CREATE AGGREGATE madlib_dl._pack_onehot_int16(integer, integer, integer, integer) (
    SFUNC = madlib_dl._pack_onehot_int16_sfunc,
    STYPE = internal,
    FINALFUNC = madlib_dl._pack_final,
    FINALFUNC_MODIFY = READ_ONLY
);

CREATE FUNCTION madlib_dl._pack_int16_array_sfunc(internal, anyarray, tid, integer, integer, integer)
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__pack_int16_array_sfunc'
LANGUAGE C IMMUTABLE;

-- _pack_int16_array(y, row, slot, n, width): a buffer of n int16 rows
-- from one-dimensional numeric arrays of width values, each 0 or 1.
CREATE AGGREGATE madlib_dl._pack_int16_array(anyarray, tid, integer, integer, integer) (
    SFUNC = madlib_dl._pack_int16_array_sfunc,
    STYPE = internal,
    FINALFUNC = madlib_dl._pack_final,
    FINALFUNC_MODIFY = READ_ONLY
);

-- A packed float32 buffer back as real[]: flat, or with the given shape,
-- e.g. madlib_dl._unpack_float32(x, x_shape).
CREATE FUNCTION madlib_dl._unpack_float32(buffer bytea, shape integer[] DEFAULT NULL)
RETURNS real[]
AS 'MODULE_PATHNAME', 'madlib_dl__unpack_float32'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- A packed int16 buffer back as smallint[], e.g. _unpack_int16(y, y_shape).
CREATE FUNCTION madlib_dl._unpack_int16(buffer bytea, shape integer[] DEFAULT NULL)
RETURNS smallint[]
AS 'MODULE_PATHNAME', 'madlib_dl__unpack_int16'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- max(1, min(online CPUs, max_parallel_workers)).
CREATE FUNCTION madlib_dl._pp_default_segments()
RETURNS integer
AS 'MODULE_PATHNAME', 'madlib_dl__pp_default_segments'
LANGUAGE C STABLE PARALLEL SAFE;

-- ---------------------------------------------------------------------
-- Helpers of the drivers (internal; search_path pinned)
-- ---------------------------------------------------------------------

-- The number of virtual segments for distribution_rules, and the text
-- stored in the summary: NULL or 'all_segments' -> the default
-- (_default_num_segments() of the fit code when installed, else
-- _pp_default_segments()); '1' .. '64' -> that many.  Else 22023.
CREATE FUNCTION madlib_dl._pp_segments(distribution_rules text, OUT nseg integer, OUT rules text)
RETURNS record
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF distribution_rules IS NULL OR lower(btrim(distribution_rules)) = 'all_segments' THEN
        IF to_regprocedure('madlib_dl._default_num_segments()') IS NOT NULL THEN
            EXECUTE 'SELECT madlib_dl._default_num_segments()' INTO nseg;
        ELSE
            nseg := madlib_dl._pp_default_segments();
        END IF;
        rules := 'all_segments';
        RETURN;
    END IF;
    IF btrim(distribution_rules) ~ '^[0-9]{1,9}$' THEN
        nseg := btrim(distribution_rules)::integer;
        IF nseg BETWEEN 1 AND 64 THEN
            rules := nseg::text;
            RETURN;
        END IF;
    END IF;
    RAISE EXCEPTION 'distribution_rules "%" is not valid', distribution_rules
        USING ERRCODE = 'invalid_parameter_value',
              HINT = 'Give NULL or ''all_segments'' for the default number of segments, '
                     'or a number of segments from 1 to 64 as text, e.g. ''2''.';
END
$$;

-- num_classes as given by the user (NULL, an integer, or an integer array
-- of one element, as newer MADlib versions take) as one integer.
CREATE FUNCTION madlib_dl._pp_num_classes(num_classes anycompatible)
RETURNS integer
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t regtype := pg_typeof(num_classes);
    arr bigint[];
BEGIN
    IF num_classes IS NULL THEN
        RETURN NULL;
    END IF;
    IF t IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype) THEN
        RETURN num_classes::text::integer;
    END IF;
    IF t IN ('smallint[]'::regtype, 'integer[]'::regtype, 'bigint[]'::regtype) THEN
        arr := num_classes::text::bigint[];
        IF coalesce(cardinality(arr), 0) <> 1 THEN
            RAISE EXCEPTION 'num_classes % has % elements: multiple dependent variables are not supported',
                    num_classes, coalesce(cardinality(arr), 0)
                USING ERRCODE = 'feature_not_supported',
                      HINT = 'Give one number of classes, e.g. 10 or ARRAY[10].';
        END IF;
        RETURN arr[1]::integer;
    END IF;
    RAISE EXCEPTION 'num_classes must be an integer, not %', t
        USING ERRCODE = 'datatype_mismatch',
              HINT = 'Give an integer, e.g. 10, or NULL for the number of distinct class values.';
END
$$;

-- The column of rel named by varname (an identifier as SQL reads it:
-- unquoted names fold to lower case).  what ('dependent variable') words
-- the errors: a comma list is 0A000, a missing column 42703.
CREATE FUNCTION madlib_dl._pp_column(rel regclass, varname text, param text, what text,
                                     OUT colname text, OUT coltype regtype,
                                     OUT typname text, OUT elemtype regtype)
RETURNS record
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    parts text[];
BEGIN
    IF varname IS NULL OR btrim(varname) = '' THEN
        RAISE EXCEPTION '% must not be NULL or empty', param
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = format('Give the name of a column of the source table for %s.', param);
    END IF;
    IF position(',' IN varname) > 0 THEN
        RAISE EXCEPTION 'multiple % are not supported: %', what, varname
            USING ERRCODE = 'feature_not_supported',
                  HINT = format('Give one column for %s.', param);
    END IF;
    BEGIN
        parts := parse_ident(varname);
    EXCEPTION WHEN OTHERS THEN
        parts := ARRAY[varname];
    END;
    IF cardinality(parts) <> 1 THEN
        parts := ARRAY[varname];
    END IF;
    SELECT a.attname::text, a.atttypid::regtype, format_type(a.atttypid, a.atttypmod),
           CASE WHEN t.typcategory = 'A' THEN t.typelem::regtype END
      INTO colname, coltype, typname, elemtype
      FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
     WHERE a.attrelid = rel AND a.attname = parts[1] AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" does not exist in table "%"', parts[1], rel::text
            USING ERRCODE = 'undefined_column',
                  HINT = format('Give the name of a column of the source table for %s.', param);
    END IF;
END
$$;

-- The dims of the independent variable in the first row of src (in
-- storage order), checked: not NULL, not empty, numeric elements.
CREATE FUNCTION madlib_dl._pp_first_dims(src text[], col text, coltype regtype, elemtype regtype)
RETURNS integer[]
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
SET synchronize_seqscans = off
AS $$
DECLARE
    row_tid tid;
    dims integer[];
BEGIN
    IF elemtype IS NULL OR elemtype NOT IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype,
            'real'::regtype, 'double precision'::regtype, 'numeric'::regtype) THEN
        RAISE EXCEPTION 'independent variable "%" has type %, not a numeric array', col, coltype
            USING ERRCODE = 'datatype_mismatch',
                  HINT = 'Use an array of smallint, integer, bigint, real, double precision or numeric.';
    END IF;
    EXECUTE format('SELECT s.ctid, ARRAY(SELECT array_length(s.%1$I, d) '
                   '                     FROM generate_series(1, array_ndims(s.%1$I)) d) '
                   '  FROM %2$I.%3$I s LIMIT 1', col, src[1], src[2])
       INTO row_tid, dims;
    IF cardinality(dims) = 0 THEN
        RAISE EXCEPTION 'independent variable "%" is NULL or empty in the row with ctid %', col, row_tid
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = format('Find the row with SELECT * FROM %s WHERE ctid = ''%s'', then fix or delete it.',
                                madlib_dl._table_sql(src), row_tid);
    END IF;
    RETURN dims;
END
$$;

-- Buffer size as MADlib computes it: bs = ceil(min(75e6/prod(dims),
-- rows/nseg)), or the buffer_size hint; nbuf = nseg*ceil(rows/bs/nseg);
-- bs = ceil(rows/nbuf).
CREATE FUNCTION madlib_dl._pp_buffer_size(n_rows bigint, row_values bigint, nseg integer,
                                          buffer_size integer)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH b0 AS (
        SELECT coalesce(buffer_size::numeric,
                        ceil(least(75000000::numeric / row_values, n_rows::numeric / nseg))) AS bs
    ), nb AS (
        SELECT nseg * ceil(n_rows::numeric / b0.bs / nseg) AS nbuf FROM b0
    )
    SELECT ceil(n_rows::numeric / nb.nbuf)::integer FROM nb
$$;

-- Check the scalar arguments shared by both preprocessors.
CREATE FUNCTION madlib_dl._pp_check_args(buffer_size integer, normalizing_const real)
RETURNS void
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF buffer_size IS NOT NULL AND buffer_size < 1 THEN
        RAISE EXCEPTION 'buffer_size must be a positive integer or NULL, not %', buffer_size
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give NULL to let the preprocessor choose, or a number of rows per buffer.';
    END IF;
    IF normalizing_const IS NOT NULL
       AND (normalizing_const <= 0 OR normalizing_const = 'NaN'::real
            OR normalizing_const = 'Infinity'::real) THEN
        RAISE EXCEPTION 'normalizing_const must be a positive finite number, not %', normalizing_const
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the value every feature is divided by, e.g. 255.0 for 8-bit pixels, or 1.0.';
    END IF;
END
$$;

-- Raise 22000 when src has no rows; else return the row count.
CREATE FUNCTION madlib_dl._pp_count_rows(src text[])
RETURNS bigint
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM %I.%I', src[1], src[2]) INTO n;
    IF n = 0 THEN
        RAISE EXCEPTION 'source table "%" is empty', madlib_dl._table_label(src)
            USING ERRCODE = 'data_exception',
                  HINT = 'Give a table with at least one row.';
    END IF;
    RETURN n;
END
$$;

-- Create the output table and fill it with one INSERT ... SELECT.  The
-- caller has checked everything: columns and types exist, the summary
-- table summ exists and holds the class values in column cv_col.
--   dep_kind   'class' (scalar classes looked up in cv) or 'onehot'
--   cast_type  for 'class': the type the dependent variable is cast to
--              before the lookup (the class values' element type)
--   shuffle    training order (true) or storage order (false)
CREATE FUNCTION madlib_dl._pp_pack(src text[], dst text[], summ text[], cv_col text,
                                   dep_col text, indep_col text, dep_kind text, cast_type text,
                                   n_rows bigint, bs integer, nseg integer, ncls integer,
                                   normalizing_const real, dims integer[], shuffle boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dep_agg text;
    nb text := 'least($1, $2 - o.buffer_id * $1)::integer';
BEGIN
    EXECUTE format('CREATE TABLE %I.%I (%I bytea, %I bytea, %I integer[], %I integer[], '
                   'buffer_id integer, __dist_key__ integer)',
                   dst[1], dst[2], dep_col, indep_col, dep_col || '_shape', indep_col || '_shape');
    EXECUTE format('ALTER TABLE %I.%I ALTER COLUMN %I SET STORAGE EXTERNAL, '
                   'ALTER COLUMN %I SET STORAGE EXTERNAL',
                   dst[1], dst[2], dep_col, indep_col);

    IF dep_kind = 'onehot' THEN
        dep_agg := format('madlib_dl._pack_int16_array(s.%I, s.ctid, o.slot, %s, $5)', dep_col, nb);
    ELSE
        dep_agg := format('madlib_dl._pack_onehot_int16((array_position(c.cv, s.%I::%s) - 1)::integer, '
                          '$5, o.slot, %s)', dep_col, cast_type, nb);
    END IF;

    -- Each row's buffer and slot, in a narrow temporary table: the join
    -- below then hashes this table, never the wide source rows.  Rows are
    -- identified by (tableoid, ctid), unique also in a partitioned table.
    IF to_regclass('pg_temp.madlib_dl_pp_order') IS NOT NULL THEN
        DROP TABLE pg_temp.madlib_dl_pp_order;
    END IF;
    EXECUTE format($q$
        CREATE TEMPORARY TABLE madlib_dl_pp_order ON COMMIT DROP AS
        SELECT r.toid, r.tid, (r.rn / $1)::integer AS buffer_id, (r.rn %% $1)::integer AS slot
          FROM (SELECT s.tableoid AS toid, s.ctid AS tid, row_number() OVER (ORDER BY %1$s) - 1 AS rn
                  FROM %2$I.%3$I s) r
        $q$,
        CASE WHEN shuffle THEN 'hashtidextended(s.ctid, 42), s.tableoid, s.ctid'
             ELSE 's.tableoid, s.ctid' END,
        src[1], src[2])
    USING bs::bigint;
    ANALYZE pg_temp.madlib_dl_pp_order;

    EXECUTE format($q$
        INSERT INTO %1$I.%2$I (%3$I, %4$I, %5$I, %6$I, buffer_id, __dist_key__)
        SELECT %7$s,
               madlib_dl._pack_float32(s.%4$I, s.ctid, o.slot, %8$s, $3, $4),
               ARRAY[%8$s, $5],
               %8$s || $4,
               o.buffer_id,
               o.buffer_id %% $6
          FROM %9$I.%10$I s
          JOIN pg_temp.madlib_dl_pp_order o ON s.ctid = o.tid AND s.tableoid = o.toid
         CROSS JOIN (SELECT %11$I AS cv FROM %12$I.%13$I) c
         GROUP BY o.buffer_id
        $q$,
        dst[1], dst[2], dep_col, indep_col, dep_col || '_shape', indep_col || '_shape',
        dep_agg, nb, src[1], src[2], cv_col, summ[1], summ[2])
    USING bs::bigint, n_rows, normalizing_const::double precision, dims, ncls, nseg;
    DROP TABLE pg_temp.madlib_dl_pp_order;
END
$$;

-- ---------------------------------------------------------------------
-- Drivers (internal; search_path pinned; tables come as {schema, table})
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl._training_preprocessor_dl(src text[], dst text[],
        dependent_varname text, independent_varname text, buffer_size integer,
        normalizing_const real, num_classes integer, distribution_rules text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    summ text[] := ARRAY[dst[1], dst[2] || '_summary'];
    src_rel regclass;
    dep record;
    indep record;
    seg record;
    dep_kind text;
    cv_col text;
    cv_expr text;
    cast_type text;
    n_rows bigint;
    dims integer[];
    row_values bigint := 1;
    n_distinct integer;
    ncls integer;
    bs integer;
    norm real := coalesce(normalizing_const, 1.0);
    d integer;
    first_tid tid;
BEGIN
    src_rel := madlib_dl._assert_table_exists(src, 'source_table');
    PERFORM madlib_dl._assert_output_absent(dst, 'output_table');
    PERFORM madlib_dl._assert_output_absent(summ, 'output_table');
    dep := madlib_dl._pp_column(src_rel, dependent_varname, 'dependent_varname', 'dependent variables');
    indep := madlib_dl._pp_column(src_rel, independent_varname, 'independent_varname', 'independent variables');
    IF dep.colname = indep.colname THEN
        RAISE EXCEPTION 'dependent_varname and independent_varname are the same column "%"', dep.colname
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the class column and the feature array column.';
    END IF;
    PERFORM madlib_dl._pp_check_args(buffer_size, norm);
    seg := madlib_dl._pp_segments(distribution_rules);

    -- The kind of dependent variable.
    IF dep.elemtype IS NOT NULL THEN
        IF dep.elemtype NOT IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype,
                'real'::regtype, 'double precision'::regtype, 'numeric'::regtype) THEN
            RAISE EXCEPTION 'dependent variable "%" has type %, not a numeric (one-hot) array',
                    dep.colname, dep.typname
                USING ERRCODE = 'datatype_mismatch',
                      HINT = 'Use a class column (text, integer, boolean, ...) or an already one-hot numeric array.';
        END IF;
        dep_kind := 'onehot';
    ELSIF dep.coltype IN ('text'::regtype, 'character varying'::regtype, 'character'::regtype,
            'smallint'::regtype, 'integer'::regtype, 'bigint'::regtype, 'boolean'::regtype,
            'real'::regtype, 'double precision'::regtype, 'numeric'::regtype) THEN
        dep_kind := 'class';
    ELSE
        RAISE EXCEPTION 'dependent variable "%" has type %, which cannot hold class values',
                dep.colname, dep.typname
            USING ERRCODE = 'datatype_mismatch',
                  HINT = 'Use text, character varying, character, smallint, integer, bigint, boolean, '
                         'real, double precision or numeric classes, or a one-hot numeric array.';
    END IF;

    n_rows := madlib_dl._pp_count_rows(src);
    dims := madlib_dl._pp_first_dims(src, indep.colname, indep.coltype, indep.elemtype);
    FOREACH d IN ARRAY dims LOOP
        row_values := row_values * d;
    END LOOP;

    -- Class values: the sorted distinct values, NULL first; for one-hot
    -- arrays NULL (as MADlib), the width coming from the first row.
    cv_col := dep.colname || '_class_values';
    IF dep_kind = 'class' THEN
        cv_expr := format('(SELECT array_agg(DISTINCT s.%1$I ORDER BY s.%1$I NULLS FIRST) FROM %2$I.%3$I s)',
                          dep.colname, src[1], src[2]);
    ELSE
        cv_expr := format('NULL::%s', dep.typname);
    END IF;
    EXECUTE format($q$
        CREATE TABLE %I.%I AS
        SELECT $1::text AS source_table, $2::text AS output_table,
               ARRAY[$3]::text[] AS dependent_varname, ARRAY[$4]::text[] AS independent_varname,
               ARRAY[$5]::text[] AS dependent_vartype,
               %s AS %I,
               NULL::integer AS buffer_size, $6::real AS normalizing_const,
               NULL::integer[] AS num_classes, $7::text AS distribution_rules,
               'all_segments'::text AS __internal_gpu_config__, $8::integer AS num_segments
        $q$, summ[1], summ[2], cv_expr, cv_col)
    USING madlib_dl._table_label(src), madlib_dl._table_label(dst), dep.colname, indep.colname,
          dep.typname, norm, seg.rules, seg.nseg;

    IF dep_kind = 'class' THEN
        EXECUTE format('SELECT cardinality(%I) FROM %I.%I', cv_col, summ[1], summ[2]) INTO n_distinct;
        ncls := coalesce(num_classes, n_distinct);
        IF ncls < n_distinct THEN
            RAISE EXCEPTION 'num_classes % is smaller than the % distinct class values', ncls, n_distinct
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = format('Give num_classes of at least %s, or NULL to use the number of distinct values.',
                                    n_distinct);
        END IF;
        IF ncls > n_distinct THEN
            -- MADlib pads the class values with NULL classes.
            EXECUTE format('UPDATE %1$I.%2$I SET %3$I = %3$I || array_fill(NULL::%4$s, ARRAY[$1])',
                           summ[1], summ[2], cv_col, format_type(dep.coltype, NULL))
            USING ncls - n_distinct;
        END IF;
        cast_type := format_type(dep.coltype, NULL);
    ELSE
        EXECUTE format('SELECT s.ctid, array_length(s.%1$I, 1) FROM %2$I.%3$I s LIMIT 1',
                       dep.colname, src[1], src[2])
           INTO first_tid, ncls;
        IF ncls IS NULL THEN
            RAISE EXCEPTION 'dependent variable is NULL or empty in the row with ctid %', first_tid
                USING ERRCODE = 'null_value_not_allowed',
                      HINT = format('Find the row with SELECT * FROM %s WHERE ctid = ''%s'', then fix or delete it.',
                                    madlib_dl._table_sql(src), first_tid);
        END IF;
        IF num_classes IS NOT NULL AND num_classes <> ncls THEN
            RAISE EXCEPTION 'num_classes % does not match the % values of the one-hot dependent variable',
                    num_classes, ncls
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Give NULL for num_classes: a one-hot array has one value per class.';
        END IF;
    END IF;

    bs := madlib_dl._pp_buffer_size(n_rows, row_values, seg.nseg, buffer_size);
    EXECUTE format('UPDATE %I.%I SET buffer_size = $1, num_classes = ARRAY[$2]', summ[1], summ[2])
    USING bs, ncls;

    PERFORM madlib_dl._pp_pack(src, dst, summ, cv_col, dep.colname, indep.colname, dep_kind, cast_type,
                               n_rows, bs, seg.nseg, ncls, norm, dims, true);
    IF madlib_dl._is_greenplum() THEN   -- place buffer b on segment b % nseg (90_greenplum.sql)
        PERFORM madlib_dl._gp_place_buffers(dst);
    END IF;
END
$$;

CREATE FUNCTION madlib_dl._validation_preprocessor_dl(src text[], dst text[],
        dependent_varname text, independent_varname text, train text[],
        buffer_size integer, distribution_rules text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    summ text[] := ARRAY[dst[1], dst[2] || '_summary'];
    tsumm text[] := ARRAY[train[1], train[2] || '_summary'];
    src_rel regclass;
    train_rel regclass;
    tsumm_rel regclass;
    dep record;
    indep record;
    seg record;
    ts record;
    dep_kind text;
    cv_col text;
    cast_type text;
    n_rows bigint;
    dims integer[];
    train_dims integer[];
    row_values bigint := 1;
    ncls integer;
    bs integer;
    d integer;
    bad_value text;
    first_tid tid;
BEGIN
    src_rel := madlib_dl._assert_table_exists(src, 'source_table');
    PERFORM madlib_dl._assert_output_absent(dst, 'output_table');
    PERFORM madlib_dl._assert_output_absent(summ, 'output_table');
    train_rel := madlib_dl._assert_table_exists(train, 'training_preprocessor_table');
    tsumm_rel := madlib_dl._assert_table_exists(tsumm, 'training_preprocessor_table summary');
    PERFORM madlib_dl._assert_columns(tsumm_rel,
        ARRAY['dependent_varname', 'independent_varname', 'dependent_vartype', 'normalizing_const',
              'num_classes', 'num_segments'],
        ARRAY['text[]', 'text[]', 'text[]', 'real', 'integer[]', 'integer'],
        'the summary of a table made by training_preprocessor_dl');
    EXECUTE format('SELECT dependent_varname[1] AS dep, independent_varname[1] AS indep, '
                   'dependent_vartype[1] AS vartype, normalizing_const, num_classes[1] AS ncls, '
                   'num_segments FROM %I.%I', tsumm[1], tsumm[2])
       INTO ts;
    cv_col := ts.dep || '_class_values';

    dep := madlib_dl._pp_column(src_rel, dependent_varname, 'dependent_varname', 'dependent variables');
    indep := madlib_dl._pp_column(src_rel, independent_varname, 'independent_varname', 'independent variables');
    IF dep.colname = indep.colname THEN
        RAISE EXCEPTION 'dependent_varname and independent_varname are the same column "%"', dep.colname
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the class column and the feature array column.';
    END IF;
    PERFORM madlib_dl._pp_check_args(buffer_size, NULL);
    IF distribution_rules IS NULL THEN
        seg := madlib_dl._pp_segments(ts.num_segments::text);
    ELSE
        seg := madlib_dl._pp_segments(distribution_rules);
    END IF;

    -- The dependent variable must be of the training data's kind.
    IF ts.vartype LIKE '%[]' THEN
        IF dep.elemtype IS NULL OR dep.elemtype NOT IN ('smallint'::regtype, 'integer'::regtype,
                'bigint'::regtype, 'real'::regtype, 'double precision'::regtype, 'numeric'::regtype) THEN
            RAISE EXCEPTION 'dependent variable "%" has type %, but the training data has one-hot arrays of type %',
                    dep.colname, dep.typname, ts.vartype
                USING ERRCODE = 'datatype_mismatch',
                      HINT = 'Give a one-hot numeric array column, as for training.';
        END IF;
        dep_kind := 'onehot';
    ELSE
        IF dep.elemtype IS NOT NULL THEN
            RAISE EXCEPTION 'dependent variable "%" has type %, but the training data has class values of type %',
                    dep.colname, dep.typname, ts.vartype
                USING ERRCODE = 'datatype_mismatch',
                      HINT = 'Give a class column of the training data''s type.';
        END IF;
        dep_kind := 'class';
        SELECT format_type(t.typelem, NULL) INTO cast_type
          FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
         WHERE a.attrelid = tsumm_rel AND a.attname = cv_col AND NOT a.attisdropped;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'table "%" has no column "%"', tsumm_rel::text, cv_col
                USING ERRCODE = 'undefined_column',
                      HINT = 'Give a table made by training_preprocessor_dl.';
        END IF;
    END IF;

    n_rows := madlib_dl._pp_count_rows(src);
    dims := madlib_dl._pp_first_dims(src, indep.colname, indep.coltype, indep.elemtype);
    EXECUTE format('SELECT %I[2:] FROM %I.%I LIMIT 1', ts.indep || '_shape', train[1], train[2])
       INTO train_dims;
    IF train_dims IS DISTINCT FROM dims THEN
        RAISE EXCEPTION 'independent variable "%" has shape % in the first row, but the training data has shape %',
                indep.colname, dims, train_dims
            USING ERRCODE = 'data_exception',
                  HINT = 'Validation rows must have the shape of the training rows.';
    END IF;
    FOREACH d IN ARRAY dims LOOP
        row_values := row_values * d;
    END LOOP;
    ncls := ts.ncls;

    IF dep_kind = 'class' THEN
        -- Every class must be a training class; NULL only if NULL was a
        -- class in training (it sorts first), not a padding slot.
        EXECUTE format($q$
            SELECT quote_nullable(s.%1$I)
              FROM %2$I.%3$I s, (SELECT %4$I AS cv FROM %5$I.%6$I) c
             WHERE CASE WHEN s.%1$I IS NULL THEN c.cv[1] IS NOT NULL
                        ELSE array_position(c.cv, s.%1$I::%7$s) IS NULL END
             LIMIT 1 $q$,
            dep.colname, src[1], src[2], cv_col, tsumm[1], tsumm[2], cast_type)
           INTO bad_value;
        IF bad_value IS NOT NULL THEN
            RAISE EXCEPTION 'class value % of dependent variable "%" is not among the class values of the training data',
                    bad_value, dep.colname
                USING ERRCODE = 'data_exception',
                      HINT = format('The training classes are listed in %s of %s; validation data may use only those.',
                                    cv_col, madlib_dl._table_sql(tsumm));
        END IF;
    ELSE
        EXECUTE format('SELECT s.ctid, array_length(s.%1$I, 1) FROM %2$I.%3$I s LIMIT 1',
                       dep.colname, src[1], src[2])
           INTO first_tid, d;
        IF d IS DISTINCT FROM ncls THEN
            RAISE EXCEPTION 'dependent variable has % values in the row with ctid %, but the training data has % classes',
                    coalesce(d::text, 'no'), first_tid, ncls
                USING ERRCODE = 'data_exception',
                      HINT = 'Each one-hot array must have one value per training class.';
        END IF;
    END IF;

    bs := madlib_dl._pp_buffer_size(n_rows, row_values, seg.nseg, buffer_size);
    EXECUTE format($q$
        CREATE TABLE %I.%I AS
        SELECT $1::text AS source_table, $2::text AS output_table,
               ARRAY[$3]::text[] AS dependent_varname, ARRAY[$4]::text[] AS independent_varname,
               ARRAY[$5]::text[] AS dependent_vartype,
               (SELECT %I FROM %I.%I) AS %I,
               $6::integer AS buffer_size, $7::real AS normalizing_const,
               ARRAY[$8]::integer[] AS num_classes, $9::text AS distribution_rules,
               'all_segments'::text AS __internal_gpu_config__, $10::integer AS num_segments
        $q$, summ[1], summ[2], cv_col, tsumm[1], tsumm[2], dep.colname || '_class_values')
    USING madlib_dl._table_label(src), madlib_dl._table_label(dst), dep.colname, indep.colname,
          dep.typname, bs, ts.normalizing_const, ncls, seg.rules, seg.nseg;

    PERFORM madlib_dl._pp_pack(src, dst, summ, dep.colname || '_class_values', dep.colname, indep.colname,
                               dep_kind, cast_type, n_rows, bs, seg.nseg, ncls,
                               ts.normalizing_const, dims, false);
    IF madlib_dl._is_greenplum() THEN   -- place buffer b on segment b % nseg (90_greenplum.sql)
        PERFORM madlib_dl._gp_place_buffers(dst);
    END IF;
END
$$;

-- ---------------------------------------------------------------------
-- Public API (MADlib signatures).  Thin wrappers: they resolve the table
-- names in the caller's search_path, then call the pinned drivers.
-- ---------------------------------------------------------------------

-- num_classes takes an integer or a one-element integer array (newer
-- MADlib).  It is declared anycompatible so that an untyped NULL, as in
-- MADlib's documented (..., 1000, 255, NULL, 'all_segments'), is not
-- ambiguous between two overloads.
CREATE FUNCTION madlib_dl.training_preprocessor_dl(source_table varchar, output_table varchar,
        dependent_varname varchar, independent_varname varchar,
        buffer_size integer DEFAULT NULL, normalizing_const real DEFAULT 1.0,
        num_classes anycompatible DEFAULT NULL, distribution_rules text DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._training_preprocessor_dl(
        madlib_dl._resolve_table($1, 'source_table'), madlib_dl._resolve_table($2, 'output_table'),
        $3, $4, $5, $6, madlib_dl._pp_num_classes($7), $8)
$$;

CREATE FUNCTION madlib_dl.validation_preprocessor_dl(source_table varchar, output_table varchar,
        dependent_varname varchar, independent_varname varchar,
        training_preprocessor_table varchar,
        buffer_size integer DEFAULT NULL, distribution_rules text DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._validation_preprocessor_dl(
        madlib_dl._resolve_table($1, 'source_table'), madlib_dl._resolve_table($2, 'output_table'),
        $3, $4, madlib_dl._resolve_table($5, 'training_preprocessor_table'), $6, $7)
$$;

-- Help text, as MADlib's fn() and fn('usage').
CREATE FUNCTION madlib_dl.training_preprocessor_dl(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
SELECT CASE WHEN lower(coalesce(message, '')) IN ('usage', 'help', '?') THEN
$usage$
training_preprocessor_dl: pack a training table into buffers of float32
features and one-hot int16 classes, spread over the segments.

    SELECT madlib_dl.training_preprocessor_dl(
        source_table         VARCHAR,  -- table with one example per row
        output_table         VARCHAR,  -- packed table to create (and <output_table>_summary)
        dependent_varname    VARCHAR,  -- class column (text, varchar, integer, boolean,
                                       -- double, ...; NULL is a class), or a one-hot
                                       -- numeric array column
        independent_varname  VARCHAR,  -- numeric array column, any rank
        buffer_size          INTEGER,  -- optional: rows per buffer hint (default: computed)
        normalizing_const    REAL,     -- optional: features are divided by it (default 1.0)
        num_classes          INTEGER,  -- optional: pad the classes with NULL classes up to
                                       -- this number (also ARRAY[n])
        distribution_rules   TEXT      -- optional: 'all_segments' (default) or a number of
                                       -- virtual segments, e.g. '2'
    );

Output table, one row per buffer:
    <dependent_varname>          BYTEA    int16 one-hot, little-endian, (n, num_classes)
    <independent_varname>        BYTEA    float32, little-endian, (n, dims...)
    <dependent_varname>_shape    INTEGER[] {n, num_classes}
    <independent_varname>_shape  INTEGER[] {n, dims...}
    buffer_id                    INTEGER
    __dist_key__                 INTEGER  segment of the buffer: buffer_id % num_segments

<output_table>_summary: source_table, output_table, dependent_varname,
independent_varname, dependent_vartype, <dependent_varname>_class_values,
buffer_size, normalizing_const, num_classes, distribution_rules,
__internal_gpu_config__, num_segments.

Rows are shuffled deterministically.  madlib_dl._unpack_float32(x, x_shape)
and madlib_dl._unpack_int16(y, y_shape) turn buffers back into arrays.

See also: SELECT madlib_dl.validation_preprocessor_dl('usage');
$usage$
ELSE
$summary$
training_preprocessor_dl: pack a training table for madlib_keras_fit.

    SELECT madlib_dl.training_preprocessor_dl('iris', 'iris_packed', 'class_text', 'attributes');
    SELECT madlib_dl.training_preprocessor_dl('mnist', 'mnist_packed', 'y', 'x', NULL, 255);

For all parameters: SELECT madlib_dl.training_preprocessor_dl('usage');
$summary$
END
$$;

CREATE FUNCTION madlib_dl.training_preprocessor_dl()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.training_preprocessor_dl(''::varchar) $$;

CREATE FUNCTION madlib_dl.validation_preprocessor_dl(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
SELECT CASE WHEN lower(coalesce(message, '')) IN ('usage', 'help', '?') THEN
$usage$
validation_preprocessor_dl: pack a validation (or test) table the way a
training table was packed, reusing its classes, normalizing_const and
num_classes.

    SELECT madlib_dl.validation_preprocessor_dl(
        source_table                 VARCHAR,  -- table with one example per row
        output_table                 VARCHAR,  -- packed table to create (and <output_table>_summary)
        dependent_varname            VARCHAR,  -- class column, of the training data's kind
        independent_varname          VARCHAR,  -- numeric array column, of the training shape
        training_preprocessor_table  VARCHAR,  -- output_table of training_preprocessor_dl
        buffer_size                  INTEGER,  -- optional: rows per buffer hint
        distribution_rules           TEXT      -- optional: default the training table's
                                               -- number of segments, else as for training
    );

The output tables have the columns of training_preprocessor_dl's.  Rows
keep their storage order.  A class value that is not a training class is
an error that names it.

See also: SELECT madlib_dl.training_preprocessor_dl('usage');
$usage$
ELSE
$summary$
validation_preprocessor_dl: pack a validation table like its training table.

    SELECT madlib_dl.validation_preprocessor_dl('iris_test', 'iris_test_packed',
                                                'class_text', 'attributes', 'iris_packed');

For all parameters: SELECT madlib_dl.validation_preprocessor_dl('usage');
$summary$
END
$$;

CREATE FUNCTION madlib_dl.validation_preprocessor_dl()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.validation_preprocessor_dl(''::varchar) $$;
-- 30_fit.sql: madlib_keras_fit / fit, as in MADlib (madlib_keras.sql_in),
-- trained by model averaging over the virtual segments (src/pg/fit.c,
-- src/pg/segments.c).  docs/fit.md is the user page.

-- ---------------------------------------------------------------------
-- C functions
-- ---------------------------------------------------------------------

-- max(1, min(online CPUs, max_parallel_workers)): the number of virtual
-- segments the preprocessors use by default.
CREATE FUNCTION madlib_dl._default_num_segments()
RETURNS integer
AS 'MODULE_PATHNAME', 'madlib_dl__default_num_segments'
LANGUAGE C STABLE PARALLEL SAFE;

-- Parse compile_params and fit_params with the engine (ERROR otherwise);
-- returns what the summary tables record.
CREATE FUNCTION madlib_dl._check_params(compile_params text, fit_params text,
    OUT loss_type text, OUT metrics_type text[], OUT seed bigint,
    OUT epochs integer, OUT batch_size bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'madlib_dl__check_params'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- ERROR 22000 unless x_shape {n, dims...} ends in the architecture's input
-- shape and y_shape {n, classes} (may be NULL) matches its outputs.
CREATE FUNCTION madlib_dl._check_input_shape(model_arch json, x_shape integer[], y_shape integer[])
RETURNS void
AS 'MODULE_PATHNAME', 'madlib_dl__check_input_shape'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE TYPE madlib_dl._fit_result AS (
    model_weights        bytea,
    training_loss        double precision[],
    training_metrics     double precision[],
    validation_loss      double precision[],
    validation_metrics   double precision[],
    metrics_iters        integer[],
    metrics_elapsed_time double precision[],
    workers_launched     integer
);

-- The whole training run, in one call: parallel workers, one per virtual
-- segment, model averaging every iteration.  init_weights NULL: random
-- initialisation from the seed.  Writes nothing; the driver writes the
-- tables.  PARALLEL UNSAFE: it starts its own parallel workers.
CREATE FUNCTION madlib_dl._fit_run(source regclass, x_col text, y_col text,
    validation regclass, val_x_col text, val_y_col text,
    model_arch json, init_weights bytea, compile_params text, fit_params text,
    num_iterations integer, metrics_compute_frequency integer, num_segments integer)
RETURNS madlib_dl._fit_result
AS 'MODULE_PATHNAME', 'madlib_dl__fit_run'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- ---------------------------------------------------------------------
-- Driver helpers (internal; search_path pinned)
-- ---------------------------------------------------------------------

-- The summary of a packed table as jsonb (tolerates missing columns), with
-- a clear error when it is absent.  param names the argument.
CREATE FUNCTION madlib_dl._fit_packed_summary(tbl text[], param text)
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    stbl text[] := ARRAY[tbl[1], tbl[2] || '_summary'];
    srel regclass := madlib_dl._table_oid(stbl);
    js jsonb;
BEGIN
    IF srel IS NULL THEN
        RAISE EXCEPTION '% "%" has no summary table "%"', param, madlib_dl._table_label(tbl),
                        madlib_dl._table_label(stbl)
            USING ERRCODE = 'undefined_table',
                  HINT = 'Give a table made by training_preprocessor_dl or validation_preprocessor_dl.';
    END IF;
    PERFORM madlib_dl._assert_columns(srel, ARRAY['dependent_varname', 'independent_varname'],
        ARRAY['text[]', 'text[]'], 'a table made by training_preprocessor_dl');
    EXECUTE format('SELECT to_jsonb(s) FROM %s s LIMIT 1', madlib_dl._table_sql(stbl)) INTO js;
    IF js IS NULL OR js->'dependent_varname'->>0 IS NULL OR js->'independent_varname'->>0 IS NULL THEN
        RAISE EXCEPTION 'summary table "%" names no dependent or independent variable',
                        madlib_dl._table_label(stbl)
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Preprocess the data again with training_preprocessor_dl.';
    END IF;
    RETURN js;
END
$$;

-- Check a packed table's columns and its first buffer's shapes against the
-- architecture.  Returns the number of buffers.
CREATE FUNCTION madlib_dl._fit_check_packed(tbl text[], param text, x_col text, y_col text,
                                            model_arch json)
RETURNS bigint
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass := madlib_dl._assert_table_exists(tbl, param);
    xs integer[];
    ys integer[];
    nbuf bigint;
BEGIN
    PERFORM madlib_dl._assert_columns(rel,
        ARRAY[x_col, y_col, x_col || '_shape', y_col || '_shape', 'buffer_id'],
        ARRAY['bytea', 'bytea', 'integer[]', 'integer[]', 'integer'],
        'a table made by training_preprocessor_dl');
    EXECUTE format('SELECT count(*) FROM %s', madlib_dl._table_sql(tbl)) INTO nbuf;
    IF nbuf = 0 THEN
        RAISE EXCEPTION '% "%" is empty', param, madlib_dl._table_label(tbl)
            USING ERRCODE = 'no_data_found',
                  HINT = 'Preprocess a table that has rows.';
    END IF;
    EXECUTE format('SELECT %I, %I FROM %s ORDER BY buffer_id LIMIT 1',
                   x_col || '_shape', y_col || '_shape', madlib_dl._table_sql(tbl))
       INTO xs, ys;
    PERFORM madlib_dl._check_input_shape(model_arch, xs, ys);
    RETURN nbuf;
END
$$;

-- The metrics frequency of fit and fit_multiple: metrics_compute_frequency,
-- num_iterations when NULL.  ERROR unless num_iterations >= 1 and the
-- frequency is 1 to num_iterations.
CREATE FUNCTION madlib_dl._fit_check_iterations(num_iterations integer,
                                                metrics_compute_frequency integer)
RETURNS integer
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    freq integer;
BEGIN
    IF num_iterations < 1 THEN
        RAISE EXCEPTION 'num_iterations must be at least 1, got %', num_iterations
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the number of iterations to train, 1 or more.';
    END IF;
    freq := coalesce(metrics_compute_frequency, num_iterations);
    IF freq < 1 OR freq > num_iterations THEN
        RAISE EXCEPTION 'metrics_compute_frequency must be between 1 and %, got %', num_iterations, freq
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give a frequency between 1 and num_iterations, or NULL to compute metrics at the last iteration only.';
    END IF;
    RETURN freq;
END
$$;

-- The number of segments of a packed table: its summary's num_segments
-- (psum, from _fit_packed_summary), else max(__dist_key__) + 1, else 1.
-- ERROR unless it is 1 to 64 and every buffer's __dist_key__ names one.
CREATE FUNCTION madlib_dl._fit_num_segments(source text[], src_rel regclass, psum jsonb)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nseg integer;
    nt bigint;
BEGIN
    nseg := (psum->>'num_segments')::integer;
    IF nseg IS NULL THEN
        IF EXISTS (
               SELECT 1 FROM pg_attribute a WHERE a.attrelid = src_rel
                  AND a.attname = '__dist_key__' AND NOT a.attisdropped) THEN
            EXECUTE format('SELECT max(__dist_key__) + 1 FROM %s', madlib_dl._table_sql(source)) INTO nseg;
        END IF;
        nseg := coalesce(nseg, 1);
    END IF;
    IF nseg < 1 OR nseg > 64 THEN
        RAISE EXCEPTION 'source_table "%" has % segments, expected 1 to 64', madlib_dl._table_label(source), nseg
            USING ERRCODE = 'data_exception',
                  HINT = 'Preprocess the data again with training_preprocessor_dl.';
    END IF;
    IF EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = src_rel
                  AND a.attname = '__dist_key__' AND NOT a.attisdropped) THEN
        EXECUTE format('SELECT count(*) FROM %s WHERE __dist_key__ IS NULL OR __dist_key__ < 0 OR __dist_key__ >= $1',
                       madlib_dl._table_sql(source)) INTO nt USING nseg;
        IF nt > 0 THEN
            RAISE EXCEPTION 'source_table "%" has % buffers whose __dist_key__ is not a segment 0 to %',
                            madlib_dl._table_label(source), nt, nseg - 1
                USING ERRCODE = 'data_exception',
                      HINT = 'Preprocess the data again with training_preprocessor_dl; do not edit its __dist_key__ column.';
        END IF;
    END IF;
    RETURN nseg;
END
$$;

-- ---------------------------------------------------------------------
-- The driver
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl._fit(source text[], model text[], arch_tbl text[], model_id integer,
    compile_params varchar, fit_params varchar, num_iterations integer, use_gpus boolean,
    validation text[], metrics_compute_frequency integer, warm_start boolean,
    name varchar, description varchar, object_table varchar)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    summary_tbl text[] := ARRAY[model[1], model[2] || '_summary'];
    arch_rel regclass;
    src_rel regclass;
    val_rel regclass;
    psum jsonb;
    vsum jsonb;
    x_col text;
    y_col text;
    vx_col text;
    vy_col text;
    arch json;
    arch_weights bytea;
    old_arch json;
    init_weights bytea;
    params record;
    freq integer;
    nseg integer;
    cv_col text;
    cv_type text;
    t_start timestamp;
    t_end timestamp;
    r madlib_dl._fit_result;
    nt integer;
BEGIN
    -- 1. arguments that need no table
    PERFORM madlib_dl._assert_not_null(model_id, 'model_id');
    PERFORM madlib_dl._assert_not_null(compile_params, 'compile_params');
    PERFORM madlib_dl._assert_not_null(num_iterations, 'num_iterations');
    IF coalesce(use_gpus, false) THEN
        RAISE EXCEPTION 'use_gpus is not supported: this build of madlib_dl has no GPU backend'
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Call fit with use_gpus => false; training runs on the CPU cores of all segments.';
    END IF;
    IF object_table IS NOT NULL THEN
        RAISE EXCEPTION 'object_table is not supported: custom loss and metric functions are not available'
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Pass object_table => NULL and use a built-in loss and metric.';
    END IF;
    freq := madlib_dl._fit_check_iterations(num_iterations, metrics_compute_frequency);
    params := madlib_dl._check_params(compile_params, fit_params);

    -- 2. tables: inputs exist, outputs absent (or present for warm start)
    src_rel := madlib_dl._assert_table_exists(source, 'source_table');
    psum := madlib_dl._fit_packed_summary(source, 'source_table');
    y_col := psum->'dependent_varname'->>0;
    x_col := psum->'independent_varname'->>0;
    IF warm_start THEN
        PERFORM madlib_dl._assert_columns(madlib_dl._assert_table_exists(model, 'model'),
            ARRAY['model_weights', 'model_arch'], ARRAY['bytea', 'json'],
            'the model table of an earlier fit (warm_start)');
    ELSE
        PERFORM madlib_dl._assert_output_absent(model, 'model');
        PERFORM madlib_dl._assert_output_absent(summary_tbl, 'model summary table');
    END IF;
    arch_rel := madlib_dl._assert_table_exists(arch_tbl, 'model_arch_table');
    PERFORM madlib_dl._assert_columns(arch_rel, ARRAY['model_id', 'model_arch', 'model_weights'],
        ARRAY['integer', 'json', 'bytea'], 'a model architecture table made by load_keras_model');
    EXECUTE format('SELECT count(*), (array_agg(model_arch))[1], (array_agg(model_weights))[1]'
                   '  FROM %s WHERE model_id = $1', madlib_dl._table_sql(arch_tbl))
       INTO nt, arch, arch_weights USING model_id;
    IF nt = 0 THEN
        RAISE EXCEPTION 'model_id % not found in model architecture table "%"', model_id,
                        madlib_dl._table_label(arch_tbl)
            USING ERRCODE = 'no_data_found',
                  HINT = format('SELECT model_id, name FROM %s lists the architectures it holds.',
                                madlib_dl._table_sql(arch_tbl));
    END IF;
    PERFORM madlib_dl._assert_not_null(arch, 'model_arch');
    PERFORM madlib_dl._fit_check_packed(source, 'source_table', x_col, y_col, arch);
    IF validation IS NOT NULL THEN
        val_rel := madlib_dl._assert_table_exists(validation, 'validation_table');
        vsum := madlib_dl._fit_packed_summary(validation, 'validation_table');
        vy_col := vsum->'dependent_varname'->>0;
        vx_col := vsum->'independent_varname'->>0;
        PERFORM madlib_dl._fit_check_packed(validation, 'validation_table', vx_col, vy_col, arch);
    END IF;

    -- 3. initial weights: warm start, else transfer learning, else random
    IF warm_start THEN
        EXECUTE format('SELECT count(*), (array_agg(model_weights))[1], (array_agg(model_arch))[1] FROM %s',
                       madlib_dl._table_sql(model))
           INTO nt, init_weights, old_arch;
        IF nt <> 1 OR init_weights IS NULL THEN
            RAISE EXCEPTION 'model table "%" for warm_start must hold one row with model_weights, it has % rows',
                            madlib_dl._table_label(model), nt
                USING ERRCODE = 'cardinality_violation',
                      HINT = 'Give the model table written by an earlier fit, or warm_start => false.';
        END IF;
        IF octet_length(init_weights) <> 4 * (madlib_dl._arch_info(arch)).n_params THEN
            RAISE EXCEPTION 'model table "%" holds % weights, but architecture % has %',
                            madlib_dl._table_label(model), octet_length(init_weights) / 4,
                            model_id, (madlib_dl._arch_info(arch)).n_params
                USING ERRCODE = 'data_exception',
                      HINT = 'Warm start with the architecture the model was trained with.';
        END IF;
        IF old_arch IS NOT NULL
           AND (madlib_dl._arch_info(old_arch)).fingerprint <> (madlib_dl._arch_info(arch)).fingerprint THEN
            RAISE EXCEPTION 'model table "%" was trained with another architecture than model_id %',
                            madlib_dl._table_label(model), model_id
                USING ERRCODE = 'data_exception',
                      HINT = 'Warm start with the architecture the model was trained with, or warm_start => false.';
        END IF;
    ELSE
        init_weights := arch_weights;   -- NULL: random initialisation
    END IF;
    IF init_weights IS NOT NULL THEN
        -- warm-start and transfer weights: right size and finite, before any work
        PERFORM madlib_dl._validate_arch(arch, init_weights);
    END IF;
    PERFORM madlib_dl._check_model_memory(arch, params.batch_size, format('model_id %s', model_id));

    IF madlib_dl._is_greenplum() THEN   -- Greenplum/Cloudberry: aggregates over the real segments (90_greenplum.sql)
        t_start := clock_timestamp();
        r := madlib_dl._gp_fit_run(src_rel, x_col, y_col, val_rel, vx_col, vy_col, arch, init_weights,
                                   compile_params, fit_params, num_iterations, freq);
        t_end := clock_timestamp();
    ELSIF madlib_dl._px_cluster_of(src_rel) IS NOT NULL THEN  -- distributed over a PL/Proxy cluster (80_plproxy.sql)
        t_start := clock_timestamp();
        r := madlib_dl._px_fit_run(src_rel, x_col, y_col, val_rel, vx_col, vy_col, arch, init_weights,
                                   compile_params, fit_params, num_iterations, freq);
        t_end := clock_timestamp();
    ELSE
    -- 4. segments: the packed table's count, else derived from its keys
    nseg := madlib_dl._fit_num_segments(source, src_rel, psum);

    -- 5. train (no table is written before this returns)
    PERFORM madlib_dl._progress_label(madlib_dl._table_label(model));
    t_start := clock_timestamp();
    r := madlib_dl._fit_run(src_rel, x_col, y_col, val_rel, vx_col, vy_col, arch, init_weights,
                            compile_params, fit_params, num_iterations, freq, nseg);
    t_end := clock_timestamp();
    END IF;

    -- 6. output tables, in this transaction
    IF warm_start THEN
        EXECUTE format('DROP TABLE %s', madlib_dl._table_sql(model));
        EXECUTE format('DROP TABLE IF EXISTS %s', madlib_dl._table_sql(summary_tbl));
    END IF;
    EXECUTE format('CREATE TABLE %s (model_weights bytea, model_arch json)', madlib_dl._table_sql(model));
    EXECUTE format('INSERT INTO %s VALUES ($1, $2)', madlib_dl._table_sql(model))
       USING r.model_weights, arch;

    cv_col := y_col || '_class_values';
    SELECT format_type(a.atttypid, a.atttypmod) INTO cv_type
      FROM pg_attribute a
     WHERE a.attrelid = madlib_dl._table_oid(ARRAY[source[1], source[2] || '_summary'])
       AND a.attname = cv_col AND a.attnum > 0 AND NOT a.attisdropped;
    EXECUTE format(
        'CREATE TABLE %s ('
        '  source_table text, model text, dependent_varname text[], independent_varname text[],'
        '  model_arch_table text, model_id integer, compile_params text, fit_params text,'
        '  num_iterations integer, validation_table text, object_table text,'
        '  metrics_compute_frequency integer, name text, description text, model_type text,'
        '  model_size double precision, start_training_time timestamp, end_training_time timestamp,'
        '  metrics_elapsed_time double precision[], madlib_version text, num_classes integer[],'
        '  dependent_vartype text[], normalizing_const real, metrics_type text[], loss_type text,'
        '  training_metrics_final double precision, training_loss_final double precision,'
        '  training_metrics double precision[], training_loss double precision[],'
        '  validation_metrics_final double precision, validation_loss_final double precision,'
        '  validation_metrics double precision[], validation_loss double precision[],'
        '  metrics_iters integer[], %I %s, seed bigint)',
        madlib_dl._table_sql(summary_tbl), cv_col, coalesce(cv_type, 'text[]'));
    EXECUTE format(
        'INSERT INTO %s SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,'
        ' $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32,'
        ' $33, $34, %s, $35',
        madlib_dl._table_sql(summary_tbl),
        CASE WHEN cv_type IS NULL THEN 'NULL::text[]'
             ELSE format('(SELECT s.%I FROM %s s LIMIT 1)', cv_col,
                         madlib_dl._table_sql(ARRAY[source[1], source[2] || '_summary'])) END)
    USING
        madlib_dl._table_label(source),                               -- source_table
        madlib_dl._table_label(model),                                -- model
        ARRAY(SELECT jsonb_array_elements_text(psum->'dependent_varname')),
        ARRAY(SELECT jsonb_array_elements_text(psum->'independent_varname')),
        madlib_dl._table_label(arch_tbl),                             -- model_arch_table
        model_id,
        compile_params::text,
        fit_params::text,
        num_iterations,
        CASE WHEN validation IS NULL THEN NULL ELSE madlib_dl._table_label(validation) END,
        object_table::text,
        freq,
        name::text,
        description::text,
        'madlib_keras'::text,                                         -- model_type
        octet_length(r.model_weights) / 1024.0::double precision,     -- model_size, KB
        t_start,
        t_end,
        r.metrics_elapsed_time,
        madlib_dl.version(),
        CASE WHEN jsonb_typeof(psum->'num_classes') = 'array'
             THEN ARRAY(SELECT jsonb_array_elements_text(psum->'num_classes'))::integer[]
             WHEN psum->'num_classes' IS NOT NULL AND jsonb_typeof(psum->'num_classes') = 'number'
             THEN ARRAY[(psum->>'num_classes')::integer] END,
        CASE WHEN jsonb_typeof(psum->'dependent_vartype') = 'array'
             THEN ARRAY(SELECT jsonb_array_elements_text(psum->'dependent_vartype')) END,
        coalesce((psum->>'normalizing_const')::real, 1.0::real),
        params.metrics_type,
        params.loss_type,
        r.training_metrics[array_upper(r.training_metrics, 1)],
        r.training_loss[array_upper(r.training_loss, 1)],
        r.training_metrics,
        r.training_loss,
        r.validation_metrics[array_upper(r.validation_metrics, 1)],
        r.validation_loss[array_upper(r.validation_loss, 1)],
        r.validation_metrics,
        r.validation_loss,
        r.metrics_iters,
        params.seed;
END
$$;

-- ---------------------------------------------------------------------
-- Public API (MADlib signatures).  Thin wrappers: they resolve the table
-- names in the caller's search_path, then call the pinned driver.
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl.madlib_keras_fit(source_table varchar, model varchar,
    model_arch_table varchar, model_id integer, compile_params varchar, fit_params varchar,
    num_iterations integer, use_gpus boolean DEFAULT false, validation_table varchar DEFAULT NULL,
    metrics_compute_frequency integer DEFAULT NULL, warm_start boolean DEFAULT false,
    name varchar DEFAULT NULL, description varchar DEFAULT NULL, object_table varchar DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
AS $$
    SELECT madlib_dl._fit(
        madlib_dl._resolve_table($1, 'source_table'),
        madlib_dl._resolve_table($2, 'model'),
        madlib_dl._resolve_table($3, 'model_arch_table'),
        $4, $5, $6, $7, $8,
        CASE WHEN $9 IS NULL THEN NULL ELSE madlib_dl._resolve_table($9, 'validation_table') END,
        $10, coalesce($11, false), $12, $13, $14)
$$;

CREATE FUNCTION madlib_dl.fit(source_table varchar, model varchar,
    model_arch_table varchar, model_id integer, compile_params varchar, fit_params varchar,
    num_iterations integer, use_gpus boolean DEFAULT false, validation_table varchar DEFAULT NULL,
    metrics_compute_frequency integer DEFAULT NULL, warm_start boolean DEFAULT false,
    name varchar DEFAULT NULL, description varchar DEFAULT NULL, object_table varchar DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
AS $$
    SELECT madlib_dl.madlib_keras_fit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
$$;

-- Help text, as MADlib's fn() and fn('usage').
CREATE FUNCTION madlib_dl.madlib_keras_fit(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $body$
SELECT CASE WHEN lower(coalesce(message, '')) IN ('usage', 'help', '?') THEN
$usage$madlib_keras_fit (also: fit): train one model on a preprocessed table, on
all virtual segments at once, by model averaging.

    SELECT madlib_dl.madlib_keras_fit(
        source_table              VARCHAR,  -- table made by training_preprocessor_dl
        model                     VARCHAR,  -- output table; <model>_summary is made too
        model_arch_table          VARCHAR,  -- table made by load_keras_model
        model_id                  INTEGER,  -- the architecture's model_id
        compile_params            VARCHAR,  -- e.g. 'loss=''categorical_crossentropy'',
                                            --   optimizer=''Adam(lr=0.01)'', metrics=[''accuracy'']'
        fit_params                VARCHAR,  -- e.g. 'batch_size=32, epochs=1, seed=42'
        num_iterations            INTEGER,  -- rounds of train-on-every-segment + average
        use_gpus                  BOOLEAN,  -- DEFAULT false (true is an error: no GPU backend)
        validation_table          VARCHAR,  -- DEFAULT NULL; made by validation_preprocessor_dl
        metrics_compute_frequency INTEGER,  -- DEFAULT NULL = num_iterations
        warm_start                BOOLEAN,  -- DEFAULT false: continue from <model>
        name                      VARCHAR,  -- DEFAULT NULL, stored in the summary
        description               VARCHAR,  -- DEFAULT NULL, stored in the summary
        object_table              VARCHAR   -- DEFAULT NULL; must be NULL (no custom functions)
    );

Each iteration every segment trains a copy of the model for `epochs`
passes over its own partition, at the same time; then the copies (weights
and optimizer state) are averaged, weighted by the samples each one saw.
Results are byte-identical for the same seed however many parallel
workers PostgreSQL launched.  The seed is fit_params' seed= (default 42),
recorded in the summary's seed column.

Output: <model> (model_weights BYTEA, model_arch JSON), one row, and
<model>_summary with MADlib's columns.  docs/fit.md describes them.$usage$
ELSE
$summary$madlib_keras_fit: train one model on a preprocessed table.

    SELECT madlib_dl.madlib_keras_fit('iris_train_packed', 'iris_model', 'model_arch_library', 1,
        $$ loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy'] $$,
        $$ batch_size=16, epochs=2 $$, 10);

For all parameters: SELECT madlib_dl.madlib_keras_fit('usage');$summary$
END
$body$;

CREATE FUNCTION madlib_dl.madlib_keras_fit()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.madlib_keras_fit(''::varchar) $$;

CREATE FUNCTION madlib_dl.fit(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.madlib_keras_fit(message) $$;

CREATE FUNCTION madlib_dl.fit()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.madlib_keras_fit(''::varchar) $$;
-- 40_evaluate_predict.sql: use a trained model, as in MADlib
-- (madlib_keras_evaluate, madlib_keras_predict, madlib_keras_predict_byom).
--
--   evaluate      loss and metric of a model on a preprocessed (packed)
--                 table, with the loss and metric of its compile_params
--   predict       class probabilities for raw rows (one example per row),
--                 normalized with the training normalizing_const
--   predict_byom  the same for weights stored in an architecture table
--
-- The numbers come from two C functions (src/pg/evaluate.c,
-- src/pg/predict.c); the PL/pgSQL drivers here check the arguments and
-- tables first and write the output table in one statement, so it appears
-- complete or not at all.  User-facing page: docs/evaluate-predict.md.

-- ---------------------------------------------------------------------
-- C functions
-- ---------------------------------------------------------------------

-- {loss, metric} of the model over every buffer of the packed table test
-- (columns dep_col, indep_col, <dep_col>_shape, <indep_col>_shape, as the
-- preprocessors write them).  metric is NULL when compile_params has none.
CREATE FUNCTION madlib_dl._evaluate_run(test regclass, dep_col text, indep_col text,
                                        model_arch json, model_weights bytea,
                                        compile_params text)
RETURNS float8[]
AS 'MODULE_PATHNAME', 'madlib_dl__evaluate_run'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- The model outputs for every row of sql_table: id_col as text and the
-- output vector for the array column indep_col divided by
-- normalizing_const.  Rows are read and predicted batch_size at a time.
CREATE FUNCTION madlib_dl._predict_rows(model_arch json, model_weights bytea,
                                        sql_table regclass, id_col text, indep_col text,
                                        normalizing_const float8,
                                        batch_size integer DEFAULT 1024)
RETURNS TABLE (id text, probs float8[])
AS 'MODULE_PATHNAME', 'madlib_dl__predict_rows'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1000;

-- ---------------------------------------------------------------------
-- Internal helpers (names start with _ep_)
-- ---------------------------------------------------------------------

-- {schema, table || suffix}: the companion tables of a model table.
CREATE FUNCTION madlib_dl._ep_suffix(tbl text[], suffix text)
RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT ARRAY[tbl[1], tbl[2] || suffix] $$;

-- True when rel has a (live) column named col.
CREATE FUNCTION madlib_dl._ep_has_column(rel regclass, col text)
RETURNS boolean
LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (SELECT 1 FROM pg_attribute a
                    WHERE a.attrelid = rel AND a.attname = col
                      AND a.attnum > 0 AND NOT a.attisdropped)
$$;

-- Raise 42P01 unless tbl exists as something rows can be read from (a
-- table, view, materialized view or foreign table); return its regclass.
CREATE FUNCTION madlib_dl._ep_assert_readable(tbl text[], param text)
RETURNS regclass
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass := madlib_dl._table_oid(tbl);
    kind "char";
BEGIN
    IF rel IS NULL THEN
        RAISE EXCEPTION '% "%" does not exist', param, madlib_dl._table_label(tbl)
            USING ERRCODE = 'undefined_table',
                  HINT = 'Check the table name and the search_path, or give schema.table.';
    END IF;
    SELECT c.relkind INTO kind FROM pg_class c WHERE c.oid = rel;
    IF kind NOT IN ('r', 'p', 'v', 'm', 'f') THEN
        RAISE EXCEPTION '% "%" is not a table', param, madlib_dl._table_label(tbl)
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'Give the name of a table or view.';
    END IF;
    RETURN rel;
END
$$;

-- Refuse use_gpus => true: this build computes on CPUs only.
CREATE FUNCTION madlib_dl._ep_assert_no_gpus(use_gpus boolean)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF use_gpus THEN
        RAISE EXCEPTION 'use_gpus is not supported'
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Pass use_gpus => false; madlib_dl computes on CPUs.';
    END IF;
END
$$;

-- pred_type given as text: 'prob', 'response', an integer k ('3': the top
-- k classes) or a number with a decimal point or exponent ('0.2': the
-- classes with prob > p).  NULL means 'prob'.  Only the syntax is checked
-- here; _ep_check_pred_type checks the range once the class count is known.
CREATE FUNCTION madlib_dl._ep_parse_pred_type(pred_type text,
    OUT kind text, OUT k integer, OUT threshold float8)
RETURNS record
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t text := lower(btrim(pred_type));
BEGIN
    IF t IS NULL OR t = 'prob' THEN
        kind := 'prob';
    ELSIF t = 'response' THEN
        kind := 'response';
    ELSIF t ~ '^[+-]?[0-9]{1,9}$' THEN
        kind := 'top_k';
        k := t::integer;
    ELSIF t ~ '^[+-]?([0-9]+\.[0-9]*|\.[0-9]+)([e][+-]?[0-9]+)?$'
       OR t ~ '^[+-]?[0-9]+e[+-]?[0-9]+$' THEN
        kind := 'threshold';
        threshold := t::float8;
    ELSE
        RAISE EXCEPTION 'invalid pred_type "%"', pred_type
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use ''prob'', ''response'', an integer k for the top k classes, '
                         'or a threshold p in [0.0, 1.0) for the classes with prob > p.';
    END IF;
END
$$;

-- Raise 22023 unless k is in 1..n_classes (top_k) or threshold in [0, 1).
CREATE FUNCTION madlib_dl._ep_check_pred_type(kind text, k integer, threshold float8,
                                              n_classes integer)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF kind = 'top_k' AND (k IS NULL OR k < 1 OR k > n_classes) THEN
        RAISE EXCEPTION 'pred_type % is out of range for a model with % classes',
                        coalesce(k::text, 'NULL'), n_classes
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = format('Give an integer k in 1..%s for the top k classes, '
                                '''prob'' or ''response''.', n_classes);
    END IF;
    IF kind = 'threshold' AND (threshold IS NULL OR threshold < 0 OR threshold >= 1
                               OR threshold = 'NaN'::float8) THEN
        RAISE EXCEPTION 'pred_type % is out of range for a threshold',
                        coalesce(threshold::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give a threshold p with 0.0 <= p < 1.0: the classes with prob > p are written.';
    END IF;
END
$$;

-- The number of values the model outputs per example (product of its
-- output shape: the class count of a classifier).
CREATE FUNCTION madlib_dl._ep_output_size(model_arch json)
RETURNS integer
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shape integer[] := (madlib_dl._arch_info(model_arch)).output_shape;
    n bigint := 1;
    d integer;
BEGIN
    FOREACH d IN ARRAY shape LOOP
        n := n * d;
    END LOOP;
    RETURN n::integer;
END
$$;

-- Everything evaluate and predict need from a trained model table (fit's
-- <model> + <model>_summary, or fit_multiple's <model> + <model>_info +
-- <model>_summary, selected by mst_key).  Enforces the mst_key rules.
CREATE FUNCTION madlib_dl._ep_model(mtbl text[], mst_key integer,
    OUT model_arch json, OUT model_weights bytea, OUT compile_params text,
    OUT metrics_type text[], OUT loss_type text,
    OUT dependent_varname text, OUT independent_varname text,
    OUT normalizing_const float8, OUT class_values text[])
RETURNS record
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    mrel regclass := madlib_dl._assert_table_exists(mtbl, 'model_table');
    stbl text[] := madlib_dl._ep_suffix(mtbl, '_summary');
    itbl text[] := madlib_dl._ep_suffix(mtbl, '_info');
    srel regclass;
    irel regclass;
    multi boolean := madlib_dl._ep_has_column(mrel, 'mst_key');
    n bigint;
    cv_col text;
BEGIN
    IF multi AND mst_key IS NULL THEN
        RAISE EXCEPTION 'mst_key is required for a multi-model table'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = format('"%s" holds several models (made by fit_multiple_model); pass the '
                                'mst_key of one of them: SELECT mst_key FROM %s.',
                                madlib_dl._table_label(mtbl), madlib_dl._table_sql(mtbl));
    END IF;
    IF NOT multi AND mst_key IS NOT NULL THEN
        RAISE EXCEPTION 'mst_key must not be given for a single-model table'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = format('"%s" holds one model (made by fit); call the function without mst_key.',
                                madlib_dl._table_label(mtbl));
    END IF;
    PERFORM madlib_dl._assert_columns(mrel, ARRAY['model_weights', 'model_arch'],
        ARRAY['bytea', 'json'], 'a model table made by fit or fit_multiple_model');
    srel := madlib_dl._assert_table_exists(stbl, 'model summary table');
    PERFORM madlib_dl._assert_columns(srel,
        ARRAY['dependent_varname', 'independent_varname', 'normalizing_const'],
        ARRAY['text[]', 'text[]', 'real'],
        'the summary table fit wrote next to the model table');

    IF multi THEN
        EXECUTE format('SELECT count(*) FROM %s WHERE mst_key = $1', madlib_dl._table_sql(mtbl))
           INTO n USING mst_key;
        IF n = 0 THEN
            RAISE EXCEPTION 'mst_key % not found in model table "%"', mst_key,
                            madlib_dl._table_label(mtbl)
                USING ERRCODE = 'no_data_found',
                      HINT = format('SELECT mst_key FROM %s lists the models it holds.',
                                    madlib_dl._table_sql(mtbl));
        ELSIF n > 1 THEN
            RAISE EXCEPTION 'mst_key % is in model table "%" % times', mst_key,
                            madlib_dl._table_label(mtbl), n
                USING ERRCODE = 'cardinality_violation',
                      HINT = 'Give the model table fit_multiple_model wrote: one row per mst_key.';
        END IF;
        EXECUTE format('SELECT model_arch, model_weights FROM %s WHERE mst_key = $1',
                       madlib_dl._table_sql(mtbl))
           INTO model_arch, model_weights USING mst_key;
        irel := madlib_dl._assert_table_exists(itbl, 'model info table');
        PERFORM madlib_dl._assert_columns(irel,
            ARRAY['mst_key', 'compile_params', 'metrics_type', 'loss_type'],
            ARRAY['integer', 'text', 'text[]', 'text'],
            'the info table fit_multiple_model wrote next to the model table');
        EXECUTE format('SELECT compile_params, metrics_type, loss_type FROM %s WHERE mst_key = $1',
                       madlib_dl._table_sql(itbl))
           INTO compile_params, metrics_type, loss_type USING mst_key;
        GET DIAGNOSTICS n = ROW_COUNT;   -- EXECUTE does not set FOUND
        IF n = 0 THEN
            RAISE EXCEPTION 'mst_key % not found in model info table "%"', mst_key,
                            madlib_dl._table_label(itbl)
                USING ERRCODE = 'no_data_found',
                      HINT = format('SELECT mst_key FROM %s lists the models it holds.',
                                    madlib_dl._table_sql(itbl));
        END IF;
    ELSE
        EXECUTE format('SELECT count(*) FROM %s', madlib_dl._table_sql(mtbl)) INTO n;
        IF n <> 1 THEN
            RAISE EXCEPTION 'model table "%" has % rows, not 1', madlib_dl._table_label(mtbl), n
                USING ERRCODE = 'cardinality_violation',
                      HINT = 'Give the model table fit wrote: it holds exactly one row.';
        END IF;
        EXECUTE format('SELECT model_arch, model_weights FROM %s', madlib_dl._table_sql(mtbl))
           INTO model_arch, model_weights;
        PERFORM madlib_dl._assert_columns(srel,
            ARRAY['compile_params', 'metrics_type', 'loss_type'],
            ARRAY['text', 'text[]', 'text'],
            'the summary table fit wrote next to the model table');
        EXECUTE format('SELECT compile_params, metrics_type, loss_type FROM %s',
                       madlib_dl._table_sql(stbl))
           INTO compile_params, metrics_type, loss_type;
    END IF;
    IF model_arch IS NULL OR model_weights IS NULL THEN
        RAISE EXCEPTION 'model table "%" has no model_arch or no model_weights',
                        madlib_dl._table_label(mtbl)
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Train the model again with fit.';
    END IF;
    -- The weights must fit the architecture and be finite (22000).
    PERFORM madlib_dl._validate_arch(model_arch, model_weights);

    EXECUTE format('SELECT dependent_varname[1], independent_varname[1], normalizing_const'
                   '  FROM %s', madlib_dl._table_sql(stbl))
       INTO dependent_varname, independent_varname, normalizing_const;
    IF dependent_varname IS NULL THEN
        RAISE EXCEPTION 'model summary table "%" has no dependent_varname',
                        madlib_dl._table_label(stbl)
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Train the model again with fit.';
    END IF;
    cv_col := dependent_varname || '_class_values';
    IF madlib_dl._ep_has_column(srel, cv_col) THEN
        EXECUTE format('SELECT %I::text[] FROM %s', cv_col, madlib_dl._table_sql(stbl))
           INTO class_values;
    END IF;
    normalizing_const := coalesce(normalizing_const, 1.0);
END
$$;

-- Check column col of rel for predict: it exists and is an array of a
-- numeric type.  param names the argument in messages.
CREATE FUNCTION madlib_dl._ep_assert_feature_column(rel regclass, col text, param text)
RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    elem oid;
    typ text;
BEGIN
    IF col IS NULL THEN
        RAISE EXCEPTION '% must not be NULL', param
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = format('Give the name of the array column of %s that holds the features.',
                                rel::text);
    END IF;
    IF position(',' IN col) > 0 THEN
        RAISE EXCEPTION 'multiple independent variables are not supported: "%"', col
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Give one array column; models with several inputs are not supported.';
    END IF;
    SELECT t.typelem, format_type(a.atttypid, a.atttypmod) INTO elem, typ
      FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
     WHERE a.attrelid = rel AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table "%" has no column "%"', rel::text, col
            USING ERRCODE = 'undefined_column',
                  HINT = format('Give the name of the array column of %s that holds the features '
                                '(%s).', rel::text, param);
    END IF;
    IF elem NOT IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'float4'::regtype,
                    'float8'::regtype, 'numeric'::regtype) THEN
        RAISE EXCEPTION 'column "%" of table "%" has type %, not a numeric array', col, rel::text, typ
            USING ERRCODE = 'datatype_mismatch',
                  HINT = 'predict reads raw rows, one example per row in a numeric array '
                         '(e.g. real[]); evaluate takes the tables made by the preprocessors.';
    END IF;
END
$$;

-- The type of column id_col of rel, as format_type() writes it; 42703
-- when rel has no such column, 42701 when the name is taken by an output
-- column.
CREATE FUNCTION madlib_dl._ep_id_type(rel regclass, id_col text)
RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    id_type text;
BEGIN
    IF id_col IS NULL THEN
        RAISE EXCEPTION 'id_col must not be NULL'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = format('Give the name of the column of %s that identifies each row.',
                                rel::text);
    END IF;
    SELECT format_type(a.atttypid, a.atttypmod) INTO id_type
      FROM pg_attribute a
     WHERE a.attrelid = rel AND a.attname = id_col AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table "%" has no column "%"', rel::text, id_col
            USING ERRCODE = 'undefined_column',
                  HINT = format('Give the name of the column of %s that identifies each row (id_col).',
                                rel::text);
    END IF;
    IF id_col IN ('class_name', 'class_value', 'prob', 'rank') THEN
        RAISE EXCEPTION 'id_col "%" has the name of an output column', id_col
            USING ERRCODE = 'duplicate_column',
                  HINT = 'The output has the columns <id_col>, class_name, class_value, prob and rank; '
                         'predict from a view that renames the id column.';
    END IF;
    RETURN id_type;
END
$$;

-- Write the predictions for rel into otbl.  The id column keeps its
-- name and type; class_value i is class_values[i] (NULL when the model
-- has more outputs than class values, as for padded classes).
CREATE FUNCTION madlib_dl._ep_write_predictions(rel regclass, id_col text, indep_col text,
    otbl text[], model_arch json, model_weights bytea, normalizing_const float8,
    class_name text, class_values text[], kind text, k integer, threshold float8)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    id_type text := madlib_dl._ep_id_type(rel, id_col);
    cols text := 'q.rank';
    filter text := '';
BEGIN
    CASE kind
        WHEN 'prob' THEN NULL;
        WHEN 'response' THEN cols := NULL; filter := 'WHERE q.rank = 1';
        WHEN 'top_k' THEN filter := format('WHERE q.rank <= %s', k);
        WHEN 'threshold' THEN filter := format('WHERE q.prob > %L::float8', threshold);
    END CASE;

    EXECUTE format(
        'CREATE TABLE %s AS'
        ' SELECT q.id::%s AS %I, $1::text AS class_name, ($2::text[])[q.idx] AS class_value,'
        '        q.prob%s'
        '   FROM (SELECT r.id, r.row_no, u.prob, u.idx::integer AS idx,'
        '                row_number() OVER (PARTITION BY r.row_no'
        '                                   ORDER BY u.prob DESC, u.idx)::integer AS rank'
        '           FROM madlib_dl._predict_rows($3, $4, $5, $6, $7, $8)'
        '                WITH ORDINALITY AS r(id, probs, row_no)'
        '                CROSS JOIN LATERAL unnest(r.probs) WITH ORDINALITY AS u(prob, idx)) q'
        '  %s'
        '  ORDER BY q.row_no, q.rank',
        madlib_dl._table_sql(otbl), id_type, id_col,
        CASE WHEN cols IS NULL THEN '' ELSE ', ' || cols END, filter)
    USING class_name, class_values, model_arch, model_weights, rel, id_col, indep_col,
          normalizing_const;
END
$$;

-- ---------------------------------------------------------------------
-- Drivers (internal; search_path pinned; tables come as {schema, table})
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl._evaluate(mtbl text[], ttbl text[], otbl text[],
                                    use_gpus boolean, mst_key integer)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m record;
    trel regclass;
    tsum regclass;
    dep text;
    indep text;
    r float8[];
BEGIN
    PERFORM madlib_dl._ep_assert_no_gpus(use_gpus);
    PERFORM madlib_dl._assert_output_absent(otbl, 'output_table');
    trel := madlib_dl._ep_assert_readable(ttbl, 'test_table');
    m := madlib_dl._ep_model(mtbl, mst_key);

    -- The packed columns' names: from the test table's own summary when
    -- it has one (validation_preprocessor_dl writes it), else the model's.
    dep := m.dependent_varname;
    indep := m.independent_varname;
    tsum := madlib_dl._table_oid(madlib_dl._ep_suffix(ttbl, '_summary'));
    IF tsum IS NOT NULL
       AND madlib_dl._ep_has_column(tsum, 'dependent_varname')
       AND madlib_dl._ep_has_column(tsum, 'independent_varname') THEN
        EXECUTE format('SELECT coalesce(dependent_varname[1], $1), coalesce(independent_varname[1], $2)'
                       '  FROM %s LIMIT 1', tsum::text)
           INTO dep, indep USING dep, indep;
        dep := coalesce(dep, m.dependent_varname);
        indep := coalesce(indep, m.independent_varname);
    END IF;
    BEGIN
        PERFORM madlib_dl._assert_columns(trel,
            ARRAY[dep, indep, dep || '_shape', indep || '_shape', 'buffer_id'],
            ARRAY['bytea', 'bytea', 'integer[]', 'integer[]', 'integer'],
            'x');
    EXCEPTION WHEN undefined_column OR datatype_mismatch THEN
        RAISE EXCEPTION 'test_table "%" is not a preprocessed table', madlib_dl._table_label(ttbl)
            USING ERRCODE = 'wrong_object_type',
                  DETAIL = SQLERRM,
                  HINT = 'evaluate takes a table made by training_preprocessor_dl or '
                         'validation_preprocessor_dl; predict takes raw rows.';
    END;

    r := madlib_dl._evaluate_run(trel, dep, indep, m.model_arch, m.model_weights,
                                 m.compile_params);

    EXECUTE format('CREATE TABLE %s (loss float8, metric float8, metrics_type text[], loss_type text)',
                   madlib_dl._table_sql(otbl));
    EXECUTE format('INSERT INTO %s VALUES ($1, $2, $3, $4)', madlib_dl._table_sql(otbl))
    USING r[1], r[2], m.metrics_type, m.loss_type;
END
$$;

CREATE FUNCTION madlib_dl._predict(mtbl text[], ttbl text[], id_col text, independent_varname text,
                                   otbl text[], kind text, k integer, threshold float8,
                                   use_gpus boolean, mst_key integer)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m record;
    trel regclass;
    n_out integer;
    n_cv integer;
BEGIN
    PERFORM madlib_dl._ep_assert_no_gpus(use_gpus);
    PERFORM madlib_dl._assert_output_absent(otbl, 'output_table');
    trel := madlib_dl._ep_assert_readable(ttbl, 'test_table');
    PERFORM madlib_dl._ep_id_type(trel, id_col);
    PERFORM madlib_dl._ep_assert_feature_column(trel, independent_varname, 'independent_varname');
    m := madlib_dl._ep_model(mtbl, mst_key);

    n_out := madlib_dl._ep_output_size(m.model_arch);
    PERFORM madlib_dl._ep_check_pred_type(kind, k, threshold, n_out);
    n_cv := coalesce(array_length(m.class_values, 1), 0);
    IF m.class_values IS NULL THEN
        -- an already one-hot dependent: classes are the output indexes
        SELECT array_agg(i::text ORDER BY i) INTO m.class_values
          FROM generate_series(0, n_out - 1) AS i;
    ELSIF n_cv > n_out THEN
        RAISE EXCEPTION 'the model summary lists % class values but the model has % outputs',
                        n_cv, n_out
            USING ERRCODE = 'data_exception',
                  HINT = 'Give the model table and summary table that fit wrote together.';
    END IF;

    PERFORM madlib_dl._ep_write_predictions(trel, id_col, independent_varname, otbl,
        m.model_arch, m.model_weights, m.normalizing_const,
        m.dependent_varname, m.class_values, kind, k, threshold);
END
$$;

CREATE FUNCTION madlib_dl._predict_byom(atbl text[], model_id integer, ttbl text[], id_col text,
                                        independent_varname text, otbl text[],
                                        kind text, k integer, threshold float8,
                                        use_gpus boolean, class_values text[],
                                        normalizing_const float8, dependent_count integer)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    arel regclass;
    trel regclass;
    arch json;
    weights bytea;
    n bigint;
    n_out integer;
    nc float8 := coalesce(normalizing_const, 1.0);
BEGIN
    PERFORM madlib_dl._ep_assert_no_gpus(use_gpus);
    PERFORM madlib_dl._assert_not_null(model_id, 'model_id');
    IF dependent_count IS DISTINCT FROM 1 THEN
        RAISE EXCEPTION 'dependent_count % is not supported', coalesce(dependent_count::text, 'NULL')
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Models with one output are supported: pass dependent_count => 1.';
    END IF;
    IF NOT nc > 0 OR nc = 'Infinity'::float8 THEN
        RAISE EXCEPTION 'normalizing_const % must be a positive number', nc
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the constant the training data was divided by, e.g. 255.0, or NULL for 1.0.';
    END IF;
    PERFORM madlib_dl._assert_output_absent(otbl, 'output_table');
    arel := madlib_dl._assert_table_exists(atbl, 'model_arch_table');
    PERFORM madlib_dl._assert_columns(arel, ARRAY['model_id', 'model_arch', 'model_weights'],
        ARRAY['integer', 'json', 'bytea'], 'a model architecture table made by load_keras_model');
    trel := madlib_dl._ep_assert_readable(ttbl, 'test_table');
    PERFORM madlib_dl._ep_id_type(trel, id_col);
    PERFORM madlib_dl._ep_assert_feature_column(trel, independent_varname, 'independent_varname');

    EXECUTE format('SELECT model_arch, model_weights FROM %s WHERE model_id = $1',
                   madlib_dl._table_sql(atbl))
       INTO arch, weights USING model_id;
    GET DIAGNOSTICS n = ROW_COUNT;   -- EXECUTE does not set FOUND
    IF n = 0 THEN
        RAISE EXCEPTION 'model id % not found in table "%"', model_id, madlib_dl._table_label(atbl)
            USING ERRCODE = 'no_data_found',
                  HINT = format('SELECT model_id, name FROM %s lists the models it holds.',
                                madlib_dl._table_sql(atbl));
    END IF;
    IF weights IS NULL THEN
        RAISE EXCEPTION 'model id % in table "%" has no model_weights', model_id,
                        madlib_dl._table_label(atbl)
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Load the weights with load_keras_model(table, model_arch, model_weights), '
                         'or use predict with a model table made by fit.';
    END IF;
    -- the weights were checked against the architecture when loaded, but
    -- the table may have been changed since
    PERFORM madlib_dl._validate_arch(arch, weights);

    n_out := madlib_dl._ep_output_size(arch);
    PERFORM madlib_dl._ep_check_pred_type(kind, k, threshold, n_out);
    IF class_values IS NULL THEN
        SELECT array_agg(i::text ORDER BY i) INTO class_values
          FROM generate_series(0, n_out - 1) AS i;
    ELSIF array_ndims(class_values) <> 1 OR array_length(class_values, 1) <> n_out THEN
        RAISE EXCEPTION 'class_values has % values but the model has % outputs',
                        coalesce(cardinality(class_values), 0), n_out
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = format('Give one class value per model output (%s), in output order, '
                                'or NULL for 0..%s.', n_out, n_out - 1);
    END IF;

    PERFORM madlib_dl._ep_write_predictions(trel, id_col, independent_varname, otbl,
        arch, weights, nc, 'dependent_var', class_values, kind, k, threshold);
END
$$;

-- ---------------------------------------------------------------------
-- Public API (MADlib signatures).  Thin wrappers: they resolve the table
-- names in the caller's search_path, then call the pinned drivers.
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl.madlib_keras_evaluate(model_table varchar, test_table varchar,
                                                output_table varchar,
                                                use_gpus boolean DEFAULT false,
                                                mst_key integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._evaluate(madlib_dl._resolve_table($1, 'model_table'),
                               madlib_dl._resolve_table($2, 'test_table'),
                               madlib_dl._resolve_table($3, 'output_table'), $4, $5)
$$;

CREATE FUNCTION madlib_dl.evaluate(model_table varchar, test_table varchar,
                                   output_table varchar,
                                   use_gpus boolean DEFAULT false,
                                   mst_key integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl.madlib_keras_evaluate($1, $2, $3, $4, $5) $$;

-- predict: pred_type as text ('prob', 'response', '3', '0.2'), integer
-- (top k) or double precision (threshold).  Only the text form has a
-- default, so a call without pred_type is not ambiguous.
CREATE FUNCTION madlib_dl.madlib_keras_predict(model_table varchar, test_table varchar,
                                               id_col varchar, independent_varname varchar,
                                               output_table varchar,
                                               pred_type varchar DEFAULT 'prob',
                                               use_gpus boolean DEFAULT false,
                                               mst_key integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._predict(madlib_dl._resolve_table($1, 'model_table'),
                              madlib_dl._resolve_table($2, 'test_table'), $3, $4,
                              madlib_dl._resolve_table($5, 'output_table'),
                              p.kind, p.k, p.threshold, $7, $8)
      FROM madlib_dl._ep_parse_pred_type($6) AS p
$$;

CREATE FUNCTION madlib_dl.madlib_keras_predict(model_table varchar, test_table varchar,
                                               id_col varchar, independent_varname varchar,
                                               output_table varchar,
                                               pred_type integer,
                                               use_gpus boolean DEFAULT false,
                                               mst_key integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._predict(madlib_dl._resolve_table($1, 'model_table'),
                              madlib_dl._resolve_table($2, 'test_table'), $3, $4,
                              madlib_dl._resolve_table($5, 'output_table'),
                              'top_k', $6, NULL, $7, $8)
$$;

CREATE FUNCTION madlib_dl.madlib_keras_predict(model_table varchar, test_table varchar,
                                               id_col varchar, independent_varname varchar,
                                               output_table varchar,
                                               pred_type double precision,
                                               use_gpus boolean DEFAULT false,
                                               mst_key integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._predict(madlib_dl._resolve_table($1, 'model_table'),
                              madlib_dl._resolve_table($2, 'test_table'), $3, $4,
                              madlib_dl._resolve_table($5, 'output_table'),
                              'threshold', NULL, $6, $7, $8)
$$;

CREATE FUNCTION madlib_dl.predict(model_table varchar, test_table varchar,
                                  id_col varchar, independent_varname varchar,
                                  output_table varchar,
                                  pred_type varchar DEFAULT 'prob',
                                  use_gpus boolean DEFAULT false,
                                  mst_key integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl.madlib_keras_predict($1, $2, $3, $4, $5, $6::varchar, $7, $8) $$;

CREATE FUNCTION madlib_dl.predict(model_table varchar, test_table varchar,
                                  id_col varchar, independent_varname varchar,
                                  output_table varchar,
                                  pred_type integer,
                                  use_gpus boolean DEFAULT false,
                                  mst_key integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl.madlib_keras_predict($1, $2, $3, $4, $5, $6::integer, $7, $8) $$;

CREATE FUNCTION madlib_dl.predict(model_table varchar, test_table varchar,
                                  id_col varchar, independent_varname varchar,
                                  output_table varchar,
                                  pred_type double precision,
                                  use_gpus boolean DEFAULT false,
                                  mst_key integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl.madlib_keras_predict($1, $2, $3, $4, $5, $6::double precision, $7, $8) $$;

CREATE FUNCTION madlib_dl.madlib_keras_predict_byom(model_arch_table varchar, model_id integer,
                                                    test_table varchar, id_col varchar,
                                                    independent_varname varchar,
                                                    output_table varchar,
                                                    pred_type varchar DEFAULT 'prob',
                                                    use_gpus boolean DEFAULT false,
                                                    class_values text[] DEFAULT NULL,
                                                    normalizing_const double precision DEFAULT NULL,
                                                    dependent_count integer DEFAULT 1)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._predict_byom(madlib_dl._resolve_table($1, 'model_arch_table'), $2,
                                   madlib_dl._resolve_table($3, 'test_table'), $4, $5,
                                   madlib_dl._resolve_table($6, 'output_table'),
                                   p.kind, p.k, p.threshold, $8, $9, $10, $11)
      FROM madlib_dl._ep_parse_pred_type($7) AS p
$$;

CREATE FUNCTION madlib_dl.madlib_keras_predict_byom(model_arch_table varchar, model_id integer,
                                                    test_table varchar, id_col varchar,
                                                    independent_varname varchar,
                                                    output_table varchar,
                                                    pred_type integer,
                                                    use_gpus boolean DEFAULT false,
                                                    class_values text[] DEFAULT NULL,
                                                    normalizing_const double precision DEFAULT NULL,
                                                    dependent_count integer DEFAULT 1)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._predict_byom(madlib_dl._resolve_table($1, 'model_arch_table'), $2,
                                   madlib_dl._resolve_table($3, 'test_table'), $4, $5,
                                   madlib_dl._resolve_table($6, 'output_table'),
                                   'top_k', $7, NULL, $8, $9, $10, $11)
$$;

CREATE FUNCTION madlib_dl.madlib_keras_predict_byom(model_arch_table varchar, model_id integer,
                                                    test_table varchar, id_col varchar,
                                                    independent_varname varchar,
                                                    output_table varchar,
                                                    pred_type double precision,
                                                    use_gpus boolean DEFAULT false,
                                                    class_values text[] DEFAULT NULL,
                                                    normalizing_const double precision DEFAULT NULL,
                                                    dependent_count integer DEFAULT 1)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._predict_byom(madlib_dl._resolve_table($1, 'model_arch_table'), $2,
                                   madlib_dl._resolve_table($3, 'test_table'), $4, $5,
                                   madlib_dl._resolve_table($6, 'output_table'),
                                   'threshold', NULL, $7, $8, $9, $10, $11)
$$;

CREATE FUNCTION madlib_dl.predict_byom(model_arch_table varchar, model_id integer,
                                       test_table varchar, id_col varchar,
                                       independent_varname varchar, output_table varchar,
                                       pred_type varchar DEFAULT 'prob',
                                       use_gpus boolean DEFAULT false,
                                       class_values text[] DEFAULT NULL,
                                       normalizing_const double precision DEFAULT NULL,
                                       dependent_count integer DEFAULT 1)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl.madlib_keras_predict_byom($1, $2, $3, $4, $5, $6, $7::varchar, $8, $9, $10, $11) $$;

CREATE FUNCTION madlib_dl.predict_byom(model_arch_table varchar, model_id integer,
                                       test_table varchar, id_col varchar,
                                       independent_varname varchar, output_table varchar,
                                       pred_type integer,
                                       use_gpus boolean DEFAULT false,
                                       class_values text[] DEFAULT NULL,
                                       normalizing_const double precision DEFAULT NULL,
                                       dependent_count integer DEFAULT 1)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl.madlib_keras_predict_byom($1, $2, $3, $4, $5, $6, $7::integer, $8, $9, $10, $11) $$;

CREATE FUNCTION madlib_dl.predict_byom(model_arch_table varchar, model_id integer,
                                       test_table varchar, id_col varchar,
                                       independent_varname varchar, output_table varchar,
                                       pred_type double precision,
                                       use_gpus boolean DEFAULT false,
                                       class_values text[] DEFAULT NULL,
                                       normalizing_const double precision DEFAULT NULL,
                                       dependent_count integer DEFAULT 1)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl.madlib_keras_predict_byom($1, $2, $3, $4, $5, $6, $7::double precision, $8, $9, $10, $11) $$;

-- ---------------------------------------------------------------------
-- Help text, as MADlib's fn() and fn('usage').
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl.madlib_keras_evaluate(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
SELECT CASE WHEN lower(coalesce(message, '')) IN ('usage', 'help', '?') THEN
$usage$
madlib_keras_evaluate (short name: evaluate): the loss and metric of a
trained model on a preprocessed table, as its compile_params define them.

    SELECT madlib_dl.madlib_keras_evaluate(
        model_table   VARCHAR,  -- model table made by fit (or fit_multiple_model)
        test_table    VARCHAR,  -- table made by validation_preprocessor_dl
                                -- or training_preprocessor_dl
        output_table  VARCHAR,  -- table to create; must not exist
        use_gpus      BOOLEAN,  -- default false; true is not supported
        mst_key       INTEGER   -- default NULL; required for a multi-model
                                -- table, forbidden for a single-model one
    );

The output table has one row:
    loss          FLOAT8   mean loss over every example of test_table
    metric        FLOAT8   mean metric (NULL when compile_params has none)
    metrics_type  TEXT[]   the metric's name, from the model summary
    loss_type     TEXT     the loss's name, from the model summary

See also: SELECT madlib_dl.madlib_keras_predict('usage');
$usage$
ELSE
$summary$
madlib_keras_evaluate (short name: evaluate): loss and metric of a trained
model on a preprocessed table.

    SELECT madlib_dl.madlib_keras_evaluate('iris_model', 'iris_test_packed', 'iris_eval');
    SELECT * FROM iris_eval;

For all parameters: SELECT madlib_dl.madlib_keras_evaluate('usage');
$summary$
END
$$;

CREATE FUNCTION madlib_dl.madlib_keras_evaluate()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.madlib_keras_evaluate(''::varchar) $$;

CREATE FUNCTION madlib_dl.evaluate(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.madlib_keras_evaluate(message) $$;

CREATE FUNCTION madlib_dl.evaluate()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.madlib_keras_evaluate(''::varchar) $$;

CREATE FUNCTION madlib_dl.madlib_keras_predict(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
SELECT CASE WHEN lower(coalesce(message, '')) IN ('usage', 'help', '?') THEN
$usage$
madlib_keras_predict (short name: predict): apply a trained model to raw
rows, one example per row.  The training normalizing_const is applied.

    SELECT madlib_dl.madlib_keras_predict(
        model_table          VARCHAR,  -- model table made by fit (or fit_multiple_model)
        test_table           VARCHAR,  -- table or view with one example per row
        id_col               VARCHAR,  -- column that identifies each row
        independent_varname  VARCHAR,  -- numeric array column with the features
        output_table         VARCHAR,  -- table to create; must not exist
        pred_type            VARCHAR,  -- default 'prob'; see below
        use_gpus             BOOLEAN,  -- default false; true is not supported
        mst_key              INTEGER   -- default NULL; required for a multi-model
                                       -- table, forbidden for a single-model one
    );

pred_type:
    'prob'      every class, ranked
    'response'  the most probable class only (no rank column)
    k           an integer (or text such as '3'): the k most probable classes
    p           a double precision (or text such as '0.2') in [0.0, 1.0):
                the classes with prob > p, ranked

The output table has one row per example and class written:
    <id_col>     the id, with the type of test_table's column
    class_name   TEXT     the dependent variable's name
    class_value  TEXT     the class (its index 0..K-1 when the model was
                          trained on an already one-hot dependent)
    prob         FLOAT8   the model's output for that class
    rank         INTEGER  1 for the most probable class (not for 'response')

See also: SELECT madlib_dl.madlib_keras_predict_byom('usage');
$usage$
ELSE
$summary$
madlib_keras_predict (short name: predict): class probabilities or classes
for raw rows.

    SELECT madlib_dl.madlib_keras_predict('iris_model', 'iris_test', 'id', 'attributes',
                                          'iris_predict', 'response');

For all parameters: SELECT madlib_dl.madlib_keras_predict('usage');
$summary$
END
$$;

CREATE FUNCTION madlib_dl.madlib_keras_predict()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.madlib_keras_predict(''::varchar) $$;

CREATE FUNCTION madlib_dl.predict(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.madlib_keras_predict(message) $$;

CREATE FUNCTION madlib_dl.predict()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.madlib_keras_predict(''::varchar) $$;

CREATE FUNCTION madlib_dl.madlib_keras_predict_byom(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
SELECT CASE WHEN lower(coalesce(message, '')) IN ('usage', 'help', '?') THEN
$usage$
madlib_keras_predict_byom (short name: predict_byom): predict with a model
whose weights are stored in a model architecture table (bring your own
model).

    SELECT madlib_dl.madlib_keras_predict_byom(
        model_arch_table     VARCHAR,   -- table made by load_keras_model
        model_id             INTEGER,   -- the row whose model_arch and
                                        -- model_weights (not NULL) are used
        test_table           VARCHAR,   -- table or view with one example per row
        id_col               VARCHAR,   -- column that identifies each row
        independent_varname  VARCHAR,   -- numeric array column with the features
        output_table         VARCHAR,   -- table to create; must not exist
        pred_type            VARCHAR,   -- default 'prob'; as for predict
        use_gpus             BOOLEAN,   -- default false; true is not supported
        class_values         TEXT[],    -- default NULL: '0' .. 'K-1'
        normalizing_const    FLOAT8,    -- default NULL: 1.0; features are
                                        -- divided by it
        dependent_count      INTEGER    -- default 1; only 1 is supported
    );

The output table is predict's, with class_name 'dependent_var'.

See also: SELECT madlib_dl.madlib_keras_predict('usage');
$usage$
ELSE
$summary$
madlib_keras_predict_byom (short name: predict_byom): predict with weights
stored in a model architecture table.

    SELECT madlib_dl.madlib_keras_predict_byom('model_arch_library', 1, 'iris_test', 'id',
        'attributes', 'iris_predict_byom', 'response', false,
        ARRAY['Iris-setosa', 'Iris-versicolor', 'Iris-virginica']);

For all parameters: SELECT madlib_dl.madlib_keras_predict_byom('usage');
$summary$
END
$$;

CREATE FUNCTION madlib_dl.madlib_keras_predict_byom()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.madlib_keras_predict_byom(''::varchar) $$;

CREATE FUNCTION madlib_dl.predict_byom(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.madlib_keras_predict_byom(message) $$;

CREATE FUNCTION madlib_dl.predict_byom()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.madlib_keras_predict_byom(''::varchar) $$;
-- 50_model_selection.sql: model selection tables, as in MADlib
-- (madlib_keras_model_selection.sql_in): load_model_selection_table and
-- generate_model_configs, with the C helpers of src/pg/model_selection.c.
-- docs/model-selection.md is the user page.
--
-- A model selection table has the columns
--     mst_key serial PRIMARY KEY, model_id integer, compile_params varchar,
--     fit_params varchar, UNIQUE (model_id, compile_params, fit_params)
-- and a companion <table>_summary (model_arch_table varchar,
-- object_table varchar) with one row.  Both functions append to an
-- existing table; rows it already holds are not added again.

-- ---------------------------------------------------------------------
-- C functions
-- ---------------------------------------------------------------------

-- Parse compile_params / fit_params with the engine (ERROR otherwise; the
-- message starts with context and the string when context is given) and
-- return the engine's canonical spelling: equal for equal meanings.
CREATE FUNCTION madlib_dl._check_compile_params(compile_params text, context text DEFAULT NULL)
RETURNS text
AS 'MODULE_PATHNAME', 'madlib_dl__check_compile_params'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION madlib_dl._check_fit_params(fit_params text, context text DEFAULT NULL)
RETURNS text
AS 'MODULE_PATHNAME', 'madlib_dl__check_fit_params'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- The configurations of generate_model_configs, in generation order (grid
-- or random search over MADlib's dict-literal grids), every string
-- already checked by the engine.  May repeat rows.
CREATE FUNCTION madlib_dl._model_configs(model_id_list integer[], compile_params_grid text,
                                         fit_params_grid text, search_type text,
                                         num_configs integer, random_state integer)
RETURNS TABLE (model_id integer, compile_params text, fit_params text)
AS 'MODULE_PATHNAME', 'madlib_dl__model_configs'
LANGUAGE C VOLATILE ROWS 100;

-- ---------------------------------------------------------------------
-- Drivers (internal; search_path pinned; tables come as {schema, table})
-- ---------------------------------------------------------------------

-- The sorted, distinct ids of ids, after checking that arch is a model
-- architecture table holding every one of them (P0002 names the first
-- missing id).
CREATE FUNCTION madlib_dl._ms_check_model_ids(arch text[], ids integer[])
RETURNS integer[]
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass;
    missing integer;
    out_ids integer[];
BEGIN
    PERFORM madlib_dl._assert_not_null(ids, 'model_id_list');
    IF cardinality(ids) = 0 THEN
        RAISE EXCEPTION 'model_id_list is empty'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give at least one model id of the model architecture table.';
    END IF;
    IF array_position(ids, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'model_id_list must not hold NULL'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Give the model ids of the model architecture table.';
    END IF;
    rel := madlib_dl._assert_table_exists(arch, 'model_arch_table');
    PERFORM madlib_dl._assert_columns(rel, ARRAY['model_id'], ARRAY['integer'],
        'a model architecture table made by load_keras_model');
    EXECUTE format('SELECT min(i) FROM unnest($1) i'
                   ' WHERE NOT EXISTS (SELECT 1 FROM %s a WHERE a.model_id = i)',
                   madlib_dl._table_sql(arch))
       INTO missing USING ids;
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'model_id % not found in model architecture table "%"', missing,
                        madlib_dl._table_label(arch)
            USING ERRCODE = 'no_data_found',
                  HINT = format('SELECT model_id, name FROM %s lists the architectures it holds.',
                                madlib_dl._table_sql(arch));
    END IF;
    SELECT array_agg(DISTINCT i ORDER BY i) INTO out_ids FROM unnest(ids) i;
    RETURN out_ids;
END
$$;

-- Create or check the model selection table mst and its summary, then
-- append the rows (ids[k], compiles[k], fits[k]) in order, skipping rows
-- the table already holds and repeats.  arch_raw is the model_arch_table
-- argument as the user wrote it (an existing summary may hold it).
-- Returns the number of rows added.
CREATE FUNCTION madlib_dl._ms_store(mst text[], arch text[], arch_raw text,
                                    ids integer[], compiles text[], fits text[])
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    summ text[] := ARRAY[mst[1], mst[2] || '_summary'];
    what constant text := 'a model selection table made by load_model_selection_table '
                          'or generate_model_configs';
    arch_name text := madlib_dl._table_sql(arch);
    rel regclass;
    srel regclass;
    has_default boolean;
    has_object_col boolean;
    col text;
    col_type text;
    stored text;
    nrows bigint;
    added bigint;
BEGIN
    -- the table
    IF madlib_dl._table_oid(mst) IS NULL THEN
        PERFORM madlib_dl._assert_schema_exists(mst);
        EXECUTE format(
            'CREATE TABLE %I.%I ('
            '  mst_key serial PRIMARY KEY,'
            '  model_id integer,'
            '  compile_params varchar,'
            '  fit_params varchar,'
            '  UNIQUE (model_id, compile_params, fit_params))', mst[1], mst[2]);
    END IF;
    rel := madlib_dl._assert_table_exists(mst, 'model_selection_table');
    PERFORM madlib_dl._assert_columns(rel, ARRAY['mst_key', 'model_id'],
        ARRAY['integer', 'integer'], what);
    -- the parameter columns may be varchar (as made here) or text (by hand)
    FOR col IN SELECT unnest(ARRAY['compile_params', 'fit_params']) LOOP
        SELECT format_type(a.atttypid, a.atttypmod) INTO col_type
          FROM pg_attribute a
         WHERE a.attrelid = rel AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped;
        IF NOT FOUND THEN
            PERFORM madlib_dl._assert_columns(rel, ARRAY[col], ARRAY['character varying'], what);
        ELSIF col_type NOT IN ('character varying', 'text') THEN
            RAISE EXCEPTION 'column "%" of table "%" has type %, not character varying or text',
                            col, rel::text, col_type
                USING ERRCODE = 'datatype_mismatch',
                      HINT = format('Give %s, or a name that does not exist yet.', what);
        END IF;
    END LOOP;
    SELECT a.atthasdef OR a.attidentity <> '' INTO has_default
      FROM pg_attribute a WHERE a.attrelid = rel AND a.attname = 'mst_key';
    IF NOT has_default THEN
        RAISE EXCEPTION 'column "mst_key" of table "%" has no default', rel::text
            USING ERRCODE = 'invalid_table_definition',
                  HINT = format('Give %s (mst_key serial), or a name that does not exist yet.', what);
    END IF;

    -- the summary: one row naming the architecture table
    IF madlib_dl._table_oid(summ) IS NULL THEN
        EXECUTE format('CREATE TABLE %I.%I (model_arch_table varchar, object_table varchar)',
                       summ[1], summ[2]);
    END IF;
    srel := madlib_dl._assert_table_exists(summ, 'model selection summary table');
    PERFORM madlib_dl._assert_columns(srel, ARRAY['model_arch_table'], ARRAY['character varying'],
        'the summary table of ' || what);
    has_object_col := EXISTS (SELECT 1 FROM pg_attribute a
                               WHERE a.attrelid = srel AND a.attname = 'object_table'
                                 AND a.attnum > 0 AND NOT a.attisdropped);
    -- no append may slip in between the checks and the insert
    EXECUTE format('LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE', madlib_dl._table_sql(mst));
    EXECUTE format('LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE', madlib_dl._table_sql(summ));
    nrows := 0;
    FOR stored IN EXECUTE format('SELECT model_arch_table::text FROM %s', madlib_dl._table_sql(summ))
    LOOP
        nrows := nrows + 1;
        IF stored IS NULL OR stored NOT IN (arch_name, madlib_dl._table_label(arch), arch_raw) THEN
            RAISE EXCEPTION 'model_selection_table "%" was made for model_arch_table "%", not "%"',
                            madlib_dl._table_label(mst), stored, madlib_dl._table_label(arch)
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = format('Pass model_arch_table => %L to append to it, or choose another '
                                    'model_selection_table.', stored);
        END IF;
    END LOOP;
    IF nrows = 0 THEN
        IF has_object_col THEN
            EXECUTE format('INSERT INTO %s (model_arch_table, object_table) VALUES ($1, NULL)',
                           madlib_dl._table_sql(summ)) USING arch_name;
        ELSE
            EXECUTE format('INSERT INTO %s (model_arch_table) VALUES ($1)',
                           madlib_dl._table_sql(summ)) USING arch_name;
        END IF;
    END IF;

    -- the rows, in order; repeats and rows already there are skipped
    EXECUTE format(
        'INSERT INTO %1$s (model_id, compile_params, fit_params)'
        ' SELECT n.m, n.c, n.f'
        '   FROM (SELECT m, c, f, min(o) AS o'
        '           FROM unnest($1, $2, $3) WITH ORDINALITY AS u(m, c, f, o)'
        '          GROUP BY m, c, f) n'
        '  WHERE NOT EXISTS (SELECT 1 FROM %1$s t WHERE t.model_id = n.m'
        '                       AND t.compile_params = n.c AND t.fit_params = n.f)'
        '  ORDER BY n.o'
        ' ON CONFLICT DO NOTHING', madlib_dl._table_sql(mst))
    USING ids, compiles, fits;
    GET DIAGNOSTICS added = ROW_COUNT;
    RETURN added;
END
$$;

-- load_model_selection_table: the Cartesian product of model ids x
-- compile params x fit params (model id slowest, fit params fastest).
CREATE FUNCTION madlib_dl._load_model_selection_table(arch text[], mst text[], arch_raw text,
    model_id_list integer[], compile_params_list text[], fit_params_list text[],
    object_table text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ids integer[];
    compiles text[];
    fits text[];
    all_ids integer[];
    all_compiles text[];
    all_fits text[];
    total bigint;
BEGIN
    IF object_table IS NOT NULL THEN
        RAISE EXCEPTION 'object_table is not supported: custom loss and metric functions are not available'
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Pass object_table => NULL and use a built-in loss and metric.';
    END IF;
    PERFORM madlib_dl._assert_not_null(compile_params_list, 'compile_params_list');
    PERFORM madlib_dl._assert_not_null(fit_params_list, 'fit_params_list');
    IF cardinality(compile_params_list) = 0 OR cardinality(fit_params_list) = 0 THEN
        RAISE EXCEPTION '% is empty',
                        CASE WHEN cardinality(compile_params_list) = 0 THEN 'compile_params_list'
                             ELSE 'fit_params_list' END
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give at least one parameter string in each list.';
    END IF;
    ids := madlib_dl._ms_check_model_ids(arch, model_id_list);

    -- every string through the engine, in order; of strings that mean the
    -- same (equal canonical forms) the first is kept
    SELECT array_agg(p ORDER BY o) INTO compiles
      FROM (SELECT DISTINCT ON (canon) p, o
              FROM (SELECT p, o, madlib_dl._check_compile_params(p, format('compile_params_list[%s]', o)) AS canon
                      FROM unnest(compile_params_list) WITH ORDINALITY AS u(p, o)) s
             ORDER BY canon, o) d;
    SELECT array_agg(p ORDER BY o) INTO fits
      FROM (SELECT DISTINCT ON (canon) p, o
              FROM (SELECT p, o, madlib_dl._check_fit_params(p, format('fit_params_list[%s]', o)) AS canon
                      FROM unnest(fit_params_list) WITH ORDINALITY AS u(p, o)) s
             ORDER BY canon, o) d;

    total := cardinality(ids)::bigint * cardinality(compiles) * cardinality(fits);
    IF total > 100000 THEN
        RAISE EXCEPTION 'model_id_list, compile_params_list and fit_params_list give % configurations, more than 100000', total
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Give shorter lists.';
    END IF;
    SELECT array_agg(m ORDER BY mo, co, fo), array_agg(c ORDER BY mo, co, fo),
           array_agg(f ORDER BY mo, co, fo)
      INTO all_ids, all_compiles, all_fits
      FROM unnest(ids) WITH ORDINALITY AS a(m, mo),
           unnest(compiles) WITH ORDINALITY AS b(c, co),
           unnest(fits) WITH ORDINALITY AS c(f, fo);
    PERFORM madlib_dl._ms_store(mst, arch, arch_raw, all_ids, all_compiles, all_fits);
END
$$;

-- generate_model_configs: grid or random search over the grids.
CREATE FUNCTION madlib_dl._generate_model_configs(arch text[], mst text[], arch_raw text,
    model_id_list integer[], compile_params_grid text, fit_params_grid text,
    search_type text, num_configs integer, random_state integer, object_table text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ids integer[];
    all_ids integer[];
    all_compiles text[];
    all_fits text[];
BEGIN
    IF object_table IS NOT NULL THEN
        RAISE EXCEPTION 'object_table is not supported: custom loss and metric functions are not available'
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Pass object_table => NULL and use a built-in loss and metric.';
    END IF;
    PERFORM madlib_dl._assert_not_null(compile_params_grid, 'compile_params_grid');
    PERFORM madlib_dl._assert_not_null(fit_params_grid, 'fit_params_grid');
    PERFORM madlib_dl._assert_not_null(search_type, 'search_type');
    ids := madlib_dl._ms_check_model_ids(arch, model_id_list);
    SELECT array_agg(g.model_id ORDER BY o), array_agg(g.compile_params ORDER BY o),
           array_agg(g.fit_params ORDER BY o)
      INTO all_ids, all_compiles, all_fits
      FROM madlib_dl._model_configs(ids, compile_params_grid, fit_params_grid, search_type,
                                    num_configs, random_state) WITH ORDINALITY AS g(model_id, compile_params, fit_params, o);
    PERFORM madlib_dl._ms_store(mst, arch, arch_raw, all_ids, all_compiles, all_fits);
END
$$;

-- ---------------------------------------------------------------------
-- Public API (MADlib signatures).  Thin wrappers: they resolve the table
-- names in the caller's search_path, then call the pinned drivers.
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl.load_model_selection_table(model_arch_table varchar,
                                                     model_selection_table varchar,
                                                     model_id_list integer[],
                                                     compile_params_list varchar[],
                                                     fit_params_list varchar[],
                                                     object_table varchar DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._load_model_selection_table(
        madlib_dl._resolve_table($1, 'model_arch_table'),
        madlib_dl._resolve_table($2, 'model_selection_table'),
        $1, $3, $4::text[], $5::text[], $6)
$$;

CREATE FUNCTION madlib_dl.generate_model_configs(model_arch_table varchar,
                                                 model_selection_table varchar,
                                                 model_id_list integer[],
                                                 compile_params_grid varchar,
                                                 fit_params_grid varchar,
                                                 search_type varchar DEFAULT 'grid',
                                                 num_configs integer DEFAULT NULL,
                                                 random_state integer DEFAULT NULL,
                                                 object_table varchar DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._generate_model_configs(
        madlib_dl._resolve_table($1, 'model_arch_table'),
        madlib_dl._resolve_table($2, 'model_selection_table'),
        $1, $3, $4, $5, $6, $7, $8, $9)
$$;

-- Help text, as MADlib's fn() and fn('usage').
CREATE FUNCTION madlib_dl.load_model_selection_table(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
SELECT CASE WHEN lower(coalesce(message, '')) IN ('usage', 'help', '?') THEN
$usage$load_model_selection_table: fill a model selection table with every
combination of model ids, compile params and fit params, for fit_multiple.
(Kept for MADlib compatibility; generate_model_configs is the newer way.)

    SELECT madlib_dl.load_model_selection_table(
        model_arch_table       VARCHAR,    -- table made by load_keras_model
        model_selection_table  VARCHAR,    -- table to create or append to
        model_id_list          INTEGER[],  -- model ids of model_arch_table
        compile_params_list    VARCHAR[],  -- compile_params strings
        fit_params_list        VARCHAR[],  -- fit_params strings
        object_table           VARCHAR     -- optional; must be NULL
    );

Every string is parsed when the row is created, so a bad one is an error
here, not when training starts.  The table has the columns
    mst_key          SERIAL PRIMARY KEY
    model_id         INTEGER
    compile_params   VARCHAR
    fit_params       VARCHAR
    UNIQUE (model_id, compile_params, fit_params)
and <model_selection_table>_summary holds model_arch_table and object_table.
An existing table is appended to; rows it already holds are not added
again.

See also: SELECT madlib_dl.generate_model_configs('usage');$usage$
ELSE
$summary$load_model_selection_table: every combination of model ids, compile
params and fit params, as a model selection table.

    SELECT madlib_dl.load_model_selection_table('model_arch_library', 'mst_table',
        ARRAY[1, 2],
        ARRAY['loss=''categorical_crossentropy'', optimizer=''Adam(lr=0.001)'', metrics=[''accuracy'']'],
        ARRAY['batch_size=32, epochs=1', 'batch_size=64, epochs=1']);

For all parameters: SELECT madlib_dl.load_model_selection_table('usage');$summary$
END
$$;

CREATE FUNCTION madlib_dl.load_model_selection_table()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.load_model_selection_table(''::varchar) $$;

CREATE FUNCTION madlib_dl.generate_model_configs(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
SELECT CASE WHEN lower(coalesce(message, '')) IN ('usage', 'help', '?') THEN
$usage$generate_model_configs: fill a model selection table by grid search or
random search over MADlib's parameter grids, for fit_multiple.

    SELECT madlib_dl.generate_model_configs(
        model_arch_table       VARCHAR,    -- table made by load_keras_model
        model_selection_table  VARCHAR,    -- table to create or append to
        model_id_list          INTEGER[],  -- model ids of model_arch_table
        compile_params_grid    VARCHAR,    -- Python dict of lists (below)
        fit_params_grid        VARCHAR,    -- Python dict of lists
        search_type            VARCHAR,    -- 'grid' (default) or 'random'
                                           -- (any prefix, e.g. 'rand')
        num_configs            INTEGER,    -- random: how many to draw; grid: NULL
        random_state           INTEGER,    -- random: seed (NULL: from the clock)
        object_table           VARCHAR     -- must be NULL
    );

Grids map parameter names to lists of values.  The compile grid may hold
optimizer_params_list, a list of alternative optimizer dicts:
    {'loss': ['categorical_crossentropy'], 'metrics': ['accuracy'],
     'optimizer_params_list': [
         {'optimizer': ['SGD'], 'lr': [0.0001, 0.001, 'log'],
          'momentum': [0.95, 0.99, 'log_near_one']},
         {'optimizer': ['Adam'], 'lr': [0.01, 0.1]}]}
    {'batch_size': [64, 128], 'epochs': [10]}
Grid search gives every combination.  Random search draws num_configs
combinations; [low, high, 'linear' | 'log' | 'log_near_one'] is a
distribution to sample from, any other list is chosen from uniformly.
The same random_state gives the same rows.

Generated strings look like
    optimizer='SGD(lr=0.001,momentum=0.99)',loss='categorical_crossentropy',metrics=['accuracy']
    batch_size=64,epochs=10
and every one is parsed before any row is stored.  The table is the one
load_model_selection_table makes; an existing table is appended to.

See also: SELECT madlib_dl.load_model_selection_table('usage');$usage$
ELSE
$summary$generate_model_configs: grid or random search over parameter grids,
as a model selection table.

    SELECT madlib_dl.generate_model_configs('model_arch_library', 'mst_table', ARRAY[1, 2],
        $$ {'loss': ['categorical_crossentropy'], 'metrics': ['accuracy'],
            'optimizer_params_list': [{'optimizer': ['Adam'], 'lr': [0.001, 0.01]}]} $$,
        $$ {'batch_size': [64, 128], 'epochs': [10]} $$);

For all parameters: SELECT madlib_dl.generate_model_configs('usage');$summary$
END
$fn$;

CREATE FUNCTION madlib_dl.generate_model_configs()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.generate_model_configs(''::varchar) $$;
-- 60_fit_multiple.sql: madlib_keras_fit_multiple_model / fit_multiple, as
-- in MADlib (madlib_keras_fit_multiple_model.sql_in), trained by model
-- hopper parallelism over the virtual segments (src/pg/fit_multiple.c,
-- src/pg/segments.c).  docs/fit-multiple.md is the user page.

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
    workers_launched     integer
);

-- The whole model selection run, in one call: parallel workers, one per
-- virtual segment, holding their partitions in memory; the models hop
-- between segments through shared memory.  One row per model, in the
-- order of mst_keys.  init_weights elements NULL: random initialisation
-- from the model's seed.  Writes nothing; the driver writes the tables.
-- PARALLEL UNSAFE: it starts its own parallel workers.
CREATE FUNCTION madlib_dl._fit_multiple_run(source regclass, x_col text, y_col text,
    validation regclass, val_x_col text, val_y_col text,
    mst_keys integer[], model_archs text[], init_weights bytea[],
    compile_params text[], fit_params text[], num_iterations integer,
    metrics_compute_frequency integer, num_segments integer, schedule_seed bigint)
RETURNS SETOF madlib_dl._fit_multiple_result
AS 'MODULE_PATHNAME', 'madlib_dl__fit_multiple_run'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 10;

-- ---------------------------------------------------------------------
-- The driver (internal; search_path pinned)
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl._fit_multiple(source text[], model text[], mst text[],
    num_iterations integer, use_gpus boolean, validation text[],
    metrics_compute_frequency integer, warm_start boolean, name varchar,
    description varchar, use_caching boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    info_tbl text[] := ARRAY[model[1], model[2] || '_info'];
    summary_tbl text[] := ARRAY[model[1], model[2] || '_summary'];
    mst_summ text[] := ARRAY[mst[1], mst[2] || '_summary'];
    what constant text := 'a model selection table made by load_model_selection_table '
                          'or generate_model_configs';
    -- the visit order's seed (MADlib seeds its schedule with 1)
    schedule_seed constant bigint := 1;
    src_rel regclass;
    val_rel regclass;
    mst_rel regclass;
    msum_rel regclass;
    arch_rel regclass;
    psum jsonb;
    vsum jsonb;
    x_col text;
    y_col text;
    vx_col text;
    vy_col text;
    arch_raw text;
    arch_tbl text[];
    col text;
    col_type text;
    keys integer[];
    ids integer[];
    compiles text[];
    fits text[];
    archs text[];
    inits bytea[];
    loss_types text[];
    metric_types text[];
    n_params bigint[];
    params record;
    a json;
    aw bytea;
    old_w bytea;
    old_arch json;
    freq integer;
    nseg integer;
    nt bigint;
    i integer;
    cv_col text;
    cv_type text;
    t_start timestamp;
    t_end timestamp;
    results madlib_dl._fit_multiple_result[];
    sched integer[];
    planned_iters integer[];
BEGIN
    -- 1. arguments that need no table
    PERFORM madlib_dl._assert_not_null(num_iterations, 'num_iterations');
    IF coalesce(use_gpus, false) THEN
        RAISE EXCEPTION 'use_gpus is not supported: this build of madlib_dl has no GPU backend'
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Call fit_multiple with use_gpus => false; training runs on the CPU cores of all segments.';
    END IF;
    freq := madlib_dl._fit_check_iterations(num_iterations, metrics_compute_frequency);

    -- 2. tables: inputs exist, outputs absent (or the model table present for warm start)
    src_rel := madlib_dl._assert_table_exists(source, 'source_table');
    psum := madlib_dl._fit_packed_summary(source, 'source_table');
    y_col := psum->'dependent_varname'->>0;
    x_col := psum->'independent_varname'->>0;
    IF warm_start THEN
        PERFORM madlib_dl._assert_columns(madlib_dl._assert_table_exists(model, 'model_output_table'),
            ARRAY['mst_key', 'model_weights', 'model_arch'], ARRAY['integer', 'bytea', 'json'],
            'the model table of an earlier fit_multiple (warm_start)');
    ELSE
        PERFORM madlib_dl._assert_schema_exists(model);
        PERFORM madlib_dl._assert_output_absent(model, 'model_output_table');
        PERFORM madlib_dl._assert_output_absent(info_tbl, 'model info table');
        PERFORM madlib_dl._assert_output_absent(summary_tbl, 'model summary table');
    END IF;
    IF validation IS NOT NULL THEN
        val_rel := madlib_dl._assert_table_exists(validation, 'validation_table');
        vsum := madlib_dl._fit_packed_summary(validation, 'validation_table');
        vy_col := vsum->'dependent_varname'->>0;
        vx_col := vsum->'independent_varname'->>0;
    END IF;

    -- 3. the model selection table and its summary
    mst_rel := madlib_dl._assert_table_exists(mst, 'model_selection_table');
    PERFORM madlib_dl._assert_columns(mst_rel, ARRAY['mst_key', 'model_id'],
        ARRAY['integer', 'integer'], what);
    FOR col IN SELECT unnest(ARRAY['compile_params', 'fit_params']) LOOP
        SELECT format_type(t.atttypid, t.atttypmod) INTO col_type
          FROM pg_attribute t
         WHERE t.attrelid = mst_rel AND t.attname = col AND t.attnum > 0 AND NOT t.attisdropped;
        IF NOT FOUND THEN
            PERFORM madlib_dl._assert_columns(mst_rel, ARRAY[col], ARRAY['character varying'], what);
        ELSIF col_type NOT IN ('character varying', 'text') THEN
            RAISE EXCEPTION 'column "%" of table "%" has type %, not character varying or text',
                            col, madlib_dl._table_label(mst), col_type
                USING ERRCODE = 'datatype_mismatch',
                      HINT = format('Give %s.', what);
        END IF;
    END LOOP;
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
    IF EXISTS (SELECT 1 FROM pg_attribute t WHERE t.attrelid = msum_rel AND t.attname = 'object_table'
                  AND t.attnum > 0 AND NOT t.attisdropped) THEN
        EXECUTE format('SELECT count(*) FROM %s WHERE object_table IS NOT NULL',
                       madlib_dl._table_sql(mst_summ)) INTO nt;
        IF nt > 0 THEN
            RAISE EXCEPTION 'object_table is not supported: custom loss and metric functions are not available'
                USING ERRCODE = 'feature_not_supported',
                      HINT = 'Use a model selection table whose summary has object_table NULL.';
        END IF;
    END IF;
    arch_tbl := parse_ident(arch_raw);
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
    IF nt > 1024 THEN
        RAISE EXCEPTION 'model_selection_table "%" has % configurations, more than 1024',
                        madlib_dl._table_label(mst), nt
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Train the configurations in several calls of at most 1024.';
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
        loss_types[i] := params.loss_type;
        metric_types[i] := params.metrics_type[1];
        EXECUTE format('SELECT count(*), (array_agg(model_arch))[1], (array_agg(model_weights))[1]'
                       '  FROM %s WHERE model_id = $1', madlib_dl._table_sql(arch_tbl))
           INTO nt, a, aw USING ids[i];
        IF nt = 0 OR a IS NULL THEN
            RAISE EXCEPTION 'model_id % of mst_key % not found in model architecture table "%"',
                            ids[i], keys[i], madlib_dl._table_label(arch_tbl)
                USING ERRCODE = 'no_data_found',
                      HINT = format('SELECT model_id, name FROM %s lists the architectures it holds.',
                                    madlib_dl._table_sql(arch_tbl));
        END IF;
        archs[i] := a::text;
        inits[i] := aw;     -- transfer learning; NULL: random
        n_params[i] := (madlib_dl._arch_info(a)).n_params;
        PERFORM madlib_dl._check_model_memory(a, params.batch_size, format('mst_key %s', keys[i]));
        IF array_position(ids[1:i - 1], ids[i]) IS NULL THEN
            -- each architecture once: the data must fit it
            PERFORM madlib_dl._fit_check_packed(source, 'source_table', x_col, y_col, a);
            IF validation IS NOT NULL THEN
                PERFORM madlib_dl._fit_check_packed(validation, 'validation_table', vx_col, vy_col, a);
            END IF;
        END IF;
    END LOOP;

    -- 5. warm start: keys in the model table continue from their weights
    IF warm_start THEN
        FOR i IN 1 .. cardinality(keys) LOOP
            EXECUTE format('SELECT count(*), (array_agg(model_weights))[1], (array_agg(model_arch))[1]'
                           '  FROM %s WHERE mst_key = $1', madlib_dl._table_sql(model))
               INTO nt, old_w, old_arch USING keys[i];
            CONTINUE WHEN nt = 0;       -- a new key: starts fresh
            IF old_w IS NULL OR octet_length(old_w) <> 4 * n_params[i] THEN
                RAISE EXCEPTION 'model table "%" holds % weights for mst_key %, but its architecture has %',
                                madlib_dl._table_label(model), octet_length(old_w) / 4, keys[i], n_params[i]
                    USING ERRCODE = 'data_exception',
                          HINT = 'Warm start with the model selection table the models were trained with, or warm_start => false.';
            END IF;
            IF old_arch IS NOT NULL
               AND (madlib_dl._arch_info(old_arch)).fingerprint
                   <> (madlib_dl._arch_info(archs[i]::json)).fingerprint THEN
                RAISE EXCEPTION 'mst_key % in model table "%" was trained with another architecture',
                                keys[i], madlib_dl._table_label(model)
                    USING ERRCODE = 'data_exception',
                          HINT = 'Warm start with the model selection table the models were trained with, or warm_start => false.';
            END IF;
            inits[i] := old_w;
        END LOOP;
    END IF;
    FOR i IN 1 .. cardinality(keys) LOOP
        IF inits[i] IS NOT NULL THEN
            -- warm-start and transfer weights: right size and finite, before any work
            PERFORM madlib_dl._validate_arch(archs[i]::json, inits[i]);
        END IF;
    END LOOP;

    IF madlib_dl._is_greenplum() THEN   -- Greenplum/Cloudberry: schedule table rotated each hop (90_greenplum.sql)
        t_start := clock_timestamp();
        results := ARRAY(SELECT r FROM madlib_dl._gp_fit_multiple_run(src_rel, x_col, y_col, val_rel, vx_col, vy_col,
                          keys, archs, inits, compiles, fits, num_iterations, freq, NULL, schedule_seed) r);
        t_end := clock_timestamp();
    ELSIF madlib_dl._px_cluster_of(src_rel) IS NOT NULL THEN  -- distributed over a PL/Proxy cluster (80_plproxy.sql)
        t_start := clock_timestamp();
        results := ARRAY(SELECT r FROM madlib_dl._px_fit_multiple_run(src_rel, x_col, y_col, val_rel, vx_col, vy_col,
                          keys, archs, inits, compiles, fits, num_iterations, freq, NULL, schedule_seed) r);
        t_end := clock_timestamp();
    ELSE
    -- 6. segments: the packed table's count, else derived from its keys
    nseg := madlib_dl._fit_num_segments(source, src_rel, psum);

    -- 7. train (no table is written before this returns)
    PERFORM madlib_dl._progress_label(madlib_dl._table_label(model));
    t_start := clock_timestamp();
    results := ARRAY(
        SELECT r FROM madlib_dl._fit_multiple_run(src_rel, x_col, y_col, val_rel, vx_col, vy_col,
                          keys, archs, inits, compiles, fits, num_iterations, freq, nseg,
                          schedule_seed) r);
    t_end := clock_timestamp();
    END IF;
    sched := (results[1]).schedule;
    SELECT array_agg(g ORDER BY g) INTO planned_iters
      FROM generate_series(1, num_iterations) g
     WHERE g % freq = 0 OR g = num_iterations;

    -- 8. output tables, in this transaction
    IF warm_start THEN
        EXECUTE format('DROP TABLE %s', madlib_dl._table_sql(model));
        EXECUTE format('DROP TABLE IF EXISTS %s', madlib_dl._table_sql(info_tbl));
        EXECUTE format('DROP TABLE IF EXISTS %s', madlib_dl._table_sql(summary_tbl));
    END IF;
    EXECUTE format('CREATE TABLE %s (mst_key integer PRIMARY KEY, model_weights bytea, model_arch json)',
                   madlib_dl._table_sql(model));
    EXECUTE format('INSERT INTO %s SELECT r.mst_key, r.model_weights, a::json'
                   '  FROM unnest($1) r JOIN unnest($2, $3) AS k(key, a) ON k.key = r.mst_key'
                   ' ORDER BY r.mst_key', madlib_dl._table_sql(model))
       USING results, keys, archs;

    EXECUTE format(
        'CREATE TABLE %s ('
        '  mst_key integer PRIMARY KEY, model_id integer, compile_params text, fit_params text,'
        '  model_type text, model_size double precision, metrics_elapsed_time double precision[],'
        '  metrics_type text[], loss_type text,'
        '  training_metrics_final double precision, training_loss_final double precision,'
        '  training_metrics double precision[], training_loss double precision[],'
        '  validation_metrics_final double precision, validation_loss_final double precision,'
        '  validation_metrics double precision[], validation_loss double precision[],'
        '  metrics_iters integer[], status text)', madlib_dl._table_sql(info_tbl));
    EXECUTE format(
        'INSERT INTO %s'
        ' SELECT r.mst_key, k.id, k.c, k.f, ''madlib_keras'', octet_length(r.model_weights) / 1024.0,'
        '        r.metrics_elapsed_time, CASE WHEN k.m IS NULL THEN NULL ELSE ARRAY[k.m] END, k.l,'
        '        r.training_metrics[array_upper(r.training_metrics, 1)],'
        '        r.training_loss[array_upper(r.training_loss, 1)],'
        '        r.training_metrics, r.training_loss,'
        '        r.validation_metrics[array_upper(r.validation_metrics, 1)],'
        '        r.validation_loss[array_upper(r.validation_loss, 1)],'
        '        r.validation_metrics, r.validation_loss, r.metrics_iters, r.status'
        '   FROM unnest($1) r'
        '   JOIN unnest($2, $3, $4, $5, $6, $7) AS k(key, id, c, f, l, m) ON k.key = r.mst_key'
        '  ORDER BY r.mst_key', madlib_dl._table_sql(info_tbl))
       USING results, keys, ids, compiles, fits, loss_types, metric_types;

    cv_col := y_col || '_class_values';
    SELECT format_type(t.atttypid, t.atttypmod) INTO cv_type
      FROM pg_attribute t
     WHERE t.attrelid = madlib_dl._table_oid(ARRAY[source[1], source[2] || '_summary'])
       AND t.attname = cv_col AND t.attnum > 0 AND NOT t.attisdropped;
    EXECUTE format(
        'CREATE TABLE %s ('
        '  source_table text, validation_table text, model text, model_info text,'
        '  dependent_varname text[], independent_varname text[], model_arch_table text,'
        '  model_selection_table text, object_table text, num_iterations integer,'
        '  metrics_compute_frequency integer, warm_start boolean, name text, description text,'
        '  start_training_time timestamp, end_training_time timestamp, madlib_version text,'
        '  num_classes integer[], %I %s, dependent_vartype text[], normalizing_const real,'
        '  metrics_iters integer[], schedule integer[], use_caching boolean)',
        madlib_dl._table_sql(summary_tbl), cv_col, coalesce(cv_type, 'text[]'));
    EXECUTE format(
        'INSERT INTO %s SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,'
        ' $16, $17, $18, %s, $19, $20, $21, $22, $23',
        madlib_dl._table_sql(summary_tbl),
        CASE WHEN cv_type IS NULL THEN 'NULL::text[]'
             ELSE format('(SELECT s.%I FROM %s s LIMIT 1)', cv_col,
                         madlib_dl._table_sql(ARRAY[source[1], source[2] || '_summary'])) END)
    USING
        madlib_dl._table_label(source),
        CASE WHEN validation IS NULL THEN NULL ELSE madlib_dl._table_label(validation) END,
        madlib_dl._table_label(model),
        madlib_dl._table_label(info_tbl),
        ARRAY(SELECT jsonb_array_elements_text(psum->'dependent_varname')),
        ARRAY(SELECT jsonb_array_elements_text(psum->'independent_varname')),
        madlib_dl._table_label(arch_tbl),
        madlib_dl._table_label(mst),
        NULL::text,                                                   -- object_table
        num_iterations,
        freq,
        warm_start,
        name::text,
        description::text,
        t_start,
        t_end,
        madlib_dl.version(),
        -- the class count (MADlib stores the number of dependent variables here)
        CASE WHEN jsonb_typeof(psum->'num_classes') = 'array'
             THEN ARRAY(SELECT jsonb_array_elements_text(psum->'num_classes'))::integer[]
             WHEN jsonb_typeof(psum->'num_classes') = 'number'
             THEN ARRAY[(psum->>'num_classes')::integer] END,
        CASE WHEN jsonb_typeof(psum->'dependent_vartype') = 'array'
             THEN ARRAY(SELECT jsonb_array_elements_text(psum->'dependent_vartype')) END,
        coalesce((psum->>'normalizing_const')::real, 1.0::real),
        planned_iters,
        sched,
        coalesce(use_caching, false);
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
    use_caching boolean DEFAULT false)
RETURNS void
LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
AS $$
    SELECT madlib_dl._fit_multiple(
        madlib_dl._resolve_table($1, 'source_table'),
        madlib_dl._resolve_table($2, 'model_output_table'),
        madlib_dl._resolve_table($3, 'model_selection_table'),
        $4, $5,
        CASE WHEN $6 IS NULL THEN NULL ELSE madlib_dl._resolve_table($6, 'validation_table') END,
        $7, coalesce($8, false), $9, $10, coalesce($11, false))
$$;

CREATE FUNCTION madlib_dl.fit_multiple(source_table varchar,
    model_output_table varchar, model_selection_table varchar, num_iterations integer,
    use_gpus boolean DEFAULT false, validation_table varchar DEFAULT NULL,
    metrics_compute_frequency integer DEFAULT NULL, warm_start boolean DEFAULT false,
    name varchar DEFAULT NULL, description varchar DEFAULT NULL,
    use_caching boolean DEFAULT false)
RETURNS void
LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
AS $$
    SELECT madlib_dl.madlib_keras_fit_multiple_model($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
$$;

-- Help text, as MADlib's fn() and fn('usage').
CREATE FUNCTION madlib_dl.madlib_keras_fit_multiple_model(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $body$
SELECT CASE WHEN lower(coalesce(message, '')) IN ('usage', 'help', '?') THEN
$usage$madlib_keras_fit_multiple_model (also: fit_multiple): train every
configuration of a model selection table at once, by model hopper
parallelism over all virtual segments.

    SELECT madlib_dl.madlib_keras_fit_multiple_model(
        source_table              VARCHAR,  -- table made by training_preprocessor_dl
        model_output_table        VARCHAR,  -- output; <out>_info and <out>_summary too
        model_selection_table     VARCHAR,  -- made by generate_model_configs or
                                            --   load_model_selection_table
        num_iterations            INTEGER,  -- iterations; each = every model visits
                                            --   every segment once
        use_gpus                  BOOLEAN,  -- DEFAULT false (true is an error: no GPU backend)
        validation_table          VARCHAR,  -- DEFAULT NULL; made by validation_preprocessor_dl
        metrics_compute_frequency INTEGER,  -- DEFAULT NULL = num_iterations
        warm_start                BOOLEAN,  -- DEFAULT false: continue the keys in <out>
        name                      VARCHAR,  -- DEFAULT NULL, stored in the summary
        description               VARCHAR,  -- DEFAULT NULL, stored in the summary
        use_caching               BOOLEAN   -- DEFAULT false; recorded only: partitions
                                            --   always stay in memory during a call
    );

In one iteration every model visits every segment exactly once and trains
there for its own `epochs` passes over that segment's partition; the
models hop between segments (max(#models, #segments) hops), the data stays
where it is.  Passes over the data = epochs x num_iterations.  Results are
byte-identical however many parallel workers PostgreSQL launched.

Output: <out> (mst_key, model_weights, model_arch), <out>_info (one row
per mst_key: parameters and metric history), <out>_summary (one row).
docs/fit-multiple.md describes them.$usage$
ELSE
$summary$madlib_keras_fit_multiple_model: train every configuration of a model
selection table at once (model hopper parallelism).

    SELECT madlib_dl.madlib_keras_fit_multiple_model('iris_train_packed', 'iris_multi',
        'mst_table', 10, FALSE, 'iris_test_packed');

For all parameters: SELECT madlib_dl.madlib_keras_fit_multiple_model('usage');$summary$
END
$body$;

CREATE FUNCTION madlib_dl.madlib_keras_fit_multiple_model()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.madlib_keras_fit_multiple_model(''::varchar) $$;

CREATE FUNCTION madlib_dl.fit_multiple(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.madlib_keras_fit_multiple_model(message) $$;

CREATE FUNCTION madlib_dl.fit_multiple()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.madlib_keras_fit_multiple_model(''::varchar) $$;
-- 70_progress.sql: live progress of fit and fit_multiple (src/pg/progress.c).
-- The view madlib_dl.fit_progress reads slots in shared memory that the
-- running fit / fit_multiple rewrites after every iteration, so another
-- session sees each iteration as it ends (nothing is written to tables).
-- It needs shared_preload_libraries = 'madlib_dl' in postgresql.conf
-- (and a restart); without it the view is always empty.

-- One row per run in progress (internal; the view names the columns).
CREATE FUNCTION madlib_dl._progress(
    OUT run_id bigint, OUT pid integer, OUT database text, OUT username text,
    OUT function text, OUT source_table text, OUT output_table text,
    OUT iteration integer, OUT num_iterations integer,
    OUT models_done integer, OUT num_models integer,
    OUT best_metric double precision, OUT elapsed_seconds double precision,
    OUT seconds_left double precision,
    OUT started_at timestamptz, OUT updated_at timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'madlib_dl__progress'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

-- The output table name the next run started in this transaction shows,
-- for a driver whose C function is not given it.  NULL clears it.
CREATE FUNCTION madlib_dl._progress_label(output text)
RETURNS void
AS 'MODULE_PATHNAME', 'madlib_dl__progress_label'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- true when madlib_dl is in shared_preload_libraries, so that
-- madlib_dl.fit_progress can show runs.
CREATE FUNCTION madlib_dl._progress_enabled()
RETURNS boolean
AS 'MODULE_PATHNAME', 'madlib_dl__progress_enabled'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE VIEW madlib_dl.fit_progress AS
SELECT run_id, pid, database, username, function, source_table, output_table,
       iteration, num_iterations, models_done, num_models, best_metric,
       elapsed_seconds, seconds_left, started_at, updated_at
FROM madlib_dl._progress();

COMMENT ON VIEW madlib_dl.fit_progress IS
'Runs of fit and fit_multiple in progress on this server, updated after every iteration '
'through shared memory. Needs shared_preload_libraries = ''madlib_dl'' (and a server restart); '
'otherwise it is always empty. See docs/functions/fit_progress.md.';

GRANT SELECT ON madlib_dl.fit_progress TO PUBLIC;
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
-- 80_plproxy.sql: fit_multiple across several PostgreSQL servers with
-- PL/Proxy (docs/plproxy.md).
--
-- A cluster is a PL/Proxy SQL/MED server on the coordinator with one
-- partition per segment: partition k (option pk) is a connection to the
-- data node that holds segment k (the buffers with __dist_key__ = k) of
-- every table distributed over the cluster.  plproxy_create_cluster puts
-- segment k on node k % n_nodes and gives every partition its own
-- application_name, so that two segments of one node get two connections
-- and run at the same time.
--
-- Each hop of fit_multiple is one proxy call (_px_train): SPLIT the
-- (segment, model state) pairs, RUN ON the segments; each node runs the
-- per-segment step (_gp_fit_segment, the aggregate of the Greenplum
-- path) on its rows of that segment and returns the new state.  The
-- schedule is the one of the single-server path (_gp_visit_order, the
-- same rotation), so the weights are byte-identical to a single-server
-- fit_multiple on the same packed table.  Only model states move.
--
-- What is created where:
--   * always (no PL/Proxy needed): the catalog madlib_dl.plproxy_tables,
--     the node-side functions _px_node_*, the coordinator driver
--     _px_fit_multiple_run, and plproxy_setup / plproxy_create_cluster /
--     plproxy_distribute;
--   * only where the plproxy extension exists: the proxy functions
--     (LANGUAGE plproxy) _px_prepare, _px_insert, _px_train, _px_eval,
--     made by madlib_dl.plproxy_setup(): at install time when plproxy is
--     already there, else call it after CREATE EXTENSION plproxy.

-- ---------------------------------------------------------------------
-- Catalog: which packed tables live on which cluster
-- ---------------------------------------------------------------------

-- One row per distributed packed table (written by plproxy_distribute).
-- The coordinator keeps the table itself (its rows are not read by
-- training; they may be truncated) and its _summary.
CREATE TABLE madlib_dl.plproxy_tables (
    schema_name  text NOT NULL,
    table_name   text NOT NULL,
    cluster      text NOT NULL,
    num_segments integer NOT NULL CHECK (num_segments BETWEEN 1 AND 64),
    distributed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (schema_name, table_name)
);
GRANT SELECT ON madlib_dl.plproxy_tables TO PUBLIC;

-- The cluster a packed table is distributed over, or NULL (not distributed).
CREATE FUNCTION madlib_dl._px_cluster_of(source regclass)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT t.cluster FROM madlib_dl.plproxy_tables t
      JOIN pg_class c ON c.oid = source
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE t.schema_name = n.nspname AND t.table_name = c.relname
$$;

-- The cluster name, for the proxy functions' CLUSTER statement.
CREATE FUNCTION madlib_dl._px_cluster_name(cluster text)
RETURNS text
LANGUAGE sql IMMUTABLE
AS $$ SELECT cluster $$;

-- Number of partitions (p0, p1, ... options) of PL/Proxy server cluster;
-- ERROR when there is no such server.
CREATE FUNCTION madlib_dl._px_partitions(cluster text)
RETURNS integer
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer;
BEGIN
    SELECT count(*) FILTER (WHERE o ~ '^p[0-9]+=') INTO n
      FROM pg_foreign_server s
      JOIN pg_foreign_data_wrapper w ON w.oid = s.srvfdw AND w.fdwname = 'plproxy'
      LEFT JOIN LATERAL unnest(s.srvoptions) o ON true
     WHERE s.srvname = cluster
     GROUP BY s.oid;
    IF n IS NULL THEN
        RAISE EXCEPTION 'PL/Proxy cluster "%" does not exist', cluster
            USING ERRCODE = 'undefined_object',
                  HINT = 'Create it with madlib_dl.plproxy_create_cluster, or CREATE SERVER ... FOREIGN DATA WRAPPER plproxy.';
    END IF;
    RETURN n;
END
$$;

-- ---------------------------------------------------------------------
-- Node side (run on the data nodes by the proxy functions)
-- ---------------------------------------------------------------------

-- A node's copy of table tbl = {schema, name}; ERROR when absent.
CREATE FUNCTION madlib_dl._px_node_table(tbl text[])
RETURNS regclass
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass;
BEGIN
    rel := to_regclass(format('%I.%I', tbl[1], tbl[2]));
    IF rel IS NULL THEN
        RAISE EXCEPTION 'table "%.%" does not exist on data node %', tbl[1], tbl[2],
                        coalesce(current_setting('cluster_name', true), '') || ' ' || current_database()
            USING ERRCODE = 'undefined_table',
                  HINT = 'Distribute the packed table with madlib_dl.plproxy_distribute.';
    END IF;
    RETURN rel;
END
$$;

-- Make table tbl (columns colnames of types coltypes) on this node if it
-- is not there, and empty its segments segs.  Runs once per partition;
-- partitions of one node serialize on an advisory lock.
CREATE FUNCTION madlib_dl._px_node_prepare(cluster text, tbl text[], colnames text[],
    coltypes text[], segs integer[])
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cols text;
    n bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('madlib_dl.plproxy ' || tbl[1] || '.' || tbl[2]));
    IF to_regclass(format('%I.%I', tbl[1], tbl[2])) IS NULL THEN
        SELECT string_agg(format('%I %s', c.n, c.t::regtype::text), ', ' ORDER BY c.i) INTO cols
          FROM unnest(colnames, coltypes) WITH ORDINALITY AS c(n, t, i);
        EXECUTE format('CREATE TABLE %I.%I (%s)', tbl[1], tbl[2], cols);
    END IF;
    EXECUTE format('DELETE FROM %s WHERE __dist_key__ = ANY($1)', madlib_dl._px_node_table(tbl)) USING segs;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

-- Insert rows (row_to_json of the coordinator's rows) into tbl.
CREATE FUNCTION madlib_dl._px_node_insert(cluster text, tbl text[], segs integer[], rows json[])
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass := madlib_dl._px_node_table(tbl);
    n bigint;
BEGIN
    EXECUTE format('INSERT INTO %1$s SELECT * FROM json_populate_recordset(NULL::%1$s, array_to_json($1))', rel)
    USING rows;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

-- One hop on this node: for each i, train states[i] (model archs[i],
-- compiles[i], fits[i]) on segment segs[i] of source for one visit.
-- state NULL: training diverged; empty: the segment has no rows here
-- (state is the input state).
CREATE FUNCTION madlib_dl._px_node_train(cluster text, source text[], x_col text, y_col text,
    segs integer[], states bytea[], archs text[], compiles text[], fits text[], iteration integer,
    OUT seg integer, OUT state bytea, OUT empty boolean)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    q text;
    n bigint;
BEGIN
    q := format('SELECT madlib_dl._gp_fit_segment(s.%1$I, s.%2$I, s.%3$I, s.%4$I, $1, $2::json, $3, $4,'
                '           $5, $6 ORDER BY s.buffer_id), count(*)'
                '  FROM %5$s s WHERE s.__dist_key__ = $6',
                y_col, x_col, y_col || '_shape', x_col || '_shape', madlib_dl._px_node_table(source));
    FOR i IN 1 .. coalesce(array_length(segs, 1), 0) LOOP
        seg := segs[i];
        EXECUTE q INTO state, n USING states[i], archs[i], compiles[i], fits[i], iteration, segs[i];
        empty := n = 0;
        IF empty THEN
            state := states[i];
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;

-- Evaluate states[i] on segment segs[i]: e = {loss_sum, metric_sum, n}.
CREATE FUNCTION madlib_dl._px_node_eval(cluster text, source text[], x_col text, y_col text,
    segs integer[], msts integer[], states bytea[], archs text[], compiles text[], fits text[],
    OUT seg integer, OUT mst_key integer, OUT e double precision[])
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    q text;
BEGIN
    q := format('SELECT madlib_dl._gp_eval_segment(s.%1$I, s.%2$I, s.%3$I, s.%4$I, $1, $2::json, $3, $4'
                '           ORDER BY s.buffer_id)'
                '  FROM %5$s s WHERE s.__dist_key__ = $5',
                y_col, x_col, y_col || '_shape', x_col || '_shape', madlib_dl._px_node_table(source));
    FOR i IN 1 .. coalesce(array_length(segs, 1), 0) LOOP
        seg := segs[i];
        mst_key := msts[i];
        EXECUTE q INTO e USING states[i], archs[i], compiles[i], fits[i], segs[i];
        RETURN NEXT;
    END LOOP;
END
$$;

-- Answer a ping of partition part (its node is up and has madlib_dl).
CREATE FUNCTION madlib_dl._px_node_ping(cluster text, part integer)
RETURNS integer
LANGUAGE sql STABLE
AS $$ SELECT part $$;

-- ---------------------------------------------------------------------
-- Coordinator: the proxy functions (need the plproxy extension)
-- ---------------------------------------------------------------------

-- Create (or replace) the PL/Proxy functions.  Run after
-- CREATE EXTENSION plproxy on the coordinator (the install script runs
-- it when plproxy is already there).
CREATE FUNCTION madlib_dl.plproxy_setup()
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    f text;
    sig text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_language WHERE lanname = 'plproxy') THEN
        RAISE EXCEPTION 'language plproxy does not exist'
            USING ERRCODE = 'undefined_object',
                  HINT = 'Install postgresql-15-plproxy and run CREATE EXTENSION plproxy on the coordinator first.';
    END IF;
    EXECUTE $f$
    CREATE OR REPLACE FUNCTION madlib_dl._px_prepare(cluster text, tbl text[], colnames text[],
        coltypes text[], segs integer[])
    RETURNS SETOF integer AS $p$
        CLUSTER madlib_dl._px_cluster_name(cluster);
        SPLIT segs;
        RUN ON segs;
        TARGET madlib_dl._px_node_prepare;
    $p$ LANGUAGE plproxy
    $f$;
    EXECUTE $f$
    CREATE OR REPLACE FUNCTION madlib_dl._px_insert(cluster text, tbl text[], segs integer[], rows json[])
    RETURNS SETOF integer AS $p$
        CLUSTER madlib_dl._px_cluster_name(cluster);
        SPLIT segs, rows;
        RUN ON segs;
        TARGET madlib_dl._px_node_insert;
    $p$ LANGUAGE plproxy
    $f$;
    EXECUTE $f$
    CREATE OR REPLACE FUNCTION madlib_dl._px_train(cluster text, source text[], x_col text, y_col text,
        segs integer[], states bytea[], archs text[], compiles text[], fits text[], iteration integer,
        OUT seg integer, OUT state bytea, OUT empty boolean)
    RETURNS SETOF record AS $p$
        CLUSTER madlib_dl._px_cluster_name(cluster);
        SPLIT segs, states, archs, compiles, fits;
        RUN ON segs;
        TARGET madlib_dl._px_node_train;
    $p$ LANGUAGE plproxy
    $f$;
    EXECUTE $f$
    CREATE OR REPLACE FUNCTION madlib_dl._px_eval(cluster text, source text[], x_col text, y_col text,
        segs integer[], msts integer[], states bytea[], archs text[], compiles text[], fits text[],
        OUT seg integer, OUT mst_key integer, OUT e double precision[])
    RETURNS SETOF record AS $p$
        CLUSTER madlib_dl._px_cluster_name(cluster);
        SPLIT segs, msts, states, archs, compiles, fits;
        RUN ON segs;
        TARGET madlib_dl._px_node_eval;
    $p$ LANGUAGE plproxy
    $f$;
    EXECUTE $f$
    CREATE OR REPLACE FUNCTION madlib_dl._px_ping(cluster text, part integer)
    RETURNS integer AS $p$
        CLUSTER madlib_dl._px_cluster_name(cluster);
        RUN ON part;
        TARGET madlib_dl._px_node_ping;
    $p$ LANGUAGE plproxy
    $f$;
    -- members of the extension, so that DROP EXTENSION drops them too
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'madlib_dl') THEN
        FOREACH f IN ARRAY ARRAY['_px_prepare', '_px_insert', '_px_train', '_px_eval', '_px_ping'] LOOP
            SELECT p.oid::regprocedure::text INTO sig FROM pg_proc p
             WHERE p.proname = f AND p.pronamespace = 'madlib_dl'::regnamespace;
            IF NOT EXISTS (SELECT 1 FROM pg_depend d
                            WHERE d.classid = 'pg_proc'::regclass AND d.objid = sig::regprocedure
                              AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e') THEN
                EXECUTE format('ALTER EXTENSION madlib_dl ADD FUNCTION %s', sig);
            END IF;
        END LOOP;
    END IF;
END
$$;

-- Raise again an error a proxy call of cluster gave (sqlstate, msg,
-- detail, hint), naming the data nodes that fail: every partition is
-- pinged; those that do not answer are reported with their conninfo
-- (less any password) as a connection_failure.  Otherwise the error is
-- raised again as it was, with the cluster named in its context.
CREATE FUNCTION madlib_dl._px_rethrow(cluster text, state text, msg text, detail text, hint text)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    down text[] := '{}';
    conn text;
BEGIN
    FOR k IN 0 .. madlib_dl._px_partitions(cluster) - 1 LOOP
        BEGIN
            PERFORM madlib_dl._px_ping(cluster, k);
        EXCEPTION WHEN OTHERS THEN
            SELECT regexp_replace(regexp_replace(substr(o, length(format('p%s=', k)) + 1),
                                                 '\s*password\s*=\s*(''([^'']|\\'')*''|\S+)', '', 'g'),
                                  '\s*application_name\s*=\s*\S+', '', 'g')
              INTO conn
              FROM pg_foreign_server s, unnest(s.srvoptions) o
             WHERE s.srvname = cluster AND o LIKE format('p%s=%%', k);
            down := down || format('segment %s on node "%s"', k, conn);
        END;
    END LOOP;
    IF cardinality(down) > 0 THEN
        RAISE EXCEPTION 'data node of PL/Proxy cluster "%" failed: %', cluster, array_to_string(down, ', ')
            USING ERRCODE = 'connection_failure',
                  DETAIL = msg,
                  HINT = 'Bring the node back (or fix its conninfo in the cluster''s server options) and run the call again; nothing was written on the coordinator.';
    END IF;
    RAISE EXCEPTION USING ERRCODE = state, MESSAGE = format('PL/Proxy cluster "%s": %s', cluster, msg),
                          DETAIL = coalesce(detail, ''), HINT = coalesce(hint, '');
END
$$;

-- Define cluster: a PL/Proxy server with num_segments partitions;
-- partition (segment) k connects to nodes[k % n_nodes + 1] (a libpq
-- conninfo, e.g. 'host=db1 port=5432 dbname=prod'), with its own
-- application_name.  A PUBLIC user mapping with no options is created
-- (connections as the calling user); GRANT USAGE ON FOREIGN SERVER to
-- the users who train.  modular_mapping is on: any segment count works.
CREATE FUNCTION madlib_dl.plproxy_create_cluster(cluster text, nodes text[], num_segments integer)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    opts text := 'modular_mapping ''1''';
    nn integer := coalesce(array_length(nodes, 1), 0);
BEGIN
    IF nn < 1 OR array_position(nodes, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'nodes must hold at least one conninfo, got %', coalesce(nodes::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give one libpq conninfo per data node.';
    END IF;
    IF EXISTS (SELECT 1 FROM unnest(nodes) c WHERE c ~* '^postgres(ql)?://') THEN
        RAISE EXCEPTION 'nodes must be key=value conninfos, not URIs'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Write ''host=db1 port=5432 dbname=prod'' instead of postgresql://db1:5432/prod.';
    END IF;
    IF num_segments IS NULL OR num_segments < nn OR num_segments > 64 THEN
        RAISE EXCEPTION 'num_segments must be between % (the node count) and 64, got %', nn, num_segments
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the distribution_rules segment count the table was preprocessed with.';
    END IF;
    FOR k IN 0 .. num_segments - 1 LOOP
        opts := opts || format(', p%s %L', k,
                               nodes[k % nn + 1] || format(' application_name=madlib_dl_%s_p%s', cluster, k));
    END LOOP;
    EXECUTE format('CREATE SERVER %I FOREIGN DATA WRAPPER plproxy OPTIONS (%s)', cluster, opts);
    EXECUTE format('CREATE USER MAPPING FOR PUBLIC SERVER %I', cluster);
END
$$;

-- Copy packed table packed_table (made on the coordinator by
-- training_preprocessor_dl with distribution_rules = the cluster's
-- partition count) to the data nodes: the buffers of segment k
-- (__dist_key__ = k) go to partition k.  Creates the table on the nodes
-- (same schema and name, same columns) when absent and replaces the
-- rows of the segments it loads; records the table in
-- madlib_dl.plproxy_tables.  Each node commits on its own: after a
-- failure, run it again.  Returns the number of buffers sent.
CREATE FUNCTION madlib_dl._px_distribute(tbl text[], cluster text, batch_size integer)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass := madlib_dl._assert_table_exists(tbl, 'packed_table');
    nparts integer := madlib_dl._px_partitions(cluster);
    nseg integer;
    names text[];
    types text[];
    bad bigint;
    total bigint := 0;
    b record;
    e_state text;
    e_msg text;
    e_detail text;
    e_hint text;
BEGIN
    IF batch_size IS NULL OR batch_size < 1 THEN
        RAISE EXCEPTION 'batch_size must be at least 1, got %', batch_size
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM madlib_dl._assert_columns(rel, ARRAY['buffer_id', '__dist_key__'], ARRAY['integer', 'integer'],
        'a table made by training_preprocessor_dl');
    nseg := nparts;
    IF (madlib_dl._fit_packed_summary(tbl, 'packed_table')->>'num_segments')::integer IS DISTINCT FROM nseg THEN
        RAISE EXCEPTION 'packed_table "%" was preprocessed for % segments, cluster "%" has % partitions',
                        madlib_dl._table_label(tbl),
                        coalesce(madlib_dl._fit_packed_summary(tbl, 'packed_table')->>'num_segments', 'unknown'),
                        cluster, nseg
            USING ERRCODE = 'data_exception',
                  HINT = format('Preprocess with distribution_rules => ''%s'', the partition count of the cluster.', nseg);
    END IF;
    EXECUTE format('SELECT count(*) FROM %s WHERE __dist_key__ IS NULL OR __dist_key__ < 0 OR __dist_key__ >= $1',
                   rel) INTO bad USING nseg;
    IF bad > 0 THEN
        RAISE EXCEPTION 'packed_table "%" has % buffers whose __dist_key__ is not a segment 0 to % of cluster "%"',
                        madlib_dl._table_label(tbl), bad, nseg - 1, cluster
            USING ERRCODE = 'data_exception',
                  HINT = format('Preprocess with distribution_rules => ''%s'', the partition count of the cluster.', nseg);
    END IF;
    SELECT array_agg(a.attname::text ORDER BY a.attnum), array_agg(format_type(a.atttypid, a.atttypmod) ORDER BY a.attnum)
      INTO names, types
      FROM pg_attribute a WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped;
    BEGIN
    PERFORM madlib_dl._px_prepare(cluster, tbl, names, types, ARRAY(SELECT generate_series(0, nseg - 1)));
    FOR b IN EXECUTE format(
            'SELECT array_agg(t.__dist_key__ ORDER BY t.buffer_id) AS segs,'
            '       array_agg(row_to_json(t) ORDER BY t.buffer_id) AS rows'
            '  FROM (SELECT s.*, (row_number() OVER (ORDER BY s.buffer_id) - 1) / $1 AS batch FROM %s s) t'
            ' GROUP BY t.batch ORDER BY t.batch', rel) USING batch_size LOOP
        -- row_to_json(t) has the extra column batch: json_populate ignores it
        PERFORM madlib_dl._px_insert(cluster, tbl, b.segs, b.rows);
        total := total + array_length(b.segs, 1);
    END LOOP;
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT,
                                e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
        PERFORM madlib_dl._px_rethrow(cluster, e_state, e_msg, e_detail, e_hint);
    END;
    INSERT INTO madlib_dl.plproxy_tables AS p (schema_name, table_name, cluster, num_segments)
    VALUES (tbl[1], tbl[2], cluster, nseg)
    ON CONFLICT (schema_name, table_name) DO UPDATE
       SET cluster = excluded.cluster, num_segments = excluded.num_segments, distributed_at = now();
    RETURN total;
END
$$;

-- Public entry: the table name is resolved in the caller's search_path.
CREATE FUNCTION madlib_dl.plproxy_distribute(packed_table text, cluster text, batch_size integer DEFAULT 64)
RETURNS bigint
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl._px_distribute(madlib_dl._resolve_table($1, 'packed_table'), $2, $3) $$;

-- ---------------------------------------------------------------------
-- Coordinator: fit_multiple over the cluster
-- ---------------------------------------------------------------------

-- The schema-qualified name of packed table source, distributed over
-- cluster, and its number of segments (from plproxy_tables); ERROR when
-- the cluster no longer has that many partitions.
CREATE FUNCTION madlib_dl._px_table_segments(cluster text, source regclass,
    OUT src text[], OUT n_seg integer)
RETURNS record
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    SELECT ARRAY[n.nspname::text, c.relname::text], t.num_segments INTO src, n_seg
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN madlib_dl.plproxy_tables t ON t.schema_name = n.nspname AND t.table_name = c.relname
     WHERE c.oid = source;
    IF madlib_dl._px_partitions(cluster) <> n_seg THEN
        RAISE EXCEPTION 'PL/Proxy cluster "%" has % partitions, table "%" was distributed over %',
                        cluster, madlib_dl._px_partitions(cluster), source::text, n_seg
            USING ERRCODE = 'data_exception',
                  HINT = 'Distribute the table again with madlib_dl.plproxy_distribute.';
    END IF;
END
$$;

-- Same arguments and result rows as _fit_multiple_run (60_fit_multiple.sql);
-- source must be in madlib_dl.plproxy_tables (num_segments is taken from
-- there: the cluster's partitions).  With K models and N segments there
-- are M = max(K, N) places; place q starts with model sched[q + 1] of
-- _gp_visit_order and at hop h segment s trains the model of place
-- (s + h) mod M: the order of the single-server path.  One _px_train
-- call per hop sends each (segment, state) pair to its node.  The
-- validation table is evaluated on the coordinator (it is not
-- distributed).  Writes nothing.
CREATE FUNCTION madlib_dl._px_fit_multiple_run(source regclass, x_col text, y_col text,
    validation regclass, val_x_col text, val_y_col text,
    mst_keys integer[], model_archs text[], init_weights bytea[],
    compile_params text[], fit_params text[], num_iterations integer,
    metrics_compute_frequency integer, num_segments integer, schedule_seed bigint)
RETURNS SETOF madlib_dl._fit_multiple_result
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cluster text := madlib_dl._px_cluster_of(source);
    src text[];
    n_seg integer;
    k_models integer := coalesce(array_length(mst_keys, 1), 0);
    m_places integer;
    costs double precision[];
    has_metric boolean[];
    metric_names text[];
    sched integer[];
    pos integer[];          -- (M) model index (1-based) at each place, NULL: empty
    states bytea[];         -- (K) current state of each model
    diverged boolean[];     -- (K)
    fits text[] := coalesce(fit_params, array_fill(NULL::text, ARRAY[k_models]));
    freq integer := metrics_compute_frequency;
    t0 timestamptz := clock_timestamp();
    segs integer[];
    idx integer[];
    r record;
    m integer;
    ve double precision[];
    e_state text;
    e_msg text;
    e_detail text;
    e_hint text;
    res madlib_dl._fit_multiple_result;
BEGIN
    IF cluster IS NULL THEN
        RAISE EXCEPTION 'table "%" is not distributed over a PL/Proxy cluster', source::text
            USING ERRCODE = 'undefined_object',
                  HINT = 'Distribute it with madlib_dl.plproxy_distribute.';
    END IF;
    IF k_models < 1 OR array_length(model_archs, 1) IS DISTINCT FROM k_models
       OR array_length(compile_params, 1) IS DISTINCT FROM k_models
       OR array_length(fits, 1) <> k_models
       OR coalesce(array_length(init_weights, 1), k_models) <> k_models THEN
        RAISE EXCEPTION 'mst_keys, model_archs, compile_params, fit_params and init_weights must have the same length'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM madlib_dl._gp_check_iterations(num_iterations, freq);
    SELECT p.src, p.n_seg INTO src, n_seg FROM madlib_dl._px_table_segments(cluster, source) p;

    m_places := greatest(k_models, n_seg);
    SELECT array_agg((madlib_dl._arch_info(a.arch::json)).n_params::double precision
                     * (madlib_dl._check_params(a.cp, a.fp)).epochs ORDER BY a.i),
           array_agg((madlib_dl._check_params(a.cp, a.fp)).metrics_type IS NOT NULL ORDER BY a.i),
           array_agg((madlib_dl._check_params(a.cp, a.fp)).metrics_type[1] ORDER BY a.i)
      INTO costs, has_metric, metric_names
      FROM unnest(model_archs, compile_params, fits) WITH ORDINALITY AS a(arch, cp, fp, i);
    sched := madlib_dl._gp_visit_order(mst_keys, costs, schedule_seed, m_places);
    pos := ARRAY(SELECT array_position(mst_keys, s) FROM unnest(sched) s);
    FOR i IN 1 .. k_models LOOP
        states[i] := madlib_dl._gp_initial_state(model_archs[i]::json, init_weights[i],
                                                  compile_params[i], fits[i]);
        diverged[i] := false;
    END LOOP;
    CREATE TEMPORARY TABLE IF NOT EXISTS madlib_dl_px_hist (mst_key integer, it integer,
        tl double precision, tm double precision, vl double precision, vm double precision,
        el double precision) ON COMMIT DROP;
    DELETE FROM pg_temp.madlib_dl_px_hist;

    BEGIN
    FOR iter IN 1 .. num_iterations LOOP
        FOR hop IN 0 .. m_places - 1 LOOP
            segs := '{}';
            idx := '{}';
            FOR s IN 0 .. n_seg - 1 LOOP
                m := pos[(s + hop) % m_places + 1];
                IF m IS NOT NULL AND NOT diverged[m] THEN
                    segs := segs || s;
                    idx := idx || m;
                END IF;
            END LOOP;
            CONTINUE WHEN cardinality(segs) = 0;
            FOR r IN SELECT t.seg, t.state, t.empty
                       FROM madlib_dl._px_train(cluster, src, x_col, y_col, segs,
                                ARRAY(SELECT states[i] FROM unnest(idx) i),
                                ARRAY(SELECT model_archs[i] FROM unnest(idx) i),
                                ARRAY(SELECT compile_params[i] FROM unnest(idx) i),
                                ARRAY(SELECT fits[i] FROM unnest(idx) i), iter) t
                      ORDER BY t.seg LOOP
                m := idx[array_position(segs, r.seg)];
                IF r.state IS NULL THEN
                    diverged[m] := true;
                    RAISE NOTICE 'model mst_key % diverged in iteration % on segment % and stops',
                                 mst_keys[m], iter, r.seg;
                ELSE
                    states[m] := r.state;
                END IF;
            END LOOP;
        END LOOP;

        IF iter % freq = 0 OR iter = num_iterations THEN
            -- training loss/metric: every live model on every segment, one call
            INSERT INTO pg_temp.madlib_dl_px_hist
            SELECT t.mst_key, iter, madlib_dl._gp_ratio(sum(t.e[1] ORDER BY t.seg), sum(t.e[3])),
                   madlib_dl._gp_ratio(sum(t.e[2] ORDER BY t.seg), sum(t.e[3])), NULL, NULL,
                   extract(epoch FROM clock_timestamp() - t0)::double precision
              FROM madlib_dl._px_eval(cluster, src, x_col, y_col,
                       ARRAY(SELECT s FROM unnest(mst_keys) WITH ORDINALITY k(key, i), generate_series(0, n_seg - 1) s
                              WHERE NOT diverged[k.i] ORDER BY k.i, s),
                       ARRAY(SELECT k.key FROM unnest(mst_keys) WITH ORDINALITY k(key, i), generate_series(0, n_seg - 1) s
                              WHERE NOT diverged[k.i] ORDER BY k.i, s),
                       ARRAY(SELECT states[k.i] FROM unnest(mst_keys) WITH ORDINALITY k(key, i), generate_series(0, n_seg - 1) s
                              WHERE NOT diverged[k.i] ORDER BY k.i, s),
                       ARRAY(SELECT model_archs[k.i] FROM unnest(mst_keys) WITH ORDINALITY k(key, i), generate_series(0, n_seg - 1) s
                              WHERE NOT diverged[k.i] ORDER BY k.i, s),
                       ARRAY(SELECT compile_params[k.i] FROM unnest(mst_keys) WITH ORDINALITY k(key, i), generate_series(0, n_seg - 1) s
                              WHERE NOT diverged[k.i] ORDER BY k.i, s),
                       ARRAY(SELECT fits[k.i] FROM unnest(mst_keys) WITH ORDINALITY k(key, i), generate_series(0, n_seg - 1) s
                              WHERE NOT diverged[k.i] ORDER BY k.i, s)) t
             GROUP BY t.mst_key;
            IF validation IS NOT NULL THEN
                FOR i IN 1 .. k_models LOOP
                    CONTINUE WHEN diverged[i];
                    EXECUTE format('SELECT madlib_dl._gp_eval_segment(s.%1$I, s.%2$I, s.%3$I, s.%4$I, $1, $2::json, $3, $4)'
                                   '  FROM %5$s s', val_y_col, val_x_col, val_y_col || '_shape',
                                   val_x_col || '_shape', validation)
                       INTO ve USING states[i], model_archs[i], compile_params[i], fits[i];
                    UPDATE pg_temp.madlib_dl_px_hist h
                       SET vl = madlib_dl._gp_ratio(ve[1], ve[3]), vm = madlib_dl._gp_ratio(ve[2], ve[3])
                     WHERE h.mst_key = mst_keys[i] AND h.it = iter;
                END LOOP;
            END IF;
        END IF;
        RAISE NOTICE 'iteration % of %: % hops over PL/Proxy cluster %; % s', iter, num_iterations,
                     m_places, cluster, round(extract(epoch FROM clock_timestamp() - t0)::numeric, 2);
    END LOOP;
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT,
                                e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
        PERFORM madlib_dl._px_rethrow(cluster, e_state, e_msg, e_detail, e_hint);
    END;

    FOR i IN 1 .. k_models LOOP
        res := NULL;
        res.mst_key := mst_keys[i];
        res.model_weights := madlib_dl._gp_state_weights(states[i], model_archs[i]::json);
        res.status := CASE WHEN diverged[i] THEN 'diverged' ELSE 'completed' END;
        SELECT coalesce(array_agg(h.tl ORDER BY h.it), '{}'), coalesce(array_agg(h.tm ORDER BY h.it), '{}'),
               coalesce(array_agg(h.vl ORDER BY h.it), '{}'), coalesce(array_agg(h.vm ORDER BY h.it), '{}'),
               coalesce(array_agg(h.it ORDER BY h.it), '{}'), coalesce(array_agg(h.el ORDER BY h.it), '{}')
          INTO res.training_loss, res.training_metrics, res.validation_loss, res.validation_metrics,
               res.metrics_iters, res.metrics_elapsed_time
          FROM pg_temp.madlib_dl_px_hist h WHERE h.mst_key = mst_keys[i];
        IF NOT has_metric[i] THEN
            res.training_metrics := NULL;
        END IF;
        IF validation IS NULL THEN
            res.validation_loss := NULL;
            res.validation_metrics := NULL;
        ELSIF NOT has_metric[i] THEN
            res.validation_metrics := NULL;
        END IF;
        res.schedule := sched;
        res.workers_launched := n_seg;
        RETURN NEXT res;
    END LOOP;
END
$$;

-- ---------------------------------------------------------------------
-- Coordinator: fit (model averaging) over the cluster
-- ---------------------------------------------------------------------

-- Same arguments (less num_segments: the cluster's partitions) and
-- result as _gp_fit_run / _fit_run.  Per iteration one _px_train call
-- trains the current state on every segment at once (each node on its
-- own rows), then the coordinator averages the returned states with
-- _avg_states(... ORDER BY segment), leaving out empty segments: the
-- bytes of the single-server model averaging.  Writes nothing.
CREATE FUNCTION madlib_dl._px_fit_run(source regclass, x_col text, y_col text,
    validation regclass, val_x_col text, val_y_col text,
    model_arch json, init_weights bytea, compile_params text, fit_params text,
    num_iterations integer, metrics_compute_frequency integer)
RETURNS madlib_dl._fit_result
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cluster text := madlib_dl._px_cluster_of(source);
    params record := madlib_dl._check_params(compile_params, fit_params);
    metric text := params.metrics_type[1];
    freq integer := metrics_compute_frequency;
    src text[];
    n_seg integer;
    segs integer[];
    state bytea;
    nstate bytea;
    ndiverged bigint;
    ntrained bigint;
    ev double precision[];
    vev double precision[];
    tl double precision[] := '{}';
    tm double precision[] := '{}';
    vl double precision[] := '{}';
    vm double precision[] := '{}';
    iters integer[] := '{}';
    el double precision[] := '{}';
    t0 timestamptz := clock_timestamp();
    e_state text;
    e_msg text;
    e_detail text;
    e_hint text;
BEGIN
    IF cluster IS NULL THEN
        RAISE EXCEPTION 'table "%" is not distributed over a PL/Proxy cluster', source::text
            USING ERRCODE = 'undefined_object',
                  HINT = 'Distribute it with madlib_dl.plproxy_distribute.';
    END IF;
    PERFORM madlib_dl._gp_check_iterations(num_iterations, freq);
    SELECT p.src, p.n_seg INTO src, n_seg FROM madlib_dl._px_table_segments(cluster, source) p;
    segs := ARRAY(SELECT generate_series(0, n_seg - 1));

    state := madlib_dl._gp_initial_state(model_arch, init_weights, compile_params, fit_params);
    BEGIN
    FOR it IN 1 .. num_iterations LOOP
        SELECT madlib_dl._avg_states(t.state, model_arch, compile_params ORDER BY t.seg)
                   FILTER (WHERE NOT t.empty),
               count(*) FILTER (WHERE t.state IS NULL), count(*) FILTER (WHERE NOT t.empty)
          INTO nstate, ndiverged, ntrained
          FROM madlib_dl._px_train(cluster, src, x_col, y_col, segs, array_fill(state, ARRAY[n_seg]),
                   array_fill(model_arch::text, ARRAY[n_seg]), array_fill(compile_params, ARRAY[n_seg]),
                   array_fill(fit_params, ARRAY[n_seg]), it) t;
        IF ndiverged > 0 THEN
            RAISE EXCEPTION 'training diverged in iteration % on % of % segments', it, ndiverged, n_seg
                USING ERRCODE = 'data_exception',
                      HINT = 'Lower the learning rate, or normalize the input (normalizing_const).';
        END IF;
        IF ntrained = 0 OR nstate IS NULL THEN
            RAISE EXCEPTION 'no segment has training data'
                USING ERRCODE = 'data_exception',
                      HINT = 'The source table is empty; preprocess a table with rows.';
        END IF;
        state := nstate;
        IF it % freq = 0 OR it = num_iterations THEN
            SELECT ARRAY[sum(t.e[1] ORDER BY t.seg), sum(t.e[2] ORDER BY t.seg), sum(t.e[3])] INTO ev
              FROM madlib_dl._px_eval(cluster, src, x_col, y_col, segs, array_fill(0, ARRAY[n_seg]),
                       array_fill(state, ARRAY[n_seg]), array_fill(model_arch::text, ARRAY[n_seg]),
                       array_fill(compile_params, ARRAY[n_seg]), array_fill(fit_params, ARRAY[n_seg])) t;
            tl := tl || madlib_dl._gp_ratio(ev[1], ev[3]);
            tm := tm || madlib_dl._gp_ratio(ev[2], ev[3]);
            IF validation IS NOT NULL THEN
                EXECUTE format('SELECT madlib_dl._gp_eval_segment(s.%1$I, s.%2$I, s.%3$I, s.%4$I, $1, $2, $3, $4)'
                               '  FROM %5$s s', val_y_col, val_x_col, val_y_col || '_shape',
                               val_x_col || '_shape', validation)
                   INTO vev USING state, model_arch, compile_params, fit_params;
                vl := vl || madlib_dl._gp_ratio(vev[1], vev[3]);
                vm := vm || madlib_dl._gp_ratio(vev[2], vev[3]);
            END IF;
            iters := iters || it;
            el := el || extract(epoch FROM clock_timestamp() - t0)::double precision;
        END IF;
        RAISE NOTICE 'iteration % of %: trained on % segments of PL/Proxy cluster %; % s', it, num_iterations,
                     ntrained, cluster, round(extract(epoch FROM clock_timestamp() - t0)::numeric, 2);
    END LOOP;
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT,
                                e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
        IF e_state = '22000' THEN   -- divergence, no data: ours, as they are
            RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_msg, HINT = coalesce(e_hint, '');
        END IF;
        PERFORM madlib_dl._px_rethrow(cluster, e_state, e_msg, e_detail, e_hint);
    END;

    RETURN madlib_dl._gp_fit_result(state, model_arch, metric IS NOT NULL, validation IS NOT NULL,
                                    tl, tm, vl, vm, iters, el, n_seg);
END
$$;

-- The proxy functions, now if PL/Proxy is already installed here.
DO $do$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_language WHERE lanname = 'plproxy') THEN
        PERFORM madlib_dl.plproxy_setup();
    END IF;
END
$do$;
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
-- 90_greenplum.sql: the Greenplum / Cloudberry path (docs/greenplum.md).
--
-- On Greenplum there are no virtual segments (no ParallelContext): the
-- per-segment step runs as an aggregate grouped by __dist_key__ over the
-- real segments (src/pg/gp_agg.c), and fit_multiple moves model states
-- with a schedule table rotated every hop, as MADlib does.
--
-- What is created where:
--   * everywhere (PostgreSQL too, where the regression test
--     95_greenplum_install runs them against the parallel-worker path):
--     _is_greenplum(), the aggregates _gp_fit_segment, _avg_states and
--     _gp_eval_segment with their support functions, _gp_initial_state,
--     _gp_state_weights, _gp_visit_order, and the two drivers
--     _gp_fit_run and _gp_fit_multiple_run.  They use only SQL that both
--     servers accept; the drivers add DISTRIBUTED BY to the tables they
--     create only when _is_greenplum().  fit and fit_multiple call them
--     only when _is_greenplum().
--   * on Greenplum / Cloudberry only (DO block at the end, dynamic SQL,
--     because DISTRIBUTED BY and gp_segment_id do not exist elsewhere):
--     _gp_segment_keys() and _gp_place_buffers(tbl).

-- ---------------------------------------------------------------------
-- Server detection
-- ---------------------------------------------------------------------

-- true on Greenplum 6/7 and Cloudberry (they have gp_segment_configuration).
CREATE FUNCTION madlib_dl._is_greenplum()
RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT to_regclass('pg_catalog.gp_segment_configuration') IS NOT NULL $$;

-- ---------------------------------------------------------------------
-- The per-segment training step: _gp_fit_segment(... ORDER BY buffer_id)
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl._gp_fit_transition(state internal, dep bytea, indep bytea,
    dep_shape integer[], indep_shape integer[], model_state bytea, model_arch json,
    compile_params text, fit_params text, iteration integer, segment integer)
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__gp_fit_transition'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE FUNCTION madlib_dl._gp_fit_combine(internal, internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__gp_fit_combine'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE FUNCTION madlib_dl._gp_fit_serialize(internal)
RETURNS bytea
AS 'MODULE_PATHNAME', 'madlib_dl__gp_fit_serialize'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION madlib_dl._gp_fit_deserialize(bytea, internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__gp_fit_deserialize'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION madlib_dl._gp_fit_final(internal)
RETURNS bytea
AS 'MODULE_PATHNAME', 'madlib_dl__gp_fit_final'
LANGUAGE C VOLATILE PARALLEL SAFE;

-- One segment's step of one iteration: the segment's buffers (call it
-- with ORDER BY buffer_id), the state to start from, and the model
-- definition; returns the trained state (NULL if training diverged).
CREATE AGGREGATE madlib_dl._gp_fit_segment(dep bytea, indep bytea, dep_shape integer[],
    indep_shape integer[], model_state bytea, model_arch json, compile_params text,
    fit_params text, iteration integer, segment integer) (
    SFUNC = madlib_dl._gp_fit_transition,
    STYPE = internal,
    FINALFUNC = madlib_dl._gp_fit_final,
    COMBINEFUNC = madlib_dl._gp_fit_combine,
    SERIALFUNC = madlib_dl._gp_fit_serialize,
    DESERIALFUNC = madlib_dl._gp_fit_deserialize,
    PARALLEL = SAFE
);

-- ---------------------------------------------------------------------
-- Model averaging: _avg_states(state, arch, compile ORDER BY segment)
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl._avg_states_transition(state internal, model_state bytea,
    model_arch json, compile_params text)
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__avg_states_transition'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE FUNCTION madlib_dl._avg_states_combine(internal, internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__avg_states_combine'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE FUNCTION madlib_dl._avg_states_serialize(internal)
RETURNS bytea
AS 'MODULE_PATHNAME', 'madlib_dl__avg_states_serialize'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION madlib_dl._avg_states_deserialize(bytea, internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__avg_states_deserialize'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION madlib_dl._avg_states_final(internal)
RETURNS bytea
AS 'MODULE_PATHNAME', 'madlib_dl__avg_states_final'
LANGUAGE C VOLATILE PARALLEL SAFE;

-- The sample-weighted average of model states (weights and optimizer
-- state), as fit's model averaging; NULL states are skipped.  Ordered by
-- segment it is byte-identical to the parallel-worker path.
CREATE AGGREGATE madlib_dl._avg_states(model_state bytea, model_arch json, compile_params text) (
    SFUNC = madlib_dl._avg_states_transition,
    STYPE = internal,
    FINALFUNC = madlib_dl._avg_states_final,
    COMBINEFUNC = madlib_dl._avg_states_combine,
    SERIALFUNC = madlib_dl._avg_states_serialize,
    DESERIALFUNC = madlib_dl._avg_states_deserialize,
    PARALLEL = SAFE
);

-- ---------------------------------------------------------------------
-- Evaluation: _gp_eval_segment(...) -> {loss_sum, metric_sum, n}
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl._gp_eval_transition(state internal, dep bytea, indep bytea,
    dep_shape integer[], indep_shape integer[], model_state bytea, model_arch json,
    compile_params text, fit_params text)
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__gp_eval_transition'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE FUNCTION madlib_dl._gp_eval_combine(internal, internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__gp_eval_combine'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE FUNCTION madlib_dl._gp_eval_serialize(internal)
RETURNS bytea
AS 'MODULE_PATHNAME', 'madlib_dl__gp_eval_serialize'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION madlib_dl._gp_eval_deserialize(bytea, internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__gp_eval_deserialize'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION madlib_dl._gp_eval_final(internal)
RETURNS double precision[]
AS 'MODULE_PATHNAME', 'madlib_dl__gp_eval_final'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE AGGREGATE madlib_dl._gp_eval_segment(dep bytea, indep bytea, dep_shape integer[],
    indep_shape integer[], model_state bytea, model_arch json, compile_params text,
    fit_params text) (
    SFUNC = madlib_dl._gp_eval_transition,
    STYPE = internal,
    FINALFUNC = madlib_dl._gp_eval_final,
    COMBINEFUNC = madlib_dl._gp_eval_combine,
    SERIALFUNC = madlib_dl._gp_eval_serialize,
    DESERIALFUNC = madlib_dl._gp_eval_deserialize,
    PARALLEL = SAFE
);

-- ---------------------------------------------------------------------
-- Plain helpers
-- ---------------------------------------------------------------------

-- The state a fit starts from (init_weights NULL: random from the seed).
CREATE FUNCTION madlib_dl._gp_initial_state(model_arch json, init_weights bytea,
    compile_params text, fit_params text)
RETURNS bytea
AS 'MODULE_PATHNAME', 'madlib_dl__gp_initial_state'
LANGUAGE C VOLATILE PARALLEL SAFE;

-- A state's flat float32 weights (MADlib's model_weights).
CREATE FUNCTION madlib_dl._gp_state_weights(model_state bytea, model_arch json)
RETURNS bytea
AS 'MODULE_PATHNAME', 'madlib_dl__gp_state_weights'
LANGUAGE C VOLATILE PARALLEL SAFE;

-- The places of the model hopper (fit_multiple.c's visit order).
CREATE FUNCTION madlib_dl._gp_visit_order(mst_keys integer[], costs double precision[],
    seed bigint, num_places integer)
RETURNS integer[]
AS 'MODULE_PATHNAME', 'madlib_dl__gp_visit_order'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- x / n as the parallel-worker path reports it: NaN when n is 0.
CREATE FUNCTION madlib_dl._gp_ratio(s double precision, n double precision)
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT CASE WHEN n > 0 THEN s / n ELSE 'NaN'::double precision END $$;

-- The sorted __dist_key__ values of a packed table: its segments.
CREATE FUNCTION madlib_dl._gp_table_keys(source regclass)
RETURNS integer[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    keys integer[];
    nnull bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = source
                      AND a.attname = '__dist_key__' AND a.attnum > 0 AND NOT a.attisdropped) THEN
        RAISE EXCEPTION 'table "%" has no column "__dist_key__"', source::text
            USING ERRCODE = 'undefined_column',
                  HINT = 'Preprocess the data again with training_preprocessor_dl.';
    END IF;
    EXECUTE format('SELECT array_agg(k ORDER BY k), (SELECT count(*) FROM %s WHERE __dist_key__ IS NULL)'
                   '  FROM (SELECT DISTINCT __dist_key__ AS k FROM %s WHERE __dist_key__ IS NOT NULL) d',
                   source, source)
       INTO keys, nnull;
    IF nnull > 0 THEN
        RAISE EXCEPTION 'table "%" has % buffers with a NULL __dist_key__', source::text, nnull
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Preprocess the data again with training_preprocessor_dl; do not edit its __dist_key__ column.';
    END IF;
    IF keys IS NULL THEN
        RAISE EXCEPTION 'table "%" is empty', source::text
            USING ERRCODE = 'no_data_found',
                  HINT = 'Preprocess a table that has rows.';
    END IF;
    RETURN keys;
END
$$;

-- ERROR unless num_iterations >= 1 and freq (metrics_compute_frequency)
-- is 1 to num_iterations: the argument checks of the distributed
-- runners (_gp_fit_run, _gp_fit_multiple_run, and _px_fit_run,
-- _px_fit_multiple_run in 80_plproxy.sql).
CREATE FUNCTION madlib_dl._gp_check_iterations(num_iterations integer, freq integer)
RETURNS void
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF num_iterations IS NULL OR num_iterations < 1 THEN
        RAISE EXCEPTION 'num_iterations must be at least 1, got %', num_iterations
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF freq IS NULL OR freq < 1 OR freq > num_iterations THEN
        RAISE EXCEPTION 'metrics_compute_frequency must be between 1 and %, got %', num_iterations, freq
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

-- The result of a distributed fit (_gp_fit_run, and _px_fit_run in
-- 80_plproxy.sql): the weights of the final state, and the histories;
-- the metric ones NULL without a metric, the validation ones NULL
-- without a validation table.
CREATE FUNCTION madlib_dl._gp_fit_result(state bytea, model_arch json,
    has_metric boolean, has_validation boolean,
    tl double precision[], tm double precision[], vl double precision[], vm double precision[],
    iters integer[], el double precision[], workers integer)
RETURNS madlib_dl._fit_result
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r madlib_dl._fit_result;
BEGIN
    r.model_weights := madlib_dl._gp_state_weights(state, model_arch);
    r.training_loss := tl;
    r.training_metrics := CASE WHEN has_metric THEN tm END;
    r.validation_loss := CASE WHEN has_validation THEN vl END;
    r.validation_metrics := CASE WHEN has_validation AND has_metric THEN vm END;
    r.metrics_iters := iters;
    r.metrics_elapsed_time := el;
    r.workers_launched := workers;
    RETURN r;
END
$$;

-- ---------------------------------------------------------------------
-- fit: one aggregate per iteration, grouped by __dist_key__
-- ---------------------------------------------------------------------

-- Same arguments (less num_segments: the segments are the table's
-- __dist_key__ values) and result as _fit_run in 30_fit.sql.  Per
-- iteration:
--   SELECT _avg_states(t.state, arch, compile ORDER BY t.seg)
--     FROM (SELECT seg(__dist_key__), _gp_fit_segment(... ORDER BY buffer_id)
--             FROM source GROUP BY __dist_key__) t
-- The inner aggregate runs on each segment over its own rows (the packed
-- table is distributed by __dist_key__: no data moves); only the states
-- go to the coordinator, which averages them.
CREATE FUNCTION madlib_dl._gp_fit_run(source regclass, x_col text, y_col text,
    validation regclass, val_x_col text, val_y_col text,
    model_arch json, init_weights bytea, compile_params text, fit_params text,
    num_iterations integer, metrics_compute_frequency integer)
RETURNS madlib_dl._fit_result
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    keys integer[] := madlib_dl._gp_table_keys(source);
    params record := madlib_dl._check_params(compile_params, fit_params);
    metric text;
    freq integer := metrics_compute_frequency;
    state bytea;
    nstate bytea;
    ndiverged bigint;
    train_sql text;
    eval_sql text;
    veval_sql text;
    ev double precision[];
    vev double precision[];
    tl double precision[] := '{}';
    tm double precision[] := '{}';
    vl double precision[] := '{}';
    vm double precision[] := '{}';
    iters integer[] := '{}';
    el double precision[] := '{}';
    t0 timestamptz := clock_timestamp();
    msg text;
BEGIN
    PERFORM madlib_dl._gp_check_iterations(num_iterations, freq);
    metric := params.metrics_type[1];
    train_sql := format(
        'SELECT madlib_dl._avg_states(t.state, $3, $4 ORDER BY t.seg),'
        '       sum(CASE WHEN t.state IS NULL THEN 1 ELSE 0 END)'
        '  FROM (SELECT array_position($5, s.__dist_key__) - 1 AS seg,'
        '               madlib_dl._gp_fit_segment(s.%1$I, s.%2$I, s.%3$I, s.%4$I, $1, $3, $4, $6, $2,'
        '                   array_position($5, s.__dist_key__) - 1 ORDER BY s.buffer_id) AS state'
        '          FROM %5$s s GROUP BY s.__dist_key__) t',
        y_col, x_col, y_col || '_shape', x_col || '_shape', source);
    eval_sql := format(
        'SELECT madlib_dl._gp_eval_segment(s.%1$I, s.%2$I, s.%3$I, s.%4$I, $1, $2, $3, $4) FROM %5$s s',
        y_col, x_col, y_col || '_shape', x_col || '_shape', source);
    IF validation IS NOT NULL THEN
        veval_sql := format(
            'SELECT madlib_dl._gp_eval_segment(s.%1$I, s.%2$I, s.%3$I, s.%4$I, $1, $2, $3, $4) FROM %5$s s',
            val_y_col, val_x_col, val_y_col || '_shape', val_x_col || '_shape', validation);
    END IF;

    state := madlib_dl._gp_initial_state(model_arch, init_weights, compile_params, fit_params);
    FOR it IN 1 .. num_iterations LOOP
        EXECUTE train_sql INTO nstate, ndiverged
          USING state, it, model_arch, compile_params, keys, fit_params;
        IF ndiverged > 0 THEN
            RAISE EXCEPTION 'training diverged in iteration % on % of % segments', it, ndiverged,
                            array_length(keys, 1)
                USING ERRCODE = 'data_exception',
                      HINT = 'Lower the learning rate, or normalize the input (normalizing_const).';
        END IF;
        IF nstate IS NULL THEN
            RAISE EXCEPTION 'no segment has training data'
                USING ERRCODE = 'data_exception',
                      HINT = 'The source table is empty; preprocess a table with rows.';
        END IF;
        state := nstate;
        IF it % freq = 0 OR it = num_iterations THEN
            EXECUTE eval_sql INTO ev USING state, model_arch, compile_params, fit_params;
            tl := tl || madlib_dl._gp_ratio(ev[1], ev[3]);
            tm := tm || madlib_dl._gp_ratio(ev[2], ev[3]);
            msg := format('training loss %s', round(madlib_dl._gp_ratio(ev[1], ev[3])::numeric, 4));
            IF metric IS NOT NULL THEN
                msg := msg || format(', %s %s', metric, round(madlib_dl._gp_ratio(ev[2], ev[3])::numeric, 4));
            END IF;
            IF validation IS NOT NULL THEN
                EXECUTE veval_sql INTO vev USING state, model_arch, compile_params, fit_params;
                vl := vl || madlib_dl._gp_ratio(vev[1], vev[3]);
                vm := vm || madlib_dl._gp_ratio(vev[2], vev[3]);
                msg := msg || format('; validation loss %s', round(madlib_dl._gp_ratio(vev[1], vev[3])::numeric, 4));
                IF metric IS NOT NULL THEN
                    msg := msg || format(', %s %s', metric, round(madlib_dl._gp_ratio(vev[2], vev[3])::numeric, 4));
                END IF;
            END IF;
            iters := iters || it;
            el := el || extract(epoch FROM clock_timestamp() - t0)::double precision;
        ELSE
            msg := 'trained on every segment';
        END IF;
        RAISE NOTICE 'iteration % of %: %; % s', it, num_iterations, msg,
                     round(extract(epoch FROM clock_timestamp() - t0)::numeric, 2);
    END LOOP;

    RETURN madlib_dl._gp_fit_result(state, model_arch, metric IS NOT NULL, validation IS NOT NULL,
                                    tl, tm, vl, vm, iters, el, array_length(keys, 1));
END
$$;

-- ---------------------------------------------------------------------
-- fit_multiple: model hopper with a schedule table rotated every hop
-- ---------------------------------------------------------------------

-- Same arguments and result rows as _fit_multiple_run in
-- 60_fit_multiple.sql (num_segments is ignored: the segments are the
-- table's __dist_key__ values).  With K models and N segments there are
-- M = max(K, N) places: the N segment keys in ascending order, then
-- M - N parking keys above them.  Place p starts with the p-th model of
-- _gp_visit_order (NULL: an empty place).  Each hop:
--   1. train: every model on a segment key runs _gp_fit_segment over
--      that segment's rows (a co-located join on __dist_key__; models on
--      parking keys or diverged wait);
--   2. rotate the schedule: __dist_key__ := LEAD(__dist_key__) OVER
--      (ORDER BY __dist_key__ DESC), wrapping round, so the model at
--      segment s moves to segment s - 1 (the order of the PostgreSQL
--      path: segment s trains place (s + h) mod M at hop h);
--   3. move the states: CREATE TABLE ... AS SELECT ... JOIN schedule ON
--      __prev_dist_key__ ... DISTRIBUTED BY (__dist_key__).  Only model
--      states move.
-- M hops make an iteration: every model visits every segment once.
CREATE FUNCTION madlib_dl._gp_fit_multiple_run(source regclass, x_col text, y_col text,
    validation regclass, val_x_col text, val_y_col text,
    mst_keys integer[], model_archs text[], init_weights bytea[],
    compile_params text[], fit_params text[], num_iterations integer,
    metrics_compute_frequency integer, num_segments integer, schedule_seed bigint)
RETURNS SETOF madlib_dl._fit_multiple_result
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dist text := CASE WHEN madlib_dl._is_greenplum() THEN ' DISTRIBUTED BY (__dist_key__)' ELSE '' END;
    dist_hist text := CASE WHEN madlib_dl._is_greenplum() THEN ' DISTRIBUTED BY (mst_key)' ELSE '' END;
    keys integer[] := madlib_dl._gp_table_keys(source);
    n_seg integer;
    k_models integer := coalesce(array_length(mst_keys, 1), 0);
    m_places integer;
    slot_keys integer[];
    costs double precision[];
    has_metric boolean[];
    metric_names text[];
    sched integer[];
    freq integer := metrics_compute_frequency;
    t0 timestamptz := clock_timestamp();
    train_sql text;
    eval_sql text;
    div record;
    best record;
    msg text;
BEGIN
    IF k_models < 1 OR array_length(model_archs, 1) IS DISTINCT FROM k_models
       OR array_length(compile_params, 1) IS DISTINCT FROM k_models
       OR coalesce(array_length(fit_params, 1), k_models) <> k_models
       OR coalesce(array_length(init_weights, 1), k_models) <> k_models THEN
        RAISE EXCEPTION 'mst_keys, model_archs, compile_params, fit_params and init_weights must have the same length'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF (SELECT count(DISTINCT k) FROM unnest(mst_keys) k) <> k_models OR array_position(mst_keys, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'mst_keys must be distinct and not NULL'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM madlib_dl._gp_check_iterations(num_iterations, freq);

    -- places: segment keys, then parking keys; the seeded visit order
    n_seg := array_length(keys, 1);
    m_places := greatest(k_models, n_seg);
    slot_keys := keys || ARRAY(SELECT keys[n_seg] + g FROM generate_series(1, m_places - n_seg) g);
    SELECT array_agg((madlib_dl._arch_info(a.arch::json)).n_params::double precision
                     * (madlib_dl._check_params(a.cp, a.fp)).epochs ORDER BY a.i),
           array_agg((madlib_dl._check_params(a.cp, a.fp)).metrics_type IS NOT NULL ORDER BY a.i),
           array_agg((madlib_dl._check_params(a.cp, a.fp)).metrics_type[1] ORDER BY a.i)
      INTO costs, has_metric, metric_names
      FROM unnest(model_archs, compile_params, coalesce(fit_params, array_fill(NULL::text, ARRAY[k_models])))
           WITH ORDINALITY AS a(arch, cp, fp, i);
    sched := madlib_dl._gp_visit_order(mst_keys, costs, schedule_seed, m_places);

    DROP TABLE IF EXISTS pg_temp.madlib_dl_gp_sched, pg_temp.madlib_dl_gp_sched_next,
        pg_temp.madlib_dl_gp_models, pg_temp.madlib_dl_gp_models_next,
        pg_temp.madlib_dl_gp_trained, pg_temp.madlib_dl_gp_hist, pg_temp.madlib_dl_gp_visits;

    -- the schedule table: place q holds model sched[q] at key slot_keys[q]
    EXECUTE format(
        'CREATE TEMPORARY TABLE madlib_dl_gp_sched ON COMMIT DROP AS'
        ' SELECT s.mst_key, k.key AS __dist_key__'
        '   FROM unnest($1::integer[]) WITH ORDINALITY AS s(mst_key, pos)'
        '   JOIN unnest($2::integer[]) WITH ORDINALITY AS k(key, pos) ON k.pos = s.pos%s', dist)
    USING sched, slot_keys;
    -- the model states, placed by the schedule
    EXECUTE format(
        'CREATE TEMPORARY TABLE madlib_dl_gp_models ON COMMIT DROP AS'
        ' SELECT sc.mst_key, a.idx::integer AS idx,'
        '        madlib_dl._gp_initial_state($2[a.idx]::json, $3[a.idx], $4[a.idx], $5[a.idx]) AS state,'
        '        false AS diverged, sc.__dist_key__'
        '   FROM pg_temp.madlib_dl_gp_sched sc'
        '   JOIN unnest($1::integer[]) WITH ORDINALITY AS a(mst_key, idx) ON a.mst_key = sc.mst_key%s', dist)
    USING mst_keys, model_archs, init_weights, compile_params, fit_params;
    EXECUTE format(
        'CREATE TEMPORARY TABLE madlib_dl_gp_hist (mst_key integer, it integer,'
        ' tl double precision, tm double precision, vl double precision, vm double precision,'
        ' el double precision) ON COMMIT DROP%s', dist_hist);
    -- every visit, for checks: (iteration, hop, mst_key, segment)
    EXECUTE format(
        'CREATE TEMPORARY TABLE madlib_dl_gp_visits (it integer, hop integer, mst_key integer,'
        ' segment integer) ON COMMIT DROP%s', replace(dist_hist, 'mst_key', 'it'));

    train_sql := format(
        'CREATE TEMPORARY TABLE madlib_dl_gp_trained ON COMMIT DROP AS'
        ' SELECT m.mst_key, m.__dist_key__,'
        '        madlib_dl._gp_fit_segment(s.%1$I, s.%2$I, s.%3$I, s.%4$I, m.state,'
        '            $1[m.idx]::json, $2[m.idx], $3[m.idx], $4,'
        '            array_position($5, m.__dist_key__) - 1 ORDER BY s.buffer_id) AS state'
        '   FROM pg_temp.madlib_dl_gp_models m'
        '   JOIN %5$s s ON s.__dist_key__ = m.__dist_key__'
        '  WHERE NOT m.diverged'
        '  GROUP BY m.mst_key, m.__dist_key__%6$s',
        y_col, x_col, y_col || '_shape', x_col || '_shape', source, dist);
    eval_sql := format(
        'INSERT INTO pg_temp.madlib_dl_gp_hist'
        ' SELECT tr.mst_key, $4, madlib_dl._gp_ratio(tr.e[1], tr.e[3]), madlib_dl._gp_ratio(tr.e[2], tr.e[3]),'
        '        %1$s, %2$s, $5'
        '   FROM (SELECT m.mst_key, madlib_dl._gp_eval_segment(s.%3$I, s.%4$I, s.%5$I, s.%6$I, m.state,'
        '                    $1[m.idx]::json, $2[m.idx], $3[m.idx]) AS e'
        '           FROM pg_temp.madlib_dl_gp_models m CROSS JOIN %7$s s'
        '          WHERE NOT m.diverged GROUP BY m.mst_key) tr',
        CASE WHEN validation IS NULL THEN 'NULL::double precision'
             ELSE 'madlib_dl._gp_ratio(va.e[1], va.e[3])' END,
        CASE WHEN validation IS NULL THEN 'NULL::double precision'
             ELSE 'madlib_dl._gp_ratio(va.e[2], va.e[3])' END,
        y_col, x_col, y_col || '_shape', x_col || '_shape', source);
    IF validation IS NOT NULL THEN
        eval_sql := eval_sql || format(
            ' LEFT JOIN (SELECT m.mst_key, madlib_dl._gp_eval_segment(s.%1$I, s.%2$I, s.%3$I, s.%4$I, m.state,'
            '                   $1[m.idx]::json, $2[m.idx], $3[m.idx]) AS e'
            '              FROM pg_temp.madlib_dl_gp_models m CROSS JOIN %5$s s'
            '             WHERE NOT m.diverged GROUP BY m.mst_key) va ON va.mst_key = tr.mst_key',
            val_y_col, val_x_col, val_y_col || '_shape', val_x_col || '_shape', validation);
    END IF;

    FOR iter IN 1 .. num_iterations LOOP
        FOR hop IN 0 .. m_places - 1 LOOP
            EXECUTE format('INSERT INTO pg_temp.madlib_dl_gp_visits'
                           ' SELECT $1, $2, m.mst_key, array_position($3, m.__dist_key__) - 1'
                           '   FROM pg_temp.madlib_dl_gp_models m'
                           '  WHERE NOT m.diverged AND m.__dist_key__ = ANY($3)')
            USING iter, hop, keys;
            -- 1. train where the models are
            EXECUTE train_sql USING model_archs, compile_params, fit_params, iter, keys;
            FOR div IN SELECT t.mst_key, array_position(keys, t.__dist_key__) - 1 AS seg
                         FROM pg_temp.madlib_dl_gp_trained t WHERE t.state IS NULL ORDER BY 1 LOOP
                RAISE NOTICE 'model mst_key % diverged in iteration % on segment % and stops',
                             div.mst_key, iter, div.seg;
            END LOOP;
            -- 2. rotate the schedule
            EXECUTE format(
                'CREATE TEMPORARY TABLE madlib_dl_gp_sched_next ON COMMIT DROP AS'
                ' SELECT mst_key, __dist_key__ AS __prev_dist_key__,'
                '        coalesce(lead(__dist_key__) OVER w, first_value(__dist_key__) OVER w) AS __dist_key__'
                '   FROM pg_temp.madlib_dl_gp_sched'
                ' WINDOW w AS (ORDER BY __dist_key__ DESC)%s', dist);
            -- 3. move the states (a diverged model keeps its last finite state)
            EXECUTE format(
                'CREATE TEMPORARY TABLE madlib_dl_gp_models_next ON COMMIT DROP AS'
                ' SELECT m.mst_key, m.idx, coalesce(t.state, m.state) AS state,'
                '        m.diverged OR (t.mst_key IS NOT NULL AND t.state IS NULL) AS diverged,'
                '        sc.__dist_key__'
                '   FROM pg_temp.madlib_dl_gp_models m'
                '   LEFT JOIN pg_temp.madlib_dl_gp_trained t'
                '          ON t.mst_key = m.mst_key AND t.__dist_key__ = m.__dist_key__'
                '   JOIN pg_temp.madlib_dl_gp_sched_next sc ON sc.__prev_dist_key__ = m.__dist_key__%s', dist);
            DROP TABLE pg_temp.madlib_dl_gp_trained;
            DROP TABLE pg_temp.madlib_dl_gp_models;
            DROP TABLE pg_temp.madlib_dl_gp_sched;
            ALTER TABLE pg_temp.madlib_dl_gp_models_next RENAME TO madlib_dl_gp_models;
            ALTER TABLE pg_temp.madlib_dl_gp_sched_next RENAME TO madlib_dl_gp_sched;
        END LOOP;

        IF iter % freq = 0 OR iter = num_iterations THEN
            EXECUTE eval_sql USING model_archs, compile_params, fit_params, iter,
                extract(epoch FROM clock_timestamp() - t0)::double precision;
            -- the best model so far: by validation metric, else training
            -- metric (accuracies: higher; others: lower), else loss
            SELECT h.mst_key, coalesce(h.vm, h.tm) AS score,
                   CASE WHEN h.vm IS NOT NULL THEN 'validation ' ELSE 'training ' END
                   || coalesce(metric_names[array_position(mst_keys, h.mst_key)], 'loss') AS what
              INTO best
              FROM pg_temp.madlib_dl_gp_hist h
             WHERE h.it = iter
             ORDER BY CASE WHEN metric_names[array_position(mst_keys, h.mst_key)] LIKE '%accuracy%'
                           THEN -coalesce(h.vm, h.tm)
                           WHEN metric_names[array_position(mst_keys, h.mst_key)] IS NOT NULL
                           THEN coalesce(h.vm, h.tm)
                           ELSE coalesce(h.vl, h.tl) END NULLS LAST, h.mst_key
             LIMIT 1;
            IF best.mst_key IS NOT NULL THEN
                msg := format('best model so far mst_key %s, %s %s', best.mst_key, best.what,
                              round(coalesce(best.score,
                                    (SELECT coalesce(h.vl, h.tl) FROM pg_temp.madlib_dl_gp_hist h
                                      WHERE h.it = iter AND h.mst_key = best.mst_key))::numeric, 4));
            ELSE
                msg := 'every model diverged';
            END IF;
        ELSE
            msg := format('%s hops', m_places);
        END IF;
        RAISE NOTICE 'iteration % of %: %; % s', iter, num_iterations, msg,
                     round(extract(epoch FROM clock_timestamp() - t0)::numeric, 2);
    END LOOP;

    RETURN QUERY EXECUTE
        'SELECT m.mst_key, madlib_dl._gp_state_weights(m.state, $1[m.idx]::json),'
        '       CASE WHEN m.diverged THEN ''diverged'' ELSE ''completed'' END,'
        '       coalesce(h.tl, ''{}''),'
        '       CASE WHEN $2[m.idx] THEN coalesce(h.tm, ''{}'') END,'
        '       CASE WHEN $3 THEN coalesce(h.vl, ''{}'') END,'
        '       CASE WHEN $3 AND $2[m.idx] THEN coalesce(h.vm, ''{}'') END,'
        '       coalesce(h.iters, ''{}''), coalesce(h.el, ''{}''), $4, $5'
        '  FROM pg_temp.madlib_dl_gp_models m'
        '  LEFT JOIN (SELECT mst_key, array_agg(tl ORDER BY it) AS tl, array_agg(tm ORDER BY it) AS tm,'
        '                    array_agg(vl ORDER BY it) AS vl, array_agg(vm ORDER BY it) AS vm,'
        '                    array_agg(it ORDER BY it) AS iters, array_agg(el ORDER BY it) AS el'
        '               FROM pg_temp.madlib_dl_gp_hist GROUP BY mst_key) h ON h.mst_key = m.mst_key'
        ' ORDER BY array_position($6, m.mst_key)'
    USING model_archs, has_metric, validation IS NOT NULL, sched, n_seg, mst_keys;
END
$$;

-- ---------------------------------------------------------------------
-- Greenplum / Cloudberry only
-- ---------------------------------------------------------------------

DO $do$
BEGIN
    IF to_regclass('pg_catalog.gp_segment_configuration') IS NULL THEN
        RETURN;     -- PostgreSQL: nothing more
    END IF;

    -- One __dist_key__ value per primary segment (MADlib's mapping,
    -- input_data_preprocessor.py_in): a million keys distributed by
    -- themselves, the smallest per gp_segment_id.
    EXECUTE $f$
    CREATE FUNCTION madlib_dl._gp_segment_keys(OUT content integer, OUT dist_key integer)
    RETURNS SETOF record
    LANGUAGE plpgsql VOLATILE SECURITY INVOKER
    SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
        DROP TABLE IF EXISTS pg_temp.madlib_dl_gp_keyspace;
        CREATE TEMPORARY TABLE madlib_dl_gp_keyspace ON COMMIT DROP AS
            SELECT g::integer AS __dist_key__ FROM generate_series(0, 999999) g
            DISTRIBUTED BY (__dist_key__);
        RETURN QUERY
            SELECT k.gp_segment_id::integer, min(k.__dist_key__)::integer
              FROM pg_temp.madlib_dl_gp_keyspace k
             GROUP BY k.gp_segment_id ORDER BY 1;
        DROP TABLE pg_temp.madlib_dl_gp_keyspace;
    END
    $$
    $f$;

    -- Place the buffers of a packed table on the real segments: buffer b
    -- goes to the segment with content id b % nseg, through the key that
    -- hashes there, and the table becomes DISTRIBUTED BY (__dist_key__).
    -- Its summary's num_segments becomes the segment count.
    EXECUTE $f$
    CREATE FUNCTION madlib_dl._gp_place_buffers(tbl text[])
    RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY INVOKER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        rel regclass := madlib_dl._assert_table_exists(tbl, 'output_table');
        summ text[] := ARRAY[tbl[1], tbl[2] || '_summary'];
        tmp text := tbl[2] || '__madlib_dl_placing';
        keys integer[];
        nseg integer;
        nprim integer;
        cols text;
    BEGIN
        SELECT array_agg(k.dist_key ORDER BY k.content) INTO keys FROM madlib_dl._gp_segment_keys() k;
        SELECT count(*) INTO nprim FROM gp_segment_configuration WHERE role = 'p' AND content >= 0;
        nseg := array_length(keys, 1);
        IF nseg IS NULL OR nseg <> nprim THEN
            RAISE EXCEPTION 'found keys for % of % primary segments', coalesce(nseg, 0), nprim
                USING ERRCODE = 'internal_error',
                      HINT = 'Check gp_segment_configuration; every primary segment must be up.';
        END IF;
        SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO cols
          FROM pg_attribute a
         WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped AND a.attname <> '__dist_key__';
        EXECUTE format('CREATE TABLE %I.%I AS SELECT %s, ($1::integer[])[buffer_id %% $2 + 1] AS __dist_key__'
                       '  FROM %I.%I DISTRIBUTED BY (__dist_key__)', tbl[1], tmp, cols, tbl[1], tbl[2])
        USING keys, nseg;
        EXECUTE format('DROP TABLE %I.%I', tbl[1], tbl[2]);
        EXECUTE format('ALTER TABLE %I.%I RENAME TO %I', tbl[1], tmp, tbl[2]);
        IF madlib_dl._table_oid(summ) IS NOT NULL AND EXISTS (
               SELECT 1 FROM pg_attribute a WHERE a.attrelid = madlib_dl._table_oid(summ)
                  AND a.attname = 'num_segments' AND NOT a.attisdropped) THEN
            EXECUTE format('UPDATE %I.%I SET num_segments = $1', summ[1], summ[2]) USING nseg;
        END IF;
    END
    $$
    $f$;
END
$do$;
