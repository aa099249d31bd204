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
