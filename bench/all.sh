#!/usr/bin/env bash
# all.sh: every benchmark of bench/ with its peer, in one command, and one
# table of ratios (issue 31, item 5; the table in docs/performance.md).
#
#   bench/all.sh [--quick] [CONNINFO]        (default: dbname=madlib_dl_bench)
#
# Runs, one after the other (never two at once: each wants the whole
# machine), and prints one row per figure:
#   engine, MLP and CNN      bench/run.sh: the engine against PyTorch, one
#                            thread each (samples/s), and the engine's
#                            training GFLOP/s against the machine's FMA
#                            peak (bench/out/fma_peak, one core, measured
#                            here); then PyTorch on all threads
#                            (TORCH_THREADS=nproc, OpenBLAS on one thread
#                            under it) against the one-thread engine
#   text, LSTM               bench/seq_run.sh: engine against PyTorch
#   fit_multiple             bench/fit_multiple_bench.sh with FMB_AB_ONLY=1:
#                            2 segments against 1 (wall time)
#   averaging                bench/averaging_bench.sh: fit of the MLP,
#                            averaging_period 32 with lr_scaling 'linear' on
#                            2 segments against sequential training on 1
#                            (wall time, and the test accuracy difference)
#   preprocessing            bench/preprocess_bench.sh: against a plain copy
#   streaming                bench/scale_bench.sh: fit and fit_multiple
#                            streamed against cached
#   serving                  bench/serving_bench.sh: predict_row on 1 core
#                            and on all cores, and predict on all cores,
#                            against the plain scan
#   schedule                 bench/out/hopper_sim: makespan against the
#                            lower bound, 256 segments x 1,000 models
#   whole job                bench/whole_job.sh: fit_multiple of 8
#                            configurations against two PyTorch processes
#
# Each row: what, madlib_dl's figure, the peer's, the ratio, the goal of
# issue 31 (or of the issue named) and whether it is met.  The table is
# printed and written, with every benchmark's raw output, to
# bench/out/all-<time>/ (not committed): table.md, table.tsv and
# table.png (bench/all_chart.py: each ratio against its goal).  A
# benchmark that fails leaves its row "failed" and the others run.
#
# --quick: smaller data and fewer epochs everywhere (6 minutes on 2 cores
# here, against 9 for the full run): checks that every part runs; its figures are
# not the ones to quote.
#
# Needs: the extension installed and a server whose user may set
# madlib_dl.partition_memory (a superuser: scale_bench.sh), with
# max_parallel_workers >= 2; Debian's python3-torch and python3-matplotlib
# (scripts/install-bench-deps.sh, scripts/install-deps.sh); the
# Fashion-MNIST files (dataset-fashion-mnist).  Never a test: nothing
# fails on a slow figure.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
QUICK=0
if [ "${1:-}" = --quick ]; then QUICK=1; shift; fi
CONN="${1:-dbname=madlib_dl_bench}"
OUT="$ROOT/bench/out/all-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
TSV="$OUT/table.tsv"
NCPU="$(getconf _NPROCESSORS_ONLN)"
CPU="$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
printf 'area\tmeasure\tmadlib_dl\tpeer\tratio\tgoal\tmet\n' > "$TSV"

log() { echo "all.sh: $*" >&2; }
# row AREA MEASURE MINE PEER RATIO GOAL   (GOAL: ">=x", "<=x" or "-")
row() {
  local met=-
  case "$6" in
    ">="*) met=$(awk -v r="$5" -v g="${6#>=}" 'BEGIN { print (r != "" && r + 0 >= g + 0) ? "yes" : "no" }') ;;
    "<="*) met=$(awk -v r="$5" -v g="${6#<=}" 'BEGIN { print (r != "" && r + 0 <= g + 0) ? "yes" : "no" }') ;;
  esac
  [ -z "$5" ] && met=failed
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "${3:--}" "${4:--}" "${5:-failed}" "$6" "$met" >> "$TSV"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b + 0 > 0) printf "%.3f", a / b }'; }
# value of "KEY VALUE" lines: kv FILE KEY...  (the fields before the value)
kv() { local f=$1; shift; awk -v k="$*" '{ v = $NF; $NF = ""; sub(/ +$/, ""); if ($0 == k) print v }' "$f" | tail -1; }

