#!/usr/bin/env bash
# preprocess_bench.sh: training_preprocessor_dl against plain copies of the
# same data (issue 31, item 4; docs/performance.md "Preprocessing").
#
#   bench/preprocess_bench.sh [CONNINFO [RUNS]]   (default: dbname=madlib_dl_demo, 5)
#
# On Fashion-MNIST's training table (fashion_train, scripts/load_fashion_mnist.sh:
# 60,000 rows of x real[784], y integer), each run times, in one session:
#   copy      CREATE TABLE AS SELECT * FROM fashion_train: the issue's peer,
#             a copy of the (pglz-compressed) source rows
#   pack      training_preprocessor_dl('fashion_train', ..., 'y', 'x', NULL, 255.0)
#   rewrite   INSERT of the packed table's own buffers into a new table of
#             the same layout (STORAGE EXTERNAL): what writing the packed
#             bytes costs by itself, the floor of any packing that keeps them
#             uncompressed
# and prints the median of each over RUNS and the ratios pack/copy and
# pack/rewrite, plus the sizes of the source and of the packed table.  The
# tables are dropped at the end.  Never a test: nothing fails on a slow figure.
set -euo pipefail
CONN="${1:-dbname=madlib_dl_demo}"
RUNS="${2:-5}"
psqlc() { PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning" psql -X -v ON_ERROR_STOP=1 -q -d "$CONN" "$@"; }

psqlc -At -c "SELECT 1 FROM fashion_train LIMIT 1" >/dev/null 2>&1 || {
  echo "preprocess_bench.sh: no fashion_train table; run scripts/load_fashion_mnist.sh first" >&2
  exit 1
}

# ms of one statement, run alone in its transaction after the setup ones
timed() {
  psqlc -At -c "$1" >/dev/null
  psqlc -At <<SQL | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1
\\timing on
$2
SQL
}

copy=(); pack=(); rewrite=()
for r in $(seq 1 "$RUNS"); do
  copy+=("$(timed 'DROP TABLE IF EXISTS ppb_copy' 'CREATE TABLE ppb_copy AS SELECT * FROM fashion_train')")
  pack+=("$(timed 'DROP TABLE IF EXISTS ppb_packed, ppb_packed_summary' \
    "SELECT madlib_dl.training_preprocessor_dl('fashion_train', 'ppb_packed', 'y', 'x', NULL, 255.0)")")
  rewrite+=("$(timed 'DROP TABLE IF EXISTS ppb_rewrite; CREATE TABLE ppb_rewrite (LIKE ppb_packed INCLUDING STORAGE)' \
    'INSERT INTO ppb_rewrite SELECT * FROM ppb_packed')")
done

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
mc=$(median "${copy[@]}"); mp=$(median "${pack[@]}"); mr=$(median "${rewrite[@]}")
echo "runs: $RUNS (medians; every run: copy ${copy[*]} / pack ${pack[*]} / rewrite ${rewrite[*]} ms)"
psqlc -At -F ' ' -c "SELECT 'source bytes', pg_total_relation_size('fashion_train'), 'packed bytes', pg_total_relation_size('ppb_packed'), 'buffers', (SELECT count(*) FROM ppb_packed)"
awk -v c="$mc" -v p="$mp" -v w="$mr" 'BEGIN {
  printf "copy_ms %.1f\npack_ms %.1f\nrewrite_ms %.1f\n", c, p, w;
  printf "ratio pack/copy %.2f  (goal <= 3)\nratio pack/rewrite %.2f\n", p / c, p / w }'
psqlc -c 'DROP TABLE IF EXISTS ppb_copy, ppb_packed, ppb_packed_summary, ppb_rewrite'
