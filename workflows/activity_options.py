"""How workflow code calls each family's activities: one options object per family (task queue,
timeout, retry policy), so no call site repeats them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from contracts.names import TaskQueues
    from contracts.run import AgentSettings

T = TypeVar("T")

# Publishing and recording must not be lost: retried (with backoff) for up to ten minutes.
DELIVERY_RETRY = RetryPolicy(initial_interval=timedelta(milliseconds=200), maximum_interval=timedelta(seconds=10))


@dataclass(frozen=True)
class ActivityOptions:
    task_queue: str
    timeout: timedelta
    retry: RetryPolicy
    schedule_to_close: timedelta | None = None

    async def run(self, name: str, arg: Any, result_type: type[T] | None = None, *,
                  start_to_close: timedelta | None = None, summary: str | None = None) -> T:
        """Run the activity `name` on this family's queue; `start_to_close` replaces the family's timeout;
        `summary` is the one line the Web UI shows for the call (which step, which tool)."""
        return await workflow.execute_activity(
            name, arg, result_type=result_type, task_queue=self.task_queue,
            start_to_close_timeout=start_to_close or self.timeout, retry_policy=self.retry,
            schedule_to_close_timeout=self.schedule_to_close, summary=summary)


def step_retry_policy(settings: AgentSettings) -> RetryPolicy:
    """Transport failures of planning, tool and synthesis calls: Temporal's retry with the run's backoff."""
    return RetryPolicy(
        initial_interval=timedelta(milliseconds=500),
        backoff_coefficient=settings.retry_backoff_factor,
        maximum_interval=timedelta(seconds=settings.max_retry_delay_s),
        maximum_attempts=settings.max_retries + 1,
    )


@dataclass(frozen=True)
class FamilyOptions:
    planning: ActivityOptions
    tools: ActivityOptions  # callers give each step its own timeout
    synthesis: ActivityOptions
    audit: ActivityOptions

    @classmethod
    def of(cls, settings: AgentSettings, queues: TaskQueues) -> FamilyOptions:
        retry = step_retry_policy(settings)
        llm_call = timedelta(milliseconds=settings.planning_timeout_ms)
        return cls(
            planning=ActivityOptions(queues.planning, llm_call, retry),
            tools=ActivityOptions(queues.tools, timedelta(milliseconds=settings.step_timeout_ms), retry),
            synthesis=ActivityOptions(queues.synthesis, llm_call, retry),
            audit=ActivityOptions(queues.audit, timedelta(seconds=30), DELIVERY_RETRY, timedelta(minutes=10)),
        )
