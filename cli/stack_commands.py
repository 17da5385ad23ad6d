"""`tg-confidence down`, `ps` and `logs`: the embedded stack that `up` runs, seen and stopped from another
terminal, through the record `up` keeps in its data dir (embedded/stack_state.py)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from pathlib import Path

from cli.errors import FAILED, UNREACHABLE_OR_BAD_INPUT, error
from cli.log_lines import LogLines
from embedded.processes import tree_rss_bytes
from embedded.stack import default_data_dir
from embedded.stack_control import stop_stack
from embedded.stack_state import StackRecord, StackState, StateError

FOLLOW_POLL_S = 0.5


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    data_dir = argparse.ArgumentParser(add_help=False)
    data_dir.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="the stack's data dir (default: env TGCA_DATA_DIR, else ~/.tg-confidence)",
    )
    sub.add_parser("down", parents=[common, data_dir], help="stop the stack `up` runs (or what a killed `up` left)")
    sub.add_parser("ps", parents=[common, data_dir], help="list the stack's parts: pid, state, ports, memory, log")
    logs = sub.add_parser(
        "logs",
        parents=[common, data_dir],
        help="print a part's log (the services' JSON lines as readable lines at a terminal; "
        "--log-format json keeps them as written)",
    )
    logs.add_argument("part", help="temporal, pulsar, falkordb, llm, worker, bridge or chat")
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing what the part writes (Ctrl-C ends)")
    logs.add_argument("-n", "--lines", type=int, default=50, help="how many of the last lines to print first")


def _state(args: argparse.Namespace) -> StackState:
    return StackState(args.data_dir or default_data_dir())


def _read(state: StackState) -> StackRecord | None:
    try:
        return state.read()
    except StateError as exc:
        raise SystemExit(error(str(exc), UNREACHABLE_OR_BAD_INPUT)) from None


async def down(args: argparse.Namespace) -> int:
    state = _state(args)
    _read(state)  # a corrupt record is said plainly before anything is signalled
    if not await asyncio.to_thread(stop_stack, state, lambda text: print(text, flush=True)):
        print(f"no stack is running from {state.path.parent}")
        return 0
    print("stopped")
    return 0


def _megabytes(pid: int) -> str:
    return f"{tree_rss_bytes(pid) / 2**20:.0f} MB"


async def ps(args: argparse.Namespace) -> int:
    state = _state(args)
    record = _read(state)
    if record is None:
        print(f"no stack is recorded in {state.path.parent}")
        return FAILED
    owner = "running" if record.owner.alive() else "gone (parts it left are listed as running)"
    print(f"tg-confidence up: pid {record.owner.pid}, {owner}")
    if record.guard is not None:  # it stops the parts should `up` be killed (embedded/part_guard.py)
        print(f"part guard: pid {record.guard.pid}, {'running' if record.guard.alive() else 'gone'}")
    print(f"{'PART':<10} {'PID':>8}  {'STATE':<8} {'MEMORY':>8}  {'PORTS':<28} LOG")
    for part in record.parts:
        alive = part.process.alive()
        ports = ", ".join(f"{role} {port}" for role, port in part.ports.items()) or "-"
        memory = _megabytes(part.process.pid) if alive else "-"
        print(
            f"{part.key:<10} {part.process.pid:>8}  {'running' if alive else 'stopped':<8} {memory:>8}  "
            f"{ports:<28} {part.log}"
        )
    return 0 if record.running_parts() else FAILED


def tail(path: Path, lines: int) -> tuple[str, int]:
    """The last `lines` lines of the file and the offset its end had (only the file's end is read: a
    part's log may be large)."""
    with open(path, "rb") as f:
        size = f.seek(0, 2)
        f.seek(max(0, size - max(65536, lines * 1000)))
        data = f.read()
    text = data.decode(errors="replace")
    kept = text.splitlines()[-lines:] if lines > 0 else []
    return "\n".join(kept), size


def read_from(path: Path, offset: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read()


async def logs(args: argparse.Namespace) -> int:
    state = _state(args)
    record = _read(state)
    keys = [p.key for p in record.parts] if record else []
    part = record.part(args.part) if record else None
    # Without a record (the stack is down) the log is still where every part writes it.
    path = Path(part.log) if part else state.path.parent / f"{args.part}.log"
    if not path.is_file():
        known = ", ".join(keys) or "temporal, pulsar, falkordb, llm, worker, bridge, chat"
        return error(f"no log for '{args.part}' in {state.path.parent} (parts: {known})", UNREACHABLE_OR_BAD_INPUT)
    lines = LogLines(args.log_format or "auto")  # readable at a terminal, as written anywhere else
    text, offset = tail(path, args.lines)
    if text:
        print(lines.feed(text + "\n"), end="", flush=True)
    if not args.follow:
        return 0
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):  # Ctrl-C ends following, without a traceback
        loop.add_signal_handler(sig, stop.set)
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), FOLLOW_POLL_S)
        try:
            size = path.stat().st_size
        except FileNotFoundError:  # rotated away: wait for the part to write it again
            offset = 0
            continue
        if size < offset:  # truncated or replaced: start from its beginning
            offset = 0
        if size > offset:
            chunk = read_from(path, offset)
            offset += len(chunk)
            print(lines.feed(chunk.decode(errors="replace")), end="", flush=True)
    return 0
