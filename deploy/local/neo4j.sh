#!/usr/bin/env bash
# Neo4j Community 5.26 (LTS, Java 17) embedded in a tiny launcher, neo4j/RaglineNeo4j.java,
# serving Bolt on 127.0.0.1:57687 with auth disabled (any user/password is accepted).
# The jars come from Maven Central (neo4j/pom.xml) and are copied into $STATE/neo4j/lib.
# Usage: deploy/local/neo4j.sh up|down|status
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SVC_NAME=neo4j
PORT=$NEO4J_BOLT_PORT
DIR=$STATE/neo4j
SRC=$LOCAL_DIR/neo4j
PIDFILE=$DIR/neo4j.pid
READY=$DIR/ready # written by the launcher once Bolt listens and RETURN 1 worked
LOG=$DIR/neo4j.log

svc_url() { echo "bolt://127.0.0.1:$NEO4J_BOLT_PORT"; }
svc_logs() { echo "$LOG $DIR/home/logs/debug.log"; }
svc_running() { pid_alive "$PIDFILE" RaglineNeo4j; }

# Ready: our launcher is up (it ran a query) and the port completes a Bolt handshake
# (magic 6060B017, then proposals 5.8..5.0 and 4.4; the server answers a non-zero version).
svc_ready() {
  local reply
  [[ -s $READY ]] && svc_running || return 1
  reply=$(
    exec 3<>"/dev/tcp/127.0.0.1/$NEO4J_BOLT_PORT" || exit 1
    printf '\x60\x60\xb0\x17\x00\x08\x08\x05\x00\x00\x04\x04\x00\x00\x00\x00\x00\x00\x00\x00' >&3
    timeout 5 head -c 4 <&3 | od -An -tx1 | tr -d ' \n'
  ) 2>/dev/null
  [[ -n $reply && $reply != 00000000 ]]
}

# Build once per (pom, launcher) content: copy the jars, compile the launcher.
svc_install() {
  need_java
  need javac openjdk-17-jdk-headless
  local stamp
  stamp=$(cat "$SRC/pom.xml" "$SRC/RaglineNeo4j.java" | sha256sum | cut -c1-16)
  [[ -s $DIR/build.stamp && $(<"$DIR/build.stamp") == "$stamp" ]] && return 0
  say "building the launcher (Maven dependencies + javac)"
  rm -rf "${DIR:?}/lib" "${DIR:?}/classes"
  mkdir -p "$DIR/lib" "$DIR/classes"
  if ! mvn -B -ntp -f "$SRC/pom.xml" "$DEP_PLUGIN:copy-dependencies" -DoutputDirectory="$DIR/lib" \
    >"$STATE/maven.log" 2>&1; then
    tail -n 30 "$STATE/maven.log" >&2
    die "maven could not resolve neo4j/pom.xml (full log: $STATE/maven.log)"
  fi
  "$(java_home)/bin/javac" -d "$DIR/classes" -cp "$DIR/lib/*" "$SRC/RaglineNeo4j.java"
  echo "$stamp" >"$DIR/build.stamp"
}

svc_start() {
  rm -f "$READY"
  : >"$LOG"
  bg_start "$LOG" "$PIDFILE" "$(java_home)/bin/java" -Xms256m -Xmx768m \
    -cp "$DIR/lib/*:$DIR/classes" RaglineNeo4j "$DIR/home" "$NEO4J_BOLT_PORT" "$READY"
}

svc_stop() { stop_pid "$PIDFILE" RaglineNeo4j 60; }

svc_main "$@"
