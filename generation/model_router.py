"""Which LLM answers: simple questions go to the small model, complex analysis to the
large one (seed design: small P95 about 0.3 s, large about 1.8 s).

The rule reads the task the caller named, the intent routing detected and the question's
length, in that order. Endpoints that are not configured are skipped: a question meant for
the large model goes to the small one when only that exists, then to `llm`; with no
endpoint at all the choice is "none" and answers are extractive.
"""

from __future__ import annotations

from core.settings import LLMSettings, ModelRoutingSettings
from core.types import ModelUse

Tier = str  # "small" | "large" | "default" | "none"


class ModelRouter:
    def __init__(self, routing: ModelRoutingSettings, default: LLMSettings) -> None:
        self.routing = routing
        self.endpoints: dict[Tier, LLMSettings] = {
            tier: settings
            for tier, settings in (
                ("small", routing.small),
                ("large", routing.large),
                ("default", default),
            )
            if settings.base_url
        }
        # An endpoint without its own model name serves the default model name.
        for tier, settings in list(self.endpoints.items()):
            if not settings.model:
                self.endpoints[tier] = settings.model_copy(update={"model": default.model})

    def rule(self, question: str, task: str, intent: str) -> tuple[Tier, str]:
        r = self.routing
        if task in r.large_tasks:
            return "large", f"task {task!r} is complex analysis"
        if intent in r.large_intents:
            return "large", f"intent {intent!r} needs reasoning over several passages"
        if len(question) >= r.large_min_chars:
            return "large", f"question is {len(question)} characters (>= {r.large_min_chars})"
        return "small", "short question with a simple intent"

    def choose(self, question: str, task: str = "qa", intent: str = "general") -> ModelUse:
        wanted, reason = self.rule(question, task, intent)
        other = "small" if wanted == "large" else "large"
        for tier in (wanted, other, "default"):
            if tier in self.endpoints:
                if tier != wanted:
                    reason += f"; no {wanted} endpoint configured, using {tier}"
                return ModelUse(tier, self.endpoints[tier].model, reason)
        return ModelUse("none", "", "no LLM configured: extractive answer")
