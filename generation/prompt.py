"""The RAG prompt: rules in the system message, the question and its sources in the user's.

Sources are listed in rank order under their citation labels and cut to a character
budget, so the best evidence survives when the context window is tight.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath

from core.types import Chunk, Hit
from generation.citations import prompt_labels
from generation.language import LANGUAGE_NAME, Lang
from generation.llm import Message

DEFAULT_BUDGET_CHARS = 12_000
# A source cut shorter than this is more confusing than helpful: leave it out instead.
MIN_PARTIAL_CHARS = 200


_SYSTEM = """\
You answer questions using only the sources given in the user's message.
Rules:
1. Use only facts stated in the sources. Never use outside knowledge, never guess.
2. After each sentence that states a fact, cite the source it comes from with its label \
exactly as given in square brackets, for example [Doc1a2b3c_p4]; cite two sources as \
[Doc1a2b3c_p4][Doc9f8e7d_p2]. Never invent a label or cite a source you were not given.
3. If the sources do not answer the question, reply with exactly this sentence and \
nothing else: {not_covered}
4. Answer in {language}, the language of the question. Be brief and direct."""


def _where(chunk: Chunk) -> str:
    title = chunk.title or PurePosixPath(chunk.source).name or chunk.source
    if chunk.page_end > chunk.page_start:
        return f"{title}, pages {chunk.page_start}-{chunk.page_end}"
    return f"{title}, page {chunk.page_start}"


def format_sources(hits: Sequence[Hit], budget_chars: int = DEFAULT_BUDGET_CHARS) -> str:
    """Each source as "[label] (title, page N)" then its text, best first, within budget.

    The first source is always included (cut if need be): a prompt with no sources at all
    could only produce an unsupported answer.
    """
    blocks: list[str] = []
    left = budget_chars
    # Two passages starting on one page are shown as [DocX_pY.1], [DocX_pY.2]: each label
    # the model copies then names exactly one passage.
    for hit, label in zip(hits, prompt_labels(hits), strict=True):
        chunk = hit.chunk
        # Page breaks inside a chunk mean nothing to the model.
        block = f"{label} ({_where(chunk)})\n{chunk.text.replace(chr(12), chr(10)).strip()}"
        if len(block) > left:
            if blocks and left < MIN_PARTIAL_CHARS:
                break
            blocks.append(block[: max(left - 1, 0)].rstrip() + "…")
            break
        blocks.append(block)
        left -= len(block) + 2  # the blank line between sources
    return "\n\n".join(blocks)


def build_messages(
    question: str,
    hits: Sequence[Hit],
    not_covered: str,
    language: Lang,
    budget_chars: int = DEFAULT_BUDGET_CHARS,
) -> list[Message]:
    """Chat messages for an OpenAI-compatible endpoint."""
    # The example labels are placeholders on purpose: a real one would nudge the model
    # to cite that source whatever it says.
    system = _SYSTEM.format(not_covered=not_covered, language=LANGUAGE_NAME[language])
    user = f"Sources:\n\n{format_sources(hits, budget_chars)}\n\nQuestion: {question}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
