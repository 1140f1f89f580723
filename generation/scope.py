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
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from core.alternation import by_first_char
from core.han_script import fold_han
from core.lang import has_hangul, stemmed_language
from core.text import GERMAN_ABBREVIATIONS, KEYWORD_STOPWORDS, content_terms, has_han, stem
from core.types import Chunk
from generation.passages import Candidate, candidates, normalise, row_key
from generation.quantities import asked_unit, has_quantity
from generation.ranges import Amount, holding_spans
from generation.yes_no import asks_yes_no

# The kinds of text a rule is sent to: those an exclusion names (`_EXCLUDES`,
# `_OTHER_TEXT`), and those a deferral names too (and a document's code, "COM-07").
_TEXT_KINDS = r"standard|policy|procedure|manual|agreement|terms|rules|regulations?"
_OTHER_TEXT_KIND = (
    rf"(?:guide|{_TEXT_KINDS}|handbook|instructions?|guidelines?|code|supplement|annex|"
    r"appendix|schedule|circular|price list|rate card|[a-z]{2,}-[a-z0-9-]*\d\w*\)?)"
)
# A rule a document leaves to another text or a later decision: "境外出差补助标准另行规定",
# "International per diems will be set by Finance", "Rates for Tier 4: TBD".
_DEFERRED = re.compile(
    r"另行[\u4e00-\u9fff]{1,2}|另有[规規]定|另文[规規]定|待定|[尚暂暫]未[确確]定|"
    r"\bto be (?:determined|confirmed|agreed|announced|decided)\b|\btb[cd]\b|"
    r"\bwill be (?:set|determined|announced|communicated|confirmed|published|decided|"
    r"reviewed|revised|agreed)\b|\b(?:agreed|decided|set|priced) case[- ]by[- ]case\b|"
    r"\b(?:set|determined|agreed|defined) separately\b|"
    # (priced once seen: "written quotation after inspection", "quoted on assessment")
    r"\b(?:quotation|quote|estimate)s? (?:after|following|upon|on) (?:inspection|assessment|"
    r"survey|request)\b|\bquoted (?:after|following|upon|on) (?:inspection|assessment)\b|"
    # (a price given only when asked: "Price on request", "quoted individually", "auf
    # Anfrage", "sur demande", "现场评估后报价")
    r"\b(?:prices?|pricing|rates?|fees?|costs?|charges?) (?:available )?(?:on|upon) "
    r"(?:request|application|enquiry|inquiry)\b|^\s*on (?:request|application)\s*$|"
    r"\bquoted (?:individually|separately|on enquiry|when you enquire)\b|"
    r"\b(?:preis\w* )?auf anfrage\b|\bprix sur demande\b|\b(?:prezz\w+ )?su richiesta\b|"
    r"\bbajo (?:petici[óo]n|consulta)\b|\bna zapytanie\b|[后後]报价|[后後]報價|"
    # (a price kept elsewhere: "prices are displayed at the fuel berth and change weekly")
    r"\b(?:prices?|rates?|fees?|charges?|tariffs?) (?:are|is) (?:displayed|posted|shown|"
    r"published) (?:at|on|in)\b|\b(?:prices?|rates?) (?:change|vary|are updated) "
    r"(?:weekly|daily|monthly|regularly|seasonally)\b|"
    r"\bnot yet (?:been )?(?:decided|determined|set|announced|published|agreed|fixed)\b|"
    r"\b(?:is|are) (?:currently |still )?(?:under review|being (?:reviewed|revised|drafted|"
    r"developed|finali[sz]ed))\b|"
    # German, Spanish, French: "noch offen", "wird gesondert festgelegt", "por determinar",
    # "se fijará", "à définir", "sera fixé"
    r"\bnoch (?:offen|nicht (?:festgelegt|bekannt|entschieden))\b|"
    r"\b(?:wird|werden) (?:noch |gesondert |separat |später |im \w+ \d{4} )*(?:festgelegt|"
    r"geregelt|bekannt ?gegeben|mitgeteilt|veröffentlicht)\b|\bgesondert geregelt\b|"
    r"\bpor (?:determinar|definir|confirmar)\b|\bpendiente de\b|"
    r"\bse (?:determinar|establecer|fijar|definir|comunicar|publicar|anunciar)[aá]n?\b|"
    r"\b[àa] (?:d[ée]terminer|d[ée]finir|confirmer)\b|\bser(?:a|ont) (?:fix|d[ée]termin|"
    r"communiqu|d[ée]fini|publi|annonc|pr[ée]cis)[ée]e?s?\b|"
    # ... or sends it to another text: "is defined in the Global Mobility Tax Guide",
    # "consta do Manual de Contabilidade … e não é repetido nesta norma", "è disciplinato
    # dal Regolamento …", "「クリーンルーム入室手順」に定める", "is geregeld in …"
    rf"\b(?:is|are) (?:defined|set out|set|specified|described|laid down|regulated|governed|"
    rf"determined|handled|priced|listed) (?:exclusively |separately |only )?(?:in|by|under) "
    rf"(?:the |a |each |its |their )?(?:(?!this\b|these\b)[\w&'’\- ]){{0,50}}?"
    rf"\b{_OTHER_TEXT_KIND}\b|\bnot repeated (?:here|in this)\b|"
    r"\bconstam? d[oa]s? (?:(?!nest)[\w\- ]){0,40}?\b(?:manual|norma|procedimento|guia|"
    r"pol[ií]tica|regulamento)\b|\bn[ãa]o (?:[ée]|s[ãa]o) repetid[oa]s?\b|"
    r"\b(?:[ée]|s[ãa]o) (?:regid|regulad|definid|tratad)[oa]s? (?:pel[oa]|n[oa])\b|"
    r"\bser(?:á|ão) (?:definid|estabelecid|fixad|comunicad|publicad|determinad)[oa]s?\b|"
    r"\bainda em elabora[çc][ãa]o\b|"
    # ("se rigen por el documento COM-07", "regelt die Verfahrensanweisung VA-QS-14", "volgt
    # incidentprocedure VGM-03", "以《终端安全基线》为准，本办法不再重复", "총무팀 공지를
    # 참조한다", "определяется Положением об оплате труда")
    r"\bse rigen? por\b|\bno figuran? en (?:esta|este)\b|"
    r"\bregelt (?:die|der|das) \w*(?:anweisung|richtlinie|vereinbarung|ordnung|vorschrift)\b|"
    r"\bvolgt (?:de |het )?\w*(?:procedure|regeling|reglement)\b|"
    r"以[^，,。；《]{0,12}《[^》]{1,40}》[为為]准|不再重复|不再重複|详见《|詳見《|참조한다|참고한다|"
    r"(?:요금표|기준|규정|지침|절차|약관)[을를]? 따(?:른다|릅니다)|"
    r"\bопределя(?:ется|ются) \w*(?:положени|регламент|"
    r"приказ|инструкци)|"
    r"\b(?:[èe]|sono) (?:disciplinat|definit|regolat|stabilit)[oaie] (?:da|dal|dalla|dallo|"
    r"nel|nella|nello)\b|\bseguono (?:il|la) (?:piano|regolamento|manuale|procedura)\b|"
    r"\bda (?:definire|concordare)\b|"
    r"\bsar(?:[àa]|anno) (?:definit|stabilit|comunicat|fissat)[oaie]\b|"
    r"「[^」]{1,40}」(?:[（(][^）)]{0,20}[）)])?(?:に定める|による|に従う|を参照)|別途定める|未定|"
    r"에 따른다|에서 정한다|별도로 정한다|미정|에 따르며|(?:결정|정)하여 공고|"
    r"추후 (?:공지|안내|결정|확정)|별도로? 공지|洽[詢询]|\ba consultar\b|\bsob consulta\b|"
    r"\b(?:is|zijn) (?:geregeld|vastgelegd|beschreven) in\b|\bnader te bepalen\b|"
    r"\b(?:wordt|worden) nader (?:uitgewerkt|geregeld|vastgesteld|bepaald)\b|"
    r"\bрегулиру(?:ется|ются)\b|\bуточняется\b|\bбудет (?:определ|установл)\w*|"
    r"\bустанавлива(?:ется|ются) (?:решением|приказом|положением|распоряжением)\b|"
    # (Portuguese: "seguem a Tabela de Carga Paletizada, publicada em separado"; Chinese
    # "其退費比例另定之", "会员权益另见《会员服务协议》")
    r"\bseguem (?:a|o) (?:tabela|regulamento|manual|procedimento)\b|"
    r"\bpublicad[oa]s? em separado\b|另定之|另[见見]《|另案(?:办理|辦理|处理|處理|规定|規定)|"
    # ("恢復招生日期將於官網公告", "內容於每年6月公告", "收费标准须经物价部门核定后公布",
    # "規費依監理站公告標準": a date or a price to be announced, or set by another body)
    r"[将將][于於][^，,。；;]{0,12}(?:公告|公布|公佈|通知|发布|發布)|"
    r"[于於]每[年月][^，,。；;]{0,8}(?:公告|公布|公佈)|[后後](?:公布|公告|公佈)(?!之日)|"
    r"依(?!本)[^，,。；;]{1,12}公告之?(?:標準|标准)|"
    # ("以本馆公众号通知为准", "借期依出借館規定", "キャンセル規定に準じます": as another
    # notice or body's rules say)
    r"以[^，,。；;《]{0,12}(?:通知|公告|公布|公佈)[为為]准|依(?!本|第)[^，,。；;]{1,12}[规規]定|"
    r"(?:規定|規程|規則|約款|基準)に準(?:じ|ず)|"
    # (Polish, Swedish: "określa odrębny Regulamin", "zostanie ustalona", "regleras i
    # Resepolicyn", "fastställs senare")
    r"\bokreśla(?:ją)? odrębn\w*|\bodrębn\w* (?:regulamin|przepis|zasad|umow)\w*|"
    r"\bzostan(?:ie|ą) (?:ustalon|określon|podan)\w*|\bdo ustalenia\b|\breguluj[eą] odrębn\w*|"
    r"\bregleras (?:i|av|separat)\b|\bbeskrivs i\b|\b(?:fastställs|beslutas|meddelas) senare\b|"
    r"\binte (?:beslutat|fastställt)\b|\b(?:i|enligt) en? separat\b|"
    # (a price quoted case by case, "별도 견적", "別途見積", "另行报价", "sur devis"; a group
    # under its own company's rules, "同社の規程による"; French "relèvent de l'Accord …",
    # "ne sont pas traités ici")
    r"별도 (?:견적|협의|문의)|"
    r"別途(?:見積|協議|相談)|要相談|応相談|"
    # (announced once decided: "이사회 의결 후 공지합니다", "日程確定後にお知らせします")
    r"(?:후|뒤|이후)에? (?:공지|공고|안내)(?:합|한|하겠|할|될|됩)|"
    r"(?:後|次第|改めて|追って)に?(?:お知らせ|ご案内|ご連絡|発表|公表)(?:します|いたします|する|予定)|"
    r"の(?:規程|規則|規定|定め)による|面议|面議|另议|另議|\bsur devis\b|"
    r"\bne (?:sont|est) pas trait[ée]e?s? (?:ici|dans (?:la pr[ée]sente|ce|cette))|"
    r"\brel[èe]ve(?:nt)? d[eu]?\s?(?:l[’']\s?|la |le )?(?:accord|politique|proc[ée]dure|"
    r"r[èe]glement|charte|convention)",
    re.I,
)


