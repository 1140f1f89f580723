"""E-mail (.eml) via the stdlib: headers as a first paragraph, the body (text/plain preferred,
else HTML), then each attachment parsed by its own format under its filename."""

from __future__ import annotations

import contextlib
import dataclasses
import email
from email import policy
from email.message import EmailMessage, Message
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from core.errors import ParseError
from core.types import Block, ParsedDocument
from ingestion.parsers import html, text

if TYPE_CHECKING:
    from ingestion.parse import ParseOptions

PARSER = "email/stdlib"
_MAX_DEPTH = 3  # attached e-mails inside attached e-mails: stop somewhere


def _body(msg: EmailMessage, name: str) -> ParsedDocument | None:
    part = msg.get_body(preferencelist=("plain", "html"))
    if part is None:
        return None
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return None
    charset = part.get_content_charset()
    if charset:
        # On a wrong charset label, leave it to the text parser's detection.
        with contextlib.suppress(LookupError, UnicodeDecodeError):
            payload = payload.decode(charset).encode("utf-8")
    if part.get_content_subtype() == "html":
        return html.parse(payload, name + ".html")
    return text.parse(payload, name + ".txt")


def parse(
    data: bytes, name: str, depth: int = 0, options: ParseOptions | None = None
) -> ParsedDocument:
    """`options` reach the attachments: a .doc attachment goes to Tika when one is set."""
    from ingestion.parse import parse_bytes  # attachments dispatch by format; avoids a cycle

    msg = email.message_from_bytes(data, policy=policy.default)
    if not isinstance(msg, EmailMessage) or not msg.keys():
        raise ParseError("e-mail has no headers")
    header_lines = [f"{h}: {msg[h]}" for h in ("From", "To", "Cc", "Subject", "Date") if msg[h]]
    subject = str(msg["Subject"] or "").strip()
    blocks: list[Block] = [Block("paragraph", "\n".join(header_lines), 1, 1, len(header_lines))]
    warnings: list[str] = []
    body = _body(msg, PurePath(name).stem)
    if body is not None:
        blocks.extend(body.blocks)
    for part in msg.iter_attachments():
        filename = part.get_filename() or "attachment"
        payload = _payload(part)
        if not payload:
            continue
        try:
            if depth >= _MAX_DEPTH:
                raise ParseError("attachments nested too deeply")
            sub = (
                parse(payload, filename, depth + 1, options)
                if filename.lower().endswith(".eml")
                else parse_bytes(payload, Path(filename), options)
            )
        except ParseError as exc:
            warnings.append(f"attachment {filename!r} skipped: {exc}")
            continue
        blocks.extend(
            dataclasses.replace(b, section_path=(filename, *b.section_path)) for b in sub.blocks
        )
        warnings.extend(f"{filename}: {w}" for w in sub.warnings)
    return ParsedDocument(
        tuple(blocks), 1, subject or PurePath(name).stem, PARSER, warnings=tuple(warnings)
    )


def _payload(part: Message) -> bytes:
    if part.get_content_type() == "message/rfc822":
        inner = part.get_payload()
        msg = inner[0] if isinstance(inner, list) and inner else inner
        return msg.as_bytes() if isinstance(msg, Message) else b""
    payload = part.get_payload(decode=True)
    return payload if isinstance(payload, bytes) else b""
