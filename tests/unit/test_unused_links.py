"""The question's words a program leaves unused (questions/unused_links.py): linked to a part of the schema the
program neither walks, reads, tests nor names things by. Such words lower the confidence of its answer."""

from __future__ import annotations

from cypher.intent import Anchor, Condition, Hop, QueryIntent
from questions.linking import Link, Linking, SchemaTerm
from questions.unused_links import unplaced_words, unused_words

NODES = {"Airport": ["name", "icao", "iata", "elevation"], "City": ["name"], "Country": ["code", "capital"]}
AIRPORT = (frozenset({"Airport"}),)


def linked(*pairs: tuple[str, SchemaTerm]) -> Linking:
    return Linking(tuple(Link(words, term, "spelling", 1.0) for words, term in pairs), ())


ICAO = linked(("icao", SchemaTerm("property", "icao", "Airport")))


def test_a_key_the_question_names_and_the_program_never_reads_is_unused() -> None:
    lhr = Anchor("Airport", "iata", "LHR")
    assert unused_words(ICAO, QueryIntent(lhr, answer="names"), AIRPORT, NODES) == ("icao",)
    assert unused_words(ICAO, QueryIntent(lhr, answer="value", answer_key="icao"), AIRPORT, NODES) == ()


def test_walked_labels_relationships_tested_keys_and_values_are_used() -> None:
    linking = linked(
        ("airports", SchemaTerm("label", "Airport")),
        ("serve", SchemaTerm("relationship", "SERVES", "Airport->City")),
        ("cities", SchemaTerm("label", "City")),
        ("high", SchemaTerm("property", "elevation", "Airport")),
        ("named", SchemaTerm("property", "name", "City")),  # what the answer names its cities by
    )
    walk = QueryIntent(
        Anchor("Airport"), (Hop("SERVES"),), condition=Condition("elevation", ">", "100"), answer="names"
    )
    labels = (frozenset({"Airport"}), frozenset({"City"}))
    assert unused_words(linking, walk, labels, NODES) == ()
    capital = linked(("capital", SchemaTerm("property", "capital", "Country")), ("cities", SchemaTerm("label", "City")))
    assert unused_words(capital, walk, labels, NODES) == ("capital",)


def test_no_linking_no_unused_words() -> None:
    assert unused_words(None, QueryIntent(Anchor("Airport")), AIRPORT, NODES) == ()


def test_a_word_the_programs_form_realises_is_no_word_left_out() -> None:
    left = Linking((), ("share", "greater", "giraffe"))
    two = Anchor("Airport", "name", "A"), Anchor("Airport", "name", "B")
    shared = QueryIntent(two[0], (Hop("SERVES"),), "also_reached_from_other", two[1])
    assert unplaced_words(left, shared, "shared") == ("greater", "giraffe")
    compared = QueryIntent(Anchor("Airport"), condition=Condition("elevation", ">", "100"))
    assert unplaced_words(left, compared, "walk") == ("share", "giraffe")
    assert unplaced_words(left, QueryIntent(Anchor("Airport")), "walk") == ("share", "greater", "giraffe")


def test_a_word_spelling_several_parts_is_used_when_any_of_them_is() -> None:
    # "discovered" spells DISCOVERED_BY first, and the program walks DISCOVERED_IN
    linking = linked(("discovered", SchemaTerm("relationship", "DISCOVERED_BY", "Element->Discoverer")))
    walk = QueryIntent(Anchor("Element"), (Hop("DISCOVERED_IN"),))
    labels = (frozenset({"Element"}), frozenset({"Country"}))
    assert unused_words(linking, walk, labels, {"Element": ["name"], "Country": ["name"]}) == ()
