"""The per-passage audit trail: an answer's audit rows reproduce its citations exactly,
with the document version, uploader and processing lineage; over HTTP (JSON and CSV), for
a cached answer too, and from `ragline audit export --csv`. Who may read which rows."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from core.settings import ApiKey, MonitoringSettings
from ragline.api import create_app
from ragline.cli import app as cli
from tests.api.conftest import ALICE, FIN, api_settings, upload, wait_job

AUDITOR = {"X-API-Key": "audit-key"}
DOC = (
    "# Finance plan\n\n## Budget\n\nThe zephyrine merger budget is 42 million yuan.\n\n"
    "## People\n\nAmy Wong leads the zephyrine merger team. Her phone is 13812345678.\n"
)
CITATION_FIELDS = ("label", "content_id", "page_start", "page_end", "line_start", "line_end")


def _citation_key(c: dict[str, Any]) -> tuple[str, ...]:
    return (*tuple(str(c[f]) for f in CITATION_FIELDS), str(c["source"]))


def _row_key(r: dict[str, Any]) -> tuple[str, ...]:
    return (*tuple(str(r[f]) for f in CITATION_FIELDS), str(r["file"]))


def test_audit_rows_reproduce_the_answer_citations(tmp_path: Path) -> None:
    settings = api_settings(tmp_path / "data")
    keys = [*settings.api.keys, ApiKey(key="audit-key", user="olga", roles=["auditor"])]
    settings = settings.model_copy(
        update={
            "api": settings.api.model_copy(update={"keys": keys}),
            "monitoring": MonitoringSettings(interval_s=0),
        }
    )
    started = datetime.now(UTC) - timedelta(seconds=1)
    with TestClient(create_app(settings)) as client:
        up = upload(client, "plan.md", DOC.encode(), FIN, acl_tags="finance")
        assert wait_job(client, up["job_id"], FIN)["state"] == "searchable"
        question = "What is the zephyrine merger budget and who leads the team?"
        answer = client.post("/v1/ask", json={"question": question}, headers=FIN).json()
        assert answer["covered"] and answer["citations"], answer
        expected = [_citation_key(c) for c in answer["citations"]]

        rows = client.get("/v1/audit", params={"trace_id": answer["trace_id"]}, headers=FIN).json()[
            "rows"
        ]
        assert [_row_key(r) for r in rows] == expected  # one row per citation, same order
        for r in rows:
            assert (r["principal"], r["question"]) == ("fred", question)
            assert (r["doc_id"], r["version"]) == (up["doc_id"], up["version"])
            assert r["uploaded_by"] == "fred" and r["uploaded_at"]
            assert r["answer_mode"] == "extractive" and r["route_rule"] and r["strategy"]
            assert r["parser"] and r["parser_version"]
            assert json.loads(r["chunker"])["max_tokens"] == settings.chunk.max_tokens
            assert r["embedder_model"] and r["embedder_version"]
            assert "weights" in json.loads(r["rerank"])
            assert r["section_path"].startswith("Finance plan")
            # The phone number was masked at ingestion: the rule that fired is named.
            pii = json.loads(r["pii_rules"])
            assert pii and all(n > 0 for n in pii.values())

        # The same question again comes from the cache and is audited all the same.
        again = client.post("/v1/ask", json={"question": question}, headers=FIN).json()
        assert again["cached"] is True
        all_rows = client.get("/v1/audit", headers=AUDITOR).json()["rows"]
        cached = [r for r in all_rows if r["cached_from"] == answer["trace_id"]]
        assert [_row_key(r) for r in cached] == expected

        # CSV, filtered by user, document and time.
        text = client.get(
            "/v1/audit",
            params={
                "format": "csv",
                "user": "fred",
                "doc_id": up["doc_id"],
                "since": started.isoformat(),
            },
            headers=AUDITOR,
        ).text
        csv_rows = list(csv.DictReader(io.StringIO(text)))
        assert [_row_key(r) for r in csv_rows] == expected * 2
        assert (
            client.get("/v1/audit", params={"doc_id": "nope"}, headers=AUDITOR).json()["rows"] == []
        )
        assert (
            client.get("/v1/audit", params={"until": started.isoformat()}, headers=AUDITOR).json()[
                "rows"
            ]
            == []
        )

        # Alice neither sees Fred's questions nor the finance document's passages.
        assert client.get("/v1/audit", params={"user": "fred"}, headers=ALICE).json()["rows"] == []
        assert client.get("/v1/audit").status_code == 401

    out = tmp_path / "audit.csv"
    result = CliRunner().invoke(
        cli,
        [
            "audit",
            "export",
            "--since",
            started.isoformat(),
            "--user",
            "fred",
            "--csv",
            str(out),
            "--data-dir",
            str(settings.data_dir),
        ],
    )
    assert result.exit_code == 0, result.output
    cli_rows = list(csv.DictReader(out.open(newline="", encoding="utf-8")))
    assert [_row_key(r) for r in cli_rows] == expected * 2
    assert cli_rows[0]["trace_id"] == answer["trace_id"]


def test_a_version_is_credited_to_whoever_brought_it(tmp_path: Path) -> None:
    """Re-uploading the same bytes with a new title changes metadata, not who uploaded
    the version: the lineage and the audit rows agree on the first uploader."""
    with TestClient(create_app(api_settings(tmp_path / "data"))) as client:
        first = upload(client, "notes.md", b"# Notes\n\nThe zorbulon output is 7 MW.\n", ALICE)
        assert wait_job(client, first["job_id"], ALICE)["state"] == "searchable"
        again = upload(
            client, "notes.md", b"# Notes\n\nThe zorbulon output is 7 MW.\n", FIN, title="Ops notes"
        )
        assert wait_job(client, again["job_id"], FIN)["state"] == "searchable"
        doc_id = first["doc_id"]
        lineage = client.get(f"/v1/documents/{doc_id}/lineage", headers=ALICE).json()
        (version,) = lineage["versions"]
        assert version["uploaded_by"] == "alice"
        answer = client.post(
            "/v1/ask", json={"question": "What is the zorbulon output?"}, headers=ALICE
        ).json()
        assert answer["covered"], answer
        rows = client.get(
            "/v1/audit", params={"trace_id": answer["trace_id"]}, headers=ALICE
        ).json()["rows"]
        assert rows and all(r["uploaded_by"] == "alice" for r in rows)


def test_a_trace_or_document_is_found_past_the_newest_answers(tmp_path: Path) -> None:
    """`limit` counts the answers of the trace or document asked for, not the newest
    answers of anyone: an older trace is still found with limit=1."""
    with TestClient(create_app(api_settings(tmp_path / "data"))) as client:
        a = upload(client, "a.md", b"# Alpha\n\nThe zorbulon output is 7 MW.\n", ALICE)
        b = upload(client, "b.md", b"# Beta\n\nThe quillet tax rate is 4 percent.\n", ALICE)
        for up in (a, b):
            assert wait_job(client, up["job_id"], ALICE)["state"] == "searchable"
        old = client.post(
            "/v1/ask", json={"question": "What is the zorbulon output?"}, headers=ALICE
        ).json()
        new = client.post(
            "/v1/ask", json={"question": "What is the quillet tax rate?"}, headers=ALICE
        ).json()
        assert old["covered"] and new["covered"]

        def rows(**params: Any) -> list[dict[str, Any]]:
            r = client.get("/v1/audit", params={**params, "limit": 1}, headers=ALICE)
            assert r.status_code == 200, r.text
            return list(r.json()["rows"])

        assert {r["trace_id"] for r in rows(trace_id=old["trace_id"])} == {old["trace_id"]}
        by_doc = rows(doc_id=a["doc_id"])
        assert by_doc and {r["doc_id"] for r in by_doc} == {a["doc_id"]}


def test_a_delete_is_in_the_ingest_log_with_who_did_it(tmp_path: Path) -> None:
    with TestClient(create_app(api_settings(tmp_path / "data"))) as client:
        up = upload(client, "gone.md", b"# Gone\n\nThe zorbulon output is 7 MW.\n", ALICE)
        assert wait_job(client, up["job_id"], ALICE)["state"] == "searchable"
        r = client.delete(f"/v1/documents/{up['doc_id']}", headers=ALICE)
        assert r.status_code == 202, r.text
        meta = client.app.state.ctx.rag.stores.metadata  # type: ignore[attr-defined]
        deleted = [e for e in meta.ingest_log() if e.status == "deleted"]
        assert [(e.doc_id, e.reason) for e in deleted] == [(up["doc_id"], "deleted by alice")]
        assert deleted[0].version  # the version that was served
