"""The tools' own deterministic adjustments of a weak step's arguments, by tool name: pure functions that
workflow code (workflows/step_runner.py) calls without importing the tools and their clients. A tool with
an adjustment returns the same from its `adjust` (tests/unit/test_adjusters.py checks they agree)."""

from __future__ import annotations

from collections.abc import Callable

from confidence.ladder import Rung
from cypher.text import broaden_cypher

Adjuster = Callable[[dict[str, str], Rung], dict[str, str] | None]


def broadened_query(arguments: dict[str, str], rung: Rung) -> dict[str, str] | None:
    """The adjusted rung broadens a query: exact matches become case-insensitive CONTAINS, more hops."""
    if rung is not Rung.ADJUSTED:
        return None
    broadened = broaden_cypher(arguments.get("query", ""))
    return {**arguments, "query": broadened} if broadened else None


ADJUSTERS: dict[str, Adjuster] = {"GraphQuery": broadened_query}
