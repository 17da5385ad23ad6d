"""A plan's queries against the relationships its question spells out (questions/walks.py): the doubts the
planner hears once, and the evidence the calibrator reads."""

from __future__ import annotations

from contracts.query_path import EntityMatch, Grounding
from questions.walks import (
    NamedJoin,
    named_joins,
    named_start_doubts,
    named_times,
    orders_by_named,
    returns_only_named,
    short_walks,
    spelled_walk,
    unjoined_named,
    unmatched_labels,
    walked_times,
    without_names,
)

RELS = {"MARRIED_INTO", "PART_OF", "IN_SUBREGION", "NEIGHBOUR_OF", "BORDERS", "IN"}


def grounded(*names: str) -> Grounding:
    return Grounding(
        matches=[EntityMatch(mention=n, label="Thing", property="name", value=n, how="exact") for n in names]
    )


def test_a_relationship_spelled_out_twice_is_counted_twice() -> None:
    question = "Starting at Pazzi, follow married into, then married into: which families do you reach?"
    assert named_times(question, RELS) == {"MARRIED_INTO": 2}


def test_the_walk_a_question_spells_out_keeps_its_order_and_repeats() -> None:
    question = "From Peru, follow in subregion, then part of, then part of against the arrow: which subregions?"
    assert spelled_walk(question, RELS) == ["IN_SUBREGION", "PART_OF", "PART_OF"]
    assert spelled_walk("Which families married into the Medici?", RELS) == ["MARRIED_INTO"]
    assert spelled_walk("Which country is largest?", RELS) == []


def test_a_short_common_word_type_is_never_counted() -> None:
    """ "in" opens half the questions in English: a type named IN is no evidence of a walk asked for."""
    assert "IN" not in named_times("Which cities in France are in Europe, in the north?", RELS)


def test_hops_are_counted_per_pattern_and_from_variable_lengths() -> None:
    query = (
        "MATCH (a {name: '[:BORDERS]'})-[:MARRIED_INTO]->(b)-[r:MARRIED_INTO|PART_OF*2]->(c)"
        "-[:NEIGHBOUR_OF*1..3]-(d)-[:BORDERS*]-(e) RETURN e"
    )
    assert walked_times(query) == {"MARRIED_INTO": 3, "PART_OF": 2, "NEIGHBOUR_OF": 3, "BORDERS": 99}


def test_a_walk_shorter_than_the_question_spells_out_is_a_doubt_with_the_chain_to_write() -> None:
    question = "Which families are reached from Pazzi by following married into and then married into?"
    one_hop = "MATCH (f:Family {name: 'Pazzi'})-[:MARRIED_INTO]->(g:Family) RETURN g.name"
    [doubt] = short_walks(question, [one_hop], RELS)
    assert "follows MARRIED_INTO 2 times" in doubt and "walks it 1 time" in doubt
    assert "(a)-[:MARRIED_INTO]->(n1)-[:MARRIED_INTO]->(n2)" in doubt
    two_hops = "MATCH (f:Family {name: 'Pazzi'})-[:MARRIED_INTO]->(:Family)-[:MARRIED_INTO]->(g) RETURN g.name"
    assert short_walks(question, [two_hops], RELS) == []


def test_hops_split_over_a_plan_s_steps_count_together() -> None:
    question = "Which families are reached from Pazzi by following married into and then married into?"
    steps = [
        "MATCH ({name: 'Pazzi'})-[:MARRIED_INTO]->(g) RETURN g.name",
        "MATCH (g {name: $name})-[:MARRIED_INTO]->(h) RETURN h.name",
    ]
    assert short_walks(question, steps, RELS) == []


def test_a_relationship_the_question_names_and_no_query_walks_is_a_doubt() -> None:
    question = "Which regions is Chile part of?"
    doubts = short_walks(question, ["MATCH (c {name: 'Chile'})-[:IN_SUBREGION]->(s) RETURN s.name"], RELS)
    assert doubts == ["the question names PART_OF ('part of'), which no query walks"]


