"""generation.scope, through the answer's check: a quote is refused where its document
says what is asked lies outside the rule quoted (left to another rule, put outside its
scope, replaced)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from gen_cases import make_chunk, make_hits, make_table

from core.types import Hit
from generation.answer import _judge
from generation.answerable import Verdict
from generation.extractive import extract
from generation.passages import candidates


def _verdict(question: str, hits: list[Hit]) -> Verdict:
    """The verdict on the answer's quotes, judged one by one as the answer step does."""
    return _judge(question, "general", extract(question, hits), hits)[0]


@pytest.mark.parametrize(
    ("passage", "missed", "said", "answered"),
    [
        (
            "第七条 国内出差补助标准为每人每天100元，包含伙食补助和市内交通补助。"
            "境外出差补助标准另行规定。",
            "境外出差每天的补助是多少？",
            "境外出差补助标准另行规定",
            "国内出差每天的补助是多少？",
        ),
        (
            "Domestic travel is reimbursed at a per diem of $60. "
            "International per diem rates will be set by Finance each year.",
            "What is the per diem for international travel?",
            "will be set by Finance",
            "What is the per diem for domestic travel?",
        ),
    ],
)
def test_a_rule_the_document_leaves_to_another_text_is_not_answered_by_a_sibling(
    passage: str, missed: str, said: str, answered: str
) -> None:
    """Asked about 境外出差 allowances, the 国内 rate is another rule when the passage says
    the 境外 one is set elsewhere; asked about the 国内 one, the same passage answers."""
    hits = make_hits(make_chunk(passage))
    miss = _verdict(missed, hits)
    assert not miss.covered and said in miss.reason, miss
    assert _verdict(answered, hits).covered


def test_a_version_the_document_names_only_as_replaced_is_not_answered() -> None:
    """A 2025 handbook that replaces the 2022 one does not give the 2022 limit; 原《费用报销
    管理办法》, repealed by the new rules, is not what they state. The version that replaces
    it is answered from the same sentences."""
    handbook = make_chunk(
        "Effective January 1, 2025. This section replaces Section 4 of the 2022 handbook.\n"
        "Tuition assistance: full-time employees may be reimbursed up to $5,250 per year."
    )
    old = _verdict(
        "What was the tuition assistance limit under the 2022 handbook?", make_hits(handbook)
    )
    assert not old.covered and "'2022' only as replaced" in old.reason, old
    new = "What is the tuition assistance limit under the 2025 handbook?"
    assert _verdict(new, make_hits(handbook)).covered
    rules = make_chunk(
        "第九条 费用须在发生之日起60日内提交报销。\n"
        "第十四条 本规定自2025年1月1日起施行，原《费用报销管理办法》同时废止。"
    )
    old = _verdict("原《费用报销管理办法》规定的报销时限是多少天？", make_hits(rules))
    assert not old.covered and "only as replaced" in old.reason, old
    assert _verdict("费用最晚多少天内要提交报销？", make_hits(rules)).covered


@pytest.mark.parametrize(
    ("passages", "missed", "said", "answered"),
    [
        (
            (
                "1. Scope\nThis policy applies to employees on a permanent contract. Interns "
                "are covered by a separate internship agreement and are outside the scope "
                "of this policy.",
                "2. Annual leave\nFull-time employees receive 25 days of annual leave a year.",
            ),
            "How many days of annual leave do interns get?",
            "outside the scope",
            "How many days of annual leave do full-time employees get?",
        ),
        (
            (
                "说明：销售额为含税销售额，包括线上订单，不含加盟店。",
                "华东分公司2024年销售额为12680万元。",
            ),
            "北辰集团加盟店2024年的销售额是多少？",
            "不含加盟店",
            "华东分公司2024年的销售额是多少？",
        ),
    ],
)
def test_a_group_the_document_puts_outside_its_rules_is_not_answered_by_the_rule(
    passages: tuple[str, str], missed: str, said: str, answered: str
) -> None:
    """The policy's rule for full-time employees does not answer for interns when the
    policy says interns are outside its scope; sales that exclude 加盟店 are not theirs.
    Where the excluding sentence is itself quoted, it answers ("实习生不适用弹性工作制，须按
    9:00—18:00 出勤")."""
    chunks = (make_chunk(p, ordinal=i, title="北辰集团员工手册") for i, p in enumerate(passages))
    hits = make_hits(*chunks)
    miss = _verdict(missed, hits)
    assert not miss.covered and said in miss.reason, miss
    assert _verdict(answered, hits).covered
    rule = make_chunk("3. 实习生不适用弹性工作制，须按 9:00—18:00 出勤。")
    assert _verdict("实习生可以弹性上班吗？", make_hits(rule)).covered


@pytest.mark.parametrize(
    ("passage", "missed", "said"),
    [
        (
            "Version 4.2, effective 1 March 2024. This version replaces version 3.1 (June "
            "2021).\n3.1 Pool cars. If private use of a pool car is authorised in an "
            "emergency, private mileage is charged at 18p per mile.",
            "Under version 3.1 of the fleet policy, what was the charge per mile for "
            "emergency private use of a pool car?",
            "'3.1' only as replaced",
        ),
        (
            "本版本替代V2.5（2022年3月发布），V2.5自本版本生效之日起废止。\n"
            "经理（M2–M3）一类城市住宿标准为每晚650元。",
            "V2.5版本里，一类城市经理的住宿标准是多少？",
            "'V2.5' only as replaced",
        ),
        (
            "Código RRHH-POL-11 · Versión 2.1. Esta versión sustituye a la versión 1.4 "
            "(marzo de 2022).\nLa modalidad híbrida recibe una compensación mensual de 25 EUR.",
            "¿Qué compensación mensual fijaba la versión 1.4 para la modalidad híbrida?",
            "'1.4' only as replaced",
        ),
        (
            "文件编号：QP-12 版本：C/2 生效日期：2024年6月15日。\n"
            "C级问题的8D报告须在20个工作日内提交。",
            "B/3版中C级问题的8D报告提交时限是多少？",
            "does not name 'B/3'",
        ),
    ],
)
def test_a_version_asked_by_number_is_the_one_the_quote_must_be(
    passage: str, missed: str, said: str
) -> None:
    """A version asked by its number ("version 3.1", "V2.5", "versión 1.4", "B/3版") is not
    answered by a document that names it only as replaced, in any language, nor by one of
    another version that never names it. "3.1" as a clause number names no version, and
    the full stops inside "V2.5" end no sentence. (Held-out QA pass, session 46.)"""
    miss = _verdict(missed, make_hits(make_chunk(passage)))
    assert not miss.covered and said in miss.reason, miss


