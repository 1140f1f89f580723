"""Input limits from settings.api, the same for every door, with messages that say which
limit and which setting (InvalidRequest: each door's "invalid request")."""

from __future__ import annotations

import re
from typing import Any

from core.errors import InvalidRequest
from core.settings import ApiSettings
from routing.instruction import TaskContext

# JSON can escape a lone UTF-16 surrogate ("\ud800"), which no text holds: it fails every
# step that encodes the text (the cache key, a stream's events, the audit log), and is
# removed, as ingestion removes it from documents.
_SURROGATES = re.compile("[\ud800-\udfff]")


def without_surrogates(value: Any) -> Any:
    """`value` (text, or lists and mappings of it, as JSON decodes) with no lone UTF-16
    surrogate in any text."""
    if isinstance(value, str):
        return _SURROGATES.sub("", value) if _SURROGATES.search(value) else value
    if isinstance(value, dict):
        return {without_surrogates(k): without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_surrogates(v) for v in value]
    return value


# A gateway request: a template or source name, its parameters, or a question to route.
# Names are short identifiers; a parameter is a value (a state, a month, a word).
MAX_GATEWAY_NAME = 64
MAX_GATEWAY_QUESTION = 2000
MAX_GATEWAY_PARAMS = 32
MAX_GATEWAY_VALUE = 1000


def check_gateway(name: str, params: dict[str, Any], question: str) -> None:
    """The same limits at every door (HTTP's schema states them too)."""
    if len(name) > MAX_GATEWAY_NAME:
        raise InvalidRequest(f"name is {len(name)} characters; the limit is {MAX_GATEWAY_NAME}")
    if len(question) > MAX_GATEWAY_QUESTION:
        raise InvalidRequest(
            f"question is {len(question)} characters; the limit is {MAX_GATEWAY_QUESTION}"
        )
    if len(params) > MAX_GATEWAY_PARAMS:
        raise InvalidRequest(f"{len(params)} parameters; the limit is {MAX_GATEWAY_PARAMS}")
    for key, value in params.items():
        if len(str(key)) > MAX_GATEWAY_NAME or len(str(value)) > MAX_GATEWAY_VALUE:
            raise InvalidRequest(
                f"parameter {str(key)[:MAX_GATEWAY_NAME]!r}: names are at most "
                f"{MAX_GATEWAY_NAME} characters, values {MAX_GATEWAY_VALUE}"
            )


def check_question(question: str, api: ApiSettings) -> str:
    question = without_surrogates(question).strip()
    if not question:
        raise InvalidRequest("question is empty")
    if len(question) > api.max_query_chars:
        raise InvalidRequest(
            f"question is {len(question)} characters; the limit is {api.max_query_chars} "
            "(RAGLINE_API__MAX_QUERY_CHARS)",
        )
    return question


def check_query(question: str, context: TaskContext, api: ApiSettings) -> str:
    """`check_question`, except that a blank question may stand beside a task context that
    names entities to look up (they become the query): the application service's rule,
    `TaskContext.leaves_nothing_to_search`, checked before any work is done."""
    # The entities (and region) join the question in the query: the limit is on the whole.
    named = " ".join(t for t in (*context.entities, context.region) if t)
    if named and len(named) + len(question.strip()) > api.max_query_chars:
        raise InvalidRequest(
            f"question and context entities are {len(named) + len(question.strip())} "
            f"characters; the limit is {api.max_query_chars} (RAGLINE_API__MAX_QUERY_CHARS)",
        )
    if not question.strip() and not context.leaves_nothing_to_search(question):
        return question  # the context's entities are the query
    return check_question(question, api)


def check_top_k(top_k: int | None, api: ApiSettings) -> int | None:
    if top_k is not None and not 1 <= top_k <= api.max_top_k:
        raise InvalidRequest(
            f"top_k must be between 1 and {api.max_top_k} (RAGLINE_API__MAX_TOP_K)"
        )
    return top_k


def max_upload_bytes(api: ApiSettings) -> int:
    return int(api.max_upload_mb * 2**20)
