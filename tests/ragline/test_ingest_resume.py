"""Ingestion at the application level: a crash between staging and applying resumes without
duplicates, a deleted single file leaves every store, each version's lineage (sync_version,
parser, chunker, embedder), optional chunk summaries, and Tika-only formats."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from core.settings import Settings
from core.types import Principal
from generation.llm import OpenAICompatibleClient
from ragline.app import Ragline
from ragline.cli import app as cli

ROOT = Path(__file__).resolve().parents[2]
OPERATOR = Principal("ops", superuser=True)
POLICY = """# Retention policy

## Invoices

The wombatine invoice retention period is seven years. Scans are kept with the originals,
in the finance archive on the second floor, and every scan carries the invoice number, the
supplier's name and the date it was received, so an auditor can find it in minutes.

## Contracts

Contracts are kept for ten years after they end. The legal team decides on exceptions,
records each decision in the contract register, and reviews the register every spring so
that no contract is kept longer than the law and the contract itself require.

## E-mail

Mailboxes of people who left are archived for two years, then deleted. Before deletion the
manager of the team is asked once whether any thread must move to a shared folder, and the
answer is logged with the ticket that closed the account.
"""


def _rows_per_store(rag: Ragline) -> dict[str, int]:
    """Rows each store physically holds (not the set of ids: duplicates must show)."""
    db = sqlite3.connect(rag.settings.sqlite_path)
    try:
        keyword = db.execute("SELECT count(*) FROM kw_chunks").fetchone()[0]
        fts = db.execute("SELECT count(*) FROM kw_fts").fetchone()[0]
        graph = db.execute("SELECT count(*) FROM g_chunk").fetchone()[0]
    finally:
        db.close()
    assert keyword == fts, "keyword side table and full-text index disagree"
    dense = int(rag.stores.dense._index.ntotal)  # type: ignore[attr-defined]
    return {"dense": dense, "keyword": keyword, "graph": graph}


def _lineage(rag: Ragline, doc_id: str) -> list[dict[str, Any]]:
    db = sqlite3.connect(rag.settings.sqlite_path)
    try:
        rows = db.execute(
            "SELECT lineage FROM versions WHERE doc_id = ? ORDER BY created_at", (doc_id,)
        ).fetchall()
    finally:
        db.close()
    return [json.loads(r[0]) for r in rows]


def _crash_after_staging(data_dir: Path, doc: Path) -> None:
    """In a separate process: stage the version, apply it to the keyword store only, then
    die without closing anything (os._exit), as a killed worker would."""
    script = textwrap.dedent(f"""
        import os
        from pathlib import Path
        from core.settings import Settings
        from indexing.sync import OutboxApplier
        from ragline.app import Ragline

        rag = Ragline(Settings(data_dir=Path({str(data_dir)!r})))
        outcome = rag.ingestor.ingest(Path({str(doc)!r}))
        assert outcome.status == "indexed", outcome
        OutboxApplier(rag.stores.metadata, {{"keyword": rag.stores.keyword}}).run()
        os._exit(9)
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        timeout=240,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 9, done.stderr[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize("resume", ["ingest", "sync"])
def test_crash_between_staging_and_applying_resumes_without_duplicates(
    tmp_path: Path, resume: str
) -> None:
    data_dir, doc = tmp_path / "data", tmp_path / "policy.md"
    doc.write_text(POLICY, "utf-8")
    _crash_after_staging(data_dir, doc)

    rag = Ragline(Settings(data_dir=data_dir))
    try:
        meta = rag.stores.metadata
        [document] = meta.documents()
        [staged] = meta.versions(document.doc_id)
        assert staged.status == "pending" and meta.current_version(document.doc_id) is None
        expected = set(meta.version_content_ids(document.doc_id, staged.version))
        assert len(expected) >= 3
        # Nothing of a pending version is served, even from the store that has it.
        assert not rag.search("wombatine invoice retention", OPERATOR).hits

        if resume == "ingest":
            outcomes, report = rag.ingest([doc])
            assert [o.status for o in outcomes] == ["unchanged"]
        else:
            report = rag.sync()
        assert [(v.doc_id, v.version) for v in report.promoted] == [
            (document.doc_id, staged.version)
        ]
        assert not report.errors
        assert meta.current_version(document.doc_id) == staged.version
        for name, store in rag.stores.derived.items():
            assert store.content_ids() == expected, name
        assert _rows_per_store(rag) == dict.fromkeys(("dense", "keyword", "graph"), len(expected))
        assert all(d.ok for d in rag.check())
        hits = rag.search("wombatine invoice retention", OPERATOR).hits
        assert hits and "seven years" in hits[0].chunk.text
        assert len({h.chunk.content_id for h in hits}) == len(hits)

        # Once more from the top: still one copy of everything.
        outcomes, _ = rag.ingest([doc])
        assert [o.status for o in outcomes] == ["unchanged"]
        assert set(_rows_per_store(rag).values()) == {len(expected)}
    finally:
        rag.close()


@pytest.mark.slow
@pytest.mark.slow
def test_single_file_ingested_then_deleted_leaves_every_store(tmp_path: Path) -> None:
    data_dir, doc = tmp_path / "data", tmp_path / "memo.md"
    doc.write_text(POLICY.replace("wombatine", "numbatine"), "utf-8")
    other = tmp_path / "other.md"
    other.write_text("# Other\n\nThe canteen opens at eight every weekday morning.\n", "utf-8")
    runner = CliRunner()
    args = ["--data-dir", str(data_dir)]

    result = runner.invoke(cli, ["ingest", str(doc), str(other), *args, "--json"])
    assert result.exit_code == 0, result.output
    files = json.loads(result.stdout)["files"]
    assert [f["status"] for f in files] == ["indexed", "indexed"]
    doc_id = files[0]["doc_id"]

    rag = Ragline(Settings(data_dir=data_dir))
    try:
        assert "numbatine" in rag.search("numbatine invoice retention", OPERATOR).hits[0].chunk.text
        doomed = set(rag.stores.metadata.version_content_ids(doc_id, files[0]["version"]))
        kept = set(rag.stores.metadata.version_content_ids(files[1]["doc_id"], files[1]["version"]))
    finally:
        rag.close()
    assert doomed and kept

    result = runner.invoke(cli, ["delete", doc_id, *args])
    assert result.exit_code == 0 and "deleted" in result.stdout
    assert runner.invoke(cli, ["delete", doc_id, *args]).exit_code == 1  # already gone

    rag = Ragline(Settings(data_dir=data_dir))
    try:
        for name, store in rag.stores.derived.items():
            assert store.content_ids() == kept, name
        assert set(_rows_per_store(rag).values()) == {len(kept)}
        assert not rag.stores.metadata.serving(sorted(doomed))
        hits = rag.search("numbatine invoice retention", OPERATOR).hits
        assert all(h.chunk.doc_id != doc_id for h in hits)
        assert [d.doc_id for d in rag.stores.metadata.documents()] == [files[1]["doc_id"]]
        assert all(d.ok for d in rag.check())
    finally:
        rag.close()


def test_lineage_records_sync_version_parser_chunker_and_embedder(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    doc = tmp_path / "policy.md"
    rag = Ragline(settings)
    try:
        doc.write_text(POLICY, "utf-8")
        first = rag.ingest([doc])[0][0]
        rag.ingest([doc])  # unchanged: no new version
        doc.write_text(POLICY.replace("seven", "eight"), "utf-8")
        rag.ingest([doc])
        rag.delete(first.doc_id)
        doc.write_text(POLICY.replace("seven", "nine"), "utf-8")
        rag.ingest([doc])  # after a delete the count goes on, it does not restart
        lineage = _lineage(rag, first.doc_id)
        embedder_model = rag.embedder.model
    finally:
        rag.close()
    assert [entry["sync_version"] for entry in lineage] == [1, 2, 3]
    latest = lineage[-1]
    assert latest["parser"].startswith("markdown-it")
    assert latest["chunker"] == settings.chunk.model_dump()
    assert latest["embedder"]["model"] == embedder_model
    assert latest["embedder"]["kind"] == settings.embedder.kind
    assert latest["embedder"]["package_version"]  # the model's distribution version
    assert latest["summaries"] is None  # summaries off by default


def _llm(fail_on: str) -> tuple[OpenAICompatibleClient, list[str]]:
    """An LLM client on a mock transport: summaries echo the chunk's first words;
    a chunk containing `fail_on` gets HTTP 500."""
    seen: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        text = json.loads(request.content)["messages"][-1]["content"]
        seen.append(text)
        if fail_on in text:
            return httpx.Response(500, text="model crashed")
        words = " ".join(text.split()[-4:]).rstrip(".")
        return httpx.Response(
            200,
            json={
                "choices": [
                    {
                        "message": {
                            "content": f"Summary: {words}. A second sentence the client drops."
                        }
                    }
                ]
            },
        )

    settings = Settings(llm={"base_url": "http://llm.test/v1"}).llm
    return OpenAICompatibleClient(settings, transport=httpx.MockTransport(handle)), seen


def test_summaries_are_stored_and_a_failing_chunk_only_loses_its_own(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        ingest={"summarize": True},
        llm={"base_url": "http://llm.test/v1"},
    )
    doc = tmp_path / "policy.md"
    doc.write_text(POLICY, "utf-8")
    rag = Ragline(settings)
    try:
        rag.llm, seen = _llm(fail_on="Contracts are kept")
        [outcome], _ = rag.ingest([doc])
        assert outcome.status == "indexed"
        ids = rag.stores.metadata.version_content_ids(outcome.doc_id, outcome.version)
        chunks = [i.chunk for i in rag.stores.metadata.items(ids)]
        lineage = _lineage(rag, outcome.doc_id)[-1]
    finally:
        rag.close()
    assert len(seen) == len(chunks) >= 3
    by_topic = {c.section_path[-1]: c.summary for c in chunks}
    assert by_topic["Contracts"] == ""
    assert by_topic["Invoices"] == "Summary: find it in minutes."
    assert by_topic["E-mail"] == "Summary: that closed the account."
    assert lineage["summaries"] == len(chunks) - 1


def test_summarizer_down_is_skipped_after_three_failures(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        ingest={"summarize": True},
        llm={"base_url": "http://llm.test/v1"},
    )
    doc = tmp_path / "long.md"
    doc.write_text(
        "\n\n".join(
            f"# Part {i}\n\n" + f"Section {i} says the number is {i * 7}. " * 12 for i in range(8)
        ),
        "utf-8",
    )
    rag = Ragline(settings)
    try:
        rag.llm, seen = _llm(fail_on="")  # every call fails
        [outcome], _ = rag.ingest([doc])
    finally:
        rag.close()
    assert outcome.status == "indexed" and outcome.chunks >= 5
    assert len(seen) == 3


def test_tika_formats_without_a_server_fail_alone_with_the_reason(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "memo.rtf").write_bytes(rb"{\rtf1\ansi Hello quokka world\par}")
    (folder / "note.md").write_text("# Note\n\nThe quokka count is four.\n", "utf-8")
    rag = Ragline(Settings(data_dir=tmp_path / "data"))
    try:
        outcomes, _ = rag.ingest([folder])
        statuses = {Path(o.path).name: (o.status, o.reason) for o in outcomes}
        [explicit], _ = rag.ingest([folder / "memo.rtf"])
    finally:
        rag.close()
    assert statuses["note.md"][0] == "indexed"
    assert statuses["memo.rtf"][0] == "skipped"  # not an extension folders pick up by default
    assert explicit.status == "failed"
    assert explicit.reason == ".rtf (RTF) needs a Tika server: set RAGLINE_INGEST__TIKA_URL"


@pytest.mark.integration
def test_tika_formats_in_a_folder_are_indexed_with_a_server(tmp_path: Path) -> None:
    url = os.environ.get("RAGLINE_TEST_TIKA_URL", "")
    if not url:
        pytest.skip("RAGLINE_TEST_TIKA_URL not set (deploy/local/services up tika)")
    try:
        httpx.get(url.rstrip("/") + "/version", timeout=5).raise_for_status()
    except httpx.HTTPError as exc:
        pytest.skip(f"no Tika server answering at {url}: {exc}")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "memo.rtf").write_bytes(
        rb"{\rtf1\ansi The quokkaline budget is forty two million.\par}"
    )
    rag = Ragline(Settings(data_dir=tmp_path / "data", ingest={"tika_url": url}))
    try:
        [outcome], report = rag.ingest([folder])
        assert outcome.status == "indexed", outcome.reason
        assert not report.errors
        hit = rag.search("quokkaline budget", OPERATOR).hits[0].chunk
        lineage = _lineage(rag, outcome.doc_id)[-1]
    finally:
        rag.close()
    assert hit.doc_type == "rtf" and "forty two million" in hit.text
    assert lineage["parser"].startswith("tika/") and lineage["sync_version"] == 1
