#!/usr/bin/env bash
# indb_fit.sh: the in-database side of the speed benchmark (issue 5):
# fit on ONE segment inside PostgreSQL, for bench/run.sh's INDB_CMD hook.
#
#   bench/indb_fit.sh NET OPT          NET: mlp | cnn, OPT: sgd | adam
#   INDB_CMD=bench/indb_fit.sh bench/run.sh
#
# Trains the network of bench/engine_bench.c (MLP 784-256-128-10, or the
# CNN Conv2D 32 3x3 ReLU, MaxPool 2, Conv2D 64 3x3 ReLU, MaxPool 2,
# Flatten, Dense 128 ReLU, Dense 10 softmax) on Fashion-MNIST with
# madlib_dl.fit(..., 'batch_size=128, epochs=1', ITER) on a table packed
# by training_preprocessor_dl with distribution_rules '1' (one segment),
# optimizer SGD(lr=0.05, momentum=0.9) or Adam(lr=0.001), and prints
# "key value" lines:
#   samples_per_s      rows / seconds per iteration, median over
#                      iterations 2..ITER (the NOTICE "iteration i of N:
#                      ...; T s" elapsed times; iteration 1 includes
#                      reading the partition, so it is the warm-up)
#   samples_per_cpu_s  the same with the CPU time (user+system) of the
#                      backend and its parallel workers between the
#                      NOTICEs (sampled from /proc every 50 ms; the
#                      figure to compare on a shared machine)
#   load_s             elapsed time at the end of iteration 1 minus one
#                      median iteration: reading the partition and setup
#   peak_rss_mb        largest VmHWM of the backend and of its workers
#                      (/proc/PID/status; includes shared buffers the
#                      process touched)
#   peak_anon_mb       largest RssAnon sampled (process-private memory:
#                      the partition copy, the model, the workspaces)
#   partition_mb       the packed data of the segment (rows x (784 + 10)
#                      floats)
#   state_mb           the model state: weights + optimizer slots (SGD
#                      momentum 1, Adam 2), from the fit's model_weights
#   mem_goal_mb        partition_mb + 4 * state_mb + 64 (issue 5's bound)
#   test_acc           evaluate() on the 10,000 test images (or INDB_TEST)
#   workers            "k_of_n" segments on parallel workers
#
# Environment: INDB_CONN (default dbname=$INDB_DB, INDB_DB default
# madlib_dl_bench, created if missing, on the private server of
# scripts/pg_local.sh when PGHOST is unset), INDB_ROWS (training rows,
# default all 60,000), INDB_TEST (test rows, default 10,000), INDB_ITER
# (iterations, default 4).  The database is created if missing; tables
# indb_* are created and replaced.  Needs root or the server's user (reads
# /proc/PID/status of the backend).  Never a test.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NET="${1:?usage: $0 mlp|cnn sgd|adam}"
OPT="${2:?usage: $0 mlp|cnn sgd|adam}"
ITER="${INDB_ITER:-4}"
ROWS="${INDB_ROWS:-}"
TEST="${INDB_TEST:-}"
case "$NET" in mlp|cnn) ;; *) echo "$0: unknown network $NET" >&2; exit 2 ;; esac
case "$OPT" in
  sgd) OPTSTR='SGD(lr=0.05, momentum=0.9)' ;;
  adam) OPTSTR='Adam(lr=0.001)' ;;
  *) echo "$0: unknown optimizer $OPT" >&2; exit 2 ;;
esac
if [ -z "${PGHOST:-}" ]; then
  "$ROOT/scripts/pg_local.sh" start >/dev/null
  eval "$("$ROOT/scripts/pg_local.sh" env)"
fi
DB="${INDB_DB:-madlib_dl_bench}"
CONN="${INDB_CONN:-dbname=$DB}"
if [ -z "${INDB_CONN:-}" ]; then
  psql -X -q -At -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1 ||
    createdb "$DB"
fi
psqlc() { psql -X -q -v ON_ERROR_STOP=1 -d "$CONN" "$@"; }
psqlc -c "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS madlib_dl"

# Data: flat real[784] for the MLP, real[28][28][1] for the CNN; loaded once
# per (kind, rows, test rows) and kept.
KIND=flat; IMG=()
[ "$NET" = cnn ] && { KIND=img; IMG=(--image); }
TAG="${KIND}_${ROWS:-all}_${TEST:-all}"
SRC="indb_src_$TAG"
if [ "$(psqlc -At -c "SELECT to_regclass('${SRC}_train_packed') IS NOT NULL AND to_regclass('${SRC}_test_packed') IS NOT NULL")" != t ]; then
  FASHION_TRAIN_TABLE="${SRC}_train" FASHION_TEST_TABLE="${SRC}_test" \
    "$ROOT/scripts/load_fashion_mnist.sh" --replace "${IMG[@]}" "$CONN" $ROWS $TEST >/dev/null
  psqlc >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS ${SRC}_train_packed, ${SRC}_train_packed_summary, ${SRC}_test_packed, ${SRC}_test_packed_summary;
