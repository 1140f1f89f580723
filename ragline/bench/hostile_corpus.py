"""A seeded generator of hostile and damaged files, for `ragline bench hostile` and the
hostile corpus test (issue 14).

Two parts: mutated copies of real documents (truncation, bit flips, zero-filled ranges,
a wrong extension) and crafted files aimed at known weak spots (deep or huge HTML,
control characters, PDFs with reference cycles and flate bombs, ZIP bombs including many
medium members, endless one-line Markdown, files with no text at all). The same seed and
sources give the same files, byte for byte.
"""

from __future__ import annotations

import io
import random
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MB = 1024 * 1024
MUTATIONS = ("truncate", "flip", "zero", "wrong_ext")
_OTHER_EXT = {
    ".pdf": ".docx",
    ".docx": ".pdf",
    ".xlsx": ".md",
    ".html": ".pdf",
    ".md": ".xlsx",
    ".txt": ".html",
}


@dataclass(frozen=True, slots=True)
class HostileFile:
    path: Path
    kind: str  # the mutation or crafted case, e.g. "flip", "pdf_flate_bomb"
    origin: str = ""  # the source document a mutation started from


def find_shared_docs(start: Path) -> Path | None:
    """The shared documents folder (`shared/data/docs`) beside `start` or an ancestor."""
    for parent in (start, *start.parents):
        candidate = parent / "shared" / "data" / "docs"
        if candidate.is_dir():
            return candidate
    return None


def source_documents(docs_dir: Path) -> list[Path]:
    return sorted(p for p in docs_dir.rglob("*") if p.is_file() and p.suffix != ".tsv")


# ------------------------------------------------------------------ mutations of real files
def _truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(max(1, len(data) // 20), max(2, len(data) * 19 // 20))]


def _flip(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.choice((1, 3, 10, 40))):
        i = rng.randrange(len(out))
        out[i] ^= 1 << rng.randrange(8)
    return bytes(out)


def _zero(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    size = min(len(out) // 2 or 1, rng.choice((16, 512, 4096, 65536)))
    start = rng.randrange(max(1, len(out) - size))
    out[start : start + size] = bytes(size)
    return bytes(out)


def mutate(data: bytes, kind: str, rng: random.Random) -> bytes:
    if kind == "truncate":
        return _truncate(data, rng)
    if kind == "flip":
        return _flip(data, rng)
    if kind == "zero":
        return _zero(data, rng)
    return data  # wrong_ext: same bytes, another name


# ------------------------------------------------------------------------ crafted files
def pdf_bytes(objects: Sequence[bytes], root: int = 1, trailer_extra: bytes = b"") -> bytes:
    """A PDF with these objects (numbered from 1) and a correct xref table; `trailer_extra`
    goes into the trailer dictionary (an /Info or /Encrypt reference)."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R %s>>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        root,
        trailer_extra + b" " if trailer_extra else b"",
        xref,
    )
    return bytes(out)


def _stream(content: bytes, compress: bool = False) -> bytes:
    if compress:
        data = zlib.compress(content, 9)
        return (
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"
        )
    return b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"


_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
_TEXT = b"BT /F1 12 Tf 72 720 Td (Reference cycles must not hang the parser.) Tj ET"


def _page(parent: int, contents: int, font: int) -> bytes:
    return (
        b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
        b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (parent, contents, font)
    )


def pdf_kids_cycle() -> bytes:
    """The page tree lists itself among its kids."""
    return pdf_bytes(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
            _page(2, 4, 5),
            _stream(_TEXT),
            _FONT,
        ]
    )


def pdf_parent_cycle() -> bytes:
    """Two page-tree nodes that are each other's parent and kid, plus an outline loop."""
    return pdf_bytes(
        [
            b"<< /Type /Catalog /Pages 2 0 R /Outlines 7 0 R >>",
            b"<< /Type /Pages /Kids [6 0 R] /Count 1 /Parent 6 0 R >>",
            _page(6, 4, 5),
            _stream(_TEXT),
            _FONT,
            b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 1 /Parent 2 0 R >>",
            b"<< /Type /Outlines /First 8 0 R /Last 8 0 R /Count 1 >>",
            b"<< /Title (loop) /Parent 7 0 R /Next 8 0 R /Prev 8 0 R /First 8 0 R "
            b"/Dest [3 0 R /Fit] >>",
        ]
    )


def pdf_self_reference() -> bytes:
    """An object whose value is a reference to itself, used as the page's contents."""
    return pdf_bytes(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            _page(2, 4, 5),
            b"4 0 R",
            _FONT,
        ]
    )


def pdf_surrogate_font() -> bytes:
    """A font whose ToUnicode map sends glyphs to a lone surrogate (U+DC43) and to NUL:
    what flipped bytes in a real font map do, and what once ended a whole file with
    `UnicodeEncodeError: surrogates not allowed` in the embedder."""
    cmap = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /X def\n"
        b"1 begincodespacerange <00> <FF> endcodespacerange\n"
        b"2 beginbfchar <41> <DC43> <42> <0000> endbfchar endcmap\n"
        b"CMapName currentdict /CMap defineresource pop end end"
    )
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>"
    text = (
        b"BT /F1 12 Tf 72 720 Td (Damaged font maps AAB here; the rest of this sentence "
        b"about the retention of wombat invoices is fine text.) Tj ET"
    )
    return pdf_bytes(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            _page(2, 4, 5),
            _stream(text),
            font,
            _stream(cmap),
        ]
    )


def pdf_flate_bomb(inflated_mb: int) -> bytes:
    """A page whose content stream inflates from a few hundred KB to `inflated_mb`."""
    body = _TEXT + b"\n" + b" " * (inflated_mb * MB)
    return pdf_bytes(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            _page(2, 4, 5),
            _stream(body, compress=True),
            _FONT,
        ]
    )


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


