"""jieba's word cuts, part-of-speech tags and IDF table, with its dictionaries loaded one
first character at a time.

jieba loads its whole prefix dictionary (498k entries: 0.45 s from its own marshal cache),
its tagger parses the 349k-line dictionary file for tags (0.22 s) and jieba.analyse its IDF
file (0.3 s) in every process before the first use: most of a `ragline ask` from the
shell. Every key jieba reads while cutting or tagging a text (the prefixes of the directed
graph, the route's words, the buffered single characters, the search mode's 2- and
3-grams), and every word the entity extractor looks up in the IDF table, is a substring of
that text, so only entries that start with one of the text's characters can be read. Here the
dictionary is kept, once built, as one bucket per first character; before a cut the
buckets of the text's characters not yet loaded are merged into the tokenizer's own
dictionary. A cut therefore sees every entry it could read, and its words and tags are
those of the whole dictionary; a process loads only what its texts need (a question: a
few dozen buckets of 11.7k).

The bucket file is keyed by jieba's version and its dictionary file and lives in the
ragline cache directory (core.cache). Anything unexpected (no writable cache, a damaged
file) loads the whole dictionary as jieba does: the buckets make start-up faster, never
the cuts different.
"""

from __future__ import annotations

import io
import logging
import marshal
import mmap
import os
import struct
import sys
import threading
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from core.cache import cache_key, mark_used, private_dir, prune_stale, write_atomic
from core.pos_viterbi import PosViterbi

log = logging.getLogger("ragline.text")

_FORMAT = "jieba-buckets-3"
# The bucket file: the header's length, the header (format, total, stop words, and each
# bucket's offset and length after the header), then the buckets. A process reads the
# header and maps the rest, so it copies only the buckets its texts need (a marshal of the
# whole 22 MB took ~35 ms at the first cut of every process).
_HEAD = struct.Struct("<Q")


class _Buckets:
    """Marshalled buckets by first character, each taken from the file once."""

    def __init__(self, spans: dict[str, tuple[int, int]], data: bytes | mmap.mmap) -> None:
        self._spans = spans
        self._data = data

    def pop(self, ch: str) -> bytes | None:
        span = self._spans.pop(ch, None)
        return None if span is None else bytes(self._data[span[0] : span[0] + span[1]])

    def __iter__(self) -> Iterator[str]:
        return iter(self._spans)

    def __bool__(self) -> bool:
        return bool(self._spans)


