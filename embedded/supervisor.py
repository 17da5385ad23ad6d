"""Keep the embedded stack's parts running: a part that dies is restarted, with exponential backoff, and
the supervisor gives up only when the same part keeps dying.

Every part keeps its state on disk (Temporal's SQLite file, the broker's database, FalkorDB's append-only
file), and Temporal retries the activities that failed while a part was away, so a run in flight carries
on once the part is back; the restarted worker and bridge poll their task queues again.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from embedded.processes import ManagedProcess, PartStartError


@dataclass(frozen=True)
class RestartPolicy:
    first_backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    max_restarts: int = 5  # a part that needs more restarts than this within window_s is given up
    window_s: float = 300.0
    poll_s: float = 0.5
    port_wait_s: float = 30.0  # how long a restart waits for the part's ports to be released


@dataclass(frozen=True)
class GaveUp:
    part: str
    reason: str


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "is not running"
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with code {returncode}"


def _indented(text: str) -> str:
    return "\n".join(f"    {line}" for line in text.splitlines()) or "    (empty log)"


class Supervisor:
    """Watches each part in its own task; `run` returns 0 when `stop` is set, 1 when it gave up on a part."""

    def __init__(
        self, parts: Sequence[ManagedProcess], say: Callable[[str], None], policy: RestartPolicy | None = None
    ) -> None:
        self.parts = list(parts)
        self.say = say
        self.policy = policy or RestartPolicy()
        self.gave_up: GaveUp | None = None
        self.restarts: dict[str, int] = {part.name: 0 for part in self.parts}  # successful restarts, per part

    async def run(self, stop: asyncio.Event) -> int:
        watchers = [asyncio.create_task(self._watch(part), name=f"supervise {part.name}") for part in self.parts]
        stopping = asyncio.create_task(stop.wait())
        try:
            done, _ = await asyncio.wait([stopping, *watchers], return_when=asyncio.FIRST_COMPLETED)
            if stopping in done:
                return 0
            finished = next(task for task in watchers if task in done)
            self.gave_up = finished.result()  # a watcher only returns when it gave up (or raises a bug)
            self.say(f"giving up on {self.gave_up.part}: {self.gave_up.reason}")
            return 1
        finally:
            for task in [stopping, *watchers]:
                task.cancel()
            await asyncio.gather(stopping, *watchers, return_exceptions=True)

    async def _watch(self, part: ManagedProcess) -> GaveUp:
        p = self.policy
        recent: deque[float] = deque()  # when this part was restarted, within the window
        while True:
            while part.alive():  # noqa: ASYNC110 - a Popen child's exit is not awaitable: poll it
                await asyncio.sleep(p.poll_s)
            reason = describe_exit(part.process.returncode if part.process else None)
            while True:  # restart until the part is ready again, or give up
                # Its own children (a forked saver, a tool server) may outlive it and hold its ports.
                part.kill_leftovers()
                now = time.monotonic()
                while recent and now - recent[0] > p.window_s:
                    recent.popleft()
                if len(recent) >= p.max_restarts:
                    return GaveUp(
                        part.name,
                        f"it {reason} after {len(recent)} restarts within {p.window_s:.0f} s; "
                        f"last log lines ({part.log_path}):\n{_indented(part.log_tail())}",
                    )
                delay = min(p.first_backoff_s * 2 ** len(recent), p.max_backoff_s)
                self.say(
                    f"{part.name} {reason}; restarting it in {delay:g} s; last log lines ({part.log_path}):\n"
                    f"{_indented(part.log_tail())}"
                )
                await asyncio.sleep(delay)
                recent.append(time.monotonic())
                failure = await self._restart(part)
                if failure is not None:
                    reason = failure
                    await asyncio.to_thread(part.stop)  # one that hangs while starting: stop it before retrying
                    continue
                self.restarts[part.name] += 1
                self.say(f"{part.name} is running again (pid {part.pid})")
                break

    async def _restart(self, part: ManagedProcess) -> str | None:
        """Start the part again and wait until it is ready; None, or why it did not come back."""
        # A listening socket closes with its process, but a port can stay bound for a moment (a dying
        # grandchild, TIME_WAIT for a server without SO_REUSEADDR): wait for it within a bound.
        deadline = time.monotonic() + self.policy.port_wait_s
        while (busy := part.busy_ports()) and time.monotonic() < deadline:  # noqa: ASYNC110 - nothing to await
            await asyncio.sleep(0.25)
        if busy:
            role, port = next(iter(busy.items()))
            return f"could not restart: its {role} port {port} stayed in use for {self.policy.port_wait_s:g} s"
        try:
            part.start()
        except PartStartError as exc:
            return f"could not restart: {str(exc).splitlines()[0]}"
        try:
            await part.wait_ready(part.ready_timeout_s)
        except PartStartError:
            if part.process is not None and not part.alive():
                return f"{describe_exit(part.process.returncode)} while restarting"
            return f"was not ready {part.ready_timeout_s:g} s after restarting"
        return None
