"""The spine end to end on the embedded default: real documents, real stores, real model."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.ids import parse_label
from core.settings import Settings
from core.types import Principal
from ragline.app import Ragline

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ANON = Principal("anon")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("docs")
    for f in EXAMPLES.iterdir():
        if f.suffix != ".md" or f.name.startswith("zh-"):
            shutil.copy(f, folder / f.name)
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj garbage")
    return folder


@pytest.fixture(scope="module")
def rag(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ragline]:
    app = Ragline(Settings(data_dir=tmp_path_factory.mktemp("data")))
    outcomes, report = app.ingest([corpus])
    by_name = {Path(o.path).name: o for o in outcomes}
    assert by_name["broken.pdf"].status == "failed" and by_name["broken.pdf"].reason
    assert all(o.status == "indexed" for n, o in by_name.items() if n != "broken.pdf"), by_name
    assert not report.errors
    yield app
    app.close()


def test_cited_answer_from_a_pdf_table(rag: Ragline) -> None:
    answer = rag.ask("How many permit checks did Kentucky record in November 2015?", ANON)
    assert answer.covered and answer.mode == "extractive"
    assert "264,140" in answer.text
    assert answer.citations
    cited = answer.citations[0]
    assert cited.source.endswith("en-nics-background-checks-2015-11.pdf")
    assert cited.page_start == 1 and cited.label in answer.text
    assert parse_label(cited.label) is not None
    assert cited.content_id in {h.chunk.content_id for h in answer.hits}


def test_not_covered_question_gets_no_invented_text(rag: Ragline) -> None:
    answer = rag.ask("What is the airspeed velocity of an unladen swallow on Mars?", ANON)
    assert not answer.covered
    assert answer.citations == ()
    assert "does not cover" in answer.text
    assert any("coverage" in w or "mentions" in w for w in answer.warnings), answer.warnings


def test_reingest_unchanged_does_nothing(rag: Ragline, corpus: Path) -> None:
    outcomes, _ = rag.ingest([corpus])
    statuses = {Path(o.path).name: o.status for o in outcomes}
    assert statuses.pop("broken.pdf") == "failed"
    assert set(statuses.values()) == {"unchanged"}


def test_acl_tagged_document_is_invisible_without_the_tag(rag: Ragline, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("# Budget\n\nThe zephyrine merger budget is 42 million yuan.\n", "utf-8")
    rag.ingest([secret], tags=["finance"])
    q = "What is the zephyrine merger budget?"
    for principal in (ANON, Principal("eve", roles=frozenset({"engineer"}))):
        result = rag.search(q, principal)
        assert all("zephyrine" not in h.chunk.text for h in result.hits)
        assert not rag.ask(q, principal).citations or "zephyrine" not in rag.ask(q, principal).text
    insider = Principal("amy", tags=frozenset({"finance"}))
    result = rag.search(q, insider)
    assert result.hits and "zephyrine" in result.hits[0].chunk.text
    assert "42 million" in rag.ask(q, insider).text


def test_changed_and_deleted_files_leave_no_stale_hits(rag: Ragline, tmp_path: Path) -> None:
    folder = tmp_path / "live"
    folder.mkdir()
    doc = folder / "policy.md"
    doc.write_text("# Policy\n\nThe quokkaline retention period is seven years.\n", "utf-8")
    rag.ingest([folder])
    assert "seven years" in rag.ask("What is the quokkaline retention period?", ANON).text

    doc.write_text("# Policy\n\nThe quokkaline retention period is three months.\n", "utf-8")
    outcomes, _ = rag.ingest([folder])
    assert [o.status for o in outcomes] == ["indexed"]
    result = rag.search("quokkaline retention period", ANON)
    texts = " ".join(h.chunk.text for h in result.hits)
    assert "three months" in texts and "seven years" not in texts

    doc.unlink()
    outcomes, _ = rag.ingest([folder])
    assert [o.status for o in outcomes] == ["deleted"]
    result = rag.search("quokkaline retention period", ANON)
    assert all("quokkaline" not in h.chunk.text for h in result.hits)
    for store in rag.stores.derived.values():
        assert not any(
            "quokkaline" in i.chunk.text
            for i in rag.stores.metadata.items(sorted(store.content_ids()))
        )
    assert all(d.ok for d in rag.check())


def test_an_empty_question_is_refused_on_every_surface(rag: Ragline) -> None:
    """No question and no entities to look up: a clear error, the same from the service,
    the command line and the HTTP API (which maps it to 422), not a "not covered"."""
    from typer.testing import CliRunner

    from core.errors import InvalidRequest
    from ragline.cli import app
    from routing.instruction import TaskContext

    for question in ("", "   \n"):
        with pytest.raises(InvalidRequest, match="question is empty"):
            rag.search(question, ANON)
        with pytest.raises(InvalidRequest, match="question is empty"):
            rag.ask(question, ANON)
    # A task context that names what to look up stands in for the question.
    assert rag.search("", ANON, context=TaskContext(entities=("Kentucky",))).hits
    out = CliRunner().invoke(app, ["ask", " ", "--data-dir", str(rag.settings.data_dir)])
    assert out.exit_code == 2 and "question is empty" in out.output
