"""PII masking: true positives on real-format values, no false positives on ordinary numbers."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from core.errors import ConfigError
from core.types import Block
from ingestion.pii import DEFAULT_RULES, PiiMasker, cn_id_checksum, load_rules, luhn

# ------------------------------------------------------------------ test value makers
# Computed here, independently of ingestion.pii, so the validators are checked against them.


def make_id(first17: str) -> str:
    """Append the GB 11643 check character to 17 digits."""
    weights = [2 ** (17 - i) % 11 for i in range(17)]  # the standard's own definition
    total = sum(int(d) * w for d, w in zip(first17, weights, strict=True))
    return first17 + "10X98765432"[total % 11]


def luhn_digit(partial: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(partial)):
        d = int(ch) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return str((10 - total % 10) % 10)


def make_card(partial: str) -> str:
    return partial + luhn_digit(partial)


def bad_check(number: str) -> str:
    """The same number with a wrong last digit."""
    return number[:-1] + str((int(number[-1]) + 1) % 10)


ID = make_id("11010519900307123")  # born 1990-03-07
CARD = make_card("622202123456789")  # 16 digits, UnionPay-style
CARD19 = make_card("621700123456789012")


@pytest.fixture(scope="module")
def masker() -> PiiMasker:
    return PiiMasker(salt="test-salt")


def masked(m: PiiMasker, text: str) -> str:
    return m.mask_text(text)[0]


# ------------------------------------------------------------------ validators


def test_test_makers_agree_with_published_samples() -> None:
    # The GB 11643 example ID and the well-known Visa test card.
    assert make_id("11010519491231002") == "11010519491231002X"
    assert make_card("411111111111111") == "4111111111111111"


def test_cn_id_checksum() -> None:
    assert cn_id_checksum(ID)
    assert cn_id_checksum("11010519491231002X")
    assert not cn_id_checksum("110105194912310021")  # wrong check character
    assert not cn_id_checksum(make_id("11010519900230123"))  # 30 February
    assert not cn_id_checksum(ID[:-1])


def test_luhn() -> None:
    assert luhn(CARD) and luhn(CARD19)
    assert not luhn(bad_check(CARD))
    assert not luhn(make_card("41111111111111"))  # 15 digits: not a card length here


# ------------------------------------------------------------------ true positives


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("电话13812345678。", "电话138****5678。"),
        ("tel: 138-1234-5678", "tel: 138-****-5678"),
        ("手机 138 1234 5678 联系", "手机 138 **** 5678 联系"),
        ("+86 13912345678", "+86 139****5678"),
        ("+8613912345678", "+86139****5678"),
        ("0086-15912345678", "0086-159****5678"),
        ("(19912345678)", "(199****5678)"),
    ],
)
def test_mobile_numbers(masker: PiiMasker, text: str, expected: str) -> None:
    out, counts = masker.mask_text(text)
    assert out == expected
    assert counts == {"cn_mobile": 1}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("座机 010-62345678", "座机 ***-****5678"),
        ("0755-8765432 转 8", "****-***5432 转 8"),
        ("(021)52345678", "(***)****5678"),
        ("02152345678", "*******5678"),
    ],
)
def test_landlines(masker: PiiMasker, text: str, expected: str) -> None:
    out, counts = masker.mask_text(text)
    assert out == expected
    assert counts == {"cn_landline": 1}


def test_resident_id(masker: PiiMasker) -> None:
    out, counts = masker.mask_text(f"身份证号：{ID}，")
    assert out == f"身份证号：110***********{ID[-4:]}，"
    assert counts == {"cn_id": 1}
    assert masked(masker, "11010519491231002x") == "110***********002x"


@pytest.mark.parametrize(
    "written", [CARD, " ".join(re.findall(".{1,4}", CARD)), "-".join(re.findall(".{1,4}", CARD))]
)
def test_bank_card(masker: PiiMasker, written: str) -> None:
    out, counts = masker.mask_text(f"卡号 {written} 。")
    sep = written[4] if not written[4].isdigit() else ""
    assert out == f"卡号 6222{sep}****{sep}****{sep}{CARD[-4:]} 。"
    assert counts == {"bank_card": 1}


def test_19_digit_card(masker: PiiMasker) -> None:
    assert masked(masker, CARD19) == CARD19[:4] + "*" * 11 + CARD19[-4:]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mail alice.smith@example.com.", "mail a***@example.com."),
        (
            "联系邮箱zhang_san+hr@mail.corp.example.cn，谢谢",
            "联系邮箱z***@mail.corp.example.cn，谢谢",
        ),
        ("<Bob@Example.ORG>", "<B***@Example.ORG>"),
    ],
)
def test_email(masker: PiiMasker, text: str, expected: str) -> None:
    out, counts = masker.mask_text(text)
    assert out == expected
    assert counts == {"email": 1}


def test_counts_per_rule(masker: PiiMasker) -> None:
    text = f"{ID} 13812345678 13987654321 a@b.com 010-62345678 {CARD}"
    out, counts = masker.mask_text(text)
    assert counts == {"cn_id": 1, "cn_mobile": 2, "email": 1, "cn_landline": 1, "bank_card": 1}
    assert not re.search(r"\d{5}", out)


# ------------------------------------------------------------------ no false positives


LUHN_VALID_ORDER_ID = make_card("202301011234567")  # passes Luhn, but starts with 2


@pytest.mark.parametrize(
    "text",
    [
        "日期 20230101 和 2023-01-01、2023/01/01、2023.01.01",
        "价格 ¥1,234,567.89，或 12345678.90 元，或 13812345678.50 元",
        "订单号 2023013812345678 已发货",  # a phone inside a longer digit run
        "流水 861381234567890",  # country code + phone + more digits
        f"订单 {LUHN_VALID_ORDER_ID}",
        f"零件号 {bad_check(CARD)}",  # 16 digits failing Luhn
        f"编号 {bad_check(ID)}",  # 18 digits failing the ID checksum
        f"编号 {ID}7",  # an ID inside a longer run
        "版本 v1.13812345678 与 13812345678.1.2 与 2.0.13812345678",
        "零件 PN-138-1234-5678-01 与 AB13812345678 与 13812345678X",
        "ISBN 978-7-111-12345-6、9787111123456、7-111-12345-X",
        "年份 1990 2000 2023 2024 2025，邮编 100081",
        "时间戳 1700000000 1700000000000 20230101123045",
        "IP 192.168.100.200，UUID 550e8400-e29b-41d4-a716-446655440000",
        "小数 0.13812345678 与 3.1415926535897932",
        "区号样式但非号码 010-1234567（以 1 开头）与 0123456789",
        "npm @scope/pkg、版本 pkg@1.2.3、user@localhost",
    ],
)
def test_ordinary_numbers_are_left_alone(masker: PiiMasker, text: str) -> None:
    out, counts = masker.mask_text(text)
    assert out == text
    assert not counts


# ------------------------------------------------------------------ hash and policies


@pytest.fixture(scope="module")
def hash_rules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default rules with every policy switched to "hash"."""
    text = DEFAULT_RULES.read_text(encoding="utf-8")
    out = tmp_path_factory.mktemp("rules") / "hash.toml"
    out.write_text(text.replace('policy = "mask"', 'policy = "hash"'), encoding="utf-8")
    return out


