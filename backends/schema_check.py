"""Check a query against the graph's live schema before it runs: labels, relationship types and the
direction they go between which labels, and the properties each label has.

cypher-guardrail (pinned) does the reading of the query: chosen over cypher_guard (its parser rejects
ORDER BY, CONTAINS, count(DISTINCT ...)), cypher_validator (cannot parse a relationship type named like a
keyword, e.g. CONTAINS) and CyVer (needs a live Neo4j) after measuring all of them on FalkorDB's dialect:
0 false positives on 45 valid queries, every schema problem among 41 invalid ones found. Its schema and
property checks run offline on a snapshot of the schema read here from the graph, in a process of their own
(backends/query_checker.py: the library brings pandas, which the worker does without); syntax and functions
are FalkorDB's own job (GRAPH.EXPLAIN, in tools/graph_query.py).
"""

from __future__ import annotations

import asyncio
import re
import time
from functools import partial
from typing import Any

from backends.graph_store import BOOKKEEPING_LABELS, GraphStore
from backends.query_checker import QueryChecker, SchemaFacts, shared_checker
from contracts.query_path import Grounding
from cypher.neighbour_repair import neighbour_property
from cypher.property_repair import count_as_property, moved_property
from cypher.relationship_repair import ONE_HOP, PATH_LABELS, through_middle, unknown_type_hops
from cypher.text import NODE_LABEL, blank_strings
from cypher.unbound_repair import bound_instead, joined_for_reads, matched_for, undefined_name
from planning.sql_habits import subquery_hint
from questions.asked_for import asked_label, route, schema_words
from questions.schema_routes import connections
from questions.walks import named_start_doubts, short_walks, unmatched_labels, without_names
from service.off_loop import off_loop

SNAPSHOT_TTL_S = 60.0  # the schema changes rarely; a new label or property is seen within a minute
MAX_DIRECTION_FIXES = 6
MAX_UNBOUND_FIXES = 3
# The types of a relationship pattern: [:A], [r:A|B], [r:A|:B*1..3]
REL_TYPES = re.compile(r"\[\s*\w*\s*:\s*((?:`?\w+`?\s*\|?\s*:?\s*)+)")