@dataclass(frozen=True, slots=True)
class _Hint:
    """A cheap pattern that every match of a costly one holds, in two: the words of
    Latin-script languages, and those of other scripts, read only in a text that is not all
    ASCII (most passages are; one pattern of both kinds scanned them 2-3x slower). Each is
    a list of alternatives as written (`written`), compiled grouped by first character
    (`by_first_char`): the same matches, found 2-5x faster."""

    latin: re.Pattern[str]
    other: re.Pattern[str]
    written: tuple[str, str]

    @classmethod
    def of(cls, latin: str, other: str) -> _Hint:
        return cls(
            re.compile(by_first_char(latin)), re.compile(by_first_char(other)), (latin, other)
        )

    def search(self, text: str) -> bool:
        return self.latin.search(text) is not None or (
            not text.isascii() and self.other.search(text) is not None
        )

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        yield from self.latin.finditer(text)
        if not text.isascii():
            yield from self.other.finditer(text)


# Words every `_DEFERRED` sentence holds: a passage without any is not read further (the
# whole pattern costs ~5 ms over a document's 40 KB; these, ~0.04 ms). It reads a passage
# as written (a sentence's first word capitalised, TBD); the other hints read lower-cased
# text. None is case-blind: such a pattern scans ten times slower.
_DEFERRED_HINT = _Hint.of(
    (
        r"[Tt]o be |tb[cd]|TB[CD]|[Ww]ill be |separately|[Nn]ot yet|[Nn]och |festgelegt|"
        r"geregelt|gegeben|mitgeteilt|d[ée]termin|d[ée]fini|confirm|[Pp]endiente|establecer|"
        r"fijar|comunicar|fix|communiqu|defined (?:in|by)|set out in|set by|specified in|"
        r"described in|laid down|regulated by|governed by|handled by|not repeated|consta d|"
        r"repetid|regid|regulad|definid|tratad|disciplinat|definit|regolat|stabilit|seguono|"
        r"sar[àa] |ser[áã]|em elabora|geregeld|vastgelegd|beschreven|rigen? por|"
        r"no figura|regelt|volgt|handled under|odrębn|zostan|do ustalenia|regleras|beskrivs i|"
        r"senare|beslutat|fastställt|separat\b|devis|trait[ée]|rel[èe]ve|nader |seguem|"
        r"em separado|consult|reviewed|revised|veröffentlicht|saranno|priced in|listed in|"
        r"case[- ]by[- ]case|publicar|anunciar|concordare|ser(?:a|ont) (?:publi|annonc|pr[ée]cis)|"
        r"[Qq]uot(?:ation|e)s? (?:after|following|upon|on) |[Ee]stimates? (?:after|following|upon|"
        r"on) |quoted (?:after|following|upon|on) |"
        r"(?:displayed|posted|shown|published) (?:at|on|in)\b|"
        r"(?:change|vary|updated) (?:weekly|daily|monthly|regularly|seasonally)|"
        r"under review|being (?:review|revis|draft|develop|finali)|"
        r"[Oo]n (?:request|application|enquiry|inquiry)|[Uu]pon (?:request|application|enquiry)|"
        r"quoted (?:individually|separately|on enquiry|when)|[Aa]uf [Aa]nfrage|sur demande|"
        r"su richiesta|[Bb]ajo (?:petici|consulta)|na zapytanie"
    ),
    (
        r"另行|另有|另文|待定|未[确確]定|に定め|による|に従|別途|未定|에 따른|에서 정한|정한다|"
        r"미정|참조|참고|따른다|따릅니다|별도|为准|為準|不再重|详见|詳見|регулир|уточня|будет|определя|"
        r"面[议議]|另[议議]|規程による|規則による|規定による|定めによる|を参照|에 따르며|공고|"
        r"устанавлива|另定|另[见見]|추후|공지|洽[詢询]|안내|相談|お知らせ|ご案内|ご連絡|発表|公表|另案|"
        r"公告|公布|公佈|[将將][于於]|依[^，,。；;]{1,12}[规規]定|に準|[后後]报价|[后後]報價"
    ),
)


