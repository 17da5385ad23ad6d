"""The schema repairs of a name used but never bound (FalkorDB: "'p' not defined"): `RETURN p.population` after
`MATCH (c:Country ...)`. When exactly one reading fits the schema, the name becomes the bound variable it must
mean, names the unnamed node it stands for, or is matched as the neighbour it reads; None when the schema
leaves any doubt."""

from __future__ import annotations

import re
from collections.abc import Iterable

from cypher.clause_order import AGGREGATE, clauses
from cypher.schema_repair import ANONYMOUS_NODE, Nodes, Relationship, far_end, hop_text, name_key
from cypher.text import blank_strings, labelled_variables, replace_outside_strings

_NOT_DEFINED = re.compile(r"'(\w+)' not defined")


def undefined_name(error: str) -> str | None:
    """The name in FalkorDB's "'p' not defined", or None for another error."""
    found = _NOT_DEFINED.search(error or "")
    return found.group(1) if found else None


def _anonymous_named(query: str, blanked: str, name: str) -> str | None:
    """`count(purchaseOrder)` over `(:PurchaseOrder)`: the one unnamed node pattern whose label the name
    spells (in any case, singular or plural) gets that name."""
    anonymous = [m for m in ANONYMOUS_NODE.finditer(blanked) if name_key(name) == name_key(m.group(1))]
    if len(anonymous) != 1:
        return None
    at = anonymous[0].start() + 1
    return f"{query[:at]}{name}{query[at:]}"


def _anonymous_fitting(query: str, blanked: str, name: str, nodes: Nodes) -> str | None:
    """`RETURN c.name` or `count(p)` with `c`/`p` bound nowhere, over a query with one unnamed node whose
    label has every property read from the name: the model wrote the node and forgot to name it (a named
    node of another label is not what it meant, or it would have used that name). With several such nodes,
    the one whose label starts like the name; None when that is not exactly one."""
    read = set(re.findall(rf"(?<![\w.$]){re.escape(name)}\.(\w+)", blanked))
    if not read and not re.search(rf"\w\s*\(\s*(?:DISTINCT\s+)?{re.escape(name)}\s*\)", blanked, re.IGNORECASE):
        return None  # neither read from nor counted: a bare name may be a property (handled by the caller)
    fitting = [m for m in ANONYMOUS_NODE.finditer(blanked) if read <= set(nodes.get(m.group(1), []))]
    if len(fitting) > 1:
        fitting = [m for m in fitting if m.group(1).lower().startswith(name[0].lower())]
    if len(fitting) != 1:
        return None
    at = fitting[0].start() + 1
    return f"{query[:at]}{name}{query[at:]}"


def bound_instead(query: str, name: str, nodes: Nodes) -> str | None:
    """`name` used but never bound, read as the one bound variable it must mean: the one unnamed node of
    the label it spells (`count(orders)` over `(:Order)`); `p.population` when
    exactly one bound node's label has every property read from p; a bare `population` when exactly one
    bound node's label has that property. None when that is not exactly one variable, or the name is bound
    (an alias, a path or an unlabelled node) somewhere."""
    blanked = blank_strings(query)
    # Both before the check below, which reads count(x) as (x).
    named = _anonymous_named(query, blanked, name) or _anonymous_fitting(query, blanked, name, nodes)
    if named is not None:
        return named
    if re.search(
        rf"\bAS\s+{re.escape(name)}\b|\(\s*{re.escape(name)}\s*[:){{]|\[\s*{re.escape(name)}\b"
        rf"|\b{re.escape(name)}\s*=\s*\(",
        blanked,
        re.IGNORECASE,
    ):
        return None
    bindings = labelled_variables(blanked)
    read = set(re.findall(rf"(?<![\w.$]){re.escape(name)}\.(\w+)", blanked))
    if read:
        meant = [v for v, label in bindings.items() if read <= set(nodes.get(label, []))]
        if len(meant) != 1:
            return None
        return replace_outside_strings(query, re.compile(rf"(?<![\w.$]){re.escape(name)}\.(?=\w)"), f"{meant[0]}.")
    meant = [v for v, label in bindings.items() if name in nodes.get(label, [])]
    if len(meant) != 1:
        return None
    bare = re.compile(rf"(?<![\w.$`]){re.escape(name)}\b(?!\s*[:(.])")
    fixed = replace_outside_strings(query, bare, f"{meant[0]}.{name}")
    return fixed if fixed != query else None