def test_a_version_the_document_does_name_is_answered() -> None:
    history = make_chunk(
        "版本：C/2。修订记录：B/3版 2021年发布，规定C级问题的8D报告须在30个工作日内提交。"
    )
    assert _verdict("B/3版中C级问题的8D报告提交时限是多少？", make_hits(history)).covered


@pytest.mark.parametrize(
    ("passage", "missed", "said", "answered"),
    [
        (
            "Diese Betriebsvereinbarung gilt für alle Beschäftigten am Standort Heilbronn. Sie "
            "gilt nicht für Leiharbeitnehmer und für Werkstudenten (für sie gilt eine eigene "
            "Regelung).\nBeschäftigte erhalten 30 Urlaubstage pro Jahr.",
            "Wie viele Urlaubstage bekommen Werkstudenten?",
            "gilt nicht für",
            "Wie viele Urlaubstage bekommen Beschäftigte?",
        ),
        (
            "No se aplica a becarios en prácticas ni al personal de la filial de Lisboa.\n"
            "El personal puede teletrabajar hasta 2 días por semana.",
            "Soy becario en prácticas, ¿cuántos días a la semana puedo teletrabajar?",
            "no se aplica a becarios",
            "¿Cuántos días a la semana puede teletrabajar el personal?",
        ),
        (
            "Standard support includes 99.5% monthly uptime. On-premises deployments of "
            "Halvard Server are covered by a separate Maintenance Agreement.",
            "What uptime does Halvard commit to for our on-premises Halvard Server installation?",
            "covered by a separate",
            "What monthly uptime does Standard support include?",
        ),
        # (the twenty-second held-out pass, session 54: a thing not offered at all)
        (
            "Lost or stolen cards. A registered smartcard can be replaced for £10.00. "
            "Unregistered cards cannot be replaced.",
            "My unregistered smartcard was stolen. What's the replacement fee?",
            "cannot be replaced",
            "My registered smartcard was stolen. What's the replacement fee?",
        ),
        (
            "貓咪洗澡（含剪指甲）收費NT$1,200。本店不提供貓咪造型修剪服務。",
            "想幫我的貓咪做造型修剪，價格是多少？",
            "不提供",
            "貓咪洗澡的價格是多少？",
        ),
        (
            "接受現金及LINE Pay，恕不接受信用卡。修改費用超過1,000元者，需先付訂金50%。",
            "刷信用卡付款要加多少手續費？",
            "不接受",
            "修改費用超過1,000元要先付多少訂金？",
        ),
        (
            "① 라켓 대여료는 1자루 1회 3,000원이다. ② 볼머신은 대여하지 않는다.",
            "볼머신을 빌리려면 요금이 얼마인가요?",
            "대여하지 않는다",
            "라켓 대여료는 얼마인가요?",
        ),
    ],
)
def test_an_excluded_group_in_other_languages_and_a_quoted_exclusion(
    passage: str, missed: str, said: str, answered: str
) -> None:
    """German and Spanish exclusions are read; a quote that is itself the sentence putting
    the thing asked outside the rules does not answer for it (the held-out pass's
    on-premises installation was answered with "are covered by a separate Maintenance
    Agreement"), while a yes/no question is answered by it."""
    hits = make_hits(make_chunk(passage))
    miss = _verdict(missed, hits)
    assert not miss.covered and said in miss.reason.lower(), miss
    assert _verdict(answered, hits).covered
    assert _verdict(
        "Does the SLA cover on-premises Halvard Server deployments?",
        make_hits(
            make_chunk(
                "On-premises deployments of Halvard Server are covered by a separate "
                "Maintenance Agreement."
            )
        ),
    ).covered


@pytest.mark.parametrize(
    ("passage", "missed", "said"),
    [
        (
            "连续出差满60天的，自第61天起补贴按60%发放，并可申请长期驻外租房，租房标准另行审批。",
            "连续出差超过60天申请长期驻外租房，每月租房标准是多少？",
            "另行审批",
        ),
        (
            "Betriebsferien: Weihnachten 2024 vom 23.12. bis 3.1.; Sommer-Betriebsferien 2025: "
            "noch offen.",
            "Wann finden die Sommer-Betriebsferien 2025 statt?",
            "noch offen",
        ),
    ],
)
def test_a_rule_left_open_in_other_words(passage: str, missed: str, said: str) -> None:
    miss = _verdict(missed, make_hits(make_chunk(passage)))
    assert not miss.covered and said in miss.reason, miss


def test_plural_replace_and_a_group_sent_to_another_standard() -> None:
    """(Session 45's held-out set.) "These terms replace the terms dated 1 June 2023" names
    the June 2023 terms only as replaced. Contractors "not covered by this policy", whose
    devices "are governed by the Contractor Device Standard", are not answered by the
    policy, although that standard's title names them again in the references."""
    terms = make_chunk(
        "Effective date: 1 April 2025. These terms replace the terms dated 1 June 2023.\n"
        "Store customers may return an item within 14 days from purchase."
    )
    old = _verdict(
        "Under the June 2023 terms, how long did store customers have to return an item?",
        make_hits(terms),
    )
    assert not old.covered and "'June 2023' only as replaced" in old.reason, old
    policy = make_chunk(
        "2.2 Contractors, agency workers and consultants are not covered by this policy. "
        "Their devices are governed by the Contractor Device Standard (ITP-09).\n"
        "Standard laptops are refreshed every 48 months.\n"
        "References: Contractor Device Standard (ITP-09)."
    )
    miss = _verdict("What's the laptop refresh cycle for contractors?", make_hits(policy))
    assert not miss.covered, miss
    assert _verdict("What's the refresh cycle for standard laptops?", make_hits(policy)).covered


