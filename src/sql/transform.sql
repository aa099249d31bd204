-- transform.sql: column transforms saved with the model
-- (training_preprocessor_dl's transform => '...'): the C functions of
-- src/pg/api/transform.c, and the helpers that resolve a transform's
-- columns in a table, learn its statistics on the training table, and
-- build the call that turns each raw row into its feature array.
--
-- The spec is parsed by the engine (include/madlib_dl/dl_transform.h)
-- into a plan (jsonb, docs/formats.md); columns are looked up in the
-- catalog by their exact names and only built-in types are read; the
-- statistics are aggregates over madlib_dl._transform_stage_value, so
-- the values they are learned on are computed by the same C code that
-- applies the plan.  Nothing of the spec becomes SQL text: the queries
-- name columns with format('%I') from pg_attribute.

-- ---------------------------------------------------------------------
-- C functions (src/pg/api/transform.c)
-- ---------------------------------------------------------------------

-- The plan of a spec: items, ops and constants; kinds unknown, no statistics.
CREATE FUNCTION madlib_dl._transform_parse(spec text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'madlib_dl__transform_parse'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- The plan with each item's kind from its column's type (one per item)
-- and the widths of array items; 42804 for a type an item does not take.
CREATE FUNCTION madlib_dl._transform_resolve(plan jsonb, types regtype[], widths integer[])
RETURNS jsonb
AS 'MODULE_PATHNAME', 'madlib_dl__transform_resolve'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- The value item's statistics of stage are learned on: stage 0 after
-- ln, stage 1 after ln and imputation; NULL stays NULL.
CREATE FUNCTION madlib_dl._transform_stage_value(plan jsonb, item integer, stage integer,
                                                 v double precision)
RETURNS double precision
AS 'MODULE_PATHNAME', 'madlib_dl__transform_stage_value'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- The fitted plan, checked (every statistic present).
CREATE FUNCTION madlib_dl._transform_finish(plan jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'madlib_dl__transform_finish'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The number of features of a fitted plan.
CREATE FUNCTION madlib_dl._transform_width(plan jsonb)
RETURNS integer
AS 'MODULE_PATHNAME', 'madlib_dl__transform_width'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The feature array of one raw row: the row's value of each item of the
-- fitted plan, in order, e.g.
--   madlib_dl._transform_apply(plan, t.age, t.income, t.city)
CREATE FUNCTION madlib_dl._transform_apply(plan jsonb, VARIADIC "any")
RETURNS real[]
AS 'MODULE_PATHNAME', 'madlib_dl__transform_apply'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- The features the transform of a model (its summary's plan) builds
-- from one raw row, taken by column name, e.g.
--   SELECT madlib_dl.transform_features('census_model', t) FROM census_new t;
-- the input of predict_row for raw rows.  The plan is read once per query.
CREATE FUNCTION madlib_dl.transform_features(model_table text, raw record)
RETURNS real[]
AS 'MODULE_PATHNAME', 'madlib_dl_transform_features'
LANGUAGE C STABLE PARALLEL RESTRICTED;

-- ---------------------------------------------------------------------
-- Helpers of the drivers (internal; search_path pinned)
-- ---------------------------------------------------------------------

-- The column of each item of plan in rel, by its exact name: names,
-- types (42703 for a missing column; 42501 for a table with a column of
-- another role's type, _assert_trusted_table; the C functions read only
-- built-in types and refuse any other, 42804).  what names rel in messages.
CREATE FUNCTION madlib_dl._tf_columns(rel regclass, plan jsonb, what text,
                                      OUT cols text[], OUT types regtype[])
RETURNS record
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    col text;
    typ oid;
BEGIN
    PERFORM madlib_dl._assert_trusted_table(rel, what);  -- 42501: another role's types (util.sql)
    cols := '{}';
    types := '{}';
    FOR col IN SELECT e->>'column' FROM jsonb_array_elements(plan->'items') WITH ORDINALITY AS u(e, o)
                ORDER BY o LOOP
        SELECT a.atttypid INTO typ
          FROM pg_attribute a
         WHERE a.attrelid = rel AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'column "%" of the transform does not exist in % "%"', col, what, rel::text
                USING ERRCODE = 'undefined_column',
                      HINT = 'Name columns of the table in the transform; quote names with capitals or '
                             'spaces, e.g. standardize("Age").';
        END IF;
        cols := cols || col;
        types := types || typ::regtype;
    END LOOP;
END
$$;

-- The expression of the feature array of a row of alias, for plan given
-- as plan_ref (a parameter like $1 or a column like c.tf), its items'
-- columns cols: madlib_dl._transform_apply(<plan_ref>, alias.col, ...).
CREATE FUNCTION madlib_dl._tf_expr(plan_ref text, cols text[], alias text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT format('madlib_dl._transform_apply(%s, %s)', plan_ref,
                  string_agg(format('%I.%I', alias, c), ', ' ORDER BY o))
      FROM unnest(cols) WITH ORDINALITY AS u(c, o)
$$;

-- Learn the transform spec on the source table src: the fitted
-- plan and its columns.  Means and standard deviations are summed in
-- numeric (exact sums of the float8 values as numeric takes them), so
-- they do not depend on the order rows are read in, parallel workers or
-- Greenplum segments.  Statistics: impute mean / median of the values
-- after ln; standardize mean and population standard deviation, minmax
-- min and max, of the values after ln and imputation; onehot / ordinal
-- the distinct non-NULL values, sorted (text in byte order, "C"),
-- at most max_categories of them (54000 beyond).
CREATE FUNCTION madlib_dl._tf_fit(src text[], spec text,
                                  OUT plan jsonb, OUT cols text[])
RETURNS record
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass := madlib_dl._assert_table_exists(src, 'source_table');
    c record;
    widths integer[] := '{}';
    it jsonb;
    val text;                   -- the column's value as the C functions take it
    r record;
    n_rows bigint;
    cats text[];
    maxc integer;
    w integer;
BEGIN
    IF spec IS NULL OR btrim(spec) = '' THEN
        RAISE EXCEPTION 'transform must not be empty'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give a comma list such as ''standardize(age), onehot(city)'', or NULL for none.';
    END IF;
    plan := madlib_dl._transform_parse(spec);
    c := madlib_dl._tf_columns(rel, plan, 'source table');
    cols := c.cols;
    EXECUTE format('SELECT count(*) FROM %I.%I', src[1], src[2]) INTO n_rows;
    FOR i IN 1 .. cardinality(cols) LOOP
        w := NULL;
        IF (SELECT t.typcategory FROM pg_type t WHERE t.oid = c.types[i]) = 'A' THEN
            EXECUTE format('SELECT cardinality(s.%1$I) FROM %2$I.%3$I s WHERE s.%1$I IS NOT NULL LIMIT 1',
                           cols[i], src[1], src[2])
               INTO w;
        END IF;
        widths := widths || w;
    END LOOP;
    plan := madlib_dl._transform_resolve(plan, c.types, widths);

    FOR i IN 1 .. cardinality(cols) LOOP
        it := plan->'items'->(i - 1);
        val := CASE WHEN c.types[i] = 'boolean'::regtype
                    THEN format('(s.%I)::pg_catalog.int4::pg_catalog.float8', cols[i])
                    ELSE format('(s.%I)::pg_catalog.float8', cols[i]) END;
        IF it->>'impute' IN ('mean', 'median') THEN
            EXECUTE format('SELECT avg(q.v::pg_catalog.numeric)::pg_catalog.float8 AS mean,'
                           '       percentile_cont(0.5) WITHIN GROUP (ORDER BY q.v) AS median'
                           '  FROM (SELECT madlib_dl._transform_stage_value($1, $2, 0, %s) AS v'
                           '          FROM %I.%I s) q', val, src[1], src[2])
               INTO r USING plan, i;
            IF r.mean IS NULL THEN
                RAISE EXCEPTION 'column "%" has no value to impute from: every row is NULL', cols[i]
                    USING ERRCODE = 'data_exception',
                          HINT = 'Impute a number instead, e.g. impute(0, col), or drop the item.';
            END IF;
            plan := jsonb_set(plan, ARRAY['items', (i - 1)::text, 'impute_value'],
                              to_jsonb(CASE WHEN it->>'impute' = 'mean' THEN r.mean ELSE r.median END));
        END IF;
        IF it->>'op' IN ('standardize', 'minmax') THEN
            EXECUTE format('SELECT avg(q.v::pg_catalog.numeric)::pg_catalog.float8 AS mean,'
                           '       stddev_pop(q.v::pg_catalog.numeric)::pg_catalog.float8 AS std,'
                           '       min(q.v) AS lo, max(q.v) AS hi,'
                           '       count(q.v) AS n'
                           '  FROM (SELECT madlib_dl._transform_stage_value($1, $2, 1, %s) AS v'
                           '          FROM %I.%I s) q', val, src[1], src[2])
               INTO r USING plan, i;
            IF r.n < n_rows THEN
                RAISE EXCEPTION 'column "%" has % NULL values and its transform does not impute them',
                                cols[i], n_rows - r.n
                    USING ERRCODE = 'null_value_not_allowed',
                          HINT = format('Write %s(impute(median, %s)) (or mean, or a number), or filter the rows.',
                                        it->>'op', quote_ident(cols[i]));
            END IF;
            IF it->>'op' = 'standardize' THEN
                plan := jsonb_set(jsonb_set(plan, ARRAY['items', (i - 1)::text, 'mean'], to_jsonb(r.mean)),
                                  ARRAY['items', (i - 1)::text, 'std'], to_jsonb(r.std));
            ELSE
                plan := jsonb_set(jsonb_set(plan, ARRAY['items', (i - 1)::text, 'min'], to_jsonb(r.lo)),
                                  ARRAY['items', (i - 1)::text, 'max'], to_jsonb(r.hi));
            END IF;
        END IF;
        IF it->>'op' IN ('onehot', 'ordinal') THEN
            maxc := (it->>'max_categories')::integer;
            IF it->>'kind' = 'text' THEN
                EXECUTE format('SELECT array_agg(q.v ORDER BY q.v COLLATE "C")'
                               '  FROM (SELECT DISTINCT ((s.%1$I)::pg_catalog.text COLLATE "C") AS v'
                               '          FROM %2$I.%3$I s WHERE s.%1$I IS NOT NULL LIMIT $1) q',
                               cols[i], src[1], src[2])
                   INTO cats USING maxc + 1;
            ELSE
                EXECUTE format('SELECT array_agg((q.v)::pg_catalog.text ORDER BY q.v)'
                               '  FROM (SELECT DISTINCT s.%1$I AS v'
                               '          FROM %2$I.%3$I s WHERE s.%1$I IS NOT NULL LIMIT $1) q',
                               cols[i], src[1], src[2])
                   INTO cats USING maxc + 1;
            END IF;
            cats := coalesce(cats, '{}');
            IF cardinality(cats) > maxc THEN
                RAISE EXCEPTION 'column "%" has more than % categories, the limit of its %', cols[i], maxc,
                                it->>'op'
                    USING ERRCODE = 'program_limit_exceeded',
                          HINT = format('Raise the limit, e.g. onehot(%s, max_categories => %s) (at most 10000), '
                                        'or group the rare values in a view.', quote_ident(cols[i]),
                                        least(10000, maxc * 2));
            END IF;
            plan := jsonb_set(jsonb_set(plan, ARRAY['items', (i - 1)::text, 'categories'], to_jsonb(cats)),
                              ARRAY['items', (i - 1)::text, 'width'],
                              to_jsonb(CASE WHEN it->>'op' = 'onehot' THEN cardinality(cats) + 1 ELSE 1 END));
        END IF;
        plan := jsonb_set(plan, ARRAY['items', (i - 1)::text, 'fitted'], 'true');
    END LOOP;
    plan := madlib_dl._transform_finish(plan);
END
$$;

-- The transform plan stored in the summary stbl (a packed table's or a
-- model's), NULL when it has none (a jsonb transform column holding an
-- object; anything else is not a transform).
CREATE FUNCTION madlib_dl._tf_of_summary(stbl text[])
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    srel regclass := madlib_dl._table_oid(stbl);
    plan jsonb;
BEGIN
    IF srel IS NULL OR NOT EXISTS (SELECT 1 FROM pg_attribute a
                                    WHERE a.attrelid = srel AND a.attname = 'transform' AND a.attnum > 0
                                      AND NOT a.attisdropped AND a.atttypid = 'jsonb'::regtype) THEN
        RETURN NULL;
    END IF;
    PERFORM madlib_dl._assert_trusted_table(srel, 'a summary table');
    EXECUTE format('SELECT transform FROM %I.%I LIMIT 1', stbl[1], stbl[2]) INTO plan;
    IF jsonb_typeof(plan) IS DISTINCT FROM 'object' THEN
        RETURN NULL;
    END IF;
    RETURN plan;
END
$$;

-- Add the transform column to the summary stbl, holding plan.
CREATE FUNCTION madlib_dl._tf_store(stbl text[], plan jsonb)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    EXECUTE format('ALTER TABLE %I.%I ADD COLUMN transform jsonb', stbl[1], stbl[2]);
    EXECUTE format('UPDATE %I.%I SET transform = $1', stbl[1], stbl[2]) USING plan;
END
$$;

-- The name of the one input a transform builds: independent_varname as
-- SQL reads an identifier (NULL: 'features').  22023 for a comma list
-- (several inputs are MADlib's independent_varname list, without a
-- transform), or a name the packed table uses already (deps: the
-- dependent variables).
CREATE FUNCTION madlib_dl._tf_input_name(independent_varname text, deps text[])
RETURNS text
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    parts text[];
    name text;
BEGIN
    IF independent_varname IS NULL THEN
        name := 'features';
    ELSE
        BEGIN
            parts := parse_ident(btrim(independent_varname));
        EXCEPTION WHEN OTHERS THEN
            parts := NULL;
        END;
        IF cardinality(parts) IS DISTINCT FROM 1 THEN
            RAISE EXCEPTION 'independent_varname "%" must be one name when a transform is given',
                            independent_varname
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'A transform builds one input: give NULL (it is then named features) or the '
                             'name it gets, e.g. ''x''.';
        END IF;
        name := parts[1];
    END IF;
    IF name = ANY (coalesce(deps, '{}') || ARRAY['buffer_id', '__dist_key__'])
       OR name || '_shape' = ANY (coalesce(deps, '{}')) THEN
        RAISE EXCEPTION 'independent_varname "%" is a name the packed table uses already', name
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the input another name, e.g. ''features''.';
    END IF;
    RETURN name;
END
$$;

-- Pack the raw table src (rel) for evaluate with the transform of the
-- model whose summary is msumm: a temporary training summary made from
-- the model summary (its variables, class values, normalizing_const,
-- num_classes and the plan) and validation_preprocessor_dl, which
-- applies the plan to the raw columns.  Returns the temporary packed
-- table, {pg_temp schema, name}; its summary is <name>_summary.
CREATE FUNCTION madlib_dl._tf_pack_for_evaluate(src text[], msumm text[], plan jsonb)
RETURNS text[]
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    srel regclass := madlib_dl._table_oid(msumm);
    deps text[];
    indeps text[];
    cv text := '';
    train text := madlib_dl._temp_table_name('madlib_dl_eval_train');
    packed text := madlib_dl._temp_table_name('madlib_dl_eval_packed');
    tschema text;
BEGIN
    PERFORM madlib_dl._assert_columns(srel,
        ARRAY['dependent_varname', 'independent_varname', 'dependent_vartype', 'normalizing_const',
              'num_classes'],
        ARRAY['text[]', 'text[]', 'text[]', 'real', 'integer[]'],
        'the summary table fit wrote next to the model table');
    EXECUTE format('SELECT dependent_varname, independent_varname FROM %I.%I', msumm[1], msumm[2])
       INTO deps, indeps;
    IF cardinality(indeps) IS DISTINCT FROM 1 OR coalesce(cardinality(deps), 0) < 1 THEN
        RAISE EXCEPTION 'the model summary names % inputs; a transform builds one', coalesce(cardinality(indeps), 0)
            USING ERRCODE = 'data_exception',
                  HINT = 'Give the model table and summary table that fit wrote together.';
    END IF;
    SELECT string_agg(format(', %I', d || '_class_values'), '' ORDER BY o) INTO cv
      FROM unnest(deps) WITH ORDINALITY AS u(d, o)
     WHERE madlib_dl._ep_has_column(srel, d || '_class_values');
    EXECUTE format('CREATE TEMPORARY TABLE %I ON COMMIT DROP AS'
                   ' SELECT ARRAY[0, madlib_dl._transform_width($1)] AS %I%s', train, indeps[1] || '_shape',
                   madlib_dl._distributed_clause())
    USING plan;
    EXECUTE format('CREATE TEMPORARY TABLE %I ON COMMIT DROP AS'
                   ' SELECT dependent_varname, independent_varname, dependent_vartype, normalizing_const,'
                   '        num_classes, 1 AS num_segments%s, $1 AS transform FROM %I.%I%s',
                   train || '_summary', coalesce(cv, ''), msumm[1], msumm[2], madlib_dl._distributed_clause())
    USING plan;
    tschema := (SELECT nspname FROM pg_namespace WHERE oid = pg_my_temp_schema());
    PERFORM madlib_dl._validation_preprocessor_dl(src, ARRAY[tschema, packed],
        (SELECT string_agg(quote_ident(d), ', ' ORDER BY o) FROM unnest(deps) WITH ORDINALITY AS u(d, o)),
        NULL, ARRAY[tschema, train], NULL, NULL);
    EXECUTE format('DROP TABLE pg_temp.%I, pg_temp.%I', train, train || '_summary');
    RETURN ARRAY[tschema, packed];
END
$$;

-- Drop the temporary packed table tbl of _tf_pack_for_evaluate and its
-- summary, when made is true (evaluate packed a raw table).
CREATE FUNCTION madlib_dl._tf_drop_packed(tbl text[], made boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF made AND tbl[1] = (SELECT nspname FROM pg_namespace WHERE oid = pg_my_temp_schema()) THEN
        EXECUTE format('DROP TABLE pg_temp.%I, pg_temp.%I', tbl[2], tbl[2] || '_summary');
    END IF;
END
$$;
