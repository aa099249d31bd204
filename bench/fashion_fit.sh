#!/usr/bin/env bash
# fashion_fit.sh: the Fashion-MNIST fit benchmark of issue 3.
#
#   bench/fashion_fit.sh [CONNINFO]        (default: dbname=madlib_dl_demo)
#
# MLP 784-256-128-10 (ReLU, softmax), Adam(lr=0.001), batch_size=128,
# epochs=1 x 10 iterations, trained by fit on 2 virtual segments (model
# averaging) and on 1 segment (plain sequential training, the reference),
# then evaluated on the 10,000 test images.  Prints, per run: test
# accuracy, seconds per iteration (iterations 2..9, after the partitions
# are loaded and before the final metrics pass), total fit time, and how
# many parallel workers PostgreSQL launched.
#
# Loads the data with scripts/load_fashion_mnist.sh when fashion_train is
# absent.  Creates (and replaces) tables named fashion_bench_*.  Needs the
# extension installed (make install) and max_parallel_workers >= 2.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CONN="${1:-dbname=madlib_dl_demo}"
ITER=10
psqlc() { psql -X -q -v ON_ERROR_STOP=1 -d "$CONN" "$@"; }

psqlc -c "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS madlib_dl"
if [ "$(psqlc -At -c "SELECT to_regclass('fashion_train') IS NOT NULL AND to_regclass('fashion_test') IS NOT NULL")" != t ]; then
  "$ROOT/scripts/load_fashion_mnist.sh" --replace "$CONN"
fi

ARCH='{"class_name": "Sequential", "config": {"name": "fashion_mlp", "layers": [
 {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 784], "dtype": "float32", "name": "dense_input"}},
 {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "dtype": "float32", "units": 256, "activation": "relu", "use_bias": true,
  "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}}},
 {"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 128, "activation": "relu", "use_bias": true,
  "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}}},
 {"class_name": "Dense", "config": {"name": "dense_2", "trainable": true, "dtype": "float32", "units": 10, "activation": "softmax", "use_bias": true,
  "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}}}]},
 "keras_version": "2.11.0", "backend": "tensorflow"}'

psqlc -v arch="$ARCH" >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS fashion_bench_arch;
SELECT madlib_dl.load_keras_model('fashion_bench_arch', :'arch'::json);
SQL

COMPILE="loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']"
FIT="batch_size=128, epochs=1"
printf '%-9s %-14s %-12s %-10s %s\n' segments test_accuracy s/iteration total_s workers
for NSEG in 2 1; do
  psqlc >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS fashion_bench_train_$NSEG, fashion_bench_train_${NSEG}_summary,
    fashion_bench_test_$NSEG, fashion_bench_test_${NSEG}_summary,
    fashion_bench_model_$NSEG, fashion_bench_model_${NSEG}_summary, fashion_bench_eval_$NSEG;
SELECT madlib_dl.training_preprocessor_dl('fashion_train', 'fashion_bench_train_$NSEG', 'y', 'x',
    NULL, 255.0, NULL, '$NSEG');
SELECT madlib_dl.validation_preprocessor_dl('fashion_test', 'fashion_bench_test_$NSEG', 'y', 'x',
    'fashion_bench_train_$NSEG');
SQL
  LOG="$(mktemp)"
  psqlc -v compile="$COMPILE" -v fit="$FIT" >/dev/null 2>"$LOG" <<SQL
SET client_min_messages = debug1;
SELECT madlib_dl.fit('fashion_bench_train_$NSEG', 'fashion_bench_model_$NSEG', 'fashion_bench_arch', 1,
    :'compile', :'fit', $ITER);
SET client_min_messages = warning;
SELECT madlib_dl.madlib_keras_evaluate('fashion_bench_model_$NSEG', 'fashion_bench_test_$NSEG',
    'fashion_bench_eval_$NSEG');
SQL
  ACC="$(psqlc -At -c "SELECT round(metric::numeric, 4) FROM fashion_bench_eval_$NSEG")"
  TOTAL="$(psqlc -At -c "SELECT round(extract(epoch FROM end_training_time - start_training_time)::numeric, 1) FROM fashion_bench_model_${NSEG}_summary")"
  # NOTICE "iteration i of N: ...; T s": seconds per iteration from iteration 1 to 9
  PER="$(awk '/NOTICE:  iteration [0-9]+ of/ { s = $0; sub(/.*NOTICE:  iteration /, "", s);
              split(s, a, " "); ts[a[1]] = $(NF - 1) }
              END { if ((9 in ts) && (1 in ts)) printf "%.2f", (ts[9] - ts[1]) / 8 }' "$LOG")"
  WORKERS="$(sed -n 's/.*madlib_dl: \([0-9]*\) of \([0-9]*\) segments run on parallel workers.*/\1 of \2/p' "$LOG" | head -1)"
  rm -f "$LOG"
  printf '%-9s %-14s %-12s %-10s %s\n' "$NSEG" "$ACC" "$PER" "$TOTAL" "$WORKERS"
done
