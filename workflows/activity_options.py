"""How workflow code calls each family's activities: one options object per family (task queue,
timeout, retry policy), so no call site repeats them; and the one place every activity's output passes, where
its LLM usage is added to the run's tally."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypedDict, TypeVar

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from contracts.llm_usage import LlmUsage
    from contracts.names import TaskQueues
    from contracts.run import AgentSettings

T = TypeVar("T")

# Publishing and recording must not be lost: retried (with backoff) for up to ten minutes.
DELIVERY_RETRY = RetryPolicy(initial_interval=timedelta(milliseconds=200), maximum_interval=timedelta(seconds=10))


class FinalTokens(TypedDict):
    """The usage fields of a run's final message."""

    in_token: int | None
    out_token: int | None
    model: str | None


class LlmTally:
    """The run's LLM usage so far: each activity output's `llm_usage` (worker/llm_usage.py) added in the order
    the workflow received them, which replay repeats. Outputs without it (a tool's) add nothing."""

    def __init__(self) -> None:
        self.total = LlmUsage()

    def add(self, output: object) -> None:
        usage = getattr(output, "llm_usage", None)
        if isinstance(usage, LlmUsage):
            self.total = self.total.plus(usage)

    def tokens(self) -> FinalTokens:
        """The final message's in_token/out_token/model, as TrustGraph's agent sets them: null when none."""
        total = self.total
        return {
            "in_token": total.in_tokens or None,
            "out_token": total.out_tokens or None,
            "model": total.model or None,
        }


@dataclass(frozen=True)
class ActivityOptions:
    task_queue: str
    timeout: timedelta
    retry: RetryPolicy
    schedule_to_close: timedelta | None = None
    tally: LlmTally = field(default_factory=LlmTally, compare=False)

    async def run(
        self,
        name: str,
        arg: Any,
        result_type: type[T] | None = None,
        *,
        start_to_close: timedelta | None = None,
        summary: str | None = None,
    ) -> T:
        """Run the activity `name` on this family's queue; `start_to_close` replaces the family's timeout;
        `summary` is the one line the Web UI shows for the call (which step, which tool)."""
        result = await workflow.execute_activity(
            name,
            arg,
            result_type=result_type,
            task_queue=self.task_queue,
            start_to_close_timeout=start_to_close or self.timeout,
            retry_policy=self.retry,
            schedule_to_close_timeout=self.schedule_to_close,
            summary=summary,
        )
        self.tally.add(result)
        return result


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
    def of(cls, settings: AgentSettings, queues: TaskQueues, tally: LlmTally | None = None) -> FamilyOptions:
        """`tally`: where every family's activities add their LLM usage (the run's; a fresh one if not given)."""
        retry = step_retry_policy(settings)
        llm_call = timedelta(milliseconds=settings.planning_timeout_ms)
        tally = tally or LlmTally()
        return cls(
            planning=ActivityOptions(queues.planning, llm_call, retry, tally=tally),
            tools=ActivityOptions(queues.tools, timedelta(milliseconds=settings.step_timeout_ms), retry, tally=tally),
            synthesis=ActivityOptions(queues.synthesis, llm_call, retry, tally=tally),
            audit=ActivityOptions(
                queues.audit, timedelta(seconds=30), DELIVERY_RETRY, timedelta(minutes=10), tally=tally
            ),
        )
