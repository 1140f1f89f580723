"""HTML: main content only (boilerplate removed), headings, real tables, lists, code.

lxml for speed and `sourceline`, which gives each block its line in the source file.

Robust by construction: every traversal is iterative (explicit stacks, `iterwalk`), so
deep nesting costs no Python recursion; the parser runs with `huge_tree` so deep trees and
text nodes over libxml2's 10 MB default are kept, not truncated; characters XML cannot hold
(C0 controls, lone surrogates, U+FFFE/U+FFFF) are removed before parsing instead of
failing the file. Inline elements (links, emphasis, `<sup>`, footnote marks) are read in
document order: an element's tail text follows its whole subtree.
"""

from __future__ import annotations

import html as html_lib
import itertools
import re
from collections.abc import Iterator
from pathlib import PurePath

import lxml.html
from lxml import etree

from core.errors import ParseError
from core.types import ParsedDocument
from ingestion.parsers._common import BlockBuilder, clean_text, decode, item_marks
from ingestion.sanitize import removed_warning

PARSER = f"lxml/{'.'.join(map(str, etree.LXML_VERSION[:3]))}"

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-]+)""", re.I)
# Characters an XML tree cannot hold: C0 controls but tab/newline/CR, DEL, lone
# surrogates, and the two non-characters U+FFFE/U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
_DROP_TAGS = {
    "script",
    "style",
    "noscript",
    "nav",
    "aside",
    "form",
    "iframe",
    "svg",
    "button",
    "select",
    "template",
    "object",
    "embed",
    "input",
    "textarea",
    "label",
    "map",
    "canvas",
    "audio",
    "video",
    "head",
}
# class/id words that mark boilerplate (navigation, ads, comments, reference lists).
_JUNK = re.compile(
    r"(^|[\s_\-])(nav|navbox|navbar|vertical-navbox|sidebar|menu|footer|breadcrumbs?|"
    r"advert\w*|ads?|banner\w*|comments?|reflist|references|mw-references-wrap|"
    r"mw-editsection|mw-jump-link|catlinks|printfooter|noprint|toc|metadata|hatnote|"
    r"share|social|related|login\w*|cookie\w*|popup|mw-cite-backlink|reference|"
    r"sistersitebox|portal|authority-control|mw-indicators|sitesub|contentsub|copyright\w*"
    r")($|[\s_\-])",
    re.IGNORECASE,
)
_JUNK_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search", "menu"}
_MAIN_XPATH = (
    "//article",
    "//*[@role='main']",
    "//*[@id='mw-content-text']",
    "//*[@id='content']",
    "//main",
)
_BLOCK = {
    "p",
    "div",
    "section",
    "article",
    "main",
    "ul",
    "ol",
    "dl",
    "table",
    "pre",
    "blockquote",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "figure",
    "figcaption",
    "center",
    "dt",
    "dd",
    "hr",
    "br",
    "address",
    "details",
    "summary",
    "header",
    "footer",
    "li",
    "tbody",
    "thead",
    "tr",
    "td",
    "th",
}
# Blocks that are containers: their children are walked like the page's.
_CONTAINERS = _BLOCK - {
    "p",
    "ul",
    "ol",
    "dl",
    "pre",
    "table",
    "br",
    "hr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
}
_HEADINGS = {f"h{i}": i for i in range(1, 7)}
_LINE_BREAKS = {"li", "p", "div", "tr", "dt", "dd"}
_BODY = re.compile(r"<body[^>]*>(.*)", re.IGNORECASE | re.DOTALL)
_DROP_RE = re.compile(
    r"<(script|style|noscript|template|svg)\b.*?</\1\s*>|<!--.*?-->", re.IGNORECASE | re.DOTALL
)
_TAGS = re.compile(r"<[^>]*>")
_MAX_SPAN = 50  # colspan/rowspan cap: a hostile "rowspan=1000000" must not blow up
# "Duck - Wikipedia", "标题 _频道 _光明网": the site name after a separator.
_TITLE_SEP = re.compile(r"\s+[-–—|_·:]\s*|\s*[|_]\s+")


def _decode(data: bytes) -> str:
    m = _META_CHARSET.search(data[:4096])
    if m:
        enc = m.group(1).decode("ascii").lower()
        if enc in ("gb2312", "gbk", "gb_2312-80", "cp936"):
            enc = "gb18030"  # superset: never fails on characters GBK lacks
        try:
            return data.decode(enc)
        except (LookupError, UnicodeDecodeError):
            pass
    return decode(data)[0]


def _tag(el: etree._Element) -> str:
    return el.tag if isinstance(el.tag, str) else ""


def _is_junk(el: etree._Element) -> bool:
    tag = _tag(el)
    if tag in _DROP_TAGS or not tag:
        return True
    if el.get("role", "").lower() in _JUNK_ROLES or el.get("aria-hidden") == "true":
        return True
    if tag in _FRAMES:
        return _is_chrome(el)
    if "display:none" in el.get("style", "").replace(" ", "").lower():
        return True
    if tag in ("table", "div", "ul", "ol", "section", "span", "sup", "p", "dl", "li"):
        names = f"{el.get('class', '')} {el.get('id', '')}"
        return bool(names.strip()) and bool(_JUNK.search(names))
    return False


# A page's or an article's header and footer: a document's own (its title, version, dates in
# force, what it replaces, footnotes, contacts) unless they are the site's chrome.
_FRAMES = ("header", "footer")
_LINKED_SHARE = 0.3  # of a frame's text in links: a site's menu or footer of links


def _is_chrome(el: etree._Element) -> bool:
    """Whether a <header>/<footer> is the site's chrome: it holds navigation, a form (a
    search box), a boilerplate class ("mw-footer"), or is mostly links."""
    if el.find(".//nav") is not None or el.find(".//form") is not None:
        return True
    names = f"{el.get('class', '')} {el.get('id', '')}"
    if names.strip() and _JUNK.search(names):
        return True
    text = len(el.text_content().strip())
    linked = sum(len(a.text_content().strip()) for a in el.iter("a"))
    return not text or linked >= _LINKED_SHARE * text


def _frames_outside(doc: etree._Element, root: etree._Element) -> list[etree._Element]:
    """The document's own headers and footers the content container leaves out (a page
    header above <main>, a footer below it), outermost only, in document order."""
    holding_root = set(root.iterancestors())
    out: list[etree._Element] = []
    for el in doc.iter(*_FRAMES):
        above = set(el.iterancestors())
        if root in above or el in holding_root or above.intersection(out):
            continue  # inside the container, holding it, or inside a frame already kept
        out.append(el)
    return out


def _strip_junk(root: etree._Element) -> None:
    for el in list(root.iter()):
        if el.getparent() is not None and _is_junk(el):
            el.drop_tree()  # keeps the element's tail text


def _main(doc: etree._Element) -> etree._Element:
    for xp in _MAIN_XPATH:
        found = doc.xpath(xp)
        if found and len(found[0].text_content().strip()) > 200:
            return found[0]
    # Readability-style: the element whose paragraphs hold the most text.
    scores: dict[etree._Element, float] = {}
    for p in doc.iter("p", "br", "pre"):
        parent = p.getparent()
        if parent is None:
            continue
        n = len((p.text_content() if p.tag != "br" else (p.tail or "")).strip())
        scores[parent] = scores.get(parent, 0.0) + n
        grand = parent.getparent()
        if grand is not None:
            scores[grand] = scores.get(grand, 0.0) + n / 2
    body = doc.find("body")
    if not scores:
        return body if body is not None else doc
    best = max(scores, key=lambda e: scores[e])
    return best if scores[best] > 100 else (body if body is not None else doc)


def _text(el: etree._Element, skip: frozenset[str] = frozenset()) -> str:
    """Text of `el` in reading order: each element's text, then its children, then its
    tail. Block-level children start a new line; `skip` names subtrees left out."""
    parts: list[str] = []
    walker = etree.iterwalk(el, events=("start", "end"))
    for event, node in walker:
        tag = _tag(node)
        if event == "start":
            if node is not el and tag in skip:
                walker.skip_subtree()  # its "end" event still comes: the tail is read there
                continue
            if tag == "br" or (node is not el and tag in _LINE_BREAKS):
                parts.append("\n")
            if tag and node.text:
                parts.append(node.text)
        elif node is not el and node.tail:
            parts.append(node.tail)
    lines = [clean_text(x) for x in "".join(parts).split("\n")]
    return "\n".join(x for x in lines if x)


def _inline(el: etree._Element) -> str:
    return _text(el).replace("\n", " ")


def _last_line(el: etree._Element) -> int:
    return max((n.sourceline or 0) for n in el.iter()) or (el.sourceline or 1)


def _span(cell: etree._Element, attr: str) -> int:
    raw = (cell.get(attr) or "1").strip()
    return max(1, min(int(raw), _MAX_SPAN)) if raw.isdigit() else 1


class _Walker:
    """Blocks in reading order from a content root, with an explicit stack (no recursion):
    each stack entry is either an element to open or a closing action."""

    def __init__(self) -> None:
        self.b = BlockBuilder()
        self.inline: list[str] = []
        self.inline_line = 1

    def flush(self, end: etree._Element | int) -> None:
        text = clean_text("".join(self.inline).replace("\n", " "))
        if text:
            last = end if isinstance(end, int) else _last_line(end)
            self.b.add("paragraph", text, 1, self.inline_line, max(last, self.inline_line))
        self.inline.clear()

    def push_inline(self, text: str | None, line: int) -> None:
        if text and text.strip():
            if not self.inline:
                self.inline_line = line
            self.inline.append(text)

    def run(self, root: etree._Element) -> None:
        # ("open", el): a container's own text, then its children; ("item", el): one child
        # in document order; ("close", el): flush the container's inline text, then its
        # tail continues the parent's inline text.
        stack: list[tuple[str, etree._Element]] = []
        tag = _tag(root)
        if tag in _BLOCK and tag not in _CONTAINERS:
            self.block(root, tag, stack)
        else:
            stack.append(("open", root))
        while stack:
            action, el = stack.pop()
            line = el.sourceline or 1
            if action == "open":
                self.push_inline(el.text, line)
                stack.append(("close", el))
                stack.extend(("item", child) for child in reversed(el))
            elif action == "close":
                self.flush(el)
                if el is not root:
                    self.push_inline(el.tail, line)
            else:
                ctag = _tag(el)
                if ctag in _CONTAINERS:
                    self.flush(line)
                    stack.append(("open", el))  # its tail is read when it closes
                    continue
                if ctag in _BLOCK:
                    self.flush(line)
                    self.block(el, ctag, stack)
                elif ctag:
                    self.push_inline(_inline(el), line)
                self.push_inline(el.tail, line)

    def block(self, el: etree._Element, tag: str, stack: list[tuple[str, etree._Element]]) -> None:
        line = el.sourceline or 1
        end = _last_line(el)
        if tag in _HEADINGS:
            self.b.heading(_inline(el), _HEADINGS[tag], 1, line, end)
        elif tag == "p":
            self.b.add("paragraph", _inline(el), 1, line, end)
        elif tag in ("ul", "ol"):
            items, spans = _list_items(el)
            self.b.add("list", "\n".join(items), 1, line, end, line_marks=item_marks(items, spans))
        elif tag == "dl":
            self.b.add("list", _definitions(el), 1, line, end)
        elif tag == "pre":
            self.b.add("code", el.text_content().strip("\n"), 1, line, end)
        elif tag == "table":
            self.table(el, line, end, stack)

    def table(
        self, el: etree._Element, line: int, end: int, stack: list[tuple[str, etree._Element]]
    ) -> None:
        rows, n_header = _table_rows(el)
        nested = any(True for t in el.iter("table") if t is not el)
        width = max((len(r) for r in rows), default=0)
        if nested or width <= 1:
            # Layout table: its cells are page regions, not data. They are walked like
            # containers, in order (pushed reversed onto the stack).
            cells = [c for c in el.iter("td", "th") if _ancestor_table(c) is el]
            stack.extend(("open", c) for c in reversed(cells))
            return
        caption = el.find("caption")
        if caption is not None and _text(caption):
            at = caption.sourceline or line
            self.b.add("paragraph", _inline(caption), 1, at, at)
        # A table written one row a line spans its rows' lines, so that each row is cited
        # at its own (`chunker._row_lines`); otherwise the whole table's.
        trs = [tr.sourceline or 0 for tr in el.iter("tr") if _ancestor_table(tr) is el]
        if len(trs) == len(rows) and all(b == a + 1 for a, b in itertools.pairwise(trs)):
            line, end = trs[0], trs[-1]
        self.b.table(rows, 1, line, end, n_header)


def _list_items(root: etree._Element) -> tuple[list[str], list[tuple[int, int]]]:
    """A (possibly nested) list, one item a line, indented by depth, with each item's
    first and last source line (its own text's, not its sublists'); iterative."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    # Entries: (list element, depth, "", _) to expand, or (None, _, line, span) to print.
    _Entry = tuple[etree._Element | None, int, str, tuple[int, int]]
    stack: list[_Entry] = [(root, 0, "", (0, 0))]
    while stack:
        el, depth, text, span = stack.pop()
        if el is None:
            out.append(text)
            spans.append(span)
            continue
        entries: list[_Entry] = []
        n = 0
        for li in el:
            if li.tag != "li":
                continue
            n += 1
            own = clean_text(_text(li, frozenset({"ul", "ol"})).replace("\n", " "))
            marker = f"{n}." if el.tag == "ol" else "-"
            if own:
                entries.append((None, depth, "  " * depth + f"{marker} {own}", _own_lines(li)))
            entries.extend(
                (c, depth + 1, "", (0, 0))
                for c in li.iter("ul", "ol")
                if c is not li and _nearest(c, "li") is li
            )
        stack.extend(reversed(entries))
    return out, spans


