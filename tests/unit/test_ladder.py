"""The retry ladder: which approach each retry takes, and how long a same-arguments retry waits."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from confidence.ladder import RUNG_NOTES, Rung, backoff, rung_for

pytestmark = pytest.mark.unit

FACTORS = st.floats(min_value=1.0, max_value=10.0)  # AgentSettings.retry_backoff_factor bounds
MAX_DELAYS = st.floats(min_value=0.001, max_value=300.0)  # AgentSettings.max_retry_delay_s bounds
RETRIES = st.integers(min_value=1, max_value=100)


@pytest.mark.parametrize(
    ("retry", "rung"),
    [
        (1, Rung.SAME),
        (2, Rung.ADJUSTED),
        (3, Rung.SIMPLIFIED),
        (4, Rung.SIMPLIFIED),
        (10, Rung.SIMPLIFIED),
    ],
)
def test_each_retry_takes_the_documented_approach(retry: int, rung: Rung) -> None:
    """Retry 1 repeats the arguments, retry 2 adjusts them, retry 3 and later simplify."""
    assert rung_for(retry) is rung


@given(st.integers(min_value=1, max_value=1000), st.integers(min_value=1, max_value=1000))
@settings(database=None)
def test_later_retries_never_fall_back_to_a_gentler_rung(first: int, second: int) -> None:
    """The ladder only climbs: a later retry never goes back to an earlier approach."""
    order = [Rung.SAME, Rung.ADJUSTED, Rung.SIMPLIFIED]
    low, high = sorted((first, second))
    assert order.index(rung_for(low)) <= order.index(rung_for(high))


def test_every_rung_has_a_note_for_the_caller() -> None:
    """The thought message the caller sees before each retry names the approach taken."""
    assert set(RUNG_NOTES) == set(Rung)
    assert len(set(RUNG_NOTES.values())) == len(Rung)
    assert all(note.strip() for note in RUNG_NOTES.values())


def test_backoff_doubles_from_one_second_up_to_the_cap() -> None:
    """With factor 2 the waits are 1 s, 2 s, 4 s, ... and never longer than max_retry_delay_s."""
    waits = [backoff(retry, factor=2.0, max_delay_s=5.0) for retry in range(1, 6)]
    assert waits == [timedelta(seconds=s) for s in (1, 2, 4, 5, 5)]


def test_backoff_honours_a_custom_base_delay() -> None:
    """The base delay scales every wait."""
    assert backoff(3, factor=3.0, max_delay_s=100.0, base_s=0.5) == timedelta(seconds=4.5)


@given(RETRIES, FACTORS, MAX_DELAYS)
@settings(database=None)
def test_backoff_is_never_longer_than_the_cap(retry: int, factor: float, max_delay_s: float) -> None:
    """No retry waits longer than max_retry_delay_s, however large the factor or retry number."""
    wait = backoff(retry, factor, max_delay_s)
    assert timedelta(0) < wait <= timedelta(seconds=max_delay_s)


@given(RETRIES, FACTORS, MAX_DELAYS)
@settings(database=None)
def test_backoff_never_shrinks_from_one_retry_to_the_next(retry: int, factor: float, max_delay_s: float) -> None:
    """A later retry waits at least as long as the one before it."""
    assert backoff(retry, factor, max_delay_s) <= backoff(retry + 1, factor, max_delay_s)


@given(FACTORS, st.floats(min_value=1.0, max_value=300.0))
@settings(database=None)
def test_first_retry_waits_the_base_delay(factor: float, max_delay_s: float) -> None:
    """The first retry waits exactly the base delay (1 s), whatever the factor."""
    assert backoff(1, factor, max_delay_s) == timedelta(seconds=1)