psql -X -q -d "$CONN" -c "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS madlib_dl" >/dev/null ||
  { log "cannot connect to \"$CONN\" or create the extension there"; exit 1; }
if ! psql -X -q -At -d "$CONN" -c "SELECT 1 FROM fashion_train LIMIT 1" >/dev/null 2>&1; then
  log "loading Fashion-MNIST into fashion_train / fashion_test"
  "$ROOT/scripts/load_fashion_mnist.sh" "$CONN" >/dev/null || { log "could not load Fashion-MNIST"; exit 1; }
fi
make -s -C "$ROOT/bench" >/dev/null || { log "make -C bench failed"; exit 1; }

echo "# bench/all.sh $( [ $QUICK = 1 ] && echo --quick) $(date -u +%FT%TZ), $NCPU cpus ($CPU), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# raw outputs in $OUT"

# --- the machine's peak ---------------------------------------------------
"$ROOT/bench/out/fma_peak" > "$OUT/fma_peak.txt"
PEAK="$(kv "$OUT/fma_peak.txt" fma_peak_gflops)"
log "FMA peak, one core: $PEAK GFLOP/s"

# --- the engine against PyTorch ------------------------------------------
if [ $QUICK = 1 ]; then
  export MLP_EPOCHS=2 CNN_EPOCHS=1 CNN_WINDOWS=3 BENCH_TRAIN_N=20000
fi
log "bench/run.sh mlp cnn"
BENCH_OUT="$OUT/run" "$ROOT/bench/run.sh" mlp cnn > "$OUT/run.txt" 2>&1 || log "run.sh failed (see $OUT/run.txt)"
for net in mlp cnn; do
  goal=">=1.6"; pgoal=">=80"; [ $net = cnn ] && goal=">=2"
  for opt in sgd adam; do
    e="$(kv "$OUT/run.txt" $net $opt engine samples_per_s)"
    t="$(kv "$OUT/run.txt" $net $opt torch samples_per_s)"
    row "engine, $net $opt" "samples/s, against PyTorch 1 thread" "$e" "$t" "$(ratio "$e" "$t")" "$goal"
    g="$(kv "$OUT/run.txt" $net $opt engine gflops)"
    row "engine, $net $opt" "percent of the FMA peak (GFLOP/s against $PEAK)" "$g" "$PEAK" \
      "$(awk -v a="$g" -v b="$PEAK" 'BEGIN { if (a != "" && b > 0) printf "%.1f", 100 * a / b }')" "$pgoal"
    # PyTorch on every thread, the same run otherwise
    if [ $net = mlp ]; then args=("${MLP_EPOCHS:-5}" 1); else args=("${CNN_EPOCHS:-1}" "${CNN_WINDOWS:-6}"); fi
    # (the malloc settings of bench/run.sh, as its PyTorch runs had them).
    # PyTorch's own threads only: Debian's torch calls OpenBLAS, and
    # OpenBLAS threads on top of torch's oversubscribe the cores (the MLP
    # ran 3.8x slower with OPENBLAS_NUM_THREADS=2 on 2 cores: 16,129
    # against 60,545 samples/s)
    MALLOC_MMAP_THRESHOLD_=2000000000 MALLOC_TRIM_THRESHOLD_=2000000000 MALLOC_TOP_PAD_=536870912 \
    OMP_NUM_THREADS=$NCPU OPENBLAS_NUM_THREADS=1 TORCH_THREADS=$NCPU \
      /usr/bin/python3 "$ROOT/bench/torch_bench.py" $net $opt "${args[@]}" > "$OUT/torch-all-$net-$opt.txt" 2>&1
    ta="$(kv "$OUT/torch-all-$net-$opt.txt" samples_per_s)"
    row "engine, $net $opt" "samples/s, 1 thread against PyTorch on $NCPU threads" "$e" "$ta" "$(ratio "$e" "$ta")" "-"
  done
done
unset MLP_EPOCHS CNN_EPOCHS CNN_WINDOWS BENCH_TRAIN_N

