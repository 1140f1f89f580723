"""KeywordIndex contract: every keyword backend in conftest.KEYWORD_BACKENDS must pass these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import date
from typing import Any

import numpy as np
import pytest
from store_cases import DIM, Corpus, check_metadata_readback, make_chunk, relabel, unit

from core.text import keyword_query_terms, keyword_tokens
from core.types import Principal, QueryFilter, ScoredId
from indexing.protocols import IndexedChunk, KeywordIndex

OpenKeyword = Callable[[], KeywordIndex]
ALL = QueryFilter(access_tokens=None)
NOBODY = QueryFilter.for_principal(Principal(user="bob"))
FINANCE = QueryFilter.for_principal(Principal(user="ann", tags=frozenset({"finance"})))


def ids(hits: list[ScoredId]) -> list[str]:
    return [h.content_id for h in hits]


@pytest.fixture
def loaded(keyword_store: OpenKeyword, corpus: Corpus) -> KeywordIndex:
    store = keyword_store()
    store.upsert(corpus.all())
    return store


def test_upsert_then_search_finds_it(loaded: KeywordIndex, corpus: Corpus) -> None:
    hits = loaded.search("nightly backup archive", 3, ALL)
    assert ids(hits)[0] == corpus.cid("next")
    assert all(h.score > 0 for h in hits)  # higher is better
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert loaded.name == "keyword"


def test_title_and_section_are_searched(keyword_store: OpenKeyword) -> None:
    store = keyword_store()
    chunk = make_chunk("t", "Body text only.", title="Kubernetes", section=("Ingress", "TLS"))
    store.upsert([IndexedChunk(chunk, unit(np.ones(DIM)))])
    assert ids(store.search("kubernetes", 5, ALL)) == [chunk.content_id]
    assert ids(store.search("ingress", 5, ALL)) == [chunk.content_id]


def test_upsert_twice_keeps_one_copy_and_replaces_text(
    loaded: KeywordIndex, corpus: Corpus
) -> None:
    loaded.upsert(corpus.all())
    loaded.upsert([corpus["next"], corpus["next"]])
    assert ids(loaded.search("nightly backup", 10, ALL)) == [corpus.cid("next")]
    assert loaded.content_ids() == {corpus.cid(k) for k in corpus.items}
    changed = replace(corpus["next"].chunk, text="Escalate to the on-call engineer.")
    loaded.upsert([IndexedChunk(changed, corpus["next"].vector)])
    assert loaded.search("nightly backup", 10, ALL) == []
    assert ids(loaded.search("on-call engineer", 10, ALL)) == [corpus.cid("next")]


def test_delete_removes_and_is_idempotent(loaded: KeywordIndex, corpus: Corpus) -> None:
    loaded.delete([corpus.cid("next")])
    loaded.delete([corpus.cid("next"), "0" * 32])
    assert loaded.search("nightly backup archive", 10, ALL) == []
    assert loaded.content_ids() == {corpus.cid(k) for k in corpus.items if k != "next"}


def test_acl_filter_applies_before_top_k(loaded: KeywordIndex, corpus: Corpus) -> None:
    query = "Payment Gateway finance revenue report"  # best: finance-only; next: public "en"
    assert ids(loaded.search(query, 1, ALL)) == [corpus.cid("fin")]
    assert ids(loaded.search(query, 1, NOBODY)) == [corpus.cid("en")]
    assert corpus.cid("fin") not in ids(loaded.search(query, 100, NOBODY))
    assert ids(loaded.search(query, 1, FINANCE)) == [corpus.cid("fin")]


def test_public_visible_to_all_and_roles_grant_access(loaded: KeywordIndex, corpus: Corpus) -> None:
    assert ids(loaded.search("华为总部", 5, NOBODY)) == [corpus.cid("zh")]
    assert loaded.search("年假 工龄", 5, NOBODY) == []
    manager = QueryFilter.for_principal(Principal(user="m", roles=frozenset({"manager"})))
    assert ids(loaded.search("年假 工龄", 5, manager)) == [corpus.cid("hr")]


def test_doc_type_doc_id_department_and_date_filters(loaded: KeywordIndex, corpus: Corpus) -> None:
    q = "ERR-1042 P12.1.2 数据库 华为 board"

    def only(**kw: object) -> set[str]:
        return set(ids(loaded.search(q, 10, QueryFilter(**kw))))  # type: ignore[arg-type]

    assert only(access_tokens=None, doc_types=frozenset({"report"})) == {corpus.cid("fin")}
    assert only(doc_types=frozenset({"report"})) == set()  # type allowed, ACL still applies
    doc = corpus["en"].chunk.doc_id
    assert only(access_tokens=None, doc_ids=frozenset({doc})) == {corpus.cid("en")}
    assert only(access_tokens=None, departments=frozenset({"finance"})) == {corpus.cid("fin")}
    recent = only(modified_from=date(2024, 4, 1), modified_to=date(2024, 12, 31))
    assert recent == {corpus.cid("decoy")}
    assert only(access_tokens=None, modified_to=date(2023, 12, 31)) == {corpus.cid("zh")}


def test_results_agree_with_reference_semantics(loaded: KeywordIndex, corpus: Corpus) -> None:
    q = "gateway ERR-1042 P12 华为 数据库 年假 backup"
    for where in [
        NOBODY,
        FINANCE,
        QueryFilter(doc_types=frozenset({"manual", "wiki"})),
        QueryFilter(access_tokens=frozenset({"hr"}), modified_from=date(2024, 1, 1)),
        QueryFilter(access_tokens=frozenset({"hr"}), departments=frozenset({"it", ""})),
    ]:
        expected = {c.chunk.content_id for c in corpus.all() if where.admits(c.chunk)}
        assert set(ids(loaded.search(q, 100, where))) == expected, where


def test_chinese_query_matches_chinese_text(loaded: KeywordIndex, corpus: Corpus) -> None:
    assert ids(loaded.search("华为的总部在哪里？", 3, ALL))[0] == corpus.cid("zh")
    assert ids(loaded.search("最大连接数是多少", 3, ALL))[0] == corpus.cid("zh_db")
    # Mixed script: the identifier inside Chinese text is found by itself.
    assert ids(loaded.search("max_connections", 3, ALL)) == [corpus.cid("zh_db")]


def test_identifier_query_ranks_exact_identifier_first(
    loaded: KeywordIndex, corpus: Corpus
) -> None:
    # "decoy" repeats "P12 1 2" as separate words, "en" holds the identifier once: only an
    # index that keeps identifiers whole ranks "en" first.
    hits = ids(loaded.search("P12.1.2", 5, NOBODY))
    assert hits[0] == corpus.cid("en")
    assert ids(loaded.search("ERR-1042", 5, NOBODY)) == [corpus.cid("en")]


@pytest.mark.parametrize("query", ["", "   ", "的 是 什么", "what is the", "？！"])
def test_empty_or_stop_word_query_returns_nothing(loaded: KeywordIndex, query: str) -> None:
    assert loaded.search(query, 5, ALL) == []


def test_query_syntax_is_never_interpreted(loaded: KeywordIndex) -> None:
    for query in ['"unbalanced', "NEAR(a b)", "text: x", "a AND OR NOT b", "*", "x^y"]:
        loaded.search(query, 5, ALL)  # must not raise


def test_persists_across_close_and_reopen(keyword_store: OpenKeyword, corpus: Corpus) -> None:
    store = keyword_store()
    store.upsert(corpus.all())
    store.delete([corpus.cid("decoy")])
    store.flush()
    before = store.search("Payment Gateway P12.1.2 华为", 5, NOBODY)
    store.close()
    reopened = keyword_store()
    assert reopened.search("Payment Gateway P12.1.2 华为", 5, NOBODY) == before
    assert reopened.content_ids() == {corpus.cid(k) for k in corpus.items if k != "decoy"}


def test_update_metadata_moves_filters_and_title_without_touching_text(
    keyword_store: OpenKeyword, corpus: Corpus
) -> None:
    store = keyword_store()
    store.upsert(corpus.all())
    after = relabel(corpus)
    chunks = [after[k].chunk for k in ("en", "fin", "zh")]
    store.update_metadata(chunks)
    store.update_metadata([*chunks, make_chunk("ghost", "not held")])  # twice, unknown id
    assert store.content_ids() == {corpus.cid(k) for k in corpus.items}
    assert corpus.cid("en") not in ids(store.search("P12.1.2 gateway", 100, NOBODY))
    assert corpus.cid("fin") in ids(store.search("finance revenue report", 100, NOBODY))
    assert ids(store.search("zahlungsportal", 5, FINANCE)) == [corpus.cid("en")]  # new title
    assert ids(store.search("nightly backup", 5, ALL)) == [corpus.cid("next")]  # text kept
    q = "gateway ERR-1042 P12 华为 数据库 年假 backup finance"
    wheres = [
        NOBODY,
        FINANCE,
        QueryFilter(doc_types=frozenset({"faq"})),
        QueryFilter(departments=frozenset({"legal"}), modified_from=date(2024, 6, 1)),
    ]
    for where in wheres:
        expected = {c.chunk.content_id for c in after.all() if where.admits(c.chunk)}
        assert set(ids(store.search(q, 100, where))) == expected, where


def test_english_analysis_stems_possessives_and_hyphens(keyword_store: OpenKeyword) -> None:
    store = keyword_store()
    docs = {
        "a": "The operator's policies require multi-factor authentication for administrators.",
        "b": "Running the nightly backups is the responsibility of the storage team.",
        "c": "Quarterly reports list every payment processed by the finance office.",
    }
    chunks = {k: make_chunk(k, v) for k, v in docs.items()}
    store.upsert([IndexedChunk(c, unit(np.ones(DIM))) for c in chunks.values()])
    cid = {k: c.content_id for k, c in chunks.items()}
    # Inflections meet their stems: policy/policies, administrator(s), run/running, backup(s).
    assert ids(store.search("policy for an administrator", 3, ALL))[0] == cid["a"]
    assert ids(store.search("who runs a nightly backup", 3, ALL))[0] == cid["b"]
    # Possessive and hyphenation: "operators" and "multifactor" match "operator's multi-factor".
    assert ids(store.search("operators multifactor", 3, ALL))[0] == cid["a"]
    assert ids(store.search("multi-factor", 3, ALL))[0] == cid["a"]
    # Stop words alone match nothing.
    assert store.search("which of the were", 3, ALL) == []


def test_other_languages_meet_their_inflections_particles_and_scripts(
    keyword_store: OpenKeyword,
) -> None:
    """Both backends analyse German, Russian, Korean and Japanese the same way (core.lang):
    an inflected name, a word with another particle, a katakana word are found."""
    store = keyword_store()
    docs = {
        "ru": "Новосибирск был основан в 1893 году при строительстве моста через Обь.",
        "de": "Die Universität Heidelberg wurde 1386 gegründet und ist die älteste Deutschlands.",
        "ko": "서울은 대한민국의 수도이며 인구는 약 940만 명이다.",
        "ja": "富士山の標高は3776メートルで、日本で最も高い山である。",
    }
    chunks = {k: make_chunk(k, v) for k, v in docs.items()}
    store.upsert([IndexedChunk(c, unit(np.ones(DIM))) for c in chunks.values()])
    cid = {k: c.content_id for k, c in chunks.items()}
    assert ids(store.search("В каком году основали Новосибирска?", 3, ALL))[0] == cid["ru"]
    assert (
        ids(store.search("Wann wurde die Heidelberger Universitäten gegründet?", 3, ALL))[0]
        == cid["de"]
    )
    assert ids(store.search("서울의 인구", 3, ALL))[0] == cid["ko"]
    assert ids(store.search("富士山は何メートル", 3, ALL))[0] == cid["ja"]
    # A question's function words alone match nothing.
    assert store.search("Wann wurde die", 3, ALL) == []


def test_held_metadata_reads_back_and_shows_stale_fields(
    keyword_store: Any, corpus: Corpus
) -> None:
    check_metadata_readback(keyword_store(), corpus)


def _reference_frequency(corpus: Corpus, term: str) -> int | None:
    """Chunks holding the term's rarest query token in text, title or section (None: the
    analysis drops the term)."""
    tokens = keyword_query_terms(term)
    if not tokens:
        return None
    held = [
        set(keyword_tokens(c.chunk.text))
        | set(keyword_tokens(c.chunk.title))
        | set(keyword_tokens(" ".join(c.chunk.section_path)))
        for c in corpus.all()
    ]
    return min(sum(t in h for h in held) for t in tokens)


def test_document_frequencies_agree_with_reference(loaded: KeywordIndex, corpus: Corpus) -> None:
    terms = ["backup", "backups", "nightly", "华为", "数据库", "err-1042", "the", "zzzunseen"]
    n, df = loaded.document_frequencies(terms)
    assert n == len(corpus.all())
    expected = {t: f for t in terms if (f := _reference_frequency(corpus, t)) is not None}
    assert df == expected
    assert "the" not in df  # a stop word is left out, not counted as rare
    assert df["zzzunseen"] == 0
    assert df["backup"] == df["backups"] >= 1  # analysed like a query: one stem
    assert loaded.document_frequencies([]) == (n, {})


def test_document_frequencies_follow_deletes(loaded: KeywordIndex, corpus: Corpus) -> None:
    n, before = loaded.document_frequencies(["nightly"])
    loaded.delete([corpus.cid("next")])
    n_after, after = loaded.document_frequencies(["nightly"])
    assert n_after == n - 1
    assert after["nightly"] == before["nightly"] - 1
