#!/usr/bin/env bash
# pg_local.sh: a private PostgreSQL 15 server kept in the project folder.
#
#   scripts/pg_local.sh start    create (first time) and start the server
#   scripts/pg_local.sh stop     stop it
#   scripts/pg_local.sh env      print the PGHOST/PGPORT/PGUSER/PGDATABASE exports
#   scripts/pg_local.sh psql ... run psql against it
#
# The data directory is .pgdata/ in the project; the server listens on a Unix
# socket in /tmp and on no TCP address.  PostgreSQL refuses to run as root,
# so when root runs this script the server runs as the 'postgres' user.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PGBIN="$(pg_config --bindir)"
DATA="${MADLIB_DL_PGDATA:-$ROOT/.pgdata}"
PORT="${MADLIB_DL_PGPORT:-5499}"
SOCK=/tmp
DB=madlib_dl_demo

if [ "$(id -u)" -eq 0 ]; then
  RUNAS=(runuser -u postgres --)
  DBUSER=postgres
else
  RUNAS=()
  DBUSER="$(id -un)"
fi

start() {
  if [ ! -f "$DATA/PG_VERSION" ]; then
    mkdir -p "$DATA"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$DATA"
    chmod 700 "$DATA"
    "${RUNAS[@]}" "$PGBIN/initdb" -D "$DATA" -U "$DBUSER" --auth=trust >/dev/null
    cat >> "$DATA/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$SOCK'
port = $PORT
max_worker_processes = 16
max_parallel_workers = 8
shared_buffers = 512MB
maintenance_work_mem = 256MB
CONF
  fi
  if ! "${RUNAS[@]}" "$PGBIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    "${RUNAS[@]}" "$PGBIN/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w start >/dev/null
  fi
  "$PGBIN/psql" -h "$SOCK" -p "$PORT" -U "$DBUSER" -d postgres -Atqc \
    "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1 ||
    "$PGBIN/createdb" -h "$SOCK" -p "$PORT" -U "$DBUSER" "$DB"
}

stop() {
  [ -f "$DATA/PG_VERSION" ] && "${RUNAS[@]}" "$PGBIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null 2>&1 || true
}

case "${1:-}" in
  start) start; echo "server running: psql -h $SOCK -p $PORT -U $DBUSER $DB" ;;
  stop) stop ;;
  env) echo "export PGHOST=$SOCK PGPORT=$PORT PGUSER=$DBUSER PGDATABASE=$DB" ;;
  psql) shift; exec "$PGBIN/psql" -h "$SOCK" -p "$PORT" -U "$DBUSER" -d "$DB" "$@" ;;
  *) echo "usage: $0 start|stop|env|psql [args]" >&2; exit 2 ;;
esac
