"""The record `up` keeps lets `ps` and `logs` show its parts, a second `up` refuses to start over a running
one, and `down` stops a running `up` with its parts from another terminal. A killed `up` takes its parts
with it (its guard stops them: tests/attacks/test_supervisor_killed.py); should parts be left all the same
(the guard was killed too), the next `up` refuses to start over them with what to do, and `down` stops
them."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from embedded.processes import port_in_use
from embedded.stack_state import StackState
from tests.up_process import cli, gone, part_pids, started_up

pytestmark = pytest.mark.slow


def test_leftovers_of_a_killed_up_are_shown_refused_and_stopped(tmp_path: Path) -> None:
    with started_up(tmp_path) as (first, llm_url):
        pids = part_pids(tmp_path)
        assert set(pids) == {"temporal", "pulsar", "falkordb", "worker", "bridge"}

        shown = cli("ps", "--data-dir", str(tmp_path))
        assert shown.returncode == 0 and f"pid {first.process.pid}, running" in shown.stdout
        assert "part guard: pid" in shown.stdout
        assert all(f"{key:<10} {pid:>8}  running" in shown.stdout for key, pid in pids.items())
        logged = cli("logs", "worker", "-n", "3", "--data-dir", str(tmp_path))
        assert logged.returncode == 0 and logged.stdout.strip()

        # A second `up` on the same data dir while the first runs: refused, nothing started.
        again = cli("up", "--data-dir", str(tmp_path), "--llm-base-url", llm_url, "--http-port", "0")
        assert again.returncode == 2 and "already running" in again.stderr and "tg-confidence down" in again.stderr

        # SIGKILL for the guard and then for `up`: nothing gets a chance to stop the parts
        guard = StackState(tmp_path).read().guard  # type: ignore[union-attr]
        assert guard is not None and guard.alive()
        os.kill(guard.pid, signal.SIGKILL)
        first.process.kill()
        first.process.wait(10)
        time.sleep(1)
        assert not any(gone(pid) for pid in pids.values())  # left running
        assert "gone" in cli("ps", "--data-dir", str(tmp_path)).stdout

        refused = subprocess.run(first.argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert refused.returncode == 2
        assert "still running" in refused.stdout and "worker (pid" in refused.stdout
        assert "tg-confidence down" in refused.stderr and "--stop-leftovers" in refused.stderr

        stopped = cli("down", "--data-dir", str(tmp_path))
        assert stopped.returncode == 0, stopped.stderr
        assert all(gone(pid) for pid in pids.values())
        assert not any(port_in_use(port) for port in first.ports.values())
        assert StackState(tmp_path).read() is None
        assert "no stack is running" in cli("down", "--data-dir", str(tmp_path)).stdout


def test_down_from_another_terminal_stops_a_running_up_and_its_parts(tmp_path: Path) -> None:
    with started_up(tmp_path) as (running, _):
        pids = part_pids(tmp_path)
        stopped = cli("down", "--data-dir", str(tmp_path))
        assert stopped.returncode == 0 and f"tg-confidence up (pid {running.process.pid})" in stopped.stdout
        assert running.process.wait(30) in (0, -signal.SIGTERM)
        assert all(gone(pid) for pid in pids.values())


def test_logs_of_an_unknown_part_name_the_parts(tmp_path: Path) -> None:
    done = cli("logs", "nosuchpart", "--data-dir", str(tmp_path))
    assert done.returncode == 2 and "no log for 'nosuchpart'" in done.stderr and "worker" in done.stderr
