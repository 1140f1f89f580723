"""Table rows as answer candidates: (header, value) pairs, merged cells once."""

from __future__ import annotations

from gen_cases import make_chunk

from generation.passages import candidates, normalise, normalise_joined


def _rows(text: str) -> list[tuple[tuple[str, str], ...]]:
    return [c.cells for c in candidates(make_chunk(text), 0) if c.is_table_row]


def test_equal_counts_in_columns_of_their_own_are_both_kept() -> None:
    rows = _rows(
        "| Site | Valves | Pumps |\n|---|---|---|\n| Plant A | 2 | 0 |\n| Plant B | 1 | 1 |"
    )
    assert rows[1] == (("Site", "Plant B"), ("Valves", "1"), ("Pumps", "1"))


def test_a_merged_cell_copied_across_its_columns_is_one_value() -> None:
    # A title spanning every column, and a version number under one header spread over
    # three columns (what a PDF grid gives): each is said once.
    rows = _rows(
        "| Region | Valves | Pumps |\n|---|---|---|\n| North | North | North |\n| 7 | 3 | 4 |"
    )
    assert rows[0] == (("Region", "North"),)
    spread = _rows(
        "|  | Version |  | Name |\n|---|---|---|---|\n| 1.5.0 | 1.5.0 | 1.5.0 | Huashan |"
    )
    assert [v for _, v in spread[0]] == ["1.5.0", "Huashan"]


def test_sentences_split_inside_brackets_or_after_an_abbreviation_are_joined_again() -> None:
    text = (
        "他出生于北京（一说天津。后迁居上海）。他是画家。\n\n"
        "Dr. Smith met Mr. Jones in St. Louis. They left. The trial (phase II. final) ended."
    )
    texts = [c.text for c in candidates(make_chunk(text), 0)]
    assert texts == [
        "他出生于北京（一说天津。后迁居上海）。",
        "他是画家。",
        "Dr. Smith met Mr. Jones in St. Louis.",
        "They left.",
        "The trial (phase II. final) ended.",
    ]


MERGED = (
    "Mozilla > Other activities\n"
    "Mozilla Persona\n"
    "Mozilla Persona is a cross-browser sign-in mechanism. It shut down in 2016.\n"
    "Mozilla Location Service\n"
    "This open source crowdsourced geolocation service was started by Mozilla in 2013.\n"
    "- a list item without a full stop\n"
    "It offers a free API."
)


def test_a_sentence_knows_the_sub_heading_it_stands_under() -> None:
    """Short subsections merged into one chunk keep their sub-headings as lines of their
    own; each sentence carries the last one before it. The breadcrumb and list items are
    not sub-headings."""
    chunk = make_chunk(MERGED, section_path=("Mozilla", "Other activities"))
    by_text = {c.text: c.heading for c in candidates(chunk, 0)}
    assert by_text["Mozilla Persona"] == ""
    assert by_text["It shut down in 2016."] == "Mozilla Persona"
    started = "This open source crowdsourced geolocation service was started by Mozilla in 2013."
    assert by_text[started] == "Mozilla Location Service"
    assert by_text["It offers a free API."] == "Mozilla Location Service"


def test_a_breadcrumb_of_mixed_headings_is_never_glued_to_the_sentence_after_it() -> None:
    """A Chinese-and-English breadcrumb is no Title Case line, and runs nearly to the
    margin: it was joined to the next line as if wrapped, and quoted with it. It is a line
    of its own, even where the line map gives it its last heading's source line."""
    crumb = "员工差旅标准 Travel allowance policy > 餐补 Meal allowance"
    chunk = make_chunk(
        f"{crumb}\nDaily meal allowance is 120 CNY in tier-1 cities and 90 CNY elsewhere.",
        section_path=("员工差旅标准 Travel allowance policy", "餐补 Meal allowance"),
        line_map=((1, 14, 14), (1, 16, 16)),
    )
    first, sentence = candidates(chunk, 0)
    assert first.text == crumb
    assert sentence.text.startswith("Daily meal allowance") and sentence.first_line == 1


def test_a_label_line_is_never_glued_to_the_long_line_before_it() -> None:
    """Minutes list their fields one a line; the longest (the attendees) ends without a
    full stop, yet the next field is its own sentence, cited at its own line. A wrapped
    line that merely goes on stays joined."""
    minutes = make_chunk(
        "時間：2024年9月26日 14:00-16:30\n"
        "參會人員：財務總監 陳靜、銷售副總裁 趙國強、人力資源部經理 王曉燕、信息技術部經理 劉洋\n"
        "記錄人：張婷"
    )
    texts = [(c.text, c.first_line) for c in candidates(minutes, 0)]
    assert texts[-1] == ("記錄人：張婷", 2)
    assert texts[1][0].endswith("劉洋")
    wrapped = make_chunk(
        "The committee approved a budget for the test automation programme in the\n"
        "fiscal year 2026, subject to review."
    )
    assert len(candidates(wrapped, 0)) == 1


