#!/usr/bin/env bash
# predict_bench.sh: rows/s of batch predict and evaluate beside a plain
# scan of the same table (issue 28): Fashion-MNIST's 60,000 training rows
# (scripts/load_fashion_mnist.sh), the MLP 784-256-128-10 of
# bench/engine_bench.c with seeded random weights (load_keras_model).
#
#   bench/predict_bench.sh [CONNINFO]        (default: $PGDATABASE)
#
# Prints "key value" lines, each the best of REPEAT (default 3) runs:
#   scan_rows_per_s        SELECT sum(cardinality(x)) FROM fashion_train:
#                          every row read and its array detoasted
#   copy_rows_per_s        CREATE TABLE AS SELECT id, x: the scan, written
#   predict_response_rows_per_s  predict_byom(..., 'response'): one output
#                          row per input row; row mode, parallel workers
#   predict_prob_rows_per_s      predict_byom(..., 'prob'): ten output rows
#                          per input row (MADlib's default)
#   predict_response_one_process_rows_per_s  the same with
#                          max_parallel_workers_per_gather = 0
#   predict_response_batch_1024_rows_per_s   batch_size => 1024: batches of
#                          1024 rows in one process
#   parallel_equals_one_process  the rows of a parallel and a one-process
#                          run are identical
#   workers                max_parallel_workers_per_gather of the session
# and the ratios predict / scan.  Needs fashion_train in the database.
set -euo pipefail
DB=${1:-${PGDATABASE:-postgres}}
REPEAT=${REPEAT:-3}
PSQL=(psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB")

"${PSQL[@]}" -c "SELECT 1 FROM fashion_train LIMIT 1" >/dev/null || {
    echo "fashion_train is missing: scripts/load_fashion_mnist.sh $DB" >&2; exit 1; }

"${PSQL[@]}" <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS pb_arch, pb_out, pb_copy, pb_packed, pb_packed_summary, pb_eval,
    pb_model, pb_model_summary;
SELECT setseed(0.28);
SELECT madlib_dl.load_keras_model('pb_arch',
  '{"class_name":"Sequential","config":{"name":"mlp","layers":[
     {"class_name":"InputLayer","config":{"batch_input_shape":[null,784],"name":"x"}},
     {"class_name":"Dense","config":{"name":"d1","units":256,"activation":"relu"}},
     {"class_name":"Dense","config":{"name":"d2","units":128,"activation":"relu"}},
     {"class_name":"Dense","config":{"name":"d3","units":10,"activation":"softmax"}}]}}'::json,
  madlib_dl.weights_from_array(ARRAY(SELECT ((random() - 0.5) * 0.1)::real
                                       FROM generate_series(1, 784*256+256+256*128+128+128*10+10))),
  'mlp');
SQL
best() {  # best rows/s of REPEAT runs of the SQL in $2 over $1 rows
    local rows=$1 sql=$2 best=0
    for _ in $(seq "$REPEAT"); do
        local s
        s=$("${PSQL[@]}" -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS pb_out, pb_copy, pb_eval" \
            -c "SELECT extract(epoch FROM clock_timestamp())" -c '\o /dev/null' -c "$sql" -c '\o' \
            -c "SELECT extract(epoch FROM clock_timestamp())" | grep -E '^[0-9.]+$' | tail -2 | paste -sd' ')
        s=$(echo "$s" | awk -v n="$rows" '{ printf "%.0f", n / ($2 - $1) }')
        [ "$s" -gt "$best" ] && best=$s
    done
    echo "$best"
}
N=$("${PSQL[@]}" -c "SELECT count(*) FROM fashion_train")
W=$("${PSQL[@]}" -c "SHOW max_parallel_workers_per_gather")
echo "rows $N"
echo "workers $W"
scan=$(best "$N" "SELECT sum(cardinality(x)) FROM fashion_train")
echo "scan_rows_per_s $scan"
copy=$(best "$N" "CREATE TABLE pb_copy AS SELECT id, x FROM fashion_train")
echo "copy_rows_per_s $copy"
P="SELECT madlib_dl.predict_byom('pb_arch', 1, 'fashion_train', 'id', 'x', 'pb_out'"
resp=$(best "$N" "$P, 'response', normalizing_const => 255)")
echo "predict_response_rows_per_s $resp"
prob=$(best "$N" "$P, 'prob', normalizing_const => 255)")
echo "predict_prob_rows_per_s $prob"
one=$(best "$N" "SET max_parallel_workers_per_gather = 0; $P, 'response', normalizing_const => 255)")
echo "predict_response_one_process_rows_per_s $one"
batched=$(best "$N" "$P, 'response', normalizing_const => 255, batch_size => 1024)")
echo "predict_response_batch_1024_rows_per_s $batched"
# the rows of a parallel run and of a one-process run: identical?
"${PSQL[@]}" <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS pb_par, pb_one, pb_out;
$P, 'prob', normalizing_const => 255);
ALTER TABLE pb_out RENAME TO pb_par;
SET max_parallel_workers_per_gather = 0;
$P, 'prob', normalizing_const => 255);
ALTER TABLE pb_out RENAME TO pb_one;
SELECT 'parallel_equals_one_process ' || (count(*) = 10 * $N AND bool_and(a.prob = b.prob AND a.rank = b.rank))
  FROM pb_par a JOIN pb_one b USING (id, class_value);
SQL
echo "predict_response_over_scan $(awk -v a="$resp" -v b="$scan" 'BEGIN { printf "%.3f", a / b }')"
echo "predict_prob_over_scan $(awk -v a="$prob" -v b="$scan" 'BEGIN { printf "%.3f", a / b }')"
echo "predict_response_over_copy $(awk -v a="$resp" -v b="$copy" 'BEGIN { printf "%.3f", a / b }')"