SELECT madlib_dl.training_preprocessor_dl('${SRC}_train', '${SRC}_train_packed', 'y', 'x',
    NULL, 255.0, NULL, '1');
SELECT madlib_dl.validation_preprocessor_dl('${SRC}_test', '${SRC}_test_packed', 'y', 'x',
    '${SRC}_train_packed');
DROP TABLE ${SRC}_train, ${SRC}_test;
SQL
fi

dense() {  # name units activation
  printf '{"class_name": "Dense", "config": {"name": "%s", "trainable": true, "dtype": "float32", "units": %s, "activation": "%s", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}}}' "$1" "$2" "$3"
}
conv() {  # name filters
  printf '{"class_name": "Conv2D", "config": {"name": "%s", "trainable": true, "dtype": "float32", "filters": %s, "kernel_size": [3, 3], "strides": [1, 1], "padding": "valid", "data_format": "channels_last", "dilation_rate": [1, 1], "groups": 1, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}}}' "$1" "$2"
}
pool() {
  printf '{"class_name": "MaxPooling2D", "config": {"name": "%s", "trainable": true, "dtype": "float32", "pool_size": [2, 2], "padding": "valid", "strides": [2, 2], "data_format": "channels_last"}}' "$1"
}
if [ "$NET" = mlp ]; then
  INPUT='{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 784], "dtype": "float32", "name": "dense_input"}}'
  LAYERS="$INPUT, $(dense dense 256 relu), $(dense dense_1 128 relu), $(dense dense_2 10 softmax)"
else
  INPUT='{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 28, 28, 1], "dtype": "float32", "name": "conv2d_input"}}'
  LAYERS="$INPUT, $(conv conv2d 32), $(pool max_pooling2d), $(conv conv2d_1 64), $(pool max_pooling2d_1), {\"class_name\": \"Flatten\", \"config\": {\"name\": \"flatten\", \"trainable\": true, \"dtype\": \"float32\", \"data_format\": \"channels_last\"}}, $(dense dense 128 relu), $(dense dense_1 10 softmax)"
fi
ARCH="{\"class_name\": \"Sequential\", \"config\": {\"name\": \"indb_$NET\", \"layers\": [$LAYERS]}, \"keras_version\": \"2.11.0\", \"backend\": \"tensorflow\"}"
psqlc -v arch="$ARCH" >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS indb_arch_$NET;
SELECT madlib_dl.load_keras_model('indb_arch_$NET', :'arch'::json);
SQL

OUTT="indb_model_${NET}_$OPT"
psqlc >/dev/null -c "SET client_min_messages = warning; DROP TABLE IF EXISTS $OUTT, ${OUTT}_summary, ${OUTT}_eval"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
APP="indb_fit_$$"

# Sampler: finds the backend by application_name and its parallel workers,
# then every 50 ms reads their CPU ticks and memory from /proc, and notes
# the CPU ticks when a new "iteration i of" NOTICE reaches the log.  The
# loop forks nothing (bash builtins only: read -t on a private pipe instead
# of sleep, mapfile instead of grep, no here-strings): an earlier version
# forked grep and sleep 20 times a second, which on this 2-core machine
# slowed the measured worker itself by about 20% (3.32 s per CNN iteration
# against 2.76 s with nothing running beside it).  pgrep runs once a second.
sampler() {
  set +e   # a worker that exits between two reads must not stop the sampler
  set -f   # the /proc fields are split unquoted below
  local bpid="" i=0 seen=0 hz hwm=0 anon=0 pids="" last_scan=0 k v rest n tick_fd
  local -a lines f
  hz="$(getconf CLK_TCK)"
  exec {tick_fd}<> <(:)
  while [ -z "$bpid" ] && [ $i -lt 500 ]; do
    bpid="$(psql -X -At -d "$CONN" -c "SELECT pid FROM pg_stat_activity WHERE application_name = '$APP' AND backend_type = 'client backend' LIMIT 1" 2>/dev/null || true)"
    [ -n "$bpid" ] || read -r -t 0.05 -u "$tick_fd"
    i=$((i + 1))
  done
  [ -n "$bpid" ] || return 0
  while [ -e "/proc/$bpid" ] && [ ! -e "$TMP/done" ]; do
    if [ "$SECONDS" -ne "$last_scan" ]; then   # look for (new) workers once a second
      last_scan=$SECONDS
      pids="$bpid $(pgrep -f "parallel worker for PID $bpid( |\$)" | tr '\n' ' ' || true)"
    fi
    local ticks=0 p line
    for p in $pids; do
      read -r line 2>/dev/null < "/proc/$p/stat" || continue
      line="${line##*) }"; f=($line)
      ticks=$((ticks + f[11] + f[12]))
      while read -r k v rest; do
        case "$k" in
          VmHWM:) [ "$v" -gt "$hwm" ] && hwm="$v" ;;
          RssAnon:) [ "$v" -gt "$anon" ] && anon="$v" ;;
        esac
      done 2>/dev/null < "/proc/$p/status"
    done
    mapfile -t lines < "$TMP/log"
    n=0
    for line in "${lines[@]}"; do
      case "$line" in *"NOTICE:  iteration "[0-9]*" of "*) n=$((n + 1)) ;; esac
    done
    while [ "$n" -gt "$seen" ]; do
      seen=$((seen + 1)); echo "cpu $seen $ticks $hz" >> "$TMP/samples"
    done
    echo "mem $hwm $anon" > "$TMP/mem"
    read -r -t 0.05 -u "$tick_fd"
  done
}
: > "$TMP/log"; : > "$TMP/samples"; echo "mem 0 0" > "$TMP/mem"
sampler &
SPID=$!
PGAPPNAME="$APP" psqlc -v opt="$OPTSTR" >/dev/null 2>"$TMP/log" <<SQL
SET client_min_messages = debug1;
SELECT madlib_dl.fit('${SRC}_train_packed', '$OUTT', 'indb_arch_$NET', 1,
    format('loss=%L, optimizer=%s, metrics=[%L]', 'categorical_crossentropy', :'opt', 'accuracy'),
    'batch_size=128, epochs=1', $ITER);
