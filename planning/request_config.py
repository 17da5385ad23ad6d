"""Request-level overrides from the legacy AgentRequest `plan` field, e.g.
'{"confidence_threshold": 0.8, "max_retries": 3}': safe keys only, each clamped to sane bounds.

This runs in workflow code, where an exception fails the workflow task again on every retry and a slow
step trips Temporal's deadlock detector: any text is read (a field too long, JSON too deep, a number too
long to convert is a note, never an error), and every note is bounded in size and number."""

from __future__ import annotations

import json
import math
from typing import Any

from contracts.payload_limits import PLAN_CHARS, quoted
from contracts.run import AgentSettings

# key -> (lowest, highest) for numbers; None for booleans
SAFE_KEYS: dict[str, tuple[float, float] | None] = {
    "confidence_threshold": (0.1, 0.99),
    "max_retries": (0, 5),
    "retry_backoff_factor": (1.0, 4.0),
    "step_timeout_ms": (1000, 120_000),
    "max_iterations": (1, 30),
    "max_steps": (1, 12),
    "parallel_execution": None,
    "override_timeout_s": (10, 3600),
    # Never the approval bar or threshold for actions: a request cannot lower its own safety checks.
    "action_max_concurrent": (1, 100),
}
INTEGER_KEYS = {"max_retries", "step_timeout_ms", "max_iterations", "max_steps", "action_max_concurrent"}
MAX_NOTES = 12  # notes about single keys; the rest are counted in one more


def apply_request_overrides(settings: AgentSettings, plan_field: str) -> tuple[AgentSettings, list[str]]:
    """Return the settings for this request and notes for the caller about what was ignored or clamped."""
    if not plan_field.strip():
        return settings, []
    if len(plan_field) > PLAN_CHARS:
        return settings, [
            f"the request's plan field is {len(plan_field)} characters; the limit is {PLAN_CHARS}: "
            "request-level settings ignored"
        ]
    try:
        requested = json.loads(plan_field)
    except RecursionError:
        return settings, ["the request's plan field is nested too deeply to read; request-level settings ignored"]
    except ValueError:  # not JSON (JSONDecodeError), or an integer past Python's digit limit
        return settings, ["the request's plan field is not JSON; request-level settings ignored"]
    if not isinstance(requested, dict):
        return settings, ["the request's plan field is not a JSON object; request-level settings ignored"]
    changes, notes = _changes(requested)
    if len(notes) > MAX_NOTES:
        notes = [*notes[:MAX_NOTES], f"and {len(notes) - MAX_NOTES} more notes like these"]
    return settings.model_copy(update=changes), notes


def _changes(requested: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The settings the request changes, and a note for each key not applied as sent."""
    changes: dict[str, Any] = {}
    notes: list[str] = []
    for key, value in requested.items():
        if key not in SAFE_KEYS:
            notes.append(f"ignored {quoted(key)}: not a request-level setting")
            continue
        bounds = SAFE_KEYS[key]
        if bounds is None:
            if not isinstance(value, bool):
                notes.append(f"ignored {key!r}: expected true or false")
                continue
            changes[key] = value
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            notes.append(f"ignored {key!r}: expected a number")
            continue
        # Only a float can be fractional; an integer too long for a float is compared as it is (clamped).
        if key in INTEGER_KEYS and isinstance(value, float) and math.isfinite(value) and not value.is_integer():
            notes.append(f"ignored {key!r}: expected a whole number, got {_number(value)}")
            continue
        low, high = bounds
        clamped = min(max(value, low), high)
        if clamped != value:
            notes.append(f"{key} {_number(value)} clamped to {clamped}")
        changes[key] = int(clamped) if key in INTEGER_KEYS else float(clamped)
    return changes, notes


def _number(value: float) -> str:
    """A number as sent, for a note, unless it is too long to quote (an integer of hundreds of digits)."""
    if isinstance(value, int) and value.bit_length() > 96:
        return "a number too long to show"
    return repr(value)
