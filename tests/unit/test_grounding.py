"""Which names in a question are looked up in the graph before a query is written."""

from __future__ import annotations

import pytest

from contracts.query_path import EntityMatch, Grounding
from contracts.redaction import REDACTED
from cypher.read_only import write_clauses
from questions.named_terms import (
    describe_grounding,
    ignored_names,
    mentions,
    misplaced_name,
    name_stems,
    name_tokens,
    named_lookups,
    occurrences,
    relabel,
    said_phrases,
    short_inflection,
    word_forms,
)

SCHEMA = {"Supplier", "PurchaseOrder", "Invoice", "Document", "name", "status", "topic", "ISSUED_TO", "Warehouse"}


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did Zyxwv Holdings order last month?", ["Zyxwv Holdings"]),
        ("Which products does Zyxwv supply?", ["Zyxwv"]),
        ("How many orders does supplier SUP-001 have in March 2024?", ["SUP-001"]),
        ('Who supplies "Steel Bolts M8"?', ["Steel Bolts M8"]),  # not also the id inside the quoted name
        ("Summarize the main topics of the Documents", []),  # an imperative opening a sentence is no name
        ("Which Suppliers have the most PurchaseOrders?", []),  # the schema's own words name kinds, not things
        ("Which invoices are overdue and which suppliers are they from?", []),
        ("Acme Industrial has how many orders?", ["Acme Industrial"]),
        # a slash joins one name, not two ("Asia" and "Samarkand" are other things' names)
        ("Which cities are in the timezone Asia/Samarkand?", ["Asia/Samarkand"]),
        ("Who played with AC/DC in 1980?", ["AC/DC"]),
        ("VNKT - which airport is that?", ["VNKT"]),  # a code in capitals opening the sentence is still a name
    ],
)
def test_mentions_are_the_names_a_question_gives(question: str, expected: list[str]) -> None:
    assert mentions(question, SCHEMA) == expected


def test_long_words_of_a_name_find_it_when_the_whole_name_is_not_stored_as_written() -> None:
    assert name_tokens("Acme Industrial Co") == ["Acme", "Industrial"]


def test_the_planner_reads_stored_values_and_what_exists_nowhere() -> None:
    grounding = Grounding(
        matches=[
            EntityMatch(mention="acme", label="Supplier", property="name", value="Acme Industrial", how="contains")
        ],
        unmatched=["Zyxwv Holdings"],
    )
    text = describe_grounding(grounding)
    assert "- Supplier.name = 'Acme Industrial' (the question says 'acme')" in text
    assert "Not found anywhere in the graph, not even in part: 'Zyxwv Holdings'" in text
    assert describe_grounding(Grounding()) == ""


def test_a_plan_that_uses_none_of_the_names_found_nowhere_ignores_them() -> None:
    """ "Which country has the ISO alpha-3 code ZQV?" planned as a list of every country answers another
    question; a plan using the name (or one of its longer words) is about it, and its empty result counts."""
    grounding = Grounding(unmatched=["alpha-3", "ZQV"])
    assert ignored_names(["MATCH (c:Country) RETURN c.name LIMIT 10"], grounding) == ["alpha-3", "ZQV"]
    assert ignored_names(["MATCH (c:Country) WHERE c.iso3 = 'zqv' RETURN c.name"], grounding) == []
    assert (
        ignored_names(
            ["MATCH (p:Product) WHERE p.name CONTAINS 'Turbine' RETURN p.price"],
            Grounding(unmatched=["Turbine Blade Pro"]),
        )
        == []
    )
    assert ignored_names(["MATCH (c:Country) RETURN count(c)"], Grounding()) == []  # nothing found nowhere


