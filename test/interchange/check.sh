#!/usr/bin/env bash
# check.sh: ONNX export and import checked against real runtimes (the
# interchange step of scripts/test.sh; docs/interchange.md).
#
#   1. test/unit/test_onnx exports every model of the graph and sequence
#      fixtures and the five PyTorch models it imports (after import ->
#      export -> import), writing each with its inputs and madlib_dl's
#      predictions into a scratch directory
#   2. onnx.checker.check_model (Debian's python3-onnx, full check) passes
#      on every exported model
#   3. ONNX Runtime (onnxruntime-node from npm, CPU binaries from the
#      package, installed with --ignore-scripts into
#      test/interchange/node_modules, which git ignores) runs every
#      exported model within 1e-5 of madlib_dl, and every PyTorch model
#      of test/unit/fixtures/onnx_*.onnx within 1e-5 of PyTorch
# Needs make unit-build's prerequisites, python3-onnx, node and npm
# (scripts/install-deps.sh).  About half a minute.
set -euo pipefail
cd "$(dirname "$0")/../.."
ORT_VERSION=1.30.0
DIR=test/interchange
if [ ! -f "$DIR/node_modules/onnxruntime-node/package.json" ] ||
   ! grep -q "\"version\": \"$ORT_VERSION\"" "$DIR/node_modules/onnxruntime-node/package.json"; then
  echo "check.sh: npm install onnxruntime-node@$ORT_VERSION (into $DIR/node_modules)"
  npm install --prefix "$DIR" --ignore-scripts --no-audit --no-fund --no-save \
    "onnxruntime-node@$ORT_VERSION" > /dev/null
fi
make -s build/unit/test_onnx
OUT="$(mktemp -d "${TMPDIR:-/tmp}/madlib_dl_onnx.XXXXXX")"
TORCH="$OUT/torch"
mkdir -p "$OUT/export" "$TORCH"
trap 'rm -rf "$OUT"' EXIT
ONNX_DUMP_DIR="$OUT/export" OPENBLAS_NUM_THREADS=1 TEST_FIXTURES=test/unit/fixtures \
  build/unit/test_onnx | grep -E "^    onnx:|PyTorch ->"
cp test/unit/fixtures/onnx_*.onnx test/unit/fixtures/onnx_*.json "$TORCH/"
status=0
echo "== onnx.checker on the exported models"
/usr/bin/python3 "$DIR/onnx_checker.py" "$OUT/export" || status=1
echo "== ONNX Runtime against madlib_dl (exported models)"
if NODE_PATH="$DIR/node_modules" node "$DIR/ort_check.js" "$OUT/export" > "$OUT/ort.log" 2>&1; then
  tail -1 "$OUT/ort.log"
else
  cat "$OUT/ort.log"
  status=1
fi
echo "== ONNX Runtime against PyTorch (the models load_onnx_model's tests import)"
NODE_PATH="$DIR/node_modules" node "$DIR/ort_check.js" "$TORCH" || status=1
exit $status
