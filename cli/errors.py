"""How every CLI command reports a failure: `error: ...` on stderr and a documented exit code
(1: the request failed or was refused; 2: bad input or a part of the stack is unreachable)."""

from __future__ import annotations

import sys

FAILED = 1
UNREACHABLE_OR_BAD_INPUT = 2


def error(message: str, code: int) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code
