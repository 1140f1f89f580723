"""Other languages end to end on the embedded default: the Russian and Korean reading sets
of bench/questions/multilingual ingested as documents and asked through the whole
pipeline (keyword analysis, dense search, answer, checks)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.settings import Settings
from core.types import Principal
from ragline.app import Ragline
from ragline.bench.common import contains_answer

SETS = Path(__file__).resolve().parents[2] / "bench" / "questions" / "multilingual"
ANON = Principal("anon")


def _questions(lang: str) -> list[tuple[str, list[str]]]:
    data = json.loads((SETS / f"{lang}.json").read_text(encoding="utf-8"))["data"]
    return [
        (qa["question"], [a["text"] for a in qa["answers"]])
        for article in data
        for para in article["paragraphs"]
        for qa in para["qas"]
    ]


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ragline]:
    folder = tmp_path_factory.mktemp("docs")
    for lang in ("ru", "ko"):
        data = json.loads((SETS / f"{lang}.json").read_text(encoding="utf-8"))["data"]
        for article in data:
            for para in article["paragraphs"]:
                (folder / f"{para['id']}.txt").write_text(para["context"], encoding="utf-8")
    app = Ragline(Settings(data_dir=tmp_path_factory.mktemp("data")))
    outcomes, _ = app.ingest([folder])
    assert all(o.status == "indexed" for o in outcomes)
    yield app
    app.close()


@pytest.mark.parametrize("lang", ["ru", "ko"])
def test_most_questions_are_answered_with_their_answer(rag: Ragline, lang: str) -> None:
    """Measured 0.875 (Russian) and 0.833 (Korean) with the analysis of core.lang; 0.81 and
    0.50 before it (Korean words compared with their particles attached)."""
    questions = _questions(lang)
    right = sum(contains_answer(rag.ask(q, ANON).text, golds) for q, golds in questions)
    assert right / len(questions) >= 0.75, right


def test_a_city_the_documents_do_not_have_is_not_covered_in_russian(rag: Ragline) -> None:
    answer = rag.ask("Какое население у Омска?", ANON)
    assert not answer.covered
    assert answer.text == "В проиндексированных материалах нет ответа на этот вопрос."
    # The same question about a city they have is answered, its name in another case.
    answer = rag.ask("Какое население Казани?", ANON)
    assert answer.covered and answer.citations
