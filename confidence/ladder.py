"""The retry ladder for a step whose result is below its confidence threshold.

Retry 1 repeats the same arguments after a backoff; retry 2 adjusts them (a broader query); retry 3
and any later ones take a simplified approach. After the last retry: human override or graceful failure.
"""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum


class Rung(StrEnum):
    SAME = "same"
    REPAIR = "repair"  # instead of SAME when the failure is deterministic: fix what the error names
    ADJUSTED = "adjusted"
    SIMPLIFIED = "simplified"


def rung_for(retry: int) -> Rung:
    """The approach of retry number `retry` (1-based)."""
    if retry <= 1:
        return Rung.SAME
    if retry == 2:
        return Rung.ADJUSTED
    return Rung.SIMPLIFIED


def backoff(retry: int, factor: float, max_delay_s: float, base_s: float = 1.0) -> timedelta:
    """base * factor^(retry-1), capped: 1 s, 2 s, 4 s, ... up to max_delay_s."""
    return timedelta(seconds=min(max_delay_s, base_s * factor ** max(0, retry - 1)))


RUNG_NOTES = {
    Rung.SAME: "retrying with the same arguments after a backoff",
    Rung.REPAIR: "repairing the arguments from the exact error (the same ones would fail the same way)",
    Rung.ADJUSTED: "retrying with adjusted arguments",
    Rung.SIMPLIFIED: "retrying with a simplified approach",
}
