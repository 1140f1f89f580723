import os
import time
from pathlib import Path

import pytest

from core.errors import ConfigError
from routing.synonyms import SynonymDictionary


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    # Make sure the modification time moves even on coarse-grained file systems.
    stamp = time.time() + (os.stat(path).st_mtime_ns % 7) + 2
    os.utime(path, (stamp, stamp))


def test_expands_groups_both_ways_and_per_department(tmp_path: Path) -> None:
    path = tmp_path / "syn.toml"
    _write(
        path,
        '[global]\n"过热" = ["温度过高", "发热异常", "散热不良"]\n'
        '"MFA" = ["multi-factor authentication"]\n'
        '[department.it]\n"宕机" = ["故障"]\n',
    )
    syn = SynonymDictionary(path)
    out = syn.expand("服务器过热怎么办")
    assert out.applied == {"过热": ["温度过高", "发热异常", "散热不良"]}
    assert out.query == "服务器过热怎么办 温度过高 发热异常 散热不良"
    # Any member of a group expands to the others.
    assert syn.expand("CPU 温度过高").applied == {"温度过高": ["过热", "发热异常", "散热不良"]}
    # Latin terms match as whole words only.
    assert syn.expand("Is MFA required?").applied == {"MFA": ["multi-factor authentication"]}
    assert not syn.expand("the MFAX token").applied
    # ... and in their plural: the question's "points" names the group of "point".
    assert syn.expand("Do all MFAs expire?").applied == {"MFA": ["multi-factor authentication"]}
    assert syn.expand("are multi-factor authentications logged").applied == {
        "multi-factor authentication": ["MFA"]
    }
    assert not syn.expand("MFAses").applied
    # Chinese writes Latin terms against Han characters, with no space.
    assert syn.expand("登录需要MFA吗").applied == {"MFA": ["multi-factor authentication"]}
    assert not syn.expand("登录需要MFAX吗").applied
    assert not syn.expand("数据库宕机").applied
    assert syn.expand("数据库宕机", ["it"]).applied == {"宕机": ["故障"]}


def test_hot_reload_keeps_last_good(tmp_path: Path) -> None:
    path = tmp_path / "syn.toml"
    _write(path, '[global]\n"a1" = ["b1"]\n')
    syn = SynonymDictionary(path)
    assert syn.expand("a1").applied == {"a1": ["b1"]}
    _write(path, '[global]\n"a1" = ["c1"]\n')
    assert syn.expand("a1").applied == {"a1": ["c1"]}
    _write(path, "[global\nbroken")
    assert syn.expand("a1").applied == {"a1": ["c1"]}  # last good dictionary
    assert "synonyms" in syn.error


def test_bad_file_fails_at_start(tmp_path: Path) -> None:
    path = tmp_path / "syn.toml"
    _write(path, '[global]\n"a" = [1]\n')
    with pytest.raises(ConfigError, match="SYNONYMS__PATH"):
        SynonymDictionary(path)


def test_packaged_dictionary_loads() -> None:
    syn = SynonymDictionary()
    assert syn.expand("服务器过热").applied["过热"] == ["温度过高", "发热异常", "散热不良"]


def test_a_latin_term_occurs_as_the_whole_word_pattern_finds_it() -> None:
    """`_occurs` is the whole-word regex `(?<!-)START term (?:e?s)? END(?!-)` without a
    compile per term: the same answer for every term and text here."""
    import itertools
    import re

    from core.text import LATIN_WORD_END, LATIN_WORD_START
    from routing.synonyms import _occurs

    terms = [
        "pep",
        "peps",
        "policy enforcement point",
        "2fa",
        "utf-8",
        "a",
        "x.509",
        "ssd",
        "政策",
        "zéro",
    ]
    texts = [
        "the pep and peps",
        "non-pep here",
        "pep-based",
        "使用pep时",
        "使用peps时",
        "apep",
        "pepx",
        "policy enforcement points matter",
        "policy enforcement pointed",
        "2fas",
        "2fa.",
        "utf-8s",
        "the a-team",
        "a",
        "x.509es",
        "ssdes",
        "the ssd",
        "the ssds-",
        "政策法规",
        "zéros",
        "über-pep",
        "pep_x",
        "pep2",
        "ｐｅｐ",
        "\tpep\n",
        "pepes",
        "pepses",
    ]

    def old(term: str, lowered: str) -> bool:
        t = term.lower()
        if re.search(r"[^\x00-\x7f]", t):
            return t in lowered
        plural = r"(?:e?s)?" if t[-1:].isalpha() else ""
        pattern = rf"(?<!-){LATIN_WORD_START}{re.escape(t)}{plural}{LATIN_WORD_END}(?!-)"
        return re.search(pattern, lowered) is not None

    for term, text in itertools.product(terms, texts):
        assert _occurs(term, text) is old(term, text), (term, text)
    assert _occurs("pep", "the peps") and not _occurs("pep", "non-pep")


def test_the_shipped_dictionary_reads_a_weekend_day_as_the_weekend() -> None:
    """(Session 47.) Rules are written for "休息日" / "the weekend"; questions name the day
    ("周六来公司加了一天班", "covering a Saturday"). A weekend day adds the weekend, not the
    other day of it."""
    syn = SynonymDictionary()
    assert "休息日" in syn.expand("周六来公司加了一天班，加班费怎么算？").query
    saturday = syn.expand("How much is paid for covering a Saturday?").applied
    assert saturday == {"Saturday": ["weekend", "rest day"]}
    assert "Sunday" not in syn.expand("Is the weekend paid?").applied.get("weekend", [])
    assert "Wi-Fi" in syn.expand("访客连无线网络应该选哪个网络名？").query
