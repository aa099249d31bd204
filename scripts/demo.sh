#!/usr/bin/env bash
# demo.sh: the main job.  From a fresh clone: install what is needed, build
# and install madlib_dl, start a private PostgreSQL server kept in .pgdata/
# (scripts/pg_local.sh), load Fashion-MNIST, preprocess it, train an MLP
# with fit on every virtual segment (one per core), and evaluate it on the
# 10,000 test images.
#
#   scripts/demo.sh [--rows N]     N: use only the first N training rows
#
# Works as root (the server then runs as the 'postgres' user) or as a user
# with sudo (needed to install packages and the extension).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
ROWS=""
if [ "${1:-}" = "--rows" ]; then ROWS="${2:?--rows needs a number}"; fi
if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo); fi

echo "== installing packages, building and installing madlib_dl"
"${SUDO[@]}" scripts/install-deps.sh >/dev/null
make -s >/dev/null
"${SUDO[@]}" make -s install >/dev/null

echo "== starting the local PostgreSQL server"
scripts/pg_local.sh start
eval "$(scripts/pg_local.sh env)"
export PGHOST PGPORT PGUSER PGDATABASE
psqlc() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
psqlc -c "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS madlib_dl"

echo "== loading Fashion-MNIST"
if [ -n "$ROWS" ]; then
  scripts/load_fashion_mnist.sh --replace "dbname=$PGDATABASE" "$ROWS"
else
  scripts/load_fashion_mnist.sh --replace "dbname=$PGDATABASE"
fi

echo "== preprocessing, training and evaluating"
psqlc <<'SQL'
SET client_min_messages = notice;
\timing on
DROP TABLE IF EXISTS fashion_train_packed, fashion_train_packed_summary,
    fashion_test_packed, fashion_test_packed_summary, fashion_models,
    fashion_mlp, fashion_mlp_summary, fashion_mlp_eval;
SELECT madlib_dl.training_preprocessor_dl('fashion_train', 'fashion_train_packed',
    'y', 'x', NULL, 255.0);
SELECT madlib_dl.validation_preprocessor_dl('fashion_test', 'fashion_test_packed',
    'y', 'x', 'fashion_train_packed');
SELECT madlib_dl.load_keras_model('fashion_models',
 '{"class_name": "Sequential", "config": {"name": "fashion_mlp", "layers": [
   {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 784]}},
   {"class_name": "Dense", "config": {"name": "dense", "units": 256, "activation": "relu"}},
   {"class_name": "Dense", "config": {"name": "dense_1", "units": 128, "activation": "relu"}},
   {"class_name": "Dense", "config": {"name": "dense_2", "units": 10, "activation": "softmax"}}]}}',
  NULL, 'mlp 784-256-128-10');
SELECT num_segments AS segments FROM fashion_train_packed_summary;
SELECT madlib_dl.fit('fashion_train_packed', 'fashion_mlp', 'fashion_models', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']$$,
    $$batch_size=128, epochs=1$$, 10, validation_table => 'fashion_test_packed',
    metrics_compute_frequency => 5);
SELECT madlib_dl.evaluate('fashion_mlp', 'fashion_test_packed', 'fashion_mlp_eval');
\timing off
SELECT round(loss::numeric, 4) AS test_loss, round(metric::numeric, 4) AS test_accuracy
FROM fashion_mlp_eval;
SELECT round(extract(epoch FROM end_training_time - start_training_time)::numeric, 1)
       AS training_seconds, training_metrics_final, validation_metrics_final
FROM fashion_mlp_summary;
SQL

cat <<TXT

Done. Explore the results with psql:
  $(scripts/pg_local.sh env)
  psql          # then: SELECT * FROM fashion_mlp_summary;
Stop the server with: scripts/pg_local.sh stop
TXT
