"""The schema repairs of a relationship pattern: a hop joining two labels directly that the schema joins only
through a third (`(:Supplier)-[:ISSUED_TO]->(:Warehouse)` when orders are issued to suppliers and delivered to
warehouses) is bridged through that label; and each hop written with a relationship type the schema does not
have is found with the labels it joins, for backends/schema_check.py to correct. None when the schema leaves
any doubt."""

from __future__ import annotations

import re
from collections.abc import Iterable

from cypher.schema_repair import Relationship, hop_text, label_paths
from cypher.text import blank_strings, labelled_variables

# A guardrail path "(:A)-[:T]->(:B)" and one plain hop as written in a query (schema_check reads them too).
PATH_LABELS = re.compile(r"\(:(\w+)\)")
ONE_HOP = re.compile(r"^(\(.*?\))\s*(<?-)\[(\w*)\s*:\s*`?\w+`?([^\]]*)\](->|-)\s*(\(.*\))$")


def through_middle(original: str, path: str, rels: Iterable[Relationship], query: str = "") -> str | None:
    """A one-hop pattern between two labels the schema never joins directly, rewritten through the one
    label joined to both (one relationship each side): `(s:Supplier)-[:ISSUED_TO]->(w:Warehouse)` ->
    `(s:Supplier)<-[:ISSUED_TO]-(:PurchaseOrder)-[:DELIVER_TO]->(w:Warehouse)`. None when the hop has
    properties or a relationship variable the rest of `query` uses (they could not be kept), when `query`
    binds the middle label to a variable elsewhere, or when there is not exactly one such path."""
    rels = set(rels)
    labels = PATH_LABELS.findall(path)
    hop = ONE_HOP.match(original.strip())
    if len(labels) != 2 or labels[0] == labels[1] or hop is None or hop.group(4).strip():
        return None
    variable = hop.group(3)
    if variable and len(re.findall(rf"(?<![\w$]){re.escape(variable)}\b", blank_strings(query or original))) > 1:
        return None
    left, right = labels
    if any({r[0], r[2]} == {left, right} for r in rels):
        return None  # joined directly: a relationship to correct, not a path to bridge
    paths = label_paths(left, right, rels, max_hops=2)
    if len(paths) != 1 or len(paths[0]) != 2:
        return None
    first, second = paths[0]
    middle = first[2] if first[0] == left else first[0]
    if re.search(rf"\(\s*\w+\s*:\s*`?{re.escape(middle)}\b", blank_strings(query)):
        return None  # the query binds that label itself elsewhere: where the bridge goes is not certain
    return f"{hop.group(1)}{hop_text(first, left)}(:{middle}){hop_text(second, middle)}{hop.group(6)}"


def unknown_type_hops(query: str, rel_type: str) -> list[tuple[str, str]]:
    """Each hop of the query written with relationship type `rel_type` whose two nodes have labels (written
    there or where their variable is bound), as (the hop's text, its path `(:Left)-[:TYPE]->(:Right)` in the
    order written), for only_relationship / through_middle to correct an invented type with."""
    blanked = blank_strings(query)
    bound = labelled_variables(blanked)
    # Possessive (`*+`): with `\s*(\w*)\s*` and `[^()]*` all free to take a run of spaces, every way of
    # sharing it was tried before failing (the run's length cubed).
    node = r"(\(\s*+(\w*+)\s*+(?::\s*+`?(\w++)`?)?+[^()]*+\))"
    hop = re.compile(rf"{node}\s*+<?-\[\s*+\w*+\s*+:\s*+`?{re.escape(rel_type)}`?[^\]]*+\]->?\s*+{node}")
    found = []
    for m in hop.finditer(blanked):
        left, right = m.group(3) or bound.get(m.group(2)), m.group(6) or bound.get(m.group(5))
        if left and right:
            found.append((query[m.start() : m.end()], f"(:{left})-[:{rel_type}]->(:{right})"))
    return found
