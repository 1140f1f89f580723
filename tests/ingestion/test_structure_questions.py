"""bench/questions/structure_qa.jsonl is verified against the files themselves.

Each question's answer must lie inside its evidence, and the evidence must be in the file
at the stated page as an independent extractor reads it (pdfplumber for PDF, lxml's
text_content for HTML, python-docx paragraphs, the raw Markdown), not as Ragline's own
parsers do: the set checks the parsers, so it must not be derived from them.
"""

from __future__ import annotations

import json
import os
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = ROOT / "bench" / "questions" / "structure_qa.jsonl"
DOCS = Path(os.environ.get("RAGLINE_SHARED_DOCS", ROOT / ".." / "shared" / "data" / "docs"))
KINDS = {"table_multirow", "list", "html_inline", "pdf_two_column"}


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@cache
def source_text(rel: str, page: int) -> str:
    path = DOCS / rel
    if not path.is_file():
        pytest.skip(f"shared document {rel} not present")
    if path.suffix == ".pdf":
        import pdfplumber

        with pdfplumber.open(path) as pdf:
            return _norm(pdf.pages[page - 1].extract_text() or "")
    if path.suffix == ".html":
        import lxml.html

        return _norm(lxml.html.fromstring(path.read_bytes()).text_content())
    if path.suffix == ".docx":
        import docx

        return _norm("\n".join(p.text for p in docx.Document(str(path)).paragraphs))
    # Markdown: the raw text without emphasis and code marks.
    return _norm(re.sub(r"[*`]", "", path.read_text(encoding="utf-8")))


def load() -> list[dict[str, object]]:
    return [
        json.loads(line)
        for line in QUESTIONS.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def test_question_set_shape() -> None:
    rows = load()
    assert len(rows) >= 16
    assert len({r["id"] for r in rows}) == len(rows)
    assert {r["kind"] for r in rows} == KINDS
    for r in rows:
        assert set(r) == {"id", "file", "page", "question", "answer", "evidence", "kind"}


@pytest.mark.parametrize("row", load(), ids=lambda r: str(r["id"]))
def test_answer_is_in_evidence_and_evidence_in_file(row: dict[str, object]) -> None:
    answer, evidence = str(row["answer"]), _norm(str(row["evidence"]))
    assert answer in evidence
    assert evidence in source_text(str(row["file"]), int(str(row["page"])))
