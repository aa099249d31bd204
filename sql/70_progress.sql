-- madlib_dl.fit_progress: the columns, and no row while nothing trains.
-- (A live run seen from another session is checked in test/t/010_progress.pl.)
SELECT attnum, attname, format_type(atttypid, atttypmod) AS type
FROM pg_attribute
WHERE attrelid = 'madlib_dl.fit_progress'::regclass AND attnum > 0
ORDER BY attnum;
SELECT count(*) AS runs_in_progress FROM madlib_dl.fit_progress;
SELECT obj_description('madlib_dl.fit_progress'::regclass, 'pg_class') LIKE '%shared_preload_libraries%' AS comment_names_preload;
SELECT has_table_privilege('public', 'madlib_dl.fit_progress', 'SELECT') AS public_can_read;
-- A label alone starts nothing.
SELECT madlib_dl._progress_label(ARRAY['public', 'some_model']);
SELECT count(*) AS runs_in_progress FROM madlib_dl.fit_progress;
-- The label is the output table the run will write: the caller must be
-- able to create it (CREATE on the schema) or, when it exists, own it.
-- A role cannot show its run under another role's table.
CREATE ROLE regress_progress_r;
CREATE SCHEMA regress_progress_s;
GRANT USAGE, CREATE ON SCHEMA regress_progress_s TO regress_progress_r;
GRANT USAGE ON SCHEMA madlib_dl TO regress_progress_r;
CREATE TABLE regress_progress_s.not_yours (model_weights bytea, model_arch json);
CREATE SCHEMA regress_progress_closed;
GRANT USAGE ON SCHEMA regress_progress_closed TO regress_progress_r;
SET ROLE regress_progress_r;
CREATE TABLE regress_progress_s.yours (model_weights bytea, model_arch json);
\set VERBOSITY terse
SELECT madlib_dl._progress_label(ARRAY['regress_progress_s', 'new_model']);   -- ok: may create it
SELECT madlib_dl._progress_label(ARRAY['regress_progress_s', 'yours']);       -- ok: owns it
SELECT madlib_dl._progress_label(ARRAY['regress_progress_s', 'not_yours']);   -- another role's table
SELECT madlib_dl._progress_label(ARRAY['regress_progress_closed', 'm']);      -- no CREATE there
SELECT madlib_dl._progress_label(ARRAY['public', 'm']);                       -- nor here (PostgreSQL 15)
SELECT madlib_dl._progress_label(ARRAY['regress_no_such_schema', 'm']);
SELECT madlib_dl._progress_label(ARRAY['regress_progress_s']);
SELECT madlib_dl._progress_label(ARRAY['regress_progress_s', NULL]);
SELECT madlib_dl._progress_label(NULL);                                         -- clears it
\set VERBOSITY default
RESET ROLE;
DROP SCHEMA regress_progress_s, regress_progress_closed CASCADE;
REVOKE USAGE ON SCHEMA madlib_dl FROM regress_progress_r;
DROP ROLE regress_progress_r;
