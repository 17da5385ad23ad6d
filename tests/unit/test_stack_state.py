"""The stack record `up` keeps: a process counts as the stack's only with the pid *and* start time recorded
(the kernel reuses pids), and a damaged record is said with its path, never guessed at."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from embedded.stack_state import PartRecord, ProcessRecord, StackRecord, StackState, StateError, process_start

pytestmark = pytest.mark.unit


def test_this_process_is_alive_and_a_reused_pid_is_not() -> None:
    me = ProcessRecord.of(os.getpid())
    assert me.alive()
    assert not ProcessRecord(os.getpid(), (process_start(os.getpid()) or 0) + 1).alive()  # same pid, another start
    assert not ProcessRecord(os.getpid(), None).alive()


def test_the_record_round_trips_and_a_damaged_one_names_its_file(tmp_path: Path) -> None:
    state = StackState(tmp_path)
    assert state.read() is None
    record = StackRecord(
        owner=ProcessRecord.of(os.getpid()),
        parts=[
            PartRecord(
                key="worker",
                name="Worker",
                process=ProcessRecord.of(os.getpid()),
                ports={"metrics": 8000},
                log=str(tmp_path / "worker.log"),
            )
        ],
        guard=ProcessRecord(1, 2),
    )
    state.write(record)
    assert state.read() == record and record.part("worker") is not None and record.running_parts()
    # a record an `up` without a part guard wrote still reads
    state.path.write_text('{"owner": {"pid": 1, "started": 2}, "parts": []}')
    assert state.read() == StackRecord(owner=ProcessRecord(1, 2))
    for damaged in (
        '{"owner": {"pid": 1}',
        '{"owner": {"pid": 1, "started": 2}, "parts": [{"key": "worker", '
        '"name": "W", "process": {"pid": 3, "started": 4}, "ports": [], "log": "w.log"}]}',
    ):
        state.path.write_text(damaged)
        with pytest.raises(StateError, match=str(state.path)):
            state.read()
    state.clear()
    assert state.read() is None