_LITERAL_PAIR = re.compile(
    r"(?<!\w)(\w++)\s*+:\s*+('(?:[^'\\]++|\\.)*+'|-?\d++(?:\.\d++)?+|true|false)\s*+(?:,|$)", re.IGNORECASE
)


def _in_expression(blanked: str, at: int) -> bool:
    """Whether `name:Label` at `at` is written in an expression (`count(p:X)`, `WHERE p:X`), not as a node
    pattern (`(p:X`, whose `(` follows no function name)."""
    at = _skip_space_back(blanked, at)
    if at == 0 or blanked[at - 1] != "(":
        return True
    at = _skip_space_back(blanked, at - 1)
    return at > 0 and (blanked[at - 1].isalnum() or blanked[at - 1] == "_")


def _skip_space_back(text: str, at: int) -> int:
    """Where the white space that ends `text[:at]` starts: read back, not copied (once per name written)."""
    while at > 0 and text[at - 1].isspace():
        at -= 1
    return at


def _label_of(name: str, blanked: str, nodes: Nodes) -> tuple[str, list[re.Match[str]]] | None:
    """The label an unbound `name` stands for, and the label expressions to drop: `p:Province` (or
    `p:Province {country: c}`) written in an expression, or a name spelling a label (`count(provinces)`)."""
    written = [
        m
        for m in re.finditer(rf"(?<![\w.$]){re.escape(name)}\s*:\s*`?(\w+)`?(\s*\{{[^{{}}]*\}})?", blanked)
        if _in_expression(blanked, m.start())
    ]
    labels = {m.group(1) for m in written}
    if len(labels) == 1 and (label := labels.pop()) in nodes:
        return label, written
    if written:
        return None
    spelt = [label for label in nodes if name_key(label) == name_key(name)]
    return (spelt[0], []) if len(spelt) == 1 else None


def matched_for(query: str, name: str, nodes: Nodes, rels: Iterable[Relationship]) -> str | None:
    """`name` used but bound nowhere, naming a label no pattern of the query has (`count(DISTINCT
    p:Province)` after `MATCH (c:Country {...})`): the model meant the nodes of that label joined to the
    query's one bound node the schema joins to it directly, by the one relationship type that does. They
    are matched (OPTIONAL, so that none counts 0) before the clause that first reads `name`, with any
    literal property the label expression compared (`{position: 'GK'}`; a variable there is the join
    itself). None when no or several bound nodes or relationship types would fit, when a WITH stands
    between (the bound node may be out of scope), or when the clause aggregates something else too (the new
    rows would multiply its count)."""
    blanked = blank_strings(query)
    found = _label_of(name, blanked, nodes)
    if found is None:
        return None
    label, written = found
    patterns_only = blanked  # `count(p:Player)` reads like a node pattern to labelled_variables
    for m in written:
        patterns_only = f"{patterns_only[: m.start()]}{' ' * (m.end() - m.start())}{patterns_only[m.end() :]}"
    bindings = labelled_variables(patterns_only)
    matched = set(bindings.values()) | {m.group(1) for m in ANONYMOUS_NODE.finditer(patterns_only)}
    if name in bindings or label in matched:
        return None  # the label is matched already: another repair's case, not this one
    joins = [
        (variable, rel)
        for variable, bound_label in bindings.items()
        for rel in set(rels)
        if {rel[0], rel[2]} == {bound_label, label} or (rel[0] == rel[2] == label == bound_label)
    ]
    if len({variable for variable, _ in joins}) != 1 or len({rel[1] for _, rel in joins}) != 1:
        return None
    variable, rel = joins[0]
    properties = [
        f"{pair.group(1)}: {pair.group(2)}"
        for m in written
        if m.group(2)
        for pair in _LITERAL_PAIR.finditer(query[m.start(2) : m.end(2)].strip().strip("{}"))
    ]
    fixed = query
    for m in reversed(written):  # `p:Province {...}` -> `p`
        fixed = f"{fixed[: m.start()]}{name}{fixed[m.end() :]}"
    literal = f" {{{', '.join(properties)}}}" if properties else ""
    return _matched_before_first_read(
        fixed, name, f"OPTIONAL MATCH ({variable}){hop_text(rel, bindings[variable])}({name}:{label}{literal})"
    )