def _own_lines(li: etree._Element) -> tuple[int, int]:
    """The first and last source line of a list item's own text (its sublists left out;
    its leading text may wrap over lines of its own)."""
    nested = {n for c in li.iter("ul", "ol") if c is not li for n in c.iter()}
    lines = [n.sourceline for n in li.iter() if n.sourceline and n not in nested]
    if not lines:
        return (0, 0)
    wrapped = (li.sourceline or 0) + (li.text or "").rstrip().count("\n")
    return min(lines), max(*lines, wrapped)


def _definitions(dl: etree._Element) -> str:
    """A definition list as "term: definition" lines; several terms share the definitions
    that follow them, several definitions of one term are joined with "; "."""
    out: list[str] = []
    terms: list[str] = []
    defs: list[str] = []

    def emit() -> None:
        if terms or defs:
            term = " / ".join(terms)
            out.append(f"{term}: {'; '.join(defs)}" if term and defs else term or "; ".join(defs))

    for child in dl.iter("dt", "dd"):
        text = _inline(child)
        if not text or _nearest(child, "dl") is not dl:  # a nested list is in its dd
            continue
        if child.tag == "dt":
            if defs:
                emit()
                terms, defs = [], []
            terms.append(text)
        else:
            defs.append(text)
    emit()
    return "\n".join(out)


