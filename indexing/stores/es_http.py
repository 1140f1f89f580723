"""The Elasticsearch REST calls both Elasticsearch stores make (keyword BM25 and dense kNN),
over httpx: one request helper with the store's error mapping, bulk with per-item failure
check, and content_id listing by search_after pages."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import httpx

from core.errors import StoreError

PAGE = 5000  # ids per page when listing content_ids


class EsHttp:
    def __init__(self, url: str, timeout_s: float) -> None:
        self.url = url.rstrip("/")
        self._http = httpx.Client(base_url=self.url, timeout=timeout_s)

    def call(
        self, method: str, path: str, body: Any = None, ok: Iterable[int] = (), **params: Any
    ) -> dict[str, Any]:
        """One request; a str body is NDJSON (bulk). Statuses in `ok` are not errors."""
        try:
            if isinstance(body, str):
                resp = self._http.request(
                    method,
                    path,
                    content=body.encode("utf-8"),
                    params=params,
                    headers={"content-type": "application/x-ndjson"},
                )
            else:
                resp = self._http.request(method, path, json=body, params=params)
        except httpx.HTTPError as exc:
            raise StoreError(f"elasticsearch unavailable: {type(exc).__name__}: {exc}") from exc
        if resp.status_code >= 400 and resp.status_code not in ok:
            raise StoreError(f"elasticsearch {method} {path}: {resp.status_code} {resp.text[:500]}")
        data: dict[str, Any] = resp.json() if resp.content else {}
        data.setdefault("status", resp.status_code)
        return data

    def bulk(self, lines: list[str]) -> None:
        """A bulk request; any item failing other than 404 (an absent id) raises."""
        if not lines:
            return
        result = self.call("POST", "/_bulk", "\n".join(lines) + "\n")
        if result.get("errors"):
            bad = [
                item
                for entry in result["items"]
                for item in entry.values()
                if item.get("status", 200) >= 300 and item.get("status") != 404
            ]
            if bad:
                raise StoreError(f"elasticsearch bulk failed for {len(bad)} items: {bad[0]}")

    def sources(self, index: str, fields: list[str]) -> dict[str, dict[str, Any]]:
        """Every document of `index`: id -> those `_source` fields, page by page."""
        out: dict[str, dict[str, Any]] = {}
        after: list[Any] | None = None
        while True:
            body: dict[str, Any] = {
                "size": PAGE,
                "query": {"match_all": {}},
                "_source": fields,
                "sort": [{"content_id": "asc"}],
            }
            if after is not None:
                body["search_after"] = after
            hits = self.call("POST", f"/{index}/_search", body)["hits"]["hits"]
            out.update((h["_id"], h.get("_source", {})) for h in hits)
            if len(hits) < PAGE:
                return out
            after = hits[-1]["sort"]

    def ids(self, index: str, query: dict[str, Any]) -> set[str]:
        """Every document id `query` matches in `index`, page by page."""
        out: set[str] = set()
        after: list[Any] | None = None
        while True:
            body: dict[str, Any] = {
                "size": PAGE,
                "query": query,
                "_source": False,
                "sort": [{"content_id": "asc"}],
            }
            if after is not None:
                body["search_after"] = after
            hits = self.call("POST", f"/{index}/_search", body)["hits"]["hits"]
            out.update(h["_id"] for h in hits)
            if len(hits) < PAGE:
                return out
            after = hits[-1]["sort"]

    def close(self) -> None:
        self._http.close()
