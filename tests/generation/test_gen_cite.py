"""Exact citations: every sentence at its own lines, one label per passage."""

from __future__ import annotations

from gen_cases import make_chunk, make_hits, quoted_parts

from core.ids import label_part, parse_label
from core.types import Chunk
from generation.cite import Quote, Source, Span, assemble, locate, source_span, span_lines, supports
from generation.extractive import extractive_answer
from ragline.bench.support import answer_sentences

LAW = "0e22e70000000000"


def _law_chunk(ordinal: int, first: int, lines: list[str]) -> Chunk:
    # A breadcrumb line with no source line of its own, then one source line per text line
    # (blank lines between paragraphs in the file are skipped).
    text = "\n".join(["Law > Chapter 2", *lines])
    line_map = ((1, 0, 0), *((1, first + 2 * k, first + 2 * k) for k in range(len(lines))))
    return make_chunk(text, doc_id=LAW, ordinal=ordinal, line_start=first, line_map=line_map)


def test_sentence_span_comes_from_the_line_map_not_the_chunk() -> None:
    chunk = _law_chunk(0, 107, ["First rule applies.", "Second rule is about automated decisions."])
    span = source_span(chunk, 2, 2)
    assert (span.page_start, span.line_start, span.line_end) == (1, 109, 109)
    assert span_lines(chunk, span) == "Second rule is about automated decisions."
    # The breadcrumb has no source line: a span on it alone falls back to the chunk.
    assert source_span(chunk, 0, 0).line_start == 107


def test_two_passages_of_one_page_get_numbered_labels_and_two_citations() -> None:
    a = _law_chunk(0, 107, ["Decisions must be transparent and fair."])
    b = _law_chunk(1, 231, ["Automated decisions may be refused by the individual."])
    c = _law_chunk(2, 113, ["Marketing by automated decisions needs an opt-out."])
    quotes = [
        Quote("Decisions must be transparent and fair.", (Source(a, 1, 1),)),
        Quote("Automated decisions may be refused by the individual.", (Source(b, 1, 1),)),
        Quote("Marketing by automated decisions needs an opt-out.", (Source(c, 1, 1),)),
    ]
    text, citations, sentences = assemble(quotes)
    labels = [s.labels[0] for s in sentences]
    assert labels == ["[Doc0e22e7_p1.1]", "[Doc0e22e7_p1.2]", "[Doc0e22e7_p1.3]"]
    assert all(parse_label(label) == ("0e22e7", 1) for label in labels)
    assert [label_part(label) for label in labels] == [1, 2, 3]
    assert [(c.content_id, c.line_start, c.line_end) for c in citations] == [
        (a.content_id, 107, 107),
        (b.content_id, 231, 231),
        (c.content_id, 113, 113),
    ]
    assert citations[1].chunk_line_start == 231
    for sentence, (label,) in ((s, ls) for s, ls in answer_sentences(text)):
        cited = next(c for c in citations if c.label == label)
        chunk = {x.content_id: x for x in (a, b, c)}[cited.content_id]
        reported = Span(cited.page_start, cited.page_end, cited.line_start, cited.line_end)
        assert supports(sentence, span_lines(chunk, reported))
        assert locate(sentence, chunk) is not None


def test_one_passage_of_a_page_keeps_the_plain_label() -> None:
    a = _law_chunk(0, 10, ["Alpha holds.", "Beta holds too."])
    text, citations, _ = assemble(
        [
            Quote("Alpha holds.", (Source(a, 1, 1),)),
            Quote("Beta holds too.", (Source(a, 2, 2),)),
        ]
    )
    assert text == "Alpha holds. [Doc0e22e7_p1] Beta holds too. [Doc0e22e7_p1]"
    (citation,) = citations
    assert (citation.line_start, citation.line_end) == (10, 12)  # both sentences, nothing more


def test_extractive_answer_cites_each_sentence_at_its_lines() -> None:
    a = _law_chunk(
        0,
        107,
        [
            "Processors using automated decision-making shall ensure transparency.",
            "Unrelated sentence about storage.",
        ],
    )
    b = _law_chunk(1, 231, ["Individuals may refuse decisions made only by automation."])
    text, citations = extractive_answer(
        "What must processors ensure in automated decision-making?", make_hits(a, b)
    )
    parts = quoted_parts(text)
    assert parts and "transparency" in parts[0]
    first = citations[0]
    assert (first.line_start, first.line_end) == (107, 107)
    assert (first.chunk_line_start, first.chunk_line_end) == (107, 109)


def test_table_row_quote_is_supported_by_its_row() -> None:
    table = make_chunk(
        "| State | Permit | Handgun |\n|---|---|---|\n| Kansas | 1,000 | 5,000 |\n"
        "| Kentucky | 264,140 | 12,155 |",
        kind="table",
        line_map=((1, 3, 3), (1, 3, 3), (1, 4, 4), (1, 5, 5)),
        table_header=("State", "Permit / checks", "Handgun"),
        table_rows=(("Kansas", "1,000", "5,000"), ("Kentucky", "264,140", "12,155")),
    )
    text, citations = extractive_answer(
        "How many permit checks did Kentucky have?", make_hits(table), max_sentences=1
    )
    # The resolved header, the row key and the asked column only.
    assert text.startswith("State: Kentucky | Permit / checks: 264,140 [Doc")
    assert (citations[0].line_start, citations[0].line_end) == (5, 5)
    assert supports("State: Kentucky | Permit / checks: 264,140", "| Kentucky | 264,140 | 12,155 |")
    assert not supports("State: Kentucky | Permit / checks: 264,141", "| Kentucky | 264,140 |")
