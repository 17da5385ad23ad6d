"""KnowledgeQuery: answer from the knowledge graph without writing Cypher (graph RAG: the local one over
FalkorDB, or TrustGraph's graph-rag service).

TrustGraph's graph-rag is asked about the collection TrustGraph's agent would ask: the one its `knowledge-query`
tool entry names, or `default` (trustgraph-flow 2.11.1, agent/react/tools.py KnowledgeQueryImpl), never the
request's. With entries of different collections, the planner names the entry (the `tool` argument), as
TrustGraph's agent chooses among its tools; without any entry, the worker's `trustgraph_collection`. As
KnowledgeQueryImpl, it gives graph-rag the step's result in the run's trace as `parent_uri`, and hands graph-rag's
explain messages back with the step's output, for the run to pass on to its caller."""

from __future__ import annotations

from typing import TYPE_CHECKING

from confidence.overall import REFUSALS, text_result_confidence
from contracts.plan import ConfidenceMetrics
from contracts.query_path import StepInput, StepOutput
from contracts.tool_spec import ToolArgument, ToolScope, ToolSpec
from tools.base import Tool

if TYPE_CHECKING:
    from backends import Backends, RagAnswer
    from backends.trustgraph_config import ConfiguredTool

KIND = "knowledge-query"  # TrustGraph's tool type
DEFAULT_COLLECTION = "default"  # what TrustGraph's KnowledgeQueryImpl asks about when its entry names none
CHOICE = ToolArgument(name="tool", description="the knowledge tool to ask (each searches its own collection)")


def score_local(entities_found: int, answer: str, facts: str, retry_count: int = 0) -> ConfidenceMetrics:
    """Were the question's entities found at all, and is the answer grounded in their facts?"""
    if entities_found == 0:
        return ConfidenceMetrics(
            score=0.2,
            retry_count=retry_count,
            reasoning="none of the entities the question names were found in the graph",
        )
    text = text_result_confidence(answer, facts, retry_count)
    return text.model_copy(update={"reasoning": f"{entities_found} entities found; {text.reasoning}"})


def score_reported(answer: str, sources: int, explained: bool, retry_count: int = 0) -> ConfidenceMetrics:
    """A service's answer whose facts we cannot see: backed by the sources or provenance it reports?"""
    if not answer.strip():
        return ConfidenceMetrics(score=0.0, reasoning="graph-rag returned no answer", retry_count=retry_count)
    if REFUSALS.search(answer):
        return ConfidenceMetrics(score=0.3, reasoning="graph-rag said it does not know", retry_count=retry_count)
    if sources or explained:
        backing = f"{sources} source document(s)" if sources else "provenance from the graph"
        return ConfidenceMetrics(score=0.85, reasoning=f"graph-rag answer backed by {backing}", retry_count=retry_count)
    return ConfidenceMetrics(
        score=0.6, reasoning="graph-rag answer without sources or provenance to check", retry_count=retry_count
    )


def score(rag: RagAnswer, retry_count: int) -> ConfidenceMetrics:
    if rag.facts is not None and rag.entities_found is not None:
        return score_local(rag.entities_found, rag.answer, rag.facts, retry_count)
    return score_reported(rag.answer, rag.sources, rag.explained, retry_count)


def configured(backends: Backends) -> dict[str, ConfiguredTool]:
    """TrustGraph's `knowledge-query` tool entries (none without TrustGraph's config)."""
    config = backends.trustgraph_config
    return config.current.of_kind(KIND) if config is not None else {}


def collection_of(entry: ConfiguredTool) -> str:
    return str(entry.data.get("collection") or DEFAULT_COLLECTION)


def collection(arguments: dict[str, str], entries: dict[str, ConfiguredTool]) -> str:
    """The collection a step asks about: its named entry's, else the one every entry names, else (no entry)
    "" for the worker's `trustgraph_collection`; entries of several collections and none named: `default`."""
    chosen = entries.get(arguments.get(CHOICE.name, ""))
    if chosen is not None:
        return collection_of(chosen)
    collections = {collection_of(e) for e in entries.values()}
    if len(collections) == 1:
        return collections.pop()
    return DEFAULT_COLLECTION if collections else ""


class KnowledgeQuery(Tool):
    spec = ToolSpec(
        offered_by_default=True,
        position=30,
        name="KnowledgeQuery",
        description=(
            "Answer a question from the knowledge graph without writing Cypher: finds the entities the "
            "question names, reads their neighbourhood and answers from those facts only."
        ),
        arguments=[ToolArgument(name="question", description="the question, naming the entities it is about")],
        uses_schema=True,
    )

    async def describe(self, backends: Backends, scope: ToolScope | None = None) -> ToolSpec | None:
        """With TrustGraph's knowledge-query entries of more than one collection, the entries the request may use
        are choices the step names (`tool`), each with its description."""
        entries = configured(backends)
        if len({collection_of(e) for e in entries.values()}) < 2:
            return self.spec
        offered = {name: e for name, e in entries.items() if scope is None or scope.admits(e.access)}
        if not offered:
            return None
        listing = "; ".join(f"{name} ({e.description})" for name, e in offered.items())
        return self.spec.model_copy(
            update={
                "description": f"{self.spec.description} Knowledge tools: {listing}",
                "arguments": [*self.spec.arguments, CHOICE],
                "choice_argument": CHOICE.name,
                "choices": {name: {} for name in offered},
            }
        )

    async def run(self, request: StepInput, backends: Backends) -> StepOutput:
        rag = await backends.rag.answer(
            request.step.arguments.get("question") or request.question,
            collection=collection(request.step.arguments, configured(backends)),
            parent_uri=request.explain_parent,
        )
        # "Nothing by that name" is a result in its own right, scored low, not a failure.
        success = bool(rag.answer.strip()) or rag.entities_found == 0
        return StepOutput(
            success=success, output=rag.output, confidence=score(rag, request.retry_count), explain=rag.explain
        )
