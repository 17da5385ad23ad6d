"""The numbers that say whether the agent's answers and its confidence can be trusted, from judged results.
A result without a confidence (an error, no answer, "not scored") counts as confidence 0.0; an error is
also a wrong answer."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

HIGH_CONFIDENCE = 0.8
BINS = 10


@dataclass(frozen=True)
class Judged:
    """What the metrics need of one result."""

    category: str
    correct: bool
    confidence: float | None
    seconds: float
    asked_human: bool = False
    error: str | None = None
    # arrived | recovered (from Temporal) | lost (the run completed, its answer never came) | slow (no answer in
    # time) | timeout (a record from before lost and slow were told apart)
    delivery: str = "arrived"
    twice: bool = False  # the closing answer reached the caller more than once

    @property
    def score(self) -> float:
        return 0.0 if self.confidence is None or self.error else float(self.confidence)

    @property
    def right(self) -> bool:
        return self.correct and not self.error


@dataclass
class Metrics:
    n: int
    accuracy: float | None
    per_category: dict[str, tuple[int, float]] = field(default_factory=dict)  # category -> (n, accuracy)
    auroc: float | None = None
    ece: float | None = None
    high_confidence_n: int = 0
    high_confidence_accuracy: float | None = None
    no_override_share: float | None = None
    errors: int = 0
    lost: int = 0  # runs that completed whose answer never reached the caller (counted in errors too)
    recovered: int = 0  # answers the response topic dropped, taken from Temporal by the caller
    twice: int = 0  # answers the caller was handed more than once
    slow: int = 0  # runs with no answer within the caller's timeout (counted in errors too)
    latency_p50: float | None = None
    latency_p95: float | None = None


def auroc(scores: Sequence[float], labels: Sequence[bool]) -> float | None:
    """Probability that a correct answer carries a higher confidence than a wrong one (ties count half):
    the Mann-Whitney U over the product of the group sizes, from average ranks. None without both groups."""
    positives = sum(labels)
    negatives = len(labels) - positives
    if positives == 0 or negatives == 0:
        return None
    order = sorted(range(len(scores)), key=lambda i: scores[i])
    ranks = [0.0] * len(scores)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1  # average rank of the tied run, 1-based
        i = j + 1
    rank_sum = sum(r for r, label in zip(ranks, labels, strict=True) if label)
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def expected_calibration_error(scores: Sequence[float], labels: Sequence[bool], bins: int = BINS) -> float | None:
    """Share-weighted gap between mean confidence and accuracy over equal-width bins ([0, 0.1), ...,
    [0.9, 1.0]; a confidence of 1.0 falls in the last)."""
    if not scores:
        return None
    grouped: dict[int, list[tuple[float, bool]]] = defaultdict(list)
    for score, label in zip(scores, labels, strict=True):
        grouped[min(int(score * bins), bins - 1)].append((score, label))
    total = len(scores)
    return sum(
        len(items) / total * abs(sum(s for s, _ in items) / len(items) - sum(lb for _, lb in items) / len(items))
        for items in grouped.values()
    )


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return None
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def _share(hits: int, n: int) -> float | None:
    return hits / n if n else None


def compute(results: Iterable[Judged]) -> Metrics:
    rows = list(results)
    scores = [r.score for r in rows]
    labels = [r.right for r in rows]
    by_category: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        by_category[r.category].append(r.right)
    high = [r.right for r in rows if r.score >= HIGH_CONFIDENCE]
    return Metrics(
        n=len(rows),
        accuracy=_share(sum(labels), len(rows)),
        per_category={c: (len(v), sum(v) / len(v)) for c, v in sorted(by_category.items())},
        auroc=auroc(scores, labels),
        ece=expected_calibration_error(scores, labels),
        high_confidence_n=len(high),
        high_confidence_accuracy=_share(sum(high), len(high)),
        no_override_share=_share(sum(not r.asked_human and not r.error for r in rows), len(rows)),
        errors=sum(bool(r.error) for r in rows),
        lost=sum(r.delivery == "lost" for r in rows),
        recovered=sum(r.delivery == "recovered" for r in rows),
        slow=sum(r.delivery in ("slow", "timeout") for r in rows),
        twice=sum(r.twice for r in rows),
        latency_p50=percentile([r.seconds for r in rows], 0.5),
        latency_p95=percentile([r.seconds for r in rows], 0.95),
    )


def judged(record: dict[str, Any]) -> Judged:
    """A result line (bench/kgqa/results.py) as the metrics read it."""
    return Judged(
        category=str(record["category"]),
        correct=bool(record.get("correct")),
        confidence=record.get("confidence"),
        seconds=float(record.get("seconds") or 0.0),
        asked_human=bool(record.get("asked_human")),
        error=record.get("error") or None,
        delivery=delivery_of(record),
        twice=bool(record.get("twice")),
    )


def delivery_of(record: dict[str, Any]) -> str:
    """How a result's answer reached the caller; a record written before this was kept says only "timeout"."""
    if record.get("delivery"):
        return str(record["delivery"])
    return "timeout" if str(record.get("error") or "").startswith("timeout") else "arrived"
