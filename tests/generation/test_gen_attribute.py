"""generation.attribute: a quote must say something of what the question asks of its topic."""

from __future__ import annotations

from gen_cases import make_chunk, make_hits, make_table

from generation.answerable import judge
from generation.attribute import asked_facet, facet_unmet, opposite_stated
from generation.extractive import extract
from generation.passages import candidates
from generation.similarity import Similarity

COUNTY = "Which county lies at the northern end of the Golden Gate Bridge?"
TOPIC = ["Golden Gate Bridge"]


def test_the_facet_is_what_the_question_asks_beyond_its_topic() -> None:
    assert asked_facet(COUNTY, TOPIC, "") == ["lies", "northern", "end"]
    # Words of the question's form and adverbs are no facet: a paraphrase changes them.
    assert asked_facet("On what date was Tower Bridge formally opened?", ["Tower Bridge"], "") == [
        "opened"
    ]
    # "How tall … today": a measure and a time asked, nothing of the topic's facets.
    assert asked_facet("How tall is Mount Vesuvius today?", ["Mount Vesuvius"], "") == []
    # The quoted document's title is topic too.
    facet = ["lies", "northern", "end"]
    assert asked_facet(COUNTY, [], "golden gate bridge.txt") == facet


def test_a_quote_about_the_topic_alone_does_not_answer() -> None:
    near_miss = ["The Golden Gate Bridge spans the Golden Gate, the narrow strait to the Pacific."]
    assert facet_unmet(COUNTY, near_miss, [], TOPIC, "") == ["lies", "northern", "end"]
    right = ["Its northern anchorage stands in Marin County, across from San Francisco."]
    assert facet_unmet(COUNTY, right, [], TOPIC, "") == []
    # The heading a quote stands under says what it is about too.
    marin = ["Marin lies across the water from San Francisco."]
    assert facet_unmet(COUNTY, marin, ["Golden Gate Bridge > The northern end"], TOPIC, "") == []
    # English words are compared by their stems ("painted" states "paint").
    paint = "What is the name of the paint color used on the Golden Gate Bridge?"
    assert facet_unmet(paint, ["The bridge is painted International Orange."], [], TOPIC, "") == []


def test_a_question_that_is_all_topic_checks_nothing() -> None:
    assert asked_facet("What is zero trust?", ["zero trust"], "") == []
    assert facet_unmet("What is zero trust?", ["Something else."], [], ["zero trust"], "") == []
    # One word left is most often a verb the text writes otherwise (mort / meurt): not
    # checked either.
    died = "Quand Claude Monet est-il mort ?"
    assert asked_facet(died, ["Claude Monet"], "") == ["mort"]
    assert (
        facet_unmet(died, ["Monet meurt à Giverny le 5 décembre 1926."], [], ["Claude Monet"], "")
        == []
    )
    assert facet_unmet("Où Monet est-il né ?", ["Autre chose."], [], ["Monet"], "") == []
    # Chinese questions are left to the other checks.
    assert asked_facet("马来穿山甲的别称是什么？", [], "") == []


def test_other_languages_by_prefix_stem_without_their_function_words() -> None:
    q = "Avec quel tableau Cézanne figure-t-il à la première exposition impressionniste ?"
    facet = asked_facet(q, ["Cézanne"], "")
    assert "avec" not in facet and "quel" not in facet and "il" not in facet
    quote = ["Il participe en 1874 à la première exposition impressionniste avec La Maison."]
    assert facet_unmet(q, quote, [], ["Cézanne"], "") == []
    assert facet_unmet(q, ["Cézanne naît en 1839 à Aix-en-Provence."], [], ["Cézanne"], "") != []
    # The kind asked for is no facet: "Limoges", not "la ville de Limoges".
    assert asked_facet("Dans quelle ville Renoir est-il né ?", ["Renoir"], "") == ["né"]
    # Light verbs say nothing of the facet: "¿Qué extensión tiene la cuenca del Ebro?".
    assert asked_facet("¿Qué extensión tiene la cuenca del Ebro?", ["Ebro"], "") == ["cuenc"]
    # A short question whose language is told wrong keeps no function word of another.
    assert "qual" not in asked_facet("Qual era o nome romano de Coimbra?", ["Coimbra"], "")
    ru = asked_facet("В честь кого получил своё название Екатеринбург?", ["Екатеринбург"], "")
    assert "ког" not in ru and "сво" not in ru and "кого" not in ru


