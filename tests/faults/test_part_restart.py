"""A part of the embedded stack that dies is restarted (with backoff, its death named with its log), and the
supervisor gives up, saying which part and why, only when it keeps dying. Real child processes, real kills:
small stand-in servers first, then the whole embedded stack (the LLM scripted) answering after its parts die."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from cli.ask import ask
from contracts.topics import agent_request_topic, agent_response_topic
from contracts.wire import AgentRequest, AgentResponse
from embedded.processes import ManagedProcess, free_port
from embedded.stack import EmbeddedStack, StackOptions
from embedded.supervisor import RestartPolicy, Supervisor
from service.run_recovery import RunLookup
from tests.scripted_llm import ScriptedLLM, is_planning, is_synthesis

# A TCP server that greets each connection with its pid. With "fork" it first forks a child that inherits
# the listening socket and lingers, as redis' background save does: killing the server alone leaves the
# port taken, and the restart has to deal with that.
GREETER = r"""
import os, socket, sys, time
port = int(sys.argv[1])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen()
if "fork" in sys.argv and os.fork() == 0:
    time.sleep(600)
    os._exit(0)
print(f"greeter serving on {port} as pid {os.getpid()}", flush=True)
while True:
    conn, _ = s.accept()
    conn.sendall(f"hello from {os.getpid()}\n".encode())
    conn.close()
"""

FAST = RestartPolicy(
    first_backoff_s=0.2, max_backoff_s=2.0, max_restarts=3, window_s=60.0, poll_s=0.05, port_wait_s=10.0
)


async def greeting(port: int) -> str | None:
    """The greeter's answer: a connection the kernel accepts on a socket nobody serves does not count."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 1.0)
    except (OSError, TimeoutError):
        return None
    try:
        return (await asyncio.wait_for(reader.readline(), 1.0)).decode().strip() or None
    except (OSError, TimeoutError):
        return None
    finally:
        writer.close()


def greeter(tmp_path: Path, *flags: str) -> ManagedProcess:
    port = free_port()

    async def ready(part: ManagedProcess) -> bool:
        return await greeting(port) == f"hello from {part.pid}"

    return ManagedProcess(
        "greeter",
        [sys.executable, "-c", GREETER, str(port), *flags],
        tmp_path / "greeter.log",
        ports={"tcp": port},
        ready=ready,
        ready_timeout_s=20,
    )


async def never_ready(_: ManagedProcess) -> bool:
    return False  # like a server's check: a part that exits at once never passes it


def alive(pid: int) -> bool:
    """Running: a killed orphan is a zombie until init reaps it, which counts as gone."""
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


