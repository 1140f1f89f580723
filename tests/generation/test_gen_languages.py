"""Answer checks for questions in languages other than Chinese and English: a name asked
is looked for in its other forms, German nouns are not names, quantity questions need a
number in every language, and the Chinese/English sibling check stays out of Japanese."""

from __future__ import annotations

from gen_cases import make_chunk, make_hits

from core.types import Hit
from generation.answerable import Verdict, judge
from generation.extractive import extract
from generation.names import inflected_names, names
from generation.quantities import asks_quantity
from generation.similarity import Similarity

NOVOSIBIRSK = (
    "Новосибирск — третий по численности населения город России. Население Новосибирска "
    "в 2021 году составляло около 1,6 миллиона человек."
)


def _verdict(question: str, hits: list[Hit], meaning: Similarity | None = None) -> Verdict:
    ex = extract(question, hits)
    quoted = [q.text for q in ex.quotes]
    return judge(question, "general", quoted, ex.chosen, [h.chunk for h in hits], None, meaning)


def test_a_name_is_met_in_another_case_and_another_name_is_not() -> None:
    hits = make_hits(make_chunk(NOVOSIBIRSK, title="ru"))
    # Genitive in the question, nominative and genitive in the text: the same city.
    assert _verdict("Какое население Новосибирска?", hits).covered
    # Another city, asked the same way: the near miss is refused and says why.
    omsk = _verdict("Какое население у Омска?", hits)
    assert not omsk.covered and omsk.failed == "name" and "Омска" in omsk.reason
    assert inflected_names("Какое население у Омска?") == [("Омска", ("омск",))]


def test_german_nouns_are_not_names_but_a_bare_capital_is() -> None:
    question = "Wer bestieg die Zugspitze als Erster?"
    assert inflected_names(question) == [] and names(question) == []
    # No article, determiner, number or preposition before it: a name.
    asked = "Wann wird Heidelberg zum ersten Mal in einer Urkunde genannt?"
    assert [n for n, _ in inflected_names(asked)] == ["Heidelberg"]
    assert inflected_names("Seit wann ist der Leipziger Hauptbahnhof in Betrieb?") == []
    dresden = make_chunk("Dresden wurde im Jahr 1206 erstmals urkundlich erwähnt.", title="de")
    verdict = _verdict(asked, make_hits(dresden))
    assert not verdict.covered and "Heidelberg" in verdict.reason
    text = (
        "Die Zugspitze ist mit 2962 Metern der höchste Berg Deutschlands. Der erste "
        "dokumentierte Aufstieg gelang Josef Naus im Jahr 1820."
    )
    assert _verdict(question, make_hits(make_chunk(text, title="de"))).covered


def test_a_german_noun_after_a_preposition_or_a_verb_taking_it_is_no_name() -> None:
    """(Session 52.) "ab Herbst", "soll Klavier-Einzelunterricht bekommen": common nouns,
    which the quote need not write; a capital after a verb of being still is a name."""
    kids = "Unsere beiden Kinder gehen ab Herbst zur Musikschule. Wie viel Rabatt gibt es?"
    assert inflected_names(kids) == []
    lessons = "Meine Tochter soll Klavier-Einzelunterricht mit 45 Minuten bekommen."
    assert inflected_names(lessons) == []
    assert [n for n, _ in inflected_names("Wie groß ist Heidelberg?")] == ["Heidelberg"]