def left_to_another_rule(
    question: str, chosen: Sequence[Candidate], retrieved: Sequence[Chunk] = ()
) -> str:
    """A sentence that defers its rule (`_DEFERRED`) and names a question word the rest of
    the quote does not: a sentence of the quoted passages (asked about 境外出差补助, the
    quote gives the 国内 rate and the passage says the 境外 one is set elsewhere), or of
    another passage retrieved from their document holding as many of the question's words
    as the quote and one the quoted passages never write (asked what may be spent per
    guest on alcohol, a sentence on events above £20,000 is quoted; the document says the
    amount per guest "is set by the Gifts & Hospitality Standard"). The sentence, or ""."""
    docs = {c.chunk.doc_id for c in chosen}
    quoted_ids = {c.chunk.content_id for c in chosen}
    ranked = [
        *(c.chunk for c in chosen),
        *(ch for ch in retrieved[:_DOC_PASSAGES] if ch.doc_id in docs),
    ]
    passages = {chunk.content_id: deferring for chunk in ranked if (deferring := _deferrals(chunk))}
    if not passages:
        return ""
    terms = _rule_terms(question)
    # (A quote's clauses that defer are no evidence; its others are: "住宿标准按客户接待
    # 标准执行，须事先另行审批" states the standard.)
    evidence = fold_han(normalise(" ".join(_undeferred_clauses(c.text) for c in chosen)))
    # A row the question names by its key ("classe B") is the one asked: another row of its
    # table leaving its own cells to a later rule ("Artigos controlados | … | a definir")
    # is about that row.
    named = {c.chunk.content_id for c in chosen if c.is_table_row and _named_key(c, terms)}
    quoted = {c.text for c in chosen}
    held = sum(term_in(t, evidence) for t in terms)  # by the quote
    around = ""  # the quoted passages' text, read when needed
    for content_id, deferring in passages.items():
        for other, text in deferring:
            if other.is_table_row and content_id in named and other.text not in quoted:
                continue
            unsaid = [t for t in terms if term_in(t, text) and not term_in(t, evidence)]
            if not unsaid:
                continue
            if content_id in quoted_ids:
                return other.text
            # Another passage's deferral: about what is asked when it holds as many of the
            # question's words as the quote, one of them written nowhere in the quote's own
            # passages ("guest"; not "出差", "住宿", which the quoted table's caption names).
            if sum(term_in(t, text) for t in terms) >= held:
                around = around or fold_han(normalise(" ".join(_passage_text(c) for c in chosen)))
                if any(not term_in(t, around) for t in unsaid):
                    return other.text
    return ""


def deferred_beside(question: str, chosen: Sequence[Candidate], beside: Sequence[Candidate]) -> str:
    """A quote shown beside the answering one (`beside`: the answer's other quotes of its
    document) that leaves what is asked to a later rule and names a question word that
    no quote states otherwise: asked the indoor pool's fee, the pool's row is quoted (its
    fee cell empty) and beside it "실내 수영장의 운영 시간과 이용료는 … 결정하여 공고한다".
    The answer would show that the value is not set. The sentence, or ""."""
    deferring = [c for c in beside if _defers(c.text)]
    if not deferring:
        return ""
    # (A word like "have" names nothing deferred: "the recharge rates have not yet been
    # announced" is not about what lab users "have to" redo.)
    terms = [t for t in _rule_terms(question) if t not in KEYWORD_STOPWORDS]
    evidence = fold_han(
        normalise(" ".join(_undeferred_clauses(c.text) for c in [*chosen, *beside]))
    )
    for c in deferring:
        text = fold_han(_deferring_clauses(normalise(c.text)))
        if any(term_in(t, text) and not term_in(t, evidence) for t in terms):
            return c.text
    return ""


