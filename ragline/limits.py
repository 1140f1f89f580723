"""Input limits from settings.api, the same for every door, with messages that say which
limit and which setting (InvalidRequest: each door's "invalid request")."""

from __future__ import annotations

from core.errors import InvalidRequest
from core.settings import ApiSettings
from routing.instruction import TaskContext


def check_question(question: str, api: ApiSettings) -> str:
    question = question.strip()
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
