"""Plain-text files keep their lines (FINDINGS #21, #24): every clause of a .txt was cited at
its whole paragraph's lines (第二条 on line 4 cited l3-8), and lines without a full stop
were glued into one quoted "sentence" ("…下午2点参会人员：王建国…议题一：…"). Now a line
that is an item of its own stays a line, cited at its own line; a line wrapped in
mid-sentence is still joined, and the sentence is cited at the lines it spans. The same
in every encoding."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from core.settings import ChunkSettings
from ingestion.chunker import chunk_blocks
from ingestion.parse import parse_bytes

RULES = (
    "华信科技员工考勤管理制度\n"
    "\n"
    "第一条\u3000公司实行标准工时制，工作时间为周一至周五上午9:00至下午6:00，午休一小时。\n"
    "第二条\u3000员工上班迟到超过30分钟的，按旷工半天处理。\n"
    "第三条\u3000员工每月可享受5次弹性打卡，每次弹性时间不超过30分钟。\n"
)
MINUTES = (
    "会议纪要\n"
    "\n"
    "会议时间：2025年2月20日下午2点\n"
    "参会人员：王建国、李晓燕、张敏\n"
    "议题一：确定第二季度研发招聘计划，新增编制8人，预算120万元。\n"
    "议题二：办公室搬迁至滨江区网商路699号，计划于2025年5月完成。\n"
)
# Big5 holds traditional characters only.
MINUTES_TRADITIONAL = (
    "會議紀要\n\n會議時間：2025年2月20日下午2點\n參會人員：王建國、李曉燕\n議題一：確定招聘計劃。\n"
)


def _cited(data: bytes, name: str = "notes.txt") -> dict[str, tuple[int, int]]:
    """Each line of the document's chunks, with the source lines it is cited at."""
    doc = parse_bytes(data, Path(name))
    out: dict[str, tuple[int, int]] = {}
    for draft in chunk_blocks(doc.blocks, ChunkSettings(), has_pages=doc.has_pages):
        lines = draft.text.split("\n")
        assert len(draft.line_map) == len(lines), draft
        for line, (_, first, last) in zip(lines, draft.line_map, strict=True):
            out[line] = (first, last)
    return out


@pytest.mark.parametrize("encoding", ["utf-8", "gb18030", "utf-16"])
def test_each_clause_is_cited_at_its_own_line(encoding: str) -> None:
    cited = _cited(RULES.encode(encoding))
    assert cited["第二条 员工上班迟到超过30分钟的，按旷工半天处理。"] == (4, 4)
    assert cited["第三条 员工每月可享受5次弹性打卡，每次弹性时间不超过30分钟。"] == (5, 5)


@pytest.mark.parametrize("encoding", ["utf-8", "gbk", "big5"])
def test_item_lines_without_full_stops_stay_apart(encoding: str) -> None:
    text = MINUTES_TRADITIONAL if encoding == "big5" else MINUTES
    cited = _cited(text.encode(encoding))
    first, second = text.split("\n")[2:4]
    assert cited[first] == (3, 3)
    assert cited[second] == (4, 4)
    assert not any(first in line and second in line for line in cited)


def test_a_wrapped_sentence_is_joined_and_cited_at_its_lines() -> None:
    english = textwrap.fill(
        "The pump rota changes every Monday at the north plant and the south plant, unless "
        "the supervisor on duty decides otherwise in writing before the weekend begins. "
        "Attendance is recorded daily.",
        60,
    )
    assert english.count("\n") == 3
    cited = _cited(english.encode())
    rota = next(line for line in cited if line.startswith("The pump rota"))
    assert rota.endswith("before the weekend begins.")
    assert cited[rota] == (1, 3)
    assert cited["Attendance is recorded daily."] == (3, 4)

    chinese = (
        "公司实行标准工时制，工作时间为周一至周五上午九点至下午六点，午休一小\n"
        "时。员工上班迟到超过三十分钟的，按旷工半天处理，每月累计三次以上者\n"
        "取消当月全勤奖。\n"
    )
    cited = _cited(chinese.encode())
    assert cited["公司实行标准工时制，工作时间为周一至周五上午九点至下午六点，午休一小时。"] == (
        1,
        2,
    )
    assert cited[
        "员工上班迟到超过三十分钟的，按旷工半天处理，每月累计三次以上者取消当月全勤奖。"
    ] == (2, 3)


def test_list_and_label_lines_are_not_joined_to_a_long_line() -> None:
    text = (
        "Minutes of the plant meeting held at the north plant on Monday\n"
        "Attendees: Bob, Alice\n"
        "- budget for the second quarter\n"
        "- hiring plan\n"
    )
    cited = _cited(text.encode())
    assert cited["Minutes of the plant meeting held at the north plant on Monday"] == (1, 1)
    assert cited["Attendees: Bob, Alice"] == (2, 2)
    assert cited["- budget for the second quarter"] == (3, 3)
