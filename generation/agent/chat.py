"""Chat completions with tools against an OpenAI-compatible server (vLLM, llama.cpp).

`generation.llm.OpenAICompatibleClient` returns reply text only; the loop needs the whole
assistant message (its `tool_calls`), so this client returns that. Failures are the same
`LLMError`s, so callers fall back the same way.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core.settings import LLMSettings
from generation.http_clients import LoopClients
from generation.llm import LLMError, LLMTimeout

ChatMessage = dict[str, Any]
_THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str | dict[str, Any] | None  # as sent: usually a JSON string, maybe broken


@dataclass(frozen=True, slots=True)
class AssistantTurn:
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = "stop"
    usage: dict[str, int] = field(default_factory=dict)


def _tool_calls(message: dict[str, Any]) -> tuple[ToolCall, ...]:
    calls = []
    for i, call in enumerate(message.get("tool_calls") or []):
        if not isinstance(call, dict):
            continue
        fn: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else {}
        name = str(fn.get("name") or call.get("name") or "").strip()
        if not name:
            continue
        # Some servers omit ids; the pairing of calls and results needs one.
        call_id = str(call.get("id") or f"call_{uuid.uuid4().hex[:12]}_{i}")
        calls.append(ToolCall(call_id, name, fn.get("arguments", call.get("arguments"))))
    legacy = message.get("function_call")
    if not calls and isinstance(legacy, dict) and legacy.get("name"):
        calls.append(
            ToolCall(f"call_{uuid.uuid4().hex[:12]}", str(legacy["name"]), legacy.get("arguments"))
        )
    return tuple(calls)


class ToolChatClient:
    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings
        self.url = settings.base_url.rstrip("/") + "/chat/completions"
        self._headers = {"Authorization": f"Bearer {settings.api_key}"}
        self._clients = LoopClients(timeout=settings.timeout_s, headers=self._headers)

    @property
    def model(self) -> str:
        return self.settings.model

    async def aclose(self) -> None:
        """Close the running loop's pooled connections."""
        await self._clients.aclose()

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[dict[str, Any]] = (),
        *,
        max_tokens: int | None = None,
    ) -> AssistantTurn:
        import httpx  # here: a process with no LLM never loads httpx

        payload: dict[str, Any] = {
            "model": self.settings.model,
            "messages": list(messages),
            "temperature": self.settings.temperature,
            "max_tokens": max_tokens or self.settings.max_tokens,
        }
        if tools:
            payload["tools"] = list(tools)
            payload["tool_choice"] = "auto"
        try:
            response = await self._clients.client().post(self.url, json=payload)
        except httpx.TimeoutException as exc:
            raise LLMTimeout(
                f"LLM server {self.url} did not answer within {self.settings.timeout_s:g}s",
                url=self.url,
            ) from exc
        except httpx.HTTPError as exc:
            raise LLMError(f"LLM server {self.url} unreachable: {exc!r}", url=self.url) from exc
        if response.status_code >= 400:
            raise LLMError(
                f"LLM server {self.url} answered HTTP {response.status_code}: "
                f"{response.text[:300]}",
                url=self.url,
                status=response.status_code,
            )
        try:
            body = response.json()
            choice = body["choices"][0]
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError(
                f"LLM server {self.url} sent an unexpected response: {response.text[:300]}",
                url=self.url,
                status=response.status_code,
            ) from exc
        content = message.get("content") if isinstance(message, dict) else None
        text = _THINK.sub("", content).strip() if isinstance(content, str) else ""
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        return AssistantTurn(
            text,
            _tool_calls(message) if isinstance(message, dict) else (),
            str(choice.get("finish_reason") or "stop"),
            {k: int(v) for k, v in usage.items() if isinstance(v, int)},
        )


def tool_call_message(content: str, calls: Sequence[ToolCall]) -> ChatMessage:
    """The assistant message that carries `calls`, in the OpenAI request format."""
    return {
        "role": "assistant",
        # "" rather than null: llama.cpp's server rejects a null content (OpenAI takes both).
        "content": content or "",
        "tool_calls": [
            {
                "id": c.id,
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": c.arguments
                    if isinstance(c.arguments, str)
                    else json.dumps(c.arguments or {}, ensure_ascii=False),
                },
            }
            for c in calls
        ],
    }
