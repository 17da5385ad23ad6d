"""The running stack's record on disk (DATA_DIR/stack.json): which `tg-confidence up` owns it, and each
part's pid, start time, ports and log. With it `tg-confidence down`, `ps` and `logs` work from another
terminal, and the next `up` finds the parts that an `up` killed with SIGKILL left running.

A pid alone is no identity (the kernel reuses pids): each process is recorded with its start time from
/proc, and only a process with the same pid *and* start time counts as the stack's."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

STATE_FILE = "stack.json"


def _stat(pid: int) -> list[str]:
    """/proc/<pid>/stat from field 3 (state) on; empty when the process is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return []
    # The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
    return stat[stat.rfind(")") + 2 :].split()


def _start_of(fields: list[str]) -> int | None:
    try:
        return int(fields[19])  # field 22: start time, clock ticks since boot
    except (IndexError, ValueError):
        return None


def process_start(pid: int) -> int | None:
    """The process's start time (clock ticks since boot), or None when it is gone."""
    return _start_of(_stat(pid))


@dataclass(frozen=True)
class ProcessRecord:
    pid: int
    started: int | None  # process_start(pid) when recorded

    def alive(self) -> bool:
        """The very process that was recorded is still running (not just some process with its pid)."""
        fields = _stat(self.pid)
        return self.started is not None and _start_of(fields) == self.started and fields[0] != "Z"

    @classmethod
    def of(cls, pid: int) -> ProcessRecord:
        return cls(pid, process_start(pid))


@dataclass(frozen=True)
class PartRecord:
    key: str  # the short name `tg-confidence logs` takes: temporal, pulsar, falkordb, llm, worker, bridge, chat
    name: str
    process: ProcessRecord
    ports: dict[str, int]
    log: str

    @classmethod
    def from_json(cls, data: Any) -> PartRecord:
        return cls(
            key=data["key"],
            name=data["name"],
            process=ProcessRecord(**data["process"]),
            ports={k: int(v) for k, v in data["ports"].items()},
            log=data["log"],
        )


@dataclass(frozen=True)
class StackRecord:
    owner: ProcessRecord  # the `tg-confidence up` process
    parts: list[PartRecord] = field(default_factory=list)
    guard: ProcessRecord | None = None  # the process that stops the parts if `up` dies (embedded/part_guard.py)

    def running_parts(self) -> list[PartRecord]:
        return [part for part in self.parts if part.process.alive()]

    def part(self, key: str) -> PartRecord | None:
        return next((p for p in self.parts if p.key == key), None)


class StateError(ValueError):
    """The state file exists but cannot be read as one (said with its path)."""


class StackState:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / STATE_FILE

    def write(self, record: StackRecord) -> None:
        """Atomically: a reader never sees half a file, even if `up` is killed mid-write."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(asdict(record), indent=2) + "\n"
        fd, tmp = tempfile.mkstemp(prefix=".stack-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def read(self) -> StackRecord | None:
        """The recorded stack, or None when there is none."""
        try:
            data: Any = json.loads(self.path.read_text(encoding="utf-8"))
            guard = data.get("guard")  # absent in a record an older `up` wrote
            return StackRecord(
                owner=ProcessRecord(**data["owner"]),
                parts=[PartRecord.from_json(p) for p in data["parts"]],
                guard=ProcessRecord(**guard) if guard else None,
            )
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise StateError(f"{self.path} is not a stack record ({exc}); remove it if no stack runs") from None

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)

    def clear_if_owner(self, pid: int) -> None:
        """Remove the record only if `pid` owns it: another `up` may have taken the data dir over since."""
        try:
            record = self.read()
        except StateError:
            return
        if record is not None and record.owner.pid == pid:
            self.clear()
