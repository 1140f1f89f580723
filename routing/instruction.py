"""Structured retrieval instructions: an agent's task context -> what to retrieve and how.

An agent may send, beside or instead of a question, a task context (task type, entities,
region, time range, document types, departments). It becomes a retrieval instruction
`{query, filters: {doc_type, department, date_range}, boost_fields}`: by rules always, and
by an LLM when one is configured (rules are the fallback when it fails, is slow or answers
nonsense; answers are cached per context). Filters only ever narrow what the caller's
permissions allow; they are applied inside every store, like ACLs.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

from core.errors import InvalidRequest
from core.formats import doc_type_filter
from core.types import QueryFilter

CONTEXT_KEYS = frozenset(
    {"task", "entities", "region", "date_from", "date_to", "date_range", "doc_types",
     "departments", "doc_type", "department"}
)  # fmt: skip


def _date(value: Any, key: str) -> date | None:
    if value in (None, ""):
        return None
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value).strip())
    except ValueError as exc:
        raise InvalidRequest(f"{key}: {value!r} is not a date (YYYY-MM-DD)") from exc


def _strings(value: Any, key: str) -> tuple[str, ...]:
    if value in (None, ""):
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(v, str) for v in items):
        raise InvalidRequest(f"{key}: expected a string or a list of strings, got {value!r}")
    out: list[str] = []
    for item in items:  # "a,b" in a CLI flag means two values
        out.extend(p.strip() for p in item.split(",") if p.strip())
    return tuple(dict.fromkeys(out))


@dataclass(frozen=True, slots=True)
class TaskContext:
    """What an agent knows about its task, beside the question."""

    task: str = "qa"
    entities: tuple[str, ...] = ()
    region: str = ""
    date_from: date | None = None
    date_to: date | None = None
    doc_types: tuple[str, ...] = ()
    departments: tuple[str, ...] = ()

    def leaves_nothing_to_search(self, question: str) -> bool:
        """No question and no entities to look up: a query with nothing to search for
        (entities named here stand in for a blank question)."""
        return not question.strip() and not self.entities

    @classmethod
    def parse(cls, data: Mapping[str, Any], task: str = "qa") -> TaskContext:
        """From JSON-like data (API body, MCP argument, `--task` JSON), checked: unknown keys
        and malformed values are refused with the reason, never ignored."""
        unknown = set(data) - CONTEXT_KEYS
        if unknown:
            raise InvalidRequest(
                f"unknown task context keys {sorted(unknown)}; known: {sorted(CONTEXT_KEYS)}"
            )
        date_from = _date(data.get("date_from"), "date_from")
        date_to = _date(data.get("date_to"), "date_to")
        if data.get("date_range") not in (None, ""):
            date_from, date_to = parse_date_range(data["date_range"])
        if date_from and date_to and date_from > date_to:
            raise InvalidRequest(f"date range is empty: {date_from} is after {date_to}")
        task_value = data.get("task", task)
        if not isinstance(task_value, str) or not re.fullmatch(r"[a-z][a-z0-9_]{0,63}", task_value):
            raise InvalidRequest(f"task: {task_value!r} is not a task name like compliance_review")
        region = data.get("region", "")
        if not isinstance(region, str):
            raise InvalidRequest(f"region: expected a string, got {region!r}")
        return cls(
            task=task_value,
            entities=_strings(data.get("entities"), "entities"),
            region=region.strip(),
            date_from=date_from,
            date_to=date_to,
            doc_types=tuple(
                sorted(
                    doc_type_filter(_strings(data.get("doc_types"), "doc_types"))
                    | doc_type_filter(_strings(data.get("doc_type"), "doc_type"), "doc_type")
                )
            ),
            departments=_strings(data.get("departments"), "departments")
            + _strings(data.get("department"), "department"),
        )

    @property
    def empty(self) -> bool:
        return self == TaskContext(task=self.task)


def parse_date_range(value: Any) -> tuple[date | None, date | None]:
    """ "2024-01-01..2024-12-31", "2024-01-01..", "..2024-12-31" or [from, to]."""
    if isinstance(value, list | tuple) and len(value) == 2:
        return _date(value[0], "date_range"), _date(value[1], "date_range")
    if isinstance(value, str) and ".." in value:
        lo, hi = value.split("..", 1)
        return _date(lo, "date_range"), _date(hi, "date_range")
    raise InvalidRequest(f"date_range: {value!r} is not FROM..TO (YYYY-MM-DD, either may be empty)")


def parse_filter_args(args: Iterable[str], task: str = "qa") -> TaskContext:
    """CLI `--filter key=value` flags (repeatable; doc_type, department, date_from, date_to,
    date_range, entities, region) as a task context."""
    data: dict[str, Any] = {}
    for arg in args:
        key, sep, value = arg.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InvalidRequest(f"--filter {arg!r}: expected key=value, e.g. doc_type=pdf")
        if key in {"doc_type", "doc_types", "department", "departments", "entities"}:
            data.setdefault(key, []).append(value)
        else:
            data[key] = value
    return TaskContext.parse(data, task)


@dataclass(frozen=True)
class RetrievalInstruction:
    query: str
    doc_types: frozenset[str] = frozenset()
    departments: frozenset[str] = frozenset()
    date_from: date | None = None
    date_to: date | None = None
    boost_terms: tuple[str, ...] = ()  # entities to boost in the route's boost_fields
    source: str = "rules"  # "rules" | "llm" | "rules (llm failed: ...)"
    notes: tuple[str, ...] = field(default=())

    def apply(self, where: QueryFilter) -> QueryFilter:
        return where.narrowed(self.doc_types, self.departments, self.date_from, self.date_to)

    def filters_view(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.doc_types:
            out["doc_type"] = sorted(self.doc_types)
        if self.departments:
            out["department"] = sorted(self.departments)
        if self.date_from or self.date_to:
            out["date_range"] = [
                self.date_from.isoformat() if self.date_from else None,
                self.date_to.isoformat() if self.date_to else None,
            ]
        return out


def rules_instruction(question: str, ctx: TaskContext) -> RetrievalInstruction:
    """The deterministic translation: filters straight from the context; the query is the
    question plus the entities and region it does not already name."""
    base = question.strip()
    extra = [t for t in (*ctx.entities, ctx.region) if t and t.lower() not in base.lower()]
    query = " ".join([base, *extra]).strip()  # may be empty: the search then finds nothing
    return RetrievalInstruction(
        query=query,
        doc_types=frozenset(ctx.doc_types),
        departments=frozenset(ctx.departments),
        date_from=ctx.date_from,
        date_to=ctx.date_to,
        boost_terms=tuple(dict.fromkeys(ctx.entities)),
    )


LLM_PROMPT = """You turn a search request into a retrieval instruction. Reply with one JSON
object and nothing else: {{"query": "...", "entities": [...], "doc_types": [...],
"departments": [...], "date_from": "YYYY-MM-DD" or null, "date_to": "YYYY-MM-DD" or null}}.
`query`: a keyword-rich search query in the language of the question. Only set doc_types,
departments or dates when the request clearly asks for them.