# Retrieved passages of the quote's document read for a deferral: the best ranked.
_DOC_PASSAGES = 10


def _rule_terms(question: str) -> list[str]:
    """The question's words a rule may be about. (One Han character, 人 in 人力资源部,
    names nothing a rule is about.)"""
    return [t for t in content_terms(question) if len(t) > 1 or not has_han(t)]


def _defers(sentence: str) -> bool:
    """Whether the sentence leaves a rule to another text or a later decision (its cheap
    hint first)."""
    return bool(_DEFERRED_HINT.search(sentence) and _DEFERRED.search(sentence))


@lru_cache(maxsize=4096)
def _deferrals(chunk: Chunk) -> tuple[tuple[Candidate, str], ...]:
    """The passage's sentences that defer (`_DEFERRED`), each with its deferring clauses
    (normalised, read as simplified: `fold_han`). Memoised: the passages of a document
    come back question after question, and every judged quote reads those of its
    document's retrieved passages."""
    if not _any_with(chunk.text, _DEFERRED_HINT, _DEFERRED):
        return ()  # (most passages: not cut into sentences at all)
    return tuple(
        (c, fold_han(_deferring_clauses(normalise(c.text))))
        for c in candidates(chunk, 0)
        if _defers(c.text)
    )


def row_left_open(question: str, chosen: Sequence[Candidate]) -> str:
    """A quoted table row with a cell left open ("Altersteilzeit | wird noch festgelegt
    (TBD)", "旗舰版 | 价格: 面议 | 并发数: 不限") answers only through its other cells: where
    no word of the question is in any of them (its key aside), what is asked is the cell
    left open (unless a count is asked and another cell states a number). The row's key
    and that cell, or ""."""
    terms: list[str] = []
    for row in chosen:
        if not row.is_table_row or len(row.cells) < 2:
            continue
        flagged = [(h, v, _left_open(v)) for h, v in row.cells[1:]]
        open_cells = [(h, v) for h, v, left in flagged if left]
        if not open_cells:
            continue
        terms = terms or _rule_terms(question)
        shut = fold_han(normalise(" ".join(f"{h} {v}" for h, v, left in flagged if not left)))
        # (A count asked, "最大何人まで", of a row whose other cells state numbers, "定員:
        # 60名": one of those may be what is asked, not the open price.)
        counted = bool(asked_unit(question)) and any(
            has_quantity(v, question) for _, v, left in flagged if not left
        )
        if not counted and not any(term_in(t, shut) for t in terms):
            return f"{row_key(row.cells)} | {open_cells[0][0]}: {open_cells[0][1]}"
        # A column the question names, while no other cell of the row has the word, whose
        # cell is open ("Internal user: To be confirmed", "學分費: 洽詢", "월 수강료: 추후
        # 공지"), is the cell asked.
        for h, v in open_cells:
            named = [t for t in terms if term_in(t, fold_han(normalise(h)))]
            if any(not term_in(t, shut) for t in named):
                return f"{row_key(row.cells)} | {h}: {v}"
    return ""


def _left_open(value: str) -> bool:
    """Whether a cell leaves its value open: every sentence of it defers ("sob consulta",
    "面议，视规模而定"); remarks that defer one thing and state another ("Cargas acima de 100
    kg seguem a tabela … . Seguro ad valorem de 0,30% …") state that one."""
    if not _DEFERRED.search(value):
        return False
    sentences = [p for p in _SENTENCE_END.split(value) if p.strip()]
    return all(_DEFERRED.search(p) for p in sentences)


def band_left_open(amounts: Sequence[Amount], quoted: Sequence[str]) -> str:
    """The band holding an amount the question gives, where the quote leaves its value to
    a later rule ("80km 초과: 별도 견적", "over 50 seats: to be agreed"): asked about 120 km,
    the rates of the other bands are no answer. The band and what it says, or ""."""
    if not amounts:
        return ""
    for text in quoted:
        lowered = text.lower()
        shown = text if len(text) == len(lowered) else lowered
        for start, end in holding_spans(amounts, lowered):
            value = _BAND_VALUE.match(lowered, end)
            if value and _DEFERRED.search(value.group(1)):
                return shown[start : value.end()].strip(" /|;")
    return ""


# What a band states, up to the next band or cell: "80km 초과: 별도 견적 /".
_BAND_VALUE = re.compile(r"[^\S\n]*[:：|]?\s*((?:(?!\.\s)[^/|;；。\n]){1,40})")


def _passage_text(c: Candidate) -> str:
    chunk = c.chunk
    return f"{chunk.title} {' '.join(chunk.section_path)} {chunk.text}"


def _named_key(row: Candidate, terms: Sequence[str]) -> bool:
    """Whether the question's terms name the row's first cell whole. (Not `row_key`: the
    item after a code, "D401 | 标准展位", may be shared by rows that the code tells apart;
    naming it did not pick out the row in unseen_policies12's N15 and N17.)"""
    key = normalise(row.cells[0][1])
    return any(t == key or (len(t) > 1 and term_in(t, key)) for t in terms)


def _undeferred_clauses(sentence: str) -> str:
    """The clauses of a sentence that `_deferring_clauses` does not hold."""
    if not _DEFERRED.search(sentence):
        return sentence
    return " ".join(c for c, deferring in _clauses(sentence) if not deferring)


# A table row's remarks cell, as a quoted row writes it ("备注: …", "Remarks: …").
_REMARK_CELL = re.compile(
    r"\s*(?:备注|備註|備考|비고|说明|說明|remarks?|notes?|comments?|bemerkungen?|hinweis|"
    r"observa[çc][õo]es|observaciones|remarques?|osservazioni|opmerkingen?)\s*[:：]",
    re.I,
)
_CLAUSES = re.compile(r"[，,；;]|\s\|\s")  # (a row's cells too)


def _remarks(row: str) -> str:
    """A quoted row's remarks cell ("备注: …"), or ""."""
    return next((c for c in row.split(" | ") if _REMARK_CELL.match(c)), "")


