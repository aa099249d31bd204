#!/usr/bin/env bash
# whole_job.sh: the whole-job goal of issue 5: the 8-configuration model
# selection of bench/fit_multiple_bench.sh by fit_multiple on 2 segments,
# against PyTorch training the same 8 configurations as two single-thread
# processes side by side (4 configurations each), same data, same passes.
#
#   bench/whole_job.sh [CONNINFO [MAX_TRAIN [MAX_TEST]]]
#       CONNINFO   anything psql -d takes (default: dbname=madlib_dl_bench on
#                  the server of scripts/pg_local.sh when PGHOST is unset)
#       MAX_TRAIN  train on the first MAX_TRAIN images only (default: all 60,000)
#       MAX_TEST   test on the first MAX_TEST images only (default: all 10,000)
#
# Configurations: MLP 784-256-128-10 ("big", model_id 1) and MLP 784-64-10
# ("small", model_id 2) x Adam / SGD(momentum 0.9) x lr 0.001 / 0.01,
# batch 128, 10 passes: fit_multiple with epochs=1 x 10 iterations (metrics
# at the last iteration only); PyTorch 10 epochs (bench/torch_bench.py
# multi), OPENBLAS_NUM_THREADS=1, torch.set_num_threads(1), the malloc
# setting of bench/run.sh.  Prints per configuration the test accuracy of
# both sides and the difference in points, then
#   fit_multiple_s   training wall time from the _summary table
#   torch_s          wall time of the two PyTorch processes side by side
#                    (both started together; data loading excluded: the
#                    larger of their "total_s")
#   ratio            fit_multiple_s / torch_s   (goal <= 0.75)
# Creates (and replaces) tables wj_*.  Never a test.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
if [ -z "${PGHOST:-}" ]; then
  "$ROOT/scripts/pg_local.sh" start >/dev/null
  eval "$("$ROOT/scripts/pg_local.sh" env)"
fi
DB=madlib_dl_bench
CONN="${1:-dbname=$DB}"
if [ -z "${1:-}" ]; then
  psql -X -q -At -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1 ||
    createdb "$DB"
fi
MAX_TRAIN="${2:-}"
MAX_TEST="${3:-}"
psqlc() { psql -X -q -v ON_ERROR_STOP=1 -d "$CONN" "$@"; }
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
if [ "${BENCH_MALLOC_TUNE:-1}" = 1 ]; then
  export MALLOC_MMAP_THRESHOLD_=2000000000 MALLOC_TRIM_THRESHOLD_=2000000000 MALLOC_TOP_PAD_=536870912
fi

echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg), train rows ${MAX_TRAIN:-all}, test rows ${MAX_TEST:-all}"
psqlc -c "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS madlib_dl"
FASHION_TRAIN_TABLE=wj_train FASHION_TEST_TABLE=wj_test \
  "$ROOT/scripts/load_fashion_mnist.sh" --replace "$CONN" $MAX_TRAIN $MAX_TEST >/dev/null 2>&1

layer() {  # name units activation
  printf '{"class_name": "Dense", "config": {"name": "%s", "trainable": true, "dtype": "float32", "units": %s, "activation": "%s", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}}}' "$1" "$2" "$3"
}
INPUT='{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 784], "dtype": "float32", "name": "dense_input"}}'
BIG="{\"class_name\": \"Sequential\", \"config\": {\"name\": \"mlp_256_128\", \"layers\": [$INPUT, $(layer dense 256 relu), $(layer dense_1 128 relu), $(layer dense_2 10 softmax)]}, \"keras_version\": \"2.11.0\", \"backend\": \"tensorflow\"}"
SMALL="{\"class_name\": \"Sequential\", \"config\": {\"name\": \"mlp_64\", \"layers\": [$INPUT, $(layer dense 64 relu), $(layer dense_1 10 softmax)]}, \"keras_version\": \"2.11.0\", \"backend\": \"tensorflow\"}"
GRID="{'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['Adam'], 'lr': [0.001, 0.01]}, {'optimizer': ['SGD'], 'lr': [0.001, 0.01], 'momentum': [0.9]}], 'metrics': ['accuracy']}"

