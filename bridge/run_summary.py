"""What the Temporal Web UI and `temporal workflow list/describe` show for a run before it has done
anything: a one-line static summary (the question) and static details (where the request came from and
where its answer goes). Secret-looking values are redacted: a history is readable by anyone with Temporal
access. Pure functions."""

from __future__ import annotations

from confidence_core.redaction import redact_text
from contracts.wire import AgentRequest

SUMMARY_CHARS = 200  # Temporal's guidance for a static summary: one short line


def run_summary(request: AgentRequest) -> str:
    """The question on one line, shortened to SUMMARY_CHARS."""
    line = " ".join(redact_text(request.question).split())
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 3] + "..."


def run_details(request_id: str, request: AgentRequest, request_topic: str, response_topic: str) -> str:
    """Markdown: the whole question and the request's routing, one fact per line."""
    facts = [("request id", request_id), ("request topic", request_topic), ("response topic", response_topic),
             ("collection", request.collection), ("conversation", request.conversation_id),
             ("session", request.session_id), ("streaming", "yes" if request.streaming else "no")]
    lines = [f"**Question:** {redact_text(request.question)}", ""]
    lines += [f"- {name}: `{value}`" for name, value in facts if value]
    return "\n".join(lines)
