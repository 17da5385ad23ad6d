"""A descending ranking by a property leaves out the rows without it (cypher/null_order.py): FalkorDB sorts
null above every value, so "the highest population" came back as a country with none."""

from __future__ import annotations

import pytest

from cypher.null_order import ranked_without_nulls


def test_a_ranking_through_an_alias_keeps_only_rows_with_the_property() -> None:
    query = "MATCH (c:Country) RETURN c.name AS country, c.population AS population ORDER BY population DESC LIMIT 1"
    assert ranked_without_nulls(query) == (
        "MATCH (c:Country) WHERE c.population IS NOT NULL RETURN c.name AS "
        "country, c.population AS population ORDER BY population DESC LIMIT 1"
    )


def test_an_existing_condition_is_kept_whole_before_the_new_one() -> None:
    """`a OR b AND x` would read as `a OR (b AND x)`: the existing condition is bracketed."""
    query = (
        "MATCH (c:Country)-[:BORDERS]->(n) WHERE n.name = 'A' OR n.name = 'B' RETURN c.name ORDER BY c.population DESC"
    )
    assert ranked_without_nulls(query) == (
        "MATCH (c:Country)-[:BORDERS]->(n) WHERE (n.name = 'A' OR n.name = 'B') "
        "AND c.population IS NOT NULL RETURN c.name ORDER BY c.population DESC"
    )


def test_words_inside_strings_are_not_read_as_clauses() -> None:
    query = "MATCH (c {name: 'RETURN WITH x'}) RETURN c.`area_km2` AS area ORDER BY area DESC"
    assert ranked_without_nulls(query) == (
        "MATCH (c {name: 'RETURN WITH x'}) WHERE c.`area_km2` IS NOT NULL "
        "RETURN c.`area_km2` AS area ORDER BY area DESC"
    )


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (c:Country) RETURN c.name ORDER BY c.population ASC",  # nulls already last
        "MATCH (c:Country)<-[:IN]-(p) RETURN c.name, count(p) AS n ORDER BY n DESC",  # a count is never null
        "MATCH (c:Country) WITH c RETURN c.name ORDER BY c.population DESC",  # the WITH may rename c
        "MATCH (a) OPTIONAL MATCH (a)-->(b) RETURN b.x ORDER BY b.x DESC",  # a WHERE would filter the optional rows
        "MATCH (c:Country) WHERE c.population IS NOT NULL RETURN c.name ORDER BY c.population DESC",
    ],
)
def test_shapes_it_cannot_read_for_certain_or_need_nothing_are_left_as_written(query: str) -> None:
    assert ranked_without_nulls(query) is None
