"""The formats a document is stored as (its `doc_type`), and the file extensions that name
them. Ingestion picks a file's format from these (`ingestion.parse`); a query's doc_type
filter is checked against them, so a filter no document can ever match ("md", "pfd") is
refused with the known names instead of silently finding nothing."""

from __future__ import annotations

from collections.abc import Iterable

from core.errors import InvalidRequest

# Parsed natively.
FORMATS = ("pdf", "docx", "xlsx", "pptx", "odf", "html", "markdown", "text", "eml")
EXTENSION_FORMATS = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".docm": "docx",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".pptx": "pptx",
    ".pptm": "pptx",
    ".odt": "odf",
    ".ods": "odf",
    ".odp": "odf",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".log": "text",
    ".csv": "text",
    ".tsv": "text",
    ".rst": "text",
    ".json": "text",
    ".eml": "eml",
}
# Parsed by a Tika server only; the format is the extension without its dot.
TIKA_ONLY = {
    ".doc": "legacy Word",
    ".xls": "legacy Excel",
    ".ppt": "legacy PowerPoint",
    ".rtf": "RTF",
    ".msg": "Outlook message",
}
DOC_TYPES = frozenset(FORMATS) | frozenset(ext[1:] for ext in TIKA_ONLY)
DOC_TYPES_HELP = (
    f"Only these formats: {', '.join(FORMATS)} (Tika: {', '.join(e[1:] for e in TIKA_ONLY)}), "
    "or a file extension that names one (md, htm, csv)."
)


def doc_type_filter(values: Iterable[str], field: str = "doc_types") -> frozenset[str]:
    """A query's doc_type filter as stored formats: each value is a format's name
    ("markdown") or a file extension that names one ("md", ".htm": "html"; "csv": "text",
    the format CSV files are stored as). Anything else is an InvalidRequest that names
    the known formats."""
    out: set[str] = set()
    for value in values:
        name = value.strip().lower()
        fmt = name if name in DOC_TYPES else EXTENSION_FORMATS.get("." + name.lstrip("."))
        if fmt is None and name.lstrip(".") in DOC_TYPES:
            fmt = name.lstrip(".")
        if fmt is None:
            raise InvalidRequest(
                f"{field}: {value!r} is not a document format; known: "
                f"{', '.join(sorted(DOC_TYPES))} (or a file extension, e.g. md, htm, csv)"
            )
        out.add(fmt)
    return frozenset(out)
