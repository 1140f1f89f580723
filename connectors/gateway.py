"""The knowledge gateway: rows and live status behind the rules every source shares.

For each call, in order: the role whitelist (default deny) before any connector is
touched; parameters checked and principal attributes bound; the connector called under the
source's timeout and circuit breaker; the freshness window applied; the execution audited;
every step added to the request's trace. Failures come back as a result that says what
happened (`unavailable`, `denied`, `invalid`), never as a hang.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from connectors.config import GatewayConfig, HttpSource, SqlSource, Template, may_use
from connectors.params import BindingDenied, InvalidParameter, resolve
from connectors.protocols import RowsConnector, SourceFailed, StatusConnector
from connectors.records import AuditRecord, GatewayRecords, Trace
from connectors.router import Decision, KnowledgeRouter
from core.blocks import (
    ContentBlock,
    Freshness,
    GatewayResult,
    Outcome,
    params_text,
    rows_label,
    status_label,
)
from core.types import Principal
from fusion.breaker import CircuitBreaker

log = logging.getLogger("ragline.gateway")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Shown:
    """What a refused caller is told instead of the audited outcome."""

    status: Outcome
    name_source: bool  # whether `source_id` goes back (it echoes the name asked for)


def _unknown_template(name: str, usable: list[str]) -> str:
    return f"no template {name[:64]!r}; known: {usable}"


def _unknown_source(name: str, usable: list[str]) -> str:
    return f"no status source {name[:64]!r}; known: {usable}"


@dataclass(frozen=True, slots=True)
class _Failed:
    """Why a guarded call gave no result; `not_found` when the source said "no such id"."""

    reason: str
    not_found: bool = False


# How long a source's "last updated" answer is reused before asking again.
_UPDATED_TTL_S = 30.0
# A source whose clock runs this far ahead is still taken at its word (age 0).
_CLOCK_SKEW_S = 300.0


class Gateway:
    def __init__(
        self,
        config: GatewayConfig,
        data_dir: Path,
        records: GatewayRecords,
        *,
        breaker_failures: int = 3,
        breaker_cooldown_s: float = 30.0,
        llm: Callable[[list[dict[str, str]]], str] | None = None,
        rows: Mapping[str, RowsConnector] | None = None,
        status: Mapping[str, StatusConnector] | None = None,
    ) -> None:
        self.config = config
        self.records = records
        self.router = KnowledgeRouter(config, llm)
        self._templates = config.templates()
        self._http = {h.id: h for h in config.http}
        self._sql = {s.id: s for s in config.sql}
        # Connectors open lazily: a database that is down fails its own calls, not startup.
        self._rows: dict[str, RowsConnector] = dict(rows or {})
        self._status: dict[str, StatusConnector] = dict(status or {})
        self._data_dir = data_dir
        self.breakers = {
            sid: CircuitBreaker(breaker_failures, breaker_cooldown_s)
            for sid in [*self._sql, *self._http]
        }
        self._updated: dict[str, tuple[float, datetime | None]] = {}
        self._executor: Executor = ThreadPoolExecutor(8, thread_name_prefix="gateway")

    # -- catalogue ------------------------------------------------------------------------
    def catalogue(self, principal: Principal) -> dict[str, Any]:
        """The templates and status sources this principal may use, described for agents."""
        return {
            "templates": [
                {
                    "name": t.name,
                    "source_id": s.id,
                    "description": t.description,
                    "params": {
                        n: {
                            "type": p.type,
                            "description": p.description,
                            **({"values": p.values} if p.values else {}),
                            **({"bound_to": p.bind} if p.bind else {}),
                            **({"default": p.default} if p.default is not None else {}),
                            # A bound parameter is given by the caller's own attribute;
                            # one without it names the value itself.
                            "required": p.required
                            and p.default is None
                            and not (p.bind and principal.attribute(p.bind) is not None),
                        }
                        for n, p in t.params.items()
                    },
                    "row_limit": t.limit,
                }
                for s in self.config.sql
                for t in s.templates
                if may_use(principal, t.roles or s.roles)
            ],
            "status_sources": [
                {
                    "id": h.id,
                    "description": h.description,
                    "params": {
                        n: {"pattern": p.pattern, "description": p.description}
                        for n, p in h.params.items()
                    },
                    "freshness_window_s": h.freshness_window_s,
                }
                for h in self.config.http
                if may_use(principal, h.roles)
            ],
        }

    def route(self, question: str, principal: Principal | None = None) -> Decision:
        return self.router.decide(question, principal)

    # -- rows -----------------------------------------------------------------------------
    def query_rows(
        self,
        principal: Principal,
        template: str,
        params: Mapping[str, Any],
        trace: Trace,
        n: int = 1,
    ) -> GatewayResult:
        found = self._templates.get(template)
        if found is None:
            trace.add("template_unknown", template=template[:64])
            return self._refused(
                trace,
                principal,
                "query_rows",
                "invalid",
                message=_unknown_template(template, self.config.usable_templates(principal)),
                source_id="",
                params=_printable(params),
                reason="unknown template",
                template=template[:64],
            )
        source, tpl = found
        base = {"template": template, "source_id": source.id}
        if not self._permit(principal, tpl.roles or source.roles, trace, source.id, template):
            # Audited as denied; answered exactly like an unknown name, so a key learns
            # nothing of the templates it may not use (README: "in errors too").
            return self._refused(
                trace,
                principal,
                "query_rows",
                "denied",
                message=_unknown_template(template, self.config.usable_templates(principal)),
                source_id=source.id,
                params=_printable(params),
                reason="role not allowed",
                template=template,
                shown=_Shown("invalid", name_source=False),
            )
        try:
            values = resolve(tpl, params, principal)
        except BindingDenied as e:
            trace.add(
                "permission", source_id=source.id, template=template, allowed=False, reason=str(e)
            )
            log.info("gateway denied [trace %s] %s: %s", trace.trace_id, principal.user, e)
            return self._refused(
                trace,
                principal,
                "query_rows",
                "denied",
                message=str(e),
                source_id=source.id,
                params=_printable(params),
                reason=str(e),
                template=template,
                detail=base,
            )
        except InvalidParameter as e:
            trace.add("invalid_parameter", template=template, reason=str(e))
            return self._refused(
                trace,
                principal,
                "query_rows",
                "invalid",
                message=str(e),
                source_id=source.id,
                params=_printable(params),
                reason=str(e),
                template=template,
                detail=base,
            )
        by_caller = [
            name
            for name, p in tpl.params.items()
            if p.bind and principal.attribute(p.bind) is not None
        ]
        bound = {tpl.params[name].bind: values[name] for name in by_caller}
        if bound:
            # The rows outside the caller's own attribute are filtered out: logged, not shown.
            trace.add("rows_restricted", template=template, by=bound)
            log.info(
                "gateway rows restricted [trace %s] %s %s to %s",
                trace.trace_id,
                principal.user,
                template,
                bound,
            )
        trace.add("params", template=template, params=values)
        started = time.perf_counter()
        outcome = self._guarded(
            source.id,
            source.timeout_s,
            trace,
            lambda: self._rows_connector(source).run(template, values, source.timeout_s),
        )
        ms = (time.perf_counter() - started) * 1000
        if isinstance(outcome, _Failed):
            return self._refused(
                trace,
                principal,
                "query_rows",
                "unavailable",
                message=f"source unavailable: {outcome.reason}",
                source_id=source.id,
                params=values,
                reason=outcome.reason,
                template=template,
                ms=ms,
                detail={**base, "params": values},
            )
        fetch = outcome
        self._audit(
            trace,
            principal,
            source.id,
            "rows",
            template,
            values,
            len(fetch.rows.rows),
            fetch.duration_ms,
            "ok",
        )
        trace.add(
            "rows",
            source_id=source.id,
            template=template,
            count=len(fetch.rows.rows),
            truncated=fetch.rows.truncated,
            duration_ms=round(fetch.duration_ms, 2),
        )
        freshness = self._freshness(source)
        if freshness.stale:
            trace.add("stale", source_id=source.id, age_s=freshness.age_s)
        block = ContentBlock(
            source_id=source.id,
            source_kind="rows",
            content=fetch.rows,
            confidence=1.0 if not freshness.stale else 0.6,
            permission_tags=_tags(tpl.roles or source.roles, bound),
            accessed_at=datetime.now(UTC),
            freshness=freshness,
            label=rows_label(template, n),
            title=tpl.description,
            locator={
                "template": template,
                "params": values,
                "row_count": len(fetch.rows.rows),
                "truncated": fetch.rows.truncated,
            },
        )
        return GatewayResult(
            trace.trace_id,
            "query_rows",
            "ok" if fetch.rows.rows else "empty",
            (block,),
            "" if fetch.rows.rows else "no rows match",
            source.id,
            # Parameters given by the caller's own attribute, not by the question.
            {**base, "params": values, "bound": by_caller},
        )

    def _rows_connector(self, source: SqlSource) -> RowsConnector:
        conn = self._rows.get(source.id)
        if conn is None:
            from connectors.sql_rows import SqlRowsConnector  # sqlglot: only when rows are asked

            conn = SqlRowsConnector(source, source.resolved_url(self._data_dir))
            self._rows[source.id] = conn
        return conn

    def _freshness(self, source: SqlSource) -> Freshness:
        """Against the source's window. A source that declares how to read its last update
        and gives none that makes sense (no rows, not a time, a time to come) is of
        unknown freshness: flagged, never served as fresh."""
        window = source.freshness_window_s
        age = self._age(source)
        if age is not None and age < -_CLOCK_SKEW_S:
            age = None
        if age is None and source.updated_at_sql and window > 0:
            return Freshness(window, None, True)
        return Freshness.of(None if age is None else max(0.0, age), window)

    def _age(self, source: SqlSource) -> float | None:
        if not source.updated_at_sql:
            return None
        now = time.monotonic()
        cached = self._updated.get(source.id)
        if cached is None or now - cached[0] > _UPDATED_TTL_S:
            try:
                cached = (now, self._rows_connector(source).updated_at())
            except SourceFailed:
                cached = (now, None)
            self._updated[source.id] = cached
        updated = cached[1]
        return None if updated is None else (datetime.now(UTC) - updated).total_seconds()

    # -- status ---------------------------------------------------------------------------
    def lookup_status(
        self,
        principal: Principal,
        source_id: str,
        params: Mapping[str, Any],
        trace: Trace,
        n: int = 1,
    ) -> GatewayResult:
        source = self._http.get(source_id)
        if source is None:
            trace.add("source_unknown", source_id=source_id[:64])
            return self._refused(
                trace,
                principal,
                "lookup_status",
                "invalid",
                message=_unknown_source(source_id, self.config.usable_sources(principal)),
                source_id=source_id[:64],
                params=_printable(params),
                reason="unknown status source",
            )
        if not self._permit(principal, source.roles, trace, source.id, ""):
            # Audited as denied, answered like an unknown source (see query_rows).
            return self._refused(
                trace,
                principal,
                "lookup_status",
                "denied",
                message=_unknown_source(source_id, self.config.usable_sources(principal)),
                source_id=source.id,
                params=_printable(params),
                reason="role not allowed",
                shown=_Shown("invalid", name_source=True),
            )
        from connectors.http_status import NotFound

        conn = self._status_connector(source)
        try:
            checked = conn.check(params)
        except InvalidParameter as e:
            trace.add("invalid_parameter", source_id=source.id, reason=str(e))
            return self._refused(
                trace,
                principal,
                "lookup_status",
                "invalid",
                message=str(e),
                source_id=source.id,
                params=_printable(params),
                reason=str(e),
            )
        started = time.perf_counter()
        outcome = self._guarded(
            source.id,
            source.timeout_s,
            trace,
            lambda: conn.fetch(checked, source.freshness_window_s),
            not_found=NotFound,
        )
        ms = (time.perf_counter() - started) * 1000
        if isinstance(outcome, _Failed) and outcome.not_found:
            return self._refused(
                trace,
                principal,
                "lookup_status",
                "empty",
                message=f"{source.id}: nothing found for {params_text(checked)}",
                source_id=source.id,
                params=checked,
                reason=outcome.reason,
                ms=ms,
            )
        if isinstance(outcome, _Failed):
            stale = conn.cached(checked)
            self._audit(
                trace,
                principal,
                source.id,
                "status",
                "",
                checked,
                0,
                ms,
                "unavailable",
                outcome.reason,
            )
            if stale is None:
                return GatewayResult(
                    trace.trace_id,
                    "lookup_status",
                    "unavailable",
                    source_id=source.id,
                    message=f"source unavailable: {outcome.reason}",
                )
            # The last good answer, flagged stale, beats no answer.
            trace.add("stale_fallback", source_id=source.id, fetched_at=stale.fetched_at)
            outcome = stale
        fetch = outcome
        age = (datetime.now(UTC) - fetch.fetched_at).total_seconds()
        freshness = Freshness.of(age, source.freshness_window_s)
        self._audit(
            trace,
            principal,
            source.id,
            "status",
            "",
            checked,
            1,
            ms,
            "ok",
            "stale" if freshness.stale else "",
        )
        trace.add(
            "status",
            source_id=source.id,
            url=fetch.url,
            cached=fetch.from_cache,
            attempts=fetch.attempts,
            age_s=round(age, 2),
            stale=freshness.stale,
        )
        block = ContentBlock(
            source_id=source.id,
            source_kind="status",
            content=fetch.fields,
            confidence=1.0 if not freshness.stale else 0.5,
            permission_tags=_tags(source.roles, {}),
            accessed_at=datetime.now(UTC),
            freshness=freshness,
            label=status_label(source.id, n),
            title=source.description,
            # The upstream's path, not its address (an internal host is no caller's
            # business; the trace keeps the whole URL for auditors).
            locator={
                "path": urlsplit(fetch.url).path,
                "params": checked,
                "cached": fetch.from_cache,
            },
        )
        return GatewayResult(
            trace.trace_id,
            "lookup_status",
            "ok",
            (block,),
            freshness.note(),
            source.id,
            {"params": checked},
        )

    def _status_connector(self, source: HttpSource) -> StatusConnector:
        conn = self._status.get(source.id)
        if conn is None:
            from connectors.http_status import HttpStatusConnector  # httpx: only when used

            conn = HttpStatusConnector(source)
            self._status[source.id] = conn
        return conn

    # -- shared rules -----------------------------------------------------------------------
    def _permit(
        self, principal: Principal, roles: list[str], trace: Trace, source_id: str, template: str
    ) -> bool:
        allowed = may_use(principal, roles)
        trace.add(
            "permission",
            source_id=source_id,
            template=template,
            allowed=allowed,
            roles=sorted(principal.roles),
        )
        if not allowed:
            log.info(
                "gateway denied [trace %s] %s (roles %s) on %s %s",
                trace.trace_id,
                principal.user,
                sorted(principal.roles),
                source_id,
                template,
            )
        return allowed

    def _guarded(
        self,
        source_id: str,
        timeout_s: float,
        trace: Trace,
        call: Callable[[], T],
        not_found: type[Exception] | None = None,
    ) -> T | _Failed:
        """`call()` under the source's breaker and timeout, or why it gave nothing."""
        breaker = self.breakers[source_id]
        if not breaker.allow():
            trace.add("breaker_open", source_id=source_id)
            return _Failed(
                f"circuit open after repeated failures (retry in {breaker.cooldown_s:g} s)"
            )
        started = time.perf_counter()
        future = self._executor.submit(call)
        try:
            value = future.result(timeout=timeout_s)
        except FutureTimeout:
            future.cancel()
            breaker.record_failure()
            trace.add("timeout", source_id=source_id, limit_s=timeout_s, breaker=breaker.state)
            return _Failed(f"timed out after {timeout_s:g} s")
        except Exception as e:
            if not_found is not None and isinstance(e, not_found):
                breaker.record_success()
                return _Failed(str(e), not_found=True)
            breaker.record_failure()
            reason = str(e) if isinstance(e, SourceFailed) else f"{type(e).__name__}: {e}"
            trace.add(
                "source_failed", source_id=source_id, reason=reason[:300], breaker=breaker.state
            )
            log.warning(
                "gateway source %s failed [trace %s]: %s", source_id, trace.trace_id, reason
            )
            return _Failed(reason)
        breaker.record_success()
        trace.add(
            "source_ok",
            source_id=source_id,
            duration_ms=round((time.perf_counter() - started) * 1000, 2),
        )
        return value

    def _refused(
        self,
        trace: Trace,
        principal: Principal,
        operation: str,
        status: Outcome,
        *,
        message: str,
        source_id: str,
        params: Mapping[str, Any],
        reason: str,
        template: str = "",
        ms: float = 0.0,
        detail: dict[str, Any] | None = None,
        shown: _Shown | None = None,
    ) -> GatewayResult:
        """A result without blocks (denied, invalid, unavailable, empty), audited with why.
        `shown` replaces what the caller is told (status, and whether the source is named)
        where it must not learn what the audit records (a name it may not use)."""
        kind = "rows" if operation == "query_rows" else "status"
        self._audit(trace, principal, source_id, kind, template, params, 0, ms, status, reason)
        if shown is not None:
            return GatewayResult(
                trace.trace_id,
                operation,
                shown.status,
                message=message,
                source_id=source_id if shown.name_source else "",
                detail={},
            )
        return GatewayResult(
            trace.trace_id,
            operation,
            status,
            message=message,
            source_id=source_id,
            detail=detail or {},
        )

    def _audit(
        self,
        trace: Trace,
        principal: Principal,
        source_id: str,
        kind: str,
        template: str,
        params: Mapping[str, Any],
        rows: int,
        ms: float,
        status: str,
        error: str = "",
    ) -> None:
        log.info(
            "gateway %s %s/%s [trace %s] %s: %s, %d rows, %.1f ms%s",
            kind,
            source_id,
            template or "-",
            trace.trace_id,
            principal.user,
            status,
            rows,
            ms,
            f" ({error})" if error else "",
        )
        try:
            self.records.audit(
                AuditRecord(
                    trace.trace_id,
                    datetime.now(UTC),
                    principal.user,
                    source_id,
                    kind,
                    template,
                    dict(params),
                    rows,
                    round(ms, 3),
                    status,
                    error,
                )
            )
        except Exception:  # the audit table failing is loud, but never hides the answer
            log.exception("gateway audit write failed [trace %s]", trace.trace_id)

    def template(self, name: str) -> Template | None:
        found = self._templates.get(name)
        return found[1] if found else None

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        for rows in self._rows.values():
            rows.close()
        for status in self._status.values():
            status.close()


def _tags(roles: list[str], bound: Mapping[str, Any]) -> tuple[str, ...]:
    return (*sorted(f"role:{r}" for r in roles), *(f"{k}:{v}" for k, v in sorted(bound.items())))


def _printable(params: Mapping[str, Any]) -> dict[str, Any]:
    """Refused values are audited as given (truncated): an injection attempt is evidence."""
    return {str(k)[:64]: str(v)[:200] for k, v in params.items()}
