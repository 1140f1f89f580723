"""The question sets written from QA passes hold what their files say: every expected
answer is in the parsed text of the file it names, and every near miss names a file that
exists. zh_office (bench/questions/zh_office.jsonl) was written from a pass's findings
(tables, clauses, traditional and simplified script, encodings, near misses); en_policies
and zh_policies by two black-box passes on documents the system had not seen (enterprise
policies, price lists, sales tables, minutes; near misses of sibling kinds, modifiers,
periods, empty cells); unseen_policies by a third pass after those fixes, to measure them
on documents no fix was written from (English and Chinese); unseen_policies2 by a fourth
pass (session 45), written before that session's fixes and run only to measure them
(versions, bands, amounts left to another rule, excluded scopes, empty cells ...);
unseen_policies3 by a fifth (session 46), in English, Chinese, German and Spanish, measured
before its answers were read; unseen_policies4 by a sixth, later in that session, in
English, Chinese, French, German and Spanish, to measure that session's fixes;
unseen_policies5 by a seventh (session 47), in English, Chinese (simplified and
traditional), Italian, Portuguese and Japanese, measured before its answers were read;
unseen_policies6 by an eighth, later in that session (English, Chinese, German, Spanish,
Dutch, Korean, Russian), to measure the fixes read from the seventh; unseen_policies7 by a
ninth (English with a PDF, Chinese, French, German, Spanish, Japanese, Italian), to measure
the fixes read from the eighth; unseen_policies8 by a tenth (session 48: English with a PDF,
simplified and traditional Chinese, Japanese, Korean, French, Brazilian Portuguese, Polish,
Swedish), measured before its answers were read; unseen_policies9 by an eleventh, in the same
session (English with a PDF, Chinese, Japanese, German, Spanish, Italian, Dutch, Russian),
to measure the fixes read from the tenth; unseen_policies10 by a twelfth (English with a PDF,
simplified and traditional Chinese, French, German, Spanish, Italian, Brazilian Portuguese,
Korean), to measure the fixes read from the tenth and eleventh; unseen_policies11 by a
thirteenth (session 49: English with a PDF, simplified and traditional Chinese, Japanese,
German, Spanish, French, Turkish, Indonesian), measured before its answers were read;
unseen_policies12 by a fourteenth (session 50: English with a PDF, simplified and traditional
Chinese, Korean, European Portuguese, Italian, Dutch, Russian, Polish), measured before its
answers were read; unseen_policies13 by a fifteenth, later in that session (English with a
PDF, simplified and traditional Chinese, Japanese, German, Spanish, French, Korean,
Italian), to measure the fixes read from the thirteenth and fourteenth; unseen_policies14 by a
sixteenth (English with a PDF, simplified Chinese, Japanese, Korean, German, French, Spanish,
Brazilian Portuguese, Dutch), to measure the whole session's fixes; unseen_policies15 by a
seventeenth (session 51: English in two .docx files, as no PDF writer is installed,
simplified and traditional Chinese, Japanese, Korean, German, Spanish, French, Italian),
measured at the session's start and after its fixes, before its answers were read;
unseen_policies16 by an eighteenth (session 52: English in Markdown, HTML, .docx and .xlsx,
simplified and traditional Chinese, German, French, Japanese in CSV, Korean), measured at the
session's start before its answers were read, then read for fixes; unseen_policies17 by a
nineteenth, later in that session (English in Markdown, HTML, .docx and CSV, simplified and
traditional Chinese, Spanish, Italian, Japanese in .xlsx, Korean), to measure the session's
fixes at its start and end, before its answers were read; unseen_policies18 by a twentieth
(session 53: English in .docx, HTML and .xlsx, simplified and traditional Chinese, German in
.docx, French, Brazilian Portuguese in HTML, Dutch in CSV, Japanese), measured at the
session's start before its answers were read, then read for fixes; unseen_policies19 by a
twenty-first, later in that session (English in Markdown, .docx and CSV, simplified and
traditional Chinese, Spanish .docx, Italian HTML, Korean, Russian, Swedish), to measure the
session's fixes at its start and end, before its answers were read; unseen_policies20 by a
twenty-second (session 54: English in .docx, HTML, a two-sheet .xlsx and CSV, simplified
Chinese Markdown, traditional Chinese HTML, Japanese .txt, Korean .docx, German Markdown,
Polish HTML), measured at the session's start before its answers were read, then read for
fixes; unseen_policies21 by a twenty-third, later in that session (English in .docx, HTML,
Markdown and CSV, simplified Chinese .txt, traditional Chinese Markdown, Japanese .docx,
Korean Markdown, French HTML, a two-sheet Spanish .xlsx), to measure the session's fixes
before its answers were read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingestion.parse import parse_bytes

SET = Path(__file__).resolve().parents[2] / "bench" / "questions"


@pytest.mark.parametrize(
    ("name", "facts", "near_misses"),
    [
        ("zh_office", 24, 12),
        ("en_policies", 36, 62),
        ("zh_policies", 35, 58),
        ("unseen_policies", 40, 60),
        ("unseen_policies2", 40, 60),
        ("unseen_policies3", 40, 60),
        ("unseen_policies4", 40, 60),
        ("unseen_policies5", 40, 60),
        ("unseen_policies6", 40, 60),
        ("unseen_policies7", 40, 60),
        ("unseen_policies8", 40, 60),
        ("unseen_policies9", 40, 60),
        ("unseen_policies10", 40, 60),
        ("unseen_policies11", 40, 60),
        ("unseen_policies12", 40, 60),
        ("unseen_policies13", 40, 60),
        ("unseen_policies14", 40, 60),
        ("unseen_policies15", 40, 60),
        ("unseen_policies16", 40, 60),
        ("unseen_policies17", 40, 60),
        ("unseen_policies18", 40, 60),
        ("unseen_policies19", 40, 60),
        ("unseen_policies20", 40, 60),
        ("unseen_policies21", 40, 60),
    ],
)
def test_every_expected_answer_is_in_its_file(name: str, facts: int, near_misses: int) -> None:
    questions = [
        json.loads(line)
        for line in (SET / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    docs = SET / name / "docs"
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
    assert kinds.count("fact") == facts and kinds.count("near_miss") == near_misses
