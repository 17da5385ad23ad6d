"""Evidence-based confidence scoring for step results (pure functions, explained in `reasoning`).

The scores say how well a result is supported by evidence the agent can check, not how sure the
LLM sounds: an LLM grading itself without outside evidence is unreliable.
"""

from __future__ import annotations

import re

from jsonschema import Draft202012Validator

from confidence_core.models import ConfidenceMetrics

_REFUSALS = re.compile(
    r"\b(i (do not|don't) know|i am not sure|i'm not sure|cannot (answer|determine)|can't (answer|determine)"
    r"|no (information|data) (is )?(available|provided)|as an ai|unable to (answer|determine))\b",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_\-]{3,}|\d+(?:\.\d+)?")
_STOP = {"this", "that", "with", "from", "have", "were", "which", "there", "their", "these", "those",
         "what", "when", "where", "will", "would", "could", "should", "about", "into", "than", "then",
         "they", "them", "also", "each", "only", "most", "more", "some", "such", "been", "being",
         "based", "data", "result", "results", "following", "answer", "question"}


def graph_result_confidence(row_count: int, error: str | None, truncated: bool, retry_count: int = 0,
                            literals: list[tuple[str, str, bool]] | None = None) -> ConfidenceMetrics:
    """Score a graph query's result from evidence: its size, and whether the values it matched on
    (`literals`: (value, "exact"|"contains", exists in the graph)) exist at all. An empty result is a
    genuine answer when everything it names exists; it is suspect when a named value exists nowhere."""
    literals = literals or []
    missing = [f"'{value}'" for value, mode, exists in literals if not exists]
    match_nothing = f"{', '.join(missing)} {'matches' if len(missing) == 1 else 'match'} nothing in the graph"
    if error:
        return ConfidenceMetrics(score=0.0, reasoning=f"Query failed: {error}", retry_count=retry_count)
    if row_count == 0:
        if missing:
            return ConfidenceMetrics(
                score=0.3, retry_count=retry_count,
                reasoning=f"Empty result and {match_nothing}: "
                          "the entities don't exist under that name or the query is too restrictive")
        if literals:
            return ConfidenceMetrics(
                score=0.85, retry_count=retry_count,
                reasoning="Entities verified to exist but nothing matches the pattern: the empty result is "
                          "a genuine answer (e.g. they are unconnected)")
        return ConfidenceMetrics(
            score=0.3, retry_count=retry_count,
            reasoning="Empty result may indicate entities don't exist or query too restrictive")
    if missing:
        return ConfidenceMetrics(
            score=0.6, retry_count=retry_count,
            reasoning=f"Query returned {row_count} row(s) but {match_nothing}")
    if truncated:
        return ConfidenceMetrics(
            score=0.8, retry_count=retry_count,
            reasoning=f"Query returned more rows than kept ({row_count} in all); the answer may miss some")
    verified = " with every named value found in the graph" if literals else ""
    return ConfidenceMetrics(score=0.9, reasoning=f"Query returned {row_count} row(s){verified}",
                             retry_count=retry_count)


def content_tokens(text: str) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(text) if t.lower() not in _STOP}


def grounding_ratio(output: str, evidence: str) -> float | None:
    """Share of the output's content words and numbers that also appear in the evidence."""
    claimed = content_tokens(output)
    if not claimed or not evidence.strip():
        return None
    supported = content_tokens(evidence)
    return len(claimed & supported) / len(claimed)


def text_result_confidence(output: str, evidence: str, retry_count: int = 0) -> ConfidenceMetrics:
    if not output.strip():
        return ConfidenceMetrics(score=0.0, reasoning="The model returned no text", retry_count=retry_count)
    if _REFUSALS.search(output):
        return ConfidenceMetrics(
            score=0.3, reasoning="The model said it does not know or cannot answer", retry_count=retry_count
        )
    ratio = grounding_ratio(output, evidence)
    if ratio is None:
        return ConfidenceMetrics(
            score=0.7, reasoning="Free text with no earlier results to check it against", retry_count=retry_count
        )
    score = round(0.4 + 0.55 * ratio, 2)
    return ConfidenceMetrics(
        score=score,
        reasoning=f"{ratio:.0%} of the output's names and figures appear in the evidence it was given",
        retry_count=retry_count,
    )


def overall_confidence(usable_scores: list[float], planned_steps: int) -> tuple[float, str]:
    """Weakest link times coverage: the lowest score among the steps whose results the answer uses,
    scaled by the share of planned steps that produced a usable result. An answer is no stronger than
    its weakest evidence, and weaker still when part of the plan produced nothing."""
    if not usable_scores or planned_steps <= 0:
        return 0.0, "no step produced a usable result"
    weakest = min(usable_scores)
    coverage = len(usable_scores) / planned_steps
    if coverage >= 1:
        return round(weakest, 2), f"weakest supporting step {weakest:.2f}"
    return round(weakest * coverage, 2), (
        f"weakest supporting step {weakest:.2f} x {len(usable_scores)}/{planned_steps} steps usable"
    )


LOW_CONFIDENCE = 0.5


def mcp_result_confidence(is_error: bool, text: str, structured: dict[str, object] | None,
                          output_schema: dict[str, object] | None, retry_count: int = 0) -> ConfidenceMetrics:
    """The MCP server's own error flag, then whether the output fits the schema the tool declares."""
    if is_error:
        return ConfidenceMetrics(score=0.1, reasoning=f"the MCP tool reported an error: {text[:200]}",
                                 retry_count=retry_count)
    if structured is not None and output_schema:
        errors = list(Draft202012Validator(output_schema).iter_errors(structured))
        if errors:
            return ConfidenceMetrics(score=0.4, retry_count=retry_count,
                                     reasoning=f"output does not fit the tool's declared schema: {errors[0].message}")
        return ConfidenceMetrics(score=0.9, reasoning="structured output valid against the tool's declared schema",
                                 retry_count=retry_count)
    if not text.strip():
        return ConfidenceMetrics(score=0.2, reasoning="the MCP tool returned nothing", retry_count=retry_count)
    return ConfidenceMetrics(score=0.7, reasoning="text output; the tool declares no schema to check it against",
                             retry_count=retry_count)


def knowledge_confidence(entities_found: int, answer: str, facts: str, retry_count: int = 0) -> ConfidenceMetrics:
    """Graph RAG: were the question's entities found at all, and is the answer grounded in their facts?"""
    if entities_found == 0:
        return ConfidenceMetrics(score=0.2, retry_count=retry_count,
                                 reasoning="none of the entities the question names were found in the graph")
    text = text_result_confidence(answer, facts, retry_count)
    return text.model_copy(update={"reasoning": f"{entities_found} entities found; {text.reasoning}"})


def graph_rag_confidence(answer: str, sources: int, explained: bool, retry_count: int = 0) -> ConfidenceMetrics:
    """TrustGraph graph-rag: an answer backed by the sources or provenance the service reports."""
    if not answer.strip():
        return ConfidenceMetrics(score=0.0, reasoning="graph-rag returned no answer", retry_count=retry_count)
    if _REFUSALS.search(answer):
        return ConfidenceMetrics(score=0.3, reasoning="graph-rag said it does not know", retry_count=retry_count)
    if sources or explained:
        backing = f"{sources} source document(s)" if sources else "provenance from the graph"
        return ConfidenceMetrics(score=0.85, reasoning=f"graph-rag answer backed by {backing}",
                                 retry_count=retry_count)
    return ConfidenceMetrics(score=0.6, reasoning="graph-rag answer without sources or provenance to check",
                             retry_count=retry_count)