def test_an_exclusion_reaches_no_further_than_its_cell_or_clause() -> None:
    """(Held-out pass, session 46.) The 不含 of the column "预算金额（不含税）" excludes tax,
    not the amounts under it: the row answered for a 10万元 purchase was refused."""
    header = ("预算金额（不含税）", "采购方式", "最少邀请供应商数量")
    rows = (("5万元以下", "直接采购", "1家"), ("5万元（含）至30万元", "询价比价", "3家"))
    verdict = _verdict(
        "预算10万元的采购，至少要邀请几家供应商？", make_hits(make_table(header, rows))
    )
    assert verdict.covered, verdict
    # A row's note sending it to another rule still governs the row's key, cells before it.
    header = ("资产类别", "认定起点", "折旧年限", "备注")
    rows = (
        ("电子设备", "3000元", "3年", "—"),
        ("机器设备", "5000元", "10年", "—"),
        ("软件（无形资产）", "10000元", "—", "按《无形资产管理办法》执行"),
    )
    verdict = _verdict("外购软件按几年摊销？", make_hits(make_table(header, rows)))
    assert not verdict.covered, verdict
    # Travel time "covered by the Travel Policy …, not by this procedure" is outside it.
    note = make_chunk(
        "Overtime is paid at 150% of the hourly base rate.\n³ Travel time between the "
        "Ballarat and Geelong plants is covered by the Travel Policy HR-P-020, not by this "
        "procedure."
    )
    question = "How is travel time between the Ballarat and Geelong plants paid?"
    verdict = _verdict(question, make_hits(note))
    assert not verdict.covered and "not by this procedure" in verdict.reason, verdict


@pytest.mark.parametrize(
    ("passage", "missed"),
    [
        (
            "Applies to: Engineering and SRE employees.\nNot covered: Contractors paid "
            "through staffing agencies, and interns.\nPrimary on-call is paid 60 per "
            "weeknight.",
            "What on-call stipend do interns on the SRE team receive?",
        ),
        (
            "Standard access requests are fulfilled within 3 working days. Access for the "
            "Rotterdam branch office is managed under the Kestrel Netherlands IT Policy.\n"
            "² The Kestrel Netherlands IT Policy is owned by the Rotterdam Office Manager.",
            "How quickly are standard access requests fulfilled for the Rotterdam branch?",
        ),
        (
            "本办法适用于杭州总部的全体正式员工。深圳分公司执行《深圳分公司考勤细则》。\n"
            "每月加班时间不超过36小时。",
            "深圳分公司每月加班上限是多少小时？",
        ),
        (
            "适用范围：苏州总部及昆山工厂；以经营租赁方式租入的资产不纳入本标准。\n"
            "机器设备每年盘点1次。",
            "以经营租赁方式租入的设备多久盘点一次？",
        ),
        (
            "Diese Regelung gilt für alle Beschäftigten und nicht für Leiharbeitnehmer.\n"
            "Die Pauschale beträgt 35,00 EUR je Tag.",
            "Welche Pauschale erhalten Leiharbeitnehmer?",
        ),
    ],
)
def test_more_ways_a_document_sends_a_group_elsewhere(passage: str, missed: str) -> None:
    """(Held-out pass, session 46's second set.) A "Not covered:" label, "is managed under
    the … Policy" (the other policy's footnote naming Rotterdam is about that policy),
    执行《…》, 不纳入本标准, and "und nicht für"."""
    miss = _verdict(missed, make_hits(make_chunk(passage)))
    assert not miss.covered and "outside its rules" in miss.reason, miss


def test_a_han_character_alone_is_no_group_put_outside_the_rules() -> None:
    """(Held-out pass, session 47.) "算" (to count as) of the question was found in "核算
    细则" of a row whose note leaves its rules to another text, and the answer for another
    row was refused as "outside its rules"."""
    from generation.scope import only_excluded

    doc = (
        "| 电子设备 | 3000元 | 3年 | | 模具及工装 | 待定 | 核算细则由财务部另行发布 | "
        "| 软件 | 10000元 | 按《无形资产管理办法》执行 |"
    )
    question = "新买的笔记本电脑单价4000元，电子设备从多少钱开始算固定资产？"
    assert only_excluded(question, "资产类别: 电子设备 | 认定起点: 3000元", [doc]) == ("", "")
    # a word of two characters or more still is: 软件 is left to another text
    word, _ = only_excluded("软件单价多少以上算固定资产？", "资产类别: 电子设备", [doc])
    assert word == "软件"


