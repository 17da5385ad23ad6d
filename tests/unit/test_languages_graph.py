"""The territories, languages and currencies graph built from Babel's CLDR data (bench/graphs/languages.py): the
labels and relationship types its docstring promises, one name per node within the whole graph, every
relationship between nodes that exist, and a few facts CLDR states."""

from __future__ import annotations

from collections import Counter
from functools import cache
from typing import Any

from bench.graphs import languages
from bench.graphs.load import GraphData

RELATIONSHIPS = {
    ("Territory", "SPEAKS", "Language"),
    ("Territory", "OFFICIAL_LANGUAGE", "Language"),
    ("Language", "WRITTEN_IN", "Script"),
    ("Territory", "USES_CURRENCY", "Currency"),
    ("Territory", "FORMERLY_USED_CURRENCY", "Currency"),
    ("Territory", "HAS_TIME_ZONE", "TimeZone"),
    ("TimeZone", "IN_METAZONE", "Metazone"),
}


@cache
def graph() -> GraphData:
    return languages.build()


def node(label: str, name: str) -> dict[str, Any]:
    return next(n for n in graph().nodes[label] if n["name"] == name)


def targets(type_: str, source: str) -> set[str]:
    rel = next(r for r in graph().relationships if r.type == type_)
    return {b for a, b in rel.pairs if a == source}


def test_it_has_the_labels_and_relationships_its_docstring_promises() -> None:
    data = graph()
    assert set(data.nodes) == set(data.keys) == set(languages.LABELS)
    assert {(r.source, r.type, r.target) for r in data.relationships} == RELATIONSHIPS
    doc = languages.__doc__ or ""
    assert all(f"(:{label} {{" in doc for label in data.nodes)
    assert all(f"[:{r.type}" in doc for r in data.relationships)
    counts = {label: len(rows) for label, rows in data.nodes.items()}
    assert 200 <= counts["Territory"] <= 300 and 300 <= counts["Language"] <= 500 and counts["Script"] >= 30
    assert sum(counts.values()) < 3000 and all(r.pairs for r in data.relationships)


def test_every_name_is_one_node_s_and_every_relationship_joins_nodes_that_exist() -> None:
    data = graph()
    names = Counter(n["name"].lower() for rows in data.nodes.values() for n in rows)
    assert [n for n, k in names.items() if k > 1] == []
    for rel in data.relationships:
        sources = {n["name"] for n in data.nodes[rel.source]}
        ends = {n["name"] for n in data.nodes[rel.target]}
        assert all(a in sources and b in ends for a, b in rel.pairs), rel.type
        assert len(set(rel.pairs)) == len(rel.pairs)


def test_figures_are_whole_years_digits_and_shares_a_question_can_state() -> None:
    for currency in graph().nodes["Currency"]:
        assert currency["decimal_digits"] in (0, 2, 3, 4)
        assert 1600 < currency["year_introduced"] <= currency.get("year_withdrawn", 2100)
    speaks = next(r for r in graph().relationships if r.type == "SPEAKS")
    assert speaks.properties is not None
    shares = [p["population_percent"] for p in speaks.properties if "population_percent" in p]
    assert all(1e-4 <= s <= 100 and round(s, 4) == s for s in shares)


def test_it_states_what_cldr_says() -> None:
    assert targets("OFFICIAL_LANGUAGE", "France") == {"French"} and targets("USES_CURRENCY", "France") == {"Euro"}
    assert targets("FORMERLY_USED_CURRENCY", "France") == {"French Franc"}
    assert {"Hindi", "English"} == targets("OFFICIAL_LANGUAGE", "India") < targets("SPEAKS", "India")
    assert targets("WRITTEN_IN", "Serbian") == {"Cyrillic script", "Latin script"}
    assert targets("WRITTEN_IN", "Chinese") == {"Simplified Han script", "Traditional Han script"}
    assert targets("HAS_TIME_ZONE", "Germany") == {"Europe/Berlin", "Europe/Busingen"}
    assert targets("IN_METAZONE", "Europe/Berlin") == {"Central European Time"}
    assert node("Language", "Nauru language")["code"] == "na" and node("Territory", "Nauru")["code"] == "NR"
    assert node("Currency", "Euro") == {"name": "Euro", "code": "EUR", "decimal_digits": 2, "year_introduced": 1999}
    assert node("Currency", "Kuwaiti Dinar")["decimal_digits"] == 3
    # the week as the territory's own: Saudi Arabia's weekend is Friday and Saturday, Angola's week starts on
    # Monday though Portugal's, whose locale Angola's inherits from, starts on Sunday
    saudi = node("Territory", "Saudi Arabia")
    assert (saudi["first_day_of_week"], saudi["weekend_start"], saudi["weekend_end"]) == (
        "Sunday",
        "Friday",
        "Saturday",
    )
    assert node("Territory", "Angola")["first_day_of_week"] == "Monday"
    assert node("Territory", "Portugal")["first_day_of_week"] == "Sunday"


def test_it_is_built_the_same_every_time() -> None:
    again = languages.build()
    assert again.nodes == graph().nodes
    assert [(r.type, r.pairs, r.properties) for r in again.relationships] == [
        (r.type, r.pairs, r.properties) for r in graph().relationships
    ]
