"""Languages beyond Chinese and English: which one a text is in, and how its words are cut.

Pure computation, shared by the keyword index, the rerank signals and the answer checks,
so every side cuts a text the same way:

- the script decides where it can: Cyrillic is Russian, Hangul Korean, kana Japanese;
- Latin-script text is told apart by its function words (German "der/die/ist", French
  "le/est/quel", Spanish "el/qué/cuántos", ...) plus letters only one language uses
  (ß, ñ, ¿); no vote, a tie with English, or any Han character leaves it English, so
  English and Chinese text is cut exactly as before;
- words of an inflected language are reduced to a *prefix* stem (the Snowball stem when
  it is a prefix of the word, else the word: German "Häuser" -> "haus" would not be found
  inside "häuser"), so a stem is still found by a substring test in the raw text
  ("новосибирск" in "новосибирска");
- Korean words lose a trailing particle ("서울의" -> "서울") and are compared as
  character bigrams, as a CJK analyser does; Japanese keeps its kanji words (jieba) and
  katakana words whole and drops hiragana runs (particles, inflection); scripts written
  without spaces (Thai, Lao, Khmer, Myanmar) are compared as character bigrams.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections import Counter
from functools import lru_cache
from typing import Any


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Function words per Latin-script language: the votes of the detector, and stop words of a
# query in that language. Only words that are not also English content words ("die",
# "war", "fast" are left out).
_FUNCTION_WORDS = {
    "de": """der das den dem des und ist sind wurde wurden wird werden ein eine einen einem
        einer eines nicht mit von zu zum zur auf für im ins vom bei aus nach über wie wer
        wo wann welche welcher welches welchen warum viele wieviel sich auch es sie er
        hat haben hatte ihre seine sein dass oder als noch nur durch gegen seit bis welchem
        einem keine kein seinem seiner ihrem ihrer dieser diese dieses diesem zwischen unter
        wegen während wurde ihren""",
    "fr": """le la les du des un une et est sont était été dans au aux qui que quel quelle
        quels quelles où quand comment combien pourquoi pour par sur avec ne pas se ce
        cette ces son sa ses leur leurs il elle ils elles été fut depuis entre lequel
        laquelle""",
    "es": """el los las del y es son fue fueron era en que qué quién quiénes cuál cuáles
        cuándo dónde cómo cuánto cuántos cuánta cuántas por para con una unos unas se su
        sus al lo le les como más pero desde entre hasta sobre está están""",
    "it": """il lo gli della delle dei degli del è sono era fu nel nella nei negli che chi
        quale quali quando dove come quanto quanti quanta quante perché per con una uno
        si suo sua suoi sue al alla alle ai agli tra fra di sul sulla sui sugli dal dalla
        dai dagli ha hanno devo deve devono posso può possono vanno""",
    "pt": """os das dos da do ao aos é são foi eram em no na nos nas que quem qual quais
        quando onde como quanto quantos quanta quantas porque para com um uma se seu sua
        seus suas pelo pela pelos pelas entre desde até o tem têm faz pode posso deve devo
        está estão meu minha você num numa""",
    "nl": """het een en zijn werd werden wordt worden van dat wat waar wanneer hoeveel welke
        waarom met voor aan bij uit naar ook niet zich heeft hebben ik heb hoe moet mijn
        geen nodig om""",
    "pl": """się nie jest są że jak czy ile kiedy gdzie dlaczego który która które którego
        której jaki jaka jakie jakiej przez dla od oraz albo lub może mogę muszę można trzeba
        jego jej tego tej tym mój moja moje mojej mojego swój być był była było będzie
        jestem mam mają""",
    "sv": """och är att som inte har hade jag hur när vad vem vilken vilket vilka varför
        mycket många måste ska skall får kan också eller efter mellan hon han vi det ett av
        på för med mitt mina""",
}
_ENGLISH = _set(
    """the of and are was were on to what which who whom when where why how for with by
    from that this it as be been did does do has have had not per"""
)
# ("per" is English too: "price per seat, prices per region" was read as Italian, and
# its words cut by the Italian stemmer: "asi", "enterpris".)
# Question words that make a short question of one language on their own (none of them
# an English word), UTF-8 encoded as `_latin_words` gives words.
_QUESTION_WORDS = frozenset(
    w.encode()
    for w in _set(
        """wann wer wie welche welcher welches welchen welchem warum wieviel wessen wem wen
    combien pourquoi quand quel quelle quels quelles où cuándo dónde cuántos cuántas cuánto
    cuánta qué quién cuál cómo quando quanto quanti quante quale quali dove perché quantos
    quantas onde qual quais hoeveel wanneer waarom welke waar ile kiedy gdzie dlaczego jaki
    jaka jakie który która które hur när vad vem vilken vilket vilka varför"""
    )
)
# Letters that only one of these languages writes.
_LETTER_HINTS = {
    "de": "ßäöü",
    "fr": "çœêèëîïôûù",
    "es": "ñ¿¡",
    "pt": "ãõ",
    "it": "ìò",
    "pl": "ąćęłńśźż",
    "sv": "å",
}
_VOTERS = {lang: _set(words) for lang, words in _FUNCTION_WORDS.items()}
# Stop words of a query already known to be in the language, never votes: function words
# that are also English words (or too short to vote), and the language's other
# determiners, quantifiers, adverbs of degree and prepositions ("sin", "todo", "muy").
_MORE_STOPWORDS = {
    "de": """die war an am um so man also sehr schon alle alles allem allen aller jeder jede
        jedes ohne dann dort hier wenn weil aber sondern denn ob mehr
        ich du wir ihr mich mir dich dir uns euch mein meine meinen meinem meiner dein
        deine unser unsere viel wenig""",
    "fr": """de a à l d en y très déjà aussi tout toute tous toutes sans contre pendant
        chaque autre autres ni non plus ou mais donc car cet après avant sous vers chez
        je j me m moi tu te nous vous mon ma mes notre nos votre vos""",
    "es": """la de a o e un sin muy ya también este esta estos estas ese esa esos esas eso
        esto aquel aquella otro otra otros otras todo toda todos todas ni contra durante
        ante mucho mucha muchos muchas cada aunque según tras mediante
        yo me mi mis tú te nosotros nos nuestro nuestra nuestros nuestras usted""",
    "it": """la da e a i le un in mi ci ho anche molto già questo questa questi queste quello
        quella quelli quelle altro altra altri altre tutto tutta tutti tutte senza contro
        durante ogni ne non più sotto sopra dopo""",
    "pt": """a as de e um muito muita muitos muitas já também este esta estes estas esse
        essa esses essas isso isto aquele aquela outro outra outros outras todo toda todos
        todas sem contra durante cada não nem mais sobre sob após""",
    "nl": "de die wie in op te is er",
    "pl": """i w z a o u do na po za to co ten ta te ich już też bardzo ani bez każdy każda
        wszystkie wszystko moim mnie mi ja ty my wy nas was nasz nasza""",
    "sv": """de den en om i till men sig sin sitt sina under ni mig dig oss er vår våra
        redan också mer mest utan varje alla allt min""",
}
# Question words and function words of the script-decided languages, for query stop words.
_OTHER_STOPWORDS = {
    "ru": _set(
        """в во и на с со по к ко у о об из за от до что кто где когда как какой какая какое
        какие каком какую каких сколько чем чего ли не был была было были это этот эта
        является являются для при под над же или его её их он она они кого каков каково
        какова каковы чей чья чьё чьи свой своя своё свои который которая которое которые"""
    ),
}
_STEMMER_OF = {
    "de": "german",
    "fr": "french",
    "es": "spanish",
    "it": "italian",
    "pt": "portuguese",
    "nl": "dutch",
    "pl": "polish",
    "sv": "swedish",
    "ru": "russian",
    "el": "greek",
    "ar": "arabic",
}

_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_GREEK = re.compile(r"[\u0370-\u03ff]")
_ARABIC = re.compile(r"[\u0600-\u06ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
# Scripts written without spaces between words, compared as character bigrams.
_UNSPACED = re.compile(r"[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]")
# Any of the three above, in one scan of the text.
_SEGMENTED = re.compile("|".join(p.pattern for p in (_HANGUL, _KANA, _UNSPACED)))
# A character of a script `language` tells apart from Latin, in one scan of the text.
_OTHER_SCRIPT = re.compile(
    "|".join(p.pattern for p in (_KANA, _HAN, _HANGUL, _CYRILLIC, _GREEK, _ARABIC))
)
# A run of one script inside a token ("950만" -> "950", "만"; "噴火した" -> "噴火", "した").
_SEGMENT = re.compile(
    r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]+"  # Hangul
    r"|[\u3041-\u309f]+"  # hiragana
    r"|[\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f]+"  # katakana (with ー)
    r"|[\u3400-\u9fff\uf900-\ufaff\u3005]+"  # Han (with 々)
    r"|[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]+"  # Thai, Lao, Myanmar, Khmer
    r"|[^\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f\u3400-\u9fff\uf900-\ufaff\u3005"
    r"\uac00-\ud7af\u1100-\u11ff\u3130-\u318f\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]+"
)
# Korean particles and copulas written onto the end of a word, longest first.
_PARTICLES = tuple(
    sorted(
        _set(
            """에서는 에게서 으로는 으로서 으로써 이라는 입니다 에서 에게 까지 부터 으로 이나 이다
            이며 이고 였다 이었다 라는 라고 보다 처럼 마다 조차 와는 과는 에는 에도 은 는 을 를 의
            에 와 과 이 가 도 로"""
        ),
        key=len,
        reverse=True,
    )
)


def has_kana(text: str) -> bool:
    return not text.isascii() and bool(_KANA.search(text))


def has_hangul(text: str) -> bool:
    return not text.isascii() and bool(_HANGUL.search(text))


def needs_segmenting(piece: str) -> bool:
    """Whether a token holds Hangul, kana or an unspaced script, which `segment` cuts."""
    return not piece.isascii() and _SEGMENTED.search(piece) is not None


@lru_cache(maxsize=8192)
def language(text: str) -> str:
    """The language a text's words are cut by: "zh" (any Han character and no kana),
    "ja", "ko", "ru", "el", "ar", one of the Latin-script languages above, else "en"."""
    if text.isascii() or not _OTHER_SCRIPT.search(text):  # one scan for Latin text
        return _latin_language(text.lower())
    if _KANA.search(text):
        # Japanese writes a quarter or more of its characters in kana; Chinese text may
        # quote a Japanese title (《けいおん!》) and stays Chinese.
        kana = len(_KANA.findall(text))
        if kana * 4 >= kana + len(_HAN.findall(text)):
            return "ja"
    if _HAN.search(text):
        return "zh"
    if _HANGUL.search(text):
        return "ko"
    if _CYRILLIC.search(text):
        return "ru"
    if _GREEK.search(text):
        return "el"
    if _ARABIC.search(text):
        return "ar"
    return _latin_language(text.lower())


_WORD = re.compile(r"[^\W\d_]+")
# Every ASCII byte but a letter becomes a space; bytes of other characters stay.
_ASCII_CUTS = bytes(b if b >= 128 or chr(b).isalpha() else 32 for b in range(256))
_UTF8, _AS_IS = "utf-8", "surrogatepass"


def _latin_words(lowered: str) -> Counter[bytes]:
    """{word: how often}, the words being `_WORD.findall(lowered)` UTF-8 encoded. The text
    is cut at ASCII non-letters in C (a passage in 8 us against 30 for the regex); only a
    piece holding other characters than letters ("don’t", "5½") goes to the regex. A lone
    surrogate (JSON can carry one) is encoded as it is, and cut off as no letter."""
    words = Counter(lowered.encode(_UTF8, _AS_IS).translate(_ASCII_CUTS).split())
    for piece in [p for p in words if not p.isalpha() and not p.decode(_UTF8, _AS_IS).isalpha()]:
        n = words.pop(piece)
        for w in _WORD.findall(piece.decode(_UTF8, _AS_IS)):
            words[w.encode(_UTF8, _AS_IS)] += n
    return words


def _latin_language(lowered: str) -> str:
    words = _latin_words(lowered)
    if not words:
        return "en"
    # Each distinct word's votes, English's too (a passage has hundreds of words).
    counts = dict.fromkeys(_VOTERS, 0)
    english = 0
    voted = _votes_of()
    for w in words.keys() & voted.keys():
        n = words[w]
        for lang in voted[w]:
            if lang:
                counts[lang] += n
            else:
                english += n
    best, votes = "en", 0
    ascii_text = lowered.isascii()  # no hint letter is ASCII
    for lang, n in counts.items():
        if not ascii_text:
            n += sum(c in lowered for c in _LETTER_HINTS.get(lang, ""))
        if n > votes:
            best, votes = lang, n
    # More votes than English has, and two unless the one is a question word and English
    # has none: "Wann starb Goethe?" is German, "pour-over coffee" is not French.
    if votes > english and (votes >= 2 or (english == 0 and _QUESTION_WORDS & words.keys())):
        return best
    return "en"


@lru_cache(maxsize=1)
def _votes_of() -> dict[bytes, tuple[str, ...]]:
    """{word (UTF-8): the languages it votes for}, "" standing for English."""
    out: dict[str, list[str]] = {}
    for w in _ENGLISH:
        out.setdefault(w, []).append("")
    for lang, table in _VOTERS.items():
        for w in table:
            out.setdefault(w, []).append(lang)
    return {w.encode(): tuple(langs) for w, langs in out.items()}


@lru_cache(maxsize=1)
def _all_function_words() -> frozenset[str]:
    tables = [*_VOTERS.values(), *_OTHER_STOPWORDS.values()]
    return frozenset().union(*tables, *(_set(w) for w in _MORE_STOPWORDS.values()))


def function_word(word: str) -> bool:
    """A function word of any of the languages other than English and Chinese (a short
    question's language is often told wrong: "Que rio banha Coimbra?")."""
    return word in _all_function_words()


@lru_cache(maxsize=32)
def stopwords(lang: str) -> frozenset[str]:
    """Function words of a language other than Chinese and English (empty for those)."""
    if lang in _VOTERS:
        return _VOTERS[lang] | _set(_MORE_STOPWORDS.get(lang, ""))
    return _OTHER_STOPWORDS.get(lang, frozenset())


@lru_cache(maxsize=16)
def snowball(algorithm: str) -> tuple[Any, threading.Lock]:
    """One Snowball stemmer per algorithm ("english", "german" ...) and the lock it is used
    under: a snowball stemmer keeps the word being stemmed in its own fields, so two
    threads stemming at once corrupt each other (IndexError under concurrent /v1/ask)."""
    import snowballstemmer

    return snowballstemmer.stemmer(algorithm), threading.Lock()


@lru_cache(maxsize=65536)
def stem_word(word: str, lang: str) -> str:
    """The language's Snowball stem of a lower-case word (German "häuser" -> "haus"), for
    the keyword index, where only stems are compared; the word itself when it is short,
    holds a digit or the language has no stemmer."""
    if len(word) < 4 or not word.isalpha():
        return word
    algorithm = _STEMMER_OF.get(lang)
    if algorithm is None:
        return word
    stemmer, lock = snowball(algorithm)
    with lock:
        stem = str(stemmer.stemWord(word))
    return stem if len(stem) >= 3 else word


def prefix_stem(word: str, lang: str) -> str:
    """The Snowball stem when it is a prefix of the word (so it is still found inside the
    word's other forms by a substring test), else the word."""
    stem = stem_word(word, lang)
    return stem if word.startswith(stem) else word


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) < 3 else [a + b for a, b in itertools.pairwise(run)]


