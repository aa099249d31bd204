#!/usr/bin/env bash
# automl_bench.sh: the AutoML benchmark of issue 16 (madlib_keras_automl:
# Hyperband, TPE and ASHA against random search) on Fashion-MNIST.
#
#   bench/automl_bench.sh [CONNINFO]          (default: dbname=madlib_dl_demo)
#
# Environment (for a quick try at a smaller scale; the defaults are the
# benchmark's):
#   AUTOML_BENCH_TRAIN   training images        (default 20000)
#   AUTOML_BENCH_TEST    validation images      (default 10000, the test set)
#   AUTOML_BENCH_SEEDS   random_states, spaced  (default "1 2 3")
#
# The search space: four architectures (MLPs 784-128-10, 784-256-128-10
# and 784-512-256-128-10, and a small CNN: Conv2D 16 3x3, MaxPooling,
# Conv2D 32 3x3, MaxPooling, Dense 10; the MLPs start with Flatten, so all
# four read the 28x28x1 images), learning rate 'log' from
# 1e-4 to 1e-1, batch size from [32, 64, 128, 256], optimizer SGD
# (momentum 0.9), Adam or RMSprop; epochs=1, so an iteration is one pass
# over the data.  On 2 segments, for each random_state:
#   REF  random search: generate_model_configs draws 27 configurations,
#        fit_multiple trains them for 9 passes; its best validation
#        accuracy A and its wall time T
#   HB   madlib_keras_automl hyperband, R=9, eta=3 (15 configurations)
#   TPE  madlib_keras_automl hyperopt, 27 configurations of 9 passes each
#        (the reference's budget), algorithm=tpe
#   ASHA madlib_keras_automl asha, R=9, eta=3, 27 configurations
# and prints, for each method, its best validation accuracy (the best
# final one over its configurations), its wall time, and the time it took
# to first reach A - 0.5 points (from the metrics points of its _info:
# every rung's end), then the means over the random_states, and the goals:
#   Hyperband or ASHA reaches A - 0.5 points in <= T / 3
#   TPE's best >= A
# Times are the _summary's start_training_time to end_training_time
# (training and its metrics; the table checks before are not counted).
#
# Loads the images with scripts/load_fashion_mnist.sh --image into amb_train
# and amb_test (replacing them).  Creates (and replaces) tables named amb_*.
# Needs the extension installed (make install), max_parallel_workers >= 2,
# and an otherwise idle machine for the figures to mean anything.  About
# 30 minutes on 2 cores at the default scale.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CONN="${1:-dbname=madlib_dl_demo}"
TRAIN="${AUTOML_BENCH_TRAIN:-20000}"
TEST="${AUTOML_BENCH_TEST:-10000}"
SEEDS="${AUTOML_BENCH_SEEDS:-1 2 3}"
psqlc() { psql -X -q -v ON_ERROR_STOP=1 -d "$CONN" "$@"; }

psqlc -c "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS madlib_dl"
FASHION_TRAIN_TABLE=amb_train FASHION_TEST_TABLE=amb_test \
  "$ROOT/scripts/load_fashion_mnist.sh" --replace --image "$CONN" "$TRAIN" "$TEST" >/dev/null 2>&1

dense() {  # name units activation
  printf '{"class_name": "Dense", "config": {"name": "%s", "units": %s, "activation": "%s"}}' "$1" "$2" "$3"
}
INPUT='{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 28, 28, 1], "name": "image"}}'
FLAT='{"class_name": "Flatten", "config": {"name": "flatten"}}'
sequential() {  # name layers...
  local name="$1"; shift
  local IFS=,
  printf '{"class_name": "Sequential", "config": {"name": "%s", "layers": [%s]}}' "$name" "$*"
}
MLP1="$(sequential mlp_128 "$INPUT" "$FLAT" "$(dense d1 128 relu)" "$(dense out 10 softmax)")"
MLP2="$(sequential mlp_256_128 "$INPUT" "$FLAT" "$(dense d1 256 relu)" "$(dense d2 128 relu)" "$(dense out 10 softmax)")"
MLP3="$(sequential mlp_512_256_128 "$INPUT" "$FLAT" "$(dense d1 512 relu)" "$(dense d2 256 relu)" "$(dense d3 128 relu)" "$(dense out 10 softmax)")"
CNN="$(sequential cnn "$INPUT" \
  '{"class_name": "Conv2D", "config": {"name": "c1", "filters": 16, "kernel_size": [3, 3], "activation": "relu"}}' \
  '{"class_name": "MaxPooling2D", "config": {"name": "p1", "pool_size": [2, 2]}}' \
  '{"class_name": "Conv2D", "config": {"name": "c2", "filters": 32, "kernel_size": [3, 3], "activation": "relu"}}' \
  '{"class_name": "MaxPooling2D", "config": {"name": "p2", "pool_size": [2, 2]}}' \
  "$FLAT" "$(dense out 10 softmax)")"
