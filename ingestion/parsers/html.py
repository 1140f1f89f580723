"""HTML: main content only (boilerplate removed), headings, real tables, lists, code.

lxml for speed and `sourceline`, which gives each block its line in the source file.
"""

from __future__ import annotations

import re
from pathlib import PurePath

import lxml.html
from lxml import etree

from core.errors import ParseError
from core.types import ParsedDocument
from ingestion.parsers._common import BlockBuilder, clean_text, decode

PARSER = f"lxml/{'.'.join(map(str, etree.LXML_VERSION[:3]))}"

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-]+)""", re.I)
_DROP_TAGS = {"script", "style", "noscript", "nav", "header", "footer", "aside", "form",
              "iframe", "svg", "button", "select", "template", "object", "embed", "input",
              "textarea", "label", "map", "canvas", "audio", "video", "head"}
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
_MAIN_XPATH = ("//article", "//*[@role='main']", "//*[@id='mw-content-text']",
               "//*[@id='content']", "//main")
_BLOCK = {"p", "div", "section", "article", "main", "ul", "ol", "dl", "table", "pre",
          "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "figure", "figcaption", "center",
          "dt", "dd", "hr", "br", "address", "details", "summary", "li", "tbody", "thead",
          "tr", "td", "th"}
_HEADINGS = {f"h{i}": i for i in range(1, 7)}


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


def _is_junk(el: etree._Element) -> bool:
    tag = el.tag if isinstance(el.tag, str) else ""
    if tag in _DROP_TAGS or not tag:
        return True
    if el.get("role", "").lower() in _JUNK_ROLES or el.get("aria-hidden") == "true":
        return True
    if "display:none" in el.get("style", "").replace(" ", "").lower():
        return True
    if tag in ("table", "div", "ul", "ol", "section", "span", "sup", "p", "dl", "li"):
        names = f"{el.get('class', '')} {el.get('id', '')}"
        return bool(names.strip()) and bool(_JUNK.search(names))
    return False


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
    for p in doc.iter("p", "br"):
        parent = p.getparent()
        if parent is None:
            continue
        n = len((p.text_content() if p.tag == "p" else (p.tail or "")).strip())
        scores[parent] = scores.get(parent, 0.0) + n
        grand = parent.getparent()
        if grand is not None:
            scores[grand] = scores.get(grand, 0.0) + n / 2
    body = doc.find("body")
    if not scores:
        return body if body is not None else doc
    best = max(scores, key=lambda e: scores[e])
    return best if scores[best] > 100 else (body if body is not None else doc)


def _text(el: etree._Element) -> str:
    parts: list[str] = []
    for node in el.iter():
        if node.tag == "br":
            parts.append("\n")
        if node is not el and node.tag in ("li", "p", "div", "tr", "dt", "dd"):
            parts.append("\n")
        if node.text and isinstance(node.tag, str):
            parts.append(node.text)
        if node is not el and node.tail:
            parts.append(node.tail)
    lines = [clean_text(x) for x in "".join(parts).split("\n")]
    return "\n".join(x for x in lines if x)


def _last_line(el: etree._Element) -> int:
    return max((n.sourceline or 0) for n in el.iter()) or (el.sourceline or 1)


class _Walker:
    def __init__(self) -> None:
        self.b = BlockBuilder()
        self.inline: list[str] = []
        self.inline_line = 1

    def flush(self, end: int) -> None:
        text = clean_text("".join(self.inline).replace("\n", " "))
        if text:
            self.b.add("paragraph", text, 1, self.inline_line, max(end, self.inline_line))
        self.inline.clear()

    def push_inline(self, text: str | None, line: int) -> None:
        if text and text.strip():
            if not self.inline:
                self.inline_line = line
            self.inline.append(text)

    def walk(self, el: etree._Element) -> None:
        self.push_inline(el.text, el.sourceline or 1)
        for child in el:
            tag = child.tag if isinstance(child.tag, str) else ""
            line = child.sourceline or 1
            if tag in _BLOCK:
                self.flush(line)
                self.block(child, tag, line)
            elif tag:
                self.push_inline(_text(child).replace("\n", " "), line)
            self.push_inline(child.tail, line)
        self.flush(_last_line(el))

    def block(self, el: etree._Element, tag: str, line: int) -> None:
        end = _last_line(el)
        if tag in _HEADINGS:
            self.b.heading(_text(el).replace("\n", " "), _HEADINGS[tag], 1, line, end)
        elif tag == "p":
            self.b.add("paragraph", _text(el).replace("\n", " "), 1, line, end)
        elif tag in ("ul", "ol"):
            self.b.add("list", self.list_text(el, tag == "ol", 0), 1, line, end)
        elif tag == "pre":
            self.b.add("code", el.text_content().strip("\n"), 1, line, end)
        elif tag == "table":
            self.table(el, line, end)
        elif tag not in ("br", "hr"):
            self.walk(el)

    def list_text(self, el: etree._Element, ordered: bool, depth: int) -> str:
        out: list[str] = []
        n = 0
        for li in el:
            if li.tag != "li":
                continue
            n += 1
            parts = [li.text or ""]
            nested: list[etree._Element] = []
            for c in li:
                if c.tag in ("ul", "ol"):
                    nested.append(c)
                elif isinstance(c.tag, str):
                    parts.append(_text(c))
                parts.append(c.tail or "")
            own = clean_text("".join(parts).replace("\n", " "))
            if own:
                out.append("  " * depth + f"{f'{n}.' if ordered else '-'} {own}")
            out.extend(s for c in nested if (s := self.list_text(c, c.tag == "ol", depth + 1)))
        return "\n".join(out)

    def table(self, el: etree._Element, line: int, end: int) -> None:
        rows: list[list[str]] = []
        for tr in el.iter("tr"):
            # Rows of a nested table belong to that table, not this one.
            if _ancestor_table(tr) is not el:
                continue
            row: list[str] = []
            for cell in tr:
                if cell.tag not in ("td", "th"):
                    continue
                text = _text(cell).replace("\n", " ")
                span = min(int(cell.get("colspan", "1") or 1) if
                           (cell.get("colspan") or "1").isdigit() else 1, 50)
                row.extend([text] * span)  # merged cells repeat their value
            rows.append(row)
        nested = any(True for t in el.iter("table") if t is not el)
        width = max((len(r) for r in rows), default=0)
        if nested or width <= 1:
            # Layout table: its cells are page regions, not data.
            self.walk_cells(el)
            return
        caption = el.find("caption")
        if caption is not None and _text(caption):
            self.b.add("paragraph", _text(caption).replace("\n", " "), 1, line, line)
        self.b.table(rows, 1, line, end)

    def walk_cells(self, el: etree._Element) -> None:
        for cell in el.iter("td", "th"):
            if _ancestor_table(cell) is el:
                self.walk(cell)


def _ancestor_table(el: etree._Element) -> etree._Element | None:
    p = el.getparent()
    while p is not None and p.tag != "table":
        p = p.getparent()
    return p


def parse(data: bytes, name: str) -> ParsedDocument:
    text = _decode(data)
    text = re.sub(r"^\s*<\?xml[^>]*>", "", text)
    try:
        doc = lxml.html.document_fromstring(text or "<html></html>")
    except (etree.ParserError, ValueError) as exc:
        raise ParseError(f"HTML could not be parsed: {exc}") from exc
    meta_title = clean_text(doc.findtext(".//title") or "")
    h1 = next((h for h in doc.iter("h1")), None)
    h1_text = _text(h1).replace("\n", " ") if h1 is not None else ""
    h1_line = (h1.sourceline or 1) if h1 is not None else 1
    _strip_junk(doc)
    root = _main(doc)
    w = _Walker()
    if h1_text and next(root.iter("h1"), None) is None:
        # The article title often sits outside the content container (even in <header>).
        w.b.heading(h1_text, 1, 1, h1_line)
    if root.tag in _BLOCK and root.tag not in ("div", "section", "article", "main", "td"):
        w.block(root, root.tag, root.sourceline or 1)
    else:
        w.walk(root)
    title = w.b.first_heading(1) or meta_title or PurePath(name).stem
    return ParsedDocument(tuple(w.b.blocks), 1, title, PARSER)
