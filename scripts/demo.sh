#!/usr/bin/env bash
# demo.sh: the main job.  From a fresh clone: install what is needed, build
# and install madlib_dl, start a private PostgreSQL server kept in .pgdata/
# (scripts/pg_local.sh), load Fashion-MNIST, preprocess it, generate 10
# model configurations (8 MLPs and 2 CNNs) with generate_model_configs,
# train them all at once with fit_multiple on every core, print them ranked
# by validation accuracy, write learning-curve PNGs to demo_output/, and
# say how to connect with psql.
#
#   scripts/demo.sh [--rows N] [--iterations N]
#
#   --rows N        use only the first N training images (default all
#                   60,000) and min(10000, N/2) test images: fast runs
#   --iterations N  fit_multiple iterations (default 5); one iteration is
#                   one pass over the training set for every configuration
#
# Works as root (the server then runs as the 'postgres' user) or as a user
# with sudo (needed to install packages and the extension).  Run it again
# at will: it replaces its tables.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
ROWS=""
ITERATIONS=5
while [ $# -gt 0 ]; do
  case "$1" in
    --rows) ROWS="${2:?--rows needs a number}"; shift 2 ;;
    --iterations) ITERATIONS="${2:?--iterations needs a number}"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done
for v in "$ROWS" "$ITERATIONS"; do
  [ -z "$v" ] || [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "demo.sh: --rows and --iterations take a positive integer" >&2; exit 2; }
done
if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo); fi
OUTDIR="$ROOT/demo_output"
TRAIN_ROWS="${ROWS:-60000}"
[ "$TRAIN_ROWS" -le 60000 ] || TRAIN_ROWS=60000
TEST_ROWS=10000
if [ -n "$ROWS" ]; then
  TEST_ROWS=$(( ROWS / 2 )); [ "$TEST_ROWS" -le 10000 ] || TEST_ROWS=10000; [ "$TEST_ROWS" -ge 100 ] || TEST_ROWS=100
fi
CORES="$(nproc 2>/dev/null || echo 2)"
# Measured on the 2-core development machine while other jobs ran: about
# 60 s per iteration for the 10 configurations on all 60,000 images,
# metrics included, plus about 90 s of loading and preprocessing; scaled
# by rows and cores (segments stop at 8 parallel workers).
SEGS=$(( CORES < 8 ? CORES : 8 ))
EST=$(( (90 * TRAIN_ROWS / 60000) + (60 * ITERATIONS * TRAIN_ROWS * 2 / 60000 / SEGS) ))

echo "== madlib_dl demo: model selection on Fashion-MNIST"
echo "   $TRAIN_ROWS training images, $TEST_ROWS test images, 10 configurations, $ITERATIONS iterations"
echo "   expected: about $(( (EST + 59) / 60 )) min on $CORES cores once built (less on an idle machine)"
start_all=$(date +%s)

echo "== installing packages, building and installing madlib_dl"
"${SUDO[@]}" scripts/install-deps.sh >/dev/null
make -s >/dev/null
"${SUDO[@]}" make -s install >/dev/null

echo "== starting the local PostgreSQL server (restarted to load the new build)"
scripts/pg_local.sh restart
eval "$(scripts/pg_local.sh env)"
export PGHOST PGPORT PGUSER PGDATABASE
psqlc() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
# A fresh copy of the extension's functions (the tables stay).
psqlc -c "SET client_min_messages = warning" \
      -c "DROP EXTENSION IF EXISTS madlib_dl CASCADE" -c "CREATE EXTENSION madlib_dl"

echo "== loading Fashion-MNIST (images as real[28][28][1])"
PGOPTIONS="-c client_min_messages=warning" \
  scripts/load_fashion_mnist.sh --replace --image "dbname=$PGDATABASE" "$TRAIN_ROWS" "$TEST_ROWS"

echo "== preprocessing, architectures and configurations"
psqlc <<'SQL'
SET client_min_messages = warning;
\o /dev/null
DROP TABLE IF EXISTS fashion_train_packed, fashion_train_packed_summary,
    fashion_test_packed, fashion_test_packed_summary, fashion_arch,
    fashion_mst, fashion_mst_summary, fashion_models, fashion_models_info,
    fashion_models_summary;
-- Pack into mini-batch buffers over the virtual segments (one per core),
-- one-hot y, pixels / 255.
SELECT madlib_dl.training_preprocessor_dl('fashion_train', 'fashion_train_packed',
    'y', 'x', NULL, 255.0);
SELECT madlib_dl.validation_preprocessor_dl('fashion_test', 'fashion_test_packed',
    'y', 'x', 'fashion_train_packed');

-- Three architectures (Keras model.to_json()); the MLPs flatten the image.
SELECT madlib_dl.load_keras_model('fashion_arch',
 '{"class_name": "Sequential", "config": {"name": "mlp_128", "layers": [
   {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 28, 28, 1]}},
   {"class_name": "Flatten", "config": {"name": "flatten"}},
   {"class_name": "Dense", "config": {"name": "dense", "units": 128, "activation": "relu"}},
   {"class_name": "Dense", "config": {"name": "out", "units": 10, "activation": "softmax"}}]}}',
  NULL, 'MLP 784-128-10');
SELECT madlib_dl.load_keras_model('fashion_arch',
 '{"class_name": "Sequential", "config": {"name": "mlp_256_128", "layers": [
   {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 28, 28, 1]}},
   {"class_name": "Flatten", "config": {"name": "flatten"}},
   {"class_name": "Dense", "config": {"name": "dense", "units": 256, "activation": "relu"}},
   {"class_name": "Dense", "config": {"name": "dense_1", "units": 128, "activation": "relu"}},
   {"class_name": "Dense", "config": {"name": "out", "units": 10, "activation": "softmax"}}]}}',
  NULL, 'MLP 784-256-128-10');
