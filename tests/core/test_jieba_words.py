"""jieba's dictionary loaded by first character gives the cuts and tags of the whole one."""

from __future__ import annotations

import marshal
import random
from pathlib import Path

import jieba
import jieba.posseg
import pytest

from core.jieba_words import JiebaWords

_TEXTS = [
    "2019年营业收入是多少？西贡商信银行的董事长是张天霖。",
    "《中华人民共和国网络安全法》第二十一条规定，网络运营者应当按照网络安全等级保护制度的要求履行安全保护义务。",
    "使用SSD时，截至2015年3月，TiSpark的P12.1.2版本已在FCC A和FCC B上加载。",
    "蒂亚戈·蒙泰罗出生于葡萄牙里斯本，2005年加入本菲卡青年队，後來轉會至波爾圖。",
    "富士山の標高は何メートルですか？大阪と松本の間。",
    "",
    "   ",
    "ＡＢＣ１２３全角字符與繁體中文混排，還有emoji 😀 和制表符\t換行\n結束",
]


def _random_texts(full: jieba.Tokenizer, n: int) -> list[str]:
    """Texts of dictionary words, their prefixes and stray characters run together: every
    kind of key jieba reads while cutting (prefixes, words, unknown runs for the HMM)."""
    rng = random.Random(13)
    words = sorted(w for w, count in full.FREQ.items() if count)
    chars = sorted({w[0] for w in words})
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(3, 30)):
            r = rng.random()
            if r < 0.7:
                parts.append(rng.choice(words))
            elif r < 0.9:
                parts.append(rng.choice(chars))
            else:
                parts.append(rng.choice(["，", "。", " ", "2020", "abc", "的"]))
        out.append("".join(parts))
    return out


@pytest.fixture(scope="module")
def full() -> tuple[jieba.Tokenizer, jieba.posseg.POSTokenizer]:
    tokenizer = jieba.Tokenizer()
    tokenizer.initialize()
    return tokenizer, jieba.posseg.POSTokenizer(tokenizer)


def test_cuts_and_tags_equal_the_whole_dictionary(
    tmp_path: Path, full: tuple[jieba.Tokenizer, jieba.posseg.POSTokenizer]
) -> None:
    tokenizer, tagger = full
    JiebaWords(tmp_path)  # builds the bucket file
    (bucket_file,) = tmp_path.glob("jieba-*.marshal")
    written = bucket_file.stat().st_ino  # rewritten = replaced by another file
    words = JiebaWords(tmp_path)  # reads it
    assert bucket_file.stat().st_ino == written
    texts = _TEXTS + _random_texts(tokenizer, 400)
    for text in texts:
        assert words.cut(text) == tokenizer.lcut(text), text
        assert words.cut_for_search(text) == tokenizer.lcut_for_search(text), text
        assert words.tag(text) == [(p.word, p.flag) for p in tagger.cut(text)], text
    import jieba.analyse

    full_idf = jieba.analyse.default_tfidf.idf_freq
    for text in texts[:60]:
        idf = words.idf(text)
        for n in (2, 3, 4):
            for i in range(len(text) - n + 1):
                assert idf.get(text[i : i + n]) == full_idf.get(text[i : i + n]), text
    assert words.idf_stop_words == frozenset(jieba.analyse.default_tfidf.stop_words)
    for word in ("银行", "董事长", "张天霖", "zzz", "的"):
        assert words.frequency(word) == int(tokenizer.FREQ.get(word) or 0)
    assert words.frequency("银行") > 0
    # Only the buckets of the characters seen were loaded.
    assert 0 < len(words._tokenizer.FREQ) < len(tokenizer.FREQ)
    assert 0 < len(words._idf) < len(full_idf)


