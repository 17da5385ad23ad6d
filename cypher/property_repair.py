"""The schema repairs of a property read where the schema does not hold it: from a node whose label lacks it
when exactly one other node of the query has it, or counted (`count(p) AS population`) where exactly one
bound node stores it. None when the schema leaves any doubt."""

from __future__ import annotations

import re

from cypher.clause_order import AGGREGATE, DISTINCT, clauses, free_name, split_items
from cypher.schema_repair import ANONYMOUS_NODE, Nodes, reads
from cypher.text import blank_strings, labelled_variables, replace_outside_strings


def moved_property(query: str, label: str, prop: str, nodes: Nodes) -> str | None:
    """`c.name` on a node of `label` that has no such property, in a query where exactly one other node
    pattern's label has it (a named variable, or an unnamed node, which is then named): the read is moved
    there (`(c:Currency)<-[:USES]-(:Country) RETURN count(c.name)` counts the countries' names). None when
    no node or several have it, or the variable reading it is not of `label`."""
    blanked = blank_strings(query)
    bound = labelled_variables(blanked)
    readers = {v for v in reads(r"(\w+)", prop).findall(blanked) if bound.get(v) == label}
    if not readers:
        return None
    having = [v for v, other in bound.items() if v not in readers and prop in nodes.get(other, [])]
    anonymous = [m for m in ANONYMOUS_NODE.finditer(blanked) if prop in nodes.get(m.group(1), [])]
    if len(having) + len(anonymous) != 1:
        return None
    fixed = query
    if having:
        target = having[0]
    else:
        target = free_name(query, re.sub(r"\W", "", anonymous[0].group(1).lower()) or "n")
        at = anonymous[0].start() + 1
        fixed = f"{query[:at]}{target}{query[at:]}"
    for reader in readers:
        fixed = replace_outside_strings(fixed, reads(re.escape(reader), prop), f"{target}.{prop}")
    return fixed


_COUNT_AS = re.compile(r"^count\s*\((?:\s*DISTINCT)?\s*(\*|\w+)\s*\)\s+AS\s+(\w+)$", re.IGNORECASE)


def count_as_property(query: str, nodes: Nodes) -> str | None:
    """`RETURN count(p) AS population` over `(c:Country)`: a count named after a property that exactly one
    bound node stores. The model counted rows where the graph holds the figure ("how many people live in
    X"), so the stored property is returned instead, DISTINCT when no aggregate is left (the rows the
    count ran over repeat it). None when the name is no stored property or more than one node has it."""
    returns = [c for c in clauses(query) if c.keyword == "RETURN"]
    if len(returns) != 1:
        return None
    clause = returns[0]
    bound = labelled_variables(blank_strings(query))
    items = split_items(query[clause.body_start : clause.end])
    changed = False
    for n, item in enumerate(items):
        counted = _COUNT_AS.match(item)
        if counted is None:
            continue
        alias = counted.group(2)
        owners = [(v, p) for v, label in bound.items() for p in nodes.get(label, []) if p.lower() == alias.lower()]
        if len(owners) != 1:
            continue
        variable, prop = owners[0]
        items[n] = f"{variable}.{prop} AS {alias}"
        changed = True
    if not changed:
        return None
    body = ", ".join(items)
    if not AGGREGATE.search(body) and not DISTINCT.match(body):
        body = "DISTINCT " + body
    rest = query[clause.end :].lstrip()
    return f"{query[: clause.body_start]} {body}{' ' if rest else ''}{rest}"
