"""Plain text laid out for a fixed-width screen (held-out QA pass, session 45): a maintenance
rule's table of oils, aligned with spaces under a dash rule, was read as one paragraph, and
a question on it was answered with the dash rule and the run of cells after it; section
titles framed by rules were glued to the rules; a numbered clause wrapped with a hanging
indent became a heading cut from its own second line. Now such tables are tables, rules
part paragraphs, and a framed or underlined line is a heading."""

from __future__ import annotations

from pathlib import Path

from core.types import Block
from ingestion.parse import parse_bytes

RULED = (
    "天禾精密制造有限公司\n"
    "设备维护保养规程\n"
    "\n"
    "------------------------------------------------------------\n"
    "5\u3000各类设备保养周期及用油\n"
    "------------------------------------------------------------\n"
    "设备类别                      一级保养周期   指定润滑油\n"
    "----------------------------  ------------   ----------------------\n"
    "数控加工中心                  每月             美孚 DTE 24\n"
    "重型冲床（315 吨及以上）      每 2 周        壳牌 Tellus S2 M 68\n"
    "桥式起重机（行车）            每月           —\n"
    "\n"
    "6.1\u3000设备部每年 12 月编制下一年度保养计划，经生产部会签后发布并抄送\n"
    "\u3000\u3000 各车间主任。\n"
)


def _blocks(text: str, name: str = "rules.txt") -> list[Block]:
    return list(parse_bytes(text.encode("utf-8"), Path(name)).blocks)


def _tables(text: str) -> list[Block]:
    return [b for b in _blocks(text) if b.kind == "table"]


def test_a_table_under_a_column_rule_is_a_table_of_its_columns() -> None:
    (table,) = _tables(RULED)
    assert table.rows[0] == ("设备类别", "一级保养周期", "指定润滑油")
    # A cell set off its column's start still belongs to the column it starts in.
    assert ("数控加工中心", "每月", "美孚 DTE 24") in table.rows
    assert ("重型冲床（315 吨及以上）", "每 2 周", "壳牌 Tellus S2 M 68") in table.rows
    # The dash is kept as written (the answer step reads it as an empty cell).
    assert ("桥式起重机（行车）", "每月", "—") in table.rows
    assert "-----" not in table.text
    assert (table.line_start, table.line_end) == (7, 11)


def test_a_framed_line_is_a_heading_and_rules_are_not_text() -> None:
    blocks = _blocks(RULED)
    headings = [b.text for b in blocks if b.kind == "heading"]
    assert headings == ["5 各类设备保养周期及用油"]
    assert not any("---" in b.text for b in blocks if b.kind != "table")
    assert (
        parse_bytes(RULED.encode("utf-8"), Path("rules.txt")).title
        == "天禾精密制造有限公司设备维护保养规程"
    )


def test_a_clause_wrapped_under_a_hanging_indent_is_one_paragraph() -> None:
    blocks = _blocks(RULED)
    last = blocks[-1]
    assert last.kind == "paragraph"
    assert (
        last.text
        == "6.1 设备部每年 12 月编制下一年度保养计划，经生产部会签后发布并抄送各车间主任。"
    )


def test_columns_aligned_by_spaces_without_a_rule() -> None:
    text = (
        "Severity     Basic              Business          Enterprise\n"
        "Severity 1   4 hours            1 hour            15 minutes\n"
        "Severity 2   8 business hours   4 hours           1 hour\n"
        "Severity 3   2 business days    1 business day    4 hours\n"
    )
    (table,) = _tables(text)
    assert table.rows[0] == ("Severity", "Basic", "Business", "Enterprise")
    assert table.rows[2] == ("Severity 2", "8 business hours", "4 hours", "1 hour")
    assert table.rows[3] == ("Severity 3", "2 business days", "1 business day", "4 hours")


def test_prose_lists_and_logs_are_not_tables() -> None:
    prose = (
        "The committee meets every quarter to review the budget and the\n"
        "progress of each project against its plan, and it reports to the\n"
        "board within two weeks of each meeting.\n"
    )
    labels = "Name:        Jane Doe\nDepartment:  Sales\nPhone:       5120\n"
    log = (
        "2025-01-03 10:00:01  INFO   service started\n"
        "2025-01-03 10:00:02  WARN   cache cold\n"
        "2025-01-03 10:00:05  INFO   ready\n"
    )
    for text in (prose, labels, log):
        assert not _tables(text), text
    assert _blocks(labels)[0].text == "Name: Jane Doe\nDepartment: Sales\nPhone: 5120"


