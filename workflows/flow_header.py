"""A run's TrustGraph flow, from its input to each activity and child workflow it starts. The inbound interceptor
takes the flow from the run's input (AgentRunInput.flow) or, for a child workflow, from the header its parent
sent; the outbound interceptor sends it, as the header `tgca-flow`, with every activity and child workflow the
run starts (worker/flow_context.py reads it around each activity). Deterministic: the header follows from the
input alone. A run without a flow (asked on a bridge that does not follow flows) sends no header: its
activities read the worker's configured topics."""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.api.common.v1 import Payload
from temporalio.worker import (
    ExecuteWorkflowInput,
    Interceptor,
    StartActivityInput,
    StartChildWorkflowInput,
    StartLocalActivityInput,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
    WorkflowOutboundInterceptor,
)

with workflow.unsafe.imports_passed_through():
    from contracts.flow import FlowTopics

HEADER = "tgca-flow"


def _encoded(flow: FlowTopics) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=flow.model_dump_json().encode())


def decoded(headers: Any) -> FlowTopics | None:
    payload = headers.get(HEADER) if headers else None
    return FlowTopics.model_validate_json(payload.data) if payload is not None else None


class _Outbound(WorkflowOutboundInterceptor):
    def __init__(self, next: WorkflowOutboundInterceptor) -> None:
        super().__init__(next)
        self.flow: Payload | None = None

    def _with_flow(self, headers: Any) -> Any:
        return headers if self.flow is None else {**headers, HEADER: self.flow}

    def start_activity(self, input: StartActivityInput) -> workflow.ActivityHandle[Any]:
        input.headers = self._with_flow(input.headers)
        return self.next.start_activity(input)

    def start_local_activity(self, input: StartLocalActivityInput) -> workflow.ActivityHandle[Any]:
        input.headers = self._with_flow(input.headers)
        return self.next.start_local_activity(input)

    async def start_child_workflow(self, input: StartChildWorkflowInput) -> workflow.ChildWorkflowHandle[Any, Any]:
        input.headers = self._with_flow(input.headers)
        return await self.next.start_child_workflow(input)


class _Inbound(WorkflowInboundInterceptor):
    def init(self, outbound: WorkflowOutboundInterceptor) -> None:
        self.outbound = _Outbound(outbound)
        self.next.init(self.outbound)

    async def execute_workflow(self, input: ExecuteWorkflowInput) -> Any:
        flow = decoded(input.headers)
        if flow is None and input.args:
            flow = getattr(input.args[0], "flow", None)
        if isinstance(flow, FlowTopics):
            self.outbound.flow = _encoded(flow)
        return await self.next.execute_workflow(input)


class FlowHeaderInterceptor(Interceptor):
    def workflow_interceptor_class(self, input: WorkflowInterceptorClassInput) -> type[WorkflowInboundInterceptor]:
        return _Inbound
