"""Workflow code adjusts a weak step through planning/adjusters.ADJUSTERS, without importing the tools:
the map must say what each tool's own `adjust` says, for every tool and rung."""

from __future__ import annotations

from confidence.ladder import Rung
from planning.adjusters import ADJUSTERS
from tools.base import Tool
from tools.registry import all_tools

ARGUMENTS = {
    "query": "MATCH (s:Supplier {name: 'Acme'})-[:SUPPLIES]->(p:Product) RETURN p.name",
    "prompt": "x",
    "question": "Who supplies Acme?",
}


def test_every_tool_with_an_adjustment_is_in_the_map_and_they_agree() -> None:
    for name, tool in all_tools().items():
        has_own = type(tool).adjust is not Tool.adjust
        assert has_own == (name in ADJUSTERS), name
        for rung in Rung:
            expected = tool.adjust(dict(ARGUMENTS), rung)
            assert (ADJUSTERS[name](dict(ARGUMENTS), rung) if name in ADJUSTERS else None) == expected, (name, rung)


def test_the_graph_query_adjustment_broadens_an_exact_match() -> None:
    adjusted = ADJUSTERS["GraphQuery"](dict(ARGUMENTS), Rung.ADJUSTED)
    assert adjusted is not None and "CONTAINS" in adjusted["query"]
