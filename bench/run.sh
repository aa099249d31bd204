#!/usr/bin/env bash
# run.sh: the speed benchmark of issue 5, engine alone vs PyTorch.
#
#   bench/run.sh [NET ...]            NET: mlp cnn resnet (default mlp cnn)
#
# For every NET and optimizer (sgd, adam) it runs bench/out/engine_bench
# and bench/torch_bench.py, one process each (so peak RSS is per run),
# one BLAS thread each (OPENBLAS_NUM_THREADS=1, OMP_NUM_THREADS=1,
# torch.set_num_threads(1)), one after the other, and prints one figure
# per line:
#   <net> <opt> <who> <key> <value>          who: engine | torch
#   <net> <opt> ratio samples_per_s <engine/torch>
#   <net> <opt> ratio samples_per_cpu_s <engine/torch>
# samples_per_s is wall-clock, samples_per_cpu_s uses the process's CPU
# time (the figure to compare when other processes share the cores).
#
# Environment:
#   BENCH_MALLOC_TUNE (1): glibc malloc settings for both sides (below)
#   REPEAT (1): runs per side, alternating; figures are medians over them
#   MLP_EPOCHS (5), CNN_EPOCHS (1), CNN_WINDOWS (6 windows per epoch; with
#   one epoch the first window is the warm-up), RESNET_EPOCHS (5: the
#   issue's test accuracy after 5 passes), RESNET_WINDOWS (1)
#   BENCH_OUT  directory for the raw outputs (default bench/out/run-<time>)
#   BENCH_BACKEND the engine's kernels: auto (default: oneDNN when built
#              in), openblas or onednn; printed as "engine backend"
#   OPENBLAS_CORETYPE  passed through to both sides (see docs/performance.md:
#              OpenBLAS 0.3.21 does not know Zen 5 and falls back to its
#              Haswell kernels; SkylakeX selects the AVX-512 ones)
#   INDB_CMD   the in-database side (issue 5, item 2: fit on one segment),
#              normally bench/indb_fit.sh.  When set, it is run as
#              "$INDB_CMD <net> <opt>" after the engine and torch runs and
#              must print "key value" lines with at least samples_per_s
#              (the same keys as engine_bench); run.sh prints them as
#              "<net> <opt> indb ..." and the ratios indb/engine (wall and
#              CPU time; the goal is >= 1/1.10 = 0.91).
#
# Never a test: nothing here fails on a slow figure.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NETS=("$@")
[ ${#NETS[@]} -eq 0 ] && NETS=(mlp cnn)
REPEAT="${REPEAT:-1}"
OUTDIR="${BENCH_OUT:-$ROOT/bench/out/run-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$OUTDIR"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
# glibc malloc: keep freed memory instead of unmapping it.  PyTorch
# allocates every activation afresh; with the default mmap threshold each
# big buffer is mmap'ed and unmapped per step and page faults are costly in
# this VM (PyTorch's CNN ran 4x slower without this).  The engine
# allocates once, so this only changes the PyTorch side; BENCH_MALLOC_TUNE=0
# turns it off.
if [ "${BENCH_MALLOC_TUNE:-1}" = 1 ]; then
  export MALLOC_MMAP_THRESHOLD_=2000000000 MALLOC_TRIM_THRESHOLD_=2000000000 MALLOC_TOP_PAD_=536870912
fi

make -s -C "$ROOT/bench" >/dev/null
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "run.sh: /usr/bin/python3 cannot import torch; run scripts/install-bench-deps.sh" >&2
  exit 1
fi

get() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
# median over $1.1 .. $1.REPEAT of every numeric key (text keys: the first)
median_files() {
  awk '{ k = $1; v[k, ++n[k]] = $2; if (!(k in seen)) { seen[k] = 1; order[++no] = k } }
       END {
         for (i = 1; i <= no; i++) {
           k = order[i]; m = n[k]
           if (v[k, 1] !~ /^[-+0-9.]+$/) { print k, v[k, 1]; continue }
           for (a = 1; a <= m; a++) x[a] = v[k, a] + 0
           for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (x[b] < x[a]) { t = x[a]; x[a] = x[b]; x[b] = t }
           print k, (m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2)
         }
       }' "$1".[0-9]*
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "nan" }'; }

echo "# $(date -u +%FT%TZ) $(uname -n) $(getconf _NPROCESSORS_ONLN) cpus, load $(cut -d' ' -f1-3 /proc/loadavg), OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}, BENCH_MALLOC_TUNE=${BENCH_MALLOC_TUNE:-1}"
echo "# raw outputs in $OUTDIR; REPEAT=$REPEAT (medians)"
for net in "${NETS[@]}"; do
  case "$net" in
    mlp) args=("${MLP_EPOCHS:-5}" 1) ;;
    cnn) args=("${CNN_EPOCHS:-1}" "${CNN_WINDOWS:-6}") ;;
    resnet) args=("${RESNET_EPOCHS:-5}" "${RESNET_WINDOWS:-1}") ;;
    *) echo "run.sh: unknown network $net" >&2; exit 2 ;;
  esac
  for opt in sgd adam; do
    e="$OUTDIR/engine-$net-$opt.txt"
    t="$OUTDIR/torch-$net-$opt.txt"
    # REPEAT runs, engine and torch alternating; every key is the median
    for r in $(seq 1 "$REPEAT"); do
      "$ROOT/bench/out/engine_bench" "$net" "$opt" "${args[@]}" > "$e.$r"
      /usr/bin/python3 "$ROOT/bench/torch_bench.py" "$net" "$opt" "${args[@]}" > "$t.$r"
    done
    median_files "$e" > "$e"
    median_files "$t" > "$t"
    for who in engine torch; do
      f="$OUTDIR/$who-$net-$opt.txt"
      for k in samples_per_s samples_per_cpu_s gflops gflops_cpu sgemm_gflops_1024sq pct_sgemm pct_sgemm_cpu peak_rss_mb test_acc; do
        echo "$net $opt $who $k $(get "$f" $k)"
      done
    done
    echo "$net $opt engine backend $(get "$e" backend)"
    echo "$net $opt engine engine_sgemm_gflops_1024sq $(get "$e" engine_sgemm_gflops_1024sq)"
    echo "$net $opt engine pct_engine_sgemm_cpu $(get "$e" pct_engine_sgemm_cpu)"
    echo "$net $opt ratio samples_per_s $(ratio "$(get "$e" samples_per_s)" "$(get "$t" samples_per_s)")"
    echo "$net $opt ratio samples_per_cpu_s $(ratio "$(get "$e" samples_per_cpu_s)" "$(get "$t" samples_per_cpu_s)")"
    echo "$net $opt diff test_acc_points $(awk -v a="$(get "$e" test_acc)" -v b="$(get "$t" test_acc)" 'BEGIN { printf "%+.2f", 100 * (a - b) }')"
    if [ -n "${INDB_CMD:-}" ]; then
      i="$OUTDIR/indb-$net-$opt.txt"
      if $INDB_CMD "$net" "$opt" > "$i"; then
        awk -v p="$net $opt indb" '{ print p, $1, $2 }' "$i"
        echo "$net $opt ratio indb_over_engine_samples_per_s $(ratio "$(get "$i" samples_per_s)" "$(get "$e" samples_per_s)")"
        echo "$net $opt ratio indb_over_engine_samples_per_cpu_s $(ratio "$(get "$i" samples_per_cpu_s)" "$(get "$e" samples_per_cpu_s)")"
      else
        echo "$net $opt indb failed (see $i)"
      fi
    fi
  done
done
