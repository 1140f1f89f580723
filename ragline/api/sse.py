"""Server-Sent Events: the framing, and the answer cut into pieces for streaming.

Answers are streamed after their citation labels have been checked, never before: a
label the check would remove must never reach the reader. A first event goes out at
once (so clients see the stream open), the checked text follows in word groups.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from fastapi.responses import StreamingResponse

from ragline.api.errors import ApiError, error_type, status_of

_PIECE = re.compile(r"\S+\s*")
WORDS_PER_PIECE = 6


def event(data: Any, name: str = "") -> str:
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    head = f"event: {name}\n" if name else ""
    return head + "".join(f"data: {line}\n" for line in payload.split("\n")) + "\n"


def pieces(text: str, words: int = WORDS_PER_PIECE) -> Iterator[str]:
    """The text in groups of `words` words (whitespace kept, so joining gives it back;
    labels contain no spaces and are never cut). Chinese runs without spaces are cut
    every 24 characters instead."""
    tokens: list[str] = []
    for token in _PIECE.findall(text):
        tokens.extend(token[i : i + 24] for i in range(0, len(token), 24))
    lead = text[: len(text) - len(text.lstrip())]
    if lead:
        yield lead
    for i in range(0, len(tokens), words):
        yield "".join(tokens[i : i + words])


def refused(exc: Exception) -> bool:
    """Whether a failure is a refusal meant for the caller (not a server error to log)."""
    return isinstance(exc, ApiError) or status_of(exc) is not None


def error_payload(exc: Exception) -> dict[str, Any]:
    if isinstance(exc, ApiError):
        return {
            "error": {"type": error_type(exc.status), "message": exc.message, "status": exc.status}
        }
    if (status := status_of(exc)) is not None:
        return {"error": {"type": error_type(status), "message": str(exc), "status": status}}
    return {"error": {"type": "server_error", "message": "the answer failed; see the server log"}}


def sse_response(stream: AsyncIterator[str]) -> StreamingResponse:
    return StreamingResponse(
        stream,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


Compute = Callable[[], Awaitable[dict[str, Any]]]
