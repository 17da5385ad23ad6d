"""Each activity runs in its run's TrustGraph flow: the flow its workflow sent in the `tgca-flow` header
(workflows/flow_header.py) is the current flow (backends/flow_scope.py) while the activity runs, so TrustGraph's
services are called on that flow's topics. The same interceptor adds the workflow side to the worker."""

from __future__ import annotations

from typing import Any

from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput

from backends.flow_scope import in_flow
from workflows.flow_header import FlowHeaderInterceptor, decoded


class _ActivityInFlow(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        with in_flow(decoded(input.headers)):
            return await self.next.execute_activity(input)


class FlowContextInterceptor(FlowHeaderInterceptor):
    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _ActivityInFlow(next)
