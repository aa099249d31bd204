#!/bin/bash
# test/published/run.sh: real published Keras models (TF.js layers format,
# from npm) predict with madlib_dl at the default limits and match
# TensorFlow.js (test/published/convert.js makes the files).
#
#   MobileNetV2 and InceptionV3 (nsfwjs 4.4.0): load_keras_model with the
#   weights in Keras order; the same weights in TF.js' getWeights() order
#   are refused, and put in order by their manifest; predict_byom of 1 row
#   and of 100 rows at the default madlib_dl.max_model_memory, every
#   probability within 1e-5 of TF.js'.
#   ESRGAN-slim x2 (@upscalerjs/esrgan-slim 1.0.0), input [null, null,
#   null, 3]: predict_byom on 16x16 and on 32x32 images, every output
#   value within 1e-5 of TF.js'; a table mixing both sizes is refused.
#
# The packages are not a dependency of the build and their weights are not
# in the tree.  Install them into the ignored folder .published/ first:
#   mkdir -p .published && (cd .published && npm install --legacy-peer-deps \
#       @tensorflow/tfjs@4.22.0 nsfwjs@4.4.0 @upscalerjs/esrgan-slim@1.0.0)
# then, with PGHOST/PGPORT/PGDATABASE of a server with madlib_dl installed:
#   test/published/run.sh [mobilenet_v2|inception_v3|esrgan_slim_x2]
# Without the packages it says NOT RUN and exits 0; a failed check exits 1.
set -euo pipefail
cd "$(dirname "$0")/../.."
PUB=${PUBLISHED_DIR:-$PWD/.published}
OUT=${PUBLISHED_OUT:-/tmp/madlib_dl_published}
ONLY=${1:-}
for p in @tensorflow/tfjs nsfwjs @upscalerjs/esrgan-slim; do
    if [ ! -d "$PUB/node_modules/$p" ]; then
        echo "NOT RUN: $p is not installed in $PUB (see the header of $0)"
        exit 0
    fi
done
mkdir -p "$OUT"
if [ ! -f "$OUT/esrgan_slim_x2.32x32.expected.tsv" ] || [ -n "${PUBLISHED_REMAKE:-}" ]; then
    node test/published/convert.js "$PUB" "$OUT" | grep -v -e '^=*$' -e 'Hi, looks like' -e 'tfjs-node' || true
fi
csv="WITH (FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02')"
PSQL="psql -X -q -v ON_ERROR_STOP=1"

$PSQL <<SQL
DROP SCHEMA IF EXISTS published CASCADE;
CREATE SCHEMA published;
CREATE TABLE published.files (model text, kind text, body text);
SQL
for m in mobilenet_v2 inception_v3 esrgan_slim_x2; do
    [ -n "$ONLY" ] && [ "$ONLY" != "$m" ] && continue
    $PSQL <<SQL
