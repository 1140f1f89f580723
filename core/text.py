"""Tokenisation shared by the keyword index, query analysis and answer extraction.

Chinese goes through jieba (search mode for documents, so both short and long words
match); Latin text is lower-cased word tokens. Pure computation: jieba's dictionary is
loaded lazily, the entries a text can need before it is cut (core.jieba_words).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from core.cache import default_cache_dir
from core.han_script import fold_han, load_script_tables
from core.jieba_words import JiebaWords
from core.lang import (
    gram_segments,
    language,
    needs_segmenting,
    prefix_stem,
    segment,
    snowball,
    stem_word,
    stemmed_language,
    stopwords,
)

_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_HAN_WORD = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]{2,}")
# Word characters, with the combining marks of scripts whose vowels are marks (Indic, Thai,
# Lao, Myanmar, Khmer; \w alone cuts their words apart) and of decomposed Latin letters.
_TOKEN = re.compile(
    r"[\w\u3400-\u9fff\uf900-\ufaff\u0300-\u036f\u0900-\u0dff\u0e00-\u0eff"
    r"\u1000-\u109f\u1780-\u17ff]+",
    re.UNICODE,
)
# Every ASCII character `_TOKEN` does not take (all but letters, digits and "_") a space.
_ASCII_NON_WORD = str.maketrans(
    {c: " " for c in map(chr, range(128)) if not (c.isalnum() or c == "_")}
)
# Technical identifiers (P12.1.2, ERR-404, utf-8, 3.2.1) are kept whole as well as split,
# so an exact identifier query matches exactly.
_IDENT = re.compile(r"[a-z0-9]+(?:[._\-/:][a-z0-9]+)+")
# What every identifier holds: a separator between two letters or digits. Found ~10x faster
# than `_IDENT` is tried (a pattern that starts with a character class is skipped through
# in C; `_IDENT` is tried, and backtracks, at every letter), and most sentences hold none.
_IDENT_JOINT = re.compile(r"[._\-/:](?<=[a-z0-9][._\-/:])(?=[a-z0-9])")
# Where a Latin word or number starts and ends inside mixed text: at anything but a letter
# or digit of another script than Han. Chinese writes "截至2015年", "使用SSD时" with no
# space, and Python's \w counts Han characters as word characters.
LATIN_WORD_START = r"(?<![^\W\u3400-\u9fff\uf900-\ufaff])"
LATIN_WORD_END = r"(?![^\W\u3400-\u9fff\uf900-\ufaff])"
_NON_HAN_WORD_CHAR = re.compile(r"[^\W\u3400-\u9fff\uf900-\ufaff]")
# A full stop after an abbreviation ("between 9 a.m. and 5 p.m.", "e.g. a token") ends a
# sentence only before a capital ("at 5 p.m. The office …").
# German abbreviations a number or a word follows ("Nr. 6/2019", "bzw. der"): no sentence
# ends after them (also in generation.scope's splitter of normalised text).
GERMAN_ABBREVIATIONS = ("Nr", "bzw", "ca", "inkl", "zzgl", "ggf", "Abs")
_ABBREVIATED = (
    r"(?<!a\.m\.)(?<!p\.m\.)(?<!e\.g\.)(?<!i\.e\.)(?<!etc\.)(?<!vs\.)(?<!z\.B\.)(?<!z\. B\.)"
    + "".join(rf"(?<!\b{a}\.)" for a in GERMAN_ABBREVIATIONS)
)
# A day or an ordinal before a month or a class is no sentence end: "der 1. Januar",
# "31. März", "1. Klasse", "le 1. janvier".
_ORDINAL_AFTER = (
    r"\s+(?i:januar|februar|m[äa]rz|april|mai|juni|juli|august|september|oktober|november|"
    r"dezember|jan|feb|m[äa]r|apr|jun|jul|aug|sep|sept|okt|nov|dez|klasse|quartal|halbjahr|"
    r"stock|etage|obergeschoss|stufe)\b"
)
_ORDINAL = rf"(?!(?<=\b\d\.){_ORDINAL_AFTER})(?!(?<=\b\d\d\.){_ORDINAL_AFTER})"
# Sentence ends of other scripts too: the Devanagari danda (।, ॥), the Arabic question
# mark and full stop (؟, ۔), the Armenian full stop (։).
_SENTENCE_END = re.compile(
    rf"(?<=[。！？!?；;।॥؟۔։])|(?<=\.){_ABBREVIATED}{_ORDINAL}\s+"
    r"|(?<=(?:\.m|tc|vs)\.)\s+(?=[A-Z])|\n+"
)

# Function words that carry no topic. Kept small on purpose: BM25's idf handles the rest,
# and over-eager lists remove words that matter in questions ("not", "上").
_STOPWORD_TEXT = """
    的 了 是 在 和 与 及 或 也 都 而 并 对 把 被 从 到 为 以 于 之 其 这 那
    有 个 中 上 下 吗 呢 吧 啊 什么 哪 哪个 哪些 哪里 哪儿
    多少 几 怎么 怎样 如何 为什么 谁 何 是否 请问 一个 这个 那个 可以
    a an the of to in on at by for with from as is are was were be been being do
    does did what which who whom whose when where why how that this these those it
    its and or not into than then there their they them he she his her we you your
    our i me my
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