def _deferring_clauses(sentence: str) -> str:
    """The clauses of a sentence that defer (with the one before, where a clause is the
    deferral alone: "境外出差补助标准，另行规定"; "终端管理软件等安全要求，以《终端安全基线》为准"):
    "住宿标准按客户接待标准执行，须事先另行审批" leaves the approval to another step, not the
    standard it states."""
    return " ".join(c for c, deferring in _clauses(sentence) if deferring)


def _clauses(sentence: str) -> list[tuple[str, bool]]:
    """The sentence's clauses, each with whether it defers (or names what the next one,
    a deferral alone, defers)."""
    clauses = _CLAUSES.split(sentence)
    out = [(c, _DEFERRED.search(c) is not None) for c in clauses]
    if any(deferring and _REMARK_CELL.match(c) for c, deferring in out) and _left_open(
        _remarks(sentence)
    ):
        # A row's remarks that leave it open ("备注: 待定（装修中）") are about the whole row;
        # another cell that does ("价格: 面议") is about its own column. Remarks that also
        # state something ("Cargas acima de 100 kg seguem a tabela … . Seguro ad valorem de
        # 0,30% …") leave open only what their deferring clauses say (`_left_open`).
        return [(c, True) for c in clauses]
    for i, (clause, deferring) in enumerate(out):
        if i and deferring and len(_DEFERRED.sub("", clause).strip(" 。.:：-")) < 2:
            out[i - 1] = (out[i - 1][0], True)
    return out


# A document that puts a group or a thing outside its rules: "This SLA does not apply to
# beta features", "销售额…不含加盟店", "Interns … are outside the scope of this policy",
# "叉车按《厂内机动车辆管理规定》执行".
_EXCLUDES = re.compile(
    # what follows is left out ("does not apply to beta features", "不适用于加盟门店") ...
    r"(?P<after>\b(?:does not|do not|doesn't|don't) (?:apply to|cover)\b|\bexclud(?:es|ing)\b|"
    r"\bexcluid[oa]s\s*:|\besclus[ie]\s*:|\bexclu[íi]d[oa]s\s*:|\bausgenommen\s*:|"
    r"\bexcept(?: for)?\b|\bother than\b|不[适適]用于|不[适適]用於|不含|不包括|不包含|"
    # (German, Spanish, French: "gilt nicht für", "no se aplica a", "ne s'applique pas")
    r"\bnot covered\s*[:：]|\bexclusions?\s*[:：]|"
    r"\b(?:gilt|gelten|und|aber) nicht f[üu]r\b|\bausgenommen\b|\bmit ausnahme\b|"
    r"\bno (?:se )?aplica a\b|\bexcepto\b|\bsalvo\b|\bne s.applique pas\b|"
    r"\b[àa] l.exception\b|\bsauf\b|"
    # (Italian, Portuguese, Dutch, Russian: "non si applica a", "não se aplica a", "niet van
    # toepassing op", "не распространяется на")
    r"\bnon si applica (?:a|al|alla|ai|alle|agli)\b|\bad eccezione d|\btranne\b|"
    r"\bn[ãa]o se aplica (?:a|ao|à|aos|às)\b|\bexceto\b|\bcom exce[çc][ãa]o d|"
    r"\bniet van toepassing op\b|\bmet uitzondering van\b|\bbehalve\b|"
    r"не распространяется на|за исключением|\bкроме\b|"
    # (Polish, Swedish: "nie dotyczy", "Z Funduszu nie korzystają", "gäller inte för")
    r"\bnie (?:dotyczy|obejmuje|korzystaj[aą])\b|\bz wyjątkiem\b|\bpoza\b|"
    r"\bgäller inte(?: för)?\b|\bomfattar inte\b|\bmed undantag (?:av|för)\b|\butom\b|"
    # (not offered: "本店不提供貓咪造型修剪服務", "暂不提供接送服务", "恕不接受信用卡")
    r"(?<!期间)(?<!期間)(?:暂|暫|目前)?不(?:提供|受理|出售|出租|售|接受))|"
    # ... or what comes before ("Interns are outside the scope", "叉车按《…》执行")
    r"(?P<before>\b(?:is|are) excluded\b|\boutside (?:the |this )?(?:scope|policy)\b|"
    r"\bout of scope\b|\bnot (?:in|within) (?:the )?scope\b|\bnot eligible\b|"
    r"\b(?:is|are) not covered by\b|\b(?:is|are) (?:covered|governed) by (?:a |the )?separate\b|"
    r"\bnot by (?:this|these)\b|"
    # ("Their devices are governed by the Contractor Device Standard": another text's rule)
    r"\b(?:is|are) (?:governed|covered|managed|handled|regulated) (?:by|under) (?:the |a )?"
    rf"(?!this\b|these\b)[\w\s\-']{{0,40}}?(?:{_TEXT_KINDS})\b|"
    r"除外|不[适適]用|不[属屬][于於]本|不[纳納]入|另行管理|"
    # ("寒暑假期间不售": not sold during the holidays)
    r"期[间間]不(?:售|[开開]放|提供|受理|[适適]用)|"
    r"[按依参參]照?《[^》]{1,40}》(?:的?[规規]定)?[执執]行|[执執]行《[^》]{1,40}》|"
    r"\beigene (?:regelung|vereinbarung)\b|\b(?:ist|sind) ausgenommen\b|"
    r"\b(?:[èe]|sono) esclus[oaie]\b|\b(?:[ée]|s[ãa]o|est[ãa]o|ficam?) exclu[íi]d[oa]s?\b|"
    r"\bvalt buiten\b|\b(?:is|zijn) uitgesloten\b|対象外|適用しない|적용하지 않는다|제외한다|"
    r"\bисключен[аоы]?\b|\bне (?:допуска|принима|перевоз)(?:ется|ются)\b|"
    r"\b(?:est[aá]n?|quedan?) excluid[oa]s?\b|\b(?:est|sont) exclue?s?\b|"
    r"\b(?:s[aą]|jest) wyłączon\w*|\bnie s[aą] objęci\b|\bomfattas inte\b|\bär undantagna\b|"
    # (not offered at all: "Shower-only access … is not offered", "Unregistered cards cannot
    # be replaced", "볼머신은 대여하지 않는다", "werden nicht angeboten")
    r"\b(?:is|are) not (?:offered|available|sold|provided|accepted)\b|\bnot offered\b|"
    r"\bn.(?:est|sont) pas propos[ée]e?s?\b|\bno se ofrecen?\b|"
    r"\bcannot be (?:replaced|booked|bought|purchased|hired|rented)\b|"
    r"(?:대여|판매|제공|운영|접수|취급)하지 않(?:는다|습니다)|"
    r"\b(?:wird|werden) nicht angeboten\b|\bnie (?:oferujemy|prowadzimy|wypożyczamy)\b)"
)
_EXCLUDES_HINT = _Hint.of(
    (
        r"apply|exclu|except|other than|scope|outside|eligible|separate|not covered|not by|"
        r"not cover|t cover|"
        r"govern|covered|managed|handled|regulated|nicht f|ausgenommen|ausnahme|eigene|aplica|"
        r"excepto|salvo|applique|exception|sauf|si applica|eccezion|tranne|esclus|exceto|exce[çc]|"
        r"toepassing|uitzondering|behalve|buiten|uitgesloten|nie dotyczy|nie obejmuje|"
        r"nie korzyst|wyjątk|wyłącz|objęci|poza|gäller inte|omfatta|undanta|utom|"
        r"not offer|not avail|not sold|not provid|not accept|cannot be|nicht angeboten|nie oferuj|"
        r"pas propos|no se ofrec|"
        r"nie prowadz|nie wypożycz"
    ),
    (
        r"不[适適]用|不含|不包|除外|不[属屬][于於]|不[纳納]入|另行管理|[执執]行|対象外|適用しない|期[间間]不|"
        r"적용하지|제외|распростран|исключ|кроме|не допуска|не принима|не перевоз|"
        r"하지 않|不提供|不受理|不出售|不出租|不售|不接受"
    ),
)

