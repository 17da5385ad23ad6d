"""Every activity's LLM usage, carried back to its workflow in its output: the interceptor opens a meter
(backends/llm.py `metering`) around the activity and writes what it counted into the output's `llm_usage`
field (contracts/llm_usage.py), for outputs that have one. The workflow sums them (LlmTally in
workflows/activity_options.py); no activity has to remember to report its calls, tools included."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

from backends.llm import metering

FIELD = "llm_usage"


class _Metered(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        with metering() as meter:
            result = await self.next.execute_activity(input)
        if isinstance(result, BaseModel) and FIELD in type(result).model_fields:
            # A copy: the output may be shared (a cached tool result), and another call must not change it.
            return result.model_copy(update={FIELD: meter.usage()})
        return result


class LlmUsageInterceptor(Interceptor):
    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Metered(next)
