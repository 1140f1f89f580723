"""DenseIndex contract: every dense backend in conftest.DENSE_BACKENDS must pass these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import date
from typing import Any

import numpy as np
import pytest
from store_cases import DIM, MODEL, Corpus, check_metadata_readback, make_chunk, relabel, unit

from core.errors import EmbedderMismatch
from core.types import Principal, QueryFilter
from indexing.protocols import DenseIndex, IndexedChunk

OpenDense = Callable[..., DenseIndex]
ALL = QueryFilter(access_tokens=None)  # superuser: nothing restricted
NOBODY = QueryFilter.for_principal(Principal(user="bob"))
FINANCE = QueryFilter.for_principal(Principal(user="ann", tags=frozenset({"finance"})))


def ids(hits: list) -> list[str]:
    return [h.content_id for h in hits]


@pytest.fixture
def loaded(dense_store: OpenDense, corpus: Corpus) -> DenseIndex:
    store = dense_store()
    store.upsert(corpus.all())
    return store


def test_upsert_then_search_finds_it_with_inner_product_score(
    loaded: DenseIndex, corpus: Corpus
) -> None:
    hits = loaded.search(corpus["zh"].vector, 3, ALL)
    assert hits[0].content_id == corpus.cid("zh")
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)  # normalised: self-similarity 1
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert loaded.name == "dense" and loaded.dim == DIM and loaded.model == MODEL


def test_upsert_twice_keeps_one_copy(loaded: DenseIndex, corpus: Corpus) -> None:
    loaded.upsert(corpus.all())
    loaded.upsert([corpus["zh"], corpus["zh"]])
    hits = loaded.search(corpus["zh"].vector, len(corpus.items) + 5, ALL)
    assert sorted(ids(hits)) == sorted(corpus.cid(k) for k in corpus.items)
    assert loaded.content_ids() == {corpus.cid(k) for k in corpus.items}


def test_upsert_replaces_vector_and_payload(loaded: DenseIndex, corpus: Corpus) -> None:
    moved = IndexedChunk(
        replace(corpus["zh"].chunk, acl_tags=frozenset({"hr"})), corpus["en"].vector
    )
    loaded.upsert([moved])
    assert corpus.cid("zh") not in ids(loaded.search(corpus["zh"].vector, 1, ALL))
    assert corpus.cid("zh") not in ids(loaded.search(corpus["en"].vector, 10, NOBODY))


def test_delete_removes_and_is_idempotent(loaded: DenseIndex, corpus: Corpus) -> None:
    loaded.delete([corpus.cid("zh")])
    loaded.delete([corpus.cid("zh"), "0" * 32])  # again, plus an unknown id
    assert corpus.cid("zh") not in ids(loaded.search(corpus["zh"].vector, 10, ALL))
    assert loaded.content_ids() == {corpus.cid(k) for k in corpus.items if k != "zh"}


def test_empty_index_returns_nothing(dense_store: OpenDense, corpus: Corpus) -> None:
    assert dense_store().search(corpus["zh"].vector, 5, ALL) == []


def test_acl_filter_applies_before_top_k(loaded: DenseIndex, corpus: Corpus) -> None:
    query = corpus["fin"].vector  # best match is finance-only, runner-up "en" is public
    assert ids(loaded.search(query, 1, ALL)) == [corpus.cid("fin")]
    assert ids(loaded.search(query, 1, NOBODY)) == [corpus.cid("en")]
    assert corpus.cid("fin") not in ids(loaded.search(query, 100, NOBODY))
    assert ids(loaded.search(query, 1, FINANCE)) == [corpus.cid("fin")]


def test_public_chunks_visible_to_everyone_and_roles_grant_access(
    loaded: DenseIndex, corpus: Corpus
) -> None:
    everything = set(corpus.items)
    visible = ids(loaded.search(corpus["zh"].vector, 100, NOBODY))
    assert set(visible) == {corpus.cid(k) for k in everything - {"fin", "hr"}}
    manager = QueryFilter.for_principal(Principal(user="m", roles=frozenset({"manager"})))
    assert corpus.cid("hr") in ids(loaded.search(corpus["hr"].vector, 1, manager))


def test_doc_type_doc_id_department_and_date_filters(loaded: DenseIndex, corpus: Corpus) -> None:
    q = corpus["fin"].vector
    by_type = loaded.search(q, 10, QueryFilter(access_tokens=None, doc_types=frozenset({"faq"})))
    assert ids(by_type) == [corpus.cid("zh_db")]
    doc = corpus["en"].chunk.doc_id
    by_doc = loaded.search(q, 10, QueryFilter(access_tokens=None, doc_ids=frozenset({doc})))
    assert set(ids(by_doc)) == {corpus.cid("en"), corpus.cid("next")}
    by_dept = loaded.search(q, 10, QueryFilter(departments=frozenset({"finance", "it"})))
    assert set(ids(by_dept)) == {corpus.cid("en"), corpus.cid("next")}  # fin hidden by ACL
    recent = QueryFilter(modified_from=date(2024, 4, 1), modified_to=date(2024, 12, 31))
    assert ids(loaded.search(q, 10, recent)) == [corpus.cid("decoy")]
    upto = QueryFilter(access_tokens=None, modified_to=date(2023, 12, 31))
    assert ids(loaded.search(q, 10, upto)) == [corpus.cid("zh")]  # undated never passes


def test_filter_matching_nothing_returns_nothing(loaded: DenseIndex, corpus: Corpus) -> None:
    none = QueryFilter(access_tokens=None, doc_types=frozenset({"no-such-type"}))
    assert loaded.search(corpus["zh"].vector, 5, none) == []


def test_results_agree_with_reference_semantics(loaded: DenseIndex, corpus: Corpus) -> None:
    """Every filter combination returns exactly what QueryFilter.admits admits."""
    filters = [
        NOBODY,
        FINANCE,
        QueryFilter(doc_types=frozenset({"manual", "report"})),
        QueryFilter.for_principal(
            Principal(tags=frozenset({"finance"})), departments=frozenset({"finance"})
        ),
        QueryFilter(access_tokens=frozenset({"hr"}), modified_from=date(2024, 1, 1)),
    ]
    for where in filters:
        expected = {c.chunk.content_id for c in corpus.all() if where.admits(c.chunk)}
        assert set(ids(loaded.search(corpus["zh"].vector, 100, where))) == expected, where


def test_persists_across_close_and_reopen(dense_store: OpenDense, corpus: Corpus) -> None:
    store = dense_store()
    store.upsert(corpus.all())
    store.delete([corpus.cid("decoy")])
    store.flush()
    before = store.search(corpus["fin"].vector, 5, NOBODY)
    store.close()
    reopened = dense_store()
    assert reopened.search(corpus["fin"].vector, 5, NOBODY) == before
    assert reopened.content_ids() == {corpus.cid(k) for k in corpus.items if k != "decoy"}


@pytest.mark.parametrize(("dim", "model"), [(DIM, "other-model"), (DIM * 2, MODEL)])
def test_reopening_with_another_embedder_raises(
    dense_store: OpenDense, corpus: Corpus, dim: int, model: str
) -> None:
    store = dense_store()
    store.upsert(corpus.all())
    store.flush()
    store.close()
    with pytest.raises(EmbedderMismatch, match="ragline repair --rebuild dense"):
        dense_store(dim=dim, model=model)


def test_wrong_dimension_vector_is_refused(dense_store: OpenDense) -> None:
    store = dense_store()
    chunk = make_chunk("x", "text")
    with pytest.raises(EmbedderMismatch):
        store.upsert([IndexedChunk(chunk, unit(np.ones(DIM + 1)))])
    with pytest.raises(EmbedderMismatch):
        store.search(unit(np.ones(DIM + 1)), 1, ALL)


def test_matches_brute_force_after_random_writes(dense_store: OpenDense) -> None:
    """Random upserts and deletes, then filtered top-k equals an exact numpy search over
    the chunks QueryFilter.admits: catches any drift between vectors and their payload."""
    rng = np.random.default_rng(99)
    store = dense_store()
    live: dict[str, IndexedChunk] = {}
    pool = [
        make_chunk(
            f"r{i}",
            "",
            doc=f"doc{i % 7}",
            ordinal=i,
            tags=frozenset({("a", "b", "c")[i % 3]}) if i % 4 == 0 else frozenset(),
            doc_type=("manual", "faq")[i % 2],
            department=("it", "hr", "")[i % 3],
            modified=date(2020 + i % 5, 1, 1) if i % 6 else None,
        )
        for i in range(120)
    ]
    for _ in range(30):
        picks = rng.choice(len(pool), size=8, replace=False)
        batch = [IndexedChunk(pool[p], unit(rng.standard_normal(DIM))) for p in picks]
        store.upsert(batch)
        live.update({b.chunk.content_id: b for b in batch})
        gone = [pool[p].content_id for p in rng.choice(len(pool), size=3, replace=False)]
        store.delete(gone)
        for cid in gone:
            live.pop(cid, None)
    assert store.content_ids() == set(live)
    for where in [
        ALL,
        NOBODY,
        QueryFilter(access_tokens=frozenset({"a", "c"}), doc_types=frozenset({"faq"})),
        QueryFilter(departments=frozenset({"hr", ""}), modified_from=date(2022, 1, 1)),
        QueryFilter(
            access_tokens=None, doc_ids=frozenset({pool[3].doc_id}), modified_to=date(2023, 6, 1)
        ),
    ]:
        query = unit(rng.standard_normal(DIM))
        admitted = [c for c in live.values() if where.admits(c.chunk)]
        exact = sorted(admitted, key=lambda c: -float(c.vector @ query))[:5]
        hits = store.search(query, 5, where)
        assert ids(hits) == [c.chunk.content_id for c in exact], where
        for hit, c in zip(hits, exact, strict=True):
            assert hit.score == pytest.approx(float(c.vector @ query), abs=1e-5)


def test_update_metadata_moves_filters_without_touching_vectors(
    dense_store: OpenDense, corpus: Corpus
) -> None:
    store = dense_store()
    store.upsert(corpus.all())
    after = relabel(corpus)
    chunks = [after[k].chunk for k in ("en", "fin", "zh")]
    store.update_metadata(chunks)
    store.update_metadata([*chunks, make_chunk("ghost", "not held")])  # twice, unknown id
    assert store.content_ids() == {corpus.cid(k) for k in corpus.items}
    query = corpus["en"].vector
    assert corpus.cid("en") not in ids(store.search(query, 100, NOBODY))
    assert ids(store.search(corpus["fin"].vector, 1, NOBODY)) == [corpus.cid("fin")]
    wheres = [
        NOBODY,
        FINANCE,
        QueryFilter(doc_types=frozenset({"faq"})),
        QueryFilter(departments=frozenset({"legal"}), modified_from=date(2024, 6, 1)),
    ]
    for where in wheres:
        expected = {c.chunk.content_id for c in after.all() if where.admits(c.chunk)}
        assert set(ids(store.search(query, 100, where))) == expected, where
    store.flush()
    store.close()
    reopened = dense_store()  # the new metadata is what was persisted
    expected = {c.chunk.content_id for c in after.all() if NOBODY.admits(c.chunk)}
    assert set(ids(reopened.search(query, 100, NOBODY))) == expected


def test_held_metadata_reads_back_and_shows_stale_fields(dense_store: Any, corpus: Corpus) -> None:
    check_metadata_readback(dense_store(), corpus)
