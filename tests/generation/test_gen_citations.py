"""Every label an LLM writes is checked against the hits; unknown ones are removed."""

from __future__ import annotations

import pytest
from gen_cases import make_chunk, make_hits

from core.types import Hit
from generation.citations import check_citations, normalise_labels

A = "ab12cd0000000000"
B = "ef3456aaaaaaaaaa"


@pytest.fixture
def hits() -> list[Hit]:
    return make_hits(
        make_chunk("Chapter text.", doc_id=A, page_start=3, page_end=4, ordinal=1),
        make_chunk("Other text.", doc_id=B, page_start=1, ordinal=2),
    )


def test_valid_labels_kept_and_fabricated_ones_removed(hits: list[Hit]) -> None:
    check = check_citations(
        "Alpha is one [Docab12cd_p3]. Beta is two [Docffffff_p2]. Gamma is three [Docef3456_p1].",
        hits,
    )
    assert check.text == "Alpha is one [Docab12cd_p3]. Beta is two. Gamma is three [Docef3456_p1]."
    assert check.removed_labels == ["[Docffffff_p2]"]
    assert [c.label for c in check.citations] == ["[Docab12cd_p3]", "[Docef3456_p1]"]
    assert check.citations[0].content_id == hits[0].chunk.content_id
    assert check.citations[1].content_id == hits[1].chunk.content_id


def test_page_must_lie_inside_a_retrieved_chunk_of_that_document(hits: list[Hit]) -> None:
    check = check_citations("In range [Docab12cd_p4]; out of range [Docab12cd_p5].", hits)
    assert check.text == "In range [Docab12cd_p4]; out of range."
    assert check.removed_labels == ["[Docab12cd_p5]"]
    # A page inside a multi-page chunk is cited as that page, resolving to the chunk.
    (citation,) = check.citations
    assert citation.label == "[Docab12cd_p4]"
    assert (citation.page_start, citation.page_end) == (3, 4)


@pytest.mark.parametrize(
    ("sloppy", "canonical"),
    [
        ("[Docab12cd_p3, Docab12cd_p4]", "[Docab12cd_p3][Docab12cd_p4]"),
        ("[Docab12cd p3]", "[Docab12cd_p3]"),
        ("【Docab12cd_p3】", "[Docab12cd_p3]"),
        ("［Docab12cd_p4］", "[Docab12cd_p4]"),
        ("[DocAB12CD_P3]", "[Docab12cd_p3]"),
        ("(Docab12cd, page 4)", "[Docab12cd_p4]"),
        ("[Docab12cd_p3-4]", "[Docab12cd_p3][Docab12cd_p4]"),
        ("[Docab12cd_p3；Docef3456_p1]", "[Docab12cd_p3][Docef3456_p1]"),
        ("Docab12cd_p3", "[Docab12cd_p3]"),
        ("[Docab12cd_p3][Docab12cd_p3]", "[Docab12cd_p3]"),
    ],
)
def test_sloppy_variants_are_normalised_and_kept(
    hits: list[Hit], sloppy: str, canonical: str
) -> None:
    assert normalise_labels(f"Fact {sloppy}.") == f"Fact {canonical}."
    check = check_citations(f"Fact {sloppy}.", hits)
    assert check.text == f"Fact {canonical}."
    assert check.removed_labels == []
    assert check.citations


def test_sloppy_fabricated_labels_are_removed_too(hits: list[Hit]) -> None:
    check = check_citations("One 【Docab12cd_p9】 two [Docxyz1_p1] three [Docab12cd_p3].", hits)
    assert check.text == "One two three [Docab12cd_p3]."
    assert check.removed_labels == ["[Docab12cd_p9]", "[Docxyz1_p1]"]


def test_ordinary_brackets_and_words_are_left_alone(hits: list[Hit]) -> None:
    text = "See the document page 3 [1] (in the appendix) [Docab12cd_p3]."
    check = check_citations(text, hits)
    assert check.text == text
    assert check.removed_labels == []


def test_no_hits_means_every_label_is_removed() -> None:
    check = check_citations("Claim [Docab12cd_p3].", [])
    assert check.text == "Claim."
    assert check.citations == [] and check.removed_labels == ["[Docab12cd_p3]"]


def test_a_plain_label_is_attached_to_the_passage_that_supports_the_sentence() -> None:
    law = "0e22e70000000000"
    first = make_chunk("Processors must keep decisions transparent.", doc_id=law, ordinal=1)
    second = make_chunk("Individuals may refuse automated decisions.", doc_id=law, ordinal=2)
    hits = make_hits(first, second)
    check = check_citations(
        "Processors must keep decisions transparent [Doc0e22e7_p1]. "
        "Individuals may refuse automated decisions [Doc0e22e7_p1].",
        hits,
    )
    # Two passages of one page: each sentence's label now names its own passage.
    assert check.text == (
        "Processors must keep decisions transparent [Doc0e22e7_p1.1]. "
        "Individuals may refuse automated decisions [Doc0e22e7_p1.2]."
    )
    assert [c.content_id for c in check.citations] == [first.content_id, second.content_id]
    assert all(s.supported for s in check.sentences) and check.unsupported == []


def test_numbered_prompt_labels_resolve_exactly_and_unsupported_sentences_are_flagged() -> None:
    law = "0e22e70000000000"
    first = make_chunk("Processors must keep decisions transparent.", doc_id=law, ordinal=1)
    second = make_chunk("Individuals may refuse automated decisions.", doc_id=law, ordinal=2)
    hits = make_hits(first, second)
    check = check_citations(
        "Individuals may refuse automated decisions [Doc0e22e7_p1.2]. "
        "The moon is made of cheese [Doc0e22e7_p1.1].",
        hits,
    )
    assert check.citations[0].content_id == second.content_id
    assert check.unsupported == ["The moon is made of cheese"]
    assert [s.supported for s in check.sentences] == [True, False]