CREATE TEMP TABLE f (body text);
\copy f FROM '$OUT/$m.arch.json' $csv
INSERT INTO published.files SELECT '$m', 'arch', body FROM f; TRUNCATE f;
\copy f FROM '$OUT/$m.weights.hex' $csv
INSERT INTO published.files SELECT '$m', 'weights', body FROM f; TRUNCATE f;
\copy f FROM '$OUT/$m.tfjs_order.hex' $csv
INSERT INTO published.files SELECT '$m', 'tfjs_order', body FROM f; TRUNCATE f;
\copy f FROM '$OUT/$m.manifest.json' $csv
INSERT INTO published.files SELECT '$m', 'manifest', body FROM f; TRUNCATE f;
\copy f FROM '$OUT/$m.tfjs_manifest.json' $csv
INSERT INTO published.files SELECT '$m', 'tfjs_manifest', body FROM f; TRUNCATE f;
SQL
    for f in "$OUT"/$m.*.inputs.tsv; do
        tag=$(basename "$f" .inputs.tsv); tag=${tag#$m.}
        $PSQL <<SQL
CREATE TABLE published."${m}_${tag}_img" (id int, x float8[]);
\copy published."${m}_${tag}_img" FROM '$f'
CREATE TABLE published."${m}_${tag}_exp" (id int, class int, value float8);
\copy published."${m}_${tag}_exp" FROM '$OUT/$m.$tag.expected.tsv'
SQL
    done
done

$PSQL <<'SQL'
\set VERBOSITY terse
RESET madlib_dl.max_model_memory;
SELECT 'max_model_memory ' || current_setting('madlib_dl.max_model_memory') AS "limit";
CREATE FUNCTION published.body(m text, k text) RETURNS text LANGUAGE sql AS
$$ SELECT body FROM published.files WHERE model = m AND kind = k $$;
CREATE TABLE published.result (model text, check_name text, ok boolean, detail text);

-- the checks of one model; rows of published.result
CREATE FUNCTION published.check_model(m text, tag text, classifier boolean) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    arch json := published.body(m, 'arch')::json;
    w bytea := decode(substr(published.body(m, 'weights'), 3), 'hex');
    wt bytea := decode(substr(published.body(m, 'tfjs_order'), 3), 'hex');
    id int;
    d float8;
    n bigint;
    t0 timestamptz;
    msg text;
BEGIN
    -- Keras order loads
    PERFORM madlib_dl.load_keras_model('published.arch', arch, w, m);
    SELECT max(a.model_id) INTO id FROM published.arch a;
    -- TF.js getWeights() order: refused (shapes or values show it) unless equal
    BEGIN
        PERFORM madlib_dl.load_keras_model('published.arch', arch, wt, m || ' tfjs order');
        INSERT INTO published.result VALUES (m, 'tfjs getWeights() order without manifest refused',
            w = wt, CASE WHEN w = wt THEN 'same order as Keras (no BatchNormalization)' ELSE 'LOADED' END);
    EXCEPTION WHEN data_exception OR invalid_parameter_value THEN
        GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
        INSERT INTO published.result VALUES (m, 'tfjs getWeights() order without manifest refused', true, msg);
    END;
    -- with TF.js' manifest (names): put in Keras order
    BEGIN
        PERFORM madlib_dl.load_keras_model('published.arch', arch, wt, m || ' by manifest', NULL,
                                           published.body(m, 'tfjs_manifest')::jsonb);
        INSERT INTO published.result
        SELECT m, 'tfjs order + manifest reordered to Keras order', a.model_weights = w, NULL
          FROM published.arch a WHERE a.name = m || ' by manifest';
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
        INSERT INTO published.result VALUES (m, 'tfjs order + manifest reordered to Keras order', false, msg);
    END;
    -- the shapes of a manifest whose names are dropped, in TF.js order: refused when they differ
    BEGIN
        PERFORM madlib_dl.load_keras_model('published.arch', arch, wt, m || ' shapes', NULL,
            (SELECT jsonb_agg(e->'shape' ORDER BY o) FROM jsonb_array_elements(
                published.body(m, 'tfjs_manifest')::jsonb) WITH ORDINALITY AS x(e, o)));
        INSERT INTO published.result VALUES (m, 'tfjs order + shapes only refused', w = wt, 'LOADED');
    EXCEPTION WHEN data_exception THEN
        GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
        INSERT INTO published.result VALUES (m, 'tfjs order + shapes only refused', true, msg);
    END;
    FOR tag IN SELECT DISTINCT substring(table_name from length(m) + 2 for length(table_name) - length(m) - 5)
                 FROM information_schema.tables
                WHERE table_schema = 'published' AND table_name LIKE m || '\_%\_img' ORDER BY 1 LOOP
        FOR n IN SELECT unnest(CASE WHEN classifier THEN ARRAY[1, 100] ELSE ARRAY[2] END) LOOP
            EXECUTE format('DROP TABLE IF EXISTS published.t; DROP TABLE IF EXISTS published.p;'
                           'CREATE TABLE published.t AS SELECT g AS id, i.x FROM generate_series(0, %s - 1) g'
                           '  JOIN published.%I i ON i.id = g %% 2', n, m || '_' || tag || '_img');
            t0 := clock_timestamp();
            PERFORM madlib_dl.predict_byom('published.arch', id, 'published.t', 'id', 'x', 'published.p');
            EXECUTE format('SELECT max(abs(p.prob - e.value)), count(*) FROM published.p'
                           '  JOIN published.%I e ON e.id = p.id %% 2 AND e.class = p.class_value::int + 1',
                           m || '_' || tag || '_exp') INTO d, id;
            SELECT max(a.model_id) INTO id FROM published.arch a WHERE a.name = m;
            INSERT INTO published.result VALUES (m, format('%s rows %s: predict_byom max |diff| vs TF.js < 1e-5', n, tag),
                d < 1e-5, format('max |diff| %s over %s values, %s s', d,
                (SELECT count(*) FROM published.p),
                round(extract(epoch FROM clock_timestamp() - t0)::numeric, 2)));
        END LOOP;
    END LOOP;
END
$$;
SQL

for m in mobilenet_v2 inception_v3 esrgan_slim_x2; do
    [ -n "$ONLY" ] && [ "$ONLY" != "$m" ] && continue
    cls=true; [ "$m" = esrgan_slim_x2 ] && cls=false
    $PSQL -c "SELECT published.check_model('$m', NULL, $cls)"
done
if [ -z "$ONLY" ] || [ "$ONLY" = esrgan_slim_x2 ]; then
    # rows of two shapes in one table: refused, naming the row
    $PSQL <<'SQL'
DO $$
DECLARE msg text;
BEGIN
    CREATE TABLE published.mixed AS SELECT id, x FROM published.esrgan_slim_x2_16x16_img
        UNION ALL SELECT id + 10, x FROM published.esrgan_slim_x2_32x32_img;
    PERFORM madlib_dl.predict_byom('published.arch',
        (SELECT max(model_id) FROM published.arch WHERE name = 'esrgan_slim_x2'),
        'published.mixed', 'id', 'x', 'published.mixed_p');
    INSERT INTO published.result VALUES ('esrgan_slim_x2', 'rows of two shapes refused', false, 'predicted');
EXCEPTION WHEN data_exception THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
    INSERT INTO published.result VALUES ('esrgan_slim_x2', 'rows of two shapes refused', true, msg);
END $$;
SQL
fi
$PSQL -c "SELECT model, check_name, ok, left(detail, 160) AS detail FROM published.result ORDER BY model, check_name"
fails=$($PSQL -At -c "SELECT count(*) FROM published.result WHERE NOT ok")
if [ "$fails" != 0 ]; then echo "FAILED: $fails checks"; exit 1; fi
echo "ok: every check passed"