log "bench/seq_run.sh"
if [ $QUICK = 1 ]; then export SEQ_TRAIN_N=2000 SEQ_TEST_N=1000 SEQ_EPOCHS=2; fi
BENCH_OUT="$OUT/seq" "$ROOT/bench/seq_run.sh" > "$OUT/seq.txt" 2>&1 || log "seq_run.sh failed (see $OUT/seq.txt)"
unset SEQ_TRAIN_N SEQ_TEST_N SEQ_EPOCHS
for net in text lstm; do
  row "engine, $net" "samples/s, against PyTorch 1 thread" "$(kv "$OUT/seq.txt" $net engine samples_per_s)" \
    "$(kv "$OUT/seq.txt" $net torch samples_per_s)" "$(kv "$OUT/seq.txt" $net ratio samples_per_s)" "-"
done

# --- in the database ------------------------------------------------------
SZ=(); [ $QUICK = 1 ] && SZ=(10000 2000)
log "bench/fit_multiple_bench.sh (A and B)"
FMB_AB_ONLY=1 "$ROOT/bench/fit_multiple_bench.sh" "$CONN" "${SZ[@]}" > "$OUT/fit_multiple.txt" 2>&1 ||
  log "fit_multiple_bench.sh failed (see $OUT/fit_multiple.txt)"
ta="$(sed -n 's/^A .*: *\([0-9.]*\) s$/\1/p' "$OUT/fit_multiple.txt")"
tb="$(sed -n 's/^B .*: *\([0-9.]*\) s$/\1/p' "$OUT/fit_multiple.txt")"
row "fit_multiple" "seconds, 2 segments against 1 (8 MLPs, 10 passes)" "$ta" "$tb" "$(ratio "$ta" "$tb")" "<=0.52"
row "fit_multiple" "its factors: the steps' own time, 2 segments against 1" - - \
  "$(sed -n 's/^steps A\/B .*: \([0-9.]*\)$/\1/p' "$OUT/fit_multiple.txt")" "-"
row "fit_multiple" "its factors: busy share of the segments, 2 segments (1 segment: $(sed -n 's/^busy share B .*: *\([0-9.]*\)$/\1/p' "$OUT/fit_multiple.txt"))" - - \
  "$(sed -n 's/^busy share A .*: *\([0-9.]*\)$/\1/p' "$OUT/fit_multiple.txt")" "-"

log "bench/averaging_bench.sh (MLP, period 32, lr_scaling linear)"
avg_env=(NETS=mlp SEEDS=1 SEGMENTS="1 2" PERIODS=32 SCALINGS=linear OUT="$OUT/averaging.runs")
[ $QUICK = 1 ] && avg_env+=(ROWS=10000 TEST=2000 ITER_MLP=3)
env "${avg_env[@]}" "$ROOT/bench/averaging_bench.sh" "$CONN" > "$OUT/averaging.txt" 2>&1 ||
  log "averaging_bench.sh failed (see $OUT/averaging.txt)"
s1="$(awk '$1 == "run" && $3 == 1 { print $8 }' "$OUT/averaging.runs" 2>/dev/null | tail -1)"
a1="$(awk '$1 == "run" && $3 == 1 { print $7 }' "$OUT/averaging.runs" 2>/dev/null | tail -1)"
s2="$(awk '$1 == "run" && $3 == 2 && $4 == 32 { print $8 }' "$OUT/averaging.runs" 2>/dev/null | tail -1)"
a2="$(awk '$1 == "run" && $3 == 2 && $4 == 32 { print $7 }' "$OUT/averaging.runs" 2>/dev/null | tail -1)"
row "averaging" "speed-up, 2 segments (period 32) against 1 (seconds)" "$s2" "$s1" "$(ratio "$s1" "$s2")" ">=1.85"
row "averaging" "test accuracy, 2 segments minus 1 (points)" "$a2" "$a1" \
  "$(awk -v a="$a2" -v b="$a1" 'BEGIN { if (a != "" && b != "") printf "%.2f", 100 * (a - b) }')" ">=-0.2"

log "bench/preprocess_bench.sh"
"$ROOT/bench/preprocess_bench.sh" "$CONN" "$([ $QUICK = 1 ] && echo 3 || echo 5)" > "$OUT/preprocess.txt" 2>&1 ||
  log "preprocess_bench.sh failed (see $OUT/preprocess.txt)"
pc="$(kv "$OUT/preprocess.txt" copy_ms)"; pp="$(kv "$OUT/preprocess.txt" pack_ms)"
row "preprocessing" "ms, training_preprocessor_dl against CREATE TABLE AS" "$pp" "$pc" "$(ratio "$pp" "$pc")" "<=3"

