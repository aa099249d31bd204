-- scripts/upgrade/0.1.0--0.2.0.sql: the hand-written parts of
-- src/sql/releases/madlib_dl--0.1.0--0.2.0.sql, which scripts/make-upgrade.py
-- generates (docs/releasing.md).  Before the "generated" mark: the
-- extension's own tables, which keep their rows.  After it: the install
-- script's conditional blocks, run again as a fresh install runs them.

-- madlib_dl.plproxy_tables: 0.1.0 keyed the distributed tables by name
-- (schema_name, table_name); 0.2.0 keys them by the table's OID (relid,
-- first column), with row security, read by everyone, written through SECURITY DEFINER _px_forget (80_plproxy.sql).
-- The rows move to a table made exactly as a fresh install makes it, in
-- this transaction: every row whose table still exists keeps its cluster,
-- segment count and time; a row whose table is gone (0.1.0 never forgot
-- dropped tables) cannot be keyed by OID and is left out, with a NOTICE.
ALTER TABLE madlib_dl.plproxy_tables RENAME TO plproxy_tables_0_1_0;
ALTER TABLE madlib_dl.plproxy_tables_0_1_0 RENAME CONSTRAINT plproxy_tables_pkey TO plproxy_tables_0_1_0_pkey;
ALTER TABLE madlib_dl.plproxy_tables_0_1_0 RENAME CONSTRAINT plproxy_tables_num_segments_check TO plproxy_tables_0_1_0_num_segments_check;
DO $do$
BEGIN
    EXECUTE 'CREATE TABLE madlib_dl.plproxy_tables ('
            '    relid        regclass PRIMARY KEY,'
            '    schema_name  text NOT NULL,'
            '    table_name   text NOT NULL,'
            '    cluster      text NOT NULL,'
            '    num_segments integer NOT NULL CHECK (num_segments BETWEEN 1 AND 64),'
            '    distributed_at timestamptz NOT NULL DEFAULT now(),'
            '    UNIQUE (schema_name, table_name)'
            ')' || CASE WHEN to_regclass('pg_catalog.gp_segment_configuration') IS NOT NULL
                        THEN ' DISTRIBUTED REPLICATED' ELSE '' END;
END
$do$;
DO $do$
DECLARE
    gone bigint;
BEGIN
    INSERT INTO madlib_dl.plproxy_tables (relid, schema_name, table_name, cluster, num_segments, distributed_at)
    SELECT to_regclass(format('%I.%I', o.schema_name, o.table_name)), o.schema_name, o.table_name,
           o.cluster, o.num_segments, o.distributed_at
      FROM madlib_dl.plproxy_tables_0_1_0 o
     WHERE to_regclass(format('%I.%I', o.schema_name, o.table_name)) IS NOT NULL;
    SELECT count(*) INTO gone FROM madlib_dl.plproxy_tables_0_1_0 o
     WHERE to_regclass(format('%I.%I', o.schema_name, o.table_name)) IS NULL;
    IF gone > 0 THEN
        RAISE NOTICE 'madlib_dl.plproxy_tables: % rows name tables that no longer exist and were left out', gone;
    END IF;
END
$do$;
DROP TABLE madlib_dl.plproxy_tables_0_1_0;
ALTER TABLE madlib_dl.plproxy_tables ENABLE ROW LEVEL SECURITY;
CREATE POLICY plproxy_tables_read ON madlib_dl.plproxy_tables FOR SELECT USING (true);
CREATE POLICY plproxy_tables_owner ON madlib_dl.plproxy_tables FOR ALL
    USING (NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class c
                        WHERE c.oid = plproxy_tables.relid AND NOT pg_catalog.pg_has_role(c.relowner, 'USAGE')))
    WITH CHECK (EXISTS (SELECT 1 FROM pg_catalog.pg_class c
                         WHERE c.oid = plproxy_tables.relid AND pg_catalog.pg_has_role(c.relowner, 'USAGE')));
GRANT SELECT ON madlib_dl.plproxy_tables TO PUBLIC;

-- madlib_dl.model_versions and madlib_dl.model_deployments: the model
-- registry, new in 0.2.0 (45_serving.sql): made as a fresh install makes
-- them, empty, with their sequences (madlib_dl.model_versions_version_id_seq,
-- madlib_dl.model_deployments_deploy_id_seq) and indexes
-- (madlib_dl.model_versions_pkey, madlib_dl.model_versions_name_version_key,
-- madlib_dl.model_deployments_pkey, madlib_dl.model_deployments_name_deploy_id_idx).
CREATE TABLE madlib_dl.model_versions (
    version_id   bigserial PRIMARY KEY,
    name         text NOT NULL,
    version      integer NOT NULL,
    run_id       bigint NOT NULL,
    model_table  text NOT NULL,
    model_relid  oid NOT NULL,
    mst_key      integer,
    owner        name NOT NULL,
    trained_by   name NOT NULL,
    trained_at   timestamptz NOT NULL DEFAULT now(),
    function     text NOT NULL,
    source_table text,
    metrics      jsonb,
    params       jsonb,
    UNIQUE (name, version)
);
CREATE TABLE madlib_dl.model_deployments (
    deploy_id    bigserial PRIMARY KEY,
    name         text NOT NULL,
    version_id   bigint NOT NULL REFERENCES madlib_dl.model_versions,
    strategy     text,
    deployed_by  name NOT NULL,
    deployed_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ON madlib_dl.model_deployments (name, deploy_id);
REVOKE ALL ON madlib_dl.model_versions, madlib_dl.model_deployments FROM PUBLIC;
GRANT SELECT ON madlib_dl.model_versions, madlib_dl.model_deployments TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('madlib_dl.model_versions', '');
SELECT pg_catalog.pg_extension_config_dump('madlib_dl.model_deployments', '');
COMMENT ON TABLE madlib_dl.model_versions IS
'One row per model a fit, fit_multiple or madlib_keras_automl run wrote (fit_multiple: one per mst_key), '
'numbered per name (madlib_dl.model_name, else schema.table of the model table). See docs/serving.md.';
COMMENT ON TABLE madlib_dl.model_deployments IS
'Every madlib_dl.deploy, newest last; predict_row(name, ...) uses the newest row of the name. See docs/serving.md.';

-- @@ generated @@

-- 80_plproxy.sql: the proxy functions, now if PL/Proxy is installed here.
DO $do$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_language WHERE lanname = 'plproxy') THEN
        PERFORM madlib_dl.plproxy_setup();
    END IF;
END
$do$;

-- 90_greenplum.sql: the Greenplum / Cloudberry only functions.
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