def test_judge_refuses_a_quote_on_another_facet_of_the_topic() -> None:
    bridge = "dd00110000000000"
    other = make_chunk(
        "The Golden Gate Bridge spans the Golden Gate, the narrow strait that links San "
        "Francisco Bay with the Pacific Ocean.",
        doc_id=bridge,
    )
    hits = make_hits(other)
    ex = extract(COUNTY, hits)
    verdict = judge(COUNTY, "general", [q.text for q in ex.quotes], ex.chosen, [other])
    assert not verdict.covered and verdict.failed == "facet"
    assert "northern" in verdict.reason
    right = make_chunk(
        "The Golden Gate Bridge reaches land at its northern end in Marin County.", doc_id=bridge
    )
    ex = extract(COUNTY, make_hits(right))
    assert judge(COUNTY, "general", [q.text for q in ex.quotes], ex.chosen, [right]).covered


def test_a_paraphrase_is_told_from_another_facet_by_meaning(meaning: Similarity) -> None:
    # Without the topic on both sides, the default embedder puts a paraphrase of what is
    # asked well above a sentence on another facet of the same thing.
    q = "When did builders start work on the Golden Gate Bridge?"
    began = ["Construction of the Golden Gate Bridge began on January 5, 1933."]
    visitors = ["Today the Golden Gate Bridge draws some 10 million visitors each year."]
    assert facet_unmet(q, began, [], TOPIC, "") == ["builders", "start", "work"]  # words alone
    assert facet_unmet(q, began, [], TOPIC, "", meaning) == []
    assert facet_unmet(q, visitors, [], TOPIC, "", meaning) == ["builders", "start", "work"]
    designer = "Who was the original designer of the Brooklyn Bridge?"
    crosses = ["The Brooklyn Bridge crosses the East River, linking Manhattan with Brooklyn."]
    assert facet_unmet(designer, crosses, [], ["Brooklyn Bridge"], "", meaning) != []
    ru = "Когда в Новосибирске появилось метро?"
    metro = ["Новосибирский метрополитен открылся в 1986 году."]
    climate = ["Климат Новосибирска резко континентальный, зимой около −17 °C."]
    assert facet_unmet(ru, metro, [], ["Новосибирск"], "", meaning) == []
    assert facet_unmet(ru, climate, [], ["Новосибирск"], "", meaning) != []


def test_a_quote_stating_the_opposite_answers_another_question() -> None:
    """A facet word whose opposite the quote states, and not the word itself: the quote
    is about the other end. Facets of one word count here."""
    office = ["The Customs Office"]
    close = "When does the Customs Office close?"
    assert opposite_stated(close, ["The Customs Office opens at 9 am."], [], office, "") == (
        "close",
        "opens",
    )
    war = "When did the Hundred Years War end?"
    began = ["The Hundred Years War began in 1337."]
    assert opposite_stated(war, began, [], ["Hundred Years War"], "") == ("end", "began")
    last = "Who was the last king of Mercia?"
    assert opposite_stated(last, ["Penda was the first king of Mercia."], [], ["Mercia"], "")
    # "last" the verb is no opposite of "first".
    siege = "How long did the siege of Calais last?"
    first = ["It was the first siege to use cannon; it took eleven months."]
    assert opposite_stated(siege, first, [], ["Calais"], "") is None
    # The word itself stated, or a span that gives both ends: answered.
    both = ["The Customs Office opens at 9 am and closes at 5 pm."]
    assert opposite_stated(close, both, [], office, "") is None
    for span in ("It is open 9 am to 5 pm.", "Hours: open 09:00-17:00.", "Open from 9 until 17."):
        assert opposite_stated(close, [span], [], office, "") is None, span
    # A yes/no question is answered by the opposite ("closed on Sundays").
    sundays = "Is the Customs Office open on Sundays?"
    assert opposite_stated(sundays, ["It is closed on Sundays."], [], office, "") is None
    # A heading states it too.
    assert opposite_stated(close, ["9 am."], ["Customs Office > Opening time"], office, "")
    # English only: other languages' words are not in the list.
    ferme = "Quand le bureau des douanes ferme-t-il ?"
    assert opposite_stated(ferme, ["Le bureau ouvre à 9 h."], [], ["bureau"], "") is None