class SchemaCheck:
    def __init__(self, graph: GraphStore, checker: QueryChecker | None = None) -> None:
        self.graph = graph
        self.checker = checker or shared_checker()
        self._schema: tuple[float, SchemaFacts] | None = None
        self._lock = asyncio.Lock()

    async def _current(self) -> SchemaFacts:
        async with self._lock:
            if self._schema is None or time.monotonic() - self._schema[0] > SNAPSHOT_TTL_S:
                nodes, rels, rel_props = await self._read_schema()
                self._schema = (time.monotonic(), SchemaFacts(nodes, rels, rel_props, self.graph.graph_name))
            return self._schema[1]

    async def facts(self) -> SchemaFacts:
        """The schema as last read: each label's keys and the (from, type, to) relationships."""
        return await self._current()

    async def _read_schema(self) -> tuple[dict[str, list[str]], set[tuple[str, str, str]], dict[str, list[str]]]:
        skip = {"skip": list(BOOKKEEPING_LABELS)}
        nodes: dict[str, list[str]] = {}
        for label, key in (
            await self.graph.ro_query(
                "MATCH (n) WHERE NOT labels(n)[0] IN $skip UNWIND keys(n) AS k RETURN DISTINCT labels(n)[0], k",
                skip,
                max_rows=100_000,
                timeout_ms=30_000,
            )
        ).rows:
            nodes.setdefault(str(label), []).append(str(key))
        for (label,) in (await self.graph.ro_query("CALL db.labels()", max_rows=10_000)).rows:
            if label not in BOOKKEEPING_LABELS:
                nodes.setdefault(str(label), [])
        rels = {
            (str(a), str(t), str(b))
            for a, t, b in (
                await self.graph.ro_query(
                    "MATCH (a)-[r]->(b) RETURN DISTINCT labels(a)[0], type(r), labels(b)[0]",
                    max_rows=100_000,
                    timeout_ms=30_000,
                )
            ).rows
            if a not in BOOKKEEPING_LABELS and b not in BOOKKEEPING_LABELS
        }
        rel_props: dict[str, list[str]] = {}
        for rel_type, key in (
            await self.graph.ro_query(
                "MATCH ()-[r]->() UNWIND keys(r) AS k RETURN DISTINCT type(r), k", max_rows=100_000, timeout_ms=30_000
            )
        ).rows:
            rel_props.setdefault(str(rel_type), []).append(str(key))
        return nodes, rels, rel_props

    async def corrected(self, query: str) -> str | None:
        """The query with what the schema can only have meant put right, where it leaves no doubt: an
        unbound variable read as the node it must mean (FalkorDB's "'p' not defined") or matched from the
        one bound node the schema joins to the label it names (`count(p:Province)`), an unknown label
        renamed, each relationship written against its direction turned round, one that does not join its
        two labels (or an invented type) replaced by the only one that does (or bridged through the one label
        between them), a neighbour read as a property matched through its path, a property read from a node
        that lacks it moved to the one node that has it, and a count named after a stored property replaced
        by that property (the repairs cypher/schema_repair.py lists). None when there is nothing to correct."""
        schema = await self._current()
        nodes, rels = schema.nodes, schema.rels
        if not nodes:
            return None
        # The repairs read the whole query: each runs off the event loop, one thread hop per round of findings,
        # and none where the findings leave nothing to repair.
        fixed = query
        for _ in range(MAX_UNBOUND_FIXES):  # FalkorDB names one unbound variable at a time
            unbound = undefined_name(await self.graph.explain_error(fixed) or "")
            bound = unbound and await off_loop("binding an unbound name", partial(_bound, fixed, unbound, nodes, rels))
            if not bound:
                break
            fixed = bound
        unknown_labels = _found(await self.checker.findings(schema, "schema", fixed), "UnknownLabel")
        if unknown_labels:
            fixed = await off_loop("renaming unknown labels", partial(_labels_renamed, fixed, unknown_labels, nodes))
        unknown_types = _found(await self.checker.findings(schema, "schema", fixed), "UnknownRelationshipType")
        if unknown_types:
            fixed = await off_loop(
                "replacing unknown relationship types", partial(_types_replaced, fixed, unknown_types, rels)
            )
        for _ in range(MAX_DIRECTION_FIXES):
            paths = _found(await self.checker.findings(schema, "schema", fixed), "WrongDirectionPath", "UnknownPath")
            turned = await off_loop("turning paths", partial(_path_turned, fixed, paths, rels)) if paths else None
            if turned is None:
                break
            fixed = turned
        misread = [
            item
            for item in _found(await self.checker.findings(schema, "properties", fixed), "InvalidPropertyAccess")
            if item.get("kind", "node") == "node"
        ]
        fixed = await off_loop("moving properties", partial(_properties_moved, fixed, misread, nodes, rels))
        return fixed if fixed != query else None

    async def connections(self, question: str, grounding: Grounding) -> list[str]:
        """For the planner: how the schema joins the question's names, to each other and to what it asks
        for (questions.schema_routes)."""
        schema = await self._current()
        return await off_loop(
            "how the schema joins the question's names",
            partial(connections, question, grounding, list(schema.nodes), schema.rels),
        )

    async def unasked(self, question: str, queries: list[str]) -> str | None:
        """When the question asks for a kind of thing ("which supplier ...") that no query matches, what to
        say, with the schema's route to it from what the queries do match; None otherwise."""
        return await off_loop(
            "the check of what the question asks for", partial(unasked_in, await self._current(), question, queries)
        )

    async def walk_doubts(self, question: str, queries: list[str], grounding: Grounding) -> list[str]:
        """Relationships the question spells out more often than the queries walk them, labels it names that
        no query matches, and queries that return, or rank by, only the things the question names
        (questions.walks)."""
        return await off_loop(
            "the reading of walks", partial(walk_doubts_in, await self._current(), question, queries, grounding)
        )

    async def sql_hint(self, query: str) -> str | None:
        """For a query with an SQL subquery, the Cypher pattern to write instead (planning.sql_habits)."""
        schema = await self._current()
        return await off_loop("the SQL habit check", partial(subquery_hint, query, schema.nodes, schema.rels))

    async def problems(self, query: str) -> list[str]:
        """What the query names that the graph does not have, each with what it has instead."""
        schema = await self._current()
        if not schema.nodes:
            return []  # an empty graph: nothing to check against
        found: list[str] = []
        schema_meta, property_meta = await asyncio.gather(
            self.checker.findings(schema, "schema", query), self.checker.findings(schema, "properties", query)
        )
        for item in [*schema_meta, *property_meta]:
            message = _explain(item, schema.nodes, schema.rels)
            if message and message not in found:
                found.append(message)
        return found


