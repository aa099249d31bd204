-- model_selection.sql: model selection tables, as in MADlib
-- (madlib_keras_model_selection.sql_in): load_model_selection_table and
-- generate_model_configs, with the C helpers of src/pg/api/model_selection.c.
-- docs/model-selection.md is the user page.
--
-- A model selection table has the columns
--     mst_key serial PRIMARY KEY, model_id integer, compile_params varchar,
--     fit_params varchar, UNIQUE (model_id, compile_params, fit_params)
-- and a companion <table>_summary (model_arch_table varchar,
-- object_table varchar, model_arch_table_qualified varchar,
-- object_table_qualified varchar) with one row: model_arch_table and
-- object_table as the user gave them (as MADlib records them), the
-- *_qualified columns the same tables as resolved then ("schema"."table"),
-- which fit_multiple reads, so that no later search_path can make the
-- names point elsewhere.  Both functions
-- append to an existing table; rows it already holds are not added again.

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
-- argument as the user wrote it, obj the object_table argument resolved
-- ({schema, table, given}; checked by the public wrapper), both recorded
-- in a new summary.  Returns the number of rows added.
CREATE FUNCTION madlib_dl._ms_store(mst text[], arch text[], arch_raw text,
                                    ids integer[], compiles text[], fits text[],
                                    obj text[] DEFAULT NULL)
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
    has_qualified_col boolean;
    has_obj_qualified_col boolean;
    stored_tbl text[];
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
            '  UNIQUE (model_id, compile_params, fit_params))%s', mst[1], mst[2],
            madlib_dl._replicated_clause());
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
        EXECUTE format('CREATE TABLE %I.%I (model_arch_table varchar, object_table varchar,'
                       ' model_arch_table_qualified varchar, object_table_qualified varchar)%s',
                       summ[1], summ[2], madlib_dl._distributed_clause());
    END IF;
    srel := madlib_dl._assert_table_exists(summ, 'model selection summary table');
    PERFORM madlib_dl._assert_columns(srel, ARRAY['model_arch_table'], ARRAY['character varying'],
        'the summary table of ' || what);
    has_object_col := EXISTS (SELECT 1 FROM pg_attribute a
                               WHERE a.attrelid = srel AND a.attname = 'object_table'
                                 AND a.attnum > 0 AND NOT a.attisdropped);
    has_qualified_col := madlib_dl._ep_has_column(srel, 'model_arch_table_qualified');
    has_obj_qualified_col := madlib_dl._ep_has_column(srel, 'object_table_qualified');
    PERFORM madlib_dl._assert_writable_table(rel, what);
    PERFORM madlib_dl._assert_writable_table(srel, 'the summary table of ' || what);
    -- no append may slip in between the checks and the insert
    EXECUTE format('LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE', madlib_dl._table_sql(mst));
    EXECUTE format('LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE', madlib_dl._table_sql(summ));
    -- appending: the table stored must be the one given, compared as
    -- fit_multiple finds it (the qualified name, else the recorded name in
    -- the selection table's schema), never through the search_path
    nrows := 0;
    FOR stored IN EXECUTE format('SELECT %s::text FROM %s',
                                CASE WHEN has_qualified_col
                                     THEN 'coalesce(model_arch_table_qualified, model_arch_table)'
                                     ELSE 'model_arch_table' END,
                                madlib_dl._table_sql(summ))
    LOOP
        nrows := nrows + 1;
        stored_tbl := madlib_dl._table_name_parts(stored);
        IF cardinality(stored_tbl) = 1 THEN
            stored_tbl := ARRAY[mst[1], stored_tbl[1]];
        END IF;
        IF stored_tbl IS NULL OR stored_tbl[1] <> arch[1] OR stored_tbl[2] <> arch[2] THEN
            RAISE EXCEPTION 'model_selection_table "%" was made for model_arch_table "%", not "%"',
                            madlib_dl._table_label(mst), stored, madlib_dl._table_label(arch)
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = format('Pass model_arch_table => %L to append to it, or choose another '
                                    'model_selection_table.', stored);
        END IF;
    END LOOP;
    IF nrows = 0 THEN
        -- as the user gave them, as MADlib records them; a summary made by
        -- hand without model_arch_table_qualified gets the qualified name
        EXECUTE format('INSERT INTO %s (model_arch_table%s%s%s) VALUES ($1%s%s%s)',
                       madlib_dl._table_sql(summ),
                       CASE WHEN has_object_col THEN ', object_table' ELSE '' END,
                       CASE WHEN has_qualified_col THEN ', model_arch_table_qualified' ELSE '' END,
                       CASE WHEN has_obj_qualified_col THEN ', object_table_qualified' ELSE '' END,
                       CASE WHEN has_object_col THEN ', $2' ELSE '' END,
                       CASE WHEN has_qualified_col THEN ', $3' ELSE '' END,
                       CASE WHEN has_obj_qualified_col THEN ', $4' ELSE '' END)
        USING CASE WHEN has_qualified_col THEN arch_raw ELSE arch_name END,
              CASE WHEN has_obj_qualified_col OR obj IS NULL THEN madlib_dl._table_given(obj)
                   ELSE madlib_dl._table_sql(obj) END,
              arch_name, madlib_dl._table_sql(obj);
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
    object_table text[])
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
    -- object_table was checked by the public wrapper (_object_table_check)
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
    IF total > madlib_dl._job_limit('configs') THEN
        RAISE EXCEPTION 'model_id_list, compile_params_list and fit_params_list give % configurations, more than %',
                        total, madlib_dl._job_limit('configs')
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Give shorter lists.';
    END IF;
    SELECT array_agg(m ORDER BY mo, co, fo), array_agg(c ORDER BY mo, co, fo),
           array_agg(f ORDER BY mo, co, fo)
      INTO all_ids, all_compiles, all_fits
      FROM unnest(ids) WITH ORDINALITY AS a(m, mo),
           unnest(compiles) WITH ORDINALITY AS b(c, co),
           unnest(fits) WITH ORDINALITY AS c(f, fo);
    PERFORM madlib_dl._ms_store(mst, arch, arch_raw, all_ids, all_compiles, all_fits, object_table);
