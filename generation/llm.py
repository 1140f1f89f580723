"""A client for vLLM or any OpenAI-compatible chat completions server.

Failures become `LLMError` (with the URL and HTTP status) so the answer layer can fall back
to the extractive answer and say why, instead of failing the request.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.errors import ConfigError, RaglineError
from core.settings import LLMSettings
from core.text import split_sentences
from generation.http_clients import LoopClients, tls_context

if TYPE_CHECKING:  # imported where used: a process with no LLM never loads httpx
    import httpx

Message = dict[str, str]

# Reasoning models (Qwen3, DeepSeek-R1) may prefix their answer with a thinking block.
_THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)
SUMMARY_INPUT_CHARS = 4_000
_SUMMARY_SYSTEM = (
    "Summarise the passage in exactly one sentence, in the passage's own language. "
    "Reply with the sentence only: no preamble, no quotes, no list."
)


class LLMError(RaglineError):
    """The LLM server could not be reached, failed, or answered something unusable."""

    def __init__(self, message: str, *, url: str, status: int | None = None) -> None:
        super().__init__(message)
        self.url = url
        self.status = status


class LLMTimeout(LLMError):
    """The LLM server did not answer within `llm.timeout_s`."""


class OpenAICompatibleClient:
    """POST {base_url}/chat/completions with a Bearer key; one instance per server."""

    def __init__(
        self, settings: LLMSettings, *, transport: httpx.BaseTransport | None = None
    ) -> None:
        import httpx

        if not settings.base_url:
            raise ConfigError(
                "no LLM server configured: set llm.base_url (RAGLINE_LLM__BASE_URL), "
                "e.g. http://vllm:8000/v1"
            )
        self.settings = settings
        self.url = settings.base_url.rstrip("/") + "/chat/completions"
        self._headers = {"Authorization": f"Bearer {settings.api_key}"}
        # Pooled clients: connections are reused across questions (one for the blocking
        # calls, one per event loop for the others).
        self._client = httpx.Client(
            timeout=settings.timeout_s,
            headers=self._headers,
            transport=transport,
            verify=tls_context(),
        )
        self._async = LoopClients(timeout=settings.timeout_s, headers=self._headers)

    @property
    def model(self) -> str:
        return self.settings.model

    def _payload(
        self, messages: Sequence[Message], max_tokens: int | None, temperature: float | None
    ) -> dict[str, Any]:
        return {
            "model": self.settings.model,
            "messages": list(messages),
            "temperature": self.settings.temperature if temperature is None else temperature,
            "max_tokens": self.settings.max_tokens if max_tokens is None else max_tokens,
        }

    def _content(self, response: httpx.Response) -> str:
        if response.status_code >= 400:
            raise LLMError(
                f"LLM server {self.url} answered HTTP {response.status_code}: "
                f"{response.text[:300]}",
                url=self.url,
                status=response.status_code,
            )
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError(
                f"LLM server {self.url} sent an unexpected response: {response.text[:300]}",
                url=self.url,
                status=response.status_code,
            ) from exc
        if not isinstance(content, str):
            raise LLMError(
                f"LLM server {self.url} sent no message content",
                url=self.url,
                status=response.status_code,
            )
        return _THINK.sub("", content).strip()

    def _transport_error(self, exc: httpx.HTTPError) -> LLMError:
        import httpx

        if isinstance(exc, httpx.TimeoutException):
            return LLMTimeout(
                f"LLM server {self.url} did not answer within {self.settings.timeout_s:g}s "
                "(llm.timeout_s)",
                url=self.url,
            )
        return LLMError(f"LLM server {self.url} unreachable: {exc!r}", url=self.url)

    def chat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> str:
        """The assistant's reply text."""
        import httpx

        try:
            response = self._client.post(
                self.url, json=self._payload(messages, max_tokens, temperature)
            )
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from exc
        return self._content(response)

    async def achat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> str:
        """`chat` for asyncio callers, on the running loop's pooled client."""
        import httpx

        try:
            response = await self._async.client().post(
                self.url, json=self._payload(messages, max_tokens, temperature)
            )
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from exc
        return self._content(response)

    def summarize(self, text: str) -> str:
        """One sentence summarising `text` (the chunker's optional summary stage)."""
        reply = self.chat(
            [
                {"role": "system", "content": _SUMMARY_SYSTEM},
                {"role": "user", "content": text[:SUMMARY_INPUT_CHARS]},
            ],
            max_tokens=120,
        )
        # Models add a second sentence or quotes anyway: keep the first sentence only.
        sentences = split_sentences(reply.strip().strip("\"'“”「」"))
        return " ".join(sentences[0].split()) if sentences else ""

    async def aclose(self) -> None:
        """Close the running loop's pooled connections."""
        await self._async.aclose()

    def close(self) -> None:
        self._client.close()
        self._async.close()

    def __enter__(self) -> OpenAICompatibleClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
