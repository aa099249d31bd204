--
-- 00_create_extension: the extension is installed and well-formed.
--
-- Conventions for every regression test (sql/NN_*.sql):
--   * pg_regress creates one database and runs CREATE EXTENSION madlib_dl
--     in it once, before the first test (REGRESS_OPTS --load-extension).
--     The files then run in name order in that database.  A test may
--     assume only that the extension exists: it creates the tables it
--     needs and drops them (or its own schema) before it ends, and leaves
--     settings as it found them.  This file drops and re-creates the
--     extension at its end, so later files still find it.
--   * Errors: \set VERBOSITY terse for most, default (with the hint) where
--     the hint matters; \set SHOW_CONTEXT never; after an error,
--     \echo :LAST_ERROR_SQLSTATE shows its SQLSTATE.
--   * Print rounded numbers (round(x::numeric, 4)), never raw floats.
--
\set SHOW_CONTEXT never
-- installed once, in its own schema, at the version of the control file
SELECT e.extname, e.extversion, n.nspname, e.extrelocatable
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
 WHERE e.extname = 'madlib_dl';
SELECT madlib_dl.version();
-- the shared library loads (its GUC exists once it is loaded)
SELECT madlib_dl.weights_to_array('\x0000803f'::bytea);
SHOW madlib_dl.blas_threads;
-- some functions of the API exist with their MADlib signatures
SELECT p.oid::regprocedure
  FROM pg_proc p
 WHERE p.pronamespace = 'madlib_dl'::regnamespace
   AND p.proname IN ('load_keras_model', 'delete_keras_model', 'keras_model_summary')
 ORDER BY 1::text;
-- invariants every function of the extension keeps (each query lists the
-- offenders, so the expected output is empty):
-- (1) every function in the schema belongs to the extension
SELECT p.oid::regprocedure AS not_a_member
  FROM pg_proc p
 WHERE p.pronamespace = 'madlib_dl'::regnamespace
   AND NOT EXISTS (SELECT 1 FROM pg_depend d
                    WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                      AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e');
-- (2) nothing runs with the owner's rights but _px_forget, which only removes
-- the plproxy_tables rows of dropped tables (docs/security.md, "Privileges")
SELECT p.oid::regprocedure AS security_definer
  FROM pg_proc p
 WHERE p.pronamespace = 'madlib_dl'::regnamespace AND p.prosecdef;
-- (3) every PL/pgSQL function pins its search_path
SELECT p.oid::regprocedure AS unpinned_plpgsql
  FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
 WHERE p.pronamespace = 'madlib_dl'::regnamespace AND l.lanname = 'plpgsql'
   AND NOT coalesce(p.proconfig @> ARRAY['search_path=pg_catalog, pg_temp'], false);
-- a second CREATE is refused; DROP and CREATE again work
\set VERBOSITY terse
CREATE EXTENSION madlib_dl;
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
DROP EXTENSION madlib_dl;
SELECT count(*) AS functions_left
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'madlib_dl';
CREATE EXTENSION madlib_dl;
SELECT madlib_dl.version();
