"""Evidence-based confidence shared by the tools (grounding of text in evidence) and the run's overall
confidence (pure functions, explained in `reasoning`). Each tool's own scoring lives in its module (tools/).

The scores say how well a result is supported by evidence the agent can check, not how sure the
LLM sounds: an LLM grading itself without outside evidence is unreliable.
"""

from __future__ import annotations

import re

from contracts.plan import ConfidenceMetrics

REFUSALS = re.compile(
    r"\b(i (do not|don't) know|i am not sure|i'm not sure|cannot (answer|determine)|can't (answer|determine)"
    r"|no (information|data) (is )?(available|provided)|as an ai|unable to (answer|determine))\b",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_\-]{3,}|\d+(?:\.\d+)?")
_STOP = {
    "this",
    "that",
    "with",
    "from",
    "have",
    "were",
    "which",
    "there",
    "their",
    "these",
    "those",
    "what",
    "when",
    "where",
    "will",
    "would",
    "could",
    "should",
    "about",
    "into",
    "than",
    "then",
    "they",
    "them",
    "also",
    "each",
    "only",
    "most",
    "more",
    "some",
    "such",
    "been",
    "being",
    "based",
    "data",
    "result",
    "results",
    "following",
    "answer",
    "question",
}


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
    if REFUSALS.search(output):
        return ConfidenceMetrics(
            score=0.3,
            reasoning="The model said it does not know or cannot answer",
            retry_count=retry_count,
            signals={"refusal": 1.0},
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
        signals={"grounded_share": round(ratio, 3)},
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