SQL
touch "$TMP/done"
wait "$SPID" || true
psqlc >/dev/null -c "SET client_min_messages = warning; SELECT madlib_dl.evaluate('$OUTT', '${SRC}_test_packed', '${OUTT}_eval')"

NROWS="${ROWS:-60000}"
[ "$NROWS" -le 60000 ] || NROWS=60000
# model state = weights + optimizer slots (momentum: 1, Adam: m and v)
SLOTS=1; [ "$OPT" = adam ] && SLOTS=2
STATE="$(psqlc -At -c "SELECT octet_length(model_weights) * (1 + $SLOTS) FROM $OUTT" 2>/dev/null || echo 0)"
ACC="$(psqlc -At -c "SELECT round(metric::numeric, 4) FROM ${OUTT}_eval" 2>/dev/null || echo nan)"
WORKERS="$(sed -n 's/.*madlib_dl: \([0-9]*\) of \([0-9]*\) segments run on parallel workers.*/\1_of_\2/p' "$TMP/log" | head -1)"
grep -q 'NOTICE:  iteration' "$TMP/log" || { cat "$TMP/log" >&2; exit 1; }

# iteration i -> elapsed seconds (the NOTICE's "; T s,")
awk -v rows="$NROWS" -v state="$STATE" -v acc="$ACC" -v workers="${WORKERS:-unknown}" '
  FILENAME ~ /samples$/ { if ($1 == "cpu") { cpu[$2] = $3 / $4 } next }
  FILENAME ~ /mem$/ { hwm = $2 / 1024; anon = $3 / 1024; next }
  /NOTICE:  iteration [0-9]+ of/ {
    s = $0; sub(/.*NOTICE:  iteration /, "", s); split(s, a, " "); i = a[1] + 0
    t = $0; sub(/ s, about.*/, "", t); sub(/.*; /, "", t); ts[i] = t + 0; if (i > last) last = i
  }
  function median(x, m,   a, b, t) {
    for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (x[b] < x[a]) { t = x[a]; x[a] = x[b]; x[b] = t }
    return m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2
  }
  END {
    m = 0; mc = 0
    for (i = 2; i <= last; i++) if ((i in ts) && ((i - 1) in ts)) {
      d[++m] = ts[i] - ts[i - 1]
      if ((i in cpu) && ((i - 1) in cpu) && cpu[i] > cpu[i - 1]) c[++mc] = cpu[i] - cpu[i - 1]
    }
    if (m == 0) { print "samples_per_s nan"; exit }
    md = median(d, m)
    printf "rows %d\niterations %d\n", rows, last
    printf "samples_per_s %.0f\n", rows / md
    if (mc > 0) printf "samples_per_cpu_s %.0f\n", rows / median(c, mc)
    printf "iteration_s %.3f\nload_s %.2f\n", md, ts[1] - md
    printf "peak_rss_mb %.1f\npeak_anon_mb %.1f\n", hwm, anon
    pm = rows * (784 + 10) * 4 / 1048576; sm = state / 1048576
    printf "partition_mb %.1f\nstate_mb %.2f\nmem_goal_mb %.1f\n", pm, sm, pm + 4 * sm + 64
    printf "test_acc %s\nworkers %s\n", acc, workers
  }' "$TMP/samples" "$TMP/mem" "$TMP/log" 2>/dev/null || true
