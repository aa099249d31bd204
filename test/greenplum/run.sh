#!/usr/bin/env bash
# test/greenplum/run.sh: the script test of madlib_dl on a running
# Greenplum cluster (docs/greenplum.md), run by scripts/test.sh's
# greenplum step after the extension was built and installed there:
#
#   flow          test/greenplum/flow.sql in a fresh database: the whole
#                 flow (preprocessors, fit with averaging, evaluate, predict,
#                 predict_byom, warm start, streaming, fit_multiple, automl
#                 Hyperband and TPE, fit_progress, a sequence model, a
#                 multi-io model, MADlib's wrappers, the refusals);
#   same-answer   test/greenplum/same_answer.sql on Greenplum and, when a
#                 PostgreSQL server with madlib_dl installed answers to the
#                 PG* variables (scripts/test.sh runs this under
#                 pg_virtualenv), there too, with 3 virtual segments and
#                 Greenplum's packed rows: the same buffers on the same
#                 segments and byte-identical fit, averaging fit and
#                 fit_multiple weights;
#   segment-kill  a fit is running when one primary is stopped with
#                 pg_ctl stop -m immediate: the call fails, no output table
#                 exists, the primary is started again (its postmaster.opts)
#                 and, once the cluster answers, the next fit works;
#   drop          DROP EXTENSION leaves no object of the extension on the
#                 coordinator or on any segment (the empty schema stays, as
#                 on PostgreSQL);
#   upgrade       CREATE EXTENSION VERSION '0.1.0' then ALTER EXTENSION
#                 UPDATE, when 0.1.0 installs there (it does not on
#                 Greenplum 7: it says why and goes on; docs/greenplum.md).
#
# Environment: GP_HOST (127.0.0.1), GP_PORT (7000), GP_USER (gpadmin),
# GPHOME (/opt/gpdb).  Run from the top of the tree.  Prints "ok" or
# "not ok" per check; exit status 1 when any check failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
GPHOME="${GPHOME:-/opt/gpdb}"
GP=("$GPHOME/bin/psql" -X -q -h "${GP_HOST:-127.0.0.1}" -p "${GP_PORT:-7000}" -U "${GP_USER:-gpadmin}")
DB=madlib_dl_gp_test
TMP="$(mktemp -d "${TMPDIR:-/tmp}/madlib_dl_gp.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
failed=0
ok() { echo "ok   $*"; }
notok() { echo "not ok $*"; failed=1; }

fresh_db() {
  "${GP[@]}" -d postgres -v ON_ERROR_STOP=1 -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1" &&
    "${GP[@]}" -d "$1" -v ON_ERROR_STOP=1 -c 'CREATE EXTENSION madlib_dl'
}
# wait_up: until the cluster runs a query on every segment (60 s at most)
wait_up() {
  local i
  for i in $(seq 1 60); do
    "${GP[@]}" -d "$DB" -Atc "SELECT count(*) FROM gp_dist_random('gp_id')" >/dev/null 2>&1 && return 0
    sleep 1
  done
  return 1
}

# --- flow
t=$SECONDS
if fresh_db "$DB" >/dev/null && "${GP[@]}" -d "$DB" -f test/greenplum/flow.sql >"$TMP/flow.log" 2>&1; then
  grep -o 'NOTICE:  ok .*' "$TMP/flow.log" | sed 's/^NOTICE:  ok /     /'
  ok "flow ($((SECONDS - t)) s)"
else
  tail -n 30 "$TMP/flow.log"
  notok "flow"
fi

