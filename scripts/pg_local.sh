#!/usr/bin/env bash
# pg_local.sh: a private PostgreSQL 15 server kept in the project folder.
#
#   scripts/pg_local.sh start    create (first time) and start the server
#   scripts/pg_local.sh restart  restart it (start it if it is not running),
#                                e.g. after `make install` replaced madlib_dl.so
#   scripts/pg_local.sh stop     stop it
#   scripts/pg_local.sh status   say whether it runs, and where
#   scripts/pg_local.sh env      print the PGHOST/PGPORT/PGUSER/PGDATABASE exports
#   scripts/pg_local.sh psql ... run psql against it
#
# The data directory is .pgdata/ in the project (MADLIB_DL_PGDATA names
# another); the server listens on a Unix socket in /tmp, port 5499
# (MADLIB_DL_PGPORT), and on no TCP address; the database is
# madlib_dl_demo.  PostgreSQL refuses to run as root, so when root runs
# this script the server runs as the 'postgres' user; if that user cannot
# reach the project folder (a clone under /root, say), the data directory
# is /var/lib/postgresql/madlib_dl_demo instead, and `status` says so.
#
# The server preloads madlib_dl (shared_preload_libraries) once the
# extension is installed, so that the view madlib_dl.fit_progress shows
# running fits from any session; restart after reinstalling the extension.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PGBIN="$(pg_config --bindir)"
PKGLIB="$(pg_config --pkglibdir)"
PORT="${MADLIB_DL_PGPORT:-5499}"
SOCK=/tmp
DB=madlib_dl_demo

if [ "$(id -u)" -eq 0 ]; then
  RUNAS=(runuser -u postgres -- env -C /)   # postgres may not enter the cwd
  DBUSER=postgres
else
  RUNAS=()
  DBUSER="$(id -un)"
fi

if [ -n "${MADLIB_DL_PGDATA:-}" ]; then
  DATA="$MADLIB_DL_PGDATA"
elif [ "$(id -u)" -eq 0 ] && ! runuser -u postgres -- test -x "$ROOT" 2>/dev/null; then
  DATA=/var/lib/postgresql/madlib_dl_demo
else
  DATA="$ROOT/.pgdata"
fi
CONF="$DATA/postgresql.conf"

running() {
  "${RUNAS[@]}" "$PGBIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1
}

# Create the cluster the first time; keep its settings up to date.
prepare() {
  if [ ! -f "$DATA/PG_VERSION" ]; then
    mkdir -p "$DATA"
    if [ "$(id -u)" -eq 0 ]; then chown postgres: "$DATA"; fi
    chmod 700 "$DATA"
    "${RUNAS[@]}" "$PGBIN/initdb" -D "$DATA" -U "$DBUSER" --auth=trust >/dev/null
    "${RUNAS[@]}" tee -a "$CONF" >/dev/null <<CONF
# madlib_dl demo server (scripts/pg_local.sh)
listen_addresses = ''
unix_socket_directories = '$SOCK'
port = $PORT
max_worker_processes = 16
max_parallel_workers = 8
shared_buffers = 512MB
maintenance_work_mem = 256MB
CONF
  fi
  # Preload madlib_dl for madlib_dl.fit_progress, once it is installed (a
  # server told to preload a missing library does not start).
  if [ -f "$PKGLIB/madlib_dl.so" ] && ! grep -q "^shared_preload_libraries" "$CONF"; then
    echo "shared_preload_libraries = 'madlib_dl'" | "${RUNAS[@]}" tee -a "$CONF" >/dev/null
  fi
}

createdb_once() {
  "$PGBIN/psql" -X -h "$SOCK" -p "$PORT" -U "$DBUSER" -d postgres -Atqc \
    "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1 ||
    "$PGBIN/createdb" -h "$SOCK" -p "$PORT" -U "$DBUSER" "$DB"
}

start() {
  prepare
  if ! running; then
    "${RUNAS[@]}" "$PGBIN/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w start >/dev/null ||
      { echo "pg_local.sh: the server did not start; see $DATA/server.log" >&2; exit 1; }
  fi
  createdb_once
}

restart() {
  prepare
  if running; then
    "${RUNAS[@]}" "$PGBIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
  fi
  start
}

stop() {
  if [ -f "$DATA/PG_VERSION" ] && running; then
    "${RUNAS[@]}" "$PGBIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
  fi
}

case "${1:-}" in
  start) start; echo "server running: psql -h $SOCK -p $PORT -U $DBUSER $DB" ;;
  restart) restart; echo "server running: psql -h $SOCK -p $PORT -U $DBUSER $DB" ;;
  stop) stop ;;
  status)
    if running; then echo "running, data directory $DATA, socket $SOCK port $PORT, database $DB"
    else echo "not running, data directory $DATA"; exit 3; fi ;;
  env) echo "export PGHOST=$SOCK PGPORT=$PORT PGUSER=$DBUSER PGDATABASE=$DB" ;;
  psql) shift; exec "$PGBIN/psql" -h "$SOCK" -p "$PORT" -U "$DBUSER" -d "$DB" "$@" ;;
  *) echo "usage: $0 start|restart|stop|status|env|psql [args]" >&2; exit 2 ;;
esac
