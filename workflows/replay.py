"""Replay workflow histories against the current workflow code (Temporal's Replayer).

A history recorded by an older version replays cleanly only if the new code makes the same decisions in
the same order; otherwise the Replayer reports non-determinism, which is what would break the runs still
in flight when that code is deployed. Guard such changes with `workflow.patched(...)` (see docs/operations.md,
"Debugging by replay").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.runtime import LoggingConfig, Runtime, TelemetryConfig, TelemetryFilter
from temporalio.worker import Replayer

from workflows.action_batch import ActionBatchWorkflow
from workflows.confidence_agent import ConfidenceAgentWorkflow
from workflows.conversation_workflow import ConversationWorkflow
from workflows.flow_header import FlowHeaderInterceptor
from workflows.sandbox import WORKFLOW_RUNNER


@dataclass(frozen=True)
class ReplayOutcome:
    workflow_id: str
    ok: bool
    error: str = ""


def load_history(path: Path) -> WorkflowHistory:
    """A history exported by `tg-confidence replay --export`, the Temporal CLI or the Web UI (JSON)."""
    data = json.loads(path.read_text())
    workflow_id = data.pop("workflowId", None) if isinstance(data, dict) else None
    return WorkflowHistory.from_json(workflow_id or path.stem, data)


def _quiet_runtime() -> Runtime:
    """Temporal core prints each replay failure as a warning on stdout; the outcome says it once, plainly."""
    return Runtime(
        telemetry=TelemetryConfig(
            logging=LoggingConfig(filter=TelemetryFilter(core_level="ERROR", other_level="ERROR"))
        )
    )


async def replay(histories: list[WorkflowHistory]) -> list[ReplayOutcome]:
    replayer = Replayer(
        workflows=[ConfidenceAgentWorkflow, ActionBatchWorkflow, ConversationWorkflow],
        data_converter=pydantic_data_converter,
        runtime=_quiet_runtime(),
        workflow_runner=WORKFLOW_RUNNER,
        interceptors=[FlowHeaderInterceptor()],
    )
    outcomes = []
    for history in histories:
        result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
        failure = result.replay_failure
        outcomes.append(
            ReplayOutcome(
                history.workflow_id, failure is None, "" if failure is None else f"{type(failure).__name__}: {failure}"
            )
        )
    return outcomes