def test_a_query_returning_only_the_named_start_is_caught_in_either_way_of_naming_it() -> None:
    inline = (
        "MATCH (f:Family {name: 'Medici'})-[:MARRIED_INTO]->(f2:Family) "
        "RETURN f.name AS family, count(*) AS marriages ORDER BY marriages DESC LIMIT 5"
    )
    where = "MATCH (f:Family)-[:MARRIED_INTO]->(g) WHERE f.name = 'Medici' RETURN DISTINCT f.name"
    assert returns_only_named(inline, grounded("Medici")) == ["f"]
    assert returns_only_named(where, grounded("Medici")) == ["f"]


def test_a_query_returning_what_it_reached_or_walking_nothing_is_no_doubt() -> None:
    reached = "MATCH (f:Family {name: 'Medici'})-[:MARRIED_INTO]->(g) RETURN f.name AS start, g.name AS family"
    counted = "MATCH (f:Family {name: 'Medici'})-[:MARRIED_INTO]->(g) RETURN count(g) AS families"
    own_property = "MATCH (c:Country {name: 'Chile'}) RETURN c.population"
    for query in (reached, counted, own_property):
        assert returns_only_named(query, grounded("Medici", "Chile")) == [], query


def test_a_ranking_by_the_named_start_orders_nothing() -> None:
    """ "Among Albania's neighbours, which has the lowest area?" ranked by Albania's own area (the same on every
    row) and named Serbia and Montenegro at 0.9."""
    by_start = (
        "MATCH (c:Country {name: 'Albania'})-[:NEIGHBOUR_OF]->(n:Country) "
        "RETURN n.name AS neighbour, c.area_km2 AS area ORDER BY area ASC LIMIT 1"
    )
    by_reached = by_start.replace("c.area_km2", "n.area_km2")
    assert orders_by_named(by_start, grounded("Albania")) == ["c"]
    assert orders_by_named(by_reached, grounded("Albania")) == []


def test_two_named_walks_that_nothing_joins_are_a_doubt() -> None:
    """ "Which characters do CountessDeLo and Valjean share through appears with?" was written as two walks side
    by side (every row of one paired with every row of the other) and stated at 0.69."""
    both = grounded("CountessDeLo", "Valjean")
    apart = (
        "MATCH (c1:Character {name: 'CountessDeLo'})-[:APPEARS_WITH]->(c2:Character) "
        "MATCH (c3:Character {name: 'Valjean'})-[:APPEARS_WITH]->(c4:Character) RETURN DISTINCT c1.name"
    )
    assert unjoined_named(apart, both) == ["c1", "c3"]
    assert any("nothing joins" in doubt for doubt in named_start_doubts([apart], both))
    comma = "MATCH (a {name: 'CountessDeLo'})-[:APPEARS_WITH]->(m), (b {name: 'Valjean'})-[:APPEARS_WITH]->(n) RETURN m"
    assert unjoined_named(comma, both) == ["a", "b"]
    # the names given in one WHERE, each in a condition of its own, join nothing
    where = (
        "MATCH (a)-[:APPEARS_WITH]->(n) MATCH (b)-[:APPEARS_WITH]->(m) "
        "WHERE a.name = 'CountessDeLo' AND b.name = 'Valjean' RETURN n.name, m.name"
    )
    assert unjoined_named(where, both) == ["a", "b"]


