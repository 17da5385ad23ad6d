"""Clause-order repairs: the SQL habits a small model writes into Cypher become the query it meant."""

from __future__ import annotations

import pytest

from cypher.clause_order import (
    aggregate_order_alias,
    and_for_where,
    clauses,
    final_with,
    repaired,
    return_mid_query,
    sql_not_equal,
    where_after_return,
)


def test_a_filter_written_after_return_moves_in_front_of_it() -> None:
    query = "MATCH (c:Country) RETURN count(c) AS n WHERE c.population > 10000000"
    assert where_after_return(query) == "MATCH (c:Country) WHERE c.population > 10000000 RETURN count(c) AS n"


def test_a_filter_after_return_joins_an_existing_where_without_escaping_its_or() -> None:
    query = "MATCH (c:Country) WHERE c.area > 5 RETURN c.name WHERE c.a = 1 OR c.b = 2 LIMIT 3"
    assert where_after_return(query) == (
        "MATCH (c:Country) WHERE c.area > 5 AND (c.a = 1 OR c.b = 2) RETURN c.name LIMIT 3"
    )


def test_a_filter_on_returned_aliases_becomes_with_where_then_return() -> None:
    query = "MATCH (s)<--(o) RETURN s.name AS name, count(o) AS n WHERE n > 5 ORDER BY n DESC"
    assert where_after_return(query) == (
        "MATCH (s)<--(o) WITH s.name AS name, count(o) AS n WHERE n > 5 RETURN name, n ORDER BY n DESC"
    )


def test_a_having_filter_over_an_unnamed_item_is_left_alone() -> None:
    query = "MATCH (s)<--(o) RETURN s.name, count(o) AS n WHERE n > 5"
    assert where_after_return(query) == query


def test_an_optional_match_keeps_its_meaning_the_filter_applies_to_rows() -> None:
    query = "OPTIONAL MATCH (s:S)-->(o) RETURN count(o) AS n WHERE s.name = 'x'"
    assert where_after_return(query) == "OPTIONAL MATCH (s:S)-->(o) WITH * WHERE s.name = 'x' RETURN count(o) AS n"


def test_an_aggregate_in_order_by_uses_the_projections_alias() -> None:
    query = "MATCH (s)<--(o) RETURN s.name AS name, count(o) AS c ORDER BY count(o) DESC, name LIMIT 3"
    assert aggregate_order_alias(query) == (
        "MATCH (s)<--(o) RETURN s.name AS name, count(o) AS c ORDER BY c DESC, name LIMIT 3"
    )


def test_an_aggregate_in_order_by_missing_from_the_projection_is_added_under_a_fresh_alias() -> None:
    query = "MATCH (s)<--(o) RETURN DISTINCT s.name ORDER BY count(o) DESC LIMIT 3"
    assert aggregate_order_alias(query) == (
        "MATCH (s)<--(o) RETURN DISTINCT s.name, count(o) AS order_key1 ORDER BY order_key1 DESC LIMIT 3"
    )


def test_an_unaliased_projected_aggregate_gets_the_alias_in_place() -> None:
    query = "MATCH (s)<--(o) WITH s, sum(o.total) ORDER BY sum(o.total) RETURN s"
    assert aggregate_order_alias(query) == (
        "MATCH (s)<--(o) WITH s, sum(o.total) AS order_key1 ORDER BY order_key1 RETURN s"
    )


def test_a_return_in_the_middle_of_a_query_becomes_with() -> None:
    query = "MATCH (s:S {name: 'A'}) RETURN s MATCH (s)<--(o) RETURN count(o)"
    assert return_mid_query(query) == "MATCH (s:S {name: 'A'}) WITH s MATCH (s)<--(o) RETURN count(o)"


def test_sql_not_equal_becomes_cyphers_outside_string_literals() -> None:
    query = "MATCH (p:P) WHERE p.a != 'x != y' AND size([x IN p.l WHERE x != 1]) > 0 RETURN p"
    assert sql_not_equal(query) == "MATCH (p:P) WHERE p.a <> 'x != y' AND size([x IN p.l WHERE x <> 1]) > 0 RETURN p"


