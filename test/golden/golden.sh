#!/usr/bin/env bash
# golden.sh record|check [FILE]
#   The golden md5s of the weights of a fixed set of training runs
#   (test/golden/golden.sql) on every path: fit, fit_multiple (K<N, K=N,
#   K>N), the Greenplum aggregates on PostgreSQL, and PL/Proxy.  A
#   redesign of the drivers must give byte-identical weights: record
#   before it, check after, on the same machine (weights depend on the
#   CPU's kernels; FILE's first line names the CPU they were recorded on).
#   Runs in a throwaway cluster of the installed PostgreSQL (PG_CONFIG, or
#   pg_config on PATH) with madlib_dl installed; as root, the server runs
#   as postgres.  FILE defaults to test/golden/md5s.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
mode="${1:-check}"; file="${2:-test/golden/md5s.txt}"
bindir="$("${PG_CONFIG:-pg_config}" --bindir)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/madlib_dl_golden.XXXXXX")"; chmod 755 "$tmp"
run() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" -eq 0 ] && chown postgres "$tmp"
port=$(( 30000 + RANDOM % 20000 ))
run "$bindir/initdb" -A trust -U postgres -D "$tmp/data" >/dev/null
run "$bindir/pg_ctl" -D "$tmp/data" -l "$tmp/log" -w -o "-p $port -k $tmp -c listen_addresses='' -c shared_preload_libraries=madlib_dl -c max_worker_processes=16 -c max_parallel_workers=8" start >/dev/null
trap 'run "$bindir/pg_ctl" -D "$tmp/data" -m immediate stop >/dev/null 2>&1; rm -rf "$tmp"' EXIT
psql=("$bindir/psql" -X -h "$tmp" -p "$port" -U postgres)
for db in golden golden_n1 golden_n2; do
  "${psql[@]}" -q -d postgres -c "CREATE DATABASE $db" >/dev/null
  "${psql[@]}" -q -d "$db" -c "CREATE EXTENSION madlib_dl" >/dev/null
done
for db in golden_n1 golden_n2; do   # the nodes hold the distributed table in the same schema
  "${psql[@]}" -q -d "$db" -c "CREATE SCHEMA golden" >/dev/null
done
cpu="$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
out="$tmp/md5s.txt"
{ echo "# cpu: $cpu"
  "${psql[@]}" -d golden -v node1="host=$tmp port=$port dbname=golden_n1" \
    -v node2="host=$tmp port=$port dbname=golden_n2" -f test/golden/golden.sql 2>"$tmp/psql.err" \
    || { cat "$tmp/psql.err" >&2; exit 1; }
} > "$out"
case "$mode" in
  record) cp "$out" "$file"; echo "recorded $(grep -vc '^#' "$file") md5s in $file"; cat "$file";;
  check)
    if [ "$(head -1 "$file")" != "# cpu: $cpu" ]; then
      echo "golden.sh: $file was recorded on another CPU ($(head -1 "$file" | sed 's/# cpu: //')); record it here first"
      exit 2
    fi
    if diff -u "$file" "$out"; then echo "golden.sh: all $(grep -vc '^#' "$file") md5s equal"; else echo "golden.sh: weights differ"; exit 1; fi;;
  *) echo "usage: golden.sh record|check [FILE]"; exit 2;;
esac
