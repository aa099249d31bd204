-- util.sql: shared helpers for the SQL drivers (table names, argument
-- checks).  Internal: names start with "_" and may change between versions.
--
-- HOW A DRIVER USES THEM (the pattern every public function follows):
--
--   * The public function is a thin LANGUAGE sql wrapper WITHOUT a pinned
--     search_path.  It resolves each user-given table name in the caller's
--     own search_path with madlib_dl._resolve_table(name, 'param_name'),
--     which returns text[] {schema, table, given}, and calls the internal
--     driver with fully qualified madlib_dl.* names only.  given is the
--     name as the user wrote it: summary tables record it (as MADlib
--     does, madlib_dl._table_given), nothing looks it up again:
--
--       CREATE FUNCTION madlib_dl.fit(source_table varchar, ...) RETURNS void
--       LANGUAGE sql VOLATILE SECURITY INVOKER AS $$
--         SELECT madlib_dl._fit(madlib_dl._resolve_table($1, 'source_table'), ...)
--       $$;
--
--   * The internal driver is PL/pgSQL, SECURITY INVOKER, with
--     SET search_path = pg_catalog, pg_temp.  It receives tables as text[]
--     {schema, table[, given]} and builds SQL only with format('%I.%I', t[1], t[2])
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

-- _resolve_table(name, param): see src/pg/api/names.c.  Returns {schema,
-- table, given}; pg_temp.x is resolved to the session's temporary schema
-- (created on first use, as CREATE TEMPORARY TABLE does: hence PARALLEL
-- RESTRICTED).  Must be called where the caller's search_path is in
-- effect (a LANGUAGE sql wrapper), never from inside a function with a
-- pinned search_path.
CREATE FUNCTION madlib_dl._resolve_table(name text, param text DEFAULT 'table')
RETURNS text[]
AS 'MODULE_PATHNAME', 'madlib_dl__resolve_table'
LANGUAGE C STABLE PARALLEL RESTRICTED;

-- A job limit the drivers check before they build a job: 'segments' (most
-- segments of a packed table or a cluster), 'models' (most configurations
-- of one fit_multiple job), 'configs' (most rows of generate_model_configs).
-- The numbers live once, in C (src/pg/runtime/limits.c).
CREATE FUNCTION madlib_dl._job_limit(name text)
RETURNS integer
AS 'MODULE_PATHNAME', 'madlib_dl__job_limit'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- The parts of a name as SQL reads them, without resolving it: {table}
-- or {schema, table} (pg_temp: the session's temporary schema, when it
-- has one); NULL for NULL or an invalid name.  For comparing names that
-- summary tables record with tables already resolved (src/pg/api/names.c).
CREATE FUNCTION madlib_dl._table_name_parts(name text)
RETURNS text[]
AS 'MODULE_PATHNAME', 'madlib_dl__table_name_parts'
LANGUAGE C STABLE PARALLEL SAFE;

-- The name a summary table records for a resolved table: as the user gave
-- it (tbl[3], from _resolve_table), as MADlib records it; schema.table
-- when the table came some other way.  Never for building SQL.
CREATE FUNCTION madlib_dl._table_given(tbl text[])
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT coalesce(tbl[3], tbl[1] || '.' || tbl[2]) $$;

-- The companion table {schema, table || suffix, given || suffix} of tbl
-- (MADlib's add_postfix: a quoted given name gets suffix inside its
-- closing quote), e.g. fit_multiple's <model>_info.
CREATE FUNCTION madlib_dl._table_with_suffix(tbl text[], suffix text)
RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN tbl[3] IS NULL THEN ARRAY[tbl[1], tbl[2] || suffix]
                WHEN right(btrim(tbl[3]), 1) = '"'
                THEN ARRAY[tbl[1], tbl[2] || suffix, left(btrim(tbl[3]), -1) || suffix || '"']
                ELSE ARRAY[tbl[1], tbl[2] || suffix, btrim(tbl[3]) || suffix] END
$$;

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

-- Does the recorded name named (as _table_given wrote it, or as an older
-- release wrote it: schema.table, quoted or not) name the resolved table
-- tbl {schema, table}?  Read without any search_path: a bare name counts
-- only because the record sits next to tbl, in tbl's schema.  Never NULL:
-- false for NULL and for text that is not a name.
CREATE FUNCTION madlib_dl._names_table(named text, tbl text[])
RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(named IN (madlib_dl._table_label(tbl), madlib_dl._table_sql(tbl), tbl[2])
                    OR (SELECT p[cardinality(p)] = tbl[2] AND (cardinality(p) = 1 OR p[1] = tbl[1])
                          FROM madlib_dl._table_name_parts(named) p),
                    false)
