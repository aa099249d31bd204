-- plproxy.sql: fit and fit_multiple across several PostgreSQL servers
-- with PL/Proxy (docs/plproxy.md).
--
-- A cluster is a PL/Proxy SQL/MED server on the coordinator with one
-- partition per segment: partition k (option pk) is a connection to the
-- data node that holds segment k (the buffers with __dist_key__ = k) of
-- every table distributed over the cluster.  plproxy_create_cluster puts
-- segment k on node k % n_nodes and gives every partition its own
-- application_name, so that two segments of one node get two connections
-- and run at the same time.
--
-- fit and fit_multiple on a table distributed over a cluster use the
-- plproxy transport (src/pg/transport/plproxy.c) under the drivers of every
-- path (fit.c, fit_multiple.c).  Each round of steps is one proxy call
-- (_px_round -> _px_step): SPLIT the (segment, model state, model,
-- iteration) lists, RUN ON the segments; each node runs the step
-- (_px_node_run, src/pg/runtime/node.c) on its rows of that segment and
-- returns the result, keeping the partition in its backend for the
-- call's next hops when it fits the node's madlib_dl.partition_memory;
-- the call's end (_px_release) drops it.  The steps and the
-- schedule are those of every transport, so the weights are
-- byte-identical to training on one server on the same packed table.
-- Only model states move.
--
-- What is created where:
--   * always (no PL/Proxy needed): the catalog madlib_dl.plproxy_tables
--     (with its row security and the event trigger that forgets dropped
--     tables), the node-side functions _px_node_*, the coordinator
--     helpers (_px_round, _px_rethrow, _px_table_segments), and
--     plproxy_setup / plproxy_create_cluster / plproxy_distribute;
--   * only where the plproxy extension exists: the proxy functions
--     (LANGUAGE plproxy) _px_prepare, _px_insert, _px_publish, _px_step,
--     _px_release, _px_ping, made by madlib_dl.plproxy_setup(): at install time when
--     plproxy is already there, else call it after CREATE EXTENSION
--     plproxy.
--
-- Security (docs/plproxy.md, "Users and passwords"):
--   * PL/Proxy connects to the nodes as the session user, with that
--     user's mapping on the cluster's server; plproxy_create_cluster makes
--     no PUBLIC mapping.  The checks here look at session_user too.
--   * Values pasted into a libpq conninfo are quoted (_px_conninfo_value).
--   * plproxy_tables is keyed by table OID; a row can only be written for
--     a table the writer owns (row security), and dropping the table
--     removes it.
--   * plproxy_distribute checks every precondition (ownership, catalog
--     privileges, server USAGE and user mapping, then on every node the
--     schema, privileges and columns) before any row reaches a node's
--     table, and loads into a temporary table of each connection that is
--     moved into the real table only at the end.

-- ---------------------------------------------------------------------
-- Catalog: which packed tables live on which cluster
-- ---------------------------------------------------------------------

-- One row per distributed packed table (written by plproxy_distribute),
-- keyed by the coordinator table's OID: renaming the table keeps its row,
-- and a new table of the same name is not distributed.  schema_name and
-- table_name are the table's name on the data nodes (its name when it was
-- distributed).  The coordinator keeps the table itself (its rows are not
-- read by training; they may be truncated) and its _summary.
-- (Replicated on Greenplum: madlib_dl._replicated_clause.)
DO $do$
BEGIN
    EXECUTE 'CREATE TABLE madlib_dl.plproxy_tables ('
            '    relid        regclass PRIMARY KEY,'
            '    schema_name  text NOT NULL,'
            '    table_name   text NOT NULL,'
            '    cluster      text NOT NULL,'
            '    num_segments integer NOT NULL CHECK (num_segments BETWEEN 1 AND '
            || madlib_dl._job_limit('segments') || '),'
            '    distributed_at timestamptz NOT NULL DEFAULT now(),'
            '    UNIQUE (schema_name, table_name)'
            ')' || madlib_dl._replicated_clause();
END
$do$;
-- Row security: everyone reads every row; a row may be written only for a
-- table whose owner's privileges the writer has, and deleted also when its
-- table no longer exists (the event trigger below, run by whoever drops
-- the table).  INSERT and UPDATE are not granted: plproxy_distribute is
-- for the administrator, who may GRANT them to loaders (still limited to
-- their own tables by the policy).
ALTER TABLE madlib_dl.plproxy_tables ENABLE ROW LEVEL SECURITY;
CREATE POLICY plproxy_tables_read ON madlib_dl.plproxy_tables FOR SELECT USING (true);
CREATE POLICY plproxy_tables_owner ON madlib_dl.plproxy_tables FOR ALL
    USING (NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class c
                        WHERE c.oid = plproxy_tables.relid AND NOT pg_catalog.pg_has_role(c.relowner, 'USAGE')))
    WITH CHECK (EXISTS (SELECT 1 FROM pg_catalog.pg_class c
                         WHERE c.oid = plproxy_tables.relid AND pg_catalog.pg_has_role(c.relowner, 'USAGE')));
-- PUBLIC may only read it (docs/security.md, "Privileges"): with DELETE,
-- any role could LOCK it in ACCESS EXCLUSIVE mode and hang every DROP
-- TABLE of the database (the event trigger below) and every fit.  Rows of
-- dropped tables are removed through _px_forget, SECURITY DEFINER.
GRANT SELECT ON madlib_dl.plproxy_tables TO PUBLIC;

-- Remove the rows of plproxy_tables whose table no longer exists: those
-- of relids, or every such row when relids is NULL.  SECURITY DEFINER (the
-- extension's owner), so that no role needs a write privilege on the
-- registry; a row of a table that still exists is never touched, so it
-- needs no ownership check.  Returns the number of rows removed.
CREATE FUNCTION madlib_dl._px_forget(relids oid[])
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    DELETE FROM madlib_dl.plproxy_tables t
     WHERE (relids IS NULL OR t.relid OPERATOR(pg_catalog.=) ANY (relids))
       AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) t.relid);
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

-- Event trigger: forget the tables that a DROP removes.  Runs as the role
-- that drops; it never makes a DROP fail (a role without USAGE on schema
-- madlib_dl cannot reach the catalog: plproxy_distribute sweeps such
-- leftovers, which match no table).
CREATE FUNCTION madlib_dl._px_forget_dropped()
RETURNS event_trigger
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dropped oid[];
BEGIN
    IF has_schema_privilege('madlib_dl', 'USAGE') THEN
        -- The dropped tables are read first, in a query of their own: a
        -- join of pg_event_trigger_dropped_objects() with the (distributed)
        -- catalog table would run the function on a Greenplum segment,
        -- outside the event trigger, and fail every DROP TABLE (39P03).
        SELECT array_agg(d.objid) INTO dropped
          FROM pg_event_trigger_dropped_objects() d
         WHERE d.classid = 'pg_class'::regclass AND d.objsubid = 0;
        IF dropped IS NOT NULL THEN
            PERFORM madlib_dl._px_forget(dropped);
        END IF;
    END IF;
