#!/usr/bin/env bash
# gpu_check.sh: the GPU check of issue 9, in one run on a GPU host
# (no PostgreSQL needed): builds the CUDA backend, its unit tests and
# the GPU bench, runs the tests, then the bench against PyTorch on the
# same GPU.  Sized to finish in well under 8 minutes on one H200.
#
#   scripts/gpu_check.sh            everything (build, tests, bench)
#   scripts/gpu_check.sh build      build only (works without a GPU)
#   scripts/gpu_check.sh test       build + unit tests
#
# Environment:
#   CUDA_HOME    (/usr/local/cuda)  nvcc, cuBLAS, cudart
#   GPU_ARCH     (sm_<compute_cap of GPU 0>, sm_90 without nvidia-smi)  nvcc -arch
#   FASHION_DIR  directory with the four gzipped Fashion-MNIST IDX files;
#                else /usr/share/datasets/fashion-mnist, bench/data/fashion-mnist,
#                shared/fashion-mnist; else synthetic data of the same shapes
#                (throughput is data-independent; test_acc is then meaningless)
#   BENCH_EPOCHS (3)  epochs per bench run, the first a warm-up
#   BENCH_TF32   (1)  also run both sides with TF32 allowed (0: fp32 only)
#   GPU_CHECK_BUDGET_S (400)  no bench run starts after this many seconds
#                (PyTorch gets what is left plus 40 s), so the whole check
#                stays under 8 minutes even when something is slow
#   GPU_CHECK_NO_OPENBLAS=1  use the fallback sgemm even when OpenBLAS is there
# Build products go to build/gpu/ (git-ignored).  Exit status: 1 when a
# unit test fails or something does not build; the bench never fails.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
MODE="${1:-all}"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
NVCC="$CUDA_HOME/bin/nvcc"
OUT="$ROOT/build/gpu"
EPOCHS="${BENCH_EPOCHS:-3}"
T_START=$(date +%s)
BUDGET_S="${GPU_CHECK_BUDGET_S:-400}"   # no new bench run starts after this many seconds
over_budget() { [ $(( $(date +%s) - T_START )) -gt "$BUDGET_S" ]; }
say() { echo "== gpu_check [$(( $(date +%s) - T_START ))s] $*"; }
fail() { echo "gpu_check: FAILED: $*" >&2; exit 1; }

[ -x "$NVCC" ] || fail "no nvcc at $NVCC (set CUDA_HOME)"
mkdir -p "$OUT/obj"

# ---------------------------------------------------------------- build
ARCH="${GPU_ARCH:-}"
if [ -z "$ARCH" ]; then
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
  ARCH=sm_${cap:-90}              # no GPU to probe (build-only host): Hopper
fi
say "building with $("$NVCC" --version | tail -1), -arch=$ARCH"

CC="${CC:-cc}"
CFLAGS="-std=gnu11 -O2 -g -fno-math-errno -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers"
CFLAGS="$CFLAGS -DDL_USE_CUDA -Iinclude -Isrc/engine -I$CUDA_HOME/include"
LIBS="-L$CUDA_HOME/lib64 -Wl,-rpath,$CUDA_HOME/lib64 -lcublas -lcudart -lstdc++ -lm"
EXTRA_SRCS=()
# The CPU reference engine calls cblas_sgemm: OpenBLAS when present, else
# the plain fallback in test/gpu/fallback (slow, but the references are small).
if [ "${GPU_CHECK_NO_OPENBLAS:-0}" != 1 ] && echo '#include <cblas.h>' | $CC -E - >/dev/null 2>&1 && \
   echo 'int main(void){return 0;}' | $CC -x c - -lopenblas -o "$OUT/obj/probe" 2>/dev/null; then
  LIBS="$LIBS -lopenblas"
  say "CPU reference sgemm: OpenBLAS"
else
  CFLAGS="$CFLAGS -Itest/gpu/fallback"
  EXTRA_SRCS+=(test/gpu/fallback/cblas_ref.c)
  say "CPU reference sgemm: test/gpu/fallback (no OpenBLAS here)"
fi

OBJS=()
# every engine file but the JSON reader (json-c) and the no-CUDA stub
for src in src/engine/*.c src/engine/cuda/*.c "${EXTRA_SRCS[@]}"; do
  case "$src" in */keras_json.c|*/cuda_stub.c) continue ;; esac
  obj="$OUT/obj/$(echo "$src" | tr / _).o"
  $CC $CFLAGS -c "$src" -o "$obj" || fail "compile $src"
  OBJS+=("$obj")
