"""What a Chinese question is about: the names jieba tags (张天霖, 西贡商信银行), the
subject that opens the asking clause (马来穿山甲, 羊水栓塞), the word a "what is" question
defines, and its scope words; and whether a text names them, leniently (two characters of
a name, half of a subject)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from core.lang import has_kana
from core.text import han_word, has_han, known_word, tagged_words, word_frequency

# jieba's tags for names: persons, places, organisations, other proper names.
_NAME_TAGS = frozenset({"nr", "ns", "nt", "nz", "nrt", "nrfg"})
# Characters that are words of their own (particles, copulas, pronouns, question words),
# simplified and traditional: jieba's guesses at unknown words often end in one
# ("巴利冈是", "锦地罗不"): cut off the ends of a name, and no one-character part of one.
_FUNCTION_HAN = frozenset(
    "的是了在和与與及或也都就才不会會有被把对對从從向为為以而之其这這那哪谁誰何么麼什吗嗎"
    "呢吧啊着著过過得地要能可将將于於个個们們并並所後"
)
_NAME_JOINS = frozenset("·・-－‧•")  # transliteration dots and hyphens inside a name
_TRIM = "".join(sorted(_NAME_JOINS | _FUNCTION_HAN))
_JOINS = "".join(sorted(_NAME_JOINS))
# jieba's tags of single characters that join no name: numerals, measure words, times,
# places of direction, prepositions, conjunctions, particles, pronouns, adverbs.
_NOT_IN_NAMES = frozenset("mqtfpcurdy")
_NOT_IN_SUBJECTS = _NOT_IN_NAMES | {"v"}  # ... and verbs, in a subject
_HAN_CHARS = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")


def han_names(question: str, within: Sequence[str] = ()) -> list[str]:
    """Names of a Chinese question (persons, places, organisations, other proper names) as
    jieba tags them, each widened over the name-tagged words, single characters and
    transliteration dots beside it ("蒂亚戈·蒙泰罗": jieba tags 蒂 and 亚戈 and 泰罗). jieba's
    tags misfire on ordinary words ("长度" as a place), which `han_name_found` is lenient
    for, and its guesses at unknown names swallow a particle ("巴利冈是"), which is cut off
    again. A one-character verb in such a run is the question's verb ("去上海", "住桃园",
    "齐庄公派栾盈"), not part of a name, unless no name of two characters is left without
    it ("琦善", "魏玩")."""
    if not has_han(question) or has_kana(question):
        return []
    out: list[str] = []
    run: list[_Word] = []
    for word, flag in [*tagged_words(question), ("", "x")]:
        han = bool(_HAN_CHARS.fullmatch(word)) and word not in _FUNCTION_HAN
        tagged = han and flag in _NAME_TAGS
        single = han and len(word) == 1 and flag[:1] not in _NOT_IN_NAMES
        if tagged and _verb_led(word):  # "泡温泉": the verb 泡 and the name 温泉
            run += [_Word(word[0], False, True), _Word(word[1:], True, False)]
            continue
        if tagged or single or (word in _NAME_JOINS and run):
            run.append(_Word(word, tagged, single and flag == "v"))
            continue
        for piece in _name_pieces(run):
            text = _trimmed(piece)
            named = any(w.tagged for w in piece) and char_pairs(text)
            if named and not any(text in n for n in within):
                out.append(text)
        run = []
    return list(dict.fromkeys(out))


def _verb_led(word: str) -> bool:
    """A three-character word jieba tags a name that is a one-character verb before a
    word it knows ("泡温泉": soak in a hot spring), as questions write what they do."""
    return len(word) == 3 and known_word(word[1:]) and tagged_words(word[0]) == ((word[0], "v"),)


@dataclass(frozen=True, slots=True)
class _Word:
    text: str
    tagged: bool  # tagged a name
    verb: bool  # a one-character verb


def _name_pieces(run: list[_Word]) -> list[list[_Word]]:
    """The run cut at its one-character verbs, where a piece of two characters or more is
    left (else the run whole). Not a transliterated name, whose dots join its parts, any
    character one ("让-皮埃尔·巴利冈", "蒂亚戈·蒙泰罗")."""
    if any(w.text in _NAME_JOINS for w in run):
        return [run]
    pieces: list[list[_Word]] = [[]]
    for w in run:
        if w.verb:
            pieces.append([])
        else:
            pieces[-1].append(w)
    kept = [p for p in pieces if len("".join(w.text for w in p).strip(_JOINS)) > 1]
    return kept or [run]


def _trimmed(run: list[_Word]) -> str:
    """The run's text, function characters cut off its ends where jieba guessed them into
    an unknown word ("巴利冈是")."""
    words = [w.text for w in run]
    if words and not known_word(words[0]):
        words[0] = words[0].lstrip(_TRIM)
    if words and not known_word(words[-1]):
        words[-1] = words[-1].rstrip(_TRIM)
    return "".join(words).strip(_JOINS)


def char_pairs(name: str) -> list[str]:
    """The name's two-character pieces."""
    return [name[i : i + 2] for i in range(len(name) - 1) if han_word(name[i : i + 2])]


def _pieces_in(name: str, text: str, share: float) -> bool:
    """The name in the text whole, or at least `share` of its two-character pieces (one at
    the least)."""
    if name in text:
        return True
    pairs = char_pairs(name)
    return sum(p in text for p in pairs) >= max(1, share * len(pairs))


