"""The words a planner gets back for a path the schema lacks: how the two labels are connected instead."""

from __future__ import annotations

import pytest

from backends.schema_check import _connections

pytestmark = pytest.mark.unit

RELS = {
    ("Order", "PLACED_WITH", "Vendor"),
    ("Order", "SHIPS_TO", "Depot"),
    ("Vendor", "MAKES", "Part"),
    ("Depot", "IN", "City"),
}


def test_labels_joined_directly_by_another_type_are_shown_that_type() -> None:
    assert _connections("(:Vendor)-[:SHIPS_TO]->(:Order)", RELS) == (
        "between Vendor and Order the graph has (:Order)-[:PLACED_WITH]->(:Vendor)"
    )


def test_labels_one_label_apart_are_shown_the_two_hops() -> None:
    assert _connections("(:Vendor)-[:SHIPS_TO]->(:Depot)", RELS) == (
        "Vendor and Depot are connected through Order: (:Order)-[:PLACED_WITH]->(:Vendor), "
        "(:Order)-[:SHIPS_TO]->(:Depot)"
    )


def test_labels_further_apart_are_said_to_be_so() -> None:
    assert _connections("(:Part)-[:IN]->(:City)", RELS) == (
        "Part and City are not connected by one or two relationships in this graph"
    )
    assert _connections("(:Part)-[:IN]->()", RELS) == "use only the relationships the schema lists"


def test_a_property_named_like_a_neighbouring_label_points_at_its_relationship() -> None:
    from backends.schema_check import _related

    assert _related("Order", ["vendor_name"], RELS) == (
        "; vendor_name is the Vendor node: match (:Order)-[:PLACED_WITH]->(:Vendor) and read its properties"
    )
    assert _related("Order", ["colour"], RELS) == ""


@pytest.mark.parametrize(
    ("original", "path", "expected"),
    [
        (
            "(o:Order {id: 'A'})-[:SHIPS_TO]->(v:Vendor)",
            "(:Order)-[:SHIPS_TO]->(:Vendor)",
            "(o:Order {id: 'A'})-[:PLACED_WITH]->(v:Vendor)",
        ),
        ("(v:Vendor)-[r:OWNS]->(o:Order)", "(:Vendor)-[:OWNS]->(:Order)", "(v:Vendor)<-[r:PLACED_WITH]-(o:Order)"),
        ("(d:Depot)<-[:HAS]-(c:City)", "(:Depot)<-[:HAS]-(:City)", "(d:Depot)-[:IN]->(c:City)"),
    ],
)
def test_a_relationship_missing_between_two_labels_becomes_the_only_one_there(
    original: str, path: str, expected: str
) -> None:
    from backends.schema_check import only_relationship

    assert only_relationship(original, path, RELS) == expected


def test_no_certain_replacement_no_change() -> None:
    from backends.schema_check import only_relationship

    two = {*RELS, ("Order", "BILLED_BY", "Vendor")}
    assert only_relationship("(o:Order)-[:X]->(v:Vendor)", "(:Order)-[:X]->(:Vendor)", two) is None
    assert only_relationship("(p:Part)-[:IN]->(c:City)", "(:Part)-[:IN]->(:City)", RELS) is None
    assert only_relationship("(o:Order)-[:X*1..3]->(v:Vendor)", "(:Order)-[:X]->(:Vendor)", RELS) is None


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "MATCH (o:Order)-[:PLACED_WITH]->(v:Vendor) RETURN o",
            "MATCH (o:PurchaseOrder)-[:PLACED_WITH]->(v:Vendor) RETURN o",
        ),
        (
            "MATCH (o:Order {id: 1}), (x) WHERE x:Order RETURN o",
            "MATCH (o:PurchaseOrder {id: 1}), (x) WHERE x:PurchaseOrder RETURN o",
        ),
        ("MATCH (:Order) RETURN 1", "MATCH (:PurchaseOrder) RETURN 1"),
    ],
)
def test_an_unknown_label_that_can_only_mean_one_label_is_renamed(query: str, expected: str) -> None:
    from backends.schema_check import renamed_label

    assert renamed_label(query, "Order", ["PurchaseOrder", "Vendor", "Depot"]) == expected


def test_an_unknown_label_is_left_for_the_planner_when_it_could_mean_several_or_none() -> None:
    from backends.schema_check import closest_label, renamed_label

    labels = ["PurchaseOrder", "SalesOrder", "Vendor"]
    assert closest_label("Order", labels) is None
    assert closest_label("Duration", labels) is None
    assert closest_label("vendor", labels) == "Vendor"
    assert renamed_label("MATCH (o:Order) RETURN o", "Order", labels) is None
    assert renamed_label("MATCH (o)-[:Order]->(x) RETURN o", "Order", ["PurchaseOrder"]) is None