# A question about the rules' reach, which a sentence putting something outside it answers.
_ASKS_SCOPE = re.compile(
    r"\b(?:apply|applies|applicable|cover(?:s|ed)?|eligible|scope|exclu\w*|exempt\w*|"
    r"gilt|gelten|aplica|s.applique)\b|适用|范围",
    re.I,
)

# The name of the other text an exclusion sends its subject to.
_OTHER_TEXT = re.compile(
    r"\b(?:governed|covered|managed|handled|regulated) (?:by|under) (?:the |a )?"
    rf"(?!this\b|these\b)(?P<name>[\w\s\-']{{0,40}}?(?:{_TEXT_KINDS}))\b|"
    r"(?P<name2>《[^》]{1,40}》)"
)
# A condition an exclusion is made on, which the excluding sentence then states.
_CONDITION = re.compile(
    r"\b(?:if|provided that|unless|as long as|wenn|falls|sofern|si|siempre que|salvo que)\b|"
    r"如果|若|只要|除非"
)


def only_excluded(
    question: str, evidence: str, doc_parts: Sequence[str], quoted: Sequence[str] = ()
) -> tuple[str, str]:
    """A question word the quote does not name and its document (its retrieved text,
    normalised, passage by passage: `doc_parts`) names only to put it outside its rules:
    asked about interns' annual leave, the full-time employees' rule is quoted while the
    policy mentions interns only to say they are outside its scope. A quote that is itself
    such a sentence does not name it, unless the question asks whether the rules apply or
    asks yes or no ("Does the SLA cover beta features?", "实习生可以弹性上班吗？"), or the
    sentence sets a condition ("Scheduled maintenance is excluded … if it is announced at
    least 72 hours in advance"), which answers for it; nor does a quote that is a piece of
    one ("(c) free trial accounts", an item of "This SLA does not apply to: …").
    `quoted`: the quotes (normalised), each also in `evidence`. (The word, the sentence
    that says so), or ("", "")."""
    sentences, rest = _excluding(tuple(doc_parts))
    if not sentences:
        return "", ""
    if not (_ASKS_SCOPE.search(question) or asks_yes_no(question)):
        for piece in quoted:
            if (
                len(piece) >= _PIECE
                and any(piece in sentence for sentence in sentences)
                and not _EXCLUDES.search(piece)  # (the excluding clause: read below)
            ):
                evidence = evidence.replace(piece, " ")
        excluding, unexcluded = _sentences_with(evidence, _EXCLUDES_HINT, _EXCLUDES)
        evidence = " ".join([unexcluded, *(q for q in excluding if _CONDITION.search(q))])
    # (a stem of an inflected language takes its endings: "werkstudent" in "werkstudenten")
    ending = r"\w{0,4}" if stemmed_language(question) else "s?"
    # A Chinese question's terms are cut as simplified (core.han_script): a traditional
    # document is read so too (character for character: the positions stay).
    evidence, rest = fold_han(evidence), fold_han(rest)
    folded = [fold_han(sentence) for sentence in sentences]
    for t in content_terms(question):
        if (
            (len(t) < 2 and has_han(t))
            or t in KEYWORD_STOPWORDS
            or term_in(t, evidence)
            or term_in(t, rest)
        ):
            # (a Han character alone, "算", is a verb or a piece of other words; "have" in
            # "products, which have their own terms" is no thing left out)
            continue
        # (Han and Hangul terms as written: a Korean term is a syllable pair, "볼머" of 볼머신.)
        within = has_han(t) or has_hangul(t)
        word = re.compile(re.escape(t) if within else rf"\b{re.escape(_bare(t))}{ending}\b")
        for sentence, read in zip(sentences, folded, strict=True):
            found = word.search(read)
            at = found.start() if found else -1
            for m in _EXCLUDES.finditer(sentence):
                if at >= 0 and _governs(sentence, m, at):
                    return t, _clip(sentence, min(at, m.start()), max(at, m.end()))
    return "", ""


def excluded_item(question: str, quoted: Candidate) -> str:
    """The quote when it is an item of a list its intro puts outside the rules ("It does
    not apply to:", "以下情形不适用本办法："): asked the uptime of Marketplace add-ons,
    "- third-party add-ons bought through the Brightwater Marketplace …" names them only
    as excluded. Not for a question asking whether the rules apply, or yes or no (the
    exclusion answers it). The intro and the item, or ""."""
    if not quoted.list_item or _ASKS_SCOPE.search(question) or asks_yes_no(question):
        return ""
    before = [c for c in candidates(quoted.chunk, quoted.hit_rank) if c.position < quoted.position]
    for c in reversed(before):
        if c.list_item:
            continue
        intro = normalise(c.text)
        if c.intro and _EXCLUDES_HINT.search(intro) and _EXCLUDES.search(intro):
            return f"{c.text} {quoted.text}"
        return ""
    return ""


