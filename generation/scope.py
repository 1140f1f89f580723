"""What a document says of its own scope, which a quote of it must not contradict.

A quote can match a question word for word and still not answer it, because the
document says elsewhere that what is asked lies outside the rule quoted:
- the rule for it is left to another text or a later decision ("境外出差补助标准另行规定",
  "International per diems will be set by Finance"), while the quote gives a sibling's;
- the group asked about is put outside the document's rules ("Interns … are outside the
  scope of this policy", "本手册不适用于加盟门店", "不含加盟店"), and named nowhere else;
- the version asked about is named only as replaced ("This section replaces Section 4 of
  the 2022 handbook", "原《费用报销管理办法》同时废止").
Each check returns the sentence that says so, for the refusal's reason. Texts compared are
`generation.passages.normalise`d. The full patterns are slow over a document's retrieved
text (~5 ms per 40 KB); a literal hint every match holds picks what they read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from core.text import content_terms, has_han
from generation.passages import Candidate, candidates, normalise

# A rule a document leaves to another text or a later decision: "境外出差补助标准另行规定",
# "International per diems will be set by Finance", "Rates for Tier 4: TBD".
_DEFERRED = re.compile(
    r"另行(?:规定|制定|通知|确定|公布|明确|商定|发文)|另有规定|另文规定|待定|[尚暂]未确定|"
    r"\bto be (?:determined|confirmed|agreed|announced|decided)\b|\btb[cd]\b|"
    r"\bwill be (?:set|determined|announced|communicated|confirmed|published|decided)\b|"
    r"\b(?:set|determined|agreed|defined) separately\b|\bnot yet (?:decided|determined|set)\b",
    re.I,
)


# Words every `_DEFERRED` sentence holds: a passage without any is not read further (the
# whole pattern costs ~5 ms over a document's 40 KB; these, ~0.04 ms).
_DEFERRED_HINT = re.compile(
    r"另行|另有规定|另文规定|待定|未确定|to be |tb[cd]|will be |separately|not yet", re.I
)


def left_to_another_rule(question: str, chosen: Sequence[Candidate]) -> str:
    """A sentence of the quoted passages that defers its rule (`_DEFERRED`) and names a
    question word the rest of the quote does not: asked about 境外出差补助, the quote
    gives the 国内 rate and the passage (or the quote itself) says the 境外 one is set
    elsewhere. The sentence, or ""."""
    passages = {c.chunk.content_id: c for c in chosen if _DEFERRED_HINT.search(c.chunk.text)}
    if not passages:
        return ""
    terms = content_terms(question)
    evidence = normalise(" ".join(c.text for c in chosen if not _DEFERRED.search(c.text)))
    for c in passages.values():
        for other in candidates(c.chunk, c.hit_rank):
            if not _DEFERRED.search(other.text):
                continue
            text = normalise(other.text)
            if any(term_in(t, text) and not term_in(t, evidence) for t in terms):
                return other.text
    return ""


# A document that puts a group or a thing outside its rules: "This SLA does not apply to
# beta features", "销售额…不含加盟店", "Interns … are outside the scope of this policy",
# "叉车按《厂内机动车辆管理规定》执行".
_EXCLUDES = re.compile(
    # what follows is left out ("does not apply to beta features", "不适用于加盟门店") ...
    r"(?P<after>\b(?:does not|do not|doesn't|don't) apply to\b|\bexclud(?:es|ing)\b|"
    r"\bexcept(?: for)?\b|\bother than\b|不适用于|不含|不包括|不包含)|"
    # ... or what comes before ("Interns are outside the scope", "叉车按《…》执行")
    r"(?P<before>\b(?:is|are) excluded\b|\boutside (?:the )?scope\b|\bout of scope\b|"
    r"\bnot (?:in|within) (?:the )?scope\b|\bnot eligible\b|\b(?:is|are) not covered by\b|"
    r"\b(?:is|are) (?:covered|governed) by (?:a |the )?separate\b|"
    r"除外|不适用|不属于本|另行管理|[按依参]照?《[^》]{1,40}》(?:的?规定)?执行)"
)
_EXCLUDES_HINT = re.compile(
    r"apply|exclu|except|other than|scope|eligible|separate|not covered|"
    r"不适用|不含|不包|除外|不属于|另行管理|执行"
)


def only_excluded(question: str, evidence: str, same_doc: str) -> str:
    """A question word the quote does not name and its document (normalised `same_doc`)
    names only to put it outside its rules: asked about interns' annual leave, the
    full-time employees' rule is quoted while the policy mentions interns only to say
    they are outside its scope. The sentence that says so, or ""."""
    sentences, rest = _sentences_with(same_doc, _EXCLUDES_HINT, _EXCLUDES)
    if not sentences:
        return ""
    for t in content_terms(question):
        if term_in(t, evidence) or term_in(t, rest):
            continue
        word = re.compile(re.escape(t) if has_han(t) else rf"\b{re.escape(_bare(t))}s?\b")
        for sentence in sentences:
            found = word.search(sentence)
            at = found.start() if found else -1
            for m in _EXCLUDES.finditer(sentence):
                if at >= 0 and (at >= m.end() if m.group("after") else at < m.start()):
                    return sentence.strip()
    return ""


# A document names an old version only to say it is gone: "This section replaces Section 4
# of the 2022 handbook", "原《费用报销管理办法》同时废止".
_REPLACES = re.compile(
    # what follows is replaced ("replaces the 2022 handbook", "取代原办法") ...
    r"(?P<active>\b(?:replaces|replacing|supersedes|superseding|repeals)\b|(?<!被)(?:替代|取代|代替))|"
    # ... or what comes before ("the 2022 handbook is replaced by", "原办法同时废止")
    r"(?P<state>\b(?:replaced|superseded|repealed|withdrawn)\b|\bno longer (?:in force|applies|"
    r"apply|valid)\b|废止|失效|停止执行|不再执行|不再适用|被\S{0,12}?(?:替代|取代|代替))"
)
# Words every `_REPLACES` sentence holds (as `_DEFERRED_HINT` for `_DEFERRED`).
_REPLACES_HINT = re.compile(
    r"replac|supersed|repeal|withdrawn|no longer|废止|替代|取代|代替|失效|停止执行|不再"
)
_SENTENCE_MARKS = ".。;；!?！？"


def only_replaced(
    asked: Sequence[tuple[str, Callable[[str, str], bool]]], evidence: str, same_doc: str
) -> tuple[str, str]:
    """A period, name or identifier the question asks about that the quote and its
    document (normalised) write only in sentences saying it is replaced: asked for the
    2022 handbook's limit, a 2025 handbook that "replaces Section 4 of the 2022 handbook"
    does not give it. (The term, the sentence), or ("", "")."""
    if not asked:
        return "", ""
    quoted = _sentences_with(evidence, _REPLACES_HINT, _REPLACES)
    doc = _sentences_with(same_doc, _REPLACES_HINT, _REPLACES)
    sentences = [*quoted[0], *doc[0]]
    if not sentences:
        return "", ""
    for term, found in asked:
        holding = [s for s in sentences if found(term, s)]
        if (
            holding
            and all(_replaced_in(term.lower(), s) for s in holding)
            and not found(term, quoted[1])
            and not found(term, doc[1])
        ):
            return term, holding[0].strip()
    return "", ""


@lru_cache(maxsize=512)
def _sentences_with(
    text: str, hint: re.Pattern[str], pattern: re.Pattern[str]
) -> tuple[tuple[str, ...], str]:
    """The sentences of the text that `pattern` matches, and the rest of it (`hint`: a
    cheap pattern every match holds, which picks the sentences read). Memoised: a
    document's retrieved text is judged again for every quote."""
    near = {_sentence_at(text, m.start()) for m in hint.finditer(text)}
    spans = sorted(span for span in near if pattern.search(text, *span))
    cuts = [0, *(i for span in spans for i in span), len(text)]
    rest = " ".join(text[a:b] for a, b in zip(cuts[::2], cuts[1::2], strict=True))
    return tuple(text[a:b] for a, b in spans), rest


def _sentence_at(text: str, at: int) -> tuple[int, int]:
    """The bounds of the sentence of `text` holding position `at`."""
    start = max(text.rfind(ch, 0, at) for ch in _SENTENCE_MARKS) + 1
    ends = [e for ch in _SENTENCE_MARKS if (e := text.find(ch, at)) >= 0]
    return start, min(ends) + 1 if ends else len(text)


def _replaced_in(term: str, sentence: str) -> bool:
    """Whether the sentence says the term's thing is replaced: it stands after "replaces"
    or before "is replaced", "废止" (where it is not written as it is asked, any such
    sentence says so)."""
    at = sentence.find(term)
    for m in _REPLACES.finditer(sentence):
        if at < 0 or (at >= m.end() if m.group("active") else at < m.start()):
            return True
    return False


def term_in(term: str, text: str) -> bool:
    """A question term in a normalised text: a Han term as written, a Latin one (plural
    "s" dropped) at the start of a word."""
    if has_han(term):
        return term in text
    return re.search(rf"(?<![a-z0-9]){re.escape(_bare(term))}", text) is not None


def _bare(term: str) -> str:
    """A Latin term without a plural "s", as `_term_in` looks for it."""
    return term[:-1] if len(term) > 3 and term.endswith("s") else term
