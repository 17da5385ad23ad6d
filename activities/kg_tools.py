"""The knowledge-graph query tools of seed 002 (section 3.1), one activity each, same names and inputs.

Parameterized, read-only Cypher (`GRAPH.RO_QUERY`) with enforced limits. Labels, relationship types and
property keys come only from the ontology (never from the caller's text); search terms, names and
filter values travel as query parameters, so nothing a user or an LLM writes can change a query.
"""

from __future__ import annotations

import json
from typing import Any

from temporalio import activity

from activities.graph_store import GraphQueryError, GraphStore
from confidence_core.activity_io import StepInput, StepOutput
from confidence_core.models import ConfidenceMetrics
from confidence_core.ontology import Ontology, UnknownName

MAX_LIMIT = 100
MAX_HOPS = 3
MAX_PATH_DEPTH = 6


class BadArguments(ValueError):
    pass


def _int(arguments: dict[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = arguments.get(name, "")
    if not str(raw).strip():
        return default
    try:
        value = int(str(raw).strip())
    except ValueError as exc:
        raise BadArguments(f"{name} must be a whole number, got {raw!r}") from exc
    return min(max(value, low), high)


def _result(rows: list[Any], what: str, retry_count: int) -> StepOutput:
    if not rows:
        return StepOutput(success=True, output=json.dumps({"results": [], "count": 0}),
                          confidence=ConfidenceMetrics(score=0.3, reasoning=f"no {what} found",
                                                       retry_count=retry_count))
    return StepOutput(success=True, output=json.dumps({"results": rows, "count": len(rows)}, default=str),
                      confidence=ConfidenceMetrics(score=0.9, reasoning=f"{len(rows)} {what} found",
                                                   retry_count=retry_count))


def _refused(error: Exception, retry_count: int) -> StepOutput:
    return StepOutput(success=False, output=f"Bad arguments: {error}", error=str(error),
                      confidence=ConfidenceMetrics(score=0.0, reasoning=f"bad arguments: {error}",
                                                   retry_count=retry_count))


class KnowledgeGraphTools:
    def __init__(self, graph: GraphStore, ontology: Ontology) -> None:
        self.graph = graph
        self.ontology = ontology

    def all(self) -> list[Any]:
        return [self.search_instances, self.get_instance_neighbors, self.get_instances_by_class,
                self.find_path_between_instances, self.get_ontology_classes, self.get_ontology_relationships,
                self.describe_class, self.get_node_statistics]

    async def _run(self, request: StepInput, what: str, build) -> StepOutput:  # type: ignore[no-untyped-def]
        try:
            rows = await build(request.step.arguments)
        except (BadArguments, UnknownName, GraphQueryError) as exc:
            return _refused(exc, request.retry_count)
        return _result(rows, what, request.retry_count)

    def _label(self, class_name: str) -> str:
        return f":`{class_name}`" if class_name else ""

    def _match_instance(self, variable: str, parameter: str) -> str:
        """A node whose key or display property equals the parameter (exactly, or ignoring case)."""
        checks = " OR ".join(
            f"({variable}:`{name}` AND (toLower(toString({variable}.`{c.key}`)) = toLower(${parameter}) OR "
            f"toLower(toString({variable}.`{c.display}`)) = toLower(${parameter})))"
            for name, c in self.ontology.classes.items())
        return f"MATCH ({variable}) WHERE {checks}"

    def _instance(self, labels: list[str], props: dict[str, Any]) -> dict[str, Any]:
        return {"class": labels[0] if labels else None, **props}

    @activity.defn(name="search_instances")
    async def search_instances(self, request: StepInput) -> StepOutput:
        async def build(args: dict[str, str]) -> list[Any]:
            term = args.get("search_term", "").strip()
            if not term:
                raise BadArguments("search_term is required")
            class_name = args.get("class_name", "").strip()
            if class_name:
                self.ontology.require_class(class_name)
            limit = _int(args, "limit", 10, 1, MAX_LIMIT)
            rows = await self.graph.ro_query(
                f"MATCH (n{self._label(class_name)}) WHERE any(k IN keys(n) WHERE "
                f"toLower(toString(n[k])) CONTAINS toLower($term)) RETURN labels(n), properties(n) LIMIT {limit}",
                {"term": term}, max_rows=limit)
            return [self._instance(labels, props) for labels, props in rows.rows]
        return await self._run(request, "matching instances", build)

    @activity.defn(name="get_instance_neighbors")
    async def get_instance_neighbors(self, request: StepInput) -> StepOutput:
        async def build(args: dict[str, str]) -> list[Any]:
            name = args.get("instance_name", "").strip()
            if not name:
                raise BadArguments("instance_name is required")
            hops = _int(args, "hops", 1, 1, MAX_HOPS)
            direction = args.get("direction", "both").strip().lower() or "both"
            pattern = {"out": f"-[*1..{hops}]->", "in": f"<-[*1..{hops}]-", "both": f"-[*1..{hops}]-"}.get(direction)
            if pattern is None:
                raise BadArguments(f"direction must be in, out or both, got {direction!r}")
            rows = await self.graph.ro_query(
                f"{self._match_instance('n', 'name')} WITH n LIMIT 1 MATCH p = (n){pattern}(m) "
                f"RETURN DISTINCT [x IN relationships(p) | type(x)], labels(m), properties(m) LIMIT {MAX_LIMIT}",
                {"name": name}, max_rows=MAX_LIMIT)
            return [{"via": via, **self._instance(labels, props)} for via, labels, props in rows.rows]
        return await self._run(request, "neighbours", build)

    @activity.defn(name="get_instances_by_class")
    async def get_instances_by_class(self, request: StepInput) -> StepOutput:
        async def build(args: dict[str, str]) -> list[Any]:
            class_name = args.get("class_name", "").strip()
            self.ontology.require_class(class_name)
            try:
                filters = json.loads(args.get("filters") or "{}")
            except json.JSONDecodeError as exc:
                raise BadArguments(f"filters must be a JSON object: {exc}") from exc
            if not isinstance(filters, dict):
                raise BadArguments("filters must be a JSON object of property -> value")
            conditions, params = [], {}
            for i, (prop, value) in enumerate(filters.items()):
                self.ontology.require_property(class_name, prop)
                conditions.append(f"n.`{prop}` = $f{i}")
                params[f"f{i}"] = value
            limit = _int(args, "limit", 20, 1, MAX_LIMIT)
            where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
            rows = await self.graph.ro_query(f"MATCH (n:`{class_name}`){where} RETURN properties(n) LIMIT {limit}",
                                             params, max_rows=limit)
            return [{"class": class_name, **props} for (props,) in rows.rows]
        return await self._run(request, "instances", build)

    @activity.defn(name="find_path_between_instances")
    async def find_path_between_instances(self, request: StepInput) -> StepOutput:
        async def build(args: dict[str, str]) -> list[Any]:
            start, end = args.get("start_name", "").strip(), args.get("end_name", "").strip()
            if not start or not end:
                raise BadArguments("start_name and end_name are required")
            depth = _int(args, "max_depth", 4, 1, MAX_PATH_DEPTH)
            rows = await self.graph.ro_query(
                f"{self._match_instance('a', 'start')} WITH a LIMIT 1 "
                f"{self._match_instance('b', 'end')} WITH a, b LIMIT 1 "
                f"MATCH p = (a)-[*1..{depth}]-(b) RETURN [n IN nodes(p) | labels(n)[0]], "
                f"[n IN nodes(p) | properties(n)], [r IN relationships(p) | type(r)], length(p) "
                f"ORDER BY length(p) LIMIT 1", {"start": start, "end": end}, max_rows=1)
            return [{"length": length, "relationships": rels,
                     "nodes": [self._instance([label], props) for label, props in zip(labels, props_list, strict=True)]}
                    for labels, props_list, rels, length in rows.rows]
        return await self._run(request, "paths", build)

    @activity.defn(name="get_ontology_classes")
    async def get_ontology_classes(self, request: StepInput) -> StepOutput:
        async def build(_: dict[str, str]) -> list[Any]:
            return [{"class": n, "description": c.description, "key": c.key, "properties": c.properties}
                    for n, c in self.ontology.classes.items()]
        return await self._run(request, "classes", build)

    @activity.defn(name="get_ontology_relationships")
    async def get_ontology_relationships(self, request: StepInput) -> StepOutput:
        async def build(_: dict[str, str]) -> list[Any]:
            return [{"type": r.type, "from": r.from_, "to": r.to, "description": r.description}
                    for r in self.ontology.relationships]
        return await self._run(request, "relationships", build)

    @activity.defn(name="describe_class")
    async def describe_class(self, request: StepInput) -> StepOutput:
        async def build(args: dict[str, str]) -> list[Any]:
            class_name = args.get("class_name", "").strip()
            c = self.ontology.require_class(class_name)
            count = (await self.graph.ro_query(f"MATCH (n:`{class_name}`) RETURN count(n)")).rows[0][0]
            return [{"class": class_name, "description": c.description, "key": c.key, "display": c.display,
                     "properties": c.properties, "instances": count,
                     "relationships": [{"type": r.type, "from": r.from_, "to": r.to}
                                       for r in self.ontology.relationships_of(class_name)]}]
        return await self._run(request, "class descriptions", build)

    @activity.defn(name="get_node_statistics")
    async def get_node_statistics(self, request: StepInput) -> StepOutput:
        async def build(args: dict[str, str]) -> list[Any]:
            label = args.get("node_label", "").strip()
            names = [label] if label else list(self.ontology.classes)
            for name in names:
                self.ontology.require_class(name)
            stats = []
            for name in names:
                count = (await self.graph.ro_query(f"MATCH (n:`{name}`) RETURN count(n)")).rows[0][0]
                sample = await self.graph.ro_query(f"MATCH (n:`{name}`) RETURN properties(n) LIMIT 3", max_rows=3)
                stats.append({"class": name, "count": count, "samples": [props for (props,) in sample.rows]})
            return stats
        return await self._run(request, "statistics", build)
