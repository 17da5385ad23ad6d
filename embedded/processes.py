"""Start, watch and stop one child process of the embedded stack.

A part that cannot start says which part and which port; a part that dies while starting shows the
tail of its log, so the user sees the real reason rather than a timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import socket
import subprocess
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from embedded import part_guard
from embedded.stack_state import PartRecord, ProcessRecord

ReadyCheck = Callable[["ManagedProcess"], Awaitable[bool]]


class PartStartError(RuntimeError):
    """A part of the embedded stack could not start; the message names the part and why."""


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A free port below the kernel's ephemeral range (32768+), so an outgoing connection cannot take it
    between this check and the server's bind; never the same one twice in a process."""
    rng = random.Random()
    for _ in range(500):
        port = rng.randrange(20000, 32000)
        if port not in _HANDED_OUT and not port_in_use(port):
            _HANDED_OUT.add(port)
            return port
    raise RuntimeError("no free port found in 20000-32000")


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(c) for c in (task / "children").read_text().split()]
    except OSError:  # gone meanwhile, or no /proc (not Linux)
        pass
    return found


def tree_pids(pid: int) -> list[int]:
    """A process and all its descendants."""
    found, todo, seen = [], [pid], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        found.append(current)
        todo += _children(current)
    return found


def tree_rss_bytes(pid: int) -> int:
    """Resident memory of a process and all its descendants, from /proc/<pid>/status (VmRSS)."""
    total = 0
    for current in tree_pids(pid):
        try:
            status = Path(f"/proc/{current}/status").read_text()
        except OSError:
            continue
        match = next((line for line in status.splitlines() if line.startswith("VmRSS:")), None)
        if match:
            total += int(match.split()[1]) * 1024
    return total


def tree_cpu_seconds(pid: int) -> float:
    """User + system CPU time a process and its live descendants have used, from /proc/<pid>/stat."""
    total = 0.0
    for current in tree_pids(pid):
        try:  # the fields after the command, which may hold spaces and parentheses: utime, stime at 11, 12
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            continue
    return total


async def tcp_open(port: int, host: str = "127.0.0.1") -> bool:
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout=1.0)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


@dataclass
class ManagedProcess:
    name: str
    argv: list[str]
    log_path: Path
    ports: dict[str, int] = field(default_factory=dict)  # role -> port, checked free before start
    ready: ReadyCheck | None = None
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    ready_timeout_s: float = 60.0  # how long a (re)start may take to pass `ready`
    process: subprocess.Popen[bytes] | None = None
    on_start: Callable[[ManagedProcess], None] | None = None  # after every (re)start: the stack records its pid

    @property
    def key(self) -> str:
        """The part's short name (`tg-confidence logs worker`): its log file's name without .log."""
        return self.log_path.stem

    def busy_ports(self) -> dict[str, int]:
        return {role: port for role, port in self.ports.items() if port_in_use(port)}

    def check_ports(self) -> None:
        busy = self.busy_ports()
        if busy:
            role, port = next(iter(busy.items()))
            raise PartStartError(
                f"{self.name}: {role} port {port} on 127.0.0.1 is already in use "
                f"(stop whatever holds it, choose another port, or point at an external server)"
            )

    def start(self) -> None:
        self.check_ports()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        try:  # before the part: none runs unguarded (embedded/part_guard.py)
            part_guard.ensure(self.log_path.parent)
        except OSError as exc:
            raise PartStartError(f"{self.name}: cannot start the part guard: {exc}") from exc
        log = open(self.log_path, "ab")
        try:
            self.process = subprocess.Popen(
                self.argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **self.env},
                cwd=self.cwd,
                start_new_session=True,
            )
        except OSError as exc:
            log.close()
            raise PartStartError(f"{self.name}: cannot run {self.argv[0]}: {exc}") from exc
        finally:
            log.close()
        # Its own session keeps Ctrl-C at the terminal from reaching it (the supervisor stops the parts in
        # order); the guard stops its group should the supervisor die without stopping it.
        part_guard.watch(self.record(), self.log_path.parent)
        if self.on_start is not None:
            self.on_start(self)

    def record(self) -> PartRecord:
        """The running part as the stack's record and the guard know it."""
        assert self.process is not None
        return PartRecord(
            key=self.key,
            name=self.name,
            process=ProcessRecord.of(self.process.pid),
            ports=dict(self.ports),
            log=str(self.log_path.resolve()),
        )

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    async def wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        error = ""
        while time.monotonic() < deadline:
            if not self.alive():
                code = self.process.returncode if self.process else None
                raise PartStartError(
                    f"{self.name} exited with code {code} while starting; last log lines "
                    f"({self.log_path}):\n{self.log_tail()}"
                )
            try:
                if self.ready is None or await self.ready(self):
                    return
            except Exception as exc:  # a check that errors means not ready yet (the worker's, while Temporal restarts)
                error = f" (its readiness check failed: {exc!r})"
            await asyncio.sleep(0.25)
        raise PartStartError(
            f"{self.name} was not ready after {timeout_s:.0f}s{error}; last log lines ({self.log_path}):\n"
            f"{self.log_tail()}"
        )

    def kill_leftovers(self) -> None:
        """SIGKILL whatever is left in the process group of a child that has exited: processes it started
        (a forked saver, a tool server) outlive it and may still hold its ports."""
        if self.process is None or self.process.poll() is None:
            return
        # The group id is the child's pid (start_new_session). While any member is left the kernel keeps
        # that id out of reuse; with none left this finds no group (unless the pid was reused meanwhile).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def stop(self, timeout_s: float = 15.0) -> None:
        """SIGTERM the child's process group, then SIGKILL what is left after `timeout_s`."""
        if self.process is None:
            return
        if self.process.poll() is not None:
            self.kill_leftovers()
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=5)
