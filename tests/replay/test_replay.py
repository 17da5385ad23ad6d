"""Replay: every committed history of a real run must replay on the current workflow code, or a deployment
would break the runs in flight. tests/histories/*.json are the current code's (tests/record_histories.py);
tests/histories/<release>/ keep each release's, never recorded again (docs/decisions.md, "Patching workflow
code")."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from workflows.replay import load_history, replay

HERE = Path(__file__).resolve().parent.parent / "histories"
HISTORIES = sorted(HERE.rglob("*.json"))  # the current code's, then every kept release's


def test_every_scenario_has_a_history_of_the_current_code() -> None:
    assert {p.stem for p in HERE.glob("*.json")} >= {
        "query",
        "parallel",
        "retry_ladder",
        "repair",
        "override_accept",
        "override_timeout",
        "flow",
        "streamed",
        "conversation",
        "conversation_turn",
        "batch",
        "batch_window",
        "batch_groups",
        "batch_window_groups",
        "action_parameters",
        "explained",
    }


def test_a_history_keeps_its_trace_while_it_waits_and_once_its_messages_are_out() -> None:
    """`explained` replays `store_explain`: what the run explained before it waits for a human, and the rest once
    its last message went out (workflows/explain_store.py)."""
    events = json.loads((HERE / "explained.json").read_text())["events"]
    scheduled = [
        e["activityTaskScheduledEventAttributes"]["activityType"]["name"]
        for e in events
        if "activityTaskScheduledEventAttributes" in e
    ]
    assert scheduled.count("store_explain") == 2 and scheduled[-1] == "record_run"
    assert scheduled[-2] == "store_explain"


@pytest.mark.parametrize("path", HISTORIES, ids=[str(p.relative_to(HERE).with_suffix("")) for p in HISTORIES])
async def test_committed_history_replays_on_the_current_code(path: Path) -> None:
    [outcome] = await replay([load_history(path)])
    assert outcome.ok, outcome.error


QUERY = HERE / "query.json"


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
        subprocess.run,
        [sys.executable, "-m", "cli", "replay", "--file", str(QUERY), "--file", str(changed)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    lines = [line for line in result.stdout.splitlines() if line.startswith(("ok", "NONDETERMINISM"))]
    assert lines[0].startswith("ok") and lines[1].startswith("NONDETERMINISM") and "plan" in lines[1]
    assert "1 of 2 histories do not replay" in result.stderr and "workflow.patched" in result.stderr
