-- fit.sql: madlib_keras_fit / fit, as in MADlib (madlib_keras.sql_in),
-- trained by model averaging over the virtual segments (src/pg/api/fit.c,
-- src/pg/transport/workers.c).  docs/fit.md is the user page.

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

-- Parse early_stopping with the engine and check it against a model
-- compiled with compile_params (its metric) and whether a validation
-- table is given: ERROR 22023 (54000 when too long) otherwise.  Returns
-- the canonical string the summary tables record, NULL for none.
CREATE FUNCTION madlib_dl._check_early_stopping(early_stopping text, compile_params text,
                                                has_validation boolean)
RETURNS text
AS 'MODULE_PATHNAME', 'madlib_dl__check_early_stopping'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- ERROR 22000 unless x_shape {n, dims...} ends in the architecture's input
-- shape and y_shape {n, classes} (may be NULL) matches its outputs.
CREATE FUNCTION madlib_dl._check_input_shape(model_arch json, x_shape integer[], y_shape integer[])
RETURNS void
AS 'MODULE_PATHNAME', 'madlib_dl__check_input_shape'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- ERROR 22000 unless shape {n, dims...} of variable what (a column of a
-- packed table) fits input k of the architecture (output: output k, shape
-- {n, classes}); k from 0.
CREATE FUNCTION madlib_dl._check_var_shape(model_arch json, output boolean, k integer,
                                           shape integer[], what text)
RETURNS void
AS 'MODULE_PATHNAME', 'madlib_dl__check_var_shape'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE TYPE madlib_dl._fit_result AS (
    model_weights        bytea,
    training_loss        double precision[],
    training_metrics     double precision[],
    validation_loss      double precision[],
    validation_metrics   double precision[],
    metrics_iters        integer[],
    metrics_elapsed_time double precision[],
    workers_launched     integer,
    -- a model of several outputs: each output's series, one row per
    -- metrics point, one column per output (NULL for one output)
    output_training_loss      double precision[],
    output_training_metrics   double precision[],
    output_validation_loss    double precision[],
    output_validation_metrics double precision[],
    -- early stopping (NULL without): the iteration it stopped at (NULL
    -- when it ran every iteration) and the best monitored iteration
    stopped_at_iteration integer,
    best_iteration       integer
);

