"""A run as a caller may see it, read from Temporal; and Temporal's failures as HTTP errors."""

from __future__ import annotations

import structlog
from fastapi import HTTPException
from temporalio.service import RPCError, RPCStatusCode

from chat.auth import Caller
from chat.dependencies import ChatDeps
from chat.models import RunView
from chat.ownership import may_read_run
from contracts.names import WORKFLOW_NAME
from service.run_client import AgentRun

log = structlog.get_logger(__name__)


def temporal_failure(exc: RPCError, missing: str) -> HTTPException:
    """404 naming what is missing when Temporal has no such workflow; 503 when Temporal itself failed."""
    if exc.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT):
        return HTTPException(404, f"no {missing}")
    return HTTPException(503, f"Temporal: {exc.message}")


async def readable_run(deps: ChatDeps, workflow_id: str, who: Caller) -> RunView:
    """The run, when it is an agent run this caller may read; 404 alike for missing and not theirs."""
    run = AgentRun(deps.temporal, workflow_id)
    try:
        description = await run.describe()
        if description.workflow_type != WORKFLOW_NAME:  # a conversation or batch has no agent status
            raise HTTPException(404, f"no run {workflow_id}")
        status = await run.status()
    except RPCError as exc:
        raise temporal_failure(exc, f"run {workflow_id}") from None
    if not may_read_run(who, workflow_id, status):
        log.warning("http_run_refused", who=who.name, workflow_id=workflow_id)
        raise HTTPException(404, f"no run {workflow_id}")
    execution = description.status.name if description.status else "UNKNOWN"
    return RunView(workflow_id=workflow_id, execution=execution, status=status, temporal_ui=deps.ui_link(workflow_id))
