"""Dense index on Elasticsearch `dense_vector` kNN (production): no index file on any API
host, so API replicas are stateless and the vectors scale with the Elasticsearch cluster.

Each chunk is one document (`_id` = content_id) holding its vector and the filter fields
(ACL tags, doc type, doc id, department, date). Search is the `knn` clause with those
filters inside it (Elasticsearch applies a kNN filter during the graph search, so it is a
pre-filter, never a post-filter that could empty the top-k), over an HNSW graph of
int8-quantised vectors by default, with the top candidates rescored against the float
vectors (`rescore_vector`) so returned scores are exact inner products.

Vectors are L2-normalised (every Ragline embedder normalises), so the `dot_product`
similarity is the inner product; Elasticsearch reports it as (1 + dot) / 2, converted back.
The embedder's model name and dimension are kept in the mapping's `_meta`; opening the
index with another embedder raises EmbedderMismatch naming the rebuild command, like FAISS.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from typing import Any, Literal

import httpx
import numpy as np

from core.errors import EmbedderMismatch, StoreError
from core.types import Chunk, QueryFilter, ScoredId
from indexing.protocols import IndexedChunk
from indexing.stores.elastic_keyword import ElasticKeywordIndex
from indexing.stores.es_http import EsHttp

Quantisation = Literal["hnsw", "int8_hnsw", "int4_hnsw", "bbq_hnsw"]
_BULK_DOCS = 500
_KW = {"type": "keyword"}


def _mappings(dim: int, model: str, quantisation: Quantisation, m: int, ef: int) -> dict[str, Any]:
    return {
        "dynamic": "strict",
        "_meta": {"model": model, "dim": dim},
        "properties": {
            "content_id": _KW,
            "doc_id": _KW,
            "version": _KW,
            "vector": {
                "type": "dense_vector",
                "dims": dim,
                "index": True,
                "similarity": "dot_product",
                "index_options": {"type": quantisation, "m": m, "ef_construction": ef},
            },
            "doc_type": _KW,
            "department": _KW,
            "acl": _KW,
            "public": {"type": "boolean"},
            "modified": {"type": "date", "format": "strict_date"},
        },
    }


class ElasticDenseIndex:
    name = "dense"

    def __init__(
        self,
        url: str,
        index: str,
        dim: int,
        model: str,
        *,
        quantisation: Quantisation = "int8_hnsw",
        hnsw_m: int = 16,
        ef_construction: int = 100,
        num_candidates: int = 200,
        oversample: float = 3.0,
        timeout_s: float = 30.0,
        shards: int = 1,
        replicas: int = 0,
    ) -> None:
        if not re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", index):
            raise StoreError(f"invalid Elasticsearch index name {index!r}")
        self.index = index
        self.dim = dim
        self.model = model
        self._quantised = quantisation != "hnsw"
        self._num_candidates = num_candidates
        self._oversample = oversample
        self._es = EsHttp(url, timeout_s)
        self._dirty = False
        self._lock = threading.Lock()
        self._ensure(
            {"number_of_shards": shards, "number_of_replicas": replicas},
            _mappings(dim, model, quantisation, hnsw_m, ef_construction),
        )

    def _ensure(self, settings: dict[str, Any], mappings: dict[str, Any]) -> None:
        """Create the index if missing (idempotent: several processes may open it at once),
        then check it was built for this embedder."""
        self._es.call(
            "PUT", f"/{self.index}", {"settings": settings, "mappings": mappings}, ok=(400,)
        )
        found = self._es.call("GET", f"/{self.index}/_mapping")
        meta = next(iter(v for k, v in found.items() if k != "status"))["mappings"].get("_meta", {})
        if meta.get("model") != self.model or int(meta.get("dim", -1)) != self.dim:
            raise EmbedderMismatch(
                f"Elasticsearch dense index {self.index!r} was built with model "
                f"{meta.get('model')!r} (dim {meta.get('dim')}) but the configured embedder is "
                f"{self.model!r} (dim {self.dim}): a reindex is needed, run "
                "`ragline repair --rebuild dense`"
            )

    def drop(self) -> None:
        """Delete the index (tests, benches). Works after close() too."""
        try:
            resp = httpx.delete(f"{self._es.url}/{self.index}", timeout=30)
        except httpx.HTTPError as exc:
            raise StoreError(f"elasticsearch unavailable: {exc}") from exc
        if resp.status_code >= 400 and resp.status_code != 404:
            raise StoreError(f"elasticsearch DELETE /{self.index}: {resp.status_code}")

    # ---- writes ------------------------------------------------------------------------

    def _vector(self, vector: np.ndarray) -> list[float]:
        v = np.asarray(vector, dtype=np.float32).reshape(-1)
        if v.shape[0] != self.dim:
            raise EmbedderMismatch(
                f"vector of dim {v.shape[0]} for a dense index of dim {self.dim}: "
                "run `ragline repair --rebuild dense`"
            )
        return [float(x) for x in v]

    @staticmethod
    def _meta_fields(chunk: Chunk) -> dict[str, Any]:
        """The document-level fields filters read (what a metadata update replaces)."""
        return {
            "doc_type": chunk.doc_type,
            "department": chunk.department,
            "acl": sorted(chunk.acl_tags),
            "public": not chunk.acl_tags,
            "modified": chunk.modified.isoformat() if chunk.modified else None,
        }

    def _doc(self, chunk: Chunk, vector: np.ndarray) -> dict[str, Any]:
        return {
            "content_id": chunk.content_id,
            "doc_id": chunk.doc_id,
            "version": chunk.version,
            "vector": self._vector(vector),
            **self._meta_fields(chunk),
        }

    def _bulk(self, lines: list[str]) -> None:
        self._es.bulk(lines)
        if lines:
            self._dirty = True

    def upsert(self, items: Sequence[IndexedChunk]) -> None:
        latest = list({i.chunk.content_id: i for i in items}.values())
        docs = [(i.chunk.content_id, self._doc(i.chunk, i.vector)) for i in latest]  # checks dims
        for start in range(0, len(docs), _BULK_DOCS):
            lines: list[str] = []
            for cid, doc in docs[start : start + _BULK_DOCS]:
                lines.append(json.dumps({"index": {"_index": self.index, "_id": cid}}))
                lines.append(json.dumps(doc, ensure_ascii=False))
            self._bulk(lines)

    def update_metadata(self, chunks: Sequence[Chunk]) -> None:
        """Partial updates by id (the vector stays); an id this index does not hold answers
        404 (document_missing), which `_bulk` ignores."""
        latest = list({c.content_id: c for c in chunks}.values())
        for start in range(0, len(latest), _BULK_DOCS):
            lines: list[str] = []
            for chunk in latest[start : start + _BULK_DOCS]:
                action = {"update": {"_index": self.index, "_id": chunk.content_id}}
                lines.append(json.dumps(action))
                lines.append(json.dumps({"doc": self._meta_fields(chunk)}, ensure_ascii=False))
            self._bulk(lines)

    def delete(self, content_ids: Sequence[str]) -> None:
        ids = list(dict.fromkeys(content_ids))
        for start in range(0, len(ids), _BULK_DOCS):
            self._bulk(
                [
                    json.dumps({"delete": {"_index": self.index, "_id": c}})
                    for c in ids[start : start + _BULK_DOCS]
                ]
            )

    def refresh(self) -> bool:
        """Make acknowledged writes visible to searches. (The API calls `refresh()` before
        queries to pick up other processes' FAISS files; here every process reads the same
        cluster, so there is nothing to reload: False.)"""
        with self._lock:
            if self._dirty:
                self._es.call("POST", f"/{self.index}/_refresh")
                self._dirty = False
        return False

    def flush(self) -> None:
        self.refresh()

    # ---- reads -------------------------------------------------------------------------

    def content_ids(self) -> set[str]:
        self.refresh()
        return self._es.ids(self.index, {"match_all": {}})

    def metadata_signature(self, chunk: Chunk) -> str:
        return json.dumps(self._meta_fields(chunk), sort_keys=True)

    def held_metadata(self) -> dict[str, str]:
        self.refresh()
        fields = ["acl", "department", "doc_type", "modified", "public"]
        return {
            cid: json.dumps({f: src.get(f) for f in fields}, sort_keys=True)
            for cid, src in self._es.sources(self.index, fields).items()
        }

    def search(self, vector: np.ndarray, k: int, where: QueryFilter) -> list[ScoredId]:
        query = self._vector(vector)
        if k <= 0:
            return []
        self.refresh()
        knn: dict[str, Any] = {
            "field": "vector",
            "query_vector": query,
            "k": k,
            "num_candidates": max(self._num_candidates, 2 * k),
            "filter": ElasticKeywordIndex.filters(where),
        }
        if self._quantised:
            knn["rescore_vector"] = {"oversample": self._oversample}
        body = {"size": k, "knn": knn, "_source": False}
        hits = self._es.call("POST", f"/{self.index}/_search", body)["hits"]["hits"]
        # dot_product similarity is reported as (1 + dot) / 2.
        scored = [ScoredId(h["_id"], 2.0 * float(h["_score"]) - 1.0) for h in hits]
        return sorted(scored, key=lambda s: (-s.score, s.content_id))

    def close(self) -> None:
        self._es.close()
