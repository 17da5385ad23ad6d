"""Asking the real agent: the embedded stack started the way `tg-confidence up` starts it (real local
model, free ports, a temporary data dir, the dataset's own graph), then every question over Pulsar with
the project's own client, one at a time. A question that fails or times out is recorded with its error
and the run goes on; Ctrl-C ends the run after what finished was written."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from bench.graphs import registry as public_graphs
from bench.kgqa import countries_data
from bench.kgqa.questions import Question
from bench.kgqa.results import Result, write
from cli.ask import AskTimeout, Delivery, ask
from contracts.names import workflow_id_for
from contracts.run import AgentRunResult
from contracts.topics import agent_request_topic, agent_response_topic
from contracts.wire import AgentRequest
from embedded.model_weights import ModelIntegrityError, ModelNotFound
from embedded.processes import PartStartError, free_port
from embedded.stack import EmbeddedStack, StackOptions
from service.connections import PartUnreachable, connect_temporal
from service.run_recovery import RunLookup

# Request-level settings: a run that asks a human for an override gives up after 10 s (nobody answers here).
PLAN = '{"override_timeout_s": 10}'
# ... and the service's own default the same, for clients that cannot send a plan (TrustGraph's AgentRequest
# has no such field).
SERVICE_ENV = {"TGCA_AGENT__OVERRIDE_TIMEOUT_S": "10"}
HUMAN_ASKED = ("Override needed", "Approval needed")
GRAPHS = {"procurement": "procurement", "countries": countries_data.GRAPH_NAME}


def graph_name(dataset: str) -> str:
    """The graph a dataset's questions are asked of: a public graph (bench/graphs) under its own name."""
    return GRAPHS.get(dataset, dataset)


STACK_ERRORS = (PartStartError, PartUnreachable, ModelNotFound, ModelIntegrityError)  # said plainly, no traceback


@dataclass
class Outcome:
    answer: str
    seconds: float
    asked_human: bool
    error: str | None
    evidence: dict[str, float] | None = None  # the run's evidence features, for calibration
    evidence_score: float | None = None  # its confidence before calibration
    queries: list[str] | None = None  # the plan's queries, to read why an answer went wrong
    messages: list[str] = field(default_factory=list)  # every message's type and text, in order
    # How the answer reached the caller: "arrived" on the response topic, "recovered" from Temporal after the
    # topic dropped part of it, "lost" (the run completed, the answer never came), "slow" (no answer in time).
    delivery: str = "arrived"
    twice: bool = False  # the run's closing answer reached the caller more than once


class Interrupt:
    """Ctrl-C (or SIGTERM) cancels whatever is awaited now and marks the run as stopping."""

    def __init__(self) -> None:
        self.requested = False
        self.task: asyncio.Future[Any] | None = None

    def __call__(self) -> None:
        self.requested = True
        if self.task is not None and not self.task.done():
            self.task.cancel()

    async def run(self, awaitable: Any) -> Any:
        """The awaitable's result; CancelledError when interrupted."""
        self.task = asyncio.ensure_future(awaitable)
        try:
            return await self.task
        finally:
            self.task = None


def stack_options(dataset: str, data_dir: Path) -> StackOptions:
    """Every part embedded, each on a free port; the demo graph and its ontology only for procurement."""
    return StackOptions(
        data_dir=data_dir,
        temporal_port=free_port(),
        ui_port=free_port(),
        pulsar_port=free_port(),
        falkordb_port=free_port(),
        llm_port=free_port(),
        metrics_port=free_port(),
        http_port=0,
        graph_name=graph_name(dataset),
        load_demo_graph=dataset == "procurement",
        log_level="WARNING",
        extra_env=SERVICE_ENV,
    )


@dataclass
class RunningStack:
    stack: EmbeddedStack
    supervision: asyncio.Task[int]  # restarts a part that dies; done when it gave up on one

    @property
    def gave_up(self) -> bool:
        return self.supervision.done()


@asynccontextmanager
async def running_stack(
    dataset: str, interrupt: Interrupt, data_dir: Path | None = None, say: Callable[[str], None] = print
) -> AsyncIterator[RunningStack]:
    """The stack with the dataset's graph loaded, supervised as `tg-confidence up` supervises it (a part
    that dies is restarted); stopped (every child) on the way out."""
    data_dir = data_dir or Path(tempfile.mkdtemp(prefix=f"tgca-kgqa-{dataset}-"))
    stack = EmbeddedStack(stack_options(dataset, data_dir), say=say)
    say(f"starting the embedded stack for '{dataset}' (data and logs in {data_dir}) ...")
    try:
        await interrupt.run(stack.start())
        if dataset in public_graphs.GRAPHS:  # before the first question, so the planner's first schema look sees it
            await interrupt.run(public_graphs.load_graph(dataset, stack.falkordb_url, graph_name(dataset)))
            say(f"loaded the {dataset} graph into '{graph_name(dataset)}'")
        stop = asyncio.Event()
        supervision = asyncio.create_task(stack.supervise(stop, say))
        try:
            yield RunningStack(stack, supervision)
        finally:
            stop.set()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(supervision, 10)
    finally:
        stack.stop()


async def terminate_run(stack: EmbeddedStack, request_id: str, reason: str) -> None:
    """Stop a run we gave up on, so it does not keep the model busy during the next question."""
    with contextlib.suppress(Exception):
        client = await connect_temporal(stack.temporal_address, stack.o.temporal_namespace)
        await client.get_workflow_handle(workflow_id_for(request_id)).terminate(reason=reason)


