#!/usr/bin/env bash
# scale_bench.sh: training on tables larger than the partition budget
# (issue 14, docs/performance.md "Beyond memory").
#
#   bench/scale_bench.sh [CONNINFO]          (default: dbname=madlib_dl_bench)
#
# 1. Data: Fashion-MNIST's training set (BASE_ROWS of it) repeated COPIES
#    times, each copy inserted in another random order (so the packed
#    buffers differ copy to copy), x real[784] of raw pixels; packed by
#    training_preprocessor_dl on SEGMENTS segments, normalizing_const 255,
#    under madlib_dl.partition_memory = BUDGET: the preprocessor's time and
#    rows per second, the packed size.
# 2. fit (MLP 784-256-128-10, Adam, batch 128, epochs 1, ITER iterations)
#    and fit_multiple (4 configurations of that MLP), each twice: streamed
#    (partition_memory = BUDGET, smaller than a partition) and cached
#    (partition_memory = CACHE_BUDGET, larger).  Prints per run the seconds,
#    the rows trained per second, the peak private memory (RssAnon from
#    /proc, sampled every 20 ms) of the largest segment worker and of the
#    calling backend, and the ratio streamed / cached of the seconds.  The weights must be
#    identical (checked).
# 3. With COLD=1 (as root): the same runs again, each after `sync; echo 3 >
#    /proc/sys/vm/drop_caches`, and the disk's sequential read rate (dd of
#    the packed table's TOAST files after dropping the caches).
# 4. The grid (GRID=1): fit_multiple of K = GRID_K small MLPs (784-32-10)
#    on N = GRID_N segments (Fashion-MNIST's GRID_ROWS rows packed for each
#    N), GRID_ITER iterations: the wall seconds of one iteration (the
#    second, from the progress NOTICEs: no start-up, no final evaluation),
#    per model-pass (one model over all rows once: iteration / K), the
#    CPU seconds per model-pass (the models' own training_seconds), and
#    the hop overhead: the share of the segments' time not spent in steps,
#    1 - (sum(training_seconds) / iterations) / (iteration x min(K, N)).
#
# Environment (defaults: the full benchmark of issue 14):
#   BASE_ROWS 60000  COPIES 10  SEGMENTS 2  BUDGET 128MB  CACHE_BUDGET 4GB
#   ITER 2  COLD 0  PARTS "pp fit fm" (any of pp fit fm; the data is packed
#   once and kept)  GRID 1  GRID_K "4 16 64"  GRID_N "2 4 8"
#   GRID_ROWS 60000  GRID_ITER 3  BENCH_PREFIX scale
# Needs a superuser connection (madlib_dl.partition_memory), the server
# with max_parallel_workers >= max(SEGMENTS, GRID_N), and /proc.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CONN="${1:-dbname=madlib_dl_bench}"
BASE_ROWS="${BASE_ROWS:-60000}"; COPIES="${COPIES:-10}"; SEGMENTS="${SEGMENTS:-2}"
BUDGET="${BUDGET:-128MB}"; CACHE_BUDGET="${CACHE_BUDGET:-4GB}"; ITER="${ITER:-2}"
COLD="${COLD:-0}"; PARTS="${PARTS:-pp fit fm}"; GRID="${GRID:-1}"
GRID_K="${GRID_K:-4 16 64}"; GRID_N="${GRID_N:-2 4 8}"; GRID_ROWS="${GRID_ROWS:-60000}"
GRID_ITER="${GRID_ITER:-3}"; P="${BENCH_PREFIX:-scale}"
ROWS=$((BASE_ROWS * COPIES))
psqlc() { psql -X -q -v ON_ERROR_STOP=1 -d "$CONN" "$@"; }
now() { date +%s.%N; }
fmt() { printf '%.3f' "$1"; }
div() { echo "scale=6; $1 / $2" | bc -l; }

psqlc -c "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS madlib_dl"
if [ "$COLD" = 1 ] && [ "$(id -u)" -ne 0 ]; then
  echo "scale_bench.sh: COLD=1 drops the page cache: run it as root" >&2; exit 2
fi