@lru_cache(maxsize=1)
def _jieba() -> JiebaWords:
    return JiebaWords(default_cache_dir())


def starts_latin_word(
    text: str, term: str, ending: re.Pattern[str] | None = None, joiners: str = ""
) -> bool:
    """Whether `term` occurs in `text` where a Latin word may start (LATIN_WORD_START),
    and, given `ending`, where that pattern matches right after it:
    `re.search(LATIN_WORD_START + re.escape(term) + ending, text)` without compiling a
    pattern per term (its character class costs ~1 ms to compile, and every question
    brings new terms). A character of `joiners` before the term joins it to the word
    before, as a letter would ("-": "non-PEP" holds no word "pep")."""
    return next(latin_words_at(text, term, ending, joiners), None) is not None


def latin_words_at(
    text: str, term: str, ending: re.Pattern[str] | None = None, joiners: str = ""
) -> Iterator[int]:
    """Where `starts_latin_word` finds `term`, left to right and not overlapping: the
    starts `re.finditer` would give for that pattern."""
    i = text.find(term)
    while i >= 0:
        if (
            i == 0 or (text[i - 1] not in joiners and _NON_HAN_WORD_CHAR.match(text, i - 1) is None)
        ) and (ending is None or ending.match(text, i + len(term)) is not None):
            yield i
            i = text.find(term, i + (len(term) or 1))
        else:
            i = text.find(term, i + 1)


_CN_DIGITS = "零一二三四五六七八九"
HAN_NUMERALS = "零〇一二三四五六七八九十百千万两"  # the characters Chinese numerals are written in
# "第十四条", "第十四章": a clause or chapter number, not the quantity fourteen.
_ORDINAL_REF = re.compile(rf"第[{HAN_NUMERALS}\d]+[条章节款项编篇部]")
_HAN_RUN = re.compile(f"[{HAN_NUMERALS}]+")


def chinese_numeral(n: int) -> str:
    """0..99999 in Chinese numerals: 14 -> 十四, 105 -> 一百零五, 2380 -> 二千三百八十."""
    if n < 10:
        return _CN_DIGITS[n]
    out = ""
    zero = False
    for value, unit in ((10000, "万"), (1000, "千"), (100, "百"), (10, "十")):
        d, n = divmod(n, value)
        if d:
            if zero:
                out += "零"
            out += ("" if (unit == "十" and not out and d == 1) else _CN_DIGITS[d]) + unit
            zero = False
        elif out:
            zero = True
    if n:
        out += ("零" if zero else "") + _CN_DIGITS[n]
    return out


