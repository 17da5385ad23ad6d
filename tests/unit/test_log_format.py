"""Services log for whoever reads them: aligned, readable lines at a terminal, JSON lines everywhere else
(files, containers, log shippers), and whichever the configuration asks for."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = (
    "import sys, structlog; from service.lifecycle import configure_logging; "
    "configure_logging('INFO', sys.argv[1]); "
    "structlog.get_logger('t').info('run_started', workflow_id='wf-1', api_key='sk-secret')"
)


def output(argv: list[str], *, terminal: bool, env: dict[str, str] | None = None, stream: str = "stderr") -> str:
    """What the process wrote to `stream`, that stream being a pseudo-terminal or a pipe."""
    full_env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | {"TERM": "xterm"} | (env or {})
    if not terminal:
        done = subprocess.run(argv, cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=60)
        return done.stderr if stream == "stderr" else done.stdout
    leader, follower = pty.openpty()
    with subprocess.Popen(
        argv,
        cwd=ROOT,
        env=full_env,
        stdin=subprocess.DEVNULL,
        **{stream: follower, "stdout" if stream == "stderr" else "stderr": subprocess.DEVNULL},
    ) as process:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode()


def logged(fmt: str, *, terminal: bool, env: dict[str, str] | None = None) -> str:
    return output([sys.executable, "-c", SCRIPT, fmt], terminal=terminal, env=env)


def plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def test_a_pipe_gets_json_lines() -> None:
    line = json.loads(logged("auto", terminal=False).strip())
    assert line["event"] == "run_started" and line["workflow_id"] == "wf-1" and line["level"] == "info"
    assert line["api_key"] == "[REDACTED]"


def test_a_terminal_gets_readable_lines_with_colour() -> None:
    text = logged("auto", terminal=True)
    assert "\x1b[" in text and not text.lstrip().startswith("{")
    assert "run_started" in plain(text) and "workflow_id=wf-1" in plain(text)
    assert "sk-secret" not in plain(text) and "api_key=[REDACTED]" in plain(text)


def test_no_color_keeps_the_readable_lines_plain() -> None:
    text = logged("auto", terminal=True, env={"NO_COLOR": "1"})
    assert "run_started" in text and "workflow_id=wf-1" in text and "\x1b[" not in text


@pytest.mark.parametrize(("fmt", "terminal"), [("json", True), ("console", False)])
def test_the_configured_format_wins_over_the_guess(fmt: str, terminal: bool) -> None:
    text = logged(fmt, terminal=terminal).strip()
    if fmt == "json":
        assert json.loads(text)["event"] == "run_started"
    else:
        assert text.startswith("20") and "run_started" in text and "workflow_id=wf-1" in text


WORKER_LOG = (
    '{"event": "worker_ready", "level": "info", "timestamp": "2026-11-22T10:00:00Z", "families": ["audit"]}\n'
    "a line the part printed itself\n"
    '{"event": "audit_queued", "level": "warning", "timestamp": "2026-11-22T10:00:01Z", "backlog": 2}\n'
)


def test_logs_renders_a_service_log_at_a_terminal_and_prints_it_as_written_in_a_pipe(tmp_path: Path) -> None:
    (tmp_path / "worker.log").write_text(WORKER_LOG)
    argv = [sys.executable, "-m", "cli", "logs", "worker", "--data-dir", str(tmp_path)]
    shown = plain(output(argv, terminal=True, stream="stdout")).replace("\r\n", "\n")
    assert "worker_ready" in shown and "families=['audit']" in shown and "backlog=2" in shown
    assert "a line the part printed itself" in shown and '{"event"' not in shown
    assert "[warning" in shown
    assert output(argv, terminal=False, stream="stdout") == WORKER_LOG
    kept = output([*argv, "--log-format", "json"], terminal=True, stream="stdout").replace("\r\n", "\n")
    assert kept == WORKER_LOG
