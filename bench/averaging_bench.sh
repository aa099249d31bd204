#!/usr/bin/env bash
# averaging_bench.sh: fit's averaging every few mini-batches and lr_scaling
# on Fashion-MNIST (issue 17; the table in docs/design.md).
#
#   bench/averaging_bench.sh [CONNINFO]          (default: dbname=madlib_dl_bench)
#
# For each network (the MLP 784-256-128-10 and the CNN Conv2D 32, MaxPool,
# Conv2D 64, MaxPool, Dense 128, Dense 10), each seed and each segment
# count, fit with Adam(lr=0.001), batch 128, epochs=1 x ITER iterations
# (ITER_MLP 10, ITER_CNN 15), with averaging_period NULL and each of
# PERIODS, each without and with lr_scaling 'linear' (SCALINGS); one
# segment is sequential training (NULL only).  Each fit validates on the
# test images at its last iteration.  Prints one line per run:
#
#   run <net> <segments> <period> <scaling> <seed> <accuracy> <seconds> <rounds> <rounds/s> <avg %> <avg us> <wait us> <train us>
#
# (from fit's last NOTICE: avg %, the averaging rounds' share of the
# fit's time; avg us, the leader's averaging and copies per round; wait
# us, a round's time beyond its slowest segment, the barrier; train us,
# that segment's step; a NULL period prints no NOTICE: "-"), then the means
# over the seeds as a markdown table, with the loss against sequential
# training of the same network.
#
# Environment:
#   ROWS, TEST   training and test rows (default all: 60,000 and 10,000)
#   NETS         "mlp cnn"            SEEDS    "1 2 3"
#   SEGMENTS     "1 2 8 16"           PERIODS  "128 32 8" (NULL always runs)
#   SCALINGS     "none linear"        ITER_MLP 10, ITER_CNN 15
#   OUT          a file to append the run lines to (default: a temporary one)
# Loads the data once with scripts/load_fashion_mnist.sh --image into
# avg_bench_* tables (kept, one packed copy per segment count); replaces
# its model tables.  The server needs max_parallel_workers (and
# max_worker_processes) of at least the largest segment count, or the
# leader runs the segments no worker took (same results, slower).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CONN="${1:-dbname=madlib_dl_bench}"
ROWS="${ROWS:-}"; TEST="${TEST:-}"
NETS="${NETS:-mlp cnn}"; SEEDS="${SEEDS:-1 2 3}"
SEGMENTS="${SEGMENTS:-1 2 8 16}"; PERIODS="${PERIODS:-128 32 8}"
SCALINGS="${SCALINGS:-none linear}"
ITER_MLP="${ITER_MLP:-10}"; ITER_CNN="${ITER_CNN:-15}"
OUT="${OUT:-$(mktemp /tmp/averaging_bench.XXXXXX)}"
psqlc() { psql -X -q -v ON_ERROR_STOP=1 -d "$CONN" "$@"; }

psqlc -c "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS madlib_dl"
TAG="${ROWS:-all}_${TEST:-all}"
SRC="avg_bench_$TAG"
if [ "$(psqlc -At -c "SELECT to_regclass('${SRC}_train') IS NOT NULL AND to_regclass('${SRC}_test') IS NOT NULL")" != t ]; then
  FASHION_TRAIN_TABLE="${SRC}_train" FASHION_TEST_TABLE="${SRC}_test" \
    "$ROOT/scripts/load_fashion_mnist.sh" --replace --image "$CONN" $ROWS $TEST >/dev/null
fi
for n in $SEGMENTS; do
  if [ "$(psqlc -At -c "SELECT to_regclass('${SRC}_p$n') IS NOT NULL AND to_regclass('${SRC}_v$n') IS NOT NULL")" != t ]; then
    psqlc >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS ${SRC}_p$n, ${SRC}_p${n}_summary, ${SRC}_v$n, ${SRC}_v${n}_summary;
SELECT madlib_dl.training_preprocessor_dl('${SRC}_train', '${SRC}_p$n', 'y', 'x', NULL, 255.0, NULL, '$n');
SELECT madlib_dl.validation_preprocessor_dl('${SRC}_test', '${SRC}_v$n', 'y', 'x', '${SRC}_p$n');
SQL
  fi
