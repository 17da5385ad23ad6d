"""The words a planner gets back for a path the schema lacks: how the two labels are connected instead."""

from __future__ import annotations

import pytest

from backends.schema_check import _connections

pytestmark = pytest.mark.unit

RELS = {("Order", "PLACED_WITH", "Vendor"), ("Order", "SHIPS_TO", "Depot"), ("Vendor", "MAKES", "Part"),
        ("Depot", "IN", "City")}


def test_labels_joined_directly_by_another_type_are_shown_that_type() -> None:
    assert _connections("(:Vendor)-[:SHIPS_TO]->(:Order)", RELS) == (
        "between Vendor and Order the graph has (:Order)-[:PLACED_WITH]->(:Vendor)")


def test_labels_one_label_apart_are_shown_the_two_hops() -> None:
    assert _connections("(:Vendor)-[:SHIPS_TO]->(:Depot)", RELS) == (
        "Vendor and Depot are connected through Order: (:Order)-[:PLACED_WITH]->(:Vendor), "
        "(:Order)-[:SHIPS_TO]->(:Depot)")


def test_labels_further_apart_are_said_to_be_so() -> None:
    assert _connections("(:Part)-[:IN]->(:City)", RELS) == (
        "Part and City are not connected by one or two relationships in this graph")
    assert _connections("(:Part)-[:IN]->()", RELS) == "use only the relationships the schema lists"


def test_a_property_named_like_a_neighbouring_label_points_at_its_relationship() -> None:
    from backends.schema_check import _related

    assert _related("Order", ["vendor_name"], RELS) == (
        "; vendor_name is the Vendor node: match (:Order)-[:PLACED_WITH]->(:Vendor) and read its properties")
    assert _related("Order", ["colour"], RELS) == ""
