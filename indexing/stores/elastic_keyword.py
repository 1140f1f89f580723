"""Keyword index on Elasticsearch (production), over its REST API with httpx.

Text is tokenised in Python exactly as for the embedded index (core.text.keyword_tokens:
jieba for Chinese, identifiers kept whole) and stored space-joined in fields analysed by the
built-in `whitespace` analyzer, so both backends see the same terms and BM25 ranks alike.
Raw and keyword fields (title, section path, doc type, department, acl tags, dates) serve
the filters, which sit in a bool `filter` clause: applied inside the query, before top-k.

The document `_id` is the content_id, so an upsert is a bulk `index` (idempotent) and a
delete is a bulk `delete` by id (no delete-by-query needed). The name in settings is an
alias over one concrete index (`<alias>-v<n>`), created from an index template;
`reindex_into_new_index` builds the next concrete index and swaps the alias atomically.

httpx rather than the official client: the 9.x client refuses 8.x servers and the REST
surface used here is small and stable.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from core.errors import StoreError
from core.text import KEYWORD_ANALYSIS_VERSION, keyword_query_terms, keyword_tokens
from core.types import Chunk, QueryFilter, ScoredId
from indexing.protocols import IndexedChunk
from indexing.stores.es_http import EsHttp

# Whole technical identifiers (p12.1.2, err-1042, max_connections) as query terms. They are
# indexed both whole and split; Lucene's idf (log(1 + ...)) keeps the split parts' weight
# where FTS5's nearly zeroes common terms, so without a boost a passage repeating "p12 1 2"
# would outrank the one holding the identifier itself.
log = logging.getLogger("ragline.keyword")

_IDENTIFIER = re.compile(r"[a-z0-9]+(?:[._\-/:][a-z0-9]+)+")
IDENTIFIER_BOOST = 3.0
_BULK_DOCS = 500  # documents per bulk request (a few MB at chunk size)

_TEXT = {"type": "text", "analyzer": "whitespace", "similarity": "BM25"}
_KW = {"type": "keyword"}
MAPPINGS: dict[str, Any] = {
    "dynamic": "strict",
    # The analysis the tokens were cut with: an index built by another says so at start.
    "_meta": {"analysis_version": KEYWORD_ANALYSIS_VERSION},
    "properties": {
        "content_id": _KW,
        "doc_id": _KW,
        "version": _KW,
        # Pre-tokenised (space-joined jieba tokens): what BM25 scores.
        "text": _TEXT,
        "title": _TEXT,
        "section": _TEXT,
        # Raw values: display, exact filters and boosts.
        "title_raw": _KW,
        "section_path": _KW,
        "doc_type": _KW,
        "department": _KW,
        "acl": _KW,
        "public": {"type": "boolean"},
        "modified": {"type": "date", "format": "strict_date"},
        "ordinal": {"type": "integer"},
        "source_trust": {"type": "float"},
    },
}


class ElasticKeywordIndex:
    """BM25 over text (weight 1), title and section path (boosted), as the embedded one."""

    name = "keyword"

    def __init__(
        self,
        url: str,
        alias: str,
        *,
        text_weight: float = 1.0,
        title_weight: float = 2.0,
        section_weight: float = 1.5,
        timeout_s: float = 30.0,
        english_analysis: bool = True,
        shards: int = 1,
        replicas: int = 0,
    ) -> None:
        if not re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", alias):
            raise StoreError(f"invalid Elasticsearch index name {alias!r}")
        self.alias = alias
        self._english = english_analysis
        self._fields = [f"text^{text_weight}", f"title^{title_weight}", f"section^{section_weight}"]
        self._es = EsHttp(url, timeout_s)
        self._settings = {"number_of_shards": shards, "number_of_replicas": replicas}
        # Writes are acknowledged durable (translog) but visible only after a refresh;
        # this instance refreshes before its own reads so it always sees its writes.
        self._dirty = False
        self._lock = threading.Lock()
        self._ensure()

    # ---- index, template and alias -----------------------------------------------------

    def _template(self) -> dict[str, Any]:
        return {
            "index_patterns": [f"{self.alias}-v*"],
            "template": {"settings": self._settings, "mappings": MAPPINGS},
            "priority": 100,
        }

    def _concrete(self) -> list[str]:
        found = self._es.call("GET", f"/_alias/{self.alias}", ok=(404,))
        return sorted(k for k in found if k != "status") if found["status"] != 404 else []

    def _ensure(self) -> None:
        """Template, first concrete index and alias, each only if missing (idempotent, so
        several processes may open the store at once)."""
        self._es.call("PUT", f"/_index_template/{self.alias}", self._template())
        if self._concrete():
            self._check_analysis()
            return
        first = f"{self.alias}-v1"
        self._es.call("PUT", f"/{first}", {"aliases": {self.alias: {}}}, ok=(400,))
        if not self._concrete():
            raise StoreError(f"could not create Elasticsearch index {first} for {self.alias}")

    def analysis_version(self) -> str:
        """The keyword analysis the index behind the alias was built with ("1" before
        versions were kept with Elasticsearch indexes)."""
        found = self._es.call("GET", f"/{self.alias}/_mapping")
        metas = [m.get("mappings", {}).get("_meta", {}) for k, m in found.items() if k != "status"]
        return str(metas[0].get("analysis_version", "1")) if metas else KEYWORD_ANALYSIS_VERSION

    def _check_analysis(self) -> None:
        built = self.analysis_version()
        if built != KEYWORD_ANALYSIS_VERSION:
            log.warning(
                "Elasticsearch keyword index %s was built by analysis version %s (now %s): "
                "text cut otherwise since (other languages, traditional Chinese) matches only "
                "after `ragline repair --rebuild keyword`",
                self.alias,
                built,
                KEYWORD_ANALYSIS_VERSION,
            )

    def reindex_into_new_index(self, items: Iterable[IndexedChunk]) -> str:
        """Bulk-load `items` (e.g. every serving chunk of the metadata store) into a new
        concrete index, then move the alias to it in one atomic `_aliases` call and drop the
        old index. Readers see the old index until the swap, the new one after."""
        old = self._concrete()
        numbers = [int(n.rsplit("-v", 1)[1]) for n in old if n.rsplit("-v", 1)[1].isdigit()]
        new = f"{self.alias}-v{max(numbers, default=0) + 1}"
        self._es.call("PUT", f"/{new}", {})
        batch: list[Chunk] = []
        for item in items:
            batch.append(item.chunk)
            if len(batch) >= _BULK_DOCS:
                self._bulk_index(new, batch)
                batch = []
        self._bulk_index(new, batch)
        self._es.call("POST", f"/{new}/_refresh")
        actions: list[dict[str, Any]] = [{"remove": {"index": o, "alias": self.alias}} for o in old]
        actions.append({"add": {"index": new, "alias": self.alias, "is_write_index": True}})
        self._es.call("POST", "/_aliases", {"actions": actions})
        for o in old:
            self._es.call("DELETE", f"/{o}", ok=(404,))
        return new

    def drop(self) -> None:
        """Delete every concrete index behind the alias and the template (tests, benches)."""
        for index in self._concrete():
            self._es.call("DELETE", f"/{index}", ok=(404,))
        self._es.call("DELETE", f"/_index_template/{self.alias}", ok=(404,))

    # ---- writes ------------------------------------------------------------------------

    @staticmethod
    def _meta_fields(chunk: Chunk, english: bool = True) -> dict[str, Any]:
        """The document-level fields: what a metadata update rewrites."""
        return {
            "title": " ".join(keyword_tokens(chunk.title, english)),
            "title_raw": chunk.title,
            "doc_type": chunk.doc_type,
            "department": chunk.department,
            "acl": sorted(chunk.acl_tags),
            "public": not chunk.acl_tags,
            "modified": chunk.modified.isoformat() if chunk.modified else None,
            "source_trust": chunk.source_trust,
        }

    @classmethod
    def _doc(cls, chunk: Chunk, english: bool = True) -> dict[str, Any]:
        return {
            "content_id": chunk.content_id,
            "doc_id": chunk.doc_id,
            "version": chunk.version,
            "text": " ".join(keyword_tokens(chunk.text, english)),
            "section": " ".join(keyword_tokens(" ".join(chunk.section_path), english)),
            "section_path": list(chunk.section_path),
            "ordinal": chunk.ordinal,
            **cls._meta_fields(chunk, english),
        }

    def _bulk_index(self, index: str, chunks: Sequence[Chunk]) -> None:
        lines: list[str] = []
        for chunk in chunks:
            lines.append(json.dumps({"index": {"_index": index, "_id": chunk.content_id}}))
            lines.append(json.dumps(self._doc(chunk, self._english), ensure_ascii=False))
        self._es.bulk(lines)

    def upsert(self, items: Sequence[IndexedChunk]) -> None:
        latest = list({item.chunk.content_id: item.chunk for item in items}.values())
        for i in range(0, len(latest), _BULK_DOCS):
            self._bulk_index(self.alias, latest[i : i + _BULK_DOCS])
            self._dirty = True

    def delete(self, content_ids: Sequence[str]) -> None:
        ids = list(dict.fromkeys(content_ids))
        for i in range(0, len(ids), _BULK_DOCS):
            self._es.bulk(
                [
                    json.dumps({"delete": {"_index": self.alias, "_id": c}})
                    for c in ids[i : i + _BULK_DOCS]
                ]
            )
            self._dirty = True

    def update_metadata(self, chunks: Sequence[Chunk]) -> None:
        """Partial updates by id; a chunk this index does not hold answers 404
        (document_missing), which `_bulk` ignores."""
        latest = list({c.content_id: c for c in chunks}.values())
        for i in range(0, len(latest), _BULK_DOCS):
            lines: list[str] = []
            for chunk in latest[i : i + _BULK_DOCS]:
                action = {"update": {"_index": self.alias, "_id": chunk.content_id}}
                lines.append(json.dumps(action))
                lines.append(
                    json.dumps({"doc": self._meta_fields(chunk, self._english)}, ensure_ascii=False)
                )
            self._es.bulk(lines)
            self._dirty = True

    def delete_version(self, doc_id: str, version: str) -> None:
        """Delete every chunk of one document version (ids looked up, then bulk-deleted:
        delete-by-query is not assumed to exist)."""
        query = {"bool": {"filter": [{"term": {"doc_id": doc_id}}, {"term": {"version": version}}]}}
        self.delete(sorted(self._ids(query)))

    def refresh(self) -> None:
        self._es.call("POST", f"/{self.alias}/_refresh")
        self._dirty = False

    def flush(self) -> None:
        """Bulk writes are durable when acknowledged; make them visible to every reader."""
        if self._dirty:
            self.refresh()

    # ---- reads -------------------------------------------------------------------------

    def _ids(self, query: dict[str, Any]) -> set[str]:
        self.flush()
        return self._es.ids(self.alias, query)

    def content_ids(self) -> set[str]:
        return self._ids({"match_all": {}})

    def metadata_signature(self, chunk: Chunk) -> str:
        return json.dumps(self._meta_fields(chunk, self._english), sort_keys=True)

    def held_metadata(self) -> dict[str, str]:
        self.flush()
        fields = [
            "acl",
            "department",
            "doc_type",
            "modified",
            "public",
            "source_trust",
            "title",
            "title_raw",
        ]
        return {
            cid: json.dumps({f: src.get(f) for f in fields}, sort_keys=True)
            for cid, src in self._es.sources(self.alias, fields).items()
        }

    @staticmethod
    def filters(where: QueryFilter) -> list[dict[str, Any]]:
        """`where` as Elasticsearch filter clauses (reference: QueryFilter.admits)."""
        out: list[dict[str, Any]] = []
        if where.access_tokens is not None:
            visible: list[dict[str, Any]] = [{"term": {"public": True}}]
            if where.access_tokens:
                visible.append({"terms": {"acl": sorted(where.access_tokens)}})
            out.append({"bool": {"should": visible, "minimum_should_match": 1}})
        for field, values in (
            ("doc_type", where.doc_types),
            ("doc_id", where.doc_ids),
            ("department", where.departments),
        ):
            if values:
                out.append({"terms": {field: sorted(values)}})
        dates: dict[str, str] = {}
        if where.modified_from:
            dates["gte"] = where.modified_from.isoformat()
        if where.modified_to:
            dates["lte"] = where.modified_to.isoformat()
        if dates:
            out.append({"range": {"modified": dates}})  # a missing date never matches
        return out

    def search(self, query: str, k: int, where: QueryFilter) -> list[ScoredId]:
        terms = keyword_query_terms(query, self._english)
        if not terms or k <= 0:
            return []
        idents = [t for t in terms if _IDENTIFIER.fullmatch(t)]
        words = [t for t in terms if t not in idents]
        # Terms are already tokens: the whitespace analyzer keeps them as they are, and a
        # match query never interprets query syntax.
        should = [
            {
                "multi_match": {
                    "query": " ".join(group),
                    "fields": self._fields,
                    "type": "most_fields",
                    "boost": boost,
                }
            }
            for group, boost in ((words, 1.0), (idents, IDENTIFIER_BOOST))
            if group
        ]
        body = {
            "size": k,
            "_source": False,
            "track_total_hits": False,
            "query": {
                "bool": {
                    "should": should,
                    "minimum_should_match": 1,
                    "filter": self.filters(where),
                }
            },
            "sort": [{"_score": "desc"}, {"content_id": "asc"}],
            "track_scores": True,
        }
        with self._lock:
            if self._dirty:
                self.refresh()
        hits = self._es.call("POST", f"/{self.alias}/_search", body)["hits"]["hits"]
        return [ScoredId(h["_id"], float(h["_score"])) for h in hits]

    def document_frequencies(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        tokens = {t: keyword_query_terms(t, self._english) for t in terms}
        wanted = sorted({x for xs in tokens.values() for x in xs})
        fields = [f.split("^")[0] for f in self._fields]
        # One request: the total and, per token, the chunks holding it in any BM25 field.
        body: dict[str, Any] = {"size": 0, "track_total_hits": True, "query": {"match_all": {}}}
        if wanted:
            body["aggs"] = {
                "df": {
                    "filters": {
                        "filters": {
                            str(i): {
                                "bool": {
                                    "should": [{"term": {f: x}} for f in fields],
                                    "minimum_should_match": 1,
                                }
                            }
                            for i, x in enumerate(wanted)
                        }
                    }
                }
            }
        with self._lock:
            if self._dirty:
                self.refresh()
        out = self._es.call("POST", f"/{self.alias}/_search", body)
        buckets = out.get("aggregations", {}).get("df", {}).get("buckets", {})
        held = {x: int(buckets.get(str(i), {}).get("doc_count", 0)) for i, x in enumerate(wanted)}
        n = int(out["hits"]["total"]["value"])
        return n, {t: min(held[x] for x in xs) for t, xs in tokens.items() if xs}

    def close(self) -> None:
        self._es.close()
