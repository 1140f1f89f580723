"""Request bodies. Static bounds live here; the configurable ones (query length, top_k
maximum) are checked in `ragline.api.limits` against settings.api."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class QueryRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, description="What to search for or ask.")
    top_k: int | None = Field(default=None, ge=1, description="Hits to return (1..max_top_k).")
    doc_types: list[str] = Field(default_factory=list, description="Only these formats.")
    task: str = Field(default="qa", max_length=64, description="Routing task, e.g. qa.")


class ChatMessage(BaseModel):
    role: str
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        if isinstance(self.content, list):  # OpenAI content parts: keep the text ones
            return "\n".join(
                str(p.get("text", "")) for p in self.content if p.get("type") == "text"
            )
        return ""


class ChatOptions(BaseModel):
    """The `ragline` extension of a chat request: same options as /v1/ask."""

    top_k: int | None = Field(default=None, ge=1)
    doc_types: list[str] = Field(default_factory=list)
    task: str = Field(default="qa", max_length=64)


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")  # OpenAI clients send many optional fields

    model: str = "ragline"
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    ragline: ChatOptions = Field(default_factory=ChatOptions)


class Problem(BaseModel):
    """The error body of every 4xx/5xx response."""

    type: str
    message: str
    trace_id: str | None = None
    details: Any = None


class ErrorBody(BaseModel):
    error: Problem


UploadState = Literal["queued", "searchable"]
