#!/usr/bin/env bash
# plproxy_bench.sh: fit_multiple over a PL/Proxy cluster (issue 8):
# 2 data nodes against 1 data node against one server, on this machine.
#
#   bench/plproxy_bench.sh [ITERATIONS [COPIES]]
#       ITERATIONS  fit_multiple iterations (default 10)
#       COPIES      the iris table repeated COPIES times (default 50: 7,500 rows)
#
# Starts three throwaway servers (coordinator, node1, node2) with initdb in
# a temporary directory, on unix sockets only; needs the extension and
# postgresql-15-plproxy installed (make install).  As root it runs itself
# again as $BENCH_USER (default madlib_dl_test; initdb refuses root).
# K = 4 models, N = 4 segments (distribution_rules '4'); M = 4 hops per
# iteration.  Prints, for each run: seconds, hops, milliseconds per hop,
# and for the cluster runs the bytes each hop sends and returns against
# K x N x state size; then the round trip of an empty proxy call.  This
# machine has 2 cores: every server shares them, so no run can show
# scale-out; the numbers show the overhead of the proxy path.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ITER="${1:-10}"
COPIES="${2:-50}"
if [ "$(id -u)" -eq 0 ]; then
  user="${BENCH_USER:-madlib_dl_test}"
  tmp="$(mktemp -d /tmp/plproxy_bench.XXXXXX)"
  cp "$0" "$ROOT/test/data/iris.sql" "$tmp/"
  chown -R "$user": "$tmp"
  exec runuser -u "$user" -- env PLPROXY_BENCH_IRIS="$tmp/iris.sql" bash "$tmp/$(basename "$0")" "$ITER" "$COPIES"
fi
IRIS="${PLPROXY_BENCH_IRIS:-$ROOT/test/data/iris.sql}"
BIN="$(pg_config --bindir)"
DIR="$(mktemp -d /tmp/plproxy_bench_data.XXXXXX)"
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
max_worker_processes = 16
max_parallel_workers = 8
cluster_name = '$n'
EOF
  "$BIN/pg_ctl" -D "$DIR/$n" -l "$DIR/$n.log" -w start >/dev/null
  i=$((i + 1))
done
conn() { echo "host=$DIR port=$((PORT0 + $1)) dbname=postgres user=bench"; }
nodeconn() { echo "host=$DIR port=$((PORT0 + $1)) dbname=postgres"; }   # user: the mapping
q() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$(conn "$1")" -c "SET client_min_messages = warning; $2"; }
for k in 0 1 2; do q $k "CREATE EXTENSION madlib_dl"; done
q 0 "CREATE EXTENSION plproxy; SELECT madlib_dl.plproxy_setup()" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d "$(conn 0)" -f "$IRIS" >/dev/null
ARCH='{"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "name": "in"}}, {"class_name": "Dense", "config": {"name": "d1", "units": 32, "activation": "relu"}}, {"class_name": "Dense", "config": {"name": "d2", "units": 3, "activation": "softmax"}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
q 0 "CREATE TABLE iris_big AS SELECT row_number() OVER () AS id, d.attributes, d.class_text
       FROM iris_data d, generate_series(1, $COPIES);
     SELECT madlib_dl.training_preprocessor_dl('iris_big', 'p4', 'class_text', 'attributes', NULL, 1.0, NULL, '4');
     SELECT madlib_dl.load_keras_model('arch', '$ARCH');
     SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1],
       ARRAY[\$\$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']\$\$,
             \$\$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['accuracy']\$\$],
       ARRAY['batch_size=16, epochs=1', 'batch_size=32, epochs=1'])" >/dev/null
q 0 "SELECT madlib_dl.plproxy_create_cluster('two', ARRAY['$(nodeconn 1)', '$(nodeconn 2)'], 4);
     SELECT madlib_dl.plproxy_create_cluster('one', ARRAY['$(nodeconn 1)'], 4);
     CREATE USER MAPPING FOR CURRENT_USER SERVER two OPTIONS (user 'bench');
     CREATE USER MAPPING FOR CURRENT_USER SERVER one OPTIONS (user 'bench')" >/dev/null

