"""PII masking: rules from a TOML file (regex + validator + policy), applied to block text
before anything is indexed or logged.

Placeholders. Policy "mask" keeps a little shape, so a reader still sees what was there,
with separators and a +86 prefix kept as written (rules in `pii_rules.toml`):

    mobile     138****5678, 138-****-5678        first 3 and last 4 digits
    landline   ***-****5678                      last 4 digits (area + number identify)
    ID number  110***********1234                first 3 and last 4
    bank card  6222 **** **** 1234               first 4 and last 4, as grouped in the text
    e-mail     a***@example.com                  first character of the local part
    others     [LABEL]                           custom rules, or values too short to shape

Policy "hash": `[LABEL:3fa2c1d0]`, an HMAC-SHA256 of the canonical value (digits only,
e-mail lower-cased) keyed by a secret salt: the same person's number maps to the same token
however it was written, so records can still be joined, and without the salt the token
cannot be reversed by enumerating phone numbers. Policy "keep": the rule does not run.

Precision first: number rules refuse to match inside longer digit runs or next to
decimals/versions, and ID and card numbers must pass their checksums (GB 11643 with a real
birth date; Luhn), so dates, prices, order ids and part numbers stay intact.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import hmac
import re
import tomllib
from collections import Counter
from collections.abc import Callable, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

from core.errors import ConfigError
from core.types import Block

Policy = Literal["mask", "hash", "keep"]
MaskStyle = Literal["partial", "email", "label"]

DEFAULT_RULES = Path(__file__).with_name("pii_rules.toml")
_POLICIES: tuple[Policy, ...] = ("mask", "hash", "keep")
_MASKS: tuple[MaskStyle, ...] = ("partial", "email", "label")
_RULE_KEYS = frozenset(
    {
        "name",
        "label",
        "pattern",
        "validator",
        "policy",
        "mask",
        "keep_head",
        "keep_tail",
        "prefilter",
        "sources",
    }
)
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"
_NOT_ALNUM = re.compile(r"[^0-9A-Za-z]")


def cn_id_checksum(value: str) -> bool:
    """GB 11643-1999 resident ID: 17 digits, a check character (digit or X) and a real
    birth date (the date test rejects most 18-digit numbers that happen to pass mod 11)."""
    if len(value) != 18 or not value[:17].isdigit():
        return False
    total = sum(int(d) * w for d, w in zip(value[:17], _ID_WEIGHTS, strict=True))
    if _ID_CHECK[total % 11] != value[17].upper():
        return False
    try:
        born = dt.date(int(value[6:10]), int(value[10:12]), int(value[12:14]))
    except ValueError:
        return False
    return dt.date(1900, 1, 1) <= born <= dt.date.today()


def luhn(value: str) -> bool:
    """Luhn mod-10 check of a 16-19 digit card number."""
    if not 16 <= len(value) <= 19 or not value.isdigit():
        return False
    total = 0
    for i, ch in enumerate(reversed(value)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


VALIDATORS: dict[str, Callable[[str], bool] | None] = {
    "none": None,
    "cn_id_checksum": cn_id_checksum,
    "luhn": luhn,
}


@dataclasses.dataclass(frozen=True, slots=True)
class PiiRule:
    name: str
    label: str
    pattern: re.Pattern[str]
    validator: Callable[[str], bool] | None = None
    policy: Policy = "mask"
    mask: MaskStyle = "label"
    keep_head: int = 0
    keep_tail: int = 0
    prefilter: re.Pattern[str] | None = None
    sources: tuple[tuple[str, Policy], ...] = ()

    def policy_for(self, source: str) -> Policy:
        """The first source glob that matches wins; else the rule's own policy."""
        for glob, policy in self.sources:
            if fnmatchcase(source, glob):
                return policy
        return self.policy


