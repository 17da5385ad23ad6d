"""The end-of-run activity: the run's metrics into Prometheus and its audit record, sanitized, handed to
the audit sink (service/audit_sink.py) as one JSON line. One activity, so a run costs one round trip
for both; a sink that fails queues the record and the run ends as if it had been written."""

from __future__ import annotations

import json

import structlog
from temporalio import activity

from contracts.names import Activities
from contracts.records import RunRecord
from contracts.redaction import sanitize
from service.agent_metrics import AgentMetrics
from service.audit_sink import AuditSink

log = structlog.get_logger(__name__)


class RunRecordActivities:
    def __init__(self, sink: AuditSink, metrics: AgentMetrics) -> None:
        self.sink = sink
        self.metrics = metrics

    @activity.defn(name=Activities.RECORD_RUN)
    async def record_run(self, run: RunRecord) -> None:
        if activity.info().attempt == 1:  # a retry after a failed audit write must not count the run twice
            self.metrics.record(run.metrics)
        if run.audit is None:
            return
        record = sanitize(run.audit.model_dump(mode="json"), run.include_raw_outputs)
        line = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
        if await self.sink.write(line):
            log.info("audit_written", execution_id=run.audit.execution_id, sink=str(self.sink.path))
        else:
            log.warning(
                "audit_queued", execution_id=run.audit.execution_id, sink=str(self.sink.path), backlog=self.sink.pending
            )