@pytest.mark.parametrize(
    "deferral",
    [
        "Whether a tax gross-up is granted, and how it is calculated, is defined in the "
        "Global Mobility Tax Guide.",
        "O tratamento contabilístico dos ajustes consta do Manual de Contabilidade, "
        "capítulo 9, e não é repetido nesta norma.",
        "入室時の服装および手順は「クリーンルーム入室手順」（QA-CR-02）に定める。",
        "La soglia per i pasti è disciplinata dal Regolamento Spese.",
        # (the eighth held-out pass)
        "The tax treatment is described in the Ireland payroll supplement (HR-PAY-IE-03).",
        "Las comisiones del canal online se rigen por el documento COM-07.",
        "Das Vorgehen bei Abweichungen regelt die Verfahrensanweisung VA-QS-14.",
        "加密、终端管理软件等安全要求，以信息安全部发布的《终端安全基线》为准，本办法不再重复。",
        "해외 법인 직원은 각 법인의 기준을 따른다.",
        "Порядок начисления определяется Положением об оплате труда.",
        # (the thirteenth and fourteenth held-out passes, session 50)
        "契約条件は「運用保守サービス契約約款」（MS-LGL-004）を参照してください。",
        "엘리베이터 법정 검사는 승강기 유지보수 업체의 계약에 따르며 본 조의 대상이 아니다.",
        "실내 수영장의 이용료는 개장 전 입주자대표회의에서 결정하여 공고한다.",
        "Een fietsvergoeding wordt nader uitgewerkt in de Fietsregeling.",
        "Размер скидки устанавливается решением стипендиальной комиссии.",
        "Volumes acima de 30 kg seguem a Tabela de Carga Paletizada, publicada em separado.",
        "已享有學費減免之學員申請退費時，其退費比例另定之。",
        "会员年费及会员权益另见《会员服务协议》。",
        # (the sixteenth held-out pass, session 52: a price kept elsewhere)
        "Diesel and petrol are sold at the fuel berth; prices are displayed at the fuel "
        "berth and change weekly.",
        # (the seventeenth, session 52: announced later, agreed case by case)
        "恢復招生日期將於官網公告",
        "機車班另有暑期學生專案，內容於每年6月公告。",
        "2025—2026学年收费标准须经物价部门核定后公布。",
        "考照規費依監理站公告標準，於報名時由本班代收。",
        "Las tarifas de la temporada 2025-2026 se publicarán en octubre de 2025.",
        "Oltre 5 km: prezzo da concordare al momento della prenotazione.",
        "The pay arrangements for the additional period will be agreed case by case.",
        # (the twentieth, session 53: published later, as another notice or body's rules
        # say, priced once seen)
        "Les tarifs des forfaits pour l'année 2026 seront publiés en septembre 2025.",
        "延长时段以本馆公众号通知为准。",
        "互借資料之借期依出借館規定。",
        "キャンセル料は、当ホテル宿泊約款に定めるキャンセル規定に準じます。",
        "Antifouling by yard staff | | written quotation after inspection",
        # (the twenty-second, session 54: a price given only when asked)
        "Spa treatments are provided by a partner therapist; prices on request at the spa desk.",
        "Groups of 10 or more must book through our groups team; group prices are quoted "
        "when you enquire.",
        "30公斤以上 | 現場評估後報價",
        "Sonderanfertigungen: Preis auf Anfrage",
        "A compensation scheme for season ticket holders is under review.",
    ],
)
def test_a_rule_sent_to_another_text_is_a_deferral(deferral: str) -> None:
    """(Held-out pass, session 47.) "is defined in the … Guide", "consta do Manual …",
    "「…」に定める": the document sends the rule to another text, in any of these languages."""
    from generation.scope import _DEFERRED, _DEFERRED_HINT

    assert _DEFERRED_HINT.search(deferral) and _DEFERRED.search(deferral)


def test_a_rule_this_document_sets_is_no_deferral() -> None:
    from generation.scope import _DEFERRED

    assert not _DEFERRED.search("The allowance is defined in section 4 of this policy.")
    assert not _DEFERRED.search("Diese Richtlinie regelt die Kalibrierung aller Prüfmittel.")
    assert not _DEFERRED.search("The amount is set out in the table below.")
    assert not _DEFERRED.search("Prices shown are per night and include VAT.")
    # (a rule announced in the past, or this text's own standard)
    assert not _DEFERRED.search("本办法自公布之日起施行。")
    assert not _DEFERRED.search("本办法于2023年1月1日公布。")
    assert not _DEFERRED.search("依本办法公告标准执行。")
    assert not _DEFERRED.search("依第五条规定处理。")
    assert not _DEFERRED.search("A written estimate is given before any procedure.")


def test_a_deferral_in_another_retrieved_passage_of_the_document_refuses() -> None:
    """(Held-out pass, session 47.) Asked what may be spent per guest on alcohol, a sentence
    of another passage ("above £20,000 … purchase order") was quoted, while the document
    says the amount per guest "is set by the Gifts & Hospitality Standard"."""
    from generation.scope import left_to_another_rule

    events = make_chunk(
        "Any single event with expected spend above £20,000 must be paid through a "
        "purchase order, not the card.",
        ordinal=1,
    )
    alcohol = make_chunk(
        "Alcohol may be purchased only as part of client entertainment. The amount that may "
        "be spent per guest is set by the Gifts & Hospitality Standard and is not repeated "
        "here.",
        ordinal=2,
    )
    question = "How much may I spend per guest on alcohol when I take a client to dinner?"
    quoted = extract(question, make_hits(events), 1).chosen
    assert "is set by" in left_to_another_rule(question, quoted, [events, alcohol])
    assert left_to_another_rule(question, quoted, [events]) == ""


def test_another_row_leaving_its_cells_to_a_later_rule_is_about_that_row() -> None:
    """(Held-out pass, session 47.) Asked the count frequency of "classe B", the B row was
    refused because the controlled items' row leaves its approver "a definir"."""
    from generation.scope import left_to_another_rule

    table = make_table(
        ("Classe", "Critério", "Frequência da contagem cíclica", "Aprovação do ajuste"),
        (
            ("A", "Artigos de 80% do valor", "Mensal", "Diretor de Operações"),
            ("B", "15% seguintes do valor", "Trimestral", "Responsável de Armazém"),
            ("Artigos controlados", "Independente do valor", "Semanal", "a definir pela DAF"),
        ),
    )
    question = "Com que frequência são feitas as contagens cíclicas dos artigos da classe B?"
    ex = extract(question, make_hits(table), 1)
    assert ex.quotes[0].text.startswith("Classe: B"), ex.quotes
    assert left_to_another_rule(question, ex.chosen) == ""
    # The deferring row itself, quoted, is still refused for what it leaves open.
    asked = "Quem aprova o ajuste dos artigos controlados?"
    ex = extract(asked, make_hits(table), 1)
    assert ex.quotes[0].text.startswith("Classe: Artigos controlados"), ex.quotes
    assert "a definir" in left_to_another_rule(asked, ex.chosen)


def test_an_item_of_a_list_of_exclusions_is_not_answered_from() -> None:
    """(Held-out pass, session 47.) "It does not apply to: - third-party add-ons bought
    through the Marketplace …": the item names the add-ons only to exclude them."""
    from generation.scope import excluded_item

    chunk = make_chunk(
        "This schedule applies to paid subscriptions. It does not apply to:\n"
        "- free trial and sandbox accounts;\n"
        "- third-party add-ons bought through the Brightwater Marketplace.\n"
    )
    question = "What uptime does Brightwater guarantee for add-ons bought through the Marketplace?"
    item = extract(question, make_hits(chunk), 1).chosen[0]
    assert item.list_item and "Marketplace" in item.text
    assert excluded_item(question, item).startswith("It does not apply to:")
    # asked whether the schedule covers them, the exclusion is the answer
    assert excluded_item("Does the schedule apply to Marketplace add-ons?", item) == ""