psqlc -v big="$BIG" -v small="$SMALL" -v grid="$GRID" >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS wj_arch, wj_mst, wj_mst_summary, wj_fm, wj_fm_info, wj_fm_summary,
    wj_train_2, wj_train_2_summary, wj_test_2, wj_test_2_summary;
SELECT madlib_dl.load_keras_model('wj_arch', :'big'::json, NULL, 'mlp 784-256-128-10');
SELECT madlib_dl.load_keras_model('wj_arch', :'small'::json, NULL, 'mlp 784-64-10');
SELECT madlib_dl.generate_model_configs('wj_arch', 'wj_mst', ARRAY[1, 2], :'grid',
    $${'batch_size': [128], 'epochs': [1]}$$);
SELECT madlib_dl.training_preprocessor_dl('wj_train', 'wj_train_2', 'y', 'x', NULL, 255.0, NULL, '2');
SELECT madlib_dl.validation_preprocessor_dl('wj_test', 'wj_test_2', 'y', 'x', 'wj_train_2');
SQL

# in-database: fit_multiple on 2 segments
psqlc >/dev/null <<'SQL'
SET client_min_messages = warning;
SELECT madlib_dl.fit_multiple('wj_train_2', 'wj_fm', 'wj_mst', 10);
SQL
TFM="$(psqlc -At -c "SELECT round(extract(epoch FROM end_training_time - start_training_time)::numeric, 2) FROM wj_fm_summary")"

# PyTorch: two processes side by side, 4 configurations each (2 big, 2 small)
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
T0=$(date +%s.%N)
/usr/bin/python3 "$ROOT/bench/torch_bench.py" multi 10 "${MAX_TRAIN:-0}" "${MAX_TEST:-0}" \
  big,adam,0.001 big,sgd,0.01 small,adam,0.01 small,sgd,0.001 > "$TMP/t1" &
P1=$!
/usr/bin/python3 "$ROOT/bench/torch_bench.py" multi 10 "${MAX_TRAIN:-0}" "${MAX_TEST:-0}" \
  big,adam,0.01 big,sgd,0.001 small,adam,0.001 small,sgd,0.01 > "$TMP/t2" &
P2=$!
wait $P1 $P2
T1=$(date +%s.%N)
TT="$(awk '$1 == "total_s" { if ($2 > m) m = $2 } END { print m }' "$TMP/t1" "$TMP/t2")"

printf '%-7s %-8s %-22s %-12s %-12s %s\n' mst_key model_id optimizer fit_multiple torch diff_points
for KEY in $(psqlc -At -c "SELECT mst_key FROM wj_mst ORDER BY mst_key"); do
  psqlc >/dev/null -c "SET client_min_messages = warning; DROP TABLE IF EXISTS wj_eval_$KEY;
      SELECT madlib_dl.evaluate('wj_fm', 'wj_test_2', 'wj_eval_$KEY', FALSE, $KEY)"
  read -r MID OPT LR ACC < <(psqlc -At -F ' ' -c "SELECT m.model_id,
        lower(substring(m.compile_params from 'optimizer=''?([A-Za-z]+)')),
        substring(m.compile_params from 'lr=([0-9.e-]+)')::float8, round(e.metric::numeric, 4)
      FROM wj_mst m, wj_eval_$KEY e WHERE m.mst_key = $KEY")
  ARCH=big; [ "$MID" = 2 ] && ARCH=small
  TACC="$(awk -v a="$ARCH" -v o="$OPT" -v l="$LR" '$1 == "config" { split($2, c, ",");
      if (c[1] == a && c[2] == o && c[3] + 0 == l + 0) print $4 }' "$TMP/t1" "$TMP/t2")"
  printf '%-7s %-8s %-22s %-12s %-12s %s\n' "$KEY" "$ARCH" "$OPT lr=$LR" "$ACC" "${TACC:-?}" \
    "$(awk -v a="$ACC" -v b="${TACC:-0}" 'BEGIN { printf "%+.2f", 100 * (a - b) }')"
done
echo "fit_multiple_s $TFM"
echo "torch_s $TT"
echo "torch_wall_with_loading_s $(awk -v a="$T0" -v b="$T1" 'BEGIN { printf "%.2f", b - a }')"
echo "ratio $(awk -v a="$TFM" -v b="$TT" 'BEGIN { printf "%.3f", a / b }')  (goal <= 0.75)"
echo "# done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
