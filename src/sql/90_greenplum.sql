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
