"""Which language a question is in, its name for a model's instructions, and the fixed
"not covered" sentence in it.

The language comes from core.lang (scripts, and function words for Latin-script text);
one without a sentence here is answered in English.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal, cast

from core.lang import language

Lang = Literal["zh", "en", "ja", "ko", "de", "fr", "es", "it", "pt", "nl", "ru", "pl", "sv"]

# Read-only on purpose: a shared default must not be mutable module state.
DEFAULT_NOT_COVERED: Mapping[Lang, str] = MappingProxyType(
    {
        "zh": "资料中没有找到能回答这个问题的内容。",
        "en": "The indexed material does not cover this question.",
        "ja": "資料の中に、この質問に答えられる内容は見つかりませんでした。",
        "ko": "자료에서 이 질문에 답할 수 있는 내용을 찾지 못했습니다.",
        "de": "Das indexierte Material beantwortet diese Frage nicht.",
        "fr": "Les documents indexés ne répondent pas à cette question.",
        "es": "El material indexado no responde a esta pregunta.",
        "it": "Il materiale indicizzato non risponde a questa domanda.",
        "pt": "O material indexado não responde a esta pergunta.",
        "nl": "Het geïndexeerde materiaal beantwoordt deze vraag niet.",
        "ru": "В проиндексированных материалах нет ответа на этот вопрос.",
        "pl": "Zindeksowane materiały nie odpowiadają na to pytanie.",
        "sv": "Det indexerade materialet besvarar inte den här frågan.",
    }
)

LANGUAGE_NAME: Mapping[Lang, str] = MappingProxyType(
    {
        "zh": "Chinese (简体中文)",
        "en": "English",
        "ja": "Japanese (日本語)",
        "ko": "Korean (한국어)",
        "de": "German (Deutsch)",
        "fr": "French (français)",
        "es": "Spanish (español)",
        "it": "Italian (italiano)",
        "pt": "Portuguese (português)",
        "nl": "Dutch (Nederlands)",
        "ru": "Russian (русский)",
        "pl": "Polish (polski)",
        "sv": "Swedish (svenska)",
    }
)


def language_of(text: str) -> Lang:
    found = language(text)
    return cast(Lang, found) if found in LANGUAGE_NAME else "en"
