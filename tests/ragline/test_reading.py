"""Reading documents for display (ragline/reading.py): hidden is the same as missing,
originals only for those who may write, a passage's home even after the file changed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.errors import Forbidden, NotFound
from core.settings import Settings
from core.types import Principal
from ragline.app import Ragline
from ragline.reading import DocumentReader
from ragline.writes import WriteDenied
from tests.ingestion.conftest import pages_pdf

WRITER = Principal("wade", tags=frozenset({"finance"}), can_write=True)
READER = Principal("rita", tags=frozenset({"finance"}))
OUTSIDER = Principal("olga", can_write=True)


@pytest.fixture()
def setup(tmp_path: Path) -> Iterator[tuple[Ragline, Path, str]]:
    doc = tmp_path / "docs" / "ledger.md"
    doc.parent.mkdir()
    doc.write_text("# Ledger\n\nThe ledger closes on Fridays.\n", encoding="utf-8")
    rag = Ragline(Settings(data_dir=tmp_path / "data"))
    try:
        [outcome], _ = rag.ingest([doc], tags=["finance"])
        yield rag, doc, outcome.doc_id
    finally:
        rag.close()


def test_a_hidden_document_reads_as_a_missing_one(setup: tuple[Ragline, Path, str]) -> None:
    rag, _, doc_id = setup
    reader = DocumentReader(rag)
    assert [d.doc_id for d in reader.documents(WRITER)] == [doc_id]
    assert list(reader.documents(OUTSIDER)) == [] and reader.catalog(OUTSIDER, 10) == []
    view = reader.view(READER, doc_id)
    cid = view["pages"][0]["passages"][0]["content_id"]
    for call in (
        lambda: reader.view(OUTSIDER, doc_id),
        lambda: reader.original(OUTSIDER, doc_id),
        lambda: reader.passage(OUTSIDER, cid),
        lambda: reader.view(WRITER, "no-such-document"),
        lambda: reader.view(WRITER, doc_id, "no-such-version"),
    ):
        with pytest.raises(NotFound):
            call()


def test_originals_are_for_writers_and_the_masked_text_for_readers(
    setup: tuple[Ragline, Path, str],
) -> None:
    rag, doc, doc_id = setup
    reader = DocumentReader(rag)
    assert reader.view(READER, doc_id)["has_file"] is False
    with pytest.raises(Forbidden, match=f"/v1/documents/{doc_id}/view") as denied:
        reader.original(READER, doc_id)
    assert not isinstance(denied.value, WriteDenied)  # a read refused, not a write
    assert reader.view(WRITER, doc_id)["has_file"] is True
    path, doc_type = reader.original(WRITER, doc_id)
    assert path == doc and doc_type == "markdown"

    # The file changed on disk: its old bytes are no longer here, the passage still is.
    cid = reader.view(WRITER, doc_id)["pages"][0]["passages"][0]["content_id"]
    doc.write_text("# Ledger\n\nThe ledger now closes on Thursdays.\n", encoding="utf-8")
    assert reader.view(WRITER, doc_id)["has_file"] is False
    with pytest.raises(NotFound, match="not kept on this server"):
        reader.original(WRITER, doc_id)
    assert reader.passage(READER, cid)["doc_id"] == doc_id


def test_an_earlier_version_opens_until_its_document_is_deleted(
    setup: tuple[Ragline, Path, str],
) -> None:
    rag, doc, doc_id = setup
    reader = DocumentReader(rag)
    first = reader.view(READER, doc_id)
    cid = first["pages"][0]["passages"][0]["content_id"]
    doc.write_text("# Ledger\n\nThe ledger now closes on Thursdays.\n", encoding="utf-8")
    rag.ingest([doc])
    assert reader.view(READER, doc_id)["version"] != first["version"]
    # An answer given before still cites the first version: its passage leads there, and
    # that version opens (the console does passage -> view?version=).
    assert reader.passage(READER, cid)["version"] == first["version"]
    old = reader.view(READER, doc_id, first["version"])
    assert "Fridays" in old["pages"][0]["passages"][0]["text"]

    assert rag.delete(doc_id)
    for call in (
        lambda: reader.passage(READER, cid),
        lambda: reader.view(READER, doc_id, first["version"]),
    ):
        with pytest.raises(NotFound):
            call()


def test_a_passage_spanning_pages_is_listed_under_each(tmp_path: Path) -> None:
    """A sentence on the second page of a passage is cited [Doc…_p2]; the view listed the
    passage under page 1 only, so a client (the console) opening page 2 found nothing."""
    first = "BT /F1 11 Tf 72 700 Td (The archive keeps every ledger for seven years.) Tj ET"
    second = "BT /F1 11 Tf 72 700 Td (Ledgers older than that are shredded on site.) Tj ET"
    pdf = tmp_path / "docs" / "archive.pdf"
    pdf.parent.mkdir()
    pdf.write_bytes(pages_pdf([first, second]))
    rag = Ragline(Settings(data_dir=tmp_path / "data"))
    try:
        [outcome], _ = rag.ingest([pdf])
        answer = rag.ask("What happens to ledgers older than seven years?", Principal("p"))
        view = DocumentReader(rag).view(Principal("p"), outcome.doc_id)
    finally:
        rag.close()
    spanning = [
        p for page in view["pages"] for p in page["passages"] if p["page_end"] > p["page_start"]
    ]
    assert spanning, view  # (the two short pages make one passage)
    on = {page["page"]: {p["content_id"] for p in page["passages"]} for page in view["pages"]}
    assert spanning[0]["content_id"] in on[1] and spanning[0]["content_id"] in on[2], on
    cited = answer.citations[0]
    assert cited.content_id in on[cited.page_start], (cited, on)