def test_a_chinese_deferral_takes_the_clause_it_defers() -> None:
    """(Held-out pass, session 47.) "终端管理软件等安全要求，以《终端安全基线》为准": the
    subject stands in the clause before the deferral, which is no evidence of the rule."""
    from generation.scope import _deferring_clauses, _undeferred_clauses

    sentence = (
        "加密、终端管理软件等安全要求，以信息安全部发布的《终端安全基线》为准，本办法不再重复。"
    )
    assert "终端管理软件" in _deferring_clauses(sentence)
    assert _undeferred_clauses(sentence) == ""
    kept = "住宿标准按客户接待标准执行，须事先另行审批。"
    assert _undeferred_clauses(kept) == "住宿标准按客户接待标准执行"


@pytest.mark.parametrize(
    ("passages", "missed", "said", "answered"),
    [
        # (Held-out pass, session 48.) Polish and Swedish: a rule sent to another text, a
        # group the rules leave out (named far into a list of them).
        (
            (
                "1. Pracownikowi przysługuje dofinansowanie do wypoczynku w wysokości 900 zł. "
                "Zasady dofinansowania opieki nad dziećmi w żłobkach i przedszkolach określa "
                "odrębny Regulamin dopłat do opieki nad dziećmi.",
            ),
            "Ile mogę dostać dopłaty do przedszkola dla córki?",
            "określa odrębny Regulamin",
            "Ile wynosi dofinansowanie do wypoczynku pracownika?",
        ),
        (
            (
                "Z Funduszu nie korzystają osoby zatrudnione na podstawie umów "
                "cywilnoprawnych, pracownicy tymczasowi ani pracownicy spółki zależnej "
                "Wisła-Tech Serwis sp. z o.o., która prowadzi własny fundusz.",
                "Dofinansowanie do wypoczynku pracownika wynosi 900 zł na rok.",
            ),
            "Pracuję w Wisła-Tech Serwis. Ile wynosi dofinansowanie do wypoczynku pracownika?",
            "wisła-tech serwis",
            "Ile wynosi dofinansowanie do wypoczynku pracownika?",
        ),
        (
            (
                "Friskvårdsbidraget är 3 000 kr per år. Bidraget för konsulter regleras i "
                "Konsultpolicyn.",
            ),
            "Hur mycket friskvårdsbidrag får konsulter?",
            "regleras i",
            "Hur mycket friskvårdsbidrag får man per år?",
        ),
    ],
)
def test_rules_sent_elsewhere_and_groups_left_out_in_polish_and_swedish(
    passages: tuple[str, ...], missed: str, said: str, answered: str
) -> None:
    chunks = (make_chunk(p, ordinal=i, title="Regulamin") for i, p in enumerate(passages))
    hits = make_hits(*chunks)
    miss = _verdict(missed, hits)
    assert not miss.covered and said in miss.reason, miss
    assert _verdict(answered, hits).covered


def test_a_function_word_in_an_exclusion_is_no_thing_left_out() -> None:
    """ "which have their own service descriptions" does not put "have" outside an SLA:
    asked about the Enterprise tier "as we have an Enterprise contract", the rule for it
    answers."""
    scope = make_chunk(
        "1.2 This SLA does not apply to: (a) the Object Storage and CDN products, which have "
        "their own service descriptions; (b) free trial accounts.",
        ordinal=0,
    )
    rule = make_chunk(
        "4.1 On the Enterprise tier, a P1 incident (production service down) gets a first "
        "response within 15 minutes.",
        ordinal=1,
    )
    verdict = _verdict(
        "We have an Enterprise contract. Within how many minutes is the first response to a "
        "P1 incident?",
        make_hits(rule, scope),
    )
    assert verdict.covered, verdict


@pytest.mark.parametrize(
    ("passages", "missed", "said", "answered"),
    [
        # (Held-out pass, session 48.) A list of what the rules leave out, introduced by a
        # colon and parted by semicolons, reaches its last item; a quote that is an item of
        # it is no mention of that item.
        (
            (
                "1.2 This SLA does not apply to: (a) the Object Storage and CDN products, which "
                "have their own service descriptions; (b) any feature labelled beta; (c) free "
                "trial accounts; and (d) services resold through partners.",
                "5.1 The Essential tier includes 1 restore request per month.",
            ),
            "How many restore requests per month are included on a free trial account?",
            "free trial",
            "How many restore requests per month are included on the Essential tier?",
        ),
    ],
)
def test_a_list_of_what_the_rules_leave_out_reaches_its_last_item(
    passages: tuple[str, ...], missed: str, said: str, answered: str
) -> None:
    # (The rule ranked first, the scope after it.)
    chunks = [make_chunk(p, ordinal=i, title="Policy") for i, p in enumerate(passages)]
    hits = make_hits(*reversed(chunks))
    miss = _verdict(missed, hits)
    assert not miss.covered and said in miss.reason, miss
    assert _verdict(answered, hits).covered


@pytest.mark.parametrize(
    ("passage", "missed", "said"),
    [
        # (Held-out pass, session 48.) Rules sent elsewhere in Korean, Japanese and French;
        # a band whose value is left open; a row of another size.
        (
            "1. 적용 범위: 본 요금표는 수도권 지점에 적용됩니다. 영남권 지점(부산·대구)은 별도 "
            "요금표를 따릅니다. 미니 굴착기 일 요금: 150,000원.",
            "부산 지점에서 미니 굴착기를 하루 빌리면 얼마인가요?",
            "별도 요금표를 따릅니다",
        ),
        (
            "4　グループ会社である株式会社みなと物流の従業員は、同社の規程による。"
            "従業員が出産したときは、子1人につき20,000円を支給する。",
            "みなと物流で働いていますが、出産祝金はいくらですか？",
            "同社の規程による",
        ),
        (
            "1.3 Le télétravail et les indemnités associées relèvent de l’Accord télétravail "
            "du 15 mars 2023 et ne sont pas traités ici. 2.1 L’indemnité repas est de 9 €.",
            "Quel est le montant de l'indemnité versée par jour de télétravail ?",
            "télétravail",
        ),
        (
            "4. 운반비 (편도): 지점 기준 30km 이내: 120,000원 / 30km 초과 80km 이내: 200,000원 / "
            "80km 초과: 별도 견적.",
            "지점에서 120km 떨어진 현장까지 운반비가 얼마인가요?",
            "80km 초과: 별도 견적",
        ),
    ],
)
def test_rules_left_open_in_more_languages(passage: str, missed: str, said: str) -> None:
    miss = _verdict(missed, make_hits(make_chunk(passage)))
    assert not miss.covered and said in miss.reason, miss


