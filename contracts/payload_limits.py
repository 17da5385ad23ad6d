"""Sizes that keep every workflow history payload below Temporal's warning size (256 KB per payload; the
server refuses 2 MB). Large results are trimmed, with a note saying how much was kept, rather than stored
outside the history: the steps, the synthesis and the run's result all carry them, and a trimmed result
still replays exactly. A step's output is held to STEP_OUTPUT_BYTES so that a plan of the most steps a
request may have (12) still fits in one synthesis input; a completion to COMPLETION_BYTES, whatever the
LLM server does with max_tokens. The caller's text that workflow code itself reads (the request's `plan`
field, and what a note quotes of it) is bounded here too."""

from __future__ import annotations

STEP_OUTPUT_BYTES = 16 * 1024
COMPLETION_BYTES = 32 * 1024
# A request's `plan` field (request-level settings: a few keys, well under 1 KB). Workflow code reads it and
# quotes it in notes, and everything there runs on the workflow task's clock: a longer one is refused at the
# bridge and ignored by a run started with it directly.
PLAN_CHARS = 4 * 1024
# A caller's text quoted in a note (a key the plan field named): enough to recognise it.
QUOTED_CHARS = 64


def quoted(text: str, limit: int = QUOTED_CHARS) -> str:
    """`text` as a note quotes it (`repr`), cut to `limit` characters with its length when longer."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text)} characters)"


def trimmed_to_bytes(text: str, limit: int) -> tuple[str, int]:
    """`text` cut to at most `limit` UTF-8 bytes (on a character boundary), with a closing note of how much
    was kept; and the original size in bytes. Unchanged when it fits."""
    encoded = text.encode("utf-8")
    if len(encoded) <= limit:
        return text, len(encoded)
    note = f" …[trimmed: {{kept}} of {len(encoded)} bytes kept]"
    room = max(0, limit - len(note.format(kept=limit).encode("utf-8")))
    kept = encoded[:room].decode("utf-8", errors="ignore")
    return kept + note.format(kept=len(kept.encode("utf-8"))), len(encoded)