# A numbered part of a law or a policy: 第28条, 第二十八条, 第3章.
_NUMBERED_PART = re.compile(
    r"第\s*([0-9]{1,4}|[零〇一二两三四五六七八九十百千]{1,8})\s*([条章节款项编])"
)


def numbered_part_forms(text: str) -> list[str]:
    """The other way of writing each numbered part the text names: 第28条 for 第二十八条 and
    第二十八条 for 第28条 (documents and questions use either; neither form holds a word of
    the other)."""
    out: list[str] = []
    for m in _NUMBERED_PART.finditer(text):
        number, unit = m.group(1), m.group(2)
        value = han_number(number)
        if value is None or value == 0:
            continue
        other = chinese_numeral(value) if number.isdigit() else str(value)
        out.append(f"第{other}{unit}")
    return list(dict.fromkeys(out))


_CN_VALUES = {c: i for i, c in enumerate(_CN_DIGITS)} | {"〇": 0, "两": 2}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}


def han_quantity_in(numeral: str, text: str) -> bool:
    """Whether a Chinese numeral occurs in the text as a quantity (not inside a larger
    numeral, nor as a clause number)."""
    body = _ORDINAL_REF.sub(" ", text)
    return any(m.group(0) == numeral for m in _HAN_RUN.finditer(body))


def han_number(numeral: str) -> int | None:
    """A Chinese numeral's value, the inverse of `chinese_numeral` (十六 -> 16, 七十五 ->
    75, 一百零五 -> 105, 三 -> 3); digits are read as digits. None if it is no number."""
    if numeral.isdigit():
        return int(numeral)
    total, digit = 0, None
    for ch in numeral:
        if ch in _CN_VALUES:
            digit = _CN_VALUES[ch]
        elif ch in _CN_UNITS:
            total += (1 if digit is None else digit) * _CN_UNITS[ch]
            digit = None
        else:
            return None
    return total + (digit or 0) if numeral else None


def has_han(text: str) -> bool:
    # ASCII text (most English words) cannot hold Han characters: skip the regex.
    return not text.isascii() and bool(_HAN.search(text))


def han_word(text: str) -> bool:
    """Two or more Han characters and nothing else."""
    return not text.isascii() and _HAN_WORD.fullmatch(text) is not None


def _words(text: str, search_mode: bool) -> list[str]:
    return list(_iter_words(text, search_mode))


def _iter_words(text: str, search_mode: bool) -> Iterator[str]:
    """`_words`, one piece at a time: a caller that stops at the first word it looks for
    cuts no more of the text than it read. Traditional Chinese is cut as simplified
    (`core.han_script`): 經理 and 经理 are one word."""
    lowered = fold_han(text.lower())
    yield from _identifiers(lowered)
    # Words of an inflected language other than English are cut to a prefix stem (Russian
    # "новосибирска" -> "новосибирск"); Korean, Japanese kana and unspaced scripts are
    # segmented (core.lang). English and Chinese text is cut as it always was.
    lang = stemmed_language(text)
    for piece in _TOKEN.findall(lowered):
        if needs_segmenting(piece):
            yield from segment(piece, _han_cutter(search_mode))
        elif has_han(piece):
            yield from _han_words(piece, search_mode)
        elif lang:
            yield prefix_stem(piece, lang)
        else:
            yield piece


def _identifiers(lowered: str) -> list[str]:
    """Technical identifiers written in a lower-cased text ("p12.1.2", "utf-8")."""
    return _IDENT.findall(lowered) if _IDENT_JOINT.search(lowered) else []


def iter_index_tokens(text: str) -> Iterator[str]:
    """`index_tokens` as they are cut (the same words, in the same order)."""
    return _iter_words(text, search_mode=True)


def jieba_pieces(text: str) -> list[str]:
    """The pieces of `text` (lower-cased) that `index_tokens` cuts with jieba: every
    character of such a piece is in one of the words it gives."""
    return [p for p in _TOKEN.findall(text.lower()) if not needs_segmenting(p) and has_han(p)]