END
$$;
CREATE EVENT TRIGGER madlib_dl_plproxy_forget ON sql_drop
    EXECUTE PROCEDURE madlib_dl._px_forget_dropped();

-- The cluster a packed table is distributed over, or NULL (not distributed).
CREATE FUNCTION madlib_dl._px_cluster_of(source regclass)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT t.cluster FROM madlib_dl.plproxy_tables t WHERE t.relid = source $$;

-- value quoted for a libpq conninfo: in single quotes, with \ and '
-- escaped by a backslash, so that no value can add a keyword.
CREATE FUNCTION madlib_dl._px_conninfo_value(value text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT '''' || replace(replace(value, E'\\', E'\\\\'), '''', E'\\''') || '''' $$;

-- ERROR unless the session user may use PL/Proxy cluster: USAGE on its
-- server and a user mapping (its own or PUBLIC).  PL/Proxy checks both
-- for the session user (SET ROLE does not change whom it connects as),
-- but only once it is running; this says so before any work.
CREATE FUNCTION madlib_dl._px_check_access(cluster text)
RETURNS void
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT has_server_privilege(session_user, cluster, 'USAGE') THEN
        RAISE EXCEPTION 'permission denied for PL/Proxy cluster "%": role "%" has no USAGE on its server',
                        cluster, session_user
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('The server''s owner can run GRANT USAGE ON FOREIGN SERVER %I TO %I.',
                                cluster, session_user);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_user_mappings m
                    WHERE m.srvname = cluster AND (m.umuser = 0 OR m.usename = session_user)) THEN
        RAISE EXCEPTION 'role "%" has no user mapping for PL/Proxy cluster "%"', session_user, cluster
            USING ERRCODE = 'undefined_object',
                  HINT = format('Create one with the role''s own credentials on the data nodes: '
                                'CREATE USER MAPPING FOR %I SERVER %I OPTIONS (user ''...'', password ''...'') '
                                '(docs/plproxy.md).', session_user, cluster);
    END IF;
END
$$;

-- The cluster name, for the proxy functions' CLUSTER statement.
CREATE FUNCTION madlib_dl._px_cluster_name(cluster text)
RETURNS text
LANGUAGE sql IMMUTABLE
AS $$ SELECT cluster $$;

-- Number of partitions (p0, p1, ... options) of PL/Proxy server cluster;
-- ERROR when there is no such server.
CREATE FUNCTION madlib_dl._px_partitions(cluster text)
RETURNS integer
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer;
BEGIN
    SELECT count(*) FILTER (WHERE o ~ '^p[0-9]+=') INTO n
      FROM pg_foreign_server s
      JOIN pg_foreign_data_wrapper w ON w.oid = s.srvfdw AND w.fdwname = 'plproxy'
      LEFT JOIN LATERAL unnest(s.srvoptions) o ON true
     WHERE s.srvname = cluster
     GROUP BY s.oid;
    IF n IS NULL THEN
        RAISE EXCEPTION 'PL/Proxy cluster "%" does not exist', cluster
            USING ERRCODE = 'undefined_object',
                  HINT = 'Create it with madlib_dl.plproxy_create_cluster, or CREATE SERVER ... FOREIGN DATA WRAPPER plproxy.';
    END IF;
    RETURN n;
END
$$;

-- ---------------------------------------------------------------------
-- Node side (run on the data nodes by the proxy functions)
-- ---------------------------------------------------------------------

-- The name of this data node in messages: its cluster_name and database.
CREATE FUNCTION madlib_dl._px_node_label()
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT coalesce(current_setting('cluster_name', true), '') || ' ' || current_database() $$;

-- A node's copy of table tbl = {schema, name}; ERROR when absent.
CREATE FUNCTION madlib_dl._px_node_table(tbl text[])
RETURNS regclass
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass;
BEGIN
    rel := to_regclass(format('%I.%I', tbl[1], tbl[2]));
    IF rel IS NULL THEN
        RAISE EXCEPTION 'table "%.%" does not exist on data node %', tbl[1], tbl[2], madlib_dl._px_node_label()
            USING ERRCODE = 'undefined_table',
                  HINT = 'Distribute the packed table with madlib_dl.plproxy_distribute.';
    END IF;
    RETURN rel;
END
$$;

-- Store the bytea columns of rel (the buffers) as the preprocessor does:
-- out of line and uncompressed (compressing floats costs more than
-- writing them, and training reads such buffers in slices).  Only when
-- the connecting role owns rel (ALTER TABLE needs it); an existing table
-- of another owner keeps its storage.
CREATE FUNCTION madlib_dl._px_node_storage(rel regclass)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_class k WHERE k.oid = rel AND pg_has_role(k.relowner, 'USAGE')) THEN
        RETURN;
    END IF;
    FOR c IN SELECT a.attname FROM pg_attribute a
              WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped
                AND a.atttypid = 'bytea'::regtype AND a.attstorage <> 'e' LOOP
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET STORAGE EXTERNAL', rel, c);
    END LOOP;
END
$$;

-- The load of plproxy_distribute goes through a temporary table of the
-- connection (one per partition): pg_temp.madlib_dl_px_load, with the
-- columns colnames of types coltypes.  Nothing of the load is in the
-- node's table before _px_node_publish, and a connection that breaks
-- takes its rows with it.

-- Check that this node can take table tbl (columns colnames of types
-- coltypes) for the connecting role, writing nothing: the schema exists
-- and may be used; the table either does not exist and may be created,
-- or has those columns and may be read, inserted into and deleted from;
-- temporary tables may be made.  Then make an empty load table.  Runs
-- once per partition.
CREATE FUNCTION madlib_dl._px_node_prepare(cluster text, tbl text[], colnames text[],
    coltypes text[], segs integer[])
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
SET client_min_messages = warning
AS $$
DECLARE
    node text := madlib_dl._px_node_label();
    nsp regnamespace := to_regnamespace(quote_ident(tbl[1]));
    rel regclass;
    bad text;
    priv text;
