"""Evidence-based confidence scoring for step results (pure functions, explained in `reasoning`).

The scores say how well a result is supported by evidence the agent can check, not how sure the
LLM sounds: an LLM grading itself without outside evidence is unreliable.
"""

from __future__ import annotations

import re

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


def graph_result_confidence(
    row_count: int, error: str | None, truncated: bool, retry_count: int = 0
) -> ConfidenceMetrics:
    if error:
        return ConfidenceMetrics(score=0.0, reasoning=f"Query failed: {error}", retry_count=retry_count)
    if row_count == 0:
        return ConfidenceMetrics(
            score=0.3,
            reasoning="Empty result may indicate entities don't exist or query too restrictive",
            retry_count=retry_count,
        )
    if truncated:
        return ConfidenceMetrics(
            score=0.8,
            reasoning=f"Query returned more rows than kept ({row_count} shown); the answer may miss some",
            retry_count=retry_count,
        )
    return ConfidenceMetrics(score=0.9, reasoning=f"Query returned {row_count} row(s)", retry_count=retry_count)


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


def overall_confidence(scores: list[float]) -> float | None:
    """An answer is no stronger than its weakest supporting step: the minimum of their scores."""
    return min(scores) if scores else None