# The checks over the question and the queries, pure: the methods above run them off the event loop, and a
# caller that asks several at once (the planner's doubts) runs them in one thread hop.


def unasked_in(schema: SchemaFacts, question: str, queries: list[str]) -> str | None:
    """SchemaCheck.unasked on a schema already read."""
    nodes, rels = schema.nodes, schema.rels
    label = asked_label(question, list(nodes))
    if label is None or not queries:
        return None
    used = _used_labels(queries)
    if label in used or label in _reached(queries, rels):
        return None
    path = route(sorted(used & nodes.keys()), label, rels)
    reach = f" (the schema reaches it as {path})" if path else ""
    return f"the question asks which {label}, but no query matches a {label}{reach}: match it and return its name"


def walk_doubts_in(schema: SchemaFacts, question: str, queries: list[str], grounding: Grounding) -> list[str]:
    """SchemaCheck.walk_doubts on a schema already read."""
    plain = without_names(question, grounding)
    doubts = short_walks(plain, queries, {rel_type for _, rel_type, _ in schema.rels})
    used = _used_labels(queries)
    for label in unmatched_labels(plain, used | _reached(queries, schema.rels), sorted(schema.nodes)):
        doubts.append(f"the question names {label} ('{schema_words(label)}'), which no query matches")
    return doubts + named_start_doubts(queries, grounding)


# The repairs of `corrected`, one round each, pure.


def _found(findings: list[dict[str, Any]], *codes: str) -> list[dict[str, Any]]:
    """The checker's findings of these codes (it names them with a module prefix)."""
    return [item for item in findings if str(item.get("code", "")).endswith(codes)]


def _bound(query: str, unbound: str, nodes: dict[str, list[str]], rels: set[tuple[str, str, str]]) -> str | None:
    """An unbound variable read as the node it must mean, or matched from the one bound node it joins."""
    return (
        bound_instead(query, unbound, nodes)
        or matched_for(query, unbound, nodes, rels)
        or joined_for_reads(query, unbound, nodes, rels)
    )


def _labels_renamed(query: str, unknown: list[dict[str, Any]], nodes: dict[str, list[str]]) -> str:
    """Each unknown label renamed to the one it must have meant."""
    for item in unknown:
        query = renamed_label(query, str(item.get("label", "")), nodes) or query
    return query


def _types_replaced(query: str, unknown: list[dict[str, Any]], rels: set[tuple[str, str, str]]) -> str:
    """Each hop of an unknown relationship type given the only type that joins its labels, or bridged."""
    for item in unknown:
        for original, path in unknown_type_hops(query, str(item.get("relationship_type", ""))):
            meant = only_relationship(original, path, rels) or through_middle(original, path, rels, query)
            query = query.replace(original, meant, 1) if meant else query
    return query