def children_of(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


async def until(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


class Supervised:
    """A supervisor running in the background over `parts`, collecting what it says."""

    def __init__(self, parts: list[ManagedProcess], policy: RestartPolicy = FAST) -> None:
        self.parts = parts
        self.said: list[str] = []
        self.stop = asyncio.Event()
        self.supervisor = Supervisor(parts, self.said.append, policy)

    async def __aenter__(self) -> Supervised:
        self.task = asyncio.create_task(self.supervisor.run(self.stop))
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(self.task), 10)
        finally:
            for part in self.parts:
                part.stop()


async def started(part: ManagedProcess) -> ManagedProcess:
    part.start()
    await part.wait_ready(part.ready_timeout_s)
    return part


async def test_a_part_killed_with_sigkill_is_restarted_and_named_with_its_log(tmp_path: Path) -> None:
    part = await started(greeter(tmp_path, "fork"))
    port, first_pid = part.ports["tcp"], part.pid
    assert first_pid is not None
    (lingering,) = children_of(first_pid)
    async with Supervised([part]) as s:
        os.kill(first_pid, signal.SIGKILL)
        await until(lambda: s.supervisor.restarts["greeter"] == 1, 30, "the restart")
        assert part.pid != first_pid and await greeting(port) == f"hello from {part.pid}"
        # The child it left holding the port went with it: the new server owns the port.
        await until(lambda: not alive(lingering), 5, "the lingering child to go")

        died, back = s.said
        headline, *tail = died.splitlines()
        assert headline == f"greeter was killed by SIGKILL; restarting it in 0.2 s; last log lines ({part.log_path}):"
        assert f"    greeter serving on {port} as pid {first_pid}" in tail
        assert back == f"greeter is running again (pid {part.pid})"
    assert s.task.result() == 0  # stopped, not given up


async def test_a_part_that_keeps_crashing_is_given_up_with_the_part_and_the_reason(tmp_path: Path) -> None:
    crasher = ManagedProcess(
        "crasher",
        [sys.executable, "-c", "print('bad setting: no such table'); exit(3)"],
        tmp_path / "crasher.log",
        ready=never_ready,
        ready_timeout_s=5,
    )
    crasher.start()
    said: list[str] = []
    started_at = time.monotonic()
    status = await asyncio.wait_for(Supervisor([crasher], said.append, FAST).run(asyncio.Event()), 30)
    assert status == 1
    # Backoff doubles: 0.2 s, 0.4 s, 0.8 s; then, past 3 restarts within the window, it gives up.
    assert [re.search(r"restarting it in ([\d.]+) s", line)[1] for line in said[:-1]] == ["0.2", "0.4", "0.8"]
    assert said[0].startswith("crasher exited with code 3; restarting")
    assert said[1].startswith("crasher exited with code 3 while restarting; restarting it in 0.4 s")
    assert time.monotonic() - started_at >= 1.4
    gave_up = said[-1]
    assert gave_up.startswith(
        "giving up on crasher: it exited with code 3 while restarting after 3 restarts within 60 s; last log lines"
    )
    assert "bad setting: no such table" in gave_up
    assert crasher.log_path.read_text().count("bad setting") == 4  # started once, restarted three times


async def test_restarts_spread_beyond_the_window_never_give_up_and_start_again_at_the_first_backoff(
    tmp_path: Path,
) -> None:
    part = await started(greeter(tmp_path))
    policy = RestartPolicy(first_backoff_s=0.2, max_restarts=2, window_s=1.0, poll_s=0.05)
    async with Supervised([part], policy) as s:
        for restarts in range(1, 5):  # twice the limit, each one more than a window after the last
            assert part.pid is not None
            os.kill(part.pid, signal.SIGKILL)
            await until(lambda n=restarts: s.supervisor.restarts["greeter"] == n, 30, f"restart {restarts}")
            await asyncio.sleep(1.1)
        assert not s.task.done()
        assert [line.split("; ")[1] for line in s.said if "SIGKILL" in line] == ["restarting it in 0.2 s"] * 4


async def test_one_part_restarting_does_not_disturb_the_others(tmp_path: Path) -> None:
    steady = await started(greeter(tmp_path / "steady"))
    crashing = ManagedProcess("crasher", [sys.executable, "-c", "exit(1)"], tmp_path / "crasher.log", ready=never_ready)
    crashing.start()
    steady_pid = steady.pid
    status = await asyncio.wait_for(Supervisor([steady, crashing], [].append, FAST).run(asyncio.Event()), 30)
    try:
        assert status == 1
        assert steady.pid == steady_pid and await greeting(steady.ports["tcp"]) == f"hello from {steady_pid}"
    finally:
        steady.stop()


async def test_a_readiness_check_that_errors_while_a_dependency_is_down_only_delays_the_restart(tmp_path: Path) -> None:
    part = await started(greeter(tmp_path))
    port, errors = part.ports["tcp"], [3]

    async def ready_after_errors(p: ManagedProcess) -> bool:
        if errors[0]:  # as the worker's check (a Temporal RPC) while Temporal itself is restarting
            errors[0] -= 1
            raise ConnectionRefusedError("Temporal at 127.0.0.1:7233 is unreachable")
        return await greeting(port) == f"hello from {p.pid}"

    part.ready = ready_after_errors
    async with Supervised([part]) as s:
        assert part.pid is not None
        os.kill(part.pid, signal.SIGKILL)
        await until(lambda: s.supervisor.restarts["greeter"] == 1, 30, "the restart")
        assert errors == [0] and not s.task.done()


async def test_after_stop_a_part_that_dies_stays_down(tmp_path: Path) -> None:
    part = await started(greeter(tmp_path))
    async with Supervised([part]) as s:
        s.stop.set()
        assert await asyncio.wait_for(s.task, 5) == 0
        pid = part.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)  # as when `up` stops the stack after Ctrl-C: nothing may bring it back
        await asyncio.sleep(0.5)
        assert part.pid == pid and not part.alive() and s.said == []


KNOWN = "MATCH (s:Supplier) WHERE s.name = 'Acme Industrial' RETURN s.name AS name, s.country AS country"
ANSWER = "Acme Industrial is based in the country the graph names."


def respond(body: dict[str, Any]) -> tuple[int, str]:
    if is_planning(body):
        return 200, json.dumps(
            {"steps": [{"id": "s1", "function": "GraphQuery", "arguments": {"query": KNOWN}, "dependencies": []}]}
        )
    if is_synthesis(body):
        return 200, ANSWER
    return 200, "noted"


@dataclass
class SupervisedStack:
    stack: EmbeddedStack
    llm: ScriptedLLM
    said: list[str]

    def part(self, name: str) -> ManagedProcess:
        return next(c for c in self.stack.children if c.name == name)

    def came_back(self, name: str) -> int:
        return sum(line.startswith(f"{name} is running again") for line in self.said)

    async def ask(self, question: str, timeout_s: float = 90) -> list[AgentResponse]:
        return [
            m
            async for m in ask(
                self.stack.pulsar_url,
                AgentRequest(question=question),
                timeout_s=timeout_s,
                request_topic=agent_request_topic(),
                response_topic=agent_response_topic(),
                runs=RunLookup(address=self.stack.temporal_address),
            )
        ]


