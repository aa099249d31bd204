-- preprocess.sql: the deep-learning preprocessors, as in MADlib
-- (input_data_preprocessor): training_preprocessor_dl and
-- validation_preprocessor_dl (their help: src/help/help.json), and the packing
-- aggregates of src/pg/api/preprocess.c.
--
-- A preprocessed ("packed") table <out> has one row per buffer:
--   <y>            bytea    int16 little-endian one-hot, (n, num_classes)
--   <x>            bytea    float32 little-endian, (n, dims...), divided
--                           by normalizing_const
--   <y>_shape      int[]    {n, num_classes}
--   <x>_shape      int[]    {n, dims...}
--   buffer_id      int      0 .. nbuf-1
--   __dist_key__   int      the virtual segment, buffer_id % num_segments
-- and <out>_summary has one row (docs/preprocessing.md lists its columns).
--
-- How rows become buffers.  Rows get a rank rn: for training a
-- deterministic shuffle (ORDER BY hashtidextended(ctid, 42), which depends
-- only on where each row is stored, not on scan order or the session's
-- random() state); for validation the storage order (tableoid, ctid), and
-- on Greenplum (gp_segment_id, tableoid, ctid) (_pp_row_identity).  Buffer
-- buffer_id = rn / bs holds rows rn = buffer_id*bs .. , each at slot
-- rn % bs.  One INSERT ... SELECT ... GROUP BY buffer_id builds every
-- buffer; the C aggregates write each row at its slot, so grouping needs
-- no ordering and the wide arrays are never sorted: only (ctid, rn) is.

-- ---------------------------------------------------------------------
-- C functions and aggregates (src/pg/api/preprocess.c)
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl._pack_final(internal)
RETURNS bytea
AS 'MODULE_PATHNAME', 'madlib_dl__pack_final'
LANGUAGE C IMMUTABLE;

CREATE FUNCTION madlib_dl._pack_float32_sfunc(internal, anyarray, tid, integer, integer,
                                              double precision, integer[])
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__pack_float32_sfunc'
LANGUAGE C IMMUTABLE;

-- _pack_float32(x, row, slot, n, normalizing_const, dims): a buffer of n
-- rows of x / normalizing_const as float32; row x goes to slot (0..n-1).
-- x: smallint/integer/bigint/real/double precision/numeric array with
-- exactly dims; NULLs, NaN and infinities are errors naming row (ctid).
CREATE AGGREGATE madlib_dl._pack_float32(anyarray, tid, integer, integer,
                                         double precision, integer[]) (
    SFUNC = madlib_dl._pack_float32_sfunc,
    STYPE = internal,
    FINALFUNC = madlib_dl._pack_final,
    FINALFUNC_MODIFY = READ_WRITE
);

CREATE FUNCTION madlib_dl._pack_onehot_int16_sfunc(internal, integer, integer, integer, integer)
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__pack_onehot_int16_sfunc'
LANGUAGE C IMMUTABLE;

-- _pack_onehot_int16(class_index, num_classes, slot, n): a buffer of n
-- one-hot int16 rows; class_index is 0-based.
CREATE AGGREGATE madlib_dl._pack_onehot_int16(integer, integer, integer, integer) (
    SFUNC = madlib_dl._pack_onehot_int16_sfunc,
    STYPE = internal,
    FINALFUNC = madlib_dl._pack_final,
    FINALFUNC_MODIFY = READ_WRITE
);

CREATE FUNCTION madlib_dl._pack_int16_array_sfunc(internal, anyarray, tid, integer, integer, integer)
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__pack_int16_array_sfunc'
LANGUAGE C IMMUTABLE;

-- _pack_int16_array(y, row, slot, n, width): a buffer of n int16 rows
-- from one-dimensional numeric arrays of width values, each 0 or 1.
CREATE AGGREGATE madlib_dl._pack_int16_array(anyarray, tid, integer, integer, integer) (
    SFUNC = madlib_dl._pack_int16_array_sfunc,
    STYPE = internal,
    FINALFUNC = madlib_dl._pack_final,
    FINALFUNC_MODIFY = READ_WRITE
);

CREATE FUNCTION madlib_dl._pack_target_float32_sfunc(internal, anyarray, tid, integer, integer, integer)
RETURNS internal
AS 'MODULE_PATHNAME', 'madlib_dl__pack_target_float32_sfunc'
LANGUAGE C IMMUTABLE;

-- _pack_target_float32(y, row, slot, n, width): a buffer of n float32
-- rows from one-dimensional numeric arrays of width values: a numeric
-- (regression) dependent variable.
CREATE AGGREGATE madlib_dl._pack_target_float32(anyarray, tid, integer, integer, integer) (
    SFUNC = madlib_dl._pack_target_float32_sfunc,
    STYPE = internal,
    FINALFUNC = madlib_dl._pack_final,
    FINALFUNC_MODIFY = READ_WRITE
);

-- A packed float32 buffer back as real[]: flat, or with the given shape,
-- e.g. madlib_dl._unpack_float32(x, x_shape).
CREATE FUNCTION madlib_dl._unpack_float32(buffer bytea, shape integer[] DEFAULT NULL)
RETURNS real[]
AS 'MODULE_PATHNAME', 'madlib_dl__unpack_float32'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- A packed int16 buffer back as smallint[], e.g. _unpack_int16(y, y_shape).
CREATE FUNCTION madlib_dl._unpack_int16(buffer bytea, shape integer[] DEFAULT NULL)
RETURNS smallint[]
AS 'MODULE_PATHNAME', 'madlib_dl__unpack_int16'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- max(1, min(online CPUs, max_parallel_workers)).
CREATE FUNCTION madlib_dl._pp_default_segments()
RETURNS integer
AS 'MODULE_PATHNAME', 'madlib_dl__pp_default_segments'
LANGUAGE C STABLE PARALLEL SAFE;

-- ---------------------------------------------------------------------
-- Helpers of the drivers (internal; search_path pinned)
-- ---------------------------------------------------------------------

