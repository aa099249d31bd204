#!/usr/bin/env bash
# averaging_plproxy.sh: what a round of fit's averaging_period costs over a
# PL/Proxy cluster (issue 17), on this machine.
#
#   bench/averaging_plproxy.sh [PERIOD [ROWS]]
#       PERIOD  averaging_period (default 8)
#       ROWS    rows of random 784-feature samples, 10 classes (default 4000)
#
# Starts three throwaway servers (coordinator, node1, node2) in a temporary
# directory, on unix sockets only (as bench/plproxy_bench.sh; as root it
# runs itself again as $BENCH_USER, default madlib_dl_test); needs the
# extension and postgresql-15-plproxy installed.  The MLP 784-256-128-10
# (Adam: a state of 2.8 MB) on 4 segments, 2 on each data node, one
# iteration of epochs=1, batch 128: fit on one server (parallel workers)
# and over the cluster, both with the period; prints fit's last NOTICE for
# each (the leader's averaging per round; the round's time beyond its
# slowest segment: for the cluster, the proxy call with its states) and
# whether the weights are the same bytes.
set -euo pipefail
PERIOD="${1:-8}"
ROWS="${2:-4000}"
if [ "$(id -u)" -eq 0 ]; then
  user="${BENCH_USER:-madlib_dl_test}"
  tmp="$(mktemp -d /tmp/averaging_plproxy.XXXXXX)"
  cp "$0" "$tmp/"
  chown -R "$user": "$tmp"
  exec runuser -u "$user" -- env PATH="$PATH" bash "$tmp/$(basename "$0")" "$PERIOD" "$ROWS"
fi
BIN="$(pg_config --bindir)"
DIR="$(mktemp -d /tmp/averaging_plproxy_data.XXXXXX)"
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
  cat >>"$DIR/$n/postgresql.conf" <<CONF
port = $((PORT0 + i))
listen_addresses = ''
unix_socket_directories = '$DIR'
max_worker_processes = 16
max_parallel_workers = 8
CONF
  "$BIN/pg_ctl" -D "$DIR/$n" -l "$DIR/$n.log" -w start >/dev/null
  i=$((i + 1))
done
conn() { echo "host=$DIR port=$((PORT0 + $1)) dbname=postgres user=bench"; }
nodeconn() { echo "host=$DIR port=$((PORT0 + $1)) dbname=postgres"; }
q() { "$BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$(conn "$1")" -c "SET client_min_messages = warning; $2"; }
for k in 0 1 2; do q $k "CREATE EXTENSION madlib_dl"; done
q 0 "CREATE EXTENSION plproxy; SELECT madlib_dl.plproxy_setup()" >/dev/null
dense() { printf '{"class_name": "Dense", "config": {"name": "%s", "units": %s, "activation": "%s"}}' "$1" "$2" "$3"; }
ARCH="{\"class_name\": \"Sequential\", \"config\": {\"name\": \"mlp\", \"layers\": [{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 784]}}, $(dense d1 256 relu), $(dense d2 128 relu), $(dense d3 10 softmax)]}}"
q 0 "SELECT setseed(0.5);
     CREATE TABLE samples AS SELECT g AS id, ARRAY(SELECT random()::real FROM generate_series(1, 784) WHERE g > 0) AS x,
            g % 10 AS y FROM generate_series(1, $ROWS) g;
     SELECT madlib_dl.training_preprocessor_dl('samples', 'p4', 'y', 'x', NULL, 1.0, NULL, '4');
     SELECT madlib_dl.load_keras_model('arch', '$ARCH');
     SELECT madlib_dl.plproxy_create_cluster('two', ARRAY['$(nodeconn 1)', '$(nodeconn 2)'], 4);
     CREATE USER MAPPING FOR CURRENT_USER SERVER two OPTIONS (user 'bench')" >/dev/null
run() {  # $1: the job's transport ('workers', or NULL: the cluster p4 is distributed over)
  "$BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$(conn 0)" -c "SELECT md5(r.model_weights) FROM madlib_dl._fit_run(
      madlib_dl._make_train_job('p4', 'x', 'y', ARRAY[(SELECT model_arch::text FROM arch)],
        ARRAY[\$\$loss='categorical_crossentropy', optimizer='Adam(lr=0.001)'\$\$], 1,
        fit_params => ARRAY['batch_size=128, epochs=1'], num_segments => 4, transport => $1,
        averaging_period => $PERIOD)) r" 2>"$DIR/notice"
  grep -o 'fit averaged.*' "$DIR/notice" >&2
}
echo "4 segments of $((ROWS / 4)) rows ($(( (ROWS / 4 + 127) / 128 )) mini-batches of 128 each), averaging_period $PERIOD"
printf 'one server (parallel workers):   ' >&2
one="$(run "'workers'")"
q 0 "SELECT madlib_dl.plproxy_distribute('p4', 'two')" >/dev/null
printf 'PL/Proxy, 2 data nodes:         ' >&2
px="$(run NULL)"
[ "$one" = "$px" ] && echo "same weights on both" || echo "DIFFERENT weights"
echo "bytes per round over the cluster: 4 states of $(q 0 "SELECT 96 + 12 * (madlib_dl._arch_info(model_arch)).n_params + 168 FROM arch") out and back"
