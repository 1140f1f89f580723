"""Build the sample business database from the real public tables in the repository:
FBI NICS background checks per state (PDF table), the World Bank IDA cash-flow statement
(XLSX) and the closed Langchain-ChatGLM issues as tickets (XLSX). See SOURCES.md."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Column,
    Date,
    DateTime,
    Engine,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    insert,
)

from core.errors import ConfigError

HERE = Path(__file__).parent
REPO = HERE.parent.parent
NICS_PDF = REPO / "examples" / "en-nics-background-checks-2015-11.pdf"
IDA_XLSX = REPO / "examples" / "en-IDA_Statement_Of_Cash_Flows__FY2011.xlsx"
TICKETS_XLSX = HERE / "tickets-langchain-chatglm-closed.xlsx"

# US Census Bureau statistical regions.
REGIONS = {
    "Northeast": "Connecticut Maine Massachusetts New_Hampshire Rhode_Island Vermont "
    "New_Jersey New_York Pennsylvania",
    "Midwest": "Illinois Indiana Michigan Ohio Wisconsin Iowa Kansas Minnesota Missouri "
    "Nebraska North_Dakota South_Dakota",
    "South": "Delaware District_of_Columbia Florida Georgia Maryland North_Carolina "
    "South_Carolina Virginia West_Virginia Alabama Kentucky Mississippi Tennessee Arkansas "
    "Louisiana Oklahoma Texas",
    "West": "Arizona Colorado Idaho Montana Nevada New_Mexico Utah Wyoming Alaska California "
    "Hawaii Oregon Washington",
}
STATE_REGION = {s.replace("_", " "): r for r, names in REGIONS.items() for s in names.split()}

metadata = MetaData()
nics_checks = Table(
    "nics_checks",
    metadata,
    Column("state", String(64), primary_key=True),
    Column("region", String(32), nullable=False),
    Column("month", String(7), nullable=False),
    Column("permit", Integer, nullable=False),
    Column("handgun", Integer, nullable=False),
    Column("long_gun", Integer, nullable=False),
    Column("other", Integer, nullable=False),
    Column("multiple", Integer, nullable=False),
    Column("admin", Integer, nullable=False),
    Column("total", Integer, nullable=False),
)
cash_flows = Table(
    "cash_flows",
    metadata,
    Column("section", String(64), nullable=False),
    Column("line_item", String(128), nullable=False),
    Column("fiscal_year", Integer, nullable=False),
    Column("amount_musd", Float, nullable=True),
)
tickets = Table(
    "tickets",
    metadata,
    Column("ticket_id", Integer, primary_key=True),
    Column("title", Text, nullable=False),
    Column("opened", Date, nullable=False),
    Column("month", String(7), nullable=False),
    Column("state", String(16), nullable=False),
    Column("detail", Text, nullable=False),
)
sample_meta = Table(
    "sample_meta",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("loaded_at", DateTime, nullable=False),
)


@dataclass(frozen=True, slots=True)
class LoadReport:
    url: str
    tables: dict[str, int]


def _int(cell: str) -> int:
    return int(cell.replace(",", "").strip() or 0)


def nics_rows() -> Iterator[dict[str, Any]]:
    """The per-state table of the NICS PDF: pdfplumber returns five states per row, their
    cells joined by newlines; columns are state, permit, handgun, long gun, other,
    multiple, admin, ... and the row total last."""
    import pdfplumber

    with pdfplumber.open(NICS_PDF) as pdf:
        table = pdf.pages[0].extract_tables()[0]
    for row in table[2:]:
        first = row[0] or ""
        if not first.strip() or row[1] is None or first.startswith(("Totals", "*")):
            continue
        states = first.split("\n")
        columns = [(c or "").split("\n") for c in row]
        for i, state in enumerate(states):
            state = state.strip()
            cells = [c[i] if i < len(c) else "0" for c in columns]
            yield {
                "state": state,
                "region": STATE_REGION.get(state, "Territories"),
                "month": "2015-11",
                "permit": _int(cells[1]),
                "handgun": _int(cells[2]),
                "long_gun": _int(cells[3]),
                "other": _int(cells[4]),
                "multiple": _int(cells[5]),
                "admin": _int(cells[6]),
                "total": _int(cells[-1]),
            }


def cash_flow_rows() -> Iterator[dict[str, Any]]:
    import openpyxl

    wb = openpyxl.load_workbook(IDA_XLSX, read_only=True, data_only=True)
    try:
        for section, item, year, amount in list(wb.active.iter_rows(values_only=True))[2:]:
            if section and item and year:
                yield {
                    "section": str(section).removeprefix("Cash flows from ").strip(),
                    "line_item": " ".join(str(item).split()),
                    "fiscal_year": int(year),
                    "amount_musd": None if amount is None else float(amount),
                }
    finally:
        wb.close()


def ticket_rows() -> Iterator[dict[str, Any]]:
    import openpyxl

    wb = openpyxl.load_workbook(TICKETS_XLSX, read_only=True, data_only=True)
    try:
        for row in list(wb.active.iter_rows(values_only=True))[1:]:
            _, title, file, _url, detail, _ = row
            day, number = str(file).split(".")
            yield {
                "ticket_id": int(number),
                "title": str(title or "").strip(),
                "opened": date.fromisoformat(day),
                "month": day[:7],
                "state": "closed",
                "detail": str(detail or "")[:4000],
            }
    finally:
        wb.close()


def load_sample(url: str, loaded_at: datetime | None = None) -> LoadReport:
    """(Re)create the sample tables at `url` and fill them. `loaded_at` is what the
    freshness age is measured from (default now)."""
    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    engine: Engine = create_engine(url)
    try:
        metadata.drop_all(engine)
        metadata.create_all(engine)
        data = {
            "nics_checks": list(nics_rows()),
            "cash_flows": list(cash_flow_rows()),
            "tickets": list({t["ticket_id"]: t for t in ticket_rows()}.values()),
        }
        if len(data["nics_checks"]) < 50:
            raise ConfigError(f"NICS table read {len(data['nics_checks'])} states, expected 55")
        at = (loaded_at or datetime.now(UTC)).astimezone(UTC).replace(tzinfo=None)
        with engine.begin() as conn:
            for name, rows in data.items():
                conn.execute(insert(metadata.tables[name]), rows)
            conn.execute(insert(sample_meta), [{"name": "sample", "loaded_at": at}])
        return LoadReport(url.split("@")[-1], {k: len(v) for k, v in data.items()})
    finally:
        engine.dispose()


def grant_read_only(url: str, role: str) -> None:
    """PostgreSQL: let `role` read the sample tables and nothing else (creating the role:
    deploy/postgres/gateway-readonly.sql; deploy/local/postgres.sh makes ragline_reader)."""
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            for name in metadata.tables:
                conn.exec_driver_sql(f'GRANT SELECT ON "{name}" TO "{role}"')
    finally:
        engine.dispose()
