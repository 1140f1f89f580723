"""Traditional and simplified Chinese searched and checked as one language: a question
in one script found no word of a document in the other (內存 / 内存, 經理 / 经理)."""

from __future__ import annotations

from core.han_script import fold_han, in_script_of, traditional_share
from core.text import content_terms, index_tokens, keyword_tokens


def test_traditional_text_is_cut_into_the_words_of_its_simplified_form() -> None:
    assert fold_han("經理級每月交通津貼") == "经理级每月交通津贴"
    assert fold_han("经理级 TiKV") == "经理级 TiKV"  # simplified and Latin text unchanged
    # Japanese kanji and Korean hanja are no traditional Chinese.
    assert fold_han("北浜駅は何年に開業しましたか") == "北浜駅は何年に開業しましたか"
    assert fold_han("國立 대학교") == "國立 대학교"
    assert index_tokens("TiKV生產環境需要多少內存") == index_tokens("TiKV生产环境需要多少内存")
    assert keyword_tokens("密碼多久必須更換一次") == keyword_tokens("密码多久必须更换一次")
    assert "内存" in content_terms("TiKV生產環境需要多少內存？")


def test_a_question_is_read_in_the_script_of_the_passage() -> None:
    simplified = "1.2 密码每90天必须更换一次，不得与最近5次使用过的密码相同。"
    traditional = "職級: 經理級 | 每月交通津貼（港幣）: 2,500"
    assert traditional_share(simplified) == 0.0 and traditional_share(traditional) == 1.0
    assert in_script_of("密碼多久必須更換一次？", simplified) == "密码多久必须更换一次？"
    assert in_script_of("经理级每月交通津贴是多少港币？", traditional) == (
        "經理級每月交通津貼是多少港幣？"
    )
    # Same script, no Han, or a passage that tells no script: unchanged.
    assert in_script_of("密码多久更换？", simplified) == "密码多久更换？"
    assert in_script_of("How long?", traditional) == "How long?"
    assert in_script_of("經理級？", "TiKV 64 GB") == "經理級？"
