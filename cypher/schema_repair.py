"""Schema-driven repairs of a generated Cypher query: where the live schema leaves exactly one reading of
what the query meant, the query is rewritten to it instead of going back to the model.

A small model keeps three habits the schema can undo without a guess:
- a neighbour read as a property: `i.supplier` on an Invoice, `o.deliver_to` on an order. When the name is
  another label's (or a relationship type's at the label) and one shortest path in the schema leads
  there, the query matches that path and reads the neighbour's name;
- two labels joined directly that the schema joins only through a third: `(:Supplier)-[:ISSUED_TO]->
  (:Warehouse)` when orders are issued to suppliers and delivered to warehouses;
- a variable used but never bound (`RETURN p.population` after `MATCH (c:Country ...)`): when exactly one
  bound variable's label has what is read from it, that variable is meant.

Each function takes the query and the schema (label -> property keys; (start label, type, end label)
relationships) and returns the rewritten query, or None when the schema leaves any doubt. Nothing here
knows a particular graph: the names come from the schema and the query only."""

from __future__ import annotations

import re
from collections.abc import Iterable

from cypher.clause_order import AGGREGATE, DISTINCT, clauses, free_name, split_items
from cypher.text import blank_strings, labelled_variables, replace_outside_strings

Nodes = dict[str, list[str]]
Relationship = tuple[str, str, str]

MAX_HOPS = 3  # a neighbour further away than this is not what a property name means
_SUFFIX = re.compile(r"^(?P<stem>.+?)[_\s]*(?P<suffix>ids?|names?|keys?|codes?|numbers?|no)$", re.IGNORECASE)
# A guardrail path "(:A)-[:T]->(:B)" and one plain hop as written in a query (schema_check reads them too).
PATH_LABELS = re.compile(r"\(:(\w+)\)")
ONE_HOP = re.compile(r"^(\(.*?\))\s*(<?-)\[(\w*)\s*:\s*`?\w+`?([^\]]*)\](->|-)\s*(\(.*\))$")
ANONYMOUS_NODE = re.compile(r"\(\s*:\s*`?(\w+)`?")  # `(:Label`: a node pattern with a label and no variable


def _reads(variable: str, prop: str) -> re.Pattern[str]:
    """`variable.prop` as an expression (`variable` may be `\\w+` to find every reader)."""
    return re.compile(rf"(?<![\w.$]){variable}\.{re.escape(prop)}\b")


def _key(name: str) -> str:
    """A name compared without case, separators or a plural s: `purchase_orders` ~ `PurchaseOrder`."""
    key = re.sub(r"[^a-z0-9]", "", name.lower())
    return key[:-1] if len(key) > 3 and key.endswith("s") and not key.endswith("ss") else key


def hop_text(rel: Relationship, from_label: str) -> str:
    """One relationship written from `from_label`'s side, in its stored direction."""
    start, rel_type, _ = rel
    return f"-[:{rel_type}]->" if start == from_label else f"<-[:{rel_type}]-"


def far_end(rel: Relationship, from_label: str) -> str:
    """The label at the other end of `rel` from `from_label`."""
    start, _, end = rel
    return end if start == from_label else start


def label_paths(start: str, goal: str, rels: Iterable[Relationship],
                max_hops: int = MAX_HOPS) -> list[list[Relationship]]:
    """Every shortest path of relationships from label `start` to label `goal` (no label visited twice),
    at most `max_hops` long; [] when there is none that short."""
    rels = sorted(set(rels))
    frontier: list[tuple[str, list[Relationship], set[str]]] = [(start, [], {start})]
    for _ in range(max_hops):
        reached: list[list[Relationship]] = []
        grown: list[tuple[str, list[Relationship], set[str]]] = []
        for label, path, seen in frontier:
            for rel in rels:
                if label not in (rel[0], rel[2]):
                    continue
                other = rel[2] if rel[0] == label else rel[0]
                if other in seen:
                    continue
                if other == goal:
                    reached.append([*path, rel])
                else:
                    grown.append((other, [*path, rel], seen | {other}))
        if reached:
            return reached
        frontier = grown
    return []


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
    suffix = _SUFFIX.match(prop)
    stems = [prop, suffix.group("stem")] if suffix else [prop]
    for stem in stems:
        named = [other for other in nodes if other != label and _key(other) == _key(stem)]
        if len(named) == 1:
            return named[0]
        ends = {(r[2] if r[0] == label else r[0]) for r in rels if label in (r[0], r[2]) and _key(r[1]) == _key(stem)}
        ends.discard(label)
        if len(ends) == 1:
            return ends.pop()
    return None