def _path_turned(query: str, paths: list[dict[str, Any]], rels: set[tuple[str, str, str]]) -> str | None:
    """The query with its first path written against its direction turned round, or the first path that does
    not exist replaced by the only one that does; None when there is none."""
    turns = [
        (str(m["original_path"]), str(m["suggested_path"]))
        for m in paths
        if str(m.get("code", "")).endswith("WrongDirectionPath")
        and m.get("suggested_path")
        and str(m.get("original_path", "")) in query
    ]
    turns += [
        (str(m["original_path"]), only)
        for m in paths
        if str(m.get("code", "")).endswith("UnknownPath")
        and str(m.get("original_path", "")) in query
        and (
            only := only_relationship(str(m["original_path"]), str(m.get("path", "")), rels)
            or through_middle(str(m["original_path"]), str(m.get("path", "")), rels, query)
        )
    ]
    if not turns:
        return None
    original, suggested = turns[0]
    return query.replace(original, suggested.strip(), 1)


def _properties_moved(
    query: str, misread: list[dict[str, Any]], nodes: dict[str, list[str]], rels: set[tuple[str, str, str]]
) -> str:
    """Each property read from a node that lacks it read through its path or moved to the one node that has it,
    then a count named after a stored property replaced by that property."""
    for item in misread:
        for prop in item.get("properties", []):
            label = str(item.get("name", ""))
            query = (
                neighbour_property(query, label, str(prop), nodes, rels)
                or moved_property(query, label, str(prop), nodes)
                or query
            )
    return count_as_property(query, nodes) or query


def _used_labels(queries: list[str]) -> set[str]:
    """The labels the queries' node patterns name."""
    return {found for query in queries for found in NODE_LABEL.findall(blank_strings(query))}


def _reached(queries: list[str], rels: set[tuple[str, str, str]]) -> set[str]:
    """The labels at either end of the relationship types the queries use: `(p:Product)<-[:SUPPLIES]-(s)`
    matches suppliers even though `s` carries no label."""
    types = {
        t.strip(" `:")
        for query in queries
        for group in REL_TYPES.findall(blank_strings(query))
        for t in group.split("|")
    }
    return {label for a, rel_type, b in rels if rel_type in types for label in (a, b)}


def _explain(item: dict[str, Any], nodes: dict[str, list[str]], rels: set[tuple[str, str, str]]) -> str:
    """One problem in words a repair prompt can act on: what is wrong and what exists instead."""
    code = str(item.get("code", "")).rsplit(".", 1)[-1]
    if code == "UnknownLabel":
        return f"there is no label {item.get('label')}; labels: {', '.join(sorted(nodes))}"
    if code == "UnknownRelationshipType":
        known = sorted({f"(:{a})-[:{t}]->(:{b})" for a, t, b in rels})
        return f"there is no relationship type {item.get('relationship_type')}; relationships: {', '.join(known)}"
    if code == "WrongDirectionPath":
        return (
            f"{item.get('original_path')} goes against the relationship's direction: write {item.get('suggested_path')}"
        )
    if code == "UnknownPath":
        return f"{item.get('original_path')} does not exist: {_connections(str(item.get('path', '')), rels)}"
    if code == "InvalidPropertyAccess":
        label = str(item.get("name", ""))
        wanted = [str(p) for p in item.get("properties", [])]
        said = f"{label} has no property {', '.join(wanted)}; its properties: {', '.join(sorted(nodes.get(label, [])))}"
        return said + _related(label, wanted, rels)
    if code == "UnknownPropertyKey":
        return ""  # said better, with the label, by InvalidPropertyAccess
    return str(item.get("description", "")).strip()


