"""Tools the agent loop may call, and one registry that describes and runs them.

A tool is a name, a description, a JSON-schema of its parameters and an async handler.
Arguments arrive as the model wrote them; the registry parses them tolerantly
(`generation.agent.args`), coerces them to the schema, and turns every failure into an
error result the model can read: a bad call never ends the loop.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.types import Hit
from generation.agent.args import ParsedArgs, ParseMode, parse_arguments


class ToolFailure(Exception):
    """A tool refused its arguments or failed; the message is shown to the model."""


@dataclass(frozen=True, slots=True)
class ToolOutput:
    content: dict[str, Any]  # sent to the model as JSON
    hits: tuple[Hit, ...] = ()  # passages a final answer may cite
    items: int = 0  # result size: passages, rows, fields


ToolHandler = Callable[[dict[str, Any]], Awaitable[ToolOutput]]


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of an object
    handler: ToolHandler
    primary: str = "query"  # the parameter a bare-string argument stands for

    def spec(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    @property
    def properties(self) -> dict[str, Any]:
        props = self.parameters.get("properties", {})
        return props if isinstance(props, dict) else {}


@dataclass(slots=True)
class ToolRun:
    """One executed call, as the trace reports it."""

    call_id: str
    name: str
    raw_arguments: str
    arguments: dict[str, Any]
    parse_mode: ParseMode
    output: ToolOutput
    ms: float
    error: str = ""
    notes: list[str] = field(default_factory=list)
    by: str = "model"  # "model" or "ragline" (a search the loop added itself)

    @property
    def result_json(self) -> str:
        return json.dumps(self.output.content, ensure_ascii=False)


def _coerce(value: Any, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "integer":
        number = int(float(value))
        low, high = schema.get("minimum"), schema.get("maximum")
        if low is not None:
            number = max(number, int(low))
        if high is not None:
            number = min(number, int(high))
        return number
    if kind == "string":
        if isinstance(value, list | dict):
            return json.dumps(value, ensure_ascii=False)
        return str(value).strip()
    return value


class ToolRegistry:
    def __init__(self, tools: Sequence[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[dict[str, Any]]:
        return [t.spec() for t in self._tools.values()]

    def _resolve(self, name: str) -> Tool | None:
        if name in self._tools:
            return self._tools[name]
        # "functions.search_documents", "Search_Documents", "search documents"
        short = name.rsplit(".", 1)[-1].strip().lower().replace(" ", "_").replace("-", "_")
        return self._tools.get(short)

    def _validate(self, tool: Tool, parsed: ParsedArgs) -> tuple[dict[str, Any], list[str]]:
        props, notes, args = tool.properties, [], {}
        for key, value in parsed.values.items():
            if key not in props:
                notes.append(f"ignored unknown argument {key!r}")
                continue
            try:
                coerced = _coerce(value, props[key])
            except (TypeError, ValueError):
                notes.append(f"ignored {key}={value!r}: not a {props[key].get('type')}")
                continue
            if props[key].get("type") == "integer" and coerced != _try_int(value):
                notes.append(f"{key} {value!r} adjusted to {coerced!r} (allowed range)")
            args[key] = coerced
        missing = [k for k in tool.parameters.get("required", []) if args.get(k) in (None, "")]
        if missing:
            raise ToolFailure(f"missing required argument(s): {', '.join(missing)}")
        return args, notes

    async def call(
        self, call_id: str, name: str, raw: str | dict[str, Any] | None, by: str = "model"
    ) -> ToolRun:
        started = time.perf_counter()
        tool = self._resolve(name)
        raw_text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
        if tool is None:
            message = f"unknown tool {name!r}; the tools are: {', '.join(self._tools)}"
            return ToolRun(
                call_id,
                name,
                raw_text or "",
                {},
                "empty",
                ToolOutput({"error": message}),
                (time.perf_counter() - started) * 1000,
                message,
                by=by,
            )
        parsed = parse_arguments(raw, tool.primary, frozenset(tool.properties))
        args: dict[str, Any] = {}
        notes: list[str] = []
        try:
            args, notes = self._validate(tool, parsed)
            output = await tool.handler(args)
            error = ""
        except ToolFailure as exc:
            error = str(exc)
            output = ToolOutput({"error": error})
        if notes and "notes" not in output.content:
            output = ToolOutput({**output.content, "notes": notes}, output.hits, output.items)
        return ToolRun(
            call_id,
            tool.name,
            parsed.raw,
            args,
            parsed.mode,
            output,
            (time.perf_counter() - started) * 1000,
            error,
            notes,
            by,
        )


def _try_int(value: Any) -> Any:
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return value
