"""What shape of answer a question asks for (questions/answer_shape.py), from English function words alone:
the first shape read is the one the question means, across wordings and schemas."""

from __future__ import annotations

import pytest

from cypher.intent import Contrast
from questions.answer_shape import answer_shape, comparison, named_keys

KEYS = ["name", "population", "area", "area_code", "born"]
LABELS = ["Country", "City", "Person", "Region"]


@pytest.mark.parametrize(
    ("question", "asks_for_thing", "first"),
    [
        ("How many cities lie in the region?", True, "count"),
        ("What is the number of people born there?", False, "count"),
        ("What is the total population of the cities there?", False, "sum"),
        ("What is the average area of those countries?", False, "average"),
        ("What is the highest population among them?", False, "max"),
        ("What is the densest city?", False, "highest"),  # a superlative of a kind: the thing, not the figure
        ("What is the cheapest region?", False, "lowest"),
        ("Which city has the smallest population?", True, "lowest"),
        ("Name the country with the largest area.", True, "highest"),
        ("Which region has the most countries?", True, "most_connected"),
        ("Which person has the fewest relationships to films?", True, "least_connected"),
        ("What is the fewest number of relationship steps from A to B?", False, "path_length"),
        ("How many relationships lie on the shortest path between A and B?", False, "path_length"),
        ("What population does it have?", False, "value"),
        ("Which cities are in it?", True, "names"),
    ],
)
def test_the_first_shape_is_the_one_asked(question: str, asks_for_thing: bool, first: str) -> None:
    assert answer_shape(question, KEYS, asks_for_thing, LABELS).answers[0] == first


def test_a_key_named_with_number_is_read_not_counted() -> None:
    shape = answer_shape("What is the mass number of Cadmium-108?", ("mass", "mass_number", "number"), False)
    assert shape.answers[0] == "value" and shape.keys == ("mass_number", "mass", "number")
    assert answer_shape("What is the number of isotopes?", ("mass_number",), False).answers[0] == "count"


def test_every_shape_read_comes_once_and_names_is_always_there() -> None:
    shape = answer_shape("Which city has the highest population?", KEYS, True, LABELS)
    assert len(shape.answers) == len(set(shape.answers)) and "names" in shape.answers
    assert shape.keys == ("population",)


def test_keys_are_named_by_their_words_but_not_by_the_verb() -> None:
    # where two keys start together the longer comes first: "area code" reads `area_code` before `area`
    assert named_keys("what is the area code of it", KEYS) == ("area_code", "area")
    assert named_keys("what area has the area code 44", KEYS) == ("area", "area_code")
    assert named_keys("name the country with the largest area", KEYS) == ("area",)  # "name" is the verb
    # a first word that asks for no shape of answer may be the key itself, as terse questions put it
    assert named_keys("area of Iceland?", KEYS) == ("area",)
    assert named_keys("population, area and name of Iceland?", KEYS) == ("population", "area", "name")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("with an area greater than 200,000", (">", "200000")),
        ("whose population is less than 98", ("<", "98")),
        ("born at least 1950", (">=", "1950")),
        ("born before 1990", ("<", "1990")),
        ("route 66 in the region", None),  # a figure with no comparison before it
        ("with more than 100 million inhabitants", (">", "100000000")),  # a magnitude word is part of it
        ("cities of over a million people", (">", "1000000")),
        ("that border at least two others", (">=", "2")),  # a small number spelled out
        ("countries with 12 or more languages", (">=", "12")),  # the comparison said after the figure
        ("with 3 or fewer airports", ("<=", "3")),
        ("that married into just one other family", ("=", "1")),
        ("only 2 of them", ("=", "2")),
    ],
)
def test_a_comparison_with_a_figure(text: str, expected: tuple[str, str] | None) -> None:
    assert comparison(text) == expected


def test_how_two_named_things_combine() -> None:
    assert "shared" in answer_shape("Which films do A and B both appear in?", KEYS, True, LABELS).combines
    assert "excluded" in answer_shape("Which films is A in that B is not?", KEYS, True, LABELS).combines
    assert "connection" in answer_shape("Which city connects A and B?", KEYS, True, LABELS).combines
    assert "connection" in answer_shape("How is A connected to B?", KEYS, True, LABELS).combines
    assert "connection" in answer_shape("How are A and B related?", KEYS, True, LABELS).combines
    # what A reaches, said with "connected": no connection between two named things
    reached = answer_shape("Which films is A connected to through roles that B is not?", KEYS, True, LABELS)
    assert reached.combines == ("excluded",)
    # "between" in a question about the number of relationships asks a length, not what lies between
    length = answer_shape("How many relationships lie on the shortest path between A and B?", KEYS, False, LABELS)
    assert "connection" not in length.combines