def test_judge_refuses_the_other_end_of_what_is_asked() -> None:
    office = make_chunk("The Customs Office opens at 9 am every weekday.")
    hits = make_hits(office)
    question = "When does the Customs Office close?"
    ex = extract(question, hits)
    verdict = judge(question, "general", [q.text for q in ex.quotes], ex.chosen, [office])
    assert not verdict.covered and verdict.failed == "facet"
    assert "opposite" in verdict.reason and "close" in verdict.reason
    question = "When does the Customs Office open?"
    ex = extract(question, hits)
    assert judge(question, "general", [q.text for q in ex.quotes], ex.chosen, [office]).covered


def test_a_row_answers_only_a_column_it_has(meaning: Similarity) -> None:
    """A row is named by its values ("centrifuge"); what is asked of it must be one of
    its columns, by name or in other words ("employees": Staff), not a column the table
    does not have ("warranty period")."""
    equipment = [("ID", "EQ-101"), ("Equipment", "Centrifuge"), ("Unit price", "¥12,800")]
    row = [" | ".join(f"{h}: {v}" for h, v in equipment)]
    price = "What is the unit price of the centrifuge?"
    warranty = "What is the warranty period of the centrifuge?"
    assert facet_unmet(price, row, [], [], "", meaning, equipment) == []
    assert facet_unmet(warranty, row, [], [], "", meaning, equipment) == ["warranty", "period"]
    # (Before: the row's value "centrifuge" met the facet itself.)
    assert facet_unmet(warranty, row, [], [], "", meaning, ()) == []
    office = [("Office", "Oslo"), ("Staff", "17")]
    staff = [" | ".join(f"{h}: {v}" for h, v in office)]
    employees = "How many employees does the Oslo office have?"
    assert facet_unmet(employees, staff, [], [], "", meaning, office) == []
    assert facet_unmet("What is the monthly rent in Oslo?", staff, [], [], "", meaning, office)


def test_pronouns_and_light_verbs_of_german_are_no_facet() -> None:
    """(Held-out pass, session 46.) 'Welche Pauschale bekomme ich, wenn ich samstags
    Rufbereitschaft habe?' was refused: the quote said nothing of 'bekomm', 'ich', 'hab'."""
    question = "Welche Pauschale bekomme ich, wenn ich samstags Rufbereitschaft habe?"
    assert asked_facet(question, [], "") == ["samstag", "rufbereitschaft"]


def test_modal_verbs_and_the_verb_of_a_thing_done_are_no_facet() -> None:
    """(Held-out pass, session 47.) "puedo" (may), and "give" in "What payment terms do
    we give …?" (the terms are asked; giving them is what is done with them): a quote had
    to say them, and right rows were refused."""
    spend = "¿Cuál es el máximo que puedo gastar por noche de hotel en Madrid?"
    assert "pued" not in asked_facet(spend, [], "")
    assert "darf" not in asked_facet("Wie viel darf ich für ein Hotel in Hamburg ausgeben?", [], "")
    terms = "What payment terms do we give our electronic components suppliers?"
    assert "give" not in asked_facet(terms, [], "")
    assert asked_facet("What do we give to new starters?", [], "")[:1] == ["give"]
    assert "keep" in asked_facet("How long do we keep their mailbox?", [], "")