-- Is distribution_rules the name of a table (of segment ids), rather
-- than NULL, 'all_segments', 'gpu_segments' or a number?  The public
-- wrappers resolve it then, in the caller's search_path.
CREATE FUNCTION madlib_dl._pp_rules_is_table(distribution_rules text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT distribution_rules IS NOT NULL
       AND lower(btrim(distribution_rules)) NOT IN ('all_segments', 'gpu_segments')
       AND btrim(distribution_rules) !~ '^[0-9]+$'
$$;

-- The number of virtual segments for distribution_rules, and the text
-- stored in the summary: NULL or 'all_segments' -> default_nseg when
-- given, else the default (_default_num_segments() of the fit code when
-- installed, else _pp_default_segments()); '1' .. '64' -> that many; the
-- name of a table of segment ids (MADlib: a table with a dbid column),
-- resolved by the wrapper into rules_tbl -> on PostgreSQL, with a NOTICE,
-- the default as for 'all_segments' (there are no segments to choose:
-- MADlib ignores it too); on Greenplum 0A000.  'gpu_segments': 0A000 (no
-- GPU backend).  Anything else: 22023.
CREATE FUNCTION madlib_dl._pp_segments(distribution_rules text, rules_tbl text[] DEFAULT NULL,
                                       default_nseg integer DEFAULT NULL,
                                       OUT nseg integer, OUT rules text)
RETURNS record
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass;
BEGIN
    IF madlib_dl._pp_rules_is_table(distribution_rules) AND rules_tbl IS NOT NULL THEN
        IF madlib_dl._is_greenplum() THEN
            RAISE EXCEPTION 'distribution_rules naming a table of segments is not supported on Greenplum: "%"',
                            distribution_rules
                USING ERRCODE = 'feature_not_supported',
                      HINT = 'Give NULL or ''all_segments'' to use every segment.';
        END IF;
        rel := madlib_dl._assert_table_exists(rules_tbl, 'distribution_rules');
        PERFORM madlib_dl._assert_columns(rel, ARRAY['dbid'],
            ARRAY[(SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
                    WHERE a.attrelid = rel AND a.attname = 'dbid' AND NOT a.attisdropped
                      AND format_type(a.atttypid, NULL) IN ('smallint', 'integer', 'bigint'))],
            'a table of segment ids (a dbid column), as MADlib takes it');
        distribution_rules := NULL;
    END IF;
    IF madlib_dl._is_greenplum() THEN
        -- Greenplum: the buffers go on the real primaries
        -- (_gp_place_buffers: buffer b on content b % nseg), so they are
        -- made for all of them (whatever the coordinator's CPUs), or for
        -- the first n given as a number (as n virtual segments would be
        -- on PostgreSQL: the same buffers, the same placement).
        SELECT count(*)::integer INTO nseg FROM pg_catalog.gp_segment_configuration
         WHERE role = 'p' AND content >= 0;
        IF distribution_rules IS NULL OR lower(btrim(distribution_rules)) = 'all_segments' THEN
            rules := 'all_segments';
            RETURN;
        END IF;
        IF btrim(distribution_rules) ~ '^[0-9]{1,9}$' THEN
            IF btrim(distribution_rules)::integer BETWEEN 1 AND nseg THEN
                nseg := btrim(distribution_rules)::integer;
                rules := nseg::text;
                RETURN;
            END IF;
            RAISE EXCEPTION 'distribution_rules "%" is more segments than this Greenplum cluster has (%)',
                            distribution_rules, nseg
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = format('Give NULL or ''all_segments'' for all %s primary segments, or a number from 1 to %s.',
                                    nseg, nseg);
        END IF;
    END IF;
    IF distribution_rules IS NULL OR lower(btrim(distribution_rules)) = 'all_segments' THEN
        IF default_nseg IS NOT NULL THEN
            nseg := default_nseg;
        ELSIF to_regprocedure('madlib_dl._default_num_segments()') IS NOT NULL THEN
            EXECUTE 'SELECT madlib_dl._default_num_segments()' INTO nseg;
        ELSE
            nseg := madlib_dl._pp_default_segments();
        END IF;
        rules := 'all_segments';
        IF rel IS NOT NULL THEN
            RAISE NOTICE 'distribution_rules "%" is ignored: PostgreSQL has no segments to choose, the data is spread over the virtual segments (num_segments in the summary)',
                         rel::text;
        END IF;
        RETURN;
    END IF;
    IF lower(btrim(distribution_rules)) = 'gpu_segments' THEN
        RAISE EXCEPTION 'distribution_rules ''gpu_segments'' is not supported: this build of madlib_dl has no GPU backend'
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Give NULL or ''all_segments'': training runs on the CPU cores of all segments.';
    END IF;
    IF btrim(distribution_rules) ~ '^[0-9]{1,9}$' THEN
        nseg := btrim(distribution_rules)::integer;
        IF nseg BETWEEN 1 AND madlib_dl._job_limit('segments') THEN
            rules := nseg::text;
            RETURN;
        END IF;
    END IF;
    RAISE EXCEPTION 'distribution_rules "%" is not valid', distribution_rules
        USING ERRCODE = 'invalid_parameter_value',
              HINT = format('Give NULL or ''all_segments'' for the default number of segments, '
                            'a number of segments from 1 to %s as text, e.g. ''2'', or a table of segment ids.',
                            madlib_dl._job_limit('segments'));
END
$$;

-- num_classes as given by the user (NULL, an integer, or an integer array
-- with one number per dependent variable, as MADlib 1.18+ takes it) as an
-- array: one element per dependent variable (NULL: not given).  The
-- drivers check its length against the dependent variables.
CREATE FUNCTION madlib_dl._pp_num_classes(num_classes anyelement)
RETURNS integer[]
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t regtype := pg_typeof(num_classes);
    arr bigint[];
BEGIN
    IF num_classes IS NULL THEN
        RETURN NULL;
    END IF;
    IF t IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype) THEN
        RETURN ARRAY[num_classes::text::integer];
    END IF;
    IF t IN ('smallint[]'::regtype, 'integer[]'::regtype, 'bigint[]'::regtype) THEN
        arr := num_classes::text::bigint[];
        IF coalesce(cardinality(arr), 0) < 1 OR array_ndims(arr) > 1
           OR array_position(arr, NULL) IS NOT NULL THEN
            RAISE EXCEPTION 'num_classes % must give one number for each dependent variable', num_classes
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Give one number of classes per dependent variable, e.g. 10 or ARRAY[10, 2], or NULL.';
        END IF;
        RETURN arr::integer[];
    END IF;
    RAISE EXCEPTION 'num_classes must be an integer, not %', t
        USING ERRCODE = 'datatype_mismatch',
              HINT = 'Give an integer, e.g. 10, or NULL for the number of distinct class values.';
END
$$;

-- The names of a comma list of variables (MADlib's dependent_varname and
-- independent_varname take 'a, b'): split on the commas outside double
-- quotes, each trimmed.  22004 for NULL or empty, 22023 for an empty name
-- in the list, 54000 for more than 16 (a model's inputs or outputs).
CREATE FUNCTION madlib_dl._pp_split_vars(varname text, param text)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    parts text[];
BEGIN
    IF varname IS NULL OR btrim(varname) = '' THEN
        RAISE EXCEPTION '% must not be NULL or empty', param
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = format('Give the name of a column of the source table for %s.', param);
    END IF;
    parts := ARRAY(SELECT btrim(p) FROM regexp_split_to_table(varname, ',(?=(?:[^"]*"[^"]*")*[^"]*$)') p);
    IF array_position(parts, '') IS NOT NULL THEN
        RAISE EXCEPTION '% "%" has an empty name in its list', param, varname
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = format('Give %s as column names separated by commas, e.g. ''a, b''.', param);
    END IF;
    IF cardinality(parts) > 16 THEN
        RAISE EXCEPTION '% names % variables, more than 16', param, cardinality(parts)
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'A model has at most 16 inputs and 16 outputs: give one variable for each.';
    END IF;
    RETURN parts;
END
$$;

-- The column of rel named by varname (an identifier as SQL reads it:
-- unquoted names fold to lower case; one name of a list of
-- _pp_split_vars).  A missing column is 42703.
CREATE FUNCTION madlib_dl._pp_column(rel regclass, varname text, param text, what text,
                                     OUT colname text, OUT coltype regtype,
                                     OUT typname text, OUT elemtype regtype)
RETURNS record
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    parts text[];
BEGIN
    IF varname IS NULL OR btrim(varname) = '' THEN
        RAISE EXCEPTION '% must not be NULL or empty', param
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = format('Give the name of a column of the source table for %s.', param);
    END IF;
    BEGIN
        parts := parse_ident(varname);
    EXCEPTION WHEN OTHERS THEN
        parts := ARRAY[varname];
    END;
    IF cardinality(parts) <> 1 THEN
        parts := ARRAY[varname];
    END IF;
    SELECT a.attname::text, a.atttypid::regtype, format_type(a.atttypid, a.atttypmod),
           CASE WHEN t.typcategory = 'A' THEN t.typelem::regtype END
      INTO colname, coltype, typname, elemtype
      FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
     WHERE a.attrelid = rel AND a.attname = parts[1] AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" does not exist in table "%"', parts[1], rel::text
            USING ERRCODE = 'undefined_column',
                  HINT = format('Give the name of a column of the source table for %s.', param);
    END IF;
END
$$;

-- The columns of the variables of dependent_varname and
-- independent_varname (comma lists, _pp_split_vars) in rel: their names,
-- types as regtype and as text, and element types (NULL: not an array),
-- the dependent ones first (n_dep of them), in the order given.  22023
-- when a column is named twice.  indep_required false: independent_varname
-- may be NULL (no independent columns: a transform builds the input).
CREATE FUNCTION madlib_dl._pp_vars(rel regclass, dependent_varname text, independent_varname text,
                                   indep_required boolean,
                                   OUT n_dep integer, OUT cols text[], OUT types regtype[],
                                   OUT typnames text[], OUT elemtypes regtype[])
RETURNS record
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    deps text[] := madlib_dl._pp_split_vars(dependent_varname, 'dependent_varname');
    indeps text[] := CASE WHEN independent_varname IS NULL AND NOT indep_required THEN '{}'::text[]
                          ELSE madlib_dl._pp_split_vars(independent_varname, 'independent_varname') END;
    c record;
BEGIN
    n_dep := cardinality(deps);
    FOR i IN 1 .. cardinality(deps) + cardinality(indeps) LOOP
        IF i <= n_dep THEN
            c := madlib_dl._pp_column(rel, deps[i], 'dependent_varname', 'dependent variables');
        ELSE
            c := madlib_dl._pp_column(rel, indeps[i - n_dep], 'independent_varname', 'independent variables');
        END IF;
        IF array_position(cols, c.colname) IS NOT NULL THEN
            IF (array_position(cols, c.colname) <= n_dep) <> (i <= n_dep) THEN
                RAISE EXCEPTION 'dependent_varname and independent_varname are the same column "%"', c.colname
                    USING ERRCODE = 'invalid_parameter_value',
                          HINT = 'Give the class column and the feature array column.';
            END IF;
            RAISE EXCEPTION 'column "%" is named twice in %', c.colname,
                            CASE WHEN i <= n_dep THEN 'dependent_varname' ELSE 'independent_varname' END
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Name each variable once.';
        END IF;
        cols := cols || c.colname;
        types := types || c.coltype;
        typnames := typnames || c.typname;
        elemtypes := elemtypes || c.elemtype;
    END LOOP;
END
$$;

-- The dims of the independent variable in the first row of src (in
-- storage order), checked: not NULL, not empty, numeric elements.
CREATE FUNCTION madlib_dl._pp_first_dims(src text[], col text, coltype regtype, elemtype regtype)
RETURNS integer[]
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
SET synchronize_seqscans = off
AS $$
DECLARE
    row_tid tid;
    dims integer[];
BEGIN
    PERFORM madlib_dl._assert_trusted_table(madlib_dl._table_oid(src));
    IF elemtype IS NULL OR elemtype NOT IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype,
            'real'::regtype, 'double precision'::regtype, 'numeric'::regtype) THEN
        RAISE EXCEPTION 'independent variable "%" has type %, not a numeric array', col, coltype
            USING ERRCODE = 'datatype_mismatch',
                  HINT = 'Use an array of smallint, integer, bigint, real, double precision or numeric.';
    END IF;
    EXECUTE format('SELECT s.ctid, ARRAY(SELECT array_length(s.%1$I, d) '
                   '                     FROM generate_series(1, array_ndims(s.%1$I)) d) '
                   '  FROM %2$I.%3$I s LIMIT 1', col, src[1], src[2])
       INTO row_tid, dims;
    IF cardinality(dims) = 0 THEN
        RAISE EXCEPTION 'independent variable "%" is NULL or empty in the row with ctid %', col, row_tid
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = format('Find the row with SELECT * FROM %s WHERE ctid = ''%s'', then fix or delete it.',
                                madlib_dl._table_sql(src), row_tid);
    END IF;
    RETURN dims;
END
$$;

-- Buffer size as MADlib computes it: bs = ceil(min(75e6/prod(dims),
-- rows/nseg)), or the buffer_size hint; nbuf = nseg*ceil(rows/bs/nseg);
-- bs = ceil(rows/nbuf).
CREATE FUNCTION madlib_dl._pp_buffer_size(n_rows bigint, row_values bigint, nseg integer,
                                          buffer_size integer)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH b0 AS (
        SELECT coalesce(buffer_size::numeric,
                        ceil(least(75000000::numeric / row_values, n_rows::numeric / nseg))) AS bs
    ), nb AS (
        SELECT nseg * ceil(n_rows::numeric / b0.bs / nseg) AS nbuf FROM b0
    )
    SELECT ceil(n_rows::numeric / nb.nbuf)::integer FROM nb
$$;

-- Check the scalar arguments shared by both preprocessors.
CREATE FUNCTION madlib_dl._pp_check_args(buffer_size integer, normalizing_const real)
RETURNS void
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF buffer_size IS NOT NULL AND buffer_size < 1 THEN
        RAISE EXCEPTION 'buffer_size must be a positive integer or NULL, not %', buffer_size
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give NULL to let the preprocessor choose, or a number of rows per buffer.';
    END IF;
    IF normalizing_const IS NOT NULL
       AND (normalizing_const <= 0 OR normalizing_const = 'NaN'::real
            OR normalizing_const = 'Infinity'::real) THEN
        RAISE EXCEPTION 'normalizing_const must be a positive finite number, not %', normalizing_const
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the value every feature is divided by, e.g. 255.0 for 8-bit pixels, or 1.0.';
    END IF;
END
$$;

-- Raise 22000 when src has no rows; else return the row count.
CREATE FUNCTION madlib_dl._pp_count_rows(src text[])
RETURNS bigint
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    PERFORM madlib_dl._assert_trusted_table(madlib_dl._table_oid(src));
    EXECUTE format('SELECT count(*) FROM %I.%I', src[1], src[2]) INTO n;
    IF n = 0 THEN
        RAISE EXCEPTION 'source table "%" is empty', madlib_dl._table_label(src)
            USING ERRCODE = 'data_exception',
                  HINT = 'Give a table with at least one row.';
    END IF;
    RETURN n;
END
$$;

-- The system columns that identify a row of a source table while it is
-- packed: (tableoid, ctid), which is unique also in a partitioned or
-- inherited table, whose members' ctids collide; on Greenplum and
-- Cloudberry gp_segment_id first, since every segment has its own heap
-- and the same ctid is found on several segments.  greenplum: the server
-- kind (NULL: this server's).
CREATE FUNCTION madlib_dl._pp_row_identity(greenplum boolean DEFAULT NULL)
RETURNS text[]
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN coalesce(greenplum, to_regclass('pg_catalog.gp_segment_configuration') IS NOT NULL)
                THEN ARRAY['gp_segment_id', 'tableoid', 'ctid']
                ELSE ARRAY['tableoid', 'ctid'] END
$$;

-- Create the output table and fill it with INSERT ... SELECT, one per
-- pass over the source: a pass builds the buffers of a range of
-- buffer_ids whose bytes fit madlib_dl.partition_memory's budget (one
-- buffer at least), so the memory the aggregates hold stays bounded
-- whatever the source's size; a source that fits takes one pass.  The
-- caller has checked everything: columns and types exist, the summary
-- table summ exists and holds each dependent variable's class values in
-- column cv_cols[k].  One element per dependent variable (dep_cols) in
-- the other arrays, in order:
--   dep_kinds   'class' (scalar classes looked up in its class values),
--               'onehot' (arrays of 0 and 1, packed as int16) or
--               'numeric' (arrays of numeric targets, packed as float32)
--   cast_types  for 'class': the type the dependent variable is cast to
--               before the lookup (the class values' element type)
--   ncls        its width: classes, or the array's length
-- and one per independent variable (indep_cols) in dims (a jsonb array
-- of each one's dims).
--   shuffle     training order (true) or storage order (false)
--   indep_exprs NULL, or one expression per independent variable that
--               builds it from the source row s (a transform: _tf_expr
--               over c.tf, the summary's transform column)
-- The output table's columns: every dependent variable, every
-- independent one, their _shape columns in the same order, buffer_id and
-- __dist_key__ (MADlib's multi-io layout; with one of each, the layout
-- of earlier versions).
CREATE FUNCTION madlib_dl._pp_pack(src text[], dst text[], summ text[], cv_cols text[],
                                   dep_cols text[], indep_cols text[], dep_kinds text[],
                                   cast_types text[], n_rows bigint, bs integer, nseg integer,
                                   ncls integer[], normalizing_const real, dims jsonb, shuffle boolean,
                                   indep_exprs text[] DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
-- compiling the packing query's expressions cost more than running them
SET jit = off
AS $$
DECLARE
    ord text;                   -- the scratch table of row order
    nb text := 'least($1, $2 - o.buffer_id * $1)::integer';
    ident text[] := madlib_dl._pp_row_identity();
    ident_cols text;            -- s.<c> AS r<i>, ...: the order table's row identity
    ident_order text;           -- s.<c>, ...
    ident_join text;            -- s.<c> = o.r<i> AND ...
    ident_keep text;            -- r.r<i>, ...
    nbuf bigint := (n_rows + bs - 1) / bs;
    row_bytes double precision := 0;
    col_defs text := '';
    col_names text := '';
    aggs text := '';
    shapes text := '';
    cvs text;
    dims_k integer[];
    d integer;
    prod bigint;
    per_pass integer;           -- buffers built by one pass
BEGIN
    PERFORM madlib_dl._assert_trusted_table(madlib_dl._table_oid(src));
    PERFORM madlib_dl._assert_trusted_table(madlib_dl._table_oid(summ));
    SELECT string_agg(format('s.%I AS r%s', c, i), ', ' ORDER BY i),
           string_agg(format('s.%I', c), ', ' ORDER BY i),
           string_agg(format('s.%I = o.r%s', c, i), ' AND ' ORDER BY i),
           string_agg(format('r.r%s', i), ', ' ORDER BY i)
      INTO ident_cols, ident_order, ident_join, ident_keep
      FROM unnest(ident) WITH ORDINALITY AS u(c, i);
    SELECT string_agg(format('%I AS cv%s', c, i), ', ' ORDER BY i) INTO cvs
      FROM unnest(cv_cols) WITH ORDINALITY AS u(c, i);
    IF indep_exprs IS NOT NULL THEN     -- the transform plan, as c.tf (_tf_expr)
        cvs := cvs || ', transform AS tf';
    END IF;

    -- the columns and their aggregates: the dependent variables, then the independent ones
    FOR k IN 1 .. cardinality(dep_cols) LOOP
        col_defs := col_defs || format('%I bytea, ', dep_cols[k]);
        col_names := col_names || format('%I, ', dep_cols[k]);
        shapes := shapes || format(', ARRAY[%s, %s]', nb, ncls[k]);
        aggs := aggs || CASE dep_kinds[k]
            WHEN 'onehot' THEN format('madlib_dl._pack_int16_array(s.%I, s.ctid, o.slot, %s, %s), ',
                                      dep_cols[k], nb, ncls[k])
            WHEN 'numeric' THEN format('madlib_dl._pack_target_float32(s.%I, s.ctid, o.slot, %s, %s), ',
                                       dep_cols[k], nb, ncls[k])
            ELSE format('madlib_dl._pack_onehot_int16((array_position(c.cv%s, s.%I::%s) - 1)::integer, '
                        '%s, o.slot, %s), ', k, dep_cols[k], cast_types[k], ncls[k], nb) END;
        row_bytes := row_bytes + (CASE WHEN dep_kinds[k] = 'numeric' THEN 4 ELSE 2 END) * ncls[k];
    END LOOP;
    FOR k IN 1 .. cardinality(indep_cols) LOOP
        dims_k := ARRAY(SELECT jsonb_array_elements_text(dims->(k - 1))::integer);
        col_defs := col_defs || format('%I bytea, ', indep_cols[k]);
        col_names := col_names || format('%I, ', indep_cols[k]);
        shapes := shapes || format(', %s || %L::integer[]', nb, dims_k);
        aggs := aggs || format('madlib_dl._pack_float32(%s, s.ctid, o.slot, %s, $3, %L::integer[]), ',
                               coalesce(indep_exprs[k], format('s.%I', indep_cols[k])), nb, dims_k);
        prod := 1;
        FOREACH d IN ARRAY dims_k LOOP
            prod := prod * d;
        END LOOP;
        row_bytes := row_bytes + 4.0 * prod;
    END LOOP;
    EXECUTE format('CREATE TABLE %I.%I (%s%s, buffer_id integer, __dist_key__ integer)%s',
                   dst[1], dst[2], col_defs,
                   (SELECT string_agg(format('%I integer[]', c || '_shape'), ', ' ORDER BY i)
                      FROM unnest(dep_cols || indep_cols) WITH ORDINALITY AS u(c, i)),
                   madlib_dl._distributed_clause('__dist_key__'));
    EXECUTE format('ALTER TABLE %I.%I %s', dst[1], dst[2],
                   (SELECT string_agg(format('ALTER COLUMN %I SET STORAGE EXTERNAL', c), ', ' ORDER BY i)
                      FROM unnest(dep_cols || indep_cols) WITH ORDINALITY AS u(c, i)));

    -- Each row's buffer and slot, in a narrow temporary table: the join
    -- below then hashes this table, never the wide source rows.  Rows are
    -- identified by _pp_row_identity: (tableoid, ctid), and gp_segment_id
    -- on Greenplum.
    ord := madlib_dl._temp_table_name('madlib_dl_pp_order');
    EXECUTE format($q$
        CREATE TEMPORARY TABLE %4$I ON COMMIT DROP AS
        SELECT %6$s, (r.rn / $1)::integer AS buffer_id, (r.rn %% $1)::integer AS slot
          FROM (SELECT %5$s, row_number() OVER (ORDER BY %1$s) - 1 AS rn
                  FROM %2$I.%3$I s) r%7$s
        $q$,
        CASE WHEN shuffle THEN 'hashtidextended(s.ctid, 42), ' || ident_order
             ELSE ident_order END,
        src[1], src[2], ord, ident_cols, ident_keep, madlib_dl._distributed_clause('buffer_id'))
    USING bs::bigint;
    EXECUTE format('ANALYZE pg_temp.%I', ord);

    -- buffers per pass: the budget of one segment (float32 features and
    -- int16 labels or float32 targets of a buffer), one at least
    per_pass := least(nbuf, greatest(1, floor(madlib_dl._partition_budget(nseg)
                                             / (bs::double precision * row_bytes))));
    FOR lo IN 0 .. nbuf - 1 BY per_pass LOOP
    EXECUTE format($q$
        INSERT INTO %1$I.%2$I (%3$s%4$s, buffer_id, __dist_key__)
        SELECT %5$s%6$s,
               o.buffer_id,
               o.buffer_id %% $4
          FROM %7$I.%8$I s
          JOIN pg_temp.%12$I o ON %13$s
         CROSS JOIN (SELECT %9$s FROM %10$I.%11$I) c
         WHERE o.buffer_id BETWEEN $5 AND $6
         GROUP BY o.buffer_id
        $q$,
        dst[1], dst[2], col_names,
        (SELECT string_agg(format('%I', c || '_shape'), ', ' ORDER BY i)
           FROM unnest(dep_cols || indep_cols) WITH ORDINALITY AS u(c, i)),
        aggs, substr(shapes, 3), src[1], src[2], cvs, summ[1], summ[2], ord, ident_join)
    USING bs::bigint, n_rows, normalizing_const::double precision, nseg, lo, lo + per_pass - 1;
    END LOOP;
    EXECUTE format('DROP TABLE pg_temp.%I', ord);
END
$$;

-- ---------------------------------------------------------------------
-- Drivers (internal; search_path pinned; tables come as {schema, table})
-- ---------------------------------------------------------------------

-- The kind of a dependent variable of the training data (its column c,
-- from _pp_vars): 'class' for a scalar of a type that holds classes,
-- 'onehot' for a numeric array of 0 and 1 values (MADlib's already
-- one-hot variable), 'numeric' for a numeric array with any other finite
-- value (a numeric target of a regression output: packed as float32).
CREATE FUNCTION madlib_dl._pp_dep_kind(src text[], col text, coltype regtype, typname text,
                                       elemtype regtype)
RETURNS text
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    other boolean;
BEGIN
    PERFORM madlib_dl._assert_trusted_table(madlib_dl._table_oid(src));
    IF elemtype IS NOT NULL THEN
        IF elemtype NOT IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype,
                'real'::regtype, 'double precision'::regtype, 'numeric'::regtype) THEN
            RAISE EXCEPTION 'dependent variable "%" has type %, not a numeric (one-hot) array', col, typname
                USING ERRCODE = 'datatype_mismatch',
                      HINT = 'Use a class column (text, integer, boolean, ...) or an already one-hot numeric array.';
        END IF;
        -- a finite value other than 0 and 1 (NaN and infinities stay
        -- errors of the one-hot packing, as before)
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.%I s, unnest(s.%I) v'
                       '               WHERE v::float8 NOT IN (0, 1, ''NaN'', ''Infinity'', ''-Infinity''))',
                       src[1], src[2], col)
           INTO other;
        RETURN CASE WHEN other THEN 'numeric' ELSE 'onehot' END;
    END IF;
    IF coltype IN ('text'::regtype, 'character varying'::regtype, 'character'::regtype,
            'smallint'::regtype, 'integer'::regtype, 'bigint'::regtype, 'boolean'::regtype,
            'real'::regtype, 'double precision'::regtype, 'numeric'::regtype) THEN
        RETURN 'class';
    END IF;
    RAISE EXCEPTION 'dependent variable "%" has type %, which cannot hold class values', col, typname
        USING ERRCODE = 'datatype_mismatch',
              HINT = 'Use text, character varying, character, smallint, integer, bigint, boolean, '
                     'real, double precision or numeric classes, or a one-hot numeric array.';
END
$$;

-- The width of the array dependent variable col in the first row of src
-- (22004 when NULL or empty there).
CREATE FUNCTION madlib_dl._pp_first_width(src text[], col text)
RETURNS integer
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    first_tid tid;
    w integer;
BEGIN
    PERFORM madlib_dl._assert_trusted_table(madlib_dl._table_oid(src));
    EXECUTE format('SELECT s.ctid, array_length(s.%1$I, 1) FROM %2$I.%3$I s LIMIT 1', col, src[1], src[2])
       INTO first_tid, w;
    IF w IS NULL THEN
        RAISE EXCEPTION 'dependent variable is NULL or empty in the row with ctid %', first_tid
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = format('Find the row with SELECT * FROM %s WHERE ctid = ''%s'', then fix or delete it.',
                                madlib_dl._table_sql(src), first_tid);
    END IF;
    RETURN w;
END
$$;

-- Check and fix the class count of training dependent variable k (column
-- col of kind kind, class values in column cv_col of summary summ):
-- num_classes pads a class variable's values with NULL classes (MADlib),
-- an array's width must be num_classes when given.  Returns the count.
CREATE FUNCTION madlib_dl._pp_class_count(src text[], summ text[], col text, coltype regtype,
                                          kind text, cv_col text, num_classes integer)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n_distinct integer;
    ncls integer;
BEGIN
    PERFORM madlib_dl._assert_trusted_table(madlib_dl._table_oid(src));
    PERFORM madlib_dl._assert_trusted_table(madlib_dl._table_oid(summ));
    IF kind <> 'class' THEN
        ncls := madlib_dl._pp_first_width(src, col);
        IF num_classes IS NOT NULL AND num_classes <> ncls THEN
            RAISE EXCEPTION 'num_classes % does not match the % values of the one-hot dependent variable',
                    num_classes, ncls
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Give NULL for num_classes: a one-hot array has one value per class.';
        END IF;
        RETURN ncls;
    END IF;
    EXECUTE format('SELECT cardinality(%I) FROM %I.%I', cv_col, summ[1], summ[2]) INTO n_distinct;
    ncls := coalesce(num_classes, n_distinct);
    IF ncls < n_distinct THEN
        RAISE EXCEPTION 'num_classes % is smaller than the % distinct class values', ncls, n_distinct
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = format('Give num_classes of at least %s, or NULL to use the number of distinct values.',
                                n_distinct);
    END IF;
    IF ncls > n_distinct THEN
        -- MADlib pads the class values with NULL classes.
        EXECUTE format('UPDATE %1$I.%2$I SET %3$I = %3$I || array_fill(NULL::%4$s, ARRAY[$1])',
                       summ[1], summ[2], cv_col, format_type(coltype, NULL))
        USING ncls - n_distinct;
    END IF;
    RETURN ncls;
END
$$;

CREATE FUNCTION madlib_dl._training_preprocessor_dl(src text[], dst text[],
        dependent_varname text, independent_varname text, buffer_size integer,
        normalizing_const real, num_classes integer[], distribution_rules text,
        rules_tbl text[] DEFAULT NULL, transform text DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    summ text[] := ARRAY[dst[1], dst[2] || '_summary'];
    src_rel regclass;
    tf record;                  -- _tf_fit: the fitted transform and its columns
    cols text[];                -- the variables, dependent ones first
    x_exprs text[];             -- the transform's expression of the input (NULL: none)
    v record;                   -- _pp_vars: the variables, dependent ones first
    nd integer;                 -- dependent variables
    seg record;
    kinds text[];
    cv_cols text[];
    cv_exprs text := '';
    cast_types text[];
    n_rows bigint;
    dims jsonb := '[]';
    dims_k integer[];
    row_values bigint;
    max_values bigint := 1;
    ncls integer[];
    bs integer;
    norm real := coalesce(normalizing_const, 1.0);
    d integer;
BEGIN
    src_rel := madlib_dl._assert_table_exists(src, 'source_table');
    PERFORM madlib_dl._assert_output_absent(dst, 'output_table');
    PERFORM madlib_dl._assert_output_absent(summ, 'output_table');
    v := madlib_dl._pp_vars(src_rel, dependent_varname,
                            CASE WHEN transform IS NULL THEN independent_varname END, transform IS NULL);
    nd := v.n_dep;
    cols := v.cols;
    IF transform IS NOT NULL THEN
        -- one input, built by the transform from raw columns
        cols := cols || madlib_dl._tf_input_name(independent_varname, v.cols);
        tf := madlib_dl._tf_fit(src, transform);
        x_exprs := ARRAY[madlib_dl._tf_expr('c.tf', tf.cols, 's')];
    END IF;
    IF num_classes IS NOT NULL AND cardinality(num_classes) <> nd THEN
        RAISE EXCEPTION 'num_classes % has % elements, but there are % dependent variables',
                        num_classes, cardinality(num_classes), nd
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give one number of classes per dependent variable (NULL in the array is not allowed), or NULL.';
    END IF;
    PERFORM madlib_dl._pp_check_args(buffer_size, norm);
    seg := madlib_dl._pp_segments(distribution_rules, rules_tbl);

    -- The kind of each dependent variable; its class values column.
    FOR k IN 1 .. nd LOOP
        kinds[k] := madlib_dl._pp_dep_kind(src, v.cols[k], v.types[k], v.typnames[k], v.elemtypes[k]);
        cv_cols[k] := v.cols[k] || '_class_values';
        cast_types[k] := format_type(v.types[k], NULL);
        -- Class values: the sorted distinct values, NULL first; for arrays
        -- NULL (as MADlib), the width coming from the first row.
        cv_exprs := cv_exprs || format(', %s AS %I',
            CASE WHEN kinds[k] = 'class'
                 THEN format('(SELECT array_agg(DISTINCT s.%1$I ORDER BY s.%1$I NULLS FIRST) FROM %2$I.%3$I s)',
                             v.cols[k], src[1], src[2])
                 ELSE format('NULL::%s', v.typnames[k]) END,
            cv_cols[k]);
    END LOOP;

    n_rows := madlib_dl._pp_count_rows(src);
    FOR k IN nd + 1 .. cardinality(cols) LOOP
        IF transform IS NOT NULL THEN
            dims_k := ARRAY[madlib_dl._transform_width(tf.plan)];
        ELSE
            dims_k := madlib_dl._pp_first_dims(src, v.cols[k], v.types[k], v.elemtypes[k]);
        END IF;
        dims := dims || jsonb_build_array(to_jsonb(dims_k));
        row_values := 1;
        FOREACH d IN ARRAY dims_k LOOP
            row_values := row_values * d;
        END LOOP;
        max_values := greatest(max_values, row_values);
    END LOOP;

    EXECUTE format($q$
        CREATE TABLE %I.%I AS
        SELECT $1::text AS source_table, $2::text AS output_table,
               $3::text[] AS dependent_varname, $4::text[] AS independent_varname,
               $5::text[] AS dependent_vartype%s,
               NULL::integer AS buffer_size, $6::real AS normalizing_const,
               NULL::integer[] AS num_classes, $7::text AS distribution_rules,
               'all_segments'::text AS __internal_gpu_config__, $8::integer AS num_segments,
               madlib_dl.version() AS madlib_version%s
        $q$, summ[1], summ[2], cv_exprs, madlib_dl._distributed_clause())
    USING madlib_dl._table_given(src), madlib_dl._table_given(dst), v.cols[1:nd], cols[nd + 1:],
          v.typnames[1:nd], norm, seg.rules, seg.nseg;
    IF transform IS NOT NULL THEN
        PERFORM madlib_dl._tf_store(summ, tf.plan);
    END IF;

    FOR k IN 1 .. nd LOOP
        ncls[k] := madlib_dl._pp_class_count(src, summ, v.cols[k], v.types[k], kinds[k], cv_cols[k],
                                             num_classes[k]);
    END LOOP;

    -- the buffer size of the widest independent variable (MADlib: the smallest of theirs)
    bs := madlib_dl._pp_buffer_size(n_rows, max_values, seg.nseg, buffer_size);
    EXECUTE format('UPDATE %I.%I SET buffer_size = $1, num_classes = $2', summ[1], summ[2])
    USING bs, ncls;

    PERFORM madlib_dl._pp_pack(src, dst, summ, cv_cols, v.cols[1:nd], cols[nd + 1:], kinds,
                               cast_types, n_rows, bs, seg.nseg, ncls, norm, dims, true, x_exprs);
    IF madlib_dl._is_greenplum() THEN   -- place buffer b on segment b % nseg (greenplum.sql)
        PERFORM madlib_dl._gp_place_buffers(dst);
    END IF;
END
$$;

-- The kind of validation dependent variable col, of the kind of the
-- training data's (vartype, its dependent_vartype): arrays ('onehot' or
-- 'numeric', as _pp_dep_kind finds them) or classes ('class', with
-- cast_type the element type of the training class values, column
-- cv_col of summary tsumm_rel).  22023 / 42703 / 42804 otherwise.
CREATE FUNCTION madlib_dl._pp_val_dep_kind(src text[], tsumm_rel regclass, col text, coltype regtype,
                                           typname text, elemtype regtype, vartype text, cv_col text,
                                           OUT kind text, OUT cast_type text)
RETURNS record
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    elem_kind "char";
BEGIN
    IF vartype LIKE '%[]' THEN
        IF elemtype IS NULL OR elemtype NOT IN ('smallint'::regtype, 'integer'::regtype,
                'bigint'::regtype, 'real'::regtype, 'double precision'::regtype, 'numeric'::regtype) THEN
            RAISE EXCEPTION 'dependent variable "%" has type %, but the training data has one-hot arrays of type %',
                    col, typname, vartype
                USING ERRCODE = 'datatype_mismatch',
                      HINT = 'Give a one-hot numeric array column, as for training.';
        END IF;
        kind := madlib_dl._pp_dep_kind(src, col, coltype, typname, elemtype);
        RETURN;
    END IF;
    IF elemtype IS NOT NULL THEN
        RAISE EXCEPTION 'dependent variable "%" has type %, but the training data has class values of type %',
                col, typname, vartype
            USING ERRCODE = 'datatype_mismatch',
                  HINT = 'Give a class column of the training data''s type.';
    END IF;
    kind := 'class';
    -- The class values are cast to the element type of <dep>_class_values,
    -- read from a table another role may own: only a base or enum type,
    -- never a domain, whose CHECK would run that role's code as the caller.
    SELECT format_type(t.typelem, NULL), et.typtype INTO cast_type, elem_kind
      FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
           LEFT JOIN pg_type et ON et.oid = t.typelem
     WHERE a.attrelid = tsumm_rel AND a.attname = cv_col AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table "%" has no column "%"', tsumm_rel::text, cv_col
            USING ERRCODE = 'undefined_column',
                  HINT = 'Give a table made by training_preprocessor_dl.';
    END IF;
    IF elem_kind IS NULL OR elem_kind NOT IN ('b', 'e') THEN
        RAISE EXCEPTION 'column "%" of table "%" has type %, not an array of a base type',
                cv_col, tsumm_rel::text,
                (SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
                  WHERE a.attrelid = tsumm_rel AND a.attname = cv_col)
            USING ERRCODE = 'datatype_mismatch',
                  HINT = 'Give a table made by training_preprocessor_dl; its class values are an array of the class column''s base type.';
    END IF;
END
$$;

-- Check validation dependent variable col (of kind kind) against the
-- training data: every class value a training class (class values in
-- column cv_col of summary tsumm), NULL only if NULL was a class in
-- training (it sorts first), not a padding slot; an array's width the
-- training's ncls.  22000 naming the value or the row.
CREATE FUNCTION madlib_dl._pp_val_dep_check(src text[], tsumm text[], col text, kind text,
                                            cast_type text, cv_col text, ncls integer)
RETURNS void
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    bad_value text;
    first_tid tid;
    d integer;
BEGIN
    PERFORM madlib_dl._assert_trusted_table(madlib_dl._table_oid(src));
    PERFORM madlib_dl._assert_trusted_table(madlib_dl._table_oid(tsumm));
    IF kind = 'class' THEN
        EXECUTE format($q$
            SELECT quote_nullable(s.%1$I)
              FROM %2$I.%3$I s, (SELECT %4$I AS cv FROM %5$I.%6$I) c
             WHERE CASE WHEN s.%1$I IS NULL THEN c.cv[1] IS NOT NULL
                        ELSE array_position(c.cv, s.%1$I::%7$s) IS NULL END
             LIMIT 1 $q$,
            col, src[1], src[2], cv_col, tsumm[1], tsumm[2], cast_type)
           INTO bad_value;
        IF bad_value IS NOT NULL THEN
            RAISE EXCEPTION 'class value % of dependent variable "%" is not among the class values of the training data',
                    bad_value, col
                USING ERRCODE = 'data_exception',
                      HINT = format('The training classes are listed in %s of %s; validation data may use only those.',
                                    cv_col, madlib_dl._table_sql(tsumm));
        END IF;
        RETURN;
    END IF;
    EXECUTE format('SELECT s.ctid, array_length(s.%1$I, 1) FROM %2$I.%3$I s LIMIT 1', col, src[1], src[2])
       INTO first_tid, d;
    IF d IS DISTINCT FROM ncls THEN
        RAISE EXCEPTION 'dependent variable has % values in the row with ctid %, but the training data has % classes',
                coalesce(d::text, 'no'), first_tid, ncls
            USING ERRCODE = 'data_exception',
                  HINT = 'Each one-hot array must have one value per training class.';
    END IF;
END
$$;

CREATE FUNCTION madlib_dl._validation_preprocessor_dl(src text[], dst text[],
        dependent_varname text, independent_varname text, train text[],
        buffer_size integer, distribution_rules text, rules_tbl text[] DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    summ text[] := ARRAY[dst[1], dst[2] || '_summary'];
    tsumm text[] := ARRAY[train[1], train[2] || '_summary'];
    tf jsonb;                   -- the training table's transform (NULL: none)
    tf_cols text[];             -- its columns in the validation table
    cols text[];                -- the variables, dependent ones first
    src_rel regclass;
    train_rel regclass;
    tsumm_rel regclass;
    ts record;                  -- the training summary's lists
    v record;                   -- _pp_vars: the variables, dependent ones first
    nd integer;
    seg record;
    dk record;
    kinds text[];
    cast_types text[];
    cv_cols text[];             -- the training summary's class value columns
    cv_exprs text := '';
    n_rows bigint;
    dims jsonb := '[]';
    dims_k integer[];
    train_dims integer[];
    row_values bigint;
    max_values bigint := 1;
    bs integer;
    d integer;
BEGIN
    src_rel := madlib_dl._assert_table_exists(src, 'source_table');
    PERFORM madlib_dl._assert_output_absent(dst, 'output_table');
    PERFORM madlib_dl._assert_output_absent(summ, 'output_table');
    train_rel := madlib_dl._assert_table_exists(train, 'training_preprocessor_table');
    tsumm_rel := madlib_dl._assert_table_exists(tsumm, 'training_preprocessor_table summary');
    PERFORM madlib_dl._assert_known_format(tsumm_rel,
        format('training_preprocessor_table "%s"', madlib_dl._table_label(train)));
    PERFORM madlib_dl._assert_columns(tsumm_rel,
        ARRAY['dependent_varname', 'independent_varname', 'dependent_vartype', 'normalizing_const',
              'num_classes', 'num_segments'],
        ARRAY['text[]', 'text[]', 'text[]', 'real', 'integer[]', 'integer'],
        'the summary of a table made by training_preprocessor_dl');
    EXECUTE format('SELECT dependent_varname AS deps, independent_varname AS indeps, '
                   'dependent_vartype AS vartypes, normalizing_const, num_classes AS ncls, '
                   'num_segments FROM %I.%I', tsumm[1], tsumm[2])
       INTO ts;

    tf := madlib_dl._tf_of_summary(tsumm);
    IF tf IS NOT NULL THEN
        -- the training table's transform, with its statistics, on the raw columns
        IF independent_varname IS NOT NULL
           AND madlib_dl._tf_input_name(independent_varname, NULL) IS DISTINCT FROM ts.indeps[1] THEN
            RAISE EXCEPTION 'independent_varname "%" is not the input "%" the training transform builds',
                            independent_varname, ts.indeps[1]
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Give NULL: the training table''s transform builds the input from the raw columns.';
        END IF;
        tf_cols := (madlib_dl._tf_columns(src_rel, tf, 'source table')).cols;
    END IF;
    v := madlib_dl._pp_vars(src_rel, dependent_varname, CASE WHEN tf IS NULL THEN independent_varname END,
                            tf IS NULL);
    nd := v.n_dep;
    cols := v.cols;
    IF tf IS NOT NULL THEN
        cols := cols || ts.indeps[1];
    END IF;
    IF nd IS DISTINCT FROM cardinality(ts.deps) OR cardinality(cols) - nd IS DISTINCT FROM cardinality(ts.indeps)
       OR cardinality(ts.vartypes) IS DISTINCT FROM nd OR cardinality(ts.ncls) IS DISTINCT FROM nd THEN
        RAISE EXCEPTION 'the validation data has % dependent and % independent variables, the training data % and %',
                nd, cardinality(cols) - nd, coalesce(cardinality(ts.deps), 0), coalesce(cardinality(ts.indeps), 0)
            USING ERRCODE = 'data_exception',
                  HINT = 'Give the variables of the training data, in the same order.';
    END IF;
    PERFORM madlib_dl._pp_check_args(buffer_size, NULL);
    IF distribution_rules IS NULL THEN
        seg := madlib_dl._pp_segments(ts.num_segments::text);
    ELSE
        seg := madlib_dl._pp_segments(distribution_rules, rules_tbl, ts.num_segments);
    END IF;

    -- Each dependent variable must be of the training data's kind.
    FOR k IN 1 .. nd LOOP
        cv_cols[k] := ts.deps[k] || '_class_values';
        dk := madlib_dl._pp_val_dep_kind(src, tsumm_rel, v.cols[k], v.types[k], v.typnames[k],
                                         v.elemtypes[k], ts.vartypes[k], cv_cols[k]);
        kinds[k] := dk.kind;
        cast_types[k] := dk.cast_type;
        cv_exprs := cv_exprs || format(', (SELECT %I FROM %I.%I) AS %I', cv_cols[k], tsumm[1], tsumm[2],
                                       v.cols[k] || '_class_values');
    END LOOP;

    n_rows := madlib_dl._pp_count_rows(src);
    FOR k IN nd + 1 .. cardinality(cols) LOOP
        IF tf IS NOT NULL THEN
            dims_k := ARRAY[madlib_dl._transform_width(tf)];
        ELSE
            dims_k := madlib_dl._pp_first_dims(src, v.cols[k], v.types[k], v.elemtypes[k]);
        END IF;
        EXECUTE format('SELECT %I[2:] FROM %I.%I LIMIT 1', ts.indeps[k - nd] || '_shape', train[1], train[2])
           INTO train_dims;
        IF train_dims IS DISTINCT FROM dims_k THEN
            RAISE EXCEPTION 'independent variable "%" has shape % in the first row, but the training data has shape %',
                    cols[k], dims_k, train_dims
                USING ERRCODE = 'data_exception',
                      HINT = 'Validation rows must have the shape of the training rows.';
        END IF;
        dims := dims || jsonb_build_array(to_jsonb(dims_k));
        row_values := 1;
        FOREACH d IN ARRAY dims_k LOOP
            row_values := row_values * d;
        END LOOP;
        max_values := greatest(max_values, row_values);
    END LOOP;
    FOR k IN 1 .. nd LOOP
        PERFORM madlib_dl._pp_val_dep_check(src, tsumm, v.cols[k], kinds[k], cast_types[k], cv_cols[k],
                                            ts.ncls[k]);
    END LOOP;

    bs := madlib_dl._pp_buffer_size(n_rows, max_values, seg.nseg, buffer_size);
    EXECUTE format($q$
        CREATE TABLE %I.%I AS
        SELECT $1::text AS source_table, $2::text AS output_table,
               $3::text[] AS dependent_varname, $4::text[] AS independent_varname,
               $5::text[] AS dependent_vartype%s,
               $6::integer AS buffer_size, $7::real AS normalizing_const,
               $8::integer[] AS num_classes, $9::text AS distribution_rules,
               'all_segments'::text AS __internal_gpu_config__, $10::integer AS num_segments,
               madlib_dl.version() AS madlib_version%s
        $q$, summ[1], summ[2], cv_exprs, madlib_dl._distributed_clause())
    USING madlib_dl._table_given(src), madlib_dl._table_given(dst), v.cols[1:nd], cols[nd + 1:],
          v.typnames[1:nd], bs, ts.normalizing_const, ts.ncls, seg.rules, seg.nseg;
    IF tf IS NOT NULL THEN
        PERFORM madlib_dl._tf_store(summ, tf);
    END IF;

    PERFORM madlib_dl._pp_pack(src, dst, summ,
                               ARRAY(SELECT c || '_class_values' FROM unnest(v.cols[1:nd]) c),
                               v.cols[1:nd], cols[nd + 1:], kinds, cast_types, n_rows, bs, seg.nseg,
                               ts.ncls, ts.normalizing_const, dims, false,
                               CASE WHEN tf IS NOT NULL THEN ARRAY[madlib_dl._tf_expr('c.tf', tf_cols, 's')] END);
    IF madlib_dl._is_greenplum() THEN   -- place buffer b on segment b % nseg (greenplum.sql)
        PERFORM madlib_dl._gp_place_buffers(dst);
    END IF;
END
$$;

-- ---------------------------------------------------------------------
-- Public API (MADlib signatures).  Thin wrappers: they resolve the table
-- names in the caller's search_path, then call the pinned drivers.
-- ---------------------------------------------------------------------

-- num_classes takes an integer or an integer array (newer MADlib): it is
-- declared anyelement, with a typed default so that omitting it works.
-- An untyped NULL or string, as in MADlib's documented
-- (..., 1000, 255, NULL, 'all_segments'), resolves to the text overload
-- below (an unknown literal prefers the string category), not to this
-- one, where its type could not be determined.  (anycompatible would do
-- with one function, but exists only from PostgreSQL 13; Greenplum 7 is
-- PostgreSQL 12.)
CREATE FUNCTION madlib_dl.training_preprocessor_dl(source_table varchar, output_table varchar,
        dependent_varname varchar, independent_varname varchar,
        buffer_size integer DEFAULT NULL, normalizing_const real DEFAULT 1.0,
        num_classes anyelement DEFAULT NULL::integer, distribution_rules text DEFAULT NULL,
        transform text DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._training_preprocessor_dl(
        madlib_dl._resolve_table($1, 'source_table'), madlib_dl._resolve_table($2, 'output_table'),
        $3, $4, $5, $6, madlib_dl._pp_num_classes($7), $8,
        CASE WHEN madlib_dl._pp_rules_is_table($8) THEN madlib_dl._resolve_table($8, 'distribution_rules') END,
        $9)
$$;

-- num_classes given as an untyped NULL (or as text, refused by
-- _pp_num_classes as before), after buffer_size and normalizing_const;
-- no default for it, so that a call without num_classes finds only the
-- function above.
CREATE FUNCTION madlib_dl.training_preprocessor_dl(source_table varchar, output_table varchar,
        dependent_varname varchar, independent_varname varchar,
        buffer_size integer, normalizing_const real,
        num_classes text, distribution_rules text DEFAULT NULL, transform text DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._training_preprocessor_dl(
        madlib_dl._resolve_table($1, 'source_table'), madlib_dl._resolve_table($2, 'output_table'),
        $3, $4, $5, $6, madlib_dl._pp_num_classes($7), $8,
        CASE WHEN madlib_dl._pp_rules_is_table($8) THEN madlib_dl._resolve_table($8, 'distribution_rules') END,
        $9)
$$;

CREATE FUNCTION madlib_dl.validation_preprocessor_dl(source_table varchar, output_table varchar,
        dependent_varname varchar, independent_varname varchar,
        training_preprocessor_table varchar,
        buffer_size integer DEFAULT NULL, distribution_rules text DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._validation_preprocessor_dl(
        madlib_dl._resolve_table($1, 'source_table'), madlib_dl._resolve_table($2, 'output_table'),
        $3, $4, madlib_dl._resolve_table($5, 'training_preprocessor_table'), $6, $7,
        CASE WHEN madlib_dl._pp_rules_is_table($7) THEN madlib_dl._resolve_table($7, 'distribution_rules') END)
$$;