def han_name_found(name: str, text: str) -> bool:
    """Whether the text mentions a name of the question: whole, or two of its characters
    together — half of its two-character pieces for a name of several words, since
    transliterations share pieces ("威廉·狄尔泰" and "伏尔泰" share 尔泰). A document about
    another person or place shares none or few; one that writes the name a little
    differently ("西贡商业信用银行" for "西贡商信银行") shares most. A name of three characters
    jieba does not know shares both or is another ("禾光卡" and "星光卡" share 光卡); one it
    knows shares its first two, which tell it from its siblings ("东北区" and "华北区" share
    only 北区)."""
    if len(name) == 3:
        return name[:2] in text if known_word(name) else _pieces_in(name, text, 1.0)
    return _pieces_in(name, text, 0.0 if known_word(name) else 0.5)


# What a Chinese question asks with, the words that may open its clause before the subject
# (times, numbers, directions, conjunctions, adverbs), and the pronouns that stand for a
# subject named elsewhere ("该书", "此鱼").
_ASKS_HAN = re.compile(
    r"什么|什麼|哪|谁|誰|多少|几|幾|何|吗|嗎|怎|多长|多長|多大|多高|多久|多重|多远|多遠|多深|多宽|多寬"
)
_BEFORE_SUBJECT = frozenset("tmfcdx")
_DEMONSTRATIVES = frozenset("该此这那本其該這")
_WHAT_IS = (["何谓"], ["何謂"], ["何为"], ["何為"])
_COMMON_WORD = 2000  # jieba's dictionary count above which a word is an everyday one


def _noun_word(word: str, flag: str) -> bool:
    if not _HAN_CHARS.fullmatch(word) or _ASKS_HAN.search(word):
        return False
    noun = flag[:1] == "n" or flag in ("j", "s", "vn", "ng")
    # A single character tagged as a verb ends a subject; in a name it may be part of it
    # (jieba tags 让 and 蒙 of 让-皮埃尔 and 蒂亚戈·蒙泰罗 as verbs).
    single = len(word) == 1 and word not in _FUNCTION_HAN and flag[:1] not in _NOT_IN_SUBJECTS
    return noun or single


_Tagged = tuple[tuple[str, str], ...]


@lru_cache(maxsize=1024)
def _clauses(question: str) -> tuple[tuple[_Tagged, ...], _Tagged]:
    """The question's tagged words cut into clauses: those before the one that asks, and
    that one (empty when none asks). One tagging of the whole question serves all, and
    the name, subject and scope checks read the same clauses (memoised)."""
    clauses: list[_Tagged] = []
    clause: list[tuple[str, str]] = []
    for word, flag in [*tagged_words(question), ("，", "x")]:
        if word in "，,；;：:":
            if clause:
                clauses.append(tuple(clause))
            clause = []
        else:
            clause.append((word, flag))
    for i in range(len(clauses) - 1, -1, -1):
        if any(_ASKS_HAN.search(word) for word, _ in clauses[i]):
            return tuple(clauses[:i]), clauses[i]
    return tuple(clauses), ()


def han_subject(question: str) -> str:
    """The subject of a Chinese question: the nouns that open the clause that asks
    ("马来穿山甲的别称是什么？" -> "马来穿山甲", "黄鳍紫鱼体长多少？" -> "黄鳍紫鱼体长"), after a
    time or an adverb; "" where that clause opens otherwise (a preposition, a pronoun, a
    Latin word: "对人体有什么伤害", "该书讲述了什么") or the subject is one character."""
    if not has_han(question) or has_kana(question):
        return ""
    run: list[str] = []
    for word, flag in _clauses(question)[1]:
        if not run and flag[:1] in _BEFORE_SUBJECT and flag != "ns":
            continue
        if not _noun_word(word, flag):
            break
        run.append(word)
    subject = "".join(run)
    # One common word ("专家", "男子", "学校") names a kind of thing, not the one asked about.
    common = len(run) == 1 and word_frequency(subject) >= _COMMON_WORD
    return subject if len(subject) > 1 and subject[0] not in _DEMONSTRATIVES and not common else ""


def han_defined(question: str) -> str:
    """The term a Chinese question asks to define ("什么是暴发户？", "何谓冠夫姓？" ->
    "暴发户", "冠夫姓"), or "". A definition quotes the term itself."""
    if not has_han(question) or has_kana(question):
        return ""
    words = [w for w, _ in _clauses(question)[1]]
    asked = 2 if words[:2] in (["什么", "是"], ["什麼", "是"]) else int(words[:1] in _WHAT_IS)
    term = "".join(words[asked:]).rstrip("？?。呢") if asked else ""
    # "什么是藏霞精舍的宗旨？" asks for the aim, not a definition.
    return term if han_word(term) and "的" not in term else ""


def han_scope(question: str) -> list[str]:
    """What the clauses before the asking one name, in runs of nouns of three characters
    or more ("按南小二系统需求规格说明书的约束条件，项目代码用什么工具…" -> "规格说明书",
    "约束条件"): the document or part of one the question is asked within."""
    runs: list[str] = []
    for clause in _clauses(question)[0]:
        run = ""
        for word, flag in [*clause, ("", "x")]:
            if _noun_word(word, flag):
                run += word
                continue
            if len(run) > 2:
                runs.append(run)
            run = ""
    return runs


def han_subject_found(subject: str, text: str) -> bool:
    """The subject in the text, or at least half of its two-character pieces: the subject
    often runs into what is asked of it ("黄鳍紫鱼体长"), which the text writes apart."""
    return _pieces_in(subject, text, 0.5)


WHICH_HAN = re.compile(r"(?:哪[一个些所家座位种]?|(?<!为)什么|何)\s*$")  # (为什么: why)