def strip_particle(word: str) -> str:
    """A Korean word without the particle written onto its end ("서울의" -> "서울"), when
    at least two syllables are left."""
    for p in _PARTICLES:
        if word.endswith(p) and len(word) - len(p) >= 2:
            return word[: -len(p)]
    return word


def segment(piece: str, han_words: Any) -> list[str]:
    """Words of a token that holds Hangul, kana or an unspaced script: Korean words
    without their particle, as bigrams; Han runs cut by `han_words` (jieba); katakana
    words whole; hiragana dropped; unspaced scripts as bigrams; anything else (digits,
    Latin) as it is."""
    out: list[str] = []
    for run in _SEGMENT.findall(piece):
        first = run[0]
        if _HANGUL.match(first):
            out.extend(_bigrams(strip_particle(run)))
        elif "\u3041" <= first <= "\u309f":
            continue
        elif _KANA.match(first):
            out.append(run)
        elif _HAN.match(first) or first == "\u3005":
            out.extend(w for w in han_words(run) if w.strip())
        elif _UNSPACED.match(first):
            out.extend(_bigrams(run))
        else:
            out.append(run)
    return out


def gram_segments(piece: str) -> list[str]:
    """Overlap grams of a token that holds Hangul, kana or an unspaced script: character
    bigrams of each run (Korean words without their particle), hiragana dropped."""
    out: list[str] = []
    for run in _SEGMENT.findall(piece):
        first = run[0]
        if "\u3041" <= first <= "\u309f":
            continue
        if _HANGUL.match(first):
            run = strip_particle(run)
        out.extend(_bigrams(run) if len(run) > 1 else [run])
    return out


def stemmed_language(text: str) -> str:
    """The language whose stemmer cuts this text's Latin, Cyrillic, Greek or Arabic words,
    or "" for English and Chinese text (and Japanese or Korean text, whose Latin words are
    English), which keep their own analysis."""
    lang = language(text)
    return lang if lang in _STEMMER_OF else ""
