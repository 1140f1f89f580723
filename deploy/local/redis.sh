#!/usr/bin/env bash
# Redis from Debian's redis-server package, on 127.0.0.1:56379, no persistence
# (a test cache: nothing is written to disk, `down` loses the data).
# Usage: deploy/local/redis.sh up|down|status
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SVC_NAME=redis
PORT=$REDIS_PORT
DIR=$STATE/redis
PIDFILE=$DIR/redis.pid
LOG=$DIR/redis.log

svc_url() { echo "redis://127.0.0.1:$REDIS_PORT/0"; }
svc_logs() { echo "$DIR/launch.log $LOG"; }
svc_ready() {
  command -v redis-cli >/dev/null &&
    [[ $(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null) == PONG ]]
}
svc_running() { pid_alive "$PIDFILE" redis-server; }
svc_install() { need redis-server redis-server; }

svc_start() {
  mkdir -p "$DIR"
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --daemonize yes --dir "$DIR" \
    --pidfile "$PIDFILE" --logfile "$LOG" --save "" --appendonly no >"$DIR/launch.log" 2>&1 || true
}

svc_stop() { stop_pid "$PIDFILE" redis-server 30; }

svc_main "$@"
