"""Strict Open XML (ISO/IEC 29500 Strict) packages read as Transitional ones.

Word and Excel can save "Strict Open XML"; the parts are the same but every namespace and
relationship type moves from `http://schemas.openxmlformats.org/<area>/2006/<name>` to
`http://purl.oclc.org/ooxml/<area>/<name>`. python-docx and openpyxl know only the
Transitional names (python-docx fails with "no relationship of type
'.../officeDocument' in collection"). Rewriting the names in memory, before the library
opens the package, lets both read Strict files natively. The package-level (OPC)
namespaces are the same in both and are left alone.
"""

from __future__ import annotations

import io
import re
import zipfile

_STRICT = b"http://purl.oclc.org/ooxml/"
# purl.oclc.org/ooxml/<area>/<name> -> schemas.openxmlformats.org/<area>/2006/<name>
_NAME = re.compile(rb"http://purl\.oclc\.org/ooxml/([A-Za-z]+)/([A-Za-z]+)")
# Strict camel-cases the names Transitional hyphenates.
_RENAMED = {
    b"extendedProperties": b"extended-properties",
    b"customProperties": b"custom-properties",
}
_PARTS = (".xml", ".rels", ".vml")


def is_strict(data: bytes) -> bool:
    """Whether a DOCX/XLSX/PPTX package uses the Strict namespaces (its package
    relationships name a Strict office document)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            rels = zf.read("_rels/.rels") if "_rels/.rels" in zf.namelist() else b""
    except (zipfile.BadZipFile, KeyError, OSError):
        return False
    return _STRICT in rels


def _transitional_name(m: re.Match[bytes]) -> bytes:
    area, name = m.group(1), m.group(2)
    return b"http://schemas.openxmlformats.org/%s/2006/%s" % (area, _RENAMED.get(name, name))


def to_transitional(data: bytes) -> bytes:
    """The package with Strict namespaces and relationship types renamed to their
    Transitional equivalents; `data` unchanged when it is not Strict."""
    if not is_strict(data):
        return data
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as src,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for info in src.infolist():
            body = src.read(info)
            if info.filename.lower().endswith(_PARTS) and _STRICT in body:
                body = _NAME.sub(_transitional_name, body)
            dst.writestr(info, body)
    return out.getvalue()
