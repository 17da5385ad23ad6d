"""Attack: kill the supervisor with SIGKILL (as the OOM killer would) and hope its parts live on, holding
their ports, memory and data files, so that the next start is refused. Each part leads a process group of
its own; the supervisor's guard (embedded/part_guard.py) stops every group, a part's own children included,
once the supervisor is gone, and the next start just works."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

from embedded.processes import free_port, port_in_use
from embedded.stack_state import ProcessRecord, StackState, process_start
from tests.scripted_llm import ScriptedLLM
from tests.up_process import Up, cli

pytestmark = pytest.mark.slow

GONE_WITHIN_S = 60.0  # a bound, not a timing: the guard gives each part 15 s to stop before SIGKILL


def group_members(groups: Iterable[int]) -> list[ProcessRecord]:
    """Every process in these process groups, with its start time (a pid alone may be reused meanwhile)."""
    wanted, found = set(groups), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if int(fields[2]) in wanted:  # field 5: the process group
            found.append(ProcessRecord(int(entry.name), process_start(int(entry.name))))
    return found


def still_running(processes: list[ProcessRecord], timeout_s: float = GONE_WITHIN_S) -> list[ProcessRecord]:
    """Those still running after `timeout_s` (polled); a zombie counts as gone."""
    deadline = time.monotonic() + timeout_s
    while (left := [p for p in processes if p.alive()]) and time.monotonic() < deadline:
        time.sleep(0.25)
    return left


def test_a_killed_up_takes_every_part_with_it_and_the_next_up_just_starts(tmp_path: Path) -> None:
    with ScriptedLLM(lambda body: (200, "noted")) as llm:
        first = Up(tmp_path, llm.base_url, extra=["--http-port", str(free_port())])
        second: Up | None = None
        try:
            first.wait_ready()
            record = StackState(tmp_path).read()
            assert record is not None and record.guard is not None and record.guard.alive()
            keys = {part.key for part in record.running_parts()}
            assert keys == {"temporal", "pulsar", "falkordb", "worker", "bridge", "chat"}
            members = group_members(part.process.pid for part in record.parts)
            assert len(members) >= len(keys)

            first.process.kill()  # SIGKILL: `up` gets no chance to stop anything
            first.process.wait(10)
            # The same command again at once: it starts on the same ports and data, without --stop-leftovers
            # and without asking (it waits for the guard to stop what the killed `up` left)
            second = Up(tmp_path, llm.base_url, argv=first.argv)
            second.wait_ready()
            said = "".join(second.output)
            assert "still running" not in said and "already running" not in said
            assert still_running([*members, record.guard]) == []
            again = StackState(tmp_path).read()
            assert again is not None and again.owner.pid == second.process.pid
            assert {part.key for part in again.running_parts()} == keys

            # and `down` still stops it all
            stopped = cli("down", "--data-dir", str(tmp_path))
            assert stopped.returncode == 0, stopped.stderr
            assert second.process.wait(30) in (0, -15)
            assert still_running(group_members(part.process.pid for part in again.parts)) == []
            assert StackState(tmp_path).read() is None
        finally:
            for up in (first, second):
                if up is not None and up.process.poll() is None:
                    up.process.kill()
            cli("down", "--data-dir", str(tmp_path))


# The smallest supervisor: real FalkorDB and broker, and a part whose child ignores SIGTERM (as a part's
# child busy writing might), all supervised (restarted when they die) until it is killed.
SUPERVISOR = r"""
import asyncio, json, sys
from pathlib import Path
from embedded.parts import falkordb_server, pulsar_broker
from embedded.processes import ManagedProcess
from embedded.supervisor import Supervisor

async def main() -> None:
    data, falkordb_port, broker_port = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    spawner = ManagedProcess("spawner", ["/bin/sh", "-c", "(trap '' TERM; exec sleep 600) & exec sleep 601"],
                             data / "spawner.log")
    parts = [falkordb_server(data, falkordb_port), pulsar_broker(data, broker_port), spawner]
    for part in parts:
        part.start()
    await asyncio.gather(*(part.wait_ready(60) for part in parts))
    print(json.dumps([part.pid for part in parts]), flush=True)
    await Supervisor(parts, print).run(asyncio.Event())

asyncio.run(main())
"""


def supervisor(data: Path, ports: list[int]) -> tuple[subprocess.Popen[str], list[int]]:
    """The supervisor, started and ready, and its parts' pids."""
    process = subprocess.Popen(
        [sys.executable, "-c", SUPERVISOR, str(data), *map(str, ports)],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line, f"the supervisor exited with {process.wait(10)} before its parts were ready"
    return process, json.loads(line)


def test_a_killed_supervisor_takes_its_parts_and_their_children_with_it(tmp_path: Path) -> None:
    ports = [free_port(), free_port()]
    process, pids = supervisor(tmp_path, ports)
    again: subprocess.Popen[str] | None = None
    members = group_members(pids)
    try:
        # The spawner dies and is restarted first: the guard must know the new one too
        os.kill(pids[2], signal.SIGKILL)
        assert process.stdout is not None
        while not (restarted := re.search(r"spawner is running again \(pid (\d+)\)", process.stdout.readline())):
            assert process.poll() is None, "the supervisor exited"
        pids[2] = int(restarted.group(1))
        deadline = time.monotonic() + 30  # the restarted shell forks its child a moment after it starts
        members = group_members(pids)
        while not [m for m in members if m.pid not in pids]:
            assert time.monotonic() < deadline, "the spawner's child is in its group"
            time.sleep(0.1)
            members = group_members(pids)

        process.kill()
        process.wait(10)
        assert still_running(members) == []
        assert [port for port in ports if port_in_use(port)] == []
        assert "is gone: stopping it" in (tmp_path / "spawner.log").read_text()

        again, again_pids = supervisor(tmp_path, ports)  # same ports and data: it just starts
        members += group_members(again_pids)
        assert again.poll() is None and len(again_pids) == 3
    finally:
        for started in (process, again):
            if started is not None and started.poll() is None:
                started.kill()
                started.wait(10)
        for member in members:  # what a failed run left (the very processes recorded, not reused pids)
            if member.alive():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(member.pid, signal.SIGKILL)
