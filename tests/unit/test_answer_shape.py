"""What shape of answer a question asks for (questions/answer_shape.py), from English function words alone:
the first shape read is the one the question means, across wordings and schemas."""

from __future__ import annotations

import pytest

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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("with an area greater than 200,000", (">", "200000")),
        ("whose population is less than 98", ("<", "98")),
        ("born at least 1950", (">=", "1950")),
        ("born before 1990", ("<", "1990")),
        ("route 66 in the region", None),  # a figure with no comparison before it
    ],
)
def test_a_comparison_with_a_figure(text: str, expected: tuple[str, str] | None) -> None:
    assert comparison(text) == expected


def test_how_two_named_things_combine() -> None:
    assert "shared" in answer_shape("Which films do A and B both appear in?", KEYS, True, LABELS).combines
    assert "excluded" in answer_shape("Which films is A in that B is not?", KEYS, True, LABELS).combines
    assert "connection" in answer_shape("Which city connects A and B?", KEYS, True, LABELS).combines
    # "between" in a question about the number of relationships asks a length, not what lies between
    length = answer_shape("How many relationships lie on the shortest path between A and B?", KEYS, False, LABELS)
    assert "connection" not in length.combines
