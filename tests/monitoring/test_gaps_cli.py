"""`ragline gaps` on a real SQLite metadata store: dedup, counting, CSV, JSON, --since."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from indexing.stores.sql_metadata import SqlMetadataStore
from monitoring.gaps import gap_key, normalise
from ragline.cli import app as cli


def _record(store: SqlMetadataStore, question: str, roles: list[str]) -> None:
    norm = normalise(question)
    misses = [{"doc_id": "d1", "title": "Cooling manual", "source": "file:///m.pdf"}]
    store.record_gap(gap_key(norm), norm, question, roles, misses, "not covered", 0.1)


def test_normalisation_deduplicates() -> None:
    assert normalise("What is the Quarvian cooling budget?") == normalise(
        "quarvian cooling budget - what is it"
    )
    assert normalise("ＴｉＫＶ 内存") == normalise("tikv 内存")


def test_gaps_cli(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = SqlMetadataStore(f"sqlite:///{data / 'ragline.db'}")
    _record(store, "What is the Quarvian cooling budget?", ["ops"])
    _record(store, "quarvian cooling budget, what is it?", ["hr"])
    _record(store, '=HYPERLINK("http://x") flux capacity', [])
    store.close()
    runner = CliRunner()
    out = runner.invoke(cli, ["gaps", "--json", "--data-dir", str(data)])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)
    assert rows[0]["count"] == 2 and rows[0]["roles"] == ["hr", "ops"]
    assert rows[0]["near_misses"][0]["title"] == "Cooling manual"
    assert rows[0]["status"] == "open" and len(rows) == 2
    out = runner.invoke(cli, ["gaps", "--csv", "--data-dir", str(data)])
    table = list(csv.DictReader(io.StringIO(out.output)))
    assert table[0]["count"] == "2" and table[1]["question"].startswith("'=")  # no formula
    future = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    out = runner.invoke(cli, ["gaps", "--since", future, "--data-dir", str(data)])
    assert out.exit_code == 0 and "no open knowledge gaps" in out.output
    out = runner.invoke(cli, ["gaps", "--data-dir", str(data)])
    assert "2x  quarvian cooling budget, what is it?" in out.output


def test_a_gap_recorded_twice_at_once_is_counted_not_lost(tmp_path: Path) -> None:
    # Two requests with the same new question: both find no row and both insert (SQLite
    # has no row lock). The one that loses the insert counts again instead of failing the
    # request with a 500.
    store = SqlMetadataStore(f"sqlite:///{tmp_path / 'ragline.db'}")
    first = store._record_gap
    calls = []

    def racing(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 1:
            first(*args, **kwargs)  # the other request's insert lands first ...
            from sqlalchemy.exc import IntegrityError

            raise IntegrityError("INSERT", {}, Exception("UNIQUE constraint failed"))
        return first(*args, **kwargs)

    store._record_gap = racing  # type: ignore[method-assign]
    _record(store, "Who signs the badge form?", ["role:hr"])
    assert [g.count for g in store.gaps()] == [2]
