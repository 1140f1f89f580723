#!/usr/bin/env bash
# Apache Tika server (tika-server-standard jar from Maven Central) on 127.0.0.1:59998.
# The server forks a child JVM that does the parsing; stopping the parent stops both.
# Usage: deploy/local/tika.sh up|down|status
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SVC_NAME=tika
PORT=$TIKA_PORT
DIR=$STATE/tika
JAR=$DIR/tika-server-standard-$TIKA_VERSION.jar
PIDFILE=$DIR/tika.pid
LOG=$DIR/tika.log

svc_url() { echo "http://127.0.0.1:$TIKA_PORT"; }
svc_logs() { echo "$LOG"; }
svc_ready() { curl -fsS --max-time 5 "http://127.0.0.1:$TIKA_PORT/version" 2>/dev/null | grep -q Tika; }
svc_running() { pid_alive "$PIDFILE" tika-server; }

svc_install() {
  need_java
  need curl curl
  [[ -s $JAR ]] || mvn_get "org.apache.tika:tika-server-standard:$TIKA_VERSION" "$JAR"
}

svc_start() {
  : >"$LOG"
  bg_start "$LOG" "$PIDFILE" "$(java_home)/bin/java" -Xmx256m -jar "$JAR" \
    --host 127.0.0.1 --port "$TIKA_PORT"
}

svc_stop() { stop_pid "$PIDFILE" tika-server 30; }

svc_main "$@"
