"""Elasticsearch specifics beyond the KeywordIndex contract: the alias over a concrete
index, the atomic reindex swap, and deletes by document version."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from servers import elastic_keyword
from store_cases import Corpus

from core.text import KEYWORD_ANALYSIS_VERSION
from core.types import QueryFilter
from indexing.stores.elastic_keyword import ElasticKeywordIndex

pytestmark = pytest.mark.integration
ALL = QueryFilter(access_tokens=None)


@pytest.fixture
def es(tmp_path: Path) -> Iterator[ElasticKeywordIndex]:
    store = elastic_keyword(tmp_path)
    yield store
    store.drop()
    store.close()


def test_alias_points_at_a_versioned_index(es: ElasticKeywordIndex) -> None:
    assert es._concrete() == [f"{es.alias}-v1"]


def test_reindex_swaps_the_alias_atomically(es: ElasticKeywordIndex, corpus: Corpus) -> None:
    es.upsert(corpus.all())
    before = [h.content_id for h in es.search("nightly backup archive", 3, ALL)]
    new = es.reindex_into_new_index(
        i for i in corpus.all() if i.chunk.content_id != corpus.cid("zh")
    )
    assert new == f"{es.alias}-v2" and es._concrete() == [new]
    # Same hits (scores move: the corpus, hence idf, differs).
    assert [h.content_id for h in es.search("nightly backup archive", 3, ALL)] == before
    assert es.content_ids() == {corpus.cid(k) for k in corpus.items if k != "zh"}
    es.upsert([corpus["zh"]])  # writes go through the alias to the new index
    assert es.search("华为总部", 3, ALL)[0].content_id == corpus.cid("zh")


def test_delete_by_document_version(es: ElasticKeywordIndex, corpus: Corpus) -> None:
    es.upsert(corpus.all())
    gateway = corpus["en"].chunk
    es.delete_version(gateway.doc_id, gateway.version)
    gone = {corpus.cid("en"), corpus.cid("next")}
    assert es.content_ids() == {corpus.cid(k) for k in corpus.items} - gone


def test_server_errors_are_store_errors(tmp_path: Path) -> None:
    from core.errors import StoreError

    with pytest.raises(StoreError, match="unavailable"):
        ElasticKeywordIndex("http://127.0.0.1:1", "ragline-test-nowhere", timeout_s=1)


def test_an_index_built_by_another_analysis_says_so(
    es: ElasticKeywordIndex, caplog: pytest.LogCaptureFixture
) -> None:
    """Traditional Chinese is cut as simplified since analysis version 4: an index built
    before holds the old tokens until it is rebuilt, and says so at start (SQLite did;
    Elasticsearch was silent). A rebuilt index carries the version."""
    assert es.analysis_version() == KEYWORD_ANALYSIS_VERSION
    # An index as an older Ragline made it: no version kept with its mapping.
    old = f"{es.alias}-legacy-v0"  # (outside the template's pattern, as before it)
    es._es.call("PUT", f"/{old}", {"mappings": {"properties": {"text": {"type": "text"}}}})
    first = es._concrete()[0]
    actions = [
        {"remove": {"index": first, "alias": es.alias}},
        {"add": {"index": old, "alias": es.alias}},
    ]
    es._es.call("POST", "/_aliases", {"actions": actions})
    es._es.call("DELETE", f"/{first}")
    assert es.analysis_version() == "1"
    with caplog.at_level("WARNING", logger="ragline.keyword"):
        es._ensure()
    assert "analysis version 1" in caplog.text and "--rebuild keyword" in caplog.text
    es.reindex_into_new_index([])
    assert es.analysis_version() == KEYWORD_ANALYSIS_VERSION
