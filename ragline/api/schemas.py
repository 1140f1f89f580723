"""Request bodies. Static bounds live here; the configurable ones (query length, top_k
maximum) are checked in `ragline.api.limits` against settings.api."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, model_validator

from core.formats import DOC_TYPES_HELP
from ragline.limits import without_surrogates

CONTEXT_DESCRIPTION = (
    "Task context, beside or instead of a question: entities (list), region, date_from, "
    "date_to or date_range ('FROM..TO'), doc_types, departments. It becomes the retrieval "
    "instruction returned in `route` (filters applied inside every store, entities boosted)."
)


class RequestBody(BaseModel):
    """A request's JSON body: unknown fields refused, and its text as sent less lone UTF-16
    surrogates (`ragline.limits.without_surrogates`)."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _text(cls, data: Any) -> Any:
        return without_surrogates(data)


class QueryRequest(RequestBody):
    question: str = Field(
        default="", description="What to search for or ask (may be empty with a context)."
    )
    top_k: StrictInt | None = Field(
        default=None, ge=1, description="Hits to return (1..max_top_k)."
    )
    doc_types: list[str] = Field(default_factory=list, description=DOC_TYPES_HELP)
    task: str = Field(
        default="qa",
        max_length=64,
        description="Task type: qa, compliance_review, troubleshooting, lookup, analysis.",
    )
    context: dict[str, Any] | None = Field(default=None, description=CONTEXT_DESCRIPTION)
    filters: dict[str, Any] | None = Field(
        default=None,
        description="Filters: doc_type, department, date_range ('FROM..TO'), date_from, date_to.",
    )


class QueryStreamRequest(QueryRequest):
    stream: bool = Field(default=False, description="Answer as Server-Sent Events.")


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None
    name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        if isinstance(self.content, list):  # OpenAI content parts: keep the text ones
            return "\n".join(
                p["text"]
                for p in self.content
                if p.get("type") == "text" and isinstance(p.get("text"), str)
            )
        return ""


class ChatOptions(BaseModel):
    """The `ragline` extension of a chat request: same options as /v1/ask, plus the mode."""

    top_k: StrictInt | None = Field(default=None, ge=1)
    doc_types: list[str] = Field(default_factory=list, description=DOC_TYPES_HELP)
    task: str = Field(default="qa", max_length=64)
    mode: Literal["ask", "agent"] = Field(
        default="ask", description="ask: one cited answer; agent: the tool-calling loop."
    )


class FunctionSpec(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str = Field(min_length=1, max_length=64)
    description: str | None = None
    parameters: dict[str, Any] | None = None


class ToolSpec(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: Literal["function"]
    function: FunctionSpec


class StreamOptions(BaseModel):
    include_usage: bool = False


class ChatRequest(RequestBody):
    model_config = ConfigDict(extra="allow")  # OpenAI clients send many optional fields

    model: str = "ragline"
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    tools: list[ToolSpec] | None = None
    tool_choice: str | dict[str, Any] | None = None
    # One answer per question: a client asking for more choices would index ones that
    # never come, so n > 1 is refused rather than silently answered with one.
    n: int = Field(default=1, ge=1, le=1, description="Choices: only 1 (one checked answer).")
    ragline: ChatOptions = Field(default_factory=ChatOptions)


class AgentRequest(RequestBody):
    question: str | None = Field(default=None, description="A single question, or:")
    messages: list[ChatMessage] | None = Field(
        default=None, description="A conversation; the last user message is answered."
    )
    doc_types: list[str] = Field(default_factory=list, description=DOC_TYPES_HELP)
    task: str = Field(default="agent", max_length=64, description="Model routing task.")


class Problem(BaseModel):
    """The error body of every 4xx/5xx response."""

    type: str
    message: str
    trace_id: str | None = None
    details: Any = None


class ErrorBody(BaseModel):
    error: Problem


UploadState = Literal["queued", "searchable"]