ARGS="(SELECT array_agg(m.mst_key ORDER BY m.mst_key) k, array_agg(a.model_arch::text ORDER BY m.mst_key) ar,
        array_agg(a.model_weights ORDER BY m.mst_key) w, array_agg(m.compile_params::text ORDER BY m.mst_key) c,
        array_agg(m.fit_params::text ORDER BY m.mst_key) f FROM mst m JOIN arch a USING (model_id)) x"
run() { # $1: the job's transport ('workers', or NULL: the cluster p4 is distributed over); prints seconds
  q 0 "CREATE TEMPORARY TABLE t0 AS SELECT clock_timestamp() AS t;
       CREATE TEMPORARY TABLE r AS SELECT r.* FROM $ARGS,
         madlib_dl._fit_multiple_run(madlib_dl._make_train_job('p4', 'attributes', 'class_text', x.ar, x.c,
             $ITER, fit_params => x.f, init_weights => x.w, mst_keys => x.k,
             metrics_compute_frequency => $ITER, num_segments => 4, transport => $1)) r;
       SELECT round(extract(epoch FROM clock_timestamp() - t)::numeric, 3) || ' ' || string_agg(md5(r.model_weights), ',' ORDER BY r.mst_key)
         FROM t0, r GROUP BY t"
}
K=$(q 0 "SELECT count(*) FROM mst")
HOPS=$((ITER * (K > 4 ? K : 4)))
# an Adam state: the 96-byte header (dl_blob.h), the float32 weights and two moment arrays of their size
STATE=$(q 0 "SELECT 96 + 12 * (madlib_dl._arch_info(model_arch)).n_params FROM arch")
SENT=$(q 0 "SELECT sum(octet_length(a.model_arch::text) + octet_length(m.compile_params) + coalesce(octet_length(m.fit_params), 0))
              FROM mst m JOIN arch a USING (model_id)")
echo "K=$K models, N=4 segments, $ITER iterations = $HOPS hops; $(q 0 'SELECT count(*) FROM p4') buffers of $(q 0 'SELECT count(*) FROM iris_big') rows"
echo "state size (Adam, 4-32-3 MLP): $STATE bytes"
read -r s1 md1 <<<"$(run "'workers'")"
echo "one server (4 virtual segments, parallel workers): ${s1} s, $(echo "$s1 * 1000 / $HOPS" | bc -l | xargs printf '%.1f') ms per hop"
for c in two one; do
  q 0 "SELECT madlib_dl.plproxy_distribute('p4', '$c')" >/dev/null
  read -r s md <<<"$(run NULL)"
  same=$([ "$md" = "$md1" ] && echo "byte-identical to one server" || echo "DIFFERENT weights")
  echo "PL/Proxy, $([ $c = two ] && echo 2 data nodes || echo 1 data node) (4 partitions): ${s} s, $(echo "$s * 1000 / $HOPS" | bc -l | xargs printf '%.1f') ms per hop; $same"
done
# bytes per hop (K >= N: N pairs each hop): out = state + arch + compile + fit per pair, back = state
echo "bytes per hop: sent $((4 * STATE + 4 * SENT / K)) (states $((4 * STATE)) + model definitions), returned $((4 * STATE)); per iteration $((2 * K * 4 * STATE)) state bytes = 2 x K x N x state"
echo "training metrics per computation: K x N = $((K * 4)) (segment, state) pairs out, $((K * 4)) {loss, metric, n} back"
q 0 "CREATE TEMPORARY TABLE w AS SELECT madlib_dl._px_ping('two', g % 4) FROM generate_series(1, 40) g"
echo "round trip of one empty proxy call (_px_ping, 400 calls, one partition each): $(q 0 "CREATE TEMPORARY TABLE t0 AS SELECT clock_timestamp() AS t;
     CREATE TEMPORARY TABLE w AS SELECT madlib_dl._px_ping('two', g % 4) FROM generate_series(1, 400) g;
     SELECT round((extract(epoch FROM clock_timestamp() - t) * 1000 / 400)::numeric, 3) FROM t0") ms"
