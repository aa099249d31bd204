#!/usr/bin/env bash
# shuffle_accuracy.sh: test accuracy of the MLP and the CNN on Fashion-MNIST
# over several seeds, to compare two builds of madlib_dl (issue 14: the one
# shuffle, dl_epoch.h, against the whole-partition shuffle before it).
#
#   bench/shuffle_accuracy.sh [CONNINFO]          (default: dbname=madlib_dl_bench)
#
# Trains, in one fit_multiple call on SEGMENTS virtual segments, the MLP
# 784-256-128-10 and the CNN of docs/performance.md (Conv2D 32, MaxPool,
# Conv2D 64, MaxPool, Dense 128, Dense 10), Adam(lr=0.001), batch 128,
# epochs=1 x ITER iterations, once per seed, and evaluates every model on
# the test images at the last iteration.  Prints one line per model and
# seed, then the mean and standard deviation per network:
#
#   <label> <net> seed <s> accuracy <a> loss <l>
#   <label> <net> mean <a> sd <sd> over <n> seeds
#
# Run it once with each build installed (make install, restart the
# server) and compare the means.  Environment:
#   ROWS      training rows (default: all 60,000)    TEST  test rows (10,000)
#   ITER      iterations (5)                         SEEDS seeds ("1 2 3")
#   SEGMENTS  virtual segments (2)                   LABEL printed first ("run")
# Loads the data once with scripts/load_fashion_mnist.sh --image into
# shuffle_acc_* tables (kept); replaces its own output tables.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CONN="${1:-dbname=madlib_dl_bench}"
ROWS="${ROWS:-}"; TEST="${TEST:-}"; ITER="${ITER:-5}"; SEEDS="${SEEDS:-1 2 3}"
SEGMENTS="${SEGMENTS:-2}"; LABEL="${LABEL:-run}"
psqlc() { psql -X -q -v ON_ERROR_STOP=1 -d "$CONN" "$@"; }

psqlc -c "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS madlib_dl"
TAG="${ROWS:-all}_${TEST:-all}_$SEGMENTS"
SRC="shuffle_acc_$TAG"
if [ "$(psqlc -At -c "SELECT to_regclass('${SRC}_train_packed') IS NOT NULL AND to_regclass('${SRC}_test_packed') IS NOT NULL")" != t ]; then
  FASHION_TRAIN_TABLE="${SRC}_train" FASHION_TEST_TABLE="${SRC}_test" \
    "$ROOT/scripts/load_fashion_mnist.sh" --replace --image "$CONN" $ROWS $TEST >/dev/null
  psqlc >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS ${SRC}_train_packed, ${SRC}_train_packed_summary, ${SRC}_test_packed, ${SRC}_test_packed_summary;
SELECT madlib_dl.training_preprocessor_dl('${SRC}_train', '${SRC}_train_packed', 'y', 'x',
    NULL, 255.0, NULL, '$SEGMENTS');
SELECT madlib_dl.validation_preprocessor_dl('${SRC}_test', '${SRC}_test_packed', 'y', 'x',
    '${SRC}_train_packed');
DROP TABLE ${SRC}_train, ${SRC}_test;
SQL
fi

dense() {  # name units activation
  printf '{"class_name": "Dense", "config": {"name": "%s", "units": %s, "activation": "%s"}}' "$1" "$2" "$3"
}
conv() {  # name filters
  printf '{"class_name": "Conv2D", "config": {"name": "%s", "filters": %s, "kernel_size": [3, 3], "activation": "relu"}}' "$1" "$2"
}
pool() {
  printf '{"class_name": "MaxPooling2D", "config": {"name": "%s", "pool_size": [2, 2]}}' "$1"
}
INPUT='{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 28, 28, 1]}}'
FLAT='{"class_name": "Flatten", "config": {"name": "flatten"}}'
MLP="{\"class_name\": \"Sequential\", \"config\": {\"name\": \"mlp\", \"layers\": [$INPUT, $FLAT, $(dense d1 256 relu), $(dense d2 128 relu), $(dense d3 10 softmax)]}}"
CNN="{\"class_name\": \"Sequential\", \"config\": {\"name\": \"cnn\", \"layers\": [$INPUT, $(conv c1 32), $(pool p1), $(conv c2 64), $(pool p2), $FLAT, $(dense d1 128 relu), $(dense d2 10 softmax)]}}"
FITS="$(for s in $SEEDS; do printf "%s\$\$batch_size=128, epochs=1, seed=%s\$\$" "${sep:-}" "$s"; sep=', '; done)"

psqlc -v mlp="$MLP" -v cnn="$CNN" >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS shuffle_acc_arch, shuffle_acc_mst, shuffle_acc_mst_summary,
    shuffle_acc_out, shuffle_acc_out_info, shuffle_acc_out_summary;
SELECT madlib_dl.load_keras_model('shuffle_acc_arch', :'mlp'::json, NULL, 'mlp');
SELECT madlib_dl.load_keras_model('shuffle_acc_arch', :'cnn'::json, NULL, 'cnn');
SELECT madlib_dl.load_model_selection_table('shuffle_acc_arch', 'shuffle_acc_mst', ARRAY[1, 2],
    ARRAY[\$\$loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']\$\$],
    ARRAY[$FITS]);
SELECT madlib_dl.fit_multiple('${SRC}_train_packed', 'shuffle_acc_out', 'shuffle_acc_mst', $ITER,
    FALSE, '${SRC}_test_packed');
SQL

psqlc -At -F ' ' <<SQL
SELECT '$LABEL', CASE i.model_id WHEN 1 THEN 'mlp' ELSE 'cnn' END, 'seed',
       substring(i.fit_params FROM 'seed=([0-9]+)'), 'accuracy',
       round(i.validation_metrics_final::numeric, 4), 'loss', round(i.validation_loss_final::numeric, 4)
  FROM shuffle_acc_out_info i ORDER BY i.model_id, i.mst_key;
SELECT '$LABEL', CASE i.model_id WHEN 1 THEN 'mlp' ELSE 'cnn' END, 'mean',
       round(avg(i.validation_metrics_final)::numeric, 4), 'sd',
       round(coalesce(stddev_samp(i.validation_metrics_final), 0)::numeric, 4), 'over', count(*), 'seeds'
  FROM shuffle_acc_out_info i GROUP BY i.model_id ORDER BY i.model_id;
SQL