@lru_cache(maxsize=16384)
def _han_words(piece: str, search_mode: bool) -> tuple[str, ...]:
    # Memoised by piece (a clause between punctuation): the answer step reads the
    # sentences of the passages the search just returned, and they come back for related
    # questions.
    return tuple(w for w in _han_cutter(search_mode)(piece) if w.strip())


def _han_cutter(search_mode: bool) -> Any:
    jb = _jieba()
    return jb.cut_for_search if search_mode else jb.cut


@lru_cache(maxsize=4096)
def tagged_words(text: str) -> tuple[tuple[str, str], ...]:
    """jieba's part-of-speech cut of Han text: (word, tag) in reading order."""
    return tuple((w, f) for w, f in _jieba().tag(text) if w.strip())


def word_frequency(word: str) -> int:
    """How often jieba's dictionary counts the word, read as simplified (0: not in it, a
    guess at an unknown one)."""
    return _jieba().frequency(fold_han(word))


def load_dictionaries() -> None:
    """Load jieba's dictionaries whole now, for a process that will cut much text (they
    are otherwise loaded as the texts cut need them), and the script tables."""
    _jieba().load_all()
    load_script_tables()


def idf_table(text: str) -> dict[str, float]:
    """jieba's IDF table (word -> idf) for words that occur in `text`: only substrings of
    `text` may be looked up in it."""
    return _jieba().idf(text)


def idf_stop_words() -> frozenset[str]:
    """The stop words that go with jieba's IDF table."""
    return _jieba().idf_stop_words


def known_word(word: str) -> bool:
    """Whether jieba's dictionary holds the word (not a guess at an unknown one)."""
    return word_frequency(word) > 0


def index_tokens(text: str) -> list[str]:
    """Tokens to index a passage under (jieba search mode: words and their sub-words)."""
    return list(_index_tokens(text))


@lru_cache(maxsize=16384)
def _index_tokens(text: str) -> tuple[str, ...]:
    # Memoised: the answer step tokenises the sentences of the passages the search just
    # returned, and the same passages come back for related questions.
    return tuple(_words(text, search_mode=True))


def query_terms(text: str) -> list[str]:
    """Distinct content terms of a query, in order, stop words removed."""
    return list(_query_terms(text))


@lru_cache(maxsize=1024)
def _query_terms(text: str) -> tuple[str, ...]:
    # Memoised: one request analyses its question in the keyword store, the rerank, the
    # coverage check, the answer and the conflict check.
    seen: dict[str, None] = {}
    other = stopwords(language(text))  # German, French, Russian ... function words
    for w in _index_tokens(text):
        if w not in STOPWORDS and w not in other and w not in seen:
            seen[w] = None
    return tuple(seen)


# The form of a question, not its content: "how many", "多长时间" ask for a value that the
# answer gives in other words ("12小时"), "据这篇文章" says where to look, and modal verbs
# and contractions ("should", "don't") shape the question. Their words (and jieba's
# sub-words of them) are not matched against passages.
_QUESTION_FORM = re.compile(
    r"多长时间|多少时间|多少钱|多少|多久|多长|多大|多高|多远|多重|多宽|多厚|多深|"
    r"几[年个次天种条项位名岁]|什么时候|何时|哪一?年|哪一?天|哪些|哪个|"
    r"\bhow (?:many|much)\b|"
    # "What is the purpose of X?" asks what X is for: a description of X, which need not
    # say "purpose" (and a passage saying "general purpose" is no answer).
    r"\bwhat (?:is|are|was|were) the (?:purpose|role|function|significance|use)s? of\b",
    re.IGNORECASE,
)
# "What does X contain / include / consist of?" asks for what X holds: the verb that
# closes it is the question's form (a passage saying "containing" is no better answer).
_CONTENT_VERB = re.compile(
    r"^\s*(?:what|which)\b.*\b(contains?|includes?|comprises?|consists? of)\s*[?？.]*\s*$",
    re.IGNORECASE,
)
_SOURCE_WORD_TEXT = """
    据 根据 按照 依照 依据 文章 篇文章 这篇 这本 本文 文中 一文 说法 所述 提到
    according article document documents says say said mention mentions mentioned states
    stated should would could shall so don doesn didn isn aren wasn weren won
"""
SOURCE_WORDS = frozenset(_SOURCE_WORD_TEXT.split())
# Who asks and how, not what about: the asker ("我", "someone") and the verbs that shape a
# request ("can", "need", "要", "想"): "我下周要去成都出差，酒店每晚最多能报多少？" is about
# 成都, 出差, 酒店, 每晚; "How many days off do I get" about days off.
_ASKER_WORD_TEXT = """
    can must might need will want have has had get someone anyone somebody anybody
    我 我们 你 您 要 想 能 如果 需要
"""
_ASKER_WORDS = frozenset(_ASKER_WORD_TEXT.split())