# The largest RssAnon (MB) of a parallel worker of backend $1 (a segment),
# and of the backend itself, sampled every 20 ms until file $2 exists:
# "workers_mb backend_mb".  Bash builtins
# only (no fork per sample: forks would slow the measured workers); the
# workers are looked for every 100 ms.
sample_peak() {
  set +e
  local leader="$1" stop="$2" peak=0 own=0 i=0 p k v rest cmd tick_fd
  local -a pids=()
  exec {tick_fd}<> <(:)
  while [ ! -e "$stop" ]; do
    {
      if [ $((i % 5)) -eq 0 ]; then
        pids=()
        for p in /proc/[0-9]*; do
          cmd=""
          IFS= read -r -d '' cmd <"$p/cmdline"
          [[ "$cmd" == *"parallel worker for PID $leader"* ]] && pids+=("${p#/proc/}")
        done
      fi
      for p in "${pids[@]}"; do
        while read -r k v rest; do
          [ "$k" = RssAnon: ] && { [ "$v" -gt "$peak" ] && peak="$v"; break; }
        done <"/proc/$p/status"
      done
      while read -r k v rest; do
        [ "$k" = RssAnon: ] && { [ "$v" -gt "$own" ] && own="$v"; break; }
      done <"/proc/$leader/status"
    } 2>/dev/null
    i=$((i + 1))
    read -r -t 0.02 -u "$tick_fd"
  done
  exec {tick_fd}<&-
  echo "$(echo "scale=1; $peak / 1024" | bc -l) $(echo "scale=1; $own / 1024" | bc -l)"
}

# Run SQL $2 with partition_memory $1; prints "seconds workers_mb backend_mb
# read_share": read_share is the part of the segments' step time spent
# reading streamed partitions (the workers' DEBUG1 lines).
timed_run() {
  local mem="$1" sql="$2" tmp pidf stopf t0 t1 peak
  tmp="$(mktemp -d)"; pidf="$tmp/pid"; stopf="$tmp/stop"
  t0="$(now)"
  {
    psql -X -q -At -v ON_ERROR_STOP=1 -d "$CONN" >"$tmp/out" 2>"$tmp/err" <<SQL
SET client_min_messages = debug1;
SET madlib_dl.partition_memory = '$mem';
\o $pidf
SELECT pg_backend_pid();
\o
$sql;
SQL
    echo $? >"$tmp/rc"; touch "$stopf"
  } &
  while [ ! -s "$pidf" ] && [ ! -e "$stopf" ]; do sleep 0.01; done
  peak="$(sample_peak "$(tr -d ' \n' <"$pidf" 2>/dev/null)" "$stopf")"
  wait
  t1="$(now)"
  if [ "$(cat "$tmp/rc")" != 0 ]; then grep -v 'DEBUG:' "$tmp/err" >&2; rm -rf "$tmp"; exit 1; fi
  [ -n "${KEEP_LOG:-}" ] && cp "$tmp/err" "$KEEP_LOG"
  share="$(awk '/madlib_dl: segment .* in .* s, of which reading/ {
      for (i = 1; i <= NF; i++) { if ($i == "in") t += $(i + 1); if ($i == "reading") r += $(i + 1) }
    } END { if (t > 0) printf "%.3f", r / t; else print "0" }' "$tmp/err")"
  rm -rf "$tmp"
  echo "$(echo "$t1 - $t0" | bc -l) $peak $share"
}

# DROP_CACHES (for a dry run of COLD=1 without dropping anything: true)
DROP_CACHES="${DROP_CACHES:-sync; echo 3 >/proc/sys/vm/drop_caches}"
drop_caches() { if [ "$COLD" = 1 ]; then eval "$DROP_CACHES"; fi; }

# --- 1. data -------------------------------------------------------------
if [ "$(psqlc -At -c "SELECT to_regclass('fashion_train') IS NOT NULL")" != t ]; then
  "$ROOT/scripts/load_fashion_mnist.sh" "$CONN" >/dev/null
fi
SRC="${P}_src_${ROWS}"
if [ "$(psqlc -At -c "SELECT to_regclass('$SRC') IS NOT NULL")" != t ]; then
  psqlc >/dev/null <<SQL
SET client_min_messages = warning;
CREATE TABLE $SRC AS
SELECT k * $BASE_ROWS + f.id AS id, f.x, f.y
  FROM (SELECT * FROM fashion_train ORDER BY id LIMIT $BASE_ROWS) f, generate_series(0, $COPIES - 1) k
 ORDER BY random();
