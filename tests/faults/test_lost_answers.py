"""A caller cut off from the broker, just before a run's end of dialog or in the middle of the run, or whose
broker restarts mid-run, still gets the answer, and once. The response topic is non-persistent (TrustGraph's
clients listen there): what it had for a consumer that was not attached at that instant is gone. `ask` and the
chat then take the run's closing messages from Temporal (service/run_recovery.py); TrustGraph's own client,
which cannot, gets the end of dialog's repeat (service/response_publisher.py).

The caller reaches the broker through a proxy the test cuts (tests/severable_proxy.py); the worker and the
bridge run in-process against the same broker, directly. Each cut refuses the caller's reconnection long enough
that today's answer would be lost: past both repeats for the callers that look the run up, within the second
repeat for TrustGraph's client."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from trustgraph.base.agent_client import AgentClient
from trustgraph.base.pubsub import get_async_pubsub
from trustgraph.base.request_response_client import RequestResponseClient
from trustgraph.base.request_response_spec import _make_impl_wrapper
from trustgraph.schema import AgentRequest as TgAgentRequest
from trustgraph.schema import AgentResponse as TgAgentResponse

from cli.ask import Delivery, ask
from contracts.names import workflow_id_for
from contracts.override import Override
from contracts.wire import AgentRequest, AgentResponse
from embedded.parts import pulsar_broker
from embedded.processes import ManagedProcess, free_port
from service.run_client import AgentRun
from service.run_recovery import RunLookup
from tests.chat_server import chat_server, sse_events
from tests.scripted_llm import ScriptedLLM, is_planning, is_synthesis
from tests.severable_proxy import SeverableProxy

pytestmark = pytest.mark.slow

ANSWER = "There are 26 suppliers."
PLAN = json.dumps(
    {
        "steps": [
            {
                "id": "s1",
                "function": "GraphQuery",
                "dependencies": [],
                "arguments": {"query": "MATCH (s:Supplier) RETURN count(s) AS suppliers"},
            }
        ]
    }
)
PAST_BOTH_REPEATS_S = 15.0  # the end of dialog is sent again after 1 s and 10 s
BEFORE_THE_SECOND_REPEAT_S = 4.0


@dataclass
class GatedModel:
    """The scripted model: a one-step plan and its answer. Planning and synthesis each signal that they were
    asked and wait until the test lets them go, so the test can strike at that point of the run."""

    planning: threading.Event = field(default_factory=threading.Event)
    synthesis: threading.Event = field(default_factory=threading.Event)
    plan_released: threading.Event = field(default_factory=threading.Event)
    answer_released: threading.Event = field(default_factory=threading.Event)

    def __call__(self, body: dict[str, Any]) -> tuple[int, str]:
        if is_planning(body):
            self.planning.set()
            self.plan_released.wait(60)
            return 200, PLAN
        if is_synthesis(body):
            self.synthesis.set()
            self.answer_released.wait(60)
            return 200, ANSWER
        return 200, ANSWER

    async def strike_at(self, point: str, strike: Any) -> None:
        """When the run reaches `point` ("planning" or "synthesis"), call `strike`, then let the run go on."""
        if point == "synthesis":
            self.plan_released.set()
        reached = self.planning if point == "planning" else self.synthesis
        assert await asyncio.to_thread(reached.wait, 60), f"the run never reached {point}"
        result = strike()
        if asyncio.iscoroutine(result):
            await result
        self.plan_released.set()
        self.answer_released.set()


@pytest_asyncio.fixture
async def broker(tmp_path: Path) -> AsyncIterator[ManagedProcess]:
    """A broker of this test's own, which it may restart."""
    part = pulsar_broker(tmp_path / "broker", free_port())
    part.start()
    await part.wait_ready(30)
    yield part
    part.stop()


@pytest_asyncio.fixture
async def pulsar_url(broker: ManagedProcess) -> str:
    """Overrides the session's broker for make_stack: the worker and bridge use this test's broker."""
    return f"pulsar://127.0.0.1:{broker.ports['broker']}"


