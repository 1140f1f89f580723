"""Other languages end to end on the embedded default: the Russian and Korean reading sets
of bench/questions/multilingual ingested as documents and asked through the whole
pipeline (keyword analysis, dense search, answer, checks)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.settings import Settings
from core.text import chinese_numeral
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


def test_traditional_and_simplified_chinese_answer_each_other(tmp_path: Path) -> None:
    """A traditional question of a simplified policy, and a simplified question of a
    traditional handbook, were refused (coverage 0.1-0.3) or quoted another passage."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "security.md").write_text(
        "# 信息安全管理规范\n\n## 一、账号与密码\n\n密码每90天必须更换一次，不得与最近5次使用过的"
        "密码相同。\n\n## 二、远程访问\n\n远程访问内网必须使用公司指定的VPN客户端。\n",
        encoding="utf-8",
    )
    (folder / "hk.md").write_text(
        "# 香港分公司員工福利手冊\n\n## 一、年假\n\n入職滿一年的員工每年享有有薪年假14天。\n\n"
        "## 二、交通津貼\n\n| 職級 | 每月交通津貼（港幣） |\n|---|---|\n| 經理級 | 2,500 |\n"
        "| 主任級 | 1,200 |\n",
        encoding="utf-8",
    )
    (folder / "taipei.txt").write_text(
        "台北辦事處通知\n\n台北辦事處自2025年4月1日起遷至信義區松仁路100號12樓。\n", "utf-8"
    )
    app = Ragline(Settings(data_dir=tmp_path / "data"))
    try:
        app.ingest([folder])
        password = app.ask("密碼多久必須更換一次？", ANON)
        allowance = app.ask("经理级每月交通津贴是多少港币？", ANON)
        moved = app.ask("台北办事处搬到哪里了？", ANON)  # a paragraph: coverage and scoring
    finally:
        app.close()
    assert password.covered and "90天" in password.text, password.text
    assert allowance.covered and "2,500" in allowance.text, allowance.text
    assert moved.covered and "松仁路100號" in moved.text, moved.text


def test_a_clause_asked_in_digits_is_found_written_in_numerals(tmp_path: Path) -> None:
    """ "第28条规定了什么？" of a law that writes 第二十八条 was refused: retrieval and the
    answer's sentence scoring saw no shared word."""
    folder = tmp_path / "docs"
    folder.mkdir()
    topics = ["公司的名称", "员工的假期", "报销的期限", "合同的期限", "数据的保存", "设备的采购"]
    clauses = [
        f"第{chinese_numeral(n)}条 本办法规定{topics[n % len(topics)]}，由相关部门负责。"
        for n in range(20, 34)
    ]
    clauses[8] = "第二十八条 敏感个人信息是一旦泄露容易导致自然人受到侵害的个人信息。"
    (folder / "law.md").write_text("# 管理办法\n\n" + "\n\n".join(clauses) + "\n", "utf-8")
    app = Ragline(Settings(data_dir=tmp_path / "data"))
    try:
        app.ingest([folder])
        answer = app.ask("管理办法第28条规定了什么？", ANON)
    finally:
        app.close()
    assert answer.covered and answer.text.startswith("第二十八条 敏感个人信息"), answer.text
