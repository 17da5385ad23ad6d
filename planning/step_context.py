"""Memory manager: what each step gets to see of earlier results."""

from __future__ import annotations

TRIM_MARK = " …[trimmed]"


def trim(text: str, limit: int) -> str:
    """At most `limit` characters; a cut is marked, unless the limit is too small to hold the mark."""
    if len(text) <= limit:
        return text
    if limit < len(TRIM_MARK):
        return text[: max(0, limit)]
    return text[: limit - len(TRIM_MARK)] + TRIM_MARK


def select_context(outputs: dict[str, str], dependencies: list[str], max_chars: int) -> dict[str, str]:
    """Only the step's own dependencies, sharing `max_chars` evenly so no one output crowds out the rest."""
    chosen = {d: outputs[d] for d in dependencies if d in outputs}
    if not chosen:
        return {}
    share = max_chars // len(chosen)
    return {d: trim(text, share) for d, text in chosen.items()}


def format_context(context: dict[str, str]) -> str:
    return "\n\n".join(f"[{step_id}]\n{text}" for step_id, text in context.items()) or "(none)"