log "bench/scale_bench.sh (streamed against cached)"
sc_env=(GRID=0 PARTS="pp fit fm" BENCH_PREFIX=allsc)
[ $QUICK = 1 ] && sc_env+=(BASE_ROWS=20000 COPIES=3 BUDGET=24MB ITER=1) || sc_env+=(COPIES=4)
env "${sc_env[@]}" "$ROOT/bench/scale_bench.sh" "$CONN" > "$OUT/scale.txt" 2>&1 ||
  log "scale_bench.sh failed (see $OUT/scale.txt)"
for kind in fit fm; do
  st="$(awk -v k=$kind '$1 == k && $3 == "streamed" { print $5 }' "$OUT/scale.txt" | tail -1)"
  ca="$(awk -v k=$kind '$1 == k && $3 == "cached" { print $5 }' "$OUT/scale.txt" | tail -1)"
  row "streaming" "seconds of $([ $kind = fit ] && echo fit || echo fit_multiple), streamed against cached" \
    "$st" "$ca" "$(ratio "$st" "$ca")" "<=1.10"
done

log "bench/serving_bench.sh"
"$ROOT/bench/serving_bench.sh" "$CONN" > "$OUT/serving.txt" 2>&1 || log "serving_bench.sh failed (see $OUT/serving.txt)"
for what in "1 core" "all cores"; do
  line="$(grep "^predict_row, $what " "$OUT/serving.txt" | tail -1)"
  scan="$(grep "^scan, $what " "$OUT/serving.txt" | tail -1 | awk '{ print $(NF-2) }')"
  row "serving" "rows/s, predict_row against the plain scan, $what (issue 28)" \
    "$(echo "$line" | awk '{ print $(NF-2) }')" "$scan" "$(echo "$line" | awk '{ print $(NF-1) }')" ">=0.5"
done
line="$(grep "^predict (row mode" "$OUT/serving.txt" | tail -1)"
scan="$(grep "^scan, all cores " "$OUT/serving.txt" | tail -1 | awk '{ print $(NF-2) }')"
row "serving" "rows/s, predict (row mode) against the plain scan, all cores (issue 28)" \
  "$(echo "$line" | awk '{ print $(NF-2) }')" "$scan" "$(echo "$line" | awk '{ print $(NF-1) }')" ">=0.5"

# --- the schedule ----------------------------------------------------------
log "bench/out/hopper_sim"
"$ROOT/bench/out/hopper_sim" > "$OUT/hopper_sim.txt" 2>&1 || log "hopper_sim failed (see $OUT/hopper_sim.txt)"
mb="$(sed -n 's/^makespan \/ bound \([0-9.]*\);.*/\1/p' "$OUT/hopper_sim.txt")"
row "schedule" "makespan against the lower bound, 256 segments x 1,000 models (simulated)" "$mb" 1 "$mb" "<=1.05"

# --- the whole job ----------------------------------------------------------
log "bench/whole_job.sh"
"$ROOT/bench/whole_job.sh" "$CONN" "${SZ[@]}" > "$OUT/whole_job.txt" 2>&1 || log "whole_job.sh failed (see $OUT/whole_job.txt)"
wf="$(kv "$OUT/whole_job.txt" fit_multiple_s)"; wt="$(kv "$OUT/whole_job.txt" torch_s)"
row "whole job" "seconds, fit_multiple against 2 PyTorch processes (issue 5)" "$wf" "$wt" "$(ratio "$wf" "$wt")" "<=0.75"

# --- the table ----------------------------------------------------------------
{
  echo "bench/all.sh$( [ $QUICK = 1 ] && echo ' --quick'), $(date -u +%F), $NCPU cpus: $CPU; FMA peak $PEAK GFLOP/s per core (bench/out/fma_peak)"
  echo
  echo "| area | measure | madlib_dl | peer | ratio | goal | met |"
  echo "|---|---|---|---|---|---|---|"
  tail -n +2 "$TSV" | awk -F '\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7 }'
} > "$OUT/table.md"
cat "$OUT/table.md"
if /usr/bin/python3 "$ROOT/bench/all_chart.py" "$TSV" "$OUT/table.png" 2>"$OUT/chart.err"; then
  echo "chart: $OUT/table.png"
else
  log "no chart (see $OUT/chart.err)"
fi
