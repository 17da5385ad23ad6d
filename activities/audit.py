"""Audit activities: the run's audit record, sanitized, appended as one JSON line to the sink."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import structlog
from temporalio import activity

from confidence_core.activity_io import AuditInput
from confidence_core.audit import sanitize

log = structlog.get_logger(__name__)


class AuditActivities:
    def __init__(self, sink: Path) -> None:
        self.sink = sink
        self._lock = asyncio.Lock()

    def _append(self, line: str) -> None:
        self.sink.parent.mkdir(parents=True, exist_ok=True)
        with open(self.sink, "a", encoding="utf-8") as f:
            f.write(line + "\n")

    @activity.defn(name="write_audit")
    async def write_audit(self, request: AuditInput) -> None:
        record = sanitize(request.record.model_dump(mode="json"), request.include_raw_outputs)
        line = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
        async with self._lock:  # one writer per process: lines never interleave
            await asyncio.to_thread(self._append, line)
        log.info("audit_written", execution_id=request.record.execution_id, sink=str(self.sink))
