"""Make extracted text safe for everything downstream, once, at the parser boundary.

Damaged files make text extractors emit characters no store or tokenizer accepts: lone
UTF-16 surrogates (a PDF font map pointing into D800-DFFF), NUL and other C0/C1 control
characters, non-characters (U+FFFE, U+FDD0...). They end a whole file later with
`UnicodeEncodeError: surrogates not allowed` in the embedder, or an XML-compatibility error
in a library. `sanitize_document` removes them from every string a `ParsedDocument` carries
(block text, table cells, section paths, title, warnings) and says how many it removed.

Tab, line feed and carriage return are kept; form feed and vertical tab become a line feed
(they separate pages and lines in extracted text, so the break is meaningful).
"""

from __future__ import annotations

import re
from dataclasses import replace

from core.types import Block, ParsedDocument

# C0 controls except \t \n \r (\f \v handled apart), DEL, C1 controls, lone surrogates,
# the non-characters FDD0-FDEF and every plane's xFFFE/xFFFF.
_NONCHARS = "".join(
    f"\\U{(plane << 16) | 0xFFFE:08x}\\U{(plane << 16) | 0xFFFF:08x}" for plane in range(17)
)
_INVALID = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef" + _NONCHARS + "]")
_BREAKS = re.compile("[\x0b\x0c]")


def sanitize_text(text: str) -> tuple[str, int]:
    """`text` without invalid characters, and how many were removed."""
    if _BREAKS.search(text):
        text = _BREAKS.sub("\n", text)
    return remove_invalid(text)


def remove_invalid(text: str) -> tuple[str, int]:
    """`text` without invalid characters (form feed and vertical tab kept: a parser's line
    numbers count lines of the file as it is), and how many were removed."""
    return _INVALID.subn("", text)


class _Counter:
    def __init__(self) -> None:
        self.removed = 0

    def __call__(self, text: str) -> str:
        cleaned, n = sanitize_text(text)
        self.removed += n
        return cleaned


def _quiet(text: str) -> str:
    return sanitize_text(text)[0]


def _block(b: Block, clean: _Counter) -> Block:
    # Headings in section paths and table cells repeat text already counted in a block.
    text = clean(b.text)
    return replace(
        b,
        text=text,
        section_path=tuple(_quiet(s) for s in b.section_path),
        rows=tuple(tuple(_quiet(c) for c in row) for row in b.rows),
        line_marks=b.line_marks if text == b.text else (),
    )


def sanitize_document(doc: ParsedDocument) -> ParsedDocument:
    """`doc` with invalid characters removed everywhere; a warning counts them. Blocks
    left empty by the cleaning are dropped (they held nothing but invalid characters)."""
    clean = _Counter()
    blocks = tuple(_block(b, clean) for b in doc.blocks)
    blocks = tuple(b for b in blocks if b.text.strip() or b.rows)
    title = clean(doc.title)
    warnings = (*(clean(w) for w in doc.warnings), *removed_warning(clean.removed))
    return replace(doc, blocks=blocks, title=title.strip(), warnings=warnings)


def removed_warning(removed: int) -> tuple[str, ...]:
    """The warning that says how many invalid characters were removed (none for 0). A
    parser that must clean its input before its library reads it (markdown-it turns NUL
    into U+FFFD, lxml refuses control characters) reports its count with it."""
    if not removed:
        return ()
    return (
        f"removed {removed} invalid character(s) from the extracted text "
        "(control characters, lone surrogates or non-characters: a damaged file or font)",
    )
