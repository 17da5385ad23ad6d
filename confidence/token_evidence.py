"""How sure the model was of what it wrote, from the log-probabilities of its tokens (backends/llm.Completion
.token_logprobs), as calibrator features: the planner's queries (the text of every "query" value in the
plan it wrote) and the written answer. Each is the geometric mean token probability (exp of the mean
log-probability) and the probability of the least likely token. Absent, not zero, when the server gave no
log-probabilities: the calibrator then reads the typical value (confidence/calibrator.py). Pure functions."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

# A "query" member of the plan's JSON as written: the value's characters between its quotes.
_QUERY_VALUE = re.compile(r'"query"\s*:\s*"((?:[^"\\]|\\.)*)"')


def query_spans(text: str) -> list[tuple[int, int]]:
    """Where the plan's query strings are in the text the model wrote: (start, end) offsets."""
    return [m.span(1) for m in _QUERY_VALUE.finditer(text)]


def span_logprobs(tokens: Sequence[tuple[str, float]], spans: list[tuple[int, int]]) -> list[float]:
    """The log-probabilities of the tokens that overlap any of `spans` (offsets into the tokens' joined text)."""
    chosen, start = [], 0
    for token, logprob in tokens:
        end = start + len(token)
        if any(start < high and end > low for low, high in spans):
            chosen.append(logprob)
        start = end
    return chosen


def summary(prefix: str, logprobs: list[float]) -> dict[str, float]:
    """`<prefix>_token_p` (geometric mean token probability) and `<prefix>_weakest_p` (the least likely
    token's probability); nothing for no tokens."""
    if not logprobs:
        return {}
    return {
        f"{prefix}_token_p": round(math.exp(sum(logprobs) / len(logprobs)), 4),
        f"{prefix}_weakest_p": round(math.exp(min(logprobs)), 4),
    }


def plan_evidence(tokens: Sequence[tuple[str, float]] | None) -> dict[str, float]:
    """The features of the planner's queries, from the plan completion's tokens (None: none given)."""
    if not tokens:
        return {}
    return summary("query", span_logprobs(tokens, query_spans("".join(t for t, _ in tokens))))


def answer_evidence(tokens: Sequence[tuple[str, float]] | None) -> dict[str, float]:
    """The features of a written answer, from its completion's tokens (None: none given)."""
    return summary("answer", [logprob for token, logprob in tokens if token.strip()]) if tokens else {}
