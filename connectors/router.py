"""Which kind of knowledge answers a question: rows, status or documents.

Rules first, in this order:
1. status: the question names an identifier a status source declares (its `extract`
   regex finds every parameter), e.g. "ticket #42" or a 32-hex job id;
2. rows: the question asks for a count, sum, ranking or a figure for a period (an
   aggregate cue) over an entity a template declares (its keywords), and every required
   parameter is found in the question (or has a default, or comes from the principal);
3. documents: everything else.
With `gateway.router = "llm"` and an LLM configured, a question the rules send to documents
is offered to the LLM with the declared templates and sources; its pick is checked against
the configuration (unknown template, bad parameter: the rules' decision stands).
The decision, with its reasons, goes into every response.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from connectors.config import GatewayConfig, HttpSource, Param, SqlSource, Template, may_use
from connectors.params import parse_month
from core.types import Principal

Kind = Literal["documents", "rows", "status"]

# What asks for a figure rather than an explanation: counts, sums, rankings, a value for a
# period, a series over periods.
AGGREGATE_CUE = re.compile(
    r"\b(how many|how much|number of|count|total|sum|top\s*\d+|most|least|highest|lowest|"
    r"largest|smallest|biggest|average|mean|rank(?:ed|ing)?|altogether|combined|"
    r"which (?:state|states|region|regions|year|month)|"
    r"what (?:was|were|is|are) the (?:amount|figure|value|total)|amount|figure|"
    r"in (?:fy\s*|fiscal year\s*)?(?:19|20)\d\d|(?:each|per|by) (?:year|month|state|region)|"
    r"over the years|change over)\b"
    r"|多少|几个|总数|总计|合计|最多|最少|前\s*\d+|排名|平均",
    re.IGNORECASE,
)
_WORD_NUMBERS = {
    "three": 3,
    "five": 5,
    "ten": 10,
    "two": 2,
    "four": 4,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
}


@dataclass(frozen=True, slots=True)
class Decision:
    kind: Kind
    rule: str
    source_id: str = ""
    template: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    reasons: tuple[str, ...] = ()
    by: Literal["rules", "llm", "caller"] = "rules"

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "rule": self.rule,
            "source_id": self.source_id,
            "template": self.template,
            "params": self.params,
            "reasons": list(self.reasons),
            "by": self.by,
        }


_INFLECTED = re.compile(r"(?:es|s)$")


def _contains(text: str, phrase: str) -> bool:
    """`phrase` as whole words in `text`, its last word in any simple inflection
    ("checks" also finds "check", "checked", "checking")."""
    phrase = phrase.lower()
    if re.search(r"[\u4e00-\u9fff]", phrase):
        return phrase in text
    stem = _INFLECTED.sub("", phrase) if len(phrase) > 4 else phrase
    pattern = rf"(?<![\w-]){re.escape(stem)}(?:s|es|ed|d|ing)?(?![\w-])"
    return re.search(pattern, text) is not None


def extract_param(question: str, name: str, spec: Param) -> Any:
    """The value of one template parameter as written in the question, or None."""
    low = question.lower()
    if spec.type == "month" and not spec.extract:
        return parse_month(question)
    if spec.extract:
        m = re.search(spec.extract, question, re.IGNORECASE)
        if m:
            value = next(g for g in m.groups() if g is not None) if m.groups() else m.group(0)
            if spec.type == "int" and value.lower() in _WORD_NUMBERS:
                return _WORD_NUMBERS[value.lower()]
            return spec.aliases.get(value.lower(), value)
        return None
    if spec.type == "enum":
        candidates = [(v, v) for v in spec.values] + list(spec.aliases.items())
        # Longest first: "West Virginia" before "Virginia".
        for phrase, value in sorted(candidates, key=lambda c: -len(c[0])):
            if _contains(low, phrase):
                return value
    return None


@dataclass(frozen=True, slots=True)
class TemplateMatch:
    source: SqlSource
    template: Template
    score: float
    params: dict[str, Any]
    missing: tuple[str, ...]


def match_templates(
    question: str, config: GatewayConfig, principal: Principal | None = None
) -> list[TemplateMatch]:
    """Templates whose keywords the question uses, best first, with the parameters found;
    of those the principal may use, when one is known. A bound parameter counts as given
    when the principal has the attribute (or when no principal is known); otherwise the
    question must name it."""
    low = question.lower()
    out = []
    for source in config.sql:
        for t in source.templates:
            if principal is not None and not may_use(principal, t.roles or source.roles):
                continue
            hits = [k for k in t.keywords if _contains(low, k)]
            if not hits:
                continue
            params: dict[str, Any] = {}
            missing = []
            for name, spec in t.params.items():
                # A bound parameter may be named in the question too: for callers without
                # the attribute (unbound roles); the principal's own value always wins.
                value = extract_param(question, name, spec)
                if value is not None:
                    params[name] = value
                elif (
                    spec.required
                    and spec.default is None
                    and not (spec.bind and (principal is None or principal.attribute(spec.bind)))
                ):
                    missing.append(name)
            # Keywords say which entity; found parameters say which question about it.
            score = len(hits) + 0.5 * len(params) - 1.0 * len(missing)
            score += 0.1 * sum(len(k.split()) - 1 for k in hits)
            out.append(TemplateMatch(source, t, score, params, tuple(missing)))
    return sorted(out, key=lambda m: -m.score)


def match_status(
    question: str, config: GatewayConfig, principal: Principal | None = None
) -> list[tuple[HttpSource, dict[str, str]]]:
    """Status sources whose parameters the question names (those the principal may use,
    when one is known)."""
    out = []
    for source in config.http:
        if principal is not None and not may_use(principal, source.roles):
            continue
        params: dict[str, str] = {}
        for name, spec in source.params.items():
            m = re.search(spec.extract, question, re.IGNORECASE) if spec.extract else None
            if m:
                params[name] = m.group(1)
        if params and len(params) == len(source.params):
            out.append((source, params))
    return out


class KnowledgeRouter:
    def __init__(
        self,
        config: GatewayConfig,
        llm: Callable[[list[dict[str, str]]], str] | None = None,
    ) -> None:
        self._config = config
        self._llm = llm

    def decide(self, question: str, principal: Principal | None = None) -> Decision:
        status = match_status(question, self._config, principal)
        if status:
            source, params = status[0]
            return Decision(
                "status",
                "identifier",
                source.id,
                "",
                params,
                (f"the question names {', '.join(f'{k}={v}' for k, v in params.items())}",),
            )
        cue = AGGREGATE_CUE.search(question)
        matches = match_templates(question, self._config, principal)
        complete = [m for m in matches if not m.missing]
        if complete and cue:
            best = complete[0]
            why = (
                f"aggregate cue {cue.group(0)!r}",
                f"template {best.template.name} matches (score {best.score:.1f})",
            )
            return Decision(
                "rows", "aggregate", best.source.id, best.template.name, best.params, why
            )
        reasons = ["no status identifier"]
        if matches and matches[0].missing:
            reasons.append(
                f"template {matches[0].template.name} lacks {', '.join(matches[0].missing)}"
            )
        elif not cue:
            reasons.append("no count, sum, ranking or figure asked")
        elif not matches:
            reasons.append("no template is about what the question names")
        decision = Decision("documents", "default", reasons=tuple(reasons))
        if self._llm is not None and (self._config.sql or self._config.http):
            return self._ask_llm(question, decision)
        return decision

    def _ask_llm(self, question: str, fallback: Decision) -> Decision:
        catalogue = {
            "templates": [
                {
                    "name": t.name,
                    "description": t.description,
                    "params": {
                        n: {"type": p.type, "values": p.values, "description": p.description}
                        for n, p in t.params.items()
                        if not p.bind
                    },
                }
                for s in self._config.sql
                for t in s.templates
            ],
            "status_sources": [
                {"id": h.id, "description": h.description, "params": list(h.params)}
                for h in self._config.http
            ],
        }
        prompt = (
            "Decide which source answers the question. Reply with JSON only: "
            '{"kind": "rows"|"status"|"documents", "name": template or status source id, '
            '"params": {...}}. Use "documents" unless a template or status source clearly '
            f"answers it.\nSources: {json.dumps(catalogue, ensure_ascii=False)}\n"
            f"Question: {question}"
        )
        try:
            assert self._llm is not None
            reply = self._llm([{"role": "user", "content": prompt}])
            picked = json.loads(reply[reply.index("{") : reply.rindex("}") + 1])
        except Exception as e:  # an LLM that fails or babbles leaves the rules' decision
            return Decision(
                fallback.kind, fallback.rule, reasons=(*fallback.reasons, f"llm: {e}"[:200])
            )
        kind, name = picked.get("kind"), str(picked.get("name", ""))
        params = picked.get("params") if isinstance(picked.get("params"), dict) else {}
        templates = self._config.templates()
        if kind == "rows" and name in templates:
            source_id = templates[name][0].id
            return Decision("rows", "llm", source_id, name, params, ("llm pick",), "llm")
        if kind == "status" and any(h.id == name for h in self._config.http):
            return Decision("status", "llm", name, "", params, ("llm pick",), "llm")
        return fallback


def describe(matches: Sequence[TemplateMatch]) -> list[str]:
    return [f"{m.template.name}:{m.score:.1f}" for m in matches]
