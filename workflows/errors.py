"""What workflow code tells the caller when an activity failed."""

from __future__ import annotations

from temporalio.exceptions import ActivityError, ApplicationError, TimeoutError

# What awaiting a local activity raises when it failed: the SDK raises its cause (the activity's own
# ApplicationError, or a TimeoutError) where a server-side activity raises ActivityError.
LOCAL_ACTIVITY_FAILED = (ActivityError, ApplicationError, TimeoutError)


def failure_message(exc: BaseException) -> str:
    """The innermost cause's message: what actually went wrong, not Temporal's wrapper text."""
    while isinstance(exc, ActivityError) and exc.cause is not None:
        exc = exc.cause
    return exc.message if isinstance(exc, ApplicationError) else str(exc)
