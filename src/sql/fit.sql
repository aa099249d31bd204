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

-- _check_early_stopping for one configuration of several (fit_multiple's
-- mst_keys, automl's grids): its 22023 comes again as "<label>: <message>"
-- with hint, naming the configuration.  Returns the canonical string.
CREATE FUNCTION madlib_dl._check_early_stopping_of(early_stopping text, compile_params text,
    has_validation boolean, label text, hint text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN madlib_dl._check_early_stopping(early_stopping, compile_params, has_validation);
EXCEPTION WHEN invalid_parameter_value THEN
    RAISE EXCEPTION '%: %', label, SQLERRM
        USING ERRCODE = 'invalid_parameter_value',
              HINT = coalesce(hint, 'Monitor a series every configuration has.');
END
$$;

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
    best_iteration       integer,
    -- every metric of compile_params, per metrics point:
    -- {"training": {"<metric>": [...], ...}, "validation": {...}}
    metrics              jsonb
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
-- ERROR unless it is 1 to _job_limit('segments') (64) and every buffer's
-- __dist_key__ names one.  src_rel must be source (22023), and its owner
-- trusted (42501, _assert_trusted_table): it is read here.
CREATE FUNCTION madlib_dl._fit_num_segments(source text[], src_rel regclass, psum jsonb)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nseg integer;
    nt bigint;
BEGIN
    PERFORM madlib_dl._assert_same_table(source, src_rel, 'source_table');
    nseg := (psum->>'num_segments')::integer;
    IF nseg IS NULL THEN
        IF EXISTS (
               SELECT 1 FROM pg_attribute a WHERE a.attrelid = src_rel
                  AND a.attname = '__dist_key__' AND NOT a.attisdropped) THEN
            EXECUTE format('SELECT max(__dist_key__) + 1 FROM %s', madlib_dl._table_sql(source)) INTO nseg;
        END IF;
        nseg := coalesce(nseg, 1);
    END IF;
    IF nseg < 1 OR nseg > madlib_dl._job_limit('segments') THEN
        RAISE EXCEPTION 'source_table "%" has % segments, expected 1 to %', madlib_dl._table_label(source), nseg,
                        madlib_dl._job_limit('segments')
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

-- The packed inputs of a training driver (fit, fit_multiple, automl):
-- the source table and the validation table (when given) exist and have
-- a summary (_fit_packed_summary); psum is the source's summary, x_cols
-- and y_cols its variables, vx_cols and vy_cols the validation table's.
CREATE FUNCTION madlib_dl._fit_inputs(source text[], validation text[],
    OUT src_rel regclass, OUT val_rel regclass, OUT psum jsonb,
    OUT x_cols text[], OUT y_cols text[], OUT vx_cols text[], OUT vy_cols text[])
RETURNS record
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    src_rel := madlib_dl._assert_table_exists(source, 'source_table');
    psum := madlib_dl._fit_packed_summary(source, 'source_table');
    SELECT v.x_cols, v.y_cols INTO x_cols, y_cols FROM madlib_dl._fit_vars(psum) v;
    IF validation IS NOT NULL THEN
        val_rel := madlib_dl._assert_table_exists(validation, 'validation_table');
        SELECT v.x_cols, v.y_cols INTO vx_cols, vy_cols
          FROM madlib_dl._fit_vars(madlib_dl._fit_packed_summary(validation, 'validation_table')) v;
    END IF;
END
$$;

-- ERROR 0A000 when use_gpus: this build has no GPU backend.  fn names the
-- function called, for the hint.
CREATE FUNCTION madlib_dl._fit_check_no_gpus(use_gpus boolean, fn text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM madlib_dl._assert_no_gpus(use_gpus,
        format('Call %s with use_gpus => false; training runs on the CPU cores of all segments.', fn));
END
$$;

-- The architectures of a training job: for each model id of ids, its
-- model_arch (archs, as text) and model_weights (inits: the transfer
-- learning start, NULL for a random one) in the model architecture table
-- arch_tbl.  labels[i] (may be NULL) names what asks for ids[i], for the
-- errors ('mst_key 3').
CREATE FUNCTION madlib_dl._fit_archs(arch_tbl text[], ids integer[], labels text[],
                                     OUT archs text[], OUT inits bytea[])
RETURNS record
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass := madlib_dl._assert_table_exists(arch_tbl, 'model_arch_table');
    nt bigint;
    a json;
    aw bytea;
BEGIN
    PERFORM madlib_dl._assert_columns(rel, ARRAY['model_id', 'model_arch', 'model_weights'],
        ARRAY['integer', 'json', 'bytea'], 'a model architecture table made by load_keras_model');
    FOR i IN 1 .. cardinality(ids) LOOP
        EXECUTE format('SELECT count(*), (array_agg(model_arch))[1], (array_agg(model_weights))[1]'
                       '  FROM %s WHERE model_id = $1', madlib_dl._table_sql(arch_tbl))
           INTO nt, a, aw USING ids[i];
        IF nt = 0 OR (a IS NULL AND labels[i] IS NOT NULL) THEN
            PERFORM madlib_dl._arch_raise_model_id_missing(ids[i] || coalesce(' of ' || labels[i], ''),
                                                           arch_tbl);
        ELSIF nt > 1 THEN
            RAISE EXCEPTION 'model_id % of model architecture table "%" has % architectures',
                            ids[i], madlib_dl._table_label(arch_tbl), nt
                USING ERRCODE = 'cardinality_violation',
                      HINT = 'Give model ids that name one architecture each (load_keras_model).';
        END IF;
        PERFORM madlib_dl._assert_not_null(a, 'model_arch');
        archs[i] := a::text;
        inits[i] := aw;
    END LOOP;
END
$$;

-- ERROR unless every initial weights of a job (inits[i], NULL: random)
-- have the size of architecture archs[i] and are finite, before any work.
CREATE FUNCTION madlib_dl._fit_check_inits(archs text[], inits bytea[])
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    FOR i IN 1 .. cardinality(archs) LOOP
        IF inits[i] IS NOT NULL THEN
            PERFORM madlib_dl._validate_arch(archs[i]::json, inits[i]);
        END IF;
    END LOOP;
END
$$;

-- How a driver's job runs (_job_transport), with its number of segments:
-- the transport's, else the packed table's own (_fit_num_segments).
CREATE FUNCTION madlib_dl._fit_job_transport(source text[], src_rel regclass, psum jsonb,
    OUT transport text, OUT cluster text, OUT num_segments integer)
RETURNS record
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tr record := madlib_dl._job_transport(src_rel);
BEGIN
    transport := tr.transport;
    cluster := tr.cluster;
    num_segments := coalesce(tr.num_segments, madlib_dl._fit_num_segments(source, src_rel, psum));
END
$$;

-- The one table writer of the drivers: CREATE TABLE tbl (defs) dist, then
-- one row per element of rows (a jsonb array of objects), each column
-- filled from the key of its name (a missing key: NULL; other keys are
-- ignored), in the order of rows.
CREATE FUNCTION madlib_dl._fit_write_rows(tbl text[], defs text, dist text, rows jsonb)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    EXECUTE format('CREATE TABLE %s (%s)%s', madlib_dl._table_sql(tbl), defs, dist);
    EXECUTE format('INSERT INTO %1$s SELECT * FROM jsonb_populate_recordset(NULL::%1$s, $1)',
                   madlib_dl._table_sql(tbl))
       USING rows;
END
$$;

-- The metric columns of fit's summary and of the info tables of
-- fit_multiple and automl, as MADlib names them; _fit_series fills them.
CREATE FUNCTION madlib_dl._fit_series_defs()
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'training_metrics_final double precision, training_loss_final double precision,'
           ' training_metrics double precision[], training_loss double precision[],'
           ' validation_metrics_final double precision, validation_loss_final double precision,'
           ' validation_metrics double precision[], validation_loss double precision[]'
$$;

-- A training result (a _fit_result, _fit_multiple_result or _automl_result
-- as jsonb, model_weights left out) with what the output tables add: the
-- *_final values of its series, model_type and model_size (size: the
-- weights' bytes).
CREATE FUNCTION madlib_dl._fit_series(r jsonb, size integer)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT r || jsonb_build_object(
        'training_metrics_final', r->'training_metrics'->-1,
        'training_loss_final', r->'training_loss'->-1,
        'validation_metrics_final', r->'validation_metrics'->-1,
        'validation_loss_final', r->'validation_loss'->-1,
        'model_type', 'madlib_keras',
        'model_size', size / 1024.0)
$$;

-- The info table of fit_multiple and automl: one row per model; middle
-- goes after metrics_iters, tail at the end (", <col> <type>" each).
CREATE FUNCTION madlib_dl._fit_info_defs(middle text, tail text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'mst_key integer PRIMARY KEY, model_id integer, compile_params text, fit_params text,'
           ' model_type text, model_size double precision, metrics_elapsed_time double precision[],'
           ' metrics_type text[], loss_type text, ' || madlib_dl._fit_series_defs()
        || ', metrics_iters integer[]' || middle
        || ', status text, training_seconds double precision, waiting_seconds double precision,'
           ' stopped_at_iteration integer, best_iteration integer, metrics jsonb' || tail
$$;

-- The class value columns of the model summaries: <y>_class_values for
-- each dependent variable y of y_cols, of its type in the summary of the
-- packed table source (text[] when that summary has no such column).
-- defs: ", <col> <type>" for each, to append to a CREATE TABLE's
-- columns; vals: their values in that summary, keyed by column.
CREATE FUNCTION madlib_dl._fit_class_values_columns(source text[], y_cols text[],
                                                    OUT defs text, OUT vals jsonb)
RETURNS record
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    stbl text[] := ARRAY[source[1], source[2] || '_summary'];
    srel regclass := madlib_dl._table_oid(stbl);
    cv_col text;
    cv_type text;
    v jsonb;
BEGIN
    defs := '';
    vals := '{}';
    IF srel IS NOT NULL THEN
        PERFORM madlib_dl._assert_trusted_table(srel, 'source_table summary');  -- it is read below
    END IF;
    FOREACH cv_col IN ARRAY ARRAY(SELECT y || '_class_values' FROM unnest(y_cols) y) LOOP
        cv_type := madlib_dl._class_values_type(srel, cv_col);
        defs := defs || format(', %I %s', cv_col, coalesce(cv_type, 'text[]'));
        IF cv_type IS NOT NULL THEN
            EXECUTE format('SELECT to_jsonb(s.%I) FROM %s s LIMIT 1', cv_col, madlib_dl._table_sql(stbl))
               INTO v;
            vals := vals || jsonb_build_object(cv_col, v);
        END IF;
    END LOOP;
END
$$;

-- The per-output metric columns of a model of several outputs, one set
-- per dependent variable y of y_cols (none for one): MADlib's eight
-- metric columns, each output's own, named <y>_training_metrics_final,
-- <y>_training_loss_final, <y>_training_metrics, <y>_training_loss and
-- the same four for validation.  r is the training result as jsonb
-- (_fit_result or _fit_multiple_result) whose output_* series (one row
-- per metrics point, one column per output) they are read from.  defs as
-- _fit_class_values_columns gives them; vals keyed by column.
CREATE FUNCTION madlib_dl._fit_output_columns(y_cols text[], r jsonb, OUT defs text, OUT vals jsonb)
RETURNS record
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    kind text;
    series text;
    s jsonb;
BEGIN
    defs := '';
    vals := '{}';
    IF cardinality(y_cols) < 2 THEN
        RETURN;
    END IF;
    FOR k IN 1 .. cardinality(y_cols) LOOP
        FOREACH kind IN ARRAY ARRAY['training', 'validation'] LOOP
            FOREACH series IN ARRAY ARRAY['metrics', 'loss'] LOOP
                defs := defs || format(', %I double precision', format('%s_%s_%s_final', y_cols[k], kind, series));
            END LOOP;
            FOREACH series IN ARRAY ARRAY['metrics', 'loss'] LOOP
                defs := defs || format(', %I double precision[]', format('%s_%s_%s', y_cols[k], kind, series));
                s := r->format('output_%s_%s', kind, series);
                CONTINUE WHEN jsonb_typeof(s) IS DISTINCT FROM 'array';
                vals := vals || jsonb_build_object(
                    format('%s_%s_%s_final', y_cols[k], kind, series), s->-1->(k - 1),
                    format('%s_%s_%s', y_cols[k], kind, series),
                    (SELECT jsonb_agg(e->(k - 1) ORDER BY o) FROM jsonb_array_elements(s) WITH ORDINALITY AS t(e, o)));
            END LOOP;
        END LOOP;
    END LOOP;
END
$$;

-- Warm start: the initial weights of a job (inits, one per architecture
-- of archs) with those of the model table of an earlier run in their
-- place, checked against the architectures.  keys NULL: fit's model table
-- of one row, for model_id; else fit_multiple's, one row per mst_key of
-- keys (a key it lacks keeps its inits).
CREATE FUNCTION madlib_dl._fit_warm_start(model text[], summary_tbl text[], keys integer[],
                                          archs text[], inits bytea[], model_id integer)
RETURNS bytea[]
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    one constant boolean := keys IS NULL;
    label constant text := madlib_dl._table_label(model);
    hint constant text := CASE WHEN keys IS NULL THEN 'Warm start with the architecture the model was trained with'
                               ELSE 'Warm start with the model selection table the models were trained with' END;
    nt bigint;
    w bytea;
    old_arch json;
    n bigint;
BEGIN
    PERFORM madlib_dl._assert_known_format(madlib_dl._table_oid(summary_tbl), format('model table "%s"', label));
    FOR i IN 1 .. cardinality(archs) LOOP
        EXECUTE format('SELECT count(*), (array_agg(model_weights))[1], (array_agg(model_arch))[1] FROM %s%s',
                       madlib_dl._table_sql(model), CASE WHEN one THEN '' ELSE ' WHERE mst_key = $1' END)
           INTO nt, w, old_arch USING keys[i];
        IF one AND (nt <> 1 OR w IS NULL) THEN
            RAISE EXCEPTION 'model table "%" for warm_start must hold one row with model_weights, it has % rows',
                            label, nt
                USING ERRCODE = 'cardinality_violation',
                      HINT = 'Give the model table written by an earlier fit, or warm_start => false.';
        END IF;
        CONTINUE WHEN nt = 0;       -- a new key: starts from its inits
        n := (madlib_dl._arch_info(archs[i]::json)).n_params;
        IF w IS NULL OR octet_length(w) <> 4 * n THEN
            RAISE EXCEPTION 'model table "%" holds % weights%, but % has %', label, octet_length(w) / 4,
                            CASE WHEN one THEN '' ELSE format(' for mst_key %s', keys[i]) END,
                            CASE WHEN one THEN format('architecture %s', model_id) ELSE 'its architecture' END, n
                USING ERRCODE = 'data_exception',
                      HINT = hint || CASE WHEN one THEN '.' ELSE ', or warm_start => false.' END;
        END IF;
        IF old_arch IS NOT NULL
           AND (madlib_dl._arch_info(old_arch)).fingerprint <> (madlib_dl._arch_info(archs[i]::json)).fingerprint THEN
            RAISE EXCEPTION '%', CASE WHEN one
                    THEN format('model table "%s" was trained with another architecture than model_id %s', label, model_id)
                    ELSE format('mst_key %s in model table "%s" was trained with another architecture', keys[i], label) END
                USING ERRCODE = 'data_exception', HINT = hint || ', or warm_start => false.';
        END IF;
        inits[i] := w;
    END LOOP;
    RETURN inits;
END
$$;

-- The summary table of a driver: CREATE TABLE tbl (defs), its class value
-- columns (_fit_class_values_columns) where defs says {class_values}, and
-- its one row: vals, with what every summary records of the packed table
-- source (psum, its summary): its variables, num_classes,
-- dependent_vartype, normalizing_const, and madlib_version.  transform:
-- the source's transform (src/sql/transform.sql) is recorded too, for
-- predict to apply to raw tables.
CREATE FUNCTION madlib_dl._fit_write_summary(tbl text[], defs text, source text[], psum jsonb,
                                             transform boolean, vals jsonb)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v record := madlib_dl._fit_vars(psum);
    cv record := madlib_dl._fit_class_values_columns(source, v.y_cols);
BEGIN
    PERFORM madlib_dl._fit_write_rows(tbl, replace(defs, '{class_values}', cv.defs), madlib_dl._distributed_clause(),
        jsonb_build_array(jsonb_build_object('dependent_varname', v.y_cols, 'independent_varname', v.x_cols,
            'madlib_version', madlib_dl.version(),
            'num_classes', madlib_dl._summary_int_list(psum->'num_classes'),
            'dependent_vartype', madlib_dl._summary_text_list(psum->'dependent_vartype'),
            'normalizing_const', coalesce((psum->>'normalizing_const')::real, 1.0::real)) || cv.vals || vals));
    IF transform AND jsonb_typeof(psum->'transform') = 'object' THEN
        PERFORM madlib_dl._tf_store(tbl, madlib_dl._transform_finish(psum->'transform'));
    END IF;
END
$$;

-- ERROR unless the output tables of fit_multiple and automl are absent:
-- the model table (in a schema that exists), its info and summary tables.
CREATE FUNCTION madlib_dl._fit_assert_outputs_absent(model text[], info_tbl text[], summary_tbl text[])
RETURNS void
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM madlib_dl._assert_schema_exists(model);
    PERFORM madlib_dl._assert_output_absent(model, 'model_output_table');
    PERFORM madlib_dl._assert_output_absent(info_tbl, 'model info table');
    PERFORM madlib_dl._assert_output_absent(summary_tbl, 'model summary table');
END
$$;

-- The model table of fit_multiple and automl: one row per model, its
-- mst_key (keys[i]), weights and architecture, in mst_key order.
CREATE FUNCTION madlib_dl._fit_write_models(model text[], keys integer[], weights bytea[], archs text[])
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    EXECUTE format('CREATE TABLE %s (mst_key integer PRIMARY KEY, model_weights bytea, model_arch json)%s',
                   madlib_dl._table_sql(model), madlib_dl._distributed_clause('mst_key'));
    EXECUTE format('INSERT INTO %s SELECT k, w, a::json FROM unnest($1, $2, $3) AS m(k, w, a) ORDER BY k',
                   madlib_dl._table_sql(model))
       USING keys, weights, archs;
END
$$;

-- Check the packed tables (source, validation when given: their
-- variables x_cols, y_cols, vx_cols, vy_cols) against every architecture
-- of archs, each once (_fit_check_packed).
CREATE FUNCTION madlib_dl._fit_check_data(source text[], validation text[], x_cols text[], y_cols text[],
                                          vx_cols text[], vy_cols text[], archs text[])
RETURNS void
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    FOR i IN 1 .. cardinality(archs) LOOP
        CONTINUE WHEN array_position(archs[1:i - 1], archs[i]) IS NOT NULL;
        PERFORM madlib_dl._fit_check_packed(source, 'source_table', x_cols, y_cols, archs[i]::json);
        IF validation IS NOT NULL THEN
            PERFORM madlib_dl._fit_check_packed(validation, 'validation_table', vx_cols, vy_cols, archs[i]::json);
        END IF;
    END LOOP;
END
$$;

-- Warm start's outputs: the model table and its info and summary tables
-- (info_tbl NULL: none) of the earlier run, dropped before the new ones
-- are written (_assert_warm_start_outputs checked them).
CREATE FUNCTION madlib_dl._fit_drop_outputs(warm_start boolean, model text[], info_tbl text[], summary_tbl text[])
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF warm_start THEN
        EXECUTE format('DROP TABLE %s', madlib_dl._table_sql(model));
        IF info_tbl IS NOT NULL THEN
            EXECUTE format('DROP TABLE IF EXISTS %s', madlib_dl._table_sql(info_tbl));
        END IF;
        EXECUTE format('DROP TABLE %s', madlib_dl._table_sql(summary_tbl));
    END IF;
END
$$;

-- The columns of fit's summary table; out_defs: _fit_output_columns'.
CREATE FUNCTION madlib_dl._fit_summary_defs(out_defs text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'source_table text, model text,'
        ' dependent_varname text[], independent_varname text[], model_arch_table text, model_id integer,'
        ' compile_params text, fit_params text, num_iterations integer, validation_table text,'
        ' object_table text, metrics_compute_frequency integer, name text, description text,'
        ' model_type text, model_size double precision, start_training_time timestamp,'
        ' end_training_time timestamp, metrics_elapsed_time double precision[], madlib_version text,'
        ' num_classes integer[], dependent_vartype text[], normalizing_const real, metrics_type text[],'
        ' loss_type text, ' || madlib_dl._fit_series_defs() || ', metrics_iters integer[]{class_values},'
        ' seed bigint, averaging_period integer, lr_scaling text, early_stopping text,'
        ' stopped_at_iteration integer, best_iteration integer, metrics jsonb' || out_defs
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
    inp record;                 -- _fit_inputs: the packed tables and their variables
    ar record;                  -- _fit_archs: the architecture and its weights
    params record;              -- _check_params
    es text;                    -- early_stopping, canonical (NULL: none)
    freq integer;
    tr record;                  -- _fit_job_transport: how the job runs
    saved_workers text;         -- _leader_only_for_temp
    oc record;                  -- _fit_output_columns
    t_start timestamp;
    t_end timestamp;
    r madlib_dl._fit_result;
BEGIN
    -- 1. arguments that need no table
    PERFORM madlib_dl._assert_not_null(model_id, 'model_id');
    PERFORM madlib_dl._assert_not_null(compile_params, 'compile_params');
    PERFORM madlib_dl._assert_not_null(num_iterations, 'num_iterations');
    PERFORM madlib_dl._fit_check_no_gpus(use_gpus, 'fit');
    -- object_table (MADlib's custom functions) was checked by the public
    -- wrapper (_object_table_check); it is recorded in the summary
    freq := madlib_dl._fit_check_iterations(num_iterations, metrics_compute_frequency);
    PERFORM madlib_dl._fit_check_averaging(averaging_period, lr_scaling);
    params := madlib_dl._check_params(compile_params, fit_params);
    es := madlib_dl._check_early_stopping(early_stopping, compile_params, validation IS NOT NULL);

    -- 2. tables: inputs exist, outputs absent (or present for warm start)
    inp := madlib_dl._fit_inputs(source, validation);
    IF warm_start THEN
        PERFORM madlib_dl._assert_warm_start_outputs(model, 'model', summary_tbl,
            ARRAY['model_weights', 'model_arch'], ARRAY['bytea', 'json'], 'fit');
    ELSE
        PERFORM madlib_dl._assert_output_absent(model, 'model');
        PERFORM madlib_dl._assert_output_absent(summary_tbl, 'model summary table');
    END IF;
    ar := madlib_dl._fit_archs(arch_tbl, ARRAY[model_id], ARRAY[NULL]);

    -- 3. memory: what one process will hold, from the architecture, before
    --    any data is read or any model is built (54000 when over the limit)
    tr := madlib_dl._fit_job_transport(source, inp.src_rel, inp.psum);
    PERFORM madlib_dl._check_model_memory(CASE WHEN tr.transport = 'workers' THEN 'fit' ELSE 'distributed' END,
        ar.archs, ARRAY[compile_params::text], ARRAY[fit_params::text], ARRAY[format('model_id %s', model_id)],
        num_iterations => num_iterations, metrics_compute_frequency => freq, num_segments => tr.num_segments);
    PERFORM madlib_dl._fit_check_data(source, validation, inp.x_cols, inp.y_cols, inp.vx_cols, inp.vy_cols,
                                      ar.archs);

    -- 4. initial weights: warm start, else transfer learning, else random
    IF warm_start THEN
        ar.inits := madlib_dl._fit_warm_start(model, summary_tbl, NULL, ar.archs, ar.inits, model_id);
    END IF;
    PERFORM madlib_dl._fit_check_inits(ar.archs, ar.inits);

    -- 5. train over the transport (no table is written before this returns);
    --    MADlib's fit has no use_caching: madlib_dl.partition_memory decides
    saved_workers := madlib_dl._leader_only_for_temp(ARRAY[inp.src_rel, inp.val_rel], tr.transport);
    PERFORM madlib_dl._progress_label(model);
    t_start := clock_timestamp();
    r := madlib_dl._fit_run(madlib_dl._make_train_job(inp.src_rel, NULL, NULL, ar.archs,
        ARRAY[compile_params::text], num_iterations, fit_params => ARRAY[fit_params::text],
        init_weights => ar.inits, mst_keys => ARRAY[model_id], validation => inp.val_rel,
        metrics_compute_frequency => freq, num_segments => tr.num_segments, transport => tr.transport,
        cluster => tr.cluster, averaging_period => averaging_period, lr_scaling => lr_scaling::text,
        x_cols => inp.x_cols, y_cols => inp.y_cols, val_x_cols => inp.vx_cols, val_y_cols => inp.vy_cols,
        early_stopping => es));
    t_end := clock_timestamp();
    PERFORM madlib_dl._leader_only_end(saved_workers);

    -- 6. output tables, in this transaction
    PERFORM madlib_dl._fit_drop_outputs(warm_start, model, NULL, summary_tbl);
    EXECUTE format('CREATE TABLE %s (model_weights bytea, model_arch json)%s', madlib_dl._table_sql(model),
                   madlib_dl._distributed_clause());
    EXECUTE format('INSERT INTO %s VALUES ($1, $2)', madlib_dl._table_sql(model))
       USING r.model_weights, ar.archs[1]::json;
    oc := madlib_dl._fit_output_columns(inp.y_cols, to_jsonb(r) - 'model_weights');
    PERFORM madlib_dl._fit_write_summary(summary_tbl, madlib_dl._fit_summary_defs(oc.defs),
        source, inp.psum, true,
        madlib_dl._fit_series(to_jsonb(r) - 'model_weights', octet_length(r.model_weights)) || oc.vals
        || jsonb_build_object('source_table', madlib_dl._table_given(source),
            'model', madlib_dl._table_given(model), 'model_arch_table', madlib_dl._table_given(arch_tbl),
            'model_id', model_id, 'compile_params', compile_params, 'fit_params', fit_params,
            'num_iterations', num_iterations, 'validation_table', madlib_dl._table_given(validation),
            'object_table', object_table, 'metrics_compute_frequency', freq, 'name', name,
            'description', description, 'start_training_time', t_start, 'end_training_time', t_end,
            'metrics_type', params.metrics_type, 'loss_type', params.loss_type, 'seed', params.seed,
            'averaging_period', averaging_period, 'lr_scaling', lr_scaling, 'early_stopping', es));
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
    -- object_table, in the caller's search_path: custom_functions.sql
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