def _nearest(el: etree._Element, tag: str) -> etree._Element | None:
    p = el.getparent()
    while p is not None and p.tag != tag:
        p = p.getparent()
    return p


def _table_rows(el: etree._Element) -> tuple[list[list[str]], int | None]:
    """Rows of a data table with merged cells repeated over every position they cover
    (colspan sideways, rowspan downwards), and the number of header rows when the markup
    says so (leading rows in <thead> or made only of <th>; none when every row is a <th>
    key and its <td> values)."""
    rows: list[list[str]] = []
    header_flags: list[bool] = []
    keyed: list[bool] = []  # the row's first cell is a <th> naming the row, the rest <td>
    carry: dict[int, tuple[str, int]] = {}  # column -> (text, rows still covered)
    for tr in el.iter("tr"):
        # Rows of a nested table belong to that table, not this one.
        if _ancestor_table(tr) is not el:
            continue
        cells = [c for c in tr if c.tag in ("td", "th")]
        row: list[str] = []
        col = 0
        for cell in cells:
            while col in carry:
                row.append(_take(carry, col))
                col += 1
            text = _inline(cell)
            down = _span(cell, "rowspan")
            for _ in range(_span(cell, "colspan")):
                if down > 1:
                    carry[col] = (text, down - 1)
                row.append(text)  # merged cells repeat their value
                col += 1
        while col in carry:
            row.append(_take(carry, col))
            col += 1
        rows.append(row)
        in_head = tr.getparent() is not None and tr.getparent().tag == "thead"
        header_flags.append(in_head or (bool(cells) and all(c.tag == "th" for c in cells)))
        if len(cells) >= 2:  # one spanning cell (a logo, a sub-title) says nothing
            keyed.append(cells[0].tag == "th" and all(c.tag == "td" for c in cells[1:]))
    if len(keyed) >= 2 and all(keyed):
        return rows, 0  # every row is "key | value" (an infobox): no header row
    n = 0
    while n < len(header_flags) and header_flags[n]:
        n += 1
    return rows, (n if 0 < n < len(rows) else None)