def test_hash_is_stable_across_formats_and_hides_the_value(hash_rules: Path) -> None:
    m = PiiMasker(hash_rules, salt="s1")
    a = masked(m, "13812345678")
    assert re.fullmatch(r"\[PHONE:[0-9a-f]{8}\]", a)
    assert masked(m, "138-1234-5678") == a
    assert masked(m, "+86 138 1234 5678") == f"+86 {a}"
    assert masked(m, "13812345679") != a
    assert masked(PiiMasker(hash_rules, salt="s2"), "13812345678") != a
    assert "5678" not in a
    assert re.fullmatch(r"\[ID:[0-9a-f]{8}\]", masked(m, ID))


def test_hash_needs_a_salt(hash_rules: Path) -> None:
    with pytest.raises(ConfigError, match="salt"):
        PiiMasker(hash_rules, salt="")


def test_source_overrides_choose_the_policy(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(
        "[[rules]]\n"
        'name = "cn_mobile"\nlabel = "PHONE"\n'
        "pattern = '(?<![0-9])1[3-9][0-9]{9}(?![0-9])'\n"
        'policy = "mask"\n'
        'sources = { "*/public/*" = "keep", "*/hr/*" = "hash" }\n',
        encoding="utf-8",
    )
    m = PiiMasker(rules, salt="x")
    assert m.mask_text("13812345678", "file:///data/public/a.pdf") == ("13812345678", {})
    assert masked(m, "13812345678") == "[PHONE]"
    hashed, counts = m.mask_text("13812345678", "file:///data/hr/b.pdf")
    assert re.fullmatch(r"\[PHONE:[0-9a-f]{8}\]", hashed)
    assert counts == {"cn_mobile": 1}


# ------------------------------------------------------------------ rules files


def test_custom_rules_extend_the_defaults(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(
        "include_defaults = true\n"
        "[[rules]]\n"
        'name = "employee_id"\nlabel = "EMP"\n'
        "pattern = '(?<![A-Z0-9])EMP-[0-9]{6}(?![0-9])'\n"
        "[[rules]]\n"
        'name = "email"\npolicy = "keep"\npattern = "@"\n',
        encoding="utf-8",
    )
    m = PiiMasker(rules)
    assert [r.name for r in m.rules] == [
        "cn_id",
        "bank_card",
        "email",
        "cn_mobile",
        "cn_landline",
        "employee_id",
    ]
    out, counts = m.mask_text("EMP-123456 a@b.com 13812345678")
    assert out == "[EMP] a@b.com 138****5678"
    assert counts == {"employee_id": 1, "cn_mobile": 1}


def test_custom_rules_replace_the_defaults_by_default(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text("[[rules]]\nname = \"x\"\npattern = 'secret'\n", encoding="utf-8")
    assert [r.name for r in load_rules(rules)] == ["x"]
    assert masked(PiiMasker(rules), "a secret 13812345678") == "a [X] 13812345678"


def test_prefilter_skips_a_rule_whose_trigger_is_absent(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(
        "[[rules]]\nname = \"x\"\npattern = 'abc'\nprefilter = '#'\n", encoding="utf-8"
    )
    m = PiiMasker(rules)
    assert masked(m, "abc") == "abc"
    assert masked(m, "abc #") == "[X] #"


def test_partial_mask_falls_back_to_a_label_when_it_would_hide_too_little(
    tmp_path: Path,
) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(
        '[[rules]]\nname = "k"\npattern = \'K[0-9]+\'\nmask = "partial"\n'
        "keep_head = 3\nkeep_tail = 4\n",
        encoding="utf-8",
    )
    m = PiiMasker(rules)
    assert masked(m, "K12345678") == "[K]"  # 9 characters: only 2 would be hidden
    assert masked(m, "K1234567890") == "K12****7890"


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("[[rules]]\nname = \"x\"\npattern = '('\n", "x"),
        ('[[rules]]\nname = "x"\npattern = \'a\'\npolicy = "drop"\n', "policy"),
        ('[[rules]]\nname = "x"\npattern = \'a\'\nvalidator = "md5"\n', "validator"),
        ("[[rules]]\nname = \"x\"\npattern = 'a'\npatern = 'b'\n", "unknown keys"),
        ('[[rules]]\nname = "x"\n', "missing"),
        (
            "[[rules]]\nname = \"x\"\npattern = 'a'\n[[rules]]\nname = \"x\"\npattern = 'b'\n",
            "twice",
        ),
        ("[[rules]]\npattern = 'a'\n", "name"),
        ("rules = [", "rules.toml"),
    ],
)
def test_bad_rules_files_say_what_is_wrong(tmp_path: Path, body: str, why: str) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(body, encoding="utf-8")
    with pytest.raises(ConfigError, match=why):
        load_rules(rules)


# ------------------------------------------------------------------ blocks


def test_mask_blocks_masks_text_cells_and_paths(masker: PiiMasker) -> None:
    plain = Block("paragraph", "Nothing personal here.", section_path=("Intro",))
    rows = (("name", "phone"), ("Zhang", "13812345678"))
    blocks = [
        plain,
        Block("heading", "Contact 13987654321", level=2),
        Block(
            "table",
            "| name | phone |\n|---|---|\n| Zhang | 13812345678 |",
            rows=rows,
            section_path=("Contact 13987654321",),
        ),
    ]
    out, counts = masker.mask_blocks(blocks, "file:///x.md")
    assert out[0] is plain  # untouched blocks are not copied
    assert out[1].text == "Contact 139****4321"
    assert out[2].rows == (("name", "phone"), ("Zhang", "138****5678"))
    assert out[2].text.endswith("| Zhang | 138****5678 |")
    assert out[2].section_path == ("Contact 139****4321",)
    assert counts == {"cn_mobile": 2}  # from the texts; cells are not counted twice
    assert list(counts) == sorted(counts)


# ------------------------------------------------------------------ speed


@pytest.mark.parametrize(
    "text",
    [
        "1" * 200_000,
        "6666 " * 40_000,
        "a" * 200_000 + "@",
        "x@" + "a-" * 100_000,
        "1-" * 100_000,
        "普通的中文段落，没有任何数字。" * 10_000,
    ],
)
def test_pathological_inputs_stay_linear(masker: PiiMasker, text: str) -> None:
    start = time.perf_counter()
    masker.mask_text(text)
    assert time.perf_counter() - start < 2.0  # quadratic backtracking would take minutes
