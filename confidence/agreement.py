"""Agreement between candidate queries for one graph step: different queries written for the same question
that return the same answer are evidence; queries that disagree are a warning. Answers are compared by
their values, not their column names or row order. Pure functions."""

from __future__ import annotations

from collections import Counter
from typing import Any

Signature = tuple[tuple[str, ...], ...]


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return f"{float(value):.2f}"  # 7 and 7.0 agree; 4.3333 and 4.33 agree
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(sorted(_value(v) for v in value)) + "]"
    return str(value).strip().lower()


def answer_signature(rows: list[list[Any]]) -> Signature:
    """The rows as an order-free multiset of value sets: what two queries must share to agree."""
    return tuple(sorted(tuple(sorted(_value(v) for v in row)) for row in rows))


def vote(signatures: list[Signature]) -> tuple[int, int]:
    """(index of the answer most candidates share, how many share it); ties go to the earliest candidate
    (the planner's own query comes first)."""
    if not signatures:
        raise ValueError("no candidates to vote on")
    counts = Counter(signatures)
    best = max(range(len(signatures)), key=lambda i: (counts[signatures[i]], -i))
    return best, counts[signatures[best]]