def test_the_maximum_asked_is_said_by_an_upper_bound() -> None:
    """ "The maximum" is stated by a text giving an upper bound in any words: "hasta",
    "up to", "bis zu", "不超过"."""
    asked = "¿Cuál es el importe máximo por noche de hotel en Madrid?"
    bound = ["En Madrid se reembolsan hasta 140 € por alojamiento."]
    assert facet_unmet(asked, bound, [], ["Madrid"], "") == []
    flat = ["En Madrid se reembolsan 140 € por alojamiento."]
    assert facet_unmet(asked, flat, [], ["Madrid"], "") == ["import", "máximo", "hotel"]


def test_a_rate_of_another_period_does_not_answer() -> None:
    """(Held-out pass, session 47.) Asked the daily ATM limit, the row's "ATM cash
    withdrawal (per month): £400" was quoted."""
    from generation.attribute import other_rate_period

    daily = "What is the daily ATM withdrawal limit for a G6 manager?"
    monthly_row = "Grade: G6 | ATM cash withdrawal (per month): £400"
    assert other_rate_period(daily, monthly_row) == ("day", "month")
    assert other_rate_period(daily, "ATM cash per day: £200 | per month: £400") is None
    assert other_rate_period("Is the ATM limit daily or monthly?", monthly_row) is None
    assert other_rate_period("Wie hoch ist das monatliche Limit?", "bis 400 € pro Tag") == (
        "month",
        "day",
    )
    # a question naming no period asks whatever the quote gives
    assert other_rate_period("What is the ATM limit for G6?", monthly_row) is None


def test_a_price_per_use_is_no_monthly_one() -> None:
    """(Held-out pass, session 52.) Asked the training room's monthly pass, the row "単位:
    1回（2時間以内） | 一般 400円" was quoted. How often a class meets ("週1回") is no unit
    of the price."""
    from generation.attribute import other_rate_period

    row = "施設・項目: トレーニング室 | 単位: 1回（2時間以内） | 市内・平日: 一般 400円"
    assert other_rate_period("トレーニング室の月額定期券はいくらですか？", row) == (
        "month",
        "visit",
    )
    assert other_rate_period("What is the monthly fee?", "Gym: £4.00 per visit") == (
        "month",
        "visit",
    )
    assert other_rate_period("月額はいくらですか？", "ヨガ教室（週1回）: 3,000円") is None
    assert other_rate_period("What does a single swim cost?", "Adult: £4.00 per visit") is None


def test_a_rate_of_another_period_in_korean_and_japanese() -> None:
    """(Held-out pass, session 51.) Asked the gym's day pass ("하루만 … 일일권"), the row's
    monthly fee ("1인 월 15,000원") was quoted: Korean and Japanese periods are read, and
    the check runs for languages the facet check leaves out (it needs no word cutting). A
    month's name ("8월") is no monthly rate."""
    from generation.attribute import other_rate_period

    row = "시설: 피트니스센터 | 이용료: 1인 월 15,000원"
    assert other_rate_period("피트니스센터를 하루만 이용하려면 일일권 가격이 얼마예요?", row) == (
        "day",
        "month",
    )
    assert other_rate_period("피트니스센터 한 달 이용료는 얼마예요?", row) is None
    assert other_rate_period("2025년 8월에 개장하나요? 하루 이용료는?", "1일 5,000원") is None
    assert other_rate_period("ジムの1日券はいくらですか？", "月額 8,000円") == ("day", "month")
    gym = make_table(("시설", "이용료"), (("피트니스센터", "1인 월 15,000원"),))
    verdict = judge(
        "피트니스센터를 하루만 이용하려면 일일권 가격이 얼마예요?",
        "general",
        ["시설: 피트니스센터 | 이용료: 1인 월 15,000원"],
        [c for c in candidates(gym, 0) if c.is_table_row],
    )
    assert not verdict.covered and "per day" in verdict.reason, verdict