def test_a_placeholder_cell_is_empty_but_a_region_called_na_is_not() -> None:
    header = ("Region", "Lead", "Target")
    rows = (("NA", "Dana Ruiz", "N/A"), ("EMEA", "—", "TBD"))
    lines = ["| " + " | ".join(r) + " |" for r in rows]
    text = "\n".join(["| Region | Lead | Target |", "|---|---|---|", *lines])
    table = make_chunk(text, kind="table", table_header=header, table_rows=rows)
    na, emea = candidates(table, 0)
    assert na.cells == (("Region", "NA"), ("Lead", "Dana Ruiz")) and na.empty == ("Target",)
    assert emea.cells == (("Region", "EMEA"),) and emea.empty == ("Lead", "Target")


def test_placeholders_in_other_languages_are_empty_but_a_status_is_not() -> None:
    header = ("Modalidad", "Antigüedad mínima", "Status", "Termin")
    rows = (("Teletrabajo total", "Pendiente", "offen", "noch offen"),)
    text = "| Modalidad | Antigüedad mínima | Status | Termin |\n|---|---|---|---|\n| " + (
        " | ".join(rows[0]) + " |"
    )
    table = make_chunk(text, kind="table", table_header=header, table_rows=rows)
    (row,) = candidates(table, 0)
    assert row.cells == (("Modalidad", "Teletrabajo total"), ("Status", "offen"))
    assert row.empty == ("Antigüedad mínima", "Termin")


def test_a_value_on_request_is_an_empty_cell_in_any_language() -> None:
    """(Session 52.) "Summer, per metre: on request" gives no summer rate: asked for it,
    the table gives nothing (a request is no price)."""
    header = ("Berth", "Annual", "Summer", "Winter", "Hire")
    rows = (("Dry stack", "£455.00", "on request", "POA", "auf Anfrage"),)
    text = "| " + " | ".join(header) + " |\n|---|---|---|---|---|\n| " + " | ".join(rows[0]) + " |"
    table = make_chunk(text, kind="table", table_header=header, table_rows=rows)
    (row,) = candidates(table, 0)
    assert row.cells == (("Berth", "Dry stack"), ("Annual", "£455.00"))
    assert row.empty == ("Summer", "Winter", "Hire")
    # (Session 54: an option that does not exist, "All zones: not available", "Precio no
    # socio: No disponible", gives no value either.)
    for other in (
        "문의",
        "お問い合わせ",
        "询价",
        "sur demande",
        "Price on application",
        "not available",
        "No disponible",
    ):
        other_rows = (("Dry stack", "£455.00", other, "£12", "£3"),)
        line = "| " + " | ".join(other_rows[0]) + " |"
        text = "| " + " | ".join(header) + " |\n|---|---|---|---|---|\n" + line
        chunk = make_chunk(text, kind="table", table_header=header, table_rows=other_rows)
        assert candidates(chunk, 0)[0].empty == ("Summer",), other
    # A word that only holds "request" is a value.
    kept = (("Dry stack", "£455.00", "request form B", "£12", "£3"),)
    text = "| " + " | ".join(header) + " |\n|---|---|---|---|---|\n| " + " | ".join(kept[0]) + " |"
    chunk = make_chunk(text, kind="table", table_header=header, table_rows=kept)
    assert candidates(chunk, 0)[0].empty == ()


def test_a_note_set_across_a_table_is_a_sentence_not_a_row() -> None:
    """(Session 47.) A spreadsheet holds its notes in a table's first cell: "* End of
    month means ..." is no supplier category."""
    header = ("Supplier category", "Standard terms", "Payment run")
    note = "* End of month means the 60 days are counted from the last day of the month."
    rows = (("Raw materials", "60 days end of month*", "Weekly"), (note, "", ""))
    lines = ["| " + " | ".join(r) + " |" for r in (header, *rows)]
    lines.insert(1, "|---|---|---|")
    chunk = make_chunk("\n".join(lines), kind="table", table_header=header, table_rows=rows)
    row, sentence = candidates(chunk, 0)
    assert row.cells[0] == ("Supplier category", "Raw materials")
    assert sentence.text == note and not sentence.is_table_row


def test_parts_normalised_one_by_one_join_to_the_whole_text_normalised() -> None:
    # Full-width forms, the ideographic space, a final sigma and white space at either end
    # or in a part of its own: each part's work is memoised, the result is the joined text's.
    pieces = ["", " ", "  ", "\n", "ΟΔΟΣ", "Ａ１０１", "\u3000x", "Σ.", "İ", "a\tb ", " c"]
    for first in pieces:
        for second in pieces:
            for parts in ([first], [first, second], [first, second, first], []):
                joined, pieces = normalise_joined(parts)
                assert joined == normalise(" ".join(parts)), parts
                assert pieces == tuple(n.strip() for n in map(normalise, parts) if n.strip())