def test_a_stored_name_that_only_shares_a_word_is_told_as_another_thing_not_as_the_value_to_use() -> None:
    other = EntityMatch(mention="Kestrel Metals", label="Supplier", property="name", value="Kestrel Foods", how="words")
    longer = EntityMatch(
        mention="Acme Industrial Ltd", label="Supplier", property="name", value="Acme Industrial", how="words"
    )
    grounding = Grounding(matches=[other, longer])
    assert grounding.only_by_words() == ["Kestrel Metals"]  # the longer wording of a stored name is that name
    text = describe_grounding(grounding)
    assert "- Supplier.name = 'Acme Industrial' (the question says 'Acme Industrial Ltd')" in text
    assert "- Supplier.name = 'Kestrel Foods'" not in text
    assert "No stored value is or contains 'Kestrel Metals'" in text
    assert "Supplier.name = 'Kestrel Foods'): they are different things" in text


@pytest.mark.parametrize(
    ("query", "writes"),
    [
        ("MATCH (n) RETURN n.name", []),
        ("MATCH (n) WHERE n.note = 'please DELETE me' RETURN n", []),  # a word inside a string is no clause
        ("MATCH (n) SET n.x = 1 RETURN n", ["SET"]),
        ("MATCH (n) DETACH DELETE n", ["DELETE", "DETACH"]),
        ("merge (n:X {a: 1})", ["MERGE"]),
    ],
)
def test_write_clauses_outside_string_literals(query: str, writes: list[str]) -> None:
    assert write_clauses(query) == writes


def test_the_names_a_query_looks_up_are_read_with_the_label_that_holds_them() -> None:
    query = (
        "MATCH (s:Supplier {name: 'O\\'Neil Ltd', city: 'Lyon'})<-[:ISSUED_TO]-(po:PurchaseOrder) "
        "WHERE po.status = 'open' AND x.name = 'unbound' RETURN 'a.b = \\'c\\'' AS text"
    )
    assert named_lookups(query) == [
        ("Supplier", "name", "O'Neil Ltd"),
        ("Supplier", "city", "Lyon"),
        ("PurchaseOrder", "status", "open"),
    ]


def test_a_name_is_misplaced_only_where_grounding_found_it_elsewhere() -> None:
    grounding = Grounding(
        matches=[
            EntityMatch(mention="Western Asia", label="Subregion", property="name", value="Western Asia", how="exact")
        ]
    )
    assert "the graph stores 'Western Asia' as Subregion.name" in misplaced_name(
        "Region", "name", "western asia", grounding
    )
    assert misplaced_name("Subregion", "name", "Western Asia", grounding) is None
    assert misplaced_name("Region", "name", "Europe", grounding) is None  # grounding says nothing about it


def test_a_misplaced_name_moves_to_the_label_that_stores_it_when_its_node_is_unambiguous() -> None:
    assert relabel(
        "MATCH (r:Region)<-[:IN]-(c:Country) WHERE r.name = 'West Asia' RETURN c.name",
        "Region",
        "name",
        "West Asia",
        "Subregion",
    ) == ("MATCH (r:Subregion)<-[:IN]-(c:Country) WHERE r.name = 'West Asia' RETURN c.name")
    assert relabel(
        "MATCH (c:Country)-[:IN]->(:Region {name: 'West Asia'}) RETURN c.name",
        "Region",
        "name",
        "West Asia",
        "Subregion",
    ) == ("MATCH (c:Country)-[:IN]->(:Subregion {name: 'West Asia'}) RETURN c.name")
    two = "MATCH (a:Region)--(b:Region) WHERE a.name = 'X' AND b.name = 'X' RETURN a"
    assert relabel(two, "Region", "name", "X", "Subregion") is None


def test_a_piece_of_a_compound_property_name_is_no_name() -> None:
    """ "area km2" says `area_km2`: "km2" was looked up as a name, found nowhere, and sank a right answer."""
    vocabulary = {"Country", "area_km2", "population", "IN_COUNTRY"}
    assert mentions("What is the average area km2 of the countries in Asia?", vocabulary) == ["Asia"]
    assert mentions("What is the area km2 of Chad?", vocabulary) == ["Chad"]


