"""Replay: every committed history of a real run (tests/histories, recorded by tests/record_histories.py)
must replay on the current workflow code, or a deployment would break the runs in flight."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from workflows.replay import load_history, replay

HISTORIES = sorted((Path(__file__).resolve().parent.parent / "histories").glob("*.json"))


def test_every_scenario_has_a_committed_history() -> None:
    assert {p.stem for p in HISTORIES} >= {"query", "retry_ladder", "override_accept", "override_timeout", "parallel",
                                          "batch", "batch_window", "conversation", "conversation_turn",
                                          "action_parameters", "worker_publish", "batch_worker_publish",
                                          "batch_window_worker_publish", "shared_queue", "flow", "streamed",
                                          "batch_parent_checked", "batch_window_parent_checked"}


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
async def test_committed_history_replays_on_the_current_code(path: Path) -> None:
    [outcome] = await replay([load_history(path)])
    assert outcome.ok, outcome.error


QUERY = Path(__file__).resolve().parent.parent / "histories" / "query.json"


async def test_replay_command_reports_nondeterminism_clearly(tmp_path: Path) -> None:
    history = json.loads(QUERY.read_text())
    for event in history["events"]:
        scheduled = event.get("activityTaskScheduledEventAttributes")
        if scheduled and scheduled["activityType"]["name"] == "plan":
            scheduled["activityType"]["name"] = "plan_v0"  # what an older version of the code would have done
            break
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(history))
    result = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "cli", "replay", "--file", str(QUERY), "--file", str(changed)],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    lines = [line for line in result.stdout.splitlines() if line.startswith(("ok", "NONDETERMINISM"))]
    assert lines[0].startswith("ok") and lines[1].startswith("NONDETERMINISM") and "plan" in lines[1]
    assert "1 of 2 histories do not replay" in result.stderr and "workflow.patched" in result.stderr
