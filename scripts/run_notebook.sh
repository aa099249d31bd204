#!/usr/bin/env bash
# run_notebook.sh: execute a notebook headless (nbclient) against a server,
# failing if any cell fails.
#
#   scripts/run_notebook.sh [NOTEBOOK [EXECUTED_COPY]]
#
# NOTEBOOK defaults to docs/examples/fit_multiple_fashion_mnist.ipynb.  The
# server is the one the PG* variables name (PGHOST, PGPORT, PGUSER,
# PGDATABASE, PGPASSWORD), with madlib_dl installed; e.g. after
# scripts/demo.sh:  eval "$(scripts/pg_local.sh env)"; scripts/run_notebook.sh
# The notebook reads its size from MADLIB_DL_NB_ROWS (training images,
# default all 60,000), MADLIB_DL_NB_TEST_ROWS and MADLIB_DL_NB_ITERATIONS
# (default 5); the tests use MADLIB_DL_NB_ROWS=2000 MADLIB_DL_NB_ITERATIONS=2.
# The executed notebook, with its outputs and figures, is written to
# EXECUTED_COPY (default: a file in $TMPDIR, whose name is printed).
# Needs Debian's python3-nbclient, python3-nbformat, python3-ipykernel,
# python3-psycopg2, python3-pandas and python3-matplotlib
# (scripts/install-deps.sh), and runs them with /usr/bin/python3.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
NB="${1:-docs/examples/fit_multiple_fashion_mnist.ipynb}"
OUT="${2:-}"
[ -r "$NB" ] || { echo "run_notebook.sh: $NB not found" >&2; exit 2; }
TMP="$(mktemp -d "${TMPDIR:-/tmp}/madlib_dl_nb.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
[ -n "$OUT" ] || OUT="${TMPDIR:-/tmp}/$(basename "$NB" .ipynb).executed.$$.ipynb"
# Jupyter and matplotlib want writable folders; HOME may not be one.
export JUPYTER_RUNTIME_DIR="$TMP/runtime" MPLCONFIGDIR="$TMP/mpl" IPYTHONDIR="$TMP/ipython"
export MADLIB_DL_ROOT="$ROOT"
# ipykernel 6 on Python 3.11 warns about frozen modules (debugger only).
export PYDEVD_DISABLE_FILE_VALIDATION=1
PYTHON="${PYTHON:-/usr/bin/python3}"
start=$(date +%s)
"$PYTHON" - "$NB" "$OUT" "$(dirname "$NB")" <<'PY'
import sys
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

path, out, cwd = sys.argv[1], sys.argv[2], sys.argv[3]
nb = nbformat.read(path, as_version=4)
client = NotebookClient(nb, timeout=3600, kernel_name="python3",
                        resources={"metadata": {"path": cwd}})
failed = None
try:
    client.execute()
except CellExecutionError as e:
    failed = e
finally:
    nbformat.write(nb, out)
n = sum(1 for c in nb.cells if c.cell_type == "code")
if failed is not None:
    print(str(failed), file=sys.stderr)
    print("run_notebook.sh: a cell failed; executed copy: %s" % out, file=sys.stderr)
    sys.exit(1)
print("run_notebook.sh: %s: all %d code cells ran; executed copy: %s" % (path, n, out))
PY
echo "run_notebook.sh: $(( $(date +%s) - start )) s"
