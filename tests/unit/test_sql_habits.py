"""SQL written into Cypher: the repair feedback names the pattern to match instead."""

from __future__ import annotations

from planning.sql_habits import subquery_hint

NODES = {"Book": ["title"], "Author": ["name"], "Genre": ["name"], "Library": ["city"]}
RELS = {("Author", "WROTE", "Book"), ("Book", "IN_GENRE", "Genre"), ("Library", "HOLDS", "Book")}


def test_a_subquery_comparing_a_qualified_property_gets_the_pattern_from_the_matched_labels() -> None:
    query = (
        "MATCH (a:Author {name: 'Le Guin'})-[:WROTE]->(:Book) "
        "WHERE a IN (SELECT b.title FROM Book WHERE Genre.name = 'Fantasy') RETURN b.title"
    )
    hint = subquery_hint(query, NODES, RELS)
    assert hint is not None and "no SQL subqueries" in hint
    assert hint.endswith("e.g. MATCH (:Book)-[:IN_GENRE]->(:Genre {name: 'Fantasy'})")


def test_a_subquery_comparing_an_unqualified_property_takes_the_label_of_its_from() -> None:
    query = "MATCH (b:Book) WHERE b.title IN (SELECT title FROM Library WHERE city = 'Oslo') RETURN b.title"
    assert subquery_hint(query, NODES, RELS).endswith("e.g. MATCH (:Book)<-[:HOLDS]-(:Library {city: 'Oslo'})")


def test_without_a_known_label_the_advice_stands_alone_and_cypher_gets_none() -> None:
    hint = subquery_hint("MATCH (b:Book) WHERE b.title IN (SELECT x FROM Shelf WHERE y = 'z') RETURN b", NODES, RELS)
    assert hint is not None and "e.g." not in hint
    assert subquery_hint("MATCH (b:Book) WHERE b.title = 'SELECT (x)' RETURN b.title", NODES, RELS) is None
    assert subquery_hint("MATCH (b:Book) WHERE b.title IN ['A', 'B'] RETURN b.title", NODES, RELS) is None
