"""Pure checks over text from outside (a question, a query the model wrote) run on a worker thread, with a time
limit, so that the event loop an activity shares with every other keeps serving them meanwhile.

The checks themselves take time linear in their text (questions/, cypher/); this is the second line. A thread
cannot be stopped: a check past its limit is abandoned, its step's attempt fails with a clear error, and the
thread ends when the check does. Python's regular expression engine holds the interpreter lock for the whole
of one search, so the limit cannot cut one search short: what keeps each search short is its linear pattern
and the bounded size of what it reads."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from temporalio.exceptions import ApplicationError

CHECK_TIMEOUT_S = 5.0  # far above what any check of a bounded question and query takes (milliseconds)

T = TypeVar("T")


async def off_loop(what: str, check: Callable[[], T], timeout_s: float = CHECK_TIMEOUT_S) -> T:
    """`check()` on a worker thread; past `timeout_s`, an ApplicationError naming `what` (not retried: the same
    text would take as long again)."""
    try:
        return await asyncio.wait_for(asyncio.to_thread(check), timeout_s)
    except TimeoutError:
        raise ApplicationError(
            f"{what} took longer than {timeout_s:g} s and was abandoned", type="CheckTimeout", non_retryable=True
        ) from None
