"""Every content word of a question is explained by a part of the schema, by spelling or by meaning, or is
recorded as unexplained: the words the agent did not understand."""

from __future__ import annotations

import pytest

from backends.schema_meaning import SchemaMeaning
from questions.linking import Link, Linking, SchemaTerm, canonical_question, content_words, link_question, schema_terms

pytestmark = pytest.mark.unit

NODES = {
    "Customer": {"name", "city"},
    "Employee": {"name", "title"},
    "Invoice": {"number", "total"},
    "Track": {"name", "milliseconds"},
}
RELS = {
    ("Customer", "SUPPORTED_BY", "Employee"),
    ("Employee", "REPORTS_TO", "Employee"),
    ("Invoice", "BILLED_TO", "Customer"),
    ("Invoice", "INCLUDES", "Track"),
}
TERMS = schema_terms(NODES, RELS)


def linked(question: str, spent: tuple[str, ...] = ()) -> dict[str, tuple[str, str]]:
    linking = SchemaMeaning().link(question, TERMS, spent)
    return {link.words: (link.term.kind, link.term.name) for link in linking.links}


def test_function_shape_and_number_words_need_no_explaining() -> None:
    assert content_words("How many of the invoices are there, and which is the largest?") == ["invoices"]
    assert content_words("Which three customers have the most invoices, and how many does each have?") == [
        "customers",
        "invoices",
    ]


def test_names_and_figures_the_question_gives_are_explained_already() -> None:
    assert content_words("Which invoices of Leonie Köhler are above 5?", spent=("Leonie Köhler",)) == ["invoices"]


def test_a_word_spelled_as_the_schema_spells_it_links_by_spelling() -> None:
    linking = link_question("Which customers are supported by Jane?", TERMS, None, spent=("Jane",))
    assert [(link.words, link.term.name, link.by) for link in linking.links] == [
        ("customers", "Customer", "spelling"),
        ("supported", "SUPPORTED_BY", "spelling"),
    ]
    assert linking.unexplained == ()


def test_without_the_encoder_a_lay_word_is_unexplained() -> None:
    linking = link_question("Which clients does Jane look after?", TERMS, None, spent=("Jane",))
    assert "clients" in linking.unexplained


def test_a_lay_word_links_by_meaning() -> None:
    assert linked("Which clients live in Berlin?", ("Berlin",))["clients"] == ("label", "Customer")


def test_a_word_nothing_in_the_schema_means_stays_unexplained() -> None:
    linking = SchemaMeaning().link("Which customers adopted a giraffe?", TERMS)
    assert "giraffe" in linking.unexplained
    assert ("customers", "Customer") in {(link.words, link.term.name) for link in linking.links}


def test_a_judged_word_replaces_the_vectors_link_and_none_leaves_it_unexplained() -> None:
    linking = SchemaMeaning().link("Which clients adopted a giraffe?", TERMS)
    assert set(linking.undecided()) >= {"adopted", "giraffe"}
    subdivision = SchemaTerm("label", "Employee")
    decided = linking.decided({"giraffe": None, "adopted": subdivision})
    assert ("adopted", "Employee", "model") in {(lk.words, lk.term.name, lk.by) for lk in decided.links}
    assert "giraffe" in decided.unexplained and "adopted" not in decided.unexplained
    framed = linking.decided({}, framing=("giraffe",))
    assert "giraffe" not in framed.unexplained and "giraffe" not in {lk.words for lk in framed.links}


def test_the_question_is_said_again_in_the_schemas_words_where_a_link_is_by_meaning() -> None:
    sent = SchemaTerm("relationship", "BILLED_TO", "Invoice->Customer")
    linking = Linking(
        (Link("clients", SchemaTerm("label", "Customer"), "meaning", 0.6), Link("sent", sent, "meaning", 0.6)), ()
    )
    assert canonical_question("Which invoices were sent to clients?", linking) == (
        "Which invoices were billed to customers?"
    )


def test_a_relationship_the_question_spells_is_not_said_twice() -> None:
    billed = SchemaTerm("relationship", "BILLED_TO", "Invoice->Customer")
    linking = Linking((Link("billed", billed, "spelling", 1.0), Link("sent", billed, "model", 1.0)), ())
    assert canonical_question("Which invoices were sent and billed?", linking) == "Which invoices were sent and billed?"


def test_a_judges_link_is_said_again_only_where_the_vectors_agree() -> None:
    customer, employee = SchemaTerm("label", "Customer"), SchemaTerm("label", "Employee")
    billed = SchemaTerm("relationship", "BILLED_TO", "Invoice->Customer")
    near = {"patrons": ((customer, 0.45), (employee, 0.4)), "sent": ((customer, 0.3),)}
    agreed = Linking((Link("patrons", customer, "model", 1.0), Link("sent", billed, "model", 1.0)), (), near)
    assert canonical_question("Which invoices were sent to patrons?", agreed) == (
        "Which invoices were sent to customers?"
    )
    disputed = Linking((Link("patrons", SchemaTerm("label", "Invoice"), "model", 1.0),), (), near)
    assert canonical_question("Which patrons?", disputed) == "Which patrons?"
