"""Strict Open XML (ISO/IEC 29500 Strict) DOCX and XLSX open natively, without Tika.

The fixtures are made here: an ordinary (Transitional) file written with python-docx or
openpyxl, its namespaces and relationship types then renamed to the Strict ones exactly
as Word/Excel write them ("Save as Strict Open XML").
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import docx
import openpyxl
import pytest

from ingestion.parse import parse_bytes
from ingestion.parsers._ooxml import is_strict, to_transitional

_TRANSITIONAL = re.compile(rb"http://schemas\.openxmlformats\.org/([A-Za-z]+)/2006/([A-Za-z\-]+)")
_CAMEL = {b"extended-properties": b"extendedProperties", b"custom-properties": b"customProperties"}


def to_strict(data: bytes) -> bytes:
    """A Transitional package rewritten with the Strict names (the OPC package
    namespaces, schemas.openxmlformats.org/package/..., are the same in both)."""

    def strict(m: re.Match[bytes]) -> bytes:
        area, name = m.group(1), m.group(2)
        if area == b"package":
            return m.group(0)
        return b"http://purl.oclc.org/ooxml/%s/%s" % (area, _CAMEL.get(name, name))

    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as src,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for info in src.infolist():
            body = src.read(info)
            if info.filename.endswith((".xml", ".rels")):
                body = _TRANSITIONAL.sub(strict, body)
            dst.writestr(info, body)
    return out.getvalue()


def _docx_bytes() -> bytes:
    d = docx.Document()
    d.core_properties.title = "Quarterly Safety Review"
    d.add_heading("Findings", level=1)
    d.add_paragraph("Three valves failed the pressure test in March.")
    table = d.add_table(rows=3, cols=2)
    for r, (k, v) in enumerate([("Site", "Failures"), ("Plant A", "2"), ("Plant B", "1")]):
        table.cell(r, 0).text, table.cell(r, 1).text = k, v
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def _xlsx_bytes() -> bytes:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Budget"
    for row in [("Item", "Cost"), ("Pumps", 1200), ("Valves", 340)]:
        ws.append(row)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def test_fixture_is_strict_and_the_libraries_alone_reject_it() -> None:
    strict = to_strict(_docx_bytes())
    assert is_strict(strict) and not is_strict(_docx_bytes())
    with zipfile.ZipFile(io.BytesIO(strict)) as zf:
        assert b"purl.oclc.org/ooxml/wordprocessingml/main" in zf.read("word/document.xml")
    # The failure users saw: python-docx cannot find the Transitional office document.
    with pytest.raises(KeyError, match="officeDocument"):
        docx.Document(io.BytesIO(strict))


def test_strict_docx_parses_natively_like_its_transitional_twin() -> None:
    strict = to_strict(_docx_bytes())
    doc = parse_bytes(strict, Path("review.docx"))
    twin = parse_bytes(_docx_bytes(), Path("review.docx"))
    assert doc.parser.startswith("python-docx/")  # native, no Tika involved
    assert doc.title == "Quarterly Safety Review"
    assert [(b.kind, b.text) for b in doc.blocks] == [(b.kind, b.text) for b in twin.blocks]
    [table] = [b for b in doc.blocks if b.kind == "table"]
    assert table.rows == (("Site", "Failures"), ("Plant A", "2"), ("Plant B", "1"))


def test_strict_xlsx_parses_natively() -> None:
    doc = parse_bytes(to_strict(_xlsx_bytes()), Path("budget.xlsx"))
    assert doc.parser.startswith("openpyxl/")
    [table] = [b for b in doc.blocks if b.kind == "table"]
    assert table.rows == (("Item", "Cost"), ("Pumps", "1200"), ("Valves", "340"))
    assert [b.text for b in doc.blocks if b.kind == "heading"] == ["Budget"]


def test_transitional_packages_pass_through_untouched() -> None:
    data = _docx_bytes()
    assert to_transitional(data) is data
    assert to_transitional(b"not a zip") == b"not a zip"


_DOCS = Path(
    __import__("os").environ.get(
        "RAGLINE_SHARED_DOCS",
        Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "docs",
    )
)


@pytest.mark.parametrize(
    "rel",
    [
        "docx/zhen-mineru-docx_01.docx",
        "docx/zh-需求规格说明书-cylong1016.docx",
        "xlsx/mixed-mineru-xlsx_01.xlsx",
    ],
)
def test_real_documents_saved_as_strict_parse_the_same(rel: str) -> None:
    path = _DOCS / rel
    if not path.is_file():
        pytest.skip(f"shared document {rel} not present")
    data = path.read_bytes()
    strict = parse_bytes(to_strict(data), path)
    plain = parse_bytes(data, path)
    assert strict.title == plain.title
    assert [(b.kind, b.text, b.rows) for b in strict.blocks] == [
        (b.kind, b.text, b.rows) for b in plain.blocks
    ]