def test_a_quantity_question_needs_a_number_in_every_language() -> None:
    for question in (
        "Wie hoch ist die Zugspitze?",
        "Combien d'habitants compte Lyon ?",
        "¿Cuántos habitantes tiene Lima?",
        "Сколько жителей в Казани?",
        "富士山の標高は何メートルですか？",
        "서울의 인구는 몇 명입니까?",
        "Hoeveel inwoners heeft Utrecht?",
        "Ile lat ma Kraków?",
        "Kolik obyvatel má Brno?",
        "Hur många invånare har Malmö?",
        "Ankara'nın nüfusu kaç?",
        "Hà Nội có bao nhiêu dân?",
        "Berapa jumlah penduduk Bandung?",
        "كم عدد سكان القاهرة؟",
        "दिल्ली की आबादी कितनी है?",
        "Скільки жителів у Львові?",
        "Kiedy założono Kraków?",
        "När grundades Uppsala universitet?",
        "Ankara ne zaman başkent oldu?",
        "Kapan Candi Borobudur dibangun?",
        "متى تأسست القاهرة؟",
    ):
        assert asks_quantity(question), question
    # "When" in Indonesian, answered by a century in Indonesian; not by a dynasty alone.
    built = make_chunk("Candi Borobudur dibangun pada abad ke-9 oleh Dinasti Syailendra.")
    assert _verdict("Kapan Candi Borobudur dibangun?", make_hits(built)).covered
    famous = make_chunk("Candi Borobudur dibangun oleh Dinasti Syailendra di Jawa Tengah.")
    assert not _verdict("Kapan Candi Borobudur dibangun?", make_hits(famous)).covered
    # "What percentage" asks a number too (session 50): a deferral of the share is no
    # answer ("其退費比例另定之", "размер … устанавливается решением комиссии").
    for question in (
        "Какой процент скидки мне положен?",
        "已經有學費減免,退費可以退幾成?",
        "Qual é a percentagem da taxa de combustível?",
        "Welk percentage wordt vergoed?",
        "Ile procent zniżki dostanę?",
    ):
        assert asks_quantity(question), question
    # Turkish "ile" is "with", Polish "ile" only asks before a verb or a noun.
    assert not asks_quantity("Ankara ile İstanbul arasında hangi şehir var?")
    hits = make_hits(make_chunk("Die Zugspitze liegt an der Grenze zwischen Bayern und Tirol."))
    verdict = _verdict("Wie hoch ist die Zugspitze?", hits)
    assert not verdict.covered and verdict.failed == "quantity"


def test_the_sibling_check_does_not_read_japanese_particles_as_words() -> None:
    text = "富士山は静岡県と山梨県にまたがる活火山である。最後の噴火は1707年の宝永大噴火である。"
    verdict = _verdict("富士山が最後に噴火したのはいつですか？", make_hits(make_chunk(text)))
    assert verdict.covered, verdict.reason


def test_not_covered_is_said_in_the_language_of_the_question() -> None:
    from generation.language import DEFAULT_NOT_COVERED, LANGUAGE_NAME, language_of

    assert language_of("Какое население у Омска?") == "ru"
    assert language_of("富士山の標高は何メートルですか？") == "ja"
    assert language_of("Wie viele Einwohner hat Dresden?") == "de"
    assert language_of("Kui palju elanikke on Tallinnas?") == "en"  # no sentence: English
    assert set(DEFAULT_NOT_COVERED) == set(LANGUAGE_NAME)


def test_a_when_question_needs_a_time_not_any_number(meaning: Similarity) -> None:
    question = "When did builders start work on the Golden Gate Bridge?"
    visitors = make_chunk(
        "Today the Golden Gate Bridge draws an estimated 10 million visitors each year."
    )
    verdict = _verdict(question, make_hits(visitors))
    assert not verdict.covered and verdict.failed == "time", verdict.reason
    started = make_chunk("Construction of the Golden Gate Bridge began on January 5, 1933.")
    # "builders start work" / "construction began": a paraphrase of what is asked, told by
    # its meaning (generation.attribute); words alone do not show it.
    assert _verdict(question, make_hits(started), meaning).covered
    assert _verdict(question, make_hits(started)).failed == "facet"
    # A year before a comma is a year, in any language; a thousands separator is not.
    braga = make_chunk("A Universidade do Minho, fundada em 1973, tem sede em Braga.")
    assert _verdict("Quando foi fundada a Universidade do Minho?", make_hits(braga)).covered
    span = make_chunk("The Brooklyn Bridge has a main span of 1,595.5 feet.")
    assert not _verdict("When was the Brooklyn Bridge finished?", make_hits(span)).covered
    # A month named without a number is a time; "may" the verb is not.
    audit = "When will the Golden Gate Bridge cables be inspected again?"
    month = make_chunk("The Golden Gate Bridge cables will be inspected again in May.")
    assert _verdict(audit, make_hits(month)).covered
    modal = make_chunk("The Golden Gate Bridge cables may be inspected again soon.")
    assert not _verdict(audit, make_hits(modal)).covered


