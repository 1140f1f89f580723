"""`/`: the console page; `/static/...`: its script, style and vendored PDF.js;
`GET /v1/web/csrf`: the CSRF token the console sends with every write.

CSRF: API keys travel in a header the browser never adds by itself, so a foreign page
cannot write with them; on top of that, any state-changing request that a browser marks
as such (an `Origin` or `Sec-Fetch-Site` header) must come from this origin and carry the
token of the key's principal. Agents (no such headers) are unaffected."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from ragline.api.auth import Caller, presented_key
from ragline.api.errors import error_response

STATIC = Path(__file__).with_name("static")
router = APIRouter()
_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Same-origin everything; PDF.js runs its worker from a same-origin module and may compile
# its WebAssembly image decoders; nothing inline, no eval, no framing.
CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self' blob:; "
    "img-src 'self' data: blob:; font-src 'self' data: blob:; style-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)


def csrf_token(secret: bytes, user: str) -> str:
    return hmac.new(secret, user.encode("utf-8"), hashlib.sha256).hexdigest()


@router.get("/", include_in_schema=False)
async def console() -> FileResponse:
    return FileResponse(
        STATIC / "console.html",
        media_type="text/html; charset=utf-8",
        headers={
            "Content-Security-Policy": CSP,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-store",
        },
    )


@router.get("/v1/web/csrf", summary="CSRF token for the console's writes", tags=["web"])
async def csrf(request: Request, principal: Caller) -> dict[str, Any]:
    return {
        "token": csrf_token(_secret(request.app), principal.user),
        "user": principal.user,
        "can_write": principal.can_write,
    }


class BrowserWriteGuard:
    """Cross-site writes from a browser are refused, and a browser write with an API key
    needs the CSRF token of that key's user. Pure ASGI: reads only the headers."""

    def __init__(self, app: ASGIApp, secret: Callable[[], bytes], keys: Callable[[], Any]) -> None:
        self.app = app
        self._secret = secret
        self._keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in _WRITES:
            refusal = self._refusal(scope)
            if refusal:
                await error_response(403, refusal)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope) -> str:
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        site = headers.get("sec-fetch-site")
        if not (origin or site):
            return ""
        own = f"{scope.get('scheme', 'http')}://{headers.get('host', '')}"
        if (origin and origin != own) or (site and site not in ("same-origin", "none")):
            return "cross-site write refused"
        keys = self._keys()
        presented = presented_key(headers)  # the key authentication will use
        principal = keys.principal(presented) if keys is not None and presented else None
        token = headers.get("x-csrf-token", "")
        if principal is not None and not hmac.compare_digest(
            token, csrf_token(self._secret(), principal.user)
        ):
            return "missing or wrong CSRF token (GET /v1/web/csrf)"
        return ""


def _secret(app: FastAPI) -> bytes:
    """The deployment's CSRF key, read once per process (every process and replica shares
    it: a token from one worker must be good at the next)."""
    secret: bytes | None = getattr(app.state, "csrf_secret", None)
    if secret is None:
        secret = app.state.ctx.rag.console_secret()
        app.state.csrf_secret = secret
    return secret


def install(app: FastAPI) -> None:
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_middleware(
        BrowserWriteGuard,
        secret=lambda: _secret(app),
        keys=lambda: getattr(getattr(app.state, "ctx", None), "keys", None),
    )