CGRID="{'loss': ['categorical_crossentropy'], 'metrics': ['accuracy'], 'optimizer_params_list': [
  {'optimizer': ['SGD'], 'lr': [0.0001, 0.1, 'log'], 'momentum': [0.9]},
  {'optimizer': ['Adam'], 'lr': [0.0001, 0.1, 'log']},
  {'optimizer': ['RMSprop'], 'lr': [0.0001, 0.1, 'log']}]}"
FGRID="{'batch_size': [32, 64, 128, 256], 'epochs': [1]}"

psqlc -v mlp1="$MLP1" -v mlp2="$MLP2" -v mlp3="$MLP3" -v cnn="$CNN" >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS amb_arch, amb_train_p, amb_train_p_summary, amb_test_p, amb_test_p_summary;
SELECT madlib_dl.load_keras_model('amb_arch', :'mlp1'::json, NULL, 'mlp 128');
SELECT madlib_dl.load_keras_model('amb_arch', :'mlp2'::json, NULL, 'mlp 256-128');
SELECT madlib_dl.load_keras_model('amb_arch', :'mlp3'::json, NULL, 'mlp 512-256-128');
SELECT madlib_dl.load_keras_model('amb_arch', :'cnn'::json, NULL, 'cnn 16c3-p2-32c3-p2');
SELECT madlib_dl.training_preprocessor_dl('amb_train', 'amb_train_p', 'y', 'x', NULL, 255.0, NULL, '2');
SELECT madlib_dl.validation_preprocessor_dl('amb_test', 'amb_test_p', 'y', 'x', 'amb_train_p');
SQL
echo "train rows: $(psqlc -At -c 'SELECT count(*) FROM amb_train'), validation rows: $(psqlc -At -c 'SELECT count(*) FROM amb_test'), segments: 2, random_states: $SEEDS"
psqlc -At -F ' ' -c "SELECT '  model_id', model_id, name, (madlib_dl._arch_info(model_arch)).n_params, 'parameters' FROM amb_arch ORDER BY model_id"

drop_out() {  # output table names...
  local t
  for t in "$@"; do
    psqlc -c "SET client_min_messages = warning; DROP TABLE IF EXISTS ${t}, ${t}_info, ${t}_summary, ${t}_mst, ${t}_mst_summary"
  done
}
secs() {  # summary table -> seconds of training
  psqlc -At -c "SELECT round(extract(epoch FROM end_training_time - start_training_time)::numeric, 1) FROM $1"
}
best() {  # info table -> best final validation accuracy, in points
  psqlc -At -c "SELECT round(100 * max(validation_metrics_final)::numeric, 2) FROM $1"
}
reach() {  # info table, target accuracy (points) -> first second it is reached, or 'never'
  psqlc -At -c "SELECT coalesce(round(min(t)::numeric, 1)::text, 'never')
                  FROM $1, unnest(validation_metrics, metrics_elapsed_time) AS p(acc, t)
                 WHERE 100 * acc >= $2"
}
automl() {  # out method params seed
  drop_out "$1"
  psqlc -v cgrid="$CGRID" -v fgrid="$FGRID" >/dev/null <<SQL
SET client_min_messages = warning;
SELECT madlib_dl.madlib_keras_automl('amb_train_p', '$1', 'amb_arch', '$1_mst', ARRAY[1, 2, 3, 4],
    :'cgrid', :'fgrid', '$2', '$3', $4, NULL, FALSE, 'amb_test_p');
SQL
}

