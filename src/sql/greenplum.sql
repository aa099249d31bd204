-- greenplum.sql: the Greenplum / Cloudberry path (docs/greenplum.md).
--
-- On Greenplum there are no virtual segments (no ParallelContext): fit
-- and fit_multiple run their steps over the real segments through the
-- greenplum transport (src/pg/transport/greenplum.c), a round of steps per query
-- of the step aggregates (step.sql) grouped by __dist_key__.
--
-- What is created where:
--   * everywhere (PostgreSQL too, where the regression test
--     95_greenplum_install runs the greenplum transport against the
--     workers transport): _is_greenplum() and _gp_table_keys(source).
--     fit and fit_multiple choose the greenplum transport only when
--     _is_greenplum() (_job_transport, fit.sql);
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
-- Segments
-- ---------------------------------------------------------------------

-- The sorted __dist_key__ values of a packed table: its segments (the
-- greenplum transport's segment s is the s-th).
CREATE FUNCTION madlib_dl._gp_table_keys(source regclass)
RETURNS integer[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    keys integer[];
    nnull bigint;
BEGIN
    PERFORM madlib_dl._assert_trusted_table(source);
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
    -- themselves; for content 0 its smallest key, for each next content
    -- its smallest key above the previous one.  The keys ascend with the
    -- content ids, so the greenplum transport's segment s (the s-th key,
    -- _gp_table_keys) is content s, which holds the buffers b % nseg = s:
    -- virtual segment s on PostgreSQL.
    EXECUTE $f$
    CREATE FUNCTION madlib_dl._gp_segment_keys(OUT content integer, OUT dist_key integer)
    RETURNS SETOF record
    LANGUAGE plpgsql VOLATILE SECURITY INVOKER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        tmp text := madlib_dl._temp_table_name('madlib_dl_gp_keyspace');
        prev integer := -1;
        c integer;
    BEGIN
        EXECUTE format('CREATE TEMPORARY TABLE %I ON COMMIT DROP AS'
                       ' SELECT g::integer AS __dist_key__ FROM generate_series(0, 999999) g'
                       ' DISTRIBUTED BY (__dist_key__)', tmp);
        FOR c IN SELECT s.content FROM gp_segment_configuration s
                  WHERE s.role = 'p' AND s.content >= 0 ORDER BY s.content LOOP
            EXECUTE format('SELECT min(k.__dist_key__)::integer FROM pg_temp.%I k'
                           ' WHERE k.gp_segment_id = $1 AND k.__dist_key__ > $2', tmp)
               INTO dist_key USING c, prev;
            CONTINUE WHEN dist_key IS NULL;     -- _gp_place_buffers reports the missing key
            content := c;
            prev := dist_key;
            RETURN NEXT;
        END LOOP;
        EXECUTE format('DROP TABLE pg_temp.%I', tmp);
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
        -- The buffers were made for the summary's num_segments (all the
        -- primaries, or the first n of distribution_rules 'n').
        IF madlib_dl._table_oid(summ) IS NOT NULL AND EXISTS (
               SELECT 1 FROM pg_attribute a WHERE a.attrelid = madlib_dl._table_oid(summ)
                  AND a.attname = 'num_segments' AND NOT a.attisdropped) THEN
            EXECUTE format('SELECT num_segments FROM %I.%I', summ[1], summ[2]) INTO nprim;
            IF nprim BETWEEN 1 AND nseg THEN
                nseg := nprim;
                keys := keys[1:nseg];
            END IF;
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