$$;

-- The table {schema, table} if it exists (any relkind), else NULL.
-- Never raises for a missing schema.
CREATE FUNCTION madlib_dl._table_oid(tbl text[])
RETURNS regclass
LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT to_regclass(format('%I.%I', tbl[1], tbl[2])) $$;

-- WHOSE CODE RUNS (docs/security.md): code of another role never runs
-- inside a madlib_dl call.  A type's input/output functions and casts, a
-- domain's CHECK, an operator, a row-security policy, a trigger, a rule
-- and a column DEFAULT run with the rights of whoever runs the query.  So:
--
--   * Before a driver reads ANY table (source, model, summary, packed,
--     model selection, architecture, object table...), it calls
--       PERFORM madlib_dl._assert_trusted_table(rel, 'a model table');
--     (or gets rel from _assert_table_exists / _assert_columns /
--     _assert_known_format, which call it).  Every column must have a type
--     owned by the bootstrap superuser, a superuser or the caller
--     (recursively: array elements, domain bases, composite attributes,
--     range subtypes), and no row-security policy may call another role's
--     function, operator or type; else 42501 naming table, column, type
--     and owner.  It locks the table (AccessShareLock) so nothing changes
--     before the transaction ends.  C code: dl_pg_require_columns and
--     dl_pg_require_trusted_table (src/pg/pg_trust.c) do the same.
--   * Before writing into a table it did not create in this call
--     (appending to an architecture table, warm start, UPDATE of a model
--     selection table), it calls
--       PERFORM madlib_dl._assert_writable_table(rel, 'a model architecture table');
--     which also requires the caller to own it and no trigger, rule,
--     default, constraint or index of it to call another role's code.
--   * Output tables hold built-in types only: never copy a column type
--     from a table you read (class values: text[] or a built-in array
--     type, _class_values_type; ids: _builtin_type_of).
--   * Comparisons, coalesce and casts run under SET search_path =
--     pg_catalog, pg_temp (operators resolve in pg_catalog only) on
--     columns checked above; no ::text or to_jsonb over a row whose
--     table was not checked.
CREATE FUNCTION madlib_dl._assert_trusted_table(rel regclass, what text DEFAULT NULL)
RETURNS regclass
AS 'MODULE_PATHNAME', 'madlib_dl__assert_trusted_table'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

