"""Cypher helpers: broadening a query for the adjusted retry, and the literals the evaluator checks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cypher.text import MAX_HOPS, broaden_cypher, query_literals, query_shape

pytestmark = pytest.mark.unit

# plain words: no quotes, backslashes or braces, so they are always safe inside a '...' literal
WORDS = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -", min_size=1, max_size=20
).filter(lambda s: s.strip())


def contains(prop: str, value: str) -> str:
    return f"toLower({prop}) CONTAINS toLower('{value}')"


# -- broaden_cypher ----------------------------------------------------------------------------------


def test_an_inline_exact_match_becomes_a_case_insensitive_contains() -> None:
    """'acme' finds 'Acme Corp' on the adjusted retry: the inline property map moves into a WHERE."""
    assert broaden_cypher("MATCH (s:Supplier {name: 'acme'}) RETURN s") == (
        f"MATCH (s:Supplier) WHERE {contains('s.name', 'acme')} RETURN s"
    )


def test_every_string_property_of_an_inline_map_is_broadened() -> None:
    """All string properties of the map are kept as conditions, joined with AND."""
    assert broaden_cypher("MATCH (n:Person {name: 'Alice', city: 'Oslo'}) RETURN n") == (
        f"MATCH (n:Person) WHERE {contains('n.name', 'Alice')} AND {contains('n.city', 'Oslo')} RETURN n"
    )


def test_inline_conditions_join_an_existing_where() -> None:
    """An existing WHERE keeps its own condition and gains the broadened ones."""
    broadened = broaden_cypher("MATCH (p:Product {name: 'bolt'}) WHERE p.price > 10 RETURN p")
    assert broadened == f"MATCH (p:Product) WHERE {contains('p.name', 'bolt')} AND p.price > 10 RETURN p"


def test_inline_conditions_go_before_a_with_clause() -> None:
    """Without a WHERE the conditions are placed before the first WITH (or RETURN)."""
    broadened = broaden_cypher("MATCH (p:Product {name: 'bolt'}) WITH p RETURN p.name")
    assert broadened == f"MATCH (p:Product) WHERE {contains('p.name', 'bolt')} WITH p RETURN p.name"


def test_an_equality_in_where_becomes_a_case_insensitive_contains() -> None:
    """n.prop = 'value' in a WHERE is broadened the same way as an inline map."""
    assert broaden_cypher("MATCH (n) WHERE n.name = 'Bob' RETURN n") == (
        f"MATCH (n) WHERE {contains('n.name', 'Bob')} RETURN n"
    )


def test_a_map_with_non_string_values_is_left_alone() -> None:
    """Numbers and parameters cannot be broadened to CONTAINS; such a map stays exactly as written."""
    assert broaden_cypher("MATCH (n:Person {age: 3}) RETURN n") is None
    assert broaden_cypher("MATCH (n:Person {name: 'Al', age: 3}) RETURN n") is None


@pytest.mark.parametrize(("hops", "wider"), [("*..3", "*..5"), ("*1..2", "*1..4"), ("*2..5", "*2..6")])
def test_bounded_paths_get_two_more_hops_up_to_the_maximum(hops: str, wider: str) -> None:
    """A path search that found nothing may reach further, but never past MAX_HOPS."""
    assert broaden_cypher(f"MATCH p=(a)-[{hops}]->(b) RETURN p") == f"MATCH p=(a)-[{wider}]->(b) RETURN p"


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (n) RETURN n",
        "MATCH (n:Person {age: 3}) RETURN n",
        f"MATCH p=(a)-[*1..{MAX_HOPS}]->(b) RETURN p",
        "MATCH (n) WHERE toLower(n.name) CONTAINS toLower('x') RETURN n",
        "",
    ],
)
def test_a_query_that_cannot_be_broadened_gives_none(query: str) -> None:
    """None tells the workflow to ask the LLM to adjust the step instead of retrying the same query."""
    assert broaden_cypher(query) is None


def test_an_inline_map_without_a_place_for_where_is_not_broadened() -> None:
    """A query with no WHERE, WITH or RETURN is left for the LLM rather than rewritten into something invalid."""
    assert broaden_cypher("MATCH (n:Person {name: 'Alice'})") is None


def test_broadening_an_already_broadened_query_changes_nothing_more() -> None:
    """The second adjusted retry does not stack CONTAINS on CONTAINS."""
    once = broaden_cypher("MATCH (n:Person {name: 'Alice'}) RETURN n")
    assert once is not None
    assert broaden_cypher(once) is None


@given(st.sampled_from(["name", "title"]), WORDS)
@settings(database=None)
def test_broadening_keeps_every_value_the_query_names(prop: str, value: str) -> None:
    """The broadened query still filters on the same values, now as CONTAINS matches."""
    query = f"MATCH (n:Thing {{{prop}: '{value}'}}) RETURN n"
    broadened = broaden_cypher(query)
    assert broadened is not None
    assert query_literals(query) == [(value, "exact")]
    assert query_literals(broadened) == [(value, "contains")]


def test_a_broadened_condition_still_applies_to_every_branch_of_an_or() -> None:
    """Broadening Acme's products must not return products of every supplier that matches the OR branch."""
    broadened = broaden_cypher(
        "MATCH (s:Supplier {name: 'Acme'})-[:SUPPLIES]->(p) WHERE p.price > 10 OR p.stock = 0 RETURN p"
    )
    assert broadened == (
        f"MATCH (s:Supplier)-[:SUPPLIES]->(p) WHERE {contains('s.name', 'Acme')} AND "
        "(p.price > 10 OR p.stock = 0) RETURN p"
    )