def display_property(props: list[str], prop: str) -> str | None:
    """The property of a neighbour that a name like `prop` reads: the same name, the one ending in its
    suffix (`supplier_id` -> `id` or `supplier_id`), else the neighbour's name; None when nothing fits."""
    if prop in props:
        return prop
    suffix = _SUFFIX.match(prop)
    if suffix:
        wanted = _key(suffix.group("suffix"))
        fitting = sorted((p for p in props if _key(p) == wanted or _key(p).endswith(wanted)), key=len)
        if fitting:
            return fitting[0]
    for preferred in ("name", "title"):
        if preferred in props:
            return preferred
    named = [p for p in props if _key(p).endswith("name")]
    return named[0] if len(named) == 1 else None


def neighbour_property(query: str, label: str, prop: str, nodes: Nodes, rels: Iterable[Relationship]) -> str | None:
    """`v.prop` on a node of `label` that has no such property, where `prop` names a neighbour reached by
    one shortest schema path: the query matches that path right after the MATCH that binds v, and reads the
    neighbour's property instead. None when the variable, the neighbour, the path or the property to read
    is not certain, v is bound in an OPTIONAL MATCH (a new required MATCH would drop its rows), or a WITH
    follows (it would drop the neighbour's variable)."""
    rels = set(rels)
    blanked = blank_strings(query)
    read = _reads(r"(\w+)", prop)
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
    binding = next((c for c in clauses(query) if binds.search(blanked[c.start:c.end])), None)
    if binding is None or binding.keyword != "MATCH":
        return None
    at = _after_last_with(query, variable, prop, binding.end)
    if at is None:
        return None
    new = free_name(query, re.sub(r"\W", "", target.lower()) or "n")
    pattern = f"MATCH ({variable}){_path_pattern(paths[0], label, new)}"
    head, tail = query[:at].rstrip(), query[at:].lstrip()
    fixed = f"{head} {pattern}{' ' if tail else ''}{tail}"
    fixed = replace_outside_strings(fixed, _reads(re.escape(variable), prop), f"{new}.{shown}")
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
    if variable not in {item.strip() for item in split_items(query[last.body_start:last.end])}:
        return None  # the WITH does not pass the variable on: the neighbour cannot be reached after it
    at = next((c.start for c in parts if c.start > last.start and c.keyword not in _WITH_TAIL), len(query))
    if _reads(re.escape(variable), prop).search(blank_strings(query[:at])):
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
    read = re.compile(rf"^(?:DISTINCT\s+)?{re.escape(variable)}\.{re.escape(shown)}(?:\s+AS\s+(\w+))?$",
                      re.IGNORECASE)
    hits = [hit for item in split_items(query[clause.body_start:clause.end]) if (hit := read.match(item))]
    if not hits:
        return query
    alias = f"{hits[0].group(1) or shown}_{name}"
    if re.search(rf"\b{re.escape(alias)}\b", query):
        alias = free_name(query, alias)
    body, rest = query[clause.body_start:clause.end].rstrip(), query[clause.end:].lstrip()
    return f"{query[:clause.body_start]}{body}, {variable}.{name} AS {alias}{' ' if rest else ''}{rest}"


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


_NOT_DEFINED = re.compile(r"'(\w+)' not defined")


def undefined_name(error: str) -> str | None:
    """The name in FalkorDB's "'p' not defined", or None for another error."""
    found = _NOT_DEFINED.search(error or "")
    return found.group(1) if found else None


def _anonymous_named(query: str, blanked: str, name: str) -> str | None:
    """`count(purchaseOrder)` over `(:PurchaseOrder)`: the one unnamed node pattern whose label the name
    spells (in any case, singular or plural) gets that name."""
    anonymous = [m for m in ANONYMOUS_NODE.finditer(blanked)
                 if _key(name) == _key(m.group(1))]
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


def moved_property(query: str, label: str, prop: str, nodes: Nodes) -> str | None:
    """`c.name` on a node of `label` that has no such property, in a query where exactly one other node
    pattern's label has it (a named variable, or an unnamed node, which is then named): the read is moved
    there (`(c:Currency)<-[:USES]-(:Country) RETURN count(c.name)` counts the countries' names). None when
    no node or several have it, or the variable reading it is not of `label`."""
    blanked = blank_strings(query)
    bound = labelled_variables(blanked)
    readers = {v for v in _reads(r"(\w+)", prop).findall(blanked) if bound.get(v) == label}
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
        fixed = replace_outside_strings(fixed, _reads(re.escape(reader), prop), f"{target}.{prop}")
    return fixed


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
    if re.search(rf"\bAS\s+{re.escape(name)}\b|\(\s*{re.escape(name)}\s*[:){{]|\[\s*{re.escape(name)}\b"
                 rf"|\b{re.escape(name)}\s*=\s*\(", blanked, re.IGNORECASE):
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
            found.append((query[m.start():m.end()], f"(:{left})-[:{rel_type}]->(:{right})"))
    return found


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
    items = split_items(query[clause.body_start:clause.end])
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
    rest = query[clause.end:].lstrip()
    return f"{query[:clause.body_start]} {body}{' ' if rest else ''}{rest}"


