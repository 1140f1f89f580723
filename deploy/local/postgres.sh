#!/usr/bin/env bash
# PostgreSQL from Debian's packages, as a private cluster under $STATE/postgres
# (not the package's own cluster), listening on 127.0.0.1:55432.
# Database ragline, owned by role ragline (password ragline, may create databases), and the
# read-only login ragline_reader for the knowledge gateway's SQL sources.
# Usage: deploy/local/postgres.sh up|down|status
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SVC_NAME=postgres
PORT=$PG_PORT
DIR=$STATE/postgres
DATA=$DIR/data
RUN=$DIR/run # unix socket directory (the default /var/run/postgresql may not exist)
LOG=$DIR/postgres.log
# initdb refuses root, so the cluster belongs to the package's `postgres` user when we are root.
OS_USER=postgres
is_root || OS_USER=$(id -un)

pg_bin() {
  local d
  d=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)
  [[ -n $d ]] || return 1
  echo "$d"
}

svc_url() { echo "postgresql://$PG_USER:$PG_PASSWORD@127.0.0.1:$PG_PORT/$PG_DB"; }
svc_logs() { echo "$LOG"; }
svc_ready() {
  local bin
  bin=$(pg_bin) && "$bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT"
}
svc_running() { [[ -s $DATA/postmaster.pid ]] && pid_alive "$DATA/postmaster.pid" postgres; }

svc_install() {
  pg_bin >/dev/null || apt_install postgresql
  install -d -m 0755 "$DIR"
  grant_traverse "$OS_USER" "$DIR"
  [[ -s $DATA/PG_VERSION ]] && return 0
  say "creating cluster in $DATA"
  install -d -m 0700 "$DATA"
  install -d -m 0700 "$RUN" # the socket trusts whoever reaches it: only the cluster's owner
  if is_root; then chown "$OS_USER:" "$DIR" "$DATA" "$RUN"; fi
  # local socket: trust (for the setup below); TCP: password (scram)
  run_as "$OS_USER" "$(pg_bin)/initdb" -D "$DATA" -U postgres -E UTF8 --no-locale \
    --auth-local=trust --auth-host=scram-sha-256 >"$DIR/initdb.log" 2>&1 ||
    {
      cat "$DIR/initdb.log" >&2
      die "initdb failed"
    }
  cat >>"$DATA/postgresql.conf" <<EOF
# --- ragline deploy/local ---
port = $PG_PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$RUN'
EOF
}

svc_start() {
  if is_root; then touch "$LOG" && chown "$OS_USER:" "$LOG"; fi
  run_as "$OS_USER" "$(pg_bin)/pg_ctl" -D "$DATA" -l "$LOG" -w -t "$TIMEOUT" start >/dev/null ||
    true # svc_main's wait reports the failure with the log
}

svc_stop() { run_as "$OS_USER" "$(pg_bin)/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null; }

# Create role and database if missing (every `up`: cheap, and repairs a half-made setup).
svc_after_ready() {
  psql_su() {
    run_as "$OS_USER" "$(pg_bin)/psql" -h "$RUN" -p "$PG_PORT" -U postgres -d postgres \
      -v ON_ERROR_STOP=1 -qAtX "$@"
  }
  if [[ $(psql_su -c "SELECT count(*) FROM pg_roles WHERE rolname = '$PG_USER'") == 0 ]]; then
    psql_su -c "CREATE ROLE $PG_USER LOGIN CREATEDB PASSWORD '$PG_PASSWORD'"
  fi
  if [[ $(psql_su -c "SELECT count(*) FROM pg_database WHERE datname = '$PG_DB'") == 0 ]]; then
    psql_su -c "CREATE DATABASE $PG_DB OWNER $PG_USER"
  fi
  # The gateway's read-only role: no privileges of its own, every transaction read-only.
  if [[ $(psql_su -c "SELECT count(*) FROM pg_roles WHERE rolname = '$PG_READER'") == 0 ]]; then
    psql_su -c "CREATE ROLE $PG_READER LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT PASSWORD '$PG_READER_PASSWORD'"
    psql_su -c "ALTER ROLE $PG_READER SET default_transaction_read_only = on"
  fi
}

svc_main "$@"