class PiiMasker:
    """Masks PII in text and blocks by the rules of a TOML file (the packaged default when
    `rules_path` is None). `salt` keys the hash policy and must be kept secret."""

    def __init__(
        self, rules_path: str | Path | None = None, salt: str = "", *, hash_chars: int = 8
    ) -> None:
        self.rules = load_rules(rules_path)
        self._salt = salt.encode("utf-8")
        self._hash_chars = hash_chars
        if not salt and any(
            r.policy == "hash" or any(p == "hash" for _, p in r.sources) for r in self.rules
        ):
            # An unsalted hash of a phone number is reversed by trying all 10^10 of them.
            raise ConfigError("a PII rule uses policy 'hash' but no salt was given")

    def mask_text(self, text: str, source: str = "") -> tuple[str, Counter[str]]:
        """`text` with PII replaced, and how many values each rule replaced."""
        return self._mask(text, self._policies(source))

    def mask_blocks(
        self, blocks: Sequence[Block], source: str
    ) -> tuple[list[Block], dict[str, int]]:
        """Blocks with text, table cells and section paths masked; counts per rule name
        (from the text, which a table's cells are rendered into) for the audit record."""
        policies = self._policies(source)
        total: Counter[str] = Counter()
        paths: dict[tuple[str, ...], tuple[str, ...]] = {}
        out: list[Block] = []
        for block in blocks:
            text, counts = self._mask(block.text, policies)
            total.update(counts)
            rows = tuple(tuple(self._mask(c, policies)[0] for c in row) for row in block.rows)
            # Headings feed every chunk's breadcrumb, so the paths are masked too (once each).
            if block.section_path not in paths:
                paths[block.section_path] = tuple(
                    self._mask(p, policies)[0] for p in block.section_path
                )
            path = paths[block.section_path]
            if counts or rows != block.rows or path != block.section_path:
                # Masking changes the text: where its source lines start is no longer known.
                marks = block.line_marks if text == block.text else ()
                block = dataclasses.replace(
                    block, text=text, rows=rows, section_path=path, line_marks=marks
                )
            out.append(block)
        return out, dict(sorted(total.items()))

    # ------------------------------------------------------------------------ internals

    def _policies(self, source: str) -> list[tuple[PiiRule, Policy]]:
        """The rules that run for this source, with their policy (resolved once per call)."""
        pairs = ((rule, rule.policy_for(source)) for rule in self.rules)
        return [(rule, policy) for rule, policy in pairs if policy != "keep"]

    def _mask(self, text: str, policies: list[tuple[PiiRule, Policy]]) -> tuple[str, Counter[str]]:
        counts: Counter[str] = Counter()
        if not text:
            return text, counts
        # The common block has no digit and no '@': a couple of cheap searches, no rule runs.
        # Checked on the original text: a replacement never creates a value to find.
        present: dict[str, bool] = {}
        for rule, policy in policies:
            if rule.prefilter is not None:
                key = rule.prefilter.pattern
                if key not in present:
                    present[key] = rule.prefilter.search(text) is not None
                if not present[key]:
                    continue
            text, n = self._apply(rule, policy, text)
            if n:
                counts[rule.name] += n
        return text, counts

    def _apply(self, rule: PiiRule, policy: Policy, text: str) -> tuple[str, int]:
        """One pass of one rule over the text."""
        hits = 0
        has_v = "v" in rule.pattern.groupindex

        def replace(m: re.Match[str]) -> str:
            nonlocal hits
            group: int | str = "v" if has_v and m.group("v") is not None else 0
            start, end = m.span(group)
            value = m.group(group)
            canonical = _canonical(value)
            if rule.validator is not None and not rule.validator(canonical):
                return m.group(0)
            hits += 1
            token = self._token(rule, policy, value, canonical)
            whole = m.string
            return whole[m.start() : start] + token + whole[end : m.end()]

        return rule.pattern.sub(replace, text), hits

    def _token(self, rule: PiiRule, policy: Policy, value: str, canonical: str) -> str:
        if policy == "hash":
            message = f"{rule.label}\x1f{canonical}".encode()
            digest = hmac.new(self._salt, message, hashlib.sha256).hexdigest()
            return f"[{rule.label}:{digest[: self._hash_chars]}]"
        if rule.mask == "email" and "@" in value:
            local, _, domain = value.partition("@")
            return f"{local[0]}***@{domain}"
        if rule.mask == "partial":
            shaped = _partial(value, rule.keep_head, rule.keep_tail)
            if shaped is not None:
                return shaped
        return f"[{rule.label}]"


