"""Start-up cost of the command line: `ragline --help` and the start of `ragline ask` must
not import the web stack, the stores or the models. A subprocess looks at sys.modules
(what is imported, not how long it takes: timings are for `ragline bench`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Heavy to import, and never needed to print help or parse arguments.
CLI_FORBIDDEN = (
    "torch",
    "faiss",
    "numpy",
    "jieba",
    "fastapi",
    "starlette",
    "uvicorn",
    "sqlalchemy",
    "pydantic",
    "httpx",
    "celery",
    "redis",
    "prometheus_client",
    "mcp",
    "grpc",
    "locust",
    "sqlglot",
)
# Not needed to answer a question from the shell (no HTTP server, no LLM configured,
# no rows or status source asked, no parsing).
ASK_FORBIDDEN = (
    "fastapi",
    "starlette",
    "uvicorn",
    "httpx",
    "celery",
    "mcp",
    "grpc",
    "locust",
    "sqlglot",
    "ingestion.pii",
    "ingestion.parse",
)


def _imported(statement: str) -> set[str]:
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def _offenders(modules: set[str], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(m for m in forbidden if m in modules)


def test_importing_the_cli_loads_no_heavy_module() -> None:
    modules = _imported("import ragline.cli")
    assert "typer" in modules  # the check itself works
    assert _offenders(modules, CLI_FORBIDDEN) == []


def test_building_the_help_loads_no_heavy_module() -> None:
    """Typer resolves every command's parameters to print --help: still nothing heavy."""
    modules = _imported(
        "from typer.main import get_command\nfrom ragline.cli import app\nget_command(app)"
    )
    assert _offenders(modules, CLI_FORBIDDEN) == []


@pytest.mark.parametrize("module", ["ragline.app"])
def test_the_application_service_loads_no_web_stack_or_parsers(module: str) -> None:
    modules = _imported(f"import {module}")
    assert "sqlalchemy" in modules  # the stores it needs are there
    assert _offenders(modules, ASK_FORBIDDEN) == []


@pytest.mark.parametrize(
    "argv", [["bench", "scale", "--no-such-option"], ["no-such-command"], ["--help"]]
)
def test_usage_errors_and_help_are_plain_text(argv: list[str]) -> None:
    """Messages are plain text: a mistyped option reads "Error: No such option", with no
    box-drawing panel (Rich's) around it, whether or not the output is a terminal."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FORCE_COLOR": "1", "COLUMNS": "100"}
    code = "from ragline.cli import app\napp()"
    out = subprocess.run(
        [sys.executable, "-c", code, *argv], env=env, cwd=ROOT, capture_output=True, text=True
    )
    text = out.stdout + out.stderr
    assert ("Error:" in text) == (argv != ["--help"]) and "Usage:" in text
    assert not any(c in text for c in "╭╮╰╯│─") and "\x1b[" not in text


def test_a_question_loads_only_the_jieba_entries_its_characters_need() -> None:
    """jieba's dictionaries load by first character (core.jieba_words): analysing a
    question, its entities and its tags reads a few dozen buckets, not the 498k-entry
    prefix dictionary, and imports no jieba.analyse (its import parses whole files)."""
    code = (
        "import json, sys\n"
        "from core.text import query_terms, tagged_words, _jieba\n"
        "from indexing.entities import query_entities\n"
        "q = '西贡商信银行2007年获得了什么奖项？'\n"
        "query_terms(q); query_entities(q); tagged_words(q)\n"
        "print(json.dumps([len(_jieba()._tokenizer.FREQ), 'jieba.analyse' in sys.modules]))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    entries, analyse = json.loads(out.stdout.strip().splitlines()[-1])
    assert 0 < entries < 50_000
    assert analyse is False