# A number written with thousands separators ("1,200", "12.500"): its digit groups are cut
# as words of their own, and "200" of "GBP 1,200" would match "GBP 200".
_GROUPED_NUMBER = re.compile(r"\d{1,3}(?:[,.]\d{3})+(?:[.,]\d+)?")


# A capital letter after a word names one of its kind ("classe B", "band B", "Type C"):
# a key, not a stray letter ("document's" -> "s"). ("I" is the pronoun.)
_LETTER_KEY = re.compile(r"(?<=[^\W\d_] )([A-HJ-Z])(?![\w'’])")


def content_terms(question: str) -> list[str]:
    """`query_terms` of a question without the words of its form ("how many", "多长时间")
    or of where to look ("according to this article", "据这篇文章"), nor stray letters
    ("document's" -> "s"): the words a passage that answers it should contain."""
    form: set[str] = set()
    for m in _QUESTION_FORM.finditer(question):
        form.update(_index_tokens(m.group(0)))
    verb = _CONTENT_VERB.match(question)
    if verb:
        form.update(_index_tokens(verb.group(1)))
    grouped = _GROUPED_NUMBER.sub(" ", question) if _GROUPED_NUMBER.search(question) else ""
    keys = {m.lower() for m in _LETTER_KEY.findall(question)}
    terms = [
        t
        for t in query_terms(question)
        if t not in form
        and t not in SOURCE_WORDS
        and t not in _ASKER_WORDS
        and not (len(t) == 1 and t.isascii() and t not in keys)
        and not (grouped and t.isdigit() and t not in grouped)
    ]
    # A numbered part asked in one form is written in the other too (第6条 / 第六条).
    for other in numbered_part_forms(question):
        terms += [t for t in query_terms(other) if t not in terms]
    return terms


def char_bigrams(text: str) -> frozenset[str]:
    """Han character bigrams plus Latin words: a tokeniser-free overlap measure.

    Memoised (the rerank, the answer and the conflict check ask for the same passages'
    grams, and the same passages come back query after query); the result is immutable."""
    return _char_bigrams(text)


@lru_cache(maxsize=1024)
def _char_bigrams(text: str) -> frozenset[str]:
    lowered = fold_han(text.lower())
    if lowered.isascii():  # `_TOKEN.findall` cut in C: a passage in ~8 us against ~30
        pieces = lowered.translate(_ASCII_NON_WORD).split()
    else:
        pieces = _TOKEN.findall(lowered)
    lang = stemmed_language(text)
    if lang:  # an inflected language: its words' prefix stems, its function words out
        other = stopwords(lang)
        pieces = [prefix_stem(p, lang) if p.isalpha() else p for p in pieces if p not in other]
    # ASCII text (most English passages) holds no Han and nothing to segment.
    if lowered.isascii() or (
        not has_han(lowered)
        and not (needs_segmenting(lowered) and any(map(needs_segmenting, pieces)))
    ):
        return frozenset(pieces).difference(STOPWORDS)  # the words are the grams
    grams: set[str] = set()
    for piece in pieces:
        if needs_segmenting(piece):  # Korean, kana, unspaced scripts: bigrams
            grams.update(gram_segments(piece))
        elif not has_han(piece):
            if piece not in STOPWORDS:
                grams.add(piece)
        elif len(piece) == 1:
            grams.add(piece)
        else:
            grams.update(map(str.__add__, piece, piece[1:]))
    return frozenset(grams)


