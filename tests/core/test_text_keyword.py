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


def test_stemming_from_many_threads_at_once_gives_the_single_thread_stems() -> None:
    """The snowball stemmer keeps its word in its own fields: unguarded, concurrent
    requests raised IndexError or got each other's stems."""
    import itertools
    import sys
    from concurrent.futures import ThreadPoolExecutor

    from core.text import stem

    words = ["".join(p) + "ations" for p in itertools.product("bcdfglmnprst", repeat=3)]
    expected = {}
    for w in words:
        stem.cache_clear()
        expected[w] = stem(w)
    stem.cache_clear()
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter allows
    try:
        with ThreadPoolExecutor(8) as pool:
            got = list(pool.map(stem, words * 2))
    finally:
        sys.setswitchinterval(switch)
        stem.cache_clear()
    assert got == [expected[w] for w in words * 2]


def test_starts_latin_word_agrees_with_the_lookbehind_pattern() -> None:
    """`starts_latin_word` is the LATIN_WORD_START regex without a compile per term: same
    answer on mixed Han / Latin / digit text, every occurrence tried."""
    import random
    import re

    from core.text import LATIN_WORD_START, starts_latin_word

    rng = random.Random(7)
    alphabet = ["a", "b", "1", "2", "截", "至", " ", "-", ".", "_", "é", "年"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        term = "".join(rng.choice(alphabet[:6]) for _ in range(rng.randint(1, 3)))
        expected = re.search(LATIN_WORD_START + re.escape(term), text) is not None
        assert starts_latin_word(text, term) is expected, (text, term)
    assert starts_latin_word("截至2015年", "2015") and not starts_latin_word("12015", "2015")
    assert starts_latin_word("x 2015, 12015", "2015")  # a later occurrence counts

    # ... and with an ending pattern, the pattern with that ending appended.
    from core.text import LATIN_WORD_END

    tail = rf"(?:'?s)?{LATIN_WORD_END}"
    ending = re.compile(tail)
    alphabet += ["s", "'"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        term = "".join(rng.choice(alphabet[:6]) for _ in range(rng.randint(1, 3)))
        expected = re.search(LATIN_WORD_START + re.escape(term) + tail, text) is not None
        assert starts_latin_word(text, term, ending) is expected, (text, term)