def test_a_band_with_a_value_is_answered_and_a_row_of_another_size_is_not() -> None:
    rates = make_chunk(
        "4. 운반비 (편도): 지점 기준 30km 이내: 120,000원 / 30km 초과 80km 이내: 200,000원 / "
        "80km 초과: 별도 견적."
    )
    assert _verdict("지점에서 50km 떨어진 현장까지 운반비가 얼마인가요?", make_hits(rates)).covered
    table = make_table(
        ("作業項目", "費率", "備註"),
        (("入庫（卸櫃）", "NT$60", "20呎貨櫃人工卸貨另收NT$3,500／櫃"),),
    )
    other = _verdict("40呎貨櫃的人工卸貨費是多少？", make_hits(table))
    assert not other.covered and "20呎" in other.reason, other
    assert _verdict("20呎貨櫃的人工卸貨費是多少？", make_hits(table)).covered


def test_a_document_read_passage_by_passage_puts_out_what_any_passage_does() -> None:
    """(Session 52.) The document's retrieved text is read a passage at a time, each
    memoised: a passage that puts interns outside the rules counts wherever it stands."""
    from generation.scope import only_excluded

    rules = "full-time employees receive 25 days of annual leave per year."
    scope = "this policy does not apply to interns, who are covered by their own agreement."
    asked = "How many days of annual leave do interns get?"
    for parts in ([rules, scope], [scope, rules], [rules, "other text.", scope]):
        word, said = only_excluded(asked, rules, parts)
        assert word == "interns" and "does not apply to interns" in said, parts
    assert only_excluded(asked, rules, [rules, "other text."]) == ("", "")


def test_a_chinese_list_of_people_left_out_reaches_its_last_item() -> None:
    """ "下列人员不适用本办法：（一）…；（三）华岳精密（越南）有限公司员工": the third item is left
    out too, though semicolons part it from the phrase."""
    from generation.passages import normalise
    from generation.scope import only_excluded

    doc = normalise(
        "华岳精密培训管理办法 第三条 下列人员不适用本办法：（一）试用期内员工；（二）劳务派遣"
        "人员、实习生；（三）华岳精密（越南）有限公司员工，其培训补贴按当地子公司规定执行。"
        "第八条 本科学历教育的补贴比例为60%。"
    )
    word, said = only_excluded(
        "我是华岳精密（越南）有限公司的员工，读本科能拿多少比例的补贴？", "本科 补贴比例 60%", [doc]
    )
    assert word == "越南" and "不适用本办法" in said


def test_a_cell_left_open_is_about_its_column_and_remarks_about_the_row() -> None:
    """(Session 48.) A row whose price says 面议 still states its concurrency; a row whose
    remarks say 待定 (a room under renovation) is left open as a whole."""
    editions = make_table(
        ("版本", "价格（元/年）", "并发数"),
        (("标准版", "9,800", "50"), ("旗舰版 Enterprise", "面议", "不限")),
    )
    assert _verdict("旗舰版支持多少并发？", make_hits(editions)).covered
    rooms = make_table(
        ("类别", "项目", "标准/要求", "责任部门", "备注"),
        (
            ("会议室", "A栋大会议室", "容纳60人", "行政部", "须提前2个工作日预约"),
            ("会议室", "C栋培训教室", "容纳40人", "人力资源部", "待定（装修中，预计2025年启用）"),
        ),
    )
    verdict = _verdict("C栋培训教室哪些人可以预约？", make_hits(rooms))
    assert not verdict.covered and "待定" in verdict.reason, verdict


def test_a_row_whose_asked_cell_is_left_open_answers_nothing() -> None:
    """(Held-out pass, session 48.) Asked how long the sick-pay top-up runs in the release
    phase of partial retirement, the row for it says "wird noch festgelegt (TBD)"; a row
    whose other cells hold what is asked still answers (面议 price, concurrency given)."""
    from generation.scope import row_left_open

    table = make_table(
        ("Betriebszugehörigkeit", "Zuschuss bis zum Ende der Krankheitswoche"),
        (
            ("ab 5 Jahren", "26."),
            ("Altersteilzeit (Freistellungsphase)", "wird noch festgelegt (TBD)"),
        ),
    )
    rows = [c for c in candidates(table, 0) if c.is_table_row]
    asked = "Ich bin in der Freistellungsphase der Altersteilzeit. Wie lange bekomme ich das?"
    assert "wird noch festgelegt" in row_left_open(asked, rows[-1:])
    editions = make_table(
        ("版本", "价格（元/年）", "并发数"), (("旗舰版 Enterprise", "面议", "不限"),)
    )
    rows = [c for c in candidates(editions, 0) if c.is_table_row]
    assert row_left_open("旗舰版支持多少并发？", rows[-1:]) == ""
    assert "面议" in row_left_open("旗舰版多少钱一年？", rows[-1:])
    # The row is named by its key (`row_key`): the item after a code, not the code.
    stands = make_table(
        ("编号", "项目", "标准价(元)", "备注"), (("B03", "电源接驳", "面议", "需展馆审批"),)
    )
    rows = [c for c in candidates(stands, 0) if c.is_table_row]
    assert row_left_open("电源接驳的标准价是多少？", rows).startswith("电源接驳 | 标准价(元): 面议")


def test_a_version_named_only_as_replaced_after_a_label() -> None:
    """(Held-out pass, session 48.) "Ersetzt: Betriebsvereinbarung Nr. 6/2019": asked what
    the old agreement 6/2019 said, the new one does not say."""
    agreement = make_chunk(
        "Betriebsvereinbarung Nr. 14/2025. Ersetzt: Betriebsvereinbarung Nr. 6/2019 "
        '("Krankmeldung").\n(2) Eine ärztliche Bescheinigung ist ab dem 4. Krankheitstag '
        "vorzulegen."
    )
    verdict = _verdict(
        "Ab welchem Krankheitstag war nach der alten Betriebsvereinbarung 6/2019 eine "
        "ärztliche Bescheinigung nötig?",
        make_hits(agreement),
    )
    assert not verdict.covered and "replaced" in verdict.reason, verdict