def test_a_query_ending_with_with_ends_with_return() -> None:
    query = "MATCH (s:S)<--(o) WITH s, count(o) AS n WHERE n > 1 WITH s.name AS name, n ORDER BY n DESC LIMIT 3"
    assert final_with(query) == (
        "MATCH (s:S)<--(o) WITH s, count(o) AS n WHERE n > 1 RETURN s.name AS name, n ORDER BY n DESC LIMIT 3"
    )
    for untouched in (
        "MATCH (s:S) WITH s RETURN s",
        "MATCH (s:S) WITH s WHERE s.a > 1",
        "MATCH (s:S) WITH s UNION MATCH (t:T) WITH t",
    ):
        assert final_with(untouched) == untouched


def test_a_mid_query_return_of_an_unnamed_expression_is_left_alone() -> None:
    query = "MATCH (s:S) RETURN s.name MATCH (o) RETURN o"
    assert return_mid_query(query) == query


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (s:S) WHERE s.name = 'x, RETURN y WHERE z' RETURN s.name",
        "MATCH (s:S) RETURN s.name, [x IN s.tags WHERE x > 1] AS tags ORDER BY s.name",
        "MATCH (s:S)<--(o) RETURN s.name AS n, count(o) AS c ORDER BY c DESC",
        "MATCH (s:S) WITH s WHERE s.a > 1 RETURN s UNION MATCH (t:T) RETURN t AS s",
    ],
)
def test_valid_queries_and_words_inside_strings_or_brackets_are_never_touched(query: str) -> None:
    assert repaired(query) is None


def test_clauses_are_found_at_the_top_level_only() -> None:
    query = "MATCH (n WHERE n.x = 'RETURN') RETURN [m IN n.l WHERE m > 0] ORDER BY n.x"
    assert [c.keyword for c in clauses(query)] == ["MATCH", "RETURN", "ORDER BY"]


def test_a_condition_joined_to_a_match_pattern_by_and_is_its_where() -> None:
    assert and_for_where("MATCH (b:Book)-[:IN]->(g {name: 'x'}) AND b.pages >= 300 RETURN b.title") == (
        "MATCH (b:Book)-[:IN]->(g {name: 'x'}) WHERE b.pages >= 300 RETURN b.title"
    )
    assert and_for_where("MATCH (a:A) AND a.x = 1 MATCH (b:B) AND b.y = 2 RETURN a, b") == (
        "MATCH (a:A) WHERE a.x = 1 MATCH (b:B) WHERE b.y = 2 RETURN a, b"
    )


def test_an_and_already_in_a_where_or_in_a_string_or_before_a_where_is_left_alone() -> None:
    for query in (
        "MATCH (b:Book) WHERE b.a = 1 AND b.c = 2 RETURN b",
        "MATCH (b:Book {title: 'War AND Peace'}) RETURN b",
        "MATCH (b:Book) AND b.a = 1 WHERE b.c = 2 RETURN b",
    ):
        assert and_for_where(query) == query


def test_the_length_of_a_property_is_its_size_and_a_paths_length_stays() -> None:
    """FalkorDB's length() takes a path only: `ORDER BY length(s.name)` failed every such query."""
    assert (
        repaired("MATCH (s:Site) RETURN s.name ORDER BY length(s.name) LIMIT 1")
        == "MATCH (s:Site) RETURN s.name ORDER BY size(s.name) LIMIT 1"
    )
    assert repaired("MATCH p = (a)-[*1..3]-(b) RETURN length(p)") is None
    assert repaired("MATCH (s:Site) WHERE s.note = 'length(s.name)' RETURN s") is None  # inside a string


def test_every_mid_query_return_becomes_with_up_to_one_that_cannot() -> None:
    """In one reading of the query: each RETURN followed by a reading clause, in order, until one whose items
    cannot all be named afterwards."""
    query = "MATCH (a) RETURN a MATCH (a)-->(b) RETURN b MATCH (b)-->(c) RETURN c.x MATCH (c)-->(d) RETURN d"
    assert return_mid_query(query) == (
        "MATCH (a) WITH a MATCH (a)-->(b) WITH b MATCH (b)-->(c) RETURN c.x MATCH (c)-->(d) RETURN d"
    )