@pytest_asyncio.fixture(scope="module")
async def supervised(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SupervisedStack]:
    """`tg-confidence up` with the LLM scripted: every server embedded, the worker and bridge, supervised."""
    said: list[str] = []
    with ScriptedLLM(respond) as llm:
        options = StackOptions(
            data_dir=tmp_path_factory.mktemp("supervised"),
            temporal_port=free_port(),
            ui_port=free_port(),
            pulsar_port=free_port(),
            falkordb_port=free_port(),
            llm_base_url=llm.base_url,
            llm_model="scripted",
            metrics_port=free_port(),
            http_port=free_port(),
            # A planning call lost with its worker is retried once this passes (the default is 2 minutes).
            # The scripted plans are the ones to run, not code's programs.
            extra_env={"TGCA_AGENT__PLANNING_TIMEOUT_MS": "5000", "TGCA_GRAPH_PROGRAMS": "false"},
        )
        stack = EmbeddedStack(options, say=said.append)
        await stack.start()
        stop = asyncio.Event()
        supervising = asyncio.create_task(stack.supervise(stop, said.append))
        try:
            yield SupervisedStack(stack, llm, said)
        finally:
            stop.set()
            status = await asyncio.wait_for(supervising, 10)
            stack.stop()
        assert status == 0, said


PARTS = [
    "Worker (tg-confidence-agent)",
    "Bridge (tg-confidence-bridge)",
    "FalkorDB",
    "Pulsar broker (pulsar-lite)",
    "Temporal dev server",
]


@pytest.mark.slow
async def test_every_part_of_the_embedded_stack_killed_in_turn_comes_back_and_then_a_question_is_answered(
    supervised: SupervisedStack,
) -> None:
    for name in PARTS:
        part, before = supervised.part(name), supervised.came_back(name)
        assert part.pid is not None
        os.kill(part.pid, signal.SIGKILL)
        await until(lambda n=name, b=before: supervised.came_back(n) > b, 90, f"{name} to come back")
    died = [line.splitlines()[0] for line in supervised.said if "SIGKILL" in line]
    assert [line.split(" was killed")[0] for line in died] == PARTS  # no part took another down with it
    assert all(
        line.endswith(f"restarting it in 1 s; last log lines ({supervised.part(n).log_path}):")
        for line, n in zip(died, PARTS, strict=True)
    )

    # Two at once, one needing the other: the worker's readiness check asks Temporal, which is down too.
    both = ["Temporal dev server", "Worker (tg-confidence-agent)"]
    before = {name: supervised.came_back(name) for name in both}
    for part in map(supervised.part, both):
        assert part.pid is not None
        os.kill(part.pid, signal.SIGKILL)
    await until(lambda: all(supervised.came_back(n) > before[n] for n in both), 120, "both to come back")

    messages = await supervised.ask("Where is Acme Industrial based?")
    answer = messages[-1]
    assert answer.message_type == "answer", [m.content for m in messages]
    assert ANSWER in answer.content
    # Confidence 0.90: the query returned the supplier, so the restarted FalkorDB kept the demo graph.
    assert re.search(r"Confidence: \d\.\d\d - calibrated: ", answer.content), answer.content


@pytest.mark.slow
async def test_a_run_in_flight_when_its_worker_is_killed_finishes_on_the_restarted_worker(
    supervised: SupervisedStack,
) -> None:
    planning = threading.Event()
    release = threading.Event()
    plans: list[int] = []

    def first_plan_hangs(body: dict[str, Any]) -> tuple[int, str]:
        if is_planning(body):
            plans.append(1)
            planning.set()
            if len(plans) == 1:
                release.wait(60)  # the worker that asked is killed meanwhile: nobody reads this answer
        return respond(body)

    supervised.llm.responder = first_plan_hangs
    worker = supervised.part("Worker (tg-confidence-agent)")
    before = supervised.came_back(worker.name)
    try:
        asking = asyncio.create_task(supervised.ask("Where is Acme Industrial based?", timeout_s=120))
        assert await asyncio.to_thread(planning.wait, 60), "no planning call"
        assert worker.pid is not None
        os.kill(worker.pid, signal.SIGKILL)
        await until(lambda: supervised.came_back(worker.name) > before, 90, "the worker to come back")
        messages = await asyncio.wait_for(asking, 120)
    finally:
        release.set()
        supervised.llm.responder = respond
    assert messages[-1].message_type == "answer" and ANSWER in messages[-1].content, [m.content for m in messages]
    assert len(plans) == 2  # Temporal retried the planning activity, on the new worker