async def run_result(stack: EmbeddedStack, request_id: str) -> AgentRunResult | None:
    """The finished run's workflow result: its evidence features, evidence-only score and plan."""
    try:
        client = await connect_temporal(stack.temporal_address, stack.o.temporal_namespace)
        handle = client.get_workflow_handle(workflow_id_for(request_id), result_type=AgentRunResult)
        result = await asyncio.wait_for(handle.result(), 30)
    except Exception:  # a run without a result simply has no evidence or plan to record
        return None
    return result


async def ask_one(stack: EmbeddedStack, question: str, timeout_s: float, conversation_id: str = "") -> Outcome:
    """The final answer (its chunks joined), whether a human was asked, and any error; `conversation_id`
    asks it as a turn of that conversation."""
    request_id = str(uuid.uuid4())
    parts: list[str] = []
    messages: list[str] = []
    asked_human = False
    error: str | None = None
    started = time.perf_counter()
    runs = RunLookup(address=stack.temporal_address, namespace=stack.o.temporal_namespace)
    delivery = Delivery()
    delivered_how = "arrived"
    try:
        async for message in ask(
            stack.pulsar_url,
            AgentRequest(question=question, plan=PLAN, conversation_id=conversation_id),
            request_topic=agent_request_topic(),
            response_topic=agent_response_topic(),
            timeout_s=timeout_s,
            request_id=request_id,
            runs=runs,
            delivery=delivery,
        ):
            messages.append(f"{message.message_type}: {message.content}")
            if message.message_type == "observation" and any(k in message.content for k in HUMAN_ASKED):
                asked_human = True
            if message.message_type == "answer":
                parts.append(message.content)
            if message.error is not None:
                error = f"{message.error.type}: {message.error.message}"
    except AskTimeout as exc:
        error = f"timeout: {exc}"
        outcome = await runs.outcome(workflow_id_for(request_id))
        if outcome is not None and outcome.closed:
            delivered_how = "lost"  # the run finished; its answer never reached us, not even from Temporal
        else:
            delivered_how = "slow"
            await terminate_run(stack, request_id, "kgqa benchmark: no answer within the ask timeout")
    except ConnectionError as exc:
        error = f"connection: {exc}"
    except asyncio.CancelledError:
        await terminate_run(stack, request_id, "kgqa benchmark interrupted")
        raise
    seconds = time.perf_counter() - started
    if delivered_how == "arrived" and delivery.answer_recovered:
        delivered_how = "recovered"
    return await outcome_of(stack, request_id, "".join(parts), seconds, asked_human, error, messages, delivered_how)


async def outcome_of(
    stack: EmbeddedStack,
    request_id: str,
    answer: str,
    seconds: float,
    asked_human: bool,
    error: str | None,
    messages: list[str],
    delivered_how: str,
) -> Outcome:
    """What the caller got, with what the run recorded: its evidence and queries, and whether the caller was
    handed the run's closing answer more than once."""
    answer = answer.strip()
    result = await run_result(stack, request_id) if error is None else None
    if result is None:
        return Outcome(answer, seconds, asked_human, error, messages=messages, delivery=delivered_how)
    queries = [str(s.arguments["query"]) for s in (result.plan.steps if result.plan else []) if "query" in s.arguments]
    closing_answer = "".join(m.content for m in result.closing if m.message_type == "answer").strip()
    return Outcome(
        answer,
        seconds,
        asked_human,
        error,
        result.evidence or None,
        result.evidence_score,
        queries,
        messages,
        delivered_how,
        twice=bool(closing_answer) and answer.count(closing_answer) > 1,
    )


Asker = Callable[[EmbeddedStack, str, float], Awaitable[Outcome]]


async def ask_all(
    running: RunningStack,
    questions: list[Question],
    dataset: str,
    out: IO[str],
    timeout_s: float,
    interrupt: Interrupt,
    say: Callable[[str], None] = print,
    command: str = "",
    asker: Asker | None = None,
) -> list[Result]:
    """Each question asked in turn with `asker` (default: the project's own `ask`), judged and written."""
    asker = asker or ask_one
    results: list[Result] = []
    for n, q in enumerate(questions, 1):
        if interrupt.requested:
            break
        if running.gave_up:  # a part keeps dying (the supervisor said which): later questions would time out
            say("stopping: the stack's supervisor gave up on a part")
            break
        try:
            outcome = await interrupt.run(asker(running.stack, q.text, timeout_s))
        except asyncio.CancelledError:
            if interrupt.requested:
                break
            raise
        result = Result.judge(
            q,
            dataset,
            outcome.answer,
            outcome.seconds,
            outcome.asked_human,
            outcome.error,
            command,
            outcome.evidence,
            outcome.evidence_score,
            outcome.queries,
            outcome.delivery,
            outcome.twice,
        )
        write(out, result)
        results.append(result)
        verdict = "error" if result.error else ("right" if result.correct else "wrong")
        say(
            f"[{n}/{len(questions)}] {q.id} {verdict} confidence {result.confidence} {result.seconds:.1f}s"
            f"{' (asked a human)' if result.asked_human else ''}"
            f"{'' if result.delivery == 'arrived' else f' (answer {result.delivery})'}"
            f"{' (answer delivered twice)' if result.twice else ''}: {q.text}"
        )
    return results


def install_interrupt(interrupt: Interrupt) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, interrupt)
