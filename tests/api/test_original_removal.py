"""Uploaded originals go when nothing needs them: deleting a document removes its bytes
from the upload directory and the shared store, unless another live document has the same
bytes (uploads are content-addressed); a replaced document keeps its superseded originals
while it lives (its lineage lists those versions, old answers cite them); `ragline repair`
removes what a delete missed and what stopped processes left, never bytes an upload
accepted a moment ago."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import ragline.uploads
from ragline.api import create_app
from ragline.app import Ragline
from ragline.cli import app as cli
from ragline.events import IndexEvent

from .conftest import ALICE, api_settings, upload, wait_job


@pytest.fixture()
def client(tmp_path: Path) -> Iterator[TestClient]:
    # Uploads kept in the metadata database too, as production keeps them.
    settings = api_settings(tmp_path / "data", upload_store="database")
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        yield c


def _rag(client: TestClient) -> Ragline:
    rag: Ragline = client.app.state.ctx.rag  # type: ignore[attr-defined]
    return rag


def _held(client: TestClient, version: str) -> tuple[bool, bool]:
    """Whether this host's directory and the shared store hold the version's bytes."""
    uploads = _rag(client).uploads
    assert uploads.shared is not None
    return any(uploads.dir.glob(f"{version}*")), uploads.shared.find(version) is not None


def _indexed(client: TestClient, key: str, body: bytes) -> dict[str, str]:
    up = upload(client, key, body, ALICE)
    assert wait_job(client, up["job_id"], ALICE)["state"] == "searchable"
    return up


def _delete(client: TestClient, doc_id: str) -> None:
    r = client.delete(f"/v1/documents/{doc_id}", headers=ALICE)
    assert r.status_code == 202, r.text
    assert wait_job(client, r.json()["job_id"], ALICE)["state"] == "deleted"


def _age(client: TestClient, seconds: float) -> None:
    """Every stored upload as if last accepted `seconds` ago."""
    rag = _rag(client)
    then = time.time() - seconds
    for f in rag.uploads.dir.iterdir():
        os.utime(f, (then, then))
    with rag.stores.metadata.engine.begin() as conn:  # type: ignore[attr-defined]
        conn.exec_driver_sql(
            "UPDATE original_parts SET accepted_at = datetime('now', ?)",
            (f"-{int(seconds)} seconds",),
        )


def test_deleting_removes_the_original_unless_another_document_has_the_same_bytes(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ragline.uploads, "RECENT_UPLOAD_S", 0.0)
    body = b"# Quota\n\nThe vellum quota is 12 crates a week.\n"
    first = _indexed(client, "quota.md", body)
    second = _indexed(client, "quota-copy.md", body)  # the same bytes, another document
    assert first["version"] == second["version"]
    _delete(client, first["doc_id"])
    assert _held(client, first["version"]) == (True, True)  # the copy still needs them
    r = client.get(f"/v1/documents/{second['doc_id']}/file", headers=ALICE)
    assert r.status_code == 200 and r.content == body
    _delete(client, second["doc_id"])
    assert _held(client, first["version"]) == (False, False)


def test_a_replaced_document_keeps_its_old_original_until_it_is_deleted(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ragline.uploads, "RECENT_UPLOAD_S", 0.0)
    old = _indexed(client, "rota.md", b"# Rota\n\nThe night rota starts at 22:00.\n")
    new = _indexed(client, "rota.md", b"# Rota\n\nThe night rota starts at 23:00.\n")
    assert old["doc_id"] == new["doc_id"] and old["version"] != new["version"]
    # Its lineage still lists the old version: its bytes stay while the document lives.
    assert _held(client, old["version"]) == (True, True)
    _delete(client, new["doc_id"])
    assert _held(client, old["version"]) == (False, False)
    assert _held(client, new["version"]) == (False, False)


def test_bytes_accepted_a_moment_ago_stay_and_repair_removes_them_later(
    client: TestClient,
) -> None:
    up = _indexed(client, "notice.md", b"# Notice\n\nThe depot closes on 4 May.\n")
    _delete(client, up["doc_id"])
    # Accepted within RECENT_UPLOAD_S: another upload of the same bytes may be queuing.
    assert _held(client, up["version"]) == (True, True)
    kept = _indexed(client, "kept.md", b"# Kept\n\nThe ferry runs hourly.\n")
    uploads = _rag(client).uploads
    (uploads.dir / ".upload-crashed.part").write_bytes(b"half an upload")
    orphan = uploads.dir / f"{'e' * 64}.md"  # a failed upload this host accepted long ago
    orphan.write_bytes(b"# Failed\n")
    assert _rag(client).sweep_originals() == 0  # all recent
    _age(client, 2 * 3600)
    data_dir = _rag(client).settings.data_dir
    env = {"RAGLINE_API__UPLOAD_STORE": "database"}
    swept = CliRunner().invoke(cli, ["repair", "--data-dir", str(data_dir)], env=env)
    assert swept.exit_code == 0, swept.output
    # The deleted document's bytes (here and shared), the orphan, the half-written file.
    assert "uploads  4 stored files no document or job needs removed" in swept.output
    assert _held(client, up["version"]) == (False, False)
    assert not orphan.exists() and not (uploads.dir / ".upload-crashed.part").exists()
    assert _held(client, kept["version"]) == (True, True)
    again = CliRunner().invoke(cli, ["repair", "--data-dir", str(data_dir)], env=env)
    assert "uploads" not in again.output


def test_repair_uploads_only_compares_no_store(client: TestClient) -> None:
    up = _indexed(client, "memo.md", b"# Memo\n\nThe archive moves in June.\n")
    _delete(client, up["doc_id"])
    _age(client, 2 * 3600)
    args = ["repair", "--uploads-only", "--data-dir", str(_rag(client).settings.data_dir)]
    env = {"RAGLINE_API__UPLOAD_STORE": "database"}
    swept = CliRunner().invoke(cli, args, env=env)
    assert swept.exit_code == 0, swept.output
    # No line per store: none was compared (a full repair prints one for each).
    assert swept.output.strip() == "uploads  2 stored files no document or job needs removed"
    assert _held(client, up["version"]) == (False, False)
    both = CliRunner().invoke(cli, [*args, "--rebuild", "keyword"], env=env)
    assert both.exit_code == 2 and "leave out --rebuild" in both.output


def test_a_delete_announced_by_another_process_removes_this_hosts_copy(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replica that accepted an upload keeps its own copy after a worker on another host
    deleted the document; the worker's "deleted" event makes the replica drop it."""
    monkeypatch.setattr(ragline.uploads, "RECENT_UPLOAD_S", 0.0)
    up = _indexed(client, "roster.md", b"# Roster\n\nThe weekend roster has 6 names.\n")
    rag = _rag(client)
    # Deleted elsewhere: marked in the truth, nothing released on this host.
    assert rag.stores.metadata.delete_document(up["doc_id"], rag.stores.derived)
    assert _held(client, up["version"]) == (True, True)
    ctx = client.app.state.ctx  # type: ignore[attr-defined]
    ctx.on_event(IndexEvent("deleted", up["doc_id"]))
    assert _held(client, up["version"]) == (False, False)
