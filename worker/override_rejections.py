"""Counts refused override decisions (agent_override_rejected_total) where the workflow refuses them: the
update validator and the override signal handler. The count is kept outside the workflow's state, so it
never touches determinism: update validators do not run on replay, and signal handlers that run again on
replay are not counted again."""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.worker import (
    HandleSignalInput,
    HandleUpdateInput,
    Interceptor,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)

from contracts.names import Handlers
from contracts.override import OverrideRejected
from overrides.checks import UNAUTHORIZED
from service.agent_metrics import AgentMetrics

UPDATE, SIGNAL = Handlers.SUBMIT_OVERRIDE, Handlers.OVERRIDE


def reason_of(message: str) -> str:
    return "unauthorized" if message.startswith(UNAUTHORIZED) else "invalid"


class OverrideRejectionCounter(Interceptor):
    def __init__(self, metrics: AgentMetrics) -> None:
        self.metrics = metrics

    def workflow_interceptor_class(self, input: WorkflowInterceptorClassInput) -> type[WorkflowInboundInterceptor]:
        counter = self.metrics.override_rejected

        class _Counting(WorkflowInboundInterceptor):
            def handle_update_validator(self, input: HandleUpdateInput) -> None:
                try:
                    self.next.handle_update_validator(input)
                except OverrideRejected as exc:
                    if input.update == UPDATE:
                        counter.labels(path="update", reason=reason_of(str(exc))).inc()
                    raise

            async def handle_signal(self, input: HandleSignalInput) -> None:
                if input.signal != SIGNAL:
                    return await self.next.handle_signal(input)
                before = _rejected_total()
                await self.next.handle_signal(input)
                rejected = _rejected_list()
                if rejected and _rejected_total() > before and not workflow.unsafe.is_replaying():
                    counter.labels(path="signal", reason=reason_of(rejected[-1].split(": ", 1)[-1])).inc()

        return _Counting


def _status() -> Any:
    ctx: Any = getattr(workflow.instance(), "ctx", None)
    return getattr(ctx, "status", None)


def _rejected_list() -> list[str] | None:
    """The run's list of refused override signals (RunStatus.rejected_overrides), if this workflow has one."""
    return getattr(_status(), "rejected_overrides", None)


def _rejected_total() -> int:
    """How many override signals the run refused (the list keeps only the most recent)."""
    return int(getattr(_status(), "rejected_overrides_total", 0))
