"""Entity extraction: what the graph store indexes chunks and queries by."""

from __future__ import annotations

import pytest

from indexing.entities import extract_entities, normalize_entity, query_entities


@pytest.mark.parametrize(
    ("text", "entity"),
    [
        ("服务返回错误码ERR-1042后重启", "err-1042"),
        ("SAP raised E1234 at startup.", "e1234"),
        ("Upgrade to P12.1.2 today.", "p12.1.2"),
        ("Requires v3.1.0 or later.", "v3.1.0"),
        ("Order part AB-12C-7 from stock.", "ab-12c-7"),
        ("Raise max_connections to 500.", "max_connections"),
        ("Set spring.datasource.url first.", "spring.datasource.url"),
        ("根据第十二条的规定执行。", "第十二条"),
        ("See §3.2 for details.", "§3.2"),
        ("As Section 4.1 requires, log it.", "section 4.1"),
        ("请阅读《员工手册》全文。", "员工手册"),
        ('The so-called "blue screen" appears.', "blue screen"),
        ("Ask the Payment Gateway team.", "payment gateway"),
    ],
)
def test_extracts_technical_entities(text: str, entity: str) -> None:
    assert entity in extract_entities(text)


def test_chinese_keywords_and_determinism() -> None:
    text = (
        "华为技术有限公司的总部位于深圳市龙岗区。华为是全球领先的通信设备供应商，华为的员工众多。"
    )
    entities = extract_entities(text)
    assert "华为" in entities
    assert entities == extract_entities(text)
    assert "的" not in entities and "是" not in entities


def test_limit_normalisation_and_no_identifier_fragments() -> None:
    text = " ".join(f"ERR-{1000 + i}" for i in range(30)) + " max_connections"
    assert len(extract_entities(text, limit=5)) == 5
    assert "connections" not in extract_entities("Raise the max_connections setting always.")
    assert normalize_entity("  ＥＲＲ－１０４２  ") == "err-1042"
    assert normalize_entity("The Payment  Gateway") == "payment gateway"
    assert all(e == normalize_entity(e) for e in extract_entities("The ERR-7 in Payment Gateway"))


def test_query_entities_meet_passage_entities() -> None:
    passage = extract_entities("华为技术有限公司的总部位于深圳。升级到 P12.1.2 修复 ERR-1042。")
    for question in ["华为的总部在哪里？", "what is ERR-1042?", "P12.1.2 修复了什么"]:
        assert set(query_entities(question)) & set(passage), question
    assert query_entities("的 是 什么") == []