def _between(a: str, b: str, rels: set[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The schema's relationships joining labels a and b, in either direction."""
    return [r for r in rels if {r[0], r[2]} == {a, b}]


def only_relationship(original: str, path: str, rels: set[tuple[str, str, str]]) -> str | None:
    """`original` (one hop, as written in the query) with its relationship replaced by the only one the
    schema has between its two labels, in that relationship's direction; None when there is not exactly
    one, or the hop is not a plain typed one."""
    labels = PATH_LABELS.findall(path)
    hop = ONE_HOP.match(original.strip())
    if len(labels) != 2 or labels[0] == labels[1] or hop is None or "*" in hop.group(4) or "[" in hop.group(6):
        return None  # not one plain typed hop between two different labels
    left, right = labels
    between = _between(left, right, rels)
    if len(between) != 1:
        return None
    start, rel_type, _ = between[0]
    node_a, variable, rest, node_b = hop.group(1), hop.group(3), hop.group(4), hop.group(6)
    inner = f"[{variable}:{rel_type}{rest}]"
    return f"{node_a}-{inner}->{node_b}" if start == left else f"{node_a}<-{inner}-{node_b}"


def closest_label(unknown: str, labels: list[str] | dict[str, list[str]]) -> str | None:
    """The one label an unknown label must have meant: the same but for case, or the only label whose name
    contains it or is contained in it ("Order" for PurchaseOrder); None when that is not one label."""
    wanted = unknown.lower()
    same = [label for label in labels if label.lower() == wanted]
    if len(same) == 1:
        return same[0]
    if len(wanted) < 3:
        return None
    near = [label for label in labels if wanted in label.lower() or label.lower() in wanted]
    return near[0] if len(near) == 1 else None


def renamed_label(query: str, unknown: str, labels: list[str] | dict[str, list[str]]) -> str | None:
    """The query with node label `unknown` (in `(n:Label` and `n:Label` positions) replaced by the label it
    must have meant (closest_label); None when there is no such label or nothing was replaced."""
    meant = closest_label(unknown, labels)
    if not unknown or meant is None:
        return None
    pattern = re.compile(r"(\(\s*\w*\s*:\s*|\b\w+:)`?" + re.escape(unknown) + r"`?(?=[\s){:]|$)")
    fixed = pattern.sub(lambda m: m.group(1) + meant, query)
    return fixed if fixed != query else None


def _related(label: str, wanted: list[str], rels: set[tuple[str, str, str]]) -> str:
    """A property named like a neighbouring label ("supplier" on an order) is reached by its relationship."""

    def stem(name: str) -> str:
        return re.sub(r"[_\s]*(id|name|key|code)$", "", name.lower()).rstrip("_")

    touching = sorted(r for r in rels if label in (r[0], r[2]))
    hints = []
    for prop in wanted:
        for a, t, b in touching:
            other = b if a == label else a
            if stem(prop) and stem(prop) == other.lower():
                hints.append(f"{prop} is the {other} node: match (:{a})-[:{t}]->(:{b}) and read its properties")
    return "; " + "; ".join(dict.fromkeys(hints)) if hints else ""


def _connections(path: str, rels: set[tuple[str, str, str]]) -> str:
    """How the two labels of a path that does not exist are connected in the schema: directly, through one
    label in between, or not at all."""
    labels = PATH_LABELS.findall(path)
    if len(labels) != 2:
        return "use only the relationships the schema lists"
    a, b = labels

    def show(rel: tuple[str, str, str]) -> str:
        return f"(:{rel[0]})-[:{rel[1]}]->(:{rel[2]})"

    direct = sorted(show(r) for r in _between(a, b, rels))
    if direct:
        return f"between {a} and {b} the graph has {', '.join(direct)}"
    touching = {x: [r for r in rels if x in (r[0], r[2])] for x in (a, b)}
    via = sorted(
        {(r[0] if r[2] == a else r[2]) for r in touching[a]}
        & {(r[0] if r[2] == b else r[2]) for r in touching[b]} - {a, b}
    )
    if via:
        middle = via[0]
        hops = sorted(show(r) for r in [*_between(a, middle, rels), *_between(b, middle, rels)])
        return f"{a} and {b} are connected through {middle}: {', '.join(hops)}"
    return f"{a} and {b} are not connected by one or two relationships in this graph"