-- A training job: everything _fit_run and _fit_multiple_run are asked to
-- do, in one value (src/pg/api/job.c reads and checks it).  x_cols and
-- y_cols: the packed table's independent and dependent variables, one
-- per model input and output, in the model's order (MADlib's multi-io
-- layout; most models have one of each); val_x_cols and val_y_cols the
-- validation table's.  One model configuration per element of the other
-- arrays (fit: one); init_weights and
-- fit_params elements may be NULL (random start, defaults).  transport:
-- 'workers' (parallel workers on this server), 'greenplum' (aggregates
-- over Greenplum's segments) or 'plproxy' (the PL/Proxy cluster named by
-- cluster).  num_segments: the job's segments (virtual ones, Greenplum's
-- segment keys, or the cluster's partitions).  use_caching: true keeps
-- every segment's partition in memory for the whole call (54000 when one
-- does not fit madlib_dl.partition_memory), false reads it from the table
-- a window at a time, NULL decides by that budget (docs/fit.md, "Memory").
-- averaging_period and lr_scaling: fit's (docs/fit.md, "Averaging every
-- few mini-batches"); NULL in the other jobs.  early_stopping: the
-- option string of fit, fit_multiple and automl (docs/fit.md, "Early
-- stopping"), NULL for none.
CREATE TYPE madlib_dl._train_job AS (
    source                    regclass,
    x_cols                    text[],
    y_cols                    text[],
    validation                regclass,
    val_x_cols                text[],
    val_y_cols                text[],
    mst_keys                  integer[],
    model_archs               text[],
    init_weights              bytea[],
    compile_params            text[],
    fit_params                text[],
    num_iterations            integer,
    metrics_compute_frequency integer,
    num_segments              integer,
    schedule_seed             bigint,
    transport                 text,
    cluster                   text,
    use_caching               boolean,
    averaging_period          integer,
    lr_scaling                text,
    early_stopping            text
);

-- How a packed table's job runs: on Greenplum over its real segments
-- (one per segment key), over the PL/Proxy cluster it was distributed to
-- (one per partition), else on parallel workers (num_segments NULL: the
-- table's own count, _fit_num_segments).
CREATE FUNCTION madlib_dl._job_transport(src regclass, OUT transport text, OUT cluster text,
                                         OUT num_segments integer)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF madlib_dl._is_greenplum() THEN
        transport := 'greenplum';
        num_segments := array_length(madlib_dl._gp_table_keys(src), 1);
        RETURN;
    END IF;
    cluster := madlib_dl._px_cluster_of(src);
    IF cluster IS NOT NULL THEN
        transport := 'plproxy';
        SELECT p.n_seg INTO num_segments FROM madlib_dl._px_table_segments(cluster, src) p;
        RETURN;
    END IF;
    transport := 'workers';
END
$$;

-- A job value with defaults, for the drivers and tests: one model
-- configuration per element of model_archs; mst_keys 1..K, no initial
-- weights, default fit_params, metrics at the last iteration, the
-- transport and segments of _job_transport (workers: num_segments is
-- required), the budget deciding caching (use_caching NULL).  x_col and
-- y_col name one variable each; x_cols, y_cols (and val_x_cols,
-- val_y_cols), when given, name several and replace them.
CREATE FUNCTION madlib_dl._make_train_job(source regclass, x_col text, y_col text,
    model_archs text[], compile_params text[], num_iterations integer,
    fit_params text[] DEFAULT NULL, init_weights bytea[] DEFAULT NULL, mst_keys integer[] DEFAULT NULL,
    validation regclass DEFAULT NULL, val_x_col text DEFAULT NULL, val_y_col text DEFAULT NULL,
    metrics_compute_frequency integer DEFAULT NULL, num_segments integer DEFAULT NULL,
    schedule_seed bigint DEFAULT 1, transport text DEFAULT NULL, cluster text DEFAULT NULL,
    use_caching boolean DEFAULT NULL, averaging_period integer DEFAULT NULL,
    lr_scaling text DEFAULT NULL, x_cols text[] DEFAULT NULL, y_cols text[] DEFAULT NULL,
    val_x_cols text[] DEFAULT NULL, val_y_cols text[] DEFAULT NULL,
    early_stopping text DEFAULT NULL)
RETURNS madlib_dl._train_job
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    k integer := coalesce(cardinality(model_archs), 0);
    tr record;
BEGIN
    IF transport IS NULL THEN
        tr := madlib_dl._job_transport(source);
        transport := tr.transport;
        cluster := tr.cluster;
        num_segments := coalesce(num_segments, tr.num_segments);
    END IF;
    RETURN ROW(source, coalesce(x_cols, ARRAY[x_col]), coalesce(y_cols, ARRAY[y_col]), validation,
               CASE WHEN validation IS NOT NULL THEN coalesce(val_x_cols, ARRAY[val_x_col]) END,
               CASE WHEN validation IS NOT NULL THEN coalesce(val_y_cols, ARRAY[val_y_col]) END,
               coalesce(mst_keys, ARRAY(SELECT g FROM generate_series(1, k) g)), model_archs,
               coalesce(init_weights, array_fill(NULL::bytea, ARRAY[k])), compile_params,
               coalesce(fit_params, array_fill(NULL::text, ARRAY[k])),
               num_iterations, metrics_compute_frequency, num_segments, schedule_seed,
               transport, cluster, use_caching, averaging_period,
               lr_scaling, early_stopping)::madlib_dl._train_job;
END
$$;

-- The whole training run of one model, in one call: every segment trains
-- a copy, averaged every iteration (src/pg/api/fit.c).  Writes nothing; the
-- driver writes the tables.  PARALLEL UNSAFE: it starts its own parallel
-- workers.
CREATE FUNCTION madlib_dl._fit_run(job madlib_dl._train_job)
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
    PERFORM madlib_dl._assert_known_format(srel, format('%s "%s"', param, madlib_dl._table_label(tbl)));
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

-- A packed summary's list as the fit summaries store it: num_classes
-- (an array, or one number as MADlib stores it) as integer[];
-- dependent_vartype (an array) as text[]; NULL otherwise.
CREATE FUNCTION madlib_dl._summary_int_list(v jsonb)
RETURNS integer[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE jsonb_typeof(v)
               WHEN 'array' THEN ARRAY(SELECT jsonb_array_elements_text(v))::integer[]
               WHEN 'number' THEN ARRAY[(v #>> '{}')::integer] END
$$;

CREATE FUNCTION madlib_dl._summary_text_list(v jsonb)
RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT CASE WHEN jsonb_typeof(v) = 'array' THEN ARRAY(SELECT jsonb_array_elements_text(v)) END $$;

-- The variables of a packed table's summary (psum, _fit_packed_summary):
-- x_cols its independent_varname list, y_cols its dependent_varname list.
CREATE FUNCTION madlib_dl._fit_vars(psum jsonb, OUT x_cols text[], OUT y_cols text[])
RETURNS record
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT ARRAY(SELECT jsonb_array_elements_text(psum->'independent_varname')),
           ARRAY(SELECT jsonb_array_elements_text(psum->'dependent_varname'))
$$;

-- Check a packed table's columns and its first buffer's shapes against the
-- architecture: one independent variable (x_cols) per model input and one
-- dependent variable (y_cols) per output, in the model's order (MADlib's
-- multi-io layout).  Returns the number of buffers.
CREATE FUNCTION madlib_dl._fit_check_packed(tbl text[], param text, x_cols text[], y_cols text[],
                                            model_arch json)
RETURNS bigint
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass := madlib_dl._assert_table_exists(tbl, param);
    vars text[] := x_cols || y_cols;
    n_in integer;
    n_out integer;
    xs integer[];
    ys integer[];
    nbuf bigint;
BEGIN
    PERFORM madlib_dl._assert_columns(rel,
        vars || ARRAY(SELECT v || '_shape' FROM unnest(vars) v) || ARRAY['buffer_id'],
        array_fill('bytea'::text, ARRAY[cardinality(vars)])
            || array_fill('integer[]'::text, ARRAY[cardinality(vars)]) || ARRAY['integer'],
        'a table made by training_preprocessor_dl');
    EXECUTE format('SELECT count(*) FROM %s', madlib_dl._table_sql(tbl)) INTO nbuf;
    IF nbuf = 0 THEN
        RAISE EXCEPTION '% "%" is empty', param, madlib_dl._table_label(tbl)
            USING ERRCODE = 'no_data_found',
                  HINT = 'Preprocess a table that has rows.';
    END IF;
    SELECT count(*) FILTER (WHERE a.io = 'input'), count(*) FILTER (WHERE a.io = 'output')
      INTO n_in, n_out FROM madlib_dl._arch_io(model_arch) a;
    IF n_in <> cardinality(x_cols) OR n_out <> cardinality(y_cols) THEN
        RAISE EXCEPTION '% "%" has % independent and % dependent variables, but the model has % inputs and % outputs',
                        param, madlib_dl._table_label(tbl), cardinality(x_cols), cardinality(y_cols),
                        n_in, n_out
            USING ERRCODE = 'data_exception',
                  HINT = 'Preprocess one independent variable per model input and one dependent variable per output, '
                         'in the order of the model''s inputs and outputs (madlib_dl._arch_io lists them).';
    END IF;
    IF n_in = 1 AND n_out = 1 THEN
        EXECUTE format('SELECT %I, %I FROM %s ORDER BY buffer_id LIMIT 1',
                       x_cols[1] || '_shape', y_cols[1] || '_shape', madlib_dl._table_sql(tbl))
           INTO xs, ys;
        PERFORM madlib_dl._check_input_shape(model_arch, xs, ys);
        RETURN nbuf;
    END IF;
    FOR i IN 1 .. cardinality(vars) LOOP
        EXECUTE format('SELECT %I FROM %s ORDER BY buffer_id LIMIT 1', vars[i] || '_shape',
                       madlib_dl._table_sql(tbl))
           INTO xs;
        PERFORM madlib_dl._check_var_shape(model_arch, i > n_in,
                                           CASE WHEN i > n_in THEN i - n_in ELSE i END - 1, xs, vars[i]);
    END LOOP;
    RETURN nbuf;
END
$$;

-- The metrics frequency of fit and fit_multiple: metrics_compute_frequency,
-- num_iterations when NULL.  ERROR unless num_iterations >= 1 and the
-- frequency is 1 to num_iterations.
CREATE FUNCTION madlib_dl._fit_check_iterations(num_iterations integer,
                                                metrics_compute_frequency integer)
RETURNS integer
AS 'MODULE_PATHNAME', 'madlib_dl__check_iterations'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- fit's averaging_period (NULL: once per iteration, else at least 1) and
-- lr_scaling (NULL, 'linear' or 'sqrt'): ERROR 22023 otherwise.
CREATE FUNCTION madlib_dl._fit_check_averaging(averaging_period integer, lr_scaling text)
RETURNS void
AS 'MODULE_PATHNAME', 'madlib_dl__check_averaging'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

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
    -- (On Greenplum __dist_key__ holds the keys that hash to each segment,
    -- not 0 .. nseg - 1: _gp_table_keys reads and checks them.)
    IF EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = src_rel
                  AND a.attname = '__dist_key__' AND NOT a.attisdropped)
       AND NOT madlib_dl._is_greenplum() THEN
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

-- The class value columns of the model summaries: <y>_class_values for
-- each dependent variable y of y_cols, of its type in the summary of the
-- packed table source (text[] when that summary has no such column).
-- defs: ", <col> <type>" for each, to append to a CREATE TABLE's
-- columns; exprs: ", <expr>" reading each from that summary.
CREATE FUNCTION madlib_dl._fit_class_values_columns(source text[], y_cols text[],
                                                    OUT defs text, OUT exprs text)
RETURNS record
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    stbl text[] := ARRAY[source[1], source[2] || '_summary'];
    srel regclass := madlib_dl._table_oid(stbl);
    cv_col text;
    cv_type text;
BEGIN
    defs := '';
    exprs := '';
    FOREACH cv_col IN ARRAY ARRAY(SELECT y || '_class_values' FROM unnest(y_cols) y) LOOP
        cv_type := madlib_dl._class_values_type(srel, cv_col);
        defs := defs || format(', %I %s', cv_col, coalesce(cv_type, 'text[]'));
        exprs := exprs || ', ' || CASE WHEN cv_type IS NULL THEN 'NULL::text[]'
                                       ELSE format('(SELECT s.%I::%s FROM %s s LIMIT 1)', cv_col, cv_type,
                                                   madlib_dl._table_sql(stbl)) END;
    END LOOP;
END
$$;

-- The per-output metric columns of a model of several outputs, one set
-- per dependent variable y of y_cols (none for one): MADlib's eight
-- metric columns, each output's own, named <y>_training_metrics_final,
-- <y>_training_loss_final, <y>_training_metrics, <y>_training_loss and
-- the same four for validation.  res is the SQL of the result row
-- (madlib_dl._fit_result or _fit_multiple_result) whose output_* series
-- (one column per output) they are read from.  defs and exprs as
-- _fit_class_values_columns gives them.
CREATE FUNCTION madlib_dl._fit_output_columns(y_cols text[], res text, OUT defs text, OUT exprs text)
RETURNS record
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    kind text;
    series text;
BEGIN
    defs := '';
    exprs := '';
    IF cardinality(y_cols) < 2 THEN
        RETURN;
    END IF;
    FOR k IN 1 .. cardinality(y_cols) LOOP
        FOREACH kind IN ARRAY ARRAY['training', 'validation'] LOOP
            FOREACH series IN ARRAY ARRAY['metrics', 'loss'] LOOP
                defs := defs || format(', %I double precision', format('%s_%s_%s_final', y_cols[k], kind, series));
                exprs := exprs || format(', (%1$s.output_%2$s_%3$s)[array_upper(%1$s.output_%2$s_%3$s, 1)][%4$s]',
                                         res, kind, series, k);
            END LOOP;
            FOREACH series IN ARRAY ARRAY['metrics', 'loss'] LOOP
                defs := defs || format(', %I double precision[]', format('%s_%s_%s', y_cols[k], kind, series));
                exprs := exprs || format(', CASE WHEN %1$s.output_%2$s_%3$s IS NOT NULL'
                                         ' THEN ARRAY(SELECT unnest((%1$s.output_%2$s_%3$s)[:][%4$s:%4$s])) END',
                                         res, kind, series, k);
            END LOOP;
        END LOOP;
    END LOOP;
END
$$;

-- ---------------------------------------------------------------------
-- The driver
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl._fit(source text[], model text[], arch_tbl text[], model_id integer,
    compile_params varchar, fit_params varchar, num_iterations integer, use_gpus boolean,
    validation text[], metrics_compute_frequency integer, warm_start boolean,
    name varchar, description varchar, object_table varchar, averaging_period integer,
    lr_scaling varchar, early_stopping varchar)
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
    vars record;                -- _fit_vars: x_cols, y_cols
    vx_cols text[];             -- the validation table's
    vy_cols text[];
    arch json;
    arch_weights bytea;
    old_arch json;
    init_weights bytea;
    params record;
    es text;                    -- early_stopping, canonical (NULL: none)
    freq integer;
    nseg integer;
    tr record;                  -- _job_transport: how the job runs
    saved_workers text;         -- _leader_only_for_temp
    cv record;                  -- _fit_class_values_columns
    oc record;                  -- _fit_output_columns
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
    -- object_table (MADlib's custom functions) was checked by the public
    -- wrapper (_object_table_check); it is recorded in the summary
    freq := madlib_dl._fit_check_iterations(num_iterations, metrics_compute_frequency);
    PERFORM madlib_dl._fit_check_averaging(averaging_period, lr_scaling);
    params := madlib_dl._check_params(compile_params, fit_params);
    es := madlib_dl._check_early_stopping(early_stopping, compile_params, validation IS NOT NULL);

    -- 2. tables: inputs exist, outputs absent (or present for warm start)
    src_rel := madlib_dl._assert_table_exists(source, 'source_table');
    psum := madlib_dl._fit_packed_summary(source, 'source_table');
    vars := madlib_dl._fit_vars(psum);
    IF warm_start THEN
        PERFORM madlib_dl._assert_warm_start_outputs(model, 'model', summary_tbl,
            ARRAY['model_weights', 'model_arch'], ARRAY['bytea', 'json'], 'fit');
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

    -- 3. memory: what one process will hold, from the architecture, before
    --    any data is read or any model is built (54000 when over the limit)
    tr := madlib_dl._job_transport(src_rel);
    nseg := coalesce(tr.num_segments, madlib_dl._fit_num_segments(source, src_rel, psum));
    PERFORM madlib_dl._check_model_memory(CASE WHEN tr.transport = 'workers' THEN 'fit' ELSE 'distributed' END,
        ARRAY[arch::text], ARRAY[compile_params::text], ARRAY[fit_params::text],
        ARRAY[format('model_id %s', model_id)],
        num_iterations => num_iterations, metrics_compute_frequency => freq, num_segments => nseg);

    PERFORM madlib_dl._fit_check_packed(source, 'source_table', vars.x_cols, vars.y_cols, arch);
    IF validation IS NOT NULL THEN
        val_rel := madlib_dl._assert_table_exists(validation, 'validation_table');
        vsum := madlib_dl._fit_packed_summary(validation, 'validation_table');
        SELECT v.x_cols, v.y_cols INTO vx_cols, vy_cols FROM madlib_dl._fit_vars(vsum) v;
        PERFORM madlib_dl._fit_check_packed(validation, 'validation_table', vx_cols, vy_cols, arch);
    END IF;

    -- 4. initial weights: warm start, else transfer learning, else random
    IF warm_start THEN
        PERFORM madlib_dl._assert_known_format(madlib_dl._table_oid(summary_tbl),
                                               format('model table "%s"', madlib_dl._table_label(model)));
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

    -- temporary data: no parallel worker can read it (01_util.sql)
    saved_workers := madlib_dl._leader_only_for_temp(ARRAY[src_rel, val_rel], tr.transport);

    -- 5. train over the transport (no table is written before this returns);
    --    MADlib's fit has no use_caching: madlib_dl.partition_memory decides
    PERFORM madlib_dl._progress_label(model);
    t_start := clock_timestamp();
    r := madlib_dl._fit_run(ROW(src_rel, vars.x_cols, vars.y_cols, val_rel, vx_cols, vy_cols, ARRAY[model_id],
                                ARRAY[arch::text], ARRAY[init_weights], ARRAY[compile_params::text],
                                ARRAY[fit_params::text], num_iterations, freq, nseg, 1,
                                tr.transport, tr.cluster, NULL, averaging_period,
                                lr_scaling::text, es)::madlib_dl._train_job);
    t_end := clock_timestamp();

    -- 6. output tables, in this transaction
    PERFORM madlib_dl._leader_only_end(saved_workers);
    IF warm_start THEN
        -- both checked by _assert_warm_start_outputs above
        EXECUTE format('DROP TABLE %s', madlib_dl._table_sql(model));
        EXECUTE format('DROP TABLE %s', madlib_dl._table_sql(summary_tbl));
    END IF;
    EXECUTE format('CREATE TABLE %s (model_weights bytea, model_arch json)%s', madlib_dl._table_sql(model),
                   madlib_dl._distributed_clause());
    EXECUTE format('INSERT INTO %s VALUES ($1, $2)', madlib_dl._table_sql(model))
       USING r.model_weights, arch;

    cv := madlib_dl._fit_class_values_columns(source, vars.y_cols);
    oc := madlib_dl._fit_output_columns(vars.y_cols, '($38::madlib_dl._fit_result)');
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
        '  metrics_iters integer[]%s, seed bigint, averaging_period integer, lr_scaling text,'
        '  early_stopping text, stopped_at_iteration integer, best_iteration integer%s)%s',
        madlib_dl._table_sql(summary_tbl), cv.defs, oc.defs, madlib_dl._distributed_clause());
    EXECUTE format(
        'INSERT INTO %s SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,'
        ' $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32,'
        ' $33, $34%s, $35, $36, $37, $39, $40, $41%s',
        madlib_dl._table_sql(summary_tbl), cv.exprs, oc.exprs)
    USING
        madlib_dl._table_given(source),                               -- source_table, as given
        madlib_dl._table_given(model),                                -- model
        vars.y_cols,
        vars.x_cols,
        madlib_dl._table_given(arch_tbl),                             -- model_arch_table
        model_id,
        compile_params::text,
        fit_params::text,
        num_iterations,
        madlib_dl._table_given(validation),
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
        madlib_dl._summary_int_list(psum->'num_classes'),
        madlib_dl._summary_text_list(psum->'dependent_vartype'),
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
        params.seed,
        averaging_period,
        lr_scaling::text,
        r,
        es,
        r.stopped_at_iteration,
        r.best_iteration;
    -- the source's transform (21_transform.sql): predict applies it to raw tables
    IF jsonb_typeof(psum->'transform') = 'object' THEN
        PERFORM madlib_dl._tf_store(summary_tbl, madlib_dl._transform_finish(psum->'transform'));
    END IF;
    -- a version per model in the registry (src/sql/serving.sql)
    PERFORM madlib_dl._record_versions(model, 'fit');
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
    name varchar DEFAULT NULL, description varchar DEFAULT NULL, object_table varchar DEFAULT NULL,
    averaging_period integer DEFAULT NULL, lr_scaling varchar DEFAULT NULL,
    early_stopping varchar DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
AS $$
    -- object_table, in the caller's search_path: 55_custom_functions.sql
    SELECT madlib_dl._object_table_check(madlib_dl._resolve_table($14, 'object_table'), ARRAY[$5::text])
     WHERE $14 IS NOT NULL;
    SELECT madlib_dl._fit(
        madlib_dl._resolve_table($1, 'source_table'),
        madlib_dl._resolve_table($2, 'model'),
        madlib_dl._resolve_table($3, 'model_arch_table'),
        $4, $5, $6, $7, $8,
        CASE WHEN $9 IS NULL THEN NULL ELSE madlib_dl._resolve_table($9, 'validation_table') END,
        $10, coalesce($11, false), $12, $13, $14, $15, $16, $17)
$$;

CREATE FUNCTION madlib_dl.fit(source_table varchar, model varchar,
    model_arch_table varchar, model_id integer, compile_params varchar, fit_params varchar,
    num_iterations integer, use_gpus boolean DEFAULT false, validation_table varchar DEFAULT NULL,
    metrics_compute_frequency integer DEFAULT NULL, warm_start boolean DEFAULT false,
    name varchar DEFAULT NULL, description varchar DEFAULT NULL, object_table varchar DEFAULT NULL,
    averaging_period integer DEFAULT NULL, lr_scaling varchar DEFAULT NULL,
    early_stopping varchar DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
AS $$
    SELECT madlib_dl.madlib_keras_fit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
                                      $15, $16, $17)
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
        object_table              VARCHAR,  -- DEFAULT NULL; a table made by
                                            --   load_top_k_accuracy_function, for
                                            --   metrics=['top_<k>_accuracy']
        averaging_period          INTEGER,  -- DEFAULT NULL = once per iteration; else
                                            --   average every this many mini-batches
        lr_scaling                VARCHAR,  -- DEFAULT NULL; 'linear' or 'sqrt': the
                                            --   learning rate times N or sqrt(N) segments,
                                            --   after a warm-up
        early_stopping            VARCHAR   -- DEFAULT NULL; Keras' EarlyStopping, e.g.
                                            --   'monitor=validation_loss, patience=3,
                                            --    min_delta=0.001, restore_best=True'
    );

Each iteration every segment trains a copy of the model for `epochs`
passes over its own partition, at the same time; then the copies (weights
and optimizer state) are averaged, weighted by the samples each one saw.
With averaging_period P they are averaged every P mini-batches of each
segment too (Su & Chen 2015); docs/fit.md has the rules.
Results are byte-identical for the same seed however many parallel
workers PostgreSQL launched.  The seed is fit_params' seed= (default 42),
recorded in the summary's seed column.

A model of several inputs or outputs trains on a table packed with as
many variables (training_preprocessor_dl's comma lists), matched by
position; compile_params may give a loss list or dict and loss_weights.

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