# --- same answer as PostgreSQL
# Both servers pack the data (same_answer_prep.sql); PostgreSQL's packed
# tables then get Greenplum's rows (the same buffers, buffer b on segment
# b % 3 on both), and both train (same_answer.sql).
t=$SECONDS
SAME=madlib_dl_gp_same
have_pg() {
  psql -X -q -d postgres -Atc 'SELECT 1' >/dev/null 2>&1 &&
    psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $SAME" -c "CREATE DATABASE $SAME" >/dev/null 2>&1 &&
    psql -X -q -d "$SAME" -c 'CREATE EXTENSION madlib_dl' >/dev/null 2>&1
}
copy_packed() {
  local tbl
  for tbl in train_p val_p; do
    psql -X -q -d "$SAME" -v ON_ERROR_STOP=1 -c "TRUNCATE $tbl" &&
      "${GP[@]}" -d "$SAME" -v ON_ERROR_STOP=1 -c "COPY $tbl TO STDOUT" |
        psql -X -q -d "$SAME" -v ON_ERROR_STOP=1 -c "COPY $tbl FROM STDIN" || return 1
    # Greenplum's __dist_key__ is the key that hashes to content b % 3
    # (they ascend with the content ids); here it is the virtual segment
    psql -X -q -d "$SAME" -v ON_ERROR_STOP=1 -c "UPDATE $tbl SET __dist_key__ = buffer_id % 3" || return 1
  done
}
if fresh_db "$SAME" >/dev/null &&
   "${GP[@]}" -d "$SAME" -f test/greenplum/same_answer_prep.sql >"$TMP/gp.err" 2>&1 &&
   "${GP[@]}" -d "$SAME" -f test/greenplum/same_answer.sql >"$TMP/gp.out" 2>"$TMP/gp.err"; then
  if have_pg; then
    if psql -X -q -d "$SAME" -f test/greenplum/same_answer_prep.sql >"$TMP/pg.err" 2>&1 &&
       copy_packed >>"$TMP/pg.err" 2>&1 &&
       psql -X -q -d "$SAME" -f test/greenplum/same_answer.sql >"$TMP/pg.out" 2>"$TMP/pg.err"; then
      if diff "$TMP/gp.out" "$TMP/pg.out" >"$TMP/same.diff"; then
        sed 's/^/     /' "$TMP/gp.out" | cut -c1-110
        ok "same answer: Greenplum's 3 segments and PostgreSQL's 3 virtual segments give the same weights ($((SECONDS - t)) s)"
      else
        cat "$TMP/same.diff"
        notok "same answer: Greenplum and PostgreSQL differ"
      fi
    else
      cat "$TMP/pg.err"
      notok "same answer: the PostgreSQL run failed"
    fi
    psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $SAME" >/dev/null 2>&1
  else
    sed 's/^/     /' "$TMP/gp.out" | cut -c1-110
    echo "     (no PostgreSQL server with madlib_dl answers to the PG* variables: Greenplum's side only)"
    ok "same answer: Greenplum run ($((SECONDS - t)) s)"
  fi
else
  cat "$TMP/gp.err"
  notok "same answer: the Greenplum run failed"
fi
"${GP[@]}" -d postgres -c "DROP DATABASE IF EXISTS $SAME" >/dev/null 2>&1

# --- a primary stopped during a fit
t=$SECONDS
read -r seg_dir seg_port < <("${GP[@]}" -d "$DB" -At -F ' ' -c \
  "SELECT datadir, port FROM gp_segment_configuration WHERE role = 'p' AND content = 1")
FIT="SELECT madlib_dl.fit('train_p', 'killed_m', 'arch', 1, \$\$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']\$\$, 'batch_size=8, epochs=1, seed=3', 300)"
if [ -z "${seg_dir:-}" ] || [ ! -d "$seg_dir" ]; then
  notok "segment kill: content 1's data directory (${seg_dir:-none}) is not on this host"
else
  owner="$(stat -c %U "$seg_dir")"
  as_owner() { runuser -u "$owner" -- env -i HOME="$(getent passwd "$owner" | cut -d: -f6)" PATH=/usr/bin:/bin \
                 bash -c "source $GPHOME/greenplum_path.sh && $*"; }
  "${GP[@]}" -d "$DB" -v ON_ERROR_STOP=1 -c "$FIT" >"$TMP/kill.log" 2>&1 &
  fit_pid=$!
  # stop the primary once the fit is training (its first progress line)
  for i in $(seq 1 100); do grep -q 'iteration 1 of' "$TMP/kill.log" && break; sleep 0.2; done
  as_owner "pg_ctl stop -m immediate -D '$seg_dir'" >/dev/null
  wait "$fit_pid"; fit_rc=$?
  if [ "$fit_rc" -ne 0 ] && grep -q ERROR "$TMP/kill.log"; then
    ok "segment kill: the fit failed: $(grep -m1 ERROR "$TMP/kill.log" | cut -c1-120)"
  else
    cat "$TMP/kill.log"
    notok "segment kill: the fit did not fail (rc $fit_rc)"
  fi
  # restart the primary as it was started (postmaster.opts)
  opts="$(sed -e 's/^[^ ]* //' "$seg_dir/postmaster.opts" | tr -d '"' | sed -e "s|-D $seg_dir||")"
  as_owner "pg_ctl start -w -t 120 -D '$seg_dir' -l '$seg_dir/log/madlib_dl_restart.log' -o '$opts'" >/dev/null
  if wait_up; then
    ok "segment kill: the primary restarted, the cluster answers ($((SECONDS - t)) s)"
  else
    notok "segment kill: the cluster did not come back"
  fi
  left="$("${GP[@]}" -d "$DB" -Atc "SELECT count(*) FROM pg_class WHERE relname LIKE 'killed_m%'
                                     UNION ALL SELECT count(*) FROM gp_dist_random('pg_class') WHERE relname LIKE 'killed_m%'" 2>&1 | paste -sd ' ')"
  if [ "$left" = "0 0" ]; then
    ok "segment kill: nothing half-written (no killed_m table on the coordinator or a segment)"
  else
    notok "segment kill: left behind: $left"
  fi
  if "${GP[@]}" -d "$DB" -v ON_ERROR_STOP=1 -c "${FIT/300/2}" >"$TMP/after.log" 2>&1 &&
     [ "$("${GP[@]}" -d "$DB" -Atc 'SELECT count(*) FROM killed_m')" = 1 ]; then
    ok "segment kill: the next fit works"
  else
    cat "$TMP/after.log"
    notok "segment kill: the next fit failed"
  fi
