"""Bind `execution_id` (the workflow id) and the activity's name into structlog's context for every
activity, so each log line an activity writes says which run it belongs to."""

from __future__ import annotations

from typing import Any

import structlog
from temporalio import activity
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor


class _BindExecutionId(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        info = activity.info()
        with structlog.contextvars.bound_contextvars(
            execution_id=info.workflow_id, activity=info.activity_type, attempt=info.attempt
        ):
            return await self.next.execute_activity(input)


class LogContextInterceptor(Interceptor):
    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _BindExecutionId(next)
