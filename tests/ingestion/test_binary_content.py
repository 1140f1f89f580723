"""Binary bytes behind a text extension (an executable renamed .txt, random bytes named
.md, gzip data named .txt) fail with a reason, like a damaged PDF, instead of being
decoded into CJK-looking garbage that is indexed and matches queries (FINDINGS B9). Text
in any encoding, flaws included, is still read."""

from __future__ import annotations

import gzip
import random
import sys
from pathlib import Path

import pytest

from core.errors import ParseError
from ingestion.parse import ParserPool, parse_bytes, parse_file
from ingestion.parsers._common import decode

TEXT = "第一章 总则\n\nThe zebra protocol uses port 9090 for telemetry, see chapter 2.\n"


def _elf_like() -> bytes:
    """What an executable holds: an ELF header, runs of NULs (padding, tables), machine
    code (random here) and NUL-terminated symbol names."""
    rnd = random.Random(7)
    parts = [b"\x7fELF\x02\x01\x01" + bytes(57)]
    for _ in range(40):
        parts += [rnd.randbytes(200), bytes(rnd.randrange(8, 120)), b"main\x00GLIBC_2.34\x00"]
    return b"".join(parts)


def _interpreter() -> bytes:
    binary = Path(sys.executable).resolve().read_bytes()[:300_000]
    if not binary.startswith(b"\x7fELF"):
        pytest.skip("the interpreter is not an ELF executable here")
    return binary


BINARIES = {
    "elf": _elf_like,
    "interpreter": _interpreter,
    "random": lambda: random.Random(3).randbytes(5000),
    "gzip": lambda: gzip.compress((TEXT * 200).encode("utf-8"), mtime=0),
    "nuls": lambda: bytes(3000),
    "sqlite-like": lambda: b"SQLite format 3\x00" + bytes(4000) + b"\x0d\x00\x00\x00\x01" * 50,
}


@pytest.mark.parametrize("kind", sorted(BINARIES))
@pytest.mark.parametrize("name", ["notes.txt", "notes.md", "notes.log"])
def test_binary_bytes_with_a_text_extension_fail_with_a_reason(kind: str, name: str) -> None:
    with pytest.raises(ParseError, match=r"^binary content, not text \(\d+% of the characters"):
        parse_bytes(BINARIES[kind](), Path(name))


def test_the_reason_reaches_the_caller_from_a_parse_worker(tmp_path: Path) -> None:
    path = tmp_path / "ls.txt"
    path.write_bytes(_elf_like())
    with ParserPool() as pool, pytest.raises(ParseError) as info:
        parse_file(path, max_bytes=10 * 2**20, timeout_s=30, pool=pool)
    assert str(info.value).startswith("binary content, not text (")


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        (TEXT, "utf-8"),
        (TEXT, "utf-16"),  # with a BOM
        (TEXT, "utf-16-le"),  # without one
        (TEXT, "utf-16-be"),
        (TEXT, "gbk"),
        ("第一章 總則\n\n為了保護個人資訊權益，規範個人資訊處理活動。\n", "big5"),
        ("これはテスト文書です。倉庫の管理について説明します。\n", "shift_jis"),
        ("이것은 테스트 문서입니다. 창고 관리에 대해 설명합니다.\n", "euc_kr"),
        ("Это тестовый документ об управлении складом и его правилах.\n", "cp1251"),
    ],
)
def test_text_in_any_encoding_is_still_read(text: str, encoding: str) -> None:
    decoded, _ = decode(text.encode(encoding))
    assert decoded == text
    doc = parse_bytes(text.encode(encoding), Path("notes.txt"))
    assert doc.blocks[-1].text == text.strip().split("\n")[-1]


def test_text_with_a_few_stray_control_characters_is_text() -> None:
    """A stray NUL or bell is a flaw of a text file: the sanitiser removes and counts it."""
    doc = parse_bytes(b"Hello\x00World plain text. Also bell\x07here.\n", Path("nul.txt"))
    assert doc.blocks[0].text == "HelloWorld plain text. Also bellhere."
    log = b"".join(b"\x1b[32mINFO\x1b[0m service started on port %d\n" % i for i in range(300))
    assert "service started on port 299" in parse_bytes(log, Path("run.log")).blocks[-1].text