_PIECE = 12  # characters a quote must have to be read as a piece of an excluding sentence
_REACH = 130  # characters an exclusion reaches from its phrase ("… ni a trabajadores …")
_CLAUSE_BREAK = re.compile(r"[。；;]")
_CELL_BREAK = re.compile(r"[|。；;]")


def _governs(sentence: str, m: re.Match[str], at: int) -> bool:
    """Whether the exclusion phrase `m` puts the word at `at` outside the rules: the word
    stands on its excluded side, near it, in the same clause. What follows an exclusion
    (不含, excluding) stays in its own table cell: the 不含 of a column "预算金额（不含税）"
    excludes tax, not the amounts under it; what precedes one (按《…》执行 in a row's note)
    may be its row's key, cells before it."""
    listed = _LIST_INTRO.match(sentence, m.end())
    if listed:
        # A list the phrase introduces ("does not apply to: (a) …; (b) …", "下列人员不适用
        # 本办法：（一）…；（三）…"): its items, parted by semicolons, are what is left out.
        between = sentence[listed.end() : at] if at >= listed.end() else None
        return between is not None and len(between) <= _LIST_REACH and "。" not in between
    if m.group("after"):
        between = sentence[m.end() : at] if at >= m.end() else None
        breaks = _CELL_BREAK
    else:
        between = sentence[at : m.start()] if at < m.start() else None
        breaks = _CLAUSE_BREAK
    return between is not None and len(between) <= _REACH and not breaks.search(between)


# What ends a phrase that introduces the list of what is left out: a colon, after the rules'
# name at most ("本办法：", "this policy:").
_LIST_INTRO = re.compile(r"[^\n:：。;；|]{0,12}[:：]")
_LIST_REACH = 400  # characters such a list runs


_CLIP = 160  # characters of a long "sentence" (a table's rows, run together) to show


