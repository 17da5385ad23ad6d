"""The schema repair of a neighbour read as a property: `i.supplier` on an Invoice, `o.deliver_to` on an
order. When the name is another label's (or a relationship type's at the label) and one shortest path in the
schema leads there, the query matches that path and reads the neighbour's name. None when the schema leaves
any doubt."""

from __future__ import annotations

import re
from collections.abc import Iterable

from cypher.clause_order import clauses, free_name, split_items
from cypher.schema_repair import (
    NAME_SUFFIX,
    Nodes,
    Relationship,
    display_property,
    hop_text,
    label_paths,
    name_key,
    reads,
)
from cypher.text import blank_strings, labelled_variables, replace_outside_strings


def _path_pattern(path: list[Relationship], start: str, end_variable: str) -> str:
    """`-[:A]->(:Middle)<-[:B]-(end_variable:Goal)` for a path of relationships walked from `start`."""
    text, label = "", start
    for n, rel in enumerate(path):
        other = rel[2] if rel[0] == label else rel[0]
        node = f"({end_variable}:{other})" if n == len(path) - 1 else f"(:{other})"
        text += hop_text(rel, label) + node
        label = other
    return text


def _neighbour_label(label: str, prop: str, nodes: Nodes, rels: set[Relationship]) -> str | None:
    """The label a property name on `label` means: another label of that name (`supplier`, `supplier_id`),
    or the far end of the one relationship type at `label` of that name (`deliver_to`); None when none or
    several."""
    suffix = NAME_SUFFIX.match(prop)
    stems = [prop, suffix.group("stem")] if suffix else [prop]
    for stem in stems:
        named = [other for other in nodes if other != label and name_key(other) == name_key(stem)]
        if len(named) == 1:
            return named[0]
        ends = {
            (r[2] if r[0] == label else r[0])
            for r in rels
            if label in (r[0], r[2]) and name_key(r[1]) == name_key(stem)
        }
        ends.discard(label)
        if len(ends) == 1:
            return ends.pop()
    return None


def neighbour_property(query: str, label: str, prop: str, nodes: Nodes, rels: Iterable[Relationship]) -> str | None:
    """`v.prop` on a node of `label` that has no such property, where `prop` names a neighbour reached by
    one shortest schema path: the query matches that path right after the MATCH that binds v, and reads the
    neighbour's property instead. None when the variable, the neighbour, the path or the property to read
    is not certain, v is bound in an OPTIONAL MATCH (a new required MATCH would drop its rows), or a WITH
    follows (it would drop the neighbour's variable)."""
    rels = set(rels)
    blanked = blank_strings(query)
    read = reads(r"(\w+)", prop)
    variables = {v for v, bound in labelled_variables(blanked).items() if bound == label} & set(read.findall(blanked))
    target = _neighbour_label(label, prop, nodes, rels)
    if len(variables) != 1 or target is None:
        return None
    variable = variables.pop()
    paths = label_paths(label, target, rels)
    shown = display_property(nodes.get(target, []), prop)
    if len(paths) != 1 or shown is None:
        return None
    binds = re.compile(rf"\(\s*{re.escape(variable)}\s*[:){{\s]")
    binding = next((c for c in clauses(query) if binds.search(blanked[c.start : c.end])), None)
    if binding is None or binding.keyword != "MATCH":
        return None
    at = _after_last_with(query, variable, prop, binding.end)
    if at is None:
        return None
    new = free_name(query, re.sub(r"\W", "", target.lower()) or "n")
    pattern = f"MATCH ({variable}){_path_pattern(paths[0], label, new)}"
    head, tail = query[:at].rstrip(), query[at:].lstrip()
    fixed = f"{head} {pattern}{' ' if tail else ''}{tail}"
    fixed = replace_outside_strings(fixed, reads(re.escape(variable), prop), f"{new}.{shown}")
    return _with_display_name(fixed, new, shown, nodes.get(target, []))


def _after_last_with(query: str, variable: str, prop: str, binding_end: int) -> int | None:
    """Where the neighbour's MATCH goes: right after the MATCH that binds the variable, or, when WITH
    clauses follow, after the last one (with its WHERE / ORDER BY / LIMIT), provided it passes the variable
    on unchanged and nothing before that point reads the property. None when neither is certain."""
    parts = clauses(query)
    withs = [c for c in parts if c.keyword == "WITH" and c.start >= binding_end]
    if not withs:
        return binding_end
    last = withs[-1]
    if variable not in {item.strip() for item in split_items(query[last.body_start : last.end])}:
        return None  # the WITH does not pass the variable on: the neighbour cannot be reached after it
    at = next((c.start for c in parts if c.start > last.start and c.keyword not in _WITH_TAIL), len(query))
    if reads(re.escape(variable), prop).search(blank_strings(query[:at])):
        return None  # read before that point
    return at


_WITH_TAIL = {"WHERE", "ORDER BY", "SKIP", "LIMIT"}


def _with_display_name(query: str, variable: str, shown: str, props: list[str]) -> str:
    """A neighbour returned by an id (`supplier1.supplier_id AS supplier`) is returned with its name too:
    a question about who or which wants the name, and the id alone cannot be read as one."""
    name = display_property(props, "")
    if name is None or name == shown:
        return query
    returns = [c for c in clauses(query) if c.keyword == "RETURN"]
    if len(returns) != 1:
        return query
    clause = returns[0]
    read = re.compile(rf"^(?:DISTINCT\s+)?{re.escape(variable)}\.{re.escape(shown)}(?:\s+AS\s+(\w+))?$", re.IGNORECASE)
    hits = [hit for item in split_items(query[clause.body_start : clause.end]) if (hit := read.match(item))]
    if not hits:
        return query
    alias = f"{hits[0].group(1) or shown}_{name}"
    if re.search(rf"\b{re.escape(alias)}\b", query):
        alias = free_name(query, alias)
    body, rest = query[clause.body_start : clause.end].rstrip(), query[clause.end :].lstrip()
    return f"{query[: clause.body_start]}{body}, {variable}.{name} AS {alias}{' ' if rest else ''}{rest}"