done
for src in src/engine/cuda/*.cu; do
  obj="$OUT/obj/$(echo "$src" | tr / _).o"
  "$NVCC" -std=c++17 -O3 -arch="$ARCH" -Iinclude -Isrc/engine -Xcompiler -Wall,-Wextra \
    -c "$src" -o "$obj" || fail "nvcc $src"
  OBJS+=("$obj")
done
$CC $CFLAGS -o "$OUT/test_gpu" test/gpu/test_gpu.c "${OBJS[@]}" $LIBS || fail "link test_gpu"
$CC $CFLAGS -o "$OUT/gpu_bench" bench/gpu_bench.c "${OBJS[@]}" $LIBS || fail "link gpu_bench"
say "built $OUT/test_gpu and $OUT/gpu_bench"
[ "$MODE" = build ] && exit 0

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

# ---------------------------------------------------------------- tests
say "GPU unit tests (each kernel against the CPU engine; whole model; reproducibility)"
timeout 150 "$OUT/test_gpu"
TEST_RC=$?
[ $TEST_RC -eq 0 ] && say "unit tests: PASS" || say "unit tests: FAIL (exit $TEST_RC)"
[ "$MODE" = test ] && exit $TEST_RC

# ---------------------------------------------------------------- data
RAW=synthetic
for d in "${FASHION_DIR:-}" /usr/share/datasets/fashion-mnist "$ROOT/bench/data/fashion-mnist" \
         "$ROOT/shared/fashion-mnist"; do
  [ -n "$d" ] && [ -f "$d/train-images-idx3-ubyte.gz" ] || continue
  mkdir -p "$OUT/data"
  python3 - "$d" "$OUT/data" <<'PY' && RAW="$OUT/data"
import gzip, os, shutil, sys
for n in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
          "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
    with gzip.open(os.path.join(sys.argv[1], n + ".gz"), "rb") as f, \
         open(os.path.join(sys.argv[2], n), "wb") as g:
        shutil.copyfileobj(f, g)
PY
  break
done
export FASHION_RAW="$RAW"
say "bench data: $RAW"

# ---------------------------------------------------------------- bench
CONFIGS=(mlp,sgd,128 mlp,sgd,512 mlp,adam,128 mlp,adam,512 cnn,sgd,128 cnn,sgd,512 cnn,adam,128 cnn,adam,512)
MODES=(0)
[ "${BENCH_TF32:-1}" = 1 ] && MODES=(0 1)
RES="$OUT/bench_results.txt"
: > "$RES"
HAVE_TORCH=1
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null || { HAVE_TORCH=0; say "PyTorch with CUDA not importable: engine side only"; }
for tf in "${MODES[@]}"; do
  mode=fp32; [ "$tf" = 1 ] && mode=tf32
  for c in "${CONFIGS[@]}"; do
    IFS=, read -r net opt batch <<<"$c"
    if over_budget; then say "time budget (${BUDGET_S}s) reached: skipping $mode $c"; continue; fi
    left=$(( BUDGET_S + 40 - ($(date +%s) - T_START) )); [ $left -gt 120 ] && left=120
    out=$(timeout $left "$OUT/gpu_bench" "$net" "$opt" "$batch" "$EPOCHS" "$tf" 2>"$OUT/gpu_bench.$net.$opt.$batch.$mode.log")
    sps=$(awk '$1=="samples_per_s"{print $2}' <<<"$out")
    acc=$(awk '$1=="test_acc"{print $2}' <<<"$out")
    echo "engine $mode $net $opt $batch ${sps:-ERROR} ${acc:-?}" | tee -a "$RES"
  done
  if [ $HAVE_TORCH = 1 ] && ! over_budget; then
    left=$(( BUDGET_S + 40 - ($(date +%s) - T_START) )); [ $left -lt 30 ] && left=30
    timeout $left python3 bench/gpu_bench.py "$EPOCHS" "$tf" "${CONFIGS[@]}" 2>"$OUT/torch.$mode.log" |
      while read -r who rest; do
        if [ "$who" = torch ]; then
          set -- $rest
          echo "torch $mode $1 $2 $3 $5 $9" | tee -a "$RES"
        else
          echo "$who $rest"
        fi
      done
  fi
done

say "results (samples/s; ratio = engine / PyTorch, goal >= 1)"
printf '%-5s %-4s %-5s %6s %14s %14s %7s %9s %9s\n' mode net opt batch engine torch ratio eng_acc torch_acc
awk '
  $1=="engine" { k=$2" "$3" "$4" "$5; e[k]=$6; ea[k]=$7; order[++n]=k }
  $1=="torch"  { k=$2" "$3" "$4" "$5; t[k]=$6; ta[k]=$7 }
  END { for (i=1;i<=n;i++) { k=order[i]; split(k,f," ");
          r = (t[k]+0 > 0 && e[k]+0 > 0) ? sprintf("%.2f", e[k]/t[k]) : "-";
          printf "%-5s %-4s %-5s %6s %14s %14s %7s %9s %9s\n", f[1], f[2], f[3], f[4], e[k], (k in t ? t[k] : "-"), r, ea[k], (k in ta ? ta[k] : "-") } }
' "$RES"
say "done; unit tests exit $TEST_RC; raw results in $RES, logs in $OUT"
exit $TEST_RC