done

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
psqlc -v mlp="$MLP" -v cnn="$CNN" >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS avg_bench_arch;
SELECT madlib_dl.load_keras_model('avg_bench_arch', :'mlp'::json, NULL, 'mlp');
SELECT madlib_dl.load_keras_model('avg_bench_arch', :'cnn'::json, NULL, 'cnn');
SQL
COMPILE="loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']"

# One fit: prints its run line.
run() {  # net model_id iter nseg period scaling seed
  local net=$1 id=$2 iter=$3 n=$4 p=$5 sc=$6 seed=$7 log t0 t1 acc rounds share us
  local scl="NULL"; [ "$sc" != none ] && scl="'$sc'"
  log="$(mktemp)"
  t0=$(date +%s.%N)
  psqlc -v compile="$COMPILE" >/dev/null 2>"$log" <<SQL
SET client_min_messages = notice;
DROP TABLE IF EXISTS avg_bench_model, avg_bench_model_summary;
SELECT madlib_dl.fit('${SRC}_p$n', 'avg_bench_model', 'avg_bench_arch', $id, :'compile',
    'batch_size=128, epochs=1, seed=$seed', $iter, FALSE, '${SRC}_v$n', NULL,
    averaging_period => $p, lr_scaling => $scl);
SQL
  t1=$(date +%s.%N)
  acc="$(psqlc -At -c "SELECT round(validation_metrics_final::numeric, 4) FROM avg_bench_model_summary")"
  rounds="$(sed -n 's/.*fit averaged \([0-9]*\) times.*/\1/p' "$log")"
  share="$(sed -n 's/.*; \([0-9.]*\)% of .*/\1/p' "$log")"
  us="$(sed -n 's/.*: \([0-9]*\) microseconds per round averaging, \([0-9]*\) waiting beyond the slowest segment, against \([0-9]*\) training.*/\1 \2 \3/p' "$log")"
  rm -f "$log"
  [ -z "$rounds" ] && rounds=$iter
  awk -v net="$net" -v n="$n" -v p="$p" -v sc="$sc" -v seed="$seed" -v acc="$acc" \
      -v t0="$t0" -v t1="$t1" -v r="$rounds" -v sh="${share:--}" -v us="${us:-- - -}" \
      'BEGIN { s = t1 - t0; printf "run %s %s %s %s %s %s %.1f %s %.2f %s %s\n", net, n, p, sc, seed, acc, s, r, r / s, sh, us }' \
    | tee -a "$OUT"
}

for net in $NETS; do
  id=1; iter=$ITER_MLP
  [ "$net" = cnn ] && { id=2; iter=$ITER_CNN; }
  for seed in $SEEDS; do
    for n in $SEGMENTS; do
      if [ "$n" = 1 ]; then run "$net" $id $iter 1 NULL none "$seed"; continue; fi
      for sc in $SCALINGS; do
        for p in NULL $PERIODS; do
          run "$net" $id $iter "$n" "$p" "$sc" "$seed"
        done
      done
    done
  done
done

echo
echo "| network | segments | averaging_period | lr_scaling | test accuracy (mean) | vs sequential | seconds | rounds/s | averaging share |"
echo "|---|---|---|---|---|---|---|---|---|"
awk '$1 == "run" {
       k = $2 " " $3 " " $4 " " $5; n[k]++; acc[k] += $7; sec[k] += $8; rps[k] += $10
       if ($11 != "-") { sh[k] += $11; nsh[k]++ }
       if ($3 == 1) { seqa[$2] += $7; seqn[$2]++ }
       if (!(k in order)) { order[k] = ++m; keys[m] = k }
     }
     END {
       for (i = 1; i <= m; i++) {
         k = keys[i]; split(k, f, " ")
         d = (seqn[f[1]] > 0) ? sprintf("%+.2f points", 100 * (acc[k] / n[k] - seqa[f[1]] / seqn[f[1]])) : "-"
         if (f[2] == 1) d = ""
         printf "| %s | %s | %s | %s | %.2f%% | %s | %.1f | %.2f | %s |\n", f[1], f[2], f[3], f[4],
                100 * acc[k] / n[k], d, sec[k] / n[k], rps[k] / n[k],
                (nsh[k] > 0 ? sprintf("%.1f%%", sh[k] / nsh[k]) : "-")
       }
     }' "$OUT"
echo
echo "run lines: $OUT"