def test_a_connection_is_stated_as_the_fewest_relationships_and_the_paths_through_named_nodes() -> None:
    from questions.named_terms import describe_connection

    paths = [
        (["Person", "Person", "Person"], [{"name": "Ann"}, {"name": "Cy"}, {"name": "Bob"}], ["KNOWS", "KNOWS"]),
        (["Person", "Town", "Person"], [{"name": "Ann"}, {"code": 7}, {"name": "Bob"}], ["LIVES_IN", "LIVES_IN"]),
    ]
    assert describe_connection("(Person 'Ann')", "(Person 'Bob')", paths, 4) == (
        "- (Person 'Ann') and (Person 'Bob') are 2 relationships apart at the fewest (shortest path length 2), "
        "through: (Person 'Ann')-[:KNOWS]-(Person 'Cy')-[:KNOWS]-(Person 'Bob'); "
        "(Person 'Ann')-[:LIVES_IN]-(:Town)-[:LIVES_IN]-(Person 'Bob')"
    )
    assert (
        describe_connection("(Person 'Ann')", "(Person 'Eve')", [], 4)
        == "- (Person 'Ann') and (Person 'Eve'): no connection of 4 relationships or fewer joins them"
    )


def test_runs_of_words_that_may_be_stored_names_as_written() -> None:
    phrases = said_phrases("Count the invoices of s-block or Period 2 in simple cubic form.", SCHEMA)
    assert {"s-block", "Period 2", "simple cubic", "simple cubic form"} <= set(phrases)
    assert "Count" not in phrases  # a sentence's first word is capitalised anyway
    assert "invoices" not in phrases and "of" not in phrases  # schema words alone, and short words, name nothing
    assert "2" not in phrases  # nor does a figure alone
    secret = said_phrases(f"Which warehouse holds {REDACTED} simple cubic?", SCHEMA)
    assert not any("|" in p or "REDACTED" in p for p in secret)  # a redacted secret breaks the runs


def test_stored_phrases_are_read_longest_first_in_order() -> None:
    stored = {"proton emission", "beta-plus-delayed proton emission"}
    question = "Which isotopes decay by both proton emission and beta-plus-delayed proton emission?"
    assert occurrences(question, stored) == ["proton emission", "beta-plus-delayed proton emission"]
    assert occurrences("by s-block|p-block", {"s-block", "p-block"}) == ["s-block", "p-block"]


def test_a_question_typed_in_lower_case_may_write_its_names_so() -> None:
    from questions.named_terms import names_in_lower_case

    assert names_in_lower_case("which country is lagos in")
    assert names_in_lower_case("What connects payment PAY-00132 with the toronto distribution center?")
    assert not names_in_lower_case("Which elements did Bo Lund find while reading?")


@pytest.mark.parametrize(
    ("mention", "stems"),
    [
        ("African", ["Afric", "Africa"]),
        ("Vietnamese", ["Vietnam"]),
        ("Western Asian", ["Western Asi", "Western Asia"]),
        ("Northern", ["North", "Norther"]),
        ("Sweden", ["Swede"]),  # a stored name as said is found before any stem is looked up (backends/grounding.py)
        ("Peru", []),  # no adjective's ending
        ("acme", []),  # not capitalised
        ("SUP-001", []),
    ],
)
def test_the_stems_an_adjective_keeps_of_the_name_it_is_formed_from(mention: str, stems: list[str]) -> None:
    assert name_stems(mention) == stems


@pytest.mark.parametrize(
    ("word", "other", "inflected"),
    [
        ("use", "used", True),
        ("use", "using", True),
        ("uses", "use", True),
        ("own", "owned", True),
        ("age", "agent", False),  # an ending English does not inflect with
        ("art", "artist", False),
    ],
)
def test_a_three_letter_stem_is_said_by_its_inflections(word: str, other: str, inflected: bool) -> None:
    assert short_inflection(word, other) is inflected


def test_a_schema_word_is_read_in_each_singular_it_may_have() -> None:
    assert word_forms("uses") == ("us", "use")
    assert word_forms("countries") == ("country", "countrie")
    assert word_forms("class") == ("class",)
