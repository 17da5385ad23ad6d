"""The end-of-run activity: the run's metrics into Prometheus and its audit record, sanitized, appended
as one JSON line to the sink. One activity, so a run costs one round trip for both."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import structlog
from temporalio import activity

from activities.agent_metrics import AgentMetrics
from confidence_core.redaction import sanitize
from contracts.names import Activities
from contracts.records import RunRecord

log = structlog.get_logger(__name__)


class RunRecordActivities:
    def __init__(self, sink: Path, metrics: AgentMetrics) -> None:
        self.sink = sink
        self.metrics = metrics
        self._lock = asyncio.Lock()

    def _append(self, line: str) -> None:
        self.sink.parent.mkdir(parents=True, exist_ok=True)
        with open(self.sink, "a", encoding="utf-8") as f:
            f.write(line + "\n")

    @activity.defn(name=Activities.RECORD_RUN)
    async def record_run(self, run: RunRecord) -> None:
        if activity.info().attempt == 1:  # a retry after a failed audit write must not count the run twice
            self.metrics.record(run.metrics)
        if run.audit is None:
            return
        record = sanitize(run.audit.model_dump(mode="json"), run.include_raw_outputs)
        line = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
        async with self._lock:  # one writer per process: lines never interleave
            await asyncio.to_thread(self._append, line)
        log.info("audit_written", execution_id=run.audit.execution_id, sink=str(self.sink))
