# The README's two commands: `make demo` and `make test`. Both set up from a fresh clone.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_DIR := .ragline-demo
PACKAGES := core ingestion indexing routing fusion generation monitoring connectors ragline

.PHONY: setup demo test lint clean grpc

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

# The project's bytecode, as a wheel install compiles it: an editable install otherwise
# compiles every module at each start where the environment forbids writing .pyc files
# (PYTHONDONTWRITEBYTECODE), ~0.15 s of every CLI command. Quick when up to date.
setup: $(BIN)/.installed
	$(BIN)/python -m compileall -q $(PACKAGES) > /dev/null

demo: setup
	$(BIN)/ragline ingest examples --data-dir $(DEMO_DIR)
	$(BIN)/ragline ask "How many permit checks did Kentucky have in November 2015?" --data-dir $(DEMO_DIR)
	$(BIN)/ragline ask "个人信息处理者利用个人信息进行自动化决策，应当保证什么？" --data-dir $(DEMO_DIR)
	$(BIN)/ragline ask "TiDB 生产环境的 TiKV 服务器建议使用什么类型的硬盘？" --data-dir $(DEMO_DIR)
	$(BIN)/ragline ask "What is the capital of Mongolia?" --data-dir $(DEMO_DIR)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy $(PACKAGES)

# Regenerate the checked-in gRPC code after editing ragline/grpc/ragline.proto.
grpc: setup
	PYTHON=$(BIN)/python bash scripts/gen_grpc.sh

test: setup
	bash deploy/local/test.sh

clean:
	rm -rf $(VENV) $(DEMO_DIR) .pytest_cache .mypy_cache .ruff_cache
