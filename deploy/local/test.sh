#!/usr/bin/env bash
# The whole test suite: lint, types, unit + contract + end-to-end tests.
# Called by `make test` (the README's test command) and therefore by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=.venv/bin

$BIN/ruff check .
$BIN/mypy core ingestion indexing routing fusion generation monitoring ragline
$BIN/pytest -q -ra
