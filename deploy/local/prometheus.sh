#!/usr/bin/env bash
# Prometheus from Debian's prometheus package, on 127.0.0.1:59090, with the shipped config
# and alerting rules (deploy/prometheus/), scraping the Ragline API(s) listed in
# RAGLINE_PROMETHEUS_TARGETS (comma-separated host:port, default 127.0.0.1:8080, the port
# `ragline serve` uses by default). Data is kept 2 days under the state directory.
# Usage: deploy/local/prometheus.sh up|down|status
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SVC_NAME=prometheus
PORT=$PROMETHEUS_PORT
DIR=$STATE/prometheus
PIDFILE=$DIR/prometheus.pid
LOG=$DIR/prometheus.log
CONF_SRC=$LOCAL_DIR/../prometheus

svc_url() { echo "http://127.0.0.1:$PROMETHEUS_PORT"; }
svc_logs() { echo "$LOG"; }
svc_ready() { curl -fsS "http://127.0.0.1:$PROMETHEUS_PORT/-/ready" >/dev/null 2>&1; }
svc_running() { pid_alive "$PIDFILE" prometheus; }
# The package also installs a systemd unit on :9090; we run our own instance only.
svc_install() {
  need prometheus prometheus
  need curl curl
}

write_config() {
  mkdir -p "$DIR/data"
  cp "$CONF_SRC/prometheus.yml" "$CONF_SRC/ragline-alerts.yml" "$DIR/"
  local targets=${RAGLINE_PROMETHEUS_TARGETS:-127.0.0.1:8080} json="" t
  IFS=, read -ra list <<<"$targets"
  for t in "${list[@]}"; do json+="${json:+, }\"$t\""; done
  printf '[{"targets": [%s], "labels": {"service": "ragline"}}]\n' "$json" >"$DIR/targets.json"
}

svc_start() {
  write_config
  bg_start "$LOG" "$PIDFILE" prometheus \
    --config.file="$DIR/prometheus.yml" \
    --storage.tsdb.path="$DIR/data" \
    --storage.tsdb.retention.time=2d \
    --web.listen-address="127.0.0.1:$PROMETHEUS_PORT" \
    --web.enable-lifecycle
}

svc_stop() { stop_pid "$PIDFILE" prometheus 30; }

svc_main "$@"