def test_a_grid_table_joins_a_cell_wrapped_over_lines() -> None:
    text = (
        "+-------------------+----------------+---------------------+\n"
        "| Hazard class      | Gloves         | Eye protection      |\n"
        "+-------------------+----------------+---------------------+\n"
        "| Corrosives        | Neoprene       | Splash goggles;     |\n"
        "|                   |                | face shield above 1 L |\n"
        "| Cryogenic liquids | Insulated cryo | Face shield         |\n"
        "|                   | gloves         |                     |\n"
        "+-------------------+----------------+---------------------+\n"
    )
    (table,) = _tables(text)
    assert table.rows == (
        ("Hazard class", "Gloves", "Eye protection"),
        ("Corrosives", "Neoprene", "Splash goggles; face shield above 1 L"),
        ("Cryogenic liquids", "Insulated cryo gloves", "Face shield"),
    )


def test_a_pipe_table_in_plain_text() -> None:
    text = "| Plan | Seats |\n|---|---|\n| Team | 10 |\n| Business | 50 |\n"
    (table,) = _tables(text)
    assert table.rows == (("Plan", "Seats"), ("Team", "10"), ("Business", "50"))


def test_rows_parted_by_wide_gaps_or_leaders_stay_lines() -> None:
    text = (
        "修订记录：\n"
        "A/0\u30002019年3月\u3000首次发布并在全公司范围内执行相关的保养要求\n"
        "A/1\u30002021年8月\u3000增加空气压缩机和冷却塔保养要求\n"
        "\n"
        "  Lab Safety Officer ............. Dr. Elena Marsh (ext. 5120)\n"
        "  Building Emergency Coordinator . Grace Adeyemi (ext. 5101)\n"
        "  Group leaders .................. responsible for risk assessments\n"
        "                                   in their own laboratories\n"
    )
    first, second = _blocks(text)
    assert first.text.split("\n")[2] == "A/1 2021年8月 增加空气压缩机和冷却塔保养要求"
    assert second.text.split("\n") == [
        "Lab Safety Officer ............. Dr. Elena Marsh (ext. 5120)",
        "Building Emergency Coordinator . Grace Adeyemi (ext. 5101)",
        "Group leaders .................. responsible for risk assessments in their own "
        "laboratories",
    ]


def test_an_underlined_title_and_short_rules() -> None:
    text = "Travel Policy\n=============\n\nThanks\n---\n"
    blocks = _blocks(text)
    assert (blocks[0].kind, blocks[0].text, blocks[0].level) == ("heading", "Travel Policy", 1)
    # A rule shorter than the line above it does not underline it.
    assert (blocks[1].kind, blocks[1].text) == ("paragraph", "Thanks")


def test_a_numbered_line_in_capitals_standing_alone_heads_a_section() -> None:
    """(Session 47.) "2. ON-CALL STIPENDS (USD, gross)" between blank lines is the heading
    its table stands under (its currency too); "1. Install the package" is an item."""
    text = (
        "1. SEVERITY LEVELS\n\nSEV1 pages are acknowledged in 5 minutes.\n\n"
        "2. ON-CALL STIPENDS (USD, gross)\n\nSecondary on-call is paid 90 per weekend day.\n\n"
        "1. Install the package\n\nRun the installer.\n"
    )
    doc = parse_bytes(text.encode(), Path("policy.txt"))
    headings = [b.text for b in doc.blocks if b.kind == "heading"]
    assert headings == ["1. SEVERITY LEVELS", "2. ON-CALL STIPENDS (USD, gross)"]


def test_a_csv_keeps_its_title_tables_and_notes_apart() -> None:
    """(Session 47.) A spreadsheet saved as CSV: a title line, two tables, a note, parted
    by empty rows. Read as one table, the second table's rows fell under the first one's
    header, and the title and note were rows of it."""
    text = (
        "固定资产分类与管理标准（第4版）\n版本说明：自2025年2月1日起执行\n\n"
        "资产类别,认定起点（单价）注1,折旧年限\n电子设备,3000元,3年\n运输工具,5000元,4年\n\n"
        "管理环节,规定\n验收入账,5个工作日内完成验收\n\n"
        "注1：认定起点以不含税价格计算\n"
    )
    doc = parse_bytes(text.encode(), Path("assets.csv"))
    kinds = [b.kind for b in doc.blocks]
    assert kinds == ["paragraph", "paragraph", "table", "table", "paragraph"]
    assert doc.title == "固定资产分类与管理标准（第4版）"
    first, second = (b for b in doc.blocks if b.kind == "table")
    assert first.rows[0] == ("资产类别", "认定起点（单价）注1", "折旧年限") and len(first.rows) == 3
    assert second.rows[0] == ("管理环节", "规定")
    assert doc.blocks[-1].text == "注1：认定起点以不含税价格计算"
    assert (first.line_start, first.line_end) == (4, 6)