def plain_text(text: str) -> bool:
    """Whether a text is cut into plain tokens (no inflected language, kana, Hangul or
    unspaced script), so that `held_in_plain` finds its grams exactly."""
    return not needs_segmenting(text) and not stemmed_language(text)


@dataclass(frozen=True, slots=True)
class GramQuery:
    """A question's grams, split once for all the texts they are looked for in."""

    grams: frozenset[str]
    han_pairs: tuple[str, ...]  # Han bigrams: held when written in the text
    others: tuple[str, ...]  # words, numbers, one Han character: held as whole tokens
    latin: tuple[str, ...]  # the others without a Han character: all a text without Han holds

    @classmethod
    def of(cls, grams: AbstractSet[str]) -> GramQuery:
        pairs = tuple(g for g in grams if len(g) == 2 and has_han(g))
        others = tuple(g for g in grams if g not in pairs)
        return cls(frozenset(grams), pairs, others, tuple(g for g in others if not has_han(g)))


def held_in_plain(query: GramQuery, lowered: str, han: bool = True) -> frozenset[str]:
    """`query.grams & char_bigrams(text)` for a `plain_text` (given in lower case), found
    by looking for the grams in it instead of building its grams (~45 us for a passage of
    1,000 characters, ~12 us looked up). A bigram with a Han character is among the text's
    grams exactly when it is in the text (both its characters are word characters, so they
    sit in one token, which holds Han); any other gram when it is a whole token of the
    text (and no stop word, unless it holds Han), or a two-character piece of a token that
    holds Han ("20" of "2013年"). `han`: False when the caller knows the text has no Han
    character, so no gram with one need be looked for (in a text with a curly quote or a
    dash, each is a scan of the whole text)."""
    if not han:
        return frozenset(g for g in query.latin if g in lowered and _gram_of(g, lowered))
    held = [g for g in query.han_pairs if g in lowered]
    held.extend(g for g in query.others if g in lowered and _gram_of(g, lowered))
    return frozenset(held)


def grams_held(query_grams: AbstractSet[str], texts: Sequence[str]) -> list[frozenset[str]]:
    """`query_grams & char_bigrams(text)` for each text: looked up in plain texts
    (`held_in_plain`), through `char_bigrams` (memoised) in the others."""
    if not query_grams:
        return [frozenset()] * len(texts)
    query = GramQuery.of(query_grams)
    return [
        held_in_plain(query, text.lower())
        if plain_text(text)
        else frozenset(query.grams & char_bigrams(text))
        for text in texts
    ]


def _gram_of(gram: str, lowered: str) -> bool:
    """Whether a gram that is no Han bigram, written in a plain text, is one of the text's
    grams: somewhere a whole token (no stop word, unless it holds Han), or a two-character
    piece of a token that holds Han."""
    as_token = has_han(gram) or gram not in STOPWORDS
    at = lowered.find(gram)
    while at >= 0:
        end = at + len(gram)
        joined_left = at > 0 and _TOKEN.match(lowered, at - 1) is not None
        right = _TOKEN.match(lowered, end)
        if not joined_left and right is None:
            if as_token:
                return True
        elif len(gram) == 2:  # inside a longer token: held when that token holds Han
            start = at
            while start > 0 and _TOKEN.match(lowered, start - 1):
                start -= 1
            if has_han(lowered[start : right.end() if right else end]):
                return True
        at = lowered.find(gram, at + 1)
    return False


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def approx_tokens(text: str) -> int:
    """Token-count proxy when the embedder has no tokenizer: one per Han character, about
    one per 4 Latin characters (BPE-like), so budgets mean the same in both scripts."""
    han = len(_HAN.findall(text))
    return han + (len(text) - han) // 4 + 1


