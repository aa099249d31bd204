-- progress.sql: live progress of fit, fit_multiple and madlib_keras_automl
-- (src/pg/api/progress.c).
-- The view madlib_dl.fit_progress reads slots in shared memory that the
-- running fit / fit_multiple rewrites after every iteration, so another
-- session sees each iteration as it ends (nothing is written to tables).
-- It needs shared_preload_libraries = 'madlib_dl' in postgresql.conf
-- (and a restart); without it the view is always empty.

-- One row per run in progress (internal; the view names the columns).
CREATE FUNCTION madlib_dl._progress(
    OUT run_id bigint, OUT pid integer, OUT database text, OUT username text,
    OUT function text, OUT source_table text, OUT output_table text,
    OUT iteration integer, OUT num_iterations integer,
    OUT models_done integer, OUT num_models integer,
    OUT best_metric double precision, OUT elapsed_seconds double precision,
    OUT seconds_left double precision,
    OUT started_at timestamptz, OUT updated_at timestamptz,
    OUT rung integer, OUT models_alive integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'madlib_dl__progress'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

-- The output table {schema, table} the next run started in this
-- transaction shows, for a driver whose C function is not given it.  NULL
-- clears it.  ERROR 42501 unless the caller may write that table (CREATE
-- on its schema, and ownership when it exists), so that no role can label
-- its run with another role's table.
CREATE FUNCTION madlib_dl._progress_label(output text[])
RETURNS void
AS 'MODULE_PATHNAME', 'madlib_dl__progress_label'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- true when madlib_dl is in shared_preload_libraries, so that
-- madlib_dl.fit_progress can show runs.
CREATE FUNCTION madlib_dl._progress_enabled()
RETURNS boolean
AS 'MODULE_PATHNAME', 'madlib_dl__progress_enabled'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE VIEW madlib_dl.fit_progress AS
SELECT run_id, pid, database, username, function, source_table, output_table,
       iteration, num_iterations, models_done, num_models, best_metric,
       elapsed_seconds, seconds_left, started_at, updated_at, rung, models_alive
FROM madlib_dl._progress();

COMMENT ON VIEW madlib_dl.fit_progress IS
'Runs of fit, fit_multiple and madlib_keras_automl in progress on this server, updated after every iteration '
'through shared memory. Needs shared_preload_libraries = ''madlib_dl'' (and a server restart); '
'otherwise it is always empty. See docs/functions/fit_progress.md.';

GRANT SELECT ON madlib_dl.fit_progress TO PUBLIC;
