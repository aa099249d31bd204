#!/usr/bin/env bash
# plproxy_distribute.sh: how fast madlib_dl.plproxy_distribute moves a
# packed table to the data nodes of a PL/Proxy cluster (issue 14).
#
#   bench/plproxy_distribute.sh [ROWS [BUFFER_SIZE [RUNS]]]
#       ROWS         Fashion-MNIST training rows packed (default 60000)
#       BUFFER_SIZE  rows per buffer (default 1000: 3 MB buffers)
#       RUNS         distributions timed (default 3; the best is printed)
#
# Starts three throwaway servers (coordinator, node1, node2) on unix
# sockets in a temporary directory; needs the extension and
# postgresql-15-plproxy installed.  As root it runs itself again as
# $BENCH_USER (default madlib_dl_test).  The table is preprocessed on the
# coordinator for 4 segments (two per node) and distributed RUNS times
# (each replaces the nodes' rows).  Prints the seconds, buffers per
# second, source rows per second and MB per second (the packed bytes),
# and checks that every node's rows equal the coordinator's.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ROWS="${1:-60000}"
BS="${2:-1000}"
RUNS="${3:-3}"
if [ "$(id -u)" -eq 0 ]; then
  user="${BENCH_USER:-madlib_dl_test}"
  tmp="$(mktemp -d /tmp/plproxy_distribute.XXXXXX)"
  cp -r "$ROOT/bench" "$ROOT/scripts" "$tmp/"
  chown -R "$user": "$tmp"
  exec runuser -u "$user" -- env PATH="$PATH" bash "$tmp/bench/$(basename "$0")" "$ROWS" "$BS" "$RUNS"
fi
BIN="$(pg_config --bindir)"
DIR="$(mktemp -d /tmp/plproxy_distribute_data.XXXXXX)"
PORT0="${BENCH_PORT:-$((40000 + RANDOM % 20000))}"
cleanup() {
  for n in coord node1 node2; do
    [ -f "$DIR/$n/postmaster.pid" ] && "$BIN/pg_ctl" -D "$DIR/$n" -m immediate stop >/dev/null 2>&1 || true
  done
  rm -rf "$DIR"
}
trap cleanup EXIT
i=0
for n in coord node1 node2; do
  "$BIN/initdb" -D "$DIR/$n" -A trust -U bench >/dev/null
  cat >>"$DIR/$n/postgresql.conf" <<EOF
port = $((PORT0 + i))
listen_addresses = ''
unix_socket_directories = '$DIR'
cluster_name = '$n'
EOF
  "$BIN/pg_ctl" -D "$DIR/$n" -l "$DIR/$n.log" -w start >/dev/null
  i=$((i + 1))
done
conn() { echo "host=$DIR port=$((PORT0 + $1)) dbname=postgres user=bench"; }
nodeconn() { echo "host=$DIR port=$((PORT0 + $1)) dbname=postgres"; }
q() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$(conn "$1")" -c "SET client_min_messages = warning; $2"; }
for k in 0 1 2; do q $k "CREATE EXTENSION madlib_dl"; done
q 0 "CREATE EXTENSION plproxy; SELECT madlib_dl.plproxy_setup()" >/dev/null
"$ROOT/scripts/load_fashion_mnist.sh" "$(conn 0)" "$ROWS" 10 >/dev/null
q 0 "SELECT madlib_dl.training_preprocessor_dl('fashion_train', 'fp', 'y', 'x', $BS, 255, NULL, '4')" >/dev/null
q 0 "SELECT madlib_dl.plproxy_create_cluster('c', ARRAY['$(nodeconn 1)', '$(nodeconn 2)'], 4);
     CREATE USER MAPPING FOR CURRENT_USER SERVER c" >/dev/null
nbuf="$(q 0 "SELECT count(*) FROM fp")"
mb="$(q 0 "SELECT round(sum(octet_length(x) + octet_length(y))::numeric / 1048576, 1) FROM fp")"
best=""
for r in $(seq "$RUNS"); do
  t0="$(date +%s.%N)"
  q 0 "SELECT madlib_dl.plproxy_distribute('fp', 'c')" >/dev/null
  t1="$(date +%s.%N)"
  s="$(echo "$t1 - $t0" | bc -l)"
  if [ -z "$best" ] || [ "$(echo "$s < $best" | bc -l)" = 1 ]; then best="$s"; fi
done
rows_sql="SELECT coalesce(string_agg(__dist_key__ || ':' || md5(t::text), ',' ORDER BY buffer_id), '') FROM fp t WHERE __dist_key__ % 2 = \$k"
same=yes
for k in 0 1; do
  want="$(q 0 "${rows_sql//\$k/$k}")"
  got="$(q $((k + 1)) "${rows_sql//\$k/$k}")"
  [ "$want" = "$got" ] || same=no
done
printf 'rows %s buffers %s packed_mb %s seconds %.3f buffers_per_s %.1f rows_per_s %.0f mb_per_s %.1f identical %s\n' \
  "$ROWS" "$nbuf" "$mb" "$best" "$(echo "$nbuf / $best" | bc -l)" "$(echo "$ROWS / $best" | bc -l)" \
  "$(echo "$mb / $best" | bc -l)" "$same"
