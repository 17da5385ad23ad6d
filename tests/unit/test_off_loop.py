"""Checks of outside text run on a worker thread: the event loop serves others meanwhile, and a check past its
time limit fails with a clear, non-retryable error instead of holding the activity."""

from __future__ import annotations

import asyncio
import time

import pytest
from temporalio.exceptions import ApplicationError

from service.off_loop import off_loop

pytestmark = pytest.mark.unit


async def test_a_check_runs_off_the_loop_and_its_result_comes_back() -> None:
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    ticker = asyncio.create_task(tick())
    try:
        assert await off_loop("a slow check", lambda: time.sleep(0.3) or "done") == "done"
    finally:
        ticker.cancel()
    assert ticks >= 10  # the loop went on while the check ran


async def test_a_check_past_its_limit_fails_clearly_and_is_not_retried() -> None:
    with pytest.raises(ApplicationError) as failed:
        await off_loop("the walk checks", lambda: time.sleep(1), timeout_s=0.1)
    assert failed.value.type == "CheckTimeout" and failed.value.non_retryable
    assert failed.value.message == "the walk checks took longer than 0.1 s and was abandoned"