def test_jieba_posseg_functions_tag_as_before(
    tmp_path: Path, full: tuple[jieba.Tokenizer, jieba.posseg.POSTokenizer]
) -> None:
    _, tagger = full
    JiebaWords(tmp_path)
    text = _TEXTS[3]
    assert [(p.word, p.flag) for p in jieba.posseg.cut(text)] == [
        (p.word, p.flag) for p in tagger.cut(text)
    ]


def test_runs_decoded_again_come_from_the_memo_with_the_same_tags(
    tmp_path: Path, full: tuple[jieba.Tokenizer, jieba.posseg.POSTokenizer]
) -> None:
    tokenizer, tagger = full
    words = JiebaWords(tmp_path)
    texts = _TEXTS + _random_texts(tokenizer, 60)
    first = [words.tag(text) for text in texts]
    decoded = words.decode_cache()
    assert decoded.misses > 0  # the texts hold runs the dictionary does not cut
    again = [words.tag(text) for text in texts]
    assert words.decode_cache().misses == decoded.misses  # nothing decoded twice
    assert words.decode_cache().hits >= decoded.hits + decoded.misses
    expected = [[(p.word, p.flag) for p in tagger.cut(text)] for text in texts]
    assert first == again == expected


@pytest.mark.parametrize(
    "damage", [b"", b"not marshal", b"\xe9\x03\x00\x00\x00", "cut short", "old format"]
)
def test_a_damaged_cache_is_built_again(
    tmp_path: Path,
    full: tuple[jieba.Tokenizer, jieba.posseg.POSTokenizer],
    damage: bytes | str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    tokenizer, _ = full
    JiebaWords(tmp_path)
    (bucket_file,) = tmp_path.glob("jieba-*.marshal")
    whole = bucket_file.read_bytes()
    if damage == "cut short":  # a header that promises more buckets than the file holds
        damage = whole[:-1000]
    elif damage == "old format":  # session 35's layout: one marshal of everything
        damage = marshal.dumps(("jieba-buckets-2", 1, [], {"银": b""}))
    assert isinstance(damage, bytes)
    bucket_file.write_bytes(damage)
    words = JiebaWords(tmp_path)
    assert "damaged; building it again" in caplog.text
    assert bucket_file.stat().st_size > 1_000_000
    assert words.cut(_TEXTS[1]) == tokenizer.lcut(_TEXTS[1])


def test_without_a_cache_directory_the_whole_dictionary_is_loaded(
    full: tuple[jieba.Tokenizer, jieba.posseg.POSTokenizer], caplog: pytest.LogCaptureFixture
) -> None:
    tokenizer, _ = full
    words = JiebaWords(None)
    assert "loading it whole" in caplog.text
    assert len(words._tokenizer.FREQ) == len(tokenizer.FREQ)
    assert words.tag(_TEXTS[3]) == [
        (p.word, p.flag) for p in jieba.posseg.POSTokenizer(tokenizer).cut(_TEXTS[3])
    ]


def test_load_all_loads_every_bucket(
    tmp_path: Path, full: tuple[jieba.Tokenizer, jieba.posseg.POSTokenizer]
) -> None:
    tokenizer, _ = full
    words = JiebaWords(tmp_path)
    words.cut(_TEXTS[0])
    words.load_all()
    assert words._tokenizer.FREQ == tokenizer.FREQ
    assert words.cut(_TEXTS[1]) == tokenizer.lcut(_TEXTS[1])


def test_the_tagging_decoder_is_built_only_when_a_text_is_tagged(tmp_path: Path) -> None:
    """A search or an ingest only cuts: the part-of-speech decoder (~30 ms to build) is
    left for the first tagging, which then uses it."""
    words = JiebaWords(tmp_path)
    words.cut_for_search(_TEXTS[0])
    words.cut(_TEXTS[1])
    assert words._decoder is None
    words.tag("蓝线裸顶鲷生活在珊瑚礁")
    assert words._decoder is not None and words.decode_cache().misses > 0
    server = JiebaWords(tmp_path)
    server.load_all()  # a server's warm-up builds it before the first request
    assert server._decoder is not None
