"""The executed actions (backends/action_history.py): list them, undo one through its definition's inverse."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import structlog
from fastapi import APIRouter, HTTPException, Query

from backends.action_history import ActionHistory, HistoryEntry, UndoOutcome
from chat.dependencies import ChatDeps, Deps, Who
from contracts.override import Role
from overrides.undo_policy import undo_refusal

log = structlog.get_logger(__name__)
router = APIRouter()


def action_history(deps: ChatDeps) -> ActionHistory:
    """The history; 404 on a service with no ontology, which has no actions."""
    if deps.actions is None:
        raise HTTPException(404, "no actions are configured on this service (no ontology)")
    return deps.actions


@router.get("/actions", response_model=list[HistoryEntry], summary="Executed actions, most recent first")
async def list_actions(
    who: Who, deps: Deps, run: str = "", entity: str = "", limit: Annotated[int, Query(ge=1, le=1000)] = 50
) -> list[HistoryEntry]:
    if not who.may(Role.AUDIT):
        log.warning("http_actions_refused", who=who.name)
        raise HTTPException(403, f"{who.name} may not read the action history: the role 'audit' is needed")
    return await action_history(deps).list(run_id=run, entity_id=entity, limit=limit)


@router.post("/actions/{key}/undo", response_model=UndoOutcome, summary="Apply an executed action's inverse")
async def undo(key: str, who: Who, deps: Deps) -> UndoOutcome:
    actions = action_history(deps)  # before the role check: a service without actions says so to everyone
    if not who.may(Role.UNDO):
        raise HTTPException(403, f"{who.name} may not undo actions: the role 'undo' is needed")
    refused = undo_refusal(deps.override_keys or [], who.name, Path(who.signing_key) if who.signing_key else None)
    if refused:
        raise HTTPException(403, refused)
    entries = [e for e in await actions.list(key=key, limit=1) if not e.undoes]
    if not entries:
        raise HTTPException(404, f"no executed action with key {key}")
    if entries[0].undone_by:
        raise HTTPException(409, f"{key} was already undone ({entries[0].undone_by})")
    outcome = await actions.undo(entries[0], who.name)
    log.info("http_undo", who=who.name, key=key, success=outcome.success, detail=outcome.detail)
    if not outcome.success:
        raise HTTPException(409, outcome.detail)
    return outcome