_LITERAL_PAIR = re.compile(r"(?<!\w)(\w++)\s*+:\s*+('(?:[^'\\]++|\\.)*+'|-?\d++(?:\.\d++)?+|true|false)\s*+(?:,|$)",
                           re.IGNORECASE)


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
    written = [m for m in re.finditer(rf"(?<![\w.$]){re.escape(name)}\s*:\s*`?(\w+)`?(\s*\{{[^{{}}]*\}})?", blanked)
               if _in_expression(blanked, m.start())]
    labels = {m.group(1) for m in written}
    if len(labels) == 1 and (label := labels.pop()) in nodes:
        return label, written
    if written:
        return None
    spelt = [label for label in nodes if _key(label) == _key(name)]
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
        patterns_only = f"{patterns_only[:m.start()]}{' ' * (m.end() - m.start())}{patterns_only[m.end():]}"
    bindings = labelled_variables(patterns_only)
    matched = set(bindings.values()) | {m.group(1) for m in ANONYMOUS_NODE.finditer(patterns_only)}
    if name in bindings or label in matched:
        return None  # the label is matched already: another repair's case, not this one
    joins = [(variable, rel) for variable, bound_label in bindings.items() for rel in set(rels)
             if {rel[0], rel[2]} == {bound_label, label} or (rel[0] == rel[2] == label == bound_label)]
    if len({variable for variable, _ in joins}) != 1 or len({rel[1] for _, rel in joins}) != 1:
        return None
    variable, rel = joins[0]
    properties = [f"{pair.group(1)}: {pair.group(2)}" for m in written if m.group(2)
                  for pair in _LITERAL_PAIR.finditer(query[m.start(2):m.end(2)].strip().strip("{}"))]
    fixed = query
    for m in reversed(written):  # `p:Province {...}` -> `p`
        fixed = f"{fixed[:m.start()]}{name}{fixed[m.end():]}"
    literal = f" {{{', '.join(properties)}}}" if properties else ""
    return _matched_before_first_read(
        fixed, name, f"OPTIONAL MATCH ({variable}){hop_text(rel, bindings[variable])}({name}:{label}{literal})")


def _matched_before_first_read(query: str, name: str, pattern: str) -> str | None:
    """`pattern` (a MATCH clause binding `name`) put before the clause that first reads `name`. None when
    that clause is a WHERE (a pattern cannot go between a MATCH and its WHERE), when a WITH stands before
    it (the node the pattern starts from may be out of scope), or when it aggregates more than one thing
    (the new rows would multiply the other count)."""
    first = re.search(rf"(?<![\w.$]){re.escape(name)}\b", blank_strings(query))
    found_clauses = clauses(query)
    before = [c for c in found_clauses if first is not None and c.start <= first.start()
              and c.keyword in ("WITH", "RETURN", "WHERE", "ORDER BY", "UNWIND")]
    if first is None or not before or before[-1].keyword == "WHERE":
        return None
    clause = before[-1]
    if any(c.keyword == "WITH" and c.start < clause.start for c in found_clauses):
        return None
    if len(AGGREGATE.findall(query[clause.body_start:clause.end])) > 1:
        return None
    return f"{query[:clause.start]}{pattern} {query[clause.start:]}"


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
    if name in bindings or re.search(rf"[(,]\s*{re.escape(name)}\s*[:)\]]|\bAS\s+{re.escape(name)}\b",
                                     blanked, re.IGNORECASE):
        return None  # bound after all (an unlabelled node, a relationship or an alias): not this repair's case
    joins = [(variable, rel, far_end(rel, bound_label)) for variable, bound_label in bindings.items()
             for rel in set(rels)
             if bound_label in (rel[0], rel[2]) and read <= set(nodes.get(far_end(rel, bound_label), []))]
    if len(joins) > 1:
        joins = [j for j in joins if j[2].lower().startswith(name[0].lower())]
    if len(joins) != 1:
        return None
    variable, rel, label = joins[0]
    hop = hop_text(rel, bindings[variable])
    return _matched_before_first_read(query, name, f"MATCH ({variable}){hop}({name}:{label})")
