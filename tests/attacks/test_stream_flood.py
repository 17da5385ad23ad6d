"""One caller opening event streams without end cannot exhaust the API, streams do not
live for ever, and the services' metrics and /healthz listen only on the configured address."""

from __future__ import annotations

import asyncio
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
from temporalio.testing import WorkflowEnvironment

from chat.auth import token_sha256
from chat.stream_slots import StreamSlots
from contracts.override import Role
from embedded import demo_graph
from embedded.processes import ManagedProcess, free_port
from service.config import HttpIdentity
from tests.chat_server import chat_server, sse_events
from tests.integration.test_chat_api import PAY, collect
from tests.integration.test_conversations import ConversationalModel
from tests.integration.test_health_endpoint import healthz, service_env
from tests.scripted_llm import ScriptedLLM


async def first_event(stack: AsyncExitStack, http: httpx.AsyncClient, path: str) -> httpx.Response:
    """Open a stream and read its first event, so the server holds it open; or the refusal."""
    response = await stack.enter_async_context(http.stream("GET", path))
    if response.status_code == 200:
        reading = sse_events(response)
        stack.push_async_callback(reading.aclose)  # a reader left to the collector would close the stream
        await anext(reading)
    else:
        await response.aread()
    return response


async def test_streams_are_capped_per_caller_and_in_all_and_end_in_time(make_stack, demo_copy, unique: str) -> None:
    graph_name, g = demo_copy
    tokens = {name: f"{name}-{unique}" for name in ("alice", "bob", "carol")}
    identities = [HttpIdentity(name=n, token_sha256=token_sha256(t), roles=[Role.APPROVE]) for n, t in tokens.items()]
    with ScriptedLLM(ConversationalModel()) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        async with chat_server(stack, identities, streams_open=StreamSlots(total=3, per_caller=2)) as server:
            alice, bob, carol = (server.client(tokens[n]) for n in ("alice", "bob", "carol"))
            async with alice, bob, carol, AsyncExitStack() as open_streams:
                events: list[dict[str, Any]] = []
                asking = asyncio.create_task(collect(alice, {"query": PAY}, events, until="never"))
                while not any(e["type"] == "override_request" for e in events):  # noqa: ASYNC110
                    await asyncio.sleep(0.05)
                run = f"/runs/{events[0]['workflow_id']}/events"
                second = await first_event(open_streams, alice, run)
                third = await first_event(open_streams, alice, run)  # alice holds 2: her limit
                bobs = await first_event(open_streams, bob, run)  # the approver may watch: 3 in all
                carols = await first_event(open_streams, carol, run)  # the API's limit
                asking.cancel()  # alice's first stream closes: a slot comes back
                await asyncio.gather(asking, return_exceptions=True)
                while server.deps.streams_open.open > 2:  # noqa: ASYNC110 - the server notices the close
                    await asyncio.sleep(0.05)
                carols_again = await first_event(open_streams, carol, run)
                await carol.post(
                    f"/runs/{events[0]['workflow_id']}/override", json={"step_id": "approve", "decision": "abort"}
                )
    assert (second.status_code, bobs.status_code, carols_again.status_code) == (200, 200, 200)
    assert third.status_code == 429 and "alice has 2 streams open" in third.json()["detail"]
    assert carols.status_code == 429 and "3 streams open" in carols.json()["detail"]
    assert third.headers["retry-after"]
    assert (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r)")).result_set[0][0] == 0


async def test_a_stream_ends_after_its_time_and_the_client_continues(make_stack, demo_copy, unique: str) -> None:
    graph_name, _ = demo_copy
    with ScriptedLLM(ConversationalModel()) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        async with chat_server(stack, stream_max_s=2.0) as server, server.client() as http:
            events: list[dict[str, Any]] = []
            last_id = "0"
            async with http.stream("POST", "/chat/stream", json={"query": PAY}) as response:
                async for event_id, event in sse_events(response):  # the run waits for approval meanwhile
                    events.append(event)
                    last_id = event_id
            workflow_id = events[0]["workflow_id"]
            again: list[dict[str, Any]] = []
            async with http.stream("GET", f"/runs/{workflow_id}/events", headers={"Last-Event-ID": last_id}) as r:
                async for _, event in sse_events(r):
                    again.append(event)
                    if event["type"] == "override_request":
                        break
            open_after = server.deps.streams_open.open
            await http.post(f"/runs/{workflow_id}/override", json={"step_id": "approve", "decision": "abort"})
    assert "done" not in [e["type"] for e in events] and "override_request" in [e["type"] for e in events]
    assert [e["type"] for e in again] == ["override_request"]  # continued where it ended: nothing twice
    assert open_after <= 1


def listening_addresses(port: int) -> set[str]:
    """The local addresses with a socket listening on `port` (/proc/net/tcp{,6}: state 0A is LISTEN)."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, port_hex = local.split(":")
            if state == "0A" and int(port_hex, 16) == port:
                found.add({"0100007F": "127.0.0.1", "00000000": "0.0.0.0"}.get(address, address))
    return found


async def test_metrics_and_healthz_listen_on_the_configured_address_only(
    temporal_env: WorkflowEnvironment, pulsar_url: str, falkordb_url: str, unique: str, tmp_path: Path
) -> None:
    with ScriptedLLM(lambda _: (200, "noted")) as llm:
        env = service_env(temporal_env, pulsar_url, falkordb_url, llm.base_url, unique, tmp_path)
        port = free_port()
        bridge = ManagedProcess(
            "bridge",
            [sys.executable, "-m", "bridge"],
            tmp_path / "bridge.log",
            env={**env, "TGCA_METRICS_PORT": str(port)},
            ports={"metrics": port},
        )

        async def healthy(_: ManagedProcess) -> bool:
            return (await healthz(port))[0] == 200

        bridge.ready = healthy
        bridge.start()
        try:
            await bridge.wait_ready(60)
            addresses = listening_addresses(port)
        finally:
            bridge.stop()
    assert addresses == {"127.0.0.1"}, bridge.log_tail()
