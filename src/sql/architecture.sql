-- architecture.sql: Keras model architecture tables, as in MADlib
-- (keras_model_arch_table): load_keras_model, load_keras_file (.keras and
-- .h5 files, decoded by src/pg/api/keras_file.c), delete_keras_model,
-- keras_model_summary, and the C helpers over architectures and weights
-- (src/pg/api/arch.c).

-- ---------------------------------------------------------------------
-- C functions
-- ---------------------------------------------------------------------

-- Parse model_arch (ERROR when NULL, malformed or unsupported) and check
-- model_weights, when not NULL, holds exactly P finite float32 values.
-- Returns P, the number of parameters.
CREATE FUNCTION madlib_dl._validate_arch(model_arch json, model_weights bytea)
RETURNS bigint
AS 'MODULE_PATHNAME', 'madlib_dl__validate_arch'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- Facts the drivers check data against.  output_shape's last dimension
-- is the number of classes; equal fingerprints accept each other's weights.
CREATE FUNCTION madlib_dl._arch_info(model_arch json,
    OUT input_shape integer[], OUT output_shape integer[],
    OUT n_params bigint, OUT n_trainable bigint, OUT n_layers integer,
    OUT fingerprint bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'madlib_dl__arch_info'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Each input (io 'input') and output ('output') of the model, in its
-- order (position from 0), with its layer's name and its shape per
-- sample: a packed table gives one independent variable per input and
-- one dependent variable per output, in this order.
CREATE FUNCTION madlib_dl._arch_io(model_arch json)
RETURNS TABLE (io text, "position" integer, name text, shape integer[])
AS 'MODULE_PATHNAME', 'madlib_dl__arch_io'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 2;

-- One row per layer, in model order, like Keras model.summary().
CREATE FUNCTION madlib_dl.keras_model_summary(model_arch json)
RETURNS TABLE (layer_name text, layer_type text, output_shape integer[], n_params bigint)
AS 'MODULE_PATHNAME', 'madlib_dl_keras_model_summary'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 10;

-- model_weights (flat little-endian float32) as real[], and back.
CREATE FUNCTION madlib_dl.weights_to_array(model_weights bytea)
RETURNS real[]
AS 'MODULE_PATHNAME', 'madlib_dl_weights_to_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION madlib_dl.weights_from_array(weights real[])
RETURNS bytea
AS 'MODULE_PATHNAME', 'madlib_dl_weights_from_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- A model of a variable input shape ([null, null, null, 3]: any image
-- size) bound to the shape of one example (NULL: 224 for each unknown
-- size, what its weights are checked against); the same model when its
-- input shape is fixed.  _arch_free_dims: how many sizes are unknown.
CREATE FUNCTION madlib_dl._arch_bind_shape(model_arch json, shape integer[])
RETURNS json
AS 'MODULE_PATHNAME', 'madlib_dl__arch_bind_shape'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION madlib_dl._arch_free_dims(model_arch json)
RETURNS integer
AS 'MODULE_PATHNAME', 'madlib_dl__arch_free_dims'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The weight tensors of model_arch in the order model_weights holds
-- them, Keras' get_weights() order: layer by layer, each layer's as
-- Keras lists them (Dense: kernel, bias; BatchNormalization: gamma, beta,
-- moving_mean, moving_variance).  first: the tensor's first float in the
-- block (from 1).
CREATE FUNCTION madlib_dl.keras_model_weights(model_arch json)
RETURNS TABLE ("position" integer, layer_name text, weight_name text, shape integer[],
               first bigint, count bigint)
AS 'MODULE_PATHNAME', 'madlib_dl_keras_model_weights'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 10;

-- The number of elements of a tensor of shape sh (1 for a scalar).
CREATE FUNCTION madlib_dl._shape_size(sh integer[])
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n numeric := 1;
    d integer;
BEGIN
    FOREACH d IN ARRAY coalesce(sh, '{}') LOOP
        n := n * d;
    END LOOP;
    IF n > 9223372036854775807 THEN
        RAISE EXCEPTION 'a tensor of shape % is too large', sh
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Give the shapes of the weights of a real model.';
    END IF;
    RETURN n::bigint;
