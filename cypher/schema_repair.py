"""Schema-driven repairs of a generated Cypher query: where the live schema leaves exactly one reading of
what the query meant, the query is rewritten to it instead of going back to the model.

A small model keeps habits the schema can undo without a guess, each repaired in a module of its own:
- a neighbour read as a property: `i.supplier` on an Invoice, `o.deliver_to` on an order
  (cypher/neighbour_repair.py);
- two labels joined directly that the schema joins only through a third, or by a relationship type it does
  not have (cypher/relationship_repair.py);
- a variable used but never bound: `RETURN p.population` after `MATCH (c:Country ...)`
  (cypher/unbound_repair.py);
- a property read from a node that lacks it, or counted where a node stores it (cypher/property_repair.py).

Each repair takes the query and the schema (label -> property keys; (start label, type, end label)
relationships) and returns the rewritten query, or None when the schema leaves any doubt. This module holds
what they share: the schema's shapes, how a name in a query is matched to a label or property, and the
shortest paths between labels. Nothing here knows a particular graph: the names come from the schema and the
query only."""

from __future__ import annotations

import re
from collections.abc import Iterable

Nodes = dict[str, list[str]]
Relationship = tuple[str, str, str]

MAX_HOPS = 3  # a neighbour further away than this is not what a property name means
NAME_SUFFIX = re.compile(r"^(?P<stem>.+?)[_\s]*(?P<suffix>ids?|names?|keys?|codes?|numbers?|no)$", re.IGNORECASE)
ANONYMOUS_NODE = re.compile(r"\(\s*:\s*`?(\w+)`?")  # `(:Label`: a node pattern with a label and no variable


def reads(variable: str, prop: str) -> re.Pattern[str]:
    """`variable.prop` as an expression (`variable` may be `\\w+` to find every reader)."""
    return re.compile(rf"(?<![\w.$]){variable}\.{re.escape(prop)}\b")


def name_key(name: str) -> str:
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


def label_paths(
    start: str, goal: str, rels: Iterable[Relationship], max_hops: int = MAX_HOPS
) -> list[list[Relationship]]:
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


def display_property(props: list[str], prop: str) -> str | None:
    """The property of a neighbour that a name like `prop` reads: the same name, the one ending in its
    suffix (`supplier_id` -> `id` or `supplier_id`), else the neighbour's name; None when nothing fits."""
    if prop in props:
        return prop
    suffix = NAME_SUFFIX.match(prop)
    if suffix:
        wanted = name_key(suffix.group("suffix"))
        fitting = sorted((p for p in props if name_key(p) == wanted or name_key(p).endswith(wanted)), key=len)
        if fitting:
            return fitting[0]
    for preferred in ("name", "title"):
        if preferred in props:
            return preferred
    named = [p for p in props if name_key(p).endswith("name")]
    return named[0] if len(named) == 1 else None
