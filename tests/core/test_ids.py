import json
import os
from pathlib import Path

import pytest

from core.ids import (
    citation_label,
    content_id_for,
    doc_handle,
    doc_id_for,
    parse_label,
    path_from_uri,
    readable_source,
    source_uri,
    vector_id,
    version_of,
)
from core.types import Chunk, Principal, QueryFilter


def test_content_id_is_deterministic_and_distinct() -> None:
    doc = doc_id_for("file:///a/b.pdf")
    v = version_of(b"hello")
    assert content_id_for(doc, v, 0) == content_id_for(doc, v, 0)
    ids = {content_id_for(doc, v, i) for i in range(1000)}
    assert len(ids) == 1000
    assert content_id_for(doc, version_of(b"hello!"), 0) != content_id_for(doc, v, 0)


def test_vector_id_fits_int64() -> None:
    cid = content_id_for("d", "v", 3)
    assert 0 <= vector_id(cid) < 2**63


def test_label_round_trip() -> None:
    doc = doc_id_for("file:///x.pdf")
    label = citation_label(doc, 12)
    assert label == f"[Doc{doc_handle(doc)}_p12]"
    assert parse_label(label) == (doc_handle(doc), 12)
    assert parse_label("[Doc12_p3]") is None


def test_source_uri_round_trip(tmp_path: Path) -> None:
    p = tmp_path / "中文 文件.md"
    p.write_text("x")
    assert path_from_uri(source_uri(p)) == p.resolve()
    assert path_from_uri("upload:abc") is None


@pytest.mark.parametrize(
    "name",
    [
        b"bad\xff\xfename.md",  # Latin-1 bytes: not UTF-8
        b"caf\xe9.md",
        "中文 文件.md".encode(),
        b"odd %41 %25 #frag ?query ;param.md",
        b"new\nline.md",
    ],
)
def test_source_uri_round_trips_any_posix_file_name(tmp_path: Path, name: bytes) -> None:
    """The document of a file whose name is not UTF-8 must map back to that same file:
    otherwise it looks vanished and is deleted by the ingest that indexed it."""
    p = tmp_path / os.fsdecode(name)
    p.write_text("x")
    uri = source_uri(p)
    assert uri.isascii() and uri == p.resolve().as_uri()  # ids of existing documents stay
    back = path_from_uri(uri)
    assert back == p.resolve() and back is not None and back.exists()
    assert os.fsencode(back).endswith(name)


def _chunk(tags: frozenset[str]) -> Chunk:
    return Chunk("c", "d", "v", 0, "text", "t", 1, 1, 1, 1, "s", "T", "pdf", acl_tags=tags)


def test_acl_default_deny_for_tagged_documents() -> None:
    finance = _chunk(frozenset({"finance"}))
    public = _chunk(frozenset())
    outsider = QueryFilter.for_principal(Principal("bob"))
    insider = QueryFilter.for_principal(Principal("amy", tags=frozenset({"finance"})))
    by_role = QueryFilter.for_principal(Principal("cat", roles=frozenset({"cfo"})))
    assert outsider.admits(public) and not outsider.admits(finance)
    assert insider.admits(finance)
    assert by_role.admits(_chunk(frozenset({"role:cfo"})))
    assert QueryFilter.for_principal(Principal("op", superuser=True)).admits(finance)


def test_a_source_reads_as_a_path_a_name_or_a_key() -> None:
    odd = Path(os.fsdecode(b"/docs/caf\xe9 notes.md"))
    assert readable_source(source_uri(odd)) == "/docs/caf\ufffd notes.md"
    assert readable_source(source_uri(odd), name_only=True) == "caf\ufffd notes.md"
    assert readable_source("upload:reports/q3.pdf") == "reports/q3.pdf"
    assert readable_source("https://example.org/a") == "https://example.org/a"
    json.dumps(readable_source(source_uri(odd)), ensure_ascii=False).encode("utf-8")