def test_a_measure_asked_needs_its_unit() -> None:
    """How tall / how much money / what angle: a number of another kind is no answer."""
    visitors = make_chunk(
        "The Golden Gate Bridge draws an estimated 10 million visitors each year."
    )
    for question in (
        "How tall are the towers of the Golden Gate Bridge?",
        "How much money was spent building the Golden Gate Bridge?",
        "To what angle can the bascules of the Golden Gate Bridge be lifted?",
        "Wie hoch sind die Türme der Golden Gate Bridge?",
    ):
        verdict = _verdict(question, make_hits(visitors))
        assert not verdict.covered and verdict.failed == "unit", (question, verdict.reason)
    towers = make_chunk(
        "The towers of the Golden Gate Bridge rise 746 feet (227 m) above the water."
    )
    assert _verdict("How tall are the towers of the Golden Gate Bridge?", make_hits(towers)).covered
    cost = make_chunk("Building the Golden Gate Bridge cost about $35 million.")
    assert _verdict(
        "How much money was spent building the Golden Gate Bridge?", make_hits(cost)
    ).covered
    # "How long" is a length or a time.
    years = make_chunk("Building the Brooklyn Bridge took 14 years, from 1869 to 1883.")
    assert _verdict("How long did building the Brooklyn Bridge take?", make_hits(years)).covered


def test_an_area_is_no_length_and_a_length_no_area() -> None:
    """Square kilometres name kilometres but measure an area; an area asked needs one."""
    basin = make_chunk("La cuenca del Ebro abarca unos 85 000 kilómetros cuadrados.")
    course = make_chunk("El Ebro recorre unos 930 kilómetros hasta el mar Mediterráneo.")
    length = "¿Qué longitud tiene el Ebro?"
    area = "¿Qué superficie ocupa la cuenca del Ebro?"
    verdict = _verdict(length, make_hits(basin))
    assert not verdict.covered and verdict.failed == "unit", verdict.reason
    assert _verdict(length, make_hits(course)).covered
    verdict = _verdict(area, make_hits(course))
    assert not verdict.covered and verdict.failed == "unit", verdict.reason
    assert _verdict(area, make_hits(basin)).covered
    # Counted in a unit of length, "how many kilometres" asks for a length too.
    counted = "¿Cuántos kilómetros mide el Ebro?"
    assert _verdict(counted, make_hits(basin)).failed == "unit"
    assert _verdict(counted, make_hits(course)).covered
    assert _verdict("¿Cuántos kilómetros cuadrados ocupa la cuenca?", make_hits(basin)).covered
    lake = make_chunk("Lake Tahoe has a surface area of 191 square miles (490 km²).")
    assert _verdict("What is the total area of Lake Tahoe?", make_hits(lake)).covered
    assert not _verdict("How deep is Lake Tahoe?", make_hits(lake)).covered
    # "Surface" is no area asked.
    assert (
        _verdict(
            "¿Qué hay en la superficie del lago Tahoe?",
            make_hits(make_chunk("En la superficie del lago Tahoe hay barcos de vapor.")),
        ).failed
        != "unit"
    )


def test_a_japanese_place_asked_must_be_in_the_quoted_document() -> None:
    from generation.names import japanese_places

    question = "大阪城の天守の高さは何メートルですか？"
    assert "大阪" in japanese_places(question)
    assert japanese_places("大阪城的天守有多高？") == []  # Chinese: jieba's tags stay out
    matsumoto = make_chunk("松本城の天守は高さ約29メートルで、現存する五重六階の天守である。")
    verdict = _verdict(question, make_hits(matsumoto))
    assert not verdict.covered and "大阪" in verdict.reason
    osaka = make_chunk("大阪城の天守閣は高さ約55メートルで、1931年に復興された。")
    assert _verdict(question, make_hits(osaka)).covered
