"""Acting on a recorded stack from outside it (embedded/stack_state.py): stop it, or only the parts an `up`
that was killed with SIGKILL left running. Only processes whose pid and start time match the record are
signalled: never a stranger that reused a pid."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable

from embedded.stack_state import PartRecord, ProcessRecord, StackRecord, StackState, StateError

OWNER_STOP_S = 60.0  # `up` stops its parts in reverse order, each with its own 15 s grace
PART_STOP_S = 15.0
GUARD_STOP_S = PART_STOP_S + 10.0  # the guard stops them all at once: 15 s grace, then SIGKILL


def _wait_gone(processes: list[ProcessRecord], timeout_s: float) -> list[ProcessRecord]:
    """Those still alive after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while (left := [p for p in processes if p.alive()]) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def _signal_group(part: PartRecord, sig: signal.Signals) -> None:
    # Each part leads its own process group (started with start_new_session): its children go with it.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(part.process.pid, sig)


def _group_alive(part: PartRecord) -> bool:
    """Any process of the part's group is left (a forked child may hold its port after the leader exits)."""
    try:
        os.killpg(part.process.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's by now, but still there
        pass
    return True


def stop_parts(parts: list[PartRecord], say: Callable[[str], None], timeout_s: float = PART_STOP_S) -> list[str]:
    """SIGTERM every part's process group at once (the record's parts are all stopping), SIGKILL the groups
    left after `timeout_s`; the names of those that needed SIGKILL."""
    for part in reversed(parts):
        say(f"stopping {part.name} (pid {part.process.pid})")
        _signal_group(part, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while (left := [p for p in parts if _group_alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.2)
    for part in left:
        say(f"{part.name} did not stop within {timeout_s:g} s: killing it")
        _signal_group(part, signal.SIGKILL)
    deadline = time.monotonic() + 5.0
    while any(_group_alive(p) for p in left) and time.monotonic() < deadline:
        time.sleep(0.2)
    return [p.name for p in left]


def wait_for_guard(record: StackRecord, say: Callable[[str], None], timeout_s: float = GUARD_STOP_S) -> bool:
    """When the `up` that owns the record is gone and its guard (embedded/part_guard.py) is still stopping
    the parts it left, wait for the guard within a bound; whether there was one to wait for."""
    guard = record.guard
    if guard is None or record.owner.alive() or not guard.alive():
        return False
    say(
        f"tg-confidence up (pid {record.owner.pid}) is gone; waiting for its guard (pid {guard.pid}) to stop "
        "the parts it left ..."
    )
    _wait_gone([guard], timeout_s)
    return True


def stop_stack(state: StackState, say: Callable[[str], None], owner_timeout_s: float = OWNER_STOP_S) -> bool:
    """Stop the recorded stack: ask its `up` to stop (it stops every part in order), then stop any part still
    running (the `up` was gone, or did not finish in time). False when nothing was running."""
    record = state.read()
    if record is None:
        return False
    owner_alive = record.owner.alive()
    wait_for_guard(record, say)
    running = record.running_parts()
    if not owner_alive and not running:
        state.clear()
        return False
    if owner_alive:
        say(f"stopping tg-confidence up (pid {record.owner.pid}) and the parts it runs ...")
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(record.owner.pid, signal.SIGTERM)
        if _wait_gone([record.owner], owner_timeout_s):
            say(f"tg-confidence up (pid {record.owner.pid}) did not stop within {owner_timeout_s:g} s: killing it")
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(record.owner.pid, signal.SIGKILL)
        # the owner rewrote the record as it restarted parts: read the latest, if it is still that owner's
        with contextlib.suppress(StateError):
            latest = state.read()
            if latest is not None and latest.owner == record.owner:
                record = latest
        running = record.running_parts()
    if running:
        stop_parts(running, say)
    state.clear()
    return True


def leftovers(record: StackRecord | None) -> list[PartRecord]:
    """Parts still running although the `up` that started them is gone (killed with SIGKILL, and its guard
    was killed too or could not stop them)."""
    if record is None or record.owner.alive():
        return []
    return record.running_parts()
