#!/usr/bin/env bash
# Tesseract OCR from Debian (tesseract-ocr, with Simplified Chinese and English data), for
# the scanned-PDF path (`RAGLINE_INGEST__OCR=true`) and its tests. Not a server: `up`
# installs it when missing and reports it up once `tesseract --list-langs` shows both
# languages; `down` leaves the packages installed (nothing runs).
# Usage: deploy/local/tesseract.sh up|down|status
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SVC_NAME=tesseract
PORT="" # no port: nothing listens
PACKAGES=(tesseract-ocr tesseract-ocr-chi-sim tesseract-ocr-eng)

svc_url() { echo "$(command -v tesseract || echo tesseract) (chi_sim+eng)"; }
svc_logs() { :; }
svc_ready() {
  command -v tesseract >/dev/null || return 1
  local langs
  langs=$(tesseract --list-langs 2>/dev/null) || return 1
  grep -qx chi_sim <<<"$langs" && grep -qx eng <<<"$langs"
}
svc_running() { svc_ready; }
svc_install() { apt_install "${PACKAGES[@]}"; }
svc_start() { :; }
svc_stop() { :; }

svc_main "$@"
