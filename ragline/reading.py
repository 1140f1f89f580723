"""Reading documents for display, the same for every door (the web console's viewer routes,
MCP's document list): which documents a caller sees, a version's passages by page, its
original bytes, where a cited passage lives.

A document the caller may not see is `NotFound`, exactly like one that does not exist, so
ACL-tagged documents do not leak through their ids. The original bytes are not PII-masked:
they are for keys that may write the document and the configured readers
(`ragline.writes.original_denial`); anyone else is `Forbidden`, pointed at the masked text.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.errors import Forbidden, NotFound
from core.ids import path_from_uri, version_of
from core.types import Document, Principal
from ragline.app import Ragline
from ragline.render import passage_view
from ragline.writes import original_denial

VIEWABLE = frozenset({"pending", "current", "superseded"})  # version states that can be opened


class DocumentReader:
    def __init__(self, rag: Ragline) -> None:
        self.rag = rag

    def documents(self, principal: Principal) -> Iterator[Document]:
        """The documents the principal may see, in the store's order."""
        return (d for d in self.rag.stores.metadata.documents() if principal.can_see(d.acl_tags))

    def catalog(self, principal: Principal, limit: int) -> list[dict[str, Any]]:
        """Visible documents with their current version and how many versions they have."""
        meta = self.rag.stores.metadata
        out = []
        for doc in self.documents(principal):
            out.append(
                {
                    "doc_id": doc.doc_id,
                    "title": doc.title,
                    "source": doc.source,
                    "doc_type": doc.doc_type,
                    "acl_tags": sorted(doc.acl_tags),
                    "current_version": meta.current_version(doc.doc_id),
                    "versions": len(meta.versions(doc.doc_id)),
                }
            )
            if len(out) >= limit:
                break
        return out

    def view(self, principal: Principal, doc_id: str, version: str = "") -> dict[str, Any]:
        """A version's passages by page (default: the current one), with line spans: the
        indexed, PII-masked text, tables as cells. A passage spanning pages is listed
        under each."""
        doc = self.rag.require_document(doc_id, principal)
        v = self._version(doc_id, version)
        pages: dict[int, list[dict[str, Any]]] = {}
        items = self.rag.stores.metadata.version_items(doc_id, v)
        for item in sorted(items, key=lambda i: i.chunk.ordinal):
            c = item.chunk
            entry = {
                **passage_view(c),
                "header": list(c.table_header),
                "rows": [list(r) for r in c.table_rows],
            }
            # Under every page it spans: a sentence of it on its second page is cited
            # [Doc…_p2], and a client opening page 2 must find it there.
            for page in range(c.page_start, max(c.page_start, c.page_end) + 1):
                pages.setdefault(page, []).append(entry)
        return {
            "doc_id": doc_id,
            "version": v,
            "title": doc.title,
            "source": doc.source,
            "doc_type": doc.doc_type,
            # Whether this caller can fetch the original (it exists and is theirs to see).
            "has_file": self._denial(principal, doc) is None and self._has_original(doc, v),
            "pages": [{"page": p, "passages": pages[p]} for p in sorted(pages)],
        }

    def original(self, principal: Principal, doc_id: str, version: str = "") -> tuple[Path, str]:
        """The file holding a version's original bytes on this server, and the document's
        type."""
        doc = self.rag.require_document(doc_id, principal)
        if (why := self._denial(principal, doc)) is not None:
            self.rag.metrics.acl_denials.labels(
                endpoint="/v1/documents/file", reason="original"
            ).inc()
            raise Forbidden(why)
        v = self._version(doc_id, version)
        path = self._original(doc, v)
        if path is None:
            raise NotFound(f"the original file of version {v} is not kept on this server")
        return path, doc.doc_type

    def passage(self, principal: Principal, content_id: str) -> dict[str, Any]:
        """Where a cited passage lives (document, version, pages, lines), also for a
        superseded version that old answers still cite."""
        meta = self.rag.stores.metadata
        chunk = meta.serving([content_id]).get(content_id)
        if chunk is None:  # an earlier version's, while its document and version are kept
            found = meta.items([content_id])
            chunk = found[0].chunk if found else None
            if chunk is not None and (
                meta.document(chunk.doc_id) is None
                or not self._viewable(chunk.doc_id, chunk.version)
            ):
                chunk = None
        if chunk is None or not principal.can_see(chunk.acl_tags):
            raise NotFound(f"no passage {content_id}")
        return {
            "content_id": chunk.content_id,
            "doc_id": chunk.doc_id,
            "version": chunk.version,
            "label": chunk.label,
            "page_start": chunk.page_start,
            "page_end": chunk.page_end,
            "line_start": chunk.line_start,
            "line_end": chunk.line_end,
            "doc_type": chunk.doc_type,
            "source": chunk.source,
            "title": chunk.title,
        }

    def _version(self, doc_id: str, version: str) -> str:
        meta = self.rag.stores.metadata
        if not version:
            current = meta.current_version(doc_id)
            if current is None:
                raise NotFound(f"document {doc_id} has no searchable version")
            return current
        if not self._viewable(doc_id, version):
            raise NotFound(f"document {doc_id} has no version {version}")
        return version

    def _viewable(self, doc_id: str, version: str) -> bool:
        """A version that is, was or is about to be searchable: answers given before a new
        version came still cite the one they quoted. (The callers know the document is
        not deleted.)"""
        versions = self.rag.stores.metadata.versions(doc_id)
        return any(v.version == version and v.status in VIEWABLE for v in versions)

    def _denial(self, principal: Principal, doc: Document) -> str | None:
        cfg = self.rag.settings.originals
        return original_denial(principal, doc, cfg.readers, cfg.roles)

    def _original(self, doc: Document, version: str) -> Path | None:
        """The original bytes of this version, if this server still has them: the
        content-addressed upload, or the source file while it still has these bytes."""
        if doc.source.startswith("upload:"):
            return self.rag.uploads.original(version)
        source = path_from_uri(doc.source) if doc.source.startswith("file:") else None
        if source is not None and source.is_file() and version_of(source.read_bytes()) == version:
            return source
        return None

    def _has_original(self, doc: Document, version: str) -> bool:
        """Whether `_original` would find the bytes; an upload's are not fetched to say so."""
        if doc.source.startswith("upload:"):
            return self.rag.uploads.holds(version)
        return self._original(doc, version) is not None
