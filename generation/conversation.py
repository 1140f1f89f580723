"""Multi-turn questions: what the current turn is about, taken from the conversation.

"when did it last occur" means nothing alone; after "what does error E102 mean" it is
about E102. The focus of the current turn is its own identifiers, error codes, quoted and
capitalised names, file names; when the turn leans on earlier ones (a pronoun, or no focus
of its own) the most recent earlier focus is carried over. Retrieval then runs on the
current question plus that focus, never on the pasted history, and nothing of the
conversation is stored anywhere.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.text import STOPWORDS, has_han
from generation.han_names import han_subject
from generation.llm import LLMError, OpenAICompatibleClient

# Error codes, ticket ids, versions, config keys, clause numbers, file names.
_IDENTIFIER = re.compile(
    r"(?<![\w.])(?:[A-Za-z]+[-_]?\d[\w.\-]*|\d+(?:\.\d+){2,}|[a-z]+_[a-z_]+"
    r"|[\w\-]+\.(?:pdf|docx?|xlsx?|pptx?|md|txt|html?|csv|json|log|ya?ml|toml|ini|conf|xml))"
    r"|第[一二三四五六七八九十百零〇\d]+[条章节款]"
)
_QUOTED = re.compile(r"[\"“「『《]([^\"”」』》]{2,60})[\"”」』》]")
# Two or more capitalised words ("Payment Gateway", "Dana Wu"), not at a sentence start alone.
_NAME = re.compile(
    r"\b(?:[A-Z][a-z0-9]+|[A-Z]{2,})(?:[ -](?:[A-Z][a-z0-9]+|[A-Z]{2,}|of|the))*"
    r"[ -](?:[A-Z][a-z0-9]+|[A-Z]{2,})\b"
)
# Single tokens that are names by their shape: TiDB, PostgreSQL, iPhone, GDPR, HR.
_SHAPED = re.compile(r"\b(?:[A-Za-z]*[a-z][A-Z][A-Za-z]*|[A-Z]{2,}[a-z]{0,2})\b")
# A capitalised word inside a sentence, after a lower-case word: a name ("the Duck
# article", "in Lisbon").
_CAPITALISED = re.compile(r"(?<=[a-z0-9,;:)] )[A-Z][a-z]{2,}\b")
# What Ragline itself adds to an answer it sends as a chat message: the "Sources:" list
# (titles, file paths and URIs, pages and lines) and the "Note:" on coverage; and labels.
_FOOTER = re.compile(r"\n\s*(?:Sources|Note):.*", re.DOTALL)
_LABEL = re.compile(r"\[(?:Doc[0-9a-z]+_p\d+(?:\.\d+)?|DB_\w+|API_\w+)\]")
_URI = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+")
# Words that point back at something said before.
_ANAPHORA = re.compile(
    r"\b(?:it|its|it's|this|that|these|those|they|them|their|he|she|him|her|the same|"
    r"the above|the former|the latter|there|then)\b"
    r"|它|它们|其|该|这个|那个|此|上述|前者|后者|他|她",
    re.IGNORECASE,
)
_QUESTION_WORDS = frozenset(
    [
        "what",
        "when",
        "who",
        "whom",
        "whose",
        "where",
        "why",
        "which",
        "how",
        "does",
        "did",
        "do",
        "is",
        "are",
        "was",
        "were",
        "can",
        "could",
        "should",
        "would",
        "will",
        "please",
        "tell",
        "me",
        "about",
        "explain",
    ]
)


@dataclass(frozen=True, slots=True)
class Turn:
    role: str  # "user" | "assistant"
    text: str


@dataclass(frozen=True, slots=True)
class Focus:
    question: str  # the current turn as the user wrote it
    terms: tuple[str, ...]  # its own focus: identifiers, names
    carried: tuple[str, ...]  # focus taken over from earlier turns
    query: str  # what retrieval runs on: the question plus the carried focus
    source: str = "rules"  # "rules" | "llm" | "none"

    @property
    def all_terms(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.terms + self.carried))


# A run of capitalised words longer than this is a list ("E100 E101 E102 ..."), not a
# name: its identifiers count one by one. No term is longer than MAX_TERM_CHARS.
MAX_NAME_WORDS = 6
MAX_TERM_CHARS = 80


def focus_terms(text: str) -> tuple[str, ...]:
    """Identifiers, quoted names and multi-word capitalised names, in order of appearance."""
    found: list[tuple[int, str]] = []
    found += [(m.start(), m.group(0).rstrip(".-")) for m in _IDENTIFIER.finditer(text)]
    found += [(m.start(1), m.group(1).strip()) for m in _QUOTED.finditer(text)]
    found += [(m.start(), m.group(0)) for m in _SHAPED.finditer(text)]
    found += [(m.start(), m.group(0)) for m in _CAPITALISED.finditer(text)]
    subject = han_subject(text) if has_han(text) else ""
    if len(subject) >= 2:  # what a Chinese question is about ("个人信息保护法什么时候施行")
        found.append((text.find(subject), subject))
    for m in _NAME.finditer(text):
        words = m.group(0).split()
        if words[0].lower() in _QUESTION_WORDS:  # "What Payment Gateway": drop "What"
            words = words[1:]
        if 2 <= len(words) <= MAX_NAME_WORDS:
            found.append((m.start(), " ".join(words)))
    terms: dict[str, None] = {}
    for _, term in sorted(found, key=lambda f: (f[0], -len(f[1]))):
        if len(term) > MAX_TERM_CHARS:
            continue
        if term and term.lower() not in STOPWORDS and not _covered_by(term, terms):
            terms[term] = None
    return tuple(terms)


def _covered_by(term: str, kept: dict[str, None]) -> bool:
    low = term.lower()
    return any(low in k.lower() for k in kept)


def leans_on_history(question: str) -> bool:
    """The turn refers back (a pronoun, "the same") or names nothing of its own."""
    if _ANAPHORA.search(question):
        return True
    if focus_terms(question):
        return False
    # Short questions without a subject of their own: "and the deadline?", "who fixed it"
    words = [w for w in re.findall(r"\w+", question.lower()) if w not in STOPWORDS]
    limit = 4 if not has_han(question) else 6
    return len(words) <= limit


def extract_focus(turns: Sequence[Turn], max_carried: int = 3) -> Focus:
    """The focus of the last user turn, carrying earlier focus over when it leans on it."""
    users = [t for t in turns if t.role == "user" and t.text.strip()]
    if not users:
        return Focus("", (), (), "", "none")
    question = users[-1].text.strip()
    own = focus_terms(question)
    carried: tuple[str, ...] = ()
    if len(turns) > 1 and leans_on_history(question):
        earlier = [t for t in turns[: turns.index(users[-1])] if t.text.strip()]
        # The most recent user turn with a focus of its own wins; assistant turns only
        # when no user turn named anything (their answers name documents, not the topic).
        for pool in (
            [t for t in earlier if t.role == "user"],
            [t for t in earlier if t.role == "assistant"],
        ):
            for turn in reversed(pool):
                terms = tuple(t for t in focus_terms(_strip_labels(turn.text)) if t not in own)
                if terms:
                    carried = terms[:max_carried]
                    break
            if carried:
                break
    query = " ".join([question, *carried]) if carried else question
    return Focus(question, own, carried, query)


def _strip_labels(text: str) -> str:
    """A turn's own words: without citation labels, Ragline's footer and URIs."""
    return _URI.sub(" ", _LABEL.sub(" ", _FOOTER.sub("", text)))


_REWRITE_SYSTEM = (
    "Rewrite the user's last question so that it can be understood without the "
    "conversation: replace pronouns with what they refer to and keep every identifier, "
    "error code and name exactly as written. Reply with the rewritten question only."
)
MAX_REWRITE_CHARS = 400


async def focus_with_llm(
    turns: Sequence[Turn], client: OpenAICompatibleClient, rules: Focus
) -> Focus:
    """The LLM's standalone version of the question, when it is a safe one: short, and
    naming no identifier the conversation does not contain. Otherwise the rules' focus."""
    if not rules.carried:  # the turn stands on its own: nothing to rewrite
        return rules
    transcript = "\n".join(f"{t.role}: {_strip_labels(t.text).strip()[:600]}" for t in turns)
    try:
        reply = await client.achat(
            [
                {"role": "system", "content": _REWRITE_SYSTEM},
                {
                    "role": "user",
                    "content": f"Conversation:\n{transcript}\n\nRewrite: {rules.question}",
                },
            ],
            max_tokens=120,
        )
    except LLMError:
        return rules
    rewrite = " ".join(reply.strip().strip("\"'“”").split())
    said = " ".join(t.text for t in turns).lower()
    invented = [t for t in focus_terms(rewrite) if t.lower() not in said]
    if not rewrite or len(rewrite) > MAX_REWRITE_CHARS or invented:
        return rules
    carried = tuple(t for t in rules.all_terms if t.lower() not in rewrite.lower())
    query = " ".join([rewrite, *carried])
    return Focus(rules.question, rules.terms, rules.carried, query, "llm")
