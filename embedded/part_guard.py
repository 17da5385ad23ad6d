"""Parts die with the process that started them, even when it is killed with SIGKILL or by the OOM killer.

Each part leads a process group of its own (so Ctrl-C at the terminal reaches only `up`, which stops the
parts in order), so nothing ties a part to `up`: a killed `up` used to leave every part running. Before the
first part starts, a process also starts a guard: a small process in a session of its own, whose stdin is a
pipe that only the starting process writes to. It sends the guard each part's group as it (re)starts it.
When the pipe reaches EOF the starting process is gone, however it ended; the guard then stops every group
still running, as `tg-confidence down` does (SIGTERM, SIGKILL after 15 s: a part's own children go with
it), notes why in each part's log and in guard.log, and exits. After a normal stop it finds nothing left.

Not PR_SET_PDEATHSIG: it signals only the direct child (a part's own children, e.g. the worker's MCP
servers or FalkorDB's forked saver, would stay), it must be set between fork and exec (preexec_fn, unsafe
with threads), and it fires when the *thread* that forked exits, not the process.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path

from embedded.stack_control import stop_parts
from embedded.stack_state import PartRecord, ProcessRecord, process_start

GUARD_LOG = "guard.log"


def group_left(part: PartRecord) -> bool:
    """Some process of the part's own group is still running (its leader, or a child it left)."""
    pid = part.process.pid
    started = process_start(pid)
    if started is not None and started != part.process.started:
        return False  # the pid is another process's now: the kernel reuses no pid while its group lives
    try:
        os.killpg(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


class _Guard:
    """The starting process's side: the guard process and the pipe to it."""

    def __init__(self, log_dir: Path) -> None:
        log_dir.mkdir(parents=True, exist_ok=True)
        with open(log_dir / GUARD_LOG, "ab") as log:
            # The pipe's write end is not inherited by the parts (close_fds): only this process holds it.
            self.process = subprocess.Popen(
                [sys.executable, "-m", "embedded.part_guard", str(os.getpid())],
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.record = ProcessRecord.of(self.process.pid)

    def send(self, part: PartRecord) -> bool:
        """False when the guard is gone."""
        assert self.process.stdin is not None
        try:  # one short line: written whole (below PIPE_BUF), even if this process is killed meanwhile
            self.process.stdin.write(json.dumps(asdict(part)).encode() + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError):
            return False
        return True


_lock = threading.Lock()
_guard: _Guard | None = None
_watched: list[PartRecord] = []  # resent to a guard started anew (one that was killed)


def ensure(log_dir: Path) -> ProcessRecord:
    """The running guard of this process, started first if need be (before a part starts, so that no part
    runs unguarded if the guard cannot start)."""
    global _guard
    with _lock:
        if _guard is None or _guard.process.poll() is not None:
            _guard = _Guard(log_dir)
            _watched[:] = [part for part in _watched if group_left(part) and _guard.send(part)]
        return _guard.record


def watch(part: PartRecord, log_dir: Path) -> None:
    """Have the guard stop the part's process group should this process die before it does."""
    global _guard
    ensure(log_dir)
    with _lock:
        assert _guard is not None
        _watched[:] = [*(p for p in _watched if group_left(p)), part]
        if _guard.send(part):
            return
        _guard = None  # it died meanwhile (perhaps not reaped yet): a new one is sent every watched part
    ensure(log_dir)


def current() -> ProcessRecord | None:
    """This process's guard, if it started one."""
    return _guard.record if _guard is not None else None


def _forget_in_child() -> None:
    """A forked child (not exec'd) must not hold the pipe open: the guard would wait for it too."""
    global _guard, _lock
    _lock = threading.Lock()
    if _guard is not None and _guard.process.stdin is not None:
        with contextlib.suppress(OSError):
            _guard.process.stdin.close()  # the child's copy only
    _guard = None
    _watched.clear()


os.register_at_fork(after_in_child=_forget_in_child)


def _say(text: str) -> None:
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} guard (pid {os.getpid()}): {text}", flush=True)


def _note(part: PartRecord, text: str) -> None:
    with contextlib.suppress(OSError), open(part.log, "a", encoding="utf-8") as log:
        log.write(f"\n{time.strftime('%Y-%m-%d %H:%M:%S')} [part guard] {text}\n")


def main(owner: int) -> int:
    """The guard: read each part's record until EOF, then stop the groups still running."""
    parts: dict[tuple[int, int | None], PartRecord] = {}
    for line in sys.stdin.buffer:
        with contextlib.suppress(ValueError, KeyError, TypeError, AttributeError):  # a line cut short
            part = PartRecord.from_json(json.loads(line))
            parts[(part.process.pid, part.process.started)] = part
    left = [part for part in parts.values() if group_left(part)]
    if not left:
        return 0
    _say(
        f"the process that started these parts (pid {owner}) is gone: stopping "
        + ", ".join(f"{p.key} (pid {p.process.pid})" for p in left)
    )
    for part in left:
        _note(part, f"the process that started this part (pid {owner}) is gone: stopping it")
    stop_parts(left, _say)
    _say("stopped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(int(sys.argv[1])))
