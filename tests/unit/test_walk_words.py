"""Each candidate walk in plain words built from the schema's names (cypher/walk_words.py): along an arrow or
backwards, from a named thing or from every node of a label, shared, excluded and connecting, numbered as the
model chooses them."""

from __future__ import annotations

from cypher.intent import THROUGH, Anchor, Hop, QueryIntent
from cypher.walk_space import Walk
from cypher.walk_words import describe_walk, numbered

SWEDEN = Anchor("Country", "name", "Sweden")
ACME, GLOBEX = Anchor("Supplier", "name", "Acme"), Anchor("Supplier", "name", "Globex")


def labels(*names: str) -> tuple[frozenset[str], ...]:
    """One label set per node along a walk; "A|B": a node that can be either."""
    return tuple(frozenset(name.split("|")) for name in names)


def test_a_walk_along_the_arrows() -> None:
    walk = Walk("walk", QueryIntent(SWEDEN, (Hop("BORDERS"), Hop("IN_REGION"))), labels("Country", "Country", "Region"))
    assert describe_walk(walk) == 'from the Country "Sweden", follow BORDERS to a Country, then IN_REGION to a Region'


def test_a_hop_against_the_arrow_says_backwards_and_both_ends() -> None:
    walk = Walk(
        "walk",
        QueryIntent(Anchor("Province", "name", "Skane"), (Hop("HAS_PROVINCE", "incoming"),)),
        labels("Province", "Country"),
    )
    assert describe_walk(walk) == (
        'from the Province "Skane", follow HAS_PROVINCE backwards (from Province to Country)'
    )


def test_every_node_of_a_label_the_thing_itself_and_several_labels() -> None:
    every = Walk("walk", QueryIntent(Anchor("Invoice"), (Hop("BILLS"),)), labels("Invoice", "Order|Account"))
    assert describe_walk(every) == "from every Invoice, follow BILLS to an Account or an Order"
    assert describe_walk(Walk("walk", QueryIntent(SWEDEN), labels("Country"))) == 'the Country "Sweden" itself'
    assert describe_walk(Walk("walk", QueryIntent(Anchor("City")), labels("City"))) == "every City"


def test_shared_excluded_and_connecting_walks() -> None:
    shared = Walk(
        "shared",
        QueryIntent(ACME, (Hop("SUPPLIES"),), "also_reached_from_other", GLOBEX),
        labels("Supplier", "Product"),
    )
    assert describe_walk(shared) == (
        'the Product nodes reached both from the Supplier "Acme" and from the Supplier '
        '"Globex": from each, follow SUPPLIES to a Product'
    )
    excluded = Walk(
        "excluded",
        QueryIntent(ACME, (Hop("SUPPLIES"),), "not_reached_from_other", GLOBEX),
        labels("Supplier", "Product"),
    )
    assert 'reached from the Supplier "Acme" but NOT from the Supplier "Globex"' in describe_walk(excluded)
    connection = Walk(
        "connection",
        QueryIntent(ACME, (Hop("SUPPLIES"), Hop("SUPPLIES", "incoming")), THROUGH, GLOBEX),
        labels("Supplier", "Product", "Supplier"),
    )
    assert describe_walk(connection) == (
        'the Product nodes between the Supplier "Acme" and the Supplier "Globex": from the first, follow '
        "SUPPLIES to a Product, then SUPPLIES backwards (from Product to Supplier)"
    )
    distance = Walk("distance", QueryIntent(ACME, (), other=GLOBEX, answer="path_length"), labels("Supplier"))
    assert describe_walk(distance) == 'how many relationships lie between the Supplier "Acme" and the Supplier "Globex"'


def test_a_name_with_quotes_stays_one_quoted_value() -> None:
    walk = Walk("walk", QueryIntent(Anchor("Film", "title", 'The "Best" Film')), labels("Film"))
    assert describe_walk(walk) == 'the Film "The \\"Best\\" Film" itself'


def test_walks_are_numbered_from_one() -> None:
    walks = [
        Walk("walk", QueryIntent(SWEDEN), labels("Country")),
        Walk("walk", QueryIntent(SWEDEN, (Hop("BORDERS"),)), labels("Country", "Country")),
    ]
    assert numbered(walks) == (
        '1. the Country "Sweden" itself\n2. from the Country "Sweden", follow BORDERS to a Country'
    )