async def restart(broker: ManagedProcess, proxy: SeverableProxy, refuse_for_s: float) -> None:
    """The broker goes down and comes back on the same data; the caller is kept off it meanwhile and for
    `refuse_for_s` after (as a caller whose reconnection backs off)."""
    proxy.sever(refuse_for_s)
    broker.stop()
    broker.start()
    await broker.wait_ready(30)


def strike(how: str, broker: ManagedProcess, proxy: SeverableProxy, refuse_for_s: float) -> Any:
    if how == "restart":
        return restart(broker, proxy, refuse_for_s)
    return proxy.sever(refuse_for_s)


# (where the run is when the caller is struck, what strikes it)
STRIKES = [("synthesis", "cut"), ("planning", "cut"), ("synthesis", "restart")]
STRIKE_IDS = ["cut-before-end-of-dialog", "cut-mid-run", "broker-restart-mid-run"]


def answers_of(messages: list[AgentResponse]) -> list[AgentResponse]:
    return [m for m in messages if m.end_of_dialog]


@pytest.mark.parametrize(("point", "how"), STRIKES, ids=STRIKE_IDS)
async def test_ask_gets_the_answer_once_from_temporal(
    make_stack, broker, pulsar_url: str, point: str, how: str
) -> None:
    model = GatedModel()
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url)
        async with SeverableProxy(pulsar_url) as proxy:
            delivery = Delivery()
            asking = asyncio.create_task(
                _collect(
                    ask(
                        proxy.url,
                        AgentRequest(question="How many suppliers are there?"),
                        request_topic=stack.request_topic,
                        response_topic=stack.config.response_topic,
                        timeout_s=60,
                        runs=RunLookup(stack.client),
                        delivery=delivery,
                    )
                )
            )
            await model.strike_at(point, lambda: strike(how, broker, proxy, PAST_BOTH_REPEATS_S))
            messages = await asyncio.wait_for(asking, 90)
    final = answers_of(messages)
    assert len(final) == 1 and final[0].message_type == "answer" and ANSWER in final[0].content
    assert messages[-1] is final[0]  # nothing after the end of dialog
    assert delivery.recovered >= 1  # it came from Temporal: the topic had dropped it
    assert len({m.delivery_id for m in messages}) == len(messages)  # no message twice


@pytest.mark.parametrize(("point", "how"), STRIKES, ids=STRIKE_IDS)
async def test_the_chat_stream_gets_the_answer_once_from_temporal(
    make_stack, broker, pulsar_url: str, point: str, how: str
) -> None:
    model = GatedModel()
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url)
        async with (
            SeverableProxy(pulsar_url) as proxy,
            chat_server(stack, pulsar_url=proxy.url) as server,
            server.client() as http,
        ):
            events: list[dict[str, Any]] = []

            async def read() -> None:
                async with http.stream("POST", "/chat/stream", json={"query": "How many suppliers?"}) as response:
                    assert response.status_code == 200
                    async for _, event in sse_events(response):
                        events.append(event)
                        if event["type"] == "done":
                            return

            reading = asyncio.create_task(read())
            await model.strike_at(point, lambda: strike(how, broker, proxy, PAST_BOTH_REPEATS_S))
            await asyncio.wait_for(reading, 90)
    text = "".join(e["content"] for e in events if e["type"] == "content")
    assert text.count(ANSWER) == 1, events
    assert [e["type"] for e in events].count("done") == 1 and events[-1]["type"] == "done"
    assert not [e for e in events if e["type"] == "error"]