def _canonical(value: str) -> str:
    """The value as compared and hashed: e-mail lower-cased, numbers without separators."""
    if "@" in value:
        return value.lower()
    return _NOT_ALNUM.sub("", value).upper()


def _partial(value: str, head: int, tail: int) -> str | None:
    """Keep the first `head` and last `tail` letters/digits, '*' for the others, separators
    as written; None when that would hide too little (the caller falls back to a label)."""
    positions = [i for i, ch in enumerate(value) if ch.isalnum()]
    hidden = positions[head : len(positions) - tail]
    if len(hidden) < 4:
        return None
    chars = list(value)
    for i in hidden:
        chars[i] = "*"
    return "".join(chars)


# ---------------------------------------------------------------------------- loading


def load_rules(path: str | Path | None = None) -> list[PiiRule]:
    """Rules of a TOML file (None or "": the packaged `pii_rules.toml`), in file order.

    A file with `include_defaults = true` extends the packaged rules: its rules are
    appended, and one named like a default rule replaces it in place.
    """
    file = Path(path) if path else DEFAULT_RULES  # "" too: settings spell "default" so
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"PII rules file {file}: {exc}") from exc
    entries = data.get("rules", [])
    if not isinstance(entries, list):
        raise ConfigError(f"PII rules file {file}: 'rules' must be an array of tables")
    rules = [_rule(entry, file) for entry in entries]
    _check_unique(rules, file)
    if data.get("include_defaults", False) and file.resolve() != DEFAULT_RULES.resolve():
        rules = _extend(load_rules(None), rules)
    return rules


def _extend(defaults: list[PiiRule], extra: list[PiiRule]) -> list[PiiRule]:
    by_name = {r.name: r for r in extra}
    merged = [by_name.pop(r.name, r) for r in defaults]
    return merged + [r for r in extra if r.name in by_name]


def _check_unique(rules: list[PiiRule], file: Path) -> None:
    seen: set[str] = set()
    for rule in rules:
        if rule.name in seen:
            raise ConfigError(f"PII rules file {file}: rule {rule.name!r} is defined twice")
        seen.add(rule.name)


def _rule(entry: Any, file: Path) -> PiiRule:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise ConfigError(f"PII rules file {file}: every rule needs a 'name'")
    name = entry["name"]

    def fail(why: str) -> ConfigError:
        return ConfigError(f"PII rules file {file}, rule {name!r}: {why}")

    unknown = set(entry) - _RULE_KEYS
    if unknown:
        raise fail(f"unknown keys {sorted(unknown)}")
    validator = entry.get("validator", "none")
    if validator not in VALIDATORS:
        raise fail(f"validator must be one of {sorted(VALIDATORS)}")
    sources = entry.get("sources", {})
    if not isinstance(sources, dict):
        raise fail("'sources' must be a table of glob = policy")
    try:
        return PiiRule(
            name=name,
            label=str(entry.get("label", name.upper())),
            pattern=re.compile(entry["pattern"]),
            validator=VALIDATORS[validator],
            policy=_choice(entry.get("policy", "mask"), _POLICIES, "policy", fail),
            mask=_choice(entry.get("mask", "label"), _MASKS, "mask", fail),
            keep_head=int(entry.get("keep_head", 0)),
            keep_tail=int(entry.get("keep_tail", 0)),
            prefilter=re.compile(entry["prefilter"]) if "prefilter" in entry else None,
            sources=tuple(
                (str(g), _choice(p, _POLICIES, "policy", fail)) for g, p in sources.items()
            ),
        )
    except KeyError as exc:
        raise fail(f"missing {exc}") from exc
    except (re.error, TypeError, ValueError) as exc:
        raise fail(str(exc)) from exc


def _choice(
    value: Any, allowed: tuple[str, ...], what: str, fail: Callable[[str], ConfigError]
) -> Any:
    if value not in allowed:
        raise fail(f"{what} must be one of {list(allowed)}, not {value!r}")
    return value