def _take(carry: dict[int, tuple[str, int]], col: int) -> str:
    text, left = carry[col]
    if left <= 1:
        del carry[col]
    else:
        carry[col] = (text, left - 1)
    return text


def _ancestor_table(el: etree._Element) -> etree._Element | None:
    p = el.getparent()
    while p is not None and p.tag != "table":
        p = p.getparent()
    return p


def _meta_titles(doc: etree._Element) -> Iterator[str]:
    for xp in (
        "//meta[@property='og:title']/@content",
        "//meta[@name='title']/@content",
        "//title",
    ):
        for found in doc.xpath(xp):
            text = clean_text(found if isinstance(found, str) else found.text_content())
            if text:
                yield text


def _title(doc: etree._Element, h1: str, name: str) -> str:
    """The page's own title: the <h1> when the <title>/og:title carries it (they add the
    site name), else og:title or <title> without a trailing site name, else the <h1>,
    else the file name."""
    metas = list(_meta_titles(doc))
    if h1 and any(h1 in m for m in metas):
        return h1
    for meta in metas:
        head = _TITLE_SEP.split(meta)[0].strip()
        return head if len(head) >= 4 else meta
    return h1 or PurePath(name).stem


def parse(data: bytes, name: str) -> ParsedDocument:
    # lxml refuses control characters: removed first, and counted like the sanitiser's.
    text, removed = _NOT_XML.subn("", _decode(data))
    text = re.sub(r"^\s*<\?xml[^>]*>", "", text)
    parser = lxml.html.HTMLParser(huge_tree=True, remove_comments=True)
    try:
        doc = lxml.html.document_fromstring(text or "<html></html>", parser=parser)
    except (etree.ParserError, ValueError) as exc:
        raise ParseError(f"HTML could not be parsed: {exc}") from exc
    h1 = next(doc.iter("h1"), None)
    h1_text = _inline(h1) if h1 is not None else ""
    h1_line = (h1.sourceline or 1) if h1 is not None else 1
    title = _title(doc, h1_text, name)
    _strip_junk(doc)
    root = _main(doc)
    frames = _frames_outside(doc, root)
    start = root.sourceline or 0
    before = [f for f in frames if (f.sourceline or 0) < start]
    after = [f for f in frames if (f.sourceline or 0) >= start]
    w = _Walker()
    if h1_text and not any(next(el.iter("h1"), None) is not None for el in [*before, root]):
        # The article title often sits outside the content container (in a site's header).
        w.b.heading(h1_text, 1, 1, h1_line)
    for el in [*before, root, *after]:
        w.run(el)
    warnings: tuple[str, ...] = ()
    if not any(b.kind != "heading" for b in w.b.blocks):
        warnings = _flat_fallback(w.b, text)
    warnings = (*warnings, *removed_warning(removed))
    return ParsedDocument(tuple(w.b.blocks), 1, title, PARSER, warnings=warnings)


def _flat_fallback(b: BlockBuilder, text: str) -> tuple[str, ...]:
    """No content found in the tree (nesting beyond libxml2's depth limit truncates it):
    keep the text with the markup stripped, one paragraph per source line, and say so."""
    body = _BODY.search(text)
    src = body.group(1) if body else text
    src = _DROP_RE.sub(lambda m: "\n" * m.group(0).count("\n"), src)
    first = text[: body.start(1)].count("\n") + 1 if body else 1
    # Headings the tree did give are not "lost text": a page of headings alone stays that.
    headings = {blk.text for blk in b.blocks if blk.kind == "heading"}
    kept = 0
    for k, line in enumerate(_TAGS.sub(" ", src).split("\n")):
        line = clean_text(html_lib.unescape(line))
        if line and line not in headings:
            b.add("paragraph", line, 1, first + k)
            kept += 1
    if not kept:
        return ()
    return (
        "HTML structure could not be read (nesting too deep or markup broken); "
        "kept the text without structure",
    )
