-- step.sql: one segment's step as an SQL aggregate over the segment's
-- rows (src/pg/runtime/gp_agg.c), for the transports that reach their segments
-- through SQL: greenplum (src/pg/transport/greenplum.c) and plproxy (src/pg/
-- transport/plproxy.c, on the data nodes).  The step is the one a parallel
-- worker runs (src/pg/runtime/step.c), so every transport gives the same
-- bytes.
--
--   _gp_fit_segment(step, buffer_id, dep, indep, dep_shape, indep_shape)
--       train step.state on the group's buffers, in buffer_id order:
--       reseed with (seed, step.iteration, step.segment), `epochs` passes;
--   _gp_eval_segment(step, buffer_id, dep, indep, dep_shape, indep_shape)
--       the loss and metric sums of step.state on the group's buffers.
-- Both are plain aggregates without ORDER BY: every row of a group passes
-- the same step (a column of a table joined on the group key, or a
-- parameter), which is kept from the first row and never sorted or
-- copied per row; the buffers are kept as they come (a TOASTed buffer as
-- its pointer) until the final function sorts them by buffer_id and
-- decodes them into one partition.  No combine function: never split
-- into partial aggregates.  Group by the distribution key (on Greenplum:
-- one phase, no data motion).

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
-- the step's own time on its segment.  An evaluation of a model of
-- several outputs also gives each output's loss and metric sums
-- (loss_sum is their weighted total, metric_sum the first output's);
-- NULL otherwise.
CREATE TYPE madlib_dl._step_result AS (
    state              bytea,
    loss_sum           double precision,
    metric_sum         double precision,
    n                  bigint,
    seconds            double precision,
    diverged           text,
    output_loss_sums   double precision[],
    output_metric_sums double precision[],
    -- an evaluation whose compile_params keep metric sums (several
    -- metrics, or auc, precision or recall): every metric's sums
    -- (dl_metrics.h), NULL otherwise
    metric_sums        double precision[]
);

CREATE FUNCTION madlib_dl._gp_step_transition(state internal, step madlib_dl._step,
    buffer_id integer, dep bytea, indep bytea, dep_shape integer[], indep_shape integer[])
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__gp_step_transition'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE FUNCTION madlib_dl._gp_fit_final(state internal)
RETURNS madlib_dl._step_result
AS 'MODULE_PATHNAME', 'madlib_dl__gp_fit_final'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE FUNCTION madlib_dl._gp_eval_final(state internal)
RETURNS madlib_dl._step_result
AS 'MODULE_PATHNAME', 'madlib_dl__gp_eval_final'
LANGUAGE C VOLATILE PARALLEL SAFE;

-- One segment's training step.  (The final function sorts the kept
-- buffers in place: READ_WRITE.)
CREATE AGGREGATE madlib_dl._gp_fit_segment(step madlib_dl._step, buffer_id integer, dep bytea,
                                           indep bytea, dep_shape integer[], indep_shape integer[]) (
    SFUNC = madlib_dl._gp_step_transition,
    STYPE = internal,
    FINALFUNC = madlib_dl._gp_fit_final,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);

-- One segment's evaluation.
CREATE AGGREGATE madlib_dl._gp_eval_segment(step madlib_dl._step, buffer_id integer, dep bytea,
                                            indep bytea, dep_shape integer[], indep_shape integer[]) (
    SFUNC = madlib_dl._gp_step_transition,
    STYPE = internal,
    FINALFUNC = madlib_dl._gp_eval_final,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);

-- The same over a table of several variables (MADlib's multi-io layout:
-- a model of several inputs or outputs): after the buffer_id, n_x, then
-- each variable's bytea and its int[] shape, the n_x independent ones
-- (one per model input, in order) first, then the dependent ones (one
-- per output).  VARIADIC "any", so that every value comes as it is
-- stored (a TOAST pointer, read when the step reads its rows).
CREATE FUNCTION madlib_dl._gp_step_transition_io(state internal, step madlib_dl._step,
    buffer_id integer, n_x integer, VARIADIC "any")
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__gp_step_transition_io'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE AGGREGATE madlib_dl._gp_fit_segment_io(step madlib_dl._step, buffer_id integer,
                                              n_x integer, VARIADIC "any") (
    SFUNC = madlib_dl._gp_step_transition_io,
    STYPE = internal,
    FINALFUNC = madlib_dl._gp_fit_final,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);

CREATE AGGREGATE madlib_dl._gp_eval_segment_io(step madlib_dl._step, buffer_id integer,
                                               n_x integer, VARIADIC "any") (
    SFUNC = madlib_dl._gp_step_transition_io,
    STYPE = internal,
    FINALFUNC = madlib_dl._gp_eval_final,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);

-- The loss and metric sums of a model over the buffers of a packed table
-- (src/pg/api/evaluate.c): madlib_keras_evaluate's aggregate, run per
-- segment (grouped by __dist_key__) by _ep_evaluate (40_evaluate_predict.
-- sql).  The model comes as arguments, the same in every row (query
-- parameters); each buffer is evaluated as it comes, one at a time.  The
-- result: loss_sum, metric_sum (NULL when compile_params name no metric),
-- n and seconds of a madlib_dl._step_result; for a model of one input and
-- one output, state holds the sums of every metric of compile_params
-- (float8s, dl_metrics.h; NULL without a metric), for _metric_sums and
-- _metrics_values.
CREATE FUNCTION madlib_dl._evaluate_transition(state internal, model_arch json,
    model_weights bytea, compile_params text, buffer_id integer, dep bytea, indep bytea,
    dep_shape integer[], indep_shape integer[])
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__evaluate_transition'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE FUNCTION madlib_dl._evaluate_final(state internal)
RETURNS madlib_dl._step_result
AS 'MODULE_PATHNAME', 'madlib_dl__evaluate_final'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE AGGREGATE madlib_dl._evaluate_segment(model_arch json, model_weights bytea,
    compile_params text, buffer_id integer, dep bytea, indep bytea, dep_shape integer[],
    indep_shape integer[]) (
    SFUNC = madlib_dl._evaluate_transition,
    STYPE = internal,
    FINALFUNC = madlib_dl._evaluate_final,
    PARALLEL = SAFE
);

-- The same over a table of several variables: after the buffer_id, n_x,
-- then each variable's bytea and its int[] shape (as _gp_fit_segment_io);
-- the result also gives each output's sums.
CREATE FUNCTION madlib_dl._evaluate_transition_io(state internal, model_arch json,
    model_weights bytea, compile_params text, buffer_id integer, n_x integer, VARIADIC "any")
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__evaluate_transition_io'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE AGGREGATE madlib_dl._evaluate_segment_io(model_arch json, model_weights bytea,
    compile_params text, buffer_id integer, n_x integer, VARIADIC "any") (
    SFUNC = madlib_dl._evaluate_transition_io,
    STYPE = internal,
    FINALFUNC = madlib_dl._evaluate_final,
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
