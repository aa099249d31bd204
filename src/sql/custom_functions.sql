-- custom_functions.sql: MADlib's custom function object tables
-- (madlib_keras_custom_function.sql_in), as far as they apply here.
--
--   load_top_k_accuracy_function(object_table, k)
--       adds the row top_<k>_accuracy to the object table (made if need
--       be), as MADlib does.  The metric itself is native: the engine
--       reads metrics=['top_<k>_accuracy'] as top-k categorical accuracy
--       with that k, so the row holds a marker, not a pickled function.
--   load_custom_function, delete_custom_function
--       carry pickled Python (dill) objects, which madlib_dl cannot run:
--       refused with 0A000 and a hint naming the built-in losses and
--       metrics.
--
-- fit, load_model_selection_table and generate_model_configs take
-- object_table as MADlib does; _object_table_check (called by their
-- public wrappers, in the caller's search_path) checks that it is such a
-- table and holds every top_<k>_accuracy the compile_params use.  The
-- object table is found through the search_path like every other table
-- (MADlib always puts it in its own schema).  docs/fit.md describes it.

-- ---------------------------------------------------------------------
-- Helpers (internal; search_path pinned; tables come as {schema, table})
-- ---------------------------------------------------------------------

-- The refusal of MADlib's functions that take pickled Python objects.
CREATE FUNCTION madlib_dl._custom_function_refused(fn text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION '% is not supported: madlib_dl cannot run custom Python (pickled) loss or metric functions', fn
        USING ERRCODE = 'feature_not_supported',
              HINT = 'Use a built-in loss (categorical_crossentropy, sparse_categorical_crossentropy, '
                     'binary_crossentropy, mean_squared_error, mean_absolute_error) and metric '
                     '(accuracy, categorical_accuracy, sparse_categorical_accuracy, binary_accuracy, '
                     'top_k_categorical_accuracy, mae, mse, or top_<k>_accuracy after '
                     'load_top_k_accuracy_function).';
END
$$;

-- ---------------------------------------------------------------------
-- The driver
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl._load_top_k_accuracy_function(obj text[], k integer)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass;
    fn text;
    there boolean;
BEGIN
    PERFORM madlib_dl._assert_not_null(k, 'k');
    IF k < 1 THEN
        RAISE EXCEPTION 'k must be a positive integer, got %', k
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give how many of the most probable classes count as a hit, e.g. 3 for top_3_accuracy.';
    END IF;
    fn := format('top_%s_accuracy', k);
    IF madlib_dl._table_oid(obj) IS NULL THEN
        PERFORM madlib_dl._assert_schema_exists(obj);
        EXECUTE format('CREATE TABLE %s (id serial, name text PRIMARY KEY, description text,'
                       ' object bytea NOT NULL)%s', madlib_dl._table_sql(obj),
                       madlib_dl._distributed_clause('name'));
    END IF;
    rel := madlib_dl._assert_table_exists(obj, 'object_table');
    PERFORM madlib_dl._assert_columns(rel, ARRAY['name', 'description', 'object'],
        ARRAY['text', 'text', 'bytea'], madlib_dl._object_table_what());
    PERFORM madlib_dl._assert_writable_table(rel, madlib_dl._object_table_what());
    -- no load may slip in between the check and the insert
    EXECUTE format('LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE', madlib_dl._table_sql(obj));
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s WHERE name = $1)', madlib_dl._table_sql(obj))
       INTO there USING fn;
    IF there THEN
        RAISE EXCEPTION 'function "%" already exists in object_table "%"', fn, madlib_dl._table_label(obj)
            USING ERRCODE = 'duplicate_object',
                  HINT = format('It can be used as it is: metrics=[''%s''] with object_table => %L.',
                                fn, madlib_dl._table_given(obj));
    END IF;
    -- the object column holds a marker: the metric is native, not a pickle
    EXECUTE format('INSERT INTO %s (name, description, object) VALUES ($1, $2, $3)',
                   madlib_dl._table_sql(obj))
    USING fn, format('returns top_%s_accuracy', k),
          convert_to(format('madlib_dl native metric %s', fn), 'UTF8');
END
$$;

-- ---------------------------------------------------------------------
-- Public API (MADlib signatures)
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl.load_top_k_accuracy_function(object_table varchar, k integer)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl._load_top_k_accuracy_function(madlib_dl._resolve_table($1, 'object_table'), $2) $$;

CREATE FUNCTION madlib_dl.load_custom_function(object_table varchar, object bytea,
                                               name varchar, description varchar DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl._custom_function_refused('load_custom_function') $$;

CREATE FUNCTION madlib_dl.delete_custom_function(object_table varchar, id integer)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl._custom_function_refused('delete_custom_function') $$;

CREATE FUNCTION madlib_dl.delete_custom_function(object_table varchar, name varchar)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl._custom_function_refused('delete_custom_function') $$;

-- Help text, as MADlib's fn() and fn('usage').
CREATE FUNCTION madlib_dl.load_top_k_accuracy_function(message varchar)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $body$
SELECT CASE WHEN lower(coalesce(message, '')) IN ('usage', 'help', '?') THEN
$usage$load_top_k_accuracy_function: add the metric top_<k>_accuracy to an object
table, as MADlib does, for metrics=['top_<k>_accuracy'] in compile_params.

    SELECT madlib_dl.load_top_k_accuracy_function(
        object_table  VARCHAR,  -- table to add to; made when it does not exist:
                                -- (id serial, name text PRIMARY KEY,
                                --  description text, object bytea NOT NULL)
        k             INTEGER   -- 1 or more: how many of the most probable
                                -- classes count as a hit
    );

The metric is computed natively (top-k categorical accuracy, ties at the
k-th place count as hits): the row's object holds a marker, not a pickled
function.  Pass object_table to fit, load_model_selection_table or
generate_model_configs as in MADlib.  load_custom_function and
delete_custom_function are not supported (custom Python code).$usage$
ELSE
$summary$load_top_k_accuracy_function: add top_<k>_accuracy to an object table.

    SELECT madlib_dl.load_top_k_accuracy_function('custom_function_table', 3);

For all parameters: SELECT madlib_dl.load_top_k_accuracy_function('usage');$summary$
END
$body$;

CREATE FUNCTION madlib_dl.load_top_k_accuracy_function()
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl.load_top_k_accuracy_function(''::varchar) $$;
