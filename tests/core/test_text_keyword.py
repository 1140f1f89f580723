from core.text import keyword_query_terms, keyword_tokens, stem


def test_english_analysis() -> None:
    assert stem("policies") == stem("policy") == "polici"
    assert stem("running") == "run" and stem("p12") == "p12" and stem("数据") == "数据"
    tokens = keyword_tokens("The operator's multi-factor login")
    assert "oper" in tokens and "multifactor" in tokens and "multi-factor" in tokens
    assert "s" not in tokens
    assert keyword_query_terms("What are the rules for a user's MFA?") == ["rule", "user", "mfa"]


def test_chinese_and_identifiers_unchanged() -> None:
    terms = keyword_query_terms("TiDB 的 max_connections 是多少 P12.1.2")
    assert "tidb" in terms and "max_connections" in terms and "p12.1.2" in terms
    assert "的" not in terms and "多少" not in terms
