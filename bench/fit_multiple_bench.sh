#!/usr/bin/env bash
# fit_multiple_bench.sh: the Fashion-MNIST model selection benchmark of
# issue 4 (fit_multiple by model hopper parallelism).
#
#   bench/fit_multiple_bench.sh [CONNINFO [MAX_TRAIN [MAX_TEST]]]
#       CONNINFO   anything psql -d takes (default: dbname=madlib_dl_demo)
#       MAX_TRAIN  train on the first MAX_TRAIN images only (default: all 60,000)
#       MAX_TEST   test on the first MAX_TEST images only (default: all 10,000)
#
# 8 configurations = 2 architectures (MLP 784-256-128-10 and MLP 784-64-10,
# ReLU, softmax) x 2 optimizers (Adam, SGD with momentum 0.9) x 2 learning
# rates (0.001, 0.01), batch_size=128, seed 42, 10 passes over the data.
# Runs, each timed from the _summary's start/end_training_time:
#   A  fit_multiple, 2 segments, epochs=1 x 10 iterations
#   B  fit_multiple, 1 segment,  epochs=1 x 10 iterations
#   C  fit_multiple, 2 segments, epochs=10 x 1 iteration
#   D  fit, 1 segment, epochs=1 x 10 iterations, each configuration alone
# and prints
#   A/B  wall time on 2 segments against 1 segment      (goal <= 0.55)
#        and its factors: the steps' slowdown on 2 segments (sum of the
#        models' training_seconds, A against B) and each run's busy share
#   A/C  epochs=1 x 10 against epochs=10 x 1            (goal <= 1.05)
#   per configuration: test accuracy after A next to D  (goal: within 0.5 points)
# Metrics are computed at the last iteration only, so the timings are
# training plus one evaluation pass.  FMB_AB_ONLY=1 runs A and B only and
# prints A/B (bench/all.sh).
#
# Loads the images into fmb_train / fmb_test with scripts/load_fashion_mnist.sh
# (replacing them).  Creates (and replaces) tables named fmb_*.  Needs the
# extension installed (make install) and max_parallel_workers >= 2.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CONN="${1:-dbname=madlib_dl_demo}"
MAX_TRAIN="${2:-}"
MAX_TEST="${3:-}"
psqlc() { psql -X -q -v ON_ERROR_STOP=1 -d "$CONN" "$@"; }

psqlc -c "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS madlib_dl"
FASHION_TRAIN_TABLE=fmb_train FASHION_TEST_TABLE=fmb_test \
  "$ROOT/scripts/load_fashion_mnist.sh" --replace "$CONN" $MAX_TRAIN $MAX_TEST >/dev/null

layer() {  # name units activation
  printf '{"class_name": "Dense", "config": {"name": "%s", "trainable": true, "dtype": "float32", "units": %s, "activation": "%s", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}}}' "$1" "$2" "$3"
}
INPUT='{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 784], "dtype": "float32", "name": "dense_input"}}'
BIG="{\"class_name\": \"Sequential\", \"config\": {\"name\": \"mlp_256_128\", \"layers\": [$INPUT, $(layer dense 256 relu), $(layer dense_1 128 relu), $(layer dense_2 10 softmax)]}, \"keras_version\": \"2.11.0\", \"backend\": \"tensorflow\"}"
SMALL="{\"class_name\": \"Sequential\", \"config\": {\"name\": \"mlp_64\", \"layers\": [$INPUT, $(layer dense 64 relu), $(layer dense_1 10 softmax)]}, \"keras_version\": \"2.11.0\", \"backend\": \"tensorflow\"}"
GRID="{'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['Adam'], 'lr': [0.001, 0.01]}, {'optimizer': ['SGD'], 'lr': [0.001, 0.01], 'momentum': [0.9]}], 'metrics': ['accuracy']}"

psqlc -v big="$BIG" -v small="$SMALL" -v grid="$GRID" >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS fmb_arch, fmb_mst_e1, fmb_mst_e1_summary, fmb_mst_e10, fmb_mst_e10_summary;
SELECT madlib_dl.load_keras_model('fmb_arch', :'big'::json, NULL, 'mlp 784-256-128-10');
SELECT madlib_dl.load_keras_model('fmb_arch', :'small'::json, NULL, 'mlp 784-64-10');
SELECT madlib_dl.generate_model_configs('fmb_arch', 'fmb_mst_e1', ARRAY[1, 2], :'grid',
    $${'batch_size': [128], 'epochs': [1]}$$);
SELECT madlib_dl.generate_model_configs('fmb_arch', 'fmb_mst_e10', ARRAY[1, 2], :'grid',
    $${'batch_size': [128], 'epochs': [10]}$$);
SQL
for NSEG in 1 2; do
  psqlc >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS fmb_train_$NSEG, fmb_train_${NSEG}_summary, fmb_test_$NSEG, fmb_test_${NSEG}_summary;
