#!/usr/bin/env bash
# greenplum_hop.sh: fit_multiple on a Greenplum cluster's segments against
# PostgreSQL's virtual segments on the same machine (issue 26).
#
#   bench/greenplum_hop.sh [ITERATIONS]      (default 3)
#
# Greenplum: the coordinator at GP_HOST:GP_PORT as GP_USER (127.0.0.1:7000,
# gpadmin; psql from GPHOME, /opt/gpdb); PostgreSQL: the PG* variables.
# The extension must be installed on both.  Data: 3,000 rows of 64
# features and 4 classes, computed from the row number (the same table on
# both servers), buffers of 100 rows; 4 configurations of an MLP
# 64-32-4 (Adam and SGD, batch 16 and 32), seeds fixed.
# Runs, each timed by psql (\timing) around the one call:
#   GP3   fit_multiple on the 3 Greenplum segments (madlib_dl.backend auto)
#   GP3b  the same with madlib_dl.backend 'openblas'
#   PG3   the same, PostgreSQL with 3 virtual segments, on Greenplum's
#         packed rows (same buffers, same placement): weights compared
#   PG2   PostgreSQL with 2 virtual segments (its own packing)
# and prints the wall times, the hop rounds (iterations x max(models,
# segments)) and the time per round, against MADlib's about 1 s per hop,
# and what a Greenplum round is made of: the segments' training time
# (fit_multiple's info table), one dispatch of an empty query to every
# segment (measured), and the rest (the round table's writes and reads of
# the model states, planning, the aggregate's set-up).
set -euo pipefail
cd "$(dirname "$0")/.."
ITER="${1:-3}"
GPHOME="${GPHOME:-/opt/gpdb}"
GP=("$GPHOME/bin/psql" -X -q -v ON_ERROR_STOP=1 -h "${GP_HOST:-127.0.0.1}" -p "${GP_PORT:-7000}" -U "${GP_USER:-gpadmin}")
PG=(psql -X -q -v ON_ERROR_STOP=1)
DB=madlib_dl_gp_bench
for s in GP PG; do
  if [ $s = GP ]; then c=("${GP[@]}"); else c=("${PG[@]}"); fi
  "${c[@]}" -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null
  "${c[@]}" -d "$DB" -c 'CREATE EXTENSION madlib_dl' >/dev/null
done
SETUP=$(cat <<'SQL'
SET client_min_messages = warning;
CREATE TABLE hb_data AS
SELECT g AS id,
       ARRAY(SELECT (sin(g * 0.37 + k * 1.3) + cos(k * (g % 4 + 1) * 0.21))::real FROM generate_series(1, 64) k) AS x,
       g % 4 AS y
  FROM generate_series(1, 3000) g;
SELECT madlib_dl.load_keras_model('hb_arch', '{"class_name": "Sequential", "config": {"layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 64]}}, {"class_name": "Dense", "config": {"units": 32, "activation": "relu"}}, {"class_name": "Dense", "config": {"units": 4, "activation": "softmax"}}]}}');
SELECT madlib_dl.load_model_selection_table('hb_arch', 'hb_mst', ARRAY[1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['accuracy']$$],
    ARRAY['batch_size=16, epochs=1, seed=5', 'batch_size=32, epochs=1, seed=6']);
SQL
)
"${GP[@]}" -d "$DB" -c "$SETUP" -c "SELECT madlib_dl.training_preprocessor_dl('hb_data', 'hb_p3', 'y', 'x', 100, 1.0, NULL, '3')" >/dev/null
"${PG[@]}" -d "$DB" -c "$SETUP" -c "SELECT madlib_dl.training_preprocessor_dl('hb_data', 'hb_p3', 'y', 'x', 100, 1.0, NULL, '3')" \
  -c "SELECT madlib_dl.training_preprocessor_dl('hb_data', 'hb_p2', 'y', 'x', 100, 1.0, NULL, '2')" >/dev/null
# PG3 trains on Greenplum's rows (the preprocessors' shuffle hashes ctids)
"${PG[@]}" -d "$DB" -c 'TRUNCATE hb_p3'
"${GP[@]}" -d "$DB" -c 'COPY hb_p3 TO STDOUT' | "${PG[@]}" -d "$DB" -c 'COPY hb_p3 FROM STDIN'
"${PG[@]}" -d "$DB" -c 'UPDATE hb_p3 SET __dist_key__ = buffer_id % 3' >/dev/null

