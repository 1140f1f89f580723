"""What every request handler needs, built once per API process by `create_app`'s
lifespan and reached through `request.app.state.ctx` (no module-level state)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated

from fastapi import Depends, Request

from core.errors import StoreError
from core.settings import Settings
from ragline.api.auth import KeyRing
from ragline.app import Ragline
from ragline.documents import DocumentJobs
from ragline.events import EventBus, IndexEvent
from ragline.limits import max_upload_bytes
from ragline.queries import Queries
from ragline.query_cache import QueryCache
from ragline.reading import DocumentReader
from ragline.worker.runner import TaskRunner

log = logging.getLogger("ragline.api")


@dataclass
class ApiContext:
    settings: Settings
    rag: Ragline
    runner: TaskRunner
    events: EventBus
    cache: QueryCache
    keys: KeyRing
    broker_url: str = ""

    @cached_property
    def documents(self) -> DocumentJobs:
        """Uploads, deletes, syncs and reindexes as jobs on this process's task runner."""
        return DocumentJobs(
            self.rag, self.runner, self.cache.invalidate, max_upload_bytes(self.settings.api)
        )

    @cached_property
    def queries(self) -> Queries:
        """Search and ask through this process's cache, the dense index checked first."""
        return Queries(self.rag, self.cache, self.before_query)

    @cached_property
    def reader(self) -> DocumentReader:
        """Documents for display: catalog, a version's passages, originals, passages."""
        return DocumentReader(self.rag)

    def on_event(self, event: IndexEvent) -> None:
        """Another process (a worker) changed the index: drop cached results and pick
        up the dense index it flushed (this process's copy is in memory). A deleted
        document's uploaded bytes also leave this host (the worker removed its own copies
        and the shared store's)."""
        self.cache.invalidate()
        self._refresh_dense()
        if event.kind == "deleted" and event.doc_id:
            try:
                self.rag.release_document(event.doc_id)
            except Exception:  # `ragline repair --uploads-only` removes them later
                log.exception("uploads of deleted document %s not released", event.doc_id)

    def _refresh_dense(self) -> bool:
        refresh = getattr(self.rag.stores.dense, "refresh", None)
        if not callable(refresh):
            return False
        try:
            changed = bool(refresh())
        except StoreError as exc:  # a damaged index: the store logged it and says why
            log.warning("dense index not reloaded: %s", exc)
            return False
        except Exception:  # a half-written index is retried on the next request
            log.exception("dense index refresh failed")
            return False
        if changed:
            self.cache.invalidate()
        return changed

    async def before_query(self) -> None:
        """One stat() on the event loop when nothing changed (covers a missed event too);
        only a reload goes to a thread."""
        changed = getattr(self.rag.stores.dense, "changed_on_disk", None)
        if callable(changed) and changed():
            await asyncio.to_thread(self._refresh_dense)


async def get_context(request: Request) -> ApiContext:
    # A coroutine, so FastAPI does not hand it to a worker thread (see `Caller`).
    ctx: ApiContext = request.app.state.ctx
    return ctx


Ctx = Annotated[ApiContext, Depends(get_context)]
