"""What the Temporal Web UI and `temporal workflow list/describe` show for a run before it has done
anything: a one-line static summary (the question) and static details (where the request came from and
where its answer goes). Secret-looking values are redacted: a history is readable by anyone with Temporal
access. Pure functions."""

from __future__ import annotations

from contracts.redaction import redact_text
from contracts.wire import AgentRequest

# The server refuses a start whose summary or details exceed its limits (400 bytes and 20 KB by default,
# `limit.userMetadataSummarySize` / `DetailsSize`): both are cut well below, in encoded bytes.
SUMMARY_BYTES = 300
DETAILS_BYTES = 16_000


def shortened(text: str, limit: int) -> str:
    """The text, cut to at most `limit` UTF-8 bytes (on a character boundary) with "..." when cut."""
    if len(text.encode()) <= limit:
        return text
    return text.encode()[: limit - 3].decode(errors="ignore") + "..."


def run_summary(request: AgentRequest) -> str:
    """The question on one line, shortened to SUMMARY_BYTES."""
    return shortened(" ".join(redact_text(request.question).split()), SUMMARY_BYTES)


def run_details(request_id: str, request: AgentRequest, request_topic: str, response_topic: str) -> str:
    """Markdown: the whole question and the request's routing, one fact per line."""
    facts = [
        ("request id", request_id),
        ("request topic", request_topic),
        ("response topic", response_topic),
        ("collection", request.collection),
        ("conversation", request.conversation_id),
        ("session", request.session_id),
        ("streaming", "yes" if request.streaming else "no"),
    ]
    routing = [f"- {name}: `{value}`" for name, value in facts if value]
    question = shortened(redact_text(request.question), DETAILS_BYTES - len("\n".join(routing).encode()) - 40)
    return "\n".join([f"**Question:** {question}", "", *routing])
