"""The key a question means without naming it (questions/meant_keys.py), read from the whole sentence with the
real sentence encoder: a clear winner among the keys of the things it is about, or none."""

from __future__ import annotations

from backends.schema_meaning import SchemaMeaning
from contracts.query_path import EntityMatch, Grounding
from questions.meant_keys import around, key_descriptions, said_with_kinds

NODES = {
    "Airport": ["name", "elevation_ft", "latitude", "longitude", "iata"],
    "Country": ["name", "code"],
    "Person": ["name", "age", "role"],
    "Town": ["name", "population"],
}
MEANING = SchemaMeaning()


def test_the_sentence_means_the_key_its_words_do_not_name() -> None:
    assert MEANING.meant_keys(["How high is the airport?"], ["Airport"], NODES) == ("elevation_ft",)
    assert MEANING.meant_keys(["How old is the person?"], ["Person"], NODES) == ("age",)
    assert MEANING.meant_keys(["How many people live in the town?"], ["Town"], NODES) == ("population",)


def test_a_sentence_that_asks_for_no_key_means_none() -> None:
    assert MEANING.meant_keys(["Which country is the airport in?"], ["Airport", "Country"], NODES) == ()
    assert MEANING.meant_keys(["Who does the person know?"], ["Person"], NODES) == ()
    assert MEANING.meant_keys(["How high is it?"], [], NODES) == ()  # no kind of thing: no key


def test_names_are_said_as_their_kinds_and_the_naming_key_is_never_meant() -> None:
    denver = EntityMatch(
        mention="Denver International", label="Airport", property="name", value="Denver Intl", how="exact"
    )
    grounding = Grounding(matches=[denver])
    assert said_with_kinds("How high up is denver international?", grounding) == "How high up is the airport?"
    assert [key for key, _ in key_descriptions(["Airport"], NODES)] == ["elevation_ft", "latitude", "longitude", "iata"]
    assert key_descriptions(["Country"], NODES) == [("code", "country code")]


def test_a_long_sentence_is_read_where_its_unexplained_words_are_said() -> None:
    sentence = "On average, how high are the airports serving cities in the country?"
    spans = around(sentence, ["high"])
    assert spans == ["how high are the airports"]
    assert MEANING.meant_keys([*spans, sentence], ["Airport", "Country"], NODES) == ("elevation_ft",)
