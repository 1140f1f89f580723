"""Value types that flow between the layers.

Frozen dataclasses, not pydantic models: they are created by the million on the hot path
(blocks, chunks, hits) and need no validation once built. The API layer converts them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from core.blocks import ContentBlock
from core.formats import doc_type_filter

BlockKind = Literal["heading", "paragraph", "table", "list", "code"]
ChunkKind = Literal["text", "table"]
VersionStatus = Literal["pending", "current", "superseded", "deleted", "failed"]


@dataclass(frozen=True, slots=True)
class Block:
    """One structural piece of a parsed document, with where it came from.

    `page` is 1-based; formats without pages use the sheet or section index instead.
    Lines are 1-based and inclusive, counted within the page (or the whole text for
    page-less formats).
    """

    kind: BlockKind
    text: str
    page: int = 1
    line_start: int = 1
    line_end: int = 1
    level: int = 0
    section_path: tuple[str, ...] = ()
    # Tables only: rows of cells, header row first; `text` holds a readable rendering.
    rows: tuple[tuple[str, ...], ...] = ()
    # Text joined from several source lines (a PDF's paragraph): where each line starts,
    # as (characters of `text` before it, white space not counted; its line number). A
    # count of non-space characters survives the white space being normalised; the
    # chunker cites each sentence at its own lines with it.
    line_marks: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    blocks: tuple[Block, ...]
    page_count: int
    title: str
    parser: str
    has_pages: bool = False
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Document:
    """A source of content: a file path or an upload key. Stable across versions."""

    doc_id: str
    source: str
    title: str
    doc_type: str
    acl_tags: frozenset[str] = frozenset()
    department: str = ""
    source_trust: float = 1.0
    modified: date | None = None
    # The title was given (an upload's or ingest's title, a metadata update), not parsed:
    # a new version given none keeps it, where a parsed one follows the new content.
    title_stated: bool = False

    @property
    def handle(self) -> str:
        from core.ids import doc_handle

        return doc_handle(self.doc_id)


@dataclass(frozen=True, slots=True)
class DocumentVersion:
    doc_id: str
    version: str
    status: VersionStatus
    chunk_count: int = 0
    page_count: int = 0


@dataclass(frozen=True, slots=True)
class Chunk:
    """The unit every store indexes, keyed by `content_id` in all of them."""

    content_id: str
    doc_id: str
    version: str
    ordinal: int
    kind: ChunkKind
    text: str
    page_start: int
    page_end: int
    line_start: int
    line_end: int
    source: str
    title: str
    doc_type: str
    section_path: tuple[str, ...] = ()
    acl_tags: frozenset[str] = frozenset()
    department: str = ""
    source_trust: float = 1.0
    modified: date | None = None
    table_id: str = ""
    summary: str = ""
    entities: tuple[str, ...] = ()
    # Table chunks only: one resolved header per column (multi-row and merged header cells
    # joined per column, e.g. "Permit / Handgun") and this chunk's body rows as cells.
    table_header: tuple[str, ...] = ()
    table_rows: tuple[tuple[str, ...], ...] = ()
    # Where each "\n"-separated line of `text` came from: (page, first source line, last
    # source line); line 0 = no source line of its own (the breadcrumb). Empty when
    # unknown (chunks indexed before it existed): citations then fall back to the span.
    line_map: tuple[tuple[int, int, int], ...] = ()

    @property
    def handle(self) -> str:
        from core.ids import doc_handle

        return doc_handle(self.doc_id)

    @property
    def label(self) -> str:
        from core.ids import citation_label

        return citation_label(self.doc_id, self.page_start)


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is asking. A document's ACL tags are matched against `access_tokens`."""

    user: str = "anonymous"
    roles: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()
    # Operators (check/repair, benchmarks) see everything; never granted by a request field.
    superuser: bool = False
    # May upload and delete documents (API keys with can_write).
    can_write: bool = False
    # Attributes templates bind to parameters (e.g. ("department", "finance"),
    # ("region", "West")): from the key's configuration, never from a request.
    attributes: tuple[tuple[str, str], ...] = ()

    def attribute(self, name: str) -> str | None:
        return next((v for k, v in self.attributes if k == name), None)

    @property
    def access_tokens(self) -> frozenset[str]:
        return (
            self.tags
            | frozenset(f"role:{r}" for r in self.roles)
            | frozenset({f"user:{self.user}"})
        )

    def can_see(self, acl_tags: frozenset[str]) -> bool:
        return self.superuser or not acl_tags or bool(acl_tags & self.access_tokens)


