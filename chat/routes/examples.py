"""GET /examples: example questions for the loaded graph, written from its live schema (the planner's schema
reader, backends/schema_check.py) and a few of its nodes (chat/example_questions.py). The page offers them
before the first question."""

from __future__ import annotations

import time
from dataclasses import dataclass

import structlog
from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel
from temporalio.exceptions import ApplicationError

from actions.ontology import Ontology
from backends.graph_store import GraphQueryError, GraphStore
from backends.schema_check import SchemaCheck
from chat.dependencies import Deps, Who
from chat.example_questions import GraphSample, example_questions
from contracts.redaction import sanitize

log = structlog.get_logger(__name__)
router = APIRouter()

# Examples need not be fresh, and reading the schema scans the graph: a new label shows within ten minutes.
CACHE_S = 600.0
SAMPLED_LABELS = 8
SAMPLED_RELATIONSHIPS = 6


class ExampleQuestion(BaseModel):
    question: str
    kind: str  # count | lookup | one-hop | most | highest | action


class ExampleQuestions(BaseModel):
    graph: str
    examples: list[ExampleQuestion]


@dataclass
class ExampleSource:
    """The graph's examples, written again at most every CACHE_S."""

    graph: GraphStore
    ontology: Ontology | None  # None: no actions to suggest
    schema: SchemaCheck
    written: tuple[float, ExampleQuestions] | None = None

    async def examples(self) -> ExampleQuestions:
        if self.written is None or time.monotonic() - self.written[0] > CACHE_S:
            found = example_questions(await self.sample())
            self.written = (
                time.monotonic(),
                ExampleQuestions(
                    graph=self.graph.graph_name,
                    examples=[ExampleQuestion(question=e.question, kind=e.kind) for e in found],
                ),
            )
        return self.written[1]

    async def sample(self) -> GraphSample:
        facts = await self.schema.facts()
        degree = {label: sum(label in (a, b) for a, _, b in facts.rels) for label in facts.nodes}
        labels = sorted(facts.nodes, key=lambda label: (-degree[label], label))[:SAMPLED_LABELS]
        rels = sorted(facts.rels, key=lambda r: (r[0] == r[2], -degree.get(r[0], 0), r))[:SAMPLED_RELATIONSHIPS]
        nodes = {label: await self.node(f"MATCH (n:{name(label)}) RETURN n LIMIT 1") for label in labels}
        linked = {
            (a, t, b): await self.node(f"MATCH (:{name(a)})-[:{name(t)}]->(n:{name(b)}) RETURN n LIMIT 1")
            for a, t, b in rels
        }
        # Actions that take no values and can be undone first: an example anyone may try.
        declared = self.ontology.actions if self.ontology is not None else {}
        actions = sorted(
            (
                (class_name, action_name, bool(definition.parameters), definition.cannot_be_undone)
                for class_name, by_name in declared.items()
                for action_name, definition in by_name.items()
            ),
            key=lambda a: (a[2], a[3], a[0], a[1]),
        )
        return GraphSample(
            labels=facts.nodes,
            rels=facts.rels,
            nodes=nodes,
            linked=linked,
            actions=[(class_name, action_name) for class_name, action_name, _, _ in actions],
        )

    async def node(self, query: str) -> dict[str, object]:
        """The properties of the node the query returns (redacted: they are shown), {} when there is none."""
        rows = (await self.graph.ro_query(query, max_rows=1)).rows
        found = rows[0][0] if rows and isinstance(rows[0][0], dict) else {}
        return sanitize({k: v for k, v in found.items() if k != "labels"}, include_raw_outputs=True)


def name(identifier: str) -> str:
    """A label or relationship type from the schema as Cypher writes any name: in backticks."""
    return "`" + identifier.replace("`", "``") + "`"


def example_source(request: Request, deps: Deps) -> ExampleSource:
    """The app's one source of examples; 404 on a service that reads no graph."""
    if deps.graph is None:
        raise HTTPException(404, "no graph is configured on this service: no examples")
    source: ExampleSource | None = getattr(request.app.state, "examples", None)
    if source is None:
        ontology = deps.actions.tools.ontology if deps.actions is not None else None
        source = ExampleSource(deps.graph, ontology, SchemaCheck(deps.graph))
        request.app.state.examples = source
    return source


@router.get("/examples", response_model=ExampleQuestions, summary="Example questions for the loaded graph")
async def examples(request: Request, who: Who, deps: Deps) -> ExampleQuestions:
    source = example_source(request, deps)
    try:
        return await source.examples()
    except (ApplicationError, GraphQueryError) as exc:  # FalkorDB unreachable, or it refused a look-up
        log.warning("examples_unavailable", who=who.name, error=str(exc))
        raise HTTPException(503, f"the graph cannot be read now: {exc}") from None
