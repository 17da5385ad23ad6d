"""The audit trail's file: one JSON line per run, readable by its owner only, and a write that fails (disk
full, read-only volume, a hung network mount) never fails or holds up the run that wrote it.

A line that cannot be written within WRITE_TIMEOUT_S joins an in-memory backlog, written in order by a
background task that retries with backoff; every later line queues behind it, so the file keeps the runs'
order. The backlog is bounded (MAX_PENDING lines; the oldest is dropped and counted when it is full) and
lives in the worker's memory: a worker that stops while its audit volume is broken loses that backlog,
and the `agent_audit_pending_records` gauge and `audit_write_failed` log lines say how much is at stake. A
write that timed out may still complete in its thread and then appear twice: records carry their run's
execution_id, so a reader can tell."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections import deque
from pathlib import Path

import structlog

from service.agent_metrics import AgentMetrics

log = structlog.get_logger(__name__)

WRITE_TIMEOUT_S = 5.0
MAX_PENDING = 10_000
RETRY_FIRST_S = 1.0
RETRY_MAX_S = 60.0
FILE_MODE = 0o600  # the audit trail names questions, plans and decisions: its owner reads it, nobody else
DIR_MODE = 0o700


class AuditSink:
    def __init__(
        self,
        path: Path | str,
        metrics: AgentMetrics,
        max_pending: int = MAX_PENDING,
        write_timeout_s: float = WRITE_TIMEOUT_S,
        retry_first_s: float = RETRY_FIRST_S,
        retry_max_s: float = RETRY_MAX_S,
    ) -> None:
        self.path = Path(path).expanduser()
        self.metrics = metrics
        self.max_pending = max_pending
        self.write_timeout_s = write_timeout_s
        self.retry_first_s, self.retry_max_s = retry_first_s, retry_max_s
        self._pending: deque[str] = deque()
        self._lock = asyncio.Lock()  # one writer per process: lines never interleave
        self._retrier: asyncio.Task[None] | None = None
        self._written: threading.Event | None = None  # set by the write thread once its append returned

    @property
    def pending(self) -> int:
        return len(self._pending)

    async def write(self, line: str) -> bool:
        """Append one line now, or queue it for the background retrier; True when it is in the file."""
        async with self._lock:
            if not self._pending and await self._try_append([line]):
                return True
            self._queue(line)
        self._ensure_retrier()
        return False

    def _queue(self, line: str) -> None:
        if len(self._pending) >= self.max_pending:
            self._pending.popleft()
            self.metrics.audit_dropped.inc()
            log.error("audit_record_dropped", sink=str(self.path), reason="backlog full", backlog=self.max_pending)
        self._pending.append(line)
        self.metrics.audit_pending.set(len(self._pending))

    async def _try_append(self, lines: list[str]) -> bool:
        try:
            # Not Thread.is_alive(): a thread that has just handed back its result may not have exited yet,
            # and the next run's line would be queued as if the sink hung.
            if self._written is not None and not self._written.is_set():
                raise TimeoutError("an earlier write to the sink is still hanging")
            await asyncio.wait_for(self._in_daemon_thread(lines), self.write_timeout_s)
            return True
        except (OSError, TimeoutError) as exc:
            self.metrics.audit_write_failures.inc()
            log.error(
                "audit_write_failed",
                sink=str(self.path),
                error=str(exc) or type(exc).__name__,
                backlog=len(self._pending) + (0 if len(lines) > 1 else 1),
            )
            return False

    def _in_daemon_thread(self, lines: list[str]) -> asyncio.Future[None]:
        """The append, in a thread of its own: a write hung on a dead mount cannot be cancelled, and in the
        loop's shared executor it would take a worker from every other to_thread caller and hold the
        process at exit. One such thread at most: while it hangs, later attempts fail at once."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def settle(error: BaseException | None) -> None:
            if done.cancelled():
                return  # the run stopped waiting long ago
            if error is None:
                done.set_result(None)
            else:
                done.set_exception(error)

        written = threading.Event()

        def write() -> None:
            error: BaseException | None = None
            try:
                self._append(lines)
            except BaseException as exc:  # handed to the awaiting coroutine
                error = exc
            written.set()
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
                loop.call_soon_threadsafe(settle, error)

        self._written = written
        threading.Thread(target=write, name="audit-write", daemon=True).start()
        return done

    def _append(self, lines: list[str]) -> None:
        self.path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
        with os.fdopen(fd, "a", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
            f.flush()

    def _ensure_retrier(self) -> None:
        if self._retrier is None or self._retrier.done():
            self._retrier = asyncio.get_running_loop().create_task(self._retry(), name="audit-retrier")

    async def _retry(self) -> None:
        delay = self.retry_first_s
        while self._pending:
            await asyncio.sleep(delay)
            async with self._lock:
                batch = list(self._pending)
                if await self._try_append(batch):
                    for _ in batch:
                        self._pending.popleft()
                    self.metrics.audit_pending.set(len(self._pending))
                    log.info("audit_backlog_written", sink=str(self.path), records=len(batch))
                    delay = self.retry_first_s
                    continue
            delay = min(self.retry_max_s, delay * 2)

    async def aclose(self, timeout_s: float = 5.0) -> None:
        """One last try for the backlog when the worker stops, after waiting up to `timeout_s` for a write still
        in progress; what is still not written is logged."""
        if self._retrier is not None:
            self._retrier.cancel()
        if self._pending:
            written = self._written
            if written is not None and not written.is_set():  # a write that just came unstuck may still finish
                await asyncio.to_thread(written.wait, timeout_s)
            async with self._lock:
                if await self._try_append(list(self._pending)):
                    self._pending.clear()
            if self._pending:
                log.error("audit_backlog_lost", sink=str(self.path), records=len(self._pending))
