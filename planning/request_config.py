"""Request-level overrides from the legacy AgentRequest `plan` field, e.g.
'{"confidence_threshold": 0.8, "max_retries": 3}': safe keys only, each clamped to sane bounds."""

from __future__ import annotations

import json
import math
from typing import Any

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


def apply_request_overrides(settings: AgentSettings, plan_field: str) -> tuple[AgentSettings, list[str]]:
    """Return the settings for this request and notes for the caller about what was ignored or clamped."""
    if not plan_field.strip():
        return settings, []
    try:
        requested = json.loads(plan_field)
    except json.JSONDecodeError:
        return settings, ["the request's plan field is not JSON; request-level settings ignored"]
    if not isinstance(requested, dict):
        return settings, ["the request's plan field is not a JSON object; request-level settings ignored"]
    changes: dict[str, Any] = {}
    notes: list[str] = []
    for key, value in requested.items():
        if key not in SAFE_KEYS:
            notes.append(f"ignored {key!r}: not a request-level setting")
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
        if key in INTEGER_KEYS and math.isfinite(value) and not float(value).is_integer():
            notes.append(f"ignored {key!r}: expected a whole number, got {value}")
            continue
        low, high = bounds
        clamped = min(max(value, low), high)
        if clamped != value:
            notes.append(f"{key} {value} clamped to {clamped}")
        changes[key] = int(clamped) if key in INTEGER_KEYS else float(clamped)
    return settings.model_copy(update=changes), notes