END
$$;

-- The tensors a weights manifest lists, in its order (position from 1),
-- with each one's first byte in the weights (from 1): a TF.js
-- weightsManifest ([{"paths": [...], "weights": [{"name", "shape",
-- "dtype"}, ...]}, ...]), a list of {"name", "shape"} objects, or a list
-- of shapes ([w.shape for w in model.get_weights()]).  quantized: the
-- entry has a "quantization" (its bytes are not float32).  22023 for
-- anything else.
CREATE FUNCTION madlib_dl._manifest_tensors(manifest jsonb)
RETURNS TABLE ("position" integer, name text, shape integer[], first_byte bigint, quantized boolean)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e jsonb;
    w jsonb;
    items jsonb := '[]';
    pos integer := 0;
    byte bigint := 1;
    sh integer[];
BEGIN
    IF jsonb_typeof(manifest) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'weights_manifest must be a json array, got %', coalesce(jsonb_typeof(manifest), 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give model.json''s weightsManifest, a list of {"name": ..., "shape": [...]}, '
                         'or a list of shapes ([w.shape for w in model.get_weights()]).';
    END IF;
    FOR e IN SELECT v FROM jsonb_array_elements(manifest) v LOOP
        IF jsonb_typeof(e) = 'object' AND e ? 'weights' THEN
            items := items || coalesce(e->'weights', '[]');
        ELSE
            items := items || jsonb_build_array(e);
        END IF;
    END LOOP;
    FOR w IN SELECT v FROM jsonb_array_elements(items) v LOOP
        pos := pos + 1;
        IF jsonb_typeof(w) = 'array' THEN
            name := NULL;
            e := w;
        ELSIF jsonb_typeof(w) = 'object' AND jsonb_typeof(w->'shape') = 'array' THEN
            name := w->>'name';
            e := w->'shape';
        ELSE
            RAISE EXCEPTION 'weights_manifest entry % is %, not a shape or a {"name", "shape"} object', pos, w
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Give model.json''s weightsManifest, a list of {"name": ..., "shape": [...]}, '
                             'or a list of shapes.';
        END IF;
        IF EXISTS (SELECT FROM jsonb_array_elements(e) d
                    WHERE jsonb_typeof(d) <> 'number' OR d::text !~ '^[0-9]{1,9}$') THEN
            RAISE EXCEPTION 'weights_manifest entry % has the shape %, not a list of sizes', pos, e
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Every dimension of a weight''s shape is a non-negative integer.';
        END IF;
        sh := ARRAY(SELECT d::text::integer FROM jsonb_array_elements(e) d);
        position := pos;
        shape := sh;
        first_byte := byte;
        quantized := jsonb_typeof(w) = 'object' AND (w ? 'quantization' OR
                     coalesce(w->>'dtype', 'float32') <> 'float32');
        byte := byte + 4 * madlib_dl._shape_size(sh);
        RETURN NEXT;
    END LOOP;
END
$$;

-- model_weights, whose tensors weights_manifest lists (names and shapes,
-- _manifest_tensors), in the order of model_arch (keras_model_weights):
-- when the manifest names every tensor ("layer/weight", as TF.js and
-- Keras name them), the tensors are put in Keras order by name; else they
-- must already be in that order.  Either way each tensor's shape must be
-- the one the architecture expects: 22000 naming the layer, the weight
-- and both shapes.  Quantized entries are refused (22023).
CREATE FUNCTION madlib_dl._weights_in_keras_order(model_arch json, model_weights bytea,
                                                  weights_manifest jsonb)
RETURNS bytea
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n_exp integer;
    n_got integer;
    matched integer;
    total bigint;
    bad record;
    out bytea;
BEGIN
    IF model_weights IS NULL OR weights_manifest IS NULL THEN
        RETURN model_weights;
    END IF;
    SELECT count(*) INTO n_exp FROM madlib_dl.keras_model_weights(model_arch);
    SELECT count(*), sum(madlib_dl._shape_size(g.shape))
      INTO n_got, total FROM madlib_dl._manifest_tensors(weights_manifest) g;
    SELECT * INTO bad FROM madlib_dl._manifest_tensors(weights_manifest) g WHERE g.quantized LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'weights_manifest entry % ("%") is quantized or not float32', bad.position, bad.name
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Load the model in TF.js (tf.loadLayersModel dequantizes it) and give its weights '
                         'as float32: model.layers.flatMap(l => l.getWeights()).';
    END IF;
    IF 4 * coalesce(total, 0) <> length(model_weights) THEN
        RAISE EXCEPTION 'weights_manifest lists % float32 values but model_weights has % bytes (% values)',
                        coalesce(total, 0), length(model_weights), length(model_weights) / 4
            USING ERRCODE = 'data_exception',
                  HINT = 'Give the manifest of these weights: one entry per tensor, in the order the bytes hold them.';
    END IF;
    -- each expected tensor's manifest entry by name: "layer/weight",
    -- alone or after a prefix ("model/layer/weight"), ":0" dropped
    WITH e AS (SELECT * FROM madlib_dl.keras_model_weights(model_arch)),
         g AS (SELECT t.*, regexp_replace(t.name, ':[0-9]+$', '') AS nm
                 FROM madlib_dl._manifest_tensors(weights_manifest) t),
         m AS (SELECT e.position, count(g.position) AS n
                 FROM e LEFT JOIN g ON g.nm = e.layer_name || '/' || e.weight_name
                                    OR g.nm LIKE '%/' || replace(replace(e.layer_name, '_', '\_'), '%', '\%')
                                                 || '/' || e.weight_name
                GROUP BY e.position)
    SELECT count(*) FILTER (WHERE m.n = 1) INTO matched FROM m;
    IF matched = n_exp AND n_got = n_exp THEN
        -- by name: check each shape, then the bytes in Keras order
        WITH e AS (SELECT * FROM madlib_dl.keras_model_weights(model_arch)),
             g AS (SELECT t.*, regexp_replace(t.name, ':[0-9]+$', '') AS nm
                     FROM madlib_dl._manifest_tensors(weights_manifest) t)
        SELECT e.layer_name, e.weight_name, e.shape AS want, g.shape AS have, g.name, g.position AS gpos
          INTO bad
          FROM e JOIN g ON g.nm = e.layer_name || '/' || e.weight_name
                        OR g.nm LIKE '%/' || replace(replace(e.layer_name, '_', '\_'), '%', '\%')
                                     || '/' || e.weight_name
         WHERE g.shape IS DISTINCT FROM e.shape
         ORDER BY e.position LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'weight "%" (manifest entry %) has shape % but layer "%" expects its % of shape %',
                            bad.name, bad.gpos, bad.have, bad.layer_name, bad.weight_name, bad.want
                USING ERRCODE = 'data_exception',
                      HINT = 'Give the weights of this architecture: madlib_dl.keras_model_weights(model_arch) '
                             'lists the tensors it expects, in order.';
        END IF;
        WITH e AS (SELECT * FROM madlib_dl.keras_model_weights(model_arch)),
             g AS (SELECT t.*, regexp_replace(t.name, ':[0-9]+$', '') AS nm
                     FROM madlib_dl._manifest_tensors(weights_manifest) t)
        SELECT string_agg(substring(model_weights FROM g.first_byte::integer FOR (4 * e.count)::integer),
                          ''::bytea ORDER BY e.position)
          INTO out
          FROM e JOIN g ON g.nm = e.layer_name || '/' || e.weight_name
                        OR g.nm LIKE '%/' || replace(replace(e.layer_name, '_', '\_'), '%', '\%')
                                     || '/' || e.weight_name;
        RETURN coalesce(out, ''::bytea);
    END IF;
    -- by position: the shapes must be the architecture's, in its order
    WITH e AS (SELECT * FROM madlib_dl.keras_model_weights(model_arch)),
         g AS (SELECT * FROM madlib_dl._manifest_tensors(weights_manifest))
    SELECT coalesce(e.position, g.position) AS position, e.layer_name, e.weight_name,
           e.shape AS want, g.shape AS have, g.name
      INTO bad
      FROM e FULL JOIN g ON g.position = e.position
     WHERE g.shape IS DISTINCT FROM e.shape
     ORDER BY 1 LIMIT 1;
    IF FOUND THEN
        IF bad.layer_name IS NULL THEN
            RAISE EXCEPTION 'weights_manifest lists % tensors but the architecture has %', n_got, n_exp
                USING ERRCODE = 'data_exception',
                      HINT = 'madlib_dl.keras_model_weights(model_arch) lists the tensors it expects, in order.';
        END IF;
        RAISE EXCEPTION 'weight % of model_weights% has shape % but layer "%" expects its % of shape % there',
                        bad.position, coalesce(' ("' || bad.name || '")', ''), coalesce(bad.have::text, '(none)'),
                        bad.layer_name, bad.weight_name, bad.want
            USING ERRCODE = 'data_exception',
                  HINT = 'Give the weights in Keras order, layer by layer (Keras: model.get_weights(); '
                         'TF.js: model.layers.flatMap(l => l.getWeights()), not model.getWeights(), which '
                         'lists the non-trainable weights last); madlib_dl.keras_model_weights(model_arch) '
                         'lists the order.';
    END IF;
    RETURN model_weights;
END
$$;

-- ---------------------------------------------------------------------
-- Drivers (internal; search_path pinned; tables come as {schema, table})
-- ---------------------------------------------------------------------

-- Raise P0002: model_id (as text: '3', or '3 of mst_key 5' naming who
-- asks) is not in arch, a model architecture table.
CREATE FUNCTION madlib_dl._arch_raise_model_id_missing(model_id text, arch text[])
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'model_id % not found in model architecture table "%"', model_id,
                    madlib_dl._table_label(arch)
        USING ERRCODE = 'no_data_found',
              HINT = format('SELECT model_id, name FROM %s lists the architectures it holds.',
                            madlib_dl._table_sql(arch));
END
$$;

-- Insert one architecture into tbl, creating the table on first use.
CREATE FUNCTION madlib_dl._load_keras_model(tbl text[], model_arch json, model_weights bytea,
                                            name varchar, description varchar,
                                            weights_manifest jsonb DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass;
BEGIN
    PERFORM madlib_dl._assert_not_null(model_arch, 'model_arch');
    -- the tensors' shapes, when given, against the architecture's (and
    -- put in Keras order by their names)
    model_weights := madlib_dl._weights_in_keras_order(model_arch, model_weights, weights_manifest);
    -- Validate before touching any table, so a bad model leaves no trace.
    PERFORM madlib_dl._validate_arch(model_arch, model_weights);

    IF madlib_dl._table_oid(tbl) IS NULL THEN
        PERFORM madlib_dl._assert_schema_exists(tbl);
        EXECUTE format(
            'CREATE TABLE IF NOT EXISTS %I.%I ('
            '  model_id serial PRIMARY KEY,'
            '  model_arch json,'
            '  model_weights bytea,'
            '  name text,'
            '  description text,'
            '  __internal_madlib_id__ text UNIQUE)%s', tbl[1], tbl[2], madlib_dl._replicated_clause());
    END IF;
    rel := madlib_dl._assert_table_exists(tbl, 'keras_model_arch_table');
    PERFORM madlib_dl._assert_columns(rel,
        ARRAY['model_id', 'model_arch', 'model_weights', 'name', 'description',
              '__internal_madlib_id__'],
        ARRAY['integer', 'json', 'bytea', 'text', 'text', 'text'],
        'a model architecture table made by load_keras_model');
    -- appending to an existing table: only one of the caller's own, with
    -- no other role's trigger, rule or default (docs/security.md)
    PERFORM madlib_dl._assert_writable_table(rel, 'a model architecture table made by load_keras_model');

    EXECUTE format(
        'INSERT INTO %I.%I (model_arch, model_weights, name, description, __internal_madlib_id__)'
        ' VALUES ($1, $2, $3, $4, $5)', tbl[1], tbl[2])
    USING model_arch, model_weights, name::text, description::text,
          '__madlib_temp_' || replace(md5(random()::text || clock_timestamp()::text)::uuid::text, '-', '_');
END
$$;

-- A Keras model file (.keras or legacy .h5) decoded, in a child process
-- (src/pg/api/keras_file.c): its JSON config, "keras" or "h5", its tensors
-- ([{"layer", "index", "path", "shape"}], index: the tensor's position
-- among its layer's weights) and their float32 values in that order.
CREATE FUNCTION madlib_dl._keras_file_read(file bytea, OUT model_arch json, OUT format text,
                                           OUT tensors jsonb, OUT model_weights bytea)
RETURNS record
AS 'MODULE_PATHNAME', 'madlib_dl__keras_file_read'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

-- Load a Keras model file into tbl: each tensor of the file is matched to
-- the architecture's by its layer and its position among that layer's
-- weights (keras_model_weights), a tensor too many or one missing refused
-- naming the layer and the tensor; _load_keras_model then checks every
-- shape and puts the weights in Keras order by their names.
CREATE FUNCTION madlib_dl._load_keras_file(tbl text[], file bytea, name varchar, description varchar)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
    m record;
BEGIN
    PERFORM madlib_dl._assert_not_null(file, 'file');
    -- decoded (and refused) before any table is touched
    r := madlib_dl._keras_file_read(file);
    -- the file's tensors against the architecture's, by layer and position
    -- in the layer, in one pass: the first the architecture lacks, the
    -- first the file lacks, and the manifest of the pairs
    WITH e AS (SELECT k.*, (row_number() OVER (PARTITION BY k.layer_name ORDER BY k.position) - 1)::integer AS idx
                 FROM madlib_dl.keras_model_weights(r.model_arch) k),
         t AS (SELECT x.ord, x.v->>'layer' AS layer, (x.v->>'index')::integer AS idx, x.v->>'path' AS path,
                      x.v->'shape' AS shape
                 FROM jsonb_array_elements(r.tensors) WITH ORDINALITY x(v, ord)),
         j AS (SELECT t.ord, t.layer, t.idx AS t_idx, t.path, t.shape AS t_shape,
                      e."position", e.layer_name, e.weight_name, e.idx AS e_idx, e.shape::text AS e_shape
                 FROM t FULL JOIN e ON e.layer_name = t.layer AND e.idx = t.idx)
    SELECT (SELECT to_jsonb(j1) FROM j j1 WHERE j1."position" IS NULL ORDER BY j1.ord LIMIT 1) AS extra,
           (SELECT to_jsonb(j2) FROM j j2 WHERE j2.ord IS NULL ORDER BY j2."position" LIMIT 1) AS missing,
           (SELECT jsonb_agg(jsonb_build_object('name', j3.layer_name || '/' || j3.weight_name, 'shape', j3.t_shape)
                             ORDER BY j3.ord)
              FROM j j3 WHERE j3.ord IS NOT NULL AND j3."position" IS NOT NULL) AS manifest
      INTO m;
    IF m.extra IS NOT NULL THEN
        RAISE EXCEPTION 'the keras file''s tensor "%" (weight % of layer "%", shape %) is not one the architecture has',
                        m.extra->>'path', (m.extra->>'t_idx')::integer + 1, m.extra->>'layer', m.extra->'t_shape'
            USING ERRCODE = 'data_exception',
                  HINT = 'madlib_dl.keras_model_weights(model_arch) lists the weights the file''s config.json '
                         '(model_config) gives each layer: the file''s weights and config do not match.';
    END IF;
    IF m.missing IS NOT NULL THEN
        RAISE EXCEPTION 'the keras file has no % of layer "%" (weight % of the layer, shape %)',
                        m.missing->>'weight_name', m.missing->>'layer_name', (m.missing->>'e_idx')::integer + 1,
                        m.missing->>'e_shape'
            USING ERRCODE = 'data_exception',
                  HINT = 'Save the whole model (model.save(''m.keras'')): the file must hold every weight of its architecture.';
    END IF;
    PERFORM madlib_dl._load_keras_model(tbl, r.model_arch, r.model_weights, name, description,
                                        coalesce(m.manifest, '[]'));
END
$$;

-- Delete model model_id from tbl; drop the table when it becomes empty.
CREATE FUNCTION madlib_dl._delete_keras_model(tbl text[], model_id integer)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel regclass;
    n bigint;
    left_over boolean;
BEGIN
    PERFORM madlib_dl._assert_not_null(model_id, 'model_id');
    rel := madlib_dl._assert_table_exists(tbl, 'keras_model_arch_table');
    PERFORM madlib_dl._assert_columns(rel, ARRAY['model_id'], ARRAY['integer'],
        'a model architecture table made by load_keras_model');
    PERFORM madlib_dl._assert_writable_table(rel, 'a model architecture table made by load_keras_model');

    -- No load may slip in between the emptiness check and the DROP.
    EXECUTE format('LOCK TABLE %I.%I IN EXCLUSIVE MODE', tbl[1], tbl[2]);
    EXECUTE format('DELETE FROM %I.%I WHERE model_id = $1', tbl[1], tbl[2]) USING model_id;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n = 0 THEN
        RAISE EXCEPTION 'model id % not found in table "%"', model_id, madlib_dl._table_label(tbl)
            USING ERRCODE = 'no_data_found',
                  HINT = format('SELECT model_id, name FROM %s lists the models it holds.',
                                madlib_dl._table_sql(tbl));
    END IF;

    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.%I)', tbl[1], tbl[2]) INTO left_over;
    IF NOT left_over THEN
        EXECUTE format('DROP TABLE %I.%I', tbl[1], tbl[2]);
    END IF;
END
$$;

-- ---------------------------------------------------------------------
-- Public API (MADlib signatures).  Thin wrappers: they resolve the table
-- name in the caller's search_path, then call the pinned drivers.
-- ---------------------------------------------------------------------

CREATE FUNCTION madlib_dl.load_keras_model(keras_model_arch_table varchar, model_arch json,
                                           model_weights bytea DEFAULT NULL,
                                           name varchar DEFAULT NULL,
                                           description varchar DEFAULT NULL,
                                           weights_manifest jsonb DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._load_keras_model(
        madlib_dl._resolve_table($1, 'keras_model_arch_table'), $2, $3, $4, $5, $6)
$$;

-- A model Keras saved (model.save('m.keras'), or a legacy 'm.h5'), its
-- architecture and weights, into model_arch_table as load_keras_model
-- loads them (docs/interchange.md, "Keras files").
CREATE FUNCTION madlib_dl.load_keras_file(model_arch_table text, file bytea,
                                          name text DEFAULT NULL,
                                          description text DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._load_keras_file(
        madlib_dl._resolve_table($1, 'model_arch_table'), $2, $3, $4)
$$;

CREATE FUNCTION madlib_dl.delete_keras_model(keras_model_arch_table varchar, model_id integer)
RETURNS void
LANGUAGE sql VOLATILE SECURITY INVOKER
AS $$
    SELECT madlib_dl._delete_keras_model(
        madlib_dl._resolve_table($1, 'keras_model_arch_table'), $2)
$$;

-- The help of keras_model_summary, weights_to_array and weights_from_array.
-- Their one argument is json, bytea or real[], so an untyped literal picks
-- these varchar overloads: anything but a help word is refused with a hint
-- to cast it, never answered with help text in place of the result.  The
-- help functions themselves are generated from src/help/help.json
-- (scripts/make-help-sql.py, the Makefile's help piece).
CREATE FUNCTION madlib_dl._help_or_refuse(fn text, arg_type text, message varchar,
                                          usage text, summary text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF lower(coalesce(message, '')) IN ('usage', 'help', '?') THEN
        RETURN usage;
    ELSIF coalesce(message, '') = '' THEN
        RETURN summary;
    END IF;
    RAISE EXCEPTION 'madlib_dl.%() takes a % value, not the text %', fn, arg_type,
        quote_literal(CASE WHEN length(message) > 40 THEN left(message, 40) || '...' ELSE message END)
        USING ERRCODE = 'invalid_parameter_value',
              HINT = format('Cast the literal: madlib_dl.%s(''...''::%s); for help, madlib_dl.%s(''usage'').',
                            fn, arg_type, fn);
END
$$;