BEGIN
    IF nsp IS NULL THEN
        RAISE EXCEPTION 'schema "%" does not exist on data node %', tbl[1], node
            USING ERRCODE = 'invalid_schema_name',
                  HINT = 'Create the schema on every data node first, owned by or granted to the loading role.';
    END IF;
    IF NOT has_schema_privilege(nsp, 'USAGE') THEN
        RAISE EXCEPTION 'permission denied for schema "%" on data node % (role "%")', tbl[1], node, current_user
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Grant USAGE on the schema to the role on every data node.';
    END IF;
    rel := to_regclass(format('%I.%I', tbl[1], tbl[2]));
    IF rel IS NULL THEN
        IF NOT has_schema_privilege(nsp, 'CREATE') THEN
            RAISE EXCEPTION 'permission denied to create table "%.%" on data node % (role "%")',
                            tbl[1], tbl[2], node, current_user
                USING ERRCODE = 'insufficient_privilege',
                      HINT = 'Grant CREATE on the schema to the role on every data node, or create the table there.';
        END IF;
    ELSE
        FOREACH priv IN ARRAY ARRAY['SELECT', 'INSERT', 'DELETE'] LOOP
            IF NOT has_table_privilege(rel, priv) THEN
                RAISE EXCEPTION 'permission denied: role "%" may not % table "%.%" on data node %',
                                current_user, priv, tbl[1], tbl[2], node
                    USING ERRCODE = 'insufficient_privilege',
                          HINT = 'Grant SELECT, INSERT and DELETE on the table to the role on every data node.';
            END IF;
        END LOOP;
        SELECT string_agg(format('%s %s', c.n, c.t), ', ' ORDER BY c.i) INTO bad
          FROM unnest(colnames, coltypes) WITH ORDINALITY AS c(n, t, i)
         WHERE NOT EXISTS (SELECT 1 FROM pg_attribute a
                            WHERE a.attrelid = rel AND a.attname = c.n AND a.attnum > 0
                              AND NOT a.attisdropped AND a.atttypid = c.t::regtype);
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'table "%.%" on data node % lacks the columns %', tbl[1], tbl[2], node, bad
                USING ERRCODE = 'datatype_mismatch',
                      HINT = 'It is not a copy of this packed table: drop it on the node, or distribute under another name.';
        END IF;
    END IF;
    IF NOT has_database_privilege(current_database(), 'TEMPORARY') THEN
        RAISE EXCEPTION 'permission denied to create temporary tables on data node % (role "%")', node, current_user
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Grant TEMPORARY on the database to the role on every data node.';
    END IF;
    DROP TABLE IF EXISTS pg_temp.madlib_dl_px_load;
    -- the buffers stored as the preprocessor stores them: out of line,
    -- uncompressed (compressing 1 GB of floats costs more than writing it,
    -- and training reads such buffers in slices)
    EXECUTE format('CREATE TEMPORARY TABLE madlib_dl_px_load (%s)',
                   (SELECT string_agg(format('%I %s', c.n, c.t::regtype::text), ', ' ORDER BY c.i)
                      FROM unnest(colnames, coltypes) WITH ORDINALITY AS c(n, t, i)));
    PERFORM madlib_dl._px_node_storage('pg_temp.madlib_dl_px_load'::regclass);
    RETURN 0;
END
$$;

-- The load table of this connection; ERROR when it is gone (the
-- connection was replaced since _px_node_prepare).
CREATE FUNCTION madlib_dl._px_node_load_table(tbl text[])
RETURNS regclass
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF to_regclass('pg_temp.madlib_dl_px_load') IS NULL THEN
        RAISE EXCEPTION 'the load of table "%.%" on data node % lost its connection', tbl[1], tbl[2],
                        madlib_dl._px_node_label()
            USING ERRCODE = 'connection_failure',
                  HINT = 'Run madlib_dl.plproxy_distribute again; the node''s table was not changed.';
    END IF;
    RETURN 'pg_temp.madlib_dl_px_load'::regclass;
END
$$;

-- Part k (from 1) of a bundle of bytea values: each value as its 8-byte
-- big-endian length (-1: NULL) and its bytes.  22023 for a bundle that
-- does not hold k values.
CREATE FUNCTION madlib_dl._px_bundle_part(bundle bytea, k integer)
RETURNS bytea
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    off bigint := 1;
    len bigint;
BEGIN
    FOR i IN 1 .. k LOOP
        IF off + 8 > octet_length(bundle) + 1 THEN
            RAISE EXCEPTION 'a bundle of % bytes holds no value %', octet_length(bundle), k
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Call madlib_dl.plproxy_distribute, which sends the batches.';
        END IF;
        len := ('x' || encode(substring(bundle FROM off::integer FOR 8), 'hex'))::bit(64)::bigint;
        off := off + 8;
        IF len < -1 OR off + greatest(len, 0) > octet_length(bundle) + 1 THEN
            RAISE EXCEPTION 'a bundle of % bytes holds a value of % bytes at byte %', octet_length(bundle), len, off
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Call madlib_dl.plproxy_distribute, which sends the batches.';
        END IF;
        IF i = k THEN
            RETURN CASE WHEN len < 0 THEN NULL ELSE substring(bundle FROM off::integer FOR len::integer) END;
        END IF;
        off := off + greatest(len, 0);
    END LOOP;
    RETURN NULL;
END
$$;

-- Add rows to the load table: row i is rows[i] (the columns that are not
-- bytea, as JSON) with its bytea columns bcols (the buffers, which
-- PL/Proxy sends in binary): bcols[1] = b1[i], and bcols[2] = b2[i] for a
-- table of two (one variable of each kind), else b2[i] is the bundle
-- (_px_bundle_part) of bcols[2..] (a table of several variables).
CREATE FUNCTION madlib_dl._px_node_insert(cluster text, tbl text[], segs integer[], rows json[],
    bcols text[], b1 bytea[], b2 bytea[])
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass := madlib_dl._px_node_load_table(tbl);
    cols text;
    vals text;
    nb integer;
    n bigint;