-- For internal functions given a table twice, as its name tbl {schema,
-- table} (for SQL text) and as rel (for the catalog): ERROR 22004 for a
-- NULL, 22023 unless they are the same table, then _assert_trusted_table(rel, param).  So
-- what is read is what was checked, whoever calls them.
CREATE FUNCTION madlib_dl._assert_same_table(tbl text[], rel regclass, param text)
RETURNS regclass
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF rel IS NULL OR tbl IS NULL THEN
        RAISE EXCEPTION '% must not be NULL', coalesce(param, 'the table')
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Give the table as its name and as its regclass (an internal function: call the public one).';
    END IF;
    IF rel IS DISTINCT FROM madlib_dl._table_oid(tbl) THEN
        RAISE EXCEPTION '% % is not the table %', param, coalesce(rel::text, 'NULL'),
                        coalesce(madlib_dl._table_label(tbl), 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the same table as its name and as its regclass (an internal function: call the public one).';
    END IF;
    RETURN madlib_dl._assert_trusted_table(rel, param);
END
$$;

CREATE FUNCTION madlib_dl._assert_writable_table(rel regclass, what text DEFAULT NULL)
RETURNS regclass
AS 'MODULE_PATHNAME', 'madlib_dl__assert_writable_table'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

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

-- Raise 0A000 when use_gpus is true: this build of madlib_dl has no GPU
-- backend (docs/gpu.md).  hint says how to call the function that asked
-- (fit's and evaluate's say different things).  The check behind
-- _fit_check_no_gpus and _ep_assert_no_gpus.
CREATE FUNCTION madlib_dl._assert_no_gpus(use_gpus boolean, hint text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF coalesce(use_gpus, false) THEN
        RAISE EXCEPTION 'use_gpus is not supported: this build of madlib_dl has no GPU backend'
            USING ERRCODE = 'feature_not_supported',
                  HINT = coalesce(hint, 'Call it with use_gpus => false.');
    END IF;
END
$$;

-- The one check behind _assert_table_exists and _ep_assert_readable:
-- raise 42P01 unless tbl {schema, table} exists, 42809 (with hint) unless
-- its relkind is one of kinds (pg_class.relkind letters, e.g. 'rp');
-- then check it as every table read is checked (_assert_trusted_table)
-- and return its regclass.  param names the argument in messages.
CREATE FUNCTION madlib_dl._assert_relation(tbl text[], param text, kinds text, hint text)
RETURNS regclass
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass := madlib_dl._table_oid(tbl);
    kind "char";
BEGIN
    PERFORM madlib_dl._assert_not_null(kinds, 'kinds');
    IF rel IS NULL THEN
        RAISE EXCEPTION '% "%" does not exist', param, madlib_dl._table_label(tbl)
            USING ERRCODE = 'undefined_table',
                  HINT = 'Check the table name and the search_path, or give schema.table.';
    END IF;
    SELECT c.relkind INTO kind FROM pg_class c WHERE c.oid = rel;
    IF strpos(kinds, kind::text) = 0 THEN
        RAISE EXCEPTION '% "%" is not a table', param, madlib_dl._table_label(tbl)
            USING ERRCODE = 'wrong_object_type', HINT = coalesce(hint, 'Give the name of a table.');
    END IF;
    PERFORM madlib_dl._assert_trusted_table(rel, param);
    RETURN rel;
END
$$;

-- Raise 42P01 unless tbl {schema, table} exists and is a table
-- (ordinary or partitioned); 42809 if it is a view or other relation.
-- Returns its regclass.  param names the argument in messages.
--   src := madlib_dl._assert_table_exists(source_table, 'source_table');
CREATE FUNCTION madlib_dl._assert_table_exists(tbl text[], param text DEFAULT 'table')
RETURNS regclass
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl._assert_relation(tbl, param, 'rp', 'Give the name of an ordinary table.') $$;

-- Raise 3F000 unless the schema of tbl {schema, table} exists.  Call it
-- before creating an output table, for a clean message.  pg_temp, the
-- alias of the session's temporary schema, always exists (CREATE TABLE
-- makes it); _resolve_table gives its real name anyway.
CREATE FUNCTION madlib_dl._assert_schema_exists(tbl text[])
RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF tbl[1] IS DISTINCT FROM 'pg_temp' AND to_regnamespace(quote_ident(tbl[1])) IS NULL THEN
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
    PERFORM madlib_dl._assert_trusted_table(rel, what);
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

-- Warm start replaces the outputs of an earlier call: only tables that
-- madlib_dl's (or MADlib's) own summary identifies as such.  Raise unless
--   * model {schema, table} is a table with exactly the columns cols of
--     types types (a model table of fn, and nothing else: an architecture
--     table or a user's table has other columns);
--   * summary {schema, table} is a table with a text column "model" and
--     one row, whose "model" names that table (_names_table: as the user
--     gave it, as MADlib records it, or as schema.table; read without any
--     search_path, a bare name only because the summary sits next to it);
--   * when companion {schema, table} is given and exists (fit_multiple's
--     info table), the summary row's column companion_col names it too.
-- 42P01 when a table is missing, 42809 when one is not such an output.
-- Returns the model table's regclass.  param names the model table's
-- argument and fn the function in messages.
--   PERFORM madlib_dl._assert_warm_start_outputs(model, 'model', summary_tbl,
--       ARRAY['model_weights', 'model_arch'], ARRAY['bytea', 'json'], 'fit');
CREATE FUNCTION madlib_dl._assert_warm_start_outputs(model text[], param text, summary text[],
                                                     cols text[], types text[], fn text,
                                                     companion text[] DEFAULT NULL,
                                                     companion_col text DEFAULT NULL)
RETURNS regclass
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    what text := format('the model table of an earlier %s (warm_start)', fn);
    hint text := format('warm_start continues the model table written by an earlier %s, next to '
                        'its summary; give that table, or warm_start => false.', fn);
    rel regclass := madlib_dl._assert_table_exists(model, param);
    srel regclass;
    n_cols integer;
    n_rows bigint;
    named text;
    named_companion text;
BEGIN
    PERFORM madlib_dl._assert_columns(rel, cols, types, what);
    SELECT count(*) INTO n_cols FROM pg_attribute a
     WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped;
    IF n_cols <> cardinality(cols) THEN
        RAISE EXCEPTION 'table "%" is not a model table of %: it has % columns, not %',
                        madlib_dl._table_label(model), fn, n_cols, array_to_string(cols, ', ')
            USING ERRCODE = 'wrong_object_type', HINT = hint;
    END IF;
    srel := madlib_dl._table_oid(summary);
    IF srel IS NULL THEN
        RAISE EXCEPTION 'model table "%" has no summary table "%"',
                        madlib_dl._table_label(model), madlib_dl._table_label(summary)
            USING ERRCODE = 'undefined_table', HINT = hint;
    END IF;
    srel := madlib_dl._assert_table_exists(summary, 'model summary table');
    PERFORM madlib_dl._assert_columns(srel, ARRAY['model'], ARRAY['text'], 'the summary of ' || what);
    IF companion IS NOT NULL THEN
        PERFORM madlib_dl._assert_columns(srel, ARRAY[companion_col], ARRAY['text'], 'the summary of ' || what);
        EXECUTE format('SELECT count(*), min(model), min(%I) FROM %s', companion_col, madlib_dl._table_sql(summary))
           INTO n_rows, named, named_companion;
    ELSE
        EXECUTE format('SELECT count(*), min(model) FROM %s', madlib_dl._table_sql(summary))
           INTO n_rows, named;
    END IF;
    IF n_rows <> 1 OR NOT madlib_dl._names_table(named, model) THEN
        RAISE EXCEPTION 'summary table "%" does not name "%" as the model of an earlier %',
                        madlib_dl._table_label(summary), madlib_dl._table_label(model), fn
            USING ERRCODE = 'wrong_object_type', HINT = hint;
    END IF;
    IF companion IS NOT NULL AND madlib_dl._table_oid(companion) IS NOT NULL
       AND NOT madlib_dl._names_table(named_companion, companion) THEN
        RAISE EXCEPTION 'summary table "%" does not name "%" as the % of an earlier %',
                        madlib_dl._table_label(summary), madlib_dl._table_label(companion), companion_col, fn
            USING ERRCODE = 'wrong_object_type', HINT = hint;
    END IF;
    RETURN rel;
END
$$;

-- Data written by a newer madlib_dl: refused, as its layout may be one
-- this version does not know (docs/formats.md).  summ: the summary table
-- of a model table (fit, fit_multiple, AutoML) or of a packed table (the
-- preprocessors); what names the data in messages ('model table "s.m"').
-- Its madlib_version column (text, as madlib_dl.version() writes it,
-- 'madlib_dl X.Y.Z') decides: a madlib_dl of a newer major.minor than this
-- one: 0A000; an older or this one: read (every release so far stores
-- model_weights and packed buffers in format 1); another writer (no such
-- column, NULL, or not 'madlib_dl ...': MADlib's tables, whose layout is
-- format 1): read.  'madlib_dl ' and no version after it: 0A000.
-- Patch releases never change a layout.
-- PERFORM madlib_dl._assert_known_format(srel, format('model table "%s"', label));
CREATE FUNCTION madlib_dl._assert_known_format(summ regclass, what text)
RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cur text[] := regexp_match(madlib_dl.version(), '^madlib_dl ([0-9]{1,9})\.([0-9]{1,9})\.');
    v text;
    m text[];
BEGIN
    IF summ IS NULL OR NOT EXISTS (SELECT 1 FROM pg_attribute a
                                    WHERE a.attrelid = summ AND a.attname = 'madlib_version'
                                      AND a.attnum > 0 AND NOT a.attisdropped
                                      AND a.atttypid IN ('text'::regtype, 'varchar'::regtype)) THEN
        RETURN;
    END IF;
    PERFORM madlib_dl._assert_trusted_table(summ, what);
    FOR v IN EXECUTE format('SELECT DISTINCT madlib_version::text FROM %s', summ::text) LOOP
        CONTINUE WHEN v IS NULL OR left(v, 10) <> 'madlib_dl ';
        m := regexp_match(v, '^madlib_dl ([0-9]{1,9})\.([0-9]{1,9})\.');
        IF m IS NULL THEN
            RAISE EXCEPTION '% was written by "%", a madlib_dl version this one cannot tell', what, v
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = format('Summary table %s says madlib_version "%s"; madlib_dl writes "madlib_dl X.Y.Z".',
                                      summ::text, v),
                      HINT = 'Write the table again with this version of madlib_dl (docs/formats.md).';
        END IF;
        IF ARRAY[m[1]::integer, m[2]::integer] > ARRAY[cur[1]::integer, cur[2]::integer] THEN
            RAISE EXCEPTION '% was written by %, newer than this %', what, v, madlib_dl.version()
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = format('madlib_dl %s.%s may store model weights and packed buffers in a layout '
                                      '%s does not know.', m[1], m[2], madlib_dl.version()),
                      HINT = format('Upgrade madlib_dl to %s.%s or later to read it, or write the table again '
                                    'with this version (docs/formats.md).', m[1], m[2]);
        END IF;
    END LOOP;
END
$$;

-- The type of the output summaries' <y>_class_values column, from the
-- packed table's summary summ: its type when that is an array of a
-- built-in base type of pg_catalog (as training_preprocessor_dl writes
-- it: text[], integer[], boolean[]...), else text[] (no type of a table
-- madlib_dl reads travels into the caller's outputs: docs/security.md);
-- NULL when summ has no column col.  Checks summ first
-- (_assert_trusted_table).  Copy the values with ::<this type>.
CREATE FUNCTION madlib_dl._class_values_type(summ regclass, col text)
RETURNS text
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM madlib_dl._assert_trusted_table(summ, 'the summary of a packed table');
    RETURN (SELECT CASE WHEN et.typtype = 'b' AND et.typnamespace = 'pg_catalog'::regnamespace
                        THEN format_type(a.atttypid, NULL) ELSE 'text[]' END
              FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
                   LEFT JOIN pg_type et ON et.oid = t.typelem AND t.typelem <> 0
             WHERE a.attrelid = summ AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped);
END
$$;

-- The built-in type an output column gets for a column of type typ read
-- from a caller's table (predict's id column): typ itself when it is a
-- type of pg_catalog (base, or an array of one), else text.  Copy the
-- values with ::<this type> after reading them as text or as typ.
CREATE FUNCTION madlib_dl._builtin_type_of(typ regtype)
RETURNS text
LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN t.typnamespace = 'pg_catalog'::regnamespace AND t.typtype = 'b'
                THEN format_type(t.oid, NULL) ELSE 'text' END
      FROM pg_type t WHERE t.oid = typ
$$;

-- The distribution clause of a small table with more than one unique
-- constraint (a serial PRIMARY KEY and a UNIQUE): ' DISTRIBUTED
-- REPLICATED' on Greenplum and Cloudberry, whose distributed tables need
-- every unique constraint to hold the whole distribution key
-- (cdbcat.c, index_check_policy_compatible), else ''.  greenplum: the
-- server kind (NULL: this server's).  Append it to the CREATE TABLE.
CREATE FUNCTION madlib_dl._replicated_clause(greenplum boolean DEFAULT NULL)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN coalesce(greenplum, to_regclass('pg_catalog.gp_segment_configuration') IS NOT NULL)
                THEN ' DISTRIBUTED REPLICATED' ELSE '' END
$$;

-- The distribution clause of a table the extension creates: on Greenplum
-- and Cloudberry ' DISTRIBUTED BY (cols)' (cols: SQL text of column
-- names, already quoted) or, for NULL, ' DISTRIBUTED RANDOMLY' (the one-row
-- summaries, the model tables); '' elsewhere.  Without it Greenplum picks
-- the first column of a suitable type, with a NOTICE, and may skew the
-- table (model_weights, loss, class_text).  Append it to the CREATE TABLE.
CREATE FUNCTION madlib_dl._distributed_clause(cols text DEFAULT NULL)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN to_regclass('pg_catalog.gp_segment_configuration') IS NULL THEN ''
                WHEN cols IS NULL THEN ' DISTRIBUTED RANDOMLY'
                ELSE ' DISTRIBUTED BY (' || cols || ')' END
$$;

-- A name for a scratch temporary table: base_N, with the smallest N >= 1
-- that names no relation in this session's pg_temp, so that a user's own
-- temporary table is never dropped, filled or read by mistake.  Create
-- the table as pg_temp.<name> (format('pg_temp.%I', name)) at once.
CREATE FUNCTION madlib_dl._temp_table_name(base text)
RETURNS text
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer := 1;
BEGIN
    WHILE to_regclass(format('pg_temp.%I', base || '_' || n)) IS NOT NULL LOOP
        n := n + 1;
    END LOOP;
    RETURN base || '_' || n;
END
$$;

-- Temporary tables as training data.  A temporary table lives in this
-- backend's local buffers, which parallel workers cannot read (PostgreSQL
-- refuses: "cannot access temporary tables during a parallel operation").
-- So when the source or validation table of a job on parallel workers is
-- temporary, the job gets no worker: this backend trains every segment
-- itself, one after the other (the segments and results are the same:
-- docs/fit.md).  _leader_only_for_temp returns the max_parallel_workers
-- to restore with _leader_only_end (NULL: nothing was changed); it
-- raises 0A000 for a PL/Proxy job, whose nodes cannot see this session's
-- tables.  Between the two calls max_parallel_workers is 0 for this
-- transaction (an error rolls it back with the rest).
--   saved := madlib_dl._leader_only_for_temp(ARRAY[src_rel, val_rel], tr.transport);
--   r := madlib_dl._fit_run(...);
--   PERFORM madlib_dl._leader_only_end(saved);
CREATE FUNCTION madlib_dl._leader_only_for_temp(rels regclass[], transport text)
RETURNS text
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    temp_rel regclass;
    saved text;
BEGIN
    SELECT r INTO temp_rel
      FROM unnest(rels) AS r JOIN pg_class c ON c.oid = r
     WHERE c.relpersistence = 't'
     LIMIT 1;
    IF temp_rel IS NULL OR transport = 'greenplum' THEN
        RETURN NULL;            -- Greenplum's segments read temporary tables
    END IF;
    IF transport IS DISTINCT FROM 'workers' THEN
        RAISE EXCEPTION 'table "%" is a temporary table, which the nodes of a PL/Proxy cluster cannot read',
                        temp_rel::text
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Train from a permanent table distributed with plproxy_distribute.';
    END IF;
    saved := current_setting('max_parallel_workers');
    RAISE NOTICE 'table "%" is a temporary table, which parallel workers cannot read: this backend trains every segment itself',
                 temp_rel::text;
    PERFORM set_config('max_parallel_workers', '0', true);
    RETURN saved;
END
$$;

CREATE FUNCTION madlib_dl._leader_only_end(saved text)
RETURNS void
LANGUAGE sql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT set_config('max_parallel_workers', saved, true) WHERE saved IS NOT NULL $$;

-- (The object table's checks are here, not in custom_functions.sql,
-- because SQL functions of fit.sql and model_selection.sql call
-- them: Greenplum checks SQL function bodies inside CREATE EXTENSION.)

-- The object table's columns, as MADlib makes it.
CREATE FUNCTION madlib_dl._object_table_what()
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT 'an object table made by load_top_k_accuracy_function'::text $$;

-- Raise unless obj is an object table (a table with a text column name)
-- holding a row for every top_<k>_accuracy metric of compiles (NULL
-- elements and unparsable strings are left to the drivers' own checks).
-- 42P01 when it does not exist, 42703/42804 for its columns, 42704 for a
-- missing function.
CREATE FUNCTION madlib_dl._object_table_check(obj text[], compiles text[])
RETURNS void
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass := madlib_dl._assert_table_exists(obj, 'object_table');
    c text;
    fn text;
    k text;
    found_it boolean;
BEGIN
    PERFORM madlib_dl._assert_columns(rel, ARRAY['name'], ARRAY['text'], madlib_dl._object_table_what());
    FOREACH c IN ARRAY coalesce(compiles, ARRAY[]::text[]) LOOP
        CONTINUE WHEN c IS NULL;
        BEGIN
            fn := (madlib_dl._check_params(c, NULL)).metrics_type[1];
        EXCEPTION WHEN OTHERS THEN
            CONTINUE;           -- the driver reports the string's own error
        END;
        k := substring(fn FROM '^top_([0-9]+)_accuracy$');
        CONTINUE WHEN k IS NULL;
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s WHERE name = $1)', madlib_dl._table_sql(obj))
           INTO found_it USING fn;
        IF NOT found_it THEN
            RAISE EXCEPTION 'object_table "%" has no function "%"', madlib_dl._table_label(obj), fn
                USING ERRCODE = 'undefined_object',
                      HINT = format('Add it with SELECT madlib_dl.load_top_k_accuracy_function(%L, %s);',
                                    madlib_dl._table_given(obj), k);
        END IF;
    END LOOP;
END
$$;