@pytest.mark.parametrize(("point", "how"), STRIKES, ids=STRIKE_IDS)
async def test_trustgraphs_own_client_gets_the_answer_once_from_the_repeat(
    make_stack, broker, pulsar_url: str, point: str, how: str
) -> None:
    model = GatedModel()
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url)
        async with SeverableProxy(pulsar_url) as proxy:
            backend = get_async_pubsub(pulsar_host=proxy.url)
            queue = f"tg:agent:{stack.config.workspace}:{stack.config.flow}"
            rr = await RequestResponseClient.create(
                backend=backend,
                request_topic=f"request:{queue}",
                response_topic=f"response:{queue}",
                request_schema=TgAgentRequest,
                response_schema=TgAgentResponse,
            )
            try:
                agent = _make_impl_wrapper(rr, AgentClient)
                answers: list[str] = []

                async def answered(content: str, end: bool) -> None:
                    answers.append(content)

                asking = asyncio.create_task(
                    agent.invoke("How many suppliers are there?", answer_callback=answered, timeout=60)
                )
                await model.strike_at(point, lambda: strike(how, broker, proxy, BEFORE_THE_SECOND_REPEAT_S))
                answer = await asyncio.wait_for(asking, 90)
                await asyncio.sleep(11)  # both repeats have come and gone: nothing more reaches the caller
            finally:
                await rr.close()
                await backend.close()
    assert ANSWER in answer
    assert "".join(answers).count(ANSWER) == 1


async def _collect(messages: AsyncIterator[AgentResponse]) -> list[AgentResponse]:
    return [m async for m in messages]


@dataclass
class DoubtfulModel(GatedModel):
    """Plans a query for a value that does not exist, of a question whose names do: a weak result that, with no
    retries left, the run asks a human about at once."""

    def __call__(self, body: dict[str, Any]) -> tuple[int, str]:
        if is_planning(body):
            self.planning.set()
            self.plan_released.wait(60)
            return 200, json.dumps(
                {
                    "steps": [
                        {
                            "id": "s1",
                            "function": "GraphQuery",
                            "dependencies": [],
                            "arguments": {"query": "MATCH (s:Supplier {name: 'Nobody Ltd'}) RETURN s.name AS name"},
                        }
                    ]
                }
            )
        return 200, "No supplier of that name was found."


async def test_ask_shows_a_lost_request_for_a_decision_at_once_and_then_the_answer(make_stack, pulsar_url: str) -> None:
    """The caller is cut off while the run asks for a human: the request arrives from Temporal while the caller
    is still cut off, the decision is made, and the answer follows, once."""
    model = DoubtfulModel()
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url, max_retries=0)
        async with SeverableProxy(pulsar_url) as proxy:
            delivery = Delivery()
            messages: list[AgentResponse] = []
            asked_at: list[float] = []
            request_id = f"waiting-{stack.unique}"

            async def converse() -> None:
                async for message in ask(
                    proxy.url,
                    AgentRequest(question="Who is the rival of Acme Industrial?"),
                    request_topic=stack.request_topic,
                    request_id=request_id,
                    response_topic=stack.config.response_topic,
                    timeout_s=60,
                    runs=RunLookup(stack.client),
                    delivery=delivery,
                ):
                    messages.append(message)
                    if message.message_type == "observation" and "tg-confidence override" in message.content:
                        asked_at.append(asyncio.get_running_loop().time())
                        await AgentRun(stack.client, workflow_id_for(request_id)).submit_override(
                            Override(step_id="s1", decision="skip", reason="no such supplier")
                        )

            conversing = asyncio.create_task(converse())
            cut_at = asyncio.get_running_loop().time()
            await model.strike_at("planning", lambda: proxy.sever(PAST_BOTH_REPEATS_S))
            await asyncio.wait_for(conversing, 90)
    asked = [m for m in messages if m.message_type == "observation" and "tg-confidence override" in m.content]
    assert len(asked) == 1 and asked_at[0] - cut_at < PAST_BOTH_REPEATS_S  # from Temporal, not the topic
    assert len(answers_of(messages)) == 1 and messages[-1].end_of_dialog
    assert delivery.recovered >= 2  # the request for a decision, then the closing messages