def test_a_spacer_row_inside_a_csv_table_does_not_start_another() -> None:
    """(Session 51.) A CSV was cut at every empty row, so the figures after a spacer row
    made a table of their own, headed by their first row ("Plum | 2.10 | seasonal" as the
    columns of "Kiwi | 0.50"); a spreadsheet already went on with the table there. CSV is
    now read as a sheet is: a new table, title or note starts after an empty row, figures
    go on the table before it."""
    text = "Item,Price,Notes\nApple,1.20,fresh\nPear,0.90,\n\nPlum,2.10,seasonal\nKiwi,0.50,\n"
    doc = parse_bytes(text.encode(), Path("fruit.csv"))
    [table] = [b for b in doc.blocks if b.kind == "table"]
    assert table.rows[0] == ("Item", "Price", "Notes") and len(table.rows) == 5
    assert table.rows[-1] == ("Kiwi", "0.50", "")
    assert (table.line_start, table.line_end) == (1, 6)


def test_a_two_column_table_laid_out_by_spaces_and_bracketed_article_headings() -> None:
    """(Held-out pass, session 48.) A Japanese rule's tables of two columns (years of
    service and the gift; damage and the payment), indented with ideographic spaces, were
    read as one paragraph each, so no row could be quoted; "第4条（結婚祝金）" was no
    heading. Lines of "label  value" under no header of labels stay lines."""
    text = (
        "第4条（結婚祝金）\n"
        "従業員本人が結婚したときは、勤続年数に応じて次の祝金を支給する。\n\n"
        "\u3000\u3000勤続年数                      祝金\n"
        "\u3000\u30001年未満                       10,000円\n"
        "\u3000\u30001年以上5年未満                30,000円\n"
        "\u3000\u30005年以上                       50,000円\n\n"
        "Name:      Ann Lee\nPhone:     555 0100\nRoom:      204\n"
    )
    doc = parse_bytes(text.encode(), Path("rules_ja.txt"))
    assert [b.text for b in doc.blocks if b.kind == "heading"] == ["第4条（結婚祝金）"]
    (table,) = (b for b in doc.blocks if b.kind == "table")
    assert table.rows[0] == ("勤続年数", "祝金") and table.rows[2] == ("1年以上5年未満", "30,000円")
    assert doc.blocks[-1].kind == "paragraph" and doc.blocks[-1].text.startswith("Name:")


def test_a_psql_table_without_end_bars_and_paragraph_sign_headings() -> None:
    """(Held-out pass, session 48.) A German works agreement: "§ 4 Entgeltfortzahlung" is a
    heading, and a table laid out as psql prints one ("a | b" rows, "---+---" under the
    header) is a table, not one paragraph."""
    text = (
        "§ 4 Entgeltfortzahlung\n\n"
        "    Betriebszugehörigkeit    | Zuschuss zum Krankengeld\n"
        "    -------------------------+------------------------------\n"
        "    unter 2 Jahren           | kein Zuschuss\n"
        "    5 bis unter 10 Jahre     | bis zum Ende der 26. Krankheitswoche\n"
    )
    doc = parse_bytes(text.encode(), Path("bv.txt"))
    assert [b.text for b in doc.blocks if b.kind == "heading"] == ["§ 4 Entgeltfortzahlung"]
    (table,) = (b for b in doc.blocks if b.kind == "table")
    assert table.rows[0] == ("Betriebszugehörigkeit", "Zuschuss zum Krankengeld")
    assert table.rows[2] == ("5 bis unter 10 Jahre", "bis zum Ende der 26. Krankheitswoche")
    # A line of prose with a bar in it is no table.
    prose = parse_bytes(b"Use a | b to pipe output.\nThen read it.\n", Path("notes.txt"))
    assert all(b.kind != "table" for b in prose.blocks)
