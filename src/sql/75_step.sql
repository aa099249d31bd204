-- 75_step.sql: one segment's step as an SQL aggregate over the segment's
-- rows (src/pg/runtime/gp_agg.c), for the transports that reach their segments
-- through SQL: greenplum (src/pg/transport/greenplum.c) and plproxy (src/pg/
-- transport/plproxy.c, on the data nodes).  The step is the one a parallel
-- worker runs (src/pg/runtime/step.c), so every transport gives the same
-- bytes.
--
--   _gp_fit_segment(step) WITHIN GROUP (ORDER BY buffer_id, dep, indep,
--                                       dep_shape, indep_shape)
--       train step.state on the group's buffers, in buffer_id order:
--       reseed with (seed, step.iteration, step.segment), `epochs` passes;
--   _gp_eval_segment(step) WITHIN GROUP (ORDER BY ...the same)
--       the loss and metric sums of step.state on the group's buffers.
-- Both are ordered-set aggregates: step is a direct argument, evaluated
-- once per group (never copied per row), and the buffers are kept as
-- they come (a TOASTed buffer as its pointer) until the final function
-- sorts them by buffer_id and decodes them into one partition.  Group by
-- the distribution key (on Greenplum: no data motion).

-- What one step is asked: the state to start from (dl_blob), the model
-- definition, the iteration and segment that seed the shuffle, and the
-- job's use_caching (NULL: the segment's madlib_dl.partition_memory
-- decides whether its partition is decoded into memory or streamed).
CREATE TYPE madlib_dl._step AS (
    state          bytea,
    model_arch     text,
    compile_params text,
    fit_params     text,
    iteration      integer,
    segment        integer,
    use_caching    boolean
);

-- What a step gives back.  state: the new state of a training step; NULL
-- for an evaluation, for a group without rows, and when training
-- diverged (diverged then holds the engine's message).  loss_sum and
-- metric_sum over n samples (all epochs of a training step); seconds:
-- the step's own time on its segment.
CREATE TYPE madlib_dl._step_result AS (
    state      bytea,
    loss_sum   double precision,
    metric_sum double precision,
    n          bigint,
    seconds    double precision,
    diverged   text
);

CREATE FUNCTION madlib_dl._gp_step_transition(state internal, buffer_id integer, dep bytea,
    indep bytea, dep_shape integer[], indep_shape integer[])
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__gp_step_transition'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE FUNCTION madlib_dl._gp_fit_final(state internal, step madlib_dl._step)
RETURNS madlib_dl._step_result
AS 'MODULE_PATHNAME', 'madlib_dl__gp_fit_final'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE FUNCTION madlib_dl._gp_eval_final(state internal, step madlib_dl._step)
RETURNS madlib_dl._step_result
AS 'MODULE_PATHNAME', 'madlib_dl__gp_eval_final'
LANGUAGE C VOLATILE PARALLEL SAFE;

-- One segment's training step.
CREATE AGGREGATE madlib_dl._gp_fit_segment(step madlib_dl._step
    ORDER BY buffer_id integer, dep bytea, indep bytea, dep_shape integer[], indep_shape integer[]) (
    SFUNC = madlib_dl._gp_step_transition,
    STYPE = internal,
    FINALFUNC = madlib_dl._gp_fit_final,
    PARALLEL = SAFE
);

-- One segment's evaluation.
CREATE AGGREGATE madlib_dl._gp_eval_segment(step madlib_dl._step
    ORDER BY buffer_id integer, dep bytea, indep bytea, dep_shape integer[], indep_shape integer[]) (
    SFUNC = madlib_dl._gp_step_transition,
    STYPE = internal,
    FINALFUNC = madlib_dl._gp_eval_final,
    PARALLEL = SAFE
);

-- The state a fit starts from (weights from fit_params' seed, or
-- init_weights; fresh optimizer state; no samples): for calling the
-- step aggregates by hand, in tests.
CREATE FUNCTION madlib_dl._initial_state(model_arch json, init_weights bytea,
                                         compile_params text, fit_params text)
RETURNS bytea
AS 'MODULE_PATHNAME', 'madlib_dl__initial_state'
LANGUAGE C VOLATILE PARALLEL SAFE;