BEGIN
    SELECT string_agg(format('%I', a.attname), ', ' ORDER BY a.attnum),
           string_agg(CASE WHEN a.attname = bcols[1] THEN 'u.v1'
                           WHEN a.attname = bcols[2] AND cardinality(bcols) = 2 THEN 'u.v2'
                           WHEN a.attname = ANY (bcols[2:])
                           THEN format('madlib_dl._px_bundle_part(u.v2, %s)',
                                       array_position(bcols[2:], a.attname::text))
                           ELSE format('(u.r).%I', a.attname) END, ', ' ORDER BY a.attnum),
           count(*) FILTER (WHERE a.attname = ANY (bcols) AND a.atttypid = 'bytea'::regtype)
      INTO cols, vals, nb
      FROM pg_attribute a WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped;
    IF coalesce(cardinality(bcols), 0) < 2 OR nb <> cardinality(bcols)
       OR cardinality(rows) IS DISTINCT FROM cardinality(b1) OR cardinality(rows) IS DISTINCT FROM cardinality(b2) THEN
        RAISE EXCEPTION 'a batch of rows for table "%.%" names bytea columns % of its columns, with % rows, % and % buffers',
                        tbl[1], tbl[2], bcols, cardinality(rows), cardinality(b1), cardinality(b2)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Call madlib_dl.plproxy_distribute, which sends the batches.';
    END IF;
    EXECUTE format('INSERT INTO %1$s (%2$s) SELECT %3$s'
                   '  FROM (SELECT json_populate_record(NULL::%1$s, x.j) AS r, x.v1, x.v2'
                   '          FROM unnest($1, $2, $3) AS x(j, v1, v2)) u', rel, cols, vals)
    USING rows, b1, b2;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

-- Move the loaded segments segs into table tbl, in one transaction:
-- create tbl (columns colnames of types coltypes) if absent, check that
-- the load table holds counts[i] rows of segment segs[i], replace those
-- segments' rows of tbl with them, and drop the load table.
CREATE FUNCTION madlib_dl._px_node_publish(cluster text, tbl text[], colnames text[], coltypes text[],
    segs integer[], counts bigint[])
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
SET client_min_messages = warning
AS $$
DECLARE
    load regclass := madlib_dl._px_node_load_table(tbl);
    cols text;
    bad text;
    n bigint;
BEGIN
    EXECUTE format('SELECT string_agg(format(''segment %%s: %%s rows of %%s'', x.s, coalesce(l.n, 0), x.c), '', '')'
                   '  FROM unnest($1, $2) AS x(s, c)'
                   '  LEFT JOIN (SELECT __dist_key__ AS s, count(*) AS n FROM %s GROUP BY 1) l USING (s)'
                   ' WHERE coalesce(l.n, 0) <> x.c', load)
       INTO bad USING segs, counts;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'the load of table "%.%" on data node % is incomplete: %', tbl[1], tbl[2],
                        madlib_dl._px_node_label(), bad
            USING ERRCODE = 'connection_failure',
                  HINT = 'Run madlib_dl.plproxy_distribute again; the node''s table was not changed.';
    END IF;
    -- Two partitions of this node may create the table at once: the one
    -- that loses waits for the other's commit and gets unique_violation
    -- (or duplicate_table), then finds the table made.  No advisory lock:
    -- any role can take one, and would hang the load (docs/security.md).
    SELECT string_agg(format('%I %s', c.n, c.t::regtype::text), ', ' ORDER BY c.i) INTO cols
      FROM unnest(colnames, coltypes) WITH ORDINALITY AS c(n, t, i);
    BEGIN
        EXECUTE format('CREATE TABLE IF NOT EXISTS %I.%I (%s)', tbl[1], tbl[2], cols);
    EXCEPTION WHEN unique_violation OR duplicate_table THEN
        NULL;
    END;
    PERFORM madlib_dl._px_node_storage(madlib_dl._px_node_table(tbl));
    PERFORM madlib_dl._assert_writable_table(madlib_dl._px_node_table(tbl), 'a packed table distributed by plproxy_distribute');
    SELECT string_agg(format('%I', c), ', ') INTO cols FROM unnest(colnames) c;
    EXECUTE format('DELETE FROM %s WHERE __dist_key__ = ANY($1)', madlib_dl._px_node_table(tbl)) USING segs;
    EXECUTE format('INSERT INTO %s (%s) SELECT %s FROM %s', madlib_dl._px_node_table(tbl), cols, cols, load);
    GET DIAGNOSTICS n = ROW_COUNT;
    DROP TABLE pg_temp.madlib_dl_px_load;
    RETURN n;
END
$$;

-- The steps of one round on this node: for each i, the step (_px_node_run,
-- src/pg/runtime/node.c: training when train, else evaluation) with
-- (states[i], archs[i], compiles[i], fits[i], iterations[i], segs[i],
-- use_caching) on segment segs[i] of table source; its
-- madlib_dl._step_result as columns (state NULL: unchanged, as for a
-- segment without rows here).  call_id names the fit or fit_multiple call:
-- a partition cached on its first hop serves the call's next hops.
CREATE FUNCTION madlib_dl._px_node_step(cluster text, source text[], x_cols text[], y_cols text[],
    train boolean, segs integer[], states bytea[], archs text[], compiles text[], fits text[],
    iterations integer[], call_id bigint, use_caching boolean,
    OUT seg integer, OUT state bytea, OUT loss_sum double precision, OUT metric_sum double precision,
    OUT n bigint, OUT seconds double precision, OUT diverged text,
    OUT output_loss_sums double precision[], OUT output_metric_sums double precision[],
    OUT metric_sums double precision[])
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    k integer := coalesce(cardinality(segs), 0);
    rel regclass;
BEGIN
    IF train IS NULL OR x_cols IS NULL OR y_cols IS NULL OR call_id IS NULL
       OR ARRAY[cardinality(states), cardinality(archs), cardinality(compiles), cardinality(fits),
                cardinality(iterations)] <> array_fill(k, ARRAY[5]) THEN
        RAISE EXCEPTION 'a round of steps needs train, x_cols, y_cols, call_id and % elements in every list', k
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Call fit or fit_multiple, which run the rounds.';
    END IF;
    rel := madlib_dl._px_node_table(source);
    FOR i IN 1 .. k LOOP
        seg := segs[i];
        SELECT (r).state, (r).loss_sum, (r).metric_sum, (r).n, (r).seconds, (r).diverged,
               (r).output_loss_sums, (r).output_metric_sums, (r).metric_sums
          INTO state, loss_sum, metric_sum, n, seconds, diverged, output_loss_sums, output_metric_sums,
               metric_sums
          FROM (SELECT madlib_dl._px_node_run(call_id, rel, x_cols, y_cols, train, segs[i],
                    ROW(states[i], archs[i], compiles[i], fits[i], iterations[i], segs[i],
                        use_caching)::madlib_dl._step) AS r) s;
        RETURN NEXT;
    END LOOP;
END
$$;

