"""Who may start an action that changes data, decided before anything is looked up or changed: with no
identities configured, only a worker that says it is a development setup (open_actions); with identities,
only a requester (AgentRequest.user) that names one holding the role 'act'. Pure: called in workflow code."""

from __future__ import annotations

from contracts.override import Role
from contracts.run import AgentSettings
from overrides.checks import UNAUTHORIZED

NOT_CHANGED = "Nothing was changed."


def closed_without_identities(what: str) -> str:
    """Why `what` was refused on a worker with neither identities nor the development flag, and what to do."""
    return (
        f"{what} was refused before any change: no identities are configured to approve changes "
        "(agent.override_keys), and this worker is not marked as a development setup. Configure identities "
        "(tg-confidence keys new; docs/security.md), or, on a development machine only, set "
        "agent.open_actions (TGCA_AGENT__OPEN_ACTIONS=true, or tg-confidence up --open-actions). "
        f"{NOT_CHANGED}"
    )


def action_refusal(settings: AgentSettings, requester: str, action: str) -> str | None:
    """Why this requester may not start `action` on this worker, or None when it may."""
    if not settings.override_keys:
        return None if settings.open_actions else closed_without_identities(action)
    holder = next((k for k in settings.override_keys if k.name == requester.strip()), None)
    if holder is None or Role.ACT not in holder.roles:
        named = f"the request's user '{requester}' is" if requester.strip() else "the request names no user that is"
        return (
            f"{UNAUTHORIZED}: starting {action} needs the role '{Role.ACT.value}', and {named} not an identity "
            f"holding it (agent.override_keys). {NOT_CHANGED}"
        )
    return None