SELECT madlib_dl.load_keras_model('fashion_arch',
 '{"class_name": "Sequential", "config": {"name": "cnn", "layers": [
   {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 28, 28, 1]}},
   {"class_name": "Conv2D", "config": {"name": "conv1", "filters": 16, "kernel_size": [3, 3], "activation": "relu"}},
   {"class_name": "MaxPooling2D", "config": {"name": "pool1", "pool_size": [2, 2]}},
   {"class_name": "Conv2D", "config": {"name": "conv2", "filters": 32, "kernel_size": [3, 3], "activation": "relu"}},
   {"class_name": "MaxPooling2D", "config": {"name": "pool2", "pool_size": [2, 2]}},
   {"class_name": "Flatten", "config": {"name": "flatten"}},
   {"class_name": "Dense", "config": {"name": "out", "units": 10, "activation": "softmax"}}]}}',
  NULL, 'CNN conv16-conv32');

-- 2 MLPs x 2 learning rates x 2 batch sizes = 8 configurations ...
SELECT madlib_dl.generate_model_configs('fashion_arch', 'fashion_mst', ARRAY[1, 2],
  $$ {'loss': ['categorical_crossentropy'], 'metrics': [['accuracy', 'auc', 'precision', 'recall']],
      'optimizer_params_list': [{'optimizer': ['Adam'], 'lr': [0.001, 0.003]}]} $$,
  $$ {'batch_size': [64, 128], 'epochs': [1]} $$);
-- ... and the CNN with 2 learning rates, appended: 10 in all.
SELECT madlib_dl.generate_model_configs('fashion_arch', 'fashion_mst', ARRAY[3],
  $$ {'loss': ['categorical_crossentropy'], 'metrics': [['accuracy', 'auc', 'precision', 'recall']],
      'optimizer_params_list': [{'optimizer': ['Adam'], 'lr': [0.001, 0.003]}]} $$,
  $$ {'batch_size': [128], 'epochs': [1]} $$);
\o
\pset footer off
SELECT m.mst_key, a.name AS architecture, m.compile_params, m.fit_params
FROM fashion_mst m JOIN fashion_arch a USING (model_id) ORDER BY m.mst_key;
SQL

echo "== training the 10 configurations at once: fit_multiple on $(psqlc -Atc "SELECT num_segments FROM fashion_train_packed_summary") segments"
echo "   (from another psql session: SELECT * FROM madlib_dl.fit_progress;)"
fit_start=$(date +%s)
psqlc -v iterations="$ITERATIONS" <<'SQL' 2>&1 | sed -u 's/^psql:<stdin>:[0-9]*: //'
SET client_min_messages = notice;
SELECT madlib_dl.fit_multiple('fashion_train_packed', 'fashion_models', 'fashion_mst',
    :iterations, validation_table => 'fashion_test_packed',
    metrics_compute_frequency => 1) \g /dev/null
SQL
fit_seconds=$(( $(date +%s) - fit_start ))

echo
echo "== the models, ranked by validation accuracy (10,000 test images unless --rows)"
psqlc <<'SQL'
\pset footer off
SELECT rank() OVER (ORDER BY i.validation_metrics_final DESC NULLS LAST) AS rank,
       i.mst_key, a.name AS architecture,
       substring(i.compile_params FROM 'optimizer=''([^'']*)''') AS optimizer,
       substring(i.fit_params FROM 'batch_size=([0-9]+)') AS batch,
       round(i.validation_metrics_final::numeric, 4) AS val_accuracy,
       round(i.validation_loss_final::numeric, 4) AS val_loss,
       round(i.training_metrics_final::numeric, 4) AS train_accuracy,
       round(i.model_size::numeric) AS size_kb,
       round(i.metrics_elapsed_time[cardinality(i.metrics_elapsed_time)]::numeric, 1) AS seconds,
       i.status
FROM fashion_models_info i JOIN fashion_arch a USING (model_id)
ORDER BY rank, i.mst_key;
SQL
echo "   seconds: when the model's final metrics were taken; all configurations"
echo "   train side by side, so this is the wall clock of the whole run ($fit_seconds s)."

echo
echo "== learning curves"
rm -rf "$OUTDIR"
/usr/bin/python3 docs/examples/learning_curves.py fashion_models "$OUTDIR" | sed "s|^$ROOT/|   |"

total=$(( $(date +%s) - start_all ))
best=$(psqlc -Atc "SELECT mst_key FROM fashion_models_info ORDER BY validation_metrics_final DESC NULLS LAST, mst_key LIMIT 1")
cat <<TXT

Done in $(( total / 60 )) min $(( total % 60 )) s.  The learning curves are in demo_output/
(learning_curves.png: every configuration; metrics.png: accuracy, AUC, precision and
recall of every configuration; learning_curve_mst_key_K.png: one each).

Explore the results with psql:
  $(scripts/pg_local.sh env)
  psql
  -- then, for example:
  SELECT mst_key, validation_metrics, metrics_elapsed_time FROM fashion_models_info ORDER BY mst_key;
  SELECT madlib_dl.predict('fashion_models', 'fashion_test', 'id', 'x', 'fashion_pred', 'response', mst_key => $best);
  SELECT class_value, count(*) FROM fashion_pred GROUP BY 1 ORDER BY 1;
or run the notebook against this server:  scripts/run_notebook.sh
Stop the server with: scripts/pg_local.sh stop
TXT
