"""A graph as the question generator sees it, read from the live database alone: its labels, what each node is
named by, which properties hold figures, and every relationship type between two labels. Nothing here knows
a graph: the name property, the figures and the links are found from the data (bench/kgqa/schema_questions.py
asks about them)."""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any

NAME_WORDS = ("name", "title")
MIN_NAME_UNIQUENESS = 0.5  # a text property is a name when at least this share of its values are distinct
MIN_FIGURE_COVERAGE = 0.5  # a figure property is asked about when at least this share of nodes have it
MAX_TEXT_CHARS = 40  # longer texts are descriptions, not values an answer states


def words(identifier: str) -> str:
    """An identifier as lower-case words: "PurchaseOrder" -> "purchase order", "area_km2" -> "area km2"."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", identifier.replace("_", " "))
    return " ".join(spaced.lower().split())


def plural(phrase: str) -> str:
    head, _, last = phrase.rpartition(" ")
    if last.endswith("y") and len(last) > 1 and last[-2] not in "aeiou":
        last = last[:-1] + "ies"
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        last += "es"
    else:
        last += "s"
    return f"{head} {last}".strip()


def usable_name(value: Any) -> bool:
    """A name a question can state: text with a letter, three characters or more."""
    return isinstance(value, str) and len(value.strip()) >= 3 and any(c.isalpha() for c in value)


@dataclass
class Label:
    name: str
    key: str | None  # the property nodes are named by
    figures: list[str]  # numeric properties worth aggregating (not identifiers)
    texts: list[str]  # other short text properties (answers to a lookup)
    nodes: dict[int, dict[str, Any]]  # node id -> properties

    @property
    def words(self) -> str:
        return words(self.name)

    @property
    def plural(self) -> str:
        return plural(self.words)

    def name_of(self, node: int) -> str | None:
        return self.nodes[node].get(self.key) if self.key else None


@dataclass
class Link:
    source: str
    type: str
    target: str
    out: dict[int, list[int]] = field(default_factory=dict)
    into: dict[int, list[int]] = field(default_factory=dict)

    @property
    def symmetric(self) -> bool:
        """Stored both ways (a border, a marriage): the direction means nothing."""
        return self.source == self.target and all(a in self.out.get(b, []) for a, bs in self.out.items() for b in bs)

    @property
    def words(self) -> str:
        return words(self.type)


@dataclass
class Snapshot:
    labels: dict[str, Label]
    links: list[Link]
    label_of: dict[int, str] = field(default_factory=dict)
    # node id -> its name, for the nodes whose name no other node in the graph has (a question can name them)
    named: dict[int, str] = field(default_factory=dict)

    def stored_texts(self) -> set[str]:
        """Every text value in the graph, lower case: an invented name must be none of them, nor inside one."""
        return {
            str(v).lower()
            for label in self.labels.values()
            for props in label.nodes.values()
            for v in props.values()
            if isinstance(v, str)
        }

    def neighbours(self, node: int) -> set[int]:
        """Nodes one relationship away, in either direction."""
        found: set[int] = set()
        for link in self.links:
            found.update(link.out.get(node, []))
            found.update(link.into.get(node, []))
        return found

    def distances(self, start: int, limit: int) -> dict[int, int]:
        """Fewest relationships from `start` to every node within `limit` (breadth-first, either direction)."""
        seen = {start: 0}
        todo = deque([start])
        while todo:
            node = todo.popleft()
            if seen[node] >= limit:
                continue
            for nxt in sorted(self.neighbours(node)):
                if nxt not in seen:
                    seen[nxt] = seen[node] + 1
                    todo.append(nxt)
        return seen


def _key(props: list[dict[str, Any]]) -> str | None:
    """The text property that names the nodes: present on nearly all, mostly distinct; a key called a name or
    title first, the most distinct otherwise."""
    candidates: list[tuple[bool, float, str]] = []
    keys = {k for p in props for k in p}
    for key in sorted(keys):
        values = [p[key] for p in props if isinstance(p.get(key), str)]
        if len(values) < 0.9 * len(props) or not values:
            continue
        uniqueness = len(set(values)) / len(values)
        if uniqueness >= MIN_NAME_UNIQUENESS and sum(usable_name(v) for v in values) >= 0.9 * len(values):
            candidates.append((key.lower().endswith(NAME_WORDS), uniqueness, key))
    return max(candidates)[2] if candidates else None


def _figures(props: list[dict[str, Any]], key: str | None) -> list[str]:
    keys = {k for p in props for k in p} - {key}
    found = []
    for k in sorted(keys):
        values = [p.get(k) for p in props]
        numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(numbers) >= MIN_FIGURE_COVERAGE * len(props) and not k.lower().endswith("id") and len(set(numbers)) > 1:
            found.append(k)
    return found


def _texts(props: list[dict[str, Any]], key: str | None) -> list[str]:
    keys = {k for p in props for k in p} - {key}
    return [
        k
        for k in sorted(keys)
        if not k.lower().endswith("id")
        and sum(isinstance(p.get(k), str) and 2 <= len(p[k]) <= MAX_TEXT_CHARS for p in props) >= 0.5 * len(props)
    ]


async def read_snapshot(graph: Any) -> Snapshot:
    """The whole graph in memory (the benchmark graphs hold tens of thousands of nodes at most)."""
    labels: dict[str, Label] = {}
    label_of: dict[int, str] = {}
    for (label,) in (await graph.query("CALL db.labels()")).result_set:
        rows = (await graph.query(f"MATCH (n:`{label}`) RETURN id(n), properties(n)")).result_set
        nodes = {int(node_id): dict(props) for node_id, props in rows}
        props = list(nodes.values())
        key = _key(props)
        labels[label] = Label(label, key, _figures(props, key), _texts(props, key), nodes)
        for node_id in nodes:
            label_of.setdefault(node_id, label)
    links: list[Link] = []
    patterns = (await graph.query("MATCH (a)-[r]->(b) RETURN DISTINCT labels(a)[0], type(r), labels(b)[0]")).result_set
    for source, type_, target in sorted(patterns):
        link = Link(source, type_, target)
        rows = (await graph.query(f"MATCH (a:`{source}`)-[:`{type_}`]->(b:`{target}`) RETURN id(a), id(b)")).result_set
        for a, b in rows:
            link.out.setdefault(int(a), []).append(int(b))
            link.into.setdefault(int(b), []).append(int(a))
        links.append(link)
    counts: dict[str, int] = {}
    for label in labels.values():
        for node in label.nodes:
            name = label.name_of(node)
            if usable_name(name):
                counts[str(name).lower()] = counts.get(str(name).lower(), 0) + 1
    named = {
        node: str(label.name_of(node))
        for label in labels.values()
        for node in label.nodes
        if usable_name(label.name_of(node)) and counts[str(label.name_of(node)).lower()] == 1
    }
    return Snapshot(labels, links, label_of, named)