SQL
fi
PACKED="${P}_packed_${ROWS}_${SEGMENTS}"
if [[ " $PARTS " == *" pp "* ]] || [ "$(psqlc -At -c "SELECT to_regclass('$PACKED') IS NOT NULL")" != t ]; then
  psqlc -c "SET client_min_messages = warning; DROP TABLE IF EXISTS $PACKED, ${PACKED}_summary"
  psqlc -c "CHECKPOINT"
  read -r s _ peak _ < <(timed_run "$BUDGET" "SELECT madlib_dl.training_preprocessor_dl('$SRC', '$PACKED', 'y', 'x', NULL, 255, NULL, '$SEGMENTS')")
  mb="$(psqlc -At -c "SELECT round(pg_total_relation_size('$PACKED') / 1048576.0)")"
  echo "preprocess rows $ROWS segments $SEGMENTS budget $BUDGET seconds $(fmt "$s") rows_per_s $(printf '%.0f' "$(div "$ROWS" "$s")") packed_mb $mb backend_peak_mb $peak"
fi
psqlc -At -c "SET madlib_dl.partition_memory = '$BUDGET'; SELECT 'plan segment ' || segment || ' rows ' || rows || ' buffers ' || buffers || ' blocks ' || blocks || ' partition_mb ' || round(cache_bytes / 1048576.0) || ' budget_mb ' || round(budget / 1048576.0) || ' cached ' || cached FROM madlib_dl.partition_plan('$PACKED')"

# --- 2./3. fit and fit_multiple, streamed and cached ----------------------
psqlc >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS ${P}_arch, ${P}_mst, ${P}_mst_summary;
SELECT madlib_dl.load_keras_model('${P}_arch', '{"class_name": "Sequential", "config": {"layers": [
  {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 784]}},
  {"class_name": "Dense", "config": {"units": 256, "activation": "relu"}},
  {"class_name": "Dense", "config": {"units": 128, "activation": "relu"}},
  {"class_name": "Dense", "config": {"units": 10, "activation": "softmax"}}]}}');
SELECT madlib_dl.load_keras_model('${P}_arch', '{"class_name": "Sequential", "config": {"layers": [
  {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 784]}},
  {"class_name": "Dense", "config": {"units": 32, "activation": "relu"}},
  {"class_name": "Dense", "config": {"units": 10, "activation": "softmax"}}]}}');
SELECT madlib_dl.load_model_selection_table('${P}_arch', '${P}_mst', ARRAY[1],
  ARRAY[\$\$loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']\$\$,
        \$\$loss='categorical_crossentropy', optimizer='Adam(lr=0.0005)', metrics=['accuracy']\$\$],
  ARRAY['batch_size=128, epochs=1, seed=1', 'batch_size=256, epochs=1, seed=2']);
SQL
COMPILE="\$\$loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']\$\$"

run_pair() {  # kind label
  local kind="$1" label="$2" out sql s_s s_c p_s p_c b_s b_c r_s r_c
  for mode in streamed cached; do
    out="${P}_${kind}_${mode}"
    psqlc -c "SET client_min_messages = warning; DROP TABLE IF EXISTS $out, ${out}_summary, ${out}_info"
    if [ "$kind" = fit ]; then
      sql="SELECT madlib_dl.fit('$PACKED', '$out', '${P}_arch', 1, $COMPILE, 'batch_size=128, epochs=1', $ITER)"
    else
      sql="SELECT madlib_dl.fit_multiple('$PACKED', '$out', '${P}_mst', $ITER)"
    fi
    drop_caches
    if [ "$mode" = streamed ]; then
      read -r s_s p_s b_s r_s < <(timed_run "$BUDGET" "$sql")
    else
      read -r s_c p_c b_c r_c < <(timed_run "$CACHE_BUDGET" "$sql")
    fi
  done
  local models=1; [ "$kind" = fm ] && models=4
  local trained=$((ROWS * ITER * models))
  echo "$kind $label streamed seconds $(fmt "$s_s") rows_per_s $(printf '%.0f' "$(div "$trained" "$s_s")") worker_peak_mb $p_s backend_peak_mb $b_s budget $BUDGET read_share $r_s"
  echo "$kind $label cached seconds $(fmt "$s_c") rows_per_s $(printf '%.0f' "$(div "$trained" "$s_c")") worker_peak_mb $p_c backend_peak_mb $b_c budget $CACHE_BUDGET"
  echo "$kind $label ratio_streamed_cached $(printf '%.3f' "$(div "$s_s" "$s_c")") identical $(psqlc -At -c "SELECT bool_and(s.model_weights = c.model_weights) FROM ${P}_${kind}_streamed s JOIN ${P}_${kind}_cached c ON $([ "$kind" = fit ] && echo true || echo 's.mst_key = c.mst_key')")"
}
label=warm; [ "$COLD" = 1 ] && label=cold
for kind in fit fm; do
  [[ " $PARTS " == *" $kind "* ]] && run_pair "$kind" "$label"
