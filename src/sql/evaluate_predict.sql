-- evaluate_predict.sql: use a trained model, as in MADlib
-- (madlib_keras_evaluate, madlib_keras_predict, madlib_keras_predict_byom).
--
--   evaluate      loss and metric of a model on a preprocessed (packed)
--                 table, with the loss and metric of its compile_params
--   predict       class probabilities for raw rows (one example per row),
--                 normalized with the training normalizing_const
--   predict_byom  the same for weights stored in an architecture table
--
-- The numbers come from two C functions that read no table themselves,
-- so that they run on Greenplum's segments (where a function may not read
-- a user table) as well as here: the aggregate _evaluate_segment over a
-- packed table's buffers (src/pg/api/evaluate.c; its SQL objects are in
-- step.sql, next to the step aggregates whose result type it shares),
-- and _predict_batch, which predicts the rows of a query a batch at a
-- time (src/pg/api/predict.c).  The model goes to both as query
-- parameters.  The PL/pgSQL drivers here check the arguments and tables
-- first and write the output table in one statement, so it appears
-- complete or not at all.  User-facing page: docs/evaluate-predict.md.

-- ---------------------------------------------------------------------
-- C functions
-- ---------------------------------------------------------------------

-- The model outputs for the rows of the query it is called in, in its
-- SELECT list: each call brings one row (id_value, and the array
-- features divided by normalizing_const); rows are kept and predicted
-- batch_size at a time, when the batch is full or a row with flush = true
-- comes (end the query's rows with one: _ep_write_predictions).  A batch
-- gives each of its rows' outputs as rows (id, class_index 1..K, prob,
-- rank 1..K by prob, ties by class_index), ranks over max_rank left out
-- (NULL: none).  feature_col names the features in messages.
CREATE FUNCTION madlib_dl._predict_batch(model_arch json, model_weights bytea,
    normalizing_const float8, batch_size integer, feature_col text, max_rank integer,
    id_value text, features float8[], flush boolean,
    OUT id text, OUT class_index integer, OUT prob float8, OUT rank integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'madlib_dl__predict_batch'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 3;

-- predict's row mode (_ep_write_predictions), a row at a time: the output
-- layer of one row (a model of one input and one output; features a
-- real[] or float8[] of its input shape, divided by normalizing_const;
-- errors name the row by id_value and the features by feature_col), and
-- a row's classes ranked as _predict_batch returns them.  The model
-- arguments must be the same in every row.  The madlib_dl batched predict
-- node (src/pg/api/serving_batch.c) runs the calls of _predict_probs many
-- rows per forward pass, in every worker of a parallel query; with
-- oneDNN's kernels a row's numbers do not depend on the rows it is
-- batched with (docs/evaluate-predict.md).
CREATE FUNCTION madlib_dl._predict_probs(model_arch json, model_weights bytea,
    normalizing_const float8, feature_col text, id_value text, features anyarray)
RETURNS real[]
AS 'MODULE_PATHNAME', 'madlib_dl__predict_probs'
LANGUAGE C STABLE PARALLEL SAFE COST 10000;

CREATE FUNCTION madlib_dl._predict_ranked(id_value text, probs real[], max_rank integer,
    OUT id text, OUT class_index integer, OUT prob float8, OUT rank integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'madlib_dl__predict_ranked'
LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 3;

-- The same for any model (several inputs or outputs): features is a row
-- of one float8[] per model input, in its order (feature_cols names
-- them); each row's outputs come output after output, output 1-based,
-- each one's classes ranked on their own.
CREATE FUNCTION madlib_dl._predict_batch_io(model_arch json, model_weights bytea,
    normalizing_const float8, batch_size integer, feature_cols text[], max_rank integer,
    id_value text, features record, flush boolean,
    OUT id text, OUT output integer, OUT class_index integer, OUT prob float8, OUT rank integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'madlib_dl__predict_batch_io'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 3;

-- ---------------------------------------------------------------------
-- Internal helpers (names start with _ep_)
-- ---------------------------------------------------------------------

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
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT madlib_dl._assert_relation(tbl, param, 'rpvmf', 'Give the name of a table or view.') $$;

-- Refuse use_gpus => true: madlib_dl has no GPU backend (docs/gpu.md);
-- the same message as fit and fit_multiple.
CREATE FUNCTION madlib_dl._ep_assert_no_gpus(use_gpus boolean)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM madlib_dl._assert_no_gpus(use_gpus,
        'Call with use_gpus => false; evaluate and predict run on the CPU cores of the server.');
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

-- What pred_type kind (_ep_parse_pred_type's kind, with k and threshold)
-- makes of the query of _ep_write_predictions and _ep_write_predictions_io:
-- cols, the output columns after prob (', (q.r).rank', or '' for response);
-- filter, the WHERE clause on the predictions (threshold: prob > it, else
-- ''); max_rank, the ranks kept (NULL: all).  22023 for another kind.
CREATE FUNCTION madlib_dl._ep_pred_kind_sql(kind text, k integer, threshold float8,
    OUT cols text, OUT filter text, OUT max_rank integer)
RETURNS record
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    cols := ', (q.r).rank';
    filter := '';
    CASE kind
        WHEN 'prob' THEN NULL;
        WHEN 'response' THEN cols := ''; max_rank := 1;
        WHEN 'top_k' THEN max_rank := k;
        WHEN 'threshold' THEN filter := format(' WHERE (q.r).prob > %L::float8', threshold);
        ELSE
            RAISE EXCEPTION 'pred_type kind % is not one of prob, response, top_k, threshold',
                            coalesce(quote_literal(kind), 'NULL')
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Call predict or predict_byom, which choose the kind from pred_type.';
    END CASE;
END
$$;

-- The number of values of each output of the model (the class count of
-- a classifier), in the model's order.
CREATE FUNCTION madlib_dl._ep_output_sizes(model_arch json)
RETURNS integer[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    sizes integer[] := '{}';
    shape integer[];
BEGIN
    FOR shape IN SELECT a.shape FROM madlib_dl._arch_io(model_arch) a
                  WHERE a.io = 'output' ORDER BY a."position" LOOP
        sizes := sizes || madlib_dl._shape_size(shape)::integer;
    END LOOP;
    RETURN sizes;
END
$$;

-- predict_byom's class_values for a model of one output, as one list:
-- given as MADlib 1.x takes them (a one-dimensional array) or as MADlib
-- 2.x documents them (a two-dimensional array, one row per model
-- output: here one row).  22023 unless it holds one class value per
-- model output (n_out), each error saying what was wrong.  Models of
-- several outputs: _ep_byom_class_values_io.
CREATE FUNCTION madlib_dl._ep_byom_class_values(class_values text[], n_out integer)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nd integer := coalesce(array_ndims(class_values), 0);
    hint text := format('Give one class value per model output, in output order: '
                        'ARRAY[''a'', ''b'', ...] or ARRAY[ARRAY[''a'', ''b'', ...]] (%s values), '
                        'or NULL for 0..%s.', n_out, n_out - 1);
BEGIN
    IF nd = 0 THEN
        RAISE EXCEPTION 'class_values is empty but the model has % outputs', n_out
            USING ERRCODE = 'invalid_parameter_value', HINT = hint;
    END IF;
    IF nd > 2 THEN
        RAISE EXCEPTION 'class_values has % dimensions: give a list, or a list of lists with one list per model output', nd
            USING ERRCODE = 'invalid_parameter_value', HINT = hint;
    END IF;
    IF nd = 2 THEN
        IF array_length(class_values, 1) > 1 THEN
            RAISE EXCEPTION 'class_values has % lists of class values, one per output, but the model has one output',
                            array_length(class_values, 1)
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = hint || ' A model of several outputs takes one list per output, with dependent_count.';
        END IF;
        class_values := ARRAY(SELECT unnest(class_values));   -- the one row, in order
    END IF;
    IF cardinality(class_values) <> n_out THEN
        RAISE EXCEPTION 'class_values has % values but the model has % outputs',
                        cardinality(class_values), n_out
            USING ERRCODE = 'invalid_parameter_value', HINT = hint;
    END IF;
    RETURN class_values;
END
$$;

-- predict_byom's class_values for a model of several outputs (sizes:
-- each one's class count) as a jsonb array, one element per output:
-- NULL gives every output 0..K-1; else a two-dimensional array, one row
-- per output (MADlib 2.x's list of lists), whose first K values are that
-- output's classes and the rest (a shorter output's padding) NULL.
-- 22023 naming the row otherwise.
CREATE FUNCTION madlib_dl._ep_byom_class_values_io(class_values text[], sizes integer[])
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    out jsonb := '[]';
    vals text[];
BEGIN
    IF class_values IS NULL THEN
        RETURN to_jsonb(array_fill(NULL::text, ARRAY[cardinality(sizes)]));
    END IF;
    IF coalesce(array_ndims(class_values), 0) <> 2 OR array_length(class_values, 1) <> cardinality(sizes) THEN
        RAISE EXCEPTION 'class_values must hold one list of class values per model output: % outputs',
                        cardinality(sizes)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give ARRAY[ARRAY[''a'', ''b''], ARRAY[''c'', NULL]]: one row per output, padded with NULL, or NULL for 0..K-1.';
    END IF;
    FOR i IN 1 .. cardinality(sizes) LOOP
        vals := ARRAY(SELECT unnest(class_values[i:i][:]));
        IF cardinality(vals) < sizes[i]
           OR EXISTS (SELECT 1 FROM unnest(vals[sizes[i] + 1:]) v WHERE v IS NOT NULL) THEN
            RAISE EXCEPTION 'class_values row % does not give exactly the % classes of output %', i, sizes[i], i
                USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give each output''s class values in its row, in output order, padded with NULL.';
        END IF;
        out := out || jsonb_build_array(to_jsonb(vals[1:sizes[i]]));
    END LOOP;
    RETURN out;
END
$$;

-- Raise P0002: model mst_key is not in tbl, a table of fit_multiple's
-- (what: 'model table' or 'model info table').
CREATE FUNCTION madlib_dl._ep_raise_mst_key_missing(mst_key integer, tbl text[], what text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'mst_key % not found in % "%"', mst_key, what, madlib_dl._table_label(tbl)
        USING ERRCODE = 'no_data_found',
              HINT = format('SELECT mst_key FROM %s lists the models it holds.', madlib_dl._table_sql(tbl));
END
$$;

-- Everything evaluate and predict need from a trained model table (fit's
-- <model> + <model>_summary, or fit_multiple's <model> + <model>_info +
-- <model>_summary, selected by mst_key).  Enforces the mst_key rules.
CREATE FUNCTION madlib_dl._ep_model(mtbl text[], mst_key integer,
    OUT model_arch json, OUT model_weights bytea, OUT compile_params text,
    OUT metrics_type text[], OUT loss_type text,
    OUT dependent_varname text, OUT independent_varname text,
    OUT normalizing_const float8, OUT class_values text[],
    OUT dependent_varnames text[], OUT independent_varnames text[], OUT class_values_list jsonb)
RETURNS record
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    mrel regclass := madlib_dl._assert_table_exists(mtbl, 'model_table');
    stbl text[] := madlib_dl._table_with_suffix(mtbl, '_summary');
    itbl text[] := madlib_dl._table_with_suffix(mtbl, '_info');
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
    PERFORM madlib_dl._assert_known_format(srel, format('model table "%s"', madlib_dl._table_label(mtbl)));
    PERFORM madlib_dl._assert_columns(srel,
        ARRAY['dependent_varname', 'independent_varname', 'normalizing_const'],
        ARRAY['text[]', 'text[]', 'real'],
        'the summary table fit wrote next to the model table');

    IF multi THEN
        EXECUTE format('SELECT count(*) FROM %s WHERE mst_key = $1', madlib_dl._table_sql(mtbl))
           INTO n USING mst_key;
        IF n = 0 THEN
            PERFORM madlib_dl._ep_raise_mst_key_missing(mst_key, mtbl, 'model table');
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
            PERFORM madlib_dl._ep_raise_mst_key_missing(mst_key, itbl, 'model info table');
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

    EXECUTE format('SELECT dependent_varname[1], independent_varname[1], normalizing_const,'
                   '       dependent_varname, independent_varname'
                   '  FROM %s', madlib_dl._table_sql(stbl))
       INTO dependent_varname, independent_varname, normalizing_const, dependent_varnames,
            independent_varnames;
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
    -- every output's class values (NULL: none), for a model of several
    class_values_list := '[]';
    FOR i IN 1 .. coalesce(cardinality(dependent_varnames), 0) LOOP
        cv_col := dependent_varnames[i] || '_class_values';
        IF madlib_dl._ep_has_column(srel, cv_col) THEN
            EXECUTE format('SELECT $1 || jsonb_build_array(to_jsonb(%I::text[])) FROM %s', cv_col,
                           madlib_dl._table_sql(stbl))
               INTO class_values_list USING class_values_list;
        ELSE
            class_values_list := class_values_list || 'null'::jsonb;
        END IF;
    END LOOP;
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

-- The array columns independent_varname names in rel, checked as
-- _ep_assert_feature_column does: one name, or a comma list of them
-- (MADlib's multi-io predict: one per model input), each as the column
-- is named (a double-quoted name without its quotes).
CREATE FUNCTION madlib_dl._ep_feature_columns(rel regclass, independent_varname text)
RETURNS text[]
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cols text[];
    c text;
BEGIN
    IF independent_varname IS NULL OR position(',' IN independent_varname) = 0 THEN
        PERFORM madlib_dl._ep_assert_feature_column(rel, independent_varname, 'independent_varname');
        RETURN ARRAY[independent_varname];
    END IF;
    cols := ARRAY(SELECT CASE WHEN p ~ '^".*"$' THEN replace(substr(p, 2, length(p) - 2), '""', '"') ELSE p END
                    FROM unnest(madlib_dl._pp_split_vars(independent_varname, 'independent_varname')) p);
    FOREACH c IN ARRAY cols LOOP
        PERFORM madlib_dl._ep_assert_feature_column(rel, c, 'independent_varname');
    END LOOP;
    RETURN cols;
END
$$;

-- 22023 unless cols (the feature columns of predict) has one column per
-- input of model_arch.
CREATE FUNCTION madlib_dl._ep_check_inputs(cols text[], model_arch json)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n_in integer := (SELECT count(*) FROM madlib_dl._arch_io(model_arch) a WHERE a.io = 'input');
BEGIN
    IF cardinality(cols) <> n_in THEN
        RAISE EXCEPTION 'independent_varname names % columns, but the model has % inputs', cardinality(cols), n_in
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give one array column per model input, in the order of the model''s inputs, '
                         'e.g. ''a, b'' (madlib_dl._arch_io lists them).';
    END IF;
END
$$;

-- The type of predict's output id column for column id_col of rel: its
-- type as format_type() writes it when that is a built-in type of
-- pg_catalog, else text (no type of the caller's input travels into the
-- output: docs/security.md); 42703
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
    PERFORM madlib_dl._assert_trusted_table(rel, 'a table to predict from');
    SELECT CASE WHEN madlib_dl._builtin_type_of(a.atttypid) = 'text' AND a.atttypid <> 'text'::regtype
                THEN 'text' ELSE format_type(a.atttypid, a.atttypmod) END INTO id_type
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

-- The rows per forward pass of predict: batch_size (NULL: 1024), at
-- most the rows rel has (at least 1), read without reading a column;
-- 22023 outside 1..65536.  _predict_batch takes fewer when that many
-- would be over madlib_dl.max_model_memory.
CREATE FUNCTION madlib_dl._ep_batch_size(rel regclass, batch_size integer)
RETURNS integer
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    want integer := coalesce(batch_size, 1024);
    n bigint;
BEGIN
    PERFORM madlib_dl._assert_trusted_table(rel);
    IF want < 1 OR want > 65536 THEN
        RAISE EXCEPTION 'batch_size % is out of range', want
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the rows per forward pass, 1 to 65536, or NULL for 1024 (fewer are run '
                         'when that many would be over madlib_dl.max_model_memory).';
    END IF;
    EXECUTE format('SELECT count(*) FROM (SELECT FROM %s LIMIT $1) s', rel) INTO n USING want;
    RETURN greatest(1, least(want::bigint, n))::integer;
END
$$;

-- Write the predictions for rel into otbl.  The id column keeps its
-- name and type; class_value i is class_values[i] (NULL when the model
-- has more outputs than class values, as for padded classes).  The rows
-- of rel, then one flush row per segment (Greenplum) or one (here), go
-- through _predict_batch, which predicts them where they are read,
-- batch_size rows per forward pass (never more than the table's rows,
-- and fewer when the model's activations for that many would be over
-- madlib_dl.max_model_memory); the output keeps their order, each row's
-- classes by rank.  x_expr: the expression of a row's features over t
-- (a transform: _tf_expr over $9, which is tf), else t.<indep_col>.
-- batch_size NULL on PostgreSQL is row mode: _predict_probs per row
-- (which the batched predict node runs many rows per forward pass) and
-- _predict_ranked, without a flush row, so that parallel query runs it in
-- every worker (all cores); a row's numbers are the same with any number
-- of workers.
CREATE FUNCTION madlib_dl._ep_write_predictions(rel regclass, id_col text, indep_col text,
    otbl text[], model_arch json, model_weights bytea, normalizing_const float8,
    class_name text, class_values text[], kind text, k integer, threshold float8,
    batch_size integer, x_expr text DEFAULT NULL, tf jsonb DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
    id_type text := madlib_dl._ep_id_type(rel, id_col);
    cols text;
    filter text;
    max_rank integer;
    rowmode boolean := batch_size IS NULL AND NOT madlib_dl._is_greenplum();
    batch integer := CASE WHEN rowmode THEN 1 ELSE madlib_dl._ep_batch_size(rel, batch_size) END;
    feat text := format('(t.%I)::pg_catalog.float8[]', indep_col);
BEGIN
    -- a real[] or float8[] column goes to row mode as it is stored
    IF (SELECT t.typelem FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
         WHERE a.attrelid = rel AND a.attname = indep_col AND NOT a.attisdropped)
       IN ('pg_catalog.float4'::pg_catalog.regtype, 'pg_catalog.float8'::pg_catalog.regtype) THEN
        feat := format('t.%I', indep_col);
    END IF;
    IF x_expr IS NOT NULL THEN          -- a raw table: the model's transform ($9, tf)
        feat := x_expr;
    END IF;
    SELECT p.cols, p.filter, p.max_rank INTO cols, filter, max_rank
      FROM madlib_dl._ep_pred_kind_sql(kind, k, threshold) p;

    IF rowmode THEN
        EXECUTE format(
            'CREATE TABLE %s AS'
            ' SELECT (q.r).id::%s AS %I, $1::text AS class_name,'
            '        ($2::text[])[(q.r).class_index] AS class_value, (q.r).prob%s'
            '   FROM (SELECT madlib_dl._predict_ranked((t.%I)::pg_catalog.text,'
            '                madlib_dl._predict_probs($3, $4, $5, $6, (t.%I)::pg_catalog.text, %s), $7) AS r'
            '           FROM %s t) q%s%s',
            madlib_dl._table_sql(otbl), id_type, id_col, cols, id_col, id_col, feat, rel, filter,
            madlib_dl._distributed_clause())
        USING class_name, class_values, model_arch, model_weights, normalizing_const, indep_col, max_rank,
              NULL::integer, tf;
        RETURN;
    END IF;
    EXECUTE format(
        'CREATE TABLE %s AS'
        ' SELECT (q.r).id::%s AS %I, $1::text AS class_name,'
        '        ($2::text[])[(q.r).class_index] AS class_value, (q.r).prob%s'
        '   FROM (SELECT madlib_dl._predict_batch($3, $4, $5, $8, $6, $7, s.i, s.x, s.flush) AS r'
        '           FROM (SELECT (t.%I)::pg_catalog.text AS i, %s AS x,'
        '                        false AS flush'
        '                   FROM %s t'
        '                 UNION ALL'
        '                 SELECT NULL, NULL, true%s) s) q%s%s',
        madlib_dl._table_sql(otbl), id_type, id_col, cols, id_col,
        coalesce(x_expr || '::pg_catalog.float8[]', format('(t.%I)::pg_catalog.float8[]', indep_col)), rel,
        CASE WHEN madlib_dl._is_greenplum() THEN ' FROM gp_dist_random(''gp_id'')' ELSE '' END,
        filter, madlib_dl._distributed_clause())
    USING class_name, class_values, model_arch, model_weights, normalizing_const, indep_col, max_rank,
          batch, tf;
END
$$;

-- _ep_write_predictions for any model (several inputs or outputs):
-- indep_cols one array column per model input; class_names (the
-- dependent variables) and class_values (a jsonb array: each output's
-- class values as text, NULL for 0..K-1) one per output.  The output
-- table has predict's columns; each row's outputs come output after
-- output (class_name tells them apart), each one's classes ranked on
-- their own (MADlib ranks per id and class_name).
CREATE FUNCTION madlib_dl._ep_write_predictions_io(rel regclass, id_col text, indep_cols text[],
    otbl text[], model_arch json, model_weights bytea, normalizing_const float8,
    class_names text[], class_values jsonb, kind text, k integer, threshold float8,
    batch_size integer, x_expr text DEFAULT NULL, tf jsonb DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    id_type text := madlib_dl._ep_id_type(rel, id_col);
    cols text;
    filter text;
    max_rank integer;
    feats text;
    cv jsonb := '[]';
    vals jsonb;
    batch integer := madlib_dl._ep_batch_size(rel, batch_size);
BEGIN
    SELECT p.cols, p.filter, p.max_rank INTO cols, filter, max_rank
      FROM madlib_dl._ep_pred_kind_sql(kind, k, threshold) p;
    -- an output without class values (one-hot or numeric training data): 0..K-1
    FOR i IN 1 .. cardinality(class_names) LOOP
        IF coalesce(class_values->(i - 1), 'null') = 'null' THEN
            SELECT jsonb_agg(g::text ORDER BY g) INTO vals
              FROM generate_series(0, (madlib_dl._ep_output_sizes(model_arch))[i] - 1) g;
        ELSE
            vals := class_values->(i - 1);
        END IF;
        cv := cv || jsonb_build_array(vals);
    END LOOP;
    SELECT string_agg(format('(t.%I)::pg_catalog.float8[]', c), ', ' ORDER BY o) INTO feats
      FROM unnest(indep_cols) WITH ORDINALITY AS u(c, o);
    feats := coalesce(x_expr || '::pg_catalog.float8[]', feats);   -- a transform ($9, tf)

    EXECUTE format(
        'CREATE TABLE %s AS'
        ' SELECT (q.r).id::%s AS %I, ($1::text[])[(q.r).output] AS class_name,'
        '        $2::jsonb -> ((q.r).output - 1) ->> ((q.r).class_index - 1) AS class_value, (q.r).prob%s'
        '   FROM (SELECT madlib_dl._predict_batch_io($3, $4, $5, $8, $6, $7, s.i, s.x, s.flush) AS r'
        '           FROM (SELECT (t.%I)::pg_catalog.text AS i, ROW(%s) AS x, false AS flush'
        '                   FROM %s t'
        '                 UNION ALL'
        '                 SELECT NULL, NULL, true%s) s) q%s%s',
        madlib_dl._table_sql(otbl), id_type, id_col, cols, id_col, feats, rel,
        CASE WHEN madlib_dl._is_greenplum() THEN ' FROM gp_dist_random(''gp_id'')' ELSE '' END,
        filter, madlib_dl._distributed_clause())
    USING class_names, cv, model_arch, model_weights, normalizing_const, indep_cols, max_rank,
          batch, tf;
END
$$;

-- Several metrics (src/pg/api/metrics_sql.c): the groups of
-- _evaluate_segment return the sums of every metric of compile_params
-- in their state column; _metric_sums adds them (in its ORDER BY),
-- _metrics_values turns them into values, _metrics_names gives the names.
CREATE FUNCTION madlib_dl._metric_sums_add(a bytea, b bytea)
RETURNS bytea
AS 'MODULE_PATHNAME', 'madlib_dl__metric_sums_add'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE madlib_dl._metric_sums(bytea) (
    SFUNC = madlib_dl._metric_sums_add,
    STYPE = bytea,
    PARALLEL = SAFE
);

CREATE FUNCTION madlib_dl._metrics_names(compile_params text)
RETURNS text[]
AS 'MODULE_PATHNAME', 'madlib_dl__metrics_names'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION madlib_dl._metrics_values(compile_params text, sums bytea, n bigint)
RETURNS float8[]
AS 'MODULE_PATHNAME', 'madlib_dl__metrics_values'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- compile_params with its metrics replaced (evaluate's metrics argument).
CREATE FUNCTION madlib_dl._compile_params_with_metrics(compile_params text, metrics text)
RETURNS text
AS 'MODULE_PATHNAME', 'madlib_dl__compile_params_with_metrics'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- {metric name: value} from names and values (NaN as null).
CREATE FUNCTION madlib_dl._metrics_json(names text[], vals float8[])
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_catalog.jsonb_object_agg(u.name, CASE WHEN u.v OPERATOR(pg_catalog.=) 'NaN'::float8
                                                    THEN NULL ELSE pg_catalog.to_jsonb(u.v) END
                                       ORDER BY u.i)
      FROM unnest(names, vals) WITH ORDINALITY AS u(name, v, i)
$$;

-- {loss, metric, value of each metric...}: the means over every example
-- of the packed table test (columns dep_col, indep_col, <dep_col>_shape,
-- <indep_col>_shape, buffer_id, as the preprocessors write them) of the
-- loss and metrics that compile_params name; metric (the first metric's
-- value) NULL when they name none.  The aggregate
-- _evaluate_segment runs on each segment, grouped by __dist_key__ (one
-- group when the table has no such column); the groups' sums are added
-- in key order.  22000 when the table has no example.
CREATE FUNCTION madlib_dl._ep_evaluate(test regclass, dep_col text, indep_col text,
                                       model_arch json, model_weights bytea, compile_params text)
RETURNS float8[]
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    grouped boolean := madlib_dl._ep_has_column(test, '__dist_key__');
    loss_sum float8;
    metric_sum float8;
    sums bytea;
    vals float8[];
    n numeric;
BEGIN
    PERFORM madlib_dl._assert_trusted_table(test);
    EXECUTE format('SELECT sum((g.r).loss_sum ORDER BY g.k), sum((g.r).metric_sum ORDER BY g.k),'
                   '       sum((g.r).n), madlib_dl._metric_sums((g.r).state ORDER BY g.k)'
                   '  FROM (SELECT %s AS k, madlib_dl._evaluate_segment($1, $2, $3, s.buffer_id,'
                   '               s.%I, s.%I, s.%I, s.%I) AS r'
                   '          FROM %s s%s) g',
                   CASE WHEN grouped THEN 's.__dist_key__' ELSE '0' END,
                   dep_col, indep_col, dep_col || '_shape', indep_col || '_shape', test,
                   CASE WHEN grouped THEN ' GROUP BY s.__dist_key__' ELSE '' END)
       INTO loss_sum, metric_sum, n, sums
      USING model_arch, model_weights, compile_params;
    PERFORM madlib_dl._ep_assert_examples(n, test);
    IF sums IS NOT NULL THEN
        vals := madlib_dl._metrics_values(compile_params, sums, n::bigint);
        RETURN ARRAY[loss_sum / n, vals[1]] || vals;
    END IF;
    -- one metric (or none), from the loss pass itself: {loss, metric, metric}
    RETURN ARRAY[loss_sum / n, metric_sum / n, metric_sum / n];
END
$$;

-- _ep_evaluate for any model: one packed variable per model input
-- (indep_cols) and output (dep_cols), through _evaluate_segment_io.
-- Returns {loss, metric, loss of each output..., metric of each
-- output...}: loss the weighted total (Keras' loss), metric the first
-- output's.
CREATE FUNCTION madlib_dl._ep_evaluate_io(test regclass, dep_cols text[], indep_cols text[],
                                          model_arch json, model_weights bytea, compile_params text)
RETURNS float8[]
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    grouped boolean := madlib_dl._ep_has_column(test, '__dist_key__');
    k integer := cardinality(dep_cols);
    vars text;
    r float8[];
    n numeric;
BEGIN
    PERFORM madlib_dl._assert_trusted_table(test);
    SELECT string_agg(format(', s.%I, s.%I', c, c || '_shape'), '' ORDER BY i) INTO vars
      FROM unnest(indep_cols || dep_cols) WITH ORDINALITY AS u(c, i);
    EXECUTE format('SELECT ARRAY[sum((g.r).loss_sum ORDER BY g.k), sum((g.r).metric_sum ORDER BY g.k)]%s%s,'
                   '       sum((g.r).n)'
                   '  FROM (SELECT %s AS k, madlib_dl._evaluate_segment_io($1, $2, $3, s.buffer_id, %s%s) AS r'
                   '          FROM %s s%s) g',
                   (SELECT string_agg(format(' || sum((g.r).output_loss_sums[%s] ORDER BY g.k)', i), '')
                      FROM generate_series(1, k) i),
                   (SELECT string_agg(format(' || sum((g.r).output_metric_sums[%s] ORDER BY g.k)', i), '')
                      FROM generate_series(1, k) i),
                   CASE WHEN grouped THEN 's.__dist_key__' ELSE '0' END, cardinality(indep_cols), vars, test,
                   CASE WHEN grouped THEN ' GROUP BY s.__dist_key__' ELSE '' END)
       INTO r, n
      USING model_arch, model_weights, compile_params;
    PERFORM madlib_dl._ep_assert_examples(n, test);
    RETURN ARRAY(SELECT v / n FROM unnest(r) v);
END
$$;

-- 22000 (data_exception) when the test table holds no example: n, the
-- examples evaluate counted in test, is NULL or 0.
CREATE FUNCTION madlib_dl._ep_assert_examples(n numeric, test regclass)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF coalesce(n, 0) = 0 THEN
        RAISE EXCEPTION 'test table % has no examples', test::text
            USING ERRCODE = 'data_exception',
                  HINT = 'Evaluate on a preprocessed table with at least one row.';
    END IF;
END
$$;

-- Raise 42809: evaluate's test_table ttbl is not a preprocessed (packed)
-- table; detail, the message of the column check that failed.  Called
-- from that check's exception handler.
CREATE FUNCTION madlib_dl._ep_raise_not_packed(ttbl text[], detail text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'test_table "%" is not a preprocessed table', madlib_dl._table_label(ttbl)
        USING ERRCODE = 'wrong_object_type',
              DETAIL = coalesce(detail, ''),
              HINT = 'evaluate takes a table made by training_preprocessor_dl or '
                     'validation_preprocessor_dl; predict takes raw rows.';
END
$$;

-- The packed variables of evaluate's test table ttbl: the
-- dependent_varname and independent_varname its own summary records
-- (validation_preprocessor_dl writes them), else model_deps and
-- model_indeps (the model's).  Refuses the summary of a newer madlib_dl
-- (_assert_known_format).
CREATE FUNCTION madlib_dl._ep_test_vars(ttbl text[], model_deps text[], model_indeps text[],
    OUT deps text[], OUT indeps text[])
RETURNS record
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tsum regclass := madlib_dl._table_oid(madlib_dl._table_with_suffix(ttbl, '_summary'));
BEGIN
    deps := model_deps;
    indeps := model_indeps;
    PERFORM madlib_dl._assert_known_format(tsum, format('test_table "%s"', madlib_dl._table_label(ttbl)));
    IF tsum IS NOT NULL
       AND madlib_dl._ep_has_column(tsum, 'dependent_varname')
       AND madlib_dl._ep_has_column(tsum, 'independent_varname') THEN
        EXECUTE format('SELECT coalesce(dependent_varname, $1), coalesce(independent_varname, $2)'
                       '  FROM %s LIMIT 1', tsum::text)
           INTO deps, indeps USING deps, indeps;
        deps := coalesce(deps, model_deps);
        indeps := coalesce(indeps, model_indeps);
    END IF;
END
$$;

-- ---------------------------------------------------------------------
-- Drivers (internal; search_path pinned; tables come as {schema, table})
-- ---------------------------------------------------------------------

-- evaluate for a model of several inputs or outputs (m: _ep_model): the
-- test table's variables from its own summary, else the model's; the
-- output table has evaluate's columns and, for several outputs, each
-- output's <y>_loss and <y>_metric (y its dependent variable).
CREATE FUNCTION madlib_dl._evaluate_io(model_arch json, model_weights bytea, compile_params text,
                                       metrics_type text[], loss_type text, model_deps text[],
                                       model_indeps text[], trel regclass, ttbl text[], otbl text[])
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    deps text[];
    indeps text[];
    k integer;
    r float8[];
BEGIN
    SELECT v.deps, v.indeps INTO deps, indeps FROM madlib_dl._ep_test_vars(ttbl, model_deps, model_indeps) v;
    BEGIN
        PERFORM madlib_dl._fit_check_packed(ttbl, 'test_table', indeps, deps, model_arch);
    EXCEPTION WHEN undefined_column OR datatype_mismatch THEN
        PERFORM madlib_dl._ep_raise_not_packed(ttbl, SQLERRM);
    END;
    k := cardinality(deps);
    r := madlib_dl._ep_evaluate_io(trel, deps, indeps, model_arch, model_weights, compile_params);
    EXECUTE format('CREATE TABLE %s (loss float8, metric float8, metrics_type text[], loss_type text,'
                   ' metrics jsonb%s)%s',
                   madlib_dl._table_sql(otbl),
                   CASE WHEN k > 1 THEN (SELECT string_agg(format(', %I float8, %I float8', d || '_loss',
                                                                  d || '_metric'), '' ORDER BY i)
                                           FROM unnest(model_deps) WITH ORDINALITY AS u(d, i))
                        ELSE '' END, madlib_dl._distributed_clause());
    EXECUTE format('INSERT INTO %s SELECT $1[1], CASE WHEN $2 IS NOT NULL THEN $1[2] END, $2, $3,'
                   ' CASE WHEN $2 IS NOT NULL THEN madlib_dl._metrics_json($2, ARRAY[$1[2]]) END%s',
                   madlib_dl._table_sql(otbl),
                   CASE WHEN k > 1 THEN (SELECT string_agg(format(', $1[%s], CASE WHEN $2 IS NOT NULL THEN $1[%s] END',
                                                                  2 + i, 2 + k + i), '' ORDER BY i)
                                           FROM generate_series(1, k) i)
                        ELSE '' END)
    USING r, metrics_type, loss_type;
END
$$;

CREATE FUNCTION madlib_dl._evaluate(mtbl text[], ttbl text[], otbl text[],
                                    use_gpus boolean, mst_key integer, metrics text DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m record;
    trel regclass;
    dep text;
    indep text;
    r float8[];
    tf jsonb;                   -- the model's transform (NULL: none)
    raw_rel regclass;           -- the test table as given
    compile text;
    mtypes text[];
BEGIN
    PERFORM madlib_dl._ep_assert_no_gpus(use_gpus);
    PERFORM madlib_dl._assert_output_absent(otbl, 'output_table');
    trel := madlib_dl._ep_assert_readable(ttbl, 'test_table');
    m := madlib_dl._ep_model(mtbl, mst_key);
    tf := madlib_dl._tf_of_summary(madlib_dl._table_with_suffix(mtbl, '_summary'));
    raw_rel := trel;
    IF tf IS NOT NULL AND NOT madlib_dl._ep_has_column(trel, 'buffer_id') THEN
        -- a raw table: packed with the model's transform (transform.sql)
        ttbl := madlib_dl._tf_pack_for_evaluate(ttbl, madlib_dl._table_with_suffix(mtbl, '_summary'), tf);
        trel := madlib_dl._table_oid(ttbl);
    END IF;
    -- evaluate's metrics: the model's, or the list given
    compile := madlib_dl._compile_params_with_metrics(m.compile_params, metrics);
    -- (a model trained with several metrics: all of them; metrics_type has the first)
    mtypes := CASE WHEN metrics IS NULL AND coalesce(cardinality(madlib_dl._metrics_names(compile)), 0) <= 1
                   THEN m.metrics_type ELSE madlib_dl._metrics_names(compile) END;
    IF cardinality(m.dependent_varnames) > 1 OR cardinality(m.independent_varnames) > 1
       OR (SELECT count(*) FROM madlib_dl._arch_io(m.model_arch)) > 2 THEN
        IF cardinality(mtypes) > 1 THEN
            RAISE EXCEPTION 'evaluate of a model of several inputs or outputs reports one metric per output, not %',
                            cardinality(mtypes)
                USING ERRCODE = 'feature_not_supported',
                      HINT = 'Pass metrics => ''[''''accuracy'''']'' (one per-sample metric) for this model.';
        END IF;
        PERFORM madlib_dl._evaluate_io(m.model_arch, m.model_weights, compile, mtypes,
                                       m.loss_type, m.dependent_varnames, m.independent_varnames,
                                       trel, ttbl, otbl);
        PERFORM madlib_dl._tf_drop_packed(ttbl, tf IS NOT NULL AND trel IS DISTINCT FROM raw_rel);
        RETURN;
    END IF;

    -- The packed columns' names: from the test table's own summary when
    -- it has one (validation_preprocessor_dl writes it), else the model's.
    SELECT coalesce(v.deps[1], m.dependent_varname), coalesce(v.indeps[1], m.independent_varname)
      INTO dep, indep
      FROM madlib_dl._ep_test_vars(ttbl, ARRAY[m.dependent_varname], ARRAY[m.independent_varname]) v;
    BEGIN
        PERFORM madlib_dl._assert_columns(trel,
            ARRAY[dep, indep, dep || '_shape', indep || '_shape', 'buffer_id'],
            ARRAY['bytea', 'bytea', 'integer[]', 'integer[]', 'integer'],
            'x');
    EXCEPTION WHEN undefined_column OR datatype_mismatch THEN
        PERFORM madlib_dl._ep_raise_not_packed(ttbl, SQLERRM);
    END;

    r := madlib_dl._ep_evaluate(trel, dep, indep, m.model_arch, m.model_weights, compile);
    PERFORM madlib_dl._tf_drop_packed(ttbl, tf IS NOT NULL AND trel IS DISTINCT FROM raw_rel);

    EXECUTE format('CREATE TABLE %s (loss float8, metric float8, metrics_type text[], loss_type text,'
                   ' metrics jsonb)%s',
                   madlib_dl._table_sql(otbl), madlib_dl._distributed_clause());
    EXECUTE format('INSERT INTO %s VALUES ($1, $2, $3, $4, $5)', madlib_dl._table_sql(otbl))
    USING r[1], r[2], mtypes, m.loss_type,
          CASE WHEN mtypes IS NOT NULL THEN madlib_dl._metrics_json(mtypes, r[3:]) END;
END
$$;

CREATE FUNCTION madlib_dl._predict(mtbl text[], ttbl text[], id_col text, independent_varname text,
                                   otbl text[], kind text, k integer, threshold float8,
                                   use_gpus boolean, mst_key integer, batch_size integer DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m record;
    trel regclass;
    cols text[];
    sizes integer[];
    n_out integer;
    n_cv integer;
    tf jsonb;                   -- the model's transform (NULL: none)
    x_expr text;                -- a raw row's features, by the transform
BEGIN
    PERFORM madlib_dl._ep_assert_no_gpus(use_gpus);
    PERFORM madlib_dl._assert_output_absent(otbl, 'output_table');
    trel := madlib_dl._ep_assert_readable(ttbl, 'test_table');
    PERFORM madlib_dl._ep_id_type(trel, id_col);
    tf := madlib_dl._tf_of_summary(madlib_dl._table_with_suffix(mtbl, '_summary'));
    IF tf IS NOT NULL AND (independent_varname IS NULL
                           OR NOT madlib_dl._ep_has_column(trel, independent_varname)) THEN
        -- a raw table: the model's transform builds each row's features
        x_expr := madlib_dl._tf_expr('$9', (madlib_dl._tf_columns(trel, tf, 'test table')).cols, 't');
    ELSIF independent_varname IS NULL THEN
        RAISE EXCEPTION 'independent_varname must not be NULL: model "%" was not trained with a transform',
                        madlib_dl._table_label(mtbl)
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Give the array column of the test table that holds the features, or train on a table '
                         'packed with training_preprocessor_dl(..., transform => ''...'') to predict from raw columns.';
    END IF;
    IF x_expr IS NULL THEN
        cols := madlib_dl._ep_feature_columns(trel, independent_varname);
    END IF;
    m := madlib_dl._ep_model(mtbl, mst_key);
    IF x_expr IS NOT NULL THEN
        cols := ARRAY[m.independent_varname];
        independent_varname := m.independent_varname;
    END IF;

    sizes := madlib_dl._ep_output_sizes(m.model_arch);
    PERFORM madlib_dl._ep_check_inputs(cols, m.model_arch);
    IF cardinality(cols) > 1 OR cardinality(sizes) > 1 THEN
        -- several inputs or outputs (MADlib's multi-io)
        IF cardinality(m.dependent_varnames) IS DISTINCT FROM cardinality(sizes) THEN
            RAISE EXCEPTION 'the model summary names % dependent variables but the model has % outputs',
                            coalesce(cardinality(m.dependent_varnames), 0), cardinality(sizes)
                USING ERRCODE = 'data_exception',
                      HINT = 'Give the model table and summary table that fit wrote together.';
        END IF;
        PERFORM madlib_dl._ep_check_pred_type(kind, k, threshold, (SELECT max(z) FROM unnest(sizes) z));
        PERFORM madlib_dl._ep_write_predictions_io(trel, id_col, cols, otbl, m.model_arch,
            m.model_weights, m.normalizing_const, m.dependent_varnames, m.class_values_list,
            kind, k, threshold, batch_size, x_expr, tf);
        RETURN;
    END IF;
    n_out := sizes[1];
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
        m.dependent_varname, m.class_values, kind, k, threshold, batch_size, x_expr, tf);
END
$$;

CREATE FUNCTION madlib_dl._predict_byom(atbl text[], model_id integer, ttbl text[], id_col text,
                                        independent_varname text, otbl text[],
                                        kind text, k integer, threshold float8,
                                        use_gpus boolean, class_values text[],
                                        normalizing_const float8, dependent_count integer,
                                        batch_size integer DEFAULT NULL)
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
    cols text[];
    sizes integer[];
    shape integer[];
    nc float8 := coalesce(normalizing_const, 1.0);
BEGIN
    PERFORM madlib_dl._ep_assert_no_gpus(use_gpus);
    PERFORM madlib_dl._assert_not_null(model_id, 'model_id');
    IF dependent_count IS NULL OR dependent_count < 1 OR dependent_count > 16 THEN
        RAISE EXCEPTION 'dependent_count % is out of range', coalesce(dependent_count::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the number of outputs of the model, 1 to 16 (default 1).';
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
    cols := madlib_dl._ep_feature_columns(trel, independent_varname);

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
    -- a variable input shape ([null, null, null, 3]) is bound to the
    -- first row's array dimensions; every row must have them
    -- (_predict_batch refuses another shape, naming the row)
    IF madlib_dl._arch_free_dims(arch) > 0 THEN
        IF cardinality(cols) > 1 THEN
            RAISE EXCEPTION 'model id % has a variable input shape and several inputs', model_id
                USING ERRCODE = 'feature_not_supported',
                      HINT = 'Give a model of several inputs fixed input shapes.';
        END IF;
        EXECUTE format('SELECT ARRAY(SELECT pg_catalog.array_length(t.%I, d)'
                       '               FROM pg_catalog.generate_series(1, pg_catalog.array_ndims(t.%I)) d)'
                       '  FROM %s t WHERE t.%I IS NOT NULL LIMIT 1', cols[1], cols[1], trel, cols[1])
           INTO shape;
        arch := madlib_dl._arch_bind_shape(arch, shape);
    END IF;

    sizes := madlib_dl._ep_output_sizes(arch);
    IF dependent_count <> cardinality(sizes) THEN
        RAISE EXCEPTION 'dependent_count % does not match the % outputs of model id %', dependent_count,
                        cardinality(sizes), model_id
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = format('Pass dependent_count => %s, the number of the model''s outputs.', cardinality(sizes));
    END IF;
    PERFORM madlib_dl._ep_check_inputs(cols, arch);
    IF cardinality(cols) > 1 OR cardinality(sizes) > 1 THEN
        -- several inputs or outputs (MADlib's multi-io): class names
        -- dependent_var_0, dependent_var_1, ... as MADlib names them
        PERFORM madlib_dl._ep_check_pred_type(kind, k, threshold, (SELECT max(z) FROM unnest(sizes) z));
        PERFORM madlib_dl._ep_write_predictions_io(trel, id_col, cols, otbl, arch, weights, nc,
            CASE WHEN cardinality(sizes) = 1 THEN ARRAY['dependent_var']
                 ELSE ARRAY(SELECT 'dependent_var_' || g FROM generate_series(0, cardinality(sizes) - 1) g) END,
            madlib_dl._ep_byom_class_values_io(class_values, sizes), kind, k, threshold, batch_size);
        RETURN;
    END IF;
    n_out := sizes[1];
    PERFORM madlib_dl._ep_check_pred_type(kind, k, threshold, n_out);
    IF class_values IS NULL THEN
        SELECT array_agg(i::text ORDER BY i) INTO class_values
          FROM generate_series(0, n_out - 1) AS i;
    ELSE
        class_values := madlib_dl._ep_byom_class_values(class_values, n_out);
    END IF;

    PERFORM madlib_dl._ep_write_predictions(trel, id_col, independent_varname, otbl,
        arch, weights, nc, 'dependent_var', class_values, kind, k, threshold, batch_size);
END
$$;

-- ---------------------------------------------------------------------
-- Public API (MADlib signatures).  Thin wrappers: they resolve the table
-- names in the caller's search_path, then call the pinned drivers.
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl.madlib_keras_evaluate(model_table varchar, test_table varchar,
                                                output_table varchar,
                                                use_gpus boolean DEFAULT false,
                                                mst_key integer DEFAULT NULL,
                                                metrics varchar DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._evaluate(madlib_dl._resolve_table($1, 'model_table'),
                               madlib_dl._resolve_table($2, 'test_table'),
                               madlib_dl._resolve_table($3, 'output_table'), $4, $5, $6)
$$;

CREATE FUNCTION madlib_dl.evaluate(model_table varchar, test_table varchar,
                                   output_table varchar,
                                   use_gpus boolean DEFAULT false,
                                   mst_key integer DEFAULT NULL,
                                   metrics varchar DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl.madlib_keras_evaluate($1, $2, $3, $4, $5, $6) $$;

-- predict: pred_type as text ('prob', 'response', '3', '0.2'), integer
-- (top k) or double precision (threshold).  Only the text form has a
-- default, so a call without pred_type is not ambiguous.
CREATE FUNCTION madlib_dl.madlib_keras_predict(model_table varchar, test_table varchar,
                                               id_col varchar, independent_varname varchar,
                                               output_table varchar,
                                               pred_type varchar DEFAULT 'prob',
                                               use_gpus boolean DEFAULT false,
                                               mst_key integer DEFAULT NULL,
                                               batch_size integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._predict(madlib_dl._resolve_table($1, 'model_table'),
                              madlib_dl._resolve_table($2, 'test_table'), $3, $4,
                              madlib_dl._resolve_table($5, 'output_table'),
                              p.kind, p.k, p.threshold, $7, $8, $9)
      FROM madlib_dl._ep_parse_pred_type($6) AS p
$$;

CREATE FUNCTION madlib_dl.madlib_keras_predict(model_table varchar, test_table varchar,
                                               id_col varchar, independent_varname varchar,
                                               output_table varchar,
                                               pred_type integer,
                                               use_gpus boolean DEFAULT false,
                                               mst_key integer DEFAULT NULL,
                                               batch_size integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._predict(madlib_dl._resolve_table($1, 'model_table'),
                              madlib_dl._resolve_table($2, 'test_table'), $3, $4,
                              madlib_dl._resolve_table($5, 'output_table'),
                              'top_k', $6, NULL, $7, $8, $9)
$$;

CREATE FUNCTION madlib_dl.madlib_keras_predict(model_table varchar, test_table varchar,
                                               id_col varchar, independent_varname varchar,
                                               output_table varchar,
                                               pred_type double precision,
                                               use_gpus boolean DEFAULT false,
                                               mst_key integer DEFAULT NULL,
                                               batch_size integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._predict(madlib_dl._resolve_table($1, 'model_table'),
                              madlib_dl._resolve_table($2, 'test_table'), $3, $4,
                              madlib_dl._resolve_table($5, 'output_table'),
                              'threshold', NULL, $6, $7, $8, $9)
$$;

CREATE FUNCTION madlib_dl.predict(model_table varchar, test_table varchar,
                                  id_col varchar, independent_varname varchar,
                                  output_table varchar,
                                  pred_type varchar DEFAULT 'prob',
                                  use_gpus boolean DEFAULT false,
                                  mst_key integer DEFAULT NULL,
                                  batch_size integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl.madlib_keras_predict($1, $2, $3, $4, $5, $6::varchar, $7, $8, $9) $$;

CREATE FUNCTION madlib_dl.predict(model_table varchar, test_table varchar,
                                  id_col varchar, independent_varname varchar,
                                  output_table varchar,
                                  pred_type integer,
                                  use_gpus boolean DEFAULT false,
                                  mst_key integer DEFAULT NULL,
                                  batch_size integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl.madlib_keras_predict($1, $2, $3, $4, $5, $6::integer, $7, $8, $9) $$;

CREATE FUNCTION madlib_dl.predict(model_table varchar, test_table varchar,
                                  id_col varchar, independent_varname varchar,
                                  output_table varchar,
                                  pred_type double precision,
                                  use_gpus boolean DEFAULT false,
                                  mst_key integer DEFAULT NULL,
                                  batch_size integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl.madlib_keras_predict($1, $2, $3, $4, $5, $6::double precision, $7, $8, $9) $$;

CREATE FUNCTION madlib_dl.madlib_keras_predict_byom(model_arch_table varchar, model_id integer,
                                                    test_table varchar, id_col varchar,
                                                    independent_varname varchar,
                                                    output_table varchar,
                                                    pred_type varchar DEFAULT 'prob',
                                                    use_gpus boolean DEFAULT false,
                                                    class_values text[] DEFAULT NULL,
                                                    normalizing_const double precision DEFAULT NULL,
                                                    dependent_count integer DEFAULT 1,
                                                    batch_size integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._predict_byom(madlib_dl._resolve_table($1, 'model_arch_table'), $2,
                                   madlib_dl._resolve_table($3, 'test_table'), $4, $5,
                                   madlib_dl._resolve_table($6, 'output_table'),
                                   p.kind, p.k, p.threshold, $8, $9, $10, $11, $12)
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
                                                    dependent_count integer DEFAULT 1,
                                                    batch_size integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._predict_byom(madlib_dl._resolve_table($1, 'model_arch_table'), $2,
                                   madlib_dl._resolve_table($3, 'test_table'), $4, $5,
                                   madlib_dl._resolve_table($6, 'output_table'),
                                   'top_k', $7, NULL, $8, $9, $10, $11, $12)
$$;

CREATE FUNCTION madlib_dl.madlib_keras_predict_byom(model_arch_table varchar, model_id integer,
                                                    test_table varchar, id_col varchar,
                                                    independent_varname varchar,
                                                    output_table varchar,
                                                    pred_type double precision,
                                                    use_gpus boolean DEFAULT false,
                                                    class_values text[] DEFAULT NULL,
                                                    normalizing_const double precision DEFAULT NULL,
                                                    dependent_count integer DEFAULT 1,
                                                    batch_size integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._predict_byom(madlib_dl._resolve_table($1, 'model_arch_table'), $2,
                                   madlib_dl._resolve_table($3, 'test_table'), $4, $5,
                                   madlib_dl._resolve_table($6, 'output_table'),
                                   'threshold', NULL, $7, $8, $9, $10, $11, $12)
$$;

CREATE FUNCTION madlib_dl.predict_byom(model_arch_table varchar, model_id integer,
                                       test_table varchar, id_col varchar,
                                       independent_varname varchar, output_table varchar,
                                       pred_type varchar DEFAULT 'prob',
                                       use_gpus boolean DEFAULT false,
                                       class_values text[] DEFAULT NULL,
                                       normalizing_const double precision DEFAULT NULL,
                                       dependent_count integer DEFAULT 1,
                                       batch_size integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl.madlib_keras_predict_byom($1, $2, $3, $4, $5, $6, $7::varchar, $8, $9, $10, $11, $12) $$;

CREATE FUNCTION madlib_dl.predict_byom(model_arch_table varchar, model_id integer,
                                       test_table varchar, id_col varchar,
                                       independent_varname varchar, output_table varchar,
                                       pred_type integer,
                                       use_gpus boolean DEFAULT false,
                                       class_values text[] DEFAULT NULL,
                                       normalizing_const double precision DEFAULT NULL,
                                       dependent_count integer DEFAULT 1,
                                       batch_size integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl.madlib_keras_predict_byom($1, $2, $3, $4, $5, $6, $7::integer, $8, $9, $10, $11, $12) $$;

CREATE FUNCTION madlib_dl.predict_byom(model_arch_table varchar, model_id integer,
                                       test_table varchar, id_col varchar,
                                       independent_varname varchar, output_table varchar,
                                       pred_type double precision,
                                       use_gpus boolean DEFAULT false,
                                       class_values text[] DEFAULT NULL,
                                       normalizing_const double precision DEFAULT NULL,
                                       dependent_count integer DEFAULT 1,
                                       batch_size integer DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl.madlib_keras_predict_byom($1, $2, $3, $4, $5, $6, $7::double precision, $8, $9, $10, $11, $12) $$;
