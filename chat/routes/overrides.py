"""POST /runs/{workflow_id}/override: a human's decision on the step a run waits on."""

from __future__ import annotations

import structlog
from fastapi import APIRouter, HTTPException
from temporalio.client import WorkflowUpdateFailedError
from temporalio.service import RPCError

from chat.dependencies import Deps, Who
from chat.models import OverrideBody
from chat.run_access import readable_run
from contracts.override import Override
from overrides.checks import refusal_reason, signed_decision
from service.run_client import AgentRun

log = structlog.get_logger(__name__)
router = APIRouter()


@router.post("/runs/{workflow_id}/override", summary="Answer the step a run waits on (update submit_override)")
async def override(workflow_id: str, body: OverrideBody, who: Who, deps: Deps) -> dict[str, str]:
    view = await readable_run(deps, workflow_id, who)
    pending = view.status.pending_override
    if pending is None or pending.step_id != body.step_id:
        waiting = f"it waits on step {pending.step_id}" if pending else "it waits on no step"
        raise HTTPException(409, f"{workflow_id} is not waiting on step {body.step_id} ({waiting})")
    if not who.may(pending.role):
        log.warning("http_override_refused", who=who.name, workflow_id=workflow_id, role=pending.role.value)
        raise HTTPException(403, f"{who.name} may not decide this: the role '{pending.role.value}' is needed")
    decision = Override(
        step_id=body.step_id, decision=body.decision.value, arguments=body.arguments, reason=body.reason, by=who.name
    )
    if deps.override_keys:  # the workers check signatures: sign over this request's challenge
        try:
            private = who.private_key()
        except (OSError, ValueError) as exc:
            raise HTTPException(500, f"cannot read {who.name}'s signing key: {exc}") from None
        if private is None:
            raise HTTPException(403, f"{who.name} has no signing key configured (http_tokens[].signing_key)")
        decision = signed_decision(decision, private, workflow_id, pending.challenge)
    try:
        outcome = await AgentRun(deps.temporal, workflow_id).submit_override(decision)
    except WorkflowUpdateFailedError as exc:
        raise HTTPException(409, f"override rejected: {refusal_reason(exc.cause)}") from None
    except RPCError as exc:
        raise HTTPException(503, f"Temporal: {exc.message}") from None
    log.info("http_override", who=who.name, workflow_id=workflow_id, step_id=body.step_id, decision=body.decision.value)
    return {"outcome": str(outcome)}
