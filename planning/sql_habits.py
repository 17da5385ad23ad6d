"""What to tell the planner when it writes SQL into Cypher: `WHERE r IN (SELECT c.name FROM Country WHERE
Currency.code = 'ILS')`. FalkorDB's parse error ("expected CONTAINS") does not say what to do instead, and
the local model hands the same subquery back when shown only that. The hint is the Cypher way: the compared
value as a node pattern, reached from the labels the query already matches along the schema. Pure."""

from __future__ import annotations

import re

from cypher.text import NODE_LABEL, blank_strings
from questions.asked_for import route

_SUBQUERY = re.compile(r"\(\s*SELECT\b", re.IGNORECASE)
# `Label.prop = 'value'` or `x.prop = 'value'`, read from the original text (the value is needed).
_COMPARED = re.compile(r"\b(\w++)\.(\w++)\s*+=\s*+'((?:[^'\\]++|\\.)*+)'")
# `FROM Label WHERE prop = 'value'`: the property unqualified, its label the FROM's.
_FROM_WHERE = re.compile(r"\bFROM\s++`?(\w++)`?\s++WHERE\s++(\w++)\s*+=\s*+'((?:[^'\\]++|\\.)*+)'", re.IGNORECASE)


def subquery_hint(query: str, nodes: dict[str, list[str]], rels: set[tuple[str, str, str]]) -> str | None:
    """The advice for a query with an SQL subquery, naming the pattern to match where the schema gives
    one; None when the query has no `(SELECT`."""
    blanked = blank_strings(query)
    found = _SUBQUERY.search(blanked)
    if found is None:
        return None
    outer = sorted({label for label in NODE_LABEL.findall(blanked[: found.start()]) if label in nodes})
    patterns = []
    inner = query[found.start() :]
    for label, prop, value in [*_COMPARED.findall(inner), *_FROM_WHERE.findall(inner)]:
        if label in nodes and prop in nodes[label] and label not in outer:
            path = route(outer, label, rels) if outer else None
            node = f"(:{label} {{{prop}: '{value}'}})"
            patterns.append(f"{path[: -len(f'(:{label})')]}{node}" if path else node)
    advice = (
        "Cypher has no SQL subqueries (IN (SELECT ... FROM ...)): write the condition as part of the "
        "MATCH pattern, as a node with the property it compares"
    )
    return f"{advice}, e.g. MATCH {patterns[0]}" if patterns else advice