@dataclass(frozen=True, slots=True)
class QueryFilter:
    """Everything a store must apply inside its own query (pre-filter, never after top-k).

    `access_tokens=None` means no ACL restriction (superuser); otherwise a chunk is visible
    when it has no ACL tags or shares one with the tokens.
    """

    access_tokens: frozenset[str] | None = frozenset()
    doc_types: frozenset[str] = frozenset()
    doc_ids: frozenset[str] = frozenset()
    departments: frozenset[str] = frozenset()
    modified_from: date | None = None
    modified_to: date | None = None

    @classmethod
    def for_principal(cls, principal: Principal, **kwargs: object) -> QueryFilter:
        """The principal's filter, narrowed by `kwargs`; `doc_types` as a caller writes
        them ("md", "pdf"), checked (`core.formats.doc_type_filter`)."""
        tokens = None if principal.superuser else principal.access_tokens
        if "doc_types" in kwargs:
            kwargs["doc_types"] = doc_type_filter(kwargs["doc_types"])  # type: ignore[arg-type]
        return cls(access_tokens=tokens, **kwargs)  # type: ignore[arg-type]

    def narrowed(
        self,
        doc_types: frozenset[str] = frozenset(),
        departments: frozenset[str] = frozenset(),
        modified_from: date | None = None,
        modified_to: date | None = None,
    ) -> QueryFilter:
        """This filter further restricted (never widened): sets intersect, dates tighten.
        An empty intersection stays impossible rather than falling back to "any"."""

        def meet(have: frozenset[str], want: frozenset[str]) -> frozenset[str]:
            if not have or not want:
                return have or want
            return (have & want) or frozenset({"\x00none"})

        lo = max((d for d in (self.modified_from, modified_from) if d), default=None)
        hi = min((d for d in (self.modified_to, modified_to) if d), default=None)
        return QueryFilter(
            access_tokens=self.access_tokens,
            doc_types=meet(self.doc_types, doc_types),
            doc_ids=self.doc_ids,
            departments=meet(self.departments, departments),
            modified_from=lo,
            modified_to=hi,
        )

    def admits(self, chunk: Chunk) -> bool:
        """Reference semantics every store implements in its own query language."""
        if (
            self.access_tokens is not None
            and chunk.acl_tags
            and not (chunk.acl_tags & self.access_tokens)
        ):
            return False
        if self.doc_types and chunk.doc_type not in self.doc_types:
            return False
        if self.doc_ids and chunk.doc_id not in self.doc_ids:
            return False
        if self.departments and chunk.department not in self.departments:
            return False
        if self.modified_from and (chunk.modified is None or chunk.modified < self.modified_from):
            return False
        return not (
            self.modified_to and (chunk.modified is None or chunk.modified > self.modified_to)
        )


@dataclass(frozen=True, slots=True)
class ScoredId:
    """What a store's search returns: an id and that store's own score (higher is better)."""

    content_id: str
    score: float


@dataclass(frozen=True, slots=True)
class SourceSpec:
    name: str  # "keyword" | "dense" | "graph"
    weight: float
    timeout_s: float
    top_k: int

    @property
    def timeout_ms(self) -> float:
        return round(self.timeout_s * 1000, 3)