def test_the_askers_intent_is_no_facet() -> None:
    """(Held-out pass, session 50.) "Vou enviar …", "Quero que …", "Ich möchte …": the
    asker's plan, not what is asked of the rule."""
    facet = asked_facet("Quero que a encomenda seja entregue num sábado.", [], "")
    assert "quer" not in facet and "sej" not in facet and "entreg" in facet
    assert "möcht" not in asked_facet("Ich möchte ein Paket schicken.", [], "")


def test_the_verb_asking_a_price_is_met_by_the_price_column(meaning: Similarity) -> None:
    """(Held-out pass, session 54.) "Ile kosztuje wypożyczenie łyżew …?" of the row
    "Usługa: Wypożyczenie łyżew (jedna ślizgawka) | Cena: 10 zł" was refused: the quote
    said nothing of "kosztuj". The verb that asks a price is met by the row's sum of money
    when it is all that is left."""
    cells = [("Usługa", "Wypożyczenie łyżew (jedna ślizgawka)"), ("Cena", "10 zł")]
    row = [" | ".join(f"{h}: {v}" for h, v in cells)]
    skates = "Ile kosztuje wypożyczenie łyżew na jedną ślizgawkę?"
    assert facet_unmet(skates, row, [], [], "", meaning, cells) == []
    unpriced = [("Usługa", "Wypożyczenie łyżew (jedna ślizgawka)"), ("Uwagi", "kask w cenie")]
    text = [" | ".join(f"{h}: {v}" for h, v in unpriced)]
    assert "kosztuj" in facet_unmet(skates, text, [], [], "", meaning, unpriced)
    # Another thing left unmet still needs a column: the tablet is not the phone's row.
    phone = [("Leistung", "Dienstliches Mobiltelefon"), ("Interne Verrechnung", "420 €")]
    quoted = [" | ".join(f"{h}: {v}" for h, v in phone)]
    tablet = "Was kostet ein dienstliches Tablet für den Außendienst?"
    assert facet_unmet(tablet, quoted, [], [], "", meaning, phone)


def test_a_ticket_of_thirty_days_is_a_months_and_korean_writes_the_month_apart() -> None:
    """(Held-out pass, session 54.) Asked a month's season ticket, the row with a 30-day
    column was refused as yearly; asked the most hours a month, "월 최대 8시간" was refused
    as another period. "월 요금", "일 요금", "주 요금" are rates by the month, day and week;
    "주 3회" (how often a class meets) is none."""
    from generation.attribute import other_rate_period

    row = "Zones: Zones 1–3 | 7-day: £31.00 | 30-day: £112.00 | Annual: £1,120.00"
    assert other_rate_period("How much is a month's season ticket for zones 1-3?", row) is None
    assert other_rate_period("What is the weekly ticket?", "30-day: £112.00 | Annual: £1,120") == (
        "week",
        "month",
    )
    rule = "예약 가능 시간은 월 최대 8시간이며, 하루에 2시간을 초과하여 예약할 수 없다."
    assert other_rate_period("한 달에 최대 몇 시간까지 예약할 수 있나요?", rule) is None
    rates = "장비: 굴착기 | 일 요금: 450,000원 | 월 요금 (30일): 7,200,000원"
    assert other_rate_period("하루에 얼마인가요?", rates) is None
    assert other_rate_period("하루에 얼마인가요?", "월 요금: 7,200,000원") == ("day", "month")
    assert other_rate_period("한 달에 얼마인가요?", "초등반 | 주 3회 | 280,000원") is None
    assert other_rate_period("Was kostet eine Tageskarte?", "Fitnessstudio: 10 € pro Monat") == (
        "day",
        "month",
    )
