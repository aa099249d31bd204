#!/usr/bin/env bash
# seq_run.sh: the text and sequence speed benchmark of issue 18, engine
# alone (bench/seq_bench.c) against PyTorch (bench/seq_torch_bench.py).
#
#   bench/seq_run.sh [NET ...]        NET: text lstm (default both)
#
# For every NET it writes the data set once (seq_bench data), then trains
# on it with the engine and with PyTorch, one process each, one thread
# each (OPENBLAS_NUM_THREADS=1, OMP_NUM_THREADS=1, torch.set_num_threads(1)),
# one after the other, and prints one figure per line:
#   <net> <who> <key> <value>          who: engine | torch
#   <net> ratio samples_per_s <engine/torch>
#   <net> ratio samples_per_cpu_s <engine/torch>
#   <net> accuracy_gap_points <engine - torch, test accuracy in points>
# The goal: a ratio >= 1.0 at equal accuracy within 1 point.
#
# Environment:
#   SEQ_TRAIN_N (20000), SEQ_TEST_N (4000): samples of each split
#   SEQ_EPOCHS (3): epochs, the first a warm-up
#   BENCH_OUT: directory for the data and raw outputs (default
#   bench/out/seq-<time>); BENCH_MALLOC_TUNE, BENCH_BACKEND as bench/run.sh
#
# Full run (docs/performance.md; about 3 minutes on an idle machine):
#   bench/seq_run.sh
# Small run (a minute):
#   SEQ_TRAIN_N=2000 SEQ_TEST_N=1000 SEQ_EPOCHS=2 bench/seq_run.sh
#
# Never a test: nothing here fails on a slow figure.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NETS=("$@")
[ ${#NETS[@]} -eq 0 ] && NETS=(text lstm)
OUTDIR="${BENCH_OUT:-$ROOT/bench/out/seq-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$OUTDIR"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
if [ "${BENCH_MALLOC_TUNE:-1}" = 1 ]; then
  export MALLOC_MMAP_THRESHOLD_=2000000000 MALLOC_TRIM_THRESHOLD_=2000000000 MALLOC_TOP_PAD_=536870912
fi
make -s -C "$ROOT/bench" >/dev/null
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "seq_run.sh: /usr/bin/python3 cannot import torch; run scripts/install-bench-deps.sh" >&2
  exit 1
fi
EPOCHS="${SEQ_EPOCHS:-3}"

val() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }

for net in "${NETS[@]}"; do
  data="$OUTDIR/$net.bin"
  "$ROOT/bench/out/seq_bench" data "$net" "$data" "${SEQ_TRAIN_N:-20000}" "${SEQ_TEST_N:-4000}"
  "$ROOT/bench/out/seq_bench" train "$net" "$data" "$EPOCHS" > "$OUTDIR/$net.engine"
  /usr/bin/python3 "$ROOT/bench/seq_torch_bench.py" "$net" "$data" "$EPOCHS" > "$OUTDIR/$net.torch"
  for who in engine torch; do
    sed "s/^/$net $who /" "$OUTDIR/$net.$who"
  done
  for key in samples_per_s samples_per_cpu_s; do
    awk -v n="$net" -v k="$key" -v e="$(val "$OUTDIR/$net.engine" "$key")" \
        -v t="$(val "$OUTDIR/$net.torch" "$key")" 'BEGIN { printf "%s ratio %s %.3f\n", n, k, e / t }'
  done
  awk -v n="$net" -v e="$(val "$OUTDIR/$net.engine" test_acc)" -v t="$(val "$OUTDIR/$net.torch" test_acc)" \
      'BEGIN { printf "%s accuracy_gap_points %.2f\n", n, 100 * (e - t) }'
done