def _clip(sentence: str, start: int, end: int) -> str:
    """The sentence, or where it is long (a table read as one), the part around `start`
    and `end` (what the refusal's reason must show)."""
    if len(sentence) <= 2 * _CLIP:
        return sentence.strip()
    a, b = max(0, start - _CLIP // 2), min(len(sentence), end + _CLIP // 2)
    return f"{'…' if a else ''}{sentence[a:b].strip()}{'…' if b < len(sentence) else ''}"


@lru_cache(maxsize=64)
def _excluding(parts: tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    """The document's sentences that put something outside its rules, and the rest of it
    less the other texts they send it to, which are no mention of it ("- Contractor Device
    Standard (ITP-09)" in the references), and the sentences about those texts ("The
    Netherlands IT Policy is owned by the Rotterdam Office Manager"). Read passage by
    passage (`parts`), each memoised: the passages of a document come back question after
    question, joined with others (a whole document's text read for every question cost
    ~0.7 ms an answer); and memoised whole, as every quote of a question is judged
    against the same document text."""
    found = [_sentences_with(part, _EXCLUDES_HINT, _EXCLUDES) for part in parts]
    sentences = tuple(s for said, _ in found for s in said)
    rest = " ".join(r for _, r in found)
    names = {
        m.group("name") or m.group("name2") for s in sentences for m in _OTHER_TEXT.finditer(s)
    }
    if names:
        lines = _SENTENCE_END.sub("\n", rest).split("\n")
        rest = "\n".join(line for line in lines if not any(n in line for n in names))
    return sentences, rest


# A document names an old version only to say it is gone: "This section replaces Section 4
# of the 2022 handbook", "原《费用报销管理办法》同时废止".
_REPLACES = re.compile(
    # what follows is replaced ("replaces the 2022 handbook", "取代原办法") ...
    r"(?P<active>\b(?:replaces?|replacing|supersedes?|superseding|repeals?)\b|(?<!被)(?:替代|取代|代替)|"
    # (German, Spanish, French: "ersetzt die Fassung", "sustituye a", "remplace")
    r"\bersetzt (?:die|den|das)\b|\b(?:sustituye|reemplaza|deroga)\b|\b(?:remplace|abroge)\b|"
    # (a label: "Ersetzt: Betriebsvereinbarung Nr. 6/2019", "Supersedes: v2.0")
    r"\b(?:ersetzt|replaces|supersedes|remplace|sustituye|sostituisce|substitui|vervangt)\s*:)|"
    # ... or what comes before ("the 2022 handbook is replaced by", "原办法同时废止")
    r"(?P<state>\b(?:replaced|superseded|repealed|withdrawn)\b|\bno longer (?:in force|applies|"
    r"apply|valid)\b|[废廢]止|失效|停止[执執]行|不再[执執]行|不再[适適]用|被\S{0,12}?(?:替代|取代|代替)|"
    r"\b(?:ersetzt durch|au(?:ß|ss)er kraft)\b|\b(?:sustituid|reemplazad|derogad)[oa]s?\b|"
    r"\b(?:remplac|abrog)[ée]e?s?\b)"
)
# Words every `_REPLACES` sentence holds (as `_DEFERRED_HINT` for `_DEFERRED`). (Both
# patterns read lower-cased text, and are not case-blind: that would slow them tenfold.)
_REPLACES_HINT = _Hint.of(
    (
        r"replac|supersed|repeal|withdrawn|no longer|ersetzt|kraft|sustitu|reemplaz|derog|"
        r"remplac|abrog|sostituisc|substitui|vervangt"
    ),
    (r"[废廢]止|替代|取代|代替|失效|停止[执執]行|不再"),
)
# A sentence ends at these marks ("." only before a space or the end: not in "3.1", "V2.5").
_MARKS = "。;；!?！？"
# (Not after an abbreviation a number or a word follows: "nr. 6/2019", "bzw. der". The dot
# first: the look-behinds are read at dots only, not at every character.)
_SENTENCE_END = re.compile(
    rf"[{_MARKS}]|\."
    + "".join(rf"(?<!\b{a.lower()}\.)" for a in GERMAN_ABBREVIATIONS)
    + r"(?=\s|$)"
)


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


def _any_with(text: str, hint: _Hint, pattern: re.Pattern[str]) -> bool:
    """Whether `pattern` matches near any of `hint`'s matches in `text`."""
    return any(
        pattern.search(text, max(0, m.start() - _AROUND), m.end() + _AROUND)
        for m in hint.finditer(text)
    )


@lru_cache(maxsize=4096)
def _sentences_with(
    text: str, hint: _Hint, pattern: re.Pattern[str]
) -> tuple[tuple[str, ...], str]:
    """The sentences of the text that `pattern` matches, and the rest of it (`hint`: a
    cheap pattern every match holds, which picks the sentences read). Memoised: a
    document's retrieved text is judged again for every quote."""
    found: set[tuple[int, int]] = set()
    for m in hint.finditer(text):
        a, b = _sentence_at(text, m.start())
        if (a, b) in found:
            continue
        # (A match holds its hint: it is looked for near it, not over a long sentence.)
        match = pattern.search(text, max(a, m.start() - _AROUND), min(b, m.end() + _AROUND))
        if match:
            # A list the match introduces runs on past its semicolons ("does not apply to:
            # (a) …; (b) …; (c) free trial accounts."): its items are in the sentence.
            listed = _LIST_INTRO.match(text, match.end())
            found.add((a, _list_end(text, b) if listed and listed.end() <= b else b))
    spans = _merged(sorted(found))
    cuts = [0, *(i for span in spans for i in span), len(text)]
    rest = " ".join(text[a:b] for a, b in zip(cuts[::2], cuts[1::2], strict=True))
    return tuple(text[a:b] for a, b in spans), rest


_AROUND = 80  # characters a pattern's match reaches from its hint


def _list_end(text: str, end: int) -> int:
    """Where a list whose first sentence ends at `end` ends: the first sentence end after
    it that is no semicolon, within `_LIST_REACH` characters."""
    ends = _sentence_ends(text)
    k = bisect_right(ends, end - 1)
    while k + 1 < len(ends) and ends[k + 1] - end <= _LIST_REACH and _semicolon_at(text, ends[k]):
        k += 1
    return ends[k] if k < len(ends) else end


def _semicolon_at(text: str, end: int) -> bool:
    """Whether the sentence ending at `end` (spaces after it included) ends with a
    semicolon."""
    while end > 0 and text[end - 1].isspace():
        end -= 1
    return text[end - 1 : end] in (";", "；")


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans, those that overlap joined."""
    out: list[tuple[int, int]] = []
    for a, b in spans:
        if out and a < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _sentence_at(text: str, at: int) -> tuple[int, int]:
    """The bounds of the sentence of `text` holding position `at`."""
    ends = _sentence_ends(text)
    k = bisect_right(ends, at)
    return (ends[k - 1] if k else 0), (ends[k] if k < len(ends) else len(text))


@lru_cache(maxsize=64)
def _sentence_ends(text: str) -> list[int]:
    """Where the text's sentences end, found once per text (a document's retrieved text
    is read at every hint of every check, for every quote)."""
    return [m.end() for m in _SENTENCE_END.finditer(text)]


def _replaced_in(term: str, sentence: str) -> bool:
    """Whether the sentence says the term's thing is replaced: it stands after "replaces"
    or before "is replaced", "废止" (where it is not written as it is asked, any such
    sentence says so)."""
    at = sentence.find(term)
    for m in _REPLACES.finditer(sentence):
        if at < 0 or (at >= m.end() if m.group("active") else at < m.start()):
            return True
    return False


# A version named by its number: "version 3.1", "Rev. 4", "versión 1.4", "Fassung 2",
# "版本：C/2", "V2.5", "B/3版", "第3版".
_VERSION_WORD = (
    r"(?:\b(?:version|ver\.|rev\.?|revision|edition|release|versi[óo]n|vers[ãa]o|fassung|"
    r"r[ée]vision)|版本号?)\s*[:：]?\s*"
)
_VERSION_ID = r"[a-z]?/?\d+(?:[./]\d+)*"
_VERSION = re.compile(
    rf"{_VERSION_WORD}(?P<named>{_VERSION_ID})(?![a-z0-9/]|\.\d)|"
    r"(?<![a-z0-9./])(?P<v>v\d+(?:\.\d+)+)(?![a-z0-9]|\.\d)|"
    r"(?<![a-z0-9./])(?P<han>[a-z]/\d+|\d+(?:\.\d+)*)\s*版(?!本)|第\s*(?P<nth>\d+)\s*版",
    re.I,
)


def _version_of(m: re.Match[str]) -> str:
    return next(g for g in m.groups() if g is not None)


def asked_versions(question: str) -> list[str]:
    """The versions a question names by number ("Under version 3.1 …", "B/3版中…")."""
    return list(dict.fromkeys(_version_of(m) for m in _VERSION.finditer(question)))


def version_found(version: str, text: str) -> bool:
    """Whether a text names this version as a version (not "3.1" as a clause number)."""
    return any(_version_of(m).lower() == version.lower() for m in _VERSION.finditer(text))


def other_version(versions: Sequence[str], same_doc: str) -> tuple[str, str]:
    """The one version a question asks about, where the quoted document names its own
    version(s) and never this one: asked what version 3.1 said, a policy that is version
    4.2 and does not mention 3.1 does not say. (The version, the sentence naming the
    document's), or ("", "")."""
    if len(versions) != 1 or version_found(versions[0], same_doc):
        return "", ""
    own = _VERSION.search(same_doc)
    if own is None:
        return "", ""
    start, end = _sentence_at(same_doc, own.start())
    return versions[0], same_doc[start:end].strip()


def term_in(term: str, text: str) -> bool:
    """A question term in a normalised text: a Han term as written, a Latin one by its
    stem ("recharged" in "recharge rates") at the start of a word."""
    if has_han(term):
        return term in text
    # (str.find, not a pattern: a look-behind before the stem scans ~40x slower)
    start = _stem(term)
    at = text.find(start)
    while at > 0 and ("0" <= text[at - 1] <= "9" or "a" <= text[at - 1] <= "z"):
        at = text.find(start, at + 1)
    return at >= 0


def _stem(term: str) -> str:
    """What a Latin term's forms start with: its stem as far as the stem spells it
    ("recharg", "kentuck" of kentucki), or the term without a plural "s" where that would
    be too short to tell words apart."""
    cut = stem(term)
    cut = next((cut[:i] for i, (a, b) in enumerate(zip(cut, term, strict=False)) if a != b), cut)
    return cut if len(cut) >= 4 else _bare(term)


def _bare(term: str) -> str:
    """A Latin term without a plural "s", as `_term_in` looks for it."""
    return term[:-1] if len(term) > 3 and term.endswith("s") else term
