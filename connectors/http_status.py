"""Live status over HTTP (httpx): a URL template filled from checked parameters, an auth
header from an environment variable, a per-request timeout, retries on GET only, fields
picked with JSONPath, and a TTL cache that never outlives the source's freshness window."""

from __future__ import annotations

import dataclasses
import os
import re
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx

from connectors.config import HttpSource
from connectors.jsonpath import compile_path, extract
from connectors.params import InvalidParameter
from connectors.protocols import SourceFailed, StatusFetch
from core.errors import ConfigError

_FIELD = re.compile(r"\{(\w+)\}")


class NotFound(SourceFailed):
    """The status source answered that the id does not exist (HTTP 404)."""


class HttpStatusConnector:
    def __init__(self, source: HttpSource, transport: httpx.BaseTransport | None = None) -> None:
        self.source_id = source.id
        self._source = source
        self._paths = {f: compile_path(p) for f, p in source.mapping.items()}
        fields = set(_FIELD.findall(source.url)) - {"base"}
        if fields != set(source.params):
            raise ConfigError(
                f"status source {source.id}: URL fields {sorted(fields)} "
                f"must be its params {sorted(source.params)}"
            )
        self._client = httpx.Client(timeout=source.timeout_s, transport=transport)
        self._cache: dict[tuple[tuple[str, str], ...], tuple[float, StatusFetch]] = {}
        self._lock = threading.Lock()

    def check(self, params: Mapping[str, str]) -> dict[str, str]:
        out = {}
        for name, spec in self._source.params.items():
            value = str(params.get(name, "")).strip()
            if not re.fullmatch(spec.pattern, value):
                raise InvalidParameter(f"{name}: {value!r} does not match {spec.pattern}")
            out[name] = value
        unknown = sorted(set(params) - set(self._source.params))
        if unknown:
            raise InvalidParameter(f"unknown parameter(s) {unknown} for {self.source_id}")
        return out

    def _url(self, params: Mapping[str, str]) -> str:
        base = os.environ.get(self._source.base_url_env, "") if self._source.base_url_env else ""
        if "{base}" in self._source.url and not base:
            raise SourceFailed(f"{self._source.base_url_env} is not set (base URL of this source)")

        def fill(m: re.Match[str]) -> str:
            return base.rstrip("/") if m.group(1) == "base" else quote(params[m.group(1)], safe="")

        return _FIELD.sub(fill, self._source.url)

    def _headers(self) -> dict[str, str]:
        if not self._source.auth_header:
            return {}
        secret = os.environ.get(self._source.auth_env, "") if self._source.auth_env else ""
        if not secret:
            raise SourceFailed(
                f"credential for {self.source_id} missing: set {self._source.auth_env}"
            )
        return {self._source.auth_header: self._source.auth_prefix + secret}

    def fetch(self, params: Mapping[str, str], max_age_s: float) -> StatusFetch:
        checked = self.check(params)
        key = tuple(sorted(checked.items()))
        ttl = self._source.cache_ttl_s
        if max_age_s > 0:  # a cached answer never outlives the freshness window
            ttl = min(ttl, max_age_s)
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None and now - hit[0] <= ttl:
            cached = hit[1]
            return StatusFetch(cached.fields, cached.url, cached.fetched_at, True, 0)
        url = self._url(checked)
        data, attempts = self._get(url)
        fields = {f: extract(data, p) for f, p in self._paths.items()} if self._paths else data
        result = StatusFetch(dict(fields), url, datetime.now(UTC), False, attempts)
        with self._lock:
            self._cache[key] = (time.monotonic(), result)
        return result

    def _get(self, url: str) -> tuple[Any, int]:
        """GET is idempotent, so a transport error or a 502/503/504 is retried with a short
        backoff; nothing else is (this connector sends nothing but GET)."""
        headers = self._headers()
        last = ""
        for attempt in range(1, self._source.retries + 2):
            try:
                resp = self._client.get(url, headers=headers)
            except httpx.TimeoutException:
                raise SourceFailed(f"timed out after {self._source.timeout_s:g} s") from None
            except httpx.HTTPError as e:
                last = f"{type(e).__name__}: {e}"
            else:
                if resp.status_code == 404:
                    raise NotFound(f"not found at {self.source_id}")
                if resp.status_code in (502, 503, 504):
                    last = f"HTTP {resp.status_code}"
                elif resp.status_code >= 400:
                    raise SourceFailed(f"HTTP {resp.status_code} from {self.source_id}")
                else:
                    try:
                        return resp.json(), attempt
                    except ValueError:
                        raise SourceFailed(f"{self.source_id} did not answer JSON") from None
            if attempt <= self._source.retries:
                time.sleep(min(0.1 * 2 ** (attempt - 1), 1.0))
        raise SourceFailed(last or "failed")

    def cached(self, params: Mapping[str, str]) -> StatusFetch | None:
        """The last good result for these parameters, however old (for a stale answer)."""
        key = tuple(sorted((k, str(v)) for k, v in params.items()))
        with self._lock:
            hit = self._cache.get(key)
        return dataclasses.replace(hit[1], from_cache=True, attempts=0) if hit else None

    def close(self) -> None:
        self._client.close()