@dataclass(frozen=True)
class Route:
    """The routing decision for one request, as returned in every response.

    The first fields are the rule's; the rest are filled in by the pipeline: the retrieval
    instruction's filters and boosts, the synonyms that expanded the query, and what the
    request fell back to when a source failed."""

    strategy: str
    sources: tuple[SourceSpec, ...]
    rule: str
    rrf_k: float = 60.0
    top_k: int = 8
    min_coverage: float = 0.5
    intent: str = "general"
    task: str = "qa"
    language: str = ""
    budget_ms: float | None = None  # the rule's time budget; every source's timeout fits in it
    query: str = ""  # the query the sources ran (instruction + synonyms), when it differs
    instruction: str = ""  # who built the retrieval instruction: "rules" | "llm"
    filters: dict[str, Any] = field(default_factory=dict, hash=False)
    boost_fields: dict[str, list[str]] = field(default_factory=dict, hash=False)
    synonyms_applied: dict[str, list[str]] = field(default_factory=dict, hash=False)
    fallback: str = ""  # e.g. "dense: timeout after 300 ms; answered from keyword, graph"


@dataclass(slots=True)
class Hit:
    chunk: Chunk
    score: float
    ranks: dict[str, int] = field(default_factory=dict)
    signals: dict[str, float] = field(default_factory=dict)
    source_class: str = ""  # fusion.trust's class of the hit's source, once reranked


@dataclass(frozen=True, slots=True)
class Citation:
    """One passage an answer used, under the label its sentences carry.

    `page_*` and `line_*` are the span of the quoted sentences inside that passage (what an
    auditor opens); `chunk_*` is the whole passage's span.
    """

    label: str
    content_id: str
    source: str
    title: str
    page_start: int
    page_end: int
    line_start: int
    line_end: int
    chunk_page_start: int = 0
    chunk_page_end: int = 0
    chunk_line_start: int = 0
    chunk_line_end: int = 0

    @classmethod
    def of(cls, chunk: Chunk) -> Citation:
        return cls(
            label=chunk.label,
            content_id=chunk.content_id,
            source=chunk.source,
            title=chunk.title,
            page_start=chunk.page_start,
            page_end=chunk.page_end,
            line_start=chunk.line_start,
            line_end=chunk.line_end,
            chunk_page_start=chunk.page_start,
            chunk_page_end=chunk.page_end,
            chunk_line_start=chunk.line_start,
            chunk_line_end=chunk.line_end,
        )


@dataclass(frozen=True, slots=True)
class AnswerSentence:
    """One sentence of an answer, its labels, and whether a cited passage supports it."""

    text: str  # labels removed
    labels: tuple[str, ...]
    supported: bool = True


@dataclass(frozen=True, slots=True)
class ModelUse:
    """Which LLM endpoint answered (model routing) and why; tier "none" = extractive."""

    tier: str  # "small" | "large" | "default" | "none"
    model: str
    reason: str


@dataclass(frozen=True, slots=True)
class Answer:
    question: str
    text: str
    covered: bool
    mode: str  # "extractive" | "llm"
    citations: tuple[Citation, ...]
    hits: tuple[Hit, ...]
    route: Route
    timings_ms: dict[str, float]
    trace_id: str
    removed_labels: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    # How likely the answer is right and complete, 0..1 (see generation/confidence.py).
    confidence: float = 0.0
    # Why the answer is not covered, or what part of the question is not (partial).
    reason: str = ""
    sentences: tuple[AnswerSentence, ...] = ()
    # Knowledge gateway: the content blocks the answer cites (core.blocks.ContentBlock:
    # documents, rows, status) and which kind of source answered and why.
    blocks: tuple[ContentBlock, ...] = ()
    knowledge: dict[str, Any] = field(default_factory=dict)
    model: ModelUse | None = None
    # Passages that state different values for the same thing (fusion.conflicts), as
    # plain data: {"subject", "values": [{"value", "label", "content_id", ...}], "preferred"}.
    conflicts: tuple[dict[str, Any], ...] = ()
