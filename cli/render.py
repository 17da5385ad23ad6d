"""How `tg-confidence ask` shows an agent's messages: one labelled block per message, and one line per
action progress event (their JSON is for programs)."""

from __future__ import annotations

import textwrap

from contracts.action_path import filters_text, parameters_text, parse_action_event, related_text
from contracts.wire import AgentResponse


def render_action_event(content: str) -> str | None:
    """One line for a progress event of the action path, or None when `content` is not one."""
    event = parse_action_event(content)
    if event is None:
        return None
    kind = event["type"]
    if kind == "action_plan":
        plan = event["plan"]
        ids = ", ".join(t["entity_id"] for t in plan["targets"][:10])
        more = f", ... ({plan['target_count']} in all)" if plan["target_count"] > 10 else ""
        given = f" with {parameters_text(plan['parameters'])}" if plan.get("parameters") else ""
        where = f" where {filters_text(plan['filters'])}" if plan.get("filters") else ""
        related = plan.get("related")
        if related:
            of = related_text(
                related["class"], related.get("name", ""), related.get("filters") or [], related.get("excluded", False)
            )
            where = f" of {of}{where}"
        warning = f" LEFT OUT: {'; '.join(plan['left_out'])}." if plan.get("left_out") else ""
        return (
            f"[action plan] {plan['action_name']}{given} on {plan['target_count']} {plan['entity_type']}{where}: "
            f"{ids}{more}{warning}"
        )
    if kind == "action_progress":
        outcome = "done" if event["success"] else "FAILED"
        return f"[progress {event['completed']}/{event['total']}] {event['entity_id']} {outcome}"
    if kind == "action_error":
        return f"[action error] {event['entity_id']}: {event['error']}"
    if kind == "action_complete":
        r = event["results"]
        return f"[action complete] {r['succeeded']} of {r['total']} succeeded, {r['failed']} failed"
    return None


def render(message: AgentResponse) -> str:
    body = message.content.rstrip()
    action_line = render_action_event(body) if message.message_type == "observation" else None
    if action_line is not None:
        return action_line
    if (message.message_type == "answer" and not body) or message.message_type == "explain":
        return ""  # explain messages carry provenance triples for TrustGraph's clients, no text
    indented = textwrap.indent(body, " " * 4).lstrip()
    return f"[{message.message_type}] {indented}"
