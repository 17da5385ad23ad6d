"""`tg-confidence up` killed with SIGKILL leaves its parts running (each in its own session, so they are not
lost with a terminal). The record `up` keeps lets `ps` and `logs` show them, the next `up` refuses to
start over them with what to do, and `down` stops them, and a running `up` with its parts, from another
terminal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from embedded.processes import free_port, port_in_use
from embedded.stack_state import StackState
from tests.scripted_llm import ScriptedLLM

pytestmark = pytest.mark.slow
READY = "serving;"


def cli(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli", *argv], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


class Up:
    """`tg-confidence up` in the background, with every embedded server on free ports and the LLM scripted."""

    def __init__(self, data_dir: Path, llm_url: str) -> None:
        self.data_dir = data_dir
        self.ports = {name: free_port() for name in ("temporal-port", "ui-port", "pulsar-port", "falkordb-port")}
        argv = [sys.executable, "-m", "cli", "up", "--data-dir", str(data_dir), "--llm-base-url", llm_url,
                "--llm-model", "scripted", "--http-port", "0", "-P", str(free_port()),
                *(arg for name, port in self.ports.items() for arg in (f"--{name}", str(port)))]
        self.argv = argv
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, text=True)
        self.output: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)

    def wait_ready(self, timeout_s: float = 180) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self.process.poll() is None:
            if any(READY in line for line in self.output):
                return
            time.sleep(0.5)
        raise AssertionError("up did not get ready:\n" + "".join(self.output))


@contextmanager
def started_up(data_dir: Path) -> Iterator[tuple[Up, str]]:
    """A ready `up` and the scripted LLM's URL; whatever is left of it stopped on the way out."""
    with ScriptedLLM(lambda body: (200, "noted")) as llm:
        up = Up(data_dir, llm.base_url)
        try:
            up.wait_ready()
            yield up, llm.base_url
        finally:
            if up.process.poll() is None:
                up.process.kill()
            cli("down", "--data-dir", str(data_dir))


def part_pids(data_dir: Path) -> dict[str, int]:
    record = StackState(data_dir).read()
    assert record is not None
    return {part.key: part.process.pid for part in record.running_parts()}


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"


def test_leftovers_of_a_killed_up_are_shown_refused_and_stopped(tmp_path: Path) -> None:
    with started_up(tmp_path) as (first, llm_url):
        pids = part_pids(tmp_path)
        assert set(pids) == {"temporal", "pulsar", "falkordb", "worker", "bridge"}

        shown = cli("ps", "--data-dir", str(tmp_path))
        assert shown.returncode == 0 and f"pid {first.process.pid}, running" in shown.stdout
        assert all(f"{key:<10} {pid:>8}  running" in shown.stdout for key, pid in pids.items())
        logged = cli("logs", "worker", "-n", "3", "--data-dir", str(tmp_path))
        assert logged.returncode == 0 and logged.stdout.strip()

        # A second `up` on the same data dir while the first runs: refused, nothing started.
        again = cli("up", "--data-dir", str(tmp_path), "--llm-base-url", llm_url, "--http-port", "0")
        assert again.returncode == 2 and "already running" in again.stderr and "tg-confidence down" in again.stderr

        first.process.kill()  # SIGKILL: no chance to stop its parts
        first.process.wait(10)
        time.sleep(1)
        assert not any(gone(pid) for pid in pids.values())  # left running, as the issue found
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
