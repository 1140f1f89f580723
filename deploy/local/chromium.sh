#!/usr/bin/env bash
# Chromium from Debian's chromium package, for the web console's browser tests
# (tests/web, driven by Playwright with executable_path=/usr/bin/chromium). Nothing runs in
# the background: `up` installs it, `status` says whether it is there.
# Usage: deploy/local/chromium.sh up|down|status
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SVC_NAME=chromium
PORT=0

svc_url() { command -v chromium || echo /usr/bin/chromium; }
svc_logs() { :; }
svc_ready() { command -v chromium >/dev/null 2>&1; }
svc_running() { svc_ready; }
svc_install() { need chromium chromium; }
svc_start() { :; }
svc_stop() { :; }

case ${1:-} in
  launch) svc_ready || svc_install ;;
  down) line installed ;;
  *) svc_main "$@" ;;
esac
