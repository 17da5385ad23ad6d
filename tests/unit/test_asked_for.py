"""Which kind of thing a question asks for, and the schema's route to it from what a query matches."""

from __future__ import annotations

import pytest

from questions.asked_for import asked_label, counted_label, route

LABELS = ["Supplier", "PurchaseOrder", "Invoice", "Payment", "Warehouse"]
RELS = {
    ("PurchaseOrder", "ISSUED_TO", "Supplier"),
    ("Invoice", "BILLS", "PurchaseOrder"),
    ("Payment", "SETTLES", "Invoice"),
    ("PurchaseOrder", "DELIVER_TO", "Warehouse"),
}


@pytest.mark.parametrize(
    ("question", "label"),
    [
        ("Which supplier was paid by payment PAY-00481?", "Supplier"),
        ("Which suppliers deliver to Lyon?", "Supplier"),
        ("what purchase orders did Acme get?", "PurchaseOrder"),
        ("Invoice INV-1 bills which purchase order?", "PurchaseOrder"),
        ("How many invoices are open?", None),  # asks for a number
        ("What is the status of PO-1?", None),  # "what is": no kind of thing
        ("Which city is warehouse WH-1 in?", None),  # a property, not a label
    ],
)
def test_the_kind_of_thing_asked_for_is_the_label_after_which_or_what(question: str, label: str | None) -> None:
    assert asked_label(question, LABELS) == label


def test_the_route_is_the_shortest_schema_path_in_each_relationship_direction() -> None:
    assert (
        route(["Payment", "Invoice"], "Supplier", RELS)
        == "(:Invoice)-[:BILLS]->(:PurchaseOrder)-[:ISSUED_TO]->(:Supplier)"
    )
    assert (
        route(["Supplier"], "Payment", RELS)
        == "(:Supplier)<-[:ISSUED_TO]-(:PurchaseOrder)<-[:BILLS]-(:Invoice)<-[:SETTLES]-(:Payment)"
    )
    assert route(["Supplier"], "Bank", RELS | {("Payment", "PAID_FROM", "Bank")}) is None  # four hops: too far
    assert route([], "Supplier", RELS) is None


def test_how_many_are_asked_for_is_read_past_to_what() -> None:
    labels = ["Supplier", "PurchaseOrder", "Country"]
    assert asked_label("Which three suppliers have the most purchase orders?", labels) == "Supplier"
    assert asked_label("Which 5 countries are largest?", labels) == "Country"
    assert asked_label("What top 3 purchase orders cost most?", labels) == "PurchaseOrder"
    assert counted_label("List the 10 countries with the most suppliers", labels) == "Country"
    # words that say which ones, not what they are
    assert asked_label("Which other countries use a currency that Peru uses?", labels) == "Country"
    assert asked_label("Besides PO-1, which remaining purchase orders went to Acme?", labels) == "PurchaseOrder"
    assert asked_label("What is the area of Peru?", labels) is None  # "is" says no number: nothing asked for


def test_the_label_asked_for_after_capitalised_words_that_say_which() -> None:
    labels = ["Country", "State", "County", "Region"]
    assert asked_label("Which US state has the most counties?", labels) == "State"
    assert asked_label("Which Western European country borders the most others?", labels) == "Country"
    assert counted_label("How many Vietnamese cities are there?", ["City"]) == "City"
    assert counted_label("How many in Peru?", labels) is None and counted_label("List Peru", labels) is None
    assert asked_label("What percentage of countries are in Europe?", labels) is None  # not a modifier: a value