RESULTS="$(mktemp)"
trap 'rm -f "$RESULTS"' EXIT
printf '%-5s %-5s %9s %9s %10s %9s\n' seed run best_acc wall_s reach_s reach/T
for SEED in $SEEDS; do
  # the reference: random search, 27 configurations x 9 passes
  drop_out amb_ref
  psqlc -c "SET client_min_messages = warning; DROP TABLE IF EXISTS amb_ref_cfg, amb_ref_cfg_summary"
  psqlc -v cgrid="$CGRID" -v fgrid="$FGRID" >/dev/null <<SQL
SET client_min_messages = warning;
SELECT madlib_dl.generate_model_configs('amb_arch', 'amb_ref_cfg', ARRAY[1, 2, 3, 4], :'cgrid', :'fgrid',
    'random', 27, $SEED);
SELECT madlib_dl.fit_multiple('amb_train_p', 'amb_ref', 'amb_ref_cfg', 9, FALSE, 'amb_test_p');
SQL
  A="$(best amb_ref_info)"
  T="$(secs amb_ref_summary)"
  TARGET="$(awk -v a="$A" 'BEGIN { printf "%.2f", a - 0.5 }')"
  printf '%-5s %-5s %9s %9s %10s %9s\n' "$SEED" REF "$A" "$T" - -
  echo "$SEED REF $A $T - -" >>"$RESULTS"
  for RUN in "HB hyperband R=9,eta=3" "TPE hyperopt num_configs=27,num_iterations=9,algorithm=tpe" \
             "ASHA asha R=9,eta=3,num_configs=27"; do
    read -r NAME METHOD PARAMS <<<"$RUN"
    OUT="amb_$(echo "$NAME" | tr 'A-Z' 'a-z')"
    automl "$OUT" "$METHOD" "${PARAMS//,/, }" "$SEED"
    B="$(best "${OUT}_info")"
    W="$(secs "${OUT}_summary")"
    R="$(reach "${OUT}_info" "$TARGET")"
    RT="$(awk -v r="$R" -v t="$T" 'BEGIN { if (r == "never") print "-"; else printf "%.3f", r / t }')"
    printf '%-5s %-5s %9s %9s %10s %9s\n' "$SEED" "$NAME" "$B" "$W" "$R" "$RT"
    echo "$SEED $NAME $B $W $R $RT" >>"$RESULTS"
  done
done

echo
echo "means over random_states $SEEDS (A - 0.5 points per random_state; reach/T among those that reached it):"
awk '
  $2 == "REF" { a[$1] = $3; t[$1] = $4 }
  { n[$2]++; acc[$2] += $3; wall[$2] += $4
    if ($5 != "never" && $5 != "-") { nr[$2]++; reach[$2] += $5; ratio[$2] += $6 } }
  $2 != "REF" { d[$2] += $3 - a[$1] }
  END {
    printf "%-5s %9s %9s %12s %10s %10s %9s\n", "run", "best_acc", "wall_s", "best-A_pts", "reach_s", "reach/T", "reached"
    split("REF HB TPE ASHA", order, " ")
    for (i = 1; i <= 4; i++) {
      r = order[i]
      if (!(r in n)) continue
      printf "%-5s %9.2f %9.1f %12s %10s %10s %9s\n", r, acc[r] / n[r], wall[r] / n[r],
        r == "REF" ? "-" : sprintf("%.2f", d[r] / n[r]),
        nr[r] ? sprintf("%.1f", reach[r] / nr[r]) : "-",
        nr[r] ? sprintf("%.3f", ratio[r] / nr[r]) : "-",
        r == "REF" ? "-" : sprintf("%d/%d", nr[r], n[r])
    }
    hbr = (nr["HB"] == n["HB"]) ? ratio["HB"] / nr["HB"] : 1e9
    ashar = (nr["ASHA"] == n["ASHA"]) ? ratio["ASHA"] / nr["ASHA"] : 1e9
    m = hbr < ashar ? hbr : ashar
    printf "goal: Hyperband or ASHA reaches A - 0.5 points in <= T/3: %s (best mean reach/T %s)\n",
      (m <= 1.0 / 3 ? "met" : "not met"), (m < 1e9 ? sprintf("%.3f", m) : "never")
    printf "goal: TPE best >= A: %s (mean best - A %.2f points)\n", (d["TPE"] >= 0 ? "met" : "not met"), d["TPE"] / n["TPE"]
  }' "$RESULTS"
