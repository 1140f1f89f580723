"""What auditors and knowledge administrators read, with who may read what, the same for
every door: the per-passage audit trail and the knowledge gaps.

Auditors (the role "auditor" or "admin") see every user's audit rows; anyone else sees
only their own questions, and only passages of documents they may read. Gaps quote other
people's questions: they are for keys that may write (knowledge administrators).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from core.errors import Forbidden
from core.times import naive_utc
from core.types import Principal
from indexing.protocols import GapRecord
from monitoring.audit import passage_rows
from ragline.app import Ragline

AUDIT_ROLES = frozenset({"auditor", "admin"})
# Gaps read for a reader who is no auditor, before those it may not see are left out.
_GAPS_SCANNED = 10_000


def is_auditor(principal: Principal) -> bool:
    return principal.superuser or bool(AUDIT_ROLES & principal.roles)


class Oversight:
    def __init__(self, rag: Ragline) -> None:
        self.rag = rag

    def audit_rows(
        self,
        principal: Principal,
        since: datetime | None = None,
        until: datetime | None = None,
        user: str | None = None,
        doc_id: str | None = None,
        limit: int = 1000,
        trace_id: str | None = None,
    ) -> list[dict[str, object]]:
        """One row per cited passage of the last `limit` answers in the time range (of one
        trace, or citing one document, when given), oldest first
        (`monitoring.audit.PASSAGE_COLUMNS`)."""
        meta = self.rag.stores.metadata
        auditor = is_auditor(principal)
        if not auditor:
            user = principal.user
        records = meta.query_log(
            naive_utc(since), naive_utc(until), user, limit, trace_id=trace_id, mentions=doc_id
        )
        rows = list(passage_rows(reversed(records), meta, doc_id))
        if auditor:
            return rows
        sees = self.rag.sees_documents(principal)
        return [row for row in rows if sees(str(row["doc_id"]))]

    def gaps(
        self,
        principal: Principal,
        since: datetime | None = None,
        status: str | None = "open",
        limit: int = 1000,
    ) -> list[GapRecord]:
        """Questions the documents do not answer, most asked first (`status` None: open and
        closed)."""
        if not (principal.can_write or principal.superuser):
            raise Forbidden("knowledge gaps need a key with can_write (RAGLINE_API__KEYS)")
        if is_auditor(principal):
            return self.rag.stores.metadata.gaps(since, status, limit)
        # The near misses are what the asker retrieved: only those of documents this reader
        # may see are shown (a document it gets 404 for must not show its id and title),
        # and the best coverage is theirs. A gap whose near misses are all hidden is about
        # material the reader may not see, and is not shown (auditors see every gap).
        sees = self.rag.sees_documents(principal)
        shown: list[GapRecord] = []
        for g in self.rag.stores.metadata.gaps(since, status, max(limit, _GAPS_SCANNED)):
            misses = tuple(m for m in g.near_misses if sees(str(m["doc_id"])))
            if len(misses) < len(g.near_misses):
                if not misses:
                    continue
                best = max(float(m.get("coverage", 0.0)) for m in misses)
                g = replace(g, near_misses=misses, best_coverage=min(best, g.best_coverage))
            shown.append(g)
            if len(shown) == limit:
                break
        return shown
