"""`/`: the console page; `/static/...`: its script, style and vendored PDF.js;
`GET /v1/web/csrf`: the CSRF token the console sends with every write.

CSRF: API keys travel in a header the browser never adds by itself, so a foreign page
cannot write with them; on top of that, any state-changing request that a browser marks
as such (an `Origin` or `Sec-Fetch-Site` header) must come from this origin and carry the
token of the key's principal. Agents (no such headers) are unaffected."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint

from ragline.api.auth import Caller
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
        "token": csrf_token(request.app.state.csrf_secret, principal.user),
        "user": principal.user,
        "can_write": principal.can_write,
    }


class BrowserWriteGuard(BaseHTTPMiddleware):
    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        origin = request.headers.get("origin")
        site = request.headers.get("sec-fetch-site")
        if request.method in _WRITES and (origin or site):
            own = f"{request.url.scheme}://{request.headers.get('host', '')}"
            if (origin and origin != own) or (site and site not in ("same-origin", "none")):
                return error_response(403, "cross-site write refused")
            ctx = getattr(request.app.state, "ctx", None)
            presented = (
                request.headers.get("x-api-key")
                or request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            )
            principal = ctx.keys.principal(presented) if ctx is not None and presented else None
            token = request.headers.get("x-csrf-token", "")
            if principal is not None and not hmac.compare_digest(
                token, csrf_token(request.app.state.csrf_secret, principal.user)
            ):
                return error_response(403, "missing or wrong CSRF token (GET /v1/web/csrf)")
        return await call_next(request)


def install(app: FastAPI) -> None:
    app.state.csrf_secret = secrets.token_bytes(32)
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_middleware(BrowserWriteGuard)
