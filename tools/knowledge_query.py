"""KnowledgeQuery: answer from the knowledge graph without writing Cypher (graph RAG: the local one over
FalkorDB, or TrustGraph's graph-rag service)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from confidence.overall import REFUSALS, text_result_confidence
from contracts.plan import ConfidenceMetrics
from contracts.query_path import StepInput, StepOutput
from contracts.tool_spec import ToolArgument, ToolSpec
from tools.base import Tool

if TYPE_CHECKING:
    from backends import Backends, RagAnswer


def score_local(entities_found: int, answer: str, facts: str, retry_count: int = 0) -> ConfidenceMetrics:
    """Were the question's entities found at all, and is the answer grounded in their facts?"""
    if entities_found == 0:
        return ConfidenceMetrics(score=0.2, retry_count=retry_count,
                                 reasoning="none of the entities the question names were found in the graph")
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
        return ConfidenceMetrics(score=0.85, reasoning=f"graph-rag answer backed by {backing}",
                                 retry_count=retry_count)
    return ConfidenceMetrics(score=0.6, reasoning="graph-rag answer without sources or provenance to check",
                             retry_count=retry_count)


def score(rag: RagAnswer, retry_count: int) -> ConfidenceMetrics:
    if rag.facts is not None and rag.entities_found is not None:
        return score_local(rag.entities_found, rag.answer, rag.facts, retry_count)
    return score_reported(rag.answer, rag.sources, rag.explained, retry_count)


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

    async def run(self, request: StepInput, backends: Backends) -> StepOutput:
        rag = await backends.rag.answer(request.step.arguments.get("question") or request.question,
                                        collection=request.collection)
        # "Nothing by that name" is a result in its own right, scored low, not a failure.
        success = bool(rag.answer.strip()) or rag.entities_found == 0
        return StepOutput(success=success, output=rag.output, confidence=score(rag, request.retry_count))
