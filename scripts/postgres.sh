#!/usr/bin/env bash
# Throwaway PostgreSQL for tests: `source scripts/postgres.sh; pg_start; …; pg_stop`.
# Installs PostgreSQL from Debian when it is missing. Sets GAMECENTER_TEST_POSTGRES_URL.
set -euo pipefail

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

pg_install() {
  if [ -z "$(pg_bin)" ]; then
    echo "installing PostgreSQL from Debian…"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 postgresql >/dev/null
  fi
}

pg_start() {
  pg_install
  local bin port
  bin=$(pg_bin)
  # A free port unless one is given (a developer's own PostgreSQL may hold the usual ones).
  port=${GAMECENTER_TEST_POSTGRES_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
  PG_DIR=$(mktemp -d)
  chown postgres:postgres "$PG_DIR"
  chmod o+x "$(dirname "$PG_DIR")"
  runuser -u postgres -- "$bin/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 --no-locale --no-sync >/dev/null
  runuser -u postgres -- "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w \
    -o "-p $port -k $PG_DIR -c listen_addresses=127.0.0.1 -c max_connections=400 -c fsync=off" start >/dev/null
  runuser -u postgres -- "$bin/createdb" -h "$PG_DIR" -p "$port" -U postgres gamecenter
  export PG_DIR PG_PORT=$port
  export GAMECENTER_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/gamecenter"
  echo "PostgreSQL at $GAMECENTER_TEST_POSTGRES_URL"
}

pg_stop() {
  if [ -n "${PG_DIR:-}" ]; then
    runuser -u postgres -- "$(pg_bin)/pg_ctl" -D "$PG_DIR/data" -m fast stop >/dev/null 2>&1 || true
    rm -rf "$PG_DIR"
  fi
}