fi

# --- DROP EXTENSION leaves nothing, on the coordinator or the segments
# (but the empty schema madlib_dl, which CREATE EXTENSION made from the
# control file's schema and which is no member: as on PostgreSQL)
ns="$("${GP[@]}" -d "$DB" -Atc "SELECT oid FROM pg_namespace WHERE nspname = 'madlib_dl'")"
LEFT_SQL="SELECT (SELECT count(*) FROM pg_proc WHERE pronamespace = ${ns:-0})
               + (SELECT count(*) FROM gp_dist_random('pg_proc') WHERE pronamespace = ${ns:-0})
               + (SELECT count(*) FROM pg_class WHERE relnamespace = ${ns:-0})
               + (SELECT count(*) FROM gp_dist_random('pg_class') WHERE relnamespace = ${ns:-0})
               + (SELECT count(*) FROM pg_type WHERE typnamespace = ${ns:-0})
               + (SELECT count(*) FROM gp_dist_random('pg_type') WHERE typnamespace = ${ns:-0})
               + (SELECT count(*) FROM pg_event_trigger WHERE evtname LIKE 'madlib_dl%')
               + (SELECT count(*) FROM gp_dist_random('pg_event_trigger') WHERE evtname LIKE 'madlib_dl%')"
if [ -n "$ns" ] && "${GP[@]}" -d "$DB" -v ON_ERROR_STOP=1 -c 'DROP EXTENSION madlib_dl' >"$TMP/drop.log" 2>&1 &&
   [ "$("${GP[@]}" -d "$DB" -Atc "$LEFT_SQL")" = 0 ] &&
   "${GP[@]}" -d "$DB" -v ON_ERROR_STOP=1 -c 'DROP TABLE train_p' >/dev/null 2>&1; then
  ok "drop: DROP EXTENSION left no function, relation, type or event trigger on the coordinator or a segment; DROP TABLE works after it"
else
  cat "$TMP/drop.log"
  notok "drop: objects left: $("${GP[@]}" -d "$DB" -Atc "$LEFT_SQL" 2>&1)"
fi

# --- upgrade from 0.1.0
"${GP[@]}" -d "$DB" -c 'DROP SCHEMA IF EXISTS madlib_dl CASCADE' >/dev/null 2>&1
if "${GP[@]}" -d "$DB" -v ON_ERROR_STOP=1 -c "CREATE EXTENSION madlib_dl VERSION '0.1.0'" >"$TMP/old.log" 2>&1; then
  if "${GP[@]}" -d "$DB" -v ON_ERROR_STOP=1 -c 'ALTER EXTENSION madlib_dl UPDATE' >>"$TMP/old.log" 2>&1 &&
     [ "$("${GP[@]}" -d "$DB" -Atc "SELECT extversion FROM pg_extension WHERE extname = 'madlib_dl'")" = 0.2.0 ]; then
    ok "upgrade: 0.1.0 installed and ALTER EXTENSION UPDATE reached 0.2.0"
  else
    cat "$TMP/old.log"
    notok "upgrade: ALTER EXTENSION UPDATE from 0.1.0 failed"
  fi
else
  echo "     upgrade: 0.1.0 does not install on this server, so there is nothing to update from:"
  grep -m1 ERROR "$TMP/old.log" | sed 's/^/     /'
  ok "upgrade: not applicable (0.1.0 never installed on Greenplum 7; docs/greenplum.md)"
fi
"${GP[@]}" -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1

if [ "$failed" -ne 0 ]; then
  echo "greenplum: some checks failed"
  exit 1
fi
echo "greenplum: every check passed"
