#!/usr/bin/env bash
# Prints `export` lines with the URLs of the services that deploy/local/services starts:
#   eval "$(deploy/local/env.sh)"
# It only prints; it neither checks nor starts anything.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cat <<EOF
export RAGLINE_TEST_PG_URL='postgresql+psycopg://$PG_USER:$PG_PASSWORD@127.0.0.1:$PG_PORT/$PG_DB'
export RAGLINE_TEST_PG_READER_URL='postgresql+psycopg://$PG_READER:$PG_READER_PASSWORD@127.0.0.1:$PG_PORT/$PG_DB'
export RAGLINE_TEST_REDIS_URL='redis://127.0.0.1:$REDIS_PORT/0'
export RAGLINE_TEST_ES_URL='http://127.0.0.1:$ES_PORT'
export RAGLINE_TEST_NEO4J_URL='bolt://127.0.0.1:$NEO4J_BOLT_PORT'
export RAGLINE_TEST_NEO4J_USER='$NEO4J_USER'
export RAGLINE_TEST_NEO4J_PASSWORD='$NEO4J_PASSWORD'
export RAGLINE_TEST_TIKA_URL='http://127.0.0.1:$TIKA_PORT'
export RAGLINE_TEST_LLM_URL='http://127.0.0.1:$LLM_PORT/v1'
export RAGLINE_TEST_LLM_MODEL='$LLM_MODEL_NAME'
export RAGLINE_TEST_PROMETHEUS_URL='http://127.0.0.1:$PROMETHEUS_PORT'
EOF