_CONTENT_TYPES = (
    b'<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/'
    b'package/2006/content-types"/>'
)


def zip_bomb_docx(inflated_mb: int) -> bytes:
    """One member that inflates `inflated_mb` from almost nothing."""
    return _zip(
        {
            "[Content_Types].xml": _CONTENT_TYPES,
            "word/document.xml": b"<w:document>" + b"\0" * (inflated_mb * MB),
        }
    )


def many_members_xlsx(members: int, member_mb: int) -> bytes:
    """Many medium sheets, each under a per-member ratio check, together gigantic."""
    row = b"<row><c><v>1</v></c></row>"
    sheet = (
        b"<worksheet><sheetData>" + row * (member_mb * MB // len(row)) + b"</sheetData></worksheet>"
    )
    files = {"[Content_Types].xml": _CONTENT_TYPES}
    files.update({f"xl/worksheets/sheet{i + 1}.xml": sheet for i in range(members)})
    return _zip(files)


def empty_xlsx() -> bytes:
    from openpyxl import Workbook

    buf = io.BytesIO()
    Workbook().save(buf)
    return buf.getvalue()


def nested_html(depth: int) -> bytes:
    return (
        b"<!DOCTYPE html><html><head><title>Deep</title></head><body>"
        + b"<div>" * depth
        + b"<p>Text under many nested divisions must still be indexed.</p>"
        + b"</div>" * depth
        + b"</body></html>"
    )


def huge_pre_html(mb: float) -> bytes:
    line = b"log line with a request id and a status code 200\n"
    body = line * int(mb * MB / len(line))
    return (
        b"<!DOCTYPE html><html><body><h1>Server log</h1><pre>"
        + body
        + b"</pre><p>After the log.</p></body></html>"
    )


def control_chars_html() -> bytes:
    return (
        b"<!DOCTYPE html><html><body><h1>Title\x01</h1><p>Before\x00 a control\x0b "
        b"character\x1f and \xef\xbf\xbf a non-character.</p><p>\xed\xa0\x80 lone "
        b"surrogate bytes in UTF-8.</p></body></html>"
    )


def control_chars_text() -> bytes:
    return (
        b"Plain notes.\x00\x07 Bell and NUL.\x0c New page.\x1b[31m escape codes.\n"
        + b"\xed\xb2\x80 encoded surrogate \xff\xfe invalid bytes.\n" * 50
    )


def one_line_markdown(mb: float) -> bytes:
    words = b"alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu "
    return b"# One line\n\n" + words * int(mb * MB / len(words)) + b"\n"


def crafted(scale: float) -> list[tuple[str, str, bytes]]:
    """(kind, file name, bytes) for every crafted case; `scale` shrinks the huge ones
    (1.0 = the sizes of the original probe)."""
    big = max(1, int(256 * scale))
    return [
        ("pdf_kids_cycle", "kids-cycle.pdf", pdf_kids_cycle()),
        ("pdf_parent_cycle", "parent-cycle.pdf", pdf_parent_cycle()),
        ("pdf_self_reference", "self-reference.pdf", pdf_self_reference()),
        ("pdf_surrogate_font", "surrogate-font.pdf", pdf_surrogate_font()),
        ("pdf_flate_bomb", "flate-bomb.pdf", pdf_flate_bomb(big)),
        ("zip_bomb", "zip-bomb.docx", zip_bomb_docx(max(200, big))),
        ("zip_many_members", "many-sheets.xlsx", many_members_xlsx(8, 16)),
        ("zip_not_office", "archive.docx", _zip({"readme.txt": b"not an office file"})),
        ("empty_xlsx", "empty.xlsx", empty_xlsx()),
        ("nested_html", "nested-300.html", nested_html(300)),
        ("nested_html", "nested-deep.html", nested_html(max(2000, int(100_000 * scale)))),
        ("huge_pre_html", "huge-pre.html", huge_pre_html(11.6 * scale)),
        ("control_chars_html", "control.html", control_chars_html()),
        ("control_chars_text", "control.txt", control_chars_text()),
        (
            "script_only_html",
            "script-only.html",
            b"<html><body><script>var x = 1;</script><img src='a.png'></body></html>",
        ),
        ("whitespace_only", "blank.md", b" \n\t\n   \n"),
        ("zero_bytes", "empty.txt", b""),
        ("random_bytes", "noise.pdf", random.Random(1).randbytes(4096)),
        ("one_line_markdown", "one-line.md", one_line_markdown(20 * scale)),
    ]


def generate(
    sources: Sequence[Path], out: Path, mutated: int, seed: int = 14, scale: float = 1.0
) -> list[HostileFile]:
    """Write `mutated` mutated copies of `sources` (round robin over the sources, mutation
    and its parameters drawn from `seed`) and every crafted case into `out`."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    files: list[HostileFile] = []
    cache: dict[Path, bytes] = {}
    for i in range(mutated):
        src = sources[i % len(sources)]
        data = cache.setdefault(src, src.read_bytes())
        kind = rng.choice(MUTATIONS)
        suffix = src.suffix.lower()
        if kind == "wrong_ext":
            suffix = _OTHER_EXT.get(suffix, ".txt")
        path = out / f"m{i:03d}-{kind}-{src.stem[:24]}{suffix}"
        path.write_bytes(mutate(data, kind, rng))
        files.append(HostileFile(path, kind, src.name))
    for kind, name, data in crafted(scale):
        path = out / f"c-{name}"
        path.write_bytes(data)
        files.append(HostileFile(path, kind))
    return files
