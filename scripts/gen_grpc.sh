#!/usr/bin/env bash
# Regenerate the checked-in gRPC Python code from ragline/grpc/ragline.proto
# (grpcio-tools, a dev dependency). Run from anywhere: `make grpc`.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
"$PY" -m grpc_tools.protoc -I . \
  --python_out=. --pyi_out=. --grpc_python_out=. \
  ragline/grpc/ragline.proto
echo "generated ragline/grpc/ragline_pb2.py, ragline_pb2.pyi, ragline_pb2_grpc.py"