timed() {  # server out packed [backend]: seconds of the fit_multiple call
  local c
  if [ "$1" = GP ]; then c=("${GP[@]}"); else c=("${PG[@]}"); fi
  "${c[@]}" -d "$DB" -At -c 'SET client_min_messages = warning' \
    -c "SET madlib_dl.backend = '${4:-auto}'" -c '\timing on' \
    -c "SELECT madlib_dl.fit_multiple('$3', '$2', 'hb_mst', $ITER)" |
    sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | awk '{printf "%.2f", $1 / 1000}'
}
t_gp=$(timed GP hb_gp3 hb_p3)
t_gpb=$(timed GP hb_gp3b hb_p3 openblas)
t_pg3=$(timed PG hb_pg3 hb_p3)
t_pg2=$(timed PG hb_pg2 hb_p2)
w_gp=$("${GP[@]}" -d "$DB" -At -c "SELECT string_agg(md5(model_weights), ' ' ORDER BY mst_key) FROM hb_gp3")
w_pg3=$("${PG[@]}" -d "$DB" -At -c "SELECT string_agg(md5(model_weights), ' ' ORDER BY mst_key) FROM hb_pg3")
w_pg2=$("${PG[@]}" -d "$DB" -At -c "SELECT string_agg(md5(model_weights), ' ' ORDER BY mst_key) FROM hb_pg2")
train_gp=$("${GP[@]}" -d "$DB" -At -c "SELECT round(sum(training_seconds)::numeric, 2) FROM hb_gp3_info")
train_gpb=$("${GP[@]}" -d "$DB" -At -c "SELECT round(sum(training_seconds)::numeric, 3) FROM hb_gp3b_info")
w_gpb=$("${GP[@]}" -d "$DB" -At -c "SELECT string_agg(md5(model_weights), ' ' ORDER BY mst_key) FROM hb_gp3b")
state_bytes=$("${GP[@]}" -d "$DB" -At -c "SELECT max(length(model_weights)) FROM hb_gp3")
# one dispatch of an empty query to every segment, the mean of 20
q=(-c '\timing on')
for i in $(seq 1 20); do q+=(-c "SELECT count(*) FROM gp_dist_random('gp_id')"); done
dispatch_ms=$("${GP[@]}" -d "$DB" -At "${q[@]}" |
  sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | awk '{s += $1; n++} END {printf "%.1f", s / n}')
nseg=3; models=4
rounds=$((ITER * (models > nseg ? models : nseg)))
echo "fit_multiple: $models configurations x $ITER iterations, 3,000 rows, MLP 64-32-4 ($state_bytes bytes of weights)"
printf '%-42s %8s %8s %10s\n' run seconds rounds "s/round"
printf '%-42s %8s %8s %10.3f\n' "GP3  Greenplum, 3 segments" "$t_gp" "$rounds" "$(echo "$t_gp / $rounds" | bc -l)"
printf '%-42s %8s %8s %10.3f\n' "GP3b Greenplum, 3 segments, backend openblas" "$t_gpb" "$rounds" "$(echo "$t_gpb / $rounds" | bc -l)"
printf '%-42s %8s %8s %10.3f\n' "PG3  PostgreSQL, 3 virtual segments" "$t_pg3" "$rounds" "$(echo "$t_pg3 / $rounds" | bc -l)"
r2=$((ITER * (models > 2 ? models : 2)))
printf '%-42s %8s %8s %10.3f\n' "PG2  PostgreSQL, 2 virtual segments" "$t_pg2" "$r2" "$(echo "$t_pg2 / $r2" | bc -l)"
echo "MADlib (docs: about 1 s per hop on Greenplum): GP3 round / 1 s = $(printf '%.2f' "$(echo "$t_gp / $rounds" | bc -l)")"
echo "GP3 / PG3 wall time: $(printf '%.1f' "$(echo "$t_gp / $t_pg3" | bc -l)")x"
if [ "$w_gp" = "$w_pg3" ]; then echo "weights GP3 = PG3: byte-identical ($w_gp)"; else echo "weights GP3 <> PG3: $w_gp / $w_pg3"; fi
if [ "$w_gp" = "$w_pg2" ]; then echo "weights PG2 = GP3"; else echo "weights PG2 differ from GP3, as expected: another placement (2 partitions)"; fi
per_round=$(echo "$t_gp / $rounds" | bc -l)
train_round=$(echo "$train_gp / $rounds / $nseg" | bc -l)
if [ "$w_gp" = "$w_gpb" ]; then echo "weights GP3b = GP3 (the backend does not change the bytes)"; else echo "weights GP3b differ from GP3 (another backend's kernels)"; fi
echo "a Greenplum round ($(printf '%.3f' "$per_round") s):"
echo "  training on a segment (info.training_seconds / rounds / segments): $(printf '%.3f' "$train_round") s"
echo "  dispatch of one query to every segment (empty query, mean of 20): $(printf '%.3f' "$(echo "$dispatch_ms / 1000" | bc -l)") s"
echo "  the rest (state writes and reads through the round table, planning, set-up): $(printf '%.3f' "$(echo "$per_round - $train_round - $dispatch_ms / 1000" | bc -l)") s"
pb=$(echo "$t_gpb / $rounds" | bc -l); tb=$(echo "$train_gpb / $rounds / $nseg" | bc -l)
echo "the same round with backend openblas ($(printf '%.3f' "$pb") s): training $(printf '%.4f' "$tb") s, the rest $(printf '%.3f' "$(echo "$pb - $tb" | bc -l)") s"
echo "load average while measuring: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
for s in GP PG; do
  if [ $s = GP ]; then c=("${GP[@]}"); else c=("${PG[@]}"); fi
  "${c[@]}" -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null
done
