"""The Chinese office question set (bench/questions/zh_office.jsonl) holds what its files
say: every expected answer is in the parsed text of the file it names, and every near miss
names a file that exists. (The set was written from a QA pass's findings: tables, clauses,
traditional and simplified script, encodings, near misses.)"""

from __future__ import annotations

import json
from pathlib import Path

from ingestion.parse import parse_bytes

SET = Path(__file__).resolve().parents[2] / "bench" / "questions"


def test_every_expected_answer_is_in_its_file() -> None:
    questions = [
        json.loads(line)
        for line in (SET / "zh_office.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    docs = SET / "zh_office" / "docs"
    texts: dict[str, str] = {}
    for q in questions:
        path = docs / q["file"]
        assert path.is_file(), q
        if q["file"] not in texts:
            parsed = parse_bytes(path.read_bytes(), path)
            texts[q["file"]] = "\n".join(b.text for b in parsed.blocks)
        if q["answer"] is not None:
            assert q["answer"] in texts[q["file"]], (q["id"], q["answer"])
    kinds = [q["kind"] for q in questions]
    assert kinds.count("fact") == 24 and kinds.count("near_miss") == 12