Task type: {task}
Question: {question}
Context: {context}"""


def _llm_instruction(reply: str, rules: RetrievalInstruction) -> RetrievalInstruction:
    """Parse the LLM's JSON. It may rewrite the query and add boosts, and set filters the
    caller left open; it can never drop a filter the caller set."""
    match = re.search(r"\{.*\}", reply, re.DOTALL)
    if not match:
        raise ValueError("no JSON object in the reply")
    data = json.loads(match.group(0))
    if not isinstance(data, dict):
        raise ValueError("reply is not a JSON object")
    query = data.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ValueError("reply has no query")
    ctx = TaskContext.parse(
        {k: v for k, v in data.items() if k in {"entities", "doc_types", "departments",
                                                   "date_from", "date_to"}}
    )  # fmt: skip
    return RetrievalInstruction(
        query=query.strip(),
        doc_types=rules.doc_types or frozenset(ctx.doc_types),
        departments=rules.departments or frozenset(ctx.departments),
        date_from=rules.date_from or ctx.date_from,
        date_to=rules.date_to or ctx.date_to,
        boost_terms=tuple(dict.fromkeys((*rules.boost_terms, *ctx.entities))),
        source="llm",
    )


Complete = Callable[[str], Awaitable[str]]


class InstructionBuilder:
    """Rules, or the LLM with the rules as fallback; LLM results cached per context."""

    def __init__(
        self, complete: Complete | None = None, cache_size: int = 512, timeout_s: float = 3.0
    ) -> None:
        self._complete = complete
        self._cache: OrderedDict[tuple[str, TaskContext], RetrievalInstruction] = OrderedDict()
        self._cache_size = cache_size
        self._timeout_s = timeout_s

    async def build(self, question: str, ctx: TaskContext) -> RetrievalInstruction:
        rules = rules_instruction(question, ctx)
        if self._complete is None:
            return rules
        key = (question.strip(), ctx)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        context = json.dumps(
            {
                "entities": list(ctx.entities),
                "region": ctx.region,
                "doc_types": list(ctx.doc_types),
                "departments": list(ctx.departments),
                "date_from": ctx.date_from.isoformat() if ctx.date_from else None,
                "date_to": ctx.date_to.isoformat() if ctx.date_to else None,
            },
            ensure_ascii=False,
        )
        prompt = LLM_PROMPT.format(task=ctx.task, question=question.strip(), context=context)
        try:
            reply = await asyncio.wait_for(self._complete(prompt), self._timeout_s)
            result = _llm_instruction(reply, rules)
        except Exception as exc:  # any LLM failure: the rules' instruction stands
            reason = "timeout" if isinstance(exc, TimeoutError) else type(exc).__name__
            return replace(rules, source=f"rules (llm failed: {reason})")
        self._cache[key] = result
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return result