SELECT madlib_dl.training_preprocessor_dl('fmb_train', 'fmb_train_$NSEG', 'y', 'x', NULL, 255.0, NULL, '$NSEG');
SELECT madlib_dl.validation_preprocessor_dl('fmb_test', 'fmb_test_$NSEG', 'y', 'x', 'fmb_train_$NSEG');
SQL
done
echo "train rows: $(psqlc -At -c 'SELECT count(*) FROM fmb_train'), test rows: $(psqlc -At -c 'SELECT count(*) FROM fmb_test'), configurations: $(psqlc -At -c 'SELECT count(*) FROM fmb_mst_e1')"

secs() {  # summary table -> seconds of training
  psqlc -At -c "SELECT round(extract(epoch FROM end_training_time - start_training_time)::numeric, 2) FROM $1"
}
multi() {  # name source mst iterations
  psqlc >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS $1, $1_info, $1_summary;
SELECT madlib_dl.fit_multiple('$2', '$1', '$3', $4);
SQL
  secs "$1_summary"
}

TA="$(multi fmb_a fmb_train_2 fmb_mst_e1 10)"
echo "A  fit_multiple, 2 segments, epochs=1 x 10:  $TA s"
TB="$(multi fmb_b fmb_train_1 fmb_mst_e1 10)"
echo "B  fit_multiple, 1 segment,  epochs=1 x 10:  $TB s"
# Where A/B goes: wall = sum of the models' training_seconds / (segments x
# busy share), so A/B = (steps A / steps B) x busy_B / (2 x busy_A): the
# steps' own slowdown when two segments run at once (the cores' shared
# caches, memory and clock; other jobs), and the segments' idle share (the
# start, the hops, the evaluation, the last models' tail).
stepsum() { psqlc -At -c "SELECT sum(training_seconds) FROM $1"; }
SA="$(stepsum fmb_a_info)"; SB="$(stepsum fmb_b_info)"
awk -v a="$TA" -v b="$TB" -v sa="$SA" -v sb="$SB" 'BEGIN {
  printf "steps A/B (sum of training_seconds, %.2f s / %.2f s): %.3f\n", sa, sb, sa / sb;
  printf "busy share A (2 segments): %.3f\n", sa / (2 * a);
  printf "busy share B (1 segment):  %.3f\n", sb / b }'
if [ "${FMB_AB_ONLY:-0}" = 1 ]; then   # bench/all.sh: the scaling figure only
  awk -v a="$TA" -v b="$TB" 'BEGIN { printf "A/B 2 segments vs 1 segment:      %.3f  (goal <= 0.55)\n", a / b }'
  exit 0
fi
TC="$(multi fmb_c fmb_train_2 fmb_mst_e10 1)"
echo "C  fit_multiple, 2 segments, epochs=10 x 1:  $TC s"
awk -v a="$TA" -v b="$TB" -v c="$TC" 'BEGIN {
  printf "A/B 2 segments vs 1 segment:      %.3f  (goal <= 0.55)\n", a / b;
  printf "A/C epochs=1x10 vs epochs=10x1:   %.3f  (goal <= 1.05)\n", a / c }'

# D: every configuration alone with fit on one segment; test accuracies
TD=0
printf '%-7s %-8s %-60s %-12s %-12s %s\n' mst_key model_id compile_params fit_multiple fit diff_points
for KEY in $(psqlc -At -c "SELECT mst_key FROM fmb_mst_e1 ORDER BY mst_key"); do
  psqlc >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS fmb_d_$KEY, fmb_d_${KEY}_summary, fmb_eval_a_$KEY, fmb_eval_d_$KEY;
SELECT madlib_dl.fit('fmb_train_1', 'fmb_d_$KEY', 'fmb_arch', m.model_id, m.compile_params, m.fit_params, 10)
  FROM fmb_mst_e1 m WHERE m.mst_key = $KEY;
SELECT madlib_dl.evaluate('fmb_d_$KEY', 'fmb_test_1', 'fmb_eval_d_$KEY');
SELECT madlib_dl.evaluate('fmb_a', 'fmb_test_2', 'fmb_eval_a_$KEY', FALSE, $KEY);
SQL
  TD="$(awk -v t="$TD" -v d="$(secs fmb_d_${KEY}_summary)" 'BEGIN { print t + d }')"
  psqlc -At -F ' ' -c "SELECT m.mst_key, m.model_id, m.compile_params,
        round(100 * a.metric::numeric, 2), round(100 * d.metric::numeric, 2),
        round(100 * (a.metric - d.metric)::numeric, 2)
   FROM fmb_mst_e1 m, fmb_eval_a_$KEY a, fmb_eval_d_$KEY d WHERE m.mst_key = $KEY" |
    awk '{ k = $1; id = $2; n = NF; cp = ""; for (i = 3; i <= n - 3; i++) cp = cp $i " ";
           printf "%-7s %-8s %-60s %-12s %-12s %s\n", k, id, substr(cp, 1, 60), $(n-2), $(n-1), $n }'
done
echo "D  fit, 1 segment, 8 configurations one after another: $TD s"