def test_named_walks_joined_by_a_node_a_comparison_or_a_collected_list_are_no_doubt() -> None:
    both = grounded("CountessDeLo", "Valjean")
    joined = [
        "MATCH (a {name: 'CountessDeLo'})-[:APPEARS_WITH]->(n)<-[:APPEARS_WITH]-(b {name: 'Valjean'}) RETURN n.name",
        "MATCH (a {name: 'CountessDeLo'})-[:APPEARS_WITH]->(n) MATCH (b {name: 'Valjean'})-[:APPEARS_WITH]->(n) "
        "RETURN n.name",
        "MATCH (a {name: 'CountessDeLo'})-[:APPEARS_WITH]->(n), (b)-[:APPEARS_WITH]->(m) "
        "WHERE b.name = 'Valjean' AND n = m RETURN n.name",
        "MATCH (a)-[:APPEARS_WITH]->(n) WHERE a.name = 'CountessDeLo' WITH collect(n) AS ns "
        "MATCH (b {name: 'Valjean'})-[:APPEARS_WITH]->(m) WHERE m IN ns RETURN m.name",
        "MATCH p = shortestPath((a {name: 'CountessDeLo'})-[*]-(b {name: 'Valjean'})) RETURN length(p)",
        # two named things compared side by side, without walks: one row, no pairing
        "MATCH (a {name: 'CountessDeLo'}), (b {name: 'Valjean'}) RETURN a.name, b.name",
        # the walks counted and compared ("how many more ... than"): no pairing of rows reaches the answer
        "MATCH (a {name: 'CountessDeLo'})-[:APPEARS_WITH]->(n) MATCH (b {name: 'Valjean'})-[:APPEARS_WITH]->(m) "
        "RETURN count(DISTINCT n) AS x, count(DISTINCT m) AS y",
        "MATCH (a {name: 'CountessDeLo'})-[:APPEARS_WITH]->(n) WITH count(n) AS x "
        "MATCH (b {name: 'Valjean'})-[:APPEARS_WITH]->(m) RETURN x, count(m) AS y",
        "CALL { MATCH (a {name: 'CountessDeLo'})-[:APPEARS_WITH]->(n) RETURN n.name AS x } "
        "CALL { MATCH (b {name: 'Valjean'})-[:APPEARS_WITH]->(m) RETURN m.name AS y } RETURN x, y",
        "MATCH (a {name: 'CountessDeLo'})-[:APPEARS_WITH]->(n) RETURN n.name AS name "
        "UNION MATCH (b {name: 'Valjean'})-[:APPEARS_WITH]->(m) RETURN m.name AS name",
    ]
    for query in joined:
        assert unjoined_named(query, both) == [], query
    assert unjoined_named(joined[0], grounded("CountessDeLo")) == []  # one name: nothing to join


def test_a_name_the_question_gives_spells_out_no_relationship() -> None:
    """ "Globex Supply" is a supplier's name, not the SUPPLIES relationship."""
    question = "What is the total amount of unpaid invoices of Globex Supply?"
    grounding = Grounding(
        matches=[
            EntityMatch(mention="Globex Supply", label="Supplier", property="name", value="Globex Supply", how="exact")
        ]
    )
    assert named_times(question, {"SUPPLIES"}) == {"SUPPLIES": 1}
    assert (
        short_walks(without_names(question, grounding), ["MATCH (i:Invoice) RETURN sum(i.amount)"], {"SUPPLIES"}) == []
    )


def test_a_label_the_question_names_and_no_query_matches_is_found() -> None:
    """ "the total amount of unpaid invoices of Globex Supply" summed purchase orders at 0.73: no query
    touched an Invoice."""
    question = "What is the total amount of unpaid invoices of ?"
    labels = ["Invoice", "PurchaseOrder", "Supplier", "Tag"]
    assert unmatched_labels(question, {"PurchaseOrder", "Supplier"}, labels) == ["Invoice"]
    assert unmatched_labels(question, {"Invoice", "PurchaseOrder"}, labels) == []
    assert unmatched_labels("How many purchase orders are open?", set(), labels) == ["PurchaseOrder"]


