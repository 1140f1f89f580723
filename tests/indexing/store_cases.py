"""Shared test data for the store contract tests: hand-made chunks and vectors.

A plain module (not conftest) so test modules can import it by a name no other test
directory uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

import numpy as np
import pytest

from core.ids import content_id_for, doc_id_for
from core.types import Chunk
from indexing.protocols import IndexedChunk

DIM = 32
MODEL = "test-model"


def unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def make_chunk(
    key: str,
    text: str,
    *,
    doc: str | None = None,
    ordinal: int = 0,
    tags: frozenset[str] = frozenset(),
    doc_type: str = "manual",
    department: str = "",
    modified: date | None = None,
    entities: tuple[str, ...] = (),
    title: str = "",
    section: tuple[str, ...] = (),
) -> Chunk:
    doc_id = doc_id_for(f"file:///docs/{doc or key}")
    return Chunk(
        content_id=content_id_for(doc_id, "v1", ordinal),
        doc_id=doc_id,
        version="v1",
        ordinal=ordinal,
        kind="text",
        text=text,
        page_start=1,
        page_end=1,
        line_start=1,
        line_end=1,
        source=f"file:///docs/{doc or key}",
        title=title,
        doc_type=doc_type,
        section_path=section,
        acl_tags=tags,
        department=department,
        modified=modified,
        entities=entities,
    )


@dataclass
class Corpus:
    """Hand-made Chinese and English chunks with deterministic vectors.

    Vectors are built so that, for the query vector `near["fin"]`, the ranking is
    fin > en > everything else: the best match is the finance-only chunk and the runner-up
    is public, which is what the filter-before-top-k tests need.
    """

    items: dict[str, IndexedChunk]

    def __getitem__(self, key: str) -> IndexedChunk:
        return self.items[key]

    def cid(self, key: str) -> str:
        return self.items[key].chunk.content_id

    def all(self) -> list[IndexedChunk]:
        return list(self.items.values())


@pytest.fixture
def corpus() -> Corpus:
    rng = np.random.default_rng(1234)
    chunks = {
        "en": make_chunk(
            "en",
            "Upgrade to release P12.1.2 fixes error ERR-1042 in the Payment Gateway.",
            doc="gateway-manual",
            modified=date(2024, 3, 1),
            department="it",
            title="Gateway manual",
        ),
        "next": make_chunk(
            "next",
            "Rollback: restore the previous build from the nightly backup archive.",
            doc="gateway-manual",
            ordinal=1,
            modified=date(2024, 3, 1),
            department="it",
            title="Gateway manual",
        ),
        "fin": make_chunk(
            "fin",
            "Quarterly finance report: Payment Gateway revenue, refunds and ERR-1042 "
            "incident costs after the P12.1.2 upgrade. Finance revenue report.",
            tags=frozenset({"finance"}),
            doc_type="report",
            department="finance",
            modified=date(2024, 6, 30),
        ),
        "decoy": make_chunk(
            "decoy",
            # The words of the identifier P12.1.2, but never the identifier itself.
            "P12 1 2 board: release notes for parts P12 1 2 and P12 1 2.",
            modified=date(2024, 5, 1),
        ),
        "zh": make_chunk(
            "zh",
            "华为技术有限公司的总部位于广东省深圳市龙岗区坂田华为基地。",
            modified=date(2023, 1, 15),
            doc_type="wiki",
        ),
        "zh_db": make_chunk(
            "zh_db",
            "数据库连接池的最大连接数由 max_connections 参数控制，默认值为 100。",
            doc_type="faq",
        ),
        "hr": make_chunk(
            "hr",
            "员工手册：年假天数与工龄相关，满十年可享受十五天年假。",
            tags=frozenset({"hr", "role:manager"}),
            doc_type="policy",
        ),
    }
    vectors = {key: unit(rng.standard_normal(DIM)) for key in chunks}
    vectors["en"] = unit(vectors["fin"] + 0.4 * unit(rng.standard_normal(DIM)))
    return Corpus({k: IndexedChunk(c, vectors[k]) for k, c in chunks.items()})


def relabel(corpus: Corpus) -> Corpus:
    """The corpus after metadata-only changes (same text, same vectors): "en" tightened to
    finance, "fin" opened to everyone, "zh" moved to another type, department and date.
    Returned as a new Corpus; `update_metadata` gets the chunks."""
    from dataclasses import replace

    changes: dict[str, dict[str, object]] = {
        "en": {"acl_tags": frozenset({"finance"}), "title": "Zahlungsportal Handbuch"},
        "fin": {"acl_tags": frozenset()},
        "zh": {"doc_type": "faq", "department": "legal", "modified": date(2024, 7, 1)},
    }
    items = dict(corpus.items)
    for key, change in changes.items():
        old = items[key]
        items[key] = IndexedChunk(replace(old.chunk, **change), old.vector)  # type: ignore[arg-type]
    return Corpus(items)


def check_metadata_readback(store: Any, corpus: Corpus) -> None:
    """Contract of `held_metadata` / `metadata_signature` (what `check` uses to find stale
    ACLs and titles): a store reads back exactly the signature of what it was given, a
    metadata change the store missed shows as a different signature (the ACL in every
    store), and once applied the two agree again."""
    store.upsert(corpus.all())
    store.flush()
    held = store.held_metadata()
    assert set(held) == store.content_ids()
    for item in corpus.all():
        assert held[item.chunk.content_id] == store.metadata_signature(item.chunk)
    after = relabel(corpus)
    for key in ("en", "fin"):  # ACL tightened / opened: every store filters on it
        assert store.metadata_signature(after[key].chunk) != held[corpus.cid(key)], key
    store.update_metadata([after[k].chunk for k in ("en", "fin", "zh")])
    store.flush()
    held = store.held_metadata()
    for item in after.all():
        assert held[item.chunk.content_id] == store.metadata_signature(item.chunk)
