"""Links to files in an ingested folder: a linked file is the folder's document, keyed
by the link, so removing the link (or its target) removes the document on the next
ingest of the folder; a file found twice in one walk (a link and its target, two links
to one file) is indexed once, the other reported as skipped."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.ids import path_from_uri, source_uri
from core.settings import AclRule, IngestSettings, Settings
from core.types import Principal
from ragline.app import Ragline
from ragline.ingest import acl_tags_for

OPERATOR = Principal("ops", superuser=True)


@pytest.fixture
def rag(tmp_path: Path) -> Iterator[Ragline]:
    app = Ragline(Settings(data_dir=tmp_path / "data"))
    yield app
    app.close()


def _folder(tmp_path: Path) -> tuple[Path, Path]:
    docs, outside = tmp_path / "docs", tmp_path / "outside"
    docs.mkdir()
    outside.mkdir()
    (docs / "alpha.md").write_text("# Alpha\n\nThe alpha budget is 12 apples.\n", "utf-8")
    target = outside / "beta.md"
    target.write_text("# Beta\n\nThe zorbulon reactor output is 77 megawatts.\n", "utf-8")
    return docs, target


def _found(rag: Ragline, query: str) -> list[str]:
    return [h.chunk.text for h in rag.search(query, OPERATOR).hits]


def test_a_linked_file_is_keyed_by_the_link_and_goes_with_it(tmp_path: Path, rag: Ragline) -> None:
    docs, target = _folder(tmp_path)
    link = docs / "beta-link.md"
    link.symlink_to(target)
    assert path_from_uri(source_uri(link)) == docs.resolve() / link.name
    outcomes, _ = rag.ingest([docs])
    assert sorted(o.status for o in outcomes) == ["indexed", "indexed"]
    assert any("zorbulon" in t for t in _found(rag, "zorbulon reactor output"))

    link.unlink()
    outcomes, _ = rag.ingest([docs])
    gone = [o for o in outcomes if o.status == "deleted"]
    assert [Path(o.path).name for o in gone] == ["beta-link.md"]
    assert not any("zorbulon" in t for t in _found(rag, "zorbulon reactor output"))
    assert target.exists()  # the file itself is left alone
    logged = [e.reason for e in rag.stores.metadata.ingest_log() if e.status == "deleted"]
    assert logged == ["file no longer exists (by the operator)"]


def test_a_link_whose_target_is_deleted_removes_its_document(tmp_path: Path, rag: Ragline) -> None:
    docs, target = _folder(tmp_path)
    (docs / "beta-link.md").symlink_to(target)
    rag.ingest([docs])
    target.unlink()
    outcomes, _ = rag.ingest([docs])
    assert [o.status for o in outcomes if o.status == "deleted"] == ["deleted"]
    assert not any("zorbulon" in t for t in _found(rag, "zorbulon reactor output"))


def test_a_file_found_twice_in_one_walk_is_indexed_once(tmp_path: Path, rag: Ragline) -> None:
    docs, target = _folder(tmp_path)
    (docs / "alpha-again.md").symlink_to(docs / "alpha.md")  # the file itself is found too
    (docs / "b1.md").symlink_to(target)
    (docs / "b2.md").symlink_to(target)
    outcomes, _ = rag.ingest([docs])
    by_name = {Path(o.path).name: o for o in outcomes}
    assert by_name["alpha.md"].status == "indexed"
    assert by_name["alpha-again.md"].status == "skipped"
    assert by_name["alpha-again.md"].reason == f"the same file as {docs / 'alpha.md'}"
    assert by_name["b1.md"].status == "indexed"
    assert by_name["b2.md"].status == "skipped"
    assert len(list(rag.stores.metadata.documents())) == 2
    hits = _found(rag, "zorbulon reactor output")
    assert sum("zorbulon" in t for t in hits) == 1


def test_a_link_keeps_the_tags_of_its_target_and_of_its_folder(tmp_path: Path) -> None:
    """Tags narrow who may read: a link into an open folder does not open a restricted
    file, and a link into a restricted folder is restricted."""
    docs, target = _folder(tmp_path)
    link = docs / "beta-link.md"
    link.symlink_to(target)
    rules = [
        AclRule(glob=f"{target.parent.resolve()}/*", tags=["secret"]),
        AclRule(glob=f"{docs.resolve()}/*", tags=["team"]),
    ]
    settings = Settings(data_dir=tmp_path / "data", ingest=IngestSettings(acl_rules=rules))
    assert acl_tags_for(link, settings) == {"secret", "team"}
    assert acl_tags_for(target, settings) == {"secret"}
    assert acl_tags_for(docs / "alpha.md", settings) == {"team"}