-- The step of one segment on this node (src/pg/runtime/node.c); NULL for
-- a segment without rows.  x_cols and y_cols: the packed table's
-- variables (several for a model of several inputs or outputs).
CREATE FUNCTION madlib_dl._px_node_run(call_id bigint, rel regclass, x_cols text[], y_cols text[],
    train boolean, seg integer, step madlib_dl._step)
RETURNS madlib_dl._step_result
AS 'MODULE_PATHNAME', 'madlib_dl__px_node_run'
LANGUAGE C VOLATILE;

-- Drop this backend's partitions of call call_id (NULL: of every call).
CREATE FUNCTION madlib_dl._px_node_forget(call_id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'madlib_dl__px_node_release'
LANGUAGE C VOLATILE;

-- The partitions this backend keeps for a call, and how many steps used each.
CREATE FUNCTION madlib_dl._px_node_cached(OUT call_id bigint, OUT relid oid, OUT seg integer,
    OUT rows bigint, OUT bytes bigint, OUT hits bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'madlib_dl__px_node_cached'
LANGUAGE C VOLATILE;

-- The end of call call_id on this node (run on every partition by _px_release).
CREATE FUNCTION madlib_dl._px_node_release(cluster text, call_id bigint)
RETURNS integer
LANGUAGE sql VOLATILE
AS $$ SELECT madlib_dl._px_node_forget(call_id) $$;

-- Answer a ping of partition part (its node is up and has madlib_dl).
CREATE FUNCTION madlib_dl._px_node_ping(cluster text, part integer)
RETURNS integer
LANGUAGE sql STABLE
AS $$ SELECT part $$;

-- ---------------------------------------------------------------------
-- Coordinator: the proxy functions (need the plproxy extension)
-- ---------------------------------------------------------------------

-- Create (or replace) the PL/Proxy functions.  Run after
-- CREATE EXTENSION plproxy on the coordinator (the install script runs
-- it when plproxy is already there).
CREATE FUNCTION madlib_dl.plproxy_setup()
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    f text;
    sig text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_language WHERE lanname = 'plproxy') THEN
        RAISE EXCEPTION 'language plproxy does not exist'
            USING ERRCODE = 'undefined_object',
                  HINT = 'Install postgresql-15-plproxy and run CREATE EXTENSION plproxy on the coordinator first.';
    END IF;
    EXECUTE $f$
    CREATE OR REPLACE FUNCTION madlib_dl._px_prepare(cluster text, tbl text[], colnames text[],
        coltypes text[], segs integer[])
    RETURNS SETOF integer AS $p$
        CLUSTER madlib_dl._px_cluster_name(cluster);
        SPLIT segs;
        RUN ON segs;
        TARGET madlib_dl._px_node_prepare;
    $p$ LANGUAGE plproxy
    $f$;
    EXECUTE $f$
    CREATE OR REPLACE FUNCTION madlib_dl._px_insert(cluster text, tbl text[], segs integer[], rows json[],
        bcols text[], b1 bytea[], b2 bytea[])
    RETURNS SETOF integer AS $p$
        CLUSTER madlib_dl._px_cluster_name(cluster);
        SPLIT segs, rows, b1, b2;
        RUN ON segs;
        TARGET madlib_dl._px_node_insert;
    $p$ LANGUAGE plproxy
    $f$;
    EXECUTE $f$
    CREATE OR REPLACE FUNCTION madlib_dl._px_publish(cluster text, tbl text[], colnames text[],
        coltypes text[], segs integer[], counts bigint[])
    RETURNS SETOF bigint AS $p$
        CLUSTER madlib_dl._px_cluster_name(cluster);
        SPLIT segs, counts;
        RUN ON segs;
        TARGET madlib_dl._px_node_publish;
    $p$ LANGUAGE plproxy
    $f$;
    EXECUTE $f$
    CREATE OR REPLACE FUNCTION madlib_dl._px_step(cluster text, source text[], x_cols text[], y_cols text[],
        train boolean, segs integer[], states bytea[], archs text[], compiles text[], fits text[],
        iterations integer[], call_id bigint, use_caching boolean,
        OUT seg integer, OUT state bytea, OUT loss_sum double precision, OUT metric_sum double precision,
        OUT n bigint, OUT seconds double precision, OUT diverged text,
        OUT output_loss_sums double precision[], OUT output_metric_sums double precision[],
    OUT metric_sums double precision[])
    RETURNS SETOF record AS $p$
        CLUSTER madlib_dl._px_cluster_name(cluster);
        SPLIT segs, states, archs, compiles, fits, iterations;
        RUN ON segs;
        TARGET madlib_dl._px_node_step;
    $p$ LANGUAGE plproxy
    $f$;
    EXECUTE $f$
    CREATE OR REPLACE FUNCTION madlib_dl._px_release(cluster text, call_id bigint)
    RETURNS SETOF integer AS $p$
        CLUSTER madlib_dl._px_cluster_name(cluster);
        RUN ON ALL;
        TARGET madlib_dl._px_node_release;
    $p$ LANGUAGE plproxy
    $f$;
    EXECUTE $f$
    CREATE OR REPLACE FUNCTION madlib_dl._px_ping(cluster text, part integer)
    RETURNS integer AS $p$
        CLUSTER madlib_dl._px_cluster_name(cluster);
        RUN ON part;
        TARGET madlib_dl._px_node_ping;
    $p$ LANGUAGE plproxy
    $f$;
    -- members of the extension, so that DROP EXTENSION drops them too
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'madlib_dl') THEN
        FOREACH f IN ARRAY ARRAY['_px_prepare', '_px_insert', '_px_publish', '_px_step', '_px_release',
                                 '_px_ping'] LOOP
            SELECT p.oid::regprocedure::text INTO sig FROM pg_proc p
             WHERE p.proname = f AND p.pronamespace = 'madlib_dl'::regnamespace;
            IF NOT EXISTS (SELECT 1 FROM pg_depend d
                            WHERE d.classid = 'pg_proc'::regclass AND d.objid = sig::regprocedure
                              AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e') THEN
                EXECUTE format('ALTER EXTENSION madlib_dl ADD FUNCTION %s', sig);
            END IF;
        END LOOP;
    END IF;
END
$$;

-- Raise again an error a proxy call of cluster gave (sqlstate, msg,
-- detail, hint), naming the data nodes that fail: every partition is
-- pinged; those that do not answer are reported with their conninfo
-- (less any password) as a connection_failure.  Otherwise the error is
-- raised again as it was, with the cluster named in its context.
CREATE FUNCTION madlib_dl._px_rethrow(cluster text, state text, msg text, detail text, hint text)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    down text[] := '{}';
    conn text;
BEGIN
    FOR k IN 0 .. madlib_dl._px_partitions(cluster) - 1 LOOP
        BEGIN
            PERFORM madlib_dl._px_ping(cluster, k);
        EXCEPTION WHEN OTHERS THEN
            -- a value is 'quoted' or runs to the next blank; \ escapes a character
            SELECT regexp_replace(substr(o, length(format('p%s=', k)) + 1),
                                  '\s*(password|application_name)\s*=\s*(''(\\.|[^''\\])*''|(\\.|[^\s\\])+)', '', 'g')
              INTO conn
              FROM pg_foreign_server s, unnest(s.srvoptions) o
             WHERE s.srvname = cluster AND o LIKE format('p%s=%%', k);
            down := down || format('segment %s on node "%s"', k, conn);
        END;
    END LOOP;
    IF cardinality(down) > 0 THEN
        RAISE EXCEPTION 'data node of PL/Proxy cluster "%" failed: %', cluster, array_to_string(down, ', ')
            USING ERRCODE = 'connection_failure',
                  DETAIL = msg,
                  HINT = 'Bring the node back (or fix its conninfo in the cluster''s server options) and run the call again; nothing was written on the coordinator.';
    END IF;
    RAISE EXCEPTION USING ERRCODE = state, MESSAGE = format('PL/Proxy cluster "%s": %s', cluster, msg),
                          DETAIL = coalesce(detail, ''), HINT = coalesce(hint, '');
END
$$;

-- One round of the plproxy transport (src/pg/transport/plproxy.c): the proxy
-- call _px_step with these lists, each segment's result as a
-- madlib_dl._step_result (NULL for a segment without rows).  An error of
-- the call is raised again by _px_rethrow, naming the nodes that fail.
-- call_id names the training call, use_caching is its flag.
CREATE FUNCTION madlib_dl._px_round(cluster text, source text[], x_cols text[], y_cols text[],
    train boolean, segs integer[], states bytea[], archs text[], compiles text[], fits text[],
    iterations integer[], call_id bigint, use_caching boolean)
RETURNS TABLE (seg integer, result madlib_dl._step_result)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e_state text;
    e_msg text;
    e_detail text;
    e_hint text;
BEGIN
    RETURN QUERY
        SELECT t.seg, CASE WHEN t.n IS NOT NULL THEN
                   ROW(t.state, t.loss_sum, t.metric_sum, t.n, t.seconds, t.diverged,
                       t.output_loss_sums, t.output_metric_sums, t.metric_sums)::madlib_dl._step_result
               END
          FROM madlib_dl._px_step(cluster, source, x_cols, y_cols, train, segs, states, archs, compiles,
                                  fits, iterations, call_id, use_caching) t;
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT,
                            e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
    PERFORM madlib_dl._px_rethrow(cluster, e_state, e_msg, e_detail, e_hint);
END
$$;

-- The end of training call call_id over cluster: every partition drops
-- the partitions it kept for the call (_px_release).  A failure is a
-- WARNING: the training is done, and the nodes drop them at their next
-- call or when their connections close.
CREATE FUNCTION madlib_dl._px_end_call(cluster text, call_id bigint)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM madlib_dl._px_release(cluster, call_id);
EXCEPTION WHEN OTHERS THEN
    RAISE WARNING 'PL/Proxy cluster "%": the data nodes could not drop the partitions of this call: %',
                  cluster, SQLERRM
        USING HINT = 'They drop them at their next call, or when their connections close.';
END
$$;

-- Define cluster: a PL/Proxy server with num_segments partitions;
-- partition (segment) k connects to nodes[k % n_nodes + 1] (a libpq
-- conninfo, e.g. 'host=db1 port=5432 dbname=prod'), with its own
-- application_name (madlib_dl_<cluster>_p<k>, the cluster name reduced to
-- letters, digits and _, and quoted: it cannot add keywords).  The nodes'
-- conninfos may not name a user or password.  modular_mapping is on: any
-- segment count works.
-- No user mapping is made: create one per role that trains, with that
-- role's own credentials on the nodes, and GRANT USAGE ON FOREIGN SERVER
-- to it (docs/plproxy.md: never a PUBLIC mapping with passwords in the
-- server's .pgpass).
CREATE FUNCTION madlib_dl.plproxy_create_cluster(cluster text, nodes text[], num_segments integer)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    opts text := 'modular_mapping ''1''';
    nn integer := coalesce(array_length(nodes, 1), 0);
BEGIN
    IF cluster IS NULL OR cluster = '' OR octet_length(cluster) >= 64 THEN
        RAISE EXCEPTION 'cluster must be a name of 1 to 63 bytes, got %', coalesce(quote_literal(cluster), 'NULL')
            USING ERRCODE = 'invalid_name',
                  HINT = 'The cluster is a foreign server: give a valid server name.';
    END IF;
    IF nn < 1 OR array_position(nodes, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'nodes must hold at least one conninfo, got %', coalesce(nodes::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give one libpq conninfo per data node.';
    END IF;
    IF EXISTS (SELECT 1 FROM unnest(nodes) c WHERE c ~* '^\s*postgres(ql)?://') THEN
        RAISE EXCEPTION 'nodes must be key=value conninfos, not URIs'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Write ''host=db1 port=5432 dbname=prod'' instead of postgresql://db1:5432/prod.';
    END IF;
    -- Credentials belong in per-role user mappings: server options are
    -- readable by every role, and with any "user=" in a partition's
    -- conninfo PL/Proxy stops adding the session user, so that every role
    -- would connect as that user.
    FOR k IN 1 .. nn LOOP
        IF nodes[k] ~ '(^|\s)(user|password)\s*=' OR strpos(nodes[k], 'user=') > 0 THEN
            RAISE EXCEPTION 'conninfo % of nodes names a user or password', k
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Leave user and password out of the nodes; give each role that trains a user mapping: '
                             'CREATE USER MAPPING FOR role SERVER cluster OPTIONS (user ''...'', password ''...'').';
        END IF;
    END LOOP;
    IF num_segments IS NULL OR num_segments < nn OR num_segments > madlib_dl._job_limit('segments') THEN
        RAISE EXCEPTION 'num_segments must be between % (the node count) and %, got %', nn,
                        madlib_dl._job_limit('segments'), num_segments
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the distribution_rules segment count the table was preprocessed with.';
    END IF;
    -- application_name: the cluster name with letters, digits and _ only
    -- (so no "user=" either), and quoted
    FOR k IN 0 .. num_segments - 1 LOOP
        opts := opts || format(', p%s %L', k,
                               nodes[k % nn + 1] || ' application_name='
                               || madlib_dl._px_conninfo_value(format('madlib_dl_%s_p%s',
                                      regexp_replace(cluster, '[^A-Za-z0-9_]', '_', 'g'), k)));
    END LOOP;
    EXECUTE format('CREATE SERVER %I FOREIGN DATA WRAPPER plproxy OPTIONS (%s)', cluster, opts);
END
$$;

-- ERROR unless the current user may record packed table rel (tbl, its
-- {schema, name}) in madlib_dl.plproxy_tables: it has the privileges of
-- the table's owner (the catalog row decides where fit trains on the
-- table) and INSERT and UPDATE on the catalog; and the name is not that of
-- another distributed table on the nodes (a table renamed since it was
-- distributed keeps its name there).  Rows left by dropped tables are
-- removed first.  Writes nothing else.
CREATE FUNCTION madlib_dl._px_check_register(rel regclass, tbl text[])
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    other regclass;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = rel AND pg_has_role(c.relowner, 'USAGE')) THEN
        RAISE EXCEPTION 'must be owner of table "%" to distribute it', madlib_dl._table_label(tbl)
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Only the owner of a packed table (or a member of the owning role) may distribute it.';
    END IF;
    IF NOT has_table_privilege('madlib_dl.plproxy_tables', 'INSERT')
       OR NOT has_table_privilege('madlib_dl.plproxy_tables', 'UPDATE') THEN
        RAISE EXCEPTION 'permission denied to record table "%" in madlib_dl.plproxy_tables', madlib_dl._table_label(tbl)
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Ask an administrator to distribute it, or to GRANT INSERT, UPDATE ON madlib_dl.plproxy_tables '
                         'to you (rows stay limited to tables you own).';
    END IF;
    PERFORM madlib_dl._px_forget(NULL);
    SELECT t.relid INTO other FROM madlib_dl.plproxy_tables t
     WHERE t.schema_name = tbl[1] AND t.table_name = tbl[2] AND t.relid <> rel;
    IF other IS NOT NULL THEN
        RAISE EXCEPTION 'the data nodes already hold "%" for table "%", distributed under that name',
                        madlib_dl._table_label(tbl), other::text
            USING ERRCODE = 'duplicate_object',
                  HINT = format('Give this table another name, or remove the entry of %s from madlib_dl.plproxy_tables '
                                '(that table then trains locally).', other::text);
    END IF;
END
$$;

-- Copy packed table packed_table (made on the coordinator by
-- training_preprocessor_dl with distribution_rules = the cluster's
-- partition count) to the data nodes: the buffers of segment k
-- (__dist_key__ = k) go to partition k, under the table's schema and
-- name.  Returns the number of buffers sent.
--
-- Order, so that a call that cannot succeed writes nothing anywhere:
--   1. on the coordinator: the table and its summary, the segment keys,
--      the caller's ownership of the table and rights on the catalog
--      (_px_check_register), USAGE and a user mapping on the cluster
--      (_px_check_access); then the catalog row, in this transaction;
--   2. on every partition (_px_prepare): the schema, the rights of the
--      connecting role, the columns of an existing table; an empty
--      temporary load table;
--   3. the rows, in batches of up to batch_size buffers and 64 MB, into
--      the load tables (_px_insert): the two buffer columns as bytea[],
--      which PL/Proxy sends in binary, the other columns as JSON;
--   4. on every partition, in one transaction each (_px_publish): the
--      table made if absent, the loaded row counts checked, the
--      segments' rows replaced.
-- A failure before 4 leaves the nodes' tables as they were (the load
-- tables go with their connections) and rolls back the catalog row.
-- Only a failure during 4 can leave some segments replaced and others
-- not: run it again.
CREATE FUNCTION madlib_dl._px_distribute(tbl text[], cluster text, batch_size integer)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass := madlib_dl._assert_table_exists(tbl, 'packed_table');
    nparts integer := madlib_dl._px_partitions(cluster);
    nseg integer;
    names text[];
    types text[];
    counts bigint[];
    bad bigint;
    total bigint := 0;
    b record;
    r record;
    bcols text[];               -- the bytea columns: sent in binary
    batch_sql text;
    lo integer;
    hi integer;
    n_in bigint := 0;
    bytes_in bigint := 0;
    cap constant bigint := 64 * 1024 * 1024;   -- bytes of buffers per batch, one buffer at least
    e_state text;
    e_msg text;
    e_detail text;
    e_hint text;
BEGIN
    IF batch_size IS NULL OR batch_size < 1 THEN
        RAISE EXCEPTION 'batch_size must be at least 1, got %', batch_size
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM madlib_dl._assert_columns(rel, ARRAY['buffer_id', '__dist_key__'], ARRAY['integer', 'integer'],
        'a table made by training_preprocessor_dl');
    nseg := nparts;
    IF (madlib_dl._fit_packed_summary(tbl, 'packed_table')->>'num_segments')::integer IS DISTINCT FROM nseg THEN
        RAISE EXCEPTION 'packed_table "%" was preprocessed for % segments, cluster "%" has % partitions',
                        madlib_dl._table_label(tbl),
                        coalesce(madlib_dl._fit_packed_summary(tbl, 'packed_table')->>'num_segments', 'unknown'),
                        cluster, nseg
            USING ERRCODE = 'data_exception',
                  HINT = format('Preprocess with distribution_rules => ''%s'', the partition count of the cluster.', nseg);
    END IF;
    SELECT array_agg(a.attname::text ORDER BY a.attnum) INTO bcols
      FROM pg_attribute a
     WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped AND a.atttypid = 'bytea'::regtype;
    IF coalesce(cardinality(bcols), 0) < 2 THEN
        RAISE EXCEPTION 'packed_table "%" has % bytea columns, not the buffer columns of a packed table',
                        madlib_dl._table_label(tbl), coalesce(cardinality(bcols), 0)
            USING ERRCODE = 'datatype_mismatch',
                  HINT = 'Distribute a table made by training_preprocessor_dl, as it made it.';
    END IF;
    EXECUTE format('SELECT count(*) FROM %s WHERE buffer_id IS NULL', rel) INTO bad;
    IF bad > 0 THEN
        RAISE EXCEPTION 'packed_table "%" has % buffers without a buffer_id', madlib_dl._table_label(tbl), bad
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Preprocess the data again with training_preprocessor_dl.';
    END IF;
    EXECUTE format('SELECT count(*) FROM %s WHERE __dist_key__ IS NULL OR __dist_key__ < 0 OR __dist_key__ >= $1',
                   rel) INTO bad USING nseg;
    IF bad > 0 THEN
        RAISE EXCEPTION 'packed_table "%" has % buffers whose __dist_key__ is not a segment 0 to % of cluster "%"',
                        madlib_dl._table_label(tbl), bad, nseg - 1, cluster
            USING ERRCODE = 'data_exception',
                  HINT = format('Preprocess with distribution_rules => ''%s'', the partition count of the cluster.', nseg);
    END IF;
    PERFORM madlib_dl._px_check_register(rel, tbl);
    PERFORM madlib_dl._px_check_access(cluster);
    INSERT INTO madlib_dl.plproxy_tables AS p (relid, schema_name, table_name, cluster, num_segments)
    VALUES (rel, tbl[1], tbl[2], cluster, nseg)
    ON CONFLICT (relid) DO UPDATE
       SET schema_name = excluded.schema_name, table_name = excluded.table_name,
           cluster = excluded.cluster, num_segments = excluded.num_segments, distributed_at = now();

    SELECT array_agg(a.attname::text ORDER BY a.attnum), array_agg(format_type(a.atttypid, a.atttypmod) ORDER BY a.attnum)
      INTO names, types
      FROM pg_attribute a WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped;
    EXECUTE format('SELECT array_agg(coalesce(c.n, 0) ORDER BY g)'
                   '  FROM generate_series(0, $1 - 1) g'
                   '  LEFT JOIN (SELECT __dist_key__ AS k, count(*) AS n FROM %s GROUP BY 1) c ON c.k = g', rel)
       INTO counts USING nseg;
    BEGIN
    PERFORM madlib_dl._px_prepare(cluster, tbl, names, types, ARRAY(SELECT generate_series(0, nseg - 1)));
    -- batches of up to batch_size buffers and 64 MB (one buffer at least),
    -- in buffer_id order: the buffers as bytea[] (binary), the other
    -- columns as JSON; each batch is read when it is sent
    -- (more than two bytea columns, a table of several variables: the
    -- second and later ones travel as one bundle, _px_bundle_part)
    SELECT format('SELECT array_agg(t.__dist_key__ ORDER BY t.buffer_id) AS segs,'
                  '       array_agg(json_build_object(%s) ORDER BY t.buffer_id) AS rows,'
                  '       array_agg(t.%I ORDER BY t.buffer_id) AS b1, array_agg(%s ORDER BY t.buffer_id) AS b2'
                  '  FROM %s t WHERE t.buffer_id BETWEEN $1 AND $2',
                  string_agg(format('%L, t.%I', a.attname, a.attname), ', ' ORDER BY a.attnum),
                  bcols[1],
                  CASE WHEN cardinality(bcols) = 2 THEN format('t.%I', bcols[2])
                       ELSE (SELECT string_agg(format('int8send(coalesce(octet_length(t.%1$I), -1))'
                                                      ' || coalesce(t.%1$I, ''''::bytea)', c), ' || ' ORDER BY o)
                               FROM unnest(bcols[2:]) WITH ORDINALITY AS u(c, o)) END,
                  rel)
      INTO batch_sql
      FROM pg_attribute a
     WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped AND a.atttypid <> 'bytea'::regtype;
    FOR r IN EXECUTE format('SELECT buffer_id, count(*) AS n, sum(%s) AS bytes'
                            '  FROM %s GROUP BY buffer_id ORDER BY buffer_id',
                            (SELECT string_agg(format('coalesce(octet_length(%I), 0)', c), ' + ')
                               FROM unnest(bcols) c), rel) LOOP
        IF n_in > 0 AND (n_in + r.n > batch_size OR bytes_in + coalesce(r.bytes, 0) > cap) THEN
            EXECUTE batch_sql INTO b USING lo, hi;
            PERFORM madlib_dl._px_insert(cluster, tbl, b.segs, b.rows, bcols, b.b1, b.b2);
            total := total + cardinality(b.segs);
            n_in := 0;
            bytes_in := 0;
        END IF;
        IF n_in = 0 THEN
            lo := r.buffer_id;
        END IF;
        hi := r.buffer_id;
        n_in := n_in + r.n;
        bytes_in := bytes_in + coalesce(r.bytes, 0);
    END LOOP;
    IF n_in > 0 THEN
        EXECUTE batch_sql INTO b USING lo, hi;
        PERFORM madlib_dl._px_insert(cluster, tbl, b.segs, b.rows, bcols, b.b1, b.b2);
        total := total + cardinality(b.segs);
    END IF;
    PERFORM madlib_dl._px_publish(cluster, tbl, names, types, ARRAY(SELECT generate_series(0, nseg - 1)), counts);
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT,
                                e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
        PERFORM madlib_dl._px_rethrow(cluster, e_state, e_msg, e_detail, e_hint);
    END;
    RETURN total;
END
$$;

-- Public entry: the table name is resolved in the caller's search_path.
CREATE FUNCTION madlib_dl.plproxy_distribute(packed_table text, cluster text, batch_size integer DEFAULT 64)
RETURNS bigint
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$ SELECT madlib_dl._px_distribute(madlib_dl._resolve_table($1, 'packed_table'), $2, $3) $$;

-- ---------------------------------------------------------------------
-- Coordinator: training over the cluster
-- ---------------------------------------------------------------------

-- The name on the data nodes of packed table source, distributed over
-- cluster, and its number of segments (from plproxy_tables); ERROR when
-- the cluster no longer has that many partitions, or the session user
-- may not use it.
CREATE FUNCTION madlib_dl._px_table_segments(cluster text, source regclass,
    OUT src text[], OUT n_seg integer)
RETURNS record
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    SELECT ARRAY[t.schema_name, t.table_name], t.num_segments INTO src, n_seg
      FROM madlib_dl.plproxy_tables t WHERE t.relid = source;
    PERFORM madlib_dl._px_check_access(cluster);
    IF madlib_dl._px_partitions(cluster) <> n_seg THEN
        RAISE EXCEPTION 'PL/Proxy cluster "%" has % partitions, table "%" was distributed over %',
                        cluster, madlib_dl._px_partitions(cluster), source::text, n_seg
            USING ERRCODE = 'data_exception',
                  HINT = 'Distribute the table again with madlib_dl.plproxy_distribute.';
    END IF;
END
$$;

-- The proxy functions, now if PL/Proxy is already installed here.
DO $do$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_language WHERE lanname = 'plproxy') THEN
        PERFORM madlib_dl.plproxy_setup();
    END IF;
END
$do$;
