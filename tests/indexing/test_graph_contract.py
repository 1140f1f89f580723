"""GraphStore contract: every graph backend in conftest.GRAPH_BACKENDS must pass these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import date
from typing import Any

import numpy as np
import pytest
from store_cases import DIM, Corpus, check_metadata_readback, make_chunk, relabel, unit

from core.types import Chunk, Principal, QueryFilter, ScoredId
from indexing.protocols import GraphStore, IndexedChunk

OpenGraph = Callable[[], GraphStore]
ALL = QueryFilter(access_tokens=None)
NOBODY = QueryFilter.for_principal(Principal(user="bob"))
FINANCE = QueryFilter.for_principal(Principal(user="ann", tags=frozenset({"finance"})))


def ids(hits: list[ScoredId]) -> list[str]:
    return [h.content_id for h in hits]


def item(chunk: Chunk) -> IndexedChunk:
    return IndexedChunk(chunk, unit(np.ones(DIM)))


@pytest.fixture
def loaded(graph_store: OpenGraph, corpus: Corpus) -> GraphStore:
    store = graph_store()
    store.upsert(corpus.all())
    return store


def test_entities_are_extracted_and_normalised(loaded: GraphStore, corpus: Corpus) -> None:
    entities = loaded.entities_of(corpus.cid("en"))
    assert {"p12.1.2", "err-1042", "payment gateway"} <= set(entities)
    assert "max_connections" in loaded.entities_of(corpus.cid("zh_db"))
    assert loaded.entities_of("0" * 32) == []
    assert loaded.name == "graph"


def test_supplied_entities_win_over_extraction(graph_store: OpenGraph) -> None:
    store = graph_store()
    chunk = make_chunk("s", "ERR-1042 happened.", entities=("Acme Router", " ACME router "))
    store.upsert([item(chunk)])
    assert store.entities_of(chunk.content_id) == ["acme router"]


def test_entity_search_finds_mentioning_chunk_then_next_neighbour(
    loaded: GraphStore, corpus: Corpus
) -> None:
    hits = ids(loaded.search(["ERR-1042"], 10, NOBODY))
    assert hits[0] == corpus.cid("en")  # mentions it (fin does too, but is hidden)
    assert corpus.cid("next") in hits[1:]  # NEXT of "en": hop 2, ranked after
    assert corpus.cid("fin") not in hits
    assert corpus.cid("zh") not in hits  # unrelated


def test_two_hop_through_shared_entity_ranks_after_direct(graph_store: OpenGraph) -> None:
    store = graph_store()
    direct = make_chunk("a", "", entities=("ERR-7001", "connection_pool"))
    shared = make_chunk("b", "", entities=("connection_pool", "retry budget"))
    far = make_chunk("c", "", entities=("retry budget",))  # 3 hops away: not reached
    store.upsert([item(c) for c in (direct, shared, far)])
    hits = store.search(["err-7001"], 10, ALL)
    assert ids(hits) == [direct.content_id, shared.content_id]
    assert hits[0].score > hits[1].score > 0


def test_more_query_entities_reached_ranks_higher(graph_store: OpenGraph) -> None:
    store = graph_store()
    both = make_chunk("both", "", entities=("ERR-1", "P1.2.3"))
    one = make_chunk("one", "", entities=("ERR-1",))
    store.upsert([item(one), item(both)])
    assert ids(store.search(["P1.2.3", "err-1"], 10, ALL)) == [both.content_id, one.content_id]


def test_each_query_entity_counts_once_per_chunk(graph_store: OpenGraph) -> None:
    """A chunk reached by the same entity along several paths (directly, through NEXT,
    through a shared entity) scores as if reached once, by its most direct path."""
    store = graph_store()
    first = make_chunk("n", "", doc="d", entities=("ERR-5", "pool"))
    second = make_chunk("n", "", doc="d", ordinal=1, entities=("ERR-5", "pool"))
    alone = make_chunk("alone", "", entities=("ERR-5",))
    store.upsert([item(c) for c in (first, second, alone)])
    hits = store.search(["ERR-5"], 10, ALL)
    assert len(hits) == 3
    assert hits[0].score == pytest.approx(hits[2].score)


def test_rare_entity_outweighs_common_one(graph_store: OpenGraph) -> None:
    store = graph_store()
    common = [make_chunk(f"c{i}", "", entities=("gateway",)) for i in range(5)]
    rare = make_chunk("rare", "", entities=("ERR-9999",))
    store.upsert([item(c) for c in [*common, rare]])
    assert ids(store.search(["gateway", "ERR-9999"], 1, ALL)) == [rare.content_id]


def test_acl_filter_applies_before_top_k(loaded: GraphStore, corpus: Corpus) -> None:
    query = ["finance", "revenue", "ERR-1042", "payment gateway"]  # best: "fin"
    assert ids(loaded.search(query, 1, ALL)) == [corpus.cid("fin")]
    assert ids(loaded.search(query, 1, NOBODY)) == [corpus.cid("en")]
    assert corpus.cid("fin") not in ids(loaded.search(query, 100, NOBODY))
    assert ids(loaded.search(query, 1, FINANCE)) == [corpus.cid("fin")]


def test_hidden_chunk_does_not_lead_to_its_neighbours(graph_store: OpenGraph) -> None:
    store = graph_store()
    secret = make_chunk("s", "", doc="d", entities=("ERR-31337",), tags=frozenset({"sec"}))
    after = make_chunk("s", "", doc="d", ordinal=1, entities=("patch notes",))
    store.upsert([item(secret), item(after)])
    assert store.search(["ERR-31337"], 5, NOBODY) == []
    sec = QueryFilter(access_tokens=frozenset({"sec"}))
    assert ids(store.search(["ERR-31337"], 5, sec)) == [secret.content_id, after.content_id]


def test_doc_type_doc_id_department_and_date_filters(loaded: GraphStore, corpus: Corpus) -> None:
    q = ["ERR-1042", "P12.1.2", "max_connections", "华为"]

    def only(**kw: object) -> set[str]:
        return set(ids(loaded.search(q, 10, QueryFilter(**kw))))  # type: ignore[arg-type]

    assert only(access_tokens=None, doc_types=frozenset({"report"})) == {corpus.cid("fin")}
    assert only(doc_types=frozenset({"faq"})) == {corpus.cid("zh_db")}
    doc = corpus["en"].chunk.doc_id
    by_doc = only(access_tokens=None, doc_ids=frozenset({doc}))
    assert by_doc == {corpus.cid("en"), corpus.cid("next")}
    assert only(access_tokens=None, departments=frozenset({"finance"})) == {corpus.cid("fin")}
    # decoy is reached through "release", an entity it shares with "en".
    recent = {corpus.cid("en"), corpus.cid("next"), corpus.cid("decoy")}
    assert only(modified_from=date(2024, 1, 1)) == recent
    assert only(access_tokens=None, modified_to=date(2023, 12, 31)) == {corpus.cid("zh")}


def test_results_agree_with_reference_semantics(loaded: GraphStore, corpus: Corpus) -> None:
    every = sorted({e for k in corpus.items for e in loaded.entities_of(corpus.cid(k))})
    for where in [
        NOBODY,
        FINANCE,
        QueryFilter(doc_types=frozenset({"manual", "wiki"})),
        QueryFilter(access_tokens=frozenset({"hr"}), modified_from=date(2024, 1, 1)),
    ]:
        expected = {c.chunk.content_id for c in corpus.all() if where.admits(c.chunk)}
        assert set(ids(loaded.search(every, 100, where))) == expected, where


def test_unknown_or_empty_entities_return_nothing(loaded: GraphStore) -> None:
    assert loaded.search([], 5, ALL) == []
    assert loaded.search(["", "  "], 5, ALL) == []
    assert loaded.search(["no-such-entity-xyz"], 5, ALL) == []


def test_upsert_twice_is_idempotent(loaded: GraphStore, corpus: Corpus) -> None:
    before = loaded.search(["ERR-1042", "gateway"], 10, ALL)
    entities = loaded.entities_of(corpus.cid("en"))
    loaded.upsert(corpus.all())
    loaded.upsert([corpus["en"], corpus["en"]])
    assert loaded.search(["ERR-1042", "gateway"], 10, ALL) == before  # same scores too
    assert loaded.entities_of(corpus.cid("en")) == entities
    assert loaded.content_ids() == {corpus.cid(k) for k in corpus.items}


def test_upsert_replaces_entities(loaded: GraphStore, corpus: Corpus) -> None:
    changed = replace(corpus["zh_db"].chunk, entities=("pool size",))
    loaded.upsert([item(changed)])
    assert loaded.entities_of(corpus.cid("zh_db")) == ["pool size"]
    assert loaded.search(["max_connections"], 5, ALL) == []


def test_delete_removes_and_is_idempotent(loaded: GraphStore, corpus: Corpus) -> None:
    loaded.delete([corpus.cid("zh_db")])
    loaded.delete([corpus.cid("zh_db"), "0" * 32])
    assert loaded.search(["max_connections"], 5, ALL) == []
    assert loaded.entities_of(corpus.cid("zh_db")) == []
    assert loaded.content_ids() == {corpus.cid(k) for k in corpus.items if k != "zh_db"}


def test_persists_across_close_and_reopen(graph_store: OpenGraph, corpus: Corpus) -> None:
    store = graph_store()
    store.upsert(corpus.all())
    store.delete([corpus.cid("decoy")])
    store.flush()
    before = store.search(["ERR-1042", "华为"], 5, NOBODY)
    store.close()
    reopened = graph_store()
    assert reopened.search(["ERR-1042", "华为"], 5, NOBODY) == before
    assert reopened.content_ids() == {corpus.cid(k) for k in corpus.items if k != "decoy"}


def test_update_metadata_moves_filters_without_touching_entities(
    graph_store: OpenGraph, corpus: Corpus
) -> None:
    store = graph_store()
    store.upsert(corpus.all())
    every = sorted({e for k in corpus.items for e in store.entities_of(corpus.cid(k))})
    after = relabel(corpus)
    chunks = [after[k].chunk for k in ("en", "fin", "zh")]
    store.update_metadata(chunks)
    store.update_metadata([*chunks, make_chunk("ghost", "not held")])  # twice, unknown id
    assert store.content_ids() == {corpus.cid(k) for k in corpus.items}
    assert sorted({e for k in corpus.items for e in store.entities_of(corpus.cid(k))}) == every
    wheres = [
        NOBODY,
        FINANCE,
        QueryFilter(doc_types=frozenset({"faq"})),
        QueryFilter(departments=frozenset({"legal"}), modified_from=date(2024, 6, 1)),
    ]
    for where in wheres:
        expected = {c.chunk.content_id for c in after.all() if where.admits(c.chunk)}
        assert set(ids(store.search(every, 100, where))) == expected, where


def test_held_metadata_reads_back_and_shows_stale_fields(graph_store: Any, corpus: Corpus) -> None:
    check_metadata_readback(graph_store(), corpus)