def test_an_open_cell_the_question_names_by_its_column_is_the_cell_asked() -> None:
    """(Held-out pass, session 50.) Asked the internal rate of an instrument whose row
    says "Internal user: To be confirmed", the row's other cells (the instrument's name)
    held a question word, so the open cell was not taken for the one asked; the column
    the question names, and no other column of the row does, is asked. A column both
    open and shut cells share a word with names nothing alone."""
    from generation.scope import row_left_open

    table = make_table(
        ("Instrument", "Internal user", "External academic", "Commercial"),
        (
            ("Confocal microscope", "£40", "£75", "£140"),
            ("Cryo-ultramicrotome", "To be confirmed", "£95", "£180"),
        ),
    )
    asked = "What is the hourly rate for the cryo-ultramicrotome for an internal user?"
    ex = extract(asked, make_hits(table), 1)
    assert ex.quotes[0].text.startswith("Instrument: Cryo-ultramicrotome"), ex.quotes
    assert "Internal user: To be confirmed" in row_left_open(asked, ex.chosen)
    other = "What is the commercial rate for the cryo-ultramicrotome?"
    ex = extract(other, make_hits(table), 1)
    assert row_left_open(other, ex.chosen) == ""
    fees = make_table(
        ("課程名稱", "學分費", "備註"),
        (("AI工具應用實務", "洽詢", "新開課程"), ("日文入門（一）", "3200元", "")),
    )
    asked = "AI工具應用實務這門課的學分費是多少？"
    ex = extract(asked, make_hits(fees), 1)
    assert "學分費: 洽詢" in row_left_open(asked, ex.chosen)


def test_remarks_of_several_sentences_leave_open_only_what_they_defer() -> None:
    """(Held-out pass, session 50.) A freight table's last row remarks "Cargas acima de
    100 kg seguem a tabela de carga lotação … . Seguro ad valorem de 0,30% …": the
    insurance rate they state is no value left open. A one-line remark that defers
    ("待定（装修中）") still leaves the whole row open."""
    from generation.scope import _undeferred_clauses

    row = (
        "regiao_destino: Todas as regiões | faixa_peso: acima de 100 kg | observacoes: "
        "Cargas acima de 100 kg seguem a tabela de carga lotação, enviada mediante cotação. "
        "Seguro ad valorem de 0,30% sobre o valor da nota fiscal aplica-se a todos os envios."
    )
    assert "Seguro ad valorem" in _undeferred_clauses(row)
    assert "seguem a tabela" not in _undeferred_clauses(row)
    short = "项目: 多功能厅 | 价格: 800元 | 备注: 待定（装修中）"
    assert _undeferred_clauses(short) == ""
    # Nor is such a remarks cell a cell left open: the row answers through it.
    from generation.scope import row_left_open

    table = make_table(
        ("regiao", "faixa_peso", "valor_frete", "observacoes"),
        (
            ("Sul", "até 10 kg", "R$ 52,00", "Entrega em dias úteis."),
            (
                "Todas as regiões",
                "acima de 100 kg",
                "sob consulta",
                "Cargas acima de 100 kg seguem a tabela de carga lotação. Seguro ad "
                "valorem de 0,30% sobre o valor da nota fiscal.",
            ),
        ),
    )
    asked = "Qual é o percentual do seguro ad valorem sobre o valor da nota fiscal?"
    ex = extract(asked, make_hits(table), 1)
    assert ex.quotes[0].text.startswith("regiao: Todas"), ex.quotes
    assert row_left_open(asked, ex.chosen) == ""
    price = "Qual é o valor do frete acima de 100 kg para todas as regiões?"
    ex = extract(price, make_hits(table), 1)
    assert "sob consulta" in row_left_open(price, ex.chosen)


def test_a_quote_shown_beside_the_answer_that_leaves_what_is_asked_open() -> None:
    """(Held-out pass, session 51.) A quote the answer shows beside the answering one may
    say that the value asked is not set: asked the visitors' permit price, the staff row
    answers (its table has a price column, so the price is "written" in the quoted
    passage) while the answer shows beside it "Visitor permit prices will be announced in
    April". The answer is not covered; asked the staff price, it still is."""
    from generation.scope import deferred_beside

    table = make_table(
        ("Permit", "Price per month"),
        (("Staff permit", "£25"), ("Contractor permit", "£40")),
        caption="Car park permits",
    )
    note = make_chunk("Visitor permit prices will be announced in April.", ordinal=1)
    row = next(c for c in candidates(table, 0) if c.is_table_row)
    (sentence,) = candidates(note, 1)
    visitors = "What is the price of a visitor permit?"
    assert deferred_beside(visitors, [row], [sentence]) == sentence.text
    assert deferred_beside("What is the price of a staff permit?", [row], [sentence]) == ""
    assert deferred_beside(visitors, [row], []) == ""
    # A word that names nothing deferred ("have") does not tie a deferral to the question.
    training = make_chunk("3.2 A refresher course must be completed every 24 months.")
    rates = make_chunk("The recharge rates have not yet been announced.", ordinal=1)
    asked = "How often do lab users have to redo the chemical safety training?"
    assert deferred_beside(asked, candidates(training, 0), candidates(rates, 1)) == ""


def test_a_count_asked_of_a_row_with_an_open_price_is_not_the_open_cell() -> None:
    """(Held-out pass, session 51.) Asked how many people the seminar room holds, its row
    says "定員: 60名" and "終日パック: 要相談" (a price to be discussed): no word of the
    question is in the row's other cells, but a count is asked and a cell states one, so
    the open price is not taken for what is asked. Asked the day package, it still is."""
    from generation.scope import row_left_open

    rooms = make_table(
        ("部屋名", "定員", "平日 1時間料金", "終日パック"),
        (("セミナールーム", "60名", "12,000円", "要相談"),),
    )
    rows = [c for c in candidates(rooms, 0) if c.is_table_row]
    assert row_left_open("セミナールームには最大何人まで入れますか？", rows) == ""
    assert row_left_open("セミナールームの終日パックはいくらですか？", rows).startswith(
        "セミナールーム | 終日パック: 要相談"
    )