done
if [ "$COLD" = 1 ]; then
  eval "$DROP_CACHES"
  files="$(psqlc -At -c "SELECT current_setting('data_directory') || '/' || pg_relation_filepath(reltoastrelid) FROM pg_class WHERE oid = '$PACKED'::regclass")"
  t0="$(now)"; bytes=0
  for f in "$files" "$files".[0-9]*; do
    [ -f "$f" ] || continue
    bytes=$((bytes + $(stat -c %s "$f"))); dd if="$f" of=/dev/null bs=1M status=none
  done
  t1="$(now)"
  echo "disk sequential_read_mb_per_s $(printf '%.0f' "$(div "$((bytes / 1048576))" "$(echo "$t1 - $t0" | bc -l)")") over $((bytes / 1048576)) MB"
fi

# --- 4. the grid -----------------------------------------------------------
[ "$GRID" = 1 ] || exit 0
for n in $GRID_N; do
  gp="${P}_grid_${GRID_ROWS}_$n"
  if [ "$(psqlc -At -c "SELECT to_regclass('$gp') IS NOT NULL")" != t ]; then
    psqlc >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS ${P}_grid_src;
CREATE TABLE ${P}_grid_src AS SELECT * FROM fashion_train ORDER BY id LIMIT $GRID_ROWS;
SELECT madlib_dl.training_preprocessor_dl('${P}_grid_src', '$gp', 'y', 'x', NULL, 255, NULL, '$n');
DROP TABLE ${P}_grid_src;
SQL
  fi
  for k in $GRID_K; do
    psqlc >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS ${P}_gmst, ${P}_gmst_summary, ${P}_gout, ${P}_gout_info, ${P}_gout_summary;
SELECT madlib_dl.load_model_selection_table('${P}_arch', '${P}_gmst', ARRAY[2],
  ARRAY[\$\$loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']\$\$],
  ARRAY(SELECT format('batch_size=128, epochs=1, seed=%s', g) FROM generate_series(1, $k) g));
SQL
    log="$(mktemp)"
    read -r s _ _ _ < <(KEEP_LOG="$log" timed_run "$CACHE_BUDGET" "SELECT madlib_dl.fit_multiple('$gp', '${P}_gout', '${P}_gmst', $GRID_ITER)")
    busy="$(psqlc -At -c "SELECT sum(training_seconds) FROM ${P}_gout_info")"
    # an iteration's wall time from the progress NOTICEs: iteration 2 (no
    # start-up, no final evaluation) when there are 3 or more, else the call
    iter_wall="$(awk -v n="$GRID_ITER" '/NOTICE:  iteration [0-9]+ of/ {
        for (i = 1; i <= NF; i++) if ($i == "s,") t[$3 + 0] = $(i - 1)
      } END { if (n >= 3) printf "%.4f", t[2] - t[1]; else print "" }' "$log")"
    rm -f "$log"
    [ -n "$iter_wall" ] || iter_wall="$(div "$s" "$GRID_ITER")"
    par=$(( k < n ? k : n ))
    echo "grid K $k N $n seconds $(fmt "$s") iteration_s $iter_wall wall_per_model_pass $(printf '%.4f' "$(div "$iter_wall" "$k")") cpu_per_model_pass $(printf '%.4f' "$(div "$busy" "$((k * GRID_ITER))")") hop_overhead $(printf '%.3f' "$(echo "1 - ($busy / $GRID_ITER) / ($iter_wall * $par)" | bc -l)")"
  done
done