class JiebaWords:
    """jieba's cut, search-mode cut and tagged cut over its default dictionary, and
    jieba.analyse's IDF table."""

    def __init__(self, cache_dir: Path | None) -> None:
        import jieba

        jieba.setLogLevel(logging.WARNING)
        posseg = _import_posseg(jieba)
        self._lock = threading.Lock()
        self._loaded: set[str] = set()
        self._buckets = _Buckets({}, b"")
        words = self

        class Tokenizer(jieba.Tokenizer):
            def cut(self, sentence: str, *args: Any, **kw: Any) -> Any:
                words.prepare(sentence)
                return super().cut(sentence, *args, **kw)

        self._posseg = posseg
        self._decoder: PosViterbi | None = None  # built on the first tagging (~30 ms)
        self._decoder_lock = threading.Lock()

        # Each run is decoded once: the same runs come back sentence after sentence ("年"
        # after a number, an unknown name; 45 % of the runs of 300 CMRC asks).
        @lru_cache(maxsize=8192)
        def decode(run: str) -> tuple[tuple[str, str], ...]:
            return words.decoder().route(run)

        self.decode_cache = decode.cache_info

        class Tagger(posseg.POSTokenizer):  # type: ignore[name-defined]
            def cut(self, sentence: str, HMM: bool = True) -> Any:
                words.prepare(sentence)
                return super().cut(sentence, HMM)

            def _POSTokenizer__cut(self, sentence: str) -> Iterator[Any]:
                # jieba's HMM tagging of a run its dictionary does not cut, with the same
                # path from the faster decoder (core.pos_viterbi).
                tags = decode(sentence)
                begin = done = 0
                for i, (pos, flag) in enumerate(tags):
                    if pos == "B":
                        begin = i
                    elif pos in "ES":
                        yield posseg.pair(sentence[begin if pos == "E" else i : i + 1], flag)
                        done = i + 1
                if done < len(sentence):
                    yield posseg.pair(sentence[done:], tags[done][1])

        self._tokenizer = Tokenizer()
        self._tagger = Tagger.__new__(Tagger)  # its __init__ would parse the whole file
        self._tagger.tokenizer = self._tokenizer
        self._tagger.word_tag_tab = {}
        # jieba.posseg's own functions (cut, lcut) and jieba.analyse (imported after this)
        # tag with this tagger: the module-level one was made without tags (_import_posseg).
        posseg.dt = self._tagger
        self._idf: dict[str, float] = {}
        self.idf_stop_words: frozenset[str] = frozenset()
        self._complete = False
        try:
            if cache_dir is None:
                raise FileNotFoundError("no cache directory")
            total, stop, self._buckets = _buckets(cache_dir)
            self._tokenizer.total = total
            self._tokenizer.initialized = True
            self.idf_stop_words = stop
        except Exception as exc:  # any failure: the whole dictionaries, as jieba loads them
            log.warning("jieba's dictionary buckets not used (%s); loading it whole", exc)
            self._tokenizer.initialize()
            self._tagger.load_word_tag(self._tokenizer.get_dict_file())
            self._idf, self.idf_stop_words = _idf_table()
            self._complete = True

    def decoder(self) -> PosViterbi:
        """The part-of-speech decoder, built when a text is first tagged: a process that
        only cuts (a search, an ingest) never needs it."""
        decoder = self._decoder
        if decoder is None:
            with self._decoder_lock:
                if self._decoder is None:
                    p = self._posseg
                    self._decoder = PosViterbi(p.char_state_tab_P, p.start_P, p.trans_P, p.emit_P)
                decoder = self._decoder
        return decoder

    def prepare(self, text: str) -> None:
        """Load the dictionary entries a cut of `text` can read."""
        if self._complete:
            return
        missing = set(text)
        missing.difference_update(self._loaded)
        if missing:
            self._load(missing)

    def load_all(self) -> None:
        """Load every bucket now (~0.6 s), and build the tagging decoder: a process that
        will cut and tag much text (a server) then pays nothing per cut."""
        if not self._complete:
            self._load(set(self._buckets))
        self.decoder()

    def _load(self, missing: set[str]) -> None:
        with self._lock:
            missing.difference_update(self._loaded)
            freq, tags = self._tokenizer.FREQ, self._tagger.word_tag_tab
            for ch in missing:
                blob = self._buckets.pop(ch)
                if blob is not None:
                    bucket_freq, bucket_tags, bucket_idf = marshal.loads(blob)
                    freq.update(bucket_freq)
                    tags.update(bucket_tags)
                    self._idf.update(bucket_idf)
            self._loaded |= missing  # only after the entries are in
            self._complete = not self._buckets

    def cut(self, text: str) -> list[str]:
        return self._tokenizer.lcut(text)

    def cut_for_search(self, text: str) -> list[str]:
        return self._tokenizer.lcut_for_search(text)

    def tag(self, text: str) -> list[tuple[str, str]]:
        return [(p.word, p.flag) for p in self._tagger.cut(text)]

    def idf(self, text: str) -> dict[str, float]:
        """jieba.analyse's IDF table (word -> idf), holding every entry of the words that
        start in `text`: read it for substrings of `text` only."""
        self.prepare(text)
        return self._idf

    def frequency(self, word: str) -> int:
        """jieba's count of the word (0: not in its dictionary)."""
        self.prepare(word)
        return int(self._tokenizer.FREQ.get(word) or 0)