END
$$;

-- generate_model_configs: grid or random search over the grids.
CREATE FUNCTION madlib_dl._generate_model_configs(arch text[], mst text[], arch_raw text,
    model_id_list integer[], compile_params_grid text, fit_params_grid text,
    search_type text, num_configs integer, random_state integer, object_table text[])
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
    -- object_table was checked by the public wrapper (_object_table_check)
    PERFORM madlib_dl._assert_not_null(compile_params_grid, 'compile_params_grid');
    PERFORM madlib_dl._assert_not_null(fit_params_grid, 'fit_params_grid');
    PERFORM madlib_dl._assert_not_null(search_type, 'search_type');
    ids := madlib_dl._ms_check_model_ids(arch, model_id_list);
    SELECT array_agg(g.model_id ORDER BY o), array_agg(g.compile_params ORDER BY o),
           array_agg(g.fit_params ORDER BY o)
      INTO all_ids, all_compiles, all_fits
      FROM madlib_dl._model_configs(ids, compile_params_grid, fit_params_grid, search_type,
                                    num_configs, random_state) WITH ORDINALITY AS g(model_id, compile_params, fit_params, o);
    PERFORM madlib_dl._ms_store(mst, arch, arch_raw, all_ids, all_compiles, all_fits, object_table);
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
    SELECT madlib_dl._object_table_check(madlib_dl._resolve_table($6, 'object_table'), $4::text[])
     WHERE $6 IS NOT NULL;
    SELECT madlib_dl._load_model_selection_table(
        madlib_dl._resolve_table($1, 'model_arch_table'),
        madlib_dl._resolve_table($2, 'model_selection_table'),
        $1, $3, $4::text[], $5::text[],
        CASE WHEN $6 IS NULL THEN NULL ELSE madlib_dl._resolve_table($6, 'object_table') END)
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
    SELECT madlib_dl._object_table_check(madlib_dl._resolve_table($9, 'object_table'), NULL)
     WHERE $9 IS NOT NULL;
    SELECT madlib_dl._generate_model_configs(
        madlib_dl._resolve_table($1, 'model_arch_table'),
        madlib_dl._resolve_table($2, 'model_selection_table'),
        $1, $3, $4, $5, $6, $7, $8,
        CASE WHEN $9 IS NULL THEN NULL ELSE madlib_dl._resolve_table($9, 'object_table') END)
$$;
