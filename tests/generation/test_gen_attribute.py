"""generation.attribute: a quote must say something of what the question asks of its topic."""

from __future__ import annotations

from gen_cases import make_chunk, make_hits

from generation.answerable import judge
from generation.attribute import asked_facet, facet_unmet
from generation.extractive import extract
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