def _matched_before_first_read(query: str, name: str, pattern: str) -> str | None:
    """`pattern` (a MATCH clause binding `name`) put before the clause that first reads `name`. None when
    that clause is a WHERE (a pattern cannot go between a MATCH and its WHERE), when a WITH stands before
    it (the node the pattern starts from may be out of scope), or when it aggregates more than one thing
    (the new rows would multiply the other count)."""
    first = re.search(rf"(?<![\w.$]){re.escape(name)}\b", blank_strings(query))
    found_clauses = clauses(query)
    before = [
        c
        for c in found_clauses
        if first is not None
        and c.start <= first.start()
        and c.keyword in ("WITH", "RETURN", "WHERE", "ORDER BY", "UNWIND")
    ]
    if first is None or not before or before[-1].keyword == "WHERE":
        return None
    clause = before[-1]
    if any(c.keyword == "WITH" and c.start < clause.start for c in found_clauses):
        return None
    if len(AGGREGATE.findall(query[clause.body_start : clause.end])) > 1:
        return None
    return f"{query[: clause.start]}{pattern} {query[clause.start :]}"


def joined_for_reads(query: str, name: str, nodes: Nodes, rels: Iterable[Relationship]) -> str | None:
    """`name` read but bound nowhere and given no label (`RETURN i.number, s.name` after `MATCH
    (i:Invoice)-[:BILLS]->(po:PurchaseOrder)`): the model meant a neighbour of a bound node that it forgot to
    match. The candidates are the labels the schema joins directly to a bound node's label, by one
    relationship, that have every property read from `name`; with several, those whose label starts with
    the name's first letter. Exactly one (bound node, relationship, label) is matched before the clause that
    first reads `name`; None when that is not one, or when `name` is bound, counted or used bare."""
    blanked = blank_strings(query)
    read = set(re.findall(rf"(?<![\w.$]){re.escape(name)}\.(\w+)", blanked))
    bare = re.findall(rf"(?<![\w.$]){re.escape(name)}\b(?!\s*\.)", blanked)
    if not read or bare:
        return None
    bindings = labelled_variables(blanked)
    if name in bindings or re.search(
        rf"[(,]\s*{re.escape(name)}\s*[:)\]]|\bAS\s+{re.escape(name)}\b", blanked, re.IGNORECASE
    ):
        return None  # bound after all (an unlabelled node, a relationship or an alias): not this repair's case
    joins = [
        (variable, rel, far_end(rel, bound_label))
        for variable, bound_label in bindings.items()
        for rel in set(rels)
        if bound_label in (rel[0], rel[2]) and read <= set(nodes.get(far_end(rel, bound_label), []))
    ]
    if len(joins) > 1:
        joins = [j for j in joins if j[2].lower().startswith(name[0].lower())]
    if len(joins) != 1:
        return None
    variable, rel, label = joins[0]
    hop = hop_text(rel, bindings[variable])
    return _matched_before_first_read(query, name, f"MATCH ({variable}){hop}({name}:{label})")
