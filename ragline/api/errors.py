"""One JSON error shape for every failure, and no stack trace ever sent to a client:
`{"error": {"type", "message", "trace_id"?, "details"?}}`."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from core.errors import (
    Conflict,
    Forbidden,
    InvalidRequest,
    NotFound,
    RaglineError,
    TooLarge,
    Unavailable,
    UnsupportedFormat,
    validation_summary,
)

log = logging.getLogger("ragline.api")

_TYPES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    429: "too_many_requests",
    431: "request_header_fields_too_large",
    503: "unavailable",
}


# The application service's refusals, as statuses: every door (HTTP, gRPC) maps them so.
_REFUSALS: tuple[tuple[type[RaglineError], int], ...] = (
    (Forbidden, 403),  # WriteDenied among them
    (NotFound, 404),
    (Conflict, 409),
    (TooLarge, 413),
    (UnsupportedFormat, 415),
    (InvalidRequest, 422),
    (Unavailable, 503),
)


def error_type(status: int) -> str:
    """The `type` of the error shape for an HTTP status ("forbidden", "not_found", ...)."""
    return _TYPES.get(status, "error")


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of a refusal the application service raised; None for any other
    error (an internal one)."""
    return next((status for kind, status in _REFUSALS if isinstance(exc, kind)), None)


class ApiError(Exception):
    """An error whose message is meant for the caller."""

    def __init__(
        self, status: int, message: str, details: Any = None, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.details = details
        self.headers = headers


def error_response(
    status: int, message: str, details: Any = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    body: dict[str, Any] = {"type": error_type(status), "message": message}
    if details is not None:
        body["details"] = details
    return JSONResponse({"error": body}, status_code=status, headers=headers)


def _validation_details(exc: RequestValidationError) -> list[dict[str, Any]]:
    # Only where and what: pydantic's "input" could echo a whole uploaded document back.
    return [
        {"loc": [str(p) for p in e.get("loc", ())], "msg": e.get("msg", "")} for e in exc.errors()
    ]


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_req: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.message, exc.details, exc.headers)

    @app.exception_handler(RaglineError)
    async def _refused(req: Request, exc: RaglineError) -> JSONResponse:
        # The application service's word for a request it will not carry out, whichever
        # route it came through; any other RaglineError is an internal error.
        status = status_of(exc)
        if status is None:
            return _internal_error(req, exc)
        return error_response(status, str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_req: Request, exc: StarletteHTTPException) -> JSONResponse:
        headers = dict(exc.headers) if exc.headers else None
        return error_response(exc.status_code, str(exc.detail), headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_req: Request, exc: RequestValidationError) -> JSONResponse:
        details = _validation_details(exc)
        return error_response(422, f"invalid request: {validation_summary(details)}", details)

    @app.exception_handler(Exception)
    async def _internal(req: Request, exc: Exception) -> JSONResponse:
        return _internal_error(req, exc)


def _internal_error(req: Request, exc: Exception) -> JSONResponse:
    trace_id = uuid.uuid4().hex
    log.error(
        "unhandled error on %s %s [trace %s]",
        req.method,
        req.url.path,
        trace_id,
        exc_info=exc,
    )
    body = {"type": "internal", "message": "internal error", "trace_id": trace_id}
    return JSONResponse({"error": body}, status_code=500)
