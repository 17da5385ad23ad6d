"""How every CLI command reports a failure: `error: ...` on stderr and a documented exit code
(1: the request failed or was refused; 2: bad input or a part of the stack is unreachable)."""

from __future__ import annotations

import logging
import sys

FAILED = 1
UNREACHABLE_OR_BAD_INPUT = 2


def error(message: str, code: int) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def quiet_broker_log(log_level: str | None) -> None:
    """A broker that cannot be reached is said in one line (the command's `error: Pulsar at ... is unreachable`);
    the Pulsar client's own reconnect attempts would print ten more before it. `-l DEBUG` shows them."""
    if (log_level or "").upper() != "DEBUG":
        logging.getLogger("pulsar").setLevel(logging.CRITICAL)