def test_a_condition_is_placed_after_the_match_that_binds_its_variable() -> None:
    """A two-MATCH query stays valid Cypher: the condition on b is not moved before b is matched."""
    broadened = broaden_cypher("MATCH (a) WHERE a.x > 1 MATCH (b:B {name: 'X'}) RETURN b")
    assert broadened is not None
    assert broadened.index("MATCH (b:B)") < broadened.index(contains("b.name", "X"))


@pytest.mark.parametrize("hops", ["*1..10", "*7..9"])
def test_broadening_never_narrows_a_path_search(hops: str) -> None:
    """The adjusted retry's query reaches at least as far as the original one."""
    broadened = broaden_cypher(f"MATCH p=(a)-[{hops}]->(b) RETURN p")
    assert broadened is None or broadened == f"MATCH p=(a)-[{hops}]->(b) RETURN p"


# -- query_literals ----------------------------------------------------------------------------------


def test_literals_are_listed_in_order_with_their_match_mode() -> None:
    """The evaluator checks inline and = values exactly, CONTAINS values as substrings."""
    query = (
        "MATCH (s:Supplier {name: 'Acme'})-[:SUPPLIES]->(p) WHERE p.sku = 'B-12' "
        "AND toLower(p.name) CONTAINS toLower('bolt') AND p.note CONTAINS 'steel' RETURN p"
    )
    assert query_literals(query) == [("Acme", "exact"), ("B-12", "exact"), ("bolt", "contains"), ("steel", "contains")]


def test_contains_is_recognised_in_any_case() -> None:
    """Cypher keywords are case-insensitive, so is the CONTAINS detection."""
    assert query_literals("MATCH (n) WHERE n.name contains 'ac' RETURN n") == [("ac", "contains")]


def test_repeated_and_blank_literals_are_checked_once_or_not_at_all() -> None:
    """No wasted existence checks: each (value, mode) once, and no check for '' or spaces."""
    query = "MATCH (a {name: 'X'}), (b {name: 'X'}) WHERE a.code = '' AND b.code = '  ' RETURN a"
    assert query_literals(query) == [("X", "exact")]


def test_the_same_value_in_both_modes_is_checked_in_both() -> None:
    """'X' as an exact match and 'X' as a substring are different checks."""
    query = "MATCH (a {name: 'X'}) WHERE a.alias CONTAINS 'X' RETURN a"
    assert query_literals(query) == [("X", "exact"), ("X", "contains")]


def test_a_query_without_string_literals_has_none() -> None:
    """Numeric filters and parameters are not looked up in the graph."""
    assert query_literals("MATCH (n:Person {age: 3}) WHERE n.score > 0.5 AND n.id = $id RETURN n") == []


def test_an_escaped_quote_is_checked_as_the_value_it_denotes() -> None:
    """A query naming O'Brien is checked against O'Brien in the graph, not against O\\'Brien."""
    assert query_literals(r"MATCH (n:Person {name: 'O\'Brien'}) RETURN n") == [("O'Brien", "exact")]


@pytest.mark.parametrize("value", ["MATCH", "WHERE", "RETURN x", "with", "optional match"])
def test_a_value_spelled_like_a_keyword_is_a_value_not_a_clause(value: str) -> None:
    """Hypothesis found 'MATCH' as a stored name split the query into clauses inside the string."""
    broadened = broaden_cypher(f"MATCH (n:Thing {{name: '{value}'}}) RETURN n")
    assert broadened == f"MATCH (n:Thing) WHERE {contains('n.name', value)} RETURN n"


@pytest.mark.parametrize(
    ("query", "shape"),
    [
        ("MATCH (s:Supplier {name: 'A'}) RETURN s.country", (0, 0)),
        ("MATCH (s:S)<-[:ISSUED_TO]-(p:P) RETURN s.name, count(p) AS n ORDER BY n DESC LIMIT 3", (1, 1)),
        ("MATCH (a)-[:X]->(b)-->(c), (c)--(d) RETURN SUM(a.x)", (1, 3)),
        ("MATCH p=(x {name: 'a-(b)'})-[*..3]-(y) RETURN p", (0, 1)),
        ("MATCH (n) WHERE n.note = 'count(x)' RETURN n", (0, 0)),
    ],
)
def test_query_shape_counts_aggregation_and_relationships_outside_strings(query: str, shape: tuple[int, int]) -> None:
    got = query_shape(query)
    assert (got["aggregates"], got["hops"]) == shape
