-- madlib_dl install script, assembled from src/sql/*.sql by the Makefile.
-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION madlib_dl" to load this file. \quit

-- The extension's version, as written into every summary table.
CREATE FUNCTION madlib_dl.version() RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 'madlib_dl 0.2.0'::text $$;