# ---- keyword analysis (both keyword backends: SQLite FTS5 and Elasticsearch) -------------
# English gets what a search engine's English analyzer does: possessives dropped
# ("operator's" -> "operator"), hyphenated words indexed as parts and joined
# ("multi-factor" -> "multi", "factor", "multifactor"), a fuller stop-word list, and
# Porter2 (Snowball English) stems. Chinese goes through jieba as before. The backends
# store these tokens space-joined, so both rank on exactly the same terms.
_POSSESSIVE = re.compile(r"(?<=[a-z])['’]s?\b")
_HYPHENATED = re.compile(r"\b[a-z]+(?:-[a-z]+)+\b")
_EN_STOP_EXTRA = """
    if but such no will would can could should shall may might must about after before all
    any each both more most other some so only own same too very just over under again
    further once here out up down off above below between through during until while because
    against nor also am has have had having doing s t ll re ve d m o y
"""
# Modal and negation words stay searchable in the documents (they are indexed); only a
# query drops them, like every other stop word.
KEYWORD_STOPWORDS = STOPWORDS | frozenset(_EN_STOP_EXTRA.split())


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Porter2 stem of a lower-case Latin word; other tokens unchanged."""
    if not word.isascii() or not word.isalpha() or len(word) < 3:
        return word
    stemmer, lock = snowball("english")
    with lock:
        return str(stemmer.stemWord(word))


def _keyword_analyse(text: str, query: bool) -> list[str]:
    lowered = _POSSESSIVE.sub("", fold_han(text.lower()))
    out: list[str] = _identifiers(lowered)
    out.extend(h.replace("-", "") for h in _HYPHENATED.findall(lowered))
    # Another inflected language (German, French, Russian ...): its prefix stems and its
    # own function words; Korean, kana and unspaced scripts segmented (core.lang).
    lang = stemmed_language(text)
    other = stopwords(lang) if lang else frozenset()
    for piece in _TOKEN.findall(lowered):
        if needs_segmenting(piece):
            out.extend(segment(piece, _jieba().cut_for_search))
        elif has_han(piece):
            if query:  # cut and memoised by `query_terms` already
                out.extend(_han_words(piece, True))
            else:
                out.extend(w for w in _jieba().cut_for_search(piece) if w.strip())
        elif query and (piece in KEYWORD_STOPWORDS or piece in other):
            continue
        elif lang:
            out.append(stem_word(piece, lang))
        else:
            out.append(stem(piece))
    if query:
        out = [t for t in out if t not in KEYWORD_STOPWORDS]
    return out


# How text is cut into keyword tokens (`keyword_tokens`), kept with each keyword index so
# that one built by another version says so: 2 = other languages analysed (core.lang:
# stems, Korean and Japanese segments, bigrams); 3 = "per" votes English; 4 = traditional
# Chinese cut as simplified (core.han_script); 5 = Polish and Swedish told apart and stemmed.
KEYWORD_ANALYSIS_VERSION = "5"


def keyword_tokens(text: str, english: bool = True) -> list[str]:
    """Tokens a keyword index stores for a passage (`english=False`: plain tokens)."""
    return _keyword_analyse(text, query=False) if english else index_tokens(text)


def keyword_query_terms(text: str, english: bool = True) -> list[str]:
    """Distinct terms a keyword index is queried with, stop words removed."""
    if not english:
        return query_terms(text)
    # Memoised: a search analyses its question, and its term statistics each of the
    # question's terms (~30 us a word). The terms come back question after question and
    # are kept longer; a question (up to 2,000 characters) as long as `query_terms` keeps it.
    if len(text) <= _TERM_CHARS:
        return list(_keyword_term_terms(text))
    return list(_keyword_question_terms(text))


def _keyword_terms(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_keyword_analyse(text, query=True)))


_TERM_CHARS = 64
_keyword_term_terms = lru_cache(maxsize=16384)(_keyword_terms)
_keyword_question_terms = lru_cache(maxsize=1024)(_keyword_terms)