def test_a_figure_that_counts_things_is_not_a_property_condition() -> None:
    def counted(question: str) -> bool:
        return answer_shape(question, KEYS, True, LABELS, ["HAS_PROVINCE", "DELIVER_TO"]).counted

    assert counted("Which countries have at least 4 cities?")  # a kind of thing the schema has
    assert counted("Which regions have more than 3 of the countries?")
    assert counted("Which warehouses got more than 10 deliveries?")  # what DELIVER_TO does
    assert not counted("Which countries have an area of more than 4000?")  # a property's figure
    assert counted("Which regions have more than 2 people living there?")  # an irregular plural of Person
    assert not counted("Which countries have more than 100 million people?")  # a measure in round words
    assert not counted("Which countries have an area of more than 4000 square kilometres?")
    assert counted("Which countries border just one other country?")  # a count of one is said in the singular


def test_how_many_things_pass_a_count_threshold_is_a_count() -> None:
    shape = answer_shape("How many countries have at least 100 cities?", KEYS, False, LABELS)
    assert shape.answers[0] == "count" and shape.comparison == (">=", "100")  # "at least" ranks nothing


def test_a_question_that_asks_for_what_lacks_something() -> None:
    def negated(question: str) -> bool:
        return answer_shape(question, KEYS, True, LABELS).negated

    assert negated("Which products does no supplier offer?")
    assert negated("List the airports that aren't tied to any city.")
    assert negated("Which elements were never discovered?")
    assert not negated("Which countries have no more than 3 neighbours?")  # a comparison, not a lack
    assert not negated("Which countries border Sweden?")


def test_two_named_things_set_against_each_other() -> None:
    def contrast(question: str) -> Contrast | None:
        return answer_shape(question, KEYS, True, LABELS).contrast

    assert contrast("Which has more people, A or B?") == Contrast(whether=False, higher=True)
    assert contrast("Is A smaller than B?") == Contrast(whether=True, higher=False)
    assert contrast("Was A born before B?") == Contrast(whether=True, higher=False)
    assert contrast("Who is older, A or B?") == Contrast(whether=False, higher=True, aged=True)
    assert contrast("Which sits higher, the one coded A or the one coded B?") is not None  # "one": no figure
    assert contrast("Which countries have more than 3 cities?") is None  # a threshold
    assert contrast("Which country has more cities?") is None  # no choice offered, no yes or no asked


def test_a_figure_right_after_a_keys_word_states_that_key() -> None:
    def stated(question: str) -> tuple[tuple[str, str], ...]:
        return answer_shape(question, [*KEYS, "fips", "atomic_number"], True, LABELS).stated

    assert stated("which county has the fips code 06037?") == (("fips", "06037"),)
    assert stated("what element is number 74?") == (("atomic_number", "74"),)
    assert stated("which countries have a population over 5000?") == ()  # compared, not stated
    assert stated("which cities were founded in 1990?") == ()  # no key's word before it
    assert stated("name the 3 largest countries") == ()  # the verb that opens it is no key


def test_a_key_of_several_words_said_apart_is_named() -> None:
    keys = ["lead_time_days", "payment_terms_days", "name"]
    assert named_keys("What is Hooli's lead time on Solvent Pro, in days?", keys) == ("lead_time_days",)
    assert named_keys("What is the lead time?", keys) == ()  # its unit never said: not this key
    assert named_keys("How many days are the payment terms?", keys) == ()  # its first words not said together


def test_how_many_a_ranking_asks_for_and_what_it_counts() -> None:
    keys = ["population", "name"]
    three = answer_shape("what are the 3 biggest cities of by population?", keys, False, ["City"])
    assert three.top == 3 and three.answers[0] == "highest"  # several things, never one figure
    five = answer_shape("give me the five time zones with the most airports", keys, False, ["Timezone", "Airport"])
    assert five.top == 5 and five.ranked_by == "airports" and five.answers[0] == "most_connected"
    assert answer_shape("which city has the highest population?", keys, True, ["City"]).top == 0
    assert answer_shape("which cities have more than 3 airports?", keys, True, ["City", "Airport"]).top == 0