def test_a_korean_or_japanese_column_asked_with_its_particle_is_an_empty_cell() -> None:
    """(Held-out pass, session 51.) "실내 수영장 이용료는 …?" of the pool's row whose fee
    cell is "미정" (undecided, a placeholder): the question writes the column 이용료 with
    its particle (이용료는), so the empty column was not taken for the one asked and the
    row's remark answered. The other rows still answer."""
    table = make_table(
        ("시설", "운영 시간", "이용료", "비고"),
        (
            ("피트니스센터", "06:00–23:00", "1인 월 15,000원", "만 14세 미만은 보호자 동반"),
            ("실내 수영장", "미정", "미정", "2025년 하반기 개장 예정"),
        ),
    )
    hits = make_hits(table)
    verdict = _verdict("실내 수영장 이용료는 한 달에 얼마인가요?", hits)
    assert not verdict.covered and "이용료" in verdict.reason, verdict
    assert _verdict("피트니스센터 이용료는 한 달에 얼마인가요?", hits).covered
    rooms = make_table(
        ("部屋名", "平日料金", "プロジェクター"),
        (("和室「桜」", "3,000円", ""),),
    )
    verdict = _verdict("和室「桜」のプロジェクターはいくらですか？", make_hits(rooms))
    assert not verdict.covered and "プロジェクター" in verdict.reason, verdict


@pytest.mark.parametrize(
    "sentence",
    [
        "※ 필라테스 강좌의 수강료는 2025년 8월 중 구 시설관리공단 이사회 의결 후 공지합니다.",
        "※ 和室「桜」の土日祝料金は改装工事の日程確定後にお知らせします。",
        "終日パック（9:00～18:00・平日）: 要相談",
    ],
)
def test_values_announced_once_decided_or_to_be_discussed_are_left_open(sentence: str) -> None:
    """(Held-out pass, session 51.) Korean "의결 후 공지합니다", Japanese "確定後にお知らせし
    ます" (announced once decided) and "要相談" (to be discussed, as 面议) leave the value
    open; "아래와 같이 안내합니다" and "受付でご案内します" (guidance given) do not."""
    from generation.scope import _DEFERRED, _left_open

    assert _DEFERRED.search(sentence)
    assert _left_open(sentence.split(": ")[-1])
    assert not _DEFERRED.search("이용 방법은 아래와 같이 안내합니다.")
    assert not _DEFERRED.search("詳しくは受付でご案内します。")


@pytest.mark.parametrize(
    "sentence",
    [
        "Aqua-fit and aqua-natal classes are priced in the separate Fitness Classes price list.",
        "The mileage rates will be reviewed as part of the 2026 policy revision.",
        "身心障礙者月租優惠依縣政府相關規定另案辦理。",
        "Der Abfallkalender 2026 wird im Dezember 2025 veröffentlicht.",
        "Le nuove tariffe per il 2026 saranno comunicate agli iscritti con 30 giorni di preavviso.",
    ],
)
def test_more_ways_of_leaving_a_rule_to_another_text_or_a_later_decision(sentence: str) -> None:
    """(Held-out pass, session 51, unseen_policies15 after it was measured.) A price list
    elsewhere, a revision to come, 另案辦理 (handled in a separate case), a calendar to be
    published, the Italian plural of "sarà comunicato". A price list named as this one is
    no other text."""
    from generation.scope import _DEFERRED, _DEFERRED_HINT

    assert _DEFERRED_HINT.search(sentence) and _DEFERRED.search(sentence)
    assert not _DEFERRED.search("All prices are listed in this price list.")


QUESTION_SETS = Path(__file__).resolve().parents[2] / "bench" / "questions"


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


def test_the_answer_hints_find_the_same_spans_in_every_written_document() -> None:
    """The hints of the answer's checks (`generation.scope`), as written and regrouped,
    over every Markdown, text and CSV document of the question sets (as written and lower
    cased, as the checks read them) and over texts made of the hints' own pieces."""
    from generation.scope import _DEFERRED_HINT, _EXCLUDES_HINT, _REPLACES_HINT

    hints = [_DEFERRED_HINT, _EXCLUDES_HINT, _REPLACES_HINT]
    texts = [
        p.read_text(encoding="utf-8", errors="replace")
        for suffix in ("*.md", "*.txt", "*.csv")
        for p in sorted(QUESTION_SETS.glob(f"*/docs/{suffix}"))
    ]
    assert len(texts) > 50
    rng = random.Random(52)
    for hint in hints:
        pieces = re.findall(r"[^\W\d_]+|\s", " ".join(hint.written))
        texts += ["".join(rng.choice(pieces) for _ in range(40)) for _ in range(200)]
    for hint in hints:
        for written, grouped in zip(hint.written, (hint.latin, hint.other), strict=True):
            as_written = re.compile(written)
            for text in texts:
                for read in (text, text.lower()):
                    assert _spans(grouped, read) == _spans(as_written, read)


def test_a_group_left_out_for_a_period_in_a_rows_note() -> None:
    """(Held-out pass, session 53.) "凭学生证；寒暑假期间不售": the student ticket is not sold
    during the holidays, so it does not answer what it costs then."""
    from generation.scope import _EXCLUDES, _EXCLUDES_HINT

    note = "票种: 学生票 | 价格: 20元 | 备注: 凭学生证；寒暑假期间不售"
    assert _EXCLUDES_HINT.search(note) and _EXCLUDES.search(note)


def test_what_may_not_be_carried_is_put_outside_the_rules() -> None:
    """(Held-out pass, session 53.) "Электросамокаты … к перевозке на пароме не допускаются":
    a price for carrying an e-scooter is not the bicycle's beside it."""
    from generation.scope import _EXCLUDES, _EXCLUDES_HINT

    banned = "Велосипед 100 руб. Электросамокаты к перевозке на пароме не допускаются."
    assert _EXCLUDES_HINT.search(banned) and _EXCLUDES.search(banned)
    assert not _EXCLUDES.search("Велосипед перевозится за 100 руб.")