def _import_posseg(jieba: Any) -> Any:
    """jieba.posseg, imported without its module-level tagger parsing the dictionary file
    (0.22 s): that tagger is replaced by JiebaWords' own."""
    if "jieba.posseg" in sys.modules:
        return sys.modules["jieba.posseg"]
    default = jieba.dt
    default.get_dict_file = lambda: io.BytesIO()  # read by POSTokenizer(jieba.dt) at import
    try:
        import jieba.posseg as posseg
    finally:
        del default.get_dict_file
    return posseg


def _idf_table() -> tuple[dict[str, float], frozenset[str]]:
    """jieba.analyse's whole IDF table and its stop words."""
    import jieba.analyse

    tfidf = jieba.analyse.default_tfidf
    return tfidf.idf_freq, frozenset(tfidf.stop_words)


def _buckets(cache_dir: Path) -> tuple[int, frozenset[str], _Buckets]:
    """jieba's dictionary total, the IDF stop words, and the entries by first character,
    each bucket a marshal of (prefix-dictionary entries, tags, IDF entries): read from the
    cache, or built and written."""
    import jieba

    dict_file = Path(jieba.__file__).parent / "dict.txt"
    idf_file = Path(jieba.__file__).parent / "analyse" / "idf.txt"
    key = cache_key(f"{_FORMAT}:{jieba.__version__}", str(dict_file), str(idf_file))
    path = private_dir(cache_dir) / f"jieba-{key}.marshal"
    prune_stale(cache_dir, "jieba-", path.name)
    if path.exists():
        mark_used(path)
        try:
            return _read_buckets(path)  # this user's, 0700 directory
        except (EOFError, ValueError, TypeError, AttributeError, struct.error):
            pass
        log.warning("%s is damaged; building it again", path)
    full = jieba.Tokenizer()  # loaded whole, from jieba's own cache when it has one
    full.initialize()
    grouped: dict[str, tuple[dict[str, int], dict[str, str], dict[str, float]]] = {}

    def bucket(word: str) -> tuple[dict[str, int], dict[str, str], dict[str, float]]:
        return grouped.setdefault(word[0], ({}, {}, {}))

    for word, count in full.FREQ.items():
        bucket(word)[0][word] = count
    with full.get_dict_file() as f:
        for line in f:
            fields = line.strip().decode("utf-8").split(" ")
            if len(fields) == 3:
                bucket(fields[0])[1][fields[0]] = fields[2]
    idf, stop = _idf_table()
    for word, value in idf.items():
        if word:
            bucket(word)[2][word] = value
    blobs = {ch: marshal.dumps(entries) for ch, entries in grouped.items()}
    spans: dict[str, tuple[int, int]] = {}
    at = 0
    for ch, blob in blobs.items():
        spans[ch] = (at, len(blob))
        at += len(blob)
    data = b"".join(blobs.values())
    header = marshal.dumps((_FORMAT, full.total, sorted(stop), spans))
    write_atomic(path, _HEAD.pack(len(header)) + header + data)
    return int(full.total), stop, _Buckets(spans, data)


def _read_buckets(path: Path) -> tuple[int, frozenset[str], _Buckets]:
    """The bucket file's header, and its buckets mapped, not read (ValueError, EOFError,
    TypeError or struct.error when it is not such a file, whole)."""
    with path.open("rb") as f:
        size = os.fstat(f.fileno()).st_size
        (length,) = _HEAD.unpack(f.read(_HEAD.size))
        if _HEAD.size + length > size:
            raise ValueError("header longer than the file")
        form, total, stop, spans = marshal.loads(f.read(length))
        if form != _FORMAT:
            raise ValueError(f"format {form!r}")
        start = _HEAD.size + length
        if start + sum(n for _, n in spans.values()) != size:
            raise ValueError("buckets cut short")
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    shifted = {ch: (start + at, n) for ch, (at, n) in spans.items()}
    return int(total), frozenset(stop), _Buckets(shifted, data)
