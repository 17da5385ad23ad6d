"""`tg-confidence up` and its sibling commands run as a user runs them, in a process of their own, with every
embedded server on free ports and the LLM scripted (tests/scripted_llm.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from embedded.processes import free_port
from embedded.stack_state import StackState
from tests.scripted_llm import ScriptedLLM

READY = "serving;"


def cli(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli", *argv], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


class Up:
    """`tg-confidence up` in the background, its output collected. `extra`: more flags (the chat is off
    unless they give it a port)."""

    def __init__(self, data_dir: Path, llm_url: str, extra: Sequence[str] = (), argv: list[str] | None = None) -> None:
        self.data_dir = data_dir
        self.ports = {name: free_port() for name in ("temporal-port", "ui-port", "pulsar-port", "falkordb-port")}
        self.argv = argv or [
            sys.executable,
            "-m",
            "cli",
            "up",
            "--data-dir",
            str(data_dir),
            "--llm-base-url",
            llm_url,
            "--llm-model",
            "scripted",
            "--http-port",
            "0",
            "-P",
            str(free_port()),
            *(arg for name, port in self.ports.items() for arg in (f"--{name}", str(port))),
            *extra,
        ]
        # The scripted LLM's plans are the ones to run, not code's programs.
        env = {**os.environ, "TGCA_GRAPH_PROGRAMS": "false"}
        self.process = subprocess.Popen(
            self.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True, env=env
        )
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
