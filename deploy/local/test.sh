#!/usr/bin/env bash
# The whole test suite: lint, types, unit, contract, integration and end-to-end tests.
# Called by `make test` (the README's test command) and therefore by .ci/run.
#
# Starts the real services the integration tests talk to (deploy/local/services) and
# stops those it started. A service that cannot start is reported here and its tests are
# skipped with the reason (pytest -ra lists them); everything else still runs.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=.venv/bin

$BIN/ruff check . || exit 1
$BIN/mypy core ingestion indexing routing fusion generation monitoring connectors ragline || exit 1

already_up=$(deploy/local/services status 2>/dev/null | awk '$2 == "up" {print $1}')
if ! deploy/local/services up; then
  echo "WARNING: some services did not start; their integration tests will be skipped" >&2
fi
stop_started() {
  for name in postgres redis elasticsearch neo4j tika llm prometheus; do
    grep -qx "$name" <<<"$already_up" || deploy/local/services down "$name" >/dev/null 2>&1
  done
}
trap stop_started EXIT
eval "$(deploy/local/env.sh)"

$BIN/pytest -q -ra
