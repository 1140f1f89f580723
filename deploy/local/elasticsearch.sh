#!/usr/bin/env bash
# Elasticsearch 8.19 from Maven Central's integ-test distribution zip: single node on
# 127.0.0.1:59200 (transport 59300), security off, 512 MB heap, run as the system user
# ragline-es (Elasticsearch refuses root). No 9.x integ-test zip is published, and the
# Python client 9.x refuses an 8.x server: use elasticsearch>=8,<9 (or plain HTTP).
# That zip is the bare server plus x-pack core and security. Works: built-in analyzers
# (standard, whitespace, simple, keyword), custom analyzers on the standard tokenizer +
# lowercase, keyword/text/dense_vector fields, kNN (also combined with a query), bulk,
# highlight, terms aggregations. Missing (modules not in the zip): GET / (client.info()),
# painless scripts, _delete_by_query/_update_by_query/_reindex, ingest processors, the
# analysis-common tokenizers/filters (whitespace tokenizer, asciifolding, synonym), rrf.
# New indices are yellow (one replica, one node) unless number_of_replicas is 0.
# Usage: deploy/local/elasticsearch.sh up|down|status
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SVC_NAME=elasticsearch
PORT=$ES_PORT
DIR=$STATE/elasticsearch
ES_HOME=$DIR/elasticsearch-$ES_VERSION
CONF=$DIR/config
PIDFILE=$DIR/run/es.pid        # written by Elasticsearch itself (-p)
LAUNCHER_PID=$DIR/launcher.pid # the CLI, which starts the server and exits once it is up
LOG=$DIR/launcher.log
OS_USER=ragline-es
is_root || OS_USER=$(id -un)

svc_url() { echo "http://127.0.0.1:$ES_PORT"; }
svc_logs() { echo "$LOG $DIR/logs/ragline-local.log"; }
svc_ready() {
  curl -fsS --max-time 5 "http://127.0.0.1:$ES_PORT/_cluster/health" 2>/dev/null |
    grep -qE '"status":"(green|yellow)"'
}
svc_running() { pid_alive "$PIDFILE" org.elasticsearch || pid_alive "$LAUNCHER_PID" elasticsearch; }

svc_install() {
  need_java
  need curl curl
  need unzip unzip
  ensure_user "$OS_USER"
  install -d -m 0755 "$DIR"
  grant_traverse "$OS_USER" "$DIR"
  if [[ ! -x $ES_HOME/bin/elasticsearch ]]; then
    mvn_get "org.elasticsearch.distribution.integ-test-zip:elasticsearch:$ES_VERSION:zip" "$DIR/es.zip"
    rm -rf "$ES_HOME.tmp" && mkdir "$ES_HOME.tmp"
    unzip -q "$DIR/es.zip" -d "$ES_HOME.tmp"
    mv "$ES_HOME.tmp/elasticsearch-$ES_VERSION" "$ES_HOME"
    rm -rf "$ES_HOME.tmp" "$DIR/es.zip" # the zip stays cached in ~/.m2
  fi
  # Our own config dir (ES_PATH_CONF), so the unpacked distribution stays pristine.
  if [[ ! -s $CONF/elasticsearch.yml ]]; then
    rm -rf "$CONF" && cp -r "$ES_HOME/config" "$CONF"
    cat >"$CONF/elasticsearch.yml" <<YML
cluster.name: ragline-local
node.name: ragline-local
discovery.type: single-node
network.host: 127.0.0.1
http.port: $ES_PORT
transport.port: $ES_TRANSPORT_PORT
path.data: $DIR/data
path.logs: $DIR/logs
xpack.security.enabled: false
# a test node on a shared disk: never turn indices read-only because the disk looks full
cluster.routing.allocation.disk.threshold_enabled: false
YML
    printf -- '-Xms512m\n-Xmx512m\n' >"$CONF/jvm.options.d/heap.options"
  fi
  mkdir -p "$DIR/data" "$DIR/logs" "$DIR/tmp" "$DIR/run"
  if is_root; then chown -R "$OS_USER:" "$CONF" "$DIR/data" "$DIR/logs" "$DIR/tmp" "$DIR/run"; fi
}

svc_start() {
  : >"$LOG"
  as_user "$OS_USER"
  # -d: the CLI daemonizes the server (whose working directory is path.logs) and exits
  # once the node has started.
  bg_start "$LOG" "$LAUNCHER_PID" "${AS_USER[@]}" env ES_JAVA_HOME="$(java_home)" \
    ES_PATH_CONF="$CONF" ES_TMPDIR="$DIR/tmp" "$ES_HOME/bin/elasticsearch" -d -p "$PIDFILE"
}

svc_stop() {
  stop_pid "$PIDFILE" org.elasticsearch 60
  stop_pid "$LAUNCHER_PID" elasticsearch 10
}

svc_main "$@"