def test_two_names_one_path_joins_are_counted_by_the_relationships_between_them() -> None:
    both = grounded("Donyi Polo", "Rajahmundry")
    assert named_joins(
        "MATCH (a:Airport {name: 'Donyi Polo'})-[:SERVES]->(c:City {name: 'Rajahmundry'}) RETURN count(*)", both
    ) == [NamedJoin("Donyi Polo", "Airport", "Rajahmundry", "City", 1)]
    assert named_joins(
        "MATCH (a)-[:SERVES]->(c)-[:IN]->(x)<-[:IN]-(d) WHERE a.name = 'Donyi Polo' AND "
        "d.name = 'Rajahmundry' RETURN x",
        both,
    ) == [NamedJoin("Donyi Polo", None, "Rajahmundry", None, 3)]
    # as the retry ladder's adjusted rung broadens the names (cypher.text.broaden_cypher)
    assert named_joins(
        "MATCH (a:Airport)-[:SERVES]->(c:City) WHERE toLower(a.name) CONTAINS toLower('Donyi Polo') "
        "AND toLower(c.name) CONTAINS toLower('Rajahmundry') RETURN count(*)",
        both,
    ) == [NamedJoin("Donyi Polo", "Airport", "Rajahmundry", "City", 1)]
    # anonymous named nodes count too; the nearest named node before is the one paired
    assert named_joins("MATCH (:Airport {name: 'Donyi Polo'})--(:City {name: 'Rajahmundry'}) RETURN 1", both) == [
        NamedJoin("Donyi Polo", "Airport", "Rajahmundry", "City", 1)
    ]
    # each query of a UNION on its own
    assert named_joins(
        "MATCH (a {name: 'Donyi Polo'})-[:R]->(b) RETURN b.name AS n UNION "
        "MATCH (a {name: 'Donyi Polo'})-[:R]->(b {name: 'Rajahmundry'}) RETURN b.name AS n",
        both,
    ) == [NamedJoin("Donyi Polo", None, "Rajahmundry", None, 1)]


def test_open_length_walks_and_separate_paths_join_no_names() -> None:
    both = grounded("Donyi Polo", "Rajahmundry")
    for query in [
        "MATCH p = shortestPath((a {name: 'Donyi Polo'})-[*]-(b {name: 'Rajahmundry'})) RETURN length(p)",
        "MATCH (a {name: 'Donyi Polo'})-[:R*1..3]-(b {name: 'Rajahmundry'}) RETURN b",
        "MATCH (a {name: 'Donyi Polo'})-[:R]->(x)-[*]-(b {name: 'Rajahmundry'}) RETURN b",
        "MATCH (a {name: 'Donyi Polo'})-[:R]->(x), (b {name: 'Rajahmundry'})-[:R]->(y) RETURN x, y",
        "MATCH (a {name: 'Donyi Polo'}) MATCH (b {name: 'Rajahmundry'}) RETURN a, b",
        # a name excluded, or one of alternatives, is not a thing the walk joins
        "MATCH (a)-[:R]->(b) WHERE a.name = 'Donyi Polo' AND NOT b.name = 'Rajahmundry' RETURN count(b)",
        "MATCH (a)-[:R]->(b) WHERE a.name = 'Donyi Polo' OR b.name = 'Rajahmundry' RETURN count(b)",
        # two queries of a UNION, each with one of the names
        "MATCH (a)-[:R]->(b) WHERE a.name = 'Donyi Polo' RETURN b.name AS n UNION "
        "MATCH (a)-[:S]->(b) WHERE b.name = 'Rajahmundry' RETURN a.name AS n",
    ]:
        assert named_joins(query, both) == [], query
    assert named_joins("MATCH (a {name: 'Donyi Polo'})-[:R]->(b) RETURN b", grounded("Donyi Polo")) == []


def test_a_name_is_taken_out_as_whole_words_only() -> None:
    grounding = Grounding(
        matches=[EntityMatch(mention="CH", label="Country", property="code", value="CH", how="exact")]
    )
    assert without_names("Which airports serve cities in CH?", grounding).split() == [
        "Which",
        "airports",
        "serve",
        "cities",
        "in",
        "?",
    ]
